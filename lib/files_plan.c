/* SPDX-License-Identifier: MIT */
/*
 * files_plan.c: which plan a file multiply runs and which blocks it skips
 * (files.h). The plan is the one the caller gives (every process of a split
 * job gives the same), else a resumed journal's, else the planner's; a
 * range must fall on its blocks (C's rows, or its columns when the plan
 * keeps op(A) resident); a resume skips the blocks its own
 * journal, or any journal of the job it is given, recorded as done in this
 * very temporary file. Blocks are computed the same way whoever computes
 * them, so the result is byte-identical however the job was split and
 * resumed. Reads journals; never writes or removes one. Also the public
 * ooc_gemm_files_plan and ooc_files_plan_rows.
 */
#include "config.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"

static void to_public(const ooc_plan_t *p, ooc_files_plan_t *out)
{
    memset(out, 0, sizeof *out);
    out->a_resident = p->swap;
    out->rows = p->m;
    out->block_rows = p->mb;
    out->panel_cols = p->nb;
    out->panel_depth = p->kb;
    out->tail = p->tail;
    out->tail_rep = p->tail_rep;
    out->b_chunks = p->b_chunks;
    out->lead = p->lead;
    out->a_pieces = p->a_pieces;
    out->blocks = p->m_blocks;
    out->panels = p->n_panels * p->k_panels;
    out->cols = p->n;
}

/* What decides the blocks, as ooc_plan_fixed wants it. */
static void fixed_from(int swap, int64_t mb, int64_t nb, int64_t kb, int tail, int tail_rep, int b_chunks, int lead,
                       int a_pieces, ooc_plan_t *f)
{
    memset(f, 0, sizeof *f);
    f->swap = swap;
    f->mb = mb;
    f->nb = nb;
    f->kb = kb;
    f->tail = tail;
    f->tail_rep = tail_rep;
    f->b_chunks = b_chunks;
    f->lead = lead;
    f->a_pieces = a_pieces;
}

static int64_t blocks_of(const ooc_plan_t *p) { return p->m_blocks * p->n_panels * p->k_panels; }

/* The journal was written with plan p. */
static int head_has_plan(const ooc_journal_head_t *h, const ooc_plan_t *p)
{
    return h->swap == p->swap && h->mb == p->mb && h->nb == p->nb && h->kb == p->kb && h->tail == p->tail &&
           h->tail_rep == p->tail_rep && h->b_chunks == p->b_chunks && h->lead == p->lead && h->a_pieces == p->a_pieces &&
           h->total == blocks_of(p);
}

/* The journal recorded this very temporary file, kept by its creator
 * (matching header and size). */
static int journal_of_file(const ooc_journal_info_t *have, const ooc_file_t *C)
{
    struct stat sb;
    int64_t sec = 0;
    long nsec = 0;
    const ooc_journal_head_t *h = &have->head;
    /* the same inode, born at the same time where the journal says when
     * and this system can tell (statx may be missing or refused here): a
     * fresh ooc_file_create makes a new file, whose inode number may be one
     * a journal names */
    int born = h->out_born_sec != 0 || h->out_born_nsec != 0;
    /* (not its device number, which a file system mounted again, or seen
     * from another node, may change: ooc_files_same_job()) */
    if (!C->resumed || fstat(C->fd, &sb) != 0 || (uint64_t)sb.st_ino != h->out_ino ||
        (born && ooc_fd_birth(C->fd, &sec, &nsec) && (sec != h->out_born_sec || nsec != h->out_born_nsec)))
        return 0;
    /* and the same file by its id, which no later file has, birth time or
     * not; sealed (its job complete, its trailer gone), the very file the
     * journal recorded complete: its size and modification time */
    if (C->id != 0) return h->out_id == C->id;
    if (have->complete)
        return (uint64_t)sb.st_size == have->out_size && (int64_t)sb.st_mtim.tv_sec == have->out_mtime_sec &&
               sb.st_mtim.tv_nsec == have->out_mtime_nsec;
    /* sealed, but stopped before the "complete" record (journal_complete()
     * cuts the trailer first): a journal of the whole job that names a file
     * by its id and records every block done, each with its digest, which
     * take_done() checks against the file before it keeps the block (a
     * block not intact is computed again; it recomputed them all) */
    return h->out_id != 0 && h->range_m == 0 && h->range_np == 0 && have->ndone == h->total &&
           have->nsums == (size_t)have->ndone;
}

/* The journal's file is sealed (its trailer cut: the job complete) but the
 * journal has no "complete" record: journal_of_file() took it for the
 * journal's file only when it records every block of the whole job with its
 * digest (killed between the seal and that record). */
static int journal_sealed(const ooc_journal_info_t *have, const ooc_file_t *C)
{
    return !have->complete && C->id == 0;
}

/* Its blocks are in C as the journal says: the same job, a plan that can be
 * resumed or a job (or range) recorded complete (or sealed, every block
 * done), and this very temporary file. A plan in k-panels cannot be
 * resumed part-way (C holds partial sums), but once complete its blocks
 * are final: they are kept, every panel of them, when the last panel's are
 * intact (final_changed()), else none of them (a block of an earlier panel
 * cannot be computed again alone). A complete job in k-panels whose commit
 * failed was computed afresh, all of it, though the message promised that
 * --resume commits it (a user-level hunt); one killed between its seal and
 * its "complete" record too (session 48's note). */
static int journal_usable(const ooc_journal_info_t *have, const ooc_file_t *C)
{
    return (have->head.resumable || have->complete || journal_sealed(have, C)) && journal_of_file(have, C);
}

