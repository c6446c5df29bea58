/* SPDX-License-Identifier: MIT */
/*
 * cli_floor.c: the floor of docs/PERFORMANCE.md (run, multiply, bench):
 * the figures measured in the same run (copy bandwidth, in-core rate), the
 * floor's terms, and its lines in a summary; and the summary line of the
 * library's plan and stats (print_plan).
 */
#include "config.h"

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* The floor of docs/PERFORMANCE.md, shared by run, multiply and bench       */

/* Open the handle's backend if it is not yet (a tiny allocation does it):
 * is it a GPU's? */
static int floor_backend_gpu(ooc_handle_t *h)
{
    if (strcmp(ooc_backend_name(h), "none") == 0) {
        void *p = NULL;
        if (ooc_host_alloc(h, 64, &p) == OOC_SUCCESS) (void)ooc_host_free(h, p);
    }
    return strcmp(ooc_backend_name(h), "host") != 0;
}

/* The in-core rate, unless given, on min(dim, 16384) (1024 on the host
 * backend); a failure leaves it unknown, with a warning unless quiet. */
void floor_measure_rate(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet,
                        floor_t *f)
{
    int64_t cap = floor_backend_gpu(h) ? 16384 : 1024;
    f->pm = m < cap ? m : cap;
    f->pn = n < cap ? n : cap;
    f->pk = k < cap ? k : cap;
    if (f->rate <= 0 && f->pm > 0 && f->pn > 0 && f->pk > 0) {
        double rate;
        ooc_status_t st = ooc_measure_gemm_rate(h, t, f->pm, f->pn, f->pk, 3, &rate);
        if (st == OOC_SUCCESS) {
            f->rate = rate / 1e12;
            f->measured_rate = 1;
        } else if (!quiet) {
            fprintf(stderr, "%s: warning: cannot measure the in-core rate: %s: %s\n", progname,
                    ooc_status_string(st), ooc_last_error(h));
        }
    }
}

/*
 * Measure what is not given, on the handle's backend (open it first: call
 * after the multiply): pinned copies of 1 GiB each way (64 MiB on the host
 * backend), and the in-core rate (floor_measure_rate).
 * A failed measurement leaves the figure unknown, with a warning unless quiet.
 */
void floor_measure(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet,
                   floor_t *f)
{
    int gpu = floor_backend_gpu(h);
    if (f->bw_h2d <= 0 || f->bw_d2h <= 0) {
        double h2d, d2h;
        ooc_status_t st = ooc_measure_bandwidth(h, gpu ? (size_t)1 << 30 : (size_t)64 << 20, &h2d, &d2h);
        if (st == OOC_SUCCESS) {
            if (f->bw_h2d <= 0) f->bw_h2d = h2d / 1e9;
            if (f->bw_d2h <= 0) f->bw_d2h = d2h / 1e9;
            f->measured_bw = 1;
        } else if (!quiet) {
            fprintf(stderr, "%s: warning: cannot measure bandwidth: %s: %s\n", progname, ooc_status_string(st),
                    ooc_last_error(h));
        }
    }
    floor_measure_rate(h, t, m, n, k, quiet, f);
}

/* floor = max(T_in, T_out, T_bus, T_math) for m x n x k (C0 read when
 * with_c0); T_bus only when the both-ways bandwidth is known. */
void floor_compute(floor_t *f, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int with_c0)
{
    f->have = f->bw_h2d > 0 && f->bw_d2h > 0 && f->rate > 0;
    if (!f->have) return;
    double s = (double)dtype_size(t), mn = (double)m * (double)n;
    double flops = (dtype_complex(t) ? 8.0 : 2.0) * mn * (double)k;
    double in_elems = (double)m * (double)k + (double)k * (double)n + (with_c0 ? mn : 0.0);
    f->t_in = s * in_elems / (f->bw_h2d * 1e9);
    f->t_out = s * mn / (f->bw_d2h * 1e9);
    f->t_bus = f->bw_both > 0 ? s * (in_elems + mn) / (f->bw_both * 1e9) : 0.0;
    f->t_math = flops / (f->rate * 1e12);
    f->floor_s = f->t_in > f->t_out ? f->t_in : f->t_out;
    if (f->t_bus > f->floor_s) f->floor_s = f->t_bus;
    if (f->t_math > f->floor_s) f->floor_s = f->t_math;
}

/* The "rates:" and "floor:" lines (or "floor: n/a"), floor/time for `time`
 * (none when time < 0). */
