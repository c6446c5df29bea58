/* SPDX-License-Identifier: MIT */
/**
 * @file ooc_gemm.h
 * @brief libooc_gemm: C = alpha*op(A)*op(B) + beta*C for matrices larger than GPU memory.
 *
 * The one public header to include (it includes ooc_gemm_files.h, the file
 * operands' part). It needs no CUDA header: a program that links
 * libooc_gemm never sees CUDA types. Operands are host pointers (pinned or
 * pageable); the library streams them through the GPU (or, with the host
 * backend, through OpenBLAS on the CPU) in blocks that fit the memory budget.
 *
 * Conventions: every function returns an ::ooc_status_t; outputs are written
 * only on success; the library never prints, exits or aborts. A handle is not
 * thread-safe: use one handle per thread.
 */
#ifndef OOC_GEMM_H
#define OOC_GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the exported symbols; the rest of the library is built hidden. */
#if defined(__GNUC__) && !defined(OOC_STATIC)
#define OOC_API __attribute__((visibility("default")))
#else
#define OOC_API
#endif

/** @name Version */
/** @{ */
#define OOC_VERSION_MAJOR 0
#define OOC_VERSION_MINOR 1
#define OOC_VERSION_PATCH 0
/** MAJOR*10000 + MINOR*100 + PATCH, for compile-time checks. */
#define OOC_VERSION_NUMBER (OOC_VERSION_MAJOR * 10000 + OOC_VERSION_MINOR * 100 + OOC_VERSION_PATCH)
/** @brief Version of the library linked at run time, as OOC_VERSION_NUMBER. */
OOC_API unsigned ooc_version_number(void);
/** @brief Version of the library linked at run time, as "MAJOR.MINOR.PATCH". */
OOC_API const char *ooc_version_string(void);
/** @} */

/** Bytes a compute id (ooc_compute_id()) may take, its NUL included. */
#define OOC_COMPUTE_ID_MAX 256

/**
 * @brief Status codes. Values are stable: new codes are only appended.
 */
typedef enum {
    OOC_SUCCESS = 0,
    OOC_ERR_INVALID_HANDLE = 1,  /**< handle is NULL */
    OOC_ERR_INVALID_LAYOUT = 2,  /**< layout is not OOC_ROW_MAJOR or OOC_COL_MAJOR */
    OOC_ERR_INVALID_TRANSA = 3,  /**< op(A) is not N, T or C */
    OOC_ERR_INVALID_TRANSB = 4,  /**< op(B) is not N, T or C */
    OOC_ERR_INVALID_M = 5,       /**< m < 0 (0 too where a call needs a product: ooc_measure_gemm_rate) */
    OOC_ERR_INVALID_N = 6,       /**< n < 0 (0 too where a call needs a product: ooc_measure_gemm_rate) */
    OOC_ERR_INVALID_K = 7,       /**< k < 0 (0 too where a call needs a product: ooc_measure_gemm_rate) */
    OOC_ERR_INVALID_LDA = 8,     /**< lda smaller than the stored rows (column-major) or columns (row-major) of A, or < 1 */
    OOC_ERR_INVALID_LDB = 9,     /**< ldb likewise for B */
    OOC_ERR_INVALID_LDC = 10,    /**< ldc likewise for C */
    OOC_ERR_NULL_A = 11,         /**< A is NULL but holds elements */
    OOC_ERR_NULL_B = 12,         /**< B is NULL but holds elements */
    OOC_ERR_NULL_C = 13,         /**< C is NULL but holds elements */
    OOC_ERR_NULL_ARG = 14,       /**< another required pointer argument is NULL (alpha, beta, an output) */
    OOC_ERR_OVERFLOW = 15,       /**< a size or byte count does not fit in 64 bits */
    OOC_ERR_INVALID_PARAM = 16,  /**< an unknown ::ooc_param_t, or an argument not valid for the call (a file
                                      not open for writing, a plan not made for this job, ...; see each call) */
    OOC_ERR_PARAM_RANGE = 17,    /**< parameter value outside ooc_param_bounds() */
    OOC_ERR_INVALID_DTYPE = 18,  /**< unknown ::ooc_dtype_t */
    OOC_ERR_BUDGET_TOO_SMALL = 19, /**< the device or host memory budget cannot hold even the smallest plan,
                                        or holds only tiles too many and small to be worth running (over 2^20
                                        tiles of under 2^24 multiply-adds on average: their overheads would
                                        take the time); the message names the least budget that does */
    OOC_ERR_DEVICE_MEMORY = 20,  /**< a device allocation failed */
    OOC_ERR_HOST_MEMORY = 21,    /**< a host (or pinned host) allocation failed */
    OOC_ERR_NO_DEVICE = 22,      /**< the CUDA backend was asked for and there is no usable GPU (or the device index is out of range) */
    OOC_ERR_BACKEND_UNAVAILABLE = 23, /**< the backend asked for was not built into this library */
    OOC_ERR_CUDA = 24,           /**< a CUDA runtime call failed (ooc_last_error() names it) */
    OOC_ERR_CUBLAS = 25,         /**< a cuBLAS call failed (ooc_last_error() names it) */
    OOC_ERR_THREAD = 26,         /**< creating a host thread or lock failed */
    OOC_ERR_NOT_SUPPORTED = 27,  /**< valid request that this version does not implement */
    OOC_ERR_INTERNAL = 28,       /**< a bug in libooc_gemm: please report it with ooc_last_error() */
    OOC_ERR_IO = 29,             /**< reading or writing a file failed (ooc_last_error() names the file and call) */
    OOC_ERR_FORMAT = 30,         /**< a file is malformed, truncated, big-endian or of an unsupported type */
    OOC_ERR_SHAPE = 31,          /**< operand shapes or element types do not match each other */
    OOC_ERR_JOURNAL = 32,        /**< the resume journal does not describe this job, is damaged, or its blocks
                                      are another computer's that this run would mix with its own (allow_mixed) */
    OOC_ERR_NO_SPACE = 33,       /**< writing a file failed for lack of room: the file system is full, a quota
                                      or the process's file-size limit was reached (ooc_last_error_path() names the file) */
    OOC_ERR_CANCELLED = 34,      /**< ooc_cancel() stopped the multiply; a file multiply can be resumed */
    OOC_ERR_BUSY = 35,           /**< another job is writing the same output (its temporary file is locked) */
    OOC_ERR_ROW_RANGE = 36,      /**< a range of C's rows (its columns when the plan keeps op(A) resident) that
                                      is empty, passes C's end, or does not fall on the blocks of the job's plan
                                      (see ooc_files_opts_t::row_begin) */
    OOC_ERR_OVERLAP = 37,        /**< C shares elements with A or B (in memory), or the output file is the
                                      input A or B: C would be written while they are read */
    OOC_ERR_UNDECIDED = 38       /**< a verification could neither pass nor fail C: nothing failed, but values
                                      of the check overflowed (ooc_verify_files()); C may be right */
} ooc_status_t;

