/* SPDX-License-Identifier: MIT */
/*
 * module_cuda.c: the CUDA module's side of module.h. Its one exported
 * symbol, ooc_cuda_module_v1, takes the library's services and returns the
 * backend's table; ooc_err_set and ooc_fault_hit, which backend_cuda.c
 * calls, forward to the library that loaded the module, so that errors and
 * fault-injection counts are the process's one set.
 */
#include "config.h"

#include <stdarg.h>

#include "module.h"

static const ooc_cuda_host_t *host;

__attribute__((visibility("default"))) const ooc_cuda_module_t *ooc_cuda_module_v1(const ooc_cuda_host_t *h);

const ooc_cuda_module_t *ooc_cuda_module_v1(const ooc_cuda_host_t *h)
{
    host = h;
    return &ooc_cuda_table;
}

ooc_status_t ooc_err_set(ooc_err_t *err, ooc_status_t status, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ooc_status_t st = host->err_vset(err, status, file, line, fmt, ap);
    va_end(ap);
    return st;
}

int ooc_fault_hit(ooc_fault_t kind) { return host->fault_hit(kind); }
