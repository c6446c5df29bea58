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
 * issued together; (2 x bytes) / the time both take, best of 3 after a
 * warm-up. One link gives less than the sum of the two alone. */
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
    for (int rep = 0; st == OOC_SUCCESS && rep < 4; rep++) { /* the first is a warm-up */
        double t0 = ooc_now();
        st = o->copy2d(be, in.dev, bytes, in.pin, bytes, bytes, 1, OOC_H2D, in.s, err);
        if (st == OOC_SUCCESS) st = o->copy2d(be, out.pin, bytes, out.dev, bytes, bytes, 1, OOC_D2H, out.s, err);
        if (st == OOC_SUCCESS) st = o->stream_sync(be, in.s, err);
        if (st == OOC_SUCCESS) st = o->stream_sync(be, out.s, err);
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

/* The staging threads' copy, ordinary memory -> the backend's host memory
 * (pinned on a GPU): `bytes` with the pool a multiply would use, best of
 * HOST_PROBE_RUNS after a warm-up; memory bandwidth = 2 x bytes copied per
 * second (each byte read once, written once with streaming stores). Best of
 * 8, not 3: one bench run measured 98.6 GB/s where the run before it
 * measured 136.8 and the staging itself moved 115 (docs/PERFORMANCE.md);
 * a copy of 1 GiB takes ~15 ms, so 8 cost little. */
#define HOST_PROBE_RUNS 8
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
    double best = 1e30;
    if (st == OOC_SUCCESS) {
        fill(OOC_R64, src, bytes);
        memset(pin, 0, bytes);
        for (int rep = 0; rep <= HOST_PROBE_RUNS; rep++) { /* rep 0 warms up */
            double t0 = ooc_now();
            ooc_pool_copy2d(h->pool, pin, bytes, src, bytes, bytes, 1);
            double t = ooc_now() - t0;
            if (rep > 0 && t < best) best = t;
        }
        *bw = 2.0 * (double)bytes / best;
    }
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
    OOC_RETURN_ERROR_IF(m <= 0, err, OOC_ERR_INVALID_M, "ooc_measure_gemm_rate: m = %lld", (long long)m);
    OOC_RETURN_ERROR_IF(n <= 0, err, OOC_ERR_INVALID_N, "ooc_measure_gemm_rate: n = %lld", (long long)n);
    OOC_RETURN_ERROR_IF(k <= 0, err, OOC_ERR_INVALID_K, "ooc_measure_gemm_rate: k = %lld", (long long)k);
    OOC_RETURN_ERROR_IF(flops == NULL, err, OOC_ERR_NULL_ARG, "ooc_measure_gemm_rate: flops is NULL");
    return rate(h, t, m, n, k, reps < 1 ? 1 : reps, flops);
}
