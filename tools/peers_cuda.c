/* SPDX-License-Identifier: MIT */
/*
 * peers_cuda.c: the methods `oocgemm bench` times beside libooc_gemm (see
 * peers.h): the serial loop, cublasXt and in-core cuBLAS, and the pinned copy
 * bandwidth of several GPUs at once, in plain C over the CUDA runtime, cuBLAS
 * and cublasXt.
 *
 * Every problem is first put in column-major form: a row-major C = op(A) op(B)
 * is the column-major C^T = op(B)^T op(A)^T with the same ops (A stored
 * row-major is A^T stored column-major), so the roles of A and B swap and
 * the row blocks of op(A) become column blocks of the swapped op(B). Nothing
 * here prints or exits; failures come back as PEER_FAILED with a message
 * naming the call.
 */
#include "config.h"

#ifdef HAVE_CUDA

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublasXt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "peers.h"

struct peer_ctx_s {
    int device, tf32;                /* device: the first of devices[] */
    int devices[OOC_MAX_DEVICES], ndevices;
    cublasHandle_t blas;
    cublasXtHandle_t xt; /* made at the first peer_cublasxt() */
    int xt_default_dim;  /* what cublasXtGetBlockDim said on the fresh handle */
    int xt_dim;          /* the block dim set now */
    int xt_pinning;      /* the pinning mode set now */
};

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

static int cuda_fail(char *msg, size_t len, const char *call, cudaError_t e)
{
    snprintf(msg, len, "%s: %s (%s)", call, cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError(); /* clear a sticky-free error so later calls can run */
    return PEER_FAILED;
}

static int blas_fail(char *msg, size_t len, const char *call, cublasStatus_t s)
{
    snprintf(msg, len, "%s: %s", call, cublasGetStatusName(s));
    return PEER_FAILED;
}

/* In functions with `int rc`, `char *msg, size_t len` and an `out:` label. */
#define CU(name, expr)                                                                                 \
    do {                                                                                               \
        cudaError_t e_ = (expr);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            rc = cuda_fail(msg, len, name, e_);                                                        \
            goto out;                                                                                  \
        }                                                                                              \
    } while (0)
#define CB(name, expr)                                                                                 \
    do {                                                                                               \
        cublasStatus_t s_ = (expr);                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
            rc = blas_fail(msg, len, name, s_);                                                        \
            goto out;                                                                                  \
        }                                                                                              \
    } while (0)

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------------ */
/* The problem in column-major form                                          */

static size_t elem_size(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return 4;
    case OOC_R64: return 8;
    case OOC_C32: return 8;
    case OOC_C64: return 16;
    }
    return 0;
}

static cublasOperation_t blas_op(ooc_op_t op)
{
    return op == OOC_OP_N ? CUBLAS_OP_N : op == OOC_OP_T ? CUBLAS_OP_T : CUBLAS_OP_C;
}

/* Is the scalar at p (one element of t) zero? */
static int scalar_zero(ooc_dtype_t t, const void *p)
{
    switch (t) {
    case OOC_R32: return ((const float *)p)[0] == 0.0f;
    case OOC_R64: return ((const double *)p)[0] == 0.0;
    case OOC_C32: return ((const float *)p)[0] == 0.0f && ((const float *)p)[1] == 0.0f;
    case OOC_C64: return ((const double *)p)[0] == 0.0 && ((const double *)p)[1] == 0.0;
    }
    return 0;
}

/* C (m x n, ldc) = op(A) (m x k) op(B) (k x n), all stored column-major. */
typedef struct {
    cublasOperation_t oa, ob;
    int64_t m, n, k;
    const char *A, *B;
    char *C;
    int64_t lda, ldb, ldc;
    int64_t ar, ac, br, bc; /* stored rows and columns of A and B */
    int swapped;            /* row-major given: the caller's op(A) rows are columns of this C */
} cm_t;

static void to_colmajor(const peer_gemm_t *g, cm_t *p)
{
    memset(p, 0, sizeof *p);
    if (g->layout == OOC_COL_MAJOR) {
        p->oa = blas_op(g->ta), p->ob = blas_op(g->tb);
        p->m = g->m, p->n = g->n;
        p->A = g->A, p->lda = g->lda, p->B = g->B, p->ldb = g->ldb;
    } else { /* C^T = op(B)^T op(A)^T */
        p->oa = blas_op(g->tb), p->ob = blas_op(g->ta);
        p->m = g->n, p->n = g->m;
        p->A = g->B, p->lda = g->ldb, p->B = g->A, p->ldb = g->lda;
        p->swapped = 1;
    }
    p->k = g->k;
    p->C = g->C, p->ldc = g->ldc;
    p->ar = p->oa == CUBLAS_OP_N ? p->m : p->k;
    p->ac = p->oa == CUBLAS_OP_N ? p->k : p->m;
    p->br = p->ob == CUBLAS_OP_N ? p->k : p->n;
    p->bc = p->ob == CUBLAS_OP_N ? p->n : p->k;
}

