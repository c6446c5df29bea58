/* SPDX-License-Identifier: MIT */
/*
 * cli_disk.c: multiply --measure-disk: the disk's read and write bandwidth
 * with the page cache bypassed (O_DIRECT), each alone and both at once, on
 * an input and a scratch file beside the output (removed after).
 */
#include "config.h"

#include "cli.h"

/* Disk bandwidth with the page cache bypassed (O_DIRECT, 16 MiB requests). */
enum { DISK_REQ = 16 << 20 };

typedef struct {
    int fd, write;
    uint64_t limit, done;
    void *buf;
} disk_job_t;

static void *disk_run(void *arg)
{
    disk_job_t *j = arg;
    while (j->done < j->limit) {
        ssize_t got = j->write ? pwrite(j->fd, j->buf, DISK_REQ, (off_t)j->done)
                               : pread(j->fd, j->buf, DISK_REQ, (off_t)j->done);
        if (got <= 0) break;
        j->done += (uint64_t)got;
        if (got < DISK_REQ) break;
    }
    if (j->write && fdatasync(j->fd) != 0) j->done = 0;
    return NULL;
}

/* Read up to 4 GiB of `sample` (an input), write 2 GiB to a scratch file
 * beside `out`, each alone, then both at once (one thread each): GB/s, 0 on
 * failure; *both_gbs counts the bytes of both directions. */
void measure_disk(const char *sample, const char *out, double *read_gbs, double *write_gbs, double *both_gbs)
{
    const uint64_t read_max = (uint64_t)4 << 30, write_total = (uint64_t)2 << 30;
    void *rbuf = NULL, *wbuf = NULL;
    char *scratch = NULL;
    *read_gbs = *write_gbs = *both_gbs = 0;
    if (posix_memalign(&rbuf, 4096, DISK_REQ) != 0 || posix_memalign(&wbuf, 4096, DISK_REQ) != 0 ||
        asprintf(&scratch, "%s.ooc-disktest", out) < 0) {
        free(rbuf);
        free(wbuf);
        return;
    }
    fill_random(OOC_R64, wbuf, DISK_REQ / 8, 1, 7);
    /* made here, never an existing file or a link's target (a user's file
     * of that name is left alone: no write figure then); removed after */
    int rfd = open(sample, O_RDONLY | O_DIRECT),
        wfd = open(scratch, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_DIRECT, 0600);
    if (rfd >= 0 && wfd >= 0) {
        disk_job_t r = {rfd, 0, read_max, 0, rbuf}, w = {wfd, 1, write_total, 0, wbuf};
        double t0 = now_seconds();
        disk_run(&r);
        double t1 = now_seconds();
        disk_run(&w);
        double t2 = now_seconds();
        if (r.done >= DISK_REQ) *read_gbs = (double)r.done / (t1 - t0) / 1e9;
        if (w.done == write_total) *write_gbs = (double)w.done / (t2 - t1) / 1e9;
        /* both at once, on the same amounts (the read from the start again) */
        disk_job_t r2 = {rfd, 0, r.done, 0, rbuf}, w2 = {wfd, 1, write_total, 0, wbuf};
        pthread_t th;
        double t3 = now_seconds();
        if (pthread_create(&th, NULL, disk_run, &r2) == 0) {
            disk_run(&w2);
            pthread_join(th, NULL);
            double dt = now_seconds() - t3;
            if (w2.done == write_total && r2.done == r.done) *both_gbs = (double)(r2.done + w2.done) / dt / 1e9;
        }
    }
    if (rfd >= 0) close(rfd);
    if (wfd >= 0) {
        close(wfd);
        unlink(scratch);
    }
    free(scratch);
    free(rbuf);
    free(wbuf);
}

