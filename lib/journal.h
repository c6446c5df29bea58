/* SPDX-License-Identifier: MIT */
/*
 * journal.h: the resume journal of a file multiply. A text file beside the
 * output: a header naming the job (input files' identities, shapes, types,
 * scalars), its plan and the temporary output file it writes, sealed by a
 * checksum; then one checksummed "done G" record per finished row block,
 * appended after that block of C is flushed to disk, in any order, holding
 * the digest of the block's bytes (digest.h) that a resume checks; then,
 * when every block is done (of its range of row blocks, for a job split
 * between processes), a "complete" record with the finished output's
 * identity. A record whose checksum does not match its job is damage, and a
 * resume refuses a damaged journal. Knows nothing of CUDA or the pipeline.
 */
#ifndef OOC_JOURNAL_H
#define OOC_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Most blocks a journal may describe (bounds the memory a resume needs). */
#define OOC_JOURNAL_MAX_BLOCKS ((int64_t)1 << 31)
/* Longest job identity line. */
#define OOC_JOURNAL_JOB_MAX 2048

/* What the header says: the job and the plan that decides its blocks. */
typedef struct {
    char job[OOC_JOURNAL_JOB_MAX]; /* identity of the job: must match for a resume */
    int swap;
    int64_t mb, nb, kb;
    int tail, b_chunks;
    int lead;           /* blocks per panel multiplied chunk by chunk of op(B) (plan.h); 1 when absent */
    int tail_rep;       /* blocks of each tail size (plan.h); 1 when absent */
    int a_pieces;       /* k-pieces of op(A)'s blocks (plan.h); 1 when absent */
    int64_t total;      /* blocks in the job */
    int resumable;      /* 0: restart from scratch on resume (several k-panels) */
    uint64_t out_dev, out_ino; /* the temporary output file the blocks are written into */
    int64_t out_born_sec;      /* and its birth time (ooc_fd_birth()): 0, 0 where unknown */
    long out_born_nsec;
    uint64_t out_id;           /* and its own id (the trailer ooc_file_create writes in it: io.h
                                * OOC_TMP_TRAILER); 0 in journals written before ids */
    /* a journal of row blocks [range_b0, range_b1) of the range_m of each
     * panel alone (its done records are of those); range_m 0: the whole job */
    int64_t range_b0, range_b1, range_m;
    /* and of panels [range_p0, range_p1) of the range_np of op(B)'s columns
     * alone (block g is of panel (g / range_m) % range_np); range_np 0: all */
    int64_t range_p0, range_p1, range_np;
    /* what computed the blocks (ooc_compute_id()); "" in journals written
     * before it was recorded */
    char by[OOC_COMPUTE_ID_MAX];
    int version;        /* the journal's format: 3 (with digests; 0 means 3), or 2 (read from a journal
                         * written before them, and appended to as such) */
} ooc_journal_head_t;

/* 1 when block g is one the journal's range holds (always, for the whole job). */
int ooc_journal_in_range(const ooc_journal_head_t *h, int64_t g);
/* Blocks the journal's range holds: all of them are done when it is complete. */
int64_t ooc_journal_range_blocks(const ooc_journal_head_t *h);

/* A block's digest as its last done record holds it. */
typedef struct {
    int64_t g;
    uint64_t digest;
} ooc_journal_sum_t;

/* A journal as read. */
typedef struct {
    ooc_journal_head_t head;
    unsigned char *done; /* head.total bits: block g recorded as finished */
    ooc_journal_sum_t *sums; /* the done blocks whose last record holds a digest, by block */
    size_t nsums;
    int64_t ndone;       /* distinct blocks recorded */
    int64_t prefix;      /* blocks 0 .. prefix-1 are all recorded */
    int mixed;           /* its blocks were not all computed by head.by: a resume allowed to mix
                            computers (ooc_files_opts_t::allow_mixed) kept blocks of another's */
    int complete;        /* the job finished: the output below holds its result */
    uint64_t out_size;   /* the finished output's size and modification time */
    int64_t out_mtime_sec;
    long out_mtime_nsec;
} ooc_journal_info_t;

/* Parse a journal held in buf (len bytes; name for messages). A torn last
 * line (no newline: a write cut by a crash) is ignored; anything else that
 * is not exactly what ooc_journal_* writes is OOC_ERR_JOURNAL naming the line.
 * On success info->done is allocated: free it with ooc_journal_info_free(). */
ooc_status_t ooc_journal_parse(const char *buf, size_t len, const char *name, ooc_journal_info_t *info,
                               ooc_err_t *err);

