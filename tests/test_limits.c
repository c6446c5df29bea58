/* SPDX-License-Identifier: MIT */
/*
 * test_limits.c: the job's limits (lib/joblimits.c) and the defaults drawn
 * from them. Fake /proc and cgroup trees in a mkdtemp directory (cgroup v2
 * and v1, Slurm's nesting, memory.high, page cache, missing and malformed
 * files, a mount at an odd path, a container's view) give exact numbers;
 * the CPU count is checked against the real affinity mask, narrowed to one
 * CPU and restored; with OOC_LIMITS_ROOT on a fake 256 MiB cgroup, the
 * staging budget, the host backend's memory and the staging threads follow.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <CUnit/Basic.h>

#include "handle.h"
#include "joblimits.h"
#include "testutil.h"

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)
#define V1_NONE "9223372036854771712\n" /* LONG_MAX rounded down to a page: v1's "no limit" */

/* mountinfo lines as a cgroup v2 system and a hybrid (v1 memory) one have them */
#define MI_ROOTFS "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
#define MI_PROC "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
#define MI_V2 "30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
#define MI_V1_CPU "33 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
#define MI_V1_MEM "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:11 - cgroup cgroup rw,memory\n"
#define MI_V1_UNIFIED "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:6 - cgroup2 cgroup2 rw\n"

static const char *tree; /* the current fake root (tu_tree) */

/* "%llu\n" of a byte count, for the value files */
static const char *num(uint64_t v)
{
    static char buf[8][32];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%llu\n", (unsigned long long)v);
    return p;
}

/* 16 GiB of RAM, 8 GiB available */
static void put_meminfo(void)
{
    tu_put("/proc/meminfo", "MemTotal:       16777216 kB\n"
                         "MemFree:         1048576 kB\n"
                         "MemAvailable:    8388608 kB\n"
                         "Buffers:           12345 kB\n");
}

/* a v2 cgroup dir (under /sys/fs/cgroup) with memory.max, .high, .current */
static void put_v2(const char *dir, const char *max, const char *high, uint64_t current)
{
    char rel[512];
    if (max) {
        snprintf(rel, sizeof rel, "/sys/fs/cgroup%s/memory.max", dir);
        tu_put(rel, max);
    }
    if (high) {
        snprintf(rel, sizeof rel, "/sys/fs/cgroup%s/memory.high", dir);
        tu_put(rel, high);
    }
    snprintf(rel, sizeof rel, "/sys/fs/cgroup%s/memory.current", dir);
    tu_put(rel, num(current));
}

static ooc_limits_t probe(void)
{
    ooc_limits_t L;
    memset(&L, 0x5a, sizeof L);
    ooc_limits_probe(tree, &L);
    return L;
}

/* a typical cgroup v2 job: 0::/job_1/step_0 under /sys/fs/cgroup */
static void v2_job(void)
{
    put_meminfo();
    tu_put("/proc/self/cgroup", "0::/job_1/step_0\n");
    tu_put("/proc/self/mountinfo", MI_ROOTFS MI_PROC MI_V2);
}

/* ---------- cgroup v2 ---------- */

/* A v2 job (0::/job_1/step_0, 16 GiB of RAM, 8 GiB available) with these
 * memory.max, memory.high (NULL: no file) and memory.current on job_1 and
 * on step_0, and what must come out. */
typedef struct {
    const char *name;
    const char *job_max, *job_high;
    uint64_t job_current;
    const char *step_max, *step_high;
    uint64_t step_current;
    uint64_t limit, avail, usage;
    const char *limit_source, *avail_source;
} v2_case_t;

#define AT_JOB "cgroup v2 memory.max at /sys/fs/cgroup/job_1"
#define AT_STEP "cgroup v2 memory.max at /sys/fs/cgroup/job_1/step_0"
#define PHYS_TOTAL "physical memory (/proc/meminfo MemTotal)"
#define PHYS_AVAIL "physical memory (/proc/meminfo MemAvailable)"

