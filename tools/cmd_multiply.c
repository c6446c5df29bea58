/* SPDX-License-Identifier: MIT */
/*
 * cmd_multiply.c: oocgemm multiply: C = alpha*op(A)*op(B) + beta*C0 on
 * matrix files, possibly larger than host memory, through a temporary file
 * and a resume journal, with progress, an optional check and a summary
 * against the floor. One job (mul_job_t) goes through its steps, each a
 * function returning an exit status; one cleanup at the end.
 */
#include "config.h"

#include "cli_mpi.h"
#include "multiply.h"

/* oocgemm multiply                                                          */

void multiply_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm multiply A B -o C [OPTIONS]\n"
            "\n"
            "C = alpha*op(A)*op(B) + beta*C0 on matrix files, possibly larger than host\n"
            "memory (they are streamed, never held whole). op(A) is m x k, op(B) k x n,\n"
            "C0 and C m x n. All operands have one element type; C gets it too. Every\n"
            "input is opened and checked (format, element type, shapes) before the\n"
            "output is created: a bad input leaves no file behind. C must be absent or a\n"
            "regular file, and the inputs regular files (a FIFO or a device is refused).\n"
            "\n"
            "Operands:\n"
            "  A, B                  .npy files (versions 1.0, 2.0, 3.0; float32, float64,\n"
            "                        complex64, complex128; little-endian; C or Fortran\n"
            "                        order), or raw little-endian data given as\n"
            "                        PATH:ROWSxCOLS[:DTYPE[:LAYOUT]], e.g.\n"
            "                        A.bin:1000x500:d:F (DTYPE as --dtype, but not C,\n"
            "                        which reads as a layout: c or c8 for complex64;\n"
            "                        LAYOUT C or F, or row or col: the stored matrix,\n"
            "                        before op). A\n"
            "                        file without the NumPy magic and without that\n"
            "                        suffix is raw with the defaults below.\n"
            "  --rows R, --cols C    shape of raw operands given without a suffix\n"
            "  --dtype T             the element type of the product: s, d, c or z\n"
            "                        (float32, float64, complex64, complex128; also f4,\n"
            "                        f8, c8, c16). Raw operands without a DTYPE field\n"
            "                        are read as T; an operand of another type is\n"
            "                        refused (exit 2): nothing is converted. Without\n"
            "                        --dtype the files say (raw: d)\n"
            "  --layout row|col      storage layout of raw operands whose suffix gives\n"
            "                        none: row-major (C order) or column-major (Fortran\n"
            "                        order; also C or F) (default row); a .npy file\n"
            "                        says its own\n"
            "\n"
            "Output:\n"
            "  -o, --output C        the result (required). Written to C.ooc-tmp, renamed\n"
            "                        onto C when complete and flushed: never half-written.\n"
            "                        An existing C this user may not write (chmod a-w; root\n"
            "                        may) is not replaced (exit 6); one replaced passes on\n"
            "                        its permissions and group (hard links keep the old)\n"
            "  --out-format npy|raw  the format of C (default: npy when C ends in .npy,\n"
            "                        else raw)\n"
            "  --out-layout row|col  storage layout of C (default row; C0, and an operand\n"
            "                        with op C on complex data, must be stored in C's\n"
            "                        layout unless one row or column: without\n"
            "                        --out-layout C takes theirs, and a conflict is an\n"
            "                        error, exit 5)\n"
            "\n"
            "Product:\n"
            "  --transa N|T|C        op(A): A, A^T or A^H (default N; for real data C is\n"
            "                        T)\n"
            "  --transb N|T|C        op(B), likewise (default N)\n"
            "  --alpha X             real scalar, (X, 0) for complex types (default 1)\n"
            "  --c-in C0             add beta*C0 (C0 may be the output file itself: it is\n"
            "                        read from the old file while the new one is written\n"
            "                        beside it)\n"
            "  --beta X              real scalar (default 1 with --c-in, else 0; a\n"
            "                        nonzero X needs --c-in)\n"
            "\n"
            "Resuming (see RESUMING in the manual):\n"
            "  --journal PATH        the resume journal (default C.ooc-journal). Every\n"
            "                        finished row block of C is flushed and recorded there\n"
            "                        (each record checksummed, with a digest of the\n"
            "                        block's bytes: a resume computes again a block whose\n"
            "                        bytes in C.ooc-tmp changed since). It must be a file\n"
            "                        of its own (not an input, the output or C.ooc-tmp:\n"
            "                        exit 2; under mpirun nor may the ranks'\n"
            "                        PATH.r<R>-of-<P> be); nothing but a journal (or an\n"
            "                        empty file: a journal's creation cut short) is ever\n"
            "                        removed or overwritten at PATH\n"
            "  --resume              continue the job that C.ooc-tmp and the journal\n"
            "                        record (after kill -9, a crash, a signal or a full\n"
            "                        disk): the result is byte-identical to an\n"
            "                        uninterrupted run. Give the same operands and\n"
            "                        options (the plan is the journal's: --block-rows or\n"
            "                        --a-pieces it does not follow are said in a note).\n"
            "                        A journal of another job, or damaged or\n"
            "                        edited, is refused (exit 6); with only one of the\n"
            "                        two there (another --journal?) the job starts from\n"
            "                        its first block, and a note says so. A --resume run\n"
            "                        keeps its journal marked complete: the same command\n"
            "                        again says the job finished and does nothing (a\n"
            "                        requeued batch job); a journal that records another\n"
            "                        job finished (other options, an input modified since)\n"
            "                        holds no work to keep: the job is computed anew and C\n"
            "                        replaced, a note saying what differs. Blocks are\n"
            "                        computed the same\n"
            "                        way only by the same computer ('oocgemm info':\n"
            "                        \"blocks computed by\"):\n"
            "                        a resume that would mix computers (another GPU kind,\n"
            "                        cuBLAS, backend, CPU or thread count) is refused\n"
            "                        (exit 6), as is an mpirun job whose ranks differ\n"
            "                        (exit 3)\n"
            "  --allow-mixed         accept that mix: keep the blocks another computer\n"
            "                        made and compute the rest here (or let ranks of\n"
            "                        different computers share a job). C is correct to\n"
            "                        the checks' tolerance but not byte-identical to one\n"
            "                        run's; the journal is marked mixed, so a later\n"
            "                        resume needs --allow-mixed too, and the summary says\n"
            "                        how many blocks were another's\n"
            "\n"
            "On failure part-way the temporary file and the journal are kept for\n"
            "--resume; any failure before the multiply starts leaves no file behind.\n"
            "Another job writing the same C is refused (exit 6). SIGTERM, SIGINT, SIGHUP\n"
            "and SIGUSR1 (Slurm's wall-time warning) stop the multiply cleanly,\n"
            "resumable, with exit status 7.\n"
            "\n"
            "Under mpirun or srun (see RUNNING UNDER MPI in the manual; built with\n"
            "./configure --with-mpi), the ranks split C's row blocks (its column\n"
            "blocks where one process would keep op(A) resident: the same plan, the\n"
            "same bytes), or with op(B) in panels, C as a grid of rectangles (blocks\n"
            "of a group of panels) where the busiest rank then reads less: rank 0\n"
            "creates C.ooc-tmp and commits it once every rank's\n"
            "part is on disk, each rank keeps its own journal (JOURNAL.r<R>-of-<P>),\n"
            "and --resume may use another number of ranks. A failure or a stop signal\n"
            "on any rank stops them all. Every rank must be given the same operands\n"
            "(or identical copies) and options: ranks given different jobs are\n"
            "refused (exit 2) before anything is written.\n"
            "The floor is the ranks' GPUs' figures measured at once and summed, and\n"
            "each host's memory's, over the bytes every rank moved and staged (a figure\n"
            "given is each GPU's, or each host's).\n"
            "\n"
            "Check:\n"
            "  --verify              after the multiply, check C (read back from its\n"
            "                        path) against OpenBLAS as 'oocgemm verify' does (3\n"
            "                        vectors, 16 rows); exit 1 if it fails (C is written\n"
            "                        all the same, and the message says it is wrong: do\n"
            "                        not use it)\n"
            "\n"
            LIB_HELP
            FLOOR_HELP
            "The disk:\n"
            "  --measure-disk        before the multiply, measure the disk with the page\n"
            "                        cache bypassed (O_DIRECT): read up to 4 GiB of A,\n"
            "                        write and flush a 2 GiB scratch file beside the\n"
            "                        output, then both at once; the first two are used\n"
            "                        as the bandwidths below, the third gives the\n"
            "                        shared-disk bound (bytes read + written) / (both at\n"
            "                        once)\n"
            "  --disk-read-bw GB/s   the disk's read bandwidth, measured separately\n"
            "  --disk-write-bw GB/s  the disk's write bandwidth, measured separately;\n"
            "                        with either, io_bound = max(bytes read / read bw,\n"
            "                        bytes written / write bw) and bound = max(floor,\n"
            "                        io_bound) are shown with bound/time\n"
            "\n"
            "Progress and summary:\n"
            "  --no-progress         no progress on stderr (by default a bar with percent,\n"
            "                        blocks, GB/s, TFLOP/s and ETA on a terminal, a plain\n"
            "                        line every 5%% or 10 s otherwise)\n"
            "  -q, --quiet           print nothing but errors (and no progress)\n"
            "  --json                print one JSON object on stdout instead of the\n"
            "                        summary, also with -q and on failure (see JSON OUTPUT\n"
            "                        in the manual), with the keys command, version,\n"
            "                        library_version, files, shape, dtype, transa,\n"
            "                        transb, alpha, beta, backend, backend_reason,\n"
            "                        multiplied, already_finished, resumed,\n"
            "                        blocks_before_resume, blocks_mismatched,\n"
            "                        blocks_mixed, mixed_by,\n"
            "                        interrupted, resumable, resume_keeps_blocks, signal,\n"
            "                        time_s, tflops, bytes_read, bytes_written,\n"
            "                        read_gbps, write_gbps, host_staging_bytes,\n"
            "                        peak_rss_bytes, floor, disk, io_bound_s,\n"
            "                        shared_disk_bound_s, bound_s, bound_over_time,\n"
            "                        (under mpirun: ranks_split, ranks,) plan, stats,\n"
            "                        devices, check, exit_status, error\n"
            "  -h, --help            this help\n"
            "\n"
            "The summary: time, rate, bytes read and written and their rates, the host\n"
            "staging memory and the peak resident memory, the backend and its plan (one\n"
            "line per device when several ran), the floor with floor/time, and the\n"
            "disk's bounds.\n"
            "\n");
}


