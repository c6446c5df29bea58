/* SPDX-License-Identifier: MIT */
/*
 * cli_check.c: in-memory matrices of run and bench (shape, allocation,
 * pinned or pageable) and the check of sampled rows of C against OpenBLAS:
 * the rows recomputed with cblas_?gemm, the bound on the terms summed, and
 * the largest relative error. Prints only on out-of-memory.
 */
#include "config.h"

#include "cli.h"

/* Element idx of an array of dtype t, as (re, im) doubles. */
static void load(ooc_dtype_t t, const void *x, size_t idx, double *re, double *im)
{
    switch (t) {
    case OOC_R32: *re = ((const float *)x)[idx]; *im = 0; break;
    case OOC_R64: *re = ((const double *)x)[idx]; *im = 0; break;
    case OOC_C32: *re = ((const float *)x)[2 * idx]; *im = ((const float *)x)[2 * idx + 1]; break;
    case OOC_C64: *re = ((const double *)x)[2 * idx]; *im = ((const double *)x)[2 * idx + 1]; break;
    }
}

static double magnitude(ooc_dtype_t t, const void *x, size_t idx)
{
    double re, im;
    load(t, x, idx, &re, &im);
    return dtype_complex(t) ? hypot(re, im) : fabs(re);
}

/* Index of element (i, j) of op(X), X stored in `layout` with leading dimension ld. */
static size_t op_index(ooc_layout_t layout, ooc_op_t op, int64_t ld, int64_t i, int64_t j)
{
    int64_t r = op == OOC_OP_N ? i : j, c = op == OOC_OP_N ? j : i; /* element (r, c) of X */
    return layout == OOC_COL_MAJOR ? (size_t)r + (size_t)c * (size_t)ld : (size_t)r * (size_t)ld + (size_t)c;
}

/* ------------------------------------------------------------------------ */
/* In-memory matrices and the check of sampled rows against OpenBLAS         */

/* Stored size of op(X) (rows x cols) in `layout`, with overflow checks. */
int matrix_shape(const char *cmd, const char *name, const run_opts_t *o, ooc_op_t op, int64_t rows,
                 int64_t cols, matrix_t *x)
{
    int64_t srows = op == OOC_OP_N ? rows : cols, scols = op == OOC_OP_N ? cols : rows;
    size_t elems, bytes;
    memset(x, 0, sizeof *x);
    x->ld = o->layout == OOC_COL_MAJOR ? srows : scols;
    if (__builtin_mul_overflow((uint64_t)srows, (uint64_t)scols, &elems) ||
        __builtin_mul_overflow(elems, dtype_size(o->dtype), &bytes) || bytes > (size_t)INT64_MAX) {
        usage_error(cmd, "%s (%lld x %lld elements of %zu bytes) is too large to allocate", name,
                    (long long)srows, (long long)scols, dtype_size(o->dtype));
        return -1;
    }
    x->elems = elems;
    x->bytes = bytes;
    return 0;
}

/* Allocate x (pinned through the handle, or pageable). On failure: the
 * message on stderr and library_error's status (RC_RUNTIME, or RC_USAGE for
 * a refused OOC_FAULT specification), or RC_RUNTIME and the message in
 * err[len] when err is not NULL. */
int matrix_alloc(ooc_handle_t *h, int pinned, matrix_t *x, const char *name, char *err, size_t len)
{
    if (pinned) {
        ooc_status_t st = ooc_host_alloc(h, x->bytes, &x->p);
        if (st != OOC_SUCCESS) {
            x->p = NULL;
            if (err == NULL) return library_error(h, st);
            snprintf(err, len, "ooc_host_alloc (%s): %s: %s", name, ooc_status_string(st), ooc_last_error(h));
            return RC_RUNTIME;
        }
        return RC_OK;
    }
    size_t bytes = (x->bytes + 63) & ~(size_t)63;
    x->p = aligned_alloc(64, bytes ? bytes : 64);
    if (x->p == NULL) {
        char b[32];
        if (err) snprintf(err, len, "cannot allocate %s for %s", human_bytes(x->bytes, b, sizeof b), name);
        else return fail(RC_RUNTIME, "cannot allocate %s for %s", human_bytes(x->bytes, b, sizeof b), name);
        return RC_RUNTIME;
    }
    return RC_OK;
}

