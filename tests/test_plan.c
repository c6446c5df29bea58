/* SPDX-License-Identifier: MIT */
/*
 * test_plan.c: the planner's invariants, without a GPU: every plan fits its
 * budgets and covers the problem; panels only when op(B) does not fit, row
 * panels only when a column does not; budgets too small give a status; more
 * memory never means more traffic.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "plan.h"
#include "testutil.h"

static ooc_plan_input_t input(int64_t m, int64_t n, int64_t k, size_t e, uint64_t dev)
{
    ooc_plan_input_t in;
    memset(&in, 0, sizeof in);
    in.m = m;
    in.n = n;
    in.k = k;
    in.elem = e;
    in.device_budget = dev;
    in.host_budget = UINT64_MAX;
    return in;
}

/* The device bytes of an x by y tile as the plan counts them (plan.c
 * tile_bytes): packed, or with pad_lines its lines on pitches of 16 bytes
 * (pipeline_int.h dev_pitch), whichever way they lie. */
static uint64_t pad16(uint64_t w) { return (w + 15) / 16 * 16; }
static uint64_t tile(int pad, uint64_t e, int64_t x, int64_t y)
{
    if (!pad) return e * (uint64_t)x * (uint64_t)y;
    uint64_t a = (uint64_t)x * pad16(e * (uint64_t)y), b = (uint64_t)y * pad16(e * (uint64_t)x);
    return a > b ? a : b;
}

/* What must hold for any plan the planner returns. */
static int check_invariants(const ooc_plan_input_t *in, const ooc_plan_t *p)
{
    int ok = 1;
#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            ok = 0;                                                                                \
            fprintf(stderr, "\n    plan m=%lld n=%lld k=%lld e=%zu budget=%llu: %s\n",             \
                    (long long)in->m, (long long)in->n, (long long)in->k, in->elem,                \
                    (unsigned long long)in->device_budget, #c);                                    \
        }                                                                                          \
    } while (0)
    int64_t m = p->swap ? in->n : in->m, n = p->swap ? in->m : in->n;
    REQUIRE(p->m == m && p->n == n && p->k == in->k);
    REQUIRE(p->mb >= 1 && p->mb <= m && p->mb <= OOC_PLAN_MAX_DIM);
    REQUIRE(p->nb >= 1 && p->nb <= n && p->nb <= OOC_PLAN_MAX_DIM);
    REQUIRE(p->kb >= 1 && p->kb <= in->k && p->kb <= OOC_PLAN_MAX_DIM);
    /* the blocks tile [0, m) in order, none larger than mb, the last ones shrinking */
    int64_t at = 0, prev = p->mb, tiled = 1;
    for (int64_t i = 0; i < p->m_blocks && tiled; i++) {
        int64_t r0, r1;
        ooc_plan_block(p, i, &r0, &r1);
        tiled = r0 == at && r1 > r0 && r1 - r0 <= p->mb;
        if (i >= p->m_blocks - p->tail) /* mb/2, mb/4, ... after the (maybe partial) last full block */
            tiled = tiled && r1 - r0 == (i == p->m_blocks - p->tail ? p->mb / 2 : prev / 2);
        prev = r1 - r0;
        at = r1;
    }
    REQUIRE(tiled && at == m);
    REQUIRE(p->tail >= 0 && p->tail <= 3 && (p->tail == 0 || (p->mb >> p->tail) >= 32));
    REQUIRE(p->b_chunks >= 1 && p->b_chunks <= OOC_MAX_B_CHUNKS && p->b_chunks <= (p->kb < p->nb ? p->kb : p->nb));
    REQUIRE(p->n_panels * p->nb >= n && (p->n_panels - 1) * p->nb < n);
    REQUIRE(p->k_panels * p->kb >= in->k && (p->k_panels - 1) * p->kb < in->k);
    REQUIRE(p->ring >= 2 && p->streams >= 3);
    if (in->ring) REQUIRE(p->ring == in->ring);
    if (in->streams) REQUIRE(p->streams == in->streams);
    if (in->block_rows) REQUIRE(p->mb <= in->block_rows);
    uint64_t e = in->elem, R = (uint64_t)p->ring;
    /* a device slot holds one k-piece of A's block (the whole block: 1 piece);
     * with pieces, chunks (of the last piece's columns) only when asked for,
     * or when C's blocks go out in place as columns */
    REQUIRE(p->a_pieces >= 1 && p->a_pieces <= p->kb);
    REQUIRE(p->a_pieces == 1 || p->b_chunks == 1 || in->b_chunks || (in->lines[p->swap] & OOC_PLAN_STRIDED_C));
    if (in->a_pieces) REQUIRE(p->a_pieces == (in->a_pieces < p->kb ? in->a_pieces : p->kb));
    /* a piece: an even share of the depth; with pad_lines up to 7 more (the
     * pipeline then starts pieces at multiples of 8) */
    int btr = in->b_transpose[p->swap] != 0, pad = in->pad_lines != 0 || btr;
    REQUIRE(p->pad_lines == pad);
    /* op(B) transposed on the device (this orientation's): two scratch buffers of 1/64 of its panel, at
     * most 16 MiB, at least a line of it as stored (a row of op(B) on a 16-byte pitch), in 256 bytes */
    REQUIRE(p->b_transposed == btr);
    uint64_t line = pad16(in->elem * (uint64_t)p->nb), scr = line * (uint64_t)p->kb / 64;
    if (scr > ((uint64_t)16 << 20)) scr = (uint64_t)16 << 20;
    if (scr < line) scr = line;
    scr = btr ? (scr + 255) / 256 * 256 : 0;
    REQUIRE(p->dev_b_scratch_bytes == scr);
    int64_t piece = (p->kb + p->a_pieces - 1) / p->a_pieces + (pad && p->a_pieces > 1 ? 7 : 0);
    if (piece > p->kb) piece = p->kb;
    uint64_t RA = (uint64_t)p->a_slots;
    REQUIRE(RA == (p->a_pieces > 1 ? OOC_PLAN_PIECE_SLOTS : R));
    uint64_t tb = tile(pad, e, p->kb, p->nb), ta = tile(pad, e, p->mb, piece), tc = tile(pad, e, p->mb, p->nb);
    REQUIRE(p->dev_b_bytes == tb && p->dev_a_slot_bytes == ta && p->dev_c_slot_bytes == tc);
    REQUIRE(p->device_bytes == tb + 2 * scr + R * tc + RA * ta);
    REQUIRE(p->device_bytes <= in->device_budget);
    REQUIRE(p->host_bytes <= in->host_budget);
    REQUIRE(p->c_read == (in->beta_nonzero || p->k_panels > 1));
    /* staging room only for what is staged */
    int sa = p->swap ? in->stage_b : in->stage_a, sb = p->swap ? in->stage_a : in->stage_b;
    if (!sa && !sb && !in->stage_c) REQUIRE(p->host_bytes == 0);
    /* staged A: in the in-slots, or through the cache-sized buffers (whole blocks only; then op(B)'s
     * staged pieces at least a buffer large) */
    REQUIRE(p->through_chunk == 0 || (sa && p->a_pieces == 1 && p->through_bufs >= 1 &&
                                      p->through_bufs <= OOC_PLAN_MAX_THROUGH_BUFS));
    if (sa && !p->through_chunk) REQUIRE(p->pin_in_slot_bytes >= e * (uint64_t)p->mb * (uint64_t)p->kb);
    if (sb) REQUIRE(p->pin_in_slot_bytes >= e * (uint64_t)(p->kb > p->nb ? p->kb : p->nb));
    if (sb) REQUIRE(p->pin_in_slot_bytes >= p->through_chunk);
    /* staged C: out through its slots, or through cache-sized buffers where asked */
    REQUIRE(p->through_out_chunk == 0 || (in->stage_c && in->through_out_ok && p->through_out_chunk == in->through_chunk &&
                                          p->through_out_bufs == in->through_bufs));
    /* staged C read in: through the in-slots, or the reader's buffers where asked (then no C in the slots) */
    REQUIRE(p->through_cin_chunk == 0 || (in->stage_c && in->through_cin_ok && p->c_read &&
                                          p->through_cin_chunk == in->through_chunk &&
                                          p->through_cin_bufs == in->through_bufs));
    if (in->stage_c && p->c_read && !p->through_cin_chunk)
        REQUIRE(p->pin_in_slot_bytes >= e * (uint64_t)p->mb * (uint64_t)p->nb);
    if (in->stage_c)
        REQUIRE(p->pin_out_slot_bytes == (p->through_out_chunk ? 0 : e * (uint64_t)p->mb * (uint64_t)p->nb));
    return ok;
#undef REQUIRE
}

static uint64_t rng = 12345;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random shapes, element sizes, flags and budgets: every plan keeps the invariants. */
static void test_random_sweep(void)
{
    static const size_t elems[4] = {4, 8, 8, 16};
    int planned = 0, refused = 0;
    for (int t = 0; t < 20000; t++) {
        int64_t m = 1 + (int64_t)(next() % (t % 3 ? 5000 : 300000));
        int64_t n = 1 + (int64_t)(next() % (t % 5 ? 3000 : 100000));
        int64_t k = 1 + (int64_t)(next() % (t % 7 ? 3000 : 100000));
        ooc_plan_input_t in = input(m, n, k, elems[next() % 4], next() % ((uint64_t)2 << (next() % 36)));
        in.beta_nonzero = (int)(next() % 2);
        in.stage_a = (int)(next() % 2);
        in.stage_b = (int)(next() % 2);
        in.stage_c = (int)(next() % 2);
        in.host_budget = next() % 4 ? UINT64_MAX : 1 + next() % ((uint64_t)1 << 26);
        in.ring = next() % 3 ? 0 : 2 + (int)(next() % 5);
        in.streams = next() % 3 ? 0 : 3 + (int)(next() % 5);
        in.block_rows = next() % 4 ? 0 : 1 + (int64_t)(next() % 4096);
        in.a_pieces = next() % 4 ? 0 : 1 + (int)(next() % 8);
        if (in.a_pieces > k) in.a_pieces = 0;
        in.allow_swap = (int)(next() % 2);
        in.pad_lines = (int)(next() % 2);
        if (t % 4 == 1) { /* op(B) transposed on the device in one orientation (pad_lines then off; by t:
                             * the draws after this one stay those the other tests were written with) */
            in.pad_lines = 0;
            in.b_transpose[(t / 4) % 2] = 1;
        }
        in.lines[0] = (int)(next() % 8); /* how the copies lie: any */
        in.lines[1] = (int)(next() % 8);
        if (next() % 3 == 0) { /* staged A through cache-sized buffers, where it is in memory */
            in.through_chunk = (uint64_t)4096 << (next() % 14);
            in.through_bufs = 1 + (int)(next() % OOC_PLAN_MAX_THROUGH_BUFS);
            in.through_ok[0] = (int)(next() % 2);
            in.through_ok[1] = (int)(next() % 2);
            in.through_out_ok = (int)(next() % 2);
            in.through_cin_ok = (int)(next() % 2);
        }
        ooc_plan_t p;
        memset(&p, 0xab, sizeof p);
        ooc_status_t st = ooc_plan_make(&in, &p);
        if (st == OOC_SUCCESS) {
            planned++;
            if (!check_invariants(&in, &p)) {
                CU_FAIL("invariant broken");
                return;
            }
            if (!in.allow_swap) CU_ASSERT_EQUAL(p.swap, 0);
        } else {
            CU_ASSERT_EQUAL(st, OOC_ERR_BUDGET_TOO_SMALL);
            refused++;
        }
    }
    /* the sweep must exercise both outcomes */
    CU_ASSERT(planned > 1000);
    CU_ASSERT(refused > 100);
}

