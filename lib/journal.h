/* SPDX-License-Identifier: MIT */
/*
 * journal.h: the resume journal of a file multiply. A text file beside the
 * output: a header naming the job (input files' identities, shapes, types,
 * scalars) and its plan, then one "done G" line per finished row block,
 * appended after that block of C is flushed to disk. Knows nothing of CUDA
 * or the pipeline.
 */
#ifndef OOC_JOURNAL_H
#define OOC_JOURNAL_H

#include <stdint.h>

#include "error.h"

typedef struct {
    int fd;
    char *path;
} ooc_journal_t;

/* What a journal says about its job. */
typedef struct {
    char job[2048];         /* identity line: must match for a resume */
    int swap;
    int64_t mb, nb, kb;     /* the plan's sizes */
    int64_t total;          /* blocks in the job */
    int resumable;          /* 0: restart from scratch on resume (several k-panels) */
    int64_t done;           /* blocks 0 .. done-1 recorded as finished */
} ooc_journal_info_t;

/* Read the journal at path. *exists = 0 (and OOC_SUCCESS) when there is none;
 * OOC_ERR_JOURNAL when it is not a journal of this version or is damaged
 * (a torn last line is ignored: that block is simply redone). */
ooc_status_t ooc_journal_read(const char *path, ooc_journal_info_t *info, int *exists, ooc_err_t *err);

/* Create (truncate) the journal with info's header, flushed to disk. */
ooc_status_t ooc_journal_create(ooc_journal_t *j, const char *path, const ooc_journal_info_t *info, ooc_err_t *err);

/* Reopen an existing journal to append to it. */
ooc_status_t ooc_journal_append_open(ooc_journal_t *j, const char *path, ooc_err_t *err);

/* Record block g as finished (flushed to disk before returning). */
ooc_status_t ooc_journal_done(ooc_journal_t *j, int64_t g, ooc_err_t *err);

/* Close; with remove, delete the file too (the job finished). */
void ooc_journal_close(ooc_journal_t *j, int remove_file);

#endif
