/* SPDX-License-Identifier: MIT */
/*
 * helpers.cu: the small device kernels around the tile GEMMs, behind the C
 * launchers of kernels.h:
 *  - ooc_kernel_scale: C = beta*C on a device tile (beta == 0 writes zeros
 *    without reading C), for the four element types;
 *  - ooc_kernel_transpose: B = op(A) for op T or C (conjugate transpose),
 *    through 32x32 shared-memory tiles so that both the reads and the writes
 *    are coalesced; the custom backend uses it to turn an operand it would
 *    read across its leading dimension into one it reads along it, where the
 *    benchmark shows that to be faster (docs/PERFORMANCE.md).
 * Column-major, any m, n and leading dimensions. Must not synchronize,
 * allocate or print.
 */
#include <cuda_runtime.h>

#include "kernels.h"

namespace {

template <typename T>
struct elem;
template <>
struct elem<float> {
    static __device__ __forceinline__ float mul(float a, float b) { return a * b; }
    static __device__ __forceinline__ float conj(float a) { return a; }
    static bool is_zero(float a) { return a == 0; }
};
template <>
struct elem<double> {
    static __device__ __forceinline__ double mul(double a, double b) { return a * b; }
    static __device__ __forceinline__ double conj(double a) { return a; }
    static bool is_zero(double a) { return a == 0; }
};
template <>
struct elem<float2> {
    static __device__ __forceinline__ float2 mul(float2 a, float2 b)
    {
        return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
    }
    static __device__ __forceinline__ float2 conj(float2 a) { return make_float2(a.x, -a.y); }
    static bool is_zero(float2 a) { return a.x == 0 && a.y == 0; }
};
template <>
struct elem<double2> {
    static __device__ __forceinline__ double2 mul(double2 a, double2 b)
    {
        return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
    }
    static __device__ __forceinline__ double2 conj(double2 a) { return make_double2(a.x, -a.y); }
    static bool is_zero(double2 a) { return a.x == 0 && a.y == 0; }
};

/* a 32-row by 8-column block of threads walks its columns with a stride */
template <typename T>
__global__ void scale_kernel(int m, int n, T beta, bool zero, T *__restrict__ C, int ldc)
{
    const int i = blockIdx.x * 32 + threadIdx.x;
    if (i >= m) return;
    for (int j = blockIdx.y * 8 + threadIdx.y; j < n; j += gridDim.y * 8) {
        T *p = C + (size_t)j * ldc + i;
        *p = zero ? T() : elem<T>::mul(beta, *p);
    }
}

/* B (n x m) = A^T or A^H (A m x n): a 32x32 tile of A through shared memory */
template <typename T, bool CONJ>
__global__ void transpose_kernel(int m, int n, const T *__restrict__ A, int lda, T *__restrict__ B, int ldb)
{
    __shared__ T tile[32][33]; /* +1: the column reads hit 32 different banks */
    const int i0 = blockIdx.x * 32, j0 = blockIdx.y * 32;
    for (int jj = threadIdx.y; jj < 32; jj += 8) {
        const int i = i0 + threadIdx.x, j = j0 + jj;
        if (i < m && j < n) tile[jj][threadIdx.x] = A[(size_t)j * lda + i];
    }
    __syncthreads();
    for (int ii = threadIdx.y; ii < 32; ii += 8) {
        const int j = j0 + threadIdx.x, i = i0 + ii; /* B(j, i) = A(i, j) */
        if (i < m && j < n) {
            const T v = tile[threadIdx.x][ii];
            B[(size_t)i * ldb + j] = CONJ ? elem<T>::conj(v) : v;
        }
    }
}

dim3 grid2(int m, int n, int rows, int cols)
{
    unsigned gy = (unsigned)((n + cols - 1) / cols);
    return dim3((unsigned)((m + rows - 1) / rows), gy > 65535u ? 65535u : gy);
}

template <typename T>
int scale_t(void *stream, int m, int n, const void *beta, void *C, int ldc)
{
    const T b = *(const T *)beta;
    const bool zero = elem<T>::is_zero(b);
    scale_kernel<T><<<grid2(m, n, 32, 8), dim3(32, 8), 0, (cudaStream_t)stream>>>(m, n, b, zero, (T *)C, ldc);
    return (int)cudaGetLastError();
}

template <typename T>
int transpose_t(void *stream, int conj, int m, int n, const void *A, int lda, void *B, int ldb)
{
    if (n > 65535 * 32) return (int)cudaErrorInvalidValue;
    dim3 grid((unsigned)((m + 31) / 32), (unsigned)((n + 31) / 32));
    if (conj)
        transpose_kernel<T, true><<<grid, dim3(32, 8), 0, (cudaStream_t)stream>>>(m, n, (const T *)A, lda, (T *)B, ldb);
    else
        transpose_kernel<T, false><<<grid, dim3(32, 8), 0, (cudaStream_t)stream>>>(m, n, (const T *)A, lda, (T *)B, ldb);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" __attribute__((visibility("hidden"))) int
ooc_kernel_scale(void *stream, int type, int m, int n, const void *beta, void *C, int ldc)
{
    if (m <= 0 || n <= 0) return 0;
    switch (type) {
    case OOC_KT_S: return scale_t<float>(stream, m, n, beta, C, ldc);
    case OOC_KT_D: return scale_t<double>(stream, m, n, beta, C, ldc);
    case OOC_KT_C: return scale_t<float2>(stream, m, n, beta, C, ldc);
    case OOC_KT_Z: return scale_t<double2>(stream, m, n, beta, C, ldc);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" __attribute__((visibility("hidden"))) int
ooc_kernel_transpose(void *stream, int type, int conj, int m, int n, const void *A, int lda, void *B, int ldb)
{
    if (m <= 0 || n <= 0) return 0;
    switch (type) {
    case OOC_KT_S: return transpose_t<float>(stream, 0, m, n, A, lda, B, ldb);
    case OOC_KT_D: return transpose_t<double>(stream, 0, m, n, A, lda, B, ldb);
    case OOC_KT_C: return transpose_t<float2>(stream, conj, m, n, A, lda, B, ldb);
    case OOC_KT_Z: return transpose_t<double2>(stream, conj, m, n, A, lda, B, ldb);
    default: return (int)cudaErrorInvalidValue;
    }
}
