#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_big.sh (make check-big): jobs on files larger than this host's
# memory, as our users run them. Not part of make check: it writes about
# 2.5 times the host's memory to disk and takes minutes (about 10 on 2
# cores with 24 GiB). Skips (77) when the disk has too little room.
#
#   1. A streamed operand larger than the memory: A (m x 4001 doubles,
#      1.25 x MemTotal bytes) x B (4001 x 33). The run passes --verify
#      (Freivalds against OpenBLAS, reading A again) with its peak RSS under
#      a quarter of the memory; then killed with kill -9 once its journal
#      records 40% of the blocks, and resumed: C byte-identical to the uninterrupted run's.
#   2. An output larger than the memory, in place: C0 (m x n doubles,
#      column-major, 1.25 x MemTotal) = A (m x 64) B (64 x n) + 0.5 C0.
#      First into a new file (checked by `oocgemm verify` and hashed, then
#      removed); then in place, killed at 40% of its blocks (C0 must be
#      untouched), resumed: the same hash as the new file's.
#
# BIG_BYTES overrides the size of the large matrices; BIG_DIR where they go
# (default TMPDIR, else /tmp); OOCGEMM the tool.
set -u
. "$(dirname "$0")/testlib.sh" check_big

mem_kb=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
big=${BIG_BYTES:-$((mem_kb * 1024 / 4 * 5))}
dir=${BIG_DIR:-${TMPDIR:-/tmp}}
cd "$dir" && work=$(mktemp -d "$dir/check_big.XXXXXX") || exit 99
trap 'if [ -n "$bgpid" ]; then kill -9 "$bgpid" 2>/dev/null; fi; rm -rf "$tmp" "$work"' EXIT
cd "$work" || exit 99
avail_kb=$(df -Pk . | awk 'NR == 2 { print $4 }')
need_kb=$((big / 1024 * 21 / 10 + 1048576))
if [ "$avail_kb" -lt "$need_kb" ]; then
    echo "SKIP: $((avail_kb / 1048576)) GiB free in $dir; this needs $((need_kb / 1048576)) GiB (BIG_DIR, BIG_BYTES)"
    exit 77
fi
echo "host memory $((mem_kb / 1024)) MiB; large matrices of $((big / 1048576)) MiB in $work"

# run ARGS...: the tool, output in out and err, no time limit; make_big NAME
# ARGS...: write a matrix (gen, no time limit) or stop
run() { "$OOCGEMM" "$@" >out 2>err; }
make_big() {
    if ! run gen "$@" -q; then
        fail "gen $*: exit $?"
        exit 1
    fi
}
# secs: seconds since the epoch, with a fraction
secs() { date +%s.%N; }
# killed_at JOURNAL N ARGS...: the tool run in the background, kill -9
# once JOURNAL records N blocks done; fails (1) when it ended first. Under
# 4 GiB (a smoke run with BIG_BYTES) the host backend's operations are
# slowed, or it ends before the journal is read
jitter=0
if [ "$big" -lt 4294967296 ]; then jitter=3000; fi
killed_at() {
    local journal=$1 n=$2
    shift 2
    OOC_HOST_JITTER_US=$jitter "$OOCGEMM" "$@" >out 2>err &
    bgpid=$!
    while kill -0 "$bgpid" 2>/dev/null; do
        local had
        had=$(grep -a -c '^done ' "$journal" 2>/dev/null)
        if [ "${had:-0}" -ge "$n" ]; then
            kill -9 "$bgpid"
            wait "$bgpid" 2>/dev/null
            bgpid=
            return 0
        fi
        sleep 0.05
    done
    bgpid=
    return 1
}
# rss: the peak RSS in bytes from the last run's --json; kill_at: 40% of
# its blocks (at least 1)
rss() { sed -n 's/.*"peak_rss_bytes":\([0-9]*\).*/\1/p' out; }
kill_at() { sed -n 's/.*"blocks":\([0-9]*\),.*/\1/p' out | awk '{ n = int($1 * 0.4); print n < 1 ? 1 : n }'; }

