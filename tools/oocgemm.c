/* SPDX-License-Identifier: MIT */
/*
 * oocgemm.c: the command-line tool of libooc_gemm.
 *
 * main() dispatches on a subcommand. This version has one:
 *   oocgemm run   multiply seeded random in-memory matrices through the
 *                 library, time it (best and median of --repeat runs),
 *                 compare the time with the PCIe/compute floor of
 *                 PERFORMANCE.md, and check sampled rows of C against
 *                 OpenBLAS.
 * File-backed subcommands (multiply, gen, verify, info, bench) come later;
 * they slot into the command table below.
 *
 * Uses only the public API (ooc_gemm.h) and OpenBLAS's cblas.h.
 */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include <cblas.h>

#include "ooc_gemm.h"

/* ------------------------------------------------------------------------ */
/* Exit statuses: the one place they are defined (and listed in --help).    */

enum {
    RC_OK = 0,           /* success */
    RC_CHECK_FAILED = 1, /* the result check against OpenBLAS failed */
    RC_USAGE = 2,        /* bad command line (unknown command or option, bad value) */
    RC_RUNTIME = 3       /* the library reported an error, or host memory ran out */
};

static const struct {
    int code;
    const char *meaning;
} exit_codes[] = {
    {RC_OK, "success"},
    {RC_CHECK_FAILED, "the check of C against OpenBLAS failed"},
    {RC_USAGE, "bad command line (unknown command or option, missing or bad value)"},
    {RC_RUNTIME, "run-time failure: a libooc_gemm error, or out of host memory"},
};

static void print_exit_codes(FILE *f)
{
    fprintf(f, "Exit status:\n");
    for (size_t i = 0; i < sizeof exit_codes / sizeof exit_codes[0]; i++)
        fprintf(f, "  %d  %s\n", exit_codes[i].code, exit_codes[i].meaning);
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
} fill_part_t;

static void *fill_part(void *arg)
{
    fill_part_t *f = arg;
    if (dtype_double(f->t)) {
        double *d = f->x;
        for (size_t q = f->q0; q < f->q1; q++) {
            double v = (double)(rand_at(f->key, q) >> 11) * 0x1.0p-52 - 1.0;
            d[q] = v != 0.0 ? v : 0x1.0p-53;
        }
    } else {
        float *fl = f->x;
        for (size_t q = f->q0; q < f->q1; q++) {
            float v = (float)(rand_at(f->key, q) >> 40) * 0x1.0p-23f - 1.0f;
            fl[q] = v != 0.0f ? v : 0x1.0p-24f;
        }
    }
    return NULL;
}

