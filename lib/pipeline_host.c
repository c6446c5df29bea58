/* SPDX-License-Identifier: MIT */
/*
 * pipeline_host.c: the host side of a pipeline (see pipeline.c): the reader
 * thread that copies or preads pageable operands into the pinned in-slots,
 * the writer thread that copies or pwrites C out of the pinned out-slots
 * (or brings it down through cache-sized buffers and copies it into C) and
 * reports each finished block, and the staging copies and messages they
 * share with the issuing thread. They wait on the issuing thread's events
 * from the host; the only device operations they issue are the copies of
 * staged A and C through the cache-sized buffers, on streams of their own.
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

/* rectangle -> packed buffer (line pitch = width); `cached`: a buffer that
 * stays in the CPU's cache, filled from memory with plain stores (the copy
 * engines read it from there: one pass over host memory, counted so) */
ooc_status_t ooc_pipe_stage_in(pipe_t *P, char *dst, const rect_t *r, int cached, ooc_err_t *err)
{
    size_t bytes = r->width * r->height;
    if (r->fd >= 0) {
        int e = ooc_pool_pread2d(P->pool, dst, r->width, r->fd, r->off, r->pitch, r->width, r->height);
        if (e) return io_fail(e, "pread", r, err);
        ooc_pipe_count(P, 0, 0, bytes, 0);
    } else if (cached) {
        ooc_pool_copy2d_cached(P->pool, dst, r->width, r->ptr, r->pitch, r->width, r->height);
        ooc_pipe_count_cached(P, 0, 0, bytes, 0);
    } else {
        ooc_pool_copy2d(P->pool, dst, r->width, r->ptr, r->pitch, r->width, r->height);
        ooc_pipe_count(P, 0, 0, bytes, 0);
    }
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

/* Rectangle r of block i into the packed device tile dst through the cache
 * (plan.h through_chunk): chunk after chunk of whole lines (or of one line,
 * when a line is longer than a buffer) copied by the pool with plain stores
 * into the next of the small pinned buffers, once its last copy up is done,
 * and sent up from there on the staging stream. */
static ooc_status_t through_up(pipe_t *P, int64_t i, const rect_t *r, char *dst, const char *name, ooc_err_t *err)
{
    chunking_t k = chunking(P->th_chunk, r->width);
    for (size_t l0 = 0; l0 < r->height; l0 += k.per) {
        size_t h = step_of(l0, k.per, r->height);
        for (size_t at = 0; at < r->width; at += k.seg) {
            size_t w = step_of(at, k.seg, r->width);
            int b = (int)(P->th_used % P->th_n);
            if (P->th_used++ >= P->th_n) OOC_FORWARD(P->o->event_sync(P->be, P->th_ev[b], err));
            ooc_pool_copy2d_cached(P->pool, P->th_buf[b], w, r->ptr + l0 * r->pitch + at, r->pitch, w, h);
            int tr = TR_START(P, P->s_stage);
            OOC_FORWARD(P->o->copy2d(P->be, dst + dev_at(P, 1, r->width, l0) + at, dev_pitch(P, r->width),
                                     P->th_buf[b], w, w, h, OOC_H2D, P->s_stage, err));
            TR_END(P, P->s_stage, tr, name, OOC_LANE_IN, P->g0 + i);
            OOC_FORWARD(P->o->event_record(P->be, P->th_ev[b], P->s_stage, err));
        }
    }
    ooc_pipe_count_cached(P, r->width * r->height, 0, r->width * r->height, 0);
    return OOC_SUCCESS;
}

/* Turn t's block i through the cache into its device slots: A's rows
 * (rectangle ra, when P->th_a) into dA[s], once the multiply of turn t - R
 * has let go of the slot; C's rows read in (rc, when P->th_cin) into dC[s],
 * once turn t - R's C has gone out of it (ev_out[s]: recorded by the
 * issuing thread before it counts the turn issued, or by the writer when C
 * comes out through the cache, out_recorded). ev_ain[s] after the block's
 * last chunk (issue_in waits for it). */
static ooc_status_t through_in(pipe_t *P, int64_t t, int64_t i, const rect_t *ra, const rect_t *rc, ooc_err_t *err)
{
    int s = slot_of(P, t);
    if (ra) {
        if (reuses_slot(P, t)) {
            if (!ooc_pipe_await(P, &P->issued, t - P->R + 1)) return OOC_ERR_INTERNAL; /* aborted */
            OOC_FORWARD(P->o->stream_wait(P->be, P->s_stage, P->ev_gemm[s], err));
        }
        OOC_FORWARD(through_up(P, i, ra, P->dA[s], "H2D A (chunk)", err));
    }
    if (rc) {
        if (reuses_slot(P, t)) {
            if (!ooc_pipe_await(P, P->tho_n ? &P->out_recorded : &P->issued, t - P->R + 1))
                return OOC_ERR_INTERNAL; /* aborted */
            OOC_FORWARD(P->o->stream_wait(P->be, P->s_stage, P->ev_out[s], err));
        }
        OOC_FORWARD(through_up(P, i, rc, P->dC[s], "H2D C (chunk)", err));
    }
    return P->o->event_record(P->be, P->ev_ain[s], P->s_stage, err);
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
        rect_t rc = rect(&P->vcin, r0, r1, P->c0, P->c1);
        int a_th = P->stage_a && P->th_a, c_th = P->stage_cin && P->th_cin;
        if (a_th || c_th) {
            if (through_in(P, t, i, a_th ? &ra : NULL, c_th ? &rc : NULL, &err) != OOC_SUCCESS) goto failed;
        }
        if (P->stage_a && !a_th && ooc_pipe_stage_in(P, P->pin_in[s], &ra, 0, &err) != OOC_SUCCESS) goto failed;
        if (P->stage_cin && !c_th &&
            ooc_pipe_stage_in(P, P->pin_in[s] + a_part(P, &ra), &rc, 0, &err) != OOC_SUCCESS)
            goto failed;
        ooc_pipe_step_end(P, hs, P->stage_cin ? (P->stage_a ? "stage A+C" : "stage C") : "stage A", OOC_LANE_READ, P->g0 + i);
        ooc_pipe_advance(P, &P->staged, t + 1);
    }
    return NULL;
failed:
    ooc_pipe_fail(P, &err);
    return NULL;
}

