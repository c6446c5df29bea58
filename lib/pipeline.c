/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c: runs a plan on one device (see pipeline.h): the resources it
 * reuses, the progress counters its threads share, and the run over the
 * panels. The queue of row blocks is in pipeline_queue.c, the reader and
 * writer threads in pipeline_host.c, the issuing thread in pipeline_issue.c
 * (what they share: pipeline_int.h).
 *
 * For each panel of op(B) (kb x nb, resident), the row blocks of op(A) and C
 * go round a ring of R device slots:
 *
 *   stream in:   H2D A(i) [+ C(i) when beta != 0]          -> ev_in[s]
 *   compute:     waits ev_in[s]; gemm(i)                    -> ev_gemm[s]
 *   stream out:  waits ev_gemm[s]; D2H C(i)                 -> ev_out[s]
 *
 * A plan with A in k-pieces (plan.h) interleaves them instead: for piece u
 * of the panel (the pieces of all its blocks in order), in A slot j = u mod
 * RA (the pieces' own ring of slots),
 *
 *   stream in:   waits ev_pgemm[j] (piece u - RA); H2D piece u -> ev_pin[j]
 *   compute:     waits ev_pin[j]; gemm of the piece into C(i) -> ev_pgemm[j]
 *
 * C(i) read in (beta != 0) before its first piece, ev_in[s] after its last
 * piece's copy, ev_gemm[s] after its last piece's multiply. With b_chunks >
 * 1 the last piece's multiply goes by chunks c of C's columns, each
 * recording ev_cpart[c], on which stream out waits to copy those columns
 * out; ev_out[s] after the last of them (so also for a lead block, whose
 * chunks of op(B) are columns).
 *
 * with s = t mod R for the pipeline's t-th block of the panel ("turn": the
 * blocks come from a queue the devices share, pipeline.h). Slot s is reused
 * by turn t+R only after ev_gemm[s] (its A part) and ev_out[s] (its C part). Pageable operands go through pinned
 * staging slots, filled by a reader thread and emptied by a writer thread,
 * which wait on the same events from the host; counters under one mutex say
 * how far the issuing thread has got, so no event is waited on before it is
 * recorded or re-recorded while a thread still waits on it.
 *
 * Never here: device allocation, device-wide synchronisation, mem-info
 * queries. Panels are separated by draining our own streams (the next panel
 * overwrites the resident buffer; with several k-panels it reads C back).
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"

uint64_t ooc_res_slack(int ring) { return (uint64_t)ALIGN * (uint64_t)(3 * ring + 2); }

/* ---------- resources ---------- */

void ooc_res_release(ooc_be_t *be, ooc_res_t *res)
{
    if (be == NULL) return;
    const ooc_be_ops_t *o = be->ops;
    for (int i = 0; i < res->nevents; i++) o->event_destroy(be, res->events[i]);
    for (int i = 0; i < res->nstreams; i++) o->stream_destroy(be, res->streams[i]);
    if (res->urgent) o->stream_destroy(be, res->urgent);
    if (res->dev) o->dev_free(be, res->dev);
    if (res->pin) o->host_free(be, res->pin);
    memset(res, 0, sizeof *res);
}

