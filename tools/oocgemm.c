/* SPDX-License-Identifier: MIT */
/*
 * oocgemm.c: the command-line tool of libooc_gemm.
 *
 * main() dispatches on a subcommand:
 *   oocgemm gen       write a seeded random matrix file (.npy or raw), on
 *                     several threads, in bounded memory
 *   oocgemm multiply  C = alpha*op(A)*op(B) + beta*C0 on matrix files, through
 *                     a temporary file and a resume journal, with progress,
 *                     a summary against the floor and an optional check
 *   oocgemm verify    check a product on files against OpenBLAS (exact for
 *                     small problems, Freivalds plus sampled rows otherwise)
 *   oocgemm info      the GPUs, their links and measured pinned bandwidth
 *   oocgemm run       multiply seeded random in-memory matrices through the
 *                     library, time it (best and median of --repeat runs),
 *                     compare the time with the PCIe/compute floor of
 *                     PERFORMANCE.md, and check sampled rows of C against
 *                     OpenBLAS.
 *   oocgemm bench     on the same host buffers, time ours, the serial loop,
 *                     cublasXt (default and swept block dims) and in-core
 *                     cuBLAS (peers.h) against the floor measured in the
 *                     same run; check each result; text, CSV or JSON
 * Exit statuses are defined once (exit_codes[]) and library statuses are
 * mapped to them in one function (exit_status_for).
 *
 * Uses only the public API (ooc_gemm.h), OpenBLAS's cblas.h, and for the
 * bench's peers tools/peers.h (CUDA, cuBLAS and cublasXt in peers_cuda.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>
#include <sys/resource.h>

#include <cblas.h>

#include "ooc_gemm.h"
#include "peers.h"

/* ------------------------------------------------------------------------ */
/* Exit statuses: the one place they are defined (and listed in --help).    */

enum {
    RC_OK = 0,           /* success */
    RC_CHECK_FAILED = 1, /* the result check against OpenBLAS failed */
    RC_USAGE = 2,        /* bad command line (unknown command or option, bad value) */
    RC_RUNTIME = 3,      /* the library reported an error, or host memory ran out */
    RC_INPUT = 4,        /* an input file cannot be opened or read, or is malformed */
    RC_SHAPE = 5,        /* the operands' shapes or element types do not match */
    RC_OUTPUT = 6        /* the output or the journal cannot be written; resume impossible */
};

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
    {RC_OUTPUT, "output error: cannot write the output or its journal, or the journal does\n"
                "     not match the job (resume impossible)"},
};

static void print_exit_codes(FILE *f)
{
    fprintf(f, "Exit status:\n");
    for (size_t i = 0; i < sizeof exit_codes / sizeof exit_codes[0]; i++)
        fprintf(f, "  %d  %s\n", exit_codes[i].code, exit_codes[i].meaning);
}

/* Where a library call failed, for exit_status_for(). */
typedef enum {
    AT_INPUT,  /* opening or reading an input file (A, B, C0, or C being verified) */
    AT_OUTPUT, /* creating, writing or committing the output */
    AT_RUN,    /* inside ooc_gemm_files(): inputs and output both in play */
    AT_OTHER   /* anything else (handle, options, devices, measurements) */
} stage_t;

/*
 * The one mapping from library statuses to exit statuses. A file error
 * (OOC_ERR_IO, OOC_ERR_FORMAT) is an input's (4) or the output's (6)
 * depending on the stage; inside ooc_gemm_files() it is the output's when the
 * library's message names the output's temporary file or the journal.
 */
static int exit_status_for(ooc_status_t st, stage_t at, const char *detail, const char *tmp_path,
                           const char *journal_path)
{
    switch (st) {
    case OOC_SUCCESS: return RC_OK;
    case OOC_ERR_IO:
    case OOC_ERR_FORMAT:
        switch (at) {
        case AT_INPUT: return RC_INPUT;
        case AT_OUTPUT: return RC_OUTPUT;
        case AT_RUN:
            if (detail && ((tmp_path && strstr(detail, tmp_path)) || (journal_path && strstr(detail, journal_path))))
                return RC_OUTPUT;
            return RC_INPUT;
        case AT_OTHER: break;
        }
        return RC_RUNTIME;
    case OOC_ERR_SHAPE: return RC_SHAPE;
    case OOC_ERR_JOURNAL: return RC_OUTPUT;
    case OOC_ERR_PARAM_RANGE: return RC_USAGE;
    default: return RC_RUNTIME;
    }
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */

static const char *progname = "oocgemm";

/* "oocgemm run: <message>" on stderr, a hint, and RC_USAGE. */
static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *cmd, const char *fmt, ...)
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
static int library_error(const ooc_handle_t *h, ooc_status_t st)
{
    const char *detail = h ? ooc_last_error(h) : "";
    fprintf(stderr, "%s: %s%s%s\n", progname, ooc_status_string(st), detail && *detail ? ": " : "",
            detail ? detail : "");
    return RC_RUNTIME;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static size_t dtype_size(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return 4;
    case OOC_R64: return 8;
    case OOC_C32: return 8;
    case OOC_C64: return 16;
    }
    return 0;
}

static int dtype_complex(ooc_dtype_t t) { return t == OOC_C32 || t == OOC_C64; }
static int dtype_double(ooc_dtype_t t) { return t == OOC_R64 || t == OOC_C64; }

static char dtype_letter(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return 's';
    case OOC_R64: return 'd';
    case OOC_C32: return 'c';
    case OOC_C64: return 'z';
    }
    return '?';
}

static char op_letter(ooc_op_t op) { return op == OOC_OP_N ? 'N' : op == OOC_OP_T ? 'T' : 'C'; }

/* "12.3 MiB": a byte count for people. */
static const char *human_bytes(uint64_t b, char *buf, size_t len)
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
static char fail_msg[2048];

/* "oocgemm: <message>" on stderr (kept for --json); returns rc. */
static int fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int rc, const char *fmt, ...)
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
static int lib_fail(const ooc_handle_t *h, ooc_status_t st, stage_t at, const char *tmp_path,
                    const char *journal_path, const char *what)
{
    const char *detail = h ? ooc_last_error(h) : "";
    int rc = exit_status_for(st, at, detail, tmp_path, journal_path);
    return fail(rc, "%s: %s%s%s", what, ooc_status_string(st), detail && *detail ? ": " : "",
                detail ? detail : "");
}

/* A JSON string (null for NULL). */
static void json_str(FILE *f, const char *s)
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
static const char *dtype_name(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return "float32";
    case OOC_R64: return "float64";
    case OOC_C32: return "complex64";
    case OOC_C64: return "complex128";
    }
    return "unknown";
}

/* s|d|c|z, f4|f8|c8|c16 or NumPy's names; 0 on success, -1 if not one. */
static int dtype_parse(const char *s, ooc_dtype_t *t)
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

/* Storage order: C (row-major) or F (Fortran, column-major); also row|col. */
static int order_parse(const char *s, ooc_layout_t *l)
{
    if (strcasecmp(s, "C") == 0 || strcasecmp(s, "row") == 0) *l = OOC_ROW_MAJOR;
    else if (strcasecmp(s, "F") == 0 || strcasecmp(s, "col") == 0) *l = OOC_COL_MAJOR;
    else return -1;
    return 0;
}

static const char *order_name(ooc_layout_t l) { return l == OOC_ROW_MAJOR ? "C" : "F"; }

/* Does the path end in ".npy" (any case)? */
static int has_npy_ext(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".npy") == 0;
}

/* ------------------------------------------------------------------------ */
/* Option values                                                             */

/* Plain decimal integer >= min; 0 on success, -1 with a message. */
static int parse_int(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
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
static int parse_bytes(const char *cmd, const char *opt, const char *s, int64_t *out)
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
static int parse_real(const char *cmd, const char *opt, const char *s, int positive, double *out)
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

static int parse_op(const char *cmd, const char *opt, const char *s, ooc_op_t *op)
{
    if (strcasecmp(s, "N") == 0) *op = OOC_OP_N;
    else if (strcasecmp(s, "T") == 0) *op = OOC_OP_T;
    else if (strcasecmp(s, "C") == 0) *op = OOC_OP_C;
    else return usage_error(cmd, "%s: '%s' is not N, T or C", opt, s), -1;
    return 0;
}

/* A library option: 0 (automatic) or within ooc_param_bounds(). */
static int parse_param(const char *cmd, const char *opt, const char *s, ooc_param_t param,
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
static int parse_seed(const char *cmd, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || errno == ERANGE)
        return usage_error(cmd, "--seed: '%s' is not a non-negative integer", s), -1;
    *out = (uint64_t)v;
    return 0;
}

/* Long options of every command share one set of codes. */
enum {
    OPT_DTYPE = 256, OPT_LAYOUT, OPT_TRANSA, OPT_TRANSB, OPT_ALPHA, OPT_BETA, OPT_MEMORY,
    OPT_BACKEND, OPT_DEVICE, OPT_DEVICE_MEM, OPT_HOST_MEM, OPT_BLOCK_ROWS, OPT_RING, OPT_STREAMS,
    OPT_STAGING_THREADS, OPT_TF32, OPT_REPEAT, OPT_SEED, OPT_CHECK_ROWS, OPT_NO_CHECK, OPT_BW_H2D,
    OPT_BW_D2H, OPT_RATE, OPT_NO_FLOOR, OPT_JSON,
    /* file commands */
    OPT_ROWS, OPT_COLS, OPT_ORDER, OPT_FORMAT, OPT_THREADS, OPT_C_IN, OPT_VERIFY, OPT_RESUME,
    OPT_JOURNAL, OPT_DEVICES, OPT_NO_PROGRESS, OPT_OUT_FORMAT, OPT_OUT_ORDER, OPT_DISK_READ_BW,
    OPT_DISK_WRITE_BW, OPT_VECTORS, OPT_BYTES, OPT_NO_MEASURE, OPT_MEASURE_DISK,
    /* bench */
    OPT_SHAPE, OPT_SUITE, OPT_XT_DIMS, OPT_XT_PINNING, OPT_NO_XT, OPT_NO_SERIAL, OPT_NO_INCORE, OPT_CSV,
    OPT_TAIL, OPT_B_CHUNKS, OPT_TRACE
};

/* Library options shared by run and multiply (0: the library chooses). */
typedef struct {
    int64_t backend;
    int64_t device, device_mem, host_mem, block_rows, ring, streams, staging_threads, tail, b_chunks;
    int tf32;
    const char *trace; /* --trace FILE: the timeline of the (last) multiply */
} lib_opts_t;

#define LIB_LONG_OPTS                                                                                 \
    {"backend", required_argument, NULL, OPT_BACKEND},                                                \
    {"device-mem", required_argument, NULL, OPT_DEVICE_MEM},                                          \
    {"host-mem", required_argument, NULL, OPT_HOST_MEM},                                              \
    {"block-rows", required_argument, NULL, OPT_BLOCK_ROWS},                                          \
    {"ring", required_argument, NULL, OPT_RING},                                                      \
    {"streams", required_argument, NULL, OPT_STREAMS},                                                \
    {"staging-threads", required_argument, NULL, OPT_STAGING_THREADS},                                \
    {"tail", required_argument, NULL, OPT_TAIL},                                                      \
    {"b-chunks", required_argument, NULL, OPT_B_CHUNKS},                                              \
    {"trace", required_argument, NULL, OPT_TRACE},                                                    \
    {"tf32", no_argument, NULL, OPT_TF32}

/* getopt code c, if it is a library option, into *l: 1 when it was one, 0
 * when not, -1 on a bad value (message printed). */
static int lib_opt_parse(const char *cmd, int c, const char *optname, const char *arg, lib_opts_t *l)
{
    switch (c) {
    case OPT_BACKEND:
        if (strcasecmp(arg, "auto") == 0) l->backend = OOC_BACKEND_AUTO;
        else if (strcasecmp(arg, "cublas") == 0) l->backend = OOC_BACKEND_CUBLAS;
        else if (strcasecmp(arg, "custom") == 0) l->backend = OOC_BACKEND_CUSTOM;
        else if (strcasecmp(arg, "host") == 0) l->backend = OOC_BACKEND_HOST;
        else return usage_error(cmd, "--backend: '%s' is not auto, cublas, custom or host", arg), -1;
        return 1;
    case OPT_DEVICE: return parse_param(cmd, optname, arg, OOC_PARAM_DEVICE, 0, &l->device) ? -1 : 1;
    case OPT_DEVICE_MEM: return parse_param(cmd, optname, arg, OOC_PARAM_DEVICE_MEM, 1, &l->device_mem) ? -1 : 1;
    case OPT_HOST_MEM: return parse_param(cmd, optname, arg, OOC_PARAM_HOST_MEM, 1, &l->host_mem) ? -1 : 1;
    case OPT_BLOCK_ROWS: return parse_param(cmd, optname, arg, OOC_PARAM_BLOCK_ROWS, 0, &l->block_rows) ? -1 : 1;
    case OPT_RING: return parse_param(cmd, optname, arg, OOC_PARAM_RING_DEPTH, 0, &l->ring) ? -1 : 1;
    case OPT_STREAMS: return parse_param(cmd, optname, arg, OOC_PARAM_STREAMS, 0, &l->streams) ? -1 : 1;
    case OPT_STAGING_THREADS:
        return parse_param(cmd, optname, arg, OOC_PARAM_STAGING_THREADS, 0, &l->staging_threads) ? -1 : 1;
    case OPT_TAIL: return parse_param(cmd, optname, arg, OOC_PARAM_TAIL, 0, &l->tail) ? -1 : 1;
    case OPT_B_CHUNKS: return parse_param(cmd, optname, arg, OOC_PARAM_B_CHUNKS, 0, &l->b_chunks) ? -1 : 1;
    case OPT_TRACE: l->trace = arg; return 1;
    case OPT_TF32: l->tf32 = 1; return 1;
    default: return 0;
    }
}

/* Set a library option unless it is 0 (automatic). */
static ooc_status_t set_param(ooc_handle_t *h, ooc_param_t p, int64_t v)
{
    return v != 0 ? ooc_set(h, p, v) : OOC_SUCCESS;
}

/* Every library option onto the handle, before its backend opens. */
static ooc_status_t lib_opts_apply(ooc_handle_t *h, const lib_opts_t *l)
{
    ooc_status_t st;
    if ((st = ooc_set(h, OOC_PARAM_BACKEND, l->backend)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICE, l->device)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICE_MEM, l->device_mem)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_HOST_MEM, l->host_mem)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_BLOCK_ROWS, l->block_rows)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_RING_DEPTH, l->ring)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STREAMS, l->streams)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STAGING_THREADS, l->staging_threads)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_TAIL, l->tail)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_B_CHUNKS, l->b_chunks)) != OOC_SUCCESS ||
        (st = ooc_set_trace(h, l->trace)) != OOC_SUCCESS ||
        (st = ooc_set(h, OOC_PARAM_MATH_MODE, l->tf32 ? OOC_MATH_TF32 : OOC_MATH_STRICT)) != OOC_SUCCESS)
        return st;
    return OOC_SUCCESS;
}

/* The message for getopt_long's ':' (missing value) and '?' (unknown) returns;
 * `shorts` lists the command's short options. Returns RC_USAGE. */
static int getopt_failure(const char *cmd, int c, char **argv, const char *shorts)
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
/* Random matrices: splitmix64, each element a pure function of (seed,       */
/* matrix, index), so that a fill can later be split across threads.        */

#define SPLITMIX_GAMMA UINT64_C(0x9e3779b97f4a7c15)

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The stream of matrix `which` (1: A, 2: B, 3: C) for this seed. */
static uint64_t stream_key(uint64_t seed, unsigned which)
{
    return mix64(seed + SPLITMIX_GAMMA) ^ mix64((uint64_t)which * SPLITMIX_GAMMA + 0x5851f42d4c957f2dULL);
}

/* The q-th output of splitmix64 started at `key`. */
static uint64_t rand_at(uint64_t key, uint64_t q) { return mix64(key + (q + 1) * SPLITMIX_GAMMA); }

/* count elements (complex: 2*count reals) uniform in [-1, 1), never 0. */
typedef struct {
    ooc_dtype_t t;
    void *x;
    uint64_t key;
    size_t q0, q1; /* reals [q0, q1) */
    int nan;       /* fill with NaN instead */
} fill_part_t;

/* The q-th real of the stream, uniform in [-1, 1), never 0. */
static inline double rand_double(uint64_t key, uint64_t q)
{
    double v = (double)(rand_at(key, q) >> 11) * 0x1.0p-52 - 1.0;
    return v != 0.0 ? v : 0x1.0p-53;
}

static inline float rand_float(uint64_t key, uint64_t q)
{
    float v = (float)(rand_at(key, q) >> 40) * 0x1.0p-23f - 1.0f;
    return v != 0.0f ? v : 0x1.0p-24f;
}

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

static void fill_random(ooc_dtype_t t, void *x, size_t count, uint64_t seed, unsigned which)
{
    fill_threaded(t, x, count, seed, which, 0);
}

/* NaN everywhere (all bits set), on all cores: a C that must not be read. */
static void fill_nan(ooc_dtype_t t, void *x, size_t count) { fill_threaded(t, x, count, 0, 0, 1); }

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
/* The floor of docs/PERFORMANCE.md, shared by run and multiply              */

typedef struct {
    double bw_h2d, bw_d2h; /* GB/s; <= 0 before floor_measure(): measure it */
    double rate;           /* in-core TFLOP/s; likewise */
    int measured_bw, measured_rate;
    int64_t pm, pn, pk;    /* the in-core shape measured */
    int have;              /* all three figures known: the times below are valid */
    double t_in, t_out, t_math, floor_s;
} floor_t;

/*
 * Measure what is not given, on the handle's backend (open it first: call
 * after the multiply): pinned copies of 1 GiB each way (64 MiB on the host
 * backend), and the in-core rate on min(dim, 16384) (1024 on the host).
 * A failed measurement leaves the figure unknown, with a warning unless quiet.
 */
static void floor_measure(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet,
                          floor_t *f)
{
    if (strcmp(ooc_backend_name(h), "none") == 0) { /* not open yet: a tiny allocation opens it */
        void *p = NULL;
        if (ooc_host_alloc(h, 64, &p) == OOC_SUCCESS) (void)ooc_host_free(h, p);
    }
    int gpu = strcmp(ooc_backend_name(h), "host") != 0;
    int64_t cap = gpu ? 16384 : 1024;
    ooc_status_t st;
    f->pm = m < cap ? m : cap;
    f->pn = n < cap ? n : cap;
    f->pk = k < cap ? k : cap;
    if (f->bw_h2d <= 0 || f->bw_d2h <= 0) {
        double h2d, d2h;
        st = ooc_measure_bandwidth(h, gpu ? (size_t)1 << 30 : (size_t)64 << 20, &h2d, &d2h);
        if (st == OOC_SUCCESS) {
            if (f->bw_h2d <= 0) f->bw_h2d = h2d / 1e9;
            if (f->bw_d2h <= 0) f->bw_d2h = d2h / 1e9;
            f->measured_bw = 1;
        } else if (!quiet) {
            fprintf(stderr, "%s: warning: cannot measure bandwidth: %s: %s\n", progname, ooc_status_string(st),
                    ooc_last_error(h));
        }
    }
    if (f->rate <= 0 && f->pm > 0 && f->pn > 0 && f->pk > 0) {
        double rate;
        st = ooc_measure_gemm_rate(h, t, f->pm, f->pn, f->pk, 3, &rate);
        if (st == OOC_SUCCESS) {
            f->rate = rate / 1e12;
            f->measured_rate = 1;
        } else if (!quiet) {
            fprintf(stderr, "%s: warning: cannot measure the in-core rate: %s: %s\n", progname,
                    ooc_status_string(st), ooc_last_error(h));
        }
    }
}

/* floor = max(T_in, T_out, T_math) for m x n x k (C0 read when with_c0). */
static void floor_compute(floor_t *f, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int with_c0)
{
    f->have = f->bw_h2d > 0 && f->bw_d2h > 0 && f->rate > 0;
    if (!f->have) return;
    double s = (double)dtype_size(t), mn = (double)m * (double)n;
    double flops = (dtype_complex(t) ? 8.0 : 2.0) * mn * (double)k;
    double in_elems = (double)m * (double)k + (double)k * (double)n + (with_c0 ? mn : 0.0);
    f->t_in = s * in_elems / (f->bw_h2d * 1e9);
    f->t_out = s * mn / (f->bw_d2h * 1e9);
    f->t_math = flops / (f->rate * 1e12);
    f->floor_s = f->t_in > f->t_out ? f->t_in : f->t_out;
    if (f->t_math > f->floor_s) f->floor_s = f->t_math;
}

/* The "rates:" and "floor:" lines (or "floor: n/a"), floor/time for `time`
 * (none when time < 0). */
static void floor_print(FILE *out, const floor_t *f, ooc_dtype_t t, double time)
{
    if (!f->have) {
        fprintf(out, "floor: n/a\n");
        return;
    }
    char dt = dtype_letter(t);
    fprintf(out, "rates: H2D %.1f GB/s, D2H %.1f GB/s (%s); in-core %cGEMM %lldx%lldx%lld %.3g TFLOP/s (%s)\n",
            f->bw_h2d, f->bw_d2h, f->measured_bw ? "measured" : "given", dt - 'a' + 'A', (long long)f->pm,
            (long long)f->pn, (long long)f->pk, f->rate, f->measured_rate ? "measured" : "given");
    fprintf(out, "floor: %.3g s (in %.3g, out %.3g, math %.3g)", f->floor_s, f->t_in, f->t_out, f->t_math);
    if (time >= 0) fprintf(out, "  floor/time: %.2f", time > 0 ? f->floor_s / time : INFINITY);
    fputc('\n', out);
}

/* The "backend: ... plan: ..." line of the library's stats. */
static void print_plan(FILE *out, const char *backend, const ooc_stats_t *st)
{
    char b1[32], b2[32];
    if (st->panels == 0) /* alpha == 0: C = beta*C, nothing streamed */
        fprintf(out, "backend: %s   plan: none (alpha = 0: nothing to multiply)\n", backend);
    else
        fprintf(out,
                "backend: %s   plan: %sblock rows %lld, panel %lld x %lld (%lld panels, %lld blocks each), "
                "ring %d, streams %d, staged A/C: %s/%s, device %s, staging %s\n",
                backend, st->a_resident ? "op(A) resident, op(B) streamed (C^T = op(B)^T op(A)^T): " : "",
                (long long)st->block_rows, (long long)st->panel_depth, (long long)st->panel_cols,
                (long long)st->panels, (long long)st->blocks, (int)st->ring_depth, (int)st->streams,
                st->staged_a ? "yes" : "no", st->staged_c ? "yes" : "no",
                human_bytes(st->device_bytes, b1, sizeof b1), human_bytes(st->host_bytes, b2, sizeof b2));
    if (st->traced)
        fprintf(out,
                "timeline: %.3g s from first to last device op; busy: H2D %.3g s, compute %.3g s, D2H %.3g s, "
                "reader %.3g s, writer %.3g s; overlap efficiency %.2f\n",
                st->trace_wall, st->busy_h2d, st->busy_compute, st->busy_d2h, st->busy_read, st->busy_write,
                st->overlap_efficiency);
}