/* S1 (DGEMM 65536 x 16384 x 16384) on an 80 GB GPU: B resident whole, many blocks. */
static void test_s1_fits(void)
{
    ooc_plan_input_t in = input(65536, 16384, 16384, 8, (uint64_t)76 << 30);
    in.allow_swap = 1;
    ooc_plan_t p;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT_EQUAL(p.swap, 0);
    CU_ASSERT_EQUAL(p.n_panels, 1);
    CU_ASSERT_EQUAL(p.k_panels, 1);
    CU_ASSERT(p.m_blocks >= 8);
    CU_ASSERT(p.mb % 256 == 0);
    in.block_rows = p.mb + 96; /* asked for, and it fits: kept as asked */
    ooc_plan_t asked;
    CU_ASSERT(ooc_plan_make(&in, &asked) == OOC_SUCCESS && check_invariants(&in, &asked));
    CU_ASSERT_EQUAL(asked.mb, p.mb + 96);
    in.block_rows = 0;
    CU_ASSERT_EQUAL(p.tail, 3);      /* drain: the last blocks shrink */
    CU_ASSERT_EQUAL(p.b_chunks, 8);  /* B (2 GiB) goes up in chunks */
    /* traffic: A, B and C once each */
    CU_ASSERT_EQUAL(p.traffic_bytes, 8ull * (65536ull * 16384 + 16384ull * 16384 + 65536ull * 16384));
}

/* B larger than the budget but one column fits: column panels only. */
static void test_column_panels(void)
{
    ooc_plan_input_t in = input(65536, 16384, 16384, 8, (uint64_t)1 << 30); /* B is 2 GiB */
    ooc_plan_t p;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.n_panels > 2);
    CU_ASSERT_EQUAL(p.k_panels, 1);
    CU_ASSERT_EQUAL(p.nb, (16384 + p.n_panels - 1) / p.n_panels); /* equal panels */
}

/* Not one column of B fits: row panels, and C is read back. */
static void test_row_panels(void)
{
    ooc_plan_input_t in = input(1000, 1000, 1000000, 8, (uint64_t)4 << 20); /* a column: 8 MB */
    ooc_plan_t p;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.k_panels > 1);
    CU_ASSERT(p.c_read);
}

/* op(B) transposed on the device (DGEMM of cuBLAS's pair NT, backend.h
 * ooc_resident_transposed): only in the orientation asked for, padded, its
 * two scratch buffers counted; a fixed plan (a resumed job) gets the same;
 * the least budget includes them. */
static void test_transposed(void)
{
    ooc_plan_t p, f;
    /* session 41's shape, one orientation allowed: op(B) 576 MB, buffers of 9 MB (1/64 of it) */
    ooc_plan_input_t in = input(16517, 6509, 11061, 8, (uint64_t)100 << 30);
    in.b_transpose[0] = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(!p.swap && p.b_transposed && p.pad_lines && p.nb == 6509 && p.kb == 11061);
    CU_ASSERT_EQUAL(p.dev_b_scratch_bytes, (pad16(8 * 6509) * 11061 / 64 + 255) / 256 * 256);
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &p, &f), OOC_SUCCESS);
    CU_ASSERT(f.b_transposed && f.pad_lines && f.dev_b_scratch_bytes == p.dev_b_scratch_bytes &&
              f.device_bytes == p.device_bytes);
    /* a large panel: 16 MiB buffers; one line larger than that: the line */
    in = input(65537, 16385, 16383, 8, (uint64_t)100 << 30);
    in.b_transpose[0] = 1;
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && check_invariants(&in, &p));
    CU_ASSERT(p.b_transposed && p.dev_b_scratch_bytes == (uint64_t)16 << 20);
    in = input(9, 3000001, 3, 8, (uint64_t)100 << 30);
    in.b_transpose[0] = 1;
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && check_invariants(&in, &p));
    CU_ASSERT(!p.swap && p.b_transposed && p.dev_b_scratch_bytes == (pad16(8 * (uint64_t)p.nb) + 255) / 256 * 256);
    /* the other orientation only: the same problem transposed when the planner takes it, else packed */
    in = input(4097, 24001, 6001, 8, (uint64_t)100 << 30);
    in.allow_swap = 1;
    in.b_transpose[1] = 1;
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && check_invariants(&in, &p));
    CU_ASSERT(p.swap && p.b_transposed && p.pad_lines);
    in.b_transpose[1] = 0;
    in.b_transpose[0] = 1;
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && check_invariants(&in, &p));
    CU_ASSERT(p.swap && !p.b_transposed && !p.pad_lines && p.dev_b_scratch_bytes == 0);
    /* the least: 1x1x1 tiles of 16 bytes, ring 2, and two buffers of 256 bytes */
    in = input(101, 101, 101, 8, 16 * 5 + 2 * 256 - 1);
    in.b_transpose[0] = 1;
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_ERR_BUDGET_TOO_SMALL);
    uint64_t dev, host;
    ooc_plan_least_need(&in, NULL, &dev, &host);
    CU_ASSERT_EQUAL(dev, 16 * 5 + 2 * 256);
    in.device_budget = 16 * 5 + 2 * 256;
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && check_invariants(&in, &p) && p.b_transposed);
    CU_ASSERT(p.mb == 1 && p.nb == 1 && p.kb == 1 && p.device_bytes == 16 * 5 + 2 * 256);
    /* the plan's own check: transposed needs its buffers and padding, and none without */
    p.dev_b_scratch_bytes = 0;
    CU_ASSERT_EQUAL(ooc_plan_check(&p), OOC_ERR_INTERNAL);
    p.dev_b_scratch_bytes = 256, p.pad_lines = 0;
    CU_ASSERT_EQUAL(ooc_plan_check(&p), OOC_ERR_INTERNAL);
    p.pad_lines = 1, p.b_transposed = 0;
    CU_ASSERT_EQUAL(ooc_plan_check(&p), OOC_ERR_INTERNAL);
}

/* Budgets below any plan: a status, and the output untouched. */
static void test_too_small(void)
{
    uint64_t budgets[4] = {0, 1, 8, 8 * 4};
    for (int i = 0; i < 4; i++) {
        ooc_plan_input_t in = input(100, 100, 100, 8, budgets[i]);
        ooc_plan_t p, before;
        memset(&p, 0x5a, sizeof p);
        before = p;
        CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_ERR_BUDGET_TOO_SMALL);
        CU_ASSERT(memcmp(&p, &before, sizeof p) == 0);
    }
    /* the smallest that works: 1x1 blocks, kb = 1, ring 3: 8 * (1 + 3 * 2) bytes */
    ooc_plan_input_t in = input(100, 100, 100, 8, 8 * 7);
    ooc_plan_t p;
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    /* lines padded to 16 bytes (TF32): each tile's one element takes 16, the least a ring of 2's 16 * 5 */
    in.pad_lines = 1;
    in.device_budget = 16 * 5 - 1;
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_ERR_BUDGET_TOO_SMALL);
    in.device_budget = 16 * 5;
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p) && p.mb == 1 && p.nb == 1 && p.kb == 1 && p.device_bytes == 16 * 5);
}

/* A plan of tiles too many and small to be worth running (a budget in the
 * wrong unit) is told apart, and the least budget that plans a useful one
 * is found: the plan at it is useful, at 1% less it is not (pageable A and
 * C: the staging budget too, ample here). */
static void test_useful(void)
{
    ooc_plan_t p;
    ooc_plan_input_t in = input(2000, 2000, 2000, 8, 2088); /* 2088 meant as MiB */
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(!ooc_plan_useful(&p, in.m, in.n, in.k));
    uint64_t dev, host;
    ooc_plan_least_useful(&in, &dev, &host);
    CU_ASSERT(dev > 2088 && host == in.host_budget);
    in.device_budget = dev;
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && ooc_plan_useful(&p, in.m, in.n, in.k));
    in.device_budget = dev - dev / 100;
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && !ooc_plan_useful(&p, in.m, in.n, in.k));
    /* few tiles (a small problem in a small budget), or many large ones (a
     * huge problem), are useful; the budgets of the suite's shapes too */
    in = input(100, 100, 100, 8, 8 * 7);
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && ooc_plan_useful(&p, in.m, in.n, in.k));
    p.m_blocks = 1 << 11, p.n_panels = 1 << 10, p.k_panels = 1;
    CU_ASSERT(ooc_plan_useful(&p, (int64_t)1 << 22, (int64_t)1 << 18, (int64_t)1 << 10));
    CU_ASSERT(!ooc_plan_useful(&p, (int64_t)1 << 22, (int64_t)1 << 18, (int64_t)1 << 4));
    in = input(65536, 16384, 16384, 8, (uint64_t)1 << 30); /* panels */
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && ooc_plan_useful(&p, in.m, in.n, in.k));
    /* pageable operands with a tiny staging budget: staging doubled too */
    in = input(2000, 2000, 2000, 8, (uint64_t)1 << 30);
    in.stage_a = in.stage_c = 1;
    in.host_budget = 1024; /* 1-row blocks 16 x 32 (15.75M tiles) */
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && !ooc_plan_useful(&p, in.m, in.n, in.k));
    ooc_plan_least_useful(&in, &dev, &host);
    /* the staging alone limits it: the device budget is not raised (it was
     * doubled with the staging, to 4 GiB, and never bisected) */
    CU_ASSERT(dev == (uint64_t)1 << 30 && host > 1024 && host < 65536);
    in.host_budget = host;
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && ooc_plan_useful(&p, in.m, in.n, in.k));
    in.host_budget = host - host / 100;
    CU_ASSERT(ooc_plan_make(&in, &p) == OOC_SUCCESS && !ooc_plan_useful(&p, in.m, in.n, in.k));
}

/* Nonsense input is a bug in the caller: a status, not a crash. */
static void test_bad_input(void)
{
    ooc_plan_t p;
    ooc_plan_input_t in = input(0, 10, 10, 8, 1 << 30);
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_ERR_INTERNAL);
    in = input(10, 10, 10, 0, 1 << 30);
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_ERR_INTERNAL);
    in = input(10, 10, 10, 8, 1 << 30);
    in.ring = 1;
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_ERR_INTERNAL);
    in.ring = 0;
    in.streams = 2;
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_ERR_INTERNAL);
    CU_ASSERT_EQUAL(ooc_plan_make(NULL, &p), OOC_ERR_INTERNAL);
    CU_ASSERT_EQUAL(ooc_plan_make(&in, NULL), OOC_ERR_INTERNAL);
}

/* More device memory never means more bytes over the bus. */
static void test_monotone_traffic(void)
{
    int64_t shapes[3][3] = {{20000, 5000, 3000}, {3000, 20000, 5000}, {500, 500, 200000}};
    for (int s = 0; s < 3; s++) {
        uint64_t last = UINT64_MAX;
        for (uint64_t budget = (uint64_t)1 << 20; budget <= (uint64_t)1 << 34; budget *= 2) {
            ooc_plan_input_t in = input(shapes[s][0], shapes[s][1], shapes[s][2], 8, budget);
            in.allow_swap = 1;
            ooc_plan_t p;
            if (ooc_plan_make(&in, &p) != OOC_SUCCESS) continue;
            CU_ASSERT(check_invariants(&in, &p));
            if (p.traffic_bytes > last)
                fprintf(stderr, "\n    shape %d budget %llu: traffic %llu > %llu (mb %lld nb %lld kb %lld swap %d)\n", s,
                        (unsigned long long)budget, (unsigned long long)p.traffic_bytes, (unsigned long long)last,
                        (long long)p.mb, (long long)p.nb, (long long)p.kb, p.swap);
            CU_ASSERT(p.traffic_bytes <= last);
            last = p.traffic_bytes;
        }
    }
}

