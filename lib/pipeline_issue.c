/* SPDX-License-Identifier: MIT */
/*
 * pipeline_issue.c: the issuing thread of a pipeline (see pipeline.c): for
 * each turn of a panel, claim a block, issue its copy-in, multiply and
 * copy-out on our streams with events between them, and op(B)'s panel chunk
 * by chunk; start and join the panel's reader and writer. Issuing never
 * waits on the whole device, only on our own events and streams.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>

#include "pipeline_int.h"

/* Lines [l0, l1) of op(B)'s panel rectangle (height lines) that chunk j
 * holds; with A in k-pieces, C's columns that the last piece's chunk j
 * multiplies (height: the panel's columns). */
static void b_chunk_lines(const pipe_t *P, size_t height, int j, size_t *l0, size_t *l1)
{
    part_of(P, height, (size_t)P->pl->b_chunks, (size_t)j, l0, l1);
}

/* The most lines of op(B) one transpose takes (ooc_be_ops_t transpose: n
 * at most 2^21 - 32) */
#define TR_MAX_LINES ((size_t)1 << 20)

/* Lines [l0, l0 + h) of op(B)'s panel as stored (rb), from src (pitch
 * spitch), into dB on the in stream: straight, or with btr (lines: rows of
 * op(B)) a piece at a time through the two scratch buffers, from which s_tr
 * transposes each into its place (its rows in dB, whose lines are op(B)'s
 * columns). Once b_done_stream has done what is issued here, the lines are
 * in place. */
