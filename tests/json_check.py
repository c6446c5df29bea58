# SPDX-License-Identifier: MIT
"""json_check.py: every oocgemm subcommand's --json against the one schema
(run by tests/test_json.sh; the schema is the man page's JSON OUTPUT).

Runs gen, multiply, verify, info, run and bench with --json through the host
backend: successes, failures (a missing input, a failed check, a refused
--dtype, a commit cut short: resumable), a usage error of every command, and
a file name that is not UTF-8 (bytes 0xff 0xfe, made in the work directory).
Each run must print exactly
one line on stdout that is strict UTF-8 and parses with json.loads into an
object with command (the subcommand), version (the tool's), library_version,
exit_status (the process's) and error (null exactly when exit_status is 0).
Anywhere in it: a "dtype" is a NumPy name; a "layout" row or col; a "shape"
(or "*_shape") is {"m", "n", "k"} and m, n, k appear nowhere else; "plan",
"floor", "check", a matrix file and each of "devices" have their one set of
keys; "ranks" (multiply under mpirun, tests/test_mpi.sh; "ranks_split" says
whether their ranges are rows, columns or both, a grid) lists one object
per rank with its one set of keys. Prints one line per case; exits 1 on any failure.

Usage: json_check.py OOCGEMM WORKDIR
"""
import json
import re
import os
import subprocess
import sys

DTYPES = {"float32", "float64", "complex64", "complex128"}
PLAN_KEYS = {"block_rows", "panel_cols", "panel_depth", "blocks", "panels", "ring_depth", "a_pieces", "c_chunks", "b_follow", "aligned_tiles", "resident_transposed",
             "streams", "staged_a", "staged_c", "stage_chunk", "stage_bufs", "stage_cin_chunk", "stage_cin_bufs", "stage_out_chunk", "stage_out_bufs", "a_resident", "device_bytes", "host_bytes"}
FLOOR_KEYS = {"kind", "time_s", "over_time", "rate_tflops", "rate_measured", "probe_shape", "gpus", "bw_h2d_gbps",
              "bw_d2h_gbps", "bw_both_gbps", "bw_measured", "bw_both_measured", "host_measured", "in_s", "out_s", "bus_s", "math_s",
              "host_gbps", "host_s", "bytes_in", "bytes_out", "bytes_staged", "host_traffic_bytes",
              "least_traffic_bytes"}
CHECK_KEYS = {"method", "rows", "vectors", "max_rel_err", "max_rel_err_infinite", "tolerance", "passed", "bytes_read", "rows_unverified",
              "off", "first_off_row"}
FILE_KEYS = {"path", "format", "rows", "cols", "dtype", "layout"}
DEVICE_KEYS = {"device", "blocks", "bytes_h2d", "bytes_d2h", "bytes_peer", "time_s", "busy_h2d_s", "busy_compute_s",
               "busy_d2h_s", "busy_read_s", "busy_write_s", "trace_wall_s", "overlap_efficiency"}
RANK_KEYS = {"rank", "host", "devices", "blocks", "time_s", "bytes_read", "bytes_written"}  # + the range's two
GPU_KEYS = {"device", "error", "name", "compute_capability", "multiprocessors", "memory_total", "memory_free",
            "copy_engines", "pci_bus_id", "pcie_gen", "pcie_width", "numa_node", "bandwidth_bytes", "h2d_gbps", "d2h_gbps"}

failures = 0


