/* SPDX-License-Identifier: MIT */
/*
 * regions.h: a process-wide registry of host memory blocks the backends
 * allocated as pinned (their start and size), guarded by its own mutex:
 * host_free finds a block's size and refuses a pointer it never gave, and
 * the host backend's classify asks whether a pointer lies in one. The host
 * backend (its "pinned" malloc blocks) and the CUDA module (the staging it
 * maps and registers) each keep one.
 */
#ifndef OOC_REGIONS_H
#define OOC_REGIONS_H

#include <pthread.h>
#include <stddef.h>

typedef struct {
    const char *p;
    size_t n;
} ooc_region_t;

typedef struct {
    pthread_mutex_t mu;
    ooc_region_t *r;
    size_t len, cap;
} ooc_regions_t;

#define OOC_REGIONS_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0}

/* Record the block [p, p + n): 0, or -1 out of memory (nothing recorded). */
int ooc_regions_add(ooc_regions_t *g, const void *p, size_t n);

/* Remove the block that starts at p: its size, or 0 when none does. The
 * registry's own array goes once it is empty (no leak at exit). */
size_t ooc_regions_take(ooc_regions_t *g, const void *p);

/* 1 when p lies within a recorded block. */
int ooc_regions_within(ooc_regions_t *g, const void *p);

#endif
