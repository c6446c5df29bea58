#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_slurm.sh (make check-slurm): oocgemm under a real Slurm, through the
# host backend, where test_mpi.sh uses mpirun and test_sbatch.sh stubs:
#   1. srun -n 3: C byte-identical to one process's, --verify passes;
#   2. srun --kill-on-bad-exit -n 3, rank 1 killed (-9) part-way: srun fails,
#      no C; srun -n 2 --resume: byte-identical;
#   3. docs/oocgemm-mpi.sbatch itself (its header cut to one node and 3
#      tasks, the files here): Slurm's wall-time warning (scancel --batch
#      --signal=USR1, what --signal=B:USR1@120 sends) once blocks are
#      recorded: the ranks stop (exit 7), the script requeues the job, the
#      requeued job resumes (--resume) after Slurm's requeue delay (about 2
#      minutes) and finishes: byte-identical, verified, one JSON record per
#      run (7, then 0 and resumed).
# Needs a Slurm that runs jobs (sinfo answers; on one machine: slurmctld,
# slurmd and munged, MpiDefault=pmix or SLURM_MPI_TYPE=pmix) and oocgemm
# built --with-mpi; else exits 77. The scratch directory must be on a file
# system every node sees (TMPDIR). Takes about 3 minutes; not in make check.
set -u
. "$(dirname "$0")/testlib.sh" test_slurm

if [ "${OOC_MPI_BUILT:-yes}" != yes ] || ! command -v srun >/dev/null 2>&1 || ! command -v sbatch >/dev/null 2>&1 ||
    ! timeout 10 sinfo -h >/dev/null 2>&1; then
    echo "SKIP: no Slurm here (srun, sbatch, sinfo answering) or oocgemm built without MPI"
    exit 77
