/* SPDX-License-Identifier: MIT */
/*
 * verify.c: ooc_verify_files(), the CPU check of a file multiply
 * C = alpha*op(A)*op(B) + beta*C0 with OpenBLAS.
 *
 * Small products are recomputed exactly (every element compared). Large ones
 * get Freivalds' check, as BLIS's test_gemm does it: W = C*X against
 * Z = alpha*op(A)*(op(B)*X) + beta*C0*X for a few random vectors X (all at
 * once, so each file is read once), each element of W - Z measured against
 * the bound |alpha| |op(A)| (|op(B)| |X|) + |beta| |C0| |X| computed in the
 * same passes; plus exact recomputation of sampled rows of C, whose rows of
 * op(A) are read first when they are stored lines (then the pass over B
 * serves both), else gathered in the pass over A (then B is read again).
 *
 * Files are read in chunks of whole stored lines within a quarter of the
 * host budget, by the passes of verify_pass.c. A row range of C (one
 * process's rows of a split job) reads only those rows of op(A), C0 and C,
 * and checks them alone. All arithmetic is in double
 * precision.
 *
 * Must not: hold a whole large file, write to any file, print, exit or abort.
 */
#include "config.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "handle.h"
#include "io.h"
#include "joblimits.h"
#include "verify.h"

/* the budget when OOC_PARAM_HOST_MEM is automatic: this, or half of what the
 * job may take now (its cgroup's room, or MemAvailable) where less, but not
 * under BUDGET_MIN */
#define DEFAULT_BUDGET ((uint64_t)1 << 30)
#define BUDGET_MIN ((uint64_t)64 << 20)
/* Largest chunk (raw bytes and their doubles) read at once. Bigger chunks
 * are slower, not faster: a 4000^3 double check from the page cache took
 * 0.11 s with 4 MiB chunks, 0.15-0.3 s with 8 MiB, 0.5-0.9 s with 32 MiB
 * (the converted chunk no longer stays in cache for its gemm). Reads this
 * size are sequential, so the kernel's readahead keeps a disk busy. */
#define CHUNK_MAX ((uint64_t)4 << 20)
#define EXACT_MAX_MNK ((unsigned __int128)1 << 33) /* multiply-adds of an exact check */
#define SEED 0x6f6f632d76657269ULL                 /* fixed: a check is reproducible */

static const char *dtype_name(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return "float32";
    case OOC_R64: return "float64";
    case OOC_C32: return "complex64";
    case OOC_C64: return "complex128";
    }
    return "an unknown type";
}

/* one scalar of dtype t as (re, im) doubles */
static void scalar(ooc_dtype_t t, const void *x, double s[2])
{
    s[0] = s[1] = 0;
    switch (t) {
    case OOC_R32: s[0] = ((const float *)x)[0]; s[1] = 0; break;
    case OOC_R64: s[0] = ((const double *)x)[0]; s[1] = 0; break;
    case OOC_C32: s[0] = ((const float *)x)[0]; s[1] = ((const float *)x)[1]; break;
    case OOC_C64: s[0] = ((const double *)x)[0]; s[1] = ((const double *)x)[1]; break;
    }
}

/* ---- comparing ---- */

typedef struct {
    double worst;
    int mismatch;      /* a non-finite value where the reference has another */
    int64_t nonfinite; /* NaN or infinite in both, alike: consistent, not measurable */
} cmp_t;

/* 0: finite; 1: +-Inf (no NaN); 2: NaN in a component */
static int nonfinite_kind(int cplx, const double *x, size_t i)
{
    double a = cplx ? x[2 * i] : x[i], b = cplx ? x[2 * i + 1] : 0.0;
    if (isnan(a) || isnan(b)) return 2;
    return isinf(a) || isinf(b) ? 1 : 0;
}

/* |x - ref| / bound element by element (count elements, complex pairs when
 * cplx). NaN or Inf in the inputs propagate into C: where the reference is
 * NaN, C must be NaN too; where it is infinite, C must hold the same
 * infinities; either way the element is counted, not measured. Products with
 * random vectors (Freivalds, elements = 0) cannot tell NaN from Inf (Inf times
 * values of both signs is NaN): there both must merely be non-finite. A bound
 * that is NaN or infinite (non-finite inputs) bounds nothing: any finite error passes. */