/** @brief Fixed English description of a status ("lda is too small", ...); never NULL. */
OOC_API const char *ooc_status_string(ooc_status_t status);

/** Storage order, with the values of CBLAS_ORDER. */
typedef enum { OOC_ROW_MAJOR = 101, OOC_COL_MAJOR = 102 } ooc_layout_t;

/** op(X): X, X^T, or X^H (same as X^T for real types); values of CBLAS_TRANSPOSE. */
typedef enum { OOC_OP_N = 111, OOC_OP_T = 112, OOC_OP_C = 113 } ooc_op_t;

/** Element types. Complex elements are pairs (real, imaginary) of the real type. */
typedef enum {
    OOC_R32 = 1, /**< float */
    OOC_R64 = 2, /**< double */
    OOC_C32 = 3, /**< complex float, two floats */
    OOC_C64 = 4  /**< complex double, two doubles */
} ooc_dtype_t;

/** Opaque handle: the device, its streams and buffers, the options, the last error. */
typedef struct ooc_handle_s ooc_handle_t;

/**
 * @brief Create a handle with default options (backend auto, every visible device, budgets auto).
 *
 * No device work happens here; the backend is opened at the first multiply.
 * @param[out] handle receives the new handle (unchanged on failure)
 * @return OOC_SUCCESS, OOC_ERR_NULL_ARG, OOC_ERR_HOST_MEMORY
 */
OOC_API ooc_status_t ooc_create(ooc_handle_t **handle);

/** @brief Release a handle and everything it holds. NULL is accepted and ignored. */
OOC_API void ooc_destroy(ooc_handle_t *handle);

/** Backends for ::OOC_PARAM_BACKEND. */
typedef enum {
    OOC_BACKEND_AUTO = 0,   /**< CUDA when a GPU is present, else host */
    OOC_BACKEND_CUBLAS = 1, /**< CUDA with cuBLAS tile multiplies */
    OOC_BACKEND_CUSTOM = 2, /**< CUDA with libooc_gemm's own kernels (kernels/) for real (S, D) tiles; complex tiles use cuBLAS */
    OOC_BACKEND_HOST = 3    /**< the CPU, with OpenBLAS: same pipeline, no GPU */
} ooc_backend_t;

/** Math modes for ::OOC_PARAM_MATH_MODE. */
typedef enum {
    OOC_MATH_STRICT = 0, /**< full-precision FP32/FP64 arithmetic */
    OOC_MATH_TF32 = 1    /**< allow TF32 tensor cores for single precision (CUDA only) */
} ooc_math_t;

/**
 * @brief Options, set with ooc_set(). 0 always means "choose for me".
 *
 * Values are stable; new parameters are only appended.
 */
