/* SPDX-License-Identifier: MIT */
/*
 * multi.h: several devices in one process. One pipeline per device (its own
 * streams, ring, pinned staging, reader and writer threads, and its own copy
 * of op(B)'s panel), all taking row blocks from one shared queue, so a slower
 * or busier device simply takes fewer blocks and all finish together. One
 * device is the same code with a queue of one. Knows nothing of CUDA.
 */
#ifndef OOC_MULTI_H
#define OOC_MULTI_H

#include "pipeline.h"

/* One device: its backend instance and the buffers its pipeline reuses. */
typedef struct {
    ooc_be_t *be;
    ooc_res_t res;
    int index; /* the device's number (CUDA's, or the host backend's) */
    int numa_asked, numa_node; /* its NUMA node (numa.h), once asked; -1 unknown */
} ooc_dev_t;

typedef struct {
    const unsigned char *done; /* bit g set: block g is in C already (a resume); NULL: none */
    /* after block g of a staged C is written, from a writer thread, one call
     * at a time; so_far sums every device's bytes */
    ooc_status_t (*block_done)(void *user, int64_t g, uint64_t digest, const ooc_pipe_stats_t *so_far,
                               ooc_err_t *err);
    void *user;
    int digest;                /* pass each block's digest (pipeline.h) */
    const atomic_int *cancel;
    int trace;                 /* time every op */
    const char *trace_path;    /* and write the timeline there (NULL: summary only) */
    int share_b;               /* op(B) uploaded once and copied between the devices (pipeline.h) */
} ooc_run_hooks_t;

typedef struct {
    int ndev;
    ooc_pipe_stats_t dev[OOC_MAX_DEVICES]; /* each device's bytes, blocks, end time */
    ooc_pipe_stats_t sum;                  /* all of them */
    int traced;
    ooc_trace_summary_t trace[OOC_MAX_DEVICES], trace_total;
    ooc_status_t trace_status;             /* writing the trace file: never fails the multiply */
    char trace_error[256];
} ooc_run_stats_t;

/* Run p with plan pl on devs[0 .. ndev) (their res reserved for pl). A
 * device's failure stops the others from starting blocks; they finish the
 * blocks they hold (recorded through block_done), and the status is the
 * failed device's, its message starting "device N: " when there are
 * several. */
ooc_status_t ooc_multi_run(ooc_dev_t *devs, int ndev, ooc_pool_t *pool, const ooc_problem_t *p,
                           const ooc_plan_t *pl, const ooc_run_hooks_t *hooks, ooc_run_stats_t *stats,
                           ooc_err_t *err);

#endif
