/* SPDX-License-Identifier: MIT */
/*
 * verify.c: ooc_verify_files(), the CPU check of a file multiply
 * C = alpha*op(A)*op(B) + beta*C0 with OpenBLAS.
 *
 * Small products are recomputed exactly (every element compared): element
 * (i, l) passes when |C_il - R_il| <= tol b_il + under, where R is the
 * product in double, tol = 4 (k + 2) eps of the data type (8x the worst-case
 * rounding of a k-term sum, gamma_{k+2}), b_il = |alpha| (|op(A)| |op(B)|)_il
 * + |beta| |C0_il|, and under = 4 (k + 4) max(1, |alpha|) times the type's
 * smallest subnormal (the absolute error of products that underflow
 * gradually, the GPU's and ours).
 *
 * Large ones get Freivalds' check: W = C X against Z = alpha op(A) (op(B) X)
 * + beta C0 X for a few random vectors X (all at once, so each file is read
 * once; X's entries independent, uniform in [-1, 1]). A correct C has errors
 * e_il, |e_il| <= tol b_il + under, so for row i and vector x (Hoeffding)
 * |sum_l e_il x_l| <= lambda ||e_i||_2 but with probability 2 exp(-lambda^2
 * / 2) (twice that, and sqrt(2) lambda, for complex data), and
 * ||e_i||_2 <= tol sqrt(M_i S_i) + sqrt(n) under, since sum_l b_il^2 <=
 * max_l b_il * sum_l b_il <= M_i S_i with S_i = |alpha| |op(A)| |op(B)| 1 +
 * |beta| |C0| 1 (a vector of ones beside X) and M_i = |alpha| |op(A)| u +
 * |beta| max_l |C0_il| (u_p = max_l |op(B)_pl|), computed in the same passes
 * (no squares: nothing overflows or underflows that the sums do not).
 * lambda = 8: 2.5e-14 per row and vector for errors at the tolerance itself;
 * for errors within the worst-case rounding of any summation order (tol / 8)
 * it is exp(-2048). The row and vector pass when |W - Z| <= min(that, the
 * first bound tol Zb + under sum_l |x_l|, Zb = |alpha| |op(A)| |op(B)| |X| +
 * |beta| |C0| |X|) + rho (2 + tol) Zb + 2 N eta (1 + |alpha| + |beta|), the
 * last two for our own rounding of W and Z in double (N = n + k + 4, eta
 * its smallest subnormal; rho = eps_double min(N, lambda sqrt N): the
 * worst case, or Higham and Mary's probabilistic bound, twice over). An
 * element off by d is caught where |d x_l| exceeds twice the threshold for
 * some vector. max_rel_err reports tol |W - Z| / threshold.
 *
 * NaN and infinities: the passes count and hash, by row, where op(A), C0 and
 * C hold them, mark the columns of op(B) holding them, and replace them by 0
 * for the products with X; X's rows on those columns of op(B) are 0 (and B
 * read again). C must hold its NaN and infinities exactly where the inputs
 * put the reference's (whole rows for op(A)'s, columns for op(B)'s, single
 * elements for C0's); its other elements are still checked, save the rows
 * where C0 has one (counted in rows_unverified). With finite inputs, a
 * non-finite value of the check (double overflowed) or a non-finite C where
 * the elements may overflow C's type is undecided: OOC_ERR_OVERFLOW, unless
 * something else failed.
 *
 * Within the worst case, wrong: in single precision the worst case is
 * loose for a large k (4 (k + 2) eps is 0.002 at k = 4096), and a whole row
 * of C left zero, or another block's values, can lie within it (for random
 * data |R_il| / b_il is about 1 / sqrt(k)). An element (exact rows) or a
 * row and vector (Freivalds) is also wrong ("off") when it is off by about
 * its own size, d >= |R| / 2 (|Z| / 2), and by more than the same threshold
 * with tol_p = 16 sqrt(k + 2) eps in place of tol: 32 times the 2-norm
 * rounding of a k-term sum (Higham and Mary), a multiple that rounding
 * errors which add up (a sum of equal terms, accumulated in one order: 0.1
 * to 0.25 k eps / 2 measured) stay under up to k = 16384, and then only
 * where the result also cancels to about its own error. Correct results are
 * never so far off their own size but where they cancel (|R| within the
 * worst-case error of b); a missing or stale block is, where |R| / b is
 * above tol_p (single precision, random data: k up to ~50000 by Freivalds,
 * beyond that by the sampled rows' elements). With TF32 (the handle's
 * OOC_PARAM_MATH_MODE, single precision) both tolerances add 2^-7: the
 * inputs rounded to 10 mantissa bits put each product within 2^-10 of its
 * value (8 times that, as the rest).
 *
 * Plus exact recomputation of sampled rows of C, whose rows of op(A) are read
 * first when they are stored lines (then the pass over B serves both), else
 * gathered in the pass over A (then B is read again).
 *
 * Files are read in chunks of whole stored lines within a quarter of the
 * host budget, by the passes of verify_pass.c; the sampled rows take at most
 * another quarter, Freivalds' arrays half (at least ROWS_MIN): for more rows
 * of C, ranges of rows are checked one after the other. A row range of C
 * (one process's rows of a split job) reads only those rows of op(A), C0 and
 * C, and checks them alone; a column range (ooc_verify_files_cols: the
 * columns of a split job whose blocks are column blocks) is the row range of
 * C^T = alpha op(B)^T op(A)^T + beta C0^T, checked on transposed views of the
 * files (the same bytes read the other way); a rectangle, rows and columns
 * (ooc_verify_files_rect: a rank's part of a job split as a grid), reads
 * only those rows of op(A), those columns of op(B) and that part of C0 and
 * C, and checks it as the product of those alone. All arithmetic is in
 * double precision.
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
                        ooc_dtype_word(t), ooc_dtype_word(B->spec.dtype));
    OOC_RETURN_ERROR_IF(C->spec.dtype != t, err, OOC_ERR_SHAPE, "%s: A is %s but C is %s", fn,
                        ooc_dtype_word(t), ooc_dtype_word(C->spec.dtype));
    OOC_RETURN_ERROR_IF(C0 && C0->spec.dtype != t, err, OOC_ERR_SHAPE, "%s: A is %s but C0 is %s", fn,
                        ooc_dtype_word(t), ooc_dtype_word(C0->spec.dtype));

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
                               int64_t r0, int64_t r1, int64_t c0, int64_t c1, int vectors, int64_t sample_rows,
                               int cols, ooc_verify_result_t *res);

ooc_status_t ooc_verify_files(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                              const void *alpha, ooc_file_t *A, ooc_file_t *B, const void *beta,
                              ooc_file_t *C0, ooc_file_t *C, int vectors, int64_t sample_rows,
                              ooc_verify_result_t *res)
{
    if (handle == NULL) return OOC_ERR_INVALID_HANDLE;
    return ooc_handle_done(handle, verify_run(handle, transa, transb, alpha, A, B, beta, C0, C, 0, 0, 0, 0, vectors,
                                              sample_rows, 0, res));
}

ooc_status_t ooc_verify_files_rows(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb, const void *alpha,
                                   ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                   int64_t row_begin, int64_t row_end, int vectors, int64_t sample_rows,
                                   ooc_verify_result_t *res)
{
    if (handle == NULL) return OOC_ERR_INVALID_HANDLE;
    return ooc_handle_done(handle, verify_run(handle, transa, transb, alpha, A, B, beta, C0, C, row_begin, row_end,
                                              0, 0, vectors, sample_rows, 0, res));
}

ooc_status_t ooc_verify_files_rect(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb, const void *alpha,
                                   ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                   int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end,
                                   int vectors, int64_t sample_rows, ooc_verify_result_t *res)
{
    if (handle == NULL) return OOC_ERR_INVALID_HANDLE;
    return ooc_handle_done(handle, verify_run(handle, transa, transb, alpha, A, B, beta, C0, C, row_begin, row_end,
                                              col_begin, col_end, vectors, sample_rows, 0, res));
}

/* f read as its transpose: the same bytes, rows and columns swapped and the
 * layout flipped (element (i, j) of the view is element (j, i) of f, at the
 * same offset). A shallow copy sharing f's descriptor and paths: the passes
 * only read it; never closed, freed or written. */
