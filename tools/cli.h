/* SPDX-License-Identifier: MIT */
/*
 * cli.h: what the subcommands of oocgemm share, declared once: the exit
 * statuses and error reporting (cli_error.c), option codes and value
 * parsers (cli_opts.c), small helpers (cli_util.c), the seeded random
 * streams and fill (cli_fill.c), in-memory matrices and their check against
 * OpenBLAS (cli_check.c), the floor and the plan's summary (cli_floor.c),
 * JSON (cli_json.c), matrix files on the command line (cli_operand.c), the
 * file multiply's progress, disk measurement and signals (cli_progress.c,
 * cli_disk.c, cli_signal.c), and the subcommands (cmd_*.c) for the table in
 * oocgemm.c.
 */
#ifndef OOCGEMM_CLI_H
#define OOCGEMM_CLI_H

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
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
#include <sys/stat.h>

#include <cblas.h>

#include "ooc_gemm.h"
#include "spec.h"

/* ------------------------------------------------------------------------ */
/* Exit statuses: the one place they are defined (and listed in --help).    */

enum {
    RC_OK = 0,           /* success */
    RC_CHECK_FAILED = 1, /* the result check against OpenBLAS failed */
    RC_USAGE = 2,        /* bad command line (unknown command or option, bad value) */
    RC_RUNTIME = 3,      /* the library reported an error, or host memory ran out */
    RC_INPUT = 4,        /* an input file cannot be opened or read, or is malformed */
    RC_SHAPE = 5,        /* the operands' shapes or element types do not match */
    RC_OUTPUT = 6,       /* the output or the journal cannot be written; resume impossible */
    RC_INTERRUPTED = 7   /* stopped by a signal: the finished blocks are kept, --resume continues */
};

/* Where a library call failed, for exit_status_for(). */
typedef enum {
    AT_INPUT,  /* opening or reading an input file (A, B, C0, or C being verified) */
    AT_OUTPUT, /* creating, writing or committing the output */
    AT_RUN,    /* inside ooc_gemm_files(): inputs and output both in play */
    AT_OTHER   /* anything else (handle, options, devices, measurements) */
} stage_t;

/* Long options of every command share one set of codes: an option that
 * several commands have is parsed by one function (common_opt_parse,
 * lib_opt_parse, floor_opt_parse) and means the same in each. A spelling
 * kept for old scripts (--order, --out-order) is another table entry with
 * the same code, left out of --help (cli_hidden_option). */
enum {
    OPT_DTYPE = 256, OPT_LAYOUT, OPT_TRANSA, OPT_TRANSB, OPT_ALPHA, OPT_BETA, OPT_MEMORY,
    OPT_BACKEND, OPT_DEVICES, OPT_DEVICE_MEM, OPT_HOST_MEM, OPT_BLOCK_ROWS, OPT_RING, OPT_STREAMS,
    OPT_STAGING_THREADS, OPT_TF32, OPT_REPEAT, OPT_SEED, OPT_CHECK_ROWS, OPT_NO_CHECK, OPT_BW_H2D,
    OPT_BW_D2H, OPT_BW_BOTH, OPT_HOST_BW, OPT_RATE, OPT_NO_FLOOR, OPT_JSON,
    /* file commands */
    OPT_ROWS, OPT_COLS, OPT_FORMAT, OPT_THREADS, OPT_C_IN, OPT_VERIFY, OPT_RESUME, OPT_ALLOW_MIXED,
    OPT_JOURNAL, OPT_NO_PROGRESS, OPT_OUT_FORMAT, OPT_OUT_LAYOUT, OPT_DISK_READ_BW,
    OPT_DISK_WRITE_BW, OPT_VECTORS, OPT_BYTES, OPT_NO_MEASURE, OPT_MEASURE_DISK,
    /* bench */
    OPT_SHAPE, OPT_SUITE, OPT_XT_DIMS, OPT_XT_PINNING, OPT_NO_XT, OPT_NO_SERIAL, OPT_NO_INCORE, OPT_CSV,
    OPT_TAIL, OPT_B_CHUNKS, OPT_TRACE, OPT_PEER_B, OPT_A_PIECES, OPT_STAGE_CHUNK,
    OPT_STAGE_C
};

/* The options several commands share, one meaning each (common_opt_parse);
 * a command sets its defaults first and lists in its table the ones it has. */
typedef struct {
    ooc_dtype_t dtype;   /* --dtype */
    ooc_layout_t layout; /* --layout row|col (--order: the old spelling) */
    ooc_op_t ta, tb;     /* --transa, --transb */
    double alpha, beta;  /* --alpha, --beta */
    int pinned;          /* --memory pinned|pageable */
    uint64_t seed;       /* --seed */
    int64_t check_rows;  /* --check-rows (--no-check: 0) */
    int64_t rows, cols;  /* --rows, --cols (0 or more: an empty matrix) */
    int rows_given, cols_given;
    int quiet, json;     /* -q, --quiet; --json */
    int dtype_given, layout_given, ta_given, tb_given, alpha_given, beta_given, memory_given;
} common_opts_t;

