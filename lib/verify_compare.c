/* SPDX-License-Identifier: MIT */
/*
 * verify_compare.c: ooc_verify_files()'s comparisons (verify.c has the
 * thresholds' derivation in its top comment): the exact rows element by
 * element, and Freivalds' products row by row against the threshold, with
 * the NaN and infinities of the inputs and of C where they must lie.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "verify.h"

static void undecided(cmp_t *r, int64_t row)
{
    if (r->inconclusive++ == 0) r->incon_row = row;
}

/* off by about its own size (d >= |ref| / 2) and by more than the rounding
 * of any but contrived data reaches (d > thr_p): wrong, within the
 * worst-case tolerance or not (verify.c's top comment) */
static void off_check(cmp_t *r, int64_t row, double d, double ref, double thr_p)
{
    if (d > thr_p && d >= 0.5 * ref && r->off++ == 0) r->off_row = row;
}

/* C's NaN or infinities where the inputs put none, or none where they put
 * some: a mismatch, and off too, so that the first such row is named (a
 * block of C left NaN, as `oocgemm run` fills C, or a NaN written) */
static void misplaced(cmp_t *r, int64_t row)
{
    r->mismatch = 1;
    if (r->off++ == 0) r->off_row = row;
}

/* 0: finite; 1: +-Inf (no NaN); 2: NaN in a component */
int ooc_verify_nonfinite_kind(int cplx, const double *x, size_t i)
{
    double a = cplx ? x[2 * i] : x[i], b = cplx ? x[2 * i + 1] : 0.0;
    if (isnan(a) || isnan(b)) return 2;
    return isinf(a) || isinf(b) ? 1 : 0;
}

double ooc_verify_modulus(int cplx, const double *x, size_t i) { return cplx ? hypot(x[2 * i], x[2 * i + 1]) : fabs(x[i]); }

/* The exact rows: x (s x n) against ref with bound (|alpha| |op(A)| |op(B)| +
 * |beta| |C0|), element by element; an element passes when |x - ref| <=
 * tol * bound + under. NaN or Inf in the inputs propagate into C: where the
 * reference is NaN, C must be NaN too; where it is infinite, C must hold the
 * same infinities (complex: non-finite where the reference is, whichever
 * parts); either way the element is counted, not measured. Where the
 * inputs of an element are finite (abad: rows of op(A) with a non-finite
 * value; bbad: such columns of op(B); C0r), a non-finite reference or bound
 * is an overflow of double, and a non-finite C where |ref| + the allowed
 * error, or the bound (the products and partial sums), reaches the largest
 * value of C's type may be a correct overflow: both undecided. */
void ooc_verify_compare_rows(int cplx, const double *x, const double *ref, const double *bound, int64_t s, int64_t n,
                         const unsigned char *abad, const unsigned char *bbad, const double *C0r,
                         const int64_t *rows, int64_t r0, double tol, double tol_p, double under,
                         double typemax, double prodmax, cmp_t *r)
{
    for (int64_t t = 0; t < s; t++)
        for (int64_t l = 0; l < n; l++) {
            size_t i = (size_t)(t * n + l);
            int fin = !(abad && abad[t]) && !(bbad && bbad[l]) && !(C0r && ooc_verify_nonfinite_kind(cplx, C0r, i));
            int kx = ooc_verify_nonfinite_kind(cplx, x, i), kr = ooc_verify_nonfinite_kind(cplx, ref, i);
            double b = bound[i];
            if (fin && (kr || !isfinite(b))) {
                undecided(r, r0 + rows[t]);
                continue;
            }
            if (fin && kx) {
                /* (b: its products and partial sums, which may overflow
                 * too though the sum does not: 1e20 * 1e20 - 1e20 * 1e20 in
                 * single precision is Inf - Inf, NaN) */
                if (ooc_verify_modulus(cplx, ref, i) + tol * b + under >= typemax || b * (1 + tol) + under >= prodmax)
                    undecided(r, r0 + rows[t]);
                else misplaced(r, r0 + rows[t]);
                continue;
            }
            if (kx || kr) {
                /* complex: non-finite where the reference is, whichever
                 * parts: which part of (1, 0) (Inf, 1) or of (Inf, y) + (x,
                 * y') is NaN depends on how a BLAS does complex arithmetic
                 * (Freivalds' check, too, compares where, not what) */
                int alike = cplx ? kx != 0 && kr != 0 : kx == kr && (kr == 2 || x[i] == ref[i]);
                if (alike) r->nonfinite++;
                else misplaced(r, r0 + rows[t]);
                continue;
            }
            double diff = cplx ? hypot(x[2 * i] - ref[2 * i], x[2 * i + 1] - ref[2 * i + 1]) : fabs(x[i] - ref[i]);
            if (diff == 0) continue;
            if (!isfinite(b)) { /* non-finite inputs with a finite reference: not seen */
                undecided(r, r0 + rows[t]);
                continue;
            }
            double e = diff / (b + under / tol);
            if (e > r->worst) r->worst = e;
            off_check(r, r0 + rows[t], diff, ooc_verify_modulus(cplx, ref, i), tol_p * b + under);
        }
}



