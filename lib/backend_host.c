/* SPDX-License-Identifier: MIT */
/*
 * backend_host.c: the host backend. "Device" memory is ordinary memory, tile
 * multiplies are OpenBLAS, and each stream is a worker thread running its
 * queue in order, with events that behave like CUDA's (backend.h). The same
 * pipeline code therefore runs, with real concurrency between its streams,
 * on a machine without a GPU: a missing stream wait shows up as a wrong
 * result in the tests.
 *
 * OOC_HOST_DEVICES=N simulates N devices (default 1), each instance with its
 * own streams, so that several-device runs (multi.c) are tested without a
 * GPU. Setting OOC_HOST_JITTER_US=N in the environment delays every queued
 * op by a random 0..N microseconds, to shake out ordering bugs in tests;
 * "N0,N1,..." gives each device its own (uneven devices);
 * OOC_HOST_D2H_DELAY_US=N delays every copy to the host by N microseconds
 * (a slow copy-out, for the tests). OOC_HOST_ALIGNED=1 refuses a tile
 * multiply whose operands or columns do not start 16-byte aligned (the
 * pipeline's device tiles must, for cuBLAS's fast kernels: the tests check
 * it here). OOC_FAULT
 * (fault.h) makes an allocation, a copy or a multiply fail when enqueued, or
 * an op fail while it runs: that failure is sticky, as CUDA's are: every
 * later op is skipped and every synchronisation reports it.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "backend.h"
#include "fault.h"
#include "joblimits.h"
#include "regions.h"

typedef enum { OP_COPY, OP_GEMM, OP_WAIT, OP_STAMP, OP_TRANSPOSE } op_kind_t;

typedef struct hstream hstream_t;
typedef struct hevent hevent_t;

typedef struct hop {
    op_kind_t kind;
    struct hop *next;
    union {
        struct {
            void *dst;
            const void *src;
            size_t dpitch, spitch, width, height;
            int d2h;
        } copy;
        struct {
            ooc_tile_gemm_t g;
            double alpha[2], beta[2]; /* g.alpha/g.beta point here */
        } gemm;
        struct {
            const char *a;
            char *b;
            size_t e;
            int m, n, lda, ldb;
        } tr;
        struct {
            hstream_t *s;
            uint64_t target;
        } wait;
        hevent_t *stamp; /* timed event reached: note the time */
    } u;
} hop_t;

typedef struct hbe hbe_t;

struct hstream {
    hbe_t *be;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hop_t *head, *tail;
    uint64_t enqueued, done;
    int stop;
};

struct hevent {
    hstream_t *s; /* NULL: never recorded (complete) */
    uint64_t target;
    int timed;
    double stamp; /* seconds, when a timed event was reached */
};

/* "Pinned" host memory (host_alloc): the process's, as cudaHostAlloc's
 * portable memory is, not one instance's: every device sees it pinned, and
 * it outlives the instance (a handle reopens its backend when its settings
 * change, and the caller's blocks must stay), until host_free. */
static ooc_regions_t pinned = OOC_REGIONS_INIT;

struct hbe {
    ooc_be_t base;
    unsigned jitter_us, d2h_delay_us;
    int aligned;        /* OOC_HOST_ALIGNED: tiles must be 16-byte aligned */
    int device;         /* which simulated device (OOC_HOST_DEVICES) */
    atomic_int failed;  /* an op failed while running: sticky, as a CUDA error */
};

/* The sticky failure, once an op has failed while running. */
static ooc_status_t sticky(hbe_t *be, const char *call, ooc_err_t *err)
{
    if (!atomic_load(&be->failed)) return OOC_SUCCESS;
    return OOC_ERR(err, OOC_ERR_CUDA,
                   "%s: an earlier operation failed while it ran (host device %d, injected by OOC_FAULT=exec)", call,
                   be->device);
}

/* Sleep us microseconds (a second or more too: nanosleep refuses a
 * tv_nsec of 10^9 or more, and slept nothing). */
static void sleep_us(unsigned us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    nanosleep(&ts, NULL);
}

