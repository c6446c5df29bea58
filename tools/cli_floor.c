/* SPDX-License-Identifier: MIT */
/*
 * cli_floor.c: the floor of docs/PERFORMANCE.md (run, multiply, bench) and
 * the summary lines of the library's plan and stats. On a GPU backend the
 * floor is max(T_in, T_out, T_bus, T_host, T_math) from the copy bandwidth
 * (each way, then both ways at once), the host's memory bandwidth (when
 * operands were staged) and the in-core rate measured in the same run, over
 * the bytes the plan moved (A once per panel of op(B)); when the multiply ran
 * on several GPUs, the figures of them all at once. No floor when nothing was
 * multiplied (alpha = 0, k = 0) or a resumed run did part of the job. On the
 * host backend (OpenBLAS on the CPU) nothing crosses a bus: the floor is
 * flops / the CPU's GEMM rate measured in the same run, and every line is in
 * CPU words (no device, H2D or pinned memory: the host backend has none).
 */
#include "config.h"

#include <math.h>

#include "cli.h"
#include "peers.h"

/* ------------------------------------------------------------------------ */
/* The floor of docs/PERFORMANCE.md, shared by run, multiply and bench       */

/* Open the handle's backend if it is not yet (a tiny allocation does it):
 * is it the host backend? */
int backend_is_host(ooc_handle_t *h)
{
    if (strcmp(ooc_backend_name(h), "none") == 0) {
        void *p = NULL;
        if (ooc_host_alloc(h, 64, &p) == OOC_SUCCESS) (void)ooc_host_free(h, p);
    }
    return strncmp(ooc_backend_name(h), "host", 4) == 0;
}

/* --memory as the summary says it: memory from ooc_host_alloc is pinned on
 * a GPU backend, ordinary memory on the host backend. */
const char *memory_words(int pinned, int host)
{
    if (host) return pinned ? "in memory from ooc_host_alloc" : "in pageable memory (staged)";
    return pinned ? "pinned" : "pageable";
}

/* A new handle with h's options (not its trace), on device `device` alone
 * (< 0: h's devices), with backend `backend` (OOC_BACKEND_AUTO: h's); NULL
 * when it cannot be made. */
ooc_handle_t *handle_like(ooc_handle_t *h, int device, ooc_backend_t backend)
{
    ooc_handle_t *c = NULL;
    if (ooc_create(&c) != OOC_SUCCESS) {
        ooc_destroy(c);
        return NULL;
    }
    int ok = 1;
    for (int p = OOC_PARAM_BACKEND; p <= OOC_PARAM_STAGE_C; p++) {
        int64_t v;
        if (device >= 0 && (p == OOC_PARAM_DEVICE || p == OOC_PARAM_DEVICES)) continue;
        if (ooc_get(h, (ooc_param_t)p, &v) == OOC_SUCCESS && v != 0)
            ok = ok && ooc_set(c, (ooc_param_t)p, v) == OOC_SUCCESS;
    }
    if (device >= 0) ok = ok && ooc_set(c, OOC_PARAM_DEVICES, (int64_t)1 << device) == OOC_SUCCESS;
    if (backend != OOC_BACKEND_AUTO) ok = ok && ooc_set(c, OOC_PARAM_BACKEND, backend) == OOC_SUCCESS;
    if (!ok) {
        ooc_destroy(c);
        return NULL;
    }
    return c;
}

/* The in-core rate, unless given, on min(dim, 16384) (1024 on the host
 * backend, best of 5: a CPU's rate varies more from run to run), each
 * rounded down to a multiple of 8 from 8 on: cuBLAS's tensor-core kernels
 * run an m or k that is not a multiple of 16 bytes at a third of the rate
 * (TF32) or three quarters (FP64) on an H200, which the library does not
 * (backend_cuda.c c_gemm; DGEMM's op pair NT, whose aligned kernels ran
 * slower still, by transposing op(B) on the device where the problem runs
 * column-major: backend.h ooc_tiles_aligned, ooc_resident_transposed), so
 * that is not the limit; a failure
 * leaves it unknown, with a warning unless quiet. The physical limit is
 * cuBLAS's: on the custom backend (our own kernels) it is measured on a
 * cuBLAS handle of the same devices and math mode. */
