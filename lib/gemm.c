/* SPDX-License-Identifier: MIT */
/*
 * gemm.c: the api layer. Checks every argument (overflow-safe) before
 * anything is written, handles the cases with no product to compute, then
 * asks the planner for a plan and the pipeline to run it. Knows nothing of
 * CUDA.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"
#include "handle.h"
#include "joblimits.h"
#include "module.h"
#include "numa.h"

#define DEVICE_MARGIN_MIN ((uint64_t)256 << 20) /* left free on the device for others */

double ooc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int ooc_is_zero(ooc_dtype_t t, const void *x)
{
    switch (t) {
    case OOC_R32: return ((const float *)x)[0] == 0.0f;
    case OOC_R64: return ((const double *)x)[0] == 0.0;
    case OOC_C32: return ((const float *)x)[0] == 0.0f && ((const float *)x)[1] == 0.0f;
    case OOC_C64: return ((const double *)x)[0] == 0.0 && ((const double *)x)[1] == 0.0;
    }
    return 0;
}

static int is_one(ooc_dtype_t t, const void *x)
{
    switch (t) {
    case OOC_R32: return ((const float *)x)[0] == 1.0f;
    case OOC_R64: return ((const double *)x)[0] == 1.0;
    case OOC_C32: return ((const float *)x)[0] == 1.0f && ((const float *)x)[1] == 0.0f;
    case OOC_C64: return ((const double *)x)[0] == 1.0 && ((const double *)x)[1] == 0.0;
    }
    return 0;
}

void ooc_scale_elems(ooc_dtype_t t, void *x, size_t count, const void *beta)
{
    /* BLAS: beta == 1 leaves C as it is. Computed, (1, 0) * (Inf, y) would be
     * (Inf, NaN) and (1, 0) * (-0, -1) would be (+0, -1) */
    if (is_one(t, beta)) return;
    if (ooc_is_zero(t, beta)) { /* BLAS: beta == 0 never reads C (NaN there does not propagate) */
        memset(x, 0, count * ooc_dtype_size(t));
        return;
    }
    for (size_t i = 0; i < count; i++) {
        switch (t) {
        case OOC_R32: ((float *)x)[i] *= *(const float *)beta; break;
        case OOC_R64: ((double *)x)[i] *= *(const double *)beta; break;
        case OOC_C32: {
            float *c = (float *)x + 2 * i, br = ((const float *)beta)[0], bi = ((const float *)beta)[1];
            float re = c[0] * br - c[1] * bi, im = c[0] * bi + c[1] * br;
            c[0] = re;
            c[1] = im;
            break;
        }
        case OOC_C64: {
            double *c = (double *)x + 2 * i, br = ((const double *)beta)[0], bi = ((const double *)beta)[1];
            double re = c[0] * br - c[1] * bi, im = c[0] * bi + c[1] * br;
            c[0] = re;
            c[1] = im;
            break;
        }
        }
    }
}

/* C = beta*C without reading C when beta == 0 (the k == 0 or alpha == 0 case). */
static void scale_c(ooc_dtype_t t, ooc_layout_t layout, int64_t m, int64_t n, const void *beta,
                    void *C, int64_t ldc)
{
    int64_t lines = layout == OOC_COL_MAJOR ? n : m, len = layout == OOC_COL_MAJOR ? m : n;
    size_t e = ooc_dtype_size(t);
    for (int64_t j = 0; j < lines; j++)
        ooc_scale_elems(t, (char *)C + (size_t)j * (size_t)ldc * e, (size_t)len, beta);
}

/* Bytes spanned by a matrix of `lines` lines of leading dimension ld; 0 if it
 * does not fit in 63 bits. */
static int span_ok(int64_t ld, int64_t lines, size_t e)
{
    int64_t elems, bytes;
    if (lines == 0) return 1;
    return !__builtin_mul_overflow(ld, lines, &elems) && !__builtin_mul_overflow(elems, (int64_t)e, &bytes);
}

static int valid_op(ooc_op_t op) { return op == OOC_OP_N || op == OOC_OP_T || op == OOC_OP_C; }

/* Whether two matrices as stored share a byte: xlines lines of xlen
 * elements, ldx apart, e bytes each (spans checked < 2^63 bytes). Exact, not
 * by their address ranges: disjoint blocks of one larger matrix (A, B and C
 * as views of it, as a blocked factorisation passes them) interleave. */
static int stored_overlap(const void *xp, int64_t xlines, int64_t xlen, int64_t ldx, const void *yp,
                          int64_t ylines, int64_t ylen, int64_t ldy, size_t e)
{
    if (xlines <= 0 || xlen <= 0 || ylines <= 0 || ylen <= 0) return 0;
    uint64_t x = (uintptr_t)xp, y = (uintptr_t)yp;
    uint64_t xend = x + ((uint64_t)(xlines - 1) * (uint64_t)ldx + (uint64_t)xlen) * e;
    uint64_t yend = y + ((uint64_t)(ylines - 1) * (uint64_t)ldy + (uint64_t)ylen) * e;
    if (xend <= y || yend <= x) return 0;
    if (xlines > ylines) { /* walk the one with fewer lines */
        uint64_t t = x;
        int64_t a = xlines, b = xlen, c = ldx;
        x = y, xlines = ylines, xlen = ylen, ldx = ldy;
        y = t, ylines = a, ylen = b, ldy = c;
    }
    uint64_t yl = (uint64_t)ylen * e, step = (uint64_t)ldy * e;
    for (int64_t i = 0; i < xlines; i++) {
        uint64_t s = x + (uint64_t)i * (uint64_t)ldx * e, t = s + (uint64_t)xlen * e; /* line i: [s, t) */
        /* the first line of y that ends after s, if it starts before t */
        uint64_t r = s < y + yl ? 0 : (s - y - yl) / step + 1;
        if (r < (uint64_t)ylines && y + r * step < t) return 1;
    }
    return 0;
}

