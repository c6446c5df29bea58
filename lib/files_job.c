/* SPDX-License-Identifier: MIT */
/*
 * files_job.c: a file multiply's job (files.h): the files checked against
 * each other, the range against C (its rows, or its columns with a plan
 * that keeps op(A) resident), the problem in C's layout (an operand
 * stored in the other order is its own transpose), the journal's path (a
 * file of its own) and the job's identity, which a journal must match to be
 * resumed. Reads no matrix data and writes nothing.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fault.h"
#include "files.h"


/* op(X) of a file X: rows x cols after the op */
static void op_shape(const ooc_file_t *f, ooc_op_t op, int64_t *rows, int64_t *cols)
{
    *rows = op == OOC_OP_N ? f->spec.rows : f->spec.cols;
    *cols = op == OOC_OP_N ? f->spec.cols : f->spec.rows;
}

/* The operand as a source in layout `layout`, with *op adjusted: a file in
 * the other order holds the transpose of what it holds in this one. A
 * vector (one row or one column) has the same bytes in either order: C0,
 * which cannot be transposed, and an operand with op C (conjugate
 * transpose: the other order would need conjugation alone) are read as
 * stored in `layout` (as_layout). */
static ooc_status_t as_source(ooc_handle_t *h, const char *role, const ooc_file_t *f, ooc_layout_t layout,
                              int as_layout, ooc_op_t *op, ooc_src_t *src)
{
    int vector = f->spec.rows <= 1 || f->spec.cols <= 1; /* (or empty) */
    if (f->spec.layout != layout && vector && (as_layout || *op == OOC_OP_C)) {
        OOC_FORWARD(as_source(h, role, f, f->spec.layout, 0, op, src));
        src->ld = layout == OOC_ROW_MAJOR ? f->spec.cols : f->spec.rows; /* the one line, in `layout` */
        if (src->ld < 1) src->ld = 1;
        return OOC_SUCCESS;
    }
    if (f->spec.layout != layout) {
        OOC_RETURN_FILE_ERROR_IF(*op == OOC_OP_C, &h->err, OOC_ERR_NOT_SUPPORTED, f->path,
                                 "op(%s) = C (conjugate transpose) needs %s in the output's order (%s order); "
                                 "%s is in the other", role, f->path, layout == OOC_ROW_MAJOR ? "C" : "Fortran", role);
        *op = *op == OOC_OP_N ? OOC_OP_T : OOC_OP_N;
    }
    src->ptr = NULL;
    src->fd = f->fd;
    src->off = f->data_offset;
    src->name = f->path;
    src->ld = ooc_file_ld(f);
    if (src->ld < 1) src->ld = 1;
    src->pinned = 0;
    return OOC_SUCCESS;
}

/* Identity of an input for the journal: the same file, unchanged. Device,
 * inode, size, modification time, shape and layout; with ctime, its status
 * change time last, which no one can set (touch, cp -p, tar and rsync set
 * the modification time): files made apart differ in it even where a new
 * file system gave them the inode, size and time of the old (the device
 * number is not compared: ooc_files_same_job()). */
