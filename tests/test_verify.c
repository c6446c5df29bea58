/* SPDX-License-Identifier: MIT */
/*
 * test_verify.c: ooc_verify_files(), the CPU check of a file multiply.
 *
 * Operands are written as .npy files (ooc_file_create/_write/_commit, then
 * reopened with ooc_file_open) in a temporary directory removed at the end.
 * The true C is computed here in memory with a plain triple loop in long
 * double, indexing each stored operand directly, so that it shares nothing
 * with the layout handling under test. Checks: the exact mode passes for
 * every dtype, op and mix of file orders and fails on one element off by
 * 1e-6; the Freivalds mode (forced with a tiny host budget) passes a correct
 * C and fails a row scaled by 1 + 1e-6 or one element far off; sampled rows
 * catch what they sample and nothing else; NaN fails; bad arguments and
 * read errors return their statuses and leave the result untouched. And the
 * defects of the first Freivalds threshold, each test failing before: one
 * float32 element 0.1 off in a long row is caught; a NaN in B (or C0) no
 * longer switches the check off; overflow is never a pass nor a false
 * failure; gradual underflow is no false failure; a tall C is checked in
 * ranges of rows within the budget, and a sample that does not fit refused.
 */
#include "config.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "testutil.h"

static ooc_handle_t *H;
static char Dir[64];
static int Nfiles;

static const ooc_dtype_t Types[4] = {OOC_R32, OOC_R64, OOC_C32, OOC_C64};
static const ooc_op_t Ops[3] = {OOC_OP_N, OOC_OP_T, OOC_OP_C};
static const ooc_layout_t Lays[2] = {OOC_ROW_MAJOR, OOC_COL_MAJOR};

static int cplx(ooc_dtype_t t) { return t == OOC_C32 || t == OOC_C64; }
static int single(ooc_dtype_t t) { return t == OOC_R32 || t == OOC_C32; }

/* ---- matrices in memory, stored as a file stores them ---- */

typedef struct {
    ooc_dtype_t t;
    ooc_layout_t lay;
    int64_t rows, cols; /* as stored */
    void *x;
} mat_t;

static mat_t mat_new(ooc_dtype_t t, ooc_layout_t lay, int64_t rows, int64_t cols, uint64_t *seed)
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

static void get(const mat_t *a, int64_t i, int64_t j, long double *re, long double *im)
{
    size_t q = idx(a, i, j);
    switch (a->t) {
    case OOC_R32: *re = ((const float *)a->x)[q]; *im = 0; break;
    case OOC_R64: *re = ((const double *)a->x)[q]; *im = 0; break;
    case OOC_C32: *re = ((const float *)a->x)[2 * q]; *im = ((const float *)a->x)[2 * q + 1]; break;
    case OOC_C64: *re = ((const double *)a->x)[2 * q]; *im = ((const double *)a->x)[2 * q + 1]; break;
    }
}

static void set(mat_t *a, int64_t i, int64_t j, long double re, long double im)
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
static void get_op(const mat_t *a, ooc_op_t op, int64_t i, int64_t j, long double *re, long double *im)
{
    if (op == OOC_OP_N) get(a, i, j, re, im);
    else get(a, j, i, re, im);
    if (op == OOC_OP_C) *im = -*im;
}

/* scalar of dtype t holding (re, im) */
typedef union {
    float f[2];
    double d[2];
} scal_t;

static scal_t scal(ooc_dtype_t t, double re, double im)
{
    scal_t s;
    memset(&s, 0, sizeof s);
    if (single(t)) s.f[0] = (float)re, s.f[1] = (float)im;
    else s.d[0] = re, s.d[1] = im;
    return s;
}

/* C (m x n, stored in lay) = alpha op(A) op(B) + beta C0 (C0 NULL: beta 0),
 * accumulated in long double and rounded once */