ooc_status_t ooc_res_reserve(ooc_be_t *be, ooc_res_t *res, const ooc_plan_t *pl, uint64_t dev_limit,
                             uint64_t pin_limit, ooc_err_t *err)
{
    const ooc_be_ops_t *o = be->ops;
    OOC_RETURN_ERROR_IF(pl->ring > OOC_MAX_RING || pl->streams > OOC_MAX_STREAMS, err,
                        OOC_ERR_INTERNAL, "plan with %d slots, %d streams exceeds the limits",
                        pl->ring, pl->streams);
    size_t slack = (size_t)ooc_res_slack(pl->ring);
    size_t dev = (size_t)pl->device_bytes + slack;
    /* held buffers serve a smaller plan (no reallocation from call to call),
     * unless they exceed the budget: a handle whose budget was lowered
     * gives the memory back */
    if (res->dev_bytes < dev || res->dev_bytes > dev_limit) {
        if (res->dev) o->dev_free(be, res->dev);
        res->dev = NULL;
        res->dev_bytes = 0;
        OOC_FORWARD(o->dev_alloc(be, dev, &res->dev, err));
        res->dev_bytes = dev;
    }
    size_t pin = pl->host_bytes ? (size_t)pl->host_bytes + slack : 0;
    if (res->pin_bytes < pin || res->pin_bytes > pin_limit) {
        if (res->pin) o->host_free(be, res->pin);
        res->pin = NULL;
        res->pin_bytes = 0;
        if (pin) OOC_FORWARD(o->host_alloc(be, pin, 1, &res->pin, err));
        res->pin_bytes = pin;
    }
    OOC_RETURN_ERROR_IF(PIPE_READER_CHUNK(pl) && (PIPE_READER_BUFS(pl) < 1 || PIPE_READER_BUFS(pl) > OOC_PLAN_MAX_THROUGH_BUFS),
                        err, OOC_ERR_INTERNAL, "plan with %d staging buffers exceeds the limit", PIPE_READER_BUFS(pl));
    OOC_RETURN_ERROR_IF(pl->through_chunk && pl->through_cin_chunk && (pl->through_cin_chunk != pl->through_chunk ||
                                                                     pl->through_cin_bufs != pl->through_bufs),
                        err, OOC_ERR_INTERNAL, "plan with staged A and C read in through different buffers");
    OOC_RETURN_ERROR_IF(pl->through_out_chunk &&
                            (pl->through_out_bufs < 1 || pl->through_out_bufs > OOC_PLAN_MAX_THROUGH_BUFS),
                        err, OOC_ERR_INTERNAL, "plan with %d unstaging buffers exceeds the limit",
                        pl->through_out_bufs);
    OOC_RETURN_ERROR_IF(PIPE_STREAMS(pl) > (int)(sizeof res->streams / sizeof res->streams[0]), err,
                        OOC_ERR_INTERNAL, "plan with %d streams in all exceeds the limit", PIPE_STREAMS(pl));
    while (res->nstreams < PIPE_STREAMS(pl)) {
        OOC_FORWARD(o->stream_create(be, &res->streams[res->nstreams], err));
        res->nstreams++;
    }
    if (pl->b_transposed && res->urgent == NULL) OOC_FORWARD(o->stream_create_urgent(be, &res->urgent, err));
    OOC_RETURN_ERROR_IF(pl->a_slots > OOC_MAX_RING, err, OOC_ERR_INTERNAL, "plan with %d A slots exceeds the limit",
                        pl->a_slots);
    OOC_RETURN_ERROR_IF(PIPE_EVENTS(pl) > (int)(sizeof res->events / sizeof res->events[0]), err,
                        OOC_ERR_INTERNAL, "plan with %d events exceeds the limit", PIPE_EVENTS(pl));
    while (res->nevents < PIPE_EVENTS(pl)) {
        OOC_FORWARD(o->event_create(be, &res->events[res->nevents], err));
        res->nevents++;
    }
    return OOC_SUCCESS;
}

void ooc_problem_transpose(ooc_problem_t *p)
{
    ooc_problem_t t = *p;
    t.layout = p->layout == OOC_COL_MAJOR ? OOC_ROW_MAJOR : OOC_COL_MAJOR;
    t.ta = p->tb;
    t.tb = p->ta;
    t.m = p->n;
    t.n = p->m;
    t.A = p->B;
    t.B = p->A;
    *p = t;
}

/* ---------- the progress counters (pipeline_int.h) ---------- */

void ooc_pipe_fail(pipe_t *P, const ooc_err_t *e)
{
    pthread_mutex_lock(&P->mu);
    ooc_err_merge(&P->err, e);
    P->abort = 1;
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
}

void ooc_pipe_advance(pipe_t *P, int64_t *counter, int64_t value)
{
    pthread_mutex_lock(&P->mu);
    *counter = value;
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
}

/* wait until *counter >= target; 0 if the run was aborted meanwhile */
int ooc_pipe_await(pipe_t *P, const int64_t *counter, int64_t target)
{
    pthread_mutex_lock(&P->mu);
    while (*counter < target && !P->abort) pthread_cond_wait(&P->cv, &P->mu);
    int ok = !P->abort;
    pthread_mutex_unlock(&P->mu);
    return ok;
}

/* The block of turn t, claiming it from the queue when t is the next turn
 * (the reader and the issuing thread each go through the turns in order, so
 * whichever is first claims); -1 when the queue has none left for it. */
