/* SPDX-License-Identifier: MIT */
/*
 * test_verify.c: ooc_verify_files(), the CPU check of a file multiply: its
 * modes, budgets and errors (test_verify_special.c: non-finite values,
 * overflow, underflow and the edges of the tolerance).
 *
 * Operands are written as .npy files (ooc_file_create/_write/_commit, then
 * reopened with ooc_file_open) in a temporary directory removed at the end.
 * The true C is computed in memory with a plain triple loop in long double
 * (verifyutil.c), indexing each stored operand directly, so that it shares
 * nothing with the layout handling under test. Checks: the exact mode passes
 * for every dtype, op and mix of file orders and fails on one element off by
 * 1e-6; the Freivalds mode (forced with a tiny host budget) passes a correct
 * C and fails a row scaled by 1 + 1e-6 or one element far off; sampled rows
 * catch what they sample and nothing else; a C created and not yet committed
 * is checked; bad arguments and read errors return their statuses and leave
 * the result untouched. And of the defects of the first Freivalds threshold,
 * each test failing before: a tall C is checked in ranges of rows within the
 * budget, and a sample that does not fit refused. Column ranges
 * (ooc_verify_files_cols), on odd sizes with C computed by OpenBLAS as a
 * multiply leaves it, exact and by Freivalds, every dtype, op and file
 * order, beta 0 or not: a correct C passes on a middle range and on all
 * columns, reading only the range of op(B), C0 and C; an element changed in
 * the range fails (first_off_row names its column), one changed just outside
 * it is not seen; bad ranges are OOC_ERR_ROW_RANGE naming columns, and
 * argument errors name the caller's A, B and C. Rectangles
 * (ooc_verify_files_rect, a rank's part of a grid) likewise: a correct C
 * passes reading only its rows of op(A), its columns of op(B) and its part of
 * C0 and C; an element changed inside fails, one just outside any of its
 * four sides is not seen.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <cblas.h>

#include "testutil.h"
#include "verifyutil.h"

static const ooc_op_t Ops[3] = {OOC_OP_N, OOC_OP_T, OOC_OP_C};
static const ooc_layout_t Lays[2] = {OOC_ROW_MAJOR, OOC_COL_MAJOR};

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

static double tol_of(ooc_dtype_t t, int64_t k) { return 4.0 * (double)(k + 2) * tu_eps(t); }

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

/* ---- the defects of the first Freivalds threshold (each failed before; the
 * others are in test_verify_special.c) ---- */

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

/* ---- column ranges (ooc_verify_files_cols): C computed by OpenBLAS ---- */

/* a copied into layout lay (the same elements) */
static mat_t relayout(const mat_t *a, ooc_layout_t lay)
{
    mat_t b = mat_new(a->t, lay, a->rows, a->cols, NULL);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            long double re, im;
            get(a, i, j, &re, &im);
            set(&b, i, j, re, im);
        }
    return b;
}

/* C = alpha op(A) op(B) + beta C0 (C0 NULL: beta 0) stored in lay, by
 * cblas_?gemm on A and B copied into lay: a C as a multiply leaves it,
 * rounded in single precision for single-precision types */
static mat_t blas_product(ooc_op_t ta, ooc_op_t tb, const scal_t *al, const mat_t *A, const mat_t *B,
                          const scal_t *be, const mat_t *C0, ooc_layout_t lay)
{
    ooc_dtype_t t = A->t;
    int64_t m = ta == OOC_OP_N ? A->rows : A->cols, k = ta == OOC_OP_N ? A->cols : A->rows;
    int64_t n = tb == OOC_OP_N ? B->cols : B->rows;
    mat_t a = relayout(A, lay), b = relayout(B, lay), c;
    if (C0) {
        c = relayout(C0, lay);
    } else {
        c = mat_new(t, lay, m, n, NULL);
        memset(c.x, 0, (size_t)data_bytes(&c));
    }
    scal_t zero = scal(t, 0, 0);
    const scal_t *bt = C0 ? be : &zero;
    int row = lay == OOC_ROW_MAJOR;
    int lda = (int)(row ? a.cols : a.rows), ldb = (int)(row ? b.cols : b.rows), ldc = (int)(row ? n : m);
    enum CBLAS_ORDER o = row ? CblasRowMajor : CblasColMajor;
    enum CBLAS_TRANSPOSE cta = (enum CBLAS_TRANSPOSE)ta, ctb = (enum CBLAS_TRANSPOSE)tb; /* the same values */
    int im = (int)m, in = (int)n, ik = (int)k;
    switch (t) {
    case OOC_R32: cblas_sgemm(o, cta, ctb, im, in, ik, al->f[0], a.x, lda, b.x, ldb, bt->f[0], c.x, ldc); break;
    case OOC_R64: cblas_dgemm(o, cta, ctb, im, in, ik, al->d[0], a.x, lda, b.x, ldb, bt->d[0], c.x, ldc); break;
    case OOC_C32: cblas_cgemm(o, cta, ctb, im, in, ik, al->f, a.x, lda, b.x, ldb, bt->f, c.x, ldc); break;
    case OOC_C64: cblas_zgemm(o, cta, ctb, im, in, ik, al->d, a.x, lda, b.x, ldb, bt->d, c.x, ldc); break;
    }
    free(a.x);
    free(b.x);
    return c;
}

