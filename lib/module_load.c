/* SPDX-License-Identifier: MIT */
/*
 * module_load.c: find and load the CUDA module (module.h) for the shared
 * library. Looked for, first found wins:
 *   1. $OOC_CUDA_MODULE, when set (and then nowhere else);
 *   2. beside the loaded libooc_gemm.so: DIR/libooc_gemm/libooc_gemm_cuda.so
 *      (an installation, wherever it was moved) and DIR/libooc_gemm_cuda.so
 *      (the build tree's .libs);
 *   3. the configured $(pkglibdir).
 * The module is loaded RTLD_NOW | RTLD_LOCAL and never unloaded. When it
 * cannot be, the reason is kept in words a user can act on: no module
 * installed, or the CUDA runtime libraries it needs not on the library path.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "module.h"

const ooc_cuda_module_t *ooc_cuda_find(ooc_cuda_state_t *s);

#ifndef HAVE_CUDA

const ooc_cuda_module_t *ooc_cuda_find(ooc_cuda_state_t *s)
{
    s->path[0] = '\0';
    /* configure's reason: "disabled by --without-cuda", "nvcc not found", ... */
    snprintf(s->why, sizeof s->why, "this libooc_gemm was built without CUDA (configure: %s)", OOC_CUDA_WHY_NOT);
    return NULL;
}

#else

static const ooc_cuda_host_t services = {.err_vset = ooc_err_vset, .fault_hit = ooc_fault_hit};

/* the first candidate that exists, into s->path; 0 when none does (s->why
 * then lists them) */
static int locate(ooc_cuda_state_t *s)
{
    const char *env = getenv("OOC_CUDA_MODULE");
    if (env && *env) {
        snprintf(s->path, sizeof s->path, "%s", env);
        if (access(env, F_OK) == 0) return 1;
        snprintf(s->why, sizeof s->why, "no CUDA module: OOC_CUDA_MODULE=%s does not exist", env);
        return 0;
    }
    char cand[3][2048];
    int n = 0;
    Dl_info info;
    if (dladdr((void *)ooc_cuda_find, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
        const char *slash = strrchr(info.dli_fname, '/');
        int dir = (int)(slash - info.dli_fname);
        snprintf(cand[n++], sizeof cand[0], "%.*s/%s/%s", dir, info.dli_fname, PACKAGE, OOC_CUDA_MODULE_FILE);
        snprintf(cand[n++], sizeof cand[0], "%.*s/%s", dir, info.dli_fname, OOC_CUDA_MODULE_FILE);
    }
    snprintf(cand[n++], sizeof cand[0], "%s/%s", OOC_PKGLIBDIR, OOC_CUDA_MODULE_FILE);
    for (int i = 0; i < n; i++) {
        if (access(cand[i], F_OK) == 0) {
            snprintf(s->path, sizeof s->path, "%.2047s", cand[i]);
            return 1;
        }
    }
    snprintf(s->path, sizeof s->path, "%.2047s", cand[n - 1]);
    int used = snprintf(s->why, sizeof s->why, "no CUDA module: looked for");
    for (int i = 0; i < n && used > 0 && (size_t)used < sizeof s->why; i++)
        used += snprintf(s->why + used, sizeof s->why - (size_t)used, "%s %s", i ? "," : "", cand[i]);
    return 0;
}

const ooc_cuda_module_t *ooc_cuda_find(ooc_cuda_state_t *s)
{
    if (!locate(s)) return NULL;
    void *lib = dlopen(s->path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        if (e == NULL) e = "dlopen failed";
        /* "libcublas.so.13: cannot open shared object file: ..." */
        if (strstr(e, "cannot open shared object file") && strncmp(e, "libcu", 5) == 0)
            snprintf(s->why, sizeof s->why,
                     "no CUDA runtime: the CUDA module needs CUDA's libraries, which are not on the library path "
                     "(%s); add the CUDA toolkit's lib64 to LD_LIBRARY_PATH (module load cuda)",
                     e);
        else
            snprintf(s->why, sizeof s->why, "the CUDA module cannot be loaded: %s", e);
        return NULL;
    }
    ooc_cuda_entry_fn *entry = (ooc_cuda_entry_fn *)dlsym(lib, OOC_CUDA_MODULE_ENTRY);
    if (entry == NULL) {
        snprintf(s->why, sizeof s->why, "%s is not a libooc_gemm CUDA module (no %s)", s->path,
                 OOC_CUDA_MODULE_ENTRY);
        dlclose(lib);
        return NULL;
    }
    return entry(&services);
}

#endif
