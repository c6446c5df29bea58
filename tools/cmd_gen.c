/* SPDX-License-Identifier: MIT */
/*
 * cmd_gen.c: oocgemm gen: write a seeded random matrix file (.npy or raw)
 * on several threads, each filling and writing its own chunks, through a
 * temporary file renamed onto the output when complete. A stop signal
 * (cli_signal.c) stops the writers after their chunk in hand; the temporary
 * file is removed and gen exits with RC_INTERRUPTED.
 */
#include "config.h"

#include "cli.h"
#include "cli_mpi.h"

void gen_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm gen OUT --rows R --cols C [OPTIONS]\n"
            "\n"
            "Write a random matrix file: values uniform in [-1, 1), never 0, each a pure\n"
            "function of (seed, row x cols + column), so that the same seed and shape\n"
            "give the same matrix in either layout and on any number of threads (another\n"
            "number of columns gives other values). The file is written\n"
            "through a temporary file (OUT.ooc-tmp) renamed onto OUT when complete (a\n"
            "stopped multiply's OUT.ooc-tmp and OUT.ooc-journal go: its OUT is being\n"
            "replaced; a file at OUT.ooc-journal that is no journal is refused, exit 6,\n"
            "with nothing touched; an OUT replaced passes on its permissions); each\n"
            "thread fills and writes its own chunks (at most 64 MiB each). Prints the\n"
            "size and the rate in GB/s. SIGTERM, SIGINT, SIGHUP or SIGUSR1 stops it\n"
            "cleanly: the temporary file is removed, nothing is left at OUT, and the\n"
            "exit status is 7 (one that comes after every chunk is written no longer\n"
            "stops it: OUT is committed, exit status 0, and a note says so).\n"
            "Started by mpirun or srun with several ranks, gen refuses at once (exit\n"
            "status 2, rank 0 says why) and touches no file: run it once, alone.\n"
            "\n"
            "Matrix:\n"
            "  --rows R, --cols C    shape (required; 0 or more: 0 is an empty matrix)\n"
            "  --dtype T             element type: s, d, c or z (float32, float64,\n"
            "                        complex64, complex128; also f4, f8, c8, c16)\n"
            "                        (default d)\n"
            "  --layout row|col      row-major (C order) or column-major (Fortran order;\n"
            "                        also C or F) (default row)\n"
            "  --format npy|raw      file format (default: npy when OUT ends in .npy,\n"
            "                        else raw little-endian elements without a header)\n"
            "  --seed S              seed (default 42)\n"
            "\n"
            "Writing and output:\n"
            "  --threads N           writer threads (default: the CPUs the process may run\n"
            "                        on, from its affinity mask (taskset, a batch job's\n"
            "                        allocation), at most 16)\n"
            "  -q, --quiet           print nothing but errors\n"
            "  --json                print one JSON object (see JSON OUTPUT in the\n"
            "                        manual): file, seed, threads, bytes, time_s, gbps\n"
            "  -h, --help            this help\n"
            "\n"
            "A raw file is read back as OUT:RxC:DTYPE:LAYOUT (see oocgemm multiply\n"
            "--help).\n"
            "\n");
}

typedef struct {
    ooc_file_t *file;
    ooc_file_spec_t spec;
    uint64_t key;
    uint64_t total, chunk, nchunks; /* elements, elements per chunk, chunks */
    atomic_uint_fast64_t next;      /* the next chunk to take */
    atomic_int stop;
    pthread_mutex_t lock;
    ooc_status_t st; /* the first failure, and its message */
    char msg[8192];
} gen_job_t;

/* count elements from storage index `first`: element (i, j) holds the
 * value of logical index i*cols + j (complex: reals 2L and 2L+1). */
static void gen_fill(const gen_job_t *g, uint64_t first, uint64_t count, void *buf)
{
    ooc_dtype_t t = g->spec.dtype;
    int cplx = dtype_complex(t), dbl = dtype_double(t);
    uint64_t rows = (uint64_t)g->spec.rows, cols = (uint64_t)g->spec.cols;
    int crow = g->spec.layout == OOC_ROW_MAJOR;
    uint64_t i = crow ? first / cols : first % rows, j = crow ? first % cols : first / rows;
    for (uint64_t e = 0; e < count; e++) {
        uint64_t l = i * cols + j;
        if (cplx) {
            if (dbl) {
                ((double *)buf)[2 * e] = rand_double(g->key, 2 * l);
                ((double *)buf)[2 * e + 1] = rand_double(g->key, 2 * l + 1);
            } else {
                ((float *)buf)[2 * e] = rand_float(g->key, 2 * l);
                ((float *)buf)[2 * e + 1] = rand_float(g->key, 2 * l + 1);
            }
        } else if (dbl) {
            ((double *)buf)[e] = rand_double(g->key, l);
        } else {
            ((float *)buf)[e] = rand_float(g->key, l);
        }
        if (crow) {
            if (++j == cols) j = 0, i++;
        } else {
            if (++i == rows) i = 0, j++;
        }
    }
}

