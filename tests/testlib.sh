# SPDX-License-Identifier: MIT
# testlib.sh: what the command-line test scripts share, sourced by them
# (". testlib.sh NAME" after "set -u"): the tool's path (OOCGEMM, made
# absolute), a scratch directory removed on exit (with any background run
# in $bgpid killed) that the script works in, the PASS/FAIL counters, and
# oc (run the tool, output in out and err), gen (write a matrix or stop),
# child_of (a process's child, from /proc: procps may not be installed) and
# catches (whether a process handles a signal yet).

OOCGEMM=${OOCGEMM:-./tools/oocgemm}
failures=0
cases=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 99
bgpid=
cleanup() {
    if [ -n "$bgpid" ]; then kill -9 "$bgpid" 2>/dev/null; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -x "$OOCGEMM" ]; then
    echo "FAIL: $OOCGEMM is not an executable (set OOCGEMM=path/to/oocgemm)"
    exit 1
fi
# the tool's path may be relative to the build directory: we cd into $tmp
case $OOCGEMM in /*) ;; *) OOCGEMM=$(cd "$(dirname "$OOCGEMM")" && pwd)/$(basename "$OOCGEMM") ;; esac
cd "$tmp" || exit 99
unset OOC_HOST_JITTER_US OOC_FAULT

pass() { cases=$((cases + 1)); echo "PASS: $*"; }
fail() {
    cases=$((cases + 1))
    failures=$((failures + 1))
    echo "FAIL: $*"
    sed 's/^/    | /' out err 2>/dev/null | head -n 20
}

# oc ARGS...: run the tool, output in out/err (at most 60 s)
oc() { timeout 60 "$OOCGEMM" "$@" >out 2>err; }

# gen NAME ARGS...: write a matrix or fail the whole test
gen() {
    if ! oc gen "$@" -q; then
        fail "gen $*: exit $?"
        exit 1
    fi
}

# wait_done JOURNAL N: until JOURNAL records N blocks done (10 s at most; a
# missing journal counts 0)
wait_done() {
    local i=0
    while [ "$(cat "$1" 2>/dev/null | grep -c '^done')" -lt "$2" ] && [ $i -lt 200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
}

# stop_after JITTER_US N JOURNAL ARGS...: oocgemm ARGS in the background
# (output in out/err), each host-backend operation slowed by JITTER_US,
# stopped by SIGTERM once JOURNAL records N blocks; returns its exit status
# (7: stopped cleanly, resumable)
stop_after() {
    local jitter=$1 n=$2 journal=$3 rc
    shift 3
    OOC_HOST_JITTER_US=$jitter "$OOCGEMM" "$@" >out 2>err &
    bgpid=$!
    wait_done "$journal" "$n"
    kill -TERM "$bgpid" 2>/dev/null
    wait "$bgpid"
    rc=$?
    bgpid=
    return $rc
}

# child_of PID: the pid of a child of PID (the first /proc lists), or nothing
child_of() {
    local f st parent=$1
    for f in /proc/[0-9]*/stat; do
        read -r st 2>/dev/null <"$f" || continue
        st=${st##*) } # after the command's name: state, parent, ...
        set -- $st
        if [ "${2:-}" = "$parent" ]; then
            f=${f#/proc/}
            echo "${f%/stat}"
            return 0
        fi
    done
    return 1
}

# catches PID SIG: process PID has a handler for signal number SIG now
# (/proc's SigCgt)
catches() {
    local mask
    mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
    [ -n "$mask" ] && [ $((0x$mask >> ($2 - 1) & 1)) = 1 ]
}