static void jitter(hbe_t *be)
{
    if (be->jitter_us == 0) return;
    static __thread unsigned seed;
    if (seed == 0) seed = (unsigned)(uintptr_t)&seed ^ (unsigned)time(NULL);
    sleep_us((unsigned)rand_r(&seed) % be->jitter_us);
}

static void copy2d_now(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                       size_t height)
{
    if (dpitch == width && spitch == width) {
        memcpy(dst, src, width * height);
        return;
    }
    for (size_t r = 0; r < height; r++)
        memcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
}

static void gemm_now(const ooc_tile_gemm_t *g)
{
    enum CBLAS_ORDER lo = (enum CBLAS_ORDER)g->layout;
    enum CBLAS_TRANSPOSE ta = (enum CBLAS_TRANSPOSE)g->ta, tb = (enum CBLAS_TRANSPOSE)g->tb;
    switch (g->dtype) {
    case OOC_R32:
        cblas_sgemm(lo, ta, tb, g->m, g->n, g->k, *(const float *)g->alpha, g->A, g->lda, g->B,
                    g->ldb, *(const float *)g->beta, g->C, g->ldc);
        break;
    case OOC_R64:
        cblas_dgemm(lo, ta, tb, g->m, g->n, g->k, *(const double *)g->alpha, g->A, g->lda, g->B,
                    g->ldb, *(const double *)g->beta, g->C, g->ldc);
        break;
    case OOC_C32:
        cblas_cgemm(lo, ta, tb, g->m, g->n, g->k, g->alpha, g->A, g->lda, g->B, g->ldb, g->beta,
                    g->C, g->ldc);
        break;
    case OOC_C64:
        cblas_zgemm(lo, ta, tb, g->m, g->n, g->k, g->alpha, g->A, g->lda, g->B, g->ldb, g->beta,
                    g->C, g->ldc);
        break;
    }
}

/* B (n x m, ldb) = A^T (A m x n, lda), elements of e bytes */
static void transpose_now(const char *a, int m, int n, int lda, char *b, int ldb, size_t e)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            memcpy(b + ((size_t)i * (size_t)ldb + (size_t)j) * e, a + ((size_t)j * (size_t)lda + (size_t)i) * e, e);
}

