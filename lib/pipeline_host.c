/* SPDX-License-Identifier: MIT */
/*
 * pipeline_host.c: the host side of a pipeline (see pipeline.c): the reader
 * thread that copies or preads pageable operands into the pinned in-slots,
 * the writer thread that copies or pwrites C out of the pinned out-slots
 * and reports each finished block, and the staging copies and messages they
 * share with the issuing thread. They wait on the issuing thread's events
 * from the host; they issue no device operation themselves.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "pipeline_int.h"

host_step_t ooc_pipe_step_begin(pipe_t *P, const char *name)
{
    P->o->range_push(P->be, name);
    host_step_t h = {P->T ? ooc_trace_now() : 0};
    return h;
}

void ooc_pipe_step_end(pipe_t *P, host_step_t h, const char *name, int lane, int64_t block)
{
    P->o->range_pop(P->be);
    if (P->T) ooc_trace_host(P->T, name, lane, block, h.t0, ooc_trace_now());
}

/* The writer: wait until turn t's D2H is issued; 0 when it never will be
 * (the issuing thread is done with the panel, or the run was aborted). */
static int await_issued(pipe_t *P, int64_t t)
{
    pthread_mutex_lock(&P->mu);
    while (P->issued <= t && !P->issuer_done && !P->abort) pthread_cond_wait(&P->cv, &P->mu);
    int ok = P->issued > t && !P->abort;
    pthread_mutex_unlock(&P->mu);
    return ok;
}

static ooc_status_t io_fail(int e, const char *what, const rect_t *r, ooc_err_t *err)
{
    if (e == -1)
        return OOC_ERR_FILE(err, OOC_ERR_FORMAT, r->name, "%s %s: file ended before byte %llu (truncated)", what,
                            r->name, (unsigned long long)(r->off + (r->height - 1) * r->pitch + r->width));
    return OOC_ERR_FILE(err, ooc_errno_status(e), r->name, "%s %s: %s (at byte %llu)", what, r->name, strerror(e),
                        (unsigned long long)r->off);
}

/* rectangle -> packed buffer (line pitch = width) */
ooc_status_t ooc_pipe_stage_in(pipe_t *P, char *dst, const rect_t *r, ooc_err_t *err)
{
    if (r->fd < 0) {
        ooc_pool_copy2d(P->pool, dst, r->width, r->ptr, r->pitch, r->width, r->height);
    } else {
        int e = ooc_pool_pread2d(P->pool, dst, r->width, r->fd, r->off, r->pitch, r->width, r->height);
        if (e) return io_fail(e, "pread", r, err);
    }
    ooc_pipe_count(P, 0, 0, r->width * r->height, 0);
    return OOC_SUCCESS;
}

/* packed buffer -> rectangle */
static ooc_status_t stage_out(pipe_t *P, const rect_t *r, const char *src, ooc_err_t *err)
{
    if (r->fd < 0) {
        ooc_pool_copy2d(P->pool, (char *)r->ptr, r->pitch, src, r->width, r->width, r->height);
    } else {
        int e = ooc_pool_pwrite2d(P->pool, r->fd, r->off, r->pitch, src, r->width, r->width, r->height);
        if (e) return io_fail(e, "pwrite", r, err);
    }
    ooc_pipe_count(P, 0, 0, 0, r->width * r->height);
    return OOC_SUCCESS;
}

