#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_oocgemm.sh: end-to-end tests of the oocgemm tool (make check).
# Quick multiplies through the host backend (dtypes, layouts, transposes,
# beta != 0, pinned and pageable memory, tiny device budgets that force many
# blocks and panels) must pass their check against OpenBLAS; bad command
# lines must exit 2 with a message on stderr that says what is wrong (an
# ambiguous option names its candidates, a huge number is too large);
# --json must print valid JSON.
# Run from the build directory; OOCGEMM overrides the tool's path.
set -u

OOCGEMM=${OOCGEMM:-./tools/oocgemm}
failures=0
cases=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_oocgemm.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$OOCGEMM" ]; then
    echo "FAIL: $OOCGEMM is not an executable (set OOCGEMM=path/to/oocgemm)"
    exit 1
fi

pass() { cases=$((cases + 1)); echo "PASS: $*"; }
fail() {
    cases=$((cases + 1))
    failures=$((failures + 1))
    echo "FAIL: $*"
    sed 's/^/    | /' "$tmp/out" "$tmp/err"
}

# run_ok NAME ARGS...: exit 0 and a PASS check line
run_ok() {
    local name=$1
    shift
    "$OOCGEMM" run --backend host "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "$name: exit $rc (oocgemm run --backend host $*)"
    elif ! grep -q '^check: .*: PASS$' "$tmp/out"; then
        fail "$name: no PASS line (oocgemm run --backend host $*)"
    else
        pass "$name: $(grep '^check:' "$tmp/out" | sed 's/^check: //')"
    fi
}

# run_bad_says NAME PATTERN ARGS...: exit 2 with a message on stderr that
# matches PATTERN (grep -E; '' for any message)
run_bad_says() {
    local name=$1 pattern=$2
    shift 2
    "$OOCGEMM" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -ne 2 ]; then
        fail "$name: exit $rc, expected 2 (oocgemm $*)"
    elif [ ! -s "$tmp/err" ]; then
        fail "$name: nothing on stderr (oocgemm $*)"
    elif [ -n "$pattern" ] && ! grep -qE -- "$pattern" "$tmp/err"; then
        fail "$name: the message does not say /$pattern/ (oocgemm $*)"
    else
        pass "$name: exit 2: $(head -n 1 "$tmp/err")"
    fi
}

# run_bad NAME ARGS...: exit 2 with a message on stderr
run_bad() {
    local name=$1
    shift
    run_bad_says "$name" '' "$@"
}

# json_check NAME PYTHON: stdin ($tmp/out) as JSON `o`, checked by PYTHON
# (asserts); without python3 the case passes when out holds one object
json_check() {
    if ! command -v python3 >/dev/null 2>&1; then
        if grep -q '^{.*}$' "$tmp/out"; then pass "$1 (no python3 to parse it)"; else fail "$1: not one object"; fi
    elif python3 -c "import json, sys
o = json.load(sys.stdin)
$2" <"$tmp/out" 2>"$tmp/err"; then
        pass "$1"
    else
        fail "$1"
    fi
}

# ---- multiplies that must pass their check ----
run_ok "d col NN" -m 301 -n 257 -k 129
run_ok "s row TN beta" --dtype s --layout row --transa T -m 211 -n 173 -k 97 --beta 0.5
run_ok "c col CT pageable" --dtype c --transa C --transb T -m 157 -n 203 -k 111 --memory pageable --alpha -1.5
run_ok "z row NC beta pageable" --dtype z --layout row --transb C -m 123 -n 149 -k 201 --beta -2 --memory pageable
run_ok "d row TT 256K" --layout row --transa T --transb T -m 400 -n 300 -k 200 --device-mem 256K
run_ok "s col NT 64K beta" --dtype s --transb T -m 333 -n 111 -k 222 --device-mem 64K --beta 1
run_ok "z col CC 128K pageable" --dtype z --transa C --transb C -m 190 -n 170 -k 150 --device-mem 128K \
    --host-mem 64K --memory pageable --beta 0.25
run_ok "c row TN 1M all rows" --dtype c --layout row --transa T -m 257 -n 255 -k 253 --device-mem 1M \
    --check-rows 1000
run_ok "d col pageable staged tiny" -m 500 -n 90 -k 70 --memory pageable --device-mem 96K --host-mem 32K \
    --staging-threads 2 --beta 3
run_ok "d col options" -m 300 -n 200 -k 100 --block-rows 37 --ring 4 --repeat 3 --seed 7
run_ok "s k=1 m=1" --dtype s -m 1 -n 77 -k 1 --beta 0.5
run_ok "d alpha=0" -m 50 -n 40 -k 30 --alpha 0 --beta 2
# the element types and layouts every command takes: NumPy's names, C and F
run_ok "--dtype complex64 --layout C" --dtype complex64 --layout C -m 60 -n 50 -k 40
run_ok "--dtype f8 --layout F" --dtype f8 --layout F -m 60 -n 50 -k 40

