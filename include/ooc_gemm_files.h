/* SPDX-License-Identifier: MIT */
/**
 * @file ooc_gemm_files.h
 * @brief libooc_gemm's file-backed operands: matrix files, the file multiply
 * (whole, or a range of its rows or columns for one process of a split
 * job), its plan,
 * its journal and its verification.
 *
 * Part of the public API, included by ooc_gemm.h (include that one): kept
 * apart so that each header stays short enough to read.
 */
#ifndef OOC_GEMM_FILES_H
#define OOC_GEMM_FILES_H

#ifndef OOC_GEMM_H
#error "include <ooc_gemm.h>, which includes this header"
#endif

/** @name File-backed operands
 * Matrices stored in files (NumPy .npy or raw binary), possibly larger than
 * host memory: they are streamed through the pinned staging ring, never held
 * whole. A file is 2-D, C order (row-major) or Fortran order (column-major);
 * a 1-D .npy array of n elements is read as an n x 1 column.
 * @{ */

/** A matrix in a file, opened for reading or created for writing. */
typedef struct ooc_file_s ooc_file_t;

/** File formats. */
typedef enum {
    OOC_FORMAT_AUTO = 0, /**< open: .npy if the file starts with the NumPy magic, else an error;
                              create: .npy if the name ends in ".npy", else an error (OOC_ERR_FORMAT) */
    OOC_FORMAT_NPY = 1,  /**< NumPy .npy, header versions 1.0, 2.0 and 3.0, little-endian */
    OOC_FORMAT_RAW = 2   /**< raw little-endian elements, shape given by the caller */
} ooc_format_t;

/** What a file holds. For .npy files being opened only @c format is read;
 * the rest is filled by ooc_file_describe(). */
typedef struct {
    ooc_format_t format;
    int64_t rows, cols;  /**< the matrix as stored (before any op) */
    ooc_dtype_t dtype;
    ooc_layout_t layout; /**< OOC_ROW_MAJOR: C order; OOC_COL_MAJOR: Fortran order */
} ooc_file_spec_t;

/**
 * @brief Open a matrix file for reading, checking its header and that its size
 * matches the shape (a truncated file is an error). Only regular files: a
 * FIFO, a device or a directory is refused at once (never waited on).
 * @p spec NULL is a spec of format OOC_FORMAT_AUTO (a .npy file by its
 * magic; raw data needs a spec).
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_IO (cannot open,
 *         not a regular file), OOC_ERR_FORMAT (malformed, truncated, big-endian,
 *         unsupported dtype or shape, raw spec missing), OOC_ERR_OVERFLOW (the
 *         shape's byte count does not fit in 64 bits), OOC_ERR_HOST_MEMORY
 */
OOC_API ooc_status_t ooc_file_open(ooc_handle_t *handle, const char *path,
                                   const ooc_file_spec_t *spec, ooc_file_t **file);

/** Flags for ooc_file_create() and ooc_file_join(). */
enum {
    OOC_FILE_RESUME = 1, /**< create: reuse the temporary file a previous run left, if its header matches;
                              join: the creator did (ooc_file_resumed() said 1), so journals of it may be resumed */
    OOC_FILE_SHARED = 2  /**< create: once the temporary file is made, hold its lock shared, so that other
                              processes (the ranks of one job) can ooc_file_join() it and write their rows */
};

/**
 * @brief Create the output matrix file @p path. Data goes to a temporary file
 * beside it ("PATH.ooc-tmp"), made at full size with its header and its space
 * reserved on the disk (so that a full disk fails here, not hours later); the
 * target appears only at ooc_file_commit(). Nothing is written to @p path
 * itself, which must be absent or a regular file this process may write (a
 * directory, a device, a FIFO, a symbolic link or a file it may not write
 * there is refused before anything is done, and again at the commit: a
 * rename could replace a file that cp could not write). A file replaced
 * passes its permissions (rwx bits; the owner keeps read and write) and, where this process may give it, its
 * group to the temporary file as it is made and again at the commit, as cp
 * onto it would: a private result stays private. Hard links to the old file
 * keep the old data (the new file is another one).
 *
 * The temporary file is this job's alone: it is opened without following a
 * symbolic link, made exclusively when new, and locked until the file is
 * closed; another job creating the same output gets OOC_ERR_BUSY. With
 * OOC_FILE_SHARED the lock is made shared once the file is ready, so that the
 * other processes of this job can ooc_file_join() it (a split job);
 * this process commits it when they are all done. Without
 * OOC_FILE_RESUME, or when the temporary file left there does not match, it is
 * started afresh, as a new file (a temporary file left by an earlier run is
 * removed first), and the default journal ("PATH.ooc-journal") is removed
 * (with OOC_FILE_RESUME, not one of a job in place that committed the file
 * now at PATH: ooc_gemm_files() then refuses a resume of that job, whose C0
 * is now its own result, and removes the journal for any other job or
 * run: see ooc_files_opts_t::resume). A
 * journal at another path (opts->journal) is removed by the fresh
 * ooc_gemm_files() itself; until then it names the old temporary file (its
 * inode, where the file system keeps it its birth time, and its id), so a
 * resume never takes it for the new one's.
 *
 * Until its job is complete, the temporary file ends, past the output's
 * bytes, in a 32-byte trailer naming it by a random id made with it
 * ("oocgemm-tmp-id " and 16 hex digits); a journal records that id, so that
 * a file made later never matches a journal of an earlier one, even at the
 * same inode number on a file system that keeps no birth time. The trailer
 * goes when the job is recorded complete, and at ooc_file_commit() at the
 * latest: the committed file is exactly the .npy or raw matrix.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_INVALID_PARAM
 *         (unknown flags; a path ending in ".ooc-tmp" or ".ooc-journal", the
 *         temporary file or the default journal of another output), OOC_ERR_IO
 *         (the target or temporary file is not a regular file, the target is
 *         not writable by this process, the temporary file cannot be created), OOC_ERR_NO_SPACE (the space cannot
 *         be reserved), OOC_ERR_BUSY, OOC_ERR_JOURNAL (a file that is not a
 *         journal sits at the default journal path), OOC_ERR_FORMAT (spec not
 *         writable), OOC_ERR_OVERFLOW, OOC_ERR_HOST_MEMORY
 */
