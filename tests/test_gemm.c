/* SPDX-License-Identifier: MIT */
/*
 * test_gemm.c: the pipeline end to end against OpenBLAS, through one backend
 * chosen at build time (OOC_TEST_BACKEND): test_gemm_host runs it on the CPU,
 * test_gemm_cuda on the GPU (exit 77, skipped, when there is none).
 *
 * Random data, odd sizes that are multiples of no block, every layout and op
 * combination, alpha and beta (beta = 0 with C full of NaN), padded leading
 * dimensions, pinned and pageable memory, and budgets small enough to force
 * many blocks, several column panels and several row panels of B. The typed
 * wrappers (ooc_sgemm, _dgemm, _cgemm, _zgemm) each against cblas_?gemm.
 * The staging on the GPU's NUMA node, through a fake sysfs tree.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <CUnit/Basic.h>

#include "fault.h"
#include "handle.h"
#include "numa.h"
#include "testutil.h"

#ifndef OOC_TEST_BACKEND
#error "build with -DOOC_TEST_BACKEND=OOC_BACKEND_HOST or OOC_BACKEND_CUBLAS"
#endif

static ooc_handle_t *H;
static uint64_t seed = 20261121;

typedef enum { MEM_PAGEABLE, MEM_PINNED } mem_t;

typedef struct {
    ooc_dtype_t t;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    int64_t m, n, k;
    int64_t pad;        /* extra leading-dimension elements */
    double alpha, beta; /* real parts; complex cases add an imaginary part */
    mem_t mem_a, mem_b, mem_c;
    int64_t device_mem; /* 0: automatic */
    int64_t block_rows, ring, streams, host_mem;
} case_t;

static void *alloc_mem(mem_t mem, size_t bytes)
{
    void *p = NULL;
    if (mem == MEM_PINNED) {
        ooc_status_t st = ooc_host_alloc(H, bytes, &p);
        CU_ASSERT_EQUAL_FATAL(st, OOC_SUCCESS);
    } else {
        p = malloc(bytes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    }
    return p;
}

static void free_mem(mem_t mem, void *p)
{
    if (mem == MEM_PINNED) ooc_host_free(H, p);
    else free(p);
}

static void scalar(ooc_dtype_t t, double re, double im, void *out)
{
    switch (t) {
    case OOC_R32: ((float *)out)[0] = (float)re; break;
    case OOC_R64: ((double *)out)[0] = re; break;
    case OOC_C32: ((float *)out)[0] = (float)re; ((float *)out)[1] = (float)im; break;
    case OOC_C64: ((double *)out)[0] = re; ((double *)out)[1] = im; break;
    }
}

/* Run one case; returns the stats of the multiply. */
/* run_case's A and B (float) rounded to 10 bits of mantissa: values TF32 multiplies exactly */
static int tf32_inputs;
static void round_tf32(ooc_dtype_t t, void *x, size_t n)
{
    if (!tf32_inputs || t != OOC_R32) return;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, (float *)x + i, 4);
        u &= ~(uint32_t)0x1fff;
        memcpy((float *)x + i, &u, 4);
    }
}

static ooc_stats_t run_case(const case_t *c)
{
    ooc_stats_t stats;
    memset(&stats, 0, sizeof stats);
    size_t e = tu_elem(c->t);
    int col = c->layout == OOC_COL_MAJOR;
    int64_t a_rows = c->m, a_cols = c->k, b_rows = c->k, b_cols = c->n;
    /* stored line lengths bound the leading dimensions */
    int64_t a_len = (col == (c->ta == OOC_OP_N)) ? a_rows : a_cols;
    int64_t b_len = (col == (c->tb == OOC_OP_N)) ? b_rows : b_cols;
    int64_t lda = a_len + c->pad, ldb = b_len + c->pad, ldc = (col ? c->m : c->n) + c->pad;
    size_t na = tu_stored(c->layout, c->ta, a_rows, a_cols, lda);
    size_t nb = tu_stored(c->layout, c->tb, b_rows, b_cols, ldb);
    size_t nc = tu_stored(c->layout, OOC_OP_N, c->m, c->n, ldc);
    void *A = alloc_mem(c->mem_a, na * e), *B = alloc_mem(c->mem_b, nb * e);
    void *C = alloc_mem(c->mem_c, nc * e), *C0 = malloc(nc * e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(C0);
    tu_fill(c->t, A, na, &seed);
    tu_fill(c->t, B, nb, &seed);
    round_tf32(c->t, A, na);
    round_tf32(c->t, B, nb);
    if (c->beta == 0) tu_fill_nan(c->t, C, nc); /* must not leak into the result */
    else tu_fill(c->t, C, nc, &seed);
    memcpy(C0, C, nc * e);

    double alpha[2], beta[2];
    scalar(c->t, c->alpha, c->alpha == 0 ? 0 : 0.25, alpha);
    scalar(c->t, c->beta, c->beta == 0 ? 0 : -0.5, beta);

    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, c->device_mem), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BLOCK_ROWS, c->block_rows), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_RING_DEPTH, c->ring), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_STREAMS, c->streams), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, c->host_mem), OOC_SUCCESS);

    ooc_status_t st = ooc_gemm(H, c->t, c->layout, c->ta, c->tb, c->m, c->n, c->k, alpha, A, lda,
                               B, ldb, beta, C, ldc);
    if (st != OOC_SUCCESS)
        fprintf(stderr, "\n    ooc_gemm: %s: %s\n", ooc_status_string(st), ooc_last_error(H));
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    if (st == OOC_SUCCESS) {
        double worst;
        int64_t bad = tu_check(c->t, c->layout, c->ta, c->tb, c->m, c->n, c->k, alpha, A, lda, B,
                               ldb, beta, C0, C, ldc, &worst);
        if (bad != 0)
            fprintf(stderr, "\n    dtype %d layout %d op %d%d m=%lld n=%lld k=%lld: %lld bad elements, worst %.3g x tolerance\n",
                    c->t, c->layout, c->ta, c->tb, (long long)c->m, (long long)c->n, (long long)c->k,
                    (long long)bad, worst);
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_EQUAL(ooc_get_stats(H, &stats), OOC_SUCCESS);
    }
    free_mem(c->mem_a, A);
    free_mem(c->mem_b, B);
    free_mem(c->mem_c, C);
    free(C0);
    return stats;
}

static const ooc_op_t OPS[3] = {OOC_OP_N, OOC_OP_T, OOC_OP_C};
static const ooc_layout_t LAYOUTS[2] = {OOC_COL_MAJOR, OOC_ROW_MAJOR};

/* Every layout and op pair, alpha != 1, beta 0 (NaN C) and beta != 0. */
static void all_ops(ooc_dtype_t t, int64_t device_mem)
{
    for (int l = 0; l < 2; l++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                for (int bz = 0; bz < 2; bz++) {
                    case_t c = {t, LAYOUTS[l], OPS[a], OPS[b], 157, 91, 67, 0, 1.25, bz ? 0.0 : -0.75,
                                MEM_PAGEABLE, MEM_PINNED, (l + a + b) % 2 ? MEM_PINNED : MEM_PAGEABLE,
                                device_mem, 0, 0, 0, 0};
                    run_case(&c);
                }
}

static void test_ops_double(void) { all_ops(OOC_R64, 0); }
static void test_ops_single(void) { all_ops(OOC_R32, 0); }
static void test_ops_complex_single(void) { all_ops(OOC_C32, 0); }
static void test_ops_complex_double(void) { all_ops(OOC_C64, 0); }

/* A budget that holds op(B) but only small blocks: many row blocks, with a remainder. */
static void test_many_blocks(void)
{
    for (int l = 0; l < 2; l++) {
        case_t c = {OOC_R64, LAYOUTS[l], OOC_OP_N, OOC_OP_T, 1001, 83, 129, 3, 0.5, 1.5,
                    MEM_PINNED, MEM_PINNED, MEM_PINNED, 0, 64, 0, 0, 0};
        ooc_stats_t s = run_case(&c);
        CU_ASSERT(s.blocks >= 15);
        CU_ASSERT_EQUAL(s.panels, 1);
    }
}

/* op(B) larger than the budget: several column panels of B, A streamed again per panel. */
static void test_column_panels(void)
{
    for (int l = 0; l < 2; l++)
        for (int bz = 0; bz < 2; bz++) {
            /* B is 211 x 389 doubles = 657 KB; 300 KB of device memory */
            case_t c = {OOC_R64, LAYOUTS[l], OOC_OP_T, OOC_OP_N, 523, 389, 211, 1, -1.0, bz ? 0.0 : 2.0,
                        MEM_PAGEABLE, MEM_PAGEABLE, MEM_PAGEABLE, 300 << 10, 0, 0, 0, 0};
            ooc_stats_t s = run_case(&c);
            CU_ASSERT(s.panels > 1);
            CU_ASSERT(s.panel_cols < 389 || s.block_rows < 389);
            CU_ASSERT(s.device_bytes <= (uint64_t)(300 << 10));
        }
}

/* Not even one column of op(B) fits: row panels too, beta applied once. */
static void test_row_panels(void)
{
    for (int l = 0; l < 2; l++)
        for (int bz = 0; bz < 2; bz++) {
            /* k = 3001 floats: a column of B is 12 KB; 24 KB of device memory */
            case_t c = {OOC_R32, LAYOUTS[l], OOC_OP_N, OOC_OP_N, 97, 45, 3001, 0, 0.5, bz ? 0.0 : 0.25,
                        l ? MEM_PINNED : MEM_PAGEABLE, MEM_PAGEABLE, l ? MEM_PAGEABLE : MEM_PINNED,
                        24 << 10, 0, 0, 0, 0};
            ooc_stats_t s = run_case(&c);
            CU_ASSERT(s.panel_depth < 3001);
            CU_ASSERT(s.device_bytes <= (uint64_t)(24 << 10));
        }
}

/* Complex with tiny budgets and conjugate transposes, through staging. */
static void test_complex_panels(void)
{
    case_t c = {OOC_C64, OOC_ROW_MAJOR, OOC_OP_C, OOC_OP_C, 133, 77, 301, 2, 1.0, 1.0,
                MEM_PAGEABLE, MEM_PAGEABLE, MEM_PAGEABLE, 64 << 10, 0, 0, 0, 0};
    ooc_stats_t s = run_case(&c);
    CU_ASSERT(s.panels > 1);
}

/* Ring depth 2, several compute streams, and a tiny pinned staging budget. */
static void test_ring_streams_staging(void)
{
    case_t c = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 777, 65, 99, 0, 1.0, 0.5,
                MEM_PAGEABLE, MEM_PAGEABLE, MEM_PAGEABLE, 0, 50, 2, 5, 256 << 10};
    ooc_stats_t s = run_case(&c);
    CU_ASSERT_EQUAL(s.ring_depth, 2);
    CU_ASSERT_EQUAL(s.streams, 5);
    CU_ASSERT(s.staged_a && s.staged_c);
    CU_ASSERT(s.host_bytes <= (uint64_t)(256 << 10));
    CU_ASSERT(s.blocks >= 16);
}