# ---- the JSON line ----
"$OOCGEMM" run --backend host --json -m 120 -n 110 -k 100 --dtype z --beta 1 \
    --bw-h2d 50 --bw-d2h 50 --rate 10 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ]; then
    fail "json: exit $rc"
elif [ "$(wc -l <"$tmp/out")" -ne 1 ]; then
    fail "json: not exactly one line"
elif command -v python3 >/dev/null 2>&1; then
    if python3 -c '
import json, sys
o = json.load(sys.stdin)
for key in ("command", "version", "library_version", "shape", "dtype", "layout", "transa", "transb",
            "memory", "backend", "time_s", "median_s", "tflops", "floor", "check", "plan", "stats", "devices",
            "exit_status", "error"):
    assert key in o, key
for key in ("block_rows", "panel_cols", "panel_depth", "blocks", "panels", "ring_depth", "streams",
            "staged_a", "staged_c", "device_bytes", "host_bytes"):
    assert key in o["plan"], key
for key in ("bytes_h2d", "bytes_d2h", "time_s"):
    assert key in o["stats"], key
assert o["check"]["passed"] is True and o["backend"] == "host" and o["dtype"] == "complex128"
assert o["shape"] == {"m": 120, "n": 110, "k": 100}, o["shape"]
assert o["command"] == "run" and o["exit_status"] == 0 and o["error"] is None
assert o["floor"]["time_s"] > 0 and o["floor"]["rate_measured"] is False
' <"$tmp/out" 2>"$tmp/err"; then
        pass "json: parses, has every field"
    else
        fail "json: does not parse or misses a field"
    fi
elif grep -q '^{.*"passed":true.*}$' "$tmp/out"; then
    pass "json: looks like one object (no python3 to parse it)"
else
    fail "json: not a JSON object with \"passed\":true"
fi

# ---- quiet ----
"$OOCGEMM" run --backend host -q -m 50 -n 50 -k 50 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ]; then
    pass "quiet: exit 0, no output"
else
    fail "quiet: exit $rc or output"
fi

# ---- bad command lines: exit 2 and a message ----
run_bad "missing -m" run --backend host -n 10 -k 10
run_bad "-m -5" run --backend host -m -5 -n 10 -k 10
run_bad "-k 0" run --backend host -m 10 -n 10 -k 0
run_bad "-n garbage" run --backend host -m 10 -n 1x -k 10
for cmd in run bench; do
    run_bad_says "$cmd --dtype q" "--dtype: 'q' is not an element type \(s, d, c, z; float32, float64" \
        $cmd --backend host -m 10 -n 10 -k 10 --dtype q
    run_bad_says "$cmd --layout diag" "--layout: 'diag' is not row or col \(or C or F\)" \
        $cmd --backend host -m 10 -n 10 -k 10 --layout diag
done
run_bad "--transa X" run --backend host -m 10 -n 10 -k 10 --transa X
run_bad "--device-mem 12Q" run --backend host -m 10 -n 10 -k 10 --device-mem 12Q
run_bad "--ring 1" run --backend host -m 10 -n 10 -k 10 --ring 1
run_bad "unknown option" run --backend host -m 10 -n 10 -k 10 --frobnicate
# a complex scalar is named as one (it was "not a finite number"); blanks
# around a number are taken, after it as before it
run_bad_says "--alpha 1+2j" "--alpha: '1\\+2j' is a complex number: the command line takes real scalars only" \
    run --backend host -m 10 -n 10 -k 10 --dtype z --alpha 1+2j
run_bad_says "--beta 2i" "--beta: '2i' is a complex number" run --backend host -m 10 -n 10 -k 10 --dtype c --beta 2i
run_bad_says "--alpha 2x" "--alpha: '2x' is not a finite number" run --backend host -m 10 -n 10 -k 10 --alpha 2x
run_ok "--alpha ' 2 '" -m 17 -n 13 -k 11 --alpha " 2 " --beta "0.5 "
# an abbreviation of several long options names them; a number past 64 bits
# is too large, not "not an integer"
run_bad_says "ambiguous --out" "option --out is ambiguous: --output, --out-format or --out-layout" \
    multiply A.npy B.npy --out C.npy
run_bad_says "ambiguous --out=C.npy" "option --out is ambiguous" multiply A.npy B.npy --out=C.npy
run_bad_says "--block-rows 99999999999999999999" "--block-rows: '99999999999999999999' is too large" \
    run --backend host -m 10 -n 10 -k 10 --block-rows 99999999999999999999
run_bad_says "-m 99999999999999999999" "-m: '99999999999999999999' is too large" \
    run --backend host -m 99999999999999999999 -n 10 -k 10
run_bad "too large" run --backend host -m 9000000000 -n 10 -k 9000000000
# a seed takes every 64-bit value; 2^64 is too large (it was "not a
# non-negative integer"), -1 is not one
run_bad_says "--seed 2^64" "--seed: '18446744073709551616' is too large \(out of range: at most 18446744073709551615\)" \
    gen "$tmp/seed.npy" --rows 2 --cols 2 --seed 18446744073709551616
