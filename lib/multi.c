/* SPDX-License-Identifier: MIT */
/*
 * multi.c: several devices in one process (see multi.h). A thread per device
 * runs that device's pipeline over the shared queue; the calling thread runs
 * the only one when there is one. The writers' block_done calls are
 * serialised here and given the bytes of every device so far, so the api
 * layer above sees one run.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multi.h"

typedef struct multi multi_t;

typedef struct {
    multi_t *M;
    int d;
    ooc_status_t st;
    ooc_err_t err;
    ooc_pipe_stats_t stats;
    ooc_trace_t trace;
} worker_t;

struct multi {
    ooc_dev_t *devs;
    ooc_pool_t *pool;
    const ooc_problem_t *p;
    const ooc_plan_t *pl;
    const ooc_run_hooks_t *hooks;
    ooc_queue_t queue;
    pthread_mutex_t mu;                       /* block_done calls, so_far */
    ooc_pipe_stats_t so_far[OOC_MAX_DEVICES]; /* each device's, at its last block_done */
    worker_t w[OOC_MAX_DEVICES];
};

static void add_stats(ooc_pipe_stats_t *to, const ooc_pipe_stats_t *s)
{
    to->bytes_h2d += s->bytes_h2d;
    to->bytes_d2h += s->bytes_d2h;
    to->bytes_peer += s->bytes_peer;
    to->bytes_staged_in += s->bytes_staged_in;
    to->bytes_staged_cached += s->bytes_staged_cached;
    to->bytes_staged_out += s->bytes_staged_out;
    to->blocks += s->blocks;
    if (s->t_end > to->t_end) to->t_end = s->t_end;
}

/* A device's writer finished block g: pass it on with every device's bytes. */
static ooc_status_t block_done(void *user, int64_t g, uint64_t digest, const ooc_pipe_stats_t *so_far,
                               ooc_err_t *err)
{
    worker_t *w = user;
    multi_t *M = w->M;
    pthread_mutex_lock(&M->mu);
    M->so_far[w->d] = *so_far;
    ooc_pipe_stats_t all;
    memset(&all, 0, sizeof all);
    for (int d = 0; d < OOC_MAX_DEVICES; d++) add_stats(&all, &M->so_far[d]);
    ooc_status_t st = M->hooks->block_done(M->hooks->user, g, digest, &all, err);
    pthread_mutex_unlock(&M->mu);
    return st;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    multi_t *M = w->M;
    const ooc_run_hooks_t *hk = M->hooks;
    ooc_pipe_hooks_t ph = {hk && hk->block_done ? block_done : NULL, w, hk ? hk->cancel : NULL,
                           hk && hk->block_done && hk->digest};
    ooc_dev_t *dev = &M->devs[w->d];
    w->st = ooc_pipeline_run(dev->be, &dev->res, M->pool, M->p, M->pl, &M->queue, w->d, &ph,
                             hk && hk->trace ? &w->trace : NULL, &w->stats, &w->err);
    return NULL;
}

ooc_status_t ooc_multi_run(ooc_dev_t *devs, int ndev, ooc_pool_t *pool, const ooc_problem_t *p,
                           const ooc_plan_t *pl, const ooc_run_hooks_t *hooks, ooc_run_stats_t *stats,
                           ooc_err_t *err)
{
    OOC_RETURN_ERROR_IF(ndev < 1 || ndev > OOC_MAX_DEVICES, err, OOC_ERR_INTERNAL, "%d devices", ndev);
    multi_t *M = calloc(1, sizeof *M); /* per-device error records: too large for the stack */
    OOC_RETURN_ERROR_IF(M == NULL, err, OOC_ERR_HOST_MEMORY, "multi: out of memory");
    M->devs = devs;
    M->pool = pool;
    M->p = p;
    M->pl = pl;
    M->hooks = hooks;
    ooc_queue_init(&M->queue, pl, hooks ? hooks->done : NULL, ndev);
    /* (op(B) transposed on the device: each device puts up its own; a chunk
     * of it, rows of op(B), is not a run of its device lines to copy) */
    M->queue.share = hooks && hooks->share_b && ndev > 1 && !pl->b_transposed;
    pthread_mutex_init(&M->mu, NULL);
    pthread_t threads[OOC_MAX_DEVICES];
    int started = 0;
    ooc_status_t st = OOC_SUCCESS;
    for (int d = 0; d < ndev; d++) {
        M->w[d].M = M;
        M->w[d].d = d;
        ooc_err_clear(&M->w[d].err);
    }
    if (ndev == 1) {
        worker_main(&M->w[0]);
    } else {
        for (; started < ndev; started++) {
            int rc = pthread_create(&threads[started], NULL, worker_main, &M->w[started]);
            if (rc != 0) {
                st = OOC_ERR(err, OOC_ERR_THREAD, "pthread_create: error %d (device %d)", rc, devs[started].index);
                /* the queue waits for ndev pipelines: let those started leave */
                ooc_queue_abort(&M->queue);
                break;
            }
        }
        for (int d = 0; d < started; d++) pthread_join(threads[d], NULL);
    }
    int ran = ndev == 1 ? 1 : started;

    /* the status: the first device (by index) that failed, named */
    for (int d = 0; d < ran && st == OOC_SUCCESS; d++) {
        worker_t *w = &M->w[d];
        if (w->st == OOC_SUCCESS) continue;
        st = w->st;
        if (ndev > 1) {
            char msg[sizeof w->err.msg];
            snprintf(msg, sizeof msg, "device %d: %s", devs[d].index, w->err.msg);
            memcpy(w->err.msg, msg, sizeof msg);
        }
        ooc_err_merge(err, &w->err);
    }
    if (st == OOC_SUCCESS && M->queue.aborted) /* cannot be: an abort comes with a failure */
        st = OOC_ERR(err, OOC_ERR_INTERNAL, "multi: the block queue was aborted without a failure");
    int traced = hooks && hooks->trace;
    if (st != OOC_SUCCESS) {
        /* a device that failed discarded its trace; the others did not */
        for (int d = 0; traced && d < ran; d++)
            if (M->w[d].st == OOC_SUCCESS) ooc_trace_discard(&M->w[d].trace);
    } else if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->ndev = ndev;
        for (int d = 0; d < ndev; d++) {
            stats->dev[d] = M->w[d].stats;
            add_stats(&stats->sum, &M->w[d].stats);
        }
        if (traced) {
            ooc_trace_t *ts[OOC_MAX_DEVICES];
            int ids[OOC_MAX_DEVICES];
            for (int d = 0; d < ndev; d++) {
                ts[d] = &M->w[d].trace;
                ids[d] = devs[d].index;
            }
            /* the product is complete: a trace that cannot be written is
             * reported in the stats, never allowed to throw the result away */
            ooc_err_t terr;
            ooc_err_clear(&terr);
            stats->trace_status = ooc_trace_finish(ts, ids, ndev, hooks->trace_path, stats->trace,
                                                   &stats->trace_total, &terr);
            snprintf(stats->trace_error, sizeof stats->trace_error, "%.*s", (int)sizeof stats->trace_error - 1,
                     terr.msg);
            stats->traced = 1;
        }
    } else if (traced) {
        for (int d = 0; d < ndev; d++) ooc_trace_discard(&M->w[d].trace);
    }
    pthread_mutex_destroy(&M->mu);
    ooc_queue_destroy(&M->queue);
    free(M);
    return st;
}
