/* SPDX-License-Identifier: MIT */
/*
 * io_file.c: matrix files (see io.h and ooc_file_t in ooc_gemm.h), on top of
 * the descriptor helpers of io_fd.c. Opening a .npy or raw file (a regular
 * file only: a FIFO or a device is refused without blocking) and checking
 * its size against its shape; creating an output file as "PATH.ooc-tmp" at full size
 * with its space reserved, exclusively and locked against other jobs, never
 * through a symbolic link (reused by a resumed run when its header matches),
 * with a trailer naming it by a random id until the job is complete (sealed:
 * see OOC_TMP_TRAILER in io.h), and committing it with fdatasync, rename and a directory fsync onto a
 * target that must be absent or a regular file this process may write. Every failure names the
 * file, the call and what is wrong.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_GETRANDOM
#include <sys/random.h>
#endif

#include "backend.h"
#include "fault.h"
#include "handle.h"
#include "io.h"
#include "journal.h"

_Static_assert(sizeof(off_t) >= 8, "io_file.c needs a 64-bit off_t (large file support)");

#define TMP_SUFFIX OOC_TMP_SUFFIX

/* Record src's error in dst as "PATH: message" (the codec knows no paths). */
static ooc_status_t relay(ooc_err_t *dst, const ooc_err_t *src, const char *path)
{
    if (dst->status == OOC_SUCCESS) {
        dst->status = src->status;
        if (snprintf(dst->msg, sizeof dst->msg, "%s: %s", path, src->msg) < 0) dst->msg[0] = '\0';
        dst->path[0] = '\0';
        ooc_err_path(dst, path);
    }
    return src->status;
}

static int valid_dtype(ooc_dtype_t t) { return t >= OOC_R32 && t <= OOC_C64; }
static int valid_layout(ooc_layout_t l) { return l == OOC_ROW_MAJOR || l == OOC_COL_MAJOR; }

/* rows, cols, dtype and layout a raw file (rows, cols > 0) or a created
 * file (>= 0: an empty product is a valid result) needs */
static ooc_status_t check_spec(ooc_err_t *err, const char *path, const ooc_file_spec_t *s, const char *what,
                               int64_t least)
{
    OOC_RETURN_FILE_ERROR_IF(s->rows < least, err, OOC_ERR_FORMAT, path, "%s: %s rows >= %lld (got %lld)", path, what,
                             (long long)least, (long long)s->rows);
    OOC_RETURN_FILE_ERROR_IF(s->cols < least, err, OOC_ERR_FORMAT, path, "%s: %s cols >= %lld (got %lld)", path, what,
                             (long long)least, (long long)s->cols);
    OOC_RETURN_FILE_ERROR_IF(!valid_dtype(s->dtype), err, OOC_ERR_FORMAT, path,
                             "%s: %s a dtype (f32, f64, c64 or c128; got %d)", path, what, (int)s->dtype);
    OOC_RETURN_FILE_ERROR_IF(!valid_layout(s->layout), err, OOC_ERR_FORMAT, path,
                             "%s: %s an order (row-major/C or column-major/Fortran; got %d)", path, what,
                             (int)s->layout);
    return OOC_SUCCESS;
}

/* bytes of the elements of s, and offset + those bytes, checked against overflow */
static ooc_status_t data_size(ooc_err_t *err, const char *path, const ooc_file_spec_t *s,
                              uint64_t off, uint64_t *bytes)
{
    uint64_t elems;
    if (__builtin_mul_overflow((uint64_t)s->rows, (uint64_t)s->cols, &elems) ||
        __builtin_mul_overflow(elems, (uint64_t)ooc_dtype_size(s->dtype), bytes) || *bytes > (uint64_t)INT64_MAX - off)
        return OOC_ERR_FILE(err, OOC_ERR_OVERFLOW, path, "%s: %lld x %lld elements: the size does not fit in 64 bits",
                            path, (long long)s->rows, (long long)s->cols);
    return OOC_SUCCESS;
}

static const unsigned char npy_magic[OOC_NPY_MAGIC_LEN] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* Read and parse the .npy header of an open file of size bytes: start with
 * 64 bytes, read more when the codec says the header is longer; a header
 * longer than the file is reported with the file's size. */
static ooc_status_t read_header(int fd, const char *path, uint64_t size, ooc_format_t fmt,
                                ooc_file_spec_t *s, uint64_t *off, ooc_err_t *err)
{
    unsigned char *buf = NULL;
    size_t cap = 0, got = 0, want = 64;
    ooc_status_t st;
    for (;;) {
        size_t take = size < want ? (size_t)size : want;
        if (take > cap) {
            unsigned char *nb = realloc(buf, take);
            if (nb == NULL) {
                st = OOC_ERR(err, OOC_ERR_HOST_MEMORY, "%s: out of memory for a %zu-byte header", path, take);
                goto out;
            }
            buf = nb;
            cap = take;
        }
        if (take > got) {
            st = ooc_io_pread(fd, buf + got, take - got, got, path, err);
            if (st != OOC_SUCCESS) goto out;
            got = take;
        }
        size_t m = got < OOC_NPY_MAGIC_LEN ? got : OOC_NPY_MAGIC_LEN;
        if (fmt == OOC_FORMAT_AUTO && got >= 4 && memcmp(buf, "PK\003\004", 4) == 0) {
            /* (numpy.savez: a zip archive of .npy files; read as raw data it would be garbage) */
            st = OOC_ERR_FILE(err, OOC_ERR_FORMAT, path,
                              "%s: a .npz archive (zip), not a .npy file: save the array it holds as a .npy "
                              "file (numpy.save(name, numpy.load(path)[key])) and give that",
                              path);
            goto out;
        }
        if (fmt == OOC_FORMAT_AUTO && (got == 0 || memcmp(buf, npy_magic, m) != 0)) {
            st = OOC_ERR_FILE(err, OOC_ERR_FORMAT, path,
                         "%s: not a .npy file (%s); for raw binary give the raw format with its "
                         "shape, dtype and layout (--rows/--cols/--dtype/--layout)",
                         path, got == 0 ? "empty: 0 bytes, a .npy file cut short?" : "no NumPy magic \\x93NUMPY");
            goto out;
        }
        ooc_err_t local;
        ooc_err_clear(&local);
        size_t need = 0;
        st = ooc_npy_parse(buf, got, s, off, &need, &local);
        if (st == OOC_SUCCESS) goto out;
        if (need > got && need <= size) {
            want = need;
            continue;
        }
        if (need > size) { /* the file's size, not the bytes read so far */
            st = OOC_ERR_FILE(err, OOC_ERR_FORMAT, path,
                              "%s: truncated header: the file has %llu bytes, the header needs %zu", path,
                              (unsigned long long)size, need);
            goto out;
        }
        relay(err, &local, path);
        goto out;
    }
out:
    free(buf);
    return st;
}