void matrix_free(ooc_handle_t *h, int pinned, matrix_t *x)
{
    if (x->p == NULL) return;
    if (pinned) (void)ooc_host_free(h, x->p);
    else free(x->p);
    x->p = NULL;
}

/* The checked rows: r distinct rows spread evenly over 0..m-1, first and last included. */
void pick_rows(int64_t m, int64_t r, int64_t *rows)
{
    if (r == 1) {
        rows[0] = 0;
        return;
    }
    /* row t = floor(t * (m-1) / (r-1)) without overflow: r <= 2^31 (--check-rows) */
    int64_t q = (m - 1) / (r - 1), rem = (m - 1) % (r - 1);
    for (int64_t t = 0; t < r; t++) rows[t] = q * t + rem * t / (r - 1);
}

/* Element (t, j) of an r x n matrix stored in `layout` with exact leading dimension. */
static size_t small_index(ooc_layout_t layout, int64_t r, int64_t n, int64_t t, int64_t j)
{
    return layout == OOC_COL_MAJOR ? (size_t)t + (size_t)j * (size_t)r : (size_t)t * (size_t)n + (size_t)j;
}

/* Copy the r checked rows of C (m x n) into c0 (r x n, same layout). */
void save_rows(const run_opts_t *o, const void *C, const int64_t *rows, int64_t r, void *c0)
{
    size_t e = dtype_size(o->dtype);
    int64_t ldc = o->layout == OOC_COL_MAJOR ? o->m : o->n;
    for (int64_t t = 0; t < r; t++)
        for (int64_t j = 0; j < o->n; j++)
            memcpy((char *)c0 + small_index(o->layout, r, o->n, t, j) * e,
                   (const char *)C + op_index(o->layout, OOC_OP_N, ldc, rows[t], j) * e, e);
}

#define CBLAS_ORD(l) ((l) == OOC_ROW_MAJOR ? CblasRowMajor : CblasColMajor)
#define CBLAS_OP(t) ((t) == OOC_OP_N ? CblasNoTrans : (t) == OOC_OP_T ? CblasTrans : CblasConjTrans)

void check_ref_free(check_ref_t *ref)
{
    free(ref->R);
    free(ref->arow);
    ref->R = NULL;
    ref->arow = NULL;
}

/*
 * Recompute the r rows of C with OpenBLAS. R = alpha * G * op(B) + beta * c0,
 * G the gathered rows of op(A) (conjugated for op = C), and the bounds.
 * Returns RC_OK, RC_RUNTIME (out of memory), or RC_USAGE when the sizes do
 * not fit a BLAS int (*ref left empty).
 */
