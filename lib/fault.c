/* SPDX-License-Identifier: MIT */
/*
 * fault.c: fault injection (see fault.h). The specification is parsed once,
 * on first use (or at ooc_fault_reset); the counts are atomics, so streams,
 * staging threads and the flusher may all count at once.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

static const char *const names[OOC_FAULT_KINDS] = {"dev_alloc", "host_alloc", "copy",    "gemm",    "exec",
                                                   "read",      "write",      "reserve", "journal", "lose",
                                                   "remove", "birth",     "register", "commit",  "complete", "sync_dir", "sync"};
static const int default_errno[OOC_FAULT_KINDS] = {0, 0, 0, 0, 0, EIO, ENOSPC, ENOSPC, ENOSPC, 0, EPERM, 0, 0, EIO, EIO, EIO, EIO};

static atomic_int enabled;                     /* any fault armed */
static atomic_llong target[OOC_FAULT_KINDS];   /* 0: none */
static atomic_int err_of[OOC_FAULT_KINDS];
static atomic_llong count[OOC_FAULT_KINDS];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char bad[320]; /* what is wrong with the specification, "" when nothing */

static int errno_named(const char *s)
{
    static const struct {
        const char *name;
        int value;
    } known[] = {{"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EFBIG", EFBIG}, {"EPERM", EPERM}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(s, known[i].name) == 0) return known[i].value;
    return 0;
}

static void parse(void)
{
    int any = 0;
    for (int k = 0; k < OOC_FAULT_KINDS; k++) {
        atomic_store(&target[k], 0);
        atomic_store(&count[k], 0);
        atomic_store(&err_of[k], default_errno[k]);
    }
    bad[0] = '\0';
    const char *spec = getenv("OOC_FAULT");
    char buf[256];
    if (spec == NULL || *spec == '\0') {
        atomic_store(&enabled, 0);
        return;
    }
    if (strlen(spec) >= sizeof buf) {
        snprintf(bad, sizeof bad, "OOC_FAULT='%.60s...' (for tests only): longer than %zu characters", spec,
                 sizeof buf - 1);
        atomic_store(&enabled, 0);
        return;
    }
    strcpy(buf, spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *n = strchr(item, ':');
        if (n == NULL) {
            if (!bad[0]) snprintf(bad, sizeof bad, "'%.40s' is not KIND:N", item);
            continue;
        }
        *n++ = '\0';
        char *e = strchr(n, ':'), *end;
        if (e) *e++ = '\0';
        errno = 0;
        long long at = strtoll(n, &end, 10); /* (ERANGE: a count past 2^63 saturated, a fault never to come) */
        int range = errno == ERANGE, k = 0;
        while (k < OOC_FAULT_KINDS && strcmp(item, names[k]) != 0) k++;
        if (k == OOC_FAULT_KINDS || end == n || *end != '\0' || at < 1 || range || (e && !errno_named(e)) ||
            (e && default_errno[k] == 0)) {
            if (bad[0]) continue;
            if (k == OOC_FAULT_KINDS)
                snprintf(bad, sizeof bad, "unknown kind '%.40s'", item);
            else if (e && default_errno[k] == 0) /* (its failure is not an errno: an allocation, a call) */
                snprintf(bad, sizeof bad, "%s: an ERRNO ('%.20s') is for the file kinds alone", item, e);
            else if (e && !errno_named(e))
                snprintf(bad, sizeof bad, "%s: '%.20s' is not EIO, ENOSPC, EDQUOT, EFBIG or EPERM", item, e);
            else
                snprintf(bad, sizeof bad, "%s: '%.20s' is not a count from 1", item, n);
            continue;
        }
        atomic_store(&target[k], at);
        if (e) atomic_store(&err_of[k], errno_named(e));
        any = 1;
    }
    if (bad[0]) { /* the whole message, with the spec as parsed (the environment may change later) */
        char why[200];
        snprintf(why, sizeof why, "%.199s", bad);
        snprintf(bad, sizeof bad, "OOC_FAULT='%.60s' (for tests only): %.199s", spec, why);
    }
    atomic_store(&enabled, any && !bad[0]); /* (a spec with a mistake arms nothing) */
}

static void init(void) { parse(); }

ooc_status_t ooc_fault_check(ooc_err_t *err)
{
    pthread_once(&once, init);
    OOC_RETURN_ERROR_IF(bad[0] != '\0', err, OOC_ERR_PARAM_RANGE, "%s", bad);
    return OOC_SUCCESS;
}

void ooc_fault_reset(void)
{
    pthread_once(&once, init);
    parse();
}

int ooc_fault_hit(ooc_fault_t kind)
{
    pthread_once(&once, init);
    if (!atomic_load(&enabled)) return 0;
    long long t = atomic_load(&target[kind]);
    return t > 0 && atomic_fetch_add(&count[kind], 1) + 1 == t;
}

int ooc_fault_errno(ooc_fault_t kind)
{
    if (!ooc_fault_hit(kind)) return 0;
    int e = atomic_load(&err_of[kind]);
    return e ? e : EIO;
}
