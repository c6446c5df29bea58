/* SPDX-License-Identifier: MIT */
/*
 * handle.h: what a handle holds. Private to lib/: the public header keeps
 * the handle opaque.
 */
#ifndef OOC_HANDLE_H
#define OOC_HANDLE_H

#include "backend.h"
#include "error.h"
#include "pipeline.h"
#include "stage.h"

#define OOC_PARAM_LAST OOC_PARAM_STREAMS

struct ooc_handle_s {
    int64_t param[OOC_PARAM_LAST + 1]; /* indexed by ooc_param_t; 0: automatic */
    ooc_err_t err;                     /* last failure */
    /* the open backend, and the options it was opened with */
    ooc_be_t *be;
    int be_kind, be_device, be_math;
    ooc_res_t res;     /* device and pinned buffers, streams, events: reused */
    ooc_pool_t *pool;  /* staging threads, created when first needed */
    ooc_stats_t stats;
    int have_stats;
};

/* Open (or keep) the backend the options ask for. */
ooc_status_t ooc_handle_backend(ooc_handle_t *h);

#endif
