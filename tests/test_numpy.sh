#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_numpy.sh: oocgemm against NumPy (make check). NumPy writes the inputs,
# `oocgemm multiply --backend host` computes C, NumPy loads it (np.load, also
# with mmap_mode='r') and compares it with numpy.matmul: see numpy_check.py.
# Skips (exit 77) when no python3 can import numpy (CI installs
# python3-numpy). PYTHON names the interpreter to use; otherwise python3 on
# the PATH, then /usr/bin/python3 (where Debian's python3-numpy lives when a
# python3 from elsewhere comes first on the PATH).
# Run from the build directory; OOCGEMM overrides the tool's path; the script
# finds numpy_check.py through $srcdir (set by automake's test harness), or
# beside itself.
set -u

OOCGEMM=${OOCGEMM:-./tools/oocgemm}
if [ -n "${srcdir:-}" ] && [ -f "$srcdir/tests/numpy_check.py" ]; then
    check=$srcdir/tests/numpy_check.py
else
    check=$(dirname "$0")/numpy_check.py
fi
if [ ! -f "$check" ]; then
    echo "FAIL: numpy_check.py not found (srcdir=${srcdir:-unset})"
    exit 1
fi
if [ ! -x "$OOCGEMM" ]; then
    echo "FAIL: $OOCGEMM is not an executable (set OOCGEMM=path/to/oocgemm)"
    exit 1
fi

python=
for py in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy' >/dev/null 2>&1; then
        python=$py
        break
    fi
done
if [ -z "$python" ]; then
    echo "SKIP: no python3 with numpy (install python3-numpy)"
    exit 77
fi

case $OOCGEMM in /*) ;; *) OOCGEMM=$(cd "$(dirname "$OOCGEMM")" && pwd)/$(basename "$OOCGEMM") ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_numpy.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
unset OOC_HOST_JITTER_US

echo "using $python ($("$python" -c 'import numpy; print("numpy", numpy.__version__)'))"
"$python" "$check" "$OOCGEMM" "$tmp"