/* ooc_verify_files_cols; the call must succeed */
static ooc_verify_result_t check_cols(ooc_op_t ta, ooc_op_t tb, const scal_t *al, ooc_file_t *A, ooc_file_t *B,
                                      const scal_t *be, ooc_file_t *C0, ooc_file_t *C, int64_t c0, int64_t c1,
                                      int vectors, int64_t sample_rows)
{
    ooc_verify_result_t r;
    memset(&r, 0, sizeof r);
    ooc_status_t st = ooc_verify_files_cols(H, ta, tb, al, A, B, be, C0, C, c0, c1, vectors, sample_rows, &r);
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n  ooc_verify_files_cols: %s\n", ooc_last_error(H));
    return r;
}

/* one column-range problem: operands of any shape, C by OpenBLAS, their files */
static void cprob_make(prob_t *p, ooc_dtype_t t, ooc_op_t ta, ooc_op_t tb, ooc_layout_t la, ooc_layout_t lb,
                       ooc_layout_t lc, int with_c0, int64_t m, int64_t n, int64_t k, uint64_t *seed)
{
    memset(p, 0, sizeof *p);
    p->a = ta == OOC_OP_N ? mat_new(t, la, m, k, seed) : mat_new(t, la, k, m, seed);
    p->b = tb == OOC_OP_N ? mat_new(t, lb, k, n, seed) : mat_new(t, lb, n, k, seed);
    p->al = scal(t, -1.25, cplx(t) ? 0.75 : 0);
    p->be = scal(t, with_c0 ? 0.5 : 0, with_c0 && cplx(t) ? -1.5 : 0);
    if (with_c0) {
        /* C0 in the other layout than C */
        p->c0 = mat_new(t, lc == OOC_ROW_MAJOR ? OOC_COL_MAJOR : OOC_ROW_MAJOR, m, n, seed);
        p->fc0 = put(&p->c0);
    }
    p->c = blas_product(ta, tb, &p->al, &p->a, &p->b, &p->be, with_c0 ? &p->c0 : NULL, lc);
    p->fa = put(&p->a);
    p->fb = put(&p->b);
    p->fc = put(&p->c);
}

/* what a check of columns [c0, c1) reads: all of op(A), those columns of
 * op(B), C and C0 */
static uint64_t cols_bytes(const prob_t *p, int64_t m, int64_t k, int64_t c0, int64_t c1)
{
    uint64_t e = (uint64_t)tu_elem(p->a.t), w = (uint64_t)(c1 - c0);
    return data_bytes(&p->a) + w * (uint64_t)k * e + w * (uint64_t)m * e * (p->fc0 ? 2 : 1);
}

/* C with element (i, j) times 1 + rel, and optionally (i2, j2) too, as a
 * file */
static ooc_file_t *put_bad(const mat_t *c, int64_t i, int64_t j, int64_t i2, int64_t j2, double rel)
{
    mat_t bad = mat_copy(c);
    nudge(&bad, i, j, rel, 0);
    if (i2 >= 0) nudge(&bad, i2, j2, rel, 0);
    ooc_file_t *f = put(&bad);
    free(bad.x);
    return f;
}

/* Exact: every dtype, every op (N and T for real types), file orders and
 * beta 0 or not, on 37 x 53 x 29. A middle range and all columns pass, and
 * read only what they check; an element doubled in the range (its first
 * or last column) fails there, named by first_off_row; elements doubled just
 * outside it (the columns either side) are not seen. */