/* ------------------------------------------------------------------------ */
/* oocgemm run                                                               */

typedef struct {
    int64_t m, n, k;
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    double alpha, beta;
    int pinned;
    lib_opts_t lib;
    int64_t repeat;
    uint64_t seed;
    int64_t check_rows; /* 0: no check */
    double bw_h2d, bw_d2h, rate; /* 0: not given: measured in the same run */
    int no_floor;
    int quiet, json;
} run_opts_t;

/* One stored matrix: op(X) is rows x cols. */
typedef struct {
    void *p;
    int64_t ld;    /* leading dimension: stored rows (col-major) or columns (row-major) */
    size_t elems;  /* elements stored */
    size_t bytes;
} matrix_t;

static void run_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm run -m M -n N -k K [OPTIONS]\n"
            "\n"
            "Multiply random in-memory matrices with libooc_gemm,\n"
            "  C = alpha*op(A)*op(B) + beta*C,  op(A) m x k, op(B) k x n, C m x n,\n"
            "time it, compare the time with the floor, and check C against OpenBLAS.\n"
            "A, B (and C when beta != 0) hold uniform random values in [-1, 1) from a\n"
            "seeded splitmix64 stream; with beta = 0, C starts as NaN (it must not be\n"
            "read). Leading dimensions are exactly the stored rows (col-major) or\n"
            "columns (row-major).\n"
            "\n"
            "Problem:\n"
            "  -m M, -n N, -k K      sizes (required; positive integers)\n"
            "  --dtype s|d|c|z       float, double, complex float, complex double\n"
            "                        (default d)\n"
            "  --layout col|row      storage order of A, B and C (default col)\n"
            "  --transa N|T|C        op(A): A, A^T or A^H (conjugate transpose)\n"
            "                        (default N)\n"
            "  --transb N|T|C        op(B), likewise (default N)\n"
            "  --alpha X, --beta X   real scalars, (X, 0) for complex types\n"
            "                        (default 1 and 0)\n"
            "  --memory pinned|pageable\n"
            "                        A, B and C from ooc_host_alloc (pinned), or from\n"
            "                        aligned_alloc (pageable: the library stages them)\n"
            "                        (default pinned)\n"
            "  --seed S              seed of the random matrices (default 42)\n"
            "\n"
            "Library options (absent or 0: the library chooses):\n"
            "  --backend auto|cublas|custom|host\n"
            "                        (default auto: cublas when a GPU is present)\n"
            "  --device N            CUDA device index\n"
            "  --device-mem BYTES    device-memory budget\n"
            "  --host-mem BYTES      pinned staging budget (pageable operands)\n"
            "  --block-rows N        rows of op(A) per streamed block\n"
            "  --ring N              device buffers in the ring\n"
            "  --streams N           streams used by the pipeline\n"
            "  --staging-threads N   host threads copying pageable memory\n"
            "  --tf32                allow TF32 tensor cores for s and c (CUDA only)\n"
            "  --tail T              shrinking last blocks: 1 none, T>1: T-1 of them\n"
            "  --b-chunks Q          op(B) uploaded in Q chunks (1: in one piece)\n"
            "  --trace FILE          write the timeline of the (last timed) multiply to\n"
            "                        FILE as Chrome trace JSON (open it in Perfetto; draw\n"
            "                        it with tools/trace_plot.py); the overlap efficiency\n"
            "                        and each engine's busy time are printed\n"
            "  BYTES: an integer with an optional binary suffix K, M, G or T\n"
            "  (64M = 64 MiB).\n"
            "\n"
            "Timing and the floor:\n"
            "  --repeat R            timed runs (default 1). With R > 1 an untimed\n"
            "                        warm-up run comes first, and the best and median\n"
            "                        times are shown. When beta != 0, C is refilled\n"
            "                        (untimed) before each run.\n"
            "  The floor (docs/PERFORMANCE.md) is computed from figures measured in\n"
            "  the same run, after the timed runs: pinned copies of 1 GiB each way\n"
            "  (64 MiB on the host backend), and the in-core multiply rate of the\n"
            "  backend on min(m,C) x min(n,C) x min(k,C), C = 16384 (1024 on host).\n"
            "  --bw-h2d GB/s         use this host-to-device bandwidth instead\n"
            "  --bw-d2h GB/s         use this device-to-host bandwidth instead\n"
            "  --rate TFLOP/s        use this in-core multiply rate instead\n"
            "  --no-floor            do not measure or show the floor\n"
            "  With s the element size:\n"
            "    T_in   = s*(m*k + k*n [+ m*n if beta != 0]) / bw-h2d\n"
            "    T_out  = s*m*n / bw-d2h\n"
            "    T_math = flops / rate     (flops = 2mnk; complex: 8mnk)\n"
            "    floor  = max(T_in, T_out, T_math)\n"
            "  and floor/time for the best time (1.00 = at the limit). GB = 1e9 bytes.\n"
            "\n"
            "Check:\n"
            "  --check-rows N        rows of C checked (default 64), spread evenly over\n"
            "                        C, first and last included; 0: no check\n"
            "  --no-check            skip the check\n"
            "  The checked rows are recomputed with OpenBLAS (cblas_?gemm on the\n"
            "  gathered rows of op(A)) from the same A, B and initial C0. The error\n"
            "  shown is the largest, over the checked elements (i, j), of\n"
            "    |C[i,j] - ref[i,j]| / (|alpha| * sum_l |op(A)[i,l]| * b_l\n"
            "                           + |beta| * |C0[i,j]|),   b_l = max_j |op(B)[l,j]|\n"
            "  i.e. the error relative to a bound on the terms summed (|z|: modulus).\n"
            "  It passes when <= 4*k*eps, eps = FLT_EPSILON (s, c) or DBL_EPSILON\n"
            "  (d, z); with --tf32 (s, c) the tolerance adds 2^-7 for the rounding of\n"
            "  the inputs to TF32.\n"
            "\n"
            "Output:\n"
            "  -q, --quiet           print nothing but errors\n"
            "  --json                print one JSON object: sizes, options, backend,\n"
            "                        times, rate, floor, check, the library's stats\n"
            "  -h, --help            this help\n"
            "\n");
    print_exit_codes(f);
}

static const struct option run_long_opts[] = {
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"transa", required_argument, NULL, OPT_TRANSA},
    {"transb", required_argument, NULL, OPT_TRANSB},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"device", required_argument, NULL, OPT_DEVICE},
    LIB_LONG_OPTS,
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"check-rows", required_argument, NULL, OPT_CHECK_ROWS},
    {"no-check", no_argument, NULL, OPT_NO_CHECK},
    {"bw-h2d", required_argument, NULL, OPT_BW_H2D},
    {"bw-d2h", required_argument, NULL, OPT_BW_D2H},
    {"rate", required_argument, NULL, OPT_RATE},
    {"no-floor", no_argument, NULL, OPT_NO_FLOOR},
    {"quiet", no_argument, NULL, 'q'},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parse `oocgemm run` options into *o. Returns RC_OK, RC_USAGE, or -1 for
 * --help (already printed). */
static int run_parse(int argc, char **argv, run_opts_t *o)
{
    const char *cmd = "run";
    int have_m = 0, have_n = 0, have_k = 0;
    int64_t v;

    memset(o, 0, sizeof *o);
    o->dtype = OOC_R64;
    o->layout = OOC_COL_MAJOR;
    o->ta = o->tb = OOC_OP_N;
    o->alpha = 1.0;
    o->beta = 0.0;
    o->pinned = 1;
    o->lib.backend = OOC_BACKEND_AUTO;
    o->repeat = 1;
    o->seed = 42;
    o->check_rows = 64;

    opterr = 0;
    optind = 1;
    for (;;) {
        int longind = -1;
        int c = getopt_long(argc, argv, ":m:n:k:qh", run_long_opts, &longind);
        if (c == -1) break;
        char optname[64] = "";
        if (longind >= 0) snprintf(optname, sizeof optname, "--%s", run_long_opts[longind].name);
        int lib = lib_opt_parse(cmd, c, optname, optarg, &o->lib);
        if (lib < 0) return RC_USAGE;
        if (lib > 0) continue;
        switch (c) {
        case 'm':
            if (parse_int(cmd, "-m", optarg, 1, INT64_MAX, &o->m)) return RC_USAGE;
            have_m = 1;
            break;
        case 'n':
            if (parse_int(cmd, "-n", optarg, 1, INT64_MAX, &o->n)) return RC_USAGE;
            have_n = 1;
            break;
        case 'k':
            if (parse_int(cmd, "-k", optarg, 1, INT64_MAX, &o->k)) return RC_USAGE;
            have_k = 1;
            break;
        case OPT_DTYPE:
            if (strcasecmp(optarg, "s") == 0) o->dtype = OOC_R32;
            else if (strcasecmp(optarg, "d") == 0) o->dtype = OOC_R64;
            else if (strcasecmp(optarg, "c") == 0) o->dtype = OOC_C32;
            else if (strcasecmp(optarg, "z") == 0) o->dtype = OOC_C64;
            else return usage_error(cmd, "--dtype: '%s' is not s, d, c or z", optarg);
            break;
        case OPT_LAYOUT:
            if (strcasecmp(optarg, "col") == 0) o->layout = OOC_COL_MAJOR;
            else if (strcasecmp(optarg, "row") == 0) o->layout = OOC_ROW_MAJOR;
            else return usage_error(cmd, "--layout: '%s' is not col or row", optarg);
            break;
        case OPT_TRANSA:
            if (parse_op(cmd, "--transa", optarg, &o->ta)) return RC_USAGE;
            break;
        case OPT_TRANSB:
            if (parse_op(cmd, "--transb", optarg, &o->tb)) return RC_USAGE;
            break;
        case OPT_ALPHA:
            if (parse_real(cmd, "--alpha", optarg, 0, &o->alpha)) return RC_USAGE;
            break;
        case OPT_BETA:
            if (parse_real(cmd, "--beta", optarg, 0, &o->beta)) return RC_USAGE;
            break;
        case OPT_MEMORY:
            if (strcasecmp(optarg, "pinned") == 0) o->pinned = 1;
            else if (strcasecmp(optarg, "pageable") == 0) o->pinned = 0;
            else return usage_error(cmd, "--memory: '%s' is not pinned or pageable", optarg);
            break;
        case OPT_REPEAT:
            if (parse_int(cmd, "--repeat", optarg, 1, 1000000, &o->repeat)) return RC_USAGE;
            break;
        case OPT_SEED:
            if (parse_seed(cmd, optarg, &o->seed)) return RC_USAGE;
            break;
        case OPT_CHECK_ROWS:
            if (parse_int(cmd, "--check-rows", optarg, 0, INT32_MAX, &v)) return RC_USAGE;
            o->check_rows = v;
            break;
        case OPT_NO_CHECK: o->check_rows = 0; break;
        case OPT_NO_FLOOR: o->no_floor = 1; break;
        case OPT_BW_H2D:
            if (parse_real(cmd, "--bw-h2d", optarg, 1, &o->bw_h2d)) return RC_USAGE;
            break;
        case OPT_BW_D2H:
            if (parse_real(cmd, "--bw-d2h", optarg, 1, &o->bw_d2h)) return RC_USAGE;
            break;
        case OPT_RATE:
            if (parse_real(cmd, "--rate", optarg, 1, &o->rate)) return RC_USAGE;
            break;
        case 'q': o->quiet = 1; break;
        case OPT_JSON: o->json = 1; break;
        case 'h': run_usage(stdout); return -1;
        default: return getopt_failure(cmd, c, argv, "mnkqh");
        }
    }
    if (optind < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!have_m) return usage_error(cmd, "-m M is required (rows of op(A) and C)");
    if (!have_n) return usage_error(cmd, "-n N is required (columns of op(B) and C)");
    if (!have_k) return usage_error(cmd, "-k K is required (columns of op(A), rows of op(B))");
    return RC_OK;
}

