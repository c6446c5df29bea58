/* SPDX-License-Identifier: MIT */
/*
 * multiply_mpi.c: oocgemm multiply split across the ranks of mpirun or srun
 * (docs/oocgemm.h2m, RUNNING UNDER MPI). Rank 0 opens the job: it creates
 * C.ooc-tmp shared (OOC_FILE_SHARED), plans it and broadcasts the plan;
 * every rank joins the output, computes its contiguous range of the plan's
 * blocks (C's rows; its columns when the plan keeps op(A) resident, as one
 * process would), of all the plan's panels of op(B) or, when op(B) is in
 * panels and that has the busiest rank read less, of a range of them (a
 * grid of rectangles of C: split_grid), on its own GPUs with its own
 * journal "JOURNAL.r<R>-of-<P>", in a
 * worker thread while the main thread polls the other ranks (a non-blocking
 * sum every 50 ms: progress, and whether any rank failed or caught a stop
 * signal, which cancels every rank's multiply); rank 0 commits when every
 * rank succeeded. Every collective point agrees on failures
 * (cli_mpi_agree): all ranks stop cleanly, with the same exit status, the
 * message naming the rank. Never MPI_Abort; the single-process path
 * (cmd_multiply.c) does not come here.
 */
#include "config.h"

#include <dirent.h>

#include "cli_mpi.h"
#include "multiply.h"

/* ------------------------------------------------------------------------ */
/* Range journals                                                            */

void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++) free(v[i]);
    free(v);
}

static int strv_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char **range_journals(const char *base, int not_of, int with_base)
{
    const char *slash = strrchr(base, '/'), *file = slash ? slash + 1 : base;
    char *dir = slash ? strndup(base, (size_t)(slash - base) + (slash == base)) : strdup(".");
    size_t n = 0, cap = 8, fl = strlen(file);
    char **v = calloc(cap, sizeof *v);
    DIR *d = dir && v ? opendir(dir) : NULL;
    int ok = dir && v;
    if (ok && with_base && access(base, F_OK) == 0) ok = (v[n++] = strdup(base)) != NULL;
    for (struct dirent *e; ok && d && (e = readdir(d)) != NULL;) {
        int r, q, len = -1;
        if (strncmp(e->d_name, file, fl) != 0 || strncmp(e->d_name + fl, ".r", 2) != 0) continue;
        if (sscanf(e->d_name + fl + 2, "%d-of-%d%n", &r, &q, &len) != 2 || len < 0 ||
            e->d_name[fl + 2 + (size_t)len] != '\0' || r < 0 || r >= q || (not_of > 0 && q == not_of))
            continue;
        if (n + 2 > cap) {
            char **w = realloc(v, (cap *= 2) * sizeof *v);
            if ((ok = w != NULL) == 0) break;
            v = w;
        }
        if (asprintf(&v[n], "%s%s%s", slash ? dir : "", slash && slash != base ? "/" : "", e->d_name) < 0) {
            v[n] = NULL;
            ok = 0;
        } else {
            v[++n] = NULL;
        }
    }
    if (d) closedir(d);
    free(dir);
    if (!ok) {
        strv_free(v);
        return NULL;
    }
    qsort(v, n, sizeof *v, strv_cmp);
    return v;
}

/* The first journal of base and its range journals that pred says yes to. */
static int journals_any(const char *base, int (*pred)(const char *))
{
    if (base == NULL) return 0;
    int yes = pred(base);
    char **v = yes ? NULL : range_journals(base, 0, 0);
    for (size_t i = 0; v && v[i] && !yes; i++) yes = pred(v[i]);
    strv_free(v);
    return yes;
}

int journals_resumable(const char *base) { return journals_any(base, is_journal); }

int journals_keep_blocks(const char *base) { return journals_any(base, journal_keeps_blocks); }

void range_journals_remove(ooc_handle_t *h, const char *base)
{
    char **v = range_journals(base, 0, 0);
    for (size_t i = 0; v && v[i]; i++) (void)ooc_journal_forget(h, v[i]); /* never one a running job holds */
    strv_free(v);
}

/* A fresh start, before the temporary file is emptied: no journal of an
 * earlier run (one process's at base, or the ranks' at base.rR-of-P) may
 * outlive the data it vouches for. The temporary file is emptied in place,
 * so its identity, all a journal is checked against, stays the same. A
 * journal a running job holds stops the start (exit status 6), before
 * anything is touched: that job is writing this output (its temporary
 * file's lock would refuse this one next). Files that are not journals are
 * left alone (the library refuses a journal path that is one). */