static void test_cols_exact(void)
{
    enum { M = 37, N = 53, K = 29, C0_ = 11, C1_ = 42 };
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
    uint64_t seed = 71;
    int cases = 0;
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        int nops = cplx(t) ? 3 : 2;
        double tol = tol_of(t, K);
        for (int ai = 0; ai < nops; ai++)
            for (int bi = 0; bi < nops; bi++)
                for (int lays = 0; lays < 8; lays++)
                    for (int with_c0 = 0; with_c0 < 2; with_c0++) {
                        ooc_op_t ta = Ops[ai], tb = Ops[bi];
                        prob_t p;
                        cprob_make(&p, t, ta, tb, Lays[lays & 1], Lays[(lays >> 1) & 1], Lays[(lays >> 2) & 1],
                                   with_c0, M, N, K, &seed);
                        /* the middle range */
                        ooc_verify_result_t r =
                            check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, p.fc, C0_, C1_, 3, 2);
                        int ok = r.exact == 1 && r.vectors == 0 && r.rows_checked == C1_ - C0_ && r.passed == 1 &&
                                 r.max_rel_err <= tol && r.tolerance == tol && r.off == 0 && r.first_off_row == -1 &&
                                 r.bytes_read == cols_bytes(&p, M, K, C0_, C1_);
                        CU_ASSERT(ok);
                        if (!ok)
                            fprintf(stderr, "\n  dtype %d op %d%d layouts %d C0 %d: exact %d checked %lld passed %d "
                                    "err %g tol %g bytes %llu of %llu\n", (int)t, (int)ta, (int)tb, lays, with_c0,
                                    r.exact, (long long)r.rows_checked, r.passed, r.max_rel_err, r.tolerance,
                                    (unsigned long long)r.bytes_read,
                                    (unsigned long long)cols_bytes(&p, M, K, C0_, C1_));
                        /* all columns: 0, N and 0, 0 */
                        r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, p.fc, 0, lays & 1 ? 0 : N, 3, 2);
                        CU_ASSERT(r.exact == 1 && r.rows_checked == N && r.passed == 1 && r.max_rel_err <= tol);
                        CU_ASSERT_EQUAL(r.bytes_read, cols_bytes(&p, M, K, 0, N));
                        /* one element of the range doubled: its first column, or its last */
                        int64_t j = lays & 1 ? C0_ : C1_ - 1, i = (lays * 5 + ai) % M;
                        ooc_file_t *fbad = put_bad(&p.c, i, j, -1, -1, 1.0);
                        r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, C0_, C1_, 3, 2);
                        ok = r.exact == 1 && r.passed == 0 && r.max_rel_err > tol && r.off == 1 && r.first_off_row == j;
                        CU_ASSERT(ok);
                        if (!ok)
                            fprintf(stderr, "\n  dtype %d op %d%d layouts %d C0 %d, (%lld, %lld) doubled: passed %d "
                                    "err %g off %lld first %lld\n", (int)t, (int)ta, (int)tb, lays, with_c0,
                                    (long long)i, (long long)j, r.passed, r.max_rel_err, (long long)r.off,
                                    (long long)r.first_off_row);
                        /* and all columns: caught too */
                        r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, 0, 0, 3, 2);
                        CU_ASSERT(r.passed == 0 && r.first_off_row == j);
                        ooc_file_close(fbad, 0);
                        /* the columns just outside the range doubled: not seen */
                        fbad = put_bad(&p.c, i, C0_ - 1, M - 1 - i, C1_, 1.0);
                        r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, C0_, C1_, 3, 2);
                        CU_ASSERT(r.exact == 1 && r.passed == 1 && r.max_rel_err <= tol && r.off == 0);
                        r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, C0_ - 1, C1_, 3, 2);
                        CU_ASSERT(r.passed == 0 && r.first_off_row == C0_ - 1);
                        ooc_file_close(fbad, 0);
                        prob_free(&p);
                        cases++;
                    }
    }
    CU_ASSERT_EQUAL(cases, 2 * (4 + 9) * 8 * 2);
}

/* Freivalds (a 256 KiB budget: too small for an exact check) on 301 x 203 x
 * 151: a correct C passes, reading only the range; an element doubled in
 * the range fails with vectors alone, and with sampled columns alone when
 * its column is sampled (first_off_row names it), not when it is not; the
 * columns either side doubled are not seen. */
