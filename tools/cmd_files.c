/* SPDX-License-Identifier: MIT */
/*
 * cmd_files.c: the subcommands on matrix files and GPUs: oocgemm gen (a seeded
 * random .npy or raw file), multiply (C = alpha*op(A)*op(B) + beta*C0 on
 * files, resumable, with progress), verify (a product on files against
 * OpenBLAS) and info (the GPUs, their links and measured bandwidth), with
 * their shared operand parsing and progress display.
 */
#include "config.h"

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* Matrix files on the command line                                          */

/* Defaults for raw operands: --rows, --cols, --dtype, --order. */
typedef struct {
    int64_t rows, cols; /* 0: not given */
    ooc_dtype_t dtype;
    ooc_layout_t layout;
} raw_defaults_t;

/* One operand as given: PATH, or PATH:ROWSxCOLS[:DTYPE[:ORDER]] for raw data. */
typedef struct {
    const char *name;     /* "A", "B", "C0", "C" */
    const char *arg;      /* as given */
    char *path;           /* allocated */
    int shaped;           /* the suffix gave a raw shape (spec holds it) */
    ooc_file_spec_t spec; /* once open: what the file holds */
    ooc_file_t *file;
} operand_t;

static void operand_free(operand_t *op)
{
    if (op->file) ooc_file_close(op->file, 0);
    op->file = NULL;
    free(op->path);
    op->path = NULL;
}

/*
 * Split a raw-shape suffix off an operand (spec.c: the last one, two or
 * three ':'-separated fields are ROWSxCOLS[:DTYPE[:ORDER]] when the first of
 * them is a shape; missing fields come from the defaults --dtype, --order;
 * else d and C). Without such a suffix the whole argument is the path.
 */
static int operand_parse(const char *cmd, const char *name, const char *arg, const raw_defaults_t *d,
                         operand_t *op)
{
    memset(op, 0, sizeof *op);
    op->name = name;
    op->arg = arg;
    size_t path_len = 0, field = 0, field_len = 0;
    switch (raw_spec_parse(arg, d->dtype, d->layout, &path_len, &op->spec, &field, &field_len)) {
    case RAW_SPEC_OK:
        op->path = strndup(arg, path_len);
        op->shaped = 1;
        break;
    case RAW_SPEC_NONE:
        if (*arg == '\0') return usage_error(cmd, "%s: empty file name", name);
        op->path = strdup(arg);
        break;
    case RAW_SPEC_BAD_DTYPE:
        return usage_error(cmd, "%s '%s': '%.*s' is not an element type (s, d, c, z, f4, f8, c8, c16)", name, arg,
                           (int)field_len, arg + field);
    case RAW_SPEC_BAD_ORDER:
        return usage_error(cmd, "%s '%s': '%.*s' is not a storage order (C or F)", name, arg, (int)field_len,
                           arg + field);
    case RAW_SPEC_NO_PATH: return usage_error(cmd, "%s '%s': no file name before the shape", name, arg);
    }
    if (op->path == NULL) return fail(RC_RUNTIME, "out of host memory");
    return RC_OK;
}

/*
 * Open an operand for reading: raw with its suffix's shape; else .npy when
 * the file starts with NumPy's magic; else raw with --rows/--cols when both
 * were given; else an error saying how to give the shape.
 */
static int operand_open(ooc_handle_t *h, operand_t *op, const raw_defaults_t *d)
{
    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "%s (%s)", op->name, op->path);
    ooc_file_spec_t spec;
    if (op->shaped) {
        spec = op->spec;
    } else {
        memset(&spec, 0, sizeof spec);
        spec.format = OOC_FORMAT_AUTO; /* unreadable: the library says why */
        /* a peek at the magic of a regular file (never blocking on a FIFO);
         * anything else, or an empty file, goes to the library as it is,
         * which says what is wrong with it */
        int fd = open(op->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        struct stat sb;
        unsigned char magic[6];
        ssize_t got = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? pread(fd, magic, sizeof magic, 0) : -1;
        if (fd >= 0) close(fd);
        if (got > 0 && ((size_t)got < sizeof magic || memcmp(magic, "\x93NUMPY", 6) != 0)) {
            if (d->rows <= 0 || d->cols <= 0)
                return fail(RC_INPUT,
                            "%s: not a .npy file (no NumPy magic); for raw data give its shape as "
                            "%s:ROWSxCOLS:DTYPE:ORDER (or --rows and --cols)",
                            what, op->path);
            spec = (ooc_file_spec_t){OOC_FORMAT_RAW, d->rows, d->cols, d->dtype, d->layout};
        }
    }
    ooc_status_t st = ooc_file_open(h, op->path, &spec, &op->file);
    if (st != OOC_SUCCESS) {
        op->file = NULL;
        return lib_fail(h, st, AT_INPUT, NULL, NULL, what);
    }
    if ((st = ooc_file_describe(op->file, &op->spec)) != OOC_SUCCESS) return lib_fail(h, st, AT_INPUT, NULL, NULL, what);
    return RC_OK;
}

/* 1 when path is a regular file (not followed through a link) that holds a
 * libooc_gemm journal: what a --resume can continue from. */
static int is_journal(const char *path)
{
    if (path == NULL) return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat sb;
    char head[16];
    int yes = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
              memcmp(head, "oocgemm-journal ", sizeof head) == 0;
    close(fd);
    return yes;
}

/* "100 x 50 float64, C order" */
static const char *describe_spec(const ooc_file_spec_t *s, char *buf, size_t len)
{
    snprintf(buf, len, "%lld x %lld %s, %s order%s", (long long)s->rows, (long long)s->cols, dtype_name(s->dtype),
             order_name(s->layout), s->format == OOC_FORMAT_RAW ? ", raw" : "");
    return buf;
}

/* Rows and columns of op(X) for the stored spec. */
static void op_shape(const ooc_file_spec_t *s, ooc_op_t op, int64_t *rows, int64_t *cols)
{
    *rows = op == OOC_OP_N ? s->rows : s->cols;
    *cols = op == OOC_OP_N ? s->cols : s->rows;
}

/*
 * op(A) m x k, op(B) k x n, C0 and C (when given) m x n, one element type.
 * RC_OK with m, n, k, or RC_SHAPE with a message.
 */
static int check_operands(const operand_t *A, ooc_op_t ta, const operand_t *B, ooc_op_t tb, const operand_t *C0,
                          const operand_t *C, int64_t *m, int64_t *n, int64_t *k)
{
    const operand_t *all[4] = {A, B, C0, C};
    for (int i = 1; i < 4; i++)
        if (all[i] && all[i]->spec.dtype != A->spec.dtype)
            return fail(RC_SHAPE, "element types differ: %s (%s) is %s, %s (%s) is %s", A->name, A->path,
                        dtype_name(A->spec.dtype), all[i]->name, all[i]->path, dtype_name(all[i]->spec.dtype));
    int64_t am, ak, bk, bn;
    op_shape(&A->spec, ta, &am, &ak);
    op_shape(&B->spec, tb, &bk, &bn);
    if (ak != bk)
        return fail(RC_SHAPE,
                    "inner dimensions differ: op(A) is %lld x %lld but op(B) is %lld x %lld (A: %s, %lld x %lld, op "
                    "%c; B: %s, %lld x %lld, op %c)",
                    (long long)am, (long long)ak, (long long)bk, (long long)bn, A->path, (long long)A->spec.rows,
                    (long long)A->spec.cols, op_letter(ta), B->path, (long long)B->spec.rows,
                    (long long)B->spec.cols, op_letter(tb));
    for (int i = 2; i < 4; i++)
        if (all[i] && (all[i]->spec.rows != am || all[i]->spec.cols != bn))
            return fail(RC_SHAPE, "%s (%s) is %lld x %lld, but op(A)*op(B) is %lld x %lld", all[i]->name,
                        all[i]->path, (long long)all[i]->spec.rows, (long long)all[i]->spec.cols, (long long)am,
                        (long long)bn);
    *m = am;
    *n = bn;
    *k = ak;
    return RC_OK;
}

/* alpha and beta as one element of dtype t, (x, 0) for complex types. */
typedef struct {
    double d[2];
    float f[2];
} scalar_t;

static scalar_t scalar_of(double x) { return (scalar_t){{x, 0.0}, {(float)x, 0.0f}}; }
static const void *scalar_ptr(const scalar_t *s, ooc_dtype_t t) { return dtype_double(t) ? (const void *)s->d : (const void *)s->f; }

/* Bytes from getrusage(): the process's peak resident set. */
static uint64_t peak_rss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (uint64_t)ru.ru_maxrss * 1024u; /* Linux: KiB */
}