const struct option multiply_long_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"transa", required_argument, NULL, OPT_TRANSA},
    {"transb", required_argument, NULL, OPT_TRANSB},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"c-in", required_argument, NULL, OPT_C_IN},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"resume", no_argument, NULL, OPT_RESUME},
    {"allow-mixed", no_argument, NULL, OPT_ALLOW_MIXED},
    {"journal", required_argument, NULL, OPT_JOURNAL},
    LIB_LONG_OPTS,
    {"rows", required_argument, NULL, OPT_ROWS},
    {"cols", required_argument, NULL, OPT_COLS},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"order", required_argument, NULL, OPT_LAYOUT}, /* the old spelling of --layout */
    {"out-format", required_argument, NULL, OPT_OUT_FORMAT},
    {"out-layout", required_argument, NULL, OPT_OUT_LAYOUT},
    {"out-order", required_argument, NULL, OPT_OUT_LAYOUT}, /* the old spelling of --out-layout */
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    FLOOR_LONG_OPTS,
    {"disk-read-bw", required_argument, NULL, OPT_DISK_READ_BW},
    {"measure-disk", no_argument, NULL, OPT_MEASURE_DISK},
    {"disk-write-bw", required_argument, NULL, OPT_DISK_WRITE_BW},
    {"quiet", no_argument, NULL, 'q'},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parse `oocgemm multiply` options into *o. Returns RC_OK, RC_USAGE, or -1
 * for --help (already printed). */
