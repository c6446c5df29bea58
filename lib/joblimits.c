/* SPDX-License-Identifier: MIT */
/*
 * joblimits.c: what this job may use of the machine (see joblimits.h),
 * for the defaults of the staging threads and the memory budgets (gemm.c,
 * backend_host.c, verify.c). The name is not limits.c: lib/ is on the
 * include path, where a limits.h would hide the system's.
 *
 * A batch job (Slurm), a systemd unit or a container gets a cgroup memory
 * limit far below the RAM, and CPUs through its affinity mask: budgets from
 * the RAM alone get the job killed.
 *
 * Memory: the least of MemAvailable (/proc/meminfo) and, for the cgroup of
 * this process and each ancestor up to the top of its mount, limit - usage:
 *   cgroup v2: the process's cgroup from the "0::PATH" line of
 *     /proc/self/cgroup, the cgroup2 mount from /proc/self/mountinfo; limit
 *     memory.max or memory.high, whichever is lower ("max": none); usage
 *     memory.current;
 *   cgroup v1 (where a line of /proc/self/cgroup names the memory
 *     controller and a cgroup mount has it): memory.limit_in_bytes (2^62 and
 *     above, like the page-rounded LONG_MAX a cgroup starts with: none),
 *     usage memory.usage_in_bytes.
 * Usage leaves out inactive_file of memory.stat (total_inactive_file in
 * v1): page cache the kernel drops before it hits the limit, as MemAvailable
 * counts it available (a job that has read its input files is near its
 * limit by memory.current alone). Walking up covers Slurm's nesting
 * (job_N/step_M/user/task_K: the limit is on job_N, maybe on the step) and
 * a parent whose other children use its room (a cgroup with no usage of
 * its own to read counts that of the one below). A mount whose root is not
 * "/" (a container's view of its own subtree) maps the cgroup's path under
 * it.
 *
 * Never fails: a file that is missing or does not parse counts as no limit
 * there; with none at all, physical memory decides (sysconf where
 * /proc/meminfo cannot be read). The sources in ooc_limits_t say which file
 * decided, for messages. Reads small files only; nothing is cached (a
 * multiply reads these a few times).
 *
 * Test hook: the environment variable OOC_LIMITS_ROOT=DIR makes
 * ooc_limits_get read DIR/proc/self/cgroup, DIR/proc/self/mountinfo,
 * DIR/proc/meminfo and DIR/<mount point>/... instead of the real files
 * (tests/test_limits.c builds such trees). The CPU count always comes from
 * the real affinity mask.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "joblimits.h"

#define PATH_CAP 4096
#define V1_UNLIMITED ((uint64_t)1 << 62) /* v1 limits at or above this are none (LONG_MAX, page-rounded) */
#define MAX_CPUS (1 << 20)                /* the largest affinity mask asked for */

/* ---------- CPUs ---------- */

int ooc_limit_cpus(void)
{
    /* a mask as large as the kernel's: grow it while the kernel says EINVAL */
    for (int n = 1024; n <= MAX_CPUS; n *= 2) {
        cpu_set_t *set = CPU_ALLOC(n);
        if (set == NULL) break;
        size_t size = CPU_ALLOC_SIZE(n);
        CPU_ZERO_S(size, set);
        int rc = sched_getaffinity(0, size, set), e = errno;
        int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
        CPU_FREE(set);
        if (rc == 0 && count >= 1) return count;
        if (rc == 0 || e != EINVAL) break;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

/* ---------- reading ---------- */

/* root + path into buf; 0 when it fits */
static int join(char *buf, size_t cap, const char *root, const char *path)
{
    int n = snprintf(buf, cap, "%s%s", root, path);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The file root + dir + "/" + name, whole, into buf (NUL-terminated); 0 on
 * success, -1 when it cannot be read or does not fit. */
static int read_small(const char *root, const char *dir, const char *name, char *buf, size_t cap)
{
    char path[PATH_CAP];
    int n = snprintf(path, sizeof path, "%s%s/%s", root, dir, name);
    if (n < 0 || (size_t)n >= sizeof path) return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fd, buf + got, cap - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) got = cap; /* failed: reported below */
        if (r <= 0 || (got += (size_t)r) >= cap - 1) break;
    }
    close(fd);
    if (got >= cap - 1) return -1; /* failed, or larger than any value we read */
    buf[got] = '\0';
    return 0;
}

/* A decimal number at *s (digits only), advancing *s; 0 on success. */
static int parse_u64(const char **s, uint64_t *v)
{
    const char *p = *s;
    uint64_t x = 0;
    if (!isdigit((unsigned char)*p)) return -1;
    for (; isdigit((unsigned char)*p); p++)
        if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, (uint64_t)(*p - '0'), &x)) return -1;
    *s = p;
    *v = x;
    return 0;
}