OOC_API ooc_status_t ooc_file_create(ooc_handle_t *handle, const char *path,
                                     const ooc_file_spec_t *spec, unsigned flags,
                                     ooc_file_t **file);

/**
 * @brief Open the temporary file ("PATH.ooc-tmp") that another process made
 * with ooc_file_create(..., OOC_FILE_SHARED, ...) and still holds, to write
 * rows (or columns) of it (ooc_gemm_files() with a range): how the ranks of one job
 * split its output. Nothing is truncated, reserved or removed; the file must
 * be a regular file (never opened through a symbolic link) whose size and
 * .npy header are exactly those ooc_file_create() makes for @p spec. It is
 * locked shared, like its creator's: while any of the job's processes holds
 * it, another job's ooc_file_create() gets OOC_ERR_BUSY, and a join while
 * the creator holds it alone (a create without OOC_FILE_SHARED, or one still
 * making the file) gets OOC_ERR_BUSY too. A joined file is never committed
 * (the creator commits, once every joiner is done and has closed it: the
 * caller's barrier) and ooc_file_close() never removes it.
 * @param[in] flags 0, or OOC_FILE_RESUME when the creator kept the temporary
 *            file of an earlier run (ooc_file_resumed() on its side): only
 *            then may this process resume a journal of that file
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_INVALID_PARAM
 *         (unknown flags), OOC_ERR_IO (no temporary file there: it is not
 *         created yet; not a regular file), OOC_ERR_FORMAT (spec not writable,
 *         or the file's size or header does not match it), OOC_ERR_BUSY,
 *         OOC_ERR_OVERFLOW, OOC_ERR_HOST_MEMORY
 */
OOC_API ooc_status_t ooc_file_join(ooc_handle_t *handle, const char *path, const ooc_file_spec_t *spec,
                                   unsigned flags, ooc_file_t **file);

/** @brief 1 when @p file is a created file whose temporary file an earlier
 * run left and ooc_file_create() kept (OOC_FILE_RESUME and a matching
 * header), or a joined file whose joiner said so; 0 otherwise (NULL too).
 * A creator passes it on to its joiners (OOC_FILE_RESUME of ooc_file_join()),
 * asked after ooc_gemm_files_plan(), which may start the file over. */
OOC_API int ooc_file_resumed(const ooc_file_t *file);

/**
 * @brief Flush a created file to disk and rename it onto its target path
 * (then flush the directory). After this the file is read-only. The target
 * is checked again: it must still be absent or a regular file. The
 * temporary file's trailer (see ooc_file_create()) is cut right before the
 * rename; when the rename fails it is put back, so that the journals that
 * name the file by its id still vouch for its blocks. A file committed
 * already is left as it is (OOC_SUCCESS again). A file created shared is
 * committed only once no process that joined it has it open (its blocks
 * may not be written yet): OOC_ERR_BUSY, nothing done, while one has.
 * When the rename succeeded but the directory's flush failed, the file is
 * committed (at its path, ooc_file_committed() says 1) although the call
 * returns OOC_ERR_IO: a crash of the machine may yet undo the rename. A
 * second call then tries the flush again (OOC_SUCCESS once it is done).
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_INVALID_PARAM
 *         (not a created file), OOC_ERR_BUSY (a process that joined it has it
 *         open), OOC_ERR_IO, OOC_ERR_NO_SPACE
 */
OOC_API ooc_status_t ooc_file_commit(ooc_handle_t *handle, ooc_file_t *file);

/** @brief 1 when @p file was renamed onto its path by ooc_file_commit()
 * (even where that call then failed to flush the directory), else 0
 * (NULL: 0). */
OOC_API int ooc_file_committed(const ooc_file_t *file);

/** @brief Close a file (and release a created file's lock). A created file
 * that was not committed keeps its temporary file (so that a later run can
 * resume it) unless @p discard; a temporary file is only ever removed while
 * it is still the one this job made. */
OOC_API void ooc_file_close(ooc_file_t *file, int discard);

/** @brief What the file holds. @return OOC_SUCCESS, OOC_ERR_NULL_ARG */
OOC_API ooc_status_t ooc_file_describe(const ooc_file_t *file, ooc_file_spec_t *spec);

/** @brief Bytes before the first element (the .npy header; 0 for raw). */
OOC_API uint64_t ooc_file_data_offset(const ooc_file_t *file);

/**
 * @brief Read @p count elements of a file, starting at element @p first in
 * storage order (C order: row by row; Fortran order: column by column).
 * Safe to call from several threads at once, each with its own handle.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_SHAPE (past the end),
 *         OOC_ERR_IO, OOC_ERR_FORMAT (file shorter than its header says)
 */