/* ------------------------------------------------------------------------ */
/* oocgemm gen                                                               */

static void gen_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm gen OUT --rows R --cols C [OPTIONS]\n"
            "\n"
            "Write a random matrix file: values uniform in [-1, 1), never 0, each a pure\n"
            "function of (seed, row, column), so that the same seed gives the same\n"
            "matrix in either storage order and on any number of threads. The file is\n"
            "written through a temporary file (OUT.ooc-tmp) renamed onto OUT when\n"
            "complete; each thread fills and writes its own chunks (at most 64 MiB each).\n"
            "\n"
            "Options:\n"
            "  --rows R, --cols C    shape (required; positive integers)\n"
            "  --dtype T             s|d|c|z (or f4|f8|c8|c16, float32|float64|\n"
            "                        complex64|complex128) (default d)\n"
            "  --order C|F           C order (row-major) or Fortran order (column-major)\n"
            "                        (default C)\n"
            "  --format npy|raw      file format (default: npy when OUT ends in .npy,\n"
            "                        else raw little-endian elements without a header)\n"
            "  --seed S              seed (default 42)\n"
            "  --threads N           writer threads (default: the cores, at most 16)\n"
            "  -q, --quiet           print nothing but errors\n"
            "  --json                print one JSON object (file, shape, bytes, seconds, GB/s)\n"
            "  -h, --help            this help\n"
            "\n"
            "A raw file is read back as OUT:RxC:DTYPE:ORDER (see oocgemm multiply --help).\n"
            "\n");
    print_exit_codes(f);
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
    char msg[1024];
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

/* One writer: its own handle and chunk buffer; takes chunks until none is left. */
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
    while (st == OOC_SUCCESS && !atomic_load(&g->stop)) {
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

int cmd_gen(int argc, char **argv)
{
    static const struct option opts[] = {
        {"rows", required_argument, NULL, OPT_ROWS},   {"cols", required_argument, NULL, OPT_COLS},
        {"dtype", required_argument, NULL, OPT_DTYPE}, {"order", required_argument, NULL, OPT_ORDER},
        {"format", required_argument, NULL, OPT_FORMAT}, {"seed", required_argument, NULL, OPT_SEED},
        {"threads", required_argument, NULL, OPT_THREADS}, {"quiet", no_argument, NULL, 'q'},
        {"json", no_argument, NULL, OPT_JSON},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "gen";
    int64_t rows = 0, cols = 0, threads = 0;
    ooc_dtype_t t = OOC_R64;
    ooc_layout_t layout = OOC_ROW_MAJOR;
    ooc_format_t format = OOC_FORMAT_AUTO;
    uint64_t seed = 42;
    int quiet = 0, json = 0;

    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, ":qh", opts, NULL);
        if (c == -1) break;
        switch (c) {
        case OPT_ROWS:
            if (parse_int(cmd, "--rows", optarg, 1, INT64_MAX, &rows)) return RC_USAGE;
            break;
        case OPT_COLS:
            if (parse_int(cmd, "--cols", optarg, 1, INT64_MAX, &cols)) return RC_USAGE;
            break;
        case OPT_DTYPE:
            if (dtype_parse(optarg, &t)) return usage_error(cmd, "--dtype: '%s' is not s, d, c or z", optarg);
            break;
        case OPT_ORDER:
            if (order_parse(optarg, &layout)) return usage_error(cmd, "--order: '%s' is not C or F", optarg);
            break;
        case OPT_FORMAT:
            if (strcasecmp(optarg, "npy") == 0) format = OOC_FORMAT_NPY;
            else if (strcasecmp(optarg, "raw") == 0) format = OOC_FORMAT_RAW;
            else return usage_error(cmd, "--format: '%s' is not npy or raw", optarg);
            break;
        case OPT_SEED:
            if (parse_seed(cmd, optarg, &seed)) return RC_USAGE;
            break;
        case OPT_THREADS:
            if (parse_int(cmd, "--threads", optarg, 1, 1024, &threads)) return RC_USAGE;
            break;
        case 'q': quiet = 1; break;
        case OPT_JSON: json = 1; break;
        case 'h': gen_usage(stdout); return RC_OK;
        default: return getopt_failure(cmd, c, argv, "qh");
        }
    }
    if (optind >= argc) return usage_error(cmd, "the output file OUT is required");
    if (optind + 1 < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    const char *out = argv[optind];
    if (*out == '\0') return usage_error(cmd, "empty output file name");
    if (rows == 0) return usage_error(cmd, "--rows R is required");
    if (cols == 0) return usage_error(cmd, "--cols C is required");
    size_t e = dtype_size(t);
    uint64_t total, bytes;
    if (__builtin_mul_overflow((uint64_t)rows, (uint64_t)cols, &total) || __builtin_mul_overflow(total, e, &bytes) ||
        bytes > (uint64_t)INT64_MAX / 2)
        return usage_error(cmd, "%lld x %lld elements of %zu bytes is too large", (long long)rows, (long long)cols, e);
    if (format == OOC_FORMAT_AUTO) format = has_npy_ext(out) ? OOC_FORMAT_NPY : OOC_FORMAT_RAW;

    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads == 0) threads = ncpu < 1 ? 1 : ncpu > 16 ? 16 : ncpu;
    /* chunks: an even share per thread, within [1 MiB, 64 MiB] */
    uint64_t lo = ((uint64_t)1 << 20) / e, hi = ((uint64_t)64 << 20) / e;
    uint64_t chunk = (total + (uint64_t)threads - 1) / (uint64_t)threads;
    chunk = chunk < lo ? lo : chunk > hi ? hi : chunk;
    if (chunk > total) chunk = total;
    uint64_t nchunks = (total + chunk - 1) / chunk;
    if ((uint64_t)threads > nchunks) threads = (int64_t)nchunks;

    ooc_handle_t *h = NULL;
    pthread_t *th = NULL;
    int *created = NULL;
    int rc = RC_OK;
    gen_job_t g;
    memset(&g, 0, sizeof g);
    g.spec = (ooc_file_spec_t){format, rows, cols, t, layout};
    g.key = stream_key(seed, 1);
    g.total = total;
    g.chunk = chunk;
    g.nchunks = nchunks;
    atomic_init(&g.next, 0);
    atomic_init(&g.stop, 0);
    pthread_mutex_init(&g.lock, NULL);

    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "output (%s)", out);
    ooc_status_t st = ooc_create(&h);
    if (st != OOC_SUCCESS) {
        rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
        goto done;
    }
    th = calloc((size_t)threads, sizeof *th);
    created = calloc((size_t)threads, sizeof *created);
    if (!th || !created) {
        rc = fail(RC_RUNTIME, "out of host memory");
        goto done;
    }
    double t0 = now_seconds();
    if ((st = ooc_file_create(h, out, &g.spec, 0, &g.file)) != OOC_SUCCESS) {
        g.file = NULL;
        rc = lib_fail(h, st, AT_OUTPUT, NULL, NULL, what);
        goto done;
    }
    for (int64_t i = 0; i < threads; i++) {
        created[i] = i + 1 < threads && pthread_create(&th[i], NULL, gen_worker, &g) == 0;
        if (i + 1 == threads) gen_worker(&g); /* the last writer is this thread */
    }
    for (int64_t i = 0; i < threads; i++)
        if (created[i]) pthread_join(th[i], NULL);
    if (g.st != OOC_SUCCESS) {
        int code = exit_status_for(g.st, AT_OUTPUT, NULL, NULL, NULL);
        rc = fail(code, "%s: %s%s%s", what, ooc_status_string(g.st), *g.msg ? ": " : "", g.msg);
        goto done;
    }
    if ((st = ooc_file_commit(h, g.file)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OUTPUT, NULL, NULL, what);
        goto done;
    }
    double secs = now_seconds() - t0;
    uint64_t file_bytes = bytes + ooc_file_data_offset(g.file);
    double gbps = secs > 0 ? (double)file_bytes / secs / 1e9 : INFINITY;
    if (json) {
        printf("{\"command\":\"gen\",\"file\":");
        json_str(stdout, out);
        printf(",\"rows\":%lld,\"cols\":%lld,\"dtype\":\"%s\",\"order\":\"%s\",\"format\":\"%s\",\"seed\":%" PRIu64
               ",\"threads\":%lld,\"bytes\":%" PRIu64,
               (long long)rows, (long long)cols, dtype_name(t), order_name(layout),
               format == OOC_FORMAT_NPY ? "npy" : "raw", seed, (long long)threads, file_bytes);
        json_num(stdout, "seconds", secs, 1);
        json_num(stdout, "gbps", gbps, 1);
        printf(",\"exit_status\":0}\n");
    } else if (!quiet) {
        char b[32];
        printf("wrote %s: %lld x %lld %s, %s order, %s, %s in %.3g s (%.3g GB/s, %lld thread%s)\n", out,
               (long long)rows, (long long)cols, dtype_name(t), order_name(layout),
               format == OOC_FORMAT_NPY ? "npy" : "raw", human_bytes(file_bytes, b, sizeof b), secs, gbps,
               (long long)threads, threads == 1 ? "" : "s");
        if (format == OOC_FORMAT_RAW)
            printf("read it as %s:%lldx%lld:%c:%s\n", out, (long long)rows, (long long)cols, dtype_letter(t),
                   order_name(layout));
    }

