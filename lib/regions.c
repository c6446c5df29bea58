/* SPDX-License-Identifier: MIT */
/*
 * regions.c: the registry of pinned host blocks (regions.h).
 */
#include "config.h"

#include <stdlib.h>

#include "regions.h"

int ooc_regions_add(ooc_regions_t *g, const void *p, size_t n)
{
    int rc = 0;
    pthread_mutex_lock(&g->mu);
    if (g->len == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        ooc_region_t *r = realloc(g->r, cap * sizeof *r);
        if (r == NULL) {
            rc = -1;
        } else {
            g->r = r;
            g->cap = cap;
        }
    }
    if (rc == 0) g->r[g->len++] = (ooc_region_t){p, n};
    pthread_mutex_unlock(&g->mu);
    return rc;
}

size_t ooc_regions_take(ooc_regions_t *g, const void *p)
{
    size_t n = 0;
    pthread_mutex_lock(&g->mu);
    for (size_t i = 0; i < g->len && n == 0; i++) {
        if (g->r[i].p == p) {
            n = g->r[i].n;
            g->r[i] = g->r[--g->len];
        }
    }
    if (g->len == 0) {
        free(g->r);
        g->r = NULL;
        g->cap = 0;
    }
    pthread_mutex_unlock(&g->mu);
    return n;
}

int ooc_regions_within(ooc_regions_t *g, const void *p)
{
    const char *c = p;
    int in = 0;
    pthread_mutex_lock(&g->mu);
    for (size_t i = 0; i < g->len && !in; i++) in = c >= g->r[i].p && c < g->r[i].p + g->r[i].n;
    pthread_mutex_unlock(&g->mu);
    return in;
}