/* A journal of this very temporary file whose plan cannot be resumed (op(B)
 * in k-panels: C holds partial sums): the job starts over, with that plan,
 * so that C comes out as the interrupted run would have made it, on any
 * number of devices (lead and tail_rep are per device). */
static int journal_restarts(const ooc_journal_info_t *have, const ooc_file_t *C)
{
    return !have->head.resumable && journal_of_file(have, C);
}

/* What computed a journal's blocks: "several" for one marked mixed, this
 * run's id for one written before "by" was recorded (taken as this run's:
 * unchecked). */
static const char *blocks_by(const ooc_files_job_t *job, const ooc_journal_info_t *info)
{
    return info->mixed ? "several" : info->head.by[0] ? info->head.by : job->want.by;
}

/* Note a usable journal whose blocks were computed by another than this
 * run computes with (ooc_compute_id(), recorded as "by" since it exists),
 * or by several (marked mixed by a resume that allowed it): kept beside
 * blocks this run computes, C would mix two kinds of rounding and be no
 * run's. ooc_files_start refuses then (mixed_refused), unless this run
 * computes nothing or the caller allows it (opts->allow_mixed). The first
 * such journal is named. 1: this journal is such. */
static int note_computer(ooc_files_job_t *job, const ooc_journal_info_t *info, const char *path,
                         ooc_files_start_t *s)
{
    const char *by = blocks_by(job, info);
    if (info->ndone == 0 || strcmp(by, job->want.by) == 0) return 0;
    if (s->mixed[0]) return 1;
    snprintf(s->mixed, sizeof s->mixed, "%s", path);
    snprintf(s->mixed_by, sizeof s->mixed_by, "%s", by);
    s->mixed_blocks = info->ndone;
    return 1;
}

/* The refusal of a resume that would mix computers (OOC_SUCCESS when the
 * caller allows it). */
static ooc_status_t mixed_refused(ooc_files_job_t *job, const ooc_files_opts_t *opts, const ooc_files_start_t *s)
{
    if (opts && opts->allow_mixed) return OOC_SUCCESS;
    return OOC_ERR_FILE(&job->h->err, OOC_ERR_JOURNAL, s->mixed,
                        "journal %s: its %" PRId64 " block%s computed by %s, this run would compute the rest "
                        "by %s: their last bits would differ, and C would not be what one run makes. Resume where "
                        "(and with the backend) the job started, run it afresh without resuming, or allow the "
                        "mix (allow_mixed; oocgemm multiply --allow-mixed)",
                        s->mixed, s->mixed_blocks, s->mixed_blocks == 1 ? " was" : "s were",
                        strcmp(s->mixed_by, "several") == 0 ? "several computers (a resume allowed to mix them)"
                                                             : s->mixed_by,
                        job->want.by);
}

/* Read the journal at path (absent: *exists 0); one of another job is refused. */
static ooc_status_t read_journal(ooc_files_job_t *job, const char *path, ooc_journal_info_t *info, int *exists)
{
    ooc_err_t *err = &job->h->err;
    OOC_FORWARD(ooc_journal_read(path, info, exists, err));
    /* a journal whose output was committed as the file at C's path vouches
     * for no block of C's temporary file (a commit cut short records that
     * file, at its temporary path still): passed by (files.c committed_journal) */
    if (*exists && ooc_journal_output_at(info, job->C->path)) {
        ooc_journal_info_free(info);
        *exists = 0;
        return OOC_SUCCESS;
    }
    /* an empty one (its creation cut short, before its header) describes no
     * job and vouches for nothing: not usable, and removed as one would be */
    if (*exists && info->head.job[0] == '\0') return OOC_SUCCESS;
    if (*exists && !ooc_files_same_job(info->head.job, job->want.job)) {
        char what[400];
        ooc_files_job_difference(info->head.job, job->want.job, what, sizeof what);
        ooc_journal_info_free(info);
        *exists = 0;
        return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, path,
                            "journal %s describes another job (changed since it was written: %s): remove it, or "
                            "run without resuming", path, what);
    }
    return OOC_SUCCESS;
}

/* Plan with the sizes of `fixed` (from `what`: a journal's path, or NULL for opts->plan). */
static ooc_status_t plan_fixed(ooc_files_job_t *job, const ooc_plan_t *fixed, const char *what, ooc_plan_t *plan)
{
    ooc_err_t *err = &job->h->err;
    ooc_status_t st = ooc_api_plan(job->h, &job->p, fixed, 0, plan);
    if (st != OOC_ERR_INTERNAL) return st;
    ooc_err_clear(err);
    char desc[256];
    snprintf(desc, sizeof desc,
             "(a_resident %d, %" PRId64 " x %" PRId64 " x %" PRId64 " blocks, tail %d x %d, %d chunks, lead %d, %d pieces)",
             fixed->swap, fixed->mb, fixed->nb, fixed->kb, fixed->tail, fixed->tail_rep, fixed->b_chunks, fixed->lead,
             fixed->a_pieces);
    if (what == NULL)
        return OOC_ERR(err, OOC_ERR_INVALID_PARAM,
                       "ooc_gemm_files: opts->plan %s is not a plan for this job (%" PRId64 " x %" PRId64 " x %" PRId64
                       ")", desc, job->m, job->n, job->k);
    return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, what, "journal %s: its plan %s is not a valid plan for this job", what,
                        desc);
}

