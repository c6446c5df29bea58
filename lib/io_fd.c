/* SPDX-License-Identifier: MIT */
/*
 * io_fd.c: what every matrix file shares at the descriptor level (see
 * io.h): complete positioned reads and writes in chunks, retried on EINTR
 * and short transfers; fdatasync; opening a regular file only (a FIFO or a
 * device is refused without blocking, a final symbolic link not followed);
 * locking an output against other jobs; checking that a name still means an
 * open file. Knows nothing of file formats (io_npy.c, io_file.c) and keeps
 * no state. Every failure names the file, the call and what is wrong.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "fault.h"
#include "io.h"

_Static_assert(sizeof(off_t) >= 8, "io_fd.c needs a 64-bit off_t (large file support)");

/* one pread/pwrite moves at most this much (Linux caps a call near 2 GiB) */
#define IO_CHUNK ((size_t)1 << 30)

const char *ooc_io_errtext(int e, char *buf, size_t n)
{
    return strerror_r(e, buf, n); /* GNU: returns the text */
}

const char *ooc_io_too_long(const char *path, char *buf, size_t n)
{
    size_t len = strlen(path);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char dir[PATH_MAX];
    if (slash == NULL) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    long name_max = len < PATH_MAX ? pathconf(dir, _PC_NAME_MAX) : -1;
    size_t blen = strlen(base);
    if (len >= PATH_MAX)
        snprintf(buf, n, "the path is %zu bytes, over the %d this system allows", len, PATH_MAX);
    else if (name_max > 0 && blen > (size_t)name_max)
        snprintf(buf, n, "its name is %zu bytes, over the %ld a name may have on this file system", blen, name_max);
    else
        snprintf(buf, n, "its name is %zu bytes, too long for this file system", blen);
    return buf;
}

static const char *name_or(const char *path) { return path ? path : "(unnamed file)"; }