/* Each row: first where C's NaN and infinities lie (they must lie exactly
 * where the inputs' make the reference's: all its elements when its row of
 * op(A) holds one, the columns of op(B) holding one, the elements where C0
 * holds one; extra ones that may be overflows of C's type: undecided); then
 * |W - Z| against the threshold of the file's top comment. Rows with a NaN
 * or infinity of op(A) hold nothing more to check; rows where C0 holds one
 * cannot be checked (unverified). */
void ooc_verify_compare_freivalds(const freivalds_t *f, cmp_t *r, int64_t *unverified)
{
    int64_t v = f->v, va = v + 2;
    for (int64_t i = 0; i < f->m; i++) {
        int abad = f->nfA && f->nfA[i].count > 0;
        uint64_t want_hash = abad ? f->hash_all : f->hash_b + (f->nfC0 ? f->nfC0[i].hash : 0);
        int64_t want_count = abad ? f->n : f->count_b + (f->nfC0 ? f->nfC0[i].count : 0);
        const double *zb = f->Zb + i * va;
        double S = zb[v], M = zb[v + 1] + (f->c0max ? f->abs_be * f->c0max[i] : 0);
        if (f->nfC[i].hash != want_hash || f->nfC[i].count != want_count) {
            /* extra infinities of C where the elements may overflow C's type */
            if (f->nfC[i].count > want_count && !(M * (1 + f->tol) + f->under < f->prodmax)) undecided(r, f->r0 + i);
            else misplaced(r, f->r0 + i);
            continue;
        }
        r->nonfinite += f->nfC[i].count;
        if (abad) continue;
        if (f->nfC0 && f->nfC0[i].count > 0) {
            (*unverified)++;
            continue;
        }
        int over = !isfinite(S) || !isfinite(M);
        for (int64_t j = 0; j < v && !over; j++) {
            size_t q = (size_t)(i * v + j);
            over = ooc_verify_nonfinite_kind(f->cplx, f->W, q) || ooc_verify_nonfinite_kind(f->cplx, f->Z, q) || !isfinite(zb[j]);
        }
        if (over) { /* finite values that overflowed double */
            undecided(r, f->r0 + i);
            continue;
        }
        double un = sqrt((double)f->n) * f->under;
        double newb = f->lambda_c * (f->tol * sqrt(M) * sqrt(S) + un);
        double newb_p = f->lambda_c * (f->tol_p * sqrt(M) * sqrt(S) + un);
        int64_t off = r->off;
        for (int64_t j = 0; j < v; j++) {
            size_t q = (size_t)(i * v + j);
            double diff = f->cplx ? hypot(f->W[2 * q] - f->Z[2 * q], f->W[2 * q + 1] - f->Z[2 * q + 1])
                                  : fabs(f->W[q] - f->Z[q]);
            if (diff == 0) continue;
            double old = f->tol * zb[j] + f->under * f->xs[j];
            double ours = f->rho * (2 + f->tol) * zb[j] + f->vabs; /* our own rounding of W and Z */
            double thr = (newb < old ? newb : old) + ours;
            double e = f->tol * (diff / thr);
            if (e > r->worst) r->worst = e;
            double old_p = f->tol_p * zb[j] + f->under * f->xs[j];
            if (r->off == off) /* (a row counts once) */
                off_check(r, f->r0 + i, diff, ooc_verify_modulus(f->cplx, f->Z, q), (newb_p < old_p ? newb_p : old_p) + ours);
        }
    }
}

/* R (S x n) += beta * C0rows; Rb += |beta| |C0rows| */
void ooc_verify_add_c0(int cplx, double *R, double *Rb, const double *C0r, const double beta[2],
                   size_t count)
{
    double ab = hypot(beta[0], beta[1]);
    int one = beta[0] == 1 && beta[1] == 0; /* BLAS: C0 as it is, never (1, 0) (Inf, y) = (Inf, NaN) */
    for (size_t i = 0; i < count; i++) {
        if (cplx && one) {
            R[2 * i] += C0r[2 * i];
            R[2 * i + 1] += C0r[2 * i + 1];
            Rb[i] += hypot(C0r[2 * i], C0r[2 * i + 1]);
        } else if (cplx) {
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

void ooc_verify_absolute(int cplx, const double *x, double *ax, size_t count)
{
    for (size_t i = 0; i < count; i++) ax[i] = cplx ? hypot(x[2 * i], x[2 * i + 1]) : fabs(x[i]);
}
