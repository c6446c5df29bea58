#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_cli_files.sh: end-to-end tests of oocgemm's file commands (make check),
# all through the host backend:
#   - gen -> multiply -> verify round trips for s, d, c, z; .npy and raw;
#     C and Fortran order mixed between operands; transposes (and conjugate
#     transposes); alpha, beta with --c-in (also in place); budgets of 256K
#     so that A and C are larger than the host staging budget;
#   - gen is reproducible whatever the thread count;
#   - verify passes a correct C and fails (exit 1) a corrupted one;
#   - each bad input exits with its documented status and a message, and
#     leaves no output, no temporary file and no journal (a raw shape suffix
#     on a .npy file, a shape past 64 bits, an output named with a shape
#     suffix, too; a .npy file cut inside its magic, a .npz archive, bytes
#     after the data, a miswritten suffix, names too long for the tool's
#     suffixes: each said as such); empty raw operands (shapes 0xN, Nx0)
#     give NumPy's empty products;
#   - gen stopped by SIGTERM or SIGINT part-way exits 7 and leaves no
#     output and no temporary file;
#   - resume after kill -9 gives a byte-identical C; resuming after an input
#     changed is refused (exit 6: the journal records the inputs' identity,
#     so lib/files.c answers OOC_ERR_JOURNAL) and the files are kept, and a
#     run without --resume then starts over;
#   - --dtype refuses operands of another type (exit 2); --order, the old
#     spelling of --layout, means the same; verify --rows/--cols shape raw
#     operands as in multiply, --check-rows the rows recomputed; gen's
#     default threads follow the CPU affinity mask (taskset);
#   - --json prints one object; a scaling job (alpha 0) counts the bytes of
#     C0 it read and of C it wrote; an existing output the user may not
#     write is not replaced (exit 6), one it may write keeps its permissions
#     (and group); --help on every command.
# Run from the build directory; OOCGEMM overrides the tool's path.
set -u

# shellcheck source=tests/testlib.sh
. "$(dirname "$0")/testlib.sh" test_cli_files

# gen NAME ARGS...: write a matrix or fail the whole test
# ok NAME ARGS...: exit 0
ok() {
    local name=$1
    shift
    oc "$@"
    local rc=$?
    if [ "$rc" -ne 0 ]; then fail "$name: exit $rc (oocgemm $*)"; return 1; fi
    pass "$name"
}

# roundtrip NAME OUT MULTIPLY-ARGS... -- VERIFY-ARGS...: multiply --verify
# must pass, then verify must pass on the result too
roundtrip() {
    local name=$1 outfile=$2
    shift 2
    local margs=() vargs=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do margs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    vargs=("$@")
    oc multiply "${margs[@]}" -o "$outfile" --backend host --verify --no-floor --no-progress
    local rc=$?
    if [ "$rc" -ne 0 ]; then fail "$name: multiply exit $rc (oocgemm multiply ${margs[*]} -o $outfile)"; return; fi
    if ! grep -q '^verify: .*: PASS$' out; then fail "$name: no PASS line from multiply --verify"; return; fi
    if [ -e "$outfile.ooc-tmp" ] || [ -e "$outfile.ooc-journal" ]; then
        fail "$name: temporary file or journal left after success"
        return
    fi
    local line
    line=$(grep '^verify:' out | sed 's/^verify: //')
    oc verify "${vargs[@]}"
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q '^verify: .*: PASS$' out; then
        fail "$name: verify exit $rc (oocgemm verify ${vargs[*]})"
        return
    fi
    pass "$name: $line"
}

# bad NAME STATUS OUT ARGS...: exit STATUS, a message on stderr, and nothing
# left at OUT (no output, temporary file or journal)
bad() {
    local name=$1 want=$2 outfile=$3
    shift 3
    oc "$@"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then fail "$name: exit $rc, expected $want (oocgemm $*)"; return; fi
    if [ ! -s err ]; then fail "$name: nothing on stderr"; return; fi
    if [ -n "$outfile" ]; then
        for f in "$outfile" "$outfile.ooc-tmp" "$outfile.ooc-journal"; do
            if [ -e "$f" ]; then fail "$name: $f exists after the failure"; return; fi
        done
    fi
    pass "$name: exit $rc: $(head -n 1 err)"
}

# ---- inputs ----
gen A_d.npy --rows 300 --cols 200 --seed 1                 # d, C order
gen B_dF.npy --rows 200 --cols 170 --layout col --seed 2      # d, Fortran order
gen AT_sF.npy --rows 150 --cols 260 --dtype s --layout col --seed 3   # s: stored k x m
gen B_s.npy --rows 150 --cols 90 --dtype s --seed 4
gen A_c.bin --rows 210 --cols 120 --dtype c --seed 5       # c raw, C order
gen B_cF.bin --rows 130 --cols 120 --dtype c --layout col --seed 6    # c raw, F: op C -> 120 x 130
gen AH_zF.npy --rows 140 --cols 230 --dtype z --layout col --seed 7   # z: op C -> 230 x 140
gen BT_z.npy --rows 110 --cols 140 --dtype z --seed 8      # z: op T -> 140 x 110
gen C0_zF.npy --rows 230 --cols 110 --dtype z --layout col --seed 9
gen Q_d.bin --rows 160 --cols 160 --seed 10                # raw d square (C order)
gen QF_d.bin --rows 160 --cols 160 --layout col --seed 11
gen A_big.npy --rows 600 --cols 300 --seed 12              # 1.4 MB: > 256K budgets
gen B_big.npy --rows 300 --cols 200 --layout col --seed 13
gen C0_big.npy --rows 600 --cols 200 --seed 14

# ---- gen: reproducible, any thread count; same values in both orders ----
# gen's threads: by default the CPUs the process may run on (its affinity
# mask), not every CPU online
if command -v taskset >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
    taskset -c 0 "$OOCGEMM" gen T1.npy --rows 1000 --cols 1000 --json >out 2>err
    if python3 -c 'import json, sys; o = json.load(sys.stdin); assert o["threads"] == 1, o["threads"]' <out; then
        pass "gen under taskset -c 0: 1 thread"
    else
        fail "gen under taskset -c 0: not 1 thread"
    fi
else
    echo "SKIP: gen under taskset (no taskset or python3)"
fi
gen R1.npy --rows 700 --cols 500 --seed 99 --threads 1
gen R3.npy --rows 700 --cols 500 --seed 99 --threads 3
if cmp -s R1.npy R3.npy; then pass "gen: 1 and 3 threads write identical files"; else fail "gen: thread count changes the data"; fi
gen RF.npy --rows 700 --cols 500 --seed 99 --layout col --threads 2
gen RF1.npy --rows 700 --cols 500 --seed 99 --layout col --threads 1
if cmp -s RF.npy RF1.npy; then pass "gen: Fortran order reproducible"; else fail "gen: Fortran order not reproducible"; fi
gen R2.npy --rows 700 --cols 500 --seed 98
# --order, the old spelling of --layout, still means the same (C/F and row/col alike)
gen RFo.npy --rows 700 --cols 500 --seed 99 --order F
gen RCo.npy --rows 700 --cols 500 --seed 99 --layout C
if cmp -s RF.npy RFo.npy && cmp -s R1.npy RCo.npy; then
    pass "gen: --order F = --layout col, --layout C = --layout row"
else
    fail "gen: --order or --layout C/F differ from --layout col/row"
fi
if cmp -s R1.npy R2.npy; then fail "gen: seeds 98 and 99 give the same data"; else pass "gen: another seed, other data"; fi
oc gen G.bin --rows 10 --cols 7 --dtype z
if [ "$(stat -c %s G.bin)" -eq $((10 * 7 * 16)) ] && grep -q 'G.bin:10x7:z:C' out; then
    pass "gen: raw file of 10x7 z is 1120 bytes, read back as G.bin:10x7:z:C"
else
    fail "gen: raw file size or hint"
fi
oc gen G.npy --rows 10 --cols 7 --dtype c --layout col
if head -c 128 G.npy | grep -a -q "'descr': '<c8', 'fortran_order': True, 'shape': (10, 7)"; then
    pass "gen: .npy header <c8, Fortran order, (10, 7)"
else
    fail "gen: .npy header: $(head -c 128 G.npy | tr -d '\0')"
fi

# ---- round trips: multiply --verify, then verify ----
roundtrip "d npy C x F, NN" C1.npy A_d.npy B_dF.npy -- A_d.npy B_dF.npy C1.npy
roundtrip "s npy F x C, TN, alpha" C2.npy AT_sF.npy B_s.npy --transa T --alpha -1.5 \
    -- AT_sF.npy B_s.npy C2.npy --transa T --alpha -1.5
roundtrip "c raw C x F, NC (C in F order), raw out" C3.bin A_c.bin:210x120:c:C B_cF.bin:130x120:c:F --transb C \
    -- A_c.bin:210x120:c B_cF.bin:130x120:c:F C3.bin:210x130:c:F --transb C
roundtrip "z npy CT, beta, C0, 256K budgets" C4.npy AH_zF.npy BT_z.npy --transa C --transb T --c-in C0_zF.npy \
    --beta 0.5 --alpha 2 --device-mem 256K --host-mem 256K \
    -- AH_zF.npy BT_z.npy C4.npy --transa C --transb T --c-in C0_zF.npy --beta 0.5 --alpha 2
roundtrip "d raw: --rows/--cols defaults and a suffix, TT, F out" C5.bin Q_d.bin QF_d.bin:160x160:d:F --rows 160 \
    --cols 160 --transa T --transb T --out-layout col \
    -- Q_d.bin:160x160 QF_d.bin:160x160:d:F C5.bin:160x160:d:F --transa T --transb T
roundtrip "d npy 256K budgets, beta, A and C > budget" C6.npy A_big.npy B_big.npy --c-in C0_big.npy --beta -1 \
    --device-mem 256K --host-mem 256K -- A_big.npy B_big.npy C6.npy --c-in C0_big.npy --beta -1 --host-mem 256K
roundtrip "d npy to raw with --out-format, F out" C7.dat A_d.npy B_dF.npy --out-format raw --out-layout col \
    -- A_d.npy B_dF.npy C7.dat:300x170:d:F
# vectors: one row or one column has the same bytes in either order, so a
# C0 stored in C order serves a Fortran-order C, and op C takes a column
# stored in Fortran order for a C-order C (both were refused, exit 5)
gen V_A.npy --rows 1 --cols 300 --seed 51
gen V_B.npy --rows 300 --cols 77 --seed 52
gen V_C0.npy --rows 1 --cols 77 --seed 53
roundtrip "vector C0 in C order, Fortran-order C" CV1.npy V_A.npy V_B.npy --c-in V_C0.npy --beta -0.5 \
    --out-layout col -- V_A.npy V_B.npy CV1.npy --c-in V_C0.npy --beta -0.5
if head -c 128 CV1.npy | grep -a -q "'fortran_order': True, 'shape': (1, 77)"; then
    pass "vector C0 in C order: C written in Fortran order as asked"
else
    fail "vector C0 in C order: C's header: $(head -c 128 CV1.npy | tr -d '\0')"
fi
# ... and a vector chooses no order for C: B (op C, C order) chooses it,
# beside a Fortran-order vector C0 (exit 5 before: "--c-in makes the output
# F order")
gen V_A2.npy --rows 1 --cols 4 --dtype z --seed 56
gen V_B2.npy --rows 5 --cols 4 --dtype z --seed 57
gen V_C02.npy --rows 1 --cols 5 --dtype z --layout col --seed 58
roundtrip "a Fortran-order vector C0 chooses no order" CV3.npy V_A2.npy V_B2.npy --transb C --c-in V_C02.npy \
    --beta 2 -- V_A2.npy V_B2.npy CV3.npy --transb C --c-in V_C02.npy --beta 2
gen V_ZA.npy --rows 50 --cols 1 --dtype z --layout col --seed 54
gen V_ZB.npy --rows 50 --cols 30 --dtype z --seed 55
roundtrip "op C of a Fortran-order column, C-order C" CV2.npy V_ZA.npy V_ZB.npy --transa C --out-layout row \
    -- V_ZA.npy V_ZB.npy CV2.npy --transa C
roundtrip "s npy, op C on real data (= T)" C8.npy AT_sF.npy B_s.npy --transa C \
    -- AT_sF.npy B_s.npy C8.npy --transa T