void floor_measure_rate(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet,
                        floor_t *f)
{
    int host = backend_is_host(h);
    int64_t cap = host ? 1024 : 16384;
    f->pm = m < cap ? m : cap;
    f->pn = n < cap ? n : cap;
    f->pk = k < cap ? k : cap;
    if (f->pm >= 8) f->pm &= ~(int64_t)7;
    if (f->pn >= 8) f->pn &= ~(int64_t)7;
    if (f->pk >= 8) f->pk &= ~(int64_t)7;
    if (f->rate <= 0 && f->pm > 0 && f->pn > 0 && f->pk > 0) {
        double rate;
        int64_t be = 0;
        ooc_handle_t *hc = NULL;
        if (!host && ooc_get(h, OOC_PARAM_BACKEND, &be) == OOC_SUCCESS && be == OOC_BACKEND_CUSTOM &&
            (hc = handle_like(h, -1, OOC_BACKEND_CUBLAS)) == NULL) {
            if (!quiet) fprintf(stderr, "%s: warning: cannot measure the in-core rate: no cuBLAS handle\n", progname);
            return;
        }
        ooc_handle_t *hr = hc ? hc : h;
        ooc_status_t st = ooc_measure_gemm_rate(hr, t, f->pm, f->pn, f->pk, host ? 5 : 3, &rate);
        if (st == OOC_SUCCESS) {
            f->rate = rate / 1e12;
            f->measured_rate = 1;
        } else if (!quiet) {
            fprintf(stderr, "%s: warning: cannot measure the %s rate: %s: %s\n", progname,
                    host ? "CPU's GEMM" : "in-core", ooc_status_string(st), ooc_last_error(hr));
        }
        ooc_destroy(hc);
    }
}

/* The figures given on the command line (0: measure them). */
floor_t floor_given(const floor_opts_t *o)
{
    return (floor_t){.bw_h2d = o->bw_h2d, .bw_d2h = o->bw_d2h, .bw_both = o->bw_both, .bw_host = o->bw_host,
                     .rate = o->rate};
}

/* The bytes the run's plan moved in and out and staged (the stats of the
 * multiply: A once per panel of op(B), op(B), C0 when read; C out), and the
 * least any plan could have moved in the same budgets. */
void floor_traffic(floor_t *f, const ooc_stats_t *st)
{
    f->in_bytes = (double)st->bytes_h2d;
    f->out_bytes = (double)st->bytes_d2h;
    f->staged_bytes = (double)st->bytes_staged;
    /* staged through the ring: read from pageable memory, written to the
     * pinned slot, read by the copy engines; through the cache-sized
     * buffers, only the first reaches memory (any staging must make it) */
    double cached = (double)st->bytes_staged_cached;
    f->host_traffic = 3.0 * (f->staged_bytes - cached) + cached;
    f->least_bytes = (double)st->least_traffic_bytes;
}

/* What the multiply was (its stats), for the floor: the devices it ran on
 * (with several, the floor is theirs together), or nothing multiplied
 * (m, n or k is 0 or alpha = 0: C = beta C on the host, no floor). */
void floor_of_run(floor_t *f, const ooc_stats_t *st)
{
    int nd = stats_ndevices(st);
    f->run_ndev = nd;
    for (int i = 0; i < nd; i++) f->run_devs[i] = st->device[i].device;
    if (st->panels == 0)
        snprintf(f->note, sizeof f->note, "nothing was multiplied: m, n or k is 0 or alpha = 0; C = beta C on the host");
}

