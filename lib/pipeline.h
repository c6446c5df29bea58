/* SPDX-License-Identifier: MIT */
/*
 * pipeline.h: runs a plan on one device through the backend ops table.
 * Knows nothing about which backend it drives, and nothing of the public
 * argument checks (done by gemm.c before it gets here).
 */
#ifndef OOC_PIPELINE_H
#define OOC_PIPELINE_H

#include <stdint.h>

#include "backend.h"
#include "plan.h"
#include "stage.h"

#define OOC_MAX_RING 16
#define OOC_MAX_STREAMS 8

/* A checked, non-degenerate problem (m, n, k > 0, alpha != 0), in the
 * orientation the plan chose. */
typedef struct {
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    int64_t m, n, k;
    const void *alpha, *beta; /* one element of dtype each */
    int beta_zero;
    const void *A, *B;
    void *C;
    int64_t lda, ldb, ldc;
    int pinned_a, pinned_b, pinned_c; /* else staged through pinned buffers */
} ooc_problem_t;

/* Buffers, streams and events the pipeline reuses across calls (owned by the
 * handle; grown before a run, never inside it). */
typedef struct {
    void *dev;
    size_t dev_bytes;
    void *pin;
    size_t pin_bytes;
    ooc_stream_t streams[OOC_MAX_STREAMS];
    int nstreams;
    ooc_event_t events[3 * OOC_MAX_RING];
    int nevents;
} ooc_res_t;

/* Bytes of alignment padding the arenas need beyond the plan's byte counts. */
uint64_t ooc_res_slack(int ring);

/* Make res hold what plan needs (allocating or growing only here). */
ooc_status_t ooc_res_reserve(ooc_be_t *be, ooc_res_t *res, const ooc_plan_t *plan, ooc_err_t *err);
/* Free everything res holds (after all work on it completed). */
void ooc_res_release(ooc_be_t *be, ooc_res_t *res);

typedef struct {
    uint64_t bytes_h2d, bytes_d2h;
} ooc_pipe_stats_t;

/* Run problem p with plan pl. pool may be NULL when nothing is staged.
 * Returns when every result is in C (or after a failure, when every queued
 * operation has finished, so the caller may free or reuse the buffers). */
ooc_status_t ooc_pipeline_run(ooc_be_t *be, ooc_res_t *res, ooc_pool_t *pool,
                              const ooc_problem_t *p, const ooc_plan_t *pl,
                              ooc_pipe_stats_t *stats, ooc_err_t *err);

#endif