void floor_print(FILE *out, const floor_t *f, ooc_dtype_t t, double time)
{
    if (!f->have) {
        fprintf(out, "floor: n/a\n");
        return;
    }
    char dt = dtype_letter(t), both[48] = "", gpus[32] = "", sum[40] = "";
    if (f->bw_both > 0) snprintf(both, sizeof both, ", both ways %.1f GB/s", f->bw_both);
    if (f->ndev > 1) {
        snprintf(gpus, sizeof gpus, ", %d GPUs at once", f->ndev);
        snprintf(sum, sizeof sum, ", the sum over %d GPUs", f->ndev);
    }
    fprintf(out, "rates: H2D %.1f GB/s, D2H %.1f GB/s%s (%s%s); in-core %cGEMM %lldx%lldx%lld %.3g TFLOP/s (%s%s)\n",
            f->bw_h2d, f->bw_d2h, both, f->measured_bw ? "measured" : "given", gpus, dt - 'a' + 'A',
            (long long)f->pm, (long long)f->pn, (long long)f->pk, f->rate, f->measured_rate ? "measured" : "given",
            sum);
    fprintf(out, "floor: %.3g s (in %.3g, out %.3g", f->floor_s, f->t_in, f->t_out);
    if (f->bw_both > 0) fprintf(out, ", bus %.3g", f->t_bus);
    fprintf(out, ", math %.3g)", f->t_math);
    if (time >= 0) fprintf(out, "  floor/time: %.2f", time > 0 ? f->floor_s / time : INFINITY);
    fputc('\n', out);
}

/* "busy: H2D ... s, ...; overlap efficiency E" of a traced multiply. */
static void print_busy(FILE *out, double h2d, double compute, double d2h, double rd, double wr, double eff)
{
    fprintf(out, "busy: H2D %.3g s, compute %.3g s, D2H %.3g s, reader %.3g s, writer %.3g s; overlap efficiency %.2f",
            h2d, compute, d2h, rd, wr, eff);
}

/* The "backend: ... plan: ..." line of the library's stats, the timeline
 * when traced, and one line per device when there were several. */
void print_plan(FILE *out, const char *backend, const ooc_stats_t *st)
{
    char b1[32], b2[32];
    if (st->panels == 0) /* alpha == 0: C = beta*C, nothing streamed */
        fprintf(out, "backend: %s   plan: none (an empty product, k = 0 or alpha = 0: nothing to multiply)\n", backend);
    else
        fprintf(out,
                "backend: %s   plan: %sblock rows %lld, panel %lld x %lld (%lld panels, %lld blocks each), "
                "ring %d, streams %d, staged A/C: %s/%s, device %s, staging %s\n",
                backend, st->a_resident ? "op(A) resident, op(B) streamed (C^T = op(B)^T op(A)^T): " : "",
                (long long)st->block_rows, (long long)st->panel_depth, (long long)st->panel_cols,
                (long long)st->panels, (long long)st->blocks, (int)st->ring_depth, (int)st->streams,
                st->staged_a ? "yes" : "no", st->staged_c ? "yes" : "no",
                human_bytes(st->device_bytes, b1, sizeof b1), human_bytes(st->host_bytes, b2, sizeof b2));
    if (st->traced) {
        fprintf(out, "timeline: %.3g s from first to last device op; ", st->trace_wall);
        print_busy(out, st->busy_h2d, st->busy_compute, st->busy_d2h, st->busy_read, st->busy_write,
                   st->overlap_efficiency);
        fputc('\n', out);
    }
    int nd = stats_ndevices(st);
    if (nd > 1) fprintf(out, "op(B): %s\n", st->b_how);
    for (int i = 0; nd > 1 && i < nd; i++) {
        const ooc_device_stats_t *d = &st->device[i];
        fprintf(out, "  device %d: %lld block%s, H2D %.3g GB, D2H %.3g GB, ", (int)d->device, (long long)d->blocks,
                d->blocks == 1 ? "" : "s", (double)d->bytes_h2d / 1e9, (double)d->bytes_d2h / 1e9);
        if (st->b_shared) fprintf(out, "from peers %.3g GB, ", (double)d->bytes_peer / 1e9);
        fprintf(out, "its last block done at %.3g s", d->seconds);
        if (st->traced) {
            fprintf(out, "; timeline %.3g s, ", d->trace_wall);
            print_busy(out, d->busy_h2d, d->busy_compute, d->busy_d2h, d->busy_read, d->busy_write,
                       d->overlap_efficiency);
        }
        fputc('\n', out);
    }
}

