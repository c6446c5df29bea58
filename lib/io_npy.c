/* SPDX-License-Identifier: MIT */
/*
 * io_npy.c: the NumPy .npy header codec (see io.h). Pure functions on bytes,
 * no I/O: parse the preamble (magic, version 1.0/2.0/3.0, header length) and
 * the Python dict literal that follows, and format a header byte-identical to
 * the one np.save writes for the same array. A malformed header's message
 * quotes the value at fault, never the padding after it, and names a NUL
 * byte by its offset in the file.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "io.h"

static const unsigned char npy_magic[OOC_NPY_MAGIC_LEN] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* the largest header length field accepted: anything bigger is garbage */
#define NPY_MAX_HEADER ((uint64_t)1 << 30)
/* numpy leaves room for this many digits of the growth axis (format.py) */
#define NPY_GROWTH_DIGITS 21
/* numpy aligns the data to this many bytes */
#define NPY_ALIGN 64

/* ---- a cursor over the header text ---- */

typedef struct {
    const char *p, *end;
    const char *base; /* the file's first byte, for the offsets in messages */
} cur_t;

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

static void skip_ws(cur_t *c)
{
    while (c->p < c->end && is_space(*c->p)) c->p++;
}

/* skip blanks, then consume ch if it is next */
static int eat(cur_t *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* a quoted Python string ('...' or "...", also u'...' as Python 2's
 * writers of unicode strings gave it, which numpy reads): its contents
 * without the quotes */
static int quoted(cur_t *c, const char **s, size_t *n)
{
    skip_ws(c);
    if (c->end - c->p >= 2 && (*c->p == 'u' || *c->p == 'U') && (c->p[1] == '\'' || c->p[1] == '"')) c->p++;
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    char q = *c->p++;
    const char *start = c->p;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' && c->p + 1 < c->end) c->p++;
        c->p++;
    }
    if (c->p >= c->end) return 0;
    *s = start;
    *n = (size_t)(c->p - start);
    c->p++;
    return 1;
}

static int is_ident(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* the bare word w (True, False), not followed by more identifier characters */
static int word(cur_t *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0) return 0;
    if (c->p + n < c->end && is_ident(c->p[n])) return 0;
    c->p += n;
    return 1;
}

static int str_is(const char *s, size_t n, const char *lit) { return strlen(lit) == n && memcmp(s, lit, n) == 0; }

/* at most 60 characters of what is left, for messages: up to a NUL byte,
 * without the blanks at the end */
static int rest_len(const cur_t *c)
{
    int n = 0;
    while (c->p + n < c->end && n < 60 && c->p[n] != '\0') n++;
    while (n > 0 && is_space(c->p[n - 1])) n--;
    return n;
}

/* length of the value at c (up to a ',' or '}' outside brackets, a NUL
 * byte or the blanks at the end of the header), at most 60 */
static int value_len(const cur_t *c)
{
    int depth = 0, n = 0;
    for (const char *p = c->p; p < c->end && n < 60 && *p != '\0'; p++, n++) {
        if (*p == '[' || *p == '(' || *p == '{') depth++;
        else if (*p == ']' || *p == ')' || *p == '}') {
            if (depth == 0) break;
            depth--;
        } else if (*p == ',' && depth == 0) break;
    }
    while (n > 0 && is_space(c->p[n - 1])) n--;
    return n;
}

/* The value at c for a message, in buf: the value itself (value_len), "a
 * NUL byte at byte N" (N: its offset in the file) or "the end of the
 * header". */
static const char *shown(const cur_t *c, char *buf, size_t len)
{
    int n = value_len(c);
    if (n > 0) snprintf(buf, len, "%.*s", n, c->p);
    else if (c->p < c->end && *c->p == '\0') snprintf(buf, len, "a NUL byte at byte %td", c->p - c->base);
    else if (c->p >= c->end) snprintf(buf, len, "the end of the header");
    else snprintf(buf, len, "%.1s", c->p); /* a lone ',' or ')' */
    return buf;
}

/* ---- the dict's values ---- */

