/* SPDX-License-Identifier: MIT */
/*
 * digest.c: the block digest (see digest.h). Each segment is read as 64-bit
 * little-endian words into four lanes, each lane a multiply-rotate
 * accumulator (four independent chains keep the multipliers busy); the
 * lanes, the segment's length and its number are then mixed together and
 * through a 64-bit finalizer. A block's digest folds its segments' digests
 * in order, then its length.
 */
#include "config.h"

#include <string.h>

#include "digest.h"

#define K1 0x9e3779b97f4a7c15ULL
#define K2 0xc2b2ae3d27d4eb4fULL
#define K3 0x165667b19e3779f9ULL

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

static inline uint64_t lane(uint64_t acc, uint64_t w)
{
    acc += w * K2;
    acc = rotl(acc, 31);
    return acc * K1;
}

static inline uint64_t finalize(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

uint64_t ooc_digest_seg(const void *bytes, size_t n, uint64_t s)
{
    const unsigned char *p = bytes;
    uint64_t a = s + K1 + K2, b = s + K2, c = s, d = s - K1;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a = lane(a, load64(p + i));
        b = lane(b, load64(p + i + 8));
        c = lane(c, load64(p + i + 16));
        d = lane(d, load64(p + i + 24));
    }
    uint64_t h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18);
    for (; i + 8 <= n; i += 8) h = rotl(h ^ lane(0, load64(p + i)), 27) * K1 + K3;
    if (i < n) { /* the last 1-7 bytes, zero-padded (the length below tells them apart) */
        unsigned char t[8] = {0};
        memcpy(t, p + i, n - i);
        h = rotl(h ^ lane(0, load64(t)), 27) * K1 + K3;
    }
    return finalize(h ^ (uint64_t)n * K3 ^ s * K2);
}

void ooc_digest_init(ooc_digest_t *d)
{
    d->h = K3;
    d->len = 0;
}

void ooc_digest_fold(ooc_digest_t *d, uint64_t seg, size_t n)
{
    d->h = finalize(d->h ^ seg) + K1;
    d->len += n;
}

void ooc_digest_bytes(ooc_digest_t *d, const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    for (size_t at = 0; at < n; at += OOC_DIGEST_SEG) {
        size_t len = n - at < OOC_DIGEST_SEG ? n - at : OOC_DIGEST_SEG;
        ooc_digest_fold(d, ooc_digest_seg(p + at, len, d->len / OOC_DIGEST_SEG), len);
    }
}

uint64_t ooc_digest_final(const ooc_digest_t *d) { return finalize(d->h ^ d->len * K2); }
