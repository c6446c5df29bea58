/* SPDX-License-Identifier: MIT */
/*
 * cmd_bench.c: oocgemm bench: on the same host buffers, time ours, the serial
 * loop, cublasXt and in-core cuBLAS (peers.h, peers_cuda.c) against the floor
 * measured in the same run; check each result; report as text, CSV or JSON.
 * With --devices: ours on the first device alone and on all of them, cublasXt
 * on all of them, against the floor of the GPUs together.
 */
#include "config.h"

#include "cli.h"
#include "peers.h"

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
    int first_only;     /* --devices: ran on the first device alone (else on all) */
    int status;         /* BS_* */
    char msg[PEER_MSG_LEN];
    double *times;
    int64_t ntimes;
    double best, median;
    int checked, passed;
    double max_err;
} bench_method_t;

/* What holds for every shape of a run. */
typedef struct {
    int peers;                /* run the peers */
    const char *peers_reason; /* else why not */
    int cuda;                 /* a GPU backend: the GPUs' copy bandwidth can be measured */
    int device;               /* the first device: the peers' (and ours' alone with --devices) */
    int multi;                /* --devices of several: ours alone and on all, cublasXt on all */
    int ndev;                 /* the devices, the first first (0 with multi: every one, not known) */
    int devs[OOC_MAX_DEVICES];
    char gpu[1200];
} bench_env_t;

/* Everything about one shape, for the text, CSV and JSON reports. */
typedef struct {
    const bench_env_t *env;
    bench_shape_t sh;
    run_opts_t o;
    floor_t fl;       /* R from in-core cuBLAS on the whole shape when it ran, else the probe;
                       * with --devices, of all the GPUs together */
    floor_t fl_probe; /* R from the short probe (min(dim, 16384)), for comparison */
    int rate_whole;   /* fl's R is in-core cuBLAS on this very shape */
    double rate_dev[OOC_MAX_DEVICES]; /* --devices: each device's probe (TFLOP/s), as env->devs */
    char floor_note[PEER_MSG_LEN + 64]; /* why the floor is n/a, or "" */
    const char *backend;
    ooc_stats_t stats;
    int have_stats;
    bench_method_t *meth;
    int nmeth;
    int xt_best; /* index in meth, -1: none */
    double ratio; /* time of cublasXt's best / time of ours; 0: n/a */
    int ours_one; /* --devices: index in meth of ours on the first device alone; -1: none */
    double scaling; /* its time / ours' on all the devices; 0: n/a */
    double tol;
    int64_t check_rows; /* 0: no check */
    const char *peers_skipped; /* why the peers did not run, or NULL */
    char error[PEER_MSG_LEN];  /* a failure of the shape as a whole, or "" */
} bench_result_t;

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
            "  cublasXt        on the same GPU, at its default block dim (first, on a\n"
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
            "Several GPUs (--devices LIST|all, as in 'oocgemm run'; more than one):\n"
            "  in the same run, on the same host buffers, for each shape:\n"
            "  ours            on all the devices (the row 'ours'), then on the first\n"
            "                  device listed alone ('ours, device F alone')\n"
            "  cublasXt        on all the devices (cublasXtDeviceSelect), at its default\n"
            "                  block dim and at each of --xt-dims\n"
            "  in-core cuBLAS  on the first device\n"
            "  ours, op(B) from the host / shared  on all the devices, the way of\n"
            "                  moving op(B) that --peer-b auto did not choose\n"
            "  the serial loop, a one-GPU baseline, is not run.\n"
            "  The floor is that of the GPUs together (PERFORMANCE.md): pinned copies of\n"
            "  1 GiB per GPU each way with every GPU copying at once (one stream per GPU\n"
            "  and direction, best of 3): H2D alone, D2H alone, both ways at once; the\n"
            "  in-core rate measured on each device and summed (scaled by what in-core\n"
            "  cuBLAS on the whole shape gave the first over its probe, when it ran):\n"
            "    floor = max(T_in, T_out, T_bus, T_math), T_bus = (in + out) / both-ways\n"
            "  Every floor/time is against it. Printed besides: the scaling (ours on the\n"
            "  first alone over ours on all) and ours / cublasXt best on all of them.\n"
            "  With --backend host (OOC_HOST_DEVICES=N simulates N devices) ours runs\n"
            "  both ways; the floor of several GPUs is n/a.\n"
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
            "  --device N (the peers run there too), --devices LIST|all (above),\n"
            "  --device-mem, --host-mem, --block-rows, --ring, --streams, --peer-b,\n"
            "  --staging-threads, --tf32 (also for the serial loop and in-core cuBLAS;\n"
            "  cublasXt has no TF32 mode), --trace (ours on all the devices), as in\n"
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
            "  With --devices: the in-core rate of each device, and before that ratio\n"
            "    scaling: ours on devices L = X.XX x ours on device F alone\n"
            "  (ours on the first alone over ours on all of them).\n"
            "  --csv                 a header and one row per (shape, method) instead\n"
            "                        (with --devices: devices, on_devices (all or\n"
            "                        first), bw_both_gbps, floor_bus_s, scaling)\n"
            "  --json                one JSON document instead: per shape bw, rates,\n"
            "                        floor, plan, methods with times and checks, ratio\n"
            "                        (with --devices: devices, first_device,\n"
            "                        incore_per_device_tflops, bw_both_gbps,\n"
            "                        floor_bus_s, floor_note, scaling, each method's\n"
            "                        on_devices, the plan's devices)\n"
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

