/* SPDX-License-Identifier: MIT */
/*
 * verify.h: what the two halves of ooc_verify_files share (verify.c: the
 * check itself, its sample and its report; verify_pass.c: reading a file in
 * chunks of stored lines and applying products to each chunk). Internal to
 * them. All arithmetic is in double precision; nothing here writes a file.
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
} pass_t;

/* One pass over the file f (as op(f); rows p->r0 .. p->r1 of it), applying p to every chunk of
 * at most `chunk` bytes; adds the bytes read to *bytes_read. Stops with
 * OOC_ERR_CANCELLED when ooc_cancel() was called. */
ooc_status_t ooc_verify_pass(ooc_handle_t *h, const ooc_file_t *f, ooc_op_t op, const pass_t *p,
                             uint64_t chunk, uint64_t *bytes_read);

/* Rows r0 + `rows` (ascending) of op(f) into G (gs x opcols, as doubles):
 * line by line when they are stored lines and only some are wanted, else in
 * one pass over rows [r0, r1) of op(f) (r1 0: all rows). */
ooc_status_t ooc_verify_gather(ooc_handle_t *h, const ooc_file_t *f, ooc_op_t op, const int64_t *rows, int64_t gs,
                               double *G, int64_t r0, int64_t r1, uint64_t chunk, uint64_t *bytes_read);

#endif
