/* SPDX-License-Identifier: MIT */
/*
 * test_api.c: the public API's contract, without a GPU: handles, options and
 * their bounds, version, status strings, every bad argument of ooc_gemm
 * returning its own status with a message and writing nothing, an
 * ooc_cancel request consumed by every multiply's return, the bandwidth
 * probes, the stats after a failed multiply (zeros) and a trace that cannot
 * be written (reported in the stats, the multiply a success).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "testutil.h"

static void test_handle(void)
{
    ooc_handle_t *h = NULL;
    CU_ASSERT_EQUAL(ooc_create(NULL), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL(h);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(h), "");
    CU_ASSERT_STRING_EQUAL(ooc_backend_name(h), "none");
    ooc_stats_t s;
    memset(&s, 0xff, sizeof s);
    CU_ASSERT_EQUAL(ooc_get_stats(h, &s), OOC_SUCCESS);
    CU_ASSERT_EQUAL(s.blocks, 0);
    CU_ASSERT_EQUAL(ooc_get_stats(h, NULL), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_get_stats(NULL, &s), OOC_ERR_INVALID_HANDLE);
    /* a NULL handle, as the header says */
    CU_ASSERT_STRING_EQUAL(ooc_last_error(NULL), "invalid handle (NULL)");
    CU_ASSERT_PTR_NULL(ooc_last_error_path(NULL));
    CU_ASSERT_STRING_EQUAL(ooc_backend_name(NULL), "none");
    CU_ASSERT_EQUAL(ooc_cancel(NULL), OOC_ERR_INVALID_HANDLE);
    ooc_destroy(h);
    ooc_destroy(NULL); /* accepted */
}

static void test_version(void)
{
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", OOC_VERSION_MAJOR, OOC_VERSION_MINOR, OOC_VERSION_PATCH);
    CU_ASSERT_STRING_EQUAL(ooc_version_string(), expect);
    CU_ASSERT_STRING_EQUAL(ooc_version_string(), PACKAGE_VERSION); /* configure.ac agrees */
    CU_ASSERT_EQUAL(ooc_version_number(), OOC_VERSION_NUMBER);
}

