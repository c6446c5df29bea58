/* SPDX-License-Identifier: MIT */
/*
 * test_ranges.c: one file multiply split by rows between processes (by C's
 * columns where the plan, as one process makes it, keeps op(A) resident),
 * as the ranks of an MPI job split it, through the host backend: the parent
 * creates the output shared (OOC_FILE_SHARED) and plans it
 * (ooc_gemm_files_plan); forked "ranks" join it (ooc_file_join) and each
 * computes its row range with its own journal; the parent commits. C must be
 * byte-identical to one process's ooc_gemm_files (odd shapes, tail blocks,
 * several panels, R64 and C64, C and Fortran order, beta with C0), a rank
 * must write its rows and nothing else, a range off the block boundaries is
 * refused, a rank killed part-way resumes with the same split or another
 * number of ranks to the same bytes, a range of C's columns resumed without
 * opts->plan takes its journal's op(A)-resident plan (its end past C's rows
 * is no error), a grid of rectangles (block rows x panels of op(B)) gives
 * the same bytes, writes each rank's rectangle alone and resumes from a
 * split by rows and back, ooc_verify_files_rows sees an error
 * inside its rows and none outside, and a split job (a scaling one too)
 * recorded finished by its creator before or after its commit
 * (ooc_gemm_files_mark_finished) is finished for ooc_gemm_files_finished
 * once committed, as one process's would be, until its output changes, and
 * the creator's plan of a resume that finds no block recorded in the kept
 * temporary file starts it over as a new file, unless a process joined it;
 * a rank reading its own copies of the inputs journals the creator's
 * identity of the job (opts->job), which the creator's resume keeps.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "testutil.h"

static ooc_handle_t *H;
static uint64_t seed = 1234;
static const ooc_layout_t RM = OOC_ROW_MAJOR, CM = OOC_COL_MAJOR;

/* A job: its operands are the files "a", "b" and "c0" of the suite's directory. */
typedef struct {
    ooc_dtype_t t;
    ooc_op_t ta, tb;
    ooc_layout_t la, lb, lc;
    int64_t m, n, k;
    int64_t device_mem, block_rows;
} job_t;

static job_t J;
static double ALPHA[2] = {0.75, -0.25}, BETA[2] = {-0.5, 0.25};

static void make_file(const char *name, ooc_layout_t layout, int64_t rows, int64_t cols)
{
    size_t count = (size_t)(rows * cols);
    void *data = malloc(count * tu_elem(J.t));
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    tu_fill(J.t, data, count, &seed);
    ooc_file_spec_t spec = {OOC_FORMAT_NPY, rows, cols, J.t, layout};
    ooc_file_t *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path(name), &spec, 0, &f), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_write(H, f, 0, data, count), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_commit(H, f), OOC_SUCCESS);
    ooc_file_close(f, 0);
    free(data);
}

static void make_job(const job_t *j)
{
    J = *j;
    make_file("a", J.la, J.ta == OOC_OP_N ? J.m : J.k, J.ta == OOC_OP_N ? J.k : J.m);
    make_file("b", J.lb, J.tb == OOC_OP_N ? J.k : J.n, J.tb == OOC_OP_N ? J.n : J.k);
    make_file("c0", J.lc, J.m, J.n);
}

typedef struct {
    ooc_file_t *a, *b, *c0;
} inputs_t;

static int open_inputs(ooc_handle_t *h, inputs_t *in)
{
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, J.t, RM};
    return ooc_file_open(h, tu_path("a"), &any, &in->a) || ooc_file_open(h, tu_path("b"), &any, &in->b) ||
           ooc_file_open(h, tu_path("c0"), &any, &in->c0);
}

static void close_inputs(inputs_t *in)
{
    ooc_file_close(in->a, 0);
    ooc_file_close(in->b, 0);
    ooc_file_close(in->c0, 0);
}

static ooc_file_spec_t out_spec(void)
{
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, J.m, J.n, J.t, J.lc};
    return cs;
}

static void set_budgets(ooc_handle_t *h)
{
    ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_HOST);
    ooc_set(h, OOC_PARAM_DEVICE_MEM, J.device_mem);
    ooc_set(h, OOC_PARAM_BLOCK_ROWS, J.block_rows);
    ooc_set(h, OOC_PARAM_RING_DEPTH, 3); /* a ring of 3: the budgets are sized for panels of op(B) with it */
}

static ooc_status_t gemm(ooc_handle_t *h, const inputs_t *in, ooc_file_t *c, const ooc_files_opts_t *o)
{
    return ooc_gemm_files(h, J.ta, J.tb, ALPHA, in->a, in->b, BETA, in->c0, c, o);
}

/* First row of block b (C's rows when b is the number of blocks). */
static int64_t row_of(const ooc_files_plan_t *p, int64_t b)
{
    int64_t r0 = p->rows, r1 = 0;
    if (b < p->blocks) CU_ASSERT_EQUAL(ooc_files_plan_rows(p, b, &r0, &r1), OOC_SUCCESS);
    return r0;
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
/* SIGKILL the rank once `kill_at` blocks are written and 2 are in its journal. */
static void kill_after(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)total, (void)rd, (void)wr;
    if (done < *(int64_t *)user) return;
    for (int i = 0; i < 1000 && journal_done(kill_journal) < 2; i++) usleep(10000);
    raise(SIGKILL);
}

/* One rank, forked: join the output, compute rows [r0, r1) and columns
 * [c0, c1) (0, 0: all) with journal jp (killed after kill_at blocks when >
 * 0), write its blocks_resumed to fd. */
static void rank_main(const char *out, unsigned join, const ooc_files_plan_t *plan, int64_t r0, int64_t r1, int64_t c0,
                      int64_t c1, const char *jp, int resume, const char *const *old, int64_t kill_at, int fd)
{
    ooc_handle_t *h;
    inputs_t in;
    ooc_file_t *c = NULL;
    if (ooc_create(&h) != OOC_SUCCESS) _exit(100);
    set_budgets(h);
    ooc_file_spec_t cs = out_spec();
    if (open_inputs(h, &in) || ooc_file_join(h, tu_path(out), &cs, join, &c)) _exit(101);
    kill_journal = jp;
    ooc_files_opts_t o = {.journal = jp, .resume = resume, .plan = plan, .row_begin = r0, .row_end = r1,
                          .journals = old, .progress = kill_at > 0 ? kill_after : NULL, .progress_user = &kill_at,
                          .col_begin = c0, .col_end = c1};
    ooc_status_t st = gemm(h, &in, c, &o);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    rank [%lld, %lld): %s\n", (long long)r0, (long long)r1, ooc_last_error(h));
    ooc_stats_t s;
    memset(&s, 0, sizeof s);
    ooc_get_stats(h, &s);
    if (write(fd, &s.blocks_resumed, sizeof s.blocks_resumed) != sizeof s.blocks_resumed) _exit(102);
    ooc_file_close(c, 1); /* a joined file: never removed */
    close_inputs(&in);
    ooc_destroy(h);
    _exit((int)st);
}

/* First column (row when the plan keeps op(A) resident) of panel q of
 * op(B)'s columns (C's columns when q is the number of panels). */
static int64_t col_of(const ooc_files_plan_t *p, int64_t q)
{
    int64_t c0 = p->cols, c1 = 0;
    if (q < (p->cols + p->panel_cols - 1) / p->panel_cols)
        CU_ASSERT_EQUAL(ooc_files_plan_cols(p, q, &c0, &c1), OOC_SUCCESS);
    return c0;
}

/* Ranks ranks[0 .. nrun) of nr at once, rank i on block rows [cut[i / nc],
 * cut[i / nc + 1]) and, with ccut, panels [ccut[i % nc], ccut[i % nc + 1])
 * (a grid of nr / nc x nc), with journal "<out>.j<nr>.<i>". status[i]: its
 * ooc_status_t, -1 when killed; resumed[i]: its blocks_resumed. */
