/* SPDX-License-Identifier: MIT */
/*
 * test_numa.c: a GPU's NUMA node and CPUs from sysfs, and the staging kept
 * there (lib/numa.c, the staging pool in lib/stage.c). Fake sysfs trees in
 * a mkdtemp directory give exact answers: CPU and node lists, a device's
 * numa_node in any case of its bus id, missing and malformed files. The
 * node's CPUs are made of the real affinity mask, so binding a thread (and
 * the pool's helpers) is checked against the kernel's own answer. mbind is
 * checked on real memory with get_mempolicy, on the first node this process
 * may take memory from. The GPU end (the module's ring on the node) is in test_gemm.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "numa.h"
#include "stage.h"
#include "testutil.h"

#define BITS 8192
#define WORDS (BITS / (8 * sizeof(unsigned long)))

static const char *tree; /* the current fake root (tu_tree) */

static int has(const unsigned long *mask, size_t c)
{
    return (mask[c / (8 * sizeof *mask)] >> (c % (8 * sizeof *mask))) & 1;
}

/* the CPUs this thread may run on, in order */
static int allowed(int *cpu, int cap)
{
    cpu_set_t set;
    CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof set, &set), 0);
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
        if (CPU_ISSET(c, &set)) cpu[n++] = c;
    return n;
}

static void test_parse_list(void)
{
    unsigned long m[WORDS];
    CU_ASSERT_EQUAL(ooc_numa_parse_list("0-3,8,10-11", m, BITS), 7);
    for (int c = 0; c < 16; c++) CU_ASSERT_EQUAL(has(m, (size_t)c), c <= 3 || c == 8 || c == 10 || c == 11);
    CU_ASSERT_EQUAL(ooc_numa_parse_list("5", m, BITS), 1); /* cleared first */
    CU_ASSERT(has(m, 5) && !has(m, 0) && !has(m, 8));
    CU_ASSERT_EQUAL(ooc_numa_parse_list("64-65,127,8191", m, BITS), 4);
    CU_ASSERT(has(m, 64) && has(m, 65) && has(m, 127) && has(m, 8191) && !has(m, 63) && !has(m, 128));
    CU_ASSERT_EQUAL(ooc_numa_parse_list("2,2,1-3", m, BITS), 3); /* counted once */
    CU_ASSERT_EQUAL(ooc_numa_parse_list("", m, BITS), 0);
    const char *bad[] = {"3-1", "0-", "-1", "a", "1,,2", "1,", "1 2", "8192", "0-8192", "1-2-3", " 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(ooc_numa_parse_list(bad[i], m, BITS), -1);
        if (ooc_numa_parse_list(bad[i], m, BITS) != -1) fprintf(stderr, "accepted \"%s\"\n", bad[i]);
    }
}

static void test_node_of_pci(void)
{
    tree = tu_tree("pci");
    tu_put("/sys/bus/pci/devices/0000:1b:00.0/numa_node", "1\n");
    tu_put("/sys/bus/pci/devices/0000:3b:00.0/numa_node", "-1\n");
    tu_put("/sys/bus/pci/devices/0000:5b:00.0/numa_node", "x\n");
    tu_put("/sys/bus/pci/devices/0000:6b:00.0/numa_node", "2 3\n");
    tu_put("/sys/bus/pci/devices/0000:7b:00.0/numa_node", "");
    tu_put("/sys/bus/pci/devices/0000:8b:00.0/numa_node", "3");
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, "0000:1B:00.0"), 1); /* CUDA writes capitals */
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, "0000:1b:00.0"), 1);
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, "0000:3B:00.0"), -1);
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, "0000:5B:00.0"), -1);
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, "0000:6B:00.0"), -1);
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, "0000:7B:00.0"), -1);
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, "0000:8B:00.0"), 3); /* no newline */
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, "0000:9B:00.0"), -1); /* none */
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, ""), -1);
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(tree, "../../../bus/pci/devices/0000:1b:00.0"), -1);
    /* the hook: OOC_NUMA_ROOT */
    CU_ASSERT_EQUAL(setenv("OOC_NUMA_ROOT", tree, 1), 0);
    CU_ASSERT_STRING_EQUAL(ooc_numa_root(), tree);
    CU_ASSERT_EQUAL(ooc_numa_node_of_pci(ooc_numa_root(), "0000:1B:00.0"), 1);
    unsetenv("OOC_NUMA_ROOT");
    CU_ASSERT_STRING_EQUAL(ooc_numa_root(), "");
}