/* Every ring depth ooc_param_bounds allows, with op(B) in the most chunks
 * (each ring slot and each chunk has its events): ring 14 to 16 overran the
 * event array before (SIGSEGV, a corrupted heap or a hang). */
static void test_every_ring(void)
{
    int64_t lo, hi;
    CU_ASSERT_EQUAL_FATAL(ooc_param_bounds(OOC_PARAM_RING_DEPTH, &lo, &hi), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, 8), OOC_SUCCESS);
    for (int64_t r = lo; r <= hi; r++) {
        case_t c = {OOC_R64, OOC_ROW_MAJOR, OOC_OP_N, OOC_OP_T, 1301, 77, 59, 0, 1.0, -0.5,
                    MEM_PAGEABLE, MEM_PINNED, MEM_PAGEABLE, 0, 40, (int)r, 0, 0};
        ooc_stats_t s = run_case(&c);
        CU_ASSERT_EQUAL(s.ring_depth, r);
        CU_ASSERT(s.blocks > 2 * r); /* the ring wraps */
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, 0), OOC_SUCCESS);
}

/* Every stream count ooc_param_bounds allows, with A staged up and C
 * staged both ways through cache-sized buffers: those take a stream each
 * beyond the plan's, and at the most streams the second of them overran
 * the handle's stream array before (tests/stress_plans.py: SIGSEGV, or a
 * mutex found locked by a thread that never took it). */
static void test_every_stream_count(void)
{
    int64_t lo, hi;
    CU_ASSERT_EQUAL_FATAL(ooc_param_bounds(OOC_PARAM_STREAMS, &lo, &hi), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_STAGE_CHUNK, 4096), OOC_SUCCESS);
    for (int64_t n = lo; n <= hi; n++) {
        case_t c = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_T, 403, 29, 51, 1, 1.0, -0.5,
                    MEM_PAGEABLE, MEM_PINNED, MEM_PAGEABLE, 0, 64, 0, (int)n, 0};
        ooc_stats_t s = run_case(&c);
        CU_ASSERT_EQUAL(s.streams, n);
        CU_ASSERT(s.stage_chunk == 4096 && s.stage_out_chunk == 4096 && s.stage_cin_chunk == 4096);
        CU_ASSERT(s.blocks >= 6);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_STAGE_CHUNK, 0), OOC_SUCCESS);
}

/* alpha and beta aligned only as their real part (a double inside a
 * struct, as a file job's were): cuBLAS 13.1's ZGEMM for n = 1 loads them
 * with an aligned 16-byte load, and the process died (SIGSEGV) until the
 * backend passed copies of its own (tests/stress_plans.py --files found it
 * on an H200: a block's last k-piece in chunks of one column of C). Complex
 * types, n of 1 and 3, whole blocks and k-pieces with C's columns in chunks. */
static void test_scalars_unaligned(void)
{
    for (int i = 0; i < 4; i++) {
        ooc_dtype_t t = i % 2 ? OOC_C64 : OOC_C32;
        size_t e = tu_elem(t);
        int64_t m = 61, n = i < 2 ? 1 : 3, k = 81, lda = m, ldb = i < 2 ? k + 3 : k, ldc = i < 2 ? m + 1 : m;
        size_t na = (size_t)(lda * k), nb = (size_t)(ldb * n), nc = (size_t)(ldc * n);
        void *A = malloc(na * e), *B = malloc(nb * e), *C = malloc(nc * e), *C0 = malloc(nc * e);
        double *scalars = aligned_alloc(64, 64);
        CU_ASSERT_FATAL(A && B && C && C0 && scalars);
        tu_fill(t, A, na, &seed);
        tu_fill(t, B, nb, &seed);
        tu_fill(t, C, nc, &seed);
        memcpy(C0, C, nc * e);
        /* 8 bytes past a 16-byte boundary: alpha (1.5, -0.5), beta (-0.5, 0.25), in t's precision */
        char *alpha = (char *)scalars + 8, *beta = alpha + 2 * e;
        scalar(t, 1.5, -0.5, alpha);
        scalar(t, -0.5, 0.25, beta);
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, i < 2 ? 0 : 3), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, i < 2 ? 0 : 8), OOC_SUCCESS);
        ooc_status_t st = ooc_gemm(H, t, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                   ldc);
        if (st != OOC_SUCCESS) fprintf(stderr, "\n    ooc_gemm: %s\n", ooc_last_error(H));
        CU_ASSERT_EQUAL(st, OOC_SUCCESS);
        double worst;
        CU_ASSERT_EQUAL(tu_check(t, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, alpha, A, lda, B, ldb, beta, C0, C,
                                 ldc, &worst), 0);
        free(A);
        free(B);
        free(C);
        free(C0);
        free(scalars);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, 0), OOC_SUCCESS);
}

/* With op(A) resident (the problem transposed inside), staged_a is still
 * the caller's A: it reported B's before (found by a review). */
static void test_stats_resident_a(void)
{
    for (int i = 0; i < 2; i++) {
        case_t c = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 37, 2003, 61, 0, 1.0, 0.0,
                    i ? MEM_PAGEABLE : MEM_PINNED, i ? MEM_PINNED : MEM_PAGEABLE, MEM_PINNED, 96 << 10, 0, 0, 0, 0};
        ooc_stats_t s = run_case(&c);
        CU_ASSERT_EQUAL(s.a_resident, 1);
        CU_ASSERT_EQUAL(s.staged_a, i);
        CU_ASSERT_EQUAL(s.staged_c, 0);
    }
}

/* Budgets too small: the least budgets the message names are enough, the
 * first time (they were enough for some plan, but not for a useful one:
 * refused again, with higher figures; found by a review): a call with them
 * gets past planning, to its first multiply. */
static void test_least_budget_named(void)
{
    struct {
        ooc_dtype_t t;
        ooc_layout_t layout;
        ooc_op_t ta, tb;
        int64_t m, n, k, dev, host;
    } cases[] = {
        {OOC_C32, OOC_ROW_MAJOR, OOC_OP_T, OOC_OP_C, 112, 99, 98, 471, 122},
        {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 3001, 257, 513, 4096, 4096},
        {OOC_C64, OOC_COL_MAJOR, OOC_OP_C, OOC_OP_T, 77, 1201, 333, 1000, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t e = tu_elem(cases[i].t);
        int64_t m = cases[i].m, n = cases[i].n, k = cases[i].k;
        int col = cases[i].layout == OOC_COL_MAJOR;
        int64_t lda = col == (cases[i].ta == OOC_OP_N) ? m : k, ldb = col == (cases[i].tb == OOC_OP_N) ? k : n;
        int64_t ldc = col ? m : n;
        void *A = malloc((size_t)(m * k) * e), *B = malloc((size_t)(k * n) * e), *C = malloc((size_t)(m * n) * e);
        CU_ASSERT_FATAL(A && B && C);
        tu_fill(cases[i].t, A, (size_t)(m * k), &seed);
        tu_fill(cases[i].t, B, (size_t)(k * n), &seed);
        double one[2] = {1, 0}, zero[2] = {0, 0};
        float onef[2] = {1, 0}, zerof[2] = {0, 0};
        int single = cases[i].t == OOC_R32 || cases[i].t == OOC_C32;
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, cases[i].dev), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, cases[i].host), OOC_SUCCESS);
        ooc_status_t st = ooc_gemm(H, cases[i].t, cases[i].layout, cases[i].ta, cases[i].tb, m, n, k,
                                   single ? (void *)onef : (void *)one, A, lda, B, ldb,
                                   single ? (void *)zerof : (void *)zero, C, ldc);
        CU_ASSERT_EQUAL(st, OOC_ERR_BUDGET_TOO_SMALL);
        const char *msg = ooc_last_error(H), *d = strstr(msg, "device memory budget of at least ");
        const char *q = strstr(msg, "staging budget of at least ");
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        long long need_dev = strtoll(d + strlen("device memory budget of at least "), NULL, 10);
        long long need_host = q ? strtoll(q + strlen("staging budget of at least "), NULL, 10) : cases[i].host;
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, need_dev), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, need_host), OOC_SUCCESS);
        /* planned, and then run: stopped at its first multiply (the least
         * useful plan has a million tiles: half a minute, and far longer
         * under a sanitizer) */
        setenv("OOC_FAULT", "gemm:1", 1);
        ooc_fault_reset();
        st = ooc_gemm(H, cases[i].t, cases[i].layout, cases[i].ta, cases[i].tb, m, n, k,
                      single ? (void *)onef : (void *)one, A, lda, B, ldb, single ? (void *)zerof : (void *)zero, C,
                      ldc);
        unsetenv("OOC_FAULT");
        ooc_fault_reset();
        /* (the failure of a multiply: cuBLAS's, or our kernels' launch's) */
        int stopped = st == OOC_ERR_CUBLAS || st == OOC_ERR_CUDA;
        if (!stopped)
            fprintf(stderr, "\n    case %zu: with the budgets named (%lld, %lld): %s\n", i, need_dev, need_host,
                    ooc_last_error(H));
        CU_ASSERT(stopped);
        CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "injected"));
        free(A);
        free(B);
        free(C);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_HOST_MEM, 0), OOC_SUCCESS);
}

/* Wide problem: the planner may keep op(A) resident instead of op(B). */
static void test_wide(void)
{
    case_t c = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 37, 2003, 61, 0, 1.0, 0.0,
                MEM_PINNED, MEM_PAGEABLE, MEM_PAGEABLE, 96 << 10, 0, 0, 0, 0};
    CU_ASSERT_EQUAL(run_case(&c).a_resident, 1);
    c.layout = OOC_ROW_MAJOR;
    c.ta = OOC_OP_T;
    run_case(&c);
}