done:
    if (g.file) ooc_file_close(g.file, rc != RC_OK); /* never leave a partial file */
    if (rc != RC_OK && json) {
        printf("{\"command\":\"gen\",\"file\":");
        json_str(stdout, out);
        printf(",\"error\":");
        json_str(stdout, fail_msg);
        printf(",\"exit_status\":%d}\n", rc);
    }
    pthread_mutex_destroy(&g.lock);
    free(created);
    free(th);
    ooc_destroy(h);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Progress of a file multiply: called on a library thread; computes and     */
/* writes to stderr only.                                                    */

enum { PROGRESS_NONE, PROGRESS_TTY, PROGRESS_LINES };

typedef struct {
    pthread_mutex_t lock;
    int mode;
    double t0;          /* when ooc_gemm_files() was called */
    double flops;       /* of the whole product */
    double last_print;
    int next_pct;       /* PROGRESS_LINES: print when this percentage is reached */
    int drawn;          /* PROGRESS_TTY: a bar is on the screen */
    int have_base;
    int64_t base;       /* blocks done before this run (resumed), estimated at the first call */
    int64_t done, total;
    uint64_t bytes_read, bytes_written;
    int calls;
} progress_t;

/* "1.23 TFLOP/s", or GFLOP/s below 1 TFLOP/s */
static const char *format_rate(double flops_per_s, char *buf, size_t len)
{
    if (flops_per_s >= 1e12 || !isfinite(flops_per_s)) snprintf(buf, len, "%.3g TFLOP/s", flops_per_s / 1e12);
    else snprintf(buf, len, "%.3g GFLOP/s", flops_per_s / 1e9);
    return buf;
}