run_bad_says "--seed -1" "--seed: '-1' is not a non-negative integer" run --backend host -m 2 -n 2 -k 2 --seed -1
run_ok "--seed 2^64 - 1" -m 20 -n 10 -k 5 --seed 18446744073709551615 --no-floor
run_bad "unknown subcommand" frobnicate
run_bad "no subcommand"

# ---- --devices LIST|all: one syntax in run, multiply and bench ----
# The host backend simulates OOC_HOST_DEVICES devices (once the library
# drives several; until then it runs on the first and reports none).
export OOC_HOST_DEVICES=8
for list in 0 0,1 0-3 1,3-4 3,1 0,0,1-2,2 all ALL; do
    if "$OOCGEMM" run --backend host -q -m 60 -n 50 -k 40 --devices "$list" >"$tmp/out" 2>"$tmp/err"; then
        pass "--devices $list: accepted"
    else
        fail "--devices $list: exit $?"
    fi
done
for cmd in run multiply bench; do
    case $cmd in
    run | bench) args=(--backend host -m 10 -n 10 -k 10) ;;
    multiply) args=(A.npy B.npy -o C.npy --backend host) ;;
    esac
    run_bad_says "$cmd --devices 16" "'16' is out of range: device indices go from 0 to 15" $cmd "${args[@]}" --devices 16
    run_bad_says "$cmd --devices 0-16" "'0-16' is out of range" $cmd "${args[@]}" --devices 0-16
    run_bad_says "$cmd --devices ''" "--devices: empty list" $cmd "${args[@]}" --devices ''
    run_bad_says "$cmd --devices 0,,1" "'0,,1' has an empty entry" $cmd "${args[@]}" --devices 0,,1
    run_bad_says "$cmd --devices 1," "'1,' has an empty entry" $cmd "${args[@]}" --devices 1,
    run_bad_says "$cmd --devices 3-1" "'3-1' is an empty range" $cmd "${args[@]}" --devices 3-1
    run_bad_says "$cmd --devices 0,x" "'x' is not a device index or a range N-M" $cmd "${args[@]}" --devices 0,x
    run_bad_says "$cmd --devices -1" "'-1' is not a device index" $cmd "${args[@]}" --devices -1
    run_bad_says "$cmd --devices 1.5" "'1.5' is not a device index" $cmd "${args[@]}" --devices 1.5
    # --device N is --devices N: the same parser, the same messages
    run_bad_says "$cmd --device 16" "--device: '16' is out of range: device indices go from 0 to 15" \
        $cmd "${args[@]}" --device 16
    run_bad_says "$cmd --device x" "--device: 'x' is not a device index" $cmd "${args[@]}" --device x
done
# --device N and --devices N run the same devices (the last one given wins)
for spelling in "--device 1" "--devices 1" "--devices 0 --device 1"; do
    # shellcheck disable=SC2086
    "$OOCGEMM" run --backend host --json -m 200 -n 50 -k 40 --block-rows 50 --no-floor $spelling \
        >"$tmp/out" 2>"$tmp/err"
    json_check "run $spelling: device 1 alone" '
d = o["devices"]
assert [x["device"] for x in d] == [1], d'
done

# the per-device report: one object per device used
"$OOCGEMM" run --backend host --json -m 120 -n 110 -k 100 --devices 0 --no-floor >"$tmp/out" 2>"$tmp/err"
json_check "run --devices 0 --json: a devices list of one" '
d = o["devices"]
assert isinstance(d, list) and len(d) == 1, d
p = o["plan"]
assert all(x["device"] == 0 and x["blocks"] == p["blocks"] * p["panels"] for x in d), d
assert all(x["busy_h2d_s"] is None and x["overlap_efficiency"] is None for x in d), d
assert o["stats"]["b_shared"] is False and o["stats"]["bytes_peer"] == 0, o'
"$OOCGEMM" run --backend host --json -m 500 -n 110 -k 100 --block-rows 50 --devices 0,1 --no-floor \
    --trace "$tmp/trace2.json" >"$tmp/out" 2>"$tmp/err"
json_check "run --devices 0,1 --json: two devices reported" '
d = o["devices"]
assert o["check"]["passed"] is True and isinstance(d, list), d
assert [x["device"] for x in d] == [0, 1], d
assert sum(x["blocks"] for x in d) == o["plan"]["blocks"] * o["plan"]["panels"], d
assert sum(x["bytes_d2h"] for x in d) == o["stats"]["bytes_d2h"], d
assert all(x["time_s"] > 0 and x["busy_compute_s"] is not None for x in d), d
# the devices take blocks as they come: under load one may get none, and
# a device that copied nothing has no overlap efficiency (null)
assert all(x["overlap_efficiency"] is None if x["blocks"] == 0 else 0 <= x["overlap_efficiency"] <= 1
           for x in d), d'
"$OOCGEMM" run --backend host -m 500 -n 110 -k 100 --block-rows 50 --devices 0-1 --no-floor >"$tmp/out" 2>"$tmp/err"
n=$(grep -c '^  simulated device [0-9]*: ' "$tmp/out")
if [ "$n" -eq 2 ]; then
    pass "run --devices 0-1: 2 per-device lines"
