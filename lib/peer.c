/* SPDX-License-Identifier: MIT */
/*
 * peer.c: how op(B) reaches several devices (see handle.h). Either every
 * device uploads all of it from the host, or each uploads a share and copies
 * the others' shares from them over peer access (NVLink). The choice is a
 * measurement, taken once per set of devices at the first multiply on them:
 * every device copies PROBE_BYTES from pinned host memory at once (the
 * rate each gets while all share the host's links), then every device copies
 * PROBE_BYTES from the next device's memory at once. Sharing moves B/n from
 * the host and B (n-1)/n between devices against all of B from the host, so
 * it is faster exactly when a device's peer rate beats its host rate.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "handle.h"

#define PROBE_BYTES ((size_t)128 << 20)
#define PROBE_ROUNDS 3

typedef struct {
    void *host, *src, *dst;
    ooc_stream_t s;
    int have_s;
} probe_dev_t;

/* Seconds for every device's copy at once (host: H2D; else from the next
 * device), the best of PROBE_ROUNDS. */
static ooc_status_t timed(ooc_handle_t *h, probe_dev_t *pd, int from_host, double *best, ooc_err_t *err)
{
    *best = 1e30;
    for (int r = 0; r < PROBE_ROUNDS; r++) {
        double t0 = ooc_now();
        for (int d = 0; d < h->ndev; d++) {
            ooc_be_t *be = h->dev[d].be;
            OOC_FORWARD(be->ops->activate(be, err));
            if (from_host)
                OOC_FORWARD(be->ops->copy2d(be, pd[d].dst, PROBE_BYTES, pd[d].host, PROBE_BYTES, PROBE_BYTES, 1,
                                            OOC_H2D, pd[d].s, err));
            else {
                int e = (d + 1) % h->ndev;
                OOC_FORWARD(be->ops->copy_peer(be, pd[d].dst, h->dev[e].be, pd[e].src, PROBE_BYTES, pd[d].s, err));
            }
        }
        for (int d = 0; d < h->ndev; d++) {
            ooc_be_t *be = h->dev[d].be;
            OOC_FORWARD(be->ops->activate(be, err));
            OOC_FORWARD(be->ops->stream_sync(be, pd[d].s, err));
        }
        double t = ooc_now() - t0;
        if (t < *best) *best = t;
    }
    return OOC_SUCCESS;
}

/* The measurement; *ok = 0 (and why) when it could not be taken. */
static ooc_status_t measure(ooc_handle_t *h, int *ok, ooc_err_t *err)
{
    probe_dev_t pd[OOC_MAX_DEVICES];
    memset(pd, 0, sizeof pd);
    ooc_status_t st = OOC_SUCCESS;
    *ok = 0;
    for (int d = 0; d < h->ndev && st == OOC_SUCCESS; d++) {
        ooc_be_t *be = h->dev[d].be;
        st = be->ops->activate(be, err);
        if (st == OOC_SUCCESS) st = be->ops->host_alloc(be, PROBE_BYTES, 1, &pd[d].host, err);
        if (st == OOC_SUCCESS) st = be->ops->dev_alloc(be, PROBE_BYTES, &pd[d].src, err);
        if (st == OOC_SUCCESS) st = be->ops->dev_alloc(be, PROBE_BYTES, &pd[d].dst, err);
        if (st == OOC_SUCCESS) st = be->ops->stream_create(be, &pd[d].s, err);
        pd[d].have_s = st == OOC_SUCCESS;
        if (st == OOC_SUCCESS) memset(pd[d].host, 0x5a, PROBE_BYTES);
    }
    double t_host = 0, t_peer = 0;
    if (st == OOC_SUCCESS) st = timed(h, pd, 1, &t_host, err); /* also fills dst, then src below */
    for (int d = 0; d < h->ndev && st == OOC_SUCCESS; d++)
        st = h->dev[d].be->ops->copy2d(h->dev[d].be, pd[d].src, PROBE_BYTES, pd[d].host, PROBE_BYTES, PROBE_BYTES, 1,
                                       OOC_H2D, pd[d].s, err);
    if (st == OOC_SUCCESS) st = timed(h, pd, 0, &t_peer, err);
    for (int d = 0; d < h->ndev; d++) {
        ooc_be_t *be = h->dev[d].be;
        if (be->ops->activate(be, err) != OOC_SUCCESS) continue;
        if (pd[d].have_s) {
            (void)be->ops->stream_sync(be, pd[d].s, err);
            be->ops->stream_destroy(be, pd[d].s);
        }
        if (pd[d].dst) be->ops->dev_free(be, pd[d].dst);
        if (pd[d].src) be->ops->dev_free(be, pd[d].src);
        if (pd[d].host) be->ops->host_free(be, pd[d].host);
    }
    if (st == OOC_SUCCESS) {
        h->peer.host_gbps = 1e-9 * (double)PROBE_BYTES / t_host;
        h->peer.peer_gbps = 1e-9 * (double)PROBE_BYTES / t_peer;
        *ok = 1;
    }
    return st;
}