/* "1:02:03", "4:05", or "--" */
static const char *format_eta(double s, char *buf, size_t len)
{
    if (!isfinite(s) || s < 0 || s > 1e8) {
        snprintf(buf, len, "--");
        return buf;
    }
    long v = (long)(s + 0.5);
    if (v >= 3600) snprintf(buf, len, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else snprintf(buf, len, "%ld:%02ld", v / 60, v % 60);
    return buf;
}

static void progress_cb(void *user, int64_t done, int64_t total, uint64_t bytes_read, uint64_t bytes_written)
{
    progress_t *p = user;
    pthread_mutex_lock(&p->lock);
    double now = now_seconds(), el = now - p->t0;
    if (!p->have_base) { /* the first call follows this run's first block */
        p->have_base = 1;
        p->base = done > 0 ? done - 1 : 0;
    }
    p->calls++;
    if (done > p->done) p->done = done;
    p->total = total;
    if (bytes_read > p->bytes_read) p->bytes_read = bytes_read;
    if (bytes_written > p->bytes_written) p->bytes_written = bytes_written;
    done = p->done;

    double frac = total > 0 ? (double)done / (double)total : 1.0;
    int64_t ran = done - p->base; /* blocks finished by this run */
    double gbps = el > 0 ? (double)(p->bytes_read + p->bytes_written) / el / 1e9 : 0.0;
    double rate = el > 0 && total > 0 ? p->flops * (double)ran / (double)total / el : 0.0;
    double eta = ran > 0 ? el * (double)(total - done) / (double)ran : NAN;
    char etab[32], rateb[32];
    if (p->mode == PROGRESS_TTY && (now - p->last_print >= 0.1 || done >= total)) {
        enum { WIDTH = 24 };
        char bar[WIDTH + 1];
        int fill = (int)(frac * WIDTH);
        for (int i = 0; i < WIDTH; i++) bar[i] = i < fill ? '#' : '.';
        bar[WIDTH] = '\0';
        fprintf(stderr, "\r[%s] %5.1f%%  %lld/%lld blocks  %.3g GB/s  %s  ETA %s\033[K", bar, 100.0 * frac,
                (long long)done, (long long)total, gbps, format_rate(rate, rateb, sizeof rateb),
                format_eta(eta, etab, sizeof etab));
        fflush(stderr);
        p->drawn = 1;
        p->last_print = now;
    } else if (p->mode == PROGRESS_LINES) {
        int pct = (int)(100.0 * frac);
        if (pct >= p->next_pct || now - p->last_print >= 10.0 || done >= total) {
            fprintf(stderr, "%s: %3d%% (%lld/%lld blocks) %.1f s, %.3g GB/s, %s, ETA %s\n", progname, pct,
                    (long long)done, (long long)total, el, gbps, format_rate(rate, rateb, sizeof rateb),
                    format_eta(eta, etab, sizeof etab));
            p->last_print = now;
            while (p->next_pct <= pct) p->next_pct += 5;
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* After the multiply: end the bar's line. */
static void progress_end(progress_t *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->mode == PROGRESS_TTY && p->drawn) fputc('\n', stderr);
    p->drawn = 0;
    pthread_mutex_unlock(&p->lock);
}

/* ------------------------------------------------------------------------ */
/* oocgemm multiply                                                          */

static void multiply_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm multiply A B -o C [OPTIONS]\n"
            "\n"
            "C = alpha*op(A)*op(B) + beta*C0 on matrix files, possibly larger than host\n"
            "memory (they are streamed, never held whole). op(A) is m x k, op(B) k x n,\n"
            "C0 and C m x n. All operands have one element type; C gets it too.\n"
            "\n"
            "Operands:\n"
            "  A, B                  .npy files (versions 1.0, 2.0, 3.0; float32, float64,\n"
            "                        complex64, complex128; little-endian; C or Fortran\n"
            "                        order), or raw little-endian data given as\n"
            "                        PATH:ROWSxCOLS[:DTYPE[:ORDER]], e.g. A.bin:1000x500:d:F\n"
            "                        (DTYPE s|d|c|z, ORDER C|F: the stored matrix,\n"
            "                        before op). A file without the NumPy magic and\n"
            "                        without that suffix is raw with the defaults below.\n"
            "  --rows R, --cols C    shape of raw operands given without a suffix\n"
            "  --dtype T             element type of raw operands whose suffix has none\n"
            "                        (s|d|c|z; default d)\n"
            "  --order C|F           storage order of raw operands whose suffix has none\n"
            "                        (default C)\n"
            "  -o, --output C        the result (required). Written to C.ooc-tmp, renamed\n"
            "                        onto C when complete and flushed: never half-written.\n"
            "  --out-format npy|raw  (default: npy when C ends in .npy, else raw)\n"
            "  --out-order C|F       storage order of C (default C; C0, and an operand\n"
            "                        with op C on complex data, must be stored in C's\n"
            "                        order: without --out-order C takes their order)\n"
            "\n"
            "Product:\n"
            "  --transa N|T|C        op(A): A, A^T or A^H (default N)\n"
            "  --transb N|T|C        op(B), likewise (default N)\n"
            "  --alpha X             real scalar, (X, 0) for complex types (default 1)\n"
            "  --c-in C0             add beta*C0 (C0 may be the output file itself)\n"
            "  --beta X              real scalar (default 1 with --c-in, else 0)\n"
            "\n"
            "Resuming:\n"
            "  --journal PATH        the resume journal (default C.ooc-journal). Every\n"
            "                        finished row block of C is flushed and recorded there\n"
            "                        with a checksum. It must be a file of its own (not an\n"
            "                        input, not the output); nothing but a journal is ever\n"
            "                        removed or overwritten at PATH.\n"
            "  --resume              continue the job that C.ooc-tmp and the journal\n"
            "                        record (after kill -9, a crash, a signal or a full\n"
            "                        disk): the result is byte-identical to an\n"
            "                        uninterrupted run. Give the same operands and options.\n"
            "                        A journal of another job, or damaged or edited, is\n"
            "                        refused (exit 6). A --resume run keeps its journal\n"
            "                        marked complete: the same command again says the job\n"
            "                        finished and does nothing (a requeued batch job).\n"
            "  On failure part-way the temporary file and the journal are kept for\n"
            "  --resume; any failure before the multiply starts leaves no file behind.\n"
            "  C must be absent or a regular file; another job writing the same C is\n"
            "  refused (exit 6). SIGTERM, SIGINT, SIGHUP and SIGUSR1 (Slurm's wall-time\n"
            "  warning) stop the multiply cleanly, resumable, with exit status 7.\n"
            "\n"
            "Check:\n"
            "  --verify              after the multiply, check C against OpenBLAS as\n"
            "                        'oocgemm verify' does (3 vectors, 16 rows); exit 1\n"
            "                        if it fails\n"
            "\n"
            "Library options (absent or 0: the library chooses):\n"
            "  --backend auto|cublas|custom|host\n"
            "                        (default auto: cublas when a GPU is present)\n"
            DEVICES_HELP
            "  --device-mem BYTES    device-memory budget\n"
            "  --host-mem BYTES      pinned staging budget (the files are staged through it)\n"
            "  --block-rows N, --ring N, --streams N, --staging-threads N, --tf32,\n"
            "  --tail T, --b-chunks Q, --trace FILE\n"
            "                        as for oocgemm run\n"
            "  BYTES: an integer with an optional binary suffix K, M, G or T.\n"
            "\n"
            "Output:\n"
            "  Progress on stderr: a bar with percent, blocks, GB/s, TFLOP/s and ETA on a\n"
            "  terminal; a plain line every 5%% or 10 s otherwise.\n"
            "  --no-progress         no progress\n"
            "  -q, --quiet           print nothing but errors (and no progress)\n"
            "  --json                print one JSON object on stdout instead of the summary\n"
            "                        (also with -q): command, files, shape, dtype, backend,\n"
            "                        seconds, tflops, bytes_read, bytes_written,\n"
            "                        host_staging_bytes, peak_rss_bytes, floor_s,\n"
            "                        floor_over_time, io_bound_s, bound_over_time, verify,\n"
            "                        devices (what each device did, as for oocgemm run),\n"
            "                        exit_status (and error when it failed)\n"
            "  The summary: time, TFLOP/s, bytes read and written and their rates, host\n"
            "  staging memory, peak RSS, backend and plan (one line per device when\n"
            "  several ran), and the floor of oocgemm run (measured after the multiply)\n"
            "  with floor/time.\n"
            "  --no-floor            do not measure or show the floor\n"
            "  --bw-h2d GB/s, --bw-d2h GB/s, --rate TFLOP/s\n"
            "                        use these figures for the floor instead of measuring\n"
            "  --measure-disk        before the multiply, measure the disk with the page\n"
            "                        cache bypassed (O_DIRECT): read up to 4 GiB of A,\n"
            "                        write and flush a 2 GiB scratch file beside the\n"
            "                        output, then both at once; the first two are used\n"
            "                        as the figures below, the third gives the shared-\n"
            "                        disk bound (bytes read + written) / (both at once)\n"
            "  --disk-read-bw GB/s, --disk-write-bw GB/s\n"
            "                        disk bandwidths measured separately: then\n"
            "                        io_bound = max(bytes read / read bw, bytes written /\n"
            "                        write bw) and bound = max(floor, io_bound) are shown\n"
            "                        with bound/time. GB = 1e9 bytes.\n"
            "  -h, --help            this help\n"
            "\n");
    print_exit_codes(f);
}

typedef struct {
    const char *a, *b, *out, *c_in, *journal;
    ooc_op_t ta, tb;
    double alpha, beta;
    int have_beta;
    int verify, resume, quiet, json, no_progress;
    lib_opts_t lib;
    raw_defaults_t raw;
    ooc_format_t out_format; /* AUTO: from the extension */
    ooc_layout_t out_layout;
    int have_out_layout;
    double disk_read_bw, disk_write_bw; /* GB/s; 0: not given */
    int measure_disk;                   /* measure them before the multiply */
    floor_opts_t floor;
} mul_opts_t;

/* Disk bandwidth with the page cache bypassed (O_DIRECT, 16 MiB requests). */
enum { DISK_REQ = 16 << 20 };

typedef struct {
    int fd, write;
    uint64_t limit, done;
    void *buf;
} disk_job_t;

static void *disk_run(void *arg)
{
    disk_job_t *j = arg;
    while (j->done < j->limit) {
        ssize_t got = j->write ? pwrite(j->fd, j->buf, DISK_REQ, (off_t)j->done)
                               : pread(j->fd, j->buf, DISK_REQ, (off_t)j->done);
        if (got <= 0) break;
        j->done += (uint64_t)got;
        if (got < DISK_REQ) break;
    }
    if (j->write && fdatasync(j->fd) != 0) j->done = 0;
    return NULL;
}

/* Read up to 4 GiB of `sample` (an input), write 2 GiB to a scratch file
 * beside `out`, each alone, then both at once (one thread each): GB/s, 0 on
 * failure; *both_gbs counts the bytes of both directions. */
static void measure_disk(const char *sample, const char *out, double *read_gbs, double *write_gbs, double *both_gbs)
{
    const uint64_t read_max = (uint64_t)4 << 30, write_total = (uint64_t)2 << 30;
    void *rbuf = NULL, *wbuf = NULL;
    char *scratch = NULL;
    *read_gbs = *write_gbs = *both_gbs = 0;
    if (posix_memalign(&rbuf, 4096, DISK_REQ) != 0 || posix_memalign(&wbuf, 4096, DISK_REQ) != 0 ||
        asprintf(&scratch, "%s.ooc-disktest", out) < 0) {
        free(rbuf);
        free(wbuf);
        return;
    }
    fill_random(OOC_R64, wbuf, DISK_REQ / 8, 1, 7);
    int rfd = open(sample, O_RDONLY | O_DIRECT), wfd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    if (rfd >= 0 && wfd >= 0) {
        disk_job_t r = {rfd, 0, read_max, 0, rbuf}, w = {wfd, 1, write_total, 0, wbuf};
        double t0 = now_seconds();
        disk_run(&r);
        double t1 = now_seconds();
        disk_run(&w);
        double t2 = now_seconds();
        if (r.done >= DISK_REQ) *read_gbs = (double)r.done / (t1 - t0) / 1e9;
        if (w.done == write_total) *write_gbs = (double)w.done / (t2 - t1) / 1e9;
        /* both at once, on the same amounts (the read from the start again) */
        disk_job_t r2 = {rfd, 0, r.done, 0, rbuf}, w2 = {wfd, 1, write_total, 0, wbuf};
        pthread_t th;
        double t3 = now_seconds();
        if (pthread_create(&th, NULL, disk_run, &r2) == 0) {
            disk_run(&w2);
            pthread_join(th, NULL);
            double dt = now_seconds() - t3;
            if (w2.done == write_total && r2.done == r.done) *both_gbs = (double)(r2.done + w2.done) / dt / 1e9;
        }
    }
    if (rfd >= 0) close(rfd);
    if (wfd >= 0) close(wfd);
    unlink(scratch);
    free(scratch);
    free(rbuf);
    free(wbuf);
}

static int multiply_parse(int argc, char **argv, mul_opts_t *o)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"transa", required_argument, NULL, OPT_TRANSA},
        {"transb", required_argument, NULL, OPT_TRANSB},
        {"alpha", required_argument, NULL, OPT_ALPHA},
        {"beta", required_argument, NULL, OPT_BETA},
        {"c-in", required_argument, NULL, OPT_C_IN},
        {"verify", no_argument, NULL, OPT_VERIFY},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"journal", required_argument, NULL, OPT_JOURNAL},
        LIB_LONG_OPTS,
        {"rows", required_argument, NULL, OPT_ROWS},
        {"cols", required_argument, NULL, OPT_COLS},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"order", required_argument, NULL, OPT_ORDER},
        {"out-format", required_argument, NULL, OPT_OUT_FORMAT},
        {"out-order", required_argument, NULL, OPT_OUT_ORDER},
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
    const char *cmd = "multiply";
    memset(o, 0, sizeof *o);
    o->ta = o->tb = OOC_OP_N;
    o->alpha = 1.0;
    o->lib.backend = OOC_BACKEND_AUTO;
    o->raw.dtype = OOC_R64;
    o->raw.layout = OOC_ROW_MAJOR;
    o->out_layout = OOC_ROW_MAJOR;

    opterr = 0;
    optind = 1;
    for (;;) {
        int longind = -1;
        int c = getopt_long(argc, argv, ":o:qh", opts, &longind);
        if (c == -1) break;
        char optname[64] = "";
        if (longind >= 0) snprintf(optname, sizeof optname, "--%s", opts[longind].name);
        int lib = lib_opt_parse(cmd, c, optname, optarg, &o->lib);
        if (lib == 0) lib = floor_opt_parse(cmd, c, optarg, &o->floor);
        if (lib < 0) return RC_USAGE;
        if (lib > 0) continue;
        switch (c) {
        case 'o': o->out = optarg; break;
        case OPT_TRANSA:
            if (parse_op(cmd, "--transa", optarg, &o->ta)) return RC_USAGE;
            break;
        case OPT_TRANSB:
            if (parse_op(cmd, "--transb", optarg, &o->tb)) return RC_USAGE;
            break;
        case OPT_ALPHA:
            if (parse_real(cmd, "--alpha", optarg, 0, &o->alpha)) return RC_USAGE;
            break;
        case OPT_BETA:
            if (parse_real(cmd, "--beta", optarg, 0, &o->beta)) return RC_USAGE;
            o->have_beta = 1;
            break;
        case OPT_C_IN: o->c_in = optarg; break;
        case OPT_VERIFY: o->verify = 1; break;
        case OPT_RESUME: o->resume = 1; break;
        case OPT_JOURNAL:
            if (*optarg == '\0') return usage_error(cmd, "--journal: empty path");
            o->journal = optarg;
            break;
        case OPT_ROWS:
            if (parse_int(cmd, "--rows", optarg, 1, INT64_MAX, &o->raw.rows)) return RC_USAGE;
            break;
        case OPT_COLS:
            if (parse_int(cmd, "--cols", optarg, 1, INT64_MAX, &o->raw.cols)) return RC_USAGE;
            break;
        case OPT_DTYPE:
            if (dtype_parse(optarg, &o->raw.dtype))
                return usage_error(cmd, "--dtype: '%s' is not s, d, c or z", optarg);
            break;
        case OPT_ORDER:
            if (order_parse(optarg, &o->raw.layout)) return usage_error(cmd, "--order: '%s' is not C or F", optarg);
            break;
        case OPT_OUT_FORMAT:
            if (strcasecmp(optarg, "npy") == 0) o->out_format = OOC_FORMAT_NPY;
            else if (strcasecmp(optarg, "raw") == 0) o->out_format = OOC_FORMAT_RAW;
            else return usage_error(cmd, "--out-format: '%s' is not npy or raw", optarg);
            break;
        case OPT_OUT_ORDER:
            if (order_parse(optarg, &o->out_layout)) return usage_error(cmd, "--out-order: '%s' is not C or F", optarg);
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
        case 'q': o->quiet = 1; break;
        case OPT_JSON: o->json = 1; break;
        case 'h': multiply_usage(stdout); return -1;
        default: return getopt_failure(cmd, c, argv, "oqh");
        }
    }
    if (argc - optind < 2) return usage_error(cmd, "two input files A and B are required");
    if (argc - optind > 2)
        return usage_error(cmd, "unexpected argument '%s' (the output is given with -o)", argv[optind + 2]);
    o->a = argv[optind];
    o->b = argv[optind + 1];
    if (o->out == NULL) return usage_error(cmd, "-o C is required (the output file)");
    if (*o->out == '\0') return usage_error(cmd, "-o: empty file name");
    if ((o->raw.rows > 0) != (o->raw.cols > 0)) return usage_error(cmd, "--rows and --cols go together");
    if (o->c_in && !o->have_beta) o->beta = 1.0;
    if (o->beta != 0.0 && o->c_in == NULL)
        return usage_error(cmd, "--beta %g needs --c-in C0 (the matrix beta multiplies)", o->beta);
    return RC_OK;
}