/* The leading dimension the library uses for a stored matrix of `lines`
 * lines of `len` elements: ld, or for a single line (where BLAS never
 * steps by it, so any ld >= len is valid, 2^60 too) its length. */
static int64_t used_ld(int64_t ld, int64_t lines, int64_t len)
{
    return lines <= 1 ? (len > 1 ? len : 1) : ld;
}

/* Check everything; returns the status naming the first bad argument (in
 * the order of the reference BLAS). ld[0..2]: lda, ldb and ldc as the
 * library uses them (used_ld()). */
static ooc_status_t check(ooc_handle_t *h, ooc_dtype_t t, ooc_layout_t layout, ooc_op_t ta,
                          ooc_op_t tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                          const void *A, int64_t lda, const void *B, int64_t ldb,
                          const void *beta, const void *C, int64_t ldc, int64_t ld[3])
{
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(t != OOC_R32 && t != OOC_R64 && t != OOC_C32 && t != OOC_C64, err,
                        OOC_ERR_INVALID_DTYPE, "ooc_gemm: dtype %d is not R32, R64, C32 or C64", (int)t);
    OOC_RETURN_ERROR_IF(layout != OOC_ROW_MAJOR && layout != OOC_COL_MAJOR, err, OOC_ERR_INVALID_LAYOUT,
                        "ooc_gemm: layout %d is neither OOC_ROW_MAJOR (101) nor OOC_COL_MAJOR (102)", (int)layout);
    OOC_RETURN_ERROR_IF(!valid_op(ta), err, OOC_ERR_INVALID_TRANSA, "ooc_gemm: transa %d is not N, T or C", (int)ta);
    OOC_RETURN_ERROR_IF(!valid_op(tb), err, OOC_ERR_INVALID_TRANSB, "ooc_gemm: transb %d is not N, T or C", (int)tb);
    OOC_RETURN_ERROR_IF(m < 0, err, OOC_ERR_INVALID_M, "ooc_gemm: m = %lld is negative", (long long)m);
    OOC_RETURN_ERROR_IF(n < 0, err, OOC_ERR_INVALID_N, "ooc_gemm: n = %lld is negative", (long long)n);
    OOC_RETURN_ERROR_IF(k < 0, err, OOC_ERR_INVALID_K, "ooc_gemm: k = %lld is negative", (long long)k);

    /* stored shapes: lines of length `len` (the leading dimension bounds len) */
    int col = layout == OOC_COL_MAJOR;
    int64_t a_len = col ? (ta == OOC_OP_N ? m : k) : (ta == OOC_OP_N ? k : m);
    int64_t a_lines = col ? (ta == OOC_OP_N ? k : m) : (ta == OOC_OP_N ? m : k);
    int64_t b_len = col ? (tb == OOC_OP_N ? k : n) : (tb == OOC_OP_N ? n : k);
    int64_t b_lines = col ? (tb == OOC_OP_N ? n : k) : (tb == OOC_OP_N ? k : n);
    int64_t c_len = col ? m : n, c_lines = col ? n : m;
    const char *order = col ? "column-major" : "row-major";
    OOC_RETURN_ERROR_IF(lda < (a_len > 1 ? a_len : 1), err, OOC_ERR_INVALID_LDA,
                        "ooc_gemm: lda = %lld < %lld, the length of A's stored lines (A is %s, %s: %s)",
                        (long long)lda, (long long)(a_len > 1 ? a_len : 1), ta == OOC_OP_N ? "m x k" : "k x m", order,
                        col ? "its columns" : "its rows");
    OOC_RETURN_ERROR_IF(ldb < (b_len > 1 ? b_len : 1), err, OOC_ERR_INVALID_LDB,
                        "ooc_gemm: ldb = %lld < %lld, the length of B's stored lines (B is %s, %s: %s)",
                        (long long)ldb, (long long)(b_len > 1 ? b_len : 1), tb == OOC_OP_N ? "k x n" : "n x k", order,
                        col ? "its columns" : "its rows");
    OOC_RETURN_ERROR_IF(ldc < (c_len > 1 ? c_len : 1), err, OOC_ERR_INVALID_LDC,
                        "ooc_gemm: ldc = %lld < %lld, the length of C's stored lines (C is m x n, %s: %s)",
                        (long long)ldc, (long long)(c_len > 1 ? c_len : 1), order, col ? "its columns" : "its rows");
    const int64_t lda_given = lda, ldb_given = ldb, ldc_given = ldc; /* (the messages name the caller's) */
    ld[0] = lda = used_ld(lda, a_lines, a_len);
    ld[1] = ldb = used_ld(ldb, b_lines, b_len);
    ld[2] = ldc = used_ld(ldc, c_lines, c_len);
    size_t e = ooc_dtype_size(t);
    OOC_RETURN_ERROR_IF(!span_ok(lda, a_lines, e) || !span_ok(ldb, b_lines, e) || !span_ok(ldc, c_lines, e),
                        err, OOC_ERR_OVERFLOW, "ooc_gemm: a matrix spans more than 2^63 bytes");
    OOC_RETURN_ERROR_IF(alpha == NULL, err, OOC_ERR_NULL_ARG, "ooc_gemm: alpha is NULL");
    OOC_RETURN_ERROR_IF(beta == NULL, err, OOC_ERR_NULL_ARG, "ooc_gemm: beta is NULL");
    OOC_RETURN_ERROR_IF(A == NULL && m > 0 && k > 0, err, OOC_ERR_NULL_A, "ooc_gemm: A is NULL");
    OOC_RETURN_ERROR_IF(B == NULL && k > 0 && n > 0, err, OOC_ERR_NULL_B, "ooc_gemm: B is NULL");
    OOC_RETURN_ERROR_IF(C == NULL && m > 0 && n > 0, err, OOC_ERR_NULL_C, "ooc_gemm: C is NULL");
    if (m > 0 && n > 0 && k > 0) { /* (A and B are read: C must not be any of them) */
        OOC_RETURN_ERROR_IF(stored_overlap(C, c_lines, c_len, ldc, A, a_lines, a_len, lda, e), err, OOC_ERR_OVERLAP,
                            "ooc_gemm: C (%p, ldc %lld) shares elements with A (%p, lda %lld): C is written while A "
                            "is read", C, (long long)ldc_given, A, (long long)lda_given);
        OOC_RETURN_ERROR_IF(stored_overlap(C, c_lines, c_len, ldc, B, b_lines, b_len, ldb, e), err, OOC_ERR_OVERLAP,
                            "ooc_gemm: C (%p, ldc %lld) shares elements with B (%p, ldb %lld): C is written while B "
                            "is read", C, (long long)ldc_given, B, (long long)ldb_given);
    }
    return OOC_SUCCESS;
}

