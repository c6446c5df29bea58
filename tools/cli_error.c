/* SPDX-License-Identifier: MIT */
/*
 * cli_error.c: the exit statuses of oocgemm (defined once: the table below,
 * printed by every --help), the one mapping from library statuses to them,
 * and the error messages every subcommand prints: usage errors (an
 * ambiguous abbreviation names its options), library failures and the file
 * commands' failures (kept in fail_msg for --json), held back while a rank
 * of a split job waits to know whether rank 0 says the same.
 * It prints to stderr only.
 */
#include "config.h"

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* Exit statuses (the codes are in cli.h) and their mapping                  */

static const struct {
    int code;
    const char *meaning;
} exit_codes[] = {
    {RC_OK, "success"},
    {RC_CHECK_FAILED, "verification failed: C does not match OpenBLAS within the tolerance,\n"
                      "     or the check could not decide (values of the check overflowed)\n"
                      "     (multiply --verify: C is committed all the same; do not use it)"},
    {RC_USAGE, "bad command line (unknown command or option, missing or bad value)"},
    {RC_RUNTIME, "run-time failure: a libooc_gemm error (GPU, memory budget) or no host memory"},
    {RC_INPUT, "input file error: cannot open or read, malformed, truncated, big-endian or\n"
               "     unsupported element type"},
    {RC_SHAPE, "the operands' shapes, element types or storage orders do not match\n"
               "     (C0 in another order than C; an op C operand stored in the other order)"},
    {RC_OUTPUT, "output error: cannot write the output or its journal (a full disk too), the\n"
                "     output is not a regular file or another job is writing it, or the\n"
                "     journal does not match the job or is damaged (resume impossible);\n"
                "     or what the command printed was lost (standard output not written)"},
    {RC_INTERRUPTED, "interrupted by SIGTERM, SIGINT, SIGHUP or SIGUSR1: the finished row\n"
                     "     blocks are kept; run the same command with --resume to finish\n"
                     "     (gen part-way: nothing is left, its temporary file is removed;\n"
                     "     multiply --verify stopped while checking: C is complete and\n"
                     "     committed but not verified: check it with oocgemm verify);\n"
                     "     multiply and gen alone: run, bench and verify end by the signal"},
};

/* The meaning of an exit status, its first line (for JSON's "error" when
 * no message says more). */
const char *exit_status_meaning(int rc)
{
    static char line[128];
    for (size_t i = 0; i < sizeof exit_codes / sizeof exit_codes[0]; i++)
        if (exit_codes[i].code == rc) {
            snprintf(line, sizeof line, "%.*s", (int)strcspn(exit_codes[i].meaning, "\n"), exit_codes[i].meaning);
            return line;
        }
    return "unknown exit status";
}

/* The exit statuses, one per line ("  N  meaning"), and with their heading
 * (the end of every --help). */
void print_exit_code_list(FILE *f)
{
    for (size_t i = 0; i < sizeof exit_codes / sizeof exit_codes[0]; i++)
        fprintf(f, "  %d  %s\n", exit_codes[i].code, exit_codes[i].meaning);
    fprintf(f, "Under mpirun or srun (multiply) every rank exits with the status of the\n"
               "lowest-numbered rank that failed on its own, which the message names (7 when\n"
               "a stop signal reached any rank); a rank that is killed ends the job with the\n"
               "launcher's status (Open MPI's mpirun: 137 after SIGKILL), resumable too.\n"
               "Ranks given different jobs (operands, scalars, ops, C's format or layout,\n"
               "--journal, --resume, --verify, ...) exit 2 before anything is written.\n");
}

void print_exit_codes(FILE *f)
{
    fprintf(f, "Exit status:\n");
    print_exit_code_list(f);
}