static const v2_case_t v2_cases[] = {
    {"a limit on the parent only", "1073741824\n", "max\n", 100 * MiB, "max\n", "max\n", 50 * MiB, 1 * GiB, 924 * MiB,
     100 * MiB, AT_JOB, AT_JOB},
    {"the leaf's limit tighter than the parent's", "1073741824\n", "max\n", 100 * MiB, "268435456\n", "max\n",
     50 * MiB, 256 * MiB, 206 * MiB, 50 * MiB, AT_STEP, AT_STEP},
    /* a parent whose other children use most of its room: its room decides,
     * though its limit is the larger */
    {"the parent's room tighter than the leaf's limit", "1073741824\n", "max\n", 900 * MiB, "536870912\n", "max\n",
     10 * MiB, 512 * MiB, 124 * MiB, 900 * MiB, AT_STEP, AT_JOB},
    {"max everywhere", "max\n", "max\n", 100 * MiB, "max\n", "max\n", 50 * MiB, 16 * GiB, 8 * GiB, 0, PHYS_TOTAL,
     PHYS_AVAIL},
    {"a limit above the RAM", "68719476736\n", "max\n", 1 * GiB, NULL, NULL, 0, 16 * GiB, 8 * GiB, 1 * GiB,
     PHYS_TOTAL, PHYS_AVAIL},
    {"memory.high tighter than memory.max", "2147483648\n", "536870912\n", 12 * MiB, "max\n", "max\n", 4 * MiB,
     512 * MiB, 500 * MiB, 12 * MiB, "cgroup v2 memory.high at /sys/fs/cgroup/job_1",
     "cgroup v2 memory.high at /sys/fs/cgroup/job_1"},
    /* usage over the limit (memory.high is soft): no room, not an underflow */
    {"usage over the limit", "1073741824\n", "134217728\n", 200 * MiB, NULL, NULL, 0, 128 * MiB, 0, 200 * MiB,
     "cgroup v2 memory.high at /sys/fs/cgroup/job_1", "cgroup v2 memory.high at /sys/fs/cgroup/job_1"},
};

static void test_v2_cases(void)
{
    for (size_t i = 0; i < sizeof v2_cases / sizeof v2_cases[0]; i++) {
        const v2_case_t *c = &v2_cases[i];
        char name[32];
        snprintf(name, sizeof name, "v2_case_%zu", i);
        tree = tu_tree(name);
        v2_job();
        put_v2("/job_1", c->job_max, c->job_high, c->job_current);
        if (c->step_max) put_v2("/job_1/step_0", c->step_max, c->step_high, c->step_current);
        ooc_limits_t L = probe();
        int ok = L.cgroup == 2 && L.phys_total == 16 * GiB && L.phys_available == 8 * GiB && L.mem_limit == c->limit &&
                 L.mem_available == c->avail && L.cg_usage == c->usage &&
                 strcmp(L.limit_source, c->limit_source) == 0 && strcmp(L.available_source, c->avail_source) == 0;
        if (!ok)
            printf("\n    v2 case \"%s\": limit %llu (%s), available %llu (%s), usage %llu\n", c->name,
                   (unsigned long long)L.mem_limit, L.limit_source, (unsigned long long)L.mem_available,
                   L.available_source, (unsigned long long)L.cg_usage);
        CU_ASSERT(ok);
    }
}

/* No limit anywhere: the cgroup says so. */
static void test_v2_no_limit(void)
{
    tree = tu_tree("v2_max");
    v2_job();
    put_v2("/job_1", "max\n", "max\n", 100 * MiB);
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.cgroup, 2);
    CU_ASSERT_EQUAL(L.cg_limit, OOC_LIMIT_NONE);
    CU_ASSERT_EQUAL(L.cg_available, OOC_LIMIT_NONE);
}

/* Page cache the kernel would drop (inactive_file) is not counted as used. */
static void test_v2_page_cache(void)
{
    tree = tu_tree("v2_cache");
    v2_job();
    put_v2("/job_1", num(1 * GiB), NULL, 300 * MiB);
    tu_put("/sys/fs/cgroup/job_1/memory.stat", "anon 1234\nfile 999\nactive_anon 5\ninactive_file 104857600\n"
                                            "active_file 7\n");
    put_v2("/job_1/step_0", "max\n", NULL, 300 * MiB);
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.cg_usage, 200 * MiB);
    CU_ASSERT_EQUAL(L.mem_available, 824 * MiB);
}