/* Different sizes on one handle: buffers are grown and reused. */
static void test_reuse(void)
{
    int64_t sizes[4][3] = {{10, 20, 30}, {300, 7, 200}, {1, 1, 1}, {129, 257, 65}};
    for (int i = 0; i < 4; i++) {
        case_t c = {OOC_R32, OOC_COL_MAJOR, OOC_OP_T, OOC_OP_T, sizes[i][0], sizes[i][1], sizes[i][2],
                    i, 2.0, i % 2 ? 1.0 : 0.0, MEM_PAGEABLE, MEM_PAGEABLE, MEM_PINNED, 0, 0, 0, 0, 0};
        run_case(&c);
    }
}

/* Shapes of one row, one column, k = 1. */
static void test_degenerate_shapes(void)
{
    int64_t sizes[5][3] = {{1, 500, 300}, {500, 1, 300}, {400, 300, 1}, {1, 1, 4000}, {3, 2, 1}};
    for (int i = 0; i < 5; i++)
        for (int l = 0; l < 2; l++) {
            case_t c = {OOC_R64, LAYOUTS[l], OPS[i % 2], OPS[(i + l) % 2], sizes[i][0], sizes[i][1],
                        sizes[i][2], 0, -2.0, 0.5, MEM_PAGEABLE, MEM_PINNED, MEM_PAGEABLE, 32 << 10, 0, 0, 0, 0};
            run_case(&c);
        }
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what)) n++;
    return n;
}

/* Run case c traced into a new file at path (a mkstemp template), then
 * tracing off; the file read into text (size bytes at most) and removed. */
static ooc_stats_t run_traced(const case_t *c, char *path, char *text, size_t size)
{
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_EQUAL(ooc_set_trace(H, path), OOC_SUCCESS);
    ooc_stats_t s = run_case(c);
    CU_ASSERT_EQUAL(ooc_set_trace(H, NULL), OOC_SUCCESS);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    size_t len = fread(text, 1, size - 1, f);
    text[len] = '\0';
    fclose(f);
    unlink(path);
    return s;
}

/* A traced run makes two timed events for each op it may trace, before it
 * starts: op(B) pinned goes up in at most a few chunks, and once counted
 * one op per line of op(B) (a pinned SGEMM of 25315 x 1591 x 3247 made
 * 50 000 events on an H200, 28 ms of its traced 41 ms). Counted here by
 * the backend's event_create_timed, with op(B) of 20000 lines. */
static int timed_events;
static ooc_status_t (*real_create_timed)(ooc_be_t *be, ooc_event_t *ev, ooc_err_t *err);
static ooc_status_t counting_create_timed(ooc_be_t *be, ooc_event_t *ev, ooc_err_t *err)
{
    timed_events++;
    return real_create_timed(be, ev, err);
}

static void test_trace_events(void)
{
    char path[] = "/tmp/ooc_trace_XXXXXX";
    static char text[1 << 20];
    case_t c = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 900, 20000, 48, 1, 1.0, 0.5,
                MEM_PINNED, MEM_PINNED, MEM_PINNED, 0, 100, 0, 0, 0};
    run_case(&c); /* the backend open */
    ooc_be_t *be = H->dev[0].be;
    CU_ASSERT_PTR_NOT_NULL_FATAL(be);
    const ooc_be_ops_t *saved = be->ops;
    ooc_be_ops_t counting = *saved;
    real_create_timed = saved->event_create_timed;
    counting.event_create_timed = counting_create_timed;
    be->ops = &counting;
    timed_events = 0;
    ooc_stats_t s = run_traced(&c, path, text, sizeof text);
    be->ops = saved;
    CU_ASSERT_EQUAL(s.traced, 1);
    CU_ASSERT(s.blocks >= 9 && s.panels == 1);
    CU_ASSERT_EQUAL(count(text, "\"name\":\"gemm\""), s.blocks);
    /* 3 ops a block and op(B)'s chunks, two events each, and the base */
    CU_ASSERT(timed_events >= 1 + 2 * 3 * (int)s.blocks);
    CU_ASSERT(timed_events <= 1 + 2 * (3 * (int)s.blocks + 2 * OOC_MAX_B_CHUNKS + 2));
}

/* The timeline: one record per copy and multiply, staging steps, busy times. */
static void test_trace(void)
{
    char path[] = "/tmp/ooc_trace_XXXXXX";
    static char text[1 << 20];
    case_t c = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 1000, 120, 150, 0, 1.0, 0.0,
                MEM_PAGEABLE, MEM_PINNED, MEM_PAGEABLE, 0, 100, 0, 0, 0};
    ooc_stats_t s = run_traced(&c, path, text, sizeof text);
    CU_ASSERT_EQUAL(s.traced, 1);
    CU_ASSERT(s.blocks >= 10);
    CU_ASSERT(s.busy_h2d > 0 && s.busy_compute > 0 && s.busy_d2h > 0);
    CU_ASSERT(s.busy_read > 0 && s.busy_write > 0); /* A and C were staged */
    CU_ASSERT(s.trace_wall > 0 && s.trace_wall <= s.seconds);
    CU_ASSERT(s.overlap_efficiency == s.overlap_efficiency && s.overlap_efficiency <= 1.0001);
    CU_ASSERT(strncmp(text, "{\"displayTimeUnit\"", 18) == 0);
    CU_ASSERT(strstr(text, "\"overlap_efficiency\"") != NULL);
    CU_ASSERT_EQUAL(count(text, "\"name\":\"gemm\""), s.blocks);
    CU_ASSERT_EQUAL(count(text, "\"name\":\"H2D A\""), s.blocks);
    /* C out whole from each slot, or chunk by chunk through the cache-sized buffers (a GPU
     * whose CPU has the cache for them: OOC_PARAM_STAGE_C) */
    if (s.stage_out_chunk == 0) CU_ASSERT_EQUAL(count(text, "\"name\":\"D2H C\""), s.blocks);
    if (s.stage_out_chunk > 0) {
        CU_ASSERT_EQUAL(count(text, "\"name\":\"D2H C\""), 0);
        CU_ASSERT(count(text, "\"name\":\"D2H C (chunk)\"") >= s.blocks);
    }
    CU_ASSERT_EQUAL(count(text, "\"name\":\"unstage C\""), s.blocks);
    int uploads = 0; /* op(B) goes up once to each device that computed a block */
    for (int d = 0; d < s.ndevices; d++) uploads += s.device[d].blocks > 0;
    CU_ASSERT(uploads >= 1);
    if (!s.b_shared) {
        CU_ASSERT_EQUAL(count(text, "\"name\":\"H2D B\""), uploads);
        CU_ASSERT_EQUAL(count(text, "\"name\":\"peer B\""), 0);
    } else { /* several GPUs, op(B) shared: each chunk up once, the others fetch it */
        CU_ASSERT(count(text, "\"name\":\"H2D B\"") >= 1);
        CU_ASSERT(count(text, "\"name\":\"peer B\"") >= uploads - 1);
    }
    /* not tracing any more: no file written */
    run_case(&c);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);

    /* C out through cache-sized buffers of 4 KiB (several chunks a block):
     * the writer copies the blocks into C one after another, so each
     * block's "unstage C" starts after the one before ends (its start once
     * came from a queue entry already reused by a newer chunk: often the
     * start of the block before) */
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_STAGE_CHUNK, 4096), OOC_SUCCESS);
    char path2[] = "/tmp/ooc_trace_XXXXXX";
    s = run_traced(&c, path2, text, sizeof text);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_STAGE_CHUNK, 0), OOC_SUCCESS);
    CU_ASSERT(s.stage_out_chunk == 4096 && s.blocks >= 10);
    enum { MAXB = 64 };
    double t0[MAXB], t1[MAXB];
    int seen = 0;
    for (const char *at = text; (at = strstr(at, "{\"name\":\"unstage C\"")) != NULL; at++) {
        double ts, dur;
        long long blk;
        if (sscanf(at, "{\"name\":\"unstage C\",\"cat\":\"%*[^\"]\",\"ph\":\"X\",\"pid\":%*d,\"tid\":%*d,\"ts\":%lf,"
                       "\"dur\":%lf,\"args\":{\"block\":%lld}",
                   &ts, &dur, &blk) == 3 && blk == seen && seen < MAXB) {
            t0[seen] = ts;
            t1[seen++] = ts + dur;
        }
    }
    /* (one device: its blocks are numbered in the order it takes them) */
    if (s.ndevices == 1) CU_ASSERT_EQUAL(seen, s.blocks);
    for (int b = 1; b < seen && s.ndevices == 1; b++) {
        CU_ASSERT(t0[b] >= t1[b - 1] - 0.0005);
        if (!(t0[b] >= t1[b - 1] - 0.0005))
            fprintf(stderr, "\n    block %d unstaged from %.3f us, block %d until %.3f\n", b, t0[b], b - 1, t1[b - 1]);
    }
}

/* op(B) uploaded in chunks with the first block multiplied chunk by chunk
 * (split along n or along k, depending on how B is stored), and a tail of
 * shrinking blocks, for every layout and op pair, pinned and staged. */
static void test_chunks_and_tail(void)
{
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, 3), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_TAIL, 4), OOC_SUCCESS);
    for (int l = 0; l < 2; l++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                mem_t mem = (a + b + l) % 2 ? MEM_PINNED : MEM_PAGEABLE;
                case_t c = {OOC_C64, LAYOUTS[l], OPS[a], OPS[b], 1400, 53, 61, 0, 1.5, (a + b) % 2 ? 0.0 : 0.5,
                            mem, mem, mem, 0, 256, 0, 0, 0};
                ooc_stats_t st = run_case(&c);
                /* 1400 rows in blocks of 256 with a tail of 128, 64, 32: 5 + 3 blocks */
                CU_ASSERT_EQUAL(st.blocks, 8);
            }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_TAIL, 0), OOC_SUCCESS);
}

/* A's blocks in k-pieces (uneven: k not a multiple of the pieces), multiplied
 * one after another into C, for every layout and op pair, pinned and
 * staged, beta 0 and not, a ring of 2 and 3 (pieces wrap the slots within a
 * block and across blocks); and with row panels of op(B) (a last panel
 * shallower than the pieces, C read back). A staged A's first block waited
 * for in its staging slot while op(B)'s staged chunks overwrote it before
 * op(B) went up first (found by test_reliability.sh's resume scenario). */
