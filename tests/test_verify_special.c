/* SPDX-License-Identifier: MIT */
/*
 * test_verify_special.c: ooc_verify_files() on special values and at the
 * edges of its tolerance (test_verify.c: its modes, budgets and errors),
 * with the same operands in .npy files and the same true C in long double
 * (verifyutil.c).
 *
 * Checks: NaN in C fails; beta = 0 does not read C0, alpha = 0 reads neither
 * A nor B; NaN and Inf in the inputs pass a correct C, exactly or not, and
 * fail one wrong around them; a complex C0 holding Inf beside a finite part
 * (or NaN, or -0) passes C = C0 and C = A B + C0. And the defects of the
 * first Freivalds threshold, each test failing before: one float32 element
 * 0.1 off in a long row is caught; a NaN in B (or C0) no longer switches the
 * check off; overflow is never a pass nor a false failure; gradual underflow
 * is no false failure; in float32 with a large k, a row left zero or another
 * block's rows fail although within the worst-case tolerance; TF32 inputs
 * pass with the handle's TF32 math mode and fail without.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "testutil.h"
#include "verifyutil.h"

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
        CU_ASSERT(st == OOC_ERR_UNDECIDED || (st == OOC_SUCCESS && !r.passed));
        st = try_check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, 0, &r);
        CU_ASSERT(st == OOC_ERR_UNDECIDED || (st == OOC_SUCCESS && r.passed));
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
        CU_ASSERT(st == OOC_ERR_UNDECIDED || (st == OOC_SUCCESS && r.passed));
        release(fa, fb, fc, &a, &b, &c);
    }
    /* single precision, its products past its largest value though their
     * sum is 0: 1e20 * 1e20 - 1e20 * 1e20 is Inf - Inf in float, so a BLAS
     * gives Inf or NaN; such a C failed the exact check ("off by about its
     * own size") instead of being undecided, as a double's is */
    /* (and alpha 1e-30: the bound scaled by it is small, but the products
     * overflow before alpha scales them; a review) */
    for (int v = 0; v <= 3; v += 3)
        for (int nan = 0; nan < 4; nan++) {
            const ooc_dtype_t s = OOC_R32;
            scal_t one32 = scal(s, nan >= 2 ? 1e-30 : 1, 0), zero32 = scal(s, 0, 0);
            mat_t a = mat_new(s, OOC_ROW_MAJOR, 1, 2, NULL), b = mat_new(s, OOC_ROW_MAJOR, 2, 1, NULL);
            mat_t c = mat_new(s, OOC_ROW_MAJOR, 1, 1, NULL);
            set(&a, 0, 0, 1e20L, 0);
            set(&a, 0, 1, 1e20L, 0);
            set(&b, 0, 0, 1e20L, 0);
            set(&b, 1, 0, -1e20L, 0);
            set(&c, 0, 0, nan % 2 ? (long double)NAN : (long double)INFINITY, 0);
            ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
            ooc_verify_result_t r;
            ooc_status_t st = try_check(OOC_OP_N, OOC_OP_N, &one32, fa, fb, &zero32, NULL, fc, v, 0, &r);
            if (!(st == OOC_ERR_UNDECIDED || (st == OOC_SUCCESS && r.passed)))
                fprintf(stderr, "\n  float products past FLT_MAX (C %s, alpha %g, %d vectors): status %d, passed %d",
                        nan % 2 ? "NaN" : "Inf", nan >= 2 ? 1e-30 : 1.0, v, (int)st, st == OOC_SUCCESS ? r.passed : -1);
            CU_ASSERT(st == OOC_ERR_UNDECIDED || (st == OOC_SUCCESS && r.passed));
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

/* A row of C left NaN (as `oocgemm run` fills C, so that a block never
 * written shows) where the inputs are finite: it failed, but was not
 * counted off, so first_off_row named no row (found by a helper testing as
 * a user). Now off, at that row, in Freivalds' check and in the exact one. */
static void test_nan_row_off(void)
{
    uint64_t seed = 137;
    scal_t one = scal(OOC_R64, 1, 0), zero = scal(OOC_R64, 0, 0);
    mat_t a = mat_new(OOC_R64, OOC_ROW_MAJOR, 60, 150, &seed), b = mat_new(OOC_R64, OOC_COL_MAJOR, 150, 90, &seed);
    mat_t c = product(OOC_OP_N, OOC_OP_N, 1, 0, &a, &b, 0, 0, NULL, OOC_ROW_MAJOR);
    ooc_file_t *fa = put(&a), *fb = put(&b), *fc = put(&c);
    mat_t d = mat_copy(&c);
    for (int64_t j = 0; j < d.cols; j++) set(&d, 41, j, NAN, 0);
    ooc_file_t *fd = put(&d);
    for (int exact = 0; exact < 2; exact++) {
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, exact ? 0 : 64 << 10), OOC_SUCCESS);
        ooc_verify_result_t r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fc, 3, exact ? 60 : 0);
        CU_ASSERT(r.passed == 1 && r.off == 0);
        r = check(OOC_OP_N, OOC_OP_N, &one, fa, fb, &zero, NULL, fd, 3, exact ? 60 : 0);
        if (!(r.passed == 0 && r.off >= 1 && r.first_off_row == 41))
            fprintf(stderr, "\n  exact %d (ran exact %d): passed %d off %lld first_off_row %lld\n", exact, r.exact,
                    r.passed, (long long)r.off, (long long)r.first_off_row);
        CU_ASSERT(r.exact == exact && r.passed == 0 && r.off >= 1 && r.first_off_row == 41);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
    ooc_file_close(fd, 0);
    free(d.x);
    release(fa, fb, fc, &a, &b, &c);
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

int main(void)
{
    snprintf(Dir, sizeof Dir, "/tmp/ooc_test_verify_special.XXXXXX");
    if (mkdtemp(Dir) == NULL) return 1;
    if (ooc_create(&H) != OOC_SUCCESS) return 1;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("verify: special values", NULL, NULL);
    CU_add_test(s, "NaN, alpha = 0, beta = 0", test_special_values);
    CU_add_test(s, "NaN and Inf in the inputs", test_nonfinite_inputs);
    CU_add_test(s, "complex C0 with Inf beside a finite part, NaN, -0", test_complex_inf_in_c0);
    CU_add_test(s, "float32: one element 0.1 off, n large", test_tight_threshold);
    CU_add_test(s, "NaN in B or C0: the rest still checked", test_nan_in_b);
    CU_add_test(s, "overflow: never a pass, never a false failure", test_overflow);
    CU_add_test(s, "gradual underflow: no false failure", test_underflow);
    CU_add_test(s, "float32, large k: a zero or stale row within the tolerance fails", test_off_within_tolerance);
    CU_add_test(s, "a row of C left NaN is off, at its row", test_nan_row_off);
    CU_add_test(s, "TF32: the tolerance of inputs rounded to 10 bits", test_tf32);
    int rc = tu_run();
    ooc_destroy(H);
    remove_dir();
    return rc;
}