/* node 0: the first allowed CPU; node 1: every allowed CPU and one beyond
 * the mask's size; node 2: only a CPU not allowed (if any); node 3: none */
static int cpu_tree(const char *name, int *cpu, int cap)
{
    int n = allowed(cpu, cap);
    CU_ASSERT_FATAL(n >= 1);
    tree = tu_tree(name);
    char list[4096] = "", one[32];
    snprintf(one, sizeof one, "%d\n", cpu[0]);
    tu_put("/sys/devices/system/node/node0/cpulist", one);
    for (int i = 0; i < n; i++) {
        snprintf(one, sizeof one, "%s%d", i ? "," : "", cpu[i]);
        strcat(list, one);
    }
    strcat(list, ",8000\n");
    tu_put("/sys/devices/system/node/node1/cpulist", list);
    int other = 0;
    while (other < n && cpu[other] == other) other++;
    snprintf(one, sizeof one, "%d\n", other < n ? other : cpu[n - 1] + 1);
    tu_put("/sys/devices/system/node/node2/cpulist", one);
    tu_put("/sys/devices/system/node/node3/cpulist", "\n");
    tu_put("/sys/devices/system/node/node4/cpulist", "0-\n");
    return n;
}

static void test_node_cpus(void)
{
    int cpu[1024];
    int n = cpu_tree("cpus", cpu, 1024);
    unsigned long m[WORDS];
    int all = -1;
    CU_ASSERT_EQUAL(ooc_numa_node_cpus(tree, 0, m, BITS, &all), 1);
    CU_ASSERT(has(m, (size_t)cpu[0]));
    CU_ASSERT_EQUAL(all, n == 1);
    CU_ASSERT_EQUAL(ooc_numa_node_cpus(tree, 1, m, BITS, &all), n); /* 8000: not allowed, dropped */
    CU_ASSERT(!has(m, 8000));
    CU_ASSERT_EQUAL(all, 1);
    CU_ASSERT_EQUAL(ooc_numa_node_cpus(tree, 2, m, BITS, &all), 0);
    CU_ASSERT_EQUAL(all, 0);
    CU_ASSERT_EQUAL(ooc_numa_node_cpus(tree, 3, m, BITS, &all), 0);
    CU_ASSERT_EQUAL(ooc_numa_node_cpus(tree, 4, m, BITS, &all), 0);
    CU_ASSERT_EQUAL(ooc_numa_node_cpus(tree, 5, m, BITS, &all), 0); /* no such node */
    CU_ASSERT_EQUAL(ooc_numa_node_cpus(tree, -1, m, BITS, &all), 0);
}

typedef struct {
    int node, rc, after[4], nafter;
} bind_t;

static void *bind_thread(void *arg)
{
    bind_t *b = arg;
    b->rc = ooc_numa_bind_thread(tree, b->node);
    b->nafter = allowed(b->after, 4);
    return NULL;
}

/* bind in a thread of its own, so this one's mask is untouched */
static bind_t bind_in_thread(int node)
{
    bind_t b = {node, -1, {0}, 0};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, bind_thread, &b), 0);
    pthread_join(t, NULL);
    return b;
}

