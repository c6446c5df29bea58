/* SPDX-License-Identifier: MIT */
/*
 * probe.c: measures what the floor is made of (docs/PERFORMANCE.md): pinned
 * copy bandwidth each way and the in-core multiply rate, through the same
 * backend ops table the pipeline uses. Not used by the pipeline itself.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "stage.h"

#include "handle.h"

/* Fill n bytes with a cheap non-zero pattern (values in [-1, 1) for floats
 * and doubles alike are not needed: only the rate is measured, but zeros
 * can run faster than real data). */
static void fill(ooc_dtype_t t, void *p, size_t bytes)
{
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    if (t == OOC_R32 || t == OOC_C32) {
        float *f = p;
        for (size_t i = 0; i < bytes / 4; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            f[i] = (float)((double)(x >> 11) * (1.0 / 9007199254740992.0) - 0.5);
        }
    } else {
        double *d = p;
        for (size_t i = 0; i < bytes / 8; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            d[i] = (double)(x >> 11) * (1.0 / 9007199254740992.0) - 0.5;
        }
    }
}

typedef struct {
    ooc_be_t *be;
    void *dev, *pin;
    ooc_stream_t s;
} probe_t;

static void probe_free(probe_t *p)
{
    const ooc_be_ops_t *o = p->be->ops;
    if (p->s) o->stream_destroy(p->be, p->s);
    if (p->dev) o->dev_free(p->be, p->dev);
    if (p->pin) o->host_free(p->be, p->pin);
}

/* bytes of device memory, as many of pinned host memory, a stream. */
static ooc_status_t probe_open(probe_t *p, ooc_be_t *be, size_t bytes, ooc_err_t *err)
{
    *p = (probe_t){be, NULL, NULL, NULL};
    OOC_FORWARD(be->ops->dev_alloc(be, bytes, &p->dev, err));
    OOC_FORWARD(be->ops->host_alloc(be, bytes, 1, &p->pin, err));
    return be->ops->stream_create(be, &p->s, err);
}

static ooc_status_t copy_time(probe_t *p, size_t bytes, ooc_copy_dir_t dir, double *best, ooc_err_t *err)
{
    const ooc_be_ops_t *o = p->be->ops;
    *best = 1e30;
    for (int rep = 0; rep < 4; rep++) { /* the first is a warm-up */
        double t0 = ooc_now();
        if (dir == OOC_H2D) OOC_FORWARD(o->copy2d(p->be, p->dev, bytes, p->pin, bytes, bytes, 1, dir, p->s, err));
        else OOC_FORWARD(o->copy2d(p->be, p->pin, bytes, p->dev, bytes, bytes, 1, dir, p->s, err));
        OOC_FORWARD(o->stream_sync(p->be, p->s, err));
        double t = ooc_now() - t0;
        if (rep > 0 && t < *best) *best = t;
    }
    return OOC_SUCCESS;
}

static ooc_status_t bandwidth(ooc_handle_t *h, size_t bytes, double *h2d, double *d2h)
{
    ooc_err_t *err = &h->err;
    OOC_FORWARD(ooc_handle_backend(h));
    OOC_FORWARD(h->dev[0].be->ops->activate(h->dev[0].be, err));
    probe_t p;
    ooc_status_t st = probe_open(&p, h->dev[0].be, bytes, err);
    double th = 0, td = 0;
    if (st == OOC_SUCCESS) {
        fill(OOC_R64, p.pin, bytes);
        st = copy_time(&p, bytes, OOC_H2D, &th, err);
    }
    if (st == OOC_SUCCESS) st = copy_time(&p, bytes, OOC_D2H, &td, err);
    probe_free(&p);
    if (st != OOC_SUCCESS) return st;
    *h2d = (double)bytes / th;
    *d2h = (double)bytes / td;
    return OOC_SUCCESS;
}

ooc_status_t ooc_measure_bandwidth(ooc_handle_t *h, size_t bytes, double *h2d, double *d2h)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    OOC_RETURN_ERROR_IF(h2d == NULL || d2h == NULL, &h->err, OOC_ERR_NULL_ARG,
                        "ooc_measure_bandwidth: h2d or d2h is NULL");
    OOC_RETURN_ERROR_IF(bytes == 0, &h->err, OOC_ERR_PARAM_RANGE, "ooc_measure_bandwidth: bytes is 0");
    return bandwidth(h, bytes, h2d, d2h);
}