static void test_status_strings(void)
{
    for (int a = 0; a <= OOC_ERR_UNDECIDED; a++) {
        const char *sa = ooc_status_string((ooc_status_t)a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(sa);
        CU_ASSERT(strlen(sa) > 3);
        CU_ASSERT(strcmp(sa, "unknown status") != 0);
        for (int b = 0; b < a; b++) CU_ASSERT(strcmp(sa, ooc_status_string((ooc_status_t)b)) != 0);
    }
    CU_ASSERT_STRING_EQUAL(ooc_status_string((ooc_status_t)999), "unknown status");
    /* OOC_ERR_INVALID_PARAM is any invalid argument (a file not open for
     * writing, another job's plan), not only an unknown ooc_param_t: its text
     * said "unknown parameter" */
    CU_ASSERT(strstr(ooc_status_string(OOC_ERR_INVALID_PARAM), "invalid") != NULL);
    CU_ASSERT(strncmp(ooc_status_string(OOC_ERR_INVALID_PARAM), "unknown", 7) != 0);
}

static void test_params(void)
{
    ooc_handle_t *h;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    for (int p = OOC_PARAM_BACKEND; p <= OOC_PARAM_DEVICES; p++) {
        int64_t lo, hi, v;
        CU_ASSERT_EQUAL_FATAL(ooc_param_bounds((ooc_param_t)p, &lo, &hi), OOC_SUCCESS);
        CU_ASSERT(lo <= hi);
        CU_ASSERT_EQUAL(ooc_get(h, (ooc_param_t)p, &v), OOC_SUCCESS);
        CU_ASSERT_EQUAL(v, 0); /* default: automatic */
        CU_ASSERT_EQUAL(ooc_set(h, (ooc_param_t)p, lo), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_set(h, (ooc_param_t)p, hi), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_get(h, (ooc_param_t)p, &v), OOC_SUCCESS);
        CU_ASSERT_EQUAL(v, hi);
        if (hi < INT64_MAX) {
            CU_ASSERT_EQUAL(ooc_set(h, (ooc_param_t)p, hi + 1), OOC_ERR_PARAM_RANGE);
            CU_ASSERT(strstr(ooc_last_error(h), "outside") != NULL);
            CU_ASSERT_EQUAL(ooc_get(h, (ooc_param_t)p, &v), OOC_SUCCESS);
            CU_ASSERT_EQUAL(v, hi); /* unchanged */
        }
        if (lo > 1) CU_ASSERT_EQUAL(ooc_set(h, (ooc_param_t)p, lo - 1), OOC_ERR_PARAM_RANGE);
        CU_ASSERT_EQUAL(ooc_set(h, (ooc_param_t)p, -1), OOC_ERR_PARAM_RANGE);
        CU_ASSERT_EQUAL(ooc_set(h, (ooc_param_t)p, 0), OOC_SUCCESS); /* back to automatic */
    }
    int64_t lo, hi, v;
    /* the refusal names the parameter, not only its number */
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_RING_DEPTH, 17), OOC_ERR_PARAM_RANGE);
    CU_ASSERT(strstr(ooc_last_error(h), "OOC_PARAM_RING_DEPTH") != NULL);
    /* the least values the pipeline runs with, stated here and not read
     * from the table the loop above reads (a ring of 1 was accepted by a
     * mutation of that table, every multiply then failing) */
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_RING_DEPTH, 1), OOC_ERR_PARAM_RANGE);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_STREAMS, 2), OOC_ERR_PARAM_RANGE);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_RING_DEPTH, 2), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_STREAMS, 3), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_RING_DEPTH, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_STREAMS, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_STAGE_C, 2), OOC_ERR_PARAM_RANGE);
    CU_ASSERT(strstr(ooc_last_error(h), "OOC_PARAM_STAGE_C (16)") != NULL);
    CU_ASSERT_EQUAL(ooc_param_bounds((ooc_param_t)0, &lo, &hi), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(ooc_param_bounds((ooc_param_t)99, &lo, &hi), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(ooc_param_bounds(OOC_PARAM_BACKEND, NULL, &hi), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_set(h, (ooc_param_t)99, 1), OOC_ERR_INVALID_PARAM);
    CU_ASSERT(strstr(ooc_last_error(h), "unknown parameter") != NULL);
    CU_ASSERT_EQUAL(ooc_get(h, (ooc_param_t)99, &v), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(ooc_get(h, OOC_PARAM_BACKEND, NULL), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_set(NULL, OOC_PARAM_BACKEND, 1), OOC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL(ooc_get(NULL, OOC_PARAM_BACKEND, &v), OOC_ERR_INVALID_HANDLE);
    ooc_destroy(h);
}

/* ---- bad arguments: each its own status, a message, nothing written ---- */

enum { M = 13, N = 11, K = 7 };
static double A[M * K], B[K * N], C[M * N], Csave[M * N];
static ooc_handle_t *H;

typedef struct {
    const char *what;
    ooc_status_t expect;
    const char *msg; /* a word the message must contain */
    ooc_dtype_t t;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    int64_t m, n, k;
    int null_alpha, null_beta;
    const void *a, *b;
    void *c;
    int64_t lda, ldb, ldc;
} bad_t;

static void expect_bad(const bad_t *x)
{
    double alpha = 1.0, beta = 0.0;
    memcpy(C, Csave, sizeof C);
    ooc_status_t st = ooc_gemm(H, x->t, x->layout, x->ta, x->tb, x->m, x->n, x->k,
                               x->null_alpha ? NULL : &alpha, x->a, x->lda, x->b, x->ldb,
                               x->null_beta ? NULL : &beta, x->c, x->ldc);
    if (st != x->expect)
        fprintf(stderr, "\n    %s: got %s, expected %s\n", x->what, ooc_status_string(st), ooc_status_string(x->expect));
    CU_ASSERT_EQUAL(st, x->expect);
    CU_ASSERT(memcmp(C, Csave, sizeof C) == 0); /* nothing written */
    if (strstr(ooc_last_error(H), x->msg) == NULL)
        fprintf(stderr, "\n    %s: message '%s' lacks '%s'\n", x->what, ooc_last_error(H), x->msg);
    CU_ASSERT(strstr(ooc_last_error(H), x->msg) != NULL);
}

static void test_bad_arguments(void)
{
    uint64_t seed = 7;
    tu_fill(OOC_R64, A, M * K, &seed);
    tu_fill(OOC_R64, B, K * N, &seed);
    tu_fill(OOC_R64, Csave, M * N, &seed);
    const ooc_layout_t CM = OOC_COL_MAJOR, RM = OOC_ROW_MAJOR;
    const ooc_op_t ON = OOC_OP_N, OT = OOC_OP_T;
    const int64_t BIG = INT64_MAX / 4;
    bad_t cases[] = {
        {"dtype", OOC_ERR_INVALID_DTYPE, "dtype", (ooc_dtype_t)0, CM, ON, ON, M, N, K, 0, 0, A, B, C, M, K, M},
        {"layout", OOC_ERR_INVALID_LAYOUT, "layout", OOC_R64, (ooc_layout_t)0, ON, ON, M, N, K, 0, 0, A, B, C, M, K, M},
        {"transa", OOC_ERR_INVALID_TRANSA, "transa", OOC_R64, CM, (ooc_op_t)'N', ON, M, N, K, 0, 0, A, B, C, M, K, M},
        {"transb", OOC_ERR_INVALID_TRANSB, "transb", OOC_R64, CM, ON, (ooc_op_t)114, M, N, K, 0, 0, A, B, C, M, K, M},
        {"m < 0", OOC_ERR_INVALID_M, "m = -1", OOC_R64, CM, ON, ON, -1, N, K, 0, 0, A, B, C, M, K, M},
        {"n < 0", OOC_ERR_INVALID_N, "n = -3", OOC_R64, CM, ON, ON, M, -3, K, 0, 0, A, B, C, M, K, M},
        {"k < 0", OOC_ERR_INVALID_K, "k = ", OOC_R64, CM, ON, ON, M, N, INT64_MIN, 0, 0, A, B, C, M, K, M},
        {"lda col NN", OOC_ERR_INVALID_LDA, "lda", OOC_R64, CM, ON, ON, M, N, K, 0, 0, A, B, C, M - 1, K, M},
        {"lda col TN", OOC_ERR_INVALID_LDA, "lda", OOC_R64, CM, OT, ON, M, N, K, 0, 0, A, B, C, K - 1, K, M},
        {"lda row NN", OOC_ERR_INVALID_LDA, "A is m x k, row-major: its rows", OOC_R64, RM, ON, ON, M, N, K, 0, 0, A, B, C, K - 1, N, N},
        {"lda row TN", OOC_ERR_INVALID_LDA, "lda", OOC_R64, RM, OT, ON, M, N, K, 0, 0, A, B, C, M - 1, N, N},
        {"lda 0 when m = 0", OOC_ERR_INVALID_LDA, "lda", OOC_R64, CM, ON, ON, 0, N, K, 0, 0, A, B, C, 0, K, 1},
        {"ldb col NN", OOC_ERR_INVALID_LDB, "ldb", OOC_R64, CM, ON, ON, M, N, K, 0, 0, A, B, C, M, K - 1, M},
        {"ldb col NT", OOC_ERR_INVALID_LDB, "B is n x k, column-major", OOC_R64, CM, ON, OT, M, N, K, 0, 0, A, B, C, M, N - 1, M},
        {"ldb row NN", OOC_ERR_INVALID_LDB, "ldb", OOC_R64, RM, ON, ON, M, N, K, 0, 0, A, B, C, K, N - 1, N},
        {"ldc col", OOC_ERR_INVALID_LDC, "ldc", OOC_R64, CM, ON, ON, M, N, K, 0, 0, A, B, C, M, K, M - 1},
        {"ldc row", OOC_ERR_INVALID_LDC, "ldc", OOC_R64, RM, ON, ON, M, N, K, 0, 0, A, B, C, K, N, N - 1},
        {"A NULL", OOC_ERR_NULL_A, "A is NULL", OOC_R64, CM, ON, ON, M, N, K, 0, 0, NULL, B, C, M, K, M},
        {"B NULL", OOC_ERR_NULL_B, "B is NULL", OOC_R64, CM, ON, ON, M, N, K, 0, 0, A, NULL, C, M, K, M},
        {"C NULL", OOC_ERR_NULL_C, "C is NULL", OOC_R64, CM, ON, ON, M, N, K, 0, 0, A, B, NULL, M, K, M},
        {"alpha NULL", OOC_ERR_NULL_ARG, "alpha", OOC_R64, CM, ON, ON, M, N, K, 1, 0, A, B, C, M, K, M},
        {"beta NULL", OOC_ERR_NULL_ARG, "beta", OOC_R64, CM, ON, ON, M, N, K, 0, 1, A, B, C, M, K, M},
        {"A span overflows", OOC_ERR_OVERFLOW, "2^63", OOC_R64, CM, ON, ON, M, N, BIG, 0, 0, A, B, C, BIG, BIG, M},
        {"C span overflows", OOC_ERR_OVERFLOW, "2^63", OOC_C64, CM, ON, ON, BIG, BIG, K, 0, 0, A, B, C, BIG, K, BIG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect_bad(&cases[i]);
    CU_ASSERT_EQUAL(ooc_gemm(NULL, OOC_R64, CM, ON, ON, M, N, K, A, A, M, B, K, A, C, M), OOC_ERR_INVALID_HANDLE);
}

/* A stored matrix of a single line (k = 1 column-major, m = 1 row-major, n =
 * 1 for C, ...) is valid with any leading dimension >= its length, as in
 * BLAS, which never steps by it: 2^60 too (it was refused as spanning more
 * than 2^63 bytes). Small integers: the product is exact. */
static void test_single_line_ld(void)
{
    const int64_t HUGE_LD = (int64_t)1 << 60;
    enum { L = 37, W = 5 };
    double a[L], b[L * W], c[L * W];
    for (int i = 0; i < L; i++) a[i] = (double)(i % 7) - 3;
    for (int i = 0; i < L * W; i++) b[i] = (double)(i % 5) - 2;
    /* column-major, k = 1: A (L x 1) one column, lda huge; B (1 x W), ldb huge too (each column one element) */
    for (int i = 0; i < L * W; i++) c[i] = 1.0;
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, L, W, 1, 2.0, a, HUGE_LD, b, 1, 0.5, c, L),
                    OOC_SUCCESS);
    int64_t wrong = 0;
    for (int j = 0; j < W; j++)
        for (int i = 0; i < L; i++) wrong += c[i + j * L] != 2.0 * a[i] * b[j] + 0.5;
    CU_ASSERT_EQUAL(wrong, 0);
    /* row-major, m = 1: A (1 x L) and C (1 x W) one row each, lda and ldc huge; B (L x W) */
    for (int j = 0; j < W; j++) c[j] = -1.0;
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_ROW_MAJOR, OOC_OP_N, OOC_OP_N, 1, W, L, 1.0, a, HUGE_LD, b, W, -1.0, c, HUGE_LD),
                    OOC_SUCCESS);
    wrong = 0;
    for (int j = 0; j < W; j++) {
        double s = 1.0;
        for (int l = 0; l < L; l++) s += a[l] * b[l * W + j];
        wrong += c[j] != s;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    /* column-major, op(A) = A^T with m = 1 (A stored L x 1), n = 1: C one element, ldc huge */
    c[0] = 3.0;
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_T, OOC_OP_N, 1, 1, L, 1.0, a, L, b, HUGE_LD, 1.0, c, HUGE_LD),
                    OOC_SUCCESS);
    double s = 3.0;
    for (int l = 0; l < L; l++) s += a[l] * b[l];
    CU_ASSERT_EQUAL(c[0], s);
    /* two lines with such a leading dimension still span more than 2^63 bytes */
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, L, W, 2, 1.0, a, HUGE_LD, b, 2, 0.0, c, L),
                    OOC_ERR_OVERFLOW);
}

