/* SPDX-License-Identifier: MIT */
/*
 * files.c: the api layer for file operands (ooc_gemm_files). With the job
 * described (files_job.c) and its plan and the blocks to skip chosen
 * (files_plan.c), runs the pipeline on the blocks of its range with a
 * hook that flushes each finished block of C and records it in the journal;
 * and tells a finished job (ooc_gemm_files_finished). The journal of a job
 * split between processes is written whole by its output's creator once
 * every process is done, before the commit (ooc_gemm_files_mark_finished):
 * the same header and "complete" record as one process's run, every block
 * done, against the temporary file, which the commit renames.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fault.h"
#include "files.h"

/* Making finished blocks durable. The writer threads (one per device) hand
 * each written block over and go on; a flusher thread flushes C (one
 * fdatasync covers every block written so far) and then records those blocks
 * in the journal, in whatever order they were written, so disk write-back
 * overlaps the reads, the multiplies and the next writes. */
typedef struct {
    ooc_journal_t journal;
    const ooc_file_t *C;
    int64_t total;
    const ooc_files_opts_t *opts;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ooc_journal_rec_t *pend, *spare; /* blocks written into C (with their digests), not yet flushed and
                                      * recorded; the flusher's batch */
    size_t npend, cap, spare_cap;
    int64_t finished;      /* blocks in C so far, those a resume found done included */
    int stop;
    ooc_err_t err;         /* the flusher's failure, if any */
} flush_t;

