/* SPDX-License-Identifier: MIT */
/*
 * files.c: the api layer for file operands (ooc_gemm_files). Checks the
 * files against each other, turns them into one problem in C's layout (an
 * operand stored in the other order is its own transpose), plans it (or
 * reuses the plan a resume journal recorded), and runs the pipeline with a
 * hook that flushes each finished block of C and records it in the journal.
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

#include "handle.h"
#include "io.h"
#include "journal.h"

static const char *dtype_name(ooc_dtype_t t)
{
    return t == OOC_R32 ? "float32" : t == OOC_R64 ? "float64" : t == OOC_C32 ? "complex64" : "complex128";
}

/* op(X) of a file X: rows x cols after the op */
static void op_shape(const ooc_file_t *f, ooc_op_t op, int64_t *rows, int64_t *cols)
{
    *rows = op == OOC_OP_N ? f->spec.rows : f->spec.cols;
    *cols = op == OOC_OP_N ? f->spec.cols : f->spec.rows;
}

/* The operand as a source in layout `layout`, with *op adjusted: a file in
 * the other order holds the transpose of what it holds in this one. */
static ooc_status_t as_source(ooc_handle_t *h, const char *role, const ooc_file_t *f, ooc_layout_t layout,
                              ooc_op_t *op, ooc_src_t *src)
{
    if (f->spec.layout != layout) {
        OOC_RETURN_ERROR_IF(*op == OOC_OP_C, &h->err, OOC_ERR_NOT_SUPPORTED,
                            "op(%s) = C (conjugate transpose) needs %s in the output's order (%s order); "
                            "%s is in the other", role, f->path, layout == OOC_ROW_MAJOR ? "C" : "Fortran", role);
        *op = *op == OOC_OP_N ? OOC_OP_T : OOC_OP_N;
    }
    src->ptr = NULL;
    src->fd = f->fd;
    src->off = f->data_offset;
    src->name = f->path;
    src->ld = ooc_file_ld(f);
    if (src->ld < 1) src->ld = 1;
    src->pinned = 0;
    return OOC_SUCCESS;
}

