/* SPDX-License-Identifier: MIT */
/*
 * cmd_bench.c: oocgemm bench: on the same host buffers, time ours, the serial
 * loop, cublasXt and in-core cuBLAS (peers.h, peers_cuda.c) against the floor
 * measured in the same run; check each result; report as text, CSV or JSON.
 * With --devices: ours on the first device alone and on all of them, cublasXt
 * on all of them, against the floor of the GPUs together.
 */
#include "config.h"

#include "bench.h"

/* ------------------------------------------------------------------------ */
/* oocgemm bench                                                             */

static const bench_shape_t bench_presets[] = {
    {"S1", BENCH_S1, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0.97, "reference: bound by the multiply", 0, 0},
    {"S2", 262144, 1024, 4096, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0.95, "reference: bound by copies in", 0, 0},
    {"S3", BENCH_S1, OOC_R32, BENCH_COL_NN, 1.0, 0.0, 1, 0.97, "reference: single precision", 0, 0},
    {"S1p", BENCH_S1, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 0, 0.90, "reference: S1 from pageable memory", 0, 0},
    {"tall", 131072, 4096, 4096, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0.90, "many row blocks, small B", 0, 0},
    {"square", 32768, 32768, 32768, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0, "B of 8.6 GB, 26 GB in all", 0, 0},
    {"wide", 4096, 131072, 4096, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0, "few rows; B and C large", 0, 0},
    {"smallk", 65536, 16384, 256, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0, "small k: bound by copies of C out", 0, 0},
    {"beta1", BENCH_S1, OOC_R64, BENCH_COL_NN, 1.0, 1.0, 1, 0, "C0 read in (S1 shape)", 0, 0},
    {"tn", 32768, 16384, 16384, OOC_R64, OOC_COL_MAJOR, OOC_OP_T, OOC_OP_N, 1.0, 0.0, 1, 0,
     "op(A) = A^T (TN)", 0, 0},
    {"row", BENCH_S1, OOC_R64, OOC_ROW_MAJOR, OOC_OP_N, OOC_OP_N, 1.0, 0.0, 1, 0, "row-major (S1 shape)", 0, 0},
    /* the cases of issue 13: copies about as long as the math, a small GPU, pageable and copy-bound */
    {"tf32", BENCH_S1, OOC_R32, BENCH_COL_NN, 1.0, 0.0, 1, 0.90, "S3 with TF32: copies about equal to the math", 1,
     0},
    {"panels", BENCH_S1, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0.90,
     "S1 with a 1 GiB device budget: op(B) in panels", 0, (int64_t)1 << 30},
    {"pageable-copy", 100003, 777, 50001, OOC_R64, BENCH_COL_NN, 1.0, -1.0, 0, 0.90,
     "odd sizes, C0 read in, bound by copies through staging", 0, 0},
};
#define BENCH_NPRESETS (sizeof bench_presets / sizeof bench_presets[0])
#define BENCH_MAX_SHAPES 64
void bench_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm bench [-m M -n N -k K] [--shape NAME[,NAME...]] [--suite] [OPTIONS]\n"
            "\n"
            "Time libooc_gemm against the floor of docs/PERFORMANCE.md and against its\n"
            "peers, on the same host buffers, and check every result against OpenBLAS.\n"
            "For each shape: allocate A, B and C once (pinned through ooc_host_alloc, or\n"
            "pageable), fill them once with seeded random values, measure the floor's\n"
            "figures as 'oocgemm run --help' says (a GPU: pinned copies of 1 GiB each\n"
            "way and the in-core rate of cuBLAS; the host backend: the CPU's GEMM rate),\n"
            "then run each method: one untimed warm-up and R timed runs (best and\n"
            "median). After each method's last run, the rows of C given by --check-rows\n"
            "are checked against OpenBLAS as in 'oocgemm run'. Before each method C is\n"
            "set to NaN when beta = 0; when beta != 0 it is refilled with the same C0\n"
            "before every run.\n"
            "\n"
            "The methods, in this order:\n"
            "  ours            ooc_gemm on a fresh handle at default settings (plus any\n"
            "                  library option given below)\n"
            "  in-core cuBLAS  when A, B and C fit in device memory: uploaded untimed,\n"
            "                  the multiply alone timed with CUDA events; its best\n"
            "                  rate is then the floor's (the short probe's is shown\n"
            "                  beside it). It runs right after ours, so that both\n"
            "                  see the GPU in the same state\n"
            "  serial loop     op(B) uploaded whole, then for each block of rows of op(A)\n"
            "                  (as many rows as our plan's blocks): synchronous copy in,\n"
            "                  cuBLAS gemm, synchronous copy out; one stream, no overlap;\n"
            "                  the time includes B's upload\n"
            "  cublasXt        on the same GPU, at its default block dim (first, on a\n"
            "                  fresh handle) and at each block dim of --xt-dims; the time\n"
            "                  is the gemm call alone. Pinned memory: pinning mode off\n"
            "                  (its default). Pageable: pinning mode on at every block\n"
            "                  dim, then off at the best one (see --xt-pinning)\n"
            "\n"
            "The peers need a GPU. Without one, bench stops (exit 3) unless given\n"
            "--backend host: then ours and the floor (the CPU's) run on the host backend\n"
            "and the peers are skipped, as with --backend host on a GPU.\n"
            "\n"
            "Shapes (several may be given; those of --shape run in the order given, then\n"
            "the -m/-n/-k one, then --suite's):\n"
            "  -m M, -n N, -k K      one shape of your own (d, col-major, NN, beta 0,\n"
            "                        pinned unless the options below say otherwise)\n"
            "  --shape NAME[,NAME]   named shapes (case-insensitive; listed below)\n"
            "  --suite               every named shape below, in that order (S1, S2, S3,\n"
            "                        S1p, then the sweep: tall, square, wide, smallk,\n"
            "                        beta1, tn, row, tf32, panels, pageable-copy), with\n"
            "                        --repeat 2 and --xt-dims 2048,4096,8192 unless\n"
            "                        given. At most 41 GB of host memory at a time\n"
            "                        (pageable-copy)\n"
            "\n"
            "Named shapes (type, m x n x k, layout, ops: what each shows):\n");
    /* one entry each, its name as the tag (help2man makes each a .TP item of
     * the manual page, rather than one run-on paragraph) */
    for (size_t i = 0; i < BENCH_NPRESETS; i++) {
        const bench_shape_t *s = &bench_presets[i];
        char ops[8];
        snprintf(ops, sizeof ops, "%c%c", op_letter(s->ta), op_letter(s->tb));
        char beta[32] = "", mem[48] = "";
        if (s->beta != 0.0) snprintf(beta, sizeof beta, " beta=%g", s->beta);
        if (s->device_mem) snprintf(mem, sizeof mem, " --device-mem %lldM", (long long)(s->device_mem >> 20));
        fprintf(f, "  %-14s %c %lldx%lldx%lld %s %s%s%s%s%s:\n                 %s\n", s->name,
                dtype_letter(s->dtype), (long long)s->m, (long long)s->n, (long long)s->k, layout_name(s->layout),
                ops, beta, s->pinned ? "" : " pageable", s->tf32 ? " --tf32" : "", mem, s->about);
    }
    fprintf(f,
            "\n"
            "Targets (PERFORMANCE.md): ours' floor/time >= 0.97 on S1 and S3, >= 0.95 on\n"
            "S2, >= 0.90 on S1p, tall, tf32, panels and pageable-copy (issue 13's cases);\n"
            "on every shape no slower than cublasXt's best.\n"
            "\n"
            "Problem (given: they replace the named shapes' own values):\n"
            "  --dtype T             element type, as in 'oocgemm run'\n"
            "  --layout row|col      storage layout of A, B and C\n"
            "  --transa N|T|C        op(A)\n"
            "  --transb N|T|C        op(B)\n"
            "  --alpha X, --beta X   real scalars\n"
            "  --memory pinned|pageable\n"
            "                        A, B and C from ooc_host_alloc, or pageable\n"
            "  --seed S              seed of the random matrices (default 42)\n"
            "\n"
            "Methods:\n"
            "  --repeat R            timed runs per method after the warm-up (default 3;\n"
            "                        2 with --suite); ours and in-core cuBLAS run at\n"
            "                        least 3 times whatever R (floor/time is made of\n"
            "                        their bests: one run of each can land on different\n"
            "                        phases of the GPU's varying rate)\n"
            "  --xt-dims LIST        cublasXt block dims besides its default, separated by\n"
            "                        commas, or 'none' (default 1024,2048,4096,8192,16384);\n"
            "                        a dim equal to the default is not run twice\n"
            "  --xt-pinning auto|off|on|both\n"
            "                        cublasXt's pinning mode (auto: as described above)\n"
            "  --no-xt, --no-serial, --no-incore\n"
            "                        leave that peer out\n"
            "  --check-rows N        rows of C checked (default 64); 0: no check\n"
            "\n"
            LIB_HELP
            "In bench the library options are ours'; --tf32 also applies to the serial\n"
            "loop and in-core cuBLAS (cublasXt has no TF32 mode), --trace to ours on all\n"
            "the devices, and the peers run on the first device of --devices.\n"
            "\n"
            "Several GPUs (--devices with more than one, or none given where several are\n"
            "visible): in the same run, on the same host buffers, for each shape: ours on\n"
            "all the devices (the row 'ours'), then on the first listed alone ('ours,\n"
            "device F alone'), and on all of them the way of moving op(B) that --peer-b\n"
            "auto did not choose ('ours, op(B) from the host' or 'ours, op(B) shared');\n"
            "cublasXt on all the devices (cublasXtDeviceSelect); in-core cuBLAS on the\n"
            "first; the serial loop, a one-GPU baseline, is not run. The floor is that of\n"
            "the GPUs together: pinned copies of 1 GiB per GPU each way with every GPU\n"
            "copying at once (best of 3: host to device, device to host, both at once) and\n"
            "the sum of the in-core rates measured on each device: floor = max(T_in, T_out,\n"
            "T_bus, T_host, T_math), T_bus = (in + out) / the both-ways bandwidth. Every\n"
            "floor/time is against it; printed besides: the scaling (ours on the first\n"
            "alone over ours on all) and ours / cublasXt best. With --backend host\n"
            "(OOC_HOST_DEVICES=N simulates N devices) ours runs both ways; the floor of\n"
            "several GPUs is n/a.\n"
            "\n"
            "Output:\n"
            "  --csv                 a header and one row per (shape, method) instead of\n"
            "                        the text (with several GPUs: devices, on_devices\n"
            "                        (all or first), bw_both_gbps, floor_bus_s, scaling)\n"
            "  --json                one JSON object instead (see JSON OUTPUT in the\n"
            "                        manual): gpu, repeat and shapes, each with its shape,\n"
            "                        floor, plan, stats, devices, methods (times and\n"
            "                        checks), cublasxt_best, ours_over_cublasxt_best,\n"
            "                        scaling\n"
            "  -q, --quiet           print nothing but errors (and failed checks)\n"
            "  -h, --help            this help\n"
            "\n"
            "The text: per shape the floor, ours' plan, and a table: method, best s,\n"
            "median s, TFLOP/s, floor/time, check (PASS, FAIL, or UNDECIDED where\n"
            "OpenBLAS's product overflows the type, and the largest relative error of the\n"
            "rest); then ours / cublasXt best = X.XX, cublasXt's best time over ours (> 1:\n"
            "ours is faster; only results that passed their check compete), and a\n"
            "summary of all shapes. With several GPUs: the in-core rate of each device and\n"
            "the scaling. Exit status 1 when any check failed; else 3 when any method\n"
            "failed to run (its row says ERROR) or a shape could not be set up; skipped\n"
            "peers (not built, does not fit) are not failures.\n"
            "\n");
}

