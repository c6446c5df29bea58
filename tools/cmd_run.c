/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c: oocgemm run: multiply seeded random in-memory matrices through
 * the library, time it (best and median of --repeat runs), compare the time
 * with the PCIe/compute floor, and check sampled rows of C against OpenBLAS.
 */
#include "config.h"

#include "cli.h"

void run_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm run -m M -n N -k K [OPTIONS]\n"
            "\n"
            "Multiply random in-memory matrices with libooc_gemm,\n"
            "C = alpha*op(A)*op(B) + beta*C (op(A) m x k, op(B) k x n, C m x n), time it,\n"
            "compare the time with the floor, and check sampled rows of C against\n"
            "OpenBLAS. A, B (and C when beta != 0) hold uniform random values in [-1, 1)\n"
            "from a seeded splitmix64 stream; with beta = 0, C starts as NaN (it must not\n"
            "be read). Leading dimensions are exactly the stored rows (column-major) or\n"
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
            "  --alpha X, --beta X   real scalars, (X, 0) for complex types (default 1\n"
            "                        and 0)\n"
            "  --memory pinned|pageable\n"
            "                        A, B and C from ooc_host_alloc (pinned on a GPU\n"
            "                        backend), or from aligned_alloc (pageable: the\n"
            "                        library stages them) (default pinned)\n"
            "  --seed S              seed of the random matrices (default 42)\n"
            "  --repeat R            timed runs (default 1). With R > 1 an untimed\n"
            "                        warm-up run comes first, and the best and median\n"
            "                        times are shown; when beta != 0, C is refilled\n"
            "                        (untimed) before each run\n"
            "\n"
            LIB_HELP
            FLOOR_HELP
            "Check:\n"
            "  --check-rows N        rows of C checked (default 64), spread evenly over\n"
            "                        C, first and last included; 0: no check\n"
            "  --no-check            skip the check\n"
            "\n"
            "The checked rows are recomputed with OpenBLAS (cblas_?gemm on the gathered\n"
            "rows of op(A)) from the same A, B and initial C0. The error shown is the\n"
            "largest, over the checked elements (i, j), of |C[i,j] - ref[i,j]| /\n"
            "(|alpha| * sum_l |op(A)[i,l]| * b_l + |beta| * |C0[i,j]|), b_l = max_j\n"
            "|op(B)[l,j]|: the error relative to a bound on the terms summed (|z|: the\n"
            "modulus). It passes when <= 4*k*eps, eps = FLT_EPSILON (s, c) or DBL_EPSILON\n"
            "(d, z); with --tf32 (s, c) the tolerance adds 2^-7 for the rounding of the\n"
            "inputs to TF32; and when no element is off by half its own value or more and\n"
            "by more than 16*sqrt(k+2)*eps (+ 2^-7 with --tf32) of its bound, beyond what\n"
            "rounding reaches on any but contrived data (a missing or stale block: in\n"
            "single precision with a large k it lies within 4*k*eps). Where OpenBLAS's\n"
            "product or the bound is past the type's range (large scalars), the check\n"
            "cannot decide: UNDECIDED, exit status 1.\n"
            "\n"
            "Output:\n"
            "  -q, --quiet           print nothing but errors\n"
            "  --json                print one JSON object instead of the summary (see\n"
            "                        JSON OUTPUT in the manual): shape, the problem's\n"
            "                        and the run's options (dtype, layout, transa, transb,\n"
            "                        alpha, beta, memory, repeat, seed, tf32),\n"
            "                        backend, backend_reason, time_s, median_s, tflops,\n"
            "                        floor, check, plan, stats and devices (what each\n"
            "                        device did)\n"
            "  -h, --help            this help\n"
            "\n"
            "The summary: the problem, the backend and its plan (one line per device when\n"
            "several ran), the best and median times and the rate, the floor with\n"
            "floor/time, and the check.\n"
            "\n");
}

const struct option run_long_opts[] = {
    PROBLEM_LONG_OPTS,
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
        case 'h': run_usage(help_out()); print_exit_codes(help_out()); return -1;
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
    int rc = scalars_fit(cmd, o->dtype, o->alpha, o->beta);
    if (rc == RC_OK) tf32_note(cmd, o->lib.tf32, o->dtype);
    return rc;
}

/* One run: the options, the handle, the matrices, the times and what the
 * summary says of them. */