/* A wide problem whose A fits and B does not: the planner keeps A resident. */
static void test_swap(void)
{
    ooc_plan_input_t in = input(1000, 1000000, 1000, 8, (uint64_t)256 << 20); /* A 8 MB, B 8 GB */
    in.allow_swap = 1;
    in.stage_b = 1;
    ooc_plan_t p;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT_EQUAL(p.swap, 1);
    CU_ASSERT_EQUAL(p.n_panels, 1);
    in.allow_swap = 0;
    ooc_plan_t q;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.swap, 0);
    CU_ASSERT(q.traffic_bytes > p.traffic_bytes);
}

/* The pinned staging budget limits block rows of staged operands. */
static void test_host_budget(void)
{
    ooc_plan_input_t in = input(100000, 1000, 1000, 8, (uint64_t)8 << 30);
    in.stage_a = in.stage_c = 1;
    in.host_budget = (uint64_t)48 << 20;
    ooc_plan_t p;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.host_bytes <= in.host_budget);
    CU_ASSERT(p.host_bytes > 0);
    in.host_budget = 20; /* less than the smallest staging ring: 2 x (A in, C out) of 8 bytes */
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_ERR_BUDGET_TOO_SMALL);
}

/* Explicit ring, streams and block rows are honoured. */
static void test_explicit(void)
{
    ooc_plan_input_t in = input(10000, 300, 300, 4, (uint64_t)1 << 30);
    in.ring = 5;
    in.streams = 6;
    in.block_rows = 333;
    ooc_plan_t p;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT_EQUAL(p.ring, 5);
    CU_ASSERT_EQUAL(p.streams, 6);
    CU_ASSERT(p.mb <= 333 && p.mb >= 300);
}

static int same_plan(const ooc_plan_t *p, const ooc_plan_t *q)
{
    return p->swap == q->swap && p->m == q->m && p->n == q->n && p->k == q->k && p->mb == q->mb &&
           p->nb == q->nb && p->kb == q->kb && p->m_blocks == q->m_blocks && p->n_panels == q->n_panels &&
           p->k_panels == q->k_panels && p->ring == q->ring && p->streams == q->streams &&
           p->c_read == q->c_read && p->dev_b_bytes == q->dev_b_bytes && p->dev_a_slot_bytes == q->dev_a_slot_bytes &&
           p->dev_c_slot_bytes == q->dev_c_slot_bytes && p->device_bytes == q->device_bytes &&
           p->pin_in_slot_bytes == q->pin_in_slot_bytes && p->pin_out_slot_bytes == q->pin_out_slot_bytes &&
           p->host_bytes == q->host_bytes && p->traffic_bytes == q->traffic_bytes && p->a_pieces == q->a_pieces;
}

/* A plan made again from its own sizes (what a resume does) is the same plan. */
static void test_fixed(void)
{
    int reproduced = 0;
    for (int t = 0; t < 2000; t++) {
        ooc_plan_input_t in = input(1 + (int64_t)(next() % 20000), 1 + (int64_t)(next() % 5000),
                                    1 + (int64_t)(next() % 5000), 8, 1 + next() % ((uint64_t)1 << 30));
        in.stage_a = (int)(next() % 2);
        in.stage_c = (int)(next() % 2);
        in.allow_swap = 1;
        in.devices = 1 + (int)(next() % 4);
        ooc_plan_t p, q;
        if (ooc_plan_make(&in, &p) != OOC_SUCCESS) continue;
        /* one block per device multiplied chunk by chunk (as many as there are blocks) */
        CU_ASSERT_EQUAL(p.lead, in.devices < p.m_blocks ? in.devices : p.m_blocks);
        memset(&q, 0x3c, sizeof q);
        CU_ASSERT_EQUAL_FATAL(ooc_plan_fixed(&in, &p, &q), OOC_SUCCESS);
        CU_ASSERT(same_plan(&p, &q));
        CU_ASSERT(q.tail == p.tail && q.b_chunks == p.b_chunks);
        /* whatever tail, chunks and devices this run has: the recorded ones */
        in.tail = 1 + (int)(next() % 6);
        in.b_chunks = 1 + (int)(next() % OOC_MAX_B_CHUNKS);
        in.devices = 1 + (int)(next() % 4);
        CU_ASSERT_EQUAL_FATAL(ooc_plan_fixed(&in, &p, &q), OOC_SUCCESS);
        CU_ASSERT(same_plan(&p, &q) && q.tail == p.tail && q.b_chunks == p.b_chunks && q.lead == p.lead &&
                  q.tail_rep == p.tail_rep);
        reproduced++;
        /* another repeat of the tail is another plan: made as recorded or
         * refused, never made with this run's repeat */
        if (p.tail > 0) {
            ooc_plan_t w = p;
            w.tail_rep = p.tail_rep + 1;
            ooc_status_t st = ooc_plan_fixed(&in, &w, &q);
            CU_ASSERT(st == OOC_ERR_INTERNAL || (st == OOC_SUCCESS && q.tail_rep == w.tail_rep));
        }
        /* the same sizes no longer fit a smaller budget (with the plan's
         * ring given: the planner may take a ring of 2 for sizes made so) */
        in.ring = p.ring;
        in.device_budget = p.device_bytes - 1;
        CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &p, &q), OOC_ERR_BUDGET_TOO_SMALL);
    }
    CU_ASSERT(reproduced > 1000);
    ooc_plan_input_t in = input(100, 50, 30, 8, 1 << 30);
    ooc_plan_t q, w = {.swap = 0, .mb = 101, .nb = 50, .kb = 30, .tail = 0, .b_chunks = 1, .lead = 1, .tail_rep = 1, .a_pieces = 1};
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &w, &q), OOC_ERR_INTERNAL); /* mb > m */
    w = (ooc_plan_t){.swap = 1, .mb = 50, .nb = 100, .kb = 30, .tail = 0, .b_chunks = 1, .lead = 1, .tail_rep = 1, .a_pieces = 1};
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &w, &q), OOC_SUCCESS); /* swapped: m, n exchanged */
    w = (ooc_plan_t){.swap = 0, .mb = 10, .nb = 0, .kb = 30, .tail = 0, .b_chunks = 1, .lead = 1, .tail_rep = 1, .a_pieces = 1};
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &w, &q), OOC_ERR_INTERNAL);
    w = (ooc_plan_t){.swap = 2, .mb = 10, .nb = 10, .kb = 30, .tail = 0, .b_chunks = 1, .lead = 1, .tail_rep = 1, .a_pieces = 1};
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &w, &q), OOC_ERR_INTERNAL); /* swap is 0 or 1 */
    w = (ooc_plan_t){.swap = 0, .mb = 10, .nb = 10, .kb = 30, .tail = 2, .b_chunks = 1, .lead = 1, .tail_rep = 1, .a_pieces = 1};
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &w, &q), OOC_ERR_INTERNAL); /* no tail for 10-row blocks of 100 */
    w = (ooc_plan_t){.swap = 0, .mb = 10, .nb = 10, .kb = 30, .tail = 0, .b_chunks = 9, .lead = 1, .tail_rep = 1};
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &w, &q), OOC_ERR_INTERNAL); /* at most 8 chunks */
}

/* The least traffic with the resident operand uploaded to each device:
 * never above what the plan itself moves so, never below one device's
 * least, and from whichever orientation moves less that way (a least from
 * the other orientation plus this one's uploads made an optimal plan on 2
 * devices read 1.06x the least). */
static void test_least_each(void)
{
    for (int t = 0; t < 3000; t++) {
        ooc_plan_input_t in = input(1 + (int64_t)(next() % 3000), 1 + (int64_t)(next() % 3000),
                                    1 + (int64_t)(next() % 3000), 8, 1 + next() % ((uint64_t)1 << 26));
        in.devices = 1 + (int)(next() % 4);
        in.allow_swap = (int)(next() % 2);
        in.stage_a = (int)(next() % 2);
        ooc_plan_t p, q;
        if (ooc_plan_make(&in, &p) != OOC_SUCCESS) continue;
        uint64_t more = (uint64_t)(in.devices - 1), res = 8 * (uint64_t)p.k * (uint64_t)p.n;
        CU_ASSERT(p.least_traffic_each_bytes <= p.traffic_bytes + more * res);
        CU_ASSERT(p.least_traffic_each_bytes >= p.least_traffic_bytes);
        if (in.devices == 1) CU_ASSERT_EQUAL(p.least_traffic_each_bytes, p.least_traffic_bytes);
        CU_ASSERT_EQUAL_FATAL(ooc_plan_fixed(&in, &p, &q), OOC_SUCCESS);
        CU_ASSERT_EQUAL(q.least_traffic_each_bytes, p.least_traffic_each_bytes);
    }
    /* the review's case: B resident is the least on 2 devices (A resident
     * moves less on one) */
    ooc_plan_input_t in = input(608, 221, 106, 8, 1507901);
    in.devices = 2;
    in.allow_swap = 1;
    ooc_plan_t p;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    uint64_t moved = p.traffic_bytes + 8 * (uint64_t)p.k * (uint64_t)p.n;
    /* one device's least is A resident's (2152752 bytes); with op(B) to each
     * device this plan is the least (A resident's plus its op(A) uploads is
     * more): not 2152752 + this plan's op(B), 2340160 */
    CU_ASSERT(p.swap == 0 && p.least_traffic_bytes == 2152752);
    CU_ASSERT_EQUAL(p.least_traffic_each_bytes, moved);
}

/* ooc_plan_least_need() is exact: budgets of what it says plan, a byte less
 * of either does not (it is what the budget-too-small message asks for). */