static void run_ranks(const char *out, unsigned join, const ooc_files_plan_t *plan, int nr, const int64_t *cut,
                      const int *ranks, int nrun, int resume, const char *const *old, int kill_rank, int64_t kill_at,
                      int *status, int64_t *resumed, const int64_t *ccut, int nc)
{
    pid_t pid[8];
    int fds[8][2];
    fflush(NULL);
    for (int x = 0; x < nrun; x++) {
        int i = ranks[x];
        char jp[512];
        snprintf(jp, sizeof jp, "%s.j%d.%d", tu_path(out), nr, i);
        CU_ASSERT_EQUAL_FATAL(pipe(fds[x]), 0);
        pid[x] = fork();
        CU_ASSERT_FATAL(pid[x] >= 0);
        int r = i / nc, q = i % nc;
        if (pid[x] == 0)
            rank_main(out, join, plan, row_of(plan, cut[r]), row_of(plan, cut[r + 1]),
                      ccut ? col_of(plan, ccut[q]) : 0, ccut ? col_of(plan, ccut[q + 1]) : 0, jp, resume, old,
                      i == kill_rank ? kill_at : 0, fds[x][1]);
        close(fds[x][1]);
    }
    for (int x = 0; x < nrun; x++) {
        int w = 0, i = ranks[x];
        waitpid(pid[x], &w, 0);
        status[i] = WIFSIGNALED(w) && WTERMSIG(w) == SIGKILL ? -1 : WIFEXITED(w) ? WEXITSTATUS(w) : -2;
        resumed[i] = -1;
        if (read(fds[x][0], &resumed[i], sizeof resumed[i]) != sizeof resumed[i]) resumed[i] = -1;
        close(fds[x][0]);
    }
}

/* The reference: one process, the whole of C, with plan (NULL: the
 * planner's). Returns whether op(A) was kept resident. */
static int reference(const char *name, const ooc_files_plan_t *plan)
{
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    ooc_file_spec_t cs = out_spec();
    ooc_file_t *c = NULL;
    unlink(tu_path(name));
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path(name), &cs, 0, &c), OOC_SUCCESS);
    set_budgets(H);
    ooc_files_opts_t o = {.plan = plan};
    ooc_status_t st = gemm(H, &in, c, &o);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    reference: %s\n", ooc_last_error(H));
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_commit(H, c), OOC_SUCCESS);
    ooc_file_close(c, 0);
    close_inputs(&in);
    ooc_stats_t stats;
    CU_ASSERT_EQUAL(ooc_get_stats(H, &stats), OOC_SUCCESS);
    return stats.a_resident;
}

/* Create out shared (and resumed) and plan it as rank 0 does; *join: the
 * flags the ranks join it with. */
static ooc_file_t *create_and_plan(const char *out, unsigned flags, const char *jp, const char *const *old,
                                   ooc_files_plan_t *plan, unsigned *join)
{
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    ooc_file_spec_t cs = out_spec();
    ooc_file_t *c = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path(out), &cs, OOC_FILE_SHARED | flags, &c), OOC_SUCCESS);
    *join = ooc_file_resumed(c) ? OOC_FILE_RESUME : 0;
    set_budgets(H);
    ooc_files_opts_t o = {.journal = jp, .resume = (flags & OOC_FILE_RESUME) != 0, .journals = old};
    ooc_status_t st = ooc_gemm_files_plan(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &o, plan);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    plan: %s\n", ooc_last_error(H));
    CU_ASSERT_EQUAL_FATAL(st, OOC_SUCCESS);
    close_inputs(&in);
    return c;
}

static uint64_t data_offset(const char *path)
{
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, J.t, RM};
    ooc_file_t *f = NULL;
    CU_ASSERT_EQUAL_FATAL(tu_open_tmp(H, path, &any, &f), OOC_SUCCESS);
    uint64_t off = ooc_file_data_offset(f);
    ooc_file_close(f, 0);
    return off;
}

/* 1: the plan keeps op(A) resident, its blocks (and ranges) are C's columns */
static int BY_COLS;

/* Element (i, j) of C is in rows [r0, r1) and columns [c0, c1) of the
 * plan's problem (C^T's when BY_COLS). */
static int in_rect(int64_t i, int64_t j, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    int64_t r = BY_COLS ? j : i, c = BY_COLS ? i : j;
    return r >= r0 && r < r1 && c >= c0 && c < c1;
}

/* Elements of rows [r0, r1) and columns [c0, c1) (in_rect) of the output's
 * temporary file that are zero (as made) and that are not. */
static void count_zero_rect(const char *out, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t *zero,
                            int64_t *nonzero)
{
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, J.t, RM};
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.ooc-tmp", tu_path(out));
    ooc_file_t *f = NULL;
    CU_ASSERT_EQUAL_FATAL(tu_open_tmp(H, tmp, &any, &f), OOC_SUCCESS);
    size_t e = tu_elem(J.t), cnt = (size_t)(J.m * J.n);
    unsigned char *x = malloc(cnt * e);
    CU_ASSERT_EQUAL_FATAL(ooc_file_read(H, f, 0, x, cnt), OOC_SUCCESS);
    *zero = *nonzero = 0;
    for (int64_t i = 0; i < J.m; i++)
        for (int64_t j = 0; j < J.n; j++) {
            if (!in_rect(i, j, r0, r1, c0, c1)) continue;
            size_t at = (size_t)(J.lc == RM ? i * J.n + j : j * J.m + i) * e;
            int z = 1;
            for (size_t b = 0; b < e; b++) z &= x[at + b] == 0;
            if (z) ++*zero;
            else ++*nonzero;
        }
    free(x);
    ooc_file_close(f, 0);
}

/* count_zero_rect() of rows [r0, r1), all columns. */
static void count_zero(const char *out, int64_t r0, int64_t r1, int64_t *zero, int64_t *nonzero)
{
    count_zero_rect(out, r0, r1, 0, INT64_MAX, zero, nonzero);
}

/* Split job j three ways (by C's columns when the plan keeps op(A)
 * resident, which must be `cols`); C must equal one process's. */
static void split_case(const job_t *j, int cols)
{
    make_job(j);
    ooc_files_plan_t plan;
    unsigned join = 0;
    ooc_file_t *c = create_and_plan("split.npy", 0, NULL, NULL, &plan, &join);
    CU_ASSERT_EQUAL(plan.a_resident, cols);
    BY_COLS = plan.a_resident;
    CU_ASSERT_EQUAL(plan.rows, cols ? J.n : J.m);
    CU_ASSERT(plan.panels > 1);   /* op(B) in several panels */
    CU_ASSERT(plan.blocks >= 6);
    CU_ASSERT(plan.tail > 0);     /* shrinking last blocks */
    reference("ref.npy", &plan); /* with the plan the ranks share */
    /* and as ooc_gemm_files plans alone: the same plan, the same bytes */
    CU_ASSERT_EQUAL(reference("auto.npy", NULL), cols);
    CU_ASSERT_TRUE(tu_same_file(tu_path("ref.npy"), tu_path("auto.npy")));

    int64_t B = plan.blocks, cut[4] = {0, B / 3, 2 * B / 3, B}, resumed[3];
    int status[3], one[1] = {1}, others[2] = {0, 2};
    /* rank 1 alone: its rows written, none of the others' */
    run_ranks("split.npy", join, &plan, 3, cut, one, 1, 0, NULL, -1, 0, status, resumed, NULL, 1);
    CU_ASSERT_EQUAL(status[1], OOC_SUCCESS);
    int64_t r1a = row_of(&plan, cut[1]), r1b = row_of(&plan, cut[2]), zero, nonzero;
    count_zero("split.npy", r1a, r1b, &zero, &nonzero);
    CU_ASSERT_EQUAL(zero, 0);
    count_zero("split.npy", 0, r1a, &zero, &nonzero);
    CU_ASSERT_EQUAL(nonzero, 0);
    count_zero("split.npy", r1b, plan.rows, &zero, &nonzero);
    CU_ASSERT_EQUAL(nonzero, 0);
    /* then the two others at once */
    run_ranks("split.npy", join, &plan, 3, cut, others, 2, 0, NULL, -1, 0, status, resumed, NULL, 1);
    CU_ASSERT_EQUAL(status[0], OOC_SUCCESS);
    CU_ASSERT_EQUAL(status[2], OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_commit(H, c), OOC_SUCCESS);
    ooc_file_close(c, 0);
    CU_ASSERT_TRUE(tu_same_file(tu_path("ref.npy"), tu_path("split.npy")));
}

static void test_split(void)
{
    job_t a = {OOC_R64, OOC_OP_N, OOC_OP_T, CM, RM, RM, 1201, 97, 83, 256 << 10, 64};
    split_case(&a, 0);
    job_t b = {OOC_C64, OOC_OP_T, OOC_OP_N, RM, CM, CM, 1003, 197, 45, 512 << 10, 96};
    split_case(&b, 0);
    /* a wide C: one process keeps op(A) resident, and so do the ranks */
    job_t c = {OOC_R64, OOC_OP_N, OOC_OP_N, CM, RM, CM, 83, 1201, 97, 256 << 10, 64};
    split_case(&c, 1);
    job_t d = {OOC_C64, OOC_OP_C, OOC_OP_T, RM, CM, RM, 197, 1003, 45, 512 << 10, 96};
    split_case(&d, 1);
}

