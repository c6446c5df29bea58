/* SPDX-License-Identifier: MIT */
/*
 * test_kernels.c: the CUnit suite of our own CUDA kernels (kernels/): the
 * DGEMM and SGEMM launchers against OpenBLAS on random data at odd sizes,
 * all four op combinations, alpha/beta (beta == 0 with NaN in C), padded
 * leading dimensions (16-byte and element-wise load paths); the `custom`
 * backend's gemm op (row-major too, k == 0, DGEMM operands transposed on the
 * device); the scale and transpose helpers (helpers.cu).
 * Exits 77 (skip) without a GPU. With OOC_KERNEL_BENCH=1 it also times our
 * kernels beside cuBLAS in core (CUDA events) and prints TFLOP/s
 * (OOC_KERNEL_BENCH=only: the bench alone); the bench is never part of
 * make check.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "../kernels/kernels.h"
#include "backend.h"
#include "module.h"
#include "testutil.h"

typedef struct {
    int m, n, k;
} shape_t;

static const shape_t shapes[] = {
    {1, 1, 1},     {7, 7, 7},       {33, 17, 9},     {127, 129, 257}, {129, 127, 33},
    {257, 33, 129}, {64, 64, 16},   {65, 63, 17},    {196, 132, 68},  {1001, 203, 301},
    {5, 3, 0},      {1000, 777, 555},
};
static const double alphas[] = {1.0, -0.5, 2.0};
static const double betas[] = {0.0, 0.75, 1.0};

/* one launcher case (a tile variant of kernels.h); returns 0 when the result passes tu_check */
static int run_case(int variant, ooc_dtype_t t, int ta, int tb, int m, int n, int k, double alpha, double beta,
                    int pad, uint64_t *seed)
{
    size_t es = tu_elem(t);
    ooc_op_t oa = ta ? OOC_OP_T : OOC_OP_N, ob = tb ? OOC_OP_T : OOC_OP_N;
    int lda = (ta ? k : m) + pad, ldb = (tb ? n : k) + pad, ldc = m + pad;
    if (lda < 1) lda = 1;
    if (ldb < 1) ldb = 1;
    size_t na = tu_stored(OOC_COL_MAJOR, oa, m, k, lda), nb = tu_stored(OOC_COL_MAJOR, ob, k, n, ldb);
    size_t nc = (size_t)ldc * n;
    if (na == 0) na = 1;
    if (nb == 0) nb = 1;
    void *A = malloc(na * es), *B = malloc(nb * es), *C0 = malloc(nc * es), *C = malloc(nc * es);
    void *dA = NULL, *dB = NULL, *dC = NULL;
    int bad = -1;
    if (!A || !B || !C0 || !C) goto done;
    tu_fill(t, A, na, seed);
    tu_fill(t, B, nb, seed);
    if (beta == 0.0) tu_fill_nan(t, C0, nc); /* must not be read */
    else tu_fill(t, C0, nc, seed);
    if (cudaMalloc(&dA, na * es) || cudaMalloc(&dB, nb * es) || cudaMalloc(&dC, nc * es)) goto done;
    if (cudaMemcpy(dA, A, na * es, cudaMemcpyHostToDevice) || cudaMemcpy(dB, B, nb * es, cudaMemcpyHostToDevice) ||
        cudaMemcpy(dC, C0, nc * es, cudaMemcpyHostToDevice))
        goto done;
    int e;
    float fa = (float)alpha, fb = (float)beta;
    if (t == OOC_R64)
        e = ooc_kernel_dgemm_variant(variant, NULL, ta, tb, m, n, k, alpha, dA, lda, dB, ldb, beta, dC, ldc);
    else
        e = ooc_kernel_sgemm_variant(variant, NULL, ta, tb, m, n, k, fa, dA, lda, dB, ldb, fb, dC, ldc);
    if (e != 0 || cudaDeviceSynchronize() != cudaSuccess) {
        printf("launch failed: %d\n", e);
        goto done;
    }
    if (cudaMemcpy(C, dC, nc * es, cudaMemcpyDeviceToHost)) goto done;
    double worst = 0;
    const void *pa = t == OOC_R64 ? (const void *)&alpha : (const void *)&fa;
    const void *pb = t == OOC_R64 ? (const void *)&beta : (const void *)&fb;
    bad = (int)tu_check(t, OOC_COL_MAJOR, oa, ob, m, n, k, pa, A, lda, B, ldb, pb, C0, C, ldc, &worst);
    if (bad)
        printf("\n  %s variant %d ta=%d tb=%d m=%d n=%d k=%d alpha=%g beta=%g pad=%d: %d bad, worst %.3g\n",
               t == OOC_R64 ? "dgemm" : "sgemm", variant, ta, tb, m, n, k, alpha, beta, pad, bad, worst);
done:
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(A);
    free(B);
    free(C0);
    free(C);
    return bad;
}

