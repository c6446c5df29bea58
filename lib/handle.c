/* SPDX-License-Identifier: MIT */
/*
 * handle.c: the handle's life (create, destroy), its options (set, get,
 * bounds), its reports (last error, stats, backend name), the version, and
 * opening the backend the options ask for.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "handle.h"
#include "module.h"

unsigned ooc_version_number(void) { return OOC_VERSION_NUMBER; }

#define OOC_STR2(x) #x
#define OOC_STR(x) OOC_STR2(x)
const char *ooc_version_string(void)
{
    return OOC_STR(OOC_VERSION_MAJOR) "." OOC_STR(OOC_VERSION_MINOR) "." OOC_STR(OOC_VERSION_PATCH);
}

ooc_status_t ooc_create(ooc_handle_t **handle)
{
    if (handle == NULL) return OOC_ERR_NULL_ARG;
    ooc_handle_t *h = calloc(1, sizeof *h);
    if (h == NULL) return OOC_ERR_HOST_MEMORY;
    atomic_init(&h->cancel, 0);
    *handle = h;
    return OOC_SUCCESS;
}

static void close_backend(ooc_handle_t *h)
{
    for (int d = 0; d < h->ndev; d++) {
        ooc_dev_t *dev = &h->dev[d];
        ooc_res_release(dev->be, &dev->res);
        if (dev->be) dev->be->ops->close(dev->be);
        memset(dev, 0, sizeof *dev);
    }
    h->ndev = 0;
    memset(&h->peer, 0, sizeof h->peer);
}

void ooc_handle_close_backend(ooc_handle_t *h) { close_backend(h); }

void ooc_destroy(ooc_handle_t *h)
{
    if (h == NULL) return;
    ooc_pool_destroy(h->pool);
    close_backend(h);
    free(h->trace_path);
    free(h);
}

/* Non-zero values each parameter takes; 0 ("automatic") is always accepted. */
static int bounds(ooc_param_t p, int64_t *lo, int64_t *hi)
{
    switch (p) {
    case OOC_PARAM_BACKEND: *lo = OOC_BACKEND_AUTO; *hi = OOC_BACKEND_HOST; return 1;
    case OOC_PARAM_DEVICE: *lo = 0; *hi = 1023; return 1;
    case OOC_PARAM_DEVICE_MEM: *lo = 1; *hi = INT64_MAX; return 1;
    case OOC_PARAM_HOST_MEM: *lo = 1; *hi = INT64_MAX; return 1;
    case OOC_PARAM_BLOCK_ROWS: *lo = 1; *hi = (int64_t)1 << 30; return 1;
    case OOC_PARAM_RING_DEPTH: *lo = 2; *hi = OOC_MAX_RING; return 1;
    case OOC_PARAM_STAGING_THREADS: *lo = 1; *hi = 256; return 1;
    case OOC_PARAM_MATH_MODE: *lo = OOC_MATH_STRICT; *hi = OOC_MATH_TF32; return 1;
    case OOC_PARAM_STREAMS: *lo = 3; *hi = OOC_MAX_STREAMS; return 1;
    case OOC_PARAM_TAIL: *lo = 1; *hi = 6; return 1;
    case OOC_PARAM_B_CHUNKS: *lo = 1; *hi = OOC_MAX_B_CHUNKS; return 1;
    case OOC_PARAM_DEVICES: *lo = 1; *hi = ((int64_t)1 << OOC_MAX_DEVICES) - 1; return 1;
    case OOC_PARAM_PEER_B: *lo = OOC_PEER_B_HOST; *hi = OOC_PEER_B_SHARE; return 1;
    case OOC_PARAM_A_PIECES: *lo = 1; *hi = OOC_PLAN_MAX_A_PIECES; return 1;
    case OOC_PARAM_STAGE_CHUNK: *lo = 1; *hi = (int64_t)1 << 40; return 1;
    case OOC_PARAM_STAGE_C: *lo = 1; *hi = 1; return 1;
    }
    return 0;
}

/* Its name, for messages ("parameter 6" says little); "?" for one not named here. */
static const char *param_name(ooc_param_t p)
{
    static const char *const names[] = {NULL, "BACKEND", "DEVICE", "DEVICE_MEM", "HOST_MEM", "BLOCK_ROWS",
                                        "RING_DEPTH", "STAGING_THREADS", "MATH_MODE", "STREAMS", "TAIL",
                                        "B_CHUNKS", "DEVICES", "PEER_B", "A_PIECES", "STAGE_CHUNK", "STAGE_C"};
    return (int)p > 0 && (size_t)p < sizeof names / sizeof names[0] && names[p] ? names[p] : "?";
}