/* Stored size of op(X) (rows x cols) in `layout`, with overflow checks. */
static int matrix_shape(const char *cmd, const char *name, const run_opts_t *o, ooc_op_t op, int64_t rows,
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
static int matrix_alloc(ooc_handle_t *h, int pinned, matrix_t *x, const char *name, char *err, size_t len)
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

static void matrix_free(ooc_handle_t *h, int pinned, matrix_t *x)
{
    if (x->p == NULL) return;
    if (pinned) (void)ooc_host_free(h, x->p);
    else free(x->p);
    x->p = NULL;
}

/* The checked rows: r distinct rows spread evenly over 0..m-1, first and last included. */
static void pick_rows(int64_t m, int64_t r, int64_t *rows)
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
static void save_rows(const run_opts_t *o, const void *C, const int64_t *rows, int64_t r, void *c0)
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

/* The reference for the check: the r checked rows of C recomputed with
 * OpenBLAS, and the bound on the terms summed for each row. */
typedef struct {
    void *R;      /* r x n, layout order, exact leading dimension */
    double *arow; /* |alpha| * sum_l |op(A)[i,l]| * b_l, b_l = max_j |op(B)[l,j]| */
} check_ref_t;

static void check_ref_free(check_ref_t *ref)
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
static int check_ref(const run_opts_t *o, const matrix_t *A, const matrix_t *B, const void *c0,
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
static double check_compare(const run_opts_t *o, const check_ref_t *ref, const matrix_t *C, const void *c0,
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
static int check_c(const run_opts_t *o, const matrix_t *A, const matrix_t *B, const matrix_t *C,
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
static double check_tolerance(const run_opts_t *o)
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
static void times_summary(double *times, int64_t n, double *best, double *median)
{
    qsort(times, (size_t)n, sizeof *times, cmp_double);
    *best = times[0];
    *median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

/* A JSON number, or null when not finite / not available. */
static void json_num(FILE *f, const char *key, double v, int available)
{
    if (available && isfinite(v)) fprintf(f, ",\"%s\":%.9g", key, v);
    else fprintf(f, ",\"%s\":null", key);
}

static int cmd_run(int argc, char **argv)
{
    run_opts_t o;
    int rc = run_parse(argc, argv, &o);
    if (rc < 0) return RC_OK; /* --help */
    if (rc != RC_OK) return rc;

    ooc_dtype_t t = o.dtype;
    size_t e = dtype_size(t);
    int cplx = dtype_complex(t);
    matrix_t A, B, C;
    if (matrix_shape("run", "A", &o, o.ta, o.m, o.k, &A) || matrix_shape("run", "B", &o, o.tb, o.k, o.n, &B) ||
        matrix_shape("run", "C", &o, OOC_OP_N, o.m, o.n, &C))
        return RC_USAGE;

    int64_t r = o.check_rows < o.m ? o.check_rows : o.m;
    size_t c0_bytes = 0;
    if (r > 0 && (__builtin_mul_overflow((size_t)r, (size_t)o.n, &c0_bytes) ||
                  __builtin_mul_overflow(c0_bytes, e, &c0_bytes)))
        return usage_error("run", "--check-rows %lld: the checked rows of C are too large", (long long)r);

    ooc_handle_t *h = NULL;
    int64_t *rows = NULL;
    void *c0 = NULL;
    double *times = NULL;
    ooc_status_t st = ooc_create(&h);
    if (st != OOC_SUCCESS) return library_error(NULL, st);

    /* every option before the first allocation: ooc_host_alloc opens the backend */
    if ((st = lib_opts_apply(h, &o.lib)) != OOC_SUCCESS) {
        rc = library_error(h, st);
        goto out;
    }

    char dt = dtype_letter(t);
    const char *layout_name = o.layout == OOC_COL_MAJOR ? "col" : "row";
    const char *mem_name = o.pinned ? "pinned" : "pageable";
    if (!o.quiet && !o.json) {
        printf("oocgemm %s: %cGEMM %s-major %c%c m=%lld n=%lld k=%lld alpha=%g beta=%g, A/B/C %s\n",
               PACKAGE_VERSION, dt - 'a' + 'A', layout_name, op_letter(o.ta), op_letter(o.tb),
               (long long)o.m, (long long)o.n, (long long)o.k, o.alpha, o.beta, mem_name);
        fflush(stdout);
    }

    if ((rc = matrix_alloc(h, o.pinned, &A, "A", NULL, 0)) != RC_OK ||
        (rc = matrix_alloc(h, o.pinned, &B, "B", NULL, 0)) != RC_OK ||
        (rc = matrix_alloc(h, o.pinned, &C, "C", NULL, 0)) != RC_OK)
        goto out;
    rows = r > 0 ? malloc((size_t)r * sizeof *rows) : NULL;
    c0 = r > 0 && o.beta != 0.0 ? malloc(c0_bytes) : NULL;
    times = malloc((size_t)o.repeat * sizeof *times);
    if ((r > 0 && !rows) || (r > 0 && o.beta != 0.0 && !c0) || !times) {
        fprintf(stderr, "%s: out of host memory\n", progname);
        rc = RC_RUNTIME;
        goto out;
    }

    fill_random(t, A.p, A.elems, o.seed, 1);
    fill_random(t, B.p, B.elems, o.seed, 2);
    if (o.beta != 0.0) fill_random(t, C.p, C.elems, o.seed, 3);
    else fill_nan(t, C.p, C.elems); /* NaN: beta = 0 must not read C */
    if (r > 0) {
        pick_rows(o.m, r, rows);
        if (c0) save_rows(&o, C.p, rows, r, c0);
    }

    double alpha[2] = {o.alpha, 0.0}, beta[2] = {o.beta, 0.0};
    float alpha_f[2] = {(float)o.alpha, 0.0f}, beta_f[2] = {(float)o.beta, 0.0f};
    const void *pa = dtype_double(t) ? (const void *)alpha : (const void *)alpha_f;
    const void *pb = dtype_double(t) ? (const void *)beta : (const void *)beta_f;
    int64_t runs = o.repeat > 1 ? o.repeat + 1 : 1;
    for (int64_t it = 0; it < runs; it++) {
        if (it > 0 && o.beta != 0.0) fill_random(t, C.p, C.elems, o.seed, 3); /* same C0 each run */
        double t0 = now_seconds();
        st = ooc_gemm(h, t, o.layout, o.ta, o.tb, o.m, o.n, o.k, pa, A.p, A.ld, B.p, B.ld, pb, C.p, C.ld);
        double t1 = now_seconds();
        if (st != OOC_SUCCESS) {
            rc = library_error(h, st);
            goto out;
        }
        if (runs > 1 && it == 0) continue; /* warm-up */
        times[runs > 1 ? it - 1 : it] = t1 - t0;
    }
    ooc_stats_t stats;
    if ((st = ooc_get_stats(h, &stats)) != OOC_SUCCESS) {
        rc = library_error(h, st);
        goto out;
    }

    double best, median;
    times_summary(times, o.repeat, &best, &median);
    double flops = (cplx ? 8.0 : 2.0) * (double)o.m * (double)o.n * (double)o.k;
    double tflops = best > 0 ? flops / best / 1e12 : INFINITY;

    /* what the floor is made of, measured now unless given */
    floor_t fl = {.bw_h2d = o.bw_h2d, .bw_d2h = o.bw_d2h, .rate = o.rate};
    if (!o.no_floor) {
        floor_measure(h, t, o.m, o.n, o.k, o.quiet, &fl);
        floor_compute(&fl, t, o.m, o.n, o.k, o.beta != 0.0);
    }
    int have_floor = fl.have;
    double floor_ratio = have_floor ? (best > 0 ? fl.floor_s / best : INFINITY) : 0.0;

    double tol = check_tolerance(&o), max_err = 0.0;
    int checked = 0, passed = 1;
    if (r > 0) {
        int crc = check_c(&o, &A, &B, &C, c0, rows, r, &max_err);
        if (crc == RC_RUNTIME) {
            rc = crc;
            goto out;
        }
        if (crc == RC_OK) {
            checked = 1;
            passed = max_err <= tol;
        } else if (!o.quiet) {
            fprintf(stderr, "%s: check skipped: n or k exceeds the BLAS integer range\n", progname);
        }
    }

    const char *backend = ooc_backend_name(h);
    if (o.json) {
        printf("{\"version\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"dtype\":\"%c\",\"layout\":\"%s\","
               "\"transa\":\"%c\",\"transb\":\"%c\",\"alpha\":%.17g,\"beta\":%.17g,\"memory\":\"%s\","
               "\"backend\":\"%s\",\"tf32\":%s,\"repeat\":%lld",
               PACKAGE_VERSION, (long long)o.m, (long long)o.n, (long long)o.k, dt, layout_name,
               op_letter(o.ta), op_letter(o.tb), o.alpha, o.beta, mem_name, backend,
               o.lib.tf32 ? "true" : "false", (long long)o.repeat);
        json_num(stdout, "seconds", best, 1);
        json_num(stdout, "median_seconds", median, 1);
        json_num(stdout, "tflops", tflops, 1);
        json_num(stdout, "bw_h2d_gbps", fl.bw_h2d, have_floor);
        json_num(stdout, "bw_d2h_gbps", fl.bw_d2h, have_floor);
        json_num(stdout, "incore_tflops", fl.rate, have_floor);
        json_num(stdout, "floor_s", fl.floor_s, have_floor);
        json_num(stdout, "floor_in_s", fl.t_in, have_floor);
        json_num(stdout, "floor_out_s", fl.t_out, have_floor);
        json_num(stdout, "floor_math_s", fl.t_math, have_floor);
        json_num(stdout, "floor_over_time", floor_ratio, have_floor);
        printf(",\"check_rows\":%lld", (long long)(checked ? r : 0));
        json_num(stdout, "max_rel_err", max_err, checked);
        json_num(stdout, "check_tolerance", tol, checked);
        printf(",\"passed\":%s", checked ? (passed ? "true" : "false") : "null");
        printf(",\"block_rows\":%lld,\"panel_cols\":%lld,\"panel_depth\":%lld,\"blocks\":%lld,\"panels\":%lld,"
               "\"ring_depth\":%d,\"streams\":%d,\"staged_a\":%d,\"staged_c\":%d,\"device_bytes\":%" PRIu64
               ",\"host_bytes\":%" PRIu64 ",\"bytes_h2d\":%" PRIu64 ",\"bytes_d2h\":%" PRIu64,
               (long long)stats.block_rows, (long long)stats.panel_cols, (long long)stats.panel_depth,
               (long long)stats.blocks, (long long)stats.panels, (int)stats.ring_depth, (int)stats.streams,
               (int)stats.staged_a, (int)stats.staged_c, stats.device_bytes, stats.host_bytes,
               stats.bytes_h2d, stats.bytes_d2h);
        json_num(stdout, "stats_seconds", stats.seconds, 1);
        printf("}\n");
    } else if (!o.quiet) {
        print_plan(stdout, backend, &stats);
        if (o.repeat > 1)
            printf("time: %.3g s (best of %lld; median %.3g s)", best, (long long)o.repeat, median);
        else
            printf("time: %.3g s (1 run)", best);
        if (tflops >= 1.0 || !isfinite(tflops)) printf("   rate: %.3g TFLOP/s", tflops);
        else printf("   rate: %.3g GFLOP/s", tflops * 1e3);
        printf("   moved: H2D %.3g GB, D2H %.3g GB\n", (double)stats.bytes_h2d / 1e9,
               (double)stats.bytes_d2h / 1e9);
        floor_print(stdout, &fl, t, best);
        if (checked)
            printf("check: %lld row%s of C against OpenBLAS: max relative error %.2g (tolerance %.2g): %s\n",
                   (long long)r, r == 1 ? "" : "s", max_err, tol, passed ? "PASS" : "FAIL");
        else
            printf("check: skipped\n");
    }
    if (checked && !passed) {
        if (o.quiet || o.json)
            fprintf(stderr, "%s: check failed: max relative error %.2g exceeds the tolerance %.2g\n", progname,
                    max_err, tol);
        rc = RC_CHECK_FAILED;
    } else {
        rc = RC_OK;
    }

out:
    free(times);
    free(c0);
    free(rows);
    matrix_free(h, o.pinned, &C);
    matrix_free(h, o.pinned, &B);
    matrix_free(h, o.pinned, &A);
    ooc_destroy(h);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Matrix files on the command line                                          */

/* Defaults for raw operands: --rows, --cols, --dtype, --order. */
typedef struct {
    int64_t rows, cols; /* 0: not given */
    ooc_dtype_t dtype;
    ooc_layout_t layout;
} raw_defaults_t;

/* One operand as given: PATH, or PATH:ROWSxCOLS[:DTYPE[:ORDER]] for raw data. */
typedef struct {
    const char *name;     /* "A", "B", "C0", "C" */
    const char *arg;      /* as given */
    char *path;           /* allocated */
    int shaped;           /* the suffix gave a raw shape (spec holds it) */
    ooc_file_spec_t spec; /* once open: what the file holds */
    ooc_file_t *file;
} operand_t;

static void operand_free(operand_t *op)
{
    if (op->file) ooc_file_close(op->file, 0);
    op->file = NULL;
    free(op->path);
    op->path = NULL;
}

/* "ROWSxCOLS", both positive. */
static int parse_shape(const char *s, int64_t *rows, int64_t *cols)
{
    char *end;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    long long r = strtoll(s, &end, 10);
    if (errno || (*end != 'x' && *end != 'X') || r < 1) return -1;
    s = end + 1;
    if (*s < '0' || *s > '9') return -1;
    long long c = strtoll(s, &end, 10);
    if (errno || *end != '\0' || c < 1) return -1;
    *rows = r;
    *cols = c;
    return 0;
}

/*
 * Split a raw-shape suffix off an operand: the last one, two or three
 * ':'-separated fields are ROWSxCOLS[:DTYPE[:ORDER]] when the first of them
 * is a shape; missing fields come from the defaults (--dtype, --order; else
 * d and C). Without such a suffix the whole argument is the path.
 */
static int operand_parse(const char *cmd, const char *name, const char *arg, const raw_defaults_t *d,
                         operand_t *op)
{
    memset(op, 0, sizeof *op);
    op->name = name;
    op->arg = arg;
    size_t len = strlen(arg);
    for (int nf = 3; nf >= 1; nf--) {
        const char *colon = NULL;
        int found = 0;
        for (const char *p = arg + len; p > arg;)
            if (*--p == ':' && ++found == nf) {
                colon = p;
                break;
            }
        if (colon == NULL) continue;
        char buf[128];
        if (strlen(colon + 1) >= sizeof buf) continue;
        strcpy(buf, colon + 1);
        char *field[3] = {buf, NULL, NULL};
        for (int i = 1; i < nf; i++) {
            char *c = strchr(field[i - 1], ':');
            *c = '\0';
            field[i] = c + 1;
        }
        int64_t rows, cols;
        if (parse_shape(field[0], &rows, &cols)) continue;
        ooc_dtype_t t = d->dtype;
        ooc_layout_t l = d->layout;
        if (nf >= 2 && dtype_parse(field[1], &t))
            return usage_error(cmd, "%s '%s': '%s' is not an element type (s, d, c, z, f4, f8, c8, c16)", name,
                               arg, field[1]);
        if (nf >= 3 && order_parse(field[2], &l))
            return usage_error(cmd, "%s '%s': '%s' is not a storage order (C or F)", name, arg, field[2]);
        if (colon == arg) return usage_error(cmd, "%s '%s': no file name before the shape", name, arg);
        op->path = strndup(arg, (size_t)(colon - arg));
        op->shaped = 1;
        op->spec = (ooc_file_spec_t){OOC_FORMAT_RAW, rows, cols, t, l};
        break;
    }
    if (!op->shaped) {
        if (*arg == '\0') return usage_error(cmd, "%s: empty file name", name);
        op->path = strdup(arg);
    }
    if (op->path == NULL) return fail(RC_RUNTIME, "out of host memory");
    return RC_OK;
}

/*
 * Open an operand for reading: raw with its suffix's shape; else .npy when
 * the file starts with NumPy's magic; else raw with --rows/--cols when both
 * were given; else an error saying how to give the shape.
 */
static int operand_open(ooc_handle_t *h, operand_t *op, const raw_defaults_t *d)
{
    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "%s (%s)", op->name, op->path);
    ooc_file_spec_t spec;
    if (op->shaped) {
        spec = op->spec;
    } else {
        memset(&spec, 0, sizeof spec);
        spec.format = OOC_FORMAT_AUTO; /* unreadable: the library says why */
        FILE *f = fopen(op->path, "rb");
        if (f) {
            unsigned char magic[6];
            size_t got = fread(magic, 1, sizeof magic, f);
            int err = ferror(f);
            fclose(f);
            if (!err && (got < sizeof magic || memcmp(magic, "\x93NUMPY", 6) != 0)) {
                if (d->rows <= 0 || d->cols <= 0)
                    return fail(RC_INPUT,
                                "%s: not a .npy file (no NumPy magic); for raw data give its shape as "
                                "%s:ROWSxCOLS:DTYPE:ORDER (or --rows and --cols)",
                                what, op->path);
                spec = (ooc_file_spec_t){OOC_FORMAT_RAW, d->rows, d->cols, d->dtype, d->layout};
            }
        }
    }
    ooc_status_t st = ooc_file_open(h, op->path, &spec, &op->file);
    if (st != OOC_SUCCESS) {
        op->file = NULL;
        return lib_fail(h, st, AT_INPUT, NULL, NULL, what);
    }
    if ((st = ooc_file_describe(op->file, &op->spec)) != OOC_SUCCESS) return lib_fail(h, st, AT_INPUT, NULL, NULL, what);
    return RC_OK;
}

/* "100 x 50 float64, C order" */
static const char *describe_spec(const ooc_file_spec_t *s, char *buf, size_t len)
{
    snprintf(buf, len, "%lld x %lld %s, %s order%s", (long long)s->rows, (long long)s->cols, dtype_name(s->dtype),
             order_name(s->layout), s->format == OOC_FORMAT_RAW ? ", raw" : "");
    return buf;
}

/* Rows and columns of op(X) for the stored spec. */
static void op_shape(const ooc_file_spec_t *s, ooc_op_t op, int64_t *rows, int64_t *cols)
{
    *rows = op == OOC_OP_N ? s->rows : s->cols;
    *cols = op == OOC_OP_N ? s->cols : s->rows;
}

/*
 * op(A) m x k, op(B) k x n, C0 and C (when given) m x n, one element type.
 * RC_OK with m, n, k, or RC_SHAPE with a message.
 */
static int check_operands(const operand_t *A, ooc_op_t ta, const operand_t *B, ooc_op_t tb, const operand_t *C0,
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

/* alpha and beta as one element of dtype t, (x, 0) for complex types. */
typedef struct {
    double d[2];
    float f[2];
} scalar_t;

static scalar_t scalar_of(double x) { return (scalar_t){{x, 0.0}, {(float)x, 0.0f}}; }
static const void *scalar_ptr(const scalar_t *s, ooc_dtype_t t) { return dtype_double(t) ? (const void *)s->d : (const void *)s->f; }

/* Bytes from getrusage(): the process's peak resident set. */
static uint64_t peak_rss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (uint64_t)ru.ru_maxrss * 1024u; /* Linux: KiB */
}

/* ------------------------------------------------------------------------ */
/* oocgemm gen                                                               */

static void gen_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm gen OUT --rows R --cols C [OPTIONS]\n"
            "\n"
            "Write a random matrix file: values uniform in [-1, 1), never 0, each a pure\n"
            "function of (seed, row, column), so that the same seed gives the same\n"
            "matrix in either storage order and on any number of threads. The file is\n"
            "written through a temporary file (OUT.ooc-tmp) renamed onto OUT when\n"
            "complete; each thread fills and writes its own chunks (at most 64 MiB each).\n"
            "\n"
            "Options:\n"
            "  --rows R, --cols C    shape (required; positive integers)\n"
            "  --dtype T             s|d|c|z (or f4|f8|c8|c16, float32|float64|\n"
            "                        complex64|complex128) (default d)\n"
            "  --order C|F           C order (row-major) or Fortran order (column-major)\n"
            "                        (default C)\n"
            "  --format npy|raw      file format (default: npy when OUT ends in .npy,\n"
            "                        else raw little-endian elements without a header)\n"
            "  --seed S              seed (default 42)\n"
            "  --threads N           writer threads (default: the cores, at most 16)\n"
            "  -q, --quiet           print nothing but errors\n"
            "  --json                print one JSON object (file, shape, bytes, seconds, GB/s)\n"
            "  -h, --help            this help\n"
            "\n"
            "A raw file is read back as OUT:RxC:DTYPE:ORDER (see oocgemm multiply --help).\n"
            "\n");
    print_exit_codes(f);
}

typedef struct {
    ooc_file_t *file;
    ooc_file_spec_t spec;
    uint64_t key;
    uint64_t total, chunk, nchunks; /* elements, elements per chunk, chunks */
    atomic_uint_fast64_t next;      /* the next chunk to take */
    atomic_int stop;
    pthread_mutex_t lock;
    ooc_status_t st; /* the first failure, and its message */
    char msg[1024];
} gen_job_t;

/* count elements from storage index `first`: element (i, j) holds the
 * value of logical index i*cols + j (complex: reals 2L and 2L+1). */
static void gen_fill(const gen_job_t *g, uint64_t first, uint64_t count, void *buf)
{
    ooc_dtype_t t = g->spec.dtype;
    int cplx = dtype_complex(t), dbl = dtype_double(t);
    uint64_t rows = (uint64_t)g->spec.rows, cols = (uint64_t)g->spec.cols;
    int crow = g->spec.layout == OOC_ROW_MAJOR;
    uint64_t i = crow ? first / cols : first % rows, j = crow ? first % cols : first / rows;
    for (uint64_t e = 0; e < count; e++) {
        uint64_t l = i * cols + j;
        if (cplx) {
            if (dbl) {
                ((double *)buf)[2 * e] = rand_double(g->key, 2 * l);
                ((double *)buf)[2 * e + 1] = rand_double(g->key, 2 * l + 1);
            } else {
                ((float *)buf)[2 * e] = rand_float(g->key, 2 * l);
                ((float *)buf)[2 * e + 1] = rand_float(g->key, 2 * l + 1);
            }
        } else if (dbl) {
            ((double *)buf)[e] = rand_double(g->key, l);
        } else {
            ((float *)buf)[e] = rand_float(g->key, l);
        }
        if (crow) {
            if (++j == cols) j = 0, i++;
        } else {
            if (++i == rows) i = 0, j++;
        }
    }
}

/* One writer: its own handle and chunk buffer; takes chunks until none is left. */
static void *gen_worker(void *arg)
{
    gen_job_t *g = arg;
    ooc_handle_t *h = NULL;
    void *buf = NULL;
    const char *why = NULL;
    ooc_status_t st = ooc_create(&h);
    if (st == OOC_SUCCESS && (buf = malloc(g->chunk * dtype_size(g->spec.dtype))) == NULL) {
        st = OOC_ERR_HOST_MEMORY;
        why = "cannot allocate a chunk buffer";
    }
    while (st == OOC_SUCCESS && !atomic_load(&g->stop)) {
        uint64_t c = atomic_fetch_add(&g->next, 1);
        if (c >= g->nchunks) break;
        uint64_t first = c * g->chunk, count = g->total - first < g->chunk ? g->total - first : g->chunk;
        gen_fill(g, first, count, buf);
        st = ooc_file_write(h, g->file, first, buf, count);
    }
    if (st != OOC_SUCCESS) {
        pthread_mutex_lock(&g->lock);
        if (g->st == OOC_SUCCESS) {
            g->st = st;
            snprintf(g->msg, sizeof g->msg, "%s", why ? why : h ? ooc_last_error(h) : "");
        }
        pthread_mutex_unlock(&g->lock);
        atomic_store(&g->stop, 1);
    }
    free(buf);
    ooc_destroy(h);
    return NULL;
}

static int cmd_gen(int argc, char **argv)
{
    static const struct option opts[] = {
        {"rows", required_argument, NULL, OPT_ROWS},   {"cols", required_argument, NULL, OPT_COLS},
        {"dtype", required_argument, NULL, OPT_DTYPE}, {"order", required_argument, NULL, OPT_ORDER},
        {"format", required_argument, NULL, OPT_FORMAT}, {"seed", required_argument, NULL, OPT_SEED},
        {"threads", required_argument, NULL, OPT_THREADS}, {"quiet", no_argument, NULL, 'q'},
        {"json", no_argument, NULL, OPT_JSON},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "gen";
    int64_t rows = 0, cols = 0, threads = 0;
    ooc_dtype_t t = OOC_R64;
    ooc_layout_t layout = OOC_ROW_MAJOR;
    ooc_format_t format = OOC_FORMAT_AUTO;
    uint64_t seed = 42;
    int quiet = 0, json = 0;

    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, ":qh", opts, NULL);
        if (c == -1) break;
        switch (c) {
        case OPT_ROWS:
            if (parse_int(cmd, "--rows", optarg, 1, INT64_MAX, &rows)) return RC_USAGE;
            break;
        case OPT_COLS:
            if (parse_int(cmd, "--cols", optarg, 1, INT64_MAX, &cols)) return RC_USAGE;
            break;
        case OPT_DTYPE:
            if (dtype_parse(optarg, &t)) return usage_error(cmd, "--dtype: '%s' is not s, d, c or z", optarg);
            break;
        case OPT_ORDER:
            if (order_parse(optarg, &layout)) return usage_error(cmd, "--order: '%s' is not C or F", optarg);
            break;
        case OPT_FORMAT:
            if (strcasecmp(optarg, "npy") == 0) format = OOC_FORMAT_NPY;
            else if (strcasecmp(optarg, "raw") == 0) format = OOC_FORMAT_RAW;
            else return usage_error(cmd, "--format: '%s' is not npy or raw", optarg);
            break;
        case OPT_SEED:
            if (parse_seed(cmd, optarg, &seed)) return RC_USAGE;
            break;
        case OPT_THREADS:
            if (parse_int(cmd, "--threads", optarg, 1, 1024, &threads)) return RC_USAGE;
            break;
        case 'q': quiet = 1; break;
        case OPT_JSON: json = 1; break;
        case 'h': gen_usage(stdout); return RC_OK;
        default: return getopt_failure(cmd, c, argv, "qh");
        }
    }
    if (optind >= argc) return usage_error(cmd, "the output file OUT is required");
    if (optind + 1 < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    const char *out = argv[optind];
    if (*out == '\0') return usage_error(cmd, "empty output file name");
    if (rows == 0) return usage_error(cmd, "--rows R is required");
    if (cols == 0) return usage_error(cmd, "--cols C is required");
    size_t e = dtype_size(t);
    uint64_t total, bytes;
    if (__builtin_mul_overflow((uint64_t)rows, (uint64_t)cols, &total) || __builtin_mul_overflow(total, e, &bytes) ||
        bytes > (uint64_t)INT64_MAX / 2)
        return usage_error(cmd, "%lld x %lld elements of %zu bytes is too large", (long long)rows, (long long)cols, e);
    if (format == OOC_FORMAT_AUTO) format = has_npy_ext(out) ? OOC_FORMAT_NPY : OOC_FORMAT_RAW;

    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads == 0) threads = ncpu < 1 ? 1 : ncpu > 16 ? 16 : ncpu;
    /* chunks: an even share per thread, within [1 MiB, 64 MiB] */
    uint64_t lo = ((uint64_t)1 << 20) / e, hi = ((uint64_t)64 << 20) / e;
    uint64_t chunk = (total + (uint64_t)threads - 1) / (uint64_t)threads;
    chunk = chunk < lo ? lo : chunk > hi ? hi : chunk;
    if (chunk > total) chunk = total;
    uint64_t nchunks = (total + chunk - 1) / chunk;
    if ((uint64_t)threads > nchunks) threads = (int64_t)nchunks;

    ooc_handle_t *h = NULL;
    pthread_t *th = NULL;
    int *created = NULL;
    int rc = RC_OK;
    gen_job_t g;
    memset(&g, 0, sizeof g);
    g.spec = (ooc_file_spec_t){format, rows, cols, t, layout};
    g.key = stream_key(seed, 1);
    g.total = total;
    g.chunk = chunk;
    g.nchunks = nchunks;
    atomic_init(&g.next, 0);
    atomic_init(&g.stop, 0);
    pthread_mutex_init(&g.lock, NULL);

    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "output (%s)", out);
    ooc_status_t st = ooc_create(&h);
    if (st != OOC_SUCCESS) {
        rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
        goto done;
    }
    th = calloc((size_t)threads, sizeof *th);
    created = calloc((size_t)threads, sizeof *created);
    if (!th || !created) {
        rc = fail(RC_RUNTIME, "out of host memory");
        goto done;
    }
    double t0 = now_seconds();
    if ((st = ooc_file_create(h, out, &g.spec, 0, &g.file)) != OOC_SUCCESS) {
        g.file = NULL;
        rc = lib_fail(h, st, AT_OUTPUT, NULL, NULL, what);
        goto done;
    }
    for (int64_t i = 0; i < threads; i++) {
        created[i] = i + 1 < threads && pthread_create(&th[i], NULL, gen_worker, &g) == 0;
        if (i + 1 == threads) gen_worker(&g); /* the last writer is this thread */
    }
    for (int64_t i = 0; i < threads; i++)
        if (created[i]) pthread_join(th[i], NULL);
    if (g.st != OOC_SUCCESS) {
        int code = exit_status_for(g.st, AT_OUTPUT, g.msg, NULL, NULL);
        rc = fail(code, "%s: %s%s%s", what, ooc_status_string(g.st), *g.msg ? ": " : "", g.msg);
        goto done;
    }
    if ((st = ooc_file_commit(h, g.file)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OUTPUT, NULL, NULL, what);
        goto done;
    }
    double secs = now_seconds() - t0;
    uint64_t file_bytes = bytes + ooc_file_data_offset(g.file);
    double gbps = secs > 0 ? (double)file_bytes / secs / 1e9 : INFINITY;
    if (json) {
        printf("{\"command\":\"gen\",\"file\":");
        json_str(stdout, out);
        printf(",\"rows\":%lld,\"cols\":%lld,\"dtype\":\"%s\",\"order\":\"%s\",\"format\":\"%s\",\"seed\":%" PRIu64
               ",\"threads\":%lld,\"bytes\":%" PRIu64,
               (long long)rows, (long long)cols, dtype_name(t), order_name(layout),
               format == OOC_FORMAT_NPY ? "npy" : "raw", seed, (long long)threads, file_bytes);
        json_num(stdout, "seconds", secs, 1);
        json_num(stdout, "gbps", gbps, 1);
        printf(",\"exit_status\":0}\n");
    } else if (!quiet) {
        char b[32];
        printf("wrote %s: %lld x %lld %s, %s order, %s, %s in %.3g s (%.3g GB/s, %lld thread%s)\n", out,
               (long long)rows, (long long)cols, dtype_name(t), order_name(layout),
               format == OOC_FORMAT_NPY ? "npy" : "raw", human_bytes(file_bytes, b, sizeof b), secs, gbps,
               (long long)threads, threads == 1 ? "" : "s");
        if (format == OOC_FORMAT_RAW)
            printf("read it as %s:%lldx%lld:%c:%s\n", out, (long long)rows, (long long)cols, dtype_letter(t),
                   order_name(layout));
    }

done:
    if (g.file) ooc_file_close(g.file, rc != RC_OK); /* never leave a partial file */
    if (rc != RC_OK && json) {
        printf("{\"command\":\"gen\",\"file\":");
        json_str(stdout, out);
        printf(",\"error\":");
        json_str(stdout, fail_msg);
        printf(",\"exit_status\":%d}\n", rc);
    }
    pthread_mutex_destroy(&g.lock);
    free(created);
    free(th);
    ooc_destroy(h);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Progress of a file multiply: called on a library thread; computes and     */
/* writes to stderr only.                                                    */

enum { PROGRESS_NONE, PROGRESS_TTY, PROGRESS_LINES };

typedef struct {
    pthread_mutex_t lock;
    int mode;
    double t0;          /* when ooc_gemm_files() was called */
    double flops;       /* of the whole product */
    double last_print;
    int next_pct;       /* PROGRESS_LINES: print when this percentage is reached */
    int drawn;          /* PROGRESS_TTY: a bar is on the screen */
    int have_base;
    int64_t base;       /* blocks done before this run (resumed), estimated at the first call */
    int64_t done, total;
    uint64_t bytes_read, bytes_written;
    int calls;
} progress_t;

/* "1.23 TFLOP/s", or GFLOP/s below 1 TFLOP/s */
static const char *format_rate(double flops_per_s, char *buf, size_t len)
{
    if (flops_per_s >= 1e12 || !isfinite(flops_per_s)) snprintf(buf, len, "%.3g TFLOP/s", flops_per_s / 1e12);
    else snprintf(buf, len, "%.3g GFLOP/s", flops_per_s / 1e9);
    return buf;
}

/* "1:02:03", "4:05", or "--" */
static const char *format_eta(double s, char *buf, size_t len)
{
    if (!isfinite(s) || s < 0 || s > 1e8) {
        snprintf(buf, len, "--");
        return buf;
    }
    long v = (long)(s + 0.5);
    if (v >= 3600) snprintf(buf, len, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else snprintf(buf, len, "%ld:%02ld", v / 60, v % 60);
    return buf;
}

static void progress_cb(void *user, int64_t done, int64_t total, uint64_t bytes_read, uint64_t bytes_written)
{
    progress_t *p = user;
    pthread_mutex_lock(&p->lock);
    double now = now_seconds(), el = now - p->t0;
    if (!p->have_base) { /* the first call follows this run's first block */
        p->have_base = 1;
        p->base = done > 0 ? done - 1 : 0;
    }
    p->calls++;
    if (done > p->done) p->done = done;
    p->total = total;
    if (bytes_read > p->bytes_read) p->bytes_read = bytes_read;
    if (bytes_written > p->bytes_written) p->bytes_written = bytes_written;
    done = p->done;

    double frac = total > 0 ? (double)done / (double)total : 1.0;
    int64_t ran = done - p->base; /* blocks finished by this run */
    double gbps = el > 0 ? (double)(p->bytes_read + p->bytes_written) / el / 1e9 : 0.0;
    double rate = el > 0 && total > 0 ? p->flops * (double)ran / (double)total / el : 0.0;
    double eta = ran > 0 ? el * (double)(total - done) / (double)ran : NAN;
    char etab[32], rateb[32];
    if (p->mode == PROGRESS_TTY && (now - p->last_print >= 0.1 || done >= total)) {
        enum { WIDTH = 24 };
        char bar[WIDTH + 1];
        int fill = (int)(frac * WIDTH);
        for (int i = 0; i < WIDTH; i++) bar[i] = i < fill ? '#' : '.';
        bar[WIDTH] = '\0';
        fprintf(stderr, "\r[%s] %5.1f%%  %lld/%lld blocks  %.3g GB/s  %s  ETA %s\033[K", bar, 100.0 * frac,
                (long long)done, (long long)total, gbps, format_rate(rate, rateb, sizeof rateb),
                format_eta(eta, etab, sizeof etab));
        fflush(stderr);
        p->drawn = 1;
        p->last_print = now;
    } else if (p->mode == PROGRESS_LINES) {
        int pct = (int)(100.0 * frac);
        if (pct >= p->next_pct || now - p->last_print >= 10.0 || done >= total) {
            fprintf(stderr, "%s: %3d%% (%lld/%lld blocks) %.1f s, %.3g GB/s, %s, ETA %s\n", progname, pct,
                    (long long)done, (long long)total, el, gbps, format_rate(rate, rateb, sizeof rateb),
                    format_eta(eta, etab, sizeof etab));
            p->last_print = now;
            while (p->next_pct <= pct) p->next_pct += 5;
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* After the multiply: end the bar's line. */
static void progress_end(progress_t *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->mode == PROGRESS_TTY && p->drawn) fputc('\n', stderr);
    p->drawn = 0;
    pthread_mutex_unlock(&p->lock);
}

/* ------------------------------------------------------------------------ */
/* oocgemm multiply                                                          */

static void multiply_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm multiply A B -o C [OPTIONS]\n"
            "\n"
            "C = alpha*op(A)*op(B) + beta*C0 on matrix files, possibly larger than host\n"
            "memory (they are streamed, never held whole). op(A) is m x k, op(B) k x n,\n"
            "C0 and C m x n. All operands have one element type; C gets it too.\n"
            "\n"
            "Operands:\n"
            "  A, B                  .npy files (versions 1.0, 2.0, 3.0; float32, float64,\n"
            "                        complex64, complex128; little-endian; C or Fortran\n"
            "                        order), or raw little-endian data given as\n"
            "                        PATH:ROWSxCOLS[:DTYPE[:ORDER]], e.g. A.bin:1000x500:d:F\n"
            "                        (DTYPE s|d|c|z, ORDER C|F: the stored matrix,\n"
            "                        before op). A file without the NumPy magic and\n"
            "                        without that suffix is raw with the defaults below.\n"
            "  --rows R, --cols C    shape of raw operands given without a suffix\n"
            "  --dtype T             element type of raw operands whose suffix has none\n"
            "                        (s|d|c|z; default d)\n"
            "  --order C|F           storage order of raw operands whose suffix has none\n"
            "                        (default C)\n"
            "  -o, --output C        the result (required). Written to C.ooc-tmp, renamed\n"
            "                        onto C when complete and flushed: never half-written.\n"
            "  --out-format npy|raw  (default: npy when C ends in .npy, else raw)\n"
            "  --out-order C|F       storage order of C (default C; C0, and an operand\n"
            "                        with op C on complex data, must be stored in C's\n"
            "                        order: without --out-order C takes their order)\n"
            "\n"
            "Product:\n"
            "  --transa N|T|C        op(A): A, A^T or A^H (default N)\n"
            "  --transb N|T|C        op(B), likewise (default N)\n"
            "  --alpha X             real scalar, (X, 0) for complex types (default 1)\n"
            "  --c-in C0             add beta*C0 (C0 may be the output file itself)\n"
            "  --beta X              real scalar (default 1 with --c-in, else 0)\n"
            "\n"
            "Resuming:\n"
            "  --journal PATH        the resume journal (default C.ooc-journal). Every\n"
            "                        finished row block of C is flushed and recorded there.\n"
            "  --resume              continue the job that C.ooc-tmp and the journal\n"
            "                        record (after kill -9, a crash or a wall-time\n"
            "                        limit): the result is byte-identical to an\n"
            "                        uninterrupted run. Give the same operands and options.\n"
            "                        The journal refuses another job (exit 6).\n"
            "  On failure part-way the temporary file and the journal are kept for\n"
            "  --resume; any failure before the multiply starts leaves no file behind.\n"
            "\n"
            "Check:\n"
            "  --verify              after the multiply, check C against OpenBLAS as\n"
            "                        'oocgemm verify' does (3 vectors, 16 rows); exit 1\n"
            "                        if it fails\n"
            "\n"
            "Library options (absent or 0: the library chooses):\n"
            "  --backend auto|cublas|custom|host\n"
            "                        (default auto: cublas when a GPU is present)\n"
            "  --devices LIST        the GPU to use, by index (one; several are not\n"
            "                        supported by this version)\n"
            "  --device-mem BYTES    device-memory budget\n"
            "  --host-mem BYTES      pinned staging budget (the files are staged through it)\n"
            "  --block-rows N, --ring N, --streams N, --staging-threads N, --tf32,\n"
            "  --tail T, --b-chunks Q, --trace FILE   as for oocgemm run\n"
            "                        as for oocgemm run\n"
            "  BYTES: an integer with an optional binary suffix K, M, G or T.\n"
            "\n"
            "Output:\n"
            "  Progress on stderr: a bar with percent, blocks, GB/s, TFLOP/s and ETA on a\n"
            "  terminal; a plain line every 5%% or 10 s otherwise.\n"
            "  --no-progress         no progress\n"
            "  -q, --quiet           print nothing but errors (and no progress)\n"
            "  --json                print one JSON object on stdout instead of the summary\n"
            "                        (also with -q): command, files, shape, dtype, backend,\n"
            "                        seconds, tflops, bytes_read, bytes_written,\n"
            "                        host_staging_bytes, peak_rss_bytes, floor_s,\n"
            "                        floor_over_time, io_bound_s, bound_over_time, verify,\n"
            "                        exit_status (and error when it failed)\n"
            "  The summary: time, TFLOP/s, bytes read and written and their rates, host\n"
            "  staging memory, peak RSS, backend and plan, and the floor of oocgemm run\n"
            "  (measured after the multiply) with floor/time.\n"
            "  --no-floor            do not measure or show the floor\n"
            "  --bw-h2d GB/s, --bw-d2h GB/s, --rate TFLOP/s\n"
            "                        use these figures for the floor instead of measuring\n"
            "  --measure-disk        before the multiply, measure the disk with the page\n"
            "                        cache bypassed (O_DIRECT): read up to 4 GiB of A,\n"
            "                        write and flush a 2 GiB scratch file beside the\n"
            "                        output, then both at once; the first two are used\n"
            "                        as the figures below, the third gives the shared-\n"
            "                        disk bound (bytes read + written) / (both at once)\n"
            "  --disk-read-bw GB/s, --disk-write-bw GB/s\n"
            "                        disk bandwidths measured separately: then\n"
            "                        io_bound = max(bytes read / read bw, bytes written /\n"
            "                        write bw) and bound = max(floor, io_bound) are shown\n"
            "                        with bound/time. GB = 1e9 bytes.\n"
            "  -h, --help            this help\n"
            "\n");
    print_exit_codes(f);
}

typedef struct {
    const char *a, *b, *out, *c_in, *journal;
    ooc_op_t ta, tb;
    double alpha, beta;
    int have_beta;
    int verify, resume, quiet, json, no_progress, no_floor;
    lib_opts_t lib;
    raw_defaults_t raw;
    ooc_format_t out_format; /* AUTO: from the extension */
    ooc_layout_t out_layout;
    int have_out_layout;
    double disk_read_bw, disk_write_bw; /* GB/s; 0: not given */
    int measure_disk;                   /* measure them before the multiply */
    double bw_h2d, bw_d2h, rate;        /* floor figures given; 0: measure */
} mul_opts_t;

/* Disk bandwidth with the page cache bypassed (O_DIRECT, 16 MiB requests). */
enum { DISK_REQ = 16 << 20 };

typedef struct {
    int fd, write;
    uint64_t limit, done;
    void *buf;
} disk_job_t;

static void *disk_run(void *arg)
{
    disk_job_t *j = arg;
    while (j->done < j->limit) {
        ssize_t got = j->write ? pwrite(j->fd, j->buf, DISK_REQ, (off_t)j->done)
                               : pread(j->fd, j->buf, DISK_REQ, (off_t)j->done);
        if (got <= 0) break;
        j->done += (uint64_t)got;
        if (got < DISK_REQ) break;
    }
    if (j->write && fdatasync(j->fd) != 0) j->done = 0;
    return NULL;
}

/* Read up to 4 GiB of `sample` (an input), write 2 GiB to a scratch file
 * beside `out`, each alone, then both at once (one thread each): GB/s, 0 on
 * failure; *both_gbs counts the bytes of both directions. */
static void measure_disk(const char *sample, const char *out, double *read_gbs, double *write_gbs, double *both_gbs)
{
    const uint64_t read_max = (uint64_t)4 << 30, write_total = (uint64_t)2 << 30;
    void *rbuf = NULL, *wbuf = NULL;
    char *scratch = NULL;
    *read_gbs = *write_gbs = *both_gbs = 0;
    if (posix_memalign(&rbuf, 4096, DISK_REQ) != 0 || posix_memalign(&wbuf, 4096, DISK_REQ) != 0 ||
        asprintf(&scratch, "%s.ooc-disktest", out) < 0) {
        free(rbuf);
        free(wbuf);
        return;
    }
    fill_random(OOC_R64, wbuf, DISK_REQ / 8, 1, 7);
    int rfd = open(sample, O_RDONLY | O_DIRECT), wfd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    if (rfd >= 0 && wfd >= 0) {
        disk_job_t r = {rfd, 0, read_max, 0, rbuf}, w = {wfd, 1, write_total, 0, wbuf};
        double t0 = now_seconds();
        disk_run(&r);
        double t1 = now_seconds();
        disk_run(&w);
        double t2 = now_seconds();
        if (r.done >= DISK_REQ) *read_gbs = (double)r.done / (t1 - t0) / 1e9;
        if (w.done == write_total) *write_gbs = (double)w.done / (t2 - t1) / 1e9;
        /* both at once, on the same amounts (the read from the start again) */
        disk_job_t r2 = {rfd, 0, r.done, 0, rbuf}, w2 = {wfd, 1, write_total, 0, wbuf};
        pthread_t th;
        double t3 = now_seconds();
        if (pthread_create(&th, NULL, disk_run, &r2) == 0) {
            disk_run(&w2);
            pthread_join(th, NULL);
            double dt = now_seconds() - t3;
            if (w2.done == write_total && r2.done == r.done) *both_gbs = (double)(r2.done + w2.done) / dt / 1e9;
        }
    }
    if (rfd >= 0) close(rfd);
    if (wfd >= 0) close(wfd);
    unlink(scratch);
    free(scratch);
    free(rbuf);
    free(wbuf);
}

/* --devices LIST: one index (OOC_PARAM_DEVICE); several are refused. */
static int parse_devices(const char *cmd, const char *s, int64_t *device)
{
    if (strchr(s, ',') != NULL) {
        /* a list: check its syntax so the message is about the right thing */
        const char *p = s;
        for (;;) {
            if (*p < '0' || *p > '9') return usage_error(cmd, "--devices: '%s' is not a list of device indices", s), -1;
            while (*p >= '0' && *p <= '9') p++;
            if (*p == '\0') break;
            if (*p++ != ',') return usage_error(cmd, "--devices: '%s' is not a list of device indices", s), -1;
        }
        return usage_error(cmd, "--devices %s: several devices: not supported by this version", s), -1;
    }
    return parse_param(cmd, "--devices", s, OOC_PARAM_DEVICE, 0, device);
}

static int multiply_parse(int argc, char **argv, mul_opts_t *o)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"transa", required_argument, NULL, OPT_TRANSA},
        {"transb", required_argument, NULL, OPT_TRANSB},
        {"alpha", required_argument, NULL, OPT_ALPHA},
        {"beta", required_argument, NULL, OPT_BETA},
        {"c-in", required_argument, NULL, OPT_C_IN},
        {"verify", no_argument, NULL, OPT_VERIFY},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"journal", required_argument, NULL, OPT_JOURNAL},
        {"devices", required_argument, NULL, OPT_DEVICES},
        LIB_LONG_OPTS,
        {"rows", required_argument, NULL, OPT_ROWS},
        {"cols", required_argument, NULL, OPT_COLS},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"order", required_argument, NULL, OPT_ORDER},
        {"out-format", required_argument, NULL, OPT_OUT_FORMAT},
        {"out-order", required_argument, NULL, OPT_OUT_ORDER},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"no-floor", no_argument, NULL, OPT_NO_FLOOR},
        {"bw-h2d", required_argument, NULL, OPT_BW_H2D},
        {"bw-d2h", required_argument, NULL, OPT_BW_D2H},
        {"rate", required_argument, NULL, OPT_RATE},
        {"disk-read-bw", required_argument, NULL, OPT_DISK_READ_BW},
        {"measure-disk", no_argument, NULL, OPT_MEASURE_DISK},
        {"disk-write-bw", required_argument, NULL, OPT_DISK_WRITE_BW},
        {"quiet", no_argument, NULL, 'q'},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "multiply";
    memset(o, 0, sizeof *o);
    o->ta = o->tb = OOC_OP_N;
    o->alpha = 1.0;
    o->lib.backend = OOC_BACKEND_AUTO;
    o->raw.dtype = OOC_R64;
    o->raw.layout = OOC_ROW_MAJOR;
    o->out_layout = OOC_ROW_MAJOR;

    opterr = 0;
    optind = 1;
    for (;;) {
        int longind = -1;
        int c = getopt_long(argc, argv, ":o:qh", opts, &longind);
        if (c == -1) break;
        char optname[64] = "";
        if (longind >= 0) snprintf(optname, sizeof optname, "--%s", opts[longind].name);
        int lib = lib_opt_parse(cmd, c, optname, optarg, &o->lib);
        if (lib < 0) return RC_USAGE;
        if (lib > 0) continue;
        switch (c) {
        case 'o': o->out = optarg; break;
        case OPT_TRANSA:
            if (parse_op(cmd, "--transa", optarg, &o->ta)) return RC_USAGE;
            break;
        case OPT_TRANSB:
            if (parse_op(cmd, "--transb", optarg, &o->tb)) return RC_USAGE;
            break;
        case OPT_ALPHA:
            if (parse_real(cmd, "--alpha", optarg, 0, &o->alpha)) return RC_USAGE;
            break;
        case OPT_BETA:
            if (parse_real(cmd, "--beta", optarg, 0, &o->beta)) return RC_USAGE;
            o->have_beta = 1;
            break;
        case OPT_C_IN: o->c_in = optarg; break;
        case OPT_VERIFY: o->verify = 1; break;
        case OPT_RESUME: o->resume = 1; break;
        case OPT_JOURNAL:
            if (*optarg == '\0') return usage_error(cmd, "--journal: empty path");
            o->journal = optarg;
            break;
        case OPT_DEVICES:
            if (parse_devices(cmd, optarg, &o->lib.device)) return RC_USAGE;
            break;
        case OPT_ROWS:
            if (parse_int(cmd, "--rows", optarg, 1, INT64_MAX, &o->raw.rows)) return RC_USAGE;
            break;
        case OPT_COLS:
            if (parse_int(cmd, "--cols", optarg, 1, INT64_MAX, &o->raw.cols)) return RC_USAGE;
            break;
        case OPT_DTYPE:
            if (dtype_parse(optarg, &o->raw.dtype))
                return usage_error(cmd, "--dtype: '%s' is not s, d, c or z", optarg);
            break;
        case OPT_ORDER:
            if (order_parse(optarg, &o->raw.layout)) return usage_error(cmd, "--order: '%s' is not C or F", optarg);
            break;
        case OPT_OUT_FORMAT:
            if (strcasecmp(optarg, "npy") == 0) o->out_format = OOC_FORMAT_NPY;
            else if (strcasecmp(optarg, "raw") == 0) o->out_format = OOC_FORMAT_RAW;
            else return usage_error(cmd, "--out-format: '%s' is not npy or raw", optarg);
            break;
        case OPT_OUT_ORDER:
            if (order_parse(optarg, &o->out_layout)) return usage_error(cmd, "--out-order: '%s' is not C or F", optarg);
            o->have_out_layout = 1;
            break;
        case OPT_NO_PROGRESS: o->no_progress = 1; break;
        case OPT_NO_FLOOR: o->no_floor = 1; break;
        case OPT_BW_H2D:
            if (parse_real(cmd, "--bw-h2d", optarg, 1, &o->bw_h2d)) return RC_USAGE;
            break;
        case OPT_BW_D2H:
            if (parse_real(cmd, "--bw-d2h", optarg, 1, &o->bw_d2h)) return RC_USAGE;
            break;
        case OPT_RATE:
            if (parse_real(cmd, "--rate", optarg, 1, &o->rate)) return RC_USAGE;
            break;
        case OPT_DISK_READ_BW:
            if (parse_real(cmd, "--disk-read-bw", optarg, 1, &o->disk_read_bw)) return RC_USAGE;
            break;
        case OPT_MEASURE_DISK: o->measure_disk = 1; break;
        case OPT_DISK_WRITE_BW:
            if (parse_real(cmd, "--disk-write-bw", optarg, 1, &o->disk_write_bw)) return RC_USAGE;
            break;
        case 'q': o->quiet = 1; break;
        case OPT_JSON: o->json = 1; break;
        case 'h': multiply_usage(stdout); return -1;
        default: return getopt_failure(cmd, c, argv, "oqh");
        }
    }
    if (argc - optind < 2) return usage_error(cmd, "two input files A and B are required");
    if (argc - optind > 2)
        return usage_error(cmd, "unexpected argument '%s' (the output is given with -o)", argv[optind + 2]);
    o->a = argv[optind];
    o->b = argv[optind + 1];
    if (o->out == NULL) return usage_error(cmd, "-o C is required (the output file)");
    if (*o->out == '\0') return usage_error(cmd, "-o: empty file name");
    if ((o->raw.rows > 0) != (o->raw.cols > 0)) return usage_error(cmd, "--rows and --cols go together");
    if (o->c_in && !o->have_beta) o->beta = 1.0;
    if (o->beta != 0.0 && o->c_in == NULL)
        return usage_error(cmd, "--beta %g needs --c-in C0 (the matrix beta multiplies)", o->beta);
    return RC_OK;
}