/*
 * The one mapping from library statuses to exit statuses. A file error
 * (OOC_ERR_IO, OOC_ERR_FORMAT, OOC_ERR_OVERFLOW of a file's shape) is an
 * input's (4) or the output's (6) depending on the stage; inside
 * ooc_gemm_files() it is the output's when the file the library names
 * (ooc_last_error_path) is the output's temporary file or the journal.
 * Running out of room is always the output's, and so is a busy output.
 */
int exit_status_for(ooc_status_t st, stage_t at, const char *err_path, const char *tmp_path,
                    const char *journal_path)
{
    switch (st) {
    case OOC_SUCCESS: return RC_OK;
    case OOC_ERR_IO:
    case OOC_ERR_FORMAT:
    case OOC_ERR_OVERFLOW:
        switch (at) {
        case AT_INPUT: return RC_INPUT;
        case AT_OUTPUT: return RC_OUTPUT;
        case AT_RUN:
            if (err_path && ((tmp_path && strcmp(err_path, tmp_path) == 0) ||
                             (journal_path && strcmp(err_path, journal_path) == 0)))
                return RC_OUTPUT;
            return err_path ? RC_INPUT : RC_RUNTIME;
        case AT_OTHER: break;
        }
        return RC_RUNTIME;
    case OOC_ERR_NO_SPACE:
    case OOC_ERR_BUSY:
    case OOC_ERR_JOURNAL: return RC_OUTPUT;
    case OOC_ERR_SHAPE: return RC_SHAPE;
    case OOC_ERR_CANCELLED: return RC_INTERRUPTED;
    case OOC_ERR_PARAM_RANGE:
    case OOC_ERR_OVERLAP: return RC_USAGE; /* (-o naming an input) */
    case OOC_ERR_UNDECIDED: return RC_CHECK_FAILED; /* (C not shown right: not to be used as checked) */
    default: return RC_RUNTIME;
    }
}

/* ------------------------------------------------------------------------ */
/* Error messages                                                            */

const char *progname = "oocgemm";

/* The message of the last failure (usage_error, fail), for --json. */
char fail_msg[16384];

/* Messages held back (messages_hold), the first few KiB of them. */
static int held;
static char held_text[8192];

/* text on stderr, or kept while messages are held */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (held) {
        size_t n = strlen(held_text);
        vsnprintf(held_text + n, sizeof held_text - n, fmt, ap);
    } else {
        vfprintf(stderr, fmt, ap);
    }
    va_end(ap);
}

void messages_hold(void)
{
    held = 1;
    held_text[0] = '\0';
}

void messages_release(int say_them)
{
    if (held && say_them) fputs(held_text, stderr);
    held = 0;
    held_text[0] = '\0';
}

size_t messages_try(void)
{
    if (held) return strlen(held_text);
    messages_hold();
    return SIZE_MAX; /* (no outer hold) */
}

void messages_tried(size_t mark, int say_them)
{
    if (mark == SIZE_MAX) messages_release(say_them);
    else if (!say_them && mark < sizeof held_text) held_text[mark] = '\0';
}

/* "oocgemm run: <message>" on stderr, a hint, and RC_USAGE. The hint names
 * the tool alone (progname may name a rank of a split job). */
int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail_msg, sizeof fail_msg, fmt, ap);
    va_end(ap);
    say("%s%s%s: %s\nTry 'oocgemm%s%s --help'.\n", progname, cmd ? " " : "", cmd ? cmd : "", fail_msg,
        cmd ? " " : "", cmd ? cmd : "");
    return RC_USAGE;
}

/* A library failure outside a file job: "oocgemm: <status>: <last error>"
 * and its exit status by the one mapping (exit_status_for): RC_RUNTIME for
 * a run-time failure, RC_USAGE for a refused OOC_FAULT specification (as
 * multiply and gen exit). */
int library_error(const ooc_handle_t *h, ooc_status_t st)
{
    const char *detail = h ? ooc_last_error(h) : "";
    return fail(exit_status_for(st, AT_OTHER, NULL, NULL, NULL), "%s%s%s", ooc_status_string(st),
                detail && *detail ? ": " : "", detail ? detail : "");
}


