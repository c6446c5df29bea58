# SPDX-License-Identifier: MIT
# ooc_cuda.m4: find the CUDA toolkit (nvcc, cudart, cuBLAS) for libooc_gemm.
#
# OOC_CHECK_CUDA: --with-cuda[=DIR] (default: yes if found under /usr/local/cuda),
# --without-cuda (host backend only), --with-cuda-arch=ARCH (default sm_90).
# Sets HAVE_CUDA (AC_DEFINE and AM_CONDITIONAL), NVCC, CUDA_CPPFLAGS,
# CUDA_LDFLAGS, CUDA_LIBS, CUDA_LIBDIR, NVCC_ARCHFLAGS, ooc_cuda_summary.
# Fails only when CUDA was asked for by name (--with-cuda or --with-cuda=DIR)
# and is not usable; otherwise it falls back to the host backend and says so.
AC_DEFUN([OOC_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [CUDA toolkit root (default: /usr/local/cuda if usable); --without-cuda builds the host backend only])],
    [ooc_cuda_req=$withval], [ooc_cuda_req=check])
  AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=ARCH], [GPU architecture for nvcc -arch (default: sm_90)])],
    [ooc_cuda_arch=$withval], [ooc_cuda_arch=sm_90])

  have_cuda=no
  ooc_cuda_why=""
  AS_CASE([$ooc_cuda_req],
    [no], [ooc_cuda_why="disabled by --without-cuda"],
    [yes|check], [ooc_cuda_dir=/usr/local/cuda],
    [ooc_cuda_dir=$ooc_cuda_req])

  AS_IF([test "x$ooc_cuda_req" != xno], [
    ooc_save_CPPFLAGS=$CPPFLAGS
    ooc_save_LDFLAGS=$LDFLAGS
    ooc_save_LIBS=$LIBS
    AC_PATH_PROG([NVCC], [nvcc], [no], [$ooc_cuda_dir/bin$PATH_SEPARATOR$PATH])
    CUDA_CPPFLAGS="-I$ooc_cuda_dir/include"
    CUDA_LIBDIR=""
    for ooc_d in lib64 lib targets/x86_64-linux/lib; do
      AS_IF([test -z "$CUDA_LIBDIR" && test -d "$ooc_cuda_dir/$ooc_d"],
            [AS_IF([ls "$ooc_cuda_dir/$ooc_d"/libcudart.* >/dev/null 2>&1],
                   [CUDA_LIBDIR="$ooc_cuda_dir/$ooc_d"])])
    done
    AS_IF([test "x$NVCC" = xno], [ooc_cuda_why="nvcc not found"],
          [test -z "$CUDA_LIBDIR"], [ooc_cuda_why="libcudart not found under $ooc_cuda_dir"], [
      CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"
      LDFLAGS="$LDFLAGS -L$CUDA_LIBDIR"
      AC_CHECK_HEADERS([cuda_runtime_api.h cublas_v2.h], [], [ooc_cuda_why="CUDA headers not found"])
      AS_IF([test -z "$ooc_cuda_why"], [
        AC_CHECK_LIB([cudart], [cudaGetDeviceCount], [:], [ooc_cuda_why="libcudart unusable"])])
      AS_IF([test -z "$ooc_cuda_why"], [
        AC_CHECK_LIB([cublas], [cublasDgemm_v2], [:], [ooc_cuda_why="libcublas unusable"], [-lcudart])])
      AS_IF([test -z "$ooc_cuda_why"], [
        AC_MSG_CHECKING([whether nvcc compiles a kernel for $ooc_cuda_arch])
        cat > conftest.cu <<_OOCEOF
__global__ void k(float *x) { x[[threadIdx.x]] += 1.0f; }
int main(void) { k<<<1, 1>>>(0); return 0; }
_OOCEOF
        AS_IF([$NVCC -arch=$ooc_cuda_arch -c conftest.cu -o conftest.$OBJEXT >&AS_MESSAGE_LOG_FD 2>&1],
              [AC_MSG_RESULT([yes])],
              [AC_MSG_RESULT([no]); ooc_cuda_why="nvcc cannot compile for $ooc_cuda_arch"])
        rm -f conftest.cu conftest.$OBJEXT])
    ])
    CPPFLAGS=$ooc_save_CPPFLAGS
    LDFLAGS=$ooc_save_LDFLAGS
    LIBS=$ooc_save_LIBS
    AS_IF([test -z "$ooc_cuda_why"], [have_cuda=yes],
          [test "x$ooc_cuda_req" != xcheck],
          [AC_MSG_ERROR([CUDA was requested (--with-cuda=$ooc_cuda_req) but is not usable: $ooc_cuda_why])])
  ])

  AS_IF([test "x$have_cuda" = xyes], [
    AC_DEFINE([HAVE_CUDA], [1], [Define to 1 to build the CUDA (cuBLAS) backend.])
    CUDA_LDFLAGS="-L$CUDA_LIBDIR -R$CUDA_LIBDIR" # libtool turns -R into an rpath
    CUDA_LIBS="-lcublas -lcudart -lstdc++"
    NVCC_ARCHFLAGS="-arch=$ooc_cuda_arch"
    ooc_cuda_summary="yes ($NVCC, $ooc_cuda_arch, libraries in $CUDA_LIBDIR)"
  ], [
    CUDA_CPPFLAGS=""
    CUDA_LDFLAGS=""
    CUDA_LIBS=""
    NVCC_ARCHFLAGS=""
    AC_DEFINE_UNQUOTED([OOC_CUDA_WHY_NOT], ["$ooc_cuda_why"], [Why configure built no CUDA backend.])
    ooc_cuda_summary="NO: $ooc_cuda_why. Only the host (OpenBLAS) backend is built; the GPU path is OFF."
  ])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([CUDA_LIBDIR])
  AC_SUBST([NVCC_ARCHFLAGS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
])
