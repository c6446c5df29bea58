/* SPDX-License-Identifier: MIT */
/*
 * multiply_report.c: the summary of oocgemm multiply: the floor and the
 * disk's bounds, the text summary and the one JSON object (also of a job
 * that failed part-way).
 */
#include "config.h"

#include "multiply.h"

/* The bounds of the summary: the floor, the disk's, and their max. */
typedef struct {
    floor_t fl;
    double br, bw;           /* bytes read and written */
    double tflops;
    int64_t resumed, total_blocks;
    int have_io, have_bound;
    double io_bound, bound;
} mul_bounds_t;

/* The job's figures; the floor's measured only with `measure` (not after
 * a stop signal that came too late to stop the job: the user asked it to
 * end, and the probes take seconds). */
static void mul_bounds(mul_job_t *j, mul_bounds_t *b, int measure)
{
    mul_opts_t *o = &j->o;
    memset(b, 0, sizeof *b);
    b->fl = floor_given(&o->floor);
    if (!o->floor.no_floor) {
        if (j->split_floor) { /* measured by every rank at once and summed (multiply_mpi.c) */
            b->fl = j->split_fl;
        } else {
            /* the plan's bytes, when this process ran the whole job (not resumed) */
            if (j->stats.blocks_resumed == 0) floor_traffic(&b->fl, &j->stats);
            floor_of_run(&b->fl, &j->stats);
        }
        if (j->stats.blocks_resumed > 0) /* its time is the rest's, not the whole job's */
            snprintf(b->fl.note, sizeof b->fl.note,
                     "a resumed run: %lld of %lld blocks were done before; the floor is a whole job's",
                     (long long)j->stats.blocks_resumed, (long long)(j->stats.blocks * j->stats.panels));
        if (!j->split_floor && measure) floor_measure(j->h, j->t, j->m, j->n, j->k, o->quiet || o->json, &b->fl);
        floor_compute(&b->fl, j->t, j->m, j->n, j->k, o->c_in != NULL && o->beta != 0.0);
        if (!measure && !b->fl.have && !b->fl.note[0])
            snprintf(b->fl.note, sizeof b->fl.note, "not measured: %s came after the last block",
                     signal_name(mul_signal(j)));
    }
    b->br = (double)j->prog.bytes_read;
    b->bw = (double)j->prog.bytes_written;
    /* a resumed run did only the blocks the journal did not have */
    b->resumed = j->stats.blocks_resumed;
    b->total_blocks = j->stats.blocks * j->stats.panels;
    double run_flops = j->stats.panels == 0 ? 0.0 : j->prog.flops; /* alpha = 0 or k = 0: nothing multiplied */
    if (b->resumed > 0 && b->total_blocks > 0)
        run_flops = j->prog.flops * (double)(b->total_blocks - b->resumed) / (double)b->total_blocks;
    b->tflops = j->secs > 0 ? run_flops / j->secs / 1e12 : run_flops > 0 ? INFINITY : 0.0;
    b->have_io = o->disk_read_bw > 0 || o->disk_write_bw > 0;
    if (o->disk_read_bw > 0) b->io_bound = b->br / (o->disk_read_bw * 1e9);
    if (o->disk_write_bw > 0 && b->bw / (o->disk_write_bw * 1e9) > b->io_bound)
        b->io_bound = b->bw / (o->disk_write_bw * 1e9);
    b->have_bound = b->fl.have || b->have_io;
    b->bound = b->fl.have ? b->fl.floor_s : 0;
    if (b->have_io && b->io_bound > b->bound) b->bound = b->io_bound;
}

void mul_rank_rect(const mul_job_t *j, const mul_rank_t *r, int64_t *r0, int64_t *r1, int64_t *c0, int64_t *c1)
{
    int64_t a0 = r->row_begin, a1 = r->row_end, b0 = r->col_begin, b1 = r->col_end;
    if (r->scales) a0 = 0, a1 = j->split_cols ? j->n : j->m; /* (its rows: all of C) */
    if (b0 == 0 && b1 == 0) b1 = j->split_cols ? j->m : j->n;
    *r0 = j->split_cols ? b0 : a0;
    *r1 = j->split_cols ? b1 : a1;
    *c0 = j->split_cols ? a0 : b0;
    *c1 = j->split_cols ? a1 : b1;
}