/* one per CPU this job may run on (its affinity mask), at most 16 */
static int default_staging_threads(void)
{
    int n = ooc_limit_cpus();
    return n > 16 ? 16 : n;
}

/* How the copies of problem q lie (plan.h ooc_plan_input_t.lines): a view
 * whose columns are contiguous copies a block of its rows as short lines
 * far apart (or, in a file, reads or writes them one line at a time), and a
 * resident op(B) whose rows are contiguous goes up in chunks of rows (of k). */
static int copy_lines(const ooc_problem_t *q)
{
    int col = q->layout == OOC_COL_MAJOR, a_rows = col == (q->ta == OOC_OP_N);
    return (q->A.pinned && a_rows ? OOC_PLAN_STRIDED_A : 0) |
           (col == (q->tb == OOC_OP_N) ? 0 : OOC_PLAN_B_ROWS) |
           ((q->C.pinned || q->c_in.pinned) && col ? OOC_PLAN_STRIDED_C : 0) |
           (q->A.fd >= 0 && a_rows ? OOC_PLAN_FILE_LINES_A : 0) |
           ((q->C.fd >= 0 || q->c_in.fd >= 0) && col ? OOC_PLAN_FILE_LINES_C : 0);
}

/* Each device's share of a given staging budget (OOC_PARAM_HOST_MEM is the
 * whole job's: each device has its own ring); UINT64_MAX when automatic. */
static uint64_t given_staging(const ooc_handle_t *h)
{
    uint64_t host = (uint64_t)h->param[OOC_PARAM_HOST_MEM];
    return host ? host / (uint64_t)h->ndev : UINT64_MAX;
}

/* A staged op(A) in memory goes to the device through THROUGH_BUFS pinned
 * buffers of this many bytes that stay in the CPU's cache
 * (OOC_PARAM_STAGE_CHUNK; 0: never). The staging threads copy a chunk into
 * one with plain stores while the copy engines read the last from the
 * cache: host memory sees the pageable read alone, where a ring's slot (a
 * whole block, far larger than the cache) is written to memory and read
 * back by the copy engines, three passes. When the buffers do not stay
 * cached (a cache shared with other jobs), plain stores cost a fourth pass
 * (the line read before it is written): automatic only where the last-level
 * cache holds four times the buffers. Measured on H200 machines (16-core
 * Xeon, 300 MiB L3), DGEMM 100003x777x50001 beta -1 from pageable memory (A
 * 40 GB), best of 2 or 3 (docs/PERFORMANCE.md session 27): the ring
 * 0.889-1.08 s; 3 x 32 MiB 0.777-0.93 on most machines but 1.06 and 1.39 on
 * a busy one, where 3 x 16 MiB gave 0.85-0.88 against the ring's 0.96-1.05;
 * 4 x 16 MiB 0.787, 8 x 16 MiB 0.858 (128 MiB: less of it stays cached), 3 x
 * 64 MiB 1.30; 8 MiB chunks 0.97 and 4 MiB 1.95 (the threads' hand-over for
 * each chunk costs more than a small chunk's copy). Not automatic when the
 * buffers would take over half of the staging budget (host, per device):
 * that one is small on purpose, and the ring's slots then serve as before. */
#define THROUGH_BUFS 3
#define THROUGH_AUTO_CHUNK ((uint64_t)16 << 20)
static uint64_t through_chunk(const ooc_handle_t *h, uint64_t host)
{
    int64_t v = h->param[OOC_PARAM_STAGE_CHUNK];
    if (v == 1) return 0;
    if (v > 1) return ((uint64_t)v + 4095) & ~(uint64_t)4095;
    if (h->be_kind == OOC_BACKEND_HOST) return 0; /* no copy engines: not measured */
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    uint64_t bufs = THROUGH_BUFS * THROUGH_AUTO_CHUNK;
    return l3 > 0 && (uint64_t)l3 >= 4 * bufs && bufs <= host / 2 ? THROUGH_AUTO_CHUNK : 0;
}

/* The planner's input for p on the open backend: budgets from the options,
 * else what the device with the least has free (counting our cached buffers
 * as free) minus a margin: every device runs the same plan, so that a block
 * is computed the same way whichever device computes it. */
