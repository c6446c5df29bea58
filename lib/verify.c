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
 * Files are read with pread in chunks of whole stored lines (a C-order row,
 * a Fortran-order column) within a quarter of the host budget; each chunk
 * is converted to double (conjugated when op is C), which makes every stored
 * chunk either a block of rows of op(X) or the transpose of a block of its
 * columns, whatever the file's layout and op: one gemm per chunk handles
 * all the cases. All arithmetic is in double precision.
 *
 * Must not: hold a whole large file, write to any file, print, exit or abort.
 */
#include "config.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "backend.h"
#include "handle.h"
#include "io.h"

#define DEFAULT_BUDGET ((uint64_t)1 << 30)
/* Largest chunk (raw bytes and their doubles) read at once. Bigger chunks
 * are slower, not faster: a 4000^3 double check from the page cache took
 * 0.11 s with 4 MiB chunks, 0.15-0.3 s with 8 MiB, 0.5-0.9 s with 32 MiB
 * (the converted chunk no longer stays in cache for its gemm). Reads this
 * size are sequential, so the kernel's readahead keeps a disk busy. */
#define CHUNK_MAX ((uint64_t)4 << 20)
#define EXACT_MAX_MNK ((unsigned __int128)1 << 33) /* multiply-adds of an exact check */
#define SEED 0x6f6f632d76657269ULL                 /* fixed: a check is reproducible */

static int is_cplx(ooc_dtype_t t) { return t == OOC_C32 || t == OOC_C64; }

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

/* rows and columns of op(X) */
static void op_shape(const ooc_file_t *f, ooc_op_t op, int64_t *r, int64_t *c)
{
    *r = op == OOC_OP_N ? f->spec.rows : f->spec.cols;
    *c = op == OOC_OP_N ? f->spec.cols : f->spec.rows;
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

/* malloc of a * b * c bytes, NULL on overflow */
static void *alloc3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t n;
    if (__builtin_mul_overflow(a, b, &n) || __builtin_mul_overflow(n, c, &n) || n > SIZE_MAX) return NULL;
    return malloc(n ? (size_t)n : 1);
}

static void *zalloc3(uint64_t a, uint64_t b, uint64_t c)
{
    void *p = alloc3(a, b, c);
    if (p) memset(p, 0, (size_t)(a * b * c));
    return p;
}

/* C += alpha * op(A) * op(B), row-major, beta 1; real, or complex (re, im)
 * pairs with alpha complex. Empty products add nothing. */
static void mm(int cplx, int ta, int tb, int64_t M, int64_t N, int64_t K, const double alpha[2],
               const double *A, int64_t lda, const double *B, int64_t ldb, double *C, int64_t ldc)
{
    if (M == 0 || N == 0 || K == 0) return;
    enum CBLAS_TRANSPOSE a = ta ? CblasTrans : CblasNoTrans, b = tb ? CblasTrans : CblasNoTrans;
    if (cplx) {
        static const double one[2] = {1, 0};
        cblas_zgemm(CblasRowMajor, a, b, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb,
                    one, C, (int)ldc);
    } else {
        cblas_dgemm(CblasRowMajor, a, b, (int)M, (int)N, (int)K, alpha[0], A, (int)lda, B,
                    (int)ldb, 1.0, C, (int)ldc);
    }
}

/* ---- streaming a file in chunks of stored lines ---- */

typedef struct {
    ooc_handle_t *h;
    const ooc_file_t *f;
    int cplx, conj;       /* conj: op is C on a complex file */
    int lines_rows;       /* stored lines are rows of op(X) (else columns) */
    int64_t nlines, len;  /* stored lines, elements per line */
    int64_t oprows, opcols;
    size_t e;             /* bytes per stored element */
    int64_t cap;          /* lines per chunk */
    unsigned char *raw;
    double *d, *dabs;     /* the chunk as doubles, nl x len row-major; |d| */
    uint64_t *bytes_read;
} stream_t;

