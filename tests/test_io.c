/* SPDX-License-Identifier: MIT */
/*
 * test_io.c: the matrix-file layer (lib/io_npy.c, lib/io_file.c): the .npy
 * header codec (format/parse round trips, hand-written headers of every
 * version, each malformed case with its status and message), complete
 * positioned reads and writes, and files created, committed, reopened and
 * read back byte-identical; truncated, oversized, raw and missing files;
 * OOC_FILE_RESUME and discard. Everything lives in a mkdtemp directory under
 * /tmp that is removed at the end.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "io.h"
#include "testutil.h"

static ooc_handle_t *H;
static char Dir[] = "/tmp/ooc_test_io.XXXXXX";

/* ---- helpers ---- */

static void in_dir(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", Dir, name); }

static int exists(const char *path) { return access(path, F_OK) == 0; }

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

static int write_file(const char *path, const void *buf, size_t len)
{
    FILE *fp = fopen(path, "wb");
    if (fp == NULL) return -1;
    size_t w = fwrite(buf, 1, len, fp);
    return (fclose(fp) == 0 && w == len) ? 0 : -1;
}

/* the whole file in a malloc'ed buffer (NULL on failure) */
static unsigned char *read_all(const char *path, size_t *len)
{
    long long n = file_size(path);
    FILE *fp = fopen(path, "rb");
    if (n < 0 || fp == NULL) {
        if (fp) fclose(fp);
        return NULL;
    }
    unsigned char *buf = malloc((size_t)n + 1);
    size_t r = buf ? fread(buf, 1, (size_t)n, fp) : 0;
    fclose(fp);
    if (buf == NULL || r != (size_t)n) {
        free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

static int contains(const char *s, const char *sub) { return s != NULL && strstr(s, sub) != NULL; }

/* A .npy preamble of version major.0 followed by dict verbatim; returns the
 * bytes written to out. */
static size_t npy_bytes(unsigned char *out, int major, const char *dict)
{
    size_t n = strlen(dict), pre = major == 1 ? 10 : 12;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t i = 0; i < pre - 8; i++) out[8 + i] = (unsigned char)((n >> (8 * i)) & 0xff);
    memcpy(out + pre, dict, n);
    return pre + n;
}

static unsigned char Hdr[4096];

/* parse a hand-written header of version major; *off, *s and err filled */
static ooc_status_t parse_dict(int major, const char *dict, ooc_file_spec_t *s, uint64_t *off, ooc_err_t *err)
{
    size_t len = npy_bytes(Hdr, major, dict), need = 0;
    ooc_err_clear(err);
    return ooc_npy_parse(Hdr, len, s, off, &need, err);
}

static const ooc_file_spec_t Sentinel = {(ooc_format_t)77, -5, -6, (ooc_dtype_t)99, (ooc_layout_t)98};

/* field by field: a struct copy need not copy the padding */
static int is_sentinel(const ooc_file_spec_t *s)
{
    return s->format == Sentinel.format && s->rows == Sentinel.rows && s->cols == Sentinel.cols &&
           s->dtype == Sentinel.dtype && s->layout == Sentinel.layout;
}

/* expect a FORMAT (or other) failure whose message holds sub, spec untouched */
static void parse_fails(int major, const char *dict, ooc_status_t want, const char *sub)
{
    ooc_file_spec_t s = Sentinel;
    uint64_t off = 12345;
    ooc_err_t err;
    ooc_status_t st = parse_dict(major, dict, &s, &off, &err);
    CU_ASSERT_EQUAL(st, want);
    CU_ASSERT(contains(err.msg, sub));
    if (!contains(err.msg, sub)) fprintf(stderr, "\n  message for %s: \"%s\" lacks \"%s\"\n", dict, err.msg, sub);
    CU_ASSERT(is_sentinel(&s));
    CU_ASSERT_EQUAL(off, 12345);
}

/* ---- the codec ---- */

static void test_format_exact(void)
{
    /* np.save(f, np.zeros((3, 4))) writes exactly this header (numpy 2.x) */
    static const char want[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
    ooc_file_spec_t s = {OOC_FORMAT_NPY, 3, 4, OOC_R64, OOC_ROW_MAJOR};
    unsigned char buf[512];
    memset(buf, 0xee, sizeof buf);
    size_t n = ooc_npy_format(&s, buf, sizeof buf);
    CU_ASSERT_EQUAL_FATAL(n, 128);
    CU_ASSERT(memcmp(buf, want, sizeof want - 1) == 0);
    for (size_t i = sizeof want - 1; i < 127; i++) CU_ASSERT_EQUAL(buf[i], ' ');
    CU_ASSERT_EQUAL(buf[127], '\n');
    CU_ASSERT_EQUAL(buf[128], 0xee); /* nothing past the header */
    /* Fortran order: True, and the spare digits follow the last axis */
    s.layout = OOC_COL_MAJOR;
    s.dtype = OOC_C32;
    n = ooc_npy_format(&s, buf, sizeof buf);
    CU_ASSERT_EQUAL(n, 128);
    CU_ASSERT(memcmp(buf + 10, "{'descr': '<c8', 'fortran_order': True, 'shape': (3, 4), }", 58) == 0);
    /* a cap too small by one byte, no buffer, or a bad spec: 0 */
    s.layout = OOC_ROW_MAJOR;
    CU_ASSERT_EQUAL(ooc_npy_format(&s, buf, 127), 0);
    CU_ASSERT_EQUAL(ooc_npy_format(&s, buf, 0), 0);
    CU_ASSERT_EQUAL(ooc_npy_format(&s, buf, 128), 128);
    CU_ASSERT_EQUAL(ooc_npy_format(&s, NULL, 0), 0);
    s.dtype = (ooc_dtype_t)9;
    CU_ASSERT_EQUAL(ooc_npy_format(&s, buf, sizeof buf), 0);
    s.dtype = OOC_R32;
    s.layout = (ooc_layout_t)5;
    CU_ASSERT_EQUAL(ooc_npy_format(&s, buf, sizeof buf), 0);
    s.layout = OOC_ROW_MAJOR;
    s.rows = -1;
    CU_ASSERT_EQUAL(ooc_npy_format(&s, buf, sizeof buf), 0);
}

static void test_format_parse_roundtrip(void)
{
    static const int64_t shapes[][2] = {{1, 1}, {3, 4}, {1000, 7}, {0, 5}, {123456789, 987654321},
                                        {(int64_t)1 << 40, 1 << 20}, {1, (int64_t)1 << 58}};
    for (int t = OOC_R32; t <= OOC_C64; t++)
        for (int l = 0; l < 2; l++)
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
                ooc_file_spec_t s = {OOC_FORMAT_NPY, shapes[k][0], shapes[k][1], (ooc_dtype_t)t,
                                     l ? OOC_COL_MAJOR : OOC_ROW_MAJOR};
                unsigned char buf[1024];
                size_t n = ooc_npy_format(&s, buf, sizeof buf);
                CU_ASSERT(n > 0);
                CU_ASSERT_EQUAL(n % 64, 0);
                CU_ASSERT_EQUAL(buf[n - 1], '\n');
                CU_ASSERT_EQUAL(buf[6], 1);
                CU_ASSERT_EQUAL(buf[7], 0);
                CU_ASSERT_EQUAL((size_t)buf[8] + 256u * buf[9] + 10, n);
                CU_ASSERT_EQUAL(ooc_npy_format(&s, buf, n - 1), 0);
                ooc_file_spec_t p = Sentinel;
                uint64_t off = 0;
                size_t need = 0;
                ooc_err_t err;
                ooc_err_clear(&err);
                /* the biggest shapes overflow 64 bits for the wider types */
                uint64_t e = tu_elem((ooc_dtype_t)t), elems = (uint64_t)s.rows * (uint64_t)s.cols;
                int fits = elems <= ((uint64_t)INT64_MAX - n) / e;
                ooc_status_t st = ooc_npy_parse(buf, n, &p, &off, &need, &err);
                if (!fits) {
                    CU_ASSERT_EQUAL(st, OOC_ERR_OVERFLOW);
                    CU_ASSERT(is_sentinel(&p));
                    continue;
                }
                CU_ASSERT_EQUAL(st, OOC_SUCCESS);
                CU_ASSERT_EQUAL(off, n);
                CU_ASSERT_EQUAL(p.format, OOC_FORMAT_NPY);
                CU_ASSERT_EQUAL(p.rows, s.rows);
                CU_ASSERT_EQUAL(p.cols, s.cols);
                CU_ASSERT_EQUAL(p.dtype, s.dtype);
                CU_ASSERT_EQUAL(p.layout, s.layout);
                CU_ASSERT_EQUAL(need, 0);
                CU_ASSERT_STRING_EQUAL(err.msg, "");
            }
}

static void test_parse_variants(void)
{
    ooc_file_spec_t s;
    uint64_t off;
    ooc_err_t err;
    const char *d1 = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }          \n";
    for (int major = 1; major <= 3; major++) {
        s = Sentinel;
        CU_ASSERT_EQUAL(parse_dict(major, d1, &s, &off, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(off, (major == 1 ? 10 : 12) + strlen(d1));
        CU_ASSERT_EQUAL(s.format, OOC_FORMAT_NPY);
        CU_ASSERT_EQUAL(s.dtype, OOC_R32);
        CU_ASSERT_EQUAL(s.layout, OOC_COL_MAJOR);
        CU_ASSERT_EQUAL(s.rows, 2);
        CU_ASSERT_EQUAL(s.cols, 3);
    }
    /* double quotes, no trailing comma */
    CU_ASSERT_EQUAL(parse_dict(1, "{\"descr\": \"<c8\", \"fortran_order\": False, \"shape\": (5, 6)}", &s, &off, &err),
                    OOC_SUCCESS);
    CU_ASSERT(s.dtype == OOC_C32 && s.layout == OOC_ROW_MAJOR && s.rows == 5 && s.cols == 6);
    /* keys shuffled */
    CU_ASSERT_EQUAL(parse_dict(1, "{'shape': (7, 8), 'fortran_order': True, 'descr': '<c16'}\n", &s, &off, &err),
                    OOC_SUCCESS);
    CU_ASSERT(s.dtype == OOC_C64 && s.layout == OOC_COL_MAJOR && s.rows == 7 && s.cols == 8);
    /* blanks everywhere, trailing commas in the tuple and the dict */
    CU_ASSERT_EQUAL(parse_dict(2, "  {  'descr'  :  '<f8'  ,'fortran_order':False,\t'shape':( 9 ,10 , ) , }   \n",
                               &s, &off, &err),
                    OOC_SUCCESS);
    CU_ASSERT(s.dtype == OOC_R64 && s.layout == OOC_ROW_MAJOR && s.rows == 9 && s.cols == 10);
    /* 1-D: one column, either order */
    CU_ASSERT_EQUAL(parse_dict(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }\n", &s, &off, &err),
                    OOC_SUCCESS);
    CU_ASSERT(s.rows == 5 && s.cols == 1);
    /* Python 2 wrote long integers */
    CU_ASSERT_EQUAL(parse_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L), }\n", &s, &off, &err),
                    OOC_SUCCESS);
    CU_ASSERT(s.rows == 3 && s.cols == 4);
    /* Python 2's unicode literals (u'...'), keys and values, as numpy reads them */
    CU_ASSERT_EQUAL(parse_dict(1, "{u'descr': u'<f8', u'fortran_order': True, u'shape': (3L, 4L), }\n", &s, &off,
                               &err),
                    OOC_SUCCESS);
    CU_ASSERT(s.dtype == OOC_R64 && s.layout == OOC_COL_MAJOR && s.rows == 3 && s.cols == 4);
    CU_ASSERT_EQUAL(parse_dict(1, "{'descr': U\"<c8\", 'fortran_order': False, 'shape': (2, 5), }\n", &s, &off, &err),
                    OOC_SUCCESS);
    CU_ASSERT(s.dtype == OOC_C32 && s.layout == OOC_ROW_MAJOR && s.rows == 2 && s.cols == 5);
    /* a zero-sized matrix is a valid file */
    CU_ASSERT_EQUAL(parse_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }\n", &s, &off, &err),
                    OOC_SUCCESS);
    CU_ASSERT(s.rows == 0 && s.cols == 4);
    /* numpy's other names of the four types: the type character, the
     * native order ('=', or none: little-endian here) */
    static const struct {
        const char *descr;
        ooc_dtype_t t;
    } names[] = {{"<d", OOC_R64}, {"<f", OOC_R32}, {"<F", OOC_C32}, {"<D", OOC_C64}, {"=f8", OOC_R64},
                 {"f8", OOC_R64}, {"=c8", OOC_C32}, {"c16", OOC_C64},  {"d", OOC_R64},   {"=f", OOC_R32}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3, 4), }\n", names[i].descr);
        s.dtype = (ooc_dtype_t)99;
        CU_ASSERT_EQUAL(parse_dict(1, dict, &s, &off, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(s.dtype, names[i].t);
    }
}

