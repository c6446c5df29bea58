/* SPDX-License-Identifier: MIT */
/*
 * files.h: what the file multiply's three parts share, internal to lib/:
 * files_job.c checks the files and describes the job (its problem in C's
 * layout, its identity, its journal's path); files_plan.c chooses the plan
 * and the blocks to skip (a row range, the journals a resume reads) and
 * answers ooc_gemm_files_plan; files.c runs it with the journal. Knows
 * nothing of CUDA.
 */
#ifndef OOC_FILES_H
#define OOC_FILES_H

#include "handle.h"
#include "io.h"
#include "journal.h"

/* One file multiply, checked. */
typedef struct {
    ooc_handle_t *h;
    ooc_op_t ta, tb;
    const void *alpha, *beta;
    ooc_file_t *A, *B, *C0, *C;
    int64_t m, n, k;
    int64_t r0, r1;           /* rows of C this run computes ([0, m) when no range is given); its
                                 columns with a plan that keeps op(A) resident */
    int ranged;               /* a row range was given (even one of all rows) */
    int64_t c0, c1;           /* its columns (rows with a plan that keeps op(A) resident): 0, 0 when
                                 none is given (all of them, known once the plan is) */
    int cranged;              /* a column range was given */
    int empty;                /* m or n is 0: nothing to write */
    int scale;                /* k or alpha is 0: C = beta C0, no blocks */
    ooc_problem_t p;          /* in C's layout (valid unless empty) */
    char jpath[4096];         /* the journal */
    ooc_journal_head_t want;  /* the job's identity (want.job); the rest is filled when the plan is known */
    char inputs[3][160];      /* A's, B's and C0's identities as the job began (ooc_files_inputs_changed) */
} ooc_files_job_t;

/* (files_job.c) Check the arguments and describe the job into *job: shapes,
 * types, the row range of opts (OOC_ERR_ROW_RANGE when it is empty or passes
 * C's end; block boundaries are checked with the plan), the problem, the
 * journal's path (apart from every operand) and the job's identity. */
ooc_status_t ooc_files_job(ooc_handle_t *h, ooc_op_t ta, ooc_op_t tb, const void *alpha, ooc_file_t *A,
                           ooc_file_t *B, const void *beta, ooc_file_t *C0, ooc_file_t *C,
                           const ooc_files_opts_t *opts, ooc_files_job_t *job);

/* (files_job.c) The journal's path: opts->journal, else "<c_path>.ooc-journal". */
ooc_status_t ooc_files_journal_path(ooc_err_t *err, const char *c_path, const ooc_files_opts_t *opts, char *buf,
                                    size_t cap);

/* (files_job.c) What differs between two job lines (a journal's and this
 * job's), in words ("A was modified (its modification time), alpha"). */
void ooc_files_job_difference(const char *was, const char *now, char *out, size_t cap);

/* (files_job.c) Whether C0 is the file now at c_path: the job runs in place. */
int ooc_files_in_place(const ooc_file_t *C0, const char *c_path);

/* (files_job.c) Two job lines (ooc_files_job_line) of one job: the same but
 * for the device numbers of the inputs' identities (a file system mounted
 * again, or a network one seen from another node, numbers its device anew;
 * inode, size and modification time still name the files). */
int ooc_files_same_job(const char *was, const char *now);

/* (files_job.c) Two job lines of one job but for C0's identity (and, as
 * ooc_files_same_job(), the inputs' device numbers): an in-place job is
 * such a pair with its committed self (" inplace=1" is in both, so a job of
 * another C0 never matches an in-place one). */
int ooc_files_same_but_c0(const char *was, const char *now);

/* (files_job.c) The identity line of a job: types, ops, scalars, the
 * output's shape and format, each input's identity, TF32 when h's math
 * mode makes a single-precision job's bytes TF32's (" tf32=1": a resume in
 * another math mode is another job), and " inplace=1" for a job whose C0 is
 * its output's file (its C0 is then its own result once committed: the
 * line says so, so that it is never taken for a job of another C0). */
ooc_status_t ooc_files_job_line(const ooc_handle_t *h, ooc_err_t *err, ooc_op_t ta, ooc_op_t tb, const void *alpha,
                                const ooc_file_t *A, const ooc_file_t *B, const void *beta, const ooc_file_t *C0,
                                const ooc_file_spec_t *cs, int in_place, char *job, size_t cap);