static mat_t product(ooc_op_t ta, ooc_op_t tb, double alr, double ali, const mat_t *A,
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

/* the bound of element (i, j): sum_p |op(A)_ip| |op(B)_pj| */
static double elem_bound(ooc_op_t ta, ooc_op_t tb, const mat_t *A, const mat_t *B, int64_t i, int64_t j)
{
    int64_t k = ta == OOC_OP_N ? A->cols : A->rows;
    double s = 0;
    for (int64_t p = 0; p < k; p++) {
        long double ar, ai, br, bi;
        get_op(A, ta, i, p, &ar, &ai);
        get_op(B, tb, p, j, &br, &bi);
        s += hypot((double)ar, (double)ai) * hypot((double)br, (double)bi);
    }
    return s;
}

/* element (i, j) times (1 + rel), plus add (real part) */
static void nudge(mat_t *c, int64_t i, int64_t j, double rel, double add)
{
    long double re, im;
    get(c, i, j, &re, &im);
    set(c, i, j, re * (1 + (long double)rel) + add, im * (1 + (long double)rel));
}

static mat_t mat_copy(const mat_t *a)
{
    mat_t b = *a;
    size_t bytes = (size_t)(a->rows * a->cols) * tu_elem(a->t);
    b.x = malloc(bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b.x);
    memcpy(b.x, a->x, bytes);
    return b;
}

static uint64_t data_bytes(const mat_t *a) { return (uint64_t)(a->rows * a->cols) * tu_elem(a->t); }

/* ---- files ---- */

/* Write a as a new .npy file and reopen it for reading. */
static ooc_file_t *put(const mat_t *a)
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
static void release(ooc_file_t *fa, ooc_file_t *fb, ooc_file_t *fc, mat_t *a, mat_t *b, mat_t *c)
{
    ooc_file_close(fa, 0);
    ooc_file_close(fb, 0);
    ooc_file_close(fc, 0);
    free(a->x);
    free(b->x);
    free(c->x);
}

static double tol_of(ooc_dtype_t t, int64_t k) { return 4.0 * (double)(k + 2) * tu_eps(t); }

/* verify; the call must succeed */
static ooc_verify_result_t check(ooc_op_t ta, ooc_op_t tb, const scal_t *al, ooc_file_t *A,
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

/* ---- exact mode ---- */

static void test_exact(void)
{
    enum { M = 7, N = 5, K = 6 };
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
    uint64_t seed = 11;
    int cases = 0, perturbed = 0;
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        double tol = tol_of(t, K);
        for (int ai = 0; ai < 3; ai++)
            for (int bi = 0; bi < 3; bi++)
                for (int lays = 0; lays < 8; lays++) {
                    ooc_op_t ta = Ops[ai], tb = Ops[bi];
                    ooc_layout_t la = Lays[lays & 1], lb = Lays[(lays >> 1) & 1], lc = Lays[(lays >> 2) & 1];
                    int with_c0 = (ai + bi + lays) % 2;
                    mat_t a = ta == OOC_OP_N ? mat_new(t, la, M, K, &seed) : mat_new(t, la, K, M, &seed);
                    mat_t b = tb == OOC_OP_N ? mat_new(t, lb, K, N, &seed) : mat_new(t, lb, N, K, &seed);
                    mat_t c0 = mat_new(t, lc == OOC_ROW_MAJOR ? OOC_COL_MAJOR : OOC_ROW_MAJOR, M, N, &seed);
                    double alr = 0.75, ali = cplx(t) ? -0.5 : 0, ber = with_c0 ? -1.25 : 0,
                           bei = with_c0 && cplx(t) ? 0.25 : 0;
                    scal_t al = scal(t, alr, ali), be = scal(t, ber, bei);
                    mat_t c = product(ta, tb, alr, ali, &a, &b, ber, bei, with_c0 ? &c0 : NULL, lc);
                    ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
                    ooc_file_t *fc0 = with_c0 ? put(&c0) : NULL;
                    ooc_verify_result_t r = check(ta, tb, &al, fa, fb, &be, fc0, fc, 4, 2);
                    int ok = r.exact == 1 && r.vectors == 0 && r.rows_checked == M && r.passed == 1 &&
                             r.max_rel_err <= tol && r.tolerance == tol &&
                             r.bytes_read == data_bytes(&a) + data_bytes(&b) + data_bytes(&c) +
                                                 (with_c0 ? data_bytes(&c0) : 0);
                    CU_ASSERT(ok);
                    if (!ok)
                        fprintf(stderr, "\n  dtype %d op %d%d layouts %d C0 %d: exact %d passed %d err %g tol %g bytes %llu\n",
                                (int)t, (int)ta, (int)tb, lays, with_c0, r.exact, r.passed, r.max_rel_err,
                                r.tolerance, (unsigned long long)r.bytes_read);
                    cases++;
                    /* one element off by a relative 1e-6 (1e-3 for single precision) */
                    if (ai == bi || lays == 5) {
                        mat_t bad = mat_copy(&c);
                        nudge(&bad, M - 1, 2, single(t) ? 1e-3 : 1e-6, 0);
                        ooc_file_t *fbad = put(&bad);
                        r = check(ta, tb, &al, fa, fb, &be, fc0, fbad, 4, 2);
                        CU_ASSERT_EQUAL(r.exact, 1);
                        CU_ASSERT_EQUAL(r.passed, 0);
                        CU_ASSERT(r.max_rel_err > tol);
                        perturbed++;
                        ooc_file_close(fbad, 0);
                        free(bad.x);
                    }
                    ooc_file_close(fa, 0);
                    ooc_file_close(fb, 0);
                    ooc_file_close(fc, 0);
                    ooc_file_close(fc0, 0);
                    free(a.x);
                    free(b.x);
                    free(c.x);
                    free(c0.x);
                }
    }
    CU_ASSERT_EQUAL(cases, 4 * 9 * 8);
    CU_ASSERT(perturbed >= 4 * 4);
}

/* ---- Freivalds mode ---- */

enum { FM = 300, FN = 200, FK = 150 };

typedef struct {
    ooc_op_t ta, tb;
    ooc_layout_t la, lb, lc;
    int with_c0;
} combo_t;

static const combo_t Combos[] = {
    {OOC_OP_N, OOC_OP_N, OOC_ROW_MAJOR, OOC_ROW_MAJOR, OOC_ROW_MAJOR, 0},
    {OOC_OP_T, OOC_OP_N, OOC_COL_MAJOR, OOC_ROW_MAJOR, OOC_COL_MAJOR, 1},
    {OOC_OP_C, OOC_OP_T, OOC_ROW_MAJOR, OOC_COL_MAJOR, OOC_ROW_MAJOR, 1},
    {OOC_OP_N, OOC_OP_C, OOC_COL_MAJOR, OOC_COL_MAJOR, OOC_ROW_MAJOR, 0},
    {OOC_OP_C, OOC_OP_C, OOC_COL_MAJOR, OOC_ROW_MAJOR, OOC_COL_MAJOR, 1},
};

/* operands of an FM x FN x FK multiply in files, and the true C */
typedef struct {
    mat_t a, b, c0, c;
    ooc_file_t *fa, *fb, *fc0, *fc;
    scal_t al, be;
} prob_t;

static void prob_make(prob_t *p, ooc_dtype_t t, const combo_t *x, uint64_t *seed)
{
    memset(p, 0, sizeof *p);
    p->a = x->ta == OOC_OP_N ? mat_new(t, x->la, FM, FK, seed) : mat_new(t, x->la, FK, FM, seed);
    p->b = x->tb == OOC_OP_N ? mat_new(t, x->lb, FK, FN, seed) : mat_new(t, x->lb, FN, FK, seed);
    double alr = -1.5, ali = cplx(t) ? 0.5 : 0, ber = x->with_c0 ? 0.5 : 0, bei = x->with_c0 && cplx(t) ? -2 : 0;
    p->al = scal(t, alr, ali);
    p->be = scal(t, ber, bei);
    if (x->with_c0) {
        p->c0 = mat_new(t, x->lc, FM, FN, seed);
        p->fc0 = put(&p->c0);
    }
    p->c = product(x->ta, x->tb, alr, ali, &p->a, &p->b, ber, bei, x->with_c0 ? &p->c0 : NULL, x->lc);
    p->fa = put(&p->a);
    p->fb = put(&p->b);
    p->fc = put(&p->c);
}

static void prob_free(prob_t *p)
{
    ooc_file_close(p->fa, 0);
    ooc_file_close(p->fb, 0);
    ooc_file_close(p->fc0, 0);
    ooc_file_close(p->fc, 0);
    free(p->a.x);
    free(p->b.x);
    free(p->c0.x);
    free(p->c.x);
}

static uint64_t prob_bytes(const prob_t *p)
{
    return data_bytes(&p->a) + data_bytes(&p->b) + data_bytes(&p->c) + (p->fc0 ? data_bytes(&p->c0) : 0);
}

static void test_freivalds(void)
{
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 64 << 10), OOC_SUCCESS);
    uint64_t seed = 23;
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        double tol = tol_of(t, FK);
        for (size_t ci = 0; ci < sizeof Combos / sizeof Combos[0]; ci++) {
            const combo_t *x = &Combos[ci];
            prob_t p;
            prob_make(&p, t, x, &seed);
            ooc_file_t *c0 = p.fc0;

            /* correct: passes; each file read once without samples */
            ooc_verify_result_t r = check(x->ta, x->tb, &p.al, p.fa, p.fb, &p.be, c0, p.fc, 3, 0);
            int ok = r.exact == 0 && r.vectors == 3 && r.rows_checked == 0 && r.passed == 1 &&
                     r.max_rel_err <= tol && r.tolerance == tol && r.bytes_read == prob_bytes(&p);
            CU_ASSERT(ok);
            if (!ok)
                fprintf(stderr, "\n  dtype %d combo %zu: exact %d vectors %d passed %d err %g tol %g bytes %llu of %llu\n",
                        (int)t, ci, r.exact, r.vectors, r.passed, r.max_rel_err, r.tolerance,
                        (unsigned long long)r.bytes_read, (unsigned long long)prob_bytes(&p));
            /* with sampled rows too (64 KiB holds one or two of them) */
            r = check(x->ta, x->tb, &p.al, p.fa, p.fb, &p.be, c0, p.fc, 2, 2);
            CU_ASSERT(r.exact == 0 && r.vectors == 2 && r.passed == 1);
            CU_ASSERT(r.rows_checked >= 1 && r.rows_checked <= 2);
            CU_ASSERT(r.max_rel_err <= tol);
            CU_ASSERT(r.bytes_read > prob_bytes(&p));

            /* one element far off (vectors alone) */
            mat_t bad = mat_copy(&p.c);
            nudge(&bad, 123, 77, 0, 10.0);
            ooc_file_t *fbad = put(&bad);
            r = check(x->ta, x->tb, &p.al, p.fa, p.fb, &p.be, c0, fbad, 3, 0);
            CU_ASSERT(r.exact == 0 && r.passed == 0 && r.max_rel_err > tol);
            ooc_file_close(fbad, 0);
            free(bad.x);

            /* one row scaled by 1 + 1e-6 (vectors alone): above the tolerance of double precision */
            if (!single(t)) {
                bad = mat_copy(&p.c);
                for (int64_t j = 0; j < FN; j++) nudge(&bad, 201, j, 1e-6, 0);
                fbad = put(&bad);
                r = check(x->ta, x->tb, &p.al, p.fa, p.fb, &p.be, c0, fbad, 3, 0);
                CU_ASSERT(r.exact == 0 && r.passed == 0 && r.max_rel_err > tol);
                ooc_file_close(fbad, 0);
                free(bad.x);
            }
            prob_free(&p);
        }
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
}

