/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c: runs a plan on one device (see pipeline.h).
 *
 * For each panel of op(B) (kb x nb, resident), the row blocks of op(A) and C
 * go round a ring of R device slots:
 *
 *   stream in:   H2D A(i) [+ C(i) when beta != 0]          -> ev_in[s]
 *   compute:     waits ev_in[s]; gemm(i)                    -> ev_gemm[s]
 *   stream out:  waits ev_gemm[s]; D2H C(i)                 -> ev_out[s]
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

#include "pipeline.h"

#define ALIGN 256
/* turn t is claimed once the multiply of turn t - CLAIM_LAG is done (<= the ring's 2 slots at least) */
#define CLAIM_LAG 2

static size_t align_up(size_t x) { return (x + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

uint64_t ooc_res_slack(int ring) { return (uint64_t)ALIGN * (uint64_t)(3 * ring + 2); }

/* ---------- resources ---------- */

void ooc_res_release(ooc_be_t *be, ooc_res_t *res)
{
    if (be == NULL) return;
    const ooc_be_ops_t *o = be->ops;
    for (int i = 0; i < res->nevents; i++) o->event_destroy(be, res->events[i]);
    for (int i = 0; i < res->nstreams; i++) o->stream_destroy(be, res->streams[i]);
    if (res->dev) o->dev_free(be, res->dev);
    if (res->pin) o->host_free(be, res->pin);
    memset(res, 0, sizeof *res);
}

ooc_status_t ooc_res_reserve(ooc_be_t *be, ooc_res_t *res, const ooc_plan_t *pl, ooc_err_t *err)
{
    const ooc_be_ops_t *o = be->ops;
    OOC_RETURN_ERROR_IF(pl->ring > OOC_MAX_RING || pl->streams > OOC_MAX_STREAMS, err,
                        OOC_ERR_INTERNAL, "plan with %d slots, %d streams exceeds the limits",
                        pl->ring, pl->streams);
    size_t slack = (size_t)ooc_res_slack(pl->ring);
    size_t dev = (size_t)pl->device_bytes + slack;
    if (res->dev_bytes < dev) {
        if (res->dev) o->dev_free(be, res->dev);
        res->dev = NULL;
        res->dev_bytes = 0;
        OOC_FORWARD(o->dev_alloc(be, dev, &res->dev, err));
        res->dev_bytes = dev;
    }
    size_t pin = pl->host_bytes ? (size_t)pl->host_bytes + slack : 0;
    if (res->pin_bytes < pin) {
        if (res->pin) o->host_free(be, res->pin);
        res->pin = NULL;
        res->pin_bytes = 0;
        OOC_FORWARD(o->host_alloc(be, pin, &res->pin, err));
        res->pin_bytes = pin;
    }
    while (res->nstreams < pl->streams) {
        OOC_FORWARD(o->stream_create(be, &res->streams[res->nstreams], err));
        res->nstreams++;
    }
    while (res->nevents < 3 * pl->ring + OOC_MAX_B_CHUNKS) {
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

/* ---------- views of the operands ---------- */

/* op(X) or C as stored: element (i, j) at i + j*ld (rows contiguous) or
 * i*ld + j (columns contiguous), in memory or in a file. */
typedef struct {
    const ooc_src_t *src;
    int rows_contig;
    size_t e;
} view_t;

/* A rectangle of a view as a 2-D copy: height lines of width bytes, line r
 * at ptr + r*pitch (memory) or byte off + r*pitch of fd (file). */
typedef struct {
    const char *ptr;
    uint64_t off;
    int fd;
    const char *name;
    size_t width, height, pitch;
} rect_t;

static view_t make_view(const ooc_src_t *src, ooc_layout_t layout, ooc_op_t op, size_t e)
{
    view_t v = {src, (layout == OOC_COL_MAJOR) == (op == OOC_OP_N), e};
    return v;
}

static rect_t rect(const view_t *v, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    rect_t r;
    size_t ld = (size_t)v->src->ld, at;
    r.pitch = ld * v->e;
    if (v->rows_contig) {
        at = ((size_t)r0 + (size_t)c0 * ld) * v->e;
        r.width = (size_t)(r1 - r0) * v->e;
        r.height = (size_t)(c1 - c0);
    } else {
        at = ((size_t)r0 * ld + (size_t)c0) * v->e;
        r.width = (size_t)(c1 - c0) * v->e;
        r.height = (size_t)(r1 - r0);
    }
    r.fd = v->src->fd;
    r.name = v->src->name;
    r.ptr = r.fd < 0 ? (const char *)v->src->ptr + at : NULL;
    r.off = v->src->off + at;
    return r;
}

/* ---------- the shared queue of row blocks ---------- */

void ooc_queue_init(ooc_queue_t *q, const ooc_plan_t *pl, const unsigned char *done, int devices)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    q->pl = pl;
    q->done = done;
    q->devices = devices;
    q->panel = -1;
    q->left_panel = -1;
    for (int j = 0; j < OOC_MAX_B_CHUNKS; j++) q->posted[j] = -1;
}

void ooc_queue_destroy(ooc_queue_t *q)
{
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
}

int ooc_queue_enter(ooc_queue_t *q, int64_t panel)
{
    pthread_mutex_lock(&q->mu);
    if (++q->arrived == q->devices) { /* the last one in opens the panel */
        q->arrived = 0;
        q->panel = panel;
        q->next = 0;
        int64_t g0 = panel * q->pl->m_blocks;
        q->needed = 0;
        for (int64_t i = 0; i < q->pl->m_blocks && !q->needed; i++) q->needed = !ooc_block_done(q->done, g0 + i);
        pthread_cond_broadcast(&q->cv);
    }
    while (q->panel < panel && !q->aborted) pthread_cond_wait(&q->cv, &q->mu);
    int ok = !q->aborted;
    pthread_mutex_unlock(&q->mu);
    return ok;
}

int64_t ooc_queue_claim(ooc_queue_t *q, int64_t panel)
{
    pthread_mutex_lock(&q->mu);
    int64_t b = -1, g0 = panel * q->pl->m_blocks;
    if (!q->aborted && q->panel == panel) {
        while (q->next < q->pl->m_blocks && ooc_block_done(q->done, g0 + q->next)) q->next++;
        if (q->next < q->pl->m_blocks) b = q->next++;
    }
    pthread_mutex_unlock(&q->mu);
    return b;
}

void ooc_queue_abort(ooc_queue_t *q)
{
    pthread_mutex_lock(&q->mu);
    q->aborted = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void ooc_queue_register(ooc_queue_t *q, int rank, ooc_be_t *be, char *dB, const ooc_event_t *ev_b)
{
    pthread_mutex_lock(&q->mu);
    q->be[rank] = be;
    q->dB[rank] = dB;
    memcpy(q->ev_b[rank], ev_b, sizeof q->ev_b[rank]);
    pthread_mutex_unlock(&q->mu);
}

void ooc_queue_post(ooc_queue_t *q, int j, int64_t panel)
{
    pthread_mutex_lock(&q->mu);
    q->posted[j] = panel;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

int ooc_queue_wait_posted(ooc_queue_t *q, int j, int64_t panel, ooc_be_t **be, char **dB, ooc_event_t *ev)
{
    pthread_mutex_lock(&q->mu);
    while (q->posted[j] < panel && !q->aborted) pthread_cond_wait(&q->cv, &q->mu);
    int ok = !q->aborted, owner = j % q->devices;
    *be = q->be[owner];
    *dB = q->dB[owner];
    *ev = q->ev_b[owner][j];
    pthread_mutex_unlock(&q->mu);
    return ok;
}

int ooc_queue_leave(ooc_queue_t *q, int64_t panel)
{
    pthread_mutex_lock(&q->mu);
    if (++q->left == q->devices) {
        q->left = 0;
        q->left_panel = panel;
        pthread_cond_broadcast(&q->cv);
    }
    while (q->left_panel < panel && !q->aborted) pthread_cond_wait(&q->cv, &q->mu);
    int ok = !q->aborted;
    pthread_mutex_unlock(&q->mu);
    return ok;
}

/* ---------- the run ---------- */

/* Within a panel a pipeline numbers the blocks it runs 0, 1, 2, ... in the
 * order it claimed them ("turns"); slots, events and the progress counters
 * go by turn, the rows and the journal by block. */
typedef struct {
    ooc_be_t *be;
    const ooc_be_ops_t *o;
    ooc_pool_t *pool;
    const ooc_problem_t *p;
    const ooc_plan_t *pl;
    const ooc_pipe_hooks_t *hooks;
    ooc_queue_t *q;
    int rank;            /* this pipeline's number in the queue */
    int share;           /* op(B) shared between the devices (pipeline.h) */
    size_t e;
    int R;
    view_t va, vb, vc, vcin;
    char *dB, *dA[OOC_MAX_RING], *dC[OOC_MAX_RING];
    char *pin_in[OOC_MAX_RING], *pin_out[OOC_MAX_RING];
    ooc_event_t ev_in[OOC_MAX_RING], ev_gemm[OOC_MAX_RING], ev_out[OOC_MAX_RING];
    ooc_event_t ev_b[OOC_MAX_B_CHUNKS]; /* chunk j of op(B)'s panel is on the device */
    const void *unit;    /* 1 in the element type */
    ooc_stream_t s_in, s_out, s_comp[OOC_MAX_STREAMS];
    int ncomp;
    /* the panel being run */
    int64_t panel;       /* its number for the queue */
    int64_t k0, k1, c0, c1;
    int64_t g0;          /* number of the panel's block 0 */
    int c_read;          /* C blocks are read in for this panel */
    const void *beta;    /* beta for this panel */
    int stage_a, stage_cin, stage_cout;
    int64_t *turn;       /* turn t runs block turn[t] of the panel (m_blocks entries) */
    /* progress, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t claimed;     /* turns with a block */
    int no_more;         /* the queue had no block for turn `claimed` */
    int issuer_done;     /* the issuing thread left the panel (every issued turn is final) */
    int64_t staged;      /* turns whose inputs the reader put in pinned slots */
    int64_t issued_in;   /* turns whose H2D was issued (ev_in recorded) */
    int64_t issued;      /* turns whose D2H was issued (ev_out recorded) */
    int64_t written;     /* turns the writer copied out of pinned slots */
    int64_t b_staged;    /* 1: op(B)'s panel no longer needs the pinned slots */
    int abort;
    ooc_err_t err;       /* first failure of any thread */
    ooc_pipe_stats_t stats; /* bus bytes: issuing thread; staged bytes: under mu */
    ooc_trace_t *T;      /* NULL: not tracing */
} pipe_t;

/* Bracket a device op on stream s for the trace (no-ops when not tracing). */
#define TR_START(P, s) ((P)->T ? ooc_trace_start((P)->T, (s)) : -1)
#define TR_END(P, s, h, name, lane, blk)                                                           \
    do {                                                                                           \
        if ((P)->T) ooc_trace_end((P)->T, (s), (h), (name), (lane), (blk));                        \
    } while (0)

/* A host staging step, timed for the trace and named for profilers. */
typedef struct {
    double t0;
} host_step_t;

static host_step_t step_begin(pipe_t *P, const char *name)
{
    P->o->range_push(P->be, name);
    host_step_t h = {P->T ? ooc_trace_now() : 0};
    return h;
}

static void step_end(pipe_t *P, host_step_t h, const char *name, int lane, int64_t block)
{
    P->o->range_pop(P->be);
    if (P->T) ooc_trace_host(P->T, name, lane, block, h.t0, ooc_trace_now());
}

static void fail(pipe_t *P, const ooc_err_t *e)
{
    pthread_mutex_lock(&P->mu);
    ooc_err_merge(&P->err, e);
    P->abort = 1;
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
}

static void advance(pipe_t *P, int64_t *counter, int64_t value)
{
    pthread_mutex_lock(&P->mu);
    *counter = value;
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
}

/* wait until *counter >= target; 0 if the run was aborted meanwhile */
static int await(pipe_t *P, const int64_t *counter, int64_t target)
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
static int64_t block_of(pipe_t *P, int64_t t)
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

/* Bytes over the bus and through the staging ring. Under mu: the issuing
 * thread and the reader and writer count, and the writer copies the stats
 * for block_done. */
static void count(pipe_t *P, uint64_t h2d, uint64_t d2h, uint64_t staged_in, uint64_t staged_out)
{
    pthread_mutex_lock(&P->mu);
    P->stats.bytes_h2d += h2d;
    P->stats.bytes_d2h += d2h;
    P->stats.bytes_staged_in += staged_in;
    P->stats.bytes_staged_out += staged_out;
    pthread_mutex_unlock(&P->mu);
}

static void block_rows(const pipe_t *P, int64_t i, int64_t *r0, int64_t *r1) { ooc_plan_block(P->pl, i, r0, r1); }

static int slot_of(const pipe_t *P, int64_t t) { return (int)(t % P->R); }
static int reuses_slot(const pipe_t *P, int64_t t) { return t >= P->R; }

static ooc_status_t io_fail(int e, const char *what, const rect_t *r, ooc_err_t *err)
{
    if (e == -1)
        return OOC_ERR_FILE(err, OOC_ERR_FORMAT, r->name, "%s %s: file ended before byte %llu (truncated)", what,
                            r->name, (unsigned long long)(r->off + (r->height - 1) * r->pitch + r->width));
    return OOC_ERR_FILE(err, ooc_errno_status(e), r->name, "%s %s: %s (at byte %llu)", what, r->name, strerror(e),
                        (unsigned long long)r->off);
}

/* rectangle -> packed buffer (line pitch = width) */
static ooc_status_t stage_in(pipe_t *P, char *dst, const rect_t *r, ooc_err_t *err)
{
    if (r->fd < 0) {
        ooc_pool_copy2d(P->pool, dst, r->width, r->ptr, r->pitch, r->width, r->height);
    } else {
        int e = ooc_pool_pread2d(P->pool, dst, r->width, r->fd, r->off, r->pitch, r->width, r->height);
        if (e) return io_fail(e, "pread", r, err);
    }
    count(P, 0, 0, r->width * r->height, 0);
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
    count(P, 0, 0, 0, r->width * r->height);
    return OOC_SUCCESS;
}

/* bytes of slot-in taken by the A part (when A is staged) */
static size_t a_part(const pipe_t *P, const rect_t *ra) { return P->stage_a ? align_up(ra->width * ra->height) : 0; }

static void *reader_main(void *arg)
{
    pipe_t *P = arg;
    ooc_err_t err;
    ooc_err_clear(&err);
    if (P->o->activate(P->be, &err) != OOC_SUCCESS) goto failed;
    for (int64_t t = 0;; t++) {
        int s = slot_of(P, t);
        /* the first turn is staged at once; the others after op(B)'s chunks,
         * which go through the same slots */
        if (t > 0 && !await(P, &P->b_staged, 1)) return NULL;
        /* the block is claimed only once turn t - CLAIM_LAG is multiplied
         * (see claim_when_free), which also frees slot s of turn t - R */
        if (t >= CLAIM_LAG) {
            if (!await(P, &P->issued, t - CLAIM_LAG + 1)) return NULL;
            if (P->o->event_sync(P->be, P->ev_gemm[slot_of(P, t - CLAIM_LAG)], &err) != OOC_SUCCESS) goto failed;
        }
        /* slot s may still feed the H2D of a chunk of op(B) */
        if (P->o->event_sync(P->be, P->ev_in[s], &err) != OOC_SUCCESS) goto failed;
        int64_t i = block_of(P, t);
        if (i < 0) break;
        int64_t r0, r1;
        block_rows(P, i, &r0, &r1);
        rect_t ra = rect(&P->va, r0, r1, P->k0, P->k1);
        host_step_t hs = step_begin(P, "stage A");
        if (P->stage_a && stage_in(P, P->pin_in[s], &ra, &err) != OOC_SUCCESS) goto failed;
        if (P->stage_cin) {
            rect_t rc = rect(&P->vcin, r0, r1, P->c0, P->c1);
            if (stage_in(P, P->pin_in[s] + a_part(P, &ra), &rc, &err) != OOC_SUCCESS) goto failed;
        }
        step_end(P, hs, P->stage_cin ? (P->stage_a ? "stage A+C" : "stage C") : "stage A", OOC_LANE_READ, P->g0 + i);
        advance(P, &P->staged, t + 1);
    }
    return NULL;
failed:
    fail(P, &err);
    return NULL;
}

static void *writer_main(void *arg)
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
        host_step_t hs = step_begin(P, "unstage C");
        if (stage_out(P, &rc, P->pin_out[s], &err) != OOC_SUCCESS) goto failed;
        step_end(P, hs, "unstage C", OOC_LANE_WRITE, P->g0 + i);
        if (P->hooks && P->hooks->block_done) {
            pthread_mutex_lock(&P->mu);
            ooc_pipe_stats_t so_far = P->stats;
            pthread_mutex_unlock(&P->mu);
            if (P->hooks->block_done(P->hooks->user, P->g0 + i, &so_far, &err) != OOC_SUCCESS) goto failed;
        }
        advance(P, &P->written, t + 1);
    }
    return NULL;
failed:
    fail(P, &err);
    return NULL;
}

/* Lines [l0, l1) of op(B)'s panel rectangle that chunk j holds. */
static void b_chunk_lines(const pipe_t *P, size_t height, int j, size_t *l0, size_t *l1)
{
    *l0 = height * (size_t)j / (size_t)P->pl->b_chunks;
    *l1 = height * (size_t)(j + 1) / (size_t)P->pl->b_chunks;
}

/* Upload the resident panel op(B)[k0:k1, c0:c1] into dB (stream in), chunk
 * by chunk, recording ev_b[j] when chunk j is there. op(B) shared: only
 * this device's chunks come from the host (each posted for the others);
 * then, with `all`, every other chunk is copied from its owner (stream out:
 * idle at the start of a panel, and the first copy-out needs all of op(B)
 * anyway). *stopped = 1 when the queue was aborted while waiting for a
 * chunk (another device failed: this one stops where it is). */
static ooc_status_t upload_b(pipe_t *P, int all, int *stopped, ooc_err_t *err)
{
    *stopped = 0;
    rect_t rb = rect(&P->vb, P->k0, P->k1, P->c0, P->c1);
    size_t lines = P->p->B.pinned ? rb.height : P->pl->pin_in_slot_bytes / rb.width;
    OOC_RETURN_ERROR_IF(lines == 0, err, OOC_ERR_INTERNAL, "staging slot (%llu bytes) smaller than a line of B (%zu)",
                        (unsigned long long)P->pl->pin_in_slot_bytes, rb.width);
    int64_t used = 0; /* slots used by staged pieces */
    for (int j = 0; j < P->pl->b_chunks; j++) {
        if (P->share && j % P->q->devices != P->rank) continue;
        size_t c0, c1;
        b_chunk_lines(P, rb.height, j, &c0, &c1);
        /* pageable or a file: pieces of whole lines through the pinned in-slots,
         * the host copy of piece p+1 overlapping the H2D of piece p */
        for (size_t l0 = c0; l0 < c1; l0 += lines) {
            size_t h = c1 - l0 < lines ? c1 - l0 : lines;
            rect_t piece = rb;
            piece.height = h;
            if (piece.ptr) piece.ptr += l0 * rb.pitch;
            piece.off += l0 * rb.pitch;
            const char *src = piece.ptr;
            size_t spitch = rb.pitch;
            if (!P->p->B.pinned) {
                int s = (int)(used++ % P->R);
                OOC_FORWARD(P->o->event_sync(P->be, P->ev_in[s], err));
                host_step_t hs = step_begin(P, "stage B");
                OOC_FORWARD(stage_in(P, P->pin_in[s], &piece, err));
                step_end(P, hs, "stage B", OOC_LANE_READ, P->g0);
                src = P->pin_in[s];
                spitch = rb.width;
                int tr = TR_START(P, P->s_in);
                OOC_FORWARD(P->o->copy2d(P->be, P->dB + l0 * rb.width, rb.width, src, spitch, rb.width, h, OOC_H2D, P->s_in, err));
                TR_END(P, P->s_in, tr, "H2D B", OOC_LANE_IN, P->g0);
                OOC_FORWARD(P->o->event_record(P->be, P->ev_in[s], P->s_in, err));
            } else {
                int tr = TR_START(P, P->s_in);
                OOC_FORWARD(P->o->copy2d(P->be, P->dB + l0 * rb.width, rb.width, src, spitch, rb.width, h, OOC_H2D, P->s_in, err));
                TR_END(P, P->s_in, tr, "H2D B", OOC_LANE_IN, P->g0);
            }
            count(P, rb.width * h, 0, 0, 0);
        }
        OOC_FORWARD(P->o->event_record(P->be, P->ev_b[j], P->s_in, err));
        if (P->share) ooc_queue_post(P->q, j, P->panel);
    }
    advance(P, &P->b_staged, 1);
    for (int j = 0; P->share && all && j < P->pl->b_chunks; j++) {
        if (j % P->q->devices == P->rank) continue;
        ooc_be_t *owner;
        char *from;
        ooc_event_t there;
        if (!ooc_queue_wait_posted(P->q, j, P->panel, &owner, &from, &there)) {
            *stopped = 1;
            return OOC_SUCCESS;
        }
        size_t c0, c1;
        b_chunk_lines(P, rb.height, j, &c0, &c1);
        size_t bytes = (c1 - c0) * rb.width;
        OOC_FORWARD(P->o->stream_wait(P->be, P->s_out, there, err));
        if (bytes > 0) {
            int tr = TR_START(P, P->s_out);
            OOC_FORWARD(P->o->copy_peer(P->be, P->dB + c0 * rb.width, owner, from + c0 * rb.width, bytes, P->s_out, err));
            TR_END(P, P->s_out, tr, "peer B", OOC_LANE_OUT, P->g0);
            pthread_mutex_lock(&P->mu);
            P->stats.bytes_peer += bytes;
            pthread_mutex_unlock(&P->mu);
        }
        OOC_FORWARD(P->o->event_record(P->be, P->ev_b[j], P->s_out, err));
    }
    return OOC_SUCCESS;
}

/* Turn t's copy-in (stream in): A's rows and, when read, C's. */
static ooc_status_t issue_in(pipe_t *P, int64_t t, ooc_err_t *err)
{
    const ooc_be_ops_t *o = P->o;
    ooc_be_t *be = P->be;
    int s = slot_of(P, t);
    int64_t i = P->turn[t], r0, r1;
    block_rows(P, i, &r0, &r1);
    rect_t ra = rect(&P->va, r0, r1, P->k0, P->k1);

    if ((P->stage_a || P->stage_cin) && !await(P, &P->staged, t + 1)) return OOC_ERR_INTERNAL; /* aborted */

    /* slot s must be free of turn t - R (its gemm read A; its D2H read C) */
    if (reuses_slot(P, t)) {
        OOC_FORWARD(o->stream_wait(be, P->s_in, P->ev_gemm[s], err));
        if (P->c_read) OOC_FORWARD(o->stream_wait(be, P->s_in, P->ev_out[s], err));
    }
    int tr = TR_START(P, P->s_in);
    if (P->stage_a)
        OOC_FORWARD(o->copy2d(be, P->dA[s], ra.width, P->pin_in[s], ra.width, ra.width, ra.height, OOC_H2D, P->s_in, err));
    else
        OOC_FORWARD(o->copy2d(be, P->dA[s], ra.width, ra.ptr, ra.pitch, ra.width, ra.height, OOC_H2D, P->s_in, err));
    count(P, ra.width * ra.height, 0, 0, 0);
    if (P->c_read) {
        rect_t rci = rect(&P->vcin, r0, r1, P->c0, P->c1);
        if (P->stage_cin)
            OOC_FORWARD(o->copy2d(be, P->dC[s], rci.width, P->pin_in[s] + a_part(P, &ra), rci.width, rci.width, rci.height, OOC_H2D, P->s_in, err));
        else
            OOC_FORWARD(o->copy2d(be, P->dC[s], rci.width, rci.ptr, rci.pitch, rci.width, rci.height, OOC_H2D, P->s_in, err));
        count(P, rci.width * rci.height, 0, 0, 0);
    }
    TR_END(P, P->s_in, tr, P->c_read ? "H2D A+C" : "H2D A", OOC_LANE_IN, P->g0 + i);
    OOC_FORWARD(o->event_record(be, P->ev_in[s], P->s_in, err));
    advance(P, &P->issued_in, t + 1);
    return OOC_SUCCESS;
}

/* Turn t's multiply and copy-out. A lead block (pipeline.h) is multiplied
 * chunk by chunk of op(B), waiting for each chunk; the first turn of any
 * other block waits for all of op(B). */
static ooc_status_t issue_rest(pipe_t *P, int64_t t, ooc_err_t *err)
{
    const ooc_be_ops_t *o = P->o;
    ooc_be_t *be = P->be;
    int s = slot_of(P, t);
    int64_t i = P->turn[t], r0, r1;
    block_rows(P, i, &r0, &r1);
    rect_t ra = rect(&P->va, r0, r1, P->k0, P->k1);
    rect_t rc = rect(&P->vc, r0, r1, P->c0, P->c1);
    rect_t rb = rect(&P->vb, P->k0, P->k1, P->c0, P->c1);
    int split = i < P->pl->lead && P->pl->b_chunks > 1;

    ooc_stream_t sc = P->s_comp[t % P->ncomp];
    OOC_FORWARD(o->stream_wait(be, sc, P->ev_in[s], err));
    if (reuses_slot(P, t) && !P->c_read) /* C part of slot s still being copied out */
        OOC_FORWARD(o->stream_wait(be, sc, P->ev_out[s], err));
    const ooc_problem_t *p = P->p;
    ooc_tile_gemm_t g = {p->dtype, p->layout, p->ta, p->tb, (int)(r1 - r0), (int)(P->c1 - P->c0),
                         (int)(P->k1 - P->k0), p->alpha, P->beta, P->dA[s], P->dB, P->dC[s],
                         (int)(ra.width / P->e), (int)(rb.width / P->e), (int)(rc.width / P->e)};
    int chunks = split ? P->pl->b_chunks : 1;
    for (int j = 0; j < chunks; j++) {
        ooc_tile_gemm_t q = g;
        if (split) {
            OOC_FORWARD(o->stream_wait(be, sc, P->ev_b[j], err));
            size_t l0, l1;
            b_chunk_lines(P, rb.height, j, &l0, &l1);
            if (l1 == l0) continue;
            q.B = P->dB + l0 * rb.width;
            if (P->vb.rows_contig) { /* lines of op(B) are its columns: C[:, l0:l1] = A B[:, l0:l1] */
                q.n = (int)(l1 - l0);
                q.C = P->dC[s] + (P->vc.rows_contig ? l0 * rc.width : l0 * P->e);
            } else { /* lines are rows: C += A[:, l0:l1] B[l0:l1, :], beta only the first time */
                q.k = (int)(l1 - l0);
                q.A = P->dA[s] + (P->va.rows_contig ? l0 * ra.width : l0 * P->e);
                if (j > 0) q.beta = P->unit;
            }
        } else if (t == 0) { /* all of op(B): its chunks may come on two streams (shared) */
            for (int c = 0; c < P->pl->b_chunks; c++) OOC_FORWARD(o->stream_wait(be, sc, P->ev_b[c], err));
        }
        int tr = TR_START(P, sc);
        OOC_FORWARD(o->gemm(be, sc, &q, err));
        TR_END(P, sc, tr, split ? "gemm (chunk of B)" : "gemm", OOC_LANE_COMPUTE, P->g0 + i);
    }
    OOC_FORWARD(o->event_record(be, P->ev_gemm[s], sc, err));

    /* out */
    OOC_FORWARD(o->stream_wait(be, P->s_out, P->ev_gemm[s], err));
    if (P->stage_cout && reuses_slot(P, t) && !await(P, &P->written, t - P->R + 1)) return OOC_ERR_INTERNAL; /* aborted */
    int tr = TR_START(P, P->s_out);
    if (P->stage_cout)
        OOC_FORWARD(o->copy2d(be, P->pin_out[s], rc.width, P->dC[s], rc.width, rc.width, rc.height, OOC_D2H, P->s_out, err));
    else
        OOC_FORWARD(o->copy2d(be, (char *)rc.ptr, rc.pitch, P->dC[s], rc.width, rc.width, rc.height, OOC_D2H, P->s_out, err));
    TR_END(P, P->s_out, tr, "D2H C", OOC_LANE_OUT, P->g0 + i);
    count(P, 0, rc.width * rc.height, 0, 0);
    OOC_FORWARD(o->event_record(be, P->ev_out[s], P->s_out, err));
    pthread_mutex_lock(&P->mu);
    P->stats.blocks++;
    P->issued = t + 1;
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
    return OOC_SUCCESS;
}

/* Before block i is started: has the caller asked the run to stop? */
static ooc_status_t check_cancel(pipe_t *P, int64_t i, ooc_err_t *err)
{
    if (P->hooks == NULL || P->hooks->cancel == NULL || !atomic_load(P->hooks->cancel)) return OOC_SUCCESS;
    return OOC_ERR(err, OOC_ERR_CANCELLED, "cancelled before block %lld of %lld", (long long)(P->g0 + i),
                   (long long)(P->pl->m_blocks * P->pl->n_panels * P->pl->k_panels));
}

/* Wait for everything queued on our streams (not the whole device). */
static ooc_status_t drain(pipe_t *P, ooc_err_t *err)
{
    ooc_status_t st = P->o->stream_sync(P->be, P->s_in, err);
    for (int c = 0; c < P->ncomp; c++) {
        ooc_status_t t = P->o->stream_sync(P->be, P->s_comp[c], err);
        if (st == OOC_SUCCESS) st = t;
    }
    ooc_status_t t = P->o->stream_sync(P->be, P->s_out, err);
    return st == OOC_SUCCESS ? t : st;
}

/* The block of turn t for the issuing thread. A block is claimed from the
 * shared queue only when this device is about to start on it: once the
 * multiply of turn t - CLAIM_LAG is done (one block computing, the next
 * copying in). Issuing alone never blocks (the waits are on the device), so
 * without this one device could claim every block before the others start;
 * and the fewer blocks a device holds, the closer together all finish. */
static ooc_status_t claim_when_free(pipe_t *P, int64_t t, int64_t *block, ooc_err_t *err)
{
    if (t >= CLAIM_LAG) OOC_FORWARD(P->o->event_sync(P->be, P->ev_gemm[slot_of(P, t - CLAIM_LAG)], err));
    *block = block_of(P, t);
    return OOC_SUCCESS;
}

static ooc_status_t run_panel(pipe_t *P)
{
    ooc_err_t err;
    ooc_err_clear(&err);
    P->claimed = P->staged = P->issued_in = P->issued = P->written = P->b_staged = 0;
    P->no_more = P->issuer_done = 0;
    pthread_t reader, writer;
    int have_reader = 0, have_writer = 0;

    ooc_status_t st = OOC_SUCCESS;
    if (P->stage_a || P->stage_cin) {
        int rc = pthread_create(&reader, NULL, reader_main, P);
        if (rc != 0) st = OOC_ERR(&err, OOC_ERR_THREAD, "pthread_create: error %d (reader)", rc);
        have_reader = rc == 0;
    }
    if (st == OOC_SUCCESS && P->stage_cout) {
        int rc = pthread_create(&writer, NULL, writer_main, P);
        if (rc != 0) st = OOC_ERR(&err, OOC_ERR_THREAD, "pthread_create: error %d (writer)", rc);
        have_writer = rc == 0;
    }
    /* the first turn's copy-in, then op(B) in chunks, the first turn's
     * multiply, then the other turns; a device that gets no block of the
     * panel does not upload op(B), unless op(B) is shared: then its chunks
     * are uploaded all the same, for the others */
    int64_t i;
    int stopped = 0;
    for (int64_t t = 0; st == OOC_SUCCESS && !stopped && (st = claim_when_free(P, t, &i, &err)) == OOC_SUCCESS && i >= 0;
         t++) {
        st = check_cancel(P, i, &err);
        if (st == OOC_SUCCESS) st = issue_in(P, t, &err);
        if (st == OOC_SUCCESS && t == 0) st = upload_b(P, 1, &stopped, &err);
        if (st == OOC_SUCCESS && !stopped) st = issue_rest(P, t, &err);
    }
    if (st != OOC_SUCCESS) {
        fail(P, &err); /* stop the reader and writer, and the other devices */
        ooc_queue_abort(P->q);
    }
    pthread_mutex_lock(&P->mu);
    /* stopped (another device failed while this one waited for a chunk of
     * op(B)): the reader and writer stop too, without an error of ours (the
     * reader may wait for a multiply that will never be issued) */
    if (stopped) P->abort = 1;
    P->issuer_done = 1;
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
    if (have_reader) pthread_join(reader, NULL);
    if (have_writer) pthread_join(writer, NULL);
    /* op(B) shared and no block for this device: its chunks are uploaded
     * all the same, for the others (after the reader has left: they share
     * the pinned slots and their events) */
    if (st == OOC_SUCCESS && P->share && !stopped && P->claimed == 0 && P->q->needed && !P->abort) {
        st = upload_b(P, 0, &stopped, &err);
        if (st != OOC_SUCCESS) {
            fail(P, &err);
            ooc_queue_abort(P->q);
        }
    }
    ooc_err_t derr;
    ooc_err_clear(&derr);
    ooc_status_t dst = drain(P, &derr); /* also after a failure: buffers must be idle */
    if (dst != OOC_SUCCESS) fail(P, &derr);
    if (P->err.status != OOC_SUCCESS) ooc_queue_abort(P->q); /* a reader's or writer's failure */
    /* shared op(B): the others may still copy from ours until all are done */
    if (P->err.status == OOC_SUCCESS && P->share) (void)ooc_queue_leave(P->q, P->panel);
    return P->err.status;
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
    P.be = be;
    P.o = be->ops;
    P.pool = pool;
    P.p = p;
    P.pl = pl;
    P.hooks = hooks;
    P.q = queue;
    P.rank = rank;
    P.share = queue->share; /* set by multi.c only for several devices */
    P.e = ooc_dtype_size(p->dtype);
    P.R = pl->ring;
    P.va = make_view(&p->A, p->layout, p->ta, P.e);
    P.vb = make_view(&p->B, p->layout, p->tb, P.e);
    P.vc = make_view(&p->C, p->layout, OOC_OP_N, P.e);
    P.vcin = make_view(&p->c_in, p->layout, OOC_OP_N, P.e);
    ooc_status_t st = OOC_SUCCESS;
    if (res->nstreams < pl->streams || res->nevents < 3 * pl->ring + OOC_MAX_B_CHUNKS || pl->streams < 3)
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
    for (int s = 0; s < P.R; s++) {
        P.dA[s] = d;
        d += align_up((size_t)pl->dev_a_slot_bytes);
        P.dC[s] = d;
        d += align_up((size_t)pl->dev_c_slot_bytes);
        P.ev_in[s] = res->events[3 * s];
        P.ev_gemm[s] = res->events[3 * s + 1];
        P.ev_out[s] = res->events[3 * s + 2];
    }
    for (int j = 0; j < OOC_MAX_B_CHUNKS; j++) P.ev_b[j] = res->events[3 * P.R + j];
    if (P.share) ooc_queue_register(queue, rank, be, P.dB, P.ev_b);
    char *h = res->pin;
    for (int s = 0; h && s < P.R; s++) {
        P.pin_in[s] = h;
        h += align_up((size_t)pl->pin_in_slot_bytes + ALIGN); /* + room for the A/C split */
        P.pin_out[s] = h;
        h += align_up((size_t)pl->pin_out_slot_bytes);
    }
    P.s_in = res->streams[0];
    P.s_out = res->streams[1];
    P.ncomp = pl->streams - 2;
    for (int c = 0; c < P.ncomp; c++) P.s_comp[c] = res->streams[2 + c];
    pthread_mutex_init(&P.mu, NULL);
    pthread_cond_init(&P.cv, NULL);

    if (trace) {
        /* every block's three ops and every chunk of B, within reason */
        uint64_t lines_b = (uint64_t)(pl->kb > pl->nb ? pl->kb : pl->nb);
        uint64_t chunk = pl->pin_in_slot_bytes / (P.e * (uint64_t)(pl->kb < pl->nb ? pl->kb : pl->nb) + 1) + 1;
        uint64_t ops = 3 * (uint64_t)(pl->m_blocks * pl->n_panels * pl->k_panels) +
                       (uint64_t)(pl->n_panels * pl->k_panels) * (lines_b / chunk + 2 + OOC_MAX_B_CHUNKS);
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
            run_panel(&P);
        }
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
