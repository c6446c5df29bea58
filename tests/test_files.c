/* SPDX-License-Identifier: MIT */
/*
 * test_files.c: ooc_gemm_files end to end against OpenBLAS, through one
 * backend chosen at build time (OOC_TEST_BACKEND; the CUDA build exits 77
 * without a GPU): .npy and raw files in C and Fortran order mixed, every
 * element type, transposes, beta with C0, budgets smaller than the operands,
 * errors that leave no output, and a run killed (SIGKILL) part-way then
 * resumed to a byte-identical result (also with op(B) uploaded in chunks,
 * where block 0 is multiplied chunk by chunk). The output is this job's
 * alone: a second job on it is refused, a symbolic link at its temporary
 * file is never followed, a target that is not a regular file is refused
 * before any work, a journal path naming an input, the output (also before
 * it exists) or its temporary file is refused and the input kept, a FIFO is
 * refused without waiting, and a finished job is recognised. A resume
 * computes as the run it resumes (the journal records ooc_compute_id()).
 * ooc_journal_forget removes only a journal nobody holds (or an empty file),
 * never another file or a symbolic link.
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "testutil.h"

static ooc_handle_t *H;
static uint64_t seed = 99;

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Write a random rows x cols matrix file; returns its data (caller frees). */
static void *make_file(const char *name, ooc_format_t fmt, ooc_dtype_t t, ooc_layout_t layout, int64_t rows,
                       int64_t cols)
{
    size_t count = (size_t)(rows * cols);
    void *data = malloc(count * tu_elem(t));
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    tu_fill(t, data, count, &seed);
    ooc_file_spec_t spec = {fmt, rows, cols, t, layout};
    ooc_file_t *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path(name), &spec, 0, &f), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_write(H, f, 0, data, count), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_commit(H, f), OOC_SUCCESS);
    ooc_file_close(f, 0);
    return data;
}

static ooc_file_t *open_file(const char *name, ooc_format_t fmt, ooc_dtype_t t, ooc_layout_t layout,
                             int64_t rows, int64_t cols)
{
    ooc_file_spec_t spec = {fmt, rows, cols, t, layout};
    ooc_file_t *f = NULL;
    ooc_status_t st = ooc_file_open(H, tu_path(name), &spec, &f);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    open %s: %s\n", name, ooc_last_error(H));
    CU_ASSERT_EQUAL_FATAL(st, OOC_SUCCESS);
    return f;
}

/* The stored matrix of `layout` seen as a column- or row-major operand of
 * the reference: a file in the other layout is its transpose. */
static ooc_op_t ref_op(ooc_op_t op, ooc_layout_t file_layout, ooc_layout_t ref_layout)
{
    if (file_layout == ref_layout) return op;
    return op == OOC_OP_N ? OOC_OP_T : OOC_OP_N;
}

typedef struct {
    ooc_dtype_t t;
    ooc_op_t ta, tb;
    ooc_layout_t la, lb, lc;
    ooc_format_t fmt;
    int64_t m, n, k;
    double beta;
    int64_t device_mem, host_mem;
} fcase_t;

static ooc_stats_t run_fcase(const fcase_t *c)
{
    ooc_stats_t stats;
    memset(&stats, 0, sizeof stats);
    size_t e = tu_elem(c->t);
    int64_t ar = c->ta == OOC_OP_N ? c->m : c->k, ac = c->ta == OOC_OP_N ? c->k : c->m;
    int64_t br = c->tb == OOC_OP_N ? c->k : c->n, bc = c->tb == OOC_OP_N ? c->n : c->k;
    void *A = make_file("a", c->fmt, c->t, c->la, ar, ac);
    void *B = make_file("b", c->fmt, c->t, c->lb, br, bc);
    void *C0 = c->beta != 0 ? make_file("c0", c->fmt, c->t, c->lc, c->m, c->n) : NULL;
    ooc_file_t *fa = open_file("a", c->fmt, c->t, c->la, ar, ac);
    ooc_file_t *fb = open_file("b", c->fmt, c->t, c->lb, br, bc);
    ooc_file_t *fc0 = C0 ? open_file("c0", c->fmt, c->t, c->lc, c->m, c->n) : NULL;
    ooc_file_spec_t cs = {c->fmt, c->m, c->n, c->t, c->lc};
    ooc_file_t *fc = NULL;
    unlink(tu_path("c")); /* the previous case's result */
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("c"), &cs, 0, &fc), OOC_SUCCESS);

    double alpha[2] = {0.75, -0.25}, beta[2] = {c->beta, c->beta != 0 ? 0.5 : 0};
    float alphaf[2] = {0.75f, -0.25f}, betaf[2] = {(float)beta[0], (float)beta[1]};
    int single = c->t == OOC_R32 || c->t == OOC_C32;
    const void *pa = single ? (void *)alphaf : (void *)alpha, *pb = single ? (void *)betaf : (void *)beta;
    ooc_set(H, OOC_PARAM_DEVICE_MEM, c->device_mem);
    ooc_set(H, OOC_PARAM_HOST_MEM, c->host_mem);
    ooc_status_t st = ooc_gemm_files(H, c->ta, c->tb, pa, fa, fb, pb, fc0, fc, NULL);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    ooc_gemm_files: %s: %s\n", ooc_status_string(st), ooc_last_error(H));
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    if (st == OOC_SUCCESS) {
        CU_ASSERT_EQUAL(ooc_get_stats(H, &stats), OOC_SUCCESS);
        CU_ASSERT_FALSE(exists(tu_path("c")));                /* not before commit */
        CU_ASSERT_TRUE(exists(tu_path("c.ooc-journal")));     /* kept, marked complete */
        CU_ASSERT_EQUAL(ooc_file_commit(H, fc), OOC_SUCCESS);
        CU_ASSERT_TRUE(exists(tu_path("c")));
        CU_ASSERT_FALSE(exists(tu_path("c.ooc-tmp")));
        /* read C back and compare with OpenBLAS in C's layout */
        size_t cnt = (size_t)(c->m * c->n);
        void *C = malloc(cnt * e), *Cref0 = calloc(cnt, e);
        CU_ASSERT_PTR_NOT_NULL_FATAL(C);
        CU_ASSERT_EQUAL(ooc_file_read(H, fc, 0, C, cnt), OOC_SUCCESS);
        if (C0) memcpy(Cref0, C0, cnt * e);
        else tu_fill_nan(c->t, Cref0, cnt);
        ooc_layout_t L = c->lc;
        int64_t lda = (c->la == OOC_COL_MAJOR) ? ar : ac, ldb = (c->lb == OOC_COL_MAJOR) ? br : bc;
        int64_t ldc = L == OOC_COL_MAJOR ? c->m : c->n;
        double worst;
        int64_t bad = tu_check(c->t, L, ref_op(c->ta, c->la, L), ref_op(c->tb, c->lb, L), c->m, c->n, c->k, pa, A,
                               lda, B, ldb, pb, Cref0, C, ldc, &worst);
        if (bad) fprintf(stderr, "\n    %lld bad elements (worst %.3g x tolerance)\n", (long long)bad, worst);
        CU_ASSERT_EQUAL(bad, 0);
        free(C);
        free(Cref0);
    }
    ooc_file_close(fa, 0);
    ooc_file_close(fb, 0);
    ooc_file_close(fc0, 0);
    ooc_file_close(fc, 1);
    free(A);
    free(B);
    free(C0);
    ooc_set(H, OOC_PARAM_DEVICE_MEM, 0);
    ooc_set(H, OOC_PARAM_HOST_MEM, 0);
    return stats;
}