typedef struct {
    run_opts_t o;
    ooc_handle_t *h;
    int host;                /* the host backend: the summary in CPU words */
    matrix_t A, B, C;
    int64_t r, *rows;        /* the checked rows of C */
    void *c0;                /* their values before the multiply (beta != 0) */
    size_t c0_bytes;
    double *times;
    ooc_stats_t stats;
    int have_stats;
    double best, median, tflops;
    floor_t fl;
    double tol, max_err;
    int64_t off; /* elements of the checked rows off by about their own size (check_compare) */
    int64_t undecided; /* elements past the type's range in the reference (check_compare) */
    int checked, passed;
} run_job_t;

/* The sizes checked, the handle with every option, the matrices allocated
 * and filled, the checked rows saved. */
static int run_setup(run_job_t *j)
{
    run_opts_t *o = &j->o;
    size_t e = dtype_size(o->dtype);
    ooc_status_t st;
    int rc;
    if (matrix_shape("run", "A", o, o->ta, o->m, o->k, &j->A) || matrix_shape("run", "B", o, o->tb, o->k, o->n, &j->B) ||
        matrix_shape("run", "C", o, OOC_OP_N, o->m, o->n, &j->C))
        return RC_USAGE;
    j->r = o->check_rows < o->m ? o->check_rows : o->m;
    if (j->r > 0 && (__builtin_mul_overflow((size_t)j->r, (size_t)o->n, &j->c0_bytes) ||
                     __builtin_mul_overflow(j->c0_bytes, e, &j->c0_bytes)))
        return usage_error("run", "--check-rows %lld: the checked rows of C are too large", (long long)j->r);
    if ((st = ooc_create(&j->h)) != OOC_SUCCESS) return library_error(NULL, st);
    /* every option before the first allocation: ooc_host_alloc opens the backend */
    if ((st = lib_opts_apply(j->h, &o->lib)) != OOC_SUCCESS) return library_error(j->h, st);
    j->host = backend_is_host(j->h);
    /* TF32 is the GPU's: the host backend multiplies in full float32, and
     * the check keeps float32's tolerance (TF32's 2^-7 more passed a result
     * 0.8% off) */
    if (j->host && j->o.lib.tf32) {
        j->o.lib.tf32 = 0;
        if (!o->quiet && !o->json)
            fprintf(stderr, "%s: note: --tf32 does nothing on the host backend (OpenBLAS multiplies in float32): "
                            "the check keeps float32's tolerance\n", progname);
    }
    if (!o->quiet && !o->json) {
        printf("oocgemm %s: %cGEMM %s-major %c%c m=%lld n=%lld k=%lld alpha=%g beta=%g, A/B/C %s\n", PACKAGE_VERSION,
               dtype_letter(o->dtype) - 'a' + 'A', layout_name(o->layout), op_letter(o->ta), op_letter(o->tb),
               (long long)o->m, (long long)o->n, (long long)o->k, o->alpha, o->beta, memory_words(o->pinned, j->host));
        fflush(stdout);
    }
    if ((rc = matrix_alloc(j->h, o->pinned, &j->A, "A", NULL, 0)) != RC_OK ||
        (rc = matrix_alloc(j->h, o->pinned, &j->B, "B", NULL, 0)) != RC_OK ||
        (rc = matrix_alloc(j->h, o->pinned, &j->C, "C", NULL, 0)) != RC_OK)
        return rc;
    j->rows = j->r > 0 ? malloc((size_t)j->r * sizeof *j->rows) : NULL;
    j->c0 = j->r > 0 && o->beta != 0.0 ? malloc(j->c0_bytes) : NULL;
    j->times = malloc((size_t)o->repeat * sizeof *j->times);
    if ((j->r > 0 && !j->rows) || (j->r > 0 && o->beta != 0.0 && !j->c0) || !j->times)
        return fail(RC_RUNTIME, "out of host memory");
    fill_random(o->dtype, j->A.p, j->A.elems, o->seed, 1);
    fill_random(o->dtype, j->B.p, j->B.elems, o->seed, 2);
    if (o->beta != 0.0) fill_random(o->dtype, j->C.p, j->C.elems, o->seed, 3);
    else fill_nan(o->dtype, j->C.p, j->C.elems); /* NaN: beta = 0 must not read C */
    if (j->r > 0) {
        pick_rows(o->m, j->r, j->rows);
        if (j->c0) save_rows(o, j->C.p, j->rows, j->r, j->c0);
    }
    return RC_OK;
}

