/* SPDX-License-Identifier: MIT */
/*
 * multiply.h: what oocgemm multiply's two files share: its options, the job
 * it runs (cmd_multiply.c: parsing and the steps) and the summary of it
 * (multiply_report.c: bounds, text and JSON), and the same job split across
 * the ranks of mpirun or srun (multiply_mpi.c).
 */
#ifndef OOCGEMM_MULTIPLY_H
#define OOCGEMM_MULTIPLY_H

#include "cli.h"

typedef struct {
    const char *a, *b, *out, *c_in, *journal;
    ooc_op_t ta, tb;
    double alpha, beta;
    int verify, resume, allow_mixed, quiet, json, no_progress;
    lib_opts_t lib;
    raw_defaults_t raw;
    ooc_format_t out_format; /* AUTO: from the extension */
    ooc_layout_t out_layout;
    int have_out_layout;
    double disk_read_bw, disk_write_bw; /* GB/s; 0: not given */
    int measure_disk;                   /* measure them before the multiply */
    floor_opts_t floor;
} mul_opts_t;

/* One rank of a job split by mpirun/srun, as the JSON's "ranks" lists it. */
typedef struct {
    int32_t rank, ndevices;
    uint32_t devices;              /* OOC_PARAM_DEVICES mask (0: every visible device, ndevices of them) */
    char host[64];
    int64_t row_begin, row_end;    /* its rows of C (columns when the job's split_cols) */
    int64_t col_begin, col_end;    /* a grid: its columns of C (rows when split_cols); 0, 0: all */
    int64_t blocks;                /* its blocks */
    double time_s;                 /* its multiply */
    uint64_t bytes_read, bytes_written;
    char kept_by[OOC_COMPUTE_ID_MAX]; /* what computed the blocks it kept as done (ooc_stats_t::kept_by) */
    char by[OOC_COMPUTE_ID_MAX];   /* what it computes with (ooc_compute_id) */
    int64_t kept;                  /* the blocks it kept as done (kept_by's) */
    int32_t computed;              /* it computed some block (not all of its range was recorded) */
    int32_t scales;                /* nothing to multiply (C = beta C0): it wrote all of C (rank 0 does) */
    ooc_stats_t plan;              /* its stats when it computed: the plan as run (ring, streams, staging),
                                    * which rank 0's summary gives when rank 0 computed nothing */
} mul_rank_t;

/* One file multiply, from its options to its summary. */
typedef struct {
    mul_opts_t o;
    operand_t A, B, C0, Cv;  /* Cv: C read back for --verify */
    ooc_handle_t *h;
    ooc_file_t *C;           /* the output while it is written */
    char *tmp_path, *journal_path;
    ooc_file_spec_t cspec;   /* what C is made as */
    scalar_t alpha, beta;
    ooc_files_opts_t fo;
    progress_t prog;
    ooc_stats_t stats;
    int split_cols;          /* mpirun: the plan keeps op(A) resident, the ranks split C's columns */
    int split_grid;          /* mpirun: the ranks split C as a grid of rectangles (blocks x panels of op(B));
                                their checks (--verify) are of rectangles, rows of C */
    int ranks_mixed;         /* mpirun, --allow-mixed: the first rank (rank 0 knows) that computes by another
                                id than rank ranks_mixed_ref, the first that computes (ranks_mixed_by,
                                ranks_ref_by); 0: none */
    int ranks_mixed_ref;
    char ranks_mixed_by[OOC_COMPUTE_ID_MAX], ranks_ref_by[OOC_COMPUTE_ID_MAX];
    ooc_verify_result_t vr;
    int verified, multiplied, already, interrupted;
    char *c0_refused;        /* --resume in place: why C0 could not be opened as given (the output, committed
                                in another format, replaced it); said unless the job is found finished
                                (mul_c0_refused) */
    int c0_refused_rc;
    int uncommitted;         /* the result is complete in the temporary file but its commit (or its record as
                                finished) failed: a --resume commits it */
    int have_shape; /* the operands fit together: m, n, k and t are known */
    int64_t m, n, k;
    ooc_dtype_t t;
    double secs, disk_both;
    int signal;              /* split by mpirun/srun: the stop signal any rank caught (multiply_mpi.c's
                                job_signal), 0: none or not known yet (mul_signal) */
    char **old_journals;     /* --resume: the range journals of earlier split runs (NULL-terminated) */
    mul_rank_t *ranks;       /* split by mpirun/srun: every rank (rank 0's copy), else NULL */
    int nranks;
    int split_floor;         /* split by mpirun/srun: the floor is split_fl, the ranks' together (rank 0) */
    floor_t split_fl;
} mul_job_t;

/* (multiply_report.c) Rank r's rows [*r0, *r1) and columns [*c0, *c1) of C,
 * whichever way the job was split. */
void mul_rank_rect(const mul_job_t *j, const mul_rank_t *r, int64_t *r0, int64_t *r1, int64_t *c0, int64_t *c1);

/* The steps cmd_multiply.c runs, shared with the split job (multiply_mpi.c). */
int mul_prepare(mul_job_t *j);
/* The multiply's floating-point operations: 2mnk (8mnk complex), 0 when
 * alpha is 0 (nothing is multiplied: C = beta C0) */
double mul_flops(const mul_job_t *j);
int mul_open_inputs(mul_job_t *j);
/* After the --resume check for a finished job: RC_OK, or, when C0 was opened
 * only as the output's file is (j->c0_refused) and the job is not finished,
 * the refusal of C0 as given (printed now). */