static ooc_status_t b_lines_up(pipe_t *P, const rect_t *rb, size_t l0, size_t h, const char *src, size_t spitch,
                               const char *name, ooc_err_t *err)
{
    const ooc_be_ops_t *o = P->o;
    size_t tp = dev_pitch(P, rb->width);
    if (!P->btr) {
        int tr = TR_START(P, P->s_in);
        OOC_FORWARD(o->copy2d(P->be, P->dB + l0 * tp, tp, src, spitch, rb->width, h, OOC_H2D, P->s_in, err));
        TR_END(P, P->s_in, tr, name, OOC_LANE_IN, P->g0);
        return OOC_SUCCESS;
    }
    size_t cap = (size_t)P->pl->dev_b_scratch_bytes / tp; /* (>= 1 line: plan.c b_scratch) */
    if (cap > TR_MAX_LINES) cap = TR_MAX_LINES;
    OOC_RETURN_ERROR_IF(cap == 0, err, OOC_ERR_INTERNAL, "transpose buffer (%llu bytes) smaller than a line of B (%zu)",
                        (unsigned long long)P->pl->dev_b_scratch_bytes, tp);
    int ldt = (int)(dev_pitch(P, b_dev_width(P, rb)) / P->e);
    for (size_t at = 0; at < h; at += cap) {
        size_t n = h - at < cap ? h - at : cap;
        int u = (int)(P->tr_used++ % 2);
        /* buffer u's last transpose has read it (an event never recorded is complete) */
        OOC_FORWARD(o->stream_wait(P->be, P->s_in, P->ev_tr[u], err));
        int tr = TR_START(P, P->s_in);
        OOC_FORWARD(o->copy2d(P->be, P->dT[u], tp, src + at * spitch, spitch, rb->width, n, OOC_H2D, P->s_in, err));
        TR_END(P, P->s_in, tr, name, OOC_LANE_IN, P->g0);
        OOC_FORWARD(o->event_record(P->be, P->ev_tin[u], P->s_in, err));
        OOC_FORWARD(o->stream_wait(P->be, P->s_tr, P->ev_tin[u], err));
        tr = TR_START(P, P->s_tr);
        OOC_FORWARD(o->transpose(P->be, P->s_tr, P->p->dtype, (int)(rb->width / P->e), (int)n, P->dT[u],
                                 (int)(tp / P->e), P->dB + b_dev_row(P, rb, l0 + at), ldt, err));
        TR_END(P, P->s_tr, tr, "transpose B", OOC_LANE_COMPUTE, P->g0);
        OOC_FORWARD(o->event_record(P->be, P->ev_tr[u], P->s_tr, err));
    }
    return OOC_SUCCESS;
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
    size_t db = dev_pitch(P, rb.width); /* (shared: never transposed) */
    size_t lines = P->p->B.pinned ? rb.height : P->pl->pin_in_slot_bytes / rb.width;
    OOC_RETURN_ERROR_IF(lines == 0, err, OOC_ERR_INTERNAL, "staging slot (%llu bytes) smaller than a line of B (%zu)",
                        (unsigned long long)P->pl->pin_in_slot_bytes, rb.width);
    int64_t used = 0; /* slots used by staged pieces */
    /* in-slots of a chunk or so (the streamed operand goes through the
     * cache-sized buffers) stay in the CPU's cache too */
    int cached = P->pl->through_chunk && P->pl->pin_in_slot_bytes <= 2 * P->pl->through_chunk;
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
                host_step_t hs = ooc_pipe_step_begin(P, "stage B");
                OOC_FORWARD(ooc_pipe_stage_in(P, P->pin_in[s], &piece, cached, err));
                ooc_pipe_step_end(P, hs, "stage B", OOC_LANE_READ, P->g0);
                src = P->pin_in[s];
                spitch = rb.width;
                OOC_FORWARD(b_lines_up(P, &rb, l0, h, src, spitch, "H2D B", err));
                OOC_FORWARD(P->o->event_record(P->be, P->ev_in[s], P->s_in, err));
            } else {
                OOC_FORWARD(b_lines_up(P, &rb, l0, h, src, spitch, "H2D B", err));
            }
            ooc_pipe_count(P, rb.width * h, 0, 0, 0);
        }
        OOC_FORWARD(P->o->event_record(P->be, P->ev_b[j], b_done_stream(P), err));
        if (P->share) ooc_queue_post(P->q, j, P->panel);
    }
    ooc_pipe_advance(P, &P->b_staged, 1);
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
        size_t bytes = (c1 - c0) * db; /* (the lines' padding too: one contiguous copy) */
        OOC_FORWARD(P->o->stream_wait(P->be, P->s_out, there, err));
        if (bytes > 0) {
            int tr = TR_START(P, P->s_out);
            OOC_FORWARD(P->o->copy_peer(P->be, P->dB + c0 * db, owner, from + c0 * db, bytes, P->s_out, err));
            TR_END(P, P->s_out, tr, "peer B", OOC_LANE_OUT, P->g0);
            pthread_mutex_lock(&P->mu);
            P->stats.bytes_peer += (c1 - c0) * rb.width; /* (of op(B)) */
            pthread_mutex_unlock(&P->mu);
        }
        OOC_FORWARD(P->o->event_record(P->be, P->ev_b[j], P->s_out, err));
    }
    return OOC_SUCCESS;
}

/* What issuing turn t works on: its slot, its block and rows, and the
 * rectangles of op(A), op(B) and C that the block reads and writes. */
typedef struct {
    int s;
    int64_t i, r0, r1;
    rect_t ra, rb, rc;
} turn_t;

static turn_t turn_at(const pipe_t *P, int64_t t)
{
    turn_t u;
    u.s = slot_of(P, t);
    u.i = P->turn[t];
    block_rows(P, u.i, &u.r0, &u.r1);
    u.ra = rect(&P->va, u.r0, u.r1, P->k0, P->k1);
    u.rb = rect(&P->vb, P->k0, P->k1, P->c0, P->c1);
    u.rc = rect(&P->vc, u.r0, u.r1, P->c0, P->c1);
    return u;
}

/* Rectangle r into the dense device tile dst on the in stream: from the
 * pinned staging at pin (lines packed) when staged, else where it lies. */
static ooc_status_t copy_in_rect(pipe_t *P, void *dst, const rect_t *r, const char *pin, ooc_err_t *err)
{
    const char *src = pin ? pin : r->ptr;
    size_t pitch = pin ? r->width : r->pitch;
    OOC_FORWARD(
        P->o->copy2d(P->be, dst, dev_pitch(P, r->width), src, pitch, r->width, r->height, OOC_H2D, P->s_in, err));
    ooc_pipe_count(P, r->width * r->height, 0, 0, 0);
    return OOC_SUCCESS;
}