int check_ref(const run_opts_t *o, const matrix_t *A, const matrix_t *B, const void *c0,
              const int64_t *rows, int64_t r, check_ref_t *ref)
{
    ooc_dtype_t t = o->dtype;
    size_t e = dtype_size(t);
    int64_t n = o->n, k = o->k;
    int col = o->layout == OOC_COL_MAJOR;
    int rc = RC_RUNTIME;
    void *G = NULL;
    double *bmax = NULL;

    memset(ref, 0, sizeof *ref);
    if (r > INT_MAX || n > INT_MAX || k > INT_MAX || B->ld > INT_MAX) return RC_USAGE;
    /* no overflow: r <= m, so r*k*e and r*n*e are at most the sizes of A and C */
    G = malloc((size_t)r * (size_t)k * e);
    ref->R = malloc((size_t)r * (size_t)n * e);
    bmax = calloc((size_t)k, sizeof *bmax);
    ref->arow = calloc((size_t)r, sizeof *ref->arow);
    if (!G || !ref->R || !bmax || !ref->arow) {
        fail(RC_RUNTIME, "out of host memory for the check");
        check_ref_free(ref);
        goto out;
    }
    void *R = ref->R;
    double *arow = ref->arow;

    /* gather op(A)'s rows into G (r x k, layout order) */
    for (int64_t i = 0; i < r; i++)
        for (int64_t l = 0; l < k; l++) {
            char *dst = (char *)G + small_index(o->layout, r, k, i, l) * e;
            memcpy(dst, (const char *)A->p + op_index(o->layout, o->ta, A->ld, rows[i], l) * e, e);
            if (o->ta == OOC_OP_C && t == OOC_C32) ((float *)dst)[1] = -((float *)dst)[1];
            if (o->ta == OOC_OP_C && t == OOC_C64) ((double *)dst)[1] = -((double *)dst)[1];
        }
    if (o->beta != 0.0) memcpy(R, c0, (size_t)r * (size_t)n * e);
    else memset(R, 0, (size_t)r * (size_t)n * e);

    int ldg = col ? (int)r : (int)k, ldr = col ? (int)r : (int)n, ldb = (int)B->ld;
    double za[2] = {o->alpha, 0.0}, zb[2] = {o->beta, 0.0};
    float ca[2] = {(float)o->alpha, 0.0f}, cb[2] = {(float)o->beta, 0.0f};
    switch (t) {
    case OOC_R32:
        cblas_sgemm(CBLAS_ORD(o->layout), CblasNoTrans, CBLAS_OP(o->tb), (int)r, (int)n, (int)k,
                    (float)o->alpha, G, ldg, B->p, ldb, (float)o->beta, R, ldr);
        break;
    case OOC_R64:
        cblas_dgemm(CBLAS_ORD(o->layout), CblasNoTrans, CBLAS_OP(o->tb), (int)r, (int)n, (int)k, o->alpha,
                    G, ldg, B->p, ldb, o->beta, R, ldr);
        break;
    case OOC_C32:
        cblas_cgemm(CBLAS_ORD(o->layout), CblasNoTrans, CBLAS_OP(o->tb), (int)r, (int)n, (int)k, ca, G,
                    ldg, B->p, ldb, cb, R, ldr);
        break;
    case OOC_C64:
        cblas_zgemm(CBLAS_ORD(o->layout), CblasNoTrans, CBLAS_OP(o->tb), (int)r, (int)n, (int)k, za, G,
                    ldg, B->p, ldb, zb, R, ldr);
        break;
    }

    /* bmax[l] = max_j |op(B)[l, j]|, in one pass over B in memory order */
    {
        int64_t srows = o->tb == OOC_OP_N ? k : n, scols = o->tb == OOC_OP_N ? n : k;
        int64_t outer = col ? scols : srows, inner = col ? srows : scols;
        for (int64_t p = 0; p < outer; p++)
            for (int64_t q = 0; q < inner; q++) {
                int64_t sr = col ? q : p, sc = col ? p : q;
                int64_t l = o->tb == OOC_OP_N ? sr : sc;
                double v = magnitude(t, B->p, (size_t)p * (size_t)B->ld + (size_t)q);
                if (!(v <= bmax[l])) bmax[l] = v; /* NaN sticks */
            }
    }
    /* arow[i] = |alpha| * sum_l |op(A)[i, l]| * bmax[l] */
    for (int64_t i = 0; i < r; i++) {
        double s = 0.0;
        for (int64_t l = 0; l < k; l++) s += magnitude(t, G, small_index(o->layout, r, k, i, l)) * bmax[l];
        arow[i] = fabs(o->alpha) * s;
    }
    rc = RC_OK;
out:
    free(G);
    free(bmax);
    return rc;
}

/* The element type's epsilon, and what TF32 adds to a tolerance: its
 * inputs rounded to 10 mantissa bits put each product within 2^-9 of the
 * bound, whatever k (lib/verify.c adds the same). */
static double check_eps(const run_opts_t *o) { return dtype_double(o->dtype) ? DBL_EPSILON : FLT_EPSILON; }
static double tf32_term(const run_opts_t *o) { return o->lib.tf32 && !dtype_double(o->dtype) ? 0x1.0p-7 : 0.0; }