/* Library options shared by run, multiply and bench (0: the library chooses). */
typedef struct {
    int64_t backend;
    int64_t device_mem, host_mem, block_rows, ring, streams, staging_threads, tail, b_chunks, a_pieces;
    int64_t stage_chunk; /* --stage-chunk: OOC_PARAM_STAGE_CHUNK (1: off) */
    int64_t stage_c;     /* --stage-c: OOC_PARAM_STAGE_C (1: off) */
    int64_t peer_b;    /* --peer-b: OOC_PARAM_PEER_B (0: measured) */
    int devices_given; /* --devices LIST|all (or --device N, the same as --devices N) */
    uint32_t devices;  /* its OOC_PARAM_DEVICES mask: bit d for device d; 0: every visible device */
    int devices_first; /* the first index LIST names; -1 for all */
    int tf32;
    const char *trace; /* --trace FILE: the timeline of the (last) multiply */
} lib_opts_t;

/* The in-memory problem of run and bench (bench: replacing the shapes'). */
/* An output's data is in OUT OUT_TMP_SUFFIX until committed (lib/io.h's
 * OOC_TMP_SUFFIX, which the tool does not include). */
#define OUT_TMP_SUFFIX ".ooc-tmp"
/* and its default resume journal is OUT OUT_JOURNAL_SUFFIX (lib/io.h's OOC_JOURNAL_SUFFIX) */
#define OUT_JOURNAL_SUFFIX ".ooc-journal"

#define PROBLEM_LONG_OPTS                                                                             \
    {"dtype", required_argument, NULL, OPT_DTYPE}, {"layout", required_argument, NULL, OPT_LAYOUT},   \
        {"transa", required_argument, NULL, OPT_TRANSA},                                              \
        {"transb", required_argument, NULL, OPT_TRANSB}, {"alpha", required_argument, NULL, OPT_ALPHA}, \
        {"beta", required_argument, NULL, OPT_BETA}, {"memory", required_argument, NULL, OPT_MEMORY}

#define LIB_LONG_OPTS                                                                                 \
    {"backend", required_argument, NULL, OPT_BACKEND},                                                \
    {"device", required_argument, NULL, OPT_DEVICES},                                                 \
    {"devices", required_argument, NULL, OPT_DEVICES},                                                \
    {"device-mem", required_argument, NULL, OPT_DEVICE_MEM},                                          \
    {"host-mem", required_argument, NULL, OPT_HOST_MEM},                                              \
    {"block-rows", required_argument, NULL, OPT_BLOCK_ROWS},                                          \
    {"ring", required_argument, NULL, OPT_RING},                                                      \
    {"streams", required_argument, NULL, OPT_STREAMS},                                                \
    {"staging-threads", required_argument, NULL, OPT_STAGING_THREADS},                                \
    {"tail", required_argument, NULL, OPT_TAIL},                                                      \
    {"b-chunks", required_argument, NULL, OPT_B_CHUNKS},                                              \
    {"a-pieces", required_argument, NULL, OPT_A_PIECES},                                              \
    {"stage-chunk", required_argument, NULL, OPT_STAGE_CHUNK},                                        \
    {"stage-c", required_argument, NULL, OPT_STAGE_C},                                            \
    {"trace", required_argument, NULL, OPT_TRACE},                                                    \
    {"peer-b", required_argument, NULL, OPT_PEER_B},                                                  \
    {"tf32", no_argument, NULL, OPT_TF32}

/* The help of the options several commands share: one text, one meaning
 * (and one source for the man page, which help2man makes of --help-all).
 * The library's options, in run, multiply and bench: */