/* The plan of opts->plan, checked against this job: the same blocks. */
static ooc_status_t plan_given(ooc_files_job_t *job, const ooc_files_plan_t *g, ooc_plan_t *plan)
{
    ooc_plan_t fixed;
    /* a_pieces 0: a plan from before pieces, its blocks whole */
    fixed_from(g->a_resident, g->block_rows, g->panel_cols, g->panel_depth, g->tail, g->tail_rep, g->b_chunks, g->lead,
               g->a_pieces > 0 ? g->a_pieces : 1, &fixed);
    OOC_FORWARD(plan_fixed(job, &fixed, NULL, plan));
    OOC_RETURN_ERROR_IF(plan->m != g->rows || plan->m_blocks != g->blocks || plan->n_panels * plan->k_panels != g->panels ||
                            (g->cols != 0 && g->cols != plan->n),
                        &job->h->err, OOC_ERR_INVALID_PARAM,
                        "ooc_gemm_files: opts->plan is for another job: %" PRId64 " rows in %" PRId64 " blocks x %" PRId64
                        " panels of %" PRId64 " columns, this job has %" PRId64 " rows in %" PRId64 " x %" PRId64
                        " of %" PRId64, g->rows, g->blocks, g->panels, g->cols, plan->m, plan->m_blocks,
                        plan->n_panels * plan->k_panels, plan->n);
    return OOC_SUCCESS;
}

static ooc_status_t plan_of_journal(ooc_files_job_t *job, const ooc_journal_info_t *have, const char *path,
                                    ooc_plan_t *plan)
{
    const ooc_journal_head_t *h = &have->head;
    ooc_plan_t fixed;
    fixed_from(h->swap, h->mb, h->nb, h->kb, h->tail, h->tail_rep, h->b_chunks, h->lead, h->a_pieces, &fixed);
    OOC_FORWARD(plan_fixed(job, &fixed, path, plan));
    OOC_RETURN_FILE_ERROR_IF(blocks_of(plan) != h->total, &job->h->err, OOC_ERR_JOURNAL, path,
                             "journal %s: its plan has %" PRId64 " blocks, this job %" PRId64, path, h->total,
                             blocks_of(plan));
    return OOC_SUCCESS;
}

/* First block b whose first row is `row` (m_blocks when row is m); -1 when
 * no block starts there. */
static int64_t block_at(const ooc_plan_t *p, int64_t row)
{
    if (row == p->m) return p->m_blocks;
    int64_t lo = 0, hi = p->m_blocks - 1;
    while (lo < hi) { /* first block ending after row */
        int64_t mid = lo + (hi - lo) / 2, r0, r1;
        ooc_plan_block(p, mid, &r0, &r1);
        if (r1 <= row) lo = mid + 1;
        else hi = mid;
    }
    int64_t r0, r1;
    ooc_plan_block(p, lo, &r0, &r1);
    return r0 == row ? lo : -1;
}

/* The column range as panels [p0, p1) of op(B)'s columns: C's columns, or
 * its rows when the plan keeps op(A) resident. */
static ooc_status_t range_panels(ooc_files_job_t *job, ooc_files_start_t *s)
{
    ooc_err_t *err = &job->h->err;
    const ooc_plan_t *p = &s->plan;
    s->p0 = 0;
    s->p1 = p->n_panels;
    if (!job->cranged) return OOC_SUCCESS;
    const char *what = p->swap ? "row" : "column";
    OOC_RETURN_ERROR_IF(job->c1 > p->n, err, OOC_ERR_ROW_RANGE,
                        "ooc_gemm_files: %ss [%" PRId64 ", %" PRId64 ") are not a range of the %" PRId64
                        " %ss of C the plan's panels tile%s", what, job->c0, job->c1, p->n, what,
                        p->swap ? " (it keeps op(A) resident: its panels are rows of C)" : "");
    OOC_RETURN_ERROR_IF(p->k_panels > 1 && !(job->c0 == 0 && job->c1 == p->n), err, OOC_ERR_ROW_RANGE,
                        "ooc_gemm_files: %ss [%" PRId64 ", %" PRId64 ") given, but the plan splits op(B)'s depth "
                        "(%" PRId64 " panels of %" PRId64 " of its %" PRId64 " rows): such a job is split by its "
                        "blocks only; give col_begin = col_end = 0", what, job->c0, job->c1, p->k_panels, p->kb,
                        p->k);
    for (int end = 0; end < 2; end++) {
        int64_t c = end ? job->c1 : job->c0;
        if (c % p->nb == 0 || c == p->n) continue;
        int64_t q = c / p->nb, q1 = (q + 1) * p->nb < p->n ? (q + 1) * p->nb : p->n;
        return OOC_ERR(err, OOC_ERR_ROW_RANGE,
                       "ooc_gemm_files: col_%s = %" PRId64 " is not on a panel boundary of the plan: it falls inside "
                       "panel %" PRId64 ", %ss [%" PRId64 ", %" PRId64 ") of C (ooc_files_plan_cols gives the "
                       "panels)", end ? "end" : "begin", c, q, what, q * p->nb, q1);
    }
    s->p0 = job->c0 / p->nb;
    s->p1 = job->c1 == p->n ? p->n_panels : job->c1 / p->nb;
    return OOC_SUCCESS;
}

/* The range as blocks [b0, b1) of the plan: rows of C, or its columns when
 * the plan keeps op(A) resident (its blocks are C^T's rows); and its
 * panels. */