ooc_status_t ooc_file_open(ooc_handle_t *h, const char *path, const ooc_file_spec_t *spec, ooc_file_t **file)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(path == NULL || file == NULL, err, OOC_ERR_NULL_ARG, "ooc_file_open: path or file is NULL");
    static const ooc_file_spec_t auto_spec = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, OOC_ROW_MAJOR};
    if (spec == NULL) spec = &auto_spec; /* (a .npy file's header says it all) */
    OOC_RETURN_FILE_ERROR_IF(spec->format != OOC_FORMAT_AUTO && spec->format != OOC_FORMAT_NPY &&
                                 spec->format != OOC_FORMAT_RAW,
                             err, OOC_ERR_FORMAT, path, "%s: unknown file format %d", path, (int)spec->format);
    ooc_file_spec_t s = *spec;
    if (s.format == OOC_FORMAT_RAW) OOC_FORWARD(check_spec(err, path, &s, "the raw format needs", 0));

    unsigned mode = 0;
    int fd = ooc_open_regular(path, O_RDONLY, &mode);
    if (fd < 0) {
        char eb[128];
        if (errno == EINVAL)
            return OOC_ERR_FILE(err, OOC_ERR_IO, path, "%s is %s, not a regular file: matrices are read from files",
                                path, ooc_file_kind(mode));
        return OOC_ERR_FILE(err, OOC_ERR_IO, path, "open %s: %s", path, ooc_io_errtext(errno, eb, sizeof eb));
    }
    ooc_status_t st;
    ooc_file_t *f = NULL;
    struct stat sb;
    char eb[128];
    if (fstat(fd, &sb) != 0) {
        st = OOC_ERR_FILE(err, OOC_ERR_IO, path, "fstat %s: %s", path, ooc_io_errtext(errno, eb, sizeof eb));
        goto fail;
    }
    uint64_t size = (uint64_t)sb.st_size, off = 0, bytes;
    if (s.format != OOC_FORMAT_RAW) {
        st = read_header(fd, path, size, s.format, &s, &off, err);
        if (st != OOC_SUCCESS) goto fail;
    }
    st = data_size(err, path, &s, off, &bytes);
    if (st != OOC_SUCCESS) goto fail;
    int npy = s.format == OOC_FORMAT_NPY;
    if (size < off + bytes) {
        if (npy)
            st = OOC_ERR_FILE(err, OOC_ERR_FORMAT, path, "%s: truncated: %llu bytes, the header says %llu", path,
                              (unsigned long long)size, (unsigned long long)(off + bytes));
        else /* (the type may be the one assumed: say which) */
            st = OOC_ERR_FILE(err, OOC_ERR_FORMAT, path,
                              "%s: truncated: %llu bytes, the raw shape says %lld x %lld elements of %s (%zu bytes "
                              "each) are %llu",
                              path, (unsigned long long)size, (long long)s.rows, (long long)s.cols,
                              ooc_dtype_word(s.dtype), ooc_dtype_size(s.dtype), (unsigned long long)bytes);
        goto fail;
    }
    if (size > off + bytes) {
        if (npy)
            st = OOC_ERR_FILE(err, OOC_ERR_FORMAT, path,
                              "%s: %llu byte%s after the data: the file has %llu, the header says %llu (two arrays "
                              "saved to one file? only one array a file is read)",
                              path, (unsigned long long)(size - off - bytes), size - off - bytes == 1 ? "" : "s",
                              (unsigned long long)size, (unsigned long long)(off + bytes));
        else
            st = OOC_ERR_FILE(err, OOC_ERR_FORMAT, path,
                         "%s: shape mismatch: the file has %llu bytes, %lld x %lld elements of %s (%zu "
                         "bytes each) are %llu",
                         path, (unsigned long long)size, (long long)s.rows, (long long)s.cols,
                         ooc_dtype_word(s.dtype), ooc_dtype_size(s.dtype), (unsigned long long)bytes);
        goto fail;
    }
    f = calloc(1, sizeof *f);
    if (f == NULL || (f->path = strdup(path)) == NULL) {
        st = OOC_ERR(err, OOC_ERR_HOST_MEMORY, "%s: out of memory for the file object", path);
        goto fail;
    }
    f->fd = fd;
    f->spec = s;
    f->data_offset = off;
    f->data_bytes = bytes;
    *file = f;
    return OOC_SUCCESS;