#define LIB_HELP                                                                                      \
    "Library options (absent or 0: the library chooses):\n"                                           \
    "  --backend auto|cublas|custom|host\n"                                                          \
    "                        where the multiply runs: cublas (cuBLAS on the GPU),\n"                  \
    "                        custom (our own kernels on the GPU), host (OpenBLAS\n"                   \
    "                        on the CPU); auto (the default): cublas when a GPU\n"                    \
    "                        is present, else host\n"                                                 \
    "  --devices LIST|all    the devices to use together: indices and ranges\n"                       \
    "                        separated by commas (0,1  0-3  1,3-4; below 16; a set:\n"                \
    "                        an index given twice counts once), or all: every\n"                      \
    "                        visible device (the default); --devices N is device N\n"                 \
    "                        alone\n"                                                                 \
    "  --device N            the same as --devices N\n"                                               \
    "  --peer-b auto|host|share\n"                                                                   \
    "                        several devices: op(B) uploaded to each from the host,\n"                \
    "                        or once (1/n by each) and copied between them (peer\n"                   \
    "                        access, NVLink); auto (the default) measures both\n"                     \
    "                        rates with every device copying at once and shares\n"                    \
    "                        when a peer is faster; C is the same bytes either way\n"                 \
    "  --device-mem BYTES    device-memory budget (default: the free memory less a\n"                 \
    "                        margin); budgets that fit only tiles too small to\n"                    \
    "                        be worth running (over 2^20 tiles of under 2^24\n"                      \
    "                        multiply-adds each on average) are refused with the\n"                  \
    "                        least that do (exit 3)\n"                                               \
    "  --host-mem BYTES      host staging budget, through which pageable operands\n"                  \
    "                        and files are copied, shared by the devices\n"                           \
    "                        (default: automatic; refused as --device-mem is when\n"                 \
    "                        it fits only tiles too small)\n"                                        \
    "  --block-rows N        rows of op(A) per streamed block (at most; from 64\n"                    \
    "                        on a multiple of 32)\n"                                                  \
    "  --ring N              buffers of blocks in the ring (2 to 16)\n"                               \
    "  --streams N           streams of the pipeline (3 to 8)\n"                                      \
    "  --staging-threads N   host threads copying pageable memory (1 to 256)\n"                       \
    "  --tail T              shrinking last blocks (half, a quarter, ... of the\n"                    \
    "                        block rows) to shorten the pipeline's drain, 1 to 6:\n"                  \
    "                        1 none; T > 1: T - 1 of them (default: 3 when the\n"                     \
    "                        blocks are large enough, none when copying C out\n"                      \
    "                        bounds the run on blocks of long lines, unless A\n"                      \
    "                        and C are both pageable, or A's blocks go in\n"                          \
    "                        k-pieces)\n"                                                             \
    "  --b-chunks Q          op(B) uploaded in Q chunks (1 to 8), the first block\n"                  \
    "                        multiplied chunk by chunk as they arrive (default: 8\n"                  \
    "                        when op(B) is 32 MiB or more); with A's blocks in\n"                     \
    "                        k-pieces, each block's last piece also multiplied in\n"                  \
    "                        Q chunks of C's columns, each copied out when done\n"                    \
    "                        (default: up to 8 when copying C out bounds the run\n"                   \
    "                        and C's blocks go out in place as columns, else 1)\n"                    \
    "  --a-pieces K          each block of op(A) goes to the device in K pieces\n"                    \
    "                        along k (1 to 64), multiplied one after another:\n"                      \
    "                        longer blocks in the same memory (default: when the\n"                   \
    "                        budget would hold blocks to short lines; 2 when\n"                       \
    "                        copying C out bounds the run and A is pinned; up\n"                      \
    "                        to 8 for blocks lengthened to 64 KiB copy lines\n"                       \
    "                        where short strided lines would copy in slower\n"                        \
    "                        than they multiply)\n"                                                   \
    "  --stage-chunk BYTES|off\n"                                                                      \
    "                        pageable op(A) in memory goes to the device chunk by\n"                  \
    "                        chunk through 3 pinned buffers of BYTES that stay in\n"                  \
    "                        the CPU's cache (one pass over host memory, not\n"                       \
    "                        three); off: whole blocks through the staging ring\n"                    \
    "                        (default: 16M with a GPU where the last-level cache\n"                   \
    "                        holds 192 MiB or more, else off)\n"                                      \
    "  --stage-c auto|off    a pageable C in memory goes the same way: read in\n"                    \
    "                        (beta != 0) through those buffers, out through 3\n"                      \
    "                        of its own; off: whole blocks through the staging\n"                     \
    "                        ring (default auto: with --stage-chunk)\n"                               \
    "  --tf32                allow TF32 tensor cores for s and c (CUDA only; for d\n"                 \
    "                        and z it does nothing, and a note says so)\n"                            \
    "  --trace FILE          write the timeline of the (last timed) multiply to\n"                    \
    "                        FILE as Chrome trace JSON (open it in Perfetto; draw\n"                  \
    "                        it with tools/trace_plot.py): every copy and multiply\n"                 \
    "                        per stream, every staging step per thread; the busy\n"                   \
    "                        time of each engine and the overlap efficiency are\n"                    \
    "                        printed. Tracing adds host time to the traced run\n"                    \
    "                        (timed events for every op, made before the multiply\n"                 \
    "                        and read after it): compare the times of untraced\n"                    \
    "                        runs; the timeline itself is the traced run's\n"                        \
    "                        (a FILE that cannot be made there is refused at\n"                      \
    "                        once, exit 2; a write that fails at the end warns,\n"                   \
    "                        and the JSON's stats.trace_error says why)\n"                           \
    "\n"                                                                                              \
    "BYTES: an integer with an optional binary suffix K, M, G or T (64M = 64 MiB).\n"                 \
    "\n"

