/* SPDX-License-Identifier: MIT */
/*
 * joblimits.h: what this job may use of the machine (joblimits.c), for the
 * defaults of thread counts and memory budgets: the CPUs of the affinity
 * mask, and the memory the job's cgroup (v2 or v1: Slurm, systemd,
 * containers) leaves beside what the kernel calls available. Internal to
 * the library; never fails, never prints.
 */
#ifndef OOC_JOBLIMITS_H
#define OOC_JOBLIMITS_H

#include <stdint.h>

/* No limit (a cgroup's "max", or none found). */
#define OOC_LIMIT_NONE UINT64_MAX

/* Room for a source's description ("cgroup v2 memory.max at PATH", PATH
 * cut after 260 bytes). */
#define OOC_LIMITS_SOURCE_LEN 320

typedef struct {
    int cpus;                 /* ooc_limit_cpus() */
    uint64_t phys_total;      /* RAM: MemTotal (else sysconf), bytes; 0 unknown */
    uint64_t phys_available;  /* RAM: MemAvailable (else sysconf's free pages), bytes; 0 unknown */
    int cgroup;               /* the memory controller's hierarchy found: 2, 1, or 0 (none) */
    uint64_t cg_limit;        /* the least memory limit of the cgroup and its ancestors (OOC_LIMIT_NONE: none) */
    uint64_t cg_available;    /* the least limit - usage among them (OOC_LIMIT_NONE: no limit) */
    uint64_t cg_usage;        /* the usage that went into cg_available (its cgroup's) */
    uint64_t mem_limit;       /* min(phys_total, cg_limit): what this job may ever hold */
    uint64_t mem_available;   /* min(phys_available, cg_available): what it may take now */
    char limit_source[OOC_LIMITS_SOURCE_LEN];     /* what decided mem_limit */
    char available_source[OOC_LIMITS_SOURCE_LEN]; /* what decided mem_available */
} ooc_limits_t;

/* CPUs in this thread's affinity mask (taskset, Slurm's CPU binding,
 * cpusets), else the online CPUs; at least 1. */
int ooc_limit_cpus(void);

/* Every limit, reading /proc and the cgroup file systems under `root`
 * ("" for the real ones; a directory holding proc/self/cgroup,
 * proc/self/mountinfo, proc/meminfo and the mount points named there, for
 * tests). Whatever cannot be read or parsed is left out, down to physical
 * memory from sysconf; the sources say what decided. */
void ooc_limits_probe(const char *root, ooc_limits_t *out);

/* ooc_limits_probe with root $OOC_LIMITS_ROOT (a test hook), else "". */
void ooc_limits_get(ooc_limits_t *out);

/* The default pinned staging budget of each of `devices` devices (gemm.c,
 * when OOC_PARAM_HOST_MEM is automatic): an eighth of the memory the job
 * may hold (lim->mem_limit), at most half of what it may take now
 * (lim->mem_available), shared among the devices' rings; at least
 * OOC_STAGING_MIN (a plan needs some), at most OOC_STAGING_MAX each. */
#define OOC_STAGING_MIN ((uint64_t)16 << 20)
#define OOC_STAGING_MAX ((uint64_t)4 << 30)
uint64_t ooc_limits_staging_budget(const ooc_limits_t *lim, int devices);

/* ooc_limits_get's mem_available and mem_limit. */
uint64_t ooc_limit_mem_available(void);
uint64_t ooc_limit_mem_total(void);

#endif