int journals_forget(ooc_handle_t *h, const char *base, const char *tmp_path)
{
    char **v = range_journals(base, 0, 1);
    if (v == NULL) return fail(RC_RUNTIME, "out of host memory");
    int rc = RC_OK;
    for (size_t i = 0; v[i] && rc == RC_OK; i++) {
        ooc_status_t st = ooc_journal_forget(h, v[i]);
        if (st == OOC_ERR_BUSY) rc = lib_fail(h, st, AT_OUTPUT, tmp_path, NULL, "cannot start afresh");
    }
    strv_free(v);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The job across ranks                                                      */

/* What rank 0 broadcasts once it has created and planned C. */
typedef struct {
    int32_t rc;       /* rank 0's status: the others stop with it */
    int32_t finished; /* --resume found the job finished: nothing to do */
    int32_t resumed;  /* C.ooc-tmp is an earlier run's: join it with OOC_FILE_RESUME */
    ooc_files_plan_t plan;
    /* the job's identity as rank 0 sees its inputs (ooc_gemm_files_job), which every rank's journal records
     * and is checked against: a node's own identical copy of an input is another file ("" : none) */
    char job[OOC_FILES_JOB_MAX];
} mpi_start_t;

/* This rank's part, and the multiply running in a worker thread. */
typedef struct {
    mul_job_t *j;
    int rank, size;
    char *own;         /* this rank's journal */
    char **old;        /* --resume: the journals of other splits (and the single-process one) */
    mpi_start_t s;
    int idle;          /* no blocks for this rank */
    int64_t units;     /* its blocks times its panels: what its journal records */
    ooc_files_opts_t fo;
    mul_rank_t me;
    int mixed;         /* rank 0, --resume --allow-mixed: C's blocks mix computers (the journal says so) */
    int own_failure;   /* its failure is its own, not a stop asked by another rank */
    ooc_status_t st;
    double secs;
    atomic_int done;
} mpi_job_t;

/* An agreement point: every rank gets the status of the lowest rank that
 * failed on its own; rank 0 names it when it is another. */
static int agreed_at(int rank, int size, int rc, int own, const char *when)
{
    int who;
    /* the failing rank's own message comes with its status: --json's
     * "error" names the cause (a rank's full disk, its missing input), not
     * only the rank; stderr has it once, from that rank */
    char msg[sizeof fail_msg];
    snprintf(msg, sizeof msg, "%s", fail_msg);
    int all = cli_mpi_agree(rc, own, &who, msg, sizeof msg);
    if (all != RC_OK && who > 0 && rank == 0) {
        fprintf(stderr, "%s: rank %d of %d failed %s (exit status %d, its message above): every rank stops\n",
                progname, who, size, when, all);
        /* (the whole message: a long path's reason comes at its end; the prefix takes under 256 bytes) */
        snprintf(fail_msg, sizeof fail_msg, "rank %d of %d failed %s (exit status %d): %.*s", who, size, when, all,
                 (int)sizeof fail_msg - 256, msg[0] ? msg : "its message went to its stderr");
    }
    return all;
}

static int agreed(mpi_job_t *x, int rc, int own, const char *when)
{
    return agreed_at(x->rank, x->size, rc, own, when);
}

int mul_mpi_refused(int rc)
{
    rc = mul_mpi_first_agreement(rc);
    int64_t sig = stop_signal_caught(); /* (job_signal's collective, as mul_mpi's failure path calls it) */
    cli_mpi_allreduce_i64(&sig, 1, CLI_MPI_MAX);
    return rc;
}

int mul_mpi_first_agreement(int rc)
{
    /* rank 0's message (none when it did not fail) to every rank */
    char zero[sizeof fail_msg] = "";
    int rank = cli_mpi_rank();
    if (rank == 0 && rc != RC_OK) snprintf(zero, sizeof zero, "%s", fail_msg);
    cli_mpi_bcast(zero, sizeof zero);
    messages_release(rc != RC_OK && strcmp(zero, fail_msg) != 0);
    return agreed_at(rank, cli_mpi_size(), rc, 1, "on its command line or opening the inputs");
}

/* The devices this rank uses: --devices as given; else, with N visible
 * devices and L ranks on this node, local rank l takes device l % N when
 * L >= N, else its share of them (one rank per node: all of them). */
static void map_devices(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    const lib_opts_t *l = &j->o.lib;
    int n = 0;
    if (ooc_device_count(j->h, &n) != OOC_SUCCESS || n < 0) n = 0;
    if (n > 16) n = 16;
    x->me.ndevices = n;
    if (l->devices_given || l->backend == OOC_BACKEND_HOST || n == 0) {
        x->me.devices = l->devices_given ? l->devices : 0;
        return;
    }
    int L = cli_mpi_local_size(), lr = cli_mpi_local_rank();
    uint32_t mask = 0;
    if (L >= n) mask = 1u << (lr % n);
    else
        for (int d = lr * n / L; d < (lr + 1) * n / L; d++) mask |= 1u << d;
    if (set_param(j->h, OOC_PARAM_DEVICES, mask) == OOC_SUCCESS) x->me.devices = mask;
}

static int scalar_zero(const scalar_t *a) { return a->d[0] == 0 && a->d[1] == 0 && a->f[0] == 0 && a->f[1] == 0; }

/* Nothing is multiplied: C is empty, or beta C0 (k = 0 or alpha = 0). */
static int scaling_only(const mul_job_t *j)
{
    return j->have_shape && (j->m == 0 || j->n == 0 || j->k == 0 || scalar_zero(&j->alpha));
}

/* Every rank computes blocks as the others do (ooc_compute_id_for the
 * job's type: a complex job's ranks on cublas and custom compute alike): a
 * block of C is then the same bytes whichever rank computes it, and a
 * resume with another split gives what one run gives. Ranks that would not (GPUs of
 * another kind, another backend or BLAS) are refused before anything is
 * made, unless --allow-mixed; rank 0 names the first that differs from it. */
static int same_computers(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    char mine[OOC_COMPUTE_ID_MAX] = "";
    ooc_status_t st = ooc_compute_id_for(j->h, j->t, mine, sizeof mine);
    int rc = st == OOC_SUCCESS ? RC_OK : lib_fail(j->h, st, AT_RUN, NULL, NULL, "opening the backend");
    char *all = x->rank == 0 ? calloc((size_t)x->size, sizeof mine) : NULL;
    if (cli_mpi_any(x->rank == 0 && all == NULL)) {
        free(all);
        return x->rank == 0 ? fail(RC_RUNTIME, "out of host memory") : rc;
    }
    cli_mpi_gather(mine, sizeof mine, all); /* "" from a rank that failed: it says why */
    for (int r = 1; x->rank == 0 && rc == RC_OK && r < x->size; r++) {
        const char *its = all + (size_t)r * sizeof mine;
        /* (--allow-mixed: mpi_report says which computing ranks differed) */
        if (*its && strcmp(its, mine) != 0 && !j->o.allow_mixed)
            rc = fail(RC_RUNTIME, "rank %d would compute its blocks by %s, rank 0 by %s: blocks of C would differ "
                      "in their last bits by the rank that computes them, and a resume with another split would "
                      "not give what one run gives. Run every rank on GPUs of one kind (architecture and number "
                      "of SMs) with one --backend and one CUDA, or on the host backend with one OpenBLAS and "
                      "as many threads (OPENBLAS_NUM_THREADS) (oocgemm info says what computes where it runs), "
                      "or accept C's mixed roundings with --allow-mixed", r, its, mine);
    }
    free(all);
    return rc;
}

/* What defines the job, which every rank must be given alike: what C is
 * (the shape, type, ops, scalars, C0 or not, C's format and layout), the
 * inputs as this rank sees them (what each holds, its size and a sample of
 * its bytes: a node-local copy of an input is the same file, whatever its
 * inode or time), and the options every rank acts on together (the
 * journal, --resume, --verify, --allow-mixed, --no-floor: the ranks'
 * collective steps follow them). */
typedef struct {
    int64_t m, n, k;
    int32_t dtype, ta, tb, c_in, out_format, out_layout;
    double alpha, beta;
    ooc_file_spec_t spec[3]; /* A, B, C0 */
    int64_t size[3];         /* bytes; -1: not known */
    uint64_t sample[3];      /* FNV-1a of up to 16 pieces of 4 KiB spread over the file; 0: not read */
    uint64_t out;            /* FNV-1a of -o as given (the ranks write one file: a rank given another
                              * name would write its rows into another's leftover .ooc-tmp) */
    uint64_t journal;        /* FNV-1a of the journal's path */
    int32_t verify, resume, allow_mixed, no_floor;
} job_def_t;

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* An input's size and a sample of its bytes (16 pieces of 4 KiB, the first
 * and the last among them); 0 when it cannot be read (not compared). */
static uint64_t file_sample(const char *path, int64_t *size)
{
    uint64_t h = 14695981039346656037ull;
    char buf[4096];
    struct stat sb;
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    *size = -1;
    if (fd < 0) return 0;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        return 0;
    }
    *size = (int64_t)sb.st_size;
    int64_t span = *size > (int64_t)sizeof buf ? *size - (int64_t)sizeof buf : 0;
    for (int i = 0; i < 16; i++) {
        ssize_t got = pread(fd, buf, sizeof buf, (off_t)(span * i / 15));
        if (got < 0) {
            close(fd);
            return 0;
        }
        h = fnv1a(h, buf, (size_t)got);
    }
    close(fd);
    return h ? h : 1;
}

static const char *op_name(int32_t op) { return op == OOC_OP_N ? "N" : op == OOC_OP_T ? "T" : "C"; }

/* x in the fewest digits that read back as x (%g's 6 may print two values alike) */
static const char *exact(double x, char buf[32])
{
    for (int p = 6; p <= 17; p++) {
        snprintf(buf, 32, "%.*g", p, x);
        if (strtod(buf, NULL) == x) break;
    }
    return buf;
}

/* Rank 0: what rank r's job (b) has that rank 0's (a) has not, said in
 * why[len]; 0 when they are the same job. */
static int job_differs(const mul_job_t *j, const job_def_t *a, const job_def_t *b, char *why, size_t len)
{
    static const char *const names[3] = {"A", "B", "C0"};
    const operand_t *ops[3] = {&j->A, &j->B, &j->C0};
    char s1[128], s2[128];
    if (a->ta != b->ta || a->tb != b->tb)
        return snprintf(why, len, "--transa/--transb %s/%s, rank 0 %s/%s", op_name(b->ta), op_name(b->tb),
                        op_name(a->ta), op_name(a->tb)), 1;
    if (a->c_in != b->c_in)
        return snprintf(why, len, "%s, rank 0 %s", b->c_in ? "--c-in C0" : "no --c-in",
                        a->c_in ? "--c-in C0" : "no --c-in"), 1;
    for (int i = 0; i < (a->c_in ? 3 : 2); i++) {
        const ooc_file_spec_t *p = &a->spec[i], *q = &b->spec[i];
        if (p->format != q->format || p->rows != q->rows || p->cols != q->cols || p->dtype != q->dtype ||
            p->layout != q->layout)
            return snprintf(why, len, "its %s holds %s, rank 0's %s (%s) %s", names[i],
                            describe_spec(&b->spec[i], s1, sizeof s1), names[i], ops[i]->path,
                            describe_spec(&a->spec[i], s2, sizeof s2)), 1;
        if (a->size[i] >= 0 && b->size[i] >= 0 && a->size[i] != b->size[i])
            return snprintf(why, len, "its %s is %lld bytes, rank 0's %s (%s) %lld", names[i],
                            (long long)b->size[i], names[i], ops[i]->path, (long long)a->size[i]), 1;
        if (a->sample[i] && b->sample[i] && a->sample[i] != b->sample[i])
            return snprintf(why, len, "its %s holds other bytes than rank 0's %s (%s), of the same shape and size",
                            names[i], names[i], ops[i]->path), 1;
    }
    if (a->m != b->m || a->n != b->n || a->k != b->k || a->dtype != b->dtype) /* (the operands say it first) */
        return snprintf(why, len, "m=%lld n=%lld k=%lld %s, rank 0 m=%lld n=%lld k=%lld %s", (long long)b->m,
                        (long long)b->n, (long long)b->k, dtype_name(b->dtype), (long long)a->m, (long long)a->n,
                        (long long)a->k, dtype_name(a->dtype)), 1;
    /* (the shortest digits that tell them apart: 0.3 and 0.30000000000000004) */
    char v1[32], v2[32];
    if (a->alpha != b->alpha)
        return snprintf(why, len, "--alpha %s, rank 0 %s", exact(b->alpha, v1), exact(a->alpha, v2)), 1;
    if (a->beta != b->beta)
        return snprintf(why, len, "--beta %s, rank 0 %s", exact(b->beta, v1), exact(a->beta, v2)), 1;
    if (a->out_format != b->out_format)
        return snprintf(why, len, "C in the %s format, rank 0 %s (--out-format)",
                        b->out_format == OOC_FORMAT_NPY ? "npy" : "raw",
                        a->out_format == OOC_FORMAT_NPY ? "npy" : "raw"), 1;
    if (a->out_layout != b->out_layout)
        return snprintf(why, len, "C %s-major, rank 0 %s-major (--out-layout)", layout_name(b->out_layout),
                        layout_name(a->out_layout)), 1;
    if (a->out != b->out) return snprintf(why, len, "another -o than rank 0's %s", j->o.out), 1;
    if (a->journal != b->journal)
        return snprintf(why, len, "%s, rank 0 %s%s", b->journal ? "another --journal" : "no --journal",
                        a->journal ? "--journal " : "none", a->journal ? j->o.journal : ""), 1;
    static const char *const flags[4] = {"--resume", "--verify", "--allow-mixed", "--no-floor"};
    const int32_t fa[4] = {a->resume, a->verify, a->allow_mixed, a->no_floor},
                  fb[4] = {b->resume, b->verify, b->allow_mixed, b->no_floor};
    for (int i = 0; i < 4; i++)
        if (fa[i] != fb[i])
            return snprintf(why, len, "%s %s, rank 0 %s", flags[i], fb[i] ? "given" : "not given",
                            fa[i] ? "given" : "not given"), 1;
    return 0;
}