/* The floor's options and what it is, in run and multiply: */
#define FLOOR_HELP                                                                                    \
    "The floor:\n"                                                                                    \
    "  --bw-h2d GB/s         use this host-to-device bandwidth instead of measuring\n"                \
    "                        it (a GPU backend)\n"                                                    \
    "  --bw-d2h GB/s         use this device-to-host bandwidth instead (a GPU\n"                      \
    "                        backend)\n"                                                              \
    "  --bw-both GB/s        use this both-ways bandwidth (in + out at once) instead\n"              \
    "                        (a GPU backend)\n"                                                       \
    "  --host-bw GB/s        use this host memory bandwidth instead (a GPU backend,\n"               \
    "                        operands staged)\n"                                                      \
    "  --rate TFLOP/s        use this in-core multiply rate instead (the host\n"                      \
    "                        backend: the CPU's GEMM rate)\n"                                         \
    "  --no-floor            do not measure or show the floor\n"                                      \
    "\n"                                                                                              \
    "The floor (docs/PERFORMANCE.md) is the time the work cannot go below, from\n"                    \
    "figures measured in the same run, after the multiply. On a GPU backend:\n"                       \
    "pinned copies of 1 GiB each way, then both ways at once, the in-core multiply\n"                \
    "rate on min(m,16384) x min(n,16384) x min(k,16384), and when operands were\n"                   \
    "staged the host's memory bandwidth (the staging threads' copy of 1 GiB, 2\n"                    \
    "bytes of memory traffic per byte copied, alone and while the GPU copies 1 GiB\n"               \
    "each way: the larger traffic). With the bytes the plan moved in\n"                              \
    "(A once per panel of op(B), op(B), C0 when read) and out (C), and staged:\n"                    \
    "  T_in = bytes in / bw-h2d, T_out = bytes out / bw-d2h,\n"                                       \
    "  T_bus = (bytes in + bytes out) / bw-both,\n"                                                   \
    "  T_host = (3 * staged through the ring + staged through the cache) / host-bw\n"                \
    "    (a byte staged through the cache-sized buffers, --stage-chunk, passes\n"                     \
    "    over host memory once; through the ring's pinned slots, three times),\n"                     \
    "  T_math = flops / rate (flops = 2mnk; complex: 8mnk),\n"                                        \
    "  floor = max(T_in, T_out, T_bus, T_host, T_math).\n"                                            \
    "A plan that splits op(B) into panels moves A once per panel: the summary also\n"                \
    "gives the least any plan could move in the same memory budgets.\n"                              \
    "On several GPUs the figures are theirs at once (the copies of every GPU\n"                      \
    "together, the sum of their rates), and the figures given are taken as such.\n"                  \
    "The rate is cuBLAS's, also with --backend custom. No floor when nothing was\n"                  \
    "multiplied (m, n or k is 0, or alpha = 0) or a resumed run did part of the job.\n"              \
    "On the host backend (OpenBLAS on the CPU) nothing crosses a bus: the floor is\n"                 \
    "flops / the CPU's rate, OpenBLAS's GEMM on min(m,1024) x min(n,1024) x\n"                        \
    "min(k,1024) in memory (each from 8 on rounded down to a multiple of 8, as\n"                     \
    "on a GPU), best of 5, and the summary speaks of the CPU alone.\n"                                \
    "floor/time is shown for the (best) time: 1.00 = at the floor. GB = 1e9 bytes.\n"                 \
    "\n"

/* ------------------------------------------------------------------------ */
/* The floor of docs/PERFORMANCE.md, shared by run and multiply              */

typedef struct {
    double bw_h2d, bw_d2h; /* GB/s; <= 0 before floor_measure(): measure it */
    double bw_both;        /* GB/s moved both ways at once (in + out); <= 0: measure it (no T_bus if unknown) */
    double bw_host;        /* GB/s of host memory traffic (2 x the staging copy's rate); <= 0: measure it
                            * when bytes were staged (no T_host if unknown) */
    /* the plan's bytes (floor_traffic; 0: one pass of A, B [, C0] in and C out) */
    double in_bytes, out_bytes, staged_bytes, least_bytes;
    double host_traffic; /* passes over host memory the staging needs: 3 x staged bytes, 1 x those through the
                          * cache-sized buffers (ooc_stats_t bytes_staged_cached) */
    int measured_both, measured_host;
    double rate;           /* in-core TFLOP/s; likewise */
    int ndev;              /* > 1: the figures are those of that many GPUs together */
    int nranks;            /* > 1: ... of the ranks of a split job together (multiply_mpi.c; ndev: their
                            * GPUs, or on the host backend their hosts) */
    int measured_bw, measured_rate; /* measured_bw 2: one of H2D and D2H given, the other measured */
    int64_t pm, pn, pk;    /* the in-core shape measured */
    int cpu;               /* the host backend: the floor is flops / the CPU's measured rate alone */
    int have;              /* what it needs is known: the times below are valid */
    double t_in, t_out, t_bus, t_host, t_math, floor_s;
    int run_ndev;          /* the devices the multiply ran on (floor_of_run), and their indices */
    int run_devs[OOC_MAX_DEVICES];
    char note[600];        /* why there is no floor ("": none known, or there is one) */
} floor_t;