/* Read the journal at path. *exists = 0 (and OOC_SUCCESS) when there is none;
 * OOC_ERR_JOURNAL when it is not a journal of this version or is damaged. An
 * empty file (a creation cut short) exists, with nothing in info. */
ooc_status_t ooc_journal_read(const char *path, ooc_journal_info_t *info, int *exists, ooc_err_t *err);
void ooc_journal_info_free(ooc_journal_info_t *info);
/* 1 with *digest when info holds block g's digest (its last done record has
 * one); 0 when not (recorded before digests, or not done). */
int ooc_journal_sum(const ooc_journal_info_t *info, int64_t g, uint64_t *digest);
/* The same in sums[0..n), sorted by block. */
int ooc_journal_sum_find(const ooc_journal_sum_t *sums, size_t n, int64_t g, uint64_t *digest);

/* The file at path is the output a complete whole-job journal recorded:
 * the same file (its inode: a rename, a commit, keeps it; touched or not). */
int ooc_journal_output_at(const ooc_journal_info_t *have, const char *path);
/* ... and unchanged since (its size and modification time too). */
int ooc_journal_output_is(const ooc_journal_info_t *have, const char *path);

/* The mark a job line (files_job.c) has when the job runs in place. */
#define OOC_JOURNAL_IN_PLACE " inplace=1"

/* An open journal, locked against other jobs, for appending. */
typedef struct {
    int fd;
    char *path;
    uint64_t digest; /* of the header: every record's checksum starts from it */
    int sums;        /* done records hold the blocks' digests (not in a version 2 journal) */
} ooc_journal_t;

/* Remove the journal at path before a fresh run (it vouches for data that is
 * about to be overwritten). Nothing there is fine. Refuses (OOC_ERR_JOURNAL,
 * removing nothing) a path that is not a regular file holding a journal (or
 * empty: a creation cut short): a symbolic link, a device, an input named by
 * mistake. OOC_ERR_BUSY when another job holds it. */
ooc_status_t ooc_journal_remove(const char *path, ooc_err_t *err);
/* What ooc_journal_remove would refuse at path (a file there that is not a
 * journal), checked before anything else is touched; nothing removed. */
ooc_status_t ooc_journal_removable(const char *path, ooc_err_t *err);

/* Create the journal with head (exclusively: nothing may be at path), locked
 * and flushed to disk. */
ooc_status_t ooc_journal_create(ooc_journal_t *j, const char *path, const ooc_journal_head_t *head,
                                ooc_err_t *err);

/* Reopen the journal read as info to append to it (locked; a torn last line
 * is cut off so that the next record starts on a line of its own). */
ooc_status_t ooc_journal_append_open(ooc_journal_t *j, const char *path, const ooc_journal_info_t *info,
                                     ooc_err_t *err);

/* Record block g as finished (flushed to disk before returning), with the
 * digest of its bytes *sum (NULL: none). */
ooc_status_t ooc_journal_done(ooc_journal_t *j, int64_t g, const uint64_t *sum, ooc_err_t *err);

/* A finished block to record: g, and the digest of its bytes when has. */
typedef struct {
    int64_t g;
    uint64_t digest;
    int has;
} ooc_journal_rec_t;

/* Record blocks recs[0..n) as finished, one flush for up to a megabyte of
 * records (the flusher's batch: not a flush per block). */
ooc_status_t ooc_journal_done_list(ooc_journal_t *j, const ooc_journal_rec_t *recs, size_t n, ooc_err_t *err);

/* Record every block of head's range (the head j was created with) as
 * finished, in order: the blocks of a job known to be done. */
ooc_status_t ooc_journal_done_all(ooc_journal_t *j, const ooc_journal_head_t *head, ooc_err_t *err);

/* Record that the journal's blocks were not all computed by its head's
 * "by" (a resume allowed to mix computers kept blocks of another's). */
ooc_status_t ooc_journal_mixed(ooc_journal_t *j, ooc_err_t *err);

/* Record the job as complete: its output, every block written and flushed,
 * has this size and modification time. When the record's write or flush
 * fails, the journal is cut back to its length before it (the record may
 * have reached the disk all the same). */
ooc_status_t ooc_journal_complete(ooc_journal_t *j, uint64_t size, int64_t mtime_sec, long mtime_nsec,
                                  ooc_err_t *err);

/* Close (and release the lock); with remove, delete the file too. */
void ooc_journal_close(ooc_journal_t *j, int remove_file);

/* The 64-bit checksum the journal uses (FNV-1a then a mixing step), from
 * seed over n bytes. */
uint64_t ooc_journal_hash(uint64_t seed, const void *bytes, size_t n);

#endif