ooc_status_t ooc_io_pread(int fd, void *buf, size_t len, uint64_t off, const char *path, ooc_err_t *err)
{
    path = name_or(path);
    OOC_RETURN_ERROR_IF(off > (uint64_t)INT64_MAX || (uint64_t)len > (uint64_t)INT64_MAX - off, err,
                        OOC_ERR_OVERFLOW, "pread %s: %zu bytes at offset %llu pass the largest file offset",
                        path, len, (unsigned long long)off);
    char *p = buf;
    size_t done = 0;
    while (done < len) {
        size_t chunk = len - done > IO_CHUNK ? IO_CHUNK : len - done;
        ssize_t n = pread(fd, p + done, chunk, (off_t)(off + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            char eb[128];
            return OOC_ERR_FILE(err, OOC_ERR_IO, path, "pread %s: %s (offset %llu)", path,
                                ooc_io_errtext(errno, eb, sizeof eb), (unsigned long long)(off + done));
        }
        if (n == 0)
            return OOC_ERR_FILE(err, OOC_ERR_FORMAT, path, "%s: truncated: read %zu of %zu bytes at offset %llu",
                                path, done, len, (unsigned long long)off);
        done += (size_t)n;
    }
    return OOC_SUCCESS;
}

ooc_status_t ooc_io_pwrite(int fd, const void *buf, size_t len, uint64_t off, const char *path, ooc_err_t *err)
{
    path = name_or(path);
    OOC_RETURN_ERROR_IF(off > (uint64_t)INT64_MAX || (uint64_t)len > (uint64_t)INT64_MAX - off, err,
                        OOC_ERR_OVERFLOW, "pwrite %s: %zu bytes at offset %llu pass the largest file offset",
                        path, len, (unsigned long long)off);
    const char *p = buf;
    size_t done = 0;
    while (done < len) {
        size_t chunk = len - done > IO_CHUNK ? IO_CHUNK : len - done;
        ssize_t n = pwrite(fd, p + done, chunk, (off_t)(off + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            char eb[128];
            int e = errno;
            return OOC_ERR_FILE(err, ooc_errno_status(e), path, "pwrite %s: %s (offset %llu)", path,
                                ooc_io_errtext(e, eb, sizeof eb), (unsigned long long)(off + done));
        }
        if (n == 0)
            return OOC_ERR_FILE(err, OOC_ERR_IO, path, "pwrite %s: wrote nothing (offset %llu, %zu of %zu bytes done)",
                                path, (unsigned long long)(off + done), done, len);
        done += (size_t)n;
    }
    return OOC_SUCCESS;
}

/* 0, or the errno value of a lock another job holds (EAGAIN, EACCES) or of
 * a failure; 0 too where the file system has no locks */
static int lock_errno(int fd, int shared)
{
    int e;
#ifdef F_OFD_SETLK
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = shared ? F_RDLCK : F_WRLCK; /* on a lock of ours: converted in place */
    fl.l_whence = SEEK_SET; /* l_start 0, l_len 0: the whole file */
    if (fcntl(fd, F_OFD_SETLK, &fl) == 0) return 0;
    e = errno;
    if (e == EAGAIN || e == EACCES) return e; /* another job holds it */
    /* a kernel without OFD locks, or a file system without POSIX locks: flock */
#endif
    if (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) return 0;
    e = errno;
    /* a file system without locks (Lustre mounted without -o flock, some
     * NFS setups): go on unlocked; exclusive creation, never following a
     * link and the identity checks still hold */
    if (e == ENOSYS || e == EOPNOTSUPP || e == ENOLCK || e == EINVAL) return 0;
    return e;
}

ooc_status_t ooc_fd_lock(int fd, const char *path, int shared, ooc_err_t *err)
{
    int e = lock_errno(fd, shared);
    char eb[128];
    if (e == 0) return OOC_SUCCESS;
    if (e == EAGAIN || e == EACCES || e == EWOULDBLOCK)
        return OOC_ERR_FILE(err, OOC_ERR_BUSY, path, "%s is locked by another job (another process, or another handle of this one, writing this output)", path);
    return OOC_ERR_FILE(err, OOC_ERR_IO, path, "lock %s: %s", path, ooc_io_errtext(e, eb, sizeof eb));
}

ooc_status_t ooc_io_sync(int fd, const char *path, ooc_err_t *err)
{
    char eb[128];
    int e = ooc_fault_errno(OOC_FAULT_SYNC), injected = e != 0;
    while (e == 0 && fdatasync(fd) != 0)
        if (errno != EINTR) e = errno;
    if (e == 0) return OOC_SUCCESS;
    return OOC_ERR_FILE(err, ooc_errno_status(e), path, "fdatasync %s: %s%s", path, ooc_io_errtext(e, eb, sizeof eb),
                        injected ? " (injected by OOC_FAULT)" : "");
}

ooc_status_t ooc_io_sync_dir(const char *path, ooc_err_t *err)
{
    char eb[128];
    char *dir = strdup(path);
    OOC_RETURN_ERROR_IF(dir == NULL, err, OOC_ERR_HOST_MEMORY, "%s: out of memory", path);
    char *slash = strrchr(dir, '/');
    const char *d = dir;
    if (slash == NULL) d = ".";
    else if (slash == dir) d = "/";
    else *slash = '\0';
    ooc_status_t st = OOC_SUCCESS;
    int dfd = ooc_fd_off_std(open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd < 0 && errno == EACCES) { /* a directory we may write but not read: no sync to be had */
        free(dir);
        return OOC_SUCCESS;
    }
    if (dfd < 0) {
        st = OOC_ERR_FILE(err, OOC_ERR_IO, path, "open directory %s (to flush the entry of %s): %s", d, path,
                          ooc_io_errtext(errno, eb, sizeof eb));
    } else {
        /* EINVAL: this file system cannot sync a directory; nothing to do.
         * The error names path: the file whose entry may not be durable */
        int injected = ooc_fault_errno(OOC_FAULT_SYNC_DIR);
        if (injected) errno = injected;
        if ((injected || fsync(dfd) != 0) && errno != EINVAL)
            st = OOC_ERR_FILE(err, OOC_ERR_IO, path, "fsync directory %s (to flush the entry of %s): %s%s", d, path,
                              ooc_io_errtext(errno, eb, sizeof eb), injected ? " (injected by OOC_FAULT)" : "");
        close(dfd);
    }
    free(dir);
    return st;
}

int ooc_fd_off_std(int fd)
{
    if (fd < 0 || fd > 2) return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3), e = errno;
    close(fd);
    errno = e;
    return moved;
}

int ooc_open_regular(const char *path, int flags, unsigned *mode)
{
    /* O_NONBLOCK: a FIFO must not hang the open (it is refused below);
     * regular files ignore the flag, which is cleared once checked */
    int fd = ooc_fd_off_std(open(path, flags | O_NONBLOCK | O_CLOEXEC));
    if (fd < 0) return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        if (mode) *mode = (unsigned)sb.st_mode;
        close(fd);
        errno = EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

int ooc_fd_is_path(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int ooc_fd_birth(int fd, int64_t *sec, long *nsec)
{
    *sec = 0;
    *nsec = 0;
    if (ooc_fault_hit(OOC_FAULT_BIRTH)) return 0;
#ifdef HAVE_STATX
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &sx) == 0 && (sx.stx_mask & STATX_BTIME)) {
        *sec = sx.stx_btime.tv_sec;
        *nsec = (long)sx.stx_btime.tv_nsec;
        return 1;
    }
#else
    (void)fd;
#endif
    return 0;
}

const char *ooc_file_kind(unsigned mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a FIFO (named pipe)";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    }
    return "not a regular file";
}
