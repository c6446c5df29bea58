/* SPDX-License-Identifier: MIT */
/*
 * handle.h: what a handle holds. Private to lib/: the public header keeps
 * the handle opaque.
 */
#ifndef OOC_HANDLE_H
#define OOC_HANDLE_H

#include <stdatomic.h>

#include "backend.h"
#include "error.h"
#include "multi.h"
#include "pipeline.h"
#include "stage.h"

#define OOC_PARAM_LAST OOC_PARAM_STAGE_C

struct ooc_handle_s {
    int64_t param[OOC_PARAM_LAST + 1]; /* indexed by ooc_param_t; 0: automatic */
    ooc_err_t err;                     /* last failure */
    /* the open backend: one instance per device used, with the buffers,
     * streams and events each device's pipeline reuses; and the options it
     * was opened with */
    ooc_dev_t dev[OOC_MAX_DEVICES]; /* dev[0].be (NULL when none is open): probes, pinned allocations,
                                     * pointer queries */
    int ndev;
    int be_kind, be_math;
    ooc_pool_t *pool;  /* staging threads, created when first needed */
    ooc_stats_t stats;
    int have_stats;
    int64_t mismatched_seen; /* a file multiply's blocks found changed in C (files_plan.c), kept when it fails */
    char *trace_path;  /* ooc_set_trace: NULL when not tracing */
    atomic_int cancel; /* ooc_cancel() asked the running (or next) multiply to stop */
    struct {           /* how op(B) reaches the open devices (peer.c); reset with the backend */
        int known;     /* peer access was tried between every pair */
        int possible;  /* and every pair has it */
        int measured;  /* the probe ran (OOC_PEER_B_AUTO on GPUs) */
        int rates;     /* and gave the rates below */
        double host_gbps, peer_gbps;
        char why[192];
    } peer;
};

/* A failure recorded on a handle the public API passes as const (ooc_get,
 * ooc_get_stats): handles are only ever made by ooc_create, never const
 * objects, so writing the error record through this is defined. */
static inline ooc_err_t *ooc_handle_err(const ooc_handle_t *h) { return (ooc_err_t *)&h->err; }

/* A call that ooc_cancel() stops (a multiply, a check) returns st: the
 * request, made for the call running or the next one, is consumed by that
 * return, whatever it is (also a failure, nothing to compute, or work that
 * finished before the request was seen): left pending, it would stop a
 * later call it was never meant for. */
static inline ooc_status_t ooc_handle_done(ooc_handle_t *h, ooc_status_t st)
{
    atomic_store(&h->cancel, 0);
    return st;
}

/* Open (or keep) the backend the options ask for, on every device they
 * name (OOC_PARAM_DEVICES, else OOC_PARAM_DEVICE, else all visible). */
ooc_status_t ooc_handle_backend(ooc_handle_t *h);
/* ooc_compute_id() of the backend the options ask for (opened if need be),
 * leaving h->err alone on success; cplx: of a complex multiply's blocks,
 * which the custom backend computes with cuBLAS (so its id is cuBLAS's) */
ooc_status_t ooc_handle_id(ooc_handle_t *h, int cplx, char id[OOC_COMPUTE_ID_MAX]);
/* Release the backend and its buffers (after a device failure: the next
 * multiply opens it afresh, as a failed CUDA context must not be reused). */
void ooc_handle_close_backend(ooc_handle_t *h);

/* (gemm.c) Plan problem p on the open backend within the handle's budgets;
 * with `fixed`, reuse its orientation and sizes (a resumed job); without,
 * keeping op(A) resident (transposing the problem) only when allow_swap. */
/* The staging pool of the handle's settings (OOC_PARAM_STAGING_THREADS,
 * else one thread per CPU of the job, at most 16), made or remade as needed. */
ooc_status_t ooc_api_staging_pool(ooc_handle_t *h, ooc_err_t *err);

ooc_status_t ooc_api_plan(ooc_handle_t *h, const ooc_problem_t *p, const ooc_plan_t *fixed, int allow_swap,
                          ooc_plan_t *plan);
/* (gemm.c) Make the staging pool and the buffers, streams and events plan
 * needs (every allocation of a multiply), so that a caller can fail before it
 * writes anything. */
ooc_status_t ooc_api_prepare(ooc_handle_t *h, const ooc_problem_t *p, const ooc_plan_t *plan);
/* (gemm.c) Run p with plan, after ooc_api_prepare (transposing p first if
 * the plan says so), and record the handle's stats. */
ooc_status_t ooc_api_execute(ooc_handle_t *h, ooc_problem_t *p, const ooc_plan_t *plan,
                             const ooc_run_hooks_t *hooks);
/* (peer.c) Whether op(B) should be uploaded once and copied between the
 * open devices (OOC_PARAM_PEER_B, measured when automatic); h->peer.why says
 * why. A failed measurement is not an error: op(B) then comes from the host. */
ooc_status_t ooc_peer_decide(ooc_handle_t *h, int *share);
/* (gemm.c) helpers */
int ooc_is_zero(ooc_dtype_t t, const void *x);
/* x[0..count) *= beta, elements of t; beta == 0 sets them to 0 without reading them */
void ooc_scale_elems(ooc_dtype_t t, void *x, size_t count, const void *beta);
double ooc_now(void);

#endif
