/* SPDX-License-Identifier: MIT */
/*
 * backend.h: the ops table the pipeline drives. One implementation per
 * backend: CUDA (backend_cuda.c: cuBLAS, device memory, CUDA streams and
 * events), custom (backend_cuda.c too: our kernels for real tiles) and host (backend_host.c: OpenBLAS, ordinary memory, streams as
 * worker threads with the same ordering semantics as CUDA streams).
 *
 * Semantics every backend keeps (they are CUDA's):
 *  - work on one stream runs in the order it was enqueued;
 *  - event_record captures the work enqueued on the stream so far;
 *    stream_wait makes later work on a stream wait for what the event
 *    captured at the time of the wait call; event_sync blocks the calling
 *    host thread until it is done; a never-recorded event is complete;
 *  - copies and gemms are asynchronous: the host must not touch their
 *    buffers until an event recorded after them completes.
 * Every op returns a status and fills *err on failure; none prints.
 */
#ifndef OOC_BACKEND_H
#define OOC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ooc_gemm.h"

typedef struct ooc_be ooc_be_t; /* one backend instance (a device, its BLAS handle) */
typedef void *ooc_stream_t;
typedef void *ooc_event_t;

typedef enum { OOC_H2D = 1, OOC_D2H = 2 } ooc_copy_dir_t;

/* bytes per element of a (valid) dtype */
static inline size_t ooc_dtype_size(ooc_dtype_t t)
{
    return t == OOC_R32 ? 4 : t == OOC_R64 ? 8 : t == OOC_C32 ? 8 : 16;
}

/* NumPy's name of a dtype, for messages */
static inline const char *ooc_dtype_word(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return "float32";
    case OOC_R64: return "float64";
    case OOC_C32: return "complex64";
    case OOC_C64: return "complex128";
    }
    return "an unknown type";
}

/* Whether a multiply runs on 16-byte aligned tiles, split where m or k is
 * not a multiple of 16 bytes (plan.h pad_lines: the pipeline's device
 * pitches; backend_cuda.c c_gemm: the split), by its type and the op pair
 * of cuBLAS's column-major call (x_trans: op of its first operand, y_trans:
 * of its second; a row-major C = op(A) op(B) is the call C^T = op(B)^T
 * op(A)^T, and the planner's transposed problem is the same call). cuBLAS
 * on an H200 runs such shapes below its rate (docs/PERFORMANCE.md, sessions
 * 39 and 40): TF32 SGEMM at a third (FP32 in TF32 math: always); DGEMM
 * aligned and split ran 3-23% faster in 11 of 13 shapes of the op pairs
 * NN, TN and TT (two lost 1%), but 1-15% slower in all 4 of the pair NT
 * (first operand N, second T): left packed and whole there, unless the
 * planner transposes the second on the device (ooc_resident_transposed,
 * below: the call is NN then). Complex types
 * (complex64 in TF32 too) and FP32 on the CUDA cores: no gain measured. */
static inline int ooc_tiles_aligned(ooc_dtype_t t, int tf32, int x_trans, int y_trans)
{
    if (t == OOC_R32) return tf32;
    if (t == OOC_R64) return x_trans || !y_trans;
    return 0;
}

/* Whether the resident operand lies transposed on the device (plan.h
 * b_transposed): DGEMM of cuBLAS's pair NT, where the resident operand is
 * the call's second (the pipeline's problem column-major, op(B) resident)
 * and n, C's columns in the call (the resident operand's rows as stored:
 * its leading dimension, packed), is odd. The call then is NN, on aligned
 * tiles split as above: an H200 ran NT tiles of odd n at 47-55 TFLOP/s,
 * the same tiles NN aligned and split at 52-64 (24 of 25 shapes 1.09-1.33
 * times faster, one 0.99); with n even NT runs at 57-65 whatever m and k
 * (but an odd m: the pipeline's blocks are even but the last), and NN
 * aligned and split ran 0.90-1.07 of it, most 0.97-0.98 (docs/PERFORMANCE.md,
 * session 41). The transpose takes 1-3% of a panel's multiply once per
 * panel. Where the resident operand is the first (the pipeline's problem
 * row-major) the pair would become TT, no faster: left as it was. */
static inline int ooc_resident_transposed(ooc_dtype_t t, int col_major, int x_trans, int y_trans, int64_t n)
{
    return t == OOC_R64 && col_major && !x_trans && y_trans && n % 2 != 0;
}

/* One tile multiply: C = alpha*op(A)*op(B) + beta*C on device pointers,
 * BLAS semantics in the given layout. Dimensions fit in int. */
typedef struct {
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    int m, n, k;
    const void *alpha, *beta;
    const void *A, *B;
    void *C;
    int lda, ldb, ldc;
} ooc_tile_gemm_t;