static void test_a_pieces(void)
{
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, 5), OOC_SUCCESS);
    for (int l = 0; l < 2; l++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                mem_t mem = (a + b + l) % 2 ? MEM_PINNED : MEM_PAGEABLE;
                case_t c = {(a + l) % 2 ? OOC_R64 : OOC_C32, LAYOUTS[l], OPS[a], OPS[b], 611, 53, 263, 0, 1.5,
                            (a + b) % 2 ? 0.0 : 0.5, mem, (a + b) % 3 ? mem : MEM_PAGEABLE, mem, 0, 100,
                            2 + (a + b) % 2, 0, 0};
                ooc_stats_t st = run_case(&c);
                CU_ASSERT_EQUAL(st.a_pieces, 5);
                CU_ASSERT(st.blocks >= 6);
            }
    /* row panels: k = 3001 doubles in 24 KB of device memory, 3 pieces per panel */
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, 3), OOC_SUCCESS);
    for (int l = 0; l < 2; l++) {
        case_t c = {OOC_R64, LAYOUTS[l], OOC_OP_T, OOC_OP_N, 97, 45, 3001, 0, 0.5, l ? 0.0 : 0.25,
                    MEM_PAGEABLE, l ? MEM_PINNED : MEM_PAGEABLE, MEM_PINNED, 24 << 10, 0, 0, 0, 0};
        ooc_stats_t st = run_case(&c);
        CU_ASSERT(st.panel_depth < 3001 && st.a_pieces == 3);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, 0), OOC_SUCCESS);
}

/* Blocks in k-pieces, each block's last piece multiplied chunk by chunk of
 * C's columns, each chunk's columns copied out once multiplied
 * (OOC_PARAM_B_CHUNKS with pieces; the planner's choice where copying C out
 * bounds the run): every layout and op pair, pinned and staged, beta 0 (C
 * starts as NaN: a chunk copied out before its multiply shows) and not,
 * and column panels whose last is narrower than the chunks. The host
 * backend delays its ops at random and slows its copies out, so that a
 * block's chunks are still going out when its slot's next block starts. */
static void test_last_piece_cols(void)
{
    ooc_handle_t *saved = H;
    setenv("OOC_HOST_JITTER_US", "300", 1);
    setenv("OOC_HOST_D2H_DELAY_US", "300", 1);
    CU_ASSERT_EQUAL_FATAL(ooc_create(&H), OOC_SUCCESS);
    unsetenv("OOC_HOST_JITTER_US");
    unsetenv("OOC_HOST_D2H_DELAY_US");
    CU_ASSERT_EQUAL(tu_backend_runs(H, OOC_TEST_BACKEND), 1);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, 3), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, 8), OOC_SUCCESS);
    for (int l = 0; l < 2; l++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                mem_t mem = (a + b + l) % 2 ? MEM_PINNED : MEM_PAGEABLE;
                case_t c = {(a + l) % 2 ? OOC_R64 : OOC_C32, LAYOUTS[l], OPS[a], OPS[b], 411, 53, 263, 3, 1.5,
                            (a + b) % 2 ? 0.0 : 0.5, mem, mem, (a + b) % 3 ? mem : MEM_PAGEABLE, 0, 100,
                            2 + (a + b) % 2, 0, 0};
                ooc_stats_t st = run_case(&c);
                CU_ASSERT(st.a_pieces == 3 && st.c_chunks == 8 && st.blocks >= 5);
            }
    /* traced: each block's 8 chunks multiplied and copied out, none left
     * out of the timeline (its room counts them) */
    char path[] = "/tmp/ooc_trace_XXXXXX";
    static char text[1 << 20];
    case_t tc = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 4011, 53, 263, 0, 1.0, 0.0,
                 MEM_PINNED, MEM_PINNED, MEM_PINNED, 0, 100, 0, 0, 0};
    ooc_stats_t ts = run_traced(&tc, path, text, sizeof text);
    CU_ASSERT(ts.traced == 1 && ts.blocks >= 40);
    CU_ASSERT_EQUAL(count(text, "\"name\":\"gemm (piece of A, columns of C)\""), 8 * ts.blocks);
    CU_ASSERT_EQUAL(count(text, "\"name\":\"D2H C (columns)\""), 8 * ts.blocks);
    /* B is 211 x 15 doubles in 5.5 KB of device memory (3.5 KB beside the
     * alignment of a ring of 2): panels of 8 columns (the last of 7: an
     * empty chunk) and of 27 rows (C read back) */
    for (int bz = 0; bz < 2; bz++) {
        case_t c = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 523, 15, 211, 0, 1.0, bz ? 0.0 : 0.5,
                    MEM_PINNED, MEM_PINNED, MEM_PINNED, 5632, 64, 0, 0, 0};
        ooc_stats_t st = run_case(&c);
        CU_ASSERT(st.panel_cols == 8 && st.panel_depth < 211 && st.a_pieces == 3 && st.c_chunks == 8);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, 0), OOC_SUCCESS);
    ooc_destroy(H);
    H = saved;
}

/* TF32 (OOC_MATH_TF32), and FP64 but for cuBLAS's op pair NT (backend.h
 * ooc_tiles_aligned): the device tiles are 16-byte aligned (cuBLAS's fast
 * kernels need it: a TF32 SGEMM whose columns are 4 bytes off runs 3 times
 * slower on an H200, a DGEMM some 15%): every line of a tile on a pitch of
 * 16 bytes, op(B)'s chunks and a block's k-pieces starting at multiples of
 * 8 elements (plan.h pad_lines). The host backend refuses a tile multiply
 * that is not (OOC_HOST_ALIGNED); odd sizes, every layout and op pair, the
 * plans that cut tiles: a lead block by op(B)'s chunks, A in k-pieces (the
 * last by C's columns), one block whose pieces op(B)'s rows follow, staged
 * operands, panels. A and B hold values TF32 keeps exactly (10 bits of
 * mantissa), so that on a GPU (c_gemm splitting off the rest of m and k)
 * C is checked against OpenBLAS as for FP32. The stats say which were
 * aligned (ooc_stats_t aligned_tiles) and whether op(B) lay transposed on
 * the device (resident_transposed: FP64's NT pair, where the problem runs
 * column-major); on a GPU FP64's NT pair runs in the loop too. */
static void test_aligned_tiles(void)
{
    ooc_handle_t *saved = H;
    setenv("OOC_HOST_ALIGNED", "1", 1); /* (read when the backend opens: at the first multiply) */
    CU_ASSERT_EQUAL_FATAL(ooc_create(&H), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_MATH_MODE, OOC_MATH_TF32), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICES, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BACKEND, OOC_TEST_BACKEND), OOC_SUCCESS);
    tf32_inputs = 1;
    for (int f = 0; f < 2; f++)
        for (int v = 0; v < 5; v++)
            for (int l = 0; l < 2; l++)
                for (int a = 0; a < 2; a++) {
                    int b = (a + v + l + f) % 2;
                    /* FP64 (f): aligned but for cuBLAS's op pair NT (op(A) N,
                     * op(B) T column-major; A T, B N row-major), left packed
                     * (the host backend's check would refuse it: below), and
                     * on our own kernels (custom) */
                    int nt = f && (l ? b == 0 && a == 1 : a == 0 && b == 1);
                    if (nt && OOC_TEST_BACKEND == OOC_BACKEND_HOST) continue; /* (below, orientation by orientation) */
                    mem_t mem = v == 3 ? MEM_PAGEABLE : MEM_PINNED;
                    int64_t rows = v == 2 ? 4096 : 96, budget = v == 4 ? 200 << 10 : 0;
                    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, v < 3 ? 8 : 0), OOC_SUCCESS);
                    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, v == 1 ? 3 : v == 2 ? 5 : 0), OOC_SUCCESS);
                    case_t c = {f ? OOC_R64 : OOC_R32, LAYOUTS[l], OPS[a], OPS[b], 389, 203, 613, (a + b) % 2, 1.5,
                                (a + l) % 2 ? 0.0 : 0.5, mem, mem, mem, budget, rows, 0, 0, 0};
                    ooc_stats_t st = run_case(&c);
                    /* the pair NT: op(B) transposed on the device where the planner runs the problem
                     * column-major (backend.h ooc_resident_transposed), then aligned */
                    int col_run = (l == 0) != (st.a_resident != 0);
                    int tr = nt && col_run && OOC_TEST_BACKEND != OOC_BACKEND_CUSTOM;
                    CU_ASSERT_EQUAL(st.resident_transposed, tr);
                    CU_ASSERT_EQUAL(st.aligned_tiles, !f || (OOC_TEST_BACKEND != OOC_BACKEND_CUSTOM && (!nt || tr)));
                    if (v == 1) CU_ASSERT(st.a_pieces == 3 && st.c_chunks == 8);
                    if (v == 2) CU_ASSERT(st.a_pieces == 5 && st.blocks == 1 && st.b_follow == 1);
                    if (v == 4) CU_ASSERT(st.panels > 1);
                }
    tf32_inputs = 0;
    /* and FP64 of cuBLAS's pair NT: op(B) transposed on the device, the
     * tiles aligned, where the planner runs the problem column-major (op(B)
     * resident: a tall column-major NT; op(A) resident: a wide row-major TN,
     * transposed to a column-major NT); packed where it runs it row-major
     * (NT padded ran up to 15% slower), which the host backend's check
     * refuses for its odd tiles; row-major NT (cuBLAS's TN) aligned as ever;
     * and NT of an even n packed (NT ran as fast as NN aligned there) */
    if (OOC_TEST_BACKEND == OOC_BACKEND_HOST) {
        static const struct {
            ooc_layout_t l;
            ooc_op_t ta, tb;
            int m, n, a_resident, transposed, refused;
        } nt[6] = {{OOC_COL_MAJOR, OOC_OP_N, OOC_OP_T, 1001, 45, 0, 1, 0}, {OOC_ROW_MAJOR, OOC_OP_T, OOC_OP_N, 45, 1001, 1, 1, 0},
                   {OOC_COL_MAJOR, OOC_OP_N, OOC_OP_T, 45, 1001, 1, 0, 1}, {OOC_ROW_MAJOR, OOC_OP_T, OOC_OP_N, 1001, 45, 0, 0, 1},
                   /* (cuBLAS's TN: aligned) */
                   {OOC_ROW_MAJOR, OOC_OP_N, OOC_OP_T, 1001, 45, 0, 0, 0},
                   /* n even (and m): NT packed, aligned as it is (its kernels run at NN's rate), k odd */
                   {OOC_COL_MAJOR, OOC_OP_N, OOC_OP_T, 1000, 46, 0, 0, 0}};
        enum { K = 77 };
        static double A[1001 * K], B[1001 * K], C[1001 * 46];
        for (int i = 0; i < 1001 * K; i++) A[i] = (double)(i % 7) - 3.0, B[i] = (double)(i % 5) - 2.0;
        double one = 1.0, zero = 0.0;
        /* (the automatic budgets and plan: the loop's last case left its own set) */
        CU_ASSERT(ooc_set(H, OOC_PARAM_DEVICE_MEM, 0) == OOC_SUCCESS && ooc_set(H, OOC_PARAM_B_CHUNKS, 0) == OOC_SUCCESS &&
                  ooc_set(H, OOC_PARAM_A_PIECES, 0) == OOC_SUCCESS && ooc_set(H, OOC_PARAM_BLOCK_ROWS, 0) == OOC_SUCCESS);
        for (int t = 0; t < 6; t++) {
            int m = nt[t].m, n = nt[t].n, row = nt[t].l == OOC_ROW_MAJOR;
            /* op(A) m x K, op(B) K x n as stored (N: as is; T: the other way) */
            int64_t lda = row == (nt[t].ta == OOC_OP_N) ? K : m, ldb = row == (nt[t].tb == OOC_OP_N) ? n : K;
            int64_t ldc = row ? n : m;
            for (int i = 0; i < m * n; i++) C[i] = 0.0 / 0.0; /* NaN: a C not written shows */
            ooc_status_t st = ooc_gemm(H, OOC_R64, nt[t].l, nt[t].ta, nt[t].tb, m, n, K, &one, A, lda, B, ldb, &zero, C, ldc);
            if (nt[t].refused) {
                CU_ASSERT_EQUAL(st, OOC_ERR_INTERNAL);
                continue;
            }
            CU_ASSERT_EQUAL_FATAL(st, OOC_SUCCESS);
            ooc_stats_t s;
            CU_ASSERT_EQUAL(ooc_get_stats(H, &s), OOC_SUCCESS);
            CU_ASSERT(s.aligned_tiles == (t < 5) && s.resident_transposed == nt[t].transposed &&
                      s.a_resident == nt[t].a_resident);
            int wrong = 0;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double r = 0.0; /* small integers: exact in any order */
                    for (int l = 0; l < K; l++) {
                        double x = nt[t].ta == OOC_OP_N ? A[row ? i * lda + l : l * lda + i] : A[row ? l * lda + i : i * lda + l];
                        double y = nt[t].tb == OOC_OP_N ? B[row ? l * ldb + j : j * ldb + l] : B[row ? j * ldb + l : l * ldb + j];
                        r += x * y;
                    }
                    wrong += C[row ? i * ldc + j : j * ldc + i] != r;
                }
            CU_ASSERT_EQUAL(wrong, 0);
        }
    }
    ooc_destroy(H);
    unsetenv("OOC_HOST_ALIGNED");
    H = saved;
}