OOC_API ooc_status_t ooc_file_read(ooc_handle_t *handle, const ooc_file_t *file, uint64_t first,
                                   void *buf, uint64_t count);

/** @brief Write @p count elements into a created (not yet committed) file at
 * element @p first in storage order. Thread-safety as ooc_file_read().
 * @return as ooc_file_read(), plus OOC_ERR_INVALID_PARAM for a file not open for writing */
OOC_API ooc_status_t ooc_file_write(ooc_handle_t *handle, ooc_file_t *file, uint64_t first,
                                    const void *buf, uint64_t count);

/** Progress of a file multiply, called from a library thread after each row
 * block of C is written (before it is flushed and recorded in the journal:
 * a block counted here may still be computed again by a resume after a
 * kill). Must return quickly and must not call the library,
 * but for ooc_cancel() (on the handle running the multiply, or another). */
typedef void (*ooc_progress_fn)(void *user, int64_t blocks_done, int64_t blocks_total,
                                uint64_t bytes_read, uint64_t bytes_written);

/**
 * How a file multiply is cut into blocks: everything that decides which rows
 * each block holds and how it is computed, so that every block is computed
 * the same way, byte for byte, whichever process, device or run computes it.
 * The processes that split one job must all use one plan: ooc_gemm_files_plan()
 * on one of them (or on each, with the same budgets, OOC_PARAM_DEVICE_MEM and
 * OOC_PARAM_HOST_MEM, and the same number of devices), passed to every
 * ooc_gemm_files() in ooc_files_opts_t::plan. Plain data: send it as bytes.
 */
typedef struct {
    int a_resident;      /**< 1: op(A) kept on the device, C^T computed: blocks are column blocks of C,
                              and a split job's ranges are ranges of C's columns */
    int64_t rows;        /**< rows the blocks tile: C's rows (its columns when a_resident) */
    int64_t block_rows;  /**< rows of a full block */
    int64_t panel_cols;  /**< columns of a panel of op(B) */
    int64_t panel_depth; /**< rows of a panel of op(B); below k, C is accumulated over panels */
    int tail;            /**< the last blocks shrink: block_rows/2, /4, ... in this many steps */
    int tail_rep;        /**< blocks of each tail size */
    int b_chunks;        /**< op(B)'s panel is uploaded in this many chunks; with a_pieces > 1, each block's
                              last piece is also multiplied in this many chunks of C's columns */
    int lead;            /**< blocks 0 .. lead-1 of each panel are multiplied chunk by chunk of op(B)
                              (when b_chunks > 1 and a_pieces == 1) */
    int64_t blocks;      /**< blocks: block i holds rows (columns when a_resident) ooc_files_plan_rows(i) */
    int64_t panels;      /**< panels of op(B): each block is computed once per panel */
    int a_pieces;        /**< op(A)'s blocks go to the device in this many k-pieces, multiplied one after
                              another (1: whole; 0 in a plan given is taken as 1) */
    int64_t cols;        /**< columns the panels tile: C's columns (its rows when a_resident); panel p
                              holds ooc_files_plan_cols(p). 0 in a plan given: not checked */
} ooc_files_plan_t;

/**
 * @brief Rows [*row_begin, *row_end) of C that block @p block (0 <= block <
 * plan->blocks) of @p plan holds (columns of C when plan->a_resident): the
 * boundaries a range of ooc_gemm_files() must fall on.
 * @return OOC_SUCCESS, OOC_ERR_NULL_ARG, OOC_ERR_ROW_RANGE (no such block),
 *         OOC_ERR_INVALID_PARAM (not a plan ooc_gemm_files_plan() makes)
 */
OOC_API ooc_status_t ooc_files_plan_rows(const ooc_files_plan_t *plan, int64_t block, int64_t *row_begin,
                                         int64_t *row_end);

/**
 * @brief Columns [*col_begin, *col_end) of C that panel @p panel (0 <= panel
 * < the panels of op(B)'s columns, ceil(plan->cols / plan->panel_cols)) of
 * @p plan holds (rows of C when plan->a_resident): the boundaries a column
 * range of ooc_gemm_files() (ooc_files_opts_t::col_begin) must fall on.
 * @return OOC_SUCCESS, OOC_ERR_NULL_ARG, OOC_ERR_ROW_RANGE (no such panel),
 *         OOC_ERR_INVALID_PARAM (a plan without panels: no blocks, or cols 0)
 */
OOC_API ooc_status_t ooc_files_plan_cols(const ooc_files_plan_t *plan, int64_t panel, int64_t *col_begin,
                                         int64_t *col_end);

/** Options of ooc_gemm_files(); all-zero is valid: the whole of C, as planned
 * by the library, with the default journal. */
