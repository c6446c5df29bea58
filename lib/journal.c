/* SPDX-License-Identifier: MIT */
/*
 * journal.c: the resume journal (see journal.h). Format, version 3, one
 * record per line:
 *
 *   oocgemm-journal 3
 *   job <identity>
 *   plan swap=S mb=MB nb=NB kb=KB tail=T chunks=Q blocks=N resumable=R out=DEV:INO[ lead=L][ rep=P][ pieces=K][ range=B0-B1/M][ panels=P0-P1/NP][ born=SEC.NSEC][ id=HEX][ by=ID]
 *   head <H>                          H = hash of the three lines above
 *   done <G>[ data=<D>] <X>           X = hash(H, "done G[ data=D]"); any order, G < N
 *   mixed <X>                         X = hash(H, "mixed"); anywhere before complete
 *   complete <SIZE>:<SEC>.<NSEC> <X>  X = hash(H, "complete SIZE:SEC.NSEC")
 *
 * range: a journal of row blocks [B0, B1) of the M per panel only (a job
 * split between processes): its done records are of those blocks, and it is
 * complete when all of them are done. Absent: the whole job.
 * panels: and of those, only the blocks of panels [P0, P1) of the NP panels
 * of op(B)'s columns (block G is of panel (G / M) mod NP): a rectangle of C
 * (a job split as a grid). Only with range, which may then be all M.
 * born: the birth time of the output file out names (an inode number may be
 * reused by a later file); absent where the file system keeps none.
 * id: that temporary file's own id, 16 hex digits, from the trailer
 * ooc_file_create writes at its end until the job is complete (io.h
 * OOC_TMP_TRAILER): a file made later never has it, even where the inode
 * number is reused and no birth time is kept. Absent in journals written
 * before ids (they match no temporary file that has one).
 * by: what computed the blocks (ooc_compute_id(): letters, digits and
 * ". _ - / +"); absent in journals written before it was recorded.
 * mixed: a resume allowed to mix computers (ooc_files_opts_t::allow_mixed)
 * kept blocks another compute id recorded: the journal's blocks are not all
 * "by"'s, so no later resume may take them for one computer's.
 * done: block G of C is written and flushed; D, the digest (digest.h) of its
 * bytes as written (pipeline.h ooc_pipe_c_block), which a resume checks
 * against the file before it keeps the block. Absent in records written
 * before digests (such a block is kept unchecked). Version 2, that of the
 * journals written before digests, is the same without them: such a journal
 * is still read and resumed (its records appended without digests, so that
 * the library that wrote it can still read it); a version 2 that reads a
 * version 3 journal refuses it as "of another version". A block recorded twice
 * (computed again after its bytes did not match) is as its last record says.
 * job: files_job.c's identity line (types, ops, scalars, C's shape and format,
 * " tf32=1", " inplace=1" for a job whose C0 is its output's file, then each
 * input's identity).
 * hashes as 16 lower-case hex digits. Every write is followed by fdatasync (a
 * batch of done records by one: the flusher's): a record in the journal means
 * the block is on disk. The parser accepts only
 * the exact bytes the writer produces (each record is re-formatted and
 * compared), so a stray NUL, a sign, a leading zero or an edited number is
 * damage, never a different block.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fault.h"
#include "io.h"
#include "journal.h"

#define MAGIC "oocgemm-journal 3\n"
#define MAGIC_V2 "oocgemm-journal 2\n" /* (before digests: read, and appended to without them) */
#define MAGIC_ANY "oocgemm-journal "
#define MAX_BYTES ((size_t)1 << 31) /* larger than any journal of OOC_JOURNAL_MAX_BLOCKS blocks needs */
#define LINE_MAX_BYTES (OOC_JOURNAL_JOB_MAX + 64)
#define HEAD_MAX_BYTES (OOC_JOURNAL_JOB_MAX + 1024) /* magic, job, plan and head lines */