/* The copies of the GPUs devs[0..ndev) at once, those not given: pinned
 * copies of 1 GiB per GPU each way, then both ways, with every GPU copying
 * at once (best of 3). 1, or 0 with the reason in f->note. */
static int copies_devices(const int *devs, int ndev, floor_t *f)
{
    char msg[PEER_MSG_LEN];
    f->ndev = ndev;
    if (f->bw_h2d > 0 && f->bw_d2h > 0 && f->bw_both > 0) return 1;
    double h2d = 0, d2h = 0, both = 0;
    if (peer_bandwidth(devs, ndev, (size_t)1 << 30, 3, &h2d, &d2h, &both, msg, sizeof msg) != PEER_OK) {
        snprintf(f->note, sizeof f->note, "the copy bandwidth of the %d GPUs at once: %s", ndev, msg);
        return 0;
    }
    if (f->bw_h2d <= 0 || f->bw_d2h <= 0) {
        f->measured_bw = f->bw_h2d <= 0 && f->bw_d2h <= 0 ? 1 : 2;
        if (f->bw_h2d <= 0) f->bw_h2d = h2d / 1e9;
        if (f->bw_d2h <= 0) f->bw_d2h = d2h / 1e9;
    }
    if (f->bw_both <= 0) {
        f->bw_both = both / 1e9;
        f->measured_both = 1;
    }
    return 1;
}

/* The sum of each GPU's in-core rate, unless given (into rates[i] when
 * rates is not NULL). 1, or 0 with the reason in f->note. */
static int rates_devices(ooc_handle_t *h, const int *devs, int ndev, ooc_dtype_t t, int64_t m, int64_t n, int64_t k,
                         int quiet, floor_t *f, double *rates)
{
    if (f->rate > 0) return 1;
    double sum = 0;
    for (int i = 0; i < ndev; i++) {
        floor_t one;
        memset(&one, 0, sizeof one);
        ooc_handle_t *hd = handle_like(h, devs[i], OOC_BACKEND_AUTO);
        if (hd) floor_measure_rate(hd, t, m, n, k, quiet, &one);
        ooc_destroy(hd);
        if (rates) rates[i] = one.rate;
        if (one.rate <= 0) {
            snprintf(f->note, sizeof f->note, "the in-core rate of device %d: not measured", devs[i]);
            return 0;
        }
        sum += one.rate;
        f->pm = one.pm, f->pn = one.pn, f->pk = one.pk;
    }
    f->rate = sum;
    f->measured_rate = 1;
    return 1;
}

/* The floor's figures of the GPUs devs[0..ndev) at once, those not given:
 * their copies (copies_devices) and the sum of their in-core rates (into
 * rates[i] when rates is not NULL). 1, or 0 with the reason in f->note. */
int floor_measure_devices(ooc_handle_t *h, const int *devs, int ndev, ooc_dtype_t t, int64_t m, int64_t n, int64_t k,
                          int quiet, floor_t *f, double *rates)
{
    return copies_devices(devs, ndev, f) && rates_devices(h, devs, ndev, t, m, n, k, quiet, f, rates);
}

/* One rate of 1 GiB moved, measured by fn into *gbps (GB/s) and *measured;
 * a failure leaves them as they were, with a warning unless quiet. */
static void measure_gbps(ooc_handle_t *h, ooc_status_t (*fn)(ooc_handle_t *, size_t, double *), const char *what,
                         int quiet, double *gbps, int *measured)
{
    double bw;
    ooc_status_t st = fn(h, (size_t)1 << 30, &bw);
    if (st == OOC_SUCCESS) {
        *gbps = bw / 1e9;
        *measured = 1;
    } else if (!quiet) {
        fprintf(stderr, "%s: warning: cannot measure %s: %s: %s\n", progname, what, ooc_status_string(st),
                ooc_last_error(h));
    }
}

