/* SPDX-License-Identifier: MIT */
/*
 * cmd_verify.c: oocgemm verify: check a product on matrix files against
 * OpenBLAS on the CPU (exact for small products, Freivalds plus sampled
 * rows otherwise), within the host-memory budget.
 */
#include "config.h"

#include "cli.h"

void verify_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm verify A B C [OPTIONS]\n"
            "\n"
            "Check C = alpha*op(A)*op(B) + beta*C0 on matrix files against OpenBLAS on\n"
            "the CPU, streaming within the host-memory budget. Small products are\n"
            "checked exactly (every element). Large ones with Freivalds' test: C*x is\n"
            "compared with alpha*op(A)*(op(B)*x) + beta*C0*x for V random vectors x,\n"
            "and N rows of C are recomputed exactly. The error of each element is\n"
            "relative to a bound on the terms summed; the check passes when the largest\n"
            "is within a tolerance derived from k and the machine epsilon of the element\n"
            "type (plus 2^-7 in single precision with --tf32), and\n"
            "nothing is off by about its own size beyond what rounding reaches on any but\n"
            "contrived data (16*sqrt(k+2)*eps of the bound): in single precision with a\n"
            "large k a missing or stale block lies within the worst-case tolerance, not\n"
            "within that. Freivalds' test judges a row of C by its products with x, not\n"
            "element by element: in single precision one element off by a few times its\n"
            "own size (a sign flipped) can lie within the row's tolerance, unless its row\n"
            "is one of the N recomputed (--check-rows with C's rows checks every element).\n"
            "Prints the mode, the largest relative error, the tolerance and PASS or FAIL;\n"
            "exits 1 on FAIL.\n"
            "\n"
            "Operands (.npy files, or raw data as PATH:ROWSxCOLS[:DTYPE[:LAYOUT]], as for\n"
            "oocgemm multiply):\n"
            "  --rows R, --cols C    shape of raw operands given without a suffix\n"
            "  --dtype T             the element type of the product: raw operands without\n"
            "                        a DTYPE field are read as T, an operand of another\n"
            "                        type is refused (exit 2) (s, d, c, z; float32,\n"
            "                        float64, complex64, complex128; f4, f8, c8, c16)\n"
            "  --layout row|col      storage layout of raw operands whose suffix gives\n"
            "                        none (also C or F; default row)\n"
            "\n"
            "Product:\n"
            "  --transa N|T|C        op(A) (default N)\n"
            "  --transb N|T|C        op(B) (default N)\n"
            "  --alpha X             real scalar (default 1)\n"
            "  --c-in C0             the C0 that C was computed from\n"
            "  --beta X              real scalar (default 1 with --c-in, else 0)\n"
            "\n"
            "Check and output:\n"
            "  --vectors V           Freivalds vectors (1 to 1024; default 3)\n"
            "  --check-rows N        rows of C recomputed exactly (default 16; fewer, with\n"
            "                        a note, when --host-mem holds fewer)\n"
            "  --host-mem BYTES      host-memory budget of the check (default: automatic)\n"
            "  --tf32                C was computed with TF32 (multiply --tf32): single\n"
            "                        precision's tolerance allows the inputs' rounding to\n"
            "                        10 mantissa bits (adds 2^-7); for d and z it does\n"
            "                        nothing, and a note says so\n"
            "  -q, --quiet           print nothing but errors\n"
            "  --json                print one JSON object (see JSON OUTPUT in the\n"
            "                        manual): files, shape, dtype, transa, transb,\n"
            "                        alpha, beta, time_s and check (method, rows,\n"
            "                        vectors, max_rel_err, max_rel_err_infinite,\n"
            "                        tolerance, passed, bytes_read, rows_unverified,\n"
            "                        off, first_off_row)\n"
            "  -h, --help            this help\n"
            "\n");
}

const struct option verify_long_opts[] = {
    {"transa", required_argument, NULL, OPT_TRANSA},
    {"transb", required_argument, NULL, OPT_TRANSB},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"c-in", required_argument, NULL, OPT_C_IN},
    {"rows", required_argument, NULL, OPT_ROWS},
    {"cols", required_argument, NULL, OPT_COLS},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"order", required_argument, NULL, OPT_LAYOUT}, /* the old spelling of --layout */
    {"vectors", required_argument, NULL, OPT_VECTORS},
    {"check-rows", required_argument, NULL, OPT_CHECK_ROWS},
    {"host-mem", required_argument, NULL, OPT_HOST_MEM},
    {"tf32", no_argument, NULL, OPT_TF32},
    {"quiet", no_argument, NULL, 'q'},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* One verification: what the command line says, the files, the result. */
