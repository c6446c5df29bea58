/* SPDX-License-Identifier: MIT */
/*
 * cli_progress.c: the progress of a file multiply (multiply): a bar with
 * percent, blocks, GB/s, TFLOP/s and ETA on a terminal, a plain line every
 * 5% or 10 s otherwise. progress_cb runs on a library thread; it computes
 * and writes to stderr only.
 */
#include "config.h"

#include "cli.h"

/* Show done of total blocks, ran of them by this run (the rest were kept
 * from an earlier one: they count in the percentage, not in the rate or the
 * ETA); with p->lock held. */
static void show(progress_t *p, int64_t done, int64_t ran, int64_t total)
{
    double now = now_seconds(), el = now - p->t0;
    double frac = total > 0 ? (double)done / (double)total : 1.0;
    double gbps = el > 0 ? (double)(p->bytes_read + p->bytes_written) / el / 1e9 : 0.0;
    double rate = el > 0 && total > 0 ? p->flops * (double)ran / (double)total / el : 0.0;
    double eta = ran > 0 ? el * (double)(total - done) / (double)ran : NAN;
    char etab[32], rateb[32];
    if (p->mode == PROGRESS_TTY && (now - p->last_print >= 0.1 || done >= total)) {
        enum { WIDTH = 24 };
        char bar[WIDTH + 1];
        int fill = (int)(frac * WIDTH);
        for (int i = 0; i < WIDTH; i++) bar[i] = i < fill ? '#' : '.';
        bar[WIDTH] = '\0';
        fprintf(stderr, "\r[%s] %5.1f%%  %lld/%lld blocks  %.3g GB/s  %s  ETA %s\033[K", bar, 100.0 * frac,
                (long long)done, (long long)total, gbps, format_rate(rate, rateb, sizeof rateb),
                format_eta(eta, etab, sizeof etab));
        fflush(stderr);
        p->drawn = 1;
        p->last_print = now;
    } else if (p->mode == PROGRESS_LINES) {
        int pct = (int)(100.0 * frac);
        if (pct >= p->next_pct || now - p->last_print >= 10.0 || done >= total) {
            fprintf(stderr, "%s: %3d%% (%lld/%lld blocks) %.1f s, %.3g GB/s, %s, ETA %s\n", progname, pct,
                    (long long)done, (long long)total, el, gbps, format_rate(rate, rateb, sizeof rateb),
                    format_eta(eta, etab, sizeof etab));
            p->last_print = now;
            while (p->next_pct <= pct) p->next_pct += 5;
        }
    }
}

/* the counts as they grow (calls from several threads may come out of order) */
static void update(progress_t *p, int64_t done, int64_t total, uint64_t bytes_read, uint64_t bytes_written)
{
    p->calls++;
    if (done > p->done) p->done = done;
    p->total = total;
    if (bytes_read > p->bytes_read) p->bytes_read = bytes_read;
    if (bytes_written > p->bytes_written) p->bytes_written = bytes_written;
}

void progress_cb(void *user, int64_t done, int64_t total, uint64_t bytes_read, uint64_t bytes_written)
{
    progress_t *p = user;
    pthread_mutex_lock(&p->lock);
    if (!p->have_base) { /* the first call follows this run's first block */
        p->have_base = 1;
        p->base = done > 0 ? done - 1 : 0;
    }
    update(p, done, total, bytes_read, bytes_written);
    show(p, p->done, p->done - p->base, total);
    pthread_mutex_unlock(&p->lock);
    if (total > 0 && done >= total) stop_signals_last_block(); /* (the rest completes: no watchdog) */
}

void progress_sum(progress_t *p, int64_t done, int64_t ran, int64_t total, uint64_t bytes_read,
                  uint64_t bytes_written)
{
    pthread_mutex_lock(&p->lock);
    update(p, done, total, bytes_read, bytes_written);
    show(p, p->done, ran, total);
    pthread_mutex_unlock(&p->lock);
}

/* After the multiply: end the bar's line. */
void progress_end(progress_t *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->mode == PROGRESS_TTY && p->drawn) fputc('\n', stderr);
    p->drawn = 0;
    pthread_mutex_unlock(&p->lock);
}