static void *flusher_main(void *arg)
{
    flush_t *x = arg;
    pthread_mutex_lock(&x->mu);
    for (;;) {
        while (x->npend == 0 && !x->stop && x->err.status == OOC_SUCCESS) pthread_cond_wait(&x->cv, &x->mu);
        if (x->npend == 0 || x->err.status != OOC_SUCCESS) break;
        /* take the pending blocks; the writers go on filling the other list */
        ooc_journal_rec_t *batch = x->pend;
        size_t n = x->npend, cap = x->cap;
        x->pend = x->spare;
        x->cap = x->spare_cap;
        x->npend = 0;
        pthread_mutex_unlock(&x->mu);
        ooc_err_t e;
        ooc_err_clear(&e);
        ooc_status_t st = ooc_io_sync(x->C->fd, x->C->tmp_path, &e);
        if (st == OOC_SUCCESS) st = ooc_journal_done_list(&x->journal, batch, n, &e);
        pthread_mutex_lock(&x->mu);
        x->spare = batch;
        x->spare_cap = cap;
        if (st != OOC_SUCCESS) ooc_err_merge(&x->err, &e);
        pthread_cond_broadcast(&x->cv);
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

/* The run's hook, on a writer thread (one call at a time), after block g is
 * written (digest: of its bytes). */
static ooc_status_t block_done(void *user, int64_t g, uint64_t digest, const ooc_pipe_stats_t *so_far, ooc_err_t *err)
{
    flush_t *x = user;
    pthread_mutex_lock(&x->mu);
    ooc_status_t st = x->err.status;
    if (st == OOC_SUCCESS && x->npend == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        ooc_journal_rec_t *p = realloc(x->pend, cap * sizeof *p);
        if (p == NULL) {
            st = OOC_ERR(&x->err, OOC_ERR_HOST_MEMORY, "out of memory (list of %zu finished blocks)", cap);
        } else {
            x->pend = p;
            x->cap = cap;
        }
    }
    if (st == OOC_SUCCESS) {
        ooc_journal_rec_t r = {g, digest, 1};
        x->pend[x->npend++] = r;
    }
    else ooc_err_merge(err, &x->err); /* stop the run */
    int64_t finished = ++x->finished;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    if (st == OOC_SUCCESS && x->opts && x->opts->progress)
        x->opts->progress(x->opts->progress_user, finished, x->total, so_far->bytes_staged_in, so_far->bytes_staged_out);
    return st;
}

/* Let the flusher record everything written, and stop it. */
static ooc_status_t flusher_finish(flush_t *x, pthread_t thread, ooc_err_t *err)
{
    pthread_mutex_lock(&x->mu);
    x->stop = 1;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    pthread_join(thread, NULL);
    ooc_err_merge(err, &x->err);
    return x->err.status;
}

/* k == 0 or alpha == 0: rows [r0, r1) of C = beta*C0, or zeros when beta
 * == 0 or there is no C0; A and B are not read (BLAS semantics). C0 is in
 * C's order (checked), so both are walked in storage order, a segment (the
 * rows' span in C order, their part of each column in Fortran order) a
 * chunk at a time. A resume of an unfinished one simply does it again;
 * a finished one is recorded complete (scale_journal()). The bytes of C0
 * read and of C written are added to *in and *out. */
static ooc_status_t files_scale(ooc_handle_t *h, const void *beta, const ooc_file_t *C0, ooc_file_t *C, int64_t r0,
                                int64_t r1, uint64_t *in, uint64_t *out)
{
    ooc_err_t *err = &h->err;
    size_t e = ooc_dtype_size(C->spec.dtype);
    int by_rows = C->spec.layout == OOC_ROW_MAJOR;
    uint64_t rows = (uint64_t)(r1 - r0), cols = (uint64_t)C->spec.cols, chunk = ((uint64_t)8 << 20) / e;
    uint64_t segs = by_rows ? 1 : cols, len = by_rows ? rows * cols : rows;
    int read_c0 = C0 != NULL && !ooc_is_zero(C->spec.dtype, beta);
    void *buf = malloc((size_t)(chunk < len ? chunk : len) * e);
    OOC_RETURN_ERROR_IF(buf == NULL, err, OOC_ERR_HOST_MEMORY, "ooc_gemm_files: out of memory (8 MiB)");
    ooc_status_t st = OOC_SUCCESS;
    for (uint64_t j = 0; st == OOC_SUCCESS && j < segs; j++) {
        uint64_t at = by_rows ? (uint64_t)r0 * cols : j * (uint64_t)C->spec.rows + (uint64_t)r0;
        for (uint64_t first = 0; st == OOC_SUCCESS && first < len; first += chunk) {
            uint64_t n = len - first < chunk ? len - first : chunk, off = (at + first) * e;
            if (atomic_load(&h->cancel)) {
                st = OOC_ERR(err, OOC_ERR_CANCELLED, "cancelled while scaling C (%llu of %llu parts done)",
                             (unsigned long long)j, (unsigned long long)segs);
                break;
            }
            if (read_c0) st = ooc_io_pread(C0->fd, buf, (size_t)(n * e), C0->data_offset + off, C0->path, err);
            if (st == OOC_SUCCESS && read_c0) *in += n * e;
            if (st == OOC_SUCCESS) ooc_scale_elems(C->spec.dtype, buf, (size_t)n, beta);
            if (st == OOC_SUCCESS) st = ooc_io_pwrite(C->fd, buf, (size_t)(n * e), C->data_offset + off, C->tmp_path, err);
            if (st == OOC_SUCCESS) *out += n * e;
        }
    }
    free(buf);
    return st;
}

/* The journal's header for this run: the job, the plan, the range (when it
 * is not the whole job) and the temporary file the blocks go into. */
static ooc_status_t journal_head(ooc_files_job_t *job, const ooc_files_start_t *s)
{
    struct stat sb;
    if (fstat(job->C->fd, &sb) != 0)
        return OOC_ERR_FILE(&job->h->err, OOC_ERR_IO, job->C->tmp_path, "fstat %s: %s", job->C->tmp_path,
                            strerror(errno));
    ooc_journal_head_t *w = &job->want;
    const ooc_plan_t *plan = &s->plan;
    w->swap = plan->swap;
    w->mb = plan->mb;
    w->nb = plan->nb;
    w->kb = plan->kb;
    w->tail = plan->tail;
    w->b_chunks = plan->b_chunks;
    w->lead = plan->lead;
    w->tail_rep = plan->tail_rep;
    w->a_pieces = plan->a_pieces;
    w->total = s->total;
    /* with several row panels C is read back: a block torn by a kill
     * would be added twice, so such jobs restart from scratch */
    w->resumable = plan->k_panels == 1;
    w->out_dev = (uint64_t)sb.st_dev;
    w->out_ino = (uint64_t)sb.st_ino;
    ooc_fd_birth(job->C->fd, &w->out_born_sec, &w->out_born_nsec);
    w->out_id = job->C->id;
    int all_panels = s->p0 == 0 && s->p1 == plan->n_panels;
    int whole = s->b0 == 0 && s->b1 == plan->m_blocks && all_panels;
    w->range_b0 = whole ? 0 : s->b0;
    w->range_b1 = whole ? 0 : s->b1;
    w->range_m = whole ? 0 : plan->m_blocks;
    w->range_p0 = all_panels ? 0 : s->p0;
    w->range_p1 = all_panels ? 0 : s->p1;
    w->range_np = all_panels ? 0 : plan->n_panels;
    return OOC_SUCCESS;
}

/* The "complete" record: the output (C's file, every block of it flushed)
 * has the size and modification time it has now. A journal of the whole
 * job seals C first (its trailer goes: the size and time recorded are
 * those it is committed with); when the record cannot be written, the
 * trailer goes back, so that every journal of C (the ranks') still names
 * it. */
static ooc_status_t journal_complete(ooc_journal_t *jr, int whole, ooc_file_t *C, ooc_err_t *err)
{
    const char *name = C->tmp_path ? C->tmp_path : C->path;
    uint64_t id = C->id;
    ooc_status_t st = whole ? ooc_file_seal(err, C) : OOC_SUCCESS;
    struct stat sb;
    if (st == OOC_SUCCESS && fstat(C->fd, &sb) != 0)
        st = OOC_ERR_FILE(err, OOC_ERR_IO, name, "fstat %s: %s", name, strerror(errno));
    if (st == OOC_SUCCESS)
        st = ooc_journal_complete(jr, (uint64_t)sb.st_size, (int64_t)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec, err);
    if (st != OOC_SUCCESS && C->id == 0) ooc_file_unseal(C, id); /* (failing, a resume computes again) */
    return st;
}

/* A finished job's journal at job->jpath (replacing one there), header
 * job->want: every block done, and complete with C as it is now. */
static ooc_status_t journal_finished(ooc_files_job_t *job, int mixed)
{
    ooc_err_t *err = &job->h->err;
    OOC_FORWARD(ooc_journal_remove(job->jpath, err)); /* only ever a journal */
    ooc_journal_t jr;
    OOC_FORWARD(ooc_journal_create(&jr, job->jpath, &job->want, err));
    ooc_status_t st = mixed ? ooc_journal_mixed(&jr, err) : OOC_SUCCESS; /* before its blocks, as a run writes it */
    if (st == OOC_SUCCESS) st = ooc_journal_done_all(&jr, &job->want, err);
    if (st == OOC_SUCCESS) st = journal_complete(&jr, job->want.range_m == 0, job->C, err);
    ooc_journal_close(&jr, st != OOC_SUCCESS); /* never a journal that vouches for part of it */
    return st;
}

/* A whole scaling job done: its journal, one block done and complete, as a
 * multiply's, so that the same command again with --resume finds it
 * finished instead of scaling again a C0 that, computed in place, is its
 * output by then (C = 4 C0 after two runs of C = 2 C0). */
static ooc_status_t scale_journal(ooc_files_job_t *job)
{
    ooc_err_t *err = &job->h->err;
    struct stat sb;
    if (fdatasync(job->C->fd) != 0 || fstat(job->C->fd, &sb) != 0)
        return OOC_ERR_FILE(err, OOC_ERR_IO, job->C->tmp_path, "flushing %s: %s", job->C->tmp_path, strerror(errno));
    ooc_journal_head_t *w = &job->want;
    w->swap = 0;
    w->mb = job->m;
    w->nb = job->n;
    w->kb = 1;
    w->tail = w->range_b0 = w->range_b1 = w->range_m = w->range_p0 = w->range_p1 = w->range_np = 0;
    w->b_chunks = w->lead = w->tail_rep = w->a_pieces = w->resumable = 1;
    w->total = 1;
    w->out_dev = (uint64_t)sb.st_dev;
    w->out_ino = (uint64_t)sb.st_ino;
    ooc_fd_birth(job->C->fd, &w->out_born_sec, &w->out_born_nsec);
    w->out_id = job->C->id;
    return journal_finished(job, 0); /* no block multiplied: nothing to mix */
}

/* The blocks of this run's range that other journals recorded done (a
 * split job resumed with another split: s->skip has them, this journal not):
 * recorded in this journal too, first, so that it holds every block of its
 * range when it says complete (its parser takes nothing less). */
#define TAKEN_BATCH 16384 /* records written (and flushed) at once */
static ooc_status_t record_taken(ooc_journal_t *jr, const ooc_files_start_t *s, ooc_err_t *err)
{
    if (!s->skip) return OOC_SUCCESS;
    ooc_journal_rec_t *list = malloc(TAKEN_BATCH * sizeof *list);
    OOC_RETURN_ERROR_IF(list == NULL, err, OOC_ERR_HOST_MEMORY, "ooc_gemm_files: out of memory (%zu bytes)",
                        TAKEN_BATCH * sizeof *list);
    ooc_status_t st = OOC_SUCCESS;
    size_t n = 0;
    for (int64_t g = 0; st == OOC_SUCCESS && g < s->total; g++) {
        if (!ooc_files_mine(s, g) || !ooc_block_done(s->skip, g) || (s->usable && ooc_block_done(s->have.done, g)))
            continue;
        list[n].g = g;
        list[n].has = ooc_files_kept_sum(s, g, &list[n].digest); /* (checked: files_plan.c take_done()) */
        n++;
        if (n == TAKEN_BATCH) {
            st = ooc_journal_done_list(jr, list, n, err);
            n = 0;
        }
    }
    if (st == OOC_SUCCESS) st = ooc_journal_done_list(jr, list, n, err);
    free(list);
    return st;
}

/* Run the blocks of s not skipped, recording each in the journal, and mark
 * the journal complete. */
static ooc_status_t files_blocks(ooc_files_job_t *job, const ooc_files_opts_t *opts, ooc_files_start_t *s)
{
    ooc_handle_t *h = job->h;
    ooc_err_t *err = &h->err;
    int was_complete = s->usable && s->have.complete; /* killed after its last record, before the commit */
    flush_t x;
    memset(&x, 0, sizeof x);
    x.journal.fd = -1;
    x.C = job->C;
    x.total = s->mine;
    x.opts = opts;
    x.finished = s->ndone;
    ooc_status_t st = OOC_SUCCESS;
    if (s->usable) {
        st = ooc_journal_append_open(&x.journal, job->jpath, &s->have, err);
    } else {
        /* starting over: a journal a resume could not use goes (it is one:
         * ooc_journal_read parsed it) */
        if (s->exists) st = ooc_journal_remove(job->jpath, err);
        /* in the temporary file a resume kept, which another journal (C's
         * default one, or one given to an earlier run) may vouch for: were
         * it written in place, that journal would later vouch for this
         * run's blocks, partial sums of a job in k-panels, or its own torn
         * ones. A new file instead, unless a journal of this run's blocks
         * (another process's range, or opts->journals) vouches for some */
        int whole = s->b0 == 0 && s->b1 == s->plan.m_blocks && s->p0 == 0 && s->p1 == s->plan.n_panels;
        if (st == OOC_SUCCESS && job->C->resumed && !job->C->joined && !job->C->shared && whole && s->ndone == 0)
            st = ooc_file_restart(err, job->C);
        if (st == OOC_SUCCESS) st = journal_head(job, s);
        if (st == OOC_SUCCESS) st = ooc_journal_create(&x.journal, job->jpath, &job->want, err);
    }
    /* the journal is about to hold blocks that its "by" did not compute
     * (a resume that allows it, or one that computes nothing, takes them
     * from other journals; one that allows it computes beside another's in
     * that journal): it says its blocks are mixed, first, so that no later
     * resume takes them all for its "by"'s. Nothing is written to a journal
     * that gains no block (one complete already takes no record after) */
    if (st == OOC_SUCCESS &&
        (s->foreign > 0 || (s->usable && s->have_other && !s->have.mixed && s->ndone < s->mine)))
        st = ooc_journal_mixed(&x.journal, err);
    if (st == OOC_SUCCESS) st = record_taken(&x.journal, s, err);
    if (st != OOC_SUCCESS) {
        ooc_journal_close(&x.journal, 0);
        return st;
    }
    pthread_mutex_init(&x.mu, NULL);
    pthread_cond_init(&x.cv, NULL);
    pthread_t flusher;
    int rc = pthread_create(&flusher, NULL, flusher_main, &x);
    st = rc == 0 ? OOC_SUCCESS : OOC_ERR(err, OOC_ERR_THREAD, "pthread_create: error %d (flusher)", rc);
    if (st == OOC_SUCCESS) {
        if (s->ndone < s->mine) {
            ooc_run_hooks_t hooks = {s->skip, block_done, &x, 1, NULL, 0, NULL, 0};
            st = ooc_api_execute(h, &job->p, &s->plan, &hooks);
        }
        /* after a failure too: what was written is recorded, for a resume */
        ooc_status_t fst = flusher_finish(&x, flusher, err);
        if (st == OOC_SUCCESS) st = fst;
    }
    pthread_cond_destroy(&x.cv);
    pthread_mutex_destroy(&x.mu);
    free(x.pend);
    free(x.spare);
    /* a process that joined C: its blocks are in the creator's temporary
     * file only while that is still at its path (committed or removed
     * meanwhile, they went into a committed C or nowhere: not complete) */
    if (st == OOC_SUCCESS && job->C->joined && !ooc_fd_is_path(job->C->fd, job->C->tmp_path))
        st = OOC_ERR_FILE(err, OOC_ERR_IO, job->C->tmp_path,
                          "%s was committed or removed while this process computed its blocks into it (the creator "
                          "commits once every process that joined has closed it): they are not in the output",
                          job->C->tmp_path);
    /* an input rewritten while its blocks were read: C mixes two inputs,
     * and the journal vouches for blocks of either; it goes (and with it,
     * for the caller, the temporary file: nothing to resume) */
    int changed = 0;
    if (st == OOC_SUCCESS && !was_complete && s->ndone < s->mine) {
        st = ooc_files_inputs_changed(job, NULL, &changed);
    } else if (st != OOC_SUCCESS && st != OOC_ERR_CANCELLED && !was_complete) {
        /* a failure (a read past an input cut short, say) because an input
         * changed: said so, and nothing to resume either (a resume would
         * refuse the changed input, the journal is gone) */
        char *why = strndup(err->msg, ooc_err_words_len(err));
        if (why != NULL && ooc_files_inputs_changed(job, why, &changed) != OOC_SUCCESS) st = OOC_ERR_IO;
        free(why);
    }
    if (st == OOC_SUCCESS && !was_complete) {
        /* every block is flushed (the flusher synced after the last write):
         * record the finished output's identity, so that a resume of the
         * finished (and committed) job does nothing */
        st = journal_complete(&x.journal, job->want.range_m == 0, job->C, err);
    }
    ooc_journal_close(&x.journal, changed);
    return st;
}

/* The journal at path, when it records a job whose output was committed as
 * the file now at C's path (ooc_journal_output_at; ooc_file_create
 * with OOC_FILE_RESUME keeps such a default journal of a job in place): for
 * this same job in place, resumed (or recorded finished again), refused: C0
 * is that file, which may hold the job's result, and computing again would
 * take it for C0 (C = f(f(C0))); ooc_gemm_files_finished() tells such a job
 * finished. Else it vouches for nothing this run keeps, and goes (by the
 * process that created C: the ranks that joined it leave it, and read_journal
 * passes it by), as ooc_file_create() removes any other default journal. */
static ooc_status_t committed_journal(ooc_files_job_t *job, const char *path, int resume)
{
    ooc_err_t *err = &job->h->err;
    ooc_journal_info_t have;
    int exists = 0;
    OOC_FORWARD(ooc_journal_read(path, &have, &exists, err));
    if (!exists) return OOC_SUCCESS;
    int committed = ooc_journal_output_at(&have, job->C->path);
    int same = committed && resume && ooc_files_in_place(job->C0, job->C->path) &&
               ooc_files_same_but_c0(have.head.job, job->want.job);
    ooc_journal_info_free(&have);
    OOC_RETURN_FILE_ERROR_IF(same, err, OOC_ERR_JOURNAL, path,
                             "the journal %s records this in-place job as complete and committed: %s may hold "
                             "its result, which computing again would take for C0; nothing done "
                             "(ooc_gemm_files_finished() tells a finished job; to compute afresh from %s as it is "
                             "now, run without resume)",
                             path, job->C->path, job->C->path);
    return committed && !job->C->joined ? ooc_journal_remove(path, err) : OOC_SUCCESS;
}

/* committed_journal() of this run's journal and of C's default one. */
static ooc_status_t committed_journals(ooc_files_job_t *job, int resume)
{
    char def[4096];
    OOC_FORWARD(ooc_files_journal_path(&job->h->err, job->C->path, NULL, def, sizeof def));
    OOC_FORWARD(committed_journal(job, job->jpath, resume));
    return strcmp(def, job->jpath) != 0 ? committed_journal(job, def, resume) : OOC_SUCCESS;
}

static ooc_status_t files_run(ooc_files_job_t *job, const ooc_files_opts_t *opts)
{
    ooc_handle_t *h = job->h;
    ooc_err_t *err = &h->err;
    double t0 = ooc_now();
    memset(&h->stats, 0, sizeof h->stats);
    h->mismatched_seen = 0;
    OOC_FORWARD(committed_journals(job, opts && opts->resume));
    if (job->empty) {
        h->have_stats = 1;
        return OOC_SUCCESS;
    }
    /* a fresh run invalidates any old journal at once: were it kept and this
     * run failed before writing its own, a later resume would trust it */
    if (!(opts && opts->resume)) OOC_FORWARD(ooc_journal_remove(job->jpath, err));
    if (job->scale) {
        uint64_t in = 0, out = 0;
        OOC_FORWARD(files_scale(h, job->beta, job->C0, job->C, job->r0, job->r1, &in, &out));
        if (job->r0 == 0 && job->r1 == job->m) OOC_FORWARD(scale_journal(job)); /* (split: its creator marks it) */
        /* the job's one block (as its journal counts it) is done: its bytes
         * are reported as a multiply's blocks report theirs (they were not:
         * the tool said 0 B read and written) */
        if (opts && opts->progress) opts->progress(opts->progress_user, 1, 1, in, out);
        h->stats.seconds = ooc_now() - t0;
        h->have_stats = 1;
        return OOC_SUCCESS;
    }
    ooc_files_start_t s;
    memset(&s, 0, sizeof s);
    ooc_status_t st = ooc_handle_backend(h);
    if (st == OOC_SUCCESS) st = h->dev[0].be->ops->activate(h->dev[0].be, err);
    if (st == OOC_SUCCESS) st = ooc_files_start(job, opts, 1, &s);
    h->mismatched_seen = s.mismatched; /* (said even when the run fails or is stopped) */
    /* every allocation before the journal is made: running out of memory
     * fails a fresh job before it leaves anything to resume */
    if (st == OOC_SUCCESS) st = ooc_api_prepare(h, &job->p, &s.plan);
    if (st == OOC_SUCCESS) st = files_blocks(job, opts, &s);
    ooc_files_start_free(&s);
    if (st != OOC_SUCCESS) return st;
    const ooc_plan_t *plan = &s.plan;
    h->stats.seconds = ooc_now() - t0;
    h->stats.blocks_resumed = s.ndone;
    h->stats.blocks_mismatched = s.mismatched;
    if (s.ndone > 0) snprintf(h->stats.kept_by, sizeof h->stats.kept_by, "%s", s.kept_differ ? "several" : s.first_by);
    /* a whole job that computes nothing mixes nothing unless the blocks it
     * keeps are of several ids (a range's blocks may sit beside the other
     * processes' it cannot see) */
    if (!job->ranged && !job->cranged && s.ndone >= s.mine && !s.kept_differ) s.mixed_kept = 0;
    h->stats.blocks_mixed = s.mixed_kept;
    if (s.mixed_kept > 0) snprintf(h->stats.mixed_by, sizeof h->stats.mixed_by, "%s", s.kept_by);
    if (s.ndone >= s.mine) { /* nothing was left to run: say what the plan was */
        h->stats.block_rows = plan->mb;
        h->stats.panel_cols = plan->nb;
        h->stats.panel_depth = plan->kb;
        h->stats.blocks = plan->m_blocks;
        h->stats.panels = plan->n_panels * plan->k_panels;
        h->stats.a_resident = plan->swap;
        h->stats.aligned_tiles = plan->pad_lines;
        h->stats.resident_transposed = plan->b_transposed;
    }
    h->have_stats = 1;
    return OOC_SUCCESS;
}

ooc_status_t ooc_gemm_files(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha, ooc_file_t *A,
                            ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                            const ooc_files_opts_t *opts)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    h->have_stats = 0;
    ooc_files_job_t *job = malloc(sizeof *job);
    ooc_status_t st = job ? ooc_files_job(h, ta, tb, alpha, A, B, beta, C0, C, opts, job)
                          : OOC_ERR(&h->err, OOC_ERR_HOST_MEMORY, "ooc_gemm_files: out of memory (job)");
    if (st == OOC_SUCCESS) st = files_run(job, opts);
    free(job);
    return ooc_handle_done(h, st); /* every return consumes an ooc_cancel() request */
}

ooc_status_t ooc_gemm_files_finished(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha,
                                     ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0,
                                     const char *c_path, const ooc_file_spec_t *c_spec,
                                     const ooc_files_opts_t *opts, int *finished)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(alpha == NULL || beta == NULL || c_path == NULL || c_spec == NULL || finished == NULL, err,
                        OOC_ERR_NULL_ARG, "ooc_gemm_files_finished: a pointer argument is NULL");
    OOC_RETURN_ERROR_IF(A == NULL, err, OOC_ERR_NULL_A, "ooc_gemm_files_finished: A is NULL");
    OOC_RETURN_ERROR_IF(B == NULL, err, OOC_ERR_NULL_B, "ooc_gemm_files_finished: B is NULL");
    OOC_RETURN_ERROR_IF(c_spec->dtype < OOC_R32 || c_spec->dtype > OOC_C64, err, OOC_ERR_INVALID_DTYPE,
                        "ooc_gemm_files_finished: unknown dtype %d", (int)c_spec->dtype);
    /* (the argument errors ooc_gemm_files() would give, not "not finished") */
    OOC_RETURN_ERROR_IF(ta != OOC_OP_N && ta != OOC_OP_T && ta != OOC_OP_C, err, OOC_ERR_INVALID_TRANSA,
                        "ooc_gemm_files_finished: transa %d is not N, T or C", (int)ta);
    OOC_RETURN_ERROR_IF(tb != OOC_OP_N && tb != OOC_OP_T && tb != OOC_OP_C, err, OOC_ERR_INVALID_TRANSB,
                        "ooc_gemm_files_finished: transb %d is not N, T or C", (int)tb);
    OOC_RETURN_ERROR_IF(!ooc_is_zero(c_spec->dtype, beta) && C0 == NULL, err, OOC_ERR_NULL_ARG,
                        "ooc_gemm_files_finished: beta != 0 needs C0, the matrix to add");
    OOC_FORWARD(ooc_fault_check(err)); /* (a job found finished opens no backend) */
    ooc_file_spec_t cs = *c_spec;
    if (cs.format == OOC_FORMAT_AUTO) cs.format = OOC_FORMAT_NPY; /* as ooc_file_create resolves it */
    char jpath[4096], job[OOC_JOURNAL_JOB_MAX];
    OOC_FORWARD(ooc_files_journal_path(err, c_path, opts, jpath, sizeof jpath));
    /* in place: C0 is the file now at c_path */
    int in_place = ooc_files_in_place(C0, c_path);
    OOC_FORWARD(ooc_files_job_line(h, err, ta, tb, alpha, A, B, beta, C0, &cs, in_place, job, sizeof job));
    ooc_journal_info_t have;
    int exists = 0;
    OOC_FORWARD(ooc_journal_read(jpath, &have, &exists, err));
    /* the output the journal completed, at c_path, unchanged */
    int is_output = exists && ooc_journal_output_is(&have, c_path);
    int same_job = is_output && ooc_files_same_job(have.head.job, job);
    int same_but_c0 = exists && ooc_files_same_but_c0(have.head.job, job);
    /* in place, C0 is now this job's own output, so its identity differs
     * from the one recorded; the rest of the job must match */
    if (is_output && !same_job && in_place) same_job = same_but_c0;
    /* this in-place job committed, and C changed since (touched, rewritten,
     * replaced): C may hold the result, which a run now would take for C0
     * (the result computed again from itself): neither finished nor to start.
     * Not when the output is still at its temporary path (recorded complete,
     * the commit cut short: C is C0 as it was, and a resume commits) */
    char tmp[4096 + sizeof OOC_TMP_SUFFIX];
    int uncommitted = exists && (size_t)snprintf(tmp, sizeof tmp, "%s" OOC_TMP_SUFFIX, c_path) < sizeof tmp &&
                      ooc_journal_output_is(&have, tmp);
    int changed = !is_output && !uncommitted && in_place && have.complete && have.head.range_m == 0 && same_but_c0;
    /* a finished job's journal, of another job (other scalars or ops, an
     * input replaced or modified since): not finished, and a run computes
     * anew, which is no loss; said in ooc_last_error() (the call succeeds)
     * for the caller's note of why */
    char why[400] = "";
    if (exists && have.complete && have.head.range_m == 0 && !uncommitted && !ooc_files_same_job(have.head.job, job) &&
        !(in_place && same_but_c0))
        ooc_files_job_difference(have.head.job, job, why, sizeof why);
    ooc_journal_info_free(&have);
    OOC_RETURN_FILE_ERROR_IF(changed, err, OOC_ERR_JOURNAL, jpath,
                             "the journal %s records this in-place job as complete, but %s has changed since it was "
                             "committed (written, touched or replaced): it may hold the result, and computing again "
                             "would take that for C0; nothing done (start afresh from %s as it is now without resume, "
                             "or remove %s)", jpath, c_path, c_path, jpath);
    /* finished: the rename that put C at its path made durable, which the
     * commit may have failed to do (its directory's flush failed after the
     * rename: C complete at its path, the journal complete), so that a
     * requeued job that says finished leaves no result a crash could undo */
    if (same_job) OOC_FORWARD(ooc_io_sync_dir(c_path, err));
    if (why[0])
        snprintf(err->msg, sizeof err->msg, "the journal %.200s records another job as finished (what differs: %.250s)",
                 jpath, why);
    *finished = same_job; /* (written on success alone, as every output) */
    return OOC_SUCCESS;
}