ooc_status_t ooc_param_bounds(ooc_param_t param, int64_t *lower, int64_t *upper)
{
    int64_t lo, hi;
    if (!bounds(param, &lo, &hi)) return OOC_ERR_INVALID_PARAM;
    if (lower == NULL || upper == NULL) return OOC_ERR_NULL_ARG;
    *lower = lo;
    *upper = hi;
    return OOC_SUCCESS;
}

ooc_status_t ooc_set(ooc_handle_t *h, ooc_param_t param, int64_t value)
{
    int64_t lo, hi;
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    if (!bounds(param, &lo, &hi))
        return OOC_ERR(&h->err, OOC_ERR_INVALID_PARAM, "ooc_set: unknown parameter %d", (int)param);
    if (value != 0 && (value < lo || value > hi))
        return OOC_ERR(&h->err, OOC_ERR_PARAM_RANGE,
                       "ooc_set: value %lld for OOC_PARAM_%s (%d) outside [%lld, %lld] (or 0 for automatic)",
                       (long long)value, param_name(param), (int)param, (long long)lo, (long long)hi);
    h->param[param] = value;
    return OOC_SUCCESS;
}

ooc_status_t ooc_get(const ooc_handle_t *h, ooc_param_t param, int64_t *value)
{
    int64_t lo, hi;
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_t *err = ooc_handle_err(h);
    ooc_err_clear(err);
    if (!bounds(param, &lo, &hi))
        return OOC_ERR(err, OOC_ERR_INVALID_PARAM, "ooc_get: unknown parameter %d", (int)param);
    OOC_RETURN_ERROR_IF(value == NULL, err, OOC_ERR_NULL_ARG, "ooc_get: value is NULL");
    *value = h->param[param];
    return OOC_SUCCESS;
}

const char *ooc_last_error(const ooc_handle_t *h)
{
    if (h == NULL) return "invalid handle (NULL)";
    return h->err.msg;
}

const char *ooc_last_error_path(const ooc_handle_t *h)
{
    if (h == NULL || h->err.status == OOC_SUCCESS || h->err.path[0] == '\0') return NULL;
    return h->err.path;
}

ooc_status_t ooc_cancel(ooc_handle_t *h)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    atomic_store(&h->cancel, 1); /* lock-free: safe in a signal handler */
    return OOC_SUCCESS;
}

const char *ooc_backend_name(const ooc_handle_t *h)
{
    return (h && h->dev[0].be) ? h->dev[0].be->ops->name : "none";
}

ooc_status_t ooc_set_trace(ooc_handle_t *h, const char *path)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    char *copy = NULL;
    if (path && *path && (copy = strdup(path)) == NULL)
        return OOC_ERR(&h->err, OOC_ERR_HOST_MEMORY, "ooc_set_trace: out of memory");
    free(h->trace_path);
    h->trace_path = copy;
    return OOC_SUCCESS;
}

ooc_status_t ooc_get_stats(const ooc_handle_t *h, ooc_stats_t *stats)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(ooc_handle_err(h));
    OOC_RETURN_ERROR_IF(stats == NULL, ooc_handle_err(h), OOC_ERR_NULL_ARG, "ooc_get_stats: stats is NULL");
    if (!h->have_stats) {
        memset(stats, 0, sizeof *stats);
        stats->blocks_mismatched = h->mismatched_seen;
    } else {
        *stats = h->stats;
    }
    return OOC_SUCCESS;
}

/* The devices the options name, in increasing order: OOC_PARAM_DEVICES's
 * bits, else OOC_PARAM_DEVICE alone, else every one of `visible` (device 0
 * when there is none, so that opening it says why). */
static int device_list(const ooc_handle_t *h, int visible, int *list)
{
    int64_t mask = h->param[OOC_PARAM_DEVICES];
    int n = 0;
    if (mask != 0) {
        for (int d = 0; d < OOC_MAX_DEVICES; d++)
            if (mask >> d & 1) list[n++] = d;
    } else if (h->param[OOC_PARAM_DEVICE] != 0) {
        list[n++] = (int)h->param[OOC_PARAM_DEVICE];
    } else {
        if (visible > OOC_MAX_DEVICES) visible = OOC_MAX_DEVICES;
        for (int d = 0; d < visible; d++) list[n++] = d;
        if (n == 0) list[n++] = 0;
    }
    return n;
}