typedef struct {
    const char *name;
    /* open on `device` (ignored by host); math is an ooc_math_t */
    ooc_status_t (*open)(ooc_be_t **be, int device, int math, ooc_err_t *err);
    void (*close)(ooc_be_t *be);
    /* make this instance's device current for the calling thread */
    ooc_status_t (*activate)(ooc_be_t *be, ooc_err_t *err);
    /* device memory free and total, in bytes */
    ooc_status_t (*mem_info)(ooc_be_t *be, size_t *free_bytes, size_t *total_bytes, ooc_err_t *err);
    ooc_status_t (*dev_alloc)(ooc_be_t *be, size_t bytes, void **ptr, ooc_err_t *err);
    void (*dev_free)(ooc_be_t *be, void *ptr);
    /* pinned host memory; host_free: 0, or -1 (nothing done) when ptr is not
     * a block host_alloc gave (of this kind of backend). `staging`: the
     * library's own (staging rings, probes), which a forked child never
     * needs; else the caller's (ooc_host_alloc), which a child may read */
    ooc_status_t (*host_alloc)(ooc_be_t *be, size_t bytes, int staging, void **ptr, ooc_err_t *err);
    int (*host_free)(ooc_be_t *be, void *ptr);
    /* where host memory the user passed lives: 1 pinned (copy in place), 0 pageable
     * (stage it); OOC_ERR_NOT_SUPPORTED for device memory */
    ooc_status_t (*classify)(ooc_be_t *be, const void *ptr, int *pinned, ooc_err_t *err);
    ooc_status_t (*stream_create)(ooc_be_t *be, ooc_stream_t *s, ooc_err_t *err);
    /* a stream whose work the device starts ahead of the others' as it
     * frees room (CUDA: the greatest priority; the host: as any) */
    ooc_status_t (*stream_create_urgent)(ooc_be_t *be, ooc_stream_t *s, ooc_err_t *err);
    void (*stream_destroy)(ooc_be_t *be, ooc_stream_t s);
    ooc_status_t (*stream_sync)(ooc_be_t *be, ooc_stream_t s, ooc_err_t *err);
    ooc_status_t (*event_create)(ooc_be_t *be, ooc_event_t *ev, ooc_err_t *err);
    void (*event_destroy)(ooc_be_t *be, ooc_event_t ev);
    ooc_status_t (*event_record)(ooc_be_t *be, ooc_event_t ev, ooc_stream_t s, ooc_err_t *err);
    ooc_status_t (*stream_wait)(ooc_be_t *be, ooc_stream_t s, ooc_event_t ev, ooc_err_t *err);
    ooc_status_t (*event_sync)(ooc_be_t *be, ooc_event_t ev, ooc_err_t *err);
    /* events that also take a timestamp when reached (for the trace) */
    ooc_status_t (*event_create_timed)(ooc_be_t *be, ooc_event_t *ev, ooc_err_t *err);
    /* milliseconds from timed event a to timed event b, both complete */
    ooc_status_t (*event_elapsed)(ooc_be_t *be, ooc_event_t a, ooc_event_t b, float *ms, ooc_err_t *err);
    /* named ranges for profilers (NVTX on CUDA); no-ops elsewhere */
    void (*range_push)(ooc_be_t *be, const char *name);
    void (*range_pop)(ooc_be_t *be);
    /* 2-D async copy: height rows of width bytes, pitches in bytes */
    ooc_status_t (*copy2d)(ooc_be_t *be, void *dst, size_t dpitch, const void *src, size_t spitch,
                           size_t width, size_t height, ooc_copy_dir_t dir, ooc_stream_t s,
                           ooc_err_t *err);
    ooc_status_t (*gemm)(ooc_be_t *be, ooc_stream_t s, const ooc_tile_gemm_t *g, ooc_err_t *err);
    /* let this instance's device read and write peer's memory (another
     * instance of the same backend): *ok = 1 when it can (enabled now or
     * before), 0 when the topology does not allow it */
    ooc_status_t (*peer_enable)(ooc_be_t *be, ooc_be_t *peer, int *ok, ooc_err_t *err);
    /* async copy of bytes from src in peer's memory to dst in this instance's
     * (peer access enabled), on stream s of this instance */
    ooc_status_t (*copy_peer)(ooc_be_t *be, void *dst, ooc_be_t *peer, const void *src, size_t bytes,
                              ooc_stream_t s, ooc_err_t *err);
    /* async transpose on stream s of device memory: B (n x m, ldb) = A^T,
     * A m x n (lda), column-major, elements of `dtype` copied bit for bit;
     * A and B do not overlap; n at most 2^21 - 32 */
    ooc_status_t (*transpose)(ooc_be_t *be, ooc_stream_t s, ooc_dtype_t dtype, int m, int n, const void *A, int lda,
                              void *B, int ldb, ooc_err_t *err);
} ooc_be_ops_t;

/* Every backend instance starts with its ops table. */
struct ooc_be {
    const ooc_be_ops_t *ops;
};

extern const ooc_be_ops_t ooc_backend_host_ops;
/* devices the host backend simulates: OOC_HOST_DEVICES (default 1; 0 when it
 * is not a positive number) */
int ooc_backend_host_devices(void);
/* What computes the host backend's blocks, for a compute id (handle.c):
 * "openblas-<version>/<core>/<T>-thread(s)" (cap >= 1) */
void ooc_backend_host_id(char *buf, size_t cap);
/* The CUDA backend's tables ("cublas", "custom") are in backend_cuda.c,
 * reached through module.h. */

#endif