static void test_least_need(void)
{
    static const size_t elems[4] = {4, 8, 8, 16};
    int checked = 0, fixed = 0;
    for (int t = 0; t < 3000; t++) {
        ooc_plan_input_t in = input(1 + (int64_t)(next() % 3000), 1 + (int64_t)(next() % 3000),
                                    1 + (int64_t)(next() % 3000), elems[next() % 4], 0);
        in.beta_nonzero = (int)(next() % 2);
        in.stage_a = (int)(next() % 2);
        in.stage_b = (int)(next() % 2);
        in.stage_c = (int)(next() % 2);
        in.ring = next() % 3 ? 0 : 2 + (int)(next() % 5);
        in.block_rows = next() % 4 ? 0 : 1 + (int64_t)(next() % 4096);
        in.a_pieces = next() % 4 ? 0 : 1 + (int)(next() % 8);
        if (in.a_pieces > in.k) in.a_pieces = 0;
        in.allow_swap = (int)(next() % 2);
        in.devices = 1 + (int)(next() % 3);
        uint64_t dev, host;
        ooc_plan_least_need(&in, NULL, &dev, &host);
        ooc_plan_t p, q;
        in.device_budget = dev;
        in.host_budget = host;
        CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
        CU_ASSERT(check_invariants(&in, &p));
        in.device_budget = dev - 1;
        CU_ASSERT_EQUAL(ooc_plan_make(&in, &q), OOC_ERR_BUDGET_TOO_SMALL);
        in.device_budget = dev;
        if (host > 0) {
            in.host_budget = host - 1;
            CU_ASSERT_EQUAL(ooc_plan_make(&in, &q), OOC_ERR_BUDGET_TOO_SMALL);
        }
        checked++;
        /* a recorded plan: what it needs, in larger budgets than it was made in */
        in.device_budget = dev + next() % ((uint64_t)1 << 24);
        in.host_budget = host + next() % ((uint64_t)1 << 24);
        if (ooc_plan_make(&in, &p) != OOC_SUCCESS) continue;
        ooc_plan_least_need(&in, &p, &dev, &host);
        in.device_budget = dev;
        in.host_budget = host;
        CU_ASSERT_EQUAL_FATAL(ooc_plan_fixed(&in, &p, &q), OOC_SUCCESS);
        /* the same blocks (in a ring of 2 where the budget holds no more) */
        CU_ASSERT(q.swap == p.swap && q.mb == p.mb && q.nb == p.nb && q.kb == p.kb && q.a_pieces == p.a_pieces &&
                  q.m_blocks == p.m_blocks && q.traffic_bytes == p.traffic_bytes);
        in.device_budget = dev - 1;
        CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &p, &q), OOC_ERR_BUDGET_TOO_SMALL);
        in.device_budget = dev;
        if (host > 0) {
            in.host_budget = host - 1;
            CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &p, &q), OOC_ERR_BUDGET_TOO_SMALL);
        }
        fixed++;
    }
    CU_ASSERT(checked == 3000 && fixed > 2000);
    /* a shape whose traffic count saturates (A moved ~10^19 bytes): the
     * least still plans (no panel was ever taken, as no count was below the
     * saturated one) */
    ooc_plan_input_t in = input(187524, 2859116, 11858481, 4, 0);
    in.devices = 3;
    in.slack0 = 512;
    in.slack_ring = 768;
    uint64_t dev, host;
    ooc_plan_least_need(&in, NULL, &dev, &host);
    in.device_budget = dev;
    in.host_budget = host ? host : 1;
    ooc_plan_t p;
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    in.device_budget = dev - 1;
    CU_ASSERT_EQUAL(ooc_plan_make(&in, &p), OOC_ERR_BUDGET_TOO_SMALL);
}

/* Any block rows, odd ones too, with any tail the planner allows: the blocks
 * tile [0, m) exactly. A journal once named mb = 1001 with a tail of 3, and
 * tail blocks counted as mb - (mb >> 3) rows left two rows uncomputed. */
static void test_odd_block_rows_tile(void)
{
    int checked = 0;
    for (int64_t mb = 33; mb < 3000; mb += 97) {
        for (int tail = 0; tail <= 5; tail++) {
            int rep = tail == 0 ? 1 : 1 + (int)(mb % 4); /* blocks of each tail size (one per device) */
            int64_t m = (2 + 2 * rep) * mb + (mb * 7) / 3; /* enough blocks for the tail */
            ooc_plan_input_t in = input(m, 40, 30, 8, (uint64_t)1 << 40);
            in.devices = rep;
            ooc_plan_t w = {.swap = 0, .mb = mb, .nb = 40, .kb = 30, .tail = tail, .b_chunks = 1, .lead = 1, .tail_rep = rep, .a_pieces = 1}, q;
            ooc_status_t st = ooc_plan_fixed(&in, &w, &q);
            if ((mb >> tail) < 32) {
                CU_ASSERT_EQUAL(st, OOC_ERR_INTERNAL);
                continue;
            }
            CU_ASSERT_EQUAL_FATAL(st, OOC_SUCCESS);
            CU_ASSERT_EQUAL(ooc_plan_check(&q), OOC_SUCCESS);
            int64_t at = 0;
            for (int64_t i = 0; i < q.m_blocks; i++) {
                int64_t r0, r1;
                ooc_plan_block(&q, i, &r0, &r1);
                CU_ASSERT(r0 == at && r1 > r0);
                /* tail block j: mb >> (j / rep + 1) rows */
                int64_t j = i - (q.m_blocks - (int64_t)tail * rep);
                if (j >= 0) CU_ASSERT_EQUAL(r1 - r0, mb >> (j / rep + 1));
                at = r1;
            }
            CU_ASSERT_EQUAL(at, m);
            checked++;
        }
    }
    CU_ASSERT(checked > 50);
    /* a plan whose block count does not tile m is refused */
    ooc_plan_input_t in = input(5000, 40, 30, 8, (uint64_t)1 << 40);
    ooc_plan_t w = {.swap = 0, .mb = 1001, .nb = 40, .kb = 30, .tail = 3, .b_chunks = 1, .lead = 1, .tail_rep = 1, .a_pieces = 1}, q;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_fixed(&in, &w, &q), OOC_SUCCESS);
    q.m_blocks++;
    CU_ASSERT_EQUAL(ooc_plan_check(&q), OOC_ERR_INTERNAL);
    q.m_blocks -= 2;
    CU_ASSERT_EQUAL(ooc_plan_check(&q), OOC_ERR_INTERNAL);
}

/* The automatic block rows and orientation follow the rules in plan.c. */
static void test_auto_shape_rules(void)
{
    ooc_plan_t p;
    /* S1: the first block's multiply (4096 rows) covers op(B)'s upload */
    ooc_plan_input_t in = input(65536, 16384, 16384, 8, (uint64_t)76 << 30);
    in.allow_swap = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 4096);
    CU_ASSERT(p.tail == 3 && p.tail_rep == 1);
    /* on four devices: the tail's sizes once per device (4 x 2048, 4 x 1024,
     * 4 x 512, 4 x 256), so that they finish together */
    in.devices = 4;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(p.mb == 4096 && p.tail == 4 && p.tail_rep == 4 && p.lead == 4);
    CU_ASSERT_EQUAL(p.m_blocks, 13 + 16); /* 65536 - 15360 rows in 4096-row blocks, then 16 */
    int64_t r0, r1;
    ooc_plan_block(&p, p.m_blocks - 5, &r0, &r1);
    CU_ASSERT_EQUAL(r1 - r0, 512);
    ooc_plan_block(&p, p.m_blocks - 1, &r0, &r1);
    CU_ASSERT(r1 == 65536 && r1 - r0 == 256);
    /* too few rows for a tail per device: one block of each size */
    in.m = 6 * 4096;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(p.tail_rep == 1);
    in.devices = 1;
    in.m = 65536;
    in.elem = 4; /* single precision: half the rows */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 2048);
    /* a mid-size problem keeps ~8 blocks rather than one long first block */
    in = input(8000, 8000, 8000, 8, (uint64_t)76 << 30);
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 1024);
    /* few rows (docs/PERFORMANCE.md session 28): blocks copied in long
     * lines go down to ~8 blocks of at least 256 rows, those copied as
     * lines one block row long keep 1024. DGEMM 2000x3000x4000 col-major NN
     * runs with op(A) resident, op(B)^T's and C^T's rows contiguous: */
    in = input(2000, 3000, 4000, 8, (uint64_t)76 << 30);
    in.allow_swap = 1;
    in.lines[0] = OOC_PLAN_STRIDED_A | OOC_PLAN_STRIDED_C;
    in.lines[1] = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.swap == 1 && p.mb == 512);
    /* 6000^3: either way a block's A and C go as lines one block row long */
    in = input(6000, 6000, 6000, 8, (uint64_t)76 << 30);
    in.allow_swap = 1;
    in.lines[0] = in.lines[1] = OOC_PLAN_STRIDED_A | OOC_PLAN_STRIDED_C;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 1024);
    /* strided lines carrying under a quarter of the bytes do not count:
     * SGEMM 25315x1591x3247 NT beta != 0, transposed: op(B)^T's 3247 per row
     * strided against C's 2 x 25315 contiguous: 256 rows */
    in = input(25315, 1591, 3247, 4, (uint64_t)76 << 30);
    in.allow_swap = 1;
    in.beta_nonzero = 1;
    in.lines[0] = OOC_PLAN_STRIDED_A | OOC_PLAN_STRIDED_C;
    in.lines[1] = OOC_PLAN_STRIDED_A;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.swap == 1 && p.mb == 256);
    in.lines[1] = OOC_PLAN_STRIDED_C; /* C's rows as lines: 1024 */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(p.swap == 0 || p.mb >= 1024);
    /* files read or written a block row of each line at a time keep 1024
     * too: 2000x3000x4000, op(A) streamed, A and C pageable (packed in the
     * slots: smaller blocks), then A and C in column-major files */
    in = input(2000, 3000, 4000, 8, (uint64_t)76 << 30);
    in.stage_a = in.stage_b = in.stage_c = 1;
    in.host_budget = (uint64_t)1 << 30;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.swap == 0 && p.mb < 1024);
    in.lines[0] = OOC_PLAN_FILE_LINES_A | OOC_PLAN_FILE_LINES_C;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.swap == 0 && p.mb == 1024);
    /* small k: copy-bound, 64 KiB lines (A's and C's block rows strided:
     * column-major) */
    in = input(65536, 16384, 256, 8, (uint64_t)76 << 30);
    in.lines[0] = OOC_PLAN_STRIDED_A | OOC_PLAN_STRIDED_C;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 8192);
    /* the same with op(A) and C staged (packed: no short lines), and with
     * either staged alone (the other's copies still strided) */
    in.stage_a = in.stage_c = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 4096);
    CU_ASSERT_EQUAL(p.host_bytes, 3 * (8ull * 4096 * 256 + 8ull * 4096 * 16384)); /* A and C blocks, a ring of 3 */
    in.stage_c = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 8192);
    in.stage_a = 0;
    in.stage_c = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 8192);
    /* a wide file job (op(A) resident, op(B) and C staged): 4096 rows, half
     * the staging of 8192 */
    in = input(4096, 65536, 8192, 8, (uint64_t)76 << 30);
    in.allow_swap = 1;
    in.stage_a = in.stage_b = in.stage_c = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.swap == 1 && p.mb == 4096);
    /* wide, equal traffic either way: the smaller operand stays resident */
    in = input(4096, 131072, 4096, 8, (uint64_t)76 << 30);
    in.allow_swap = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT_EQUAL(p.swap, 1);
    CU_ASSERT_EQUAL(p.dev_b_bytes, 8ull * 4096 * 4096);
    /* tall: B is already the smaller */
    in = input(131072, 4096, 4096, 8, (uint64_t)76 << 30);
    in.allow_swap = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.swap, 0);
}

/* Issue 13: copy lines and traffic. Short lines (a block's mb x e bytes
 * per column) copy at 25-39 GB/s instead of 55 on an H200, so the planner
 * takes longer blocks where copies matter, and a ring of 2 where the device
 * budget holds the blocks short; the traffic it reports against stays the
 * least any plan could move in the budget. */