static void json_verify(FILE *f, const ooc_verify_result_t *v, int have)
{
    if (!have) {
        fprintf(f, ",\"verify\":null");
        return;
    }
    fprintf(f, ",\"verify\":{\"exact\":%s,\"vectors\":%d,\"rows_checked\":%lld", v->exact ? "true" : "false",
            v->vectors, (long long)v->rows_checked);
    json_num(f, "max_rel_err", v->max_rel_err, 1);
    json_num(f, "tolerance", v->tolerance, 1);
    fprintf(f, ",\"passed\":%s,\"bytes_read\":%" PRIu64 "}", v->passed ? "true" : "false", v->bytes_read);
}

/* "verify: <mode>: max relative error E (tolerance T): PASS|FAIL" */
static void print_verify(FILE *f, const ooc_verify_result_t *v, int64_t m, int64_t n)
{
    if (v->exact)
        fprintf(f, "verify: exact (all %lld x %lld elements against OpenBLAS)", (long long)m, (long long)n);
    else
        fprintf(f, "verify: Freivalds with %d random vector%s + %lld row%s recomputed exactly", v->vectors,
                v->vectors == 1 ? "" : "s", (long long)v->rows_checked, v->rows_checked == 1 ? "" : "s");
    fprintf(f, ": max relative error %.3g (tolerance %.3g): %s\n", v->max_rel_err, v->tolerance,
            v->passed ? "PASS" : "FAIL");
}