static void test_bind_thread(void)
{
    int cpu[1024];
    int n = cpu_tree("bind", cpu, 1024);
    bind_t b = bind_in_thread(0);
    if (n >= 2) {
        CU_ASSERT_EQUAL(b.rc, 1);
        CU_ASSERT_EQUAL(b.nafter, 1);
        CU_ASSERT_EQUAL(b.after[0], cpu[0]);
    } else {
        CU_ASSERT_EQUAL(b.rc, 0); /* one CPU allowed: it is the node's already */
    }
    for (int node = 1; node <= 5; node++) { /* all of them, none, unreadable, missing */
        b = bind_in_thread(node);
        CU_ASSERT_EQUAL(b.rc, 0);
        CU_ASSERT_EQUAL(b.nafter, n < 4 ? n : 4);
    }
    CU_ASSERT_EQUAL(bind_in_thread(-1).rc, 0);
    int again[1024];
    CU_ASSERT_EQUAL(allowed(again, 1024), n); /* this thread's mask untouched */
}

/* threads of this process whose Cpus_allowed_list is exactly "<cpu>" */
static int tasks_on(int cpu)
{
    DIR *d = opendir("/proc/self/task");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *e;
    int count = 0;
    char want[64];
    snprintf(want, sizeof want, "Cpus_allowed_list:\t%d\n", cpu);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        while (fgets(line, sizeof line, f))
            if (strcmp(line, want) == 0) count++;
        fclose(f);
    }
    closedir(d);
    return count;
}