uint64_t ooc_journal_hash(uint64_t seed, const void *bytes, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

int ooc_journal_in_range(const ooc_journal_head_t *h, int64_t g)
{
    if (h->range_m == 0) return 1;
    int64_t i = g % h->range_m, np = h->range_np ? (g / h->range_m) % h->range_np : 0;
    return i >= h->range_b0 && i < h->range_b1 && (h->range_np == 0 || (np >= h->range_p0 && np < h->range_p1));
}

int64_t ooc_journal_range_blocks(const ooc_journal_head_t *h)
{
    if (h->range_m == 0) return h->total;
    int64_t panels = h->total / h->range_m;
    return (h->range_b1 - h->range_b0) *
           (h->range_np ? (h->range_p1 - h->range_p0) * (panels / h->range_np) : panels);
}

static uint64_t record_hash(uint64_t digest, const char *text) { return ooc_journal_hash(digest, text, strlen(text)); }

/* The header's text (magic, job and plan lines) into buf; its length, or -1. */
static int format_head(const ooc_journal_head_t *h, char *buf, size_t cap)
{
    /* " lead=N", " rep=R" and " pieces=K" end the plan line only when N, R,
     * K > 1: journals without them read the same as before they existed */
    char lead[160 + OOC_COMPUTE_ID_MAX] = "";
    int at = 0;
    if (h->lead > 1) at = snprintf(lead, sizeof lead, " lead=%d", h->lead);
    if (h->tail_rep > 1) at += snprintf(lead + at, sizeof lead - (size_t)at, " rep=%d", h->tail_rep);
    if (h->a_pieces > 1) at += snprintf(lead + at, sizeof lead - (size_t)at, " pieces=%d", h->a_pieces);
    if (h->range_m > 0)
        at += snprintf(lead + at, sizeof lead - (size_t)at, " range=%" PRId64 "-%" PRId64 "/%" PRId64, h->range_b0,
                       h->range_b1, h->range_m);
    if (h->range_m > 0 && h->range_np > 0)
        at += snprintf(lead + at, sizeof lead - (size_t)at, " panels=%" PRId64 "-%" PRId64 "/%" PRId64, h->range_p0,
                       h->range_p1, h->range_np);
    if (h->out_born_sec != 0 || h->out_born_nsec != 0)
        at += snprintf(lead + at, sizeof lead - (size_t)at, " born=%" PRId64 ".%09ld", h->out_born_sec,
                       h->out_born_nsec);
    if (h->out_id != 0) at += snprintf(lead + at, sizeof lead - (size_t)at, " id=%016" PRIx64, h->out_id);
    if (h->by[0]) snprintf(lead + at, sizeof lead - (size_t)at, " by=%s", h->by);
    int n = snprintf(buf, cap,
                     "%sjob %s\nplan swap=%d mb=%" PRId64 " nb=%" PRId64 " kb=%" PRId64 " tail=%d chunks=%d blocks=%" PRId64
                           " resumable=%d out=%" PRIu64 ":%" PRIu64 "%s\n",
                     h->version == 2 ? MAGIC_V2 : MAGIC, h->job, h->swap, h->mb, h->nb, h->kb, h->tail, h->b_chunks, h->total, h->resumable, h->out_dev,
                     h->out_ino, lead);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

/* The longest done record, its newline included */
#define DONE_MAX 72

/* A done record of block g, with the digest of its data when sum is not NULL */
static int format_done(uint64_t digest, int64_t g, const uint64_t *sum, char *buf, size_t cap)
{
    char text[64];
    if (sum) snprintf(text, sizeof text, "done %" PRId64 " data=%016" PRIx64, g, *sum);
    else snprintf(text, sizeof text, "done %" PRId64, g);
    return snprintf(buf, cap, "%s %016" PRIx64 "\n", text, record_hash(digest, text));
}

static int format_mixed(uint64_t digest, char *buf, size_t cap)
{
    return snprintf(buf, cap, "mixed %016" PRIx64 "\n", record_hash(digest, "mixed"));
}

static int format_complete(uint64_t digest, uint64_t size, int64_t sec, long nsec, char *buf, size_t cap)
{
    char text[80];
    snprintf(text, sizeof text, "complete %" PRIu64 ":%" PRId64 ".%09ld", size, sec, nsec);
    return snprintf(buf, cap, "%s %016" PRIx64 "\n", text, record_hash(digest, text));
}

void ooc_journal_info_free(ooc_journal_info_t *info)
{
    if (info == NULL) return;
    free(info->done);
    info->done = NULL;
    free(info->sums);
    info->sums = NULL;
    info->nsums = 0;
}

int ooc_journal_sum_find(const ooc_journal_sum_t *sums, size_t n, int64_t g, uint64_t *digest)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sums[mid].g < g) lo = mid + 1;
        else hi = mid;
    }
    if (lo == n || sums[lo].g != g) return 0;
    *digest = sums[lo].digest;
    return 1;
}

int ooc_journal_sum(const ooc_journal_info_t *info, int64_t g, uint64_t *digest)
{
    return ooc_journal_sum_find(info->sums, info->nsums, g, digest);
}

/* A done record as parsed, and its place in the journal (seq) */
typedef struct {
    ooc_journal_rec_t r;
    size_t seq;
} rec_t;

