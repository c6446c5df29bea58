/* SPDX-License-Identifier: MIT */
/*
 * cli_util.c: small helpers of every subcommand: the clock (the one
 * clock_gettime of the tool), best and median of timed runs, element type
 * names and sizes, byte counts, rates and times for people, and the
 * process's peak memory. Pure functions but for the clock and getrusage.
 */
#include "config.h"

#include "cli.h"

#include <sched.h>

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

size_t dtype_size(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return 4;
    case OOC_R64: return 8;
    case OOC_C32: return 8;
    case OOC_C64: return 16;
    }
    return 0;
}

int dtype_complex(ooc_dtype_t t) { return t == OOC_C32 || t == OOC_C64; }
int dtype_double(ooc_dtype_t t) { return t == OOC_R64 || t == OOC_C64; }

char dtype_letter(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return 's';
    case OOC_R64: return 'd';
    case OOC_C32: return 'c';
    case OOC_C64: return 'z';
    }
    return '?';
}

char op_letter(ooc_op_t op) { return op == OOC_OP_N ? 'N' : op == OOC_OP_T ? 'T' : 'C'; }

/* "12.3 MiB": a byte count for people. */
const char *human_bytes(uint64_t b, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, len, "%" PRIu64 " B", b);
    else snprintf(buf, len, "%.3g %s", v, unit[u]);
    return buf;
}

/* NumPy's name of an element type. */
const char *dtype_name(ooc_dtype_t t)
{
    switch (t) {
    case OOC_R32: return "float32";
    case OOC_R64: return "float64";
    case OOC_C32: return "complex64";
    case OOC_C64: return "complex128";
    }
    return "unknown";
}

const char *order_name(ooc_layout_t l) { return l == OOC_ROW_MAJOR ? "C" : "F"; }

/* The --layout word of a layout (and of JSON's "layout"). */
const char *layout_name(ooc_layout_t l) { return l == OOC_ROW_MAJOR ? "row" : "col"; }

/* Does the path end in ".npy" (any case)? */
int has_npy_ext(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".npy") == 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sort the n > 0 times; their best and median. */
void times_summary(double *times, int64_t n, double *best, double *median)
{
    qsort(times, (size_t)n, sizeof *times, cmp_double);
    *best = times[0];
    *median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

/* "1.23 TFLOP/s", or GFLOP/s below 1 TFLOP/s */
const char *format_rate(double flops_per_s, char *buf, size_t len)
{
    if (flops_per_s >= 1e12 || !isfinite(flops_per_s)) snprintf(buf, len, "%.3g TFLOP/s", flops_per_s / 1e12);
    else snprintf(buf, len, "%.3g GFLOP/s", flops_per_s / 1e9);
    return buf;
}

/* "1:02:03", "4:05", or "--" */
const char *format_eta(double s, char *buf, size_t len)
{
    if (!isfinite(s) || s < 0 || s > 1e8) {
        snprintf(buf, len, "--");
        return buf;
    }
    long v = (long)(s + 0.5);
    if (v >= 3600) snprintf(buf, len, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else snprintf(buf, len, "%ld:%02ld", v / 60, v % 60);
    return buf;
}

/* Bytes from getrusage(): the process's peak resident set. */
uint64_t peak_rss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (uint64_t)ru.ru_maxrss * 1024u; /* Linux: KiB */
}

/* The number of entries of st->device[] to read. */
int stats_ndevices(const ooc_stats_t *st)
{
    return st->ndevices < 0 ? 0 : st->ndevices > OOC_MAX_DEVICES ? OOC_MAX_DEVICES : st->ndevices;
}


const char *cuda_unused_reason(void)
{
    int gpus = 0;
    const char *why = NULL;
    if (ooc_cuda_probe(&gpus, &why, NULL) == OOC_SUCCESS && gpus > 0) return NULL;
    return why && *why ? why : "no GPU";
}

const char *backend_reason(const char *backend)
{
    static char buf[8400];
    const char *why = backend && strncmp(backend, "host", 4) == 0 ? cuda_unused_reason() : NULL;
    if (why == NULL) return NULL;
    snprintf(buf, sizeof buf, "CUDA not used: %s", why);
    return buf;
}

/* The CPUs this process may run on: its affinity mask (taskset, numactl, a
 * batch job's allocation), not every CPU online; at least 1. */
int cli_cpu_count(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