/* Fill with values that depend only on (seed, which, index), on all cores. */
static void fill_random(ooc_dtype_t t, void *x, size_t count, uint64_t seed, unsigned which)
{
    enum { MAX_THREADS = 64 };
    size_t reals = count * (dtype_complex(t) ? 2 : 1);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = reals < ((size_t)1 << 22) || ncpu < 2 ? 1 : (size_t)(ncpu > MAX_THREADS ? MAX_THREADS : ncpu);
    fill_part_t parts[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int created[MAX_THREADS] = {0};
    for (size_t i = 0; i < nt; i++) {
        parts[i] = (fill_part_t){t, x, stream_key(seed, which), reals * i / nt, reals * (i + 1) / nt};
        created[i] = i + 1 < nt && pthread_create(&th[i], NULL, fill_part, &parts[i]) == 0;
        if (!created[i]) fill_part(&parts[i]); /* the last part, or no thread: do it here */
    }
    for (size_t i = 0; i < nt; i++)
        if (created[i]) pthread_join(th[i], NULL);
}

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
/* oocgemm run                                                               */

typedef struct {
    int64_t m, n, k;
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    double alpha, beta;
    int pinned;
    int64_t backend;
    int64_t device, device_mem, host_mem, block_rows, ring, streams, staging_threads;
    int tf32;
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

enum {
    OPT_DTYPE = 256, OPT_LAYOUT, OPT_TRANSA, OPT_TRANSB, OPT_ALPHA, OPT_BETA, OPT_MEMORY,
    OPT_BACKEND, OPT_DEVICE, OPT_DEVICE_MEM, OPT_HOST_MEM, OPT_BLOCK_ROWS, OPT_RING, OPT_STREAMS,
    OPT_STAGING_THREADS, OPT_TF32, OPT_REPEAT, OPT_SEED, OPT_CHECK_ROWS, OPT_NO_CHECK, OPT_BW_H2D,
    OPT_BW_D2H, OPT_RATE, OPT_NO_FLOOR, OPT_JSON
};

static const struct option run_long_opts[] = {
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"transa", required_argument, NULL, OPT_TRANSA},
    {"transb", required_argument, NULL, OPT_TRANSB},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"device-mem", required_argument, NULL, OPT_DEVICE_MEM},
    {"host-mem", required_argument, NULL, OPT_HOST_MEM},
    {"block-rows", required_argument, NULL, OPT_BLOCK_ROWS},
    {"ring", required_argument, NULL, OPT_RING},
    {"streams", required_argument, NULL, OPT_STREAMS},
    {"staging-threads", required_argument, NULL, OPT_STAGING_THREADS},
    {"tf32", no_argument, NULL, OPT_TF32},
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
    o->backend = OOC_BACKEND_AUTO;
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
        case OPT_BACKEND:
            if (strcasecmp(optarg, "auto") == 0) o->backend = OOC_BACKEND_AUTO;
            else if (strcasecmp(optarg, "cublas") == 0) o->backend = OOC_BACKEND_CUBLAS;
            else if (strcasecmp(optarg, "custom") == 0) o->backend = OOC_BACKEND_CUSTOM;
            else if (strcasecmp(optarg, "host") == 0) o->backend = OOC_BACKEND_HOST;
            else return usage_error(cmd, "--backend: '%s' is not auto, cublas, custom or host", optarg);
            break;
        case OPT_DEVICE:
            if (parse_param(cmd, optname, optarg, OOC_PARAM_DEVICE, 0, &o->device)) return RC_USAGE;
            break;
        case OPT_DEVICE_MEM:
            if (parse_param(cmd, optname, optarg, OOC_PARAM_DEVICE_MEM, 1, &o->device_mem)) return RC_USAGE;
            break;
        case OPT_HOST_MEM:
            if (parse_param(cmd, optname, optarg, OOC_PARAM_HOST_MEM, 1, &o->host_mem)) return RC_USAGE;
            break;
        case OPT_BLOCK_ROWS:
            if (parse_param(cmd, optname, optarg, OOC_PARAM_BLOCK_ROWS, 0, &o->block_rows)) return RC_USAGE;
            break;
        case OPT_RING:
            if (parse_param(cmd, optname, optarg, OOC_PARAM_RING_DEPTH, 0, &o->ring)) return RC_USAGE;
            break;
        case OPT_STREAMS:
            if (parse_param(cmd, optname, optarg, OOC_PARAM_STREAMS, 0, &o->streams)) return RC_USAGE;
            break;
        case OPT_STAGING_THREADS:
            if (parse_param(cmd, optname, optarg, OOC_PARAM_STAGING_THREADS, 0, &o->staging_threads))
                return RC_USAGE;
            break;
        case OPT_TF32: o->tf32 = 1; break;
        case OPT_REPEAT:
            if (parse_int(cmd, "--repeat", optarg, 1, 1000000, &o->repeat)) return RC_USAGE;
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end != '\0' || errno == ERANGE)
                return usage_error(cmd, "--seed: '%s' is not a non-negative integer", optarg);
            o->seed = (uint64_t)s;
            break;
        }
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
        case ':': /* optopt: the short option, or a long option's value (>= 256) */
            if (optopt > 0 && optopt < 256) return usage_error(cmd, "option -%c needs a value", optopt);
            return usage_error(cmd, "option %s needs a value", argv[optind - 1]);
        case '?':
        default:
            /* optopt: an unknown short option; a known one here means a long
             * option given a value it does not take (--quiet=1); 0: unknown long */
            if (optopt > 0 && optopt < 256 && !strchr("mnkqh", optopt))
                return usage_error(cmd, "unknown option -%c", optopt);
            if (optopt != 0) return usage_error(cmd, "option %s takes no value", argv[optind - 1]);
            return usage_error(cmd, "unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!have_m) return usage_error(cmd, "-m M is required (rows of op(A) and C)");
    if (!have_n) return usage_error(cmd, "-n N is required (columns of op(B) and C)");
    if (!have_k) return usage_error(cmd, "-k K is required (columns of op(A), rows of op(B))");
    return RC_OK;
}

