/* SPDX-License-Identifier: MIT */
/*
 * pipeline.h: runs a plan on one device through the backend ops table,
 * taking its row blocks from a queue it may share with other devices'
 * pipelines (multi.c). Knows nothing about which backend it drives, and
 * nothing of the public argument checks (done by gemm.c before it gets here).
 */
#ifndef OOC_PIPELINE_H
#define OOC_PIPELINE_H

#include <pthread.h>
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
    /* the plan's, + the staging stream of A and C read in through the cache, + the unstaging stream of
     * C out through the cache (pipeline_int.h PIPE_STREAMS) */
    ooc_stream_t streams[OOC_MAX_STREAMS + 2];
    ooc_stream_t urgent;      /* made once a plan transposes op(B) (its transposes), else NULL */
    int nstreams;
    /* at most 6 per slot, 2 per chunk of op(B), 1 per staging and unstaging buffer, 4 for a transposed
     * op(B) (PIPE_EVENTS) */
    ooc_event_t events[6 * OOC_MAX_RING + 2 * OOC_MAX_B_CHUNKS + 2 * OOC_PLAN_MAX_THROUGH_BUFS + 4];
    int nevents;
} ooc_res_t;

/* Bytes of alignment padding the arenas need beyond the plan's byte counts. */
uint64_t ooc_res_slack(int ring);

/* Make res hold what plan needs (allocating, growing or shrinking only
 * here): buffers held already serve it when large enough and within the
 * limits (the budgets given; UINT64_MAX: automatic, keep them), else they
 * are freed and made again of the plan's size. */
ooc_status_t ooc_res_reserve(ooc_be_t *be, ooc_res_t *res, const ooc_plan_t *plan, uint64_t dev_limit,
                             uint64_t pin_limit, ooc_err_t *err);
/* Free everything res holds (after all work on it completed). */
void ooc_res_release(ooc_be_t *be, ooc_res_t *res);

typedef struct {
    uint64_t bytes_h2d, bytes_d2h;     /* over the bus */
    uint64_t bytes_staged_in, bytes_staged_out; /* through the pinned ring (memcpy or file I/O) */
    uint64_t bytes_staged_cached; /* of bytes_staged_in, those through the cache-sized buffers */
    uint64_t bytes_peer;               /* op(B) copied from other devices */
    int64_t blocks;                    /* row blocks this pipeline computed */
    double t_end;                      /* when its last block was done (ooc_now()) */
} ooc_pipe_stats_t;

/* The row blocks of a plan, shared by the pipelines of the devices that run
 * it (lib/multi.c; one device: a queue of one). Blocks are numbered in the
 * order a single device would run them: g = (k_panel * n_panels + n_panel) *
 * m_blocks + block. Each pipeline claims the next block of the current
 * panel that is not done yet; all of them enter a panel together (the next
 * panel overwrites op(B) on each device, and with several k-panels reads C
 * back). A pipeline that fails aborts the queue: the others claim no more
 * blocks, finish those they hold and return. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const ooc_plan_t *pl;
    const unsigned char *done; /* bit g set: block g is in C already (a resume); NULL: none */
    int devices;               /* pipelines taking part */
    int64_t panel;             /* the panel being handed out (-1 before the first) */
    int64_t next;              /* its next block to consider */
    int arrived;               /* pipelines waiting to enter panel + 1 */
    int aborted;
    int needed;                /* the current panel has a block not done (at its entry) */
    /* op(B) shared (share = 1, set before the run): pipeline r uploads the
     * chunks j of each panel with j % devices == r from the host and copies
     * every other chunk from its owner's memory (peer access); all leave a
     * panel together, so that no device overwrites or frees its op(B) while
     * another still copies from it. */
    int share;
    ooc_be_t *be[OOC_MAX_DEVICES];
    char *dB[OOC_MAX_DEVICES];
    ooc_event_t ev_b[OOC_MAX_DEVICES][OOC_MAX_B_CHUNKS];
    int64_t posted[OOC_MAX_B_CHUNKS]; /* the panel whose chunk j its owner has recorded (-1: none) */
    int left;                  /* pipelines that left the current panel */
    int64_t left_panel;        /* the last panel all have left (-1 before) */
} ooc_queue_t;

void ooc_queue_init(ooc_queue_t *q, const ooc_plan_t *pl, const unsigned char *done, int devices);
void ooc_queue_destroy(ooc_queue_t *q);
/* Wait until every pipeline has finished the panels before `panel`; 0 when
 * the queue was aborted meanwhile. */