/* OOC_KERNEL_QUICK=1 (for the slow sanitizer tools): small shapes, default variant only */
static int quick(void)
{
    const char *q = getenv("OOC_KERNEL_QUICK");
    return q && *q == '1';
}

static void sweep(ooc_dtype_t t)
{
    uint64_t seed = t == OOC_R64 ? 42 : 43;
    int nv = quick() ? 1 : t == OOC_R64 ? OOC_KERNEL_DGEMM_VARIANTS : OOC_KERNEL_SGEMM_VARIANTS;
    size_t ns = sizeof shapes / sizeof shapes[0] - (quick() ? 1 : 0);
    for (int v = 0; v < nv; v++)
    for (size_t s = 0; s < ns; s++)
        for (int op = 0; op < 4; op++)
            for (size_t ab = 0; ab < 3; ab++) {
                int pad = (int)((s + ab + op) % 3) * 3; /* 0, 3 or 6: ld > rows too */
                CU_ASSERT_EQUAL(run_case(v, t, op & 1, op >> 1, shapes[s].m, shapes[s].n, shapes[s].k,
                                         alphas[ab], betas[ab], pad, &seed),
                                0);
            }
}

static void test_dgemm(void) { sweep(OOC_R64); }
static void test_sgemm(void) { sweep(OOC_R32); }

/* One tile through the custom backend's gemm op, checked against OpenBLAS;
 * returns the number of bad elements */
static int64_t custom_case(ooc_be_t *be, ooc_dtype_t t, ooc_layout_t L, ooc_op_t ta, ooc_op_t tb, int m, int n, int k,
                           uint64_t *seed)
{
    ooc_err_t err = {0};
    size_t es = tu_elem(t);
    /* stored rows/lines of op(X) in layout L: the ld counts elements of a line */
    int ca = (L == OOC_COL_MAJOR) == (ta == OOC_OP_N) ? m : k;
    int cb = (L == OOC_COL_MAJOR) == (tb == OOC_OP_N) ? k : n;
    int lda = ca + 2, ldb = cb + 1, ldc = (L == OOC_COL_MAJOR ? m : n) + 3;
    size_t na = tu_stored(L, ta, m, k, lda), nb = tu_stored(L, tb, k, n, ldb);
    size_t nc = (size_t)ldc * (L == OOC_COL_MAJOR ? n : m);
    void *A = malloc(na * es), *B = malloc(nb * es), *C0 = malloc(nc * es), *C = malloc(nc * es);
    void *dA = NULL, *dB = NULL, *dC = NULL;
    int64_t bad = -1;
    if (!A || !B || !C0 || !C) goto done;
    tu_fill(t, A, na, seed);
    tu_fill(t, B, nb, seed);
    tu_fill(t, C0, nc, seed);
    if (be->ops->dev_alloc(be, na * es, &dA, &err) || be->ops->dev_alloc(be, nb * es, &dB, &err) ||
        be->ops->dev_alloc(be, nc * es, &dC, &err))
        goto done;
    cudaMemcpy(dA, A, na * es, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B, nb * es, cudaMemcpyHostToDevice);
    cudaMemcpy(dC, C0, nc * es, cudaMemcpyHostToDevice);
    double al = 1.5, bt = -0.25;
    float fal = 1.5f, fbt = -0.25f;
    const void *pa = t == OOC_R64 ? (const void *)&al : (const void *)&fal;
    const void *pb = t == OOC_R64 ? (const void *)&bt : (const void *)&fbt;
    ooc_tile_gemm_t g = {t, L, ta, tb, m, n, k, pa, pb, dA, dB, dC, lda, ldb, ldc};
    if (be->ops->gemm(be, NULL, &g, &err) != OOC_SUCCESS || cudaDeviceSynchronize() != cudaSuccess) goto done;
    cudaMemcpy(C, dC, nc * es, cudaMemcpyDeviceToHost);
    double worst = 0;
    bad = tu_check(t, L, ta, tb, m, n, k, pa, A, lda, B, ldb, pb, C0, C, ldc, &worst);
    if (bad)
        printf("\n  backend custom dtype=%d layout=%d ta=%d tb=%d %dx%dx%d: %lld bad\n", (int)t, (int)L, (int)ta, (int)tb,
               m, n, k, (long long)bad);
done:
    if (dA) be->ops->dev_free(be, dA);
    if (dB) be->ops->dev_free(be, dB);
    if (dC) be->ops->dev_free(be, dC);
    free(A);
    free(B);
    free(C0);
    free(C);
    return bad;
}