static void test_copy_lines(void)
{
    /* S1 with 1 GiB of device memory: op(B) (2 GiB) in 3 panels; a ring of 3
     * left 672-row blocks (5 KiB lines), a ring of 2 ~1000 rows at the same
     * traffic (8 KiB lines), and A's blocks in k-pieces of at least 1024
     * more than 3072 (24 KiB lines) */
    ooc_plan_input_t in = input(65536, 16384, 16384, 8, (uint64_t)1 << 30);
    in.allow_swap = 1;
    ooc_plan_t p, q, w;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT_EQUAL(p.n_panels, 3);
    CU_ASSERT_EQUAL(p.ring, 2);
    CU_ASSERT(p.a_pieces > 1 && 16384 / p.a_pieces >= 1024);
    CU_ASSERT(p.mb >= 3072 && p.b_chunks == 1);
    /* rows a budget holds, from 2048 on, are a multiple of 256 (3168 would
     * fit: 3072 multiplies faster, docs/PERFORMANCE.md) */
    CU_ASSERT(p.mb % 256 == 0);
    /* blocks in k-pieces have no shrinking tail: its small blocks' pieces
     * copy in on short lines, slower than they multiply, at every panel's
     * end (0.727 -> 0.708 s on an H200, docs/PERFORMANCE.md) */
    CU_ASSERT_EQUAL(p.tail, 0);
    CU_ASSERT_EQUAL(p.m_blocks, 65536 / p.mb + (65536 % p.mb != 0));
    in.tail = 4; /* a tail asked for is kept */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &w), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &w) && w.tail == 3 && w.a_pieces == p.a_pieces && w.mb == p.mb);
    in.tail = 0;
    in.a_pieces = 1; /* whole blocks: ~1000 rows, the same traffic, and the tail */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &w), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &w));
    CU_ASSERT(w.a_pieces == 1 && w.mb > 900 && w.mb < 1100 && w.ring == 2 && w.traffic_bytes == p.traffic_bytes);
    CU_ASSERT_EQUAL(w.tail, 3);
    CU_ASSERT(w.mb % 32 == 0); /* under 2048 rows: a multiple of 32 only */
    in.a_pieces = 3; /* as many as asked for */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &w), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &w) && w.a_pieces == 3 && w.mb > 1000);
    in.a_pieces = 0;
    /* a recorded plan with pieces is made with them, another count refused or made as recorded */
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &p, &q), OOC_SUCCESS);
    CU_ASSERT(same_plan(&p, &q));
    w = p;
    w.a_pieces = 1; /* whole blocks of p.mb rows do not fit */
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &w, &q), OOC_ERR_BUDGET_TOO_SMALL);
    w.a_pieces = 2 * p.a_pieces;
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &w, &q), OOC_SUCCESS);
    CU_ASSERT(q.a_pieces == w.a_pieces && q.mb == p.mb);
    w.a_pieces = OOC_PLAN_MAX_A_PIECES + 1;
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &w, &q), OOC_ERR_INTERNAL);
    /* shallow blocks are never split: pieces below 1024 deep multiply slowly */
    in = input(65536, 16384, 1500, 8, (uint64_t)1 << 27);
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &w), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &w) && w.a_pieces == 1);
    in = input(65536, 16384, 16384, 8, (uint64_t)1 << 30);
    in.allow_swap = 1;
    /* A 3 times, B once, C once: exactly the least for this budget */
    uint64_t least = 8ull * (3ull * 65536 * 16384 + 16384ull * 16384 + 65536ull * 16384);
    CU_ASSERT_EQUAL(p.traffic_bytes, least);
    CU_ASSERT_EQUAL(p.least_traffic_bytes, least);
    /* a ring asked for is kept */
    in.ring = 3;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &q), OOC_SUCCESS);
    CU_ASSERT(q.ring == 3 && q.mb < p.mb && q.traffic_bytes == p.traffic_bytes);
    /* resuming such a plan without a ring given takes its ring of 2 */
    in.ring = 0;
    CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &p, &q), OOC_SUCCESS);
    CU_ASSERT(q.ring == 2 && same_plan(&p, &q) && q.least_traffic_bytes == least);

    /* tall DGEMM 131072 x 4096 x 4096: copies as long as the multiply:
     * 64 KiB lines (8192 rows), not 4096 */
    in = input(131072, 4096, 4096, 8, (uint64_t)76 << 30);
    in.allow_swap = 1;
    in.lines[0] = OOC_PLAN_STRIDED_A | OOC_PLAN_STRIDED_C; /* column-major, as gemm.c gives them */
    in.lines[1] = OOC_PLAN_B_ROWS;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 8192);
    CU_ASSERT_EQUAL(p.traffic_bytes, p.least_traffic_bytes);
    /* S3 with TF32 (7000 flop per copied byte): balanced, 8192 rows (32 KiB
     * lines; 64 KiB would leave fewer than 8 blocks); SGEMM without TF32
     * stays at 2048 rows */
    in = input(65536, 16384, 16384, 4, (uint64_t)76 << 30);
    in.allow_swap = 1;
    in.lines[0] = OOC_PLAN_STRIDED_A | OOC_PLAN_STRIDED_C;
    in.lines[1] = OOC_PLAN_B_ROWS;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 2048);
    in.flop_per_byte = 7000;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT_EQUAL(p.mb, 8192);
    CU_ASSERT(check_invariants(&in, &p));

    /* the least traffic is never above the plan's, for any budget */
    for (uint64_t dev = (uint64_t)64 << 20; dev <= ((uint64_t)8 << 30); dev *= 2) {
        in = input(30011, 20011, 9001, 8, dev);
        in.allow_swap = 1;
        if (ooc_plan_make(&in, &p) != OOC_SUCCESS) continue;
        CU_ASSERT(p.least_traffic_bytes > 0 && p.least_traffic_bytes <= p.traffic_bytes);
        CU_ASSERT((double)p.traffic_bytes <= 1.1 * (double)p.least_traffic_bytes);
    }
}

/* A case of the tables below: either orientation allowed, beta != 0 or not,
 * complex or not, the copy lines of each orientation, on `devices` */
static ooc_plan_input_t case_input(int64_t m, int64_t n, int64_t k, size_t e, uint64_t dev, int beta, int complex_type,
                                   int lines0, int lines1, int devices)
{
    ooc_plan_input_t in = input(m, n, k, e, dev);
    in.allow_swap = 1;
    in.beta_nonzero = beta;
    in.complex_type = complex_type;
    in.lines[0] = lines0;
    in.lines[1] = lines1;
    in.devices = devices;
    return in;
}

/* Copy-out bound shapes (plan.c copy_out_bound()): once the blocks have long
 * lines, no shrinking tail, and A's blocks in 2 k-pieces when k allows, the
 * last piece in 8 chunks of C's columns when C goes out in place as columns
 * (column-major, pinned); shapes bound by the multiply, by the copies in
 * (n < k), several devices, short lines and a tail or pieces given keep the
 * rest of the rules. */
static void test_copy_out_bound(void)
{
    const uint64_t dev = (uint64_t)130 << 30;
    const int AC = OOC_PLAN_STRIDED_A | OOC_PLAN_STRIDED_C, BR = OOC_PLAN_B_ROWS;
    struct {
        const char *name;
        int64_t m, n, k;
        size_t e;
        double fpb;
        int devices, tail_given, pieces_given, lines0; /* lines1: BR (column-major, transposed) */
        int swap, tail, pieces, chunks; /* expected (chunks: with pieces) */
    } cases[] = {
        {"TF32 S3", 65536, 16384, 16384, 4, 7000, 1, 0, 0, AC, 0, 0, 2, 8},
        {"TF32 S3, C staged", 65536, 16384, 16384, 4, 7000, 1, 0, 0, OOC_PLAN_STRIDED_A, 0, 0, 2, 1},
        {"S3 without TF32 (bound by the multiply)", 65536, 16384, 16384, 4, 0, 1, 0, 0, AC, 0, 3, 1, 0},
        {"S1 (bound by the multiply)", 65536, 16384, 16384, 8, 0, 1, 0, 0, AC, 0, 3, 1, 0},
        {"tall", 131072, 4096, 4096, 8, 0, 1, 0, 0, AC, 0, 0, 2, 8},
        /* (contiguous blocks of a copy-bound shape: 1024 rows, whole, a tail; copy_bound_rows()) */
        {"tall, row-major (C's rows go out whole)", 131072, 4096, 4096, 8, 0, 1, 0, 0, BR, 0, 3, 1, 0},
        {"tall, a tail of 3 given", 131072, 4096, 4096, 8, 0, 1, 4, 0, AC, 0, 3, 2, 8},
        {"tall, 1 piece given", 131072, 4096, 4096, 8, 0, 1, 0, 1, AC, 0, 0, 1, 0},
        {"tall, 4 pieces given", 131072, 4096, 4096, 8, 0, 1, 0, 4, AC, 0, 0, 4, 8},
        {"tall on 2 devices", 131072, 4096, 4096, 8, 0, 2, 0, 0, AC, 0, 4, 1, 0},
        {"smallk (op(A) resident, C out as columns)", 65536, 16384, 256, 8, 0, 1, 0, 0, AC, 1, 3, 1, 0},
        {"S2 (bound by the copies in: n < k)", 262144, 1024, 4096, 8, 0, 1, 0, 0, AC, 0, 3, 1, 0},
        {"wide (op(A) resident: tall transposed)", 4096, 131072, 4096, 8, 0, 1, 0, 0, AC, 1, 3, 1, 0},
        {"short lines (256 rows of 8 bytes)", 3000, 700, 300, 8, 0, 1, 0, 0, AC, 0, 3, 1, 0},
        {"S1, 4 pieces given (bound by the multiply)", 65536, 16384, 16384, 8, 0, 1, 0, 4, AC, 0, 0, 4, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ooc_plan_input_t in = input(cases[i].m, cases[i].n, cases[i].k, cases[i].e, dev);
        in.allow_swap = 1;
        in.flop_per_byte = cases[i].fpb;
        in.devices = cases[i].devices;
        in.tail = cases[i].tail_given;
        in.a_pieces = cases[i].pieces_given;
        in.lines[0] = cases[i].lines0;
        in.lines[1] = BR;
        if (cases[i].name[0] == 's' && cases[i].name[1] == 'h') in.block_rows = 256;
        ooc_plan_t p;
        CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
        if (in.devices == 1) CU_ASSERT(check_invariants(&in, &p)); /* (they assume one block of each tail size) */
        int ok = p.swap == cases[i].swap && p.tail == cases[i].tail && p.a_pieces == cases[i].pieces &&
                 (p.a_pieces == 1 || p.b_chunks == cases[i].chunks);
        if (!ok)
            printf("\n    %s: swap %d, %lld rows, tail %d, %d pieces, %d chunks (expected swap %d, tail %d, %d pieces, "
                   "%d chunks)",
                   cases[i].name, p.swap, (long long)p.mb, p.tail, p.a_pieces, p.b_chunks, cases[i].swap,
                   cases[i].tail, cases[i].pieces, cases[i].chunks);
        CU_ASSERT(ok);
    }
    /* wide row-major: op(A) resident, and C^T's blocks go out in place as
     * columns (C^T is column-major): the last piece by columns too */
    ooc_plan_input_t in = input(4096, 131072, 4096, 8, dev);
    in.allow_swap = 1;
    in.lines[0] = BR;
    in.lines[1] = AC;
    ooc_plan_t p;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.swap == 1 && p.tail == 0 && p.a_pieces == 2 && p.b_chunks == 8);

    /* from pageable memory (A, B and C staged, through the cache-sized
     * buffers), blocks of long lines: whole, with a tail, through the
     * buffers, not in 2 k-pieces (pinned, these shapes get the blocks of
     * copy_bound_rows(): test_copy_bound_rows). A staged alone: whole blocks
     * through the buffers, but no tail, for C's columns go out in place
     * (short lines in a tail); C staged alone: A pinned, in 2 k-pieces, no
     * tail, as pinned. */
    struct {
        const char *name;
        int64_t m, n, k;
        size_t e;
        double fpb;
        int lines0, lines1, sa, sc;
        int swap, tail, pieces; /* expected */
    } staged[] = {
        {"wide", 4096, 131072, 4096, 8, 0, AC, BR, 1, 1, 1, 3, 1},
        {"tall, row-major", 131072, 4096, 4096, 8, 0, BR, AC, 1, 1, 0, 3, 1},
        {"TF32 wide", 8192, 131072, 8192, 4, 7000, AC, BR, 1, 1, 1, 3, 1},
        {"tall, A staged alone", 131072, 4096, 4096, 8, 0, OOC_PLAN_STRIDED_C, BR, 1, 0, 0, 0, 1},
        {"TF32 S3, A staged alone", 65536, 16384, 16384, 4, 7000, OOC_PLAN_STRIDED_C, BR, 1, 0, 0, 0, 1},
        {"TF32 S3, C staged alone", 65536, 16384, 16384, 4, 7000, OOC_PLAN_STRIDED_A, BR, 0, 1, 0, 0, 2},
    };
    for (size_t i = 0; i < sizeof staged / sizeof staged[0]; i++) {
        const uint64_t chunk = (uint64_t)16 << 20;
        in = case_input(staged[i].m, staged[i].n, staged[i].k, staged[i].e, dev, 0, 0, staged[i].lines0,
                        staged[i].lines1, 1);
        in.flop_per_byte = staged[i].fpb;
        in.stage_a = in.stage_b = staged[i].sa;
        in.stage_c = staged[i].sc;
        in.through_chunk = chunk;
        in.through_bufs = 3;
        in.through_ok[0] = in.through_ok[1] = 1;
        in.through_out_ok = 1;
        CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
        CU_ASSERT(check_invariants(&in, &p));
        uint64_t a_chunk = staged[i].sa ? chunk : 0, c_chunk = staged[i].sc ? chunk : 0;
        int ok = p.swap == staged[i].swap && p.a_pieces == staged[i].pieces && p.tail == staged[i].tail &&
                 p.through_chunk == a_chunk && p.through_out_chunk == c_chunk;
        if (!ok)
            printf("\n    %s, staged: swap %d, %lld rows, tail %d, %d pieces, through %llu, out %llu (expected swap %d, "
                   "tail %d, %d pieces, through %llu, out %llu)",
                   staged[i].name, p.swap, (long long)p.mb, p.tail, p.a_pieces, (unsigned long long)p.through_chunk,
                   (unsigned long long)p.through_out_chunk, staged[i].swap, staged[i].tail, staged[i].pieces,
                   (unsigned long long)a_chunk, (unsigned long long)c_chunk);
        CU_ASSERT(ok);
    }
    /* forced pieces with A staged, C pinned out as columns: the last piece
     * still in C's column chunks, as the --b-chunks help says */
    in = case_input(131072, 4096, 4096, 8, dev, 0, 0, OOC_PLAN_STRIDED_C, BR, 1);
    in.stage_a = in.stage_b = 1;
    in.a_pieces = 2;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(check_invariants(&in, &p));
    CU_ASSERT(p.swap == 0 && p.a_pieces == 2 && p.b_chunks == 8 && p.tail == 0);
}

