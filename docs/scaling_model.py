#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scaling_model.py: the model of docs/SCALING.md, bytes and time of a file
multiply C = op(A) op(B) split over P ranks by rows of C, over a grid of
the plan's panels of op(B) and rows (what `mpirun oocgemm multiply` does,
choosing between them), or over a Pr x Pc grid with op(B)'s panels planned
again for each column group (what it does not: a process's plan must be one
process's for byte-identity), on a shared file system.

    python3 docs/scaling_model.py                 # the 1 TB x 1 TB FP64 job on 64 nodes of 4 H200
    python3 docs/scaling_model.py --m 80000 --n 16384 --k 16384 --ranks 1,2,4 \
        --gpus-per-rank 1 --fs-gbps 5 --pcie-gbps 55 --tflops 60

Every figure is a lower bound from one resource at a time; the model's time
is the largest of them (the pipeline overlaps the rest).
"""
import argparse
import math


def panels(k, n, s, b_budget):
    """Column panels of op(B) (k x n) when at most b_budget bytes of it fit
    on a GPU: A's rows are read once per panel."""
    return max(1, math.ceil(s * k * n / b_budget))


def row_split(m, n, k, s, P, g, bw_fs, bw_pcie, rate, b_budget, beta=False):
    """P ranks, each g GPUs, each rank rows m/P of C and all of op(B)."""
    q = panels(k, n, s, b_budget)
    a = s * m * k * q            # every rank reads its rows of A once per panel
    b = s * k * n * P            # every rank reads all of op(B)
    c = s * m * n * (2 if beta else 1)
    fs = a + b + c
    per_gpu_pcie = (a + s * k * n * P * g + c) / (P * g)  # op(B) goes up to each GPU
    t = {
        "fs": fs / bw_fs,
        "pcie": per_gpu_pcie / bw_pcie,
        "math": 2.0 * m * n * k / (P * g * rate),
    }
    return dict(panels=q, read_a=a, read_b=b, write_c=s * m * n, fs_bytes=fs, t=t, time=max(t.values()))


def grid_split(m, n, k, s, Pr, Pc, g, bw_fs, bw_pcie, rate, b_budget, beta=False):
    """Pr x Pc ranks, rank (i, j) computes the block (m/Pr) x (n/Pc) of C:
    it reads m/Pr rows of A (once per panel of its n/Pc columns of op(B))
    and only n/Pc columns of op(B)."""
    P = Pr * Pc
    q = panels(k, n / Pc, s, b_budget)
    a = s * m * k * Pc * q
    b = s * k * n * Pr
    c = s * m * n * (2 if beta else 1)
    fs = a + b + c
    per_gpu_pcie = (a + b * g + c) / (P * g)
    t = {
        "fs": fs / bw_fs,
        "pcie": per_gpu_pcie / bw_pcie,
        "math": 2.0 * m * n * k / (P * g * rate),
    }
    return dict(panels=q, read_a=a, read_b=b, write_c=s * m * n, fs_bytes=fs, t=t, time=max(t.values()))


def plan_grid(m, n, k, s, P, g, bw_fs, bw_pcie, rate, b_budget, beta=False):
    """What `mpirun oocgemm multiply` does (tools/multiply_mpi.c split_grid):
    the plan is one process's (q panels of op(B)), its panels go in Pc
    contiguous groups, each with ranks in proportion to its columns (one
    each, then one at a time to the group with the most columns per rank),
    each rank a contiguous share of the rows; Pc (1: the row split) is the
    one whose busiest rank reads the fewest bytes."""
    q = panels(k, n, s, b_budget)
    best = None
    for Pc in range(1, min(P, q) + 1):
        groups = [(j * q // Pc, (j + 1) * q // Pc) for j in range(Pc)]
        cols = [(q1 - q0) * n / q for q0, q1 in groups]
        nr = [1] * Pc
        for _ in range(P - Pc):
            j = max(range(Pc), key=lambda j: (cols[j] / nr[j], -j))
            nr[j] += 1
        ranks = []  # (rows, panels, columns) of each rank
        for (q0, q1), c, r in zip(groups, cols, nr):
            ranks += [(m / r, q1 - q0, c)] * r
        cost = max(s * (rows * k * np + k * c + rows * c * (2 if beta else 1)) for rows, np, c in ranks)
        if best is None or cost < best[0]:
            best = (cost, Pc, ranks)
    _, Pc, ranks = best
    a = sum(s * rows * k * np for rows, np, c in ranks)
    b = sum(s * k * c for rows, np, c in ranks)
    c_bytes = s * m * n * (2 if beta else 1)
    fs = a + b + c_bytes
    # per GPU: its share of the rank's rows of A and C, and the rank's panels of op(B) each
    pcie = max((s * rows * k * np + g * s * k * c + s * rows * c) / g for rows, np, c in ranks)
    t = {
        "fs": fs / bw_fs,
        "pcie": pcie / bw_pcie,
        "math": max(2.0 * rows * c * k for rows, np, c in ranks) / (g * rate),
    }
    return dict(panels=q, groups=Pc, read_a=a, read_b=b, write_c=s * m * n, fs_bytes=fs, t=t, time=max(t.values()))


def fmt(x):
    for unit, f in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if x >= f:
            return "%.3g %s" % (x / f, unit)
    return "%.3g B" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    side = int(math.sqrt(1e12 / 8))  # a 1 TB FP64 square matrix
    ap.add_argument("--m", type=int, default=side)
    ap.add_argument("--n", type=int, default=side)
    ap.add_argument("--k", type=int, default=side)
    ap.add_argument("--elem", type=int, default=8, help="bytes per element (8: FP64)")
    ap.add_argument("--ranks", default="64,256", help="P values to model (comma-separated)")
    ap.add_argument("--gpus-per-rank", default="4,1", help="GPUs per rank, one per P value")
    ap.add_argument("--fs-gbps", type=float, default=100.0, help="aggregate file-system bandwidth, GB/s")
    ap.add_argument("--pcie-gbps", type=float, default=55.0, help="H2D bandwidth per GPU, GB/s (H200: 55)")
    ap.add_argument("--tflops", type=float, default=60.0, help="in-core rate per GPU, TFLOP/s (H200 DGEMM: 60)")
    ap.add_argument("--b-budget-gb", type=float, default=100.0, help="bytes of op(B) a GPU holds, GB")
    ap.add_argument("--beta", action="store_true", help="C0 read too")
    a = ap.parse_args()
    m, n, k, s = a.m, a.n, a.k, a.elem
    bw_fs, bw_pcie, rate, bb = a.fs_gbps * 1e9, a.pcie_gbps * 1e9, a.tflops * 1e12, a.b_budget_gb * 1e9
    Ps = [int(x) for x in a.ranks.split(",")]
    gs = [int(x) for x in a.gpus_per_rank.split(",")]
    gs = (gs + [gs[-1]] * len(Ps))[: len(Ps)]
    print("m=%d n=%d k=%d, %d-byte elements: A %s, B %s, C %s; %.3g FLOP" % (
        m, n, k, s, fmt(s * m * k), fmt(s * k * n), fmt(s * m * n), 2.0 * m * n * k))
    print("file system %.3g GB/s, PCIe %.3g GB/s per GPU, %.3g TFLOP/s per GPU, op(B) on a GPU <= %s" % (
        a.fs_gbps, a.pcie_gbps, a.tflops, fmt(bb)))
    print("| split | ranks x GPUs | panels | A read | B read | FS bytes | T_fs | T_pcie | T_math | model time |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")

    def row(name, P, g, r):
        t = r["t"]
        print("| %s | %d x %d | %d | %s | %s | %s | %.3g s | %.3g s | %.3g s | **%.3g s** |" % (
            name, P, g, r["panels"], fmt(r["read_a"]), fmt(r["read_b"]), fmt(r["fs_bytes"]), t["fs"], t["pcie"],
            t["math"], r["time"]))

    for P, g in zip(Ps, gs):
        row("rows", P, g, row_split(m, n, k, s, P, g, bw_fs, bw_pcie, rate, bb, a.beta))
        best = None
        for Pr in range(1, P + 1):
            if P % Pr:
                continue
            r = grid_split(m, n, k, s, Pr, P // Pr, g, bw_fs, bw_pcie, rate, bb, a.beta)
            if best is None or r["time"] < best[1]["time"]:
                best = (Pr, r)
        if best and best[0] != P:
            row("grid %d x %d, panels re-planned" % (best[0], P // best[0]), P, g, best[1])
        r = plan_grid(m, n, k, s, P, g, bw_fs, bw_pcie, rate, bb, a.beta)
        if r["groups"] > 1:
            row("oocgemm's grid: %d groups of the plan's panels" % r["groups"], P, g, r)
    lower = s * (m * k + k * n + m * n) / bw_fs
    print("each byte read or written once: %s through the file system = %.3g s" % (
        fmt(s * (m * k + k * n + m * n)), lower))


if __name__ == "__main__":
    main()