static void test_parse_errors(void)
{
    parse_fails(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "big-endian");
    parse_fails(1, "{'descr': '>c16', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "big-endian");
    parse_fails(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "'<i4'");
    parse_fails(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "'<f2'");
    parse_fails(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "'|u1'");
    parse_fails(1, "{'descr': '>d', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "big-endian");
    parse_fails(1, "{'descr': '|f8', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "'|f8'");
    parse_fails(1, "{'descr': '<f16', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "'<f16'");
    parse_fails(1, "{'descr': '<', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "'<'");
    parse_fails(1, "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (3,), }",
                OOC_ERR_FORMAT, "[('a', '<f4')");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 4), }", OOC_ERR_FORMAT, "3 dimensions");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", OOC_ERR_FORMAT, "0-D");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (5), }", OOC_ERR_FORMAT, "not a tuple");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': [3, 4], }", OOC_ERR_FORMAT, "not a tuple");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, -4), }", OOC_ERR_FORMAT, "negative");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, x), }", OOC_ERR_FORMAT, "not an integer");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999, 1), }",
                OOC_ERR_OVERFLOW, "64 bits");
    parse_fails(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1099511627776, 1048576), }",
                OOC_ERR_OVERFLOW, "64 bits");
    parse_fails(1, "{'descr': '<f8', 'shape': (3, 4), }", OOC_ERR_FORMAT, "no 'fortran_order'");
    parse_fails(1, "{'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "no 'descr'");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False}", OOC_ERR_FORMAT, "no 'shape'");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), 'extra': 1}", OOC_ERR_FORMAT,
                "unknown key 'extra'");
    parse_fails(1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)}", OOC_ERR_FORMAT,
                "twice");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': maybe, 'shape': (3, 4), }", OOC_ERR_FORMAT, "True or False");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': Falsey, 'shape': (3, 4), }", OOC_ERR_FORMAT, "True or False");
    parse_fails(1, "{'descr': '<f8' 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "expected ','");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } junk", OOC_ERR_FORMAT,
                "after the dictionary");
    parse_fails(1, "'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)", OOC_ERR_FORMAT, "'{'");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), ", OOC_ERR_FORMAT, "malformed");
    parse_fails(1, "{descr: '<f8', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "quoted key");
    /* only u: not b'...' (bytes), nor a u apart from its quote */
    parse_fails(1, "{b'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT, "quoted key");
    parse_fails(1, "{'descr': b'<f8', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT,
                "not a plain type string");
    parse_fails(1, "{'descr': u '<f8', 'fortran_order': False, 'shape': (3, 4), }", OOC_ERR_FORMAT,
                "not a plain type string");
    /* a bad value is quoted alone, not with the rest of the header and its padding */
    parse_fails(1, "{'descr': '<f8', 'fortran_order': 1, 'shape': (5, 3), }      \n", OOC_ERR_FORMAT,
                "fortran_order is 1, not True or False");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': [3, 4], }      \n", OOC_ERR_FORMAT,
                "shape [3, 4] is not a tuple");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, x), }      \n", OOC_ERR_FORMAT,
                "shape holds x, not an integer");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3 4), }      \n", OOC_ERR_FORMAT,
                "expected ',' or ')' in shape, found 4 at");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False 'shape': (3, 4), }      \n", OOC_ERR_FORMAT,
                "expected ',' or '}' at 'shape': (3, 4) at");
    parse_fails(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)      \n", OOC_ERR_FORMAT,
                "expected ',' or '}' at the end of the header");
    /* a NUL byte (a header padded with NULs) is named, with its offset */
    {
        static const char d[] = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }\0\0\0\n";
        ooc_file_spec_t s = Sentinel;
        uint64_t off = 12345;
        size_t len = npy_bytes(Hdr, 1, "");
        memcpy(Hdr + len, d, sizeof d - 1);
        Hdr[8] = (unsigned char)(sizeof d - 1); /* the header length */
        size_t need = 0;
        ooc_err_t err;
        ooc_err_clear(&err);
        CU_ASSERT_EQUAL(ooc_npy_parse(Hdr, len + sizeof d - 1, &s, &off, &need, &err), OOC_ERR_FORMAT);
        char want[64];
        snprintf(want, sizeof want, "a NUL byte at byte %zu", len + strlen(d));
        CU_ASSERT(contains(err.msg, want));
        if (!contains(err.msg, want)) fprintf(stderr, "\n  message: \"%s\" lacks \"%s\"\n", err.msg, want);
        CU_ASSERT(is_sentinel(&s));
    }

    ooc_file_spec_t s = Sentinel;
    uint64_t off = 7;
    size_t need = 0;
    ooc_err_t err;
    /* bad magic */
    size_t n = npy_bytes(Hdr, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }\n");
    Hdr[1] = 'X';
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_npy_parse(Hdr, n, &s, &off, &need, &err), OOC_ERR_FORMAT);
    CU_ASSERT(contains(err.msg, "magic"));
    CU_ASSERT_EQUAL(need, 0);
    /* unsupported versions */
    Hdr[1] = 'N';
    Hdr[6] = 4;
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_npy_parse(Hdr, n, &s, &off, &need, &err), OOC_ERR_FORMAT);
    CU_ASSERT(contains(err.msg, "version 4.0"));
    Hdr[6] = 1;
    Hdr[7] = 1;
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_npy_parse(Hdr, n, &s, &off, &need, &err), OOC_ERR_FORMAT);
    CU_ASSERT(contains(err.msg, "version 1.1"));
    Hdr[7] = 0;
    /* truncated: every shorter prefix asks for more, never beyond the header */
    for (size_t len = 0; len < n; len++) {
        need = 0;
        ooc_err_clear(&err);
        CU_ASSERT_EQUAL(ooc_npy_parse(Hdr, len, &s, &off, &need, &err), OOC_ERR_FORMAT);
        CU_ASSERT(need > len && need <= n);
        CU_ASSERT(contains(err.msg, "truncated"));
    }
    need = 0;
    CU_ASSERT_EQUAL(ooc_npy_parse(Hdr, n - 1, &s, &off, &need, &err), OOC_ERR_FORMAT);
    CU_ASSERT_EQUAL(need, n);
    CU_ASSERT(is_sentinel(&s));
    CU_ASSERT_EQUAL(off, 7);
    /* version 2.0 with a 4-byte length: 9 bytes ask for the 12-byte preamble */
    n = npy_bytes(Hdr, 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }\n");
    need = 0;
    CU_ASSERT_EQUAL(ooc_npy_parse(Hdr, 9, &s, &off, &need, &err), OOC_ERR_FORMAT);
    CU_ASSERT_EQUAL(need, 12);
    CU_ASSERT_EQUAL(ooc_npy_parse(Hdr, n, &s, &off, &need, &err), OOC_SUCCESS);
    /* an absurd header length is garbage, not a request for 4 GiB */
    Hdr[8] = 0xff, Hdr[9] = 0xff, Hdr[10] = 0xff, Hdr[11] = 0x7f;
    need = 0;
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_npy_parse(Hdr, n, &s, &off, &need, &err), OOC_ERR_FORMAT);
    CU_ASSERT_EQUAL(need, 0);
    CU_ASSERT(contains(err.msg, "1 GiB"));
}

