/* SPDX-License-Identifier: MIT */
/*
 * verifyutil.c: see verifyutil.h. The true C is computed here in memory with
 * a plain triple loop in long double, indexing each stored operand directly,
 * so that it shares nothing with the layout handling under test.
 */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "testutil.h"
#include "verifyutil.h"

ooc_handle_t *H;
char Dir[64];
int Nfiles;

const ooc_dtype_t Types[4] = {OOC_R32, OOC_R64, OOC_C32, OOC_C64};

int cplx(ooc_dtype_t t) { return t == OOC_C32 || t == OOC_C64; }
int single(ooc_dtype_t t) { return t == OOC_R32 || t == OOC_C32; }

/* ---- matrices in memory, stored as a file stores them ---- */

mat_t mat_new(ooc_dtype_t t, ooc_layout_t lay, int64_t rows, int64_t cols, uint64_t *seed)
{
    mat_t a = {t, lay, rows, cols, malloc((size_t)(rows * cols) * tu_elem(t))};
    CU_ASSERT_PTR_NOT_NULL_FATAL(a.x);
    if (seed) tu_fill(t, a.x, (size_t)(rows * cols), seed);
    return a;
}

static size_t idx(const mat_t *a, int64_t i, int64_t j)
{
    return a->lay == OOC_ROW_MAJOR ? (size_t)(i * a->cols + j) : (size_t)(i + j * a->rows);
}

void get(const mat_t *a, int64_t i, int64_t j, long double *re, long double *im)
{
    size_t q = idx(a, i, j);
    switch (a->t) {
    case OOC_R32: *re = ((const float *)a->x)[q]; *im = 0; break;
    case OOC_R64: *re = ((const double *)a->x)[q]; *im = 0; break;
    case OOC_C32: *re = ((const float *)a->x)[2 * q]; *im = ((const float *)a->x)[2 * q + 1]; break;
    case OOC_C64: *re = ((const double *)a->x)[2 * q]; *im = ((const double *)a->x)[2 * q + 1]; break;
    }
}

void set(mat_t *a, int64_t i, int64_t j, long double re, long double im)
{
    size_t q = idx(a, i, j);
    switch (a->t) {
    case OOC_R32: ((float *)a->x)[q] = (float)re; break;
    case OOC_R64: ((double *)a->x)[q] = (double)re; break;
    case OOC_C32: ((float *)a->x)[2 * q] = (float)re; ((float *)a->x)[2 * q + 1] = (float)im; break;
    case OOC_C64: ((double *)a->x)[2 * q] = (double)re; ((double *)a->x)[2 * q + 1] = (double)im; break;
    }
}

/* element (i, j) of op(a) */
void get_op(const mat_t *a, ooc_op_t op, int64_t i, int64_t j, long double *re, long double *im)
{
    if (op == OOC_OP_N) get(a, i, j, re, im);
    else get(a, j, i, re, im);
    if (op == OOC_OP_C) *im = -*im;
}

scal_t scal(ooc_dtype_t t, double re, double im)
{
    scal_t s;
    memset(&s, 0, sizeof s);
    if (single(t)) s.f[0] = (float)re, s.f[1] = (float)im;
    else s.d[0] = re, s.d[1] = im;
    return s;
}

/* C (m x n, stored in lay) = alpha op(A) op(B) + beta C0 (C0 NULL: beta 0),
 * accumulated in long double and rounded once */