void *ooc_pipe_reader_main(void *arg)
{
    pipe_t *P = arg;
    ooc_err_t err;
    ooc_err_clear(&err);
    if (P->o->activate(P->be, &err) != OOC_SUCCESS) goto failed;
    for (int64_t t = 0;; t++) {
        int s = slot_of(P, t);
        /* the first turn is staged at once (unless b_first, below); the
         * others after op(B)'s chunks, which go through the same slots */
        if (t > 0 && !ooc_pipe_await(P, &P->b_staged, 1)) return NULL;
        /* with several devices the block is claimed only once turn t -
         * CLAIM_LAG is multiplied (see claim_when_free), so that no device
         * takes blocks the others could start sooner; one device stages
         * ahead as soon as slot s is free */
        if (t >= CLAIM_LAG && P->q->devices > 1) {
            if (!ooc_pipe_await(P, &P->issued, t - CLAIM_LAG + 1)) return NULL;
            if (P->o->event_sync(P->be, P->ev_gemm[slot_of(P, t - CLAIM_LAG)], &err) != OOC_SUCCESS) goto failed;
        }
        /* slot s is free once turn t - R's copies in are done: wait until
         * they are issued (ev_in[s] recorded after them), then for them */
        if (reuses_slot(P, t) && !ooc_pipe_await(P, &P->issued_in, t - P->R + 1)) return NULL;
        /* op(B) first (b_first: A in k-pieces, whose first needs all of it,
         * or op(B) staged through these slots): once the panel has a block
         * for this device (else op(B) is not uploaded in the loop), wait
         * for it */
        if (t == 0 && P->b_first) {
            if (ooc_pipe_block_of(P, t) < 0) break;
            if (!ooc_pipe_await(P, &P->b_staged, 1)) return NULL;
        }
        /* slot s may still feed the H2D of a chunk of op(B) */
        if (P->o->event_sync(P->be, P->ev_in[s], &err) != OOC_SUCCESS) goto failed;
        int64_t i = ooc_pipe_block_of(P, t);
        if (i < 0) break;
        int64_t r0, r1;
        block_rows(P, i, &r0, &r1);
        rect_t ra = rect(&P->va, r0, r1, P->k0, P->k1);
        host_step_t hs = ooc_pipe_step_begin(P, "stage A");
        if (P->stage_a && ooc_pipe_stage_in(P, P->pin_in[s], &ra, &err) != OOC_SUCCESS) goto failed;
        if (P->stage_cin) {
            rect_t rc = rect(&P->vcin, r0, r1, P->c0, P->c1);
            if (ooc_pipe_stage_in(P, P->pin_in[s] + a_part(P, &ra), &rc, &err) != OOC_SUCCESS) goto failed;
        }
        ooc_pipe_step_end(P, hs, P->stage_cin ? (P->stage_a ? "stage A+C" : "stage C") : "stage A", OOC_LANE_READ, P->g0 + i);
        ooc_pipe_advance(P, &P->staged, t + 1);
    }
    return NULL;
failed:
    ooc_pipe_fail(P, &err);
    return NULL;
}

void *ooc_pipe_writer_main(void *arg)
{
    pipe_t *P = arg;
    ooc_err_t err;
    ooc_err_clear(&err);
    if (P->o->activate(P->be, &err) != OOC_SUCCESS) goto failed;
    for (int64_t t = 0; await_issued(P, t); t++) {
        int64_t i = P->turn[t];
        int s = slot_of(P, t);
        int64_t r0, r1;
        block_rows(P, i, &r0, &r1);
        if (P->o->event_sync(P->be, P->ev_out[s], &err) != OOC_SUCCESS) goto failed;
        rect_t rc = rect(&P->vc, r0, r1, P->c0, P->c1);
        host_step_t hs = ooc_pipe_step_begin(P, "unstage C");
        if (stage_out(P, &rc, P->pin_out[s], &err) != OOC_SUCCESS) goto failed;
        ooc_pipe_step_end(P, hs, "unstage C", OOC_LANE_WRITE, P->g0 + i);
        if (P->hooks && P->hooks->block_done) {
            pthread_mutex_lock(&P->mu);
            ooc_pipe_stats_t so_far = P->stats;
            pthread_mutex_unlock(&P->mu);
            if (P->hooks->block_done(P->hooks->user, P->g0 + i, &so_far, &err) != OOC_SUCCESS) goto failed;
        }
        ooc_pipe_advance(P, &P->written, t + 1);
    }
    return NULL;
failed:
    ooc_pipe_fail(P, &err);
    return NULL;
}