/* The custom backend's gemm op: both layouts, all ops (C is T on reals), k == 0 (the scale helper) */
static void test_backend_custom(void)
{
    ooc_err_t err = {0};
    ooc_be_t *be = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_cuda_table.custom_ops->open(&be, 0, OOC_MATH_STRICT, &err), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(be->ops->name, "custom");
    uint64_t seed = 7;
    static const ooc_op_t ops[] = {OOC_OP_N, OOC_OP_T, OOC_OP_C};
    for (int dt = 0; dt < 2; dt++)
        for (int lay = 0; lay < 2; lay++)
            for (int ia = 0; ia < 3; ia++)
                for (int ib = 0; ib < 3; ib++) {
                    ooc_dtype_t t = dt ? OOC_R32 : OOC_R64;
                    ooc_layout_t L = lay ? OOC_ROW_MAJOR : OOC_COL_MAJOR;
                    CU_ASSERT_EQUAL(custom_case(be, t, L, ops[ia], ops[ib], 131, 67, 45, &seed), 0);
                    if (ia == 0 && ib == 0) CU_ASSERT_EQUAL(custom_case(be, t, L, ops[ia], ops[ib], 31, 17, 0, &seed), 0);
                }
    be->ops->close(be);
}

/* DGEMM tiles with op T operands big enough to be transposed on the device first */
static void test_backend_custom_transposed(void)
{
    ooc_err_t err = {0};
    ooc_be_t *be = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_cuda_table.custom_ops->open(&be, 0, OOC_MATH_STRICT, &err), OOC_SUCCESS);
    uint64_t seed = 8;
    for (int op = 1; op < 4; op++)
        CU_ASSERT_EQUAL(custom_case(be, OOC_R64, OOC_COL_MAJOR, op & 1 ? OOC_OP_T : OOC_OP_N,
                                    op & 2 ? OOC_OP_T : OOC_OP_N, 2051, 2049, 37, &seed),
                        0);
    CU_ASSERT_EQUAL(custom_case(be, OOC_R64, OOC_ROW_MAJOR, OOC_OP_T, OOC_OP_N, 2049, 2051, 21, &seed), 0);
    be->ops->close(be);
}

/* ---- helper kernels (helpers.cu) ---- */
static const ooc_dtype_t kt_dtype[4] = {OOC_R32, OOC_R64, OOC_C32, OOC_C64}; /* by OOC_KT_* */

/* element i of a host array as (re, im) doubles */
static void get_elem(ooc_dtype_t t, const void *x, size_t i, double *re, double *im)
{
    *im = 0;
    switch (t) {
    case OOC_R32: *re = ((const float *)x)[i]; break;
    case OOC_R64: *re = ((const double *)x)[i]; break;
    case OOC_C32: *re = ((const float *)x)[2 * i]; *im = ((const float *)x)[2 * i + 1]; break;
    default: *re = ((const double *)x)[2 * i]; *im = ((const double *)x)[2 * i + 1]; break;
    }
}