ooc_status_t ooc_journal_forget(ooc_handle_t *h, const char *path)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    OOC_RETURN_ERROR_IF(path == NULL, &h->err, OOC_ERR_NULL_ARG, "ooc_journal_forget: path is NULL");
    return ooc_journal_remove(path, &h->err);
}

/* The output C is still where it is, as made: the very file at its
 * temporary path (not committed yet) or at its path (committed), not
 * replaced since, and of the size ooc_file_create made it. */
static ooc_status_t output_intact(ooc_err_t *err, const ooc_file_t *C)
{
    const char *at_path = C->committed ? C->path : C->tmp_path, *was = C->committed ? "committed" : "created";
    struct stat at, fd;
    if (fstat(C->fd, &fd) != 0) return OOC_ERR_FILE(err, OOC_ERR_IO, at_path, "fstat %s: %s", at_path, strerror(errno));
    if (lstat(at_path, &at) != 0 || !S_ISREG(at.st_mode) || at.st_dev != fd.st_dev || at.st_ino != fd.st_ino)
        return OOC_ERR_FILE(err, OOC_ERR_IO, at_path,
                            "ooc_gemm_files_mark_finished: %s is no longer the output %s there (removed or "
                            "replaced since): nothing recorded", at_path, was);
    uint64_t want = C->data_offset + C->data_bytes + (C->id != 0 ? OOC_TMP_TRAILER : 0); /* (not sealed yet) */
    if ((uint64_t)fd.st_size != want)
        return OOC_ERR_FILE(err, OOC_ERR_FORMAT, at_path,
                            "ooc_gemm_files_mark_finished: %s holds %jd bytes, the output of this job %ju (truncated "
                            "or extended since it was %s?): nothing recorded", at_path, (intmax_t)fd.st_size,
                            (uintmax_t)want, was);
    /* every process's blocks flushed (each synced its own), before the
     * journal vouches for them */
    return ooc_io_sync(C->fd, at_path, err);
}