/* ---- sampled rows ---- */

static void test_sample_rows(void)
{
    /* 256 KiB: too small for exact, room for 5 sampled rows (0, 74, 149, 224, 299) */
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 256 << 10), OOC_SUCCESS);
    uint64_t seed = 37;
    const ooc_dtype_t t = OOC_R64;
    double tol = tol_of(t, FK);
    for (size_t ci = 0; ci < sizeof Combos / sizeof Combos[0]; ci++) {
        const combo_t *x = &Combos[ci];
        prob_t p;
        prob_make(&p, t, x, &seed);
        ooc_verify_result_t r = check(x->ta, x->tb, &p.al, p.fa, p.fb, &p.be, p.fc0, p.fc, 0, 5);
        CU_ASSERT(r.exact == 0 && r.vectors == 0 && r.rows_checked == 5 && r.passed == 1);
        CU_ASSERT(r.max_rel_err <= tol);

        /* a wrong element in a sampled row: caught; in a row between samples: not seen */
        for (int row = 0; row < 2; row++) {
            mat_t bad = mat_copy(&p.c);
            nudge(&bad, row == 0 ? 224 : 225, 9, 0, 0.5);
            ooc_file_t *fbad = put(&bad);
            r = check(x->ta, x->tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, 0, 5);
            CU_ASSERT_EQUAL(r.rows_checked, 5);
            CU_ASSERT_EQUAL(r.passed, row == 0 ? 0 : 1);
            if (row == 0) CU_ASSERT(r.max_rel_err > tol);
            ooc_file_close(fbad, 0);
            free(bad.x);
        }

        /* an error too small for the vectors but not for the row's own
         * bound: found only by the sample (with the vectors run alongside) */
        mat_t bad = mat_copy(&p.c);
        double abs_al = fabs(p.al.d[0]); /* real alpha (t is R64) */
        nudge(&bad, 299, 150, 0, 20 * tol * abs_al * elem_bound(x->ta, x->tb, &p.a, &p.b, 299, 150));
        ooc_file_t *fbad = put(&bad);
        r = check(x->ta, x->tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, 2, 0);
        CU_ASSERT_EQUAL(r.passed, 1);
        r = check(x->ta, x->tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, 2, 5);
        CU_ASSERT_EQUAL(r.passed, 0);
        CU_ASSERT(r.max_rel_err > 10 * tol);
        ooc_file_close(fbad, 0);
        free(bad.x);
        prob_free(&p);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
}

/* ---- NaN, alpha = 0, beta = 0 with a NaN C0 ---- */

static void test_special_values(void)
{
    enum { M = 9, N = 8, K = 7 };
    uint64_t seed = 41;
    const ooc_dtype_t t = OOC_C32;
    mat_t a = mat_new(t, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(t, OOC_COL_MAJOR, K, N, &seed);
    mat_t c0 = mat_new(t, OOC_COL_MAJOR, M, N, &seed);
    scal_t one = scal(t, 1, 0), zero = scal(t, 0, 0);
    mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_ROW_MAJOR);
    ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
    for (int budget = 0; budget < 2; budget++) {
        /* 4 KiB: not exact */
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, budget ? 4 << 10 : 0), OOC_SUCCESS);
        mat_t nan = mat_copy(&c);
        ((float *)nan.x)[2 * 17 + 1] = NAN;
        ooc_file_t *fnan = put(&nan);
        ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fnan, 2, 1);
        CU_ASSERT_EQUAL(r.exact, !budget);
        CU_ASSERT_EQUAL(r.passed, 0);
        CU_ASSERT(isnan(r.max_rel_err) || isinf(r.max_rel_err));
        ooc_file_close(fnan, 0);
        free(nan.x);

        /* beta = 0: C0 is not read, NaN in it does not matter */
        tu_fill_nan(t, c0.x, M * N);
        ooc_file_t *fc0 = put(&c0);
        r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, fc0, fc, 2, 1);
        CU_ASSERT_EQUAL(r.passed, 1);
        if (!budget) CU_ASSERT_EQUAL(r.bytes_read, data_bytes(&a) + data_bytes(&b) + data_bytes(&c));

        /* alpha = 0, beta = 1: C must equal C0; A and B are not read */
        r = check(OOC_OP_N, OOC_OP_N, &zero, fa, fb, &one, fc, fc, 2, 1);
        CU_ASSERT_EQUAL(r.passed, 1);
        if (!budget) CU_ASSERT_EQUAL(r.bytes_read, 2 * data_bytes(&c));
        r = check(OOC_OP_N, OOC_OP_N, &zero, fa, fb, &one, fc0, fc, 2, 1); /* C0 is NaN: fails */
        CU_ASSERT_EQUAL(r.passed, 0);
        ooc_file_close(fc0, 0);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
    release(fa, fb, fc, &a, &b, &c);
    free(c0.x);
}