typedef enum {
    OOC_PARAM_BACKEND = 1,        /**< ::ooc_backend_t (default AUTO) */
    OOC_PARAM_DEVICE = 2,         /**< one CUDA device alone, by index (0: see ::OOC_PARAM_DEVICES) */
    OOC_PARAM_DEVICE_MEM = 3,     /**< device-memory budget in bytes; 0: free memory minus a margin */
    OOC_PARAM_HOST_MEM = 4,       /**< pinned staging budget in bytes (pageable operands), of all devices together
                                       (each has its own ring of a share); 0: automatic */
    OOC_PARAM_BLOCK_ROWS = 5,     /**< rows of op(A) per streamed block, at most (from 64 on rounded down to a
                                       multiple of 32 unless all of m; fewer when the budgets hold fewer);
                                       0: planner's choice. When the planner keeps op(A) resident
                                       (ooc_stats_t::a_resident) the streamed blocks are of op(B)'s columns:
                                       this bounds those (C's columns) */
    OOC_PARAM_RING_DEPTH = 6,     /**< device buffers in the ring (>= 2); 0: planner's choice */
    OOC_PARAM_STAGING_THREADS = 7, /**< host threads copying pageable memory; 0: automatic */
    OOC_PARAM_MATH_MODE = 8,      /**< ::ooc_math_t (default STRICT) */
    OOC_PARAM_STREAMS = 9,        /**< CUDA streams used by the pipeline (>= 3); 0: planner's choice */
    OOC_PARAM_TAIL = 10,          /**< shrinking last blocks (mb/2, mb/4, ...): 1 none, t+1 for at most t of them
                                       (fewer where the last would be under 32 rows, none where m is under 4
                                       blocks); 0: planner's choice (none when copying C out bounds the
                                       pipeline, unless A and C are both staged, or A's blocks go in
                                       k-pieces, one device) */
    OOC_PARAM_B_CHUNKS = 11,      /**< chunks of op(B)'s upload overlapped with the first block (1..8); with A's
                                       blocks in k-pieces (whose first piece needs all of op(B)), also chunks of
                                       C's columns each block's last piece is multiplied and copied out in; 0:
                                       planner's choice (pieces: up to 8 when copying C out bounds the run and
                                       C's blocks go out in place as columns, else 1) */
    OOC_PARAM_DEVICES = 12,       /**< the devices to use, a bit mask: bit d for device d (CUDA's numbering, after
                                       CUDA_VISIBLE_DEVICES; the host backend's simulated devices with
                                       OOC_HOST_DEVICES=N). 0: every visible device, unless ::OOC_PARAM_DEVICE
                                       names one (then that one alone) */
    OOC_PARAM_PEER_B = 13,        /**< how op(B) reaches several devices: ::ooc_peer_b_t (default AUTO) */
    OOC_PARAM_A_PIECES = 14,      /**< k-pieces each block of op(A) goes to the device in, multiplied one after
                                       another into C (1..64; 1: whole); 0: planner's choice (pieces when the
                                       device budget would otherwise hold the blocks to short copy lines; 2 when
                                       copying C out bounds the pipeline, A pinned, one device, k >= 2048; up to
                                       8, pieces at least 1024 deep, for blocks lengthened to 64 KiB copy lines
                                       where strided lines held short by a small m copy in slower than they
                                       multiply, one device) */
    OOC_PARAM_STAGE_CHUNK = 15,   /**< a pageable op(A) in memory (the streamed operand; not one in a file, nor
                                       in k-pieces) goes to the device chunk after chunk through 3 pinned buffers
                                       of this many bytes (rounded up to a multiple of 4096) that stay in the
                                       CPU's cache: the copy engines read the chunk from the cache, so a staged
                                       byte costs one pass over host memory, not three. 1: never (whole blocks
                                       through the pinned ring). 0: 16 MiB with a GPU backend where the CPU's
                                       last-level cache holds 192 MiB or more and the buffers take at most half
                                       the staging budget, else never */
    OOC_PARAM_STAGE_C = 16        /**< a pageable C in memory (not one in a file) goes the same way: its
                                       blocks read in (beta != 0) go up through the buffers of
                                       ::OOC_PARAM_STAGE_CHUNK, and its blocks come down chunk after chunk
                                       into 3 more pinned buffers of that size, from which the staging
                                       threads copy them into C: one pass over host memory each, not three.
                                       1: never (whole blocks through the pinned ring). 0: whenever
                                       ::OOC_PARAM_STAGE_CHUNK gives a chunk */
} ooc_param_t;

/** Ways op(B) reaches several devices (::OOC_PARAM_PEER_B). The result is
 * byte-identical either way. */
typedef enum {
    OOC_PEER_B_AUTO = 0,  /**< measured at the first multiply on a set of GPUs: shared when a device copies
                               faster from a peer than from the host with every device copying at once
                               (ooc_stats_t::b_shared says which); the host backend copies from the host */
    OOC_PEER_B_HOST = 1,  /**< every device uploads all of op(B) from the host */
    OOC_PEER_B_SHARE = 2  /**< each device uploads 1/n of op(B) and copies the rest from the others (peer
                               access, NVLink); OOC_ERR_NOT_SUPPORTED where a pair of devices has none */
} ooc_peer_b_t;

/** Most devices one handle drives (bits of ::OOC_PARAM_DEVICES). */
#define OOC_MAX_DEVICES 16

/**
 * @brief Set an option for the following multiplies.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_INVALID_PARAM, OOC_ERR_PARAM_RANGE
 */
OOC_API ooc_status_t ooc_set(ooc_handle_t *handle, ooc_param_t param, int64_t value);

/**
 * @brief Read an option's current value (0 for "automatic"). Like every call
 * but the four ooc_last_error() names, it replaces ooc_last_error() (with ""
 * on success).
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_INVALID_PARAM, OOC_ERR_NULL_ARG
 */
OOC_API ooc_status_t ooc_get(const ooc_handle_t *handle, ooc_param_t param, int64_t *value);

