# SPDX-License-Identifier: MIT
"""numpy_check.py: oocgemm against NumPy (run by tests/test_numpy.sh).

NumPy writes the inputs (float32, float64, complex64, complex128; C and
Fortran order; np.save and np.lib.format.write_array with header versions
1.0, 2.0 and 3.0; raw files from ndarray.tofile), `oocgemm multiply` computes
C through the host backend, and NumPy reads C back with np.load (also with
mmap_mode='r', and np.fromfile for raw output) and compares it with
numpy.matmul, with transposes and conjugate transposes where used.

An element passes when |C - ref| <= tol * (|alpha| |op(A)| |op(B)| + |beta| |C0|),
elementwise, tol = 4 (k + 2) eps of the element type: the usual bound on a
sum of k rounded products. Prints one line per case; exits 1 on any failure.

Usage: numpy_check.py OOCGEMM WORKDIR
"""
import os
import subprocess
import sys

import numpy as np

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
LETTER = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}


def rand(rng, shape, dtype, order):
    """Uniform in [-1, 1) of dtype, stored in order."""
    x = rng.uniform(-1.0, 1.0, size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.uniform(-1.0, 1.0, size=shape)
    return np.asarray(x.astype(dtype), order=order)


def write(path, arr, how):
    """Write arr as .npy with np.save (how == 'save') or write_array version how, or raw (how == 'raw')."""
    if how == "save":
        np.save(path, arr)
    elif how == "raw":
        # tofile writes C order; write the memory order by hand
        data = arr if arr.flags.c_contiguous else arr.T
        data.tofile(path)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, arr, version=how)
    if how not in ("save", "raw"):
        with open(path, "rb") as f:
            assert np.lib.format.read_magic(f) == how, path


def op(x, t):
    return x if t == "N" else x.T if t == "T" else x.conj().T


def operand_arg(path, arr, how):
    if how != "raw":
        return path
    order = "F" if arr.flags.f_contiguous and not arr.flags.c_contiguous else "C"
    return "%s:%dx%d:%s:%s" % (path, arr.shape[0], arr.shape[1], LETTER[arr.dtype.type], order)


# Cases: (name, m, n, k, transa, transb, order of A, of B, how A and B are
# written, alpha, beta, output order, output format, extra options)
CASES = [
    ("NN, A C save, B F v2", 97, 43, 65, "N", "N", "C", "F", ("save", (2, 0)), 1.0, 0.0, "C", "npy", []),
    ("TN, A F v3, B C v1, F out", 81, 57, 70, "T", "N", "F", "C", ((3, 0), (1, 0)), 1.0, 0.0, "F", "npy", []),
    ("NT, A C v1, B F save, alpha", 64, 90, 33, "N", "T", "C", "F", ((1, 0), "save"), -0.5, 0.0, "C", "npy", []),
    ("CC (TT real), F x F, 256K budgets", 300, 150, 200, "C", "C", "F", "F", ("save", "save"), 1.0, 0.0, "F",
     "npy", ["--device-mem", "256K", "--host-mem", "256K"]),
    ("NN + beta C0, A F, B C", 120, 80, 60, "N", "N", "F", "C", ((2, 0), (3, 0)), 2.0, 0.25, "C", "npy", []),
    ("raw in, raw out, TN, F x C", 70, 50, 40, "T", "N", "F", "C", ("raw", "raw"), 1.0, 0.0, "C", "raw", []),
]


