/* SPDX-License-Identifier: MIT */
/*
 * peers_load.c: peers.h for a shared build: bench's CUDA peers live in the
 * module oocgemm_peers.so, in the directory of libooc_gemm's CUDA module
 * (ooc_cuda_probe names it), loaded at the first call. Where it cannot be
 * (no CUDA module, CUDA's libraries not on the library path, built without
 * CUDA), every function answers PEER_UNAVAILABLE with the reason.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "peers.h"

static const peer_module_t *mod;
static char mod_why[8400];

/* the table, or NULL with the reason in msg */
static const peer_module_t *peers(char *msg, size_t len)
{
    if (mod == NULL && mod_why[0] == '\0') {
        const char *why = NULL, *module = NULL;
        ooc_status_t st = ooc_cuda_probe(NULL, &why, &module);
        const char *slash = module ? strrchr(module, '/') : NULL;
        if (st == OOC_ERR_BACKEND_UNAVAILABLE || slash == NULL) {
            snprintf(mod_why, sizeof mod_why, "not available: %s", why && *why ? why : "no CUDA module");
        } else {
            char path[4096];
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - module), module, PEER_MODULE_FILE);
            void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            const peer_module_t *m = lib ? (const peer_module_t *)dlsym(lib, PEER_MODULE_ENTRY) : NULL;
            if (lib == NULL)
                snprintf(mod_why, sizeof mod_why, "not available: %s", dlerror());
            else if (m == NULL || m->abi != PEER_MODULE_ABI || m->gemm_size != sizeof(peer_gemm_t))
                snprintf(mod_why, sizeof mod_why, "not available: %s is not this oocgemm's peers module", path);
            else
                mod = m;
        }
    }
    if (mod == NULL && msg && len) snprintf(msg, len, "%s", mod_why);
    return mod;
}

int peer_open(const int *devices, int ndevices, int tf32, peer_ctx_t **ctx, char *msg, size_t len)
{
    if (ctx) *ctx = NULL;
    const peer_module_t *m = peers(msg, len);
    return m ? m->open(devices, ndevices, tf32, ctx, msg, len) : PEER_UNAVAILABLE;
}

void peer_close(peer_ctx_t *ctx)
{
    if (ctx && mod) mod->close(ctx);
}

int peer_serial(peer_ctx_t *ctx, const peer_gemm_t *g, int64_t block_rows, double *seconds, char *msg, size_t len)
{
    const peer_module_t *m = peers(msg, len);
    return m ? m->serial(ctx, g, block_rows, seconds, msg, len) : PEER_UNAVAILABLE;
}

int peer_cublasxt(peer_ctx_t *ctx, const peer_gemm_t *g, int block_dim, int pinning, double *seconds, char *msg,
                  size_t len)
{
    const peer_module_t *m = peers(msg, len);
    return m ? m->cublasxt(ctx, g, block_dim, pinning, seconds, msg, len) : PEER_UNAVAILABLE;
}

int peer_cublasxt_default_dim(const peer_ctx_t *ctx) { return ctx && mod ? mod->cublasxt_default_dim(ctx) : 0; }

int peer_incore(peer_ctx_t *ctx, const peer_gemm_t *g, int reps, double *times, char *msg, size_t len)
{
    const peer_module_t *m = peers(msg, len);
    return m ? m->incore(ctx, g, reps, times, msg, len) : PEER_UNAVAILABLE;
}

int peer_bandwidth(const int *devices, int ndevices, size_t bytes, int reps, double *h2d, double *d2h, double *both,
                   char *msg, size_t len)
{
    const peer_module_t *m = peers(msg, len);
    return m ? m->bandwidth(devices, ndevices, bytes, reps, h2d, d2h, both, msg, len) : PEER_UNAVAILABLE;
}