typedef struct {
    const char *a, *b, *c, *c_in;
    ooc_op_t ta, tb;
    double alpha, beta;
    int64_t vectors, check_rows, host_mem;
    int quiet, json, tf32;
    int undecided; /* the check could neither pass nor fail C (OOC_ERR_UNDECIDED: exit 1, its own message) */
    raw_defaults_t raw;
    operand_t A, B, C0, C;
    ooc_handle_t *h;
    ooc_verify_result_t vr;
    int64_t m, n, k;
    ooc_dtype_t t;
    double secs;
} verify_job_t;

/* RC_OK, RC_USAGE, or -1 for --help (already printed). */
static int verify_parse(int argc, char **argv, verify_job_t *j)
{
    const char *cmd = "verify";
    common_opts_t co = {.dtype = OOC_R64, .layout = OOC_ROW_MAJOR, .ta = OOC_OP_N, .tb = OOC_OP_N, .alpha = 1.0,
                        .check_rows = 16};
    j->vectors = 3;
    opterr = 0;
    optind = 1;
    for (;;) {
        char optname[64];
        int c = cli_getopt(argc, argv, ":qh", verify_long_opts, optname, sizeof optname);
        if (c == -1) break;
        int shared = common_opt_parse(cmd, c, optname, optarg, &co);
        if (shared < 0) return RC_USAGE;
        if (shared > 0) continue;
        switch (c) {
        case OPT_C_IN: j->c_in = optarg; break;
        case OPT_VECTORS:
            if (parse_int(cmd, "--vectors", optarg, 1, 1024, &j->vectors)) return RC_USAGE;
            break;
        case OPT_HOST_MEM:
            if (parse_param(cmd, "--host-mem", optarg, OOC_PARAM_HOST_MEM, 1, &j->host_mem)) return RC_USAGE;
            break;
        case OPT_TF32: j->tf32 = 1; break;
        case 'h': verify_usage(help_out()); print_exit_codes(help_out()); return -1;
        default: return getopt_failure(cmd, c, argv, "qh");
        }
    }
    j->ta = co.ta;
    j->tb = co.tb;
    j->alpha = co.alpha;
    j->beta = co.beta;
    j->check_rows = co.check_rows;
    j->quiet = co.quiet;
    j->json = co.json;
    j->raw = (raw_defaults_t){cmd, co.rows, co.cols, co.dtype, co.layout, co.dtype_given,
                              co.rows_given && co.cols_given};
    if (argc - optind < 3) return usage_error(cmd, "three files A, B and C are required");
    if (argc - optind > 3) return usage_error(cmd, "unexpected argument '%s'", argv[optind + 3]);
    j->a = argv[optind];
    j->b = argv[optind + 1];
    j->c = argv[optind + 2];
    if (co.rows_given != co.cols_given)
        return usage_error(cmd, "--rows and --cols go together (the shape of raw operands; the rows of C "
                                "recomputed are --check-rows)");
    if (j->c_in && !co.beta_given) j->beta = 1.0;
    if (j->beta != 0.0 && j->c_in == NULL) return usage_error(cmd, "--beta %g needs --c-in C0", j->beta);
    return RC_OK;
}

/* The files opened and checked, then the verification. RC_OK,
 * RC_CHECK_FAILED, or a failure (message printed). */
