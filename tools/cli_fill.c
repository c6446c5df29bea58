/* SPDX-License-Identifier: MIT */
/*
 * cli_fill.c: seeded random matrices in memory (the splitmix64 streams of
 * cli.h), filled on every CPU the process may use: each element a pure function of (seed,
 * matrix, index), so that any split across threads gives the same values.
 */
#include "config.h"

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* Random matrices: the threaded fill (the streams are in cli.h)             */

/* count elements (complex: 2*count reals) uniform in [-1, 1), never 0. */
typedef struct {
    ooc_dtype_t t;
    void *x;
    uint64_t key;
    size_t q0, q1; /* reals [q0, q1) */
    int nan;       /* fill with NaN instead */
} fill_part_t;

static void *fill_part(void *arg)
{
    fill_part_t *f = arg;
    if (f->nan) {
        size_t e = dtype_double(f->t) ? sizeof(double) : sizeof(float);
        memset((char *)f->x + f->q0 * e, 0xff, (f->q1 - f->q0) * e); /* all-ones: NaN */
    } else if (dtype_double(f->t)) {
        double *d = f->x;
        for (size_t q = f->q0; q < f->q1; q++) d[q] = rand_double(f->key, q);
    } else {
        float *fl = f->x;
        for (size_t q = f->q0; q < f->q1; q++) fl[q] = rand_float(f->key, q);
    }
    return NULL;
}

/* Fill with values that depend only on (seed, which, index), or with NaN
 * (nan), on every CPU the process may use. */
static void fill_threaded(ooc_dtype_t t, void *x, size_t count, uint64_t seed, unsigned which, int nan)
{
    enum { MAX_THREADS = 64 };
    size_t reals = count * (dtype_complex(t) ? 2 : 1);
    int ncpu = cli_cpu_count();
    size_t nt = reals < ((size_t)1 << 22) || ncpu < 2 ? 1 : (size_t)(ncpu > MAX_THREADS ? MAX_THREADS : ncpu);
    fill_part_t parts[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int created[MAX_THREADS] = {0};
    for (size_t i = 0; i < nt; i++) {
        parts[i] = (fill_part_t){t, x, stream_key(seed, which), reals * i / nt, reals * (i + 1) / nt, nan};
        created[i] = i + 1 < nt && pthread_create(&th[i], NULL, fill_part, &parts[i]) == 0;
        if (!created[i]) fill_part(&parts[i]); /* the last part, or no thread: do it here */
    }
    for (size_t i = 0; i < nt; i++)
        if (created[i]) pthread_join(th[i], NULL);
}

void fill_random(ooc_dtype_t t, void *x, size_t count, uint64_t seed, unsigned which)
{
    fill_threaded(t, x, count, seed, which, 0);
}

/* NaN everywhere (all bits set), on every CPU the process may use: a C that must not be read. */
void fill_nan(ooc_dtype_t t, void *x, size_t count) { fill_threaded(t, x, count, 0, 0, 1); }