static ooc_status_t plan_input(ooc_handle_t *h, const ooc_problem_t *p, ooc_plan_input_t *in,
                               uint64_t *dev_budget, uint64_t *host_budget)
{
    ooc_err_t *err = &h->err;
    int ring = (int)h->param[OOC_PARAM_RING_DEPTH];
    uint64_t dev = (uint64_t)h->param[OOC_PARAM_DEVICE_MEM];
    if (dev == 0) {
        dev = UINT64_MAX;
        for (int d = 0; d < h->ndev; d++) {
            ooc_be_t *be = h->dev[d].be;
            size_t free_b, total_b;
            OOC_FORWARD(be->ops->activate(be, err));
            OOC_FORWARD(be->ops->mem_info(be, &free_b, &total_b, err));
            uint64_t held = h->dev[d].res.dev_bytes;
            if (h->be_kind == OOC_BACKEND_HOST) /* one memory: every device's buffers are in it */
                for (int e = 0; e < h->ndev; e++) held += e == d ? 0 : h->dev[e].res.dev_bytes;
            uint64_t avail = (uint64_t)free_b + held, margin = (uint64_t)total_b / 32;
            /* a GPU's driver and neighbours need a floor; the host backend's
             * "device" is the job's memory, already given at half its room */
            if (margin < DEVICE_MARGIN_MIN && h->be_kind != OOC_BACKEND_HOST) margin = DEVICE_MARGIN_MIN;
            avail = avail > margin ? avail - margin : 0;
            /* the host backend's devices all share that one memory */
            if (h->be_kind == OOC_BACKEND_HOST) avail /= (uint64_t)h->ndev;
            if (avail < dev) dev = avail;
        }
        OOC_FORWARD(h->dev[0].be->ops->activate(h->dev[0].be, err));
    }
    uint64_t host = given_staging(h);
    if (host == UINT64_MAX) {
        /* from the job's memory limits (RAM, or its cgroup's), counting the
         * staging rings we hold already as available, as for the devices;
         * each device has its own ring */
        ooc_limits_t lim;
        ooc_limits_get(&lim);
        for (int d = 0; d < h->ndev; d++) {
            uint64_t held = (uint64_t)h->dev[d].res.pin_bytes;
            lim.mem_available = lim.mem_available > UINT64_MAX - held ? UINT64_MAX : lim.mem_available + held;
        }
        host = ooc_limits_staging_budget(&lim, h->ndev);
    }
    ooc_plan_input_t x = {p->m, p->n, p->k, ooc_dtype_size(p->dtype), !p->beta_zero,
                          !p->A.pinned, !p->B.pinned, !p->C.pinned || !p->c_in.pinned,
                          dev, host,
                          h->param[OOC_PARAM_BLOCK_ROWS], ring, (int)h->param[OOC_PARAM_STREAMS], 1,
                          (int)h->param[OOC_PARAM_TAIL], (int)h->param[OOC_PARAM_B_CHUNKS],
                          p->dtype == OOC_C32 || p->dtype == OOC_C64, h->ndev, 0.0,
                          (int)h->param[OOC_PARAM_A_PIECES], {0, 0},
                          /* the planner counts the buffers' alignment for the ring it tries */
                          ooc_res_slack(0), ooc_res_slack(1) - ooc_res_slack(0), 0, 0, {0, 0}, 0, 0, 0, {0, 0}};
    /* how the copies lie in each orientation: the problem, and its transpose
     * as the pipeline would run it */
    ooc_problem_t t = *p;
    ooc_problem_transpose(&t);
    x.lines[0] = copy_lines(p);
    x.lines[1] = copy_lines(&t);
    /* the streamed operand of each orientation: A, or B when transposed */
    x.through_chunk = through_chunk(h, host);
    x.through_bufs = x.through_chunk ? THROUGH_BUFS : 0;
    x.through_ok[0] = p->A.fd < 0;
    x.through_ok[1] = p->B.fd < 0;
    /* C out the same way (its mirror: the copy engines write a chunk into a
     * buffer in the cache, the threads copy it into C with streaming
     * stores), when C is pageable memory and that was not refused. Measured
     * on an H200 (16-core Xeon, 300 MiB L3), best of 5, two rounds, against
     * the out-slots (docs/PERFORMANCE.md session 29): DGEMM 35667x22777x1141
     * TN row-major (C 6.5 GB) 0.147, 0.138 s against 0.171, 0.174; ZGEMM
     * 36589x8473x119 CT beta 0.5 0.180, 0.183 against 0.208, 0.204 */
    x.through_out_ok = !p->C.pinned && p->C.fd < 0 && h->param[OOC_PARAM_STAGE_C] != 1;
    /* and C's blocks read in (C0, then C itself after a k-panel) up through
     * the reader's buffers, when both are in memory (or pinned) */
    x.through_cin_ok = (p->c_in.pinned || p->c_in.fd < 0) && (p->C.pinned || p->C.fd < 0) &&
                       h->param[OOC_PARAM_STAGE_C] != 1;
    /* TF32 multiplies single precision some 7 times faster than FP64/FP32
     * (373 against 52-56 TFLOP/s on an H200): a copied byte buys that much
     * more math, and copies bound shapes that FP32 would not */
    if ((p->dtype == OOC_R32 || p->dtype == OOC_C32) && h->param[OOC_PARAM_MATH_MODE] == OOC_MATH_TF32)
        x.flop_per_byte = 7000;
    /* TF32 SGEMM on the tensor cores runs a third as fast when its columns
     * are not 16-byte aligned or m or k is not a multiple of 4, DGEMM some
     * 15% slower (an H200, docs/PERFORMANCE.md sessions 39 and 40): the
     * tiles' lines on 16-byte pitches, parts at multiples of 8, and
     * backend_cuda.c c_gemm splits off the rest of m and k, where
     * backend.h ooc_tiles_aligned says (of cuBLAS's op pair, which the
     * planner's transposed problem keeps). TF32 27593 x 4221 x 33345: 0.122
     * -> 0.0924 s; DGEMM 7001 x 11003 x 9005 TN: 0.0406 -> 0.0343 s. Our
     * own DGEMM kernel (custom) was not measured so: its tiles stay packed */
    int rm = p->layout == OOC_ROW_MAJOR;
    int x_tr = (rm ? p->tb : p->ta) != OOC_OP_N, y_tr = (rm ? p->ta : p->tb) != OOC_OP_N;
    int own = p->dtype == OOC_R64 && h->be_kind == OOC_BACKEND_CUSTOM;
    x.pad_lines = ooc_tiles_aligned(p->dtype, h->param[OOC_PARAM_MATH_MODE] == OOC_MATH_TF32, x_tr, y_tr) && !own;
    /* DGEMM's pair NT of an odd n: op(B) transposed on the device where
     * that makes the call NN (backend.h ooc_resident_transposed), then
     * aligned and split: in the orientation that runs the problem
     * column-major (0: the caller's layout, whose C has n columns; 1: the
     * transposed problem, the other layout, whose C^T has m) */
    x.b_transpose[0] = ooc_resident_transposed(p->dtype, !rm, x_tr, y_tr, p->n) && !own;
    x.b_transpose[1] = ooc_resident_transposed(p->dtype, rm, x_tr, y_tr, p->m) && !own;
    *in = x;
    *dev_budget = dev;
    *host_budget = host;
    return OOC_SUCCESS;
}