/* Both directions at once: H2D and D2H of `bytes` each on two streams,
 * each way in BOTH_PIECES copies issued alternately (an H2D piece, then a
 * D2H piece); (2 x bytes) / the time both take, best of BOTH_REPS after a
 * warm-up. One link gives less than the sum of the two alone. Measured on
 * an H200 (docs/PERFORMANCE.md, session 49): one copy of 1 GiB each way,
 * best of 3, read 95-98 GB/s in a process's first seconds and 101.5 later,
 * so that a bus-bound job could beat its floor (wide: floor/time 1.05);
 * 16 pieces read 99.6-100.9 throughout. */
enum { BOTH_PIECES = 16, BOTH_REPS = 8 };

static ooc_status_t both_once(probe_t *in, probe_t *out, size_t bytes, ooc_err_t *err)
{
    ooc_be_t *be = in->be;
    const ooc_be_ops_t *o = be->ops;
    size_t pieces = bytes >= (size_t)BOTH_PIECES << 20 ? BOTH_PIECES : 1;
    for (size_t i = 0; i < pieces; i++) {
        size_t b0 = bytes * i / pieces, len = bytes * (i + 1) / pieces - b0;
        char *din = (char *)in->dev + b0, *hin = (char *)in->pin + b0;
        char *dout = (char *)out->dev + b0, *hout = (char *)out->pin + b0;
        OOC_FORWARD(o->copy2d(be, din, len, hin, len, len, 1, OOC_H2D, in->s, err));
        OOC_FORWARD(o->copy2d(be, hout, len, dout, len, len, 1, OOC_D2H, out->s, err));
    }
    OOC_FORWARD(o->stream_sync(be, in->s, err));
    return o->stream_sync(be, out->s, err);
}

static ooc_status_t bandwidth_both(ooc_handle_t *h, size_t bytes, double *both)
{
    ooc_err_t *err = &h->err;
    OOC_FORWARD(ooc_handle_backend(h));
    ooc_be_t *be = h->dev[0].be;
    const ooc_be_ops_t *o = be->ops;
    OOC_FORWARD(o->activate(be, err));
    probe_t in, out = {be, NULL, NULL, NULL};
    ooc_status_t st = probe_open(&in, be, bytes, err);
    if (st == OOC_SUCCESS) st = probe_open(&out, be, bytes, err);
    double best = 1e30;
    if (st == OOC_SUCCESS) fill(OOC_R64, in.pin, bytes);
    for (int rep = 0; st == OOC_SUCCESS && rep <= BOTH_REPS; rep++) { /* the first is a warm-up */
        double t0 = ooc_now();
        st = both_once(&in, &out, bytes, err);
        double t = ooc_now() - t0;
        if (rep > 0 && t < best) best = t;
    }
    probe_free(&in);
    probe_free(&out);
    if (st != OOC_SUCCESS) return st;
    *both = 2.0 * (double)bytes / best;
    return OOC_SUCCESS;
}

ooc_status_t ooc_measure_bandwidth_both(ooc_handle_t *h, size_t bytes, double *both)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    OOC_RETURN_ERROR_IF(both == NULL, &h->err, OOC_ERR_NULL_ARG, "ooc_measure_bandwidth_both: both is NULL");
    OOC_RETURN_ERROR_IF(bytes == 0, &h->err, OOC_ERR_PARAM_RANGE, "ooc_measure_bandwidth_both: bytes is 0");
    return bandwidth_both(h, bytes, both);
}

/* The host's memory bandwidth as a staged multiply uses it. Staging moves
 * each byte three times through host memory (the staging threads read it
 * and write it to pinned memory with streaming stores, a copy engine reads
 * it; the reverse for C), and the threads and the copy engines run at once.
 * Measured two ways, best of HOST_PROBE_RUNS after a warm-up each, with the
 * pool a multiply would use and `bytes` copied by the threads:
 *  - the threads alone: 2 x bytes / time;
 *  - the threads with the first device's copy engines moving pinned memory
 *    both ways all the while (CUDA only): the traffic of all three in the
 *    window in which all three ran, 2 x the threads' bytes plus each
 *    direction's, over the window. The threads alone do not fill the
 *    memory: on an H200 machine a pageable multiply moved 119 GB/s where
 *    they alone measured 105 (docs/PERFORMANCE.md, session 26), and a
 *    floor made of that figure was above the time taken.
 * The larger of the two is the bandwidth. Best of 8, not 3: one bench run
 * measured 98.6 GB/s where the run before it measured 136.8 (session 11); a
 * copy of 1 GiB takes ~15 ms, so 8 cost little. */
