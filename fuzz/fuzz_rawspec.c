/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rawspec.c: libFuzzer target for the command line's operand parsers in
 * tools/spec.c: raw_spec_parse (PATH:ROWSxCOLS[:DTYPE[:ORDER]]), shape_parse,
 * dtype_parse and order_parse. The first input byte picks the default dtype
 * and order; the rest, copied into a NUL-terminated buffer of exactly its
 * size, is the argument. Invariants checked (abort() when one breaks):
 *  - RAW_SPEC_OK: 0 < path_len < strlen(arg), arg[path_len] == ':', the
 *    field after it is a shape that shape_parse reads as the same rows and
 *    cols (both >= 0: an empty matrix is a shape), format RAW, a known dtype and layout (the defaults
 *    when the argument names none);
 *  - RAW_SPEC_BAD_DTYPE / BAD_ORDER: the bad field lies inside arg, right
 *    after a ':', holds no ':', and is not a name its parser accepts (but
 *    "C" as the type, refused: it reads as a layout);
 *  - RAW_SPEC_NO_PATH: arg starts with ':'; any other result is unknown;
 *  - shape_parse, dtype_parse and order_parse on the whole argument: a
 *    success gives rows, cols >= 0 and a known dtype or layout, and the
 *    name parsers never accept an argument with a ':' in it.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int known_dtype(ooc_dtype_t t) { return t == OOC_R32 || t == OOC_R64 || t == OOC_C32 || t == OOC_C64; }

static int known_layout(ooc_layout_t l) { return l == OOC_ROW_MAJOR || l == OOC_COL_MAJOR; }

/* the field of arg starting at `at`, up to the next ':' or the end, as a
 * NUL-terminated copy (NULL when longer than cap - 1) */
static const char *field_copy(const char *arg, size_t at, char *buf, size_t cap, size_t *n)
{
    const char *end = strchr(arg + at, ':');
    *n = end ? (size_t)(end - (arg + at)) : strlen(arg + at);
    if (*n >= cap) return NULL;
    memcpy(buf, arg + at, *n);
    buf[*n] = '\0';
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    ooc_dtype_t def_t = (ooc_dtype_t)(OOC_R32 + (data[0] & 3));
    ooc_layout_t def_l = (data[0] & 4) ? OOC_COL_MAJOR : OOC_ROW_MAJOR;
    char *arg = malloc(size); /* size - 1 bytes and the NUL */
    if (arg == NULL) abort();
    memcpy(arg, data + 1, size - 1);
    arg[size - 1] = '\0';
    size_t len = strlen(arg); /* the input may hold a NUL: the argument ends there */

    size_t path_len = (size_t)-1, field = (size_t)-1, field_len = (size_t)-1;
    ooc_file_spec_t spec;
    memset(&spec, 0xa5, sizeof spec);
    raw_spec_result_t r = raw_spec_parse(arg, def_t, def_l, &path_len, &spec, &field, &field_len);
    char word[64];
    size_t n;
    int64_t rows, cols;
    switch (r) {
    case RAW_SPEC_OK:
        if (path_len == 0 || path_len >= len || arg[path_len] != ':') abort();
        if (spec.format != OOC_FORMAT_RAW || spec.rows < 0 || spec.cols < 0) abort();
        if (!known_dtype(spec.dtype) || !known_layout(spec.layout)) abort();
        n = strcspn(arg + path_len + 1, ":");
        if (shape_parse(arg + path_len + 1, n, &rows, &cols) != 0 || rows != spec.rows || cols != spec.cols)
            abort();
        if (arg[path_len + 1 + n] == '\0' && (spec.dtype != def_t || spec.layout != def_l)) abort();
        break;
    case RAW_SPEC_BAD_DTYPE:
    case RAW_SPEC_BAD_ORDER: {
        if (field == 0 || field > len || field_len > len - field || arg[field - 1] != ':') abort();
        if (memchr(arg + field, ':', field_len) != NULL) abort();
        if (arg[field + field_len] != '\0' && arg[field + field_len] != ':') abort();
        const char *w = field_copy(arg, field, word, sizeof word, &n);
        if (n != field_len) abort();
        ooc_dtype_t t;
        ooc_layout_t l;
        /* (but "C", a layout where the type goes: refused though dtype_parse takes it as complex64) */
        if (w && r == RAW_SPEC_BAD_DTYPE && dtype_parse(w, &t) == 0 && strcmp(w, "C") != 0) abort();
        if (w && r == RAW_SPEC_BAD_ORDER && order_parse(w, &l) == 0) abort();
        break;
    }
    case RAW_SPEC_NO_PATH:
        if (arg[0] != ':') abort();
        break;
    case RAW_SPEC_NONE:
        break;
    default:
        abort();
    }

    /* the pieces on the whole argument */
    rows = cols = 0;
    if (shape_parse(arg, len, &rows, &cols) == 0 && (rows < 0 || cols < 0)) abort();
    ooc_dtype_t t = (ooc_dtype_t)0;
    if (dtype_parse(arg, &t) == 0 && (!known_dtype(t) || strchr(arg, ':'))) abort();
    ooc_layout_t l = (ooc_layout_t)0;
    if (order_parse(arg, &l) == 0 && (!known_layout(l) || strchr(arg, ':'))) abort();
    free(arg);
    return 0;
}
