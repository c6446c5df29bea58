/* SPDX-License-Identifier: MIT */
/*
 * plan.c: the planner (see plan.h). Pure arithmetic on shapes and budgets:
 * no CUDA, no allocation, no I/O, no global state.
 *
 * Order of preference, from cheapest traffic to most expensive:
 *   1. op(B) whole on the device, the largest block rows that fit;
 *   2. op(B) in column panels (A streamed once per panel), as few as fit;
 *   3. op(B) also in row panels (C read back once per extra panel).
 * Both orientations (B resident, or A resident by transposing the problem) are
 * planned and the one that moves fewer bytes wins; when both move the same,
 * the one whose resident upload and copy lines cost less (plan_cost()).
 */
#include "config.h"

#include "plan.h"

#define DEFAULT_RING 3
#define DEFAULT_STREAMS 3
#define MIN_BLOCK_ROWS 256   /* below this a tile GEMM is launch-bound */
#define MAX_AUTO_BLOCK_ROWS 8192
#define TARGET_BLOCKS 32     /* blocks per panel: fill/drain cost ~ 2/TARGET_BLOCKS */
#define TAIL_STEPS 3         /* the last blocks: mb/2, mb/4, mb/8 */
#define TAIL_STEPS_SHARED 4  /* with several devices: mb/2 .. mb/16, each once per device */
#define B_CHUNK_MIN ((uint64_t)32 << 20) /* op(B) panels smaller than this go up in one piece */

typedef struct {
    int64_t m, n, k;
    uint64_t e;
    int c_in, sa, sb, sc, ring;
    uint64_t dev_budget, host_budget;
    int tail, b_chunks; /* as requested (0: choose) */
    int lead;           /* blocks per panel multiplied chunk by chunk (before clamping to the blocks) */
    int tail_rep;       /* blocks of each tail size: 0 choose (one per device), else that many */
    int q;              /* k-pieces of op(A)'s block the sizes are computed for (>= 1) */
    int q_req;          /* as requested: 0 choose, else that many */
    int out_bound;      /* the shape is bound by copying C out (out_bound_shape(); copy_out_bound() adds the rest) */
    int lines, lines_t; /* how copies lie (plan.h ooc_plan_input_t.lines): this orientation, the other */
    uint64_t slack0, slack_ring; /* the buffers' alignment (plan.h) */
    uint64_t th_chunk;  /* plan.h ooc_plan_input_t.through_chunk, 0 when this orientation's
                         * streamed operand cannot go that way */
    int th_bufs;
    uint64_t th_chunk_t; /* the same for the other orientation */
    uint64_t th_cin;    /* staged C read in goes up through the cache-sized buffers of this many bytes
                         * (plan.h through_cin_ok), 0: through the in-slots */
    uint64_t th_out;    /* staged C comes out through th_bufs cache-sized buffers of this many bytes
                         * (plan.h through_out_ok), 0: through the out-slots */
    int q_wide;         /* k-pieces for blocks lengthened to wide lines (wide_pieces()), 0 or 1: none */
    int pad;            /* the input's pad_lines (the plan's: padded()) */
    int btr, btr_t;     /* plan.h b_transposed: this orientation's, the other's */
} ctx_t;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); } /* a >= 0, b > 0: no overflow */