static const ooc_layout_t RM = OOC_ROW_MAJOR, CM = OOC_COL_MAJOR;

/* Every element type, orders mixed, N and T, beta with C0, npy and raw. */
static void test_orders_types(void)
{
    ooc_layout_t ls[4][3] = {{RM, RM, RM}, {CM, CM, CM}, {CM, RM, RM}, {RM, CM, CM}};
    for (int t = OOC_R32; t <= OOC_C64; t++)
        for (int l = 0; l < 4; l++)
            for (int op = 0; op < 4; op++) {
                fcase_t c = {(ooc_dtype_t)t, op & 1 ? OOC_OP_T : OOC_OP_N, op & 2 ? OOC_OP_T : OOC_OP_N,
                             ls[l][0], ls[l][1], ls[l][2], (l + op) % 2 ? OOC_FORMAT_RAW : OOC_FORMAT_NPY,
                             67, 45, 39, (t + l + op) % 2 ? 0.0 : -1.5, 0, 0};
                run_fcase(&c);
            }
}

/* Conjugate transposes need the operand in C's order. */
static void test_conjugate(void)
{
    fcase_t c = {OOC_C64, OOC_OP_C, OOC_OP_C, RM, RM, RM, OOC_FORMAT_NPY, 50, 31, 27, 1.0, 0, 0};
    run_fcase(&c);
    c.la = c.lb = c.lc = CM;
    run_fcase(&c);
}

/* A and C larger than the host budget and B larger than the device budget. */
static void test_small_budgets(void)
{
    /* A 400x300 doubles = 960 KB, C 400x350 = 1.1 MB, B 300x350 = 840 KB */
    fcase_t c = {OOC_R64, OOC_OP_N, OOC_OP_N, RM, CM, RM, OOC_FORMAT_NPY, 400, 350, 300, 0.5, 256 << 10, 128 << 10};
    ooc_stats_t s = run_fcase(&c);
    CU_ASSERT(s.host_bytes > 0 && s.host_bytes <= (uint64_t)(128 << 10));
    CU_ASSERT(s.device_bytes <= (uint64_t)(256 << 10));
    CU_ASSERT(s.panels > 1);
    CU_ASSERT(s.blocks > 8);
    c.lc = CM; /* Fortran-order output: row blocks are strided in the file */
    c.beta = 0;
    run_fcase(&c);
}

/* Wide: op(A) is the smaller operand, so it stays resident and op(B)'s
 * columns stream (the transposed orientation), from files in both orders. */
static void test_wide_files(void)
{
    ooc_layout_t ls[3][3] = {{RM, RM, RM}, {CM, CM, CM}, {RM, CM, CM}};
    for (int l = 0; l < 3; l++) {
        fcase_t c = {OOC_R64, l == 2 ? OOC_OP_T : OOC_OP_N, OOC_OP_N, ls[l][0], ls[l][1], ls[l][2],
                     OOC_FORMAT_NPY, 40, 1100, 50, l == 1 ? 0.5 : 0.0, 0, 64 << 10};
        ooc_stats_t s = run_fcase(&c);
        CU_ASSERT_EQUAL(s.a_resident, 1);
        CU_ASSERT(s.blocks > 1);
    }
}

/* Bad combinations: a clear status, no output file, no temporary file. */
static void test_errors(void)
{
    free(make_file("x", OOC_FORMAT_NPY, OOC_R64, RM, 30, 20));
    free(make_file("y", OOC_FORMAT_NPY, OOC_R64, RM, 21, 10)); /* k mismatch: 20 vs 21 */
    free(make_file("z", OOC_FORMAT_NPY, OOC_R32, RM, 20, 10));
    free(make_file("w", OOC_FORMAT_NPY, OOC_R64, RM, 20, 10));
    ooc_file_t *x = open_file("x", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *y = open_file("y", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *z = open_file("z", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *w = open_file("w", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, 30, 10, OOC_R64, RM};
    ooc_file_t *out = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("out.npy"), &cs, 0, &out), OOC_SUCCESS);
    double one = 1, zero = 0;
    CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &one, x, y, &zero, NULL, out, NULL), OOC_ERR_SHAPE);
    CU_ASSERT(strstr(ooc_last_error(H), "inner dimensions") != NULL);
    CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &one, x, z, &zero, NULL, out, NULL), OOC_ERR_SHAPE);
    CU_ASSERT(strstr(ooc_last_error(H), "float32") != NULL);
    CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &one, x, w, &one, NULL, out, NULL), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &one, x, w, &zero, NULL, x, NULL), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_T, OOC_OP_N, &one, x, w, &zero, NULL, out, NULL), OOC_ERR_SHAPE);
    CU_ASSERT_EQUAL(ooc_gemm_files(H, (ooc_op_t)0, OOC_OP_N, &one, x, w, &zero, NULL, out, NULL), OOC_ERR_INVALID_TRANSA);
    CU_ASSERT_FALSE(exists(tu_path("out.npy.ooc-journal")));
    /* an input cut short after it was opened: the run stops with a format error */
    CU_ASSERT_EQUAL(truncate(tu_path("x"), 128 + 8 * 300), 0);
    ooc_status_t st = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &one, x, w, &zero, NULL, out, NULL);
    CU_ASSERT(st == OOC_ERR_FORMAT);
    CU_ASSERT(strstr(ooc_last_error(H), "truncated") != NULL);
    ooc_file_close(out, 1);
    CU_ASSERT_FALSE(exists(tu_path("out.npy")));
    CU_ASSERT_FALSE(exists(tu_path("out.npy.ooc-tmp")));
    unlink(tu_path("out.npy.ooc-journal"));
    ooc_file_close(x, 0);
    ooc_file_close(y, 0);
    ooc_file_close(z, 0);
    ooc_file_close(w, 0);
}

