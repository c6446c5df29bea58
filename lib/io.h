/* SPDX-License-Identifier: MIT */
/*
 * io.h: matrix files (see ooc_file_t in ooc_gemm.h). The .npy header codec
 * (io_npy.c), positioned, complete reads and writes and the other
 * descriptor helpers (io_fd.c), and the file object (io_file.c). Knows
 * nothing of CUDA, the planner or the pipeline.
 */
#ifndef OOC_IO_H
#define OOC_IO_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ooc_gemm.h"

/* An output's data is in PATH OOC_TMP_SUFFIX until it is committed. */
#define OOC_TMP_SUFFIX ".ooc-tmp"
/* Until its job is complete (ooc_file_seal), that temporary file ends, past
 * the output's bytes, in a trailer of OOC_TMP_TRAILER bytes naming it:
 * "oocgemm-tmp-id " and 16 lower-case hex digits of a random id, made anew
 * with each new file, and a newline. A journal records the id of the file
 * its blocks are in (journal.h out_id), so that it never vouches for a file
 * made later at the same inode number (where the file system keeps no birth
 * time to tell them apart). */
#define OOC_TMP_TRAILER 32
#define OOC_TMP_TRAILER_TAG "oocgemm-tmp-id "
/* room for any .npy header ooc_npy_format writes (a 2-D one is under 256 bytes) */
#define OOC_FILE_HEADER_CAP 1024

/* The default resume journal of an output file is PATH OOC_JOURNAL_SUFFIX. */
#define OOC_JOURNAL_SUFFIX ".ooc-journal"

/* When path is a default journal's name, NAME.ooc-journal (or a rank's of a
 * split job, NAME.ooc-journal.rR-of-P): the length of NAME; else 0. */
size_t ooc_journal_name_base(const char *path);

struct ooc_file_s {
    int fd;
    char *path;          /* the name the caller gave (the target, for created files) */
    char *tmp_path;      /* created files: where the data is until commit; else NULL */
    ooc_file_spec_t spec;
    uint64_t data_offset;  /* bytes before element 0 */
    uint64_t data_bytes;   /* rows * cols * element size */
    int writable, committed;
    int unsynced; /* committed, but the directory's flush after the rename failed: the next commit tries again */
    int resumed;           /* created with OOC_FILE_RESUME and the previous temporary file was kept
                            * (joined: the joiner says the creator kept it) */
    int joined;            /* opened with ooc_file_join: another process created it, and commits it */
    int shared;            /* created with OOC_FILE_SHARED: other processes may have joined it */
    uint64_t id;           /* the temporary file's id (its trailer); 0 once sealed (no trailer) */
};

/* Byte offset of stored element (i, j) (i < rows, j < cols as stored). */
static inline uint64_t ooc_file_elem_offset(const ooc_file_t *f, int64_t i, int64_t j, size_t e)
{
    uint64_t idx = f->spec.layout == OOC_ROW_MAJOR ? (uint64_t)i * (uint64_t)f->spec.cols + (uint64_t)j
                                                   : (uint64_t)i + (uint64_t)j * (uint64_t)f->spec.rows;
    return f->data_offset + idx * e;
}

/* Leading dimension of the stored matrix (cols for C order, rows for Fortran). */
static inline int64_t ooc_file_ld(const ooc_file_t *f)
{
    return f->spec.layout == OOC_ROW_MAJOR ? f->spec.cols : f->spec.rows;
}

/* ---- output files (io_file.c), for io_join.c ---- */

/* The output spec resolved as ooc_file_create does (format from the name),
 * checked, its header (hdr, OOC_FILE_HEADER_CAP bytes; *hlen 0 for raw) and
 * its data bytes. */
ooc_status_t ooc_file_output_spec(ooc_err_t *err, const char *path, const ooc_file_spec_t *spec,
                                  ooc_file_spec_t *s, unsigned char *hdr, size_t *hlen, uint64_t *bytes);

/* Start created file f's temporary file over: a new file in its place (another
 * inode, born now: no journal of the old one, at whatever path, vouches for
 * it), with its header and room reserved, and C's default journal removed.
 * For a resumed run that resumes no block (its journal is absent, empty or
 * another job's, or restarts a job in k-panels): the blocks some other
 * journal recorded in the file it kept are about to be overwritten.
 * Not for a joined file; a shared one (OOC_FILE_SHARED) only while no
 * other process holds it: else it is kept as it is (f->resumed stays 1). */
ooc_status_t ooc_file_restart(ooc_err_t *err, ooc_file_t *f);

/* 1 when the open file tmp starts with hdr and has exactly size bytes (a
 * sealed one: *id 0) or size bytes and a well-formed trailer (*id its id). */
int ooc_tmp_matches(int fd, const char *tmp, uint64_t size, const unsigned char *hdr, size_t hlen, uint64_t *id);

/* Seal created file f: its job is complete, so its trailer goes (the file is
 * cut to the output's size and flushed; f->id becomes 0) before the journal
 * records the finished file's size and time; failing, the trailer is put
 * back where it can be. Nothing for a sealed file; not for a joined one
 * (its creator seals). ooc_file_commit() seals a file not sealed yet. */
ooc_status_t ooc_file_seal(ooc_err_t *err, ooc_file_t *f);
/* A file created shared (OOC_FILE_SHARED) that is to be finished (what: the
 * call, for the message): no process that joined it has it open any more,
 * its lock taken exclusive for good; OOC_ERR_BUSY while one has (a partial C
 * committed, or recorded finished, otherwise). Any other file: success. */
