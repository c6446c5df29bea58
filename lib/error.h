/* SPDX-License-Identifier: MIT */
/*
 * error.h: the error record every layer fills, and the macros that fill it.
 *
 * A failure sets a status and a message naming the failed call and where it
 * happened ("cudaMalloc: out of memory at lib/backend_cuda.c:88"). Nothing
 * here prints, exits or aborts. The first error recorded wins: later ones
 * (cleanup after the failure) do not overwrite it.
 */
#ifndef OOC_ERROR_H
#define OOC_ERROR_H

#include "ooc_gemm.h"

typedef struct {
    ooc_status_t status;
    char msg[8192]; /* (a budget refusal names the budgets and the buffers that would do: some 600 characters; a path may be up to 4095, and be named twice) */
    char path[4096]; /* the file the failure concerns ("" when none): ooc_last_error_path() */
} ooc_err_t;

/* Record status and a printf-style message (with " at file:line") unless an
 * error is already recorded. Returns status. */
ooc_status_t ooc_err_set(ooc_err_t *err, ooc_status_t status, const char *file, int line,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Name the file the recorded error concerns, if the error has none yet. */
void ooc_err_path(ooc_err_t *err, const char *path);

/* The status of a failed file operation from its errno: OOC_ERR_NO_SPACE for
 * a full file system, a quota or the file-size limit (ENOSPC, EDQUOT, EFBIG),
 * else OOC_ERR_IO. */
ooc_status_t ooc_errno_status(int e);

/* The length of err's message without the " at FILE:LINE" that ooc_err_set
 * ends it with: its words alone, to quote in another message. */
size_t ooc_err_words_len(const ooc_err_t *err);

/* Copy the first error of src into dst (if dst has none). */
void ooc_err_merge(ooc_err_t *dst, const ooc_err_t *src);

static inline void ooc_err_clear(ooc_err_t *err)
{
    err->status = OOC_SUCCESS;
    err->msg[0] = '\0';
    err->path[0] = '\0';
}

#define OOC_ERR(err, status, ...) ooc_err_set((err), (status), __FILE__, __LINE__, __VA_ARGS__)

/* OOC_ERR for a failure concerning the file at path (recorded for
 * ooc_last_error_path()). */
#define OOC_ERR_FILE(err, status, path, ...)                                                       \
    ooc_err_file((err), (status), (path), __FILE__, __LINE__, __VA_ARGS__)
ooc_status_t ooc_err_file(ooc_err_t *err, ooc_status_t status, const char *path, const char *file,
                          int line, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* return the status (recorded with a message) if cond holds */
#define OOC_RETURN_ERROR_IF(cond, err, status, ...)                                                \
    do {                                                                                           \
        if (cond) return OOC_ERR((err), (status), __VA_ARGS__);                                    \
    } while (0)

/* OOC_RETURN_ERROR_IF for a failure concerning the file at path (an
 * argument naming a file: recorded for ooc_last_error_path() too) */
#define OOC_RETURN_FILE_ERROR_IF(cond, err, status, path, ...)                                     \
    do {                                                                                           \
        if (cond) return OOC_ERR_FILE((err), (status), (path), __VA_ARGS__);                       \
    } while (0)

/* evaluate an expression returning ooc_status_t; return it if it failed */
#define OOC_FORWARD(expr)                                                                          \
    do {                                                                                           \
        ooc_status_t ooc_fwd_st_ = (expr);                                                         \
        if (ooc_fwd_st_ != OOC_SUCCESS) return ooc_fwd_st_;                                        \
    } while (0)

#endif