/* ---- resume after SIGKILL ---- */

enum { RM_ = 1201, RN = 97, RK = 83 };

static char last_msg[512];
static int64_t first_done; /* first block count the progress callback saw */

static void note_first(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)user, (void)total, (void)rd, (void)wr;
    if (first_done == 0) first_done = done;
}

/* "done" lines in a journal */
static int64_t journal_done(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    int64_t n = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "done ", 5) == 0) n++;
    if (f) fclose(f);
    return n;
}

static const char *kill_journal;
static const char *custom_journal; /* resume_run's journal path: NULL, the default */
static int64_t resume_chunks; /* OOC_PARAM_B_CHUNKS of every run (0: automatic) */

/* SIGKILL ourselves once `kill_at` blocks are written and at least 3 are
 * recorded in the journal (its flusher lags the writer). */
static void kill_after(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)total, (void)rd, (void)wr;
    if (done < *(int64_t *)user) return;
    for (int i = 0; i < 1000 && journal_done(kill_journal) < 3; i++) usleep(10000);
    raise(SIGKILL);
}

/* Multiply a x b into name; with kill_at > 0, in a child process that
 * SIGKILLs itself after kill_at blocks. Returns the status (or -1 if the
 * child was killed as planned). */
static int resume_run(const char *name, int64_t kill_at, int resume)
{
    double one = 1, zero = 0;
    if (kill_at > 0) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            ooc_handle_t *h2;
            if (ooc_create(&h2) != OOC_SUCCESS) _exit(2);
            ooc_set(h2, OOC_PARAM_BACKEND, OOC_BACKEND_HOST);
            ooc_set(h2, OOC_PARAM_DEVICE_MEM, 96 << 10);
            ooc_set(h2, OOC_PARAM_B_CHUNKS, resume_chunks);
            ooc_file_t *a, *b, *c;
            ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM}, auto_spec = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, RM};
            if (ooc_file_open(h2, tu_path("ra"), &auto_spec, &a) || ooc_file_open(h2, tu_path("rb"), &auto_spec, &b) ||
                ooc_file_create(h2, tu_path(name), &cs, 0, &c))
                _exit(3);
            char jp[300];
            snprintf(jp, sizeof jp, "%s.ooc-journal", tu_path(name));
            kill_journal = custom_journal ? custom_journal : jp;
            ooc_files_opts_t o = {.journal = custom_journal, .resume = 0, .progress = kill_after,
                                  .progress_user = &kill_at};
            ooc_gemm_files(h2, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, &o);
            _exit(4); /* not reached: killed */
        }
        int status = 0;
        waitpid(pid, &status, 0);
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? -1 : 100 + WEXITSTATUS(status);
    }
    ooc_file_t *a = open_file("ra", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *b = open_file("rb", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    ooc_file_t *c = NULL;
    ooc_status_t st = ooc_file_create(H, tu_path(name), &cs, resume ? OOC_FILE_RESUME : 0, &c);
    if (st == OOC_SUCCESS) {
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 96 << 10);
        ooc_set(H, OOC_PARAM_B_CHUNKS, resume_chunks);
        ooc_files_opts_t o = {.journal = custom_journal, .resume = resume, .progress = note_first,
                              .progress_user = NULL};
        first_done = 0;
        st = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, &o);
        snprintf(last_msg, sizeof last_msg, "%s", ooc_last_error(H));
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 0);
        ooc_set(H, OOC_PARAM_B_CHUNKS, 0);
        if (st == OOC_SUCCESS) st = ooc_file_commit(H, c);
        else fprintf(stderr, "\n    %s\n", ooc_last_error(H));
    }
    ooc_file_close(c, 0);
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    return st;
}