/* Empty problems write nothing; alpha == 0 or k == 0 only scale C. */
static void test_quick_returns(void)
{
    double alpha = 1.0, beta = 0.5;
    memcpy(C, Csave, sizeof C);
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 0, N, K, alpha, NULL, 1, B, K, beta, C, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, 0, K, alpha, A, M, NULL, K, beta, C, M), OOC_SUCCESS);
    CU_ASSERT(memcmp(C, Csave, sizeof C) == 0);
    /* k = 0: C = beta C, A and B not needed */
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, 0, alpha, NULL, M, NULL, 1, beta, C, M), OOC_SUCCESS);
    for (int i = 0; i < M * N; i++) CU_ASSERT_EQUAL(C[i], 0.5 * Csave[i]);
    /* alpha = 0, beta = 0: exact zeros even over NaN */
    tu_fill_nan(OOC_R64, C, M * N);
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_ROW_MAJOR, OOC_OP_T, OOC_OP_N, M, N, K, 0.0, A, M, B, N, 0.0, C, N), OOC_SUCCESS);
    for (int i = 0; i < M * N; i++) CU_ASSERT_EQUAL(C[i], 0.0);
    /* complex beta = i: rotates C */
    float cz[4] = {1.0f, 2.0f, -3.0f, 0.5f}, zero[2] = {0, 0}, ii[2] = {0, 1};
    CU_ASSERT_EQUAL(ooc_cgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 2, 1, 3, zero, A, 2, B, 3, ii, cz, 2), OOC_SUCCESS);
    CU_ASSERT_EQUAL(cz[0], -2.0f);
    CU_ASSERT_EQUAL(cz[1], 1.0f);
    CU_ASSERT_EQUAL(cz[2], -0.5f);
    CU_ASSERT_EQUAL(cz[3], -3.0f);
    /* complex beta whose real part is 1 is not one: k = 0 and alpha = 0,
     * single and double (a test of beta = i alone passed a check of one
     * that looked at the real part only) */
    static const double betas[2][2] = {{1, 1}, {1, -0.5}};
    static const double want[2][4] = {{-1, 3, -3.5, -2.5}, {2, 1.5, -2.75, 2}};
    for (int bi = 0; bi < 2; bi++)
        for (int path = 0; path < 4; path++) { /* k = 0 or alpha = 0; C64 or C32 */
            int kz = path & 1, dbl = path & 2;
            double zd[4] = {1, 2, -3, 0.5}, ad[2] = {0, 0}, one[2] = {1, 0};
            float zf[4] = {1, 2, -3, 0.5f}, af[2] = {0, 0}, onef[2] = {1, 0};
            float bf[2] = {(float)betas[bi][0], (float)betas[bi][1]};
            const void *al = kz ? (dbl ? (void *)one : (void *)onef) : (dbl ? (void *)ad : (void *)af);
            int64_t k = kz ? 0 : 3;
            ooc_status_t st = dbl ? ooc_zgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 2, 1, k, al, kz ? NULL : A, 2,
                                              kz ? NULL : B, 3, betas[bi], zd, 2)
                                  : ooc_cgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 2, 1, k, al, kz ? NULL : A, 2,
                                              kz ? NULL : B, 3, bf, zf, 2);
            CU_ASSERT_EQUAL(st, OOC_SUCCESS);
            for (int i = 0; i < 4; i++) {
                double got = dbl ? zd[i] : (double)zf[i];
                if (got != want[bi][i])
                    fprintf(stderr, "\n    %s beta (%g, %g), %s: C[%d] %g, want %g\n", dbl ? "zgemm" : "cgemm",
                            betas[bi][0], betas[bi][1], kz ? "k = 0" : "alpha = 0", i, got, want[bi][i]);
                CU_ASSERT_EQUAL(got, want[bi][i]);
            }
        }
    CU_ASSERT_STRING_EQUAL(ooc_last_error(H), "");
}