/**
 * @brief Inclusive bounds of the values that ooc_set() accepts for a
 * parameter besides 0; 0 (automatic: the default, the library chooses) is
 * accepted by every parameter, in or out of these bounds (a lower bound of 0,
 * as BACKEND's, DEVICE's and MATH_MODE's, is that value).
 * @return OOC_SUCCESS, OOC_ERR_INVALID_PARAM, OOC_ERR_NULL_ARG
 */
OOC_API ooc_status_t ooc_param_bounds(ooc_param_t param, int64_t *lower, int64_t *upper);

/**
 * @brief The message of the last failure on this handle, naming the failed call
 * and where ("cudaMemcpy2DAsync: out of memory at lib/backend_cuda.c:212"),
 * or "" if the last call succeeded. Every call on the handle replaces it (the
 * getters ooc_get() and ooc_get_stats() too) except ooc_last_error(),
 * ooc_last_error_path(), ooc_backend_name() and ooc_cancel() (which a signal
 * handler or another thread may call meanwhile: async-signal-safe), which
 * leave it unchanged. Valid until the next call that replaces it. With a
 * NULL handle: "invalid handle (NULL)" (a static string), the message of the
 * OOC_ERR_INVALID_HANDLE that every call taking a handle returns for NULL.
 */
OOC_API const char *ooc_last_error(const ooc_handle_t *handle);

/**
 * @brief The file the last failure concerns (an input, the output's temporary
 * file, the journal, the trace), as the caller named it, or NULL when the last
 * failure concerns no file. An argument refused for one file names it too (a
 * raw shape or format it cannot have, an output named like a temporary file,
 * a file not open for writing, an output or C0 of the wrong shape); a mismatch
 * between two inputs (types, inner dimensions) names none. Replaced with ooc_last_error(), valid as long. Lets a
 * caller tell an input's fault from the output's without parsing messages.
 * NULL with a NULL handle.
 */
OOC_API const char *ooc_last_error_path(const ooc_handle_t *handle);

/**
 * @brief Ask the call running on @p handle, or the next one to start, to stop:
 * a multiply (ooc_gemm() and its typed forms, ooc_gemm_files()) or a check
 * (ooc_verify_files(), ooc_verify_files_rows(), ooc_verify_files_cols()). A
 * multiply starts no new row block, finishes or abandons the blocks in
 * flight and returns OOC_ERR_CANCELLED with every finished block of a file
 * multiply recorded in its journal (resumable); a check returns
 * OOC_ERR_CANCELLED. Every return of
 * one of those calls consumes the request, whatever it returns: a call that
 * had nothing to stop (an argument error or another failure, nothing to
 * compute, or its work done before it saw the request) returns its own
 * status, and the request is gone (a caller that cancels from a signal
 * handler keeps its own record of the signal). Other calls neither see nor
 * consume it. The one function that may be called while another thread uses
 * the handle, and from a signal handler (async-signal-safe); it leaves
 * ooc_last_error() unchanged.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE
 */
OOC_API ooc_status_t ooc_cancel(ooc_handle_t *handle);

/**
 * @brief Name of the backend the handle has open ("cublas", "custom", "host"),
 * the one its last multiply ran on, or "none" when none is: no call has needed
 * one yet (a multiply with nothing to compute opens none; ooc_host_alloc(),
 * ooc_gemm_files_plan(), ooc_compute_id() and the measurements open it too), or a CUDA failure
 * closed it until the next call, or the handle is NULL. Leaves
 * ooc_last_error() unchanged.
 */
OOC_API const char *ooc_backend_name(const ooc_handle_t *handle);

/**
 * @brief Whether the CUDA backend can run in this process, and if not, why.
 *
 * The CUDA backend is a module, libooc_gemm_cuda.so, that the library loads
 * the first time it is needed (this call, ooc_device_count, or a multiply
 * with the backend auto, cublas or custom), from $OOC_CUDA_MODULE when set,
 * else beside libooc_gemm.so (DIR/libooc_gemm/ or DIR/), else the configured
 * pkglibdir; libooc_gemm.so itself needs no CUDA library. The answer is
 * found once per process. The backend auto uses CUDA exactly when this
 * returns OOC_SUCCESS.
 *
 * @param gpus   receives the GPUs the CUDA backend can use (0 when none); may be NULL
 * @param why    receives a sentence, valid for the life of the process: the
 *               driver and runtime versions when usable, else what is missing
 *               ("no CUDA module: looked for ...", "no CUDA runtime: ...",
 *               "no NVIDIA driver: ...", "the NVIDIA driver is too old: ...",
 *               "no GPU: ..."); may be NULL
 * @param module receives the module's path (loaded, or looked for last), ""
 *               when the backend is linked in (static builds) or the library
 *               was built without CUDA; may be NULL
 * @return OOC_SUCCESS (at least one GPU), OOC_ERR_BACKEND_UNAVAILABLE (built
 *         without CUDA, no module, or the module or its CUDA libraries cannot
 *         be loaded), OOC_ERR_NO_DEVICE (no driver, a driver too old, no GPU)
 */
OOC_API ooc_status_t ooc_cuda_probe(int *gpus, const char **why, const char **module);