/* ---- NaN and Inf in the inputs: a correct C passes, exactly or not ----
 * Before, any NaN in C failed the check even where the reference was NaN. */
static void test_nonfinite_inputs(void)
{
    enum { M = 40, N = 30, K = 20 };
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        uint64_t seed = 77 + (uint64_t)ti;
        mat_t a = mat_new(t, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(t, OOC_ROW_MAJOR, K, N, &seed);
        set(&a, 3, 5, NAN, 0);      /* row 3 of C: NaN */
        set(&a, 9, 2, INFINITY, 0); /* row 9: +-Inf (one infinite term per element) */
        set(&b, 7, 11, -INFINITY, 0); /* column 11: +-Inf, NaN in rows 3 and 9 */
        scal_t one = scal(t, 1, 0), zero = scal(t, 0, 0);
        mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_ROW_MAJOR);
        ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
        for (int budget = 0; budget < 2; budget++) {
            CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, budget ? 4 << 10 : 0), OOC_SUCCESS);
            ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 2, 5);
            if (!r.passed)
                fprintf(stderr, "\n    dtype %d budget %d: exact %d error %g nonfinite %lld\n", (int)t, budget,
                        r.exact, r.max_rel_err, (long long)r.nonfinite);
            CU_ASSERT_EQUAL(r.exact, !budget);
            CU_ASSERT_EQUAL(r.passed, 1);
            CU_ASSERT(r.nonfinite > 0);
            CU_ASSERT(isfinite(r.max_rel_err));
            /* C wrong around its non-finite values: a finite value where the reference is
             * NaN, an infinity where it is finite, and (real data; complex alpha * Inf is NaN)
             * an infinity of the other sign. Exact rows only: column 11 is infinite, so every
             * product of a row with a random vector is, whatever else the row holds. */
            for (int bad = 0; bad < 3 && !budget; bad++) {
                if (bad == 2 && cplx(t)) continue;
                mat_t d = mat_copy(&c);
                if (bad == 0) set(&d, 3, 0, 1.0, 0);
                if (bad == 1) set(&d, 1, 0, INFINITY, 0);
                if (bad == 2) {
                    long double re, im;
                    get(&d, 0, 11, &re, &im);
                    CU_ASSERT(isinf((double)re));
                    set(&d, 0, 11, -re, im);
                }
                ooc_file_t *fd = put(&d);
                r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fd, 2, M);
                if (r.passed)
                    fprintf(stderr, "\n    dtype %d budget %d bad %d: exact %d rows %lld error %g nonfinite %lld\n",
                            (int)t, budget, bad, r.exact, (long long)r.rows_checked, r.max_rel_err,
                            (long long)r.nonfinite);
                CU_ASSERT_EQUAL(r.passed, 0);
                CU_ASSERT(isinf(r.max_rel_err));
                ooc_file_close(fd, 0);
                free(d.x);
            }
        }
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
        release(fa, fb, fc, &a, &b, &c);
    }
}

/* ---- complex C0 holding Inf beside a finite part, NaN and -0 ----
 * C = C0 (alpha 0, beta 1: BLAS leaves C0 as it is) failed: the reference
 * took (1, 0) (Inf, 1) = (Inf, NaN). And C = A B + C0 as the library
 * computes it failed where its finite part differed from the reference's in
 * the last bits ((Inf, y) against (Inf, y')): which parts of a complex
 * element are NaN or infinite depends on the BLAS's complex arithmetic, so
 * complex elements are compared by where they are non-finite, as
 * Freivalds' check does. A finite element where the reference is not, or
 * the reverse, still fails. */
static void test_complex_inf_in_c0(void)
{
    enum { M = 24, N = 18, K = 11 };
    for (int ti = 2; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        uint64_t seed = 91 + (uint64_t)ti;
        mat_t a = mat_new(t, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(t, OOC_ROW_MAJOR, K, N, &seed);
        mat_t c0 = mat_new(t, OOC_ROW_MAJOR, M, N, &seed);
        set(&c0, 2, 3, INFINITY, 1);
        set(&c0, 4, 5, 1, -INFINITY);
        set(&c0, 6, 7, NAN, 2);
        set(&c0, 8, 9, -0.0L, -1);
        ooc_file_t *fa = put(&a), *fb = put(&b), *f0 = put(&c0);
        scal_t zero = scal(t, 0, 0), one = scal(t, 1, 0);
        for (int alpha = 0; alpha < 2; alpha++) {
            /* C as the library computes it */
            char path[128];
            snprintf(path, sizeof path, "%s/ci%d_%d.npy", Dir, ti, alpha);
            ooc_file_spec_t spec = {OOC_FORMAT_NPY, M, N, t, OOC_ROW_MAJOR};
            ooc_file_t *w = NULL;
            CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, 0, &w), OOC_SUCCESS);
            ooc_files_opts_t o = {.journal = NULL};
            CU_ASSERT_EQUAL_FATAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, alpha ? &one : &zero, fa, fb, &one, f0, w, &o),
                                  OOC_SUCCESS);
            CU_ASSERT_EQUAL_FATAL(ooc_file_commit(H, w), OOC_SUCCESS);
            ooc_file_close(w, 0);
            ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R32, OOC_ROW_MAJOR};
            ooc_file_t *fc = NULL;
            CU_ASSERT_EQUAL_FATAL(ooc_file_open(H, path, &any, &fc), OOC_SUCCESS);
            for (int v = 0; v < 2; v++) { /* exact, then Freivalds with sampled rows */
                CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, v ? 4 << 10 : 0), OOC_SUCCESS);
                ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, alpha ? &one : &zero, fa, fb, &one, f0, fc, 2, 5);
                if (!r.passed)
                    fprintf(stderr, "\n    dtype %d alpha %d: exact %d error %g\n", (int)t, alpha, r.exact,
                            r.max_rel_err);
                CU_ASSERT_EQUAL(r.exact, !v);
                CU_ASSERT_EQUAL(r.passed, 1);
            }
            CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
            ooc_file_close(fc, 0);
            /* wrong: finite where the reference is not, and the reverse */
            for (int bad = 0; bad < 2; bad++) {
                mat_t d = alpha ? product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 1, 0, &c0, OOC_ROW_MAJOR) : mat_copy(&c0);
                if (bad == 0) set(&d, 2, 3, 1, 1);
                else set(&d, 0, 0, 1, INFINITY);
                ooc_file_t *fd = put(&d);
                ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, alpha ? &one : &zero, fa, fb, &one, f0, fd, 2, M);
                CU_ASSERT_EQUAL(r.passed, 0);
                ooc_file_close(fd, 0);
                free(d.x);
            }
        }
        release(fa, fb, f0, &a, &b, &c0);
    }
}

/* ---- C as ooc_gemm_files leaves it: created, written, not yet committed ---- */