const struct option bench_long_opts[] = {
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"suite", no_argument, NULL, OPT_SUITE},
    PROBLEM_LONG_OPTS,
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

    common_opts_t co = {.dtype = OOC_R64, .layout = OOC_COL_MAJOR, .ta = OOC_OP_N, .tb = OOC_OP_N,
                        .alpha = 1.0, .pinned = 1, .seed = 42, .check_rows = 64};

    memset(o, 0, sizeof *o);
    o->lib.backend = OOC_BACKEND_AUTO;
    o->repeat = 3;
    o->xt_pinning = -1;

    opterr = 0;
    optind = 1;
    for (;;) {
        char optname[64];
        int c = cli_getopt(argc, argv, ":m:n:k:qh", bench_long_opts, optname, sizeof optname);
        if (c == -1) break;
        int shared = common_opt_parse(cmd, c, optname, optarg, &co);
        if (shared == 0) shared = lib_opt_parse(cmd, c, optname, optarg, &o->lib);
        if (shared < 0) return RC_USAGE;
        if (shared > 0) continue;
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
        case OPT_CSV: o->csv = 1; break;
        case 'h': bench_usage(help_out()); print_exit_codes(help_out()); return -1;
        default: return getopt_failure(cmd, c, argv, "mnkqh");
        }
    }
    o->seed = co.seed;
    o->check_rows = co.check_rows;
    o->quiet = co.quiet;
    o->json = co.json;
    if (optind < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (o->csv && o->json) return usage_error(cmd, "--csv and --json exclude each other");
    if (o->have_m || o->have_n || o->have_k) {
        if (!o->have_m) return usage_error(cmd, "-m M is required with -n and -k (rows of op(A) and C)");
        if (!o->have_n) return usage_error(cmd, "-n N is required with -m and -k (columns of op(B) and C)");
        if (!o->have_k) return usage_error(cmd, "-k K is required with -m and -n (columns of op(A), rows of op(B))");
        bench_shape_t s = {"custom", o->m, o->n, o->k, OOC_R64, BENCH_COL_NN, 1.0, 0.0, 1, 0, "given", 0, 0};
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
        if (co.dtype_given) s->dtype = co.dtype;
        if (co.layout_given) s->layout = co.layout;
        if (co.ta_given) s->ta = co.ta;
        if (co.tb_given) s->tb = co.tb;
        if (co.alpha_given) s->alpha = co.alpha;
        if (co.beta_given) s->beta = co.beta;
        if (co.memory_given) s->pinned = co.pinned;
        /* (as run: 1e39 became Inf, 1e-50 a 0 that multiplied nothing) */
        if (scalars_fit(cmd, s->dtype, s->alpha, s->beta) != RC_OK) return RC_USAGE;
    }
    return RC_OK;
}