/* Slurm (cgroup/v2): job_N/step_M/user/task_K below slurmstepd.scope; the
 * limit is on the job. */
static void test_v2_slurm(void)
{
    tree = tu_tree("v2_slurm");
    put_meminfo();
    tu_put("/proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n");
    tu_put("/proc/self/mountinfo", MI_ROOTFS MI_V2 MI_PROC);
    put_v2("/system.slice", "max\n", "max\n", 3 * GiB);
    put_v2("/system.slice/slurmstepd.scope", "max\n", "max\n", 3 * GiB);
    put_v2("/system.slice/slurmstepd.scope/job_42", num(2 * GiB), "max\n", 768 * MiB);
    put_v2("/system.slice/slurmstepd.scope/job_42/step_0", "max\n", "max\n", 700 * MiB);
    put_v2("/system.slice/slurmstepd.scope/job_42/step_0/user", "max\n", "max\n", 700 * MiB);
    put_v2("/system.slice/slurmstepd.scope/job_42/step_0/user/task_0", "max\n", "max\n", 700 * MiB);
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.mem_limit, 2 * GiB);
    CU_ASSERT_EQUAL(L.mem_available, 1280 * MiB);
    CU_ASSERT_STRING_EQUAL(L.available_source,
                           "cgroup v2 memory.max at /sys/fs/cgroup/system.slice/slurmstepd.scope/job_42");
}

/* cgroup2 mounted at an unusual path, with a space (mountinfo's \040), after
 * a tmpfs at the usual one; nothing is read above the mount point. */
static void test_v2_odd_mount(void)
{
    tree = tu_tree("v2_mount");
    put_meminfo();
    tu_put("/proc/self/cgroup", "0::/batch/job_7\n");
    tu_put("/proc/self/mountinfo", MI_ROOTFS "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                                          "47 22 0:40 / /run/my\\040cgroups rw,relatime shared:30 - cgroup2 none rw\n");
    tu_put("/run/my cgroups/batch/job_7/memory.max", num(3 * GiB));
    tu_put("/run/my cgroups/batch/job_7/memory.current", num(1 * GiB));
    tu_put("/run/memory.max", num(1 * MiB)); /* above the mount: never read */
    tu_put("/sys/fs/cgroup/batch/job_7/memory.max", num(2 * MiB)); /* not the cgroup2 mount */
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.cgroup, 2);
    CU_ASSERT_EQUAL(L.mem_limit, 3 * GiB);
    CU_ASSERT_EQUAL(L.mem_available, 2 * GiB);
    CU_ASSERT_STRING_EQUAL(L.available_source, "cgroup v2 memory.max at /run/my cgroups/batch/job_7");
}

/* A container's view: the mount shows the subtree /docker/abc (mountinfo's
 * root field), which is the top of the mount point. */
static void test_v2_container(void)
{
    tree = tu_tree("v2_container");
    put_meminfo();
    tu_put("/proc/self/cgroup", "0::/docker/abc\n");
    tu_put("/proc/self/mountinfo", MI_ROOTFS
        "30 25 0:26 /docker/abc /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw\n");
    tu_put("/sys/fs/cgroup/memory.max", num(4 * GiB));
    tu_put("/sys/fs/cgroup/memory.current", num(1 * GiB));
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.mem_available, 3 * GiB);
    CU_ASSERT_STRING_EQUAL(L.available_source, "cgroup v2 memory.max at /sys/fs/cgroup");
}

/* ---------- cgroup v1 ---------- */