typedef struct {
    const char *journal;     /**< resume journal path; NULL: "<C's path>.ooc-journal" */
    int resume;              /**< 1: continue the job the journal records (its plan is reused). A job in
                                  place (C0 the file at C's path, created with OOC_FILE_RESUME) whose
                                  default journal records it complete and committed is refused
                                  (OOC_ERR_JOURNAL, nothing done): C0 may now be its own result. Call
                                  ooc_gemm_files_finished() first to tell a finished job */
    ooc_progress_fn progress; /**< blocks_done and blocks_total count this run's range only */
    void *progress_user;
    /** The plan to run (every process of a split job passes the same); NULL:
     * a resumed journal's, else the planner's (for a range, one that keeps
     * op(A) resident never: see row_begin). A plan that does not fit this job, or whose
     * blocks do not fit this handle's memory budgets, is refused
     * (OOC_ERR_INVALID_PARAM, OOC_ERR_BUDGET_TOO_SMALL); a journal written
     * with another plan is refused (OOC_ERR_JOURNAL). */
    const ooc_files_plan_t *plan;
    /** Compute only rows [row_begin, row_end) of C (0, 0: all of them), into
     * the output's temporary file as created (OOC_FILE_SHARED) or joined
     * (ooc_file_join()): the rest of it is left as it is. With a plan that
     * keeps op(A) resident (a_resident, given in opts->plan or recorded in
     * the journal resumed) they are C's columns [row_begin, row_end): that
     * plan's blocks are column blocks of C. Both ends must be block
     * boundaries of the plan (ooc_files_plan_rows()), else
     * OOC_ERR_ROW_RANGE. Without opts->plan the planner never keeps op(A)
     * resident for a range (its ends are rows). When alpha == 0 or k == 0
     * (no blocks) any rows may be given. The journal
     * records the range: give each range its own journal (say
     * "C.npy.ooc-journal.<row_begin>-<row_end>"); resuming a journal of
     * another range is refused (OOC_ERR_JOURNAL). */
    int64_t row_begin, row_end;
    /** With resume: more journals of this job, NULL-terminated, read and
     * never written or removed: the journals of the ranges of an earlier run
     * split another way. Every block of this range that any of them (or
     * opts->journal) recorded as done in the very temporary file C is (see
     * ooc_file_join()'s OOC_FILE_RESUME) is skipped, so a job may be resumed
     * with another number of processes and still be byte-identical. Paths
     * that do not exist are skipped; a damaged journal, one of another job
     * or of another plan is refused (OOC_ERR_JOURNAL). A fresh run (without
     * resume) reads none of them: remove the journals of earlier runs before
     * starting a job afresh, so that no later resume can trust them. */
    const char *const *journals;
    /** With resume: keep the blocks that journals recorded as computed by
     * another compute id (ooc_compute_id(): another GPU kind, cuBLAS,
     * backend, CPU or thread count) and compute the rest with this handle.
     * 0 (the default) refuses such a resume (OOC_ERR_JOURNAL) when it would
     * compute any block, because the blocks of two computers differ in their
     * last bits: C would be correct to the checks' tolerance but not byte
     * for byte what one run makes. 1 accepts it: the journal is then marked
     * mixed, so that no later resume without allow_mixed takes its blocks
     * for one computer's, and ooc_stats_t::blocks_mixed says how many blocks
     * of another's were kept. For ooc_gemm_files_mark_finished() it means
     * something else: 1 says the blocks did mix computers (the caller
     * compared what every process computed and kept: ooc_compute_id(),
     * ooc_stats_t::kept_by), and the journal is marked mixed; give 0 when
     * they are all one computer's, even if the processes were allowed to mix. */
    int allow_mixed;
    /** With row_begin and row_end, a rectangle of C: compute only the
     * columns [col_begin, col_end) of C in those rows (0, 0: all of them);
     * its rows with a plan that keeps op(A) resident (the other dimension
     * than row_begin's). Both ends must be boundaries of the plan's panels
     * of op(B) (ooc_files_plan_cols()), else OOC_ERR_ROW_RANGE: a process
     * then reads only those panels of op(B) (and its rows of op(A) once per
     * panel), so a job whose op(B) does not fit one device whole can be
     * split as a grid, each process reading a part of op(B) rather than all
     * of it. Refused (OOC_ERR_ROW_RANGE) for a plan that also splits op(B)'s
     * depth (panel_depth below k) and for a job that multiplies nothing
     * (alpha 0 or k 0). The journal records the rectangle, as it does the
     * rows: give each its own journal. */
    int64_t col_begin, col_end;
    /** A split job whose processes read their own identical copies of the
     * inputs (each node its own): the job's identity as the process that
     * created C sees it (ooc_gemm_files_job() there), given to every
     * process. Journals record it, and are checked against it, instead of
     * this process's own view of A, B and C0 (their files here: another
     * device and inode than the creator's copies), so that a rank's journal
     * can be resumed by any rank. The caller vouches that every process's
     * operands hold the same bytes (oocgemm compares their sizes and
     * samples of their bytes); the creator's own files are checked as
     * always. It must be this job's but for where its inputs are, else
     * OOC_ERR_INVALID_PARAM. NULL: this process's own view. */
    const char *job;
} ooc_files_opts_t;

/** The most bytes a job's identity (ooc_gemm_files_job()) takes, its NUL included. */
#define OOC_FILES_JOB_MAX 2048

