/* SPDX-License-Identifier: MIT */
/*
 * cli.c: the helpers the subcommands of oocgemm share (declared in cli.h):
 * exit statuses and their mapping from library statuses, error reporting,
 * option, size and library-option parsing, the seeded random fill, the
 * PCIe/compute floor of docs/PERFORMANCE.md, in-memory matrices, the check
 * of sampled rows against OpenBLAS, and the JSON and printing helpers.
 */
#include "config.h"

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* Exit statuses (the codes are in cli.h) and their mapping                  */

static const struct {
    int code;
    const char *meaning;
} exit_codes[] = {
    {RC_OK, "success"},
    {RC_CHECK_FAILED, "verification failed: C does not match OpenBLAS within the tolerance"},
    {RC_USAGE, "bad command line (unknown command or option, missing or bad value)"},
    {RC_RUNTIME, "run-time failure: a libooc_gemm error (GPU, memory budget) or no host memory"},
    {RC_INPUT, "input file error: cannot open or read, malformed, truncated, big-endian or\n"
               "     unsupported element type"},
    {RC_SHAPE, "the operands' shapes or element types do not match"},
    {RC_OUTPUT, "output error: cannot write the output or its journal (a full disk too), the\n"
                "     output is not a regular file or another job is writing it, or the\n"
                "     journal does not match the job or is damaged (resume impossible)"},
    {RC_INTERRUPTED, "interrupted by SIGTERM, SIGINT, SIGHUP or SIGUSR1: the finished row\n"
                     "     blocks are kept; run the same command with --resume to finish"},
};

void print_exit_codes(FILE *f)
{
    fprintf(f, "Exit status:\n");
    for (size_t i = 0; i < sizeof exit_codes / sizeof exit_codes[0]; i++)
        fprintf(f, "  %d  %s\n", exit_codes[i].code, exit_codes[i].meaning);
}

/*
 * The one mapping from library statuses to exit statuses. A file error
 * (OOC_ERR_IO, OOC_ERR_FORMAT, OOC_ERR_OVERFLOW of a file's shape) is an
 * input's (4) or the output's (6) depending on the stage; inside
 * ooc_gemm_files() it is the output's when the file the library names
 * (ooc_last_error_path) is the output's temporary file or the journal.
 * Running out of room is always the output's, and so is a busy output.
 */
int exit_status_for(ooc_status_t st, stage_t at, const char *err_path, const char *tmp_path,
                    const char *journal_path)
{
    switch (st) {
    case OOC_SUCCESS: return RC_OK;
    case OOC_ERR_IO:
    case OOC_ERR_FORMAT:
    case OOC_ERR_OVERFLOW:
        switch (at) {
        case AT_INPUT: return RC_INPUT;
        case AT_OUTPUT: return RC_OUTPUT;
        case AT_RUN:
            if (err_path && ((tmp_path && strcmp(err_path, tmp_path) == 0) ||
                             (journal_path && strcmp(err_path, journal_path) == 0)))
                return RC_OUTPUT;
            return err_path ? RC_INPUT : RC_RUNTIME;
        case AT_OTHER: break;
        }
        return RC_RUNTIME;
    case OOC_ERR_NO_SPACE:
    case OOC_ERR_BUSY:
    case OOC_ERR_JOURNAL: return RC_OUTPUT;
    case OOC_ERR_SHAPE: return RC_SHAPE;
    case OOC_ERR_CANCELLED: return RC_INTERRUPTED;
    case OOC_ERR_PARAM_RANGE: return RC_USAGE;
    default: return RC_RUNTIME;
    }
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */

const char *progname = "oocgemm";

/* "oocgemm run: <message>" on stderr, a hint, and RC_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s%s%s: ", progname, cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s%s%s --help'.\n", progname, cmd ? " " : "", cmd ? cmd : "");
    return RC_USAGE;
}

/* A library failure: "oocgemm: <status>: <last error>" and RC_RUNTIME. */
int library_error(const ooc_handle_t *h, ooc_status_t st)
{
    const char *detail = h ? ooc_last_error(h) : "";
    fprintf(stderr, "%s: %s%s%s\n", progname, ooc_status_string(st), detail && *detail ? ": " : "",
            detail ? detail : "");
    return RC_RUNTIME;
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

size_t dtype_size(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return 4;
    case OOC_R64: return 8;
    case OOC_C32: return 8;
    case OOC_C64: return 16;
    }
    return 0;
}

int dtype_complex(ooc_dtype_t t) { return t == OOC_C32 || t == OOC_C64; }
int dtype_double(ooc_dtype_t t) { return t == OOC_R64 || t == OOC_C64; }

char dtype_letter(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return 's';
    case OOC_R64: return 'd';
    case OOC_C32: return 'c';
    case OOC_C64: return 'z';
    }
    return '?';
}

char op_letter(ooc_op_t op) { return op == OOC_OP_N ? 'N' : op == OOC_OP_T ? 'T' : 'C'; }

/* "12.3 MiB": a byte count for people. */
const char *human_bytes(uint64_t b, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, len, "%" PRIu64 " B", b);
    else snprintf(buf, len, "%.3g %s", v, unit[u]);
    return buf;
}

/* The message of the last failure of the file commands, for --json. */
char fail_msg[2048];

/* "oocgemm: <message>" on stderr (kept for --json); returns rc. */
int fail(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail_msg, sizeof fail_msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", progname, fail_msg);
    return rc;
}

/* A library failure of a file command: "oocgemm: <what>: <status>: <detail>",
 * exit status from exit_status_for(). */
int lib_fail(const ooc_handle_t *h, ooc_status_t st, stage_t at, const char *tmp_path,
             const char *journal_path, const char *what)
{
    const char *detail = h ? ooc_last_error(h) : "";
    int rc = exit_status_for(st, at, h ? ooc_last_error_path(h) : NULL, tmp_path, journal_path);
    return fail(rc, "%s: %s%s%s", what, ooc_status_string(st), detail && *detail ? ": " : "",
                detail ? detail : "");
}