/* One GPU's pinned copies, those not given: each way, then both ways. */
static void measure_copies(ooc_handle_t *h, int quiet, floor_t *f)
{
    if (f->bw_h2d <= 0 || f->bw_d2h <= 0) {
        double h2d, d2h;
        ooc_status_t st = ooc_measure_bandwidth(h, (size_t)1 << 30, &h2d, &d2h);
        if (st == OOC_SUCCESS) {
            f->measured_bw = f->bw_h2d <= 0 && f->bw_d2h <= 0 ? 1 : 2; /* 2: one of them given */
            if (f->bw_h2d <= 0) f->bw_h2d = h2d / 1e9;
            if (f->bw_d2h <= 0) f->bw_d2h = d2h / 1e9;
        } else if (!quiet) {
            fprintf(stderr, "%s: warning: cannot measure bandwidth: %s: %s\n", progname, ooc_status_string(st),
                    ooc_last_error(h));
        }
    }
    if (f->bw_both <= 0)
        measure_gbps(h, ooc_measure_bandwidth_both, "the both-ways bandwidth", quiet, &f->bw_both, &f->measured_both);
}

/*
 * Measure what is not given, on the handle's backend (call after the
 * multiply, and after floor_traffic): on a GPU, pinned copies of 1 GiB each
 * way and both ways at once, the host's memory bandwidth when bytes were
 * staged, and the in-core rate; on the host backend the CPU's GEMM rate
 * alone (f->cpu: there is no bus to measure). A failed measurement leaves
 * the figure unknown, with a warning unless quiet.
 * The ranks of a split job (multiply_mpi.c) call it with sync (NULL:
 * none), called before each of the three (the copies, the host's memory,
 * the rate) whether or not there is anything to measure, so that ranks on
 * separate GPUs of a host copy at the same time; and with parts, the ones
 * this rank measures (FLOOR_COPIES, FLOOR_HOST, FLOOR_RATE: one rank per
 * GPU its copies and rate, one per host its memory, or on the host backend
 * its CPU's rate).
 */
void floor_measure_sync(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet, floor_t *f,
                        void (*sync)(void), unsigned parts)
{
    f->cpu = backend_is_host(h);
    int go = !f->note[0]; /* (a note: no floor to measure; sync is called all the same) */
    int several = go && !f->cpu && f->run_ndev > 1 && f->ndev <= 1; /* the GPUs of the run together */
    if (sync) sync();
    if (parts & FLOOR_COPIES) {
        if (several) go = copies_devices(f->run_devs, f->run_ndev, f);
        else if (go && !f->cpu) measure_copies(h, quiet, f);
    }
    if (sync) sync();
    if (go && (parts & FLOOR_HOST) && !f->cpu && f->staged_bytes > 0 && f->bw_host <= 0)
        measure_gbps(h, ooc_measure_host_bandwidth, "the host memory bandwidth", quiet, &f->bw_host, &f->measured_host);
    if (sync) sync();
    if (go && (parts & FLOOR_RATE)) {
        if (several) rates_devices(h, f->run_devs, f->run_ndev, t, m, n, k, quiet, f, NULL);
        else floor_measure_rate(h, t, m, n, k, quiet, f);
    }
}

void floor_measure(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int quiet, floor_t *f)
{
    floor_measure_sync(h, t, m, n, k, quiet, f, NULL, FLOOR_COPIES | FLOOR_HOST | FLOOR_RATE);
}

/* floor = max(T_in, T_out, T_bus, T_host, T_math) for m x n x k (C0 read
 * when with_c0): over the plan's bytes when floor_traffic gave them, else
 * one pass of each operand; T_bus and T_host only when their bandwidths are
 * known (and T_host when bytes were staged). On the CPU (f->cpu): T_math
 * alone. */
