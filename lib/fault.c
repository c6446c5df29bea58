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
#include <stdlib.h>
#include <string.h>

#include "fault.h"

static const char *const names[OOC_FAULT_KINDS] = {"dev_alloc", "host_alloc", "copy",    "gemm",    "exec",
                                                   "read",      "write",      "reserve", "journal", "lose",
                                                   "remove", "birth",     "register"};
static const int default_errno[OOC_FAULT_KINDS] = {0, 0, 0, 0, 0, EIO, ENOSPC, ENOSPC, ENOSPC, 0, EPERM, 0, 0};

static atomic_int enabled;                     /* any fault armed */
static atomic_llong target[OOC_FAULT_KINDS];   /* 0: none */
static atomic_int err_of[OOC_FAULT_KINDS];
static atomic_llong count[OOC_FAULT_KINDS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int errno_named(const char *s)
{
    static const struct {
        const char *name;
        int value;
    } known[] = {{"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EFBIG", EFBIG}};
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
    const char *spec = getenv("OOC_FAULT");
    char buf[256];
    if (spec == NULL || strlen(spec) >= sizeof buf) {
        atomic_store(&enabled, 0);
        return;
    }
    strcpy(buf, spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *n = strchr(item, ':');
        if (n == NULL) continue;
        *n++ = '\0';
        char *e = strchr(n, ':');
        if (e) *e++ = '\0';
        long long at = strtoll(n, NULL, 10);
        for (int k = 0; k < OOC_FAULT_KINDS; k++) {
            if (strcmp(item, names[k]) != 0 || at < 1) continue;
            atomic_store(&target[k], at);
            if (e && errno_named(e)) atomic_store(&err_of[k], errno_named(e));
            any = 1;
        }
    }
    atomic_store(&enabled, any);
}

static void init(void) { parse(); }

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