static void stream_free(stream_t *s)
{
    free(s->raw);
    free(s->d);
    free(s->dabs);
    s->raw = NULL;
    s->d = s->dabs = NULL;
}

/* Chunks of at most `chunk` bytes (raw + converted), at least one line, at
 * most `max_lines` lines. */
static ooc_status_t stream_init(stream_t *s, ooc_handle_t *h, const ooc_file_t *f, ooc_op_t op,
                                uint64_t chunk, int64_t max_lines, int need_abs, uint64_t *bytes_read)
{
    memset(s, 0, sizeof *s);
    s->h = h;
    s->f = f;
    s->cplx = is_cplx(f->spec.dtype);
    s->conj = s->cplx && op == OOC_OP_C;
    s->lines_rows = (f->spec.layout == OOC_ROW_MAJOR) == (op == OOC_OP_N);
    s->nlines = f->spec.layout == OOC_ROW_MAJOR ? f->spec.rows : f->spec.cols;
    s->len = ooc_file_ld(f);
    op_shape(f, op, &s->oprows, &s->opcols);
    s->e = ooc_dtype_size(f->spec.dtype);
    s->bytes_read = bytes_read;
    if (s->nlines == 0 || s->len == 0) return OOC_SUCCESS;
    uint64_t per_line = (uint64_t)s->len * (s->e + (s->cplx ? 16 : 8) + (need_abs ? 8 : 0));
    uint64_t lines = chunk / per_line;
    if (lines < 1) lines = 1;
    if (max_lines < 1) max_lines = 1;
    if (lines > (uint64_t)max_lines) lines = (uint64_t)max_lines;
    if (lines > (uint64_t)s->nlines) lines = (uint64_t)s->nlines;
    s->cap = (int64_t)lines;
    uint64_t elems = lines * (uint64_t)s->len;
    s->raw = alloc3(elems, s->e, 1);
    s->d = alloc3(elems, s->cplx ? 2 : 1, sizeof(double));
    if (need_abs) s->dabs = alloc3(elems, 1, sizeof(double));
    if (!s->raw || !s->d || (need_abs && !s->dabs)) {
        stream_free(s);
        return OOC_ERR(&h->err, OOC_ERR_HOST_MEMORY,
                       "malloc: out of memory (verify: %lld lines of %lld elements of %s)",
                       (long long)lines, (long long)s->len, f->path ? f->path : "a file");
    }
    return OOC_SUCCESS;
}

/* Read stored lines [l0, l0 + nl) into d (and dabs), as doubles. */
static ooc_status_t stream_read(stream_t *s, int64_t l0, int64_t nl)
{
    const ooc_file_t *f = s->f;
    uint64_t off = f->spec.layout == OOC_ROW_MAJOR ? ooc_file_elem_offset(f, l0, 0, s->e)
                                                   : ooc_file_elem_offset(f, 0, l0, s->e);
    size_t count = (size_t)nl * (size_t)s->len, bytes = count * s->e;
    /* a created file not yet committed has its bytes in tmp_path */
    OOC_FORWARD(ooc_io_pread(f->fd, s->raw, bytes, off, f->tmp_path ? f->tmp_path : f->path, &s->h->err));
    *s->bytes_read += bytes;
    size_t reals = count * (s->cplx ? 2 : 1);
    if (f->spec.dtype == OOC_R32 || f->spec.dtype == OOC_C32) {
        const float *x = (const float *)s->raw;
        for (size_t i = 0; i < reals; i++) s->d[i] = x[i];
    } else {
        memcpy(s->d, s->raw, reals * sizeof(double));
    }
    if (s->conj)
        for (size_t i = 1; i < reals; i += 2) s->d[i] = -s->d[i];
    if (s->dabs) {
        if (s->cplx)
            for (size_t i = 0; i < count; i++) s->dabs[i] = hypot(s->d[2 * i], s->d[2 * i + 1]);
        else
            for (size_t i = 0; i < count; i++) s->dabs[i] = fabs(s->d[i]);
    }
    return OOC_SUCCESS;
}