/* Split by mpirun/srun: "ranks_split" (rows, columns when op(A) is kept
 * resident, or a grid of both) and "ranks", one object per rank. */
static void mul_json_ranks(json_t *js, const mul_job_t *j)
{
    json_string(js, "ranks_split", j->split_grid ? "grid" : j->split_cols ? "columns" : "rows");
    json_array(js, "ranks");
    for (int i = 0; i < j->nranks; i++) {
        const mul_rank_t *r = &j->ranks[i];
        json_object(js, NULL);
        json_int(js, "rank", r->rank);
        json_string(js, "host", r->host);
        json_array(js, "devices");
        for (int d = 0; d < 32; d++)
            if (r->devices ? (r->devices >> d & 1) : d < r->ndevices) json_int(js, NULL, d);
        json_end(js);
        int64_t r0, r1, c0, c1;
        mul_rank_rect(j, r, &r0, &r1, &c0, &c1);
        if (j->split_grid || !j->split_cols) {
            json_int(js, "row_begin", r0);
            json_int(js, "row_end", r1);
        }
        if (j->split_grid || j->split_cols) {
            json_int(js, "col_begin", c0);
            json_int(js, "col_end", c1);
        }
        json_int(js, "blocks", r->blocks);
        json_real(js, "time_s", r->time_s, 1);
        json_uint(js, "bytes_read", r->bytes_read);
        json_uint(js, "bytes_written", r->bytes_written);
        json_end(js);
    }
    json_end(js);
}

/* The one JSON object of a multiply, whether it ran (b) or failed part-way
 * (b NULL: what was given, how far it got). */