/* op(B) transposed on the device (DGEMM of cuBLAS's pair NT, odd sizes,
 * run column-major) goes up a piece at a time through two scratch buffers
 * and is transposed into place on a stream of its own: the first block's
 * multiplies, chunk by chunk of op(B), must wait for their chunks'
 * transposes, not their copies (pipeline_issue.c b_lines_up). The host
 * backend delays each op up to 2 ms at random and five streams spread the
 * blocks, so that a chunk's event recorded on the wrong stream shows (it
 * did in 3 of 3 runs of this test; a follow plan's missing wait for its
 * rows' transposes in 2 of 3); pinned and pageable op(B), whole and in
 * k-pieces (the pieces' rows of op(B) following them: b_follow). */
static void test_transposed_order(void)
{
    if (OOC_TEST_BACKEND != OOC_BACKEND_HOST) return; /* (the jitter is the host backend's) */
    ooc_handle_t *saved = H;
    setenv("OOC_HOST_JITTER_US", "2000", 1);
    CU_ASSERT_EQUAL_FATAL(ooc_create(&H), OOC_SUCCESS);
    unsetenv("OOC_HOST_JITTER_US");
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICES, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BACKEND, OOC_TEST_BACKEND), OOC_SUCCESS);
    for (int r = 0; r < 9; r++) {
        int follow = r >= 4;
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, follow ? 0 : 8), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, follow ? 4 : 0), OOC_SUCCESS);
        case_t c = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_T, follow ? 601 : 2001, 301, 257, 0, 1.0,
                    r % 2 ? 0.0 : 0.5, MEM_PINNED, r == 2 ? MEM_PAGEABLE : MEM_PINNED, MEM_PINNED, 0,
                    follow ? 601 : 64, 0, follow ? 0 : 5, 0};
        ooc_stats_t st = run_case(&c);
        CU_ASSERT(st.resident_transposed && st.aligned_tiles);
        if (follow) CU_ASSERT(st.b_follow && st.blocks == 1);
    }
    ooc_destroy(H);
    H = saved;
}

/* One block of all the rows in k-pieces (block rows >= m), one device:
 * op(B) pinned goes up piece by piece of its depth with the block's pieces,
 * each piece's multiply waiting only for its own rows of op(B)
 * (plan.h b_follow; stats.b_follow); op(B) pageable goes up whole first.
 * Every layout and op pair, beta 0 (C starts as NaN) and not, the last
 * piece whole or by chunks of C's columns, and op(B) in k-panels. The host
 * backend delays its ops at random, so that a piece multiplied before its
 * rows of op(B) are there shows. */
static void test_b_follow(void)
{
    ooc_handle_t *saved = H;
    setenv("OOC_HOST_JITTER_US", "300", 1);
    CU_ASSERT_EQUAL_FATAL(ooc_create(&H), OOC_SUCCESS);
    unsetenv("OOC_HOST_JITTER_US");
    CU_ASSERT_EQUAL(tu_backend_runs(H, OOC_TEST_BACKEND), 1);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICES, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, 5), OOC_SUCCESS);
    for (int l = 0; l < 2; l++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                mem_t mb = (a + b + l) % 3 ? MEM_PINNED : MEM_PAGEABLE;
                CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, (a + l) % 2 ? 8 : 0), OOC_SUCCESS);
                case_t c = {(a + l) % 2 ? OOC_R64 : OOC_C32, LAYOUTS[l], OPS[a], OPS[b], 173, 61, 1013, (a + b) % 2,
                            1.5, (a + b) % 2 ? 0.0 : 0.5, MEM_PINNED, mb, MEM_PINNED, 0, 192, 0, 0, 0};
                ooc_stats_t st = run_case(&c);
                CU_ASSERT(st.a_pieces == 5 && st.blocks == 1 && st.panels == 1);
                CU_ASSERT_EQUAL(st.b_follow, mb == MEM_PINNED);
            }
    /* panels: B is 1013 x 61 doubles; in 200 KB or 120 KB of device memory
     * (a ring of 2) the plan splits its depth into 4 or 8 panels (C read
     * back), each of one block whose pieces op(B)'s rows follow */
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, 0), OOC_SUCCESS);
    const int64_t budgets[2] = {200 << 10, 120 << 10};
    for (int i = 0; i < 2; i++)
        for (int bz = 0; bz < 2; bz++) {
            case_t c = {OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_T, 37, 61, 1013, 0, 1.0, bz ? 0.0 : -1.0,
                        MEM_PINNED, MEM_PINNED, MEM_PINNED, budgets[i], 64, 2, 0, 0};
            ooc_stats_t st = run_case(&c);
            CU_ASSERT(st.a_pieces == 5 && st.panels >= 4 && st.blocks == 1 && st.b_follow == 1);
            CU_ASSERT(st.panel_depth < 1013);
        }
    ooc_destroy(H);
    H = saved;
}

/* A handle of the backend under test whose host ops are delayed at random
 * by up to `us` microseconds (OOC_HOST_JITTER_US, read when it opens). */
static ooc_handle_t *jittered_handle(const char *us)
{
    ooc_handle_t *h = NULL;
    setenv("OOC_HOST_JITTER_US", us, 1);
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    unsetenv("OOC_HOST_JITTER_US");
    CU_ASSERT_EQUAL(tu_backend_runs(h, OOC_TEST_BACKEND), 1);
    return h;
}

/* Staged operands on one device: the reader stages each block as soon as
 * its pinned slot's copies in are done, ahead of the multiplies (it once
 * waited for the multiply two turns back), and op(B) staged through the
 * same slots goes up before the first block. The host backend delays each
 * op at random, so that a copy in is often still queued when the reader
 * comes back to its slot: staging over it shows as wrong elements. Pageable
 * A, B and C (C0 read in or C NaN), rings of 2 and 3, op(B) in 1 or 4
 * chunks, A whole or in k-pieces, several column panels. */
static void test_staged_ahead(void)
{
    ooc_handle_t *saved = H;
    H = jittered_handle("1500");
    for (int i = 0; i < 12; i++) {
        int ring = 2 + i % 2, chunks = i % 3 == 0 ? 1 : 4, pieces = i % 4 == 3 ? 2 : 1;
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, chunks), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, pieces), OOC_SUCCESS);
        case_t c = {i % 2 ? OOC_R64 : OOC_C32, LAYOUTS[i / 6], OPS[i % 3 == 1], OPS[i % 5 == 2], 1237 + 101 * i,
                    71 + 13 * i, 301 + 37 * i, i % 4, 1.25, i % 3 == 2 ? 0.0 : -0.5, MEM_PAGEABLE, MEM_PAGEABLE,
                    MEM_PAGEABLE, i >= 9 ? 96 << 10 : 0, 64 + 32 * (i % 4), ring, 0, 0};
        ooc_stats_t st = run_case(&c);
        CU_ASSERT(st.staged_a && st.staged_c && st.blocks >= 8 && st.ring_depth == ring);
        if (i >= 9) CU_ASSERT(st.panels > 1);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_B_CHUNKS, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, 0), OOC_SUCCESS);
    ooc_destroy(H);
    H = saved;
}

/* Staged A through cache-sized pinned buffers (OOC_PARAM_STAGE_CHUNK,
 * pipeline_host.c through_a()): chunks of whole lines, or pieces of one
 * line when a line is longer than a buffer; each buffer refilled only once
 * its copy up is done, each device slot only once the multiply two turns
 * back let go of it (host ops delayed at random, as in test_staged_ahead),
 * panels, k-panels, the transposed orientation (op(B) streamed), C staged
 * or not. A staged C comes out through buffers of its own (through_c():
 * each refilled only once the pool has copied its chunk into C, each
 * device slot reused only once its last chunk is down) and C read in goes
 * up through A's (through_in(): into a slot only once the C before it is
 * down), or with OOC_PARAM_STAGE_C 1 both through the ring. The result is byte-identical to
 * the ring's (chunk 1: never) every way. */