static double bench_flops(const run_opts_t *o)
{
    return (dtype_complex(o->dtype) ? 8.0 : 2.0) * (double)o->m * (double)o->n * (double)o->k;
}

/* The buffers of one shape and what a method's one run needs. */
typedef struct {
    const bench_opts_t *bo;
    const bench_env_t *env;
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

/* A handle with the library options as given (device < 0) or with device
 * alone (and no trace): *out, also when an option failed (its message is
 * there; the caller destroys it). */
static ooc_status_t bench_handle(const lib_opts_t *lib, int device, ooc_handle_t **out)
{
    lib_opts_t l = *lib;
    if (device >= 0) {
        l.devices = (uint32_t)1 << device;
        l.devices_given = 1;
        l.device_given = 0;
        l.trace = NULL;
    }
    *out = NULL;
    ooc_status_t st = ooc_create(out);
    if (st == OOC_SUCCESS) st = lib_opts_apply(*out, &l);
    return st;
}

/* Ours, as a new method: on a fresh handle (device >= 0: that device
 * alone), destroyed after so that its buffers leave the device to the
 * peers, or on the shape's handle h when no peer follows. *stats when it
 * ran (and res->backend with them). */
static bench_method_t *bench_ours(bench_shape_ctx_t *x, ooc_handle_t *h, const char *label, int device,
                                  int fresh_always, ooc_stats_t *stats, int *have_stats)
{
    bench_result_t *res = x->res;
    bench_method_t *mt = bench_new_method(res, BM_OURS, label);
    int fresh = x->env->peers || device >= 0 || fresh_always;
    ooc_handle_t *ho = h;
    mt->first_only = device >= 0;
    *have_stats = 0;
    if (fresh) {
        ooc_status_t st = bench_handle(&res->o.lib, device, &ho);
        if (st != OOC_SUCCESS) {
            mt->status = BS_ERROR;
            snprintf(mt->msg, sizeof mt->msg, "ooc_create: %s: %s", ooc_status_string(st),
                     ho ? ooc_last_error(ho) : "");
            ooc_destroy(ho);
            return mt;
        }
    }
    x->ours = ho;
    bench_method(x, mt);
    *have_stats = mt->status == BS_RAN && ooc_get_stats(ho, stats) == OOC_SUCCESS;
    if (*have_stats) {
        mt->block_rows = stats->block_rows;
        res->backend = ooc_backend_name(ho);
    }
    if (fresh) ooc_destroy(ho);
    x->ours = NULL;
    return mt;
}

/* With --devices: the floor of the GPUs together (PERFORMANCE.md): their
 * pinned copy bandwidth all at once (1 GiB per GPU each way, best of 3), and
 * the sum of their in-core rates, each probed on its own device. Unknown,
 * with the reason in res->floor_note, when either cannot be measured. */
static void bench_floor_multi(bench_shape_ctx_t *x)
{
    const bench_env_t *env = x->env;
    bench_result_t *res = x->res;
    const run_opts_t *o = &res->o;
    floor_t *fl = &res->fl;
    char msg[PEER_MSG_LEN];
    double h2d = 0, d2h = 0, both = 0, sum = 0;
    fl->ndev = env->ndev;
    if (!env->cuda) {
        snprintf(res->floor_note, sizeof res->floor_note,
                 "the floor of several GPUs needs their copy bandwidth: none on the host backend");
        return;
    }
    if (peer_bandwidth(env->devs, env->ndev, (size_t)1 << 30, 3, &h2d, &d2h, &both, msg, sizeof msg) != PEER_OK) {
        snprintf(res->floor_note, sizeof res->floor_note, "the copy bandwidth of the GPUs at once: %s", msg);
        return;
    }
    fl->bw_h2d = h2d / 1e9;
    fl->bw_d2h = d2h / 1e9;
    fl->bw_both = both / 1e9;
    fl->measured_bw = 1;
    for (int i = 0; i < env->ndev; i++) {
        floor_t one;
        ooc_handle_t *hd = NULL;
        memset(&one, 0, sizeof one);
        if (bench_handle(&o->lib, env->devs[i], &hd) == OOC_SUCCESS)
            floor_measure_rate(hd, o->dtype, o->m, o->n, o->k, x->bo->quiet, &one);
        ooc_destroy(hd);
        res->rate_dev[i] = one.rate;
        if (one.rate <= 0) {
            snprintf(res->floor_note, sizeof res->floor_note, "the in-core rate of device %d: not measured",
                     env->devs[i]);
            return;
        }
        sum += one.rate;
        fl->pm = one.pm, fl->pn = one.pn, fl->pk = one.pk;
    }
    fl->rate = sum;
    fl->measured_rate = 1;
    floor_compute(fl, o->dtype, o->m, o->n, o->k, o->beta != 0.0);
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
    x.env = env;
    x.res = res;
    res->env = env;
    res->sh = *sh;
    res->xt_best = -1;
    res->ours_one = -1;
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
    int nmax = 5 + 2 * (bo->nxt + 2);
    res->meth = calloc((size_t)nmax, sizeof *res->meth);

    ooc_handle_t *h = NULL;
    ooc_status_t st = bench_handle(&o->lib, -1, &h);
    if (st != OOC_SUCCESS || res->meth == NULL) {
        snprintf(res->error, sizeof res->error, "%s%s%s", res->meth ? ooc_status_string(st) : "out of host memory",
                 h && res->meth ? ": " : "", h && res->meth ? ooc_last_error(h) : "");
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
    if (env->multi) {
        bench_floor_multi(&x);
    } else {
        floor_measure(h, o->dtype, o->m, o->n, o->k, bo->quiet, &res->fl);
        floor_compute(&res->fl, o->dtype, o->m, o->n, o->k, o->beta != 0.0);
    }
    bench_progress_end(bo);
    res->backend = ooc_backend_name(h);

    double alpha[2] = {o->alpha, 0.0}, beta[2] = {o->beta, 0.0};
    float alpha_f[2] = {(float)o->alpha, 0.0f}, beta_f[2] = {(float)o->beta, 0.0f};
    x.alpha = dtype_double(o->dtype) ? (const void *)alpha : (const void *)alpha_f;
    x.beta = dtype_double(o->dtype) ? (const void *)beta : (const void *)beta_f;

    /* ours (meth[0]: on all the devices), and with --devices on the first alone */
    bench_ours(&x, h, "ours", -1, 0, &res->stats, &res->have_stats);
    if (env->multi) {
        char label[48];
        ooc_stats_t one;
        int have_one;
        snprintf(label, sizeof label, "ours, device %d alone", env->device);
        bench_ours(&x, h, label, env->device, 0, &one, &have_one);
        res->ours_one = res->nmeth - 1;
        /* the way of moving op(B) that ours (--peer-b auto) did not choose,
         * on all the devices: the choice checked against the other one */
        if (res->o.lib.peer_b == OOC_PEER_B_AUTO && res->have_stats) {
            lib_opts_t keep = res->o.lib;
            res->o.lib.peer_b = res->stats.b_shared ? OOC_PEER_B_HOST : OOC_PEER_B_SHARE;
            res->o.lib.trace = NULL;
            snprintf(label, sizeof label, "ours, op(B) %s", res->stats.b_shared ? "from the host" : "shared");
            bench_ours(&x, h, label, -1, 1, &one, &have_one);
            res->o.lib = keep;
        }
    }

    if (!env->peers) {
        res->peers_skipped = env->peers_reason;
    } else {
        char msg[PEER_MSG_LEN];
        int pst = peer_open(env->devs, env->ndev, o->lib.tf32, &x.peers, msg, sizeof msg);
        if (pst != PEER_OK) {
            bench_method_t *mt = bench_new_method(res, BM_SERIAL, "peers");
            mt->status = pst == PEER_FAILED ? BS_ERROR : BS_SKIPPED;
            snprintf(mt->msg, sizeof mt->msg, "%s", msg);
        } else {
            x.g = (peer_gemm_t){o->dtype, o->layout, o->ta, o->tb, o->m, o->n, o->k, x.alpha, x.beta,
                                x.A.p, x.A.ld, x.B.p, x.B.ld, x.C.p, x.C.ld};
            if (!bo->no_serial && !env->multi) {
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
                char label[48] = "in-core cuBLAS";
                if (env->multi) snprintf(label, sizeof label, "in-core cuBLAS, device %d", env->device);
                bench_method_t *ic = bench_new_method(res, BM_INCORE, label);
                ic->first_only = env->multi;
                bench_method(&x, ic);
                /* PERFORMANCE.md's R is in-core cuBLAS on the same shape: when the
                 * whole problem fitted, that run is the rate (a short probe runs
                 * at boost clocks a long multiply does not hold); with several
                 * GPUs each one's probe is scaled as the first's was */
                if (bench_valid(ic) && ic->best > 0 && res->fl.have) {
                    double whole = bench_flops(o) / ic->best / 1e12;
                    res->fl_probe = res->fl;
                    res->fl.rate = env->multi ? whole * res->fl_probe.rate / res->rate_dev[0] : whole;
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
    if (res->ours_one >= 0 && bench_valid(&res->meth[0]) && bench_valid(&res->meth[res->ours_one]) &&
        res->meth[0].best > 0)
        res->scaling = res->meth[res->ours_one].best / res->meth[0].best;

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

/* The devices of --devices as a list, "0-1" ("all" when not known), or for
 * people, "devices 0-1" ("every device"). */
static const char *bench_devices_list(const bench_env_t *env, int people, char *buf, size_t len)
{
    uint32_t mask = 0;
    char list[64];
    for (int i = 0; i < env->ndev; i++) mask |= (uint32_t)1 << env->devs[i];
    devices_format(mask, list, sizeof list);
    if (people) snprintf(buf, len, "%s%s", mask ? "devices " : "every device", mask ? list : "");
    else snprintf(buf, len, "%s", list);
    return buf;
}

static void bench_print_text(FILE *f, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    const bench_env_t *env = res->env;
    char devs[80];
    bench_devices_list(env, 1, devs, sizeof devs);
    bench_describe(f, res);
    if (res->error[0]) {
        fprintf(f, "error: %s\n\n", res->error);
        return;
    }
    if (env->multi)
        fprintf(f, "on %s: ours and cublasXt on all of them, the rows naming device %d on it alone; floor/time is "
                   "against the floor of all of them\n", devs, env->device);
    floor_print(f, &res->fl, o->dtype, -1.0);
    if (res->floor_note[0]) fprintf(f, "  (%s)\n", res->floor_note);
    if (env->multi && res->fl.measured_rate) {
        fputs("  in-core rate of each device (the probe):", f);
        for (int i = 0; i < env->ndev; i++) fprintf(f, "%s device %d %.3g", i ? "," : "", env->devs[i], res->rate_dev[i]);
        fputs(" TFLOP/s\n", f);
    }
    if (res->rate_whole && env->multi)
        fprintf(f, "  (R: in-core cuBLAS on the whole shape ran at %.3g times its probe on device %d; each device's "
                   "probe so scaled: %.3g TFLOP/s in all; the probes alone gave %.3g TFLOP/s, a floor of %.3g s)\n",
                res->fl.rate / res->fl_probe.rate, env->device, res->fl.rate, res->fl_probe.rate,
                res->fl_probe.floor_s);
    else if (res->rate_whole)
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
    if (res->scaling > 0)
        fprintf(f, "scaling: ours on %s = %.2f x ours on device %d alone (%.4g s and %.4g s)\n", devs, res->scaling,
                env->device, res->meth[0].best, res->meth[res->ours_one].best);
    else if (env->multi)
        fprintf(f, "scaling: n/a (ours did not run, or failed its check, on all or on one)\n");
    if (res->ratio > 0)
        fprintf(f, "ours / cublasXt best = %.2f (cublasXt best block dim %d%s%s%s; > 1: ours is faster)\n", res->ratio,
                res->meth[res->xt_best].dim_used, res->meth[res->xt_best].pinning ? ", pinning on" : "",
                env->multi ? ", both on " : "", env->multi ? devs : "");
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
          "tflops,floor_over_time,check,max_rel_err,tolerance,ours_over_xt_best,devices,on_devices,bw_both_gbps,"
          "floor_bus_s,scaling\n",
          f);
}

/* The columns of --devices at the end of a row (empty without it), and the
 * row's end; mt: the method of the row, NULL for a shape's error. */
static void bench_csv_devices(FILE *f, const bench_result_t *res, const bench_method_t *mt)
{
    const bench_env_t *env = res->env;
    char devs[80];
    fputc(',', f);
    if (env->multi) csv_str(f, bench_devices_list(env, 0, devs, sizeof devs));
    fputc(',', f);
    if (env->multi && mt) fprintf(f, "%s", mt->first_only ? "first" : "all");
    csv_num(f, res->fl.bw_both, res->fl.have && res->fl.bw_both > 0);
    csv_num(f, res->fl.t_bus, res->fl.have && res->fl.bw_both > 0);
    csv_num(f, res->scaling, res->scaling > 0);
    fputc('\n', f);
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
            fputs(",,,,,,,,", f);
            bench_csv_devices(f, res, NULL);
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
        bench_csv_devices(f, res, mt);
    }
}

/* --devices in a shape's JSON: "devices" (the list, the first first; [] for
 * every device when not known; null without --devices), "first_device", and
 * "incore_per_device_tflops" (each one's probe, or null). */
static void bench_json_devices(FILE *f, const bench_result_t *res)
{
    const bench_env_t *env = res->env;
    if (!env->multi) {
        fputs(",\"devices\":null,\"first_device\":null,\"incore_per_device_tflops\":null", f);
        return;
    }
    fputs(",\"devices\":[", f);
    for (int i = 0; i < env->ndev; i++) fprintf(f, "%s%d", i ? "," : "", env->devs[i]);
    fprintf(f, "],\"first_device\":%d,\"incore_per_device_tflops\":", env->device);
    if (!res->fl.measured_rate) {
        fputs("null", f);
        return;
    }
    for (int i = 0; i < env->ndev; i++) fprintf(f, "%c%.9g", i ? ',' : '[', res->rate_dev[i]);
    fputc(']', f);
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
    json_num(f, "bw_both_gbps", fl->bw_both, have && fl->bw_both > 0);
    json_num(f, "floor_bus_s", fl->t_bus, have && fl->bw_both > 0);
    fputs(",\"floor_note\":", f);
    json_str(f, res->floor_note[0] ? res->floor_note : NULL);
    bench_json_devices(f, res);
    json_num(f, "target_floor_over_time", res->sh.target, res->sh.target > 0);
    fprintf(f, ",\"check_rows\":%lld", (long long)res->check_rows);
    json_num(f, "check_tolerance", res->tol, res->check_rows > 0);
    if (res->have_stats)
        fprintf(f,
                ",\"plan\":{\"block_rows\":%lld,\"panel_cols\":%lld,\"panel_depth\":%lld,\"blocks\":%lld,"
                "\"panels\":%lld,\"ring_depth\":%d,\"streams\":%d,\"staged_a\":%d,\"staged_c\":%d,"
                "\"device_bytes\":%" PRIu64 ",\"host_bytes\":%" PRIu64 ",\"bytes_h2d\":%" PRIu64
                ",\"bytes_d2h\":%" PRIu64,
                (long long)res->stats.block_rows, (long long)res->stats.panel_cols, (long long)res->stats.panel_depth,
                (long long)res->stats.blocks, (long long)res->stats.panels, (int)res->stats.ring_depth,
                (int)res->stats.streams, (int)res->stats.staged_a, (int)res->stats.staged_c,
                res->stats.device_bytes, res->stats.host_bytes, res->stats.bytes_h2d, res->stats.bytes_d2h);
    if (res->have_stats) {
        json_devices(f, &res->stats);
        fputc('}', f);
    } else {
        fputs(",\"plan\":null", f);
    }
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
        if (res->env->multi) fprintf(f, ",\"on_devices\":\"%s\"", mt->first_only ? "first" : "all");
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
    json_num(f, "scaling", res->scaling, res->scaling > 0);
    fputc('}', f);
}

/* One line per shape: ours' floor/time against its target, and against cublasXt. */
static void bench_print_summary(FILE *f, const bench_result_t *all, int n)
{
    int multi = n > 0 && all[0].env->multi;
    fprintf(f, "summary (ours / cublasXt best: cublasXt's best time over ours, > 1: ours is faster%s)\n",
            multi ? "; scaling: ours on the first device alone over ours on all" : "");
    fprintf(f, "  %-8s %-10s %-16s %-22s %-*s%s\n", "shape", "ours s", "ours floor/time", "target", multi ? 22 : 0,
            "ours / cublasXt best", multi ? " scaling" : "");
    for (int i = 0; i < n; i++) {
        const bench_result_t *r = &all[i];
        const bench_method_t *ours = r->nmeth > 0 ? &r->meth[0] : NULL;
        char t[16] = "-", ft[16] = "n/a", tg[32] = "-", xr[32] = "n/a", sc[16] = " n/a";
        int ran = ours && ours->status == BS_RAN;
        if (ran) snprintf(t, sizeof t, "%.4g", ours->best);
        double q = ran && r->fl.have && ours->best > 0 ? r->fl.floor_s / ours->best : 0;
        if (q > 0) snprintf(ft, sizeof ft, "%.2f", q);
        if (r->sh.target > 0 && q > 0)
            snprintf(tg, sizeof tg, ">= %.2f %s", r->sh.target, q >= r->sh.target ? "met" : "MISSED");
        if (r->ratio > 0) snprintf(xr, sizeof xr, "%.2f%s", r->ratio, r->ratio >= 1.0 ? "" : " (slower)");
        if (r->error[0]) snprintf(xr, sizeof xr, "error");
        if (r->scaling > 0) snprintf(sc, sizeof sc, " %.2f", r->scaling);
        fprintf(f, "  %-8s %-10s %-16s %-22s %-*s%s\n", r->sh.name, t, ft, tg, multi ? 22 : 0, xr, multi ? sc : "");
    }
}

/*
 * The devices of the run into env: the first (the peers' one, ours' alone
 * with --devices) and, with --devices, all of them, the first listed first
 * (multi when more than one). count: the GPUs visible, or 0 on the host
 * backend: the list as given (for 'all': every simulated device, not known,
 * ndev 0). RC_OK, or RC_RUNTIME (message printed) for a device not there.
 */
static int bench_env_devices(const lib_opts_t *lib, int count, bench_env_t *env)
{
    uint32_t mask = lib->devices;
    env->ndev = 1;
    if (!lib->devices_given) {
        env->devs[0] = env->device = (int)lib->device;
        return RC_OK;
    }
    if (mask == 0 && count > 0) mask = count >= OOC_MAX_DEVICES ? UINT32_C(0xffff) : ((uint32_t)1 << count) - 1;
    env->device = lib->devices_first >= 0 ? lib->devices_first : mask ? __builtin_ctz(mask) : 0;
    env->devs[0] = env->device;
    for (int d = 0; d < OOC_MAX_DEVICES; d++)
        if ((mask >> d & 1) && d != env->device) env->devs[env->ndev++] = d;
    for (int i = 0; count > 0 && i < env->ndev; i++)
        if (env->devs[i] >= count) {
            char b[64];
            return fail(RC_RUNTIME, "bench: --devices %s: there is no device %d (%d visible)",
                        devices_format(lib->devices, b, sizeof b), env->devs[i], count);
        }
    env->multi = mask == 0 || env->ndev > 1;
    if (mask == 0) env->ndev = 0;
    return RC_OK;
}

int cmd_bench(int argc, char **argv)
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
    ooc_handle_t *probe = NULL;
    ooc_status_t st = bench_handle(&bo->lib, -1, &probe);
    int count = 0;
    if (st == OOC_SUCCESS) st = ooc_device_count(probe, &count);
    if (st != OOC_SUCCESS) {
        rc = library_error(probe, st);
        ooc_destroy(probe);
        free(bo);
        return rc;
    }
    env.cuda = bo->lib.backend != OOC_BACKEND_HOST;
    if (env.cuda && count == 0) {
        ooc_destroy(probe);
        free(bo);
        return fail(RC_RUNTIME,
                    "bench: no GPU found: the peers (serial loop, cublasXt, in-core cuBLAS) need one; "
                    "with --backend host, ours and the floor run on the CPU without them");
    }
    if ((rc = bench_env_devices(&bo->lib, env.cuda ? count : 0, &env)) != RC_OK) {
        ooc_destroy(probe);
        free(bo);
        return rc;
    }
    if (!env.cuda) {
        env.peers_reason = "backend host: the peers (serial loop, cublasXt, in-core cuBLAS) need a GPU";
    } else if ((bo->no_serial || env.multi) && bo->no_xt && bo->no_incore) {
        env.peers_reason = env.multi ? "--no-xt --no-incore" : "--no-serial --no-xt --no-incore";
    } else {
        env.peers = 1;
    }
    for (int i = 0; env.cuda && i < env.ndev; i++) {
        ooc_device_info_t di;
        size_t at = strlen(env.gpu);
        if (ooc_device_info(probe, env.devs[i], &di) == OOC_SUCCESS)
            snprintf(env.gpu + at, sizeof env.gpu - at, "%sGPU %d: %s", i ? "; " : "", env.devs[i], di.name);
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