static ooc_file_t transposed_view(const ooc_file_t *f)
{
    ooc_file_t v = *f;
    v.spec.rows = f->spec.cols;
    v.spec.cols = f->spec.rows;
    v.spec.layout = f->spec.layout == OOC_ROW_MAJOR ? OOC_COL_MAJOR : OOC_ROW_MAJOR;
    return v;
}

/* Columns [c0, c1) of C are rows [c0, c1) of C^T = alpha op(B)^T op(A)^T +
 * beta C0^T, and op(B)^T is op_tb(B^T) for N, T and C alike (C: conj(B) =
 * (B^H)^T), op(A)^T likewise: verify_run on the views B^T, A^T, C0^T, C^T
 * with the ops swapped. The arguments are checked first as the caller gave
 * them, so that an error names the caller's A, B and C. */
static ooc_status_t verify_cols(ooc_handle_t *h, ooc_op_t transa, ooc_op_t transb, const void *alpha, ooc_file_t *A,
                                ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C, int64_t c0,
                                int64_t c1, int vectors, int64_t sample_rows, ooc_verify_result_t *res)
{
    ooc_err_clear(&h->err);
    int beta_zero = 1;
    OOC_FORWARD(check_args(h, transa, transb, alpha, A, B, beta, C0, C, vectors, sample_rows, res, &beta_zero));
    int64_t n = C->spec.cols;
    OOC_RETURN_ERROR_IF((c0 != 0 || c1 != 0) && (c0 < 0 || c0 >= c1 || c1 > n), &h->err, OOC_ERR_ROW_RANGE,
                        "ooc_verify_files_cols: columns [%lld, %lld) are not a range of the %lld columns of C: give "
                        "0 <= col_begin < col_end <= %lld, or 0, 0 for all", (long long)c0, (long long)c1,
                        (long long)n, (long long)n);
    ooc_file_t a = transposed_view(A), b = transposed_view(B), c = transposed_view(C);
    ooc_file_t c0v = C0 ? transposed_view(C0) : c;
    return verify_run(h, transb, transa, alpha, &b, &a, beta, C0 ? &c0v : NULL, &c, c0, c1, 0, 0, vectors,
                      sample_rows, 1, res);
}