/* A JSON string (null for NULL). */
void json_str(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* NumPy's name of an element type. */
const char *dtype_name(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return "float32";
    case OOC_R64: return "float64";
    case OOC_C32: return "complex64";
    case OOC_C64: return "complex128";
    }
    return "unknown";
}

const char *order_name(ooc_layout_t l) { return l == OOC_ROW_MAJOR ? "C" : "F"; }

/* Does the path end in ".npy" (any case)? */
int has_npy_ext(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".npy") == 0;
}

/* ------------------------------------------------------------------------ */
/* Option values                                                             */

/* Plain decimal integer >= min; 0 on success, -1 with a message. */
int parse_int(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
              int64_t *out)
{
    char *end;
    const char *digits = *s == '+' || *s == '-' ? s + 1 : s;
    if (*digits < '0' || *digits > '9') { /* "", " 5", "x" */
        usage_error(cmd, "%s: '%s' is not an integer", opt, s);
        return -1;
    }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0') {
        usage_error(cmd, "%s: '%s' is not an integer", opt, s);
        return -1;
    }
    if (errno == ERANGE || v < min || v > max) {
        if (min == 1 && max == INT64_MAX)
            usage_error(cmd, "%s: '%s' is not a positive integer", opt, s);
        else if (min == 0 && max == INT64_MAX)
            usage_error(cmd, "%s: '%s' is not a non-negative integer", opt, s);
        else
            usage_error(cmd, "%s: '%s' is outside [%lld, %lld]", opt, s, (long long)min, (long long)max);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* Byte count: an integer with an optional binary suffix K, M, G or T
 * (case-insensitive, optionally followed by "iB" or "B"): 64M = 64 MiB. */
int parse_bytes(const char *cmd, const char *opt, const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9') goto bad;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE) goto big;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0)) end += strlen(end);
    else if (!shift && strcasecmp(end, "B") == 0) end++;
    if (*end != '\0') goto bad;
    if (v > (unsigned long long)(INT64_MAX >> shift)) goto big;
    *out = (int64_t)(v << shift);
    return 0;
bad:
    usage_error(cmd, "%s: '%s' is not a byte count (an integer with an optional K, M, G or T suffix)", opt, s);
    return -1;
big:
    usage_error(cmd, "%s: '%s' is too large", opt, s);
    return -1;
}

/* Finite real number; positive if `positive`. */
int parse_real(const char *cmd, const char *opt, const char *s, int positive, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        usage_error(cmd, "%s: '%s' is not a finite number", opt, s);
        return -1;
    }
    if (positive && !(v > 0)) {
        usage_error(cmd, "%s: '%s' must be positive", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

int parse_op(const char *cmd, const char *opt, const char *s, ooc_op_t *op)
{
    if (strcasecmp(s, "N") == 0) *op = OOC_OP_N;
    else if (strcasecmp(s, "T") == 0) *op = OOC_OP_T;
    else if (strcasecmp(s, "C") == 0) *op = OOC_OP_C;
    else return usage_error(cmd, "%s: '%s' is not N, T or C", opt, s), -1;
    return 0;
}

/* A library option: 0 (automatic) or within ooc_param_bounds(). */
int parse_param(const char *cmd, const char *opt, const char *s, ooc_param_t param,
                int bytes, int64_t *out)
{
    int64_t v, lo = 0, hi = INT64_MAX;
    if (bytes ? parse_bytes(cmd, opt, s, &v) : parse_int(cmd, opt, s, 0, INT64_MAX, &v)) return -1;
    if (v != 0 && ooc_param_bounds(param, &lo, &hi) == OOC_SUCCESS && (v < lo || v > hi)) {
        usage_error(cmd, "%s: %s is outside [%lld, %lld] (or 0 for automatic)", opt, s, (long long)lo,
                    (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* A seed: any unsigned 64-bit decimal integer. */
int parse_seed(const char *cmd, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || errno == ERANGE)
        return usage_error(cmd, "--seed: '%s' is not a non-negative integer", s), -1;
    *out = (uint64_t)v;
    return 0;
}

int floor_opt_parse(const char *cmd, int c, const char *arg, floor_opts_t *f)
{
    switch (c) {
    case OPT_NO_FLOOR: f->no_floor = 1; return 1;
    case OPT_BW_H2D: return parse_real(cmd, "--bw-h2d", arg, 1, &f->bw_h2d) ? -1 : 1;
    case OPT_BW_D2H: return parse_real(cmd, "--bw-d2h", arg, 1, &f->bw_d2h) ? -1 : 1;
    case OPT_RATE: return parse_real(cmd, "--rate", arg, 1, &f->rate) ? -1 : 1;
    default: return 0;
    }
}

/* A device index of a --devices list at *p (digits only), moved past it:
 * its value, capped at OOC_MAX_DEVICES (out of range whatever the digits);
 * -1 when *p holds no digit. */
static long device_index(const char **p)
{
    long v = -1;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        v = (v < 0 ? 0 : v) * 10 + (**p - '0');
        if (v > OOC_MAX_DEVICES) v = OOC_MAX_DEVICES;
    }
    return v;
}

/*
 * --devices LIST|all, without printing (as spec.c's parsers): "all" (any
 * case) is 0, every visible device; LIST is indices and ranges N-M separated
 * by commas, a set (1,3-4; duplicates are fine), each index below
 * OOC_MAX_DEVICES. 0 with *mask (bit d for device d) and *first (the first
 * index listed, -1 for all), or -1 with the problem in why[len].
 */
int devices_parse(const char *s, uint32_t *mask, int *first, char *why, size_t len)
{
    if (strcasecmp(s, "all") == 0) {
        *mask = 0;
        *first = -1;
        return 0;
    }
    if (*s == '\0') return snprintf(why, len, "empty list (give indices such as 0,1 or 0-3, or 'all')"), -1;
    uint32_t m = 0;
    int f = -1;
    for (const char *p = s;; p++) {
        const char *tok = p;
        int tl = (int)strcspn(tok, ",");
        if (tl == 0) return snprintf(why, len, "'%s' has an empty entry", s), -1;
        long lo = device_index(&p), hi = lo;
        if (lo >= 0 && *p == '-') {
            p++;
            hi = device_index(&p);
        }
        if (lo < 0 || hi < 0 || (*p != ',' && *p != '\0'))
            return snprintf(why, len, "'%.*s' is not a device index or a range N-M%s%s%s", tl, tok,
                            s[tl] ? " (in '" : "", s[tl] ? s : "", s[tl] ? "')" : ""), -1;
        if (hi >= OOC_MAX_DEVICES)
            return snprintf(why, len, "'%.*s' is out of range: device indices go from 0 to %d", tl, tok,
                           OOC_MAX_DEVICES - 1), -1;
        if (lo > hi) return snprintf(why, len, "'%.*s' is an empty range (N-M needs N <= M)", tl, tok), -1;
        if (f < 0) f = (int)lo;
        for (long d = lo; d <= hi; d++) m |= (uint32_t)1 << d;
        if (*p == '\0') break;
    }
    *mask = m;
    *first = f;
    return 0;
}

/* A device mask as indices and ranges ("0-3", "0,2,5-7"); "all" for 0. */
const char *devices_format(uint32_t mask, char *buf, size_t len)
{
    size_t at = 0;
    snprintf(buf, len, "%s", mask ? "" : "all");
    for (int d = 0; d < OOC_MAX_DEVICES && at < len; d++) {
        if (!(mask >> d & 1)) continue;
        int e = d;
        while (e + 1 < OOC_MAX_DEVICES && (mask >> (e + 1) & 1)) e++;
        int w = e == d ? snprintf(buf + at, len - at, "%s%d", at ? "," : "", d)
                       : snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", d, e);
        at += w > 0 ? (size_t)w : 0;
        d = e;
    }
    return buf;
}

/* getopt code c, if it is a library option, into *l: 1 when it was one, 0
 * when not, -1 on a bad value (message printed). */
int lib_opt_parse(const char *cmd, int c, const char *optname, const char *arg, lib_opts_t *l)
{
    char why[256];
    switch (c) {
    case OPT_BACKEND:
        if (strcasecmp(arg, "auto") == 0) l->backend = OOC_BACKEND_AUTO;
        else if (strcasecmp(arg, "cublas") == 0) l->backend = OOC_BACKEND_CUBLAS;
        else if (strcasecmp(arg, "custom") == 0) l->backend = OOC_BACKEND_CUSTOM;
        else if (strcasecmp(arg, "host") == 0) l->backend = OOC_BACKEND_HOST;
        else return usage_error(cmd, "--backend: '%s' is not auto, cublas, custom or host", arg), -1;
        return 1;
    case OPT_DEVICE:
    case OPT_DEVICES:
        if (c == OPT_DEVICE ? l->devices_given : l->device_given)
            return usage_error(cmd, "--device and --devices exclude each other (--devices N: device N alone)"), -1;
        if (c == OPT_DEVICE) {
            l->device_given = 1;
            return parse_param(cmd, optname, arg, OOC_PARAM_DEVICE, 0, &l->device) ? -1 : 1;
        }
        if (devices_parse(arg, &l->devices, &l->devices_first, why, sizeof why))
            return usage_error(cmd, "--devices: %s", why), -1;
        l->devices_given = 1;
        return 1;
    case OPT_DEVICE_MEM: return parse_param(cmd, optname, arg, OOC_PARAM_DEVICE_MEM, 1, &l->device_mem) ? -1 : 1;
    case OPT_HOST_MEM: return parse_param(cmd, optname, arg, OOC_PARAM_HOST_MEM, 1, &l->host_mem) ? -1 : 1;
    case OPT_BLOCK_ROWS: return parse_param(cmd, optname, arg, OOC_PARAM_BLOCK_ROWS, 0, &l->block_rows) ? -1 : 1;
    case OPT_RING: return parse_param(cmd, optname, arg, OOC_PARAM_RING_DEPTH, 0, &l->ring) ? -1 : 1;
    case OPT_STREAMS: return parse_param(cmd, optname, arg, OOC_PARAM_STREAMS, 0, &l->streams) ? -1 : 1;
    case OPT_STAGING_THREADS:
        return parse_param(cmd, optname, arg, OOC_PARAM_STAGING_THREADS, 0, &l->staging_threads) ? -1 : 1;
    case OPT_TAIL: return parse_param(cmd, optname, arg, OOC_PARAM_TAIL, 0, &l->tail) ? -1 : 1;
    case OPT_B_CHUNKS: return parse_param(cmd, optname, arg, OOC_PARAM_B_CHUNKS, 0, &l->b_chunks) ? -1 : 1;
    case OPT_PEER_B:
        if (strcasecmp(arg, "auto") == 0) l->peer_b = OOC_PEER_B_AUTO;
        else if (strcasecmp(arg, "host") == 0) l->peer_b = OOC_PEER_B_HOST;
        else if (strcasecmp(arg, "share") == 0) l->peer_b = OOC_PEER_B_SHARE;
        else return usage_error(cmd, "--peer-b: '%s' is not auto, host or share", arg), -1;
        return 1;
    case OPT_TRACE: l->trace = arg; return 1;
    case OPT_TF32: l->tf32 = 1; return 1;
    default: return 0;
    }
}

/* Set a library option unless it is 0 (automatic). */
ooc_status_t set_param(ooc_handle_t *h, ooc_param_t p, int64_t v)
{
    return v != 0 ? ooc_set(h, p, v) : OOC_SUCCESS;
}

/*
 * Every library option onto the handle, before its backend opens. The
 * devices: --devices sets OOC_PARAM_DEVICES; --device N is the mask of N
 * alone (so that --device 0 is device 0, not every device), or for N beyond
 * the mask OOC_PARAM_DEVICE alone; and a mask of one device also names it in
 * OOC_PARAM_DEVICE (what a library of one device reads).
 */
ooc_status_t lib_opts_apply(ooc_handle_t *h, const lib_opts_t *l)
{
    ooc_status_t st;
    int64_t mask = l->devices_given ? (int64_t)l->devices
                   : l->device_given && l->device < OOC_MAX_DEVICES ? (int64_t)1 << l->device : 0;
    int64_t device = mask != 0 && (mask & (mask - 1)) == 0 ? __builtin_ctzll((unsigned long long)mask) : l->device;
    if ((st = ooc_set(h, OOC_PARAM_BACKEND, l->backend)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICE, device)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICES, mask)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICE_MEM, l->device_mem)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_HOST_MEM, l->host_mem)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_BLOCK_ROWS, l->block_rows)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_RING_DEPTH, l->ring)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STREAMS, l->streams)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STAGING_THREADS, l->staging_threads)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_TAIL, l->tail)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_B_CHUNKS, l->b_chunks)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_PEER_B, l->peer_b)) != OOC_SUCCESS ||
        (st = ooc_set_trace(h, l->trace)) != OOC_SUCCESS ||
        (st = ooc_set(h, OOC_PARAM_MATH_MODE, l->tf32 ? OOC_MATH_TF32 : OOC_MATH_STRICT)) != OOC_SUCCESS)
        return st;
    return OOC_SUCCESS;
}