int mul_c0_refused(mul_job_t *j);
void mul_measure_disk(mul_job_t *j);
/* journal (named `what` in the messages) is a file of its own: not an
 * input, the output or its temporary file. RC_OK, or RC_USAGE, said. */
int mul_journal_apart(const mul_job_t *j, const char *journal, const char *what);
/* Commit C (RC_OK), else report it and keep the temporary file; C is
 * closed, or with keep left open on success (the caller closes it). */
int mul_commit(mul_job_t *j, const char *journal, const char *what, int keep);
/* --resume found the job finished (its journal records it complete and C
 * is its output): said, and, at C's default journal path (not one given
 * with --journal, which other outputs' jobs may share), the ranks' journals
 * of a split run killed between its commit and their removal removed
 * (consumed: they vouch for the committed file alone). */
void mul_finished_already(mul_job_t *j);
/* --resume found the journal of another job recorded finished (other
 * scalars, an input modified since, ...): a note says what differs and that
 * the job is computed anew (ooc_gemm_files_finished()'s ooc_last_error()). */
void mul_finished_other(const mul_job_t *j);

/* What a --resume finds to continue from, looked at before C's creation:
 * C's temporary file, a journal (or the ranks'), the blocks they record
 * done, and whether one records the job complete (cmd_multiply.c). */
typedef struct {
    int tmp, journal, complete;
    int keeps;           /* a journal keeps its blocks (not a plan in k-panels, which a resume starts over) */
    int njournals;
    int64_t blocks;
    char journals[4200]; /* the journals found, as the notes name them (one path, or the ranks' J.r*-of-P) */
} resume_found_t;
void resume_look(const mul_job_t *j, resume_found_t *f);
/* --resume where an unfinished journal (C's or the ranks') records blocks
 * kept in C.ooc-tmp made for another output (another --out-layout or
 * --out-format; another shape or type: other inputs): the output's creation
 * would start that file afresh (and drop the default journal), losing the
 * blocks before the job's check refuses the journal. Refused first, nothing
 * touched: RC_OUTPUT with the message said; else RC_OK. */
int resume_other_output(const mul_job_t *j);
/* A note on stderr when --resume cannot continue from what it found: one of
 * the two missing (kept < 0: before the work), or the temporary file not
 * the one the journal records, or a plan in k-panels, whose resume starts
 * over (kept 0: the file was started over; the job "was computed"
 * after_work, else "starts"). */
void resume_note(const mul_job_t *j, const resume_found_t *f, int kept, int after_work);

/* The job split across the ranks of mpirun/srun (cli_mpi_active()): rank
 * 0 creates C shared, plans and commits; each rank computes its blocks (rows
 * of C, or columns when the plan keeps op(A) resident) with
 * its own journal. Returns the exit status, the same on every rank. */
int mul_mpi(mul_job_t *j);
/* Every rank of a split job, its command line parsed and its inputs opened
 * (rc: how that went; mul_mpi's first collective, which a rank whose
 * command line was refused calls alone): the agreed exit status. A rank
 * other than 0 held its messages back (messages_hold) and says them only
 * when they are not rank 0's: a usage error or a missing input that every
 * rank finds is said once. */
int mul_mpi_first_agreement(int rc);
/* A rank whose command line was refused (rc) in a split job: the
 * collectives mul_mpi's failure path makes, in its order; the agreed exit
 * status. */
int mul_mpi_refused(int rc);

/* Range journals "<base>.r<R>-of-<P>" beside base, NULL-terminated (NULL:
 * out of memory): those of any P but not_of (0: every P), base itself too
 * when with_base and it exists. */
char **range_journals(const char *base, int not_of, int with_base);
/* A later --resume has a journal to continue from: base, or a range
 * journal of it (a job split by mpirun/srun keeps only those). */
int journals_resumable(const char *base);
/* ... and that --resume continues from its finished blocks (not a job in
 * k-panels, which a resume starts over: journal_keeps_blocks). */
int journals_keep_blocks(const char *base);
/* Remove every range journal of base (only files that are journals, never
 * one a running job holds). */
void range_journals_remove(ooc_handle_t *h, const char *base);
/* A fresh start: remove base and its range journals (only journals); a
 * journal a running job holds stops it: RC_OK or the exit status, said. */
int journals_forget(ooc_handle_t *h, const char *base, const char *tmp_path);
void strv_free(char **v);

/* The stop signal the job caught: this process's, else (mpirun/srun)
 * another rank's; 0 when none. */
int mul_signal(const mul_job_t *j);
/* The summary of a job that ran (rc RC_OK or RC_CHECK_FAILED): text or JSON. */
void mul_summary(mul_job_t *j, int rc);
/* (multiply_report.c) The warning a resume gives when it found blocks of C changed (also after a failure). */
void mul_mismatch_note(const mul_job_t *j);
/* --verify of the whole committed C by this process (cmd_multiply.c): RC_OK,
 * RC_CHECK_FAILED or a failure; a job found finished in place is not
 * checked (its C0 is its result now), and says so on stderr. */
int mul_verify_whole(mul_job_t *j);
/* Before a check of C: float32's tolerance, not TF32's, for a C this process computed on the host backend */
void mul_verify_math(mul_job_t *j);
/* C's default journal, OUT.ooc-journal (malloc'd; NULL when out of memory). */
char *mul_default_journal(const char *out);
/* The one JSON object of a job that failed part-way (what was given, how far
 * it got). */
void mul_print_failure_json(mul_job_t *j, int rc);

#endif /* OOCGEMM_MULTIPLY_H */