def walk(v, where, command):
    """Check every key of v (recursively) against the schema's conventions."""
    if isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, "%s[%d]" % (where, i), command)
        return
    if not isinstance(v, dict):
        return
    for key, x in v.items():
        at = where + "." + key
        if key == "dtype":
            assert x is None or x in DTYPES, "%s = %r: not a NumPy name" % (at, x)
        elif key == "layout":
            assert x is None or x in ("row", "col"), "%s = %r" % (at, x)
        elif key in ("transa", "transb"):
            assert x in ("N", "T", "C"), "%s = %r" % (at, x)
        elif key == "shape" or key.endswith("_shape"):
            assert x is None or (isinstance(x, dict) and set(x) == {"m", "n", "k"}), "%s = %r" % (at, x)
            assert x is None or all(isinstance(x[d], int) for d in "mnk"), "%s = %r" % (at, x)
            continue  # m, n, k belong here
        elif key in ("m", "n", "k"):
            raise AssertionError("%s: m, n, k outside a shape" % at)
        elif key == "plan":
            assert x is None or set(x) == PLAN_KEYS, "%s: keys %r" % (at, sorted(x))
        elif key in ("floor", "probe_floor"):
            assert x is None or set(x) == FLOOR_KEYS, "%s: keys %r" % (at, sorted(x))
            assert x is None or x["kind"] in ("gpu", "cpu"), "%s.kind = %r" % (at, x["kind"])
        elif key == "backend_reason":
            assert x is None or x.startswith("CUDA not used: "), "%s = %r" % (at, x)
            assert x is None or v.get("backend") == "host", "%s with backend %r" % (at, v.get("backend"))
        elif key == "check":
            assert x is None or set(x) == CHECK_KEYS, "%s: keys %r" % (at, sorted(x))
            # null max_rel_err: infinite (C holds a NaN or inf), said apart
            assert x is None or (x["max_rel_err"] is None) == (x["max_rel_err_infinite"] is True), \
                "%s: max_rel_err %r, max_rel_err_infinite %r" % (at, x["max_rel_err"], x["max_rel_err_infinite"])
        elif key == "ranks_split":  # C's rows, its columns (op(A) resident), or a grid of rectangles
            assert x in ("rows", "columns", "grid") and "ranks" in v, "%s = %r" % (at, x)
        elif key == "ranks":  # multiply under mpirun/srun: one object per rank
            assert isinstance(x, list) and x, "%s: not a list of ranks" % at
            split = v.get("ranks_split")
            assert split in ("rows", "columns", "grid"), "%s: ranks_split = %r" % (at, split)
            ends = set()
            if split != "columns":
                ends |= {"row_begin", "row_end"}
            if split != "rows":
                ends |= {"col_begin", "col_end"}
            for i, r in enumerate(x):
                assert set(r) == RANK_KEYS | ends, "%s[%d]: keys %r" % (at, i, sorted(r))
                assert r["rank"] == i and all(isinstance(d, int) for d in r["devices"]), "%s[%d] = %r" % (at, i, r)
            continue  # a rank's "devices" are indices
        elif key == "devices":
            assert isinstance(x, list), "%s: not a list" % at
            want = GPU_KEYS if command == "info" else DEVICE_KEYS
            for i, d in enumerate(x):
                assert set(d) == want, "%s[%d]: keys %r" % (at, i, sorted(d))
        elif isinstance(x, dict) and "path" in x:
            assert set(x) == FILE_KEYS, "%s: keys %r" % (at, sorted(x))
        walk(x, at, command)


def keys_named(o, common, words):
    """Every key of o but the common ones is one of words (a --help's)."""
    unnamed = [k for k in o if k not in common and k not in words]
    assert not unnamed, "keys its --help does not name: %r" % unnamed


