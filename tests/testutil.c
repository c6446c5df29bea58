/* SPDX-License-Identifier: MIT */
/*
 * testutil.c: see testutil.h. The reference is OpenBLAS; the error bound is
 * computed in double precision from the absolute values of the operands.
 */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <cblas.h>

#include "io.h"
#include "testutil.h"

int tu_run(void)
{
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned bad = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return bad ? 1 : 0;
}

int tu_backend_runs(ooc_handle_t *h, int kind)
{
    double a = 1, b = 2, c = 0;
    ooc_set(h, OOC_PARAM_BACKEND, kind);
    ooc_status_t st = ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 1, 1, 1, 1.0, &a, 1, &b, 1, 0.0, &c, 1);
    if (st == OOC_ERR_NO_DEVICE || st == OOC_ERR_BACKEND_UNAVAILABLE) {
        printf("backend %d not usable here (%s): skipping\n", kind, ooc_last_error(h));
        return 0;
    }
    if (st != OOC_SUCCESS || c != 2.0) {
        printf("1x1x1 multiply failed: %s: %s\n", ooc_status_string(st), ooc_last_error(h));
        return -1;
    }
    printf("backend under test: %s\n", ooc_backend_name(h));
    return 1;
}

size_t tu_elem(ooc_dtype_t t) { return t == OOC_R32 ? 4 : t == OOC_R64 ? 8 : t == OOC_C32 ? 8 : 16; }
double tu_eps(ooc_dtype_t t) { return (t == OOC_R32 || t == OOC_C32) ? FLT_EPSILON : DBL_EPSILON; }
static int is_complex(ooc_dtype_t t) { return t == OOC_C32 || t == OOC_C64; }
static int is_single(ooc_dtype_t t) { return t == OOC_R32 || t == OOC_C32; }

static double next_uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    double u = (double)(z >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
    return u == 0.0 ? 0.5 : u;
}

void tu_fill(ooc_dtype_t t, void *x, size_t count, uint64_t *seed)
{
    size_t reals = count * (is_complex(t) ? 2 : 1);
    for (size_t i = 0; i < reals; i++) {
        double u = next_uniform(seed);
        if (is_single(t)) ((float *)x)[i] = (float)u;
        else ((double *)x)[i] = u;
    }
}

void tu_fill_nan(ooc_dtype_t t, void *x, size_t count)
{
    size_t reals = count * (is_complex(t) ? 2 : 1);
    for (size_t i = 0; i < reals; i++) {
        if (is_single(t)) ((float *)x)[i] = NAN;
        else ((double *)x)[i] = NAN;
    }
}

size_t tu_stored(ooc_layout_t layout, ooc_op_t op, int64_t rows, int64_t cols, int64_t ld)
{
    /* lines of the stored matrix: columns (col-major) or rows (row-major) */
    int64_t lines = (layout == OOC_COL_MAJOR) == (op == OOC_OP_N) ? cols : rows;
    return (size_t)(ld * (lines > 0 ? lines : 1));
}

/* element (i, j) of op(X) stored with ld in layout: index into X */
static size_t at(ooc_layout_t layout, ooc_op_t op, int64_t i, int64_t j, int64_t ld)
{
    int rows_contig = (layout == OOC_COL_MAJOR) == (op == OOC_OP_N);
    return rows_contig ? (size_t)(i + j * ld) : (size_t)(i * ld + j);
}

static void get(ooc_dtype_t t, const void *x, size_t idx, double *re, double *im)
{
    switch (t) {
    case OOC_R32: *re = ((const float *)x)[idx]; *im = 0; break;
    case OOC_R64: *re = ((const double *)x)[idx]; *im = 0; break;
    case OOC_C32: *re = ((const float *)x)[2 * idx]; *im = ((const float *)x)[2 * idx + 1]; break;
    case OOC_C64: *re = ((const double *)x)[2 * idx]; *im = ((const double *)x)[2 * idx + 1]; break;
    }
}