/* Turn t's block done: every byte of it is in C (digest: of those bytes, when
 * the hooks ask for it). Reported (journal) in turn order. */
static ooc_status_t block_written(pipe_t *P, int64_t t, uint64_t digest, ooc_err_t *err)
{
    if (P->hooks && P->hooks->block_done) {
        pthread_mutex_lock(&P->mu);
        ooc_pipe_stats_t so_far = P->stats;
        pthread_mutex_unlock(&P->mu);
        OOC_FORWARD(P->hooks->block_done(P->hooks->user, P->g0 + P->turn[t], digest, &so_far, err));
    }
    ooc_pipe_advance(P, &P->written, t + 1);
    return OOC_SUCCESS;
}

/* A chunk of C on its way down through buffer `buf` (the writer's queue,
 * oldest first): lines [l0, l0 + h) of turn t's block, bytes [at, at + w)
 * of each; `last`: the block's last chunk. */
typedef struct {
    int64_t t;
    int buf, last;
    char *dst;      /* where its first line goes in C */
    size_t pitch, w, h;
} out_chunk_t;

typedef struct {
    out_chunk_t q[OOC_PLAN_MAX_THROUGH_BUFS];
    int64_t head, tail; /* chunks issued, chunks copied into C */
    int between;        /* the next chunk to copy into C is a block's first (0: within a block) */
    double t0;          /* trace: when the oldest block's first chunk was copied */
} out_queue_t;

/* The oldest chunk in flight: once its copy down is done, the pool copies it
 * into C (streaming stores: C's lines are not read first); after a block's
 * last chunk, the block is written. */
static ooc_status_t out_finish_oldest(pipe_t *P, out_queue_t *Q, ooc_err_t *err)
{
    out_chunk_t *c = &Q->q[Q->tail % P->tho_n];
    OOC_FORWARD(P->o->event_sync(P->be, P->tho_ev[c->buf], err));
    /* (the chunk before this one is no longer in the queue: its entry may hold a newer one) */
    if (P->T && Q->between) Q->t0 = ooc_trace_now();
    Q->between = c->last;
    P->o->range_push(P->be, "unstage C (chunk)");
    ooc_pool_copy2d(P->pool, c->dst, c->pitch, P->tho_buf[c->buf], c->w, c->w, c->h);
    P->o->range_pop(P->be);
    ooc_pipe_count_cached(P, 0, 0, 0, c->w * c->h);
    Q->tail++;
    if (!c->last) return OOC_SUCCESS;
    if (P->T) ooc_trace_host(P->T, "unstage C", OOC_LANE_WRITE, P->g0 + P->turn[c->t], Q->t0, ooc_trace_now());
    return block_written(P, c->t, 0, err); /* (C in memory: never hashed) */
}

/* Turn t's block of C (rectangle rc, in slot s) down through the cache
 * (plan.h through_out_chunk), the mirror of through_a: on the unstaging
 * stream, once the block's multiply is done, chunk after chunk of whole
 * lines (or of one line, when a line is longer than a buffer) from dC[s]
 * into the next buffer, once the pool has copied that buffer's last chunk
 * into C; ev_out[s] after the block's last chunk (the issuing thread waits
 * for out_recorded before reusing the slot). Chunks of this block still in
 * buffers are finished later (out_finish_oldest). */