def case(name, tool, args, want_command, want_rc=None, env=None, check=None):
    """Run oocgemm ARGS and check its one JSON object; check(o) adds asserts."""
    global failures
    r = subprocess.run([tool] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                       env=dict(os.environ, **(env or {})))
    try:
        if want_rc is not None:
            assert r.returncode == want_rc, "exit %d, expected %d" % (r.returncode, want_rc)
        lines = r.stdout.split(b"\n")
        assert len(lines) == 2 and lines[1] == b"", "%d lines on stdout, expected one" % (len(lines) - 1)
        text = lines[0].decode("utf-8")  # strict: invalid UTF-8 raises
        o = json.loads(text)
        assert isinstance(o, dict), "not an object"
        for key in ("command", "version", "library_version", "exit_status", "error"):
            assert key in o, "no %r" % key
        assert o["command"] == want_command, "command %r, expected %r" % (o["command"], want_command)
        assert o["version"] == VERSION, "version %r, expected %r" % (o["version"], VERSION)
        assert o["exit_status"] == r.returncode, "exit_status %r, the process exited %d" % (
            o["exit_status"], r.returncode)
        assert (o["error"] is None) == (r.returncode == 0), "error %r with exit %d" % (o["error"], r.returncode)
        assert o["error"] is None or (isinstance(o["error"], str) and o["error"]), "error %r" % o["error"]
        walk(o, "", want_command)
        if check:
            check(o)
        print("PASS: %s: exit %d" % (name, r.returncode))
    except (AssertionError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        failures += 1
        print("FAIL: %s: %s" % (name, e))
        print("    | stdout: %r" % r.stdout[:600])
        print("    | stderr: %r" % r.stderr[:600])


def main():
    global VERSION
    tool, work = sys.argv[1], sys.argv[2]
    os.chdir(work)
    out = subprocess.run([tool, "--version"], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    VERSION = out.split("\n")[0].split()[-1]
    H = ["--backend", "host"]

    # gen: npy and raw; a file name that is not UTF-8
    case("gen npy", tool, ["gen", "A.npy", "--rows", "120", "--cols", "80", "--json"], "gen", 0,
         check=lambda o: (o["file"]["dtype"] == "float64" or 1 / 0, o["file"]["layout"] == "row" or 1 / 0))
    case("gen raw c col", tool, ["gen", "B.bin", "--rows", "80", "--cols", "60", "--dtype", "c", "--layout", "col",
                                 "--json"], "gen", 0,
         check=lambda o: o["file"] == {"path": "B.bin", "format": "raw", "rows": 80, "cols": 60,
                                       "dtype": "complex64", "layout": "col"} or 1 / 0)
    case("gen B.npy", tool, ["gen", "B.npy", "--rows", "80", "--cols", "60", "--json"], "gen", 0)
    bad = b"A\xff\xfe.npy"
    case("gen to a non-UTF-8 name", tool, ["gen", bad, "--rows", "120", "--cols", "80", "--json"], "gen", 0,
         check=lambda o: o["file"]["path"] == "A\ufffd\ufffd.npy" or 1 / 0)

    # multiply: success with --verify, the non-UTF-8 operand, failures
    case("multiply --verify", tool, ["multiply", "A.npy", "B.npy", "-o", "C.npy", "--verify", "--no-progress"] + H +
         ["--json"], "multiply", 0,
         check=lambda o: (o["shape"] == {"m": 120, "n": 60, "k": 80} or 1 / 0, o["check"]["passed"] or 1 / 0))
    case("multiply, A named in another encoding", tool, ["multiply", bad, "B.npy", "-o", "C2.npy", "--no-floor",
                                                          "--no-progress"] + H + ["--json"], "multiply", 0,
         check=lambda o: o["files"]["a"]["path"] == "A\ufffd\ufffd.npy" or 1 / 0)
    case("multiply, a missing input with a non-UTF-8 name", tool,
         ["multiply", b"missing\xc3(.npy", "B.npy", "-o", "C3.npy"] + H + ["--json"], "multiply", 4,
         check=lambda o: "\ufffd" in o["error"] or 1 / 0)
    case("multiply --dtype refused", tool, ["multiply", "A.npy", "B.npy", "-o", "C4.npy", "--dtype", "s"] + H +
         ["--json"], "multiply", 2, check=lambda o: ("float32" in o["error"] and "float64" in o["error"]) or 1 / 0)
    case("multiply: the CPU's floor on the host backend", tool, ["multiply", "A.npy", "B.npy", "-o", "C5.npy", "--no-progress"] + H +
         ["--json"], "multiply", 0, check=lambda o: o["floor"]["kind"] == "cpu" or 1 / 0)
    # the commit cut short (the rename fails): the complete result is left in
    # C.ooc-tmp, which the same command with --resume commits: resumable (it
    # said false, the message on stderr saying to resume)
    for resume in ([], ["--resume"]):
        case("multiply, the commit cut short" + (" (--resume)" if resume else ""), tool,
             ["multiply", "A.npy", "B.npy", "-o", "C6.npy", "--no-floor", "--no-progress"] + resume + H + ["--json"],
             "multiply", 6, env={"OOC_FAULT": "commit:1"},
             check=lambda o: (o["resumable"] is True and o["resume_keeps_blocks"] is True) or 1 / 0)
        case("multiply --resume commits it", tool, ["multiply", "A.npy", "B.npy", "-o", "C6.npy", "--resume",
                                                   "--no-floor", "--no-progress"] + H + ["--json"], "multiply", 0,
             check=lambda o: (o["resumed"] is True and o["resumable"] is False) or 1 / 0)
        os.remove("C6.npy")
        if os.path.exists("C6.npy.ooc-journal"):
            os.remove("C6.npy.ooc-journal")

    # multiply --help lists the keys of its object, in their order (it
    # named "bytes" and "bounds", which it has not); "ranks_split" and
    # "ranks" are a split job's (tests/test_mpi.sh)
    helped = {}
    case("multiply --help's keys", tool, ["multiply", "--help", "--json"], "multiply", 0,
         check=lambda o: helped.update(text=o["help"]))
    listed = re.sub(r"\s+", " ", helped.get("text", "").split("with the keys", 1)[-1].split("-h, --help")[0])
    listed = [k.strip(" ,()") for k in listed.replace("(under mpirun:", ",").split(",")]
    listed = [k for k in listed if k and k not in ("ranks_split", "ranks")]
    case("multiply --json has the keys its --help lists", tool,
         ["multiply", "A.npy", "B.npy", "-o", "C7.npy", "--no-floor", "--no-progress"] + H + ["--json"], "multiply",
         0, check=lambda o: list(o.keys()) == listed or 1 / 0)

    # verify: pass, and a failed check (exit 1: error set)
    case("verify", tool, ["verify", "A.npy", "B.npy", "C.npy", "--json"], "verify", 0)
    case("verify, wrong alpha", tool, ["verify", "A.npy", "B.npy", "C.npy", "--alpha", "2", "--json"], "verify", 1,
         check=lambda o: o["check"]["passed"] is False or 1 / 0)
    # a C holding a NaN: max_rel_err is null, as a figure not measured would
    # be; max_rel_err_infinite says which (there was no telling them apart)
    with open("C.npy", "rb") as f:
        data = bytearray(f.read())
    data[-8:] = b"\x00\x00\x00\x00\x00\x00\xf8\x7f"  # the last element: a float64 NaN
    with open("Cnan.npy", "wb") as f:
        f.write(data)
    case("verify, C holds a NaN", tool, ["verify", "A.npy", "B.npy", "Cnan.npy", "--json"], "verify", 1,
         check=lambda o: (o["check"]["passed"] is False and o["check"]["max_rel_err"] is None and
                          o["check"]["max_rel_err_infinite"] is True) or 1 / 0)
    case("verify: a finite error is not infinite", tool, ["verify", "A.npy", "B.npy", "C.npy", "--json"], "verify", 0,
         check=lambda o: (o["check"]["max_rel_err"] is not None and o["check"]["max_rel_err_infinite"] is False)
         or 1 / 0)

    # info, run, bench
    info = {}
    case("info", tool, ["info", "--no-measure", "--json"], "info", 0,
         check=lambda o: (info.update(o), o["cuda_status"] in ("usable", "no_device", "unavailable") or 1 / 0,
                          (o["cuda_status"] == "usable") == (o["device_count"] > 0) or 1 / 0,
                          o["compute_id"].startswith(o["backend"] + "/") or 1 / 0))
    case("info --backend host", tool, ["info", "--no-measure", "--backend", "host", "--json"], "info", 0,
         check=lambda o: (o["backend"] == "host" and o["compute_id"].startswith("host/openblas-")) or 1 / 0)
    # without a GPU, the host backend says why CUDA is not used; with one,
    # --backend host needs no reason
    no_gpu = info.get("device_count", 0) == 0
    case("run: why the host backend", tool, ["run", "-m", "90", "-n", "70", "-k", "50", "--json"], "run", 0,
         check=lambda o: (o["backend"] != "host" or (o["backend_reason"] is not None) == no_gpu) or 1 / 0)
    for dt in ("s", "d", "c", "z"):
        case("run --dtype " + dt, tool, ["run", "-m", "90", "-n", "70", "-k", "50", "--dtype", dt] + H + ["--json"],
             "run", 0)
    case("run --no-floor, 2 devices", tool, ["run", "-m", "300", "-n", "70", "-k", "50", "--block-rows", "50",
                                             "--devices", "0,1", "--no-floor", "--trace", "t.json"] + H + ["--json"],
         "run", 0, env={"OOC_HOST_DEVICES": "2"},
         check=lambda o: (o["floor"] is None or 1 / 0, len(o["devices"]) == 2 or 1 / 0))
    case("bench", tool, ["bench", "-m", "90", "-n", "70", "-k", "50", "--repeat", "1"] + H + ["--json"], "bench", 0,
         check=lambda o: o["shapes"][0]["dtype"] == "float64" or 1 / 0)
    case("bench --dtype c, 2 devices", tool, ["bench", "-m", "90", "-n", "70", "-k", "50", "--repeat", "1", "--dtype",
                                              "c", "--devices", "0,1"] + H + ["--json"], "bench", 0,
         env={"OOC_HOST_DEVICES": "2"})

    # each other command's --help names every key of its object in its --json
    # entry (verify's left out dtype, transa, transb, alpha and beta; run's
    # backend_reason)
    common = ("command", "version", "library_version", "exit_status", "error")
    runs = {"gen": ["gen", "D.npy", "--rows", "20", "--cols", "10"],
            "verify": ["verify", "A.npy", "B.npy", "C.npy"],
            "info": ["info", "--no-measure"],
            "run": ["run", "-m", "90", "-n", "70", "-k", "50"] + H,
            "bench": ["bench", "-m", "90", "-n", "70", "-k", "50", "--repeat", "1"] + H}
    for cmd, args in runs.items():
        said = {}
        case(cmd + " --help's --json entry", tool, [cmd, "--help", "--json"], cmd, 0,
             check=lambda o, d=said: d.update(text=o["help"]))
        entry = said.get("text", "").split("  --json", 1)[-1].split("\n  -", 1)[0]
        words = set(re.findall(r"[a-z_0-9]+", entry))
        case(cmd + " --json: each key named by its --help", tool, args + ["--json"], cmd, 0,
             check=lambda o, w=words: keys_named(o, common, w))
        if os.path.exists("D.npy"):
            os.remove("D.npy")

    # usage errors: one object each, exit 2, with the message
    for cmd in ("gen", "multiply", "verify", "info", "run", "bench"):
        case(cmd + " --frobnicate", tool, [cmd, "--frobnicate", "--json"], cmd, 2,
             check=lambda o: "frobnicate" in o["error"] or 1 / 0)
    case("run -m 0", tool, ["run", "-m", "0", "-n", "5", "-k", "5", "--json"], "run", 2)
    # --help and --version: the one object too, the text as its "help"
    for cmd in ("gen", "multiply", "verify", "info", "run", "bench"):
        case(cmd + " --help", tool, [cmd, "--help", "--json"], cmd, 0,
             check=lambda o, c=cmd: o["help"].startswith("Usage: oocgemm " + c) and "Exit status:" in o["help"]
             or 1 / 0)
    case("help run", tool, ["help", "run", "--json"], "run", 0,
         check=lambda o: o["help"].startswith("Usage: oocgemm run") or 1 / 0)
    case("--help", tool, ["--help", "--json"], None, 0, check=lambda o: "oocgemm gen" in o["help"] or 1 / 0)
    case("help --json", tool, ["help", "--json"], None, 0, check=lambda o: "oocgemm gen" in o["help"] or 1 / 0)
    # a subnormal alpha is a number; one that underflows to 0 is refused
    case("run --alpha 1e-310", tool, ["run", "-m", "30", "-n", "20", "-k", "10", "--alpha", "1e-310", "--json"] + H,
         "run", 0, check=lambda o: o["alpha"] == 1e-310 or 1 / 0)
    case("run --alpha 1e-400", tool, ["run", "-m", "30", "-n", "20", "-k", "10", "--alpha", "1e-400", "--json"] + H,
         "run", 2, check=lambda o: "underflows" in o["error"] or 1 / 0)
    case("--version", tool, ["--version", "--json"], None, 0, check=lambda o: VERSION in o["help"] or 1 / 0)
    # --json first (it was taken for the command: unknown option '--json', exit 2; a hunt)
    case("--json --version", tool, ["--json", "--version"], None, 0, check=lambda o: VERSION in o["help"] or 1 / 0)
    case("no command", tool, ["--json"], None, 2)
    case("unknown command", tool, ["frobnicate", "--json"], None, 2)

    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