static void test_cols_freivalds(void)
{
    enum { M = 301, N = 203, K = 151, C0_ = 50, C1_ = 161 };
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 256 << 10), OOC_SUCCESS);
    uint64_t seed = 73;
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        int nops = cplx(t) ? 3 : 2;
        double tol = tol_of(t, K);
        /* an element doubled; times 11 in single precision, where it lies
         * within Freivalds' threshold at this k and size (just: 0.97 of it,
         * for complex64 N, T with C0), as one row and vector's error */
        double rel = single(t) ? 10.0 : 1.0;
        for (int ai = 0; ai < nops; ai++)
            for (int bi = 0; bi < nops; bi++)
                for (int lays = 0; lays < 2; lays++) {
                    ooc_op_t ta = Ops[ai], tb = Ops[bi];
                    int with_c0 = (ai + bi + lays) % 2;
                    prob_t p;
                    cprob_make(&p, t, ta, tb, Lays[(lays + ai) & 1], Lays[(lays + bi) & 1], Lays[lays], with_c0, M,
                               N, K, &seed);
                    /* vectors alone: each file read once, only the range of op(B), C0 and C */
                    ooc_verify_result_t r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, p.fc, C0_, C1_, 3, 0);
                    int ok = r.exact == 0 && r.vectors == 3 && r.rows_checked == 0 && r.passed == 1 &&
                             r.max_rel_err <= tol && r.bytes_read == cols_bytes(&p, M, K, C0_, C1_);
                    CU_ASSERT(ok);
                    if (!ok)
                        fprintf(stderr, "\n  dtype %d op %d%d lay %d C0 %d: exact %d passed %d err %g tol %g "
                                "bytes %llu of %llu\n", (int)t, (int)ta, (int)tb, lays, with_c0, r.exact, r.passed,
                                r.max_rel_err, tol, (unsigned long long)r.bytes_read,
                                (unsigned long long)cols_bytes(&p, M, K, C0_, C1_));
                    /* with 3 sampled columns (C0_, the middle, C1_ - 1), and all columns */
                    r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, p.fc, C0_, C1_, 2, 3);
                    CU_ASSERT(r.exact == 0 && r.rows_checked == 3 && r.passed == 1 && r.max_rel_err <= tol);
                    r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, p.fc, 0, 0, 2, 3);
                    CU_ASSERT(r.exact == 0 && r.passed == 1 && r.max_rel_err <= tol);

                    /* one element of the range's last column changed */
                    int64_t i = (37 * ai + 11 * bi + lays) % M;
                    ooc_file_t *fbad = put_bad(&p.c, i, C1_ - 1, -1, -1, rel);
                    r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, C0_, C1_, 3, 0);
                    CU_ASSERT(r.exact == 0 && r.passed == 0 && r.max_rel_err > tol);
                    r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, C0_, C1_, 0, 3);
                    CU_ASSERT(r.rows_checked == 3 && r.passed == 0 && r.off == 1 && r.first_off_row == C1_ - 1);
                    ooc_file_close(fbad, 0);
                    /* a column between the samples: the vectors see it, the samples do not */
                    fbad = put_bad(&p.c, i, C1_ - 2, -1, -1, rel);
                    r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, C0_, C1_, 3, 0);
                    CU_ASSERT(r.passed == 0 && r.max_rel_err > tol);
                    r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, C0_, C1_, 0, 3);
                    CU_ASSERT(r.rows_checked == 3 && r.passed == 1);
                    ooc_file_close(fbad, 0);
                    /* the columns either side of the range: not seen */
                    fbad = put_bad(&p.c, i, C0_ - 1, M - 1 - i, C1_, rel);
                    r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, C0_, C1_, 3, 3);
                    CU_ASSERT(r.exact == 0 && r.passed == 1 && r.max_rel_err <= tol);
                    r = check_cols(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, C0_, C1_ + 1, 3, 0);
                    CU_ASSERT(r.passed == 0);
                    ooc_file_close(fbad, 0);
                    prob_free(&p);
                }
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
}

/* Bad column ranges and arguments: a status and a message naming the
 * caller's C and its columns; res untouched. */