/* a hybrid system as Slurm's cgroup/v1 sets it up: memory on v1 */
static void v1_job(void)
{
    put_meminfo();
    tu_put("/proc/self/cgroup", "12:pids:/slurm/uid_1000/job_5/step_0/task_0\n"
                             "5:cpu,cpuacct:/slurm/uid_1000/job_5/step_0/task_0\n"
                             "4:memory:/slurm/uid_1000/job_5/step_0/task_0\n"
                             "1:name=systemd:/user.slice\n"
                             "0::/user.slice\n");
    tu_put("/proc/self/mountinfo", MI_ROOTFS MI_PROC MI_V1_CPU MI_V1_MEM MI_V1_UNIFIED);
    tu_put("/sys/fs/cgroup/unified/user.slice/memory.max", num(1 * MiB)); /* v2 without memory: never read */
}

static void put_v1(const char *dir, const char *limit, uint64_t usage)
{
    char rel[512];
    snprintf(rel, sizeof rel, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", dir);
    tu_put(rel, limit);
    snprintf(rel, sizeof rel, "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", dir);
    tu_put(rel, num(usage));
}

static void test_v1_limit(void)
{
    tree = tu_tree("v1_limit");
    v1_job();
    put_v1("", V1_NONE, 5 * GiB);
    put_v1("/slurm", V1_NONE, 5 * GiB);
    put_v1("/slurm/uid_1000", V1_NONE, 5 * GiB);
    put_v1("/slurm/uid_1000/job_5", num(2 * GiB), 612 * MiB);
    tu_put("/sys/fs/cgroup/memory/slurm/uid_1000/job_5/memory.stat",
        "cache 104857600\nrss 1\ninactive_file 5\ntotal_cache 104857600\ntotal_inactive_file 104857600\n");
    put_v1("/slurm/uid_1000/job_5/step_0", num(3 * GiB), 600 * MiB);
    put_v1("/slurm/uid_1000/job_5/step_0/task_0", V1_NONE, 600 * MiB);
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.cgroup, 1);
    CU_ASSERT_EQUAL(L.cg_limit, 2 * GiB);
    CU_ASSERT_EQUAL(L.cg_usage, 512 * MiB);
    CU_ASSERT_EQUAL(L.mem_limit, 2 * GiB);
    CU_ASSERT_EQUAL(L.mem_available, 1536 * MiB);
    CU_ASSERT_STRING_EQUAL(L.limit_source, "cgroup v1 memory.limit_in_bytes at /sys/fs/cgroup/memory/slurm/uid_1000/job_5");
    CU_ASSERT_STRING_EQUAL(L.available_source,
                           "cgroup v1 memory.limit_in_bytes at /sys/fs/cgroup/memory/slurm/uid_1000/job_5");
}

/* v1's "no limit": the page-rounded LONG_MAX, or anything from 2^62 up */
static void test_v1_no_limit(void)
{
    tree = tu_tree("v1_none");
    v1_job();
    put_v1("/slurm/uid_1000/job_5", "4611686018427387904\n", 600 * MiB);
    put_v1("/slurm/uid_1000/job_5/step_0", V1_NONE, 600 * MiB);
    put_v1("/slurm/uid_1000/job_5/step_0/task_0", "9223372036854775807\n", 600 * MiB);
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.cgroup, 1);
    CU_ASSERT_EQUAL(L.cg_limit, OOC_LIMIT_NONE);
    CU_ASSERT_EQUAL(L.mem_limit, 16 * GiB);
    CU_ASSERT_EQUAL(L.mem_available, 8 * GiB);
    CU_ASSERT_STRING_EQUAL(L.available_source, "physical memory (/proc/meminfo MemAvailable)");
}

/* A v1 memory line whose hierarchy is not mounted: v2 decides. */
static void test_v1_unmounted(void)
{
    tree = tu_tree("v1_unmounted");
    put_meminfo();
    tu_put("/proc/self/cgroup", "4:memory:/job_9\n0::/job_9\n");
    tu_put("/proc/self/mountinfo", MI_ROOTFS MI_V2);
    put_v2("/job_9", num(1 * GiB), NULL, 24 * MiB);
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.cgroup, 2);
    CU_ASSERT_EQUAL(L.mem_available, 1000 * MiB);
}

/* ---------- missing and malformed ---------- */