/* A range off the blocks, a range past C, a joined file's limits. */
static void test_refusals(void)
{
    job_t a = {OOC_R64, OOC_OP_N, OOC_OP_N, RM, RM, RM, 1201, 97, 83, 256 << 10, 64};
    make_job(&a);
    ooc_files_plan_t plan;
    unsigned join = 0;
    ooc_file_t *c = create_and_plan("ref.npy", 0, NULL, NULL, &plan, &join);
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    int64_t b1 = row_of(&plan, 1), b2 = row_of(&plan, 2), m = J.m;
    int64_t bad[5][2] = {{b1 + 1, b2}, {0, b2 - 1}, {b1, m + 1}, {-1, b1}, {b1, b1}};
    for (int i = 0; i < 5; i++) {
        ooc_files_opts_t o = {.plan = &plan, .row_begin = bad[i][0], .row_end = bad[i][1]};
        ooc_status_t st = gemm(H, &in, c, &o);
        CU_ASSERT_EQUAL(st, OOC_ERR_ROW_RANGE);
        if (st != OOC_ERR_ROW_RANGE) fprintf(stderr, "\n    case %d: %d %s\n", i, (int)st, ooc_last_error(H));
        if (i < 2) CU_ASSERT(strstr(ooc_last_error(H), "block boundary") != NULL);
    }
    int64_t r0, r1;
    CU_ASSERT_EQUAL(ooc_files_plan_rows(&plan, plan.blocks, &r0, &r1), OOC_ERR_ROW_RANGE);
    /* a forged plan at the limits of int64: refused, no overflow (UBSan) */
    ooc_files_plan_t huge = plan;
    huge.rows = INT64_MAX;
    huge.block_rows = INT64_MAX - 5;
    CU_ASSERT_NOT_EQUAL(ooc_files_plan_rows(&huge, 0, &r0, &r1), OOC_SUCCESS);
    /* blocks of 2^30 rows (the most a plan has) over 2^63 - 1 rows: the last
     * block ends at C's end (its end was computed as start + rows, past
     * 2^63: a negative end, and success) */
    huge.block_rows = (int64_t)1 << 30;
    huge.tail = 0;
    huge.tail_rep = 1;
    huge.blocks = (int64_t)1 << 33;
    CU_ASSERT_EQUAL(ooc_files_plan_rows(&huge, huge.blocks - 1, &r0, &r1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(r0, INT64_MAX - ((int64_t)1 << 30) + 1);
    CU_ASSERT_EQUAL(r1, INT64_MAX);
    /* blocks taller than any plan's, whose tail's rows would sum past 2^63 */
    huge.block_rows = INT64_MAX / 4;
    huge.tail = 6;
    huge.tail_rep = 16;
    huge.blocks = 100;
    CU_ASSERT_EQUAL(ooc_files_plan_rows(&huge, 0, &r0, &r1), OOC_ERR_INVALID_PARAM);
    /* panels over 2^63 - 1 columns, the last ending at C's end */
    ooc_files_plan_t wide = plan;
    wide.cols = INT64_MAX;
    wide.panel_cols = ((int64_t)1 << 62) + 1;
    CU_ASSERT_EQUAL(ooc_files_plan_cols(&wide, 1, &r0, &r1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(r0, wide.panel_cols);
    CU_ASSERT_EQUAL(r1, INT64_MAX);
    /* a plan of another job */
    ooc_files_plan_t other = plan;
    other.rows += 1;
    ooc_files_opts_t o = {.plan = &other, .row_begin = 0, .row_end = b1};
    CU_ASSERT_EQUAL(gemm(H, &in, c, &o), OOC_ERR_INVALID_PARAM);

    /* a journal resumed with another range */
    ooc_files_opts_t first = {.journal = tu_path("jr"), .plan = &plan, .row_begin = 0, .row_end = b2};
    CU_ASSERT_EQUAL(gemm(H, &in, c, &first), OOC_SUCCESS);
    ooc_file_close(c, 0);
    ooc_file_spec_t cs = out_spec();
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("ref.npy"), &cs, OOC_FILE_RESUME | OOC_FILE_SHARED, &c),
                          OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_resumed(c), 1);
    ooc_files_opts_t again = {.journal = tu_path("jr"), .resume = 1, .plan = &plan, .row_begin = b1, .row_end = b2};
    CU_ASSERT_EQUAL(gemm(H, &in, c, &again), OOC_ERR_JOURNAL);
    CU_ASSERT(strstr(ooc_last_error(H), "its own journal") != NULL);
    CU_ASSERT(ooc_last_error_path(H) != NULL && strcmp(ooc_last_error_path(H), tu_path("jr")) == 0); /* (it was NULL) */
    /* a range journal never says the whole job is finished */
    int finished = 1;
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, tu_path("ref.npy"), &cs,
                                            &first, &finished), OOC_SUCCESS);
    CU_ASSERT_EQUAL(finished, 0);

    /* joining: shared with the creator; not committed or removed by a joiner */
    ooc_file_t *jn = NULL, *bad_join = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_join(H, tu_path("ref.npy"), &cs, OOC_FILE_RESUME, &jn), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_commit(H, jn), OOC_ERR_INVALID_PARAM);
    /* nor committed, or recorded finished, by its creator while one that
     * joined has it open (a partial C was committed, and said finished; a
     * hunt) */
    ooc_files_opts_t mk = {.journal = tu_path("jmark"), .plan = &plan};
    CU_ASSERT_EQUAL(ooc_gemm_files_mark_finished(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &mk), OOC_ERR_BUSY);
    CU_ASSERT(strstr(ooc_last_error(H), "another process still has") != NULL);
    CU_ASSERT_EQUAL(ooc_file_commit(H, c), OOC_ERR_BUSY);
    CU_ASSERT_EQUAL(access(tu_path("ref.npy.ooc-tmp"), F_OK), 0);
    CU_ASSERT_NOT_EQUAL(access(tu_path("jmark"), F_OK), 0);
    ooc_file_close(jn, 1);
    CU_ASSERT_EQUAL(access(tu_path("ref.npy.ooc-tmp"), F_OK), 0);
    ooc_file_spec_t wrong = cs;
    wrong.cols += 1;
    CU_ASSERT_EQUAL(ooc_file_join(H, tu_path("ref.npy"), &wrong, 0, &bad_join), OOC_ERR_FORMAT);
    CU_ASSERT_EQUAL(ooc_file_join(H, tu_path("none.npy"), &cs, 0, &bad_join), OOC_ERR_IO);
    ooc_file_t *other_job = NULL;
    CU_ASSERT_EQUAL(ooc_file_create(H, tu_path("ref.npy"), &cs, 0, &other_job), OOC_ERR_BUSY);
    ooc_file_close(c, 1);
    /* the creator gone with its temporary file while one that joined
     * computes: its blocks went nowhere, not a success with a complete
     * journal (a hunt) */
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("gone.npy"), &cs, OOC_FILE_SHARED, &c), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_join(H, tu_path("gone.npy"), &cs, 0, &jn), OOC_SUCCESS);
    ooc_file_close(c, 1);
    CU_ASSERT_NOT_EQUAL(access(tu_path("gone.npy.ooc-tmp"), F_OK), 0);
    ooc_files_opts_t part = {.journal = tu_path("jgone"), .plan = &plan, .row_begin = 0, .row_end = b1};
    CU_ASSERT_EQUAL(gemm(H, &in, jn, &part), OOC_ERR_IO);
    CU_ASSERT(strstr(ooc_last_error(H), "committed or removed while this process computed") != NULL);
    ooc_file_close(jn, 0);
    unlink(tu_path("jgone"));
    /* a creator that did not share: nobody joins */
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("alone.npy"), &cs, 0, &c), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_join(H, tu_path("alone.npy"), &cs, 0, &bad_join), OOC_ERR_BUSY);
    ooc_file_close(c, 1);
    close_inputs(&in);
}

/* Every byte of the elements of rows [r0, r1) and columns [c0, c1) (in_rect)
 * of the output's temporary file set to 0x7f. */
static void poison_rect(const char *tmp, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    uint64_t off = data_offset(tmp);
    size_t e = tu_elem(J.t);
    FILE *t = fopen(tmp, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int64_t i = 0; i < J.m; i++)
        for (int64_t j = 0; j < J.n; j++) {
            if (!in_rect(i, j, r0, r1, c0, c1)) continue;
            uint64_t at = (uint64_t)(J.lc == RM ? i * J.n + j : j * J.m + i) * e;
            CU_ASSERT_EQUAL(fseek(t, (long)(off + at), SEEK_SET), 0);
            for (size_t b = 0; b < e; b++) fputc(0x7f, t);
        }
    fclose(t);
}

static void poison(const char *tmp, int64_t r0, int64_t r1) { poison_rect(tmp, r0, r1, 0, INT64_MAX); }

/* Job a split three ways (by columns when `cols`: op(A) resident), a rank
 * killed, resumed with three ranks or two: one process's bytes. */
