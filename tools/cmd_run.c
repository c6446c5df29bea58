/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c: oocgemm run: multiply seeded random in-memory matrices through
 * the library, time it (best and median of --repeat runs), compare the time
 * with the PCIe/compute floor, and check sampled rows of C against OpenBLAS.
 */
#include "config.h"

#include "cli.h"

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
            "  --dtype T             element type: s, d, c or z (float32, float64,\n"
            "                        complex64, complex128; also f4, f8, c8, c16)\n"
            "                        (default d)\n"
            "  --layout row|col      storage layout of A, B and C: row-major (C order)\n"
            "                        or column-major (Fortran order; also C or F)\n"
            "                        (default col)\n"
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
            DEVICES_HELP
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
            "                        times, rate, floor, check, the library's stats,\n"
            "                        and devices: a list with what each device did\n"
            "                        (device, blocks, bytes_h2d, bytes_d2h, seconds,\n"
            "                        and with --trace its busy times and overlap\n"
            "                        efficiency, else null)\n"
            "  The summary shows one line per device when several ran.\n"
            "  -h, --help            this help\n"
            "\n");
}

static const struct option run_long_opts[] = {
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"transa", required_argument, NULL, OPT_TRANSA},
    {"transb", required_argument, NULL, OPT_TRANSB},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"memory", required_argument, NULL, OPT_MEMORY},
    LIB_LONG_OPTS,
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"check-rows", required_argument, NULL, OPT_CHECK_ROWS},
    {"no-check", no_argument, NULL, OPT_NO_CHECK},
    FLOOR_LONG_OPTS,
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
    common_opts_t co = {.dtype = OOC_R64, .layout = OOC_COL_MAJOR, .ta = OOC_OP_N, .tb = OOC_OP_N,
                        .alpha = 1.0, .pinned = 1, .seed = 42, .check_rows = 64};

    memset(o, 0, sizeof *o);
    o->lib.backend = OOC_BACKEND_AUTO;
    o->repeat = 1;
    opterr = 0;
    optind = 1;
    for (;;) {
        char optname[64];
        int c = cli_getopt(argc, argv, ":m:n:k:qh", run_long_opts, optname, sizeof optname);
        if (c == -1) break;
        int shared = common_opt_parse(cmd, c, optname, optarg, &co);
        if (shared == 0) shared = lib_opt_parse(cmd, c, optname, optarg, &o->lib);
        if (shared == 0) shared = floor_opt_parse(cmd, c, optarg, &o->floor);
        if (shared < 0) return RC_USAGE;
        if (shared > 0) continue;
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
        case OPT_REPEAT:
            if (parse_int(cmd, "--repeat", optarg, 1, 1000000, &o->repeat)) return RC_USAGE;
            break;
        case 'h': run_usage(stdout); print_exit_codes(stdout); return -1;
        default: return getopt_failure(cmd, c, argv, "mnkqh");
        }
    }
    o->dtype = co.dtype;
    o->layout = co.layout;
    o->ta = co.ta;
    o->tb = co.tb;
    o->alpha = co.alpha;
    o->beta = co.beta;
    o->pinned = co.pinned;
    o->seed = co.seed;
    o->check_rows = co.check_rows;
    o->quiet = co.quiet;
    o->json = co.json;
    if (optind < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!have_m) return usage_error(cmd, "-m M is required (rows of op(A) and C)");
    if (!have_n) return usage_error(cmd, "-n N is required (columns of op(B) and C)");
    if (!have_k) return usage_error(cmd, "-k K is required (columns of op(A), rows of op(B))");
    return RC_OK;
}

int cmd_run(int argc, char **argv)
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
    floor_t fl = {.bw_h2d = o.floor.bw_h2d, .bw_d2h = o.floor.bw_d2h, .rate = o.floor.rate};
    if (!o.floor.no_floor) {
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
        json_devices(stdout, &stats);
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