/* Turn t's copy-in (stream in): A's rows and, when read, C's. A block in
 * k-pieces: C's alone here, A's pieces with their multiplies (issue_pieces). */
static ooc_status_t issue_in(pipe_t *P, int64_t t, ooc_err_t *err)
{
    const ooc_be_ops_t *o = P->o;
    ooc_be_t *be = P->be;
    turn_t u = turn_at(P, t);
    int s = u.s;

    if ((P->stage_a || P->stage_cin) && !ooc_pipe_await(P, &P->staged, t + 1)) return OOC_ERR_INTERNAL; /* aborted */

    /* slot s must be free of turn t - R (its gemm read A; its D2H read C).
     * Staged C through the cache: the writer records ev_out[s] (after
     * issuing the block's last chunk); wait until it has, for this turn
     * and issue_rest's wait on it */
    if (reuses_slot(P, t)) {
        if (P->tho_n && !ooc_pipe_await(P, &P->out_recorded, t - P->R + 1)) return OOC_ERR_INTERNAL; /* aborted */
        OOC_FORWARD(o->stream_wait(be, P->s_in, P->ev_gemm[s], err));
        if (P->c_read) OOC_FORWARD(o->stream_wait(be, P->s_in, P->ev_out[s], err));
    }
    int pieces = P->pl->a_pieces > 1;
    if (pieces && !P->c_read) return OOC_SUCCESS;
    int tr = TR_START(P, P->s_in);
    /* staged A and C read in through the cache: the reader sent them up (ev_ain[s]) */
    int a_th = !pieces && P->stage_a && P->th_a, c_th = P->c_read && P->stage_cin && P->th_cin;
    if (a_th || c_th) OOC_FORWARD(o->stream_wait(be, P->s_in, P->ev_ain[s], err));
    if (!pieces && !a_th) OOC_FORWARD(copy_in_rect(P, P->dA[s], &u.ra, P->stage_a ? P->pin_in[s] : NULL, err));
    if (P->c_read && !c_th) {
        rect_t rci = rect(&P->vcin, u.r0, u.r1, P->c0, P->c1);
        OOC_FORWARD(copy_in_rect(P, P->dC[s], &rci, P->stage_cin ? P->pin_in[s] + a_part(P, &u.ra) : NULL, err));
    }
    TR_END(P, P->s_in, tr, pieces ? "H2D C" : P->c_read ? "H2D A+C" : "H2D A", OOC_LANE_IN, P->g0 + u.i);
    if (pieces) return OOC_SUCCESS; /* ev_in after the last piece */
    OOC_FORWARD(o->event_record(be, P->ev_in[s], P->s_in, err));
    ooc_pipe_advance(P, &P->issued_in, t + 1);
    return OOC_SUCCESS;
}

/* Copy C's columns [l0, l1) of a turn's block out (stream out, once ev
 * says they are multiplied), from the turn's slot; all of them: 0, n. */
static ooc_status_t copy_out_cols(pipe_t *P, const turn_t *u, size_t l0, size_t l1, ooc_event_t ev, const char *name,
                                  ooc_err_t *err)
{
    int s = u->s;
    const rect_t rc = u->rc;
    rect_t part = rect(&P->vc, u->r0, u->r1, P->c0 + (int64_t)l0, P->c0 + (int64_t)l1);
    /* where those columns start in the tile, and in the packed out-slot */
    size_t dc = dev_pitch(P, rc.width), off = dev_at(P, P->vc.rows_contig, rc.width, l0);
    size_t poff = P->vc.rows_contig ? l0 * rc.width : l0 * P->e;
    OOC_FORWARD(P->o->stream_wait(P->be, P->s_out, ev, err));
    int tr = TR_START(P, P->s_out);
    if (P->stage_cout)
        OOC_FORWARD(P->o->copy2d(P->be, P->pin_out[s] + poff, rc.width, P->dC[s] + off, dc, part.width,
                                 part.height, OOC_D2H, P->s_out, err));
    else
        OOC_FORWARD(P->o->copy2d(P->be, (char *)part.ptr, part.pitch, P->dC[s] + off, dc, part.width,
                                 part.height, OOC_D2H, P->s_out, err));
    TR_END(P, P->s_out, tr, name, OOC_LANE_OUT, P->g0 + u->i);
    ooc_pipe_count(P, 0, part.width * part.height, 0, 0);
    return OOC_SUCCESS;
}