static void resume_case(const job_t *a, int cols)
{
    make_job(a);
    for (int two = 0; two < 2; two++) {
        const char *out = two ? "cut2.npy" : "cut.npy";
        for (int nr = 2; nr <= 3; nr++) /* the journals of an earlier case */
            for (int i = 0; i < nr; i++) {
                char old[512];
                snprintf(old, sizeof old, "%s.j%d.%d", tu_path(out), nr, i);
                unlink(old);
            }
        ooc_files_plan_t plan, again;
        unsigned join = 0;
        ooc_file_t *c = create_and_plan(out, 0, NULL, NULL, &plan, &join);
        CU_ASSERT_EQUAL(plan.a_resident, cols);
        BY_COLS = plan.a_resident;
        if (!two) reference("ref.npy", NULL); /* one process, as it plans alone */
        int64_t B = plan.blocks, cut[4] = {0, B / 3, 2 * B / 3, B}, resumed[3];
        int status[3], all[3] = {0, 1, 2};
        run_ranks(out, join, &plan, 3, cut, all, 3, 0, NULL, 1, 4, status, resumed, NULL, 1);
        CU_ASSERT_EQUAL(status[0], OOC_SUCCESS);
        CU_ASSERT_EQUAL_FATAL(status[1], -1); /* killed */
        CU_ASSERT_EQUAL(status[2], OOC_SUCCESS);
        /* poison the killed rank's last block, which its journal does not vouch for */
        char jp[512], tmp[512];
        snprintf(jp, sizeof jp, "%s.j3.1", tu_path(out));
        int64_t recorded = journal_done(jp);
        CU_ASSERT(recorded >= 2 && recorded < (cut[2] - cut[1]) * plan.panels);
        snprintf(tmp, sizeof tmp, "%s.ooc-tmp", tu_path(out));
        CU_ASSERT_FATAL(cut[2] - cut[1] > 5); /* the last block is not among those done before the kill */
        poison(tmp, row_of(&plan, cut[2] - 1), row_of(&plan, cut[2]));
        ooc_file_close(c, 0); /* every process gone; then the job is started again */

        char o0[512], o1[512], o2[512];
        snprintf(o0, sizeof o0, "%s.j3.0", tu_path(out));
        snprintf(o1, sizeof o1, "%s.j3.1", tu_path(out));
        snprintf(o2, sizeof o2, "%s.j3.2", tu_path(out));
        const char *old[] = {o0, o1, o2, NULL};
        char own[512];
        snprintf(own, sizeof own, "%s.j%d.0", tu_path(out), two ? 2 : 3);
        c = create_and_plan(out, OOC_FILE_RESUME, own, old, &again, &join);
        CU_ASSERT_EQUAL(join, OOC_FILE_RESUME);
        CU_ASSERT_EQUAL(memcmp(&again, &plan, sizeof plan), 0); /* the journals' plan */
        if (!two) {
            run_ranks(out, join, &again, 3, cut, all, 3, 1, NULL, -1, 0, status, resumed, NULL, 1);
            for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(status[i], OOC_SUCCESS);
            CU_ASSERT_EQUAL(resumed[1], recorded); /* on from its journal */
            CU_ASSERT_EQUAL(resumed[0], (cut[1] - cut[0]) * plan.panels); /* complete: nothing to do */
        } else {
            int64_t cut2[3] = {0, B / 2, B};
            run_ranks(out, join, &again, 2, cut2, all, 2, 1, old, -1, 0, status, resumed, NULL, 1);
            CU_ASSERT_EQUAL(status[0], OOC_SUCCESS);
            CU_ASSERT_EQUAL(status[1], OOC_SUCCESS);
            /* between them, every block the old journals recorded */
            CU_ASSERT_EQUAL(resumed[0] + resumed[1], (B - (cut[2] - cut[1])) * plan.panels + recorded);
        }
        CU_ASSERT_EQUAL(ooc_file_commit(H, c), OOC_SUCCESS);
        ooc_file_close(c, 0);
        CU_ASSERT_TRUE(tu_same_file(tu_path("ref.npy"), tu_path(out)));
    }
}

static void test_resume(void)
{
    job_t a = {OOC_R64, OOC_OP_N, OOC_OP_N, RM, CM, RM, 1201, 97, 83, 256 << 10, 64};
    resume_case(&a, 0);
    job_t w = {OOC_R64, OOC_OP_T, OOC_OP_N, RM, RM, CM, 97, 1201, 83, 256 << 10, 64};
    resume_case(&w, 1);
}

/* Panels of op(B)'s columns in plan. */
static int64_t col_panels(const ooc_files_plan_t *p) { return (p->cols + p->panel_cols - 1) / p->panel_cols; }

/* Job j split as a grid of 2 x 2 ranks (block rows x panels of op(B); by
 * C^T's when the plan keeps op(A) resident, which must be `cols`): rank 1
 * alone first writes its rectangle and nothing else, then the others; C
 * must equal one process's. Ranges off the panels, or a rectangle for a
 * job that multiplies nothing, are refused. */
static void grid_case(const job_t *j, int cols)
{
    make_job(j);
    ooc_files_plan_t plan;
    unsigned join = 0;
    unlink(tu_path("grid.npy"));
    ooc_file_t *c = create_and_plan("grid.npy", 0, NULL, NULL, &plan, &join);
    CU_ASSERT_EQUAL(plan.a_resident, cols);
    BY_COLS = plan.a_resident;
    CU_ASSERT_EQUAL(plan.cols, cols ? J.m : J.n);
    int64_t NP = col_panels(&plan), B = plan.blocks;
    CU_ASSERT_FATAL(NP >= 3 && plan.panels == NP && B >= 4); /* panels of op(B)'s columns alone */
    reference("ref.npy", &plan);

    int64_t cut[3] = {0, B / 2, B}, ccut[3] = {0, NP / 2, NP}, resumed[4];
    int status[4], one[1] = {1}, others[3] = {0, 2, 3};
    run_ranks("grid.npy", join, &plan, 4, cut, one, 1, 0, NULL, -1, 0, status, resumed, ccut, 2);
    CU_ASSERT_EQUAL(status[1], OOC_SUCCESS);
    int64_t r0 = 0, r1 = row_of(&plan, cut[1]), c0 = col_of(&plan, ccut[1]), zero, nonzero;
    count_zero_rect("grid.npy", r0, r1, c0, INT64_MAX, &zero, &nonzero);
    CU_ASSERT_EQUAL(zero, 0);
    CU_ASSERT(nonzero > 0);
    count_zero_rect("grid.npy", 0, r1, 0, c0, &zero, &nonzero); /* rank 0's */
    CU_ASSERT_EQUAL(nonzero, 0);
    count_zero_rect("grid.npy", r1, INT64_MAX, 0, INT64_MAX, &zero, &nonzero); /* ranks 2 and 3's */
    CU_ASSERT_EQUAL(nonzero, 0);
    char jp[512];
    snprintf(jp, sizeof jp, "%s.j4.1", tu_path("grid.npy"));
    CU_ASSERT_EQUAL(journal_done(jp), cut[1] * (NP - NP / 2));
    run_ranks("grid.npy", join, &plan, 4, cut, others, 3, 0, NULL, -1, 0, status, resumed, ccut, 2);
    for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(status[i], OOC_SUCCESS);

    /* refused: off a panel, past C, a job that multiplies nothing */
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    int64_t off = col_of(&plan, 1) + 1;
    ooc_files_opts_t o = {.journal = tu_path("grid.j"), .plan = &plan, .col_begin = 0, .col_end = off};
    CU_ASSERT_EQUAL(gemm(H, &in, c, &o), OOC_ERR_ROW_RANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "not on a panel boundary"));
    o.col_end = plan.cols + 1;
    CU_ASSERT_EQUAL(gemm(H, &in, c, &o), OOC_ERR_ROW_RANGE);
    o.col_end = col_of(&plan, 1);
    double zero_alpha[2] = {0, 0};
    CU_ASSERT_EQUAL(ooc_gemm_files(H, J.ta, J.tb, zero_alpha, in.a, in.b, BETA, in.c0, c, &o), OOC_ERR_ROW_RANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "multiplies nothing"));
    ooc_files_plan_t p1;
    CU_ASSERT_EQUAL(ooc_files_plan_cols(&plan, NP, &c0, &r1), OOC_ERR_ROW_RANGE);
    CU_ASSERT_EQUAL(ooc_files_plan_cols(&plan, NP - 1, &c0, &r1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(r1, plan.cols);
    p1 = plan;
    p1.cols = plan.cols + 1; /* a plan for another job */
    o.plan = &p1;
    CU_ASSERT_EQUAL(gemm(H, &in, c, &o), OOC_ERR_INVALID_PARAM);
    close_inputs(&in);
    CU_ASSERT_EQUAL(ooc_file_commit(H, c), OOC_SUCCESS);
    ooc_file_close(c, 0);
    CU_ASSERT_TRUE(tu_same_file(tu_path("ref.npy"), tu_path("grid.npy")));
}

/* Copy the suite's file `from` to `to` (a node's own copy: another inode,
 * the same bytes). */
static void copy_file(const char *from, const char *to)
{
    char src[512];
    snprintf(src, sizeof src, "%s", tu_path(from));
    FILE *in = fopen(src, "rb"), *out = fopen(tu_path(to), "wb");
    CU_ASSERT_FATAL(in != NULL && out != NULL);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) CU_ASSERT_EQUAL(fwrite(buf, 1, n, out), n);
    fclose(in);
    CU_ASSERT_EQUAL(fclose(out), 0);
}