/* What one pass over a file does with each chunk (any subset of the three). */
typedef struct {
    /* left: OUT (oprows x v) += ls * op(X) * V (opcols x v);
     *       OUTabs += lsabs * |op(X)| * Vabs (when OUTabs) */
    int64_t v;
    const double *V, *Vabs;
    double *OUT, *OUTabs;
    double ls[2], lsabs;
    /* right: ROUT (S x opcols) += rs * L (S x oprows) * op(X);
     *        ROUTabs += rsabs * Labs * |op(X)| */
    int64_t S;
    const double *L, *Labs;
    double *ROUT, *ROUTabs;
    double rs[2], rsabs;
    /* gather: rows `rows` (ascending) of op(X) into G (gs x opcols) */
    int64_t gs;
    const int64_t *rows;
    double *G;
} pass_t;

/* first index t with rows[t] >= x */
static int64_t lower_bound(const int64_t *rows, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rows[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Apply p to the chunk of lines [l0, l0 + nl) now in s. */
static void pass_chunk(const stream_t *s, const pass_t *p, int64_t l0, int64_t nl)
{
    int c = s->cplx;
    int64_t ce = c ? 2 : 1, len = s->len;
    if (p->OUT) {
        if (s->lines_rows) { /* chunk = op(X)[l0 : l0+nl, :] */
            mm(c, 0, 0, nl, p->v, len, p->ls, s->d, len, p->V, p->v, p->OUT + l0 * p->v * ce, p->v);
            if (p->OUTabs) {
                double a[2] = {p->lsabs, 0};
                mm(0, 0, 0, nl, p->v, len, a, s->dabs, len, p->Vabs, p->v, p->OUTabs + l0 * p->v, p->v);
            }
        } else { /* chunk = op(X)[:, l0 : l0+nl]^T */
            mm(c, 1, 0, len, p->v, nl, p->ls, s->d, len, p->V + l0 * p->v * ce, p->v, p->OUT, p->v);
            if (p->OUTabs) {
                double a[2] = {p->lsabs, 0};
                mm(0, 1, 0, len, p->v, nl, a, s->dabs, len, p->Vabs + l0 * p->v, p->v, p->OUTabs, p->v);
            }
        }
    }
    if (p->ROUT) {
        double a[2] = {p->rsabs, 0};
        if (s->lines_rows) { /* ROUT += L[:, l0 : l0+nl] * chunk */
            mm(c, 0, 0, p->S, len, nl, p->rs, p->L + l0 * ce, s->oprows, s->d, len, p->ROUT, len);
            mm(0, 0, 0, p->S, len, nl, a, p->Labs + l0, s->oprows, s->dabs, len, p->ROUTabs, len);
        } else { /* ROUT[:, l0 : l0+nl] += L * chunk^T */
            mm(c, 0, 1, p->S, nl, len, p->rs, p->L, len, s->d, len, p->ROUT + l0 * ce, s->opcols);
            mm(0, 0, 1, p->S, nl, len, a, p->Labs, len, s->dabs, len, p->ROUTabs + l0, s->opcols);
        }
    }
    if (p->G) {
        if (s->lines_rows) {
            for (int64_t t = lower_bound(p->rows, p->gs, l0); t < p->gs && p->rows[t] < l0 + nl; t++)
                memcpy(p->G + t * s->opcols * ce, s->d + (p->rows[t] - l0) * len * ce,
                       (size_t)(len * ce) * sizeof(double));
        } else {
            for (int64_t l = 0; l < nl; l++)
                for (int64_t t = 0; t < p->gs; t++) {
                    const double *src = s->d + (l * len + p->rows[t]) * ce;
                    double *dst = p->G + (t * s->opcols + l0 + l) * ce;
                    dst[0] = src[0];
                    if (c) dst[1] = src[1];
                }
        }
    }
}

/* ooc_cancel() was called: stop before reading more of f */
static ooc_status_t cancelled(ooc_handle_t *h, const ooc_file_t *f)
{
    if (!atomic_load(&h->cancel)) return OOC_SUCCESS;
    return OOC_ERR(&h->err, OOC_ERR_CANCELLED, "verify: cancelled while reading %s", f->path);
}

/* One pass over the whole file, applying p to every chunk. */
static ooc_status_t run_pass(ooc_handle_t *h, const ooc_file_t *f, ooc_op_t op, const pass_t *p,
                             uint64_t chunk, uint64_t *bytes_read)
{
    stream_t s;
    OOC_FORWARD(stream_init(&s, h, f, op, chunk, INT64_MAX, p->OUTabs || p->ROUTabs, bytes_read));
    ooc_status_t st = OOC_SUCCESS;
    for (int64_t l0 = 0; l0 < s.nlines && s.len > 0; l0 += s.cap) {
        int64_t nl = s.nlines - l0 < s.cap ? s.nlines - l0 : s.cap;
        if ((st = cancelled(h, f)) != OOC_SUCCESS || (st = stream_read(&s, l0, nl)) != OOC_SUCCESS) break;
        pass_chunk(&s, p, l0, nl);
    }
    stream_free(&s);
    return st;
}

/* Rows `rows` (ascending) of op(X) into G (gs x opcols): line by line when
 * they are stored lines and only some are wanted, else in one pass. */
static ooc_status_t gather_rows(ooc_handle_t *h, const ooc_file_t *f, ooc_op_t op,
                                const int64_t *rows, int64_t gs, double *G, uint64_t chunk,
                                uint64_t *bytes_read)
{
    pass_t p;
    memset(&p, 0, sizeof p);
    p.gs = gs;
    p.rows = rows;
    p.G = G;
    int lines_rows = (f->spec.layout == OOC_ROW_MAJOR) == (op == OOC_OP_N);
    int64_t oprows, opcols;
    op_shape(f, op, &oprows, &opcols);
    if (!lines_rows || gs >= oprows / 2 || opcols == 0) return run_pass(h, f, op, &p, chunk, bytes_read);
    stream_t s;
    OOC_FORWARD(stream_init(&s, h, f, op, 0, 1, 0, bytes_read));
    ooc_status_t st = OOC_SUCCESS;
    for (int64_t t = 0; t < gs && st == OOC_SUCCESS; t++)
        if ((st = cancelled(h, f)) == OOC_SUCCESS && (st = stream_read(&s, rows[t], 1)) == OOC_SUCCESS)
            pass_chunk(&s, &p, rows[t], 1);
    stream_free(&s);
    return st;
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
                               int vectors, int64_t sample_rows, ooc_verify_result_t *res);

ooc_status_t ooc_verify_files(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                              const void *alpha, ooc_file_t *A, ooc_file_t *B, const void *beta,
                              ooc_file_t *C0, ooc_file_t *C, int vectors, int64_t sample_rows,
                              ooc_verify_result_t *res)
{
    if (handle == NULL) return OOC_ERR_INVALID_HANDLE;
    return ooc_handle_done(handle, verify_run(handle, transa, transb, alpha, A, B, beta, C0, C, vectors,
                                              sample_rows, res));
}

static ooc_status_t verify_run(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb, const void *alpha,
                               ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                               int vectors, int64_t sample_rows, ooc_verify_result_t *res)
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
    int use_ab = k > 0 && !(al[0] == 0 && al[1] == 0); /* alpha*op(A)*op(B) contributes */
    int use_c0 = !beta_zero;
    double abs_al = hypot(al[0], al[1]);
    double eps = (t == OOC_R32 || t == OOC_C32) ? FLT_EPSILON : DBL_EPSILON;

    uint64_t budget = h->param[OOC_PARAM_HOST_MEM] > 0 ? (uint64_t)h->param[OOC_PARAM_HOST_MEM] : DEFAULT_BUDGET;
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
        ALLOC_OR_FAIL(rows, alloc3((uint64_t)s, sizeof(int64_t), 1), "row list");
        for (int64_t i = 0; i < s; i++)
            rows[i] = s == 1 ? 0 : (int64_t)((unsigned __int128)i * (unsigned __int128)(m - 1) / (unsigned __int128)(s - 1));
        ALLOC_OR_FAIL(R, zalloc3((uint64_t)s * ce, (uint64_t)n, sizeof(double)), "reference rows");
        ALLOC_OR_FAIL(Rb, zalloc3((uint64_t)s, (uint64_t)n, sizeof(double)), "bound rows");
        ALLOC_OR_FAIL(Cr, alloc3((uint64_t)s * ce, (uint64_t)n, sizeof(double)), "rows of C");
        if (use_c0) ALLOC_OR_FAIL(C0r, alloc3((uint64_t)s * ce, (uint64_t)n, sizeof(double)), "rows of C0");
        if (use_ab) {
            ALLOC_OR_FAIL(Ar, alloc3((uint64_t)s * ce, (uint64_t)k, sizeof(double)), "rows of op(A)");
            ALLOC_OR_FAIL(Arabs, alloc3((uint64_t)s, (uint64_t)k, sizeof(double)), "rows of |op(A)|");
        }
    }
    if (v > 0) {
        ALLOC_OR_FAIL(X, alloc3((uint64_t)n * ce, (uint64_t)v, sizeof(double)), "vectors");
        ALLOC_OR_FAIL(Xabs, alloc3((uint64_t)n, (uint64_t)v, sizeof(double)), "vectors");
        ALLOC_OR_FAIL(Z, zalloc3((uint64_t)m * ce, (uint64_t)v, sizeof(double)), "alpha*op(A)*op(B)*X");
        ALLOC_OR_FAIL(Zb, zalloc3((uint64_t)m, (uint64_t)v, sizeof(double)), "bound");
        ALLOC_OR_FAIL(W, zalloc3((uint64_t)m * ce, (uint64_t)v, sizeof(double)), "C*X");
        if (use_ab) {
            ALLOC_OR_FAIL(Y, zalloc3((uint64_t)k * ce, (uint64_t)v, sizeof(double)), "op(B)*X");
            ALLOC_OR_FAIL(Yabs, zalloc3((uint64_t)k, (uint64_t)v, sizeof(double)), "|op(B)|*|X|");
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
            if ((st = gather_rows(h, A, transa, rows, s, Ar, chunk, &bytes)) != OOC_SUCCESS) goto out;
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
        if ((st = run_pass(h, B, transb, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
        /* pass over A: Z = alpha op(A) Y, Zb = |alpha| |op(A)| Yabs; rows of op(A) if not yet */
        if (v > 0 || !early) {
            memset(&p, 0, sizeof p);
            if (v > 0) {
                p.v = v, p.V = Y, p.Vabs = Yabs, p.OUT = Z, p.OUTabs = Zb;
                p.ls[0] = al[0], p.ls[1] = al[1], p.lsabs = abs_al;
            }
            if (s > 0 && !early) p.gs = s, p.rows = rows, p.G = Ar;
            if ((st = run_pass(h, A, transa, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
        }
        if (s > 0 && !early) { /* second pass over B for the sampled rows */
            absolute(cplx, Ar, Arabs, (size_t)(s * k));
            memset(&p, 0, sizeof p);
            p.S = s, p.L = Ar, p.Labs = Arabs, p.ROUT = R, p.ROUTabs = Rb;
            p.rs[0] = al[0], p.rs[1] = al[1], p.rsabs = abs_al;
            if ((st = run_pass(h, B, transb, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
        }
    }
    /* C0 and C: Z += beta C0 X (with its bound), W = C X; their sampled rows */
    for (int which = 0; which < 2 && (s > 0 || v > 0); which++) {
        const ooc_file_t *f = which == 0 ? C0 : C;
        if (which == 0 && !use_c0) continue;
        double *G = which == 0 ? C0r : Cr;
        if (v == 0) {
            if ((st = gather_rows(h, f, OOC_OP_N, rows, s, G, chunk, &bytes)) != OOC_SUCCESS) goto out;
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
        if ((st = run_pass(h, f, OOC_OP_N, &p, chunk, &bytes)) != OOC_SUCCESS) goto out;
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
