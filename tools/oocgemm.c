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
 *
 * The tool's files: this one holds main() and the table of subcommands;
 * cmd_<name>.c one subcommand each (bench also bench_run.c and
 * bench_report.c, with bench.h); cli.h declares what they share, which
 * lives in small modules: cli_error.c (exit statuses, messages), cli_opts.c
 * (option values), cli_util.c (clock, names, formatting), cli_json.c,
 * cli_fill.c (seeded random fill), cli_check.c (in-memory matrices, the
 * OpenBLAS check), cli_floor.c (the floor, the plan's summary),
 * cli_operand.c (matrix files on the command line), cli_progress.c,
 * cli_disk.c and cli_signal.c (the file multiply's progress, disk
 * measurement and signals); spec.c parses raw-operand specs.
 */
#include "config.h"

#include "cli.h"

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
    /* past a file-size limit (ulimit -f) a write fails with EFBIG, reported
     * as a full output, instead of the signal killing the process */
    signal(SIGXFSZ, SIG_IGN);
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