/**
 * @brief Generic GEMM: C = alpha*op(A)*op(B) + beta*C, BLAS semantics.
 *
 * op(A) is m x k, op(B) is k x n, C is m x n, all stored in @p layout with the
 * given leading dimensions. alpha and beta point to one element of @p dtype.
 * With beta == 0, C is not read (NaN in C does not propagate); with alpha
 * == 0, A and B are not read (NaN in them does not propagate), but they are
 * checked as always: a NULL A or B that holds elements is refused. A, B and C may
 * be pageable or pinned host memory. C must share no element with A or B
 * (OOC_ERR_OVERLAP; disjoint blocks of one larger matrix, interleaved by a
 * common leading dimension, are fine); A and B may overlap each other.
 * A leading dimension is at least the length of its matrix's stored lines
 * (1 at least); a matrix stored as one line (k = 1 column-major, m = 1
 * row-major, ...) takes any such value, as BLAS does; a matrix whose lines
 * span 2^63 bytes or more is refused (OOC_ERR_OVERFLOW).
 *
 * On an argument error nothing is written. On a later failure (device error)
 * the contents of C are unspecified.
 *
 * @return OOC_SUCCESS or the status naming the first bad argument
 * (OOC_ERR_INVALID_HANDLE, _LAYOUT, _TRANSA, _TRANSB, _M, _N, _K, _LDA, _LDB,
 * _LDC, OOC_ERR_NULL_A/_B/_C/_ARG, OOC_ERR_OVERFLOW, OOC_ERR_INVALID_DTYPE,
 * OOC_ERR_OVERLAP),
 * or a run-time failure (OOC_ERR_BUDGET_TOO_SMALL, OOC_ERR_DEVICE_MEMORY,
 * OOC_ERR_HOST_MEMORY, OOC_ERR_NO_DEVICE, OOC_ERR_BACKEND_UNAVAILABLE,
 * OOC_ERR_CUDA, OOC_ERR_CUBLAS, OOC_ERR_THREAD, OOC_ERR_NOT_SUPPORTED),
 * or OOC_ERR_CANCELLED (ooc_cancel(); C is then unspecified).
 */
OOC_API ooc_status_t ooc_gemm(ooc_handle_t *handle, ooc_dtype_t dtype, ooc_layout_t layout,
                              ooc_op_t transa, ooc_op_t transb, int64_t m, int64_t n, int64_t k,
                              const void *alpha, const void *A, int64_t lda, const void *B,
                              int64_t ldb, const void *beta, void *C, int64_t ldc);

/** @brief Single-precision ooc_gemm(). */
OOC_API ooc_status_t ooc_sgemm(ooc_handle_t *handle, ooc_layout_t layout, ooc_op_t transa,
                               ooc_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                               const float *A, int64_t lda, const float *B, int64_t ldb,
                               float beta, float *C, int64_t ldc);

/** @brief Double-precision ooc_gemm(). */
OOC_API ooc_status_t ooc_dgemm(ooc_handle_t *handle, ooc_layout_t layout, ooc_op_t transa,
                               ooc_op_t transb, int64_t m, int64_t n, int64_t k, double alpha,
                               const double *A, int64_t lda, const double *B, int64_t ldb,
                               double beta, double *C, int64_t ldc);

/** @brief Single-complex ooc_gemm(); alpha, beta and the elements are (re, im) float pairs. */
OOC_API ooc_status_t ooc_cgemm(ooc_handle_t *handle, ooc_layout_t layout, ooc_op_t transa,
                               ooc_op_t transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                               const void *A, int64_t lda, const void *B, int64_t ldb,
                               const void *beta, void *C, int64_t ldc);

/** @brief Double-complex ooc_gemm(); alpha, beta and the elements are (re, im) double pairs. */
OOC_API ooc_status_t ooc_zgemm(ooc_handle_t *handle, ooc_layout_t layout, ooc_op_t transa,
                               ooc_op_t transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                               const void *A, int64_t lda, const void *B, int64_t ldb,
                               const void *beta, void *C, int64_t ldc);

/**
 * @brief Allocate page-locked host memory through the handle's backend, so that
 * ooc_gemm() copies it directly (no staging). With the host backend it is
 * ordinary memory that the library recognises as "pinned". It stays
 * allocated and pinned, whatever settings of the handle change meanwhile
 * (the backend's math mode or devices, which reopen it), until
 * ooc_host_free() with the same kind of backend; ooc_destroy() does not free it.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_HOST_MEMORY,
 *         OOC_ERR_NO_DEVICE, OOC_ERR_BACKEND_UNAVAILABLE, OOC_ERR_CUDA
 */
OOC_API ooc_status_t ooc_host_alloc(ooc_handle_t *handle, size_t bytes, void **ptr);

/** @brief Free memory from ooc_host_alloc() (NULL is ignored).
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_INVALID_PARAM (@p ptr is not a block
 *         ooc_host_alloc() gave with this kind of backend, or not its start: nothing freed),
 *         the backend's failures */
OOC_API ooc_status_t ooc_host_free(ooc_handle_t *handle, void *ptr);