static int verify_run(verify_job_t *j)
{
    const char *cmd = "verify";
    raw_defaults_t *raw = &j->raw;
    ooc_status_t st;
    int rc;
    if ((rc = operand_parse(cmd, "A", j->a, raw, &j->A)) != RC_OK ||
        (rc = operand_parse(cmd, "B", j->b, raw, &j->B)) != RC_OK ||
        (rc = operand_parse(cmd, "C", j->c, raw, &j->C)) != RC_OK ||
        (j->c_in && (rc = operand_parse(cmd, "C0", j->c_in, raw, &j->C0)) != RC_OK))
        return rc;
    if ((st = ooc_create(&j->h)) != OOC_SUCCESS) return lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
    if ((st = set_param(j->h, OOC_PARAM_HOST_MEM, j->host_mem)) != OOC_SUCCESS)
        return lib_fail(j->h, st, AT_OTHER, NULL, NULL, "--host-mem");
    if (j->tf32 && (st = set_param(j->h, OOC_PARAM_MATH_MODE, OOC_MATH_TF32)) != OOC_SUCCESS)
        return lib_fail(j->h, st, AT_OTHER, NULL, NULL, "--tf32");
    if ((rc = operand_open(j->h, &j->A, raw)) != RC_OK || (rc = operand_open(j->h, &j->B, raw)) != RC_OK ||
        (j->c_in && (rc = operand_open(j->h, &j->C0, raw)) != RC_OK) || (rc = operand_open(j->h, &j->C, raw)) != RC_OK)
        return rc;
    if ((rc = check_operands(&j->A, j->ta, &j->B, j->tb, j->c_in ? &j->C0 : NULL, &j->C, &j->m, &j->n, &j->k)) != RC_OK)
        return rc;
    j->t = j->A.spec.dtype;
    if ((rc = scalars_fit(cmd, j->t, j->alpha, j->beta)) != RC_OK) return rc;
    tf32_note(cmd, j->tf32, j->t);
    if (!dtype_complex(j->t)) {
        if (j->ta == OOC_OP_C) j->ta = OOC_OP_T;
        if (j->tb == OOC_OP_C) j->tb = OOC_OP_T;
    }
    scalar_t sa = scalar_of(j->alpha), sb = scalar_of(j->beta);
    double t0 = now_seconds();
    st = ooc_verify_files(j->h, j->ta, j->tb, scalar_ptr(&sa, j->t), j->A.file, j->B.file, scalar_ptr(&sb, j->t),
                          j->c_in ? j->C0.file : NULL, j->C.file, (int)j->vectors, j->check_rows, &j->vr);
    j->secs = now_seconds() - t0;
    j->undecided = st == OOC_ERR_UNDECIDED;
    if (st != OOC_SUCCESS) return lib_fail(j->h, st, AT_INPUT, NULL, NULL, "verify");
    int64_t asked = j->check_rows < j->m ? j->check_rows : j->m;
    if (!j->vr.exact && j->vr.rows_checked < asked) /* the library cuts the sample to its budget */
        fprintf(stderr, "%s: note: %lld row%s of C recomputed exactly, not the %lld asked (--check-rows): the "
                "host-memory budget holds no more (--host-mem)\n", progname, (long long)j->vr.rows_checked,
                j->vr.rows_checked == 1 ? "" : "s", (long long)asked);
    return j->vr.passed ? RC_OK : RC_CHECK_FAILED;
}

/* The files of a product as JSON's "files" (paths alone before they were
 * opened). */
static void verify_json_files(json_t *js, const verify_job_t *j)
{
    json_object(js, "files");
    json_file(js, "a", j->a, j->A.file ? &j->A.spec : NULL);
    json_file(js, "b", j->b, j->B.file ? &j->B.spec : NULL);
    json_file(js, "c_in", j->c_in, j->C0.file ? &j->C0.spec : NULL);
    json_file(js, "c", j->c, j->C.file ? &j->C.spec : NULL);
    json_end(js);
}

static void verify_report(const verify_job_t *j, int rc)
{
    int ran = (rc == RC_OK || rc == RC_CHECK_FAILED) && !j->undecided;
    if (j->json) {
        json_t js;
        json_open(&js, stdout, "verify");
        verify_json_files(&js, j);
        if (ran) json_shape(&js, "shape", j->m, j->n, j->k);
        else json_null(&js, "shape");
        json_problem(&js, ran ? &j->t : NULL, j->ta, j->tb, j->alpha, j->beta);
        json_real(&js, "time_s", j->secs, ran);
        json_check_files(&js, &j->vr, ran);
        json_close(&js, rc);
        return;
    }
    if (ran && !j->quiet) {
        char b[32];
        printf("oocgemm %s: verify %s against %s%s x %s%s%s%s: m=%lld n=%lld k=%lld %s, alpha=%g beta=%g\n",
               PACKAGE_VERSION, j->C.path, j->ta == OOC_OP_N ? "" : j->ta == OOC_OP_T ? "T:" : "H:", j->A.path,
               j->tb == OOC_OP_N ? "" : j->tb == OOC_OP_T ? "T:" : "H:", j->B.path, j->c_in ? " + beta x " : "",
               j->c_in ? j->C0.path : "", (long long)j->m, (long long)j->n, (long long)j->k, dtype_name(j->t), j->alpha,
               j->beta);
        printf("read %s in %.3g s\n", human_bytes(j->vr.bytes_read, b, sizeof b), j->secs);
        print_verify(stdout, &j->vr, j->m, j->n, 0);
    }
}

int cmd_verify(int argc, char **argv)
{
    verify_job_t j;
    memset(&j, 0, sizeof j);
    int rc = verify_parse(argc, argv, &j);
    if (rc < 0) return RC_OK; /* --help */
    if (rc != RC_OK) return rc;
    rc = verify_run(&j);
    char msg[400];
    if (rc == RC_CHECK_FAILED && !j.undecided) fail(rc, "%s", verify_failure(&j.vr, 0, msg, sizeof msg));
    verify_report(&j, rc);
    operand_free(&j.C);
    operand_free(&j.C0);
    operand_free(&j.B);
    operand_free(&j.A);
    ooc_destroy(j.h);
    return rc;
}