mat_t product(ooc_op_t ta, ooc_op_t tb, double alr, double ali, const mat_t *A,
              const mat_t *B, double ber, double bei, const mat_t *C0, ooc_layout_t lay)
{
    int64_t m = ta == OOC_OP_N ? A->rows : A->cols, k = ta == OOC_OP_N ? A->cols : A->rows;
    int64_t n = tb == OOC_OP_N ? B->cols : B->rows;
    mat_t c = mat_new(A->t, lay, m, n, NULL);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            long double sr = 0, si = 0;
            for (int64_t p = 0; p < k; p++) {
                long double ar, ai, br, bi;
                get_op(A, ta, i, p, &ar, &ai);
                get_op(B, tb, p, j, &br, &bi);
                sr += ar * br - ai * bi;
                si += ar * bi + ai * br;
            }
            if (!cplx(A->t)) si = 0; /* real data: no imaginary parts (0 * Inf would make them NaN) */
            long double rr = alr * sr - ali * si, ri = alr * si + ali * sr;
            if (C0) {
                long double cr, ci;
                get(C0, i, j, &cr, &ci);
                rr += ber * cr - bei * ci;
                ri += ber * ci + bei * cr;
            }
            set(&c, i, j, rr, ri);
        }
    return c;
}

/* element (i, j) times (1 + rel), plus add (real part) */
void nudge(mat_t *c, int64_t i, int64_t j, double rel, double add)
{
    long double re, im;
    get(c, i, j, &re, &im);
    set(c, i, j, re * (1 + (long double)rel) + add, im * (1 + (long double)rel));
}

mat_t mat_copy(const mat_t *a)
{
    mat_t b = *a;
    size_t bytes = (size_t)(a->rows * a->cols) * tu_elem(a->t);
    b.x = malloc(bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b.x);
    memcpy(b.x, a->x, bytes);
    return b;
}

uint64_t data_bytes(const mat_t *a) { return (uint64_t)(a->rows * a->cols) * tu_elem(a->t); }

/* ---- files ---- */

/* Write a as a new .npy file and reopen it for reading. */
ooc_file_t *put(const mat_t *a)
{
    char path[128];
    snprintf(path, sizeof path, "%s/m%d.npy", Dir, Nfiles++);
    ooc_file_spec_t spec = {OOC_FORMAT_NPY, a->rows, a->cols, a->t, a->lay};
    ooc_file_t *w = NULL, *r = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, 0, &w), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_write(H, w, 0, a->x, (uint64_t)(a->rows * a->cols)), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_commit(H, w), OOC_SUCCESS);
    ooc_file_close(w, 0);
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R32, OOC_ROW_MAJOR};
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(H, path, &any, &r), OOC_SUCCESS);
    return r;
}

/* Close the files of A, B and C and free their matrices. */
void release(ooc_file_t *fa, ooc_file_t *fb, ooc_file_t *fc, mat_t *a, mat_t *b, mat_t *c)
{
    ooc_file_close(fa, 0);
    ooc_file_close(fb, 0);
    ooc_file_close(fc, 0);
    free(a->x);
    free(b->x);
    free(c->x);
}

/* verify; the call must succeed */
ooc_verify_result_t check(ooc_op_t ta, ooc_op_t tb, const scal_t *al, ooc_file_t *A,
                          ooc_file_t *B, const scal_t *be, ooc_file_t *C0, ooc_file_t *C,
                          int vectors, int64_t sample_rows)
{
    ooc_verify_result_t r;
    memset(&r, 0, sizeof r);
    ooc_status_t st = ooc_verify_files(H, ta, tb, al, A, B, be, C0, C, vectors, sample_rows, &r);
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n  ooc_verify_files: %s\n", ooc_last_error(H));
    return r;
}

/* verify with any status */
ooc_status_t try_check(ooc_op_t ta, ooc_op_t tb, const scal_t *al, ooc_file_t *A, ooc_file_t *B,
                       const scal_t *be, ooc_file_t *C0, ooc_file_t *C, int vectors, int64_t sample_rows,
                       ooc_verify_result_t *r)
{
    memset(r, 0, sizeof *r);
    return ooc_verify_files(H, ta, tb, al, A, B, be, C0, C, vectors, sample_rows, r);
}

/* ---- temporary directory ---- */

/* everything in it (temporary files of a test stopped half-way too), then it */
void remove_dir(void)
{
    DIR *d = opendir(Dir);
    if (d != NULL) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(path, sizeof path, "%s/%s", Dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(Dir);
}