static void wait_done(hstream_t *s, uint64_t target)
{
    pthread_mutex_lock(&s->mu);
    while (s->done < target) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

static void *stream_main(void *arg)
{
    hstream_t *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (s->head == NULL && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
        hop_t *op = s->head;
        if (op == NULL) { /* stop requested and queue drained */
            pthread_mutex_unlock(&s->mu);
            return NULL;
        }
        s->head = op->next;
        if (s->head == NULL) s->tail = NULL;
        pthread_mutex_unlock(&s->mu);

        jitter(s->be);
        /* an op failing as it runs: it and every later op are skipped (their
         * results are never produced), and every sync reports it */
        if (op->kind != OP_WAIT && op->kind != OP_STAMP && ooc_fault_hit(OOC_FAULT_EXEC))
            atomic_store(&s->be->failed, 1);
        if (atomic_load(&s->be->failed) && op->kind != OP_WAIT && op->kind != OP_STAMP) {
            free(op);
            pthread_mutex_lock(&s->mu);
            s->done++;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        switch (op->kind) {
        case OP_COPY:
            if (op->u.copy.d2h && s->be->d2h_delay_us) sleep_us(s->be->d2h_delay_us);
            if (op->u.copy.d2h && ooc_fault_hit(OOC_FAULT_LOSE)) break; /* lost, silently (the tests' check) */
            copy2d_now(op->u.copy.dst, op->u.copy.dpitch, op->u.copy.src, op->u.copy.spitch,
                       op->u.copy.width, op->u.copy.height);
            break;
        case OP_GEMM: gemm_now(&op->u.gemm.g); break;
        case OP_TRANSPOSE:
            transpose_now(op->u.tr.a, op->u.tr.m, op->u.tr.n, op->u.tr.lda, op->u.tr.b, op->u.tr.ldb, op->u.tr.e);
            break;
        case OP_WAIT: wait_done(op->u.wait.s, op->u.wait.target); break;
        case OP_STAMP: {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            op->u.stamp->stamp = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
            break;
        }
        }
        free(op);

        pthread_mutex_lock(&s->mu);
        s->done++;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
}

static ooc_status_t enqueue(hstream_t *s, hop_t *op)
{
    op->next = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->tail) s->tail->next = op;
    else s->head = op;
    s->tail = op;
    s->enqueued++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return OOC_SUCCESS;
}

static ooc_status_t new_op(op_kind_t kind, hop_t **op, ooc_err_t *err)
{
    *op = calloc(1, sizeof **op);
    OOC_RETURN_ERROR_IF(*op == NULL, err, OOC_ERR_HOST_MEMORY, "malloc: out of memory (host stream op)");
    (*op)->kind = kind;
    return OOC_SUCCESS;
}

/* ---- ops table ---- */

/* cblas.h declares these for OpenBLAS; another CBLAS has neither */
#ifdef HAVE_OPENBLAS_GET_CORENAME
char *openblas_get_corename(void);
#endif
#ifdef HAVE_OPENBLAS_GET_CONFIG
char *openblas_get_config(void);
#endif
#ifdef HAVE_OPENBLAS_GET_NUM_THREADS
int openblas_get_num_threads(void);
#endif

/* Copy the characters of s that a compute id may hold (handle.c), at most
 * n of them, to out (cap bytes); the count written. */
static size_t id_part(const char *s, size_t n, char *out, size_t cap)
{
    size_t w = 0;
    for (size_t i = 0; s && s[i] && i < n && w + 1 < cap; i++) {
        char c = s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
            c == '_')
            out[w++] = c;
    }
    if (cap) out[w] = '\0';
    return w;
}

void ooc_backend_host_id(char *buf, size_t cap)
{
    /* "openblas-<version>/<core>/<T>-thread(s)": OpenBLAS picks its kernels by
     * the CPU (OPENBLAS_CORETYPE overrides), and kernels round differently;
     * and its multiplies split among its threads (OPENBLAS_NUM_THREADS, else
     * one per core) round differently too (measured: 1 and 2 threads give
     * other last bits) */
    const char *cfg = "", *core = "";
    int threads = 0;
#ifdef HAVE_OPENBLAS_GET_CONFIG
    cfg = openblas_get_config(); /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
#endif
#ifdef HAVE_OPENBLAS_GET_CORENAME
    core = openblas_get_corename();
#endif
#ifdef HAVE_OPENBLAS_GET_NUM_THREADS
    threads = openblas_get_num_threads();
#endif
    const char *ver = cfg && strncmp(cfg, "OpenBLAS ", 9) == 0 ? cfg + 9 : "";
    char v[64], c[64];
    id_part(ver, strcspn(ver, " "), v, sizeof v);
    id_part(core && *core ? core : "unknown", sizeof c, c, sizeof c);
    if (threads > 0) snprintf(buf, cap, "openblas-%s/%s/%d-thread%s", v, c, threads, threads == 1 ? "" : "s");
    else snprintf(buf, cap, "openblas-%s/%s", v, c);
}

int ooc_backend_host_devices(void)
{
    const char *v = getenv("OOC_HOST_DEVICES");
    if (v == NULL || *v == '\0') return 1;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end != '\0' || n < 1 || n > OOC_MAX_DEVICES) return 0; /* nonsense: no device, and opening one says why */
    return (int)n;
}

/* A delay in microseconds from an entry of a test variable (up to a comma
 * or the end): digits only, at most a minute (sleep_us sleeps a second or
 * more too); anything else ("-1", "5x", " 7") reads as none, as the man
 * page says (strtoul would wrap -1 to hours, and read "5x" as 5). *next:
 * the entry after the comma, NULL at the end. */
#define MAX_TEST_DELAY_US 60000000UL
static unsigned test_delay_us(const char *s, const char **next)
{
    size_t n = strcspn(s, ",");
    *next = s[n] == ',' ? s + n + 1 : NULL;
    if (n == 0 || strspn(s, "0123456789") != n) return 0;
    unsigned long v = strtoul(s, NULL, 10);
    return v < MAX_TEST_DELAY_US ? (unsigned)v : (unsigned)MAX_TEST_DELAY_US;
}