fi
src=${srcdir:-$(dirname "$0")/..}
case $src in /*) ;; *) src=$OLDPWD/$src ;; esac
# Open MPI direct-launched by srun needs PMIx (Slurm's default may be none)
if [ -z "${SLURM_MPI_TYPE:-}" ]; then
    if ! srun --mpi=list 2>&1 | grep -q pmix; then
        echo "SKIP: this Slurm has no PMIx plugin (srun --mpi=list), which Open MPI needs"
        exit 77
    fi
    export SLURM_MPI_TYPE=pmix
fi
export OPENBLAS_NUM_THREADS=1
export PATH="$(dirname "$OOCGEMM"):$PATH" # the batch script calls oocgemm
# each task: its pid in pid.TASK, then the tool
cat >task.sh <<EOF
#!/bin/sh
echo \$\$ >"$tmp/pid.\${SLURM_PROCID:-0}"
exec "$OOCGEMM" multiply "\$@"
EOF
chmod +x task.sh
recorded() { cat "$1".ooc-journal.r* 2>/dev/null | grep -c '^done'; }
wait_recorded() { # FILE N: until the ranks of FILE's job recorded N blocks (60 s)
    local i=0
    while [ "$(recorded "$1")" -lt "$2" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
}

# 32 blocks of 64 rows (host backend); cases 2 and 3 hold each copy of C
# out (100 and 300 ms) so that they stop part-way
S="--backend host --device-mem 8M --block-rows 64 --no-floor --no-progress"
gen A.npy --rows 2001 --cols 803 --layout col --seed 5
gen B.npy --rows 803 --cols 397 --seed 6
oc multiply A.npy B.npy -o ref.npy $S -q || { fail "the reference: exit $?"; exit 1; }

# 1. three tasks
timeout 120 srun -n 3 ./task.sh A.npy B.npy -o C1.npy $S --verify >out 2>err
rc=$?
if [ $rc = 0 ] && cmp -s C1.npy ref.npy && grep -q "ranks: 3" out && grep -q "verify: .*PASS" out; then
    pass "1 srun -n 3: byte-identical to one process, verified"
else
    fail "1 srun -n 3: exit $rc, or C differs or was not verified"
fi

# 2. a task killed part-way, resumed by two (on one node: this shell kills
# it by its pid)
rm -f pid.*
OOC_HOST_D2H_DELAY_US=100000 timeout 120 srun --kill-on-bad-exit=1 -N 1 -n 3 ./task.sh A.npy B.npy -o C2.npy $S \
    >out 2>err &
bgpid=$!
wait_recorded C2.npy 4
kill -9 "$(cat pid.1 2>/dev/null)" 2>/dev/null
wait "$bgpid"
rc=$?
bgpid=
had=$(recorded C2.npy)
if [ $rc -ne 0 ] && [ ! -e C2.npy ] && [ "$had" -ge 4 ] && [ "$had" -lt 32 ] &&
    timeout 120 srun -n 2 ./task.sh A.npy B.npy -o C2.npy $S --resume >out 2>err && cmp -s C2.npy ref.npy &&
    grep -q "resumed after $had of 32 blocks" out; then
    pass "2 srun: task 1 of 3 killed (srun exit $rc, $had of 32 blocks kept), no C; srun -n 2 --resume: byte-identical"
else
    fail "2 srun: task 1 killed: srun exit $rc, $had blocks kept; the resume failed or differs"
fi

# 3. the batch script, warned of its wall time, requeued, resumed
sed -e 's|^#SBATCH --nodes=.*|#SBATCH --nodes=1|; s|^#SBATCH --ntasks-per-node=.*|#SBATCH --ntasks-per-node=3|' \
    -e '/^#SBATCH --gpus-per-node/d; s|^#SBATCH --cpus-per-task=.*|#SBATCH --cpus-per-task=1|' \
    -e 's|^#SBATCH --time=.*|#SBATCH --time=10|' \
    -e "s|/shared/|$tmp/|g; s|--resume --verify --json|--resume --verify --json $S|" \
    "$src/docs/oocgemm-mpi.sbatch" >job.sbatch
if ! grep -q "srun --kill-on-bad-exit=1 oocgemm multiply $tmp/A.npy" job.sbatch; then
    fail "3 docs/oocgemm-mpi.sbatch no longer has the srun line this test adapts"
else
    job=$(OOC_HOST_D2H_DELAY_US=300000 sbatch --parsable job.sbatch 2>err)
    wait_recorded C.npy 6
    scancel --batch --signal=USR1 "$job" 2>>err
    # the first run's record, then the requeued run's (Slurm delays it ~2 min)
    i=0
    while { [ "$(cat oocgemm-mpi-"$job".jsonl 2>/dev/null | wc -l)" -lt 2 ] ||
        [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; } && [ $i -lt 400 ]; do
        sleep 1
        i=$((i + 1))
    done
    [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || scancel "$job"
    if [ -f "oocgemm-mpi-$job.jsonl" ] && cmp -s C.npy ref.npy &&
        grep -q "stopped before the wall time: requeueing" "oocgemm-mpi-$job.out" && python3 -c '
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
assert len(runs) == 2, len(runs)
assert runs[0]["exit_status"] == 7 and not runs[0]["resumed"], runs[0]
assert runs[1]["exit_status"] == 0 and runs[1]["resumed"] and runs[1]["check"]["passed"], runs[1]
assert 0 < runs[1]["stats"]["blocks_resumed"] < 32, runs[1]["stats"]
' "oocgemm-mpi-$job.jsonl"; then
        pass "3 sbatch docs/oocgemm-mpi.sbatch: warned (B:USR1), the ranks stopped (exit 7), requeued, resumed: byte-identical, verified"
    else
        fail "3 sbatch job $job: not stopped, requeued and resumed to the right C: $(tail -5 "oocgemm-mpi-$job.out" 2>/dev/null)"
    fi
fi

echo "$cases cases, $failures failed"
[ "$failures" = 0 ]