/* A rank that reads its own copies of A and B (each node its own) writes
 * the second half of C with the creator's identity of the job
 * (ooc_gemm_files_job, given as opts->job): its journal records that
 * identity, so that the creator's resume reads it and keeps its blocks.
 * With the copy's own identity (no opts->job) the creator refused that
 * journal as another job's: a job run on copies could never be resumed. An
 * opts->job of another job (another alpha, another shape) is refused. */
static void test_copies(void)
{
    job_t a = {OOC_R64, OOC_OP_N, OOC_OP_T, CM, RM, RM, 1201, 97, 83, 256 << 10, 64};
    make_job(&a);
    copy_file("a", "a.copy");
    copy_file("b", "b.copy");
    ooc_files_plan_t plan;
    unsigned join = 0;
    unlink(tu_path("cp.npy"));
    ooc_file_t *c = create_and_plan("cp.npy", 0, NULL, NULL, &plan, &join);
    CU_ASSERT_FATAL(plan.blocks >= 4 && !plan.a_resident);
    reference("ref.npy", &plan);
    inputs_t in, cp;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, J.t, RM};
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(H, tu_path("a.copy"), &any, &cp.a), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(H, tu_path("b.copy"), &any, &cp.b), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(H, tu_path("c0"), &any, &cp.c0), OOC_SUCCESS);
    char job[OOC_FILES_JOB_MAX], mine[OOC_FILES_JOB_MAX];
    CU_ASSERT_EQUAL_FATAL(ooc_gemm_files_job(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, job, sizeof job),
                          OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_gemm_files_job(H, J.ta, J.tb, ALPHA, cp.a, cp.b, BETA, cp.c0, c, mine, sizeof mine),
                          OOC_SUCCESS);
    CU_ASSERT(strstr(job, " A=") != NULL && strcmp(job, mine) != 0); /* (the copies are other files) */
    CU_ASSERT_EQUAL(ooc_gemm_files_job(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, job, 8), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL_FATAL(ooc_gemm_files_job(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, job, sizeof job),
                          OOC_SUCCESS);

    /* the second half, from the copies, with the creator's identity */
    char j1[512], j0[512];
    snprintf(j1, sizeof j1, "%s", tu_path("cp.j.1"));
    snprintf(j0, sizeof j0, "%s", tu_path("cp.j.0"));
    unlink(j1);
    unlink(j0);
    int64_t half = row_of(&plan, plan.blocks / 2);
    ooc_files_opts_t o = {.journal = j1, .plan = &plan, .row_begin = half, .row_end = plan.rows, .job = job};
    /* another job's identity: refused, nothing written */
    char other[OOC_FILES_JOB_MAX];
    snprintf(other, sizeof other, "%s", job);
    char *al = strstr(other, "alpha=");
    CU_ASSERT_FATAL(al != NULL);
    al[6] = al[6] == '0' ? '1' : '0';
    o.job = other;
    CU_ASSERT_EQUAL(ooc_gemm_files(H, J.ta, J.tb, ALPHA, cp.a, cp.b, BETA, cp.c0, c, &o), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "opts->job is not this job's"));
    snprintf(other, sizeof other, "%s", job);
    char *shape = strstr(other, " B=");
    CU_ASSERT_FATAL(shape != NULL);
    shape = strchr(shape, 'x') - 1; /* the last digit of B's rows */
    *shape = *shape == '1' ? '2' : '1';
    CU_ASSERT_EQUAL(ooc_gemm_files(H, J.ta, J.tb, ALPHA, cp.a, cp.b, BETA, cp.c0, c, &o), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(journal_done(j1), 0);
    o.job = job;
    CU_ASSERT_EQUAL_FATAL(ooc_gemm_files(H, J.ta, J.tb, ALPHA, cp.a, cp.b, BETA, cp.c0, c, &o), OOC_SUCCESS);
    CU_ASSERT(journal_done(j1) > 0);

    /* the job stopped there; the creator resumes the whole of it reading
     * that journal (it refused it as another job's): its blocks kept */
    ooc_file_close(c, 0);
    const char *old[2] = {j1, NULL};
    ooc_files_plan_t again;
    c = create_and_plan("cp.npy", OOC_FILE_RESUME, j0, old, &again, &join);
    CU_ASSERT_EQUAL(join, OOC_FILE_RESUME);
    ooc_files_opts_t r = {.journal = j0, .plan = &again, .resume = 1, .journals = old};
    ooc_status_t st = ooc_gemm_files(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &r);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    resume: %s\n", ooc_last_error(H));
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    ooc_stats_t stats;
    CU_ASSERT_EQUAL(ooc_get_stats(H, &stats), OOC_SUCCESS);
    CU_ASSERT_EQUAL(stats.blocks_resumed, (plan.blocks - plan.blocks / 2) * plan.panels); /* (blocks x panels) */
    close_inputs(&in);
    close_inputs(&cp);
    CU_ASSERT_EQUAL(ooc_file_commit(H, c), OOC_SUCCESS);
    ooc_file_close(c, 0);
    CU_ASSERT_TRUE(tu_same_file(tu_path("ref.npy"), tu_path("cp.npy")));
    unlink(j0);
    unlink(j1);
    unlink(tu_path("a.copy"));
    unlink(tu_path("b.copy"));
}

static void test_grid(void)
{
    job_t a = {OOC_R64, OOC_OP_N, OOC_OP_T, CM, RM, RM, 1201, 97, 83, 192 << 10, 64};
    grid_case(&a, 0);
    job_t b = {OOC_C64, OOC_OP_T, OOC_OP_N, RM, CM, CM, 1003, 197, 45, 384 << 10, 96};
    grid_case(&b, 0);
    job_t c = {OOC_R64, OOC_OP_N, OOC_OP_N, CM, RM, CM, 83, 1201, 97, 224 << 10, 64};
    grid_case(&c, 1);
    /* op(B) in k-panels too: split by blocks only */
    job_t d = {OOC_R64, OOC_OP_N, OOC_OP_N, CM, RM, CM, 83, 1201, 97, 192 << 10, 64};
    make_job(&d);
    ooc_files_plan_t plan;
    unsigned join = 0;
    unlink(tu_path("grid.npy"));
    ooc_file_t *out = create_and_plan("grid.npy", 0, NULL, NULL, &plan, &join);
    CU_ASSERT(plan.panels > col_panels(&plan) && col_panels(&plan) >= 2);
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    ooc_files_opts_t o = {.journal = tu_path("grid.j"), .plan = &plan, .col_begin = 0, .col_end = col_of(&plan, 1)};
    CU_ASSERT_EQUAL(gemm(H, &in, out, &o), OOC_ERR_ROW_RANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "splits op(B)'s depth"));
    close_inputs(&in);
    ooc_file_close(out, 1);
}

/* A grid of 2 x 2 with a rank killed, resumed as three ranks by rows; and
 * three ranks by rows, one killed, resumed as a grid: one process's bytes,
 * and each resume takes every block the other split's journals recorded. */