/* A shape bound by its copies whose blocks are copied as long lines, pinned,
 * on one device: blocks of about 64 MiB copied in and out, at least 256
 * rows (plan.c copy_bound_rows()), where the other rules gave some 8. Not
 * with more than 1/16 of the bytes in strided lines, staged operands,
 * several devices, or a multiply as long as the copies. */
static void test_copy_bound_rows(void)
{
    const uint64_t dev = (uint64_t)130 << 30;
    const int A = OOC_PLAN_STRIDED_A, C = OOC_PLAN_STRIDED_C, BR = OOC_PLAN_B_ROWS;
    struct {
        const char *name;
        int64_t m, n, k;
        size_t e;
        int beta, complex_type, lines0, lines1, devices, staged;
        int swap;         /* expected */
        int64_t rows_min; /* expected: at least */
        int64_t rows_max; /* and at most */
    } cases[] = {
        /* op(A) resident; op(B)^T's rows strided, 0.5% of the bytes: 64 MiB
         * / 1.33 MB per row, so the least, 256 */
        {"SGEMM 164929x7303x1713 TT beta -1", 164929, 7303, 1713, 4, 1, 0, BR | C, A, 1, 0, 1, 256, 256},
        {"CGEMM 71103x7293x549 TN beta -1", 71103, 7293, 549, 8, 1, 1, C, 0, 1, 0, 1, 256, 256},
        /* 64 KiB per row: 1024 rows; with C read in, 96 KiB: 768 */
        {"wide", 4096, 131072, 4096, 8, 0, 0, A | C, BR, 1, 0, 1, 1024, 1024},
        {"wide, beta 1", 4096, 131072, 4096, 8, 1, 0, A | C, BR, 1, 0, 1, 768, 768},
        {"tall, row-major", 131072, 4096, 4096, 8, 0, 0, BR, A | C, 1, 0, 0, 1024, 1024},
        /* not: tall column-major (strided), on 2 devices, staged, bound by
         * the multiply, op(B)'s strided rows 37% of the bytes */
        {"tall", 131072, 4096, 4096, 8, 0, 0, A | C, BR, 1, 0, 0, 8192, 8192},
        {"wide on 2 devices", 4096, 131072, 4096, 8, 0, 0, A | C, BR, 2, 0, 1, 2048, 8192},
        {"wide, staged", 4096, 131072, 4096, 8, 0, 0, 0, 0, 1, 1, 1, 2048, 8192},
        {"S1 row-major (bound by the multiply)", 65536, 16384, 16384, 8, 0, 0, BR, A | C, 1, 0, 0, 2048, 8192},
        {"CGEMM 5253x11699x3159 NC", 5253, 11699, 3159, 8, 0, 1, A | C, A, 1, 0, 1, 1024, 8192},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ooc_plan_input_t in = case_input(cases[i].m, cases[i].n, cases[i].k, cases[i].e, dev, cases[i].beta,
                                         cases[i].complex_type, cases[i].lines0, cases[i].lines1, cases[i].devices);
        in.stage_a = in.stage_b = in.stage_c = cases[i].staged;
        if (cases[i].staged) in.host_budget = (uint64_t)8 << 30;
        ooc_plan_t p;
        CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
        if (in.devices == 1) CU_ASSERT(check_invariants(&in, &p));
        int ok = p.swap == cases[i].swap && p.mb >= cases[i].rows_min && p.mb <= cases[i].rows_max;
        if (!ok)
            printf("\n    %s: swap %d, %lld rows (expected swap %d, %lld to %lld rows)", cases[i].name, p.swap,
                   (long long)p.mb, cases[i].swap, (long long)cases[i].rows_min, (long long)cases[i].rows_max);
        CU_ASSERT(ok);
        ooc_plan_t f;
        CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &p, &f), OOC_SUCCESS);
        CU_ASSERT(f.mb == p.mb && f.swap == p.swap && f.tail == p.tail);
    }
}

/* The orientation when both move the same bytes (plan.c plan_cost()): the
 * resident operand's upload, and blocks whose copies are short lines far
 * apart (strided) against contiguous ones. */
static void test_orientation_lines(void)
{
    const uint64_t dev = (uint64_t)130 << 30;
    const int A = OOC_PLAN_STRIDED_A, C = OOC_PLAN_STRIDED_C;
    struct {
        const char *name;
        int64_t m, n, k;
        int strided0, strided1; /* as gemm.c gives them */
        int swap;               /* expected */
    } cases[] = {
        /* C (8.6 GB) out as rows of C, 64 KiB lines, with op(B) (34 MB)
         * resident; as contiguous columns with op(A) (134 MB) resident */
        {"smallk, column-major, pinned", 65536, 16384, 256, A | C, 0, 1},
        {"smallk, C staged (packed either way)", 65536, 16384, 256, A, 0, 0},
        {"smallk, row-major (rows of C contiguous)", 65536, 16384, 256, 0, A | C, 0},
        {"S1, column-major (bound by the multiply)", 65536, 16384, 16384, A | C, 0, 0},
        {"tall, column-major (op(A) 4.3 GB to upload)", 131072, 4096, 4096, A | C, 0, 0},
        /* A (34 GB) in on 64 KiB lines at full rate, against all of it
         * uploaded first to save C's 2 GB out on 64 KiB lines */
        {"2^20 x 256 x 4096, column-major", 1 << 20, 256, 4096, A | C, 0, 0},
        {"wide, column-major", 4096, 131072, 4096, A | C, 0, 1},
        {"wide, row-major", 4096, 131072, 4096, 0, A | C, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ooc_plan_input_t in = input(cases[i].m, cases[i].n, cases[i].k, 8, dev);
        in.allow_swap = 1;
        in.lines[0] = cases[i].strided0;
        in.lines[1] = cases[i].strided1;
        ooc_plan_t p;
        CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
        CU_ASSERT(check_invariants(&in, &p));
        if (p.swap != cases[i].swap) printf("\n    %s: swap %d, expected %d", cases[i].name, p.swap, cases[i].swap);
        CU_ASSERT_EQUAL(p.swap, cases[i].swap);
    }
    /* op(B)'s chunks split k when its lines are its rows: 1024 deep at
     * least (each chunk's multiply reads and writes the first block's C) */
    ooc_plan_input_t in = input(65536, 16384, 256, 8, dev);
    in.allow_swap = 1;
    in.lines[0] = A | C;
    in.lines[1] = OOC_PLAN_B_ROWS; /* smallk column-major: op(A) resident as rows of k */
    ooc_plan_t p;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(p.swap == 1 && p.b_chunks == 1);
    in.lines[1] = 0; /* (its lines its columns: chunks of n) */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(p.swap == 1 && p.b_chunks == OOC_MAX_B_CHUNKS);
    in = input(65536, 16384, 16384, 8, dev); /* S1 row-major: 2048 deep */
    in.lines[0] = OOC_PLAN_B_ROWS;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(p.swap == 0 && p.b_chunks == OOC_MAX_B_CHUNKS);
    in = input(65536, 4096, 4000, 8, dev); /* 3 chunks of at least 1024 */
    in.lines[0] = OOC_PLAN_B_ROWS;
    in.a_pieces = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
    CU_ASSERT(p.b_chunks == 3);
}

/* Blocks held to some 8 by a small m copy in their strided lines slower
 * than they multiply: the planner lengthens them to 64 KiB lines in
 * k-pieces no taller than the blocks were (plan.c wide_pieces()), in the
 * orientation it chose anyway. Lines as gemm.c gives them for pinned
 * column-major operands. */
static void test_wide_lines(void)
{
    const uint64_t dev = (uint64_t)130 << 30;
    const int A = OOC_PLAN_STRIDED_A, C = OOC_PLAN_STRIDED_C, BR = OOC_PLAN_B_ROWS;
    struct {
        const char *name;
        int64_t m, n, k;
        size_t e;
        int beta, complex_type, lines0, lines1, devices, rows_given, pieces_given, swap_given;
        int swap;     /* expected */
        int64_t rows; /* expected */
        int pieces;   /* expected */
    } cases[] = {
        {"DGEMM TT, op(A) resident (30 KiB lines)", 3407, 28947, 13657, 8, 1, 0, BR | C, A, 1, 0, 0, -1, 1, 8192, 4},
        {"the same, 1 piece given", 3407, 28947, 13657, 8, 1, 0, BR | C, A, 1, 0, 1, -1, 1, 3840, 1},
        {"the same, rows given", 3407, 28947, 13657, 8, 1, 0, BR | C, A, 1, 3840, 0, -1, 1, 3840, 1},
        {"the same on 2 devices", 3407, 28947, 13657, 8, 1, 0, BR | C, A, 2, 0, 0, -1, 1, 3840, 1},
        {"SGEMM TT (32 KiB lines: at most 8192 rows)", 3407, 28947, 13657, 4, 1, 0, BR | C, A, 1, 0, 0, -1, 1, 8192, 4},
        {"ZGEMM TT (64 KiB: 4096 rows)", 1700, 14000, 7000, 16, 0, 1, BR | C, A, 1, 0, 0, -1, 1, 4096, 4},
        {"DGEMM NN bound by the copies in", 24000, 2000, 16000, 8, 0, 0, A | C, BR, 1, 0, 0, -1, 0, 8192, 4},
        {"DGEMM NN bound by the multiply", 24000, 6000, 12000, 8, 0, 0, A | C, BR, 1, 0, 0, -1, 0, 3072, 1},
        {"DGEMM NN, 2 wide blocks at most", 16384, 2000, 16000, 8, 0, 0, A | C, BR, 1, 0, 0, 0, 0, 2048, 1},
        {"SGEMM TT, k too shallow for 2 pieces", 5985, 58133, 1715, 4, 1, 0, BR | C, A, 1, 0, 0, -1, 1, 7264, 1},
        /* strided blocks of 8192 rows in 2 pieces would cost about what
         * op(A) resident does (a tie of plan_cost()), and the smaller
         * resident operand would win: measured slower, so no change */
        {"SGEMM NT beta -1: the orientation kept", 25315, 1591, 3247, 4, 1, 0, A | BR | C, A | BR, 1, 0, 0, -1, 1, 256, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ooc_plan_input_t in = case_input(cases[i].m, cases[i].n, cases[i].k, cases[i].e, dev, cases[i].beta,
                                         cases[i].complex_type, cases[i].lines0, cases[i].lines1, cases[i].devices);
        in.allow_swap = cases[i].swap_given != 0;
        in.block_rows = cases[i].rows_given;
        in.a_pieces = cases[i].pieces_given;
        ooc_plan_t p;
        CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
        if (in.devices == 1) CU_ASSERT(check_invariants(&in, &p));
        int ok = p.swap == cases[i].swap && p.mb == cases[i].rows && p.a_pieces == cases[i].pieces &&
                 (p.a_pieces == 1 || p.tail == 0);
        if (!ok)
            printf("\n    %s: swap %d, %lld rows, %d pieces, tail %d (expected swap %d, %lld rows, %d pieces)",
                   cases[i].name, p.swap, (long long)p.mb, p.a_pieces, p.tail, cases[i].swap,
                   (long long)cases[i].rows, cases[i].pieces);
        CU_ASSERT(ok);
        /* a fixed plan (a resumed job's) reproduces it */
        ooc_plan_t f;
        CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &p, &f), OOC_SUCCESS);
        CU_ASSERT(f.mb == p.mb && f.a_pieces == p.a_pieces && f.tail == p.tail && f.swap == p.swap);
    }
}