/* C = beta*C on odd shapes with padded ld: the padding is left alone; beta 0 on NaNs gives zeros */
static void test_scale(void)
{
    uint64_t seed = 11;
    static const int dims[][3] = {{1, 1, 0}, {33, 7, 3}, {129, 65, 0}, {1000, 3, 5}, {2, 70000, 1}};
    for (int type = 0; type < 4; type++)
        for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
            for (int zero = 0; zero < 2; zero++) {
                ooc_dtype_t t = kt_dtype[type];
                size_t es = tu_elem(t);
                int m = dims[d][0], n = dims[d][1], ldc = m + dims[d][2];
                size_t cnt = (size_t)ldc * n;
                void *C0 = malloc(cnt * es), *C = malloc(cnt * es), *dC = NULL;
                double beta[2] = {zero ? 0.0 : -1.375, zero ? 0.0 : 0.625};
                float fbeta[2] = {(float)beta[0], (float)beta[1]};
                const void *pb = (t == OOC_R32 || t == OOC_C32) ? (const void *)fbeta : (const void *)beta;
                CU_ASSERT_FATAL(C0 && C);
                if (zero) tu_fill_nan(t, C0, cnt);
                else tu_fill(t, C0, cnt, &seed);
                CU_ASSERT_EQUAL_FATAL(cudaMalloc(&dC, cnt * es), cudaSuccess);
                cudaMemcpy(dC, C0, cnt * es, cudaMemcpyHostToDevice);
                CU_ASSERT_EQUAL(ooc_kernel_scale(NULL, type, m, n, pb, dC, ldc), 0);
                CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
                cudaMemcpy(C, dC, cnt * es, cudaMemcpyDeviceToHost);
                int64_t bad = 0;
                double tol = (t == OOC_R32 || t == OOC_C32) ? 4e-7 : 1e-15;
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < ldc; i++) {
                        size_t x = (size_t)j * ldc + i;
                        double r0, i0, r1, i1;
                        get_elem(t, C0, x, &r0, &i0);
                        get_elem(t, C, x, &r1, &i1);
                        if (i >= m) { /* padding: untouched, bit for bit */
                            if (memcmp((char *)C0 + x * es, (char *)C + x * es, es) != 0) bad++;
                            continue;
                        }
                        double er = zero ? 0.0 : beta[0] * r0 - (type >= 2 ? beta[1] * i0 : 0.0);
                        double ei = zero ? 0.0 : (type >= 2 ? beta[0] * i0 + beta[1] * r0 : 0.0);
                        if (zero) { /* exact zeros, whatever C held */
                            if (r1 != 0.0 || i1 != 0.0) bad++;
                            continue;
                        }
                        double mag = (fabs(beta[0]) + fabs(beta[1])) * (fabs(r0) + fabs(i0)) + 1e-300;
                        if (!(fabs(r1 - er) <= tol * mag) || !(fabs(i1 - ei) <= tol * mag)) bad++;
                    }
                if (bad) printf("\n  scale type %d %dx%d ld %d beta0 %d: %lld bad\n", type, m, n, ldc, zero, (long long)bad);
                CU_ASSERT_EQUAL(bad, 0);
                cudaFree(dC);
                free(C0);
                free(C);
            }
}

/* B = A^T / A^H, exact, odd shapes with padded ld on both sides */
static void test_transpose(void)
{
    uint64_t seed = 12;
    static const int dims[][4] = {{1, 1, 0, 0}, {33, 7, 3, 1}, {129, 65, 0, 2}, {31, 1000, 1, 0}, {70, 33, 0, 0}};
    for (int type = 0; type < 4; type++)
        for (int conj = 0; conj < 2; conj++)
            for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
                ooc_dtype_t t = kt_dtype[type];
                size_t es = tu_elem(t);
                int m = dims[d][0], n = dims[d][1], lda = m + dims[d][2], ldb = n + dims[d][3];
                size_t na = (size_t)lda * n, nb = (size_t)ldb * m;
                void *A = malloc(na * es), *B = malloc(nb * es), *dA = NULL, *dB = NULL;
                CU_ASSERT_FATAL(A && B);
                tu_fill(t, A, na, &seed);
                CU_ASSERT_EQUAL_FATAL(cudaMalloc(&dA, na * es), cudaSuccess);
                CU_ASSERT_EQUAL_FATAL(cudaMalloc(&dB, nb * es), cudaSuccess);
                cudaMemcpy(dA, A, na * es, cudaMemcpyHostToDevice);
                cudaMemset(dB, 0x7f, nb * es);
                CU_ASSERT_EQUAL(ooc_kernel_transpose(NULL, type, conj, m, n, dA, lda, dB, ldb), 0);
                CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
                cudaMemcpy(B, dB, nb * es, cudaMemcpyDeviceToHost);
                int64_t bad = 0;
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        double ar, ai, br, bi;
                        get_elem(t, A, (size_t)j * lda + i, &ar, &ai);
                        get_elem(t, B, (size_t)i * ldb + j, &br, &bi);
                        if (conj && type >= 2) ai = -ai;
                        if (br != ar || bi != ai) bad++;
                    }
                if (bad) printf("\n  transpose type %d conj %d %dx%d: %lld bad\n", type, conj, m, n, (long long)bad);
                CU_ASSERT_EQUAL(bad, 0);
                cudaFree(dA);
                cudaFree(dB);
                free(A);
                free(B);
            }
}