/* Identity of an input for the journal: the same file, unchanged. */
static int identity(const char *role, const ooc_file_t *f, char *buf, size_t cap)
{
    struct stat st;
    if (f == NULL) return snprintf(buf, cap, " %s=none", role);
    if (fstat(f->fd, &st) != 0) return -1;
    return snprintf(buf, cap, " %s=%ju:%ju:%jd:%jd.%09ld:%" PRId64 "x%" PRId64 ":%d", role, (uintmax_t)st.st_dev,
                    (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                    f->spec.rows, f->spec.cols, (int)f->spec.layout);
}

static void hex(const void *x, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", ((const unsigned char *)x)[i]);
}

/* The job's identity line: types, ops, scalars, the output's shape and
 * format, and each input's identity. */
static ooc_status_t job_line(ooc_err_t *err, ooc_op_t ta, ooc_op_t tb, const void *alpha, const ooc_file_t *A,
                             const ooc_file_t *B, const void *beta, const ooc_file_t *C0, const ooc_file_spec_t *cs,
                             char *job, size_t cap)
{
    size_t e = ooc_dtype_size(cs->dtype), used = 0;
    char a[40] = "", b[40] = "";
    hex(alpha, e, a);
    hex(beta, e, b);
    int n = snprintf(job, cap, "dtype=%d ta=%d tb=%d alpha=%s beta=%s C=%" PRId64 "x%" PRId64 ":%d:%d",
                     (int)cs->dtype, (int)ta, (int)tb, a, b, cs->rows, cs->cols, (int)cs->layout, (int)cs->format);
    const ooc_file_t *in[3] = {A, B, C0};
    const char *roles[3] = {"A", "B", "C0"};
    for (int i = 0; n >= 0 && i < 3; i++) {
        used += (size_t)n;
        if (used >= cap) break;
        n = identity(roles[i], in[i], job + used, cap - used);
    }
    OOC_RETURN_ERROR_IF(n < 0 || used + (size_t)n >= cap, err, OOC_ERR_IO,
                        "fstat of an input failed or the job description is too long: %s",
                        n < 0 ? strerror(errno) : "too long");
    return OOC_SUCCESS;
}

/* The journal's path: opts->journal, else "<C's path>.ooc-journal". */
static ooc_status_t journal_path(ooc_err_t *err, const char *c_path, const ooc_files_opts_t *opts, char *buf,
                                 size_t cap)
{
    int len = opts && opts->journal ? snprintf(buf, cap, "%s", opts->journal)
                                    : snprintf(buf, cap, "%s" OOC_JOURNAL_SUFFIX, c_path);
    OOC_RETURN_ERROR_IF(len <= 0 || (size_t)len >= cap, err, OOC_ERR_IO, "journal path too long or empty");
    return OOC_SUCCESS;
}

/* The journal must be a file of its own: never an operand, the output or its
 * temporary file (a fresh run removes the journal, a run appends to it). */
static ooc_status_t journal_apart(ooc_err_t *err, const char *jpath, const ooc_file_t *A, const ooc_file_t *B,
                                  const ooc_file_t *C0, const ooc_file_t *C)
{
    struct stat j, o;
    if (stat(jpath, &j) != 0) return OOC_SUCCESS; /* nothing there (yet) */
    const ooc_file_t *ops[4] = {A, B, C0, C};
    const char *roles[4] = {"the input A", "the input B", "the input C0", "the output's temporary file"};
    for (int i = 0; i < 4; i++)
        if (ops[i] && fstat(ops[i]->fd, &o) == 0 && o.st_dev == j.st_dev && o.st_ino == j.st_ino)
            return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, jpath, "the journal path %s is %s (%s): refusing to use it",
                                jpath, roles[i], i == 3 ? C->tmp_path : ops[i]->path);
    if (stat(C->path, &o) == 0 && o.st_dev == j.st_dev && o.st_ino == j.st_ino)
        return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, jpath, "the journal path %s is the output %s: refusing to use it",
                            jpath, C->path);
    return OOC_SUCCESS;
}

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
    int64_t *pend, *spare; /* blocks written into C, not yet flushed and recorded; the flusher's batch */
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
        int64_t *batch = x->pend;
        size_t n = x->npend, cap = x->cap;
        x->pend = x->spare;
        x->cap = x->spare_cap;
        x->npend = 0;
        pthread_mutex_unlock(&x->mu);
        ooc_err_t e;
        ooc_err_clear(&e);
        ooc_status_t st = ooc_io_sync(x->C->fd, x->C->tmp_path, &e);
        for (size_t i = 0; st == OOC_SUCCESS && i < n; i++) st = ooc_journal_done(&x->journal, batch[i], &e);
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
 * written. */