static ooc_status_t parse_descr(cur_t *c, ooc_dtype_t *dtype, ooc_err_t *err)
{
    /* numpy's names of the four types: np.save writes '<f8'; other writers
     * may give the type character (d) or the native order ('=', or none) */
    static const struct {
        const char *code;
        ooc_dtype_t t;
    } known[] = {{"f4", OOC_R32}, {"f8", OOC_R64}, {"c8", OOC_C32}, {"c16", OOC_C64},
                 {"f", OOC_R32},  {"d", OOC_R64},  {"F", OOC_C32},  {"D", OOC_C64}};
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    const int native_little = 0;
#else
    const int native_little = 1;
#endif
    const char *s;
    size_t n;
    skip_ws(c);
    cur_t at = *c;
    char vb[80];
    OOC_RETURN_ERROR_IF(!quoted(c, &s, &n), err, OOC_ERR_FORMAT,
                        "unsupported dtype: descr %s is not a plain type string (structured "
                        "dtypes are not matrices); supported: '<f4', '<f8', '<c8', '<c16'",
                        shown(&at, vb, sizeof vb));
    int order = n > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '=') ? s[0] : 0;
    const char *code = order ? s + 1 : s;
    size_t cn = order ? n - 1 : n;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (!str_is(code, cn, known[i].code)) continue;
        if (order == '<' || ((order == '=' || order == 0) && native_little)) {
            *dtype = known[i].t;
            return OOC_SUCCESS;
        }
        return OOC_ERR(err, OOC_ERR_FORMAT,
                       "descr '%.*s' is big-endian; only little-endian data is supported "
                       "(convert with arr.astype('<%s'))",
                       (int)n, s, known[i % 4].code);
    }
    return OOC_ERR(err, OOC_ERR_FORMAT,
                   "unsupported dtype descr '%.*s'; supported: '<f4', '<f8', '<c8', '<c16' "
                   "(float32, float64, complex64, complex128, little-endian)",
                   n > 60 ? 60 : (int)n, s);
}

/* a Python tuple of non-negative ints: the first two in dim[], the count in *ndim */
static ooc_status_t parse_shape(cur_t *c, int64_t dim[2], int *ndim, ooc_err_t *err)
{
    int nd = 0, commas = 0;
    char vb[80];
    OOC_RETURN_ERROR_IF(!eat(c, '('), err, OOC_ERR_FORMAT,
                        "malformed header: shape %s is not a tuple", shown(c, vb, sizeof vb));
    for (;;) {
        if (eat(c, ')')) break;
        skip_ws(c);
        OOC_RETURN_ERROR_IF(c->p < c->end && *c->p == '-', err, OOC_ERR_FORMAT,
                            "malformed header: negative dimension in shape");
        OOC_RETURN_ERROR_IF(c->p >= c->end || *c->p < '0' || *c->p > '9', err, OOC_ERR_FORMAT,
                            "malformed header: shape holds %s, not an integer", shown(c, vb, sizeof vb));
        uint64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            unsigned d = (unsigned)(*c->p++ - '0');
            OOC_RETURN_ERROR_IF(v > ((uint64_t)INT64_MAX - d) / 10, err, OOC_ERR_OVERFLOW,
                                "shape dimension does not fit in 64 bits");
            v = v * 10 + d;
        }
        if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++; /* Python 2 long */
        if (nd < 2) dim[nd] = (int64_t)v;
        OOC_RETURN_ERROR_IF(nd == 64, err, OOC_ERR_FORMAT, "shape has over 64 dimensions");
        nd++;
        if (eat(c, ',')) {
            commas++;
            continue;
        }
        OOC_RETURN_ERROR_IF(!eat(c, ')'), err, OOC_ERR_FORMAT,
                            "malformed header: expected ',' or ')' in shape, found %s",
                            shown(c, vb, sizeof vb));
        break;
    }
    OOC_RETURN_ERROR_IF(nd == 1 && commas == 0, err, OOC_ERR_FORMAT,
                        "malformed header: shape (%lld) is not a tuple (a 1-D shape is (%lld,))",
                        (long long)dim[0], (long long)dim[0]);
    *ndim = nd;
    return OOC_SUCCESS;
}

/* ---- the header ---- */