/* ---- in-core benchmark (OOC_KERNEL_BENCH=1): ours beside cuBLAS ---- */
/* one launch of the benchmark: ours (a variant) or cuBLAS, or the transpose helper */
typedef struct {
    int what; /* 0 cuBLAS, 1 ours, 2 transpose A (m x k) into C */
    int dbl, variant, ta, tb, m, n, k;
    cublasHandle_t h;
    void *A, *B, *C;
} launch_t;

static void launch(const launch_t *l)
{
    double one = 1.0, zero = 0.0;
    float fone = 1.0f, fzero = 0.0f;
    int m = l->m, n = l->n, k = l->k, lda = l->ta ? k : m, ldb = l->tb ? n : k;
    cublasOperation_t oa = l->ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = l->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (l->what == 2) ooc_kernel_transpose(NULL, l->dbl ? OOC_KT_D : OOC_KT_S, 0, m, k, l->A, m, l->C, k);
    else if (l->what == 1 && l->dbl)
        ooc_kernel_dgemm_variant(l->variant, NULL, l->ta, l->tb, m, n, k, 1.0, l->A, lda, l->B, ldb, 0.0, l->C, m);
    else if (l->what == 1)
        ooc_kernel_sgemm_variant(l->variant, NULL, l->ta, l->tb, m, n, k, 1.0f, l->A, lda, l->B, ldb, 0.0f, l->C, m);
    else if (l->dbl) cublasDgemm(l->h, oa, ob, m, n, k, &one, l->A, lda, l->B, ldb, &zero, l->C, m);
    else cublasSgemm(l->h, oa, ob, m, n, k, &fone, l->A, lda, l->B, ldb, &fzero, l->C, m);
}

/* best of reps launches after a warm-up, in milliseconds (CUDA events) */
static double best_ms(const launch_t *l, int reps)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best = 1e30f;
    for (int r = 0; r <= reps; r++) { /* r == 0: warm-up */
        cudaEventRecord(e0, NULL);
        launch(l);
        cudaEventRecord(e1, NULL);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r > 0 && ms < best) best = ms;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return best;
}

static double tflops(int m, int n, int k, double ms) { return 2.0 * m * n * (double)k / (ms * 1e-3) / 1e12; }

