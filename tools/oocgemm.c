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
#include "cli_mpi.h"

/* ------------------------------------------------------------------------ */
/* The table of subcommands                                                  */

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    void (*usage)(FILE *f);        /* its --help, without the exit statuses */
    const struct option *opts;     /* its getopt_long table */
    const char *summary;
} commands[] = {
    {"multiply", cmd_multiply, multiply_usage, multiply_long_opts,
     "C = alpha*op(A)*op(B) + beta*C0 on .npy or raw files (resumable)"},
    {"gen", cmd_gen, gen_usage, gen_long_opts, "write a seeded random matrix file (.npy or raw)"},
    {"verify", cmd_verify, verify_usage, verify_long_opts, "check a product on files against OpenBLAS"},
    {"info", cmd_info, info_usage, info_long_opts, "the GPUs: memory, copy engines, PCIe link, measured bandwidth"},
    {"run", cmd_run, run_usage, run_long_opts,
     "multiply random in-memory matrices: time, floor, check against OpenBLAS"},
    {"bench", cmd_bench, bench_usage, bench_long_opts,
     "time ours against the floor, the serial loop, cublasXt, in-core cuBLAS"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* The first line of a command's --help, less "Usage: " (one source: its
 * usage text). */
static void usage_line(size_t i, char *buf, size_t len)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    buf[0] = '\0';
    if (f == NULL) return;
    commands[i].usage(f);
    fclose(f);
    const char *line = text && strncmp(text, "Usage: ", 7) == 0 ? text + 7 : text ? text : "";
    snprintf(buf, len, "%.*s", (int)strcspn(line, "\n"), line);
    free(text);
}

/* oocgemm --help, and the start of --help-all (and of the man page). */
static void main_usage(FILE *f)
{
    char line[256];
    for (size_t i = 0; i < NCOMMANDS; i++) {
        usage_line(i, line, sizeof line);
        fprintf(f, "%s %s\n", i == 0 ? "Usage:" : "  or: ", line);
    }
    fprintf(f,
            "  or:  oocgemm help [COMMAND]\n"
            "  or:  oocgemm --help | --help-all | --version\n"
            "\n"
            "Out-of-core GEMM, C = alpha*op(A)*op(B) + beta*C0, with libooc_gemm: the\n"
            "operands are streamed through the GPU (or, with the host backend, through\n"
            "OpenBLAS on the CPU) in blocks that fit the memory budgets, so that they may\n"
            "be larger than GPU memory and, as files, larger than host memory. op(X) is\n"
            "X, its transpose or its conjugate transpose; op(A) is m x k, op(B) k x n, C0\n"
            "and C m x n; all operands have one element type, which C gets too.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "  %-10s show a command's options (as COMMAND --help)\n"
            "\n"
            "An option that several commands have is spelled the same and means the same\n"
            "in each. Errors are printed as 'oocgemm: message' on standard error, and the\n"
            "exit status says what kind of error it was; with --json every command prints\n"
            "one JSON object on standard output, also when it fails.\n"
            "Run 'oocgemm COMMAND --help' for a command's options, 'oocgemm --help-all'\n"
            "for every command's.\n"
            "\n",
            "help");
}

/* --help-all: the main help, then each command's, then the exit statuses,
 * each under a *Section* line: help2man makes the man page of it
 * (docs/oocgemm.h2m adds what is not help). */
static void help_all(FILE *f)
{
    main_usage(f);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        fprintf(f, "*oocgemm %s*\n", commands[i].name);
        commands[i].usage(f);
    }
    fprintf(f, "*Exit status*\n");
    print_exit_code_list(f);
}

/* help-options (not listed): every long option of every command, one
 * "COMMAND --OPTION" per line, from the getopt tables themselves, less the
 * spellings kept for old scripts; what tests/test_help.sh checks --help and
 * the man page against. */
static int help_options(void)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        for (const struct option *o = commands[i].opts; o->name; o++)
            if (!cli_hidden_option(o->name)) printf("%s --%s\n", commands[i].name, o->name);
    return RC_OK;
}

/* Is --json among the arguments (before a "--")? Then a command that fails
 * without printing its object gets one from main: from rank 0 only when
 * mpirun or srun started the multiply on several ranks (the job's one
 * object, as its summary and its failure come from rank 0; a usage error,
 * found before MPI starts, too). */