static void test_resume_after_kill(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    CU_ASSERT_EQUAL_FATAL(resume_run("whole.npy", 0, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(first_done, 1);

    /* killed after 5 blocks: no target, a temporary file and a journal */
    int killed = resume_run("cut.npy", 5, 0);
    if (killed != -1) fprintf(stderr, "\n    child: %d\n", killed);
    CU_ASSERT_EQUAL_FATAL(killed, -1);
    CU_ASSERT_FALSE(exists(tu_path("cut.npy")));
    CU_ASSERT_TRUE(exists(tu_path("cut.npy.ooc-tmp")));
    CU_ASSERT_TRUE(exists(tu_path("cut.npy.ooc-journal")));
    /* poison what the journal does not vouch for (the last rows): the resume must rewrite it */
    FILE *t = fopen(tu_path("cut.npy.ooc-tmp"), "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(fseek(t, -8 * RN * 3, SEEK_END), 0);
    for (int i = 0; i < 8 * RN * 3; i++) fputc(0x7f, t);
    fclose(t);
    CU_ASSERT_FALSE(tu_same_file(tu_path("whole.npy"), tu_path("cut.npy.ooc-tmp")));
    int64_t recorded = journal_done(tu_path("cut.npy.ooc-journal"));
    CU_ASSERT(recorded >= 3);
    CU_ASSERT_EQUAL(resume_run("cut.npy", 0, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(first_done, recorded + 1); /* resumed after the recorded blocks, not from scratch */
    CU_ASSERT_TRUE(exists(tu_path("cut.npy")));
    CU_ASSERT_TRUE(exists(tu_path("cut.npy.ooc-journal"))); /* marked complete: a resume finds the job done */
    CU_ASSERT_TRUE(tu_same_file(tu_path("whole.npy"), tu_path("cut.npy")));

    /* killed again, then an input changes: the journal refuses to resume */
    CU_ASSERT_EQUAL_FATAL(resume_run("cut2.npy", 3, 0), -1);
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    CU_ASSERT_EQUAL(resume_run("cut2.npy", 0, 1), OOC_ERR_JOURNAL);
    CU_ASSERT(strstr(last_msg, "another job") != NULL);
    CU_ASSERT_FALSE(exists(tu_path("cut2.npy")));
    /* without --resume it starts over and succeeds */
    CU_ASSERT_EQUAL(resume_run("cut2.npy", 0, 0), OOC_SUCCESS);
}

/* A journal at a path of the caller's names the temporary file it was
 * written for: a crash between a fresh ooc_file_create (which cannot remove
 * that journal) and the multiply (which does) leaves it beside a new,
 * empty temporary file. A resume then starts over instead of skipping the
 * blocks the journal recorded: before, the file was emptied in place (the
 * same inode) and the resume kept blocks that were no longer there. */
static void test_custom_journal_fresh_create(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    CU_ASSERT_EQUAL_FATAL(resume_run("whole.npy", 0, 0), OOC_SUCCESS);
    custom_journal = tu_path("cw.journal");
    unlink(custom_journal);
    CU_ASSERT_EQUAL_FATAL(resume_run("cw.npy", 5, 0), -1); /* killed: its journal and temporary file stay */
    CU_ASSERT(journal_done(custom_journal) >= 3);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    ooc_file_t *c = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("cw.npy"), &cs, 0, &c), OOC_SUCCESS); /* afresh */
    ooc_file_close(c, 0);                                                                 /* then a crash */
    CU_ASSERT_TRUE(exists(tu_path("cw.npy.ooc-tmp")));
    CU_ASSERT(journal_done(custom_journal) >= 3);
    CU_ASSERT_EQUAL(resume_run("cw.npy", 0, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(first_done, 1); /* from the first block */
    CU_ASSERT_TRUE(tu_same_file(tu_path("whole.npy"), tu_path("cw.npy")));
    custom_journal = NULL;
}

/* op(B) in 8 chunks, so block 0 is multiplied chunk by chunk (a different
 * summation order): a resumed run must still compute every block as the
 * uninterrupted run did. Before, the first block of every run was split,
 * and the block after the resume point differed in its last bits. */
static void test_resume_chunked(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    resume_chunks = 8;
    CU_ASSERT_EQUAL_FATAL(resume_run("whole8.npy", 0, 0), OOC_SUCCESS);
    for (int64_t at = 3; at <= 9; at += 6) {
        char name[32];
        snprintf(name, sizeof name, "cut8_%lld.npy", (long long)at);
        CU_ASSERT_EQUAL_FATAL(resume_run(name, at, 0), -1);
        int64_t recorded = journal_done(tu_path("cut8_3.npy.ooc-journal"));
        CU_ASSERT(recorded >= 3);
        CU_ASSERT_EQUAL(resume_run(name, 0, 1), OOC_SUCCESS);
        CU_ASSERT(first_done > 1); /* resumed part-way, not from scratch */
        CU_ASSERT_TRUE(tu_same_file(tu_path("whole8.npy"), tu_path(name)));
    }
    /* the finished job is recognised as such, and no longer once C changes */
    ooc_file_t *a = open_file("ra", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *b = open_file("rb", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    double one = 1, zero = 0, two = 2;
    int fin = -1;
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, tu_path("cut8_3.npy"),
                                            &cs, NULL, &fin), OOC_SUCCESS);
    CU_ASSERT_EQUAL(fin, 1);
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &two, a, b, &zero, NULL, tu_path("cut8_3.npy"),
                                            &cs, NULL, &fin), OOC_SUCCESS);
    CU_ASSERT_EQUAL(fin, 0); /* another alpha: another job */
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, tu_path("nothing.npy"),
                                            &cs, NULL, &fin), OOC_SUCCESS);
    CU_ASSERT_EQUAL(fin, 0); /* no journal */
    /* a failure writes no output: *finished is left as it was */
    FILE *junk = fopen(tu_path("junk.journal"), "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(junk);
    fputs("not a journal\n", junk);
    fclose(junk);
    ooc_files_opts_t jo = {.journal = tu_path("junk.journal")};
    fin = 7;
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, tu_path("cut8_3.npy"),
                                            &cs, &jo, &fin), OOC_ERR_JOURNAL);
    CU_ASSERT_EQUAL(fin, 7);
    FILE *f = fopen(tu_path("cut8_3.npy"), "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 200, SEEK_SET);
    fputc(0, f);
    fclose(f);
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, tu_path("cut8_3.npy"),
                                            &cs, NULL, &fin), OOC_SUCCESS);
    CU_ASSERT_EQUAL(fin, 0); /* written since: not the output it finished */
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    resume_chunks = 0;
}

/* ooc_cancel() once `*user` blocks are done and 3 recorded (a stop signal's path). */
static void cancel_after(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)total, (void)rd, (void)wr;
    if (done < *(int64_t *)user) return;
    for (int i = 0; i < 1000 && journal_done(tu_path("by.npy.ooc-journal")) < 3; i++) usleep(10000);
    ooc_cancel(H);
}

/* One run of a x b into by.npy by H with backend `kind`: resumed, or
 * cancelled after `stop_at` blocks (> 0). */
static ooc_stats_t by_stats; /* by_run's, when it succeeded */

static ooc_status_t by_run(int kind, int resume, int64_t stop_at, int allow_mixed)
{
    double one = 1, zero = 0;
    ooc_file_t *a = open_file("ra", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *b = open_file("rb", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    ooc_file_t *c = NULL;
    ooc_set(H, OOC_PARAM_BACKEND, kind);
    ooc_status_t st = ooc_file_create(H, tu_path("by.npy"), &cs, resume ? OOC_FILE_RESUME : 0, &c);
    if (st == OOC_SUCCESS) {
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 96 << 10);
        ooc_files_opts_t o = {.resume = resume, .progress = stop_at > 0 ? cancel_after : NULL,
                              .progress_user = &stop_at, .allow_mixed = allow_mixed};
        st = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, &o);
        snprintf(last_msg, sizeof last_msg, "%s", ooc_last_error(H));
        if (st == OOC_SUCCESS) st = ooc_get_stats(H, &by_stats);
        if (st == OOC_SUCCESS && allow_mixed) { /* C mixes two computers' bits: correct all the same */
            ooc_verify_result_t vr;
            st = ooc_verify_files(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, 0, 0, &vr);
            if (st == OOC_SUCCESS && !vr.passed) st = OOC_ERR_INTERNAL;
        }
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 0);
        if (st == OOC_SUCCESS) st = ooc_file_commit(H, c);
    }
    ooc_file_close(c, 0);
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    ooc_set(H, OOC_PARAM_BACKEND, OOC_TEST_BACKEND);
    return st;
}

/* The journal records what computed its blocks (ooc_compute_id()); a
 * resume that would compute the rest by another backend is refused, files
 * kept (their last bits differ: C would be no run's); by the same one it
 * finishes byte-identical to an uninterrupted run. On a GPU the other is
 * our own kernels (custom) against cuBLAS; the host build records OpenBLAS
 * and its kernels (test_cli_files.sh resumes with others). */