/* ---- complete reads and writes ---- */

static void test_pread_pwrite(void)
{
    char path[256];
    in_dir(path, sizeof path, "rw.bin");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CU_ASSERT_FATAL(fd >= 0);
    unsigned char out[10000], in[10000];
    uint64_t seed = 5;
    tu_fill(OOC_R32, out, sizeof out / 4, &seed);
    ooc_err_t err;
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_io_pwrite(fd, out, sizeof out, 100, path, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(file_size(path), 10100);
    CU_ASSERT_EQUAL(ooc_io_pread(fd, in, sizeof in, 100, path, &err), OOC_SUCCESS);
    CU_ASSERT(memcmp(in, out, sizeof in) == 0);
    /* past the end: FORMAT, naming the path, what was read and where */
    CU_ASSERT_EQUAL(ooc_io_pread(fd, in, 200, 10000, path, &err), OOC_ERR_FORMAT);
    CU_ASSERT(contains(err.msg, path));
    CU_ASSERT(contains(err.msg, "truncated: read 100 of 200 bytes at offset 10000"));
    /* a bad descriptor: IO, naming the call and the path */
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_io_pread(-1, in, 10, 0, path, &err), OOC_ERR_IO);
    CU_ASSERT(contains(err.msg, "pread"));
    CU_ASSERT(contains(err.msg, path));
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_io_pwrite(-1, out, 10, 0, path, &err), OOC_ERR_IO);
    CU_ASSERT(contains(err.msg, "pwrite"));
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_io_pread(fd, in, 10, UINT64_MAX - 5, path, &err), OOC_ERR_OVERFLOW);
    /* zero bytes: nothing to do */
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_io_pread(fd, in, 0, 1u << 30, path, &err), OOC_SUCCESS);

    /* one transfer over 2 GiB (several syscalls) on a sparse file: some
     * seconds of page faults, so only with OOC_TEST_BIG_IO=1 */
    if (getenv("OOC_TEST_BIG_IO") == NULL) {
        close(fd);
        unlink(path);
        return;
    }
    size_t big = ((size_t)1 << 31) + 4096 + 3;
    CU_ASSERT_EQUAL_FATAL(ftruncate(fd, (off_t)big + 64), 0);
    unsigned char tail[3] = {1, 2, 3};
    CU_ASSERT_EQUAL(ooc_io_pwrite(fd, tail, 3, 64 + big - 3, path, &err), OOC_SUCCESS);
    unsigned char *b = malloc(big);
    if (b != NULL) {
        b[0] = 0x55;
        ooc_err_clear(&err);
        CU_ASSERT_EQUAL(ooc_io_pread(fd, b, big, 64, path, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(b[0], 0);
        CU_ASSERT(memcmp(b + big - 3, tail, 3) == 0);
        /* and back: the whole buffer in one call */
        b[0] = 9;
        CU_ASSERT_EQUAL(ooc_io_pwrite(fd, b, big, 128, path, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(file_size(path), (long long)(128 + big));
        unsigned char chk[3] = {0};
        CU_ASSERT_EQUAL(ooc_io_pread(fd, chk, 3, 128 + big - 3, path, &err), OOC_SUCCESS);
        CU_ASSERT(memcmp(chk, tail, 3) == 0);
        CU_ASSERT_EQUAL(ooc_io_pread(fd, chk, 1, 128, path, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(chk[0], 9);
        free(b);
    }
    close(fd);
    unlink(path);
}

/* ---- files ---- */

static void tmp_of(char *out, size_t n, const char *path) { snprintf(out, n, "%s.ooc-tmp", path); }

/* create, write in pieces, commit, reopen, read back */
static void roundtrip(ooc_format_t fmt, ooc_dtype_t t, ooc_layout_t lay)
{
    const int64_t rows = 37, cols = 23;
    const uint64_t total = (uint64_t)(rows * cols);
    size_t e = tu_elem(t), bytes = total * e;
    char path[256], tmp[300];
    char name[64];
    snprintf(name, sizeof name, "m_%d_%d_%d.%s", (int)fmt, (int)t, (int)lay, fmt == OOC_FORMAT_NPY ? "npy" : "bin");
    in_dir(path, sizeof path, name);
    tmp_of(tmp, sizeof tmp, path);
    unsigned char *data = malloc(bytes), *back = malloc(bytes);
    CU_ASSERT_FATAL(data != NULL && back != NULL);
    uint64_t seed = 1000 + (uint64_t)fmt * 100 + (uint64_t)t * 10 + (uint64_t)lay;
    tu_fill(t, data, total, &seed);

    ooc_file_spec_t spec = {fmt, rows, cols, t, lay};
    ooc_file_t *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, 0, &f), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(H), "");
    uint64_t off = ooc_file_data_offset(f);
    if (fmt == OOC_FORMAT_NPY) {
        CU_ASSERT(off >= 64 && off % 64 == 0);
    } else {
        CU_ASSERT_EQUAL(off, 0);
    }
    CU_ASSERT(!exists(path));
    CU_ASSERT(exists(tmp));
    /* at full size, then its trailer: "oocgemm-tmp-id ", 16 hex digits of an id, a newline */
    CU_ASSERT_EQUAL(file_size(tmp), (long long)(off + bytes + OOC_TMP_TRAILER));
    {
        size_t tlen = 0;
        unsigned char *whole = read_all(tmp, &tlen);
        CU_ASSERT_FATAL(whole != NULL && tlen == off + bytes + OOC_TMP_TRAILER);
        char tr[OOC_TMP_TRAILER + 1]; /* (a string: the file's bytes end there) */
        memcpy(tr, whole + off + bytes, OOC_TMP_TRAILER);
        tr[OOC_TMP_TRAILER] = '\0';
        CU_ASSERT(memcmp(tr, OOC_TMP_TRAILER_TAG, sizeof OOC_TMP_TRAILER_TAG - 1) == 0);
        CU_ASSERT(strspn(tr + sizeof OOC_TMP_TRAILER_TAG - 1, "0123456789abcdef") == 16 && tr[OOC_TMP_TRAILER - 1] == '\n');
        CU_ASSERT(strncmp(tr + sizeof OOC_TMP_TRAILER_TAG - 1, "0000000000000000", 16) != 0);
        free(whole);
    }
    /* three pieces, out of order */
    uint64_t a = total / 3, b = 2 * total / 3;
    CU_ASSERT_EQUAL(ooc_file_write(H, f, b, data + b * e, total - b), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_write(H, f, 0, data, a), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_write(H, f, a, data + a * e, b - a), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_write(H, f, total, data, 0), OOC_SUCCESS);
    /* a created file reads back what was written before commit */
    memset(back, 0, bytes);
    CU_ASSERT_EQUAL(ooc_file_read(H, f, 0, back, total), OOC_SUCCESS);
    CU_ASSERT(memcmp(back, data, bytes) == 0);
    CU_ASSERT(!exists(path));
    CU_ASSERT_EQUAL(ooc_file_commit(H, f), OOC_SUCCESS);
    CU_ASSERT(exists(path));
    CU_ASSERT(!exists(tmp));
    CU_ASSERT_EQUAL(file_size(path), (long long)(off + bytes));
    /* committed: read-only, committing again changes nothing */
    CU_ASSERT_EQUAL(ooc_file_write(H, f, 0, data, 1), OOC_ERR_INVALID_PARAM);
    CU_ASSERT(contains(ooc_last_error(H), "committed"));
    CU_ASSERT(ooc_last_error_path(H) != NULL && strcmp(ooc_last_error_path(H), path) == 0); /* (was NULL) */
    CU_ASSERT_EQUAL(ooc_file_commit(H, f), OOC_SUCCESS);
    ooc_file_close(f, 1); /* discard does not touch a committed file */
    CU_ASSERT(exists(path));

    /* the data lies where the header says, byte for byte */
    size_t flen = 0;
    unsigned char *raw = read_all(path, &flen);
    CU_ASSERT_FATAL(raw != NULL);
    CU_ASSERT_EQUAL(flen, off + bytes);
    CU_ASSERT(memcmp(raw + off, data, bytes) == 0);
    if (fmt == OOC_FORMAT_NPY) {
        unsigned char hdr[512];
        CU_ASSERT_EQUAL(ooc_npy_format(&spec, hdr, sizeof hdr), off);
        CU_ASSERT(memcmp(raw, hdr, off) == 0);
    }
    free(raw);

    /* reopen: .npy by its magic (AUTO and NPY), raw by its spec */
    for (int k = 0; k < (fmt == OOC_FORMAT_NPY ? 2 : 1); k++) {
        ooc_file_spec_t os = {OOC_FORMAT_AUTO, 0, 0, (ooc_dtype_t)0, (ooc_layout_t)0};
        if (fmt == OOC_FORMAT_RAW) os = spec;
        else if (k == 1) os.format = OOC_FORMAT_NPY;
        ooc_file_t *g = NULL;
        CU_ASSERT_EQUAL_FATAL(ooc_file_open(H, path, &os, &g), OOC_SUCCESS);
        ooc_file_spec_t d;
        CU_ASSERT_EQUAL(ooc_file_describe(g, &d), OOC_SUCCESS);
        CU_ASSERT_EQUAL(d.format, fmt);
        CU_ASSERT_EQUAL(d.rows, rows);
        CU_ASSERT_EQUAL(d.cols, cols);
        CU_ASSERT_EQUAL(d.dtype, t);
        CU_ASSERT_EQUAL(d.layout, lay);
        CU_ASSERT_EQUAL(ooc_file_data_offset(g), off);
        memset(back, 0, bytes);
        CU_ASSERT_EQUAL(ooc_file_read(H, g, 0, back, total), OOC_SUCCESS);
        CU_ASSERT(memcmp(back, data, bytes) == 0);
        /* a slice from the middle */
        memset(back, 0, bytes);
        CU_ASSERT_EQUAL(ooc_file_read(H, g, 101, back, 57), OOC_SUCCESS);
        CU_ASSERT(memcmp(back, data + 101 * e, 57 * e) == 0);
        /* opened for reading: no writes */
        CU_ASSERT_EQUAL(ooc_file_write(H, g, 0, data, 1), OOC_ERR_INVALID_PARAM);
        CU_ASSERT(contains(ooc_last_error(H), path));
        CU_ASSERT_EQUAL(ooc_file_commit(H, g), OOC_ERR_INVALID_PARAM);
        ooc_file_close(g, 1);
        CU_ASSERT(exists(path));
    }
    unlink(path);
    free(data);
    free(back);
}

static void test_file_roundtrip(void)
{
    for (int fmt = OOC_FORMAT_NPY; fmt <= OOC_FORMAT_RAW; fmt++)
        for (int t = OOC_R32; t <= OOC_C64; t++)
            for (int l = 0; l < 2; l++)
                roundtrip((ooc_format_t)fmt, (ooc_dtype_t)t, l ? OOC_COL_MAJOR : OOC_ROW_MAJOR);
}

/* a committed 5 x 4 float64 .npy at path; returns its data offset */
static uint64_t make_npy(const char *path)
{
    ooc_file_spec_t spec = {OOC_FORMAT_NPY, 5, 4, OOC_R64, OOC_ROW_MAJOR};
    double v[20];
    for (int i = 0; i < 20; i++) v[i] = i + 0.5;
    ooc_file_t *f = NULL;
    if (ooc_file_create(H, path, &spec, 0, &f) != OOC_SUCCESS) return 0;
    uint64_t off = ooc_file_data_offset(f);
    if (ooc_file_write(H, f, 0, v, 20) != OOC_SUCCESS || ooc_file_commit(H, f) != OOC_SUCCESS) off = 0;
    ooc_file_close(f, 1);
    return off;
}

/* open must fail with st, the message holding sub, *file untouched */
static void open_fails(const char *path, const ooc_file_spec_t *spec, ooc_status_t st, const char *sub)
{
    ooc_file_t *sentinel = (ooc_file_t *)&sentinel, *f = sentinel;
    CU_ASSERT_EQUAL(ooc_file_open(H, path, spec, &f), st);
    CU_ASSERT(f == sentinel);
    CU_ASSERT(contains(ooc_last_error(H), sub));
    if (!contains(ooc_last_error(H), sub))
        fprintf(stderr, "\n  message for %s: \"%s\" lacks \"%s\"\n", path, ooc_last_error(H), sub);
}

static void test_open_errors(void)
{
    char good[256], bad[256];
    in_dir(good, sizeof good, "good.npy");
    in_dir(bad, sizeof bad, "bad.npy");
    uint64_t off = make_npy(good);
    CU_ASSERT_FATAL(off == 128);
    size_t len;
    unsigned char *raw = read_all(good, &len);
    CU_ASSERT_FATAL(raw != NULL);
    CU_ASSERT_EQUAL_FATAL(len, 128 + 160);
    ooc_file_spec_t autos = {OOC_FORMAT_AUTO, 0, 0, (ooc_dtype_t)0, (ooc_layout_t)0};

    /* one byte short, one byte over */
    CU_ASSERT_EQUAL(write_file(bad, raw, len - 1), 0);
    open_fails(bad, &autos, OOC_ERR_FORMAT, "truncated");
    CU_ASSERT(contains(ooc_last_error(H), bad));
    unsigned char *more = malloc(len + 1);
    CU_ASSERT_FATAL(more != NULL);
    memcpy(more, raw, len);
    more[len] = 0;
    CU_ASSERT_EQUAL(write_file(bad, more, len + 1), 0);
    open_fails(bad, &autos, OOC_ERR_FORMAT, "1 byte after the data");
    free(more);
    /* cut inside the header, or empty */
    CU_ASSERT_EQUAL(write_file(bad, raw, 100), 0);
    open_fails(bad, &autos, OOC_ERR_FORMAT, "truncated header");
    open_fails(bad, &autos, OOC_ERR_FORMAT, "the file has 100 bytes, the header needs 128");
    /* a header length past the end of a longer file: the file's size, not
     * the 64 bytes read first */
    {
        unsigned char *big = calloc(1, 1012);
        CU_ASSERT_FATAL(big != NULL);
        memcpy(big, "\x93NUMPY\x02\x00", 8);
        big[8] = 300002 & 0xff, big[9] = (300002 >> 8) & 0xff, big[10] = 300002 >> 16;
        memcpy(big + 12, "{'descr': '<f8', ", 17);
        CU_ASSERT_EQUAL(write_file(bad, big, 1012), 0);
        open_fails(bad, &autos, OOC_ERR_FORMAT, "truncated header: the file has 1012 bytes, the header needs 300014");
        free(big);
    }
    CU_ASSERT_EQUAL(write_file(bad, raw, 3), 0);
    open_fails(bad, &autos, OOC_ERR_FORMAT, "truncated header");
    CU_ASSERT_EQUAL(write_file(bad, raw, 0), 0);
    open_fails(bad, &autos, OOC_ERR_FORMAT, "not a .npy file");
    /* big-endian in a file: the codec's message, prefixed with the path */
    raw[21] = '>';
    CU_ASSERT(memcmp(raw + 20, "'>f8'", 5) == 0);
    CU_ASSERT_EQUAL(write_file(bad, raw, len), 0);
    open_fails(bad, &autos, OOC_ERR_FORMAT, "big-endian");
    CU_ASSERT(strncmp(ooc_last_error(H), bad, strlen(bad)) == 0);
    raw[21] = '<';
    /* a header longer than the first 64 bytes read, and 2.0 */
    {
        char dict[400];
        snprintf(dict, sizeof dict, "{'descr': '<f8', %300s 'fortran_order': False, 'shape': (5, 4), }\n", "");
        unsigned char *big = malloc(1024);
        CU_ASSERT_FATAL(big != NULL);
        size_t n = npy_bytes(big, 2, dict);
        memcpy(big + n, raw + 128, 160);
        CU_ASSERT_EQUAL(write_file(bad, big, n + 160), 0);
        ooc_file_t *f = NULL;
        CU_ASSERT_EQUAL(ooc_file_open(H, bad, &autos, &f), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_file_data_offset(f), n);
        double v[20] = {0};
        CU_ASSERT_EQUAL(ooc_file_read(H, f, 0, v, 20), OOC_SUCCESS);
        CU_ASSERT_EQUAL(v[19], 19.5);
        ooc_file_close(f, 0);
        free(big);
    }

    /* not a .npy file: AUTO says how to read raw data */
    CU_ASSERT_EQUAL(write_file(bad, raw + 128, 160), 0);
    open_fails(bad, &autos, OOC_ERR_FORMAT, "not a .npy file");
    CU_ASSERT(contains(ooc_last_error(H), "raw"));
    ooc_file_spec_t npys = autos;
    npys.format = OOC_FORMAT_NPY;
    open_fails(bad, &npys, OOC_ERR_FORMAT, "magic");
    /* raw: every field of the spec is needed, and the size must match */
    ooc_file_spec_t rs = {OOC_FORMAT_RAW, 5, 4, OOC_R64, OOC_ROW_MAJOR};
    ooc_file_t *f = NULL;
    CU_ASSERT_EQUAL(ooc_file_open(H, bad, &rs, &f), OOC_SUCCESS);
    double v[20];
    CU_ASSERT_EQUAL(ooc_file_read(H, f, 0, v, 20), OOC_SUCCESS);
    CU_ASSERT_EQUAL(v[7], 7.5);
    /* read past the end: SHAPE, overflow-safe */
    CU_ASSERT_EQUAL(ooc_file_read(H, f, 18, v, 3), OOC_ERR_SHAPE);
    CU_ASSERT(contains(ooc_last_error(H), bad));
    CU_ASSERT_EQUAL(ooc_file_read(H, f, 21, v, 0), OOC_ERR_SHAPE);
    CU_ASSERT_EQUAL(ooc_file_read(H, f, UINT64_MAX, v, 2), OOC_ERR_SHAPE);
    CU_ASSERT_EQUAL(ooc_file_read(H, f, 2, v, UINT64_MAX), OOC_ERR_SHAPE);
    CU_ASSERT_EQUAL(ooc_file_read(H, f, 20, v, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_read(H, f, 0, NULL, 1), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_file_read(NULL, f, 0, v, 1), OOC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL(ooc_file_write(H, f, 0, v, 1), OOC_ERR_INVALID_PARAM);
    CU_ASSERT(contains(ooc_last_error(H), "read-only"));
    ooc_file_close(f, 1);
    CU_ASSERT(exists(bad)); /* discard only removes a created temporary */
    rs.rows = -1;
    open_fails(bad, &rs, OOC_ERR_FORMAT, "rows");
    rs.rows = 0; /* an empty matrix is 0 bytes, not these 160 */
    open_fails(bad, &rs, OOC_ERR_FORMAT, "shape mismatch");
    rs.rows = 5;
    /* an empty raw matrix written reads back (it was refused: "rows >= 1") */
    char empty[256];
    in_dir(empty, sizeof empty, "empty.bin");
    for (int zero_rows = 0; zero_rows < 2; zero_rows++) {
        ooc_file_spec_t es = {OOC_FORMAT_RAW, zero_rows ? 0 : 3, zero_rows ? 3 : 0, OOC_R64, OOC_ROW_MAJOR};
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, empty, &es, 0, &f), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_file_commit(H, f), OOC_SUCCESS);
        ooc_file_close(f, 0);
        f = NULL;
        CU_ASSERT_EQUAL(ooc_file_open(H, empty, &es, &f), OOC_SUCCESS);
        ooc_file_spec_t ed;
        CU_ASSERT(f != NULL && ooc_file_describe(f, &ed) == OOC_SUCCESS && ed.rows == es.rows && ed.cols == es.cols);
        ooc_file_close(f, 0);
        unlink(empty);
    }
    rs.rows = 5, rs.cols = -1;
    open_fails(bad, &rs, OOC_ERR_FORMAT, "cols");
    rs.cols = 4, rs.dtype = (ooc_dtype_t)0;
    open_fails(bad, &rs, OOC_ERR_FORMAT, "dtype");
    rs.dtype = OOC_R64, rs.layout = (ooc_layout_t)0;
    open_fails(bad, &rs, OOC_ERR_FORMAT, "order");
    rs.layout = OOC_COL_MAJOR, rs.cols = 5;
    open_fails(bad, &rs, OOC_ERR_FORMAT, "truncated");
    rs.cols = 3;
    open_fails(bad, &rs, OOC_ERR_FORMAT, "shape mismatch");
    rs.cols = (int64_t)1 << 62;
    open_fails(bad, &rs, OOC_ERR_OVERFLOW, "64 bits");
    rs.format = (ooc_format_t)9;
    open_fails(bad, &rs, OOC_ERR_FORMAT, "unknown file format");

    /* nothing there, or not a file */
    char none[256];
    in_dir(none, sizeof none, "no/such.npy");
    open_fails(none, &autos, OOC_ERR_IO, none);
    CU_ASSERT(contains(ooc_last_error(H), "No such file"));
    open_fails(Dir, &autos, OOC_ERR_IO, "not a regular file");
    char fifo[256];
    in_dir(fifo, sizeof fifo, "fifo.npy");
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    open_fails(fifo, &autos, OOC_ERR_IO, "not a regular file"); /* and does not hang */
    unlink(fifo);
    /* arguments */
    CU_ASSERT_EQUAL(ooc_file_open(NULL, good, &autos, &f), OOC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL(ooc_file_open(H, NULL, &autos, &f), OOC_ERR_NULL_ARG);
    /* spec NULL: AUTO, a .npy file by its magic */
    f = NULL;
    CU_ASSERT_EQUAL(ooc_file_open(H, good, NULL, &f), OOC_SUCCESS);
    if (f) {
        ooc_file_spec_t g;
        CU_ASSERT_EQUAL(ooc_file_describe(f, &g), OOC_SUCCESS);
        CU_ASSERT_EQUAL(g.format, OOC_FORMAT_NPY);
        ooc_file_close(f, 0);
    }
    f = NULL;
    CU_ASSERT_EQUAL(ooc_file_open(H, good, &autos, NULL), OOC_ERR_NULL_ARG);
    ooc_file_spec_t d;
    CU_ASSERT_EQUAL(ooc_file_describe(NULL, &d), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_file_data_offset(NULL), 0);
    ooc_file_close(NULL, 1);
    /* a success clears the last error */
    f = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(H, good, &autos, &f), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(H), "");
    CU_ASSERT_EQUAL(ooc_file_describe(f, NULL), OOC_ERR_NULL_ARG);
    ooc_file_close(f, 0);
    free(raw);
    unlink(good);
    unlink(bad);
}

static void test_create_errors(void)
{
    char path[256], tmp[300];
    ooc_file_spec_t spec = {OOC_FORMAT_AUTO, 4, 4, OOC_R32, OOC_ROW_MAJOR};
    ooc_file_t *sentinel = (ooc_file_t *)&sentinel, *f = sentinel;
    /* AUTO: .npy by the name, anything else must say its format */
    in_dir(path, sizeof path, "c.bin");
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_FORMAT);
    CU_ASSERT(contains(ooc_last_error(H), "format"));
    in_dir(path, sizeof path, "c.npy");
    tmp_of(tmp, sizeof tmp, path);
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, 0, &f), OOC_SUCCESS);
    CU_ASSERT_FATAL(f != sentinel);
    ooc_file_spec_t d;
    CU_ASSERT_EQUAL(ooc_file_describe(f, &d), OOC_SUCCESS);
    CU_ASSERT_EQUAL(d.format, OOC_FORMAT_NPY);
    CU_ASSERT_EQUAL(ooc_file_write(H, f, 15, "abcdefgh", 2), OOC_ERR_SHAPE);
    ooc_file_close(f, 1); /* discard removes the temporary, never the target */
    CU_ASSERT(!exists(tmp));
    CU_ASSERT(!exists(path));
    f = sentinel;
    /* bad specs */
    spec.format = OOC_FORMAT_RAW;
    spec.rows = -1;
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_FORMAT);
    CU_ASSERT(contains(ooc_last_error(H), "rows"));
    spec.rows = 0; /* an empty result is a valid file */
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_commit(H, f), OOC_SUCCESS);
    ooc_file_close(f, 0);
    CU_ASSERT(exists(path));
    unlink(path);
    f = sentinel;
    spec.rows = 4, spec.dtype = (ooc_dtype_t)7;
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_FORMAT);
    CU_ASSERT(contains(ooc_last_error(H), "dtype"));
    spec.dtype = OOC_C64, spec.layout = (ooc_layout_t)3;
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_FORMAT);
    spec.layout = OOC_COL_MAJOR, spec.rows = (int64_t)1 << 40, spec.cols = (int64_t)1 << 30;
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_OVERFLOW);
    spec.rows = 4, spec.cols = 4, spec.format = (ooc_format_t)5;
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_FORMAT);
    CU_ASSERT(f == sentinel);
    CU_ASSERT(!exists(tmp));
    /* a name another output's job would take for its temporary file (and
     * replace when it starts afresh): refused, nothing made */
    spec.format = OOC_FORMAT_RAW;
    in_dir(path, sizeof path, "d.bin.ooc-tmp");
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_INVALID_PARAM);
    CU_ASSERT(contains(ooc_last_error(H), "temporary file"));
    CU_ASSERT(f == sentinel);
    CU_ASSERT(!exists(path));
    /* nor another job's default journal, which this file would replace */
    in_dir(path, sizeof path, "d.bin.ooc-journal");
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_INVALID_PARAM);
    CU_ASSERT(contains(ooc_last_error(H), "resume journal of a job on"));
    CU_ASSERT(f == sentinel);
    CU_ASSERT(!exists(path));
    char jtmp[600];
    tmp_of(jtmp, sizeof jtmp, path);
    CU_ASSERT(!exists(jtmp));
    in_dir(path, sizeof path, "d.bin.ooc-journal.r1-of-12"); /* (a rank's of a split job) */
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_INVALID_PARAM);
    CU_ASSERT(contains(ooc_last_error(H), "resume journal of a job on"));
    in_dir(path, sizeof path, "d.bin.ooc-journal.old"); /* (anything else after it is a name) */
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_SUCCESS);
    ooc_file_close(f, 1);
    f = sentinel;
    in_dir(path, sizeof path, "d.ooc-tmp.bin"); /* (the suffix elsewhere in the name is a name) */
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_SUCCESS);
    ooc_file_close(f, 1);
    f = sentinel;
    /* a directory that does not exist: IO naming the temporary */
    spec.format = OOC_FORMAT_NPY;
    in_dir(path, sizeof path, "no/such/dir/c.npy");
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, &f), OOC_ERR_IO);
    CU_ASSERT(contains(ooc_last_error(H), path));
    CU_ASSERT(f == sentinel);
    /* arguments */
    CU_ASSERT_EQUAL(ooc_file_create(NULL, path, &spec, 0, &f), OOC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL(ooc_file_create(H, NULL, &spec, 0, &f), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_file_create(H, path, &spec, 0, NULL), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_file_commit(H, NULL), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_file_commit(NULL, f), OOC_ERR_INVALID_HANDLE);
    /* a file in the current directory (no slash in the name) commits too */
    char cwd[512];
    CU_ASSERT_FATAL(getcwd(cwd, sizeof cwd) != NULL);
    CU_ASSERT_FATAL(chdir(Dir) == 0);
    spec.format = OOC_FORMAT_RAW;
    f = NULL;
    CU_ASSERT_EQUAL(ooc_file_create(H, "here.bin", &spec, 0, &f), OOC_SUCCESS);
    if (f != NULL) CU_ASSERT_EQUAL(ooc_file_commit(H, f), OOC_SUCCESS);
    ooc_file_close(f, 0);
    CU_ASSERT(exists("here.bin"));
    CU_ASSERT(!exists("here.bin.ooc-tmp"));
    unlink("here.bin");
    CU_ASSERT_FATAL(chdir(cwd) == 0);
}

