/* SPDX-License-Identifier: MIT */
/*
 * pipeline.h: runs a plan on one device through the backend ops table.
 * Knows nothing about which backend it drives, and nothing of the public
 * argument checks (done by gemm.c before it gets here).
 */
#ifndef OOC_PIPELINE_H
#define OOC_PIPELINE_H

#include <stdatomic.h>
#include <stdint.h>

#include "backend.h"
#include "plan.h"
#include "stage.h"
#include "trace.h"

#define OOC_MAX_RING OOC_PLAN_MAX_RING
#define OOC_MAX_STREAMS 8

/* Where an operand's elements are: host memory (fd < 0) or a file. */
typedef struct {
    const void *ptr;   /* memory: element 0 */
    int fd;            /* file: descriptor, else -1 */
    uint64_t off;      /* file: byte offset of element 0 */
    const char *name;  /* for messages ("A", or the file's path) */
    int64_t ld;
    int pinned;        /* memory the backend copies in place; else staged */
} ooc_src_t;

/* A checked, non-degenerate problem (m, n, k > 0, alpha != 0), in the
 * orientation the plan chose. C0 (beta != 0) is read from c_in, which is C
 * itself for in-memory multiplies. */
typedef struct {
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    int64_t m, n, k;
    const void *alpha, *beta; /* one element of dtype each */
    int beta_zero;
    ooc_src_t A, B, C, c_in;
} ooc_problem_t;

/* The same product as its transpose, C^T = op(B)^T op(A)^T, on the same
 * memory: the other layout, A and B (and m and n, and the ops) swapped. */
void ooc_problem_transpose(ooc_problem_t *p);

/* Buffers, streams and events the pipeline reuses across calls (owned by the
 * handle; grown before a run, never inside it). */
typedef struct {
    void *dev;
    size_t dev_bytes;
    void *pin;
    size_t pin_bytes;
    ooc_stream_t streams[OOC_MAX_STREAMS];
    int nstreams;
    ooc_event_t events[3 * OOC_MAX_RING + OOC_MAX_B_CHUNKS]; /* 3 per slot, 1 per chunk of op(B) */
    int nevents;
} ooc_res_t;

/* Bytes of alignment padding the arenas need beyond the plan's byte counts. */
uint64_t ooc_res_slack(int ring);

/* Make res hold what plan needs (allocating or growing only here). */
ooc_status_t ooc_res_reserve(ooc_be_t *be, ooc_res_t *res, const ooc_plan_t *plan, ooc_err_t *err);
/* Free everything res holds (after all work on it completed). */
void ooc_res_release(ooc_be_t *be, ooc_res_t *res);

typedef struct {
    uint64_t bytes_h2d, bytes_d2h;     /* over the bus */
    uint64_t bytes_staged_in, bytes_staged_out; /* through the pinned ring (memcpy or file I/O) */
    int traced;
    ooc_trace_summary_t trace;         /* when traced */
    ooc_status_t trace_status;         /* writing the trace file: a failure never fails the multiply */
    char trace_error[256];
} ooc_pipe_stats_t;

/* Blocks are numbered in the order they complete: g = (k_panel * n_panels +
 * n_panel) * m_blocks + block. A run may start at block `start` (resuming):
 * blocks before it are taken as done. After block g of a staged C is written,
 * block_done(user, g, stats so far, err) is called from the writer thread; a
 * failure it returns stops the run. When *cancel becomes non-zero no further
 * block is started and the run ends with OOC_ERR_CANCELLED.
 *
 * Every block is computed the same way whichever run computes it: block 0 of
 * a panel is multiplied chunk by chunk of op(B) as the chunks arrive (b_chunks
 * of the plan), every other block in one multiply, whatever block a run
 * starts at. A resumed run therefore writes byte-identical blocks. */
typedef struct {
    int64_t start;
    ooc_status_t (*block_done)(void *user, int64_t g, const ooc_pipe_stats_t *so_far, ooc_err_t *err);
    void *user;
    const atomic_int *cancel; /* NULL: cannot be cancelled */
    int trace;              /* time every op (trace.h) */
    const char *trace_path; /* and write the timeline there (NULL: summary only) */
} ooc_pipe_hooks_t;

/* Run problem p with plan pl. pool may be NULL when nothing is staged; hooks
 * may be NULL. Returns when every result is in C (or after a failure, when
 * every queued operation has finished, so the caller may free or reuse the
 * buffers). */
ooc_status_t ooc_pipeline_run(ooc_be_t *be, ooc_res_t *res, ooc_pool_t *pool,
                              const ooc_problem_t *p, const ooc_plan_t *pl,
                              const ooc_pipe_hooks_t *hooks, ooc_pipe_stats_t *stats, ooc_err_t *err);

#endif