/* Device d's jitter from OOC_HOST_JITTER_US: one value for every device, or
 * a comma-separated list, one per device (the last one for the devices
 * beyond it), so that tests can make some devices slower than others. */
static unsigned device_jitter(int device)
{
    const char *j = getenv("OOC_HOST_JITTER_US");
    unsigned v = 0;
    for (int d = 0; j != NULL && *j != '\0'; d++) {
        const char *next;
        v = test_delay_us(j, &next);
        if (d == device || next == NULL) break;
        j = next;
    }
    return v;
}

static ooc_status_t h_open(ooc_be_t **out, int device, int math, ooc_err_t *err)
{
    (void)math;
    int n = ooc_backend_host_devices();
    OOC_RETURN_ERROR_IF(n == 0, err, OOC_ERR_NO_DEVICE, "OOC_HOST_DEVICES='%s' is not a number of devices (1 to %d)",
                        getenv("OOC_HOST_DEVICES"), OOC_MAX_DEVICES);
    OOC_RETURN_ERROR_IF(device < 0 || device >= n, err, OOC_ERR_NO_DEVICE,
                        "host device %d requested but the host backend simulates %d (OOC_HOST_DEVICES=N for more)",
                        device, n);
    hbe_t *be = calloc(1, sizeof *be);
    OOC_RETURN_ERROR_IF(be == NULL, err, OOC_ERR_HOST_MEMORY, "malloc: out of memory (host backend)");
    be->base.ops = &ooc_backend_host_ops;
    be->device = device;
    atomic_init(&be->failed, 0);
    be->jitter_us = device_jitter(device);
    const char *d = getenv("OOC_HOST_D2H_DELAY_US");
    const char *next = NULL;
    /* (a second or more too, as sleep_us sleeps it: clamped below one
     * second, test_reliability 12d's 2 s hold left its SIGTERM at 1 s
     * 0.15 s to spare; at most a minute) */
    be->d2h_delay_us = d ? test_delay_us(d, &next) : 0;
    if (next != NULL) be->d2h_delay_us = 0; /* (one value, not a list) */
    const char *a = getenv("OOC_HOST_ALIGNED");
    be->aligned = a && strcmp(a, "1") == 0;
    *out = &be->base;
    return OOC_SUCCESS;
}

static void h_close(ooc_be_t *b)
{
    hbe_t *be = (hbe_t *)b;
    if (be == NULL) return;
    free(be); /* not the pinned blocks: the process's (pinned) */
}

static ooc_status_t h_activate(ooc_be_t *b, ooc_err_t *err)
{
    (void)b;
    (void)err;
    return OOC_SUCCESS;
}

static ooc_status_t h_mem_info(ooc_be_t *b, size_t *free_bytes, size_t *total_bytes, ooc_err_t *err)
{
    (void)b;
    /* the "device" is this job's memory (the RAM, or its cgroup's limit
     * where lower), shared with the caller's matrices: offer half of what
     * the job may take now */
    ooc_limits_t lim;
    ooc_limits_get(&lim);
    OOC_RETURN_ERROR_IF(lim.mem_limit == 0, err, OOC_ERR_INTERNAL, "cannot read the memory size (%s)",
                        lim.limit_source);
    *total_bytes = lim.mem_limit > SIZE_MAX ? SIZE_MAX : (size_t)lim.mem_limit;
    *free_bytes = lim.mem_available / 2 > SIZE_MAX ? SIZE_MAX : (size_t)(lim.mem_available / 2);
    return OOC_SUCCESS;
}

static ooc_status_t h_dev_alloc(ooc_be_t *b, size_t bytes, void **ptr, ooc_err_t *err)
{
    (void)b;
    *ptr = ooc_fault_hit(OOC_FAULT_DEV_ALLOC) ? NULL : malloc(bytes ? bytes : 1);
    OOC_RETURN_ERROR_IF(*ptr == NULL, err, OOC_ERR_DEVICE_MEMORY,
                        "malloc: cannot allocate %zu bytes of host-backend device memory", bytes);
    return OOC_SUCCESS;
}