/* One writer: its own handle and chunk buffer; takes chunks until none is
 * left, another writer failed or a stop signal came. */
static void *gen_worker(void *arg)
{
    gen_job_t *g = arg;
    ooc_handle_t *h = NULL;
    void *buf = NULL;
    const char *why = NULL;
    ooc_status_t st = ooc_create(&h);
    if (st == OOC_SUCCESS && (buf = malloc(g->chunk * dtype_size(g->spec.dtype))) == NULL) {
        st = OOC_ERR_HOST_MEMORY;
        why = "cannot allocate a chunk buffer";
    }
    while (st == OOC_SUCCESS && !atomic_load(&g->stop) && !stop_signal_caught()) {
        uint64_t c = atomic_fetch_add(&g->next, 1);
        if (c >= g->nchunks) break;
        uint64_t first = c * g->chunk, count = g->total - first < g->chunk ? g->total - first : g->chunk;
        gen_fill(g, first, count, buf);
        st = ooc_file_write(h, g->file, first, buf, count);
    }
    if (st != OOC_SUCCESS) {
        pthread_mutex_lock(&g->lock);
        if (g->st == OOC_SUCCESS) {
            g->st = st;
            snprintf(g->msg, sizeof g->msg, "%s", why ? why : h ? ooc_last_error(h) : "");
        }
        pthread_mutex_unlock(&g->lock);
        atomic_store(&g->stop, 1);
    }
    free(buf);
    ooc_destroy(h);
    return NULL;
}

const struct option gen_long_opts[] = {
    {"rows", required_argument, NULL, OPT_ROWS},
    {"cols", required_argument, NULL, OPT_COLS},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"order", required_argument, NULL, OPT_LAYOUT}, /* the old spelling of --layout */
    {"format", required_argument, NULL, OPT_FORMAT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"quiet", no_argument, NULL, 'q'},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* What gen was asked for. */
typedef struct {
    const char *out;
    ooc_file_spec_t spec;
    uint64_t seed;
    int64_t threads; /* 0: the CPUs the process may run on, at most 16 */
    int quiet, json;
} gen_opts_t;