/* The largest error of the r checked rows of C against the reference,
 * relative to the bound described in run --help (INFINITY for NaN), of the
 * elements whose reference and bound are finite; *undecided: the others
 * (the random inputs are finite, so OpenBLAS's product or the bound
 * overflowed the type: large scalars), which no tolerance judges; *off:
 * the elements off by about their own size (|C - R| >= |R| / 2) and by more
 * than rounding reaches on any but contrived data (16 sqrt(k + 2) eps of the
 * bound, lib/verify.c's top comment says why), as a missing or stale block
 * is within the worst-case tolerance in single precision with a large k. */
double check_compare(const run_opts_t *o, const check_ref_t *ref, const matrix_t *C, const void *c0,
                     const int64_t *rows, int64_t r, int64_t *off, int64_t *undecided)
{
    ooc_dtype_t t = o->dtype;
    int64_t n = o->n;
    double worst = 0.0;
    double tol_p = 16.0 * sqrt((double)(o->k + 2)) * check_eps(o) + tf32_term(o);
    *off = 0;
    *undecided = 0;
    int64_t ldc = o->layout == OOC_COL_MAJOR ? o->m : n;
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < n; j++) {
            size_t si = small_index(o->layout, r, n, i, j);
            double cr, ci, rr, ri;
            load(t, C->p, op_index(o->layout, OOC_OP_N, ldc, rows[i], j), &cr, &ci);
            load(t, ref->R, si, &rr, &ri);
            double diff = dtype_complex(t) ? hypot(cr - rr, ci - ri) : fabs(cr - rr);
            double bound = ref->arow[i] + (o->beta != 0.0 ? fabs(o->beta) * magnitude(t, c0, si) : 0.0);
            if (!isfinite(rr) || !isfinite(ri) || !isfinite(bound)) { /* past the type's range: no judging */
                ++*undecided;
                continue;
            }
            double err = diff == 0.0 ? 0.0 : diff / (bound > DBL_MIN ? bound : DBL_MIN);
            if (isnan(err)) err = INFINITY;
            if (err > worst) worst = err;
            double rm = dtype_complex(t) ? hypot(rr, ri) : fabs(rr);
            if (diff >= 0.5 * rm && diff > tol_p * bound) ++*off;
        }
    return worst;
}

/*
 * Check the r rows of C against OpenBLAS (check_ref, then check_compare).
 * *max_err receives the largest relative error, *off the elements off by
 * about their own size, *undecided those past the type's range. Returns RC_OK, RC_RUNTIME (out of memory), or
 * RC_USAGE when the sizes do not fit a BLAS int (*max_err untouched).
 */
int check_c(const run_opts_t *o, const matrix_t *A, const matrix_t *B, const matrix_t *C,
            const void *c0, const int64_t *rows, int64_t r, double *max_err, int64_t *off, int64_t *undecided)
{
    check_ref_t ref;
    int rc = check_ref(o, A, B, c0, rows, r, &ref);
    if (rc != RC_OK) return rc;
    *max_err = check_compare(o, &ref, C, c0, rows, r, off, undecided);
    check_ref_free(&ref);
    return RC_OK;
}

/* The check's tolerance: 4*k*eps, and TF32's term. */
double check_tolerance(const run_opts_t *o) { return 4.0 * (double)o->k * check_eps(o) + tf32_term(o); }

int check_verdict(double max_err, double tol, int64_t off, int64_t undecided)
{
    if (!(max_err <= tol) || off > 0) return CHECK_FAIL;
    return undecided > 0 ? CHECK_UNDECIDED : CHECK_PASS;
}

const char *check_undecided_words(int64_t undecided, ooc_dtype_t t, char *buf, size_t len)
{
    snprintf(buf, len, "%lld element%s of the checked rows past %s's range in OpenBLAS's product (these scalars "
             "overflow it)", (long long)undecided, undecided == 1 ? "" : "s", dtype_name(t));
    return buf;
}