void floor_compute(floor_t *f, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int with_c0)
{
    f->have = !f->note[0] && f->rate > 0 && (f->cpu || (f->bw_h2d > 0 && f->bw_d2h > 0));
    if (!f->have) return;
    double s = (double)dtype_size(t), mn = (double)m * (double)n;
    double flops = (dtype_complex(t) ? 8.0 : 2.0) * mn * (double)k;
    double in = s * ((double)m * (double)k + (double)k * (double)n + (with_c0 ? mn : 0.0)), out = s * mn;
    if (f->in_bytes > 0 || f->out_bytes > 0) {
        in = f->in_bytes;
        out = f->out_bytes;
    }
    f->t_math = flops / (f->rate * 1e12);
    if (f->cpu) {
        f->t_in = f->t_out = f->t_bus = f->t_host = 0.0;
        f->floor_s = f->t_math;
        return;
    }
    f->t_in = in / (f->bw_h2d * 1e9);
    f->t_out = out / (f->bw_d2h * 1e9);
    f->t_bus = f->bw_both > 0 ? (in + out) / (f->bw_both * 1e9) : 0.0;
    f->t_host = f->bw_host > 0 && f->staged_bytes > 0 ? f->host_traffic / (f->bw_host * 1e9) : 0.0;
    f->floor_s = f->t_in > f->t_out ? f->t_in : f->t_out;
    if (f->t_bus > f->floor_s) f->floor_s = f->t_bus;
    if (f->t_host > f->floor_s) f->floor_s = f->t_host;
    if (f->t_math > f->floor_s) f->floor_s = f->t_math;
}

/* The CPU's floor: its GEMM rate, and flops / that rate. */
static void floor_print_cpu(FILE *out, const floor_t *f, ooc_dtype_t t, double time)
{
    char r[32];
    char ranks[64] = "";
    if (f->nranks > 1)
        snprintf(ranks, sizeof ranks, ", %d ranks on %d host%s: the sum over the hosts", f->nranks, f->ndev,
                 f->ndev == 1 ? "" : "s");
    fprintf(out, "CPU: OpenBLAS %cGEMM %lldx%lldx%lld in memory: %s (%s%s)\n", dtype_letter(t) - 'a' + 'A',
            (long long)f->pm, (long long)f->pn, (long long)f->pk, format_rate(f->rate * 1e12, r, sizeof r),
            f->measured_rate ? "measured now, best of 5" : "given", ranks);
    fprintf(out, "floor: flops / the CPU's rate = %.3g s", f->floor_s);
    if (time >= 0) fprintf(out, "  floor/time: %.2f", time > 0 ? f->floor_s / time : INFINITY);
    fputc('\n', out);
}

/* The "rates:" and "floor:" lines (or "floor: n/a"), floor/time for `time`
 * (none when time < 0). */
void floor_print(FILE *out, const floor_t *f, ooc_dtype_t t, double time)
{
    if (!f->have) {
        fprintf(out, "floor: n/a%s%s%s\n", f->note[0] ? " (" : "", f->note, f->note[0] ? ")" : "");
        return;
    }
    if (f->cpu) {
        floor_print_cpu(out, f, t, time);
        return;
    }
    char dt = dtype_letter(t), both[48] = "", gpus[48] = "", sum[48] = "", host[64] = "";
    if (f->bw_both > 0)
        snprintf(both, sizeof both, ", both ways %.1f GB/s (%s)", f->bw_both, f->measured_both ? "measured" : "given");
    if (f->bw_host > 0 && f->staged_bytes > 0)
        snprintf(host, sizeof host, "; host memory %.1f GB/s (%s)", f->bw_host, f->measured_host ? "measured" : "given");
    if (f->nranks > 1) {
        snprintf(gpus, sizeof gpus, ", %d GPUs of %d ranks at once", f->ndev > 1 ? f->ndev : 1, f->nranks);
        snprintf(sum, sizeof sum, ", the sum over the GPUs");
    } else if (f->ndev > 1) {
        snprintf(gpus, sizeof gpus, ", %d GPUs at once", f->ndev);
        snprintf(sum, sizeof sum, ", the sum over %d GPUs", f->ndev);
    }
    fprintf(out, "rates: H2D %.1f GB/s, D2H %.1f GB/s (%s%s)%s%s; in-core %cGEMM %lldx%lldx%lld %.3g TFLOP/s (%s%s)\n",
            f->bw_h2d, f->bw_d2h, f->measured_bw == 1 ? "measured" : f->measured_bw ? "one given, one measured" : "given",
            gpus, both, host, dt - 'a' + 'A',
            (long long)f->pm, (long long)f->pn, (long long)f->pk, f->rate, f->measured_rate ? "measured" : "given",
            sum);
    if (f->least_bytes > 0 && f->in_bytes + f->out_bytes > 1.005 * f->least_bytes)
        fprintf(out, "traffic: the plan moved %.3g GB; the least any plan could in these budgets: %.3g GB (%.2fx)\n",
                (f->in_bytes + f->out_bytes) / 1e9, f->least_bytes / 1e9, (f->in_bytes + f->out_bytes) / f->least_bytes);
    fprintf(out, "floor: %.3g s (in %.3g, out %.3g", f->floor_s, f->t_in, f->t_out);
    if (f->bw_both > 0) fprintf(out, ", bus %.3g", f->t_bus);
    if (f->t_host > 0) fprintf(out, ", host memory %.3g", f->t_host);
    fprintf(out, ", math %.3g)", f->t_math);
    if (time >= 0) fprintf(out, "  floor/time: %.2f", time > 0 ? f->floor_s / time : INFINITY);
    fputc('\n', out);
}