/* "; it needs ..." for a refusal: the budgets that would do, each named
 * where it is above the one given (need_dev each device's; need_host each
 * device's, named for all of them, as OOC_PARAM_HOST_MEM is the job's), both
 * if neither is; and, where the plan at the budgets named stages through
 * OOC_PARAM_STAGE_CHUNK's buffers as set, that a smaller chunk needs less
 * (not for operands in files, which never go that way). */
static void say_need(const ooc_handle_t *h, const ooc_plan_input_t *in, uint64_t need_dev, uint64_t need_host,
                     char *buf, size_t len)
{
    int nd = need_dev > in->device_budget, nh = need_host > in->host_budget;
    if (!nd && !nh) nd = nh = 1;
    nh = nh && need_host;
    const char *each = h->ndev > 1 ? " per device" : "", *all = h->ndev > 1 ? " for all the devices" : "";
    unsigned long long job_host = need_host > UINT64_MAX / (uint64_t)h->ndev ? UINT64_MAX
                                                                             : need_host * (uint64_t)h->ndev;
    char chunk[224] = "";
    ooc_plan_input_t at = *in;
    ooc_plan_t p;
    at.device_budget = nd ? need_dev : in->device_budget;
    at.host_budget = need_host;
    if (nh && in->through_chunk && h->param[OOC_PARAM_STAGE_CHUNK] > 1 && ooc_plan_make(&at, &p) == OOC_SUCCESS &&
        (p.through_chunk || p.through_cin_chunk || p.through_out_chunk))
        snprintf(chunk, sizeof chunk,
                 " (%d buffers of %llu bytes for each staged operand among it, OOC_PARAM_STAGE_CHUNK as set, "
                 "oocgemm --stage-chunk: a smaller chunk, or none, needs less)",
                 in->through_bufs, (unsigned long long)in->through_chunk);
    if (nd && nh)
        snprintf(buf, len, "; it needs a device memory budget of at least %llu bytes%s and a staging budget of at "
                 "least %llu bytes%s%s", (unsigned long long)need_dev, each, job_host, all, chunk);
    else if (nh)
        snprintf(buf, len, "; it needs a staging budget of at least %llu bytes%s%s", job_host, all, chunk);
    else
        snprintf(buf, len, "; it needs a device memory budget of at least %llu bytes%s", (unsigned long long)need_dev,
                 each);
}