#define HOST_PROBE_RUNS 8
#define HOST_PROBE_PIECES 16

/* A transfer of `bytes` in HOST_PROBE_PIECES equal pieces that started at
 * `start` and whose pieces ended at end[] (seconds, one clock): the bytes
 * done by time w (a piece under way counted in proportion). */
static double done_by(const double *end, double start, size_t bytes, double w)
{
    double piece = (double)bytes / HOST_PROBE_PIECES;
    for (int i = 0; i < HOST_PROBE_PIECES; i++) {
        double from = i ? end[i - 1] : start;
        if (end[i] > w) return piece * i + (w > from ? piece * (w - from) / (end[i] - from) : 0.0);
    }
    return (double)bytes;
}

typedef struct {
    probe_t io[2];                       /* [0] host to device, [1] device to host */
    ooc_event_t ev[2][HOST_PROBE_PIECES + 1];
} host_dma_t;

static void host_dma_free(host_dma_t *d)
{
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i <= HOST_PROBE_PIECES; i++)
            if (d->ev[w][i]) d->io[w].be->ops->event_destroy(d->io[w].be, d->ev[w][i]);
        if (d->io[w].be) probe_free(&d->io[w]);
    }
}

static ooc_status_t host_dma_open(host_dma_t *d, ooc_be_t *be, size_t bytes, ooc_err_t *err)
{
    memset(d, 0, sizeof *d);
    for (int w = 0; w < 2; w++) {
        OOC_FORWARD(probe_open(&d->io[w], be, bytes, err));
        for (int i = 0; i <= HOST_PROBE_PIECES; i++) OOC_FORWARD(be->ops->event_create_timed(be, &d->ev[w][i], err));
    }
    return OOC_SUCCESS; /* (what the copy engines move does not change their rate: not filled) */
}

/* One round of all three at once: both directions issued, piece by piece
 * with a timed event after each, then the threads' copy piece by piece,
 * each piece's end taken on the host clock; *traffic is the bytes all
 * three moved through host memory per second in the window all three ran. */
static ooc_status_t host_dma_round(host_dma_t *d, ooc_pool_t *pool, void *pin, const char *src, size_t bytes,
                                   double *traffic, ooc_err_t *err)
{
    ooc_be_t *be = d->io[0].be;
    const ooc_be_ops_t *o = be->ops;
    size_t piece = bytes / HOST_PROBE_PIECES;
    double issued[2];
    for (int w = 0; w < 2; w++) {
        probe_t *p = &d->io[w];
        issued[w] = ooc_now(); /* the stream is idle: its first event runs now */
        OOC_FORWARD(o->event_record(be, d->ev[w][0], p->s, err));
        for (int i = 0; i < HOST_PROBE_PIECES; i++) {
            char *dev = (char *)p->dev + (size_t)i * piece, *host = (char *)p->pin + (size_t)i * piece;
            OOC_FORWARD(w == 0 ? o->copy2d(be, dev, piece, host, piece, piece, 1, OOC_H2D, p->s, err)
                               : o->copy2d(be, host, piece, dev, piece, piece, 1, OOC_D2H, p->s, err));
            OOC_FORWARD(o->event_record(be, d->ev[w][i + 1], p->s, err));
        }
    }
    double t0 = ooc_now(), thr[HOST_PROBE_PIECES], dma[2][HOST_PROBE_PIECES];
    for (int i = 0; i < HOST_PROBE_PIECES; i++) {
        ooc_pool_copy2d(pool, (char *)pin + (size_t)i * piece, piece, src + (size_t)i * piece, piece, piece, 1);
        thr[i] = ooc_now() - t0;
    }
    double w = thr[HOST_PROBE_PIECES - 1];
    for (int k = 0; k < 2; k++) {
        OOC_FORWARD(o->stream_sync(be, d->io[k].s, err));
        for (int i = 0; i < HOST_PROBE_PIECES; i++) {
            float ms = 0;
            OOC_FORWARD(o->event_elapsed(be, d->ev[k][0], d->ev[k][i + 1], &ms, err));
            dma[k][i] = issued[k] - t0 + ms * 1e-3; /* on the threads' clock: from t0 */
        }
        if (dma[k][HOST_PROBE_PIECES - 1] < w) w = dma[k][HOST_PROBE_PIECES - 1];
    }
    size_t all = piece * HOST_PROBE_PIECES;
    /* the window: from t0 (the copy engines started just before) to the
     * first of the three to end; their bytes in it */
    double moved = 2.0 * done_by(thr, 0, all, w);
    for (int k = 0; k < 2; k++) moved += done_by(dma[k], issued[k] - t0, all, w) - done_by(dma[k], issued[k] - t0, all, 0);
    *traffic = w > 0 ? moved / w : 0;
    return OOC_SUCCESS;
}