static void test_cols_errors(void)
{
    enum { M = 6, N = 5, K = 4 };
    uint64_t seed = 79;
    memset(&Sentinel, 0x5a, sizeof Sentinel);
    ooc_verify_result_t r = Sentinel;
    mat_t a = mat_new(OOC_R64, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(OOC_R64, OOC_COL_MAJOR, K, N, &seed);
    mat_t bk = mat_new(OOC_R64, OOC_ROW_MAJOR, K + 1, N, &seed);
    double one = 1, zero = 0, two = 2;
    scal_t sone = scal(OOC_R64, 1, 0), szero = scal(OOC_R64, 0, 0);
    mat_t c = blas_product(OOC_OP_N, OOC_OP_N, &sone, &a, &b, &szero, NULL, OOC_COL_MAJOR);
    mat_t cw = mat_new(OOC_R64, OOC_ROW_MAJOR, M, N + 1, &seed);
    ooc_file_t *fa = put(&a), *fb = put(&b), *fbk = put(&bk), *fc = put(&c), *fcw = put(&cw);
    ooc_op_t N_ = OOC_OP_N;

    /* column ranges of the 5 columns (6 x 5: 0, 6 is a range of rows, not of columns) */
    const int64_t bad[][2] = {{0, N + 1}, {3, 6}, {2, 2}, {0, -1}, {4, 3}, {-1, 3}, {-2, -1}, {5, 5}};
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        char want[96];
        snprintf(want, sizeof want, "columns [%lld, %lld) are not a range of the 5 columns of C",
                 (long long)bad[q][0], (long long)bad[q][1]);
        expect(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, &zero, NULL, fc, bad[q][0], bad[q][1], 2, 1, &r),
               OOC_ERR_ROW_RANGE, &r, want);
    }
    /* arguments, as ooc_verify_files_rows */
    CU_ASSERT_EQUAL(ooc_verify_files_cols(NULL, N_, N_, &one, fa, fb, &zero, NULL, fc, 0, 2, 2, 1, &r),
                    OOC_ERR_INVALID_HANDLE);
    expect(ooc_verify_files_cols(H, (ooc_op_t)0, N_, &one, fa, fb, &zero, NULL, fc, 0, 2, 2, 1, &r),
           OOC_ERR_INVALID_TRANSA, &r, "transa");
    expect(ooc_verify_files_cols(H, N_, (ooc_op_t)114, &one, fa, fb, &zero, NULL, fc, 0, 2, 2, 1, &r),
           OOC_ERR_INVALID_TRANSB, &r, "transb");
    expect(ooc_verify_files_cols(H, N_, N_, &one, NULL, fb, &zero, NULL, fc, 0, 2, 2, 1, &r), OOC_ERR_NULL_A, &r,
           "A is NULL");
    expect(ooc_verify_files_cols(H, N_, N_, &one, fa, NULL, &zero, NULL, fc, 0, 2, 2, 1, &r), OOC_ERR_NULL_B, &r,
           "B is NULL");
    expect(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, &zero, NULL, NULL, 0, 2, 2, 1, &r), OOC_ERR_NULL_C, &r,
           "C is NULL");
    expect(ooc_verify_files_cols(H, N_, N_, NULL, fa, fb, &zero, NULL, fc, 0, 2, 2, 1, &r), OOC_ERR_NULL_ARG, &r,
           "alpha");
    expect(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, NULL, NULL, fc, 0, 2, 2, 1, &r), OOC_ERR_NULL_ARG, &r,
           "beta");
    CU_ASSERT_EQUAL(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 0, 2, 2, 1, NULL),
                    OOC_ERR_NULL_ARG);
    expect(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, &two, NULL, fc, 0, 2, 2, 1, &r), OOC_ERR_NULL_ARG, &r,
           "C0 is NULL");
    expect(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 0, 2, -1, 1, &r), OOC_ERR_PARAM_RANGE,
           &r, "vectors");
    /* shapes: named as the caller gave them, not transposed */
    expect(ooc_verify_files_cols(H, N_, N_, &one, fa, fbk, &zero, NULL, fc, 0, 2, 2, 1, &r), OOC_ERR_SHAPE, &r,
           "op(A) is 6 x 4 but op(B) is 5 x 5");
    expect(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, &zero, NULL, fcw, 0, 2, 2, 1, &r), OOC_ERR_SHAPE, &r,
           "C is 6 x 6 but op(A)*op(B) is 6 x 5");
    expect(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, &two, fcw, fc, 0, 2, 2, 1, &r), OOC_ERR_SHAPE, &r,
           "C0 is 6 x 6 but op(A)*op(B) is 6 x 5");
    /* an argument error comes before the range's */
    expect(ooc_verify_files_cols(H, N_, N_, &one, NULL, fb, &zero, NULL, fc, 0, N + 1, 2, 1, &r), OOC_ERR_NULL_A,
           &r, "A is NULL");

    /* the good calls pass (so the failures above are the arguments'); the
     * last column alone and all of them */
    ooc_verify_result_t good;
    CU_ASSERT_EQUAL(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, &zero, NULL, fc, N - 1, N, 2, 1, &good),
                    OOC_SUCCESS);
    CU_ASSERT(good.passed == 1 && good.exact == 1 && good.rows_checked == 1);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(H), "");
    CU_ASSERT_EQUAL(ooc_verify_files_cols(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 0, 0, 2, 1, &good),
                    OOC_SUCCESS);
    CU_ASSERT(good.passed == 1 && good.rows_checked == N);

    ooc_file_close(fa, 0);
    ooc_file_close(fb, 0);
    ooc_file_close(fbk, 0);
    ooc_file_close(fc, 0);
    ooc_file_close(fcw, 0);
    free(a.x);
    free(b.x);
    free(bk.x);
    free(c.x);
    free(cw.x);
}