/* "busy: H2D ... s, ...; overlap efficiency E" of a traced multiply (on the
 * host backend: copies in and out). */
static void print_busy(FILE *out, int host, double h2d, double compute, double d2h, double rd, double wr, double eff)
{
    fprintf(out, "busy: %s %.3g s, compute %.3g s, %s %.3g s, reader %.3g s, writer %.3g s; overlap efficiency ",
            host ? "copy in" : "H2D", h2d, compute, host ? "copy out" : "D2H", d2h, rd, wr);
    /* undefined (NAN) when fewer than two engines worked: a device that got no block */
    if (isnan(eff)) fputs("n/a", out);
    else fprintf(out, "%.2f", eff);
}

/* The "backend: ... plan: ..." line of the library's stats, the timeline
 * when traced, and one line per device when there were several (on the host
 * backend, the devices it simulates: OOC_HOST_DEVICES). */
void print_plan(FILE *out, const char *backend, const ooc_stats_t *st)
{
    char b1[32], b2[32];
    int host = strncmp(backend, "host", 4) == 0;
    /* the host backend chosen for want of CUDA says why, on a line of its own */
    const char *why = host ? cuda_unused_reason() : NULL;
    if (why) fprintf(out, "backend: %s (OpenBLAS on the CPU; CUDA not used: %s)\n", backend, why);
    else fprintf(out, "backend: %s%s   ", backend, host ? " (OpenBLAS on the CPU)" : "");
    char pieces[128] = "";
    if (st->a_pieces > 1 && st->c_chunks > 1)
        snprintf(pieces, sizeof pieces, "blocks of A in %d k-pieces (the last in %d chunks of C's columns%s), ",
                 (int)st->a_pieces, (int)st->c_chunks, st->b_follow ? "; op(B) going up with them" : "");
    else if (st->a_pieces > 1)
        snprintf(pieces, sizeof pieces, "blocks of A in %d k-pieces%s, ", (int)st->a_pieces,
                 st->b_follow ? " (op(B) going up with them)" : "");
    /* what went through the cache-sized buffers: the reader's (A, C read in) and the writer's (C out) */
    char through[192] = "", b3[32], b4[32];
    const char *a = st->a_resident ? "op(B)" : "A";
    int64_t rchunk = st->stage_chunk > 0 ? st->stage_chunk : st->stage_cin_chunk;
    int rbufs = st->stage_chunk > 0 ? (int)st->stage_bufs : (int)st->stage_cin_bufs;
    char in[64] = "";
    if (st->stage_chunk > 0 && st->stage_cin_chunk > 0) snprintf(in, sizeof in, "%s and C in", a);
    else if (st->stage_chunk > 0) snprintf(in, sizeof in, "%s", a);
    else if (st->stage_cin_chunk > 0) snprintf(in, sizeof in, "C in");
    if (rchunk > 0 && st->stage_out_chunk > 0)
        snprintf(through, sizeof through, " (%s through %d buffers of %s, C out through %d of %s)", in, rbufs,
                 human_bytes((uint64_t)rchunk, b3, sizeof b3), (int)st->stage_out_bufs,
                 human_bytes((uint64_t)st->stage_out_chunk, b4, sizeof b4));
    else if (rchunk > 0)
        snprintf(through, sizeof through, " (%s through %d buffers of %s)", in, rbufs,
                 human_bytes((uint64_t)rchunk, b3, sizeof b3));
    else if (st->stage_out_chunk > 0)
        snprintf(through, sizeof through, " (C out through %d buffers of %s)", (int)st->stage_out_bufs,
                 human_bytes((uint64_t)st->stage_out_chunk, b3, sizeof b3));
    if (st->panels == 0) /* m, n or k = 0 or alpha == 0: C = beta*C, nothing streamed */
        fprintf(out, "plan: none (an empty product: m, n or k is 0 or alpha = 0; nothing to multiply)\n");
    else
        fprintf(out,
                "plan: %sblock rows %lld, panel %lld x %lld (%lld panels, %lld blocks each), "
                "%sring %d, streams %d, staged A/C: %s/%s, %s %s, staging %s%s%s%s\n",
                st->a_resident ? "op(A) resident, op(B) streamed (C^T = op(B)^T op(A)^T): " : "",
                (long long)st->block_rows, (long long)st->panel_depth, (long long)st->panel_cols,
                (long long)st->panels, (long long)st->blocks, pieces, (int)st->ring_depth, (int)st->streams,
                st->staged_a ? "yes" : "no", st->staged_c ? "yes" : "no", host ? "block buffers" : "device",
                human_bytes(st->device_bytes, b1, sizeof b1), human_bytes(st->host_bytes, b2, sizeof b2), through,
                st->aligned_tiles ? ", tiles 16-byte aligned" : "",
                st->resident_transposed ? (st->a_resident ? ", op(A) transposed on the device"
                                                          : ", op(B) transposed on the device")
                                        : "");
    if (st->traced) {
        fprintf(out, "timeline: %.3g s from first to last %s; ", st->trace_wall, host ? "operation" : "device op");
        print_busy(out, host, st->busy_h2d, st->busy_compute, st->busy_d2h, st->busy_read, st->busy_write,
                   st->overlap_efficiency);
        fputc('\n', out);
    }
    int nd = stats_ndevices(st);
    if (nd > 1) fprintf(out, "op(B): %s\n", st->b_how);
    for (int i = 0; nd > 1 && i < nd; i++) {
        const ooc_device_stats_t *d = &st->device[i];
        fprintf(out, "  %sdevice %d: %lld block%s, %s %.3g GB, %s %.3g GB, ", host ? "simulated " : "", (int)d->device,
                (long long)d->blocks, d->blocks == 1 ? "" : "s", host ? "in" : "H2D", (double)d->bytes_h2d / 1e9,
                host ? "out" : "D2H", (double)d->bytes_d2h / 1e9);
        if (st->b_shared) fprintf(out, "from peers %.3g GB, ", (double)d->bytes_peer / 1e9);
        fprintf(out, "its last block done at %.3g s", d->seconds);
        if (st->traced) {
            fprintf(out, "; timeline %.3g s, ", d->trace_wall);
            print_busy(out, host, d->busy_h2d, d->busy_compute, d->busy_d2h, d->busy_read, d->busy_write,
                       d->overlap_efficiency);
        }
        fputc('\n', out);
    }
}