ooc_status_t ooc_handle_backend(ooc_handle_t *h)
{
    OOC_FORWARD(ooc_fault_check(&h->err));
    int kind = (int)h->param[OOC_PARAM_BACKEND];
    int math = (int)h->param[OOC_PARAM_MATH_MODE];
    const ooc_be_ops_t *ops = NULL;

    const ooc_cuda_state_t *cuda = NULL;
    if (kind == OOC_BACKEND_AUTO) {
        cuda = ooc_cuda_state(); /* loads the CUDA module the first time */
        kind = cuda->gpus > 0 ? OOC_BACKEND_CUBLAS : OOC_BACKEND_HOST;
    }
    int visible = 0;
    switch (kind) {
    case OOC_BACKEND_HOST:
        ops = &ooc_backend_host_ops;
        visible = ooc_backend_host_devices();
        break;
    case OOC_BACKEND_CUBLAS:
    case OOC_BACKEND_CUSTOM: /* our kernels for real tiles; complex tiles still go to cuBLAS */
        cuda = ooc_cuda_state();
        if (cuda->mod == NULL)
            return OOC_ERR(&h->err, OOC_ERR_BACKEND_UNAVAILABLE, "backend %s: %s",
                           kind == OOC_BACKEND_CUBLAS ? "cublas" : "custom", cuda->why);
        if (cuda->gpus == 0)
            return OOC_ERR(&h->err, OOC_ERR_NO_DEVICE, "backend %s: %s",
                           kind == OOC_BACKEND_CUBLAS ? "cublas" : "custom", cuda->why);
        ops = kind == OOC_BACKEND_CUBLAS ? cuda->mod->cuda_ops : cuda->mod->custom_ops;
        visible = cuda->gpus;
        break;
    default: return OOC_ERR(&h->err, OOC_ERR_INTERNAL, "backend %d", kind);
    }
    int list[OOC_MAX_DEVICES];
    int n = device_list(h, visible, list);
    int same = h->ndev == n && h->be_kind == kind && h->be_math == math;
    for (int d = 0; same && d < n; d++) same = h->dev[d].index == list[d];
    if (same) return OOC_SUCCESS;
    close_backend(h);
    for (int d = 0; d < n; d++) {
        ooc_status_t st = ops->open(&h->dev[d].be, list[d], math, &h->err);
        if (st != OOC_SUCCESS) {
            h->ndev = d; /* close those opened */
            close_backend(h);
            return st;
        }
        h->dev[d].index = list[d];
        h->dev[d].numa_asked = 0;
        h->ndev = d + 1;
    }
    h->be_kind = kind;
    h->be_math = math;
    return OOC_SUCCESS;
}

/* How this build sums a block: bumped with every change that gives a block
 * other last bits (a tile's multiply split otherwise, padding that moves
 * cuBLAS to other kernels: backend.h ooc_tiles_aligned, k-pieces' bounds),
 * so that a resume refuses a journal whose blocks an earlier build summed
 * otherwise, as it refuses another backend's, even while the version stays.
 * 2: float64 tiles aligned and split (docs/PERFORMANCE.md session 40); 3:
 * float64 of cuBLAS's pair NT with op(B) transposed on the device, then
 * aligned and split (session 41); ids before 2 ended in the version alone. */
#define OOC_SUM_SCHEME "3"

static int kind_cmp(const void *a, const void *b) { return memcmp(a, b, 3 * sizeof(int)); }

