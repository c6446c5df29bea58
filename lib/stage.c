/* SPDX-License-Identifier: MIT */
/*
 * stage.c: the staging thread pool (see stage.h). A copy is cut into pieces
 * of at least PIECE_MIN bytes; helper threads and the submitting thread take
 * pieces until none is left. Knows nothing about CUDA or the pipeline.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "digest.h"
#include "fault.h"
#include "numa.h"
#include "stage.h"

#if defined(__x86_64__) || defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_STREAMING_STORES 1
#endif

#define PIECE_MIN ((size_t)1 << 20)
#define CACHED_PIECE_MIN ((size_t)256 << 10) /* cached copies: small chunks, every thread on each */
#define IO_PIECE_MIN ((size_t)4 << 20) /* file pieces: fewer, larger requests */
#define IO_MAX ((size_t)1 << 30)       /* bytes per system call */

typedef enum { JOB_COPY, JOB_PREAD, JOB_PWRITE, JOB_DIGEST } job_kind_t;

typedef struct job {
    job_kind_t kind;
    int fd;
    uint64_t off;  /* file offset of line 0 (PREAD: source, PWRITE: destination) */
    int error;     /* first failure: errno, or -1 for end of file */
    char *dst;
    const char *src;
    size_t dpitch, spitch, width, height;
    int flat;       /* contiguous on both sides: cut by bytes, not rows */
    int cached;     /* JOB_COPY: plain stores (the destination is to stay in the cache) */
    size_t per;     /* bytes (flat) or rows per piece */
    size_t pieces, next, done;
    struct job *link;
    uint64_t *sums; /* JOB_DIGEST: segment i's digest (of src's bytes from i * OOC_DIGEST_SEG) */
    uint64_t seg0;  /* and the number of its first segment in the block */
} job_t;

struct ooc_pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued, or stop */
    pthread_cond_t fin;  /* a piece finished */
    job_t *jobs;         /* jobs with pieces not yet taken */
    pthread_t *threads;
    int nthreads, stop;
    int node;  /* the NUMA node the helpers keep to (-1: none) */
    int bind;  /* helpers keep to mask, the node's CPUs (given) */
    unsigned long mask[OOC_NUMA_MASK_WORDS];
    int bound; /* helpers whose affinity the node set */
};

/* Move len bytes between memory and the file at off (kind PREAD or PWRITE). */
static int io_all(job_kind_t kind, int fd, char *mem, size_t len, uint64_t off)
{
    int injected = ooc_fault_errno(kind == JOB_PREAD ? OOC_FAULT_READ : OOC_FAULT_WRITE);
    if (injected) return injected;
    while (len > 0) {
        size_t n = len > IO_MAX ? IO_MAX : len;
        ssize_t got = kind == JOB_PREAD ? pread(fd, mem, n, (off_t)off) : pwrite(fd, mem, n, (off_t)off);
        if (got < 0) {
            if (errno == EINTR) continue;
            return errno ? errno : EIO;
        }
        if (got == 0) return kind == JOB_PREAD ? -1 : EIO;
        mem += got;
        off += (uint64_t)got;
        len -= (size_t)got;
    }
    return 0;
}

/*
 * Copy with streaming (non-temporal) stores: the destination's lines are not
 * read into the cache before they are written, so a copied byte costs two
 * passes over memory (read, write) instead of three. glibc's memcpy streams
 * only above a size threshold that staging's lines and pieces are under.
 * Measured on the H200 machine's host (16 cores, kernels/copy_probe.cu):
 * 16 threads copy pageable -> pinned at 38-47 GB/s with memcpy, 60-63 GB/s
 * with streaming stores. Copies under STREAM_MIN bytes use memcpy.
 */
#define STREAM_MIN ((size_t)4096)
static void copy_bytes(char *dst, const char *src, size_t n)
{
#ifdef HAVE_STREAMING_STORES
    if (n >= STREAM_MIN) {
        size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
        memcpy(dst, src, head);
        dst += head, src += head, n -= head;
        for (size_t v = n / 64; v > 0; v--, dst += 64, src += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(src + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(src + 48));
            _mm_stream_si128((__m128i *)(void *)dst, a);
            _mm_stream_si128((__m128i *)(void *)(dst + 16), b);
            _mm_stream_si128((__m128i *)(void *)(dst + 32), c);
            _mm_stream_si128((__m128i *)(void *)(dst + 48), d);
        }
        n %= 64;
    }
#endif
    memcpy(dst, src, n);
}

/* Streaming stores are weakly ordered: make them visible before a piece is
 * reported done (the DMA engine or another thread reads them next). */
static void copy_fence(void)
{
#ifdef HAVE_STREAMING_STORES
    _mm_sfence();
#endif
}