/* ------------------------------------------------------------------------ */
/* The options of run (bench reuses them per shape), in-memory matrices      */

/* The floor's figures given on the command line (run and multiply). */
typedef struct {
    double bw_h2d, bw_d2h, rate; /* GB/s, GB/s, TFLOP/s; 0: not given: measured in the same run */
    double bw_both, bw_host;     /* GB/s, likewise */
    int no_floor;                /* neither measure nor show the floor */
} floor_opts_t;

/* One in-memory multiply of run (bench: one per shape) and its check. */
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
    floor_opts_t floor;
    int quiet, json;
} run_opts_t;

/* One stored matrix: op(X) is rows x cols. */
typedef struct {
    void *p;
    int64_t ld;    /* leading dimension: stored rows (col-major) or columns (row-major) */
    size_t elems;  /* elements stored */
    size_t bytes;
} matrix_t;

/* The reference for the check: the r checked rows of C recomputed with
 * OpenBLAS, and the bound on the terms summed for each row. */
typedef struct {
    void *R;      /* r x n, layout order, exact leading dimension */
    double *arow; /* |alpha| * sum_l |op(A)[i,l]| * b_l, b_l = max_j |op(B)[l,j]| */
} check_ref_t;

/* ------------------------------------------------------------------------ */
/* Random matrices: splitmix64, each element a pure function of (seed,       */
/* matrix, index), so that a fill can later be split across threads.        */

#define SPLITMIX_GAMMA UINT64_C(0x9e3779b97f4a7c15)

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The stream of matrix `which` (1: A, 2: B, 3: C) for this seed. */
static inline uint64_t stream_key(uint64_t seed, unsigned which)
{
    return mix64(seed + SPLITMIX_GAMMA) ^ mix64((uint64_t)which * SPLITMIX_GAMMA + 0x5851f42d4c957f2dULL);
}

/* The q-th output of splitmix64 started at `key`. */
static inline uint64_t rand_at(uint64_t key, uint64_t q) { return mix64(key + (q + 1) * SPLITMIX_GAMMA); }

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

/* ------------------------------------------------------------------------ */
/* Exit statuses and errors (cli_error.c)                                    */

extern const char *progname;
extern char fail_msg[16384];

void print_exit_codes(FILE *f);
void print_exit_code_list(FILE *f);
const char *exit_status_meaning(int rc);
int exit_status_for(ooc_status_t st, stage_t at, const char *err_path, const char *tmp_path,
                    const char *journal_path);
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int library_error(const ooc_handle_t *h, ooc_status_t st);
int fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lib_fail(const ooc_handle_t *h, ooc_status_t st, stage_t at, const char *tmp_path,
             const char *journal_path, const char *what);
int getopt_failure(const char *cmd, int c, char **argv, const char *shorts);
/* From messages_hold() on, the error messages above (usage_error, fail)
 * are kept instead of printed, until messages_release() prints them (say)
 * or drops them: a rank of a split job says a failure that rank 0 says too
 * (the same command line, the same files) only once, through rank 0. */
void messages_hold(void);
void messages_release(int say);
/* The same around a try whose failure may be dropped, also inside a hold
 * (a rank's, above): messages_try() returns a mark, messages_tried(mark,
 * say) drops what came since (say 0) or lets it through as the hold would
 * (printed, or kept for the outer hold's release). */
size_t messages_try(void);
void messages_tried(size_t mark, int say);

/* ------------------------------------------------------------------------ */
/* Small helpers (cli_util.c)                                                */

double now_seconds(void);
void times_summary(double *times, int64_t n, double *best, double *median);
size_t dtype_size(ooc_dtype_t t);
int dtype_complex(ooc_dtype_t t);
int dtype_double(ooc_dtype_t t);
char dtype_letter(ooc_dtype_t t);
const char *dtype_name(ooc_dtype_t t);
char op_letter(ooc_op_t op);
const char *order_name(ooc_layout_t l);
const char *layout_name(ooc_layout_t l);
int has_npy_ext(const char *path);
const char *human_bytes(uint64_t b, char *buf, size_t len);
const char *format_rate(double flops_per_s, char *buf, size_t len);
const char *format_eta(double s, char *buf, size_t len);
uint64_t peak_rss_bytes(void);
int stats_ndevices(const ooc_stats_t *st);
int cli_cpu_count(void);
/* Why the CUDA backend is not used (ooc_cuda_probe's reason: built without
 * CUDA, no module, no CUDA runtime, no driver, no GPU), or NULL when a GPU is
 * usable and the host backend was asked for. */