static int by_block_then_place(const void *x, const void *y)
{
    const rec_t *a = x, *b = y;
    if (a->r.g != b->r.g) return a->r.g < b->r.g ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* info->sums from the done records (n, in the journal's order): for each
 * block, the digest its last record holds, if any; recs is reused. */
static ooc_status_t take_sums(ooc_journal_info_t *info, rec_t *recs, size_t n, const char *name, ooc_err_t *err)
{
    if (n == 0) return OOC_SUCCESS; /* (recs may be NULL: qsort may not be given it) */
    qsort(recs, n, sizeof *recs, by_block_then_place);
    size_t keep = 0;
    for (size_t i = 0; i < n; i++)
        if ((i + 1 == n || recs[i + 1].r.g != recs[i].r.g) && recs[i].r.has) keep++;
    if (keep == 0) return OOC_SUCCESS;
    info->sums = malloc(keep * sizeof *info->sums);
    OOC_RETURN_ERROR_IF(info->sums == NULL, err, OOC_ERR_HOST_MEMORY, "%s: out of memory for %zu digests", name, keep);
    for (size_t i = 0; i < n; i++)
        if ((i + 1 == n || recs[i + 1].r.g != recs[i].r.g) && recs[i].r.has) {
            info->sums[info->nsums].g = recs[i].r.g;
            info->sums[info->nsums++].digest = recs[i].r.digest;
        }
    return OOC_SUCCESS;
}

static int output_stat(const ooc_journal_info_t *have, const char *path, struct stat *sb)
{
    /* (not its device number: files.h ooc_files_same_job()) */
    return have->complete && have->head.range_m == 0 && lstat(path, sb) == 0 && S_ISREG(sb->st_mode) &&
           (uint64_t)sb->st_ino == have->head.out_ino;
}

int ooc_journal_output_at(const ooc_journal_info_t *have, const char *path)
{
    struct stat sb;
    return output_stat(have, path, &sb);
}

int ooc_journal_output_is(const ooc_journal_info_t *have, const char *path)
{
    struct stat sb;
    return output_stat(have, path, &sb) && (uint64_t)sb.st_size == have->out_size &&
           (int64_t)sb.st_mtim.tv_sec == have->out_mtime_sec && sb.st_mtim.tv_nsec == have->out_mtime_nsec;
}

/* The next line of buf from *at: a NUL-terminated copy in line (cap bytes,
 * newline kept). 1: a complete line; 0: end of buffer; -1: a torn last line
 * (no newline); -2: the line is longer than cap - 1 or holds a NUL. */
static int next_line(const char *buf, size_t len, size_t *at, char *line, size_t cap)
{
    if (*at >= len) return 0;
    const char *start = buf + *at;
    size_t rest = len - *at;
    const char *nl = memchr(start, '\n', rest);
    size_t n = nl ? (size_t)(nl - start) + 1 : rest;
    *at += n;
    if (nl == NULL) return -1;
    if (n >= cap || memchr(start, '\0', n) != NULL) return -2;
    memcpy(line, start, n);
    line[n] = '\0';
    return 1;
}

ooc_status_t ooc_journal_parse(const char *buf, size_t len, const char *name, ooc_journal_info_t *info,
                               ooc_err_t *err)
{
    memset(info, 0, sizeof *info);
    ooc_journal_head_t *h = &info->head;
    char line[LINE_MAX_BYTES], want[HEAD_MAX_BYTES];
    size_t at = 0;

    /* the header: magic, job, plan, head */
    int v2 = len >= sizeof MAGIC_V2 - 1 && memcmp(buf, MAGIC_V2, sizeof MAGIC_V2 - 1) == 0;
    h->version = v2 ? 2 : 3;
    if (!v2 && (len < sizeof MAGIC - 1 || memcmp(buf, MAGIC, sizeof MAGIC - 1) != 0)) {
        if (len >= sizeof MAGIC_ANY - 1 && memcmp(buf, MAGIC_ANY, sizeof MAGIC_ANY - 1) == 0)
            return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, name,
                                "%s: a journal of another version of libooc_gemm: it cannot be resumed by this one",
                                name);
        return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, name, "%s: not a libooc_gemm journal", name);
    }
    at = sizeof MAGIC - 1; /* (as long as MAGIC_V2) */
    int r = next_line(buf, len, &at, line, sizeof line);
    if (r != 1 || strncmp(line, "job ", 4) != 0 || strlen(line) - 5 >= sizeof h->job)
        return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, name, "%s: damaged: line 2 is not the job's identity", name);
    memcpy(h->job, line + 4, strlen(line) - 5);
    h->job[strlen(line) - 5] = '\0';
    r = next_line(buf, len, &at, line, sizeof line);
    int ok = r == 1 &&
             sscanf(line, "plan swap=%d mb=%" SCNd64 " nb=%" SCNd64 " kb=%" SCNd64 " tail=%d chunks=%d blocks=%" SCNd64
                          " resumable=%d out=%" SCNu64 ":%" SCNu64,
                    &h->swap, &h->mb, &h->nb, &h->kb, &h->tail, &h->b_chunks, &h->total, &h->resumable, &h->out_dev,
                    &h->out_ino) == 10;
    const char *lead = ok ? strstr(line, " lead=") : NULL;
    h->lead = 1;
    if (lead && sscanf(lead, " lead=%d", &h->lead) != 1) ok = 0;
    const char *rep = ok ? strstr(line, " rep=") : NULL;
    h->tail_rep = 1;
    if (rep && sscanf(rep, " rep=%d", &h->tail_rep) != 1) ok = 0;
    const char *pieces = ok ? strstr(line, " pieces=") : NULL;
    h->a_pieces = 1;
    if (pieces && sscanf(pieces, " pieces=%d", &h->a_pieces) != 1) ok = 0;
    const char *range = ok ? strstr(line, " range=") : NULL, *panels = ok ? strstr(line, " panels=") : NULL;
    if (range && (sscanf(range, " range=%" SCNd64 "-%" SCNd64 "/%" SCNd64, &h->range_b0, &h->range_b1, &h->range_m) != 3 ||
                  h->range_m < 1 || h->range_m > h->total || h->total % h->range_m != 0 || h->range_b0 < 0 ||
                  h->range_b0 >= h->range_b1 || h->range_b1 > h->range_m ||
                  (h->range_b0 == 0 && h->range_b1 == h->range_m && !panels)))
        ok = 0;
    /* panels only with a range; never all of them */
    if (ok && panels &&
        (!range || sscanf(panels, " panels=%" SCNd64 "-%" SCNd64 "/%" SCNd64, &h->range_p0, &h->range_p1, &h->range_np) != 3 ||
         h->range_np < 1 || (h->total / h->range_m) % h->range_np != 0 || h->range_p0 < 0 || h->range_p0 >= h->range_p1 ||
         h->range_p1 > h->range_np || (h->range_p0 == 0 && h->range_p1 == h->range_np)))
        ok = 0;
    const char *born = ok ? strstr(line, " born=") : NULL;
    if (born && (sscanf(born, " born=%" SCNd64 ".%ld", &h->out_born_sec, &h->out_born_nsec) != 2 ||
                 h->out_born_nsec < 0 || h->out_born_nsec >= 1000000000L))
        ok = 0;
    const char *id = ok ? strstr(line, " id=") : NULL;
    if (id && (sscanf(id, " id=%16" SCNx64, &h->out_id) != 1 || h->out_id == 0)) ok = 0;
    const char *by = ok ? strstr(line, " by=") : NULL;
    if (by) {
        size_t n = strcspn(by + 4, "\n");
        ok = n >= 1 && n < sizeof h->by && strspn(by + 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                           "0123456789._-/+") == n;
        if (ok) {
            memcpy(h->by, by + 4, n);
            h->by[n] = '\0';
        }
    }
    ok = ok && h->lead >= 1 && h->lead <= h->total && h->tail_rep >= 1 && h->tail_rep <= 16 && h->a_pieces >= 1 &&
         h->a_pieces <= 64 && (h->swap == 0 || h->swap == 1) && h->mb >= 1 && h->nb >= 1 && h->kb >= 1 && h->tail >= 0 &&
         h->tail <= 6 && h->b_chunks >= 1 && h->b_chunks <= 8 && h->total >= 1 &&
         h->total <= OOC_JOURNAL_MAX_BLOCKS && (h->resumable == 0 || h->resumable == 1);
    /* the header exactly as the writer formats it, and its checksum */
    int hn = ok ? format_head(h, want, sizeof want) : -1;
    ok = hn > 0 && (size_t)hn == at && memcmp(want, buf, (size_t)hn) == 0;
    if (!ok) return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, name, "%s: damaged: line 3 is not a plan", name);
    uint64_t digest = ooc_journal_hash(0, buf, at);
    r = next_line(buf, len, &at, line, sizeof line);
    snprintf(want, sizeof want, "head %016" PRIx64 "\n", digest);
    if (r != 1 || strcmp(line, want) != 0)
        return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, name,
                            "%s: damaged: the header's checksum does not match (edited or corrupted)", name);

    info->done = calloc((size_t)(h->total + 7) / 8, 1);
    OOC_RETURN_ERROR_IF(info->done == NULL, err, OOC_ERR_HOST_MEMORY, "%s: out of memory for %" PRId64 " blocks", name,
                        h->total);
    /* the records */
    ooc_status_t st = OOC_SUCCESS;
    rec_t *recs = NULL;
    size_t nrecs = 0, recs_cap = 0;
    for (int64_t lineno = 5;; lineno++) {
        r = next_line(buf, len, &at, line, sizeof line);
        if (r == 0 || r == -1) break; /* the end, or a torn last record: that block is simply redone */
        int64_t g = -1;
        uint64_t size = 0;
        int64_t sec = 0;
        long nsec = 0;
        ok = 0;
        int n_at = 0;
        if (r == 1 && !info->complete && sscanf(line, "done %" SCNd64 "%n", &g, &n_at) == 1 && g >= 0 &&
            g < h->total && ooc_journal_in_range(h, g)) {
            uint64_t sum = 0;
            int has = h->version >= 3 && strncmp(line + n_at, " data=", 6) == 0;
            if (has) has = sscanf(line + n_at, " data=%16" SCNx64, &sum) == 1;
            format_done(digest, g, has ? &sum : NULL, want, sizeof want);
            ok = strcmp(line, want) == 0;
            int keep = ok && h->version >= 3; /* (a version 2 journal holds no digests: its records are not kept) */
            if (keep && nrecs == recs_cap) {
                size_t cap = recs_cap ? 2 * recs_cap : 256;
                rec_t *more = realloc(recs, cap * sizeof *recs);
                if (more == NULL) {
                    st = OOC_ERR_FILE(err, OOC_ERR_HOST_MEMORY, name, "%s: out of memory for %zu records", name, cap);
                    break;
                }
                recs = more;
                recs_cap = cap;
            }
            if (keep) {
                recs[nrecs].r.g = g;
                recs[nrecs].r.digest = sum;
                recs[nrecs].r.has = has;
                recs[nrecs].seq = nrecs;
                nrecs++;
            }
            if (ok && !(info->done[g / 8] & (1u << (g % 8)))) {
                info->done[g / 8] |= (unsigned char)(1u << (g % 8));
                info->ndone++;
            }
        } else if (r == 1 && !info->complete && strncmp(line, "mixed ", 6) == 0) {
            format_mixed(digest, want, sizeof want);
            ok = strcmp(line, want) == 0;
            if (ok) info->mixed = 1;
        } else if (r == 1 && !info->complete &&
                   sscanf(line, "complete %" SCNu64 ":%" SCNd64 ".%ld", &size, &sec, &nsec) == 3 && nsec >= 0 &&
                   nsec < 1000000000L) {
            format_complete(digest, size, sec, nsec, want, sizeof want);
            ok = strcmp(line, want) == 0 && info->ndone == ooc_journal_range_blocks(h);
            if (ok) {
                info->complete = 1;
                info->out_size = size;
                info->out_mtime_sec = sec;
                info->out_mtime_nsec = nsec;
            }
        }
        if (!ok) {
            st = OOC_ERR_FILE(err, OOC_ERR_JOURNAL, name,
                              "%s: damaged: line %" PRId64 " is not a record of this job (edited or corrupted)%s",
                              name, lineno, info->complete ? ": nothing may follow the completion record" : "");
            break;
        }
    }
    if (st == OOC_SUCCESS) st = take_sums(info, recs, nrecs, name, err);
    free(recs);
    if (st != OOC_SUCCESS) {
        ooc_journal_info_free(info);
        return st;
    }
    while (info->prefix < h->total && (info->done[info->prefix / 8] & (1u << (info->prefix % 8)))) info->prefix++;
    return OOC_SUCCESS;
}