/* Staged C: the writer has emptied the pinned out-slot of turn t - R
 * (always, when the slot is not reused or C goes straight to the user); 0
 * when the run was aborted meanwhile. */
static int out_slot_free(pipe_t *P, int64_t t)
{
    return !P->stage_cout || !reuses_slot(P, t) || ooc_pipe_await(P, &P->written, t - P->R + 1);
}

/* The last piece *x of turn u's block, multiplied chunk by chunk of C's
 * columns, each chunk's columns of C going out as soon as they are final:
 * the copy-out starts after a chunk of the piece's multiply, not all of it
 * (copy-out bound shapes, plan.c: tall and TF32). */
static ooc_status_t last_piece_cols(pipe_t *P, int64_t t, const turn_t *u, ooc_stream_t sc,
                                    const ooc_tile_gemm_t *x, ooc_err_t *err)
{
    /* (staged C through the cache: the writer copies the block out once all of it is multiplied) */
    if (!P->tho_n && !out_slot_free(P, t)) return OOC_ERR_INTERNAL; /* aborted */
    for (int j = 0; j < P->pl->b_chunks; j++) {
        size_t l0, l1;
        b_chunk_lines(P, (size_t)(P->c1 - P->c0), j, &l0, &l1); /* (of C's columns) */
        if (l1 == l0) continue;
        ooc_tile_gemm_t y = *x;
        y.n = (int)(l1 - l0);
        y.B = (const char *)x->B + b_dev_col(P, &u->rb, l0);
        y.C = (char *)x->C + dev_at(P, P->vc.rows_contig, u->rc.width, l0);
        int tr = TR_START(P, sc);
        OOC_FORWARD(P->o->gemm(P->be, sc, &y, err));
        TR_END(P, sc, tr, "gemm (piece of A, columns of C)", OOC_LANE_COMPUTE, P->g0 + u->i);
        if (P->tho_n) continue;
        OOC_FORWARD(P->o->event_record(P->be, P->ev_cpart[j], sc, err));
        OOC_FORWARD(copy_out_cols(P, u, l0, l1, P->ev_cpart[j], "D2H C (columns)", err));
    }
    return OOC_SUCCESS;
}

/* Rows [k0, k1) of the depth of op(B)'s pinned panel (stream in), to where
 * they lie in dB: a piece's own rows, which its multiply reads (b_follow). */
static ooc_status_t upload_b_rows(pipe_t *P, int64_t k0, int64_t k1, ooc_err_t *err)
{
    rect_t rb = rect(&P->vb, P->k0, P->k1, P->c0, P->c1);
    rect_t r = rect(&P->vb, P->k0 + k0, P->k0 + k1, P->c0, P->c1);
    if (!P->vb.rows_contig) { /* lines are rows of op(B): these are lines k0 .. k1 (transposed or not) */
        OOC_FORWARD(b_lines_up(P, &rb, (size_t)k0, r.height, r.ptr, r.pitch, "H2D B (a piece's rows)", err));
    } else { /* lines are columns: a part of each (never transposed) */
        int tr = TR_START(P, P->s_in);
        OOC_FORWARD(P->o->copy2d(P->be, P->dB + (size_t)k0 * P->e, dev_pitch(P, rb.width), r.ptr, r.pitch, r.width,
                                 r.height, OOC_H2D, P->s_in, err));
        TR_END(P, P->s_in, tr, "H2D B (a piece's rows)", OOC_LANE_IN, P->g0);
    }
    ooc_pipe_count(P, r.width * r.height, 0, 0, 0);
    return OOC_SUCCESS;
}

/* Turn t's block in k-pieces (plan.h, pipeline.c): piece after piece, its
 * copy-in on the in stream into A slot n mod RA (n counting the panel's
 * pieces) once the multiply of piece n - RA has freed it, then its multiply
 * into C on sc, with beta the first time and 1 after. *g is the block's
 * whole multiply. */