static void test_staged_through(void)
{
    ooc_handle_t *saved = H;
    H = jittered_handle("1000");
    for (int i = 0; i < 8; i++) {
        ooc_dtype_t t = i % 2 ? OOC_R64 : OOC_C32;
        size_t e = tu_elem(t);
        ooc_layout_t layout = LAYOUTS[i / 4];
        ooc_op_t ta = OPS[i % 3 == 1], tb = OPS[i % 5 == 2];
        int swap = i == 5; /* m small, n large: op(A) resident, op(B) streamed */
        /* 4 KiB buffers: blocks of 640 rows, so that a column-major block's lines are longer */
        int long_lines = i % 3 == 0;
        int64_t m = swap ? 211 : 1237 + 101 * i + (long_lines ? 2000 : 0), n = swap ? 2311 : 71 + 13 * i;
        int64_t k = 301 + 37 * i;
        int col = layout == OOC_COL_MAJOR;
        int64_t lda = (col == (ta == OOC_OP_N) ? m : k) + i % 3, ldb = (col == (tb == OOC_OP_N) ? k : n) + 1;
        int64_t ldc = (col ? m : n) + 2;
        size_t na = tu_stored(layout, ta, m, k, lda), nb = tu_stored(layout, tb, k, n, ldb);
        size_t nc = tu_stored(layout, OOC_OP_N, m, n, ldc);
        int pin_c = i % 4 == 1;
        void *A = malloc(na * e), *B = malloc(nb * e), *C0 = malloc(nc * e), *C1 = malloc(nc * e), *C;
        if (pin_c) {
            CU_ASSERT_EQUAL_FATAL(ooc_host_alloc(H, nc * e, &C), OOC_SUCCESS);
        } else {
            C = malloc(nc * e);
        }
        CU_ASSERT_FATAL(A && B && C0 && C1 && C);
        tu_fill(t, A, na, &seed);
        tu_fill(t, B, nb, &seed);
        tu_fill(t, C0, nc, &seed);
        double alpha[2], beta[2];
        scalar(t, 1.25, 0.25, alpha);
        scalar(t, i % 3 == 2 ? 0.0 : -0.5, i % 3 == 2 ? 0.0 : 0.5, beta);
        int64_t chunk = long_lines ? 4096 : i % 3 == 1 ? 12000 : 65536, want = (chunk + 4095) / 4096 * 4096;
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, i >= 6 ? 200 << 10 : 0), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BLOCK_ROWS, swap ? 384 : long_lines ? 640 : 64 + 32 * (i % 4)),
                        OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_RING_DEPTH, 2 + i % 2), OOC_SUCCESS);
        for (int pass = 0; pass < 3; pass++) {
            CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_STAGE_CHUNK, pass ? chunk : 1), OOC_SUCCESS);
            CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_STAGE_C, pass == 2 ? 1 : 0), OOC_SUCCESS);
            memcpy(C, C0, nc * e);
            ooc_status_t st = ooc_gemm(H, t, layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
            if (st != OOC_SUCCESS) fprintf(stderr, "\n    ooc_gemm: %s\n", ooc_last_error(H));
            CU_ASSERT_EQUAL_FATAL(st, OOC_SUCCESS);
            ooc_stats_t s;
            CU_ASSERT_EQUAL(ooc_get_stats(H, &s), OOC_SUCCESS);
            CU_ASSERT(s.blocks >= 4);
            CU_ASSERT_EQUAL(s.a_resident, swap);
            if (i >= 6) CU_ASSERT(s.panels > 1);
            if (pass == 0) {
                CU_ASSERT(s.stage_chunk == 0 && s.stage_bufs == 0 && s.bytes_staged_cached == 0);
                CU_ASSERT(s.stage_out_chunk == 0 && s.stage_out_bufs == 0 && s.stage_cin_chunk == 0);
                memcpy(C1, C, nc * e);
                double worst;
                int64_t bad = tu_check(t, layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C0, C, ldc, &worst);
                if (bad) fprintf(stderr, "\n    case %d: %lld bad elements\n", i, (long long)bad);
                CU_ASSERT_EQUAL(bad, 0);
            } else {
                CU_ASSERT(s.stage_chunk == want && s.stage_bufs == 3);
                int out = pass == 1 && !pin_c, c_read = beta[0] != 0 || s.panel_depth < k;
                CU_ASSERT_EQUAL(s.stage_out_chunk, out ? want : 0);
                CU_ASSERT_EQUAL(s.stage_out_bufs, out ? 3 : 0);
                CU_ASSERT_EQUAL(s.stage_cin_chunk, out && c_read ? want : 0);
                CU_ASSERT_EQUAL(s.stage_cin_bufs, out && c_read ? 3 : 0);
                /* every element of the streamed operand, once per panel, and of C out once and in once */
                CU_ASSERT(s.bytes_staged_cached >=
                          (uint64_t)((swap ? k * n : m * k) + (out ? m * n : 0) + (out && c_read ? m * n : 0)) * e);
                CU_ASSERT(s.bytes_staged_cached <= s.bytes_staged);
                int same = memcmp(C, C1, nc * e) == 0;
                if (!same) fprintf(stderr, "\n    case %d: through the buffers differs from the ring\n", i);
                CU_ASSERT(same);
            }
        }
        free(A);
        free(B);
        free(C0);
        free(C1);
        if (pin_c) ooc_host_free(H, C);
        else free(C);
    }
    ooc_destroy(H);
    H = saved;
}

/* Panels with C in pinned memory: a panel ends with its copies out still
 * running, and the next op(B) goes up meanwhile (pipeline_issue.c
 * leave_out_running()); the next panel's multiplies and copies of C in must
 * wait for them. The host backend's copies out are slowed
 * (OOC_HOST_D2H_DELAY_US, read when a handle opens it) so that several are
 * still queued when each panel ends. */
static void test_panels_out_running(void)
{
    ooc_handle_t *saved = H;
    setenv("OOC_HOST_D2H_DELAY_US", "2000", 1);
    CU_ASSERT_EQUAL_FATAL(ooc_create(&H), OOC_SUCCESS);
    CU_ASSERT_EQUAL(tu_backend_runs(H, OOC_TEST_BACKEND), 1);
    for (int pieces = 0; pieces < 2; pieces++)
        for (int bz = 0; bz < 2; bz++) {
            CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_A_PIECES, pieces ? 4 : 1), OOC_SUCCESS);
            /* B is 211 x 389 doubles = 657 KB; 300 KB of device memory, 64-row blocks */
            case_t c = {OOC_R64, LAYOUTS[pieces], OOC_OP_N, OOC_OP_N, 523, 389, 211, 0, 1.0, bz ? 0.0 : 0.5,
                        MEM_PINNED, MEM_PINNED, MEM_PINNED, 300 << 10, 64, 0, 0, 0};
            ooc_stats_t s = run_case(&c);
            CU_ASSERT(s.panels > 1 && s.a_pieces == (pieces ? 4 : 1));
        }
    ooc_destroy(H);
    H = saved;
    unsetenv("OOC_HOST_D2H_DELAY_US");
}

/* Memory from ooc_host_alloc outlives the handle's backend: a setting that
 * reopens it (the math mode here) must leave the caller's pinned blocks
 * allocated, pinned and intact (the host backend freed them: the next
 * multiply read and wrote freed memory, a wrong C with OOC_SUCCESS). */