static ooc_status_t open_failed(const char *what, const char *path, ooc_err_t *err)
{
    int e = errno;
    if (e == ELOOP)
        return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, path, "%s %s: a symbolic link: refusing to follow it", what, path);
    if (e == EINVAL || e == EISDIR) /* (a directory opened to write: EISDIR) */
        return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, path, "%s %s: not a regular file: refusing to use it", what, path);
    return OOC_ERR_FILE(err, ooc_errno_status(e), path, "%s %s: %s", what, path, strerror(e));
}

ooc_status_t ooc_journal_read(const char *path, ooc_journal_info_t *info, int *exists, ooc_err_t *err)
{
    memset(info, 0, sizeof *info);
    *exists = 0;
    int fd = ooc_open_regular(path, O_RDONLY | O_NOFOLLOW, NULL);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENAMETOOLONG) return OOC_SUCCESS; /* (a name too long: none can be there) */
        return open_failed("open journal", path, err);
    }
    *exists = 1;
    struct stat sb;
    ooc_status_t st = OOC_SUCCESS;
    char *buf = NULL;
    if (fstat(fd, &sb) != 0) {
        st = OOC_ERR_FILE(err, OOC_ERR_IO, path, "fstat %s: %s", path, strerror(errno));
    } else if (sb.st_size == 0) {
        /* a creation cut short (ooc_journal_remove takes it): no plan, no
         * block, nothing a resume could use (info stays empty) */
    } else if ((uint64_t)sb.st_size > MAX_BYTES) {
        st = OOC_ERR_FILE(err, OOC_ERR_JOURNAL, path, "%s: damaged: %jd bytes is larger than any journal",
                          path, (intmax_t)sb.st_size);
    } else if ((buf = malloc((size_t)sb.st_size + 1)) == NULL) {
        st = OOC_ERR(err, OOC_ERR_HOST_MEMORY, "%s: out of memory for %jd bytes", path, (intmax_t)sb.st_size);
    } else {
        st = ooc_io_pread(fd, buf, (size_t)sb.st_size, 0, path, err);
        if (st == OOC_SUCCESS) st = ooc_journal_parse(buf, (size_t)sb.st_size, path, info, err);
    }
    free(buf);
    close(fd);
    return st;
}