/* The message for getopt_long's ':' (missing value) and '?' (unknown) returns;
 * `shorts` lists the command's short options. Returns RC_USAGE. */
int getopt_failure(const char *cmd, int c, char **argv, const char *shorts)
{
    if (c == ':') { /* optopt: the short option, or a long option's value (>= 256) */
        if (optopt > 0 && optopt < 256) return usage_error(cmd, "option -%c needs a value", optopt);
        return usage_error(cmd, "option %s needs a value", argv[optind - 1]);
    }
    /* optopt: an unknown short option; a known one here means a long
     * option given a value it does not take (--quiet=1); 0: unknown long */
    if (optopt > 0 && optopt < 256 && !strchr(shorts, optopt)) return usage_error(cmd, "unknown option -%c", optopt);
    if (optopt != 0) return usage_error(cmd, "option %s takes no value", argv[optind - 1]);
    return usage_error(cmd, "unknown option %s", argv[optind - 1]);
}

/* ------------------------------------------------------------------------ */
/* Random matrices: the threaded fill (the streams are in cli.h)             */

/* count elements (complex: 2*count reals) uniform in [-1, 1), never 0. */
typedef struct {
    ooc_dtype_t t;
    void *x;
    uint64_t key;
    size_t q0, q1; /* reals [q0, q1) */
    int nan;       /* fill with NaN instead */
} fill_part_t;