static void test_missing(void)
{
    /* nothing at all: sysconf's physical memory */
    tree = tu_tree("empty");
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.cgroup, 0);
    CU_ASSERT(L.phys_total > 0 && L.mem_limit == L.phys_total);
    CU_ASSERT(L.mem_available > 0 && L.mem_available <= L.mem_limit);
    CU_ASSERT_STRING_EQUAL(L.limit_source, "physical memory (sysconf)");
    CU_ASSERT_STRING_EQUAL(L.available_source, "physical memory (sysconf)");

    /* no /proc/self/cgroup */
    tree = tu_tree("no_cgroup");
    put_meminfo();
    tu_put("/proc/self/mountinfo", MI_ROOTFS MI_V2);
    put_v2("", num(1 * GiB), NULL, 0);
    L = probe();
    CU_ASSERT_EQUAL(L.cgroup, 0);
    CU_ASSERT_EQUAL(L.mem_available, 8 * GiB);

    /* no mountinfo */
    tree = tu_tree("no_mountinfo");
    put_meminfo();
    tu_put("/proc/self/cgroup", "0::/job_1\n");
    put_v2("/job_1", num(1 * GiB), NULL, 0);
    L = probe();
    CU_ASSERT_EQUAL(L.cgroup, 0);
    CU_ASSERT_EQUAL(L.mem_limit, 16 * GiB);
    CU_ASSERT_EQUAL(L.mem_available, 8 * GiB);

    /* no files in the cgroup's own directory (or no directory): its
     * parent's limit still counts */
    tree = tu_tree("no_leaf_files");
    v2_job();
    put_v2("/job_1", num(1 * GiB), NULL, 100 * MiB);
    L = probe();
    CU_ASSERT_EQUAL(L.mem_available, 924 * MiB);
    CU_ASSERT_STRING_EQUAL(L.available_source, "cgroup v2 memory.max at /sys/fs/cgroup/job_1");

    /* a limit without a usage to read: the usage of the cgroup below */
    tree = tu_tree("no_current");
    v2_job();
    tu_put("/sys/fs/cgroup/job_1/memory.max", num(1 * GiB));
    put_v2("/job_1/step_0", NULL, NULL, 50 * MiB);
    L = probe();
    CU_ASSERT_EQUAL(L.mem_available, 974 * MiB);

    /* a cgroup but no meminfo: the cgroup against sysconf's RAM */
    tree = tu_tree("no_meminfo");
    tu_put("/proc/self/cgroup", "0::/job_1\n");
    tu_put("/proc/self/mountinfo", MI_V2);
    put_v2("/job_1", num(64 * MiB), NULL, 0);
    L = probe();
    CU_ASSERT_EQUAL(L.mem_limit, 64 * MiB);
    CU_ASSERT_EQUAL(L.mem_available, 64 * MiB);
    CU_ASSERT_STRING_EQUAL(L.available_source, "cgroup v2 memory.max at /sys/fs/cgroup/job_1");
}