/* OOC_FAULT=journal:N: the N-th record (or header) written fails */
static ooc_status_t injected_failure(const char *path, ooc_err_t *err)
{
    int injected = ooc_fault_errno(OOC_FAULT_JOURNAL);
    if (injected)
        return OOC_ERR_FILE(err, ooc_errno_status(injected), path, "write %s: %s (injected by OOC_FAULT)", path,
                            strerror(injected));
    return OOC_SUCCESS;
}

/* Write and flush s (records already counted by injected_failure). */
static ooc_status_t write_flush(int fd, const char *s, size_t len, const char *path, ooc_err_t *err)
{
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            return OOC_ERR_FILE(err, ooc_errno_status(e), path, "write %s: %s", path, strerror(e));
        }
        s += w;
        len -= (size_t)w;
    }
    return ooc_io_sync(fd, path, err);
}

static ooc_status_t write_all(int fd, const char *s, size_t len, const char *path, ooc_err_t *err)
{
    OOC_FORWARD(injected_failure(path, err));
    return write_flush(fd, s, len, path, err);
}

/* Whether the file open at fd (path) may be removed as a journal: one, or
 * empty (a journal whose creation was cut short: killed between its O_EXCL
 * create and its header, nothing in it to lose; left, it would refuse every
 * later run of the job); else OOC_ERR_JOURNAL. */