/* Run-time failures: a clear status and message, C untouched. */
static void test_runtime_failures(void)
{
    ooc_handle_t *h;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    /* budget too small for any plan */
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_HOST), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICE_MEM, 64), OOC_SUCCESS);
    memcpy(C, Csave, sizeof C);
    CU_ASSERT_EQUAL(ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, 1.0, A, M, B, K, 0.0, C, M), OOC_ERR_BUDGET_TOO_SMALL);
    CU_ASSERT(strstr(ooc_last_error(h), "64 bytes of device memory") != NULL);
    CU_ASSERT(memcmp(C, Csave, sizeof C) == 0);
    /* the next success clears the message */
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICE_MEM, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, 1.0, A, M, B, K, 0.0, C, M), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(h), "");
    CU_ASSERT_STRING_EQUAL(ooc_backend_name(h), "host");

    /* the custom backend (own kernels): runs on a GPU; otherwise says why, C untouched */
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_CUSTOM), OOC_SUCCESS);
    memcpy(C, Csave, sizeof C);
    ooc_status_t stc = ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, 1.0, A, M, B, K, 0.0, C, M);
    CU_ASSERT(stc == OOC_SUCCESS || stc == OOC_ERR_NO_DEVICE || stc == OOC_ERR_BACKEND_UNAVAILABLE);
    if (stc == OOC_SUCCESS) {
        CU_ASSERT_STRING_EQUAL(ooc_backend_name(h), "custom");
    } else {
        CU_ASSERT(memcmp(C, Csave, sizeof C) == 0);
        CU_ASSERT(strstr(ooc_last_error(h), "custom") != NULL || strstr(ooc_last_error(h), "CUDA") != NULL ||
                  strstr(ooc_last_error(h), "cuda") != NULL);
    }
    memcpy(C, Csave, sizeof C);

    /* cuBLAS: runs on a GPU; otherwise says why, C untouched */
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS), OOC_SUCCESS);
    ooc_status_t st = ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, 1.0, A, M, B, K, 0.0, C, M);
    CU_ASSERT(st == OOC_SUCCESS || st == OOC_ERR_NO_DEVICE || st == OOC_ERR_BACKEND_UNAVAILABLE);
    if (st != OOC_SUCCESS) {
        CU_ASSERT(memcmp(C, Csave, sizeof C) == 0);
        CU_ASSERT(strlen(ooc_last_error(h)) > 10);
    }
    /* a device index that does not exist */
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICE, 1023), OOC_SUCCESS);
    st = ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, 1.0, A, M, B, K, 0.0, C, M);
    CU_ASSERT(st == OOC_ERR_NO_DEVICE || st == OOC_ERR_BACKEND_UNAVAILABLE);
    ooc_destroy(h);
}

/* ooc_cancel stops the multiply running or the next to start, and every
 * return of ooc_gemm and ooc_gemm_files consumes the request: a call with
 * nothing to stop (nothing to compute, C only scaled, an argument error, a
 * failure) must not leave it to stop a later, unrelated one. */