/* ---- rectangles (ooc_verify_files_rect): a rank's part of a grid ---- */

/* ooc_verify_files_rect; the call must succeed */
static ooc_verify_result_t check_rect(ooc_op_t ta, ooc_op_t tb, const scal_t *al, ooc_file_t *A, ooc_file_t *B,
                                      const scal_t *be, ooc_file_t *C0, ooc_file_t *C, int64_t r0, int64_t r1,
                                      int64_t c0, int64_t c1, int vectors, int64_t sample_rows)
{
    ooc_verify_result_t r;
    memset(&r, 0, sizeof r);
    ooc_status_t st =
        ooc_verify_files_rect(H, ta, tb, al, A, B, be, C0, C, r0, r1, c0, c1, vectors, sample_rows, &r);
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n  ooc_verify_files_rect: %s\n", ooc_last_error(H));
    return r;
}

/* what a check of the rectangle reads: its rows of op(A), its columns of
 * op(B), its part of C and C0 */
static uint64_t rect_bytes(const prob_t *p, int64_t k, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    uint64_t e = (uint64_t)tu_elem(p->a.t), h = (uint64_t)(r1 - r0), w = (uint64_t)(c1 - c0);
    return h * (uint64_t)k * e + w * (uint64_t)k * e + h * w * e * (p->fc0 ? 2 : 1);
}

/* Exact, every dtype, op, file order, beta 0 or not, on 37 x 53 x 29, the
 * rectangle rows [5, 30) x columns [11, 42): a correct C passes, reading
 * only its part; an element doubled at a corner of it fails (first_off_row
 * names its row); elements doubled just outside it, on each of its four
 * sides, are not seen, and are when the range grows over them. */
static void test_rect_exact(void)
{
    enum { M = 37, N = 53, K = 29, R0 = 5, R1 = 30, C0_ = 11, C1_ = 42 };
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
    uint64_t seed = 83;
    int cases = 0;
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        int nops = cplx(t) ? 3 : 2;
        double tol = tol_of(t, K);
        for (int ai = 0; ai < nops; ai++)
            for (int bi = 0; bi < nops; bi++)
                for (int lays = 0; lays < 8; lays++)
                    for (int with_c0 = 0; with_c0 < 2; with_c0++) {
                        ooc_op_t ta = Ops[ai], tb = Ops[bi];
                        prob_t p;
                        cprob_make(&p, t, ta, tb, Lays[lays & 1], Lays[(lays >> 1) & 1], Lays[(lays >> 2) & 1],
                                   with_c0, M, N, K, &seed);
                        ooc_verify_result_t r =
                            check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, p.fc, R0, R1, C0_, C1_, 3, 2);
                        int ok = r.exact == 1 && r.vectors == 0 && r.rows_checked == R1 - R0 && r.passed == 1 &&
                                 r.max_rel_err <= tol && r.off == 0 && r.first_off_row == -1 &&
                                 r.bytes_read == rect_bytes(&p, K, R0, R1, C0_, C1_);
                        CU_ASSERT(ok);
                        if (!ok)
                            fprintf(stderr, "\n  rect dtype %d op %d%d layouts %d C0 %d: exact %d checked %lld "
                                    "passed %d err %g bytes %llu of %llu\n", (int)t, (int)ta, (int)tb, lays, with_c0,
                                    r.exact, (long long)r.rows_checked, r.passed, r.max_rel_err,
                                    (unsigned long long)r.bytes_read,
                                    (unsigned long long)rect_bytes(&p, K, R0, R1, C0_, C1_));
                        /* a corner doubled: the first row's first column, or the last's last */
                        int64_t i = lays & 1 ? R0 : R1 - 1, j = lays & 1 ? C0_ : C1_ - 1;
                        ooc_file_t *fbad = put_bad(&p.c, i, j, -1, -1, 1.0);
                        r = check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, R0, R1, C0_, C1_, 3, 2);
                        CU_ASSERT(r.exact == 1 && r.passed == 0 && r.off == 1 && r.first_off_row == i);
                        ooc_file_close(fbad, 0);
                        /* just outside: above and below it, then left and right of it */
                        for (int side = 0; side < 2; side++) {
                            fbad = side ? put_bad(&p.c, R0 + lays, C0_ - 1, R1 - 1 - lays, C1_, 1.0)
                                        : put_bad(&p.c, R0 - 1, C0_ + lays, R1, C1_ - 1 - lays, 1.0);
                            r = check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, R0, R1, C0_, C1_, 3, 2);
                            CU_ASSERT(r.exact == 1 && r.passed == 1 && r.max_rel_err <= tol && r.off == 0);
                            r = side ? check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, R0, R1, C0_ - 1,
                                                  C1_ + 1, 3, 2)
                                     : check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, R0 - 1, R1 + 1, C0_,
                                                  C1_, 3, 2);
                            CU_ASSERT(r.passed == 0 && r.off == 2 && r.first_off_row == (side ? R0 + lays : R0 - 1));
                            ooc_file_close(fbad, 0);
                        }
                        prob_free(&p);
                        cases++;
                    }
    }
    CU_ASSERT_EQUAL(cases, 2 * (4 + 9) * 8 * 2);
}