static ooc_status_t removable_fd(int fd, const char *path, ooc_err_t *err)
{
    char head[sizeof MAGIC_ANY - 1];
    ssize_t got;
    do
        got = pread(fd, head, sizeof head, 0);
    while (got < 0 && errno == EINTR);
    struct stat sb;
    int empty = got == 0 && fstat(fd, &sb) == 0 && sb.st_size == 0;
    if (!empty && (got != (ssize_t)sizeof head || memcmp(head, MAGIC_ANY, sizeof head) != 0))
        return OOC_ERR_FILE(err, OOC_ERR_JOURNAL, path,
                            "%s is not a libooc_gemm journal: refusing to remove or overwrite it (is the journal "
                            "path an input or another file by mistake?)",
                            path);
    return OOC_SUCCESS;
}

/* Open the old journal at path to remove it (*fd -1: none there, nothing
 * to remove; a name too long: none can be there). */
static ooc_status_t open_old(const char *path, int flags, int *fd, ooc_err_t *err)
{
    *fd = ooc_open_regular(path, flags | O_NOFOLLOW, NULL);
    if (*fd < 0 && errno != ENOENT && errno != ENAMETOOLONG) return open_failed("remove the old journal", path, err);
    return OOC_SUCCESS;
}

ooc_status_t ooc_journal_removable(const char *path, ooc_err_t *err)
{
    int fd;
    OOC_FORWARD(open_old(path, O_RDONLY, &fd, err));
    if (fd < 0) return OOC_SUCCESS;
    ooc_status_t st = removable_fd(fd, path, err);
    close(fd);
    return st;
}

ooc_status_t ooc_journal_remove(const char *path, ooc_err_t *err)
{
    int fd;
    OOC_FORWARD(open_old(path, O_RDWR, &fd, err));
    if (fd < 0) return OOC_SUCCESS;
    ooc_status_t st = removable_fd(fd, path, err);
    if (st == OOC_SUCCESS) st = ooc_fd_lock(fd, path, 0, err);
    /* ours now: remove it if the name still means this file */
    if (st == OOC_SUCCESS && ooc_fd_is_path(fd, path) && unlink(path) != 0 && errno != ENOENT)
        st = OOC_ERR_FILE(err, OOC_ERR_IO, path, "unlink %s: %s", path, strerror(errno));
    close(fd);
    return st;
}

static ooc_status_t keep_path(ooc_journal_t *j, const char *path, ooc_err_t *err)
{
    j->path = strdup(path);
    OOC_RETURN_ERROR_IF(j->path == NULL, err, OOC_ERR_HOST_MEMORY, "strdup: out of memory");
    return OOC_SUCCESS;
}

/* Locked, the journal fd must still be the file at path: a fresh start of
 * another job on the same output removes the journals nobody holds
 * (ooc_journal_remove), and may have taken this one between its open and
 * its lock; records written on would go to a file no resume reads. */
static ooc_status_t still_named(int fd, const char *path, ooc_err_t *err)
{
    if (ooc_fd_is_path(fd, path)) return OOC_SUCCESS;
    return OOC_ERR_FILE(err, OOC_ERR_BUSY, path,
                        "journal %s was removed or replaced as this job opened it: another job started on the same "
                        "output?", path);
}