static void test_pool_bound(void)
{
    int cpu[1024];
    int n = cpu_tree("pool", cpu, 1024);
    CU_ASSERT_EQUAL(setenv("OOC_NUMA_ROOT", tree, 1), 0);
    ooc_pool_t *pool = NULL, *free_pool = NULL;
    ooc_err_t err;
    unsigned long cpus[OOC_NUMA_MASK_WORDS];
    int all = 0;
    (void)ooc_numa_node_cpus(ooc_numa_root(), 0, cpus, OOC_NUMA_MAX_CPUS, &all); /* as the library reads it */
    CU_ASSERT_EQUAL_FATAL(ooc_pool_create(3, 0, all ? NULL : cpus, &pool, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_pool_create(3, -1, NULL, &free_pool, &err), OOC_SUCCESS);
    unsetenv("OOC_NUMA_ROOT");
    CU_ASSERT_EQUAL(ooc_pool_node(pool), 0);
    CU_ASSERT_EQUAL(ooc_pool_node(free_pool), -1);
    CU_ASSERT_EQUAL(ooc_pool_node(NULL), -1);
    /* the helpers bind as they start */
    int want = n >= 2 ? 3 : 0;
    for (int i = 0; i < 2000 && ooc_pool_bound(pool) < want; i++) nanosleep(&(struct timespec){0, 1000000}, NULL);
    CU_ASSERT_EQUAL(ooc_pool_bound(pool), want);
    CU_ASSERT_EQUAL(ooc_pool_bound(free_pool), 0);
    if (n >= 2) CU_ASSERT_EQUAL(tasks_on(cpu[0]), 3);
    /* and still copy right: 8 MiB of lines, some pieces on each helper */
    size_t w = 4096, hgt = 2048, sp = 5000;
    unsigned char *src = malloc(sp * hgt), *dst = malloc(w * hgt);
    CU_ASSERT_FATAL(src && dst);
    for (size_t i = 0; i < sp * hgt; i++) src[i] = (unsigned char)(i * 2654435761u >> 13);
    memset(dst, 0, w * hgt);
    ooc_pool_copy2d(pool, dst, w, src, sp, w, hgt);
    int same = 1;
    for (size_t r = 0; r < hgt; r++) same &= memcmp(dst + r * w, src + r * sp, w) == 0;
    CU_ASSERT(same);
    free(src);
    free(dst);
    ooc_pool_destroy(pool);
    ooc_pool_destroy(free_pool);
}

#ifdef SYS_get_mempolicy
#define MPOL_PREFERRED_ 1
#define MPOL_F_NODE_ 1
#define MPOL_F_ADDR_ 2

static void test_prefer(void)
{
    size_t len = (size_t)4 << 20;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_FATAL(p != MAP_FAILED);
    int want = tu_mem_node(); /* a node this process may take memory from */
    int rc = ooc_numa_prefer(p, len, want);
    if (rc == EPERM || rc == ENOSYS) {
        /* a container's seccomp may forbid mbind: the library then leaves
         * the default placement, which the pipeline tolerates */
        printf("\n  mbind refused here (%s): placement not checked on this host\n", strerror(rc));
        CU_ASSERT_EQUAL(ooc_numa_prefer(p, len, -1), EINVAL);
        munmap(p, len);
        return;
    }
    CU_ASSERT_EQUAL(rc, 0);
    int mode = -1;
    unsigned long nodes[16] = {0};
    CU_ASSERT_EQUAL(syscall(SYS_get_mempolicy, &mode, nodes, 16 * 8 * sizeof(unsigned long), p + len / 2,
                            (unsigned long)MPOL_F_ADDR_), 0);
    CU_ASSERT_EQUAL(mode, MPOL_PREFERRED_);
    if (want < 64) CU_ASSERT_EQUAL(nodes[0], 1UL << want);
    memset(p, 1, len); /* placed now: on that node, which has room */
    int node = -1;
    CU_ASSERT_EQUAL(syscall(SYS_get_mempolicy, &node, NULL, 0UL, p + len - 1, (unsigned long)(MPOL_F_NODE_ | MPOL_F_ADDR_)), 0);
    CU_ASSERT_EQUAL(node, want);
    /* a node the host lacks, and no node */
    CU_ASSERT_EQUAL(ooc_numa_prefer(p, len, 1000), EINVAL);
    CU_ASSERT_EQUAL(ooc_numa_prefer(p, len, 1024), EINVAL);
    CU_ASSERT_EQUAL(ooc_numa_prefer(p, len, -1), EINVAL);
    munmap(p, len);
}
#endif

/* the switch and the launcher's count of this host's processes */
static void test_wanted_local(void)
{
    const char *vars[] = {"OOC_NUMA", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_TASKS_PER_NODE"};
    char *saved[4];
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(vars[i]);
    }
    CU_ASSERT_EQUAL(ooc_numa_wanted(), 1);
    CU_ASSERT_EQUAL(ooc_numa_local_procs(), 1);
    setenv("OOC_NUMA", "0", 1);
    CU_ASSERT_EQUAL(ooc_numa_wanted(), 0);
    setenv("OOC_NUMA", "1", 1);
    CU_ASSERT_EQUAL(ooc_numa_wanted(), 1);
    setenv("SLURM_STEP_TASKS_PER_NODE", "3(x2),1", 1);
    CU_ASSERT_EQUAL(ooc_numa_local_procs(), 3);
    setenv("MPI_LOCALNRANKS", "2", 1);
    CU_ASSERT_EQUAL(ooc_numa_local_procs(), 2);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
    CU_ASSERT_EQUAL(ooc_numa_local_procs(), 4);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "x", 1);
    CU_ASSERT_EQUAL(ooc_numa_local_procs(), 2); /* malformed: the next that says */
    for (int i = 0; i < 4; i++) {
        if (saved[i]) setenv(vars[i], saved[i], 1);
        else unsetenv(vars[i]);
        free(saved[i]);
    }
}

static int suite_init(void) { return tu_dir_make("numa"); }
static int suite_clean(void) { return tu_dir_remove(); }

int main(void)
{
    unsetenv("OOC_NUMA_ROOT");
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("numa", suite_init, suite_clean);
    CU_add_test(s, "CPU and node lists", test_parse_list);
    CU_add_test(s, "a PCI device's node, any case, missing and malformed", test_node_of_pci);
    CU_add_test(s, "a node's CPUs within the affinity mask", test_node_cpus);
    CU_add_test(s, "binding a thread to its node's CPUs", test_bind_thread);
    CU_add_test(s, "the staging pool's helpers on the node", test_pool_bound);
    CU_add_test(s, "OOC_NUMA=0, and the processes of this host", test_wanted_local);
#ifdef SYS_get_mempolicy
    CU_add_test(s, "pages preferred on a node (mbind)", test_prefer);
#endif
    return tu_run();
}