static ooc_status_t range_blocks(ooc_files_job_t *job, ooc_files_start_t *s)
{
    ooc_err_t *err = &job->h->err;
    const ooc_plan_t *p = &s->plan;
    OOC_FORWARD(range_panels(job, s));
    if (!job->ranged) {
        s->b0 = 0;
        s->b1 = p->m_blocks;
        return OOC_SUCCESS;
    }
    const char *what = p->swap ? "column" : "row";
    /* (a journal's plan may keep op(A) resident where no plan was given) */
    OOC_RETURN_ERROR_IF(job->r1 > p->m, err, OOC_ERR_ROW_RANGE,
                        "ooc_gemm_files: %ss [%" PRId64 ", %" PRId64 ") are not a range of the %" PRId64
                        " %ss of C the plan's blocks tile%s", what, job->r0, job->r1, p->m, what,
                        p->swap ? " (it keeps op(A) resident: its blocks are columns of C)" : "");
    s->b0 = block_at(p, job->r0);
    s->b1 = block_at(p, job->r1);
    for (int end = 0; end < 2; end++) {
        int64_t row = end ? job->r1 : job->r0, b = end ? s->b1 : s->b0;
        if (b >= 0) continue;
        int64_t lo = 0, hi = p->m_blocks - 1, r0 = 0, r1 = 0;
        while (lo < hi) { /* the block holding row, to name its boundaries */
            int64_t mid = lo + (hi - lo) / 2;
            ooc_plan_block(p, mid, &r0, &r1);
            if (r1 <= row) lo = mid + 1;
            else hi = mid;
        }
        ooc_plan_block(p, lo, &r0, &r1);
        return OOC_ERR(err, OOC_ERR_ROW_RANGE,
                       "ooc_gemm_files: row_%s = %" PRId64 " is not on a block boundary of the plan: it falls inside "
                       "block %" PRId64 ", %ss [%" PRId64 ", %" PRId64 ") of C (ooc_files_plan_rows gives the "
                       "blocks)", end ? "end" : "begin", row, lo, what, r0, r1);
    }
    return OOC_SUCCESS;
}

/* Bytes [x, x + len) of a block's rectangle of C's storage (off, pitch,
 * width: pipeline.h ooc_pipe_c_block) packed, its lines one after another,
 * into dst: a part line by itself, whole lines by the pool. */
static ooc_status_t read_packed(ooc_pool_t *pool, const ooc_src_t *c, uint64_t off, size_t pitch, size_t width,
                                uint64_t x, size_t len, char *dst, ooc_err_t *err)
{
    while (len > 0) {
        uint64_t line = x / width, col = x % width, at = c->off + off + line * pitch;
        size_t n = col != 0 || len < width ? (width - col < len ? (size_t)(width - col) : len) : len / width * width;
        if (col != 0 || len < width) {
            OOC_FORWARD(ooc_io_pread(c->fd, dst, n, at + col, c->name, err));
        } else {
            int e = ooc_pool_pread2d(pool, dst, width, c->fd, at, pitch, width, n / width);
            if (e == -1)
                return OOC_ERR_FILE(err, OOC_ERR_FORMAT, c->name, "pread %s: file ended before byte %llu (truncated)",
                                    c->name, (unsigned long long)(at + (n / width - 1) * pitch + width));
            if (e) return OOC_ERR_FILE(err, ooc_errno_status(e), c->name, "pread %s: %s (at byte %llu)", c->name,
                                       strerror(e), (unsigned long long)at);
        }
        dst += n;
        x += n;
        len -= n;
    }
    return OOC_SUCCESS;
}

#define CHECK_CHUNK (64 * OOC_DIGEST_SEG) /* bytes of a block read and hashed at once */

/* Whether block g's bytes in C's temporary file still have the digest d its
 * journal recorded with it: read back (as pipeline.h ooc_pipe_c_block
 * places it) and hashed, by the staging pool's threads. A block that cannot
 * be read (an I/O error) counts as changed: computing it again rewrites it. */
static ooc_status_t block_intact(ooc_files_job_t *job, int64_t g, const ooc_plan_t *plan, uint64_t d, int *intact)
{
    ooc_handle_t *h = job->h;
    ooc_err_t *err = &h->err;
    OOC_FORWARD(ooc_api_staging_pool(h, err));
    ooc_problem_t p = job->p;
    if (plan->swap) ooc_problem_transpose(&p); /* (as the pipeline runs it) */
    uint64_t off;
    size_t pitch, width, height;
    ooc_pipe_c_block(&p, plan, g, &off, &pitch, &width, &height);
    uint64_t total = (uint64_t)width * height;
    size_t cap = total < CHECK_CHUNK ? (size_t)total : CHECK_CHUNK;
    char *buf = malloc(cap ? cap : 1);
    OOC_RETURN_ERROR_IF(buf == NULL, err, OOC_ERR_HOST_MEMORY,
                        "ooc_gemm_files: out of memory (%zu bytes to check a block the journal recorded)", cap);
    ooc_digest_t sum;
    ooc_digest_init(&sum);
    ooc_status_t st = OOC_SUCCESS;
    for (uint64_t x = 0; st == OOC_SUCCESS && x < total; x += cap) {
        size_t n = total - x < cap ? (size_t)(total - x) : cap;
        if (atomic_load(&h->cancel)) {
            free(buf);
            return OOC_ERR(err, OOC_ERR_CANCELLED, "cancelled while checking the blocks the journal recorded");
        }
        st = read_packed(h->pool, &p.C, off, pitch, width, x, n, buf, err);
        if (st == OOC_SUCCESS) ooc_pool_digest(h->pool, &sum, buf, n);
    }
    free(buf);
    *intact = st == OOC_SUCCESS && ooc_digest_final(&sum) == d;
    if (st == OOC_ERR_IO || st == OOC_ERR_FORMAT) { /* unreadable: computed again */
        ooc_err_clear(err);
        st = OOC_SUCCESS;
    }
    return st;
}