static int multiply_parse(int argc, char **argv, mul_opts_t *o)
{
    const char *cmd = "multiply";
    common_opts_t co = {.dtype = OOC_R64, .layout = OOC_ROW_MAJOR, .ta = OOC_OP_N, .tb = OOC_OP_N, .alpha = 1.0};
    memset(o, 0, sizeof *o);
    o->lib.backend = OOC_BACKEND_AUTO;
    o->out_layout = OOC_ROW_MAJOR;

    opterr = 0;
    optind = 1;
    for (;;) {
        char optname[64];
        int c = cli_getopt(argc, argv, ":o:qh", multiply_long_opts, optname, sizeof optname);
        if (c == -1) break;
        int shared = common_opt_parse(cmd, c, optname, optarg, &co);
        if (shared == 0) shared = lib_opt_parse(cmd, c, optname, optarg, &o->lib);
        if (shared == 0) shared = floor_opt_parse(cmd, c, optarg, &o->floor);
        if (shared < 0) return RC_USAGE;
        if (shared > 0) continue;
        switch (c) {
        case 'o': o->out = optarg; break;
        case OPT_C_IN: o->c_in = optarg; break;
        case OPT_VERIFY: o->verify = 1; break;
        case OPT_RESUME: o->resume = 1; break;
        case OPT_ALLOW_MIXED: o->allow_mixed = 1; break;
        case OPT_JOURNAL:
            if (*optarg == '\0') return usage_error(cmd, "--journal: empty path");
            o->journal = optarg;
            break;
        case OPT_OUT_FORMAT:
            if (strcasecmp(optarg, "npy") == 0) o->out_format = OOC_FORMAT_NPY;
            else if (strcasecmp(optarg, "raw") == 0) o->out_format = OOC_FORMAT_RAW;
            else return usage_error(cmd, "--out-format: '%s' is not npy or raw", optarg);
            break;
        case OPT_OUT_LAYOUT:
            if (order_parse(optarg, &o->out_layout))
                return usage_error(cmd, "%s: '%s' is not row or col (or C or F)", optname, optarg);
            o->have_out_layout = 1;
            break;
        case OPT_NO_PROGRESS: o->no_progress = 1; break;
        case OPT_DISK_READ_BW:
            if (parse_real(cmd, "--disk-read-bw", optarg, 1, &o->disk_read_bw)) return RC_USAGE;
            break;
        case OPT_MEASURE_DISK: o->measure_disk = 1; break;
        case OPT_DISK_WRITE_BW:
            if (parse_real(cmd, "--disk-write-bw", optarg, 1, &o->disk_write_bw)) return RC_USAGE;
            break;
        case 'h': multiply_usage(help_out()); print_exit_codes(help_out()); return -1;
        default: return getopt_failure(cmd, c, argv, "oqh");
        }
    }
    o->ta = co.ta;
    o->tb = co.tb;
    o->alpha = co.alpha;
    o->beta = co.beta;
    o->quiet = co.quiet;
    o->json = co.json;
    o->raw = (raw_defaults_t){cmd, co.rows, co.cols, co.dtype, co.layout, co.dtype_given,
                              co.rows_given && co.cols_given};
    if (argc - optind < 2) return usage_error(cmd, "two input files A and B are required");
    if (argc - optind > 2)
        return usage_error(cmd, "unexpected argument '%s' (the output is given with -o)", argv[optind + 2]);
    o->a = argv[optind];
    o->b = argv[optind + 1];
    if (o->out == NULL) return usage_error(cmd, "-o C is required (the output file)");
    if (*o->out == '\0') return usage_error(cmd, "-o: empty file name");
    if (output_name_check(cmd, "-o", o->out,
                          "C's shape is op(A)'s rows x op(B)'s columns; name the file alone and give "
                          "--out-format raw and --out-layout row|col") != RC_OK)
        return RC_USAGE;
    if (co.rows_given != co.cols_given) return usage_error(cmd, "--rows and --cols go together");
    if (o->c_in && !co.beta_given) o->beta = 1.0;
    if (o->beta != 0.0 && o->c_in == NULL)
        return usage_error(cmd, "--beta %g needs --c-in C0 (the matrix beta multiplies)", o->beta);
    return RC_OK;
}

/* Do paths a and b name one directory entry: the same name in the same
 * directory (by the directory's identity: "x", "./x" and "d/../x" are one)?
 * Neither file need exist. */