/* The warm-up (with --repeat > 1) and the timed runs; the stats of the last. */
static int run_timed(run_job_t *j)
{
    const run_opts_t *o = &j->o;
    ooc_dtype_t t = o->dtype;
    scalar_t alpha = scalar_of(o->alpha), beta = scalar_of(o->beta);
    int64_t runs = o->repeat > 1 ? o->repeat + 1 : 1;
    ooc_status_t st;
    /* --trace: the last timed run alone (tracing every one put its cost,
     * and the file's writing, in every time) */
    if (o->lib.trace && runs > 1 && (st = ooc_set_trace(j->h, NULL)) != OOC_SUCCESS) return library_error(j->h, st);
    for (int64_t it = 0; it < runs; it++) {
        if (it > 0 && o->beta != 0.0) fill_random(t, j->C.p, j->C.elems, o->seed, 3); /* same C0 each run */
        if (o->lib.trace && runs > 1 && it == runs - 1 && (st = ooc_set_trace(j->h, o->lib.trace)) != OOC_SUCCESS)
            return library_error(j->h, st);
        double t0 = now_seconds();
        st = ooc_gemm(j->h, t, o->layout, o->ta, o->tb, o->m, o->n, o->k, scalar_ptr(&alpha, t), j->A.p, j->A.ld,
                      j->B.p, j->B.ld, scalar_ptr(&beta, t), j->C.p, j->C.ld);
        double t1 = now_seconds();
        if (st != OOC_SUCCESS) return library_error(j->h, st);
        if (runs > 1 && it == 0) continue; /* warm-up */
        j->times[runs > 1 ? it - 1 : it] = t1 - t0;
    }
    if ((st = ooc_get_stats(j->h, &j->stats)) != OOC_SUCCESS) return library_error(j->h, st);
    j->have_stats = 1;
    times_summary(j->times, o->repeat, &j->best, &j->median);
    /* alpha = 0 or k = 0: C = beta C, no flops multiplied */
    double flops = j->stats.panels == 0 ? 0.0 : (dtype_complex(t) ? 8.0 : 2.0) * (double)o->m * (double)o->n * (double)o->k;
    j->tflops = j->best > 0 ? flops / j->best / 1e12 : flops > 0 ? INFINITY : 0.0;
    return RC_OK;
}

/* The floor (measured now, after the timed runs, unless given) and the
 * check of the sampled rows against OpenBLAS: RC_OK or RC_CHECK_FAILED. */
static int run_check(run_job_t *j)
{
    const run_opts_t *o = &j->o;
    j->fl = floor_given(&o->floor);
    if (!o->floor.no_floor) {
        ooc_stats_t st;
        if (ooc_get_stats(j->h, &st) == OOC_SUCCESS) {
            floor_traffic(&j->fl, &st);
            floor_of_run(&j->fl, &st);
        }
        floor_measure(j->h, o->dtype, o->m, o->n, o->k, o->quiet, &j->fl);
        floor_compute(&j->fl, o->dtype, o->m, o->n, o->k, o->beta != 0.0);
    }
    j->tol = check_tolerance(o);
    if (j->r == 0) return RC_OK;
    int crc = check_c(o, &j->A, &j->B, &j->C, j->c0, j->rows, j->r, &j->max_err, &j->off, &j->undecided);
    if (crc == RC_RUNTIME) return crc;
    if (crc != RC_OK) {
        if (!o->quiet) fprintf(stderr, "%s: check skipped: n or k exceeds the BLAS integer range\n", progname);
        return RC_OK;
    }
    j->checked = 1;
    int verdict = check_verdict(j->max_err, j->tol, j->off, j->undecided);
    j->passed = verdict == CHECK_PASS;
    if (j->passed) return RC_OK;
    char words[160];
    if (verdict == CHECK_UNDECIDED)
        return fail(RC_CHECK_FAILED, "check undecided: %s, where no tolerance can judge C; the rest within the "
                    "tolerance %.2g", check_undecided_words(j->undecided, o->dtype, words, sizeof words), j->tol);
    if (j->max_err <= j->tol)
        return fail(RC_CHECK_FAILED, "check failed: %lld element%s of the checked rows off by about %s own size, "
                    "within the tolerance %.2g of a k-term sum's worst-case rounding but far beyond what rounding "
                    "reaches: a missing or wrong block", (long long)j->off, j->off == 1 ? "" : "s",
                    j->off == 1 ? "its" : "their", j->tol);
    return fail(RC_CHECK_FAILED, "check failed: max relative error %.2g exceeds the tolerance %.2g", j->max_err,
                j->tol);
}