fail:
    if (f) free(f->path);
    free(f);
    close(fd);
    return st;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The target of an output may be absent or a regular file this process may
 * write, nothing else: a rename would replace a device node, a FIFO or a
 * symbolic link itself, and cannot replace a directory. Checked at create (so that nothing is computed
 * for an output that cannot be committed) and again at commit. */
static ooc_status_t check_target(ooc_err_t *err, const char *path)
{
    struct stat sb;
    char eb[128];
    if (lstat(path, &sb) != 0) {
        if (errno == ENOENT) return OOC_SUCCESS;
        return OOC_ERR_FILE(err, OOC_ERR_IO, path, "output %s: %s", path, ooc_io_errtext(errno, eb, sizeof eb));
    }
    /* a file this process may not write (chmod a-w, or another user's) is
     * not replaced: a rename in a writable directory could, where cp or a
     * shell's > could not (root may write it, and may replace it, as with
     * cp). EACCES only: a container whose seccomp filter answers glibc's
     * faccessat2 with EPERM (or ENOSYS) says nothing of the file */
    if (S_ISREG(sb.st_mode) && faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0 && errno == EACCES)
        return OOC_ERR_FILE(err, OOC_ERR_IO, path,
                            "output %s is not writable by this process (mode %04o, owner uid %u, process uid %u): "
                            "refusing to replace it (make it writable or remove it)",
                            path, (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid, (unsigned)geteuid());
    if (S_ISREG(sb.st_mode)) return OOC_SUCCESS;
    if (S_ISLNK(sb.st_mode))
        return OOC_ERR_FILE(err, OOC_ERR_IO, path,
                            "output %s is a symbolic link: refusing to replace it (name the file it points to)", path);
    return OOC_ERR_FILE(err, OOC_ERR_IO, path, "output %s is %s: refusing to replace it with a matrix file", path,
                        ooc_file_kind(sb.st_mode));
}

/* Open the temporary file tmp for this job alone: an existing one (left by
 * an earlier run) or a new one made exclusively (with make_mode), never through a symbolic
 * link, a regular file, locked (OOC_ERR_BUSY when another job holds it), and
 * still the file the name means once locked. *created says which. */
static ooc_status_t open_tmp(ooc_err_t *err, const char *tmp, mode_t make_mode, int *fd_out, int *created)
{
    char eb[128];
    for (int attempt = 0; attempt < 8; attempt++) {
        *created = 0;
        unsigned mode = 0;
        int fd = ooc_open_regular(tmp, O_RDWR | O_NOFOLLOW, &mode);
        if (fd < 0 && errno == ENOENT) {
            int made = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, make_mode);
            fd = ooc_fd_off_std(made);
            if (made >= 0 && fd < 0) { /* (made, but not moved above 2: not left there) */
                int e = errno;
                unlink(tmp);
                errno = e;
            }
            if (fd < 0 && errno == EEXIST) continue; /* made meanwhile: look again */
            *created = fd >= 0;
        }
        if (fd < 0) {
            int e = errno;
            if (e == ELOOP)
                return OOC_ERR_FILE(err, OOC_ERR_IO, tmp,
                                    "%s is a symbolic link: refusing to write through it (remove it)", tmp);
            if (e == EINVAL)
                return OOC_ERR_FILE(err, OOC_ERR_IO, tmp, "%s is %s: refusing to use it as the temporary output", tmp,
                                    ooc_file_kind(mode));
            if (e == ENAMETOOLONG)
                return OOC_ERR_FILE(err, OOC_ERR_IO, tmp,
                                    "the output's temporary file %s cannot be made: %s (the output's name and %s); "
                                    "choose a shorter output name",
                                    tmp, ooc_io_too_long(tmp, eb, sizeof eb), TMP_SUFFIX);
            return OOC_ERR_FILE(err, ooc_errno_status(e), tmp, "open %s: %s", tmp, ooc_io_errtext(e, eb, sizeof eb));
        }
        if (ooc_fd_lock(fd, tmp, 0, err) != OOC_SUCCESS) {
            close(fd);
            return err->status;
        }
        if (!ooc_fd_is_path(fd, tmp)) { /* renamed or removed before we locked it: look again */
            close(fd);
            continue;
        }
        *fd_out = fd;
        return OOC_SUCCESS;
    }
    return OOC_ERR_FILE(err, OOC_ERR_BUSY, tmp, "%s keeps changing: another job is creating this output", tmp);
}

/* A new temporary file's id: random where the system gives randomness,
 * mixed with the time, the process, a count and the file's inode (so that
 * two files never share one by chance alone); never 0. */
static uint64_t new_id(int fd)
{
    static uint64_t made;
    struct {
        uint64_t random, count;
        struct timespec real, mono;
        uint64_t pid, dev, ino;
    } x;
    memset(&x, 0, sizeof x); /* (padding too: the hash reads every byte) */
#ifdef HAVE_GETRANDOM
    if (getrandom(&x.random, sizeof x.random, GRND_NONBLOCK) != (ssize_t)sizeof x.random) x.random = 0;
#endif
    clock_gettime(CLOCK_REALTIME, &x.real);
    clock_gettime(CLOCK_MONOTONIC, &x.mono);
    x.count = __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
    x.pid = (uint64_t)getpid();
    struct stat sb;
    if (fstat(fd, &sb) == 0) {
        x.dev = (uint64_t)sb.st_dev;
        x.ino = (uint64_t)sb.st_ino;
    }
    uint64_t id = ooc_journal_hash(x.random, &x, sizeof x);
    return id != 0 ? id : 1;
}