/**
 * @brief C = alpha*op(A)*op(B) + beta*C0 on files: A, B, C0 opened with
 * ooc_file_open(), C created with ooc_file_create() (committed by the caller
 * after success). C0 may be NULL when beta == 0, and may be the file C will
 * replace. All element types must be equal; A and B may be in either order,
 * but C0, and an operand with op = OOC_OP_C, must be in C's order
 * (OOC_ERR_NOT_SUPPORTED otherwise) unless they are one row or one column
 * (a vector's bytes are the same in either order). Empty matrices are valid (BLAS): with
 * m or n = 0 there is nothing to write, and with k = 0 or alpha = 0, C =
 * beta*C0 (zeros when beta = 0) without reading A or B.
 *
 * The journal (opts->journal, else "<C's path>.ooc-journal") must be a file
 * of its own: never an operand, the output or its temporary file, the
 * latter two also by path before they exist (OOC_ERR_JOURNAL). Without
 * opts->resume the journal at its path is removed first; a file there that is
 * not a journal is refused, never removed (an empty file is taken for a
 * journal whose creation was cut short, and removed). Every finished row block of C is
 * flushed and recorded in the journal with a checksum tied to the job and
 * the digest of the block's bytes; a resume reads back each block its
 * journal recorded and computes again any whose bytes no longer match
 * (overwritten since, or lost by a crash of the disk: counted in
 * ooc_stats_t::blocks_mismatched; a job its journal records complete whose
 * temporary file changed is computed afresh; blocks
 * recorded by a library from before digests are taken as written), so a
 * run killed part-way, failed or cancelled (ooc_cancel()) can be resumed
 * (opts->resume) with a byte-identical result: every block is computed the
 * same way whichever run computes it. A resume refuses (OOC_ERR_JOURNAL) a
 * journal of another job or one that is damaged or edited; it starts afresh
 * when there is no journal or the temporary file is not the one the journal
 * recorded (but a job in place that committed is refused: see
 * ooc_files_opts_t::resume). Files are the same files by their inode, size
 * and modification time (and the temporary file by its id), not by their
 * device number: a file system mounted again, or a network file system
 * seen from another node of a cluster, may number its device anew; where
 * the device number differs, an input's status change time must match too
 * (no one can set it: a file made apart with the old one's inode, size and
 * time is another file). A plan that splits k into panels leaves partial sums in C, so its
 * blocks are not kept: a resume of such a job starts over, with the plan its
 * journal (or a journal in opts->journals) records when that still fits, so
 * that C comes out byte for byte as the interrupted run would have made it
 * on any number of devices; but a journal of such a plan recorded complete
 * (the job, or a range, finished: its commit failed or was cut short), or
 * of the whole job whose file was sealed but not yet recorded complete
 * (killed between the two), keeps every block when the last panel's blocks
 * match their digests, else none.
 * On success the journal is kept, marked complete with the
 * output's identity, so that ooc_gemm_files_finished() can tell a resumed
 * batch job that there is nothing left to do; a fresh run replaces it.
 * opts NULL is the all-zero options.
 *
 * Split jobs: with opts->row_begin and row_end only those rows of C (its
 * columns with a plan that keeps op(A) resident), and with col_begin and
 * col_end only those columns of them (a rectangle of a grid: panels of
 * op(B)), are computed (and journaled), into C created with OOC_FILE_SHARED or joined with
 * ooc_file_join(); every process passes the same opts->plan, so that C
 * is byte-identical to one process's run with that plan (see
 * ::ooc_files_opts_t for the journals of a split job and its resume with
 * another split).
 * @return as ooc_gemm(), plus OOC_ERR_SHAPE, OOC_ERR_IO, OOC_ERR_FORMAT, OOC_ERR_JOURNAL,
 *         OOC_ERR_NO_SPACE, OOC_ERR_BUSY (another job holds the journal), OOC_ERR_CANCELLED
 *         (ooc_last_error_path() names the file an I/O failure concerns; for a joined C, OOC_ERR_IO
 *         too when the creator's temporary file was committed or removed meanwhile: the blocks
 *         are not in the output, and its journal does not record the range complete),
 *         OOC_ERR_ROW_RANGE (a range outside C or off the plan's blocks), OOC_ERR_INVALID_PARAM
 *         (opts->plan is not a plan for this job)
 */
OOC_API ooc_status_t ooc_gemm_files(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                                    const void *alpha, ooc_file_t *A, ooc_file_t *B,
                                    const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                    const ooc_files_opts_t *opts);

/**
 * @brief The plan for a job, to split it: opts->plan when given (checked against this job and this
 * handle's budgets), else with opts->resume the plan of the first usable
 * journal (opts->journal or the default, then opts->journals; or of one
 * whose job starts over, k-panels: see ooc_gemm_files()), else the planner's
 * for this handle's budgets and devices: the plan ooc_gemm_files() would run
 * on the whole job, op(A) resident included (a_resident: then the ranges of a
 * split job are ranges of C's columns), so that a split job's C is
 * byte-identical to one process's. opts->row_begin, row_end, col_begin
 * and col_end are not looked at. One process of a split job calls it (after creating C) and
 * sends the plan to the others, which pass it in opts->plan. With opts->resume and no
 * opts->plan, called by the creator of C (OOC_FILE_SHARED) before any other process joins it, a resume
 * that finds no block of the job recorded for the temporary file kept starts the job
 * over in a new temporary file, as ooc_gemm_files() does for one process, so that no
 * journal of the old one (one given to an earlier run, an earlier split's) vouches for what
 * the ranks write: ooc_file_resumed() then says 0, and the others join without
 * OOC_FILE_RESUME (once one joined, the file is kept as it is). When the job
 * multiplies nothing (m, n or k 0, or alpha 0), plan->blocks is 0: there are
 * no blocks, and any row range may be given.
 * @return as ooc_gemm_files() before it runs (argument checks, OOC_ERR_JOURNAL, the
 *         backend's and the planner's failures: OOC_ERR_BUDGET_TOO_SMALL,
 *         OOC_ERR_INVALID_PARAM for an opts->plan that is not one for this job),
 *         OOC_ERR_NULL_ARG when @p plan is NULL
 */