static void json_verify(FILE *f, const ooc_verify_result_t *v, int have)
{
    if (!have) {
        fprintf(f, ",\"verify\":null");
        return;
    }
    fprintf(f, ",\"verify\":{\"exact\":%s,\"vectors\":%d,\"rows_checked\":%lld", v->exact ? "true" : "false",
            v->vectors, (long long)v->rows_checked);
    json_num(f, "max_rel_err", v->max_rel_err, 1);
    json_num(f, "tolerance", v->tolerance, 1);
    fprintf(f, ",\"passed\":%s,\"bytes_read\":%" PRIu64 "}", v->passed ? "true" : "false", v->bytes_read);
}

/* "verify: <mode>: max relative error E (tolerance T): PASS|FAIL" */
static void print_verify(FILE *f, const ooc_verify_result_t *v, int64_t m, int64_t n)
{
    if (v->exact)
        fprintf(f, "verify: exact (all %lld x %lld elements against OpenBLAS)", (long long)m, (long long)n);
    else
        fprintf(f, "verify: Freivalds with %d random vector%s + %lld row%s recomputed exactly", v->vectors,
                v->vectors == 1 ? "" : "s", (long long)v->rows_checked, v->rows_checked == 1 ? "" : "s");
    fprintf(f, ": max relative error %.3g (tolerance %.3g): %s\n", v->max_rel_err, v->tolerance,
            v->passed ? "PASS" : "FAIL");
}

/* ------------------------------------------------------------------------ */
/* Stopping cleanly on a signal                                              */

/* SIGTERM, SIGINT, SIGHUP and SIGUSR1 (Slurm's wall-time warning) ask the
 * multiply to stop (ooc_cancel, async-signal-safe): the blocks in flight are
 * finished or abandoned, the journal stays durable, and the command exits with
 * RC_INTERRUPTED. A second SIGINT (Ctrl-C twice) kills at once. */
static ooc_handle_t *volatile stop_handle;
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    if (stop_signal && sig == SIGINT) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    if (!stop_signal) stop_signal = sig;
    ooc_handle_t *h = stop_handle;
    if (h) ooc_cancel(h);
}

static void stop_signals_install(ooc_handle_t *h)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
    stop_handle = h;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

static void stop_signals_remove(void)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
    stop_handle = NULL;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    }
    return "a signal";
}

/* The journal must be a file of its own: not an operand, not the output.
 * RC_OK, or RC_USAGE with a message (nothing is created before this). */
static int journal_apart(const char *cmd, const char *journal, const char *out, const operand_t *const *ops, int n)
{
    struct stat j, o;
    if (stat(journal, &j) != 0) return RC_OK;
    for (int i = 0; i < n; i++)
        if (ops[i] && ops[i]->path && stat(ops[i]->path, &o) == 0 && o.st_dev == j.st_dev && o.st_ino == j.st_ino)
            return usage_error(cmd, "--journal %s is the input %s (%s): the journal must be a file of its own",
                               journal, ops[i]->name, ops[i]->path);
    if (stat(out, &o) == 0 && o.st_dev == j.st_dev && o.st_ino == j.st_ino)
        return usage_error(cmd, "--journal %s is the output %s: the journal must be a file of its own", journal, out);
    return RC_OK;
}