/* Block g, skipped as done, and the digest its journal holds, into s->kept. */
static ooc_status_t keep_sum(ooc_files_job_t *job, ooc_files_start_t *s, int64_t g, uint64_t d)
{
    if (s->nkept == s->kept_cap) {
        size_t cap = s->kept_cap ? 2 * s->kept_cap : 256;
        ooc_journal_sum_t *more = realloc(s->kept, cap * sizeof *more);
        OOC_RETURN_ERROR_IF(more == NULL, &job->h->err, OOC_ERR_HOST_MEMORY, "out of memory for %zu digests", cap);
        s->kept = more;
        s->kept_cap = cap;
    }
    s->kept[s->nkept].g = g;
    s->kept[s->nkept++].digest = d;
    return OOC_SUCCESS;
}

/* Block g, recorded done, found changed in C's file: not kept but computed
 * again (counted in s->mismatched, once). */
static ooc_status_t mark_changed(ooc_files_job_t *job, ooc_files_start_t *s, int64_t g)
{
    if (s->changed == NULL) {
        s->changed = calloc((size_t)(s->total + 7) / 8, 1);
        OOC_RETURN_ERROR_IF(s->changed == NULL, &job->h->err, OOC_ERR_HOST_MEMORY,
                            "out of memory for %" PRId64 " blocks", s->total);
    }
    s->changed[g >> 3] |= (unsigned char)(1u << (g & 7));
    s->mismatched++;
    return OOC_SUCCESS;
}

/* This run's journal records the job complete (finished, not committed):
 * its blocks checked against C's file first, with the plan it records.
 * When some changed, nothing of it is used (it takes no record after its
 * complete one): the job is computed afresh, its changed blocks counted in
 * s->mismatched. Else s->own_checked: take_done() need not read them again. */
/* How many blocks of the last k-panel of plan (every block when k is
 * whole) that a complete journal recorded with a digest are not intact in
 * C's file: an earlier panel's digests are of partial sums, which the file
 * no longer holds. With s (another journal than this run's), only this
 * run's blocks (ooc_files_mine), and each changed one is marked changed in
 * every panel (mark_changed: counted once), so that take_done() keeps none
 * of its partial sums and the block is computed again whole, from its
 * first panel. */
static ooc_status_t final_changed(ooc_files_job_t *job, const ooc_journal_info_t *info, const ooc_plan_t *plan,
                                  ooc_files_start_t *s, int64_t *changed)
{
    int64_t per = plan->m_blocks * plan->n_panels, last = per * (plan->k_panels - 1); /* (the last panel's first) */
    *changed = 0;
    for (size_t i = 0; i < info->nsums; i++) {
        int64_t g = info->sums[i].g;
        if (g < last || (s && !ooc_files_mine(s, g))) continue;
        int intact = 1;
        OOC_FORWARD(block_intact(job, g, plan, info->sums[i].digest, &intact));
        *changed += !intact;
        if (intact || s == NULL) continue;
        OOC_FORWARD(mark_changed(job, s, g));
        for (int64_t e = g - per; e >= 0; e -= per) s->changed[e >> 3] |= (unsigned char)(1u << (e & 7));
    }
    return OOC_SUCCESS;
}

static ooc_status_t check_complete(ooc_files_job_t *job, ooc_files_start_t *s)
{
    ooc_plan_t plan;
    if (plan_of_journal(job, &s->have, job->jpath, &plan) != OOC_SUCCESS) { /* (said again below) */
        ooc_err_clear(&job->h->err);
        return OOC_SUCCESS;
    }
    int64_t changed = 0;
    OOC_FORWARD(final_changed(job, &s->have, &plan, NULL, &changed));
    s->own_checked = changed == 0;
    if (changed > 0) {
        s->usable = 0;
        s->mismatched = changed;
    }
    return OOC_SUCCESS;
}

/* The blocks a journal recorded as done, within this run's range, into
 * s->skip (counted in s->mixed_kept too when another computed them; in
 * s->foreign when taken from another journal than this run's and computed
 * by another than this run's journal says). own: the journal is this run's. */
static ooc_status_t take_done(ooc_files_job_t *job, ooc_files_start_t *s, const ooc_journal_info_t *info, int other,
                              int own, int checked)
{
    const char *by = blocks_by(job, info);
    /* this run's journal says its blocks are by its "by" (its own when it
     * is made afresh); one already marked mixed says nothing more */
    const char *target = !s->usable ? job->want.by : s->have.mixed ? NULL : blocks_by(job, &s->have);
    for (int64_t g = 0; g < s->total; g++) {
        if (ooc_files_mine(s, g) && ooc_block_done(info->done, g) && !ooc_block_done(s->skip, g)) {
            /* its bytes checked first, when its record holds their digest */
            uint64_t d;
            int has = ooc_journal_sum(info, g, &d), intact = 1;
            if (has && ooc_block_done(s->changed, g)) continue; /* (found changed already) */
            if (has && !checked) OOC_FORWARD(block_intact(job, g, &s->plan, d, &intact));
            if (!intact) {
                OOC_FORWARD(mark_changed(job, s, g));
                continue;
            }
            s->skip[g >> 3] |= (unsigned char)(1u << (g & 7));
            if (s->ndone++ == 0) snprintf(s->first_by, sizeof s->first_by, "%s", by);
            else if (strcmp(s->first_by, by) != 0) s->kept_differ = 1;
            if (other && s->mixed_kept++ == 0) snprintf(s->kept_by, sizeof s->kept_by, "%s", by);
            s->foreign += !own && target && strcmp(by, target) != 0;
            if (has) OOC_FORWARD(keep_sum(job, s, g, d));
        }
    }
    return OOC_SUCCESS;
}