static int same_entry(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    const char *na = sa ? sa + 1 : a, *nb = sb ? sb + 1 : b;
    if (*na == '\0' || strcmp(na, nb) != 0) return 0;
    char *da = sa ? strndup(a, (size_t)(sa - a) + (sa == a)) : strdup(".");
    char *db = sb ? strndup(b, (size_t)(sb - b) + (sb == b)) : strdup(".");
    struct stat x, y;
    int same = da && db ? stat(da, &x) == 0 && stat(db, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino
                        : strcmp(a, b) == 0;
    free(da);
    free(db);
    return same;
}

/* The journal must be a file of its own: not an operand, not the output or
 * its temporary file, compared by name too (before the commit C is not
 * there: the journal would be made at its path, then C renamed over it).
 * what: how the messages name it ("--journal PATH", a rank's journal).
 * RC_OK, or RC_USAGE with a message (nothing is created before this). */
static int journal_apart(const char *cmd, const char *journal, const char *what, const char *out, const char *tmp,
                         const operand_t *const *ops, int n)
{
    struct stat j, o;
    if (same_entry(journal, out))
        return usage_error(cmd, "%s is the output %s: the journal must be a file of its own", what, out);
    if (same_entry(journal, tmp))
        return usage_error(cmd, "%s is %s, the temporary file of the output: the journal must be a file of its own",
                           what, tmp);
    if (stat(journal, &j) != 0) return RC_OK;
    for (int i = 0; i < n; i++)
        if (ops[i] && ops[i]->path && stat(ops[i]->path, &o) == 0 && o.st_dev == j.st_dev && o.st_ino == j.st_ino)
            return usage_error(cmd, "%s is the input %s (%s): the journal must be a file of its own", what,
                               ops[i]->name, ops[i]->path);
    if (stat(out, &o) == 0 && o.st_dev == j.st_dev && o.st_ino == j.st_ino)
        return usage_error(cmd, "%s is the output %s: the journal must be a file of its own", what, out);
    if (stat(tmp, &o) == 0 && o.st_dev == j.st_dev && o.st_ino == j.st_ino)
        return usage_error(cmd, "%s is %s, the temporary file of the output: the journal must be a file of its own",
                           what, tmp);
    return RC_OK;
}

int mul_journal_apart(const mul_job_t *j, const char *journal, const char *what)
{
    const operand_t *ops[3] = {&j->A, &j->B, j->o.c_in ? &j->C0 : NULL};
    return journal_apart("multiply", journal, what, j->o.out, j->tmp_path, ops, 3);
}


/* The operands parsed, the paths of the temporary file and the journal,
 * the handle with every option, which the stop signals (recorded since
 * cmd_multiply began) now cancel: at once if one came already. */
int mul_prepare(mul_job_t *j)
{
    const char *cmd = "multiply";
    mul_opts_t *o = &j->o;
    int rc;
    ooc_status_t st;
    if ((rc = operand_parse(cmd, "A", o->a, &o->raw, &j->A)) != RC_OK ||
        (rc = operand_parse(cmd, "B", o->b, &o->raw, &j->B)) != RC_OK ||
        (o->c_in && (rc = operand_parse(cmd, "C0", o->c_in, &o->raw, &j->C0)) != RC_OK))
        return rc;
    if (asprintf(&j->tmp_path, "%s" OUT_TMP_SUFFIX, o->out) < 0) j->tmp_path = NULL;
    if (o->journal) j->journal_path = strdup(o->journal);
    else j->journal_path = mul_default_journal(o->out);
    if (!j->tmp_path || !j->journal_path) return fail(RC_RUNTIME, "out of host memory");
    if ((st = ooc_create(&j->h)) != OOC_SUCCESS) return lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
    if ((st = lib_opts_apply(j->h, &o->lib)) != OOC_SUCCESS) return lib_fail(j->h, st, AT_OTHER, NULL, NULL, "options");
    stop_signals_install(j->h);
    stop_signals_watchdog();
    return RC_OK;
}

/*
 * ooc_gemm_files needs C0, and an operand whose op is C, stored in C's
 * order: without --out-order, C takes their order. RC_OK, or RC_SHAPE when
 * they disagree with each other or with --out-order.
 */
static int mul_out_layout(mul_job_t *j)
{
    mul_opts_t *o = &j->o;
    const struct {
        const operand_t *op;
        const char *why;
    } need[3] = {
        {o->c_in ? &j->C0 : NULL, "--c-in"},
        {o->ta == OOC_OP_C ? &j->A : NULL, "--transa C"},
        {o->tb == OOC_OP_C ? &j->B : NULL, "--transb C"},
    };
    const char *chosen_by = "--out-layout";
    for (int i = 0; i < 3; i++) {
        /* a vector (or an empty operand) has the same bytes in either order:
         * it neither chooses C's order nor conflicts with it */
        if (need[i].op == NULL || need[i].op->spec.rows <= 1 || need[i].op->spec.cols <= 1) continue;
        if (!o->have_out_layout) {
            o->out_layout = need[i].op->spec.layout;
            o->have_out_layout = 1;
            chosen_by = need[i].why;
        } else if (need[i].op->spec.layout != o->out_layout) {
            return fail(RC_SHAPE,
                        "%s needs %s (%s) stored in the output's order, but it is in %s order and %s makes the "
                        "output %s order",
                        need[i].why, need[i].op->name, need[i].op->path, order_name(need[i].op->spec.layout),
                        chosen_by, order_name(o->out_layout));
        }
    }
    return RC_OK;
}

/* C0 opened. In place with --resume (C0 the output's file), a job that
 * finished committed its output over C0 in the output's format, which may
 * not be C0's as given (a raw C0 with its shape suffix, a .npy output, or
 * the other way round): the same command run again could not open C0 as
 * given (exit 4) where it should find the job finished. C0 is then opened as
 * the file now is (a .npy file by its header; raw data with C's shape and
 * the output's type), and the refusal kept: mul_c0_refused says it unless
 * the job turns out to be finished. */
static int c0_open(mul_job_t *j)
{
    mul_opts_t *o = &j->o;
    struct stat a, b;
    int in_place = o->resume && stat(j->C0.path, &a) == 0 && stat(o->out, &b) == 0 && a.st_dev == b.st_dev &&
                   a.st_ino == b.st_ino;
    if (!in_place) return operand_open(j->h, &j->C0, &o->raw);
    size_t mark = messages_try();
    int rc = operand_open(j->h, &j->C0, &o->raw);
    if (rc != RC_INPUT) {
        messages_tried(mark, rc != RC_OK);
        return rc;
    }
    messages_tried(mark, 0);
    if (j->C0.file) ooc_file_close(j->C0.file, 0); /* (opened, then refused) */
    j->C0.file = NULL;
    if ((j->c0_refused = strdup(fail_msg)) == NULL) return fail(RC_RUNTIME, "out of host memory");
    j->c0_refused_rc = rc;
    int64_t m = o->ta == OOC_OP_N ? j->A.spec.rows : j->A.spec.cols;
    int64_t n = o->tb == OOC_OP_N ? j->B.spec.cols : j->B.spec.rows;
    ooc_format_t format = o->out_format != OOC_FORMAT_AUTO ? o->out_format
                          : has_npy_ext(o->out)           ? OOC_FORMAT_NPY
                                                          : OOC_FORMAT_RAW;
    operand_t as_is = {.name = j->C0.name, .arg = j->C0.path, .path = j->C0.path};
    if (format == OOC_FORMAT_RAW) {
        as_is.shaped = 1;
        as_is.spec = (ooc_file_spec_t){OOC_FORMAT_RAW, m, n, j->A.spec.dtype,
                                       o->have_out_layout ? o->out_layout : j->A.spec.layout};
    }
    mark = messages_try();
    rc = operand_open(j->h, &as_is, &o->raw);
    messages_tried(mark, 0);
    if (rc != RC_OK && as_is.file) ooc_file_close(as_is.file, 0);
    if (rc != RC_OK) return fail(j->c0_refused_rc, "%s", j->c0_refused); /* (as given, not as retried) */
    j->C0.file = as_is.file;
    j->C0.spec = as_is.spec;
    j->C0.shaped = as_is.shaped;
    return RC_OK;
}

int mul_c0_refused(mul_job_t *j)
{
    if (j->c0_refused == NULL || j->already) return RC_OK;
    return fail(j->c0_refused_rc, "%s", j->c0_refused);
}

/* Every input opened and checked before the output exists; the output's
 * spec, the scalars, and the journal kept apart from every file. */
int mul_open_inputs(mul_job_t *j)
{
    mul_opts_t *o = &j->o;
    int rc;
    /* an input named as C's temporary file, by name before anything is
     * opened: opened, it would be refused as a malformed file (its trailer),
     * or not found, rather than named for what it is */
    const operand_t *named[3] = {&j->A, &j->B, o->c_in ? &j->C0 : NULL};
    for (int i = 0; i < 3; i++)
        if (named[i] && named[i]->path && same_entry(named[i]->path, j->tmp_path))
            return usage_error("multiply", "the input %s (%s) is %s, the temporary file the output is written into",
                               named[i]->name, named[i]->path, j->tmp_path);
    if ((rc = operand_open(j->h, &j->A, &o->raw)) != RC_OK || (rc = operand_open(j->h, &j->B, &o->raw)) != RC_OK ||
        (o->c_in && (rc = c0_open(j)) != RC_OK))
        return rc;
    if ((rc = check_operands(&j->A, o->ta, &j->B, o->tb, o->c_in ? &j->C0 : NULL, NULL, &j->m, &j->n, &j->k)) != RC_OK)
        return rc;
    j->t = j->A.spec.dtype;
    j->have_shape = 1;
    if ((rc = scalars_fit("multiply", j->t, o->alpha, o->beta)) != RC_OK) return rc;
    tf32_note("multiply", o->lib.tf32, j->t);
    if (!dtype_complex(j->t)) { /* A^H = A^T for real data */
        if (o->ta == OOC_OP_C) o->ta = OOC_OP_T;
        if (o->tb == OOC_OP_C) o->tb = OOC_OP_T;
    }
    if ((rc = mul_out_layout(j)) != RC_OK) return rc;
    ooc_format_t format = o->out_format != OOC_FORMAT_AUTO ? o->out_format
                          : has_npy_ext(o->out)           ? OOC_FORMAT_NPY
                                                          : OOC_FORMAT_RAW;
    j->cspec = (ooc_file_spec_t){format, j->m, j->n, j->t, o->out_layout};
    j->alpha = scalar_of(o->alpha);
    j->beta = scalar_of(o->beta);
    j->fo = (ooc_files_opts_t){.journal = o->journal,
                               .resume = o->resume,
                               .progress = progress_cb,
                               .progress_user = &j->prog,
                               .allow_mixed = o->allow_mixed};
    const operand_t *ops[3] = {&j->A, &j->B, o->c_in ? &j->C0 : NULL};
    struct stat c, t, in;
    int have_c = stat(o->out, &c) == 0, have_t = stat(j->tmp_path, &t) == 0;
    for (int i = 0; i < 3; i++) {
        if (ops[i] == NULL || stat(ops[i]->path, &in) != 0) continue;
        if (i < 2 && have_c && in.st_dev == c.st_dev && in.st_ino == c.st_ino) /* (C0 may be: C in place) */
            return usage_error("multiply", "-o %s is the input %s (%s): the result would replace it (only --c-in "
                               "may name the output: C computed in place)", o->out, ops[i]->name, ops[i]->path);
        if (have_t && in.st_dev == t.st_dev && in.st_ino == t.st_ino) /* emptied before it is read */
            return usage_error("multiply", "the input %s (%s) is %s, the temporary file the output is written into",
                               ops[i]->name, ops[i]->path, j->tmp_path);
    }
    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "--journal %s", j->journal_path);
    return journal_apart("multiply", j->journal_path, what, o->out, j->tmp_path, ops, 3);
}

