/* SPDX-License-Identifier: MIT */
/*
 * cli_json.c: the one JSON writer of --json, and the objects several
 * subcommands share, so that every subcommand prints the same schema
 * (documented in the man page, docs/oocgemm.h2m): an object opened with
 * command, version and library_version and closed with exit_status and
 * error; shapes as "shape": {"m", "n", "k"}; matrix files as {"path",
 * "format", "rows", "cols", "dtype", "layout"}; "plan", "stats", "devices",
 * "floor" and "check" objects alike wherever they appear. Strings are always
 * valid UTF-8: a byte that is not part of a valid UTF-8 sequence (a file name
 * in another encoding) is written as U+FFFD, the replacement character.
 * It writes to the FILE it is given and nothing else.
 */
#include "config.h"

#include "cli.h"

/* Set when a command has printed its JSON object (main prints one for a
 * failure that printed none). */
int json_printed;

/* With --json, help goes into a buffer (help_out()), which main then
 * prints as the "help" of the one JSON object (json_help_print). */
int json_help_wanted;
static char *help_buf;
static size_t help_len;
static FILE *help_mem;

FILE *help_out(void)
{
    if (!json_help_wanted) return stdout;
    if (help_mem == NULL) help_mem = open_memstream(&help_buf, &help_len);
    return help_mem ? help_mem : stdout;
}

void json_help_print(const char *command, int rc)
{
    if (help_mem == NULL) return;
    fclose(help_mem);
    help_mem = NULL;
    json_t js;
    json_open(&js, stdout, command);
    json_string(&js, "help", help_buf);
    json_close(&js, rc);
    free(help_buf);
    help_buf = NULL;
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0 when the byte
 * at p does not start one: overlong forms, surrogates and code points above
 * U+10FFFF are invalid (RFC 3629). */
static int utf8_valid(const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f))) return 0; /* overlong, surrogate */
    if (n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))) return 0; /* overlong, > U+10FFFF */
    return n;
}

void json_str(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_valid(p);
        if (n == 0) { /* not UTF-8: the replacement character, and on */
            fputs("\\ufffd", f);
            p++;
            continue;
        }
        if (n > 1) {
            fwrite(p, 1, (size_t)n, f);
            p += n;
            continue;
        }
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
        p++;
    }
    fputc('"', f);
}

/* ------------------------------------------------------------------------ */
/* The writer: keys, values and nesting, the commas placed for the caller    */

static void json_sep(json_t *j, const char *key)
{
    if (j->count[j->depth]++) fputc(',', j->f);
    if (key) {
        json_str(j->f, key);
        fputc(':', j->f);
    }
}

void json_open(json_t *j, FILE *f, const char *command)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    fputc('{', f);
    json_string(j, "command", command);
    json_string(j, "version", PACKAGE_VERSION);
    json_string(j, "library_version", ooc_version_string());
}

void json_close(json_t *j, int exit_status)
{
    while (j->depth > 0) { /* anything left open (a failure part-way) */
        fputc(j->array[j->depth] ? ']' : '}', j->f);
        j->depth--;
    }
    json_int(j, "exit_status", exit_status);
    json_string(j, "error", exit_status == RC_OK ? NULL : fail_msg[0] ? fail_msg : exit_status_meaning(exit_status));
    fputs("}\n", j->f);
    fflush(j->f);
    json_printed = 1;
}