static void test_resume_computed_by(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    CU_ASSERT_EQUAL_FATAL(resume_run("whole.npy", 0, 0), OOC_SUCCESS);
    char id[OOC_COMPUTE_ID_MAX], want[OOC_COMPUTE_ID_MAX + 8];
    CU_ASSERT_EQUAL(ooc_compute_id(H, id, 8), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(ooc_compute_id(H, NULL, sizeof id), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_compute_id(NULL, id, sizeof id), OOC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL_FATAL(ooc_compute_id(H, id, sizeof id), OOC_SUCCESS);
    CU_ASSERT(strncmp(id, OOC_TEST_BACKEND == OOC_BACKEND_HOST ? "host/openblas-" : "cublas/", 7) == 0);
    unlink(tu_path("by.npy"));
    CU_ASSERT_EQUAL_FATAL(by_run(OOC_TEST_BACKEND, 0, 4, 0), OOC_ERR_CANCELLED);
    CU_ASSERT_FALSE(exists(tu_path("by.npy")));
    CU_ASSERT(journal_done(tu_path("by.npy.ooc-journal")) >= 3);
    snprintf(want, sizeof want, " by=%s\n", id);
    FILE *f = fopen(tu_path("by.npy.ooc-journal"), "rb");
    char text[4096] = "";
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    if (OOC_TEST_BACKEND == OOC_BACKEND_CUBLAS) {
        char other[OOC_COMPUTE_ID_MAX];
        ooc_set(H, OOC_PARAM_BACKEND, OOC_BACKEND_CUSTOM);
        CU_ASSERT_EQUAL(ooc_compute_id(H, other, sizeof other), OOC_SUCCESS);
        CU_ASSERT(strncmp(other, "custom/", 7) == 0);
        ooc_set(H, OOC_PARAM_BACKEND, OOC_TEST_BACKEND);
        CU_ASSERT_EQUAL(by_run(OOC_BACKEND_CUSTOM, 1, 0, 0), OOC_ERR_JOURNAL);
        CU_ASSERT(strstr(last_msg, "computed by cublas/") != NULL && strstr(last_msg, "by custom/") != NULL);
        CU_ASSERT_FALSE(exists(tu_path("by.npy")));
        CU_ASSERT_TRUE(exists(tu_path("by.npy.ooc-tmp")));
        /* allowed to mix: the blocks kept are counted and named, and C
         * checks against OpenBLAS */
        int64_t kept = journal_done(tu_path("by.npy.ooc-journal"));
        CU_ASSERT_EQUAL(by_run(OOC_BACKEND_CUSTOM, 1, 0, 1), OOC_SUCCESS);
        CU_ASSERT(by_stats.blocks_mixed == kept && by_stats.blocks_resumed == kept);
        CU_ASSERT_STRING_EQUAL(by_stats.mixed_by, id);
        CU_ASSERT_TRUE(exists(tu_path("by.npy")));
        /* afresh, then as it started: byte-identical to an uninterrupted run */
        unlink(tu_path("by.npy"));
        CU_ASSERT_EQUAL(by_run(OOC_TEST_BACKEND, 0, 4, 0), OOC_ERR_CANCELLED);
    }
    CU_ASSERT_EQUAL(by_run(OOC_TEST_BACKEND, 1, 0, 0), OOC_SUCCESS);
    CU_ASSERT(by_stats.blocks_mixed == 0 && by_stats.mixed_by[0] == '\0');
    CU_ASSERT_TRUE(tu_same_file(tu_path("whole.npy"), tu_path("by.npy")));
}

static int same_content(const char *p, const char *text)
{
    FILE *f = fopen(p, "rb");
    char buf[256] = "";
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

/* The output is this job's alone; nothing is ever written through a link,
 * onto a device, or into an input. */
static void test_output_safety(void)
{
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, 30, 10, OOC_R64, RM};
    ooc_file_t *one = NULL, *two = NULL;
    /* a second job on the same output: busy, and the first job's file intact */
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("busy.npy"), &cs, 0, &one), OOC_SUCCESS);
    ooc_handle_t *h2;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h2), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_create(h2, tu_path("busy.npy"), &cs, 0, &two), OOC_ERR_BUSY);
    CU_ASSERT_STRING_EQUAL(ooc_last_error_path(h2), tu_path("busy.npy.ooc-tmp"));
    CU_ASSERT_EQUAL(ooc_file_create(h2, tu_path("busy.npy"), &cs, OOC_FILE_RESUME, &two), OOC_ERR_BUSY);
    CU_ASSERT_TRUE(exists(tu_path("busy.npy.ooc-tmp")));
    ooc_file_close(one, 1);
    CU_ASSERT_FALSE(exists(tu_path("busy.npy.ooc-tmp")));
    CU_ASSERT_EQUAL(ooc_file_create(h2, tu_path("busy.npy"), &cs, 0, &two), OOC_SUCCESS); /* free again */
    ooc_file_close(two, 1);

    /* a symbolic link planted at the temporary file's name: never followed */
    FILE *v = fopen(tu_path("victim"), "w");
    fputs("precious", v);
    fclose(v);
    unlink(tu_path("link.npy.ooc-tmp"));
    CU_ASSERT_EQUAL_FATAL(symlink(tu_path("victim"), tu_path("link.npy.ooc-tmp")), 0);
    CU_ASSERT_EQUAL(ooc_file_create(H, tu_path("link.npy"), &cs, 0, &one), OOC_ERR_IO);
    CU_ASSERT(strstr(ooc_last_error(H), "symbolic link") != NULL);
    CU_ASSERT_EQUAL(ooc_file_create(H, tu_path("link.npy"), &cs, OOC_FILE_RESUME, &one), OOC_ERR_IO);
    CU_ASSERT_TRUE(same_content(tu_path("victim"), "precious"));
    /* targets that are not regular files: refused before anything is made */
    unlink(tu_path("fifo.npy"));
    CU_ASSERT_EQUAL_FATAL(mkfifo(tu_path("fifo.npy"), 0600), 0);
    mkdir(tu_path("dir.npy"), 0700);
    CU_ASSERT_EQUAL(ooc_file_create(H, tu_path("fifo.npy"), &cs, 0, &one), OOC_ERR_IO);
    CU_ASSERT(strstr(ooc_last_error(H), "FIFO") != NULL);
    CU_ASSERT_EQUAL(ooc_file_create(H, tu_path("dir.npy"), &cs, 0, &one), OOC_ERR_IO);
    CU_ASSERT(strstr(ooc_last_error(H), "directory") != NULL);
    CU_ASSERT_EQUAL(ooc_file_create(H, tu_path("victim.npy"), &cs, 0, &one), OOC_SUCCESS);
    ooc_file_close(one, 1);
    unlink(tu_path("victim.npy"));
    CU_ASSERT_EQUAL_FATAL(symlink(tu_path("victim"), tu_path("victim.npy")), 0);
    CU_ASSERT_EQUAL(ooc_file_create(H, tu_path("victim.npy"), &cs, 0, &one), OOC_ERR_IO); /* a link as target */
    CU_ASSERT_FALSE(exists(tu_path("fifo.npy.ooc-tmp")) || exists(tu_path("dir.npy.ooc-tmp")) ||
                    exists(tu_path("victim.npy.ooc-tmp")));
    struct stat sb;
    CU_ASSERT(stat(tu_path("fifo.npy"), &sb) == 0 && S_ISFIFO(sb.st_mode));
    CU_ASSERT(lstat(tu_path("victim.npy"), &sb) == 0 && S_ISLNK(sb.st_mode));
    CU_ASSERT_TRUE(same_content(tu_path("victim"), "precious"));

    /* a FIFO as an input: refused at once, never waited on */
    alarm(20);
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, RM};
    CU_ASSERT_EQUAL(ooc_file_open(H, tu_path("fifo.npy"), &any, &one), OOC_ERR_IO);
    CU_ASSERT(strstr(ooc_last_error(H), "FIFO") != NULL);
    ooc_file_spec_t raw = {OOC_FORMAT_RAW, 3, 3, OOC_R64, RM};
    CU_ASSERT_EQUAL(ooc_file_open(H, tu_path("fifo.npy"), &raw, &one), OOC_ERR_IO);
    alarm(0);

    /* the journal path naming an input, the output, or a file that is no
     * journal: refused, and nothing removed */
    free(make_file("ja", OOC_FORMAT_NPY, OOC_R64, RM, 30, 20));
    free(make_file("jb", OOC_FORMAT_NPY, OOC_R64, RM, 20, 10));
    ooc_file_t *a = open_file("ja", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *b = open_file("jb", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("jc.npy"), &cs, 0, &one), OOC_SUCCESS);
    double al = 1, be = 0;
    const char *bad[] = {tu_path("jb"), tu_path("ja"), tu_path("victim"), tu_path("jc.npy.ooc-tmp")};
    for (int i = 0; i < 4; i++) {
        for (int resume = 0; resume < 2; resume++) {
            ooc_files_opts_t o = {.journal = bad[i], .resume = resume, .progress = NULL, .progress_user = NULL};
            CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &al, a, b, &be, NULL, one, &o), OOC_ERR_JOURNAL);
        }
        CU_ASSERT_TRUE(exists(bad[i]));
    }
    CU_ASSERT_TRUE(same_content(tu_path("victim"), "precious"));
    /* the output's path (not there before the commit: the journal would be
     * made at it, then C renamed over it) and the temporary file's, also
     * spelled otherwise: refused, nothing made */
    const char *named[] = {tu_path("jc.npy"), tu_path("./jc.npy"), tu_path("./jc.npy.ooc-tmp")};
    for (int i = 0; i < 3; i++)
        for (int resume = 0; resume < 2; resume++) {
            ooc_files_opts_t o = {.journal = named[i], .resume = resume};
            CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &al, a, b, &be, NULL, one, &o), OOC_ERR_JOURNAL);
            CU_ASSERT(strstr(ooc_last_error(H), i < 2 ? "is the output " : "is the output's temporary file") != NULL);
        }
    CU_ASSERT_FALSE(exists(tu_path("jc.npy")));
    /* the output's path naming an input: committing would replace it */
    for (int i = 0; i < 2; i++) {
        ooc_file_t *over = NULL;
        const char *name = i ? "jb" : "ja";
        ooc_file_spec_t os = cs;
        os.format = OOC_FORMAT_RAW;
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path(name), &os, 0, &over), OOC_SUCCESS);
        ooc_files_opts_t oo = {.journal = tu_path("jo.journal")};
        CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &al, a, b, &be, NULL, over, &oo), OOC_ERR_OVERLAP);
        CU_ASSERT(strstr(ooc_last_error(H), i ? "the input B" : "the input A") != NULL);
        ooc_file_close(over, 1);
    }
    /* an input that is the file C is written into (its temporary file) */
    {
        ooc_file_t *w = NULL, *in = NULL;
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("jw.npy"), &cs, 0, &w), OOC_SUCCESS);
        ooc_file_spec_t any2 = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, RM};
        CU_ASSERT_EQUAL_FATAL(ooc_file_open(H, tu_path("jw.npy.ooc-tmp"), &any2, &in), OOC_SUCCESS);
        double b1 = 1;
        ooc_files_opts_t oo = {.journal = tu_path("jw.journal")};
        CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &al, a, b, &b1, in, w, &oo), OOC_ERR_OVERLAP);
        CU_ASSERT(strstr(ooc_last_error(H), "the input C0") != NULL);
        ooc_file_close(in, 0);
        ooc_file_close(w, 1);
    }
    /* and the inputs are whole: the multiply still runs with a journal of its own */
    ooc_files_opts_t o = {.journal = tu_path("jc.journal"), .resume = 0, .progress = NULL, .progress_user = NULL};
    CU_ASSERT_EQUAL(ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &al, a, b, &be, NULL, one, &o), OOC_SUCCESS);
    ooc_file_close(one, 1);
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    ooc_destroy(h2);
}