static void test_grid_resume(void)
{
    job_t a = {OOC_R64, OOC_OP_N, OOC_OP_N, RM, CM, RM, 1201, 97, 83, 192 << 10, 64};
    make_job(&a);
    reference("ref.npy", NULL);
    for (int from_grid = 1; from_grid >= 0; from_grid--) {
        const char *out = "gridr.npy";
        for (int nr = 3; nr <= 4; nr++) /* the journals of the case before */
            for (int i = 0; i < nr; i++) {
                char old[512];
                snprintf(old, sizeof old, "%s.j%d.%d", tu_path(out), nr, i);
                unlink(old);
            }
        unlink(tu_path(out));
        ooc_files_plan_t plan, again;
        unsigned join = 0;
        ooc_file_t *c = create_and_plan(out, 0, NULL, NULL, &plan, &join);
        BY_COLS = plan.a_resident;
        CU_ASSERT_EQUAL(plan.a_resident, 0);
        int64_t NP = col_panels(&plan), B = plan.blocks;
        CU_ASSERT_FATAL(NP >= 3 && B >= 6);
        int64_t gcut[3] = {0, B / 2, B}, ccut[3] = {0, NP / 2, NP}, rcut[4] = {0, B / 3, 2 * B / 3, B}, resumed[4];
        int status[4], all[4] = {0, 1, 2, 3}, n1 = from_grid ? 4 : 3, n2 = from_grid ? 3 : 4;
        /* the first run: rank 1 killed after 3 blocks */
        if (from_grid) run_ranks(out, join, &plan, 4, gcut, all, 4, 0, NULL, 1, 3, status, resumed, ccut, 2);
        else run_ranks(out, join, &plan, 3, rcut, all, 3, 0, NULL, 1, 3, status, resumed, NULL, 1);
        for (int i = 0; i < n1; i++) CU_ASSERT_EQUAL(status[i], i == 1 ? -1 : OOC_SUCCESS);
        char jp[512], tmp[512];
        snprintf(jp, sizeof jp, "%s.j%d.1", tu_path(out), n1);
        int64_t recorded = journal_done(jp), mine = from_grid ? gcut[1] * (NP - NP / 2) : (rcut[2] - rcut[1]) * NP;
        CU_ASSERT(recorded >= 2 && recorded < mine);
        /* the killed rank's last block, which its journal does not vouch for, poisoned */
        snprintf(tmp, sizeof tmp, "%s.ooc-tmp", tu_path(out));
        if (from_grid) poison_rect(tmp, row_of(&plan, gcut[1] - 1), row_of(&plan, gcut[1]), col_of(&plan, NP - 1), INT64_MAX);
        else poison(tmp, row_of(&plan, rcut[2] - 1), row_of(&plan, rcut[2]));
        ooc_file_close(c, 0);

        char names[4][512];
        const char *old[5] = {NULL};
        for (int i = 0; i < n1; i++) {
            snprintf(names[i], sizeof names[i], "%s.j%d.%d", tu_path(out), n1, i);
            old[i] = names[i];
        }
        char own[512];
        snprintf(own, sizeof own, "%s.j%d.0", tu_path(out), n2);
        c = create_and_plan(out, OOC_FILE_RESUME, own, old, &again, &join);
        CU_ASSERT_EQUAL(join, OOC_FILE_RESUME);
        CU_ASSERT_EQUAL(memcmp(&again, &plan, sizeof plan), 0); /* the journals' plan */
        if (from_grid) run_ranks(out, join, &again, 3, rcut, all, 3, 1, old, -1, 0, status, resumed, NULL, 1);
        else run_ranks(out, join, &again, 4, gcut, all, 4, 1, old, -1, 0, status, resumed, ccut, 2);
        int64_t kept = 0;
        for (int i = 0; i < n2; i++) {
            CU_ASSERT_EQUAL(status[i], OOC_SUCCESS);
            kept += resumed[i];
        }
        /* between them, every block the old journals recorded */
        CU_ASSERT_EQUAL(kept, B * NP - mine + recorded);
        CU_ASSERT_EQUAL(ooc_file_commit(H, c), OOC_SUCCESS);
        ooc_file_close(c, 0);
        CU_ASSERT_TRUE(tu_same_file(tu_path("ref.npy"), tu_path(out)));
    }
}

/* A wide job's range (its plan keeps op(A) resident: columns of C, here
 * past C's rows) resumed without opts->plan: the journal's plan (its own,
 * or one in opts->journals) gives the columns; a range past C's columns,
 * or one past C's rows where no journal keeps op(A) resident, is refused;
 * the journal resumed for another range is refused, naming column blocks. */
static void test_resume_unplanned(void)
{
    job_t w = {OOC_R64, OOC_OP_N, OOC_OP_T, RM, CM, RM, 97, 1201, 83, 256 << 10, 64};
    make_job(&w);
    ooc_files_plan_t plan;
    unsigned join = 0;
    ooc_file_t *c = create_and_plan("un.npy", 0, NULL, NULL, &plan, &join);
    CU_ASSERT_EQUAL_FATAL(plan.a_resident, 1);
    int64_t B = plan.blocks, r0 = row_of(&plan, B / 2), r1 = row_of(&plan, B);
    CU_ASSERT_FATAL(r0 > J.m && r1 == J.n);
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    char jp[512], other[512];
    snprintf(jp, sizeof jp, "%s.jr", tu_path("un.npy"));
    snprintf(other, sizeof other, "%s.jo", tu_path("un.npy"));
    unlink(jp);
    unlink(other);
    ooc_files_opts_t first = {.journal = jp, .plan = &plan, .row_begin = r0, .row_end = r1};
    CU_ASSERT_EQUAL_FATAL(gemm(H, &in, c, &first), OOC_SUCCESS);
    ooc_file_close(c, 0);
    ooc_file_spec_t cs = out_spec();
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("un.npy"), &cs, OOC_FILE_RESUME | OOC_FILE_SHARED, &c),
                          OOC_SUCCESS);
    /* its own journal's plan: every block of the range found done */
    ooc_files_opts_t again = {.journal = jp, .resume = 1, .row_begin = r0, .row_end = r1};
    ooc_status_t st = gemm(H, &in, c, &again);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    own journal: %s\n", ooc_last_error(H));
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    ooc_stats_t s;
    CU_ASSERT_EQUAL(ooc_get_stats(H, &s), OOC_SUCCESS);
    CU_ASSERT_EQUAL(s.blocks_resumed, (B - B / 2) * plan.panels);
    CU_ASSERT_EQUAL(s.a_resident, 1);
    /* another's journal, this range's own journal new */
    const char *old[] = {jp, NULL};
    ooc_files_opts_t taken = {.journal = other, .resume = 1, .journals = old, .row_begin = r0, .row_end = r1};
    st = gemm(H, &in, c, &taken);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    other journal: %s\n", ooc_last_error(H));
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_get_stats(H, &s), OOC_SUCCESS);
    CU_ASSERT_EQUAL(s.blocks_resumed, (B - B / 2) * plan.panels);
    /* its journal resumed for another range: refused, naming column blocks */
    ooc_files_opts_t moved = {.journal = jp, .resume = 1, .plan = &plan, .row_begin = row_of(&plan, B / 2 + 1),
                              .row_end = r1};
    CU_ASSERT_EQUAL(gemm(H, &in, c, &moved), OOC_ERR_JOURNAL);
    CU_ASSERT(strstr(ooc_last_error(H), "records column blocks") != NULL);
    /* past C's columns: refused, naming columns */
    ooc_files_opts_t past = {.journal = jp, .resume = 1, .row_begin = r0, .row_end = J.n + 1};
    CU_ASSERT_EQUAL(gemm(H, &in, c, &past), OOC_ERR_ROW_RANGE);
    CU_ASSERT(strstr(ooc_last_error(H), "columns") != NULL);
    /* no journal keeps op(A) resident: the planner's rows, past C's */
    char none[512];
    snprintf(none, sizeof none, "%s.jn", tu_path("un.npy"));
    unlink(none);
    ooc_files_opts_t rows = {.journal = none, .resume = 1, .row_begin = 0, .row_end = r1};
    CU_ASSERT_EQUAL(gemm(H, &in, c, &rows), OOC_ERR_ROW_RANGE);
    CU_ASSERT(strstr(ooc_last_error(H), "rows") != NULL);
    ooc_file_close(c, 1);
    close_inputs(&in);
    unlink(jp);
    unlink(other);
}