ooc_status_t ooc_journal_create(ooc_journal_t *j, const char *path, const ooc_journal_head_t *head, ooc_err_t *err)
{
    j->fd = -1;
    j->path = NULL;
    char buf[HEAD_MAX_BYTES];
    int n = format_head(head, buf, sizeof buf - 32);
    OOC_RETURN_ERROR_IF(n < 0 || strchr(head->job, '\n') != NULL, err, OOC_ERR_INTERNAL,
                        "journal %s: the job's identity does not fit a line", path);
    j->digest = ooc_journal_hash(0, buf, (size_t)n);
    j->sums = head->version != 2;
    n += snprintf(buf + n, sizeof buf - (size_t)n, "head %016" PRIx64 "\n", j->digest);
    int made = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666);
    j->fd = ooc_fd_off_std(made);
    if (made >= 0 && j->fd < 0) { /* (made, but not moved above 2: not left there) */
        int e = errno;
        unlink(path);
        errno = e;
    }
    if (j->fd < 0) {
        int e = errno;
        if (e == EEXIST)
            return OOC_ERR_FILE(err, OOC_ERR_BUSY, path, "create journal %s: it appeared meanwhile (another job?)", path);
        if (e == ENAMETOOLONG) {
            char eb[160];
            return OOC_ERR_FILE(err, OOC_ERR_IO, path,
                                "create journal %s: %s: name the journal elsewhere (ooc_files_opts_t.journal; "
                                "oocgemm multiply --journal), or choose a shorter output name",
                                path, ooc_io_too_long(path, eb, sizeof eb));
        }
        return OOC_ERR_FILE(err, ooc_errno_status(e), path, "create journal %s: %s", path, strerror(e));
    }
    ooc_status_t st = keep_path(j, path, err);
    if (st == OOC_SUCCESS) st = ooc_fd_lock(j->fd, path, 0, err);
    if (st == OOC_SUCCESS) st = still_named(j->fd, path, err);
    if (st == OOC_SUCCESS) st = write_all(j->fd, buf, (size_t)n, path, err);
    /* its name durable too: a journal lost by a power failure while its
     * output survives would let a job computed in place (C0 its own
     * output, once committed) be computed again from that output */
    if (st == OOC_SUCCESS) st = ooc_io_sync_dir(path, err);
    if (st != OOC_SUCCESS) {
        close(j->fd);
        j->fd = -1;
        unlink(path); /* ours: created exclusively above */
        free(j->path);
        j->path = NULL;
    }
    return st;
}

ooc_status_t ooc_journal_append_open(ooc_journal_t *j, const char *path, const ooc_journal_info_t *info,
                                     ooc_err_t *err)
{
    j->path = NULL;
    j->fd = ooc_open_regular(path, O_RDWR | O_APPEND | O_NOFOLLOW, NULL);
    if (j->fd < 0) return open_failed("open journal", path, err);
    char buf[HEAD_MAX_BYTES];
    int n = format_head(&info->head, buf, sizeof buf);
    j->digest = n > 0 ? ooc_journal_hash(0, buf, (size_t)n) : 0;
    j->sums = info->head.version != 2;
    ooc_status_t st = keep_path(j, path, err);
    if (st == OOC_SUCCESS) st = ooc_fd_lock(j->fd, path, 0, err);
    if (st == OOC_SUCCESS) st = still_named(j->fd, path, err);
    if (st == OOC_SUCCESS) {
        /* cut a torn last line so that the next record starts on a line of its own */
        char tail[4096];
        off_t size = lseek(j->fd, 0, SEEK_END), from = size > (off_t)sizeof tail ? size - (off_t)sizeof tail : 0;
        ssize_t got = size > 0 ? pread(j->fd, tail, (size_t)(size - from), from) : 0;
        if (got > 0 && tail[got - 1] != '\n') {
            off_t keep = from;
            for (ssize_t i = got - 1; i >= 0; i--)
                if (tail[i] == '\n') {
                    keep = from + i + 1;
                    break;
                }
            if (ftruncate(j->fd, keep) != 0)
                st = OOC_ERR_FILE(err, OOC_ERR_IO, path, "ftruncate %s: %s", path, strerror(errno));
        }
    }
    if (st != OOC_SUCCESS) ooc_journal_close(j, 0);
    return st;
}

ooc_status_t ooc_journal_done(ooc_journal_t *j, int64_t g, const uint64_t *sum, ooc_err_t *err)
{
    char line[DONE_MAX];
    int len = format_done(j->digest, g, j->sums ? sum : NULL, line, sizeof line);
    return write_all(j->fd, line, (size_t)len, j->path, err);
}