/* "oocgemm: <message>" on stderr (kept for --json); returns rc. */
int fail(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail_msg, sizeof fail_msg, fmt, ap);
    va_end(ap);
    say("%s: %s\n", progname, fail_msg);
    return rc;
}

/* A library failure of a file command: "oocgemm: <what>: <status>: <detail>",
 * exit status from exit_status_for(). */
int lib_fail(const ooc_handle_t *h, ooc_status_t st, stage_t at, const char *tmp_path,
             const char *journal_path, const char *what)
{
    const char *detail = h ? ooc_last_error(h) : "";
    int rc = exit_status_for(st, at, h ? ooc_last_error_path(h) : NULL, tmp_path, journal_path);
    return fail(rc, "%s: %s%s%s", what, ooc_status_string(st), detail && *detail ? ": " : "",
                detail ? detail : "");
}

/* Two entries of a long options table that getopt_long takes as one option
 * (an old spelling of another): an abbreviation of both is not ambiguous. */
static int same_option(const struct option *a, const struct option *b)
{
    return a->has_arg == b->has_arg && a->flag == b->flag && a->val == b->val;
}

/* When arg ("--out", "--out=x") abbreviates several different options of
 * the last cli_getopt table: "--output, --out-format or --out-layout" in
 * buf (each once, by its --help spelling), and 1; else 0. */
static int ambiguous_option(const char *arg, char *buf, size_t len)
{
    const struct option *t = cli_long_opts;
    if (t == NULL || strncmp(arg, "--", 2) != 0) return 0;
    const char *name = arg + 2;
    size_t n = strcspn(name, "=");
    if (n == 0) return 0;
    const struct option *pick[16];
    int np = 0;
    for (const struct option *o = t; o->name && np < 16; o++) {
        if (strncmp(o->name, name, n) != 0) continue;
        if (strlen(o->name) == n) return 0; /* an exact match is never ambiguous */
        int skip = 0;
        for (int i = 0; i < np && !skip; i++) skip = same_option(pick[i], o);
        /* an old spelling (cli_hidden_option) is named only when its option has no other */
        for (const struct option *q = t; q->name && !skip && cli_hidden_option(o->name); q++)
            skip = q != o && strncmp(q->name, name, n) == 0 && same_option(q, o) && !cli_hidden_option(q->name);
        if (!skip) pick[np++] = o;
    }
    if (np < 2) return 0;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < np && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s--%s", i == 0 ? "" : i + 1 == np ? " or " : ", ",
                                 pick[i]->name);
    return 1;
}

/* The message for getopt_long's ':' (missing value) and '?' (unknown or
 * ambiguous) returns; `shorts` lists the command's short options. Returns
 * RC_USAGE. */
int getopt_failure(const char *cmd, int c, char **argv, const char *shorts)
{
    if (c == ':') { /* optopt: the short option, or a long option's value (>= 256) */
        if (optopt > 0 && optopt < 256) return usage_error(cmd, "option -%c needs a value", optopt);
        return usage_error(cmd, "option %s needs a value", argv[optind - 1]);
    }
    /* optopt: an unknown short option; a known one here means a long
     * option given a value it does not take (--quiet=1); 0: unknown long */
    if (optopt > 0 && optopt < 256 && !strchr(shorts, optopt)) return usage_error(cmd, "unknown option -%c", optopt);
    if (optopt != 0) return usage_error(cmd, "option %s takes no value", argv[optind - 1]);
    char names[512];
    if (ambiguous_option(argv[optind - 1], names, sizeof names))
        return usage_error(cmd, "option %.*s is ambiguous: %s", (int)strcspn(argv[optind - 1], "="),
                           argv[optind - 1], names);
    return usage_error(cmd, "unknown option %s", argv[optind - 1]);
}