static void run_print_json(const run_job_t *j, int rc)
{
    const run_opts_t *o = &j->o;
    json_t js;
    json_open(&js, stdout, "run");
    json_shape(&js, "shape", o->m, o->n, o->k);
    json_problem(&js, &o->dtype, o->ta, o->tb, o->alpha, o->beta);
    json_string(&js, "layout", layout_name(o->layout));
    json_string(&js, "memory", o->pinned ? "pinned" : "pageable");
    json_string(&js, "backend", ooc_backend_name(j->h));
    json_string(&js, "backend_reason", backend_reason(ooc_backend_name(j->h)));
    json_bool(&js, "tf32", o->lib.tf32);
    json_int(&js, "repeat", o->repeat);
    json_uint(&js, "seed", o->seed);
    json_real(&js, "time_s", j->best, 1);
    json_real(&js, "median_s", j->median, 1);
    json_real(&js, "tflops", j->tflops, j->tflops > 0); /* (null: nothing multiplied) */
    json_floor(&js, "floor", &j->fl, j->best);
    json_check_rows(&js, j->checked, j->r, j->max_err, j->tol, j->off, j->passed);
    json_plan(&js, &j->stats, j->have_stats);
    json_stats(&js, &j->stats, j->have_stats);
    json_close(&js, rc);
}

static void run_print_text(const run_job_t *j)
{
    const run_opts_t *o = &j->o;
    char b[32];
    print_plan(stdout, ooc_backend_name(j->h), &j->stats);
    if (o->repeat > 1) printf("time: %.3g s (best of %lld; median %.3g s)", j->best, (long long)o->repeat, j->median);
    else printf("time: %.3g s (1 run)", j->best);
    if (j->tflops > 0) printf("   rate: %s", format_rate(j->tflops * 1e12, b, sizeof b));
    else printf("   rate: n/a (nothing multiplied)");
    if (j->host)
        printf("   copied: in %.3g GB, out %.3g GB\n", (double)j->stats.bytes_h2d / 1e9, (double)j->stats.bytes_d2h / 1e9);
    else
        printf("   moved: H2D %.3g GB, D2H %.3g GB\n", (double)j->stats.bytes_h2d / 1e9, (double)j->stats.bytes_d2h / 1e9);
    if (o->floor.no_floor) printf("floor: not measured (--no-floor)\n");
    else floor_print(stdout, &j->fl, o->dtype, j->best);
    int undecided = check_verdict(j->max_err, j->tol, j->off, j->undecided) == CHECK_UNDECIDED;
    if (j->checked)
        printf("check: %lld row%s of C against OpenBLAS: max relative error %.2g (tolerance %.2g)%s: %s\n",
               (long long)j->r, j->r == 1 ? "" : "s", j->max_err, j->tol,
               j->off > 0 ? ", elements off by about their own size" : "",
               j->passed ? "PASS" : undecided ? "UNDECIDED (the product overflows)" : "FAIL");
    else
        printf("check: skipped\n");
}

int cmd_run(int argc, char **argv)
{
    run_job_t *j = calloc(1, sizeof *j);
    if (j == NULL) return fail(RC_RUNTIME, "out of host memory");
    int rc = run_parse(argc, argv, &j->o);
    if (rc < 0) {
        rc = RC_OK; /* --help */
    } else if (rc == RC_OK) {
        rc = run_setup(j);
        if (rc == RC_OK) rc = run_timed(j);
        if (rc == RC_OK) rc = run_check(j);
        if (rc == RC_OK || rc == RC_CHECK_FAILED) {
            if (j->o.json) run_print_json(j, rc);
            else if (!j->o.quiet) run_print_text(j);
            if (j->have_stats && j->stats.trace_status != OOC_SUCCESS)
                fprintf(stderr, "%s: warning: the trace was not written (%s)\n", progname, j->stats.trace_error);
        }
    }
    free(j->times);
    free(j->c0);
    free(j->rows);
    matrix_free(j->h, j->o.pinned, &j->C);
    matrix_free(j->h, j->o.pinned, &j->B);
    matrix_free(j->h, j->o.pinned, &j->A);
    ooc_destroy(j->h);
    free(j);
    return rc;
}