const char *cuda_unused_reason(void);
/* JSON's backend_reason: on the host backend, "CUDA not used: ..." (NULL
 * otherwise, or when the host backend was asked for on a machine with a GPU). */
const char *backend_reason(const char *backend);

/* ------------------------------------------------------------------------ */
/* Option values (cli_opts.c)                                                */

int parse_int(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
              int64_t *out);
int parse_bytes(const char *cmd, const char *opt, const char *s, int64_t *out);
/* why a trace cannot be written at path, else NULL (cli_opts.c) */
const char *trace_place_problem(const char *path);
int parse_real(const char *cmd, const char *opt, const char *s, int positive, double *out);
int parse_op(const char *cmd, const char *opt, const char *s, ooc_op_t *op);
int parse_param(const char *cmd, const char *opt, const char *s, ooc_param_t param,
                int bytes, int64_t *out);
int parse_seed(const char *cmd, const char *s, uint64_t *out);
/* getopt_long over a command's table: the code, with the option's name as
 * given ("--layout", "-m") in optname[len] for messages. */
int cli_getopt(int argc, char **argv, const char *shorts, const struct option *opts, char *optname,
               size_t len);
/* The table of the last cli_getopt call (getopt_failure names the options an
 * ambiguous abbreviation could be). */
extern const struct option *cli_long_opts;
/* Is this long option a spelling kept for old scripts, left out of --help? */
int cli_hidden_option(const char *name);
/* getopt code c, if it is a shared option, into *o (common_opt_parse) or *l
 * (lib_opt_parse): 1 when it was one, 0 when not, -1 on a bad value (message
 * printed). */
int common_opt_parse(const char *cmd, int c, const char *optname, const char *arg, common_opts_t *o);
int lib_opt_parse(const char *cmd, int c, const char *optname, const char *arg, lib_opts_t *l);
int devices_parse(const char *s, uint32_t *mask, int *first, char *why, size_t len);
const char *devices_format(uint32_t mask, char *buf, size_t len);
#define FLOOR_LONG_OPTS                                                                               \
    {"bw-h2d", required_argument, NULL, OPT_BW_H2D},                                                  \
    {"bw-both", required_argument, NULL, OPT_BW_BOTH},                                                \
    {"host-bw", required_argument, NULL, OPT_HOST_BW},                                                \
    {"bw-d2h", required_argument, NULL, OPT_BW_D2H},                                                  \
    {"rate", required_argument, NULL, OPT_RATE},                                                      \
    {"no-floor", no_argument, NULL, OPT_NO_FLOOR}

/* getopt code c, if it is a floor option, into *f: 1 when it was one, 0 when
 * not, -1 on a bad value (message printed). */
int floor_opt_parse(const char *cmd, int c, const char *arg, floor_opts_t *f);
ooc_status_t set_param(ooc_handle_t *h, ooc_param_t p, int64_t v);
ooc_status_t lib_opts_apply(ooc_handle_t *h, const lib_opts_t *l);

/* ------------------------------------------------------------------------ */
/* Random fill (cli_fill.c), matrices and the check (cli_check.c)            */

void fill_random(ooc_dtype_t t, void *x, size_t count, uint64_t seed, unsigned which);
void fill_nan(ooc_dtype_t t, void *x, size_t count);
int matrix_shape(const char *cmd, const char *name, const run_opts_t *o, ooc_op_t op, int64_t rows,
                 int64_t cols, matrix_t *x);
int matrix_alloc(ooc_handle_t *h, int pinned, matrix_t *x, const char *name, char *err, size_t len);
void matrix_free(ooc_handle_t *h, int pinned, matrix_t *x);
void pick_rows(int64_t m, int64_t r, int64_t *rows);
void save_rows(const run_opts_t *o, const void *C, const int64_t *rows, int64_t r, void *c0);
void check_ref_free(check_ref_t *ref);
int check_ref(const run_opts_t *o, const matrix_t *A, const matrix_t *B, const void *c0,
              const int64_t *rows, int64_t r, check_ref_t *ref);
double check_compare(const run_opts_t *o, const check_ref_t *ref, const matrix_t *C, const void *c0,
                     const int64_t *rows, int64_t r, int64_t *off, int64_t *undecided);