int cmd_multiply(int argc, char **argv)
{
    mul_opts_t o;
    int rc = multiply_parse(argc, argv, &o);
    if (rc < 0) return RC_OK; /* --help */
    if (rc != RC_OK) return rc;
    const char *cmd = "multiply";

    operand_t A, B, C0, Cv;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    memset(&C0, 0, sizeof C0);
    memset(&Cv, 0, sizeof Cv);
    ooc_handle_t *h = NULL;
    ooc_file_t *C = NULL;
    char *tmp_path = NULL, *journal_path = NULL;
    progress_t prog;
    memset(&prog, 0, sizeof prog);
    pthread_mutex_init(&prog.lock, NULL);
    ooc_stats_t stats;
    memset(&stats, 0, sizeof stats);
    ooc_verify_result_t vr;
    memset(&vr, 0, sizeof vr);
    int verified = 0, multiplied = 0, already = 0, interrupted = 0;
    int64_t m = 0, n = 0, k = 0;
    ooc_dtype_t t = OOC_R64;
    double secs = 0;
    ooc_status_t st;

    if ((rc = operand_parse(cmd, "A", o.a, &o.raw, &A)) != RC_OK ||
        (rc = operand_parse(cmd, "B", o.b, &o.raw, &B)) != RC_OK ||
        (o.c_in && (rc = operand_parse(cmd, "C0", o.c_in, &o.raw, &C0)) != RC_OK))
        goto out;
    if (asprintf(&tmp_path, "%s.ooc-tmp", o.out) < 0) tmp_path = NULL;
    if (o.journal) journal_path = strdup(o.journal);
    else if (asprintf(&journal_path, "%s.ooc-journal", o.out) < 0) journal_path = NULL;
    if (!tmp_path || !journal_path) {
        rc = fail(RC_RUNTIME, "out of host memory");
        goto out;
    }

    if ((st = ooc_create(&h)) != OOC_SUCCESS) {
        rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
        goto out;
    }
    if ((st = lib_opts_apply(h, &o.lib)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OTHER, NULL, NULL, "options");
        goto out;
    }
    stop_signals_install(h);

    /* every input opened and checked before the output exists */
    if ((rc = operand_open(h, &A, &o.raw)) != RC_OK || (rc = operand_open(h, &B, &o.raw)) != RC_OK ||
        (o.c_in && (rc = operand_open(h, &C0, &o.raw)) != RC_OK))
        goto out;
    if ((rc = check_operands(&A, o.ta, &B, o.tb, o.c_in ? &C0 : NULL, NULL, &m, &n, &k)) != RC_OK) goto out;
    t = A.spec.dtype;
    if (!dtype_complex(t)) { /* A^H = A^T for real data */
        if (o.ta == OOC_OP_C) o.ta = OOC_OP_T;
        if (o.tb == OOC_OP_C) o.tb = OOC_OP_T;
    }
    {
        /* ooc_gemm_files needs C0, and an operand whose op is C, stored in
         * C's order: without --out-order, C takes their order */
        const struct {
            const operand_t *op;
            const char *why;
        } need[3] = {
            {o.c_in ? &C0 : NULL, "--c-in"},
            {o.ta == OOC_OP_C ? &A : NULL, "--transa C"},
            {o.tb == OOC_OP_C ? &B : NULL, "--transb C"},
        };
        const char *chosen_by = "--out-order";
        for (int i = 0; i < 3; i++) {
            if (need[i].op == NULL) continue;
            if (!o.have_out_layout) {
                o.out_layout = need[i].op->spec.layout;
                o.have_out_layout = 1;
                chosen_by = need[i].why;
            } else if (need[i].op->spec.layout != o.out_layout) {
                rc = fail(RC_SHAPE,
                          "%s needs %s (%s) stored in the output's order, but it is in %s order and %s makes the "
                          "output %s order",
                          need[i].why, need[i].op->name, need[i].op->path, order_name(need[i].op->spec.layout),
                          chosen_by, order_name(o.out_layout));
                goto out;
            }
        }
    }
    ooc_file_spec_t cspec = {o.out_format != OOC_FORMAT_AUTO ? o.out_format
                                                             : has_npy_ext(o.out) ? OOC_FORMAT_NPY : OOC_FORMAT_RAW,
                             m, n, t, o.out_layout};

    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "output (%s)", o.out);
    /* Starting over: a journal left by an earlier run is obsolete, and must
     * not outlive the temporary file that ooc_file_create() now empties (a
     * failure before the library rewrites it would leave it describing
     * blocks that are gone). */
    double disk_both = 0;
    if (o.measure_disk) {
        double rd, wr;
        measure_disk(A.path, o.out, &rd, &wr, &disk_both);
        if (o.disk_read_bw <= 0) o.disk_read_bw = rd;
        if (o.disk_write_bw <= 0) o.disk_write_bw = wr;
        if (!o.quiet && !o.json)
            printf("disk (O_DIRECT, measured now): read %.3g GB/s, write %.3g GB/s, both at once %.3g GB/s in "
                   "all%s\n", rd, wr, disk_both, rd > 0 && wr > 0 ? "" : " (0: could not measure)");
    }
    {
        const operand_t *ops[3] = {&A, &B, o.c_in ? &C0 : NULL};
        if ((rc = journal_apart(cmd, journal_path, o.out, ops, 3)) != RC_OK) goto out;
    }
    scalar_t alpha = scalar_of(o.alpha), beta = scalar_of(o.beta);
    ooc_files_opts_t fo = {o.journal, o.resume, progress_cb, &prog};
    if (o.resume) {
        /* a requeued batch job whose work is done: nothing to do */
        st = ooc_gemm_files_finished(h, o.ta, o.tb, scalar_ptr(&alpha, t), A.file, B.file, scalar_ptr(&beta, t),
                                     o.c_in ? C0.file : NULL, o.out, &cspec, &fo, &already);
        if (st != OOC_SUCCESS) {
            rc = lib_fail(h, st, AT_OUTPUT, tmp_path, journal_path, "resume");
            goto out;
        }
    }
    if (already) {
        multiplied = 1;
        if (!o.quiet && !o.json)
            printf("%s: this job finished already: the journal %s records it complete and %s is its output, "
                   "unchanged: nothing to do\n", o.out, journal_path, o.out);
        goto verify;
    }
    /* The library removes a stale journal only when it is one (never an
     * input named by mistake) and keeps the temporary file to itself. */
    if ((st = ooc_file_create(h, o.out, &cspec, o.resume ? OOC_FILE_RESUME : 0, &C)) != OOC_SUCCESS) {
        C = NULL;
        rc = lib_fail(h, st, AT_OUTPUT, tmp_path, journal_path, what);
        goto out;
    }

    prog.mode = o.quiet || o.no_progress ? PROGRESS_NONE : isatty(STDERR_FILENO) ? PROGRESS_TTY : PROGRESS_LINES;
    prog.flops = (dtype_complex(t) ? 8.0 : 2.0) * (double)m * (double)n * (double)k;
    prog.next_pct = 5;
    prog.t0 = prog.last_print = now_seconds();
    st = ooc_gemm_files(h, o.ta, o.tb, scalar_ptr(&alpha, t), A.file, B.file, scalar_ptr(&beta, t),
                        o.c_in ? C0.file : NULL, C, &fo);
    secs = now_seconds() - prog.t0;
    progress_end(&prog);
    if (st != OOC_SUCCESS) {
        interrupted = st == OOC_ERR_CANCELLED;
        if (interrupted)
            rc = fail(RC_INTERRUPTED, "interrupted by %s after %lld of %lld row blocks: stopped cleanly, resumable",
                      signal_name(stop_signal), (long long)prog.done, (long long)prog.total);
        else
            rc = lib_fail(h, st, AT_RUN, tmp_path, journal_path, "multiply");
        /* keep what a later --resume can use: the journal this run keeps, or
         * the files a refused resume found (they may belong to another job);
         * a fresh run refused at its journal has nothing worth keeping */
        int refused = st == OOC_ERR_JOURNAL || st == OOC_ERR_BUSY;
        int keep = refused ? o.resume : is_journal(journal_path);
        ooc_file_close(C, !keep);
        C = NULL;
        if (refused && o.resume)
            fprintf(stderr, "%s: %s and %s are left as they were: check the command, or run it without --resume to "
                    "start over\n", progname, tmp_path, journal_path);
        else if (keep)
            fprintf(stderr, "%s: the finished row blocks are kept in %s (journal %s): run the same command with "
                    "--resume to continue\n", progname, tmp_path, journal_path);
        goto out;
    }
    multiplied = 1;
    if ((st = ooc_file_commit(h, C)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OUTPUT, tmp_path, journal_path, what);
        ooc_file_close(C, 0); /* the result is complete: keep it for the user */
        C = NULL;
        fprintf(stderr, "%s: the complete result is left in %s\n", progname, tmp_path);
        goto out;
    }
    ooc_file_close(C, 0);
    C = NULL;
    /* The journal now says "complete". A run with --resume (a batch script
     * that may be requeued) keeps it, so that running it again finds the job
     * finished; a plain run leaves nothing beside its output. */
    if (!o.resume && is_journal(journal_path)) unlink(journal_path);
    if ((st = ooc_get_stats(h, &stats)) != OOC_SUCCESS) memset(&stats, 0, sizeof stats);
    if (stats.trace_status != OOC_SUCCESS)
        fprintf(stderr, "%s: warning: the trace was not written (%s): the result %s is complete\n", progname,
                stats.trace_error, o.out);