int64_t ooc_pipe_block_of(pipe_t *P, int64_t t)
{
    pthread_mutex_lock(&P->mu);
    int64_t b = -1;
    if (t < P->claimed) {
        b = P->turn[t];
    } else if (t == P->claimed && !P->no_more) {
        b = ooc_queue_claim(P->q, P->panel);
        if (b >= 0) P->turn[P->claimed++] = b;
        else P->no_more = 1;
    }
    pthread_mutex_unlock(&P->mu);
    return b;
}

/* Bytes over the bus and through the staging ring. Under mu: the issuing
 * thread and the reader and writer count, and the writer copies the stats
 * for block_done. */
static void count(pipe_t *P, uint64_t h2d, uint64_t d2h, uint64_t staged_in, uint64_t staged_out, uint64_t cached)
{
    pthread_mutex_lock(&P->mu);
    P->stats.bytes_h2d += h2d;
    P->stats.bytes_d2h += d2h;
    P->stats.bytes_staged_in += staged_in;
    P->stats.bytes_staged_out += staged_out;
    P->stats.bytes_staged_cached += cached;
    pthread_mutex_unlock(&P->mu);
}

void ooc_pipe_count(pipe_t *P, uint64_t h2d, uint64_t d2h, uint64_t staged_in, uint64_t staged_out)
{
    count(P, h2d, d2h, staged_in, staged_out, 0);
}

void ooc_pipe_count_cached(pipe_t *P, uint64_t h2d, uint64_t d2h, uint64_t staged_in, uint64_t staged_out)
{
    count(P, h2d, d2h, staged_in, staged_out, staged_in + staged_out);
}

/* ---------- the run ---------- */

void ooc_pipe_c_block(const ooc_problem_t *p, const ooc_plan_t *pl, int64_t g, uint64_t *off, size_t *pitch,
                      size_t *width, size_t *height)
{
    size_t e = ooc_dtype_size(p->dtype);
    view_t v = make_view(&p->C, p->layout, OOC_OP_N, e);
    int64_t r0, r1, np = (g / pl->m_blocks) % pl->n_panels, c0 = np * pl->nb;
    ooc_plan_block(pl, g % pl->m_blocks, &r0, &r1);
    rect_t r = rect(&v, r0, r1, c0, c0 + pl->nb < p->n ? c0 + pl->nb : p->n);
    *off = r.off - p->C.off;
    *pitch = r.pitch;
    *width = r.width;
    *height = r.height;
}