static int wants_json(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    {
        /* (and the prefixes getopt_long takes for it: --j where no other
         * option begins so, --js, --jso) */
        size_t n = strcspn(argv[i], "=");
        if (n >= 3 && n <= 6 && strncmp(argv[i], "--json", n) == 0) return 1;
    }
    return 0;
}

static int dispatch(int argc, char **argv, const char **name)
{
    const char *cmd = argv[1];
    /* --json before a global option (oocgemm --json --version): the option (wants_json saw --json) */
    if (strcmp(cmd, "--json") == 0 && argc > 2 && argv[2][0] == '-') cmd = argv[2];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        main_usage(help_out());
        print_exit_codes(help_out());
        return RC_OK;
    }
    if (strcmp(cmd, "--help-all") == 0) {
        help_all(help_out());
        return RC_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        fprintf(help_out(), "oocgemm (%s) %s\nlibooc_gemm %s (run time)\n", PACKAGE_NAME, PACKAGE_VERSION,
                ooc_version_string());
        return RC_OK;
    }
    if (strcmp(cmd, "help-options") == 0) return help_options();
    if (strcmp(cmd, "help") == 0) {
        char *topic = NULL; /* (help [--json] [COMMAND] [--json]) */
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--json") == 0) continue;
            if (topic != NULL)
                return usage_error(NULL, "help: unexpected argument '%s' (one command at most)", argv[i]);
            topic = argv[i];
        }
        /* help is one of the commands the main help lists: its help is that */
        if (topic == NULL || strcmp(topic, "help") == 0) {
            main_usage(help_out());
            print_exit_codes(help_out());
            return RC_OK;
        }
        char *help_argv[] = {topic, (char *)"--help", NULL};
        for (size_t i = 0; i < NCOMMANDS; i++)
            if (strcmp(topic, commands[i].name) == 0) {
                *name = commands[i].name;
                return commands[i].fn(2, help_argv);
            }
        return usage_error(NULL, "unknown command '%s'", topic);
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0) {
            *name = commands[i].name;
            return commands[i].fn(argc - 1, argv + 1);
        }
    if (cmd[0] == '-') return usage_error(NULL, "unknown option '%s' (a command comes first)", cmd);
    return usage_error(NULL, "unknown command '%s'", cmd);
}

/* Standard input, output and error open: a descriptor the caller closed
 * (`>&-`) is opened on /dev/null, so that the files the command opens do
 * not get it and what it prints does not land in them. */
static void std_fds_open(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY); /* (the lowest free: fd itself) */
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

int main(int argc, char **argv)
{
    std_fds_open();
    /* past a file-size limit (ulimit -f) a write fails with EFBIG, reported
     * as a full output, instead of the signal killing the process */
    signal(SIGXFSZ, SIG_IGN);
    const char *name = NULL;
    int json = wants_json(argc, argv), rc;
    json_help_wanted = json;
    if (argc < 2) rc = usage_error(NULL, "no command given (try 'oocgemm --help')");
    else rc = dispatch(argc, argv, &name);
    json_help_print(name, rc); /* --help, --version with --json (json_printed then) */
    /* not rank 0's (gen refuses several ranks: rank 0's object says why) */
    int split = name && (strcmp(name, "multiply") == 0 || strcmp(name, "gen") == 0) && cli_mpi_launched_rank() > 0;
    if (rc != RC_OK && json && !json_printed && !split) { /* a failure the command printed no object for */
        json_t js;
        json_open(&js, stdout, name);
        json_close(&js, rc);
    }
    cli_mpi_finish(); /* after rank 0's object: a barrier first */
    /* The work is over: a stop signal now ends the process at once, with
     * its status (what it printed flushed first). Its libraries' exit
     * handlers run next, and one can hang (OpenBLAS joins a worker that
     * retries an allocation forever under a small ulimit -v), which SIGTERM
     * (timeout, a batch system) must still end. */
    /* what it printed lost (a full disk, /dev/full): said, and a failure if
     * nothing else failed (a log would hold a cut JSON object, or none) */
    errno = 0;
    int lost = fflush(stdout) != 0 || ferror(stdout), e = errno;
    if (lost && rc == RC_OK) {
        fprintf(stderr, "%s: standard output: write error%s%s: what the command printed is lost\n", progname,
                e ? ": " : "", e ? strerror(e) : "");
        rc = RC_OUTPUT;
    }
    fflush(stderr);
    stop_signals_exit(rc);
    return rc;
}
