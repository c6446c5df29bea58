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
    char msg[512];
} ooc_err_t;

/* Record status and a printf-style message (with " at file:line") unless an
 * error is already recorded. Returns status. */
ooc_status_t ooc_err_set(ooc_err_t *err, ooc_status_t status, const char *file, int line,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Copy the first error of src into dst (if dst has none). */
void ooc_err_merge(ooc_err_t *dst, const ooc_err_t *src);

static inline void ooc_err_clear(ooc_err_t *err)
{
    err->status = OOC_SUCCESS;
    err->msg[0] = '\0';
}

#define OOC_ERR(err, status, ...) ooc_err_set((err), (status), __FILE__, __LINE__, __VA_ARGS__)

/* return the status (recorded with a message) if cond holds */
#define OOC_RETURN_ERROR_IF(cond, err, status, ...)                                                \
    do {                                                                                           \
        if (cond) return OOC_ERR((err), (status), __VA_ARGS__);                                    \
    } while (0)

/* evaluate an expression returning ooc_status_t; return it if it failed */
#define OOC_FORWARD(expr)                                                                          \
    do {                                                                                           \
        ooc_status_t ooc_fwd_st_ = (expr);                                                         \
        if (ooc_fwd_st_ != OOC_SUCCESS) return ooc_fwd_st_;                                        \
    } while (0)

#endif
