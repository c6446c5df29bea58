/* SPDX-License-Identifier: MIT */
/*
 * test_files.c: ooc_gemm_files end to end against OpenBLAS, through one
 * backend chosen at build time (OOC_TEST_BACKEND; the CUDA build exits 77
 * without a GPU): .npy and raw files in C and Fortran order mixed, every
 * element type, transposes, beta with C0 (beta 1 with alpha 0 or k 0 leaves
 * C0 to the bit), budgets smaller than the operands, a wide op(B) streamed
 * past a resident op(A), and errors that leave no output. The output is
 * this job's alone: a second job on it is refused, a symbolic link at its
 * temporary file is never followed, a target that is not a regular file is
 * refused before any work, a journal path naming an input, the output (also
 * before it exists) or its temporary file is refused and the input kept,
 * and a FIFO is refused without waiting. (test_resume.c: a run killed
 * part-way and resumed, the journal and ooc_journal_forget.)
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "filesutil.h"
#include "io.h"
#include "testutil.h"

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
    /* op(B) split in depth (k-panels) with beta and C0 a file of its own:
     * each k-panel after the first adds onto C's partial sums, not onto
     * beta C0 again (a mutation reading C0 there passed every test); real
     * and complex (beta with an imaginary part), C in either order */
    fcase_t k = {OOC_R64, OOC_OP_N, OOC_OP_N, RM, RM, RM, OOC_FORMAT_NPY, 96, 80, 3000, 0.5, 400 << 10, 0};
    s = run_fcase(&k);
    CU_ASSERT(s.panel_depth > 0 && s.panel_depth < k.k);
    k.t = OOC_C64;
    k.lc = CM;
    k.la = CM;
    s = run_fcase(&k);
    CU_ASSERT(s.panel_depth > 0 && s.panel_depth < k.k);
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
        /* (a .npy only once sealed: until then its trailer follows the data) */
        CU_ASSERT_EQUAL(ooc_file_open(H, tu_path("jw.npy.ooc-tmp"), &any2, &in), OOC_ERR_FORMAT);
        ooc_err_t serr;
        ooc_err_clear(&serr);
        CU_ASSERT_EQUAL_FATAL(ooc_file_seal(&serr, w), OOC_SUCCESS);
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

/* A program that closed its standard descriptors (`>&-`): the files the
 * library opens (the inputs, the output's temporary file and the journal)
 * never take 0, 1 or 2, where what the program prints next would land (an
 * output's .npy header was overwritten by the progress lines, and the job
 * said it succeeded). */
static void std_taken(void *user, int64_t done, int64_t total, uint64_t bytes_read, uint64_t bytes_written)
{
    (void)done, (void)total, (void)bytes_read, (void)bytes_written;
    for (int fd = 0; fd < 3; fd++) *(int *)user |= fcntl(fd, F_GETFD) >= 0;
}

static void test_std_fds_closed(void)
{
    free(make_file("sa", OOC_FORMAT_NPY, OOC_R64, RM, 9, 7));
    free(make_file("sb", OOC_FORMAT_NPY, OOC_R64, RM, 7, 5));
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, 9, 5, OOC_R64, RM}, any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, RM};
    unlink(tu_path("sc.npy"));
    int keep[3];
    fflush(stdout);
    fflush(stderr);
    for (int fd = 0; fd < 3; fd++) keep[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    for (int fd = 0; fd < 3; fd++) close(fd);
    ooc_file_t *a = NULL, *b = NULL, *c = NULL;
    ooc_status_t sa = ooc_file_open(H, tu_path("sa"), &any, &a), sb = ooc_file_open(H, tu_path("sb"), &any, &b);
    ooc_status_t sc = ooc_file_create(H, tu_path("sc.npy"), &cs, 0, &c), sm = OOC_ERR_INTERNAL;
    double al = 1.0, be = 0.0;
    int taken = 0; /* (checked while the files are open: also by the progress, the journal open) */
    ooc_files_opts_t o = {.journal = tu_path("sc.journal"), .progress = std_taken, .progress_user = &taken};
    if (sa == OOC_SUCCESS && sb == OOC_SUCCESS && sc == OOC_SUCCESS)
        sm = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &al, a, b, &be, NULL, c, &o);
    std_taken(&taken, 0, 0, 0, 0);
    for (int fd = 0; fd < 3; fd++) {
        if (keep[fd] >= 0) dup2(keep[fd], fd);
        if (keep[fd] >= 0) close(keep[fd]);
    }
    CU_ASSERT_EQUAL(sa, OOC_SUCCESS);
    CU_ASSERT_EQUAL(sb, OOC_SUCCESS);
    CU_ASSERT_EQUAL(sc, OOC_SUCCESS);
    CU_ASSERT_EQUAL(sm, OOC_SUCCESS);
    CU_ASSERT_FALSE(taken);
    if (c) ooc_file_close(c, 1);
    if (a) ooc_file_close(a, 0);
    if (b) ooc_file_close(b, 0);
    unlink(tu_path("sc.journal"));
}

