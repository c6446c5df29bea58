/* SPDX-License-Identifier: MIT */
/*
 * trace.h: the timeline of one multiply: every copy and multiply on each
 * stream (timed device events) and every staging step of the reader and
 * writer threads (host clock), written as Chrome trace JSON (Perfetto opens
 * it), with the busy time of each lane and the overlap efficiency
 * (serial sum - measured) / (serial sum - largest part). Best effort: a
 * failure to time an op drops that op, never the multiply.
 */
#ifndef OOC_TRACE_H
#define OOC_TRACE_H

#include <pthread.h>
#include <stdint.h>

#include "backend.h"

enum { OOC_LANE_IN, OOC_LANE_COMPUTE, OOC_LANE_OUT, OOC_LANE_READ, OOC_LANE_WRITE, OOC_LANES };

typedef struct {
    const char *name; /* a string literal */
    int lane;
    int64_t block;
    int ev;           /* device op: index of its start event (end = ev + 1); -1: host op */
    double t0, t1;    /* host op: seconds on CLOCK_MONOTONIC */
} ooc_trace_rec_t;

typedef struct {
    ooc_be_t *be;
    ooc_event_t *pool;
    int pool_size, used;
    ooc_trace_rec_t *recs;
    int nrec, cap, dropped;
    double base_host;  /* host time at which the base event completed */
    pthread_mutex_t mu;
} ooc_trace_t;

typedef struct {
    double wall;                /* first start to last end of the device ops, seconds */
    double busy[OOC_LANES];     /* seconds each lane was busy */
    double overlap_efficiency;  /* 1: all overlapped; 0: as serial; NAN when undefined */
} ooc_trace_summary_t;

/* Create the timed events for up to max_ops device ops and mark time zero
 * with an event on stream s (synchronised once, before the pipeline runs). */
ooc_status_t ooc_trace_begin(ooc_trace_t *t, ooc_be_t *be, int max_ops, ooc_stream_t s, ooc_err_t *err);
/* A device op on stream s: start() before enqueuing it (returns a handle, -1
 * when out of events), end() after, from the thread that enqueued it (any). */
int ooc_trace_start(ooc_trace_t *t, ooc_stream_t s);
void ooc_trace_end(ooc_trace_t *t, ooc_stream_t s, int handle, const char *name, int lane, int64_t block);
/* A host op that ran from t0 to t1 (any thread). */
void ooc_trace_host(ooc_trace_t *t, const char *name, int lane, int64_t block, double t0, double t1);
/* After every traced op completed, the traces of n devices (ids: their
 * numbers): each one's summary in sums[d], all of them together in *total
 * (busy times summed, the wall from the first op to the last), the JSON file
 * (when path is not NULL) with one track group per device, and the events
 * freed. */
ooc_status_t ooc_trace_finish(ooc_trace_t *const *t, const int *ids, int n, const char *path,
                              ooc_trace_summary_t *sums, ooc_trace_summary_t *total, ooc_err_t *err);
/* Free without writing (after a failure). */
void ooc_trace_discard(ooc_trace_t *t);

double ooc_trace_now(void);

#endif