OOC_API ooc_status_t ooc_gemm_files_plan(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                                         const void *alpha, ooc_file_t *A, ooc_file_t *B, const void *beta,
                                         ooc_file_t *C0, ooc_file_t *C, const ooc_files_opts_t *opts,
                                         ooc_files_plan_t *plan);

/**
 * @brief Whether the job ooc_gemm_files() would run has already finished and
 * been committed (never from the journal of a range: a split job is
 * known finished once its creator recorded it with
 * ooc_gemm_files_mark_finished() and committed it): its journal
 * (opts->journal, else "<c_path>.ooc-journal")
 * records this very job (the same inputs, unchanged, the same ops, scalars,
 * output shape, type, order and format) as complete, and the file at @p c_path
 * is the output it committed, unchanged since; then the directory entry of
 * @p c_path is flushed (the commit's own flush may have failed after its
 * rename: OOC_ERR_IO when it fails again), so that a finished job's result
 * is on the disk. A resumed batch job calls this
 * first and does nothing when *finished is 1. *finished is 0 when there is no
 * journal, or it is of another job, incomplete, or the output has changed
 * (when it records another job complete, the call succeeds and
 * ooc_last_error() says what differs: other scalars or ops, an input
 * replaced or modified, ..., for a note of why the job is computed anew),
 * except for a job in place (C0 is the file at @p c_path): when its journal
 * records it complete and that file has changed since the commit, the file
 * may hold the result, which a run would take for C0: OOC_ERR_JOURNAL (start
 * afresh without resume, or remove the journal).
 * @param[in] c_spec the output as ooc_file_create() would be given it
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG (also beta != 0 without C0),
 *         OOC_ERR_NULL_A, OOC_ERR_NULL_B, OOC_ERR_INVALID_TRANSA, OOC_ERR_INVALID_TRANSB,
 *         OOC_ERR_INVALID_DTYPE, OOC_ERR_JOURNAL (the journal is damaged; an in-place job's C
 *         changed since its commit), OOC_ERR_IO, OOC_ERR_HOST_MEMORY
 */
OOC_API ooc_status_t ooc_gemm_files_finished(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                                             const void *alpha, ooc_file_t *A, ooc_file_t *B,
                                             const void *beta, ooc_file_t *C0, const char *c_path,
                                             const ooc_file_spec_t *c_spec, const ooc_files_opts_t *opts,
                                             int *finished);

/**
 * @brief The identity of the job ooc_gemm_files() would run with these
 * arguments, as this process sees its files (each input's device, inode,
 * size, modification time, shape and status change time: see
 * ooc_gemm_files() for which are compared; the output's spec; the scalars
 * and ops), into @p job (@p cap bytes; OOC_FILES_JOB_MAX is enough): what its
 * journals record. For ooc_files_opts_t::job: the creator of a split job's
 * output gives it to every process. C is the output as created.
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, the argument
 *         errors of ooc_gemm_files(), OOC_ERR_IO (an input cannot be
 *         examined), OOC_ERR_INVALID_PARAM (@p cap too small)
 */
OOC_API ooc_status_t ooc_gemm_files_job(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb, const void *alpha,
                                        ooc_file_t *A, ooc_file_t *B, const void *beta, ooc_file_t *C0,
                                        ooc_file_t *C, char *job, size_t cap);

/**
 * @brief Remove the journal at @p path for a fresh start: a job started
 * afresh must not leave behind a journal that vouches for data it is about
 * to overwrite (its own journal when not the default one, which
 * ooc_file_create() removes itself; the range journals an earlier split
 * left). Nothing there: OOC_SUCCESS. A journal that a running job holds is
 * left alone: OOC_ERR_BUSY (another job is writing that output: the fresh
 * start must stop, before it touches anything). A file that is not a
 * journal is never removed: OOC_ERR_JOURNAL (an empty regular file is a
 * journal whose creation was cut short: removed).
 * @return OOC_SUCCESS, OOC_ERR_INVALID_HANDLE, OOC_ERR_NULL_ARG, OOC_ERR_BUSY,
 *         OOC_ERR_JOURNAL, OOC_ERR_IO
 */
OOC_API ooc_status_t ooc_journal_forget(ooc_handle_t *handle, const char *path);

