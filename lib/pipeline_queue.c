/* SPDX-License-Identifier: MIT */
/*
 * pipeline_queue.c: the queue of row blocks that the pipelines of one run
 * share (one device: a queue of one; pipeline.h says how it is used), and
 * the shared op(B)'s bookkeeping. Host-side synchronisation only: it issues
 * no device operation.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "pipeline.h"

void ooc_queue_init(ooc_queue_t *q, const ooc_plan_t *pl, const unsigned char *done, int devices)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    q->pl = pl;
    q->done = done;
    q->devices = devices;
    q->panel = -1;
    q->left_panel = -1;
    for (int j = 0; j < OOC_MAX_B_CHUNKS; j++) q->posted[j] = -1;
}

void ooc_queue_destroy(ooc_queue_t *q)
{
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
}

int ooc_queue_enter(ooc_queue_t *q, int64_t panel)
{
    pthread_mutex_lock(&q->mu);
    if (++q->arrived == q->devices) { /* the last one in opens the panel */
        q->arrived = 0;
        q->panel = panel;
        q->next = 0;
        int64_t g0 = panel * q->pl->m_blocks;
        q->needed = 0;
        for (int64_t i = 0; i < q->pl->m_blocks && !q->needed; i++) q->needed = !ooc_block_done(q->done, g0 + i);
        pthread_cond_broadcast(&q->cv);
    }
    while (q->panel < panel && !q->aborted) pthread_cond_wait(&q->cv, &q->mu);
    int ok = !q->aborted;
    pthread_mutex_unlock(&q->mu);
    return ok;
}

int64_t ooc_queue_claim(ooc_queue_t *q, int64_t panel)
{
    pthread_mutex_lock(&q->mu);
    int64_t b = -1, g0 = panel * q->pl->m_blocks;
    if (!q->aborted && q->panel == panel) {
        while (q->next < q->pl->m_blocks && ooc_block_done(q->done, g0 + q->next)) q->next++;
        if (q->next < q->pl->m_blocks) b = q->next++;
    }
    pthread_mutex_unlock(&q->mu);
    return b;
}

void ooc_queue_abort(ooc_queue_t *q)
{
    pthread_mutex_lock(&q->mu);
    q->aborted = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void ooc_queue_register(ooc_queue_t *q, int rank, ooc_be_t *be, char *dB, const ooc_event_t *ev_b)
{
    pthread_mutex_lock(&q->mu);
    q->be[rank] = be;
    q->dB[rank] = dB;
    memcpy(q->ev_b[rank], ev_b, sizeof q->ev_b[rank]);
    pthread_mutex_unlock(&q->mu);
}

void ooc_queue_post(ooc_queue_t *q, int j, int64_t panel)
{
    pthread_mutex_lock(&q->mu);
    q->posted[j] = panel;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

int ooc_queue_wait_posted(ooc_queue_t *q, int j, int64_t panel, ooc_be_t **be, char **dB, ooc_event_t *ev)
{
    pthread_mutex_lock(&q->mu);
    while (q->posted[j] < panel && !q->aborted) pthread_cond_wait(&q->cv, &q->mu);
    int ok = !q->aborted, owner = j % q->devices;
    *be = q->be[owner];
    *dB = q->dB[owner];
    *ev = q->ev_b[owner][j];
    pthread_mutex_unlock(&q->mu);
    return ok;
}

int ooc_queue_leave(ooc_queue_t *q, int64_t panel)
{
    pthread_mutex_lock(&q->mu);
    if (++q->left == q->devices) {
        q->left = 0;
        q->left_panel = panel;
        pthread_cond_broadcast(&q->cv);
    }
    while (q->left_panel < panel && !q->aborted) pthread_cond_wait(&q->cv, &q->mu);
    int ok = !q->aborted;
    pthread_mutex_unlock(&q->mu);
    return ok;
}