else
    fail "run --devices 0-1: $n per-device lines"
fi

# more devices than blocks: those left without one say so, with no
# efficiency (n/a in the text, null in the JSON), never nan
"$OOCGEMM" run --backend host -m 100 -n 50 -k 40 --block-rows 50 --devices 0-3 --no-floor \
    --trace "$tmp/trace4.json" >"$tmp/out" 2>"$tmp/err"
idle=$(grep -c '^  simulated device [0-9]*: 0 blocks, .*overlap efficiency n/a$' "$tmp/out")
if [ "$idle" -ge 2 ] && ! grep -qi 'nan' "$tmp/out" && grep -q 'PASS' "$tmp/out"; then
    pass "run --devices 0-3 on 2 blocks: $idle devices without a block, efficiency n/a"
else
    fail "run --devices 0-3 on 2 blocks: $idle idle-device lines, or nan printed"
fi
"$OOCGEMM" run --backend host --json -m 100 -n 50 -k 40 --block-rows 50 --devices 0-3 --no-floor \
    --trace "$tmp/trace4.json" >"$tmp/out" 2>"$tmp/err"
json_check "run --devices 0-3 on 2 blocks --json: null efficiency where no block" '
d = o["devices"]
assert sum(x["blocks"] for x in d) == 2 and sum(x["blocks"] == 0 for x in d) >= 2, d
assert all(x["overlap_efficiency"] is None for x in d if x["blocks"] == 0), d'

# ---- --peer-b: op(B) to several devices from the host or shared ----
for way in host share auto; do
    "$OOCGEMM" run --backend host --json -m 500 -n 110 -k 100 --block-rows 50 --devices 0-2 --no-floor \
        --peer-b $way >"$tmp/out" 2>"$tmp/err"
    json_check "run --devices 0-2 --peer-b $way --json" '
import sys
way = "'$way'"
assert o["check"]["passed"] is True, o
d = o["devices"]
st = o["stats"]
assert st["b_shared"] is (way == "share"), o
# op(B) is one chunk, uploaded by device 0: copied from it to each other
# device that took blocks (on a loaded machine device 0 may take them all)
assert (st["bytes_peer"] > 0) is (way == "share" and any(x["blocks"] > 0 for x in d[1:])), o
assert sum(x["bytes_peer"] for x in d) == st["bytes_peer"], d
assert ("shared" in st["b_how"]) is (way == "share"), st["b_how"]'
done
"$OOCGEMM" run --backend host -m 500 -n 110 -k 100 --block-rows 50 --devices 0-2 --no-floor --peer-b share \
    >"$tmp/out" 2>"$tmp/err"
if grep -q '^op(B): uploaded once, shared between the devices' "$tmp/out" && grep -q 'from peers' "$tmp/out"; then
    pass "run --peer-b share: says how op(B) went"
else
    fail "run --peer-b share: no op(B) line"
fi
for cmd in run multiply bench; do
    case $cmd in
    run | bench) args=(--backend host -m 10 -n 10 -k 10) ;;
    multiply) args=(A.npy B.npy -o C.npy --backend host) ;;
    esac
    run_bad_says "$cmd --peer-b sometimes" "--peer-b: 'sometimes' is not auto, host or share" \
        $cmd "${args[@]}" --peer-b sometimes
done
unset OOC_HOST_DEVICES

# ---- the host backend's summary speaks of the CPU ----
# It has no device, no copies between host and device, no pinned memory and
# no PCIe: its floor is flops / the CPU's GEMM rate measured in the same run.
host_words() { # NAME [bench]: the summary in out has none of those words, and the CPU's floor
    local ratio='  floor/time: [0-9.]*$'
    [ "${2:-}" = bench ] && ratio='$' # bench: floor/time per method, in its table
    if grep -inE 'device|h2d|d2h|pinned|pcie' "$tmp/out" >"$tmp/words"; then
        fail "$1: the host summary says: $(head -n 3 "$tmp/words" | tr '\n' '|')"
    elif ! grep -q "^CPU: OpenBLAS [SDCZ]GEMM [0-9x]* in memory: " "$tmp/out" ||
        ! grep -q "^floor: flops / the CPU's rate = [0-9.e+-]* s$ratio" "$tmp/out"; then
        fail "$1: no CPU floor in the summary"
    else
        pass "$1: CPU words only ($(grep '^floor:' "$tmp/out"))"
    fi
}
"$OOCGEMM" run --backend host -m 300 -n 200 -k 100 >"$tmp/out" 2>"$tmp/err" &&
    host_words "run --backend host (memory from ooc_host_alloc)"
"$OOCGEMM" run --backend host -m 300 -n 200 -k 100 --memory pageable --trace "$tmp/tr.json" --repeat 2 \
    --dtype c >"$tmp/out" 2>"$tmp/err" && host_words "run --backend host --memory pageable --trace"