/** What one device did in the last multiply (ooc_stats_t::device). */
typedef struct {
    int32_t device;        /**< its index (CUDA's numbering, or the host backend's simulated device) */
    int64_t blocks;        /**< row blocks it computed (each panel's blocks count separately) */
    uint64_t bytes_h2d;    /**< bytes it copied host to device */
    uint64_t bytes_d2h;    /**< bytes it copied device to host */
    uint64_t bytes_peer;   /**< bytes of op(B) it copied from other devices (::OOC_PARAM_PEER_B) */
    double seconds;        /**< from the start of the multiply to its last block done (host clock) */
    /* filled only when a trace was taken, else 0: */
    double busy_h2d, busy_compute, busy_d2h; /**< seconds each of its engines was busy */
    double busy_read, busy_write;            /**< seconds its staging threads were busy */
    double trace_wall;                       /**< its first device op's start to its last one's end */
    double overlap_efficiency;               /**< as ooc_stats_t::overlap_efficiency, for this device */
} ooc_device_stats_t;

/**
 * @brief What the last multiply on this handle did, for reports and tests.
 * With several devices the totals (bytes, busy times) are sums over them.
 */
typedef struct {
    int64_t block_rows;    /**< rows of op(A) per streamed block (with a_resident: columns of op(B), of C) */
    int64_t panel_cols;    /**< columns of op(B) per resident panel */
    int64_t panel_depth;   /**< rows of op(B) (k) per resident panel */
    int64_t blocks;        /**< row blocks per panel */
    int64_t panels;        /**< panels of op(B) (n-panels x k-panels) */
    int32_t ring_depth;    /**< device buffers in the ring */
    int32_t streams;       /**< streams used */
    int32_t staged_a;      /**< A went through the pinned staging ring (pageable) */
    int32_t staged_c;      /**< C went through the pinned staging ring (pageable) */
    int32_t a_resident;    /**< the planner kept op(A) resident and streamed op(B) (C^T = op(B)^T op(A)^T) */
    uint64_t device_bytes; /**< device memory the plan used */
    uint64_t host_bytes;   /**< pinned staging memory the plan used, per device */
    uint64_t bytes_h2d;    /**< bytes copied host to device */
    uint64_t bytes_d2h;    /**< bytes copied device to host */
    double seconds;        /**< wall time of the multiply */
    /* filled only when a trace was taken (ooc_set_trace), else 0: */
    int32_t traced;
    double trace_wall;     /**< first device op's start to last one's end, seconds */
    double busy_h2d, busy_compute, busy_d2h; /**< seconds each engine was busy */
    double busy_read, busy_write;            /**< seconds the staging threads were busy */
    double overlap_efficiency; /**< (serial sum - measured) / (serial sum - largest part); 1 = perfect overlap, 0 = none (clamped to [0, 1]: a wall above the serial sum, engines idle waiting on the host, reads 0) */
    int32_t trace_status;  /**< writing the trace file: OOC_SUCCESS, or why it failed (the multiply itself
                                succeeded: a trace is never worth a result) */
    char trace_error[256]; /**< the message of that failure, "" when none */
    int64_t blocks_resumed; /**< file multiplies: row blocks a resumed run found done in the journal (with
                                 op(B) in panels, each panel's blocks count separately: at most blocks x
                                 panels) */
    int32_t ndevices;       /**< devices the multiply ran on (entries of device[]) */
    ooc_device_stats_t device[OOC_MAX_DEVICES]; /**< each of them, in the order of their indices */
    int32_t b_shared;       /**< several devices: 1 when op(B) was uploaded once and copied between them */
    uint64_t bytes_peer;    /**< bytes copied between devices (sum over them) */
    double probe_host_gbps; /**< ::OOC_PEER_B_AUTO's measurement: GB/s each device copied from the host with all
                                 copying at once (0: not measured) */
    double probe_peer_gbps; /**< and GB/s each copied from another device */
    char b_how[192];        /**< why op(B) went the way it went, in words */
    uint64_t bytes_staged;  /**< bytes the staging threads copied between pageable memory (or files) and the
                                 pinned ring, in and out: the floor's host-memory term counts them */
    uint64_t least_traffic_bytes; /**< the least bytes over the bus any plan could move within the same memory
                                       budgets (smallest blocks, either orientation; several devices: op(B) to
                                       each from the host, once in all when shared); bytes_h2d + bytes_d2h is
                                       what this plan moved */
    int32_t a_pieces;       /**< k-pieces each block of op(A) went to the device in (1: whole; ::OOC_PARAM_A_PIECES) */
    int32_t c_chunks;       /**< with a_pieces > 1: chunks of C's columns each block's last piece was multiplied
                                 and copied out in, each going out once multiplied (1: whole; ::OOC_PARAM_B_CHUNKS) */
    int64_t blocks_mixed;   /**< file multiplies resumed with ooc_files_opts_t::allow_mixed: blocks kept that
                                 another compute id (or several) computed, so C mixes their roundings (0: none;
                                 also for a whole job that computes no block and keeps one id's) */
    char mixed_by[OOC_COMPUTE_ID_MAX]; /**< the first such id ("several" for a journal already mixed), "" when none */
    char kept_by[OOC_COMPUTE_ID_MAX];  /**< file multiplies: what computed the blocks_resumed blocks kept as done:
                                            one compute id, "several" when they are not all one's (or come from a
                                            journal marked mixed), "" when none were kept. Processes that share a
                                            job compare it with what the others computed and kept */
    int64_t stage_chunk;    /**< bytes of each pinned buffer staged op(A) went through chunk by chunk
                                 (::OOC_PARAM_STAGE_CHUNK); 0: it went through the ring's slots, or was not staged */
    int32_t stage_bufs;     /**< how many such buffers (0 with stage_chunk 0) */
    uint64_t bytes_staged_cached; /**< of bytes_staged, those copied through cache-sized buffers, in
                                       (stage_chunk) or out (stage_out_chunk): they pass over host memory once
                                       (the floor's host-memory term counts them once, the others thrice) */
    int64_t stage_cin_chunk; /**< bytes of each pinned buffer a staged C's blocks read in (beta != 0) went
                                  up through chunk by chunk (::OOC_PARAM_STAGE_C; op(A)'s, when it went
                                  that way too); 0: through the ring's slots, or not read, or not staged */
    int32_t stage_cin_bufs;  /**< how many such buffers (0 with stage_cin_chunk 0) */
    int64_t stage_out_chunk; /**< bytes of each pinned buffer a staged C came out through chunk by chunk
                                  (::OOC_PARAM_STAGE_C); 0: through the ring's out-slots, or not staged */
    int32_t stage_out_bufs;  /**< how many such buffers (0 with stage_out_chunk 0) */
    int32_t b_follow;        /**< with a_pieces > 1: 1 when op(B) went up piece by piece of its depth with the
                                  first block's pieces of A, each piece multiplied once its rows of op(B) were
                                  there (the planner's choice for few rows and a large op(B), pinned, on one
                                  device); 0 when op(B) went up whole first */
    int32_t aligned_tiles;   /**< 1 when the device tiles' lines were on pitches of 16 bytes and a tile
                                  multiply whose m or k is not a multiple of 16 bytes was split, for cuBLAS's
                                  fast kernels: FP32 in TF32 math, and FP64 on cuBLAS but for its op pair NT
                                  (op(A) N, op(B) T column-major; op(A) T, op(B) N row-major), which ran slower
                                  so, unless resident_transposed; 0: packed and whole */
    int32_t resident_transposed; /**< 1 when the resident operand lay transposed on the device, so that an
                                  FP64 multiply of cuBLAS's op pair NT of an odd n (C's columns in its column-
                                  major call) ran as NN on aligned tiles (then
                                  aligned_tiles is 1 too): where the problem ran column-major, op(A) N and
                                  op(B) T (or row-major op(A) T, op(B) N, transposed by the planner) */
    int64_t blocks_mismatched; /**< file multiplies resumed: blocks the journal recorded done whose bytes in
                                  the output's temporary file no longer matched the digest recorded with
                                  them (overwritten, or lost by a crash), so computed again (not counted in
                                  blocks_resumed; also set when the multiply then failed) */
} ooc_stats_t;

