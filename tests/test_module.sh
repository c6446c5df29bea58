#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_module.sh: the CUDA backend is a module (lib/module.h). In a shared
# build: libooc_gemm.so and oocgemm name no CUDA library; and wherever the
# module or CUDA's libraries cannot be loaded, oocgemm still starts, runs on
# the host backend and says why, in words that are true:
#   - no module (OOC_CUDA_MODULE names a missing file),
#   - a file that is not a module,
#   - a module whose CUDA libraries are missing (a stand-in module built here
#     that needs a libcublas that is then removed; and, where user namespaces
#     allow it, the real module with CUDA's library directory hidden under an
#     empty tmpfs),
#   - on this machine as it is (no driver, or a GPU).
# Needs OOC_TOP_BUILDDIR, OOC_CUDA_MODULE_BUILT (yes/no) and CC (Makefile.am
# sets them).
set -u
top=${OOC_TOP_BUILDDIR:-$(pwd)}
OOCGEMM=${OOCGEMM:-$top/tools/oocgemm}
. "$(dirname "$0")/testlib.sh" test_module
built=${OOC_CUDA_MODULE_BUILT:-no}
cc=${CC:-cc}

# run ARGS...: oocgemm run on a small problem must succeed on the host
# backend and say why CUDA is not used; $1 names the case, $2 a pattern the
# reason must match
host_run() {
    name=$1
    pattern=$2
    shift 2
    if ! env "$@" timeout 60 "$OOCGEMM" run -m 200 -n 100 -k 50 >out 2>err; then
        fail "$name: oocgemm run exited $?"
    elif ! grep -q "backend: host" out; then
        fail "$name: not on the host backend"
    elif ! grep -q -- "$pattern" out; then
        fail "$name: the reason ($pattern) is not in the summary"
    else
        pass "$name: runs on the host backend and says why"
    fi
}

lib=$top/.libs/libooc_gemm.so
if [ -f "$lib" ]; then
    if ldd "$lib" | grep -E 'libcu(da|dart|blas)' >out 2>&1; then
        fail "ldd libooc_gemm.so names a CUDA library"
    else
        pass "ldd libooc_gemm.so names no CUDA library"
    fi
    exe=$top/tools/.libs/oocgemm
    [ -f "$exe" ] || exe=$top/tools/.libs/lt-oocgemm
    if [ -f "$exe" ] && ldd "$exe" | grep -E 'libcu(da|dart|blas)' >out 2>&1; then
        fail "ldd oocgemm names a CUDA library"
    else
        pass "oocgemm names no CUDA library"
    fi
else
    echo "SKIP: no shared libooc_gemm.so in $top/.libs (a static build links the backend in)"
fi

if [ "$built" != yes ]; then
    # built without CUDA, or static: the reason is the build's
    host_run "no CUDA backend built" "built without CUDA\|CUDA not used"
    echo "SKIP: the module cases (this build has no CUDA module)"
    exit $((failures > 0))
fi

host_run "no module" "no CUDA module: OOC_CUDA_MODULE=$tmp/none does not exist" OOC_CUDA_MODULE="$tmp/none"
echo "not a shared object" >notamodule.so
host_run "not a module" "the CUDA module cannot be loaded" OOC_CUDA_MODULE="$tmp/notamodule.so"

# a stand-in module that needs a libcublas which is then removed: what a
# node without CUDA's libraries on its library path looks like
echo 'int cublas_standin(void) { return 1; }' >dep.c
echo 'int cublas_standin(void); int ooc_standin(void) { return cublas_standin(); }' >mod.c
if $cc -shared -fPIC -o libcublas.so.99 -Wl,-soname,libcublas.so.99 dep.c 2>err &&
    $cc -shared -fPIC -o standin.so mod.c ./libcublas.so.99 2>err; then
    rm -f libcublas.so.99
    host_run "CUDA libraries missing (stand-in)" "no CUDA runtime: .*libcublas.so.99" OOC_CUDA_MODULE="$tmp/standin.so"
else
    fail "could not build the stand-in module with $cc"
fi

# the real module with CUDA's library directory hidden (needs user and mount
# namespaces: unshare -rm)
cudadir=$(ldd "$top/.libs/libooc_gemm_cuda.so" 2>/dev/null | sed -n 's/.*libcublas\.so[^ ]* => \(.*\)\/libcublas\.so.*/\1/p' | head -n 1)
if [ -n "$cudadir" ] && unshare -rm true 2>/dev/null; then
    if unshare -rm sh -c "mount -t tmpfs none '$cudadir' && exec timeout 60 '$OOCGEMM' run -m 200 -n 100 -k 50" >out 2>err &&
        grep -q "backend: host" out && grep -q "no CUDA runtime" out; then
        pass "CUDA's libraries hidden ($cudadir): host backend, says why"
    else
        fail "CUDA's libraries hidden ($cudadir)"
    fi
else
    echo "SKIP: hiding CUDA's libraries needs unshare -rm (user namespaces) and a module linked to libcublas"
fi

# as this machine is: the module loads; either a GPU runs, or the reason
# is the driver or the GPU, never "driver version is insufficient" for a
# missing driver
if oc info; then
    if grep -q "insufficient" out; then
        fail "info blames the driver version"
    elif grep -q "libooc_gemm_cuda.so" out; then
        pass "info names the CUDA module"
    else
        fail "info does not name the CUDA module"
    fi
else
    fail "oocgemm info exited $?"
fi

exit $((failures > 0))