static int by_block(const void *x, const void *y)
{
    const ooc_journal_sum_t *a = x, *b = y;
    return a->g < b->g ? -1 : a->g > b->g;
}

/* Same file (both exist): a journal listed twice, or the own one listed. */
static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* opts->journals: the plan of the first usable one (when plan_out), or every
 * usable one's done blocks into s->skip (checked against s->plan). */
static ooc_status_t other_journals(ooc_files_job_t *job, const ooc_files_opts_t *opts, ooc_files_start_t *s,
                                   ooc_plan_t *plan_out, int *found)
{
    ooc_err_t *err = &job->h->err;
    *found = 0;
    for (const char *const *j = opts->journals; j && *j; j++) {
        if (same_file(*j, job->jpath)) continue;
        ooc_journal_info_t info;
        int exists = 0;
        OOC_FORWARD(read_journal(job, *j, &info, &exists));
        ooc_status_t st = OOC_SUCCESS;
        if (exists && journal_usable(&info, job->C)) {
            if (plan_out) {
                st = plan_of_journal(job, &info, *j, plan_out);
                *found = st == OOC_SUCCESS;
            } else if (!head_has_plan(&info.head, &s->plan)) {
                st = OOC_ERR_FILE(err, OOC_ERR_JOURNAL, *j,
                                  "journal %s was written with another plan than this run's (%" PRId64 " x %" PRId64
                                  " x %" PRId64 " blocks): resume with its plan (ooc_gemm_files_plan with "
                                  "opts->resume gives it)", *j, info.head.mb, info.head.nb, info.head.kb);
            } else if (!info.head.resumable) {
                /* a range complete in k-panels: this run's blocks of it whose last panel is intact
                 * (final_changed), every panel of them; the others computed again whole */
                int64_t changed = 0;
                st = final_changed(job, &info, &s->plan, s, &changed);
                if (st == OOC_SUCCESS) st = take_done(job, s, &info, note_computer(job, &info, *j, s), 0, 1);
            } else {
                st = take_done(job, s, &info, note_computer(job, &info, *j, s), 0, 0);
            }
        }
        ooc_journal_info_free(&info);
        if (st != OOC_SUCCESS || *found) return st;
    }
    return OOC_SUCCESS;
}

/* The plan of a journal that restarts its job (journal_restarts()), when it
 * still fits (1), else 0: the planner's. */
static int restart_plan(ooc_files_job_t *job, const ooc_journal_info_t *info, const char *path, ooc_plan_t *plan)
{
    if (plan_of_journal(job, info, path, plan) == OOC_SUCCESS) return 1;
    ooc_err_clear(&job->h->err);
    return 0;
}

/* opts->journals: restart_plan() of the first that restarts its job (a split
 * job in k-panels starts over as it was planned). */
static ooc_status_t restart_journals(ooc_files_job_t *job, const ooc_files_opts_t *opts, ooc_plan_t *plan,
                                     int *found)
{
    *found = 0;
    for (const char *const *j = opts->journals; j && *j && !*found; j++) {
        ooc_journal_info_t info;
        int exists = 0;
        OOC_FORWARD(read_journal(job, *j, &info, &exists));
        if (exists && journal_restarts(&info, job->C)) *found = restart_plan(job, &info, *j, plan);
        ooc_journal_info_free(&info);
    }
    return OOC_SUCCESS;
}

/* The blocks info recorded, into the bitmap any (total bits). */
static void mark_done(unsigned char *any, const ooc_journal_info_t *info, int64_t total)
{
    for (int64_t g = 0; g < total; g++)
        if (ooc_block_done(info->done, g)) any[g >> 3] |= (unsigned char)(1u << (g & 7));
}

/* The plan of a resume without ranges (the plan a split job's processes
 * will share): over every journal of the job (its own, opts->journals), the
 * blocks recorded by another compute id are refused when some block of the
 * job is recorded by none: some process would compute it beside them. Each
 * process's run checks only the journals its own range reads, and the rest
 * of the job may be another's (the same split resumed: each reads its own). */

static ooc_status_t whole_job_computer(ooc_files_job_t *job, const ooc_files_opts_t *opts, ooc_files_start_t *s)
{
    unsigned char *any = calloc((size_t)(s->total + 7) / 8, 1);
    OOC_RETURN_ERROR_IF(any == NULL, &job->h->err, OOC_ERR_HOST_MEMORY, "out of memory for %" PRId64 " blocks",
                        s->total);
    if (s->usable) mark_done(any, &s->have, s->total); /* (read, and noted, already) */
    ooc_status_t st = OOC_SUCCESS;
    for (const char *const *j = opts->journals; j && *j && st == OOC_SUCCESS; j++) {
        if (same_file(*j, job->jpath)) continue;
        ooc_journal_info_t info;
        int exists = 0;
        st = read_journal(job, *j, &info, &exists);
        if (st == OOC_SUCCESS && exists && journal_usable(&info, job->C) && head_has_plan(&info.head, &s->plan)) {
            note_computer(job, &info, *j, s);
            mark_done(any, &info, s->total);
        }
        ooc_journal_info_free(&info);
    }
    int64_t recorded = 0;
    for (int64_t g = 0; g < s->total; g++) recorded += ooc_block_done(any, g);
    free(any);
    s->recorded = recorded;
    if (st == OOC_SUCCESS && s->mixed[0] && recorded < s->total) st = mixed_refused(job, opts, s);
    return st;
}