/* Leading dimension in compact device memory of a slice of cnt along dim
 * (0: stored rows, 1: stored columns) of a matrix of `rows` stored rows. */
static int64_t slice_ld(int dim, int64_t rows, int64_t cnt) { return dim == 0 ? cnt : rows; }

/* Copy the slice [i0, i0+cnt) along dim (0: stored rows, 1: stored columns)
 * of the column-major host matrix X (rows x cols, ld) to (to_dev) or from
 * compact device memory dev, with one synchronous cudaMemcpy2D. */
static cudaError_t slice_copy(void *dev, const void *host, int to_dev, int64_t rows, int64_t cols, int64_t ld,
                              int dim, int64_t i0, int64_t cnt, size_t e)
{
    const char *hp;
    size_t w, h;
    if (dim == 0) {
        hp = (const char *)host + (size_t)i0 * e;
        w = (size_t)cnt * e;
        h = (size_t)cols;
    } else {
        hp = (const char *)host + (size_t)i0 * (size_t)ld * e;
        w = (size_t)rows * e;
        h = (size_t)cnt;
    }
    size_t sp = (size_t)ld * e;
    if (to_dev) return cudaMemcpy2D(dev, w, hp, sp, w, h, cudaMemcpyHostToDevice);
    return cudaMemcpy2D((void *)hp, sp, dev, w, w, h, cudaMemcpyDeviceToHost);
}

/* alpha or beta as cuBLAS reads it, aligned as its type (cuDoubleComplex:
 * 16 bytes; the caller's may be aligned as its real part only), as
 * lib/backend_cuda.c c_gemm() passes them */
typedef union {
    float s;
    double d;
    cuComplex c;
    cuDoubleComplex z;
} scalar_t;

static scalar_t scalar_of(ooc_dtype_t t, const void *x)
{
    scalar_t v;
    memcpy(&v, x, elem_size(t));
    return v;
}