/* --measure-disk: the disk's bandwidths now, unless given. */
void mul_measure_disk(mul_job_t *j)
{
    mul_opts_t *o = &j->o;
    double rd, wr;
    measure_disk(j->A.path, o->out, &rd, &wr, &j->disk_both);
    if (o->disk_read_bw <= 0) o->disk_read_bw = rd;
    if (o->disk_write_bw <= 0) o->disk_write_bw = wr;
    if (!o->quiet && !o->json)
        printf("disk (O_DIRECT, measured now): read %.3g GB/s, write %.3g GB/s, both at once %.3g GB/s in all%s\n", rd,
               wr, j->disk_both, rd > 0 && wr > 0 ? "" : " (0: could not measure)");
}

/* A failed or interrupted ooc_gemm_files(): the exit status and message,
 * and what a later --resume can use is kept: the journal this run keeps, or
 * the files a refused resume found (they may belong to another job); a
 * fresh run refused at its journal has nothing worth keeping. */
static int mul_failed(mul_job_t *j, ooc_status_t st)
{
    int rc;
    j->interrupted = st == OOC_ERR_CANCELLED;
    int keeps = journal_keeps_blocks(j->journal_path);
    if (j->interrupted && j->prog.total == 0) /* before this run's first block: no count yet */
        rc = fail(RC_INTERRUPTED, "interrupted by %s before this run finished a block: stopped cleanly, %s",
                  signal_name(stop_signal_caught()), resume_words(j->journal_path));
    else if (j->interrupted)
        rc = fail(RC_INTERRUPTED, "interrupted by %s after %lld of %lld blocks: stopped cleanly, %s",
                  signal_name(stop_signal_caught()), (long long)j->prog.done, (long long)j->prog.total,
                  resume_words(j->journal_path));
    else
        rc = lib_fail(j->h, st, AT_RUN, j->tmp_path, j->journal_path, "multiply");
    /* a failed run's statistics are zeros but for the blocks it found changed
     * (after the message: ooc_get_stats clears the handle's last error) */
    if (ooc_get_stats(j->h, &j->stats) != OOC_SUCCESS) memset(&j->stats, 0, sizeof j->stats);
    mul_mismatch_note(j);
    int refused = st == OOC_ERR_JOURNAL || st == OOC_ERR_BUSY;
    /* refused: the temporary file an earlier run left stays, one this run
     * made (there was none to resume) goes */
    int resumed = ooc_file_resumed(j->C);
    int keep = refused ? j->o.resume && resumed : is_journal(j->journal_path);
    ooc_file_close(j->C, !keep);
    j->C = NULL;
    char left[4200];
    snprintf(left, sizeof left, resumed ? "%s and " : "", j->tmp_path);
    if (refused && j->o.resume && j->old_journals && j->old_journals[0]) /* a split run's: name them */
        fprintf(stderr, "%s: %sthe journals of a split run (%s.r*-of-*%s) are left as they were: check the "
                "command, or run it without --resume to start over\n", progname, left, j->journal_path,
                is_journal(j->journal_path) ? ", and the job's own" : "");
    else if (refused && j->o.resume)
        fprintf(stderr, "%s: %s%s %s left as %s: check the command, or run it without --resume to "
                "start over\n", progname, left, j->journal_path, resumed ? "are" : "is", resumed ? "they were" : "it was");
    else if (keep && keeps)
        fprintf(stderr, "%s: the finished blocks are kept in %s (journal %s): run the same command with "
                "--resume to continue\n", progname, j->tmp_path, j->journal_path);
    else if (keep)
        fprintf(stderr, "%s: %s and its journal %s are kept: --resume starts the job over with the plan it "
                "records (the same bytes on any number of devices)\n", progname, j->tmp_path, j->journal_path);
    return rc;
}

/* C renamed onto its path (what: its name in messages); when that fails
 * the complete result is kept in the temporary file. When only the flush
 * of the directory after the rename fails, C is at its path (not in the
 * temporary file, nothing to resume), but not durable: a failure too. */
int mul_commit(mul_job_t *j, const char *journal, const char *what, int keep)
{
    ooc_status_t st = ooc_file_commit(j->h, j->C);
    if (st != OOC_SUCCESS) {
        int rc = lib_fail(j->h, st, AT_OUTPUT, j->tmp_path, journal, what);
        int committed = ooc_file_committed(j->C);
        ooc_file_close(j->C, 0); /* the result is complete: keep it for the user */
        j->C = NULL;
        if (committed) {
            fprintf(stderr, "%s: the complete result is at %s, but the rename that put it there may not be on the "
                    "disk: a crash of the machine could undo it\n", progname, j->o.out);
            return rc;
        }
        j->uncommitted = 1;
        fprintf(stderr, "%s: the complete result is left in %s: the same command with --resume commits it\n",
                progname, j->tmp_path);
        return rc;
    }
    if (keep) return RC_OK;
    ooc_file_close(j->C, 0);
    j->C = NULL;
    return RC_OK;
}

void mul_finished_already(mul_job_t *j)
{
    j->multiplied = 1; /* (C is the job's, committed) */
    /* only at C's own default journal: a --journal path may be shared by
     * jobs on other outputs, whose ranks' journals are not this job's */
    if (j->o.journal == NULL) range_journals_remove(j->h, j->journal_path);
    if (!j->o.quiet && !j->o.json)
        printf("%s: this job finished already: the journal %s records it complete and %s is its output, "
               "unchanged: nothing to do\n", j->o.out, j->journal_path, j->o.out);
}