/* Write the whole job's journal at job->jpath: its header with the plan of
 * opts, every block done, complete with C's size and modification time. */
static ooc_status_t mark_run(ooc_files_job_t *job, const ooc_files_opts_t *opts)
{
    ooc_handle_t *h = job->h;
    ooc_err_t *err = &h->err;
    ooc_files_start_t s;
    memset(&s, 0, sizeof s);
    ooc_status_t st = committed_journals(job, 1);
    if (st == OOC_SUCCESS) st = ooc_handle_backend(h);
    if (st == OOC_SUCCESS) st = h->dev[0].be->ops->activate(h->dev[0].be, err);
    if (st == OOC_SUCCESS) st = ooc_files_start(job, opts, 1, &s); /* opts->plan, checked against the job */
    if (st == OOC_SUCCESS) st = journal_head(job, &s);               /* the whole job, out = C's file */
    ooc_files_start_free(&s);
    return st == OOC_SUCCESS ? journal_finished(job, opts->allow_mixed) : st;
}

ooc_status_t ooc_gemm_files_job(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha, ooc_file_t *A,
                                ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C, char *line, size_t cap)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(line == NULL || cap == 0, err, OOC_ERR_NULL_ARG, "ooc_gemm_files_job: job is NULL or cap 0");
    line[0] = '\0';
    ooc_files_opts_t o;
    memset(&o, 0, sizeof o);
    ooc_files_job_t *job = malloc(sizeof *job);
    OOC_RETURN_ERROR_IF(job == NULL, err, OOC_ERR_HOST_MEMORY, "ooc_gemm_files_job: out of memory (job)");
    ooc_status_t st = ooc_files_job(h, ta, tb, alpha, A, B, beta, C0, C, &o, job);
    /* (a job with nothing to compute has no line: its journal records none) */
    if (st == OOC_SUCCESS && strlen(job->want.job) >= cap)
        st = OOC_ERR(err, OOC_ERR_INVALID_PARAM, "ooc_gemm_files_job: %zu bytes given, the job's identity takes %zu",
                     cap, strlen(job->want.job) + 1);
    if (st == OOC_SUCCESS) snprintf(line, cap, "%s", job->want.job);
    free(job);
    return st;
}