/* The trailer naming id, OOC_TMP_TRAILER bytes (and a NUL) into buf. */
static void format_trailer(uint64_t id, char buf[OOC_TMP_TRAILER + 1])
{
    snprintf(buf, OOC_TMP_TRAILER + 1, OOC_TMP_TRAILER_TAG "%016" PRIx64 "\n", id);
}
_Static_assert(sizeof OOC_TMP_TRAILER_TAG - 1 + 16 + 1 == OOC_TMP_TRAILER, "the trailer's length");

/* A temporary file a previous run left, with exactly the size and header
 * expected, or those and its trailer: its blocks may be reused. */
int ooc_tmp_matches(int fd, const char *tmp, uint64_t size, const unsigned char *hdr, size_t hlen, uint64_t *id)
{
    struct stat sb;
    ooc_err_t e;
    ooc_err_clear(&e);
    *id = 0;
    if (fstat(fd, &sb) != 0) return 0;
    if ((uint64_t)sb.st_size == size + OOC_TMP_TRAILER) {
        /* exactly the bytes format_trailer writes for the id they name */
        char have[OOC_TMP_TRAILER + 1], want[OOC_TMP_TRAILER + 1];
        if (ooc_io_pread(fd, have, OOC_TMP_TRAILER, size, tmp, &e) != OOC_SUCCESS) return 0;
        have[OOC_TMP_TRAILER] = '\0';
        const char *hex = have + sizeof OOC_TMP_TRAILER_TAG - 1;
        uint64_t named = 0;
        if (strspn(hex, "0123456789abcdef") != 16 || sscanf(hex, "%16" SCNx64, &named) != 1 || named == 0) return 0;
        format_trailer(named, want);
        if (memcmp(have, want, OOC_TMP_TRAILER) != 0) return 0;
        *id = named;
    } else if ((uint64_t)sb.st_size != size) {
        return 0;
    }
    if (hlen == 0) return 1;
    unsigned char cur[OOC_FILE_HEADER_CAP];
    return ooc_io_pread(fd, cur, hlen, 0, tmp, &e) == OOC_SUCCESS && memcmp(cur, hdr, hlen) == 0;
}

/* An output that replaces a file keeps that file's permissions (rwx bits
 * only, never set-id; the owner's read and write always) and, where this process may give it, its group, as
 * cp onto it or numpy.save would: a result kept private (0600) stays
 * private, one shared with a group stays shared. Done on the temporary file
 * as it is made (so that its data is never readable by more than the old
 * file's) and again right before the commit (the old file's mode may have
 * changed meanwhile, or the temporary file be an older run's). Best effort:
 * a file system without POSIX modes leaves the new file's own, and a group
 * this process is not in is not given (the old file's group bits then
 * apply to the new file's group). Hard links to the old file keep the old
 * data: the new file is another one, renamed over it. */
static void keep_mode(int fd, const char *path)
{
    struct stat old, mine;
    if (lstat(path, &old) != 0 || !S_ISREG(old.st_mode) || fstat(fd, &mine) != 0) return;
    if (mine.st_gid != old.st_gid) {
        int rc = fchown(fd, (uid_t)-1, old.st_gid); /* (EPERM: not a group of ours) */
        (void)rc;
    }
    /* the owner's read and write always: the temporary file is opened again
     * by path (a resume, the ranks that join it, a check of the result) */
    mode_t want = (old.st_mode & 0777) | 0600;
    if ((mine.st_mode & 0777) != want) {
        int rc = fchmod(fd, want);
        (void)rc;
    }
}

/* The mode a new temporary file is made with: 0600 when it will replace a
 * file (keep_mode() then gives it that file's), so that no one else can
 * open it in between (an open descriptor keeps its access); else 0666 less
 * the umask, as any new file. */
static mode_t tmp_create_mode(const char *path)
{
    struct stat old;
    return path && lstat(path, &old) == 0 && S_ISREG(old.st_mode) ? 0600 : 0666;
}

/* Make fd (locked, ours) hold the header and room for size bytes in all,
 * reserved on the disk where the file system can, so that a full disk fails
 * here and not after hours of work, then a trailer with a new id (*id); with
 * the permissions of the file at path that it will replace (keep_mode). */
static ooc_status_t init_tmp(ooc_err_t *err, int fd, const char *path, const char *tmp, const unsigned char *hdr,
                             size_t hlen, uint64_t size, uint64_t *id)
{
    char eb[128];
    keep_mode(fd, path);
    uint64_t total = size + OOC_TMP_TRAILER;
    if (ftruncate(fd, 0) != 0)
        return OOC_ERR_FILE(err, OOC_ERR_IO, tmp, "ftruncate %s: %s", tmp, ooc_io_errtext(errno, eb, sizeof eb));
    OOC_FORWARD(ooc_io_pwrite(fd, hdr, hlen, 0, tmp, err));
    int rc = ooc_fault_errno(OOC_FAULT_RESERVE);
    if (rc == 0) {
        do {
            rc = fallocate(fd, 0, 0, (off_t)total) == 0 ? 0 : errno;
        } while (rc == EINTR);
    }
    if (rc == EOPNOTSUPP || rc == ENOSYS) rc = 0; /* cannot reserve here: sparse, checked at each write */
    if (rc != 0) {
        char sz[32];
        snprintf(sz, sizeof sz, "%llu", (unsigned long long)total);
        return OOC_ERR_FILE(err, ooc_errno_status(rc), tmp, "reserving %s bytes for %s: %s", sz, tmp,
                            ooc_io_errtext(rc, eb, sizeof eb));
    }
    if (ftruncate(fd, (off_t)total) != 0)
        return OOC_ERR_FILE(err, ooc_errno_status(errno), tmp, "ftruncate %s to %llu bytes: %s", tmp,
                            (unsigned long long)total, ooc_io_errtext(errno, eb, sizeof eb));
    char trailer[OOC_TMP_TRAILER + 1];
    uint64_t made = new_id(fd);
    format_trailer(made, trailer);
    OOC_FORWARD(ooc_io_pwrite(fd, trailer, OOC_TMP_TRAILER, size, tmp, err));
    *id = made;
    return OOC_SUCCESS;
}