static void test_malformed(void)
{
    static const char *bad[] = {"12abc\n", "\n", "", "-5\n", "1e9\n", "0x100000\n", "99999999999999999999999\n",
                                "max max\n", "12 34\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad_%zu", i);
        /* alone: as if there were no limit */
        tree = tu_tree(name);
        v2_job();
        put_v2("/job_1", bad[i], NULL, 10 * MiB);
        ooc_limits_t L = probe();
        CU_ASSERT_EQUAL(L.cg_limit, OOC_LIMIT_NONE);
        CU_ASSERT_EQUAL(L.mem_available, 8 * GiB);
        /* below a good parent: the parent decides */
        put_v2("/job_1/step_0", bad[i], bad[i], 10 * MiB);
        put_v2("", num(1 * GiB), NULL, 24 * MiB);
        L = probe();
        CU_ASSERT_EQUAL(L.mem_available, 1000 * MiB);
        CU_ASSERT_STRING_EQUAL(L.available_source, "cgroup v2 memory.max at /sys/fs/cgroup");
    }

    /* a malformed usage: the one below it */
    tree = tu_tree("bad_current");
    v2_job();
    tu_put("/sys/fs/cgroup/job_1/memory.max", num(1 * GiB));
    tu_put("/sys/fs/cgroup/job_1/memory.current", "lots\n");
    put_v2("/job_1/step_0", NULL, NULL, 50 * MiB);
    ooc_limits_t L = probe();
    CU_ASSERT_EQUAL(L.mem_available, 974 * MiB);

    /* a malformed memory.stat: the usage as it is */
    tree = tu_tree("bad_stat");
    v2_job();
    put_v2("/job_1", num(1 * GiB), NULL, 300 * MiB);
    tu_put("/sys/fs/cgroup/job_1/memory.stat", "inactive_file many\n");
    L = probe();
    CU_ASSERT_EQUAL(L.mem_available, 724 * MiB);

    /* garbage in /proc/self/cgroup and mountinfo: no cgroup */
    tree = tu_tree("bad_proc");
    put_meminfo();
    tu_put("/proc/self/cgroup", "garbage\n0:\n::\n0::relative/path\n");
    tu_put("/proc/self/mountinfo", "nonsense\n30 25 0:26 / /sys/fs/cgroup\n- cgroup2\n");
    put_v2("", num(1 * GiB), NULL, 0);
    L = probe();
    CU_ASSERT_EQUAL(L.cgroup, 0);
    CU_ASSERT_EQUAL(L.mem_available, 8 * GiB);

    /* a malformed MemAvailable: sysconf's; MemTotal still read */
    tree = tu_tree("bad_meminfo");
    tu_put("/proc/meminfo", "MemTotal:       16777216 kB\nMemAvailable:   lots kB\n");
    L = probe();
    CU_ASSERT_EQUAL(L.mem_limit, 16 * GiB);
    CU_ASSERT_STRING_EQUAL(L.limit_source, "physical memory (/proc/meminfo MemTotal)");
    CU_ASSERT_STRING_EQUAL(L.available_source, "physical memory (sysconf)");
}

/* ---------- CPUs ---------- */

static int mask_count(cpu_set_t *set)
{
    CPU_ZERO(set);
    CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof *set, set), 0);
    return CPU_COUNT(set);
}

static void test_cpus(void)
{
    cpu_set_t saved, one;
    int n = mask_count(&saved);
    CU_ASSERT(n >= 1);
    CU_ASSERT_EQUAL(ooc_limit_cpus(), n);
    ooc_limits_t L;
    ooc_limits_probe("", &L);
    CU_ASSERT_EQUAL(L.cpus, n);

    int first = 0;
    while (!CPU_ISSET(first, &saved)) first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CU_ASSERT_EQUAL_FATAL(sched_setaffinity(0, sizeof one, &one), 0);
    CU_ASSERT_EQUAL(ooc_limit_cpus(), 1);
    CU_ASSERT_EQUAL_FATAL(sched_setaffinity(0, sizeof saved, &saved), 0);
    CU_ASSERT_EQUAL(ooc_limit_cpus(), n);
}

/* ---------- the defaults drawn from them ---------- */

static void test_staging_budget(void)
{
    ooc_limits_t L;
    memset(&L, 0, sizeof L);
    L.mem_limit = 256 * MiB, L.mem_available = 240 * MiB; /* an eighth of the limit */
    CU_ASSERT_EQUAL(ooc_limits_staging_budget(&L, 1), 32 * MiB);
    CU_ASSERT_EQUAL(ooc_limits_staging_budget(&L, 2), 16 * MiB);
    CU_ASSERT_EQUAL(ooc_limits_staging_budget(&L, 4), OOC_STAGING_MIN);
    L.mem_limit = 1 * GiB, L.mem_available = 40 * MiB; /* half of what is available */
    CU_ASSERT_EQUAL(ooc_limits_staging_budget(&L, 1), 20 * MiB);
    L.mem_limit = 1024 * GiB, L.mem_available = 1000 * GiB; /* capped */
    CU_ASSERT_EQUAL(ooc_limits_staging_budget(&L, 1), OOC_STAGING_MAX);
    CU_ASSERT_EQUAL(ooc_limits_staging_budget(&L, 8), 4 * GiB);
    CU_ASSERT_EQUAL(ooc_limits_staging_budget(&L, 0), OOC_STAGING_MAX);
}

