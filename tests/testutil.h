/* SPDX-License-Identifier: MIT */
/*
 * testutil.h: what the CUnit suites share: running a registry with a real
 * exit status, seeded random matrices, and the OpenBLAS reference check with
 * a tolerance derived from k and machine epsilon.
 */
#ifndef OOC_TESTUTIL_H
#define OOC_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <CUnit/CUnit.h>

#include "ooc_gemm.h"

/* Run every registered suite; return 0 only if no assertion or test failed
 * (CU_basic_run_tests alone returns success either way). */
int tu_run(void);

size_t tu_elem(ooc_dtype_t t);
double tu_eps(ooc_dtype_t t);

/* count elements of uniform random values in [-1, 1), never 0 */
void tu_fill(ooc_dtype_t t, void *x, size_t count, uint64_t *seed);
/* count elements set to NaN */
void tu_fill_nan(ooc_dtype_t t, void *x, size_t count);

/* Open an output's temporary file tmp (PATH.ooc-tmp) as a matrix file with
 * spec: while it ends in its trailer (io.h OOC_TMP_TRAILER), through a copy
 * without it (removed once open). */
ooc_status_t tu_open_tmp(ooc_handle_t *h, const char *tmp, const ooc_file_spec_t *spec, ooc_file_t **f);

/* Elements a stored matrix needs: ld * lines, for op(X) rows x cols. */
size_t tu_stored(ooc_layout_t layout, ooc_op_t op, int64_t rows, int64_t cols, int64_t ld);

/* Check C (after) against alpha*op(A)*op(B) + beta*C0 computed by OpenBLAS,
 * element by element, with |error| <= 4 (k + 2) eps (|alpha| |op(A)| |op(B)| + |beta| |C0|).
 * Elements of C outside the m x n matrix (leading-dimension padding) must
 * equal those of C0. Returns the number of bad elements (0: pass) and the
 * largest error relative to its bound in *worst. */
int64_t tu_check(ooc_dtype_t t, ooc_layout_t layout, ooc_op_t ta, ooc_op_t tb, int64_t m,
                 int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                 const void *B, int64_t ldb, const void *beta, const void *C0, const void *C,
                 int64_t ldc, double *worst);

/* A fresh directory for a suite's files ("/tmp/ooc_test_NAME_XXXXXX"),
 * removed with everything in it by tu_dir_remove(); 0 on success. */
int tu_dir_make(const char *name);
int tu_dir_remove(void);
/* That directory's path to `name` (one of 8 rotating buffers: several may
 * be used in one call). */
const char *tu_path(const char *name);
/* A new empty directory tu_path(name) for a fake file tree (a /proc, a
 * /sys): its path, which stays the current tree until the next call. */
const char *tu_tree(const char *name);
/* The current tree's path + rel := text, making the directories on the way
 * (a failure fails the test). */
void tu_put(const char *rel, const char *text);
/* The first NUMA node this process may take memory from
 * (/proc/self/status Mems_allowed_list; 0 when unreadable). */
int tu_mem_node(void);
/* 1 when the two files hold the same bytes (both readable), else 0. */
int tu_same_file(const char *p, const char *q);

/* Set handle h to backend `kind` and multiply 1x1x1 with it: 1 when it runs,
 * 0 when it cannot run here (no GPU, not built: print why; the suite then
 * exits 77), -1 when it runs wrong. */
int tu_backend_runs(ooc_handle_t *h, int kind);

#endif