int ooc_queue_enter(ooc_queue_t *q, int64_t panel);
/* The next block (0 .. m_blocks-1) of `panel` to compute, or -1: none left,
 * or aborted. */
int64_t ooc_queue_claim(ooc_queue_t *q, int64_t panel);
void ooc_queue_abort(ooc_queue_t *q);
/* Shared op(B): pipeline `rank` says where its op(B) and chunk events are
 * (before it posts anything). */
void ooc_queue_register(ooc_queue_t *q, int rank, ooc_be_t *be, char *dB, const ooc_event_t *ev_b);
/* Shared op(B): chunk j's upload for `panel` is recorded in its owner's ev_b[j]. */
void ooc_queue_post(ooc_queue_t *q, int j, int64_t panel);
/* Shared op(B): wait until chunk j of `panel` is posted; its owner's
 * instance, op(B) and event for it. 0 when the queue was aborted. */
int ooc_queue_wait_posted(ooc_queue_t *q, int j, int64_t panel, ooc_be_t **be, char **dB, ooc_event_t *ev);
/* Shared op(B): wait until every pipeline has left `panel`; 0 when aborted. */
int ooc_queue_leave(ooc_queue_t *q, int64_t panel);
/* 1 when block g is marked done in the bit set (NULL: never) */
static inline int ooc_block_done(const unsigned char *done, int64_t g)
{
    return done != NULL && (done[g >> 3] >> (g & 7) & 1);
}

/* After block g of a staged C is written, block_done(user, g, digest, stats
 * so far, err) is called from the writer thread; a failure it returns stops
 * the run. With `digest` set, digest is the digest (digest.h) of the block's
 * bytes as written: its rectangle of C's storage, line after line
 * (ooc_pipe_c_block); else 0.
 * When *cancel becomes non-zero no further block is started and the run
 * ends with OOC_ERR_CANCELLED.
 *
 * Every block is computed the same way whichever device or run computes it:
 * blocks 0 .. lead-1 of a panel are multiplied chunk by chunk of op(B)
 * (b_chunks of the plan) as the chunks arrive, every other block in one
 * multiply; blocks in k-pieces (a_pieces > 1) piece after piece, every
 * block's last piece in b_chunks multiplies of C's columns. A resumed run,
 * or another set of devices, therefore writes byte-identical blocks with the
 * same plan (a fresh plan's lead is one block per device: another number of
 * devices plans other lead blocks, whose bits may differ). */
typedef struct {
    ooc_status_t (*block_done)(void *user, int64_t g, uint64_t digest, const ooc_pipe_stats_t *so_far,
                               ooc_err_t *err);
    void *user;
    const atomic_int *cancel; /* NULL: cannot be cancelled */
    int digest;               /* hash each block written (C in a file only) */
} ooc_pipe_hooks_t;

/* Where block g of problem p's C lies under plan pl (p as the pipeline runs
 * it: transposed when pl->swap): height lines of width bytes, line r at byte
 * off + r * pitch of C's storage (off counts from C's element 0). */
void ooc_pipe_c_block(const ooc_problem_t *p, const ooc_plan_t *pl, int64_t g, uint64_t *off, size_t *pitch,
                      size_t *width, size_t *height);

/* Whether op(B) follows the block's pieces (plan.h b_follow) as the
 * pipeline runs it: only from pinned memory, and not when it is shared
 * between devices. */
static inline int ooc_pipe_b_follows(const ooc_plan_t *pl, int b_pinned, int shared)
{
    return pl->b_follow && b_pinned && !shared;
}

/* Run this device's share of problem p with plan pl: the blocks it claims
 * from queue, where it is pipeline `rank` (0 .. devices-1). pool may be NULL when nothing is staged; hooks may be NULL.
 * With trace non-NULL every op is timed into *trace, which the caller
 * finishes (ooc_trace_finish) after a success; after a failure it is
 * discarded here. Returns when this device's results are in C (or after a
 * failure, when every queued operation has finished, so the caller may free
 * or reuse the buffers); on failure the queue is aborted. */
ooc_status_t ooc_pipeline_run(ooc_be_t *be, ooc_res_t *res, ooc_pool_t *pool,
                              const ooc_problem_t *p, const ooc_plan_t *pl, ooc_queue_t *queue, int rank,
                              const ooc_pipe_hooks_t *hooks, ooc_trace_t *trace, ooc_pipe_stats_t *stats,
                              ooc_err_t *err);

#endif
