/* SPDX-License-Identifier: MIT */
/*
 * trace.c: the multiply's timeline (see trace.h). Device ops are bracketed
 * by timed events; host ops carry host timestamps; both are put on one time
 * axis by a base event synchronised before the run starts.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io.h"
#include "trace.h"

static const char *const lane_names[OOC_LANES] = {"copy in (H2D)", "compute", "copy out (D2H)",
                                                  "reader (to pinned)", "writer (from pinned)"};

double ooc_trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ooc_trace_discard(ooc_trace_t *t)
{
    for (int i = 0; i < t->pool_size; i++)
        if (t->pool[i]) t->be->ops->event_destroy(t->be, t->pool[i]);
    free(t->pool);
    free(t->recs);
    pthread_mutex_destroy(&t->mu);
    memset(t, 0, sizeof *t);
}

ooc_status_t ooc_trace_begin(ooc_trace_t *t, ooc_be_t *be, int max_ops, ooc_stream_t s, ooc_err_t *err)
{
    memset(t, 0, sizeof *t);
    t->be = be;
    pthread_mutex_init(&t->mu, NULL);
    t->pool_size = 1 + 2 * max_ops; /* event 0 is the base */
    t->pool = calloc((size_t)t->pool_size, sizeof *t->pool);
    t->cap = 2 * max_ops + 64;
    t->recs = malloc((size_t)t->cap * sizeof *t->recs);
    ooc_status_t st = t->pool && t->recs ? OOC_SUCCESS
                                         : OOC_ERR(err, OOC_ERR_HOST_MEMORY, "trace: out of memory for %d ops", max_ops);
    for (int i = 0; st == OOC_SUCCESS && i < t->pool_size; i++) st = be->ops->event_create_timed(be, &t->pool[i], err);
    if (st == OOC_SUCCESS) st = be->ops->event_record(be, t->pool[0], s, err);
    if (st == OOC_SUCCESS) st = be->ops->event_sync(be, t->pool[0], err);
    if (st != OOC_SUCCESS) {
        ooc_trace_discard(t);
        return st;
    }
    t->base_host = ooc_trace_now();
    t->used = 1;
    return OOC_SUCCESS;
}

static void add(ooc_trace_t *t, const ooc_trace_rec_t *r)
{
    pthread_mutex_lock(&t->mu);
    if (t->nrec == t->cap) {
        ooc_trace_rec_t *n = realloc(t->recs, 2 * (size_t)t->cap * sizeof *n);
        if (n) {
            t->recs = n;
            t->cap *= 2;
        }
    }
    if (t->nrec < t->cap) t->recs[t->nrec++] = *r;
    else t->dropped++;
    pthread_mutex_unlock(&t->mu);
}

int ooc_trace_start(ooc_trace_t *t, ooc_stream_t s)
{
    ooc_err_t e;
    ooc_err_clear(&e);
    pthread_mutex_lock(&t->mu);
    int h = t->used + 2 > t->pool_size ? -1 : t->used;
    if (h < 0) t->dropped++;
    else t->used += 2;
    pthread_mutex_unlock(&t->mu);
    if (h < 0 || t->be->ops->event_record(t->be, t->pool[h], s, &e) != OOC_SUCCESS) return -1;
    return h;
}

void ooc_trace_end(ooc_trace_t *t, ooc_stream_t s, int handle, const char *name, int lane, int64_t block)
{
    ooc_err_t e;
    ooc_err_clear(&e);
    if (handle < 0 || t->be->ops->event_record(t->be, t->pool[handle + 1], s, &e) != OOC_SUCCESS) return;
    ooc_trace_rec_t r = {name, lane, block, handle, 0, 0};
    add(t, &r);
}

void ooc_trace_host(ooc_trace_t *t, const char *name, int lane, int64_t block, double t0, double t1)
{
    ooc_trace_rec_t r = {name, lane, block, -1, t0, t1};
    add(t, &r);
}

/* seconds since the base of trace t of record r: start and end */
static int times(ooc_trace_t *t, const ooc_trace_rec_t *r, double *a, double *b, ooc_err_t *err)
{
    if (r->ev < 0) {
        *a = r->t0 - t->base_host;
        *b = r->t1 - t->base_host;
        return 1;
    }
    float ms0, ms1;
    if (t->be->ops->event_elapsed(t->be, t->pool[0], t->pool[r->ev], &ms0, err) != OOC_SUCCESS ||
        t->be->ops->event_elapsed(t->be, t->pool[0], t->pool[r->ev + 1], &ms1, err) != OOC_SUCCESS)
        return 0;
    *a = 1e-3 * ms0;
    *b = 1e-3 * ms1;
    return 1;
}

/* The summary's overlap efficiency from its busy times and wall, within
 * [0, 1]: a device whose engines sat idle longer than they were busy
 * (waiting on the host's staging, or on the other devices at a panel's
 * edge) has a wall above their serial sum, and gained nothing from overlap
 * (0), rather than a negative figure (seen: -0.55 on four GPUs from
 * pageable memory). */