/**
 * @brief Record a split job as finished, so that ooc_gemm_files_finished()
 * says so once C is committed: its creator calls this once every process's
 * ooc_gemm_files() on its range succeeded, before it commits C
 * (ooc_file_commit()) and while C is open. The arguments are those of the
 * ranks' ooc_gemm_files(), C the output this process created and
 * opts->plan the plan they all ran (opts->journal as for ooc_gemm_files():
 * NULL is "<C's path>.ooc-journal"; opts must not be NULL; opts->resume, journals and progress are
 * not looked at; the range journals are neither read nor removed: the
 * caller removes them once C is committed). opts->allow_mixed 1 says that
 * the blocks were not all computed by one kind of computer (ranks that
 * computed by other ids, or ranges that kept another's blocks): the
 * journal is then marked mixed, as one process's resume that mixed them
 * marks it.
 *
 * It flushes C and writes the whole job's journal at opts->journal exactly
 * as one process's ooc_gemm_files() with that plan would have left it: the
 * job's identity (inputs, ops, scalars, output shape, type, order and
 * format), the plan, every block recorded done, and the "complete" record
 * with the output's identity, size and modification time, which the commit
 * (a rename) keeps; and the mixed mark when opts->allow_mixed. Recorded
 * before the commit, a job computed in place (C0 the file C replaces) can
 * never be computed again from its own output:
 * when recording fails, the caller does not commit, and a resume of the
 * uncommitted job finds every block done; killed between the two, a resume
 * only commits. A journal already at that path is replaced (a file there
 * that is not a journal is refused, never removed; an empty file is
 * replaced); when writing fails
 * part-way, what was written is removed, so no journal vouches for part of
 * the job. The journal does not say that the blocks were computed: the
 * caller vouches for it (every range succeeded).
 *
 * C's temporary file is sealed first (its trailer goes: see
 * ooc_file_create()), so that the journal records the size and time it is
 * committed with. A C already committed by this process is accepted too (the journal then
 * names the file at C's path). A job with m or n 0 writes nothing
 * (OOC_SUCCESS; ooc_gemm_files_finished() says 0); a scaling job (alpha 0
 * or k 0: plan->blocks 0) is recorded complete as one process's whole
 * scaling job records itself.
 * @param[in] C the output, created by this process (ooc_file_create(), not
 *            joined) and still open; committed or not
 * @param[in] opts opts->plan required; row_begin and row_end 0
 * @return OOC_SUCCESS; OOC_ERR_INVALID_HANDLE; OOC_ERR_NULL_C; OOC_ERR_NULL_ARG (opts
 *         or opts->plan NULL, alpha or beta NULL); OOC_ERR_INVALID_PARAM (C
 *         not created for writing by this process: opened, or joined; or
 *         opts->plan is not a plan for this job); OOC_ERR_ROW_RANGE (a row
 *         range given); OOC_ERR_BUSY (C created shared, and a process that
 *         joined it still has it open: nothing recorded); OOC_ERR_IO (C's temporary path, or its path once
 *         committed, no longer names the file: removed or replaced since;
 *         C cannot be flushed; the journal cannot be written);
 *         OOC_ERR_FORMAT (that file is not of the size the output has:
 *         truncated or extended since); nothing is recorded in those cases;
 *         the argument checks of ooc_gemm_files() (OOC_ERR_SHAPE, ...);
 *         OOC_ERR_JOURNAL (a file that is not a journal at the journal's
 *         path, or the journal path is an operand); OOC_ERR_BUSY (another
 *         job holds the journal); OOC_ERR_NO_SPACE; OOC_ERR_HOST_MEMORY; the
 *         backend's failures
 */
OOC_API ooc_status_t ooc_gemm_files_mark_finished(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                                                  const void *alpha, ooc_file_t *A, ooc_file_t *B,
                                                  const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                                  const ooc_files_opts_t *opts);

/** Result of a verification (of ooc_verify_files_cols(): its rows are C's columns). */
typedef struct {
    int exact;              /**< 1: every element compared with a full OpenBLAS product */
    int vectors;            /**< Freivalds vectors used (0 when exact) */
    int64_t rows_checked;   /**< rows of C recomputed exactly (all when exact) */
    double max_rel_err;     /**< largest |error| / bound over everything compared, scaled so that
                                 a pass is max_rel_err <= tolerance (Freivalds: tolerance *
                                 |C x - reference x| / the threshold of that row and vector); infinite
                                 when a NaN or infinity of C does not match the reference's */
    double tolerance;       /**< pass when max_rel_err <= tolerance and nothing is off (below)
                                 (4 (k + 2) eps, plus 2^-7 for single precision with TF32: elements
                                 may be off by tolerance * (|alpha| |op(A)| |op(B)| + |beta| |C0|),
                                 plus a few subnormals) */
    int passed;
    uint64_t bytes_read;
    int64_t nonfinite;      /**< values that are NaN or infinite in both C and the reference, alike
                                 (NaN or Inf in the inputs): consistent, counted, not measured */
    int64_t rows_unverified; /**< rows of C that Freivalds' check could not cover (a NaN or infinity
                                 of C0 in them, beta not 0): only where their NaN and infinities lie
                                 was checked, and the sampled rows among them exactly; passed says
                                 nothing more about them */
    int64_t off;            /**< found wrong within the tolerance: elements (exact rows) and rows
                                 (Freivalds) off by about their own size and by more than rounding
                                 reaches on any but contrived data (lib/verify.c says how), as a
                                 missing or stale block of C is in single precision with a large k;
                                 passed is 0 when there is any */
    int64_t first_off_row;  /**< the first row of C holding one of those, -1 if none */
} ooc_verify_result_t;

