/* SPDX-License-Identifier: MIT */
/*
 * kernels.h: C entry points of libooc_gemm's own CUDA kernels (the .cu files beside it).
 * Plain C: no CUDA types, streams are passed as void * (a cudaStream_t).
 * Launchers only enqueue work; they never synchronize, allocate or print.
 * Matrices are column-major, device pointers; ta/tb: 0 = N, 1 = T.
 * Each returns 0 or the cudaError_t of the launch.
 */
#ifndef OOC_KERNELS_H
#define OOC_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* C = alpha*op(A)*op(B) + beta*C, FP64 tensor cores (mma.sync .f64, sm_80+).
 * beta == 0: C is not read (NaNs in C do not propagate). */
int ooc_kernel_dgemm(void *stream, int ta, int tb, int m, int n, int k, double alpha,
                     const double *A, int lda, const double *B, int ldb, double beta, double *C,
                     int ldc);

/* The same in FP32 on the FMA pipes (SIMT, register-blocked). */
int ooc_kernel_sgemm(void *stream, int ta, int tb, int m, int n, int k, float alpha,
                     const float *A, int lda, const float *B, int ldb, float beta, float *C,
                     int ldc);

/* The same with a chosen tile configuration (for the benchmark and the
 * tests); the plain launchers use variant 0. Every variant runs on every
 * architecture the library was built for (m16n8k16 .f64 on sm_90+, the same
 * fragments as m8n8k4 below). An unknown variant returns
 * cudaErrorInvalidValue. */
#define OOC_KERNEL_DGEMM_VARIANTS 6
#define OOC_KERNEL_SGEMM_VARIANTS 3
int ooc_kernel_dgemm_variant(int variant, void *stream, int ta, int tb, int m, int n, int k,
                             double alpha, const double *A, int lda, const double *B, int ldb,
                             double beta, double *C, int ldc);
int ooc_kernel_sgemm_variant(int variant, void *stream, int ta, int tb, int m, int n, int k,
                             float alpha, const float *A, int lda, const float *B, int ldb,
                             float beta, float *C, int ldc);

/* Element types of the helper kernels (helpers.cu) */
#define OOC_KT_S 0 /* float */
#define OOC_KT_D 1 /* double */
#define OOC_KT_C 2 /* float complex (two floats) */
#define OOC_KT_Z 3 /* double complex (two doubles) */

/* C (m x n, ldc) = beta*C; beta points to one element of `type`. beta == 0
 * writes zeros without reading C. */
int ooc_kernel_scale(void *stream, int type, int m, int n, const void *beta, void *C, int ldc);

/* B (n x m, ldb) = A^T, or A^H when conj and the type is complex; A is
 * m x n (lda). A and B must not overlap. n at most 65535*32. */
int ooc_kernel_transpose(void *stream, int type, int conj, int m, int n, const void *A, int lda, void *B,
                         int ldb);

/* Number of CUDA devices the runtime sees; 0 when none or no driver. */
int ooc_kernel_device_count(void);

#ifdef __cplusplus
}
#endif

#endif