/* RC_OK, RC_USAGE, or -1 for --help (already printed). */
static int gen_parse(int argc, char **argv, gen_opts_t *o)
{
    const char *cmd = "gen";
    ooc_format_t format = OOC_FORMAT_AUTO;
    common_opts_t co = {.dtype = OOC_R64, .layout = OOC_ROW_MAJOR, .seed = 42};
    opterr = 0;
    optind = 1;
    for (;;) {
        char optname[64];
        int c = cli_getopt(argc, argv, ":qh", gen_long_opts, optname, sizeof optname);
        if (c == -1) break;
        int shared = common_opt_parse(cmd, c, optname, optarg, &co);
        if (shared < 0) return RC_USAGE;
        if (shared > 0) continue;
        switch (c) {
        case OPT_FORMAT:
            if (strcasecmp(optarg, "npy") == 0) format = OOC_FORMAT_NPY;
            else if (strcasecmp(optarg, "raw") == 0) format = OOC_FORMAT_RAW;
            else return usage_error(cmd, "--format: '%s' is not npy or raw", optarg);
            break;
        case OPT_THREADS:
            if (parse_int(cmd, "--threads", optarg, 1, 1024, &o->threads)) return RC_USAGE;
            break;
        case 'h': gen_usage(help_out()); print_exit_codes(help_out()); return -1;
        default: return getopt_failure(cmd, c, argv, "qh");
        }
    }
    o->seed = co.seed;
    o->quiet = co.quiet;
    o->json = co.json;
    if (optind >= argc) return usage_error(cmd, "the output file OUT is required");
    if (optind + 1 < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    o->out = argv[optind];
    if (*o->out == '\0') return usage_error(cmd, "empty output file name");
    if (output_name_check(cmd, "output", o->out,
                          "name the file alone and give --rows, --cols, --dtype, --layout and --format raw") != RC_OK)
        return RC_USAGE;
    if (!co.rows_given) return usage_error(cmd, "--rows R is required");
    if (!co.cols_given) return usage_error(cmd, "--cols C is required");
    if (format == OOC_FORMAT_AUTO) format = has_npy_ext(o->out) ? OOC_FORMAT_NPY : OOC_FORMAT_RAW;
    o->spec = (ooc_file_spec_t){format, co.rows, co.cols, co.dtype, co.layout};
    size_t e = dtype_size(co.dtype);
    uint64_t total, bytes;
    if (__builtin_mul_overflow((uint64_t)co.rows, (uint64_t)co.cols, &total) || __builtin_mul_overflow(total, e, &bytes) ||
        bytes > (uint64_t)INT64_MAX / 2)
        return usage_error(cmd, "%lld x %lld elements of %zu bytes is too large", (long long)co.rows,
                           (long long)co.cols, e);
    if (o->threads == 0) { /* the CPUs this process may run on (taskset, a batch job's cgroup), at most 16 */
        int ncpu = cli_cpu_count();
        o->threads = ncpu > 16 ? 16 : ncpu;
    }
    return RC_OK;
}

/* The chunks (an even share per thread, within [1 MiB, 64 MiB]) and no
 * more threads than chunks. */
static void gen_plan(gen_job_t *g, int64_t *threads)
{
    size_t e = dtype_size(g->spec.dtype);
    uint64_t lo = ((uint64_t)1 << 20) / e, hi = ((uint64_t)64 << 20) / e;
    g->total = (uint64_t)g->spec.rows * (uint64_t)g->spec.cols;
    g->chunk = (g->total + (uint64_t)*threads - 1) / (uint64_t)*threads;
    g->chunk = g->chunk < lo ? lo : g->chunk > hi ? hi : g->chunk;
    if (g->chunk > g->total) g->chunk = g->total > 0 ? g->total : 1; /* (an empty matrix: no chunk) */
    g->nchunks = (g->total + g->chunk - 1) / g->chunk;
    if ((uint64_t)*threads > g->nchunks) *threads = g->nchunks > 0 ? (int64_t)g->nchunks : 1;
}

/* Create the output, run the writers (the last one on this thread), commit
 * unless a stop signal came. RC_OK, else a failure or RC_INTERRUPTED
 * (message printed); g->file is left for the caller to close (removed on
 * failure). */
static int gen_write(gen_job_t *g, ooc_handle_t *h, const char *out, int64_t threads)
{
    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "output (%s)", out);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    int *created = calloc((size_t)threads, sizeof *created);
    ooc_status_t st;
    int rc = RC_OK;
    if (!th || !created) {
        rc = fail(RC_RUNTIME, "out of host memory");
    } else if ((st = ooc_file_create(h, out, &g->spec, 0, &g->file)) != OOC_SUCCESS) {
        g->file = NULL;
        if (stop_signal_caught()) /* reserving the space was interrupted (EINTR) */
            rc = fail(RC_INTERRUPTED, "interrupted by %s while %s was created: nothing is written",
                      signal_name(stop_signal_caught()), out);
        else
            rc = lib_fail(h, st, AT_OUTPUT, NULL, NULL, what);
    } else {
        for (int64_t i = 0; i < threads; i++) {
            created[i] = i + 1 < threads && pthread_create(&th[i], NULL, gen_worker, g) == 0;
            if (i + 1 == threads) gen_worker(g); /* the last writer is this thread */
        }
        for (int64_t i = 0; i < threads; i++)
            if (created[i]) pthread_join(th[i], NULL);
        uint64_t done = atomic_load(&g->next);
        if (g->st != OOC_SUCCESS)
            rc = fail(exit_status_for(g->st, AT_OUTPUT, NULL, NULL, NULL), "%s: %s%s%s", what,
                      ooc_status_string(g->st), *g->msg ? ": " : "", g->msg);
        else if (stop_signal_caught() && done < g->nchunks) /* (a chunk taken is written before a stop) */
            rc = fail(RC_INTERRUPTED, "interrupted by %s after %llu of %llu chunks: %s is not written (its "
                                      "temporary file is removed)",
                      signal_name(stop_signal_caught()), (unsigned long long)done, (unsigned long long)g->nchunks,
                      out);
        else if ((st = ooc_file_commit(h, g->file)) != OOC_SUCCESS) {
            rc = lib_fail(h, st, AT_OUTPUT, NULL, NULL, what);
            if (ooc_file_committed(g->file)) /* (only the directory's flush after the rename failed) */
                fprintf(stderr, "%s: %s is complete at its path, but the rename that put it there may not be on "
                        "the disk: a crash of the machine could undo it\n", progname, out);
        }
        else if (stop_signal_caught()) /* every chunk written: kept, as multiply keeps a job whose last block is in */
            fprintf(stderr, "%s: note: %s came after the last chunk: %s is complete and committed\n", progname,
                    signal_name(stop_signal_caught()), out);
    }
    free(created);
    free(th);
    return rc;
}