static void test_uncommitted(void)
{
    enum { M = 12, N = 10, K = 9 };
    uint64_t seed = 47;
    const ooc_dtype_t t = OOC_C64;
    mat_t a = mat_new(t, OOC_COL_MAJOR, K, M, &seed), b = mat_new(t, OOC_ROW_MAJOR, K, N, &seed);
    mat_t c = product(OOC_OP_C, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_COL_MAJOR);
    ooc_file_t *fa = put(&a), *fb = put(&b), *fc = NULL;
    char path[128];
    snprintf(path, sizeof path, "%s/uncommitted.npy", Dir);
    ooc_file_spec_t spec = {OOC_FORMAT_NPY, M, N, t, OOC_COL_MAJOR};
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, 0, &fc), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_write(H, fc, 0, c.x, M * N), OOC_SUCCESS);
    scal_t one = scal(t, 1, 0), zero = scal(t, 0, 0);
    for (int budget = 0; budget < 2; budget++) {
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, budget ? 4 << 10 : 0), OOC_SUCCESS);
        ooc_verify_result_t r = check(OOC_OP_C, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 2, 3);
        CU_ASSERT_EQUAL(r.exact, !budget);
        CU_ASSERT_EQUAL(r.passed, 1);
        /* conjugation matters: op T instead of C fails */
        r = check(OOC_OP_T, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 2, 3);
        CU_ASSERT_EQUAL(r.passed, 0);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
    ooc_file_close(fc, 1); /* discard: removes the temporary file */
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
    ooc_file_close(fa, 0);
    ooc_file_close(fb, 0);
    free(a.x);
    free(b.x);
    free(c.x);
}

/* ---- bad arguments and read errors: a status, a message, res untouched ---- */

static ooc_verify_result_t Sentinel;

static void expect(ooc_status_t got, ooc_status_t want, const ooc_verify_result_t *r, const char *word)
{
    CU_ASSERT_EQUAL(got, want);
    CU_ASSERT(memcmp(r, &Sentinel, sizeof *r) == 0);
    if (word) {
        CU_ASSERT(strstr(ooc_last_error(H), word) != NULL);
        if (strstr(ooc_last_error(H), word) == NULL)
            fprintf(stderr, "\n  expected \"%s\" in \"%s\"\n", word, ooc_last_error(H));
    }
}

static void test_errors(void)
{
    enum { M = 6, N = 5, K = 4 };
    uint64_t seed = 53;
    memset(&Sentinel, 0x5a, sizeof Sentinel);
    ooc_verify_result_t r = Sentinel;
    mat_t a = mat_new(OOC_R64, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(OOC_R64, OOC_COL_MAJOR, K, N, &seed);
    mat_t bz = mat_new(OOC_C32, OOC_ROW_MAJOR, K, N, &seed), bk = mat_new(OOC_R64, OOC_ROW_MAJOR, K + 1, N, &seed);
    mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_COL_MAJOR);
    mat_t cw = mat_new(OOC_R64, OOC_ROW_MAJOR, M, N + 1, &seed);
    ooc_file_t *fa = put(&a), *fb = put(&b), *fbz = put(&bz), *fbk = put(&bk), *fc = put(&c), *fcw = put(&cw);
    double one = 1, zero = 0, two = 2;
    ooc_op_t N_ = OOC_OP_N;

    CU_ASSERT_EQUAL(ooc_verify_files(NULL, N_, N_, &one, fa, fb, &zero, NULL, fc, 2, 1, &r), OOC_ERR_INVALID_HANDLE);
    expect(ooc_verify_files(H, (ooc_op_t)0, N_, &one, fa, fb, &zero, NULL, fc, 2, 1, &r), OOC_ERR_INVALID_TRANSA, &r, "transa");
    expect(ooc_verify_files(H, N_, (ooc_op_t)114, &one, fa, fb, &zero, NULL, fc, 2, 1, &r), OOC_ERR_INVALID_TRANSB, &r, "transb");
    expect(ooc_verify_files(H, N_, N_, &one, NULL, fb, &zero, NULL, fc, 2, 1, &r), OOC_ERR_NULL_A, &r, "A is NULL");
    expect(ooc_verify_files(H, N_, N_, &one, fa, NULL, &zero, NULL, fc, 2, 1, &r), OOC_ERR_NULL_B, &r, "B is NULL");
    expect(ooc_verify_files(H, N_, N_, &one, fa, fb, &zero, NULL, NULL, 2, 1, &r), OOC_ERR_NULL_C, &r, "C is NULL");
    expect(ooc_verify_files(H, N_, N_, NULL, fa, fb, &zero, NULL, fc, 2, 1, &r), OOC_ERR_NULL_ARG, &r, "alpha");
    expect(ooc_verify_files(H, N_, N_, &one, fa, fb, NULL, NULL, fc, 2, 1, &r), OOC_ERR_NULL_ARG, &r, "beta");
    CU_ASSERT_EQUAL(ooc_verify_files(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 2, 1, NULL), OOC_ERR_NULL_ARG);
    expect(ooc_verify_files(H, N_, N_, &one, fa, fb, &two, NULL, fc, 2, 1, &r), OOC_ERR_NULL_ARG, &r, "C0 is NULL");
    expect(ooc_verify_files(H, N_, N_, &one, fa, fb, &zero, NULL, fc, -1, 1, &r), OOC_ERR_PARAM_RANGE, &r, "vectors");
    expect(ooc_verify_files(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 2, -1, &r), OOC_ERR_PARAM_RANGE, &r, "sample_rows");
    /* element types */
    expect(ooc_verify_files(H, N_, N_, &one, fa, fbz, &zero, NULL, fc, 2, 1, &r), OOC_ERR_SHAPE, &r,
           "A is float64 but B is complex64");
    /* shapes */
    expect(ooc_verify_files(H, N_, N_, &one, fa, fbk, &zero, NULL, fc, 2, 1, &r), OOC_ERR_SHAPE, &r,
           "op(A) is 6 x 4 but op(B) is 5 x 5");
    expect(ooc_verify_files(H, OOC_OP_T, N_, &one, fa, fb, &zero, NULL, fc, 2, 1, &r), OOC_ERR_SHAPE, &r,
           "op(A) is 4 x 6");
    expect(ooc_verify_files(H, N_, N_, &one, fa, fb, &zero, NULL, fcw, 2, 1, &r), OOC_ERR_SHAPE, &r,
           "C is 6 x 6 but op(A)*op(B) is 6 x 5");
    expect(ooc_verify_files(H, N_, N_, &one, fa, fb, &two, fcw, fc, 2, 1, &r), OOC_ERR_SHAPE, &r, "C0 is 6 x 6");
    /* nothing to check: too large for exact (64-byte budget), no vectors, no rows */
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 64), OOC_SUCCESS);
    expect(ooc_verify_files(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 0, 0, &r), OOC_ERR_PARAM_RANGE, &r, "nothing");
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);

    /* the good call passes (so the failures above are the arguments') */
    ooc_verify_result_t good;
    CU_ASSERT_EQUAL(ooc_verify_files(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 2, 1, &good), OOC_SUCCESS);
    CU_ASSERT_EQUAL(good.passed, 1);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(H), "");

    /* a file cut short after it was opened: the read error comes back */
    char path[128];
    snprintf(path, sizeof path, "%s/m%d.npy", Dir, Nfiles - 2); /* c's file */
    CU_ASSERT_EQUAL_FATAL(truncate(path, 200), 0);
    for (int budget = 0; budget < 2; budget++) {
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, budget ? 256 : 0), OOC_SUCCESS);
        expect(ooc_verify_files(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 2, 1, &r), OOC_ERR_FORMAT, &r, "truncated");
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);

    ooc_file_close(fa, 0);
    ooc_file_close(fb, 0);
    ooc_file_close(fbz, 0);
    ooc_file_close(fbk, 0);
    ooc_file_close(fc, 0);
    ooc_file_close(fcw, 0);
    free(a.x);
    free(b.x);
    free(bz.x);
    free(bk.x);
    free(c.x);
    free(cw.x);
}