static ooc_status_t block_done(void *user, int64_t g, const ooc_pipe_stats_t *so_far, ooc_err_t *err)
{
    flush_t *x = user;
    pthread_mutex_lock(&x->mu);
    ooc_status_t st = x->err.status;
    if (st == OOC_SUCCESS && x->npend == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        int64_t *p = realloc(x->pend, cap * sizeof *p);
        if (p == NULL) {
            st = OOC_ERR(&x->err, OOC_ERR_HOST_MEMORY, "out of memory (list of %zu finished blocks)", cap);
        } else {
            x->pend = p;
            x->cap = cap;
        }
    }
    if (st == OOC_SUCCESS) x->pend[x->npend++] = g;
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

static ooc_status_t check_files(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha, const ooc_file_t *A,
                                const ooc_file_t *B, const void *beta, const ooc_file_t *C0, const ooc_file_t *C,
                                int64_t *m, int64_t *n, int64_t *k)
{
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(ta != OOC_OP_N && ta != OOC_OP_T && ta != OOC_OP_C, err, OOC_ERR_INVALID_TRANSA,
                        "ooc_gemm_files: transa %d is not N, T or C", (int)ta);
    OOC_RETURN_ERROR_IF(tb != OOC_OP_N && tb != OOC_OP_T && tb != OOC_OP_C, err, OOC_ERR_INVALID_TRANSB,
                        "ooc_gemm_files: transb %d is not N, T or C", (int)tb);
    OOC_RETURN_ERROR_IF(alpha == NULL || beta == NULL, err, OOC_ERR_NULL_ARG, "ooc_gemm_files: alpha or beta is NULL");
    OOC_RETURN_ERROR_IF(A == NULL, err, OOC_ERR_NULL_A, "ooc_gemm_files: A is NULL");
    OOC_RETURN_ERROR_IF(B == NULL, err, OOC_ERR_NULL_B, "ooc_gemm_files: B is NULL");
    OOC_RETURN_ERROR_IF(C == NULL, err, OOC_ERR_NULL_C, "ooc_gemm_files: C is NULL");
    OOC_RETURN_ERROR_IF(!C->writable, err, OOC_ERR_INVALID_PARAM,
                        "ooc_gemm_files: C (%s) was not created with ooc_file_create", C->path);
    ooc_dtype_t t = C->spec.dtype;
    const ooc_file_t *ins[3] = {A, B, C0};
    for (int i = 0; i < 3; i++)
        OOC_RETURN_ERROR_IF(ins[i] && ins[i]->spec.dtype != t, err, OOC_ERR_SHAPE,
                            "%s holds %s but the output %s is %s: all operands need one element type",
                            ins[i]->path, dtype_name(ins[i]->spec.dtype), C->path, dtype_name(t));
    int64_t am, ak, bk, bn;
    op_shape(A, ta, &am, &ak);
    op_shape(B, tb, &bk, &bn);
    OOC_RETURN_ERROR_IF(ak != bk, err, OOC_ERR_SHAPE,
                        "op(A) is %" PRId64 " x %" PRId64 " (%s) but op(B) is %" PRId64 " x %" PRId64
                        " (%s): inner dimensions differ", am, ak, A->path, bk, bn, B->path);
    OOC_RETURN_ERROR_IF(C->spec.rows != am || C->spec.cols != bn, err, OOC_ERR_SHAPE,
                        "the output %s is %" PRId64 " x %" PRId64 " but op(A) op(B) is %" PRId64 " x %" PRId64,
                        C->path, C->spec.rows, C->spec.cols, am, bn);
    OOC_RETURN_ERROR_IF(!ooc_is_zero(t, beta) && C0 == NULL, err, OOC_ERR_NULL_ARG,
                        "beta != 0 needs C0, the matrix to add");
    if (C0) {
        OOC_RETURN_ERROR_IF(C0->spec.rows != am || C0->spec.cols != bn, err, OOC_ERR_SHAPE,
                            "C0 (%s) is %" PRId64 " x %" PRId64 " but op(A) op(B) is %" PRId64 " x %" PRId64,
                            C0->path, C0->spec.rows, C0->spec.cols, am, bn);
        OOC_RETURN_ERROR_IF(C0->spec.layout != C->spec.layout, err, OOC_ERR_NOT_SUPPORTED,
                            "C0 (%s) must be in the output's order (%s order)", C0->path,
                            C->spec.layout == OOC_ROW_MAJOR ? "C" : "Fortran");
    }
    *m = am;
    *n = bn;
    *k = ak;
    return OOC_SUCCESS;
}

/* Whether the journal read as `have` may resume this job into C: the same
 * job, a plan that can be resumed, the very temporary file it recorded, and
 * that file kept (matching header and size). */
static int journal_usable(const ooc_journal_info_t *have, const ooc_file_t *C)
{
    struct stat sb;
    return have->head.resumable && C->resumed && fstat(C->fd, &sb) == 0 && (uint64_t)sb.st_dev == have->head.out_dev &&
           (uint64_t)sb.st_ino == have->head.out_ino;
}

/* k == 0 or alpha == 0: C = beta*C0, or zeros when beta == 0 or there is no
 * C0; A and B are not read (BLAS semantics). C0 is in C's order (checked),
 * so both are walked in storage order, a chunk at a time. Not journaled: a
 * resume simply does it again. */
static ooc_status_t files_scale(ooc_handle_t *h, const void *beta, const ooc_file_t *C0, ooc_file_t *C)
{
    ooc_err_t *err = &h->err;
    size_t e = ooc_dtype_size(C->spec.dtype);
    uint64_t total = (uint64_t)C->spec.rows * (uint64_t)C->spec.cols, chunk = ((uint64_t)8 << 20) / e;
    int read_c0 = C0 != NULL && !ooc_is_zero(C->spec.dtype, beta);
    void *buf = malloc((size_t)(chunk < total ? chunk : total) * e);
    OOC_RETURN_ERROR_IF(buf == NULL, err, OOC_ERR_HOST_MEMORY, "ooc_gemm_files: out of memory (8 MiB)");
    ooc_status_t st = OOC_SUCCESS;
    for (uint64_t first = 0; st == OOC_SUCCESS && first < total; first += chunk) {
        uint64_t n = total - first < chunk ? total - first : chunk;
        if (atomic_load(&h->cancel)) {
            st = OOC_ERR(err, OOC_ERR_CANCELLED, "cancelled after %llu of %llu elements of C",
                         (unsigned long long)first, (unsigned long long)total);
            break;
        }
        if (read_c0) st = ooc_io_pread(C0->fd, buf, (size_t)(n * e), C0->data_offset + first * e, C0->path, err);
        if (st == OOC_SUCCESS) ooc_scale_elems(C->spec.dtype, buf, (size_t)n, beta);
        if (st == OOC_SUCCESS)
            st = ooc_io_pwrite(C->fd, buf, (size_t)(n * e), C->data_offset + first * e, C->tmp_path, err);
    }
    free(buf);
    return st;
}

static ooc_status_t files_run(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha, ooc_file_t *A,
                              ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                              const ooc_files_opts_t *opts)
{
    ooc_err_t *err = &h->err;
    int64_t m = 0, n = 0, k = 0;
    OOC_FORWARD(check_files(h, ta, tb, alpha, A, B, beta, C0, C, &m, &n, &k));
    double t0 = ooc_now();
    memset(&h->stats, 0, sizeof h->stats);
    if (m == 0 || n == 0) {
        h->have_stats = 1;
        return OOC_SUCCESS;
    }

    ooc_dtype_t t = C->spec.dtype;
    ooc_layout_t layout = C->spec.layout;
    ooc_problem_t p = {t, layout, ta, tb, m, n, k, alpha, beta, ooc_is_zero(t, beta), {0}, {0}, {0}, {0}};
    OOC_FORWARD(as_source(h, "A", A, layout, &p.ta, &p.A));
    OOC_FORWARD(as_source(h, "B", B, layout, &p.tb, &p.B));
    ooc_op_t n_op = OOC_OP_N;
    OOC_FORWARD(as_source(h, "C", C, layout, &n_op, &p.C));
    p.C.name = C->tmp_path; /* where C's bytes go until the commit: failures name it */
    p.c_in = p.C;
    if (C0) OOC_FORWARD(as_source(h, "C0", C0, layout, &n_op, &p.c_in));

    /* the journal: the same job and a kept output file resume; else start over */
    char jpath[4096];
    OOC_FORWARD(journal_path(err, C->path, opts, jpath, sizeof jpath));
    OOC_FORWARD(journal_apart(err, jpath, A, B, C0, C));
    int resume = opts && opts->resume;
    /* a fresh run invalidates any old journal at once: were it kept and this
     * run failed before writing its own, a later resume would trust it */
    if (!resume) OOC_FORWARD(ooc_journal_remove(jpath, err));
    if (k == 0 || ooc_is_zero(t, alpha)) {
        OOC_FORWARD(files_scale(h, beta, C0, C));
        h->stats.seconds = ooc_now() - t0;
        h->have_stats = 1;
        return OOC_SUCCESS;
    }
    ooc_journal_head_t want;
    memset(&want, 0, sizeof want);
    OOC_FORWARD(job_line(err, ta, tb, alpha, A, B, beta, C0, &C->spec, want.job, sizeof want.job));
    ooc_journal_info_t have;
    memset(&have, 0, sizeof have);
    int exists = 0;
    if (resume) {
        /* a journal that cannot be trusted is refused, never used or removed */
        OOC_FORWARD(ooc_journal_read(jpath, &have, &exists, err));
        if (exists && strcmp(have.head.job, want.job) != 0) {
            ooc_journal_info_free(&have);
            return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, jpath,
                                "journal %s describes another job (an input file, a shape, alpha or beta changed "
                                "since it was written): remove it, or run without resuming", jpath);
        }
    }
    int usable = resume && exists && journal_usable(&have, C);
    int was_complete = usable && have.complete; /* killed after its last record, before the commit */
    ooc_status_t st = ooc_handle_backend(h);
    if (st == OOC_SUCCESS) st = h->dev[0].be->ops->activate(h->dev[0].be, err);
    ooc_plan_t plan;
    int64_t ndone = 0;
    if (st == OOC_SUCCESS && usable) {
        ooc_plan_t fixed;
        memset(&fixed, 0, sizeof fixed);
        fixed.swap = have.head.swap;
        fixed.mb = have.head.mb;
        fixed.nb = have.head.nb;
        fixed.kb = have.head.kb;
        fixed.tail = have.head.tail;
        fixed.b_chunks = have.head.b_chunks;
        fixed.lead = have.head.lead;
        fixed.tail_rep = have.head.tail_rep;
        st = ooc_api_plan(h, &p, &fixed, &plan);
        if (st == OOC_ERR_INTERNAL) {
            ooc_err_clear(err);
            st = OOC_ERR_FILE(err, OOC_ERR_JOURNAL, jpath,
                              "journal %s: its plan (swap %d, %" PRId64 " x %" PRId64 " x %" PRId64 " blocks, tail %d x %d, %d "
                              "chunks, lead %d) is not a valid plan for this job",
                              jpath, have.head.swap, have.head.mb, have.head.nb, have.head.kb, have.head.tail,
                              have.head.tail_rep, have.head.b_chunks, have.head.lead);
        }
        if (st == OOC_SUCCESS && plan.m_blocks * plan.n_panels * plan.k_panels != have.head.total)
            st = OOC_ERR_FILE(err, OOC_ERR_JOURNAL, jpath, "journal %s: its plan has %" PRId64 " blocks, this job %" PRId64,
                              jpath, have.head.total, plan.m_blocks * plan.n_panels * plan.k_panels);
        /* every block recorded is skipped, wherever it is: blocks finish out
         * of order with several devices, and each is byte-identical anyway */
        ndone = have.ndone;
    } else if (st == OOC_SUCCESS) {
        st = ooc_api_plan(h, &p, NULL, &plan);
    }
    /* every allocation before the journal is made: running out of memory
     * fails a fresh job before it leaves anything to resume */
    if (st == OOC_SUCCESS) st = ooc_api_prepare(h, &p, &plan);
    if (st != OOC_SUCCESS) {
        ooc_journal_info_free(&have);
        return st;
    }

    flush_t x;
    memset(&x, 0, sizeof x);
    x.journal.fd = -1;
    x.C = C;
    x.total = plan.m_blocks * plan.n_panels * plan.k_panels;
    x.opts = opts;
    x.finished = ndone;
    if (usable) {
        st = ooc_journal_append_open(&x.journal, jpath, &have, err);
    } else {
        /* starting over: a journal a resume could not use goes (it is one:
         * ooc_journal_read parsed it) */
        if (exists) st = ooc_journal_remove(jpath, err);
        struct stat sb;
        if (st == OOC_SUCCESS && fstat(C->fd, &sb) != 0)
            st = OOC_ERR_FILE(err, OOC_ERR_IO, C->tmp_path, "fstat %s: %s", C->tmp_path, strerror(errno));
        want.swap = plan.swap;
        want.mb = plan.mb;
        want.nb = plan.nb;
        want.kb = plan.kb;
        want.tail = plan.tail;
        want.b_chunks = plan.b_chunks;
        want.lead = plan.lead;
        want.tail_rep = plan.tail_rep;
        want.total = x.total;
        /* with several row panels C is read back: a block torn by a kill
         * would be added twice, so such jobs restart from scratch */
        want.resumable = plan.k_panels == 1;
        want.out_dev = (uint64_t)sb.st_dev;
        want.out_ino = (uint64_t)sb.st_ino;
        if (st == OOC_SUCCESS) st = ooc_journal_create(&x.journal, jpath, &want, err);
    }
    if (st != OOC_SUCCESS) {
        ooc_journal_info_free(&have);
        return st;
    }
    pthread_mutex_init(&x.mu, NULL);
    pthread_cond_init(&x.cv, NULL);
    pthread_t flusher;
    int rc = pthread_create(&flusher, NULL, flusher_main, &x);
    st = rc == 0 ? OOC_SUCCESS : OOC_ERR(err, OOC_ERR_THREAD, "pthread_create: error %d (flusher)", rc);
    if (st == OOC_SUCCESS) {
        if (ndone < x.total) {
            ooc_run_hooks_t hooks = {usable ? have.done : NULL, block_done, &x, NULL, 0, NULL, 0};
            st = ooc_api_execute(h, &p, &plan, &hooks);
        }
        /* after a failure too: what was written is recorded, for a resume */
        ooc_status_t fst = flusher_finish(&x, flusher, err);
        if (st == OOC_SUCCESS) st = fst;
    }
    ooc_journal_info_free(&have);
    pthread_cond_destroy(&x.cv);
    pthread_mutex_destroy(&x.mu);
    free(x.pend);
    free(x.spare);
    if (st == OOC_SUCCESS && !was_complete) {
        /* every block is flushed (the flusher synced after the last write):
         * record the finished output's identity, so that a resume of the
         * finished (and committed) job does nothing */
        struct stat sb;
        if (fstat(C->fd, &sb) != 0)
            st = OOC_ERR_FILE(err, OOC_ERR_IO, C->tmp_path, "fstat %s: %s", C->tmp_path, strerror(errno));
        else
            st = ooc_journal_complete(&x.journal, (uint64_t)sb.st_size, (int64_t)sb.st_mtim.tv_sec,
                                      sb.st_mtim.tv_nsec, err);
    }
    ooc_journal_close(&x.journal, 0);
    if (st != OOC_SUCCESS) return st;
    h->stats.seconds = ooc_now() - t0;
    h->stats.blocks_resumed = ndone;
    if (ndone >= x.total) { /* nothing was left to run: say what the plan was */
        h->stats.block_rows = plan.mb;
        h->stats.panel_cols = plan.nb;
        h->stats.panel_depth = plan.kb;
        h->stats.blocks = plan.m_blocks;
        h->stats.panels = plan.n_panels * plan.k_panels;
        h->stats.a_resident = plan.swap;
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
    return ooc_handle_done(h, files_run(h, ta, tb, alpha, A, B, beta, C0, C, opts));
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
    *finished = 0;
    ooc_file_spec_t cs = *c_spec;
    if (cs.format == OOC_FORMAT_AUTO) cs.format = OOC_FORMAT_NPY; /* as ooc_file_create resolves it */
    char jpath[4096], job[OOC_JOURNAL_JOB_MAX];
    OOC_FORWARD(journal_path(err, c_path, opts, jpath, sizeof jpath));
    OOC_FORWARD(job_line(err, ta, tb, alpha, A, B, beta, C0, &cs, job, sizeof job));
    ooc_journal_info_t have;
    int exists = 0;
    OOC_FORWARD(ooc_journal_read(jpath, &have, &exists, err));
    struct stat sb, s0;
    /* the output the journal completed, at c_path, unchanged */
    int is_output = exists && have.complete && lstat(c_path, &sb) == 0 && S_ISREG(sb.st_mode) &&
                    (uint64_t)sb.st_dev == have.head.out_dev && (uint64_t)sb.st_ino == have.head.out_ino &&
                    (uint64_t)sb.st_size == have.out_size && (int64_t)sb.st_mtim.tv_sec == have.out_mtime_sec &&
                    sb.st_mtim.tv_nsec == have.out_mtime_nsec;
    int same_job = is_output && strcmp(have.head.job, job) == 0;
    if (is_output && !same_job && C0 != NULL && fstat(C0->fd, &s0) == 0 && s0.st_dev == sb.st_dev &&
        s0.st_ino == sb.st_ino) {
        /* in place (C0 was the file C replaced): C0 is now this job's own
         * output, so its identity differs from the one recorded; the rest
         * of the job must match (C0's identity ends the line) */
        char *a = strstr(have.head.job, " C0="), *b = strstr(job, " C0=");
        same_job = a && b && a - have.head.job == b - job &&
                   strncmp(have.head.job, job, (size_t)(a - have.head.job)) == 0;
    }
    *finished = same_job;
    ooc_journal_info_free(&have);
    return OOC_SUCCESS;
}