int64_t tu_check(ooc_dtype_t t, ooc_layout_t layout, ooc_op_t ta, ooc_op_t tb, int64_t m,
                 int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                 const void *B, int64_t ldb, const void *beta, const void *C0, const void *C,
                 int64_t ldc, double *worst)
{
    size_t e = tu_elem(t), cn = tu_stored(layout, OOC_OP_N, m, n, ldc);
    void *ref = malloc(cn * e);
    double *absa = malloc(sizeof(double) * (size_t)(m * k + 1));
    double *absb = malloc(sizeof(double) * (size_t)(k * n + 1));
    double *bound = malloc(sizeof(double) * (size_t)(m * n + 1));
    int64_t bad = 0;
    *worst = 0;
    if (!ref || !absa || !absb || !bound) {
        free(ref), free(absa), free(absb), free(bound);
        return -1;
    }
    /* the reference: OpenBLAS on the same arguments */
    memcpy(ref, C0, cn * e);
    enum CBLAS_ORDER lo = (enum CBLAS_ORDER)layout;
    enum CBLAS_TRANSPOSE cta = (enum CBLAS_TRANSPOSE)ta, ctb = (enum CBLAS_TRANSPOSE)tb;
    int im = (int)m, in = (int)n, ik = (int)k, ilda = (int)lda, ildb = (int)ldb, ildc = (int)ldc;
    switch (t) {
    case OOC_R32: cblas_sgemm(lo, cta, ctb, im, in, ik, *(const float *)alpha, A, ilda, B, ildb, *(const float *)beta, ref, ildc); break;
    case OOC_R64: cblas_dgemm(lo, cta, ctb, im, in, ik, *(const double *)alpha, A, ilda, B, ildb, *(const double *)beta, ref, ildc); break;
    case OOC_C32: cblas_cgemm(lo, cta, ctb, im, in, ik, alpha, A, ilda, B, ildb, beta, ref, ildc); break;
    case OOC_C64: cblas_zgemm(lo, cta, ctb, im, in, ik, alpha, A, ilda, B, ildb, beta, ref, ildc); break;
    }
    /* the bound: |alpha| |op(A)| |op(B)| + |beta| |C0|, column-major doubles */
    double are, aim, bre, bim;
    get(t, alpha, 0, &are, &aim);
    get(t, beta, 0, &bre, &bim);
    double aabs = fabs(are) + fabs(aim), babs = fabs(bre) + fabs(bim);
    int beta_zero = bre == 0 && bim == 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t l = 0; l < k; l++) {
            get(t, A, at(layout, ta, i, l, lda), &are, &aim);
            absa[i + l * m] = fabs(are) + fabs(aim);
        }
    for (int64_t l = 0; l < k; l++)
        for (int64_t j = 0; j < n; j++) {
            get(t, B, at(layout, tb, l, j, ldb), &are, &aim);
            absb[l + j * k] = fabs(are) + fabs(aim);
        }
    if (k > 0)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, im, in, ik, aabs, absa, im, absb,
                    ik, 0.0, bound, im);
    else
        memset(bound, 0, sizeof(double) * (size_t)(m * n));
    double tol = 4.0 * (double)(k + 2) * tu_eps(t);
    /* every stored element: inside the matrix it must match, padding untouched */
    size_t lines = (layout == OOC_COL_MAJOR) ? (size_t)n : (size_t)m;
    size_t len = (layout == OOC_COL_MAJOR) ? (size_t)m : (size_t)n;
    for (size_t line = 0; line < lines; line++)
        for (size_t x = 0; x < (size_t)ldc; x++) {
            size_t idx = line * (size_t)ldc + x;
            double cre, cim, rre, rim;
            get(t, C, idx, &cre, &cim);
            if (x >= len) { /* padding */
                get(t, C0, idx, &rre, &rim);
                if (memcmp((const char *)C + idx * e, (const char *)C0 + idx * e, e) != 0) bad++;
                continue;
            }
            int64_t i = layout == OOC_COL_MAJOR ? (int64_t)x : (int64_t)line;
            int64_t j = layout == OOC_COL_MAJOR ? (int64_t)line : (int64_t)x;
            get(t, ref, idx, &rre, &rim);
            double c0re = 0, c0im = 0;
            if (!beta_zero) get(t, C0, idx, &c0re, &c0im);
            double b = bound[i + j * m] + babs * (fabs(c0re) + fabs(c0im));
            double errv = fabs(cre - rre) + fabs(cim - rim);
            double lim = tol * b + 1e-300;
            if (!(errv <= lim)) bad++; /* NaN fails too */
            double r = errv / lim;
            if (!(r <= *worst)) *worst = r;
        }
    free(ref), free(absa), free(absb), free(bound);
    return bad;
}