ooc_status_t ooc_file_alone(ooc_err_t *err, const ooc_file_t *f, const char *what);
/* Undo ooc_file_seal of f, whose id was id, when the journal could not
 * record the job complete: the trailer back, so that the journals of the
 * file (the ranks' too) still name it. Best effort: 0, or -1 when it could
 * not (a resume then computes the job again). */
int ooc_file_unseal(ooc_file_t *f, uint64_t id);

/* ---- descriptor helpers (io_fd.c) ---- */

/* errno e's text in buf (n bytes), thread-safe; returns the text. */
const char *ooc_io_errtext(int e, char *buf, size_t n);
/* What makes path's name too long (ENAMETOOLONG), into buf: the bytes of
 * its last component against the file system's limit for its directory
 * (pathconf), or of the whole path against PATH_MAX. */
const char *ooc_io_too_long(const char *path, char *buf, size_t n);

/* pread/pwrite exactly len bytes at off, retrying short transfers and EINTR.
 * A read past the end of the file is OOC_ERR_FORMAT ("truncated"); other
 * failures OOC_ERR_IO, naming path, call, offset and errno's text. */
ooc_status_t ooc_io_pread(int fd, void *buf, size_t len, uint64_t off, const char *path, ooc_err_t *err);
ooc_status_t ooc_io_pwrite(int fd, const void *buf, size_t len, uint64_t off, const char *path, ooc_err_t *err);

/* fdatasync fd (the file at path, for messages), retried on EINTR; a
 * failure is OOC_ERR_NO_SPACE or OOC_ERR_IO naming path. */
ooc_status_t ooc_io_sync(int fd, const char *path, ooc_err_t *err);

/* fsync the directory holding path, so that a rename or a file created in
 * it is durable (a file system that cannot sync a directory, or a
 * directory this process may not read: success);
 * OOC_ERR_IO naming the directory in its message, with path as the
 * error's path (ooc_last_error_path(): whose entry it was). */
ooc_status_t ooc_io_sync_dir(const char *path, ooc_err_t *err);

/* Open an existing regular file without following a final symbolic link or
 * blocking on a FIFO (flags: O_RDONLY or O_RDWR, plus e.g. O_APPEND; the
 * descriptor is blocking and close-on-exec). -1 with errno when open fails
 * (ENOENT: nothing there; ELOOP: a symbolic link), or with errno EINVAL and
 * *mode set when the file is not a regular one. */
int ooc_open_regular(const char *path, int flags, unsigned *mode);

/* fd moved to a descriptor above 2 (close-on-exec) when it is 0, 1 or 2: a
 * program that closed its standard streams would otherwise get them for the
 * files the library opens, and what it prints would land in them (an
 * output's header overwritten). fd itself when it is above 2 or negative,
 * -1 with errno when it cannot be moved (fd closed). */
int ooc_fd_off_std(int fd);

/* Lock an open file for this job (an open-file-description lock, released
 * when the descriptor is closed; fd open for writing), exclusively or, with
 * shared, shared with the other processes of the job (a lock this
 * descriptor holds already is converted): OOC_ERR_BUSY naming path when
 * another job holds it (or, for a shared lock, anyone holds it exclusively),
 * OOC_ERR_IO when locking failed. Success too on a file system that has no
 * locks (ENOSYS, EOPNOTSUPP, ENOLCK): the job goes on unlocked there. */
ooc_status_t ooc_fd_lock(int fd, const char *path, int shared, ooc_err_t *err);

/* 1 when path names (without following a final symbolic link) the very file
 * open as fd; 0 otherwise (removed, renamed, replaced). */
int ooc_fd_is_path(int fd, const char *path);

/* The birth time of the file open as fd (statx's btime): 1 with *sec and
 * *nsec, 0 where the system or the file system does not keep it. With the
 * inode it names one creation of a file: an inode number may be reused. */
int ooc_fd_birth(int fd, int64_t *sec, long *nsec);

/* "a FIFO", "a directory", "a character device", ...: what a non-regular
 * file is, for messages. */
const char *ooc_file_kind(unsigned mode);

/* ---- .npy header codec (io_npy.c): pure functions on bytes ---- */

/* Bytes of the NumPy magic string "\x93NUMPY". */
#define OOC_NPY_MAGIC_LEN 6

/* Parse a complete .npy header: buf holds the first len bytes of the file.
 * On success fills spec (format NPY, rows, cols, dtype, layout) and
 * *data_offset. Returns OOC_ERR_FORMAT with a message naming what is wrong
 * (bad magic, unsupported version, big-endian, dtype not <f4/<f8/<c8/<c16,
 * shape not 2-D (1-D is taken as a single column), malformed dict) or, when
 * len is too short to hold the whole header, OOC_ERR_FORMAT with *need set
 * to the bytes required (so the caller can read more and call again). */
ooc_status_t ooc_npy_parse(const unsigned char *buf, size_t len, ooc_file_spec_t *spec,
                           uint64_t *data_offset, size_t *need, ooc_err_t *err);

/* Format the header for spec into buf (cap bytes): version 1.0 when the
 * header fits in 65535 bytes, else 2.0; padded with spaces so the data starts
 * at a multiple of 64 bytes, ending in '\n'. Returns the header length (the
 * data offset), or 0 when cap is too small. */
size_t ooc_npy_format(const ooc_file_spec_t *spec, unsigned char *buf, size_t cap);

#endif