static void test_pinned_across_reopen(void)
{
    const int64_t m = 131, n = 77, k = 59;
    size_t e = sizeof(double);
    double *A = alloc_mem(MEM_PINNED, (size_t)(m * k) * e), *B = alloc_mem(MEM_PINNED, (size_t)(k * n) * e);
    double *C = alloc_mem(MEM_PINNED, (size_t)(m * n) * e), *C0 = malloc((size_t)(m * n) * e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(C0);
    tu_fill(OOC_R64, A, (size_t)(m * k), &seed);
    tu_fill(OOC_R64, B, (size_t)(k * n), &seed);
    tu_fill(OOC_R64, C, (size_t)(m * n), &seed);
    const double alpha = 0.75, beta = -1.5;
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BLOCK_ROWS, 32), OOC_SUCCESS);
    const int64_t modes[3] = {OOC_MATH_STRICT, OOC_MATH_TF32, OOC_MATH_STRICT};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_MATH_MODE, modes[i]), OOC_SUCCESS);
        memcpy(C0, C, (size_t)(m * n) * e);
        CU_ASSERT_EQUAL_FATAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, alpha, A, m, B, k, beta,
                                        C, m), OOC_SUCCESS);
        double worst;
        CU_ASSERT_EQUAL(tu_check(OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, &alpha, A, m, B, k, &beta, C0,
                                 C, m, &worst), 0);
        ooc_stats_t st;
        CU_ASSERT_EQUAL(ooc_get_stats(H, &st), OOC_SUCCESS);
        CU_ASSERT(!st.staged_a && !st.staged_c); /* still pinned: copied directly */
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_MATH_MODE, OOC_MATH_STRICT), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BLOCK_ROWS, 0), OOC_SUCCESS);
    /* freed through a handle whose backend is not open (was: "not allocated
     * by this handle", and the block leaked): another handle's block */
    ooc_handle_t *h2 = NULL, *h3 = NULL;
    void *p = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h2), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h3), OOC_SUCCESS);
    ooc_set(h2, OOC_PARAM_BACKEND, OOC_TEST_BACKEND);
    ooc_set(h3, OOC_PARAM_BACKEND, OOC_TEST_BACKEND);
    CU_ASSERT_EQUAL_FATAL(ooc_host_alloc(h2, 4096, &p), OOC_SUCCESS);
    ooc_destroy(h2);
    /* not a block it gave (was: ignored without a word): refused, nothing
     * freed; its start is freed once, then refused */
    void *foreign = malloc(4096);
    CU_ASSERT_PTR_NOT_NULL_FATAL(foreign);
    CU_ASSERT_EQUAL(ooc_host_free(h3, foreign), OOC_ERR_INVALID_PARAM);
    CU_ASSERT(strstr(ooc_last_error(h3), "not a block from ooc_host_alloc") != NULL);
    free(foreign); /* still the caller's */
    CU_ASSERT_EQUAL(ooc_host_free(h3, (char *)p + 64), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(ooc_host_free(h3, p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_host_free(h3, p), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(ooc_host_free(h3, NULL), OOC_SUCCESS);
    ooc_destroy(h3);
    free_mem(MEM_PINNED, A);
    free_mem(MEM_PINNED, B);
    free_mem(MEM_PINNED, C);
    free(C0);
}

/* C sharing an element with A or B is refused, nothing written (it was
 * accepted: with op(B) in several panels A was read again after C's rows
 * overwrote it); disjoint blocks of one matrix, interleaved by a common
 * leading dimension (as a blocked factorisation passes them), and C right
 * after A in memory run and are right. */
static void test_overlap(void)
{
    const int64_t m = 67, n = 45, k = 38, ld = 2 * m + 3, cols = n + k;
    size_t bytes = (size_t)(ld * cols) * sizeof(double);
    double *M = malloc(bytes), *save = malloc(bytes), *D = malloc((size_t)(m * (k + n)) * sizeof(double));
    CU_ASSERT_PTR_NOT_NULL_FATAL(M);
    CU_ASSERT_PTR_NOT_NULL_FATAL(save);
    CU_ASSERT_PTR_NOT_NULL_FATAL(D);
    tu_fill(OOC_R64, M, (size_t)(ld * cols), &seed);
    memcpy(save, M, bytes);
    const double alpha = 1.25, beta = -0.5;
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, 64 << 10), OOC_SUCCESS); /* panels of op(B) */
    /* A = M[0:m, 0:k], B = M[0:k, k:k+n], C = M[m:2m, 0:n]: all with ld */
    double *A = M, *B = M + k * ld, *C = M + m;
    ooc_status_t st = ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, alpha, A, ld, B, ld, beta, C, ld);
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    double worst;
    if (st == OOC_SUCCESS)
        CU_ASSERT_EQUAL(tu_check(OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, &alpha, A, ld, B, ld, &beta,
                                 save + m, C, ld, &worst), 0);
    /* sharing: C on A, C from A's last element on, C's first row on B's last */
    struct {
        double *c;
        const char *with;
    } bad[3] = {{A, "with A"}, {A + (k - 1) * ld + m - 1, "with A"}, {B + k - 1, "with B"}};
    for (int i = 0; i < 3; i++) {
        memcpy(M, save, bytes);
        CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, alpha, A, ld, B, ld, beta, bad[i].c,
                                  ld), OOC_ERR_OVERLAP);
        CU_ASSERT(strstr(ooc_last_error(H), bad[i].with) != NULL);
        CU_ASSERT(memcmp(M, save, bytes) == 0);
    }
    /* row-major, transposed A: C is A itself (an m x k row-major block read as op T) */
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_ROW_MAJOR, OOC_OP_T, OOC_OP_N, m, n, k, alpha, M, ld, B, ld, beta, M + 5, ld),
                    OOC_ERR_OVERLAP);
    /* adjacent, not sharing: C right after A (m x k), both packed */
    tu_fill(OOC_R64, D, (size_t)(m * (k + n)), &seed);
    double *Dsave = malloc((size_t)(m * (k + n)) * sizeof(double));
    CU_ASSERT_PTR_NOT_NULL_FATAL(Dsave);
    memcpy(Dsave, D, (size_t)(m * (k + n)) * sizeof(double));
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, alpha, D, m, B, ld, beta, D + m * k, m),
                    OOC_SUCCESS);
    CU_ASSERT_EQUAL(tu_check(OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, &alpha, D, m, B, ld, &beta,
                             Dsave + m * k, D + m * k, m, &worst), 0);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, 0), OOC_SUCCESS);
    free(M);
    free(save);
    free(D);
    free(Dsave);
}

/* The typed wrappers (ooc_sgemm, _dgemm, _cgemm, _zgemm) pass their own
 * element type, layout, ops and scalars on: each on an op pair whose
 * arguments would not fit swapped, odd sizes, padded leading dimensions and
 * alpha, beta neither 0 nor 1, against OpenBLAS. Every buffer (the scalars
 * too) holds 16 bytes per element, random throughout, so that a wrapper
 * passing another element type reads and writes inside them and fails by
 * its result, not by a crash. */
static void test_typed_wrappers(void)
{
    static const struct {
        ooc_dtype_t t;
        ooc_layout_t layout;
        ooc_op_t ta, tb;
        int64_t m, n, k, pad;
        double alpha[2], beta[2];
    } W[4] = {
        {OOC_R32, OOC_COL_MAJOR, OOC_OP_T, OOC_OP_N, 67, 45, 53, 3, {1.5, 0}, {-0.75, 0}},
        {OOC_R64, OOC_ROW_MAJOR, OOC_OP_N, OOC_OP_T, 59, 71, 37, 5, {-0.5, 0}, {1.25, 0}},
        {OOC_C32, OOC_ROW_MAJOR, OOC_OP_C, OOC_OP_T, 43, 61, 29, 2, {0.75, -0.5}, {0.25, 1.0}},
        {OOC_C64, OOC_COL_MAJOR, OOC_OP_T, OOC_OP_C, 53, 39, 47, 4, {-1.25, 0.5}, {0.5, -0.25}},
    };
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BLOCK_ROWS, 32), OOC_SUCCESS); /* several blocks */
    for (int i = 0; i < 4; i++) {
        const ooc_dtype_t t = W[i].t;
        const ooc_layout_t L = W[i].layout;
        const int64_t m = W[i].m, n = W[i].n, k = W[i].k;
        int col = L == OOC_COL_MAJOR;
        int64_t lda = ((col == (W[i].ta == OOC_OP_N)) ? m : k) + W[i].pad;
        int64_t ldb = ((col == (W[i].tb == OOC_OP_N)) ? k : n) + W[i].pad;
        int64_t ldc = (col ? m : n) + W[i].pad;
        size_t na = tu_stored(L, W[i].ta, m, k, lda), nb = tu_stored(L, W[i].tb, k, n, ldb);
        size_t nc = tu_stored(L, OOC_OP_N, m, n, ldc), e = tu_elem(t);
        void *A = malloc(na * 16), *B = malloc(nb * 16), *C = malloc(nc * 16), *C0 = malloc(nc * e);
        CU_ASSERT_FATAL(A && B && C && C0);
        /* 16 bytes an element: as many doubles as there are bytes / 8 */
        tu_fill(OOC_R64, A, na * 2, &seed);
        tu_fill(OOC_R64, B, nb * 2, &seed);
        tu_fill(OOC_R64, C, nc * 2, &seed);
        tu_fill(t, A, na, &seed);
        tu_fill(t, B, nb, &seed);
        tu_fill(t, C, nc, &seed);
        memcpy(C0, C, nc * e);
        double alpha[2], beta[2]; /* 16 bytes whatever the type */
        memset(alpha, 0x3f, sizeof alpha);
        memset(beta, 0x3f, sizeof beta);
        scalar(t, W[i].alpha[0], W[i].alpha[1], alpha);
        scalar(t, W[i].beta[0], W[i].beta[1], beta);
        ooc_status_t st = OOC_ERR_INTERNAL;
        switch (t) {
        case OOC_R32:
            st = ooc_sgemm(H, L, W[i].ta, W[i].tb, m, n, k, (float)W[i].alpha[0], A, lda, B, ldb,
                           (float)W[i].beta[0], C, ldc);
            break;
        case OOC_R64:
            st = ooc_dgemm(H, L, W[i].ta, W[i].tb, m, n, k, alpha[0], A, lda, B, ldb, beta[0], C, ldc);
            break;
        case OOC_C32: st = ooc_cgemm(H, L, W[i].ta, W[i].tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); break;
        case OOC_C64: st = ooc_zgemm(H, L, W[i].ta, W[i].tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); break;
        }
        if (st != OOC_SUCCESS)
            fprintf(stderr, "\n    wrapper for dtype %d: %s: %s\n", t, ooc_status_string(st), ooc_last_error(H));
        CU_ASSERT_EQUAL(st, OOC_SUCCESS);
        double worst = 0;
        int64_t bad = st == OOC_SUCCESS ? tu_check(t, L, W[i].ta, W[i].tb, m, n, k, alpha, A, lda, B, ldb, beta, C0,
                                                   C, ldc, &worst)
                                        : -1;
        if (bad != 0)
            fprintf(stderr, "\n    wrapper for dtype %d: %lld bad elements, worst %.3g x tolerance\n", t,
                    (long long)bad, worst);
        CU_ASSERT_EQUAL(bad, 0);
        free(A), free(B), free(C), free(C0);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BLOCK_ROWS, 0), OOC_SUCCESS);
}

/* resident memory of this process, bytes (0: unknown), once the allocator
 * has returned its free pages (freed blocks may lie inside its heap) */
static uint64_t resident(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, res = 0;
    if (f == NULL) return 0;
    int got = fscanf(f, "%llu %llu", &size, &res);
    fclose(f);
    return got == 2 ? (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/* A handle keeps its buffers for the next call, but not when they are more
 * than twice what the next plan needs: lowering the budgets gives memory
 * back (it stayed held: 97 MB for a 2 MB plan). Host backend: its "device"
 * memory is this process's. */
static void test_buffers_shrink(void)
{
    /* (a run-time test: the backends are enum constants, which #if reads as 0) */
    if (OOC_TEST_BACKEND != OOC_BACKEND_HOST) return;
    const int64_t m = 4000, n = 1500, k = 1500;
    double *A = malloc((size_t)(m * k) * sizeof(double)), *B = malloc((size_t)(k * n) * sizeof(double));
    double *C = malloc((size_t)(m * n) * sizeof(double));
    CU_ASSERT_FATAL(A && B && C);
    tu_fill(OOC_R64, A, (size_t)(m * k), &seed);
    tu_fill(OOC_R64, B, (size_t)(k * n), &seed);
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, 96 << 20), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, 1.0, A, m, B, k, 0.0, C, m), OOC_SUCCESS);
    ooc_stats_t st;
    CU_ASSERT_EQUAL(ooc_get_stats(H, &st), OOC_SUCCESS);
    uint64_t before = resident();
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, 2 << 20), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_dgemm(H, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 300, 200, 100, 1.0, A, 300, B, 100, 0.0, C, 300),
                    OOC_SUCCESS);
    uint64_t after = resident();
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define OOC_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(OOC_TEST_SANITIZED)
    before = 0; /* a sanitizer's allocator keeps freed memory (ASan's quarantine): not measurable */