/**
 * @brief Check C = alpha*op(A)*op(B) + beta*C0 on files with OpenBLAS on the
 * CPU, streaming within the handle's host-memory budget (OOC_PARAM_HOST_MEM).
 * Exact when the product is small; otherwise a Freivalds check with
 * @p vectors random vectors (C x against alpha A (B x) + beta C0 x) plus exact
 * recomputation of @p sample_rows rows of C (fewer when the budget holds
 * fewer: see res->rows_checked). Freivalds' threshold for a row (lib/verify.c
 * says how) lets a correct C fail with probability below 1e-13 per row and
 * vector. A failed check is OOC_SUCCESS with res->passed == 0. NaN and
 * infinities in the inputs are allowed: C must then hold NaN where the
 * reference does and the same infinities (complex types, and Freivalds'
 * check: non-finite values exactly where the reference has them, whichever
 * parts: that depends on a BLAS's complex arithmetic); the rest of C is still checked, except, by
 * Freivalds' check, the rows where C0 holds one (res->rows_unverified). More
 * rows of C than Freivalds' arrays fit in half the budget are checked in
 * ranges, each reading op(B) again. The check stops with OOC_ERR_CANCELLED
 * after ooc_cancel().
 * @return OOC_SUCCESS; OOC_ERR_INVALID_HANDLE, OOC_ERR_INVALID_TRANSA/_TRANSB,
 *         OOC_ERR_NULL_A/_B/_C/_ARG, OOC_ERR_SHAPE (files that do not fit
 *         together); OOC_ERR_PARAM_RANGE (@p vectors or @p sample_rows
 *         negative, or both 0 for a non-empty C too large for an exact check);
 *         OOC_ERR_OVERFLOW (a dimension beyond the BLAS integers);
 *         OOC_ERR_UNDECIDED (nothing failed, but the check was left undecided
 *         by an overflow: finite values beyond the range of double, or
 *         infinities of C where its elements may overflow their type); OOC_ERR_IO; OOC_ERR_FORMAT (a file shorter
 *         than its header says); OOC_ERR_HOST_MEMORY (also: the budget holds
 *         neither one sampled row with @p vectors 0, nor the vectors' arrays
 *         of one row); OOC_ERR_CANCELLED
 */
OOC_API ooc_status_t ooc_verify_files(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                                      const void *alpha, ooc_file_t *A, ooc_file_t *B,
                                      const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                      int vectors, int64_t sample_rows,
                                      ooc_verify_result_t *res);

/**
 * @brief ooc_verify_files() on rows [@p row_begin, @p row_end) of C alone
 * (0, 0: all of them): the rows one process of a split job computed. Only
 * those rows of op(A), C0 and C are read (and all of op(B)); Freivalds'
 * check and the exact rows (exact when those rows are few enough, else
 * @p sample_rows of them, spread evenly, the first and last included) cover
 * them and nothing else, so an error outside them is not seen. The caller
 * reduces the ranges' results: the largest max_rel_err, passed only when all
 * passed. C may be a joined or created file not yet committed.
 * @return as ooc_verify_files(), plus OOC_ERR_ROW_RANGE (row_begin >= row_end,
 *         negative, or row_end past C's rows, unless both are 0)
 */
OOC_API ooc_status_t ooc_verify_files_rows(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                                           const void *alpha, ooc_file_t *A, ooc_file_t *B,
                                           const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                           int64_t row_begin, int64_t row_end, int vectors,
                                           int64_t sample_rows, ooc_verify_result_t *res);

/**
 * @brief ooc_verify_files() on the rectangle rows [@p row_begin, @p row_end)
 * x columns [@p col_begin, @p col_end) of C alone (a process's part of a job
 * split as a grid): reads only those rows of op(A), those columns of op(B)
 * and that part of C0 and C, and checks it as that product alone (0, 0 for
 * either range: all of it). With sample_rows, the rows recomputed exactly
 * are of the range, over its columns.
 * @return as ooc_verify_files(), plus OOC_ERR_ROW_RANGE (a range empty,
 *         negative, or past C's rows or columns, unless both its ends are 0)
 */
OOC_API ooc_status_t ooc_verify_files_rect(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                                           const void *alpha, ooc_file_t *A, ooc_file_t *B, const void *beta,
                                           ooc_file_t *C0, ooc_file_t *C, int64_t row_begin, int64_t row_end,
                                           int64_t col_begin, int64_t col_end, int vectors, int64_t sample_rows,
                                           ooc_verify_result_t *res);

/**
 * @brief ooc_verify_files() on columns [@p col_begin, @p col_end) of C alone
 * (0, 0: all of them): the columns one process of a split job computed when
 * its plan keeps op(A) resident (plan->a_resident: its blocks are column
 * blocks of C). Only those columns of op(B), C0 and C are read (and all of
 * op(A)); Freivalds' check and the exact recomputation (exact when those
 * columns are few enough, else @p sample_rows of the columns, spread evenly,
 * the first and last included) cover them and nothing else, so an error
 * outside them is not seen. It checks C^T = alpha op(B)^T op(A)^T + beta
 * C0^T, whose rows are C's columns, so the fields of @p res that speak of
 * rows speak of C's columns: rows_checked (columns recomputed exactly),
 * rows_unverified (columns), first_off_row (the first column holding an
 * element found off). The caller reduces the ranges' results as with
 * ooc_verify_files_rows(). C may be a joined or created file not yet
 * committed.
 * @return as ooc_verify_files() (argument errors name A, B, C and C0 as
 *         given), plus OOC_ERR_ROW_RANGE (col_begin >= col_end, negative, or
 *         col_end past C's columns, unless both are 0)
 */
OOC_API ooc_status_t ooc_verify_files_cols(ooc_handle_t *handle, ooc_op_t transa, ooc_op_t transb,
                                           const void *alpha, ooc_file_t *A, ooc_file_t *B,
                                           const void *beta, ooc_file_t *C0, ooc_file_t *C,
                                           int64_t col_begin, int64_t col_end, int vectors,
                                           int64_t sample_rows, ooc_verify_result_t *res);
/** @} */

#endif /* OOC_GEMM_FILES_H */