/* ---- ooc_journal_forget ---- */

/* A file multiply in a thread of its own, held in its progress callback
 * after its first block until the test lets it go: its journal is open and
 * locked meanwhile. (The callback must return quickly; holding it here is
 * how the test makes "a running job" last as long as it needs.) */
static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static int hold_state; /* 0 running, 1 held in the callback, 2 let go */

typedef struct {
    ooc_handle_t *h;
    ooc_file_t *a, *b, *c;
    const char *journal;
    ooc_status_t st;
} held_job_t;

/* wait (30 s at most) until hold_state reaches `want`; hold_mu held */
static void hold_wait(int want)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    while (hold_state < want)
        if (pthread_cond_timedwait(&hold_cv, &hold_mu, &until) != 0) break;
}

static void hold_first(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)user, (void)done, (void)total, (void)rd, (void)wr;
    pthread_mutex_lock(&hold_mu);
    if (hold_state == 0) {
        hold_state = 1;
        pthread_cond_broadcast(&hold_cv);
        hold_wait(2);
    }
    pthread_mutex_unlock(&hold_mu);
}

static void *held_job(void *arg)
{
    held_job_t *j = arg;
    double al = 0.75, be = 0;
    ooc_files_opts_t o = {.journal = j->journal, .progress = hold_first};
    j->st = ooc_gemm_files(j->h, OOC_OP_N, OOC_OP_N, &al, j->a, j->b, &be, NULL, j->c, &o);
    pthread_mutex_lock(&hold_mu); /* a job that never called back lets the test go on */
    if (hold_state == 0) hold_state = 1;
    pthread_cond_broadcast(&hold_cv);
    pthread_mutex_unlock(&hold_mu);
    return NULL;
}

