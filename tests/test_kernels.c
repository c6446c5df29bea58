/* SPDX-License-Identifier: MIT */
/*
 * test_kernels.c: the CUnit suite of our own CUDA kernels (kernels/): the
 * DGEMM and SGEMM launchers against OpenBLAS on random data at odd sizes,
 * all four op combinations, alpha/beta (beta == 0 with NaN in C), padded
 * leading dimensions; and the `custom` backend's gemm op (row-major too).
 * Exits 77 (skip) without a GPU. With OOC_KERNEL_BENCH=1 it also times our
 * kernels beside cuBLAS in core (CUDA events) and prints TFLOP/s; the bench
 * is never part of make check.
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
#include "testutil.h"

typedef struct {
    int m, n, k;
} shape_t;

static const shape_t shapes[] = {
    {1, 1, 1},     {7, 7, 7},       {33, 17, 9},     {127, 129, 257}, {129, 127, 33},
    {257, 33, 129}, {64, 64, 16},   {65, 63, 17},    {5, 3, 0},       {1000, 777, 555},
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
    if (e == (int)cudaErrorNotSupported && variant != 0) { /* an sm_90-only variant in an older-arch build */
        bad = 0;
        goto done;
    }
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

/* The custom backend's gemm op: both layouts, all ops (C is T on reals). */
static void test_backend_custom(void)
{
    ooc_err_t err = {0};
    ooc_be_t *be = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_backend_custom_ops.open(&be, 0, OOC_MATH_STRICT, &err), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(be->ops->name, "custom");
    uint64_t seed = 7;
    const int m = 131, n = 67, k = 45;
    static const ooc_op_t ops[] = {OOC_OP_N, OOC_OP_T, OOC_OP_C};
    for (int dt = 0; dt < 2; dt++) {
        ooc_dtype_t t = dt ? OOC_R32 : OOC_R64;
        size_t es = tu_elem(t);
        for (int lay = 0; lay < 2; lay++) {
            ooc_layout_t L = lay ? OOC_ROW_MAJOR : OOC_COL_MAJOR;
            for (int ia = 0; ia < 3; ia++)
                for (int ib = 0; ib < 3; ib++) {
                    ooc_op_t ta = ops[ia], tb = ops[ib];
                    /* stored rows/lines of op(X) in layout L: the ld counts elements of a line */
                    int ca = (L == OOC_COL_MAJOR) == (ta == OOC_OP_N) ? m : k;
                    int cb = (L == OOC_COL_MAJOR) == (tb == OOC_OP_N) ? k : n;
                    int lda = ca + 2, ldb = cb + 1, ldc = (L == OOC_COL_MAJOR ? m : n) + 3;
                    size_t na = tu_stored(L, ta, m, k, lda), nb = tu_stored(L, tb, k, n, ldb);
                    size_t nc = (size_t)ldc * (L == OOC_COL_MAJOR ? n : m);
                    void *A = malloc(na * es), *B = malloc(nb * es), *C0 = malloc(nc * es), *C = malloc(nc * es);
                    void *dA = NULL, *dB = NULL, *dC = NULL;
                    CU_ASSERT_FATAL(A && B && C0 && C);
                    tu_fill(t, A, na, &seed);
                    tu_fill(t, B, nb, &seed);
                    tu_fill(t, C0, nc, &seed);
                    CU_ASSERT_EQUAL(be->ops->dev_alloc(be, na * es, &dA, &err), OOC_SUCCESS);
                    CU_ASSERT_EQUAL(be->ops->dev_alloc(be, nb * es, &dB, &err), OOC_SUCCESS);
                    CU_ASSERT_EQUAL(be->ops->dev_alloc(be, nc * es, &dC, &err), OOC_SUCCESS);
                    cudaMemcpy(dA, A, na * es, cudaMemcpyHostToDevice);
                    cudaMemcpy(dB, B, nb * es, cudaMemcpyHostToDevice);
                    cudaMemcpy(dC, C0, nc * es, cudaMemcpyHostToDevice);
                    double al = 1.5, bt = -0.25;
                    float fal = 1.5f, fbt = -0.25f;
                    const void *pa = t == OOC_R64 ? (const void *)&al : (const void *)&fal;
                    const void *pb = t == OOC_R64 ? (const void *)&bt : (const void *)&fbt;
                    ooc_tile_gemm_t g = {t, L, ta, tb, m, n, k, pa, pb, dA, dB, dC, lda, ldb, ldc};
                    CU_ASSERT_EQUAL(be->ops->gemm(be, NULL, &g, &err), OOC_SUCCESS);
                    CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
                    cudaMemcpy(C, dC, nc * es, cudaMemcpyDeviceToHost);
                    double worst = 0;
                    int64_t bad = tu_check(t, L, ta, tb, m, n, k, pa, A, lda, B, ldb, pb, C0, C, ldc, &worst);
                    if (bad) printf("\n  backend custom dt=%d layout=%d ta=%d tb=%d: %lld bad\n", dt, lay, ta, tb, (long long)bad);
                    CU_ASSERT_EQUAL(bad, 0);
                    be->ops->dev_free(be, dA);
                    be->ops->dev_free(be, dB);
                    be->ops->dev_free(be, dC);
                    free(A);
                    free(B);
                    free(C0);
                    free(C);
                }
        }
    }
    be->ops->close(be);
}