int check_c(const run_opts_t *o, const matrix_t *A, const matrix_t *B, const matrix_t *C,
            const void *c0, const int64_t *rows, int64_t r, double *max_err, int64_t *off, int64_t *undecided);
double check_tolerance(const run_opts_t *o);
/* The check's verdict from check_compare's figures: CHECK_UNDECIDED when
 * nothing judged fails but some elements are past the type's range. */
enum { CHECK_PASS, CHECK_UNDECIDED, CHECK_FAIL };
int check_verdict(double max_err, double tol, int64_t off, int64_t undecided);
/* "N element(s) of the checked rows past T's range in OpenBLAS's product
 * (these scalars overflow it)" into buf; returns buf. */
const char *check_undecided_words(int64_t undecided, ooc_dtype_t t, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* The floor and the plan's summary (cli_floor.c)                            */

int backend_is_host(ooc_handle_t *h);
const char *memory_words(int pinned, int host);
void floor_measure(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet,
                   floor_t *f);
enum { FLOOR_COPIES = 1, FLOOR_HOST = 2, FLOOR_RATE = 4 }; /* floor_measure_sync's parts */
void floor_measure_sync(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet, floor_t *f,
                        void (*sync)(void), unsigned parts);
void floor_measure_rate(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet,
                        floor_t *f);
void floor_compute(floor_t *f, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int with_c0);
void floor_traffic(floor_t *f, const ooc_stats_t *st);
void floor_of_run(floor_t *f, const ooc_stats_t *st);
int floor_measure_devices(ooc_handle_t *h, const int *devs, int ndev, ooc_dtype_t t, int64_t m, int64_t n, int64_t k,
                          int quiet, floor_t *f, double *rates);
ooc_handle_t *handle_like(ooc_handle_t *h, int device, ooc_backend_t backend);
floor_t floor_given(const floor_opts_t *o);
void floor_print(FILE *out, const floor_t *f, ooc_dtype_t t, double time);
void print_plan(FILE *out, const char *backend, const ooc_stats_t *st);

/* ------------------------------------------------------------------------ */
/* JSON (cli_json.c): one writer, one schema                                 */

#define JSON_MAX_DEPTH 16
typedef struct {
    FILE *f;
    int depth;
    int count[JSON_MAX_DEPTH]; /* values written at each depth (a comma before the next) */
    int array[JSON_MAX_DEPTH];
} json_t;

extern int json_printed; /* a command printed its object (json_close) */
/* --help's text goes to help_out(): stdout, or with --json (main sets
 * json_help_wanted) a buffer that json_help_print() prints, when there is
 * one, as the object's "help". */
extern int json_help_wanted;
FILE *help_out(void);
void json_help_print(const char *command, int rc);

/* A JSON string, null for NULL; valid UTF-8 always (U+FFFD for bad bytes). */
void json_str(FILE *f, const char *s);
/* {"command", "version", "library_version" ... then json_close:
 * "exit_status", "error" (null on success, else the message) }. */
void json_open(json_t *j, FILE *f, const char *command);
void json_close(json_t *j, int exit_status);
/* Values: key NULL inside an array. json_real: null when not available or
 * not finite; json_exact: every digit (alpha, beta). */
void json_object(json_t *j, const char *key);
void json_array(json_t *j, const char *key);
void json_end(json_t *j);
void json_string(json_t *j, const char *key, const char *s);
void json_int(json_t *j, const char *key, int64_t v);
void json_uint(json_t *j, const char *key, uint64_t v);
void json_real(json_t *j, const char *key, double v, int available);
void json_exact(json_t *j, const char *key, double v);
void json_bool(json_t *j, const char *key, int v);
void json_null(json_t *j, const char *key);
/* The shared objects: "shape" {m, n, k}; dtype, transa, transb, alpha,
 * beta; a matrix file {path, format, rows, cols, dtype, layout} (spec NULL:
 * the path alone, the rest null); "plan"; "stats" and "devices"; a floor
 * (floor/time against time; time < 0: null); "check" of sampled rows or of
 * files (ooc_verify_files). */
void json_shape(json_t *j, const char *key, int64_t m, int64_t n, int64_t k);
void json_problem(json_t *j, const ooc_dtype_t *t, ooc_op_t ta, ooc_op_t tb, double alpha, double beta);
void json_file(json_t *j, const char *key, const char *path, const ooc_file_spec_t *spec);
void json_plan(json_t *j, const ooc_stats_t *st, int have);
void json_stats(json_t *j, const ooc_stats_t *st, int have);
void json_floor(json_t *j, const char *key, const floor_t *f, double time);
void json_check_rows(json_t *j, int checked, int64_t rows, double max_err, double tol, int64_t off, int passed);
void json_check_files(json_t *j, const ooc_verify_result_t *v, int have);

/* ------------------------------------------------------------------------ */
/* Matrix files on the command line (cli_operand.c)                          */

/* What the command line says of the operands: raw ones without a full
 * suffix take --rows, --cols, --dtype and --layout; an explicit --dtype
 * must match every operand (no conversion: a mismatch is a usage error). */
typedef struct {
    const char *cmd;    /* for the messages */
    int64_t rows, cols; /* when shape_given */
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    int dtype_given;
    int shape_given; /* --rows and --cols both given */
} raw_defaults_t;

/* One operand as given: PATH, or PATH:ROWSxCOLS[:DTYPE[:LAYOUT]] for raw data. */
typedef struct {
    const char *name;     /* "A", "B", "C0", "C" */
    const char *arg;      /* as given */
    char *path;           /* allocated */
    int shaped;           /* the suffix gave a raw shape (spec holds it) */
    ooc_file_spec_t spec; /* once open: what the file holds */
    ooc_file_t *file;
} operand_t;

/* alpha and beta as one element of dtype t, (x, 0) for complex types. */
typedef struct {
    double d[2];
    float f[2];
} scalar_t;

void operand_free(operand_t *op);
/* multiply's -o or gen's OUT written as PATH:ROWSxCOLS[...] or ending in
 * .ooc-tmp: a usage error
 * naming what to give `instead`; RC_OK otherwise (cli_operand.c). */
int output_name_check(const char *cmd, const char *what, const char *arg, const char *instead);
int operand_parse(const char *cmd, const char *name, const char *arg, const raw_defaults_t *d,
                  operand_t *op);
int operand_open(ooc_handle_t *h, operand_t *op, const raw_defaults_t *d);
int is_journal(const char *path);
int journal_keeps_blocks(const char *path);
const char *resume_words(const char *journal);
const char *describe_spec(const ooc_file_spec_t *s, char *buf, size_t len);
void op_shape(const ooc_file_spec_t *s, ooc_op_t op, int64_t *rows, int64_t *cols);
int check_operands(const operand_t *A, ooc_op_t ta, const operand_t *B, ooc_op_t tb, const operand_t *C0,
                   const operand_t *C, int64_t *m, int64_t *n, int64_t *k);
scalar_t scalar_of(double x);
int scalars_fit(const char *cmd, ooc_dtype_t t, double alpha, double beta);
/* A note on stderr when --tf32 is given for double precision, where it does nothing. */
void tf32_note(const char *cmd, int tf32, ooc_dtype_t t);
const void *scalar_ptr(const scalar_t *s, ooc_dtype_t t);
void print_verify(FILE *f, const ooc_verify_result_t *v, int64_t m, int64_t n, int cols);
/* The message of a failed check (verification failed: ...). */
const char *verify_failure(const ooc_verify_result_t *v, int cols, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* A file multiply's progress, disk and signals (cli_progress.c, cli_disk.c, */
/* cli_signal.c)                                                             */

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

void progress_cb(void *user, int64_t done, int64_t total, uint64_t bytes_read, uint64_t bytes_written);
/* mpirun's rank 0: the ranks' sums, ran of done blocks computed by this run
 * (each rank's done - base: the blocks kept from an earlier run left out) */
void progress_sum(progress_t *p, int64_t done, int64_t ran, int64_t total, uint64_t bytes_read,
                  uint64_t bytes_written);

void progress_end(progress_t *p);
void measure_disk(const char *sample, const char *out, double *read_gbs, double *write_gbs, double *both_gbs);
void stop_signals_install(ooc_handle_t *h);
/* multiply: a process still at work OOC_STOP_GRACE_S after a stop signal
 * ends then, exit 7 (a call that does not return), until
 * stop_signals_last_block() (every block of its range in hand) */
void stop_signals_watchdog(void);
void stop_signals_last_block(void);
void stop_signals_exit(int rc);
int stop_signal_caught(void);
const char *signal_name(int sig);

/* ------------------------------------------------------------------------ */
/* The subcommands: cmd_run.c, cmd_gen.c, cmd_multiply.c, cmd_verify.c,      */
/* cmd_info.c, cmd_bench.c: each its function, its --help text (without     */
/* the exit statuses, which main adds) and its getopt_long table, for the    */
/* table in oocgemm.c (--help, help, --help-all, help-options).             */

#define CLI_COMMAND(name)                                                                             \
    int cmd_##name(int argc, char **argv);                                                            \
    void name##_usage(FILE *f);                                                                       \
    extern const struct option name##_long_opts[]
CLI_COMMAND(run);
CLI_COMMAND(gen);
CLI_COMMAND(multiply);
CLI_COMMAND(verify);
CLI_COMMAND(info);
CLI_COMMAND(bench);

#endif /* OOCGEMM_CLI_H */
