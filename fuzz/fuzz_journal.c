/* SPDX-License-Identifier: MIT */
/*
 * fuzz_journal.c: libFuzzer target for ooc_journal_parse (lib/journal.c),
 * the parser of the resume journal a resumed multiply trusts. The first
 * input byte picks a mode (byte % 3):
 *  0 raw:     the whole input (that byte too) is the journal: a real journal
 *             starts with 'o' (111 % 3 == 0), so real ones seed this mode;
 *  1 header:  the harness writes a valid header (magic, job, plan and its
 *             checksum, computed as the writer does) from the next input
 *             bytes, and the rest of the input follows verbatim as records;
 *  2 records: a valid header as in 1, then records built from the rest:
 *             correctly checksummed "done G" and "complete" records, out of
 *             range ones, records with one byte changed, raw bytes.
 * Invariants checked (abort() when one breaks):
 *  - a failure records its status and a non-empty message, and leaves
 *    info->done NULL (nothing to free);
 *  - a success has info->done allocated, ndone equal to the bits set among
 *    head.total (none beyond), prefix the length of the run of set bits from
 *    block 0, complete only with every block done;
 *  - modes 1 and 2: the header alone parses, giving back the head written;
 *  - mode 2: when every generated record is one the writer could have
 *    written, in an order it could have written them, the parse succeeds
 *    with exactly the generated set of blocks and completion; when a whole
 *    line is certainly damage (a block out of range, a completion before
 *    every block is done, a record after the completion), it fails.
 * Leaks are reported by LeakSanitizer.
 */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the largest journal this harness builds */
#define BUILD_CAP ((size_t)1 << 18)

/* ---- reading the input ---- */

typedef struct {
    const uint8_t *p;
    size_t n;
} in_t;

static unsigned byte(in_t *in)
{
    if (in->n == 0) return 0;
    in->n--;
    return *in->p++;
}

static uint64_t bytes(in_t *in, int k)
{
    uint64_t v = 0;
    for (int i = 0; i < k; i++) v = v << 8 | byte(in);
    return v;
}

/* ---- building a journal ---- */

typedef struct {
    char *buf;
    size_t len, cap;
} out_t;