static ooc_status_t issue_pieces(pipe_t *P, int64_t t, const turn_t *u, ooc_stream_t sc, const ooc_tile_gemm_t *g,
                                 ooc_err_t *err)
{
    const ooc_be_ops_t *o = P->o;
    ooc_be_t *be = P->be;
    int64_t depth = P->k1 - P->k0, q = P->pl->a_pieces;
    int first = 1;
    for (int64_t p = 0; p < q; p++) {
        size_t l0, l1;
        part_of(P, (size_t)depth, (size_t)q, (size_t)p, &l0, &l1);
        int64_t k0 = (int64_t)l0, k1 = (int64_t)l1;
        if (k1 == k0) continue; /* a last k-panel shallower than the pieces */
        int64_t n = P->pieces++;
        int j = (int)(n % P->RA);
        /* (op(B)'s rows before the wait for the A slot: they have their place; transposed, the
         * multiply waits for the last of their transposes, on s_tr) */
        if (P->b_follow && t == 0) OOC_FORWARD(upload_b_rows(P, k0, k1, err));
        if (P->b_follow && t == 0 && P->btr && P->tr_used > 0)
            OOC_FORWARD(o->stream_wait(be, sc, P->ev_tr[(P->tr_used - 1) % 2], err));
        if (n >= P->RA) OOC_FORWARD(o->stream_wait(be, P->s_in, P->ev_pgemm[j], err));
        rect_t rp = rect(&P->va, u->r0, u->r1, P->k0 + k0, P->k0 + k1);
        const char *src = rp.ptr;
        size_t spitch = rp.pitch;
        if (P->stage_a) { /* the whole block is packed in staging slot s, lines of ra.width */
            src = P->pin_in[u->s] + (P->va.rows_contig ? (size_t)k0 * u->ra.width : (size_t)k0 * P->e);
            spitch = u->ra.width;
        }
        int tr = TR_START(P, P->s_in);
        OOC_FORWARD(o->copy2d(be, P->dA[j], dev_pitch(P, rp.width), src, spitch, rp.width, rp.height, OOC_H2D,
                              P->s_in, err));
        TR_END(P, P->s_in, tr, "H2D A piece", OOC_LANE_IN, P->g0 + u->i);
        ooc_pipe_count(P, rp.width * rp.height, 0, 0, 0);
        OOC_FORWARD(o->event_record(be, P->ev_pin[j], P->s_in, err));

        OOC_FORWARD(o->stream_wait(be, sc, P->ev_pin[j], err));
        ooc_tile_gemm_t x = *g;
        x.k = (int)(k1 - k0);
        x.A = P->dA[j];
        x.lda = (int)(dev_pitch(P, rp.width) / P->e);
        x.B = P->dB + b_dev_row(P, &u->rb, (size_t)k0);
        if (!first) x.beta = P->unit;
        first = 0;
        if (k1 == depth && P->pl->b_chunks > 1) /* the last piece: by chunks of C's columns */
            OOC_FORWARD(last_piece_cols(P, t, u, sc, &x, err));
        else {
            tr = TR_START(P, sc);
            OOC_FORWARD(o->gemm(be, sc, &x, err));
            TR_END(P, sc, tr, "gemm (piece of A)", OOC_LANE_COMPUTE, P->g0 + u->i);
        }
        OOC_FORWARD(o->event_record(be, P->ev_pgemm[j], sc, err));
    }
    /* op(B) followed the pieces: all of it is there once these copies are (the other turns wait) */
    for (int c = 0; P->b_follow && t == 0 && c < P->pl->b_chunks; c++)
        OOC_FORWARD(o->event_record(be, P->ev_b[c], b_done_stream(P), err));
    /* every copy-in of the block is issued: its staging slot is free once they are done */
    OOC_FORWARD(o->event_record(be, P->ev_in[u->s], P->s_in, err));
    ooc_pipe_advance(P, &P->issued_in, t + 1);
    return OOC_SUCCESS;
}