/* ooc_verify_files_rows: an error inside the rows is seen, one outside is not. */
static void test_verify_rows(void)
{
    job_t a = {OOC_R64, OOC_OP_T, OOC_OP_N, CM, RM, CM, 1201, 97, 83, 256 << 10, 64};
    make_job(&a);
    ooc_files_plan_t plan;
    unsigned join = 0;
    ooc_file_t *c = create_and_plan("v.npy", 0, NULL, NULL, &plan, &join);
    ooc_files_opts_t o = {.plan = &plan};
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    CU_ASSERT_EQUAL_FATAL(gemm(H, &in, c, &o), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_commit(H, c), OOC_SUCCESS);
    /* one element in the middle range, (row, col) = (r, 5), made wrong */
    int64_t rows[4] = {0, 400, 800, J.m}, r = 555;
    double x;
    uint64_t at = (uint64_t)(5 * J.m + r); /* Fortran order */
    CU_ASSERT_EQUAL(ooc_file_read(H, c, at, &x, 1), OOC_SUCCESS);
    ooc_file_close(c, 0);
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, J.t, RM};
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(H, tu_path("v.npy"), &any, &c), OOC_SUCCESS);
    FILE *t = fopen(tu_path("v.npy"), "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    x += 1e-3 * (x == 0 ? 1 : x);
    CU_ASSERT_EQUAL(fseek(t, (long)(ooc_file_data_offset(c) + at * 8), SEEK_SET), 0);
    CU_ASSERT_EQUAL(fwrite(&x, 8, 1, t), 1);
    fclose(t);
    for (int freivalds = 0; freivalds < 2; freivalds++) {
        ooc_set(H, OOC_PARAM_HOST_MEM, freivalds ? 2 << 20 : 0); /* too small for an exact check */
        for (int i = 0; i < 3; i++) {
            ooc_verify_result_t res;
            ooc_status_t st = ooc_verify_files_rows(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, rows[i],
                                                    rows[i + 1], 3, 4, &res);
            CU_ASSERT_EQUAL(st, OOC_SUCCESS);
            CU_ASSERT_EQUAL(res.exact, !freivalds);
            CU_ASSERT_EQUAL(res.passed, i != 1);
            CU_ASSERT(res.rows_checked <= rows[i + 1] - rows[i]);
        }
    }
    ooc_verify_result_t res;
    CU_ASSERT_EQUAL(ooc_verify_files_rows(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, 5, J.m + 1, 3, 4, &res),
                    OOC_ERR_ROW_RANGE);
    ooc_set(H, OOC_PARAM_HOST_MEM, 0);
    ooc_file_close(c, 0);
    close_inputs(&in);
}

/* Line n (from 1) of a journal, without its output file's " out=DEV:INO",
 * " born=" and " id=". */
static void line_of(const char *path, int n, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    for (int i = 0; f && i < n && fgets(buf, (int)cap, f); i++) continue;
    if (f) fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    /* the output file's identity (inode, birth time, id) is each file's own */
    static const char *keys[] = {" out=", " born=", " id="};
    for (int k = 0; k < 3; k++) {
        char *at = strstr(buf, keys[k]), *end = at ? at + strcspn(at + 1, " ") + 1 : NULL;
        if (at) memmove(at, end, strlen(end) + 1);
    }
}

/* ooc_gemm_files_finished for the job with this alpha, output out. */
static int finished_for(const inputs_t *in, const char *out, const void *alpha, const ooc_files_opts_t *o)
{
    ooc_file_spec_t cs = out_spec();
    int fin = -1;
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, J.ta, J.tb, alpha, in->a, in->b, BETA, in->c0, tu_path(out), &cs, o,
                                            &fin), OOC_SUCCESS);
    return fin;
}

/* A split job recorded finished before its commit, as rank 0 of mpirun
 * records it: finished once committed (for this job only) until its output
 * changes; recorded again after the commit; refusals of a mark. */
static void test_mark_finished(void)
{
    job_t a = {OOC_R64, OOC_OP_N, OOC_OP_T, RM, RM, RM, 601, 57, 83, 256 << 10, 64};
    make_job(&a);
    ooc_files_plan_t plan;
    unsigned join = 0;
    ooc_file_t *c = create_and_plan("fin.npy", 0, NULL, NULL, &plan, &join);
    reference("ref.npy", &plan); /* leaves its journal, complete: what one process records */
    int64_t B = plan.blocks, cut[4] = {0, B / 3, 2 * B / 3, B}, resumed[3];
    int status[3], all[3] = {0, 1, 2};
    run_ranks("fin.npy", join, &plan, 3, cut, all, 3, 0, NULL, -1, 0, status, resumed, NULL, 1);
    for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(status[i], OOC_SUCCESS);
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    ooc_files_opts_t o = {.plan = &plan}, ranged = {.plan = &plan, .row_end = row_of(&plan, 1)}, none = {0};
#define MARK(c) ooc_gemm_files_mark_finished(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &o)
#define FINISHED(alpha) finished_for(&in, "fin.npy", alpha, &o)
    ooc_file_spec_t cs = out_spec();
    ooc_file_t *jn = NULL; /* a joined file: its creator records the job */
    CU_ASSERT_EQUAL_FATAL(ooc_file_join(H, tu_path("fin.npy"), &cs, 0, &jn), OOC_SUCCESS);
    CU_ASSERT_EQUAL(MARK(jn), OOC_ERR_INVALID_PARAM);
    ooc_file_close(jn, 1);
    CU_ASSERT_EQUAL(ooc_gemm_files_mark_finished(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &ranged),
                    OOC_ERR_ROW_RANGE);
    CU_ASSERT_EQUAL(ooc_gemm_files_mark_finished(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &none),
                    OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(MARK(NULL), OOC_ERR_NULL_C);
    /* the temporary file moved away: refused */
    char tmp[512], moved[512], jp[512], rp[512], x[4096], y[4096];
    snprintf(tmp, sizeof tmp, "%s.ooc-tmp", tu_path("fin.npy"));
    snprintf(moved, sizeof moved, "%s.moved", tu_path("fin.npy"));
    snprintf(jp, sizeof jp, "%s.ooc-journal", tu_path("fin.npy"));
    snprintf(rp, sizeof rp, "%s.ooc-journal", tu_path("ref.npy"));
    CU_ASSERT_EQUAL_FATAL(rename(tmp, moved), 0);
    CU_ASSERT_EQUAL(MARK(c), OOC_ERR_IO);
    CU_ASSERT(strstr(ooc_last_error(H), "no longer the output created there") != NULL);
    CU_ASSERT_EQUAL(access(jp, F_OK), -1);
    CU_ASSERT_EQUAL_FATAL(rename(moved, tmp), 0);
    /* recorded before the commit: finished once committed, the commit
     * (a rename) keeping what the journal recorded */
    CU_ASSERT_EQUAL(MARK(c), OOC_SUCCESS);
    CU_ASSERT_EQUAL(FINISHED(ALPHA), 0); /* nothing at fin.npy yet */
    CU_ASSERT_EQUAL_FATAL(ooc_file_commit(H, c), OOC_SUCCESS);
    CU_ASSERT_TRUE(tu_same_file(tu_path("ref.npy"), tu_path("fin.npy")));
    CU_ASSERT_EQUAL(FINISHED(ALPHA), 1);
    CU_ASSERT_EQUAL(FINISHED(BETA), 0); /* another job: alpha differs */
    /* the journal one process with this plan left: the same job, plan and blocks */
    for (int i = 1; i <= 3; i++) {
        line_of(jp, i, x, sizeof x);
        line_of(rp, i, y, sizeof y);
        CU_ASSERT_STRING_EQUAL(x, y);
    }
    CU_ASSERT(journal_done(jp) == B * plan.panels && journal_done(rp) == B * plan.panels);
    /* the ranges' journals alone: not finished; recorded after the commit: finished */
    CU_ASSERT_EQUAL(unlink(jp), 0);
    CU_ASSERT_EQUAL(FINISHED(ALPHA), 0);
    CU_ASSERT_EQUAL(MARK(c), OOC_SUCCESS);
    CU_ASSERT_EQUAL(FINISHED(ALPHA), 1);
    /* touched: not finished; marked again: finished */
    struct timespec ts[2] = {{0, UTIME_OMIT}, {1234567, 0}};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, tu_path("fin.npy"), ts, 0), 0);
    CU_ASSERT_EQUAL(FINISHED(ALPHA), 0);
    CU_ASSERT_EQUAL(MARK(c), OOC_SUCCESS);
    CU_ASSERT_EQUAL(FINISHED(ALPHA), 1);
    /* its size changed: not finished, and a mark is refused */
    FILE *f = fopen(tu_path("fin.npy"), "ab");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputc(0, f);
    fclose(f);
    CU_ASSERT_EQUAL(FINISHED(ALPHA), 0);
    CU_ASSERT_EQUAL(MARK(c), OOC_ERR_FORMAT);
    CU_ASSERT(strstr(ooc_last_error(H), "bytes") != NULL);
    /* replaced by another file (the same bytes): not finished, a mark refused */
    CU_ASSERT_EQUAL(rename(tu_path("ref.npy"), tu_path("fin.npy")), 0);
    CU_ASSERT_EQUAL(FINISHED(ALPHA), 0);
    CU_ASSERT_EQUAL(MARK(c), OOC_ERR_IO);
    ooc_file_close(c, 0);
    close_inputs(&in);
#undef MARK
#undef FINISHED
}

/* A split scaling job (alpha 0: no blocks, rank 0 writes C = beta C0) is
 * recorded finished as one process's is: redone in place it would scale
 * its own output again. */