static void test_resume(void)
{
    char path[256], tmp[300];
    in_dir(path, sizeof path, "r.npy");
    tmp_of(tmp, sizeof tmp, path);
    ooc_file_spec_t spec = {OOC_FORMAT_NPY, 16, 8, OOC_R64, OOC_COL_MAJOR};
    double d1[128], back[128], zero[128] = {0};
    uint64_t seed = 77;
    tu_fill(OOC_R64, d1, 128, &seed);

    for (int fmt = OOC_FORMAT_NPY; fmt <= OOC_FORMAT_RAW; fmt++) {
        spec.format = (ooc_format_t)fmt;
        spec.rows = 16, spec.cols = 8, spec.dtype = OOC_R64;
        /* a run that wrote its data and stopped before commit */
        ooc_file_t *f = NULL;
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, 0, &f), OOC_SUCCESS);
        CU_ASSERT_EQUAL(f->resumed, 0);
        CU_ASSERT_EQUAL(ooc_file_write(H, f, 0, d1, 128), OOC_SUCCESS);
        uint64_t id = f->id;
        CU_ASSERT(id != 0);
        ooc_file_close(f, 0);
        CU_ASSERT(exists(tmp));
        CU_ASSERT(!exists(path));
        /* resumed with the same spec: the data is kept, and the file's id */
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, OOC_FILE_RESUME, &f), OOC_SUCCESS);
        CU_ASSERT_EQUAL(f->resumed, 1);
        CU_ASSERT(f->id == id);
        memset(back, 0, sizeof back);
        CU_ASSERT_EQUAL(ooc_file_read(H, f, 0, back, 128), OOC_SUCCESS);
        CU_ASSERT(memcmp(back, d1, sizeof d1) == 0);
        ooc_file_close(f, 0);
        CU_ASSERT(exists(tmp));
        /* its trailer edited (an upper-case digit, then an id of 0): not the
         * file it was, started afresh with a new id */
        static const char *edits[] = {"oocgemm-tmp-id 0123456789ABCDEF\n", "oocgemm-tmp-id 0000000000000000\n"};
        for (int e = 0; e < 2; e++) {
            int fd = open(tmp, O_WRONLY);
            CU_ASSERT_FATAL(fd >= 0);
            CU_ASSERT(pwrite(fd, edits[e], OOC_TMP_TRAILER, (off_t)file_size(tmp) - OOC_TMP_TRAILER) == OOC_TMP_TRAILER);
            close(fd);
            CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, OOC_FILE_RESUME, &f), OOC_SUCCESS);
            CU_ASSERT_EQUAL(f->resumed, 0);
            CU_ASSERT(f->id != 0 && f->id != id);
            CU_ASSERT_EQUAL(ooc_file_write(H, f, 0, d1, 128), OOC_SUCCESS);
            id = f->id;
            ooc_file_close(f, 0);
        }
        /* sealed (its job complete): resumed without an id (the journal's
         * complete record must then name it), and sealing is once */
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, OOC_FILE_RESUME, &f), OOC_SUCCESS);
        CU_ASSERT(f->resumed == 1 && f->id == id);
        ooc_err_t serr;
        ooc_err_clear(&serr);
        long long data_end = file_size(tmp) - OOC_TMP_TRAILER;
        CU_ASSERT_EQUAL(ooc_file_seal(&serr, f), OOC_SUCCESS);
        CU_ASSERT(f->id == 0 && file_size(tmp) == data_end);
        CU_ASSERT_EQUAL(ooc_file_seal(&serr, f), OOC_SUCCESS);
        CU_ASSERT_EQUAL(file_size(tmp), data_end);
        ooc_file_close(f, 0);
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, OOC_FILE_RESUME, &f), OOC_SUCCESS);
        CU_ASSERT(f->resumed == 1 && f->id == 0);
        CU_ASSERT_EQUAL(ooc_file_read(H, f, 0, back, 128), OOC_SUCCESS);
        CU_ASSERT(memcmp(back, d1, sizeof d1) == 0);
        ooc_file_close(f, 0);
        /* a different shape of the same size: a .npy header differs, start fresh;
         * raw cannot tell (the journal must) */
        spec.rows = 8, spec.cols = 16;
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, OOC_FILE_RESUME, &f), OOC_SUCCESS);
        CU_ASSERT_EQUAL(f->resumed, fmt == OOC_FORMAT_RAW);
        CU_ASSERT_EQUAL(ooc_file_read(H, f, 0, back, 128), OOC_SUCCESS);
        CU_ASSERT(memcmp(back, fmt == OOC_FORMAT_NPY ? zero : d1, sizeof back) == 0);
        CU_ASSERT_EQUAL(ooc_file_write(H, f, 0, d1, 128), OOC_SUCCESS);
        ooc_file_close(f, 0);
        /* a temporary of the wrong size: fresh */
        CU_ASSERT_EQUAL(truncate(tmp, file_size(tmp) - 8), 0);
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, OOC_FILE_RESUME, &f), OOC_SUCCESS);
        CU_ASSERT_EQUAL(f->resumed, 0);
        CU_ASSERT_EQUAL(ooc_file_read(H, f, 0, back, 128), OOC_SUCCESS);
        CU_ASSERT(memcmp(back, zero, sizeof back) == 0);
        CU_ASSERT_EQUAL(ooc_file_write(H, f, 0, d1, 128), OOC_SUCCESS);
        ooc_file_close(f, 0);
        /* without the flag a matching temporary is emptied */
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, 0, &f), OOC_SUCCESS);
        CU_ASSERT_EQUAL(f->resumed, 0);
        CU_ASSERT_EQUAL(ooc_file_read(H, f, 0, back, 128), OOC_SUCCESS);
        CU_ASSERT(memcmp(back, zero, sizeof back) == 0);
        /* discard removes it; the target never appeared */
        ooc_file_close(f, 1);
        CU_ASSERT(!exists(tmp));
        CU_ASSERT(!exists(path));
        /* resume with nothing to resume: fresh */
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, path, &spec, OOC_FILE_RESUME, &f), OOC_SUCCESS);
        CU_ASSERT_EQUAL(f->resumed, 0);
        CU_ASSERT(exists(tmp));
        ooc_file_close(f, 1);
        CU_ASSERT(!exists(tmp));
    }
}