ooc_status_t ooc_api_plan(ooc_handle_t *h, const ooc_problem_t *p, const ooc_plan_t *fixed, int allow_swap,
                          ooc_plan_t *plan)
{
    ooc_plan_input_t in;
    uint64_t dev, host;
    OOC_FORWARD(plan_input(h, p, &in, &dev, &host));
    in.allow_swap = allow_swap;
    ooc_status_t st = fixed ? ooc_plan_fixed(&in, fixed, plan) : ooc_plan_make(&in, plan);
    if (st == OOC_ERR_BUDGET_TOO_SMALL) {
        /* what would fit: the budgets as set (OOC_PARAM_DEVICE_MEM is each
         * device's, OOC_PARAM_HOST_MEM the job's) */
        uint64_t need_dev = 0, need_host = 0;
        /* one budget short and the other enough: that one raised alone
         * (from the least device memory, a staging budget too small for
         * OOC_PARAM_STAGE_CHUNK's buffers named 5 GB for a 72 MB problem) */
        if (!fixed && in.block_rows == 0) ooc_plan_least_useful_alone(&in, &need_dev, &need_host);
        if (!need_dev && !need_host) {
            ooc_plan_least_need(&in, fixed, &need_dev, &need_host);
            /* a fresh plan of blocks not fixed must be useful too (below):
             * the budgets named are enough for that, not only for some plan
             * (the least that plan, unchanged where they are useful already) */
            if (!fixed && in.block_rows == 0) {
                ooc_plan_input_t at = in;
                uint64_t useful_dev, useful_host;
                at.device_budget = need_dev;
                at.host_budget = need_host;
                ooc_plan_least_useful(&at, &useful_dev, &useful_host);
                if (useful_dev || useful_host) need_dev = useful_dev, need_host = useful_host;
            }
        }
        char need[512];
        say_need(h, &in, need_dev, need_host, need, sizeof need);
        return OOC_ERR(&h->err, st,
                       "planner: no plan for m=%lld n=%lld k=%lld fits %llu bytes of device memory "
                       "and %llu bytes of pinned staging%s (the buffers' alignment included)%s%s",
                       (long long)p->m, (long long)p->n, (long long)p->k, (unsigned long long)dev,
                       (unsigned long long)host, h->ndev > 1 ? " per device" : "",
                       fixed ? " with the plan given or recorded in the journal" : "", need);
    }
    OOC_RETURN_ERROR_IF(st != OOC_SUCCESS, &h->err, st, "planner: rejected its input");
    /* a fresh plan of blocks the caller did not fix: refused when its tiles
     * are too many and too small to be worth running (ooc_plan_useful) */
    if (!fixed && in.block_rows == 0 && !ooc_plan_useful(plan, p->m, p->n, p->k)) {
        uint64_t need_dev, need_host;
        ooc_plan_least_useful(&in, &need_dev, &need_host);
        char need[512] = "";
        if (need_dev || need_host) say_need(h, &in, need_dev, need_host, need, sizeof need);
        const char *each = h->ndev > 1 ? " per device" : "";
        double tiles = (double)plan->m_blocks * (double)plan->n_panels * (double)plan->k_panels;
        return OOC_ERR(&h->err, OOC_ERR_BUDGET_TOO_SMALL,
                       "planner: %llu bytes of device memory%s and %llu bytes of pinned staging%s fit only tiles of "
                       "%lld x %lld x %lld for m=%lld n=%lld k=%lld, %.0f of them, whose overheads (copies and a "
                       "launch each) would take far longer than the multiply (a useful plan has at most %lld "
                       "tiles, or tiles of %.0f multiply-adds)%s (a budget is in bytes)",
                       (unsigned long long)dev, each, (unsigned long long)host, each,
                       (long long)plan->mb, (long long)plan->nb, (long long)plan->kb, (long long)p->m,
                       (long long)p->n, (long long)p->k, tiles, (long long)OOC_PLAN_USEFUL_TILES,
                       OOC_PLAN_USEFUL_VOLUME, need);
    }
    return OOC_SUCCESS;
}

/* The NUMA node of every GPU of the handle (numa.h; asked once per device
 * opened): -1 on the host backend, when one is unknown, or when they differ. */
static int devices_node(ooc_handle_t *h)
{
    if (h->be_kind == OOC_BACKEND_HOST) return -1;
    const ooc_cuda_module_t *mod = ooc_cuda_state()->mod;
    int node = -1;
    for (int d = 0; d < h->ndev; d++) {
        ooc_dev_t *dev = &h->dev[d];
        if (!dev->numa_asked) {
            ooc_device_info_t info;
            ooc_err_t ignored;
            memset(&info, 0, sizeof info);
            dev->numa_node = mod && mod->device(dev->index, &info, &ignored) == OOC_SUCCESS
                                 ? ooc_numa_node_of_pci(ooc_numa_root(), info.pci_bus_id)
                                 : -1;
            dev->numa_asked = 1;
        }
        if (dev->numa_node < 0 || (d > 0 && dev->numa_node != node)) return -1;
        node = dev->numa_node;
    }
    return node;
}

/* The node the staging threads keep to, and its CPUs into cpus: the GPUs'
 * (devices_node), when it
 * has at least `threads` CPUs this process may run on for each process of
 * the job on this host (the launcher's count: ranks that share one mask do
 * not crowd one socket) and they are not all of them; else -1 (and with
 * OOC_NUMA=0). So binding never costs a thread, and does nothing on a host
 * of one node or where a launcher already bound the process. */
static int staging_node(ooc_handle_t *h, int threads, unsigned long cpus[OOC_NUMA_MASK_WORDS])
{
    int node = ooc_numa_wanted() ? devices_node(h) : -1;
    if (node < 0) return -1;
    int all = 0, n = ooc_numa_node_cpus(ooc_numa_root(), node, cpus, OOC_NUMA_MAX_CPUS, &all);
    return n >= threads * ooc_numa_local_procs() && !all ? node : -1;
}

ooc_status_t ooc_api_staging_pool(ooc_handle_t *h, ooc_err_t *err)
{
    int threads = h->param[OOC_PARAM_STAGING_THREADS] ? (int)h->param[OOC_PARAM_STAGING_THREADS]
                                                      : default_staging_threads();
    unsigned long cpus[OOC_NUMA_MASK_WORDS];
    int node = staging_node(h, threads, cpus);
    /* the submitting thread copies too: threads - 1 helpers */
    if (h->pool && (ooc_pool_threads(h->pool) != threads - 1 || ooc_pool_node(h->pool) != node)) {
        ooc_pool_destroy(h->pool);
        h->pool = NULL;
    }
    if (h->pool == NULL) OOC_FORWARD(ooc_pool_create(threads - 1, node, node >= 0 ? cpus : NULL, &h->pool, err));
    return OOC_SUCCESS;
}