# 1. A larger than the memory
m=$((big / (8 * 4001)))
make_big A.npy --rows "$m" --cols 4001 --seed 11
make_big B.npy --rows 4001 --cols 33 --seed 12
t0=$(secs)
run multiply A.npy B.npy -o REF.npy --verify --no-progress --json
rc=$?
t=$(echo "$(secs) $t0" | awk '{ print $1 - $2 }')
peak=$(rss)
at=$(kill_at)
if [ $rc -eq 0 ] && grep -q '"check":{[^}]*"passed":true' out && [ "${peak:-0}" -gt 0 ] &&
    [ "$peak" -lt $((mem_kb * 256)) ]; then
    pass "1 A of $((m * 4001 * 8 / 1048576)) MiB (m = $m): --verify passed in $t s, peak RSS $((peak / 1048576)) MiB"
else
    fail "1 A of $((m * 4001 * 8 / 1048576)) MiB: exit $rc, verify not passed, or peak RSS ${peak:-?} bytes not under a quarter of the memory"
fi
if ! killed_at C.npy.ooc-journal "$at" multiply A.npy B.npy -o C.npy --no-progress; then
    fail "1 the run to be killed after $at blocks ended first"
else
    had=$(grep -a -c '^done ' C.npy.ooc-journal 2>/dev/null)
    run multiply A.npy B.npy -o C.npy --resume --no-progress
    rc=$?
    if [ $rc -eq 0 ] && [ "${had:-0}" -gt 0 ] && cmp -s C.npy REF.npy; then
        pass "1 kill -9 after $had blocks, --resume: byte-identical ($(grep -o 'resumed after [0-9]* of [0-9]* blocks' out))"
    else
        fail "1 kill -9 after ${had:-no} blocks, --resume: exit $rc, or C differs"
    fi
fi
rm -f A.npy B.npy C.npy REF.npy C.npy.ooc-*

# 2. C larger than the memory, in place
n=20001
m=$((big / (8 * n)))
make_big A.npy --rows "$m" --cols 64 --seed 21
make_big B.npy --rows 64 --cols "$n" --seed 22
make_big C0.npy --rows "$m" --cols "$n" --seed 23 --layout col
t0=$(secs)
run multiply A.npy B.npy --c-in C0.npy --beta 0.5 --out-layout col -o CR.npy --no-progress --json
rc=$?
t=$(echo "$(secs) $t0" | awk '{ print $1 - $2 }')
peak=$(rss)
at=$(kill_at)
if [ $rc -eq 0 ] && [ "${peak:-0}" -gt 0 ] && [ "$peak" -lt $((mem_kb * 256)) ] &&
    run verify A.npy B.npy CR.npy --c-in C0.npy --beta 0.5 && grep -q 'PASS' out; then
    pass "2 C of $((m * n * 8 / 1048576)) MiB (m = $m): $t s, peak RSS $((peak / 1048576)) MiB; oocgemm verify: $(grep -o 'max relative error [^ ]*' out)"
else
    fail "2 C of $((m * n * 8 / 1048576)) MiB: exit $rc, peak RSS ${peak:-?} bytes, or verify failed"
fi
want=$(sha256sum CR.npy | cut -d ' ' -f 1)
rm -f CR.npy
c0=$(sha256sum C0.npy | cut -d ' ' -f 1)
if ! killed_at C0.npy.ooc-journal "$at" multiply A.npy B.npy --c-in C0.npy --beta 0.5 -o C0.npy --no-progress; then
    fail "2 the in-place run to be killed after $at blocks ended first"
else
    had=$(grep -a -c '^done ' C0.npy.ooc-journal 2>/dev/null)
    same=$(sha256sum C0.npy | cut -d ' ' -f 1)
    run multiply A.npy B.npy --c-in C0.npy --beta 0.5 -o C0.npy --resume --no-progress
    rc=$?
    got=$(sha256sum C0.npy | cut -d ' ' -f 1)
    if [ $rc -eq 0 ] && [ "${had:-0}" -gt 0 ] && [ "$same" = "$c0" ] && [ "$got" = "$want" ]; then
        pass "2 in place, kill -9 after $had blocks (C0 untouched), --resume: the new file's bytes ($(grep -o 'resumed after [0-9]* of [0-9]* blocks' out))"
    else
        fail "2 in place, kill -9 after ${had:-no} blocks, --resume: exit $rc, C0 touched, or not the new file's bytes"
    fi
fi
rm -f A.npy B.npy C0.npy C0.npy.ooc-*

echo "$((cases - failures)) of $cases passed"
[ "$failures" -eq 0 ]