static ooc_status_t host_bandwidth(ooc_handle_t *h, size_t bytes, double *bw)
{
    ooc_err_t *err = &h->err;
    OOC_FORWARD(ooc_handle_backend(h));
    ooc_be_t *be = h->dev[0].be;
    const ooc_be_ops_t *o = be->ops;
    OOC_FORWARD(o->activate(be, err));
    void *pin = NULL;
    char *src = malloc(bytes);
    OOC_RETURN_ERROR_IF(src == NULL, err, OOC_ERR_HOST_MEMORY, "malloc (%zu bytes): out of memory (host bandwidth probe)",
                        bytes);
    ooc_status_t st = o->host_alloc(be, bytes, 1, &pin, err);
    if (st == OOC_SUCCESS) st = ooc_api_staging_pool(h, err);
    double best = 1e30, most = 0;
    if (st == OOC_SUCCESS) {
        fill(OOC_R64, src, bytes);
        memset(pin, 0, bytes);
        for (int rep = 0; rep <= HOST_PROBE_RUNS; rep++) { /* rep 0 warms up */
            double t0 = ooc_now();
            ooc_pool_copy2d(h->pool, pin, bytes, src, bytes, bytes, 1);
            double t = ooc_now() - t0;
            if (rep > 0 && t < best) best = t;
        }
        most = 2.0 * (double)bytes / best;
    }
    if (st == OOC_SUCCESS && h->be_kind != OOC_BACKEND_HOST && bytes >= HOST_PROBE_PIECES) {
        host_dma_t d;
        st = host_dma_open(&d, be, bytes, err);
        for (int rep = 0; st == OOC_SUCCESS && rep <= HOST_PROBE_RUNS; rep++) {
            double traffic = 0;
            st = host_dma_round(&d, h->pool, pin, src, bytes, &traffic, err);
            if (rep > 0 && traffic > most) most = traffic;
        }
        host_dma_free(&d);
    }
    if (st == OOC_SUCCESS) *bw = most;
    if (pin) o->host_free(be, pin);
    free(src);
    return st;
}

ooc_status_t ooc_measure_host_bandwidth(ooc_handle_t *h, size_t bytes, double *bw)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    OOC_RETURN_ERROR_IF(bw == NULL, &h->err, OOC_ERR_NULL_ARG, "ooc_measure_host_bandwidth: bw is NULL");
    OOC_RETURN_ERROR_IF(bytes == 0, &h->err, OOC_ERR_PARAM_RANGE, "ooc_measure_host_bandwidth: bytes is 0");
    return host_bandwidth(h, bytes, bw);
}