static void put(out_t *o, const void *s, size_t n)
{
    if (o->len + n > o->cap) n = o->cap - o->len;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void puts_(out_t *o, const char *s) { put(o, s, strlen(s)); }

/* a valid head from the input; writes the header text (with its head line)
 * into o and returns its digest */
static uint64_t make_head(in_t *in, ooc_journal_head_t *h, out_t *o)
{
    memset(h, 0, sizeof *h);
    size_t jn = byte(in) % 200;
    for (size_t i = 0; i < jn; i++) {
        unsigned c = byte(in);
        h->job[i] = (char)(c == '\n' || c == '\0' ? '_' : c);
    }
    h->job[jn] = '\0';
    unsigned f = byte(in);
    h->swap = f & 1;
    h->resumable = (f >> 1) & 1;
    h->tail = (int)((f >> 2) % 7);
    h->b_chunks = 1 + (int)((f >> 5) & 7);
    h->mb = 1 + (int64_t)(bytes(in, 2));
    h->nb = (f & 0x10) ? (int64_t)(bytes(in, 8) & (uint64_t)INT64_MAX) : 1 + (int64_t)byte(in);
    if (h->nb < 1) h->nb = 1;
    h->kb = 1 + (int64_t)byte(in);
    unsigned t = byte(in);
    if (t == 0xff) /* rarely: a big job (up to 2^20 blocks: the parser allocates
                    * total / 8 bytes, and each input should stay fast) */
        h->total = 1 + (int64_t)(bytes(in, 3) % ((uint64_t)1 << 20));
    else
        h->total = 1 + (int64_t)(t % 80);
    h->out_dev = bytes(in, 2);
    h->out_ino = (f & 0x08) ? bytes(in, 8) : bytes(in, 2);

    char text[OOC_JOURNAL_JOB_MAX + 1024];
    int n = snprintf(text, sizeof text,
                     "oocgemm-journal 2\njob %s\nplan swap=%d mb=%" PRId64 " nb=%" PRId64 " kb=%" PRId64
                     " tail=%d chunks=%d blocks=%" PRId64 " resumable=%d out=%" PRIu64 ":%" PRIu64 "\n",
                     h->job, h->swap, h->mb, h->nb, h->kb, h->tail, h->b_chunks, h->total, h->resumable,
                     h->out_dev, h->out_ino);
    if (n < 0 || (size_t)n >= sizeof text) abort();
    uint64_t digest = ooc_journal_hash(0, text, (size_t)n);
    put(o, text, (size_t)n);
    snprintf(text, sizeof text, "head %016" PRIx64 "\n", digest);
    puts_(o, text);
    return digest;
}

static int record(char *line, size_t cap, uint64_t digest, const char *text)
{
    return snprintf(line, cap, "%s %016" PRIx64 "\n", text, ooc_journal_hash(digest, text, strlen(text)));
}

/* ---- checking a parse ---- */

static int bit(const unsigned char *set, int64_t g) { return (set[g / 8] >> (g % 8)) & 1; }

static void check_parse(ooc_status_t st, const ooc_err_t *err, const ooc_journal_info_t *info)
{
    if (st != OOC_SUCCESS) {
        if (err->status != st || err->msg[0] == '\0' || memchr(err->msg, '\0', sizeof err->msg) == NULL) abort();
        if (info->done != NULL) abort();
        return;
    }
    const ooc_journal_head_t *h = &info->head;
    if (h->total < 1 || h->total > OOC_JOURNAL_MAX_BLOCKS || info->done == NULL) abort();
    if (memchr(h->job, '\0', sizeof h->job) == NULL) abort();
    /* bytewise; the count only up to 2^24 blocks (a job may have 2^31: counting
     * those would take a second an input) */
    size_t nbytes = (size_t)(h->total + 7) / 8;
    if (h->total <= ((int64_t)1 << 24)) {
        int64_t n = 0;
        for (size_t i = 0; i < nbytes; i++) n += __builtin_popcount(info->done[i]);
        if (n != info->ndone) abort();
    } else if (info->ndone < 0 || info->ndone > h->total) {
        abort();
    }
    for (int64_t g = h->total; g < (int64_t)nbytes * 8; g++)
        if (bit(info->done, g)) abort();
    if (info->prefix < 0 || info->prefix > h->total) abort();
    for (int64_t i = 0; i < info->prefix / 8; i++)
        if (info->done[i] != 0xff) abort();
    for (int64_t g = info->prefix / 8 * 8; g < info->prefix; g++)
        if (!bit(info->done, g)) abort();
    if (info->prefix < h->total && bit(info->done, info->prefix)) abort();
    /* complete: every block of its range (the whole job's without one), and none outside it */
    if (info->complete && info->ndone != ooc_journal_range_blocks(h)) abort();
    if (h->range_m > 0 && h->total <= ((int64_t)1 << 16)) /* (bit by bit: small jobs only) */
        for (int64_t g = 0; g < h->total; g++)
            if (bit(info->done, g) && !ooc_journal_in_range(h, g)) abort();
    if (info->out_mtime_nsec < 0 || info->out_mtime_nsec >= 1000000000L) abort();
}

static ooc_status_t parse(const char *buf, size_t len, ooc_journal_info_t *info, ooc_err_t *err)
{
    /* an exact-size copy, so that AddressSanitizer sees a read past the end */
    char *copy = malloc(len ? len : 1);
    if (copy == NULL) abort();
    if (len) memcpy(copy, buf, len);
    ooc_err_clear(err);
    memset(info, 0x5a, sizeof *info);
    ooc_status_t st = ooc_journal_parse(copy, len, "fuzz.ooc-journal", info, err);
    free(copy);
    check_parse(st, err, info);
    return st;
}

static int same_head(const ooc_journal_head_t *a, const ooc_journal_head_t *b)
{
    return strcmp(a->job, b->job) == 0 && a->swap == b->swap && a->mb == b->mb && a->nb == b->nb && a->kb == b->kb &&
           a->tail == b->tail && a->b_chunks == b->b_chunks && a->total == b->total &&
           a->resumable == b->resumable && a->out_dev == b->out_dev && a->out_ino == b->out_ino;
}

/* ---- the modes ---- */

enum { EXPECT_ANY, EXPECT_OK, EXPECT_FAIL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ooc_journal_info_t info;
    ooc_err_t err;
    if (size == 0) return 0;
    unsigned mode = data[0] % 3;
    if (mode == 0) {
        if (parse((const char *)data, size, &info, &err) == OOC_SUCCESS) ooc_journal_info_free(&info);
        return 0;
    }
    in_t in = {data + 1, size - 1};

    out_t o = {malloc(BUILD_CAP), 0, BUILD_CAP};
    if (o.buf == NULL) abort();
    ooc_journal_head_t head;
    uint64_t digest = make_head(&in, &head, &o);

    /* the header alone is a valid journal with nothing done */
    if (parse(o.buf, o.len, &info, &err) != OOC_SUCCESS) abort();
    if (!same_head(&info.head, &head) || info.ndone != 0 || info.prefix != 0 || info.complete) abort();
    ooc_journal_info_free(&info);

    int expect = EXPECT_OK;
    unsigned char *model = NULL;
    int64_t mdone = 0;
    int mcomplete = 0;
    if (mode == 1) {
        put(&o, in.p, in.n);
        expect = in.n == 0 ? EXPECT_OK : EXPECT_ANY;
    } else {
        /* the model only for jobs small enough to keep a bitmap cheaply */
        if (head.total <= 4096) {
            model = calloc((size_t)(head.total + 7) / 8, 1);
            if (model == NULL) abort();
        } else {
            expect = EXPECT_ANY;
        }
        char text[96], line[160];
        while (in.n > 0 && o.len < o.cap) {
            unsigned op = byte(&in);
            switch (op % 5) {
            case 0:
            case 1: { /* a done record, in range or a little past the end */
                int64_t g = (int64_t)(bytes(&in, 2) % (uint64_t)(head.total + 2));
                if (head.total > 4096 && (op & 0x80)) g = head.total - 1 - g % head.total;
                snprintf(text, sizeof text, "done %" PRId64, g);
                put(&o, line, (size_t)record(line, sizeof line, digest, text));
                if (g >= head.total || mcomplete) {
                    if (expect == EXPECT_OK) expect = EXPECT_FAIL;
                } else if (model && !bit(model, g)) {
                    model[g / 8] |= (unsigned char)(1u << (g % 8));
                    mdone++;
                }
                break;
            }
            case 2: { /* a completion record */
                uint64_t sz = bytes(&in, (op & 0x80) ? 8 : 3);
                int64_t sec = (int64_t)(bytes(&in, (op & 0x40) ? 8 : 4) & (uint64_t)INT64_MAX);
                long nsec = (long)(bytes(&in, 4) % 1000000000u);
                snprintf(text, sizeof text, "complete %" PRIu64 ":%" PRId64 ".%09ld", sz, sec, nsec);
                put(&o, line, (size_t)record(line, sizeof line, digest, text));
                if (mcomplete || mdone != head.total) {
                    if (expect == EXPECT_OK) expect = EXPECT_FAIL;
                } else {
                    mcomplete = 1;
                }
                break;
            }
            case 3: { /* a done record with one byte changed */
                int64_t g = (int64_t)(bytes(&in, 2) % (uint64_t)head.total);
                snprintf(text, sizeof text, "done %" PRId64, g);
                int n = record(line, sizeof line, digest, text);
                unsigned at = byte(&in) % (unsigned)n;
                line[at] = (char)byte(&in);
                put(&o, line, (size_t)n);
                expect = EXPECT_ANY;
                break;
            }
            default: { /* raw bytes */
                size_t n = byte(&in) % 64;
                if (n > in.n) n = in.n;
                put(&o, in.p, n);
                in.p += n;
                in.n -= n;
                expect = EXPECT_ANY;
                break;
            }
            }
        }
        if (o.len == o.cap) expect = EXPECT_ANY;
    }

    ooc_status_t st = parse(o.buf, o.len, &info, &err);
    if (expect == EXPECT_FAIL && st == OOC_SUCCESS) abort();
    if (expect == EXPECT_OK) {
        if (st != OOC_SUCCESS) abort();
        if (model) {
            if (info.ndone != mdone || info.complete != mcomplete) abort();
            if (memcmp(info.done, model, (size_t)(head.total + 7) / 8) != 0) abort();
        }
    }
    if (st == OOC_SUCCESS) {
        if (!same_head(&info.head, &head)) abort();
        ooc_journal_info_free(&info);
    }
    free(model);
    free(o.buf);
    return 0;
}
