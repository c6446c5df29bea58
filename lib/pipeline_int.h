/* SPDX-License-Identifier: MIT */
/*
 * pipeline_int.h: what the pipeline's files share (pipeline.c: resources and
 * the run; pipeline_queue.c: the queue of row blocks; pipeline_host.c: the
 * reader and writer threads; pipeline_issue.c: the issuing thread of a
 * panel). Internal to them: nothing else includes it, and nothing here knows
 * which backend runs.
 */
#ifndef OOC_PIPELINE_INT_H
#define OOC_PIPELINE_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline.h"

#define ALIGN 256
/* events a pipeline uses (ooc_res_t): ev_in, ev_gemm, ev_out per ring slot, ev_b per chunk of
 * op(B), ev_pin, ev_pgemm per A slot, then ev_cpart per chunk of op(B) */
#define PIPE_EVENTS_BASE(pl) (3 * (pl)->ring + 2 * OOC_MAX_B_CHUNKS + 2 * (pl)->a_slots)
/* the reader's cache-sized buffers: for staged A (plan.h through_chunk), C read in (through_cin_chunk), or both */
#define PIPE_READER_CHUNK(pl) ((pl)->through_chunk ? (pl)->through_chunk : (pl)->through_cin_chunk)
#define PIPE_READER_BUFS(pl) ((pl)->through_chunk ? (pl)->through_bufs : (pl)->through_cin_chunk ? (pl)->through_cin_bufs : 0)
/* then, with the reader's buffers: ev_ain per ring slot, one per buffer */
#define PIPE_EVENTS_IN(pl) (PIPE_EVENTS_BASE(pl) + (PIPE_READER_CHUNK(pl) ? (pl)->ring + PIPE_READER_BUFS(pl) : 0))
/* then, with staged C out through the cache (plan.h through_out_chunk): one per buffer */
#define PIPE_EVENTS_TR(pl) (PIPE_EVENTS_IN(pl) + ((pl)->through_out_chunk ? (pl)->through_out_bufs : 0))
/* then, with op(B) transposed on the device (plan.h b_transposed): ev_tin and ev_tr per scratch buffer */
#define PIPE_EVENTS(pl) (PIPE_EVENTS_TR(pl) + ((pl)->b_transposed ? 4 : 0))
/* the plan's streams, then the staging stream of staged A through the cache, then the unstaging stream
 * of staged C through the cache (and with op(B) transposed, ooc_res_t's urgent stream) */
#define PIPE_STREAMS_IN(pl) ((pl)->streams + (PIPE_READER_CHUNK(pl) ? 1 : 0))
#define PIPE_STREAMS(pl) (PIPE_STREAMS_IN(pl) + ((pl)->through_out_chunk ? 1 : 0))
/* turn t is claimed once the multiply of turn t - CLAIM_LAG is done (<= the ring's 2 slots at least) */
#define CLAIM_LAG 2