static void spit_text(const char *p, const char *text)
{
    FILE *f = fopen(p, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* ooc_journal_forget (include/ooc_gemm_files.h): nothing there is fine; a
 * journal a running job holds is busy and kept; a file that is not a
 * journal, and a symbolic link (to a journal or not), are refused and kept
 * with their targets; an empty file (a journal whose creation was cut
 * short) and a finished job's journal are removed. */
static void test_journal_forget(void)
{
    CU_ASSERT_EQUAL(ooc_journal_forget(NULL, tu_path("fg.journal")), OOC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL(ooc_journal_forget(H, NULL), OOC_ERR_NULL_ARG);
    /* (tu_path's buffers rotate: the paths kept are copied) */
    char none[256], text[256], empty[256], jp[256], ljournal[256], ltext[256];
    snprintf(none, sizeof none, "%s", tu_path("fg-none.journal"));
    snprintf(text, sizeof text, "%s", tu_path("fg-notes.txt"));
    snprintf(empty, sizeof empty, "%s", tu_path("fg-empty.journal"));
    snprintf(jp, sizeof jp, "%s", tu_path("fg.journal"));
    snprintf(ljournal, sizeof ljournal, "%s", tu_path("fg-link.journal"));
    snprintf(ltext, sizeof ltext, "%s", tu_path("fg-link2.journal"));
    /* nothing there */
    unlink(none);
    CU_ASSERT_EQUAL(ooc_journal_forget(H, none), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(H), "");
    /* not a journal: refused, kept as it was */
    spit_text(text, "ooc notes, not a journal\n");
    CU_ASSERT_EQUAL(ooc_journal_forget(H, text), OOC_ERR_JOURNAL);
    CU_ASSERT_PTR_NOT_NULL(ooc_last_error_path(H));
    if (ooc_last_error_path(H)) CU_ASSERT_STRING_EQUAL(ooc_last_error_path(H), text);
    CU_ASSERT_TRUE(same_content(text, "ooc notes, not a journal\n"));
    /* empty: a journal whose creation was cut short, removed */
    spit_text(empty, "");
    CU_ASSERT_EQUAL(ooc_journal_forget(H, empty), OOC_SUCCESS);
    CU_ASSERT_FALSE(exists(empty));

    /* a journal a running job holds: busy, kept */
    const int64_t m = 301, n = 45, k = 67;
    free(make_file("fga", OOC_FORMAT_NPY, OOC_R64, RM, m, k));
    free(make_file("fgb", OOC_FORMAT_NPY, OOC_R64, RM, k, n));
    held_job_t j = {NULL, NULL, NULL, NULL, jp, OOC_ERR_INTERNAL};
    unlink(jp);
    CU_ASSERT_EQUAL_FATAL(ooc_create(&j.h), OOC_SUCCESS);
    ooc_set(j.h, OOC_PARAM_BACKEND, OOC_TEST_BACKEND);
    ooc_set(j.h, OOC_PARAM_DEVICE_MEM, 96 << 10); /* several blocks */
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, RM}, cs = {OOC_FORMAT_NPY, m, n, OOC_R64, RM};
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(j.h, tu_path("fga"), &any, &j.a), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(j.h, tu_path("fgb"), &any, &j.b), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(j.h, tu_path("fg.npy"), &cs, 0, &j.c), OOC_SUCCESS);
    hold_state = 0;
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, held_job, &j), 0);
    pthread_mutex_lock(&hold_mu);
    hold_wait(1);
    int held = hold_state == 1;
    pthread_mutex_unlock(&hold_mu);
    CU_ASSERT_TRUE(held);
    struct stat before, after;
    CU_ASSERT_EQUAL(stat(jp, &before), 0);
    ooc_status_t st = ooc_journal_forget(H, jp);
    if (st != OOC_ERR_BUSY) fprintf(stderr, "\n    forget a held journal: %s: %s\n", ooc_status_string(st), ooc_last_error(H));
    CU_ASSERT_EQUAL(st, OOC_ERR_BUSY);
    CU_ASSERT(ooc_last_error_path(H) != NULL && strcmp(ooc_last_error_path(H), jp) == 0);
    CU_ASSERT(stat(jp, &after) == 0 && after.st_ino == before.st_ino);
    pthread_mutex_lock(&hold_mu);
    hold_state = 2;
    pthread_cond_broadcast(&hold_cv);
    pthread_mutex_unlock(&hold_mu);
    pthread_join(th, NULL);
    if (j.st != OOC_SUCCESS) fprintf(stderr, "\n    held job: %s: %s\n", ooc_status_string(j.st), ooc_last_error(j.h));
    CU_ASSERT_EQUAL(j.st, OOC_SUCCESS); /* the forget took nothing from it */
    CU_ASSERT(stat(jp, &after) == 0 && after.st_ino == before.st_ino && after.st_size > 0);
    ooc_file_close(j.c, 1);
    ooc_file_close(j.a, 0);
    ooc_file_close(j.b, 0);
    ooc_destroy(j.h);

    /* symbolic links: never followed, neither they nor their targets removed */
    unlink(ljournal);
    unlink(ltext);
    CU_ASSERT_EQUAL_FATAL(symlink(jp, ljournal), 0);
    CU_ASSERT_EQUAL_FATAL(symlink(text, ltext), 0);
    CU_ASSERT_EQUAL(ooc_journal_forget(H, ljournal), OOC_ERR_JOURNAL);
    CU_ASSERT(strstr(ooc_last_error(H), "symbolic link") != NULL);
    CU_ASSERT_EQUAL(ooc_journal_forget(H, ltext), OOC_ERR_JOURNAL);
    struct stat sb;
    CU_ASSERT(lstat(ljournal, &sb) == 0 && S_ISLNK(sb.st_mode));
    CU_ASSERT(lstat(ltext, &sb) == 0 && S_ISLNK(sb.st_mode));
    CU_ASSERT(stat(jp, &sb) == 0 && sb.st_ino == before.st_ino && sb.st_size == after.st_size);
    CU_ASSERT_TRUE(same_content(text, "ooc notes, not a journal\n"));
    /* the finished job's journal, no longer held: removed; then nothing there */
    CU_ASSERT_EQUAL(ooc_journal_forget(H, jp), OOC_SUCCESS);
    CU_ASSERT_FALSE(exists(jp));
    CU_ASSERT_EQUAL(ooc_journal_forget(H, jp), OOC_SUCCESS);
    unlink(ljournal);
    unlink(ltext);
}