/**
 * @brief Take a timeline of every following multiply on this handle: each
 * copy and multiply per stream and each staging step per thread, written
 * after the multiply to @p path as Chrome trace JSON (opens in Perfetto), with
 * NVTX ranges for Nsight on the CUDA backend, and the busy times and overlap
 * efficiency in ooc_get_stats(). Timing every op costs a little; NULL or ""
 * stops tracing.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_HOST_MEMORY
 */
OOC_API ooc_status_t ooc_set_trace(ooc_handle_t *handle, const char *path);

/** @brief Copy the statistics of the last multiply (ooc_gemm(), ooc_gemm_files())
 * when it succeeded; all zeros when it failed (each multiply clears them as
 * it starts) or none has run on the handle, but for blocks_mismatched: the
 * blocks a resumed file multiply found changed, also when it then failed or
 * was cancelled.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG */
OOC_API ooc_status_t ooc_get_stats(const ooc_handle_t *handle, ooc_stats_t *stats);

/**
 * @brief Measure pinned host<->device copy bandwidth on the handle's backend:
 * @p bytes each way, best of three, in bytes per second (the floor's BW_h2d
 * and BW_d2h in docs/PERFORMANCE.md). Allocates and frees its own buffers.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_PARAM_RANGE (bytes 0),
 *         OOC_ERR_DEVICE_MEMORY, OOC_ERR_HOST_MEMORY, OOC_ERR_NO_DEVICE,
 *         OOC_ERR_BACKEND_UNAVAILABLE, OOC_ERR_CUDA, OOC_ERR_CUBLAS, OOC_ERR_THREAD
 */
OOC_API ooc_status_t ooc_measure_bandwidth(ooc_handle_t *handle, size_t bytes, double *h2d,
                                           double *d2h);

/**
 * @brief Measure pinned copy bandwidth with both directions at once: @p bytes
 * host to device and @p bytes device to host, issued together on two
 * streams, each way in 16 copies (when @p bytes is at least 16 MiB) issued
 * alternately; (2 x bytes) / the time both take, best of eight after a
 * warm-up, in bytes per second (the floor's BW_both: one link moves less
 * both ways at once than the sum of each way alone).
 * @return as ooc_measure_bandwidth()
 */
OOC_API ooc_status_t ooc_measure_bandwidth_both(ooc_handle_t *handle, size_t bytes, double *both);

