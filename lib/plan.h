/* SPDX-License-Identifier: MIT */
/*
 * plan.h: the planner's contract. A plan is a pure function of the problem's
 * shape, element size and memory budgets: no CUDA, no allocation, no I/O, so
 * it is unit-tested without a GPU (tests/test_plan.c).
 *
 * The pipeline computes C (m x n) one row block at a time: op(B) (k x n) is
 * resident on the device as panels of kb x nb; row blocks of op(A) (mb x kb)
 * and of C (mb x nb) stream through a ring of `ring` device slots. When op(B)
 * does not fit, its columns are split into n-panels (A is streamed once per
 * panel) and, only if one column of it does not fit, its rows into k-panels
 * (C is read back and accumulated with beta = 1 after the first). When the
 * budget would hold blocks to short copy lines, op(A)'s block may go to the
 * device in k-pieces (a_pieces): its slots then hold one piece, and the
 * block is multiplied piece after piece into C (beta, then 1), which lets
 * the block have more rows in the same memory.
 */
#ifndef OOC_PLAN_H
#define OOC_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ooc_gemm.h"

typedef struct {
    int64_t m, n, k;          /* C is m x n, op(A) m x k, op(B) k x n; all > 0 */
    size_t elem;              /* bytes per element */
    int beta_nonzero;         /* C's blocks are read in */
    int stage_a, stage_b, stage_c; /* operand is pageable: goes through pinned staging */
    uint64_t device_budget;   /* bytes of device memory the plan may use */
    uint64_t host_budget;     /* bytes of pinned staging the plan may use */
    int64_t block_rows;       /* requested rows per block (upper bound), 0: choose */
    int ring;                 /* device slots, 0: choose (>= 2 otherwise) */
    int streams;              /* streams, 0: choose (>= 2 otherwise) */
    int allow_swap;           /* may the planner keep op(A) resident instead (transpose the problem)? */
    int tail;                 /* shrinking last blocks: 0 choose, 1 none, t+1: t of them */
    int b_chunks;             /* chunks of op(B)'s upload: 0 choose, else that many (at most 8) */
    int complex_type;         /* elements are complex (8 flops per multiply-add) */
    int devices;              /* devices sharing the row blocks (0 or 1: one) */
    double flop_per_byte;     /* in-core rate / copy bandwidth of the math used (0: 1000, a DGEMM's on
                               * an H100/H200; TF32 about 7000): how much multiply a copied byte buys */
    int a_pieces;             /* k-pieces of op(A)'s block: 0 choose, 1 none, else that many */
    int lines[2];             /* how the copied rectangles lie, per orientation (0: op(B) resident, 1:
                               * op(A) resident, the problem transposed): OOC_PLAN_STRIDED_A and
                               * OOC_PLAN_STRIDED_C when the streamed operand's or C's blocks are
                               * copied in place (pinned) as short lines far apart (a block's rows of
                               * a matrix whose columns are contiguous; staged operands are packed into
                               * the pinned slots), OOC_PLAN_B_ROWS when the resident operand's lines
                               * are its rows (its chunks split k, not n), OOC_PLAN_FILE_LINES_A and
                               * OOC_PLAN_FILE_LINES_C when the streamed operand's or C's file is read
                               * or written a block's row of each line at a time */
    uint64_t slack0, slack_ring; /* what aligning the buffers may add to a plan with a ring of R, in device
                               * memory and in staging (when there is any): slack0 + R slack_ring bytes
                               * within the budgets (pipeline.h ooc_res_slack()) */
    uint64_t through_chunk;   /* a staged streamed operand in memory goes to the device through
                               * through_bufs pinned buffers of this many bytes (a multiple of 4096)
                               * that stay in the CPU's cache, not through the ring's slots; 0: never */
    int through_bufs;         /* (1 .. OOC_PLAN_MAX_THROUGH_BUFS when through_chunk is set) */
    int through_ok[2];        /* per orientation (as lines[]): the streamed operand, when staged, is in
                               * memory (a file's is read into the ring) */
    int through_cin_ok;       /* C's blocks read in, when staged, go up through through_bufs buffers of
                               * through_chunk bytes (the streamed operand's, when it goes that way too),
                               * not the ring's in-slots (C0 and C are in memory, not refused) */
    int through_out_ok;       /* C, when staged, comes out through through_bufs buffers of through_chunk
                               * bytes, not the ring's out-slots (C is in memory and that was not refused) */
    int pad_lines;            /* the tiles' lines on device pitches of 16 bytes and op(B)'s chunks and A's
                               * k-pieces starting at multiples of 8 elements (plan.pad_lines): cuBLAS runs
                               * faster on columns 16-byte aligned (TF32; DGEMM but its NT pair:
                               * backend.h ooc_tiles_aligned; that pair where b_transpose says) */
    int b_transpose[2];       /* per orientation (as lines[]): the resident operand lies transposed on the
                               * device, its tiles padded whatever pad_lines says (backend.h
                               * ooc_resident_transposed: DGEMM of cuBLAS's pair NT where op(B) is its
                               * second operand); op(B)'s lines as stored are then its rows */
} ooc_plan_input_t;

