/* SPDX-License-Identifier: MIT */
/*
 * verify_pass.c: how ooc_verify_files (verify.c) reads its files. A file is
 * read with pread in chunks of whole stored lines (a C-order row, a
 * Fortran-order column); each chunk is converted to double (conjugated when
 * op is C), which makes every stored chunk either a block of rows of op(X)
 * or the transpose of a block of its columns, whatever the file's layout and
 * op: one gemm per chunk (OpenBLAS) applies a pass (verify.h) in all the
 * cases. A pass may also count, hash and mark the chunk's NaN and
 * infinities, zero them for its products with vectors, and take row maxima.
 *
 * Must not: hold a whole large file, write to any file, print, exit or abort.
 */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "backend.h"
#include "verify.h"

/* malloc of a * b * c bytes, NULL on overflow */
void *ooc_verify_alloc3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t n;
    if (__builtin_mul_overflow(a, b, &n) || __builtin_mul_overflow(n, c, &n) || n > SIZE_MAX) return NULL;
    return malloc(n ? (size_t)n : 1);
}

void *ooc_verify_zalloc3(uint64_t a, uint64_t b, uint64_t c)
{
    void *p = ooc_verify_alloc3(a, b, c);
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
    int64_t nlines, len;  /* stored lines read, elements read of each */
    int64_t line0, seg0;  /* the first line read, the first element read of each */
    int64_t ld;           /* elements of a whole stored line */
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
                                uint64_t chunk, int64_t max_lines, int need_abs, uint64_t *bytes_read, int64_t r0,
                                int64_t r1, int64_t c0, int64_t c1)
{
    memset(s, 0, sizeof *s);
    s->h = h;
    s->f = f;
    s->cplx = is_cplx(f->spec.dtype);
    s->conj = s->cplx && op == OOC_OP_C;
    s->lines_rows = (f->spec.layout == OOC_ROW_MAJOR) == (op == OOC_OP_N);
    s->nlines = f->spec.layout == OOC_ROW_MAJOR ? f->spec.rows : f->spec.cols;
    s->ld = s->len = ooc_file_ld(f);
    op_shape(f, op, &s->oprows, &s->opcols);
    if (r1 > 0) { /* rows [r0, r1) of op(X): those lines, or that part of each line */
        if (s->lines_rows) s->line0 = r0, s->nlines = r1 - r0;
        else s->seg0 = r0, s->len = r1 - r0;
        s->oprows = r1 - r0;
    }
    if (c1 > 0) { /* columns [c0, c1) of op(X): that part of each line, or those lines */
        if (s->lines_rows) s->seg0 = c0, s->len = c1 - c0;
        else s->line0 = c0, s->nlines = c1 - c0;
        s->opcols = c1 - c0;
    }
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
    s->raw = ooc_verify_alloc3(elems, s->e, 1);
    s->d = ooc_verify_alloc3(elems, s->cplx ? 2 : 1, sizeof(double));
    if (need_abs) s->dabs = ooc_verify_alloc3(elems, 1, sizeof(double));
    if (!s->raw || !s->d || (need_abs && !s->dabs)) {
        stream_free(s);
        return OOC_ERR(&h->err, OOC_ERR_HOST_MEMORY,
                       "malloc: out of memory (verify: %lld lines of %lld elements of %s)",
                       (long long)lines, (long long)s->len, f->path ? f->path : "a file");
    }
    return OOC_SUCCESS;
}