/* An input rewritten in place while the job runs (its modification time
 * moves: cp or numpy.save onto it): C would mix the old and the new A, and
 * was committed with success. Now the job fails naming A, and leaves no
 * journal that would vouch for the blocks (nothing to resume). */
/* (progress: once a block is done, A's mtime moved, or A cut to its
 * first 128 bytes, as a cp onto it would begin) */
typedef struct {
    int cut, touched;
} change_t;

static void change_a(void *user, int64_t done, int64_t total, uint64_t bytes_read, uint64_t bytes_written)
{
    (void)total, (void)bytes_read, (void)bytes_written;
    change_t *ch = user;
    if (done < 1 || ch->touched) return;
    struct timespec t[2] = {{0, UTIME_OMIT}, {1000000000, 0}}; /* mtime: 2001 */
    int ok = ch->cut ? truncate(tu_path("ia.npy"), 128) : utimensat(AT_FDCWD, tu_path("ia.npy"), t, 0);
    ch->touched = ok == 0 ? 1 : -1;
}

static void test_input_changed(void)
{
    /* the rows of A cut off are read later (many small blocks): the
     * read fails, and the failure says A changed (it said "run with
     * resume" of a job a resume refuses). (A GPU may have read every
     * block by then: the check after the blocks says it) */
    for (int cut = 0; cut < 2; cut++) {
        int64_t m = cut ? 20000 : 300;
        free(make_file("ia.npy", OOC_FORMAT_NPY, OOC_R64, RM, m, 40));
        free(make_file("ib.npy", OOC_FORMAT_NPY, OOC_R64, RM, 40, 30));
        ooc_file_t *a = open_file("ia.npy", OOC_FORMAT_NPY, OOC_R64, RM, m, 40);
        ooc_file_t *b = open_file("ib.npy", OOC_FORMAT_NPY, OOC_R64, RM, 40, 30);
        ooc_file_spec_t cs = {OOC_FORMAT_NPY, m, 30, OOC_R64, RM};
        ooc_file_t *c = NULL;
        unlink(tu_path("ic.npy"));
        unlink(tu_path("ic.journal"));
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("ic.npy"), &cs, 0, &c), OOC_SUCCESS);
        CU_ASSERT_EQUAL_FATAL(ooc_set(H, OOC_PARAM_BLOCK_ROWS, 64), OOC_SUCCESS);
        change_t ch = {cut, 0};
        double al = 1.0, be = 0.0;
        ooc_files_opts_t o = {.journal = tu_path("ic.journal"), .progress = change_a, .progress_user = &ch};
        ooc_status_t st = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &al, a, b, &be, NULL, c, &o);
        CU_ASSERT_EQUAL(ch.touched, 1);
        CU_ASSERT_EQUAL(st, OOC_ERR_IO);
        CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "ia.npy (the input A) changed while the job ran"));
        if (cut && OOC_TEST_BACKEND == OOC_BACKEND_HOST)
            CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "(the job failed: "));
        if (!strstr(ooc_last_error(H), "changed while")) printf("\n    %s\n", ooc_last_error(H));
        CU_ASSERT_STRING_EQUAL(ooc_last_error_path(H), tu_path("ia.npy"));
        CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BLOCK_ROWS, 0), OOC_SUCCESS);
        CU_ASSERT_EQUAL(access(tu_path("ic.journal"), F_OK), -1); /* nothing vouches for the blocks */
        if (c) ooc_file_close(c, 1);
        CU_ASSERT_EQUAL(access(tu_path("ic.npy"), F_OK), -1);
        ooc_file_close(a, 0);
        ooc_file_close(b, 0);
    }
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
    CU_add_test(s, "the output is this job's alone", test_output_safety);
    CU_add_test(s, "standard descriptors closed: never the library's files", test_std_fds_closed);
    CU_add_test(s, "an input rewritten while the job runs: refused, nothing to resume", test_input_changed);
    int rc = tu_run();
    ooc_destroy(H);
    if (tu_dir_remove() != 0) rc = 1;
    return rc;
}