/* Freivalds (a 256 KiB budget) on 301 x 203 x 151, rows [40, 250) x columns
 * [50, 161): a correct C passes reading only its part, with vectors and with
 * sampled rows; an element changed inside fails, by the vectors and by a
 * sampled row that holds it; elements changed just outside (each side) are
 * not seen. */
static void test_rect_freivalds(void)
{
    enum { M = 301, N = 203, K = 151, R0 = 40, R1 = 250, C0_ = 50, C1_ = 161 };
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 256 << 10), OOC_SUCCESS);
    uint64_t seed = 89;
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = Types[ti];
        int nops = cplx(t) ? 3 : 2;
        double tol = tol_of(t, K), rel = single(t) ? 10.0 : 1.0;
        for (int ai = 0; ai < nops; ai++)
            for (int bi = 0; bi < nops; bi++)
                for (int lays = 0; lays < 2; lays++) {
                    ooc_op_t ta = Ops[ai], tb = Ops[bi];
                    int with_c0 = (ai + bi + lays) % 2;
                    prob_t p;
                    cprob_make(&p, t, ta, tb, Lays[(lays + ai) & 1], Lays[(lays + bi) & 1], Lays[lays], with_c0, M,
                               N, K, &seed);
                    ooc_verify_result_t r =
                        check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, p.fc, R0, R1, C0_, C1_, 3, 0);
                    int ok = r.exact == 0 && r.vectors == 3 && r.passed == 1 && r.max_rel_err <= tol &&
                             r.bytes_read == rect_bytes(&p, K, R0, R1, C0_, C1_);
                    CU_ASSERT(ok);
                    if (!ok)
                        fprintf(stderr, "\n  rect dtype %d op %d%d lay %d C0 %d: exact %d passed %d err %g bytes "
                                "%llu of %llu\n", (int)t, (int)ta, (int)tb, lays, with_c0, r.exact, r.passed,
                                r.max_rel_err, (unsigned long long)r.bytes_read,
                                (unsigned long long)rect_bytes(&p, K, R0, R1, C0_, C1_));
                    r = check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, p.fc, R0, R1, C0_, C1_, 2, 3);
                    CU_ASSERT(r.exact == 0 && r.rows_checked == 3 && r.passed == 1 && r.max_rel_err <= tol);
                    /* the last row's element in the middle column changed: the
                     * vectors and the last sampled row see it */
                    int64_t j = (C0_ + C1_) / 2;
                    ooc_file_t *fbad = put_bad(&p.c, R1 - 1, j, -1, -1, rel);
                    r = check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, R0, R1, C0_, C1_, 3, 0);
                    CU_ASSERT(r.passed == 0 && r.max_rel_err > tol);
                    r = check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, R0, R1, C0_, C1_, 0, 3);
                    CU_ASSERT(r.rows_checked == 3 && r.passed == 0 && r.off == 1 && r.first_off_row == R1 - 1);
                    ooc_file_close(fbad, 0);
                    /* the four sides just outside */
                    for (int side = 0; side < 2; side++) {
                        fbad = side ? put_bad(&p.c, R0 + 7, C0_ - 1, R1 - 8, C1_, rel)
                                    : put_bad(&p.c, R0 - 1, C0_ + 7, R1, C1_ - 8, rel);
                        r = check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, R0, R1, C0_, C1_, 3, 3);
                        CU_ASSERT(r.exact == 0 && r.passed == 1 && r.max_rel_err <= tol);
                        r = side ? check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, R0, R1, C0_, C1_ + 1, 3, 0)
                                 : check_rect(ta, tb, &p.al, p.fa, p.fb, &p.be, p.fc0, fbad, R0, R1 + 1, C0_, C1_, 3, 0);
                        CU_ASSERT(r.passed == 0);
                        ooc_file_close(fbad, 0);
                    }
                    prob_free(&p);
                }
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
}