static void compare(int cplx, int elements, const double *x, const double *ref, const double *bound, size_t count,
                    cmp_t *r)
{
    for (size_t i = 0; i < count; i++) {
        int kx = nonfinite_kind(cplx, x, i), kr = nonfinite_kind(cplx, ref, i);
        if (kx || kr) {
            int alike = !elements ? kx && kr
                                  : kx == kr && (kr == 2 || (cplx ? x[2 * i] == ref[2 * i] && x[2 * i + 1] == ref[2 * i + 1]
                                                                  : x[i] == ref[i]));
            if (alike) r->nonfinite++;
            else r->mismatch = 1;
            continue;
        }
        double diff = cplx ? hypot(x[2 * i] - ref[2 * i], x[2 * i + 1] - ref[2 * i + 1])
                           : fabs(x[i] - ref[i]);
        double b = bound[i];
        if (!isfinite(b) || diff == 0) continue;
        double e = diff / b; /* b == 0 with diff != 0: infinite */
        if (e > r->worst) r->worst = e;
    }
}

/* R (S x n) += beta * C0rows; Rb += |beta| |C0rows| */
static void add_c0(int cplx, double *R, double *Rb, const double *C0r, const double beta[2],
                   size_t count)
{
    double ab = hypot(beta[0], beta[1]);
    for (size_t i = 0; i < count; i++) {
        if (cplx) {
            double re = C0r[2 * i], im = C0r[2 * i + 1];
            R[2 * i] += beta[0] * re - beta[1] * im;
            R[2 * i + 1] += beta[0] * im + beta[1] * re;
            Rb[i] += ab * hypot(re, im);
        } else {
            R[i] += beta[0] * C0r[i];
            Rb[i] += ab * fabs(C0r[i]);
        }
    }
}

static void absolute(int cplx, const double *x, double *ax, size_t count)
{
    for (size_t i = 0; i < count; i++) ax[i] = cplx ? hypot(x[2 * i], x[2 * i + 1]) : fabs(x[i]);
}

/* uniform in [-1, 1), never 0 (splitmix64) */
static double next_uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    double u = (double)(z >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
    return u == 0.0 ? 0.5 : u;
}

/* ---- argument checks ---- */