/* ---- the defects of the first Freivalds threshold (each failed before) ---- */

/* every element of a times f */
static void scale(mat_t *a, double f)
{
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            long double re, im;
            get(a, i, j, &re, &im);
            set(a, i, j, re * f, im * f);
        }
}

/* verify with any status */
static ooc_status_t try_check(ooc_op_t ta, ooc_op_t tb, const scal_t *al, ooc_file_t *A, ooc_file_t *B,
                              const scal_t *be, ooc_file_t *C0, ooc_file_t *C, int vectors, int64_t sample_rows,
                              ooc_verify_result_t *r)
{
    memset(r, 0, sizeof *r);
    return ooc_verify_files(H, ta, tb, al, A, B, be, C0, C, vectors, sample_rows, r);
}

/* One element off in float32, n large: the old threshold tol * |C0|... sums
 * n terms and let an error of 10% of the element (0.1 in a product of values
 * in [-1, 1]) through; the new one (about 8 tol sqrt(M S)) catches it. */
static void test_tight_threshold(void)
{
    enum { M = 33, N = 40001, K = 7 };
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 256 << 10), OOC_SUCCESS);
    uint64_t seed = 101;
    for (int ti = 0; ti < 4; ti += 2) { /* float32, complex64 */
        ooc_dtype_t t = Types[ti];
        mat_t a = mat_new(t, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(t, OOC_COL_MAJOR, N, K, &seed);
        scal_t one = scal(t, 1, 0), zero = scal(t, 0, 0);
        mat_t c = product(OOC_OP_N, OOC_OP_T, 1, 0, &a, &b, 0, 0, NULL, OOC_ROW_MAJOR);
        ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
        ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_T, &one, fa, fb, &zero, NULL, fc, 3, 0);
        CU_ASSERT(r.exact == 0 && r.passed == 1);
        mat_t d = mat_copy(&c);
        nudge(&d, 17, 20000, 0, 0.1);
        ooc_file_t *fd = put(&d);
        r = check(OOC_OP_N, OOC_OP_T, &one, fa, fb, &zero, NULL, fd, 3, 0);
        if (r.passed) fprintf(stderr, "\n  dtype %d: 0.1 off passed, error %g tolerance %g\n", (int)t, r.max_rel_err, r.tolerance);
        CU_ASSERT(r.exact == 0 && r.passed == 0);
        ooc_file_close(fd, 0);
        free(d.x);
        release(fa, fb, fc, &a, &b, &c);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
}

/* A NaN in B (or C0) made every product with X non-finite, and any C passed
 * Freivalds' check: now its column (element) is left out, and a wrong row
 * elsewhere fails. */
static void test_nan_in_b(void)
{
    enum { M = 211, N = 157, K = 93 };
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 64 << 10), OOC_SUCCESS);
    uint64_t seed = 103;
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        mat_t a = mat_new(t, OOC_COL_MAJOR, M, K, &seed), b = mat_new(t, OOC_ROW_MAJOR, K, N, &seed);
        mat_t c0 = mat_new(t, OOC_ROW_MAJOR, M, N, &seed);
        set(&b, 40, 99, NAN, 0);
        scal_t al = scal(t, 0.75, cplx(t) ? -0.5 : 0), be = scal(t, -1.25, 0);
        mat_t c = product(OOC_OP_N, OOC_OP_N, 0.75, cplx(t) ? -0.5 : 0, &a, &b, -1.25, 0, &c0, OOC_COL_MAJOR);
        ooc_file_t *fa = put(&a), *fb = put(&b), *fc0 = put(&c0), *fc = put(&c);
        ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, &al, fa, fb, &be, fc0, fc, 3, 0);
        CU_ASSERT(r.exact == 0 && r.passed == 1 && r.nonfinite == M);
        /* a row off by 1e-3 (an element of it off by 1 in float32) */
        mat_t d = mat_copy(&c);
        for (int64_t j = 0; j < N; j++)
            if (j != 99) nudge(&d, 120, j, 1e-3, single(t) && j == 3 ? 1.0 : 0);
        ooc_file_t *fd = put(&d);
        r = check(OOC_OP_N, OOC_OP_N, &al, fa, fb, &be, fc0, fd, 3, 0);
        CU_ASSERT(r.exact == 0 && r.passed == 0);
        ooc_file_close(fd, 0);
        free(d.x);
        /* a finite value where the reference is NaN */
        d = mat_copy(&c);
        set(&d, 7, 99, 1.0, 0);
        fd = put(&d);
        r = check(OOC_OP_N, OOC_OP_N, &al, fa, fb, &be, fc0, fd, 3, 0);
        CU_ASSERT(r.passed == 0 && isinf(r.max_rel_err));
        ooc_file_close(fd, 0);
        free(d.x);
        /* NaN in C0 (B fixed): its row is unverified, the rest still checked */
        ooc_file_close(fb, 0);
        ooc_file_close(fc0, 0);
        ooc_file_close(fc, 0);
        set(&b, 40, 99, 0.5, 0);
        set(&c0, 60, 10, NAN, 0);
        free(c.x);
        c = product(OOC_OP_N, OOC_OP_N, 0.75, cplx(t) ? -0.5 : 0, &a, &b, -1.25, 0, &c0, OOC_COL_MAJOR);
        fb = put(&b), fc0 = put(&c0), fc = put(&c);
        r = check(OOC_OP_N, OOC_OP_N, &al, fa, fb, &be, fc0, fc, 3, 0);
        CU_ASSERT(r.passed == 1 && r.nonfinite == 1);