static void mul_print_json(mul_job_t *j, const mul_bounds_t *b, int rc)
{
    mul_opts_t *o = &j->o;
    int sig = mul_signal(j);
    double secs = j->secs;
    json_t js;
    json_open(&js, stdout, "multiply");
    json_object(&js, "files");
    json_file(&js, "a", o->a, j->A.file ? &j->A.spec : NULL);
    json_file(&js, "b", o->b, j->B.file ? &j->B.spec : NULL);
    json_file(&js, "c_in", o->c_in, j->C0.file ? &j->C0.spec : NULL);
    json_file(&js, "c", o->out, j->multiplied ? &j->cspec : NULL);
    json_end(&js);
    if (j->have_shape) json_shape(&js, "shape", j->m, j->n, j->k);
    else json_null(&js, "shape");
    json_problem(&js, j->have_shape ? &j->t : NULL, o->ta, o->tb, o->alpha, o->beta);
    const char *backend = j->h ? ooc_backend_name(j->h) : NULL; /* "none": nothing ran (finished already) */
    if (backend && strcmp(backend, "none") == 0) backend = NULL;
    json_string(&js, "backend", backend);
    json_string(&js, "backend_reason", backend ? backend_reason(backend) : NULL);
    json_bool(&js, "multiplied", j->multiplied);
    json_bool(&js, "already_finished", j->already);
    json_bool(&js, "resumed", b && b->resumed > 0);
    json_int(&js, "blocks_before_resume", b ? b->resumed : 0);
    json_int(&js, "blocks_mismatched", j->stats.blocks_mismatched); /* (a failed run's too) */
    /* --allow-mixed: blocks another computer made (kept, or another rank's) */
    json_int(&js, "blocks_mixed", j->stats.blocks_mixed);
    json_string(&js, "mixed_by", j->stats.blocks_mixed > 0 ? j->stats.mixed_by
                                 : j->ranks_mixed      ? j->ranks_mixed_by
                                                       : NULL);
    json_bool(&js, "interrupted", j->interrupted);
    /* (a result complete but not committed: a resume commits it) */
    int resumable = (!j->multiplied || j->uncommitted) && journals_resumable(j->journal_path);
    json_bool(&js, "resumable", resumable);
    /* a resume continues from the finished blocks, or (k-panels) starts over */
    if (resumable) json_bool(&js, "resume_keeps_blocks", journals_keep_blocks(j->journal_path));
    else json_null(&js, "resume_keeps_blocks");
    json_string(&js, "signal", sig ? signal_name(sig) : NULL);
    json_real(&js, "time_s", secs, b != NULL);
    json_real(&js, "tflops", b ? b->tflops : 0, b != NULL && b->tflops > 0); /* (null: nothing multiplied) */
    json_uint(&js, "bytes_read", j->prog.bytes_read);
    json_uint(&js, "bytes_written", j->prog.bytes_written);
    json_real(&js, "read_gbps", secs > 0 && b ? b->br / secs / 1e9 : NAN, 1);
    json_real(&js, "write_gbps", secs > 0 && b ? b->bw / secs / 1e9 : NAN, 1);
    /* (null where the run's statistics are not known: stopped or failed) */
    if (b) json_uint(&js, "host_staging_bytes", j->stats.host_bytes);
    else json_null(&js, "host_staging_bytes");
    json_uint(&js, "peak_rss_bytes", peak_rss_bytes());
    if (b) json_floor(&js, "floor", &b->fl, secs);
    else json_null(&js, "floor");
    if (o->disk_read_bw > 0 || o->disk_write_bw > 0 || j->disk_both > 0) {
        json_object(&js, "disk");
        json_real(&js, "read_gbps", o->disk_read_bw, o->disk_read_bw > 0);
        json_real(&js, "write_gbps", o->disk_write_bw, o->disk_write_bw > 0);
        json_real(&js, "both_gbps", j->disk_both, j->disk_both > 0);
        json_bool(&js, "measured", o->measure_disk);
        json_end(&js);
    } else {
        json_null(&js, "disk");
    }
    json_real(&js, "io_bound_s", b ? b->io_bound : 0, b && b->have_io);
    json_real(&js, "shared_disk_bound_s", b ? (b->br + b->bw) / (j->disk_both * 1e9) : 0, b && j->disk_both > 0);
    json_real(&js, "bound_s", b ? b->bound : 0, b && b->have_bound);
    json_real(&js, "bound_over_time", b && secs > 0 ? b->bound / secs : INFINITY, b && b->have_bound);
    if (j->nranks > 0) mul_json_ranks(&js, j);
    json_plan(&js, &j->stats, b && j->stats.panels + j->stats.blocks > 0);
    json_stats(&js, &j->stats, b && j->stats.panels + j->stats.blocks > 0);
    json_check_files(&js, &j->vr, j->verified);
    json_close(&js, rc);
}

