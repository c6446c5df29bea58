/* SPDX-License-Identifier: MIT */
/*
 * numa.c: a GPU's NUMA node from sysfs, its CPUs, and placing the staging
 * there (see numa.h). Raw system calls (mbind), not libnuma: one call does
 * not justify a dependency.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "numa.h"

#define WORD_BITS (8 * sizeof(unsigned long))
#define MAX_CPUS OOC_NUMA_MAX_CPUS
#define MAX_NODES 1024
#define MPOL_PREFERRED_ 1 /* <linux/mempolicy.h>'s MPOL_PREFERRED */

const char *ooc_numa_root(void)
{
    const char *r = getenv("OOC_NUMA_ROOT");
    return r ? r : "";
}

int ooc_numa_wanted(void)
{
    const char *v = getenv("OOC_NUMA");
    return !(v && strcmp(v, "0") == 0);
}

int ooc_numa_local_procs(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_TASKS_PER_NODE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        long n = v ? strtol(v, NULL, 10) : 0;
        if (n >= 1) return n > 1 << 20 ? 1 << 20 : (int)n;
    }
    return 1;
}

/* The file's first line (at most cap - 1 bytes) into buf: 0, or -1. */
static int read_line(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t got;
    do got = read(fd, buf, cap - 1);
    while (got < 0 && errno == EINTR);
    close(fd);
    if (got < 0) return -1;
    buf[got] = '\0';
    char *nl = strchr(buf, '\n');
    if (nl) *nl = '\0';
    else if ((size_t)got == cap - 1) return -1; /* longer than we read */
    return 0;
}

/* A decimal number at *s, advancing it; -1 when none or above max. */
static long number(const char **s, long max)
{
    const char *p = *s;
    long v = 0;
    if (!isdigit((unsigned char)*p)) return -1;
    for (; isdigit((unsigned char)*p); p++) {
        v = v * 10 + (*p - '0');
        if (v > max) return -1;
    }
    *s = p;
    return v;
}

int ooc_numa_pci_line(const char *root, const char *bus_id, const char *what, char *out, size_t cap)
{
    char id[64], path[4096];
    size_t i = 0;
    out[0] = '\0';
    for (; bus_id[i] && i + 1 < sizeof id; i++) id[i] = (char)tolower((unsigned char)bus_id[i]);
    id[i] = '\0';
    if (bus_id[i] || i == 0 || strchr(id, '/')) return -1;
    int n = snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s/%s", root, id, what);
    if (n < 0 || (size_t)n >= sizeof path || read_line(path, out, cap) != 0) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

int ooc_numa_node_of_pci(const char *root, const char *bus_id)
{
    char buf[32];
    if (ooc_numa_pci_line(root, bus_id, "numa_node", buf, sizeof buf) != 0) return -1;
    const char *s = buf;
    long node = number(&s, MAX_NODES - 1);
    return node >= 0 && *s == '\0' ? (int)node : -1;
}

int ooc_numa_parse_list(const char *s, unsigned long *mask, size_t bits)
{
    memset(mask, 0, (bits + WORD_BITS - 1) / WORD_BITS * sizeof *mask);
    int count = 0;
    if (*s == '\0') return 0;
    for (;;) {
        long lo = number(&s, (long)bits - 1), hi = lo;
        if (lo < 0) return -1;
        if (*s == '-') {
            s++;
            hi = number(&s, (long)bits - 1);
            if (hi < lo) return -1;
        }
        for (long c = lo; c <= hi; c++) {
            unsigned long bit = 1UL << ((size_t)c % WORD_BITS);
            if (!(mask[(size_t)c / WORD_BITS] & bit)) count++;
            mask[(size_t)c / WORD_BITS] |= bit;
        }
        if (*s == '\0') return count;
        if (*s++ != ',') return -1;
    }
}

int ooc_numa_node_cpus(const char *root, int node, unsigned long *mask, size_t bits, int *all)
{
    char path[4096], list[8192];
    *all = 0;
    memset(mask, 0, (bits + WORD_BITS - 1) / WORD_BITS * sizeof *mask);
    if (node < 0) return 0;
    int n = snprintf(path, sizeof path, "%s/sys/devices/system/node/node%d/cpulist", root, node);
    if (n < 0 || (size_t)n >= sizeof path || read_line(path, list, sizeof list) != 0) return 0;
    if (ooc_numa_parse_list(list, mask, bits) <= 0) return 0;
    cpu_set_t *set = CPU_ALLOC(bits);
    if (set == NULL) return 0;
    size_t size = CPU_ALLOC_SIZE(bits);
    if (sched_getaffinity(0, size, set) != 0) {
        CPU_FREE(set);
        return 0;
    }
    int count = 0, allowed = CPU_COUNT_S(size, set);
    for (size_t c = 0; c < bits; c++) {
        unsigned long bit = 1UL << (c % WORD_BITS);
        if (!(mask[c / WORD_BITS] & bit)) continue;
        if (CPU_ISSET_S(c, size, set)) count++;
        else mask[c / WORD_BITS] &= ~bit;
    }
    CPU_FREE(set);
    *all = count > 0 && count == allowed;
    return count;
}

int ooc_numa_bind_mask(const unsigned long *mask)
{
    cpu_set_t *set = CPU_ALLOC(MAX_CPUS);
    if (set == NULL) return 0;
    size_t size = CPU_ALLOC_SIZE(MAX_CPUS);
    CPU_ZERO_S(size, set);
    for (size_t c = 0; c < MAX_CPUS; c++)
        if (mask[c / WORD_BITS] & (1UL << (c % WORD_BITS))) CPU_SET_S(c, size, set);
    int rc = CPU_COUNT_S(size, set) > 0 ? sched_setaffinity(0, size, set) : -1; /* 0: the calling thread */
    CPU_FREE(set);
    return rc == 0;
}

int ooc_numa_bind_thread(const char *root, int node)
{
    unsigned long mask[OOC_NUMA_MASK_WORDS];
    int all = 0;
    if (ooc_numa_node_cpus(root, node, mask, MAX_CPUS, &all) == 0 || all) return 0;
    return ooc_numa_bind_mask(mask);
}

int ooc_numa_prefer(void *p, size_t n, int node)
{
#ifdef SYS_mbind
    if (node < 0 || node >= MAX_NODES) return EINVAL;
    unsigned long nodes[MAX_NODES / WORD_BITS] = {0};
    nodes[(size_t)node / WORD_BITS] = 1UL << ((size_t)node % WORD_BITS);
    /* the kernel reads maxnode - 1 bits */
    unsigned long maxnode = ((size_t)node / WORD_BITS + 1) * WORD_BITS + 1;
    if (syscall(SYS_mbind, p, n, MPOL_PREFERRED_, nodes, maxnode, 0UL) != 0) return errno ? errno : EINVAL;
    return 0;
#else
    (void)p, (void)n, (void)node;
    return ENOSYS;
#endif
}
