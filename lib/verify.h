/* SPDX-License-Identifier: MIT */
/*
 * verify.h: what the parts of ooc_verify_files share (verify.c: the check
 * itself, its sample and its report; verify_pass.c: reading a file in
 * chunks of stored lines and applying products to each chunk;
 * verify_compare.c: comparing the results). Internal to them. All arithmetic is in double precision; nothing here writes a file.
 */
#ifndef OOC_VERIFY_H
#define OOC_VERIFY_H

#include <stdint.h>

#include "handle.h"
#include "io.h"

static inline int is_cplx(ooc_dtype_t t) { return t == OOC_C32 || t == OOC_C64; }

/* rows and columns of op(X) */
static inline void op_shape(const ooc_file_t *f, ooc_op_t op, int64_t *r, int64_t *c)
{
    *r = op == OOC_OP_N ? f->spec.rows : f->spec.cols;
    *c = op == OOC_OP_N ? f->spec.cols : f->spec.rows;
}

/* malloc of a * b * c bytes, NULL on overflow; zalloc3: zeroed */
void *ooc_verify_alloc3(uint64_t a, uint64_t b, uint64_t c);
void *ooc_verify_zalloc3(uint64_t a, uint64_t b, uint64_t c);

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
    /* rows [r0, r1) of op(X) alone (r1 0: all): only they are read, and
     * OUT, ROUT's rows and `rows` count from r0 */
    int64_t r0, r1;
    /* columns [c0, c1) of op(X) alone (c1 0: all): only they are read, and
     * every column index (V's rows, ROUT's and G's columns, badcol, skipcol,
     * the hashes) counts from c0 */
    int64_t c0, c1;
    /* columns of Vabs and OUTabs (0: v) */
    int64_t va;
    /* NaN and infinities, seen after ROUT and G took the raw values: nf
     * (oprows) counts them per row of op(X) and sums a hash of their columns
     * (ooc_verify_col_hash), except in columns where skipcol (opcols) is set;
     * badcol (opcols) marks their columns; sanitize: they become 0 (in |op(X)|
     * too) before OUT and OUTabs are computed */
    struct ooc_verify_nf *nf;
    unsigned char *badcol;
    const unsigned char *skipcol;
    int sanitize;
    /* rmax[row * rmax_ld] = max(itself, largest |element| of that row of op(X)) */
    double *rmax;
    int64_t rmax_ld;
} pass_t;

/* NaN and infinities of one row: how many, and the sum of their columns' hashes */
typedef struct ooc_verify_nf {
    uint64_t hash;
    int64_t count;
} ooc_verify_nf_t;

/* a column's hash: sums of hashes of different sets of columns differ but
 * with probability 2^-64 */
static inline uint64_t ooc_verify_col_hash(int64_t col)
{
    uint64_t z = (uint64_t)col * 0x9e3779b97f4a7c15ULL + 0x6a09e667f3bcc909ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* One pass over the file f (as op(f); rows p->r0 .. p->r1 of it), applying p to every chunk of
 * at most `chunk` bytes; adds the bytes read to *bytes_read. Stops with
 * OOC_ERR_CANCELLED when ooc_cancel() was called. */
ooc_status_t ooc_verify_pass(ooc_handle_t *h, const ooc_file_t *f, ooc_op_t op, const pass_t *p,
                             uint64_t chunk, uint64_t *bytes_read);

/* Rows r0 + `rows` (ascending) of op(f) into G (gs x opcols, as doubles;
 * only columns [c0, c1) when c1 > 0): line by line when they are stored
 * lines and only some are wanted, else in one pass over rows [r0, r1) of
 * op(f) (r1 0: all rows). */
ooc_status_t ooc_verify_gather(ooc_handle_t *h, const ooc_file_t *f, ooc_op_t op, const int64_t *rows, int64_t gs,
                               double *G, int64_t r0, int64_t r1, int64_t c0, int64_t c1, uint64_t chunk,
                               uint64_t *bytes_read);

/* ---- comparisons (verify_compare.c) ---- */

typedef struct {
    double worst;
    int mismatch;         /* a non-finite value where the reference has another */
    int64_t nonfinite;    /* NaN or infinite in both, alike: consistent, not measurable */
    int64_t inconclusive; /* undecided: an overflow (double intermediates, or C's type) */
    int64_t incon_row;    /* the first row of those, -1 if none */
    int64_t off;          /* elements (exact rows) or rows and vectors (Freivalds) off by about their own
                           * size, beyond what rounding reaches: wrong, within the worst-case tolerance */
    int64_t off_row;      /* the first row of those, -1 if none */
} cmp_t;

/* An empty comparison. */
#define CMP_INIT {0, 0, 0, 0, -1, 0, -1}

/* What Freivalds' check compares (verify_run): W = C X and Z = alpha op(A)
 * op(B) X + beta C0 X (m x v), with NaN and infinities of the inputs and of
 * C taken out (0, and X's rows 0 on columns of op(B) holding any); Zb (m x
 * (v + 2)): |alpha| |op(A)| |op(B)| |X| + |beta| |C0| |X|, then S = the same
 * with a vector of ones (sum_l b_il), then |alpha| |op(A)| u (u_p: the
 * largest |op(B)_pl|), to which |beta| c0max (the largest |C0_il| of each row)
 * adds: M >= max_l b_il. */
typedef struct {
    int cplx;
    int64_t m, n, k, v, r0;
    const double *W, *Z, *Zb, *c0max, *xs; /* xs: sum_l |X_lj| */
    double abs_be, tol, under, typemax, lambda_c, rho, vabs;
    double tol_p; /* the rounding of any but contrived data (verify.c's top comment): "off" beyond it */
    const ooc_verify_nf_t *nfA, *nfC0, *nfC; /* NULL: none */
    uint64_t hash_b, hash_all;                /* of op(B)'s bad columns; of all columns */
    int64_t count_b;
    double prodmax; /* the largest bound whose products cannot overflow C's type: its largest value,
                     * times |alpha| below 1 (a BLAS multiplies before it scales) */
} freivalds_t;

/* 0: finite; 1: +-Inf (no NaN); 2: NaN in a component (element i) */
int ooc_verify_nonfinite_kind(int cplx, const double *x, size_t i);
/* |x_i| (the modulus of a complex element) */
double ooc_verify_modulus(int cplx, const double *x, size_t i);
/* ax = |x| element by element */
void ooc_verify_absolute(int cplx, const double *x, double *ax, size_t count);
/* R (S x n) += beta * C0rows; Rb += |beta| |C0rows| */
void ooc_verify_add_c0(int cplx, double *R, double *Rb, const double *C0r, const double beta[2], size_t count);
/* The exact rows x (s x n) against ref with bound (verify_compare.c says how) */
void ooc_verify_compare_rows(int cplx, const double *x, const double *ref, const double *bound, int64_t s, int64_t n,
                             const unsigned char *abad, const unsigned char *bbad, const double *C0r,
                             const int64_t *rows, int64_t r0, double tol, double tol_p, double under,
                             double typemax, double prodmax, cmp_t *r);
/* Freivalds' rows against the threshold (verify.c's top comment) */
void ooc_verify_compare_freivalds(const freivalds_t *f, cmp_t *r, int64_t *unverified);

#endif