ooc_status_t ooc_pipeline_run(ooc_be_t *be, ooc_res_t *res, ooc_pool_t *pool,
                              const ooc_problem_t *p, const ooc_plan_t *pl, ooc_queue_t *queue, int rank,
                              const ooc_pipe_hooks_t *hooks, ooc_trace_t *trace, ooc_pipe_stats_t *stats,
                              ooc_err_t *err)
{
    static const double one[2] = {1.0, 0.0};
    static const float onef[2] = {1.0f, 0.0f};
    pipe_t P;
    memset(&P, 0, sizeof P);
    P.out_left = -1;
    P.be = be;
    P.o = be->ops;
    P.pool = pool;
    P.p = p;
    P.pl = pl;
    P.hooks = hooks;
    P.q = queue;
    P.rank = rank;
    P.share = queue->share; /* set by multi.c only for several devices (never with op(B) transposed) */
    P.e = ooc_dtype_size(p->dtype);
    P.R = pl->ring;
    P.va = make_view(&p->A, p->layout, p->ta, P.e);
    P.vb = make_view(&p->B, p->layout, p->tb, P.e);
    P.vc = make_view(&p->C, p->layout, OOC_OP_N, P.e);
    P.vcin = make_view(&p->c_in, p->layout, OOC_OP_N, P.e);
    ooc_status_t st = OOC_SUCCESS;
    if (res->nstreams < PIPE_STREAMS(pl) || res->nevents < PIPE_EVENTS(pl) || pl->streams < 3 ||
        (pl->b_transposed && res->urgent == NULL))
        st = OOC_ERR(err, OOC_ERR_INTERNAL, "pipeline resources not reserved for the plan");
    else if ((!p->A.pinned || !p->B.pinned || !p->C.pinned || !p->c_in.pinned) && pool == NULL)
        st = OOC_ERR(err, OOC_ERR_INTERNAL, "pipeline: staged operands without a staging pool");
    else if ((P.turn = malloc((size_t)pl->m_blocks * sizeof *P.turn)) == NULL)
        st = OOC_ERR(err, OOC_ERR_HOST_MEMORY, "pipeline: out of memory (%lld block numbers)", (long long)pl->m_blocks);
    if (st == OOC_SUCCESS) st = P.o->activate(be, err);
    if (st != OOC_SUCCESS) {
        free(P.turn);
        ooc_queue_abort(queue);
        return st;
    }

    /* carve the arenas */
    char *d = res->dev;
    P.dB = d;
    d += align_up((size_t)pl->dev_b_bytes);
    P.RA = pl->a_slots;
    for (int s = 0; s < P.R; s++) {
        P.dC[s] = d;
        d += align_up((size_t)pl->dev_c_slot_bytes);
        P.ev_in[s] = res->events[3 * s];
        P.ev_gemm[s] = res->events[3 * s + 1];
        P.ev_out[s] = res->events[3 * s + 2];
    }
    for (int j = 0; j < P.RA; j++) {
        P.dA[j] = d;
        d += align_up((size_t)pl->dev_a_slot_bytes);
        P.ev_pin[j] = res->events[3 * P.R + OOC_MAX_B_CHUNKS + 2 * j];
        P.ev_pgemm[j] = res->events[3 * P.R + OOC_MAX_B_CHUNKS + 2 * j + 1];
    }
    /* op(B) transposed on the device: its two scratch buffers (multiples of ALIGN) */
    P.btr = pl->b_transposed;
    for (int u = 0; P.btr && u < 2; u++) {
        P.dT[u] = d;
        d += align_up((size_t)pl->dev_b_scratch_bytes);
        P.ev_tin[u] = res->events[PIPE_EVENTS_TR(pl) + u];
        P.ev_tr[u] = res->events[PIPE_EVENTS_TR(pl) + 2 + u];
    }
    for (int j = 0; j < OOC_MAX_B_CHUNKS; j++) {
        P.ev_b[j] = res->events[3 * P.R + j];
        P.ev_cpart[j] = res->events[3 * P.R + OOC_MAX_B_CHUNKS + 2 * P.RA + j];
    }
    if (P.share) ooc_queue_register(queue, rank, be, P.dB, P.ev_b);
    char *h = res->pin;
    for (int s = 0; h && s < P.R; s++) {
        P.pin_in[s] = h;
        h += align_up((size_t)pl->pin_in_slot_bytes + ALIGN); /* + room for the A/C split */
        P.pin_out[s] = h;
        h += align_up((size_t)pl->pin_out_slot_bytes);
    }
    /* staged A and C read in through the reader's cache-sized buffers (plan.h): after the slots */
    P.th_n = PIPE_READER_CHUNK(pl) && h ? PIPE_READER_BUFS(pl) : 0;
    P.th_chunk = (size_t)PIPE_READER_CHUNK(pl);
    P.th_a = P.th_n && pl->through_chunk;
    P.th_cin = P.th_n && pl->through_cin_chunk;
    for (int b = 0; b < P.th_n; b++) {
        P.th_buf[b] = h;
        h += align_up(P.th_chunk);
        P.th_ev[b] = res->events[PIPE_EVENTS_BASE(pl) + P.R + b];
    }
    for (int s = 0; P.th_n && s < P.R; s++) P.ev_ain[s] = res->events[PIPE_EVENTS_BASE(pl) + s];
    /* staged C out through its own cache-sized buffers: after those */
    P.tho_n = pl->through_out_chunk && h ? pl->through_out_bufs : 0;
    P.tho_chunk = (size_t)pl->through_out_chunk;
    for (int b = 0; b < P.tho_n; b++) {
        P.tho_buf[b] = h;
        h += align_up(P.tho_chunk);
        P.tho_ev[b] = res->events[PIPE_EVENTS_IN(pl) + b];
    }
    P.s_in = res->streams[0];
    P.s_out = res->streams[1];
    P.ncomp = pl->streams - 2;
    for (int c = 0; c < P.ncomp; c++) P.s_comp[c] = res->streams[2 + c];
    P.s_tr = P.btr ? res->urgent : NULL;
    P.s_stage = P.th_n ? res->streams[pl->streams] : NULL;
    P.s_unstage = P.tho_n ? res->streams[PIPE_STREAMS_IN(pl)] : NULL;
    pthread_mutex_init(&P.mu, NULL);
    pthread_cond_init(&P.cv, NULL);
    if (trace) {
        /* every block's three ops (two per piece of A, two more per chunk of the last piece's
         * columns, one per chunk of staged A through the cache) and op(B)'s copies: one per
         * chunk and one from a peer, and staged, one per slot's worth of its lines (at least
         * one line of the wider side in a slot); within reason. Each op takes two timed
         * events, made before the run: op(B) pinned once counted one per line (an SGEMM of
         * 25315 x 1591 x 3247 then made 50 000 events, 28 ms of its traced 41 on an H200) */
        uint64_t lines_b = (uint64_t)(pl->kb > pl->nb ? pl->kb : pl->nb);
        uint64_t slot_lines = pl->pin_in_slot_bytes / (P.e * lines_b);
        uint64_t b_ops = 2 * OOC_MAX_B_CHUNKS + 2 + (p->B.pinned ? 0 : lines_b / (slot_lines ? slot_lines : 1));
        /* transposed: each piece of those, or of the scratch buffer's lines, a copy and a transpose */
        if (pl->b_transposed) b_ops = 3 * b_ops + 2 * (pl->dev_b_bytes / pl->dev_b_scratch_bytes + 1);
        uint64_t per_block = pl->a_pieces > 1 ? 2 + 2 * (uint64_t)(pl->a_pieces + pl->b_chunks - 1) : 3;
        if (P.th_a) per_block += (uint64_t)pl->dev_a_slot_bytes / P.th_chunk + 2;
        if (P.th_cin) per_block += (uint64_t)pl->dev_c_slot_bytes / P.th_chunk + 2;
        if (P.tho_n) per_block += (uint64_t)pl->dev_c_slot_bytes / P.tho_chunk + 2;
        uint64_t ops = per_block * (uint64_t)(pl->m_blocks * pl->n_panels * pl->k_panels) +
                       (uint64_t)(pl->n_panels * pl->k_panels) * b_ops;
        if (ops > ((uint64_t)1 << 16)) ops = (uint64_t)1 << 16;
        st = ooc_trace_begin(trace, be, (int)ops, P.s_in, err);
        if (st != OOC_SUCCESS) {
            pthread_cond_destroy(&P.cv);
            pthread_mutex_destroy(&P.mu);
            free(P.turn);
            ooc_queue_abort(queue);
            return st;
        }
        P.T = trace;
    }
    const void *unit = (p->dtype == OOC_R32 || p->dtype == OOC_C32) ? (const void *)onef : (const void *)one;
    P.unit = unit;
    for (int64_t kp = 0; kp < pl->k_panels && P.err.status == OOC_SUCCESS; kp++) {
        P.k0 = kp * pl->kb;
        P.k1 = P.k0 + pl->kb < p->k ? P.k0 + pl->kb : p->k;
        /* beta applies once: the first k-panel scales C0, later ones add to C */
        P.beta = kp == 0 ? p->beta : unit;
        P.c_read = kp > 0 || !p->beta_zero;
        P.vcin = make_view(kp == 0 ? &p->c_in : &p->C, p->layout, OOC_OP_N, P.e);
        P.stage_a = !p->A.pinned;
        P.stage_cin = P.c_read && !(kp == 0 ? p->c_in.pinned : p->C.pinned);
        P.stage_cout = !p->C.pinned;
        for (int64_t np = 0; np < pl->n_panels && P.err.status == OOC_SUCCESS; np++) {
            P.panel = kp * pl->n_panels + np;
            P.g0 = P.panel * pl->m_blocks;
            if (!ooc_queue_enter(queue, P.panel)) break; /* another device failed */
            P.c0 = np * pl->nb;
            P.c1 = P.c0 + pl->nb < p->n ? P.c0 + pl->nb : p->n;
            ooc_pipe_run_panel(&P);
        }
    }
    if (P.out_left >= 0) { /* a panel left its copies out running and no other came (stopped) */
        ooc_err_t derr;
        ooc_err_clear(&derr);
        if (P.o->stream_sync(be, P.s_out, &derr) != OOC_SUCCESS) ooc_pipe_fail(&P, &derr);
    }
    P.stats.t_end = ooc_trace_now();
    pthread_cond_destroy(&P.cv);
    pthread_mutex_destroy(&P.mu);
    free(P.turn);
    if (P.err.status != OOC_SUCCESS) {
        if (P.T) ooc_trace_discard(P.T);
        ooc_err_merge(err, &P.err);
        return P.err.status;
    }
    if (stats) *stats = P.stats;
    return OOC_SUCCESS;
}
