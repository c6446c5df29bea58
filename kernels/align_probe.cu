// SPDX-License-Identifier: MIT
//
// align_probe.cu: a measurement program, not part of the library. It measures
// cuBLAS's rate against the alignment of a multiply (docs/PERFORMANCE.md,
// session 39): m, n or k one short of a multiple of 4; leading dimensions
// of 8192 + d; the pipeline's tiles of odd sizes with the leading
// dimensions exact, rounded up to 4 or 32 elements, whole or split into a
// bulk of m and k multiples of 4 (FP64: 2) and calls for the rest (as
// lib/backend_cuda.c c_gemm does for TF32). Random operands on the device,
// best of 3 after one warm-up run, TF32 (FP32 with CUBLAS_COMPUTE_32F_FAST_TF32),
// FP32, FP64 and complex128.
//
// Build: nvcc -O2 -arch=sm_90 -o align_probe kernels/align_probe.cu -lcublas
// Run:   ./align_probe   (needs ~36 GiB of device memory; ~20 s on an H200)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                                   \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)
__global__ void fill(float *p, size_t n, unsigned s)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)(i * 2654435761u) ^ s; x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        p[i] = (float)(x & 0xffff) / 65536.0f - 0.5f; // (as float bits of doubles too: values don't matter much)
    }
}
static cublasHandle_t h;
static char *dA, *dB, *dC;
static cudaEvent_t e0, e1;
static long rup(long x, long a) { return (x + a - 1) / a * a; }
// kind: 0 tf32, 1 fp32, 2 fp64, 3 z
static double run(int kind, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int pad, int off)
{
    long es = kind == 2 ? 8 : kind == 3 ? 16 : 4;
    long ar = ta == CUBLAS_OP_N ? m : k, br = tb == CUBLAS_OP_N ? k : n;
    long lda = pad ? rup(ar, 32) : ar, ldb = pad ? rup(br, 32) : br, ldc = pad ? rup(m, 32) : m;
    const void *A = dA, *B = dB + (off ? es : 0);
    void *C = dC;
    cudaDataType_t t = kind == 2 ? CUDA_R_64F : kind == 3 ? CUDA_C_64F : CUDA_R_32F;
    cublasComputeType_t ct = kind == 0 ? CUBLAS_COMPUTE_32F_FAST_TF32 : kind == 1 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
    double one[2] = {1, 0}, zero[2] = {0, 0}; float onef = 1, zerof = 0;
    const void *al = kind >= 2 ? (const void *)one : (const void *)&onef, *be = kind >= 2 ? (const void *)zero : (const void *)&zerof;
    float best = 1e30f;
    for (int r = 0; r < 4; r++) {
        CK(cudaEventRecord(e0));
        cublasStatus_t st = cublasGemmEx(h, ta, tb, m, n, k, al, A, t, lda, B, t, ldb, be, C, t, ldc, ct, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS) { printf("gemm status %d\n", (int)st); return 0; }
        CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0 && ms < best) best = ms;
    }
    return (kind == 3 ? 8.0 : 2.0) * m * (double)n * k / (best * 1e-3) / 1e12;
}