static void test_mark_scale(void)
{
    job_t a = {OOC_R64, OOC_OP_T, OOC_OP_N, CM, RM, CM, 203, 41, 29, 256 << 10, 64};
    make_job(&a);
    static const double ZERO[2] = {0.0, 0.0};
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    ooc_file_spec_t cs = out_spec();
    ooc_file_t *c = NULL;
    unlink(tu_path("scl.npy"));
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("scl.npy"), &cs, OOC_FILE_SHARED, &c), OOC_SUCCESS);
    set_budgets(H);
    ooc_files_plan_t plan;
    ooc_files_opts_t po = {0}, o = {.plan = &plan};
    CU_ASSERT_EQUAL_FATAL(ooc_gemm_files_plan(H, J.ta, J.tb, ZERO, in.a, in.b, BETA, in.c0, c, &po, &plan),
                          OOC_SUCCESS);
    CU_ASSERT_EQUAL(plan.blocks, 0);
    /* a plan of no blocks: no block is one of it (a plan ooc_gemm_files_plan() makes) */
    int64_t nb0 = -1, nb1 = -1;
    CU_ASSERT_EQUAL(ooc_files_plan_rows(&plan, 0, &nb0, &nb1), OOC_ERR_ROW_RANGE);
    CU_ASSERT_EQUAL(nb0, -1);
    char rj[512];
    snprintf(rj, sizeof rj, "%s.r0-of-2", tu_path("scl.npy"));
    ooc_files_opts_t ro = {.plan = &plan, .journal = rj}; /* rank 0 writes all of it */
    CU_ASSERT_EQUAL(ooc_gemm_files(H, J.ta, J.tb, ZERO, in.a, in.b, BETA, in.c0, c, &ro), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_gemm_files_mark_finished(H, J.ta, J.tb, ZERO, in.a, in.b, BETA, in.c0, c, &o), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_commit(H, c), OOC_SUCCESS);
    CU_ASSERT_EQUAL(finished_for(&in, "scl.npy", ZERO, &o), 1);
    CU_ASSERT_EQUAL(finished_for(&in, "scl.npy", ALPHA, &o), 0); /* another job */
    /* C = beta C0, exactly */
    size_t count = (size_t)(J.m * J.n);
    double *c0 = malloc(count * sizeof *c0), *got = malloc(count * sizeof *got);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(ooc_file_read(H, in.c0, 0, c0, count), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_read(H, c, 0, got, count), OOC_SUCCESS);
    int64_t wrong = 0;
    for (size_t i = 0; i < count; i++) wrong += got[i] != BETA[0] * c0[i];
    CU_ASSERT_EQUAL(wrong, 0);
    free(c0);
    free(got);
    ooc_file_close(c, 0);
    close_inputs(&in);
}

/* The inode of path (0 when absent). */
static uint64_t inode_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_ino : 0;
}

/* The creator of a split job's C plans a resume that no journal of the kept
 * temporary file has a block of (the journal given is absent): the job
 * starts over, so the file must be a new one, or the journal of the first
 * run (another path) would vouch for blocks the ranks overwrite. Not when a
 * rank joined before the plan (it writes to the kept file), nor when a
 * journal given has blocks of it. */
static void test_restart_shared(void)
{
    job_t a = {OOC_R64, OOC_OP_N, OOC_OP_N, RM, CM, RM, 1201, 97, 83, 256 << 10, 64};
    make_job(&a);
    char tmp[512], ja[512], jb[512];
    snprintf(tmp, sizeof tmp, "%s", tu_path("rs.npy.ooc-tmp"));
    snprintf(ja, sizeof ja, "%s", tu_path("rs.ja"));
    snprintf(jb, sizeof jb, "%s", tu_path("rs.jb"));
    unlink(tmp), unlink(ja), unlink(jb);
    /* a first run: rows of its first two blocks, journal ja; C kept */
    ooc_files_plan_t plan;
    unsigned join = 0;
    ooc_file_t *c = create_and_plan("rs.npy", 0, NULL, NULL, &plan, &join);
    CU_ASSERT_FATAL(plan.blocks > 3);
    inputs_t in;
    CU_ASSERT_EQUAL_FATAL(open_inputs(H, &in), 0);
    ooc_files_opts_t first = {.journal = ja, .plan = &plan, .row_begin = 0, .row_end = row_of(&plan, 2)};
    CU_ASSERT_EQUAL_FATAL(gemm(H, &in, c, &first), OOC_SUCCESS);
    CU_ASSERT(journal_done(ja) >= 2);
    ooc_file_close(c, 0);
    uint64_t kept = inode_of(tmp);
    CU_ASSERT_FATAL(kept != 0);

    /* a journal given has blocks: the file is kept, still resumed */
    ooc_file_spec_t cs = out_spec();
    set_budgets(H);
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("rs.npy"), &cs, OOC_FILE_SHARED | OOC_FILE_RESUME, &c),
                          OOC_SUCCESS);
    const char *old[] = {ja, NULL};
    ooc_files_opts_t withja = {.journal = jb, .resume = 1, .journals = old};
    ooc_files_plan_t p2;
    CU_ASSERT_EQUAL(ooc_gemm_files_plan(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &withja, &p2), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_resumed(c), 1);
    CU_ASSERT_EQUAL(inode_of(tmp), kept);
    /* none has: but a rank joined first, so the file stays as it is */
    ooc_files_opts_t none = {.journal = jb, .resume = 1};
    ooc_file_t *jn = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_join(H, tu_path("rs.npy"), &cs, OOC_FILE_RESUME, &jn), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_gemm_files_plan(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &none, &p2), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_resumed(c), 1);
    CU_ASSERT_EQUAL(inode_of(tmp), kept);
    ooc_file_close(jn, 0);
    /* none has, nobody joined, but a plan given (a process's own plan of
     * its range, once the job's is made: it does not read every journal
     * of the job): kept */
    ooc_files_opts_t given = {.journal = jb, .resume = 1, .plan = &plan};
    CU_ASSERT_EQUAL(ooc_gemm_files_plan(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &given, &p2), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_resumed(c), 1);
    CU_ASSERT_EQUAL(inode_of(tmp), kept);
    /* none has, nobody joined: a new file, joinable, and ja is no journal of it */
    CU_ASSERT_EQUAL(ooc_gemm_files_plan(H, J.ta, J.tb, ALPHA, in.a, in.b, BETA, in.c0, c, &none, &p2), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_resumed(c), 0);
    uint64_t now = inode_of(tmp);
    CU_ASSERT(now != 0 && now != kept);
    CU_ASSERT_EQUAL_FATAL(ooc_file_join(H, tu_path("rs.npy"), &cs, 0, &jn), OOC_SUCCESS);
    ooc_file_t *other = NULL;
    CU_ASSERT_EQUAL(ooc_file_create(H, tu_path("rs.npy"), &cs, 0, &other), OOC_ERR_BUSY); /* still locked */
    ooc_files_opts_t rest = {.journal = jb, .resume = 1, .journals = old, .plan = &plan, .row_begin = 0,
                             .row_end = row_of(&plan, 2)};
    ooc_stats_t st;
    CU_ASSERT_EQUAL(gemm(H, &in, jn, &rest), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_get_stats(H, &st), OOC_SUCCESS);
    CU_ASSERT_EQUAL(st.blocks_resumed, 0); /* ja's blocks are the old file's */
    ooc_file_close(jn, 0);
    ooc_file_close(c, 1);
    close_inputs(&in);
    unlink(ja), unlink(jb);
}

int main(void)
{
    if (ooc_create(&H) != OOC_SUCCESS) return 1;
    int ok = tu_backend_runs(H, OOC_BACKEND_HOST);
    if (ok <= 0) {
        ooc_destroy(H);
        return ok == 0 ? 77 : 1;
    }
    if (tu_dir_make("ranges") != 0) return 1;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("ranges", NULL, NULL);
    CU_add_test(s, "three ranks, byte-identical to one process", test_split);
    CU_add_test(s, "a grid of rows and panels, byte-identical to one process", test_grid);
    CU_add_test(s, "a grid resumed by rows, rows resumed as a grid", test_grid_resume);
    CU_add_test(s, "ranges off the blocks, joined files", test_refusals);
    CU_add_test(s, "a resume of no block starts a shared C over", test_restart_shared);
    CU_add_test(s, "a rank killed, resumed with three ranks or two", test_resume);
    CU_add_test(s, "a column range resumed without a plan", test_resume_unplanned);
    CU_add_test(s, "verify a row range", test_verify_rows);
    CU_add_test(s, "a split job recorded finished", test_mark_finished);
    CU_add_test(s, "a rank on its own copies of the inputs, resumed", test_copies);
    CU_add_test(s, "a split scaling job recorded finished", test_mark_scale);
    int rc = tu_run();
    ooc_destroy(H);
    if (tu_dir_remove() != 0) rc = 1;
    return rc;
}