/**
 * @brief Measure the host's memory bandwidth as staging uses it (the
 * floor's host memory bandwidth: a pageable operand staged through the
 * ring's pinned slots passes through host memory three times, read and
 * written by the staging threads and read or written by a copy engine, all
 * at once; one staged through the cache-sized buffers of
 * ::OOC_PARAM_STAGE_CHUNK once). The handle's staging threads
 * (::OOC_PARAM_STAGING_THREADS) copy @p bytes from ordinary memory into
 * memory from ooc_host_alloc(), alone (2 x bytes per second: each byte is
 * read once and written once) and, on a GPU backend, while the first
 * device's copy engines move @p bytes of pinned memory each way (the
 * traffic of all three in the time all three ran); best of eight after a
 * warm-up each. @p bw is the larger, in bytes per second. On a GPU backend
 * it allocates 2 x @p bytes of device memory and 3 x @p bytes of pinned
 * memory besides @p bytes of ordinary memory.
 * @return as ooc_measure_bandwidth()
 */
OOC_API ooc_status_t ooc_measure_host_bandwidth(ooc_handle_t *handle, size_t bytes, double *bw);

/**
 * @brief Measure the in-core multiply rate of the handle's backend on an
 * m x n x k problem held entirely in device memory (random data, column-major
 * NN, beta = 0): best of @p reps after one warm-up, in (real) flop per second,
 * counting 2mnk for real and 8mnk for complex types (the floor's R_incore).
 * @p reps below 1 is taken as 1.
 * @return as ooc_measure_bandwidth(), plus OOC_ERR_INVALID_DTYPE, _M, _N, _K (not positive),
 *         OOC_ERR_PARAM_RANGE (a dimension above 2^31 - 1), OOC_ERR_OVERFLOW
 */
OOC_API ooc_status_t ooc_measure_gemm_rate(ooc_handle_t *handle, ooc_dtype_t dtype, int64_t m,
                                           int64_t n, int64_t k, int reps, double *flops);

/** One GPU as ooc_device_info() describes it. */
typedef struct {
    char name[256];
    char pci_bus_id[32];      /**< "0000:3b:00.0" */
    int pcie_gen, pcie_width; /**< current PCIe link (0 when unknown) */
    int copy_engines;         /**< asynchronous copy engines (2: copies both ways at once) */
    int multiprocessors;
    int compute_major, compute_minor;
    uint64_t memory_total, memory_free; /**< bytes */
    int numa_node; /**< the host NUMA node the GPU's PCIe link hangs off (-1 when unknown or the host has one) */
} ooc_device_info_t;

/** @brief Number of CUDA devices (0 without a GPU or without CUDA support).
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG */
OOC_API ooc_status_t ooc_device_count(ooc_handle_t *handle, int *count);

/** @brief Describe CUDA device @p device.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_NO_DEVICE,
 *         OOC_ERR_BACKEND_UNAVAILABLE, OOC_ERR_CUDA */
OOC_API ooc_status_t ooc_device_info(ooc_handle_t *handle, int device, ooc_device_info_t *info);

/**
 * @brief Say what computes the handle's blocks, as one word: its backend
 * (resolved as a multiply would resolve ::OOC_BACKEND_AUTO), the BLAS
 * library's version, the kind of each device and this library's version
 * with its summation scheme (+sumN: how a block's sums are cut, bumped when
 * that changes), e.g. "cublas/13.1.0/sm_90x132/ooc-0.1.0+sum3" (cuBLAS
 * 13.1.0, compute capability 9.0 with 132 SMs; several kinds joined by '+'),
 * "custom/13.1.0/sm_90x132/ooc-0.1.0+sum3" (our kernels; complex tiles use
 * cuBLAS) or "host/openblas-0.3.21/Haswell/2-threads/ooc-0.1.0+sum3" (OpenBLAS,
 * the kernels it chose for the CPU and its threads: each rounds otherwise).
 * Two handles with one id compute every
 * block of a plan to the same bytes (cuBLAS promises this for one version on
 * GPUs of one architecture and number of SMs); handles with different ids
 * may differ in the last bits. A file job's journal records it (a complex
 * job's by "custom" records the cublas id: its tiles are cuBLAS's), and a
 * resume that would compute with another is refused (ooc_gemm_files(),
 * unless it allows the mix); processes
 * that split one job between them (ooc_file_join()) should compare theirs
 * for the job's type (ooc_compute_id_for(); oocgemm's ranks do).
 * @param id   at least ::OOC_COMPUTE_ID_MAX bytes
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_INVALID_PARAM (@p cap too small),
 *         and the backend's failures (OOC_ERR_NO_DEVICE, OOC_ERR_BACKEND_UNAVAILABLE, OOC_ERR_CUDA)
 */
OOC_API ooc_status_t ooc_compute_id(ooc_handle_t *handle, char *id, size_t cap);

/**
 * @brief ooc_compute_id() for a job of @p dtype: what computes its blocks,
 * as a file job's journal records it. It differs from ooc_compute_id() only
 * where the backend computes some types with another's kernels: a complex
 * job by "custom" gives the cublas id (its tiles are cuBLAS's), so processes
 * that split a complex job between the two compare equal, as their blocks
 * do.
 * @return as ooc_compute_id(), plus OOC_ERR_INVALID_DTYPE
 */
OOC_API ooc_status_t ooc_compute_id_for(ooc_handle_t *handle, ooc_dtype_t dtype, char *id, size_t cap);

/* Matrix files, the file multiply and its verification. */
#include "ooc_gemm_files.h"

#ifdef __cplusplus
}
#endif
#endif /* OOC_GEMM_H */