static void *fill_part(void *arg)
{
    fill_part_t *f = arg;
    if (f->nan) {
        size_t e = dtype_double(f->t) ? sizeof(double) : sizeof(float);
        memset((char *)f->x + f->q0 * e, 0xff, (f->q1 - f->q0) * e); /* all-ones: NaN */
    } else if (dtype_double(f->t)) {
        double *d = f->x;
        for (size_t q = f->q0; q < f->q1; q++) d[q] = rand_double(f->key, q);
    } else {
        float *fl = f->x;
        for (size_t q = f->q0; q < f->q1; q++) fl[q] = rand_float(f->key, q);
    }
    return NULL;
}

/* Fill with values that depend only on (seed, which, index), or with NaN
 * (nan), on all cores. */
static void fill_threaded(ooc_dtype_t t, void *x, size_t count, uint64_t seed, unsigned which, int nan)
{
    enum { MAX_THREADS = 64 };
    size_t reals = count * (dtype_complex(t) ? 2 : 1);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = reals < ((size_t)1 << 22) || ncpu < 2 ? 1 : (size_t)(ncpu > MAX_THREADS ? MAX_THREADS : ncpu);
    fill_part_t parts[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int created[MAX_THREADS] = {0};
    for (size_t i = 0; i < nt; i++) {
        parts[i] = (fill_part_t){t, x, stream_key(seed, which), reals * i / nt, reals * (i + 1) / nt, nan};
        created[i] = i + 1 < nt && pthread_create(&th[i], NULL, fill_part, &parts[i]) == 0;
        if (!created[i]) fill_part(&parts[i]); /* the last part, or no thread: do it here */
    }
    for (size_t i = 0; i < nt; i++)
        if (created[i]) pthread_join(th[i], NULL);
}

void fill_random(ooc_dtype_t t, void *x, size_t count, uint64_t seed, unsigned which)
{
    fill_threaded(t, x, count, seed, which, 0);
}

/* NaN everywhere (all bits set), on all cores: a C that must not be read. */
void fill_nan(ooc_dtype_t t, void *x, size_t count) { fill_threaded(t, x, count, 0, 0, 1); }

/* Element idx of an array of dtype t, as (re, im) doubles. */
static void load(ooc_dtype_t t, const void *x, size_t idx, double *re, double *im)
{
    switch (t) {
    case OOC_R32: *re = ((const float *)x)[idx]; *im = 0; break;
    case OOC_R64: *re = ((const double *)x)[idx]; *im = 0; break;
    case OOC_C32: *re = ((const float *)x)[2 * idx]; *im = ((const float *)x)[2 * idx + 1]; break;
    case OOC_C64: *re = ((const double *)x)[2 * idx]; *im = ((const double *)x)[2 * idx + 1]; break;
    }
}

static double magnitude(ooc_dtype_t t, const void *x, size_t idx)
{
    double re, im;
    load(t, x, idx, &re, &im);
    return dtype_complex(t) ? hypot(re, im) : fabs(re);
}

/* Index of element (i, j) of op(X), X stored in `layout` with leading dimension ld. */
static size_t op_index(ooc_layout_t layout, ooc_op_t op, int64_t ld, int64_t i, int64_t j)
{
    int64_t r = op == OOC_OP_N ? i : j, c = op == OOC_OP_N ? j : i; /* element (r, c) of X */
    return layout == OOC_COL_MAJOR ? (size_t)r + (size_t)c * (size_t)ld : (size_t)r * (size_t)ld + (size_t)c;
}

/* ------------------------------------------------------------------------ */
/* The floor of docs/PERFORMANCE.md, shared by run, multiply and bench       */

/* Open the handle's backend if it is not yet (a tiny allocation does it):
 * is it a GPU's? */
static int floor_backend_gpu(ooc_handle_t *h)
{
    if (strcmp(ooc_backend_name(h), "none") == 0) {
        void *p = NULL;
        if (ooc_host_alloc(h, 64, &p) == OOC_SUCCESS) (void)ooc_host_free(h, p);
    }
    return strcmp(ooc_backend_name(h), "host") != 0;
}

/* The in-core rate, unless given, on min(dim, 16384) (1024 on the host
 * backend); a failure leaves it unknown, with a warning unless quiet. */
void floor_measure_rate(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet,
                        floor_t *f)
{
    int64_t cap = floor_backend_gpu(h) ? 16384 : 1024;
    f->pm = m < cap ? m : cap;
    f->pn = n < cap ? n : cap;
    f->pk = k < cap ? k : cap;
    if (f->rate <= 0 && f->pm > 0 && f->pn > 0 && f->pk > 0) {
        double rate;
        ooc_status_t st = ooc_measure_gemm_rate(h, t, f->pm, f->pn, f->pk, 3, &rate);
        if (st == OOC_SUCCESS) {
            f->rate = rate / 1e12;
            f->measured_rate = 1;
        } else if (!quiet) {
            fprintf(stderr, "%s: warning: cannot measure the in-core rate: %s: %s\n", progname,
                    ooc_status_string(st), ooc_last_error(h));
        }
    }
}

/*
 * Measure what is not given, on the handle's backend (open it first: call
 * after the multiply): pinned copies of 1 GiB each way (64 MiB on the host
 * backend), and the in-core rate (floor_measure_rate).
 * A failed measurement leaves the figure unknown, with a warning unless quiet.
 */
void floor_measure(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet,
                   floor_t *f)
{
    int gpu = floor_backend_gpu(h);
    if (f->bw_h2d <= 0 || f->bw_d2h <= 0) {
        double h2d, d2h;
        ooc_status_t st = ooc_measure_bandwidth(h, gpu ? (size_t)1 << 30 : (size_t)64 << 20, &h2d, &d2h);
        if (st == OOC_SUCCESS) {
            if (f->bw_h2d <= 0) f->bw_h2d = h2d / 1e9;
            if (f->bw_d2h <= 0) f->bw_d2h = d2h / 1e9;
            f->measured_bw = 1;
        } else if (!quiet) {
            fprintf(stderr, "%s: warning: cannot measure bandwidth: %s: %s\n", progname, ooc_status_string(st),
                    ooc_last_error(h));
        }
    }
    floor_measure_rate(h, t, m, n, k, quiet, f);
}

/* floor = max(T_in, T_out, T_bus, T_math) for m x n x k (C0 read when
 * with_c0); T_bus only when the both-ways bandwidth is known. */
void floor_compute(floor_t *f, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int with_c0)
{
    f->have = f->bw_h2d > 0 && f->bw_d2h > 0 && f->rate > 0;
    if (!f->have) return;
    double s = (double)dtype_size(t), mn = (double)m * (double)n;
    double flops = (dtype_complex(t) ? 8.0 : 2.0) * mn * (double)k;
    double in_elems = (double)m * (double)k + (double)k * (double)n + (with_c0 ? mn : 0.0);
    f->t_in = s * in_elems / (f->bw_h2d * 1e9);
    f->t_out = s * mn / (f->bw_d2h * 1e9);
    f->t_bus = f->bw_both > 0 ? s * (in_elems + mn) / (f->bw_both * 1e9) : 0.0;
    f->t_math = flops / (f->rate * 1e12);
    f->floor_s = f->t_in > f->t_out ? f->t_in : f->t_out;
    if (f->t_bus > f->floor_s) f->floor_s = f->t_bus;
    if (f->t_math > f->floor_s) f->floor_s = f->t_math;
}

/* The "rates:" and "floor:" lines (or "floor: n/a"), floor/time for `time`
 * (none when time < 0). */
void floor_print(FILE *out, const floor_t *f, ooc_dtype_t t, double time)
{
    if (!f->have) {
        fprintf(out, "floor: n/a\n");
        return;
    }
    char dt = dtype_letter(t), both[48] = "", gpus[32] = "", sum[40] = "";
    if (f->bw_both > 0) snprintf(both, sizeof both, ", both ways %.1f GB/s", f->bw_both);
    if (f->ndev > 1) {
        snprintf(gpus, sizeof gpus, ", %d GPUs at once", f->ndev);
        snprintf(sum, sizeof sum, ", the sum over %d GPUs", f->ndev);
    }
    fprintf(out, "rates: H2D %.1f GB/s, D2H %.1f GB/s%s (%s%s); in-core %cGEMM %lldx%lldx%lld %.3g TFLOP/s (%s%s)\n",
            f->bw_h2d, f->bw_d2h, both, f->measured_bw ? "measured" : "given", gpus, dt - 'a' + 'A',
            (long long)f->pm, (long long)f->pn, (long long)f->pk, f->rate, f->measured_rate ? "measured" : "given",
            sum);
    fprintf(out, "floor: %.3g s (in %.3g, out %.3g", f->floor_s, f->t_in, f->t_out);
    if (f->bw_both > 0) fprintf(out, ", bus %.3g", f->t_bus);
    fprintf(out, ", math %.3g)", f->t_math);
    if (time >= 0) fprintf(out, "  floor/time: %.2f", time > 0 ? f->floor_s / time : INFINITY);
    fputc('\n', out);
}

/* "busy: H2D ... s, ...; overlap efficiency E" of a traced multiply. */
static void print_busy(FILE *out, double h2d, double compute, double d2h, double rd, double wr, double eff)
{
    fprintf(out, "busy: H2D %.3g s, compute %.3g s, D2H %.3g s, reader %.3g s, writer %.3g s; overlap efficiency %.2f",
            h2d, compute, d2h, rd, wr, eff);
}

/* The number of entries of st->device[] to read. */
static int stats_ndevices(const ooc_stats_t *st)
{
    return st->ndevices < 0 ? 0 : st->ndevices > OOC_MAX_DEVICES ? OOC_MAX_DEVICES : st->ndevices;
}

/* The "backend: ... plan: ..." line of the library's stats, the timeline
 * when traced, and one line per device when there were several. */
void print_plan(FILE *out, const char *backend, const ooc_stats_t *st)
{
    char b1[32], b2[32];
    if (st->panels == 0) /* alpha == 0: C = beta*C, nothing streamed */
        fprintf(out, "backend: %s   plan: none (an empty product, k = 0 or alpha = 0: nothing to multiply)\n", backend);
    else
        fprintf(out,
                "backend: %s   plan: %sblock rows %lld, panel %lld x %lld (%lld panels, %lld blocks each), "
                "ring %d, streams %d, staged A/C: %s/%s, device %s, staging %s\n",
                backend, st->a_resident ? "op(A) resident, op(B) streamed (C^T = op(B)^T op(A)^T): " : "",
                (long long)st->block_rows, (long long)st->panel_depth, (long long)st->panel_cols,
                (long long)st->panels, (long long)st->blocks, (int)st->ring_depth, (int)st->streams,
                st->staged_a ? "yes" : "no", st->staged_c ? "yes" : "no",
                human_bytes(st->device_bytes, b1, sizeof b1), human_bytes(st->host_bytes, b2, sizeof b2));
    if (st->traced) {
        fprintf(out, "timeline: %.3g s from first to last device op; ", st->trace_wall);
        print_busy(out, st->busy_h2d, st->busy_compute, st->busy_d2h, st->busy_read, st->busy_write,
                   st->overlap_efficiency);
        fputc('\n', out);
    }
    int nd = stats_ndevices(st);
    if (nd > 1) fprintf(out, "op(B): %s\n", st->b_how);
    for (int i = 0; nd > 1 && i < nd; i++) {
        const ooc_device_stats_t *d = &st->device[i];
        fprintf(out, "  device %d: %lld block%s, H2D %.3g GB, D2H %.3g GB, ", (int)d->device, (long long)d->blocks,
                d->blocks == 1 ? "" : "s", (double)d->bytes_h2d / 1e9, (double)d->bytes_d2h / 1e9);
        if (st->b_shared) fprintf(out, "from peers %.3g GB, ", (double)d->bytes_peer / 1e9);
        fprintf(out, "its last block done at %.3g s", d->seconds);
        if (st->traced) {
            fprintf(out, "; timeline %.3g s, ", d->trace_wall);
            print_busy(out, d->busy_h2d, d->busy_compute, d->busy_d2h, d->busy_read, d->busy_write,
                       d->overlap_efficiency);
        }
        fputc('\n', out);
    }
}

/* ------------------------------------------------------------------------ */
/* In-memory matrices and the check of sampled rows against OpenBLAS         */

/* Stored size of op(X) (rows x cols) in `layout`, with overflow checks. */
int matrix_shape(const char *cmd, const char *name, const run_opts_t *o, ooc_op_t op, int64_t rows,
                 int64_t cols, matrix_t *x)
{
    int64_t srows = op == OOC_OP_N ? rows : cols, scols = op == OOC_OP_N ? cols : rows;
    size_t elems, bytes;
    memset(x, 0, sizeof *x);
    x->ld = o->layout == OOC_COL_MAJOR ? srows : scols;
    if (__builtin_mul_overflow((uint64_t)srows, (uint64_t)scols, &elems) ||
        __builtin_mul_overflow(elems, dtype_size(o->dtype), &bytes) || bytes > (size_t)INT64_MAX) {
        usage_error(cmd, "%s (%lld x %lld elements of %zu bytes) is too large to allocate", name,
                    (long long)srows, (long long)scols, dtype_size(o->dtype));
        return -1;
    }
    x->elems = elems;
    x->bytes = bytes;
    return 0;
}

/* Allocate x (pinned through the handle, or pageable). On failure: RC_RUNTIME
 * and the message on stderr, or in err[len] when err is not NULL. */
int matrix_alloc(ooc_handle_t *h, int pinned, matrix_t *x, const char *name, char *err, size_t len)
{
    if (pinned) {
        ooc_status_t st = ooc_host_alloc(h, x->bytes, &x->p);
        if (st != OOC_SUCCESS) {
            x->p = NULL;
            if (err == NULL) return library_error(h, st);
            snprintf(err, len, "ooc_host_alloc (%s): %s: %s", name, ooc_status_string(st), ooc_last_error(h));
            return RC_RUNTIME;
        }
        return RC_OK;
    }
    size_t bytes = (x->bytes + 63) & ~(size_t)63;
    x->p = aligned_alloc(64, bytes ? bytes : 64);
    if (x->p == NULL) {
        char b[32];
        if (err) snprintf(err, len, "cannot allocate %s for %s", human_bytes(x->bytes, b, sizeof b), name);
        else fprintf(stderr, "%s: cannot allocate %s for %s\n", progname, human_bytes(x->bytes, b, sizeof b), name);
        return RC_RUNTIME;
    }
    return RC_OK;
}

void matrix_free(ooc_handle_t *h, int pinned, matrix_t *x)
{
    if (x->p == NULL) return;
    if (pinned) (void)ooc_host_free(h, x->p);
    else free(x->p);
    x->p = NULL;
}

/* The checked rows: r distinct rows spread evenly over 0..m-1, first and last included. */
void pick_rows(int64_t m, int64_t r, int64_t *rows)
{
    if (r == 1) {
        rows[0] = 0;
        return;
    }
    /* row t = floor(t * (m-1) / (r-1)) without overflow: r <= 2^31 (--check-rows) */
    int64_t q = (m - 1) / (r - 1), rem = (m - 1) % (r - 1);
    for (int64_t t = 0; t < r; t++) rows[t] = q * t + rem * t / (r - 1);
}

/* Element (t, j) of an r x n matrix stored in `layout` with exact leading dimension. */
static size_t small_index(ooc_layout_t layout, int64_t r, int64_t n, int64_t t, int64_t j)
{
    return layout == OOC_COL_MAJOR ? (size_t)t + (size_t)j * (size_t)r : (size_t)t * (size_t)n + (size_t)j;
}

/* Copy the r checked rows of C (m x n) into c0 (r x n, same layout). */
void save_rows(const run_opts_t *o, const void *C, const int64_t *rows, int64_t r, void *c0)
{
    size_t e = dtype_size(o->dtype);
    int64_t ldc = o->layout == OOC_COL_MAJOR ? o->m : o->n;
    for (int64_t t = 0; t < r; t++)
        for (int64_t j = 0; j < o->n; j++)
            memcpy((char *)c0 + small_index(o->layout, r, o->n, t, j) * e,
                   (const char *)C + op_index(o->layout, OOC_OP_N, ldc, rows[t], j) * e, e);
}

#define CBLAS_ORD(l) ((l) == OOC_ROW_MAJOR ? CblasRowMajor : CblasColMajor)
#define CBLAS_OP(t) ((t) == OOC_OP_N ? CblasNoTrans : (t) == OOC_OP_T ? CblasTrans : CblasConjTrans)

void check_ref_free(check_ref_t *ref)
{
    free(ref->R);
    free(ref->arow);
    ref->R = NULL;
    ref->arow = NULL;
}

/*
 * Recompute the r rows of C with OpenBLAS. R = alpha * G * op(B) + beta * c0,
 * G the gathered rows of op(A) (conjugated for op = C), and the bounds.
 * Returns RC_OK, RC_RUNTIME (out of memory), or RC_USAGE when the sizes do
 * not fit a BLAS int (*ref left empty).
 */
int check_ref(const run_opts_t *o, const matrix_t *A, const matrix_t *B, const void *c0,
              const int64_t *rows, int64_t r, check_ref_t *ref)
{
    ooc_dtype_t t = o->dtype;
    size_t e = dtype_size(t);
    int64_t n = o->n, k = o->k;
    int col = o->layout == OOC_COL_MAJOR;
    int rc = RC_RUNTIME;
    void *G = NULL;
    double *bmax = NULL;

    memset(ref, 0, sizeof *ref);
    if (r > INT_MAX || n > INT_MAX || k > INT_MAX || B->ld > INT_MAX) return RC_USAGE;
    /* no overflow: r <= m, so r*k*e and r*n*e are at most the sizes of A and C */
    G = malloc((size_t)r * (size_t)k * e);
    ref->R = malloc((size_t)r * (size_t)n * e);
    bmax = calloc((size_t)k, sizeof *bmax);
    ref->arow = calloc((size_t)r, sizeof *ref->arow);
    if (!G || !ref->R || !bmax || !ref->arow) {
        fprintf(stderr, "%s: out of memory for the check\n", progname);
        check_ref_free(ref);
        goto out;
    }
    void *R = ref->R;
    double *arow = ref->arow;

    /* gather op(A)'s rows into G (r x k, layout order) */
    for (int64_t i = 0; i < r; i++)
        for (int64_t l = 0; l < k; l++) {
            char *dst = (char *)G + small_index(o->layout, r, k, i, l) * e;
            memcpy(dst, (const char *)A->p + op_index(o->layout, o->ta, A->ld, rows[i], l) * e, e);
            if (o->ta == OOC_OP_C && t == OOC_C32) ((float *)dst)[1] = -((float *)dst)[1];
            if (o->ta == OOC_OP_C && t == OOC_C64) ((double *)dst)[1] = -((double *)dst)[1];
        }
    if (o->beta != 0.0) memcpy(R, c0, (size_t)r * (size_t)n * e);
    else memset(R, 0, (size_t)r * (size_t)n * e);

    int ldg = col ? (int)r : (int)k, ldr = col ? (int)r : (int)n, ldb = (int)B->ld;
    double za[2] = {o->alpha, 0.0}, zb[2] = {o->beta, 0.0};
    float ca[2] = {(float)o->alpha, 0.0f}, cb[2] = {(float)o->beta, 0.0f};
    switch (t) {
    case OOC_R32:
        cblas_sgemm(CBLAS_ORD(o->layout), CblasNoTrans, CBLAS_OP(o->tb), (int)r, (int)n, (int)k,
                    (float)o->alpha, G, ldg, B->p, ldb, (float)o->beta, R, ldr);
        break;
    case OOC_R64:
        cblas_dgemm(CBLAS_ORD(o->layout), CblasNoTrans, CBLAS_OP(o->tb), (int)r, (int)n, (int)k, o->alpha,
                    G, ldg, B->p, ldb, o->beta, R, ldr);
        break;
    case OOC_C32:
        cblas_cgemm(CBLAS_ORD(o->layout), CblasNoTrans, CBLAS_OP(o->tb), (int)r, (int)n, (int)k, ca, G,
                    ldg, B->p, ldb, cb, R, ldr);
        break;
    case OOC_C64:
        cblas_zgemm(CBLAS_ORD(o->layout), CblasNoTrans, CBLAS_OP(o->tb), (int)r, (int)n, (int)k, za, G,
                    ldg, B->p, ldb, zb, R, ldr);
        break;
    }

    /* bmax[l] = max_j |op(B)[l, j]|, in one pass over B in memory order */
    {
        int64_t srows = o->tb == OOC_OP_N ? k : n, scols = o->tb == OOC_OP_N ? n : k;
        int64_t outer = col ? scols : srows, inner = col ? srows : scols;
        for (int64_t p = 0; p < outer; p++)
            for (int64_t q = 0; q < inner; q++) {
                int64_t sr = col ? q : p, sc = col ? p : q;
                int64_t l = o->tb == OOC_OP_N ? sr : sc;
                double v = magnitude(t, B->p, (size_t)p * (size_t)B->ld + (size_t)q);
                if (!(v <= bmax[l])) bmax[l] = v; /* NaN sticks */
            }
    }
    /* arow[i] = |alpha| * sum_l |op(A)[i, l]| * bmax[l] */
    for (int64_t i = 0; i < r; i++) {
        double s = 0.0;
        for (int64_t l = 0; l < k; l++) s += magnitude(t, G, small_index(o->layout, r, k, i, l)) * bmax[l];
        arow[i] = fabs(o->alpha) * s;
    }
    rc = RC_OK;
out:
    free(G);
    free(bmax);
    return rc;
}

/* The largest error of the r checked rows of C against the reference,
 * relative to the bound described in run --help (INFINITY for NaN). */
double check_compare(const run_opts_t *o, const check_ref_t *ref, const matrix_t *C, const void *c0,
                     const int64_t *rows, int64_t r)
{
    ooc_dtype_t t = o->dtype;
    int64_t n = o->n;
    double worst = 0.0;
    int64_t ldc = o->layout == OOC_COL_MAJOR ? o->m : n;
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < n; j++) {
            size_t si = small_index(o->layout, r, n, i, j);
            double cr, ci, rr, ri;
            load(t, C->p, op_index(o->layout, OOC_OP_N, ldc, rows[i], j), &cr, &ci);
            load(t, ref->R, si, &rr, &ri);
            double diff = dtype_complex(t) ? hypot(cr - rr, ci - ri) : fabs(cr - rr);
            double bound = ref->arow[i] + (o->beta != 0.0 ? fabs(o->beta) * magnitude(t, c0, si) : 0.0);
            double err = diff == 0.0 ? 0.0 : diff / (bound > DBL_MIN ? bound : DBL_MIN);
            if (isnan(err)) err = INFINITY;
            if (err > worst) worst = err;
        }
    return worst;
}

