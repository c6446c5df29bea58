# SPDX-License-Identifier: MIT
# ooc_mpi.m4: find MPI for the oocgemm tool only (`mpirun`/`srun oocgemm
# multiply`); libooc_gemm never links MPI.
#
# OOC_CHECK_MPI: --with-mpi[=yes|no|check] (default check). MPI is found
# through pkg-config (ompi-c: Open MPI; mpich: MPICH), else through the
# compiler wrapper mpicc (Open MPI's --showme:compile/--showme:link, MPICH's
# -compile_info/-link_info, of which the compiler's own name is dropped).
# The flags found must compile and link a call to MPI_Init_thread and
# MPI_Iallreduce (MPI-3). --with-mpi=yes fails when they are not found;
# check goes on without. Sets (AC_SUBST) MPI_CFLAGS and MPI_LIBS, defines
# HAVE_MPI, AM_CONDITIONAL HAVE_MPI, and ooc_mpi_summary for the summary.
AC_DEFUN([OOC_CHECK_MPI], [
  AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi@<:@=yes|no|check@:>@],
      [build oocgemm to run under mpirun/srun (one job split across ranks); libooc_gemm never links MPI
       (default: check)])],
    [], [with_mpi=check])
  AC_ARG_VAR([MPICC], [the MPI compiler wrapper asked for MPI's flags when pkg-config knows none (default: mpicc)])
  have_mpi=no
  ooc_mpi_summary=""
  AS_CASE([$with_mpi],
    [no], [ooc_mpi_summary="no (--without-mpi)"],
    [yes|check], [
      ooc_mpi_how=""
      AS_IF([test -z "$MPI_CFLAGS$MPI_LIBS"], [
        for ooc_mpi_pc in ompi-c mpich; do
          AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists $ooc_mpi_pc 2>/dev/null], [
            MPI_CFLAGS=`$PKG_CONFIG --cflags $ooc_mpi_pc`
            MPI_LIBS=`$PKG_CONFIG --libs $ooc_mpi_pc`
            ooc_mpi_how="pkg-config $ooc_mpi_pc"
            break])
        done
        AS_IF([test -z "$ooc_mpi_how"], [
          AS_IF([test -z "$MPICC"], [AC_PATH_PROG([MPICC], [mpicc], [])])
          AS_IF([test -n "$MPICC"], [
            AS_IF([ooc_mpi_c=`$MPICC --showme:compile 2>/dev/null` && ooc_mpi_l=`$MPICC --showme:link 2>/dev/null`],
              [MPI_CFLAGS=$ooc_mpi_c; MPI_LIBS=$ooc_mpi_l; ooc_mpi_how="$MPICC --showme (Open MPI)"],
              [AS_IF([ooc_mpi_c=`$MPICC -compile_info 2>/dev/null` && ooc_mpi_l=`$MPICC -link_info 2>/dev/null`],
                 [dnl MPICH prints the whole command: drop the compiler and -c
                  MPI_CFLAGS=`echo "$ooc_mpi_c" | sed 's/^[[^ ]]* *//; s/ -c / /g; s/ -c$//'`
                  MPI_LIBS=`echo "$ooc_mpi_l" | sed 's/^[[^ ]]* *//'`
                  ooc_mpi_how="$MPICC -compile_info (MPICH)"])])])])
      ], [ooc_mpi_how="MPI_CFLAGS and MPI_LIBS as given"])
      AS_IF([test -z "$ooc_mpi_how"],
        [ooc_mpi_summary="no: neither pkg-config (ompi-c, mpich) nor mpicc found MPI (apt-get install libopenmpi-dev openmpi-bin)"],
        [AC_MSG_CHECKING([whether MPI ($ooc_mpi_how) compiles and links])
         ooc_mpi_save_CFLAGS=$CFLAGS
         ooc_mpi_save_LIBS=$LIBS
         CFLAGS="$CFLAGS $MPI_CFLAGS"
         LIBS="$MPI_LIBS $LIBS"
         AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
             [[int p = 0; MPI_Request r; long long a = 0, b = 0;
               MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &p);
               MPI_Iallreduce(&a, &b, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
               MPI_Finalize();]])],
           [have_mpi=yes; AC_MSG_RESULT([yes])],
           [AC_MSG_RESULT([no])
            ooc_mpi_summary="no: $ooc_mpi_how gave flags that do not compile or link an MPI-3 program (see config.log)"])
         CFLAGS=$ooc_mpi_save_CFLAGS
         LIBS=$ooc_mpi_save_LIBS])
      AS_IF([test "x$have_mpi" = xyes],
        [ooc_mpi_summary="yes ($ooc_mpi_how): oocgemm multiply runs under mpirun/srun; the library links no MPI"])
      AS_IF([test "x$have_mpi" != xyes && test "x$with_mpi" = xyes],
        [AC_MSG_ERROR([--with-mpi: MPI not usable: $ooc_mpi_summary])])
    ],
    [AC_MSG_ERROR([--with-mpi=$with_mpi: give yes, no or check])])
  AS_IF([test "x$have_mpi" = xyes],
    [AC_DEFINE([HAVE_MPI], [1], [Define to 1 when oocgemm is built with MPI (mpirun/srun)])],
    [MPI_CFLAGS=""; MPI_LIBS=""])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
  AM_CONDITIONAL([HAVE_MPI], [test "x$have_mpi" = xyes])
])
