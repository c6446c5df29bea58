#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_json.sh: every subcommand's --json against the one schema of the man
# page (JSON OUTPUT): json_check.py runs them all through the host backend,
# successes, failures, usage errors and a file name that is not UTF-8, and
# checks each object with json.loads. Skips (exit 77) without python3.
# Run from the build directory; OOCGEMM overrides the tool's path; the script
# finds json_check.py through $srcdir (set by automake's test harness), or
# beside itself.
set -u

OOCGEMM=${OOCGEMM:-./tools/oocgemm}
if [ -n "${srcdir:-}" ] && [ -f "$srcdir/tests/json_check.py" ]; then
    check=$srcdir/tests/json_check.py
else
    check=$(dirname "$0")/json_check.py
fi
if [ ! -f "$check" ]; then
    echo "FAIL: json_check.py not found (srcdir=${srcdir:-unset})"
    exit 1
fi
if [ ! -x "$OOCGEMM" ]; then
    echo "FAIL: $OOCGEMM is not an executable (set OOCGEMM=path/to/oocgemm)"
    exit 1
fi
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
    echo "SKIP: no python3"
    exit 77
fi
case $OOCGEMM in /*) ;; *) OOCGEMM=$(cd "$(dirname "$OOCGEMM")" && pwd)/$(basename "$OOCGEMM") ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_json.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
unset OOC_HOST_JITTER_US OOC_FAULT OOC_HOST_DEVICES
"$python" "$check" "$OOCGEMM" "$tmp"