static void mul_print_text(mul_job_t *j, const mul_bounds_t *b)
{
    mul_opts_t *o = &j->o;
    double secs = j->secs, br = b->br, bw = b->bw;
    char b1[32], b2[32];
    printf("oocgemm %s: %s = %s%s x %s%s%s%s: m=%lld n=%lld k=%lld %s, alpha=%g beta=%g\n", PACKAGE_VERSION, o->out,
           o->ta == OOC_OP_N ? "" : o->ta == OOC_OP_T ? "T:" : "H:", j->A.path,
           o->tb == OOC_OP_N ? "" : o->tb == OOC_OP_T ? "T:" : "H:", j->B.path, o->c_in ? " + beta x " : "",
           o->c_in ? j->C0.path : "", (long long)j->m, (long long)j->n, (long long)j->k, dtype_name(j->t), o->alpha,
           o->beta);
    char d1[128], d2[128], d3[128];
    printf("files: A %s; B %s", describe_spec(&j->A.spec, d1, sizeof d1), describe_spec(&j->B.spec, d2, sizeof d2));
    if (o->c_in) printf("; C0 %s", describe_spec(&j->C0.spec, d3, sizeof d3));
    printf("; C %s\n", describe_spec(&j->cspec, d3, sizeof d3));
    print_plan(stdout, ooc_backend_name(j->h), &j->stats);
    if (j->nranks > 0) {
        printf("ranks: %d (mpirun/srun), each its own %s of C:\n", j->nranks,
               j->split_grid ? "rectangle (a grid of row blocks and panels of op(B))"
               : j->split_cols ? "column blocks" : "row blocks");
        for (int i = 0; i < j->nranks; i++) {
            const mul_rank_t *r = &j->ranks[i];
            char dv[96], part[96];
            int64_t r0, r1, c0, c1;
            mul_rank_rect(j, r, &r0, &r1, &c0, &c1);
            if (j->split_grid)
                snprintf(part, sizeof part, "rows [%lld, %lld) x columns [%lld, %lld)", (long long)r0, (long long)r1,
                         (long long)c0, (long long)c1);
            else if (j->split_cols)
                snprintf(part, sizeof part, "columns [%lld, %lld)", (long long)c0, (long long)c1);
            else
                snprintf(part, sizeof part, "rows [%lld, %lld)", (long long)r0, (long long)r1);
            char count[64];
            if (r->scales) snprintf(count, sizeof count, "scaled (C = beta C0: nothing multiplied)");
            else snprintf(count, sizeof count, "in %lld block%s", (long long)r->blocks, r->blocks == 1 ? "" : "s");
            printf("  rank %d on %s: devices %s, %s %s, %.3g s, read %s, written %s\n", r->rank, r->host,
                   r->devices ? devices_format(r->devices, dv, sizeof dv) : "all", part, count, r->time_s,
                   human_bytes(r->bytes_read, b1, sizeof b1), human_bytes(r->bytes_written, b2, sizeof b2));
        }
    }
    if (b->tflops > 0) printf("time: %.3g s   rate: %s", secs, format_rate(b->tflops * 1e12, b1, sizeof b1));
    else printf("time: %.3g s   rate: n/a (nothing multiplied in this run)", secs);
    if (b->resumed > 0)
        printf("   (resumed after %lld of %lld blocks)", (long long)b->resumed, (long long)b->total_blocks);
    printf("\n");
    printf("disk: read %s (%.3g GB/s), written %s (%.3g GB/s)\n", human_bytes(j->prog.bytes_read, b1, sizeof b1),
           secs > 0 ? br / secs / 1e9 : 0.0, human_bytes(j->prog.bytes_written, b2, sizeof b2),
           secs > 0 ? bw / secs / 1e9 : 0.0);
    printf("memory: host staging %s, peak RSS %s\n", human_bytes(j->stats.host_bytes, b1, sizeof b1),
           human_bytes(peak_rss_bytes(), b2, sizeof b2));
    if (o->floor.no_floor) printf("floor: not measured (--no-floor)\n");
    else floor_print(stdout, &b->fl, j->t, secs);
    if (b->have_io)
        printf("io bound: %.3g s (read %.3g GB at %s GB/s, written %.3g GB at %s GB/s)\n", b->io_bound, br / 1e9,
               o->disk_read_bw > 0 ? (snprintf(b1, sizeof b1, "%.3g", o->disk_read_bw), b1) : "?", bw / 1e9,
               o->disk_write_bw > 0 ? (snprintf(b2, sizeof b2, "%.3g", o->disk_write_bw), b2) : "?");
    else
        printf("io bound: n/a (give --disk-read-bw and --disk-write-bw)\n");
    if (b->have_bound)
        printf("bound: max(floor, io bound) = %.3g s  bound/time: %.2f\n", b->bound, secs > 0 ? b->bound / secs : INFINITY);
    if (j->disk_both > 0)
        printf("shared-disk bound: (read + written) / both-at-once bandwidth = %.3g s  ratio to time: %.2f\n",
               (br + bw) / (j->disk_both * 1e9), secs > 0 ? (br + bw) / (j->disk_both * 1e9) / secs : INFINITY);
}