ooc_status_t ooc_api_prepare(ooc_handle_t *h, const ooc_problem_t *p, const ooc_plan_t *plan)
{
    ooc_err_t *err = &h->err;
    if (!p->A.pinned || !p->B.pinned || !p->C.pinned || !p->c_in.pinned) OOC_FORWARD(ooc_api_staging_pool(h, err));
    /* budgets given: buffers held beyond them go (lowered since the last call) */
    uint64_t dev_limit = h->param[OOC_PARAM_DEVICE_MEM] ? (uint64_t)h->param[OOC_PARAM_DEVICE_MEM] : UINT64_MAX;
    uint64_t pin_limit = given_staging(h);
    for (int d = 0; d < h->ndev; d++) {
        ooc_dev_t *dev = &h->dev[d];
        OOC_FORWARD(dev->be->ops->activate(dev->be, err));
        OOC_FORWARD(ooc_res_reserve(dev->be, &dev->res, plan, dev_limit, pin_limit, err));
    }
    return h->dev[0].be->ops->activate(h->dev[0].be, err);
}

/* A trace summary's figures into the public stats' fields (whole run or one device). */
static void busy_times(const ooc_trace_summary_t *t, double *wall, double *h2d, double *compute, double *d2h,
                       double *read, double *write, double *efficiency)
{
    *wall = t->wall;
    *h2d = t->busy[OOC_LANE_IN];
    *compute = t->busy[OOC_LANE_COMPUTE];
    *d2h = t->busy[OOC_LANE_OUT];
    *read = t->busy[OOC_LANE_READ];
    *write = t->busy[OOC_LANE_WRITE];
    *efficiency = t->overlap_efficiency;
}

/* The handle's stats from a run's (the pipeline's sums and each device's). */
static void record_stats(ooc_handle_t *h, const ooc_problem_t *p, const ooc_plan_t *plan, const ooc_run_stats_t *rs,
                         double t0, int share_b, int unshared)
{
    ooc_stats_t *s = &h->stats;
    s->block_rows = plan->mb;
    s->panel_cols = plan->nb;
    s->panel_depth = plan->kb;
    s->blocks = plan->m_blocks;
    s->panels = plan->n_panels * plan->k_panels;
    s->ring_depth = plan->ring;
    s->streams = plan->streams;
    s->staged_a = plan->swap ? !p->B.pinned : !p->A.pinned; /* (swapped: p is the transposed problem, its B the caller's A) */
    s->staged_c = !p->C.pinned;
    s->a_resident = plan->swap;
    s->device_bytes = plan->device_bytes;
    s->host_bytes = plan->host_bytes;
    s->bytes_h2d = rs->sum.bytes_h2d;
    s->bytes_d2h = rs->sum.bytes_d2h;
    s->bytes_peer = rs->sum.bytes_peer;
    s->bytes_staged = rs->sum.bytes_staged_in + rs->sum.bytes_staged_out;
    s->bytes_staged_cached = rs->sum.bytes_staged_cached;
    s->stage_chunk = (int64_t)plan->through_chunk;
    s->stage_bufs = plan->through_bufs;
    s->stage_cin_chunk = (int64_t)plan->through_cin_chunk;
    s->stage_cin_bufs = plan->through_cin_bufs;
    s->stage_out_chunk = (int64_t)plan->through_out_chunk;
    s->stage_out_bufs = plan->through_out_bufs;
    /* the resident operand goes up to each device, or once in all when they
     * share it */
    uint64_t least = rs->ndev > 1 && !share_b ? plan->least_traffic_each_bytes : plan->least_traffic_bytes;
    s->least_traffic_bytes = least < s->bytes_h2d + s->bytes_d2h ? least : s->bytes_h2d + s->bytes_d2h;
    s->a_pieces = plan->a_pieces;
    s->c_chunks = plan->a_pieces > 1 ? plan->b_chunks : 1;
    s->b_follow = ooc_pipe_b_follows(plan, p->B.pinned, share_b);
    s->aligned_tiles = plan->pad_lines;
    s->resident_transposed = plan->b_transposed;
    s->b_shared = share_b;
    s->probe_host_gbps = h->peer.rates ? h->peer.host_gbps : 0;
    s->probe_peer_gbps = h->peer.rates ? h->peer.peer_gbps : 0;
    snprintf(s->b_how, sizeof s->b_how, "%s",
             h->ndev < 2 ? "one device: uploaded from the host"
                         : share_b ? "uploaded once, shared between the devices" : "uploaded from the host to each device");
    if (h->ndev > 1 && (h->peer.why[0] || unshared)) {
        size_t at = strlen(s->b_how);
        snprintf(s->b_how + at, sizeof s->b_how - at, " (%.*s)", (int)(sizeof s->b_how - at - 4),
                 unshared ? "transposed on each device: not shared" : h->peer.why);
    }
    s->traced = rs->traced;
    s->trace_status = rs->trace_status;
    snprintf(s->trace_error, sizeof s->trace_error, "%s", rs->trace_error);
    if (rs->traced)
        busy_times(&rs->trace_total, &s->trace_wall, &s->busy_h2d, &s->busy_compute, &s->busy_d2h, &s->busy_read,
                   &s->busy_write, &s->overlap_efficiency);
    s->ndevices = rs->ndev;
    for (int d = 0; d < rs->ndev; d++) {
        ooc_device_stats_t *v = &s->device[d];
        const ooc_pipe_stats_t *ps = &rs->dev[d];
        memset(v, 0, sizeof *v);
        v->device = h->dev[d].index;
        v->blocks = ps->blocks;
        v->bytes_h2d = ps->bytes_h2d;
        v->bytes_d2h = ps->bytes_d2h;
        v->bytes_peer = ps->bytes_peer;
        v->seconds = ps->t_end > t0 ? ps->t_end - t0 : 0;
        if (rs->traced)
            busy_times(&rs->trace[d], &v->trace_wall, &v->busy_h2d, &v->busy_compute, &v->busy_d2h, &v->busy_read,
                       &v->busy_write, &v->overlap_efficiency);
    }
}

