/* SPDX-License-Identifier: MIT */
/*
 * cli_opts.c: option values as every subcommand parses them, so that an
 * option means the same wherever it is given: integers, byte counts (the
 * tool's one byte-size parser), reals, ops, seeds, library options within
 * the library's bounds, device lists (--devices LIST|all), the floor's
 * figures, and getopt's failures. Each parser prints a usage error on a bad
 * value and returns -1 (or RC_USAGE).
 */
#include "config.h"

#include <ctype.h>

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* Option values                                                             */

/* Plain decimal integer in [min, max]; 0 on success, -1 with a message (one
 * past 64 bits is too large). */
int parse_int(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
              int64_t *out)
{
    char *end;
    const char *digits = *s == '+' || *s == '-' ? s + 1 : s;
    if (*digits < '0' || *digits > '9') { /* "", " 5", "x" */
        usage_error(cmd, "%s: '%s' is not an integer", opt, s);
        return -1;
    }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0') {
        usage_error(cmd, "%s: '%s' is not an integer", opt, s);
        return -1;
    }
    if (errno == ERANGE || v < min || v > max) {
        if (errno == ERANGE && v > 0) { /* past 64 bits: say so, not "not a non-negative integer" */
            if (max == INT64_MAX) usage_error(cmd, "%s: '%s' is too large (out of range: over 64 bits)", opt, s);
            else usage_error(cmd, "%s: '%s' is too large (out of range: at most %lld)", opt, s, (long long)max);
        } else if (min == 1 && max == INT64_MAX)
            usage_error(cmd, "%s: '%s' is not a positive integer", opt, s);
        else if (min == 0 && max == INT64_MAX)
            usage_error(cmd, "%s: '%s' is not a non-negative integer", opt, s);
        else
            usage_error(cmd, "%s: '%s' is outside [%lld, %lld]", opt, s, (long long)min, (long long)max);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* Byte count: an integer with an optional binary suffix K, M, G or T
 * (case-insensitive, optionally followed by "iB" or "B"): 64M = 64 MiB. */
int parse_bytes(const char *cmd, const char *opt, const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9') goto bad;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE) goto big;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0)) end += strlen(end);
    else if (!shift && strcasecmp(end, "B") == 0) end++;
    if (*end != '\0') goto bad;
    if (v > (unsigned long long)(INT64_MAX >> shift)) goto big;
    *out = (int64_t)(v << shift);
    return 0;
bad:
    usage_error(cmd, "%s: '%s' is not a byte count (an integer with an optional K, M, G or T suffix)", opt, s);
    return -1;
big:
    usage_error(cmd, "%s: '%s' is too large", opt, s);
    return -1;
}

/* What keeps a trace from being written at path (an empty name, a
 * directory, a directory that is missing or not writable, a file not
 * writable), else NULL. The message is in a static buffer. */
const char *trace_place_problem(const char *path)
{
    static char why[4400];
    if (*path == '\0') return "an empty file name";
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return "is a directory (give a file name)";
        int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC); /* (as the trace will be: not truncated now) */
        if (fd < 0) {
            snprintf(why, sizeof why, "cannot be written: %s", strerror(errno));
            return why;
        }
        close(fd);
        return NULL;
    }
    /* not there: made and removed again, as the trace will be made (a
     * dangling symbolic link, a name too long, a directory missing or not
     * writable are found now) */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        struct stat lsb;
        if (e == EEXIST && lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
            snprintf(why, sizeof why, "is a symbolic link to nothing");
        else
            snprintf(why, sizeof why, "cannot be created: %s", strerror(e));
        return why;
    }
    close(fd);
    unlink(path);
    return NULL;
}