static int identity(const char *role, const ooc_file_t *f, char *buf, size_t cap, int ctime)
{
    struct stat st;
    if (f == NULL) return snprintf(buf, cap, " %s=none", role);
    if (fstat(f->fd, &st) != 0) return -1;
    int n = snprintf(buf, cap, " %s=%ju:%ju:%jd:%jd.%09ld:%" PRId64 "x%" PRId64 ":%d", role, (uintmax_t)st.st_dev,
                     (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                     f->spec.rows, f->spec.cols, (int)f->spec.layout);
    if (!ctime || n < 0 || (size_t)n >= cap) return n;
    int m = snprintf(buf + n, cap - (size_t)n, ":%jd.%09ld", (intmax_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
    return m < 0 ? m : n + m;
}

ooc_status_t ooc_files_inputs_changed(ooc_files_job_t *job, const char *failed, int *changed)
{
    static const char *const role[3] = {"A", "B", "C0"};
    const ooc_file_t *in[3] = {job->A, job->B, job->C0};
    *changed = 0;
    for (int i = 0; i < 3; i++) {
        char now[sizeof job->inputs[i]];
        if (in[i] == NULL) continue;
        /* (the file the job reads, by its descriptor: one replaced at its
         * path by a rename is read no more, C is the old one's) */
        int got = identity("", in[i], now, sizeof now, 0);
        /* an input that cannot be examined now (a mount gone) is no input
         * changed: the journal stays (a resume examines the inputs again);
         * after a failure, that failure stands */
        if (got < 0 && failed == NULL)
            return OOC_ERR_FILE(&job->h->err, OOC_ERR_IO, in[i]->path,
                                "fstat %s (the input %s) once the blocks were computed: %s: C is not finished "
                                "(its blocks are kept: resume once %s can be read)",
                                in[i]->path, role[i], strerror(errno), in[i]->path);
        if (got < 0) continue;
        if (strcmp(now, job->inputs[i]) != 0) {
            *changed = 1;
            if (failed) ooc_err_clear(&job->h->err); /* (the failure it caused is quoted in this one) */
            return OOC_ERR_FILE(&job->h->err, OOC_ERR_IO, in[i]->path,
                                "%s (the input %s) changed while the job ran: its size or modification time is not "
                                "what it was when the job began (written while its blocks were read, C would mix "
                                "the two): C is not finished, and nothing is kept to resume; run the job again "
                                "once %s stays as it is%s%.3000s%s",
                                in[i]->path, role[i], in[i]->path, failed ? " (the job failed: " : "",
                                failed ? failed : "", failed ? ")" : "");
        }
    }
    return OOC_SUCCESS;
}

static void hex(const void *x, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", ((const unsigned char *)x)[i]);
}

/* x (one element of t) into out; a zero (-0 too, each part) made +0: the
 * multiply treats every zero scalar alike (C0 not read, nothing multiplied),
 * so they are one job. (A complex scalar with one part -0 stays as it is:
 * it can change the sign of a zero in C.) */
static void unsigned_zero(ooc_dtype_t t, const void *x, unsigned char out[16])
{
    size_t e = ooc_dtype_size(t);
    if (ooc_is_zero(t, x)) memset(out, 0, e);
    else memcpy(out, x, e);
}

int ooc_files_in_place(const ooc_file_t *C0, const char *c_path)
{
    struct stat s0, sc;
    return C0 != NULL && lstat(c_path, &sc) == 0 && fstat(C0->fd, &s0) == 0 && s0.st_dev == sc.st_dev &&
           s0.st_ino == sc.st_ino;
}


ooc_status_t ooc_files_job_line(const ooc_handle_t *h, ooc_err_t *err, ooc_op_t ta, ooc_op_t tb, const void *alpha,
                                const ooc_file_t *A, const ooc_file_t *B, const void *beta, const ooc_file_t *C0,
                                const ooc_file_spec_t *cs, int in_place, char *job, size_t cap)
{
    size_t e = ooc_dtype_size(cs->dtype), used = 0;
    char a[40] = "", b[40] = "";
    /* -0 is 0: the same job */
    unsigned char sa[16], sb[16];
    unsigned_zero(cs->dtype, alpha, sa);
    unsigned_zero(cs->dtype, beta, sb);
    hex(sa, e, a);
    hex(sb, e, b);
    /* (strict jobs' lines as before: their journals stay valid) */
    int tf32 = (cs->dtype == OOC_R32 || cs->dtype == OOC_C32) && h->param[OOC_PARAM_MATH_MODE] == OOC_MATH_TF32;
    int n = snprintf(job, cap, "dtype=%d ta=%d tb=%d alpha=%s beta=%s C=%" PRId64 "x%" PRId64 ":%d:%d%s%s",
                     (int)cs->dtype, (int)ta, (int)tb, a, b, cs->rows, cs->cols, (int)cs->layout, (int)cs->format,
                     tf32 ? " tf32=1" : "", in_place ? OOC_JOURNAL_IN_PLACE : "");
    const ooc_file_t *in[3] = {A, B, C0};
    const char *roles[3] = {"A", "B", "C0"};
    for (int i = 0; n >= 0 && i < 3; i++) {
        used += (size_t)n;
        if (used >= cap) break;
        n = identity(roles[i], in[i], job + used, cap - used, 1);
    }
    OOC_RETURN_ERROR_IF(n < 0 || used + (size_t)n >= cap, err, OOC_ERR_IO,
                        "fstat of an input failed or the job description is too long: %s",
                        n < 0 ? strerror(errno) : "too long");
    return OOC_SUCCESS;
}

/* The value of key in a job line (" key=value" or at its start), its
 * length in *len; NULL when the line has none. */
static const char *job_value(const char *line, const char *key, size_t *len)
{
    size_t k = strlen(key);
    for (const char *p = line; p && *p; p = strchr(p, ' ')) {
        while (*p == ' ') p++;
        if (strncmp(p, key, k) == 0 && p[k] == '=') {
            p += k + 1;
            *len = strcspn(p, " ");
            return p;
        }
    }
    return NULL;
}

/* Field i (':'-separated) of v[0..len): its start and length. */
static const char *field(const char *v, size_t len, int i, size_t *flen)
{
    const char *end = v + len;
    for (; i > 0 && v < end; i--) {
        const char *c = memchr(v, ':', (size_t)(end - v));
        if (c == NULL) return NULL;
        v = c + 1;
    }
    const char *c = memchr(v, ':', (size_t)(end - v));
    *flen = (size_t)((c ? c : end) - v);
    return v;
}

static int field_differs(const char *a, size_t al, const char *b, size_t bl, int i)
{
    size_t fa = 0, fb = 0;
    const char *x = field(a, al, i, &fa), *y = field(b, bl, i, &fb);
    return !x || !y || fa != fb || memcmp(x, y, fa) != 0;
}

/* Job lines x and y word by word (space-separated), each input's identity
 * (A=, B=, C0=) field by field. On one device number, inode, size and
 * modification time say whether a file is the same, unchanged (its status
 * change time is not compared: chmod, a rename or a link change it, and
 * lost a resume its blocks). A file system mounted again, or the same
 * network file system seen from another node of a cluster (NFS numbers
 * its mounts on each client), gives the same files another st_dev: then
 * the status change time (identity(); where both lines have it, not in
 * journals from before it) must match too, which no one can set, so that a
 * file made apart on a new file system that gave it the old one's inode,
 * size and time is another file. skip_c0: C0's identity not compared. */
static int same_input(const char *x, size_t lx, const char *y, size_t ly)
{
    if (memchr(x, ':', lx) == NULL || memchr(y, ':', ly) == NULL) /* ("none") */
        return lx == ly && memcmp(x, y, lx) == 0;
    for (int i = 1; i <= 5; i++)
        if (field_differs(x, lx, y, ly, i)) return 0;
    if (!field_differs(x, lx, y, ly, 0)) return 1;
    size_t fa = 0, fb = 0;
    const char *a = field(x, lx, 6, &fa), *b = field(y, ly, 6, &fb);
    return a == NULL || b == NULL || (fa == fb && memcmp(a, b, fa) == 0);
}

static int same_words(const char *x, const char *y, int skip_c0)
{
    for (;;) {
        while (*x == ' ') x++;
        while (*y == ' ') y++;
        size_t lx = strcspn(x, " "), ly = strcspn(y, " ");
        if (lx == 0 || ly == 0) return lx == ly;
        int in_x = strncmp(x, "A=", 2) == 0 || strncmp(x, "B=", 2) == 0 || strncmp(x, "C0=", 3) == 0;
        size_t key = strcspn(x, "=") + 1; /* (the same key in y, or the words differ) */
        int same_key = key <= lx && key <= ly && memcmp(x, y, key) == 0;
        if (in_x && same_key) {
            if (!(skip_c0 && strncmp(x, "C0=", 3) == 0) && !same_input(x + key, lx - key, y + key, ly - key)) return 0;
        } else if (lx != ly || memcmp(x, y, lx) != 0) {
            return 0;
        }
        x += lx;
        y += ly;
    }
}

int ooc_files_same_job(const char *was, const char *now) { return same_words(was, now, 0); }

int ooc_files_same_but_c0(const char *was, const char *now)
{
    /* (C0 in both: the rest of the line as it was) */
    return strstr(was, " C0=") != NULL && strstr(now, " C0=") != NULL && same_words(was, now, 1);
}

/* Two job lines that differ at most in where their inputs are (A=, B=, C0=:
 * device, inode, size, time), each input's shape and layout the same, C0 in
 * both or neither. */
static int same_but_inputs(const char *x, const char *y)
{
    const char *a = strstr(x, " A="), *b = strstr(y, " A=");
    if (a == NULL || b == NULL || a - x != b - y || strncmp(x, y, (size_t)(a - x)) != 0) return 0;
    static const char *const roles[3] = {"A", "B", "C0"};
    for (int i = 0; i < 3; i++) {
        size_t lp = 0, lq = 0;
        const char *p = job_value(x, roles[i], &lp), *q = job_value(y, roles[i], &lq);
        if (p == NULL || q == NULL) return 0;
        int none_p = lp == 4 && strncmp(p, "none", 4) == 0, none_q = lq == 4 && strncmp(q, "none", 4) == 0;
        if (none_p != none_q) return 0;
        /* (fields 4 and 5: ROWSxCOLS and the layout) */
        if (!none_p && (field_differs(p, lp, q, lq, 4) || field_differs(p, lp, q, lq, 5))) return 0;
    }
    return 1;
}

void ooc_files_job_difference(const char *was, const char *now, char *out, size_t cap)
{
    static const struct {
        const char *key, *what;
    } plain[] = {{"dtype", "the element type"}, {"ta", "op(A)"},          {"tb", "op(B)"},
                 {"alpha", "alpha"},           {"beta", "beta"},         {"C", "C's shape, order or format"},
                 {"tf32", "the math mode (TF32)"}, {"inplace", "C0 the output itself (in place) or not"}};
    size_t used = 0;
    out[0] = '\0';
#define SAY(...) (used < cap ? (void)(used += (size_t)snprintf(out + used, cap - used, __VA_ARGS__)) : (void)0)
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        size_t la = 0, lb = 0;
        const char *a = job_value(was, plain[i].key, &la), *b = job_value(now, plain[i].key, &lb);
        if ((a == NULL) != (b == NULL) || (a && (la != lb || memcmp(a, b, la) != 0)))
            SAY("%s%s", used ? ", " : "", plain[i].what);
    }
    static const char *const roles[] = {"A", "B", "C0"};
    for (size_t i = 0; i < 3; i++) {
        size_t la = 0, lb = 0;
        const char *a = job_value(was, roles[i], &la), *b = job_value(now, roles[i], &lb);
        if (a && b && same_input(a, la, b, lb)) continue; /* (the device number alone is no difference) */
        int none_a = !a || (la == 4 && memcmp(a, "none", 4) == 0), none_b = !b || (lb == 4 && memcmp(b, "none", 4) == 0);
        const char *r = roles[i];
        if (none_a || none_b) /* (identity: dev:ino:size:mtime:shape:layout[:ctime]) */
            SAY("%s%s %s", used ? ", " : "", r, none_b ? "given then, not now" : "not given then");
        else if (field_differs(a, la, b, lb, 1))
            SAY("%s%s is another file (replaced)", used ? ", " : "", r);
        else if (field_differs(a, la, b, lb, 4) || field_differs(a, la, b, lb, 5))
            SAY("%s%s's shape or order", used ? ", " : "", r);
        else if (field_differs(a, la, b, lb, 2) || field_differs(a, la, b, lb, 3))
            SAY("%s%s was modified (%s)", used ? ", " : "", r,
                field_differs(a, la, b, lb, 2) ? "its size" : "its modification time");
        else
            SAY("%s%s is another file (on another device number, another status change time: a file made "
                "with its inode, size and time, or its mode or name changed)", used ? ", " : "", r);
    }
#undef SAY
    if (!out[0]) snprintf(out, cap, "the job's description");
}

ooc_status_t ooc_files_journal_path(ooc_err_t *err, const char *c_path, const ooc_files_opts_t *opts, char *buf,
                                 size_t cap)
{
    int len = opts && opts->journal ? snprintf(buf, cap, "%s", opts->journal)
                                    : snprintf(buf, cap, "%s" OOC_JOURNAL_SUFFIX, c_path);
    OOC_RETURN_ERROR_IF(len <= 0 || (size_t)len >= cap, err, OOC_ERR_IO, "journal path too long or empty");
    return OOC_SUCCESS;
}

/* Do paths a and b name one directory entry: the same name in the same
 * directory (by the directory's identity: "x", "./x" and "d/../x" are one)?
 * Neither file need exist. */
static int same_entry(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    const char *na = sa ? sa + 1 : a, *nb = sb ? sb + 1 : b;
    if (*na == '\0' || strcmp(na, nb) != 0) return 0;
    char da[4096], db[4096];
    struct stat x, y;
    int la = snprintf(da, sizeof da, "%.*s", sa ? (int)(sa - a) + (sa == a) : 1, sa ? a : ".");
    int lb = snprintf(db, sizeof db, "%.*s", sb ? (int)(sb - b) + (sb == b) : 1, sb ? b : ".");
    if (la < 0 || lb < 0 || (size_t)la >= sizeof da || (size_t)lb >= sizeof db) return strcmp(a, b) == 0;
    return stat(da, &x) == 0 && stat(db, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The journal must be a file of its own: never an operand, the output or its
 * temporary file (a fresh run removes the journal, a run appends to it; the
 * commit would rename C over it). The output's paths are compared by name
 * too: before the commit C is not there, and the journal would be created
 * at its path. */
static ooc_status_t journal_apart(ooc_err_t *err, const char *jpath, const ooc_file_t *A, const ooc_file_t *B,
                                  const ooc_file_t *C0, const ooc_file_t *C)
{
    struct stat j, o;
    const char *outs[2] = {C->path, C->tmp_path};
    for (int i = 0; i < 2; i++)
        if (outs[i] && same_entry(jpath, outs[i]))
            return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, jpath, "the journal path %s is %s %s: refusing to use it",
                                jpath, i == 0 ? "the output" : "the output's temporary file", outs[i]);
    if (stat(jpath, &j) != 0) return OOC_SUCCESS; /* nothing there (yet) */
    const ooc_file_t *ops[4] = {A, B, C0, C};
    const char *roles[4] = {"the input A", "the input B", "the input C0", "the output's temporary file"};
    for (int i = 0; i < 4; i++)
        if (ops[i] && fstat(ops[i]->fd, &o) == 0 && o.st_dev == j.st_dev && o.st_ino == j.st_ino)
            return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, jpath, "the journal path %s is %s (%s): refusing to use it",
                                jpath, roles[i], i == 3 ? C->tmp_path : ops[i]->path);
    if (stat(C->path, &o) == 0 && o.st_dev == j.st_dev && o.st_ino == j.st_ino)
        return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, jpath, "the journal path %s is the output %s: refusing to use it",
                            jpath, C->path);
    return OOC_SUCCESS;
}

/* The output must be no input's file: its path not A's or B's (committing
 * C would replace it; C0 may be it: C computed in place), and the file C is
 * written into (its temporary file) none of A, B and C0 (ooc_file_create
 * emptied it: they would be read as C is written). */
static ooc_status_t output_apart(ooc_err_t *err, const ooc_file_t *A, const ooc_file_t *B, const ooc_file_t *C0,
                                 const ooc_file_t *C)
{
    struct stat c, w, o;
    int have_c = stat(C->path, &c) == 0, have_w = fstat(C->fd, &w) == 0;
    const ooc_file_t *ins[3] = {A, B, C0};
    const char *names[3] = {"A", "B", "C0"};
    for (int i = 0; i < 3; i++) {
        if (ins[i] == NULL || fstat(ins[i]->fd, &o) != 0) continue;
        if (have_w && o.st_dev == w.st_dev && o.st_ino == w.st_ino)
            return OOC_ERR_FILE(err, OOC_ERR_OVERLAP, ins[i]->path,
                                "the input %s (%s) is the file the output %s is written into (%s): it would be read "
                                "as it is overwritten", names[i], ins[i]->path, C->path, C->tmp_path ? C->tmp_path : C->path);
        if (i < 2 && have_c && o.st_dev == c.st_dev && o.st_ino == c.st_ino)
            return OOC_ERR_FILE(err, OOC_ERR_OVERLAP, C->path,
                                "the output %s is the input %s (%s): committing C would replace it (only C0 may be "
                                "the output: C computed in place)", C->path, names[i], ins[i]->path);
    }
    return OOC_SUCCESS;
}

static ooc_status_t check_files(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha, const ooc_file_t *A,
                                const ooc_file_t *B, const void *beta, const ooc_file_t *C0, const ooc_file_t *C,
                                int64_t *m, int64_t *n, int64_t *k)
{
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(ta != OOC_OP_N && ta != OOC_OP_T && ta != OOC_OP_C, err, OOC_ERR_INVALID_TRANSA,
                        "ooc_gemm_files: transa %d is not N, T or C", (int)ta);
    OOC_RETURN_ERROR_IF(tb != OOC_OP_N && tb != OOC_OP_T && tb != OOC_OP_C, err, OOC_ERR_INVALID_TRANSB,
                        "ooc_gemm_files: transb %d is not N, T or C", (int)tb);
    OOC_RETURN_ERROR_IF(alpha == NULL || beta == NULL, err, OOC_ERR_NULL_ARG, "ooc_gemm_files: alpha or beta is NULL");
    OOC_RETURN_ERROR_IF(A == NULL, err, OOC_ERR_NULL_A, "ooc_gemm_files: A is NULL");
    OOC_RETURN_ERROR_IF(B == NULL, err, OOC_ERR_NULL_B, "ooc_gemm_files: B is NULL");
    OOC_RETURN_ERROR_IF(C == NULL, err, OOC_ERR_NULL_C, "ooc_gemm_files: C is NULL");
    OOC_RETURN_FILE_ERROR_IF(!C->writable, err, OOC_ERR_INVALID_PARAM, C->path,
                             "ooc_gemm_files: C (%s) was not created with ooc_file_create", C->path);
    ooc_dtype_t t = C->spec.dtype;
    const ooc_file_t *ins[3] = {A, B, C0};
    for (int i = 0; i < 3; i++)
        OOC_RETURN_ERROR_IF(ins[i] && ins[i]->spec.dtype != t, err, OOC_ERR_SHAPE,
                            "%s holds %s but the output %s is %s: all operands need one element type",
                            ins[i]->path, ooc_dtype_word(ins[i]->spec.dtype), C->path, ooc_dtype_word(t));
    int64_t am, ak, bk, bn;
    op_shape(A, ta, &am, &ak);
    op_shape(B, tb, &bk, &bn);
    OOC_RETURN_ERROR_IF(ak != bk, err, OOC_ERR_SHAPE,
                        "op(A) is %" PRId64 " x %" PRId64 " (%s) but op(B) is %" PRId64 " x %" PRId64
                        " (%s): inner dimensions differ", am, ak, A->path, bk, bn, B->path);
    OOC_RETURN_FILE_ERROR_IF(C->spec.rows != am || C->spec.cols != bn, err, OOC_ERR_SHAPE, C->path,
                             "the output %s is %" PRId64 " x %" PRId64 " but op(A) op(B) is %" PRId64 " x %" PRId64,
                             C->path, C->spec.rows, C->spec.cols, am, bn);
    OOC_RETURN_ERROR_IF(!ooc_is_zero(t, beta) && C0 == NULL, err, OOC_ERR_NULL_ARG,
                        "beta != 0 needs C0, the matrix to add");
    if (C0) {
        OOC_RETURN_FILE_ERROR_IF(C0->spec.rows != am || C0->spec.cols != bn, err, OOC_ERR_SHAPE, C0->path,
                                 "C0 (%s) is %" PRId64 " x %" PRId64 " but op(A) op(B) is %" PRId64 " x %" PRId64,
                                 C0->path, C0->spec.rows, C0->spec.cols, am, bn);
        /* (a vector's bytes are the same in either order) */
        OOC_RETURN_FILE_ERROR_IF(C0->spec.layout != C->spec.layout && am > 1 && bn > 1, err,
                                 OOC_ERR_NOT_SUPPORTED, C0->path,
                                 "C0 (%s) must be in the output's order (%s order)", C0->path,
                                 C->spec.layout == OOC_ROW_MAJOR ? "C" : "Fortran");
    }
    *m = am;
    *n = bn;
    *k = ak;
    return OOC_SUCCESS;
}

/* A range [b, e) of C's `own` dimension (rows: own_dim m, other_dim n; or
 * columns), given (ranged): within it, or within the other dimension when
 * the plan keeps op(A) resident (swap: given in opts->plan, when `planned`
 * says the range is of the plan's blocks or panels), or within the larger
 * of the two when that is unknown until a resumed journal is read. `unit`:
 * what the plan's swapped dimension is cut into ("blocks", "panels"). */
static ooc_status_t range_fits(ooc_err_t *err, const ooc_files_opts_t *opts, const char *path, int ranged,
                               int planned, int64_t b, int64_t e, int64_t own_dim, int64_t other_dim, const char *own,
                               const char *other, const char *unit)
{
    int swap = planned && opts->plan && opts->plan->a_resident;
    int unknown = planned && !opts->plan && opts->resume && other_dim > own_dim;
    int64_t lim = swap || unknown ? other_dim : own_dim;
    if (!ranged || (b >= 0 && b < e && e <= lim)) return OOC_SUCCESS;
    char what[40], note[96] = "";
    if (unknown) snprintf(what, sizeof what, "%ss or %ss", own, other);
    else snprintf(what, sizeof what, "%ss", swap ? other : own);
    if (swap) snprintf(note, sizeof note, " (the plan keeps op(A) resident: its %s are %ss of C)", unit, other);
    return OOC_ERR(err, OOC_ERR_ROW_RANGE,
                   "ooc_gemm_files: %s [%" PRId64 ", %" PRId64 ") are not a range of the %" PRId64 " %ss of C (%s): "
                   "give 0 <= %.3s_begin < %.3s_end <= %" PRId64 ", or 0, 0 for all%s",
                   what, b, e, lim, swap || unknown ? other : own, path, own, own, lim, note);
}

ooc_status_t ooc_files_job(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha, ooc_file_t *A,
                           ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                           const ooc_files_opts_t *opts, ooc_files_job_t *job)
{
    ooc_err_t *err = &h->err;
    memset(job, 0, sizeof *job);
    OOC_FORWARD(ooc_fault_check(err)); /* (scaling C opens no backend) */
    job->h = h;
    job->ta = ta;
    job->tb = tb;
    job->alpha = alpha;
    job->beta = beta;
    job->A = A;
    job->B = B;
    job->C0 = C0;
    job->C = C;
    OOC_FORWARD(check_files(h, ta, tb, alpha, A, B, beta, C0, C, &job->m, &job->n, &job->k));
    OOC_FORWARD(output_apart(err, A, B, C0, C));
    int64_t m = job->m;
    job->r0 = opts ? opts->row_begin : 0;
    job->r1 = opts ? opts->row_end : 0;
    job->ranged = job->r0 != 0 || job->r1 != 0;
    if (!job->ranged) job->r1 = m;
    ooc_dtype_t t = C->spec.dtype;
    job->empty = m == 0 || job->n == 0;
    job->scale = !job->empty && (job->k == 0 || ooc_is_zero(t, alpha));
    /* a plan that keeps op(A) resident tiles C's columns: its range is of
     * columns (a job with no blocks, scaled, is split by rows). Without
     * opts->plan a resume takes a journal's plan, which may keep op(A)
     * resident: the range's end is then checked against the plan found
     * (range_blocks()), here only against the larger of m and n. Block
     * boundaries are checked with the plan (files_plan.c range_blocks()) */
    OOC_FORWARD(range_fits(err, opts, C->path, job->ranged, job->ranged && !job->scale && !job->empty, job->r0,
                           job->r1, m, job->n, "row", "column", "blocks"));
    /* the columns: C's (its rows with a plan that keeps op(A) resident,
     * given or, unknown until a journal is read, resumed); panel boundaries
     * are checked with the plan (files_plan.c range_blocks()) */
    job->c0 = opts ? opts->col_begin : 0;
    job->c1 = opts ? opts->col_end : 0;
    job->cranged = job->c0 != 0 || job->c1 != 0;
    OOC_FORWARD(range_fits(err, opts, C->path, job->cranged, job->cranged, job->c0, job->c1, job->n, m, "column",
                           "row", "panels"));
    OOC_RETURN_ERROR_IF(job->cranged && (job->scale || job->empty), err, OOC_ERR_ROW_RANGE,
                        "ooc_gemm_files: columns [%" PRId64 ", %" PRId64 ") given, but this job multiplies nothing "
                        "(%s): C = beta C0 is split by rows only; give col_begin = col_end = 0",
                        job->c0, job->c1, job->empty ? "C is empty" : "alpha or k is 0");
    if (job->empty) return OOC_SUCCESS;

    ooc_layout_t layout = C->spec.layout;
    ooc_problem_t p = {t, layout, ta, tb, m, job->n, job->k, alpha, beta, ooc_is_zero(t, beta), {0}, {0}, {0}, {0}};
    OOC_FORWARD(as_source(h, "A", A, layout, 0, &p.ta, &p.A));
    OOC_FORWARD(as_source(h, "B", B, layout, 0, &p.tb, &p.B));
    ooc_op_t n_op = OOC_OP_N;
    OOC_FORWARD(as_source(h, "C", C, layout, 0, &n_op, &p.C));
    p.C.name = C->tmp_path; /* where C's bytes go until the commit: failures name it */
    p.c_in = p.C;
    if (C0) OOC_FORWARD(as_source(h, "C0", C0, layout, 1, &n_op, &p.c_in));
    job->p = p;
    OOC_FORWARD(ooc_files_journal_path(err, C->path, opts, job->jpath, sizeof job->jpath));
    OOC_FORWARD(journal_apart(err, job->jpath, A, B, C0, C));
    OOC_FORWARD(ooc_files_job_line(h, err, ta, tb, alpha, A, B, beta, C0, &C->spec, ooc_files_in_place(C0, C->path),
                                   job->want.job, sizeof job->want.job));
    const ooc_file_t *in[3] = {A, B, C0};
    for (int i = 0; i < 3; i++)
        OOC_RETURN_ERROR_IF(in[i] && identity("", in[i], job->inputs[i], sizeof job->inputs[i], 0) < 0, err, OOC_ERR_IO,
                            "fstat %s: %s", in[i]->path, strerror(errno));
    if (opts && opts->job) {
        /* a split job's identity from C's creator: the same job, its inputs maybe other copies */
        OOC_RETURN_ERROR_IF(!same_but_inputs(opts->job, job->want.job) || strlen(opts->job) >= sizeof job->want.job,
                            err, OOC_ERR_INVALID_PARAM,
                            "ooc_gemm_files: opts->job is not this job's but for where its inputs are: \"%.400s\", "
                            "this process's \"%.400s\"",
                            opts->job, job->want.job);
        snprintf(job->want.job, sizeof job->want.job, "%s", opts->job);
    }
    return OOC_SUCCESS;
}