/* Records of blocks g(0), g(1), ... g(n - 1) as ooc_journal_done writes
 * them, a megabyte at a time: one flush per megabyte, not one per block (a
 * write cut short by a kill leaves a torn last record, which a resume cuts
 * off: that block is redone). g(i) is list[i], or i's i-th block in
 * head's range when list is NULL. OOC_FAULT=journal counts a list's records
 * one by one (as written one by one before), head's range by megabytes. */
static ooc_status_t done_many(ooc_journal_t *j, const ooc_journal_rec_t *list, size_t n_list,
                              const ooc_journal_head_t *head, ooc_err_t *err)
{
    size_t cap = (size_t)1 << 20, n = 0;
    if (list && n_list < cap / DONE_MAX) cap = DONE_MAX * n_list + DONE_MAX; /* a batch: no more than its records need */
    char *buf = malloc(cap);
    OOC_RETURN_ERROR_IF(buf == NULL, err, OOC_ERR_HOST_MEMORY, "%s: out of memory (%zu bytes)", j->path, cap);
    /* a list's records were counted one by one (injected_failure below) */
    ooc_status_t (*flush)(int, const char *, size_t, const char *, ooc_err_t *) = list ? write_flush : write_all;
    ooc_status_t st = OOC_SUCCESS;
    int64_t end = list ? (int64_t)n_list : head->total;
    for (int64_t i = 0; i < end; i++) {
        if (!list && !ooc_journal_in_range(head, i)) continue;
        if (list && (st = injected_failure(j->path, err)) != OOC_SUCCESS) break; /* those before it still go */
        if (cap - n < DONE_MAX) {
            st = flush(j->fd, buf, n, j->path, err);
            n = 0;
            if (st != OOC_SUCCESS) break;
        }
        n += (size_t)format_done(j->digest, list ? list[i].g : i,
                                 list && list[i].has && j->sums ? &list[i].digest : NULL, buf + n, cap - n);
    }
    if (n > 0) { /* (after an injected fault, its own failure is the one reported) */
        ooc_err_t other;
        ooc_err_clear(&other);
        ooc_status_t w = flush(j->fd, buf, n, j->path, st == OOC_SUCCESS ? err : &other);
        if (st == OOC_SUCCESS) st = w;
    }
    free(buf);
    return st;
}

ooc_status_t ooc_journal_done_list(ooc_journal_t *j, const ooc_journal_rec_t *recs, size_t n, ooc_err_t *err)
{
    if (n == 1) return ooc_journal_done(j, recs[0].g, recs[0].has ? &recs[0].digest : NULL, err);
    return n == 0 ? OOC_SUCCESS : done_many(j, recs, n, NULL, err);
}

ooc_status_t ooc_journal_done_all(ooc_journal_t *j, const ooc_journal_head_t *head, ooc_err_t *err)
{
    return done_many(j, NULL, 0, head, err);
}

ooc_status_t ooc_journal_mixed(ooc_journal_t *j, ooc_err_t *err)
{
    char line[64];
    int len = format_mixed(j->digest, line, sizeof line);
    return write_all(j->fd, line, (size_t)len, j->path, err);
}

ooc_status_t ooc_journal_complete(ooc_journal_t *j, uint64_t size, int64_t mtime_sec, long mtime_nsec, ooc_err_t *err)
{
    char line[128];
    int len = format_complete(j->digest, size, mtime_sec, mtime_nsec, line, sizeof line);
    OOC_FORWARD(injected_failure(j->path, err));
    struct stat sb;
    if (fstat(j->fd, &sb) != 0) return OOC_ERR_FILE(err, OOC_ERR_IO, j->path, "fstat %s: %s", j->path, strerror(errno));
    ooc_status_t st = write_flush(j->fd, line, (size_t)len, j->path, err);
    int injected = st == OOC_SUCCESS ? ooc_fault_errno(OOC_FAULT_COMPLETE) : 0;
    if (injected)
        st = OOC_ERR_FILE(err, ooc_errno_status(injected), j->path, "fsync %s: %s (injected by OOC_FAULT)", j->path,
                          strerror(injected));
    /* A record whose write or flush failed may be on the disk all the
     * same: taken back, or the journal would vouch for an output that was
     * not sealed (its trailer goes back) and could never be found
     * committed (an in-place job's resume refused for good). Its blocks
     * before it were flushed already. */
    if (st != OOC_SUCCESS && ftruncate(j->fd, sb.st_size) == 0) (void)fsync(j->fd);
    return st;
}

void ooc_journal_close(ooc_journal_t *j, int remove_file)
{
    if (remove_file && j->path && j->fd >= 0 && ooc_fd_is_path(j->fd, j->path)) unlink(j->path);
    if (j->fd >= 0) close(j->fd);
    free(j->path);
    j->fd = -1;
    j->path = NULL;
}