/* Finite real number; positive if `positive`. */
int parse_real(const char *cmd, const char *opt, const char *s, int positive, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s != '\0' && *end == '\0' && errno == ERANGE && fabs(v) < 1) { /* (strtod's underflow) */
        if (v == 0) {
            usage_error(cmd, "%s: '%s' is too small for a double (it underflows to 0; the least is about 4.9e-324)",
                        opt, s);
            return -1;
        }
        errno = 0; /* a subnormal: representable, with fewer digits */
    }
    while (end != s && isspace((unsigned char)*end)) end++; /* (trailing blanks, as strtod skips leading ones) */
    if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        size_t n = strlen(s);
        if (n > 1 && (s[n - 1] == 'i' || s[n - 1] == 'j' || s[n - 1] == 'I' || s[n - 1] == 'J') &&
            strpbrk(s, "0123456789") != NULL) /* 1+2j, 2i: a complex number */
            usage_error(cmd, "%s: '%s' is a complex number: the command line takes real scalars only (for every type; "
                        "the library's ooc_gemm() and ooc_gemm_files() take complex ones)", opt, s);
        else
            usage_error(cmd, "%s: '%s' is not a finite number", opt, s);
        return -1;
    }
    if (positive && !(v > 0)) {
        usage_error(cmd, "%s: '%s' must be positive", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

int parse_op(const char *cmd, const char *opt, const char *s, ooc_op_t *op)
{
    if (strcasecmp(s, "N") == 0) *op = OOC_OP_N;
    else if (strcasecmp(s, "T") == 0) *op = OOC_OP_T;
    else if (strcasecmp(s, "C") == 0) *op = OOC_OP_C;
    else return usage_error(cmd, "%s: '%s' is not N, T or C", opt, s), -1;
    return 0;
}

/* A library option: 0 (automatic) or within ooc_param_bounds(). */
int parse_param(const char *cmd, const char *opt, const char *s, ooc_param_t param,
                int bytes, int64_t *out)
{
    int64_t v, lo = 0, hi = INT64_MAX;
    if (bytes ? parse_bytes(cmd, opt, s, &v) : parse_int(cmd, opt, s, 0, INT64_MAX, &v)) return -1;
    if (v != 0 && ooc_param_bounds(param, &lo, &hi) == OOC_SUCCESS && (v < lo || v > hi)) {
        usage_error(cmd, "%s: %s is outside [%lld, %lld] (or 0 for automatic)", opt, s, (long long)lo,
                    (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* A seed: any unsigned 64-bit decimal integer. */
int parse_seed(const char *cmd, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0')
        return usage_error(cmd, "--seed: '%s' is not a non-negative integer", s), -1;
    if (errno == ERANGE) /* digits past 64 bits: say so, as parse_int does */
        return usage_error(cmd, "--seed: '%s' is too large (out of range: at most 18446744073709551615)", s), -1;
    *out = (uint64_t)v;
    return 0;
}

int floor_opt_parse(const char *cmd, int c, const char *arg, floor_opts_t *f)
{
    switch (c) {
    case OPT_NO_FLOOR: f->no_floor = 1; return 1;
    case OPT_BW_H2D: return parse_real(cmd, "--bw-h2d", arg, 1, &f->bw_h2d) ? -1 : 1;
    case OPT_BW_D2H: return parse_real(cmd, "--bw-d2h", arg, 1, &f->bw_d2h) ? -1 : 1;
    case OPT_RATE: return parse_real(cmd, "--rate", arg, 1, &f->rate) ? -1 : 1;
    case OPT_BW_BOTH: return parse_real(cmd, "--bw-both", arg, 1, &f->bw_both) ? -1 : 1;
    case OPT_HOST_BW: return parse_real(cmd, "--host-bw", arg, 1, &f->bw_host) ? -1 : 1;
    default: return 0;
    }
}

/* A device index of a --devices list at *p (digits only), moved past it:
 * its value, capped at OOC_MAX_DEVICES (out of range whatever the digits);
 * -1 when *p holds no digit. */
static long device_index(const char **p)
{
    long v = -1;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        v = (v < 0 ? 0 : v) * 10 + (**p - '0');
        if (v > OOC_MAX_DEVICES) v = OOC_MAX_DEVICES;
    }
    return v;
}

/*
 * --devices LIST|all, without printing (as spec.c's parsers): "all" (any
 * case) is 0, every visible device; LIST is indices and ranges N-M separated
 * by commas, a set (1,3-4; duplicates are fine), each index below
 * OOC_MAX_DEVICES. 0 with *mask (bit d for device d) and *first (the first
 * index listed, -1 for all), or -1 with the problem in why[len].
 */
int devices_parse(const char *s, uint32_t *mask, int *first, char *why, size_t len)
{
    if (strcasecmp(s, "all") == 0) {
        *mask = 0;
        *first = -1;
        return 0;
    }
    if (*s == '\0') return snprintf(why, len, "empty list (give indices such as 0,1 or 0-3, or 'all')"), -1;
    uint32_t m = 0;
    int f = -1;
    for (const char *p = s;; p++) {
        const char *tok = p;
        int tl = (int)strcspn(tok, ",");
        if (tl == 0) return snprintf(why, len, "'%s' has an empty entry", s), -1;
        long lo = device_index(&p), hi = lo;
        if (lo >= 0 && *p == '-') {
            p++;
            hi = device_index(&p);
        }
        if (lo < 0 || hi < 0 || (*p != ',' && *p != '\0'))
            return snprintf(why, len, "'%.*s' is not a device index or a range N-M%s%s%s", tl, tok,
                            s[tl] ? " (in '" : "", s[tl] ? s : "", s[tl] ? "')" : ""), -1;
        if (hi >= OOC_MAX_DEVICES)
            return snprintf(why, len, "'%.*s' is out of range: device indices go from 0 to %d", tl, tok,
                           OOC_MAX_DEVICES - 1), -1;
        if (lo > hi) return snprintf(why, len, "'%.*s' is an empty range (N-M needs N <= M)", tl, tok), -1;
        if (f < 0) f = (int)lo;
        for (long d = lo; d <= hi; d++) m |= (uint32_t)1 << d;
        if (*p == '\0') break;
    }
    *mask = m;
    *first = f;
    return 0;
}

/* A device mask as indices and ranges ("0-3", "0,2,5-7"); "all" for 0. */
const char *devices_format(uint32_t mask, char *buf, size_t len)
{
    size_t at = 0;
    snprintf(buf, len, "%s", mask ? "" : "all");
    for (int d = 0; d < OOC_MAX_DEVICES && at < len; d++) {
        if (!(mask >> d & 1)) continue;
        int e = d;
        while (e + 1 < OOC_MAX_DEVICES && (mask >> (e + 1) & 1)) e++;
        int w = e == d ? snprintf(buf + at, len - at, "%s%d", at ? "," : "", d)
                       : snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", d, e);
        at += w > 0 ? (size_t)w : 0;
        d = e;
    }
    return buf;
}

/* The spellings kept for old scripts: each is another entry of a table
 * with the code of the option it stands for, parsed the same way. */
static const char *const hidden_options[] = {
    "order",     /* --layout (gen, multiply, verify) */
    "out-order", /* --out-layout (multiply) */
};

int cli_hidden_option(const char *name)
{
    for (size_t i = 0; i < sizeof hidden_options / sizeof hidden_options[0]; i++)
        if (strcmp(name, hidden_options[i]) == 0) return 1;
    return 0;
}

const struct option *cli_long_opts;

int cli_getopt(int argc, char **argv, const char *shorts, const struct option *opts, char *optname, size_t len)
{
    cli_long_opts = opts;
    int longind = -1;
    int c = getopt_long(argc, argv, shorts, opts, &longind);
    if (longind >= 0) snprintf(optname, len, "--%s", opts[longind].name);
    else if (c > 0 && c < 256) snprintf(optname, len, "-%c", c);
    else snprintf(optname, len, "?");
    return c;
}

int common_opt_parse(const char *cmd, int c, const char *optname, const char *arg, common_opts_t *o)
{
    int64_t v;
    switch (c) {
    case OPT_DTYPE:
        if (dtype_parse(arg, &o->dtype))
            return usage_error(cmd, "%s: '%s' is not an element type (s, d, c, z; float32, float64, complex64, "
                               "complex128; f4, f8, c8, c16)", optname, arg), -1;
        o->dtype_given = 1;
        return 1;
    case OPT_LAYOUT:
        if (order_parse(arg, &o->layout))
            return usage_error(cmd, "%s: '%s' is not row or col (or C or F)", optname, arg), -1;
        o->layout_given = 1;
        return 1;
    case OPT_TRANSA: o->ta_given = 1; return parse_op(cmd, optname, arg, &o->ta) ? -1 : 1;
    case OPT_TRANSB: o->tb_given = 1; return parse_op(cmd, optname, arg, &o->tb) ? -1 : 1;
    case OPT_ALPHA: o->alpha_given = 1; return parse_real(cmd, optname, arg, 0, &o->alpha) ? -1 : 1;
    case OPT_BETA: o->beta_given = 1; return parse_real(cmd, optname, arg, 0, &o->beta) ? -1 : 1;
    case OPT_MEMORY:
        if (strcasecmp(arg, "pinned") == 0) o->pinned = 1;
        else if (strcasecmp(arg, "pageable") == 0) o->pinned = 0;
        else return usage_error(cmd, "%s: '%s' is not pinned or pageable", optname, arg), -1;
        o->memory_given = 1;
        return 1;
    case OPT_SEED: return parse_seed(cmd, arg, &o->seed) ? -1 : 1;
    case OPT_CHECK_ROWS:
        if (parse_int(cmd, optname, arg, 0, INT32_MAX, &v)) return -1;
        o->check_rows = v;
        return 1;
    case OPT_NO_CHECK: o->check_rows = 0; return 1;
    case OPT_ROWS: return parse_int(cmd, optname, arg, 0, INT64_MAX, &o->rows) ? -1 : (o->rows_given = 1);
    case OPT_COLS: return parse_int(cmd, optname, arg, 0, INT64_MAX, &o->cols) ? -1 : (o->cols_given = 1);
    case 'q': o->quiet = 1; return 1;
    case OPT_JSON: o->json = 1; return 1;
    default: return 0;
    }
}

/* getopt code c, if it is a library option, into *l: 1 when it was one, 0
 * when not, -1 on a bad value (message printed). */
int lib_opt_parse(const char *cmd, int c, const char *optname, const char *arg, lib_opts_t *l)
{
    char why[256];
    switch (c) {
    case OPT_BACKEND:
        if (strcasecmp(arg, "auto") == 0) l->backend = OOC_BACKEND_AUTO;
        else if (strcasecmp(arg, "cublas") == 0) l->backend = OOC_BACKEND_CUBLAS;
        else if (strcasecmp(arg, "custom") == 0) l->backend = OOC_BACKEND_CUSTOM;
        else if (strcasecmp(arg, "host") == 0) l->backend = OOC_BACKEND_HOST;
        else return usage_error(cmd, "--backend: '%s' is not auto, cublas, custom or host", arg), -1;
        return 1;
    case OPT_DEVICES: /* --devices LIST|all, or --device N: the same */
        if (devices_parse(arg, &l->devices, &l->devices_first, why, sizeof why))
            return usage_error(cmd, "%s: %s", optname, why), -1;
        l->devices_given = 1;
        return 1;
    case OPT_DEVICE_MEM: return parse_param(cmd, optname, arg, OOC_PARAM_DEVICE_MEM, 1, &l->device_mem) ? -1 : 1;
    case OPT_HOST_MEM: return parse_param(cmd, optname, arg, OOC_PARAM_HOST_MEM, 1, &l->host_mem) ? -1 : 1;
    case OPT_BLOCK_ROWS: return parse_param(cmd, optname, arg, OOC_PARAM_BLOCK_ROWS, 0, &l->block_rows) ? -1 : 1;
    case OPT_RING: return parse_param(cmd, optname, arg, OOC_PARAM_RING_DEPTH, 0, &l->ring) ? -1 : 1;
    case OPT_STREAMS: return parse_param(cmd, optname, arg, OOC_PARAM_STREAMS, 0, &l->streams) ? -1 : 1;
    case OPT_STAGING_THREADS:
        return parse_param(cmd, optname, arg, OOC_PARAM_STAGING_THREADS, 0, &l->staging_threads) ? -1 : 1;
    case OPT_TAIL: return parse_param(cmd, optname, arg, OOC_PARAM_TAIL, 0, &l->tail) ? -1 : 1;
    case OPT_B_CHUNKS: return parse_param(cmd, optname, arg, OOC_PARAM_B_CHUNKS, 0, &l->b_chunks) ? -1 : 1;
    case OPT_A_PIECES: return parse_param(cmd, optname, arg, OOC_PARAM_A_PIECES, 0, &l->a_pieces) ? -1 : 1;
    case OPT_STAGE_CHUNK: /* off: OOC_PARAM_STAGE_CHUNK's 1 */
        if (strcasecmp(arg, "off") == 0) return l->stage_chunk = 1, 1;
        if (parse_param(cmd, optname, arg, OOC_PARAM_STAGE_CHUNK, 1, &l->stage_chunk)) return -1;
        if (l->stage_chunk > 0 && l->stage_chunk < 4096)
            return usage_error(cmd, "%s: %s is under 4096 bytes (or 'off', or 0 for automatic)", optname, arg), -1;
        return 1;
    case OPT_STAGE_C: /* off: OOC_PARAM_STAGE_C's 1 */
        if (strcasecmp(arg, "auto") == 0) l->stage_c = 0;
        else if (strcasecmp(arg, "off") == 0) l->stage_c = 1;
        else return usage_error(cmd, "--stage-c: '%s' is not auto or off", arg), -1;
        return 1;
    case OPT_PEER_B:
        if (strcasecmp(arg, "auto") == 0) l->peer_b = OOC_PEER_B_AUTO;
        else if (strcasecmp(arg, "host") == 0) l->peer_b = OOC_PEER_B_HOST;
        else if (strcasecmp(arg, "share") == 0) l->peer_b = OOC_PEER_B_SHARE;
        else return usage_error(cmd, "--peer-b: '%s' is not auto, host or share", arg), -1;
        return 1;
    case OPT_TRACE: {
        /* written after the multiply: a place it cannot be written is said
         * now, not after hours of work (the library then only warns) */
        const char *bad = trace_place_problem(arg);
        if (bad) return usage_error(cmd, "--trace '%s': %s", arg, bad), -1;
        l->trace = arg;
        return 1;
    }
    case OPT_TF32: l->tf32 = 1; return 1;
    default: return 0;
    }
}

/* Set a library option unless it is 0 (automatic). */
ooc_status_t set_param(ooc_handle_t *h, ooc_param_t p, int64_t v)
{
    return v != 0 ? ooc_set(h, p, v) : OOC_SUCCESS;
}

/*
 * Every library option onto the handle, before its backend opens. The
 * devices: --devices sets OOC_PARAM_DEVICES (so that --devices 0 is device
 * 0, not every device); a mask of one device also names it in
 * OOC_PARAM_DEVICE (what a library of one device reads).
 */
ooc_status_t lib_opts_apply(ooc_handle_t *h, const lib_opts_t *l)
{
    ooc_status_t st;
    int64_t mask = l->devices_given ? (int64_t)l->devices : 0;
    int64_t device = mask != 0 && (mask & (mask - 1)) == 0 ? __builtin_ctzll((unsigned long long)mask) : 0;
    if ((st = ooc_set(h, OOC_PARAM_BACKEND, l->backend)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICE, device)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICES, mask)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_DEVICE_MEM, l->device_mem)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_HOST_MEM, l->host_mem)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_BLOCK_ROWS, l->block_rows)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_RING_DEPTH, l->ring)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STREAMS, l->streams)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STAGING_THREADS, l->staging_threads)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_TAIL, l->tail)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_B_CHUNKS, l->b_chunks)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_A_PIECES, l->a_pieces)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STAGE_CHUNK, l->stage_chunk)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_STAGE_C, l->stage_c)) != OOC_SUCCESS ||
        (st = set_param(h, OOC_PARAM_PEER_B, l->peer_b)) != OOC_SUCCESS ||
        (st = ooc_set_trace(h, l->trace)) != OOC_SUCCESS ||
        (st = ooc_set(h, OOC_PARAM_MATH_MODE, l->tf32 ? OOC_MATH_TF32 : OOC_MATH_STRICT)) != OOC_SUCCESS)
        return st;
    return OOC_SUCCESS;
}

