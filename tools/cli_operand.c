/* SPDX-License-Identifier: MIT */
/*
 * cli_operand.c: matrix files on the command line of multiply and verify:
 * an operand's path and raw-shape suffix (spec.c; a shape with a bad value
 * is a usage error), opening it (.npy by its magic, raw by its suffix or
 * --rows/--cols; a raw suffix on a .npy file is refused), describing it,
 * checking that the operands of a product fit together, alpha and beta as
 * one element of the product's type, and telling a journal from any other
 * file.
 */
#include "config.h"

#include "cli.h"
#include "cli_mpi.h"

void operand_free(operand_t *op)
{
    if (op->file) ooc_file_close(op->file, 0);
    op->file = NULL;
    free(op->path);
    op->path = NULL;
}

/* What is wrong with s[0, len) when it is written as a shape, decimal
 * digits 'x' decimal digits, that shape_parse refuses (a number past 64
 * bits); NULL when it is a shape or not written as one. */
static const char *shape_problem(const char *s, size_t len)
{
    size_t x = 0;
    while (x < len && s[x] >= '0' && s[x] <= '9') x++;
    if (x == 0 || x + 1 >= len || (s[x] != 'x' && s[x] != 'X')) return NULL;
    for (size_t i = x + 1; i < len; i++)
        if (s[i] < '0' || s[i] > '9') return NULL;
    int64_t rows, cols;
    if (shape_parse(s, len, &rows, &cols) == 0) return NULL;
    const char *r = s;
    size_t rn = x;
    while (rn > 1 && *r == '0') r++, rn--; /* leading zeros */
    /* decimal digits past INT64_MAX (9223372036854775807, 19 digits) */
    if (rn > 19 || (rn == 19 && memcmp(r, "9223372036854775807", 19) > 0)) return "rows is too large (over 64 bits)";
    return "cols is too large (over 64 bits)";
}

/* When no raw-shape suffix was found in arg but one of the fields that
 * raw_spec_parse tries (the first of its last one, two or three
 * ':'-separated fields) is written as a shape with a bad value: what is
 * wrong, with the field arg[*field, *field + *field_len); else NULL. */
static const char *raw_shape_problem(const char *arg, size_t *field, size_t *field_len)
{
    size_t len = strlen(arg);
    for (int nf = 3; nf >= 1; nf--) {
        size_t colon = colon_from_end(arg, len, nf);
        if (colon == len) continue;
        size_t end = colon + 1;
        while (end < len && arg[end] != ':') end++;
        const char *why = shape_problem(arg + colon + 1, end - colon - 1);
        if (why) {
            *field = colon + 1;
            *field_len = end - colon - 1;
            return why;
        }
    }
    return NULL;
}

