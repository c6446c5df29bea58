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
 * tests). The plain DGEMM launcher uses variant 4 (m16n8k16 .f64) when the
 * binary was built for sm_90+, else 0 (m8n8k4); SGEMM uses 0. An unknown
 * variant returns cudaErrorInvalidValue, an sm_90-only one in an older-arch
 * build cudaErrorNotSupported. */
#define OOC_KERNEL_DGEMM_VARIANTS 7
#define OOC_KERNEL_SGEMM_VARIANTS 2
int ooc_kernel_dgemm_variant(int variant, void *stream, int ta, int tb, int m, int n, int k,
                             double alpha, const double *A, int lda, const double *B, int ldb,
                             double beta, double *C, int ldc);
int ooc_kernel_sgemm_variant(int variant, void *stream, int ta, int tb, int m, int n, int k,
                             float alpha, const float *A, int lda, const float *B, int ldb,
                             float beta, float *C, int ldc);

/* Number of CUDA devices the runtime sees; 0 when none or no driver. */
int ooc_kernel_device_count(void);

#ifdef __cplusplus
}
#endif

#endif
