// SPDX-License-Identifier: MIT
//
// gemm_probe.cu: a measurement program, not part of the library. It measures
// cuBLAS's rate against the shape of the multiplies the pipeline issues
// (docs/PERFORMANCE.md, "Issue 13, session 11"): S1's row blocks, the
// k-pieces of a panel's blocks (S1 with a 1 GiB budget: 3168 x 5462 x 1024,
// beta 1) against the whole panel in one call, TF32 and tall blocks. Random
// operands on the device (floats for TF32), best of a few runs after 20
// warm-up multiplies.
//
// Build: nvcc -O2 -arch=sm_90 -o gemm_probe kernels/gemm_probe.cu -lcublas
// Run:   ./gemm_probe   (needs ~24 GiB of device memory; ~10 s on an H200)
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
// random values in [-0.5, 0.5) with 24 bits (exact in float and double)
template <class T> __global__ void fill_random(T *p, size_t n, unsigned s)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)(i * 2654435761u) ^ s;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (T)(x & 0xffffff) / (T)16777216.0 - (T)0.5;
    }
}
static cublasHandle_t h;
static double *dA, *dB, *dC;
static cudaEvent_t e0, e1;
static double rate(int tf32, int m, int n, int k, double beta, int reps)
{
    double one = 1.0;
    float onef = 1.0f, bf = (float)beta;
    float best = 1e30f;
    for (int r = 0; r <= reps; r++) {
        CK(cudaEventRecord(e0));
        if (tf32)
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &onef, (float *)dA, m, (float *)dB, k, &bf, (float *)dC,
                        m);
        else
            cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &beta, dC, m);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0 && ms < best)
            best = ms;
    }
    return 2.0 * m * (double)n * k / (best * 1e-3) / 1e12;
}
int main(void)
{
    size_t big = (size_t)1 << 30; // doubles: 8 GiB each
    CK(cudaMalloc(&dA, big * 8));
    CK(cudaMalloc(&dB, big * 8));
    CK(cudaMalloc(&dC, big * 8));
    fill_random<double><<<1024, 256>>>(dA, big, 1);
    fill_random<double><<<1024, 256>>>(dB, big, 2);
    fill_random<double><<<1024, 256>>>(dC, big, 3);
    CK(cudaDeviceSynchronize());
    cublasCreate(&h);
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    // warm the clocks
    for (int i = 0; i < 20; i++)
        rate(0, 8192, 8192, 8192, 0, 1);
    printf("# DGEMM S1 blocks (n = k = 16384), beta 0, TFLOP/s, best of 3\n");
    int s1[] = {2048, 3072, 3968, 4096, 4224, 5120, 6144, 8192, 8448, 65536};
    for (int i = 0; i < 10; i++)
        printf("mb %6d: %.1f\n", s1[i], rate(0, s1[i], 16384, 16384, 0, 3));
    printf("# DGEMM panel pieces: mb x nb x kp, beta 1\n");
    int mbs[] = {3072, 3168, 3200, 3328, 3456, 3584, 4096};
    int nbs[] = {5460, 5462, 5504, 5632};
    int kps[] = {1024, 2048};
    for (int a = 0; a < 2; a++)
        for (int j = 0; j < 4; j++) {
            printf("kp %d nb %d:", kps[a], nbs[j]);
            for (int i = 0; i < 7; i++)
                printf("  mb %d %.1f", mbs[i], rate(0, mbs[i], nbs[j], kps[a], 1.0, 5));
            printf("\n");
        }
    printf("# the whole panel multiply, as one call: 65536 x 5462 x 16384: %.1f\n", rate(0, 65536, 5462, 16384, 0, 2));
    printf("# TF32 SGEMM blocks (n = k = 16384)\n");
    // the same buffers as floats (read as doubles' halves they would be mostly zeros)
    fill_random<float><<<1024, 256>>>((float *)dA, 2 * big, 4);
    fill_random<float><<<1024, 256>>>((float *)dB, 2 * big, 5);
    CK(cudaDeviceSynchronize());
    cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
    int t[] = {2048, 4096, 8192, 8448, 16384};
    for (int i = 0; i < 5; i++)
        printf("mb %6d: %.1f\n", t[i], rate(1, t[i], 16384, 16384, 0, 3));
    printf("mb 8192, kp 8192 beta 1: %.1f\n", rate(1, 8192, 16384, 8192, 1, 3));
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    fill_random<double><<<1024, 256>>>(dA, big, 1);
    fill_random<double><<<1024, 256>>>(dB, big, 2);
    CK(cudaDeviceSynchronize());
    printf("# tall blocks DGEMM (n = k = 4096)\n");
    int tb[] = {4096, 8192, 8448, 16384};
    for (int i = 0; i < 4; i++)
        printf("mb %6d: %.1f\n", tb[i], rate(0, tb[i], 4096, 4096, 0, 5));
    printf("mb 8192 kp 2048 beta 1: %.1f\n", rate(0, 8192, 4096, 2048, 1, 5));
    return 0;
}