/*
 * The devices of the run into env: the first (the peers' one, ours' alone
 * with --devices) and, with --devices (or none given where several GPUs are
 * visible: all of them, as ours runs), all of them, the first listed first
 * (multi when more than one). count: the GPUs visible, or 0 on the host
 * backend: the list as given (for 'all': every simulated device, not known,
 * ndev 0). RC_OK, or RC_RUNTIME (message printed) for a device not there.
 */
static int bench_env_devices(const lib_opts_t *lib, int count, bench_env_t *env)
{
    uint32_t mask = lib->devices;
    env->ndev = 1;
    if (!lib->devices_given && count <= 1) {
        env->devs[0] = env->device = 0;
        return RC_OK;
    }
    /* not given with several GPUs: all of them, as ours runs (the default) */
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

/* What holds for every shape: a GPU for the peers, the devices, their
 * names. RC_OK, or a failure (message printed). */
static int bench_env(const bench_opts_t *bo, bench_env_t *env)
{
    memset(env, 0, sizeof *env);
    ooc_handle_t *probe = NULL;
    ooc_status_t st = bench_handle(&bo->lib, -1, &probe);
    int count = 0, rc = RC_OK;
    if (st == OOC_SUCCESS) st = ooc_device_count(probe, &count);
    env->cuda = bo->lib.backend != OOC_BACKEND_HOST;
    if (st != OOC_SUCCESS)
        rc = library_error(probe, st);
    else if (env->cuda && count == 0)
        rc = fail(RC_RUNTIME, "bench: no GPU found: the peers (serial loop, cublasXt, in-core cuBLAS) need one; "
                              "with --backend host, ours and the floor run on the CPU without them");
    else
        rc = bench_env_devices(&bo->lib, env->cuda ? count : 0, env);
    if (rc == RC_OK) {
        if (!env->cuda)
            env->peers_reason = "backend host: the peers (serial loop, cublasXt, in-core cuBLAS) need a GPU";
        else if ((bo->no_serial || env->multi) && bo->no_xt && bo->no_incore)
            env->peers_reason = env->multi ? "--no-xt --no-incore" : "--no-serial --no-xt --no-incore";
        else
            env->peers = 1;
        for (int i = 0; env->cuda && i < env->ndev; i++) {
            ooc_device_info_t di;
            size_t at = strlen(env->gpu);
            if (ooc_device_info(probe, env->devs[i], &di) == OOC_SUCCESS)
                snprintf(env->gpu + at, sizeof env->gpu - at, "%sGPU %d: %s", i ? "; " : "", env->devs[i], di.name);
        }
    }
    ooc_destroy(probe);
    return rc;
}

/* A failed check or method on stderr (the text table shows them itself). */
static void bench_complain(const bench_opts_t *bo, const bench_result_t *res, int *any_fail, int *any_error)
{
    int say = bo->quiet || bo->json || bo->csv;
    if (res->error[0]) *any_error = 1;
    for (int j = 0; j < res->nmeth; j++) {
        const bench_method_t *mt = &res->meth[j];
        if (mt->status == BS_ERROR) *any_error = 1;
        if (mt->checked && !mt->passed) {
            *any_fail = 1;
            char words[160];
            if (say && check_verdict(mt->max_err, res->tol, mt->off, mt->undecided) == CHECK_UNDECIDED)
                fprintf(stderr, "%s: %s: %s: check undecided: %s\n", progname, res->sh.name, mt->label,
                        check_undecided_words(mt->undecided, res->o.dtype, words, sizeof words));
            else if (say)
                fprintf(stderr, "%s: %s: %s: check failed: max relative error %.2g exceeds the tolerance %.2g\n",
                        progname, res->sh.name, mt->label, mt->max_err, res->tol);
        }
        if (mt->status == BS_ERROR && say)
            fprintf(stderr, "%s: %s: %s: %s\n", progname, res->sh.name, mt->label, mt->msg);
    }
    if (res->error[0] && say) fprintf(stderr, "%s: %s: %s\n", progname, res->sh.name, res->error);
}

/* Every shape in turn, each reported as soon as it is done. */
static int bench_shapes(const bench_opts_t *bo, const bench_env_t *env, bench_result_t *all)
{
    int any_fail = 0, any_error = 0, usage = 0, done = 0;
    json_t js;
    if (bo->json) {
        json_open(&js, stdout, "bench");
        json_string(&js, "gpu", env->gpu[0] ? env->gpu : NULL);
        json_int(&js, "repeat", bo->repeat);
        json_array(&js, "shapes");
    } else if (bo->csv) {
        bench_csv_header(stdout);
    } else if (!bo->quiet) {
        printf("oocgemm %s bench (libooc_gemm %s)%s%s\n\n", PACKAGE_VERSION, ooc_version_string(),
               env->gpu[0] ? ": " : "", env->gpu);
    }
    fflush(stdout);
    for (int i = 0; i < bo->nshapes; i++) {
        bench_result_t *res = &all[i];
        if (bench_shape(bo, env, &bo->shapes[i], res) == RC_USAGE) {
            usage = 1;
            break;
        }
        done++;
        bench_complain(bo, res, &any_fail, &any_error);
        if (bo->json) bench_print_json(&js, res);
        else if (bo->csv) bench_print_csv(stdout, res);
        else if (!bo->quiet) bench_print_text(stdout, res);
        fflush(stdout);
    }
    int rc = usage ? RC_USAGE : any_fail ? RC_CHECK_FAILED : any_error ? RC_RUNTIME : RC_OK;
    if (rc == RC_CHECK_FAILED) snprintf(fail_msg, sizeof fail_msg, "a check against OpenBLAS failed");
    else if (rc == RC_RUNTIME) snprintf(fail_msg, sizeof fail_msg, "a method failed to run or a shape could not be set up");
    if (bo->json) {
        json_end(&js);
        json_close(&js, rc);
    } else if (!bo->csv && !bo->quiet && done > 1) {
        bench_print_summary(stdout, all, done);
    }
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    bench_opts_t *bo = calloc(1, sizeof *bo);
    bench_result_t *all = NULL;
    bench_env_t env;
    if (bo == NULL) return fail(RC_RUNTIME, "out of host memory");
    int rc = bench_parse(argc, argv, bo);
    if (rc < 0) rc = RC_OK; /* --help */
    else if (rc == RC_OK && (rc = bench_env(bo, &env)) == RC_OK) {
        all = calloc((size_t)bo->nshapes, sizeof *all);
        rc = all ? bench_shapes(bo, &env, all) : fail(RC_RUNTIME, "out of host memory");
    }
    for (int i = 0; all && i < bo->nshapes; i++) bench_result_free(&all[i]);
    free(all);
    free(bo);
    return rc;
}