"$OOCGEMM" gen "$tmp/HA.npy" --rows 300 --cols 100 -q && "$OOCGEMM" gen "$tmp/HB.npy" --rows 100 --cols 90 -q &&
    "$OOCGEMM" multiply "$tmp/HA.npy" "$tmp/HB.npy" -o "$tmp/HC.npy" --backend host --no-progress \
        --verify >"$tmp/out" 2>"$tmp/err" && host_words "multiply --backend host"
"$OOCGEMM" bench --backend host -m 300 -n 200 -k 100 --repeat 1 >"$tmp/out" 2>"$tmp/err" &&
    host_words "bench --backend host" bench
if grep -q 'best of 1 after a warm-up (ours and in-core cuBLAS: of 3)' "$tmp/out"; then
    pass "bench --repeat 1: the header says ours and in-core ran 3 times"
else
    fail "bench --repeat 1: the header says ours and in-core ran 3 times"
fi

# ---- help and version ----
if "$OOCGEMM" --help >"$tmp/out" 2>"$tmp/err" && grep -q 'run' "$tmp/out"; then
    pass "--help"
else
    fail "--help"
fi
if "$OOCGEMM" run --help >"$tmp/out" 2>"$tmp/err" && grep -q -- '--device-mem' "$tmp/out"; then
    pass "run --help"
else
    fail "run --help"
fi
if "$OOCGEMM" --version >"$tmp/out" 2>"$tmp/err" && grep -q '[0-9]\.[0-9]' "$tmp/out"; then
    pass "--version: $(head -n 1 "$tmp/out")"
else
    fail "--version"
fi

