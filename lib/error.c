/* SPDX-License-Identifier: MIT */
/*
 * error.c: status strings and the error record (see error.h).
 * Must not print or allocate: it is called on the failure paths.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "module.h"

static void set_v(ooc_err_t *err, ooc_status_t status, const char *file, int line, const char *fmt,
                  va_list ap)
{
    err->status = status;
    err->path[0] = '\0';
    /* name the source as the project does ("lib/x.c"), whatever the build directory */
    const char *rel = strstr(file, "lib/");
    if (rel) file = rel;
    int used = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (used >= 0 && (size_t)used < sizeof err->msg)
        snprintf(err->msg + used, sizeof err->msg - (size_t)used, " at %s:%d", file, line);
}

size_t ooc_err_words_len(const ooc_err_t *err)
{
    const char *at = NULL, *m = err->msg;
    for (const char *p = strstr(m, " at "); p; p = strstr(p + 1, " at ")) at = p;
    const char *colon = at ? strrchr(at, ':') : NULL;
    /* (" at " + a name without spaces + ':' + digits, at the very end) */
    if (colon && colon[1] != '\0' && strspn(colon + 1, "0123456789") == strlen(colon + 1) &&
        strcspn(at + 4, " ") == strlen(at + 4))
        return (size_t)(at - m);
    return strlen(m);
}

ooc_status_t ooc_err_set(ooc_err_t *err, ooc_status_t status, const char *file, int line,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ooc_err_vset(err, status, file, line, fmt, ap);
    va_end(ap);
    return status;
}

ooc_status_t ooc_err_vset(ooc_err_t *err, ooc_status_t status, const char *file, int line, const char *fmt,
                          va_list ap)
{
    if (err == NULL || err->status != OOC_SUCCESS) return status;
    set_v(err, status, file, line, fmt, ap);
    return status;
}

ooc_status_t ooc_err_file(ooc_err_t *err, ooc_status_t status, const char *path, const char *file,
                          int line, const char *fmt, ...)
{
    if (err == NULL || err->status != OOC_SUCCESS) return status;
    va_list ap;
    va_start(ap, fmt);
    set_v(err, status, file, line, fmt, ap);
    va_end(ap);
    ooc_err_path(err, path);
    return status;
}

void ooc_err_path(ooc_err_t *err, const char *path)
{
    if (err == NULL || err->status == OOC_SUCCESS || err->path[0] != '\0' || path == NULL) return;
    snprintf(err->path, sizeof err->path, "%s", path);
}

ooc_status_t ooc_errno_status(int e)
{
    return e == ENOSPC || e == EDQUOT || e == EFBIG ? OOC_ERR_NO_SPACE : OOC_ERR_IO;
}

void ooc_err_merge(ooc_err_t *dst, const ooc_err_t *src)
{
    if (dst->status == OOC_SUCCESS && src->status != OOC_SUCCESS) *dst = *src;
}

const char *ooc_status_string(ooc_status_t status)
{
    switch (status) {
    case OOC_SUCCESS: return "success";
    case OOC_ERR_INVALID_HANDLE: return "invalid handle (NULL)";
    case OOC_ERR_INVALID_LAYOUT: return "invalid layout (not row- or column-major)";
    case OOC_ERR_INVALID_TRANSA: return "invalid op(A) (not N, T or C)";
    case OOC_ERR_INVALID_TRANSB: return "invalid op(B) (not N, T or C)";
    case OOC_ERR_INVALID_M: return "invalid m (negative, or 0 where a product is needed)";
    case OOC_ERR_INVALID_N: return "invalid n (negative, or 0 where a product is needed)";
    case OOC_ERR_INVALID_K: return "invalid k (negative, or 0 where a product is needed)";
    case OOC_ERR_INVALID_LDA: return "lda is too small";
    case OOC_ERR_INVALID_LDB: return "ldb is too small";
    case OOC_ERR_INVALID_LDC: return "ldc is too small";
    case OOC_ERR_NULL_A: return "A is NULL";
    case OOC_ERR_NULL_B: return "B is NULL";
    case OOC_ERR_NULL_C: return "C is NULL";
    case OOC_ERR_NULL_ARG: return "a required pointer argument is NULL";
    case OOC_ERR_OVERFLOW: return "size overflows 64 bits";
    case OOC_ERR_INVALID_PARAM: return "invalid parameter or argument (unknown, or not valid for this call)";
    case OOC_ERR_PARAM_RANGE: return "parameter value out of range";
    case OOC_ERR_INVALID_DTYPE: return "unknown element type";
    case OOC_ERR_BUDGET_TOO_SMALL: return "memory budget too small for any plan, or for a useful one";
    case OOC_ERR_DEVICE_MEMORY: return "out of device memory";
    case OOC_ERR_HOST_MEMORY: return "out of host memory";
    case OOC_ERR_NO_DEVICE: return "no usable GPU";
    case OOC_ERR_BACKEND_UNAVAILABLE: return "backend not built into this library";
    case OOC_ERR_CUDA: return "CUDA runtime call failed";
    case OOC_ERR_CUBLAS: return "cuBLAS call failed";
    case OOC_ERR_THREAD: return "host thread creation failed";
    case OOC_ERR_NOT_SUPPORTED: return "not supported by this version";
    case OOC_ERR_INTERNAL: return "internal error in libooc_gemm";
    case OOC_ERR_IO: return "file input/output failed";
    case OOC_ERR_FORMAT: return "malformed or unsupported matrix file";
    case OOC_ERR_SHAPE: return "operand shapes or types do not match";
    case OOC_ERR_JOURNAL:
        return "the resume journal cannot be used (not a journal, another job's, damaged, or its blocks another "
               "computer's)";
    case OOC_ERR_NO_SPACE: return "no space left for a file (file system full, quota or file-size limit)";
    case OOC_ERR_CANCELLED: return "cancelled (ooc_cancel); a file multiply can be resumed";
    case OOC_ERR_BUSY: return "the output is being written by another job";
    case OOC_ERR_ROW_RANGE: return "the row range is empty, passes the end of C or is not on the plan's row blocks";
    case OOC_ERR_OVERLAP: return "C overlaps A or B: it would be written while they are read";
    case OOC_ERR_UNDECIDED: return "the verification is undecided: values of the check overflowed";
    }
    return "unknown status";
}