static void test_cancel_consumed(void)
{
    ooc_handle_t *h;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_HOST), OOC_SUCCESS);
    const ooc_layout_t CM = OOC_COL_MAJOR;
    const ooc_op_t ON = OOC_OP_N;
    double x = 2, y = 0, one = 1, zero = 0;
    for (int c = 0; c < 7; c++) {
        ooc_status_t want = OOC_SUCCESS, st;
        memcpy(C, Csave, sizeof C);
        CU_ASSERT_EQUAL(ooc_cancel(h), OOC_SUCCESS);
        switch (c) {
        case 0: /* a multiply to run: stopped */
            want = OOC_ERR_CANCELLED;
            st = ooc_dgemm(h, CM, ON, ON, M, N, K, 1.0, A, M, B, K, 0.0, C, M);
            break;
        case 1: st = ooc_dgemm(h, CM, ON, ON, 0, N, K, 1.0, A, 1, B, K, 0.0, C, 1); break; /* m = 0 */
        case 2: st = ooc_dgemm(h, CM, ON, ON, M, N, 0, 1.0, A, M, B, 1, 0.5, C, M); break; /* k = 0: C scaled */
        case 3: st = ooc_dgemm(h, CM, ON, ON, M, N, K, 0.0, A, M, B, K, 2.0, C, M); break; /* alpha = 0 */
        case 4: /* an argument error */
            want = OOC_ERR_INVALID_LDA;
            st = ooc_dgemm(h, CM, ON, ON, M, N, K, 1.0, A, M - 1, B, K, 0.0, C, M);
            break;
        case 5: /* a run-time failure */
            want = OOC_ERR_BUDGET_TOO_SMALL;
            CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICE_MEM, 64), OOC_SUCCESS);
            st = ooc_dgemm(h, CM, ON, ON, M, N, K, 1.0, A, M, B, K, 0.0, C, M);
            CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICE_MEM, 0), OOC_SUCCESS);
            break;
        default: /* a file multiply's argument error */
            want = OOC_ERR_NULL_A;
            st = ooc_gemm_files(h, ON, ON, &one, NULL, NULL, &zero, NULL, NULL, NULL);
            break;
        }
        if (st != want) fprintf(stderr, "\n    case %d: got %s\n", c, ooc_status_string(st));
        CU_ASSERT_EQUAL(st, want);
        /* the request is gone: the next multiply runs */
        y = 0;
        st = ooc_dgemm(h, CM, ON, ON, 1, 1, 1, 1.0, &x, 1, &x, 1, 0.0, &y, 1);
        if (st != OOC_SUCCESS) fprintf(stderr, "\n    after case %d: got %s\n", c, ooc_status_string(st));
        CU_ASSERT_EQUAL(st, OOC_SUCCESS);
        CU_ASSERT_EQUAL(y, 4.0);
    }
    /* ooc_cancel leaves the last error as it was */
    CU_ASSERT_EQUAL(ooc_dgemm(h, CM, ON, ON, M, N, K, 1.0, A, M - 1, B, K, 0.0, C, M), OOC_ERR_INVALID_LDA);
    CU_ASSERT_EQUAL(ooc_cancel(h), OOC_SUCCESS);
    CU_ASSERT(strstr(ooc_last_error(h), "lda") != NULL);
    ooc_destroy(h);
}

/* ooc_cuda_probe: one answer per process, consistent with the backend auto
 * and ooc_device_count, and a reason in words whenever CUDA cannot run. */
static void test_cuda_probe(void)
{
    int gpus = -1;
    const char *why = NULL, *module = NULL;
    ooc_status_t st = ooc_cuda_probe(&gpus, &why, &module);
    CU_ASSERT(st == OOC_SUCCESS || st == OOC_ERR_NO_DEVICE || st == OOC_ERR_BACKEND_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(module);
    CU_ASSERT(strlen(why) > 10);
    CU_ASSERT_EQUAL(st == OOC_SUCCESS, gpus > 0);
    /* the test library links the backend in (module_builtin.c): nothing loaded */
    CU_ASSERT_STRING_EQUAL(module, "");
#ifdef HAVE_CUDA
    CU_ASSERT(st != OOC_ERR_BACKEND_UNAVAILABLE);
    if (st == OOC_ERR_NO_DEVICE)
        CU_ASSERT(strncmp(why, "no NVIDIA driver", 16) == 0 || strncmp(why, "no GPU", 6) == 0 ||
                  strncmp(why, "the NVIDIA driver is too old", 28) == 0 || strncmp(why, "CUDA cannot start", 17) == 0);
#else
    CU_ASSERT_EQUAL(st, OOC_ERR_BACKEND_UNAVAILABLE);
    CU_ASSERT(strstr(why, "without CUDA") != NULL);
#endif
    /* the same answer again, NULL outputs allowed */
    CU_ASSERT_EQUAL(ooc_cuda_probe(NULL, NULL, NULL), st);
    ooc_handle_t *h;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    int count = -1;
    CU_ASSERT_EQUAL(ooc_device_count(h, &count), OOC_SUCCESS);
    CU_ASSERT_EQUAL(count, gpus);
    if (st != OOC_SUCCESS) {
        /* the cublas backend asked for by name fails with the same reason */
        double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {0, 0, 0, 0};
        CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 2, 2, 2, 1.0, a, 2, b, 2, 0.0, c, 2), st);
        CU_ASSERT(strstr(ooc_last_error(h), why) != NULL);
        ooc_device_info_t info;
        CU_ASSERT_EQUAL(ooc_device_info(h, 0, &info), st);
        /* the backend auto runs on the host */
        CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_AUTO), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 2, 2, 2, 1.0, a, 2, b, 2, 0.0, c, 2), OOC_SUCCESS);
        CU_ASSERT_STRING_EQUAL(ooc_backend_name(h), "host");
        CU_ASSERT(c[0] == 23 && c[1] == 34 && c[2] == 31 && c[3] == 46);
    }
    ooc_destroy(h);
}