void ooc_files_start_free(ooc_files_start_t *s)
{
    ooc_journal_info_free(&s->have);
    free(s->skip);
    s->skip = NULL;
    free(s->kept);
    s->kept = NULL;
    s->nkept = s->kept_cap = 0;
    free(s->changed);
    s->changed = NULL;
}

int ooc_files_kept_sum(const ooc_files_start_t *s, int64_t g, uint64_t *digest)
{
    return ooc_journal_sum_find(s->kept, s->nkept, g, digest);
}

ooc_status_t ooc_files_start(ooc_files_job_t *job, const ooc_files_opts_t *opts, int ranges, ooc_files_start_t *s)
{
    ooc_err_t *err = &job->h->err;
    memset(s, 0, sizeof *s);
    int resume = opts && opts->resume;
    int cplx = job->p.dtype == OOC_C32 || job->p.dtype == OOC_C64;
    OOC_FORWARD(ooc_handle_id(job->h, cplx, job->want.by)); /* (the backend is open) */
    /* a journal that cannot be trusted is refused, never used or removed */
    if (resume) OOC_FORWARD(read_journal(job, job->jpath, &s->have, &s->exists));
    s->usable = resume && s->exists && journal_usable(&s->have, job->C);
    /* (a sealed one in k-panels as a complete one: its last panel's blocks
     * checked; a sealed one whose plan resumes has each block checked by
     * take_done(), and only a changed one computed again) */
    int final = s->have.complete || (journal_sealed(&s->have, job->C) && !s->have.head.resumable);
    if (s->usable && final && ranges) OOC_FORWARD(check_complete(job, s));
    /* (a complete journal in k-panels is kept only whole: checked, or not at all) */
    if (s->usable && !s->have.head.resumable && ranges && !s->own_checked) s->usable = 0;
    if (s->usable) s->have_other = note_computer(job, &s->have, job->jpath, s);
    ooc_status_t st = OOC_SUCCESS;
    int found = 0;
    if (opts && opts->plan) st = plan_given(job, opts->plan, &s->plan);
    else if (s->usable) st = plan_of_journal(job, &s->have, job->jpath, &s->plan);
    else if (resume && job->C->resumed) st = other_journals(job, opts, s, &s->plan, &found);
    if (st == OOC_SUCCESS && !(opts && opts->plan) && !s->usable && !found && resume) {
        /* a job in k-panels starts over, with the plan its journal (or a
         * split job's) records */
        if (s->exists && journal_restarts(&s->have, job->C)) found = restart_plan(job, &s->have, job->jpath, &s->plan);
        if (!found && job->C->resumed) st = restart_journals(job, opts, &s->plan, &found);
    }
    if (st == OOC_SUCCESS && !(opts && opts->plan) && !s->usable && !found)
        st = ooc_api_plan(job->h, &job->p, NULL, !job->ranged && !job->cranged, &s->plan);
    s->total = blocks_of(&s->plan);
    if (st == OOC_SUCCESS && !ranges && resume && job->C->resumed) st = whole_job_computer(job, opts, s);
    if (st != OOC_SUCCESS || !ranges) return st;

    OOC_FORWARD(range_blocks(job, s));
    int64_t M = s->plan.m_blocks, NP = s->plan.n_panels;
    s->mine = (s->b1 - s->b0) * (s->p1 - s->p0) * s->plan.k_panels;
    if (s->usable) {
        const ooc_journal_head_t *h = &s->have.head;
        int64_t hb0 = h->range_m ? h->range_b0 : 0, hb1 = h->range_m ? h->range_b1 : M;
        int64_t hp0 = h->range_np ? h->range_p0 : 0, hp1 = h->range_np ? h->range_p1 : NP;
        OOC_RETURN_FILE_ERROR_IF(!head_has_plan(h, &s->plan), err, OOC_ERR_JOURNAL, job->jpath,
                                 "journal %s was written with another plan than the one given (%" PRId64 " x %" PRId64
                                 " x %" PRId64 " blocks): resume with its plan (ooc_gemm_files_plan with opts->resume "
                                 "gives it)", job->jpath, h->mb, h->nb, h->kb);
        OOC_RETURN_FILE_ERROR_IF((h->range_m != 0 && h->range_m != M) || (h->range_np != 0 && h->range_np != NP) ||
                                     hb0 != s->b0 || hb1 != s->b1 || hp0 != s->p0 || hp1 != s->p1,
                                 err, OOC_ERR_JOURNAL, job->jpath,
                            "journal %s records %s blocks [%" PRId64 ", %" PRId64 ") of panels [%" PRId64 ", %" PRId64
                            "), this run computes [%" PRId64 ", %" PRId64 ") of [%" PRId64 ", %" PRId64 "): give each "
                            "range its own journal, and pass the old ones in opts->journals to resume with another "
                            "split", job->jpath, s->plan.swap ? "column" : "row", hb0, hb1, hp0, hp1, s->b0, s->b1,
                            s->p0, s->p1);
    }
    int whole = s->b0 == 0 && s->b1 == M && s->p0 == 0 && s->p1 == NP;
    if (whole && !s->usable && !(resume && job->C->resumed && opts->journals)) return OOC_SUCCESS;
    s->skip = calloc((size_t)(s->total + 7) / 8, 1);
    OOC_RETURN_ERROR_IF(s->skip == NULL, err, OOC_ERR_HOST_MEMORY, "out of memory for %" PRId64 " blocks", s->total);
    for (int64_t g = 0; g < s->total; g++)
        if (!ooc_files_mine(s, g)) s->skip[g >> 3] |= (unsigned char)(1u << (g & 7));
    /* every block recorded is skipped, wherever it is: blocks finish out of
     * order, and each is byte-identical whoever computed it */
    if (s->usable) OOC_FORWARD(take_done(job, s, &s->have, s->have_other, 1, s->own_checked));
    if (resume && job->C->resumed) OOC_FORWARD(other_journals(job, opts, s, NULL, &found));
    if (s->nkept > 0) qsort(s->kept, s->nkept, sizeof *s->kept, by_block); /* (for ooc_files_kept_sum) */
    /* blocks of another's rounding kept, and some computed now: refused */
    if (s->mixed[0] && s->ndone < s->mine) return mixed_refused(job, opts, s);
    return OOC_SUCCESS;
}