static void gen_report(const gen_opts_t *o, const gen_job_t *g, int64_t threads, double secs)
{
    const ooc_file_spec_t *sp = &o->spec;
    uint64_t file_bytes = g->total * dtype_size(sp->dtype) + ooc_file_data_offset(g->file);
    double gbps = secs > 0 ? (double)file_bytes / secs / 1e9 : INFINITY;
    if (o->json) {
        json_t js;
        json_open(&js, stdout, "gen");
        json_file(&js, "file", o->out, sp);
        json_uint(&js, "seed", o->seed);
        json_int(&js, "threads", threads);
        json_uint(&js, "bytes", file_bytes);
        json_real(&js, "time_s", secs, 1);
        json_real(&js, "gbps", gbps, 1);
        json_close(&js, RC_OK);
    } else if (!o->quiet) {
        char b[32];
        printf("wrote %s: %lld x %lld %s, %s-major, %s, %s in %.3g s (%.3g GB/s, %lld thread%s)\n", o->out,
               (long long)sp->rows, (long long)sp->cols, dtype_name(sp->dtype), layout_name(sp->layout),
               sp->format == OOC_FORMAT_NPY ? "npy" : "raw", human_bytes(file_bytes, b, sizeof b), secs, gbps,
               (long long)threads, threads == 1 ? "" : "s");
        if (sp->format == OOC_FORMAT_RAW)
            printf("read it as %s:%lldx%lld:%c:%s\n", o->out, (long long)sp->rows, (long long)sp->cols,
                   dtype_letter(sp->dtype), order_name(sp->layout));
    }
}

int cmd_gen(int argc, char **argv)
{
    gen_opts_t o;
    memset(&o, 0, sizeof o);
    int rc = gen_parse(argc, argv, &o);
    if (rc < 0) return RC_OK; /* --help */
    if (rc != RC_OK) return rc;
    /* several ranks of mpirun or srun would each write OUT through the one
     * OUT.ooc-tmp (the second locked out, the first's file left behind):
     * refused before any file is touched, rank 0 saying why and exiting
     * with status 2, the job's. The others leave silently with status 0:
     * one that failed first would make mpirun kill rank 0 before it said
     * why (no message, no --json object) */
    int ranks = cli_mpi_launched();
    if (ranks > 1 || cli_mpi_launched_rank() > 0) {
        if (cli_mpi_launched_rank() > 0) return RC_OK;
        char count[32] = "several";
        if (ranks > 1) snprintf(count, sizeof count, "%d", ranks);
        return usage_error("gen", "started by mpirun or srun as one of %s ranks: gen writes one file from one "
                           "process (the ranks would race on %s.ooc-tmp); run it once, without the launcher or "
                           "with one rank (mpirun -np 1)", count, o.out);
    }

    gen_job_t g;
    memset(&g, 0, sizeof g);
    g.spec = o.spec;
    g.key = stream_key(o.seed, 1);
    int64_t threads = o.threads;
    gen_plan(&g, &threads);
    atomic_init(&g.next, 0);
    atomic_init(&g.stop, 0);
    pthread_mutex_init(&g.lock, NULL);
    /* before the output exists: a signal from now on removes it. No handle
     * to cancel: the writers look at stop_signal_caught() between chunks */
    stop_signals_install(NULL);
    ooc_handle_t *h = NULL;
    ooc_status_t st = ooc_create(&h);
    double t0 = now_seconds();
    if (st != OOC_SUCCESS) rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
    else rc = gen_write(&g, h, o.out, threads);
    if (rc == RC_OK) gen_report(&o, &g, threads, now_seconds() - t0);
    if (g.file) ooc_file_close(g.file, rc != RC_OK); /* never leave a partial file */
    pthread_mutex_destroy(&g.lock);
    ooc_destroy(h);
    return rc;
}