static double gem(int kind, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, long lda, long ldb, long ldc, int split)
{
    long es = kind == 2 ? 8 : kind == 3 ? 16 : 4;
    cudaDataType_t t = kind == 2 ? CUDA_R_64F : kind == 3 ? CUDA_C_64F : CUDA_R_32F;
    cublasComputeType_t ct = kind == 0 ? CUBLAS_COMPUTE_32F_FAST_TF32 : kind == 1 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
    double one[2] = {1, 0}, zero[2] = {0, 0}; float onef = 1, zerof = 0;
    const void *al = kind >= 2 ? (const void *)one : (const void *)&onef, *be = kind >= 2 ? (const void *)zero : (const void *)&zerof;
    int P = kind == 0 || kind == 1 ? 4 : kind == 2 ? 2 : 1;
    float best = 1e30f;
    for (int r = 0; r < 4; r++) {
        CK(cudaEventRecord(e0));
        if (!split) {
            cublasGemmEx(h, ta, tb, m, n, k, al, dA, t, lda, dB, t, ldb, be, dC, t, ldc, ct, CUBLAS_GEMM_DEFAULT);
        } else {
            int mm = m - m % P, km = k - k % P;
            /* main: mm x n x km; then k remainder over all m; then m remainder rows over km */
            cublasGemmEx(h, ta, tb, mm, n, km, al, dA, t, lda, dB, t, ldb, be, dC, t, ldc, ct, CUBLAS_GEMM_DEFAULT);
            if (m % P) cublasGemmEx(h, ta, tb, m % P, n, km, al, dA + (ta == CUBLAS_OP_N ? mm * es : mm * lda * es), t, lda, dB, t, ldb, be, dC + mm * es, t, ldc, ct, CUBLAS_GEMM_DEFAULT);
            if (k % P) cublasGemmEx(h, ta, tb, m, n, k % P, al, dA + (ta == CUBLAS_OP_N ? km * lda * es : km * es), t, lda, dB + (tb == CUBLAS_OP_N ? km * es : km * ldb * es), t, ldb, al, dC, t, ldc, ct, CUBLAS_GEMM_DEFAULT);
        }
        CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0 && ms < best) best = ms;
    }
    return (kind == 3 ? 8.0 : 2.0) * m * (double)n * k / (best * 1e-3) / 1e12;
}
static void cmp(const char *name, int kind, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k)
{
    double a = run(kind, ta, tb, m, n, k, 0, 0), b = run(kind, ta, tb, m, n, k, 1, 0), c = run(kind, ta, tb, m, n, k, 1, 1);
    printf("%-34s %c%c %6d x %6d x %6d: exact ld %6.1f  padded %6.1f (x%.2f)  padded, B off 1 elem %6.1f TFLOP/s\n", name,
           ta == CUBLAS_OP_N ? 'N' : 'T', tb == CUBLAS_OP_N ? 'N' : 'T', m, n, k, a, b, b / a, c);
}
int main(void)
{
    size_t big = (size_t)3 << 30; // 12 GiB each
    CK(cudaMalloc(&dA, big)); CK(cudaMalloc(&dB, big)); CK(cudaMalloc(&dC, big));
    fill<<<1024, 256>>>((float *)dA, big / 4, 1); fill<<<1024, 256>>>((float *)dB, big / 4, 2); fill<<<1024, 256>>>((float *)dC, big / 4, 3);
    CK(cudaDeviceSynchronize());
    cublasCreate(&h); CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (int i = 0; i < 10; i++) run(2, CUBLAS_OP_N, CUBLAS_OP_N, 8192, 8192, 8192, 1, 0);
    cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T;
    /* 0. the pipeline's tiles of some odd shapes: leading dimensions exact, padded to 32, and B one element off */
    cmp("tf32 follow piece (27593 shape)", 0, N, N, 4221, 27593, 8337);
    cmp("tf32 follow piece", 0, T, N, 4221, 27593, 8337);
    cmp("tf32 follow piece", 0, N, T, 4221, 27593, 8337);
    cmp("tf32 usual block", 0, N, N, 768, 27593, 33345);
    cmp("tf32 usual block", 0, T, N, 768, 27593, 33345);
    cmp("tf32 aligned (suite tf32 block)", 0, N, N, 8192, 16384, 16384);
    cmp("tf32 odd", 0, N, N, 4097, 8191, 12289);
    cmp("fp32 follow piece", 1, N, N, 4221, 27593, 8337);
    cmp("fp32 block s2519 shape", 1, N, N, 768, 2519, 49745);
    cmp("fp64 block d57011x755x9013", 2, N, N, 7104, 755, 9013);
    cmp("fp64 block d57011x755x9013", 2, T, N, 7104, 755, 9013);
    cmp("fp64 odd", 2, N, N, 4097, 8191, 12289);
    cmp("fp64 aligned (S1 block)", 2, N, N, 4096, 16384, 16384);
    cmp("z odd", 3, N, N, 2049, 4095, 6145);
    const char *kn[] = {"tf32", "fp32", "fp64", "z"};
    /* 1. which dimension: m, n or k one short of a multiple (ld padded to 32), NN and TN */
    int d[] = {8192, 8191, 8190, 8188, 8184, 8176};
    for (int kind = 0; kind < 4; kind++) {
        int base = kind == 3 ? 4096 : 8192;
        for (int which = 0; which < 3; which++) {
            printf("%s %c varies (others %d, ld padded to 32):", kn[kind], "mnk"[which], base);
            for (int v = 0; v < 6; v++) {
                int x = d[v] - (8192 - base);
                int m = which == 0 ? x : base, n = which == 1 ? x : base, k = which == 2 ? x : base;
                printf("  %d: %.0f", x, run(kind, N, N, m, n, k, 1, 0));
            }
            printf("\n");
        }
        printf("%s TN k varies:", kn[kind]);
        for (int v = 0; v < 6; v++) {
            int x = d[v] - (kind == 3 ? 4096 : 0);
            printf("  %d: %.0f", x, run(kind, T, N, base, base, x, 1, 0));
        }
        printf("\n");
        fflush(stdout);
    }
    /* 2. the leading dimensions alone; 3. the pipeline's tiles: ld exact, to 4, to 32, whole or split */
    for (int kind = 0; kind <= 2; kind += 2) {
        printf("%s 8192^3 NN, all ld = 8192 + d:", kn[kind]);
        int dd[] = {0, 1, 2, 3, 4, 8, 32};
        for (int v = 0; v < 7; v++) printf("  +%d: %.0f", dd[v], gem(kind, N, N, 8192, 8192, 8192, 8192 + dd[v], 8192 + dd[v], 8192 + dd[v], 0));
        printf("\n");
        printf("%s 8192^3 TN, all ld = 8192 + d:", kn[kind]);
        for (int v = 0; v < 7; v++) printf("  +%d: %.0f", dd[v], gem(kind, T, N, 8192, 8192, 8192, 8192 + dd[v], 8192 + dd[v], 8192 + dd[v], 0));
        printf("\n");
        fflush(stdout);
    }
    /* the usual TF32 block: 768 x 27593 x 33345 NN (ld: exact, padded to 4, to 32), unsplit and split */
    for (int kind = 0; kind <= 2; kind += 2) {
        int sh[][3] = {{768, 27593, 33345}, {27593, 768, 33345}, {4221, 27593, 8337}, {4097, 8191, 12289}, {7104, 755, 9013}};
        for (int c = 0; c < 5; c++) {
            int m = sh[c][0], n = sh[c][1], k = sh[c][2];
            if (kind == 2 && c < 2) continue;
            for (int tr = 0; tr < 2; tr++) {
                cublasOperation_t ta = tr ? T : N;
                long ar = tr ? k : m;
                printf("%s %c%c %5d x %5d x %5d:", kn[kind], tr ? 'T' : 'N', 'N', m, n, k);
                long pads[] = {1, 4, 32};
                for (int p = 0; p < 3; p++) {
                    long P = pads[p];
                    long lda = rup(ar, P), ldb = rup(k, P), ldc = rup(m, P);
                    printf("  ld%%%ld: %.0f split %.0f", P, gem(kind, ta, N, m, n, k, lda, ldb, ldc, 0), gem(kind, ta, N, m, n, k, lda, ldb, ldc, 1));
                }
                printf("\n");
                fflush(stdout);
            }
        }
    }
    return 0;
}