static int cmd_multiply(int argc, char **argv)
{
    mul_opts_t o;
    int rc = multiply_parse(argc, argv, &o);
    if (rc < 0) return RC_OK; /* --help */
    if (rc != RC_OK) return rc;
    const char *cmd = "multiply";

    operand_t A, B, C0, Cv;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    memset(&C0, 0, sizeof C0);
    memset(&Cv, 0, sizeof Cv);
    ooc_handle_t *h = NULL;
    ooc_file_t *C = NULL;
    char *tmp_path = NULL, *journal_path = NULL;
    progress_t prog;
    memset(&prog, 0, sizeof prog);
    pthread_mutex_init(&prog.lock, NULL);
    ooc_stats_t stats;
    memset(&stats, 0, sizeof stats);
    ooc_verify_result_t vr;
    memset(&vr, 0, sizeof vr);
    int verified = 0, multiplied = 0;
    int64_t m = 0, n = 0, k = 0;
    ooc_dtype_t t = OOC_R64;
    double secs = 0;
    ooc_status_t st;

    if ((rc = operand_parse(cmd, "A", o.a, &o.raw, &A)) != RC_OK ||
        (rc = operand_parse(cmd, "B", o.b, &o.raw, &B)) != RC_OK ||
        (o.c_in && (rc = operand_parse(cmd, "C0", o.c_in, &o.raw, &C0)) != RC_OK))
        goto out;
    if (asprintf(&tmp_path, "%s.ooc-tmp", o.out) < 0) tmp_path = NULL;
    if (o.journal) journal_path = strdup(o.journal);
    else if (asprintf(&journal_path, "%s.ooc-journal", o.out) < 0) journal_path = NULL;
    if (!tmp_path || !journal_path) {
        rc = fail(RC_RUNTIME, "out of host memory");
        goto out;
    }

    if ((st = ooc_create(&h)) != OOC_SUCCESS) {
        rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
        goto out;
    }
    if ((st = lib_opts_apply(h, &o.lib)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OTHER, NULL, NULL, "options");
        goto out;
    }

    /* every input opened and checked before the output exists */
    if ((rc = operand_open(h, &A, &o.raw)) != RC_OK || (rc = operand_open(h, &B, &o.raw)) != RC_OK ||
        (o.c_in && (rc = operand_open(h, &C0, &o.raw)) != RC_OK))
        goto out;
    if ((rc = check_operands(&A, o.ta, &B, o.tb, o.c_in ? &C0 : NULL, NULL, &m, &n, &k)) != RC_OK) goto out;
    t = A.spec.dtype;
    if (!dtype_complex(t)) { /* A^H = A^T for real data */
        if (o.ta == OOC_OP_C) o.ta = OOC_OP_T;
        if (o.tb == OOC_OP_C) o.tb = OOC_OP_T;
    }
    {
        /* ooc_gemm_files needs C0, and an operand whose op is C, stored in
         * C's order: without --out-order, C takes their order */
        const struct {
            const operand_t *op;
            const char *why;
        } need[3] = {
            {o.c_in ? &C0 : NULL, "--c-in"},
            {o.ta == OOC_OP_C ? &A : NULL, "--transa C"},
            {o.tb == OOC_OP_C ? &B : NULL, "--transb C"},
        };
        const char *chosen_by = "--out-order";
        for (int i = 0; i < 3; i++) {
            if (need[i].op == NULL) continue;
            if (!o.have_out_layout) {
                o.out_layout = need[i].op->spec.layout;
                o.have_out_layout = 1;
                chosen_by = need[i].why;
            } else if (need[i].op->spec.layout != o.out_layout) {
                rc = fail(RC_SHAPE,
                          "%s needs %s (%s) stored in the output's order, but it is in %s order and %s makes the "
                          "output %s order",
                          need[i].why, need[i].op->name, need[i].op->path, order_name(need[i].op->spec.layout),
                          chosen_by, order_name(o.out_layout));
                goto out;
            }
        }
    }
    ooc_file_spec_t cspec = {o.out_format != OOC_FORMAT_AUTO ? o.out_format
                                                             : has_npy_ext(o.out) ? OOC_FORMAT_NPY : OOC_FORMAT_RAW,
                             m, n, t, o.out_layout};

    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "output (%s)", o.out);
    /* Starting over: a journal left by an earlier run is obsolete, and must
     * not outlive the temporary file that ooc_file_create() now empties (a
     * failure before the library rewrites it would leave it describing
     * blocks that are gone). */
    double disk_both = 0;
    if (o.measure_disk) {
        double rd, wr;
        measure_disk(A.path, o.out, &rd, &wr, &disk_both);
        if (o.disk_read_bw <= 0) o.disk_read_bw = rd;
        if (o.disk_write_bw <= 0) o.disk_write_bw = wr;
        if (!o.quiet && !o.json)
            printf("disk (O_DIRECT, measured now): read %.3g GB/s, write %.3g GB/s, both at once %.3g GB/s in "
                   "all%s\n", rd, wr, disk_both, rd > 0 && wr > 0 ? "" : " (0: could not measure)");
    }
    if (!o.resume && unlink(journal_path) != 0 && errno != ENOENT) {
        rc = fail(RC_OUTPUT, "cannot remove the old journal %s: %s", journal_path, strerror(errno));
        goto out;
    }
    if ((st = ooc_file_create(h, o.out, &cspec, o.resume ? OOC_FILE_RESUME : 0, &C)) != OOC_SUCCESS) {
        C = NULL;
        rc = lib_fail(h, st, AT_OUTPUT, tmp_path, journal_path, what);
        goto out;
    }

    prog.mode = o.quiet || o.no_progress ? PROGRESS_NONE : isatty(STDERR_FILENO) ? PROGRESS_TTY : PROGRESS_LINES;
    prog.flops = (dtype_complex(t) ? 8.0 : 2.0) * (double)m * (double)n * (double)k;
    prog.next_pct = 5;
    ooc_files_opts_t fo = {o.journal, o.resume, progress_cb, &prog};
    scalar_t alpha = scalar_of(o.alpha), beta = scalar_of(o.beta);
    prog.t0 = prog.last_print = now_seconds();
    st = ooc_gemm_files(h, o.ta, o.tb, scalar_ptr(&alpha, t), A.file, B.file, scalar_ptr(&beta, t),
                        o.c_in ? C0.file : NULL, C, &fo);
    secs = now_seconds() - prog.t0;
    progress_end(&prog);
    if (st != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_RUN, tmp_path, journal_path, "multiply");
        /* keep what a later --resume can use: a journal of this job, or the
         * files a refused resume found (they may belong to another job) */
        int keep = st == OOC_ERR_JOURNAL || access(journal_path, F_OK) == 0;
        ooc_file_close(C, !keep);
        C = NULL;
        if (st == OOC_ERR_JOURNAL)
            fprintf(stderr, "%s: %s and %s are left as they were: check the command, or run it without --resume to "
                    "start over\n", progname, tmp_path, journal_path);
        else if (keep)
            fprintf(stderr, "%s: the finished row blocks are kept in %s (journal %s): run the same command with "
                    "--resume to continue\n", progname, tmp_path, journal_path);
        goto out;
    }
    multiplied = 1;
    if ((st = ooc_file_commit(h, C)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OUTPUT, tmp_path, journal_path, what);
        ooc_file_close(C, 0); /* the result is complete: keep it for the user */
        C = NULL;
        fprintf(stderr, "%s: the complete result is left in %s\n", progname, tmp_path);
        goto out;
    }
    ooc_file_close(C, 0);
    C = NULL;
    if ((st = ooc_get_stats(h, &stats)) != OOC_SUCCESS) memset(&stats, 0, sizeof stats);

    if (o.verify) {
        /* C read back from its target path, as a user would */
        Cv.name = "C";
        Cv.arg = o.out;
        if ((Cv.path = strdup(o.out)) == NULL) {
            rc = fail(RC_RUNTIME, "out of host memory");
            goto out;
        }
        Cv.shaped = 1;
        Cv.spec = cspec;
        if (cspec.format == OOC_FORMAT_NPY) Cv.spec.format = OOC_FORMAT_AUTO;
        if ((rc = operand_open(h, &Cv, &o.raw)) != RC_OK) goto out;
        st = ooc_verify_files(h, o.ta, o.tb, scalar_ptr(&alpha, t), A.file, B.file, scalar_ptr(&beta, t),
                              o.c_in ? C0.file : NULL, Cv.file, 3, 16, &vr);
        if (st != OOC_SUCCESS) {
            rc = lib_fail(h, st, AT_INPUT, NULL, NULL, "verify");
            goto out;
        }
        verified = 1;
    }
    rc = verified && !vr.passed ? RC_CHECK_FAILED : RC_OK;

    /* the summary */
    {
        floor_t fl = {.bw_h2d = o.bw_h2d, .bw_d2h = o.bw_d2h, .rate = o.rate};
        int report = o.json || !o.quiet;
        if (report && !o.no_floor) {
            floor_measure(h, t, m, n, k, o.quiet || o.json, &fl);
            floor_compute(&fl, t, m, n, k, o.c_in != NULL && o.beta != 0.0);
        }
        double br = (double)prog.bytes_read, bw = (double)prog.bytes_written;
        /* a resumed run did only the blocks the journal did not have */
        int64_t resumed = o.resume && prog.have_base ? prog.base : 0;
        double run_flops = prog.flops;
        if (resumed > 0 && prog.total > 0)
            run_flops = prog.flops * (double)(prog.total - prog.base) / (double)prog.total;
        double tflops = secs > 0 ? run_flops / secs / 1e12 : INFINITY;
        int have_io = o.disk_read_bw > 0 || o.disk_write_bw > 0;
        double io_bound = 0;
        if (o.disk_read_bw > 0) io_bound = br / (o.disk_read_bw * 1e9);
        if (o.disk_write_bw > 0 && bw / (o.disk_write_bw * 1e9) > io_bound) io_bound = bw / (o.disk_write_bw * 1e9);
        int have_bound = fl.have || have_io;
        double bound = fl.have ? fl.floor_s : 0;
        if (have_io && io_bound > bound) bound = io_bound;
        uint64_t rss = peak_rss_bytes();
        const char *backend = ooc_backend_name(h);
        if (o.json) {
            printf("{\"command\":\"multiply\",\"version\":\"%s\",\"files\":{\"a\":", PACKAGE_VERSION);
            json_str(stdout, A.path);
            printf(",\"b\":");
            json_str(stdout, B.path);
            printf(",\"c_in\":");
            json_str(stdout, o.c_in ? C0.path : NULL);
            printf(",\"c\":");
            json_str(stdout, o.out);
            printf("},\"shape\":{\"m\":%lld,\"n\":%lld,\"k\":%lld},\"dtype\":\"%s\",\"transa\":\"%c\","
                   "\"transb\":\"%c\",\"alpha\":%.17g,\"beta\":%.17g,\"out_order\":\"%s\",\"backend\":\"%s\","
                   "\"resumed\":%s,\"blocks_before_resume\":%lld",
                   (long long)m, (long long)n, (long long)k, dtype_name(t), op_letter(o.ta), op_letter(o.tb), o.alpha,
                   o.beta, order_name(o.out_layout), backend, resumed > 0 ? "true" : "false", (long long)resumed);
            json_num(stdout, "seconds", secs, 1);
            json_num(stdout, "tflops", tflops, 1);
            printf(",\"bytes_read\":%" PRIu64 ",\"bytes_written\":%" PRIu64, prog.bytes_read, prog.bytes_written);
            json_num(stdout, "read_gbps", secs > 0 ? br / secs / 1e9 : NAN, 1);
            json_num(stdout, "write_gbps", secs > 0 ? bw / secs / 1e9 : NAN, 1);
            printf(",\"host_staging_bytes\":%" PRIu64 ",\"peak_rss_bytes\":%" PRIu64, stats.host_bytes, rss);
            json_num(stdout, "bw_h2d_gbps", fl.bw_h2d, fl.have);
            json_num(stdout, "bw_d2h_gbps", fl.bw_d2h, fl.have);
            json_num(stdout, "incore_tflops", fl.rate, fl.have);
            json_num(stdout, "floor_s", fl.floor_s, fl.have);
            json_num(stdout, "floor_over_time", secs > 0 ? fl.floor_s / secs : INFINITY, fl.have);
            json_num(stdout, "io_bound_s", io_bound, have_io);
            json_num(stdout, "disk_both_gbps", disk_both, disk_both > 0);
            json_num(stdout, "shared_disk_bound_s", (br + bw) / (disk_both * 1e9), disk_both > 0);
            json_num(stdout, "bound_s", bound, have_bound);
            json_num(stdout, "bound_over_time", secs > 0 ? bound / secs : INFINITY, have_bound);
            printf(",\"plan\":{\"block_rows\":%lld,\"panel_cols\":%lld,\"panel_depth\":%lld,\"blocks\":%lld,"
                   "\"panels\":%lld,\"ring_depth\":%d,\"streams\":%d,\"device_bytes\":%" PRIu64 "}",
                   (long long)stats.block_rows, (long long)stats.panel_cols, (long long)stats.panel_depth,
                   (long long)stats.blocks, (long long)stats.panels, (int)stats.ring_depth, (int)stats.streams,
                   stats.device_bytes);
            json_verify(stdout, &vr, verified);
            printf(",\"exit_status\":%d}\n", rc);
        } else if (!o.quiet) {
            char b1[32], b2[32];
            printf("oocgemm %s: %s = %s%s x %s%s%s%s: m=%lld n=%lld k=%lld %s, alpha=%g beta=%g\n", PACKAGE_VERSION,
                   o.out, o.ta == OOC_OP_N ? "" : o.ta == OOC_OP_T ? "T:" : "H:", A.path,
                   o.tb == OOC_OP_N ? "" : o.tb == OOC_OP_T ? "T:" : "H:", B.path, o.c_in ? " + beta x " : "",
                   o.c_in ? C0.path : "", (long long)m, (long long)n, (long long)k, dtype_name(t), o.alpha, o.beta);
            char d1[128], d2[128], d3[128];
            printf("files: A %s; B %s", describe_spec(&A.spec, d1, sizeof d1), describe_spec(&B.spec, d2, sizeof d2));
            if (o.c_in) printf("; C0 %s", describe_spec(&C0.spec, d3, sizeof d3));
            printf("; C %s\n", describe_spec(&cspec, d3, sizeof d3));
            print_plan(stdout, backend, &stats);
            printf("time: %.3g s   rate: %s", secs, format_rate(tflops * 1e12, b1, sizeof b1));
            if (resumed > 0)
                printf("   (resumed after %lld of %lld blocks)", (long long)resumed, (long long)prog.total);
            printf("\n");
            printf("disk: read %s (%.3g GB/s), written %s (%.3g GB/s)\n", human_bytes(prog.bytes_read, b1, sizeof b1),
                   secs > 0 ? br / secs / 1e9 : 0.0, human_bytes(prog.bytes_written, b2, sizeof b2),
                   secs > 0 ? bw / secs / 1e9 : 0.0);
            printf("memory: host staging %s, peak RSS %s\n", human_bytes(stats.host_bytes, b1, sizeof b1),
                   human_bytes(rss, b2, sizeof b2));
            if (o.no_floor) printf("floor: not measured (--no-floor)\n");
            else floor_print(stdout, &fl, t, secs);
            if (have_io)
                printf("io bound: %.3g s (read %.3g GB at %s GB/s, written %.3g GB at %s GB/s)\n", io_bound, br / 1e9,
                       o.disk_read_bw > 0 ? (snprintf(b1, sizeof b1, "%.3g", o.disk_read_bw), b1) : "?", bw / 1e9,
                       o.disk_write_bw > 0 ? (snprintf(b2, sizeof b2, "%.3g", o.disk_write_bw), b2) : "?");
            else
                printf("io bound: n/a (give --disk-read-bw and --disk-write-bw)\n");
            if (have_bound)
                printf("bound: max(floor, io bound) = %.3g s  bound/time: %.2f\n", bound,
                       secs > 0 ? bound / secs : INFINITY);
            if (disk_both > 0)
                printf("shared-disk bound: (read + written) / both-at-once bandwidth = %.3g s  ratio to time: %.2f\n",
                       (br + bw) / (disk_both * 1e9), secs > 0 ? (br + bw) / (disk_both * 1e9) / secs : INFINITY);
            if (verified) print_verify(stdout, &vr, m, n);
        }
        if (verified && !vr.passed && (o.quiet || o.json))
            fprintf(stderr, "%s: verification failed: max relative error %.3g exceeds the tolerance %.3g\n", progname,
                    vr.max_rel_err, vr.tolerance);
    }

out:
    if (rc != RC_OK && rc != RC_CHECK_FAILED && o.json) {
        printf("{\"command\":\"multiply\",\"version\":\"%s\",\"files\":{\"a\":", PACKAGE_VERSION);
        json_str(stdout, o.a);
        printf(",\"b\":");
        json_str(stdout, o.b);
        printf(",\"c_in\":");
        json_str(stdout, o.c_in);
        printf(",\"c\":");
        json_str(stdout, o.out);
        printf("},\"multiplied\":%s,\"error\":", multiplied ? "true" : "false");
        json_str(stdout, fail_msg);
        printf(",\"exit_status\":%d}\n", rc);
    }
    if (C) ooc_file_close(C, 1);
    operand_free(&Cv);
    operand_free(&C0);
    operand_free(&B);
    operand_free(&A);
    pthread_mutex_destroy(&prog.lock);
    free(journal_path);
    free(tmp_path);
    ooc_destroy(h);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* oocgemm verify                                                            */

static void verify_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm verify A B C [OPTIONS]\n"
            "\n"
            "Check C = alpha*op(A)*op(B) + beta*C0 on matrix files against OpenBLAS on\n"
            "the CPU, streaming within the host-memory budget. Small products are\n"
            "checked exactly (every element). Large ones with Freivalds' test: C*x is\n"
            "compared with alpha*op(A)*(op(B)*x) + beta*C0*x for V random vectors x,\n"
            "plus R rows of C recomputed exactly. The error is relative to a bound on\n"
            "the terms summed; it passes when within a tolerance derived from k and\n"
            "the machine epsilon of the element type.\n"
            "\n"
            "Operands: .npy files, or raw data as PATH:ROWSxCOLS[:DTYPE[:ORDER]]\n"
            "(see oocgemm multiply --help).\n"
            "  --transa N|T|C        op(A) (default N)\n"
            "  --transb N|T|C        op(B) (default N)\n"
            "  --alpha X             real scalar (default 1)\n"
            "  --c-in C0             the C0 that C was computed from\n"
            "  --beta X              real scalar (default 1 with --c-in, else 0)\n"
            "  --dtype T, --order C|F\n"
            "                        element type and order of raw operands whose suffix\n"
            "                        has none (default d and C)\n"
            "  --vectors V           Freivalds vectors (default 3)\n"
            "  --rows R              rows of C recomputed exactly (default 16)\n"
            "  --host-mem BYTES      host-memory budget for the check (0: automatic)\n"
            "  -q, --quiet           print nothing but errors\n"
            "  --json                print one JSON object: files, shape, mode, max_rel_err,\n"
            "                        tolerance, passed, seconds, exit_status\n"
            "  -h, --help            this help\n"
            "\n"
            "Prints the mode, the largest relative error, the tolerance and PASS or\n"
            "FAIL; exits 1 on FAIL.\n"
            "\n");
    print_exit_codes(f);
}

static int cmd_verify(int argc, char **argv)
{
    static const struct option opts[] = {
        {"transa", required_argument, NULL, OPT_TRANSA},   {"transb", required_argument, NULL, OPT_TRANSB},
        {"alpha", required_argument, NULL, OPT_ALPHA},     {"beta", required_argument, NULL, OPT_BETA},
        {"c-in", required_argument, NULL, OPT_C_IN},       {"dtype", required_argument, NULL, OPT_DTYPE},
        {"order", required_argument, NULL, OPT_ORDER},     {"vectors", required_argument, NULL, OPT_VECTORS},
        {"rows", required_argument, NULL, OPT_ROWS},       {"host-mem", required_argument, NULL, OPT_HOST_MEM},
        {"quiet", no_argument, NULL, 'q'},                 {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},                  {NULL, 0, NULL, 0},
    };
    const char *cmd = "verify";
    ooc_op_t ta = OOC_OP_N, tb = OOC_OP_N;
    double alpha = 1.0, beta = 0.0;
    int have_beta = 0, quiet = 0, json = 0;
    const char *c_in = NULL;
    int64_t vectors = 3, rows = 16, host_mem = 0;
    raw_defaults_t raw = {0, 0, OOC_R64, OOC_ROW_MAJOR};

    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, ":qh", opts, NULL);
        if (c == -1) break;
        switch (c) {
        case OPT_TRANSA:
            if (parse_op(cmd, "--transa", optarg, &ta)) return RC_USAGE;
            break;
        case OPT_TRANSB:
            if (parse_op(cmd, "--transb", optarg, &tb)) return RC_USAGE;
            break;
        case OPT_ALPHA:
            if (parse_real(cmd, "--alpha", optarg, 0, &alpha)) return RC_USAGE;
            break;
        case OPT_BETA:
            if (parse_real(cmd, "--beta", optarg, 0, &beta)) return RC_USAGE;
            have_beta = 1;
            break;
        case OPT_C_IN: c_in = optarg; break;
        case OPT_DTYPE:
            if (dtype_parse(optarg, &raw.dtype)) return usage_error(cmd, "--dtype: '%s' is not s, d, c or z", optarg);
            break;
        case OPT_ORDER:
            if (order_parse(optarg, &raw.layout)) return usage_error(cmd, "--order: '%s' is not C or F", optarg);
            break;
        case OPT_VECTORS:
            if (parse_int(cmd, "--vectors", optarg, 1, 1024, &vectors)) return RC_USAGE;
            break;
        case OPT_ROWS:
            if (parse_int(cmd, "--rows", optarg, 0, INT64_MAX, &rows)) return RC_USAGE;
            break;
        case OPT_HOST_MEM:
            if (parse_param(cmd, "--host-mem", optarg, OOC_PARAM_HOST_MEM, 1, &host_mem)) return RC_USAGE;
            break;
        case 'q': quiet = 1; break;
        case OPT_JSON: json = 1; break;
        case 'h': verify_usage(stdout); return RC_OK;
        default: return getopt_failure(cmd, c, argv, "qh");
        }
    }
    if (argc - optind < 3) return usage_error(cmd, "three files A, B and C are required");
    if (argc - optind > 3) return usage_error(cmd, "unexpected argument '%s'", argv[optind + 3]);
    if (c_in && !have_beta) beta = 1.0;
    if (beta != 0.0 && c_in == NULL) return usage_error(cmd, "--beta %g needs --c-in C0", beta);

    operand_t A, B, C0, C;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    memset(&C0, 0, sizeof C0);
    memset(&C, 0, sizeof C);
    ooc_handle_t *h = NULL;
    ooc_verify_result_t vr;
    memset(&vr, 0, sizeof vr);
    int64_t m = 0, n = 0, k = 0;
    double secs = 0;
    ooc_status_t st;
    int rc;

    if ((rc = operand_parse(cmd, "A", argv[optind], &raw, &A)) != RC_OK ||
        (rc = operand_parse(cmd, "B", argv[optind + 1], &raw, &B)) != RC_OK ||
        (rc = operand_parse(cmd, "C", argv[optind + 2], &raw, &C)) != RC_OK ||
        (c_in && (rc = operand_parse(cmd, "C0", c_in, &raw, &C0)) != RC_OK))
        goto out;
    if ((st = ooc_create(&h)) != OOC_SUCCESS) {
        rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
        goto out;
    }
    if ((st = set_param(h, OOC_PARAM_HOST_MEM, host_mem)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OTHER, NULL, NULL, "--host-mem");
        goto out;
    }
    if ((rc = operand_open(h, &A, &raw)) != RC_OK || (rc = operand_open(h, &B, &raw)) != RC_OK ||
        (c_in && (rc = operand_open(h, &C0, &raw)) != RC_OK) || (rc = operand_open(h, &C, &raw)) != RC_OK)
        goto out;
    if ((rc = check_operands(&A, ta, &B, tb, c_in ? &C0 : NULL, &C, &m, &n, &k)) != RC_OK) goto out;
    ooc_dtype_t t = A.spec.dtype;
    if (!dtype_complex(t)) {
        if (ta == OOC_OP_C) ta = OOC_OP_T;
        if (tb == OOC_OP_C) tb = OOC_OP_T;
    }
    scalar_t sa = scalar_of(alpha), sb = scalar_of(beta);
    double t0 = now_seconds();
    st = ooc_verify_files(h, ta, tb, scalar_ptr(&sa, t), A.file, B.file, scalar_ptr(&sb, t), c_in ? C0.file : NULL,
                          C.file, (int)vectors, rows, &vr);
    secs = now_seconds() - t0;
    if (st != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_INPUT, NULL, NULL, "verify");
        goto out;
    }
    rc = vr.passed ? RC_OK : RC_CHECK_FAILED;
    if (json) {
        printf("{\"command\":\"verify\",\"files\":{\"a\":");
        json_str(stdout, A.path);
        printf(",\"b\":");
        json_str(stdout, B.path);
        printf(",\"c_in\":");
        json_str(stdout, c_in ? C0.path : NULL);
        printf(",\"c\":");
        json_str(stdout, C.path);
        printf("},\"shape\":{\"m\":%lld,\"n\":%lld,\"k\":%lld},\"dtype\":\"%s\",\"transa\":\"%c\",\"transb\":\"%c\","
               "\"alpha\":%.17g,\"beta\":%.17g,\"mode\":\"%s\"",
               (long long)m, (long long)n, (long long)k, dtype_name(t), op_letter(ta), op_letter(tb), alpha, beta,
               vr.exact ? "exact" : "freivalds");
        json_num(stdout, "seconds", secs, 1);
        json_verify(stdout, &vr, 1);
        printf(",\"exit_status\":%d}\n", rc);
    } else if (!quiet) {
        char b[32];
        printf("oocgemm %s: verify %s against %s%s x %s%s%s%s: m=%lld n=%lld k=%lld %s\n", PACKAGE_VERSION, C.path,
               ta == OOC_OP_N ? "" : ta == OOC_OP_T ? "T:" : "H:", A.path,
               tb == OOC_OP_N ? "" : tb == OOC_OP_T ? "T:" : "H:", B.path, c_in ? " + beta x " : "",
               c_in ? C0.path : "", (long long)m, (long long)n, (long long)k, dtype_name(t));
        printf("read %s in %.3g s\n", human_bytes(vr.bytes_read, b, sizeof b), secs);
        print_verify(stdout, &vr, m, n);
    }
    if (!vr.passed && (quiet || json))
        fprintf(stderr, "%s: verification failed: max relative error %.3g exceeds the tolerance %.3g\n", progname,
                vr.max_rel_err, vr.tolerance);