#ifndef VERIFY_BASELINE
        CU_ASSERT(r.rows_unverified == 1);
#endif
        d = mat_copy(&c);
        nudge(&d, 200, 100, 0, 1.0);
        fd = put(&d);
        r = check(OOC_OP_N, OOC_OP_N, &al, fa, fb, &be, fc0, fd, 3, 0);
        CU_ASSERT(r.passed == 0);
        ooc_file_close(fd, 0);
        free(d.x);
        ooc_file_close(fa, 0);
        ooc_file_close(fb, 0);
        ooc_file_close(fc0, 0);
        ooc_file_close(fc, 0);
        free(a.x);
        free(b.x);
        free(c0.x);
        free(c.x);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
}

/* Values near the top of double: the bound |op(A)| |op(B)| |X| overflowed and
 * any error passed; op(B) X overflowed where C X did not and a correct C
 * failed. Either is an overflow now (or a pass, never a false failure). */
static void test_overflow(void)
{
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 64 << 10), OOC_SUCCESS);
    uint64_t seed = 107;
    const ooc_dtype_t t = OOC_R64;
    scal_t one = scal(t, 1, 0), zero = scal(t, 0, 0);
    {
        enum { M = 41, N = 1001, K = 5 };
        mat_t a = mat_new(t, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(t, OOC_ROW_MAJOR, K, N, &seed);
        scale(&a, 1e153);
        scale(&b, 1e153);
        mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_ROW_MAJOR);
        mat_t d = mat_copy(&c);
        nudge(&d, 5, 500, 1.0, 0); /* doubled */
        ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c), *fd = put(&d);
        ooc_verify_result_t r;
        ooc_status_t st = try_check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fd, 3, 0, &r);
        CU_ASSERT(st == OOC_ERR_OVERFLOW || (st == OOC_SUCCESS && !r.passed));
        st = try_check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, 0, &r);
        CU_ASSERT(st == OOC_ERR_OVERFLOW || (st == OOC_SUCCESS && r.passed));
        ooc_file_close(fa, 0);
        ooc_file_close(fb, 0);
        ooc_file_close(fc, 0);
        ooc_file_close(fd, 0);
        free(a.x);
        free(b.x);
        free(c.x);
        free(d.x);
    }
    {
        enum { M = 37, N = 301, K = 11 };
        mat_t a = mat_new(t, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(t, OOC_ROW_MAJOR, K, N, &seed);
        scale(&a, 1e-10);
        scale(&b, 1.7e308);
        mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_ROW_MAJOR);
        ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
        ooc_verify_result_t r;
        ooc_status_t st = try_check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, 0, &r);
        if (st == OOC_SUCCESS && !r.passed) fprintf(stderr, "\n  op(B) X overflowed: error %g\n", r.max_rel_err);
        CU_ASSERT(st == OOC_ERR_OVERFLOW || (st == OOC_SUCCESS && r.passed));
        release(fa, fb, fc, &a, &b, &c);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
}

/* Gradual underflow: a correctly rounded C of tiny values failed (float32
 * exactly, float64 by Freivalds). */
static void test_underflow(void)
{
    uint64_t seed = 109;
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        int64_t m = 23, n = single(t) ? 19 : 301, k = single(t) ? 20 : 200;
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, single(t) ? 0 : 64 << 10), OOC_SUCCESS);
        mat_t a = mat_new(t, OOC_COL_MAJOR, m, k, &seed), b = mat_new(t, OOC_ROW_MAJOR, k, n, &seed);
        scale(&a, single(t) ? 3e-21 : 1e-160);
        scale(&b, single(t) ? 3e-21 : 1e-160);
        scal_t one = scal(t, 1, 0), zero = scal(t, 0, 0);
        mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_ROW_MAJOR);
        ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
        ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, 0);
        if (!r.passed) fprintf(stderr, "\n  dtype %d: exact %d error %g\n", (int)t, r.exact, r.max_rel_err);
        CU_ASSERT_EQUAL(r.exact, single(t));
        CU_ASSERT_EQUAL(r.passed, 1);
        release(fa, fb, fc, &a, &b, &c);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
}

/* A tall C: Freivalds' arrays (rows of C x vectors) beyond the budget are
 * done in ranges of rows, each reading B again; a sample that does not fit
 * is refused rather than held beyond the budget. */
static void test_tall(void)
{
    enum { M = 60001, N = 3, K = 2 };
    uint64_t seed = 113;
    const ooc_dtype_t t = OOC_C64;
    mat_t a = mat_new(t, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(t, OOC_COL_MAJOR, K, N, &seed);
    scal_t one = scal(t, 1, 0), zero = scal(t, 0, 0);
    mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_ROW_MAJOR);
    ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 64 << 10), OOC_SUCCESS);
    ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, 2);
    CU_ASSERT(r.exact == 0 && r.passed == 1 && r.rows_checked == 2);
    CU_ASSERT(r.bytes_read > data_bytes(&a) + 2 * data_bytes(&b) + data_bytes(&c)); /* B more than once */
    mat_t d = mat_copy(&c);
    nudge(&d, M - 2, 1, 1e-6, 0);
    ooc_file_t *fd = put(&d);
    r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fd, 3, 0);
    CU_ASSERT(r.passed == 0);
    ooc_file_close(fd, 0);
    free(d.x);
    /* 2000 x 2000 float32: a sampled row needs 82 kB, over a quarter of 256 KiB */
    ooc_file_close(fa, 0);
    ooc_file_close(fb, 0);
    ooc_file_close(fc, 0);
    mat_t a2 = mat_new(OOC_R32, OOC_ROW_MAJOR, 3, 2000, &seed), b2 = mat_new(OOC_R32, OOC_ROW_MAJOR, 2000, 2000, &seed);
    mat_t c2 = mat_new(OOC_R32, OOC_ROW_MAJOR, 3, 2000, &seed);
    fa = put(&a2), fb = put(&b2), fc = put(&c2);
    scal_t one2 = scal(OOC_R32, 1, 0), zero2 = scal(OOC_R32, 0, 0);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 256 << 10), OOC_SUCCESS);
    ooc_status_t st = try_check(OOC_OP_N, OOC_OP_N, &one2, fa, fb, &zero2, NULL, fc, 0, 3, &r);
    CU_ASSERT_EQUAL(st, OOC_ERR_HOST_MEMORY);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
    release(fa, fb, fc, &a, &b, &c);
    free(a2.x);
    free(b2.x);
    free(c2.x);
}

/* Single precision with a large k: a row of C left zero, or another block's
 * rows, lie within the worst-case tolerance 4 (k + 2) eps (0.004 at k =
 * 8192, 0.03 at 65536) and passed; now they are off by about their own size
 * (r.off), beyond what rounding reaches, and fail. A correct C still passes. */
static void zero_row(mat_t *c, int64_t i)
{
    for (int64_t j = 0; j < c->cols; j++) set(c, i, j, 0, 0);
}