static ooc_status_t through_c(pipe_t *P, out_queue_t *Q, int64_t t, const rect_t *rc, ooc_err_t *err)
{
    int s = slot_of(P, t);
    OOC_FORWARD(P->o->stream_wait(P->be, P->s_unstage, P->ev_gemm[s], err));
    chunking_t k = chunking(P->tho_chunk, rc->width);
    for (size_t l0 = 0; l0 < rc->height; l0 += k.per) {
        size_t h = step_of(l0, k.per, rc->height);
        for (size_t at = 0; at < rc->width; at += k.seg) {
            size_t w = step_of(at, k.seg, rc->width);
            if (Q->head - Q->tail == P->tho_n) OOC_FORWARD(out_finish_oldest(P, Q, err));
            out_chunk_t *c = &Q->q[Q->head % P->tho_n];
            c->t = t;
            c->buf = (int)(Q->head % P->tho_n);
            c->last = l0 + h == rc->height && at + w == rc->width;
            c->dst = (char *)rc->ptr + l0 * rc->pitch + at;
            c->pitch = rc->pitch;
            c->w = w;
            c->h = h;
            int tr = TR_START(P, P->s_unstage);
            OOC_FORWARD(P->o->copy2d(P->be, P->tho_buf[c->buf], w, P->dC[s] + dev_at(P, 1, rc->width, l0) + at,
                                     dev_pitch(P, rc->width), w, h, OOC_D2H, P->s_unstage, err));
            TR_END(P, P->s_unstage, tr, "D2H C (chunk)", OOC_LANE_OUT, P->g0 + P->turn[t]);
            OOC_FORWARD(P->o->event_record(P->be, P->tho_ev[c->buf], P->s_unstage, err));
            ooc_pipe_count(P, 0, w * h, 0, 0);
            Q->head++;
        }
    }
    OOC_FORWARD(P->o->event_record(P->be, P->ev_out[s], P->s_unstage, err));
    ooc_pipe_advance(P, &P->out_recorded, t + 1);
    return OOC_SUCCESS;
}

/* Has the issuing thread issued turn t's multiply yet (without waiting)? */
static int issued_now(pipe_t *P, int64_t t)
{
    pthread_mutex_lock(&P->mu);
    int yes = P->issued > t;
    pthread_mutex_unlock(&P->mu);
    return yes;
}

/* The writer with C through the cache: each turn's chunks go down as
 * buffers free up; before waiting for the next turn's multiply, the chunks
 * already down are copied into C (its blocks reported written). */
static void *writer_through(pipe_t *P)
{
    ooc_err_t err;
    ooc_err_clear(&err);
    out_queue_t Q;
    memset(&Q, 0, sizeof Q);
    Q.between = 1;
    if (P->o->activate(P->be, &err) != OOC_SUCCESS) goto failed;
    for (int64_t t = 0;; t++) {
        while (Q.tail < Q.head && !issued_now(P, t))
            if (out_finish_oldest(P, &Q, &err) != OOC_SUCCESS) goto failed;
        if (!await_issued(P, t)) break;
        int64_t r0, r1;
        block_rows(P, P->turn[t], &r0, &r1);
        rect_t rc = rect(&P->vc, r0, r1, P->c0, P->c1);
        if (through_c(P, &Q, t, &rc, &err) != OOC_SUCCESS) goto failed;
    }
    /* the issuing thread is done with the panel: copy what is left into C, unless the run failed */
    pthread_mutex_lock(&P->mu);
    int aborted = P->abort;
    pthread_mutex_unlock(&P->mu);
    if (aborted) return NULL;
    while (Q.tail < Q.head)
        if (out_finish_oldest(P, &Q, &err) != OOC_SUCCESS) goto failed;
    return NULL;
failed:
    ooc_pipe_fail(P, &err);
    return NULL;
}

void *ooc_pipe_writer_main(void *arg)
{
    pipe_t *P = arg;
    if (P->tho_n) return writer_through(P);
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
        uint64_t digest = 0;
        if (P->hooks && P->hooks->digest) { /* the packed block as written, its lines in order */
            hs = ooc_pipe_step_begin(P, "digest C");
            ooc_digest_t d;
            ooc_digest_init(&d);
            ooc_pool_digest(P->pool, &d, P->pin_out[s], rc.width * rc.height);
            digest = ooc_digest_final(&d);
            ooc_pipe_step_end(P, hs, "digest C", OOC_LANE_WRITE, P->g0 + i);
        }
        if (block_written(P, t, digest, &err) != OOC_SUCCESS) goto failed;
    }
    return NULL;
failed:
    ooc_pipe_fail(P, &err);
    return NULL;
}