# ---- the timeline trace ----
if "$OOCGEMM" run --backend host -m 900 -n 130 -k 170 --block-rows 100 --memory pageable --b-chunks 3 \
        --trace "$tmp/trace.json" >"$tmp/out" 2>"$tmp/err" &&
    grep -q 'overlap efficiency' "$tmp/out" && grep -q '"traceEvents"' "$tmp/trace.json" &&
    [ "$(grep -c '"name":"gemm' "$tmp/trace.json")" -ge 9 ] && grep -q 'PASS' "$tmp/out"; then
    pass "run --trace: $(grep -c '"ph":"X"' "$tmp/trace.json") ops on the timeline"
else
    fail "run --trace" "$(cat "$tmp/out" "$tmp/err")"
fi

# a trace whose write fails (at the end) warns and says why in the JSON; one
# that cannot be made where it is asked is a bad command line, said at once
if "$OOCGEMM" run --backend host -m 90 -n 13 -k 17 --no-floor --trace /dev/full --json >"$tmp/out" 2>"$tmp/err" &&
    grep -q 'warning: the trace was not written' "$tmp/err" && grep -q '"trace_error":"trace: writing /dev/full' "$tmp/out"; then
    pass "run --trace /dev/full: exit 0, a warning and the JSON's trace_error"
else
    fail "run --trace /dev/full" "$(cat "$tmp/out" "$tmp/err")"
fi
for t in /nonexistent/t.json "$tmp" ""; do
    "$OOCGEMM" run --backend host -m 90 -n 13 -k 17 --no-floor --trace "$t" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q -- "--trace '$t'" "$tmp/err" && [ ! -s "$tmp/out" ]; then
        pass "run --trace '$t': exit 2 before running: $(head -n 1 "$tmp/err")"
    else
        fail "run --trace '$t': exit $rc (expected 2 before running)" "$(cat "$tmp/out" "$tmp/err")"
    fi
done

# ---- bench (the peers need a GPU; ours and the floor run on the host backend) ----
if "$OOCGEMM" bench -m 300 -n 200 -k 100 --backend host --repeat 1 >"$tmp/out" 2>"$tmp/err" &&
    grep -q '^  ours .* PASS' "$tmp/out" && grep -q 'peers skipped' "$tmp/out"; then
    pass "bench --backend host"
else
    fail "bench --backend host" "$(cat "$tmp/out" "$tmp/err")"
fi
if "$OOCGEMM" bench -m 200 -n 100 -k 50 --backend host --repeat 1 --csv >"$tmp/out" 2>"$tmp/err" &&
    [ "$(head -n 1 "$tmp/out" | tr -cd ',' | wc -c)" -eq "$(sed -n 2p "$tmp/out" | tr -cd ',' | wc -c)" ] &&
    [ "$(sed -n 2p "$tmp/out" | cut -d, -f13,14)" = "," ] && [ -n "$(sed -n 2p "$tmp/out" | cut -d, -f15)" ]; then
    pass "bench --csv (a CPU floor: no bandwidths, empty as JSON's null; the in-core rate given)"
else
    fail "bench --csv (or a CPU floor's bandwidths not empty)" "$(cat "$tmp/out" "$tmp/err")"
fi

# bench --devices on the host backend (simulated devices): ours on all of
# them and on the first alone, the scaling; the floor of several GPUs is n/a
export OOC_HOST_DEVICES=2
if "$OOCGEMM" bench -m 300 -n 200 -k 100 --backend host --repeat 1 --devices 0,1 >"$tmp/out" 2>"$tmp/err" &&
    grep -q '^  ours  .* PASS' "$tmp/out" && grep -q '^  ours, device 0 alone .* PASS' "$tmp/out" &&
    grep -q '^scaling: ours on devices 0-1 = [0-9.]* x ours on device 0 alone' "$tmp/out" &&
    grep -q '^floor: n/a' "$tmp/out" && grep -q 'peers skipped' "$tmp/out"; then
    pass "bench --devices 0,1 --backend host"
else
    fail "bench --devices 0,1 --backend host"
fi
"$OOCGEMM" bench -m 300 -n 200 -k 100 --backend host --repeat 1 --devices 1,0 --json >"$tmp/out" 2>"$tmp/err"
json_check "bench --devices 1,0 --json: devices, the first, both ours, scaling" '
s = o["shapes"][0]
assert s["device_list"] == [1, 0] and s["first_device"] == 1, s["device_list"]
m = [(x["label"], x["on_devices"], x["check"]["passed"]) for x in s["methods"]]
assert m == [("ours", "all", True), ("ours, device 1 alone", "first", True), ("ours, op(B) shared", "all", True)], m
assert s["scaling"] > 0 and s["floor"] is None and s["floor_note"], s
d = s["devices"]
assert sorted(x["device"] for x in d) == [0, 1], d
assert s["stats"]["b_shared"] is False, s["stats"]'
# with a GPU: ours keeps op(A) resident for a small k with C column-major
# (C out in contiguous columns); the serial loop then keeps its own block
# rows, not ours (columns of C). On one GPU (--devices 0): on several, bench
# runs its several-GPU methods, without the serial loop
if "$OOCGEMM" info 2>/dev/null | grep -q '^GPU 0: '; then
    "$OOCGEMM" bench -m 32768 -n 8192 -k 64 --repeat 1 --no-xt --no-incore --devices 0 --json >"$tmp/out" 2>"$tmp/err"
    json_check "bench, op(A) resident: the serial loop with its own block rows" '
s = o["shapes"][0]
assert s["plan"]["a_resident"] and s["plan"]["block_rows"] != 8192, s["plan"]
m = [x["label"] for x in s["methods"] if x["method"] == "serial"]
assert m == ["serial loop (8192 rows)"], m'
fi
"$OOCGEMM" bench -m 300 -n 200 -k 100 --backend host --repeat 1 --no-serial --json >"$tmp/out" 2>"$tmp/err"
json_check "bench --repeat 1: ours still runs 3 times (the floor's pair, best of 3 each)" '
s = o["shapes"][0]
m = s["methods"][0]
assert m["method"] == "ours" and len(m["times_s"]) == 3, m
assert m["best_s"] == min(m["times_s"]) and all(t > 0 for t in m["times_s"]), m'
if "$OOCGEMM" bench -m 200 -n 100 -k 50 --backend host --repeat 1 --devices all --csv >"$tmp/out" 2>"$tmp/err" &&
    [ "$(head -n 1 "$tmp/out" | tr -cd ',' | wc -c)" -eq "$(sed -n 2p "$tmp/out" | tr -cd ',' | wc -c)" ] &&
    sed -n 2p "$tmp/out" | grep -q ',all,all,,,[0-9.]*$'; then
    pass "bench --devices all --csv"
else
    fail "bench --devices all --csv"
fi
unset OOC_HOST_DEVICES

# alpha = 0: nothing multiplied, no floor and no rate (it used to divide a
# whole multiply's floor by the time of scaling C: floor/time 1952788)
"$OOCGEMM" run --backend host -m 300 -n 200 -k 100 --alpha 0 --beta 1 --repeat 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^floor: n/a (nothing was multiplied' "$tmp/out" &&
    grep -q 'rate: n/a (nothing multiplied)' "$tmp/out" && ! grep -q 'floor/time' "$tmp/out"; then
    pass "alpha 0: no floor, no rate"
else
    fail "alpha 0: exit $rc, $(grep -E '^(floor|time)' "$tmp/out" | tr '\n' ' ')"
fi

# budgets too small: exit 3, and the message gives the least budgets that
# plan; with exactly those the same multiply runs and passes its check
"$OOCGEMM" run --backend host -m 50 -n 20 -k 10 --memory pageable --device-mem 1K --host-mem 1K \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
need_dev=$(sed -n 's/.*device memory budget of at least \([0-9]*\) bytes.*/\1/p' "$tmp/err")
need_host=$(sed -n 's/.*staging budget of at least \([0-9]*\) bytes.*/\1/p' "$tmp/err")
# (with the ring chosen automatically, the alignment of the ring of 2 it can
# fall back on, not of the deepest ring: 12800 bytes more, which refused
# budgets that a ring of 2 fits)
if [ "$rc" -eq 3 ] && [ -n "$need_dev" ] && [ -n "$need_host" ] && [ "$need_dev" -lt 12800 ]; then
    pass "budgets too small: exit 3, needs $need_dev and $need_host bytes"
    run_ok "budgets the message asked for" -m 50 -n 20 -k 10 --memory pageable --no-floor \
        --device-mem "$need_dev" --host-mem "$need_host"
    "$OOCGEMM" run --backend host -m 50 -n 20 -k 10 --memory pageable --no-floor \
        --device-mem "$((need_dev - 1))" --host-mem "$need_host" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 3 ]; then pass "a byte less of device memory: exit 3"
    else fail "a byte less of device memory: exit $rc, expected 3"; fi
else
    fail "budgets too small: exit $rc, expected 3 and the least budgets in the message"
fi

# a staging budget too small for --stage-chunk's buffers, the device memory
# ample: the staging alone is named (it named a device budget of 32 KB and
# 5 GB of staging for this 3 MB problem), with the chunk's buffers; with it
# the multiply runs, and 1% less is refused
"$OOCGEMM" run --backend host -m 700 -n 300 -k 200 --memory pageable --stage-chunk 64M --host-mem 300M \
    --no-floor >"$tmp/out" 2>"$tmp/err"
rc=$?
need_host=$(sed -n 's/.*it needs a staging budget of at least \([0-9]*\) bytes (3 buffers of 67108864 bytes.*OOC_PARAM_STAGE_CHUNK.*/\1/p' "$tmp/err")
if [ "$rc" -eq 3 ] && [ -n "$need_host" ] && [ "$need_host" -gt 314572800 ] && [ "$need_host" -lt 419430400 ] &&
    ! grep -q "device memory budget of at least" "$tmp/err"; then
    pass "staging too small for --stage-chunk's buffers: exit 3, the staging alone named ($need_host bytes)"
    run_ok "the staging the message named" -m 700 -n 300 -k 200 --memory pageable --stage-chunk 64M \
        --host-mem "$need_host" --no-floor
    "$OOCGEMM" run --backend host -m 700 -n 300 -k 200 --memory pageable --stage-chunk 64M \
        --host-mem "$((need_host - need_host / 100))" --no-floor >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 3 ]; then pass "1% less staging: exit 3"; else fail "1% less staging: exit $rc, expected 3"; fi