/* Bad rectangles: OOC_ERR_ROW_RANGE naming rows or columns, res untouched;
 * 0, 0 for either range is all of it. */
static void test_rect_errors(void)
{
    enum { M = 6, N = 5, K = 4 };
    uint64_t seed = 97;
    memset(&Sentinel, 0x5a, sizeof Sentinel);
    ooc_verify_result_t r = Sentinel;
    mat_t a = mat_new(OOC_R64, OOC_ROW_MAJOR, M, K, &seed), b = mat_new(OOC_R64, OOC_COL_MAJOR, K, N, &seed);
    double one = 1, zero = 0;
    scal_t sone = scal(OOC_R64, 1, 0), szero = scal(OOC_R64, 0, 0);
    mat_t c = blas_product(OOC_OP_N, OOC_OP_N, &sone, &a, &b, &szero, NULL, OOC_ROW_MAJOR);
    ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
    ooc_op_t N_ = OOC_OP_N;
    const int64_t bad[][2] = {{0, N + 1}, {2, 2}, {0, -1}, {4, 3}, {-1, 3}};
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        char want[96];
        snprintf(want, sizeof want, "columns [%lld, %lld) are not a range of the 5 columns of C",
                 (long long)bad[q][0], (long long)bad[q][1]);
        expect(ooc_verify_files_rect(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 1, 3, bad[q][0], bad[q][1], 2, 1, &r),
               OOC_ERR_ROW_RANGE, &r, want);
    }
    expect(ooc_verify_files_rect(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 0, M + 1, 1, 3, 2, 1, &r),
           OOC_ERR_ROW_RANGE, &r, "rows [0, 7) are not a range of the 6 rows of C");
    CU_ASSERT_EQUAL(ooc_verify_files_rect(NULL, N_, N_, &one, fa, fb, &zero, NULL, fc, 0, 2, 0, 2, 2, 1, &r),
                    OOC_ERR_INVALID_HANDLE);
    ooc_verify_result_t good;
    CU_ASSERT_EQUAL(ooc_verify_files_rect(H, N_, N_, &one, fa, fb, &zero, NULL, fc, M - 1, M, N - 1, N, 2, 1, &good),
                    OOC_SUCCESS);
    CU_ASSERT(good.passed == 1 && good.exact == 1 && good.rows_checked == 1);
    CU_ASSERT_EQUAL(ooc_verify_files_rect(H, N_, N_, &one, fa, fb, &zero, NULL, fc, 0, 0, 0, 0, 2, 1, &good),
                    OOC_SUCCESS);
    CU_ASSERT(good.passed == 1 && good.rows_checked == M);
    ooc_file_close(fa, 0);
    ooc_file_close(fb, 0);
    ooc_file_close(fc, 0);
    free(a.x);
    free(b.x);
    free(c.x);
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
    CU_add_test(s, "C created and not yet committed", test_uncommitted);
    CU_add_test(s, "bad arguments and read errors", test_errors);
    CU_add_test(s, "tall C: rows in ranges within the budget", test_tall);
    CU_add_test(s, "column ranges, exact: every dtype, op and file order", test_cols_exact);
    CU_add_test(s, "column ranges, Freivalds and sampled columns", test_cols_freivalds);
    CU_add_test(s, "column ranges: bad ranges and arguments", test_cols_errors);
    CU_add_test(s, "rectangles, exact: every dtype, op and file order", test_rect_exact);
    CU_add_test(s, "rectangles, Freivalds and sampled rows", test_rect_freivalds);
    CU_add_test(s, "rectangles: bad ranges", test_rect_errors);
    int rc = tu_run();
    ooc_destroy(H);
    remove_dir();
    return rc;
}
