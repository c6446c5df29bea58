#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_mpi.sh: oocgemm multiply split across the ranks of mpirun (Open MPI or
# MPICH) through the host backend, and that libooc_gemm itself links no MPI:
#   1. libooc_gemm.so needs no libmpi (always checked);
#   2. 3 ranks: C byte-identical to one process and equal to NumPy's (odd
#      shapes, several panels and many blocks, alpha, beta with --c-in,
#      A transposed in Fortran order);
#   3. a rank killed with SIGKILL part-way: no C, the temporary file and the
#      journals kept; --resume with 2 ranks: byte-identical, only the whole
#      job's journal left (complete: a requeued job finds it finished);
#   4. a write failure (OOC_FAULT) on rank 1 alone: every rank stops, exit 6,
#      the message names rank 1; --resume with 3 ranks: byte-identical;
#   5. a truncated B seen by rank 2 alone: a clean failure on all, exit 4,
#      rank 2 named, no file left; --json's error gives rank 2's message;
#   6. SIGUSR1 to one rank: every rank stops, exit 7, resumable; --resume by
#      one process (no mpirun): byte-identical; the same command again finds
#      it finished (its journal records the ranks' blocks too);
#   7. --verify and --json: one object from rank 0 with "ranks" (the schema
#      of json_check.py), check passed;
#   8. a job finished by one process with --resume: mpirun --resume does
#      nothing;
#   9. a job finished by mpirun --resume (3 ranks): the same command again
#      says it finished already and does nothing (C untouched);
#  10. a fresh run by one process after a failed mpirun, killed and
#      resumed: the ranks' journals do not vouch for its data;
#  11. in place (--c-in C -o C) with --resume, recording the job as finished
#      fails on rank 0 (OOC_FAULT): the job fails before its commit, C
#      untouched; --resume records and commits it; again: finished already;
#  12. a scaling job (alpha 0) in place with --resume, run twice: C = beta
#      C0, not beta^2 C0 (the second run finds it finished);
#  12b. a scaling job on 3 ranks: rank 0's summary line and JSON object
#      give all of C's rows and bytes;
#  13. --json on failure: one object, rank 0's, for operands that do not fit
#      (exit 5) and for a usage error (exit 2, found before MPI starts);
#  14. SIGUSR1 to every rank, as mpirun forwards it, with --json: exit 7, rank
#      0's object says interrupted and resumable (the ranks' journals),
#      as one process's does; --resume with 2 ranks: byte-identical;
#  29. a stop signal once every rank has its last block in hand (to every
#      rank, and to rank 1 alone): the job commits, exit 0, rank 0's note
#      once and its JSON's "signal", as one process does;
#  30. ranks given different jobs (--alpha, --transb, another B of the
#      same shape, --resume on one rank): exit 2 before anything is
#      written, rank 0 alone naming what differs; an identical copy of B
#      on one rank is the same job, resumed as such once stopped;
#  31. a rank's journal (JOURNAL.r1-of-2) that is an input: a usage error
#      (exit 2) naming it, as for one process's --journal; nothing touched;
#  32. gen under mpirun with 4 ranks: refused at once (exit 2), rank 0's one
#      message and JSON object, no file; with one rank it writes;
#  33. a usage error or a missing input that every rank finds: said once
#      (rank 0); one rank's own usage error: said by it, rank 0 naming it;
#  34. a stop signal to rank 1 alone, with --json: rank 0's object names it;
#  35. --verify failing (rank 0 loses a copy out): exit 1, rank 0 says C is
#      written but wrong;
#  36. --resume with another --out-format than the job's: exit 6 before C's
#      temporary file is touched; resumed as started, byte-identical;
#  37. --verify undecided (values of the check overflow, C's inf right):
#      exit 1, rank 0 alone says C is committed but the check could not
#      decide, as one process does;
#  15. op(B) in k-panels on 2 ranks of 2 devices, stopped: one process on 1
#      device starts it over with the ranks' recorded plan: byte-identical;
#  17. a job of one process in the op(A)-resident orientation, stopped:
#      mpirun --resume finishes it, split by C's columns, byte-identical;
#  19. a wide C: one process keeps op(A) resident, and so do the ranks,
#      splitting C's columns: byte-identical, each reads only its part of
#      op(B), --verify by columns; a rank killed, resumed with 2 ranks;
#  20. fewer blocks than ranks (17's job, one column block in 11 panels, 3
#      ranks): a grid, every rank computes, the summary's plan is the job's:
#      byte-identical;
#  21. a grid: 4 ranks on 2's job (2 panels of op(B)) take 2 x 2 rectangles,
#      each reading half of op(B): byte-identical, verified; a rank killed,
#      resumed by rows with 3, and rows killed, resumed as a grid;
#  22. a resume's progress: its rate and ETA leave out the blocks kept;
#  23. SIGUSR1 to a rank waiting in MPI_Init: recorded, every rank stops
#      (exit 7), resumable: byte-identical;
#  25. --verify on a job found finished: rank 0 checks C (in place: says
#      why it cannot);
#  26. a split job's commit cut short: --resume keeps every block, commits;
#  27. killed between its commit and the removal of the ranks' journals: a
#      --resume (mpirun or one process) finds it finished, removes them;
#  27b. but a --journal shared by two outputs keeps the other job's;
#  28. resumed without the --journal it was stopped with: rank 0's note;
#      the temporary file gone: the note names the ranks' journals;
#  24. a split resume naming another journal, absent, over a kept temporary
#      file starts over in a new one: a later resume of the first run's
#      journals commits the right C (both ways round);
#  16. the floor: each GPU's and host's figures measured once and summed,
#      over the bytes every rank moved and staged (with a GPU: op(B) to each
#      rank, the host memory term of the files' staging, one GPU's rates).
# Exits 77 (skip) when oocgemm was built without MPI or mpirun is missing.
set -u
# json_check.py, found before testlib.sh changes directory
if [ -n "${srcdir:-}" ] && [ -f "$srcdir/tests/json_check.py" ]; then here=$(cd "$srcdir/tests" && pwd)
else here=$(cd "$(dirname "$0")" && pwd); fi
. "$(dirname "$0")/testlib.sh" test_mpi

# 1. the library never links MPI (whatever the tool was built with)
lib=${OOC_TOP_BUILDDIR:-$(dirname "$OOCGEMM")/..}/.libs/libooc_gemm.so
if [ -f "$lib" ]; then
    if readelf -d "$lib" 2>/dev/null | grep NEEDED | grep -qi mpi; then
        fail "1 libooc_gemm.so links MPI: $(readelf -d "$lib" | grep NEEDED | grep -i mpi)"
    else
        pass "1 libooc_gemm.so links no MPI"
    fi
fi

if [ "${OOC_MPI_BUILT:-yes}" != yes ] || ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP: oocgemm built without MPI (./configure --with-mpi) or no mpirun"
    [ "$failures" = 0 ] || exit 1
    exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 is needed"
    exit 77
fi
numpy=true
for py in python3 /usr/bin/python3; do
    if "$py" -c 'import numpy' 2>/dev/null; then numpy=$py; break; fi
done
[ "$numpy" != true ] || echo "(no NumPy: C is compared with one process's only)"
# root in CI: Open MPI refuses it unless told; one core per rank is not needed
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export HYDRA_LAUNCHER=fork
# Each rank runs through this wrapper: it writes its pid (pid.RANK) and, for
# the rank named by RANK_ENV=R:VAR=VALUE, sets VAR; B_FOR=R:FILE gives rank R
# another B (what one node may see); DELAY_FOR=R:S starts rank R S seconds
# late (the others wait in MPI_Init). The tool's own test environment is kept.
cat >rank.sh <<EOF
#!/bin/sh
r=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}
echo \$\$ >pid.\$r
if [ -n "\${DELAY_FOR:-}" ] && [ "\$r" = "\${DELAY_FOR%%:*}" ]; then sleep "\${DELAY_FOR#*:}"; fi
if [ -n "\${RANK_ENV:-}" ] && [ "\$r" = "\${RANK_ENV%%:*}" ]; then export "\${RANK_ENV#*:}"; fi
if [ -n "\${B_FOR:-}" ] && [ "\$r" = "\${B_FOR%%:*}" ]; then
    a=\$1; shift 2; set -- "\$a" "\${B_FOR#*:}" "\$@"