/* 1 when path names something (followed through links) */
static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* 1 when path is a regular file (followed through links) */
static int regular(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/*
 * Split a raw-shape suffix off an operand (spec.c: the last one, two or
 * three ':'-separated fields are ROWSxCOLS[:DTYPE[:LAYOUT]] when the first of
 * them is a shape; missing fields come from --dtype and --layout; else d
 * and row). Without such a suffix the whole argument is the path, unless a
 * field is written as a shape with a bad value (A.bin:99999999999999999999x5): a usage error
 * saying what is wrong with the shape.
 */
int operand_parse(const char *cmd, const char *name, const char *arg, const raw_defaults_t *d, operand_t *op)
{
    memset(op, 0, sizeof *op);
    op->name = name;
    op->arg = arg;
    size_t path_len = 0, field = 0, field_len = 0;
    switch (raw_spec_parse(arg, d->dtype, d->layout, &path_len, &op->spec, &field, &field_len)) {
    case RAW_SPEC_OK:
        op->path = strndup(arg, path_len);
        op->shaped = 1;
        /* a file whose own name ends like a shape (x:7x5), where no file
         * has the name before it (x): that file, its name whole */
        if (op->path && !exists(op->path) && exists(arg)) {
            free(op->path);
            op->path = strdup(arg);
            op->shaped = 0;
            memset(&op->spec, 0, sizeof op->spec);
        }
        break;
    case RAW_SPEC_NONE: {
        const char *why = raw_shape_problem(arg, &field, &field_len);
        if (why)
            return usage_error(cmd, "%s '%s': bad shape '%.*s': %s (ROWSxCOLS, two integers >= 0)", name,
                               arg, (int)field_len, arg + field, why);
        if (*arg == '\0') return usage_error(cmd, "%s: empty file name", name);
        /* no such file, but one named by the part before a ':': a suffix
         * meant as a raw shape, miswritten (A.bin:7x, A.bin:7x5x1) */
        for (size_t c = exists(arg) ? 0 : strlen(arg); c-- > 0;) {
            if (arg[c] != ':') continue;
            char *head = strndup(arg, c);
            int there = head && c > 0 && regular(head); /* (a directory dd of dd:v2/A.npy is not) */
            free(head);
            if (there)
                return usage_error(cmd, "%s '%s': no such file, and '%s' after %.*s (a file) is not a raw shape "
                                   "suffix: ROWSxCOLS[:DTYPE[:LAYOUT]], for example %.*s:1000x500:d:F",
                                   name, arg, arg + c, (int)c, arg, (int)c, arg);
        }
        op->path = strdup(arg);
        break;
    }
    case RAW_SPEC_BAD_DTYPE: {
        char w[8] = "";
        ooc_layout_t l;
        if (field_len < sizeof w) memcpy(w, arg + field, field_len), w[field_len] = '\0';
        if (w[0] && order_parse(w, &l) == 0)
            return usage_error(cmd, "%s '%s': '%s' stands where the element type goes: the layout is the field after "
                               "it, PATH:ROWSxCOLS:DTYPE:LAYOUT (for example :d:%s; complex64 is c or c8)",
                               name, arg, w, w);
        return usage_error(cmd, "%s '%s': '%.*s' is not an element type (s, d, c, z; float32, float64, complex64, complex128; f4, f8, c8, c16)", name, arg,
                           (int)field_len, arg + field);
    }
    case RAW_SPEC_BAD_ORDER:
        return usage_error(cmd, "%s '%s': '%.*s' is not a layout (C or F, or row or col)", name, arg, (int)field_len,
                           arg + field);
    case RAW_SPEC_NO_PATH: return usage_error(cmd, "%s '%s': no file name before the shape", name, arg);
    }
    if (op->path == NULL) return fail(RC_RUNTIME, "out of host memory");
    return RC_OK;
}

/*
 * An output's name (multiply's -o, gen's OUT) written as a raw operand is,
 * PATH:ROWSxCOLS[:DTYPE[:LAYOUT]]: refused (usage error), since an output's
 * shape is not given that way and the file would be made under the whole
 * name, in the default layout, whatever the suffix said; and so is a name
 * ending in .ooc-tmp or .ooc-journal, the temporary file or the journal of a
 * job on the name without it, which one would replace the other's. `instead`
 * says what gives the output's format, shape and layout. RC_OK otherwise.
 */
int output_name_check(const char *cmd, const char *what, const char *arg, const char *instead)
{
    size_t len = strlen(arg), tl = sizeof OUT_TMP_SUFFIX - 1;
    if (len > 0 && arg[len - 1] == '/')
        return usage_error(cmd, "%s '%s': a name ending in / names a directory; give the output file's name", what,
                           arg);
    if (len >= tl && strcmp(arg + len - tl, OUT_TMP_SUFFIX) == 0)
        return usage_error(cmd, "%s '%s': a name ending in %s is the temporary file of a job on %.*s, which would "
                                "replace it; choose another name",
                           what, arg, OUT_TMP_SUFFIX, (int)(len - tl), arg);
    /* NAME.ooc-journal, or a rank's NAME.ooc-journal.rR-of-P */
    const char *j = NULL;
    for (const char *p = strstr(arg, OUT_JOURNAL_SUFFIX); p; p = strstr(p + 1, OUT_JOURNAL_SUFFIX)) j = p;
    const char *t = j ? j + sizeof OUT_JOURNAL_SUFFIX - 1 : NULL;
    unsigned r, n;
    int used = -1;
    if (j != NULL && j != arg &&
        (*t == '\0' || (sscanf(t, ".r%u-of-%u%n", &r, &n, &used) == 2 && used > 0 && t[used] == '\0' &&
                        strspn(t + 2, "0123456789-of") == strlen(t + 2))))
        return usage_error(cmd, "%s '%s': a name ending in %s is a resume journal of a job on %.*s, which this "
                                "file would replace; choose another name",
                           what, arg, j, (int)(j - arg), arg);
    size_t path_len = 0, field = 0, field_len = 0;
    ooc_file_spec_t spec;
    if (raw_spec_parse(arg, OOC_R64, OOC_ROW_MAJOR, &path_len, &spec, &field, &field_len) == RAW_SPEC_NONE &&
        raw_shape_problem(arg, &field, &field_len) == NULL)
        return RC_OK;
    return usage_error(cmd, "%s '%s': an output takes no raw shape suffix (ROWSxCOLS[:DTYPE[:LAYOUT]] describes an "
                            "input); %s",
                       what, arg, instead);
}

/*
 * Open an operand for reading: raw with its suffix's shape (unless the file
 * starts with NumPy's magic: a .npy file read as raw would take its header
 * for data, so that is refused); else .npy when the file starts with the
 * magic; else raw with --rows/--cols when both were given; else an error
 * saying how to give the shape.
 */
int operand_open(ooc_handle_t *h, operand_t *op, const raw_defaults_t *d)
{
    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "%s (%s)", op->name, op->path);
    /* a peek at the magic of a regular file (never blocking on a FIFO);
     * anything else, or an empty file, goes to the library as it is, which
     * says what is wrong with it */
    int fd = open(op->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    unsigned char magic[6];
    ssize_t got = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? pread(fd, magic, sizeof magic, 0) : -1;
    if (fd >= 0) close(fd);
    int npy = got == (ssize_t)sizeof magic && memcmp(magic, "\x93NUMPY", 6) == 0;
    /* the start of the magic alone (a .npy file cut short), or a .npz
     * archive (zip): not raw data; the library says what they are */
    int npy_like = (got > 0 && got < (ssize_t)sizeof magic && memcmp(magic, "\x93NUMPY", (size_t)got) == 0) ||
                   (got >= 4 && memcmp(magic, "PK\003\004", 4) == 0);
    ooc_file_spec_t spec;
    if (op->shaped) {
        /* (multiply --verify reads its own .npy output back as shaped, AUTO) */
        if (npy && op->spec.format == OOC_FORMAT_RAW)
            return fail(RC_INPUT,
                        "%s: %s is a .npy file (it starts with the NumPy magic \\x93NUMPY), not raw data: drop "
                        "the '%s' suffix (the header gives the shape, element type and layout)",
                        what, op->path, op->arg + strlen(op->path));
        spec = op->spec;
    } else {
        memset(&spec, 0, sizeof spec);
        spec.format = OOC_FORMAT_AUTO; /* unreadable: the library says why */
        if ((got > 0 && !npy && !npy_like) || (got == 0 && d->shape_given)) { /* (an empty file: an empty matrix) */
            if (!d->shape_given)
                return fail(RC_INPUT,
                            "%s: not a .npy file (no NumPy magic); for raw data give its shape as "
                            "%s:ROWSxCOLS:DTYPE:LAYOUT (or --rows and --cols)",
                            what, op->path);
            spec = (ooc_file_spec_t){OOC_FORMAT_RAW, d->rows, d->cols, d->dtype, d->layout};
        }
    }
    ooc_status_t st = ooc_file_open(h, op->path, &spec, &op->file);
    if (st != OOC_SUCCESS) {
        op->file = NULL;
        return lib_fail(h, st, AT_INPUT, NULL, NULL, what);
    }
    if ((st = ooc_file_describe(op->file, &op->spec)) != OOC_SUCCESS) return lib_fail(h, st, AT_INPUT, NULL, NULL, what);
    /* --dtype names the product's element type: never converted, so an
     * operand of another type is refused, never silently read as it is */
    if (d->dtype_given && op->spec.dtype != d->dtype)
        return usage_error(d->cmd, "--dtype %s, but %s holds %s: %s does not convert element types (leave out "
                                   "--dtype, or give files of %s)",
                           dtype_name(d->dtype), what, dtype_name(op->spec.dtype), d->cmd, dtype_name(d->dtype));
    return RC_OK;
}

/* 1 when path is a regular file (not followed through a link) that holds a
 * libooc_gemm journal: what a --resume can continue from. */
int is_journal(const char *path)
{
    if (path == NULL) return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat sb;
    char head[16];
    int yes = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
              memcmp(head, "oocgemm-journal ", sizeof head) == 0;
    close(fd);
    return yes;
}

/* A journal whose plan keeps finished row blocks (its plan line says
 * resumable=1), or one recorded complete: op(B) in k-panels leaves partial
 * sums in C, and a resume of such a job starts over (with its plan) unless
 * its journal (a rank's: its part) was recorded complete. */
int journal_keeps_blocks(const char *path)
{
    if (!is_journal(path)) return 0;
    FILE *f = fopen(path, "r");
    char line[4096];
    int keeps = 0, plan = 0;
    for (int i = 0; f && i < 4 && !plan && fgets(line, sizeof line, f); i++)
        if (strncmp(line, "plan ", 5) == 0) keeps = strstr(line, " resumable=1 ") != NULL, plan = 1;
    /* a plan in k-panels: its blocks are kept once recorded complete (every panel done) */
    while (f && plan && !keeps && fgets(line, sizeof line, f)) keeps = strncmp(line, "complete ", 9) == 0;
    if (f) fclose(f);
    return keeps;
}

/* What a stop message says of a later --resume with this journal. */
const char *resume_words(const char *journal)
{
    return journal_keeps_blocks(journal) || !is_journal(journal)
               ? "resumable"
               : "but its plan splits k into panels (C holds partial sums): --resume starts it over, with the "
                 "same plan";
}

/* "100 x 50 float64, row-major" */
const char *describe_spec(const ooc_file_spec_t *s, char *buf, size_t len)
{
    snprintf(buf, len, "%lld x %lld %s, %s-major%s", (long long)s->rows, (long long)s->cols, dtype_name(s->dtype),
             layout_name(s->layout), s->format == OOC_FORMAT_RAW ? ", raw" : "");
    return buf;
}

/* Rows and columns of op(X) for the stored spec. */
void op_shape(const ooc_file_spec_t *s, ooc_op_t op, int64_t *rows, int64_t *cols)
{
    *rows = op == OOC_OP_N ? s->rows : s->cols;
    *cols = op == OOC_OP_N ? s->cols : s->rows;
}

/*
 * op(A) m x k, op(B) k x n, C0 and C (when given) m x n, one element type.
 * RC_OK with m, n, k, or RC_SHAPE with a message.
 */
int check_operands(const operand_t *A, ooc_op_t ta, const operand_t *B, ooc_op_t tb, const operand_t *C0,
                          const operand_t *C, int64_t *m, int64_t *n, int64_t *k)
{
    const operand_t *all[4] = {A, B, C0, C};
    for (int i = 1; i < 4; i++)
        if (all[i] && all[i]->spec.dtype != A->spec.dtype)
            return fail(RC_SHAPE, "element types differ: %s (%s) is %s, %s (%s) is %s", A->name, A->path,
                        dtype_name(A->spec.dtype), all[i]->name, all[i]->path, dtype_name(all[i]->spec.dtype));
    int64_t am, ak, bk, bn;
    op_shape(&A->spec, ta, &am, &ak);
    op_shape(&B->spec, tb, &bk, &bn);
    if (ak != bk)
        return fail(RC_SHAPE,
                    "inner dimensions differ: op(A) is %lld x %lld but op(B) is %lld x %lld (A: %s, %lld x %lld, op "
                    "%c; B: %s, %lld x %lld, op %c)",
                    (long long)am, (long long)ak, (long long)bk, (long long)bn, A->path, (long long)A->spec.rows,
                    (long long)A->spec.cols, op_letter(ta), B->path, (long long)B->spec.rows,
                    (long long)B->spec.cols, op_letter(tb));
    for (int i = 2; i < 4; i++)
        if (all[i] && (all[i]->spec.rows != am || all[i]->spec.cols != bn))
            return fail(RC_SHAPE, "%s (%s) is %lld x %lld, but op(A)*op(B) is %lld x %lld", all[i]->name,
                        all[i]->path, (long long)all[i]->spec.rows, (long long)all[i]->spec.cols, (long long)am,
                        (long long)bn);
    *m = am;
    *n = bn;
    *k = ak;
    return RC_OK;
}

scalar_t scalar_of(double x) { return (scalar_t){{x, 0.0}, {(float)x, 0.0f}}; }

/* --alpha and --beta are parsed as finite doubles before the element type is
 * known; in single precision one beyond float's range would become infinite
 * (C all inf or NaN) and a nonzero one below its smallest subnormal 0 (the
 * product dropped), silently. RC_OK, or RC_USAGE with a message. */
int scalars_fit(const char *cmd, ooc_dtype_t t, double alpha, double beta)
{
    if (dtype_double(t)) return RC_OK;
    const char *name[2] = {"--alpha", "--beta"};
    double x[2] = {alpha, beta};
    for (int i = 0; i < 2; i++) {
        float f = (float)x[i];
        if (!isfinite(f) || (f == 0.0f && x[i] != 0.0))
            return usage_error(cmd, "%s %g is not representable in %s (magnitudes %g to %g): it would be %s", name[i],
                               x[i], dtype_name(t), (double)FLT_TRUE_MIN, (double)FLT_MAX, isfinite(f) ? "0" : "infinite");
    }
    return RC_OK;
}
/* --tf32 allows TF32 for single precision only: on float64 or complex128
 * it changes nothing, which a note says (multiply, verify and run alike; it
 * was silent, as if the tolerance or the product were TF32's). Rank 0 of a
 * split job alone says it. */
void tf32_note(const char *cmd, int tf32, ooc_dtype_t t)
{
    if (!tf32 || !dtype_double(t) || cli_mpi_rank() != 0) return;
    fprintf(stderr, "%s %s: note: --tf32 has no effect on %s operands: TF32 applies to single precision (float32, "
            "complex64) alone; %s full %s precision\n", progname, cmd, dtype_name(t),
            strcmp(cmd, "verify") == 0 ? "the tolerance stays that of" : "the product is computed in", dtype_name(t));
}

const void *scalar_ptr(const scalar_t *s, ooc_dtype_t t) { return dtype_double(t) ? (const void *)s->d : (const void *)s->f; }

/* "verify: <mode>: max relative error E (tolerance T): PASS|FAIL"; cols:
 * the check's rows were C's columns (ooc_verify_files_cols) */
void print_verify(FILE *f, const ooc_verify_result_t *v, int64_t m, int64_t n, int cols)
{
    const char *line = cols ? "column" : "row";
    if (v->exact)
        fprintf(f, "verify: exact (all %lld x %lld elements against OpenBLAS)", (long long)m, (long long)n);
    else
        fprintf(f, "verify: Freivalds with %d random vector%s + %lld %s%s recomputed exactly", v->vectors,
                v->vectors == 1 ? "" : "s", (long long)v->rows_checked, line, v->rows_checked == 1 ? "" : "s");
    fprintf(f, ": max relative error %.3g (tolerance %.3g): %s\n", v->max_rel_err, v->tolerance,
            v->passed ? "PASS" : "FAIL");
    if (v->rows_unverified > 0)
        fprintf(f, "verify: %lld %s%s where C0 holds NaN or infinities checked only for where C holds its own\n",
                (long long)v->rows_unverified, line, v->rows_unverified == 1 ? "" : "s");
    if (v->off > 0)
        fprintf(f, "verify: %lld value%s of the check (the first in %s %lld of C) off by about %s own size, far "
                "beyond rounding: a missing or wrong block%s\n", (long long)v->off, v->off == 1 ? "" : "s", line,
                (long long)v->first_off_row, v->off == 1 ? "its" : "their",
                v->max_rel_err <= v->tolerance ? ", within the worst-case tolerance" : "");
}

/* The message of a failed check (cols: as print_verify). */
const char *verify_failure(const ooc_verify_result_t *v, int cols, char *buf, size_t len)
{
    const char *line = cols ? "column" : "row";
    if (v->off > 0 && v->max_rel_err <= v->tolerance)
        snprintf(buf, len, "verification failed: %s%s %lld of C %s off by about %s own size, within the tolerance "
                 "%.3g of a k-term sum's worst-case rounding but far beyond what rounding reaches: a missing or "
                 "wrong block", v->off > 1 ? "values from " : "", line, (long long)v->first_off_row,
                 v->off > 1 ? "on are" : "is", v->off > 1 ? "their" : "its", v->tolerance);
    else
        snprintf(buf, len, "verification failed: max relative error %.3g exceeds the tolerance %.3g", v->max_rel_err,
                 v->tolerance);
    return buf;
}