/* The probes behind the floor: positive rates, and their own argument checks. */
static void test_measure(void)
{
    ooc_handle_t *h;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_HOST), OOC_SUCCESS);
    double h2d = 0, d2h = 0, r = 0;
    CU_ASSERT_EQUAL(ooc_measure_bandwidth(h, 4 << 20, &h2d, &d2h), OOC_SUCCESS);
    CU_ASSERT(h2d > 1e6 && d2h > 1e6);
    CU_ASSERT_EQUAL(ooc_measure_bandwidth(h, 0, &h2d, &d2h), OOC_ERR_PARAM_RANGE);
    CU_ASSERT_EQUAL(ooc_measure_bandwidth(h, 1024, NULL, &d2h), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_measure_bandwidth(NULL, 1024, &h2d, &d2h), OOC_ERR_INVALID_HANDLE);
    for (int t = OOC_R32; t <= OOC_C64; t++) {
        r = 0;
        CU_ASSERT_EQUAL(ooc_measure_gemm_rate(h, (ooc_dtype_t)t, 64, 48, 32, 2, &r), OOC_SUCCESS);
        CU_ASSERT(r > 1e6);
    }
    CU_ASSERT_EQUAL(ooc_measure_gemm_rate(h, (ooc_dtype_t)9, 64, 48, 32, 2, &r), OOC_ERR_INVALID_DTYPE);
    CU_ASSERT_EQUAL(ooc_measure_gemm_rate(h, OOC_R64, 0, 48, 32, 2, &r), OOC_ERR_INVALID_M);
    /* the status's text and the message say why 0 is refused here (the text said "negative") */
    CU_ASSERT_PTR_NOT_NULL(strstr(ooc_status_string(OOC_ERR_INVALID_M), "or 0 where a product is needed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(h), "m must be at least 1"));
    CU_ASSERT_EQUAL(ooc_measure_gemm_rate(h, OOC_R64, 64, -1, 32, 2, &r), OOC_ERR_INVALID_N);
    CU_ASSERT_EQUAL(ooc_measure_gemm_rate(h, OOC_R64, 64, 48, 0, 2, &r), OOC_ERR_INVALID_K);
    CU_ASSERT_EQUAL(ooc_measure_gemm_rate(h, OOC_R64, (int64_t)1 << 40, 48, 32, 2, &r), OOC_ERR_PARAM_RANGE);
    CU_ASSERT_EQUAL(ooc_measure_gemm_rate(h, OOC_R64, 64, 48, 32, 2, NULL), OOC_ERR_NULL_ARG);
    ooc_destroy(h);
}

/* The other two bandwidth probes: both directions at once, and the host's
 * memory bandwidth as staging copies. On the host backend (and the host's
 * memory on a GPU too, where there is one) each gives a
 * positive, finite rate; their argument errors are their own (the handle
 * first, then the output, then bytes 0), with a message, the output left
 * as it was. */
static void test_measure_both_and_host(void)
{
    ooc_handle_t *h;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_HOST), OOC_SUCCESS);
    for (int probe = 0; probe < 2; probe++) {
        ooc_status_t (*measure)(ooc_handle_t *, size_t, double *) =
            probe ? ooc_measure_host_bandwidth : ooc_measure_bandwidth_both;
        const char *name = probe ? "ooc_measure_host_bandwidth" : "ooc_measure_bandwidth_both";
        double bw = -1;
        CU_ASSERT_EQUAL(measure(NULL, 1 << 20, &bw), OOC_ERR_INVALID_HANDLE);
        CU_ASSERT_EQUAL(measure(NULL, 0, NULL), OOC_ERR_INVALID_HANDLE);
        CU_ASSERT_EQUAL(measure(h, 1 << 20, NULL), OOC_ERR_NULL_ARG);
        CU_ASSERT(strstr(ooc_last_error(h), name) != NULL);
        CU_ASSERT_EQUAL(measure(h, 0, NULL), OOC_ERR_NULL_ARG);
        CU_ASSERT_EQUAL(measure(h, 0, &bw), OOC_ERR_PARAM_RANGE);
        CU_ASSERT(strstr(ooc_last_error(h), "bytes is 0") != NULL);
        CU_ASSERT_EQUAL(bw, -1); /* outputs are written only on success */
        /* an odd size: not a multiple of a page or of 8 */
        ooc_status_t st = measure(h, (3 << 20) + 13, &bw);
        if (st != OOC_SUCCESS) fprintf(stderr, "\n    %s: %s\n", name, ooc_last_error(h));
        CU_ASSERT_EQUAL(st, OOC_SUCCESS);
        if (!(isfinite(bw) && bw > 1e6)) fprintf(stderr, "\n    %s: %g bytes/s\n", name, bw);
        CU_ASSERT(isfinite(bw) && bw > 1e6);
        CU_ASSERT_STRING_EQUAL(ooc_last_error(h), "");
        CU_ASSERT_STRING_EQUAL(ooc_backend_name(h), "host");
    }
    /* both ways at 16 MiB and more goes in 16 pieces each way, here of odd
     * sizes (under ASan a piece past its buffer is caught) */
    double bw = -1;
    CU_ASSERT_EQUAL(ooc_measure_bandwidth_both(h, (17 << 20) + 13, &bw), OOC_SUCCESS);
    CU_ASSERT(isfinite(bw) && bw > 1e6);
    ooc_destroy(h);
    /* On a GPU the host's memory is also measured with the copy engines
     * moving pinned memory both ways while the threads copy (lib/probe.c):
     * an odd size, not a multiple of its 16 pieces */
    int gpus = 0;
    if (ooc_cuda_probe(&gpus, NULL, NULL) != OOC_SUCCESS || gpus == 0) return;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS), OOC_SUCCESS);
    bw = -1;
    ooc_status_t st = ooc_measure_host_bandwidth(h, (64 << 20) + 13, &bw);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    ooc_measure_host_bandwidth (cuBLAS): %s\n", ooc_last_error(h));
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    if (!(isfinite(bw) && bw > 1e9)) fprintf(stderr, "\n    ooc_measure_host_bandwidth (cuBLAS): %g bytes/s\n", bw);
    CU_ASSERT(isfinite(bw) && bw > 1e9);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(h), "");
    /* both ways in pieces of odd sizes: a rate no link of today exceeds */
    bw = -1;
    st = ooc_measure_bandwidth_both(h, (64 << 20) + 13, &bw);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    ooc_measure_bandwidth_both (cuBLAS): %s\n", ooc_last_error(h));
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    if (!(bw > 1e9 && bw < 2e12)) fprintf(stderr, "\n    ooc_measure_bandwidth_both (cuBLAS): %g bytes/s\n", bw);
    CU_ASSERT(bw > 1e9 && bw < 2e12);
    ooc_destroy(h);
}

