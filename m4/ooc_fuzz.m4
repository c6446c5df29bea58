# SPDX-License-Identifier: MIT
# ooc_fuzz.m4: find a clang that builds libFuzzer targets, for `make fuzz`
# (fuzz/fuzz.am).
#
# OOC_CHECK_FUZZ: FUZZ_CC (precious: ./configure FUZZ_CC=clang-15, used as
# given) defaults to the first of clang, clang-19 ... clang-14 on PATH. It is kept
# only when it compiles, links and runs a trivial LLVMFuzzerTestOneInput with
# -fsanitize=fuzzer,address,undefined (clang without libclang-rt-dev, or
# without the fuzzer runtime, fails here); otherwise FUZZ_CC is emptied and
# `make fuzz` refuses with the reason. Never fails configure.
# Sets (AC_SUBST) FUZZ_CC and OOC_FUZZ_WHY (why FUZZ_CC is empty, for the
# message of make fuzz), and ooc_fuzz_summary for a configure summary.
AC_DEFUN([OOC_CHECK_FUZZ], [
  AC_ARG_VAR([FUZZ_CC], [clang with libFuzzer, ASan and UBSan for make fuzz (default: clang, clang-19 ... clang-14)])
  dnl a FUZZ_CC given by the user is used as given (a name or a path)
  AS_IF([test -z "$FUZZ_CC"],
    [AC_PATH_PROGS([FUZZ_CC], [clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14], [])])
  ooc_fuzz_summary=""
  OOC_FUZZ_WHY=""
  AS_IF([test -z "$FUZZ_CC"], [ooc_fuzz_summary="no clang found"], [
    AC_MSG_CHECKING([whether $FUZZ_CC builds libFuzzer targets with ASan and UBSan])
    cat > conftest_fuzz.c <<_OOCEOF
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return size > 0 && *data == 0x93 ? 0 : 0;
}
_OOCEOF
    AS_IF([$FUZZ_CC -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
             conftest_fuzz.c -o conftest_fuzz$EXEEXT >&AS_MESSAGE_LOG_FD 2>&1],
      [AS_IF([test "x$cross_compiling" = xyes], [:],
         [./conftest_fuzz$EXEEXT -runs=4 >&AS_MESSAGE_LOG_FD 2>&1],
         [:],
         [ooc_fuzz_summary="$FUZZ_CC builds a fuzzer, but it does not run"])],
      [ooc_fuzz_summary="$FUZZ_CC cannot build with -fsanitize=fuzzer,address,undefined (not clang, or no libclang-rt-dev)"])
    rm -rf conftest_fuzz.c conftest_fuzz$EXEEXT conftest_fuzz.dSYM
    AS_IF([test -z "$ooc_fuzz_summary"],
      [AC_MSG_RESULT([yes])
       ooc_fuzz_summary="yes ($FUZZ_CC)"],
      [AC_MSG_RESULT([no])
       FUZZ_CC=""])
  ])
  AS_IF([test -z "$FUZZ_CC"],
    [AC_MSG_NOTICE([make fuzz is unavailable: $ooc_fuzz_summary])
     OOC_FUZZ_WHY=$ooc_fuzz_summary
     ooc_fuzz_summary="NO: $ooc_fuzz_summary"])
  AC_SUBST([FUZZ_CC])
  AC_SUBST([OOC_FUZZ_WHY])
])
