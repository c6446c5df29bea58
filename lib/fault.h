/* SPDX-License-Identifier: MIT */
/*
 * fault.h: fault injection, for the tests of every failure path. With
 * OOC_FAULT="KIND:N[:ERRNO][,KIND:N...]" in the environment, the N-th
 * operation of that kind in the process (counting from 1) fails, once:
 *
 *   dev_alloc, host_alloc  a device or pinned-host allocation (out of memory)
 *   copy, gemm             a copy or a tile multiply refused when enqueued
 *                          (OOC_ERR_CUDA / OOC_ERR_CUBLAS, as CUDA reports them)
 *   exec                   host backend only: the N-th operation a stream
 *                          runs fails asynchronously, reported at the next
 *                          synchronisation, and every later one is skipped
 *                          (a sticky error, as CUDA's after a failed kernel)
 *   read, write            a file read or write of the staging threads (EIO,
 *                          ENOSPC unless ERRNO is given: EIO, ENOSPC, EDQUOT, EFBIG)
 *   reserve                reserving the output file's space (ENOSPC)
 *   journal                a write to the resume journal (ENOSPC)
 *   complete               the journal's "complete" record written, then
 *                          its flush failing (EIO): a record that may be
 *                          on the disk although its write failed
 *   lose                   host backend only: the N-th copy to the host (in
 *                          the order the streams run them) does nothing and
 *                          reports nothing, as silent corruption would: C's
 *                          rows keep what was there (the check must see it)
 *   remove                 removing the temporary file an earlier run left,
 *                          to start afresh (EPERM)
 *   birth                  reading a file's birth time: unknown, as where
 *                          statx is missing or refused
 *   register               CUDA backend only: registering the library's own
 *                          staging (cudaHostRegister) refused; it is then
 *                          allocated by cudaHostAlloc (no failure)
 *   commit                 the rename of the output onto its path (EIO)
 *   sync_dir               flushing a directory after a file was made or
 *                          renamed there: the journal's, the output's (EIO)
 *   sync                   flushing a file's data (fdatasync): the output's
 *                          temporary file before its blocks are recorded,
 *                          the journal after each record, ... (EIO)
 *
 * Nothing is read from the environment when OOC_FAULT is unset, and each
 * check is one atomic load. Knows nothing of CUDA.
 */
#ifndef OOC_FAULT_H
#define OOC_FAULT_H

#include "error.h"

typedef enum {
    OOC_FAULT_DEV_ALLOC,
    OOC_FAULT_HOST_ALLOC,
    OOC_FAULT_COPY,
    OOC_FAULT_GEMM,
    OOC_FAULT_EXEC,
    OOC_FAULT_READ,
    OOC_FAULT_WRITE,
    OOC_FAULT_RESERVE,
    OOC_FAULT_JOURNAL,
    OOC_FAULT_LOSE,
    OOC_FAULT_REMOVE,
    OOC_FAULT_BIRTH,
    OOC_FAULT_REGISTER,
    OOC_FAULT_COMMIT,
    OOC_FAULT_COMPLETE,
    OOC_FAULT_SYNC_DIR,
    OOC_FAULT_SYNC,
    OOC_FAULT_KINDS
} ooc_fault_t;

/* 1 when this operation of the kind is the one to fail (counts it). */
int ooc_fault_hit(ooc_fault_t kind);

/* For file operations: the errno value to fail this one with, or 0. */
int ooc_fault_errno(ooc_fault_t kind);

/* Read OOC_FAULT again and restart every count (tests that set it). */
void ooc_fault_reset(void);

/* OOC_FAULT with a mistake in it (an unknown kind, a count or errno that is
 * none, an errno given to a kind that is not a file's) refused:
 * OOC_ERR_PARAM_RANGE naming it, else OOC_SUCCESS. Every entry that may
 * write checks it before it writes (also the ones that open no backend:
 * scaling C, a finished job, creating a file; and ooc_host_alloc), so a
 * test's typo cannot pass for a fault that never comes. */
ooc_status_t ooc_fault_check(ooc_err_t *err);

#endif