/* ---- the temporary directory ---- */

static int suite_init(void) { return mkdtemp(Dir) == NULL ? -1 : 0; }

static int suite_clean(void)
{
    DIR *d = opendir(Dir);
    if (d == NULL) return -1;
    struct dirent *ent;
    char p[512];
    while ((ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", Dir, ent->d_name);
        unlink(p);
    }
    closedir(d);
    return rmdir(Dir) == 0 ? 0 : -1;
}

int main(void)
{
    if (ooc_create(&H) != OOC_SUCCESS) return 1;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("io", suite_init, suite_clean);
    CU_add_test(s, "npy header exactly as numpy writes it", test_format_exact);
    CU_add_test(s, "npy format/parse round trip", test_format_parse_roundtrip);
    CU_add_test(s, "npy headers numpy and others write", test_parse_variants);
    CU_add_test(s, "npy malformed headers", test_parse_errors);
    CU_add_test(s, "complete pread/pwrite", test_pread_pwrite);
    CU_add_test(s, "create, write, commit, open, read", test_file_roundtrip);
    CU_add_test(s, "open failures", test_open_errors);
    CU_add_test(s, "create failures", test_create_errors);
    CU_add_test(s, "resume and discard", test_resume);
    int rc = tu_run();
    ooc_destroy(H);
    return rc;
}