/* Plan a large pageable multiply on the host backend under the fake root:
 * the plan's pinned staging bytes. */
static uint64_t planned_host_bytes(ooc_handle_t *h)
{
    static const double one = 1.0, zero = 0.0;
    ooc_problem_t p;
    memset(&p, 0, sizeof p);
    p.dtype = OOC_R64;
    p.layout = OOC_COL_MAJOR;
    p.ta = p.tb = OOC_OP_N;
    p.m = 65536, p.n = 4096, p.k = 4096;
    p.alpha = &one, p.beta = &zero, p.beta_zero = 1;
    ooc_src_t pageable = {NULL, -1, 0, "X", 65536, 0};
    p.A = p.B = p.C = p.c_in = pageable;
    ooc_plan_t plan;
    ooc_status_t st = ooc_api_plan(h, &p, NULL, 1, &plan);
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    if (st != OOC_SUCCESS) printf("\n    ooc_api_plan: %s\n", ooc_last_error(h));
    return st == OOC_SUCCESS ? plan.host_bytes : UINT64_MAX;
}

/* a cgroup v2 job limited to 256 MiB, 16 MiB in use, on a 64 GiB machine */
static void put_256m_job(void)
{
    tu_put("/proc/meminfo", "MemTotal:       67108864 kB\nMemAvailable:   33554432 kB\n");
    tu_put("/proc/self/cgroup", "0::/job_256m\n");
    tu_put("/proc/self/mountinfo", MI_ROOTFS MI_V2);
    put_v2("/job_256m", num(256 * MiB), "max\n", 16 * MiB);
}

static void test_budget_follows_cgroup(void)
{
    ooc_handle_t *h = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_HOST), OOC_SUCCESS);
    /* every budget automatic: the host backend's simulated device keeps a
     * margin in proportion to a small cgroup, not a GPU's 256 MiB */
    CU_ASSERT_EQUAL_FATAL(ooc_handle_backend(h), OOC_SUCCESS);

    /* no limit, 64 GiB: the plan takes more than 32 MiB of staging */
    tree = tu_tree("budget_free");
    tu_put("/proc/meminfo", "MemTotal:       67108864 kB\nMemAvailable:   33554432 kB\n");
    CU_ASSERT_EQUAL_FATAL(setenv("OOC_LIMITS_ROOT", tree, 1), 0);
    uint64_t free_bytes = planned_host_bytes(h);
    CU_ASSERT(free_bytes > 32 * MiB && free_bytes != UINT64_MAX);

    /* 256 MiB: at most an eighth of it */
    tree = tu_tree("budget_256m");
    put_256m_job();
    CU_ASSERT_EQUAL_FATAL(setenv("OOC_LIMITS_ROOT", tree, 1), 0);
    CU_ASSERT_EQUAL(ooc_limit_mem_available(), 240 * MiB);
    CU_ASSERT_EQUAL(ooc_limit_mem_total(), 256 * MiB);
    uint64_t limited = planned_host_bytes(h);
    CU_ASSERT(limited <= 32 * MiB && limited > 0);
    CU_ASSERT(limited <= 256 * MiB);

    /* the host backend's simulated device: the cgroup's memory, half of its room free */
    size_t fb = 0, tb = 0;
    ooc_err_t err;
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(h->dev[0].be->ops->mem_info(h->dev[0].be, &fb, &tb, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(tb, 256 * MiB);
    CU_ASSERT_EQUAL(fb, 120 * MiB);

    /* a real multiply within it: right, and within the budget */
    int64_t m = 3000, n = 300, k = 700;
    double *A = malloc(sizeof(double) * (size_t)(m * k)), *B = malloc(sizeof(double) * (size_t)(k * n));
    double *C = malloc(sizeof(double) * (size_t)(m * n)), *C0 = malloc(sizeof(double) * (size_t)(m * n));
    CU_ASSERT_FATAL(A && B && C && C0);
    uint64_t seed = 7;
    tu_fill(OOC_R64, A, (size_t)(m * k), &seed);
    tu_fill(OOC_R64, B, (size_t)(k * n), &seed);
    tu_fill(OOC_R64, C, (size_t)(m * n), &seed);
    memcpy(C0, C, sizeof(double) * (size_t)(m * n));
    double alpha = 1.5, beta = -0.5, worst = 0;
    CU_ASSERT_EQUAL(ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, alpha, A, m, B, k, beta, C, m),
                    OOC_SUCCESS);
    CU_ASSERT_EQUAL(tu_check(OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, &alpha, A, m, B, k, &beta, C0, C,
                             m, &worst),
                    0);
    ooc_stats_t s;
    CU_ASSERT_EQUAL(ooc_get_stats(h, &s), OOC_SUCCESS);
    CU_ASSERT(s.staged_a && s.staged_c);
    CU_ASSERT(s.host_bytes > 0 && s.host_bytes <= 32 * MiB);

    /* an explicit budget still wins */
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_HOST_MEM, (int64_t)(200 * MiB)), OOC_SUCCESS);
    CU_ASSERT(planned_host_bytes(h) > 32 * MiB);

    CU_ASSERT_EQUAL(unsetenv("OOC_LIMITS_ROOT"), 0);
    free(A);
    free(B);
    free(C);
    free(C0);
    ooc_destroy(h);
}