/* Move one line or byte range; returns 0 or the failure. */
static int move(const job_t *j, size_t dst_at, size_t src_at, uint64_t file_at, size_t len)
{
    switch (j->kind) {
    case JOB_COPY:
        if (j->cached) memcpy(j->dst + dst_at, j->src + src_at, len);
        else copy_bytes(j->dst + dst_at, j->src + src_at, len);
        return 0;
    case JOB_PREAD: return io_all(JOB_PREAD, j->fd, j->dst + dst_at, len, j->off + file_at);
    case JOB_PWRITE: return io_all(JOB_PWRITE, j->fd, (char *)j->src + src_at, len, j->off + file_at);
    case JOB_DIGEST: break;
    }
    return EINVAL;
}

static int run_piece_lines(job_t *j, size_t i)
{
    if (j->kind == JOB_DIGEST) { /* segments [i * per, (i + 1) * per) of width bytes */
        size_t nseg = (j->width + OOC_DIGEST_SEG - 1) / OOC_DIGEST_SEG, s1 = (i + 1) * j->per;
        for (size_t s = i * j->per; s < s1 && s < nseg; s++) {
            size_t at = s * OOC_DIGEST_SEG, len = j->width - at < OOC_DIGEST_SEG ? j->width - at : OOC_DIGEST_SEG;
            j->sums[s] = ooc_digest_seg(j->src + at, len, j->seg0 + s);
        }
        return 0;
    }
    if (j->flat) {
        size_t total = j->width * j->height, at = i * j->per;
        size_t len = at + j->per > total ? total - at : j->per;
        return move(j, at, at, at, len);
    }
    /* the file side's pitch: PREAD reads with spitch, PWRITE writes with dpitch */
    size_t fpitch = j->kind == JOB_PWRITE ? j->dpitch : j->spitch;
    size_t r0 = i * j->per, r1 = r0 + j->per > j->height ? j->height : r0 + j->per;
    for (size_t r = r0; r < r1; r++) {
        int e = move(j, r * j->dpitch, r * j->spitch, (uint64_t)r * fpitch, j->width);
        if (e) return e;
    }
    return 0;
}

/* One piece, its streaming stores made visible before it is reported done. */
static int run_piece(job_t *j, size_t i)
{
    int e = run_piece_lines(j, i);
    if (j->kind == JOB_COPY) copy_fence();
    return e;
}

/* with pool->mu held: take the next piece of job j (or of any job if j is
 * NULL); returns the job, or NULL if nothing is left */
static job_t *take(ooc_pool_t *p, job_t *only, size_t *piece)
{
    job_t **link = &p->jobs;
    while (*link && only && *link != only) link = &(*link)->link;
    job_t *j = *link;
    if (j == NULL) return NULL;
    *piece = j->next++;
    if (j->next == j->pieces) *link = j->link; /* all taken: unlink */
    return j;
}

static void finish(ooc_pool_t *p, job_t *j, int error)
{
    pthread_mutex_lock(&p->mu);
    if (error && !j->error) j->error = error;
    if (++j->done == j->pieces) pthread_cond_broadcast(&p->fin);
    pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg)
{
    ooc_pool_t *p = arg;
    if (p->bind && ooc_numa_bind_mask(p->mask)) {
        pthread_mutex_lock(&p->mu);
        p->bound++;
        pthread_mutex_unlock(&p->mu);
    }
    for (;;) {
        size_t piece;
        pthread_mutex_lock(&p->mu);
        job_t *j;
        while ((j = take(p, NULL, &piece)) == NULL && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        pthread_mutex_unlock(&p->mu);
        if (j == NULL) return NULL;
        finish(p, j, run_piece(j, piece));
    }
}

ooc_status_t ooc_pool_create(int nthreads, int node, const unsigned long *cpus, ooc_pool_t **out, ooc_err_t *err)
{
    ooc_pool_t *p = calloc(1, sizeof *p);
    OOC_RETURN_ERROR_IF(p == NULL, err, OOC_ERR_HOST_MEMORY, "malloc: out of memory (staging pool)");
    p->node = node < 0 ? -1 : node;
    p->bind = p->node >= 0 && cpus != NULL;
    if (p->bind) memcpy(p->mask, cpus, sizeof p->mask);
    p->threads = calloc(nthreads > 0 ? (size_t)nthreads : 1, sizeof *p->threads);
    if (p->threads == NULL) {
        free(p);
        return OOC_ERR(err, OOC_ERR_HOST_MEMORY, "malloc: out of memory (staging pool)");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->fin, NULL);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&p->threads[i], NULL, worker, p);
        if (rc != 0) {
            ooc_pool_destroy(p);
            return OOC_ERR(err, OOC_ERR_THREAD, "pthread_create: error %d (staging thread %d)", rc, i);
        }
        p->nthreads = i + 1;
    }
    *out = p;
    return OOC_SUCCESS;
}

void ooc_pool_destroy(ooc_pool_t *p)
{
    if (p == NULL) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->fin);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}

int ooc_pool_threads(const ooc_pool_t *p) { return p ? p->nthreads : 0; }

int ooc_pool_node(const ooc_pool_t *p) { return p ? p->node : -1; }

int ooc_pool_bound(ooc_pool_t *p)
{
    if (p == NULL) return 0;
    pthread_mutex_lock(&p->mu);
    int n = p->bound;
    pthread_mutex_unlock(&p->mu);
    return n;
}