/* alpha == 0 (or k == 0) with beta == 1: C is C0 to the bit, as BLAS leaves C
 * untouched. Complex C0 holding Inf, NaN and -0 caught C = (1, 0) * C0
 * computed in full: (Inf, 1) became (Inf, NaN), (-0, -1) became (+0, -1). */
static void test_beta_one_keeps_c0(void)
{
    for (int ti = 0; ti < 4; ti++) {
        ooc_dtype_t t = (ooc_dtype_t)(OOC_R32 + ti);
        int single = t == OOC_R32 || t == OOC_C32;
        size_t e = tu_elem(t);
        const int64_t m = 3, n = 4;
        for (int kz = 0; kz < 2; kz++) {
            int64_t k = kz ? 0 : 5;
            size_t cnt = (size_t)(m * n), nr = cnt * e / (single ? 4 : 8);
            /* C0's reals (every component): Inf, -Inf, NaN, -0 and numbers */
            double vals[] = {INFINITY, 1.0, -0.0, -1.0, NAN, 2.0, -INFINITY, -0.0, 0.5, -0.0};
            void *C0 = malloc(cnt * e), *C = malloc(cnt * e);
            CU_ASSERT_PTR_NOT_NULL_FATAL(C0);
            CU_ASSERT_PTR_NOT_NULL_FATAL(C);
            for (size_t i = 0; i < nr; i++) {
                double v = vals[i % (sizeof vals / sizeof vals[0])];
                if (single) ((float *)C0)[i] = (float)v;
                else ((double *)C0)[i] = v;
            }
            ooc_file_spec_t cs = {OOC_FORMAT_NPY, m, n, t, OOC_ROW_MAJOR};
            ooc_file_t *w = NULL;
            CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("b1c0.npy"), &cs, 0, &w), OOC_SUCCESS);
            CU_ASSERT_EQUAL_FATAL(ooc_file_write(H, w, 0, C0, cnt), OOC_SUCCESS);
            CU_ASSERT_EQUAL_FATAL(ooc_file_commit(H, w), OOC_SUCCESS);
            ooc_file_close(w, 0);
            free(make_file("b1a.npy", OOC_FORMAT_NPY, t, OOC_ROW_MAJOR, m, k));
            free(make_file("b1b.npy", OOC_FORMAT_NPY, t, OOC_ROW_MAJOR, k, n));
            ooc_file_t *fa = open_file("b1a.npy", OOC_FORMAT_NPY, t, OOC_ROW_MAJOR, m, k);
            ooc_file_t *fb = open_file("b1b.npy", OOC_FORMAT_NPY, t, OOC_ROW_MAJOR, k, n);
            ooc_file_t *fc0 = open_file("b1c0.npy", OOC_FORMAT_NPY, t, OOC_ROW_MAJOR, m, n);
            ooc_file_t *fc = NULL;
            unlink(tu_path("b1c.npy"));
            unlink(tu_path("b1c.npy.ooc-journal"));
            CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("b1c.npy"), &cs, 0, &fc), OOC_SUCCESS);
            double al[2] = {kz ? 0.5 : 0.0, 0.0}, be[2] = {1.0, 0.0};
            float alf[2] = {(float)al[0], 0.0f}, bef[2] = {1.0f, 0.0f};
            ooc_status_t st = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, single ? (void *)alf : (void *)al, fa, fb,
                                             single ? (void *)bef : (void *)be, fc0, fc, NULL);
            CU_ASSERT_EQUAL(st, OOC_SUCCESS);
            CU_ASSERT_EQUAL(ooc_file_read(H, fc, 0, C, cnt), OOC_SUCCESS);
            if (memcmp(C, C0, cnt * e) != 0)
                fprintf(stderr, "\n    dtype %d, k %lld: C is not C0 bit for bit\n", (int)t, (long long)k);
            CU_ASSERT(memcmp(C, C0, cnt * e) == 0);
            ooc_file_close(fc, 1);
            ooc_file_close(fa, 0);
            ooc_file_close(fb, 0);
            ooc_file_close(fc0, 0);
            free(C0);
            free(C);
        }
    }
}

int main(void)
{
    if (ooc_create(&H) != OOC_SUCCESS) return 1;
    int ok = tu_backend_runs(H, OOC_TEST_BACKEND);
    if (ok <= 0) {
        ooc_destroy(H);
        return ok == 0 ? 77 : 1;
    }
    if (tu_dir_make("files") != 0) return 1;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("files", NULL, NULL);
    CU_add_test(s, "element types, orders, transposes, beta", test_orders_types);
    CU_add_test(s, "conjugate transposes", test_conjugate);
    CU_add_test(s, "alpha 0 or k 0, beta 1: C is C0 bit for bit", test_beta_one_keeps_c0);
    CU_add_test(s, "operands larger than the budgets", test_small_budgets);
    CU_add_test(s, "wide: op(A) resident", test_wide_files);
    CU_add_test(s, "errors leave no output", test_errors);
    /* fork() after CUDA is initialised is not allowed: the host build tests the kill */
    CU_add_test(s, "the output is this job's alone", test_output_safety);
    CU_add_test(s, "a resume computes as the run it resumes", test_resume_computed_by);
    CU_add_test(s, "ooc_journal_forget: only a journal nobody holds", test_journal_forget);
    if (OOC_TEST_BACKEND == OOC_BACKEND_HOST) {
        CU_add_test(s, "resume after SIGKILL", test_resume_after_kill);
        CU_add_test(s, "resume after SIGKILL, op(B) in chunks", test_resume_chunked);
        CU_add_test(s, "a custom journal is not the fresh output's", test_custom_journal_fresh_create);
    }
    int rc = tu_run();
    ooc_destroy(H);
    if (tu_dir_remove() != 0) rc = 1;
    return rc;
}