/* Every rank is given the same job (job_def_t): ranks given different
 * operands or options would each compute their part of another C, mixed
 * into one wrong C with exit status 0. Rank 0 compares and names the first
 * rank that differs and how: a usage error (exit status 2), before
 * anything is made. */
static int same_job(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    mul_opts_t *o = &j->o;
    job_def_t me;
    memset(&me, 0, sizeof me);
    me.m = j->m, me.n = j->n, me.k = j->k;
    me.dtype = j->t, me.ta = o->ta, me.tb = o->tb, me.c_in = o->c_in != NULL;
    me.out_format = j->cspec.format, me.out_layout = j->cspec.layout;
    me.alpha = o->alpha, me.beta = o->beta;
    const operand_t *ops[3] = {&j->A, &j->B, o->c_in ? &j->C0 : NULL};
    for (int i = 0; i < 3; i++) {
        me.size[i] = -1;
        if (ops[i] == NULL) continue;
        me.spec[i] = ops[i]->spec;
        me.sample[i] = file_sample(ops[i]->path, &me.size[i]);
    }
    /* (a given one: C's default journal follows -o, which the joining ranks check) */
    me.journal = o->journal ? fnv1a(14695981039346656037ull, o->journal, strlen(o->journal)) : 0;
    me.out = o->out ? fnv1a(14695981039346656037ull, o->out, strlen(o->out)) : 0;
    me.verify = o->verify, me.resume = o->resume, me.allow_mixed = o->allow_mixed, me.no_floor = o->floor.no_floor;
    job_def_t *all = x->rank == 0 ? calloc((size_t)x->size, sizeof me) : NULL;
    if (cli_mpi_any(x->rank == 0 && all == NULL)) {
        free(all);
        return x->rank == 0 ? fail(RC_RUNTIME, "out of host memory") : RC_OK;
    }
    cli_mpi_gather(&me, sizeof me, all);
    int rc = RC_OK;
    char why[1024];
    for (int r = 1; x->rank == 0 && rc == RC_OK && r < x->size; r++)
        if (job_differs(j, &me, &all[r], why, sizeof why))
            rc = fail(RC_USAGE, "rank %d was given another job than rank 0: %s. Every rank must run the same "
                      "command: the same operands (the same files, or identical copies) and options", r, why);
    free(all);
    return rc;
}

/* First row (column when the plan keeps op(A) resident) of block b (their
 * number for b == blocks). */
static int64_t block_row(const ooc_files_plan_t *p, int64_t b)
{
    int64_t r0 = p->rows, r1;
    if (b < p->blocks && ooc_files_plan_rows(p, b, &r0, &r1) != OOC_SUCCESS) r0 = p->rows;
    return r0;
}

/* Rank r's blocks [cut[r], cut[r+1]): contiguous, balanced by rows (or
 * columns: every block is computed once per panel: work is rows x panels),
 * at least one block each when there are enough; with fewer blocks than
 * ranks, one block each to ranks 0 .. blocks-1, so that rank 0, whose
 * figures the summary's plan line and JSON "plan" are, computes one (a plan
 * that keeps op(A) resident may have a single block: C's columns, few) */
static void split_blocks(const ooc_files_plan_t *p, int P, int64_t *cut)
{
    int64_t B = p->blocks;
    cut[0] = 0;
    cut[P] = B;
    if (B < P) {
        for (int r = 1; r < P; r++) cut[r] = r < B ? r : B;
        return;
    }
    for (int r = 1; r < P; r++) {
        double target = (double)p->rows * r / P;
        int64_t lo = 0, hi = B;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if ((double)block_row(p, mid) < target) lo = mid + 1;
            else hi = mid;
        }
        if (lo > 0 && target - (double)block_row(p, lo - 1) < (double)block_row(p, lo) - target) lo--;
        int64_t min = cut[r - 1] + (B >= P ? 1 : 0), max = B >= P ? B - (P - r) : B;
        cut[r] = lo < min ? min : lo > max ? max : lo;
    }
}

/* Panels of op(B)'s columns in the plan (1 when it also splits op(B)'s
 * depth: such a job is split by blocks only). */
static int64_t col_panels(const ooc_files_plan_t *p)
{
    if (p->blocks <= 0 || p->panel_cols <= 0 || p->cols <= 0) return 1;
    int64_t np = (p->cols - 1) / p->panel_cols + 1;
    return np == p->panels ? np : 1;
}

/* First column (of the plan's problem) of panel q (their number for q == panels). */
static int64_t panel_col(const ooc_files_plan_t *p, int64_t q)
{
    int64_t c0 = p->cols, c1;
    if (q < col_panels(p) && ooc_files_plan_cols(p, q, &c0, &c1) != OOC_SUCCESS) c0 = p->cols;
    return c0;
}

/* Rank r's part of a grid: blocks [b0, b1) of panels [q0, q1). */
typedef struct {
    int64_t b0, b1, q0, q1;
} part_t;

/* The P ranks as a grid of Pc groups of panels: group g has panels
 * [g NP / Pc, (g + 1) NP / Pc) and ranks in proportion to its columns (one
 * each, then one at a time to the group with the most columns per rank
 * among those with fewer ranks than blocks, while there is one), each rank
 * of a group its contiguous blocks of them (split_blocks). Consecutive
 * ranks share a group: rank 0 has group 0's first blocks. */
static int grid_parts(const ooc_files_plan_t *p, int P, int Pc, part_t *part)
{
    int64_t NP = col_panels(p);
    int nr[64] = {0};
    for (int g = 0; g < Pc; g++) nr[g] = 1;
    for (int extra = P - Pc; extra > 0; extra--) {
        int best = 0;
        double most = -1;
        for (int pass = 0; pass < 2 && most < 0; pass++) /* (pass 1: every group has a rank per block) */
            for (int g = 0; g < Pc; g++) {
                double per = (double)(panel_col(p, (g + 1) * NP / Pc) - panel_col(p, g * NP / Pc)) / nr[g];
                if ((pass == 1 || nr[g] < p->blocks) && per > most) most = per, best = g;
            }
        nr[best]++;
    }
    int64_t *cut = calloc((size_t)P + 1, sizeof *cut);
    if (cut == NULL) return 0;
    for (int g = 0, r = 0; g < Pc; r += nr[g], g++) {
        split_blocks(p, nr[g], cut);
        for (int i = 0; i < nr[g]; i++)
            part[r + i] = (part_t){cut[i], cut[i + 1], g * NP / Pc, (g + 1) * NP / Pc};
    }
    free(cut);
    return 1;
}

/* Rank r's blocks and panels: the grid whose busiest rank reads the
 * fewest elements (its rows of op(A) once per panel, its columns of op(B),
 * its part of C, and of C0 when read), of Pc = 1 (the ranks split the
 * blocks, each reading all of op(B)) to the panels there are (at most 64,
 * at most P); a tie goes to the fewest ranks left without blocks, then to
 * fewer groups. Every rank computes the same. Returns the Pc taken, 0 when
 * out of host memory (the rank then fails: another split than the other
 * ranks' could leave blocks to no rank). */