ooc_status_t ooc_api_execute(ooc_handle_t *h, ooc_problem_t *p, const ooc_plan_t *plan,
                             const ooc_run_hooks_t *hooks)
{
    ooc_err_t *err = &h->err;
    if (plan->swap) ooc_problem_transpose(p);

    ooc_run_hooks_t hk;
    memset(&hk, 0, sizeof hk);
    if (hooks) hk = *hooks;
    hk.trace = h->trace_path != NULL;
    hk.trace_path = h->trace_path;
    hk.cancel = &h->cancel;
    OOC_FORWARD(ooc_peer_decide(h, &hk.share_b));
    /* op(B) transposed on the device is never shared (multi.c): each device uploads its own */
    int unshared = hk.share_b && plan->b_transposed;
    if (unshared) hk.share_b = 0;
    ooc_run_stats_t *rs = malloc(sizeof *rs);
    OOC_RETURN_ERROR_IF(rs == NULL, err, OOC_ERR_HOST_MEMORY, "out of memory (run statistics)");
    double t0 = ooc_trace_now();
    ooc_status_t st = ooc_multi_run(h->dev, h->ndev, h->pool, p, plan, &hk, rs, err);
    if (st == OOC_ERR_CUDA || st == OOC_ERR_CUBLAS) ooc_handle_close_backend(h); /* reopened by the next call */
    if (st == OOC_SUCCESS) record_stats(h, p, plan, rs, t0, hk.share_b, unshared);
    free(rs);
    return st;
}

static ooc_status_t run(ooc_handle_t *h, ooc_problem_t *p)
{
    ooc_err_t *err = &h->err;
    OOC_FORWARD(ooc_handle_backend(h));
    ooc_be_t *be = h->dev[0].be;
    OOC_FORWARD(be->ops->activate(be, err));
    OOC_FORWARD(be->ops->classify(be, p->A.ptr, &p->A.pinned, err));
    OOC_FORWARD(be->ops->classify(be, p->B.ptr, &p->B.pinned, err));
    OOC_FORWARD(be->ops->classify(be, p->C.ptr, &p->C.pinned, err));
    p->c_in = p->C;
    ooc_plan_t plan;
    OOC_FORWARD(ooc_api_plan(h, p, NULL, 1, &plan));
    OOC_FORWARD(ooc_api_prepare(h, p, &plan));
    return ooc_api_execute(h, p, &plan, NULL);
}

static ooc_status_t gemm_call(ooc_handle_t *h, ooc_dtype_t dtype, ooc_layout_t layout, ooc_op_t transa,
                              ooc_op_t transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                              const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                              void *C, int64_t ldc)
{
    ooc_err_clear(&h->err);
    h->have_stats = 0;
    h->mismatched_seen = 0;
    int64_t ld[3] = {lda, ldb, ldc};
    OOC_FORWARD(check(h, dtype, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, ld));
    lda = ld[0], ldb = ld[1], ldc = ld[2];
    OOC_FORWARD(ooc_fault_check(&h->err)); /* (scaling C opens no backend) */
    double t0 = ooc_now();
    memset(&h->stats, 0, sizeof h->stats);
    if (m == 0 || n == 0) {
        /* nothing to compute */
    } else if (k == 0 || ooc_is_zero(dtype, alpha)) {
        if (!is_one(dtype, beta)) scale_c(dtype, layout, m, n, beta, C, ldc);
    } else {
        ooc_problem_t p = {dtype, layout, transa, transb, m, n, k, alpha, beta, ooc_is_zero(dtype, beta),
                           {A, -1, 0, "A", lda, 0}, {B, -1, 0, "B", ldb, 0}, {C, -1, 0, "C", ldc, 0},
                           {C, -1, 0, "C", ldc, 0}};
        OOC_FORWARD(run(h, &p));
    }
    h->stats.seconds = ooc_now() - t0;
    h->have_stats = 1;
    return OOC_SUCCESS;
}

ooc_status_t ooc_gemm(ooc_handle_t *h, ooc_dtype_t dtype, ooc_layout_t layout, ooc_op_t transa,
                      ooc_op_t transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                      const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                      void *C, int64_t ldc)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    /* every return consumes an ooc_cancel() request (also an argument error, or nothing to compute) */
    return ooc_handle_done(h, gemm_call(h, dtype, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                        ldc));
}

ooc_status_t ooc_sgemm(ooc_handle_t *h, ooc_layout_t layout, ooc_op_t transa, ooc_op_t transb,
                       int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                       const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    return ooc_gemm(h, OOC_R32, layout, transa, transb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
}

ooc_status_t ooc_dgemm(ooc_handle_t *h, ooc_layout_t layout, ooc_op_t transa, ooc_op_t transb,
                       int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                       const double *B, int64_t ldb, double beta, double *C, int64_t ldc)
{
    return ooc_gemm(h, OOC_R64, layout, transa, transb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
}

ooc_status_t ooc_cgemm(ooc_handle_t *h, ooc_layout_t layout, ooc_op_t transa, ooc_op_t transb,
                       int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
                       int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc)
{
    return ooc_gemm(h, OOC_C32, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

ooc_status_t ooc_zgemm(ooc_handle_t *h, ooc_layout_t layout, ooc_op_t transa, ooc_op_t transb,
                       int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
                       int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc)
{
    return ooc_gemm(h, OOC_C64, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