/*
 * Check the r rows of C against OpenBLAS (check_ref, then check_compare).
 * *max_err receives the largest relative error. Returns RC_OK, RC_RUNTIME
 * (out of memory), or RC_USAGE when the sizes do not fit a BLAS int
 * (*max_err untouched).
 */
int check_c(const run_opts_t *o, const matrix_t *A, const matrix_t *B, const matrix_t *C,
            const void *c0, const int64_t *rows, int64_t r, double *max_err)
{
    check_ref_t ref;
    int rc = check_ref(o, A, B, c0, rows, r, &ref);
    if (rc != RC_OK) return rc;
    *max_err = check_compare(o, &ref, C, c0, rows, r);
    check_ref_free(&ref);
    return RC_OK;
}

/* The check's tolerance: 4*k*eps; TF32 rounds the inputs to 10 mantissa
 * bits: up to 2^-9 per product, whatever k. */
double check_tolerance(const run_opts_t *o)
{
    double eps = dtype_double(o->dtype) ? DBL_EPSILON : FLT_EPSILON;
    return 4.0 * (double)o->k * eps + (o->lib.tf32 && !dtype_double(o->dtype) ? 0x1.0p-7 : 0.0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sort the n > 0 times; their best and median. */
void times_summary(double *times, int64_t n, double *best, double *median)
{
    qsort(times, (size_t)n, sizeof *times, cmp_double);
    *best = times[0];
    *median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

/* A JSON number, or null when not finite / not available. */
void json_num(FILE *f, const char *key, double v, int available)
{
    if (available && isfinite(v)) fprintf(f, ",\"%s\":%.9g", key, v);
    else fprintf(f, ",\"%s\":null", key);
}

/* ,"devices":[...]: one object per device of the last multiply (none when
 * the library reports none); the busy times are null unless it was traced. */
void json_devices(FILE *f, const ooc_stats_t *st)
{
    int nd = stats_ndevices(st);
    fputs(",\"devices\":[", f);
    for (int i = 0; i < nd; i++) {
        const ooc_device_stats_t *d = &st->device[i];
        fprintf(f, "%s{\"device\":%d,\"blocks\":%lld,\"bytes_h2d\":%" PRIu64 ",\"bytes_d2h\":%" PRIu64
                   ",\"bytes_peer\":%" PRIu64,
                i ? "," : "", (int)d->device, (long long)d->blocks, d->bytes_h2d, d->bytes_d2h, d->bytes_peer);
        json_num(f, "seconds", d->seconds, 1);
        json_num(f, "busy_h2d", d->busy_h2d, st->traced);
        json_num(f, "busy_compute", d->busy_compute, st->traced);
        json_num(f, "busy_d2h", d->busy_d2h, st->traced);
        json_num(f, "busy_read", d->busy_read, st->traced);
        json_num(f, "busy_write", d->busy_write, st->traced);
        json_num(f, "trace_wall", d->trace_wall, st->traced);
        json_num(f, "overlap_efficiency", d->overlap_efficiency, st->traced);
        fputc('}', f);
    }
    fputc(']', f);
    /* how op(B) reached them (OOC_PARAM_PEER_B) */
    fprintf(f, ",\"b_shared\":%s,\"bytes_peer\":%" PRIu64, st->b_shared ? "true" : "false", st->bytes_peer);
    json_num(f, "probe_host_gbps", st->probe_host_gbps, st->probe_host_gbps > 0);
    json_num(f, "probe_peer_gbps", st->probe_peer_gbps, st->probe_peer_gbps > 0);
    fputs(",\"b_how\":", f);
    json_str(f, st->b_how);
}