/* Starting over where an earlier run left its temporary file tmp (open as
 * *fd, locked, ours): a new file (another inode, born now), not that one
 * emptied, so that no journal of the old one (at a path of the caller's,
 * which this call cannot remove) ever matches it: it would vouch for blocks
 * that are gone. The old one goes when its descriptor is reused, after the
 * new one is made (their inode numbers differ): the new file takes the old
 * one's descriptor number (close-on-exec, its lock, an OFD or flock one, with it), so
 * that copies of that number held elsewhere (a problem's) write to the new
 * file, never to whatever would take a freed number. On failure *fd is
 * closed (-1). */
static ooc_status_t replace_tmp(ooc_err_t *err, const char *tmp, mode_t mode, int *fd)
{
    int old = *fd, made = -1, created;
    *fd = -1;
    int e = ooc_fault_errno(OOC_FAULT_REMOVE);
    if (ooc_fd_is_path(old, tmp) && (e != 0 || (unlink(tmp) != 0 && (e = errno) != ENOENT))) {
        char eb[128];
        close(old);
        return OOC_ERR_FILE(err, ooc_errno_status(e), tmp, "cannot remove the temporary file %s an earlier "
                            "run left, to start afresh: %s", tmp, ooc_io_errtext(e, eb, sizeof eb));
    }
    ooc_status_t st = open_tmp(err, tmp, mode, &made, &created);
    if (st == OOC_SUCCESS && dup3(made, old, O_CLOEXEC) < 0) {
        char eb[128];
        e = errno;
        unlink(tmp);
        st = OOC_ERR_FILE(err, ooc_errno_status(e), tmp, "dup3 of the new temporary file %s: %s", tmp,
                          ooc_io_errtext(e, eb, sizeof eb));
    }
    if (st == OOC_SUCCESS) {
        close(made);
        *fd = old;
        return OOC_SUCCESS;
    }
    if (made >= 0) close(made);
    close(old);
    return st;
}

/* The default journal's path of path (PATH.ooc-journal), allocated. */
static ooc_status_t default_journal(ooc_err_t *err, const char *path, char **journal)
{
    *journal = malloc(strlen(path) + sizeof OOC_JOURNAL_SUFFIX);
    OOC_RETURN_ERROR_IF(*journal == NULL, err, OOC_ERR_HOST_MEMORY, "%s: out of memory", path);
    strcpy(*journal, path);
    strcat(*journal, OOC_JOURNAL_SUFFIX);
    return OOC_SUCCESS;
}

/* What drop_default_journal() would refuse, before anything is touched. */
static ooc_status_t default_journal_removable(ooc_err_t *err, const char *path)
{
    char *journal;
    OOC_FORWARD(default_journal(err, path, &journal));
    ooc_status_t st = ooc_journal_removable(journal, err);
    free(journal);
    return st;
}

/* Remove the default journal of path (PATH.ooc-journal): the data it
 * vouched for is being overwritten. With keep_in_place, not one of a job in
 * place that committed its output, the file now at path (its inode: a
 * touch keeps it): ooc_gemm_files() refuses a resume of that job and removes
 * the journal for any other (files.c committed_journal). */
static ooc_status_t drop_default_journal(ooc_err_t *err, const char *path, int keep_in_place)
{
    int kept = 0;
    char *journal;
    OOC_FORWARD(default_journal(err, path, &journal));
    ooc_journal_info_t have;
    int exists = 0;
    ooc_err_t ignored; /* (one that cannot be read is removed, or refused, as any other) */
    if (keep_in_place && ooc_journal_read(journal, &have, &exists, &ignored) == OOC_SUCCESS && exists) {
        kept = strstr(have.head.job, OOC_JOURNAL_IN_PLACE) != NULL && ooc_journal_output_at(&have, path);
        ooc_journal_info_free(&have);
    }
    ooc_status_t st = kept ? OOC_SUCCESS : ooc_journal_remove(journal, err);
    free(journal);
    return st;
}

ooc_status_t ooc_file_output_spec(ooc_err_t *err, const char *path, const ooc_file_spec_t *spec,
                                  ooc_file_spec_t *s, unsigned char *hdr, size_t *hlen, uint64_t *bytes)
{
    *s = *spec;
    if (s->format == OOC_FORMAT_AUTO) {
        if (!ends_with(path, ".npy"))
            return OOC_ERR_FILE(err, OOC_ERR_FORMAT, path,
                                "%s: cannot create: no format given and the name does not end in .npy "
                                "(choose npy or raw)", path);
        s->format = OOC_FORMAT_NPY;
    }
    if (s->format != OOC_FORMAT_NPY && s->format != OOC_FORMAT_RAW)
        return OOC_ERR_FILE(err, OOC_ERR_FORMAT, path, "%s: cannot create: unknown file format %d", path,
                            (int)s->format);
    OOC_FORWARD(check_spec(err, path, s, "cannot create: it needs", 0));
    *hlen = 0;
    if (s->format == OOC_FORMAT_NPY) {
        *hlen = ooc_npy_format(s, hdr, OOC_FILE_HEADER_CAP);
        OOC_RETURN_ERROR_IF(*hlen == 0, err, OOC_ERR_INTERNAL, "%s: the .npy header does not fit in %d bytes",
                            path, OOC_FILE_HEADER_CAP);
    }
    return data_size(err, path, s, *hlen, bytes);
}