static void h_dev_free(ooc_be_t *b, void *ptr)
{
    (void)b;
    free(ptr);
}

static ooc_status_t h_host_alloc(ooc_be_t *b, size_t bytes, int staging, void **ptr, ooc_err_t *err)
{
    (void)b;
    (void)staging; /* one kind of memory here */
    void *p = ooc_fault_hit(OOC_FAULT_HOST_ALLOC) ? NULL : malloc(bytes ? bytes : 1);
    OOC_RETURN_ERROR_IF(p == NULL, err, OOC_ERR_HOST_MEMORY,
                        "malloc: cannot allocate %zu bytes of pinned host memory", bytes);
    if (ooc_regions_add(&pinned, p, bytes ? bytes : 1) != 0) {
        free(p);
        return OOC_ERR(err, OOC_ERR_HOST_MEMORY, "realloc: out of memory (pinned registry)");
    }
    *ptr = p;
    return OOC_SUCCESS;
}

static int h_host_free(ooc_be_t *b, void *ptr)
{
    (void)b;
    if (ptr == NULL) return 0;
    if (ooc_regions_take(&pinned, ptr) == 0) return -1;
    free(ptr);
    return 0;
}

static ooc_status_t h_classify(ooc_be_t *b, const void *ptr, int *is_pinned, ooc_err_t *err)
{
    (void)b, (void)err;
    *is_pinned = ooc_regions_within(&pinned, ptr);
    return OOC_SUCCESS;
}

static ooc_status_t h_stream_create(ooc_be_t *b, ooc_stream_t *out, ooc_err_t *err)
{
    hstream_t *s = calloc(1, sizeof *s);
    OOC_RETURN_ERROR_IF(s == NULL, err, OOC_ERR_HOST_MEMORY, "malloc: out of memory (host stream)");
    s->be = (hbe_t *)b;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    int rc = pthread_create(&s->thread, NULL, stream_main, s);
    if (rc != 0) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return OOC_ERR(err, OOC_ERR_THREAD, "pthread_create: error %d (host stream)", rc);
    }
    *out = s;
    return OOC_SUCCESS;
}