#define OOC_PLAN_STRIDED_A 1
#define OOC_PLAN_STRIDED_C 2
#define OOC_PLAN_B_ROWS 4
#define OOC_PLAN_FILE_LINES_A 8
#define OOC_PLAN_FILE_LINES_C 16

typedef struct {
    int swap;                 /* 1: solve C^T = op(B)^T op(A)^T; m/n, A/B swapped below */
    int64_t m, n, k;          /* the problem as planned (after swap) */
    int64_t mb, nb, kb;       /* block rows (the most a block has), panel columns, panel depth */
    int64_t m_blocks, n_panels, k_panels;
    int tail;                 /* the tail shrinks in `tail` steps: mb/2, mb/4, ... (a shorter drain) */
    int tail_rep;             /* blocks of each tail size (one per device; 1 when tail is 0): the
                               * last tail * tail_rep blocks are tail_rep x mb/2, tail_rep x mb/4, ... */
    int b_chunks;             /* op(B)'s panel is uploaded in this many chunks, the first `lead`
                               * blocks multiplied chunk by chunk as they arrive. With a_pieces > 1
                               * (a first piece needs all of op(B), chunks or not): every block's
                               * last piece is multiplied in this many chunks of C's columns, each
                               * going out once multiplied */
    int lead;                 /* blocks 0 .. lead-1 of every panel are multiplied chunk by chunk of
                               * op(B) (when b_chunks > 1 and a_pieces == 1), whichever device
                               * computes them: one per device, so that every device's first
                               * multiply hides its upload */
    int a_pieces;             /* op(A)'s block goes up in this many k-pieces (rows [kb p / q, kb (p+1) / q)
                               * of the panel's depth), multiplied one after another into C; its device
                               * slots hold one piece. 1: whole */
    int b_follow;             /* one block (m_blocks 1) in k-pieces, on one device: op(B)'s panel goes
                               * up piece by piece of its depth, each piece's rows right before the
                               * block's piece of A, whose multiply waits only for them (the pipeline,
                               * when op(B) is pinned; else whole first). A schedule: what the block
                               * computes is the same either way */
    int pad_lines;            /* as the input's: each device tile's line pitch is its width rounded up to
                               * 16 bytes (device_bytes counts it), op(B)'s chunks and A's k-pieces start
                               * at multiples of 8 elements where each keeps some (pipeline_int.h) */
    int b_transposed;         /* the input's b_transpose of this orientation (pad_lines then 1): op(B)'s
                               * panel goes up through two device buffers of dev_b_scratch_bytes each
                               * (a piece of its lines, as stored: rows of op(B)) and is transposed from
                               * there into its place, where its lines are its columns; the multiplies
                               * read it so (op N) */
    uint64_t dev_b_scratch_bytes; /* one of those buffers (a multiple of 256 bytes); 0 without */
    int a_slots;              /* device slots for op(A): `ring` (whole blocks), or OOC_PLAN_PIECE_SLOTS
                               * (pieces: a piece is copied in while two are multiplied or waiting) */
    int ring, streams;
    int c_read;               /* some panel reads C in (beta != 0 or k_panels > 1) */
    /* device bytes: resident panel, one A slot, one C slot (ring of them), total */
    uint64_t dev_b_bytes, dev_a_slot_bytes, dev_c_slot_bytes, device_bytes;
    /* pinned staging bytes: one ring slot's in part (A [+ C] or a chunk of B),
     * one slot's out part (C), total */
    uint64_t pin_in_slot_bytes, pin_out_slot_bytes, host_bytes;
    uint64_t through_chunk;   /* staged op(A) (the streamed operand) goes through through_bufs pinned
                               * buffers of this many bytes, chunk after chunk straight to its device
                               * slot, not through the in-slots (pin_in_slot_bytes then holds no A);
                               * 0: it does not (not staged, in k-pieces, from a file, or not asked) */
    int through_bufs;
    uint64_t through_cin_chunk; /* staged C's blocks read in go up the same way, through the same
                               * buffers when op(A) does (through_chunk) else through_cin_bufs of
                               * their own (pin_in_slot_bytes then holds no C); 0: through the in-slots
                               * (or not staged, or not read) */
    int through_cin_bufs;
    uint64_t through_out_chunk; /* staged C comes out chunk after chunk from its device slot into
                               * through_out_bufs pinned buffers of this many bytes, from which the
                               * writer's threads copy it into C (pin_out_slot_bytes is then 0); 0: it
                               * goes through the ring's out-slots (or is not staged) */
    int through_out_bufs;
    uint64_t traffic_bytes;   /* bytes moved over the bus by this plan */
    uint64_t least_traffic_bytes; /* the least bytes any plan of this planner could move within the same
                               * budgets (smallest blocks, ring of 2, either orientation allowed): the
                               * floor's traffic term is this plan's, and it must stay within 10% of it */
    uint64_t least_traffic_each_bytes; /* the same with the resident operand uploaded from the host to each
                               * of the input's devices (its orientation may differ) */
} ooc_plan_t;

