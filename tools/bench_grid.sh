#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_grid.sh: the grid table of docs/PERFORMANCE.md (session 21). A job
# whose operands both exceed the device budget (A M x K, B K x N doubles,
# column-major .npy, --device-mem DEVMEM: op(B) or op(A) in panels),
# multiplied by one process and by `oocgemm multiply` under mpirun with each
# of RANKS ranks (all on the visible GPUs, --bind-to none), two runs each;
# every C compared byte for byte with one process's, the split ("grid",
# "rows", "columns") and each rank's rectangle and bytes read printed from
# the JSON; then one run with --verify.
#   tools/bench_grid.sh [DIR [RANKS...]]      e.g. tools/bench_grid.sh /tmp/grid 2 4
# Needs an oocgemm built with --with-mpi (OOCGEMM=path overrides
# ./tools/oocgemm), mpirun and python3. M, N, K, DEVMEM override the shape
# (16384, 32768, 16384) and the budget (1536M).
set -u
T=${OOCGEMM:-./tools/oocgemm}
case $T in /*) ;; *) T=$(pwd)/$T ;; esac
dir=${1:-/tmp/ooc-grid}
shift || true
ranks=${*:-2 4}
m=${M:-16384} n=${N:-32768} k=${K:-16384} devmem=${DEVMEM:-1536M}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
mkdir -p "$dir" && cd "$dir" || exit 1
rm -f A.npy B.npy ./*.json REF.npy C*.npy
"$T" gen A.npy --rows "$m" --cols "$k" --layout col --seed 1 || exit 1
"$T" gen B.npy --rows "$k" --cols "$n" --layout col --seed 2 || exit 1
J="A.npy B.npy --device-mem $devmem --no-progress"
for i in 1 2; do "$T" multiply $J -o REF.npy --json >one$i.json || exit 1; done
python3 -c '
import json
o = json.load(open("one2.json"))
print("one process: %.3g s, read %.3g GiB, plan %s" % (o["time_s"], o["bytes_read"] / 2**30, o["plan"]))'
for np in $ranks; do
    for i in 1 2; do
        rm -f C$np.npy
        mpirun -np "$np" --bind-to none "$T" multiply $J -o C$np.npy --json >mpi$np-$i.json 2>mpi$np-$i.err ||
            { echo "mpirun -np $np: exit $?"; cat mpi$np-$i.err; exit 1; }
        cmp -s C$np.npy REF.npy && echo "$np ranks, run $i: byte-identical to one process" ||
            { echo "$np ranks, run $i: C DIFFERS from one process's"; exit 1; }
    done
    python3 -c '
import json, sys
o = json.load(open("mpi%s-2.json" % sys.argv[1]))
print("%s ranks: split by %s, %.3g s, read %.3g GiB in all" % (sys.argv[1], o["ranks_split"], o["time_s"], o["bytes_read"] / 2**30))
for r in o["ranks"]:
    part = ", ".join("%s %d" % (k, r[k]) for k in ("row_begin", "row_end", "col_begin", "col_end") if k in r)
    print("  rank %d: %s, %d blocks, %.3g s, read %.3g GiB" % (r["rank"], part, r["blocks"], r["time_s"], r["bytes_read"] / 2**30))' "$np"
done
np=${ranks%% *}
mpirun -np "$np" --bind-to none "$T" multiply $J -o CV.npy --verify | grep -E "^(ranks|  rank|verify)"
cmp -s CV.npy REF.npy && echo "the verified run: byte-identical"