static void efficiency(ooc_trace_summary_t *sum)
{
    double serial = sum->busy[OOC_LANE_IN] + sum->busy[OOC_LANE_COMPUTE] + sum->busy[OOC_LANE_OUT];
    double part = fmax(sum->busy[OOC_LANE_IN], fmax(sum->busy[OOC_LANE_COMPUTE], sum->busy[OOC_LANE_OUT]));
    double e = serial - part > 0 ? (serial - sum->wall) / (serial - part) : NAN;
    sum->overlap_efficiency = isnan(e) ? e : fmin(1.0, fmax(0.0, e));
}

ooc_status_t ooc_trace_finish(ooc_trace_t *const *ts, const int *ids, int n, const char *path,
                              ooc_trace_summary_t *sums, ooc_trace_summary_t *total, ooc_err_t *err)
{
    memset(total, 0, sizeof *total);
    FILE *f = NULL;
    ooc_status_t st = OOC_SUCCESS;
    if (path && *path) {
        /* (its descriptor above 2: a program that closed its standard
         * streams would print into the trace) */
        int fd = ooc_fd_off_std(open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
        f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f == NULL && fd >= 0) close(fd);
        if (f == NULL)
            st = OOC_ERR_FILE(err, ooc_errno_status(errno), path, "trace: cannot create %s: %s", path, strerror(errno));
    }
    /* one time axis: the earliest base; one process (track group) per device */
    double base = INFINITY;
    for (int d = 0; d < n; d++) base = fmin(base, ts[d]->base_host);
    if (f) fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    double first_all = INFINITY, last_all = -INFINITY;
    int dropped = 0;
    for (int d = 0; d < n; d++) {
        ooc_trace_t *t = ts[d];
        ooc_trace_summary_t *sum = &sums[d];
        memset(sum, 0, sizeof *sum);
        int pid = ids[d] + 1;
        if (f) {
            fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"libooc_gemm device %d\"}}",
                    d ? ",\n" : "", pid, ids[d]);
            fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"sort_index\":%d}}", pid, pid);
            for (int l = 0; l < OOC_LANES; l++)
                fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                        pid, l, lane_names[l]);
        }
        double first = INFINITY, last = -INFINITY, shift = t->base_host - base;
        ooc_err_t e;
        ooc_err_clear(&e);
        for (int i = 0; i < t->nrec; i++) {
            const ooc_trace_rec_t *r = &t->recs[i];
            double a, b;
            if (!times(t, r, &a, &b, &e)) continue;
            sum->busy[r->lane] += b - a;
            a += shift;
            b += shift;
            if (r->ev >= 0) {
                first = fmin(first, a);
                last = fmax(last, b);
            }
            if (f)
                fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                           "\"args\":{\"block\":%lld}}",
                        r->name, r->ev >= 0 ? "device" : "host", pid, r->lane, 1e6 * a, 1e6 * (b - a), (long long)r->block);
        }
        sum->wall = last > first ? last - first : 0;
        efficiency(sum);
        first_all = fmin(first_all, first);
        last_all = fmax(last_all, last);
        for (int l = 0; l < OOC_LANES; l++) total->busy[l] += sum->busy[l];
        dropped += t->dropped;
    }
    /* over all devices: the busy times add up, the wall is the sum of each
     * device's (so the efficiency weighs each device by its share) */
    for (int d = 0; d < n; d++) total->wall += sums[d].wall;
    efficiency(total);
    total->wall = last_all > first_all ? last_all - first_all : 0;
    if (f) {
        fprintf(f, "\n],\"otherData\":{\"devices\":%d,\"wall_s\":%.6f,\"busy_h2d_s\":%.6f,\"busy_compute_s\":%.6f,"
                   "\"busy_d2h_s\":%.6f,\"busy_read_s\":%.6f,\"busy_write_s\":%.6f,\"overlap_efficiency\":%.4f,"
                   "\"ops_not_traced\":%d}}\n",
                n, total->wall, total->busy[OOC_LANE_IN], total->busy[OOC_LANE_COMPUTE], total->busy[OOC_LANE_OUT],
                total->busy[OOC_LANE_READ], total->busy[OOC_LANE_WRITE],
                isnan(total->overlap_efficiency) ? -1.0 : total->overlap_efficiency, dropped);
        int bad = ferror(f), why = errno ? errno : EIO;
        if (fclose(f) != 0) {
            bad = 1;
            why = errno;
        }
        if (bad && st == OOC_SUCCESS)
            st = OOC_ERR_FILE(err, ooc_errno_status(why), path, "trace: writing %s: %s", path, strerror(why));
    }
    for (int d = 0; d < n; d++) ooc_trace_discard(ts[d]);
    return st;
}