/* ---- a directory of files for a suite ---- */

static char tu_dir[64];

int tu_dir_make(const char *name)
{
    snprintf(tu_dir, sizeof tu_dir, "/tmp/ooc_test_%s_XXXXXX", name);
    return mkdtemp(tu_dir) == NULL ? -1 : 0;
}

int tu_dir_remove(void)
{
    if (tu_dir[0] == '\0') return 0;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_dir);
    return system(cmd) == 0 ? 0 : -1;
}

const char *tu_path(const char *name)
{
    static char buf[8][256];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", tu_dir, name);
    return p;
}

int tu_same_file(const char *p, const char *q)
{
    FILE *f = fopen(p, "rb"), *g = fopen(q, "rb");
    int same = f && g;
    while (same) {
        int x = fgetc(f), y = fgetc(g);
        if (x != y) same = 0;
        if (x == EOF) break;
    }
    if (f) fclose(f);
    if (g) fclose(g);
    return same;
}

static char tree[1024];

/* mkdir -p path (a failure fails the test) */
static void mkdirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) CU_FAIL_FATAL("mkdir");
            *p = '/';
        }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) CU_FAIL_FATAL("mkdir");
}

const char *tu_tree(const char *name)
{
    snprintf(tree, sizeof tree, "%s", tu_path(name));
    mkdirs(tree);
    return tree;
}

void tu_put(const char *rel, const char *text)
{
    char path[2048];
    snprintf(path, sizeof path, "%s%s", tree, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdirs(path);
    *slash = '/';
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    CU_ASSERT_EQUAL(fclose(f), 0);
}

int tu_mem_node(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[4096];
    int node = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Mems_allowed_list: %d", &node) == 1) break;
    if (f) fclose(f);
    return node;
}

ooc_status_t tu_open_tmp(ooc_handle_t *h, const char *tmp, const ooc_file_spec_t *spec, ooc_file_t **f)
{
    FILE *in = fopen(tmp, "rb");
    if (in == NULL) return ooc_file_open(h, tmp, spec, f); /* (its error) */
    unsigned char *all = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n == cap && (all = realloc(all, cap = cap ? 2 * cap : 1 << 16)) == NULL) abort();
        got = fread(all + n, 1, cap - n, in);
        n += got;
    } while (got > 0);
    fclose(in);
    int trailer = n >= OOC_TMP_TRAILER && memcmp(all + n - OOC_TMP_TRAILER, OOC_TMP_TRAILER_TAG,
                                                 sizeof OOC_TMP_TRAILER_TAG - 1) == 0;
    if (!trailer) {
        free(all);
        return ooc_file_open(h, tmp, spec, f);
    }
    char view[4096];
    snprintf(view, sizeof view, "%s.view", tmp);
    FILE *out = fopen(view, "wb");
    if (out == NULL || fwrite(all, 1, n - OOC_TMP_TRAILER, out) != n - OOC_TMP_TRAILER || fclose(out) != 0) abort();
    free(all);
    ooc_status_t st = ooc_file_open(h, view, spec, f);
    unlink(view);
    return st;
}
