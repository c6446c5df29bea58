/* SPDX-License-Identifier: MIT */
/*
 * verifyutil.h: what the two suites of ooc_verify_files() share
 * (test_verify.c, test_verify_special.c): matrices in memory stored as a
 * file stores them, the true C computed from them in long double, .npy
 * files of them in a temporary directory, and the call under test.
 */
#ifndef OOC_VERIFYUTIL_H
#define OOC_VERIFYUTIL_H

#include <stdint.h>

#include "ooc_gemm.h"

/* the handle, the temporary directory and how many files put() made in it */
extern ooc_handle_t *H;
extern char Dir[64];
extern int Nfiles;

extern const ooc_dtype_t Types[4];

int cplx(ooc_dtype_t t);
int single(ooc_dtype_t t);

/* ---- matrices in memory, stored as a file stores them ---- */

typedef struct {
    ooc_dtype_t t;
    ooc_layout_t lay;
    int64_t rows, cols; /* as stored */
    void *x;
} mat_t;

/* a rows x cols matrix, random (seed) or uninitialised (NULL) */
mat_t mat_new(ooc_dtype_t t, ooc_layout_t lay, int64_t rows, int64_t cols, uint64_t *seed);
/* element (i, j) as stored */
void get(const mat_t *a, int64_t i, int64_t j, long double *re, long double *im);
void set(mat_t *a, int64_t i, int64_t j, long double re, long double im);
/* element (i, j) of op(a) */
void get_op(const mat_t *a, ooc_op_t op, int64_t i, int64_t j, long double *re, long double *im);

/* scalar of dtype t holding (re, im) */
typedef union {
    float f[2];
    double d[2];
} scal_t;

scal_t scal(ooc_dtype_t t, double re, double im);
/* C (m x n, stored in lay) = alpha op(A) op(B) + beta C0 (C0 NULL: beta 0),
 * accumulated in long double and rounded once */
mat_t product(ooc_op_t ta, ooc_op_t tb, double alr, double ali, const mat_t *A,
              const mat_t *B, double ber, double bei, const mat_t *C0, ooc_layout_t lay);
/* element (i, j) times (1 + rel), plus add (real part) */
void nudge(mat_t *c, int64_t i, int64_t j, double rel, double add);
mat_t mat_copy(const mat_t *a);
uint64_t data_bytes(const mat_t *a);

/* ---- files ---- */

/* Write a as a new .npy file and reopen it for reading. */
ooc_file_t *put(const mat_t *a);
/* Close the files of A, B and C and free their matrices. */
void release(ooc_file_t *fa, ooc_file_t *fb, ooc_file_t *fc, mat_t *a, mat_t *b, mat_t *c);

/* verify; the call must succeed */
ooc_verify_result_t check(ooc_op_t ta, ooc_op_t tb, const scal_t *al, ooc_file_t *A,
                          ooc_file_t *B, const scal_t *be, ooc_file_t *C0, ooc_file_t *C,
                          int vectors, int64_t sample_rows);
/* verify with any status */
ooc_status_t try_check(ooc_op_t ta, ooc_op_t tb, const scal_t *al, ooc_file_t *A, ooc_file_t *B,
                       const scal_t *be, ooc_file_t *C0, ooc_file_t *C, int vectors, int64_t sample_rows,
                       ooc_verify_result_t *r);

/* the temporary directory Dir: everything in it, then it */
void remove_dir(void);

#endif