/* A shape bound by the copies in: whole blocks of 64 KiB lines, 4 blocks
 * at least (16384 rows of 4 bytes, past the 8192 the planner takes
 * otherwise), in the orientation chosen as before: op(A) resident where A
 * went up whole (plan.c in_bound_rows(), measured in docs/PERFORMANCE.md
 * session 43). Not when rows, pieces or several devices are asked for, nor
 * for a staged A, nor for a multiply-bound shape. */
static void test_in_bound(void)
{
    const uint64_t dev = (uint64_t)130 << 30;
    const int A = OOC_PLAN_STRIDED_A, C = OOC_PLAN_STRIDED_C, BR = OOC_PLAN_B_ROWS;
    struct {
        const char *name;
        int64_t m, n, k;
        size_t e;
        int beta, complex_type;
        double fpb;
        int variant; /* 0 as is, 1 rows given, 2 pieces given, 3 two devices, 4 A staged, 5 a ring given,
                      * 6 a budget that holds the blocks far below 16384 rows, 7 one that holds them part way */
        int swap;     /* expected */
        int64_t rows; /* expected */
    } cases[] = {
        {"SGEMM 131071x511x8191 NN", 131071, 511, 8191, 4, 0, 0, 0, 0, 0, 16384},
        {"SGEMM 200001x1023x4095 NN beta -1", 200001, 1023, 4095, 4, 1, 0, 0, 0, 0, 16384},
        {"SGEMM 85835x397x10413 (TN row-major as NN)", 85835, 397, 10413, 4, 0, 0, 0, 0, 0, 16384},
        {"the same, rows given", 85835, 397, 10413, 4, 0, 0, 0, 1, 0, 0},
        {"the same, pieces given", 85835, 397, 10413, 4, 0, 0, 0, 2, 0, 8192},
        {"the same on 2 devices", 85835, 397, 10413, 4, 0, 0, 0, 3, 0, 8192},
        {"the same, A staged", 85835, 397, 10413, 4, 0, 0, 0, 4, 0, 8192},
        {"the same, a ring of 4 given", 85835, 397, 10413, 4, 0, 0, 0, 5, 0, 16384},
        {"the same in 192 MiB", 85835, 397, 10413, 4, 0, 0, 0, 6, 0, 0},
        {"the same in 1.3 GB (10240 rows fit, not 16384: as before)", 85835, 397, 10413, 4, 0, 0, 0, 7, 0, 8192},
        {"SGEMM under 4 blocks of 16384 rows", 65535, 397, 10413, 4, 0, 0, 0, 0, 0, 8192},
        {"DGEMM 45001x301x12001 (op(A) resident, as before)", 45001, 301, 12001, 8, 0, 0, 0, 0, 1, 256},
        {"TF32 100001x255x8191 (op(A) resident, as before)", 100001, 255, 8191, 4, 0, 0, 7000, 0, 1, 255},
        {"ZGEMM 20001x257x6001 (op(A) resident, as before)", 20001, 257, 6001, 16, 0, 1, 0, 0, 1, 256},
        {"S3 (bound by the multiply)", 65536, 16384, 16384, 4, 0, 0, 0, 0, 0, 2048},
        {"S2 (8192 rows are 64 KiB already)", 262144, 1024, 4096, 8, 0, 0, 0, 0, 0, 8192},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int v = cases[i].variant;
        ooc_plan_input_t in = input(cases[i].m, cases[i].n, cases[i].k, cases[i].e,
                                    v == 6 ? (uint64_t)192 << 20 : v == 7 ? (uint64_t)1300 << 20 : dev);
        in.allow_swap = 1;
        in.beta_nonzero = cases[i].beta;
        in.complex_type = cases[i].complex_type;
        in.flop_per_byte = cases[i].fpb;
        in.lines[0] = A | C; /* (A staged too: the guard on staging holds it, not the lines) */
        in.lines[1] = BR;
        in.block_rows = v == 1 ? 4096 : 0;
        in.a_pieces = v == 2 ? 1 : 0;
        in.devices = v == 3 ? 2 : 1;
        in.stage_a = v == 4;
        in.ring = v == 5 ? 4 : 0;
        ooc_plan_t p;
        CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
        if (in.devices == 1) CU_ASSERT(check_invariants(&in, &p));
        /* (rows given: either orientation, no taller than asked; a small budget: what fits) */
        int ok = v == 1   ? p.mb <= 4096
                 : v == 6 ? p.mb < 16384 && p.device_bytes <= in.device_budget
                          : p.swap == cases[i].swap && p.a_pieces == 1 && p.n_panels == 1 && p.mb == cases[i].rows;
        if (!ok)
            printf("\n    %s: swap %d, %lld rows, %d pieces, %lld panels (expected swap %d, %lld rows, 1 piece, 1 panel)",
                   cases[i].name, p.swap, (long long)p.mb, p.a_pieces, (long long)p.n_panels, cases[i].swap,
                   (long long)cases[i].rows);
        CU_ASSERT(ok);
        /* a resumed job's plan (ooc_plan_fixed) is the same */
        ooc_plan_t f;
        CU_ASSERT(ooc_plan_fixed(&in, &p, &f) == OOC_SUCCESS && f.mb == p.mb && f.m_blocks == p.m_blocks &&
                  f.swap == p.swap && f.tail == p.tail);
    }
}

/* Few rows, op(B) whole and large against them, both pinned, one device:
 * one block of all the rows in 8 or 4 k-pieces, op(B) going up with them
 * (b_follow), where its cost is clearly lower (plan.c follow_plan(); the
 * first three measured faster on an H200, session 37). Not in 2 pieces
 * (SGEMM 20501x1019x19223 NT beta -1, measured slower), nor where the
 * usual plan's one block is multiplied chunk by chunk of op(B) as it
 * arrives (DGEMM 939x19145x17037 TT, measured slower); not when rows,
 * pieces, chunks or a ring are asked for, on several devices, or with an
 * operand staged; none of the suite's shapes changes. A plan with one
 * block in pieces (asked for, or resumed) has b_follow; more blocks not. */