/* 1 when every figure of s is 0 (ooc_get_stats after a failed multiply) */
static int stats_zero(const ooc_stats_t *s)
{
    int z = s->block_rows == 0 && s->panel_cols == 0 && s->panel_depth == 0 && s->blocks == 0 && s->panels == 0 &&
            s->ring_depth == 0 && s->streams == 0 && s->staged_a == 0 && s->staged_c == 0 && s->a_resident == 0 &&
            s->device_bytes == 0 && s->host_bytes == 0 && s->bytes_h2d == 0 && s->bytes_d2h == 0 &&
            s->seconds == 0 && s->traced == 0 && s->trace_status == 0 && s->trace_error[0] == '\0' &&
            s->blocks_resumed == 0 && s->ndevices == 0 && s->b_shared == 0 && s->bytes_peer == 0 &&
            s->b_how[0] == '\0' && s->bytes_staged == 0 && s->least_traffic_bytes == 0 && s->a_pieces == 0 &&
            s->c_chunks == 0 && s->blocks_mixed == 0 && s->mixed_by[0] == '\0';
    for (int d = 0; d < OOC_MAX_DEVICES; d++)
        z = z && s->device[d].blocks == 0 && s->device[d].bytes_h2d == 0 && s->device[d].bytes_d2h == 0 &&
            s->device[d].seconds == 0;
    return z;
}

/* ooc_get_stats after a failed multiply: all zeros (the header's promise),
 * never the figures of the success before it on the same handle, whatever
 * failed: an argument error, a run-time failure, a cancelled multiply, a
 * file multiply's argument error. */
static void test_stats_after_failure(void)
{
    ooc_handle_t *h;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_HOST), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BLOCK_ROWS, 4), OOC_SUCCESS); /* several blocks */
    uint64_t seed = 31;
    tu_fill(OOC_R64, A, M * K, &seed);
    tu_fill(OOC_R64, B, K * N, &seed);
    double one = 1, zero = 0;
    const ooc_layout_t CM = OOC_COL_MAJOR;
    const ooc_op_t ON = OOC_OP_N;
    for (int f = 0; f < 4; f++) {
        ooc_stats_t s;
        memset(&s, 0, sizeof s);
        CU_ASSERT_EQUAL(ooc_dgemm(h, CM, ON, ON, M, N, K, 1.5, A, M, B, K, 0.0, C, M), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_get_stats(h, &s), OOC_SUCCESS);
        CU_ASSERT(s.blocks >= 2 && s.bytes_h2d > 0 && s.ndevices >= 1 && s.seconds > 0);
        ooc_status_t want, st;
        switch (f) {
        case 0: /* an argument error */
            want = OOC_ERR_INVALID_LDA;
            st = ooc_dgemm(h, CM, ON, ON, M, N, K, 1.5, A, M - 1, B, K, 0.0, C, M);
            break;
        case 1: /* a run-time failure */
            want = OOC_ERR_BUDGET_TOO_SMALL;
            CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICE_MEM, 64), OOC_SUCCESS);
            st = ooc_dgemm(h, CM, ON, ON, M, N, K, 1.5, A, M, B, K, 0.0, C, M);
            CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICE_MEM, 0), OOC_SUCCESS);
            break;
        case 2: /* cancelled before it started */
            want = OOC_ERR_CANCELLED;
            CU_ASSERT_EQUAL(ooc_cancel(h), OOC_SUCCESS);
            st = ooc_dgemm(h, CM, ON, ON, M, N, K, 1.5, A, M, B, K, 0.0, C, M);
            break;
        default: /* a file multiply's argument error */
            want = OOC_ERR_NULL_A;
            st = ooc_gemm_files(h, ON, ON, &one, NULL, NULL, &zero, NULL, NULL, NULL);
            break;
        }
        if (st != want) fprintf(stderr, "\n    failure %d: got %s\n", f, ooc_status_string(st));
        CU_ASSERT_EQUAL(st, want);
        memset(&s, 0xff, sizeof s);
        CU_ASSERT_EQUAL(ooc_get_stats(h, &s), OOC_SUCCESS);
        if (!stats_zero(&s))
            fprintf(stderr, "\n    failure %d: stats not zero (blocks %lld, bytes_h2d %llu)\n", f, (long long)s.blocks,
                    (unsigned long long)s.bytes_h2d);
        CU_ASSERT(stats_zero(&s));
    }
    ooc_destroy(h);
}

/* A trace that cannot be written fails no multiply: ooc_set_trace to a
 * path in a directory that does not exist; the multiply succeeds with the
 * right C, ooc_last_error() is "" and ooc_last_error_path() NULL right
 * after it (a success), and the stats say the trace was taken but not
 * written: trace_status OOC_ERR_IO, trace_error naming the path. */
static void test_trace_unwritable(void)
{
    ooc_handle_t *h;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_HOST), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BLOCK_ROWS, 4), OOC_SUCCESS);
    const char *path = "/nonexistent-ooc-test-dir/sub/trace.json";
    CU_ASSERT_EQUAL(ooc_set_trace(h, path), OOC_SUCCESS);
    uint64_t seed = 41;
    tu_fill(OOC_R64, A, M * K, &seed);
    tu_fill(OOC_R64, B, K * N, &seed);
    tu_fill(OOC_R64, Csave, M * N, &seed);
    memcpy(C, Csave, sizeof C);
    /* an earlier failure that named a file: the multiply must replace it */
    ooc_file_t *f = NULL;
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, OOC_ROW_MAJOR};
    CU_ASSERT_EQUAL(ooc_file_open(h, "/nonexistent/x.npy", &any, &f), OOC_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(ooc_last_error_path(h));
    /* row-major, op(A) = A^T: A is K x M (lda M), B is K x N (ldb N) */
    const double alpha = 0.75, beta = -0.5;
    ooc_status_t st = ooc_dgemm(h, OOC_ROW_MAJOR, OOC_OP_T, OOC_OP_N, M, N, K, alpha, A, M, B, N, beta, C, N);
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(h), "");
    CU_ASSERT_PTR_NULL(ooc_last_error_path(h));
    double worst;
    CU_ASSERT_EQUAL(tu_check(OOC_R64, OOC_ROW_MAJOR, OOC_OP_T, OOC_OP_N, M, N, K, &alpha, A, M, B, N, &beta, Csave, C,
                             N, &worst), 0);
    ooc_stats_t s;
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(ooc_get_stats(h, &s), OOC_SUCCESS);
    CU_ASSERT_EQUAL(s.traced, 1);
    CU_ASSERT(s.blocks >= 2);
    CU_ASSERT_EQUAL(s.trace_status, OOC_ERR_IO);
    if (strstr(s.trace_error, path) == NULL) fprintf(stderr, "\n    trace_error: '%s'\n", s.trace_error);
    CU_ASSERT(strstr(s.trace_error, path) != NULL);
    CU_ASSERT(access("/nonexistent-ooc-test-dir", F_OK) != 0); /* nothing made on the way */
    /* not tracing any more: nothing to report */
    CU_ASSERT_EQUAL(ooc_set_trace(h, NULL), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_dgemm(h, OOC_ROW_MAJOR, OOC_OP_T, OOC_OP_N, M, N, K, alpha, A, M, B, N, beta, C, N),
                    OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_get_stats(h, &s), OOC_SUCCESS);
    CU_ASSERT(s.traced == 0 && s.trace_status == OOC_SUCCESS && s.trace_error[0] == '\0');
    ooc_destroy(h);
}