/* cuBLAS gemm of element type t on device pointers, host alpha and beta. */
static cublasStatus_t blas_gemm(cublasHandle_t h, ooc_dtype_t t, cublasOperation_t oa, cublasOperation_t ob,
                                int64_t m, int64_t n, int64_t k, const void *alpha_in, const void *A, int64_t lda,
                                const void *B, int64_t ldb, const void *beta_in, void *C, int64_t ldc)
{
    scalar_t al = scalar_of(t, alpha_in), be = scalar_of(t, beta_in);
    const void *alpha = &al, *beta = &be;
    switch (t) {
    case OOC_R32:
        return cublasSgemm(h, oa, ob, (int)m, (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
    case OOC_R64:
        return cublasDgemm(h, oa, ob, (int)m, (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
    case OOC_C32:
        return cublasCgemm(h, oa, ob, (int)m, (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
    case OOC_C64:
        return cublasZgemm(h, oa, ob, (int)m, (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

static const char *gemm_name(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return "cublasSgemm";
    case OOC_R64: return "cublasDgemm";
    case OOC_C32: return "cublasCgemm";
    case OOC_C64: return "cublasZgemm";
    }
    return "cublas?gemm";
}

/* Free device memory, to say why something does not fit. */
static int device_free(char *msg, size_t len, size_t *fr)
{
    size_t tot = 0;
    cudaError_t e = cudaMemGetInfo(fr, &tot);
    if (e != cudaSuccess) return cuda_fail(msg, len, "cudaMemGetInfo", e);
    return PEER_OK;
}

static int too_large(char *msg, size_t len, const char *what, int64_t v)
{
    snprintf(msg, len, "%s = %lld exceeds cuBLAS's int", what, (long long)v);
    return PEER_UNSUPPORTED;
}

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

int peer_open(const int *devices, int ndevices, int tf32, peer_ctx_t **out, char *msg, size_t len)
{
    int rc = PEER_OK;
    *out = NULL;
    if (ndevices < 1 || ndevices > OOC_MAX_DEVICES) {
        snprintf(msg, len, "peer_open: %d devices (1 to %d)", ndevices, OOC_MAX_DEVICES);
        return PEER_UNSUPPORTED;
    }
    peer_ctx_t *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        snprintf(msg, len, "calloc: out of host memory");
        return PEER_FAILED;
    }
    memcpy(ctx->devices, devices, (size_t)ndevices * sizeof *devices);
    ctx->ndevices = ndevices;
    ctx->device = devices[0];
    ctx->tf32 = tf32;
    CU("cudaSetDevice", cudaSetDevice(ctx->device));
    CB("cublasCreate", cublasCreate(&ctx->blas));
    if (tf32) CB("cublasSetMathMode", cublasSetMathMode(ctx->blas, CUBLAS_TF32_TENSOR_OP_MATH));
    *out = ctx;
    return PEER_OK;
out:
    peer_close(ctx);
    return rc;
}

void peer_close(peer_ctx_t *ctx)
{
    if (ctx == NULL) return;
    cudaSetDevice(ctx->device);
    if (ctx->xt) cublasXtDestroy(ctx->xt);
    if (ctx->blas) cublasDestroy(ctx->blas);
    free(ctx);
}

/* ------------------------------------------------------------------------ */
/* The serial loop                                                           */

int peer_serial(peer_ctx_t *ctx, const peer_gemm_t *g, int64_t block_rows, double *seconds, char *msg,
                size_t len)
{
    int rc = PEER_OK;
    void *dR = NULL, *dS = NULL, *dC = NULL;
    cm_t p;
    to_colmajor(g, &p);
    size_t e = elem_size(g->dtype);
    int beta0 = scalar_zero(g->dtype, g->beta);

    /* Resident R = op(B) whole and streamed S = row blocks of op(A), or, when
     * swapped, R = op(A) and S = column blocks of op(B); C in blocks along
     * the same dimension. dims: 0 stored rows, 1 stored columns. */
    int64_t total = p.swapped ? p.n : p.m;
    const char *R = p.swapped ? p.A : p.B, *S = p.swapped ? p.B : p.A;
    int64_t rr = p.swapped ? p.ar : p.br, rcols = p.swapped ? p.ac : p.bc, rld = p.swapped ? p.lda : p.ldb;
    int64_t sr = p.swapped ? p.br : p.ar, scols = p.swapped ? p.bc : p.ac, sld = p.swapped ? p.ldb : p.lda;
    int sdim = p.swapped ? (p.ob == CUBLAS_OP_N ? 1 : 0) : (p.oa == CUBLAS_OP_N ? 0 : 1);
    int cdim = p.swapped ? 1 : 0;
    int64_t br = block_rows < 1 ? 1 : block_rows > total ? total : block_rows;

    if (p.m > INT_MAX) return too_large(msg, len, "m", p.m);
    if (p.n > INT_MAX) return too_large(msg, len, "n", p.n);
    if (p.k > INT_MAX) return too_large(msg, len, "k", p.k);
    size_t r_bytes = (size_t)rr * (size_t)rcols * e;
    size_t s_bytes = (size_t)br * (size_t)p.k * e;
    size_t c_bytes = (size_t)br * (size_t)(p.swapped ? p.m : p.n) * e;
    size_t fr = 0, margin = (size_t)256 << 20;
    if ((rc = device_free(msg, len, &fr)) != PEER_OK) return rc;
    if (r_bytes + s_bytes + c_bytes + margin > fr) {
        snprintf(msg, len, "op(B) whole and one block need %.2f GB of device memory; %.2f GB free",
                 (double)(r_bytes + s_bytes + c_bytes) / 1e9, (double)fr / 1e9);
        return PEER_UNSUPPORTED;
    }

    CU("cudaSetDevice", cudaSetDevice(ctx->device));
    CB("cublasSetStream", cublasSetStream(ctx->blas, NULL));
    CU("cudaMalloc (op(B))", cudaMalloc(&dR, r_bytes ? r_bytes : 1));
    CU("cudaMalloc (block of op(A))", cudaMalloc(&dS, s_bytes ? s_bytes : 1));
    CU("cudaMalloc (block of C)", cudaMalloc(&dC, c_bytes ? c_bytes : 1));
    CU("cudaDeviceSynchronize", cudaDeviceSynchronize());

    double t0 = wall();
    CU("cudaMemcpy2D (op(B) in)", slice_copy(dR, R, 1, rr, rcols, rld, 1, 0, rcols, e));
    int64_t ldr = rr;
    for (int64_t i0 = 0; i0 < total; i0 += br) {
        int64_t cnt = total - i0 < br ? total - i0 : br;
        CU("cudaMemcpy2D (block of op(A) in)", slice_copy(dS, S, 1, sr, scols, sld, sdim, i0, cnt, e));
        int64_t lds = slice_ld(sdim, sr, cnt), ldcb = slice_ld(cdim, p.m, cnt);
        if (!beta0) CU("cudaMemcpy2D (block of C in)", slice_copy(dC, p.C, 1, p.m, p.n, p.ldc, cdim, i0, cnt, e));
        cublasStatus_t s;
        if (!p.swapped)
            s = blas_gemm(ctx->blas, g->dtype, p.oa, p.ob, cnt, p.n, p.k, g->alpha, dS, lds, dR, ldr, g->beta, dC,
                          ldcb);
        else
            s = blas_gemm(ctx->blas, g->dtype, p.oa, p.ob, p.m, cnt, p.k, g->alpha, dR, ldr, dS, lds, g->beta, dC,
                          ldcb);
        if (s != CUBLAS_STATUS_SUCCESS) {
            rc = blas_fail(msg, len, gemm_name(g->dtype), s);
            goto out;
        }
        CU("cudaMemcpy2D (block of C out)", slice_copy(dC, p.C, 0, p.m, p.n, p.ldc, cdim, i0, cnt, e));
    }
    CU("cudaDeviceSynchronize", cudaDeviceSynchronize());
    *seconds = wall() - t0;
out:
    cudaFree(dC);
    cudaFree(dS);
    cudaFree(dR);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* cublasXt                                                                  */

static int xt_ensure(peer_ctx_t *ctx, char *msg, size_t len)
{
    int rc = PEER_OK;
    if (ctx->xt) return PEER_OK;
    cublasXtPinnedMemMode_t mode = CUBLASXT_PINNING_DISABLED;
    CB("cublasXtCreate", cublasXtCreate(&ctx->xt));
    CB("cublasXtDeviceSelect", cublasXtDeviceSelect(ctx->xt, ctx->ndevices, ctx->devices));
    CB("cublasXtGetBlockDim", cublasXtGetBlockDim(ctx->xt, &ctx->xt_default_dim));
    CB("cublasXtGetPinningMemMode", cublasXtGetPinningMemMode(ctx->xt, &mode));
    ctx->xt_dim = ctx->xt_default_dim;
    ctx->xt_pinning = mode == CUBLASXT_PINNING_ENABLED;
    return PEER_OK;
out:
    if (ctx->xt) cublasXtDestroy(ctx->xt);
    ctx->xt = NULL;
    return rc;
}

int peer_cublasxt_default_dim(const peer_ctx_t *ctx) { return ctx ? ctx->xt_default_dim : 0; }

/* Wait for every device of the context; the first is current after. */
static cudaError_t sync_devices(const peer_ctx_t *ctx)
{
    for (int i = ctx->ndevices - 1; i >= 0; i--) {
        cudaError_t e = cudaSetDevice(ctx->devices[i]);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

int peer_cublasxt(peer_ctx_t *ctx, const peer_gemm_t *g, int block_dim, int pinning, double *seconds,
                  char *msg, size_t len)
{
    int rc;
    if ((rc = xt_ensure(ctx, msg, len)) != PEER_OK) return rc;
    /* block_dim 0 on a fresh handle: the default stays, SetBlockDim is not called */
    int want = block_dim > 0 ? block_dim : ctx->xt_default_dim;
    if (want != ctx->xt_dim) {
        CB("cublasXtSetBlockDim", cublasXtSetBlockDim(ctx->xt, want));
        ctx->xt_dim = want;
    }
    if (!!pinning != ctx->xt_pinning) {
        CB("cublasXtSetPinningMemMode",
           cublasXtSetPinningMemMode(ctx->xt, pinning ? CUBLASXT_PINNING_ENABLED : CUBLASXT_PINNING_DISABLED));
        ctx->xt_pinning = !!pinning;
    }
    cm_t p;
    to_colmajor(g, &p);
    size_t m = (size_t)p.m, n = (size_t)p.n, k = (size_t)p.k;
    size_t lda = (size_t)p.lda, ldb = (size_t)p.ldb, ldc = (size_t)p.ldc;
    CU("cudaDeviceSynchronize", sync_devices(ctx));
    cublasStatus_t s = CUBLAS_STATUS_INVALID_VALUE;
    const char *name = "cublasXt?gemm";
    scalar_t al = scalar_of(g->dtype, g->alpha), be = scalar_of(g->dtype, g->beta);
    double t0 = wall();
    switch (g->dtype) {
    case OOC_R32:
        name = "cublasXtSgemm";
        s = cublasXtSgemm(ctx->xt, p.oa, p.ob, m, n, k, &al.s, (const float *)p.A, lda, (const float *)p.B, ldb,
                          &be.s, (float *)p.C, ldc);
        break;
    case OOC_R64:
        name = "cublasXtDgemm";
        s = cublasXtDgemm(ctx->xt, p.oa, p.ob, m, n, k, &al.d, (const double *)p.A, lda, (const double *)p.B,
                          ldb, &be.d, (double *)p.C, ldc);
        break;
    case OOC_C32:
        name = "cublasXtCgemm";
        s = cublasXtCgemm(ctx->xt, p.oa, p.ob, m, n, k, &al.c, (const cuComplex *)p.A, lda,
                          (const cuComplex *)p.B, ldb, &be.c, (cuComplex *)p.C, ldc);
        break;
    case OOC_C64:
        name = "cublasXtZgemm";
        s = cublasXtZgemm(ctx->xt, p.oa, p.ob, m, n, k, &al.z, (const cuDoubleComplex *)p.A, lda,
                          (const cuDoubleComplex *)p.B, ldb, &be.z, (cuDoubleComplex *)p.C, ldc);
        break;
    }
    double t1 = wall();
    if (s != CUBLAS_STATUS_SUCCESS) return blas_fail(msg, len, name, s);
    CU("cudaDeviceSynchronize (after cublasXt)", sync_devices(ctx));
    *seconds = t1 - t0;
    return PEER_OK;
out:
    return rc;
}

/* ------------------------------------------------------------------------ */
/* In-core cuBLAS                                                            */

int peer_incore(peer_ctx_t *ctx, const peer_gemm_t *g, int reps, double *times, char *msg, size_t len)
{
    int rc = PEER_OK;
    void *dA = NULL, *dB = NULL, *dC = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cm_t p;
    to_colmajor(g, &p);
    size_t e = elem_size(g->dtype);
    int beta0 = scalar_zero(g->dtype, g->beta);

    if (p.m > INT_MAX) return too_large(msg, len, "m", p.m);
    if (p.n > INT_MAX) return too_large(msg, len, "n", p.n);
    if (p.k > INT_MAX) return too_large(msg, len, "k", p.k);
    size_t sa = (size_t)p.ar * (size_t)p.ac * e, sb = (size_t)p.br * (size_t)p.bc * e;
    size_t sc = (size_t)p.m * (size_t)p.n * e;
    size_t fr = 0, tot = 0;
    CU("cudaSetDevice", cudaSetDevice(ctx->device));
    CU("cudaMemGetInfo", cudaMemGetInfo(&fr, &tot));
    size_t margin = tot / 20 > ((size_t)1 << 30) ? tot / 20 : ((size_t)1 << 30);
    if (sa + sb + sc + margin > fr) {
        snprintf(msg, len, "A, B and C (%.2f GB) do not fit in device memory (%.2f GB free, %.2f GB kept back)",
                 (double)(sa + sb + sc) / 1e9, (double)fr / 1e9, (double)margin / 1e9);
        return PEER_UNSUPPORTED;
    }
    CB("cublasSetStream", cublasSetStream(ctx->blas, NULL));
    CU("cudaMalloc (A)", cudaMalloc(&dA, sa ? sa : 1));
    CU("cudaMalloc (B)", cudaMalloc(&dB, sb ? sb : 1));
    CU("cudaMalloc (C)", cudaMalloc(&dC, sc ? sc : 1));
    CU("cudaEventCreate", cudaEventCreate(&e0));
    CU("cudaEventCreate", cudaEventCreate(&e1));
    CU("cudaMemcpy2D (A in)", slice_copy(dA, p.A, 1, p.ar, p.ac, p.lda, 1, 0, p.ac, e));
    CU("cudaMemcpy2D (B in)", slice_copy(dB, p.B, 1, p.br, p.bc, p.ldb, 1, 0, p.bc, e));
    for (int rep = 0; rep <= reps; rep++) { /* rep 0 warms up */
        if (!beta0) CU("cudaMemcpy2D (C in)", slice_copy(dC, p.C, 1, p.m, p.n, p.ldc, 1, 0, p.n, e));
        CU("cudaEventRecord", cudaEventRecord(e0, NULL));
        cublasStatus_t s = blas_gemm(ctx->blas, g->dtype, p.oa, p.ob, p.m, p.n, p.k, g->alpha, dA, p.ar, dB, p.br,
                                     g->beta, dC, p.m);
        if (s != CUBLAS_STATUS_SUCCESS) {
            rc = blas_fail(msg, len, gemm_name(g->dtype), s);
            goto out;
        }
        CU("cudaEventRecord", cudaEventRecord(e1, NULL));
        CU("cudaEventSynchronize", cudaEventSynchronize(e1));
        float ms = 0;
        CU("cudaEventElapsedTime", cudaEventElapsedTime(&ms, e0, e1));
        if (rep > 0) times[rep - 1] = (double)ms / 1e3;
    }
    CU("cudaMemcpy2D (C out)", slice_copy(dC, p.C, 0, p.m, p.n, p.ldc, 1, 0, p.n, e));
out:
    if (e1) cudaEventDestroy(e1);
    if (e0) cudaEventDestroy(e0);
    cudaFree(dC);
    cudaFree(dB);
    cudaFree(dA);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The pinned copy bandwidth of several GPUs at once                         */

/* One GPU's buffers and streams of peer_bandwidth(). */
typedef struct {
    void *host_in, *host_out, *dev_in, *dev_out;
    cudaStream_t in, out;
} bw_gpu_t;

int peer_bandwidth(const int *devices, int ndevices, size_t bytes, int reps, double *h2d, double *d2h, double *both,
                   char *msg, size_t len)
{
    int rc = PEER_OK, n = ndevices;
    bw_gpu_t g[OOC_MAX_DEVICES];
    double best[3] = {0, 0, 0}; /* H2D, D2H, both at once */
    if (n < 1 || n > OOC_MAX_DEVICES || bytes == 0 || reps < 1) {
        snprintf(msg, len, "peer_bandwidth: %d devices, %zu bytes, %d repeats", n, bytes, reps);
        return PEER_UNSUPPORTED;
    }
    memset(g, 0, sizeof g);
    for (int i = 0; i < n; i++) {
        CU("cudaSetDevice", cudaSetDevice(devices[i]));
        CU("cudaMallocHost (copy source)", cudaMallocHost(&g[i].host_in, bytes));
        CU("cudaMallocHost (copy target)", cudaMallocHost(&g[i].host_out, bytes));
        CU("cudaMalloc (copy target)", cudaMalloc(&g[i].dev_in, bytes));
        CU("cudaMalloc (copy source)", cudaMalloc(&g[i].dev_out, bytes));
        CU("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&g[i].in, cudaStreamNonBlocking));
        CU("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&g[i].out, cudaStreamNonBlocking));
    }
    for (int rep = 0; rep < reps; rep++)
        for (int mode = 0; mode < 3; mode++) {
            double t0 = wall();
            for (int i = 0; i < n; i++) { /* every copy queued before any is waited for */
                CU("cudaSetDevice", cudaSetDevice(devices[i]));
                if (mode != 1)
                    CU("cudaMemcpyAsync (H2D)",
                       cudaMemcpyAsync(g[i].dev_in, g[i].host_in, bytes, cudaMemcpyHostToDevice, g[i].in));
                if (mode != 0)
                    CU("cudaMemcpyAsync (D2H)",
                       cudaMemcpyAsync(g[i].host_out, g[i].dev_out, bytes, cudaMemcpyDeviceToHost, g[i].out));
            }
            for (int i = 0; i < n; i++) {
                CU("cudaStreamSynchronize", cudaStreamSynchronize(g[i].in));
                CU("cudaStreamSynchronize", cudaStreamSynchronize(g[i].out));
            }
            double dt = wall() - t0, moved = (double)bytes * n * (mode == 2 ? 2 : 1);
            if (dt > 0 && moved / dt > best[mode]) best[mode] = moved / dt;
        }
    *h2d = best[0];
    *d2h = best[1];
    *both = best[2];
out:
    for (int i = n - 1; i >= 0; i--) {
        if (cudaSetDevice(devices[i]) != cudaSuccess) continue;
        if (g[i].out) cudaStreamDestroy(g[i].out);
        if (g[i].in) cudaStreamDestroy(g[i].in);
        cudaFree(g[i].dev_out);
        cudaFree(g[i].dev_in);
        cudaFreeHost(g[i].host_out);
        cudaFreeHost(g[i].host_in);
    }
    return rc;
}

#endif /* HAVE_CUDA */