static void test_follow(void)
{
    const uint64_t dev = (uint64_t)130 << 30;
    const int A = OOC_PLAN_STRIDED_A, C = OOC_PLAN_STRIDED_C, BR = OOC_PLAN_B_ROWS;
    struct {
        const char *name;
        int64_t m, n, k;
        size_t e;
        int beta, complex_type, lines0, lines1;
        double fpb;
        int follow, pieces, swap; /* expected (pieces, swap: when it follows) */
    } cases[] = {
        {"ZGEMM 3093x3373x36341 row-major N C, beta", 3093, 3373, 36341, 16, 1, 1, 0, C, 0, 1, 8, 1},
        {"DGEMM 18565x2975x43593 NN", 18565, 2975, 43593, 8, 0, 0, A | C, BR, 0, 1, 8, 1},
        {"CGEMM 877x7663x22097 C C", 877, 7663, 22097, 8, 0, 1, BR | C, A, 0, 1, 4, 1},
        {"SGEMM 20501x1019x19223 NT beta -1 (2 pieces at most)", 20501, 1019, 19223, 4, 1, 0, A | BR | C, A | BR, 0, 0, 0, 0},
        {"DGEMM 939x19145x17037 TT (one block, multiplied chunk by chunk of op(B))", 939, 19145, 17037, 8, 0, 0,
         BR | C, A, 0, 0, 0, 0},
        {"SGEMM 2519x4619x49745 NN (not clearly cheaper)", 2519, 4619, 49745, 4, 0, 0, A | C, BR, 0, 0, 0, 0},
        /* up to 2% dearer than the usual plan by the model (session 38) */
        {"DGEMM 8343x2941x38757 row-major T T, beta", 8343, 2941, 38757, 8, 1, 0, A, BR | C, 0, 1, 8, 1},
        {"DGEMM 1083x7359x78299 T T, beta", 1083, 7359, 78299, 8, 1, 0, BR | C, A, 0, 1, 8, 1},
        {"DGEMM 2263x16583x17783 T T, beta (op(B) resident)", 2263, 16583, 17783, 8, 1, 0, BR | C, A, 0, 1, 4, 0},
        {"ZGEMM 5255x943x48769 C N, beta (5% dearer: not)", 5255, 943, 48769, 16, 1, 1, C, 0, 0, 0, 0, 0},
        {"S1", 65536, 16384, 16384, 8, 0, 0, A | C, BR, 0, 0, 0, 0},
        {"S2", 262144, 1024, 4096, 8, 0, 0, A | C, BR, 0, 0, 0, 0},
        {"tall", 131072, 4096, 4096, 8, 0, 0, A | C, BR, 0, 0, 0, 0},
        {"wide", 4096, 131072, 4096, 8, 0, 0, A | C, BR, 0, 0, 0, 0},
        {"smallk", 65536, 16384, 256, 8, 0, 0, A | C, BR, 0, 0, 0, 0},
        {"square", 32768, 32768, 32768, 8, 0, 0, A | C, BR, 0, 0, 0, 0},
        {"tf32", 65536, 16384, 16384, 4, 0, 0, A | C, BR, 7000, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int var = 0; var < 7; var++) {
            /* 0: as is; then rows, pieces, chunks, a ring asked for; 2 devices; op(B) staged */
            if (var > 0 && !cases[i].follow) break;
            ooc_plan_input_t in = input(cases[i].m, cases[i].n, cases[i].k, cases[i].e, dev);
            in.allow_swap = 1;
            in.beta_nonzero = cases[i].beta;
            in.complex_type = cases[i].complex_type;
            in.lines[0] = cases[i].lines0;
            in.lines[1] = cases[i].lines1;
            in.flop_per_byte = cases[i].fpb;
            in.block_rows = var == 1 ? 8192 : 0;
            in.a_pieces = var == 2 ? 8 : 0;
            in.b_chunks = var == 3 ? 1 : 0;
            in.ring = var == 4 ? 2 : 0;
            in.devices = var == 5 ? 2 : 1;
            in.stage_a = in.stage_b = var == 6;
            ooc_plan_t p;
            CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS);
            if (in.devices == 1) CU_ASSERT(check_invariants(&in, &p));
            int want = var == 0 && cases[i].follow;
            /* (in the orientation measured) */
            int ok = p.b_follow == want &&
                     (!want || (p.m_blocks == 1 && p.a_pieces == cases[i].pieces && p.tail == 0 && p.ring == 2 &&
                                p.n_panels == 1 && p.k_panels == 1 && p.swap == cases[i].swap));
            if (!ok)
                printf("\n    %s (variant %d): b_follow %d, %lld blocks of %lld rows, %d pieces (expected b_follow %d, %d pieces)",
                       cases[i].name, var, p.b_follow, (long long)p.m_blocks, (long long)p.mb, p.a_pieces, want,
                       cases[i].pieces);
            CU_ASSERT(ok);
            /* b_follow is one block in pieces on one device, whoever chose it */
            CU_ASSERT_EQUAL(p.b_follow, p.m_blocks == 1 && p.a_pieces > 1 && in.devices == 1);
            /* a resumed job's plan (ooc_plan_fixed) is the same */
            ooc_plan_t f;
            CU_ASSERT_EQUAL(ooc_plan_fixed(&in, &p, &f), OOC_SUCCESS);
            CU_ASSERT(f.mb == p.mb && f.m_blocks == p.m_blocks && f.a_pieces == p.a_pieces && f.b_follow == p.b_follow &&
                      f.swap == p.swap);
            /* resumed on two devices: the same blocks, op(B) whole first (as a plan made for two) */
            in.devices = 2;
            if (p.b_follow) CU_ASSERT(ooc_plan_fixed(&in, &p, &f) == OOC_SUCCESS && f.m_blocks == 1 && !f.b_follow);
        }
}

/* Staged A through the cache-sized buffers (through_chunk): the in-slots
 * hold no A, the buffers are counted once, op(B) staged through the slots
 * goes in pieces at least a chunk large (not a row at a time), and an
 * operand in a file, or A in k-pieces, goes through the slots as before.
 * Staged C out through buffers of its own (through_out_ok): no out-slots;
 * through the out-slots where its buffers do not fit the staging budget. */
static void test_through_buffers(void)
{
    const uint64_t chunk = (uint64_t)32 << 20, e = 8;
    ooc_plan_input_t in = input(65536, 16384, 16384, e, (uint64_t)76 << 30); /* S1 from pageable memory */
    in.stage_a = in.stage_b = in.stage_c = 1;
    in.ring = 3;
    ooc_plan_t p, q;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &p), OOC_SUCCESS); /* no through_chunk: the ring */
    CU_ASSERT_EQUAL(p.through_chunk, 0);
    CU_ASSERT_EQUAL(p.through_bufs, 0);
    CU_ASSERT(p.pin_in_slot_bytes >= e * (uint64_t)p.mb * (uint64_t)p.kb);
    in.through_chunk = chunk;
    in.through_bufs = 3;
    in.through_ok[0] = in.through_ok[1] = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.through_chunk, chunk);
    CU_ASSERT_EQUAL(q.through_bufs, 3);
    CU_ASSERT_EQUAL(q.mb, p.mb);
    CU_ASSERT_EQUAL(q.pin_in_slot_bytes, chunk); /* op(B)'s pieces; a row of it is 128 KiB */
    CU_ASSERT_EQUAL(q.host_bytes, 3 * (q.pin_in_slot_bytes + q.pin_out_slot_bytes) + 3 * chunk);
    CU_ASSERT(check_invariants(&in, &q));
    in.stage_b = 0; /* op(B) pinned: no A, no op(B) in the in-slots */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.pin_in_slot_bytes, 0);
    CU_ASSERT_EQUAL(q.host_bytes, 3 * q.pin_out_slot_bytes + 3 * chunk);
    in.through_ok[0] = 0; /* A in a file */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.through_chunk, 0);
    CU_ASSERT(q.pin_in_slot_bytes >= e * (uint64_t)q.mb * (uint64_t)q.kb);
    in.through_ok[0] = 1;
    in.a_pieces = 4; /* k-pieces: each piece's copy is issued from the block in its slot */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.a_pieces, 4);
    CU_ASSERT_EQUAL(q.through_chunk, 0);
    CU_ASSERT_EQUAL(q.through_out_chunk, 0); /* not asked */

    /* staged C out through buffers of its own: no out-slots, its buffers counted once */
    in.a_pieces = 0;
    in.through_out_ok = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.through_chunk, chunk);
    CU_ASSERT_EQUAL(q.through_out_chunk, chunk);
    CU_ASSERT_EQUAL(q.through_out_bufs, 3);
    CU_ASSERT_EQUAL(q.pin_out_slot_bytes, 0);
    CU_ASSERT_EQUAL(q.host_bytes, 3 * q.pin_in_slot_bytes + 6 * chunk);
    CU_ASSERT(check_invariants(&in, &q));
    /* a fixed plan gets them too */
    ooc_plan_t f;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_fixed(&in, &q, &f), OOC_SUCCESS);
    CU_ASSERT_EQUAL(f.through_out_chunk, chunk);
    CU_ASSERT_EQUAL(f.host_bytes, q.host_bytes);
    /* C read in (beta != 0) through the reader's buffers: no C in the in-slots, the buffers once */
    in.beta_nonzero = 1;
    in.through_cin_ok = 1;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.through_cin_chunk, chunk);
    CU_ASSERT_EQUAL(q.through_cin_bufs, 3);
    CU_ASSERT_EQUAL(q.pin_in_slot_bytes, 0); /* (op(B) pinned) */
    CU_ASSERT_EQUAL(q.pin_out_slot_bytes, 0);
    CU_ASSERT_EQUAL(q.host_bytes, 6 * chunk);
    CU_ASSERT(check_invariants(&in, &q));
    in.through_cin_ok = 0; /* through the in-slots */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&in, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.through_cin_chunk, 0);
    CU_ASSERT_EQUAL(q.pin_in_slot_bytes, e * (uint64_t)q.mb * (uint64_t)q.nb);
    in.beta_nonzero = 0;
    /* a staging budget the buffers do not fit, and a slot of C does: through the out-slots */
    ooc_plan_input_t small = input(5000, 40, 300, e, (uint64_t)1 << 30);
    small.stage_c = 1;
    small.through_chunk = (uint64_t)1 << 20;
    small.through_bufs = 3;
    small.through_out_ok = 1;
    small.host_budget = (uint64_t)2 << 20;
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&small, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.through_out_chunk, 0);
    CU_ASSERT(q.pin_out_slot_bytes > 0);
    CU_ASSERT(check_invariants(&small, &q));
    CU_ASSERT_EQUAL_FATAL(ooc_plan_fixed(&small, &q, &f), OOC_SUCCESS);
    CU_ASSERT_EQUAL(f.through_out_chunk, 0);
    uint64_t need_dev, need_host;
    ooc_plan_least_need(&small, NULL, &need_dev, &need_host);
    CU_ASSERT(need_host < (uint64_t)3 << 20); /* the plan without the buffers */
    small.host_budget = (uint64_t)4 << 20; /* room for them */
    CU_ASSERT_EQUAL_FATAL(ooc_plan_make(&small, &q), OOC_SUCCESS);
    CU_ASSERT_EQUAL(q.through_out_chunk, (uint64_t)1 << 20);
    CU_ASSERT_EQUAL(q.pin_out_slot_bytes, 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("plan", NULL, NULL);
    CU_add_test(s, "random sweep keeps the invariants", test_random_sweep);
    CU_add_test(s, "S1 fits with B resident", test_s1_fits);
    CU_add_test(s, "staged A through cache-sized buffers", test_through_buffers);
    CU_add_test(s, "column panels when B does not fit", test_column_panels);
    CU_add_test(s, "row panels when a column does not fit", test_row_panels);
    CU_add_test(s, "budgets too small", test_too_small);
    CU_add_test(s, "op(B) transposed on the device", test_transposed);
    CU_add_test(s, "the least a plan needs is exact", test_least_need);
    CU_add_test(s, "a plan worth running, and the least budget for one", test_useful);
    CU_add_test(s, "the least traffic with op(B) to each device", test_least_each);
    CU_add_test(s, "bad input", test_bad_input);
    CU_add_test(s, "more memory, no more traffic", test_monotone_traffic);
    CU_add_test(s, "wide problems keep A resident", test_swap);
    CU_add_test(s, "pinned staging budget", test_host_budget);
    CU_add_test(s, "explicit options", test_explicit);
    CU_add_test(s, "a fixed plan reproduces the planner's", test_fixed);
    CU_add_test(s, "odd block rows and any tail tile m exactly", test_odd_block_rows_tile);
    CU_add_test(s, "automatic block rows and orientation", test_auto_shape_rules);
    CU_add_test(s, "copy lines: longer blocks, a ring of 2, the least traffic", test_copy_lines);
    CU_add_test(s, "copy-out bound shapes: no tail, A in 2 pieces, the last by columns", test_copy_out_bound);
    CU_add_test(s, "orientation: the resident upload and copy lines", test_orientation_lines);
    CU_add_test(s, "copy-bound shapes copied as long lines: blocks of 64 MiB", test_copy_bound_rows);
    CU_add_test(s, "wide lines in k-pieces where blocks copy in slower than they multiply", test_wide_lines);
    CU_add_test(s, "few rows and a large op(B): one block in pieces, op(B) going up with them", test_follow);
    CU_add_test(s, "bound by the copies in: 64 KiB lines in 4 blocks or more", test_in_bound);
    return tu_run();
}
