/* SPDX-License-Identifier: MIT */
/*
 * module.c: what the process knows about its CUDA backend (module.h), found
 * once: the table (loaded by module_load.c or linked in by
 * module_builtin.c), checked against this library, and its probe's answer;
 * and ooc_cuda_probe, the public question "can the CUDA backend run here,
 * and if not, why not".
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "module.h"

/* module_load.c or module_builtin.c: the table, or NULL with s->status and
 * s->why set; s->path names the module loaded or looked for. */
const ooc_cuda_module_t *ooc_cuda_find(ooc_cuda_state_t *s);

static ooc_cuda_state_t state;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void find_once(void)
{
    ooc_cuda_state_t *s = &state;
    s->status = OOC_ERR_BACKEND_UNAVAILABLE;
    const ooc_cuda_module_t *m = ooc_cuda_find(s);
    if (m == NULL) return;
    const char *where = s->path[0] ? s->path : "the built-in CUDA backend";
    if (m->abi != OOC_CUDA_MODULE_ABI || strcmp(m->version, PACKAGE_VERSION) != 0 ||
        m->ops_size != sizeof(ooc_be_ops_t) || m->err_size != sizeof(ooc_err_t)) {
        snprintf(s->why, sizeof s->why,
                 "the CUDA module %s is from libooc_gemm %s (interface %d), this library is %s (interface %d): "
                 "install both from one build",
                 where, m->version, m->abi, PACKAGE_VERSION, OOC_CUDA_MODULE_ABI);
        return;
    }
    char why[sizeof s->why - 64];
    why[0] = '\0';
    s->gpus = m->probe(why, sizeof why);
    s->mod = m;
    if (s->gpus > 0) {
        s->status = OOC_SUCCESS;
        snprintf(s->why, sizeof s->why, "%s", why);
    } else {
        s->gpus = 0;
        s->status = OOC_ERR_NO_DEVICE;
        snprintf(s->why, sizeof s->why, "%s", why[0] ? why : "no GPU");
    }
}

const ooc_cuda_state_t *ooc_cuda_state(void)
{
    pthread_once(&once, find_once);
    return &state;
}

ooc_status_t ooc_cuda_probe(int *gpus, const char **why, const char **module)
{
    const ooc_cuda_state_t *s = ooc_cuda_state();
    if (gpus) *gpus = s->gpus;
    if (why) *why = s->why;
    if (module) *module = s->path;
    return s->status;
}