# in place: C0 is the output itself (its old contents are read, the new ones renamed over)
cp C0_big.npy Cin.npy
roundtrip "d in place (--c-in = -o)" Cin.npy A_big.npy B_big.npy --c-in Cin.npy --device-mem 256K \
    -- A_big.npy B_big.npy Cin.npy --c-in C0_big.npy

# Freivalds: a verify budget too small for the exact check
oc verify A_big.npy B_big.npy C6.npy --c-in C0_big.npy --beta -1 --host-mem 256K --vectors 4 --check-rows 8
if [ $? -eq 0 ] && grep -q '^verify: Freivalds with 4 random vectors.*: PASS$' out; then
    pass "verify: Freivalds mode with 4 vectors: $(grep '^verify:' out | sed 's/^verify: //')"
else
    fail "verify: Freivalds mode"
fi
# more rows asked than the budget holds: fewer recomputed, and a note says so
oc verify A_big.npy B_big.npy C6.npy --c-in C0_big.npy --beta -1 --host-mem 256K --vectors 4 --check-rows 100000
rc=$?
got=$(sed -n 's/^verify: Freivalds with 4 random vectors + \([0-9]*\) rows* recomputed exactly.*: PASS$/\1/p' out)
if [ $rc -eq 0 ] && [ -n "$got" ] && grep -q "note: $got rows* of C recomputed exactly, not the [0-9]* asked (--check-rows)" err; then
    pass "verify: --check-rows above the budget: $got rows recomputed, and a note"
else
    fail "verify: --check-rows above the budget: no note ($(head -c 200 err))"
fi

# ---- verify of a corrupted C fails with exit 1 ----
cp C1.npy Cbad.npy
size=$(stat -c %s Cbad.npy)
printf 'XXXXXXXXXXXXXXXX' | dd of=Cbad.npy bs=1 seek=$((size / 2)) conv=notrunc status=none
oc verify A_d.npy B_dF.npy Cbad.npy
rc=$?
if [ "$rc" -eq 1 ] && grep -q ': FAIL$' out; then
    pass "verify: corrupted C (exact): exit 1, $(grep '^verify:' out | sed 's/^verify: //')"
else
    fail "verify: corrupted C: exit $rc, expected 1"
fi
cp C6.npy Cbad6.npy
size=$(stat -c %s Cbad6.npy)
printf 'XXXXXXXX' | dd of=Cbad6.npy bs=1 seek=$((size / 2 + 3)) conv=notrunc status=none
oc verify A_big.npy B_big.npy Cbad6.npy --c-in C0_big.npy --beta -1 --host-mem 256K
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'Freivalds.*: FAIL$' out; then
    pass "verify: corrupted C (Freivalds): exit 1"
else
    fail "verify: corrupted C (Freivalds): exit $rc, expected 1"
fi
oc multiply A_d.npy B_dF.npy -o Cq.npy --backend host --no-floor -q --alpha 2
oc verify A_d.npy B_dF.npy Cq.npy -q
rc=$?
if [ "$rc" -eq 1 ] && [ ! -s out ] && [ -s err ]; then pass "verify -q: wrong alpha fails, message on stderr only"; else fail "verify -q: exit $rc"; fi
# the summary names the scalars checked, as multiply's does: a check of the
# wrong alpha or beta must be visible in its output
oc verify A_d.npy B_dF.npy Cq.npy --alpha 2
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^oocgemm .*: verify Cq.npy against .*, alpha=2 beta=0$' out; then
    pass "verify: the summary names alpha and beta"
else
    fail "verify: exit $rc, or the summary does not name alpha and beta: $(head -n 1 out)"
fi
# --tf32 does nothing in double precision: verify and multiply alike say so
# in a note and go on (exit 0); both were silent
oc verify A_d.npy B_dF.npy Cq.npy --alpha 2 --tf32 -q
rc=$?
oc multiply A_d.npy B_dF.npy -o Cq2.npy --backend host --no-floor -q --alpha 2 --tf32
rc2=$?
if [ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ] && grep -q 'note: --tf32 has no effect on float64' err &&
    cmp -s Cq.npy Cq2.npy && oc verify A_d.npy B_dF.npy Cq.npy --alpha 2 --tf32 -q &&
    grep -q '^oocgemm verify: note: --tf32 has no effect on float64 operands: .*single precision' err; then
    pass "--tf32 on float64: verify and multiply say in a note that it does nothing (exit 0, C the same)"
else
    fail "--tf32 on float64: exit $rc, $rc2 (expected 0, 0), no note, or C differs"
fi

