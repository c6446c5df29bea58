/* SPDX-License-Identifier: MIT */
/*
 * journal.c: the resume journal (see journal.h). Format, version 1:
 *
 *   oocgemm-journal 1
 *   job <identity>
 *   plan <swap> <mb> <nb> <kb> <total> <resumable>
 *   done 0
 *   done 1
 *   ...
 *
 * Every write is followed by fdatasync: a line in the journal means the
 * block is on disk.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal.h"

#define MAGIC "oocgemm-journal 1\n"

static ooc_status_t write_all(int fd, const char *s, size_t len, const char *path, ooc_err_t *err)
{
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w < 0 && errno == EINTR) continue;
        OOC_RETURN_ERROR_IF(w <= 0, err, OOC_ERR_IO, "write %s: %s", path, strerror(errno ? errno : EIO));
        s += w;
        len -= (size_t)w;
    }
    OOC_RETURN_ERROR_IF(fdatasync(fd) != 0, err, OOC_ERR_IO, "fdatasync %s: %s", path, strerror(errno));
    return OOC_SUCCESS;
}

ooc_status_t ooc_journal_read(const char *path, ooc_journal_info_t *info, int *exists, ooc_err_t *err)
{
    memset(info, 0, sizeof *info);
    *exists = 0;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        OOC_RETURN_ERROR_IF(errno != ENOENT, err, OOC_ERR_IO, "open %s: %s", path, strerror(errno));
        return OOC_SUCCESS;
    }
    *exists = 1;
    char line[sizeof info->job + 16];
    ooc_status_t st = OOC_SUCCESS;
    int ok = fgets(line, sizeof line, f) != NULL && strcmp(line, MAGIC) == 0;
    ok = ok && fgets(line, sizeof line, f) != NULL && strncmp(line, "job ", 4) == 0 &&
         line[strlen(line) - 1] == '\n';
    if (ok) {
        size_t n = strlen(line + 4) - 1; /* without the newline */
        ok = n < sizeof info->job;
        if (ok) {
            memcpy(info->job, line + 4, n);
            info->job[n] = '\0';
        }
    }
    ok = ok && fgets(line, sizeof line, f) != NULL &&
         sscanf(line, "plan %d %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %d", &info->swap, &info->mb,
                &info->nb, &info->kb, &info->total, &info->resumable) == 6;
    if (!ok) {
        st = OOC_ERR(err, OOC_ERR_JOURNAL, "%s: not a libooc_gemm journal (version 1) or damaged header", path);
    } else {
        /* "done G" lines, in order; a torn (unterminated) last line is ignored */
        while (fgets(line, sizeof line, f) != NULL) {
            int64_t g;
            char end;
            if (line[strlen(line) - 1] != '\n') break;
            if (sscanf(line, "done %" SCNd64 "%c", &g, &end) != 2 || g != info->done || g >= info->total) {
                st = OOC_ERR(err, OOC_ERR_JOURNAL, "%s: damaged: line '%.40s' after %" PRId64 " finished blocks",
                             path, line, info->done);
                break;
            }
            info->done++;
        }
    }
    fclose(f);
    return st;
}

ooc_status_t ooc_journal_create(ooc_journal_t *j, const char *path, const ooc_journal_info_t *info, ooc_err_t *err)
{
    j->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
    OOC_RETURN_ERROR_IF(j->fd < 0, err, OOC_ERR_IO, "create %s: %s", path, strerror(errno));
    j->path = strdup(path);
    if (j->path == NULL) {
        ooc_journal_close(j, 1);
        return OOC_ERR(err, OOC_ERR_HOST_MEMORY, "strdup: out of memory");
    }
    char head[sizeof info->job + 256];
    int len = snprintf(head, sizeof head, MAGIC "job %s\nplan %d %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %d\n",
                       info->job, info->swap, info->mb, info->nb, info->kb, info->total, info->resumable);
    ooc_status_t st = write_all(j->fd, head, (size_t)len, path, err);
    if (st != OOC_SUCCESS) ooc_journal_close(j, 1);
    return st;
}

ooc_status_t ooc_journal_append_open(ooc_journal_t *j, const char *path, ooc_err_t *err)
{
    j->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    OOC_RETURN_ERROR_IF(j->fd < 0, err, OOC_ERR_IO, "open %s: %s", path, strerror(errno));
    j->path = strdup(path);
    if (j->path == NULL) {
        ooc_journal_close(j, 0);
        return OOC_ERR(err, OOC_ERR_HOST_MEMORY, "strdup: out of memory");
    }
    /* cut a torn last line so that the next record starts on a line of its own */
    char buf[4096];
    off_t size = lseek(j->fd, 0, SEEK_END), from = size > (off_t)sizeof buf ? size - (off_t)sizeof buf : 0;
    ssize_t got = size > 0 ? pread(j->fd, buf, (size_t)(size - from), from) : 0;
    if (got > 0 && buf[got - 1] != '\n') {
        off_t keep = from;
        for (ssize_t i = got - 1; i >= 0; i--)
            if (buf[i] == '\n') {
                keep = from + i + 1;
                break;
            }
        OOC_RETURN_ERROR_IF(ftruncate(j->fd, keep) != 0, err, OOC_ERR_IO, "ftruncate %s: %s", path, strerror(errno));
    }
    return OOC_SUCCESS;
}

ooc_status_t ooc_journal_done(ooc_journal_t *j, int64_t g, ooc_err_t *err)
{
    char line[48];
    int len = snprintf(line, sizeof line, "done %" PRId64 "\n", g);
    return write_all(j->fd, line, (size_t)len, j->path, err);
}

void ooc_journal_close(ooc_journal_t *j, int remove_file)
{
    if (j->fd >= 0) close(j->fd);
    if (remove_file && j->path) unlink(j->path);
    free(j->path);
    j->fd = -1;
    j->path = NULL;
}