/* The staging threads: one per CPU of the affinity mask (the submitting
 * thread and threads - 1 helpers). */
static void test_threads_follow_affinity(void)
{
    cpu_set_t saved, one;
    mask_count(&saved);
    int first = 0;
    while (!CPU_ISSET(first, &saved)) first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CU_ASSERT_EQUAL_FATAL(sched_setaffinity(0, sizeof one, &one), 0);

    ooc_handle_t *h = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_create(&h), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_set(h, OOC_PARAM_BACKEND, OOC_BACKEND_HOST), OOC_SUCCESS);
    int64_t m = 200, n = 50, k = 30;
    double *A = calloc((size_t)(m * k), sizeof(double)), *B = calloc((size_t)(k * n), sizeof(double));
    double *C = calloc((size_t)(m * n), sizeof(double));
    CU_ASSERT_FATAL(A && B && C);
    ooc_status_t st = ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, 1.0, A, m, B, k, 0.0, C, m);
    CU_ASSERT_EQUAL(st, OOC_SUCCESS);
    if (st == OOC_SUCCESS && h->pool != NULL) CU_ASSERT_EQUAL(ooc_pool_threads(h->pool), 0);
    CU_ASSERT_EQUAL_FATAL(sched_setaffinity(0, sizeof saved, &saved), 0);
    free(A);
    free(B);
    free(C);
    ooc_destroy(h);
}

static int suite_init(void) { return tu_dir_make("limits"); }
static int suite_clean(void) { return tu_dir_remove(); }

int main(void)
{
    unsetenv("OOC_LIMITS_ROOT");
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("limits", suite_init, suite_clean);
    CU_add_test(s, "v2: parent, leaf, room, max, above the RAM, memory.high, over the limit", test_v2_cases);
    CU_add_test(s, "v2: no limit anywhere", test_v2_no_limit);
    CU_add_test(s, "v2: inactive page cache is room", test_v2_page_cache);
    CU_add_test(s, "v2: Slurm's nesting", test_v2_slurm);
    CU_add_test(s, "v2: mounted at an odd path", test_v2_odd_mount);
    CU_add_test(s, "v2: a container's view of its subtree", test_v2_container);
    CU_add_test(s, "v1: a limit on the job", test_v1_limit);
    CU_add_test(s, "v1: the no-limit sentinels", test_v1_no_limit);
    CU_add_test(s, "v1: memory line but no v1 mount", test_v1_unmounted);
    CU_add_test(s, "missing files", test_missing);
    CU_add_test(s, "malformed files", test_malformed);
    CU_add_test(s, "CPUs of the affinity mask", test_cpus);
    CU_add_test(s, "staging budget from the limits", test_staging_budget);
    CU_add_test(s, "the planner's staging follows a 256 MiB cgroup", test_budget_follows_cgroup);
    CU_add_test(s, "staging threads follow the affinity mask", test_threads_follow_affinity);
    return tu_run();
}