/* Stored size of op(X) (rows x cols) in `layout`, with overflow checks. */
static int matrix_shape(const char *name, const run_opts_t *o, ooc_op_t op, int64_t rows, int64_t cols,
                        matrix_t *x)
{
    int64_t srows = op == OOC_OP_N ? rows : cols, scols = op == OOC_OP_N ? cols : rows;
    size_t elems, bytes;
    memset(x, 0, sizeof *x);
    x->ld = o->layout == OOC_COL_MAJOR ? srows : scols;
    if (__builtin_mul_overflow((uint64_t)srows, (uint64_t)scols, &elems) ||
        __builtin_mul_overflow(elems, dtype_size(o->dtype), &bytes) || bytes > (size_t)INT64_MAX) {
        usage_error("run", "%s (%lld x %lld elements of %zu bytes) is too large to allocate", name,
                    (long long)srows, (long long)scols, dtype_size(o->dtype));
        return -1;
    }
    x->elems = elems;
    x->bytes = bytes;
    return 0;
}

static int matrix_alloc(ooc_handle_t *h, int pinned, matrix_t *x, const char *name)
{
    if (pinned) {
        ooc_status_t st = ooc_host_alloc(h, x->bytes, &x->p);
        if (st != OOC_SUCCESS) {
            x->p = NULL;
            return library_error(h, st);
        }
        return RC_OK;
    }
    size_t bytes = (x->bytes + 63) & ~(size_t)63;
    x->p = aligned_alloc(64, bytes ? bytes : 64);
    if (x->p == NULL) {
        char b[32];
        fprintf(stderr, "%s: cannot allocate %s for %s\n", progname, human_bytes(x->bytes, b, sizeof b), name);
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

/*
 * Check the r rows of C against OpenBLAS. ref = alpha * G * op(B) + beta * c0,
 * G the gathered rows of op(A) (conjugated for op = C). *max_err receives the
 * largest error relative to the bound described in --help (INFINITY for NaN).
 * Returns RC_OK, RC_RUNTIME (out of memory), or RC_USAGE when the sizes do
 * not fit a BLAS int (*max_err untouched).
 */
static int check_c(const run_opts_t *o, const matrix_t *A, const matrix_t *B, const matrix_t *C,
                   const void *c0, const int64_t *rows, int64_t r, double *max_err)
{
    ooc_dtype_t t = o->dtype;
    size_t e = dtype_size(t);
    int64_t m = o->m, n = o->n, k = o->k;
    int col = o->layout == OOC_COL_MAJOR;
    int rc = RC_RUNTIME;
    void *G = NULL, *R = NULL;
    double *bmax = NULL, *arow = NULL;

    if (r > INT_MAX || n > INT_MAX || k > INT_MAX || B->ld > INT_MAX) return RC_USAGE;
    /* no overflow: r <= m, so r*k*e and r*n*e are at most the sizes of A and C */
    G = malloc((size_t)r * (size_t)k * e);
    R = malloc((size_t)r * (size_t)n * e);
    bmax = calloc((size_t)k, sizeof *bmax);
    arow = calloc((size_t)r, sizeof *arow);
    if (!G || !R || !bmax || !arow) {
        fprintf(stderr, "%s: out of memory for the check\n", progname);
        goto out;
    }

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

    double worst = 0.0;
    int64_t ldc = col ? m : n;
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < n; j++) {
            size_t si = small_index(o->layout, r, n, i, j);
            double cr, ci, rr, ri;
            load(t, C->p, op_index(o->layout, OOC_OP_N, ldc, rows[i], j), &cr, &ci);
            load(t, R, si, &rr, &ri);
            double diff = dtype_complex(t) ? hypot(cr - rr, ci - ri) : fabs(cr - rr);
            double bound = arow[i] + (o->beta != 0.0 ? fabs(o->beta) * magnitude(t, c0, si) : 0.0);
            double err = diff == 0.0 ? 0.0 : diff / (bound > DBL_MIN ? bound : DBL_MIN);
            if (isnan(err)) err = INFINITY;
            if (err > worst) worst = err;
        }
    *max_err = worst;
    rc = RC_OK;
out:
    free(G);
    free(R);
    free(bmax);
    free(arow);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A JSON number, or null when not finite / not available. */
static void json_num(FILE *f, const char *key, double v, int available)
{
    if (available && isfinite(v)) fprintf(f, ",\"%s\":%.9g", key, v);
    else fprintf(f, ",\"%s\":null", key);
}

/* Set a library option unless it is 0 (automatic). */
static ooc_status_t set_param(ooc_handle_t *h, ooc_param_t p, int64_t v)
{
    return v != 0 ? ooc_set(h, p, v) : OOC_SUCCESS;
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
    if (matrix_shape("A", &o, o.ta, o.m, o.k, &A) || matrix_shape("B", &o, o.tb, o.k, o.n, &B) ||
        matrix_shape("C", &o, OOC_OP_N, o.m, o.n, &C))
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
    if ((st = ooc_set(h, OOC_PARAM_BACKEND, o.backend)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICE, o.device)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICE_MEM, o.device_mem)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_HOST_MEM, o.host_mem)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_BLOCK_ROWS, o.block_rows)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_RING_DEPTH, o.ring)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STREAMS, o.streams)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STAGING_THREADS, o.staging_threads)) != OOC_SUCCESS ||
        (st = ooc_set(h, OOC_PARAM_MATH_MODE, o.tf32 ? OOC_MATH_TF32 : OOC_MATH_STRICT)) != OOC_SUCCESS) {
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

    if ((rc = matrix_alloc(h, o.pinned, &A, "A")) != RC_OK || (rc = matrix_alloc(h, o.pinned, &B, "B")) != RC_OK ||
        (rc = matrix_alloc(h, o.pinned, &C, "C")) != RC_OK)
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
    else memset(C.p, 0xff, C.bytes); /* NaN: beta = 0 must not read C */
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

    qsort(times, (size_t)o.repeat, sizeof *times, cmp_double);
    double best = times[0];
    double median = o.repeat % 2 ? times[o.repeat / 2] : 0.5 * (times[o.repeat / 2 - 1] + times[o.repeat / 2]);
    double flops = (cplx ? 8.0 : 2.0) * (double)o.m * (double)o.n * (double)o.k;
    double tflops = best > 0 ? flops / best / 1e12 : INFINITY;

    /* what the floor is made of, measured now unless given */
    int gpu = strcmp(ooc_backend_name(h), "host") != 0;
    int64_t cap = gpu ? 16384 : 1024;
    int64_t pm = o.m < cap ? o.m : cap, pn = o.n < cap ? o.n : cap, pk = o.k < cap ? o.k : cap;
    int measured_bw = 0, measured_rate = 0;
    if (!o.no_floor && (o.bw_h2d <= 0 || o.bw_d2h <= 0)) {
        double h2d, d2h;
        st = ooc_measure_bandwidth(h, gpu ? (size_t)1 << 30 : (size_t)64 << 20, &h2d, &d2h);
        if (st == OOC_SUCCESS) {
            if (o.bw_h2d <= 0) o.bw_h2d = h2d / 1e9;
            if (o.bw_d2h <= 0) o.bw_d2h = d2h / 1e9;
            measured_bw = 1;
        } else if (!o.quiet) {
            fprintf(stderr, "%s: warning: cannot measure bandwidth: %s: %s\n", progname, ooc_status_string(st), ooc_last_error(h));
        }
    }
    if (!o.no_floor && o.rate <= 0) {
        double rate;
        st = ooc_measure_gemm_rate(h, t, pm, pn, pk, 3, &rate);
        if (st == OOC_SUCCESS) {
            o.rate = rate / 1e12;
            measured_rate = 1;
        } else if (!o.quiet) {
            fprintf(stderr, "%s: warning: cannot measure the in-core rate: %s: %s\n", progname, ooc_status_string(st), ooc_last_error(h));
        }
    }
    int have_floor = !o.no_floor && o.bw_h2d > 0 && o.bw_d2h > 0 && o.rate > 0;
    double s = (double)e, mn = (double)o.m * (double)o.n;
    double t_in = 0, t_out = 0, t_math = 0, floor_s = 0, floor_ratio = 0;
    if (have_floor) {
        double in_elems = (double)o.m * (double)o.k + (double)o.k * (double)o.n + (o.beta != 0.0 ? mn : 0.0);
        t_in = s * in_elems / (o.bw_h2d * 1e9);
        t_out = s * mn / (o.bw_d2h * 1e9);
        t_math = flops / (o.rate * 1e12);
        floor_s = t_in > t_out ? t_in : t_out;
        if (t_math > floor_s) floor_s = t_math;
        floor_ratio = best > 0 ? floor_s / best : INFINITY;
    }

    /* TF32 rounds the inputs to 10 mantissa bits: up to 2^-9 per product, whatever k */
    double eps = dtype_double(t) ? DBL_EPSILON : FLT_EPSILON;
    double tol = 4.0 * (double)o.k * eps + (o.tf32 && !dtype_double(t) ? 0x1.0p-7 : 0.0), max_err = 0.0;
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
               o.tf32 ? "true" : "false", (long long)o.repeat);
        json_num(stdout, "seconds", best, 1);
        json_num(stdout, "median_seconds", median, 1);
        json_num(stdout, "tflops", tflops, 1);
        json_num(stdout, "bw_h2d_gbps", o.bw_h2d, have_floor);
        json_num(stdout, "bw_d2h_gbps", o.bw_d2h, have_floor);
        json_num(stdout, "incore_tflops", o.rate, have_floor);
        json_num(stdout, "floor_s", floor_s, have_floor);
        json_num(stdout, "floor_in_s", t_in, have_floor);
        json_num(stdout, "floor_out_s", t_out, have_floor);
        json_num(stdout, "floor_math_s", t_math, have_floor);
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
        char b1[32], b2[32];
        if (stats.panels == 0) /* alpha == 0: C = beta*C on the host, nothing streamed */
            printf("backend: %s   plan: none (alpha = 0: nothing to multiply)\n", backend);
        else
            printf("backend: %s   plan: block rows %lld, panel %lld x %lld (%lld panels, %lld blocks each), "
                   "ring %d, streams %d, staged A/C: %s/%s, device %s, staging %s\n",
                   backend, (long long)stats.block_rows, (long long)stats.panel_depth, (long long)stats.panel_cols,
                   (long long)stats.panels, (long long)stats.blocks, (int)stats.ring_depth, (int)stats.streams,
                   stats.staged_a ? "yes" : "no", stats.staged_c ? "yes" : "no",
                   human_bytes(stats.device_bytes, b1, sizeof b1), human_bytes(stats.host_bytes, b2, sizeof b2));
        if (o.repeat > 1)
            printf("time: %.3g s (best of %lld; median %.3g s)", best, (long long)o.repeat, median);
        else
            printf("time: %.3g s (1 run)", best);
        if (tflops >= 1.0 || !isfinite(tflops)) printf("   rate: %.3g TFLOP/s", tflops);
        else printf("   rate: %.3g GFLOP/s", tflops * 1e3);
        printf("   moved: H2D %.3g GB, D2H %.3g GB\n", (double)stats.bytes_h2d / 1e9,
               (double)stats.bytes_d2h / 1e9);
        if (have_floor) {
            printf("rates: H2D %.1f GB/s, D2H %.1f GB/s (%s); in-core %cGEMM %lldx%lldx%lld %.3g TFLOP/s (%s)\n",
                   o.bw_h2d, o.bw_d2h, measured_bw ? "measured" : "given", dt - 'a' + 'A', (long long)pm,
                   (long long)pn, (long long)pk, o.rate, measured_rate ? "measured" : "given");
            printf("floor: %.3g s (in %.3g, out %.3g, math %.3g)  floor/time: %.2f\n", floor_s, t_in, t_out,
                   t_math, floor_ratio);
        }
        else
            printf("floor: n/a\n");
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
/* Dispatch                                                                  */

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"run", cmd_run, "multiply random in-memory matrices: time, floor, check against OpenBLAS"},
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