ooc_status_t ooc_verify_files_cols(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb, const void *alpha,
                                   ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                   int64_t col_begin, int64_t col_end, int vectors, int64_t sample_rows,
                                   ooc_verify_result_t *res)
{
    if (handle == NULL) return OOC_ERR_INVALID_HANDLE;
    return ooc_handle_done(handle, verify_cols(handle, transa, transb, alpha, A, B, beta, C0, C, col_begin, col_end,
                                               vectors, sample_rows, res));
}

/* the check of rows [r0, r1) of C (m of them from here on) in budget bytes */
typedef struct {
    ooc_handle_t *h;
    ooc_op_t ta, tb;
    ooc_file_t *A, *B, *C0, *C;
    double al[2], be[2];
    int use_ab, use_c0;
    int cols; /* C is the caller's C^T (verify_cols): messages speak of its columns */
    int64_t k, n;   /* n: the columns checked, [c0, c1) of C (c1 0: all of them, n = C's) */
    int64_t c0, c1;
    uint64_t budget;
} job_t;

#define LAMBDA 8.0             /* Hoeffding's multiple of the errors' 2-norm: see the top comment */
#define OFF_LAMBDA 16.0        /* tol_p = OFF_LAMBDA sqrt(k + 2) eps: see the top comment */
#define TF32_TOL 0x1.0p-7      /* added to both with TF32: see the top comment */
#define ROWS_MIN ((uint64_t)4 << 20) /* Freivalds' arrays may take this much of a smaller budget */