/* Turn t's multiply and copy-out. A lead block (pipeline.h) is multiplied
 * chunk by chunk of op(B), waiting for each chunk; when the chunks are
 * columns of op(B) their columns of C are final at once and go out chunk by
 * chunk (the copy-out starts a block's multiply earlier: tall and TF32
 * shapes, where copying out takes as long as the rest). The first turn of
 * any other block waits for all of op(B). */
static ooc_status_t issue_rest(pipe_t *P, int64_t t, ooc_err_t *err)
{
    const ooc_be_ops_t *o = P->o;
    ooc_be_t *be = P->be;
    turn_t u = turn_at(P, t);
    int s = u.s;
    int64_t i = u.i;
    const rect_t ra = u.ra, rb = u.rb, rc = u.rc;
    int pieces = P->pl->a_pieces > 1, piece_cols = pieces && P->pl->b_chunks > 1;
    int split = !pieces && i < P->pl->lead && P->pl->b_chunks > 1;
    /* C's columns go out chunk by chunk (pieces: the last piece's, issue_pieces); not when the
     * writer brings C down through the cache (tho_n: once the whole multiply is done; the
     * multiplies are the same either way) */
    int cols_out = ((split && P->vb.rows_contig) || piece_cols) && !P->tho_n;

    ooc_stream_t sc = P->s_comp[t % P->ncomp];
    if (!pieces) OOC_FORWARD(o->stream_wait(be, sc, P->ev_in[s], err)); /* pieces: each waits for its own copy */
    if (reuses_slot(P, t) && !P->c_read) /* C part of slot s still being copied out */
        OOC_FORWARD(o->stream_wait(be, sc, P->ev_out[s], err));
    const ooc_problem_t *p = P->p;
    /* (op(B) transposed on the device: read the other way, op N for op T) */
    ooc_op_t tb = P->btr ? (p->tb == OOC_OP_N ? OOC_OP_T : OOC_OP_N) : p->tb;
    ooc_tile_gemm_t g = {p->dtype, p->layout, p->ta, tb, (int)(u.r1 - u.r0), (int)(P->c1 - P->c0),
                         (int)(P->k1 - P->k0), p->alpha, P->beta, P->dA[s], P->dB, P->dC[s],
                         (int)(dev_pitch(P, ra.width) / P->e), (int)(dev_pitch(P, b_dev_width(P, &rb)) / P->e),
                         (int)(dev_pitch(P, rc.width) / P->e)};
    /* (pieces: once their copies in are issued, in last_piece_cols) */
    if (cols_out && !piece_cols && !out_slot_free(P, t)) return OOC_ERR_INTERNAL; /* aborted */
    /* the first turn on each compute stream waits for all of op(B): shared,
     * other devices' chunks come on the out stream, which a later turn's
     * copy-in (all it waits for) does not follow */
    if (t < P->ncomp && !split && !(P->b_follow && t == 0)) /* (b_follow: turn 0's pieces wait for theirs) */
        for (int c = 0; c < P->pl->b_chunks; c++) OOC_FORWARD(o->stream_wait(be, sc, P->ev_b[c], err));
    if (pieces) OOC_FORWARD(issue_pieces(P, t, &u, sc, &g, err));
    int chunks = pieces ? 0 : split ? P->pl->b_chunks : 1;
    for (int j = 0; j < chunks; j++) {
        ooc_tile_gemm_t q = g;
        if (split) {
            OOC_FORWARD(o->stream_wait(be, sc, P->ev_b[j], err));
            size_t l0, l1;
            b_chunk_lines(P, rb.height, j, &l0, &l1);
            if (l1 == l0) continue;
            q.B = P->dB + (P->vb.rows_contig ? b_dev_col(P, &rb, l0) : b_dev_row(P, &rb, l0));
            if (P->vb.rows_contig) { /* lines of op(B) are its columns: C[:, l0:l1] = A B[:, l0:l1] */
                q.n = (int)(l1 - l0);
                q.C = P->dC[s] + dev_at(P, P->vc.rows_contig, rc.width, l0);
            } else { /* lines are rows: C += A[:, l0:l1] B[l0:l1, :], beta only the first time */
                q.k = (int)(l1 - l0);
                q.A = P->dA[s] + dev_at(P, P->va.rows_contig, ra.width, l0);
                if (j > 0) q.beta = P->unit;
            }
        }
        int tr = TR_START(P, sc);
        OOC_FORWARD(o->gemm(be, sc, &q, err));
        TR_END(P, sc, tr, split ? "gemm (chunk of B)" : "gemm", OOC_LANE_COMPUTE, P->g0 + i);
        if (cols_out) {
            size_t l0, l1;
            b_chunk_lines(P, rb.height, j, &l0, &l1);
            OOC_FORWARD(o->event_record(be, P->ev_cpart[j], sc, err));
            OOC_FORWARD(copy_out_cols(P, &u, l0, l1, P->ev_cpart[j], "D2H C (chunk of B)", err));
        }
    }
    OOC_FORWARD(o->event_record(be, P->ev_gemm[s], sc, err));

    /* out (tho_n: by the writer, through the cache, once it sees the turn issued: it waits for
     * ev_gemm[s] and records ev_out[s] itself) */
    if (!P->tho_n && !cols_out) {
        if (!out_slot_free(P, t)) return OOC_ERR_INTERNAL; /* aborted */
        OOC_FORWARD(copy_out_cols(P, &u, 0, (size_t)(P->c1 - P->c0), P->ev_gemm[s], "D2H C", err));
    }
    if (!P->tho_n) OOC_FORWARD(o->event_record(be, P->ev_out[s], P->s_out, err));
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

/* Wait for everything queued on our streams (not the whole device); with
 * !out, not for the copies out. */
static ooc_status_t drain(pipe_t *P, int out, ooc_err_t *err)
{
    ooc_status_t st = P->o->stream_sync(P->be, P->s_in, err);
    for (int c = 0; c < P->ncomp; c++) {
        ooc_status_t t = P->o->stream_sync(P->be, P->s_comp[c], err);
        if (st == OOC_SUCCESS) st = t;
    }
    ooc_status_t t = out ? P->o->stream_sync(P->be, P->s_out, err) : OOC_SUCCESS;
    if (st == OOC_SUCCESS) st = t;
    t = P->th_n ? P->o->stream_sync(P->be, P->s_stage, err) : OOC_SUCCESS;
    if (st == OOC_SUCCESS) st = t;
    t = P->tho_n ? P->o->stream_sync(P->be, P->s_unstage, err) : OOC_SUCCESS;
    if (st == OOC_SUCCESS) st = t;
    t = P->btr ? P->o->stream_sync(P->be, P->s_tr, err) : OOC_SUCCESS;
    return st == OOC_SUCCESS ? t : st;
}

/* A panel may end with its copies out still running when C goes straight to
 * the user's pinned memory (no writer waits for them), op(B) is not shared
 * (the next panel's peer copies use the out stream) and another panel
 * follows: the next op(B) then goes up while the last block's C goes out
 * (S1 with a 1 GiB budget: 1.4 ms at each of 2 panel changes). The next
 * panel's multiplies, and its copies of C in, first wait for those copies
 * out (the C slots they use), in panel_start(). Not with several devices
 * and k-panels: the next k-panel reads C back on whichever device claims
 * the block, which would not wait for another device's copies out. */
static int leave_out_running(const pipe_t *P)
{
    return !P->stage_cout && !P->share && P->issued > 0 && P->panel + 1 < P->pl->n_panels * P->pl->k_panels &&
           (P->q->devices == 1 || P->pl->k_panels == 1);
}

static ooc_status_t panel_start(pipe_t *P, ooc_err_t *err)
{
    if (P->out_left < 0) return OOC_SUCCESS;
    ooc_event_t ev = P->ev_out[P->out_left];
    P->out_left = -1;
    for (int c = 0; c < P->ncomp; c++) OOC_FORWARD(P->o->stream_wait(P->be, P->s_comp[c], ev, err));
    if (P->c_read) OOC_FORWARD(P->o->stream_wait(P->be, P->s_in, ev, err));
    /* C read in through the cache: the reader's copies into the C slots too */
    if (P->c_read && P->stage_cin && P->th_cin) OOC_FORWARD(P->o->stream_wait(P->be, P->s_stage, ev, err));
    return OOC_SUCCESS;
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
    *block = ooc_pipe_block_of(P, t);
    return OOC_SUCCESS;
}

ooc_status_t ooc_pipe_run_panel(pipe_t *P)
{
    ooc_err_t err;
    ooc_err_clear(&err);
    P->claimed = P->staged = P->issued_in = P->issued = P->written = P->b_staged = P->pieces = P->out_recorded = 0;
    P->no_more = P->issuer_done = 0;
    /* op(B) first when its chunks go through the pinned slots (pageable or
     * a file), so that they need not wait for the first turn's copy-in on
     * the same stream, nor the reader for them (A staged meanwhile only
     * after), or when A goes in k-pieces (whose first needs all of op(B)) */
    P->b_first = P->pl->a_pieces > 1 || !P->p->B.pinned;
    /* the plan's b_follow (A in k-pieces), op(B) pinned and not shared:
     * op(B)'s rows go up with the first turn's pieces, each piece's multiply
     * waiting only for its own (the multiply starts after a piece of op(B),
     * not all of it); op(B) needs no pinned slot, so the reader need not
     * wait for it */
    P->b_follow = ooc_pipe_b_follows(P->pl, P->p->B.pinned, P->share);
    if (P->b_follow) ooc_pipe_advance(P, &P->b_staged, 1);
    pthread_t reader, writer;
    int have_reader = 0, have_writer = 0;

    ooc_status_t st = panel_start(P, &err);
    if (st == OOC_SUCCESS && (P->stage_a || P->stage_cin)) {
        int rc = pthread_create(&reader, NULL, ooc_pipe_reader_main, P);
        if (rc != 0) st = OOC_ERR(&err, OOC_ERR_THREAD, "pthread_create: error %d (reader)", rc);
        have_reader = rc == 0;
    }
    if (st == OOC_SUCCESS && P->stage_cout) {
        int rc = pthread_create(&writer, NULL, ooc_pipe_writer_main, P);
        if (rc != 0) st = OOC_ERR(&err, OOC_ERR_THREAD, "pthread_create: error %d (writer)", rc);
        have_writer = rc == 0;
    }
    /* the first turn's copy-in, then op(B) in chunks, the first turn's
     * multiply, then the other turns (b_first: op(B) before the first
     * turn's copy-in); a device that gets no block of the panel
     * does not upload op(B), unless op(B) is shared: then its chunks are
     * uploaded all the same, for the others */
    int64_t i;
    int stopped = 0;
    for (int64_t t = 0; st == OOC_SUCCESS && !stopped && (st = claim_when_free(P, t, &i, &err)) == OOC_SUCCESS && i >= 0;
         t++) {
        st = check_cancel(P, i, &err);
        if (st == OOC_SUCCESS && t == 0 && P->b_first && !P->b_follow) st = upload_b(P, 1, &stopped, &err);
        if (st == OOC_SUCCESS && !stopped) st = issue_in(P, t, &err);
        if (st == OOC_SUCCESS && t == 0 && !P->b_first) st = upload_b(P, 1, &stopped, &err);
        if (st == OOC_SUCCESS && !stopped) st = issue_rest(P, t, &err);
    }
    if (st != OOC_SUCCESS) {
        ooc_pipe_fail(P, &err); /* stop the reader and writer, and the other devices */
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
            ooc_pipe_fail(P, &err);
            ooc_queue_abort(P->q);
        }
    }
    ooc_err_t derr;
    ooc_err_clear(&derr);
    int out = P->err.status != OOC_SUCCESS || !leave_out_running(P);
    ooc_status_t dst = drain(P, out, &derr); /* also after a failure: buffers must be idle */
    if (dst != OOC_SUCCESS) ooc_pipe_fail(P, &derr);
    if (!out && P->err.status == OOC_SUCCESS) P->out_left = slot_of(P, P->issued - 1);
    if (P->err.status != OOC_SUCCESS) ooc_queue_abort(P->q); /* a reader's or writer's failure */
    /* shared op(B): the others may still copy from ours until all are done */
    if (P->err.status == OOC_SUCCESS && P->share) (void)ooc_queue_leave(P->q, P->panel);
    return P->err.status;
}