static ooc_status_t check_args(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha,
                               const ooc_file_t *A, const ooc_file_t *B, const void *beta,
                               const ooc_file_t *C0, const ooc_file_t *C, int vectors,
                               int64_t sample_rows, const ooc_verify_result_t *res, int *beta_zero)
{
    ooc_err_t *err = &h->err;
    const char *fn = "ooc_verify_files";
    OOC_RETURN_ERROR_IF(ta != OOC_OP_N && ta != OOC_OP_T && ta != OOC_OP_C, err, OOC_ERR_INVALID_TRANSA,
                        "%s: transa %d is not N, T or C", fn, (int)ta);
    OOC_RETURN_ERROR_IF(tb != OOC_OP_N && tb != OOC_OP_T && tb != OOC_OP_C, err, OOC_ERR_INVALID_TRANSB,
                        "%s: transb %d is not N, T or C", fn, (int)tb);
    OOC_RETURN_ERROR_IF(A == NULL, err, OOC_ERR_NULL_A, "%s: A is NULL", fn);
    OOC_RETURN_ERROR_IF(B == NULL, err, OOC_ERR_NULL_B, "%s: B is NULL", fn);
    OOC_RETURN_ERROR_IF(C == NULL, err, OOC_ERR_NULL_C, "%s: C is NULL", fn);
    OOC_RETURN_ERROR_IF(alpha == NULL, err, OOC_ERR_NULL_ARG, "%s: alpha is NULL", fn);
    OOC_RETURN_ERROR_IF(beta == NULL, err, OOC_ERR_NULL_ARG, "%s: beta is NULL", fn);
    OOC_RETURN_ERROR_IF(res == NULL, err, OOC_ERR_NULL_ARG, "%s: res is NULL", fn);
    double be[2];
    scalar(A->spec.dtype, beta, be);
    *beta_zero = be[0] == 0 && be[1] == 0;
    OOC_RETURN_ERROR_IF(C0 == NULL && !*beta_zero, err, OOC_ERR_NULL_ARG,
                        "%s: beta is not zero but C0 is NULL", fn);
    OOC_RETURN_ERROR_IF(vectors < 0, err, OOC_ERR_PARAM_RANGE, "%s: vectors = %d is negative", fn, vectors);
    OOC_RETURN_ERROR_IF(sample_rows < 0, err, OOC_ERR_PARAM_RANGE, "%s: sample_rows = %lld is negative",
                        fn, (long long)sample_rows);

    ooc_dtype_t t = A->spec.dtype;
    OOC_RETURN_ERROR_IF(B->spec.dtype != t, err, OOC_ERR_SHAPE, "%s: A is %s but B is %s", fn,
                        dtype_name(t), dtype_name(B->spec.dtype));
    OOC_RETURN_ERROR_IF(C->spec.dtype != t, err, OOC_ERR_SHAPE, "%s: A is %s but C is %s", fn,
                        dtype_name(t), dtype_name(C->spec.dtype));
    OOC_RETURN_ERROR_IF(C0 && C0->spec.dtype != t, err, OOC_ERR_SHAPE, "%s: A is %s but C0 is %s", fn,
                        dtype_name(t), dtype_name(C0->spec.dtype));

    int64_t m, k, kb, n;
    op_shape(A, ta, &m, &k);
    op_shape(B, tb, &kb, &n);
    OOC_RETURN_ERROR_IF(k != kb, err, OOC_ERR_SHAPE,
                        "%s: op(A) is %lld x %lld but op(B) is %lld x %lld (inner dimensions differ)",
                        fn, (long long)m, (long long)k, (long long)kb, (long long)n);
    OOC_RETURN_ERROR_IF(C->spec.rows != m || C->spec.cols != n, err, OOC_ERR_SHAPE,
                        "%s: C is %lld x %lld but op(A)*op(B) is %lld x %lld", fn,
                        (long long)C->spec.rows, (long long)C->spec.cols, (long long)m, (long long)n);
    OOC_RETURN_ERROR_IF(C0 && (C0->spec.rows != m || C0->spec.cols != n), err, OOC_ERR_SHAPE,
                        "%s: C0 is %lld x %lld but op(A)*op(B) is %lld x %lld", fn,
                        (long long)C0->spec.rows, (long long)C0->spec.cols, (long long)m, (long long)n);
    OOC_RETURN_ERROR_IF(m > INT_MAX || n > INT_MAX || k > INT_MAX, err, OOC_ERR_OVERFLOW,
                        "%s: a dimension of %lld x %lld x %lld exceeds the BLAS integer range", fn,
                        (long long)m, (long long)n, (long long)k);
    return OOC_SUCCESS;
}