/* Every call replaces the last error: a failed ooc_get says why, a good one
 * clears what an earlier failure left (it used to leave it stale). */
static void test_last_error(void)
{
    ooc_handle_t *h;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    int64_t v = -1;
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_RING_DEPTH, 99), OOC_ERR_PARAM_RANGE);
    CU_ASSERT(strlen(ooc_last_error(h)) > 0);
    CU_ASSERT_EQUAL(ooc_get(h, OOC_PARAM_RING_DEPTH, &v), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(h), "");
    CU_ASSERT_EQUAL(ooc_get(h, (ooc_param_t)77, &v), OOC_ERR_INVALID_PARAM);
    CU_ASSERT(strstr(ooc_last_error(h), "77") != NULL);
    CU_ASSERT_EQUAL(ooc_get(h, OOC_PARAM_RING_DEPTH, NULL), OOC_ERR_NULL_ARG);
    CU_ASSERT(strstr(ooc_last_error(h), "NULL") != NULL);
    CU_ASSERT_EQUAL(ooc_get_stats(h, NULL), OOC_ERR_NULL_ARG);
    CU_ASSERT(strlen(ooc_last_error(h)) > 0);
    ooc_stats_t st;
    CU_ASSERT_EQUAL(ooc_get_stats(h, &st), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(h), "");
    /* a failure that concerns no file names none; one that does names it */
    CU_ASSERT_PTR_NULL(ooc_last_error_path(h));
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_RING_DEPTH, 99), OOC_ERR_PARAM_RANGE);
    CU_ASSERT_PTR_NULL(ooc_last_error_path(h));
    ooc_file_t *f = NULL;
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, OOC_ROW_MAJOR};
    CU_ASSERT_EQUAL(ooc_file_open(h, "/nonexistent/x.npy", &any, &f), OOC_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ooc_last_error_path(h));
    CU_ASSERT_STRING_EQUAL(ooc_last_error_path(h), "/nonexistent/x.npy");
    CU_ASSERT_EQUAL(ooc_get(h, OOC_PARAM_RING_DEPTH, &v), OOC_SUCCESS);
    CU_ASSERT_PTR_NULL(ooc_last_error_path(h));
    /* an argument refused for a file names the file too (it named none:
     * a raw shape the file cannot have, an output named as a temporary file) */
    ooc_file_spec_t raw0 = {OOC_FORMAT_RAW, -1, 3, OOC_R64, OOC_ROW_MAJOR};
    CU_ASSERT_EQUAL(ooc_file_open(h, "/nonexistent/r.bin", &raw0, &f), OOC_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ooc_last_error_path(h));
    CU_ASSERT_STRING_EQUAL(ooc_last_error_path(h), "/nonexistent/r.bin");
    ooc_file_spec_t out = {OOC_FORMAT_NPY, 2, 2, OOC_R64, OOC_ROW_MAJOR};
    CU_ASSERT_EQUAL(ooc_file_create(h, "/nonexistent/c.npy.ooc-tmp", &out, 0, &f), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ooc_last_error_path(h));
    CU_ASSERT_STRING_EQUAL(ooc_last_error_path(h), "/nonexistent/c.npy.ooc-tmp");
    CU_ASSERT_PTR_NULL(ooc_last_error_path(NULL));
    CU_ASSERT_EQUAL(ooc_cancel(NULL), OOC_ERR_INVALID_HANDLE);
    ooc_destroy(h);
}

int main(void)
{
    if (ooc_create(&H) != OOC_SUCCESS) return 1;
    ooc_set(H, OOC_PARAM_BACKEND, OOC_BACKEND_HOST);
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("api", NULL, NULL);
    CU_add_test(s, "handle create and destroy", test_handle);
    CU_add_test(s, "version", test_version);
    CU_add_test(s, "CUDA probe: one answer, with a reason", test_cuda_probe);
    CU_add_test(s, "status strings", test_status_strings);
    CU_add_test(s, "parameters and bounds", test_params);
    CU_add_test(s, "bad arguments", test_bad_arguments);
    CU_add_test(s, "a single line's leading dimension may be any at least its length", test_single_line_ld);
    CU_add_test(s, "quick returns", test_quick_returns);
    CU_add_test(s, "run-time failures", test_runtime_failures);
    CU_add_test(s, "ooc_cancel: every multiply's return consumes it", test_cancel_consumed);
    CU_add_test(s, "measurements behind the floor", test_measure);
    CU_add_test(s, "bandwidth both ways at once, host memory bandwidth", test_measure_both_and_host);
    CU_add_test(s, "the last error is always the last call's", test_last_error);
    CU_add_test(s, "stats after a failed multiply are zeros, not the last success's", test_stats_after_failure);
    CU_add_test(s, "a trace that cannot be written fails no multiply", test_trace_unwritable);
    int rc = tu_run();
    ooc_destroy(H);
    return rc;
}