static ooc_status_t rate(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k, int reps,
                         double *flops)
{
    ooc_err_t *err = &h->err;
    size_t e = ooc_dtype_size(t), sa, sb, sc, total;
    OOC_RETURN_ERROR_IF(m > INT32_MAX || n > INT32_MAX || k > INT32_MAX, err, OOC_ERR_PARAM_RANGE,
                        "ooc_measure_gemm_rate: dimensions must fit in 32 bits");
    OOC_RETURN_ERROR_IF(__builtin_mul_overflow((size_t)m * (size_t)k, e, &sa) ||
                            __builtin_mul_overflow((size_t)k * (size_t)n, e, &sb) ||
                            __builtin_mul_overflow((size_t)m * (size_t)n, e, &sc) ||
                            __builtin_add_overflow(sa, sb, &total) || __builtin_add_overflow(total, sc, &total),
                        err, OOC_ERR_OVERFLOW, "ooc_measure_gemm_rate: %lld x %lld x %lld overflows",
                        (long long)m, (long long)n, (long long)k);
    OOC_FORWARD(ooc_handle_backend(h));
    OOC_FORWARD(h->dev[0].be->ops->activate(h->dev[0].be, err));
    const ooc_be_ops_t *o = h->dev[0].be->ops;
    probe_t p = {h->dev[0].be, NULL, NULL, NULL};
    size_t chunk = sa > sb ? sa : sb;
    chunk = chunk > ((size_t)256 << 20) ? ((size_t)256 << 20) : chunk;
    ooc_status_t st = o->dev_alloc(h->dev[0].be, total, &p.dev, err);
    if (st == OOC_SUCCESS) st = o->host_alloc(h->dev[0].be, chunk, 1, &p.pin, err);
    if (st == OOC_SUCCESS) st = o->stream_create(h->dev[0].be, &p.s, err);
    if (st == OOC_SUCCESS) {
        fill(t, p.pin, chunk);
        /* A and B from the random chunk (C is written with beta = 0) */
        for (size_t off = 0; st == OOC_SUCCESS && off < sa + sb; off += chunk) {
            size_t len = sa + sb - off < chunk ? sa + sb - off : chunk;
            st = o->copy2d(h->dev[0].be, (char *)p.dev + off, len, p.pin, len, len, 1, OOC_H2D, p.s, err);
        }
    }
    double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    float onef[2] = {1.0f, 0.0f}, zerof[2] = {0.0f, 0.0f};
    int single = t == OOC_R32 || t == OOC_C32;
    ooc_tile_gemm_t g = {t, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, (int)m, (int)n, (int)k,
                         single ? (void *)onef : (void *)one, single ? (void *)zerof : (void *)zero,
                         p.dev, (char *)p.dev + sa, (char *)p.dev + sa + sb, (int)m, (int)k, (int)m};
    double best = 1e30;
    for (int rep = 0; st == OOC_SUCCESS && rep <= reps; rep++) { /* rep 0 warms up */
        if ((st = o->stream_sync(h->dev[0].be, p.s, err)) != OOC_SUCCESS) break;
        double t0 = ooc_now();
        if ((st = o->gemm(h->dev[0].be, p.s, &g, err)) != OOC_SUCCESS) break;
        if ((st = o->stream_sync(h->dev[0].be, p.s, err)) != OOC_SUCCESS) break;
        double dt = ooc_now() - t0;
        if (rep > 0 && dt < best) best = dt;
    }
    probe_free(&p);
    if (st != OOC_SUCCESS) return st;
    double f = (t == OOC_C32 || t == OOC_C64 ? 8.0 : 2.0) * (double)m * (double)n * (double)k;
    *flops = f / best;
    return OOC_SUCCESS;
}

ooc_status_t ooc_measure_gemm_rate(ooc_handle_t *h, ooc_dtype_t t, int64_t m, int64_t n, int64_t k,
                                   int reps, double *flops)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(t != OOC_R32 && t != OOC_R64 && t != OOC_C32 && t != OOC_C64, err,
                        OOC_ERR_INVALID_DTYPE, "ooc_measure_gemm_rate: dtype %d", (int)t);
    OOC_RETURN_ERROR_IF(m <= 0, err, OOC_ERR_INVALID_M, "ooc_measure_gemm_rate: m = %lld: it times a product, m must be at least 1", (long long)m);
    OOC_RETURN_ERROR_IF(n <= 0, err, OOC_ERR_INVALID_N, "ooc_measure_gemm_rate: n = %lld: it times a product, n must be at least 1", (long long)n);
    OOC_RETURN_ERROR_IF(k <= 0, err, OOC_ERR_INVALID_K, "ooc_measure_gemm_rate: k = %lld: it times a product, k must be at least 1", (long long)k);
    OOC_RETURN_ERROR_IF(flops == NULL, err, OOC_ERR_NULL_ARG, "ooc_measure_gemm_rate: flops is NULL");
    return rate(h, t, m, n, k, reps < 1 ? 1 : reps, flops);
}
