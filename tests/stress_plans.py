#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stress_plans.py: random problems under random forced plans, each checked
row by row against OpenBLAS (make check-stress; not in make check).

make check runs fixed cases chosen to reach each path of the planner and the
pipeline. This draws N problems from a seeded generator, each with a random
mix of the options that force a plan (a small --device-mem and --host-mem,
--block-rows, --ring, --streams, --a-pieces, --b-chunks, --tail,
--stage-chunk, --stage-c, --staging-threads, pinned or pageable memory, a
trace, several simulated devices on the host backend) over odd sizes, every
element type, layout, op and a beta of 0 or not, and runs `oocgemm run
--check-rows M` on each: every row of C is compared with OpenBLAS's. Paths
that the fixed cases meet one at a time meet here together, with remainder
blocks everywhere.

A case passes when its check passes, or when oocgemm refuses its options
cleanly: exit 2 or 3 with a message naming why (a budget that fits no plan or
only tiles too small, an option that does not apply). Anything else fails: a
check that fails, a crash or any other exit status, or a refusal without a
message. At least half the cases must run (else the draw tests nothing).
Each failure prints the command that reproduces it.

    tests/stress_plans.py [--cases N] [--seed S] [--oocgemm PATH] [--backend B]
                          [--max-mb MB] [--list]