verify:
    if (o.verify) {
        /* a signal since the multiply left the handle cancelled: the check stops */
        /* C read back from its target path, as a user would */
        Cv.name = "C";
        Cv.arg = o.out;
        if ((Cv.path = strdup(o.out)) == NULL) {
            rc = fail(RC_RUNTIME, "out of host memory");
            goto out;
        }
        Cv.shaped = 1;
        Cv.spec = cspec;
        if (cspec.format == OOC_FORMAT_NPY) Cv.spec.format = OOC_FORMAT_AUTO;
        if ((rc = operand_open(h, &Cv, &o.raw)) != RC_OK) goto out;
        st = ooc_verify_files(h, o.ta, o.tb, scalar_ptr(&alpha, t), A.file, B.file, scalar_ptr(&beta, t),
                              o.c_in ? C0.file : NULL, Cv.file, 3, 16, &vr);
        if (st == OOC_ERR_CANCELLED) {
            interrupted = 1;
            rc = fail(RC_INTERRUPTED, "interrupted by %s: %s is complete and committed, but not verified",
                      signal_name(stop_signal), o.out);
            goto out;
        }
        if (st != OOC_SUCCESS) {
            rc = lib_fail(h, st, AT_INPUT, NULL, NULL, "verify");
            goto out;
        }
        verified = 1;
    }
    rc = verified && !vr.passed ? RC_CHECK_FAILED : RC_OK;

    /* the summary */
    {
        floor_t fl = {.bw_h2d = o.floor.bw_h2d, .bw_d2h = o.floor.bw_d2h, .rate = o.floor.rate};
        int report = (o.json || !o.quiet) && !already && !stop_signal;
        if (report && !o.floor.no_floor) {
            floor_measure(h, t, m, n, k, o.quiet || o.json, &fl);
            floor_compute(&fl, t, m, n, k, o.c_in != NULL && o.beta != 0.0);
        }
        double br = (double)prog.bytes_read, bw = (double)prog.bytes_written;
        /* a resumed run did only the blocks the journal did not have */
        int64_t resumed = stats.blocks_resumed;
        int64_t total_blocks = stats.blocks * stats.panels;
        double run_flops = prog.flops;
        if (resumed > 0 && total_blocks > 0)
            run_flops = prog.flops * (double)(total_blocks - resumed) / (double)total_blocks;
        double tflops = secs > 0 ? run_flops / secs / 1e12 : INFINITY;
        int have_io = o.disk_read_bw > 0 || o.disk_write_bw > 0;
        double io_bound = 0;
        if (o.disk_read_bw > 0) io_bound = br / (o.disk_read_bw * 1e9);
        if (o.disk_write_bw > 0 && bw / (o.disk_write_bw * 1e9) > io_bound) io_bound = bw / (o.disk_write_bw * 1e9);
        int have_bound = fl.have || have_io;
        double bound = fl.have ? fl.floor_s : 0;
        if (have_io && io_bound > bound) bound = io_bound;
        uint64_t rss = peak_rss_bytes();
        const char *backend = ooc_backend_name(h);
        if (o.json) {
            printf("{\"command\":\"multiply\",\"version\":\"%s\",\"files\":{\"a\":", PACKAGE_VERSION);
            json_str(stdout, A.path);
            printf(",\"b\":");
            json_str(stdout, B.path);
            printf(",\"c_in\":");
            json_str(stdout, o.c_in ? C0.path : NULL);
            printf(",\"c\":");
            json_str(stdout, o.out);
            printf("},\"shape\":{\"m\":%lld,\"n\":%lld,\"k\":%lld},\"dtype\":\"%s\",\"transa\":\"%c\","
                   "\"transb\":\"%c\",\"alpha\":%.17g,\"beta\":%.17g,\"out_order\":\"%s\",\"backend\":\"%s\","
                   "\"resumed\":%s,\"blocks_before_resume\":%lld,\"already_finished\":%s",
                   (long long)m, (long long)n, (long long)k, dtype_name(t), op_letter(o.ta), op_letter(o.tb), o.alpha,
                   o.beta, order_name(o.out_layout), backend, resumed > 0 ? "true" : "false", (long long)resumed,
                   already ? "true" : "false");
            json_num(stdout, "seconds", secs, 1);
            json_num(stdout, "tflops", tflops, 1);
            printf(",\"bytes_read\":%" PRIu64 ",\"bytes_written\":%" PRIu64, prog.bytes_read, prog.bytes_written);
            json_num(stdout, "read_gbps", secs > 0 ? br / secs / 1e9 : NAN, 1);
            json_num(stdout, "write_gbps", secs > 0 ? bw / secs / 1e9 : NAN, 1);
            printf(",\"host_staging_bytes\":%" PRIu64 ",\"peak_rss_bytes\":%" PRIu64, stats.host_bytes, rss);
            json_num(stdout, "bw_h2d_gbps", fl.bw_h2d, fl.have);
            json_num(stdout, "bw_d2h_gbps", fl.bw_d2h, fl.have);
            json_num(stdout, "incore_tflops", fl.rate, fl.have);
            json_num(stdout, "floor_s", fl.floor_s, fl.have);
            json_num(stdout, "floor_over_time", secs > 0 ? fl.floor_s / secs : INFINITY, fl.have);
            json_num(stdout, "io_bound_s", io_bound, have_io);
            json_num(stdout, "disk_both_gbps", disk_both, disk_both > 0);
            json_num(stdout, "shared_disk_bound_s", (br + bw) / (disk_both * 1e9), disk_both > 0);
            json_num(stdout, "bound_s", bound, have_bound);
            json_num(stdout, "bound_over_time", secs > 0 ? bound / secs : INFINITY, have_bound);
            printf(",\"plan\":{\"block_rows\":%lld,\"panel_cols\":%lld,\"panel_depth\":%lld,\"blocks\":%lld,"
                   "\"panels\":%lld,\"ring_depth\":%d,\"streams\":%d,\"device_bytes\":%" PRIu64 "}",
                   (long long)stats.block_rows, (long long)stats.panel_cols, (long long)stats.panel_depth,
                   (long long)stats.blocks, (long long)stats.panels, (int)stats.ring_depth, (int)stats.streams,
                   stats.device_bytes);
            json_devices(stdout, &stats);
            json_verify(stdout, &vr, verified);
            printf(",\"exit_status\":%d}\n", rc);
        } else if (!o.quiet && already) {
            if (verified) print_verify(stdout, &vr, m, n);
        } else if (!o.quiet) {
            char b1[32], b2[32];
            printf("oocgemm %s: %s = %s%s x %s%s%s%s: m=%lld n=%lld k=%lld %s, alpha=%g beta=%g\n", PACKAGE_VERSION,
                   o.out, o.ta == OOC_OP_N ? "" : o.ta == OOC_OP_T ? "T:" : "H:", A.path,
                   o.tb == OOC_OP_N ? "" : o.tb == OOC_OP_T ? "T:" : "H:", B.path, o.c_in ? " + beta x " : "",
                   o.c_in ? C0.path : "", (long long)m, (long long)n, (long long)k, dtype_name(t), o.alpha, o.beta);
            char d1[128], d2[128], d3[128];
            printf("files: A %s; B %s", describe_spec(&A.spec, d1, sizeof d1), describe_spec(&B.spec, d2, sizeof d2));
            if (o.c_in) printf("; C0 %s", describe_spec(&C0.spec, d3, sizeof d3));
            printf("; C %s\n", describe_spec(&cspec, d3, sizeof d3));
            print_plan(stdout, backend, &stats);
            printf("time: %.3g s   rate: %s", secs, format_rate(tflops * 1e12, b1, sizeof b1));
            if (resumed > 0)
                printf("   (resumed after %lld of %lld blocks)", (long long)resumed, (long long)total_blocks);
            printf("\n");
            printf("disk: read %s (%.3g GB/s), written %s (%.3g GB/s)\n", human_bytes(prog.bytes_read, b1, sizeof b1),
                   secs > 0 ? br / secs / 1e9 : 0.0, human_bytes(prog.bytes_written, b2, sizeof b2),
                   secs > 0 ? bw / secs / 1e9 : 0.0);
            printf("memory: host staging %s, peak RSS %s\n", human_bytes(stats.host_bytes, b1, sizeof b1),
                   human_bytes(rss, b2, sizeof b2));
            if (o.floor.no_floor) printf("floor: not measured (--no-floor)\n");
            else floor_print(stdout, &fl, t, secs);
            if (have_io)
                printf("io bound: %.3g s (read %.3g GB at %s GB/s, written %.3g GB at %s GB/s)\n", io_bound, br / 1e9,
                       o.disk_read_bw > 0 ? (snprintf(b1, sizeof b1, "%.3g", o.disk_read_bw), b1) : "?", bw / 1e9,
                       o.disk_write_bw > 0 ? (snprintf(b2, sizeof b2, "%.3g", o.disk_write_bw), b2) : "?");
            else
                printf("io bound: n/a (give --disk-read-bw and --disk-write-bw)\n");
            if (have_bound)
                printf("bound: max(floor, io bound) = %.3g s  bound/time: %.2f\n", bound,
                       secs > 0 ? bound / secs : INFINITY);
            if (disk_both > 0)
                printf("shared-disk bound: (read + written) / both-at-once bandwidth = %.3g s  ratio to time: %.2f\n",
                       (br + bw) / (disk_both * 1e9), secs > 0 ? (br + bw) / (disk_both * 1e9) / secs : INFINITY);
            if (verified) print_verify(stdout, &vr, m, n);
        }
        if (verified && !vr.passed && (o.quiet || o.json))
            fprintf(stderr, "%s: verification failed: max relative error %.3g exceeds the tolerance %.3g\n", progname,
                    vr.max_rel_err, vr.tolerance);
    }