void mul_finished_other(const mul_job_t *j)
{
    const char *why = ooc_last_error(j->h);
    if (!j->already && why && *why)
        fprintf(stderr, "%s: note: --resume: %s: the job is computed anew, and %s replaced (a finished job's journal "
                "holds no work to keep)\n", progname, why, j->o.out);
}

/* The blocks a journal records done, and whether it records the job
 * complete (its output committed); -1 when path is not a journal. */
static int64_t journal_done(const char *path, int *complete)
{
    if (!is_journal(path)) return -1;
    int64_t done = 0;
    FILE *f = fopen(path, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "done ", 5) == 0) done++;
        else if (strncmp(line, "complete ", 9) == 0) *complete = 1;
    }
    if (f) fclose(f);
    return done;
}

/* The output a journal's job records (its "dtype=" and
 * "C=ROWSxCOLS:LAYOUT:FORMAT"), the inode of the temporary file its blocks
 * are in (its plan's "out=DEV:INO": the device number is not compared, as
 * the library compares none, lib/files.h ooc_files_same_job()) and whether
 * that plan keeps them (resumable=1, as journal_keeps_blocks()): 0, else -1. */
static int journal_output(const char *path, ooc_file_spec_t *s, unsigned long long *ino, int *keeps)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    int have = 0;
    while (f && have != 3 && fgets(line, sizeof line, f)) {
        const char *c = strstr(line, " C=");
        long long rows, cols;
        int dtype, layout, format;
        if (strncmp(line, "job ", 4) == 0 && sscanf(line, "job dtype=%d", &dtype) == 1 && c &&
            sscanf(c, " C=%lldx%lld:%d:%d", &rows, &cols, &layout, &format) == 4) {
            *s = (ooc_file_spec_t){(ooc_format_t)format, rows, cols, (ooc_dtype_t)dtype, (ooc_layout_t)layout};
            have |= 1;
        } else if (strncmp(line, "plan ", 5) == 0 && (c = strstr(line, " out=")) != NULL &&
                   sscanf(c, " out=%*u:%llu", ino) == 1) {
            *keeps = strstr(line, " resumable=1 ") != NULL;
            have |= 2;
        }
    }
    if (f) fclose(f);
    return have == 3 ? 0 : -1;
}

int resume_other_output(const mul_job_t *j)
{
    struct stat t;
    if (!j->o.resume || stat(j->tmp_path, &t) != 0) return RC_OK;
    const ooc_file_spec_t *now = &j->cspec;
    char **v = range_journals(j->journal_path, 0, 1); /* (C's journal and the ranks') */
    int rc = RC_OK;
    for (size_t i = 0; rc == RC_OK && v && v[i]; i++) {
        int complete = 0; /* (a range's journal is complete once its range is: the job is not) */
        int64_t done = journal_done(v[i], &complete);
        ooc_file_spec_t was;
        unsigned long long ino;
        int keeps = 0;
        if (done <= 0 || journal_output(v[i], &was, &ino, &keeps) != 0 || !keeps ||
            ino != (unsigned long long)t.st_ino)
            continue; /* (no block of it in the temporary file there: nothing to lose) */
        if (was.rows == now->rows && was.cols == now->cols && was.dtype == now->dtype && was.layout == now->layout &&
            was.format == now->format)
            continue;
        char a[160], b[160];
        rc = fail(RC_OUTPUT,
                  "--resume: the journal %s describes another job: its %lld finished blocks are in %s, made for a C of "
                  "%s%s, and this command makes C %s%s (another --out-layout or --out-format, or other inputs?): "
                  "resume with the options the job was started with, or run without --resume to start over; "
                  "nothing touched",
                  v[i], (long long)done, j->tmp_path, describe_spec(&was, a, sizeof a),
                  was.format == OOC_FORMAT_NPY ? ", .npy" : "", describe_spec(now, b, sizeof b),
                  now->format == OOC_FORMAT_NPY ? ", .npy" : "");
    }
    strv_free(v);
    return rc;
}

void resume_look(const mul_job_t *j, resume_found_t *f)
{
    memset(f, 0, sizeof *f);
    if (!j->o.resume) return;
    struct stat sb;
    f->tmp = stat(j->tmp_path, &sb) == 0;
    char **v = range_journals(j->journal_path, 0, 1); /* (C's journal and the ranks') */
    int of = 0, base = 0, mixed = 0;
    const char *one = NULL;
    for (size_t i = 0; v && v[i]; i++) {
        int64_t done = journal_done(v[i], &f->complete);
        if (done < 0) continue;
        f->journal = 1, f->blocks += done;
        f->keeps = f->keeps || journal_keeps_blocks(v[i]);
        if (f->njournals++ == 0) one = v[i];
        int r, q;
        const char *tail = v[i] + strlen(j->journal_path);
        if (strcmp(v[i], j->journal_path) == 0) base = 1;
        else if (sscanf(tail, ".r%d-of-%d", &r, &q) == 2 && (of == 0 || of == q)) of = q;
        else mixed = 1;
    }
    /* named as they are: a split run's are the ranks' JOURNAL.rR-of-P */
    const char *jp = j->journal_path;
    if (f->njournals == 1) snprintf(f->journals, sizeof f->journals, "the journal %s", one);
    else if (f->njournals > 1 && !base && !mixed)
        snprintf(f->journals, sizeof f->journals, "the journals %s.r*-of-%d", jp, of);
    else if (f->njournals > 1)
        snprintf(f->journals, sizeof f->journals, "the journals %s%s%s.r*-of-*", base ? jp : "", base ? " and " : "", jp);
    strv_free(v);
}

void resume_note(const mul_job_t *j, const resume_found_t *f, int kept, int after_work)
{
    if (!j->o.resume || f->complete) return; /* (a job finished before: its journal vouches for C, not blocks) */
    int many = f->njournals > 1;
    if (kept < 0 && f->tmp && !f->journal)
        fprintf(stderr, "%s: note: --resume: %s is there but no journal at %s, nor a split run's at %s.r*-of-* "
                "(a run stopped before its first block writes none; or was it given another --journal?): the job "
                "starts from its first block\n", progname, j->tmp_path, j->journal_path, j->journal_path);
    else if (kept < 0 && !f->tmp && f->journal && f->blocks > 0)
        fprintf(stderr, "%s: note: --resume: %s %s there but not %s, the file of the %lld blocks %s: the job "
                "starts from its first block\n", progname, f->journals, many ? "are" : "is", j->tmp_path,
                (long long)f->blocks, many ? "they record" : "it records");
    else if (kept == 0 && f->tmp && f->journal && f->blocks > 0 && !f->keeps)
        /* (not another run's file: a resume of such a plan starts over) */
        fprintf(stderr, "%s: note: --resume: the plan %s record%s splits k into panels (%s held partial sums, "
                "no finished block): the job %s from its first block, with that plan\n", progname, f->journals,
                many ? "" : "s", j->tmp_path,
                after_work ? "was computed" : "starts");
    else if (kept == 0 && f->tmp && f->journal && f->blocks > 0)
        fprintf(stderr, "%s: note: --resume: %s is not the file whose %lld blocks %s record%s (another run's, or its "
                "size, header or trailer changed since): the job %s from its first block\n", progname, j->tmp_path,
                (long long)f->blocks, f->journals, many ? "" : "s", after_work ? "was computed" : "starts");
}

