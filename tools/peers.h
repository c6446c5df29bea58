/* SPDX-License-Identifier: MIT */
/*
 * peers.h: the methods `oocgemm bench` times beside libooc_gemm, on the same
 * host buffers:
 *   peer_serial    the serial loop: op(B) uploaded whole, then for each row
 *                  block of op(A): synchronous copy in, cuBLAS gemm,
 *                  synchronous copy out; one stream, no overlap
 *   peer_cublasxt  cublasXt's gemm on the context's GPUs (one or several) at a
 *                  block dim (0: its default), pinning mode off or on
 *   peer_incore    cuBLAS on operands held whole in device memory (when they
 *                  fit): the multiply alone, timed with CUDA events
 * and, for the floor of several GPUs, peer_bandwidth: the pinned copy
 * bandwidth of GPUs all copying at once.
 *
 * Implemented in peers_cuda.c (plain C calling the CUDA runtime, cuBLAS and
 * cublasXt). oocgemm links no CUDA library: in a shared build peers_cuda.c
 * is the module oocgemm_peers.so, installed beside the library's CUDA module,
 * and peers_load.c loads it at the first call (every function answers
 * PEER_UNAVAILABLE, with the reason, where it cannot be loaded or the
 * library was built without CUDA); a static build links it in. Nothing here
 * prints or exits: each function
 * returns a status and, unless PEER_OK, a message in msg naming the failed
 * call ("cublasXtDgemm: CUBLAS_STATUS_ALLOC_FAILED") or the reason for
 * skipping. Everything a function allocates is freed before it returns,
 * except what the context holds (cuBLAS and cublasXt handles) until
 * peer_close().
 */
#ifndef OOC_PEERS_H
#define OOC_PEERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ooc_gemm.h"

/** Statuses of the peer functions. */
enum {
    PEER_OK = 0,          /* ran; times written */
    PEER_UNSUPPORTED = 1, /* valid request this peer cannot do (does not fit, a size beyond int) */
    PEER_UNAVAILABLE = 2, /* built without CUDA */
    PEER_FAILED = 3       /* a CUDA or cuBLAS call failed (msg names it) */
};

/** Room for a message. */
#define PEER_MSG_LEN 512

/**
 * One multiply, C = alpha*op(A)*op(B) + beta*C, BLAS semantics, as ooc_gemm()
 * takes it: host pointers (pinned or pageable), alpha and beta pointing to
 * one element of dtype.
 */
typedef struct {
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    int64_t m, n, k;
    const void *alpha, *beta;
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    void *C;
    int64_t ldc;
} peer_gemm_t;

/** Per-shape state: the devices, a cuBLAS handle on the first, a cublasXt
 * handle on all of them (made at the first use). */
typedef struct peer_ctx_s peer_ctx_t;

/** Open a context on the CUDA devices @p devices[0..ndevices) (1 to
 * OOC_MAX_DEVICES): peer_serial and peer_incore run on the first, cublasXt on
 * all of them; @p tf32 allows TF32 in the cuBLAS multiplies of peer_serial and
 * peer_incore (cublasXt has no math mode). */
int peer_open(const int *devices, int ndevices, int tf32, peer_ctx_t **ctx, char *msg, size_t len);

/** Release the context and its handles (NULL is ignored). */
void peer_close(peer_ctx_t *ctx);

/** One run of the serial loop with @p block_rows rows of op(A) per block;
 * *seconds: wall time from B's upload to the last block's copy back
 * (device allocations not included). */
int peer_serial(peer_ctx_t *ctx, const peer_gemm_t *g, int64_t block_rows, double *seconds, char *msg,
                size_t len);

/** One cublasXt gemm at @p block_dim (0: cublasXtSetBlockDim is not called,
 * or the default is restored if an earlier call set another), pinning mode
 * on when @p pinning; *seconds: wall time of the gemm call alone. Row-major
 * problems are given to it as C^T = op(B)^T op(A)^T. */
int peer_cublasxt(peer_ctx_t *ctx, const peer_gemm_t *g, int block_dim, int pinning, double *seconds,
                  char *msg, size_t len);

/** cublasXt's default block dim (after the first peer_cublasxt call; 0 before). */
int peer_cublasxt_default_dim(const peer_ctx_t *ctx);

/** In-core cuBLAS: when A, B and C fit in free device memory (with a margin),
 * upload them (untimed), run one warm-up and @p reps timed multiplies (CUDA
 * events; C re-uploaded untimed before each when beta != 0), copy C back.
 * times[0..reps-1] receive the seconds of each. PEER_UNSUPPORTED when they
 * do not fit. */
int peer_incore(peer_ctx_t *ctx, const peer_gemm_t *g, int reps, double *times, char *msg, size_t len);

/** Pinned copy bandwidth of the GPUs @p devices[0..ndevices) all copying at
 * once, one stream per GPU and direction, @p bytes per GPU each way, best of
 * @p reps: host to device (*h2d), device to host (*d2h), and both directions
 * at once (*both: the bytes of both directions over the time), in bytes per
 * second. Allocates and frees its own buffers (2 x @p bytes pinned per GPU). */
int peer_bandwidth(const int *devices, int ndevices, size_t bytes, int reps, double *h2d, double *d2h, double *both,
                   char *msg, size_t len);

/** The module's table (peers_module.c, loaded by peers_load.c). */
#define PEER_MODULE_ABI 1
#define PEER_MODULE_FILE "oocgemm_peers.so"
#define PEER_MODULE_ENTRY "oocgemm_peers_v1"
typedef struct {
    int abi; /* PEER_MODULE_ABI */
    size_t gemm_size; /* sizeof(peer_gemm_t) */
    int (*open)(const int *devices, int ndevices, int tf32, peer_ctx_t **ctx, char *msg, size_t len);
    void (*close)(peer_ctx_t *ctx);
    int (*serial)(peer_ctx_t *ctx, const peer_gemm_t *g, int64_t block_rows, double *seconds, char *msg,
                  size_t len);
    int (*cublasxt)(peer_ctx_t *ctx, const peer_gemm_t *g, int block_dim, int pinning, double *seconds,
                    char *msg, size_t len);
    int (*cublasxt_default_dim)(const peer_ctx_t *ctx);
    int (*incore)(peer_ctx_t *ctx, const peer_gemm_t *g, int reps, double *times, char *msg, size_t len);
    int (*bandwidth)(const int *devices, int ndevices, size_t bytes, int reps, double *h2d, double *d2h,
                     double *both, char *msg, size_t len);
} peer_module_t;

#endif /* OOC_PEERS_H */