# ---- bad inputs: documented status, a message, nothing written ----
printf 'not a matrix at all, just text\n' >text.bin
cp A_d.npy trunc.npy
truncate -s 100000 trunc.npy
# hand-made headers (10 + header length + 1 is a multiple of 64)
npy_header() { # DESCR SHAPE
    local dict="{'descr': '$1', 'fortran_order': False, 'shape': $2, }"
    local len=$(( (10 + ${#dict} + 1 + 63) / 64 * 64 - 10 ))
    printf '\223NUMPY\001\000'
    printf "\\$(printf '%03o' $((len % 256)))\\$(printf '%03o' $((len / 256)))"
    printf '%s' "$dict"
    printf '%*s\n' $((len - ${#dict} - 1)) ''
}
{ npy_header '>f8' '(200, 170)'; head -c $((200 * 170 * 8)) /dev/zero; } >big_endian.npy
{ npy_header '<i4' '(200, 170)'; head -c $((200 * 170 * 4)) /dev/zero; } >int32.npy
{ npy_header '<f8' '(200, 170'; head -c $((200 * 170 * 8)) /dev/zero; } >malformed.npy
{ printf '\223NUMPY\001\000\377\377{'; head -c 100 /dev/zero; } >short_header.npy
head -c 1000 /dev/zero >short.bin

bad "nonexistent input" 4 X1.npy multiply missing.npy B_dF.npy -o X1.npy --backend host
bad "not .npy, no raw shape" 4 X2.npy multiply text.bin B_dF.npy -o X2.npy --backend host
bad "truncated .npy" 4 X3.npy multiply trunc.npy B_dF.npy -o X3.npy --backend host
bad "big-endian .npy" 4 X4.npy multiply A_d.npy big_endian.npy -o X4.npy --backend host
bad "<i4 .npy" 4 X5.npy multiply A_d.npy int32.npy -o X5.npy --backend host
bad "malformed header" 4 X6.npy multiply A_d.npy malformed.npy -o X6.npy --backend host
bad "header longer than the file" 4 X7.npy multiply short_header.npy B_dF.npy -o X7.npy --backend host
bad "raw shorter than its shape" 4 X8.npy multiply short.bin:100x100:d B_dF.npy -o X8.npy --backend host
# no type given: the message says the one assumed (float64) and its size
bad "raw shorter than its shape, no type" 4 X8.npy multiply short.bin:25x10 B_dF.npy -o X8.npy --backend host
if grep -q 'truncated: 1000 bytes, the raw shape says 25 x 10 elements of float64 (8 bytes each) are 2000' err; then
    pass "raw shorter than its shape, no type: the message names float64"
else
    fail "raw shorter than its shape, no type: the message does not name the type assumed: $(head -n 1 err)"
fi
# what a file is when it is not a .npy file or raw data, said as such (a
# hunt found them called raw data, with a hint to read them as raw)
head -c 4 A_d.npy >magic4.npy
printf 'PK\003\004 not really a zip' >arch.npz
{ cat A_d.npy; printf 'x'; } >trail.npy
bad "a .npy file cut inside its magic" 4 X3.npy multiply magic4.npy B_dF.npy -o X3.npy --backend host
if grep -q "magic4.npy: truncated header: the file has 4 bytes" err && ! grep -q "for raw data" err; then
    pass "a .npy file cut inside its magic: truncated, no raw hint"
else fail "a .npy file cut inside its magic: $(head -n 1 err)"; fi
bad "a .npz archive" 4 X3.npy multiply arch.npz B_dF.npy -o X3.npy --backend host
if grep -q "arch.npz: a .npz archive (zip), not a .npy file" err; then pass "a .npz archive is named as one"
else fail "a .npz archive: $(head -n 1 err)"; fi
bad "a .npy file with a byte after its data" 4 X3.npy multiply trail.npy B_dF.npy -o X3.npy --backend host
if grep -q "trail.npy: 1 byte after the data" err; then pass "a byte after the data: said so"
else fail "a byte after the data: $(head -n 1 err)"; fi
# a raw shape suffix miswritten is not a missing file: the file before it is named
bad "a miswritten raw shape suffix" 2 X3.npy multiply Q_d.bin:160x B_dF.npy -o X3.npy --backend host
if grep -q "'Q_d.bin:160x': no such file, and ':160x' after Q_d.bin (a file) is not a raw shape suffix" err; then
    pass "a miswritten raw shape suffix: the suffix named"
else fail "a miswritten raw shape suffix: $(head -n 1 err)"; fi
# a layout where the element type goes: 'C' took a float64 file of that size
# for complex64 (c, as the type), silently; refused, the fields named (a hunt)
bad "a raw suffix with C where the type goes" 2 X3.npy multiply Q_d.bin:160x80:C B_dF.npy -o X3.npy --backend host
if grep -q "'C' stands where the element type goes: the layout is the field after it" err; then
    pass "a raw suffix with C where the type goes: the fields named"
else fail "a raw suffix with C where the type goes: $(head -n 1 err)"; fi
bad "a raw suffix with F where the type goes" 2 X3.npy multiply Q_d.bin:160x160:F B_dF.npy -o X3.npy --backend host
if grep -q "'F' stands where the element type goes" err; then pass "a raw suffix with F where the type goes: said so"
else fail "a raw suffix with F where the type goes: $(head -n 1 err)"; fi
# (c is complex64, 8 bytes as float64)
if oc multiply Q_d.bin:160x160:c Q_d.bin:160x160:c -o X3c.npy --backend host --no-floor -q; then
    pass "a raw suffix with c as the type: complex64"
else fail "a raw suffix with c as the type: exit $?: $(head -n 1 err)"; fi
rm -f X3c.npy
# a directory before the ':' is not a file with a suffix: the missing file is said as such (exit 4)
mkdir -p dd
bad "a missing file under a directory whose name has a ':'" 4 X3.npy multiply dd:v2/A.npy B_dF.npy -o X3.npy \
    --backend host
rmdir dd
# a file whose name ends like a shape, where none has the name before it: read whole
cp A_d.npy 'odd:300x200'
oc multiply A_d.npy B_dF.npy -o X30r.npy --backend host --no-progress
oc multiply 'odd:300x200' B_dF.npy -o X30.npy --backend host --no-progress
rc=$?
if [ "$rc" -eq 0 ] && cmp -s X30.npy X30r.npy; then
    pass "a file named odd:300x200 (no file odd) is read whole"
else fail "a file named odd:300x200: exit $rc: $(head -n 1 err)"; fi
rm -f 'odd:300x200' X30.npy X30r.npy magic4.npy arch.npz trail.npy
bad "an output name ending in /" 2 "" multiply A_d.npy B_dF.npy -o X31.npy/ --backend host
# names too long once the tool's suffixes are added: said so, nothing left
long=$(printf 'n%.0s' $(seq 1 244))
bad "an output name too long for its temporary file" 6 "" multiply A_d.npy B_dF.npy -o "$long.npy" --backend host
if grep -q "temporary file .* cannot be made: its name is 256 bytes, over the 255" err && [ ! -e "$long.npy" ]; then
    pass "an output name too long for its .ooc-tmp: said so"
else fail "an output name too long for its .ooc-tmp: $(head -c 300 err)"; fi
long=$(printf 'j%.0s' $(seq 1 240))
bad "an output name too long for its journal" 6 "" multiply A_d.npy B_dF.npy -o "$long.npy" --backend host
if grep -q "create journal .*: its name is 256 bytes, over the 255 .*--journal" err &&
    [ ! -e "$long.npy" ] && [ ! -e "$long.npy.ooc-tmp" ]; then
    pass "an output name too long for its journal: said so, --journal named"
else fail "an output name too long for its journal: $(head -c 300 err)"; fi
ok "the same name with --journal elsewhere" multiply A_d.npy B_dF.npy -o "$long.npy" --journal J31 --backend host \
    --no-progress && rm -f "$long.npy" J31
bad "k mismatch" 5 X9.npy multiply A_d.npy A_d.npy -o X9.npy --backend host
bad "dtype mismatch (float32 A, float64 B)" 5 X10.npy multiply AT_sF.npy B_dF.npy -o X10.npy --backend host --transa T
bad "C0 shape mismatch" 5 X11.npy multiply A_d.npy B_dF.npy --c-in C0_big.npy -o X11.npy --backend host
bad "conj operand in the other layout than --out-layout" 5 X12.npy multiply AH_zF.npy BT_z.npy --transa C --transb T \
    --out-layout row -o X12.npy --backend host
bad "--devices 16" 2 X13.npy multiply A_d.npy B_dF.npy -o X13.npy --backend host --devices 16
bad "--beta without --c-in" 2 X14.npy multiply A_d.npy B_dF.npy -o X14.npy --beta 2
bad "bad raw dtype" 2 X15.npy multiply A_c.bin:210x120:q B_cF.bin:130x120:c:F -o X15.npy
# a raw shape suffix on a .npy file would read its header as data (a 4 x 4
# .npy is 256 bytes, as 8 x 4 raw float64 is): refused, naming the file
gen H4.npy --rows 4 --cols 4 --seed 15
gen HB.npy --rows 4 --cols 2 --seed 16
bad ".npy operand with a raw shape suffix" 4 X21.npy multiply H4.npy:8x4 HB.npy -o X21.npy --backend host
if grep -q "H4.npy is a .npy file" err && grep -q "drop the ':8x4' suffix" err; then
    pass ".npy with a raw shape suffix: the message names the file and the suffix"
else
    fail ".npy with a raw shape suffix: the message does not say H4.npy is a .npy file"
fi
bad "verify: .npy operand with a raw shape suffix" 4 "" verify H4.npy HB.npy:4x6:d H4.npy
# empty raw operands (an empty file; 0 rows or columns in the suffix) give
# NumPy's empty products: m = 0 -> C of 0 rows; k = 0 -> C = beta C0 exactly
: >E0.bin
gen K0C.npy --rows 7 --cols 5 --seed 17
if oc multiply E0.bin:0x120:c B_cF.bin:130x120:c:F --transb C -o Z0.npy --backend host --no-floor &&
    head -c 128 Z0.npy | grep -a -q "'shape': (0, 130)" && [ "$(stat -c %s Z0.npy)" = 128 ]; then
    pass "raw shape 0x120: an empty A gives C of 0 x 130"
else fail "raw shape 0x120: no C of 0 x 130 ($(head -n 1 err))"; fi
if oc multiply E0.bin:7x0:d:F E0.bin:0X5:d --c-in K0C.npy --beta 2 -o Z1.npy --backend host --no-floor --verify &&
    grep -q '^verify: .*: PASS$' out; then
    pass "raw shapes 7x0 and 0X5: k = 0 gives C = beta C0, verified"
else fail "raw shapes 7x0 and 0X5: k = 0 failed or did not verify ($(head -n 1 err))"; fi
if oc multiply K0C.npy E0.bin:5x0 --beta 0 -o Z2.bin --backend host --no-floor && [ -f Z2.bin ] && [ ! -s Z2.bin ]; then
    pass "raw shape 5x0: n = 0 gives an empty raw C"
else fail "raw shape 5x0: n = 0 gave no empty raw C ($(head -n 1 err))"; fi
bad "empty raw operand with a non-empty shape" 4 X22.npy multiply E0.bin:1x120:c B_cF.bin:130x120:c:F -o X22.npy
# --rows 0 / --cols 0 mean the same: gen writes an empty matrix, and a raw
# operand without a suffix takes that shape
if oc gen G0.npy --rows 0 --cols 5 -q && head -c 128 G0.npy | grep -a -q "'shape': (0, 5)" &&
    oc gen G0.bin --rows 3 --cols 0 -q && [ -f G0.bin ] && [ ! -s G0.bin ] &&
    oc multiply E0.bin K0C.npy --rows 0 --cols 7 -o Z3.npy --backend host --no-floor -q &&
    head -c 128 Z3.npy | grep -a -q "'shape': (0, 5)"; then
    pass "gen --rows 0, --cols 0 and multiply --rows 0: empty matrices"
else
    fail "gen --rows 0, --cols 0 or multiply --rows 0: $(head -c 300 err)"
fi
bad "multiply --rows 0 without --cols" 2 X27.npy multiply E0.bin K0C.npy --rows 0 -o X27.npy
rm -f G0.npy G0.bin Z3.npy
# an output written with a raw shape suffix is refused, not made under the whole name
bad "multiply -o with a raw shape suffix" 2 X23.bin:7x5:d:F multiply K0C.npy E0.bin:5x0 -o X23.bin:7x5:d:F
if grep -q "an output takes no raw shape suffix" err && grep -q -- "--out-layout" err; then
    pass "multiply -o with a raw shape suffix: the message says what to give instead"
else fail "multiply -o with a raw shape suffix: the message does not say what to give instead"; fi
bad "gen OUT with a raw shape suffix" 2 X24.bin:4x4 gen X24.bin:4x4 --rows 4 --cols 4
# an output named as another output's temporary file (a job on X25.npy would
# replace it when starting afresh) is refused
bad "multiply -o X25.npy.ooc-tmp" 2 X25.npy.ooc-tmp multiply K0C.npy E0.bin:5x0 -o X25.npy.ooc-tmp
bad "gen X26.ooc-tmp" 2 X26.ooc-tmp gen X26.ooc-tmp --rows 4 --cols 4
# and so is one named as another output's journal, which it would replace
# (the journal there is left as it is)
printf 'not replaced\n' >X32.npy.ooc-journal
bad "multiply -o X32.npy.ooc-journal" 2 "" multiply K0C.npy E0.bin:5x0 -o X32.npy.ooc-journal
if grep -q "resume journal of a job on X32.npy" err && [ "$(cat X32.npy.ooc-journal)" = "not replaced" ] &&
    [ ! -e X32.npy.ooc-journal.ooc-tmp ]; then
    pass "multiply -o X32.npy.ooc-journal: named as a journal, the file untouched"
else fail "multiply -o X32.npy.ooc-journal: $(head -c 300 err)"; fi
bad "gen X33.npy.ooc-journal" 2 X33.npy.ooc-journal gen X33.npy.ooc-journal --rows 4 --cols 4
bad "gen X34.npy.ooc-journal.r0-of-2 (a rank's journal)" 2 X34.npy.ooc-journal.r0-of-2 gen X34.npy.ooc-journal.r0-of-2 \
    --rows 4 --cols 4
rm -f X32.npy.ooc-journal
# an input named as the output's own temporary file is a bad command line
# that says so, before anything is opened: one a stopped run left (its
# 32-byte trailer made it "malformed", exit 4) is left as it is, and one not
# there yet is no missing input (exit 4) either
cp B_dF.npy X28.npy.ooc-tmp
printf 'oocgemm-tmp-id 0123456789abcdef\n' >>X28.npy.ooc-tmp
cp X28.npy.ooc-tmp X28.keep
oc multiply A_d.npy X28.npy.ooc-tmp -o X28.npy --backend host -q
rc=$?
if [ "$rc" -eq 2 ] && grep -q "is X28.npy.ooc-tmp, the temporary file the output is written into" err &&
    cmp -s X28.npy.ooc-tmp X28.keep && [ ! -e X28.npy ] && [ ! -e X28.npy.ooc-journal ]; then
    pass "an input that is the output's temporary file: exit 2, named, the file untouched"
else
    fail "an input that is the output's temporary file: exit $rc, expected 2 naming it, the file untouched"
fi
rm -f X28.npy.ooc-tmp X28.keep
bad "--c-in the output's temporary file, not there" 2 X29.npy multiply A_d.npy B_dF.npy --c-in ./X29.npy.ooc-tmp -o X29.npy
# a suffix written as a shape, with a bad value: what is wrong with the shape
bad "raw shape too large" 2 X22.npy multiply A_c.bin:99999999999999999999x5:c B_cF.bin:130x120:c:F -o X22.npy
if grep -q "rows .*too large" err; then pass "raw shape 99999999999999999999x5: rows too large"
else fail "raw shape 99999999999999999999x5: the message does not say rows are too large"; fi
bad "missing -o" 2 "" multiply A_d.npy B_dF.npy
bad "output directory missing" 6 nodir/X16.npy multiply A_d.npy B_dF.npy -o nodir/X16.npy --backend host
# a staging budget too small, --stage-chunk given: files never go through
# its buffers, so the refusal does not name them (it did)
bad "staging too small, files, --stage-chunk given" 3 X17.npy multiply A_d.npy B_dF.npy -o X17.npy --backend host \
    --stage-chunk 64M --host-mem 2K
if grep -q "it needs a staging budget of at least" err && ! grep -q "STAGE_CHUNK" err; then
    pass "the refusal names the staging alone, not --stage-chunk's buffers"
else fail "staging too small, files, --stage-chunk given: $(head -c 400 err)"; fi
bad "verify: missing C" 4 "" verify A_d.npy B_dF.npy missing.npy
bad "verify: C of another shape" 5 "" verify A_d.npy B_dF.npy C6.npy
bad "gen: no --rows" 2 X17.npy gen X17.npy --cols 5
bad "gen: into a missing directory" 6 nodir/X18.npy gen nodir/X18.npy --rows 5 --cols 5
# --alpha and --beta beyond single precision's range are refused, not made
# infinite (C all inf or NaN) or 0 (the product dropped) when the files are
# float32 or complex64; in double precision they are fine
bad "multiply --alpha 1e39 on float32" 2 X27.npy multiply AT_sF.npy B_s.npy --transa T -o X27.npy --backend host --alpha 1e39
if grep -q -- "--alpha 1e+39 is not representable in float32" err; then pass "multiply --alpha 1e39 on float32: says why"
else fail "multiply --alpha 1e39 on float32: the message does not say why"; fi
gen X28s.npy --rows 260 --cols 90 --dtype s --seed 9
bad "multiply --beta 1e-50 on float32" 2 X27.npy multiply AT_sF.npy B_s.npy --transa T --c-in X28s.npy --beta 1e-50 \
    -o X27.npy --backend host
bad "verify --alpha 1e39 on float32" 2 "" verify AT_sF.npy B_s.npy X28s.npy --transa T --alpha 1e39
bad "run --beta 1e40 in complex64" 2 "" run --dtype c -m 5 -n 5 -k 5 --beta 1e40 --backend host
ok "multiply --alpha 1e39 on float64" multiply A_d.npy B_dF.npy -o X29.npy --backend host --alpha 1e39 --verify \
    --no-floor --no-progress
# --dtype names the product's type: an operand of another type is refused
# (exit 2, naming both types), never read as it is or converted
bad "multiply --dtype s on float64 .npy" 2 X19.npy multiply A_d.npy B_dF.npy -o X19.npy --backend host --dtype s
if grep -q -- "--dtype float32, but A (A_d.npy) holds float64" err; then
    pass "multiply --dtype s on float64: the message names both types"
else
    fail "multiply --dtype s on float64: the message does not name float32 and float64"
fi
bad "multiply --dtype z on a raw c operand" 2 X20.npy multiply A_c.bin:210x120:c B_cF.bin:130x120 -o X20.npy \
    --backend host --transb C --dtype z
bad "verify --dtype complex64 on float64 files" 2 "" verify A_d.npy B_dF.npy C1.npy --dtype complex64
roundtrip "d npy with --dtype float64 (the files' own type)" C9.npy A_d.npy B_dF.npy --dtype float64 \
    -- A_d.npy B_dF.npy C9.npy --dtype d
# verify: --rows and --cols are the raw operands' shape, as in multiply; the
# rows of C recomputed are --check-rows, as in run and bench
bad "verify --rows alone" 2 "" verify A_d.npy B_dF.npy C1.npy --rows 8
if grep -q -- "--check-rows" err; then pass "verify --rows alone: points to --check-rows"; else fail "verify --rows: no hint"; fi
oc verify Q_d.bin QF_d.bin:160x160:d:F C5.bin:160x160:d:F --rows 160 --cols 160 --transa T --transb T --check-rows 3
if [ $? -eq 0 ] && grep -q ': PASS$' out; then
    pass "verify: raw operands shaped by --rows/--cols, --check-rows 3"
else
    fail "verify --rows/--cols --check-rows"
fi

if ls ./*.ooc-tmp ./*.ooc-journal >/dev/null 2>&1; then
    fail "leftover temporary files: $(ls ./*.ooc-tmp ./*.ooc-journal 2>/dev/null | tr '\n' ' ')"
else
    pass "no temporary file or journal left by the failures"
fi

# ---- --json ----
oc multiply A_d.npy B_dF.npy -o J.npy --backend host --json --verify --no-progress --disk-read-bw 2 --disk-write-bw 1 \
    --bw-h2d 50 --bw-d2h 50 --rate 10
rc=$?
if [ "$rc" -ne 0 ] || [ "$(wc -l <out)" -ne 1 ]; then
    fail "json: exit $rc or not one line"
elif command -v python3 >/dev/null 2>&1; then
    if python3 -c '
import json, sys
o = json.load(sys.stdin)
for key in ("command", "version", "files", "shape", "dtype", "backend", "time_s", "tflops", "bytes_read",
            "bytes_written", "host_staging_bytes", "peak_rss_bytes", "floor", "io_bound_s", "bound_over_time",
            "check", "plan", "stats", "devices", "exit_status", "error"):
    assert key in o, key
assert isinstance(o["devices"], list)
assert o["command"] == "multiply" and o["exit_status"] == 0 and o["backend"] == "host"
assert o["shape"] == {"m": 300, "n": 170, "k": 200}, o["shape"]
assert o["files"]["a"] == {"path": "A_d.npy", "format": "npy", "rows": 300, "cols": 200, "dtype": "float64",
                           "layout": "row"}, o["files"]["a"]
assert o["check"]["passed"] is True and o["io_bound_s"] > 0 and o["floor"]["time_s"] > 0
assert o["bytes_read"] > 0 and o["bytes_written"] >= 300 * 170 * 8
' <out 2>err; then
        pass "json: one object with every field"
    else
        fail "json: does not parse or misses a field"
    fi
else
    pass "json: one line (no python3 to parse it)"
fi
oc multiply missing.npy B_dF.npy -o J2.npy --backend host --json
rc=$?
if [ "$rc" -eq 4 ] && grep -q '"exit_status":4' out && grep -q '"error":' out; then
    pass "json: a failure is an object with error and exit_status 4"
else
    fail "json: failure object (exit $rc)"
fi

# ---- a scaling job (alpha 0: C = beta C0; k 0 too) reads C0 and writes C,
# 600 x 200 doubles each: the summary and --json count those bytes (they said
# 0 B read and 0 B written) ----
oc multiply A_big.npy B_big.npy --alpha 0 --c-in C0_big.npy --beta 2 -o SC.npy --backend host --json --no-progress
rc1=$?
sj=$(grep -o '"bytes_read":[0-9]*,"bytes_written":[0-9]*' out)
oc multiply A_big.npy B_big.npy --alpha 0 -o SZ.npy --backend host --no-floor --no-progress
rc2=$?
if [ $rc1 -eq 0 ] && [ "$sj" = '"bytes_read":960000,"bytes_written":960000' ] && [ $rc2 -eq 0 ] &&
    grep -q '^disk: read 0 B .*written 938 KiB' out; then
    pass "scaling job (alpha 0): C0's bytes read and C's written are counted"
else
    fail "scaling job (alpha 0): exit $rc1 $rc2, json '$sj', summary '$(grep '^disk:' out)' (expected 960000 each)"
fi
rm -f SC.npy SZ.npy

# ---- quiet, and plain progress lines when stderr is not a terminal ----
oc multiply A_d.npy B_dF.npy -o Q.npy --backend host -q
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s out ] && [ ! -s err ]; then pass "quiet: no output"; else fail "quiet: exit $rc or output"; fi
oc multiply A_big.npy B_big.npy -o P.npy --backend host --device-mem 256K --no-floor
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^oocgemm: 100% (' err && ! grep -q $'\r' err; then
    pass "progress: plain lines on a pipe ($(wc -l <err) lines)"
else
    fail "progress: exit $rc or no plain lines"
fi

# ---- gen stopped by a signal: exit 7, no output and no temporary file ----
# 1 GB on one thread: the signal comes as soon as the temporary file is there
for sig in TERM INT; do
    "$OOCGEMM" gen GS.npy --rows 16000 --cols 8000 --threads 1 >out 2>err &
    bgpid=$!
    for _ in $(seq 1 200); do # until the output is created (10 s at most)
        if [ -e GS.npy.ooc-tmp ]; then break; fi
        sleep 0.05
    done
    kill -s "$sig" "$bgpid" 2>/dev/null
    wait "$bgpid"
    rc=$?
    bgpid=
    if [ "$rc" -ne 7 ]; then
        fail "gen: SIG$sig: exit $rc, expected 7"
    elif [ -e GS.npy ] || [ -e GS.npy.ooc-tmp ]; then
        fail "gen: SIG$sig: $(ls GS.npy* | tr '\n' ' ')left behind"
    elif ! grep -q "interrupted by SIG$sig" err; then
        fail "gen: SIG$sig: the message does not say so"
    else
        pass "gen: SIG$sig: exit 7, nothing left: $(head -n 1 err)"
    fi
    rm -f GS.npy GS.npy.ooc-tmp
done

# ---- resume after kill -9 ----
gen RA.npy --rows 2000 --cols 300 --seed 21
gen RB.npy --rows 300 --cols 200 --layout col --seed 22
ok "resume: reference run" multiply RA.npy RB.npy -o Rref.npy --backend host --device-mem 256K --no-floor -q
OOC_HOST_JITTER_US=2000 "$OOCGEMM" multiply RA.npy RB.npy -o RC.npy --backend host --device-mem 256K --no-floor -q \
    >out 2>err &
bgpid=$!
for _ in $(seq 1 200); do # until a block is recorded (10 s at most)
    if [ -f RC.npy.ooc-journal ] && grep -q '^done ' RC.npy.ooc-journal; then break; fi
    sleep 0.05
done
kill -9 "$bgpid" 2>/dev/null
wait "$bgpid" 2>/dev/null
bgpid=
blocks=$(grep -c '^done ' RC.npy.ooc-journal 2>/dev/null)
if [ -e RC.npy ]; then
    fail "resume: the killed run left the target RC.npy (it finished before the kill?)"
elif [ ! -f RC.npy.ooc-tmp ] || [ ! -f RC.npy.ooc-journal ]; then
    fail "resume: no temporary file or journal after kill -9"
else
    pass "resume: killed after ${blocks:-0} recorded blocks: RC.npy.ooc-tmp and the journal are there, RC.npy is not"
    # (--a-pieces 2: the journal's plan, of whole blocks, is kept, and a note says so)
    oc multiply RA.npy RB.npy -o RC.npy --backend host --device-mem 256K --resume --a-pieces 2
    rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "resume: exit $rc"
    elif ! grep -q 'note: --resume: the job kept the plan its journal records (blocks of [0-9]* rows, A in 1 k-piece): --a-pieces 2 not used' err; then
        fail "resume: no note that --a-pieces 2 was not used: $(cat err)"
    elif ! grep -q '^floor: n/a (a resumed run: [0-9]* of [0-9]* blocks were done before' out; then
        fail "resume: a floor of the whole job against the time of the rest: $(grep '^floor' out)"
    elif [ -e RC.npy.ooc-tmp ]; then
        fail "resume: temporary file left"
    elif ! grep -q '^complete ' RC.npy.ooc-journal 2>/dev/null; then
        fail "resume: the journal of a --resume run is not kept marked complete"
    elif ! cmp -s RC.npy Rref.npy; then
        fail "resume: RC.npy differs from the uninterrupted run"
    else
        pass "resume: byte-identical to the uninterrupted run ($(grep -o 'resumed after [0-9]* of [0-9]* blocks' out))"
    fi
fi

# a single-precision job resumed with --tf32 is another job (TF32's bytes
# are not the strict job's): refused (exit 6), files kept; then resumed
# strict: byte-identical
gen FA.npy --rows 3000 --cols 200 --dtype s --seed 71
gen FB.npy --rows 200 --cols 100 --dtype s --seed 72
fargs="FA.npy FB.npy --backend host --block-rows 64 --no-floor -q"
oc multiply $fargs -o FREF.npy
stop_after 20000 2 FC.npy.ooc-journal multiply $fargs -o FC.npy
rc=$?
oc multiply $fargs -o FC.npy --resume --tf32
rc2=$?
if [ "$rc" -eq 7 ] && [ "$rc2" -eq 6 ] && grep -q 'math mode' err && [ -f FC.npy.ooc-tmp ] && [ ! -e FC.npy ] &&
    oc multiply $fargs -o FC.npy --resume && cmp -s FC.npy FREF.npy; then
    pass "resume: a float32 job resumed with --tf32 refused (exit 6, files kept); resumed strict: byte-identical"
else
    fail "resume: a float32 job resumed with --tf32: exit $rc, $rc2 (expected 7, 6), or the strict resume differs"
fi

# --resume with half of what it continues from says so before the work,
# which then starts from the first block: the temporary file without its
# journal (the stopped run was given --journal, the resume not), and the
# journal without the temporary file (removed)
# resumed_with_note OUT NOTE WHAT: after a run of OUT stopped ($rc), its
# --resume must say NOTE and give FREF.npy's bytes
resumed_with_note() {
    oc multiply $fargs -o "$1" --resume
    if [ "$rc" -eq 7 ] && grep -q "$2" err && cmp -s "$1" FREF.npy; then
        pass "resume: $3: a note, then the whole job"
    else
        fail "resume: $3: exit $rc (expected 7), no note or C differs: $(head -c 300 err)"
    fi
}
stop_after 20000 2 NJ.txt multiply $fargs -o NC.npy --journal NJ.txt
rc=$?
resumed_with_note NC.npy "note: --resume: NC.npy.ooc-tmp is there but no journal at NC.npy.ooc-journal" \
    "the temporary file without its journal (another --journal)"
stop_after 20000 2 ND.npy.ooc-journal multiply $fargs -o ND.npy
rc=$?
rm -f ND.npy.ooc-tmp
resumed_with_note ND.npy "note: --resume: the journal ND.npy.ooc-journal is there but not ND.npy.ooc-tmp" \
    "the journal without its temporary file"
oc multiply $fargs -o NE.npy --resume
if ! grep -q "note: --resume" err && cmp -s NE.npy FREF.npy; then
    pass "resume: nothing there at all: no note (a requeued job's first run)"
else
    fail "resume: nothing there at all: a note, or C differs: $(head -c 300 err)"
fi
# the temporary file and a journal both there, but the journal's blocks are
# of an earlier file (a resume without --journal started it over, and was
# stopped): a note that the job was computed from its first block
stop_after 20000 2 NG.txt multiply $fargs -o NG.npy --journal NG.txt
rc=$?
stop_after 20000 2 NG.npy.ooc-journal multiply $fargs -o NG.npy --resume
rc2=$?
oc multiply $fargs -o NG.npy --resume --journal NG.txt
if [ "$rc" -eq 7 ] && [ "$rc2" -eq 7 ] &&
    grep -q "note: --resume: NG.npy.ooc-tmp is not the file whose [0-9]* blocks the journal NG.txt records" err &&
    cmp -s NG.npy FREF.npy; then
    pass "resume: a journal of an earlier temporary file: a note, then the whole job"
else
    fail "resume: a journal of an earlier temporary file: exit $rc, $rc2 (expected 7, 7), no note or C differs: $(head -c 300 err)"
fi
# a job finished by --resume keeps its journal, marked complete: resumed
# again after C is removed it is computed again, with no note (the journal
# vouches for a committed C, not for blocks of a temporary file)
oc multiply $fargs -o NH.npy --resume && rm -f NH.npy && oc multiply $fargs -o NH.npy --resume
if ! grep -q "note: --resume" err && cmp -s NH.npy FREF.npy; then
    pass "resume: again after the finished C was removed: computed again, no note"
else
    fail "resume: again after the finished C was removed: a note, or C differs: $(head -c 300 err)"
fi
rm -f NC.npy* ND.npy* NE.npy* NG.npy* NH.npy* NJ.txt NG.txt

# left_complete NAME: the job (fargs) run with --resume into NAME.npy, whose
# path becomes a directory while it runs: it finishes, its journal complete,
# but cannot commit (exit 6, returned); the directory is left for the caller
left_complete() {
    OOC_HOST_JITTER_US=20000 "$OOCGEMM" multiply $fargs -o "$1.npy" --resume >out 2>err &
    bgpid=$!
    wait_done "$1.npy.ooc-journal" 1
    mkdir "$1.npy" && touch "$1.npy/x"
    wait "$bgpid"
    local rc=$?
    bgpid=
    return $rc
}

# a job resumed where OpenBLAS would round otherwise computes its blocks to
# other last bits: other kernels (another node's CPU: OPENBLAS_CORETYPE
# here; needs an OpenBLAS that picks them at run time, DYNAMIC_ARCH) or
# another number of threads (another node's cores: OPENBLAS_NUM_THREADS).
# Refused (exit 6, naming both), files kept; resumed as it started:
# byte-identical
oc info --no-measure --backend host
id1=$(sed -n 's/^blocks computed by: //p' out)
case "$id1" in host/openblas-*/*-thread*) ;; *) fail "info: 'blocks computed by: $id1', expected host/openblas-.../N-threads" ;; esac
T=1
case "$id1" in */1-thread) T=2 ;; esac
for other in OPENBLAS_CORETYPE=Prescott OPENBLAS_NUM_THREADS=$T; do
    env "$other" "$OOCGEMM" info --no-measure --backend host >out 2>err
    id2=$(sed -n 's/^blocks computed by: //p' out)
    if [ "$id1" = "$id2" ]; then
        echo "note: $other changes nothing here ($id1): that resume is not tried"
        continue
    fi
    rm -f FD.npy FD.npy.ooc-*
    stop_after 20000 2 FD.npy.ooc-journal multiply $fargs -o FD.npy
    rc=$?
    env "$other" timeout 60 "$OOCGEMM" multiply $fargs -o FD.npy --resume >out 2>err
    rc2=$?
    if [ "$rc" -eq 7 ] && [ "$rc2" -eq 6 ] && grep -q "computed by $id1, this run would compute the rest by $id2" err &&
        [ -f FD.npy.ooc-tmp ] && [ ! -e FD.npy ] && grep -q " by=$id1\$" FD.npy.ooc-journal &&
        oc multiply $fargs -o FD.npy --resume && cmp -s FD.npy FREF.npy; then
        pass "resume: with $other ($id2) refused (exit 6, files kept); as it started ($id1): byte-identical"
    else
        fail "resume: with $other: exit $rc, $rc2 (expected 7, 6), or the resume differs: $(head -c 300 err)"
    fi
done

# a journal an earlier build wrote: its id ended in the version alone (before
# the summation scheme was named, +sum2: float64 tiles aligned and split,
# their blocks summed otherwise). Refused as another computer's (exit 6,
# files kept); the journal given this build's id again (its checksums made
# as lib/journal.c makes them), the resume finishes byte-identical
journal_set_by() {
    /usr/bin/env python3 - "$1" "$2" <<'PY'
import sys
M = (1 << 64) - 1
def h(seed, data):
    x = 0xcbf29ce484222325 ^ seed
    for b in data:
        x = ((x ^ b) * 0x100000001b3) & M
    x ^= x >> 30
    x = (x * 0xbf58476d1ce4e5b9) & M
    x ^= x >> 27
    x = (x * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)
path, by = sys.argv[1], sys.argv[2].encode()
lines = open(path, "rb").read().split(b"\n")
lines[2] = lines[2][:lines[2].index(b" by=")] + b" by=" + by
d = h(0, b"\n".join(lines[:3]) + b"\n")
lines[3] = b"head %016x" % d
for j in range(4, len(lines)):
    words = lines[j].split(b" ")
    if words[0] in (b"done", b"mixed", b"complete"):
        text = b" ".join(words[:-1])
        lines[j] = text + b" %016x" % h(d, text)
open(path, "wb").write(b"\n".join(lines))
PY
}
case "$id1" in
*/ooc-*+sum[0-9]*) old=${id1%+sum*} ;;
*) old= ; fail "info: 'blocks computed by: $id1' names no summation scheme (+sumN after the version)" ;;
esac
if [ -z "$old" ]; then
    :
elif ! command -v python3 >/dev/null; then
    echo "note: no python3: a journal of an earlier build is not forged"
else
    rm -f FD.npy FD.npy.ooc-*
    stop_after 20000 2 FD.npy.ooc-journal multiply $fargs -o FD.npy
    rc=$?
    journal_set_by FD.npy.ooc-journal "$old"
    oc multiply $fargs -o FD.npy --resume
    rc2=$?
    refused=0
    grep -q "computed by $old, this run would compute the rest by $id1" err && [ -f FD.npy.ooc-tmp ] &&
        [ ! -e FD.npy ] && refused=1
    journal_set_by FD.npy.ooc-journal "$id1"
    if [ "$rc" -eq 7 ] && [ "$rc2" -eq 6 ] && [ "$refused" -eq 1 ] && oc multiply $fargs -o FD.npy --resume &&
        cmp -s FD.npy FREF.npy; then
        pass "resume: a journal of an earlier build ($old) refused (exit 6, files kept); given this build's id: byte-identical"
    else
        fail "resume: a journal of an earlier build: exit $rc, $rc2 (expected 7, 6), refused $refused: $(head -c 300 err)"
    fi
fi

# --allow-mixed accepts that mix: the blocks of another thread count are
# kept, the journal is marked mixed and the note names both computers; a
# later resume of that journal without --allow-mixed is refused (naming
# several computers), even where the job started; with it, C checks
# against OpenBLAS
env OPENBLAS_NUM_THREADS=$T "$OOCGEMM" info --no-measure --backend host >out 2>err
id2=$(sed -n 's/^blocks computed by: //p' out)
if [ "$id1" = "$id2" ]; then
    echo "note: OPENBLAS_NUM_THREADS=$T changes nothing here ($id1): --allow-mixed is not tried"
else
    rm -f FD.npy FD.npy.ooc-*
    stop_after 20000 8 FD.npy.ooc-journal multiply $fargs -o FD.npy
    rc=$?
    OPENBLAS_NUM_THREADS=$T stop_after 20000 20 FD.npy.ooc-journal multiply $fargs -o FD.npy --resume --allow-mixed
    rc2=$?
    mixed=$(grep -c '^mixed ' FD.npy.ooc-journal)
    oc multiply $fargs -o FD.npy --resume
    rc3=$?
    grep -q 'computed by several computers (a resume allowed to mix them), this run would compute the rest by' err
    named=$?
    OPENBLAS_NUM_THREADS=$T "$OOCGEMM" multiply $fargs -o FD.npy --resume --allow-mixed --json >out 2>err
    rc4=$?
    if [ "$rc" -eq 7 ] && [ "$rc2" -eq 7 ] && [ "$mixed" -eq 1 ] && [ "$rc3" -eq 6 ] && [ "$named" -eq 0 ] &&
        [ "$rc4" -eq 0 ] && grep -q '"blocks_mixed": *[1-9]' out && grep -q '"mixed_by": *"several"' out &&
        grep -q 'kept from the journal were computed by several computers' err &&
        [ -f FD.npy ] && [ ! -e FD.npy.ooc-tmp ] && oc verify FA.npy FB.npy FD.npy; then
        pass "resume --allow-mixed: another thread count's blocks kept, journal marked mixed, a resume without it refused; C checks"
    else
        fail "resume --allow-mixed: exit $rc, $rc2, $rc3, $rc4 (expected 7, 7, 6, 0), mixed records $mixed, named $named: $(head -c 300 err)"
    fi
    # a job complete but not committed (C's path became a directory while it
    # ran: exit 6, its journal complete), resumed by the other thread count:
    # it computes nothing, so it commits, without a note (C is the first
    # computer's, byte for byte) and without writing after the journal's
    # "complete" (a damaged journal), so that the same command again finds
    # the job finished
    rm -rf FD.npy FD.npy.ooc-*
    left_complete FD
    rc=$?
    last=$(tail -n 1 FD.npy.ooc-journal | cut -d' ' -f1)
    rm -rf FD.npy
    OPENBLAS_NUM_THREADS=$T "$OOCGEMM" multiply $fargs -o FD.npy --resume >out 2>err
    rc2=$?
    notes=$(grep -c 'note:' err)
    OPENBLAS_NUM_THREADS=$T "$OOCGEMM" multiply $fargs -o FD.npy --resume >out 2>err
    rc3=$?
    if [ "$rc" -eq 6 ] && [ "$last" = complete ] && [ "$rc2" -eq 0 ] && [ "$notes" -eq 0 ] && [ "$rc3" -eq 0 ] &&
        [ "$(tail -n 1 FD.npy.ooc-journal | cut -d' ' -f1)" = complete ] && cmp -s FD.npy FREF.npy; then
        pass "resume of a complete, uncommitted job by another thread count: committed, no note, byte-identical; again: finished"
    else
        fail "resume of a complete, uncommitted job by another thread count: exit $rc, $rc2, $rc3 (expected 6, 0, 0), last record $last, notes $notes: $(head -c 300 err)"
    fi
    # every block recorded (the "complete" record failed: OOC_FAULT=journal),
    # then one overwritten in C.ooc-tmp: a resume by the other thread count
    # without --allow-mixed would compute that block beside the first
    # computer's, so it is refused (exit 6, files kept); as the job started,
    # the block is computed again: byte-identical
    rm -rf FD.npy FD.npy.ooc-*
    oc multiply $fargs -o FD.npy --resume # (a fresh run: its journal kept, complete)
    nb=$(grep -c '^done ' FD.npy.ooc-journal)
    rm -f FD.npy FD.npy.ooc-*
    OOC_FAULT=journal:$((nb + 2)) timeout 60 "$OOCGEMM" multiply $fargs -o FD.npy >out 2>err
    rc=$?
    recorded=$(grep -c '^done ' FD.npy.ooc-journal)
    size=$(stat -c %s FD.npy.ooc-tmp)
    printf '\0\0\0\0' | dd of=FD.npy.ooc-tmp bs=1 seek=$((size - 32 - 4)) conv=notrunc status=none
    OPENBLAS_NUM_THREADS=$T timeout 60 "$OOCGEMM" multiply $fargs -o FD.npy --resume >out 2>err
    rc2=$?
    named=0
    grep -q "computed by $id1, this run would compute the rest by $id2" err && named=1
    oc multiply $fargs -o FD.npy --resume --json
    rc3=$?
    if [ "$rc" -eq 6 ] && [ "$recorded" -eq "$nb" ] && [ "$rc2" -eq 6 ] && [ "$named" -eq 1 ] && [ "$rc3" -eq 0 ] &&
        grep -q '"blocks_mismatched": *1,' out && cmp -s FD.npy FREF.npy; then
        pass "resume by another thread count of a job all recorded, one block overwritten: refused; as it started: recomputed, byte-identical"
    else
        fail "resume by another thread count of a job all recorded, one block overwritten: exit $rc, $rc2, $rc3 (expected 6, 6, 0), $recorded of $nb recorded, named $named: $(head -c 300 err)"
    fi
fi

# a job complete but not committed (C's path a directory meanwhile: exit 6,
# its journal complete), then a block of its sealed C.ooc-tmp overwritten and
# the file's modification time put back (a write lost in a crash): the
# resume finds it, and computes the job afresh (that journal takes no record
# after its complete one): exit 0, C right, the warning, JSON 1 block
rm -rf FE.npy FE.npy.ooc-* FE.saved
left_complete FE
rc=$?
rm -rf FE.npy
last=$(tail -n 1 FE.npy.ooc-journal | cut -d' ' -f1)
cp -p FE.npy.ooc-tmp FE.saved
size=$(stat -c %s FE.npy.ooc-tmp)
printf '\0\0\0\0' | dd of=FE.npy.ooc-tmp bs=1 seek=$((size - 4)) conv=notrunc status=none
touch -r FE.saved FE.npy.ooc-tmp
oc multiply $fargs -o FE.npy --resume --json
rc2=$?
warned=0
grep -q 'warning: --resume: 1 block the journal recorded as done no longer matched' err && warned=1
if [ "$rc" -eq 6 ] && [ "$last" = complete ] && [ "$rc2" -eq 0 ] && [ "$warned" -eq 1 ] &&
    grep -q '"blocks_mismatched": *1,' out && cmp -s FE.npy FREF.npy; then
    pass "a complete, uncommitted job whose C.ooc-tmp changed (its time put back): the resume computes it afresh, warned, C right"
else
    fail "a complete, uncommitted job whose C.ooc-tmp changed: exit $rc, $rc2 (expected 6, 0), last record $last, warned $warned: $(head -c 300 err)"
fi
rm -rf FE.npy FE.npy.ooc-* FE.saved
# the same job with C.ooc-tmp only touched (its modification time changed:
# the journal no longer vouches for it): computed afresh, with a note
left_complete FE
rc=$?
rm -rf FE.npy
touch -d '2001-01-01' FE.npy.ooc-tmp
oc multiply $fargs -o FE.npy --resume
rc2=$?
if [ "$rc" -eq 6 ] && [ "$rc2" -eq 0 ] && cmp -s FE.npy FREF.npy &&
    grep -q 'note: --resume: the journal FE.npy.ooc-journal recorded the job complete, but FE.npy.ooc-tmp is not the file it recorded' err; then
    pass "a complete, uncommitted job whose C.ooc-tmp was touched: computed afresh, a note says why, C right"
else
    fail "a complete, uncommitted job whose C.ooc-tmp was touched: exit $rc, $rc2 (expected 6, 0), or no note, or C differs: $(head -c 300 err)"
fi
rm -rf FE.npy FE.npy.ooc-*

# resume after an input changed: refused (exit 6), files kept; without --resume it starts over
OOC_HOST_JITTER_US=2000 "$OOCGEMM" multiply RA.npy RB.npy -o RD.npy --backend host --device-mem 256K --no-floor -q \
    >out 2>err &
bgpid=$!
for _ in $(seq 1 200); do
    if [ -f RD.npy.ooc-journal ] && grep -q '^done ' RD.npy.ooc-journal; then break; fi
    sleep 0.05
done
kill -9 "$bgpid" 2>/dev/null
wait "$bgpid" 2>/dev/null
bgpid=
gen RA.npy --rows 2000 --cols 300 --seed 23
oc multiply RA.npy RB.npy -o RD.npy --backend host --device-mem 256K --no-floor --resume
rc=$?
# the refusal says what changed (a new RA.npy: another file; then alpha too)
grep -q 'describes another job (changed since it was written: A is another file (replaced))' err
said=$?
oc multiply RA.npy RB.npy -o RD.npy --backend host --device-mem 256K --no-floor --resume --alpha 2
rc2=$?
grep -q 'describes another job (changed since it was written: alpha, A is another file (replaced))' err
said2=$?
if [ "$rc" -eq 6 ] && [ "$rc2" -eq 6 ] && [ $said -eq 0 ] && [ $said2 -eq 0 ] && [ -f RD.npy.ooc-tmp ] &&
    [ -f RD.npy.ooc-journal ] && [ ! -e RD.npy ]; then
    pass "resume: changed input refused with exit 6, naming what changed, files kept: $(head -n 1 err | cut -c1-160)"
else
    fail "resume: changed input: exit $rc/$rc2, expected 6 with the files kept and what changed named ($said/$said2): $(head -n 1 err)"
fi
oc multiply RA.npy RB.npy -o RD.npy --backend host --device-mem 256K --no-floor --verify
rc=$?
if [ "$rc" -eq 0 ] && [ ! -e RD.npy.ooc-tmp ] && [ ! -e RD.npy.ooc-journal ] && grep -q ': PASS$' out; then
    pass "resume: a run without --resume starts over and cleans up"
else
    fail "resume: start over: exit $rc"
fi

# resume with another --out-layout or --out-format: another job, refused
# (exit 6) and nothing touched, as for another alpha. Its C.ooc-tmp did not
# match the output asked for, so it was started afresh and the default
# journal dropped before any check: the finished blocks were lost, exit 0,
# and a note blamed "another run's" file. Resumed as started: byte-identical
oc multiply A_big.npy B_big.npy -o RL.npy --backend host --device-mem 256K --host-mem 256K --no-floor -q
cp RL.npy RLref.npy
rm -f RL.npy
OOC_FAULT=write:4 oc multiply A_big.npy B_big.npy -o RL.npy --backend host --device-mem 256K --host-mem 256K \
    --no-floor -q
rc=$?
md5sum RL.npy.ooc-tmp RL.npy.ooc-journal >RL.md5 2>/dev/null
oc multiply A_big.npy B_big.npy -o RL.npy --backend host --device-mem 256K --host-mem 256K --no-floor -q \
    --resume --out-layout col
rc2=$?
grep -q 'describes another job: its [0-9]* finished blocks are in RL.npy.ooc-tmp, made for a C of 600 x 200 float64, row-major, .npy, and this command makes C 600 x 200 float64, col-major, .npy' err
said=$?
oc multiply A_big.npy B_big.npy -o RL.npy --backend host --device-mem 256K --host-mem 256K --no-floor -q \
    --resume --out-format raw
rc3=$?
md5sum -c --quiet RL.md5 >/dev/null 2>&1
kept=$?
oc multiply A_big.npy B_big.npy -o RL.npy --backend host --device-mem 256K --host-mem 256K --no-floor \
    --resume --no-progress
rc4=$?
if [ "$rc" -eq 6 ] && [ "$rc2" -eq 6 ] && [ "$rc3" -eq 6 ] && [ $said -eq 0 ] && [ $kept -eq 0 ] &&
    [ "$rc4" -eq 0 ] && grep -q '(resumed after [1-9]' out && cmp -s RL.npy RLref.npy; then
    pass "resume: another --out-layout or --out-format refused with exit 6, files kept; resumed as started: same bytes"
else
    fail "resume: another --out-layout/--out-format: exit $rc/$rc2/$rc3/$rc4 (expected 6, 6, 6, 0), message $said, files kept $kept: $(head -n 1 err)"
fi
rm -f RL.npy RLref.npy RL.md5 RL.npy.ooc-journal

# op(B) in k-panels (C holds partial sums): a stopped job cannot keep its
# blocks, says so, and --resume starts it over with the plan its journal
# records, so that C is byte for byte what the interrupted run would have
# made, on another number of devices too (lead: one block per device). The
# resume's note says why it starts over (the plan keeps no blocks), not that
# the temporary file is another run's (it did)
gen KA.npy --rows 1200 --cols 256 --seed 31
gen KB.npy --rows 256 --cols 80 --seed 32
kargs="KA.npy KB.npy --backend host --device-mem 100K --b-chunks 4 --no-floor -q"
OOC_HOST_DEVICES=2 oc multiply $kargs -o KREF.npy --devices all
OOC_HOST_DEVICES=2 OOC_HOST_JITTER_US=3000 "$OOCGEMM" multiply $kargs -o KC.npy --devices all --json >out 2>err &
bgpid=$!
for _ in $(seq 1 200); do # until the job has started (its journal is written), 10 s at most
    if [ -f KC.npy.ooc-journal ] && grep -q '^plan .* resumable=0 ' KC.npy.ooc-journal; then break; fi
    sleep 0.05
done
for _ in $(seq 1 100); do # until a block is recorded (the resume's note counts them), 5 s at most
    if grep -q '^done ' KC.npy.ooc-journal; then break; fi
    sleep 0.05
done
kill -TERM "$bgpid" 2>/dev/null
wait "$bgpid"
rc=$?
bgpid=
if [ "$rc" -ne 7 ] || ! grep -q 'splits k into panels' err || grep -q 'finished blocks are kept' err ||
    ! grep -q '"resumable":true,"resume_keeps_blocks":false,' out; then
    fail "k-panels stopped: exit $rc, expected 7 and a message (and JSON) that a resume starts over: $(head -n 2 err | tr '\n' ' ')"
else
    OOC_HOST_DEVICES=1 oc multiply $kargs -o KC.npy --resume
    rc=$?
    if [ "$rc" -eq 0 ] && cmp -s KC.npy KREF.npy && ! grep -q 'another run' err &&
        grep -q 'note: --resume: the plan the journal KC.npy.ooc-journal records splits k into panels' err; then
        pass "k-panels: stopped (exit 7, 'starts it over'), resumed on 1 device of 2: byte-identical, the note says why"
    else
        fail "k-panels: resumed on 1 device of 2: exit $rc, $(cmp KC.npy KREF.npy 2>&1), or its note is not the plan's: $(head -c 300 err)"
    fi
fi

# --verify failing (a copy to the host lost): exit 1, and the message says
# that C was written and committed but is wrong (it said only "verification
# failed: ..."), as the exit status table does
rm -f VL.npy
OOC_FAULT=lose:2 oc multiply $fargs -o VL.npy --verify --no-progress
rc=$?
if [ $rc -eq 1 ] && [ -f VL.npy ] && grep -q 'verification failed: .*: VL.npy is written (committed), but wrong: do not use it' err; then
    pass "--verify failing: exit 1, the message says C is written but wrong"
else
    fail "--verify failing: exit $rc (expected 1), C not there, or the message does not say it is wrong: $(head -c 300 err)"
fi
rm -f VL.npy VL.npy.ooc-*

# --resume over the journal of another job recorded finished (here another
# --alpha, then an input modified since): computed anew, C replaced, exit 0,
# and a note says what differs (it was silent)
oc multiply $fargs -o FA2.npy --alpha 2
rm -f NF.npy NF.npy.ooc-*
oc multiply $fargs -o NF.npy --resume && oc multiply $fargs -o NF.npy --resume --alpha 2
rc=$?
if [ $rc -eq 0 ] && cmp -s NF.npy FA2.npy &&
    grep -q 'note: --resume: the journal NF.npy.ooc-journal records another job as finished (what differs: alpha)' err &&
    touch FA.npy && oc multiply $fargs -o NF.npy --resume --alpha 2 && cmp -s NF.npy FA2.npy &&
    grep -q 'records another job as finished (what differs: A was modified' err &&
    oc multiply $fargs -o NF.npy --resume --alpha 2 && ! grep -q 'note' err; then
    pass "resume over another finished job's journal: computed anew, exit 0, a note naming alpha, then A modified"
else
    fail "resume over another finished job's journal: exit $rc, C differs, or no note of what differs: $(head -c 300 err)"
fi
rm -f NF.npy NF.npy.ooc-* FA2.npy

# a raw operand without a suffix: its shape from --rows and --cols; with
# neither, an error of the input (exit 4); one without the other, a bad
# command line (exit 2), as the manual's FILE FORMATS says
head -c 800 /dev/zero >R10.bin
oc multiply R10.bin R10.bin -o RR.bin --backend host -q
rc1=$?
oc multiply R10.bin R10.bin -o RR.bin --backend host -q --rows 10
rc2=$?
msg=$(head -n 1 err)
oc multiply R10.bin R10.bin -o RR.bin --backend host -q --rows 10 --cols 10
rc3=$?
if [ $rc1 -eq 4 ] && [ $rc2 -eq 2 ] && echo "$msg" | grep -q -- '--rows and --cols go together' && [ $rc3 -eq 0 ]; then
    pass "raw without a suffix: no shape exit 4, --rows alone exit 2 (go together), both: multiplied"
else
    fail "raw without a suffix: exit $rc1, $rc2, $rc3 (expected 4, 2, 0): $msg"
fi
rm -f R10.bin RR.bin

# ---- in place with --resume, C written in another format than C0 was given
# in: run again, the same command finds the job finished (exit 0, C
# untouched); it could not open C0 as given any more (the .npy output over a
# raw C0, or the raw output over a .npy C0) and exited 4. Without the
# journal to say it finished, C0 as given is still refused (exit 4)
gen IA.npy --rows 40 --cols 12 --seed 81
gen IB.npy --rows 12 --cols 9 --seed 82
gen IC.bin --rows 40 --cols 9 --seed 83
gen ID.npy --rows 40 --cols 9 --seed 84
iargs="IA.npy IB.npy --beta 1 --backend host --block-rows 16 --no-floor --no-progress --resume"
oc multiply $iargs --c-in IC.bin:40x9:d -o IC.bin --out-format npy -q
rc1=$?
cp IC.bin IC.first
oc multiply $iargs --c-in IC.bin:40x9:d -o IC.bin --out-format npy
rc2=$?
said=$(grep -c 'this job finished already' out)
oc multiply $iargs --c-in ID.npy -o ID.npy --out-format raw -q
rc3=$?
oc multiply $iargs --c-in ID.npy -o ID.npy --out-format raw
rc4=$?
said=$((said + $(grep -c 'this job finished already' out)))
rm -f IC.bin.ooc-journal
oc multiply $iargs --c-in IC.bin:40x9:d -o IC.bin --out-format npy -q
rc5=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ] && [ $rc4 -eq 0 ] && [ "$said" = 2 ] && cmp -s IC.bin IC.first &&
    [ $rc5 -eq 4 ] && grep -q 'is a .npy file .*not raw data' err; then
    pass "in place with --resume, C in another format than C0: run again, finished already (exit 0); no journal: exit 4"
else
    fail "in place with --resume, C in another format than C0: exit $rc1 $rc2 $rc3 $rc4 $rc5 (expected 0 0 0 0 4), said $said of 2"
fi
rm -f IA.npy IB.npy IC.bin IC.first ID.npy IC.bin.ooc-* ID.npy.ooc-*

# ---- a check left undecided: float32 A of 3e38 times B of ones is inf in C,
# rightly; the check cannot tell (exit 1 and why, not exit 4 "size overflows 64 bits")
rep() { local i; for ((i = 0; i < $2; i++)); do printf "$1"; done; }
{ npy_header '<f4' '(4, 3)'; rep '\xe6\xb1\x61\x7f' 12; } >U_A.npy
{ npy_header '<f4' '(3, 2)'; rep '\x00\x00\x80\x3f' 6; } >U_B.npy
{ npy_header '<f4' '(4, 2)'; rep '\x00\x00\x80\x7f' 8; } >U_C.npy
oc verify U_A.npy U_B.npy U_C.npy
rc=$?
if [ $rc -eq 1 ] && grep -q 'undecided' err && ! grep -q '64 bits' err; then
    pass "verify: a check left undecided by overflows: exit 1, said so"
else
    fail "verify: a check left undecided: exit $rc (expected 1): $(cat err)"
fi
oc multiply U_A.npy U_B.npy -o U_O.npy --verify --backend host --no-floor --no-progress
rc=$?
if [ $rc -eq 1 ] && grep -q 'written (committed), but the check could not decide' err && [ -f U_O.npy ]; then
    pass "multiply --verify left undecided: exit 1, C committed, said so"
else
    fail "multiply --verify left undecided: exit $rc (expected 1): $(cat err)"
fi
rm -f U_A.npy U_B.npy U_C.npy U_O.npy

# ---- an existing output this process may not write (chmod a-w) is not
# replaced: a rename in a writable directory could (it did), where cp or a
# shell's > could not. Exit 6, the file as it was, nothing left; made
# writable, it is replaced. Root may write any file, so as root the case
# runs as nobody (setpriv) where that can run the tool, else it is left out
# (said so, not passed) ----
mkdir prot && cp A_d.npy prot/A.npy && cp B_dF.npy prot/B.npy && cp A_d.npy prot/P.npy &&
    chmod 644 prot/A.npy prot/B.npy && chmod 444 prot/P.npy && chmod 777 prot
as_other=()
if [ "$(id -u)" -eq 0 ]; then
    as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    # (nobody must reach the tool and read the operands: a build tree under
    # /root, say, it cannot)
    if ! command -v setpriv >/dev/null 2>&1 || ! chmod 711 "$tmp" ||
        ! "${as_other[@]}" "$OOCGEMM" --version >/dev/null 2>&1 ||
        ! "${as_other[@]}" cat prot/A.npy prot/B.npy >/dev/null 2>&1; then
        as_other=(none)
    fi
fi
if [ "${as_other[0]:-}" = none ]; then
    echo "# left out: a write-protected output (run as root, and setpriv cannot run $OOCGEMM as nobody)"
else
    sum=$(cksum <prot/P.npy)
    timeout 60 ${as_other[@]+"${as_other[@]}"} "$OOCGEMM" multiply prot/A.npy prot/B.npy -o prot/P.npy \
        --backend host --no-progress >out 2>err
    rc=$?
    if [ "$rc" -eq 6 ] && grep -q "output prot/P.npy is not writable by this process (mode 0444, owner uid" err &&
        [ "$(cksum <prot/P.npy)" = "$sum" ] && [ ! -e prot/P.npy.ooc-tmp ] && [ ! -e prot/P.npy.ooc-journal ]; then
        pass "a write-protected output is not replaced: exit 6: $(head -n 1 err)"
    else
        fail "a write-protected output: exit $rc (expected 6), the file $( [ "$(cksum <prot/P.npy)" = "$sum" ] && echo kept || echo replaced)"
    fi
    chmod 666 prot/P.npy
    timeout 60 ${as_other[@]+"${as_other[@]}"} "$OOCGEMM" multiply prot/A.npy prot/B.npy -o prot/P.npy \
        --backend host --no-progress >out 2>err
    rc=$?
    if [ "$rc" -eq 0 ] && [ "$(cksum <prot/P.npy)" != "$sum" ]; then pass "made writable, the output is replaced"
    else fail "a writable output: exit $rc, expected 0 and C written"; fi
fi

# ---- a job in k-panels (op(B) split in depth: a small device budget)
# complete but not committed (the rename failed): --resume commits it, every
# block kept, as the message promises. It was computed afresh, all of it:
# such a plan's journal was never used, complete or not. With a block of the
# last panel changed (its time put back) none of it is kept: computed
# afresh, with the warning. Byte-identical to an uninterrupted run ----
kargs="A_big.npy B_big.npy --backend host --device-mem 64K --host-mem 256K --block-rows 64 --no-progress"
oc multiply $kargs -o KU.npy -q --json
kp=$(/usr/bin/python3 -c "import json,sys; p=json.load(open('out'))['plan']; print(p['panels'])" 2>/dev/null)
oc multiply $kargs -o KU.npy -q
OOC_FAULT=commit:1 timeout 60 "$OOCGEMM" multiply $kargs -o KC.npy -q --resume --json >out 2>err
rc=$?
# (its JSON: a resume keeps the blocks; it said false, as of any plan in k-panels)
if [ "${kp:-1}" -gt 1 ] && [ "$rc" -eq 6 ] && grep -q "the same command with --resume commits it" err &&
    grep -q '"resumable":true,"resume_keeps_blocks":true' out; then
    oc multiply $kargs -o KC.npy --resume --json
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q '"blocks_before_resume":[1-9]' out && grep -q '"bytes_read":0,' out &&
        cmp -s KC.npy KU.npy; then
        pass "a complete job in $kp k-panels, its commit failed: --resume commits it, nothing computed, byte-identical"
    else
        fail "a complete job in k-panels, its commit failed: --resume exit $rc, $(grep -o '"blocks_before_resume":[0-9]*' out), C $(cmp -s KC.npy KU.npy && echo identical || echo differs)"
    fi
    rm -f KC.npy KC.npy.ooc-*
    OOC_FAULT=commit:1 timeout 60 "$OOCGEMM" multiply $kargs -o KC.npy -q --resume >out 2>err
    touch -r KC.npy.ooc-tmp KC.time
    printf 'ZZZZZZZZ' | dd of=KC.npy.ooc-tmp bs=1 seek=3000 conv=notrunc 2>/dev/null
    touch -r KC.time KC.npy.ooc-tmp
    oc multiply $kargs -o KC.npy --resume --json
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q '"blocks_before_resume":0' out && grep -q '"blocks_mismatched":1' out &&
        grep -q "no longer matched the digest" err && cmp -s KC.npy KU.npy; then
        pass "a complete job in k-panels with a block changed: computed afresh, warned, byte-identical"
    else
        fail "a complete job in k-panels with a block changed: exit $rc, $(grep -o '"blocks_[bm][a-z_]*":[0-9]*' out | tr '\n' ' '), C $(cmp -s KC.npy KU.npy && echo identical || echo differs)"
    fi
    # killed between the seal (the trailer cut) and the "complete" record
    # (the journal's last line): every block kept, as a complete one's (it
    # was computed afresh, all of it); with a block of the last panel
    # changed too, computed afresh. Byte-identical either way
    for damaged in 0 1; do
        rm -f KC.npy KC.npy.ooc-*
        OOC_FAULT=commit:1 timeout 60 "$OOCGEMM" multiply $kargs -o KC.npy -q >out 2>err
        last=$(tail -n 1 KC.npy.ooc-journal | cut -c1-9)
        head -n -1 KC.npy.ooc-journal >KC.j && cat KC.j >KC.npy.ooc-journal
        if [ "$damaged" = 1 ]; then
            touch -r KC.npy.ooc-tmp KC.time
            printf 'ZZZZZZZZ' | dd of=KC.npy.ooc-tmp bs=1 seek=3000 conv=notrunc 2>/dev/null
            touch -r KC.time KC.npy.ooc-tmp
        fi
        oc multiply $kargs -o KC.npy --resume --json
        rc=$?
        if [ "$damaged" = 0 ]; then want='"blocks_before_resume":[1-9][0-9]*,.*"bytes_read":0,'
        else want='"blocks_before_resume":0,.*"blocks_mismatched":1,'; fi
        if [ "$last" = "complete " ] && [ "$rc" -eq 0 ] && grep -q "$want" out && cmp -s KC.npy KU.npy; then
            pass "a job in k-panels killed between its seal and its complete record (damaged $damaged): byte-identical, $([ $damaged = 0 ] && echo 'every block kept' || echo 'computed afresh')"
        else
            fail "a job in k-panels killed between its seal and its complete record (damaged $damaged): last line '$last', exit $rc, $(grep -o '"blocks_[bm][a-z_]*":[0-9]*\|"bytes_read":[0-9]*' out | tr '\n' ' '), C $(cmp -s KC.npy KU.npy && echo identical || echo differs)"
        fi
    done
else
    fail "a complete job in k-panels: the plan has ${kp:-?} panels, or the failed commit exit $rc: $(head -c 300 err)"
fi
rm -f KC.npy KC.npy.ooc-* KC.time KC.j KU.npy

# ---- a finished in-place job (--c-in C -o C) requeued with --resume after
# a link to B (its status change time moves, nothing else): finished
# already, C left as it is (a review found C = AB + (AB +
# C0) while the status change time was compared) ----
cp B_dF.npy IPB.npy
oc gen IPC.npy --rows 300 --cols 170 --seed 11
oc multiply A_d.npy IPB.npy --c-in IPC.npy -o IPC.npy --beta 1 --backend host --resume -q
cp IPC.npy IPC.keep
ln IPB.npy IPB.link
oc multiply A_d.npy IPB.npy --c-in IPC.npy -o IPC.npy --beta 1 --backend host --resume
rc=$?
if [ "$rc" -eq 0 ] && grep -q "finished already" out && cmp -s IPC.npy IPC.keep; then
    pass "a finished in-place job, its inputs linked: finished already, C unchanged"
else fail "a finished in-place job, its inputs linked: exit $rc, C $(cmp -s IPC.npy IPC.keep && echo unchanged || echo changed): $(head -c 300 err)"; fi
rm -f IPB.npy IPB.link IPC.npy IPC.keep IPC.npy.ooc-*

# ---- a directory that cannot be flushed (OOC_FAULT=sync_dir: the 1st is
# the journal's at its creation, the 2nd the output's after its rename).
# The journal's: exit 6 (the journal cannot be written), nothing left. The
# output's: C is at its path and complete, so not "left in C.ooc-tmp" and
# not resumable (it said so, exit 6, resumable true) ----
oc multiply A_d.npy B_dF.npy -o SD0.npy --backend host --no-progress -q
OOC_FAULT=sync_dir:1 oc multiply A_d.npy B_dF.npy -o SD1.npy --backend host --no-progress --json
rc=$?
if [ "$rc" -eq 6 ] && grep -q "to flush the entry of SD1.npy.ooc-journal" err && [ ! -e SD1.npy ] &&
    [ ! -e SD1.npy.ooc-tmp ] && [ ! -e SD1.npy.ooc-journal ]; then
    pass "the journal's directory not flushed: exit 6, the journal named, nothing left"
else fail "the journal's directory not flushed: exit $rc (expected 6): $(head -c 300 err)"; fi
OOC_FAULT=sync_dir:2 oc multiply A_d.npy B_dF.npy -o SD1.npy --backend host --no-progress --json
rc=$?
if [ "$rc" -eq 6 ] && grep -q "to flush the entry of SD1.npy)" err && grep -q "the complete result is at SD1.npy" err &&
    ! grep -q "left in" err && grep -q '"resumable":false' out && [ ! -e SD1.npy.ooc-tmp ] && cmp -s SD1.npy SD0.npy; then
    pass "the output's directory not flushed after the rename: exit 6, C at its path and complete, not resumable"
else fail "the output's directory not flushed after the rename: exit $rc (expected 6): $(head -c 400 err) $(grep -o '"resumable":[a-z]*' out)"; fi
# a requeued --resume of that job flushes the directory before it says
# finished (it said finished, the rename never flushed): failing again,
# exit 6 naming C; then finished, C unchanged
OOC_FAULT=sync_dir:1 oc multiply A_d.npy B_dF.npy -o SD1.npy --backend host --no-progress --resume --json
rc=$?
if [ "$rc" -eq 6 ] && grep -q "to flush the entry of SD1.npy)" err && grep -q '"already_finished":false' out &&
    cmp -s SD1.npy SD0.npy; then
    pass "--resume of a job whose directory was not flushed: flushed again, its failure exit 6"
else fail "--resume of a job whose directory was not flushed: exit $rc (expected 6): $(head -c 300 err)"; fi
oc multiply A_d.npy B_dF.npy -o SD1.npy --backend host --no-progress --resume
rc=$?
if [ "$rc" -eq 0 ] && grep -q "finished already" out && cmp -s SD1.npy SD0.npy; then
    pass "--resume of a job whose directory was not flushed, flushed: finished already"
else fail "--resume of a job whose directory was not flushed, flushed: exit $rc: $(head -c 300 err)"; fi
# (gen says so too)
OOC_FAULT=sync_dir:1 oc gen SD2.npy --rows 30 --cols 20 --seed 3
rc=$?
if [ "$rc" -eq 6 ] && grep -q "SD2.npy is complete at its path" err && [ -s SD2.npy ] && [ ! -e SD2.npy.ooc-tmp ]; then
    pass "gen, the directory not flushed after the rename: exit 6, complete at its path, said so"
else fail "gen, the directory not flushed after the rename: exit $rc (expected 6): $(head -c 300 err)"; fi
rm -f SD0.npy SD1.npy SD1.npy.ooc-* SD2.npy

# ---- an output that replaces a file keeps its permissions (and its group,
# where the process may give it), as cp onto it or numpy.save would: a
# private result (0600) stays private, also while it is computed (its
# temporary file), and in place (--c-in C -o C) and for gen. It was made
# 0666 less the umask whatever the old file's mode ----
mkdir perm && cp A_d.npy perm/P.npy && cp C0_big.npy perm/Q.npy && chmod 600 perm/P.npy && chmod 640 perm/Q.npy
grp_want=
if [ "$(id -u)" -eq 0 ] && chgrp 1 perm/Q.npy 2>/dev/null; then grp_want=1; fi
( umask 022; timeout 60 "$OOCGEMM" multiply A_d.npy B_dF.npy -o perm/P.npy --backend host --no-progress \
    >out 2>err )
rc=$?
if [ "$rc" -eq 0 ] && [ "$(stat -c %a perm/P.npy)" = 600 ] && ! cmp -s A_d.npy perm/P.npy; then
    pass "an output replacing a 0600 file is 0600"
else
    fail "an output replacing a 0600 file: exit $rc, mode $(stat -c %a perm/P.npy) (expected 600)"
fi
# in place, stopped part-way: the temporary file is the old file's mode already
( umask 022; OOC_FAULT=journal:3 timeout 60 "$OOCGEMM" multiply A_big.npy B_big.npy --c-in perm/Q.npy \
    --beta 0.5 -o perm/Q.npy --backend host --block-rows 64 --no-progress >out 2>err )
rc=$?
mode_tmp=$(stat -c %a perm/Q.npy.ooc-tmp 2>/dev/null)
( umask 022; timeout 60 "$OOCGEMM" multiply A_big.npy B_big.npy --c-in perm/Q.npy --beta 0.5 -o perm/Q.npy \
    --backend host --block-rows 64 --resume --no-progress >out 2>err )
rc2=$?
if [ "$rc" -ne 0 ] && [ "$mode_tmp" = 640 ] && [ "$rc2" -eq 0 ] && [ "$(stat -c %a perm/Q.npy)" = 640 ] &&
    { [ -z "$grp_want" ] || [ "$(stat -c %g perm/Q.npy)" = "$grp_want" ]; }; then
    pass "in place, stopped and resumed: the temporary file and C keep 0640${grp_want:+ and group $grp_want}"
else
    fail "in place: exit $rc then $rc2, temporary file mode '$mode_tmp', C mode $(stat -c %a perm/Q.npy) group $(stat -c %g perm/Q.npy) (expected 640${grp_want:+, group $grp_want})"
fi
cp A_d.npy perm/G.npy && chmod 604 perm/G.npy
( umask 077; timeout 60 "$OOCGEMM" gen perm/G.npy --rows 20 --cols 30 --seed 3 >out 2>err )
rc=$?
if [ "$rc" -eq 0 ] && [ "$(stat -c %a perm/G.npy)" = 604 ]; then pass "gen replacing a 0604 file keeps 0604"
else fail "gen replacing a 0604 file: exit $rc, mode $(stat -c %a perm/G.npy)"; fi
# a file its owner may write but not read (0200): the temporary file keeps
# the owner's read and write, so that a resume can open it again (it was
# made 0200 too, and the resume failed: "Permission denied"; a review). As
# nobody when run as root (root opens any file)
if [ "${as_other[0]:-}" != none ]; then
    chmod 777 perm
    ${as_other[@]+"${as_other[@]}"} sh -c 'cp A_big.npy perm/W.npy && chmod 200 perm/W.npy'
    OOC_FAULT=journal:3 timeout 60 ${as_other[@]+"${as_other[@]}"} "$OOCGEMM" multiply A_big.npy B_big.npy \
        -o perm/W.npy --backend host --block-rows 64 --no-progress >out 2>err
    rc=$?
    timeout 60 ${as_other[@]+"${as_other[@]}"} "$OOCGEMM" multiply A_big.npy B_big.npy -o perm/W.npy --backend host \
        --block-rows 64 --no-progress --resume >out 2>err
    rc2=$?
    if [ "$rc" -eq 6 ] && [ "$rc2" -eq 0 ] && grep -q "resumed after [1-9]" out && [ "$(stat -c %a perm/W.npy)" = 600 ]; then
        pass "an output replacing a 0200 file: stopped, resumed (its temporary file readable by its owner), 0600"
    else
        fail "an output replacing a 0200 file: exit $rc then $rc2 (expected 6, 0), mode $(stat -c %a perm/W.npy): $(head -c 300 err)"
    fi
fi
( umask 022; timeout 60 "$OOCGEMM" gen perm/N.npy --rows 20 --cols 30 --seed 3 >out 2>err )
rc=$?
if [ "$rc" -eq 0 ] && [ "$(stat -c %a perm/N.npy)" = 644 ]; then pass "a new output: 0666 less the umask"
else fail "a new output: exit $rc, mode $(stat -c %a perm/N.npy) (expected 644)"; fi

# ---- standard output, error and input closed (`>&-`): the output's file got
# descriptor 1 or 2, and what the command printed (gen's JSON object,
# multiply's progress) overwrote its header; the command said it succeeded.
# Now byte-identical to a run with them open ----
mkdir stdfd
timeout 60 "$OOCGEMM" gen stdfd/G.npy --rows 77 --cols 51 --seed 9 -q >out 2>err
timeout 60 "$OOCGEMM" gen stdfd/Gc.npy --rows 77 --cols 51 --seed 9 --json >&-
rc=$?
if [ "$rc" -eq 0 ] && cmp -s stdfd/G.npy stdfd/Gc.npy; then pass "gen with standard output closed: the file intact"
else fail "gen with standard output closed: exit $rc, $(cmp stdfd/G.npy stdfd/Gc.npy 2>&1)"; fi
timeout 60 "$OOCGEMM" multiply A_big.npy B_big.npy -o stdfd/C.npy --backend host --no-floor --block-rows 64 >out 2>err
timeout 60 "$OOCGEMM" multiply A_big.npy B_big.npy -o stdfd/Cc.npy --backend host --no-floor --block-rows 64 <&- >&- 2>&-
rc=$?
if [ "$rc" -eq 0 ] && cmp -s stdfd/C.npy stdfd/Cc.npy && [ ! -e stdfd/Cc.npy.ooc-journal ]; then
    pass "multiply with standard input, output and error closed: C intact"
else
    fail "multiply with standard input, output and error closed: exit $rc, $(cmp stdfd/C.npy stdfd/Cc.npy 2>&1)"
fi

# ---- a path of 1000 bytes and more: the reason was cut off the message (it
# names the path twice, and the message held 1024 bytes; a hunt) ----
lp=$(printf 'lp/%0200d/%0200d/%0200d/%0200d/%0200d' 1 2 3 4 5)
mkdir -p "$lp"
oc multiply A_d.npy B_dF.npy -o "$lp/missing/C.npy" --backend host
rc=$?
if [ "$rc" -eq 6 ] && grep -q "No such file or directory" err; then pass "an output in a missing directory, 1000-byte path: the reason said"
else fail "an output in a missing directory, 1000-byte path: exit $rc, $(tail -c 120 err)"; fi
rm -rf lp

# ---- --tf32 with the host backend (OpenBLAS multiplies in float32): multiply
# --verify checked at TF32's tolerance, 2^-7 more, which a result 0.8% off
# passed; float32's now (a hunt) ----
gen tfA.npy --rows 300 --cols 200 --dtype s --seed 31
gen tfB.npy --rows 200 --cols 100 --dtype s --seed 32
oc multiply tfA.npy tfB.npy -o tfC.npy --backend host --tf32 --verify --no-floor --json
rc=$?
if [ "$rc" -eq 0 ] && python3 -c "import json, sys
o = json.load(open('out'))
assert o['check']['passed'] and o['check']['tolerance'] < 1e-3, o['check']" 2>/dev/null; then
    pass "multiply --tf32 --verify on the host backend: float32's tolerance"
else
    fail "multiply --tf32 --verify on the host backend: exit $rc, or TF32's tolerance: $(head -c 300 out)"
fi
rm -f tfA.npy tfB.npy tfC.npy

# ---- a resume with other ops on square inputs (the shapes agree either
# way): refused as another job's journal, exit 6 naming op(A) or op(B),
# the temporary file and the journal as they were, no C. T and C (the
# conjugate) are other ops too. A job line that left out an op was resumed
# and committed a wrong C with exit 0 (a mutation passed every test) ----
gen TRA.npy --rows 200 --cols 200 --seed 61 --dtype complex128
gen TRB.npy --rows 200 --cols 200 --seed 62 --dtype complex128
targs="TRA.npy TRB.npy --backend host --device-mem 64K --block-rows 20 --no-progress -o TRC.npy"
for first in "" "--transa T"; do
    rm -f TRC.npy TRC.npy.ooc-*
    OOC_FAULT=write:6 timeout 60 "$OOCGEMM" multiply $targs $first -q >out 2>err
    rc=$?
    cp TRC.npy.ooc-journal TRC.keepj 2>/dev/null
    cp TRC.npy.ooc-tmp TRC.keept 2>/dev/null
    if [ "$rc" -ne 6 ] || ! grep -q '^done' TRC.keepj 2>/dev/null; then
        fail "ops changed on resume: the run to stop exit $rc (expected 6) or no block recorded: $(head -c 300 err)"
        continue
    fi
    if [ -z "$first" ]; then others="--transa=T --transb=T --transa=C --transb=C"; else others="--transa=C --transa=N"; fi
    for other in $others; do
        oc multiply $targs --resume "$other"
        rc=$?
        want=$(case "$other" in --transa*) echo 'op(A)' ;; *) echo 'op(B)' ;; esac)
        if [ "$rc" -eq 6 ] && grep -q "describes another job (changed since it was written: $want)" err &&
            [ ! -e TRC.npy ] && cmp -s TRC.keepj TRC.npy.ooc-journal && cmp -s TRC.keept TRC.npy.ooc-tmp; then
            pass "a job ${first:-of N, N} resumed with $other: refused, naming $want, nothing changed"
        else
            fail "a job ${first:-of N, N} resumed with $other: exit $rc (expected 6), $([ -e TRC.npy ] && echo 'C committed'): $(head -c 300 err)"
        fi
    done
done
rm -f TRA.npy TRB.npy TRC.npy TRC.npy.ooc-* TRC.keepj TRC.keept

# ---- help ----
for c in gen multiply verify info run; do
    oc "$c" --help
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q '^Usage: oocgemm '"$c" out && grep -q '^Exit status:' out && grep -q '  6  ' out; then
        pass "$c --help"
    else
        fail "$c --help: exit $rc"
    fi
done
oc help multiply
if [ $? -eq 0 ] && grep -q -- '--resume' out; then pass "help multiply"; else fail "help multiply"; fi
# the exit status 7 of a check stopped by a signal (C committed, not verified) is in the table
if grep -A 4 '^  7  ' out | grep -q 'committed but not verified'; then
    pass "help: exit status 7 names a stopped --verify (C committed, not verified)"
else
    fail "help: exit status 7 does not name a stopped --verify: $(grep -A 4 '^  7  ' out)"
fi
oc info --no-measure
if [ $? -eq 0 ] && grep -q '^libooc_gemm ' out; then pass "info: $(tail -n 1 out)"; else fail "info"; fi

echo "$cases cases, $failures failed"
[ "$failures" -eq 0 ]