/* The multiply itself: a finished job found by --resume does nothing;
 * otherwise the output is created (starting over removes an obsolete
 * journal; the library removes only a journal, never an input named by
 * mistake), multiplied into and committed. */
/* A resumed job keeps the plan its journal records (its blocks are
 * computed that way): --block-rows or --a-pieces given now that it does not
 * follow are said, after the work (the stats say the plan run). */
static void resume_plan_note(const mul_job_t *j)
{
    const lib_opts_t *l = &j->o.lib;
    const ooc_stats_t *st = &j->stats;
    if (!j->o.resume || st->blocks_resumed == 0) return;
    char unused[96] = "";
    int n = 0;
    if (l->block_rows && st->block_rows > l->block_rows)
        n += snprintf(unused + n, sizeof unused - (size_t)n, "--block-rows %lld", (long long)l->block_rows);
    if (l->a_pieces && st->a_pieces != l->a_pieces)
        snprintf(unused + n, sizeof unused - (size_t)n, "%s--a-pieces %lld", n ? " and " : "", (long long)l->a_pieces);
    if (unused[0])
        fprintf(stderr, "%s: note: --resume: the job kept the plan its journal records (blocks of %lld %s, A in "
                "%d k-piece%s): %s not used\n", progname, (long long)st->block_rows,
                st->a_resident ? "columns" : "rows", (int)st->a_pieces, st->a_pieces == 1 ? "" : "s", unused);
}

/* A job its journal recorded complete (finished, not committed) that was
 * computed afresh all the same, none of its blocks kept and none found
 * changed (that has its warning): C.ooc-tmp was not the file the journal
 * recorded (touched or changed since: its size or modification time). */
static void resume_complete_note(const mul_job_t *j, const resume_found_t *f)
{
    if (!j->o.resume || !f->complete || !f->tmp || j->stats.blocks_resumed > 0 || j->stats.blocks_mismatched > 0)
        return;
    fprintf(stderr, "%s: note: --resume: %s recorded the job complete, but %s is not the file it recorded (its size "
            "or modification time changed since): the job was computed afresh\n", progname, f->journals,
            j->tmp_path);
}

double mul_flops(const mul_job_t *j)
{
    if (j->o.alpha == 0.0) return 0.0;
    return (dtype_complex(j->t) ? 8.0 : 2.0) * (double)j->m * (double)j->n * (double)j->k;
}

static int mul_run(mul_job_t *j)
{
    mul_opts_t *o = &j->o;
    const void *pa = scalar_ptr(&j->alpha, j->t), *pb = scalar_ptr(&j->beta, j->t);
    ooc_file_t *c0 = o->c_in ? j->C0.file : NULL;
    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "output (%s)", o->out);
    ooc_status_t st;
    if (o->resume) { /* a requeued batch job whose work is done: nothing to do */
        st = ooc_gemm_files_finished(j->h, o->ta, o->tb, pa, j->A.file, j->B.file, pb, c0, o->out, &j->cspec, &j->fo,
                                     &j->already);
        if (st != OOC_SUCCESS) return lib_fail(j->h, st, AT_OUTPUT, j->tmp_path, j->journal_path, "resume");
        int rc = mul_c0_refused(j);
        if (rc != RC_OK) return rc;
        mul_finished_other(j);
    }
    if (j->already) {
        mul_finished_already(j);
        return RC_OK;
    }
    /* (ranks' too: a later --resume would take them) */
    if (stop_signal_caught()) /* before anything is made: nothing to keep */
        return fail(RC_INTERRUPTED, "interrupted by %s before it started: nothing written",
                    signal_name(stop_signal_caught()));
    int rc = o->resume ? resume_other_output(j) : journals_forget(j->h, j->journal_path, j->tmp_path);
    if (rc != RC_OK) return rc;
    /* what there is to continue from, before the output's creation (which
     * removes the default journal when it makes the temporary file anew) */
    resume_found_t found;
    resume_look(j, &found);
    if ((st = ooc_file_create(j->h, o->out, &j->cspec, o->resume ? OOC_FILE_RESUME : 0, &j->C)) != OOC_SUCCESS) {
        j->C = NULL;
        return lib_fail(j->h, st, AT_OUTPUT, j->tmp_path, j->journal_path, what);
    }
    /* journals of a job split by mpirun/srun that this one process resumes */
    if (o->resume && (j->old_journals = range_journals(j->journal_path, 0, 0)) != NULL && j->old_journals[0])
        j->fo.journals = (const char *const *)j->old_journals;
    resume_note(j, &found, -1, 0); /* (one of the two missing: said before the work) */
    progress_t *p = &j->prog;
    p->mode = o->quiet || o->no_progress ? PROGRESS_NONE : isatty(STDERR_FILENO) ? PROGRESS_TTY : PROGRESS_LINES;
    p->flops = mul_flops(j);
    p->next_pct = 5;
    p->t0 = p->last_print = now_seconds();
    st = ooc_gemm_files(j->h, o->ta, o->tb, pa, j->A.file, j->B.file, pb, c0, j->C, &j->fo);
    j->secs = now_seconds() - p->t0;
    progress_end(p);
    if (st == OOC_SUCCESS) resume_note(j, &found, ooc_file_resumed(j->C), 1); /* (the file not the journal's) */
    if (st != OOC_SUCCESS) return mul_failed(j, st);
    j->multiplied = 1;
    rc = mul_commit(j, j->journal_path, what, 0);
    if (rc != RC_OK) return rc;
    /* The journal now says "complete". A run with --resume (a batch script
     * that may be requeued) keeps it, so that running it again finds the job
     * finished; a plain run leaves nothing beside its output. */
    if (!o->resume) (void)ooc_journal_forget(j->h, j->journal_path);
    if (j->old_journals && j->old_journals[0]) range_journals_remove(j->h, j->journal_path); /* consumed */
    if (ooc_get_stats(j->h, &j->stats) != OOC_SUCCESS) memset(&j->stats, 0, sizeof j->stats);
    resume_plan_note(j);
    resume_complete_note(j, &found);
    if (j->stats.trace_status != OOC_SUCCESS)
        fprintf(stderr, "%s: warning: the trace was not written (%s): the result %s is complete\n", progname,
                j->stats.trace_error, o->out);
    return RC_OK;
}

