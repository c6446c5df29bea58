/* SPDX-License-Identifier: MIT */
/*
 * module_builtin.c: the CUDA backend linked in rather than loaded (module.h):
 * static builds (--disable-shared), where there is nothing to dlopen, and the
 * test library, whose suites reach the backend's internals.
 */
#include "config.h"

#include "module.h"

const ooc_cuda_module_t *ooc_cuda_find(ooc_cuda_state_t *s);

const ooc_cuda_module_t *ooc_cuda_find(ooc_cuda_state_t *s)
{
    s->path[0] = '\0';
    return &ooc_cuda_table;
}