ooc_status_t ooc_file_create(ooc_handle_t *h, const char *path, const ooc_file_spec_t *spec,
                             unsigned flags, ooc_file_t **file)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(path == NULL || spec == NULL || file == NULL, err, OOC_ERR_NULL_ARG,
                        "ooc_file_create: path, spec or file is NULL");
    OOC_RETURN_ERROR_IF((flags & ~(unsigned)(OOC_FILE_RESUME | OOC_FILE_SHARED)) != 0, err, OOC_ERR_INVALID_PARAM,
                        "ooc_file_create: unknown flags 0x%x", flags);
    OOC_FORWARD(ooc_fault_check(err)); /* (its reserve and remove are fault sites) */
    ooc_file_spec_t s;
    unsigned char hdr[OOC_FILE_HEADER_CAP];
    size_t hlen = 0;
    uint64_t bytes;
    /* a name the output of another job (on PATH without the suffix) would
     * take for its temporary file or its default journal, and replace when
     * starting afresh (and this one, committed, would replace theirs) */
    size_t plen = strlen(path), slen = strlen(TMP_SUFFIX);
    OOC_RETURN_FILE_ERROR_IF(plen >= slen && strcmp(path + plen - slen, TMP_SUFFIX) == 0, err,
                             OOC_ERR_INVALID_PARAM, path,
                             "output %s: a name ending in %s is the temporary file of a job on %.*s, which "
                             "would replace it; choose another name", path, TMP_SUFFIX, (int)(plen - slen), path);
    size_t jl = ooc_journal_name_base(path);
    OOC_RETURN_FILE_ERROR_IF(jl > 0, err, OOC_ERR_INVALID_PARAM, path,
                             "output %s: a name ending in %s is a resume journal of a job on %.*s, which this "
                             "file would replace; choose another name", path, path + jl, (int)jl, path);
    OOC_FORWARD(ooc_file_output_spec(err, path, spec, &s, hdr, &hlen, &bytes));
    OOC_FORWARD(check_target(err, path));

    ooc_status_t st;
    int fd = -1, created = 0;
    ooc_file_t *f = calloc(1, sizeof *f);
    if (f == NULL || (f->path = strdup(path)) == NULL ||
        (f->tmp_path = malloc(strlen(path) + sizeof TMP_SUFFIX)) == NULL) {
        st = OOC_ERR(err, OOC_ERR_HOST_MEMORY, "%s: out of memory for the file object", path);
        goto fail;
    }
    strcpy(f->tmp_path, path);
    strcat(f->tmp_path, TMP_SUFFIX);
    const char *tmp = f->tmp_path;

    st = open_tmp(err, tmp, tmp_create_mode(path), &fd, &created);
    if (st != OOC_SUCCESS) goto fail;
    f->resumed = (flags & OOC_FILE_RESUME) && !created && ooc_tmp_matches(fd, tmp, hlen + bytes, hdr, hlen, &f->id);
    if (!f->resumed && !created) {
        /* (a file at the default journal's path that is not a journal is
         * refused below: before the old temporary file goes, not after) */
        st = default_journal_removable(err, path);
        if (st != OOC_SUCCESS) {
            close(fd);
            goto fail;
        }
        st = replace_tmp(err, tmp, tmp_create_mode(path), &fd);
        if (st != OOC_SUCCESS) goto fail;
    }
    if (!f->resumed) {
        /* starting over: the data a default journal vouched for is about to
         * go (on a resume, a journal of a job in place that committed stays
         * until ooc_gemm_files() knows the job: files.c committed_journal) */
        st = drop_default_journal(err, path, (flags & OOC_FILE_RESUME) != 0);
        if (st == OOC_SUCCESS) st = init_tmp(err, fd, path, tmp, hdr, hlen, hlen + bytes, &f->id);
    }
    /* made: the ranks of this job may join it now (another job still may not) */
    if (st == OOC_SUCCESS && (flags & OOC_FILE_SHARED)) st = ooc_fd_lock(fd, tmp, 1, err);
    if (st != OOC_SUCCESS) {
        if (!f->resumed && ooc_fd_is_path(fd, tmp)) unlink(tmp); /* ours, locked: emptied or made above */
        close(fd);
        goto fail;
    }
    f->fd = fd;
    f->spec = s;
    f->data_offset = hlen;
    f->data_bytes = bytes;
    f->writable = 1;
    f->shared = (flags & OOC_FILE_SHARED) != 0;
    *file = f;
    return OOC_SUCCESS;
fail:
    if (f) {
        free(f->path);
        free(f->tmp_path);
    }
    free(f);
    return st;
}