else
    fail "staging too small for --stage-chunk's buffers: exit $rc, expected 3 naming the staging alone: $(head -c 500 "$tmp/err")"
fi

# a budget in the wrong unit (2128 meant as MiB) that fits only 1x1x1 tiles
# (the least that does: doubles on 16-byte pitches, backend.h ooc_tiles_aligned):
# refused at once with the least budget that plans tiles worth running (it
# had run for hours, 8e9 tiles); within 1% of it the plan is refused still
# (test_plan: at it, useful)
start=$(date +%s)
timeout 60 "$OOCGEMM" run --backend host -m 2000 -n 2000 -k 2000 --device-mem 2128 --no-floor \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
need_dev=$(sed -n 's/.*device memory budget of at least \([0-9]*\) bytes.*/\1/p' "$tmp/err")
if [ "$rc" -eq 3 ] && [ $(($(date +%s) - start)) -lt 20 ] && grep -q "fit only tiles of 1 x 1 x 1" "$tmp/err" &&
    [ -n "$need_dev" ] && [ "$need_dev" -gt 2128 ]; then
    pass "a budget fitting only tiny tiles: exit 3 at once, needs $need_dev bytes"
    timeout 60 "$OOCGEMM" run --backend host -m 2000 -n 2000 -k 2000 --no-floor \
        --device-mem "$((need_dev - need_dev / 100))" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 3 ] && grep -q "fit only tiles" "$tmp/err"; then pass "1% less than that: refused too"
    else fail "1% less than the least useful budget: exit $rc, expected 3"; fi
else
    fail "a budget fitting only tiny tiles: exit $rc (expected 3 at once with the least budget): $(head -c 300 "$tmp/err")"
fi

# the same limited by the staging of 4 devices: the staging named for all of
# them, above what was given (it named a device's share: 8192 for 16384 given)
OOC_HOST_DEVICES=4 timeout 60 "$OOCGEMM" run --backend host -m 2000 -n 2000 -k 2000 --memory pageable \
    --host-mem 16384 --device-mem 1G --no-floor >"$tmp/out" 2>"$tmp/err"
rc=$?
need_host=$(sed -n 's/.*staging budget of at least \([0-9]*\) bytes for all the devices.*/\1/p' "$tmp/err")
if [ "$rc" -eq 3 ] && [ -n "$need_host" ] && [ "$need_host" -gt 16384 ] && ! grep -q "device memory budget of at least" "$tmp/err"; then
    pass "staging of 4 devices fitting only tiny tiles: exit 3, needs $need_host bytes for all the devices"
else
    fail "staging of 4 devices fitting only tiny tiles: exit $rc, expected 3 naming the staging for all: $(head -c 400 "$tmp/err")"
fi