static void json_nest(json_t *j, const char *key, int array)
{
    json_sep(j, key);
    fputc(array ? '[' : '{', j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
    j->count[j->depth] = 0;
    j->array[j->depth] = array;
}

void json_object(json_t *j, const char *key) { json_nest(j, key, 0); }
void json_array(json_t *j, const char *key) { json_nest(j, key, 1); }

void json_end(json_t *j)
{
    fputc(j->array[j->depth] ? ']' : '}', j->f);
    if (j->depth > 0) j->depth--;
}

void json_string(json_t *j, const char *key, const char *s)
{
    json_sep(j, key);
    json_str(j->f, s);
}

void json_int(json_t *j, const char *key, int64_t v)
{
    json_sep(j, key);
    fprintf(j->f, "%" PRId64, v);
}

void json_uint(json_t *j, const char *key, uint64_t v)
{
    json_sep(j, key);
    fprintf(j->f, "%" PRIu64, v);
}

void json_real(json_t *j, const char *key, double v, int available)
{
    json_sep(j, key);
    if (available && isfinite(v)) fprintf(j->f, "%.9g", v);
    else fputs("null", j->f);
}

void json_exact(json_t *j, const char *key, double v)
{
    json_sep(j, key);
    if (isfinite(v)) fprintf(j->f, "%.17g", v);
    else fputs("null", j->f);
}

void json_bool(json_t *j, const char *key, int v)
{
    json_sep(j, key);
    fputs(v ? "true" : "false", j->f);
}

void json_null(json_t *j, const char *key)
{
    json_sep(j, key);
    fputs("null", j->f);
}

/* ------------------------------------------------------------------------ */
/* The shared objects                                                        */

void json_shape(json_t *j, const char *key, int64_t m, int64_t n, int64_t k)
{
    json_object(j, key);
    json_int(j, "m", m);
    json_int(j, "n", n);
    json_int(j, "k", k);
    json_end(j);
}

void json_problem(json_t *j, const ooc_dtype_t *t, ooc_op_t ta, ooc_op_t tb, double alpha, double beta)
{
    char a[2] = {op_letter(ta), 0}, b[2] = {op_letter(tb), 0};
    json_string(j, "dtype", t ? dtype_name(*t) : NULL);
    json_string(j, "transa", a);
    json_string(j, "transb", b);
    json_exact(j, "alpha", alpha);
    json_exact(j, "beta", beta);
}

void json_file(json_t *j, const char *key, const char *path, const ooc_file_spec_t *spec)
{
    if (path == NULL) {
        json_null(j, key);
        return;
    }
    json_object(j, key);
    json_string(j, "path", path);
    if (spec) {
        json_string(j, "format", spec->format == OOC_FORMAT_NPY ? "npy" : spec->format == OOC_FORMAT_RAW ? "raw" : NULL);
        json_int(j, "rows", spec->rows);
        json_int(j, "cols", spec->cols);
        json_string(j, "dtype", dtype_name(spec->dtype));
        json_string(j, "layout", layout_name(spec->layout));
    } else {
        json_null(j, "format");
        json_null(j, "rows");
        json_null(j, "cols");
        json_null(j, "dtype");
        json_null(j, "layout");
    }
    json_end(j);
}

void json_plan(json_t *j, const ooc_stats_t *st, int have)
{
    if (!have) {
        json_null(j, "plan");
        return;
    }
    json_object(j, "plan");
    json_int(j, "block_rows", st->block_rows);
    json_int(j, "panel_cols", st->panel_cols);
    json_int(j, "panel_depth", st->panel_depth);
    json_int(j, "blocks", st->blocks);
    json_int(j, "panels", st->panels);
    json_int(j, "ring_depth", st->ring_depth);
    json_int(j, "a_pieces", st->a_pieces > 0 ? st->a_pieces : 1);
    json_int(j, "c_chunks", st->c_chunks > 0 ? st->c_chunks : 1);
    json_bool(j, "b_follow", st->b_follow);
    json_bool(j, "aligned_tiles", st->aligned_tiles);
    json_bool(j, "resident_transposed", st->resident_transposed);
    json_int(j, "streams", st->streams);
    json_bool(j, "staged_a", st->staged_a);
    json_bool(j, "staged_c", st->staged_c);
    json_int(j, "stage_chunk", st->stage_chunk);
    json_int(j, "stage_bufs", st->stage_bufs);
    json_int(j, "stage_cin_chunk", st->stage_cin_chunk);
    json_int(j, "stage_cin_bufs", st->stage_cin_bufs);
    json_int(j, "stage_out_chunk", st->stage_out_chunk);
    json_int(j, "stage_out_bufs", st->stage_out_bufs);
    json_bool(j, "a_resident", st->a_resident);
    json_uint(j, "device_bytes", st->device_bytes);
    json_uint(j, "host_bytes", st->host_bytes);
    json_end(j);
}

/* The busy times of a traced multiply (null untraced). */
static void json_busy(json_t *j, int traced, double h2d, double compute, double d2h, double rd, double wr, double wall,
                      double eff)
{
    json_real(j, "busy_h2d_s", h2d, traced);
    json_real(j, "busy_compute_s", compute, traced);
    json_real(j, "busy_d2h_s", d2h, traced);
    json_real(j, "busy_read_s", rd, traced);
    json_real(j, "busy_write_s", wr, traced);
    json_real(j, "trace_wall_s", wall, traced);
    json_real(j, "overlap_efficiency", eff, traced);
}

void json_stats(json_t *j, const ooc_stats_t *st, int have)
{
    if (!have) {
        json_null(j, "stats");
        json_array(j, "devices");
        json_end(j);
        return;
    }
    json_object(j, "stats");
    json_real(j, "time_s", st->seconds, 1);
    json_uint(j, "bytes_h2d", st->bytes_h2d);
    json_uint(j, "bytes_d2h", st->bytes_d2h);
    json_uint(j, "bytes_peer", st->bytes_peer);
    json_int(j, "blocks_resumed", st->blocks_resumed);
    json_bool(j, "b_shared", st->b_shared);
    json_string(j, "b_how", st->b_how);
    json_real(j, "probe_host_gbps", st->probe_host_gbps, st->probe_host_gbps > 0);
    json_real(j, "probe_peer_gbps", st->probe_peer_gbps, st->probe_peer_gbps > 0);
    json_bool(j, "traced", st->traced);
    if (st->trace_status != OOC_SUCCESS) json_string(j, "trace_error", st->trace_error);
    else json_null(j, "trace_error");
    json_busy(j, st->traced, st->busy_h2d, st->busy_compute, st->busy_d2h, st->busy_read, st->busy_write,
              st->trace_wall, st->overlap_efficiency);
    json_end(j);
    /* one object per device of the multiply (none when the library reports none) */
    json_array(j, "devices");
    for (int i = 0; i < stats_ndevices(st); i++) {
        const ooc_device_stats_t *d = &st->device[i];
        json_object(j, NULL);
        json_int(j, "device", d->device);
        json_int(j, "blocks", d->blocks);
        json_uint(j, "bytes_h2d", d->bytes_h2d);
        json_uint(j, "bytes_d2h", d->bytes_d2h);
        json_uint(j, "bytes_peer", d->bytes_peer);
        json_real(j, "time_s", d->seconds, 1);
        json_busy(j, st->traced, d->busy_h2d, d->busy_compute, d->busy_d2h, d->busy_read, d->busy_write,
                  d->trace_wall, d->overlap_efficiency);
        json_end(j);
    }
    json_end(j);
}

void json_floor(json_t *j, const char *key, const floor_t *f, double time)
{
    if (!f->have) {
        json_null(j, key);
        return;
    }
    int gpu = !f->cpu;
    json_object(j, key);
    json_string(j, "kind", gpu ? "gpu" : "cpu");
    json_real(j, "time_s", f->floor_s, 1);
    json_real(j, "over_time", time > 0 ? f->floor_s / time : INFINITY, time >= 0);
    json_real(j, "rate_tflops", f->rate, 1);
    json_bool(j, "rate_measured", f->measured_rate);
    json_shape(j, "probe_shape", f->pm, f->pn, f->pk);
    json_int(j, "gpus", gpu ? (f->ndev > 1 ? f->ndev : 1) : 0);
    json_real(j, "bw_h2d_gbps", f->bw_h2d, gpu);
    json_real(j, "bw_d2h_gbps", f->bw_d2h, gpu);
    json_real(j, "bw_both_gbps", f->bw_both, gpu && f->bw_both > 0);
    if (gpu) json_bool(j, "bw_measured", f->measured_bw == 1);
    else json_null(j, "bw_measured");
    if (gpu && f->bw_both > 0) json_bool(j, "bw_both_measured", f->measured_both);
    else json_null(j, "bw_both_measured");
    if (gpu && f->bw_host > 0 && f->staged_bytes > 0) json_bool(j, "host_measured", f->measured_host);
    else json_null(j, "host_measured");
    json_real(j, "in_s", f->t_in, gpu);
    json_real(j, "out_s", f->t_out, gpu);
    json_real(j, "bus_s", f->t_bus, gpu && f->bw_both > 0);
    json_real(j, "host_gbps", f->bw_host, gpu && f->bw_host > 0 && f->staged_bytes > 0);
    json_real(j, "host_s", f->t_host, gpu && f->t_host > 0);
    json_real(j, "bytes_in", f->in_bytes, gpu && f->in_bytes > 0);
    json_real(j, "bytes_out", f->out_bytes, gpu && f->out_bytes > 0);
    json_real(j, "bytes_staged", f->staged_bytes, gpu && f->staged_bytes > 0);
    json_real(j, "host_traffic_bytes", f->host_traffic, gpu && f->staged_bytes > 0);
    json_real(j, "least_traffic_bytes", f->least_bytes, gpu && f->least_bytes > 0);
    json_real(j, "math_s", f->t_math, 1);
    json_end(j);
}

void json_check_rows(json_t *j, int checked, int64_t rows, double max_err, double tol, int64_t off, int passed)
{
    if (!checked) {
        json_null(j, "check");
        return;
    }
    json_object(j, "check");
    json_string(j, "method", "rows");
    json_int(j, "rows", rows);
    json_null(j, "vectors");
    json_real(j, "max_rel_err", max_err, 1);
    json_bool(j, "max_rel_err_infinite", !isfinite(max_err));
    json_real(j, "tolerance", tol, 1);
    json_bool(j, "passed", passed);
    json_null(j, "bytes_read");
    json_null(j, "rows_unverified");
    json_int(j, "off", off);
    json_null(j, "first_off_row");
    json_end(j);
}

void json_check_files(json_t *j, const ooc_verify_result_t *v, int have)
{
    if (!have) {
        json_null(j, "check");
        return;
    }
    json_object(j, "check");
    json_string(j, "method", v->exact ? "exact" : "freivalds");
    json_int(j, "rows", v->rows_checked);
    if (v->exact) json_null(j, "vectors");
    else json_int(j, "vectors", v->vectors);
    json_real(j, "max_rel_err", v->max_rel_err, 1);
    json_bool(j, "max_rel_err_infinite", !isfinite(v->max_rel_err));
    json_real(j, "tolerance", v->tolerance, 1);
    json_bool(j, "passed", v->passed);
    json_uint(j, "bytes_read", v->bytes_read);
    json_int(j, "rows_unverified", v->rows_unverified);
    json_int(j, "off", v->off);
    if (v->off > 0) json_int(j, "first_off_row", v->first_off_row);
    else json_null(j, "first_off_row");
    json_end(j);
}