/* --verify: C read back from its target path, as a user would, and checked
 * as oocgemm verify does. A signal since the multiply started stops the
 * check (one the multiply saw too late to stop it was consumed by its
 * return: asked again). RC_OK or RC_CHECK_FAILED, else a failure. */
/* TF32 is the GPU's: a C this process computed on the host backend
 * (OpenBLAS, in float32) is checked at float32's tolerance, not TF32's
 * 2^-7 more (unless another computer's blocks were let in: --allow-mixed) */
void mul_verify_math(mul_job_t *j)
{
    const char *b = j->h ? ooc_backend_name(j->h) : NULL;
    if (j->o.lib.tf32 && b && strcmp(b, "host") == 0 && !j->o.allow_mixed)
        (void)ooc_set(j->h, OOC_PARAM_MATH_MODE, OOC_MATH_STRICT);
}

static int mul_verify(mul_job_t *j)
{
    mul_opts_t *o = &j->o;
    int rc;
    j->Cv.name = "C";
    j->Cv.arg = o->out;
    if ((j->Cv.path = strdup(o->out)) == NULL) return fail(RC_RUNTIME, "out of host memory");
    j->Cv.shaped = 1;
    j->Cv.spec = j->cspec;
    if (j->cspec.format == OOC_FORMAT_NPY) j->Cv.spec.format = OOC_FORMAT_AUTO;
    if ((rc = operand_open(j->h, &j->Cv, &o->raw)) != RC_OK) return rc;
    if (stop_signal_caught()) ooc_cancel(j->h);
    mul_verify_math(j);
    ooc_status_t st = ooc_verify_files(j->h, o->ta, o->tb, scalar_ptr(&j->alpha, j->t), j->A.file, j->B.file,
                                       scalar_ptr(&j->beta, j->t), o->c_in ? j->C0.file : NULL, j->Cv.file, 3, 16,
                                       &j->vr);
    if (st == OOC_ERR_CANCELLED) {
        j->interrupted = 1;
        return fail(RC_INTERRUPTED, "interrupted by %s: %s is complete and committed, but not verified",
                    signal_name(stop_signal_caught()), o->out);
    }
    if (st == OOC_ERR_UNDECIDED)
        return fail(RC_CHECK_FAILED, "verify: %s: %s is written (committed), but the check could not decide: do not "
                    "use it as checked", ooc_last_error(j->h), o->out);
    if (st != OOC_SUCCESS) return lib_fail(j->h, st, AT_INPUT, NULL, NULL, "verify");
    j->verified = 1;
    if (j->vr.passed) return RC_OK;
    char msg[400];
    return fail(RC_CHECK_FAILED, "%s: %s is written (committed), but wrong: do not use it",
                verify_failure(&j->vr, 0, msg, sizeof msg), o->out);
}


/* --verify after a resume found the job finished in place: its C0 is the
 * output, which holds the result since then, and checking against it would
 * fail a correct C (a requeued batch job told to "not use it") */
static int verify_moot(const mul_job_t *j)
{
    struct stat a, b;
    return j->already && j->o.c_in && j->C0.path && stat(j->C0.path, &a) == 0 && stat(j->o.out, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

char *mul_default_journal(const char *out)
{
    char *path = NULL;
    return asprintf(&path, "%s.ooc-journal", out) < 0 ? NULL : path;
}

int mul_verify_whole(mul_job_t *j)
{
    if (!verify_moot(j)) return mul_verify(j);
    fprintf(stderr, "%s: --verify: not checked: this job ran in place and finished in an earlier run, so its C0 is "
            "gone: %s holds the result now, and there is nothing to check it against\n", progname, j->o.out);
    return RC_OK;
}

/* What the job holds, released in reverse order; an output still open
 * (a failure before the multiply) is removed. */
static void mul_cleanup(mul_job_t *j)
{
    /* the handle goes; a stop signal from now on is only recorded (the
     * default action would kill a job whose C is committed: exit 143) */
    stop_signals_install(NULL);
    if (j->C) ooc_file_close(j->C, 1);
    operand_free(&j->Cv);
    operand_free(&j->C0);
    free(j->c0_refused);
    operand_free(&j->B);
    operand_free(&j->A);
    pthread_mutex_destroy(&j->prog.lock);
    strv_free(j->old_journals);
    free(j->ranks);
    free(j->journal_path);
    free(j->tmp_path);
    ooc_destroy(j->h);
}

int cmd_multiply(int argc, char **argv)
{
    mul_job_t *j = calloc(1, sizeof *j);
    if (j == NULL) return fail(RC_RUNTIME, "out of host memory");
    pthread_mutex_init(&j->prog.lock, NULL);
    /* the stop signals are recorded from the start, before MPI starts (a
     * rank waits in MPI_Init until every rank has started: seconds on a busy
     * cluster) and before ooc_create (~100 ms); mul_prepare then cancels the
     * handle at once. Left at their default, a Slurm warning then killed the
     * rank (no exit 7: the batch script does not requeue the job) */
    stop_signals_install(NULL);
    /* a rank of a split job other than 0 holds its error messages back
     * until the ranks agree (mul_mpi_first_agreement): one that rank 0
     * says too (a usage error, a missing input) is said once */
    if (cli_mpi_launched_rank() > 0) messages_hold();
    /* every message of a rank of a split job names it, a usage error on
     * its command line (MPMD) too */
    progname = cli_mpi_name();
    char why[512];
    int rc = multiply_parse(argc, argv, &j->o);
    if (rc < 0) {
        rc = RC_OK; /* --help */
    } else if (cli_mpi_start(why, sizeof why) != 0) {
        if (rc == RC_OK) rc = fail(RC_USAGE, "%s", why);
    } else if (cli_mpi_active()) {
        /* a usage error too: agreed as mul_mpi's first step agrees, so that
         * no rank exits before rank 0 printed the job's one JSON object (in
         * main, before cli_mpi_finish's barrier) */
        rc = rc == RC_OK ? mul_mpi(j) : mul_mpi_refused(rc);
    } else if (rc == RC_OK) {
        rc = mul_prepare(j);
        if (rc == RC_OK) rc = mul_open_inputs(j);
        if (rc == RC_OK && j->o.measure_disk) mul_measure_disk(j);
        if (rc == RC_OK) rc = mul_run(j);
        if (rc == RC_OK && j->o.verify) rc = mul_verify_whole(j);
        if (rc == RC_OK || rc == RC_CHECK_FAILED) mul_summary(j, rc);
        else if (j->o.json) mul_print_failure_json(j, rc);
    }
    messages_release(1); /* (not split after all: said) */
    mul_cleanup(j);
    free(j);
    return rc; /* (MPI, when started, is finished by main) */
}