#endif
    if (before && after) {
        if (!(st.device_bytes > (40u << 20) && before - after > st.device_bytes / 2))
            fprintf(stderr, "\n    plan %llu bytes; resident %llu -> %llu\n", (unsigned long long)st.device_bytes,
                    (unsigned long long)before, (unsigned long long)after);
        CU_ASSERT(st.device_bytes > (40u << 20));
        CU_ASSERT(before > after && before - after > st.device_bytes / 2);
    }
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_DEVICE_MEM, 0), OOC_SUCCESS);
    free(A), free(B), free(C);
}

/* The staging on the GPU's NUMA node (lib/numa.h). A fake sysfs tree
 * (OOC_NUMA_ROOT) puts device 0 on node N (the first this process may take
 * memory from) and gives node N two of the CPUs this process may run on; a
 * pageable multiply with 2 staging threads then keeps its one helper to
 * those CPUs and (CUDA) prefers node N for the ring's pages (get_mempolicy,
 * where mbind is allowed), and its C is right. With OOC_NUMA=0 the next
 * multiply's pool is made again, unbound. With two GPUs or more, devices 0
 * and 1 (device 1 not in the tree) leave it unbound too. The host backend
 * has no PCI device: its pool stays unbound under the same tree. */
static void test_numa_staging(void)
{
    cpu_set_t set;
    CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof set, &set), 0);
    int cpu[2], n = 0, allowed = CPU_COUNT(&set), node = tu_mem_node();
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &set)) cpu[n++] = c;
    int cuda = OOC_TEST_BACKEND != OOC_BACKEND_HOST;
    ooc_handle_t *h = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_TEST_BACKEND), OOC_SUCCESS);
    /* device 0 alone (OOC_PARAM_DEVICE 0 would mean every visible GPU) */
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICES, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_STAGING_THREADS, 2), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICE_MEM, 8 << 20), OOC_SUCCESS);
    int gpus = 0;
    if (cuda) CU_ASSERT_EQUAL(ooc_device_count(h, &gpus), OOC_SUCCESS);
    char bus[64] = "0000:00:00.0";
    if (cuda) {
        ooc_device_info_t di;
        CU_ASSERT_EQUAL_FATAL(ooc_device_info(h, 0, &di), OOC_SUCCESS);
        size_t i = 0;
        for (; di.pci_bus_id[i] && i + 1 < sizeof bus; i++) bus[i] = (char)tolower((unsigned char)di.pci_bus_id[i]);
        bus[i] = '\0';
    }
    char root[64] = "/tmp/ooc_test_numa_XXXXXX", cmd[1024], list[64];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
    snprintf(list, sizeof list, "%d,%d", cpu[0], n > 1 ? cpu[1] : cpu[0]);
    int len = snprintf(cmd, sizeof cmd,
                       "mkdir -p %s/sys/bus/pci/devices/%s %s/sys/devices/system/node/node%d && echo %d > "
                       "%s/sys/bus/pci/devices/%s/numa_node && echo %s > %s/sys/devices/system/node/node%d/cpulist",
                       root, bus, root, node, node, root, bus, list, root, node);
    CU_ASSERT_FATAL(len > 0 && (size_t)len < sizeof cmd);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    CU_ASSERT_EQUAL(setenv("OOC_NUMA_ROOT", root, 1), 0);
    unsetenv("OOC_NUMA");

    const int64_t m = 1501, nn = 307, k = 203;
    double *A = malloc((size_t)(m * k) * sizeof(double)), *B = malloc((size_t)(k * nn) * sizeof(double));
    double *C = malloc((size_t)(m * nn) * sizeof(double)), *C0 = malloc((size_t)(m * nn) * sizeof(double));
    CU_ASSERT_FATAL(A && B && C && C0);
    tu_fill(OOC_R64, A, (size_t)(m * k), &seed);
    tu_fill(OOC_R64, B, (size_t)(k * nn), &seed);
    tu_fill(OOC_R64, C0, (size_t)(m * nn), &seed);
    double alpha = 0.75, beta = -0.5, worst = 0;
    /* pass 1: OOC_NUMA=0; pass 2 (two GPUs or more): devices 0 and 1, device
     * 1 not in the tree (its node unknown), so the GPUs share no node */
    for (int pass = 0; pass < (gpus >= 2 ? 3 : 2); pass++) {
        if (pass == 1) CU_ASSERT_EQUAL(setenv("OOC_NUMA", "0", 1), 0);
        if (pass == 2) {
            unsetenv("OOC_NUMA");
            CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_DEVICES, 3), OOC_SUCCESS);
        }
        memcpy(C, C0, (size_t)(m * nn) * sizeof(double));
        ooc_status_t st = ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, nn, k, alpha, A, m, B, k, beta, C, m);
        CU_ASSERT_EQUAL(st, OOC_SUCCESS);
        if (st != OOC_SUCCESS) fprintf(stderr, "\n    %s\n", ooc_last_error(h));
        CU_ASSERT_EQUAL(tu_check(OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, nn, k, &alpha, A, m, B, k, &beta, C0,
                                 C, m, &worst),
                        0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(h->pool);
        CU_ASSERT_EQUAL(ooc_pool_threads(h->pool), 1);
        /* bound only when the node's CPUs are some, not all, of those allowed */
        int bind = cuda && allowed > 2 && pass == 0;
        CU_ASSERT_EQUAL(ooc_pool_node(h->pool), bind ? node : -1);
        for (int i = 0; i < 2000 && ooc_pool_bound(h->pool) < bind; i++) usleep(1000);
        CU_ASSERT_EQUAL(ooc_pool_bound(h->pool), bind);
        if (cuda && allowed <= 2 && pass == 0)
            printf("\n    %d CPU(s) allowed: the staging threads' binding not checked here\n", allowed);
    }
    unsetenv("OOC_NUMA");
    unsetenv("OOC_NUMA_ROOT");
    /* the tree as the library read it: the device's node, two CPUs there */
    unsigned long mask[OOC_NUMA_MASK_WORDS];
    int all = -1;
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(root, bus), node);
    CU_ASSERT_EQUAL(ooc_numa_node_cpus(root, node, mask, OOC_NUMA_MAX_CPUS, &all), n);
#ifdef SYS_get_mempolicy
    /* the ring of the first pass stays (the second needs no more): on node */
    char *probe = mmap(NULL, 1 << 21, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_FATAL(probe != MAP_FAILED);
    int can = ooc_numa_prefer(probe, 1 << 21, node);
    munmap(probe, 1 << 21);
    if (cuda && can != 0) {
        printf("\n    mbind refused here (%s): the ring's placement not checked\n", strerror(can));
    } else if (cuda && node < 64) {
        const ooc_res_t *res = &h->dev[0].res;
        CU_ASSERT_FATAL(res->pin != NULL && res->pin_bytes > 0);
        int mode = -1;
        unsigned long nodes[16] = {0};
        long rc = syscall(SYS_get_mempolicy, &mode, nodes, 16 * 8 * sizeof(unsigned long),
                          (char *)res->pin + res->pin_bytes / 2, 2UL /* MPOL_F_ADDR */);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(mode, 1 /* MPOL_PREFERRED */);
        CU_ASSERT_EQUAL(nodes[0], 1UL << node);
    }
#endif
    ooc_destroy(h);
    free(A), free(B), free(C), free(C0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

int main(void)
{
    if (ooc_create(&H) != OOC_SUCCESS) return 1;
    int ok = tu_backend_runs(H, OOC_TEST_BACKEND);
    if (ok <= 0) {
        ooc_destroy(H);
        return ok == 0 ? 77 : 1;
    }
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("gemm", NULL, NULL);
    CU_add_test(s, "all layouts and ops, double", test_ops_double);
    CU_add_test(s, "all layouts and ops, single", test_ops_single);
    CU_add_test(s, "all layouts and ops, complex single", test_ops_complex_single);
    CU_add_test(s, "all layouts and ops, complex double", test_ops_complex_double);
    CU_add_test(s, "typed wrappers: s, d, c, z", test_typed_wrappers);
    CU_add_test(s, "many row blocks with a remainder", test_many_blocks);
    CU_add_test(s, "column panels of B", test_column_panels);
    CU_add_test(s, "row panels of B, beta once", test_row_panels);
    CU_add_test(s, "complex conjugate transposes, panels", test_complex_panels);
    CU_add_test(s, "ring 2, five streams, small staging", test_ring_streams_staging);
    CU_add_test(s, "every ring depth, op(B) in 8 chunks", test_every_ring);
    CU_add_test(s, "every stream count, A and C through cache-sized buffers", test_every_stream_count);
    CU_add_test(s, "alpha and beta aligned only as their real part", test_scalars_unaligned);
    CU_add_test(s, "op(A) resident: staged_a is the caller's A", test_stats_resident_a);
    CU_add_test(s, "the least budgets a refusal names are enough", test_least_budget_named);
    CU_add_test(s, "wide problems", test_wide);
    CU_add_test(s, "one handle, many sizes", test_reuse);
    CU_add_test(s, "degenerate shapes", test_degenerate_shapes);
    CU_add_test(s, "timeline trace", test_trace);
    CU_add_test(s, "timeline trace: timed events for the ops it may trace", test_trace_events);
    CU_add_test(s, "chunked upload of B, shrinking tail", test_chunks_and_tail);
    CU_add_test(s, "A's blocks in k-pieces", test_a_pieces);
    CU_add_test(s, "panels: op(B) goes up while C goes out", test_panels_out_running);
    CU_add_test(s, "staged operands: the reader stages ahead into free slots", test_staged_ahead);
    CU_add_test(s, "staged A through cache-sized buffers", test_staged_through);
    CU_add_test(s, "A in k-pieces, the last by chunks of C's columns", test_last_piece_cols);
    CU_add_test(s, "one block in k-pieces: op(B) goes up with them", test_b_follow);
    CU_add_test(s, "device tiles 16-byte aligned", test_aligned_tiles);
    CU_add_test(s, "op(B) transposed on the device: multiplies wait for the transposes", test_transposed_order);
    CU_add_test(s, "pinned memory across a reopened backend", test_pinned_across_reopen);
    CU_add_test(s, "C overlapping A or B", test_overlap);
    CU_add_test(s, "lowered budgets give the buffers back (host backend)", test_buffers_shrink);
    CU_add_test(s, "the staging on the GPU's NUMA node", test_numa_staging);
    int rc = tu_run();
    ooc_destroy(H);
    return rc;
}
