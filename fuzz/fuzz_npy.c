/* SPDX-License-Identifier: MIT */
/*
 * fuzz_npy.c: libFuzzer target for ooc_npy_parse (lib/io_npy.c), the .npy
 * header parser that sees the first bytes of any file handed to oocgemm.
 * The input is the start of a file, in a buffer of exactly its size (so
 * AddressSanitizer sees any read past it). Invariants checked (abort() when
 * one breaks):
 *  - a failure records its status and a NUL-terminated, non-empty message;
 *    when it asks for more bytes (*need), need is more than it was given and
 *    at most the largest header the parser accepts;
 *  - a success gives format NPY, rows, cols >= 0, a known dtype and layout, a
 *    data offset within the input whose data size fits in 64 bits;
 *  - a success is a function of the header alone: parsing exactly its
 *    data_offset bytes gives the same result, and one byte fewer asks for
 *    more (need <= data_offset);
 *  - ooc_npy_format of the parsed spec parses back to the same spec.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "io.h"

/* pre (12 bytes) + the largest header length the parser accepts (1 GiB) */
#define MAX_NEED (((size_t)1 << 30) + 12)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(ooc_status_t st, const ooc_err_t *err, size_t len, size_t need)
{
    if (st == OOC_SUCCESS) abort();
    if (err->status != st) abort();
    if (memchr(err->msg, '\0', sizeof err->msg) == NULL || err->msg[0] == '\0') abort();
    if (need != (size_t)-1) {
        if (st != OOC_ERR_FORMAT) abort();
        if (need <= len || need > MAX_NEED) abort();
    }
}

static int same_spec(const ooc_file_spec_t *a, const ooc_file_spec_t *b)
{
    return a->format == b->format && a->rows == b->rows && a->cols == b->cols && a->dtype == b->dtype &&
           a->layout == b->layout;
}

/* parse a copy of data[0, len) in a buffer of exactly len bytes */
static ooc_status_t parse_copy(const uint8_t *data, size_t len, ooc_file_spec_t *spec, uint64_t *off,
                               size_t *need, ooc_err_t *err)
{
    unsigned char *copy = malloc(len ? len : 1);
    if (copy == NULL) abort();
    if (len) memcpy(copy, data, len);
    ooc_err_clear(err);
    *need = (size_t)-1;
    ooc_status_t st = ooc_npy_parse(copy, len, spec, off, need, err);
    free(copy);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ooc_file_spec_t spec;
    memset(&spec, 0xa5, sizeof spec);
    uint64_t off = UINT64_MAX;
    size_t need = (size_t)-1;
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_status_t st = ooc_npy_parse(data, size, &spec, &off, &need, &err);
    if (st != OOC_SUCCESS) {
        check_error(st, &err, size, need);
        /* the same without *need: must not crash, same status */
        ooc_err_clear(&err);
        ooc_status_t st2 = ooc_npy_parse(data, size, &spec, &off, NULL, &err);
        if (st2 != st) abort();
        return 0;
    }

    /* the success */
    if (spec.format != OOC_FORMAT_NPY) abort();
    if (spec.rows < 0 || spec.cols < 0) abort();
    if (spec.dtype != OOC_R32 && spec.dtype != OOC_R64 && spec.dtype != OOC_C32 && spec.dtype != OOC_C64) abort();
    if (spec.layout != OOC_ROW_MAJOR && spec.layout != OOC_COL_MAJOR) abort();
    if (off < OOC_NPY_MAGIC_LEN + 4 || off > size) abort();
    uint64_t elems, bytes;
    if (__builtin_mul_overflow((uint64_t)spec.rows, (uint64_t)spec.cols, &elems) ||
        __builtin_mul_overflow(elems, (uint64_t)ooc_dtype_size(spec.dtype), &bytes) ||
        bytes > (uint64_t)INT64_MAX - off)
        abort();

    /* the header alone gives the same; one byte fewer asks for more */
    ooc_file_spec_t again;
    uint64_t off2;
    size_t need2;
    if (parse_copy(data, (size_t)off, &again, &off2, &need2, &err) != OOC_SUCCESS) abort();
    if (!same_spec(&spec, &again) || off2 != off) abort();
    ooc_status_t st2 = parse_copy(data, (size_t)off - 1, &again, &off2, &need2, &err);
    check_error(st2, &err, (size_t)off - 1, need2);
    if (need2 == (size_t)-1 || need2 > off) abort();

    /* round trip through the formatter */
    unsigned char hdr[1024];
    size_t n = ooc_npy_format(&spec, hdr, sizeof hdr);
    if (n == 0 || n % 64 != 0 || hdr[n - 1] != '\n') abort();
    if (parse_copy(hdr, n, &again, &off2, &need2, &err) != OOC_SUCCESS) abort();
    if (!same_spec(&spec, &again) || off2 != n) abort();
    return 0;
}