static uint64_t le_read(const unsigned char *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static ooc_status_t truncated(size_t len, size_t want, size_t *need, ooc_err_t *err)
{
    if (need) *need = want;
    return OOC_ERR(err, OOC_ERR_FORMAT, "truncated header: %zu bytes, the header needs %zu", len, want);
}

ooc_status_t ooc_npy_parse(const unsigned char *buf, size_t len, ooc_file_spec_t *spec,
                           uint64_t *data_offset, size_t *need, ooc_err_t *err)
{
    OOC_RETURN_ERROR_IF(buf == NULL && len > 0, err, OOC_ERR_NULL_ARG, "ooc_npy_parse: buf is NULL");
    OOC_RETURN_ERROR_IF(spec == NULL || data_offset == NULL, err, OOC_ERR_NULL_ARG,
                        "ooc_npy_parse: an output is NULL");
    size_t m = len < OOC_NPY_MAGIC_LEN ? len : OOC_NPY_MAGIC_LEN;
    OOC_RETURN_ERROR_IF(m > 0 && memcmp(buf, npy_magic, m) != 0, err, OOC_ERR_FORMAT,
                        "not a .npy file (bad magic: it does not start with \\x93NUMPY)");
    if (len < OOC_NPY_MAGIC_LEN + 2) return truncated(len, OOC_NPY_MAGIC_LEN + 4, need, err);
    unsigned major = buf[OOC_NPY_MAGIC_LEN], minor = buf[OOC_NPY_MAGIC_LEN + 1];
    OOC_RETURN_ERROR_IF(minor != 0 || major < 1 || major > 3, err, OOC_ERR_FORMAT,
                        "unsupported .npy format version %u.%u (1.0, 2.0 and 3.0 are)", major, minor);
    int lenbytes = major == 1 ? 2 : 4;
    size_t pre = OOC_NPY_MAGIC_LEN + 2 + (size_t)lenbytes;
    if (len < pre) return truncated(len, pre, need, err);
    uint64_t hlen = le_read(buf + OOC_NPY_MAGIC_LEN + 2, lenbytes);
    OOC_RETURN_ERROR_IF(hlen > NPY_MAX_HEADER, err, OOC_ERR_FORMAT,
                        "malformed header: header length %llu is over 1 GiB",
                        (unsigned long long)hlen);
    size_t total = pre + (size_t)hlen;
    if (len < total) return truncated(len, total, need, err);

    cur_t c = {(const char *)buf + pre, (const char *)buf + total, (const char *)buf};
    char vb[80];
    ooc_dtype_t dtype = OOC_R64;
    int fortran = 0, ndim = 0, have_descr = 0, have_order = 0, have_shape = 0;
    int64_t dim[2] = {0, 0};
    OOC_RETURN_ERROR_IF(!eat(&c, '{'), err, OOC_ERR_FORMAT,
                        "malformed header: it does not start with '{': %s", shown(&c, vb, sizeof vb));
    for (;;) {
        if (eat(&c, '}')) break;
        const char *key;
        size_t kn;
        OOC_RETURN_ERROR_IF(!quoted(&c, &key, &kn), err, OOC_ERR_FORMAT,
                            "malformed header: expected a quoted key at %s", shown(&c, vb, sizeof vb));
        OOC_RETURN_ERROR_IF(!eat(&c, ':'), err, OOC_ERR_FORMAT,
                            "malformed header: expected ':' after key '%.*s'", (int)kn, key);
        if (str_is(key, kn, "descr")) {
            OOC_RETURN_ERROR_IF(have_descr++, err, OOC_ERR_FORMAT, "malformed header: 'descr' twice");
            OOC_FORWARD(parse_descr(&c, &dtype, err));
        } else if (str_is(key, kn, "fortran_order")) {
            OOC_RETURN_ERROR_IF(have_order++, err, OOC_ERR_FORMAT,
                                "malformed header: 'fortran_order' twice");
            if (word(&c, "True")) fortran = 1;
            else if (word(&c, "False")) fortran = 0;
            else
                return OOC_ERR(err, OOC_ERR_FORMAT,
                               "malformed header: fortran_order is %s, not True or False",
                               shown(&c, vb, sizeof vb));
        } else if (str_is(key, kn, "shape")) {
            OOC_RETURN_ERROR_IF(have_shape++, err, OOC_ERR_FORMAT, "malformed header: 'shape' twice");
            OOC_FORWARD(parse_shape(&c, dim, &ndim, err));
        } else {
            return OOC_ERR(err, OOC_ERR_FORMAT,
                           "malformed header: unknown key '%.*s' (expected descr, fortran_order, shape)",
                           kn > 60 ? 60 : (int)kn, key);
        }
        if (eat(&c, ',')) continue;
        OOC_RETURN_ERROR_IF(!eat(&c, '}'), err, OOC_ERR_FORMAT,
                            "malformed header: expected ',' or '}' at %s", shown(&c, vb, sizeof vb));
        break;
    }
    skip_ws(&c);
    OOC_RETURN_ERROR_IF(c.p != c.end && *c.p == '\0', err, OOC_ERR_FORMAT,
                        "malformed header: a NUL byte at byte %td, after the dictionary (a header is padded "
                        "with spaces)",
                        c.p - c.base);
    OOC_RETURN_ERROR_IF(c.p != c.end, err, OOC_ERR_FORMAT,
                        "malformed header: text after the dictionary: %.*s", rest_len(&c), c.p);
    OOC_RETURN_ERROR_IF(!have_descr, err, OOC_ERR_FORMAT, "malformed header: no 'descr' key");
    OOC_RETURN_ERROR_IF(!have_order, err, OOC_ERR_FORMAT, "malformed header: no 'fortran_order' key");
    OOC_RETURN_ERROR_IF(!have_shape, err, OOC_ERR_FORMAT, "malformed header: no 'shape' key");
    OOC_RETURN_ERROR_IF(ndim == 0, err, OOC_ERR_FORMAT,
                        "unsupported shape (): a 0-D scalar is not a matrix (1-D or 2-D only)");
    OOC_RETURN_ERROR_IF(ndim > 2, err, OOC_ERR_FORMAT,
                        "unsupported shape: %d dimensions (a matrix file is 1-D or 2-D)", ndim);
    if (ndim == 1) dim[1] = 1; /* a vector is one column */

    uint64_t elems, bytes;
    OOC_RETURN_ERROR_IF(__builtin_mul_overflow((uint64_t)dim[0], (uint64_t)dim[1], &elems) ||
                            __builtin_mul_overflow(elems, (uint64_t)ooc_dtype_size(dtype), &bytes) ||
                            bytes > (uint64_t)INT64_MAX - total,
                        err, OOC_ERR_OVERFLOW,
                        "shape (%lld, %lld): the data size does not fit in 64 bits",
                        (long long)dim[0], (long long)dim[1]);
    spec->format = OOC_FORMAT_NPY;
    spec->rows = dim[0];
    spec->cols = dim[1];
    spec->dtype = dtype;
    spec->layout = fortran ? OOC_COL_MAJOR : OOC_ROW_MAJOR;
    *data_offset = total;
    return OOC_SUCCESS;
}

static void le_write(unsigned char *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8) b[i] = (unsigned char)(v & 0xff);
}