static ooc_status_t verify_range(const job_t *j, int64_t r0, int64_t r1, int64_t v, int64_t sample_rows,
                                 ooc_verify_result_t *res, cmp_t *cmp)
{
    ooc_handle_t *h = j->h;
    ooc_file_t *A = j->A, *B = j->B, *C0 = j->C0, *C = j->C;
    ooc_op_t transa = j->ta, transb = j->tb;
    const double *al = j->al, *be = j->be;
    ooc_dtype_t t = A->spec.dtype;
    int cplx = is_cplx(t), use_ab = j->use_ab, use_c0 = j->use_c0;
    int64_t ce = cplx ? 2 : 1, m = r1 - r0, n = j->n, k = j->k, va = v + 2;
    double abs_al = hypot(al[0], al[1]), abs_be = hypot(be[0], be[1]);
    int single = t == OOC_R32 || t == OOC_C32;
    double eps = single ? FLT_EPSILON : DBL_EPSILON;
    double typemax = single ? FLT_MAX : DBL_MAX;
    /* (the bounds are of alpha op(A) op(B): a BLAS's products overflow
     * before alpha scales them, at typemax / |alpha|) */
    double prodmax = abs_al > 0 && abs_al < 1 ? typemax * abs_al : typemax;
    int tf32 = single && h->param[OOC_PARAM_MATH_MODE] == OOC_MATH_TF32;
    double tol = 4.0 * (double)(k + 2) * eps + (tf32 ? TF32_TOL : 0.0);
    double tol_p = OFF_LAMBDA * sqrt((double)(k + 2)) * eps + (tf32 ? TF32_TOL : 0.0);
    /* absolute error of gradual underflow: half the smallest subnormal per
     * rounded product, alpha times those of the sums */
    double under = 4.0 * (double)(k + 4) * (single ? FLT_TRUE_MIN : DBL_TRUE_MIN) * (abs_al > 1 ? abs_al : 1);
    uint64_t budget = j->budget, quarter = budget / 4, chunk = quarter < CHUNK_MAX ? quarter : CHUNK_MAX;
    uint64_t bytes = 0;
    ooc_status_t st = OOC_SUCCESS;
    ooc_verify_result_t r;
    memset(&r, 0, sizeof r);
    r.tolerance = tol;

    int64_t *rows = NULL;
    double *Ar = NULL, *Arabs = NULL, *R = NULL, *Rb = NULL, *Cr = NULL, *C0r = NULL;
    double *X = NULL, *Xabs = NULL, *Y = NULL, *Yabs = NULL, *Z = NULL, *Zb = NULL, *W = NULL, *c0max = NULL;
    double *xs = NULL;
    unsigned char *abad = NULL, *bbad = NULL;
    ooc_verify_nf_t *nfA = NULL, *nfC0 = NULL, *nfC = NULL;

    /* Exact when the product is small and what it holds (op(A) and three
     * m x n arrays, as doubles) fits in the budget beside one chunk. */
    double ced = (double)(ce * 8);
    double ws = (double)m * (double)k * (ced + 9) + (double)m * (double)n * (2 * ced + 8 + (use_c0 ? ced : 0)) +
                (double)m * 8 + (double)n;
    int exact = (unsigned __int128)m * (unsigned __int128)n * (unsigned __int128)k <= EXACT_MAX_MNK &&
                ws <= (double)(budget - chunk);

    int64_t s; /* rows recomputed exactly */
    if (exact) {
        s = m;
        v = 0;
    } else {
        s = sample_rows < m ? sample_rows : m;
        /* what the sample holds must fit in a quarter of the budget */
        double per_row = (double)k * (ced + 9) + (double)n * (2 * ced + 8 + (use_c0 ? ced : 0)) + 8;
        double fit = floor((double)quarter / per_row);
        if ((double)s > fit) s = (int64_t)fit;
        /* the dimensions as the caller sees them: C^T is n x m (m: the range) */
        long long cm = (long long)(j->cols ? n : m), cn = (long long)(j->cols ? m : n);
        OOC_RETURN_ERROR_IF(v == 0 && sample_rows == 0 && m > 0 && n > 0, &h->err, OOC_ERR_PARAM_RANGE,
                            "ooc_verify_files: a %lld x %lld x %lld product is too large for an exact check in "
                            "the host budget of %llu bytes, and vectors = sample_rows = 0 would check nothing",
                            cm, cn, (long long)k, (unsigned long long)budget);
        OOC_RETURN_ERROR_IF(v == 0 && s == 0 && m > 0 && n > 0, &h->err, OOC_ERR_HOST_MEMORY,
                            "ooc_verify_files: a %lld x %lld x %lld product is too large for an exact check in "
                            "the host budget of %llu bytes, which holds no sampled %s either (one needs %.0f "
                            "bytes in a quarter of it), and vectors = 0",
                            cm, cn, (long long)k, (unsigned long long)budget, j->cols ? "column" : "row", per_row);
    }
    if (m == 0 || n == 0) s = 0, v = 0;

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
            ALLOC_OR_FAIL(abad, ooc_verify_zalloc3((uint64_t)s, 1, 1), "rows of op(A)");
        }
    }
    if (use_ab && (s > 0 || v > 0)) ALLOC_OR_FAIL(bbad, ooc_verify_zalloc3((uint64_t)n, 1, 1), "columns of op(B)");
    if (v > 0) {
        ALLOC_OR_FAIL(X, ooc_verify_alloc3((uint64_t)n * ce, (uint64_t)v, sizeof(double)), "vectors");
        ALLOC_OR_FAIL(Xabs, ooc_verify_alloc3((uint64_t)n, (uint64_t)va, sizeof(double)), "vectors");
        ALLOC_OR_FAIL(xs, ooc_verify_zalloc3((uint64_t)v, 1, sizeof(double)), "vectors");
        ALLOC_OR_FAIL(Z, ooc_verify_zalloc3((uint64_t)m * ce, (uint64_t)v, sizeof(double)), "alpha*op(A)*op(B)*X");
        ALLOC_OR_FAIL(Zb, ooc_verify_zalloc3((uint64_t)m, (uint64_t)va, sizeof(double)), "bound");
        ALLOC_OR_FAIL(W, ooc_verify_zalloc3((uint64_t)m * ce, (uint64_t)v, sizeof(double)), "C*X");
        ALLOC_OR_FAIL(nfC, ooc_verify_zalloc3((uint64_t)m, 1, sizeof *nfC), "NaN of C");
        if (use_ab) {
            ALLOC_OR_FAIL(Y, ooc_verify_zalloc3((uint64_t)k * ce, (uint64_t)v, sizeof(double)), "op(B)*X");
            ALLOC_OR_FAIL(Yabs, ooc_verify_zalloc3((uint64_t)k, (uint64_t)va, sizeof(double)), "|op(B)|*|X|");
            ALLOC_OR_FAIL(nfA, ooc_verify_zalloc3((uint64_t)m, 1, sizeof *nfA), "NaN of op(A)");
        }
        if (use_c0) {
            ALLOC_OR_FAIL(nfC0, ooc_verify_zalloc3((uint64_t)m, 1, sizeof *nfC0), "NaN of C0");
            ALLOC_OR_FAIL(c0max, ooc_verify_zalloc3((uint64_t)m, 1, sizeof(double)), "row maxima of C0");
        }
        uint64_t seed = SEED;
        for (int64_t i = 0; i < n * v * ce; i++) X[i] = next_uniform(&seed);
        /* |X|, then a vector of ones (S), then zeros (room for u) */
        for (int64_t l = 0; l < n; l++) {
            for (int64_t q = 0; q < v; q++) Xabs[l * va + q] = ooc_verify_modulus(cplx, X, (size_t)(l * v + q));
            Xabs[l * va + v] = 1, Xabs[l * va + v + 1] = 0;
        }
    }

    pass_t p;
    if (use_ab && (s > 0 || v > 0)) {
        /* rows of op(A) now when that is cheap (stored lines) or needed
         * anyway (exact, no vectors): then one pass over B does both */
        int a_lines_rows = (A->spec.layout == OOC_ROW_MAJOR) == (transa == OOC_OP_N);
        int early = s > 0 && (a_lines_rows || v == 0);
        if (early) {
            if ((st = ooc_verify_gather(h, A, transa, rows, s, Ar, r0, r1, 0, 0, chunk, &bytes)) != OOC_SUCCESS)
                goto out;
            ooc_verify_absolute(cplx, Ar, Arabs, (size_t)(s * k));
        }
        /* pass over B: Y = op(B) X, Yabs = |op(B)| [|X| 1 0], u; sampled rows R = alpha Ar op(B) */
        for (int again = 0; again < 2; again++) {
            memset(&p, 0, sizeof p);
            p.c0 = j->c0, p.c1 = j->c1;
            p.badcol = bbad;
            if (v > 0) {
                p.v = v, p.V = X, p.Vabs = Xabs, p.OUT = Y, p.OUTabs = Yabs, p.va = va;
                p.ls[0] = 1, p.lsabs = 1;
                p.sanitize = 1, p.rmax = Yabs + v + 1, p.rmax_ld = va;
            }
            if (early && !again) {
                p.S = s, p.L = Ar, p.Labs = Arabs, p.ROUT = R, p.ROUTabs = Rb;
                p.rs[0] = al[0], p.rs[1] = al[1], p.rsabs = abs_al;
            }
            if ((st = ooc_verify_pass(h, B, transb, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
            /* NaN or Inf in op(B): X without their columns (C's columns are
             * then left out too), and B again for Y */
            int64_t nb = 0;
            for (int64_t l = 0; l < n; l++) nb += bbad[l];
            if (v == 0 || nb == 0 || again) break;
            for (int64_t l = 0; l < n; l++)
                if (bbad[l]) {
                    memset(X + l * v * ce, 0, (size_t)(v * ce) * sizeof(double));
                    memset(Xabs + l * va, 0, (size_t)va * sizeof(double));
                }
            memset(Y, 0, (size_t)(k * v * ce) * sizeof(double));
            memset(Yabs, 0, (size_t)(k * va) * sizeof(double));
        }
        /* pass over A: Z = alpha op(A) Y, Zb = |alpha| |op(A)| Yabs; rows of op(A) if not yet */
        if (v > 0 || !early) {
            memset(&p, 0, sizeof p);
            if (v > 0) {
                p.v = v, p.V = Y, p.Vabs = Yabs, p.OUT = Z, p.OUTabs = Zb, p.va = va;
                p.ls[0] = al[0], p.ls[1] = al[1], p.lsabs = abs_al;
                p.sanitize = 1, p.nf = nfA;
            }
            if (s > 0 && !early) p.gs = s, p.rows = rows, p.G = Ar;
            p.r0 = r0, p.r1 = r1;
            if ((st = ooc_verify_pass(h, A, transa, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
        }
        if (s > 0 && !early) { /* second pass over B for the sampled rows */
            ooc_verify_absolute(cplx, Ar, Arabs, (size_t)(s * k));
            memset(&p, 0, sizeof p);
            p.c0 = j->c0, p.c1 = j->c1;
            p.S = s, p.L = Ar, p.Labs = Arabs, p.ROUT = R, p.ROUTabs = Rb;
            p.rs[0] = al[0], p.rs[1] = al[1], p.rsabs = abs_al;
            if ((st = ooc_verify_pass(h, B, transb, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
        }
        for (int64_t q = 0; q < s; q++)
            for (int64_t l = 0; l < k && !abad[q]; l++) abad[q] = ooc_verify_nonfinite_kind(cplx, Ar, (size_t)(q * k + l)) != 0;
    }
    if (v > 0)
        for (int64_t l = 0; l < n; l++)
            for (int64_t q = 0; q < v; q++) xs[q] += Xabs[l * va + q];
    /* C0 and C: Z += beta C0 X (with its bounds), W = C X; their sampled rows */
    for (int which = 0; which < 2 && (s > 0 || v > 0); which++) {
        const ooc_file_t *f = which == 0 ? C0 : C;
        if (which == 0 && !use_c0) continue;
        double *G = which == 0 ? C0r : Cr;
        if (v == 0) {
            if ((st = ooc_verify_gather(h, f, OOC_OP_N, rows, s, G, r0, r1, j->c0, j->c1, chunk, &bytes)) != OOC_SUCCESS)
                goto out;
            continue;
        }
        memset(&p, 0, sizeof p);
        p.v = v, p.V = X, p.sanitize = 1;
        if (which == 0) {
            p.Vabs = Xabs, p.va = va, p.OUT = Z, p.OUTabs = Zb;
            p.ls[0] = be[0], p.ls[1] = be[1], p.lsabs = abs_be;
            p.nf = nfC0, p.skipcol = bbad, p.rmax = c0max, p.rmax_ld = 1;
        } else {
            p.OUT = W, p.ls[0] = 1, p.nf = nfC;
        }
        if (s > 0) p.gs = s, p.rows = rows, p.G = G;
        p.r0 = r0, p.r1 = r1, p.c0 = j->c0, p.c1 = j->c1;
        if ((st = ooc_verify_pass(h, f, OOC_OP_N, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
    }

    int64_t unverified = 0;
    if (v > 0) {
        freivalds_t f = {cplx, m, n, k, v, r0, W, Z, Zb, c0max, xs, abs_be, tol, under, typemax,
                         LAMBDA * (cplx ? 1.4142135623730951 : 1.0), 0, 0, tol_p, nfA, nfC0, nfC, 0, 0, 0, prodmax};
        double N = (double)(n + k + 4);
        f.rho = DBL_EPSILON * (N < LAMBDA * sqrt(N) ? N : LAMBDA * sqrt(N));
        f.vabs = 2.0 * N * DBL_TRUE_MIN * (1 + abs_al + abs_be);
        for (int64_t l = 0; l < n; l++) {
            f.hash_all += ooc_verify_col_hash(l);
            if (bbad && bbad[l]) f.hash_b += ooc_verify_col_hash(l), f.count_b++;
        }
        ooc_verify_compare_freivalds(&f, cmp, &unverified);
    }
    if (s > 0) {
        if (use_c0) ooc_verify_add_c0(cplx, R, Rb, C0r, be, (size_t)(s * n));
        cmp_t c = CMP_INIT;
        ooc_verify_compare_rows(cplx, Cr, R, Rb, s, n, abad, bbad, C0r, rows, r0, tol, tol_p, under, typemax, prodmax,
                                &c);
        if (c.worst > cmp->worst) cmp->worst = c.worst;
        cmp->mismatch |= c.mismatch;
        if (c.inconclusive && !cmp->inconclusive) cmp->incon_row = c.incon_row;
        cmp->inconclusive += c.inconclusive;
        if (c.off && (!cmp->off || c.off_row < cmp->off_row)) cmp->off_row = c.off_row;
        cmp->off += c.off;
        if (v == 0) cmp->nonfinite += c.nonfinite;
    }

    r.exact = exact;
    r.vectors = (int)v;
    r.rows_checked = s;
    r.nonfinite = 0;
    r.rows_unverified = unverified;
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
    free(xs);
    free(Y);
    free(Yabs);
    free(Z);
    free(Zb);
    free(W);
    free(c0max);
    free(abad);
    free(bbad);
    free(nfA);
    free(nfC0);
    free(nfC);
    return st;
}

/* cols: the files are the transposed views of verify_cols (messages speak
 * of the caller's C: its columns, its shape) */
static ooc_status_t verify_run(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb, const void *alpha,
                               ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                               int64_t r0, int64_t r1, int64_t c0, int64_t c1, int vectors, int64_t sample_rows,
                               int cols, ooc_verify_result_t *res)
{
    ooc_handle_t *h = handle;
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);

    int beta_zero = 1;
    OOC_FORWARD(check_args(h, transa, transb, alpha, A, B, beta, C0, C, vectors, sample_rows, res,
                           &beta_zero));
    job_t j;
    memset(&j, 0, sizeof j);
    j.h = h, j.ta = transa, j.tb = transb, j.A = A, j.B = B, j.C0 = C0, j.C = C, j.cols = cols;
    ooc_dtype_t t = A->spec.dtype;
    scalar(t, alpha, j.al);
    scalar(t, beta, j.be);
    int64_t m;
    op_shape(A, transa, &m, &j.k);
    j.n = C->spec.cols;
    /* rows [r0, r1) of C alone: the passes over op(A), C0 and C read only them */
    OOC_RETURN_ERROR_IF((r0 != 0 || r1 != 0) && (r0 < 0 || r0 >= r1 || r1 > m), &h->err, OOC_ERR_ROW_RANGE,
                        "ooc_verify_files: rows [%lld, %lld) are not a range of the %lld rows of C: give 0 <= "
                        "row_begin < row_end <= %lld, or 0, 0 for all", (long long)r0, (long long)r1, (long long)m,
                        (long long)m);
    if (r0 == 0 && r1 == 0) r1 = m;
    /* and columns [c0, c1): the passes over op(B), C0 and C read only them */
    OOC_RETURN_ERROR_IF((c0 != 0 || c1 != 0) && (c0 < 0 || c0 >= c1 || c1 > j.n), &h->err, OOC_ERR_ROW_RANGE,
                        "ooc_verify_files_rect: columns [%lld, %lld) are not a range of the %lld columns of C: give "
                        "0 <= col_begin < col_end <= %lld, or 0, 0 for all", (long long)c0, (long long)c1,
                        (long long)j.n, (long long)j.n);
    if (c1 > 0) j.c0 = c0, j.c1 = c1, j.n = c1 - c0;
    j.use_ab = j.k > 0 && !(j.al[0] == 0 && j.al[1] == 0); /* alpha*op(A)*op(B) contributes */
    j.use_c0 = !beta_zero;

    uint64_t budget = (uint64_t)h->param[OOC_PARAM_HOST_MEM];
    if (budget == 0) {
        uint64_t half = ooc_limit_mem_available() / 2;
        budget = half < DEFAULT_BUDGET ? half : DEFAULT_BUDGET;
        if (budget < BUDGET_MIN) budget = BUDGET_MIN;
    }
    j.budget = budget;

    /* Freivalds' arrays (verify_range) take at most half the budget (at
     * least ROWS_MIN): for more rows, ranges of them, each reading op(B)
     * again */
    int64_t n = j.n, k = j.k, v = vectors, ce = is_cplx(t) ? 2 : 1, rows_per = r1 - r0;
    double fixed = (double)n * (double)((v * ce + v + 2) * 8 + 1) + (double)k * (double)((v * ce + v + 2) * 8);
    double per_row = (double)((2 * v * ce + v + 3) * 8) + 3.0 * sizeof(ooc_verify_nf_t);
    double room = (double)(budget / 2 > ROWS_MIN ? budget / 2 : ROWS_MIN);
    if (v > 0 && n > 0 && fixed + (double)(r1 - r0) * per_row > room) {
        OOC_RETURN_ERROR_IF(fixed + per_row > room, &h->err, OOC_ERR_HOST_MEMORY,
                            "ooc_verify_files: %d random vectors of a %lld x %lld x %lld product need %.0f bytes "
                            "and more, over half the host budget of %llu bytes: raise OOC_PARAM_HOST_MEM or give "
                            "fewer vectors", vectors, (long long)(cols ? n : m), (long long)(cols ? m : n),
                            (long long)k, fixed + per_row,
                            (unsigned long long)budget);
        rows_per = (int64_t)floor((room - fixed) / per_row);
    }
    if (rows_per < 1) rows_per = 1;
    int64_t ranges = (r1 - r0 + rows_per - 1) / rows_per, total = r1 - r0;
    if (ranges < 1) ranges = 1;
    int64_t want = sample_rows < total ? sample_rows : total;
    ooc_verify_result_t all, one;
    memset(&all, 0, sizeof all);
    memset(&one, 0, sizeof one);
    cmp_t cmp = CMP_INIT;
    all.exact = 1;
    for (int64_t q = 0; q < ranges; q++) {
        int64_t a = r0 + q * rows_per, b = a + rows_per < r1 ? a + rows_per : r1;
        /* the sample shared out among the ranges */
        int64_t sq = ranges == 1 ? sample_rows
                                 : (int64_t)(((unsigned __int128)want * (unsigned __int128)(q + 1)) / (unsigned __int128)ranges -
                                             ((unsigned __int128)want * (unsigned __int128)q) / (unsigned __int128)ranges);
        OOC_FORWARD(verify_range(&j, a, b, v, sq, &one, &cmp));
        all.exact &= one.exact;
        all.vectors = one.vectors;
        all.rows_checked += one.rows_checked;
        all.rows_unverified += one.rows_unverified;
        all.bytes_read += one.bytes_read;
        all.tolerance = one.tolerance;
    }
    all.nonfinite = cmp.nonfinite;
    all.max_rel_err = cmp.mismatch ? INFINITY : cmp.worst;
    all.off = cmp.off;
    all.first_off_row = cmp.off_row;
    int failed = cmp.mismatch || cmp.worst > all.tolerance || cmp.off > 0;
    OOC_RETURN_ERROR_IF(!failed && cmp.inconclusive > 0, &h->err, OOC_ERR_UNDECIDED,
                        "ooc_verify_files: %lld value%s of the check (from %s %lld of C on) overflowed double "
                        "precision or may be correct overflows of C's type: the check is inconclusive "
                        "(nothing else failed)", (long long)cmp.inconclusive, cmp.inconclusive == 1 ? "" : "s",
                        cols ? "column" : "row", (long long)cmp.incon_row);
    all.passed = !failed;
    *res = all;
    return OOC_SUCCESS;
}