out:
    stop_signals_remove();
    if (rc != RC_OK && rc != RC_CHECK_FAILED && o.json) {
        printf("{\"command\":\"multiply\",\"version\":\"%s\",\"files\":{\"a\":", PACKAGE_VERSION);
        json_str(stdout, o.a);
        printf(",\"b\":");
        json_str(stdout, o.b);
        printf(",\"c_in\":");
        json_str(stdout, o.c_in);
        printf(",\"c\":");
        json_str(stdout, o.out);
        printf("},\"multiplied\":%s,\"interrupted\":%s,\"resumable\":%s,\"signal\":", multiplied ? "true" : "false",
               interrupted ? "true" : "false", !multiplied && is_journal(journal_path) ? "true" : "false");
        json_str(stdout, stop_signal ? signal_name(stop_signal) : NULL);
        printf(",\"error\":");
        json_str(stdout, fail_msg);
        printf(",\"exit_status\":%d}\n", rc);
    }
    if (C) ooc_file_close(C, 1);
    operand_free(&Cv);
    operand_free(&C0);
    operand_free(&B);
    operand_free(&A);
    pthread_mutex_destroy(&prog.lock);
    free(journal_path);
    free(tmp_path);
    ooc_destroy(h);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* oocgemm verify                                                            */

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

/* ------------------------------------------------------------------------ */
/* oocgemm info                                                              */

static void info_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm info [OPTIONS]\n"
            "\n"
            "Print the library version, whether CUDA support is compiled in, and each\n"
            "GPU: name, compute capability, multiprocessors, memory (total and free),\n"
            "copy engines, PCI bus id, PCIe link (generation and width), and the\n"
            "pinned host-to-device and device-to-host bandwidth measured now (best of\n"
            "three copies of BYTES each way). Without a GPU it says why, and that the\n"
            "host backend is used; that is not an error.\n"
            "\n"
            "Options:\n"
            "  --bytes BYTES         bytes copied each way for the bandwidth (default 1G)\n"
            "  --no-measure          do not measure the bandwidth\n"
            "  --json                print one JSON object\n"
            "  -h, --help            this help\n"
            "\n");
    print_exit_codes(f);
}

int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {
        {"bytes", required_argument, NULL, OPT_BYTES}, {"no-measure", no_argument, NULL, OPT_NO_MEASURE},
        {"json", no_argument, NULL, OPT_JSON},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "info";
    int64_t bytes = (int64_t)1 << 30;
    int json = 0, measure = 1;
    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, ":h", opts, NULL);
        if (c == -1) break;
        switch (c) {
        case OPT_BYTES:
            if (parse_bytes(cmd, "--bytes", optarg, &bytes)) return RC_USAGE;
            if (bytes <= 0) return usage_error(cmd, "--bytes: must be positive");
            break;
        case OPT_NO_MEASURE: measure = 0; break;
        case OPT_JSON: json = 1; break;
        case 'h': info_usage(stdout); return RC_OK;
        default: return getopt_failure(cmd, c, argv, "h");
        }
    }
    if (optind < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind]);

    ooc_handle_t *h = NULL, *probe = NULL;
    int rc = RC_OK, count = 0, cuda = 1;
    char reason[1024] = "";
    ooc_status_t st = ooc_create(&h);
    if (st == OOC_SUCCESS) st = ooc_create(&probe);
    if (st != OOC_SUCCESS) {
        rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
        goto out;
    }
    if ((st = ooc_device_count(h, &count)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OTHER, NULL, NULL, "ooc_device_count");
        goto out;
    }
    if (count == 0) {
        /* compiled in? a CUDA-less library refuses the cublas backend */
        ooc_device_info_t di;
        st = ooc_set(probe, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS);
        if (st == OOC_SUCCESS) st = ooc_device_info(probe, 0, &di);
        cuda = st != OOC_ERR_BACKEND_UNAVAILABLE;
        const char *d = ooc_last_error(probe);
        snprintf(reason, sizeof reason, "%s", d && *d ? d : cuda ? "no GPU found" : "built without CUDA");
    }
    if (json)
        printf("{\"command\":\"info\",\"version\":\"%s\",\"tool_version\":\"%s\",\"cuda_compiled\":%s,"
               "\"device_count\":%d,\"devices\":[",
               ooc_version_string(), PACKAGE_VERSION, cuda ? "true" : "false", count);
    else
        printf("libooc_gemm %s (oocgemm %s); CUDA support: %s\n", ooc_version_string(), PACKAGE_VERSION,
               cuda ? "compiled in" : "not compiled in");
    for (int i = 0; i < count; i++) {
        ooc_device_info_t di;
        memset(&di, 0, sizeof di);
        st = ooc_device_info(h, i, &di);
        double h2d = 0, d2h = 0;
        int have_bw = 0;
        char bw_err[1024] = "";
        if (st == OOC_SUCCESS && measure) {
            ooc_handle_t *hd = NULL;
            ooc_status_t s2 = ooc_create(&hd);
            if (s2 == OOC_SUCCESS) s2 = ooc_set(hd, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS);
            if (s2 == OOC_SUCCESS) s2 = ooc_set(hd, OOC_PARAM_DEVICE, i);
            if (s2 == OOC_SUCCESS) s2 = ooc_measure_bandwidth(hd, (size_t)bytes, &h2d, &d2h);
            if (s2 == OOC_SUCCESS) have_bw = 1;
            else snprintf(bw_err, sizeof bw_err, "%s: %s", ooc_status_string(s2), hd ? ooc_last_error(hd) : "");
            ooc_destroy(hd);
        }
        if (json) {
            printf("%s{\"index\":%d", i ? "," : "", i);
            if (st != OOC_SUCCESS) {
                printf(",\"error\":");
                json_str(stdout, ooc_last_error(h));
                printf("}");
                continue;
            }
            printf(",\"name\":");
            json_str(stdout, di.name);
            printf(",\"compute_capability\":\"%d.%d\",\"multiprocessors\":%d,\"memory_total\":%" PRIu64
                   ",\"memory_free\":%" PRIu64 ",\"copy_engines\":%d,\"pci_bus_id\":",
                   di.compute_major, di.compute_minor, di.multiprocessors, di.memory_total, di.memory_free,
                   di.copy_engines);
            json_str(stdout, di.pci_bus_id);
            printf(",\"pcie_gen\":%d,\"pcie_width\":%d,\"bandwidth_bytes\":%lld", di.pcie_gen, di.pcie_width,
                   (long long)bytes);
            json_num(stdout, "h2d_gbps", h2d / 1e9, have_bw);
            json_num(stdout, "d2h_gbps", d2h / 1e9, have_bw);
            printf("}");
            continue;
        }
        if (st != OOC_SUCCESS) {
            printf("GPU %d: cannot describe it: %s: %s\n", i, ooc_status_string(st), ooc_last_error(h));
            continue;
        }
        char b1[32], b2[32];
        printf("GPU %d: %s\n", i, di.name);
        printf("  compute capability %d.%d, %d multiprocessors\n", di.compute_major, di.compute_minor,
               di.multiprocessors);
        printf("  memory: %s total, %s free\n", human_bytes(di.memory_total, b1, sizeof b1),
               human_bytes(di.memory_free, b2, sizeof b2));
        printf("  copy engines: %d%s\n", di.copy_engines,
               di.copy_engines >= 2 ? " (copies both ways at once)" : " (one copy at a time)");
        if (di.pcie_gen > 0)
            printf("  PCI bus id %s, PCIe Gen%d x%d\n", di.pci_bus_id, di.pcie_gen, di.pcie_width);
        else
            printf("  PCI bus id %s, PCIe link unknown\n", di.pci_bus_id);
        if (have_bw)
            printf("  pinned bandwidth (%s each way): H2D %.1f GB/s, D2H %.1f GB/s\n",
                   human_bytes((uint64_t)bytes, b1, sizeof b1), h2d / 1e9, d2h / 1e9);
        else if (measure)
            printf("  pinned bandwidth: not measured: %s\n", bw_err);
    }
    if (json) {
        printf("],\"no_device_reason\":");
        json_str(stdout, count == 0 ? reason : NULL);
        printf(",\"backend\":\"%s\",\"exit_status\":0}\n", count > 0 ? "cublas" : "host");
    } else if (count == 0) {
        printf("no CUDA device (%s); the host backend is used\n", reason);
    }

out:
    ooc_destroy(probe);
    ooc_destroy(h);
    return rc;
}