ooc_status_t ooc_handle_id(ooc_handle_t *h, int cplx, char id[OOC_COMPUTE_ID_MAX])
{
    const size_t cap = OOC_COMPUTE_ID_MAX;
    /* this library's version and summation scheme end it: its pipeline
     * decides how a block is summed (pieces, chunks, our kernels), and may
     * change with it */
    const char *lib = "/ooc-" PACKAGE_VERSION "+sum" OOC_SUM_SCHEME;
    OOC_FORWARD(ooc_handle_backend(h));
    if (h->be_kind == OOC_BACKEND_HOST) {
        char part[OOC_COMPUTE_ID_MAX - 64];
        ooc_backend_host_id(part, sizeof part);
        snprintf(id, cap, "host/%s%s", part, lib);
        return OOC_SUCCESS;
    }
    /* a GPU backend: cuBLAS promises the same bits for one version on GPUs
     * of one architecture and number of SMs; each kind of device once, in
     * one order whatever the devices' (memcmp's: any fixed order does) */
    const ooc_cuda_module_t *mod = ooc_cuda_state()->mod;
    int v = mod->blas_version();
    /* the custom backend multiplies complex tiles with cuBLAS, as cublas does */
    int custom = h->be_kind == OOC_BACKEND_CUSTOM && !cplx;
    int at = snprintf(id, cap, "%s/%d.%d.%d/", custom ? "custom" : "cublas", v / 10000,
                      v / 100 % 100, v % 100);
    int kinds[OOC_MAX_DEVICES][3], nk = 0;
    for (int d = 0; d < h->ndev; d++) {
        ooc_device_info_t info;
        OOC_FORWARD(mod->device(h->dev[d].index, &info, &h->err));
        int kind[3] = {info.compute_major, info.compute_minor, info.multiprocessors}, seen = 0;
        for (int i = 0; i < nk && !seen; i++) seen = memcmp(kinds[i], kind, sizeof kind) == 0;
        if (!seen) memcpy(kinds[nk++], kind, sizeof kind);
    }
    qsort(kinds, (size_t)nk, sizeof kinds[0], kind_cmp);
    for (int i = 0; i < nk; i++) {
        int n = snprintf(id + at, cap - (size_t)at, "%ssm_%d%dx%d", i > 0 ? "+" : "", kinds[i][0], kinds[i][1],
                         kinds[i][2]);
        OOC_RETURN_ERROR_IF(n < 0 || (size_t)(at + n) >= cap, &h->err, OOC_ERR_INTERNAL,
                            "ooc_compute_id: the devices' kinds do not fit %zu bytes", cap);
        at += n;
    }
    int n = snprintf(id + at, cap - (size_t)at, "%s", lib);
    OOC_RETURN_ERROR_IF(n < 0 || (size_t)(at + n) >= cap, &h->err, OOC_ERR_INTERNAL,
                        "ooc_compute_id: the devices' kinds do not fit %zu bytes", cap);
    return OOC_SUCCESS;
}

static ooc_status_t compute_id(ooc_handle_t *h, const char *fn, int cplx, char *id, size_t cap)
{
    OOC_RETURN_ERROR_IF(id == NULL, &h->err, OOC_ERR_NULL_ARG, "%s: id is NULL", fn);
    OOC_RETURN_ERROR_IF(cap < OOC_COMPUTE_ID_MAX, &h->err, OOC_ERR_INVALID_PARAM,
                        "%s: cap %zu is below OOC_COMPUTE_ID_MAX (%d)", fn, cap, OOC_COMPUTE_ID_MAX);
    return ooc_handle_id(h, cplx, id);
}

ooc_status_t ooc_compute_id(ooc_handle_t *h, char *id, size_t cap)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    return compute_id(h, "ooc_compute_id", 0, id, cap);
}

ooc_status_t ooc_compute_id_for(ooc_handle_t *h, ooc_dtype_t dtype, char *id, size_t cap)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    OOC_RETURN_ERROR_IF(dtype < OOC_R32 || dtype > OOC_C64, &h->err, OOC_ERR_INVALID_DTYPE,
                        "ooc_compute_id_for: unknown dtype %d", (int)dtype);
    return compute_id(h, "ooc_compute_id_for", dtype == OOC_C32 || dtype == OOC_C64, id, cap);
}

ooc_status_t ooc_host_alloc(ooc_handle_t *h, size_t bytes, void **ptr)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    if (ptr == NULL) return OOC_ERR(&h->err, OOC_ERR_NULL_ARG, "ooc_host_alloc: ptr is NULL");
    OOC_FORWARD(ooc_handle_backend(h));
    return h->dev[0].be->ops->host_alloc(h->dev[0].be, bytes, 0, ptr, &h->err);
}

ooc_status_t ooc_host_free(ooc_handle_t *h, void *ptr)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    if (ptr == NULL) return OOC_SUCCESS;
    /* the memory outlives backend instances (closed after a device failure,
     * or another handle's): free it through this handle's, opened if need be */
    if (h->dev[0].be == NULL) OOC_FORWARD(ooc_handle_backend(h));
    OOC_RETURN_ERROR_IF(h->dev[0].be->ops->host_free(h->dev[0].be, ptr) != 0, &h->err, OOC_ERR_INVALID_PARAM,
                        "ooc_host_free: %p is not a block from ooc_host_alloc (with a backend of this kind: %s): "
                        "nothing freed", ptr, ooc_backend_name(h));
    return OOC_SUCCESS;
}
