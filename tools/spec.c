/* SPDX-License-Identifier: MIT */
/*
 * spec.c: the command line's names for matrix files (see spec.h). Pure
 * functions of their arguments: what they are given may be any bytes a user
 * (or a fuzzer) types.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "spec.h"

int dtype_parse(const char *s, ooc_dtype_t *t)
{
    static const struct {
        const char *name;
        ooc_dtype_t t;
    } names[] = {
        {"s", OOC_R32}, {"f4", OOC_R32}, {"float32", OOC_R32},     {"d", OOC_R64},  {"f8", OOC_R64},
        {"float64", OOC_R64}, {"c", OOC_C32}, {"c8", OOC_C32}, {"complex64", OOC_C32}, {"z", OOC_C64},
        {"c16", OOC_C64}, {"complex128", OOC_C64},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0) {
            *t = names[i].t;
            return 0;
        }
    return -1;
}

int order_parse(const char *s, ooc_layout_t *l)
{
    if (strcasecmp(s, "C") == 0 || strcasecmp(s, "row") == 0) *l = OOC_ROW_MAJOR;
    else if (strcasecmp(s, "F") == 0 || strcasecmp(s, "col") == 0) *l = OOC_COL_MAJOR;
    else return -1;
    return 0;
}

/* A decimal integer of s[0, len) (0 included: an empty matrix) that fits
 * int64_t: 0, else -1. */
static int count(const char *s, size_t len, int64_t *v)
{
    if (len == 0) return -1;
    int64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        if (x > (INT64_MAX - (s[i] - '0')) / 10) return -1;
        x = 10 * x + (s[i] - '0');
    }
    *v = x;
    return 0;
}

int shape_parse(const char *s, size_t len, int64_t *rows, int64_t *cols)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] == 'x' || s[i] == 'X')
            return count(s, i, rows) == 0 && count(s + i + 1, len - i - 1, cols) == 0 ? 0 : -1;
    return -1;
}

size_t colon_from_end(const char *arg, size_t len, int nf)
{
    int found = 0;
    for (size_t p = len; p > 0; p--)
        if (arg[p - 1] == ':' && ++found == nf) return p - 1;
    return len;
}

raw_spec_result_t raw_spec_parse(const char *arg, ooc_dtype_t dtype, ooc_layout_t layout, size_t *path_len,
                                 ooc_file_spec_t *spec, size_t *field, size_t *field_len)
{
    size_t len = strlen(arg);
    for (int nf = 3; nf >= 1; nf--) {
        /* the nf-th ':' from the end starts the suffix */
        size_t colon = colon_from_end(arg, len, nf);
        if (colon == len) continue;
        /* its fields: [start[i], end[i]) */
        size_t start[3], end[3];
        size_t at = colon + 1;
        for (int i = 0; i < nf; i++) {
            start[i] = at;
            while (at < len && arg[at] != ':') at++;
            end[i] = at++;
        }
        int64_t rows, cols;
        if (shape_parse(arg + start[0], end[0] - start[0], &rows, &cols) != 0) continue;
        ooc_dtype_t t = dtype;
        ooc_layout_t l = layout;
        char word[16];
        for (int i = 1; i < nf; i++) {
            size_t n = end[i] - start[i];
            int bad = n >= sizeof word;
            if (!bad) {
                memcpy(word, arg + start[i], n);
                word[n] = '\0';
                /* (not "C" as the type, complex64 as c is: read as a layout
                 * with the type left out, it took a float64 file of that size
                 * for complex64, silently) */
                bad = i == 1 ? strcmp(word, "C") == 0 || dtype_parse(word, &t) != 0 : order_parse(word, &l) != 0;
            }
            if (bad) {
                *field = start[i];
                *field_len = n;
                return i == 1 ? RAW_SPEC_BAD_DTYPE : RAW_SPEC_BAD_ORDER;
            }
        }
        if (colon == 0) return RAW_SPEC_NO_PATH;
        *path_len = colon;
        spec->format = OOC_FORMAT_RAW;
        spec->rows = rows;
        spec->cols = cols;
        spec->dtype = t;
        spec->layout = l;
        return RAW_SPEC_OK;
    }
    return RAW_SPEC_NONE;
}
