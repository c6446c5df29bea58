/* SPDX-License-Identifier: MIT */
/*
 * spec.h: the command line's names for matrix files and their elements:
 * the raw-operand syntax PATH:ROWSxCOLS[:DTYPE[:LAYOUT]], element type names
 * (s, d, c, z, f4, ..., complex128) and storage orders (C, F). Pure parsing:
 * no printing, no allocation, no I/O (tools/spec.c; fuzzed by
 * fuzz/fuzz_rawspec.c).
 */
#ifndef OOCGEMM_SPEC_H
#define OOCGEMM_SPEC_H

#include <stddef.h>

#include "ooc_gemm.h"

typedef enum {
    RAW_SPEC_NONE = 0,       /* no raw-shape suffix: the whole argument is a path */
    RAW_SPEC_OK = 1,         /* PATH:ROWSxCOLS[:DTYPE[:LAYOUT]] */
    RAW_SPEC_BAD_DTYPE = -1, /* a shape, then a field that is not an element type */
    RAW_SPEC_BAD_ORDER = -2, /* a shape and type, then a field that is not an order */
    RAW_SPEC_NO_PATH = -3    /* a shape suffix with nothing before it */
} raw_spec_result_t;

/* Where the nf-th ':' from the end of arg (len bytes) is; len when there are fewer. */
size_t colon_from_end(const char *arg, size_t len, int nf);

/* Split a raw-shape suffix off arg (NUL-terminated): the last one, two or
 * three ':'-separated fields are ROWSxCOLS[:DTYPE[:LAYOUT]] when the first of
 * them is a shape of two decimal integers (0 allowed); missing fields take the
 * given defaults. RAW_SPEC_OK: the path is arg's first *path_len bytes and
 * *spec the raw spec. RAW_SPEC_BAD_*: the bad field is arg[*field ..
 * *field + *field_len). */
raw_spec_result_t raw_spec_parse(const char *arg, ooc_dtype_t dtype, ooc_layout_t layout, size_t *path_len,
                                 ooc_file_spec_t *spec, size_t *field, size_t *field_len);

/* "ROWSxCOLS" (or X), both decimal integers that fit int64_t (0 allowed: an
 * empty matrix, stored as an empty file): 0, else -1. */
int shape_parse(const char *s, size_t len, int64_t *rows, int64_t *cols);

/* Element type by name (s|d|c|z, f4|f8|c8|c16, float32 ... complex128, any
 * case) and storage order (C or row, F or col): 0, else -1. */
int dtype_parse(const char *s, ooc_dtype_t *t);
int order_parse(const char *s, ooc_layout_t *l);

#endif