static int split_grid(const ooc_files_plan_t *p, int P, int64_t k, int c_read, int rank, part_t *mine)
{
    int64_t NP = col_panels(p);
    int max_pc = NP < P ? (int)NP : P;
    if (max_pc > 64) max_pc = 64;
    part_t *part = calloc((size_t)P, sizeof *part), *best = calloc((size_t)P, sizeof *best);
    double best_cost = -1;
    int best_idle = 0, best_pc = 1, ok = part && best;
    for (int Pc = 1; ok && Pc <= max_pc && (ok = grid_parts(p, P, Pc, part)); Pc++) {
        double cost = 0;
        int idle = 0;
        for (int r = 0; r < P; r++) {
            idle += part[r].b0 == part[r].b1;
            double rows = (double)(block_row(p, part[r].b1) - block_row(p, part[r].b0));
            double cols = (double)(panel_col(p, part[r].q1) - panel_col(p, part[r].q0));
            double e = rows > 0 ? rows * (double)k * (double)(part[r].q1 - part[r].q0) + (double)k * cols +
                                      rows * cols * (c_read ? 2 : 1)
                                : 0;
            if (e > cost) cost = e;
        }
        if (best_cost < 0 || cost < best_cost || (cost == best_cost && idle < best_idle)) {
            best_cost = cost;
            best_idle = idle;
            best_pc = Pc;
            memcpy(best, part, (size_t)P * sizeof *part);
        }
    }
    if (ok) *mine = best[rank];
    free(part);
    free(best);
    return ok ? best_pc : 0;
}

/* Rank 0, --resume: is the job finished already (its journal records it
 * complete, and C is its output)? Then there is nothing to do. */
static int mpi_finished(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    mul_opts_t *o = &j->o;
    if (!o->resume) return RC_OK;
    ooc_status_t st = ooc_gemm_files_finished(j->h, o->ta, o->tb, scalar_ptr(&j->alpha, j->t), j->A.file, j->B.file,
                                              scalar_ptr(&j->beta, j->t), o->c_in ? j->C0.file : NULL, o->out,
                                              &j->cspec, &j->fo, &j->already);
    if (st != OOC_SUCCESS) return lib_fail(j->h, st, AT_OUTPUT, j->tmp_path, j->journal_path, "resume");
    int rc = mul_c0_refused(j);
    if (rc != RC_OK) return rc;
    mul_finished_other(j);
    if (j->already) {
        x->s.finished = 1;
        mul_finished_already(j); /* (as one process says it) */
    }
    return RC_OK;
}

/* Rank 0: C is created shared (after removing the range journals of
 * earlier runs when starting afresh) and planned: the journals' plan when
 * resuming. */
static int mpi_open(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    mul_opts_t *o = &j->o;
    const void *pa = scalar_ptr(&j->alpha, j->t), *pb = scalar_ptr(&j->beta, j->t);
    ooc_file_t *c0 = o->c_in ? j->C0.file : NULL;
    ooc_status_t st;
    if (o->measure_disk) mul_measure_disk(j);
    /* no later resume may trust them; a resume of another output's blocks
     * would lose them */
    int rc0 = o->resume ? resume_other_output(j) : journals_forget(j->h, j->journal_path, j->tmp_path);
    if (rc0 != RC_OK) return rc0;
    if (stop_signal_caught()) /* before anything is made: nothing to keep */
        return fail(RC_INTERRUPTED, "interrupted by %s before it started: nothing written",
                    signal_name(stop_signal_caught()));
    unsigned flags = OOC_FILE_SHARED | (o->resume ? OOC_FILE_RESUME : 0);
    resume_found_t found; /* (before the creation, which may remove a journal) */
    resume_look(j, &found);
    if ((st = ooc_file_create(j->h, o->out, &j->cspec, flags, &j->C)) != OOC_SUCCESS) {
        j->C = NULL;
        return lib_fail(j->h, st, AT_OUTPUT, j->tmp_path, j->journal_path, "output");
    }
    resume_note(j, &found, -1, 0);
    int kept = ooc_file_resumed(j->C);
    char **all = o->resume ? range_journals(j->journal_path, 0, 1) : NULL;
    size_t n = 0; /* every journal but this rank's own */
    for (size_t i = 0; all && all[i]; i++)
        if (strcmp(all[i], x->own) != 0) all[n++] = all[i];
        else free(all[i]);
    if (all) all[n] = NULL;
    ooc_files_opts_t po = {
        .journal = x->own, .resume = o->resume, .journals = (const char *const *)all, .allow_mixed = o->allow_mixed};
    st = ooc_gemm_files_plan(j->h, o->ta, o->tb, pa, j->A.file, j->B.file, pb, c0, j->C, &po, &x->s.plan);
    strv_free(all);
    /* (after the plan: a resume that finds no block of this C recorded
     * starts it over in a new temporary file, before any rank joins) */
    x->s.resumed = ooc_file_resumed(j->C);
    if (st == OOC_SUCCESS)
        st = ooc_gemm_files_job(j->h, o->ta, o->tb, pa, j->A.file, j->B.file, pb, c0, j->C, x->s.job, sizeof x->s.job);
    if (st == OOC_SUCCESS) resume_note(j, &found, x->s.resumed, 0);
    if (st == OOC_SUCCESS && kept && !x->s.resumed) {
        /* started over: the range journals at C's default path and this
         * run's name the old file; where the file system keeps no birth
         * time, a later temporary file given its inode number would match
         * them (the library removed only C's default journal) */
        char *def = mul_default_journal(o->out);
        int rc = def == NULL ? fail(RC_RUNTIME, "out of host memory") : RC_OK;
        if (rc == RC_OK) rc = journals_forget(j->h, def, j->tmp_path);
        if (rc == RC_OK && strcmp(def, j->journal_path) != 0) rc = journals_forget(j->h, j->journal_path, j->tmp_path);
        free(def);
        if (rc != RC_OK) {
            ooc_file_close(j->C, 1); /* a new file: nothing in it yet */
            j->C = NULL;
            return rc;
        }
    }
    if (st == OOC_SUCCESS) return RC_OK;
    int rc = lib_fail(j->h, st, AT_RUN, j->tmp_path, x->own, "plan");
    ooc_file_close(j->C, !o->resume); /* a resumed temporary file is kept */
    j->C = NULL;
    return rc;
}

/* Every rank: its rows (or columns), the output joined (rank 0 made it),
 * and the plan checked against this rank's budgets. */
static int mpi_join(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    mul_opts_t *o = &j->o;
    const ooc_files_plan_t *p = &x->s.plan;
    /* a plan that keeps op(A) resident (one process's, as planned or as its
     * journal records) is split by C's columns: its blocks are C^T's rows */
    j->split_cols = p->a_resident;
    if (p->blocks == 0) { /* nothing to multiply (C = beta C0): rank 0 writes it */
        x->idle = x->rank != 0;
        x->me.scales = x->rank == 0;
    } else {
        part_t me;
        /* (every rank takes the same split: a grid for all, or none) */
        int pc = split_grid(p, x->size, j->k, o->c_in && !scalar_zero(&j->beta), x->rank, &me);
        if (pc == 0) return fail(RC_RUNTIME, "out of host memory");
        j->split_grid = pc > 1;
        int64_t NP = col_panels(p);
        x->idle = me.b0 == me.b1;
        x->me.row_begin = block_row(p, me.b0);
        x->me.row_end = block_row(p, me.b1);
        x->me.blocks = me.b1 - me.b0;
        x->units = x->me.blocks * (p->panels / NP) * (me.q1 - me.q0);
        if (me.q0 > 0 || me.q1 < NP) { /* a rectangle: the ranks split C as a grid */
            x->me.col_begin = panel_col(p, me.q0);
            x->me.col_end = panel_col(p, me.q1);
        }
    }
    ooc_status_t st;
    if (x->rank != 0 &&
        (st = ooc_file_join(j->h, o->out, &j->cspec, x->s.resumed ? OOC_FILE_RESUME : 0, &j->C)) != OOC_SUCCESS) {
        j->C = NULL;
        return lib_fail(j->h, st, AT_OUTPUT, j->tmp_path, x->own, "joining the output");
    }
    if (o->resume && (x->old = range_journals(j->journal_path, x->size, 1)) == NULL)
        return fail(RC_RUNTIME, "out of host memory");
    x->fo = j->fo;
    x->fo.journal = x->own;
    x->fo.plan = p;
    x->fo.row_begin = x->me.row_begin;
    x->fo.row_end = x->me.row_end;
    x->fo.col_begin = x->me.col_begin;
    x->fo.col_end = x->me.col_end;
    x->fo.journals = (const char *const *)x->old;
    x->fo.job = x->s.job[0] ? x->s.job : NULL; /* (rank 0's view of the inputs: see mpi_start_t) */
    if (x->idle) return RC_OK;
    ooc_files_plan_t mine;
    st = ooc_gemm_files_plan(j->h, o->ta, o->tb, scalar_ptr(&j->alpha, j->t), j->A.file, j->B.file,
                             scalar_ptr(&j->beta, j->t), o->c_in ? j->C0.file : NULL, j->C, &x->fo, &mine);
    if (st == OOC_ERR_BUDGET_TOO_SMALL)
        return fail(RC_RUNTIME, "rank 0's plan does not fit this rank's memory budgets (%s): give every rank the same "
                    "--device-mem and --host-mem, and as many devices (--host-mem is shared by a rank's devices)",
                    ooc_last_error(j->h));
    return st == OOC_SUCCESS ? RC_OK : lib_fail(j->h, st, AT_RUN, j->tmp_path, x->own, "plan");
}