out:
    if (rc != RC_OK && rc != RC_CHECK_FAILED && json) {
        printf("{\"command\":\"verify\",\"error\":");
        json_str(stdout, fail_msg);
        printf(",\"exit_status\":%d}\n", rc);
    }
    operand_free(&C);
    operand_free(&C0);
    operand_free(&B);
    operand_free(&A);
    ooc_destroy(h);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* oocgemm bench                                                             */

/* A shape of the bench: the named ones (--shape, --suite) or -m -n -k. */
typedef struct {
    const char *name;
    int64_t m, n, k;
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    double alpha, beta;
    int pinned;
    double target; /* floor/time PERFORMANCE.md asks of ours; 0: none but "no worse than cublasXt" */
    const char *about;
} bench_shape_t;

#define BENCH_S1 65536, 16384, 16384
#define BENCH_COL_NN OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N
static const bench_shape_t bench_presets[] = {
    {"S1", BENCH_S1, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0.97, "reference: bound by the multiply"},
    {"S2", 262144, 1024, 4096, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0.95, "reference: bound by copies in"},
    {"S3", BENCH_S1, OOC_R32, BENCH_COL_NN, 1.0, 0.0, 1, 0.97, "reference: single precision"},
    {"S1p", BENCH_S1, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 0, 0.90, "reference: S1 from pageable memory"},
    {"tall", 131072, 4096, 4096, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0, "many row blocks, small B"},
    {"square", 32768, 32768, 32768, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0, "B of 8.6 GB, 26 GB in all"},
    {"wide", 4096, 131072, 4096, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0, "few rows; B and C large"},
    {"smallk", 65536, 16384, 256, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0, "small k: bound by copies of C out"},
    {"beta1", BENCH_S1, OOC_R64, BENCH_COL_NN, 1.0, 1.0, 1, 0, "C0 read in (S1 shape)"},
    {"tn", 32768, 16384, 16384, OOC_R64, OOC_COL_MAJOR, OOC_OP_T, OOC_OP_N, 1.0, 0.0, 1, 0,
     "op(A) = A^T (TN)"},
    {"row", BENCH_S1, OOC_R64, OOC_ROW_MAJOR, OOC_OP_N, OOC_OP_N, 1.0, 0.0, 1, 0, "row-major (S1 shape)"},
};
#define BENCH_NPRESETS (sizeof bench_presets / sizeof bench_presets[0])
#define BENCH_MAX_SHAPES 64
#define BENCH_MAX_DIMS 32

typedef struct {
    bench_shape_t shapes[BENCH_MAX_SHAPES];
    int nshapes;
    int64_t m, n, k;
    int have_m, have_n, have_k, suite;
    /* given explicitly: applied to every shape */
    int set_dtype, set_layout, set_ta, set_tb, set_alpha, set_beta, set_memory;
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    double alpha, beta;
    int pinned;
    lib_opts_t lib;
    int64_t repeat;
    int xt_dims[BENCH_MAX_DIMS], nxt, xt_given;
    int xt_pinning; /* -1: auto; 0 off; 1 on; 2 both */
    int no_xt, no_serial, no_incore;
    int64_t check_rows;
    uint64_t seed;
    int csv, json, quiet;
} bench_opts_t;

enum { BM_OURS, BM_SERIAL, BM_XT, BM_INCORE };
enum { BS_RAN, BS_SKIPPED, BS_ERROR };

/* One method on one shape. */
typedef struct {
    int kind;
    char label[48];
    int block_dim;      /* BM_XT: as asked (0: cublasXt's default) */
    int dim_used;       /* BM_XT: the block dim it ran at */
    int pinning;        /* BM_XT: pinning mode on */
    int64_t block_rows; /* BM_SERIAL, BM_OURS */
    int status;         /* BS_* */
    char msg[PEER_MSG_LEN];
    double *times;
    int64_t ntimes;
    double best, median;
    int checked, passed;
    double max_err;
} bench_method_t;

/* Everything about one shape, for the text, CSV and JSON reports. */
typedef struct {
    bench_shape_t sh;
    run_opts_t o;
    floor_t fl;       /* R from in-core cuBLAS on the whole shape when it ran, else the probe */
    floor_t fl_probe; /* R from the short probe (min(dim, 16384)), for comparison */
    int rate_whole;   /* fl's R is in-core cuBLAS on this very shape */
    const char *backend;
    ooc_stats_t stats;
    int have_stats;
    bench_method_t *meth;
    int nmeth;
    int xt_best; /* index in meth, -1: none */
    double ratio; /* time of cublasXt's best / time of ours; 0: n/a */
    double tol;
    int64_t check_rows; /* 0: no check */
    const char *peers_skipped; /* why the peers did not run, or NULL */
    char error[PEER_MSG_LEN];  /* a failure of the shape as a whole, or "" */
} bench_result_t;

/* What holds for every shape of a run. */
typedef struct {
    int peers;               /* run the peers */
    const char *peers_reason; /* else why not */
    int device;
    char gpu[300];
} bench_env_t;

static void bench_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm bench [-m M -n N -k K] [--shape NAME[,NAME...]] [--suite] [OPTIONS]\n"
            "\n"
            "Time libooc_gemm against the floor of docs/PERFORMANCE.md and against its\n"
            "peers, on the same host buffers, and check every result against OpenBLAS.\n"
            "For each shape: allocate A, B and C once (pinned through ooc_host_alloc, or\n"
            "pageable), fill them once with seeded random values, measure pinned H2D\n"
            "and D2H bandwidth (1 GiB each way) and the in-core rate of cuBLAS on\n"
            "min(m,16384) x min(n,16384) x min(k,16384) (on the host backend: 64 MiB\n"
            "and 1024), compute the floor as 'oocgemm run --help' shows, then run\n"
            "each method: one untimed warm-up and R timed runs (best and median):\n"
            "  ours            ooc_gemm on a fresh handle at default settings (plus any\n"
            "                  library option given below)\n"
            "  serial loop     op(B) uploaded whole, then for each block of rows of op(A)\n"
            "                  (as many rows as our plan's blocks): synchronous copy in,\n"
            "                  cuBLAS gemm, synchronous copy out; one stream, no overlap;\n"
            "                  the time includes B's upload\n"
            "  cublasXt        on this one GPU, at its default block dim (first, on a\n"
            "                  fresh handle) and at each block dim of --xt-dims; the time\n"
            "                  is the gemm call alone. Pinned memory: pinning mode off\n"
            "                  (its default). Pageable: pinning mode on at every block\n"
            "                  dim, then off at the best one (see --xt-pinning)\n"
            "  in-core cuBLAS  when A, B and C fit in device memory: uploaded untimed,\n"
            "                  the multiply alone timed with CUDA events\n"
            "After each method's last run, the rows of C given by --check-rows are\n"
            "checked against OpenBLAS as in 'oocgemm run' (see its --help). Before each\n"
            "method C is set to NaN when beta = 0; when beta != 0 it is refilled with\n"
            "the same C0 before every run.\n"
            "\n"
            "Shapes (several may be given; they run in the order given):\n"
            "  -m M, -n N, -k K      one shape of your own (d, col-major, NN, beta 0,\n"
            "                        pinned unless the options below say otherwise)\n"
            "  --shape NAME[,NAME]   named shapes (case-insensitive):\n");
    for (size_t i = 0; i < BENCH_NPRESETS; i++) {
        const bench_shape_t *s = &bench_presets[i];
        char ops[8];
        snprintf(ops, sizeof ops, "%c%c", op_letter(s->ta), op_letter(s->tb));
        fprintf(f, "      %-7s %c %lldx%lldx%lld %s %s%s%s: %s\n", s->name, dtype_letter(s->dtype), (long long)s->m,
                (long long)s->n, (long long)s->k, s->layout == OOC_COL_MAJOR ? "col" : "row", ops,
                s->beta != 0.0 ? " beta=1" : "", s->pinned ? "" : " pageable", s->about);
    }
    fprintf(f,
            "  --suite               every named shape above, in that order (S1, S2, S3,\n"
            "                        S1p, then the sweep: tall, square, wide, smallk,\n"
            "                        beta1, tn, row), with --repeat 2 and --xt-dims\n"
            "                        2048,4096,8192 unless given. At most 26 GB of host\n"
            "                        memory at a time (square).\n"
            "  Targets (PERFORMANCE.md): ours' floor/time >= 0.97 on S1 and S3, >= 0.95\n"
            "  on S2, >= 0.90 on S1p; on every shape no slower than cublasXt's best.\n"
            "\n"
            "Problem options (given: they replace the named shapes' own values):\n"
            "  --dtype s|d|c|z, --layout col|row, --transa N|T|C, --transb N|T|C,\n"
            "  --alpha X, --beta X, --memory pinned|pageable   as in 'oocgemm run'\n"
            "  --seed S              seed of the random matrices (default 42)\n"
            "\n"
            "Methods:\n"
            "  --repeat R            timed runs per method after the warm-up (default 3;\n"
            "                        2 with --suite)\n"
            "  --xt-dims LIST        cublasXt block dims besides its default, comma-\n"
            "                        separated, or 'none' (default\n"
            "                        1024,2048,4096,8192,16384); a dim equal to the\n"
            "                        default is not run twice\n"
            "  --xt-pinning auto|off|on|both\n"
            "                        cublasXt's pinning mode (auto: as described above)\n"
            "  --no-xt, --no-serial, --no-incore\n"
            "                        leave that peer out\n"
            "  --check-rows N        rows of C checked (default 64); 0: no check\n"
            "\n"
            "Library options for ours (absent: defaults): --backend auto|cublas|host,\n"
            "  --device N (the peers run there too), --device-mem, --host-mem,\n"
            "  --block-rows, --ring, --streams, --staging-threads, --tf32 (also for\n"
            "  the serial loop and in-core cuBLAS; cublasXt has no TF32 mode), as in\n"
            "  'oocgemm run'.\n"
            "  The peers need a GPU. Without one, bench stops (exit 3) unless given\n"
            "  --backend host: then ours and the floor run on the host backend and the\n"
            "  peers are skipped, which is also the case with --backend host on a GPU.\n"
            "\n"
            "Output: per shape, the rates and the floor, ours' plan, and a table:\n"
            "  method | best s | median s | TFLOP/s | floor/time | check (PASS/FAIL and\n"
            "  the largest relative error), then\n"
            "    ours / cublasXt best = X.XX (cublasXt best block dim D)\n"
            "  i.e. cublasXt's best time over ours (> 1: ours is faster; only results\n"
            "  that passed their check compete), and a summary of all shapes.\n"
            "  --csv                 a header and one row per (shape, method) instead\n"
            "  --json                one JSON document instead: per shape bw, rates,\n"
            "                        floor, plan, methods with times and checks, ratio\n"
            "  -q, --quiet           print nothing but errors (and failed checks)\n"
            "  -h, --help            this help\n"
            "\n"
            "Exit status 1 when any check failed; else 3 when any method failed to run\n"
            "(its row says ERROR) or a shape could not be set up; skipped peers (not\n"
            "built, does not fit) are not failures.\n"
            "\n");
    print_exit_codes(f);
}

static const struct option bench_long_opts[] = {
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"suite", no_argument, NULL, OPT_SUITE},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"transa", required_argument, NULL, OPT_TRANSA},
    {"transb", required_argument, NULL, OPT_TRANSB},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"seed", required_argument, NULL, OPT_SEED},
    {"device", required_argument, NULL, OPT_DEVICE},
    LIB_LONG_OPTS,
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"xt-dims", required_argument, NULL, OPT_XT_DIMS},
    {"xt-pinning", required_argument, NULL, OPT_XT_PINNING},
    {"no-xt", no_argument, NULL, OPT_NO_XT},
    {"no-serial", no_argument, NULL, OPT_NO_SERIAL},
    {"no-incore", no_argument, NULL, OPT_NO_INCORE},
    {"check-rows", required_argument, NULL, OPT_CHECK_ROWS},
    {"csv", no_argument, NULL, OPT_CSV},
    {"json", no_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int bench_add_shape(const char *cmd, bench_opts_t *o, const bench_shape_t *s)
{
    if (o->nshapes >= BENCH_MAX_SHAPES) return usage_error(cmd, "more than %d shapes", BENCH_MAX_SHAPES);
    o->shapes[o->nshapes++] = *s;
    return RC_OK;
}

/* --shape NAME[,NAME...] */
static int bench_parse_shapes(const char *cmd, bench_opts_t *o, const char *arg)
{
    const char *p = arg;
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t i;
        for (i = 0; i < BENCH_NPRESETS; i++)
            if (strlen(bench_presets[i].name) == len && strncasecmp(p, bench_presets[i].name, len) == 0) break;
        if (i == BENCH_NPRESETS) {
            char names[256] = "";
            for (size_t j = 0; j < BENCH_NPRESETS; j++) {
                strcat(names, j ? ", " : "");
                strcat(names, bench_presets[j].name);
            }
            return usage_error(cmd, "--shape: '%.*s' is not one of %s", (int)len, p, names);
        }
        if (bench_add_shape(cmd, o, &bench_presets[i]) != RC_OK) return RC_USAGE;
        if (p[len] == '\0') return RC_OK;
        p += len + 1;
    }
}

/* --xt-dims LIST|none */
static int bench_parse_dims(const char *cmd, bench_opts_t *o, const char *arg)
{
    o->nxt = 0;
    o->xt_given = 1;
    if (strcasecmp(arg, "none") == 0) return RC_OK;
    char buf[512];
    if (strlen(arg) >= sizeof buf) return usage_error(cmd, "--xt-dims: list too long");
    strcpy(buf, arg);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t v;
        if (parse_int(cmd, "--xt-dims", tok, 1, 1 << 20, &v)) return RC_USAGE;
        if (o->nxt >= BENCH_MAX_DIMS) return usage_error(cmd, "--xt-dims: more than %d dims", BENCH_MAX_DIMS);
        o->xt_dims[o->nxt++] = (int)v;
    }
    if (o->nxt == 0) return usage_error(cmd, "--xt-dims: '%s' holds no block dim (or say 'none')", arg);
    return RC_OK;
}