ooc_status_t ooc_file_restart(ooc_err_t *err, ooc_file_t *f)
{
    OOC_RETURN_ERROR_IF(!f->writable || f->committed || f->joined || f->tmp_path == NULL, err, OOC_ERR_INTERNAL,
                        "%s: its temporary file cannot be started over here", f->path);
    ooc_file_spec_t s;
    unsigned char hdr[OOC_FILE_HEADER_CAP];
    size_t hlen = 0;
    uint64_t bytes;
    OOC_FORWARD(ooc_file_output_spec(err, f->path, &f->spec, &s, hdr, &hlen, &bytes));
    /* shared: only while no other process holds it (its lock ours alone
     * again, converted in place; a process that joined writes to this
     * inode, which must then stay) */
    if (f->shared && ooc_fd_lock(f->fd, f->tmp_path, 0, err) != OOC_SUCCESS) {
        if (err->status != OOC_ERR_BUSY) return err->status;
        /* (a flock, where there are no OFD locks, converts by dropping the
         * shared lock first: taken again) */
        ooc_err_clear(err);
        return ooc_fd_lock(f->fd, f->tmp_path, 1, err);
    }
    ooc_status_t st = replace_tmp(err, f->tmp_path, tmp_create_mode(f->path), &f->fd);
    if (st == OOC_SUCCESS) st = drop_default_journal(err, f->path, 0);
    if (st == OOC_SUCCESS) st = init_tmp(err, f->fd, f->path, f->tmp_path, hdr, hlen, hlen + bytes, &f->id);
    if (st == OOC_SUCCESS && f->shared) st = ooc_fd_lock(f->fd, f->tmp_path, 1, err); /* joinable again */
    if (st != OOC_SUCCESS) {
        /* nothing of the old file's is left to resume; this object writes nothing more */
        if (f->fd >= 0 && ooc_fd_is_path(f->fd, f->tmp_path)) unlink(f->tmp_path);
        f->writable = 0;
        return st;
    }
    f->resumed = 0;
    return OOC_SUCCESS;
}

ooc_status_t ooc_file_seal(ooc_err_t *err, ooc_file_t *f)
{
    if (f->id == 0 || f->joined || !f->writable || f->tmp_path == NULL) return OOC_SUCCESS;
    char eb[128];
    if (ftruncate(f->fd, (off_t)(f->data_offset + f->data_bytes)) != 0)
        return OOC_ERR_FILE(err, ooc_errno_status(errno), f->tmp_path, "ftruncate %s to %llu bytes: %s", f->tmp_path,
                            (unsigned long long)(f->data_offset + f->data_bytes),
                            ooc_io_errtext(errno, eb, sizeof eb));
    uint64_t id = f->id;
    f->id = 0;
    ooc_status_t st = ooc_io_sync(f->fd, f->tmp_path, err);
    if (st != OOC_SUCCESS) ooc_file_unseal(f, id); /* (cut, not flushed: as it was) */
    return st;
}

int ooc_file_unseal(ooc_file_t *f, uint64_t id)
{
    if (f->id != 0 || id == 0 || f->joined || !f->writable || f->tmp_path == NULL) return -1;
    char trailer[OOC_TMP_TRAILER + 1];
    format_trailer(id, trailer);
    ooc_err_t e;
    ooc_err_clear(&e);
    if (ooc_io_pwrite(f->fd, trailer, OOC_TMP_TRAILER, f->data_offset + f->data_bytes, f->tmp_path, &e) != OOC_SUCCESS)
        return -1;
    f->id = id; /* (written: a commit must cut it again, flushed or not) */
    return ooc_io_sync(f->fd, f->tmp_path, &e) == OOC_SUCCESS ? 0 : -1;
}

ooc_status_t ooc_file_alone(ooc_err_t *err, const ooc_file_t *f, const char *what)
{
    if (!f->shared || f->committed || f->tmp_path == NULL) return OOC_SUCCESS;
    /* our shared lock converted to an exclusive one (kept: the job is being
     * finished, nobody is to join it now); refused while a process that
     * joined holds its shared lock */
    ooc_status_t st = ooc_fd_lock(f->fd, f->tmp_path, 0, err);
    if (st != OOC_ERR_BUSY) return st;
    ooc_err_clear(err);
    ooc_err_t again;
    ooc_err_clear(&again);
    /* (a flock converts by dropping the shared lock first: taken again, or
     * said, as another job may then take the file) */
    if (ooc_fd_lock(f->fd, f->tmp_path, 1, &again) != OOC_SUCCESS)
        return OOC_ERR_FILE(err, OOC_ERR_IO, f->tmp_path,
                            "%s %s: another process still has %s open, and its lock could not be taken again: %s",
                            what, f->path, f->tmp_path, again.msg);
    return OOC_ERR_FILE(err, OOC_ERR_BUSY, f->tmp_path,
                        "%s %s: another process still has %s open (one that joined it and has not closed it: the "
                        "creator does this once every process that joined is done and has closed it)",
                        what, f->path, f->tmp_path);
}

ooc_status_t ooc_file_commit(ooc_handle_t *h, ooc_file_t *f)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(f == NULL, err, OOC_ERR_NULL_ARG, "ooc_file_commit: file is NULL");
    if (f->committed && f->unsynced) { /* (only the directory's flush left to do) */
        OOC_FORWARD(ooc_io_sync_dir(f->path, err));
        f->unsynced = 0;
    }
    if (f->committed) return OOC_SUCCESS;
    OOC_RETURN_FILE_ERROR_IF(!f->writable || f->tmp_path == NULL, err, OOC_ERR_INVALID_PARAM, f->path,
                             "ooc_file_commit %s: not a file created for writing", f->path);
    OOC_RETURN_FILE_ERROR_IF(f->joined, err, OOC_ERR_INVALID_PARAM, f->path,
                             "ooc_file_commit %s: a joined file: the process that created it commits it", f->path);
    char eb[128];
    OOC_FORWARD(ooc_file_alone(err, f, "commit"));
    OOC_FORWARD(ooc_io_sync(f->fd, f->tmp_path, err));
    OOC_RETURN_ERROR_IF(!ooc_fd_is_path(f->fd, f->tmp_path), err, OOC_ERR_IO,
                        "commit %s: the temporary file %s was removed or replaced meanwhile", f->path, f->tmp_path);
    OOC_FORWARD(check_target(err, f->path)); /* a device or directory may have appeared there since */
    /* its trailer never reaches the target: cut right before the rename,
     * and put back when the rename fails (a job recorded complete was
     * sealed already; the journals of one that was not, a split job's
     * ranks', name the file by its id) */
    keep_mode(f->fd, f->path);
    uint64_t id = f->id;
    OOC_FORWARD(ooc_file_seal(err, f));
    int injected = ooc_fault_errno(OOC_FAULT_COMMIT); /* (a commit cut short, for the tests) */
    if (injected) errno = injected;
    if (injected || rename(f->tmp_path, f->path) != 0) {
        int e = errno;
        ooc_file_unseal(f, id); /* (nothing when it was sealed already) */
        return OOC_ERR_FILE(err, OOC_ERR_IO, f->path, "rename %s to %s: %s%s", f->tmp_path, f->path,
                            ooc_io_errtext(e, eb, sizeof eb), injected ? " (injected by OOC_FAULT)" : "");
    }
    /* the target exists now: the file is committed even if the directory sync fails */
    free(f->tmp_path);
    f->tmp_path = NULL;
    f->writable = 0;
    f->committed = 1;
    ooc_status_t st = ooc_io_sync_dir(f->path, err);
    f->unsynced = st != OOC_SUCCESS;
    return st;
}