ooc_status_t ooc_peer_decide(ooc_handle_t *h, int *share)
{
    ooc_err_t *err = &h->err;
    int64_t want = h->param[OOC_PARAM_PEER_B];
    *share = 0;
    if (h->ndev < 2) return OOC_SUCCESS;
    if (!h->peer.known) {
        memset(&h->peer, 0, sizeof h->peer);
        h->peer.known = 1;
        int all = 1;
        for (int d = 0; d < h->ndev && all; d++)
            for (int e = 0; e < h->ndev && all; e++) {
                if (e == d) continue;
                OOC_FORWARD(h->dev[d].be->ops->peer_enable(h->dev[d].be, h->dev[e].be, &all, err));
                if (!all)
                    snprintf(h->peer.why, sizeof h->peer.why, "device %d cannot access device %d's memory",
                             h->dev[d].index, h->dev[e].index);
            }
        h->peer.possible = all;
    }
    if (!h->peer.possible) {
        OOC_RETURN_ERROR_IF(want == OOC_PEER_B_SHARE, err, OOC_ERR_NOT_SUPPORTED,
                            "OOC_PARAM_PEER_B asks op(B) to be copied between devices, but %s", h->peer.why);
        OOC_FORWARD(h->dev[0].be->ops->activate(h->dev[0].be, err));
        return OOC_SUCCESS;
    }
    if (want == OOC_PEER_B_SHARE || want == OOC_PEER_B_HOST) {
        *share = want == OOC_PEER_B_SHARE;
        snprintf(h->peer.why, sizeof h->peer.why, "as OOC_PARAM_PEER_B asks");
        return OOC_SUCCESS;
    }
    /* automatic: measured on the GPUs; the host backend's devices share the
     * process's memory (nothing to measure): each copies from the host */
    if (!h->peer.measured && strcmp(h->dev[0].be->ops->name, "host") != 0) {
        int ok = 0;
        ooc_err_t perr;
        ooc_err_clear(&perr);
        if (measure(h, &ok, &perr) != OOC_SUCCESS || !ok)
            snprintf(h->peer.why, sizeof h->peer.why, "the peer probe failed (%.120s): from the host",
                     perr.msg);
        h->peer.measured = 1;
        h->peer.rates = ok;
    }
    if (h->peer.rates) {
        *share = h->peer.peer_gbps > h->peer.host_gbps;
        snprintf(h->peer.why, sizeof h->peer.why,
                 "measured with every device copying at once: %.1f GB/s each from the host, %.1f GB/s from a peer",
                 h->peer.host_gbps, h->peer.peer_gbps);
    } else if (!h->peer.measured) {
        snprintf(h->peer.why, sizeof h->peer.why, "host backend: nothing to measure, each device copies from the host");
    }
    return h->dev[0].be->ops->activate(h->dev[0].be, err);
}