ooc_status_t ooc_gemm_files_mark_finished(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha,
                                          ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0,
                                          ooc_file_t *C, const ooc_files_opts_t *opts)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(C == NULL, err, OOC_ERR_NULL_C, "ooc_gemm_files_mark_finished: C is NULL");
    OOC_RETURN_ERROR_IF(opts == NULL || opts->plan == NULL, err, OOC_ERR_NULL_ARG,
                        "ooc_gemm_files_mark_finished: opts->plan (the plan the job ran) is NULL");
    OOC_RETURN_FILE_ERROR_IF(C->joined || !(C->committed || (C->writable && C->tmp_path != NULL)), err,
                             OOC_ERR_INVALID_PARAM, C->path,
                             "ooc_gemm_files_mark_finished: %s is not an output this process created "
                             "(ooc_file_create; a joined file's creator records the job)", C->path);
    OOC_RETURN_ERROR_IF(opts->row_begin != 0 || opts->row_end != 0 || opts->col_begin != 0 || opts->col_end != 0, err,
                        OOC_ERR_ROW_RANGE,
                        "ooc_gemm_files_mark_finished: rows [%" PRId64 ", %" PRId64 ") and columns [%" PRId64 ", %" PRId64
                        ") given: it records the whole job, give 0, 0", opts->row_begin, opts->row_end,
                        opts->col_begin, opts->col_end);
    OOC_FORWARD(ooc_file_alone(err, C, "ooc_gemm_files_mark_finished"));
    OOC_FORWARD(output_intact(err, C));
    /* C as the job ran it (what ooc_files_job checks and describes): the
     * file created for writing, its data at its temporary path or, once
     * committed, at C's path */
    ooc_file_t view = *C;
    view.writable = 1;
    view.committed = 0;
    if (C->committed) view.tmp_path = C->path;
    ooc_files_opts_t o = {.journal = opts->journal, .plan = opts->plan, .allow_mixed = opts->allow_mixed != 0,
                          .job = opts->job};
    ooc_files_job_t *job = malloc(sizeof *job);
    OOC_RETURN_ERROR_IF(job == NULL, err, OOC_ERR_HOST_MEMORY, "ooc_gemm_files_mark_finished: out of memory (job)");
    ooc_status_t st = ooc_files_job(h, ta, tb, alpha, A, B, beta, C0, &view, &o, job);
    /* m or n 0: no journal (nothing is computed, nothing could be redone
     * wrongly); a scaling job (k 0 or alpha 0) recorded as one process's */
    if (st == OOC_SUCCESS && !job->empty) st = job->scale ? scale_journal(job) : mark_run(job, &o);
    C->id = view.id; /* sealed through the view, or not */
    free(job);
    return st;
}
