/* SPDX-License-Identifier: MIT */
/*
 * digest.h: the 64-bit digest of a block of C's bytes, which the journal
 * records beside each finished block of a file multiply and a resume checks
 * against the file before it keeps the block (journal.h, files.c). Fast
 * (several GB/s a thread), cut into segments the staging pool hashes in
 * parallel (stage.h ooc_pool_digest), the same value whichever thread or how
 * many hash them. Meant to catch accidents (bytes overwritten, lost or torn
 * by a crash), not forgery. Knows nothing of CUDA, files or the pipeline.
 */
#ifndef OOC_DIGEST_H
#define OOC_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* The bytes are hashed in segments of this many (the last one shorter);
 * segment s of a block is hashed with s as its seed. */
#define OOC_DIGEST_SEG ((size_t)1 << 20)

/* A digest being made: the segments so far, folded in their order. */
typedef struct {
    uint64_t h;
    uint64_t len; /* bytes so far: a multiple of OOC_DIGEST_SEG until the last part */
} ooc_digest_t;

void ooc_digest_init(ooc_digest_t *d);
/* The digest of segment s (n bytes, at most OOC_DIGEST_SEG) */
uint64_t ooc_digest_seg(const void *bytes, size_t n, uint64_t s);
/* Fold the next segment's digest (of n bytes) into d. */
void ooc_digest_fold(ooc_digest_t *d, uint64_t seg, size_t n);
/* Bytes fed to d one segment after another, on this thread. */
void ooc_digest_bytes(ooc_digest_t *d, const void *bytes, size_t n);
/* The digest of everything fed. */
uint64_t ooc_digest_final(const ooc_digest_t *d);

#endif