/* A cgroup value file: "max" (OOC_LIMIT_NONE) or a number, white space
 * around it and nothing else; 0 on success, -1 when missing or malformed. */
static int read_value(const char *root, const char *dir, const char *name, uint64_t *v)
{
    char buf[64];
    if (read_small(root, dir, name, buf, sizeof buf) != 0) return -1;
    const char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    if (strncmp(s, "max", 3) == 0) {
        s += 3;
        *v = OOC_LIMIT_NONE;
    } else if (parse_u64(&s, v) != 0) {
        return -1;
    }
    while (isspace((unsigned char)*s)) s++;
    return *s == '\0' ? 0 : -1;
}

/* The value of `key` in a "key value" file (memory.stat); 0 when found. */
static int read_stat(const char *root, const char *dir, const char *key, uint64_t *v)
{
    char path[PATH_CAP];
    int n = snprintf(path, sizeof path, "%s%s/memory.stat", root, dir);
    if (n < 0 || (size_t)n >= sizeof path) return -1;
    FILE *f = fopen(path, "re");
    if (f == NULL) return -1;
    char line[256];
    size_t klen = strlen(key);
    int rc = -1;
    while (rc != 0 && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, key, klen) != 0 || line[klen] != ' ') continue;
        const char *s = line + klen + 1;
        if (parse_u64(&s, v) == 0 && (*s == '\n' || *s == '\0')) rc = 0;
        else break; /* malformed: as if absent */
    }
    fclose(f);
    return rc;
}

/* /proc/meminfo's MemTotal and MemAvailable in bytes (0 when absent or
 * malformed). */
static void read_meminfo(const char *root, uint64_t *total, uint64_t *avail)
{
    *total = *avail = 0;
    char path[PATH_CAP];
    if (join(path, sizeof path, root, "/proc/meminfo") != 0) return;
    FILE *f = fopen(path, "re");
    if (f == NULL) return;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        uint64_t *to = strncmp(line, "MemTotal:", 9) == 0 ? total : strncmp(line, "MemAvailable:", 13) == 0 ? avail : NULL;
        if (to == NULL) continue;
        const char *s = strchr(line, ':') + 1;
        while (*s == ' ' || *s == '\t') s++;
        uint64_t kb;
        if (parse_u64(&s, &kb) == 0 && strncmp(s, " kB", 3) == 0 && (s[3] == '\n' || s[3] == '\0') &&
            kb <= UINT64_MAX / 1024)
            *to = kb * 1024;
    }
    fclose(f);
}

/* ---------- finding the cgroup ---------- */

/* mountinfo's escapes (\040 for a space, ...) decoded in place */
static void unescape(char *s)
{
    char *w = s;
    for (const char *r = s; *r; w++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w = *r++;
        }
    }
    *w = '\0';
}

/* 1 when the comma-separated list has the word */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *t = list; *t;) {
        size_t l = strcspn(t, ",");
        if (l == n && strncmp(t, word, n) == 0) return 1;
        t += l + (t[l] == ',');
    }
    return 0;
}

/* This process's cgroups from /proc/self/cgroup: in the v1 hierarchy that
 * has the memory controller (a line "N:...,memory,...:PATH") into v1, in
 * the v2 hierarchy ("0::PATH") into v2; "" where there is no such line. */