/* Parse `oocgemm bench` options. Returns RC_OK, RC_USAGE, or -1 for --help. */
static int bench_parse(int argc, char **argv, bench_opts_t *o)
{
    const char *cmd = "bench";
    static const int default_dims[] = {1024, 2048, 4096, 8192, 16384}, suite_dims[] = {2048, 4096, 8192};
    int repeat_given = 0;

    memset(o, 0, sizeof *o);
    o->dtype = OOC_R64;
    o->layout = OOC_COL_MAJOR;
    o->ta = o->tb = OOC_OP_N;
    o->alpha = 1.0;
    o->pinned = 1;
    o->lib.backend = OOC_BACKEND_AUTO;
    o->repeat = 3;
    o->xt_pinning = -1;
    o->check_rows = 64;
    o->seed = 42;

    opterr = 0;
    optind = 1;
    for (;;) {
        int longind = -1;
        int c = getopt_long(argc, argv, ":m:n:k:qh", bench_long_opts, &longind);
        if (c == -1) break;
        char optname[64] = "";
        if (longind >= 0) snprintf(optname, sizeof optname, "--%s", bench_long_opts[longind].name);
        int lib = lib_opt_parse(cmd, c, optname, optarg, &o->lib);
        if (lib < 0) return RC_USAGE;
        if (lib > 0) continue;
        switch (c) {
        case 'm':
            if (parse_int(cmd, "-m", optarg, 1, INT64_MAX, &o->m)) return RC_USAGE;
            o->have_m = 1;
            break;
        case 'n':
            if (parse_int(cmd, "-n", optarg, 1, INT64_MAX, &o->n)) return RC_USAGE;
            o->have_n = 1;
            break;
        case 'k':
            if (parse_int(cmd, "-k", optarg, 1, INT64_MAX, &o->k)) return RC_USAGE;
            o->have_k = 1;
            break;
        case OPT_SHAPE:
            if (bench_parse_shapes(cmd, o, optarg) != RC_OK) return RC_USAGE;
            break;
        case OPT_SUITE: o->suite = 1; break;
        case OPT_DTYPE:
            if (strcasecmp(optarg, "s") == 0) o->dtype = OOC_R32;
            else if (strcasecmp(optarg, "d") == 0) o->dtype = OOC_R64;
            else if (strcasecmp(optarg, "c") == 0) o->dtype = OOC_C32;
            else if (strcasecmp(optarg, "z") == 0) o->dtype = OOC_C64;
            else return usage_error(cmd, "--dtype: '%s' is not s, d, c or z", optarg);
            o->set_dtype = 1;
            break;
        case OPT_LAYOUT:
            if (strcasecmp(optarg, "col") == 0) o->layout = OOC_COL_MAJOR;
            else if (strcasecmp(optarg, "row") == 0) o->layout = OOC_ROW_MAJOR;
            else return usage_error(cmd, "--layout: '%s' is not col or row", optarg);
            o->set_layout = 1;
            break;
        case OPT_TRANSA:
            if (parse_op(cmd, "--transa", optarg, &o->ta)) return RC_USAGE;
            o->set_ta = 1;
            break;
        case OPT_TRANSB:
            if (parse_op(cmd, "--transb", optarg, &o->tb)) return RC_USAGE;
            o->set_tb = 1;
            break;
        case OPT_ALPHA:
            if (parse_real(cmd, "--alpha", optarg, 0, &o->alpha)) return RC_USAGE;
            o->set_alpha = 1;
            break;
        case OPT_BETA:
            if (parse_real(cmd, "--beta", optarg, 0, &o->beta)) return RC_USAGE;
            o->set_beta = 1;
            break;
        case OPT_MEMORY:
            if (strcasecmp(optarg, "pinned") == 0) o->pinned = 1;
            else if (strcasecmp(optarg, "pageable") == 0) o->pinned = 0;
            else return usage_error(cmd, "--memory: '%s' is not pinned or pageable", optarg);
            o->set_memory = 1;
            break;
        case OPT_SEED:
            if (parse_seed(cmd, optarg, &o->seed)) return RC_USAGE;
            break;
        case OPT_REPEAT:
            if (parse_int(cmd, "--repeat", optarg, 1, 1000000, &o->repeat)) return RC_USAGE;
            repeat_given = 1;
            break;
        case OPT_XT_DIMS:
            if (bench_parse_dims(cmd, o, optarg) != RC_OK) return RC_USAGE;
            break;
        case OPT_XT_PINNING:
            if (strcasecmp(optarg, "auto") == 0) o->xt_pinning = -1;
            else if (strcasecmp(optarg, "off") == 0) o->xt_pinning = 0;
            else if (strcasecmp(optarg, "on") == 0) o->xt_pinning = 1;
            else if (strcasecmp(optarg, "both") == 0) o->xt_pinning = 2;
            else return usage_error(cmd, "--xt-pinning: '%s' is not auto, off, on or both", optarg);
            break;
        case OPT_NO_XT: o->no_xt = 1; break;
        case OPT_NO_SERIAL: o->no_serial = 1; break;
        case OPT_NO_INCORE: o->no_incore = 1; break;
        case OPT_CHECK_ROWS: {
            int64_t v;
            if (parse_int(cmd, "--check-rows", optarg, 0, INT32_MAX, &v)) return RC_USAGE;
            o->check_rows = v;
            break;
        }
        case OPT_CSV: o->csv = 1; break;
        case OPT_JSON: o->json = 1; break;
        case 'q': o->quiet = 1; break;
        case 'h': bench_usage(stdout); return -1;
        default: return getopt_failure(cmd, c, argv, "mnkqh");
        }
    }
    if (optind < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (o->csv && o->json) return usage_error(cmd, "--csv and --json exclude each other");
    if (o->have_m || o->have_n || o->have_k) {
        if (!o->have_m) return usage_error(cmd, "-m M is required with -n and -k (rows of op(A) and C)");
        if (!o->have_n) return usage_error(cmd, "-n N is required with -m and -k (columns of op(B) and C)");
        if (!o->have_k) return usage_error(cmd, "-k K is required with -m and -n (columns of op(A), rows of op(B))");
        bench_shape_t s = {"custom", o->m, o->n, o->k, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0, "given"};
        if (bench_add_shape(cmd, o, &s) != RC_OK) return RC_USAGE;
    }
    if (o->suite)
        for (size_t i = 0; i < BENCH_NPRESETS; i++)
            if (bench_add_shape(cmd, o, &bench_presets[i]) != RC_OK) return RC_USAGE;
    if (o->nshapes == 0) return usage_error(cmd, "no shape: give -m M -n N -k K, --shape NAME or --suite");
    if (o->suite && !repeat_given) o->repeat = 2;
    if (!o->xt_given) {
        const int *d = o->suite ? suite_dims : default_dims;
        o->nxt = o->suite ? 3 : 5;
        memcpy(o->xt_dims, d, (size_t)o->nxt * sizeof *d);
    }
    for (int i = 0; i < o->nshapes; i++) { /* what was given replaces the shapes' own values */
        bench_shape_t *s = &o->shapes[i];
        if (o->set_dtype) s->dtype = o->dtype;
        if (o->set_layout) s->layout = o->layout;
        if (o->set_ta) s->ta = o->ta;
        if (o->set_tb) s->tb = o->tb;
        if (o->set_alpha) s->alpha = o->alpha;
        if (o->set_beta) s->beta = o->beta;
        if (o->set_memory) s->pinned = o->pinned;
    }
    return RC_OK;
}

/* Progress on stderr, only for a terminal. */
static void bench_progress(const bench_opts_t *bo, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bench_progress(const bench_opts_t *bo, const char *fmt, ...)
{
    if (bo->quiet || !isatty(STDERR_FILENO)) return;
    va_list ap;
    fprintf(stderr, "\r%s bench: ", progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\033[K", stderr);
    fflush(stderr);
}

static void bench_progress_end(const bench_opts_t *bo)
{
    if (bo->quiet || !isatty(STDERR_FILENO)) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* The buffers of one shape and what a method's one run needs. */
typedef struct {
    const bench_opts_t *bo;
    bench_result_t *res;
    matrix_t A, B, C;
    const void *alpha, *beta; /* one element of the dtype */
    ooc_handle_t *ours;       /* the handle ours runs on */
    peer_ctx_t *peers;
    peer_gemm_t g;
    check_ref_t ref;
    int have_ref;
    int64_t *rows;
    void *c0;
} bench_shape_ctx_t;

/* One timed run of a method: PEER_OK with *seconds, else a PEER_* status and msg. */
static int bench_one(bench_shape_ctx_t *x, const bench_method_t *mt, double *seconds, char *msg, size_t len)
{
    const run_opts_t *o = &x->res->o;
    switch (mt->kind) {
    case BM_OURS: {
        double t0 = now_seconds();
        ooc_status_t st = ooc_gemm(x->ours, o->dtype, o->layout, o->ta, o->tb, o->m, o->n, o->k, x->alpha, x->A.p,
                                   x->A.ld, x->B.p, x->B.ld, x->beta, x->C.p, x->C.ld);
        *seconds = now_seconds() - t0;
        if (st == OOC_SUCCESS) return PEER_OK;
        snprintf(msg, len, "ooc_gemm: %s: %s", ooc_status_string(st), ooc_last_error(x->ours));
        return PEER_FAILED;
    }
    case BM_SERIAL: return peer_serial(x->peers, &x->g, mt->block_rows, seconds, msg, len);
    case BM_XT: return peer_cublasxt(x->peers, &x->g, mt->block_dim, mt->pinning, seconds, msg, len);
    default: break;
    }
    snprintf(msg, len, "internal: method %d", mt->kind);
    return PEER_FAILED;
}

/* C as every method must find it: NaN when beta = 0 (before the method),
 * C0 when beta != 0 (before every run). */
static void bench_prepare_c(bench_shape_ctx_t *x, int first)
{
    const run_opts_t *o = &x->res->o;
    if (o->beta != 0.0) fill_random(o->dtype, x->C.p, x->C.elems, o->seed, 3);
    else if (first) fill_nan(o->dtype, x->C.p, x->C.elems);
}

/* Warm-up, R timed runs, check. */
static void bench_method(bench_shape_ctx_t *x, bench_method_t *mt)
{
    const bench_opts_t *bo = x->bo;
    bench_result_t *res = x->res;
    int64_t R = bo->repeat;
    mt->times = calloc((size_t)R, sizeof *mt->times);
    if (mt->times == NULL) {
        mt->status = BS_ERROR;
        snprintf(mt->msg, sizeof mt->msg, "out of host memory");
        return;
    }
    int st = PEER_OK;
    if (mt->kind == BM_INCORE) {
        bench_progress(bo, "%s: %s", res->sh.name, mt->label);
        bench_prepare_c(x, 1);
        st = peer_incore(x->peers, &x->g, (int)R, mt->times, mt->msg, sizeof mt->msg);
    } else {
        for (int64_t it = 0; it <= R && st == PEER_OK; it++) { /* it 0 warms up */
            bench_progress(bo, "%s: %s, %s %lld of %lld", res->sh.name, mt->label, it ? "run" : "warm-up",
                           (long long)(it ? it : 1), (long long)(it ? R : 1));
            bench_prepare_c(x, it == 0);
            double s = 0;
            st = bench_one(x, mt, &s, mt->msg, sizeof mt->msg);
            if (st == PEER_OK && it > 0) mt->times[it - 1] = s;
        }
    }
    bench_progress_end(bo);
    if (st != PEER_OK) {
        mt->status = st == PEER_FAILED ? BS_ERROR : BS_SKIPPED;
        return;
    }
    mt->status = BS_RAN;
    mt->ntimes = R;
    double *sorted = malloc((size_t)R * sizeof *sorted); /* the times stay in run order */
    if (sorted == NULL) {
        mt->status = BS_ERROR;
        snprintf(mt->msg, sizeof mt->msg, "out of host memory");
        return;
    }
    memcpy(sorted, mt->times, (size_t)R * sizeof *sorted);
    times_summary(sorted, R, &mt->best, &mt->median);
    free(sorted);
    if (x->have_ref) {
        bench_progress(bo, "%s: %s, checking", res->sh.name, mt->label);
        mt->max_err = check_compare(&res->o, &x->ref, &x->C, x->c0, x->rows, res->check_rows);
        mt->checked = 1;
        mt->passed = mt->max_err <= res->tol;
        bench_progress_end(bo);
    }
}

static bench_method_t *bench_new_method(bench_result_t *res, int kind, const char *label)
{
    bench_method_t *mt = &res->meth[res->nmeth++];
    memset(mt, 0, sizeof *mt);
    mt->kind = kind;
    snprintf(mt->label, sizeof mt->label, "%s", label);
    return mt;
}

/* Usable for "cublasXt best": ran, and passed its check if checked. */
static int bench_valid(const bench_method_t *mt)
{
    return mt->status == BS_RAN && (!mt->checked || mt->passed);
}

/* "cublasXt 2048", "cublasXt default (1024)", with " pin on|off" when the
 * pinning mode is not simply cublasXt's default for pinned memory. */
static void bench_xt_label(char *buf, size_t len, int dim, int used, int pin, int show_pin)
{
    if (dim > 0) snprintf(buf, len, "cublasXt %d", dim);
    else if (used > 0) snprintf(buf, len, "cublasXt default (%d)", used);
    else snprintf(buf, len, "cublasXt default");
    if (show_pin) snprintf(buf + strlen(buf), len - strlen(buf), " pin %s", pin ? "on" : "off");
}

/* The cublasXt runs of a shape: the default block dim first on a fresh
 * handle, then each dim of --xt-dims, with the pinning modes asked for. */
static void bench_xt(bench_shape_ctx_t *x)
{
    const bench_opts_t *bo = x->bo;
    bench_result_t *res = x->res;
    int pageable = !res->o.pinned;
    int mode = bo->xt_pinning >= 0 ? bo->xt_pinning : pageable ? 1 : 0; /* auto: on for pageable */
    int show_pin = pageable || mode != 0;
    int first = res->nmeth;
    for (int d = -1; d < bo->nxt; d++) {
        int dim = d < 0 ? 0 : bo->xt_dims[d];
        if (dim > 0 && dim == peer_cublasxt_default_dim(x->peers)) continue; /* the default ran already */
        for (int pin = 0; pin <= 1; pin++) {
            if (mode != 2 && pin != mode) continue;
            char label[48];
            bench_xt_label(label, sizeof label, dim, 0, pin, show_pin);
            bench_method_t *mt = bench_new_method(res, BM_XT, label);
            mt->block_dim = dim;
            mt->pinning = pin;
            bench_method(x, mt);
            mt->dim_used = dim ? dim : peer_cublasxt_default_dim(x->peers);
            bench_xt_label(mt->label, sizeof mt->label, dim, mt->dim_used, pin, show_pin);
            if (mt->status == BS_ERROR && strstr(mt->msg, "cublasXtCreate")) return; /* no handle: no more */
        }
    }
    if (bo->xt_pinning < 0 && pageable) { /* auto, pageable: off again at the best dim */
        int best = -1;
        for (int i = first; i < res->nmeth; i++)
            if (bench_valid(&res->meth[i]) && (best < 0 || res->meth[i].best < res->meth[best].best)) best = i;
        if (best >= 0) {
            int dim = res->meth[best].block_dim, used = res->meth[best].dim_used;
            char label[48];
            bench_xt_label(label, sizeof label, dim, used, 0, 1);
            bench_method_t *mt = bench_new_method(res, BM_XT, label);
            mt->block_dim = dim;
            mt->dim_used = used;
            bench_method(x, mt);
        }
    }
}

/* Run every method on one shape into *res. Returns RC_OK, or RC_USAGE for a
 * shape too large to describe (message printed); other failures are kept
 * in res->error. */
static int bench_shape(const bench_opts_t *bo, const bench_env_t *env, const bench_shape_t *sh, bench_result_t *res)
{
    const char *cmd = "bench";
    bench_shape_ctx_t x;
    memset(&x, 0, sizeof x);
    memset(res, 0, sizeof *res);
    x.bo = bo;
    x.res = res;
    res->sh = *sh;
    res->xt_best = -1;
    res->backend = "none";
    run_opts_t *o = &res->o;
    o->m = sh->m, o->n = sh->n, o->k = sh->k;
    o->dtype = sh->dtype;
    o->layout = sh->layout;
    o->ta = sh->ta, o->tb = sh->tb;
    o->alpha = sh->alpha, o->beta = sh->beta;
    o->pinned = sh->pinned;
    o->lib = bo->lib;
    o->repeat = bo->repeat;
    o->seed = bo->seed;
    o->check_rows = bo->check_rows;
    res->tol = check_tolerance(o);
    res->check_rows = o->check_rows < o->m ? o->check_rows : o->m;

    if (matrix_shape(cmd, "A", o, o->ta, o->m, o->k, &x.A) || matrix_shape(cmd, "B", o, o->tb, o->k, o->n, &x.B) ||
        matrix_shape(cmd, "C", o, OOC_OP_N, o->m, o->n, &x.C))
        return RC_USAGE;
    size_t e = dtype_size(o->dtype), c0_bytes = 0;
    int64_t r = res->check_rows;
    if (r > 0 && (__builtin_mul_overflow((size_t)r, (size_t)o->n, &c0_bytes) ||
                  __builtin_mul_overflow(c0_bytes, e, &c0_bytes))) {
        usage_error(cmd, "--check-rows %lld: the checked rows of C are too large", (long long)r);
        return RC_USAGE;
    }
    int nmax = 4 + 2 * (bo->nxt + 2);
    res->meth = calloc((size_t)nmax, sizeof *res->meth);

    ooc_handle_t *h = NULL;
    ooc_status_t st = ooc_create(&h);
    if (st != OOC_SUCCESS || res->meth == NULL) {
        snprintf(res->error, sizeof res->error, "%s", res->meth ? ooc_status_string(st) : "out of host memory");
        goto out;
    }
    if ((st = lib_opts_apply(h, &o->lib)) != OOC_SUCCESS) {
        snprintf(res->error, sizeof res->error, "ooc_set: %s: %s", ooc_status_string(st), ooc_last_error(h));
        goto out;
    }
    bench_progress(bo, "%s: allocating and filling A, B and C", sh->name);
    if (matrix_alloc(h, o->pinned, &x.A, "A", res->error, sizeof res->error) != RC_OK ||
        matrix_alloc(h, o->pinned, &x.B, "B", res->error, sizeof res->error) != RC_OK ||
        matrix_alloc(h, o->pinned, &x.C, "C", res->error, sizeof res->error) != RC_OK)
        goto out;
    x.rows = r > 0 ? malloc((size_t)r * sizeof *x.rows) : NULL;
    x.c0 = r > 0 && o->beta != 0.0 ? malloc(c0_bytes) : NULL;
    if ((r > 0 && !x.rows) || (r > 0 && o->beta != 0.0 && !x.c0)) {
        snprintf(res->error, sizeof res->error, "out of host memory for the check");
        goto out;
    }
    fill_random(o->dtype, x.A.p, x.A.elems, o->seed, 1);
    fill_random(o->dtype, x.B.p, x.B.elems, o->seed, 2);
    if (o->beta != 0.0) fill_random(o->dtype, x.C.p, x.C.elems, o->seed, 3);
    if (r > 0) {
        pick_rows(o->m, r, x.rows);
        if (x.c0) save_rows(o, x.C.p, x.rows, r, x.c0);
        bench_progress(bo, "%s: reference rows with OpenBLAS", sh->name);
        int crc = check_ref(o, &x.A, &x.B, x.c0, x.rows, r, &x.ref);
        bench_progress_end(bo);
        if (crc == RC_RUNTIME) {
            snprintf(res->error, sizeof res->error, "out of host memory for the check");
            goto out;
        }
        x.have_ref = crc == RC_OK;
        if (!x.have_ref) res->check_rows = 0; /* beyond the BLAS int range: no check */
    }

    /* the floor, measured on this machine now, before any method */
    bench_progress(bo, "%s: measuring bandwidth and the in-core rate", sh->name);
    floor_measure(h, o->dtype, o->m, o->n, o->k, bo->quiet, &res->fl);
    floor_compute(&res->fl, o->dtype, o->m, o->n, o->k, o->beta != 0.0);
    bench_progress_end(bo);
    res->backend = ooc_backend_name(h);

    double alpha[2] = {o->alpha, 0.0}, beta[2] = {o->beta, 0.0};
    float alpha_f[2] = {(float)o->alpha, 0.0f}, beta_f[2] = {(float)o->beta, 0.0f};
    x.alpha = dtype_double(o->dtype) ? (const void *)alpha : (const void *)alpha_f;
    x.beta = dtype_double(o->dtype) ? (const void *)beta : (const void *)beta_f;

    /* ours, on a fresh handle; it is destroyed before the peers run so that
     * its buffers leave the device to them */
    int separate = env->peers;
    if (separate) {
        ooc_handle_t *ho = NULL;
        st = ooc_create(&ho);
        if (st == OOC_SUCCESS && (st = lib_opts_apply(ho, &o->lib)) != OOC_SUCCESS) {
            ooc_destroy(ho);
            ho = NULL;
        }
        if (st != OOC_SUCCESS) {
            snprintf(res->error, sizeof res->error, "ooc_create: %s", ooc_status_string(st));
            goto out;
        }
        x.ours = ho;
    } else {
        x.ours = h;
    }
    bench_method_t *ours = bench_new_method(res, BM_OURS, "ours");
    bench_method(&x, ours);
    res->have_stats = ours->status == BS_RAN && ooc_get_stats(x.ours, &res->stats) == OOC_SUCCESS;
    if (res->have_stats) {
        ours->block_rows = res->stats.block_rows;
        res->backend = ooc_backend_name(x.ours);
    }
    if (separate) ooc_destroy(x.ours);
    x.ours = NULL;

    if (!env->peers) {
        res->peers_skipped = env->peers_reason;
    } else {
        char msg[PEER_MSG_LEN];
        int pst = peer_open(env->device, o->lib.tf32, &x.peers, msg, sizeof msg);
        if (pst != PEER_OK) {
            bench_method_t *mt = bench_new_method(res, BM_SERIAL, "peers");
            mt->status = pst == PEER_FAILED ? BS_ERROR : BS_SKIPPED;
            snprintf(mt->msg, sizeof mt->msg, "%s", msg);
        } else {
            x.g = (peer_gemm_t){o->dtype, o->layout, o->ta, o->tb, o->m, o->n, o->k, x.alpha, x.beta,
                                x.A.p, x.A.ld, x.B.p, x.B.ld, x.C.p, x.C.ld};
            if (!bo->no_serial) {
                int64_t brows = res->have_stats && res->stats.block_rows > 0 ? res->stats.block_rows : 0;
                char label[48];
                if (brows > 0) snprintf(label, sizeof label, "serial loop (%lld rows)", (long long)brows);
                else snprintf(label, sizeof label, "serial loop (8192 rows)");
                bench_method_t *mt = bench_new_method(res, BM_SERIAL, label);
                mt->block_rows = brows > 0 ? brows : 8192;
                bench_method(&x, mt);
            }
            if (!bo->no_xt) bench_xt(&x);
            if (!bo->no_incore) {
                bench_method_t *ic = bench_new_method(res, BM_INCORE, "in-core cuBLAS");
                bench_method(&x, ic);
                /* PERFORMANCE.md's R is in-core cuBLAS on the same shape: when the
                 * whole problem fitted, that run is the rate (a short probe runs
                 * at boost clocks a long multiply does not hold) */
                if (bench_valid(ic) && ic->best > 0 && res->fl.have) {
                    double flops = (dtype_complex(o->dtype) ? 8.0 : 2.0) * (double)o->m * (double)o->n * (double)o->k;
                    res->fl_probe = res->fl;
                    res->fl.rate = flops / ic->best / 1e12;
                    res->fl.pm = o->m;
                    res->fl.pn = o->n;
                    res->fl.pk = o->k;
                    floor_compute(&res->fl, o->dtype, o->m, o->n, o->k, o->beta != 0.0);
                    res->rate_whole = 1;
                }
            }
            peer_close(x.peers);
            x.peers = NULL;
        }
    }

    /* cublasXt's best, and ours over it */
    for (int i = 0; i < res->nmeth; i++) {
        const bench_method_t *mt = &res->meth[i];
        if (mt->kind == BM_XT && bench_valid(mt) &&
            (res->xt_best < 0 || mt->best < res->meth[res->xt_best].best))
            res->xt_best = i;
    }
    if (res->xt_best >= 0 && res->meth[0].status == BS_RAN && res->meth[0].best > 0)
        res->ratio = res->meth[res->xt_best].best / res->meth[0].best;

out:
    if (x.have_ref) check_ref_free(&x.ref);
    free(x.c0);
    free(x.rows);
    matrix_free(h, o->pinned, &x.C);
    matrix_free(h, o->pinned, &x.B);
    matrix_free(h, o->pinned, &x.A);
    ooc_destroy(h);
    return RC_OK;
}

static void bench_result_free(bench_result_t *res)
{
    for (int i = 0; i < res->nmeth; i++) free(res->meth[i].times);
    free(res->meth);
    res->meth = NULL;
    res->nmeth = 0;
}

static double bench_flops(const run_opts_t *o)
{
    return (dtype_complex(o->dtype) ? 8.0 : 2.0) * (double)o->m * (double)o->n * (double)o->k;
}

static const char *bench_method_name(int kind)
{
    switch (kind) {
    case BM_OURS: return "ours";
    case BM_SERIAL: return "serial";
    case BM_XT: return "cublasxt";
    case BM_INCORE: return "incore";
    }
    return "?";
}

static const char *bench_status_name(int st) { return st == BS_RAN ? "ok" : st == BS_SKIPPED ? "skipped" : "error"; }

/* The shape's first line: "S1: DGEMM col-major NN m=... ..." */
static void bench_describe(FILE *f, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    char b[32];
    uint64_t bytes = (uint64_t)((double)dtype_size(o->dtype) *
                                ((double)o->m * (double)o->k + (double)o->k * (double)o->n + (double)o->m * (double)o->n));
    fprintf(f, "%s: %cGEMM %s-major %c%c m=%lld n=%lld k=%lld alpha=%g beta=%g, A/B/C %s (%s), best of %lld after a warm-up\n",
            res->sh.name, dtype_letter(o->dtype) - 'a' + 'A', o->layout == OOC_COL_MAJOR ? "col" : "row",
            op_letter(o->ta), op_letter(o->tb), (long long)o->m, (long long)o->n, (long long)o->k, o->alpha, o->beta,
            o->pinned ? "pinned" : "pageable", human_bytes(bytes, b, sizeof b), (long long)o->repeat);
}

static void bench_print_text(FILE *f, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    bench_describe(f, res);
    if (res->error[0]) {
        fprintf(f, "error: %s\n\n", res->error);
        return;
    }
    floor_print(f, &res->fl, o->dtype, -1.0);
    if (res->rate_whole)
        fprintf(f, "  (R: in-core cuBLAS on the whole shape, %.3g TFLOP/s; the short %lldx%lldx%lld probe gave %.3g "
                   "TFLOP/s, a floor of %.3g s)\n",
                res->fl.rate, (long long)res->fl_probe.pm, (long long)res->fl_probe.pn, (long long)res->fl_probe.pk,
                res->fl_probe.rate, res->fl_probe.floor_s);
    if (res->have_stats) {
        fputs("ours: ", f);
        print_plan(f, res->backend, &res->stats);
    }
    double flops = bench_flops(o);
    fprintf(f, "  %-34s %10s %10s %9s %10s  %s\n", "method", "best s", "median s", "TFLOP/s", "floor/time", "check");
    for (int i = 0; i < res->nmeth; i++) {
        const bench_method_t *mt = &res->meth[i];
        if (mt->status != BS_RAN) {
            fprintf(f, "  %-34s %s: %s\n", mt->label, mt->status == BS_SKIPPED ? "skipped" : "ERROR", mt->msg);
            continue;
        }
        char ratio[16] = "n/a", check[48] = "-";
        if (res->fl.have) snprintf(ratio, sizeof ratio, "%.2f", mt->best > 0 ? res->fl.floor_s / mt->best : INFINITY);
        if (mt->checked) snprintf(check, sizeof check, "%s %.2g", mt->passed ? "PASS" : "FAIL", mt->max_err);
        fprintf(f, "  %-34s %10.4g %10.4g %9.3g %10s  %s\n", mt->label, mt->best, mt->median,
                mt->best > 0 ? flops / mt->best / 1e12 : INFINITY, ratio, check);
    }
    if (res->peers_skipped) fprintf(f, "  peers skipped: %s\n", res->peers_skipped);
    if (res->ratio > 0)
        fprintf(f, "ours / cublasXt best = %.2f (cublasXt best block dim %d%s; > 1: ours is faster)\n", res->ratio,
                res->meth[res->xt_best].dim_used,
                res->meth[res->xt_best].pinning ? ", pinning on" : "");
    else
        fprintf(f, "ours / cublasXt best = n/a (no cublasXt result)\n");
    if (res->check_rows > 0)
        fprintf(f, "check: %lld row%s of C against OpenBLAS per method, tolerance %.2g\n", (long long)res->check_rows,
                res->check_rows == 1 ? "" : "s", res->tol);
    fputc('\n', f);
}

/* A CSV field: quoted when it holds a comma, quote or newline. */
static void csv_str(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v, int available)
{
    fputc(',', f);
    if (available && isfinite(v)) fprintf(f, "%.6g", v);
}

static void bench_csv_header(FILE *f)
{
    fputs("shape,dtype,layout,transa,transb,m,n,k,alpha,beta,memory,backend,bw_h2d_gbps,bw_d2h_gbps,"
          "incore_tflops,floor_s,method,label,block_dim,pinning,block_rows,status,message,best_s,median_s,"
          "tflops,floor_over_time,check,max_rel_err,tolerance,ours_over_xt_best\n",
          f);
}

static void bench_print_csv(FILE *f, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    const floor_t *fl = &res->fl;
    int n = res->nmeth ? res->nmeth : 1; /* a shape that failed as a whole still gets a row */
    for (int i = 0; i < n; i++) {
        const bench_method_t *mt = res->nmeth ? &res->meth[i] : NULL;
        csv_str(f, res->sh.name);
        fprintf(f, ",%c,%s,%c,%c,%lld,%lld,%lld,%.17g,%.17g,%s,%s", dtype_letter(o->dtype),
                o->layout == OOC_COL_MAJOR ? "col" : "row", op_letter(o->ta), op_letter(o->tb), (long long)o->m,
                (long long)o->n, (long long)o->k, o->alpha, o->beta, o->pinned ? "pinned" : "pageable",
                res->backend);
        csv_num(f, fl->bw_h2d, fl->have);
        csv_num(f, fl->bw_d2h, fl->have);
        csv_num(f, fl->rate, fl->have);
        csv_num(f, fl->floor_s, fl->have);
        if (mt == NULL) {
            fputs(",,,,,,error,", f);
            csv_str(f, res->error);
            fputs(",,,,,,,,\n", f);
            continue;
        }
        fprintf(f, ",%s,", bench_method_name(mt->kind));
        csv_str(f, mt->label);
        fputc(',', f);
        if (mt->kind == BM_XT) fprintf(f, "%d,%s", mt->dim_used, mt->pinning ? "on" : "off");
        else fputc(',', f);
        fputc(',', f);
        if (mt->block_rows > 0) fprintf(f, "%lld", (long long)mt->block_rows);
        fprintf(f, ",%s,", bench_status_name(mt->status));
        csv_str(f, mt->msg);
        int ran = mt->status == BS_RAN;
        csv_num(f, mt->best, ran);
        csv_num(f, mt->median, ran);
        csv_num(f, mt->best > 0 ? bench_flops(o) / mt->best / 1e12 : 0, ran && mt->best > 0);
        csv_num(f, mt->best > 0 ? fl->floor_s / mt->best : 0, ran && fl->have && mt->best > 0);
        fprintf(f, ",%s", mt->checked ? (mt->passed ? "PASS" : "FAIL") : "");
        csv_num(f, mt->max_err, mt->checked);
        csv_num(f, res->tol, mt->checked);
        csv_num(f, res->ratio, res->ratio > 0);
        fputc('\n', f);
    }
}

static void bench_print_json(FILE *f, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    const floor_t *fl = &res->fl;
    int have = fl->have;
    fputs("{\"name\":", f);
    json_str(f, res->sh.name);
    fprintf(f, ",\"dtype\":\"%c\",\"layout\":\"%s\",\"transa\":\"%c\",\"transb\":\"%c\",\"m\":%lld,\"n\":%lld,"
               "\"k\":%lld,\"alpha\":%.17g,\"beta\":%.17g,\"memory\":\"%s\",\"backend\":\"%s\",\"repeat\":%lld",
            dtype_letter(o->dtype), o->layout == OOC_COL_MAJOR ? "col" : "row", op_letter(o->ta), op_letter(o->tb),
            (long long)o->m, (long long)o->n, (long long)o->k, o->alpha, o->beta, o->pinned ? "pinned" : "pageable",
            res->backend, (long long)o->repeat);
    fputs(",\"error\":", f);
    json_str(f, res->error[0] ? res->error : NULL);
    json_num(f, "bw_h2d_gbps", fl->bw_h2d, have);
    json_num(f, "bw_d2h_gbps", fl->bw_d2h, have);
    json_num(f, "incore_tflops", fl->rate, have);
    fprintf(f, ",\"incore_shape\":[%lld,%lld,%lld]", (long long)fl->pm, (long long)fl->pn, (long long)fl->pk);
    json_num(f, "floor_s", fl->floor_s, have);
    fprintf(f, ",\"rate_from_whole_shape\":%s", res->rate_whole ? "true" : "false");
    json_num(f, "probe_incore_tflops", res->fl_probe.rate, res->rate_whole);
    json_num(f, "probe_floor_s", res->fl_probe.floor_s, res->rate_whole);
    json_num(f, "floor_in_s", fl->t_in, have);
    json_num(f, "floor_out_s", fl->t_out, have);
    json_num(f, "floor_math_s", fl->t_math, have);
    json_num(f, "target_floor_over_time", res->sh.target, res->sh.target > 0);
    fprintf(f, ",\"check_rows\":%lld", (long long)res->check_rows);
    json_num(f, "check_tolerance", res->tol, res->check_rows > 0);
    if (res->have_stats)
        fprintf(f,
                ",\"plan\":{\"block_rows\":%lld,\"panel_cols\":%lld,\"panel_depth\":%lld,\"blocks\":%lld,"
                "\"panels\":%lld,\"ring_depth\":%d,\"streams\":%d,\"staged_a\":%d,\"staged_c\":%d,"
                "\"device_bytes\":%" PRIu64 ",\"host_bytes\":%" PRIu64 ",\"bytes_h2d\":%" PRIu64
                ",\"bytes_d2h\":%" PRIu64 "}",
                (long long)res->stats.block_rows, (long long)res->stats.panel_cols, (long long)res->stats.panel_depth,
                (long long)res->stats.blocks, (long long)res->stats.panels, (int)res->stats.ring_depth,
                (int)res->stats.streams, (int)res->stats.staged_a, (int)res->stats.staged_c,
                res->stats.device_bytes, res->stats.host_bytes, res->stats.bytes_h2d, res->stats.bytes_d2h);
    else
        fputs(",\"plan\":null", f);
    fputs(",\"peers_skipped\":", f);
    json_str(f, res->peers_skipped);
    fputs(",\"methods\":[", f);
    for (int i = 0; i < res->nmeth; i++) {
        const bench_method_t *mt = &res->meth[i];
        int ran = mt->status == BS_RAN;
        fprintf(f, "%s{\"method\":\"%s\",\"label\":", i ? "," : "", bench_method_name(mt->kind));
        json_str(f, mt->label);
        if (mt->kind == BM_XT)
            fprintf(f, ",\"block_dim\":%d,\"default_block_dim\":%s,\"pinning\":%s", mt->dim_used,
                    mt->block_dim == 0 ? "true" : "false", mt->pinning ? "true" : "false");
        if (mt->block_rows > 0) fprintf(f, ",\"block_rows\":%lld", (long long)mt->block_rows);
        fprintf(f, ",\"status\":\"%s\",\"message\":", bench_status_name(mt->status));
        json_str(f, mt->status == BS_RAN ? NULL : mt->msg);
        fputs(",\"times_s\":[", f);
        for (int64_t t = 0; ran && t < mt->ntimes; t++) fprintf(f, "%s%.9g", t ? "," : "", mt->times[t]);
        fputc(']', f);
        json_num(f, "best_s", mt->best, ran);
        json_num(f, "median_s", mt->median, ran);
        json_num(f, "tflops", mt->best > 0 ? bench_flops(o) / mt->best / 1e12 : 0, ran && mt->best > 0);
        json_num(f, "floor_over_time", mt->best > 0 ? fl->floor_s / mt->best : 0, ran && have && mt->best > 0);
        json_num(f, "max_rel_err", mt->max_err, mt->checked);
        fprintf(f, ",\"passed\":%s}", mt->checked ? (mt->passed ? "true" : "false") : "null");
    }
    fputc(']', f);
    if (res->xt_best >= 0) {
        const bench_method_t *b = &res->meth[res->xt_best];
        fputs(",\"cublasxt_best\":{\"label\":", f);
        json_str(f, b->label);
        fprintf(f, ",\"block_dim\":%d,\"pinning\":%s,\"best_s\":%.9g}", b->dim_used, b->pinning ? "true" : "false",
                b->best);
    } else {
        fputs(",\"cublasxt_best\":null", f);
    }
    json_num(f, "ours_over_cublasxt_best", res->ratio, res->ratio > 0);
    fputc('}', f);
}

/* One line per shape: ours' floor/time against its target, and against cublasXt. */
static void bench_print_summary(FILE *f, const bench_result_t *all, int n)
{
    fprintf(f, "summary (ours / cublasXt best: cublasXt's best time over ours, > 1: ours is faster)\n");
    fprintf(f, "  %-8s %-10s %-16s %-22s %s\n", "shape", "ours s", "ours floor/time", "target", "ours / cublasXt best");
    for (int i = 0; i < n; i++) {
        const bench_result_t *r = &all[i];
        const bench_method_t *ours = r->nmeth > 0 ? &r->meth[0] : NULL;
        char t[16] = "-", ft[16] = "n/a", tg[32] = "-", xr[32] = "n/a";
        int ran = ours && ours->status == BS_RAN;
        if (ran) snprintf(t, sizeof t, "%.4g", ours->best);
        double q = ran && r->fl.have && ours->best > 0 ? r->fl.floor_s / ours->best : 0;
        if (q > 0) snprintf(ft, sizeof ft, "%.2f", q);
        if (r->sh.target > 0 && q > 0)
            snprintf(tg, sizeof tg, ">= %.2f %s", r->sh.target, q >= r->sh.target ? "met" : "MISSED");
        if (r->ratio > 0) snprintf(xr, sizeof xr, "%.2f%s", r->ratio, r->ratio >= 1.0 ? "" : " (slower)");
        if (r->error[0]) snprintf(xr, sizeof xr, "error");
        fprintf(f, "  %-8s %-10s %-16s %-22s %s\n", r->sh.name, t, ft, tg, xr);
    }
}

static int cmd_bench(int argc, char **argv)
{
    bench_opts_t *bo = calloc(1, sizeof *bo);
    if (bo == NULL) return fail(RC_RUNTIME, "out of host memory");
    int rc = bench_parse(argc, argv, bo);
    if (rc < 0) {
        free(bo);
        return RC_OK; /* --help */
    }
    if (rc != RC_OK) {
        free(bo);
        return rc;
    }

    /* a GPU for the peers? */
    bench_env_t env;
    memset(&env, 0, sizeof env);
    env.device = (int)bo->lib.device;
    ooc_handle_t *probe = NULL;
    ooc_status_t st = ooc_create(&probe);
    if (st == OOC_SUCCESS) st = lib_opts_apply(probe, &bo->lib);
    int count = 0;
    if (st == OOC_SUCCESS) st = ooc_device_count(probe, &count);
    if (st != OOC_SUCCESS) {
        rc = library_error(probe, st);
        ooc_destroy(probe);
        free(bo);
        return rc;
    }
    if (bo->lib.backend == OOC_BACKEND_HOST) {
        env.peers_reason = "backend host: the peers (serial loop, cublasXt, in-core cuBLAS) need a GPU";
    } else if (count == 0) {
        ooc_destroy(probe);
        free(bo);
        return fail(RC_RUNTIME,
                    "bench: no GPU found: the peers (serial loop, cublasXt, in-core cuBLAS) need one; "
                    "with --backend host, ours and the floor run on the CPU without them");
    } else if (bo->no_serial && bo->no_xt && bo->no_incore) {
        env.peers_reason = "--no-serial --no-xt --no-incore";
    } else {
        env.peers = 1;
        ooc_device_info_t di;
        if (ooc_device_info(probe, env.device, &di) == OOC_SUCCESS)
            snprintf(env.gpu, sizeof env.gpu, "GPU %d: %s", env.device, di.name);
    }
    ooc_destroy(probe);

    bench_result_t *all = calloc((size_t)bo->nshapes, sizeof *all);
    if (all == NULL) {
        free(bo);
        return fail(RC_RUNTIME, "out of host memory");
    }
    int any_fail = 0, any_error = 0, usage = 0, done = 0;
    if (bo->json) {
        printf("{\"command\":\"bench\",\"version\":\"%s\",\"tool_version\":\"%s\",\"gpu\":", ooc_version_string(),
               PACKAGE_VERSION);
        json_str(stdout, env.gpu[0] ? env.gpu : NULL);
        printf(",\"repeat\":%lld,\"shapes\":[", (long long)bo->repeat);
    } else if (bo->csv) {
        bench_csv_header(stdout);
    } else if (!bo->quiet) {
        printf("oocgemm %s bench (libooc_gemm %s)%s%s\n\n", PACKAGE_VERSION, ooc_version_string(),
               env.gpu[0] ? ": " : "", env.gpu);
    }
    fflush(stdout);
    for (int i = 0; i < bo->nshapes; i++) {
        bench_result_t *res = &all[i];
        if (bench_shape(bo, &env, &bo->shapes[i], res) == RC_USAGE) {
            usage = 1;
            break;
        }
        done++;
        if (res->error[0]) any_error = 1;
        for (int j = 0; j < res->nmeth; j++) {
            if (res->meth[j].status == BS_ERROR) any_error = 1;
            if (res->meth[j].checked && !res->meth[j].passed) {
                any_fail = 1;
                if (bo->quiet || bo->json || bo->csv)
                    fprintf(stderr, "%s: %s: %s: check failed: max relative error %.2g exceeds the tolerance %.2g\n",
                            progname, res->sh.name, res->meth[j].label, res->meth[j].max_err, res->tol);
            }
            if (res->meth[j].status == BS_ERROR && (bo->quiet || bo->json || bo->csv))
                fprintf(stderr, "%s: %s: %s: %s\n", progname, res->sh.name, res->meth[j].label, res->meth[j].msg);
        }
        if (res->error[0] && (bo->quiet || bo->json || bo->csv))
            fprintf(stderr, "%s: %s: %s\n", progname, res->sh.name, res->error);
        if (bo->json) {
            if (i) putchar(',');
            bench_print_json(stdout, res);
        } else if (bo->csv) {
            bench_print_csv(stdout, res);
        } else if (!bo->quiet) {
            bench_print_text(stdout, res);
        }
        fflush(stdout);
    }
    rc = usage ? RC_USAGE : any_fail ? RC_CHECK_FAILED : any_error ? RC_RUNTIME : RC_OK;
    if (bo->json) printf("],\"exit_status\":%d}\n", rc);
    else if (!bo->csv && !bo->quiet && done > 1) bench_print_summary(stdout, all, done);
    for (int i = 0; i < bo->nshapes; i++) bench_result_free(&all[i]);
    free(all);
    free(bo);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* oocgemm info                                                              */

static void info_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm info [OPTIONS]\n"
            "\n"
            "Print the library version, whether CUDA support is compiled in, and each\n"
            "GPU: name, compute capability, multiprocessors, memory (total and free),\n"
            "copy engines, PCI bus id, PCIe link (generation and width), and the\n"
            "pinned host-to-device and device-to-host bandwidth measured now (best of\n"
            "three copies of BYTES each way). Without a GPU it says why, and that the\n"
            "host backend is used; that is not an error.\n"
            "\n"
            "Options:\n"
            "  --bytes BYTES         bytes copied each way for the bandwidth (default 1G)\n"
            "  --no-measure          do not measure the bandwidth\n"
            "  --json                print one JSON object\n"
            "  -h, --help            this help\n"
            "\n");
    print_exit_codes(f);
}

static int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {
        {"bytes", required_argument, NULL, OPT_BYTES}, {"no-measure", no_argument, NULL, OPT_NO_MEASURE},
        {"json", no_argument, NULL, OPT_JSON},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "info";
    int64_t bytes = (int64_t)1 << 30;
    int json = 0, measure = 1;
    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, ":h", opts, NULL);
        if (c == -1) break;
        switch (c) {
        case OPT_BYTES:
            if (parse_bytes(cmd, "--bytes", optarg, &bytes)) return RC_USAGE;
            if (bytes <= 0) return usage_error(cmd, "--bytes: must be positive");
            break;
        case OPT_NO_MEASURE: measure = 0; break;
        case OPT_JSON: json = 1; break;
        case 'h': info_usage(stdout); return RC_OK;
        default: return getopt_failure(cmd, c, argv, "h");
        }
    }
    if (optind < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind]);

    ooc_handle_t *h = NULL, *probe = NULL;
    int rc = RC_OK, count = 0, cuda = 1;
    char reason[1024] = "";
    ooc_status_t st = ooc_create(&h);
    if (st == OOC_SUCCESS) st = ooc_create(&probe);
    if (st != OOC_SUCCESS) {
        rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
        goto out;
    }
    if ((st = ooc_device_count(h, &count)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OTHER, NULL, NULL, "ooc_device_count");
        goto out;
    }
    if (count == 0) {
        /* compiled in? a CUDA-less library refuses the cublas backend */
        ooc_device_info_t di;
        st = ooc_set(probe, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS);
        if (st == OOC_SUCCESS) st = ooc_device_info(probe, 0, &di);
        cuda = st != OOC_ERR_BACKEND_UNAVAILABLE;
        const char *d = ooc_last_error(probe);
        snprintf(reason, sizeof reason, "%s", d && *d ? d : cuda ? "no GPU found" : "built without CUDA");
    }
    if (json)
        printf("{\"command\":\"info\",\"version\":\"%s\",\"tool_version\":\"%s\",\"cuda_compiled\":%s,"
               "\"device_count\":%d,\"devices\":[",
               ooc_version_string(), PACKAGE_VERSION, cuda ? "true" : "false", count);
    else
        printf("libooc_gemm %s (oocgemm %s); CUDA support: %s\n", ooc_version_string(), PACKAGE_VERSION,
               cuda ? "compiled in" : "not compiled in");
    for (int i = 0; i < count; i++) {
        ooc_device_info_t di;
        memset(&di, 0, sizeof di);
        st = ooc_device_info(h, i, &di);
        double h2d = 0, d2h = 0;
        int have_bw = 0;
        char bw_err[1024] = "";
        if (st == OOC_SUCCESS && measure) {
            ooc_handle_t *hd = NULL;
            ooc_status_t s2 = ooc_create(&hd);
            if (s2 == OOC_SUCCESS) s2 = ooc_set(hd, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS);
            if (s2 == OOC_SUCCESS) s2 = ooc_set(hd, OOC_PARAM_DEVICE, i);
            if (s2 == OOC_SUCCESS) s2 = ooc_measure_bandwidth(hd, (size_t)bytes, &h2d, &d2h);
            if (s2 == OOC_SUCCESS) have_bw = 1;
            else snprintf(bw_err, sizeof bw_err, "%s: %s", ooc_status_string(s2), hd ? ooc_last_error(hd) : "");
            ooc_destroy(hd);
        }
        if (json) {
            printf("%s{\"index\":%d", i ? "," : "", i);
            if (st != OOC_SUCCESS) {
                printf(",\"error\":");
                json_str(stdout, ooc_last_error(h));
                printf("}");
                continue;
            }
            printf(",\"name\":");
            json_str(stdout, di.name);
            printf(",\"compute_capability\":\"%d.%d\",\"multiprocessors\":%d,\"memory_total\":%" PRIu64
                   ",\"memory_free\":%" PRIu64 ",\"copy_engines\":%d,\"pci_bus_id\":",
                   di.compute_major, di.compute_minor, di.multiprocessors, di.memory_total, di.memory_free,
                   di.copy_engines);
            json_str(stdout, di.pci_bus_id);
            printf(",\"pcie_gen\":%d,\"pcie_width\":%d,\"bandwidth_bytes\":%lld", di.pcie_gen, di.pcie_width,
                   (long long)bytes);
            json_num(stdout, "h2d_gbps", h2d / 1e9, have_bw);
            json_num(stdout, "d2h_gbps", d2h / 1e9, have_bw);
            printf("}");
            continue;
        }
        if (st != OOC_SUCCESS) {
            printf("GPU %d: cannot describe it: %s: %s\n", i, ooc_status_string(st), ooc_last_error(h));
            continue;
        }
        char b1[32], b2[32];
        printf("GPU %d: %s\n", i, di.name);
        printf("  compute capability %d.%d, %d multiprocessors\n", di.compute_major, di.compute_minor,
               di.multiprocessors);
        printf("  memory: %s total, %s free\n", human_bytes(di.memory_total, b1, sizeof b1),
               human_bytes(di.memory_free, b2, sizeof b2));
        printf("  copy engines: %d%s\n", di.copy_engines,
               di.copy_engines >= 2 ? " (copies both ways at once)" : " (one copy at a time)");
        if (di.pcie_gen > 0)
            printf("  PCI bus id %s, PCIe Gen%d x%d\n", di.pci_bus_id, di.pcie_gen, di.pcie_width);
        else
            printf("  PCI bus id %s, PCIe link unknown\n", di.pci_bus_id);
        if (have_bw)
            printf("  pinned bandwidth (%s each way): H2D %.1f GB/s, D2H %.1f GB/s\n",
                   human_bytes((uint64_t)bytes, b1, sizeof b1), h2d / 1e9, d2h / 1e9);
        else if (measure)
            printf("  pinned bandwidth: not measured: %s\n", bw_err);
    }
    if (json) {
        printf("],\"no_device_reason\":");
        json_str(stdout, count == 0 ? reason : NULL);
        printf(",\"backend\":\"%s\",\"exit_status\":0}\n", count > 0 ? "cublas" : "host");
    } else if (count == 0) {
        printf("no CUDA device (%s); the host backend is used\n", reason);
    }

out:
    ooc_destroy(probe);
    ooc_destroy(h);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"multiply", cmd_multiply, "C = alpha*op(A)*op(B) + beta*C0 on .npy or raw files (resumable)"},
    {"gen", cmd_gen, "write a seeded random matrix file (.npy or raw)"},
    {"verify", cmd_verify, "check a product on files against OpenBLAS"},
    {"info", cmd_info, "the GPUs: memory, copy engines, PCIe link, measured bandwidth"},
    {"run", cmd_run, "multiply random in-memory matrices: time, floor, check against OpenBLAS"},
    {"bench", cmd_bench, "time ours against the floor, the serial loop, cublasXt, in-core cuBLAS"},
};

static void main_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm COMMAND [OPTIONS]\n"
            "       oocgemm --help | --version\n"
            "\n"
            "Out-of-core GEMM, C = alpha*op(A)*op(B) + beta*C, with libooc_gemm.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "  %-8s show a command's options\n"
            "\n"
            "Run 'oocgemm COMMAND --help' for a command's options.\n"
            "\n",
            "help");
    print_exit_codes(f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "%s: no command given\n\n", progname);
        main_usage(stderr);
        return RC_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        main_usage(stdout);
        return RC_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("oocgemm (%s) %s\nlibooc_gemm %s (run time)\n", PACKAGE_NAME, PACKAGE_VERSION, ooc_version_string());
        return RC_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) {
            main_usage(stdout);
            return RC_OK;
        }
        char *help_argv[] = {argv[2], (char *)"--help", NULL};
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[2], commands[i].name) == 0) return commands[i].fn(2, help_argv);
        return usage_error(NULL, "unknown command '%s'", argv[2]);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    if (cmd[0] == '-') return usage_error(NULL, "unknown option '%s' (a command comes first)", cmd);
    return usage_error(NULL, "unknown command '%s'", cmd);
}