# --tf32 on the host backend (OpenBLAS multiplies in float32): the check kept
# TF32's tolerance, 2^-7 more, and would have passed a result 0.8% off (a hunt)
timeout 60 "$OOCGEMM" run --backend host --dtype s --tf32 -m 300 -n 100 -k 50 --no-floor --json >"$tmp/out" 2>"$tmp/err"
json_check "--tf32 on the host backend: float32's tolerance" "assert o['exit_status'] == 0 and o['check']['tolerance'] < 1e-4, o['check']"
# bench's scalars fit the element type, as run's (1e39 was Inf in float32: FAIL, exit 1)
run_bad_says "bench --alpha past float32" "not representable in float32" bench --backend host -m 30 -n 20 -k 10 \
    --dtype s --alpha 1e39
# bench with alpha 0 (C = beta C0, nothing multiplied): no rate (it printed one)
timeout 60 "$OOCGEMM" bench --backend host -m 300 -n 200 -k 100 --alpha 0 --beta 1 --json >"$tmp/out" 2>"$tmp/err"
json_check "bench --alpha 0: no rate" "assert all(m['tflops'] is None for s in o['shapes'] for m in s['methods']), o['shapes']"
# --json abbreviated as getopt_long takes it (--js): one object on failure too
timeout 60 "$OOCGEMM" run --backend host -m 0 -n 10 -k 5 --js >"$tmp/out" 2>"$tmp/err"
json_check "--js (--json abbreviated) with a bad -m: one object" "assert o['exit_status'] == 2"
timeout 60 "$OOCGEMM" run --backend host -m 0 -n 10 -k 5 --j >"$tmp/out" 2>"$tmp/err"
json_check "--j (--json abbreviated, run has no other --j option) with a bad -m: one object" "assert o['exit_status'] == 2"
# what was printed, lost (/dev/full): exit 6 and a message, not 0
if [ -w /dev/full ]; then
    timeout 60 "$OOCGEMM" run --backend host -m 30 -n 20 -k 10 --no-floor --json >/dev/full 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 6 ] && grep -q "standard output: write error" "$tmp/err"; then
        pass "standard output full: exit 6, said"
    else
        fail "standard output full: exit $rc (expected 6 and a message)"
    fi
fi
# a product past float32's range (alpha 3e38): the check says it cannot
# decide, not that C is off ("max relative error inf exceeds the tolerance")
timeout 60 "$OOCGEMM" run --backend host --dtype s -m 300 -n 200 -k 1000 --alpha 3e38 --no-floor --json >"$tmp/out" 2>"$tmp/err"
json_check "run, float32 product overflowing: exit 1, the check undecided" \
    "assert o['exit_status'] == 1 and o['error'].startswith('check undecided:') and 'float32' in o['error'] and o['check']['passed'] is False, o"
timeout 60 "$OOCGEMM" bench --backend host --dtype s -m 300 -n 200 -k 1000 --alpha 3e38 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "^  ours .*UNDECIDED" "$tmp/out"; then
    pass "bench, float32 product overflowing: exit 1, ours UNDECIDED"
else
    fail "bench, float32 product overflowing: exit $rc (expected 1), or ours not UNDECIDED: $(grep '^  ours' "$tmp/out")"
fi
# bench --trace: ours' last timed run traced (the earlier runs untraced)
rm -f "$tmp/bt.json"
timeout 60 "$OOCGEMM" bench --backend host -m 600 -n 400 -k 300 --repeat 2 --trace "$tmp/bt.json" --json >"$tmp/out" 2>"$tmp/err"
if python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert any(e.get("name") == "gemm" for e in d["traceEvents"])' \
    "$tmp/bt.json" 2>/dev/null && python3 -c 'import json, sys; assert json.load(sys.stdin)["exit_status"] == 0' <"$tmp/out"; then
    pass "bench --trace --repeat 2: a trace of ours"
else
    fail "bench --trace --repeat 2: no trace, or bench failed: $(head -c 300 "$tmp/err")"
fi
# the host backend's test delays given as -1: none (strtoul wrapped them to
# an hour and more per operation, so the run never ended)
OOC_HOST_JITTER_US=-1 OOC_HOST_D2H_DELAY_US=-1 timeout 20 "$OOCGEMM" run --backend host -m 300 -n 200 -k 100 \
    --block-rows 64 --no-floor --json >"$tmp/out" 2>"$tmp/err"
json_check "OOC_HOST_JITTER_US=-1 and OOC_HOST_D2H_DELAY_US=-1: no delay" "assert o['exit_status'] == 0, o"
# and a number with something after it: none either, as the man page says
# (strtoul read "60000000x" as a minute per operation)
OOC_HOST_JITTER_US=60000000x OOC_HOST_D2H_DELAY_US=60000000s timeout 20 "$OOCGEMM" run --backend host -m 300 -n 200 \
    -k 100 --block-rows 64 --no-floor --json >"$tmp/out" 2>"$tmp/err"
json_check "OOC_HOST_JITTER_US=60000000x and OOC_HOST_D2H_DELAY_US=60000000s: no delay" "assert o['exit_status'] == 0, o"
echo "$cases cases, $failures failed"
[ "$failures" -eq 0 ]
