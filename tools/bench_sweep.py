#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_sweep.py: ours against the floor and the peers on random shapes
off the named suite (docs/PERFORMANCE.md, session 26).

The suite's fourteen shapes are round sizes chosen by hand. This draws N
shapes from a seeded generator: odd m, n, k spread on a log scale (a few
hundred to a quarter million), each element type (s, d, c, z; s with TF32),
every op (N, T, and C for complex types), both layouts, pinned or pageable
memory, beta 0 or not, each problem at most --max-gb of operands. Each shape
is one `oocgemm bench` run (ours at default settings, in-core cuBLAS,
cublasXt at its default block dim and at --xt-dims; the serial loop left
out), whose CSV rows are kept in DIR/sweep.csv (its standard error in
DIR/shapeI.err); the table printed (markdown)
gives per shape the floor, ours, floor/time, cublasXt's best and ours over
it, with the shapes where ours is under --low of its floor or slower than
cublasXt's best marked.

    tools/bench_sweep.py [--shapes N] [--seed S] [--max-gb G] [--dir DIR]
                         [--oocgemm PATH] [--only I,J,...] [--list] [-- BENCH OPTIONS...]

--list prints the shapes' command lines and runs nothing. Needs a GPU for
the peers (with `-- --backend host` ours and the floor run on the CPU).
"""
import argparse
import csv
import io
import math
import os
import random
import subprocess
import sys
import time

SIZES = {"s": 4, "d": 8, "c": 8, "z": 16}


def draw(rng, max_bytes):
    """One shape: a dict of bench's problem options."""
    while True:
        t = rng.choice(["d", "d", "d", "s", "s", "s32", "c", "z", "z"])
        dtype, tf32 = ("s", True) if t == "s32" else (t, False)
        # log-uniform sizes, odd (a remainder tile almost always)
        m = int(math.exp(rng.uniform(math.log(300), math.log(250000)))) | 1
        n = int(math.exp(rng.uniform(math.log(100), math.log(60000)))) | 1
        k = int(math.exp(rng.uniform(math.log(100), math.log(60000)))) | 1
        ops = ["N", "T", "C"] if dtype in "cz" else ["N", "T"]
        ta, tb = rng.choice(ops), rng.choice(ops)
        layout = rng.choice(["col", "col", "row"])
        memory = rng.choice(["pinned", "pinned", "pinned", "pageable"])
        beta = rng.choice([0, 0, 0.5, -1])
        e = SIZES[dtype]
        nbytes = e * (m * k + k * n + m * n)
        flops = 2.0 * m * n * k * (4 if dtype in "cz" else 1)
        # big enough to be worth streaming, small enough to run in seconds
        if nbytes > max_bytes or nbytes < max_bytes / 64 or flops < 2e11 or flops > 4e14:
            continue
        return dict(m=m, n=n, k=k, dtype=dtype, tf32=tf32, transa=ta, transb=tb, layout=layout, memory=memory,
                    beta=beta, gb=nbytes / 1e9, tflop=flops / 1e12)


def bench_args(s):
    a = ["-m", str(s["m"]), "-n", str(s["n"]), "-k", str(s["k"]), "--dtype", s["dtype"], "--transa", s["transa"],
         "--transb", s["transb"], "--layout", s["layout"], "--memory", s["memory"], "--beta", str(s["beta"])]
    return a + (["--tf32"] if s["tf32"] else [])


def name(s):
    ops = s["transa"] + s["transb"]
    extra = (" tf32" if s["tf32"] else "") + (" row" if s["layout"] == "row" else "") + \
        (" pageable" if s["memory"] == "pageable" else "") + (" beta=%g" % s["beta"] if s["beta"] else "")
    return "%s %dx%dx%d %s%s" % (s["dtype"], s["m"], s["n"], s["k"], ops, extra)


def num(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError, TypeError):
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes", type=int, default=24)
    p.add_argument("--seed", type=int, default=26)
    p.add_argument("--max-gb", type=float, default=8.0)
    p.add_argument("--dir", default="/tmp/ooc-sweep")
    p.add_argument("--oocgemm", default="./tools/oocgemm")
    p.add_argument("--low", type=float, default=0.85)
    p.add_argument("--list", action="store_true")
    p.add_argument("--only", default="", help="run only these shapes: numbers separated by commas")
    p.add_argument("rest", nargs="*", help="more bench options (after --)")
    o = p.parse_args()
    rng = random.Random(o.seed)
    shapes = [draw(rng, o.max_gb * 1e9) for _ in range(o.shapes)]
    only = {int(x) for x in o.only.split(",") if x}
    common = ["--repeat", "1", "--xt-dims", "8192", "--no-serial", "--csv"] + o.rest
    if o.list:
        for i, s in enumerate(shapes, 1):
            if not only or i in only:
                print(" ".join([o.oocgemm, "bench"] + bench_args(s) + common))
        return 0
    os.makedirs(o.dir, exist_ok=True)
    out = open(os.path.join(o.dir, "sweep.csv"), "w")
    print("| # | shape | GB | floor (s) | ours (s) | plan rows | floor/time | in-core (s) | cublasXt best (s) |"
          " ours / cublasXt | check |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    header_written = False
    marked = 0
    for i, s in enumerate(shapes, 1):
        if only and i not in only:
            continue
        t0 = time.time()
        r = subprocess.run([o.oocgemm, "bench"] + bench_args(s) + common, capture_output=True, text=True)
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        with open(os.path.join(o.dir, "shape%d.err" % i), "w") as f:
            f.write(r.stderr)
        if rows:
            text = r.stdout.splitlines(True)
            out.write("".join(text if not header_written else text[1:]))
            out.flush()
            header_written = True
        ours = next((x for x in rows if x["method"] == "ours"), None)
        if ours is None:
            msg = (r.stderr.strip().splitlines() or ["no output"])[-1]
            print("| %d | %s | %.2f | - | ERROR (exit %d: %s) | | | | | | |" % (i, name(s), s["gb"], r.returncode, msg))
            marked += 1
            continue
        incore = next((num(x, "best_s") for x in rows if x["method"] == "incore" and x["status"] == "ok"), None)
        xts = [num(x, "best_s") for x in rows
               if x["method"] == "cublasxt" and x["status"] == "ok" and x["check"] == "PASS"]
        xt = min(xts) if xts else None
        ft = num(ours, "floor_over_time")
        checks = all(x["check"] in ("PASS", "") for x in rows if x["status"] == "ok")
        slow = (ft is not None and ft < o.low) or (xt is not None and num(ours, "best_s") > xt)
        marked += slow or not checks
        print("| %d | %s | %.2f | %.4g | %.4g | %s | %s%.2f%s | %s | %s | %s | %s |" % (
            i, name(s), s["gb"], num(ours, "floor_s"), num(ours, "best_s"), ours["block_rows"],
            "**" if slow else "", ft or 0, "**" if slow else "",
            "%.4g" % incore if incore else "-", "%.4g" % xt if xt else "-",
            "%.2f" % (xt / num(ours, "best_s")) if xt else "-", "PASS" if checks else "FAIL"), flush=True)
        print("<!-- shape %d: %.0f s, exit %d -->" % (i, time.time() - t0, r.returncode), file=sys.stderr)
    out.close()
    ran = len(only & set(range(1, len(shapes) + 1))) if only else len(shapes)
    print("\n%d of %d shapes marked (floor/time under %.2f, slower than cublasXt's best, a failed check or an "
          "error)" % (marked, ran, o.low))
    return 1 if marked else 0


if __name__ == "__main__":
    sys.exit(main())