/* (files_job.c) Whether an input changed while the job ran: A, B or C0
 * (the file it reads) of another size or modification time than in
 * job->inputs (rewritten in place as the blocks were read from it: C would
 * mix the two): OOC_ERR_IO naming it, with `failed` (the message of the
 * failure it may have caused, which this error replaces; NULL: none) at the
 * end, and *changed = 1.
 * An input that cannot be examined (fstat failing) is not changed: passed
 * by after a failure, else OOC_ERR_IO saying so (*changed 0). Else
 * OOC_SUCCESS. */
ooc_status_t ooc_files_inputs_changed(ooc_files_job_t *job, const char *failed, int *changed);

/* What a run starts from: its plan, the blocks it skips, its own journal. */
typedef struct {
    ooc_plan_t plan;
    int64_t b0, b1;           /* blocks [b0, b1) of every panel are this run's */
    int64_t p0, p1;           /* of its panels of op(B)'s columns [p0, p1) (with one k-panel) */
    int64_t total;            /* blocks of the job: m_blocks x panels */
    int64_t mine;             /* blocks of this run: (b1 - b0) x (p1 - p0) x k-panels */
    unsigned char *skip;      /* total bits: block not this run's, or done already; NULL: none */
    int64_t ndone;            /* blocks of this run done already */
    ooc_journal_info_t have;  /* the journal as read (resume) */
    int exists;               /* there was one */
    int usable;               /* it is appended to (this job, plan and range, in this very C) */
    /* a journal whose blocks were computed by another than this run's
     * (ooc_compute_id()), or by several (marked mixed): its path, its "by"
     * ("several") and its blocks; "" when none */
    char mixed[4096], mixed_by[OOC_COMPUTE_ID_MAX];
    int64_t mixed_blocks;
    int have_other;           /* the journal read (have) is such */
    int64_t mixed_kept;       /* blocks of this run's skipped as done that such journals recorded */
    char kept_by[OOC_COMPUTE_ID_MAX]; /* what computed the first of them ("several": a journal marked mixed) */
    char first_by[OOC_COMPUTE_ID_MAX]; /* what computed the first block skipped as done */
    int kept_differ;          /* the blocks skipped as done were not all computed by one id */
    int64_t foreign;          /* blocks taken from other journals (opts->journals) into this run's journal whose
                                 id is not that journal's "by" (it is then marked mixed) */
    int64_t recorded;         /* (ranges 0, a resume of a kept C) blocks of the plan that some usable journal
                                 records done: 0, the job starts over */
    ooc_journal_sum_t *kept;  /* the skipped-as-done blocks whose journal holds their digest, by block */
    size_t nkept, kept_cap;
    int64_t mismatched;       /* blocks recorded done whose bytes in C no longer have their digest: computed
                                 again (not skipped, not in kept) */
    unsigned char *changed;   /* total bits: those blocks (NULL: none) */
    int own_checked;          /* this run's journal, complete, was checked whole (files_plan.c check_complete) */
} ooc_files_start_t;

/* (files_plan.c) With the backend open: choose the plan (opts->plan, a
 * resumed journal's, else the planner's; op(A) resident only when no range
 * is given), the blocks of the range (rows, and panels), and what a resume
 * skips.
 * Reads journals, never writes or removes one. ranges 0: the plan only
 * (b0, b1, skip not set). Free with ooc_files_start_free. */
ooc_status_t ooc_files_start(ooc_files_job_t *job, const ooc_files_opts_t *opts, int ranges,
                             ooc_files_start_t *s);
void ooc_files_start_free(ooc_files_start_t *s);

/* 1 with *digest when s->kept holds block g's digest. */
int ooc_files_kept_sum(const ooc_files_start_t *s, int64_t g, uint64_t *digest);

/* Block g of the job (panel g / m_blocks, block g % m_blocks) is in s's range. */
static inline int ooc_files_mine(const ooc_files_start_t *s, int64_t g)
{
    int64_t M = s->plan.m_blocks, i = g % M, np = (g / M) % s->plan.n_panels;
    return i >= s->b0 && i < s->b1 && np >= s->p0 && np < s->p1;
}

#endif