static void bench(void)
{
    static const shape_t bs[] = {{8192, 8192, 8192}, {4096, 16384, 16384}};
    struct cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return;
    printf("\nbench on %s: best of 5 (after a warm-up), column-major, beta 0, TFLOP/s\n", p.name);
    /* OOC_KERNEL_BENCH_VARIANT=v: that variant only (for a profiler);
     * OOC_KERNEL_BENCH_TYPE=d or s: one precision */
    const char *ev = getenv("OOC_KERNEL_BENCH_VARIANT"), *et = getenv("OOC_KERNEL_BENCH_TYPE");
    int only = ev && *ev ? atoi(ev) : -1;
    for (int dbl = 1; dbl >= 0; dbl--)
        for (int s = 0; s < 2; s++) {
            if (et && *et && (*et == 'd') != dbl) continue;
            int m = bs[s].m, n = bs[s].n, k = bs[s].k;
            size_t es = dbl ? 8 : 4;
            void *A = NULL, *B = NULL, *C = NULL, *C2 = NULL;
            if (cudaMalloc(&A, es * m * (size_t)k) || cudaMalloc(&B, es * k * (size_t)n) ||
                cudaMalloc(&C, es * m * (size_t)n) || cudaMalloc(&C2, es * m * (size_t)n)) {
                printf("bench: out of device memory\n");
                break;
            }
            /* byte pattern 0x3f: 0.75f in single, ~4.8e-4 in double: values do not change the speed */
            cudaMemset(A, 0x3f, es * m * (size_t)k);
            cudaMemset(B, 0x3f, es * k * (size_t)n);
            int nv = dbl ? OOC_KERNEL_DGEMM_VARIANTS : OOC_KERNEL_SGEMM_VARIANTS;
            for (int op = 0; op < 4; op++) { /* NN: every variant; TN, NT, TT: the default */
            int ta = op & 1, tb = op >> 1;
            launch_t l = {0, dbl, 0, ta, tb, m, n, k, h, A, B, C2};
            double theirs = tflops(m, n, k, best_ms(&l, 5));
            for (int v = op ? 0 : nv - 1; v >= 0; v--) { /* variant 0 last: its C is spot-checked */
            if (only >= 0 && v != only) continue;
            launch_t lo = {1, dbl, v, ta, tb, m, n, k, h, A, B, C};
            double ours = tflops(m, n, k, best_ms(&lo, 5));
            /* spot check: ours equals cuBLAS on the first 4096 elements */
            double worst = 0;
            size_t cnt = 4096;
            void *h1 = malloc(cnt * es), *h2 = malloc(cnt * es);
            cudaMemcpy(h1, C, cnt * es, cudaMemcpyDeviceToHost);
            cudaMemcpy(h2, C2, cnt * es, cudaMemcpyDeviceToHost);
            for (size_t i = 0; i < cnt; i++) {
                double a = dbl ? ((double *)h1)[i] : ((float *)h1)[i];
                double b = dbl ? ((double *)h2)[i] : ((float *)h2)[i];
                double r = fabs(a - b) / fabs(b);
                if (!(r <= worst)) worst = r;
            }
            free(h1);
            free(h2);
            printf("%cgemm %c%c %dx%dx%d variant %d: ours %.2f, cuBLAS %.2f, ratio %.3f (max rel diff %.2g)\n",
                   dbl ? 'd' : 's', ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, v, ours, theirs, ours / theirs, worst);
            }
            }
            if (only <= 0) { /* the transpose helper on A (m x k), for the docs' comparison with T kernels */
                launch_t lt = {2, dbl, 0, 0, 0, m, n, k, h, A, B, C};
                double best = best_ms(&lt, 5);
                printf("%ctranspose %dx%d: %.3f ms, %.0f GB/s (read + write)\n", dbl ? 'd' : 's', m, k, best,
                       2.0 * es * m * (double)k / (best * 1e-3) / 1e9);
            }
            cudaFree(A);
            cudaFree(B);
            cudaFree(C);
            cudaFree(C2);
        }
    cublasDestroy(h);
}

int main(void)
{
    if (ooc_kernel_device_count() < 1) {
        printf("no CUDA device: skipping\n");
        return 77;
    }
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("kernels", NULL, NULL);
    CU_add_test(s, "dgemm launcher against OpenBLAS", test_dgemm);
    CU_add_test(s, "sgemm launcher against OpenBLAS", test_sgemm);
    CU_add_test(s, "custom backend gemm op, both layouts", test_backend_custom);
    CU_add_test(s, "custom backend, DGEMM operands transposed on the device", test_backend_custom_transposed);
    CU_add_test(s, "scale helper against the host", test_scale);
    CU_add_test(s, "transpose helper, exact", test_transpose);
    const char *b = getenv("OOC_KERNEL_BENCH");
    if (b && strcmp(b, "only") == 0) { /* the bench without the tests */
        bench();
        CU_cleanup_registry();
        return 0;
    }
    int rc = tu_run();
    if (rc == 0 && b && *b == '1') bench();
    return rc;
}