static void read_self_cgroup(const char *root, char *v1, char *v2, size_t cap)
{
    v1[0] = v2[0] = '\0';
    char file[PATH_CAP];
    if (join(file, sizeof file, root, "/proc/self/cgroup") != 0) return;
    FILE *f = fopen(file, "re");
    if (f == NULL) return;
    char *line = NULL;
    size_t len = 0;
    while (getline(&line, &len, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        char *ctrl = strchr(line, ':');
        char *path = ctrl ? strchr(ctrl + 1, ':') : NULL;
        if (path == NULL || path[1] != '/' || strlen(path + 1) >= cap) continue;
        *ctrl++ = '\0';
        *path++ = '\0';
        if (strcmp(line, "0") == 0 && *ctrl == '\0') strcpy(v2, path);
        else if (has_word(ctrl, "memory")) strcpy(v1, path);
    }
    free(line);
    fclose(f);
}

/* The mount of the hierarchy (version 2: cgroup2; 1: cgroup with the memory
 * controller) that shows cgroup `cg`: its mount point and its root (the
 * part of the hierarchy at the mount point). Where several do, the one with
 * the longest root that holds cg. 0 when found. */
static int find_mount(const char *root, int version, const char *cg, char *mnt, char *mroot, size_t cap)
{
    char file[PATH_CAP];
    if (join(file, sizeof file, root, "/proc/self/mountinfo") != 0) return -1;
    FILE *f = fopen(file, "re");
    if (f == NULL) return -1;
    char *line = NULL;
    size_t len = 0;
    int found = -1;
    size_t best = 0;
    while (getline(&line, &len, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS */
        char *field[5], *save = NULL, *tok = strtok_r(line, " ", &save);
        int nf = 0;
        for (; tok && nf < 5; tok = strtok_r(NULL, " ", &save)) field[nf++] = tok;
        while (tok && strcmp(tok, "-") != 0) tok = strtok_r(NULL, " ", &save);
        char *fstype = tok ? strtok_r(NULL, " ", &save) : NULL;
        char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
        char *super = source ? strtok_r(NULL, " ", &save) : NULL;
        if (nf < 5 || super == NULL) continue;
        if (version == 2 ? strcmp(fstype, "cgroup2") != 0 : strcmp(fstype, "cgroup") != 0 || !has_word(super, "memory"))
            continue;
        unescape(field[3]);
        unescape(field[4]);
        if (strlen(field[3]) >= cap || strlen(field[4]) >= cap) continue;
        size_t rl = strcmp(field[3], "/") == 0 ? 0 : strlen(field[3]);
        int holds = strncmp(cg, field[3], rl) == 0 && (cg[rl] == '/' || cg[rl] == '\0');
        size_t score = holds ? rl + 1 : 0; /* a mount that holds cg beats one that does not */
        if (found == 0 && score <= best) continue;
        strcpy(mroot, field[3]);
        strcpy(mnt, field[4]);
        best = score;
        found = 0;
    }
    free(line);
    fclose(f);
    return found;
}

/* ---------- the walk up the hierarchy ---------- */

typedef struct {
    uint64_t limit, avail, usage; /* the least limit; the least limit - usage and that usage */
    char limit_at[PATH_CAP], avail_at[PATH_CAP];
    const char *limit_file, *avail_file;
} walk_t;

/* One cgroup directory dir: its limit, and its usage (carried down from the
 * cgroup below when it has none to read). */
static void visit(const char *root, int version, const char *dir, uint64_t *usage, walk_t *w)
{
    uint64_t lim = OOC_LIMIT_NONE, v;
    const char *file = NULL;
    if (version == 2) {
        if (read_value(root, dir, "memory.max", &v) == 0 && v < lim) lim = v, file = "memory.max";
        if (read_value(root, dir, "memory.high", &v) == 0 && v < lim) lim = v, file = "memory.high";
    } else if (read_value(root, dir, "memory.limit_in_bytes", &v) == 0 && v < V1_UNLIMITED) {
        lim = v, file = "memory.limit_in_bytes";
    }
    uint64_t used;
    if (read_value(root, dir, version == 2 ? "memory.current" : "memory.usage_in_bytes", &used) == 0 &&
        used != OOC_LIMIT_NONE) {
        uint64_t cache;
        if ((read_stat(root, dir, version == 2 ? "inactive_file" : "total_inactive_file", &cache) == 0 ||
             (version == 1 && read_stat(root, dir, "inactive_file", &cache) == 0)) && cache <= used)
            used -= cache;
        *usage = used;
    }
    if (file == NULL) return;
    uint64_t avail = lim > *usage ? lim - *usage : 0;
    if (lim < w->limit) {
        w->limit = lim;
        w->limit_file = file;
        snprintf(w->limit_at, sizeof w->limit_at, "%s", dir);
    }
    if (avail < w->avail) {
        w->avail = avail;
        w->usage = *usage;
        w->avail_file = file;
        snprintf(w->avail_at, sizeof w->avail_at, "%s", dir);
    }
}

/* The cgroup's limits (version 1 or 2), from the directory of cgroup cg up
 * to the mount point mnt (whose part of the hierarchy is mroot). */
static void walk(const char *root, int version, const char *mnt, const char *mroot, const char *cg, walk_t *w)
{
    /* cg's path below the mount point: without mroot when the mount shows a
     * subtree; a cgroup outside that subtree (a container's view) is at the
     * top of the mount */
    const char *rel = cg;
    size_t rl = strcmp(mroot, "/") == 0 ? 0 : strlen(mroot);
    if (rl > 0) rel = strncmp(cg, mroot, rl) == 0 && (cg[rl] == '/' || cg[rl] == '\0') ? cg + rl : "";
    if (strcmp(rel, "/") == 0) rel = "";
    char dir[PATH_CAP];
    size_t top = strcmp(mnt, "/") == 0 ? 0 : strlen(mnt);
    int n = snprintf(dir, sizeof dir, "%s%s", top ? mnt : "", rel);
    if (n < 0 || (size_t)n >= sizeof dir) return;
    uint64_t usage = 0;
    for (;;) {
        visit(root, version, dir[0] ? dir : "/", &usage, w);
        char *slash = strrchr(dir, '/');
        if (slash == NULL || (size_t)(slash - dir) < top) break;
        *slash = '\0';
        if (strlen(dir) < top) break;
    }
}

/* ---------- the limits ---------- */

void ooc_limits_probe(const char *root, ooc_limits_t *out)
{
    ooc_limits_t L;
    memset(&L, 0, sizeof L);
    if (root == NULL) root = "";
    L.cpus = ooc_limit_cpus();

    read_meminfo(root, &L.phys_total, &L.phys_available);
    const char *total_from = "physical memory (/proc/meminfo MemTotal)";
    const char *avail_from = "physical memory (/proc/meminfo MemAvailable)";
    long page = sysconf(_SC_PAGESIZE);
    if (L.phys_total == 0) {
        long pages = sysconf(_SC_PHYS_PAGES);
        L.phys_total = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
        total_from = "physical memory (sysconf)";
    }
    if (L.phys_available == 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES);
        L.phys_available = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
        avail_from = "physical memory (sysconf)";
    }

    walk_t w;
    memset(&w, 0, sizeof w);
    w.limit = w.avail = OOC_LIMIT_NONE;
    /* memory on a v1 hierarchy where one has it (a hybrid system), else v2 */
    char v1[PATH_CAP], v2[PATH_CAP], mnt[PATH_CAP], mroot[PATH_CAP];
    read_self_cgroup(root, v1, v2, sizeof v1);
    for (int version = 1; version <= 2 && L.cgroup == 0; version++) {
        const char *cg = version == 1 ? v1 : v2;
        if (cg[0] == '\0' || find_mount(root, version, cg, mnt, mroot, sizeof mnt) != 0) continue;
        L.cgroup = version;
        walk(root, version, mnt, mroot, cg, &w);
    }
    L.cg_limit = w.limit;
    L.cg_available = w.avail;
    L.cg_usage = w.usage;

    /* a cgroup decides where it is tighter than the RAM, or the RAM is unknown */
    L.mem_limit = L.phys_total;
    snprintf(L.limit_source, sizeof L.limit_source, "%s", total_from);
    if (w.limit != OOC_LIMIT_NONE && (L.phys_total == 0 || w.limit < L.phys_total)) {
        L.mem_limit = w.limit;
        snprintf(L.limit_source, sizeof L.limit_source, "cgroup v%d %s at %.260s", L.cgroup, w.limit_file, w.limit_at);
    }
    L.mem_available = L.phys_available;
    snprintf(L.available_source, sizeof L.available_source, "%s", avail_from);
    if (w.avail != OOC_LIMIT_NONE && (L.phys_available == 0 || w.avail < L.phys_available)) {
        L.mem_available = w.avail;
        snprintf(L.available_source, sizeof L.available_source, "cgroup v%d %s at %.260s", L.cgroup, w.avail_file,
                 w.avail_at);
    }
    *out = L;
}

uint64_t ooc_limits_staging_budget(const ooc_limits_t *lim, int devices)
{
    uint64_t host = lim->mem_limit / 8;
    if (lim->mem_available / 2 < host) host = lim->mem_available / 2;
    host /= (uint64_t)(devices > 0 ? devices : 1);
    if (host < OOC_STAGING_MIN) host = OOC_STAGING_MIN;
    return host > OOC_STAGING_MAX ? OOC_STAGING_MAX : host;
}

void ooc_limits_get(ooc_limits_t *out)
{
    const char *root = getenv("OOC_LIMITS_ROOT");
    ooc_limits_probe(root ? root : "", out);
}

uint64_t ooc_limit_mem_available(void)
{
    ooc_limits_t L;
    ooc_limits_get(&L);
    return L.mem_available;
}

uint64_t ooc_limit_mem_total(void)
{
    ooc_limits_t L;
    ooc_limits_get(&L);
    return L.mem_limit;
}