ooc_status_t ooc_files_plan_rows(const ooc_files_plan_t *plan, int64_t block, int64_t *row_begin, int64_t *row_end)
{
    if (plan == NULL || row_begin == NULL || row_end == NULL) return OOC_ERR_NULL_ARG;
    /* the plan ooc_gemm_files_plan() gives a job that multiplies nothing:
     * no blocks (all zero but rows), so no block is one of it */
    if (plan->blocks == 0 && plan->block_rows == 0 && plan->rows >= 0) return OOC_ERR_ROW_RANGE;
    ooc_plan_t p;
    memset(&p, 0, sizeof p);
    p.m = plan->rows;
    p.n = p.k = p.nb = p.kb = p.n_panels = p.k_panels = 1;
    p.mb = plan->block_rows;
    p.m_blocks = plan->blocks;
    p.tail = plan->tail;
    p.tail_rep = plan->tail_rep;
    p.ring = 2;
    p.b_chunks = p.lead = p.a_pieces = 1;
    p.a_slots = p.ring;
    if (ooc_plan_check(&p) != OOC_SUCCESS) return OOC_ERR_INVALID_PARAM;
    if (block < 0 || block >= plan->blocks) return OOC_ERR_ROW_RANGE;
    ooc_plan_block(&p, block, row_begin, row_end);
    return OOC_SUCCESS;
}

ooc_status_t ooc_files_plan_cols(const ooc_files_plan_t *plan, int64_t panel, int64_t *col_begin, int64_t *col_end)
{
    if (plan == NULL || col_begin == NULL || col_end == NULL) return OOC_ERR_NULL_ARG;
    if (plan->blocks <= 0 || plan->panel_cols <= 0 || plan->cols <= 0) return OOC_ERR_INVALID_PARAM;
    int64_t panels = (plan->cols - 1) / plan->panel_cols + 1;
    if (panel < 0 || panel >= panels) return OOC_ERR_ROW_RANGE;
    *col_begin = panel * plan->panel_cols;
    *col_end = plan->cols - *col_begin > plan->panel_cols ? *col_begin + plan->panel_cols : plan->cols;
    return OOC_SUCCESS;
}

static ooc_status_t plan_run(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha, ooc_file_t *A,
                             ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                             const ooc_files_opts_t *opts, ooc_files_plan_t *plan)
{
    OOC_RETURN_ERROR_IF(plan == NULL, &h->err, OOC_ERR_NULL_ARG, "ooc_gemm_files_plan: plan is NULL");
    ooc_files_opts_t o;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    o.row_begin = o.row_end = o.col_begin = o.col_end = 0; /* not looked at */
    ooc_files_job_t *job = malloc(sizeof *job);
    OOC_RETURN_ERROR_IF(job == NULL, &h->err, OOC_ERR_HOST_MEMORY, "out of memory (job)");
    ooc_status_t st = ooc_files_job(h, ta, tb, alpha, A, B, beta, C0, C, &o, job);
    if (st == OOC_SUCCESS && (job->empty || job->scale)) {
        memset(plan, 0, sizeof *plan);
        plan->rows = job->m;
    } else if (st == OOC_SUCCESS) {
        st = ooc_handle_backend(h);
        if (st == OOC_SUCCESS) st = h->dev[0].be->ops->activate(h->dev[0].be, &h->err);
        ooc_files_start_t s;
        if (st == OOC_SUCCESS) {
            st = ooc_files_start(job, &o, 0, &s);
            if (st == OOC_SUCCESS) to_public(&s.plan, plan);
            /* the creator of a split job's C, resuming a job no journal of
             * this C has a block of: the job starts over, in a new
             * temporary file, as one process's does (files.c files_blocks),
             * so that no journal of the kept one (C's default, one given to
             * an earlier run, an earlier split's) vouches for the blocks the
             * ranks are about to write there; not once another process
             * joined it (ooc_file_restart then keeps it), nor for a plan
             * given (a process's own plan of its range, once the job's is
             * made: the journals it reads are not all the job's) */
            if (st == OOC_SUCCESS && o.resume && o.plan == NULL && C->resumed && C->shared && !C->joined &&
                s.recorded == 0)
                st = ooc_file_restart(&h->err, C);
            ooc_files_start_free(&s);
        }
    }
    free(job);
    return st;
}

ooc_status_t ooc_gemm_files_plan(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha, ooc_file_t *A,
                                 ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                 const ooc_files_opts_t *opts, ooc_files_plan_t *plan)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    return plan_run(h, ta, tb, alpha, A, B, beta, C0, C, opts, plan);
}
