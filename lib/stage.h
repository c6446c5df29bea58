/* SPDX-License-Identifier: MIT */
/*
 * stage.h: the staging thread pool. Copies between pageable memory or files
 * and the pinned staging ring, split across host threads (one thread's memcpy
 * reaches a fraction of the memory bandwidth). Several threads may submit
 * copies at once (the pipeline's reader and writer); each call returns when
 * its own copy is complete. The calling thread takes part in its copy.
 */
#ifndef OOC_STAGE_H
#define OOC_STAGE_H

#include <stddef.h>

#include "digest.h"
#include "error.h"

typedef struct ooc_pool ooc_pool_t;

/* nthreads helper threads (>= 0; 0: the caller copies alone), for NUMA
 * node `node` (-1: none; ooc_pool_node says it). With node >= 0 and cpus
 * (OOC_NUMA_MASK_WORDS words, as ooc_numa_node_cpus gave them) each helper
 * keeps to those CPUs (numa.h ooc_numa_bind_mask); else the threads run
 * where the kernel puts them. */
ooc_status_t ooc_pool_create(int nthreads, int node, const unsigned long *cpus, ooc_pool_t **pool, ooc_err_t *err);
void ooc_pool_destroy(ooc_pool_t *pool); /* NULL is fine */
int ooc_pool_threads(const ooc_pool_t *pool);
int ooc_pool_node(const ooc_pool_t *pool); /* as created, -1 for none */
/* helpers whose affinity the node changed so far (they set it as they start) */
int ooc_pool_bound(ooc_pool_t *pool);

/* height rows of width bytes from src (row pitch spitch) to dst (dpitch) */
void ooc_pool_copy2d(ooc_pool_t *pool, void *dst, size_t dpitch, const void *src, size_t spitch,
                     size_t width, size_t height);

/* The same with plain stores, for a small destination that is to stay in
 * the CPU's cache (ooc_pool_copy2d streams its stores past the cache) */
void ooc_pool_copy2d_cached(ooc_pool_t *pool, void *dst, size_t dpitch, const void *src, size_t spitch,
                            size_t width, size_t height);

/* The same between a file and memory: line r of the file part starts at
 * byte off + r * fpitch. Return 0, an errno value, or -1 when the file ended
 * before all bytes were read (truncated). */
int ooc_pool_pread2d(ooc_pool_t *pool, void *dst, size_t dpitch, int fd, uint64_t off, size_t fpitch,
                     size_t width, size_t height);
int ooc_pool_pwrite2d(ooc_pool_t *pool, int fd, uint64_t off, size_t fpitch, const void *src,
                      size_t spitch, size_t width, size_t height);

/* Feed n bytes at src to digest d (ooc_digest_bytes), their segments hashed
 * by the pool's threads and the caller; d's length so far must be a whole
 * number of segments (every part but a block's last is). */
void ooc_pool_digest(ooc_pool_t *pool, ooc_digest_t *d, const void *src, size_t n);

#endif