size_t ooc_npy_format(const ooc_file_spec_t *spec, unsigned char *buf, size_t cap)
{
    if (spec == NULL || spec->rows < 0 || spec->cols < 0) return 0;
    const char *descr = spec->dtype == OOC_R32   ? "<f4"
                        : spec->dtype == OOC_R64 ? "<f8"
                        : spec->dtype == OOC_C32 ? "<c8"
                        : spec->dtype == OOC_C64 ? "<c16"
                                                 : NULL;
    if (descr == NULL || (spec->layout != OOC_ROW_MAJOR && spec->layout != OOC_COL_MAJOR)) return 0;
    int fortran = spec->layout == OOC_COL_MAJOR;
    /* exactly numpy's: sorted keys, repr of each value, ", " after each */
    char dict[160];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (%lld, %lld), }",
                     descr, fortran ? "True" : "False", (long long)spec->rows, (long long)spec->cols);
    if (n < 0 || (size_t)n >= sizeof dict) return 0;
    /* numpy leaves spare spaces so the growth axis (the first for C order,
     * the last for Fortran order) can be rewritten in place */
    char digits[32];
    int g = snprintf(digits, sizeof digits, "%lld", (long long)(fortran ? spec->cols : spec->rows));
    size_t growth = g < NPY_GROWTH_DIGITS ? (size_t)(NPY_GROWTH_DIGITS - g) : 0;
    size_t hlen = (size_t)n + growth + 1; /* + '\n' */
    size_t pre = OOC_NPY_MAGIC_LEN + 2 + 2;
    size_t pad = NPY_ALIGN - (pre + hlen) % NPY_ALIGN;
    int major = 1;
    if (hlen + pad > 65535) { /* never for a 2-D header, but numpy's rule */
        major = 2;
        pre = OOC_NPY_MAGIC_LEN + 2 + 4;
        pad = NPY_ALIGN - (pre + hlen) % NPY_ALIGN;
    }
    size_t total = pre + hlen + pad;
    if (buf == NULL || cap < total) return 0;
    memcpy(buf, npy_magic, OOC_NPY_MAGIC_LEN);
    buf[OOC_NPY_MAGIC_LEN] = (unsigned char)major;
    buf[OOC_NPY_MAGIC_LEN + 1] = 0;
    le_write(buf + OOC_NPY_MAGIC_LEN + 2, hlen + pad, major == 1 ? 2 : 4);
    memcpy(buf + pre, dict, (size_t)n);
    memset(buf + pre + (size_t)n, ' ', growth + pad);
    buf[total - 1] = '\n';
    return total;
}