/* a*b and a+b on uint64_t with overflow reported as UINT64_MAX (never fits) */
static uint64_t mulu(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
static uint64_t addu(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

typedef struct {
    uint64_t b, b_scratch, a_slot, c_slot, dev, pin_in, pin_out, host;
    int c_read;
    uint64_t th_chunk; /* staged A goes through the cache-sized buffers (0: through the in-slots) */
    uint64_t th_cin;   /* staged C read in goes up through them (0: through the in-slots) */
    uint64_t th_out;   /* staged C comes out through cache-sized buffers (0: through the out-slots) */
} need_t;

/* Bytes of an x by y tile of e-byte elements on the device: packed, or with
 * pad_lines each line's pitch rounded up to 16 bytes (pipeline_int.h
 * dev_pitch), whichever way its lines lie (the same as packed when both
 * ways' lines are multiples of 16 bytes). */
static uint64_t pad16(uint64_t w) { return w > UINT64_MAX - 15 ? UINT64_MAX : (w + 15) & ~(uint64_t)15; }
/* plan.h pad_lines: as asked, and always with op(B) transposed */
static int padded(const ctx_t *c) { return c->pad || c->btr; }
static uint64_t tile_bytes(const ctx_t *c, int64_t x, int64_t y)
{
    if (!padded(c)) return mulu(c->e, mulu((uint64_t)x, (uint64_t)y));
    uint64_t a = mulu((uint64_t)x, pad16(mulu(c->e, (uint64_t)y)));
    uint64_t b = mulu((uint64_t)y, pad16(mulu(c->e, (uint64_t)x)));
    return a > b ? a : b;
}

/* One of the two device buffers through which a transposed op(B) goes up
 * (plan.h b_transposed): 1/64 of the panel, at most B_SCRATCH bytes,
 * at least one line of the panel as stored (a row of op(B), on a 16-byte
 * pitch); a multiple of 256 bytes (the arena's alignment, so that the
 * buffers need no more slack). The transpose of 16 MiB takes ~10 us on an
 * H200, its copy up ~0.3 ms: two buffers keep the copies going, and the
 * two take 1/32 of the panel's room from the blocks (a tight budget
 * must not lose a panel's columns to them). */
#define B_SCRATCH ((uint64_t)16 << 20)
static uint64_t b_scratch(const ctx_t *c, int64_t nb, int64_t kb)
{
    if (!c->btr) return 0;
    uint64_t line = pad16(mulu(c->e, (uint64_t)nb)), all = mulu(line, (uint64_t)kb);
    uint64_t s = all / 64 < B_SCRATCH ? all / 64 : B_SCRATCH;
    if (s < line) s = line;
    return s > UINT64_MAX - 255 ? UINT64_MAX : (s + 255) & ~(uint64_t)255;
}

static need_t need(const ctx_t *c, int64_t mb, int64_t nb, int64_t kb)
{
    need_t r;
    uint64_t e = c->e, R = (uint64_t)c->ring;
    r.c_read = c->c_in || kb < c->k;
    r.b = tile_bytes(c, kb, nb);
    r.b_scratch = b_scratch(c, nb, kb);
    /* a device slot holds one k-piece of the block (with pad_lines up to 7
     * deeper than an even share: the pieces start at multiples of 8,
     * pipeline_int.h part_of); a staging slot all of it (packed) */
    uint64_t a_block = mulu(e, mulu((uint64_t)mb, (uint64_t)kb));
    int64_t q = min64(c->q, kb); /* pieces at least a row of op(B) deep */
    r.a_slot = tile_bytes(c, mb, q > 1 ? min64(kb, ceil_div(kb, q) + (padded(c) ? 7 : 0)) : kb);
    r.c_slot = tile_bytes(c, mb, nb);
    uint64_t c_block = mulu(e, mulu((uint64_t)mb, (uint64_t)nb)); /* (packed, staged) */
    uint64_t RA = q > 1 ? OOC_PLAN_PIECE_SLOTS : R; /* pieces: a ring of their own */
    r.dev = addu(addu(addu(r.b, mulu(2, r.b_scratch)), mulu(R, r.c_slot)), mulu(RA, r.a_slot));
    /* staged A, whole blocks: through the cache-sized buffers when asked, else in the in-slots */
    r.th_chunk = c->sa && q == 1 ? c->th_chunk : 0;
    r.th_cin = c->sc && r.c_read ? c->th_cin : 0;
    r.pin_in = addu(c->sa && !r.th_chunk ? a_block : 0, (c->sc && r.c_read && !r.th_cin) ? c_block : 0);
    if (c->sb) {
        /* B panels are staged in chunks through the in slots: room for one
         * row of the panel as stored, whichever way it is stored, and for a
         * chunk of A's when A goes through the cache-sized buffers (the
         * slots then hold no A: op(B) of S1 from pageable memory went up
         * one 128 KiB row at a time, 0.44 s, on an H200) */
        uint64_t row = mulu(e, (uint64_t)max64(kb, nb));
        if (row < r.th_chunk) row = r.th_chunk;
        if (r.pin_in < row) r.pin_in = row;
    }
    r.th_out = c->sc ? c->th_out : 0;
    r.pin_out = c->sc && !r.th_out ? c_block : 0;
    r.host = mulu(R, addu(r.pin_in, r.pin_out));
    /* the reader's buffers: for A, C read in, or both */
    uint64_t reader = r.th_chunk ? r.th_chunk : r.th_cin;
    if (reader) r.host = addu(r.host, mulu((uint64_t)c->th_bufs, reader));
    if (r.th_out) r.host = addu(r.host, mulu((uint64_t)c->th_bufs, r.th_out));
    return r;
}

/* Room for the buffers' alignment with this ring (staging only when staged). */
static uint64_t slack(const ctx_t *c) { return addu(c->slack0, mulu((uint64_t)c->ring, c->slack_ring)); }

static int fits(const ctx_t *c, int64_t mb, int64_t nb, int64_t kb)
{
    need_t r = need(c, mb, nb, kb);
    uint64_t s = slack(c);
    return addu(r.dev, s) <= c->dev_budget && (r.host == 0 || addu(r.host, s) <= c->host_budget);
}

/* The largest x in [lo, hi] for which fits() holds with x in the slot `which`
 * (0: mb, 1: nb, 2: kb), the others fixed; 0 if none. fits() is monotone. */
static int64_t largest(const ctx_t *c, int which, int64_t lo, int64_t hi, int64_t mb, int64_t nb,
                       int64_t kb)
{
    int64_t best = 0;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int ok = which == 0 ? fits(c, mid, nb, kb) : which == 1 ? fits(c, mb, mid, kb)
                                                                : fits(c, mb, nb, mid);
        if (ok) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

/* Split `total` into equal parts of at most `most`. */
static int64_t even_split(int64_t total, int64_t most)
{
    return ceil_div(total, ceil_div(total, most));
}

/* Whether a quarter or more of a block's copied bytes go as lines one block
 * row long: op(A)'s block (k per row) when its columns are contiguous
 * (OOC_PLAN_STRIDED_A), C's (n per row, in and out when beta != 0) when C's
 * are (OOC_PLAN_STRIDED_C); also when a file's block is read or written as
 * such lines, one pread or pwrite each (OOC_PLAN_FILE_LINES_A/_C: smaller
 * blocks would make more, shorter ones; not measured, so file jobs keep
 * the floor they had). Such blocks keep STRIDED_MIN_ROWS (1024: lines
 * of 4-16 KiB); blocks copied in long lines may go down to MIN_BLOCK_ROWS,
 * which shortens the fill and drain of a job of few rows. Measured on an
 * H200 (docs/PERFORMANCE.md session 28), 1024 rows against what this gives:
 * DGEMM 2000x3000x4000 (op(A) resident: op(B)^T's rows streamed, C^T's rows
 * contiguous) 3.61 -> 3.21 ms at 512 rows, the TF32 SGEMM 33209x2699x6533
 * 29.9 -> 27.5 ms, ZGEMM 3243x3499x12355 CN pageable 47.4-50.7 ->
 * 43.4-45.4 ms, SGEMM 25315x1591x3247 NT (op(B)'s strided rows 6% of the
 * bytes) 12.8 -> 12.1 ms at 256; but DGEMM 6000^3 NN (A's and C's block
 * rows are their lines) 15.0 -> 15.5 ms at 768 rows, so it keeps 1024. */
#define STRIDED_MIN_ROWS (4 * MIN_BLOCK_ROWS)
/* the share of a block's copied bytes that go as lines one block row long */
static double strided_share(const ctx_t *c)
{
    double sa = c->lines & (OOC_PLAN_STRIDED_A | OOC_PLAN_FILE_LINES_A) ? (double)c->k : 0.0;
    double cw = (double)c->n * (c->c_in ? 2.0 : 1.0);
    double sc = c->lines & (OOC_PLAN_STRIDED_C | OOC_PLAN_FILE_LINES_C) ? cw : 0.0;
    return (sa + sc) / ((double)c->k + cw);
}
static int strided_rows(const ctx_t *c) { return strided_share(c) >= 0.25; }

/* Block rows when the caller does not say. Three things set it:
 *  - enough blocks for the pipeline to fill and drain cheaply (TARGET_BLOCKS);
 *  - the first block's multiply must last as long as op(B)'s upload, which it
 *    overlaps chunk by chunk: 2 rows x n x k flops per row against k x n x e
 *    bytes, so rows >= F e / 2 (e / 8 more for complex: 8 flops per
 *    multiply-add), F = R / BW the math's flop per copied byte (about 1000
 *    for DGEMM on H100/H200: 50 TFLOP/s over 55 GB/s; about 7000 for TF32),
 *    as long as that leaves some 8 blocks to pipeline;
 *  - when copies take at least half as long as the multiply (a block row's
 *    2 n k flops against its (k + n) e bytes in and out), copied lines of at
 *    least 64 KiB: the copy engines move a column-major block's lines of
 *    mb x e bytes, lines far apart, at 39 GB/s for 5 KiB, 48 GB/s for 8-16
 *    KiB and 55 GB/s (full rate) from 32 KiB, measured on an H200
 *    (kernels/copy_probe.cu; docs/PERFORMANCE.md "Copy lines"); slower still
 *    while the other direction copies too. Not when the streamed operand and
 *    C are both staged (`packed`): their slots are packed, each copy one
 *    contiguous line, and the staging the ring pins grows with the rows
 *    (pinned once per handle: a one-shot job pays it). Measured on an H200,
 *    `oocgemm multiply` on .npy files in /dev/shm, time_s (docs/PERFORMANCE.md
 *    session 22): A 4096 x 8192 times B 8192 x 65536 (op(A) resident), 8192
 *    rows (2.25 GiB pinned) against 4096 (1.1 GiB): 3.32, 2.17 s against
 *    1.78, 1.64 pinned by cudaHostAlloc; 1.27-1.32 against 1.15-1.18 pinned
 *    as now (backend_cuda.c map_pinned); 131072 x 4096 x 4096: 2.75, 2.21
 *    against 2.02, 2.00, then 1.53-1.68 against 1.51-1.61. */
#define FLOP_PER_BYTE 1000
#define WIDE_LINE_BYTES ((int64_t)64 << 10)
/* A block's bytes copied in and out when the shape is bound by its copies
 * and they are long lines (copy_bound_rows()) */
#define COPY_BLOCK_BYTES ((double)(64 << 20))
/* The multiply's time over the copies' of a block row: (complex ? 8 : 2) n k
 * flops at R against (k + n) e bytes in and out at BW, fpb = R / BW. */
static double math_over_copy(int64_t n, int64_t k, uint64_t e, int complex_type, double fpb)
{
    if (fpb <= 0) fpb = FLOP_PER_BYTE;
    return (complex_type ? 8.0 : 2.0) * (double)n * (double)k / (((double)k + (double)n) * (double)e * fpb);
}
/* A shape bound by its copies (a block row's multiply shorter than its
 * copies in and out at the copy rate) whose blocks are copied as long lines
 * (not strided_rows()), from pinned memory (neither staged) on one device:
 * the rules below would give it some 8 blocks (the first block's multiply
 * as long as op(B)'s upload; 64 KiB lines), but neither pays here. The
 * copy engines are the bound, and the copy-out waits first for the first
 * block (in, then multiplied) and at the end for nothing but the last one,
 * and in between for each next block's copy in and multiply after the
 * first block, multiplied chunk by chunk of op(B), has gone out. So blocks
 * of about COPY_BLOCK_BYTES in and out (~1.2 ms of copies on an H200), at
 * least MIN_BLOCK_ROWS. Measured on an H200, the old rows against smaller
 * (`oocgemm run --repeat 3 --block-rows`, best of 3; docs/PERFORMANCE.md
 * session 46): op(A) resident, C's contiguous columns streamed (op(B)'s
 * rows strided where it is stored that way, under 1% of the bytes): SGEMM
 * 164929x7303x1713 TT beta -1, 1024 rows 138.0 ms, 512 127.0, 256 122.3;
 * CGEMM 71103x7293x549 TN beta -1 104.0, 95.8, 92.7; ZGEMM 26535x8457x393
 * TT beta 0.5, 1280 rows 85.4, 640 80.2, 320 77.7; DGEMM 4096x131072x4096
 * (the suite's wide), 8192 rows 94.0, 4096 93.4, 2048 91.6, 1024 89.0;
 * its TF32 SGEMM 8192x131072x8192 96.1 -> 91.1 at 1024. Not where more
 * than 1/16 of the bytes go as strided lines, which get shorter: CGEMM
 * 5253x11699x3159 NC, op(B)'s rows strided (37% of the bytes), 1440 rows
 * 32.7 ms, 704 31.7, 352 35.2. Returns the rows, or 0 where this does not
 * apply. */
static int64_t copy_bound_rows(const ctx_t *c, int complex_type, double fpb)
{
    if (c->sa || c->sc || c->lead > 1 || strided_share(c) > 1.0 / 16 ||
        math_over_copy(c->n, c->k, c->e, complex_type, fpb) >= 1.0)
        return 0;
    double row = (double)c->e * ((double)c->k + (double)c->n * (c->c_in ? 2.0 : 1.0));
    double rows = COPY_BLOCK_BYTES / row;
    if (rows >= (double)MAX_AUTO_BLOCK_ROWS) return MAX_AUTO_BLOCK_ROWS;
    int64_t r = (int64_t)rows;
    return ceil_div(r + ((double)r < rows), MIN_BLOCK_ROWS) * MIN_BLOCK_ROWS;
}

static int64_t auto_block_rows(const ctx_t *c, int complex_type, double fpb)
{
    int64_t m = c->m, n = c->n, k = c->k;
    uint64_t e = c->e;
    int packed = c->sa && c->sc;
    if (fpb <= 0) fpb = FLOP_PER_BYTE;
    int64_t t = ceil_div(m, TARGET_BLOCKS);
    t = ceil_div(t, MIN_BLOCK_ROWS) * MIN_BLOCK_ROWS;
    t = max64(t, strided_rows(c) ? STRIDED_MIN_ROWS : MIN_BLOCK_ROWS);
    double head_rows = fpb * (double)e / (complex_type ? 8 : 2);
    int64_t head = head_rows > (double)MAX_AUTO_BLOCK_ROWS ? MAX_AUTO_BLOCK_ROWS : (int64_t)head_rows;
    head = min64(head, ceil_div(m, 8)); /* but keep at least ~8 blocks to pipeline */
    head = ceil_div(head, MIN_BLOCK_ROWS) * MIN_BLOCK_ROWS;
    t = max64(t, head);
    if (!packed && math_over_copy(n, k, e, complex_type, fpb) < 2.0) t = max64(t, min64(WIDE_LINE_BYTES / (int64_t)e, ceil_div(m, 8))); /* ~8 blocks still */
    t = min64(t, MAX_AUTO_BLOCK_ROWS);
    int64_t cb = copy_bound_rows(c, complex_type, fpb);
    if (cb > 0) t = min64(t, cb);
    return min64(t, m);
}

/* Round block rows down when that leaves a remainder block anyway: to a
 * multiple of 32 (tile GEMMs on aligned shapes), and of ALIGN_ROWS_WIDE from
 * 2048 rows on, at most 1/8 of the rows. cuBLAS's tiles fill the last wave
 * of SMs better: S1 in a 1 GiB budget (blocks held to 3168 rows by the
 * budget, in 1024-deep pieces) ran 0.753-0.755 s, and 0.728-0.733 s with
 * 3072 rows, three times each, interleaved, on an H200; DGEMM pieces of
 * 3168 x 5462 x 1024 53.3-53.9 TFLOP/s, 3072 53.7-55.4, 3328 55.8-56.4
 * (kernels/gemm_probe.cu). 32: any rows from 64 on but all of m, asked
 * for (--block-rows: 100 runs as 96) or not; 256: only rows a budget holds
 * below the target (`held`): the planner's targets are multiples already. */
#define ALIGN_ROWS_WIDE 256
static int64_t align_rows(int64_t mb, int64_t m, int held)
{
    if (mb >= 64 && mb < m) mb -= mb % 32;
    if (held && mb >= 2048 && mb < m) mb -= mb % ALIGN_ROWS_WIDE;
    return mb;
}

/* Bytes over the bus for a plan: A once per column panel, B once, C out once
 * per row panel and read in for every row panel but the first (and the first
 * too when beta != 0). */
static uint64_t traffic(const ctx_t *c, int64_t nb, int64_t kb)
{
    uint64_t m = (uint64_t)c->m, n = (uint64_t)c->n, k = (uint64_t)c->k, mn = mulu(m, n);
    uint64_t np = (uint64_t)ceil_div(c->n, nb), kp = (uint64_t)ceil_div(c->k, kb);
    uint64_t c_moves = addu(mulu(mn, kp), mulu(mn, kp - 1 + (c->c_in ? 1 : 0)));
    return mulu(c->e, addu(addu(mulu(np, mulu(m, k)), mulu(k, n)), c_moves));
}

/* Beside a running multiply the copy engines move a column-major block's
 * lines (far apart) at 25 GB/s for 5 KiB, 33 for 8-16 KiB, 40 for 20 KiB
 * and 47-48 from 24 KiB (DGEMM 8192^3 on the same H200, copy_probe.cu
 * "beside"/"batch"): lines of 24 KiB are long enough. A block split into
 * k-pieces of at least MIN_PIECE_DEPTH multiplies at 59 of 62 TFLOP/s
 * (1024) against 61 (2048) and 55 (512). */
#define LONG_LINE_BYTES ((int64_t)24 << 10)
#define MIN_PIECE_DEPTH 1024

/* q pieces halved until each of a depth is MIN_PIECE_DEPTH deep (1: none) */
static int deep_pieces(int q, int64_t depth)
{
    while (q > 1 && ceil_div(depth, q) < MIN_PIECE_DEPTH) q /= 2;
    return q;
}

/* C's copies out bound the pipeline when a block row's copies take longer
 * than its multiply (math_over_copy() < 1) and C's row is at least as long
 * as A's (n >= k), on one device. Then, once the blocks have long lines:
 *  - no shrinking tail: its blocks of mb/2 .. mb/8 rows copy C out on short
 *    lines (TF32 S3: 4096 rows at 32 GB/s against 41 for 8192), which costs
 *    the copy-out more than the shorter drain saves;
 *  - A's blocks in 2 k-pieces (k >= 2 MIN_PIECE_DEPTH): op(B) goes up first
 *    and the pieces stream behind it, so the copy-out, once started, does
 *    not wait for the second block's A behind op(B) (TF32 S3: 20 ms idle).
 * Measured on an H200, best of 3 (docs/PERFORMANCE.md "Copy-out bound
 * shapes"): TF32 S3 0.147 -> 0.137 s, tall 0.104 -> 0.102, smallk 0.181 ->
 * 0.175 (no tail; k too small for pieces); S2 (n < k) 0.161 -> 0.160 with
 * both, 0.163 with no tail alone: left as it was. */
static int out_bound_shape(const ctx_t *c, int complex_type, double fpb)
{
    return math_over_copy(c->n, c->k, c->e, complex_type, fpb) < 1.0 && c->n >= c->k;
}

/* (and the blocks' lines long: blocks of a shape bound by its copies but
 * copied as short lines, or as contiguous ones that copy_bound_rows() keeps
 * small, get a tail and no k-pieces) */
static int copy_out_bound(const ctx_t *c, int64_t mb)
{
    return c->out_bound && c->lead <= 1 && mb * (int64_t)c->e >= LONG_LINE_BYTES;
}

/* Staged blocks of A go whole, not in copy_out_bound()'s 2 k-pieces: the
 * threads copy them into packed slots or cache-sized buffers, contiguous
 * either way, where k-pieces would take the buffers away (need(): a piece's
 * copy is issued from the block in its slot) and take a pinned slot as
 * large as the block. With C staged too, C's lines are packed as well, so
 * they keep a tail. Measured on an H200 from pageable memory, the planner's
 * 4096 rows (8192 for TF32) in 2 k-pieces with no tail against whole blocks
 * with a tail, best of 3, two rounds (docs/PERFORMANCE.md session 47): wide
 * (op(A) resident) 0.175, 0.146 -> 0.122, 0.108 s; row-major tall 0.147,
 * 0.153 -> 0.107, 0.126; its TF32 SGEMM 8192x131072x8192 0.165, 0.169 ->
 * 0.133, 0.114; wide with beta 1 0.280, 0.261 -> 0.210, 0.195. With one
 * of A and C staged (session 48, two rounds, best of 3): tall DGEMM
 * 131072x4096x4096, A pageable and C pinned, 2 pieces 0.130, 0.125 -> whole
 * 0.112, 0.113; its tail made no difference there (0.107, 0.114 with 3
 * steps), nor with TF32 S3, nor either way with C staged alone. */
static int out_bound_pieces(const ctx_t *c, int64_t mb)
{
    return copy_out_bound(c, mb) && !c->sa;
}

static int out_bound_no_tail(const ctx_t *c, int64_t mb)
{
    return copy_out_bound(c, mb) && !(c->sa && c->sc);
}

/* Rows of the first j blocks of a tail after blocks of mb rows, `rep` blocks
 * of each size: rep x mb/2, then rep x mb/4, ..., each halving rounded down
 * (so exact for any mb). */
static int64_t tail_rows(int64_t mb, int rep, int64_t j)
{
    int64_t r = 0;
    for (int64_t i = 0; i < j; i++) r += mb >> (i / rep + 1);
    return r;
}

/* The plan's numbers for the chosen sizes. */
static void fill_plan(const ctx_t *c, int64_t mb, int64_t nb, int64_t kb, ooc_plan_t *p)
{
    int64_t m = c->m, n = c->n, k = c->k;
    need_t r = need(c, mb, nb, kb);
    p->m = m;
    p->n = n;
    p->k = k;
    p->mb = mb;
    p->nb = nb;
    p->kb = kb;
    p->m_blocks = ceil_div(m, mb);
    p->n_panels = ceil_div(n, nb);
    p->k_panels = ceil_div(k, kb);
    p->ring = c->ring;
    p->c_read = r.c_read;
    p->dev_b_bytes = r.b;
    p->dev_a_slot_bytes = r.a_slot;
    p->dev_c_slot_bytes = r.c_slot;
    p->device_bytes = r.dev;
    p->pin_in_slot_bytes = r.pin_in;
    p->pin_out_slot_bytes = r.pin_out;
    p->host_bytes = r.host;
    p->through_chunk = r.th_chunk;
    p->through_bufs = r.th_chunk ? c->th_bufs : 0;
    p->through_cin_chunk = r.th_cin;
    p->through_cin_bufs = r.th_cin ? c->th_bufs : 0;
    p->through_out_chunk = r.th_out;
    p->through_out_bufs = r.th_out ? c->th_bufs : 0;
    p->traffic_bytes = traffic(c, nb, kb);
    /* a shrinking tail shortens the drain (the last copy-out); only when the
     * blocks stay large and there are enough of them. Several devices: each
     * size once per device, so that the last blocks every device takes are
     * of one size and small, and they finish together (a device holds up to
     * two blocks when the queue runs dry: pipeline.c's claim rule); when
     * the rows are too few for that, one of each size. None on one device
     * when A's blocks go in k-pieces: a block's fill is then one piece, so
     * the drain is short anyway, while the tail's small blocks copy their
     * pieces in on short lines, slower than they multiply, and with panels
     * at the end of every panel (S1 with a 1 GiB budget on an H200: 3072-row
     * blocks in 16 pieces, the tail 1536, 768 and 384 rows after a body
     * remainder of 1408: 20.6 ms for the last 4096 rows of each panel
     * against ~14 at full rate; no tail: 0.727 -> 0.708 s, best of 3, three
     * interleaved pairs). */
    int rep = c->tail_rep ? c->tail_rep : c->lead;
    if (rep < 1 || rep > OOC_PLAN_MAX_TAIL_REP || m < (2 + 2 * (int64_t)rep) * mb) rep = 1;
    int t = TAIL_STEPS;
    if (c->tail)
        t = c->tail - 1;
    else if (c->lead > 1)
        t = TAIL_STEPS_SHARED;
    else if (out_bound_no_tail(c, mb) || c->q > 1)
        t = 0;
    while (t > 0 && ((mb >> t) < 32 || m < 4 * mb)) t--;
    p->tail = t;
    p->tail_rep = t ? rep : 1;
    p->m_blocks = t ? ceil_div(m - tail_rows(mb, p->tail_rep, (int64_t)t * p->tail_rep), mb) + (int64_t)t * p->tail_rep
                    : ceil_div(m, mb);
    /* op(B) in chunks, so that the first block starts on the first chunk */
    int64_t lines = min64(kb, nb); /* lines of the panel, whichever way it is stored */
    int q = c->b_chunks ? c->b_chunks : (r.b >= B_CHUNK_MIN ? OOC_MAX_B_CHUNKS : 1);
    /* chunks of op(B)'s rows split the first block's multiply along k: each
     * chunk's multiply reads and writes the block's C, so it must be deep
     * (smallk with op(A) resident, 256 deep in 8 chunks: 6.0 ms against
     * 1.2 for the block whole, on an H200) */
    if (!c->b_chunks && (c->lines & OOC_PLAN_B_ROWS) && q > kb / MIN_PIECE_DEPTH)
        q = (int)max64(1, kb / MIN_PIECE_DEPTH);
    if (q > OOC_MAX_B_CHUNKS) q = OOC_MAX_B_CHUNKS;
    if (q > lines) q = (int)lines;
    p->b_chunks = q < 1 ? 1 : q;
    /* a block in k-pieces needs all of op(B) for its first piece; where C's
     * copies out bound the run and C goes out in place as columns, the chunks
     * split each block's last piece by C's columns, each going out when done */
    p->a_pieces = (int)min64(c->q, kb); /* as need() */
    if (p->a_pieces > 1 && !c->b_chunks)
        p->b_chunks = copy_out_bound(c, mb) && (c->lines & OOC_PLAN_STRIDED_C) ? (int)min64(OOC_MAX_B_CHUNKS, lines) : 1;
    p->a_slots = p->a_pieces > 1 ? OOC_PLAN_PIECE_SLOTS : c->ring;
    p->pad_lines = padded(c);
    p->b_transposed = c->btr;
    p->dev_b_scratch_bytes = r.b_scratch;
    p->lead = (int)min64(max64(c->lead, 1), p->m_blocks);
    /* one block in k-pieces on one device: its multiply need not wait for
     * all of op(B) (follow_plan(); also a plan asked for, or resumed) */
    p->b_follow = p->a_pieces > 1 && p->m_blocks == 1 && c->lead <= 1;
}

void ooc_plan_block(const ooc_plan_t *p, int64_t i, int64_t *r0, int64_t *r1)
{
    int64_t nt = (int64_t)p->tail * p->tail_rep;
    int64_t body = p->m - tail_rows(p->mb, p->tail_rep, nt), body_blocks = p->m_blocks - nt;
    if (i < body_blocks) {
        *r0 = i * p->mb;
        *r1 = body - *r0 > p->mb ? *r0 + p->mb : body; /* (not *r0 + mb: m may be near 2^63) */
        return;
    }
    int64_t j = i - body_blocks; /* tail block j has mb >> (j / tail_rep + 1) rows */
    *r0 = body + tail_rows(p->mb, p->tail_rep, j);
    *r1 = *r0 + (p->mb >> (j / p->tail_rep + 1));
}

ooc_status_t ooc_plan_check(const ooc_plan_t *p)
{
    if (p == NULL || p->m < 1 || p->n < 1 || p->k < 1 || p->mb < 1 || p->mb > p->m || p->mb > OOC_PLAN_MAX_DIM ||
        p->nb < 1 || p->nb > p->n || p->nb > OOC_PLAN_MAX_DIM || p->kb < 1 || p->kb > p->k ||
        p->kb > OOC_PLAN_MAX_DIM || p->tail < 0 || p->tail > 6 || p->ring < 2 ||
        p->ring > OOC_PLAN_MAX_RING || p->b_chunks < 1 || p->b_chunks > OOC_MAX_B_CHUNKS ||
        p->b_chunks > min64(p->kb, p->nb) || p->lead < 1 || p->lead > p->m_blocks || p->tail_rep < 1 ||
        p->tail_rep > OOC_PLAN_MAX_TAIL_REP || (p->tail == 0 && p->tail_rep != 1) || p->a_pieces < 1 ||
        p->a_pieces > OOC_PLAN_MAX_A_PIECES || p->a_pieces > p->kb || p->a_slots < 2 || p->a_slots > OOC_PLAN_MAX_RING ||
        (p->b_transposed && (!p->pad_lines || p->dev_b_scratch_bytes == 0 || p->dev_b_scratch_bytes % 256 != 0)) ||
        (!p->b_transposed && p->dev_b_scratch_bytes != 0))
        return OOC_ERR_INTERNAL;
    if (p->n_panels != ceil_div(p->n, p->nb) || p->k_panels != ceil_div(p->k, p->kb)) return OOC_ERR_INTERNAL;
    /* the body's blocks of mb rows then the tail's shrinking ones tile [0, m)
     * exactly, none empty */
    int64_t nt = (int64_t)p->tail * p->tail_rep;
    int64_t body = p->m - tail_rows(p->mb, p->tail_rep, nt), body_blocks = p->m_blocks - nt;
    if (p->tail > 0 && (p->mb >> p->tail) < 1) return OOC_ERR_INTERNAL;
    if (body < 1 || body_blocks < 1 || body_blocks != ceil_div(body, p->mb)) return OOC_ERR_INTERNAL;
    return OOC_SUCCESS;
}


static int plan_one(const ctx_t *c, int64_t mb_target, ooc_plan_t *p);

/* The least bytes a plan of this orientation moves within the budgets: the
 * widest panels that fit beside a ring of 2 blocks of the smallest useful
 * height (MIN_BLOCK_ROWS; fewer only when nothing else fits), over every
 * split of op(B)'s rows. UINT64_MAX when none fits. */
static uint64_t least_traffic(const ctx_t *c0)
{
    ctx_t c = *c0;
    c.ring = 2;
    ooc_plan_t p;
    return plan_one(&c, min64(c.m, MIN_BLOCK_ROWS), &p) ? p.traffic_bytes : UINT64_MAX;
}

/* How much longer copies of a block take when its lines are mb x e bytes
 * far apart than when it is contiguous, beside a multiply: 55.3 GB/s
 * contiguous each way; in 55.3 from 64 KiB lines, 47.6 from 24-32 KiB, 33
 * below; out 49.0 from 64 KiB, 43.6 from 24-32 KiB, 33 below (DGEMM on an
 * H200, docs/PERFORMANCE.md "Copies beside a multiply"). */
static double strided_cost(int64_t line, int out)
{
    if (line >= WIDE_LINE_BYTES) return out ? 1.13 : 1.0;
    return line >= LONG_LINE_BYTES ? (out ? 1.27 : 1.16) : 1.68;
}

/* Blocks of a streamed operand copied in place as strided lines, held to
 * some 8 blocks (auto_block_rows(): t rows, about m / 8), copy in slower
 * than they multiply when their lines are under 64 KiB: a block row's k
 * elements (and n more with beta != 0) in at strided_cost() against its
 * multiply. Then blocks of wide lines (64 KiB, at most MAX_AUTO_BLOCK_ROWS
 * rows) in q k-pieces, the fewest that keep a piece no taller than t rows:
 * the copy engines move the lines at full rate, and the pipeline still
 * fills and drains a piece at a time (no larger than the block was).
 * Measured on an H200, best of 5, two rounds interleaved with the blocks
 * as they were (docs/PERFORMANCE.md session 30): DGEMM 3407x28947x13657 TT
 * beta 0.5 (op(A) resident: 3840 -> 8192 rows, 30 -> 64 KiB lines) 99.7
 * -> 87.3 ms (2 pieces 91.7; whole blocks of 8192 rows 100); SGEMM of that
 * shape 72.9 -> 66.6 (3616 -> 8192 rows); ZGEMM 1700x14000x7000 TT 42.8 ->
 * 37.0 (1792 -> 4096); DGEMM 24000x2000x16000 NN 80.6 -> 66.1 (3072 ->
 * 8192). Not where the multiply takes longer than the copies in (DGEMM
 * 24000x6000x12000 NN, 3072 -> 8192 rows in 4 pieces: 77.7 -> 81.2 ms),
 * nor when not even 2 pieces of MIN_PIECE_DEPTH fit in k (fewer pieces
 * when more would be shallower; at most 8), with fewer than 3 blocks,
 * several devices, or pieces or rows asked for. Returns q (1: no change)
 * and sets *rows. */
/* A block row's copies in (op(A)'s k elements as strided lines, C's n
 * when read in) and out (C's n), in bytes at strided_cost() for blocks of
 * mb rows, and its multiply in bytes at the math's flop per copied byte. */
typedef struct {
    double in, out, math;
} row_cost_t;
static row_cost_t row_cost(const ctx_t *c, int64_t mb, int complex_type, double fpb)
{
    double e = (double)c->e, n = (double)c->n, k = (double)c->k;
    int64_t line = mb * (int64_t)c->e;
    int sc = (c->lines & OOC_PLAN_STRIDED_C) != 0;
    row_cost_t r;
    r.in = e * (k * strided_cost(line, 0) + (c->c_in ? n * (sc ? strided_cost(line, 0) : 1.0) : 0.0));
    r.out = e * n * (sc ? strided_cost(line, 1) : 1.0);
    r.math = (complex_type ? 8.0 : 2.0) * n * k / (fpb > 0 ? fpb : FLOP_PER_BYTE);
    return r;
}

static int wide_pieces(const ctx_t *c, int complex_type, double fpb, int64_t *rows)
{
    int64_t t = *rows, wide = min64(WIDE_LINE_BYTES / (int64_t)c->e, MAX_AUTO_BLOCK_ROWS);
    if (c->q_req || c->lead > 1 || !(c->lines & OOC_PLAN_STRIDED_A) || t >= wide || c->m <= 2 * wide) return 1;
    row_cost_t r = row_cost(c, t, complex_type, fpb);
    if (r.in <= r.math) return 1;
    int q = 2;
    while (ceil_div(wide, q) > t && q < 8) q *= 2; /* (a small m keeps t >= 2048: q <= 4 with 8192 rows) */
    q = deep_pieces(q, c->k);
    if (q < 2) return 1;
    *rows = wide;
    return q;
}

/* Bound by the copies in: a block row's copies in (op(A)'s k elements as
 * strided lines, and C's n when read in) take at least twice its multiply
 * and its copies out, all at strided_cost() for lines of mb rows. The copy
 * engine in is then busy from the start whatever the block rows: a larger
 * first block delays only what does not bound the job, and the drain (the
 * last block's multiply and copy out, shortened by the tail) is short. So
 * blocks of 64 KiB lines where that leaves at least 4 blocks (not ~8), past
 * MAX_AUTO_BLOCK_ROWS for 4-byte elements (16384 rows), where the copy
 * engines move lines far apart at 55 GB/s beside a multiply against 47.6
 * for 24-32 KiB (docs/PERFORMANCE.md "Copies beside a multiply"); in the
 * orientation chosen already (plan_make()). Not for staged operands (their
 * slots' copies are contiguous). Returns the rows (mb: no change).
 * Measured on an H200, old plan against new, best of 5, two rounds
 * (docs/PERFORMANCE.md session 43): SGEMM 85835x397x10413 TN row-major
 * 82.3, 81.9 -> 73.7, 71.7 ms; SGEMM 131071x511x8191 NN 97.3, 97.5 -> 87.8,
 * 88.4; SGEMM 200001x1023x4095 NN beta -1 89.6, 89.7 -> 79.5, 79.5. Taken
 * before the orientation was chosen, it turned three shapes from op(A)
 * resident (A uploaded whole, at the contiguous rate) to strided blocks,
 * each slower: TF32 100001x255x8191 62.1 -> 65.1, DGEMM 45001x301x12001
 * 82.1 -> 86.5, ZGEMM 20001x257x6001 38.1 -> 39.2. */
static int64_t in_bound_rows(const ctx_t *c, int64_t mb, int complex_type, double fpb)
{
    int64_t wide = WIDE_LINE_BYTES / (int64_t)c->e;
    if (mb >= wide || c->m < 4 * wide || !(c->lines & OOC_PLAN_STRIDED_A) || c->sa || c->sc || c->q_req ||
        c->lead > 1)
        return mb;
    row_cost_t r = row_cost(c, mb, complex_type, fpb);
    return r.in >= 2.0 * (r.math > r.out ? r.math : r.out) ? wide : mb;
}

/* A plan's time in bytes at the copy rate: the resident operand's upload
 * (no multiply hides all of it), then the longest of the multiply (flops
 * over the math's flop per copied byte), the copies in and the copies out,
 * strided ones (c->lines) at strided_cost(). Of two orientations that move
 * the same bytes the cheaper is taken: a small k with C column-major, say,
 * goes out in contiguous blocks of C's columns with op(A) resident, at full
 * rate, instead of in rows of 64 KiB lines. */
static double plan_cost(const ooc_plan_t *p, const ctx_t *c, int complex_type, double fpb)
{
    double e = (double)c->e, m = (double)p->m, n = (double)p->n, k = (double)p->k;
    int64_t line = p->mb * (int64_t)c->e;
    double fa = c->lines & OOC_PLAN_STRIDED_A ? strided_cost(line, 0) : 1.0;
    double fci = c->lines & OOC_PLAN_STRIDED_C ? strided_cost(line, 0) : 1.0;
    double fco = c->lines & OOC_PLAN_STRIDED_C ? strided_cost(line, 1) : 1.0;
    double kp = (double)p->k_panels, c_in = p->c_read ? kp - 1 + (c->c_in ? 1 : 0) : 0;
    double in = e * m * (k * (double)p->n_panels * fa + n * c_in * fci), out = e * m * n * kp * fco;
    double math = (complex_type ? 8.0 : 2.0) * m * n * k / (fpb > 0 ? fpb : FLOP_PER_BYTE);
    double slowest = math > in ? math : in;
    return e * k * n + (slowest > out ? slowest : out);
}

/* A problem of few rows (m <= MAX_AUTO_BLOCK_ROWS) whose op(B) fits whole,
 * both pinned (neither staged), on one device: the usual plan uploads all
 * of op(B) before most of the multiply can start (a lead block hides only
 * its share), a loss as large as op(B) is against the rest. Instead: one
 * block of all the rows in q k-pieces, op(B)'s rows going up piece by
 * piece with them (b_follow), so that the multiply starts after one piece
 * and the copies in run back to back. ZGEMM 3093x3373x36341 (row-major,
 * B^H, beta 0.5) on an H200: 100 ms the usual way, 85.1 in 8 pieces (95.4
 * in 16, whose strided lines are half as long); DGEMM 18565x2975x43593
 * 218 -> 160 ms (docs/PERFORMANCE.md session 37). Its cost, in bytes at
 * the copy rate: the copies in (lines of a piece of depth kc at
 * strided_cost() where they are parts of longer lines) and the last
 * piece's multiply, or the first piece's copies and the whole multiply,
 * whichever is longer; then C out. q: 8 or 4, the cheaper, with pieces at
 * least MIN_PIECE_DEPTH deep and lines at least LONG_LINE_BYTES; not 2,
 * whose first piece (half of all the copies in) comes before any multiply:
 * SGEMM 20501x1019x19223 NT beta -1, 35.5 ms the usual way, 41.3 in 2
 * pieces (the model: 0.93 of the usual plan's cost, which its lead block,
 * multiplied chunk by chunk of op(B), beats). Taken at a cost under
 * FOLLOW_GAIN of the usual plan's, unless every block of the usual plan
 * is a lead block (plan_make()): of 13 shapes of the kind measured on an
 * H200 (session 37), 10 ran faster by 7-27%, 2 the same (bound by their
 * copies in already, at 0.93-0.95 of the floor; one of them, DGEMM
 * 1015x3871x58911, a lead block, is now left as it was), 1 slower in 2
 * pieces (above). The usual plan's cost is the less exact of the two: on
 * 15 shapes measured both ways (session 38) this model came within 1-6%
 * of the follow plans' times (11% for one TF32 shape), plan_cost() within
 * 2-41% of the usual plans' (it does not see the multiply wait for the
 * first block and op(B)). So a follow plan is taken up to 2% dearer than
 * the usual one (FOLLOW_GAIN 1.02, was 0.95): of 15 shapes that this
 * turned to it, 14 ran faster by 1-15% (DGEMM 8343x2941x38757 TT row-major
 * beta 0.5: 92.3 -> 78.2 ms; DGEMM 1083x7359x78299 TT beta 0.5: 120 ->
 * 103), one TF32 SGEMM 6753x221x107695 slower by 2% (54.6 -> 55.9). Of 9
 * shapes above it (1.02-1.17), 5 ran slower in the follow plan by 2-10%,
 * 4 faster by 1-16% (SGEMM 2519x4619x49745 at 1.06: 9% faster; ZGEMM
 * 5255x943x48769 at 1.054: 5% slower).
 * Returns 1 and the plan and its cost when one fits. */
#define FOLLOW_GAIN 1.02

static int follow_plan(const ctx_t *c0, int complex_type, double fpb, ooc_plan_t *p, double *cost)
{
    if (c0->m > MAX_AUTO_BLOCK_ROWS || c0->sa || c0->sb) return 0; /* (one device: plan_make()) */
    double e = (double)c0->e, m = (double)c0->m, n = (double)c0->n, k = (double)c0->k;
    double math = (complex_type ? 8.0 : 2.0) * m * n * k / (fpb > 0 ? fpb : FLOP_PER_BYTE);
    int found = 0;
    for (int q = 8; q >= 4; q /= 2) {
        int64_t kc = ceil_div(c0->k, q);
        if (kc < MIN_PIECE_DEPTH || kc * (int64_t)c0->e < LONG_LINE_BYTES) continue;
        ctx_t c = *c0;
        c.q = c.q_req = q;
        c.ring = 2; /* one block: a second C slot is all the ring needs */
        c.tail = 1;
        if (!fits(&c, c.m, c.n, c.k)) continue;
        /* a piece's lines: parts of op(B)'s columns, of A's rows when A's rows are its lines */
        double fb = c.lines & OOC_PLAN_B_ROWS ? 1.0 : strided_cost(kc * (int64_t)c.e, 0);
        double fa = c.lines & OOC_PLAN_STRIDED_A ? 1.0 : strided_cost(kc * (int64_t)c.e, 0);
        double in_ab = e * k * (n * fb + m * fa), in_c = c.c_in ? e * m * n : 0.0;
        double first = in_ab / q + in_c, all = in_ab + in_c;
        double t = (all + math / q > first + math ? all + math / q : first + math) + e * m * n;
        if (!found || t < *cost) {
            fill_plan(&c, c.m, c.n, c.k, p); /* (one block in pieces: b_follow) */
            *cost = t;
            found = 1;
        }
    }
    return found;
}

/* Costs closer than this (or 2%) are a tie: ~1 ms of copies on an H200; a
 * small problem keeps the smaller resident operand. */
#define COST_MARGIN ((double)(64 << 20))

/* The transposed problem C^T = op(B)^T op(A)^T: op(A) resident. */
static ctx_t swapped(const ctx_t *c)
{
    ctx_t s = *c;
    s.m = c->n;
    s.n = c->m;
    s.sa = c->sb;
    s.sb = c->sa;
    s.lines = c->lines_t;
    s.lines_t = c->lines;
    s.th_chunk = c->th_chunk_t;
    s.th_chunk_t = c->th_chunk;
    s.btr = c->btr_t;
    s.btr_t = c->btr;
    return s;
}

/* When the device budget is tight, a ring of 2 instead of 3 leaves room
 * for wider panels (less traffic) or longer blocks. Taken (unless a ring was
 * asked for) when the ring of 3 would move over 10% more than the least
 * (PERFORMANCE.md's traffic floor), or would hold the blocks below their
 * target with short copy lines (mb x e under 32 KiB) that the ring of 2
 * lengthens at the same traffic: S1 with a 1 GiB budget on an H200, 672 ->
 * 992 rows, 1.14 -> 0.87 s. */
#define SHORT_LINE_BYTES ((int64_t)32 << 10)

static int plan_best(const ctx_t *c, int64_t mb_target, int ring_given, uint64_t least, ooc_plan_t *p)
{
    int have = plan_one(c, mb_target, p);
    if (ring_given || c->ring <= 2) return have;
    ctx_t two = *c;
    two.ring = 2;
    ooc_plan_t q;
    if (!plan_one(&two, mb_target, &q)) return have;
    if (!have) {
        *p = q;
        return 1;
    }
    int too_much = least != UINT64_MAX && (double)p->traffic_bytes > 1.1 * (double)least;
    int short_lines = p->mb < mb_target && p->mb * (int64_t)c->e < SHORT_LINE_BYTES;
    if ((too_much && q.traffic_bytes < p->traffic_bytes) ||
        (short_lines && q.traffic_bytes <= p->traffic_bytes && q.mb > p->mb))
        *p = q;
    return 1;
}

/* Op(A)'s blocks in q k-pieces (pieces take less room, so the block gets
 * at least the rows it had whole): taken into *cq and *mb when the block
 * then has at least `least` rows. */
static int take_pieces(const ctx_t *c, int q, int64_t mbf, int64_t mb_target, int64_t nb, int64_t kb, int64_t least,
                       ctx_t *cq, int64_t *mb)
{
    ctx_t t = *c;
    t.q = q;
    int64_t mq = largest(&t, 0, mbf, mb_target, 0, nb, kb);
    if (mq == 0 || mq < least) return 0;
    *cq = t;
    *mb = mq;
    return 1;
}

static int plan_one(const ctx_t *c, int64_t mb_target, ooc_plan_t *p)
{
    int64_t m = c->m, n = c->n, k = c->k;
    int64_t nmax = min64(n, OOC_PLAN_MAX_DIM);
    int64_t floors[3] = {min64(min64(m, MIN_BLOCK_ROWS), mb_target), min64(m, 64), 1};

    /* Try op(B) in 1, 2, 4, ... row panels; for each, the widest column
     * panel that fits beside a ring of small blocks. Keep the plan that moves
     * the fewest bytes (the fewest row panels on a tie). */
    int64_t mb = 0, nb = 0, kb = 0, mbf = 0;
    uint64_t best = UINT64_MAX;
    for (int64_t parts = 1;; parts *= 2) {
        int64_t kb_try = ceil_div(k, parts);
        if (kb_try <= OOC_PLAN_MAX_DIM) {
            for (int f = 0; f < 3; f++) {
                int64_t nb_try = largest(c, 1, 1, nmax, floors[f], 0, kb_try);
                if (nb_try == 0) continue;
                nb_try = even_split(n, nb_try);
                uint64_t t = traffic(c, nb_try, kb_try);
                if (t < best || nb == 0) { /* traffic() saturates: a huge shape still plans */
                    best = t;
                    nb = nb_try;
                    kb = kb_try;
                    mbf = floors[f];
                }
                break;
            }
        }
        if (kb_try == 1 || (nb == n && kb == k)) break; /* nothing moves less than B whole */
    }
    if (nb == 0) return 0;
    /* then the largest block rows that fit beside that panel */
    mb = largest(c, 0, mbf, mb_target, 0, nb, kb);
    if (mb == 0) return 0;
    ctx_t cq = *c;
    if (c->q_req == 0 && mb < mb_target && mb * (int64_t)c->e < LONG_LINE_BYTES) {
        /* short copy lines because A's block is deep: in k-pieces it takes
         * less room, and the block more rows, at the same traffic. The
         * fewest pieces that bring the lines to LONG_LINE_BYTES (or the
         * block to its target), none if no count of pieces does */
        int64_t want = min64(mb_target, ceil_div(LONG_LINE_BYTES, (int64_t)c->e));
        for (int q = 2; q <= OOC_PLAN_MAX_A_PIECES && ceil_div(kb, q) >= MIN_PIECE_DEPTH; q *= 2)
            if (take_pieces(c, q, mbf, mb_target, nb, kb, want, &cq, &mb)) break;
    }
    /* wide lines in k-pieces (wide_pieces()), as many as op(B)'s panel
     * depth allows (pieces take less room: at least mb rows) */
    int qw = deep_pieces(c->q_wide, kb);
    if (qw > 1 && cq.q == 1) take_pieces(c, qw, mbf, mb_target, nb, kb, mb, &cq, &mb);
    if (c->q_req == 0 && cq.q == 1 && out_bound_pieces(c, mb) && deep_pieces(2, kb) == 2)
        take_pieces(c, 2, mbf, mb_target, nb, kb, mb, &cq, &mb);
    mb = align_rows(mb, m, mb < mb_target);

    fill_plan(&cq, mb, nb, kb, p);
    return 1;
}

static int bad_input(const ooc_plan_input_t *in)
{
    return in == NULL || in->m <= 0 || in->n <= 0 || in->k <= 0 || in->elem == 0 ||
           (in->ring != 0 && (in->ring < 2 || in->ring > OOC_PLAN_MAX_RING)) || (in->streams != 0 && in->streams < 3) || in->block_rows < 0;
}

static ctx_t make_ctx(const ooc_plan_input_t *in)
{
    ctx_t c = {in->m, in->n, in->k, in->elem, in->beta_nonzero != 0, in->stage_a != 0,
               in->stage_b != 0, in->stage_c != 0, in->ring ? in->ring : DEFAULT_RING,
               in->device_budget, in->host_budget, in->tail, in->b_chunks, in->devices > 1 ? in->devices : 1, 0,
               in->a_pieces > 1 ? in->a_pieces : 1, in->a_pieces, 0, in->lines[0], in->lines[1],
               in->slack0, in->slack_ring, 0, 0, 0, 0, 0, 0, in->pad_lines != 0,
               in->b_transpose[0] != 0, in->b_transpose[1] != 0};
    int bufs = in->through_bufs;
    if (in->through_chunk && bufs >= 1 && bufs <= OOC_PLAN_MAX_THROUGH_BUFS) {
        c.th_bufs = bufs;
        c.th_chunk = in->through_ok[0] ? in->through_chunk : 0;
        c.th_chunk_t = in->through_ok[1] ? in->through_chunk : 0;
        c.th_cin = in->through_cin_ok ? in->through_chunk : 0;
        c.th_out = in->through_out_ok ? in->through_chunk : 0;
    }
    return c;
}

/* The plan's least traffic (the least of the orientations allowed: least0
 * with op(B) resident, least1 with op(A), UINT64_MAX for one not allowed or
 * with no plan), and the same with the resident operand uploaded from the
 * host to each of `devices` devices; neither above what the plan moves. */
static void set_least(ooc_plan_t *p, const ooc_plan_input_t *in, uint64_t least0, uint64_t least1)
{
    uint64_t more = in->devices > 1 ? (uint64_t)(in->devices - 1) : 0, e = in->elem, k = (uint64_t)in->k;
    uint64_t each0 = addu(least0, mulu(more, mulu(e, mulu(k, (uint64_t)in->n))));
    uint64_t each1 = addu(least1, mulu(more, mulu(e, mulu(k, (uint64_t)in->m))));
    uint64_t least = least0 < least1 ? least0 : least1, each = each0 < each1 ? each0 : each1;
    uint64_t moved_each = addu(p->traffic_bytes, mulu(more, mulu(e, mulu(k, (uint64_t)p->n))));
    p->least_traffic_bytes = least < p->traffic_bytes ? least : p->traffic_bytes;
    p->least_traffic_each_bytes = each < moved_each ? each : moved_each;
}

/* The input with staged C through the ring's slots both ways: where C's
 * cache-sized buffers do not fit the staging budget (a small budget: a
 * block's slot of C may take less than the buffers), the plan is made
 * without them. What a block computes is the same either way. */
static ooc_plan_input_t without_c(const ooc_plan_input_t *in)
{
    ooc_plan_input_t x = *in;
    x.through_cin_ok = x.through_out_ok = 0;
    return x;
}

static int c_through(const ooc_plan_input_t *in) { return in->through_cin_ok || in->through_out_ok; }

static ooc_status_t plan_fixed(const ooc_plan_input_t *in, const ooc_plan_t *want, ooc_plan_t *plan);

ooc_status_t ooc_plan_fixed(const ooc_plan_input_t *in, const ooc_plan_t *want, ooc_plan_t *plan)
{
    ooc_status_t st = plan_fixed(in, want, plan);
    if (st != OOC_ERR_BUDGET_TOO_SMALL || !c_through(in)) return st;
    ooc_plan_input_t x = without_c(in);
    return plan_fixed(&x, want, plan);
}

static ooc_status_t plan_fixed(const ooc_plan_input_t *in, const ooc_plan_t *want, ooc_plan_t *plan)
{
    if (bad_input(in) || want == NULL || plan == NULL) return OOC_ERR_INTERNAL;
    int swap = want->swap;
    int64_t mb = want->mb, nb = want->nb, kb = want->kb;
    if (swap != 0 && swap != 1) return OOC_ERR_INTERNAL;
    if (want->tail < 0 || want->tail > 6 || want->b_chunks < 1 || want->b_chunks > OOC_MAX_B_CHUNKS ||
        want->tail_rep < 1 || want->tail_rep > OOC_PLAN_MAX_TAIL_REP || want->a_pieces < 1 ||
        want->a_pieces > OOC_PLAN_MAX_A_PIECES || want->a_pieces > kb)
        return OOC_ERR_INTERNAL;
    ctx_t c = make_ctx(in);
    c.tail = want->tail + 1; /* exactly that tail and those chunks, unless they cannot be (checked below) */
    c.b_chunks = want->b_chunks;
    c.lead = want->lead;
    c.tail_rep = want->tail_rep;
    c.q = c.q_req = want->a_pieces;
    if (swap) c = swapped(&c);
    if (mb < 1 || mb > c.m || mb > OOC_PLAN_MAX_DIM || nb < 1 || nb > c.n || nb > OOC_PLAN_MAX_DIM ||
        kb < 1 || kb > c.k || kb > OOC_PLAN_MAX_DIM)
        return OOC_ERR_INTERNAL;
    /* the ring is not part of what a block computes: a plan made with a ring
     * of 2 (short lines, plan_best) is taken with 2 when 3 does not fit */
    if (!fits(&c, mb, nb, kb) && in->ring == 0) c.ring = 2;
    if (!fits(&c, mb, nb, kb)) return OOC_ERR_BUDGET_TOO_SMALL;
    ooc_plan_t p;
    fill_plan(&c, mb, nb, kb, &p);
    if (p.tail != want->tail || p.b_chunks != want->b_chunks || p.lead != want->lead ||
        p.tail_rep != want->tail_rep || p.a_pieces != want->a_pieces)
        return OOC_ERR_INTERNAL;
    p.swap = swap;
    p.b_follow = p.b_follow && in->devices <= 1; /* (as plan_make: want's lead is clamped to the blocks) */
    p.streams = in->streams ? in->streams : DEFAULT_STREAMS;
    ctx_t o = make_ctx(in);
    uint64_t lt = UINT64_MAX;
    if (in->allow_swap || swap) {
        ctx_t t = swapped(&o);
        lt = least_traffic(&t);
    }
    set_least(&p, in, least_traffic(&o), lt);
    if (ooc_plan_check(&p) != OOC_SUCCESS) return OOC_ERR_INTERNAL;
    *plan = p;
    return OOC_SUCCESS;
}

/* The least need_t of a plan of one row and one column: plan_one() finds a
 * plan when one fits at any depth it tries (op(B) in 1, 2, 4, ... row
 * panels). Deeper is not always larger: with A in k-pieces a deeper panel
 * has fewer A slots than a ring of blocks. Least device bytes, then least
 * pinned bytes. */
static need_t least_need(const ctx_t *c)
{
    need_t best = {0};
    int have = 0;
    for (int64_t parts = 1;; parts *= 2) {
        int64_t kb = ceil_div(c->k, parts);
        if (kb <= OOC_PLAN_MAX_DIM) {
            need_t r = need(c, 1, 1, kb);
            if (!have || r.dev < best.dev || (r.dev == best.dev && r.host < best.host)) best = r;
            have = 1;
        }
        if (kb == 1) break;
    }
    return best;
}

static void plan_least_need(const ooc_plan_input_t *in, const ooc_plan_t *want, uint64_t *dev, uint64_t *host);

void ooc_plan_least_need(const ooc_plan_input_t *in, const ooc_plan_t *want, uint64_t *dev, uint64_t *host)
{
    plan_least_need(in, want, dev, host);
    if (!c_through(in)) return;
    ooc_plan_input_t x = without_c(in);
    uint64_t d, h;
    plan_least_need(&x, want, &d, &h);
    if (d < *dev || (d == *dev && h < *host)) *dev = d, *host = h;
}

static void plan_least_need(const ooc_plan_input_t *in, const ooc_plan_t *want, uint64_t *dev, uint64_t *host)
{
    ctx_t c = make_ctx(in);
    if (in->ring == 0) c.ring = 2; /* both planners fall back to a ring of 2 */
    need_t r;
    if (want) {
        c.q = c.q_req = want->a_pieces;
        if (want->swap) c = swapped(&c);
        r = need(&c, want->mb, want->nb, want->kb);
    } else {
        r = least_need(&c);
        if (in->allow_swap) {
            ctx_t s = swapped(&c);
            need_t t = least_need(&s);
            if (t.dev < r.dev || (t.dev == r.dev && t.host < r.host)) r = t;
        }
    }
    uint64_t sl = slack(&c);
    *dev = addu(r.dev, sl);
    *host = r.host ? addu(r.host, sl) : 0;
}

static ooc_status_t plan_make(const ooc_plan_input_t *in, ooc_plan_t *plan);

ooc_status_t ooc_plan_make(const ooc_plan_input_t *in, ooc_plan_t *plan)
{
    ooc_status_t st = plan_make(in, plan);
    if (st != OOC_ERR_BUDGET_TOO_SMALL || !c_through(in)) return st;
    ooc_plan_input_t x = without_c(in);
    return plan_make(&x, plan);
}

static ooc_status_t plan_make(const ooc_plan_input_t *in, ooc_plan_t *plan)
{
    if (bad_input(in) || plan == NULL) return OOC_ERR_INTERNAL;

    ctx_t o[2];
    o[0] = make_ctx(in);
    int streams = in->streams ? in->streams : DEFAULT_STREAMS;

    ooc_plan_t best, alt;
    int cplx = in->complex_type != 0;
    int64_t target[2];
    uint64_t least[2] = {UINT64_MAX, UINT64_MAX};
    for (int w = 0; w < (in->allow_swap ? 2 : 1); w++) {
        if (w) o[1] = swapped(&o[0]);
        o[w].out_bound = out_bound_shape(&o[w], cplx, in->flop_per_byte);
        target[w] = in->block_rows ? min64(in->block_rows, o[w].m) : auto_block_rows(&o[w], cplx, in->flop_per_byte);
        least[w] = least_traffic(&o[w]);
    }
    int have = plan_best(&o[0], target[0], in->ring != 0, least[0], &best);
    best.swap = 0;
    if (in->allow_swap && plan_best(&o[1], target[1], in->ring != 0, least[1], &alt)) {
        alt.swap = 1;
        /* fewer bytes moved wins; on a tie, the clearly lower cost
         * (plan_cost(): the resident operand's upload, and copy lines),
         * else the smaller resident operand */
        double cb = have ? plan_cost(&best, &o[0], cplx, in->flop_per_byte) : 0;
        double ca = plan_cost(&alt, &o[1], cplx, in->flop_per_byte);
        double margin = cb / 50 > COST_MARGIN ? cb / 50 : COST_MARGIN;
        if (!have || alt.traffic_bytes < best.traffic_bytes ||
            (alt.traffic_bytes == best.traffic_bytes &&
             (ca + margin < cb || (!(cb + margin < ca) && alt.dev_b_bytes < best.dev_b_bytes)))) {
            best = alt;
            have = 1;
        }
    }
    if (!have) return OOC_ERR_BUDGET_TOO_SMALL;
    /* the orientation chosen, its blocks lengthened to wide lines in
     * k-pieces where that pays (wide_pieces()); the choice of orientation
     * is left as it was (SGEMM 25315x1591x3247 NT beta -1 would turn to
     * strided blocks of 8192 rows in 2 pieces: 12.0 -> 12.5 ms on an H200) */
    int w = best.swap;
    int64_t wide = target[w];
    o[w].q_wide = in->block_rows ? 1 : wide_pieces(&o[w], cplx, in->flop_per_byte, &wide);
    if (o[w].q_wide > 1 && plan_best(&o[w], wide, in->ring != 0, least[w], &alt) &&
        alt.traffic_bytes <= best.traffic_bytes) {
        alt.swap = w;
        best = alt;
    }
    /* few rows and op(B) whole: all the rows in one block, op(B) going up
     * with its pieces, where that costs clearly less (follow_plan()) */
    /* (not when anything is asked for, on several devices, nor when every block of the usual plan is a
     * lead block, multiplied chunk by chunk as op(B) arrives: it hides the upload already; plan_cost()
     * does not see that. DGEMM 939x19145x17037 TT, one block of 939 rows: 54.4 ms so, 56.0 in 4 pieces) */
    int may_follow = !in->block_rows && !in->a_pieces && !in->ring && !in->b_chunks && in->devices <= 1 &&
                     !(best.m_blocks <= best.lead && best.a_pieces == 1 && best.b_chunks > 1);
    for (int v = 0; may_follow && v < (in->allow_swap ? 2 : 1); v++) {
        /* (against the plan kept so far by plan_cost(): when both orientations' follow plans pass, the
         * second, op(A) resident, is taken, plan_cost() weighing the first as a usual plan, which its
         * follow plan beats. That is the choice measured on an H200 (session 37); which orientation of
         * the two follow plans is faster was not) */
        double cb = plan_cost(&best, &o[best.swap], cplx, in->flop_per_byte), ck;
        if (follow_plan(&o[v], cplx, in->flop_per_byte, &alt, &ck) && ck < FOLLOW_GAIN * cb &&
            alt.traffic_bytes <= best.traffic_bytes) {
            alt.swap = v;
            best = alt;
        }
    }
    /* blocks of a shape bound by the copies in lengthened to 64 KiB lines,
     * whole (in_bound_rows()), in the orientation chosen */
    if (!in->block_rows && !best.b_follow && best.a_pieces == 1 && best.m_blocks > 1) {
        ctx_t cw = o[best.swap];
        cw.q_wide = 1;
        int64_t rows = in_bound_rows(&cw, best.mb, cplx, in->flop_per_byte);
        /* (the rows whole: a budget that holds them to lines of 34-50 KiB
         * would give fewer blocks at no better rate; not measured) */
        if (rows > best.mb && plan_best(&cw, rows, in->ring != 0, least[best.swap], &alt) && alt.mb == rows &&
            alt.a_pieces == 1 && alt.traffic_bytes <= best.traffic_bytes) {
            alt.swap = best.swap;
            best = alt;
        }
    }
    best.streams = streams;
    set_least(&best, in, least[0], least[1]);
    if (ooc_plan_check(&best) != OOC_SUCCESS) return OOC_ERR_INTERNAL;
    *plan = best;
    return OOC_SUCCESS;
}

int ooc_plan_useful(const ooc_plan_t *plan, int64_t m, int64_t n, int64_t k)
{
    double tiles = (double)plan->m_blocks * (double)plan->n_panels * (double)plan->k_panels;
    return tiles <= (double)OOC_PLAN_USEFUL_TILES || (double)m * (double)n * (double)k / tiles >= OOC_PLAN_USEFUL_VOLUME;
}

static uint64_t twice(uint64_t x) { return x > UINT64_MAX / 2 ? UINT64_MAX : 2 * x; }

static int useful_at(const ooc_plan_input_t *in, uint64_t dev, uint64_t host)
{
    ooc_plan_input_t x = *in;
    x.device_budget = dev;
    x.host_budget = host;
    ooc_plan_t p;
    return ooc_plan_make(&x, &p) == OOC_SUCCESS && ooc_plan_useful(&p, in->m, in->n, in->k);
}

static void least_useful(const ooc_plan_input_t *in, int passes, uint64_t *dev, uint64_t *host)
{
    *dev = *host = 0;
    /* the device budget alone, then the staging alone, then both: doubled
     * until useful, then bisected (both at once, within 1 part in 10^6) */
    for (int pass = 0; pass < passes; pass++) {
        int grow_dev = pass != 1, grow_host = pass != 0;
        uint64_t lo_d = in->device_budget, lo_h = in->host_budget, hi_d = lo_d, hi_h = lo_h;
        int ok = 0;
        while (!(ok = useful_at(in, hi_d, hi_h)) && (grow_dev ? hi_d : hi_h) < UINT64_MAX) {
            lo_d = hi_d, lo_h = hi_h;
            if (grow_dev) hi_d = twice(hi_d ? hi_d : 1);
            if (grow_host) hi_h = twice(hi_h ? hi_h : 1);
        }
        if (!ok) continue;
        for (int i = 0; i < 20 && (hi_d - lo_d > 1 || hi_h - lo_h > 1); i++) {
            uint64_t mid_d = lo_d + (hi_d - lo_d) / 2, mid_h = lo_h + (hi_h - lo_h) / 2;
            if (useful_at(in, mid_d, mid_h)) hi_d = mid_d, hi_h = mid_h;
            else lo_d = mid_d, lo_h = mid_h;
        }
        *dev = hi_d;
        *host = hi_h;
        return;
    }
}

void ooc_plan_least_useful(const ooc_plan_input_t *in, uint64_t *dev, uint64_t *host)
{
    least_useful(in, 3, dev, host);
}

void ooc_plan_least_useful_alone(const ooc_plan_input_t *in, uint64_t *dev, uint64_t *host)
{
    least_useful(in, 2, dev, host);
}