#define OOC_MAX_B_CHUNKS 8
/* Most k-pieces of a block of op(A), and the device slots the pieces go round. */
#define OOC_PLAN_MAX_A_PIECES 64
#define OOC_PLAN_PIECE_SLOTS 3
/* Most pinned buffers a staged op(A) goes through (plan.through_bufs). */
#define OOC_PLAN_MAX_THROUGH_BUFS 8
/* Most blocks of one tail size (OOC_MAX_DEVICES). */
#define OOC_PLAN_MAX_TAIL_REP 16
/* Most device slots a plan may have (the pipeline's OOC_MAX_RING). */
#define OOC_PLAN_MAX_RING 16

/* Rows [*r0, *r1) of block i (0 <= i < m_blocks) of the plan. */
void ooc_plan_block(const ooc_plan_t *plan, int64_t i, int64_t *r0, int64_t *r1);

/* Largest value the planner gives any block dimension (cuBLAS takes int). */
#define OOC_PLAN_MAX_DIM ((int64_t)1 << 30)

/* Fill *plan for *in. Returns OOC_SUCCESS, OOC_ERR_INTERNAL (bad input: sizes
 * <= 0, elem 0, ring < 2) or OOC_ERR_BUDGET_TOO_SMALL (nothing fits). *plan
 * is written only on success. */
ooc_status_t ooc_plan_make(const ooc_plan_input_t *in, ooc_plan_t *plan);

/* The plan with the orientation, block rows, panel, tail (and its repeat), op(B) chunks, lead and A pieces of
 * *want (a resumed job must reuse its plan: together they decide which rows
 * each block holds and how it is computed): the same checks and byte counts
 * as ooc_plan_make, OOC_ERR_BUDGET_TOO_SMALL when it does not fit the
 * budgets, OOC_ERR_INTERNAL when those sizes are out of range for the problem
 * or are not a plan the planner makes (a tail too long for mb, say). */
ooc_status_t ooc_plan_fixed(const ooc_plan_input_t *in, const ooc_plan_t *want, ooc_plan_t *plan);

/* The least device bytes and pinned staging bytes (each device's, the
 * buffers' alignment included) with which ooc_plan_fixed(in, want) succeeds, or
 * with want NULL, ooc_plan_make(in): the budgets to ask for when either
 * returned OOC_ERR_BUDGET_TOO_SMALL. */
void ooc_plan_least_need(const ooc_plan_input_t *in, const ooc_plan_t *want, uint64_t *dev, uint64_t *host);

/* A plan useful to run: at most OOC_PLAN_USEFUL_TILES tiles (row blocks
 * times panels), or tiles of OOC_PLAN_USEFUL_VOLUME multiply-adds on average
 * (m n k / tiles). Else the tiles are so many and so small that their
 * overheads (a few copies and a launch each) take the time, hours for a
 * multiply of seconds: a budget too small for the problem, most often one
 * given in the wrong unit (4096 meant as MiB). */
#define OOC_PLAN_USEFUL_TILES ((int64_t)1 << 20)
#define OOC_PLAN_USEFUL_VOLUME ((double)(1 << 24))
int ooc_plan_useful(const ooc_plan_t *plan, int64_t m, int64_t n, int64_t k);

/* The least device budget and pinned staging budget (each device's) with
 * which ooc_plan_make(in) makes a useful plan (ooc_plan_useful): the device
 * budget raised alone when that does, else the staging alone, else both
 * (each doubled from in's until useful, then bisected to 1 part in 10^6);
 * 0 and 0 when none does. */
void ooc_plan_least_useful(const ooc_plan_input_t *in, uint64_t *dev, uint64_t *host);
/* The same, the device budget or the staging budget raised alone (the
 * other as in's); 0 and 0 when neither alone does. */
void ooc_plan_least_useful_alone(const ooc_plan_input_t *in, uint64_t *dev, uint64_t *host);

/* OOC_SUCCESS when the plan is consistent: sizes in range, and its blocks
 * tile rows [0, m) exactly with none empty; else OOC_ERR_INTERNAL. */
ooc_status_t ooc_plan_check(const ooc_plan_t *plan);

#endif