static void *worker_main(void *arg)
{
    mpi_job_t *x = arg;
    mul_job_t *j = x->j;
    double t0 = now_seconds();
    x->st = ooc_gemm_files(j->h, j->o.ta, j->o.tb, scalar_ptr(&j->alpha, j->t), j->A.file, j->B.file,
                           scalar_ptr(&j->beta, j->t), j->o.c_in ? j->C0.file : NULL, j->C, &x->fo);
    x->secs = now_seconds() - t0;
    atomic_store(&x->done, 1);
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The multiply in a worker thread; the main thread polls: every 50 ms one
 * non-blocking sum over the ranks of (stop, running, blocks done, blocks,
 * bytes read, bytes written, blocks this run computed: the rate and ETA
 * leave out blocks a resume kept). A stop (a failure, a signal) anywhere cancels
 * every rank's multiply; rank 0 shows the whole job's progress. */
static int mpi_multiply(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    mul_opts_t *o = &j->o;
    progress_t agg;
    memset(&agg, 0, sizeof agg);
    pthread_mutex_init(&agg.lock, NULL);
    agg.mode = x->rank != 0 || o->quiet || o->no_progress ? PROGRESS_NONE
               : isatty(STDERR_FILENO)                    ? PROGRESS_TTY
                                                          : PROGRESS_LINES;
    agg.flops = j->prog.flops = mul_flops(j);
    agg.next_pct = 5;
    agg.t0 = agg.last_print = j->prog.t0 = now_seconds();
    j->prog.mode = PROGRESS_NONE;
    int64_t total = x->idle ? 0 : x->units, shown = -1;
    pthread_t th;
    int peer_stop = 0, started = !x->idle && pthread_create(&th, NULL, worker_main, x) == 0;
    if (!x->idle && !started) x->st = OOC_ERR_THREAD;
    if (!started) atomic_store(&x->done, 1);
    for (;;) {
        int done = atomic_load(&x->done);
        pthread_mutex_lock(&j->prog.lock);
        int64_t in[7] = {stop_signal_caught() != 0 || (done && x->st != OOC_SUCCESS), !done,
                         done && x->st == OOC_SUCCESS ? total : j->prog.done, total,
                         (int64_t)j->prog.bytes_read, (int64_t)j->prog.bytes_written,
                         j->prog.have_base ? j->prog.done - j->prog.base : 0}, out[7];
        pthread_mutex_unlock(&j->prog.lock);
        cli_mpi_isum_start(in, 7);
        while (!cli_mpi_isum_test(out)) sleep_ms(2);
        if (out[0] > 0 && !done && !peer_stop && !in[0]) {
            peer_stop = 1;
            ooc_cancel(j->h);
        }
        if (agg.mode != PROGRESS_NONE && out[2] != shown && out[3] > 0) {
            progress_sum(&agg, out[2], out[6], out[3], (uint64_t)out[4], (uint64_t)out[5]);
            shown = out[2];
        }
        if (out[1] == 0) break;
        sleep_ms(50);
    }
    if (started) pthread_join(th, NULL);
    progress_end(&agg);
    pthread_mutex_destroy(&agg.lock);
    j->secs = now_seconds() - agg.t0; /* the whole job's time, every rank done */
    x->me.time_s = x->secs;
    x->own_failure = 1;
    /* a stop signal stops the job only when it stopped some rank's
     * multiply: one that came once every rank had its last blocks in hand
     * (each multiply succeeded) stops nothing, and the job commits, as one
     * process's does (mul_summary's note, from rank 0) */
    int64_t unfinished = x->st != OOC_SUCCESS;
    cli_mpi_allreduce_i64(&unfinished, 1, CLI_MPI_MAX);
    if (stop_signal_caught() && unfinished)
        return fail(RC_INTERRUPTED, "interrupted by %s after %lld of %lld blocks of this rank: stopped cleanly, %s",
                    signal_name(stop_signal_caught()), (long long)j->prog.done, (long long)total,
                    resume_words(x->own));
    if (x->st == OOC_ERR_CANCELLED && peer_stop) {
        x->own_failure = 0;
        return RC_INTERRUPTED;
    }
    if (x->st != OOC_SUCCESS) return lib_fail(j->h, x->st, AT_RUN, j->tmp_path, x->own, "multiply");
    if (!x->idle && ooc_get_stats(j->h, &j->stats) != OOC_SUCCESS) memset(&j->stats, 0, sizeof j->stats);
    return RC_OK;
}

/* Rank 0: whether C mixes computers, from what each rank computed with
 * and what computed the blocks it kept: ranks that computed blocks by
 * different ids (ranks_mixed), and the blocks kept (from this job's
 * journals or others') that another id than the first computing rank's
 * computed, or several ("several"), counted in blocks_mixed with the first
 * such id. When no rank computes, the kept blocks are held against the
 * first rank's that kept some: a job whose ranks differ may be one
 * computer's, every range recorded by it (each rank, alone, sees only its
 * own blocks: a rank that kept its whole range of another's computes
 * nothing, yet sits beside the others' blocks). */
static void ranks_mixed(mul_job_t *j, const mul_rank_t *all, int P)
{
    int ref = -1;
    j->ranks_mixed = 0;
    j->stats.blocks_mixed = 0;
    j->stats.mixed_by[0] = '\0';
    for (int r = 0; r < P; r++) {
        if (!all[r].computed) continue;
        if (ref < 0) ref = r;
        else if (!j->ranks_mixed && strcmp(all[r].by, all[ref].by) != 0) {
            j->ranks_mixed = r;
            j->ranks_mixed_ref = ref;
            snprintf(j->ranks_mixed_by, sizeof j->ranks_mixed_by, "%s", all[r].by);
            snprintf(j->ranks_ref_by, sizeof j->ranks_ref_by, "%s", all[ref].by);
        }
    }
    const char *id = ref >= 0 ? all[ref].by : NULL;
    for (int r = 0; r < P && id == NULL; r++)
        if (all[r].kept > 0) id = all[r].kept_by;
    for (int r = 0; r < P && id != NULL; r++) {
        if (all[r].kept == 0 || (strcmp(all[r].kept_by, "several") != 0 && strcmp(all[r].kept_by, id) == 0)) continue;
        if (!j->stats.mixed_by[0]) snprintf(j->stats.mixed_by, sizeof j->stats.mixed_by, "%s", all[r].kept_by);
        j->stats.blocks_mixed += all[r].kept;
    }
}

/* Every rank, its multiply done: what computed its blocks and what computed
 * the blocks it kept (blocks_mixed and mpi_report gather it). */
static void rank_me(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    x->me.rank = x->rank;
    snprintf(x->me.host, sizeof x->me.host, "%s", cli_mpi_host());
    snprintf(x->me.kept_by, sizeof x->me.kept_by, "%s", j->stats.kept_by);
    if (ooc_compute_id_for(j->h, j->t, x->me.by, sizeof x->me.by) != OOC_SUCCESS) x->me.by[0] = '\0';
    x->me.kept = x->idle ? 0 : j->stats.blocks_resumed;
    x->me.computed = !x->idle && j->stats.blocks_resumed < x->units;
    if (x->me.computed) x->me.plan = j->stats;
}

/* Rank 0, which computed nothing (its range was done): the plan as run is
 * the first computing rank's (ring, streams, staging, buffers), not rank
 * 0's empty one (ring 0, streams 0); its own times and bytes stay. */
static void plan_as_run(mul_job_t *j, const mul_rank_t *all, int P)
{
    if (all == NULL || all[0].computed) return;
    for (int r = 1; r < P; r++) {
        if (!all[r].computed) continue;
        const ooc_stats_t *q = &all[r].plan;
        ooc_stats_t *st = &j->stats;
        st->ring_depth = q->ring_depth, st->streams = q->streams, st->a_pieces = q->a_pieces;
        st->c_chunks = q->c_chunks, st->b_follow = q->b_follow, st->aligned_tiles = q->aligned_tiles;
        st->resident_transposed = q->resident_transposed, st->staged_a = q->staged_a, st->staged_c = q->staged_c;
        st->stage_chunk = q->stage_chunk, st->stage_bufs = q->stage_bufs, st->stage_cin_chunk = q->stage_cin_chunk;
        st->stage_cin_bufs = q->stage_cin_bufs, st->stage_out_chunk = q->stage_out_chunk;
        st->stage_out_bufs = q->stage_out_bufs, st->device_bytes = q->device_bytes, st->host_bytes = q->host_bytes;
        return;
    }
}

/* Every rank (whatever its own options say: a collective): rank 0 learns
 * whether C's blocks mix computers (ranks_mixed(): ranks computing by other
 * ids, or blocks kept that another computed), before the commit, so that
 * with --resume the whole job's journal says so, as one process's would;
 * the summary says it too. Out of host memory: taken as mixed for the
 * journal (the mark only keeps a later resume from taking the blocks for
 * one computer's), and the summary has rank 0's own figures. */
static void blocks_mixed(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    x->mixed = 0;
    mul_rank_t dummy, *all = x->rank == 0 ? calloc((size_t)x->size, sizeof *all) : &dummy;
    if (cli_mpi_any(all == NULL)) {
        x->mixed = 1;
    } else {
        cli_mpi_gather(&x->me, sizeof x->me, all);
        if (x->rank == 0) {
            ranks_mixed(j, all, x->size);
            x->mixed = j->ranks_mixed != 0 || j->stats.blocks_mixed > 0;
        }
    }
    if (x->rank == 0) free(all);
}

/* Rank 0, every rank done: with --resume (a batch job that may be
 * requeued) the whole job recorded finished in the journal JOURNAL against
 * the temporary file, as one process's run with --resume leaves it, so that
 * running the same command again finds it finished and does nothing (a
 * plain run, like one process's, leaves nothing beside C); then C renamed
 * onto its path; then the range journals of the job (consumed) removed.
 *
 * Recorded before the commit, as one process records its own: a job
 * computed in place (--c-in C -o C) whose record failed after the commit
 * would be computed again from its own output by a requeued --resume. So a
 * failure to record fails the job, C not committed, resumable: a --resume
 * finds every block done in the range journals, records and commits. */
static int mpi_commit(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    mul_opts_t *o = &j->o;
    if (o->resume) {
        ooc_files_opts_t mo = {.journal = o->journal, .plan = &x->s.plan, .allow_mixed = x->mixed, .job = x->fo.job};
        ooc_status_t st = ooc_gemm_files_mark_finished(j->h, o->ta, o->tb, scalar_ptr(&j->alpha, j->t), j->A.file,
                                                       j->B.file, scalar_ptr(&j->beta, j->t),
                                                       o->c_in ? j->C0.file : NULL, j->C, &mo);
        if (st != OOC_SUCCESS) {
            int rc = lib_fail(j->h, st, AT_OUTPUT, j->tmp_path, j->journal_path, "recording the job as finished");
            ooc_file_close(j->C, 0);
            j->C = NULL;
            j->uncommitted = 1;
            fprintf(stderr, "%s: %s is complete but not committed: run the same command with --resume to record "
                    "and commit it\n", progname, j->tmp_path);
            return rc;
        }
    }
    int rc = mul_commit(j, x->own, "output", 0);
    if (rc != RC_OK) return rc;
    range_journals_remove(j->h, j->journal_path);
    return RC_OK;
}

/* --verify: each rank checks its rows (or columns, or its rectangle of a
 * grid: ooc_verify_files_rect, reading only its part of op(B)) of C read
 * back from its path; the worst error and the verdict are reduced. A rank
 * whose check is undecided (OOC_ERR_UNDECIDED: values of the check
 * overflowed) is no failure of its own: when no rank finds C wrong, rank 0
 * says, as one process does, that C is committed but the check could not
 * decide (with the first such rank's reason), exit status 1 on every rank. */
static int mpi_verify(mpi_job_t *x)
{
    mul_job_t *j = x->j;
    mul_opts_t *o = &j->o;
    int rc = RC_OK;
    char undecided[512] = ""; /* this rank's reason, when its check is undecided */
    ooc_verify_result_t *v = &j->vr;
    memset(v, 0, sizeof *v);
    v->passed = 1;
    if (!x->idle) {
        j->Cv = (operand_t){.name = "C", .arg = o->out, .path = strdup(o->out), .shaped = 1, .spec = j->cspec};
        if (j->cspec.format == OOC_FORMAT_NPY) j->Cv.spec.format = OOC_FORMAT_AUTO;
        if (j->Cv.path == NULL) rc = fail(RC_RUNTIME, "out of host memory");
        if (rc == RC_OK) rc = operand_open(j->h, &j->Cv, &o->raw);
        ooc_status_t st = OOC_SUCCESS;
        if (stop_signal_caught()) ooc_cancel(j->h); /* (the multiply's return consumed a late request) */
        mul_verify_math(j);
        const void *al = scalar_ptr(&j->alpha, j->t), *be = scalar_ptr(&j->beta, j->t);
        ooc_file_t *c0 = o->c_in ? j->C0.file : NULL;
        int64_t r0, r1, q0, q1; /* a grid's rectangle, in C */
        mul_rank_rect(j, &x->me, &r0, &r1, &q0, &q1);
        if (rc == RC_OK && j->split_grid)
            st = ooc_verify_files_rect(j->h, o->ta, o->tb, al, j->A.file, j->B.file, be, c0, j->Cv.file, r0, r1, q0,
                                       q1, 3, 16, v);
        else if (rc == RC_OK)
            st = (j->split_cols ? ooc_verify_files_cols : ooc_verify_files_rows)(
                j->h, o->ta, o->tb, al, j->A.file, j->B.file, be, c0, j->Cv.file, x->me.row_begin, x->me.row_end, 3,
                16, v);
        if (st == OOC_ERR_CANCELLED) rc = fail(RC_INTERRUPTED, "interrupted by %s: %s is complete and committed, "
                                               "but not verified", signal_name(stop_signal_caught()), o->out);
        else if (st == OOC_ERR_UNDECIDED) snprintf(undecided, sizeof undecided, "%s", ooc_last_error(j->h));
        else if (st != OOC_SUCCESS) rc = lib_fail(j->h, st, AT_INPUT, NULL, NULL, "verify");
    }
    if ((rc = agreed(x, rc, 1, "verifying")) != RC_OK) return rc;
    double worst[2] = {v->max_rel_err, v->tolerance};
    int64_t sums[6] = {v->rows_checked, (int64_t)v->bytes_read, v->nonfinite, v->rows_unverified, v->off,
                       undecided[0] != '\0'},
            lows[3] = {v->passed, v->exact, v->off > 0 ? v->first_off_row : INT64_MAX};
    int64_t vectors = v->vectors;
    cli_mpi_allreduce_max(worst, 2);
    cli_mpi_allreduce_i64(sums, 6, CLI_MPI_SUM);
    cli_mpi_allreduce_i64(lows, 3, CLI_MPI_MIN);
    cli_mpi_allreduce_i64(&vectors, 1, CLI_MPI_MAX);
    *v = (ooc_verify_result_t){.exact = (int)lows[1], .vectors = (int)vectors, .rows_checked = sums[0],
                               .max_rel_err = worst[0], .tolerance = worst[1], .passed = (int)lows[0],
                               .bytes_read = (uint64_t)sums[1], .nonfinite = sums[2], .rows_unverified = sums[3],
                               .off = sums[4], .first_off_row = sums[4] > 0 ? lows[2] : -1};
    if (v->passed && sums[5] > 0) { /* (an undecided rank's result is no result: no "check", as for one process) */
        char *all = x->rank == 0 ? malloc((size_t)x->size * sizeof undecided) : NULL;
        char *why = NULL;
        int64_t room = x->rank != 0 || all != NULL; /* (rank 0 without the memory: no reasons gathered) */
        cli_mpi_allreduce_i64(&room, 1, CLI_MPI_MIN);
        if (room) cli_mpi_gather(undecided, sizeof undecided, all);
        int first = -1;
        for (int r = 0; all && r < x->size && first < 0; r++)
            if (all[(size_t)r * sizeof undecided] != '\0') first = r, why = all + (size_t)r * sizeof undecided;
        rc = RC_CHECK_FAILED;
        if (x->rank == 0) {
            if (why == NULL) rc = fail(RC_CHECK_FAILED, "verify: the check could not decide on %lld of %d ranks "
                                       "(values of the check overflowed): %s is written (committed), but do not "
                                       "use it as checked", (long long)sums[5], x->size, o->out);
            else {
                char on[64] = ""; /* (rank 0's own reason: its prefix names it) */
                if (first > 0) snprintf(on, sizeof on, "rank %d of %d: ", first, x->size);
                rc = fail(RC_CHECK_FAILED, "verify: %s%s: %s is written (committed), but the check could not "
                          "decide: do not use it as checked", on, why, o->out);
            }
        }
        free(all);
        return rc;
    }
    j->verified = 1;
    if (v->passed) return RC_OK;
    if (x->rank != 0) return RC_CHECK_FAILED;
    char msg[400];
    return fail(RC_CHECK_FAILED, "%s: %s is written (committed), but wrong: do not use it",
                verify_failure(v, j->split_cols && !j->split_grid, msg, sizeof msg), o->out);
}

/* Every rank: the stop signal the job caught, any rank's (rank 0's own
 * first), in j->signal: rank 0's summary and JSON name it though it reached
 * another rank alone. A collective: every rank calls it at the same point. */
static void job_signal(mpi_job_t *x)
{
    int mine = stop_signal_caught(); /* (read once: one caught after the allreduce would make this rank
                                      * alone skip the floor's collectives) */
    int64_t sig = mine;
    cli_mpi_allreduce_i64(&sig, 1, CLI_MPI_MAX);
    x->j->signal = mine ? mine : (int)sig;
}

/* One rank's part of the job's floor. */
typedef struct {
    int32_t counted; /* it had blocks: its bytes count */
    int32_t parts;   /* what it measured (FLOOR_COPIES, FLOOR_HOST, FLOOR_RATE) */
    int32_t own;     /* its note is its own failure to measure, not the job's */
    char host[64];
    floor_t f;
} rank_floor_t;

/* What rank 0 needs to tell each rank what it measures. */
typedef struct {
    char host[64];
    uint32_t devices; /* OOC_PARAM_DEVICES mask (0: every visible one) */
    int32_t counted, staged;
} rank_id_t;

static void sync_ranks(void) { cli_mpi_barrier(); }

/* Rank 0: what each of the P ranks measures. A GPU's copies and rate are
 * measured by one rank (the first with blocks whose devices overlap it on its
 * host): two ranks' probes of one GPU rarely overlap, and their sum read
 * 67 GB/s of one H200's 55. The host's memory by every rank that staged,
 * all at once, as they staged: each with the CPUs it may use (mpirun binds
 * a rank to one core by default: one rank alone read 15.9 GB/s, two at once
 * 36, one process on the host's 16 cores 122). On the host backend (cpu)
 * the CPU's rate is the host's: its first rank with blocks. Ranks on other
 * GPUs or hosts measure at once. */
static void floor_roles(const rank_id_t *id, int P, int cpu, int32_t *parts)
{
    for (int r = 0; r < P; r++) {
        parts[r] = 0;
        if (!id[r].counted) continue;
        int first_host = 1, first_gpu = 1;
        for (int q = 0; q < r; q++) {
            if (!id[q].counted || strcmp(id[q].host, id[r].host) != 0) continue;
            first_host = 0;
            if (id[q].devices == 0 || id[r].devices == 0 || (id[q].devices & id[r].devices)) first_gpu = 0;
        }
        if (cpu) parts[r] = first_host ? FLOOR_RATE : 0;
        else parts[r] = (first_gpu ? FLOOR_COPIES | FLOOR_RATE : 0) | (id[r].staged ? FLOOR_HOST : 0);
    }
}

/* Every rank: its part of the floor: the bytes its plan moved and staged,
 * and what floor_roles gives it to measure, at the same time as the other
 * ranks measure theirs (their copies on other GPUs of a host together);
 * figures given are each GPU's (or host's). Nothing when the job was
 * resumed in part (resumed: summed over the ranks, the same everywhere):
 * the time is the rest's. */
static void rank_floor(mpi_job_t *x, int64_t resumed, rank_floor_t *p)
{
    mul_job_t *j = x->j;
    mul_opts_t *o = &j->o;
    memset(p, 0, sizeof *p);
    snprintf(p->host, sizeof p->host, "%s", cli_mpi_host());
    p->f = floor_given(&o->floor);
    /* (a stop signal that came too late to stop the job: the user asked it
     * to end, and the probes take seconds; the summary says not measured) */
    if (o->floor.no_floor || resumed > 0 || j->signal) return;
    p->counted = !x->idle;
    if (x->idle) snprintf(p->f.note, sizeof p->f.note, "no blocks: nothing to measure");
    else {
        floor_traffic(&p->f, &j->stats);
        floor_of_run(&p->f, &j->stats);
    }
    rank_id_t me = {.devices = x->me.devices, .counted = p->counted, .staged = p->f.staged_bytes > 0}, dummy;
    snprintf(me.host, sizeof me.host, "%s", p->host);
    rank_id_t *ids = x->rank == 0 ? calloc((size_t)x->size, sizeof *ids) : &dummy;
    int32_t *roles = calloc((size_t)x->size, sizeof *roles);
    int oom = cli_mpi_any(ids == NULL || roles == NULL);
    if (!oom) {
        cli_mpi_gather(&me, sizeof me, ids);
        if (x->rank == 0) floor_roles(ids, x->size, backend_is_host(j->h), roles);
        cli_mpi_bcast(roles, (size_t)x->size * sizeof *roles);
        p->parts = roles[x->rank];
    } else if (!x->idle) {
        snprintf(p->f.note, sizeof p->f.note, "out of host memory");
    }
    if (x->rank == 0) free(ids);
    free(roles);
    int had_note = p->f.note[0] != 0;
    floor_measure_sync(j->h, j->t, j->m, j->n, j->k, o->quiet || o->json, &p->f, sync_ranks, (unsigned)p->parts);
    p->own = !had_note && p->f.note[0] != 0;
}

/* a += b when both are known (> 0), else unknown (0). */
static void add_known(double *a, double b) { *a = *a > 0 && b > 0 ? *a + b : 0; }

/* Rank 0: the job's floor from the P ranks' parts: the bytes of those that
 * had blocks summed; each GPU's figures (measured by one rank) summed; T_host
 * the largest of the hosts' (3 x the bytes its ranks staged / the sum of
 * its staging ranks' memory rates), given as the bytes of all and the rate
 * that makes it. A rank that could not measure (or a job with nothing
 * multiplied) leaves no floor, its note saying why. */
static void floor_of_ranks(const rank_floor_t *p, int P, floor_t *fl)
{
    int n = 0, first = 1, host_ok = 1;
    double host_t = 0; /* max over hosts of staged / rate */
    for (int r = 0; r < P; r++) {
        const floor_t *f = &p[r].f;
        if (!p[r].counted) continue;
        if (f->note[0]) {
            if (p[r].own) snprintf(fl->note, sizeof fl->note, "rank %d: %.560s", r, f->note);
            else snprintf(fl->note, sizeof fl->note, "%s", f->note);
            return;
        }
        if (n++ == 0) {
            *fl = *f;
            fl->bw_h2d = fl->bw_d2h = fl->bw_both = fl->rate = fl->bw_host = 0;
            fl->staged_bytes = fl->host_traffic = 0;
            fl->ndev = 0;
        } else {
            fl->in_bytes += f->in_bytes;
            fl->out_bytes += f->out_bytes;
            fl->least_bytes += f->least_bytes;
        }
        fl->staged_bytes += f->staged_bytes;
        fl->host_traffic += f->host_traffic;
        if (p[r].parts & (FLOOR_COPIES | FLOOR_RATE)) {
            if (first) {
                fl->bw_h2d = f->bw_h2d, fl->bw_d2h = f->bw_d2h, fl->bw_both = f->bw_both, fl->rate = f->rate;
                fl->measured_bw = f->measured_bw, fl->measured_both = f->measured_both;
                fl->measured_rate = f->measured_rate;
                fl->pm = f->pm, fl->pn = f->pn, fl->pk = f->pk;
                first = 0;
            } else {
                add_known(&fl->bw_h2d, f->bw_h2d);
                add_known(&fl->bw_d2h, f->bw_d2h);
                add_known(&fl->bw_both, f->bw_both);
                add_known(&fl->rate, f->rate);
                fl->measured_both = fl->measured_both && f->measured_both;
                fl->measured_rate = fl->measured_rate && f->measured_rate;
                if (f->measured_bw != fl->measured_bw) fl->measured_bw = 2;
            }
            fl->ndev += f->ndev > 1 ? f->ndev : 1; /* (on the host backend: hosts) */
        }
        int lead = 1; /* the host's first rank with blocks: its ranks' staged bytes over their memory rates */
        for (int q = 0; q < r && lead; q++) lead = !(p[q].counted && strcmp(p[q].host, p[r].host) == 0);
        if (lead) {
            double staged = 0, bw = 0;
            for (int q = r; q < P; q++) {
                if (!p[q].counted || strcmp(p[q].host, p[r].host) != 0 || !(p[q].parts & FLOOR_HOST)) continue;
                staged += p[q].f.host_traffic;
                bw += p[q].f.bw_host;
                host_ok = host_ok && p[q].f.bw_host > 0;
                fl->measured_host = p[q].f.measured_host;
            }
            if (bw > 0 && staged / bw > host_t) host_t = staged / bw;
        }
    }
    fl->bw_host = host_ok && host_t > 0 ? fl->host_traffic / host_t : 0; /* T_host = host_traffic / bw_host */
    fl->nranks = n;
}

/* The summary from rank 0: the ranks' figures gathered, bytes summed, the
 * floor measured by every rank at once. */
static void mpi_report(mpi_job_t *x, int rc)
{
    mul_job_t *j = x->j;
    job_signal(x);
    x->me.bytes_read = j->prog.bytes_read; /* (the rest: rank_me) */
    x->me.bytes_written = j->prog.bytes_written;
    mul_rank_t dummy;
    mul_rank_t *all = x->rank == 0 ? calloc((size_t)x->size, sizeof *all) : &dummy;
    rank_floor_t part, dummy_part;
    rank_floor_t *parts = x->rank == 0 ? calloc((size_t)x->size, sizeof *parts) : &dummy_part;
    int64_t sums[4] = {(int64_t)j->prog.bytes_read, (int64_t)j->prog.bytes_written, j->stats.blocks_resumed,
                       j->stats.blocks_mismatched};
    cli_mpi_allreduce_i64(sums, 4, CLI_MPI_SUM);
    rank_floor(x, sums[2], &part);
    if (!cli_mpi_any(all == NULL || parts == NULL)) { /* rank 0 out of memory: no list, no floor */
        cli_mpi_gather(&x->me, sizeof x->me, all);
        cli_mpi_gather(&part, sizeof part, parts);
    } else if (x->rank == 0) {
        free(all);
        all = NULL;
    }
    if (x->rank != 0) return;
    j->split_floor = 1;
    if (parts) floor_of_ranks(parts, x->size, &j->split_fl);
    else snprintf(j->split_fl.note, sizeof j->split_fl.note, "out of host memory");
    free(parts);
    j->ranks = all;
    j->nranks = all ? x->size : 0;
    j->prog.bytes_read = (uint64_t)sums[0];
    j->prog.bytes_written = (uint64_t)sums[1];
    j->stats.blocks_resumed = sums[2];
    j->stats.blocks_mismatched = sums[3];
    j->stats.blocks = x->s.plan.blocks;
    j->stats.panels = x->s.plan.panels;
    plan_as_run(j, all, x->size);
    mul_summary(j, rc);
}

/* Every rank: a rank bound to one CPU of a host that has more (Open MPI's
 * mpirun binds each rank to a core by default) stages its files on that
 * one CPU: rank 0 says so, once, before the multiply. On an H200 host, two
 * ranks so bound took 0.664 s where `--bind-to none` took 0.441 s. */
static void binding_note(mpi_job_t *x)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t one = cli_cpu_count() == 1 && online > 1;
    cli_mpi_allreduce_i64(&one, 1, CLI_MPI_SUM);
    if (x->rank == 0 && one > 0 && !x->j->o.quiet && !x->j->o.json)
        fprintf(stderr, "%s: note: %lld rank%s may use only one CPU each (mpirun binds a rank to a core by default), "
                "so a rank's staging threads share one core; mpirun --bind-to none, or --map-by slot:PE=N, gives "
                "each more\n", progname, (long long)one, one == 1 ? "" : "s");
}