static void test_off_within_tolerance(void)
{
    uint64_t seed = 131;
    scal_t one = scal(OOC_R32, 1, 0), zero = scal(OOC_R32, 0, 0);
    /* Freivalds (a small budget): rows of C */
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 256 << 10), OOC_SUCCESS);
    mat_t a = mat_new(OOC_R32, OOC_ROW_MAJOR, 40, 8192, &seed), b = mat_new(OOC_R32, OOC_COL_MAJOR, 8192, 600, &seed);
    mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_ROW_MAJOR);
    ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
    ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, 0);
    CU_ASSERT(r.exact == 0 && r.passed == 1 && r.off == 0 && r.first_off_row == -1);
    for (int how = 0; how < 2; how++) {
        mat_t d = mat_copy(&c);
        if (how == 0) zero_row(&d, 29); /* a row never written */
        else
            for (int64_t i = 0; i < 3; i++) /* a stale slot: another block's rows */
                for (int64_t j = 0; j < d.cols; j++) {
                    long double re, im;
                    get(&c, i, j, &re, &im);
                    set(&d, 29 + i, j, re, im);
                }
        ooc_file_t *fd = put(&d);
        r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fd, 3, 0);
        if (r.passed) fprintf(stderr, "\n  case %d passed: error %g tolerance %g\n", how, r.max_rel_err, r.tolerance);
        CU_ASSERT(r.exact == 0 && r.passed == 0 && r.off >= 1 && r.first_off_row == 29);
        if (r.max_rel_err > r.tolerance) fprintf(stderr, "\n  case %d: error %g tolerance %g\n", how, r.max_rel_err, r.tolerance);
        CU_ASSERT(r.max_rel_err <= r.tolerance); /* within the worst case: the old check passed it */
        ooc_file_close(fd, 0);
        free(d.x);
    }
    release(fa, fb, fc, &a, &b, &c);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
    /* exact: elements */
    mat_t a2 = mat_new(OOC_R32, OOC_ROW_MAJOR, 6, 65536, &seed), b2 = mat_new(OOC_R32, OOC_COL_MAJOR, 65536, 5, &seed);
    mat_t c2 = product(OOC_OP_N, OOC_OP_N, 1, 0, &a2, &b2, 0, 0, NULL, OOC_COL_MAJOR);
    fa = put(&a2), fb = put(&b2), fc = put(&c2);
    r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, 16);
    CU_ASSERT(r.exact == 1 && r.passed == 1 && r.off == 0);
    mat_t d2 = mat_copy(&c2);
    set(&d2, 4, 2, 0, 0);
    ooc_file_t *fd = put(&d2);
    r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fd, 3, 16);
    CU_ASSERT(r.exact == 1 && r.passed == 0 && r.off == 1 && r.first_off_row == 4 && r.max_rel_err <= r.tolerance);
    ooc_file_close(fd, 0);
    free(d2.x);
    release(fa, fb, fc, &a2, &b2, &c2);
}

/* round to TF32 (10 mantissa bits, to nearest) */
static float tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u + 0x1000u) & ~0x1fffu;
    memcpy(&x, &u, 4);
    return x;
}

/* TF32 (OOC_PARAM_MATH_MODE): C of the inputs rounded to 10 mantissa bits
 * is off by up to 2^-10 of the bound, which a small k's tolerance did not
 * allow: it passes with the handle's TF32, fails without. */
static void test_tf32(void)
{
    uint64_t seed = 137;
    scal_t one = scal(OOC_R32, 1, 0), zero = scal(OOC_R32, 0, 0);
    mat_t a = mat_new(OOC_R32, OOC_ROW_MAJOR, 40, 16, &seed), b = mat_new(OOC_R32, OOC_ROW_MAJOR, 16, 30, &seed);
    mat_t ar = mat_copy(&a), br = mat_copy(&b);
    for (int64_t i = 0; i < 40 * 16; i++) ((float *)ar.x)[i] = tf32(((float *)ar.x)[i]);
    for (int64_t i = 0; i < 16 * 30; i++) ((float *)br.x)[i] = tf32(((float *)br.x)[i]);
    mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &ar, &br, 0, 0, NULL, OOC_ROW_MAJOR);
    ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
    ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, 16);
    CU_ASSERT(r.exact == 1 && r.passed == 0); /* strict FP32: too far */
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_MATH_MODE, OOC_MATH_TF32), OOC_SUCCESS);
    r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, 16);
    CU_ASSERT(r.exact == 1 && r.passed == 1 && r.off == 0);
    mat_t d = mat_copy(&c);
    set(&d, 7, 3, 0, 0);
    ooc_file_t *fd = put(&d);
    r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fd, 3, 16);
    CU_ASSERT(r.passed == 0);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_MATH_MODE, OOC_MATH_STRICT), OOC_SUCCESS);
    ooc_file_close(fd, 0);
    free(d.x);
    free(ar.x);
    free(br.x);
    release(fa, fb, fc, &a, &b, &c);
}

/* ---- temporary directory ---- */

/* everything in it (temporary files of a test stopped half-way too), then it */
static void remove_dir(void)
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

int main(void)
{
    snprintf(Dir, sizeof Dir, "/tmp/ooc_test_verify.XXXXXX");
    if (mkdtemp(Dir) == NULL) return 1;
    if (ooc_create(&H) != OOC_SUCCESS) return 1;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("verify", NULL, NULL);
    CU_add_test(s, "exact: every dtype, op and file order", test_exact);
    CU_add_test(s, "Freivalds: correct, one element, one row", test_freivalds);
    CU_add_test(s, "sampled rows", test_sample_rows);
    CU_add_test(s, "NaN, alpha = 0, beta = 0", test_special_values);
    CU_add_test(s, "NaN and Inf in the inputs", test_nonfinite_inputs);
    CU_add_test(s, "complex C0 with Inf beside a finite part, NaN, -0", test_complex_inf_in_c0);
    CU_add_test(s, "C created and not yet committed", test_uncommitted);
    CU_add_test(s, "bad arguments and read errors", test_errors);
    CU_add_test(s, "float32: one element 0.1 off, n large", test_tight_threshold);
    CU_add_test(s, "NaN in B or C0: the rest still checked", test_nan_in_b);
    CU_add_test(s, "overflow: never a pass, never a false failure", test_overflow);
    CU_add_test(s, "gradual underflow: no false failure", test_underflow);
    CU_add_test(s, "tall C: rows in ranges within the budget", test_tall);
    CU_add_test(s, "float32, large k: a zero or stale row within the tolerance fails", test_off_within_tolerance);
    CU_add_test(s, "TF32: the tolerance of inputs rounded to 10 bits", test_tf32);
    int rc = tu_run();
    ooc_destroy(H);
    remove_dir();
    return rc;
}