def run_case(tool, work, rng, dtype, case):
    name, m, n, k, ta, tb, oa, ob, how, alpha, beta, oc, ofmt, extra = case
    cplx = np.issubdtype(dtype, np.complexfloating)  # real data: op C is op T (the tool maps it)
    tag = "%s %s" % (np.dtype(dtype).name, name)
    ashape = (m, k) if ta == "N" else (k, m)
    bshape = (k, n) if tb == "N" else (n, k)
    A = rand(rng, ashape, dtype, oa)
    B = rand(rng, bshape, dtype, ob)
    base = os.path.join(work, "%s_%d" % (LETTER[dtype], CASES.index(case)))
    pa = base + ("_A.bin" if how[0] == "raw" else "_A.npy")
    pb = base + ("_B.bin" if how[1] == "raw" else "_B.npy")
    pc = base + ("_C.bin" if ofmt == "raw" else "_C.npy")
    write(pa, A, how[0])
    write(pb, B, how[1])
    cmd = [tool, "multiply", operand_arg(pa, A, how[0]), operand_arg(pb, B, how[1]), "-o", pc,
           "--backend", "host", "--transa", ta, "--transb", tb, "--alpha", repr(alpha),
           "--out-layout", {"C": "row", "F": "col"}[oc], "--no-floor", "-q"] + extra
    if ofmt == "raw":
        cmd += ["--out-format", "raw"]
    C0 = None
    if beta != 0.0:
        C0 = rand(rng, (m, n), dtype, oc)  # C0 in the output's order (the library needs it)
        p0 = base + "_C0.npy"
        np.save(p0, C0)
        cmd += ["--c-in", p0, "--beta", repr(beta)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    if r.returncode != 0:
        return "FAIL: %s: exit %d: %s" % (tag, r.returncode, (r.stderr or r.stdout).strip()[:400])

    if ofmt == "raw":
        flat = np.fromfile(pc, dtype=dtype)
        if flat.size != m * n:
            return "FAIL: %s: raw output holds %d elements, expected %d" % (tag, flat.size, m * n)
        loaded = [("fromfile", flat.reshape((m, n), order=oc))]
    else:
        loaded = [("load", np.load(pc)), ("mmap", np.load(pc, mmap_mode="r"))]

    # the reference in double precision, and the bound on the terms summed
    wide = np.complex128 if cplx else np.float64
    opA, opB = op(A.astype(wide), ta), op(B.astype(wide), tb)
    ref = alpha * (opA @ opB)
    bound = abs(alpha) * (np.abs(opA) @ np.abs(opB))
    if C0 is not None:
        ref = ref + beta * C0.astype(wide)
        bound = bound + abs(beta) * np.abs(C0.astype(wide))
    eps = np.finfo(dtype).eps
    tol = 4.0 * (k + 2) * eps
    for how_loaded, C in loaded:
        if C.dtype != np.dtype(dtype):
            return "FAIL: %s (%s): dtype %s, expected %s" % (tag, how_loaded, C.dtype, np.dtype(dtype))
        if C.shape != (m, n):
            return "FAIL: %s (%s): shape %s, expected %s" % (tag, how_loaded, C.shape, (m, n))
        want_f = oc == "F"
        if ofmt != "raw" and (C.flags.f_contiguous and not C.flags.c_contiguous) != want_f:
            return "FAIL: %s (%s): not in %s order" % (tag, how_loaded, oc)
        err = np.abs(np.asarray(C).astype(wide) - ref)
        rel = np.max(err / np.maximum(bound, np.finfo(np.float64).tiny))
        if not np.isfinite(rel) or rel > tol:
            return "FAIL: %s (%s): max relative error %.3g > tolerance %.3g" % (tag, how_loaded, rel, tol)
    # and against numpy.matmul in the element type itself (what users compare with)
    direct = alpha * np.matmul(op(A, ta), op(B, tb))
    if C0 is not None:
        direct = direct + beta * C0
    diff = np.max(np.abs(np.asarray(loaded[0][1]) - direct) / np.maximum(bound, np.finfo(np.float64).tiny))
    if diff > 2 * tol:
        return "FAIL: %s: differs from numpy.matmul by %.3g (bound %.3g)" % (tag, diff, 2 * tol)
    return "PASS: %s: max relative error %.2g (tolerance %.2g)%s" % (
        tag, rel, tol, "" if ofmt == "raw" else ", np.load and mmap_mode='r'")


def tf32_case(tool, work, rng):
    """C computed as TF32 tensor cores compute it (inputs rounded to 10
    mantissa bits, products summed in float32): oocgemm verify fails it with
    FP32's tolerance at a small k and passes it with --tf32."""
    def tf32(x):
        u = x.view(np.uint32)
        return ((u + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
    a = rng.uniform(-1, 1, (50, 24)).astype(np.float32)
    b = rng.uniform(-1, 1, (24, 30)).astype(np.float32)
    c = (tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)).astype(np.float32)
    paths = [os.path.join(work, n) for n in ("T_A.npy", "T_B.npy", "T_C.npy")]
    for p, x in zip(paths, (a, b, c)):
        np.save(p, x)
    strict = subprocess.run([tool, "verify"] + paths, capture_output=True, text=True)
    loose = subprocess.run([tool, "verify", "--tf32"] + paths, capture_output=True, text=True)
    if strict.returncode == 1 and loose.returncode == 0 and ": PASS" in loose.stdout:
        return "PASS: verify of a TF32 C: FAIL without --tf32, PASS with it"
    return "FAIL: verify of a TF32 C: exit %d without --tf32 (want 1), %d with it (want 0): %s" % (
        strict.returncode, loose.returncode, (strict.stdout + loose.stdout + loose.stderr).strip())


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: numpy_check.py OOCGEMM WORKDIR\n")
        return 2
    tool, work = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(20261121)
    failures = 0
    cases = 0
    for dtype in DTYPES:
        for case in CASES:
            line = run_case(tool, work, rng, dtype, case)
            cases += 1
            if not line.startswith("PASS"):
                failures += 1
            print(line)
            sys.stdout.flush()
    line = tf32_case(tool, work, rng)
    cases += 1
    failures += not line.startswith("PASS")
    print(line)
    print("%d cases, %d failed (numpy %s)" % (cases, failures, np.__version__))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