size_t ooc_journal_name_base(const char *path)
{
    /* NAME.ooc-journal, or a rank's NAME.ooc-journal.rR-of-P */
    const char *j = NULL;
    for (const char *p = strstr(path, OOC_JOURNAL_SUFFIX); p; p = strstr(p + 1, OOC_JOURNAL_SUFFIX)) j = p;
    if (j == NULL || j == path) return 0;
    const char *t = j + strlen(OOC_JOURNAL_SUFFIX);
    unsigned r, n;
    int used = -1;
    if (*t == '\0' || (sscanf(t, ".r%u-of-%u%n", &r, &n, &used) == 2 && used > 0 && t[used] == '\0' &&
                        strspn(t + 2, "0123456789-of") == strlen(t + 2)))
        return (size_t)(j - path);
    return 0;
}

int ooc_file_committed(const ooc_file_t *f) { return f != NULL && f->committed; }

void ooc_file_close(ooc_file_t *f, int discard)
{
    if (f == NULL) return;
    /* only our own temporary file: never one another job made at that name since */
    if (f->tmp_path != NULL && !f->committed && discard && f->writable && !f->joined &&
        ooc_fd_is_path(f->fd, f->tmp_path))
        unlink(f->tmp_path);
    if (f->fd >= 0) close(f->fd);
    free(f->tmp_path);
    free(f->path);
    free(f);
}

ooc_status_t ooc_file_describe(const ooc_file_t *f, ooc_file_spec_t *spec)
{
    if (f == NULL || spec == NULL) return OOC_ERR_NULL_ARG;
    *spec = f->spec;
    return OOC_SUCCESS;
}

uint64_t ooc_file_data_offset(const ooc_file_t *f) { return f ? f->data_offset : 0; }

/* where the bytes are now: the temporary file until commit */
static const char *cur_path(const ooc_file_t *f) { return f->tmp_path ? f->tmp_path : f->path; }

/* byte offset and length of count elements from first, or OOC_ERR_SHAPE */
static ooc_status_t span(ooc_err_t *err, const ooc_file_t *f, const char *call, uint64_t first,
                         uint64_t count, uint64_t *off, size_t *len)
{
    uint64_t total = (uint64_t)f->spec.rows * (uint64_t)f->spec.cols; /* checked at open/create */
    OOC_RETURN_FILE_ERROR_IF(first > total || count > total - first, err, OOC_ERR_SHAPE, cur_path(f),
                             "%s %s: %llu elements from element %llu pass the end (%lld x %lld = %llu elements)",
                             call, cur_path(f), (unsigned long long)count, (unsigned long long)first,
                             (long long)f->spec.rows, (long long)f->spec.cols, (unsigned long long)total);
    uint64_t e = ooc_dtype_size(f->spec.dtype);
    OOC_RETURN_FILE_ERROR_IF(count * e > (uint64_t)SIZE_MAX, err, OOC_ERR_OVERFLOW, cur_path(f),
                             "%s %s: %llu elements do not fit in memory", call, cur_path(f),
                             (unsigned long long)count);
    *off = f->data_offset + first * e;
    *len = (size_t)(count * e);
    return OOC_SUCCESS;
}

ooc_status_t ooc_file_read(ooc_handle_t *h, const ooc_file_t *f, uint64_t first, void *buf, uint64_t count)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(f == NULL || (buf == NULL && count > 0), err, OOC_ERR_NULL_ARG,
                        "ooc_file_read: file or buf is NULL");
    uint64_t off;
    size_t len;
    OOC_FORWARD(span(err, f, "ooc_file_read", first, count, &off, &len));
    return ooc_io_pread(f->fd, buf, len, off, cur_path(f), err);
}

ooc_status_t ooc_file_write(ooc_handle_t *h, ooc_file_t *f, uint64_t first, const void *buf, uint64_t count)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(f == NULL || (buf == NULL && count > 0), err, OOC_ERR_NULL_ARG,
                        "ooc_file_write: file or buf is NULL");
    OOC_RETURN_FILE_ERROR_IF(!f->writable, err, OOC_ERR_INVALID_PARAM, f->path,
                             "ooc_file_write %s: not open for writing (%s)", f->path,
                             f->committed ? "already committed" : "opened read-only");
    uint64_t off;
    size_t len;
    OOC_FORWARD(span(err, f, "ooc_file_write", first, count, &off, &len));
    return ooc_io_pwrite(f->fd, buf, len, off, cur_path(f), err);
}