/* Read lines [l0, l0 + nl) of those the stream reads into d (and dabs), as doubles. */
static ooc_status_t stream_read(stream_t *s, int64_t l0, int64_t nl)
{
    const ooc_file_t *f = s->f;
    size_t count = (size_t)nl * (size_t)s->len, bytes = count * s->e;
    /* a created file not yet committed has its bytes in tmp_path */
    const char *path = f->tmp_path ? f->tmp_path : f->path;
    int whole = s->len == s->ld; /* whole lines: one read */
    for (int64_t l = 0; l < (whole ? 1 : nl); l++) {
        int64_t line = s->line0 + l0 + l;
        uint64_t off = f->spec.layout == OOC_ROW_MAJOR ? ooc_file_elem_offset(f, line, s->seg0, s->e)
                                                       : ooc_file_elem_offset(f, s->seg0, line, s->e);
        size_t n = whole ? bytes : (size_t)s->len * s->e;
        OOC_FORWARD(ooc_io_pread(f->fd, s->raw + (size_t)l * n, n, off, path, &s->h->err));
    }
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

/* The NaN and infinities of the chunk of lines [l0, l0 + nl) now in s, as
 * p asks (verify.h): counted and hashed by row, marked by column, zeroed. */
static void scan_chunk(const stream_t *s, const pass_t *p, int64_t l0, int64_t nl)
{
    int c = s->cplx;
    int64_t len = s->len;
    for (int64_t l = 0; l < nl; l++)
        for (int64_t e = 0; e < len; e++) {
            size_t q = (size_t)(l * len + e);
            double *x = s->d + (c ? 2 * q : q);
            if (isfinite(x[0]) && (!c || isfinite(x[1]))) continue;
            int64_t row = s->lines_rows ? l0 + l : e, col = s->lines_rows ? e : l0 + l;
            if (p->sanitize) {
                x[0] = 0;
                if (c) x[1] = 0;
                if (s->dabs) s->dabs[q] = 0;
            }
            if (p->badcol) p->badcol[col] = 1;
            if (p->nf && !(p->skipcol && p->skipcol[col])) {
                p->nf[row].count++;
                p->nf[row].hash += ooc_verify_col_hash(col);
            }
        }
}

/* Apply p to the chunk of lines [l0, l0 + nl) now in s. */
static void pass_chunk(const stream_t *s, const pass_t *p, int64_t l0, int64_t nl)
{
    int c = s->cplx;
    int64_t ce = c ? 2 : 1, len = s->len;
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
    if (p->nf || p->badcol || p->sanitize) scan_chunk(s, p, l0, nl);
    if (p->rmax && s->dabs) {
        for (int64_t l = 0; l < nl; l++)
            for (int64_t e = 0; e < len; e++) {
                double *r = p->rmax + (s->lines_rows ? l0 + l : e) * p->rmax_ld, a = s->dabs[l * len + e];
                if (a > *r) *r = a;
            }
    }
    if (p->OUT) {
        int64_t va = p->va ? p->va : p->v;
        if (s->lines_rows) { /* chunk = op(X)[l0 : l0+nl, :] */
            mm(c, 0, 0, nl, p->v, len, p->ls, s->d, len, p->V, p->v, p->OUT + l0 * p->v * ce, p->v);
            if (p->OUTabs) {
                double a[2] = {p->lsabs, 0};
                mm(0, 0, 0, nl, va, len, a, s->dabs, len, p->Vabs, va, p->OUTabs + l0 * va, va);
            }
        } else { /* chunk = op(X)[:, l0 : l0+nl]^T */
            mm(c, 1, 0, len, p->v, nl, p->ls, s->d, len, p->V + l0 * p->v * ce, p->v, p->OUT, p->v);
            if (p->OUTabs) {
                double a[2] = {p->lsabs, 0};
                mm(0, 1, 0, len, va, nl, a, s->dabs, len, p->Vabs + l0 * va, va, p->OUTabs, va);
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
ooc_status_t ooc_verify_pass(ooc_handle_t *h, const ooc_file_t *f, ooc_op_t op, const pass_t *p,
                             uint64_t chunk, uint64_t *bytes_read)
{
    stream_t s;
    OOC_FORWARD(stream_init(&s, h, f, op, chunk, INT64_MAX, p->OUTabs || p->ROUTabs || p->rmax, bytes_read, p->r0,
                            p->r1, p->c0, p->c1));
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
ooc_status_t ooc_verify_gather(ooc_handle_t *h, const ooc_file_t *f, ooc_op_t op,
                               const int64_t *rows, int64_t gs, double *G, int64_t r0, int64_t r1, int64_t c0,
                               int64_t c1, uint64_t chunk, uint64_t *bytes_read)
{
    pass_t p;
    memset(&p, 0, sizeof p);
    p.gs = gs;
    p.rows = rows;
    p.G = G;
    p.r0 = r0;
    p.r1 = r1;
    p.c0 = c0;
    p.c1 = c1;
    int lines_rows = (f->spec.layout == OOC_ROW_MAJOR) == (op == OOC_OP_N);
    int64_t oprows, opcols;
    op_shape(f, op, &oprows, &opcols);
    if (r1 > 0) oprows = r1 - r0;
    if (c1 > 0) opcols = c1 - c0;
    if (!lines_rows || gs >= oprows / 2 || opcols == 0) return ooc_verify_pass(h, f, op, &p, chunk, bytes_read);
    stream_t s;
    OOC_FORWARD(stream_init(&s, h, f, op, 0, 1, 0, bytes_read, r0, r1, c0, c1));
    ooc_status_t st = OOC_SUCCESS;
    for (int64_t t = 0; t < gs && st == OOC_SUCCESS; t++)
        if ((st = cancelled(h, f)) == OOC_SUCCESS && (st = stream_read(&s, rows[t], 1)) == OOC_SUCCESS)
            pass_chunk(&s, &p, rows[t], 1);
    stream_free(&s);
    return st;
}