The backend is the tool's default (--backend auto): CUDA on a GPU machine,
the host backend (OpenBLAS, with OOC_HOST_DEVICES devices simulated) on one
without. --backend custom adds our own kernels for s and d.
"""
import argparse
import json
import math
import os
import random
import shlex
import subprocess
import sys
import time

SIZES = {"s": 4, "d": 8, "c": 8, "z": 16}

# what a clean refusal says (exit 2 or 3); anything else is a failure
REFUSALS = ("too small", "does not fit", "budget", "only with", "not with", "cannot be", "at most", "at least",
            "needs", "requires", "is not", "exceeds")


def log_int(rng, lo, hi):
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def draw(rng, args):
    """One case: the problem, the forced options, the environment."""
    while True:
        dtype = rng.choice("ssddcz")
        e = SIZES[dtype]
        m, n, k = log_int(rng, 1, 4000) | 1, log_int(rng, 1, 1500) | 1, log_int(rng, 1, 1500) | 1
        if rng.random() < 0.1:  # a dimension of one
            setattr_dim = rng.choice("mnk")
            m, n, k = (1 if setattr_dim == "m" else m, 1 if setattr_dim == "n" else n, 1 if setattr_dim == "k" else k)
        op_bytes = e * (m * k + k * n + m * n)
        if op_bytes <= args.max_mb << 20:
            break
    ops = "NTC" if dtype in "cz" else "NT"
    cmd = ["run", "-m", str(m), "-n", str(n), "-k", str(k), "--dtype", dtype,
           "--layout", rng.choice(["col", "col", "row"]),
           "--transa", rng.choice(ops), "--transb", rng.choice(ops),
           "--beta", rng.choice(["0", "0", "1", "-0.5"]), "--alpha", rng.choice(["1", "1", "-2", "0.5"]),
           "--memory", rng.choice(["pinned", "pageable", "pageable"]),
           "--seed", str(rng.randrange(1, 1 << 30)), "--check-rows", str(m), "--no-floor", "--json"]
    # a device budget from a fraction of the operands (many blocks, panels of op(B)) to all of them
    if rng.random() < 0.8:
        cmd += ["--device-mem", str(max(1 << 16, int(op_bytes * rng.uniform(0.02, 1.2))))]
    if rng.random() < 0.3:
        cmd += ["--host-mem", str(max(1 << 16, int(op_bytes * rng.uniform(0.05, 1.0))))]
    if rng.random() < 0.4:
        cmd += ["--block-rows", str(32 * rng.randrange(2, 64))]
    if rng.random() < 0.3:
        cmd += ["--ring", str(rng.randrange(2, 17))]
    if rng.random() < 0.3:
        cmd += ["--streams", str(rng.randrange(3, 9))]
    if rng.random() < 0.3:
        cmd += ["--a-pieces", str(rng.choice([1, 2, 3, 4, 7]))]
    if rng.random() < 0.3:
        cmd += ["--b-chunks", str(rng.randrange(1, 9))]
    if rng.random() < 0.2:
        cmd += ["--tail", str(rng.randrange(1, 5))]
    if rng.random() < 0.4:
        cmd += ["--stage-chunk", rng.choice(["off", "65536", "262144", "1048576", "4194304"])]
    if rng.random() < 0.3:
        cmd += ["--stage-c", rng.choice(["auto", "off"])]
    if rng.random() < 0.3:
        cmd += ["--staging-threads", str(rng.randrange(0, 6))]
    if args.backend != "auto":
        cmd += ["--backend", args.backend if args.backend != "custom" or dtype in "sd" else "auto"]
    if dtype in "sc" and rng.random() < 0.3:
        cmd += ["--tf32"]
    trace = rng.random() < 0.15
    env = {"OOC_HOST_DEVICES": str(rng.choice([1, 1, 2, 3]))}
    return cmd, env, trace


def run_case(i, args, cmd, env, trace):
    """0: passed, 1: refused cleanly, 2: failed (printed)."""
    full = [args.oocgemm] + cmd
    if trace:
        full += ["--trace", os.path.join(args.dir, "trace%d.json" % i)]
    shown = " ".join("%s=%s" % kv for kv in env.items()) + " " + " ".join(shlex.quote(a) for a in full)
    p = subprocess.run(full, env=dict(os.environ, **env), capture_output=True, text=True, timeout=args.timeout)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = None
    why = None
    if p.returncode == 0 and out and out.get("check", {}).get("passed") is True:
        if trace and not os.path.getsize(full[-1]):
            why = "the trace is empty"
        else:
            return 0, out
    elif p.returncode in (2, 3) and out and out.get("error"):
        msg = out["error"] if isinstance(out["error"], str) else json.dumps(out["error"])
        if any(r in msg for r in REFUSALS):
            if args.verbose:
                print("case %d refused: %s" % (i, msg))
            return 1, out
        why = "refused with an unexpected message: " + msg
    elif p.returncode == 1:
        why = "the check failed: %s" % json.dumps(out.get("check") if out else None)
    else:
        why = "exit status %d" % p.returncode
    print("FAIL case %d: %s\n  %s\n  stderr: %s" % (i, why, shown, p.stderr.strip()[-2000:]))
    return 2, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=int(os.environ.get("STRESS_CASES", "200")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("STRESS_SEED", "1")))
    ap.add_argument("--oocgemm", default=os.environ.get("OOCGEMM", "tools/oocgemm"))
    ap.add_argument("--backend", default=os.environ.get("STRESS_BACKEND", "auto"),
                    choices=["auto", "cublas", "custom", "host"])
    ap.add_argument("--max-mb", type=int, default=64, help="operands' bytes at most (MiB)")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
    ap.add_argument("--list", action="store_true", help="print the cases' commands, run nothing")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cases = [draw(rng, args) for _ in range(args.cases)]
    if args.list:
        for cmd, env, trace in cases:
            print(" ".join("%s=%s" % kv for kv in env.items()), args.oocgemm, " ".join(cmd),
                  "--trace FILE" if trace else "")
        return 0
    counts = [0, 0, 0]
    backends = {}
    t0 = time.time()
    for i, (cmd, env, trace) in enumerate(cases):
        got, out = run_case(i, args, cmd, env, trace)
        counts[got] += 1
        if got == 0:
            backends[out.get("backend")] = backends.get(out.get("backend"), 0) + 1
    ran, refused, failed = counts
    print("stress_plans: seed %d, %d cases in %.0f s: %d passed (%s), %d refused cleanly, %d failed"
          % (args.seed, args.cases, time.time() - t0, ran,
             ", ".join("%s %d" % kv for kv in sorted(backends.items())), refused, failed))
    if failed:
        return 1
    if ran < args.cases / 2:
        print("stress_plans: FAIL: fewer than half the cases ran: the draw tests too little")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
