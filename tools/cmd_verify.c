/* SPDX-License-Identifier: MIT */
/*
 * cmd_verify.c: oocgemm verify: check a product on matrix files against
 * OpenBLAS on the CPU (exact for small products, Freivalds plus sampled
 * rows otherwise), within the host-memory budget.
 */
#include "config.h"

#include "cli.h"

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

int cmd_verify(int argc, char **argv)
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

