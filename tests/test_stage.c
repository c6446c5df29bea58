/* SPDX-License-Identifier: MIT */
/*
 * test_stage.c: the staging pool (lib/stage.c) on its own: 2-D and flat
 * copies, with streaming or plain stores, by pools of 0 to 5 helpers,
 * against a plain loop on random bytes of odd widths, pitches and heights
 * (each checked the moment the call returns, and the bytes between the
 * destination's lines untouched); two threads copying on one pool at once
 * (the pipeline's reader and writer).
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "stage.h"
#include "testutil.h"

static uint64_t seed = 0x5eed5ea6e;

static unsigned char *random_bytes(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        p[i] = (unsigned char)(seed >> 56);
    }
    return p;
}

/* dst (pitch dp) holds src's (pitch sp) w x h bytes, and its bytes between
 * the lines are still what `before` had there */
static int copied(const unsigned char *dst, const unsigned char *before, size_t dp, const unsigned char *src,
                  size_t sp, size_t w, size_t h)
{
    for (size_t r = 0; r < h; r++) {
        if (memcmp(dst + r * dp, src + r * sp, w) != 0) return 0;
        size_t gap = r + 1 < h ? dp - w : 0;
        if (gap && memcmp(dst + r * dp + w, before + r * dp + w, gap) != 0) return 0;
    }
    return 1;
}

typedef struct {
    size_t w, h, sp, dp;
} shape_t;

/* widths and pitches off any power of two; flat ones (pitch = width); one
 * line longer than the pool's pieces; heights of 1 */
static const shape_t shapes[] = {
    {1, 1, 1, 1},           {7, 3, 13, 9},           {4099, 257, 5003, 4111}, {65543, 37, 70001, 65543},
    {3 << 20, 1, 3 << 20, 3 << 20}, {4097, 1031, 4097, 4097}, {1500007, 3, 1600009, 1500007},
    {200003, 41, 200003, 200003},
};

static void test_copies(void)
{
    const int helpers[] = {0, 1, 3, 5};
    for (size_t hi = 0; hi < sizeof helpers / sizeof *helpers; hi++) {
        ooc_pool_t *pool = NULL;
        ooc_err_t err;
        CU_ASSERT_EQUAL_FATAL(ooc_pool_create(helpers[hi], -1, NULL, &pool, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_pool_threads(pool), helpers[hi]);
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
            const shape_t *s = &shapes[si];
            size_t sbytes = s->sp * (s->h - 1) + s->w, dbytes = s->dp * (s->h - 1) + s->w;
            unsigned char *src = random_bytes(sbytes), *dst = random_bytes(dbytes), *before = malloc(dbytes);
            CU_ASSERT_PTR_NOT_NULL_FATAL(before);
            for (int cached = 0; cached < 2; cached++) {
                memcpy(before, dst, dbytes);
                if (cached) ooc_pool_copy2d_cached(pool, dst, s->dp, src, s->sp, s->w, s->h);
                else ooc_pool_copy2d(pool, dst, s->dp, src, s->sp, s->w, s->h);
                CU_ASSERT(copied(dst, before, s->dp, src, s->sp, s->w, s->h));
                memset(dst, 0xa5, dbytes);
            }
            free(src);
            free(dst);
            free(before);
        }
        ooc_pool_destroy(pool);
    }
}

/* the pipeline's reader and writer: each its own copies on one pool at once */
typedef struct {
    ooc_pool_t *pool;
    int rounds, bad;
} other_t;

static void *other_thread(void *arg)
{
    other_t *o = arg;
    const size_t w = 300007, h = 5, sp = 300017;
    unsigned char *src = malloc(sp * h), *dst = malloc(w * h);
    if (src == NULL || dst == NULL) {
        o->bad = 1;
        free(src);
        free(dst);
        return NULL;
    }
    for (int r = 0; r < o->rounds; r++) {
        memset(src, r + 1, sp * h);
        ooc_pool_copy2d(o->pool, dst, w, src, sp, w, h);
        for (size_t i = 0; i < w * h; i++)
            if (dst[i] != (unsigned char)(r + 1)) {
                o->bad = 1;
                break;
            }
    }
    free(src);
    free(dst);
    return NULL;
}

static void test_two_submitters(void)
{
    ooc_pool_t *pool = NULL;
    ooc_err_t err;
    CU_ASSERT_EQUAL_FATAL(ooc_pool_create(3, -1, NULL, &pool, &err), OOC_SUCCESS);
    other_t o = {pool, 40, 0};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, other_thread, &o), 0);
    for (int round = 0; round < 8; round++) {
        const shape_t *s = &shapes[(size_t)round % (sizeof shapes / sizeof *shapes)];
        size_t sbytes = s->sp * (s->h - 1) + s->w, dbytes = s->dp * (s->h - 1) + s->w;
        unsigned char *src = random_bytes(sbytes), *dst = random_bytes(dbytes), *before = malloc(dbytes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(before);
        memcpy(before, dst, dbytes);
        if (round % 2) ooc_pool_copy2d_cached(pool, dst, s->dp, src, s->sp, s->w, s->h);
        else ooc_pool_copy2d(pool, dst, s->dp, src, s->sp, s->w, s->h);
        CU_ASSERT(copied(dst, before, s->dp, src, s->sp, s->w, s->h));
        free(src);
        free(dst);
        free(before);
    }
    CU_ASSERT_EQUAL(pthread_join(t, NULL), 0);
    CU_ASSERT_EQUAL(o.bad, 0);
    ooc_pool_destroy(pool);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("stage", NULL, NULL);
    CU_add_test(s, "2-D and flat copies, streaming and plain stores, 0 to 5 helpers", test_copies);
    CU_add_test(s, "two threads' copies on one pool at once", test_two_submitters);
    return tu_run();
}