int mul_mpi(mul_job_t *j)
{
    mpi_job_t *x = calloc(1, sizeof *x);
    if (x == NULL) return fail(RC_RUNTIME, "out of host memory");
    x->j = j;
    x->rank = cli_mpi_rank();
    x->size = cli_mpi_size();
    progname = cli_mpi_name();
    int rc = mul_prepare(j);
    if (rc == RC_OK) map_devices(x);
    if (rc == RC_OK) rc = mul_open_inputs(j);
    if (rc == RC_OK && asprintf(&x->own, "%s.r%d-of-%d", j->journal_path, x->rank, x->size) < 0) {
        x->own = NULL;
        rc = fail(RC_RUNTIME, "out of host memory");
    }
    if (rc == RC_OK) { /* (its own journal, as one process's: an input there is a usage error) */
        char what[128 + PATH_MAX];
        snprintf(what, sizeof what, "the journal %s of rank %d (%s.r<R>-of-%d)", x->own, x->rank, j->journal_path,
                 x->size);
        rc = mul_journal_apart(j, x->own, what);
    }
    if ((rc = mul_mpi_first_agreement(rc)) != RC_OK) goto failed;
    if ((rc = agreed(x, same_job(x), 1, "comparing the jobs")) != RC_OK) goto failed;
    if (x->rank == 0) x->s.rc = mpi_finished(x);
    cli_mpi_bcast(&x->s, sizeof x->s); /* rank 0 said why it failed */
    if ((rc = x->s.rc) != RC_OK) goto failed;
    /* (a finished job computes nothing, nor does a scaling one) */
    if (!x->s.finished && !scaling_only(j) &&
        (rc = agreed(x, same_computers(x), 1, "comparing what computes the blocks")) != RC_OK)
        goto failed;
    if (x->rank == 0 && !x->s.finished) x->s.rc = mpi_open(x);
    cli_mpi_bcast(&x->s, sizeof x->s); /* rank 0 said why it failed */
    if ((rc = x->s.rc) != RC_OK) goto failed;
    if (x->s.finished) {
        /* --verify: rank 0 checks the whole C, as one process would */
        if (j->o.verify) rc = agreed(x, x->rank == 0 ? mul_verify_whole(j) : RC_OK, 1, "verifying");
        if (rc != RC_OK && rc != RC_CHECK_FAILED) goto failed;
        if (x->rank == 0) mul_summary(j, rc);
        goto done;
    }
    rc = agreed(x, mpi_join(x), 1, "joining the output");
    if (rc != RC_OK) {
        if (x->rank == 0 && j->C) ooc_file_close(j->C, !j->o.resume);
        j->C = NULL;
        goto failed;
    }
    binding_note(x);
    rc = mpi_multiply(x);
    if (x->rank != 0 && j->C) ooc_file_close(j->C, 0); /* a joined file: before rank 0 commits */
    if (x->rank != 0) j->C = NULL;
    if ((rc = agreed(x, rc, x->own_failure, "multiplying")) != RC_OK) {
        j->interrupted = rc == RC_INTERRUPTED; /* a stop signal on some rank: the job's JSON says so */
        if (x->rank == 0) {
            ooc_file_close(j->C, 0);
            j->C = NULL;
            if (journal_keeps_blocks(x->own))
                fprintf(stderr, "%s: the finished blocks are kept in %s (journals %s.r*-of-%d): run the same "
                        "command with --resume, with any number of ranks, to continue\n", progname, j->tmp_path,
                        j->journal_path, x->size);
            else
                fprintf(stderr, "%s: %s and its journals %s.r*-of-%d are kept: --resume, with any number of "
                        "ranks, starts the job over with the plan they record (the same bytes; the parts of ranks "
                        "that finished theirs are kept)\n", progname,
                        j->tmp_path, j->journal_path, x->size);
        }
        goto failed;
    }
    j->multiplied = 1;
    rank_me(x);
    blocks_mixed(x);
    if ((rc = agreed(x, x->rank == 0 ? mpi_commit(x) : RC_OK, 1, "committing")) != RC_OK) goto failed;
    if (j->o.verify) rc = mpi_verify(x);
    j->interrupted = rc == RC_INTERRUPTED; /* (a stop signal while verifying, on any rank, as one process says it) */
    if (rc != RC_OK && rc != RC_CHECK_FAILED) goto failed;
    mpi_report(x, rc);
    goto done;
failed:
    job_signal(x); /* (every rank comes here, each with the same status) */
    if (x->rank == 0 && j->o.json) mul_print_failure_json(j, rc);
done:
    strv_free(x->old);
    free(x->own);
    free(x);
    return rc;
}
