#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_sbatch.sh: the Slurm batch scripts docs/oocgemm.sbatch and
# docs/oocgemm-mpi.sbatch keep oocgemm's exit status, without Slurm: srun and
# scontrol are stubs on PATH (scontrol records the requeue), and oocgemm is a
# stand-in that exits 7 on SIGUSR1 (as oocgemm does, stopped cleanly). For
# each script:
#   1. SIGUSR1 to the script (Slurm's B:USR1 before the wall time): exit 7,
#      requeued;
#   2. the same when oocgemm exits, and the shell reaps it, while the trap
#      that passes the signal on still runs (the race that left the status
#      of the interrupted wait, 138: not requeued); made certain by a kill
#      function (BASH_ENV) that returns from sending SIGUSR1 only once the
#      stand-in is gone;
#   3. oocgemm killed (SIGKILL, status 137): the script exits 137 at once,
#      not requeued (a status over 128 of its own is no interrupted wait);
#   4. oocgemm succeeds: exit 0, not requeued.
# Linux (/proc): the signal is sent once the script has its trap set.
set -u
src=${srcdir:-$(dirname "$0")/..}
case $src in /*) ;; *) src=$(pwd)/$src ;; esac
. "$(dirname "$0")/testlib.sh" test_sbatch

mkdir bin
# the stand-in: its pid in child.pid once it has its trap; STANDIN=run: runs
# until SIGUSR1, then exits 7; kill9: killed by SIGKILL; ok: exits 0
cat >bin/oocgemm <<'EOF'
#!/usr/bin/env bash
s=
trap 'kill $s 2>/dev/null; exit 7' USR1
echo $$ >"$SB_DIR/child.pid"
case ${STANDIN:-run} in
kill9) kill -KILL $$ ;;
ok) exit 0 ;;
esac
sleep 60 &
s=$!
wait $s
exit 3
EOF
cat >bin/scontrol <<'EOF'
#!/bin/sh
echo "scontrol $*" >>"$SB_DIR/scontrol.log"
EOF
# srun: the command after its options (exec: the script's pid is oocgemm's)
cat >bin/srun <<'EOF'
#!/bin/sh
while [ "${1#-}" != "$1" ]; do shift; done
exec "$@"
EOF
chmod +x bin/*
# the race made certain: the trap's kill -USR1 returns once the stand-in has
# exited and the shell reaped it (kill -0 fails only then)
cat >race.bash <<'EOF'
kill() {
    builtin kill "$@"
    local r=$? i=0
    if [ "$1" = -USR1 ] && [ $r = 0 ]; then
        while builtin kill -0 "$2" 2>/dev/null && [ $i -lt 400 ]; do
            sleep 0.05
            i=$((i + 1))
        done
    fi
    return $r
}
EOF
export SB_DIR=$PWD SLURM_JOB_ID=42 PATH=$PWD/bin:$PATH


# run SCRIPT MODE [BASH_ENV]: the script with the stand-in in MODE (run: the
# script gets SIGUSR1 once its trap is set); status in rc, requeues in
# requeued (at most 20 s: a script that hangs fails)
run() {
    rm -f child.pid scontrol.log
    STANDIN=$2 BASH_ENV=${3:-} timeout 20 bash "$1" >out 2>err &
    local t=$! i=0 sh=
    if [ "$2" = run ]; then
        while [ $i -lt 400 ]; do
            sh=$(child_of $t)
            if [ -n "$sh" ] && [ -s child.pid ] && catches "$sh" 10; then break; fi
            sleep 0.05
            i=$((i + 1))
        done
        kill -USR1 "$sh" 2>/dev/null
    fi
    wait $t
    rc=$?
    requeued=$(grep -c "^scontrol requeue 42$" scontrol.log 2>/dev/null)
}

for s in oocgemm.sbatch oocgemm-mpi.sbatch; do
    script=$src/docs/$s
    if [ ! -f "$script" ]; then
        fail "$s: not found in $src/docs"
        continue
    fi
    run "$script" run
    if [ $rc = 7 ] && [ "$requeued" = 1 ]; then
        pass "1 $s: SIGUSR1: exit 7, requeued"
    else
        fail "1 $s: SIGUSR1: exit $rc (expected 7), requeued ${requeued:-0} times (expected 1)"
    fi
    run "$script" run "$PWD/race.bash"
    if [ $rc = 7 ] && [ "$requeued" = 1 ]; then
        pass "2 $s: SIGUSR1, oocgemm reaped while the trap runs: exit 7, requeued"
    else
        fail "2 $s: SIGUSR1, oocgemm reaped while the trap runs: exit $rc (expected 7), requeued ${requeued:-0} times (expected 1)"
    fi
    run "$script" kill9
    if [ $rc = 137 ] && [ "${requeued:-0}" = 0 ]; then
        pass "3 $s: oocgemm killed: exit 137, not requeued"
    else
        fail "3 $s: oocgemm killed: exit $rc (expected 137; 124: the script hung), requeued ${requeued:-0} times"
    fi
    run "$script" ok
    if [ $rc = 0 ] && [ "${requeued:-0}" = 0 ]; then
        pass "4 $s: oocgemm succeeds: exit 0, not requeued"
    else
        fail "4 $s: oocgemm succeeds: exit $rc (expected 0), requeued ${requeued:-0} times"
    fi
done

echo "$cases cases, $failures failed"
[ "$failures" = 0 ]