static void h_stream_destroy(ooc_be_t *b, ooc_stream_t st)
{
    (void)b;
    hstream_t *s = st;
    if (s == NULL) return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static ooc_status_t h_stream_sync(ooc_be_t *b, ooc_stream_t st, ooc_err_t *err)
{
    hstream_t *s = st;
    pthread_mutex_lock(&s->mu);
    while (s->done < s->enqueued) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    return sticky((hbe_t *)b, "stream_sync", err);
}

static ooc_status_t h_event_create(ooc_be_t *b, ooc_event_t *ev, ooc_err_t *err)
{
    (void)b;
    hevent_t *e = calloc(1, sizeof *e);
    OOC_RETURN_ERROR_IF(e == NULL, err, OOC_ERR_HOST_MEMORY, "malloc: out of memory (host event)");
    *ev = e;
    return OOC_SUCCESS;
}

static void h_event_destroy(ooc_be_t *b, ooc_event_t ev)
{
    (void)b;
    free(ev);
}

static ooc_status_t h_event_record(ooc_be_t *b, ooc_event_t ev, ooc_stream_t st, ooc_err_t *err)
{
    (void)b;
    hevent_t *e = ev;
    hstream_t *s = st;
    if (e->timed) {
        hop_t *op;
        OOC_FORWARD(new_op(OP_STAMP, &op, err));
        op->u.stamp = e;
        OOC_FORWARD(enqueue(s, op));
    }
    pthread_mutex_lock(&s->mu);
    e->s = s;
    e->target = s->enqueued;
    pthread_mutex_unlock(&s->mu);
    return OOC_SUCCESS;
}

static ooc_status_t h_event_create_timed(ooc_be_t *b, ooc_event_t *ev, ooc_err_t *err)
{
    OOC_FORWARD(h_event_create(b, ev, err));
    ((hevent_t *)*ev)->timed = 1;
    return OOC_SUCCESS;
}

static ooc_status_t h_event_elapsed(ooc_be_t *b, ooc_event_t a, ooc_event_t e, float *ms, ooc_err_t *err)
{
    (void)b;
    const hevent_t *x = a, *y = e;
    OOC_RETURN_ERROR_IF(!x->timed || !y->timed, err, OOC_ERR_INTERNAL, "event_elapsed: event without timing");
    *ms = (float)((y->stamp - x->stamp) * 1e3);
    return OOC_SUCCESS;
}

static void h_range_push(ooc_be_t *b, const char *name)
{
    (void)b;
    (void)name;
}

static void h_range_pop(ooc_be_t *b) { (void)b; }

static ooc_status_t h_stream_wait(ooc_be_t *b, ooc_stream_t st, ooc_event_t ev, ooc_err_t *err)
{
    (void)b;
    hevent_t *e = ev;
    if (e->s == NULL || e->s == st) return OOC_SUCCESS; /* complete, or ordered already */
    hop_t *op;
    OOC_FORWARD(new_op(OP_WAIT, &op, err));
    op->u.wait.s = e->s;
    op->u.wait.target = e->target;
    return enqueue(st, op);
}

static ooc_status_t h_event_sync(ooc_be_t *b, ooc_event_t ev, ooc_err_t *err)
{
    hevent_t *e = ev;
    if (e->s != NULL) wait_done(e->s, e->target);
    return sticky((hbe_t *)b, "event_sync", err);
}

static ooc_status_t h_copy2d(ooc_be_t *b, void *dst, size_t dpitch, const void *src, size_t spitch,
                             size_t width, size_t height, ooc_copy_dir_t dir, ooc_stream_t st,
                             ooc_err_t *err)
{
    OOC_FORWARD(sticky((hbe_t *)b, "copy2d", err));
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_COPY), err, OOC_ERR_CUDA,
                        "copy2d (%s, %zu x %zu bytes): failure injected by OOC_FAULT=copy (host backend)",
                        dir == OOC_H2D ? "to the device" : "to the host", height, width);
    OOC_RETURN_ERROR_IF(dpitch < width || spitch < width, err, OOC_ERR_INTERNAL,
                        "copy2d: pitch (%zu, %zu) smaller than width %zu", dpitch, spitch, width);
    hop_t *op;
    OOC_FORWARD(new_op(OP_COPY, &op, err));
    op->u.copy.dst = dst;
    op->u.copy.src = src;
    op->u.copy.dpitch = dpitch;
    op->u.copy.spitch = spitch;
    op->u.copy.width = width;
    op->u.copy.height = height;
    op->u.copy.d2h = dir == OOC_D2H;
    return enqueue(st, op);
}

static ooc_status_t h_gemm(ooc_be_t *b, ooc_stream_t st, const ooc_tile_gemm_t *g, ooc_err_t *err)
{
    OOC_FORWARD(sticky((hbe_t *)b, "gemm", err));
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_GEMM), err, OOC_ERR_CUBLAS,
                        "gemm (%d x %d x %d): failure injected by OOC_FAULT=gemm (host backend)", g->m, g->n, g->k);
    size_t e = ooc_dtype_size(g->dtype);
    uintptr_t off = (uintptr_t)g->A | (uintptr_t)g->B | (uintptr_t)g->C | (uintptr_t)((size_t)g->lda * e) |
                    (uintptr_t)((size_t)g->ldb * e) | (uintptr_t)((size_t)g->ldc * e);
    OOC_RETURN_ERROR_IF(((hbe_t *)b)->aligned && off % 16 != 0, err, OOC_ERR_INTERNAL,
                        "gemm (%d x %d x %d, ld %d %d %d): a tile not 16-byte aligned (OOC_HOST_ALIGNED, host backend)",
                        g->m, g->n, g->k, g->lda, g->ldb, g->ldc);
    hop_t *op;
    OOC_FORWARD(new_op(OP_GEMM, &op, err));
    op->u.gemm.g = *g;
    /* alpha and beta are read when the op runs: keep copies of their values */
    memcpy(op->u.gemm.alpha, g->alpha, ooc_dtype_size(g->dtype));
    memcpy(op->u.gemm.beta, g->beta, ooc_dtype_size(g->dtype));
    op->u.gemm.g.alpha = op->u.gemm.alpha;
    op->u.gemm.g.beta = op->u.gemm.beta;
    return enqueue(st, op);
}