/* --allow-mixed, when it let computers mix: say so, even with -q or --json (C is not
 * byte-identical to one run's). */
static void mixed_note(mul_job_t *j)
{
    char mine[OOC_COMPUTE_ID_MAX] = "?";
    if (j->stats.blocks_mixed == 0 && j->ranks_mixed == 0) return;
    if (ooc_compute_id_for(j->h, j->t, mine, sizeof mine) != OOC_SUCCESS) snprintf(mine, sizeof mine, "?");
    if (j->stats.blocks_mixed > 0)
        fprintf(stderr, "%s: note: %lld block%s of C kept from the journal %s computed by %s, the rest by %s "
                "(--allow-mixed): C is correct to the checks' tolerance but not byte-identical to one run's\n",
                progname, (long long)j->stats.blocks_mixed, j->stats.blocks_mixed == 1 ? "" : "s",
                j->stats.blocks_mixed == 1 ? "was" : "were",
                !j->stats.mixed_by[0]                         ? "another computer"
                : strcmp(j->stats.mixed_by, "several") == 0 ? "several computers (resumes with --allow-mixed)"
                                                              : j->stats.mixed_by,
                mine);
    if (j->ranks_mixed)
        fprintf(stderr, "%s: note: rank %d computed its blocks by %s, rank %d by %s (--allow-mixed): C is correct "
                "to the checks' tolerance but not byte-identical to one run's\n",
                progname, j->ranks_mixed, j->ranks_mixed_by, j->ranks_mixed_ref, j->ranks_ref_by);
}

/* A resume that found blocks of C changed since its journal recorded them:
 * say so, even with -q or --json (the disk or something else lost or
 * overwrote finished bytes; C is right: they were computed again). */
void mul_mismatch_note(const mul_job_t *j)
{
    int64_t n = j->stats.blocks_mismatched;
    if (n == 0) return;
    fprintf(stderr, "%s: warning: --resume: %lld block%s the journal recorded as done no longer matched the digest "
            "recorded with %s in %s (overwritten since, lost in a crash, or unreadable): %s\n",
            progname, (long long)n, n == 1 ? "" : "s", n == 1 ? "it" : "them", j->tmp_path,
            j->multiplied ? "computed again" : "to be computed again (this run did not finish)");
}

int mul_signal(const mul_job_t *j) { return stop_signal_caught() ? stop_signal_caught() : j->signal; }

/* The summary of a job that ran (rc RC_OK or RC_CHECK_FAILED): text or JSON. */
void mul_summary(mul_job_t *j, int rc)
{
    mul_opts_t *o = &j->o;
    mul_bounds_t b;
    /* a stop signal the multiply finished despite: its last block was in
     * hand (C is complete and committed: exit 0, nothing to resume) */
    int late = mul_signal(j) != 0;
    int report = (o->json || !o->quiet) && !j->already;
    memset(&b, 0, sizeof b);
    if (report) mul_bounds(j, &b, !late);
    if (o->json) mul_print_json(j, j->already ? NULL : &b, rc); /* finished already: nothing ran, nothing measured */
    else if (!o->quiet && !j->already) mul_print_text(j, &b);
    if (!j->already) mixed_note(j);
    if (!j->already) mul_mismatch_note(j);
    if (late && j->multiplied && !j->already)
        fprintf(stderr, "%s: note: %s came after the last block: %s is complete and committed%s\n", progname,
                signal_name(mul_signal(j)), o->out,
                report && !o->floor.no_floor && !b.fl.have ? " (the floor was not measured)" : "");
    if (!o->json && !o->quiet && j->verified)
        print_verify(stdout, &j->vr, j->m, j->n, j->split_cols && !j->split_grid);
}

void mul_print_failure_json(mul_job_t *j, int rc) { mul_print_json(j, NULL, rc); }