fi
exec "$OOCGEMM" multiply "\$@"
EOF
chmod +x rank.sh
# mpi NP ARGS...: the multiply under mpirun with NP ranks, output in out/err
mpi() {
    np=$1
    shift
    rm -f pid.*
    timeout 60 mpirun --oversubscribe -np "$np" -x OOC_HOST_JITTER_US -x OOC_HOST_D2H_DELAY_US -x RANK_ENV -x B_FOR -x DELAY_FOR \
        ./rank.sh "$@" >out 2>err
}
# bg NP ARGS...: the same in the background, once every rank wrote its pid
bg() {
    np=$1
    shift
    rm -f pid.*
    timeout 60 mpirun --oversubscribe -np "$np" -x OOC_HOST_JITTER_US -x OOC_HOST_D2H_DELAY_US -x RANK_ENV -x B_FOR -x DELAY_FOR \
        ./rank.sh "$@" >out 2>err &
    bgpid=$!
    i=0
    while [ "$(ls pid.* 2>/dev/null | wc -l)" -lt "$np" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
# blocks recorded in the journals
# bg_wait: wait for the mpirun bg started, and for its ranks: mpirun may
# return while a rank it stopped is still exiting and holds the output's
# lock (a resume then would find "another job"); returns mpirun's status
bg_wait() {
    local rc f i=0
    wait "$bgpid"
    rc=$?
    bgpid=
    for f in pid.*; do
        while [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    done
    return $rc
}
recorded() { cat C.npy.ooc-journal.r* 2>/dev/null | grep -c '^done'; }
# out_json EXPR: EXPR holds of o, the JSON object in out (else it says why)
out_json() { python3 -c 'import json, sys; o = json.load(open("out")); assert eval(sys.argv[1]), o' "$1"; }
# rank0_writes: rank 0's journal writes in the last mpi ... --json (out): its
# header, a record per block of each of its panels, complete
rank0_writes() {
    python3 -c '
import json
o = json.load(open("out"))
r, p = o["ranks"][0], o["plan"]
panels = p["panels"]
if o["ranks_split"] == "grid":  # its panels of op(B) are its columns of C (rows when op(A) is resident)
    c0, c1 = (r["row_begin"], r["row_end"]) if p["a_resident"] else (r["col_begin"], r["col_end"])
    panels = -(-(c1 - c0) // p["panel_cols"])
print(r["blocks"] * panels + 2)'
}
# wait_blocks N: until the ranks recorded N blocks (at most 20 s), not a
# fixed sleep: on a loaded machine the first block may take longer
wait_blocks() {
    i=0
    while [ "$(recorded)" -lt "$1" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
}
# rank1_killed_part_way OPERANDS...: C.npy by 3 ranks (KILL_NP), afresh,
# slowed (60 ms a block), rank 1 killed (-9) once 2 blocks are recorded;
# returns mpirun's status
rank1_killed_part_way() {
    rm -f C.npy C.npy.ooc-*
    OOC_HOST_JITTER_US=60000
    bg "${KILL_NP:-3}" "$@" -o C.npy $S -q
    OOC_HOST_JITTER_US=
    wait_blocks 2
    kill -9 "$(cat pid.1)" 2>/dev/null
    bg_wait
}
export OOC_HOST_JITTER_US= OOC_HOST_D2H_DELAY_US= RANK_ENV= B_FOR= DELAY_FOR=

# odd shapes, 2 panels, 17 blocks of 64 rows with a shrinking tail
S="--backend host --device-mem 256K --block-rows 64 --ring 3 --no-floor --no-progress"
gen A.npy --rows 83 --cols 1001 --layout col --seed 1
gen B.npy --rows 83 --cols 97 --seed 2
gen C0.npy --rows 1001 --cols 97 --seed 3
P="A.npy B.npy --transa T --alpha 0.75 --c-in C0.npy --beta -0.5"
oc multiply $P -o ref.npy $S -q || { fail "the reference: exit $?"; exit 1; }

# 2. three ranks against one process and NumPy
if mpi 3 $P -o C.npy $S && cmp -s C.npy ref.npy && [ ! -e C.npy.ooc-tmp ] &&
    [ -z "$(ls C.npy.ooc-journal* 2>/dev/null)" ] && grep -q "ranks: 3" out &&
    $numpy -c '
import numpy as np
a, b, c0, c = (np.load(f) for f in ("A.npy", "B.npy", "C0.npy", "C.npy"))
ref = 0.75 * a.T @ b - 0.5 * c0
bound = 0.75 * np.abs(a.T) @ np.abs(b) + 0.5 * np.abs(c0)
assert np.all(np.abs(c - ref) <= 4 * (a.shape[0] + 2) * np.finfo(np.float64).eps * bound)
'; then
    pass "2 3 ranks: byte-identical to one process, equal to NumPy's, nothing left beside C"
else
    fail "2 3 ranks: exit $?, C differs from one process's or NumPy's, or files left"
fi

# 3. a rank killed part-way, resumed with two
rank1_killed_part_way $P
rc=$?
had=$(recorded)
if [ $rc -ne 0 ] && [ ! -e C.npy ] && [ -f C.npy.ooc-tmp ] && [ "$had" -gt 0 ] && [ "$had" -lt 34 ] &&
    mpi 2 $P -o C.npy $S --resume && cmp -s C.npy ref.npy && grep -q "resumed after $had of 34 blocks" out &&
    [ "$(ls C.npy.ooc-* 2>/dev/null)" = C.npy.ooc-journal ] && grep -q '^complete ' C.npy.ooc-journal; then
    pass "3 rank 1 of 3 killed (mpirun exit $rc, $had of 34 blocks kept); --resume with 2 ranks: byte-identical, only the job's journal left, complete"
else
    fail "3 rank 1 killed: mpirun exit $rc, $had blocks kept; the resume with 2 ranks failed or differs"
fi

# 22. a resume's progress leaves out the blocks kept: 3 ranks stopped
# (SIGUSR1) once most blocks are recorded; 2 ranks resume, each copy of C
# out held 50 ms, so no rank finishes more than a block per 50 ms; every
# progress line's rate (blocks of this run per second) is within that. Rank
# 0 had counted the ranks' kept blocks as computed in the first second: a
# CPU job at TFLOP/s, its ETA too short.
rm -f C.npy C.npy.ooc-*
OOC_HOST_D2H_DELAY_US=100000
bg 3 $P -o C.npy $S -q
OOC_HOST_D2H_DELAY_US=
wait_blocks 10
kill -USR1 "$(cat pid.0)" 2>/dev/null
bg_wait
rc=$?
had=$(recorded)
OOC_HOST_D2H_DELAY_US=50000
mpi 2 $P -o C.npy ${S%--no-progress} --resume
rc2=$?
OOC_HOST_D2H_DELAY_US=
if [ $rc = 7 ] && [ "$had" -ge 8 ] && [ "$had" -lt 34 ] && [ $rc2 = 0 ] && cmp -s C.npy ref.npy &&
    python3 -c '
import re, sys
flops, total, ranks, hold = 2.0 * 1001 * 97 * 83, 34, 2, 0.05
lines = [l for l in open("err") if re.search(r"\(\d+/34 blocks\)", l)]
assert lines, "no progress line"
for l in lines:
    m = re.search(r"\((\d+)/34 blocks\) ([\d.]+) s, [^,]*, ([\d.e+-]+) ([GT])FLOP/s", l)
    assert m, l
    el = max(float(m.group(2)) - 0.05, hold)  # printed to 0.1 s; no block before one hold
    per_s = float(m.group(3)) * (1e9 if m.group(4) == "G" else 1e12) * total / flops
    assert per_s <= 1.1 * (ranks / hold + ranks / el), (l, per_s, ranks / hold + ranks / el)
print(len(lines), "lines")
'; then
    pass "22 a resume's progress (2 ranks, $had of 34 blocks kept): the rate and ETA count only this run's blocks"
else
    fail "22 a resume's progress: stop exit $rc (expected 7), $had blocks kept, resume exit $rc2, or a rate above what 2 ranks can compute: $(grep blocks err | head -5)"
fi

# 23. a stop signal while MPI starts: rank 1 starts 6 s late, so rank 0
# waits in MPI_Init when SIGUSR1 comes (once rank 0 handles it: a fixed
# 2 s after the launch assumed it did by then). It is
# recorded, not fatal: every rank stops with exit 7, the job resumable by 2
# ranks, byte-identical. The handlers came after MPI_Init: the signal killed
# rank 0, and mpirun the job, with no exit 7 for a batch script to requeue.
rm -f C.npy C.npy.ooc-*
DELAY_FOR=1:6
bg 3 $P -o C.npy $S
DELAY_FOR=
i=0
until catches "$(cat pid.0 2>/dev/null)" 10 || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -USR1 "$(cat pid.0)" 2>/dev/null
bg_wait
rc=$?
if [ $rc = 7 ] && [ ! -e C.npy ] && grep -q "rank 0 of 3.*interrupted by SIGUSR1" err && mpi 2 $P -o C.npy $S --resume &&
    cmp -s C.npy ref.npy; then
    pass "23 SIGUSR1 to rank 0 in MPI_Init (rank 1 late): every rank stops, exit 7; --resume with 2 ranks: byte-identical"
else
    fail "23 SIGUSR1 to rank 0 in MPI_Init: exit $rc (expected 7), or the resume failed: $(head -c 300 err)"
fi

# 4. a write failure on rank 1 alone
rm -f C.npy
RANK_ENV=1:OOC_FAULT=write:3
mpi 3 $P -o C.npy $S
rc=$?
RANK_ENV=
if [ $rc -eq 6 ] && [ ! -e C.npy ] && [ -f C.npy.ooc-tmp ] && grep -q "rank 1 of 3.*No space left" err &&
    grep -q "rank 0 of 3.*rank 1 of 3 failed multiplying (exit status 6" err && grep -q -- "--resume" err &&
    mpi 3 $P -o C.npy $S --resume && cmp -s C.npy ref.npy; then
    pass "4 a write failure on rank 1: every rank stops, exit 6 naming rank 1; --resume: byte-identical"
else
    fail "4 a write failure on rank 1: exit $rc (expected 6), or the resume failed"
fi

# 36. resumed with another --out-format (another job's output): refused,
# exit 6, nothing touched, before rank 0 creates the output. The creation
# started C.ooc-tmp afresh first, so the refusal came with the blocks the
# ranks' journals record gone. Resumed as started: the blocks kept,
# byte-identical
rm -f C.npy C.npy.ooc-*
RANK_ENV=1:OOC_FAULT=write:3
mpi 3 $P -o C.npy $S
rc=$?
RANK_ENV=
md5sum C.npy.ooc-tmp C.npy.ooc-journal.r* >C.md5 2>/dev/null
mpi 2 $P -o C.npy $S --resume --out-format raw
rc2=$?
if [ $rc -eq 6 ] && [ $rc2 -eq 6 ] && md5sum -c --quiet C.md5 >/dev/null 2>&1 &&
    grep -q "rank 0 of 2.*journal C.npy.ooc-journal.r.-of-3 describes another job: its [0-9]* finished blocks are in C.npy.ooc-tmp" err &&
    mpi 2 $P -o C.npy $S --resume && grep -q "resumed after [1-9]" out && cmp -s C.npy ref.npy; then
    pass "36 resumed with another --out-format: exit 6, nothing touched; resumed as started: blocks kept, byte-identical"
else
    fail "36 resumed with another --out-format: exit $rc, $rc2 (expected 6, 6), files touched, or the resume failed: $(head -c 300 err)"
fi
rm -f C.md5

# 5. a truncated B seen by rank 2 alone
head -c 3000 B.npy >Bcut.npy
rm -f C.npy C.npy.ooc-journal
B_FOR=2:Bcut.npy
mpi 3 $P -o C.npy $S
rc=$?
B_FOR=
if [ $rc -eq 4 ] && [ -z "$(ls C.npy* 2>/dev/null)" ] && grep -q "rank 2 of 3.*truncated" err &&
    grep -q "rank 0 of 3.*rank 2 of 3 failed on its command line or opening the inputs (exit status 4" err &&
    [ "$(grep -c truncated err)" = 1 ]; then
    pass "5 a truncated B on rank 2: every rank stops, exit 4 naming rank 2, no file left"
else
    fail "5 a truncated B on rank 2: exit $rc (expected 4), or files left, or rank 2 not named"
fi
# the same with --json: its "error" gives rank 2's message (it gave only
# "its message above", which a JSON reader does not have)
B_FOR=2:Bcut.npy
mpi 3 $P -o C.npy $S --json
rc=$?
B_FOR=
if [ $rc -eq 4 ] && out_json 'o["error"].startswith("rank 2 of 3 failed") and "truncated" in o["error"]' &&
    [ "$(grep -c truncated err)" = 1 ]; then
    pass "5 --json: the error gives rank 2's own message; stderr has it once"
else
    fail "5 --json: exit $rc, the error does not give rank 2's message: $(head -c 400 out)"
fi

# the same with a path of 2000 bytes: the message's reason, at its end, is
# not cut (it was, at 1800 bytes)
long=d$(printf '%0250d' 0)
deep=$long/$long/$long/$long/$long/$long/$long/$long
mkdir -p "$deep" && cp Bcut.npy "$deep/Bcut.npy"
B_FOR=2:$deep/Bcut.npy
mpi 3 $P -o C.npy $S --json
rc=$?
B_FOR=
if [ $rc -eq 4 ] && out_json 'o["error"].startswith("rank 2 of 3 failed") and "truncated" in o["error"] and len(o["error"]) > 2000' &&
    [ -z "$(ls C.npy* 2>/dev/null)" ]; then
    pass "5 --json, B's path 2000 bytes long: the error gives rank 2's whole message"
else
    fail "5 --json, B's path 2000 bytes long: exit $rc (expected 4), or the error cut: $(tail -c 300 out)"
fi
rm -rf "$long"

# 6. SIGUSR1 to one rank: all stop (exit 7); one process resumes
OOC_HOST_JITTER_US=60000
bg 3 $P -o C.npy $S -q
OOC_HOST_JITTER_US=
wait_blocks 2
kill -USR1 "$(cat pid.2)" 2>/dev/null
bg_wait
rc=$?
had=$(recorded)
grep -q "rank 2 of 3.*interrupted by SIGUSR1" err
said=$?
# (its journal then holds the ranks' blocks too, complete: the same command
# again finds the job finished; it held only its own and was "damaged")
# (first another job's --resume, refused: the message names the ranks' journals it left alone)
oc multiply $P --alpha 2 -o C.npy $S --resume
rc2=$?
grep -q "C.npy.ooc-tmp and the journals of a split run (C.npy.ooc-journal.r\*-of-\*) are left as they were" err
named=$?
if [ $rc -eq 7 ] && [ ! -e C.npy ] && [ $said -eq 0 ] && [ $rc2 -eq 6 ] && [ $named -eq 0 ] && [ "$had" -lt 34 ] &&
    oc multiply $P -o C.npy $S --resume && cmp -s C.npy ref.npy && [ -z "$(ls C.npy.ooc-journal.r* 2>/dev/null)" ] &&
    oc multiply $P -o C.npy $S --resume && grep -q 'finished already' out && cmp -s C.npy ref.npy; then
    pass "6 SIGUSR1 to rank 2: every rank stops, exit 7 ($had of 34 blocks); another job's --resume refused, naming the ranks' journals; one process --resume: byte-identical; again: finished already"
else
    fail "6 SIGUSR1 to rank 2: exit $rc (expected 7), $had blocks, another job's resume exit $rc2 (expected 6, naming the ranks' journals: $named), or the resume by one process (or the same command again) failed: $(head -c 300 err)"
fi

# 7. --verify and --json
rm -f C.npy C.npy.ooc-journal
if mpi 3 $P -o C.npy $S --verify --json && cmp -s C.npy ref.npy && [ "$(wc -l <out)" = 1 ] &&
    python3 -c '
import json, sys
sys.path.insert(0, sys.argv[1])
import json_check
o = json.loads(open("out").read())
json_check.walk(o, "", "multiply")
assert o["exit_status"] == 0 and o["check"]["passed"] and o["multiplied"], o
r = o["ranks"]
assert [x["rank"] for x in r] == [0, 1, 2] and r[0]["row_begin"] == 0 and r[2]["row_end"] == 1001, r
assert all(r[i]["row_end"] == r[i + 1]["row_begin"] for i in range(2)), r
assert sum(x["blocks"] for x in r) == o["plan"]["blocks"] and o["bytes_read"] == sum(x["bytes_read"] for x in r), o
' "$here"; then
    pass "7 --verify --json: one object, every rank listed, the check passed"
else
    fail "7 --verify --json under mpirun"
fi

# 8. a job one process finished (--resume keeps its journal): nothing to do
rm -f C.npy
if oc multiply $P -o C.npy $S --resume -q && mpi 2 $P -o C.npy $S --resume && grep -q "finished already" out &&
    cmp -s C.npy ref.npy; then
    pass "8 a finished job: mpirun --resume does nothing"
else
    fail "8 a finished job under mpirun --resume"
fi

# 9. a job 3 ranks finished with --resume (the whole job's journal recorded
# complete, the range journals gone): the same command again does nothing
rm -f C.npy C.npy.ooc-*
if mpi 3 $P -o C.npy $S --resume && cmp -s C.npy ref.npy && grep -q '^complete ' C.npy.ooc-journal 2>/dev/null &&
    [ -z "$(ls C.npy.ooc-journal.r* C.npy.ooc-tmp 2>/dev/null)" ] && ! grep -q "finished already" out; then
    before=$(stat -c '%i %s %y' C.npy)
    sleep 0.05
    if mpi 3 $P -o C.npy $S --resume && grep -q "C.npy: this job finished already" out &&
        [ "$(stat -c '%i %s %y' C.npy)" = "$before" ] && cmp -s C.npy ref.npy && [ ! -e C.npy.ooc-tmp ]; then
        pass "9 a job finished by mpirun --resume: the same command again does nothing"
    else
        fail "9 mpirun --resume again after a finished split job: exit $?, or C rewritten, or no message"
    fi
else
    fail "9 mpirun -np 3 --resume: exit $?, C differs, or the job's journal is not complete"
fi

# 25. --verify on a job found finished: rank 0 checks the whole C, as one
# process does (it was skipped without a word); in place, it says why not
rm -f C.npy C.npy.ooc-*
if mpi 3 $P -o C.npy $S --resume -q && mpi 2 $P -o C.npy $S --resume --verify --json && cmp -s C.npy ref.npy &&
    out_json 'o["exit_status"] == 0 and o["check"]["passed"] and o["check"]["rows"] > 0'; then
    pass "25 a finished job, mpirun --resume --verify: rank 0 checks C, the check passed"
else
    fail "25 a finished job, mpirun --resume --verify: exit $?, or no check passed: $(cat out err | head -c 600)"
fi
rm -f C.npy C.npy.ooc-*

# 26. a split job run without --resume whose commit fails (the rename): the
# complete result stays, with the trailer naming the temporary file put
# back, so that the ranks' journals (which recorded it by its id) still
# vouch for every block and --resume only commits. Before, the commit cut
# the trailer for good and the resume computed every block again. Its JSON
# says resumable (it said false, while stderr said to resume)
rm -f C.npy C.npy.ooc-*
RANK_ENV=0:OOC_FAULT=commit:1
mpi 2 $P -o C.npy $S --json
rc=$?
RANK_ENV=
if [ $rc -eq 6 ] && [ ! -e C.npy ] && [ -f C.npy.ooc-tmp ] && grep -q "complete result is left in C.npy.ooc-tmp" err &&
    out_json 'o["resumable"] is True and o["resume_keeps_blocks"] is True and o["exit_status"] == 6' &&
    [ "$(tail -c 32 C.npy.ooc-tmp | head -c 15)" = "oocgemm-tmp-id " ] &&
    mpi 2 $P -o C.npy $S --resume --json && cmp -s C.npy ref.npy &&
    out_json 'o["exit_status"] == 0 and o["resumed"] and o["blocks_before_resume"] == 34' &&
    [ "$(stat -c %s C.npy)" = "$(stat -c %s ref.npy)" ]; then
    pass "26 a split job's commit cut short: its result kept, JSON resumable, --resume keeps all 34 blocks and commits, byte-identical"
else
    fail "26 a split job's commit cut short: exit $rc (expected 6), no trailer, or the resume did not keep every block: $(head -c 400 err) $(head -c 400 out)"
fi
rm -f C.npy C.npy.ooc-*

# 26b. the same with a plan in k-panels (op(B) split in depth), without
# --resume and with it: the ranks' journals (and the whole job's) record
# their parts complete, and --resume keeps every block and commits. Such a
# plan's journals were never used, complete or not: the job was computed
# again, all of it, saying nothing (a user-level hunt)
gen KA.npy --rows 600 --cols 2000 --seed 4
gen KB.npy --rows 2000 --cols 300 --seed 5
K="--backend host --device-mem 4M --host-mem 4M --block-rows 64 --no-floor --no-progress"
oc multiply KA.npy KB.npy -o Kref.npy $K -q --json
kp=$(/usr/bin/python3 -c "import json; print(json.load(open('out'))['plan']['panels'])" 2>/dev/null)
for first in "" --resume; do
    rm -f KC.npy KC.npy.ooc-*
    RANK_ENV=0:OOC_FAULT=commit:1
    mpi 2 KA.npy KB.npy -o KC.npy $K $first
    rc=$?
    RANK_ENV=
    if [ "${kp:-1}" -gt 1 ] && [ $rc -eq 6 ] && mpi 2 KA.npy KB.npy -o KC.npy $K --resume --json &&
        out_json 'o["exit_status"] == 0 and o["resumed"] and o["blocks_before_resume"] == o["plan"]["blocks"] * o["plan"]["panels"] and o["bytes_read"] == 0' &&
        cmp -s KC.npy Kref.npy; then
        pass "26b a split job in $kp panels (k split), its commit cut short${first:+ (run with --resume)}: --resume keeps every block, commits, byte-identical"
    else
        fail "26b a split job in k-panels (${kp:-?} panels), its commit cut short${first:+ (run with --resume)}: exit $rc, or the resume computed again: $(head -c 300 out)"
    fi
done
# the same, a block of C.ooc-tmp changed (its time put back), resumed by 3
# ranks: only that block is computed again (all its panels), counted once
# (each rank counted every changed block of the old journals, its own or
# not, and threw away its whole part for another's block; a review)
rm -f KC.npy KC.npy.ooc-*
RANK_ENV=0:OOC_FAULT=commit:1
mpi 2 KA.npy KB.npy -o KC.npy $K
rc=$?
RANK_ENV=
touch -r KC.npy.ooc-tmp KC.time
printf 'ZZZZZZZZ' | dd of=KC.npy.ooc-tmp bs=1 seek=400000 conv=notrunc 2>/dev/null
touch -r KC.time KC.npy.ooc-tmp
if [ $rc -eq 6 ] && mpi 3 KA.npy KB.npy -o KC.npy $K --resume --json &&
    out_json 'o["blocks_mismatched"] == 1 and o["blocks_before_resume"] == (o["plan"]["blocks"] - 1) * o["plan"]["panels"]' &&
    cmp -s KC.npy Kref.npy; then
    pass "26b a block changed, resumed by 3 ranks: that block alone computed again, counted once, byte-identical"
else
    fail "26b a block changed, resumed by 3 ranks: exit $rc, or not that block alone: $(head -c 600 out)"
fi
rm -f KA.npy KB.npy KC.npy KC.npy.ooc-* Kref.npy KC.time

# 26c. one process stopped after the 17 blocks of the first of 2 panels
# (its journal's 19th record failed), resumed by 2 ranks, one panel each:
# rank 0's is done, rank 1 computes the other. The summary and the JSON's
# plan are the plan as run (rank 1's ring, streams, buffers), not rank 0's
# empty one: "ring 0, streams 0" (a user-level hunt)
rm -f C.npy C.npy.ooc-*
OOC_FAULT=journal:19 oc multiply $P -o C.npy $S -q
rc=$?
mpi 2 $P -o C.npy $S --resume --json
rc2=$?
if [ $rc -eq 6 ] && [ $rc2 -eq 0 ] && cmp -s C.npy ref.npy &&
    out_json 'o["ranks"][0]["bytes_written"] == 0 and o["plan"]["ring_depth"] == 3 and o["plan"]["streams"] > 0 and o["plan"]["device_bytes"] > 0'; then
    pass "26c resumed by 2 ranks, rank 0's range done: the JSON's plan is the plan as run (ring 3), byte-identical"
else
    fail "26c resumed by 2 ranks, rank 0's range done: exit $rc, $rc2, or the JSON's plan is rank 0's empty one: $(head -c 600 out)"
fi
rm -f C.npy C.npy.ooc-*

# 27. a split job killed right after its commit, before the ranks' journals
# went (here: the commit failed, then the rename done by hand, the state such
# a kill leaves): a --resume, by mpirun or by one process, finds the job
# finished and removes them. They were left for good.
for how in mpi one; do
    rm -f C.npy C.npy.ooc-*
    RANK_ENV=0:OOC_FAULT=commit:1
    mpi 2 $P -o C.npy $S --resume
    RANK_ENV=
    left=$(ls C.npy.ooc-journal.r*-of-2 2>/dev/null | wc -l)
    mv C.npy.ooc-tmp C.npy
    if [ $how = mpi ]; then mpi 3 $P -o C.npy $S --resume; else oc multiply $P -o C.npy $S --resume; fi
    rc=$?
    if [ "$left" -eq 2 ] && [ $rc -eq 0 ] && grep -q "this job finished already" out && cmp -s C.npy ref.npy &&
        [ -z "$(ls C.npy.ooc-journal.r* 2>/dev/null)" ] && [ -f C.npy.ooc-journal ]; then
        pass "27 killed between its commit and the removal of the ranks' journals: --resume ($how) finds it finished and removes them"
    else
        fail "27 killed between its commit and the removal of the ranks' journals ($left): --resume ($how): exit $rc, not finished, or left: $(ls C.npy.ooc-* 2>/dev/null | tr '\n' ' ')"
    fi
done
rm -f C.npy C.npy.ooc-*

# 27b. a --journal path shared by two outputs: job X finished at J, job Y (on
# another output) failed split, its ranks' journals kept; X's --resume
# again (finished already) must leave Y's: Y then resumes its blocks. They
# were removed, and Y computed everything again
rm -f C.npy C.npy.ooc-* D.npy D.npy.ooc-* J J.*
oc multiply $P -o C.npy $S --journal J --resume
RANK_ENV=1:OOC_FAULT=gemm:3
mpi 2 $P -o D.npy $S --journal J --resume
RANK_ENV=
had=$(cat J.r*-of-2 2>/dev/null | grep -a -c '^done ')
oc multiply $P -o C.npy $S --journal J --resume
rc=$?
left=$(ls J.r*-of-2 2>/dev/null | wc -l)
rm -f J
if [ $rc -eq 0 ] && grep -q "finished already" out && [ "$left" -eq 2 ] && [ "$had" -gt 0 ] &&
    mpi 2 $P -o D.npy $S --journal J --resume && grep -q "resumed after $had of 34 blocks" out && cmp -s D.npy ref.npy; then
    pass "27b a --journal shared by two outputs: the finished job's --resume leaves the other's ranks' journals; it resumes after $had blocks"
else
    fail "27b a --journal shared by two outputs: exit $rc, $left of 2 ranks' journals left, or the other job did not resume its $had blocks"
fi
rm -f C.npy C.npy.ooc-* D.npy D.npy.ooc-* J J.*

# 28. a split job stopped with --journal J, resumed by mpirun without it: the
# temporary file is there but no journal at C's path; rank 0 says so in a
# note before the work, which starts from the first block (it was silent)
OOC_HOST_JITTER_US=60000
bg 2 $P -o C.npy $S --journal J -q
OOC_HOST_JITTER_US=
i=0
while [ "$(cat J.r* 2>/dev/null | grep -c '^done')" -lt 2 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -USR1 "$(cat pid.0)" 2>/dev/null
bg_wait
rc=$?
if [ $rc -eq 7 ] && [ -f C.npy.ooc-tmp ] && mpi 2 $P -o C.npy $S --resume &&
    grep -q "note: --resume: C.npy.ooc-tmp is there but no journal at C.npy.ooc-journal" err && cmp -s C.npy ref.npy; then
    pass "28 a split job resumed without its --journal: rank 0's note, then the whole job, byte-identical"
else
    fail "28 a split job resumed without its --journal: exit $rc (expected 7), no note, or C differs: $(head -c 300 err)"
fi
rm -f C.npy C.npy.ooc-* J J.*
# ... and stopped, its temporary file then removed: the note names the
# journals there are, the ranks' (it named C.npy.ooc-journal, not there)
OOC_HOST_JITTER_US=60000
bg 2 $P -o C.npy $S -q
OOC_HOST_JITTER_US=
wait_blocks 2
kill -USR1 "$(cat pid.0)" 2>/dev/null
bg_wait
rc=$?
rm -f C.npy.ooc-tmp
if [ $rc -eq 7 ] && mpi 2 $P -o C.npy $S --resume && cmp -s C.npy ref.npy && grep -q "note: --resume: the journals \
C.npy.ooc-journal.r\*-of-2 are there but not C.npy.ooc-tmp, the file of the [0-9]* blocks they record" err; then
    pass "28 a split job's temporary file removed: rank 0's note names the ranks' journals; the whole job, byte-identical"
else
    fail "28 a split job's temporary file removed: exit $rc (expected 7), the note does not name the ranks' journals, or C differs: $(head -c 300 err)"
fi
rm -f C.npy C.npy.ooc-*

# 10. journals an earlier mpirun left (a failed split job) are forgotten by a
# later fresh run of one process, which empties the same temporary file in
# place: killed, then resumed, it must not take their blocks as done
rm -f C.npy C.npy.ooc-*
RANK_ENV=1:OOC_FAULT=write:3
mpi 2 $P -o C.npy $S
RANK_ENV=
left=$(ls C.npy.ooc-journal.r*-of-2 2>/dev/null | wc -l)
OOC_HOST_JITTER_US=50000 "$OOCGEMM" multiply $P -o C.npy $S -q >out 2>err &
pid=$!
i=0
while ! grep -q '^done' C.npy.ooc-journal 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
if [ "$left" -ge 1 ] && [ -z "$(ls C.npy.ooc-journal.r* 2>/dev/null)" ] && oc multiply $P -o C.npy $S --resume -q &&
    cmp -s C.npy ref.npy; then
    pass "10 the journals of a failed mpirun: a fresh run forgets them; killed and resumed, byte-identical"
else
    fail "10 the journals of a failed mpirun ($left left) outlived a fresh run, or the resume differs"
fi

# 24. a split resume naming another journal, absent, over the temporary file
# a failed split job kept: it starts the job over, and must do so in a new
# file, or the first run's range journals (still of the kept file) vouch for
# blocks it overwrote (here with partial sums of op(B) in k-panels), and a
# third run resuming them commits a wrong C with exit 0. Then with the
# journals the other way round (the first run's own given again).
for third in "" "--journal JA"; do
    rm -f C.npy C.npy.ooc-* JA* JB*
    first=()
    [ -n "$third" ] && first=(--journal JA)
    RANK_ENV=1:OOC_FAULT=write:3
    mpi 2 $P -o C.npy $S "${first[@]}" -q
    rc1=$?
    RANK_ENV=1:OOC_FAULT=write:40
    mpi 2 $P -o C.npy --backend host --no-floor --no-progress --device-mem 24K --host-mem 64K --resume --journal JB -q
    rc2=$?
    RANK_ENV=
    # (started over: the range journals at C's default path went with the old file)
    stale=$(ls C.npy.ooc-journal.r* 2>/dev/null)
    # shellcheck disable=SC2086
    mpi 3 $P -o C.npy $S --resume $third -q
    rc3=$?
    if [ -n "$stale" ]; then
        fail "24 ${third:-default journal}: the split resume that started over left $stale"
    elif [ "$rc1" -ne 6 ] || [ "$rc2" -ne 6 ]; then
        fail "24 ${third:-default journal}: the failed split runs exited $rc1 and $rc2 (expected 6 and 6): $(cat err)"
    elif [ "$rc3" -eq 0 ] && cmp -s C.npy ref.npy; then
        pass "24 a split resume with another journal, then the first one's (${third:-default}): C right"
    else
        fail "24 a split resume with another journal, then the first one's (${third:-default}): exit $rc3, C differs from one process's: $(cat err)"
    fi
done
rm -f C.npy C.npy.ooc-* JA* JB*

# 11. in place with --resume: rank 0 fails to record the job as finished
# (its journal writes: header, a record per block and panel, complete; then
# the whole job's journal: header, records, complete, where it fails). The
# job fails before its commit: never committed unrecorded, where a requeued
# --resume would compute it again from its own output
rm -f C.npy C.npy.ooc-* Cin.npy*
if mpi 2 $P -o C.npy $S --json; then
    w0=$(rank0_writes)
else
    w0=0
fi
cp C0.npy Cin.npy
IP="A.npy B.npy --transa T --alpha 0.75 --c-in Cin.npy --beta -0.5"
RANK_ENV=0:OOC_FAULT=journal:$((w0 + 3))
mpi 2 $IP -o Cin.npy $S --resume
rc=$?
RANK_ENV=
if [ "$w0" -gt 2 ] && [ $rc -ne 0 ] && cmp -s Cin.npy C0.npy && [ -f Cin.npy.ooc-tmp ] &&
    [ ! -e Cin.npy.ooc-journal ] && grep -q "complete but not committed" err &&
    mpi 3 $IP -o Cin.npy $S --resume && cmp -s Cin.npy ref.npy && grep -q '^complete ' Cin.npy.ooc-journal &&
    mpi 2 $IP -o Cin.npy $S --resume && grep -q "finished already" out && cmp -s Cin.npy ref.npy; then
    pass "11 in place, recording fails on rank 0: not committed (exit $rc), C untouched; --resume commits; again: finished"
else
    fail "11 in place, recording failed on rank 0 (fault at journal write $((w0 + 3)), exit $rc): committed anyway, or a resume computed it again"
fi

# 12. a scaling job in place under mpirun with --resume, twice
cp C0.npy Cs.npy
if oc multiply A.npy B.npy --transa T --alpha 0 --c-in C0.npy --beta 2 -o sref.npy $S -q &&
    mpi 3 A.npy B.npy --transa T --alpha 0 --c-in Cs.npy --beta 2 -o Cs.npy $S --resume && cmp -s Cs.npy sref.npy &&
    mpi 3 A.npy B.npy --transa T --alpha 0 --c-in Cs.npy --beta 2 -o Cs.npy $S --resume &&
    grep -q "finished already" out && cmp -s Cs.npy sref.npy; then
    pass "12 a scaling job in place under mpirun --resume, twice: C = 2 C0, the second run did nothing"
    if mpi 3 A.npy B.npy --transa T --alpha 0 --c-in Cs.npy --beta 2 -o Cs.npy $S --resume --verify &&
        grep -q "not checked: this job ran in place and finished" err && cmp -s Cs.npy sref.npy; then
        pass "25 a job finished in place, mpirun --resume --verify: says why it is not checked"
    else
        fail "25 a job finished in place, mpirun --resume --verify: exit $?, C changed, or no word why: $(cat err)"
    fi
else
    fail "12 a scaling job in place under mpirun --resume, twice: C is not 2 C0 or the second run scaled it again"
fi

# 12b. a scaling job (alpha 0) on 3 ranks, not in place: rank 0 writes all
# of C, and its line and JSON object say so (they said rows [0, 0) in 0
# blocks; and bytes 0 before files_scale counted them)
rm -f Cs2.npy
mpi 3 A.npy B.npy --transa T --alpha 0 --c-in C0.npy --beta 2 -o Cs2.npy $S
rc=$?
line=$(grep '^  rank 0 on' out)
mpi 3 A.npy B.npy --transa T --alpha 0 --c-in C0.npy --beta 2 -o Cs3.npy $S --json
rc2=$?
cbytes=$((1001 * 97 * 8))
if [ $rc -eq 0 ] && [ $rc2 -eq 0 ] && cmp -s Cs2.npy sref.npy && cmp -s Cs3.npy sref.npy &&
    case "$line" in *"rows [0, 1001) scaled (C = beta C0: nothing multiplied)"*) true ;; *) false ;; esac &&
    python3 -c '
import json, sys
r = json.load(open("out"))["ranks"]
w = int(sys.argv[1])
sys.exit(not (r[0]["row_begin"] == 0 and r[0]["row_end"] == 1001 and r[0]["bytes_written"] == w and
              r[0]["bytes_read"] == w and all(q["bytes_written"] == 0 for q in r[1:])))' "$cbytes"; then
    pass "12b a scaling job on 3 ranks: rank 0's line and object give all 1001 rows of C and their bytes"
else
    fail "12b a scaling job on 3 ranks: exit $rc, $rc2, C differs, or rank 0's line/object: '$line' $(head -c 600 out)"
fi
rm -f Cs2.npy Cs3.npy

# 13. --json when the job fails: rank 0's object only (the other ranks
# print none, not even the bare one main gives a command that printed none)
# one_object RC: the command exited RC and printed one object, of multiply,
# with that exit status
one_object() {
    python3 -c '
import json, sys
lines = open("out").read().splitlines()
assert len(lines) == 1, lines
o = json.loads(lines[0])
assert o["command"] == "multiply" and o["exit_status"] == int(sys.argv[1]) and o["error"], o
' "$1"
}
rm -f C.npy C.npy.ooc-*
mpi 3 B.npy B.npy -o C.npy $S --json
rc=$?
one_object 5 2>/dev/null && grep -q "rank 0 of 3.*inner dimensions differ" err
ok=$?
mpi 3 $P -o C.npy $S --json --no-such-option
rc2=$?
if [ $rc -eq 5 ] && [ $ok -eq 0 ] && [ $rc2 -eq 2 ] && one_object 2 && [ -z "$(ls C.npy* 2>/dev/null)" ]; then
    pass "13 --json on failure under mpirun: one object, rank 0's (operands that do not fit, exit 5; a usage error, exit 2)"
else
    fail "13 --json on failure under mpirun: exit $rc and $rc2 (expected 5 and 2), or not one object, rank 0's"
fi

# 14. a stop signal to every rank, as mpirun forwards Slurm's USR1 before
# the wall time: the JSON says interrupted, resumable
rm -f C.npy C.npy.ooc-*
OOC_HOST_JITTER_US=60000
bg 3 $P -o C.npy $S --json
OOC_HOST_JITTER_US=
wait_blocks 2
# what mpirun does with it (Open MPI forwards USR1 to every rank; not every
# build or launcher does): every rank signalled at once, as it forwards
for f in pid.*; do kill -USR1 "$(cat "$f")" 2>/dev/null; done
bg_wait
rc=$?
if [ $rc -eq 7 ] && [ ! -e C.npy ] && python3 -c '
lines = open("out").read().splitlines()
assert len(lines) == 1, lines
import json
o = json.loads(lines[0])
assert o["exit_status"] == 7 and o["signal"] == "SIGUSR1" and not o["multiplied"], o
assert o["interrupted"] is True and o["resumable"] is True and o["resume_keeps_blocks"] is True, o
' && mpi 2 $P -o C.npy $S --resume && cmp -s C.npy ref.npy; then
    pass "14 SIGUSR1 to every rank with --json: exit 7, one object, interrupted and resumable; --resume: byte-identical"
else
    fail "14 SIGUSR1 to every rank with --json: exit $rc (expected 7), or the object does not say interrupted and resumable"
fi

# 29. a stop signal that comes once every rank has its last block in hand
# (one block each, copied out in 4 pieces, each held 2 s; SIGUSR1 at 2 s,
# the blocks issued long before even on a loaded machine)
# stops nothing: the job commits C (exit 0), byte-identical, and rank 0
# alone says so in a note, its JSON naming the signal (interrupted false),
# as one process does; also when the signal reaches rank 1 alone. It gave exit 7, "interrupted ...
# after 1 of 1 blocks of this rank", nothing committed.
T29="--backend host --block-rows 512 --a-pieces 2 --b-chunks 4 --no-progress"
oc multiply $P -o ref29.npy $T29 -q || fail "29 the reference: exit $?"
for to in every 1; do
    rm -f C.npy C.npy.ooc-*
    OOC_HOST_D2H_DELAY_US=1999999
    bg 2 $P -o C.npy $T29 --json
    OOC_HOST_D2H_DELAY_US=
    i=0
    while [ "$(ls C.npy.ooc-journal.r*-of-2 2>/dev/null | wc -l)" -lt 2 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
    sleep 2
    if [ $to = every ]; then for f in pid.*; do kill -USR1 "$(cat "$f")" 2>/dev/null; done
    else kill -USR1 "$(cat pid.1)" 2>/dev/null; fi
    bg_wait
    rc=$?
    if [ $rc -eq 0 ] && cmp -s C.npy ref29.npy && [ -z "$(ls C.npy.ooc-* 2>/dev/null)" ] &&
        [ "$(grep -c 'note: SIGUSR1 came after the last block: C.npy is complete and committed' err)" = 1 ] &&
        grep -q 'rank 0 of 2.*note: SIGUSR1 came after the last block' err && ! grep -q interrupted err &&
        out_json 'o["exit_status"] == 0 and o["signal"] == "SIGUSR1" and o["interrupted"] is False and o["multiplied"]'
    then
        pass "29 SIGUSR1 to $to rank(s) with every last block in hand: exit 0, C committed, byte-identical, rank 0's note once, JSON signal"
    else
        fail "29 SIGUSR1 to $to rank(s) with every last block in hand: exit $rc (expected 0), C not committed or different, or no single note from rank 0"
    fi
done
rm -f C.npy C.npy.ooc-* ref29.npy

# 30. ranks given different jobs (MPMD: mpirun -np 1 ... : -np 1 ...): each
# computed its part of another C, one wrong C with exit 0 (half its rows
# 2 A B with --alpha 2 on rank 1). Now refused before anything is made:
# exit 2 on every rank, rank 0's one message naming rank 1 and what
# differs. A copy of B (another inode and time, the same bytes: a node's
# local copy) is the same job: byte-identical.
gen SA.npy --rows 120 --cols 120 --seed 51
gen SB.npy --rows 120 --cols 120 --seed 52
gen SB2.npy --rows 120 --cols 120 --seed 53
cp SB.npy SBcopy.npy
Q="--backend host --block-rows 64 --no-progress"
oc multiply SA.npy SB.npy -o ref30.npy $Q -q || fail "30 the reference: exit $?"
for d in "--alpha 2:--alpha 2, rank 0 1" "--alpha 1.0000000000000002:--alpha 1.0000000000000002, rank 0 1" "--transb T:--transa/--transb N/T, rank 0 N/N" \
    "--resume:--resume given, rank 0 not given" "B=SB2.npy:its B holds other bytes than rank 0's B (SB.npy)"; do
    opt=${d%%:*} want=${d#*:} b=SB.npy
    case $opt in B=*) b=${opt#B=} opt= ;; esac
    rm -f SC.npy SC.npy.ooc-*
    timeout 60 mpirun --oversubscribe -np 1 ./rank.sh SA.npy SB.npy -o SC.npy $Q : \
        -np 1 ./rank.sh SA.npy $b -o SC.npy $Q $opt >out 2>err
    rc=$?
    if [ $rc -eq 2 ] && [ -z "$(ls SC.npy* 2>/dev/null)" ] && [ "$(grep -c 'given another job' err)" = 1 ] &&
        grep -F "rank 1 was given another job than rank 0: $want" err | grep -q '^oocgemm (rank 0 of 2'; then
        pass "30 rank 1 given ${opt:-another B of the same shape}: exit 2, nothing written, rank 0 names it: $want"
    else
        fail "30 rank 1 given ${opt:-another B of the same shape}: exit $rc (expected 2), files left, or not one message naming it ($want)"
    fi
done
# rank 1 given another -o, whose .ooc-tmp a failed run left: it wrote its
# rows there, and rank 0 committed C without them (exit 0, C wrong)
OOC_FAULT=journal:3 oc multiply SA.npy SB.npy -o SX.npy $Q -q 2>/dev/null
rm -f SC.npy SC.npy.ooc-*
timeout 60 mpirun --oversubscribe -np 1 ./rank.sh SA.npy SB.npy -o SC.npy $Q : \
    -np 1 ./rank.sh SA.npy SB.npy -o SX.npy $Q >out 2>err
rc=$?
if [ $rc -eq 2 ] && [ -z "$(ls SC.npy* 2>/dev/null)" ] &&
    grep -q "rank 1 was given another job than rank 0: another -o than rank 0's SC.npy" err; then
    pass "30 rank 1 given another -o (a failed run's .ooc-tmp there): exit 2, nothing written, rank 0 names it"
else
    fail "30 rank 1 given another -o (a failed run's .ooc-tmp there): exit $rc (expected 2), C written, or no message"
fi
rm -f SX.npy SX.npy.ooc-*
rm -f SC.npy
if timeout 60 mpirun --oversubscribe -np 1 ./rank.sh SA.npy SB.npy -o SC.npy $Q : -np 1 ./rank.sh SA.npy SBcopy.npy \
    -o SC.npy $Q >out 2>err && cmp -s SC.npy ref30.npy; then
    pass "30 rank 1 given an identical copy of B: the same job, byte-identical"
else
    fail "30 rank 1 given an identical copy of B: exit $?, or C differs"
fi
# the same, stopped part-way (a write failure on rank 1) and resumed as it
# started: rank 0 read rank 1's journal, which recorded rank 1's copy (another
# inode), and refused it as "another job": a job on nodes with their own
# copies could never be resumed (a user-level hunt). The ranks' journals now
# all record rank 0's view of the inputs (ooc_files_opts_t.job)
rm -f SC.npy SC.npy.ooc-*
gen SL.npy --rows 1000 --cols 120 --seed 54
oc multiply SL.npy SB.npy -o ref30L.npy $Q -q || fail "30 the reference (SL): exit $?"
RANK_ENV=1:OOC_FAULT=write:4 B_FOR=1:SBcopy.npy
mpi 2 SL.npy SB.npy -o SC.npy $Q
rc=$?
RANK_ENV=
mpi 2 SL.npy SB.npy -o SC.npy $Q --resume
rc2=$?
B_FOR=
if [ $rc -eq 6 ] && [ $rc2 -eq 0 ] && grep -q "resumed after [1-9]" out && cmp -s SC.npy ref30L.npy; then
    pass "30 rank 1 on its own copy of B, stopped, resumed as started: blocks kept, byte-identical"
else
    fail "30 rank 1 on its own copy of B, stopped (exit $rc, expected 6), resumed: exit $rc2: $(head -c 300 err)"
fi
rm -f SA.npy SB.npy SB2.npy SBcopy.npy SL.npy SC.npy SC.npy.ooc-* ref30.npy ref30L.npy

# 31. the ranks' journals are checked against the inputs as one process's
# --journal is: rank 1's jj.r1-of-2 given as B is a usage error (exit 2),
# rank 1 naming it, nothing written or touched. It was refused late as a
# journal of another job (exit 6), as if --resume had been given
cp B.npy jj.r1-of-2
rm -f Z.npy Z.npy.ooc-*
mpi 2 A.npy jj.r1-of-2 --transa T -o Z.npy $S --journal jj
rc=$?
if [ $rc -eq 2 ] && cmp -s B.npy jj.r1-of-2 && [ -z "$(ls Z.npy* jj.r0* 2>/dev/null)" ] &&
    grep -q "rank 1 of 2.*the journal jj.r1-of-2 of rank 1 (jj.r<R>-of-2) is the input B (jj.r1-of-2)" err; then
    pass "31 rank 1's journal is the input B: exit 2, named, nothing written"
else
    fail "31 rank 1's journal is the input B: exit $rc (expected 2), files written or touched, or not named: $(head -c 300 err)"
fi
rm -f jj.r1-of-2 Z.npy Z.npy.ooc-*

# 32. gen started by mpirun with several ranks: each wrote OUT through the
# one OUT.ooc-tmp ("locked by another job", a temporary file left). Now
# refused before any file is touched: exit 2, one message and one JSON
# object (rank 0's); mpirun -np 1 writes it
rm -f G.npy G.npy.ooc-*
timeout 60 mpirun --oversubscribe -np 4 "$OOCGEMM" gen G.npy --rows 300 --cols 200 --json >out 2>err
rc=$?
if [ $rc -eq 2 ] && [ -z "$(ls G.npy* 2>/dev/null)" ] && [ "$(grep -c 'gen writes one file from one process' err)" = 1 ] &&
    grep -q 'one of 4 ranks' err && [ "$(wc -l <out)" = 1 ] && out_json 'o["exit_status"] == 2 and "one of 4 ranks" in o["error"]' &&
    timeout 60 mpirun --oversubscribe -np 1 "$OOCGEMM" gen G.npy --rows 300 --cols 200 -q >out 2>err && [ -f G.npy ] &&
    [ -z "$(ls G.npy.* 2>/dev/null)" ]; then
    pass "32 gen by 4 ranks: refused (exit 2), one message and object, no file; by one rank: written"
else
    fail "32 gen by 4 ranks: exit $rc (expected 2), files left, not one message or object, or one rank failed: $(head -c 300 err)"
fi
rm -f G.npy G.npy.*

# 33. a usage error (--bogus) or a missing input, the same on every rank,
# was printed by every rank: now once, by rank 0, exit 2 and 4. A rank's
# own failure is still said by it, under its rank's name (MPMD: --bogus on
# rank 1 alone; it was said as plain "oocgemm"), rank 0 naming it
mpi 3 $P -o Z.npy $S --bogus
rc=$?
nb=$(grep -c 'unknown option --bogus' err)
mpi 3 A.npy nothere.npy -o Z.npy $S
rc2=$?
nm=$(grep -c 'nothere.npy' err)
grep -q 'rank 0 of 3.*nothere.npy' err || nm="not rank 0's"
timeout 60 mpirun --oversubscribe -np 1 ./rank.sh $P -o Z.npy $S : -np 1 ./rank.sh $P -o Z.npy $S --bogus >out 2>err
rc3=$?
if [ $rc -eq 2 ] && [ "$nb" = 1 ] && [ $rc2 -eq 4 ] && [ "$nm" = 1 ] && [ -z "$(ls Z.npy* 2>/dev/null)" ] &&
    [ $rc3 -eq 2 ] && [ "$(grep -c 'unknown option --bogus' err)" = 1 ] && grep -q 'rank 0 of 2.*rank 1 of 2 failed' err &&
    grep -q '^oocgemm (rank 1 of 2, [^)]*) multiply: unknown option --bogus' err; then
    pass "33 --bogus and a missing B on 3 ranks: said once (exit 2, 4); --bogus on rank 1 alone: said under rank 1's name, rank 0 names it"
else
    fail "33 errors of every rank said once: exit $rc, $rc2, $rc3 (expected 2, 4, 2), --bogus said $nb times, the missing B $nm, or rank 1's own not said: $(head -c 300 err)"
fi

# 34. a stop signal that reaches rank 1 alone (kill -TERM of its pid):
# every rank stops, exit 7, and rank 0's JSON object says interrupted with
# the signal (it said "signal": null: rank 0 caught none itself)
rm -f C.npy C.npy.ooc-*
OOC_HOST_JITTER_US=60000
bg 3 $P -o C.npy $S --json
OOC_HOST_JITTER_US=
wait_blocks 2
kill -TERM "$(cat pid.1)" 2>/dev/null
bg_wait
rc=$?
if [ $rc -eq 7 ] && [ ! -e C.npy ] && [ "$(wc -l <out)" = 1 ] &&
    out_json 'o["exit_status"] == 7 and o["interrupted"] is True and o["signal"] == "SIGTERM" and o["resumable"] is True'; then
    pass "34 SIGTERM to rank 1 alone with --json: exit 7, rank 0's object: interrupted, signal SIGTERM"
else
    fail "34 SIGTERM to rank 1 alone with --json: exit $rc (expected 7), or rank 0's object lacks the signal: $(head -c 300 out)"
fi
rm -f C.npy C.npy.ooc-*

# 35. --verify failing: the split job's message says that C was written
# (committed) and is wrong, as one process's does
rm -f C.npy C.npy.ooc-*
RANK_ENV=0:OOC_FAULT=lose:2
mpi 2 $P -o C.npy $S --verify
rc=$?
RANK_ENV=
if [ $rc -eq 1 ] && [ -f C.npy ] &&
    grep -q 'rank 0 of 2.*verification failed: .*: C.npy is written (committed), but wrong: do not use it' err; then
    pass "35 --verify failing on 2 ranks: exit 1, rank 0 says C is written but wrong"
else
    fail "35 --verify failing on 2 ranks: exit $rc (expected 1), or the message does not say C is wrong: $(head -c 300 err)"
fi
rm -f C.npy C.npy.ooc-*

# 37. --verify undecided (float32 A of 3e38 in rank 1's rows times B of
# ones: C's inf is right, the check's values overflow): exit 1, rank 0 alone
# says, as one process does, that C is written (committed) but the check
# could not decide, naming rank 1's reason; it said only "verify: the
# verification is undecided", on every rank
python3 -c 'import struct, sys
open("Au.bin", "wb").write(struct.pack("<320f", *([1.0] * 256 + [3e38] * 64)))
open("Bu.bin", "wb").write(struct.pack("<48f", *([1.0] * 48)))'
rm -f Cu.npy Cu.npy.ooc-*
mpi 2 Au.bin:40x8:s Bu.bin:8x6:s -o Cu.npy --backend host --block-rows 8 --no-floor --no-progress -q --verify
rc=$?
if [ $rc -eq 1 ] && [ -f Cu.npy ] && [ "$(grep -c 'verif' err)" = 1 ] &&
    grep -q 'rank 0 of 2.*verify: rank 1 of 2: .*overflowed.*: Cu.npy is written (committed), but the check could not decide: do not use it as checked' err; then
    pass "37 --verify undecided on 2 ranks: exit 1, rank 0 says C is written but the check could not decide"
else
    fail "37 --verify undecided on 2 ranks: exit $rc (expected 1), C missing, or not rank 0's one message saying C is committed: $(head -c 600 err)"
fi
rm -f Cu.npy Cu.npy.ooc-* Au.bin Bu.bin

# 15. op(B) in k-panels split by 2 ranks of 2 devices each, stopped: one
# process on 1 device resumes it, starting over with the plan the ranks'
# journals record (lead: one block per device), byte-identical
gen KA.npy --rows 1200 --cols 256 --seed 31
gen KB.npy --rows 256 --cols 80 --seed 32
K="KA.npy KB.npy --backend host --device-mem 100K --b-chunks 4 --no-floor --no-progress"
export OOC_HOST_DEVICES=2
mpi 2 $K -o KREF.npy
rc=$?
rm -f KC.npy KC.npy.ooc-*
OOC_HOST_JITTER_US=3000
bg 2 $K -o KC.npy
OOC_HOST_JITTER_US=
i=0
while ! grep -qs '^plan .* resumable=0 ' KC.npy.ooc-journal.r1-of-2 && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.3
for f in pid.*; do kill -TERM "$(cat "$f")" 2>/dev/null; done
bg_wait
rc2=$?
OOC_HOST_DEVICES=1
if [ $rc -eq 0 ] && [ $rc2 -eq 7 ] && grep -q 'splits k into panels' err && oc multiply $K -o KC.npy --resume &&
    cmp -s KC.npy KREF.npy; then
    pass "15 k-panels on 2 ranks x 2 devices, stopped (exit 7, 'starts it over'); one process on 1 device: byte-identical"
else
    fail "15 k-panels on 2 ranks x 2 devices: exit $rc, $rc2 (expected 0, 7), or the resume on 1 device differs: $(cmp KC.npy KREF.npy 2>&1)"
fi
unset OOC_HOST_DEVICES

# 17. a job of one process whose plan keeps op(A) resident (its blocks are
# columns of C), stopped: mpirun --resume finishes it with that plan, the
# ranks splitting C's columns (it failed once, naming journals that do not
# exist; then rank 0 finished it alone)
gen RA.npy --rows 1000 --cols 19 --seed 61
gen RB.npy --rows 19 --cols 30 --seed 62
R="RA.npy RB.npy --backend host --device-mem 100K --block-rows 128 --no-floor --no-progress"
oc multiply $R -o RREF.npy
rm -f RC.npy RC.npy.ooc-*
stop_after 30000 3 RC.npy.ooc-journal multiply $R -o RC.npy
rc=$?
if [ $rc -eq 7 ] && grep -q '^plan swap=1 ' RC.npy.ooc-journal && mpi 2 $R -o RC.npy --resume &&
    cmp -s RC.npy RREF.npy && grep -q 'resumed after' out && mpi 3 $R -o RC.npy --resume && grep -q 'finished already' out
then
    pass "17 one process's op(A)-resident job, stopped: mpirun -np 2 --resume finishes it (byte-identical); -np 3: finished"
else
    fail "17 one process's op(A)-resident job, stopped (exit $rc): mpirun --resume failed or differs: $(head -c 300 err)"
fi

# 19. a wide C (n >> m): one process keeps op(A) resident, and so does the
# split job (before, every rank read all of op(B) and C differed from one
# process's in its last bits): 3 ranks take ranges of C's columns, each
# reading all of op(A) but only its columns of op(B) and C0; byte-identical
# to one process; --verify checks each rank's columns; a rank killed
# part-way, resumed with 2 ranks: byte-identical
gen WA.npy --rows 97 --cols 83 --layout col --seed 71
gen WB.npy --rows 83 --cols 1201 --seed 72
gen WC0.npy --rows 97 --cols 1201 --seed 73
W="WA.npy WB.npy --alpha 0.75 --c-in WC0.npy --beta -0.5"
oc multiply $W -o WREF.npy $S --json
rc=$?
one=$($numpy -c 'import json; o = json.load(open("out")); assert o["plan"]["a_resident"]; print(o["bytes_read"])')
if [ $rc -eq 0 ] && [ -n "$one" ] && mpi 3 $W -o WC.npy $S --verify --json && cmp -s WC.npy WREF.npy &&
    $numpy -c '
import json, sys
one = int(sys.argv[1])  # what one process read: all of op(B) (twice: 2 panels), op(A), C0
o = json.load(open("out"))
assert o["ranks_split"] == "columns" and o["plan"]["a_resident"], o
r = o["ranks"]
assert [x["col_begin"] for x in r][0] == 0 and r[-1]["col_end"] == 1201, r
assert all(r[i]["col_end"] == r[i + 1]["col_begin"] for i in range(2)), r
assert all(x["blocks"] > 0 for x in r), r
# a third of op(B) and C0 each (a row split: all of op(B), over 0.7 of one)
assert all(x["bytes_read"] < 0.55 * one for x in r), (one, [x["bytes_read"] for x in r])
assert o["check"]["passed"], o["check"]
' "$one" && mpi 3 $W -o WC2.npy $S --verify && grep -q "ranks: 3 (mpirun/srun), each its own column blocks of C" out &&
    grep -q "columns \[0, " out && grep -q "^verify: .*: PASS$" out; then
    pass "19 a wide C: one process keeps op(A) resident, 3 ranks split its columns, byte-identical, each reads its part of op(B), verified"
else
    fail "19 a wide C split by columns: exit $rc, differs from one process's, or the ranks' report: $(head -c 400 err) $(head -c 400 out)"
fi
rank1_killed_part_way $W
rc=$?
had=$(recorded)
if [ $rc -ne 0 ] && [ ! -e C.npy ] && [ "$had" -gt 0 ] && mpi 2 $W -o C.npy $S --resume && cmp -s C.npy WREF.npy &&
    grep -q "resumed after $had of " out && grep -Eq "column blocks|rectangle" out; then
    pass "19 a wide C: rank 1 of 3 killed ($had blocks kept), resumed with 2 ranks by columns: byte-identical"
else
    fail "19 a wide C: rank 1 killed (mpirun exit $rc, $had blocks kept): the resume with 2 ranks failed or differs: $(head -c 300 err)"
fi

# 20. fewer blocks than ranks: the plan of 17's job keeps op(A) resident
# and C has 30 columns: one block, in 11 panels (of C's rows). 3 ranks
# split it as a grid, each the block on its panels (rank 0 was left idle
# once, then only rank 0 computed): byte-identical, the summary's plan the
# job's
if mpi 3 $R -o RC3.npy --json && cmp -s RC3.npy RREF.npy && $numpy -c '
import json
o = json.load(open("out"))
p, r = o["plan"], o["ranks"]
assert o["ranks_split"] == "grid" and p["a_resident"] and p["block_rows"] == 30 and p["panels"] == 11, p
assert [x["blocks"] for x in r] == [1, 1, 1] and all(x["col_end"] == 30 for x in r), r
assert r[0]["row_begin"] == 0 and r[2]["row_end"] == 1000 and all(r[i]["row_end"] == r[i + 1]["row_begin"] for i in range(2)), r
'; then
    pass "20 one block, 3 ranks: a grid, each rank the block on its panels, the summary says its plan (op(A) resident), byte-identical"
else
    fail "20 one block, 3 ranks: exit $?, differs from one process's, or not a grid: $(head -c 600 out)"
fi
# and 7 ranks: 7 groups of the 11 panels, every rank computing (6 groups,
# whose busiest rank reads as much, left a rank without a block)
if mpi 7 $R -o RC7.npy --json && cmp -s RC7.npy RREF.npy && $numpy -c '
import json
o = json.load(open("out"))
r = o["ranks"]
assert o["ranks_split"] == "grid" and [x["blocks"] for x in r] == [1] * 7, r
'; then
    pass "20 one block, 7 ranks: a grid of 7 groups of panels, no rank idle, byte-identical"
else
    fail "20 one block, 7 ranks: exit $?, differs from one process's, or a rank idle: $(head -c 900 out)"
fi

# 21. a grid: 4 ranks on the job of 2 (op(B) in 2 panels) split C into 2 x
# 2 rectangles of row blocks and panels of op(B) (the busiest rank reads
# less so than with 4 row ranges, each reading all of op(B)): each reads its
# rows of op(A) and its half of op(B) only; byte-identical to one process;
# --verify and --json ("grid", rows and columns per rank); rank 1 killed
# part-way, resumed with 3 ranks (by rows), and 3 ranks by rows killed,
# resumed by 4 (a grid): byte-identical
sizes="$(stat -c %s A.npy) $(stat -c %s B.npy) $(stat -c %s C0.npy)"
if mpi 4 $P -o GC.npy $S --verify --json && cmp -s GC.npy ref.npy && $numpy -c '
import json, sys
a, b, c0 = (int(x) for x in sys.argv[1:4])
o = json.load(open("out"))
r = o["ranks"]
# each rank checks its rectangle: every row of C twice (once per column group)
assert o["ranks_split"] == "grid" and o["check"]["passed"] and o["check"]["rows"] == 2 * 1001, o
rects = sorted((x["row_begin"], x["row_end"], x["col_begin"], x["col_end"]) for x in r)
assert rects == [(0, 512, 0, 49), (0, 512, 49, 97), (512, 1001, 0, 49), (512, 1001, 49, 97)], rects
# by rows, 4 ranks read op(A) twice (2 panels), op(B) 4 times and C0 once
assert sum(x["bytes_read"] for x in r) < 2 * a + 3 * b + c0, ([x["bytes_read"] for x in r], a, b, c0)
' $sizes && mpi 4 $P -o GC2.npy $S && grep -q "each its own rectangle" out &&
    grep -q "rank 3 on .*rows \[512, 1001) x columns \[49, 97)" out; then
    pass "21 a grid: 4 ranks split C into 2 x 2 rectangles (row blocks x panels of op(B)), byte-identical, verified"
else
    fail "21 a grid of 4 ranks: exit $?, differs from one process's, or the ranks' report: $(head -c 400 err) $(head -c 600 out)"
fi
KILL_NP=4 rank1_killed_part_way $P
rc=$?
had=$(recorded)
if [ $rc -ne 0 ] && [ ! -e C.npy ] && [ "$had" -gt 0 ] && grep -q " panels=0-1/2" C.npy.ooc-journal.r1-of-4 &&
    mpi 3 $P -o C.npy $S --resume && cmp -s C.npy ref.npy && grep -q "resumed after $had of 34 blocks" out &&
    grep -q "each its own row blocks" out; then
    pass "21 a grid: rank 1 of 4 killed ($had blocks kept), resumed with 3 ranks by rows: byte-identical"
else
    fail "21 a grid: rank 1 of 4 killed (mpirun exit $rc, $had blocks kept): the resume by rows failed or differs: $(head -c 300 err)"
fi
rank1_killed_part_way $P
rc=$?
had=$(recorded)
if [ $rc -ne 0 ] && [ ! -e C.npy ] && [ "$had" -gt 0 ] && mpi 4 $P -o C.npy $S --resume && cmp -s C.npy ref.npy &&
    grep -q "resumed after $had of 34 blocks" out && grep -q "each its own rectangle" out; then
    pass "21 3 ranks by rows: rank 1 killed ($had blocks kept), resumed by 4 as a grid: byte-identical"
else
    fail "21 rows resumed as a grid: mpirun exit $rc, $had blocks kept: the resume failed or differs: $(head -c 300 err)"
fi

# rank0_killed_after_others: C = the job of 3 ranks, afresh, rank 0 slowed
# (30 s a block: none of its blocks ends before the kill, however loaded)
# and killed (-9: a stop signal would let its block in flight finish) once
# ranks 1 and 2 have recorded all their rows; returns mpirun's status
rank0_killed_after_others() {
    local i=0 rc
    rm -f C.npy C.npy.ooc-*
    RANK_ENV=0:OOC_HOST_JITTER_US=30000000
    bg 3 $P -o C.npy $S
    RANK_ENV=
    until grep -q '^complete' C.npy.ooc-journal.r1-of-3 2>/dev/null && grep -q '^complete' C.npy.ooc-journal.r2-of-3 2>/dev/null ||
        [ $i -ge 400 ]; do sleep 0.05; i=$((i + 1)); done
    kill -9 "$(cat pid.0)" 2>/dev/null
    bg_wait
}

# 18. ranks that would compute blocks to other last bits (here OpenBLAS's
# kernels for another CPU on rank 1, as on another kind of node; GPUs of
# another kind likewise) are refused before anything is made, rank 0 naming
# both: C would depend on the rank that computed each block
"$OOCGEMM" info --no-measure --backend host >out 2>err
id0=$(sed -n 's/^blocks computed by: //p' out)
OPENBLAS_CORETYPE=Prescott "$OOCGEMM" info --no-measure --backend host >out 2>err
id1=$(sed -n 's/^blocks computed by: //p' out)
if [ -z "$id0" ] || [ "$id0" = "$id1" ]; then
    echo "note: OPENBLAS_CORETYPE changes nothing here ($id0): case 18 not tried"
else
    rm -f C.npy C.npy.ooc-*
    RANK_ENV=1:OPENBLAS_CORETYPE=Prescott
    mpi 2 $P -o C.npy $S
    rc=$?
    RANK_ENV=
    if [ $rc -eq 3 ] && grep -q "rank 1 would compute its blocks by $id1, rank 0 by $id0" err &&
        [ -z "$(ls C.npy* 2>/dev/null)" ] && mpi 2 $P -o C.npy $S && cmp -s C.npy ref.npy; then
        pass "18 a rank computing by other kernels ($id1): refused (exit 3) naming both, nothing written; alike: byte-identical"
    else
        fail "18 a rank computing by other kernels: exit $rc (expected 3), files left, or not named: $(head -c 300 err)"
    fi
    # ... unless --allow-mixed: each rank computes its blocks, rank 0 says
    # they mix, and C checks against OpenBLAS
    rm -f C.npy C.npy.ooc-*
    RANK_ENV=1:OPENBLAS_CORETYPE=Prescott
    mpi 2 $P -o C.npy $S --allow-mixed --verify
    rc=$?
    RANK_ENV=
    if [ $rc -eq 0 ] && grep -q "rank 1 computed its blocks by $id1, rank 0 by $id0 (--allow-mixed)" err &&
        grep -q "^verify: .*: PASS$" out; then
        pass "18 --allow-mixed: ranks computing by other kernels share the job, said so; C checks"
    else
        fail "18 --allow-mixed: exit $rc (expected 0), not said, or the check failed: $(head -c 300 err)"
    fi
    # ... but a job with nothing left to compute is not refused: finished
    # (its journal complete), or every block recorded by the ranks' journals
    # but not committed (rank 0 failed to record the whole job); one
    # process with other kernels commits it, computing nothing
    rm -f C.npy C.npy.ooc-*
    mpi 2 $P -o C.npy $S --resume
    RANK_ENV=1:OPENBLAS_CORETYPE=Prescott
    mpi 2 $P -o C.npy $S --resume
    rc=$?
    RANK_ENV=
    grep -q "finished already" out && cmp -s C.npy ref.npy && [ $rc -eq 0 ] && fin=yes || fin="no (exit $rc)"
    rm -f C.npy C.npy.ooc-*
    if mpi 2 $P -o C.npy $S --json; then
        w0=$(rank0_writes)
    else
        w0=0
    fi
    rm -f C.npy C.npy.ooc-*
    RANK_ENV=0:OOC_FAULT=journal:$((w0 + 3))
    mpi 2 $P -o C.npy $S --resume
    rc=$?
    RANK_ENV=
    OPENBLAS_CORETYPE=Prescott timeout 60 "$OOCGEMM" multiply $P -o C.npy $S --resume >out 2>err
    rc2=$?
    if [ "$fin" = yes ] && [ "$w0" -gt 2 ] && [ $rc -ne 0 ] && [ $rc2 -eq 0 ] && cmp -s C.npy ref.npy &&
        grep -q "resumed after 34 of 34 blocks" out; then
        pass "18 nothing left to compute: finished, or all blocks recorded but not committed: other kernels commit it"
    else
        fail "18 nothing left to compute: finished: $fin; uncommitted: exit $rc then $rc2 (expected non-0, 0): $(head -c 300 err)"
    fi
    # ... and the whole job counts, not each rank's range: killed when ranks
    # 1 and 2 had finished their rows and rank 0 had none, the same split
    # resumed with other kernels (where each rank reads its own journal, and
    # only rank 0, with none, computes) is refused: C would mix them
    rank0_killed_after_others
    rc=$?
    r0=$(grep -c '^done' C.npy.ooc-journal.r0-of-3 2>/dev/null)
    OPENBLAS_CORETYPE=Prescott mpi 3 $P -o C.npy $S --resume
    rc2=$?
    if [ $rc -ne 0 ] && [ "${r0:-0}" = 0 ] && [ $rc2 -eq 6 ] && grep -q "computed by $id0" err && [ -f C.npy.ooc-tmp ] &&
        [ ! -e C.npy ] && mpi 3 $P -o C.npy $S --resume && cmp -s C.npy ref.npy; then
        pass "18 the same split resumed by other kernels, only rank 0 (with no block) computing: refused (exit 6); as started: byte-identical"
    else
        fail "18 the same split resumed by other kernels: exit $rc then $rc2 (expected non-0, 6; rank 0 had ${r0:-?} blocks): $(head -c 300 err)"
    fi
    # ... and with --allow-mixed that resume keeps the blocks of ranks 1 and
    # 2, computes rank 0's by the other kernels, says so, and C checks; the
    # whole job's journal is marked mixed, as one process's would be (it was
    # not: rank 0 recorded every block as its own kernels')
    rank0_killed_after_others
    OPENBLAS_CORETYPE=Prescott mpi 3 $P -o C.npy $S --resume --allow-mixed --verify
    rc=$?
    if [ $rc -eq 0 ] && grep -q "blocks of C kept from the journal were computed by $id0, the rest by $id1" err &&
        grep -q "^verify: .*: PASS$" out && [ ! -e C.npy.ooc-tmp ] && grep -q '^mixed ' C.npy.ooc-journal; then
        pass "18 --allow-mixed: that resume keeps the others' blocks, computes the rest by other kernels, says so; C checks; the journal says mixed"
    else
        fail "18 --allow-mixed resume of a split job: exit $rc (expected 0), not said, the check failed, or the journal not marked mixed: $(head -c 300 err)"
    fi
    # ... as when the ranks themselves compute by other kernels
    rm -f C.npy C.npy.ooc-*
    RANK_ENV=1:OPENBLAS_CORETYPE=Prescott
    mpi 2 $P -o C.npy $S --allow-mixed --resume
    rc=$?
    RANK_ENV=
    if [ $rc -eq 0 ] && grep -q '^mixed ' C.npy.ooc-journal && grep -q '^complete ' C.npy.ooc-journal; then
        pass "18 --allow-mixed --resume, ranks computing by other kernels: the finished job's journal says mixed"
    else
        fail "18 --allow-mixed --resume, ranks computing by other kernels: exit $rc (expected 0) or the journal not marked mixed: $(head -c 300 err)"
    fi
    # ... and when rank 1, of other kernels, recorded its whole range before
    # rank 0 was killed: resumed as started, rank 1 computes nothing, yet
    # its blocks sit beside rank 0's: said, and the journal marked mixed
    # (was: neither; each rank saw only its own range)
    rm -f C.npy C.npy.ooc-* pid.*
    RANK_ENV=0:OOC_HOST_JITTER_US=30000000
    timeout 60 mpirun --oversubscribe -x OOC_HOST_JITTER_US -x RANK_ENV -x B_FOR -np 1 ./rank.sh $P -o C.npy $S --resume \
        --allow-mixed : -np 1 env OPENBLAS_CORETYPE=Prescott ./rank.sh $P -o C.npy $S --resume --allow-mixed >out 2>err &
    bgpid=$!
    i=0
    until grep -q '^complete' C.npy.ooc-journal.r1-of-2 2>/dev/null || [ $i -ge 400 ]; do sleep 0.05; i=$((i + 1)); done
    kill -9 "$(cat pid.0)" 2>/dev/null
    bg_wait
    RANK_ENV=
    timeout 60 mpirun --oversubscribe -np 1 ./rank.sh $P -o C.npy $S --resume --allow-mixed : \
        -np 1 env OPENBLAS_CORETYPE=Prescott ./rank.sh $P -o C.npy $S --resume --allow-mixed >out 2>err
    rc=$?
    if [ $i -lt 400 ] && [ $rc -eq 0 ] && grep -q "blocks of C kept from the journal were computed by $id1, the rest by $id0" err &&
        grep -q '^mixed ' C.npy.ooc-journal; then
        pass "18 --allow-mixed: a rank of other kernels whose range was all recorded, computing nothing: said, the journal says mixed"
    else
        fail "18 --allow-mixed, a rank of other kernels whose range was all recorded: waited $i, exit $rc (expected 0), not said or not marked: $(head -c 300 err)"
    fi
    # ... and when only ranks 1 and 2 have the other kernels, their rows all
    # recorded (journals complete), rank 0 computing the rest as the job
    # started: --allow-mixed lets the ranks differ, but nothing mixes. That
    # resume, stopped (rank 0 killed), leaves no journal damaged (nothing is
    # written after a journal's 'complete'); resumed again: no note, C
    # byte-identical
    rank0_killed_after_others
    RANK_ENV=0:OOC_HOST_JITTER_US=30000000
    rm -f pid.*
    timeout 60 mpirun --oversubscribe -x OOC_HOST_JITTER_US -x RANK_ENV -x B_FOR -np 1 ./rank.sh $P -o C.npy $S --resume \
        --allow-mixed : -np 2 env OPENBLAS_CORETYPE=Prescott ./rank.sh $P -o C.npy $S --resume --allow-mixed >out 2>err &
    bgpid=$!
    i=0
    while [ "$(ls pid.* 2>/dev/null | wc -l)" -lt 3 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    sleep 3
    kill -9 "$(cat pid.0)" 2>/dev/null
    bg_wait
    RANK_ENV=
    damaged=$(awk 'FNR == 1 { c = 0 } c { n++ } /^complete/ { c = 1 } END { print n + 0 }' C.npy.ooc-journal.r1-of-3 \
        C.npy.ooc-journal.r2-of-3 2>/dev/null)
    timeout 60 mpirun --oversubscribe -np 1 ./rank.sh $P -o C.npy $S --resume --allow-mixed : \
        -np 2 env OPENBLAS_CORETYPE=Prescott ./rank.sh $P -o C.npy $S --resume --allow-mixed >out 2>err
    rc=$?
    if [ "$damaged" -eq 0 ] && [ $rc -eq 0 ] && ! grep -q 'note:.*allow-mixed' err && cmp -s C.npy ref.npy &&
        ! grep -q '^mixed ' C.npy.ooc-journal; then
        pass "18 --allow-mixed, ranks of other kernels computing nothing: stopped, no journal damaged; resumed: no note, byte-identical"
    else
        fail "18 --allow-mixed, ranks of other kernels computing nothing: records after complete $damaged, exit $rc (expected 0), a note, or C differs: $(head -c 300 err)"
    fi
fi

# 16. the floor of a split job: each GPU's (host's) figures measured once, by
# one of its ranks, and summed, over the bytes every rank's plan moved (each
# uploads op(B)) and staged. The host backend: the CPU rate given is the
# host's, once for its 2 ranks. With a GPU (the GPU machine): the bytes in
# are A once and op(B) once per rank, out C; the files' staging gives a host
# memory term (the staging ranks' rates, measured at once: each as mpirun
# binds it); two ranks on one GPU count it once, its figures too
gen FA.npy --rows 3001 --cols 300 --seed 41
gen FB.npy --rows 300 --cols 200 --seed 42
F="FA.npy FB.npy --block-rows 512 --no-progress"
rm -f FC.npy
if mpi 2 $F -o FC.npy --backend host --rate 0.001 --json && python3 -c '
import json
o = json.loads(open("out").read())
f = o["floor"]
flops = 2.0 * 3001 * 200 * 300
assert f["kind"] == "cpu" and abs(f["rate_tflops"] - 0.001) < 1e-12, f
assert abs(f["time_s"] - flops / 1e9) <= 1e-6 * f["time_s"], f
' && rm -f FC.npy && mpi 2 $F -o FC.npy --backend host --rate 0.001 &&
    grep -q 'given, 2 ranks on 1 host: the sum over the hosts' out
then
    pass "16 the floor of 2 ranks on one host, host backend: the host's CPU rate (given) once"
else
    fail "16 the floor of 2 ranks on one host, host backend: exit $?, or not the host's rate once: $(cat out err)"
fi
if "$OOCGEMM" info 2>/dev/null | grep -q '^GPU 0: '; then
    gpus=$("$OOCGEMM" info 2>/dev/null | grep -c '^GPU [0-9]*: ')
    rm -f FC.npy FC1.npy
    oc multiply $F -o FC1.npy --devices 0 --json
    cp out one.json
    if mpi 2 $F -o FC.npy --json && python3 -c '
import json, sys
o = json.loads(open("out").read())
f = o["floor"]
one = json.loads(open("one.json").read())["floor"] # one process on GPU 0
gpus = min(2, int(sys.argv[1]))
assert f is not None and f["kind"] == "gpu", f
assert f["bytes_in"] == 8 * (3001 * 300 + 2 * 300 * 200), f
assert f["bytes_out"] == 8 * 3001 * 200, f
assert f["bytes_staged"] > 0 and f["host_s"] > 0 and f["host_gbps"] > 0 and f["host_measured"], f
assert f["gpus"] == gpus and f["bw_h2d_gbps"] > 0 and f["bw_both_gbps"] > 0 and f["rate_measured"], f
# T_host over the memory rates of the staging ranks, measured at once; one GPU:
# its figures once, as one process measures them
# (files: staged through the ring, three passes over host memory)
assert f["host_traffic_bytes"] == 3 * f["bytes_staged"], f
assert abs(f["host_s"] - f["host_traffic_bytes"] / (f["host_gbps"] * 1e9)) <= 1e-6 * f["host_s"], f
if gpus == 1:
    assert 0.8 < f["bw_h2d_gbps"] / one["bw_h2d_gbps"] < 1.25 and 0.8 < f["bw_both_gbps"] / one["bw_both_gbps"] < 1.25, (f, one)
' "$gpus" && rm -f FC.npy && mpi 2 $F -o FC.npy && grep -q 'GPUs\{0,1\} of 2 ranks at once' out &&
        grep -q '^floor: .*host memory' out; then
        pass "16 the floor of 2 ranks on the GPU: the ranks' bytes (op(B) to each), staging's host memory term, $gpus GPU(s)"
    else
        fail "16 the floor of 2 ranks on the GPU: exit $?, or its bytes, host memory term or GPUs are wrong: $(cat out err)"
    fi
fi

echo "$cases cases, $failures failed"
[ "$failures" = 0 ]