static ooc_status_t h_transpose(ooc_be_t *b, ooc_stream_t st, ooc_dtype_t dtype, int m, int n, const void *A, int lda,
                                void *B, int ldb, ooc_err_t *err)
{
    OOC_FORWARD(sticky((hbe_t *)b, "transpose", err));
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_GEMM), err, OOC_ERR_CUDA,
                        "transpose (%d x %d): failure injected by OOC_FAULT=gemm (host backend)", m, n);
    OOC_RETURN_ERROR_IF(m < 0 || n < 0 || lda < (m > 1 ? m : 1) || ldb < (n > 1 ? n : 1), err, OOC_ERR_INTERNAL,
                        "transpose (%d x %d, ld %d %d): a leading dimension too small", m, n, lda, ldb);
    if (m == 0 || n == 0) return OOC_SUCCESS;
    hop_t *op;
    OOC_FORWARD(new_op(OP_TRANSPOSE, &op, err));
    op->u.tr.a = A;
    op->u.tr.b = B;
    op->u.tr.e = ooc_dtype_size(dtype);
    op->u.tr.m = m;
    op->u.tr.n = n;
    op->u.tr.lda = lda;
    op->u.tr.ldb = ldb;
    return enqueue(st, op);
}

/* Simulated devices share the process's memory: any may read another's. */
static ooc_status_t h_peer_enable(ooc_be_t *b, ooc_be_t *peer, int *ok, ooc_err_t *err)
{
    (void)b, (void)peer, (void)err;
    *ok = 1;
    return OOC_SUCCESS;
}

static ooc_status_t h_copy_peer(ooc_be_t *b, void *dst, ooc_be_t *peer, const void *src, size_t bytes,
                                ooc_stream_t st, ooc_err_t *err)
{
    OOC_FORWARD(sticky((hbe_t *)b, "copy_peer", err));
    OOC_FORWARD(sticky((hbe_t *)peer, "copy_peer", err));
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_COPY), err, OOC_ERR_CUDA,
                        "copy_peer (%zu bytes from host device %d): failure injected by OOC_FAULT=copy (host backend)",
                        bytes, ((hbe_t *)peer)->device);
    hop_t *op;
    OOC_FORWARD(new_op(OP_COPY, &op, err));
    op->u.copy.dst = dst;
    op->u.copy.src = src;
    op->u.copy.dpitch = op->u.copy.spitch = op->u.copy.width = bytes;
    op->u.copy.height = 1;
    return enqueue(st, op);
}

const ooc_be_ops_t ooc_backend_host_ops = {
    .name = "host",
    .open = h_open,
    .close = h_close,
    .activate = h_activate,
    .mem_info = h_mem_info,
    .dev_alloc = h_dev_alloc,
    .dev_free = h_dev_free,
    .host_alloc = h_host_alloc,
    .host_free = h_host_free,
    .classify = h_classify,
    .stream_create = h_stream_create,
    .stream_create_urgent = h_stream_create,
    .stream_destroy = h_stream_destroy,
    .stream_sync = h_stream_sync,
    .event_create = h_event_create,
    .event_destroy = h_event_destroy,
    .event_record = h_event_record,
    .stream_wait = h_stream_wait,
    .event_sync = h_event_sync,
    .event_create_timed = h_event_create_timed,
    .event_elapsed = h_event_elapsed,
    .range_push = h_range_push,
    .range_pop = h_range_pop,
    .copy2d = h_copy2d,
    .gemm = h_gemm,
    .peer_enable = h_peer_enable,
    .copy_peer = h_copy_peer,
    .transpose = h_transpose,
};
