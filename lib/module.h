/* SPDX-License-Identifier: MIT */
/*
 * module.h: the CUDA backend as a loadable module. libooc_gemm.so links no
 * CUDA library: the CUDA backend (backend_cuda.c and kernels/) is built into
 * libooc_gemm_cuda.so, which the library loads (dlopen) the first time a
 * multiply or a query needs it, as UCX loads its CUDA transport. One
 * installation then runs on a node without CUDA (the host backend) and on a
 * GPU node (the CUDA backend), and says which and why.
 *
 *   module_load.c     the shared library's side: finds, loads and checks
 *                     the module, and keeps why it could not;
 *   module_cuda.c     the module's side: its one exported entry point, and
 *                     the two library services backend_cuda.c calls
 *                     (ooc_err_set, ooc_fault_hit) forwarded to the library;
 *   module_builtin.c  static builds (--disable-shared) and the test library:
 *                     the CUDA backend linked in, same interface, nothing
 *                     loaded.
 * The rest of lib/ reaches CUDA only through ooc_cuda_state().
 */
#ifndef OOC_MODULE_H
#define OOC_MODULE_H

#include <stdarg.h>
#include <stddef.h>

#include "backend.h"
#include "error.h"
#include "fault.h"

/* Bumped whenever this interface, ooc_be_ops_t or ooc_err_t changes; the
 * sizes below catch a forgotten bump. */
#define OOC_CUDA_MODULE_ABI 5
/* the module's file name, and the symbol it exports */
#define OOC_CUDA_MODULE_FILE "libooc_gemm_cuda.so"
#define OOC_CUDA_MODULE_ENTRY "ooc_cuda_module_v1"

/* What the library lends the module: the error record and fault injection
 * live in the library, once per process. */
typedef struct {
    ooc_status_t (*err_vset)(ooc_err_t *err, ooc_status_t status, const char *file, int line,
                             const char *fmt, va_list ap);
    int (*fault_hit)(ooc_fault_t kind);
} ooc_cuda_host_t;

/* What the module gives: its ops tables and the queries device.c makes. */
typedef struct {
    int abi;             /* OOC_CUDA_MODULE_ABI */
    const char *version; /* PACKAGE_VERSION it was built from: must be the library's */
    size_t ops_size;     /* sizeof(ooc_be_ops_t) */
    size_t err_size;     /* sizeof(ooc_err_t) */
    /* GPUs usable (> 0), or 0 with a sentence in why saying what is missing:
     * the driver (libcuda.so.1), a driver new enough for the runtime, a GPU.
     * On success, why says which driver and runtime. */
    int (*probe)(char *why, size_t len);
    /* name, memory, engines, bus id of one GPU */
    ooc_status_t (*device)(int device, ooc_device_info_t *info, ooc_err_t *err);
    /* the cuBLAS library's version (major*10000 + minor*100 + patch), 0
     * when it cannot say: part of what computes a block (handle.c) */
    int (*blas_version)(void);
    const ooc_be_ops_t *cuda_ops;   /* "cublas" */
    const ooc_be_ops_t *custom_ops; /* "custom": our kernels for real tiles */
} ooc_cuda_module_t;

/* The module's entry point (OOC_CUDA_MODULE_ENTRY): stores host, returns
 * its table. */
typedef const ooc_cuda_module_t *ooc_cuda_entry_fn(const ooc_cuda_host_t *host);

/* backend_cuda.c: the table, for module_cuda.c and module_builtin.c */
extern const ooc_cuda_module_t ooc_cuda_table;

/* What the process found, once (thread-safe; the module stays loaded). */
typedef struct {
    const ooc_cuda_module_t *mod; /* NULL when no CUDA backend could be loaded */
    int gpus;                     /* GPUs usable: > 0 only with mod */
    ooc_status_t status;          /* OOC_SUCCESS when gpus > 0, else why not:
                                   * OOC_ERR_BACKEND_UNAVAILABLE (no module, or its
                                   * CUDA libraries missing), OOC_ERR_NO_DEVICE */
    char why[8192];               /* a sentence, true either way */
    char path[4096];              /* the module loaded or looked for last; "" when built in */
} ooc_cuda_state_t;

/* module_load.c or module_builtin.c */
const ooc_cuda_state_t *ooc_cuda_state(void);

/* error.c: ooc_err_set with a va_list (the module's forwarder calls it) */
ooc_status_t ooc_err_vset(ooc_err_t *err, ooc_status_t status, const char *file, int line, const char *fmt,
                          va_list ap);

#endif