static inline size_t align_up(size_t x) { return (x + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

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

static inline view_t make_view(const ooc_src_t *src, ooc_layout_t layout, ooc_op_t op, size_t e)
{
    view_t v = {src, (layout == OOC_COL_MAJOR) == (op == OOC_OP_N), e};
    return v;
}

static inline rect_t rect(const view_t *v, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
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

/* ---------- the state of one pipeline ---------- */

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
    ooc_event_t ev_pin[OOC_MAX_RING], ev_pgemm[OOC_MAX_RING]; /* A in k-pieces: piece in A slot j copied
                                                              * in, multiplied (pipeline.c) */
    int RA;              /* A slots (the ring's R, or the pieces' own) */
    ooc_event_t ev_cpart[OOC_MAX_B_CHUNKS]; /* C's columns of chunk j multiplied: a lead block's (issue_rest),
                                             * a last piece's (last_piece_cols) */
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
    int b_first;         /* op(B)'s panel is uploaded before the first turn's copy-in (issue order) */
    int b_follow;        /* the plan's b_follow, op(B) pinned and not shared: op(B)'s panel goes up piece by
                          * piece of depth, each piece's rows right before the first turn's piece of A
                          * (issue_pieces), not whole before it (upload_b) */
    int64_t *turn;       /* turn t runs block turn[t] of the panel (m_blocks entries) */
    int64_t pieces;      /* A in k-pieces: pieces of the panel issued so far */
    int out_left;        /* >= 0: the previous panel was left with its copies out running (not
                          * drained): ev_out[out_left] is recorded after the last; -1: none */
    /* progress, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t claimed;     /* turns with a block */
    int no_more;         /* the queue had no block for turn `claimed` */
    int issuer_done;     /* the issuing thread left the panel (every issued turn is final) */
    int64_t staged;      /* turns whose inputs the reader put in pinned slots */
    int64_t issued_in;   /* turns whose H2D was issued (ev_in recorded) */
    int64_t issued;      /* turns whose D2H was issued (ev_out recorded); with tho_n, whose multiply
                          * was (ev_gemm recorded: the writer issues the D2H) */
    int64_t written;     /* turns the writer copied out of pinned slots (or buffers) into C */
    int64_t out_recorded; /* staged C through the cache: turns whose ev_out the writer has recorded */
    int64_t b_staged;    /* 1: op(B)'s panel no longer needs the pinned slots */
    int abort;
    ooc_err_t err;       /* first failure of any thread */
    ooc_pipe_stats_t stats; /* bus bytes: issuing thread; staged bytes: under mu */
    ooc_trace_t *T;      /* NULL: not tracing */
    /* staged A and C read in through the cache (plan.h through_chunk,
     * through_cin_chunk): the reader copies each block chunk by chunk into
     * th_n small pinned buffers in turn and sends each up to dA[s] or dC[s]
     * itself on s_stage (th_ev[b]: buffer b's copy up done), ev_ain[s] after
     * the block's last chunk */
    int th_n;            /* buffers (0: none: staged A and C, if any, go through the in-slots) */
    int th_a, th_cin;    /* staged A, staged C read in go through them */
    size_t th_chunk;     /* bytes each */
    char *th_buf[OOC_PLAN_MAX_THROUGH_BUFS];
    ooc_event_t th_ev[OOC_PLAN_MAX_THROUGH_BUFS], ev_ain[OOC_MAX_RING];
    int64_t th_used;     /* chunks sent so far */
    ooc_stream_t s_stage;
    /* staged C out through the cache (plan.h through_out_chunk): the writer
     * brings each block down chunk by chunk from dC[s] into tho_n small
     * pinned buffers in turn on s_unstage, once the block's multiply is done,
     * and the pool copies each chunk into C once it is there; ev_out[s]
     * after the block's last chunk, recorded by the writer, not the issuing
     * thread (which then neither copies C out nor records ev_out) */
    int tho_n;           /* buffers (0: none: staged C, if any, goes through the out-slots) */
    size_t tho_chunk;    /* bytes each */
    char *tho_buf[OOC_PLAN_MAX_THROUGH_BUFS];
    ooc_event_t tho_ev[OOC_PLAN_MAX_THROUGH_BUFS];
    ooc_stream_t s_unstage;
    /* op(B) transposed on the device (plan.h b_transposed): its lines as
     * stored (rows of op(B)) go up a piece at a time into scratch buffer
     * u = n mod 2 (ev_tin[u]: copied), from which s_tr transposes them
     * into dB (ev_tr[u]: the buffer is free again, and those lines are in
     * place), where op(B)'s lines are its columns. s_tr is a stream of its
     * own (on a compute stream the first block's multiplies, chunk by chunk
     * of op(B), waited behind every chunk's transposes), and urgent (at a
     * lower priority its transposes waited for SMs behind those multiplies
     * while the copies in waited for its buffers: 12001 x 12001 x 4001 NT
     * on an H200, op(B) up in 8.7 ms against 7.0) */
    int btr;
    char *dT[2];
    ooc_event_t ev_tin[2], ev_tr[2];
    int64_t tr_used;     /* pieces sent through the scratch buffers so far */
    ooc_stream_t s_tr;
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

static inline void block_rows(const pipe_t *P, int64_t i, int64_t *r0, int64_t *r1) { ooc_plan_block(P->pl, i, r0, r1); }

static inline int slot_of(const pipe_t *P, int64_t t) { return (int)(t % P->R); }

/* The pitch of a rectangle's lines in the device tiles: its width, or with
 * the plan's pad_lines (TF32, most DGEMMs: backend.h ooc_tiles_aligned)
 * rounded up to 16 bytes, so that every column of a tile starts 16-byte
 * aligned, as cuBLAS's fast kernels need (a TF32 SGEMM whose columns are 4
 * bytes off runs 3 times slower on an H200; docs/PERFORMANCE.md, session
 * 39). The planner counts it (plan.c tile_bytes). The staging buffers on
 * the host stay packed. */
static inline size_t dev_pitch(const pipe_t *P, size_t width)
{
    return P->pl->pad_lines ? (width + 15) & ~(size_t)15 : width;
}

/* Where in a device tile of lines of `width` bytes its l-th line starts
 * (lines: l counts lines), or its l-th element of each line (l counts the
 * other way: a row of a tile whose lines are columns, say). */
static inline size_t dev_at(const pipe_t *P, int lines, size_t width, size_t l)
{
    return lines ? l * dev_pitch(P, width) : l * P->e;
}

/* op(B)'s panel (rb: its rectangle as stored) on the device: the width in
 * bytes of a device line (the stored lines', or with btr its columns'),
 * where its row k and its column c start (bytes from dB), and the stream
 * on which lines put up are in place once it has done what was issued
 * (the copies', or the transposes'). */
static inline int b_dev_cols(const pipe_t *P) { return P->vb.rows_contig ^ P->btr; } /* lines are columns */
static inline ooc_stream_t b_done_stream(const pipe_t *P) { return P->btr ? P->s_tr : P->s_in; }
static inline size_t b_dev_width(const pipe_t *P, const rect_t *rb)
{
    return P->btr ? rb->height * P->e : rb->width;
}
static inline size_t b_dev_row(const pipe_t *P, const rect_t *rb, size_t k)
{
    return dev_at(P, !b_dev_cols(P), b_dev_width(P, rb), k);
}
static inline size_t b_dev_col(const pipe_t *P, const rect_t *rb, size_t c)
{
    return dev_at(P, b_dev_cols(P), b_dev_width(P, rb), c);
}

/* Part j of `parts` of [0, total) (op(B)'s chunks, a block's k-pieces):
 * from total j / parts; with pad_lines rounded down to a multiple of 8
 * elements when every part keeps some (total >= 8 parts), so that a part
 * starts 16-byte aligned in a tile whatever the type. */
static inline void part_of(const pipe_t *P, size_t total, size_t parts, size_t j, size_t *l0, size_t *l1)
{
    int round = P->pl->pad_lines && total >= 8 * parts;
    *l0 = total * j / parts;
    *l1 = total * (j + 1) / parts;
    if (round && j > 0) *l0 &= ~(size_t)7;
    if (round && j + 1 < parts) *l1 &= ~(size_t)7;
}

/* A packed rectangle of lines of `width` bytes cut into chunks of at most
 * `chunk` bytes for the cache-sized buffers: `per` whole lines each, or,
 * when a line is longer than a chunk, one line in pieces of `seg` bytes. */
typedef struct {
    size_t per, seg;
} chunking_t;
static inline chunking_t chunking(size_t chunk, size_t width)
{
    chunking_t c = {chunk / width, chunk / width ? width : chunk};
    if (c.per == 0) c.per = 1;
    return c;
}
/* the size of the step from `at` towards `end`, at most `step` */
static inline size_t step_of(size_t at, size_t step, size_t end) { return end - at < step ? end - at : step; }
static inline int reuses_slot(const pipe_t *P, int64_t t) { return t >= P->R; }

/* bytes of slot-in taken by the A part (when A is staged) */
static inline size_t a_part(const pipe_t *P, const rect_t *ra) { return P->stage_a && !P->th_a ? align_up(ra->width * ra->height) : 0; }

/* ---------- pipeline.c: the progress counters, under P->mu ---------- */

/* Record the first failure and stop every thread of the pipeline. */
void ooc_pipe_fail(pipe_t *P, const ooc_err_t *e);
/* *counter = value, waking the threads that wait on it. */
void ooc_pipe_advance(pipe_t *P, int64_t *counter, int64_t value);
/* wait until *counter >= target; 0 if the run was aborted meanwhile */
int ooc_pipe_await(pipe_t *P, const int64_t *counter, int64_t target);
/* The block of turn t, claiming it from the queue when t is the next turn;
 * -1 when the queue has none left for it. */
int64_t ooc_pipe_block_of(pipe_t *P, int64_t t);
/* Bytes over the bus and through the staging ring. */
void ooc_pipe_count(pipe_t *P, uint64_t h2d, uint64_t d2h, uint64_t staged_in, uint64_t staged_out);
/* The same, the staged bytes through the cache-sized buffers (counted once by the floor). */
void ooc_pipe_count_cached(pipe_t *P, uint64_t h2d, uint64_t d2h, uint64_t staged_in, uint64_t staged_out);

/* ---------- pipeline_host.c: host staging ---------- */

/* A host staging step, timed for the trace and named for profilers. */
host_step_t ooc_pipe_step_begin(pipe_t *P, const char *name);
void ooc_pipe_step_end(pipe_t *P, host_step_t h, const char *name, int lane, int64_t block);
/* rectangle -> packed buffer (line pitch = width), from memory or a file */
ooc_status_t ooc_pipe_stage_in(pipe_t *P, char *dst, const rect_t *r, int cached, ooc_err_t *err);
/* The reader thread (fills the pinned in-slots) and the writer thread
 * (empties the pinned out-slots) of one panel; arg is the pipe_t. */
void *ooc_pipe_reader_main(void *arg);
void *ooc_pipe_writer_main(void *arg);

/* ---------- pipeline_issue.c: the issuing thread ---------- */

/* Run the current panel (P->panel, k0..k1, c0..c1 set): start the reader
 * and writer it needs, issue every turn, join them, drain our streams.
 * Returns the first failure of any thread (also in P->err). */
ooc_status_t ooc_pipe_run_panel(pipe_t *P);

#endif
