#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_ranks.sh: the "Ranks" table of docs/PERFORMANCE.md. S1 (d
# 65536x16384x16384, col-major) from .npy files, multiplied by `oocgemm
# multiply` under mpirun with 1 rank on GPU 0 and with P ranks (one GPU each),
# and by one process on every GPU for comparison, all on the same files in
# one run; each result compared byte for byte with the 1-rank C. The disk's
# bandwidth is measured in the same run (--measure-disk), and every run
# prints its floor (the GPUs it used) and the disk's bound.
#   tools/bench_ranks.sh [DIR [RANKS...]]     e.g. tools/bench_ranks.sh /tmp/ranks 2 4
# Needs an oocgemm built with --with-mpi (OOCGEMM=path overrides
# ./tools/oocgemm) and mpirun. Writes DIR/*.json (one object per run).
set -u
T=${OOCGEMM:-./tools/oocgemm}
case $T in /*) ;; *) T=$(pwd)/$T ;; esac
dir=${1:-/tmp/ooc-ranks}
shift || true
ranks=${*:-2}
m=${M:-65536} n=${N:-16384} k=${K:-16384}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi="mpirun --bind-to none --oversubscribe"
mkdir -p "$dir" && cd "$dir" || exit 1
rm -f C*.npy C*.npy.ooc-*

"$T" gen A.npy --rows "$m" --cols "$k" --layout col --seed 1 -q || exit 1
"$T" gen B.npy --rows "$k" --cols "$n" --layout col --seed 2 -q || exit 1
ls -l A.npy B.npy

# run NAME ARGS...: one multiply, its summary shown, its JSON kept
run() {
    name=$1
    shift
    echo "== $name: $*"
    "$@" --no-progress --measure-disk >"$name.txt" 2>&1
    rc=$?
    cat "$name.txt"
    "$@" --no-progress --json >"$name.json" 2>"$name.err"
    echo "(rc $rc; JSON run rc $?, time $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["time_s"])' "$name.json" 2>/dev/null))"
}

run rank1 $mpi -np 1 "$T" multiply A.npy B.npy -o C1.npy --out-layout col --devices 0
for P in $ranks; do
    rm -f "C$P.npy"
    run "ranks$P" $mpi -np "$P" "$T" multiply A.npy B.npy -o "C$P.npy" --out-layout col
    if cmp C1.npy "C$P.npy"; then echo "C with $P ranks: byte-identical to 1 rank"; else echo "C with $P ranks DIFFERS"; fi
    rm -f "C$P.npy"
done
run allgpus "$T" multiply A.npy B.npy -o Call.npy --out-layout col --devices all
if cmp C1.npy Call.npy; then echo "C on every GPU of one process: byte-identical to 1 rank"; else echo "C on every GPU DIFFERS"; fi
rm -f Call.npy