#define ALLOC_OR_FAIL(ptr, expr, what)                                                             \
    do {                                                                                           \
        if (((ptr) = (expr)) == NULL) {                                                            \
            st = OOC_ERR(&h->err, OOC_ERR_HOST_MEMORY, "malloc: out of memory (verify: %s)", what);  \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static ooc_status_t verify_run(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb, const void *alpha,
                               ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                               int64_t r0, int64_t r1, int vectors, int64_t sample_rows, ooc_verify_result_t *res);

ooc_status_t ooc_verify_files(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                              const void *alpha, ooc_file_t *A, ooc_file_t *B, const void *beta,
                              ooc_file_t *C0, ooc_file_t *C, int vectors, int64_t sample_rows,
                              ooc_verify_result_t *res)
{
    if (handle == NULL) return OOC_ERR_INVALID_HANDLE;
    return ooc_handle_done(handle, verify_run(handle, transa, transb, alpha, A, B, beta, C0, C, 0, 0, vectors,
                                              sample_rows, res));
}

ooc_status_t ooc_verify_files_rows(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb, const void *alpha,
                                   ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                   int64_t row_begin, int64_t row_end, int vectors, int64_t sample_rows,
                                   ooc_verify_result_t *res)
{
    if (handle == NULL) return OOC_ERR_INVALID_HANDLE;
    return ooc_handle_done(handle, verify_run(handle, transa, transb, alpha, A, B, beta, C0, C, row_begin, row_end,
                                              vectors, sample_rows, res));
}

static ooc_status_t verify_run(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb, const void *alpha,
                               ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                               int64_t r0, int64_t r1, int vectors, int64_t sample_rows, ooc_verify_result_t *res)
{
    ooc_handle_t *h = handle;
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);

    int beta_zero = 1;
    OOC_FORWARD(check_args(h, transa, transb, alpha, A, B, beta, C0, C, vectors, sample_rows, res,
                           &beta_zero));
    ooc_dtype_t t = A->spec.dtype;
    double al[2], be[2];
    scalar(t, alpha, al);
    scalar(t, beta, be);

    int cplx = is_cplx(t);
    int64_t ce = cplx ? 2 : 1, m, n, k;
    op_shape(A, transa, &m, &k);
    n = C->spec.cols;
    /* rows [r0, r1) of C alone: m counts them from here on, and the passes
     * over op(A), C0 and C read only them */
    OOC_RETURN_ERROR_IF((r0 != 0 || r1 != 0) && (r0 < 0 || r0 >= r1 || r1 > m), &h->err, OOC_ERR_ROW_RANGE,
                        "ooc_verify_files_rows: rows [%lld, %lld) are not a range of the %lld rows of C: give 0 <= "
                        "row_begin < row_end <= %lld, or 0, 0 for all", (long long)r0, (long long)r1, (long long)m,
                        (long long)m);
    if (r0 == 0 && r1 == 0) r1 = m;
    m = r1 - r0;
    int use_ab = k > 0 && !(al[0] == 0 && al[1] == 0); /* alpha*op(A)*op(B) contributes */
    int use_c0 = !beta_zero;
    double abs_al = hypot(al[0], al[1]);
    double eps = (t == OOC_R32 || t == OOC_C32) ? FLT_EPSILON : DBL_EPSILON;

    uint64_t budget = (uint64_t)h->param[OOC_PARAM_HOST_MEM];
    if (budget == 0) {
        uint64_t half = ooc_limit_mem_available() / 2;
        budget = half < DEFAULT_BUDGET ? half : DEFAULT_BUDGET;
        if (budget < BUDGET_MIN) budget = BUDGET_MIN;
    }
    uint64_t quarter = budget / 4, chunk = quarter < CHUNK_MAX ? quarter : CHUNK_MAX;
    uint64_t bytes = 0;
    ooc_status_t st = OOC_SUCCESS;
    cmp_t cmp = {0, 0, 0};
    ooc_verify_result_t r;
    memset(&r, 0, sizeof r);
    r.tolerance = 4.0 * (double)(k + 2) * eps;

    int64_t *rows = NULL;
    double *Ar = NULL, *Arabs = NULL, *R = NULL, *Rb = NULL, *Cr = NULL, *C0r = NULL;
    double *X = NULL, *Xabs = NULL, *Y = NULL, *Yabs = NULL, *Z = NULL, *Zb = NULL, *W = NULL;

    /* Exact when the product is small and what it holds (op(A) and three
     * m x n arrays, as doubles) fits in the budget beside one chunk. */
    double ced = (double)(ce * 8);
    double ws = (double)m * (double)k * (ced + 8) + (double)m * (double)n * (2 * ced + 8 + (use_c0 ? ced : 0)) +
                (double)m * 8;
    int exact = (unsigned __int128)m * (unsigned __int128)n * (unsigned __int128)k <= EXACT_MAX_MNK &&
                ws <= (double)(budget - chunk);

    int64_t s; /* rows recomputed exactly */
    if (exact) {
        s = m;
        vectors = 0;
    } else {
        s = sample_rows < m ? sample_rows : m;
        /* what the sample holds must fit in a quarter of the budget */
        double per_row = (double)k * (ced + 8) + (double)n * (2 * ced + 8 + (use_c0 ? ced : 0)) + 8;
        double fit = floor((double)quarter / per_row);
        if ((double)s > fit) s = fit >= 1 ? (int64_t)fit : 1;
        OOC_RETURN_ERROR_IF(vectors == 0 && s == 0 && m > 0 && n > 0, &h->err, OOC_ERR_PARAM_RANGE,
                            "ooc_verify_files: a %lld x %lld x %lld product is too large for an exact "
                            "check, and vectors = sample_rows = 0 would check nothing",
                            (long long)m, (long long)n, (long long)k);
    }
    if (m == 0 || n == 0) s = 0, vectors = 0;
    int64_t v = vectors;

    /* the sampled rows, spread evenly, first and last included */
    if (s > 0) {
        ALLOC_OR_FAIL(rows, ooc_verify_alloc3((uint64_t)s, sizeof(int64_t), 1), "row list");
        for (int64_t i = 0; i < s; i++)
            rows[i] = s == 1 ? 0 : (int64_t)((unsigned __int128)i * (unsigned __int128)(m - 1) / (unsigned __int128)(s - 1));
        ALLOC_OR_FAIL(R, ooc_verify_zalloc3((uint64_t)s * ce, (uint64_t)n, sizeof(double)), "reference rows");
        ALLOC_OR_FAIL(Rb, ooc_verify_zalloc3((uint64_t)s, (uint64_t)n, sizeof(double)), "bound rows");
        ALLOC_OR_FAIL(Cr, ooc_verify_alloc3((uint64_t)s * ce, (uint64_t)n, sizeof(double)), "rows of C");
        if (use_c0) ALLOC_OR_FAIL(C0r, ooc_verify_alloc3((uint64_t)s * ce, (uint64_t)n, sizeof(double)), "rows of C0");
        if (use_ab) {
            ALLOC_OR_FAIL(Ar, ooc_verify_alloc3((uint64_t)s * ce, (uint64_t)k, sizeof(double)), "rows of op(A)");
            ALLOC_OR_FAIL(Arabs, ooc_verify_alloc3((uint64_t)s, (uint64_t)k, sizeof(double)), "rows of |op(A)|");
        }
    }
    if (v > 0) {
        ALLOC_OR_FAIL(X, ooc_verify_alloc3((uint64_t)n * ce, (uint64_t)v, sizeof(double)), "vectors");
        ALLOC_OR_FAIL(Xabs, ooc_verify_alloc3((uint64_t)n, (uint64_t)v, sizeof(double)), "vectors");
        ALLOC_OR_FAIL(Z, ooc_verify_zalloc3((uint64_t)m * ce, (uint64_t)v, sizeof(double)), "alpha*op(A)*op(B)*X");
        ALLOC_OR_FAIL(Zb, ooc_verify_zalloc3((uint64_t)m, (uint64_t)v, sizeof(double)), "bound");
        ALLOC_OR_FAIL(W, ooc_verify_zalloc3((uint64_t)m * ce, (uint64_t)v, sizeof(double)), "C*X");
        if (use_ab) {
            ALLOC_OR_FAIL(Y, ooc_verify_zalloc3((uint64_t)k * ce, (uint64_t)v, sizeof(double)), "op(B)*X");
            ALLOC_OR_FAIL(Yabs, ooc_verify_zalloc3((uint64_t)k, (uint64_t)v, sizeof(double)), "|op(B)|*|X|");
        }
        uint64_t seed = SEED;
        for (int64_t i = 0; i < n * v * ce; i++) X[i] = next_uniform(&seed);
        absolute(cplx, X, Xabs, (size_t)(n * v));
    }

    pass_t p;
    if (use_ab && (s > 0 || v > 0)) {
        /* rows of op(A) now when that is cheap (stored lines) or needed
         * anyway (exact, no vectors): then one pass over B does both */
        int a_lines_rows = (A->spec.layout == OOC_ROW_MAJOR) == (transa == OOC_OP_N);
        int early = s > 0 && (a_lines_rows || v == 0);
        if (early) {
            if ((st = ooc_verify_gather(h, A, transa, rows, s, Ar, r0, r1, chunk, &bytes)) != OOC_SUCCESS) goto out;
            absolute(cplx, Ar, Arabs, (size_t)(s * k));
        }
        /* pass over B: Y = op(B) X, Yabs = |op(B)| |X|; sampled rows R = alpha Ar op(B) */
        memset(&p, 0, sizeof p);
        if (v > 0) {
            p.v = v, p.V = X, p.Vabs = Xabs, p.OUT = Y, p.OUTabs = Yabs;
            p.ls[0] = 1, p.lsabs = 1;
        }
        if (early) {
            p.S = s, p.L = Ar, p.Labs = Arabs, p.ROUT = R, p.ROUTabs = Rb;
            p.rs[0] = al[0], p.rs[1] = al[1], p.rsabs = abs_al;
        }
        if ((st = ooc_verify_pass(h, B, transb, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
        /* pass over A: Z = alpha op(A) Y, Zb = |alpha| |op(A)| Yabs; rows of op(A) if not yet */
        if (v > 0 || !early) {
            memset(&p, 0, sizeof p);
            if (v > 0) {
                p.v = v, p.V = Y, p.Vabs = Yabs, p.OUT = Z, p.OUTabs = Zb;
                p.ls[0] = al[0], p.ls[1] = al[1], p.lsabs = abs_al;
            }
            if (s > 0 && !early) p.gs = s, p.rows = rows, p.G = Ar;
            p.r0 = r0, p.r1 = r1;
            if ((st = ooc_verify_pass(h, A, transa, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
        }
        if (s > 0 && !early) { /* second pass over B for the sampled rows */
            absolute(cplx, Ar, Arabs, (size_t)(s * k));
            memset(&p, 0, sizeof p);
            p.S = s, p.L = Ar, p.Labs = Arabs, p.ROUT = R, p.ROUTabs = Rb;
            p.rs[0] = al[0], p.rs[1] = al[1], p.rsabs = abs_al;
            if ((st = ooc_verify_pass(h, B, transb, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
        }
    }
    /* C0 and C: Z += beta C0 X (with its bound), W = C X; their sampled rows */
    for (int which = 0; which < 2 && (s > 0 || v > 0); which++) {
        const ooc_file_t *f = which == 0 ? C0 : C;
        if (which == 0 && !use_c0) continue;
        double *G = which == 0 ? C0r : Cr;
        if (v == 0) {
            if ((st = ooc_verify_gather(h, f, OOC_OP_N, rows, s, G, r0, r1, chunk, &bytes)) != OOC_SUCCESS) goto out;
            continue;
        }
        memset(&p, 0, sizeof p);
        p.v = v, p.V = X, p.Vabs = Xabs;
        if (which == 0) {
            p.OUT = Z, p.OUTabs = Zb;
            p.ls[0] = be[0], p.ls[1] = be[1], p.lsabs = hypot(be[0], be[1]);
        } else {
            p.OUT = W, p.ls[0] = 1;
        }
        if (s > 0) p.gs = s, p.rows = rows, p.G = G;
        p.r0 = r0, p.r1 = r1;
        if ((st = ooc_verify_pass(h, f, OOC_OP_N, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
    }

    if (v > 0) compare(cplx, 0, W, Z, Zb, (size_t)(m * v), &cmp);
    if (s > 0) {
        if (use_c0) add_c0(cplx, R, Rb, C0r, be, (size_t)(s * n));
        compare(cplx, 1, Cr, R, Rb, (size_t)(s * n), &cmp);
    }

    r.exact = exact;
    r.vectors = (int)v;
    r.rows_checked = s;
    r.max_rel_err = cmp.mismatch ? INFINITY : cmp.worst;
    r.nonfinite = cmp.nonfinite;
    r.passed = !cmp.mismatch && cmp.worst <= r.tolerance;
    r.bytes_read = bytes;
    *res = r;

out:
    free(rows);
    free(Ar);
    free(Arabs);
    free(R);
    free(Rb);
    free(Cr);
    free(C0r);
    free(X);
    free(Xabs);
    free(Y);
    free(Yabs);
    free(Z);
    free(Zb);
    free(W);
    return st;
}