/* ---- in-core benchmark (OOC_KERNEL_BENCH=1): ours beside cuBLAS ---- */
static double bench_one(int dbl, int ours, int variant, cublasHandle_t h, int m, int n, int k, void *A, void *B, void *C,
                        int reps)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double one = 1.0, zero = 0.0;
    float fone = 1.0f, fzero = 0.0f;
    float best = 1e30f;
    for (int r = 0; r <= reps; r++) { /* r == 0: warm-up */
        cudaEventRecord(e0, NULL);
        if (ours && dbl) ooc_kernel_dgemm_variant(variant, NULL, 0, 0, m, n, k, 1.0, A, m, B, k, 0.0, C, m);
        else if (ours) ooc_kernel_sgemm_variant(variant, NULL, 0, 0, m, n, k, 1.0f, A, m, B, k, 0.0f, C, m);
        else if (dbl) cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, m, B, k, &zero, C, m);
        else cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &fone, A, m, B, k, &fzero, C, m);
        cudaEventRecord(e1, NULL);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r > 0 && ms < best) best = ms;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 2.0 * m * n * (double)k / (best * 1e-3) / 1e12;
}

static void bench(void)
{
    static const shape_t bs[] = {{8192, 8192, 8192}, {4096, 16384, 16384}};
    struct cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return;
    printf("\nbench on %s: best of 3, NN, column-major, beta 0, TFLOP/s\n", p.name);
    for (int dbl = 1; dbl >= 0; dbl--)
        for (int s = 0; s < 2; s++) {
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
            double theirs = bench_one(dbl, 0, 0, h, m, n, k, A, B, C2, 3);
            int nv = dbl ? OOC_KERNEL_DGEMM_VARIANTS : OOC_KERNEL_SGEMM_VARIANTS;
            for (int v = nv - 1; v >= 0; v--) { /* variant 0 last: its C is spot-checked */
            double ours = bench_one(dbl, 1, v, h, m, n, k, A, B, C, 3);
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
            printf("%cgemm %dx%dx%d variant %d: ours %.2f, cuBLAS %.2f, ratio %.3f (max rel diff %.2g)\n",
                   dbl ? 'd' : 's', m, n, k, v, ours, theirs, ours / theirs, worst);
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
    int rc = tu_run();
    const char *b = getenv("OOC_KERNEL_BENCH");
    if (rc == 0 && b && *b == '1') bench();
    return rc;
}