/* Run a job cut into pieces on the pool and the calling thread. */
static int run_job(ooc_pool_t *p, job_t *j)
{
    size_t total = j->width * j->height;
    if (total == 0) return 0;
    if (j->kind == JOB_DIGEST) { /* pieces of whole segments (one line: width bytes) */
        size_t nseg = (total + OOC_DIGEST_SEG - 1) / OOC_DIGEST_SEG, most = (size_t)(p ? p->nthreads : 0) + 1;
        j->per = (nseg + most - 1) / most;
        j->pieces = (nseg + j->per - 1) / j->per;
        if (j->pieces == 1) return run_piece(j, 0);
        goto queue;
    }
    size_t piece_min = j->kind == JOB_COPY ? (j->cached ? CACHED_PIECE_MIN : PIECE_MIN) : IO_PIECE_MIN;
    size_t most = (size_t)(p ? p->nthreads : 0) + 1, pieces = (total + piece_min - 1) / piece_min;
    if (pieces > most) pieces = most;
    if (!j->flat && pieces > j->height) pieces = j->height;
    if (pieces <= 1) {
        j->pieces = 1;
        j->per = j->flat ? total : j->height;
        return run_piece(j, 0);
    }
    if (j->flat) {
        j->per = (total + pieces - 1) / pieces;
        j->per = (j->per + 4095) & ~(size_t)4095; /* whole pages */
        j->pieces = (total + j->per - 1) / j->per;
    } else {
        j->per = (j->height + pieces - 1) / pieces;
        j->pieces = (j->height + j->per - 1) / j->per;
    }

queue:
    pthread_mutex_lock(&p->mu);
    job_t **tail = &p->jobs;
    while (*tail) tail = &(*tail)->link;
    *tail = j;
    pthread_cond_broadcast(&p->work);
    for (;;) { /* take part in our own job */
        size_t piece;
        if (take(p, j, &piece) == NULL) break;
        pthread_mutex_unlock(&p->mu);
        int e = run_piece(j, piece);
        pthread_mutex_lock(&p->mu);
        if (e && !j->error) j->error = e;
        j->done++;
    }
    while (j->done < j->pieces) pthread_cond_wait(&p->fin, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return j->error;
}

static void copy2d(ooc_pool_t *p, void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                   size_t height, int cached)
{
    job_t j = {JOB_COPY, -1, 0, 0, dst, src, dpitch, spitch, width, height,
               dpitch == width && spitch == width, cached, 0, 0, 0, 0, NULL, NULL, 0};
    (void)run_job(p, &j);
}

void ooc_pool_copy2d(ooc_pool_t *p, void *dst, size_t dpitch, const void *src, size_t spitch,
                     size_t width, size_t height)
{
    copy2d(p, dst, dpitch, src, spitch, width, height, 0);
}

void ooc_pool_copy2d_cached(ooc_pool_t *p, void *dst, size_t dpitch, const void *src, size_t spitch,
                            size_t width, size_t height)
{
    copy2d(p, dst, dpitch, src, spitch, width, height, 1);
}

int ooc_pool_pread2d(ooc_pool_t *p, void *dst, size_t dpitch, int fd, uint64_t off, size_t fpitch,
                     size_t width, size_t height)
{
    job_t j = {JOB_PREAD, fd, off, 0, dst, NULL, dpitch, fpitch, width, height,
               dpitch == width && fpitch == width, 0, 0, 0, 0, 0, NULL, NULL, 0};
    return run_job(p, &j);
}

int ooc_pool_pwrite2d(ooc_pool_t *p, int fd, uint64_t off, size_t fpitch, const void *src,
                      size_t spitch, size_t width, size_t height)
{
    job_t j = {JOB_PWRITE, fd, off, 0, NULL, src, fpitch, spitch, width, height,
               fpitch == width && spitch == width, 0, 0, 0, 0, 0, NULL, NULL, 0};
    return run_job(p, &j);
}

#define DIGEST_ROUND 256 /* segments hashed at once (their digests on the stack) */

void ooc_pool_digest(ooc_pool_t *p, ooc_digest_t *d, const void *src, size_t n)
{
    uint64_t sums[DIGEST_ROUND];
    const char *at = src;
    while (n > 0) {
        size_t len = n < DIGEST_ROUND * OOC_DIGEST_SEG ? n : DIGEST_ROUND * OOC_DIGEST_SEG;
        job_t j = {JOB_DIGEST, -1, 0, 0, NULL, at, len, len, len, 1, 1, 0, 0, 0, 0, 0, NULL, sums,
                   d->len / OOC_DIGEST_SEG};
        (void)run_job(p, &j);
        for (size_t s = 0; s * OOC_DIGEST_SEG < len; s++)
            ooc_digest_fold(d, sums[s], len - s * OOC_DIGEST_SEG < OOC_DIGEST_SEG ? len - s * OOC_DIGEST_SEG : OOC_DIGEST_SEG);
        at += len;
        n -= len;
    }
}
