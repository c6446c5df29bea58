/* SPDX-License-Identifier: MIT */
/*
 * stage.c: the staging thread pool (see stage.h). A copy is cut into pieces
 * of at least PIECE_MIN bytes; helper threads and the submitting thread take
 * pieces until none is left. Knows nothing about CUDA or the pipeline.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stage.h"

#define PIECE_MIN ((size_t)1 << 20)

typedef struct job {
    char *dst;
    const char *src;
    size_t dpitch, spitch, width, height;
    int flat;       /* contiguous on both sides: cut by bytes, not rows */
    size_t per;     /* bytes (flat) or rows per piece */
    size_t pieces, next, done;
    struct job *link;
} job_t;

struct ooc_pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued, or stop */
    pthread_cond_t fin;  /* a piece finished */
    job_t *jobs;         /* jobs with pieces not yet taken */
    pthread_t *threads;
    int nthreads, stop;
};

static void run_piece(job_t *j, size_t i)
{
    if (j->flat) {
        size_t total = j->width * j->height, off = i * j->per;
        size_t len = off + j->per > total ? total - off : j->per;
        memcpy(j->dst + off, j->src + off, len);
        return;
    }
    size_t r0 = i * j->per, r1 = r0 + j->per > j->height ? j->height : r0 + j->per;
    for (size_t r = r0; r < r1; r++) memcpy(j->dst + r * j->dpitch, j->src + r * j->spitch, j->width);
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

static void finish(ooc_pool_t *p, job_t *j)
{
    pthread_mutex_lock(&p->mu);
    if (++j->done == j->pieces) pthread_cond_broadcast(&p->fin);
    pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg)
{
    ooc_pool_t *p = arg;
    for (;;) {
        size_t piece;
        pthread_mutex_lock(&p->mu);
        job_t *j;
        while ((j = take(p, NULL, &piece)) == NULL && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        pthread_mutex_unlock(&p->mu);
        if (j == NULL) return NULL;
        run_piece(j, piece);
        finish(p, j);
    }
}

ooc_status_t ooc_pool_create(int nthreads, ooc_pool_t **out, ooc_err_t *err)
{
    ooc_pool_t *p = calloc(1, sizeof *p);
    OOC_RETURN_ERROR_IF(p == NULL, err, OOC_ERR_HOST_MEMORY, "malloc: out of memory (staging pool)");
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

void ooc_pool_copy2d(ooc_pool_t *p, void *dst, size_t dpitch, const void *src, size_t spitch,
                     size_t width, size_t height)
{
    size_t total = width * height;
    if (total == 0) return;
    job_t j = {dst, src, dpitch, spitch, width, height, dpitch == width && spitch == width, 0, 0, 0, 0, NULL};
    size_t most = (size_t)(p ? p->nthreads : 0) + 1, pieces = (total + PIECE_MIN - 1) / PIECE_MIN;
    if (pieces > most) pieces = most;
    if (!j.flat && pieces > height) pieces = height;
    if (pieces <= 1) {
        j.pieces = 1;
        j.per = j.flat ? total : height;
        run_piece(&j, 0);
        return;
    }
    if (j.flat) {
        j.per = (total + pieces - 1) / pieces;
        j.per = (j.per + 63) & ~(size_t)63; /* whole cache lines */
        j.pieces = (total + j.per - 1) / j.per;
    } else {
        j.per = (height + pieces - 1) / pieces;
        j.pieces = (height + j.per - 1) / j.per;
    }

    pthread_mutex_lock(&p->mu);
    job_t **tail = &p->jobs;
    while (*tail) tail = &(*tail)->link;
    *tail = &j;
    pthread_cond_broadcast(&p->work);
    for (;;) { /* take part in our own copy */
        size_t piece;
        if (take(p, &j, &piece) == NULL) break;
        pthread_mutex_unlock(&p->mu);
        run_piece(&j, piece);
        pthread_mutex_lock(&p->mu);
        j.done++;
    }
    while (j.done < j.pieces) pthread_cond_wait(&p->fin, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
