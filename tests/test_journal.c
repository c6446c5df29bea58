/* SPDX-License-Identifier: MIT */
/*
 * test_journal.c: the resume journal (lib/journal.c) on its own: what the
 * writer writes the parser reads back (blocks in any order, duplicates, a
 * torn last record, the completion record); every kind of damage is refused
 * naming the line, never read as other blocks (a forged record, a block past
 * the end, a line starting with NUL, an edited plan, records after the
 * completion); a stale journal is only ever removed when it is one (never an
 * input named by mistake, a symbolic link or a FIFO), and never while another
 * job holds it.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "journal.h"
#include "testutil.h"


static ooc_journal_head_t head_of(int64_t total)
{
    ooc_journal_head_t h;
    memset(&h, 0, sizeof h);
    snprintf(h.job, sizeof h.job, "dtype=2 ta=111 tb=111 A=1:2:3 B=4:5:6 C0=none");
    h.swap = 0;
    h.mb = 576;
    h.nb = 2000;
    h.kb = 2500;
    h.tail = 3;
    h.b_chunks = 8;
    h.a_pieces = 1;
    h.total = total;
    h.resumable = 1;
    h.out_dev = 65024;
    h.out_ino = 1234567;
    return h;
}

/* The whole file into a malloc'd buffer. */
static char *slurp(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    char *buf = malloc((1 << 20) + 1);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    buf[*len] = '\0'; /* (strstr on it) */
    return buf;
}

static void spit(const char *path, const char *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(buf, 1, len, f), len);
    fclose(f);
}

/* A journal of 13 blocks with blocks `done` recorded, optionally complete. */
static void write_journal(const char *path, const int64_t *done, int n, int complete)
{
    unlink(path);
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_journal_t j;
    ooc_journal_head_t h = head_of(13);
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, path, &h, &err), OOC_SUCCESS);
    for (int i = 0; i < n; i++) CU_ASSERT_EQUAL(ooc_journal_done(&j, done[i], NULL, &err), OOC_SUCCESS);
    if (complete) CU_ASSERT_EQUAL(ooc_journal_complete(&j, 96000128, 1795346696, 254749274, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
}

static ooc_status_t parse_text(const char *buf, size_t len, ooc_journal_info_t *info, ooc_err_t *err)
{
    ooc_err_clear(err);
    return ooc_journal_parse(buf, len, "j", info, err);
}

/* A journal at p whose plan line ends with `add` (the writer's header
 * otherwise, no records) is damage: line 3. */
static void forged_refused(const char *p, const char *add)
{
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_journal_t j;
    ooc_journal_info_t info;
    ooc_journal_head_t h = head_of(13);
    unlink(p);
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, p, &h, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    size_t len = 0;
    char *text = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *eol = strstr(text, "1234567\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(eol);
    size_t at = (size_t)(eol + 7 - text), n = strlen(add);
    char *buf = malloc(len + n);
    memcpy(buf, text, at);
    memcpy(buf + at, add, n);
    memcpy(buf + at + n, text + at, len - at);
    CU_ASSERT_EQUAL(parse_text(buf, len + n, &info, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 3"));
    free(buf);
    free(text);
}

/* The flusher's batch (ooc_journal_done_list): 60000 records of blocks in
 * a scrambled order, over a megabyte, so written in several flushes, those
 * of blocks that are multiples of 4 with the digest of their data; read
 * back, exactly those blocks are done (the others not), and exactly the
 * multiples of 4 have their digests. */
static uint64_t sum_of(int64_t g) { return (uint64_t)g * 0x9e3779b97f4a7c15ULL ^ 0x0123456789abcdefULL; }

static void test_batch_roundtrip(void)
{
    const char *p = tu_path("jbatch");
    enum { TOTAL = 120001, N = 60000 };
    ooc_journal_rec_t *list = malloc(N * sizeof *list);
    CU_ASSERT_PTR_NOT_NULL_FATAL(list);
    for (int64_t i = 0; i < N; i++) { /* the even blocks, 7919 prime to N */
        list[i].g = (i * 7919) % N * 2;
        list[i].has = list[i].g % 4 == 0;
        list[i].digest = list[i].has ? sum_of(list[i].g) : 0;
    }
    unlink(p);
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_journal_t j;
    ooc_journal_head_t h = head_of(TOTAL);
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, p, &h, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done_list(&j, list, 0, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done_list(&j, list, N - 1, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done_list(&j, list + N - 1, 1, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    struct stat sb;
    CU_ASSERT(stat(p, &sb) == 0 && sb.st_size > (1 << 20));
    ooc_journal_info_t info;
    int exists = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(p, &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(info.ndone, N);
    CU_ASSERT_EQUAL(info.nsums, N / 2);
    int wrong = 0, wrong_sum = 0;
    for (int64_t g = 0; g < TOTAL; g++) {
        wrong += ((info.done[g / 8] >> (g % 8)) & 1) != (g % 2 == 0 && g < 2 * N);
        uint64_t d = 0;
        int has = ooc_journal_sum(&info, g, &d);
        wrong_sum += has != (g % 4 == 0 && g < 2 * N) || (has && d != sum_of(g));
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(wrong_sum, 0);
    ooc_journal_info_free(&info);
    free(list);
}

/* A block recorded again (computed again after its bytes did not match) is
 * as its last record says: a new digest, or none; a digest edited in the
 * journal is damage, named by its line. */
static void test_digest_records(void)
{
    const char *p = tu_path("jdigest");
    unlink(p);
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_journal_t j;
    ooc_journal_head_t h = head_of(10);
    uint64_t d1 = 0x1111222233334444ULL, d2 = 0xfedcba9876543210ULL, d0 = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, p, &h, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 3, &d1, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 5, &d1, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 7, &d0, &err), OOC_SUCCESS); /* a digest of 0 is a digest */
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 3, &d2, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 5, NULL, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    ooc_journal_info_t info;
    int exists = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(p, &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(info.ndone, 3);
    uint64_t d = 1;
    CU_ASSERT(ooc_journal_sum(&info, 3, &d) && d == d2);
    CU_ASSERT(ooc_journal_sum(&info, 7, &d) && d == 0);
    CU_ASSERT_FALSE(ooc_journal_sum(&info, 5, &d));
    CU_ASSERT_FALSE(ooc_journal_sum(&info, 4, &d));
    ooc_journal_info_free(&info);
    /* the digest of block 3's first record edited: damage, at its line (5) */
    size_t len = 0;
    char *text = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *at = strstr(text, "data=1111222233334444");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    at[5] = '2';
    CU_ASSERT_EQUAL(parse_text(text, len, &info, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 5"));
    at[5] = '1';
    CU_ASSERT_EQUAL(parse_text(text, len, &info, &err), OOC_SUCCESS);
    ooc_journal_info_free(&info);
    free(text);
}

/* A journal of version 2 (written before digests, by an older library) is
 * read, and appended to as version 2: its records without digests (the
 * older library can still read it), whatever digests are given. */
static void test_version2(void)
{
    const char *p = tu_path("jv2");
    unlink(p);
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_journal_t j;
    ooc_journal_head_t h = head_of(10);
    h.version = 2;
    uint64_t d = 0x1234567890abcdefULL;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, p, &h, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 2, &d, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    ooc_journal_info_t info;
    int exists = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(p, &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(info.head.version, 2);
    CU_ASSERT_EQUAL(info.ndone, 1);
    CU_ASSERT_EQUAL(info.nsums, 0);
    CU_ASSERT_EQUAL_FATAL(ooc_journal_append_open(&j, p, &info, &err), OOC_SUCCESS);
    ooc_journal_rec_t r[2] = {{4, d, 1}, {6, d, 1}};
    CU_ASSERT_EQUAL(ooc_journal_done_list(&j, r, 2, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    ooc_journal_info_free(&info);
    size_t len = 0;
    char *text = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT(strncmp(text, "oocgemm-journal 2\n", 18) == 0);
    CU_ASSERT_PTR_NULL(strstr(text, "data="));
    CU_ASSERT_EQUAL_FATAL(parse_text(text, len, &info, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(info.ndone, 3);
    CU_ASSERT_EQUAL(info.nsums, 0);
    ooc_journal_info_free(&info);
    free(text);
    /* the same job as version 3: its records hold the digests */
    unlink(p);
    h.version = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, p, &h, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 2, &d, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    text = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT(strncmp(text, "oocgemm-journal 3\n", 18) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "done 2 data=1234567890abcdef "));
    free(text);
}

static void test_roundtrip(void)
{
    const char *p = tu_path("j1");
    int64_t done[] = {0, 1, 2, 5, 3, 3, 7}; /* any order, a duplicate */
    write_journal(p, done, 7, 0);
    ooc_journal_info_t info;
    ooc_err_t err;
    ooc_err_clear(&err);
    int exists = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(p, &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(exists, 1);
    ooc_journal_head_t h = head_of(13);
    CU_ASSERT_STRING_EQUAL(info.head.job, h.job);
    CU_ASSERT(info.head.mb == 576 && info.head.nb == 2000 && info.head.kb == 2500 && info.head.tail == 3 &&
              info.head.b_chunks == 8 && info.head.total == 13 && info.head.resumable == 1 &&
              info.head.out_dev == 65024 && info.head.out_ino == 1234567);
    CU_ASSERT_EQUAL(info.ndone, 6);  /* 0 1 2 3 5 7 */
    CU_ASSERT_EQUAL(info.prefix, 4); /* 0..3 without a gap */
    CU_ASSERT_FALSE(info.complete);
    ooc_journal_info_free(&info);

    /* complete */
    int64_t all[13];
    for (int i = 0; i < 13; i++) all[i] = 12 - i;
    write_journal(p, all, 13, 1);
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(p, &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT(info.complete && info.ndone == 13 && info.prefix == 13 && info.out_size == 96000128 &&
              info.out_mtime_sec == 1795346696 && info.out_mtime_nsec == 254749274);
    ooc_journal_info_free(&info);

    /* none there */
    CU_ASSERT_EQUAL(ooc_journal_read(tu_path("nothing"), &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(exists, 0);
}

/* The plan of several devices: " lead=N rep=R" end the plan line and read
 * back, and " pieces=K" for A's blocks in k-pieces; a journal without them
 * (one device, whole blocks) reads lead 1, rep 1, pieces 1; a journal naming
 * rep=1 or pieces=1 (not what the writer writes) is damage. */
static void test_lead_and_rep(void)
{
    const char *p = tu_path("jrep");
    unlink(p);
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_journal_t j;
    ooc_journal_head_t h = head_of(13);
    h.lead = 3;
    h.tail_rep = 2;
    h.a_pieces = 16;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, p, &h, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 11, NULL, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    size_t len = 0;
    char *text = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, " out=65024:1234567 lead=3 rep=2 pieces=16\n"));
    ooc_journal_info_t info;
    CU_ASSERT_EQUAL_FATAL(parse_text(text, len, &info, &err), OOC_SUCCESS);
    CU_ASSERT(info.head.lead == 3 && info.head.tail_rep == 2 && info.head.a_pieces == 16 && info.ndone == 1);
    ooc_journal_info_free(&info);
    free(text);

    write_journal(p, NULL, 0, 0); /* one device: neither key */
    text = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NULL(strstr(text, "rep="));
    CU_ASSERT_PTR_NULL(strstr(text, "pieces="));
    CU_ASSERT_EQUAL_FATAL(parse_text(text, len, &info, &err), OOC_SUCCESS);
    CU_ASSERT(info.head.lead == 1 && info.head.tail_rep == 1 && info.head.a_pieces == 1);
    ooc_journal_info_free(&info);
    free(text);

    static const char *forged[] = {" rep=1", " rep=0", " rep=17", " lead=2 rep=x", " pieces=1", " pieces=0",
                                   " pieces=65", " pieces=-3"};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) forged_refused(p, forged[i]);
}

/* What computed the blocks ends the plan line (" by=ID", after a range,
 * the output's birth time " born=SEC.NSEC" and its id " id=HEX") and reads back; a journal without it (written
 * before it was recorded) reads ""; an empty, spaced, '=' or over-long one is damage, as is an id of other than
 * 16 lower-case hex digits, or 0. */
static void test_by(void)
{
    const char *p = tu_path("jby");
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_journal_t j;
    ooc_journal_info_t info;
    size_t len = 0;
    static const char *ids[] = {"cublas/13.0.2/sm_90x132+sm_80x108", "host/openblas-0.3.21/Haswell"};
    for (int i = 0; i < 2; i++) {
        ooc_journal_head_t h = head_of(13);
        snprintf(h.by, sizeof h.by, "%s", ids[i]);
        if (i == 1) {
            h.range_b0 = 1;
            h.range_b1 = 3;
            h.range_m = 13;
            h.out_born_sec = 1795464252; /* the output's birth time, before what computed it */
            h.out_born_nsec = 36882445;
            h.out_id = 0x0123456789abcdefULL; /* the temporary file's own id */
        }
        unlink(p);
        CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, p, &h, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_journal_done(&j, 2, NULL, &err), OOC_SUCCESS);
        ooc_journal_close(&j, 0);
        char *text = slurp(p, &len), want[300];
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        snprintf(want, sizeof want, " out=65024:1234567%s by=%s\n",
                 i == 1 ? " range=1-3/13 born=1795464252.036882445 id=0123456789abcdef" : "", ids[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
        CU_ASSERT_EQUAL_FATAL(parse_text(text, len, &info, &err), OOC_SUCCESS);
        CU_ASSERT_STRING_EQUAL(info.head.by, ids[i]);
        CU_ASSERT(info.ndone == 1 && info.head.range_m == (i == 1 ? 13 : 0));
        CU_ASSERT(info.head.out_born_sec == (i == 1 ? 1795464252 : 0) && info.head.out_born_nsec == (i == 1 ? 36882445 : 0));
        CU_ASSERT(info.head.out_id == (i == 1 ? 0x0123456789abcdefULL : 0));
        ooc_journal_info_free(&info);
        free(text);
    }
    write_journal(p, NULL, 0, 0); /* none recorded */
    char *text = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NULL(strstr(text, " by="));
    CU_ASSERT_EQUAL_FATAL(parse_text(text, len, &info, &err), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(info.head.by, "");
    ooc_journal_info_free(&info);
    free(text);

    char longid[400] = " by=";
    memset(longid + 4, 'x', 300);
    longid[304] = '\0';
    const char *forged[] = {" by=", " by=a b", " by=a=b", " by=sm\xc3\xa9", longid, " born=1.1000000000",
                            " born=1.5", " born=x", " born=01.000000001", " id=", " id=0000000000000000",
                            " id=0123456789ABCDEF", " id=123456789abcdef", " id=0x23456789abcdef", " id=-123456789abcdef",
                            " id=0123456789abcdef0", " id=0123456789abcdeg"};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) forged_refused(p, forged[i]);
}

/* A rectangle of C (a job split as a grid): " panels=P0-P1/NP" after the
 * range, which may then be all the rows; its done records are of its
 * blocks alone, and it is complete with those. Panels without a range, all
 * of them, or a count that does not divide the panels, are damage. */
static void test_panels(void)
{
    const char *p = tu_path("jpanels");
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_journal_t j;
    ooc_journal_info_t info;
    size_t len = 0;
    for (int rows = 0; rows < 2; rows++) {
        ooc_journal_head_t h = head_of(24); /* 4 blocks x 3 panels x 2 k-panels */
        h.range_b0 = rows ? 1 : 0;
        h.range_b1 = rows ? 3 : 4;
        h.range_m = 4;
        h.range_p0 = 1;
        h.range_p1 = 2;
        h.range_np = 3;
        CU_ASSERT_EQUAL(ooc_journal_range_blocks(&h), rows ? 4 : 8);
        int64_t in = 0;
        for (int64_t g = 0; g < 24; g++) {
            int want = g % 4 >= h.range_b0 && g % 4 < h.range_b1 && (g / 4) % 3 == 1;
            CU_ASSERT_EQUAL(ooc_journal_in_range(&h, g), want);
            in += want;
        }
        CU_ASSERT_EQUAL(in, ooc_journal_range_blocks(&h));
        unlink(p);
        CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, p, &h, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_journal_done_all(&j, &h, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_journal_complete(&j, 96000128, 1795346696, 254749274, &err), OOC_SUCCESS);
        ooc_journal_close(&j, 0);
        char *text = slurp(p, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, rows ? " range=1-3/4 panels=1-2/3\n" : " range=0-4/4 panels=1-2/3\n"));
        CU_ASSERT_EQUAL_FATAL(parse_text(text, len, &info, &err), OOC_SUCCESS);
        CU_ASSERT(info.complete && info.ndone == in);
        CU_ASSERT(info.head.range_p0 == 1 && info.head.range_p1 == 2 && info.head.range_np == 3);
        ooc_journal_info_free(&info);
        /* a block of another panel, recorded with its checksum: damage */
        unlink(p);
        CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, p, &h, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_journal_done(&j, 5, NULL, &err), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_journal_done(&j, 1, NULL, &err), OOC_SUCCESS); /* panel 0 */
        ooc_journal_close(&j, 0);
        char *bad = slurp(p, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
        CU_ASSERT_EQUAL(parse_text(bad, len, &info, &err), OOC_ERR_JOURNAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 6"));
        free(bad);
        free(text);
    }
    const char *forged[] = {" panels=1-2/3", " range=0-13/13", " range=1-3/13 panels=0-1/1", " range=1-3/13 panels=0-2/3",
                            " range=1-3/13 panels=1-1/1", " range=1-3/13 panels=-1-1/1", " range=1-3/13 panels=x"};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) forged_refused(p, forged[i]);
}

/* A resume that mixed computers marks the journal: "mixed" reads back
 * (after any record, any number of times, the blocks unchanged); forged,
 * edited or after the completion record it is damage. */
static void test_mixed(void)
{
    const char *p = tu_path("jmixed");
    int64_t done[] = {0, 4};
    write_journal(p, done, 2, 0);
    ooc_err_t err;
    ooc_err_clear(&err);
    ooc_journal_info_t info;
    int exists = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(p, &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(info.mixed, 0);
    ooc_journal_t j;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_append_open(&j, p, &info, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_mixed(&j, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 5, NULL, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_mixed(&j, &err), OOC_SUCCESS); /* a second resume: harmless */
    ooc_journal_close(&j, 0);
    ooc_journal_info_free(&info);
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(p, &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT(info.mixed == 1 && info.ndone == 3 && info.complete == 0);
    ooc_journal_info_free(&info);

    size_t len = 0;
    char *good = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(good);
    char *m = strstr(good, "mixed ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    char *buf = malloc(len + 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    static const char *edits[] = {"mixed 0123456789abcdef", "mixed", "mixed  "};
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        size_t at = (size_t)(m - good), rec = strcspn(m, "\n"), n = strlen(edits[i]);
        memcpy(buf, good, at);
        memcpy(buf + at, edits[i], n);
        memcpy(buf + at + n, m + rec, len - at - rec);
        CU_ASSERT_EQUAL(parse_text(buf, len - rec + n, &info, &err), OOC_ERR_JOURNAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is not a record of this job"));
    }
    /* after the completion record: nothing may follow it */
    char mixed[64];
    size_t rec = strcspn(m, "\n") + 1;
    CU_ASSERT_FATAL(rec < sizeof mixed);
    memcpy(mixed, m, rec);
    int64_t all[13];
    for (int i = 0; i < 13; i++) all[i] = i;
    write_journal(p, all, 13, 1);
    free(good);
    good = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(good);
    free(buf);
    buf = malloc(len + rec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    memcpy(buf, good, len);
    memcpy(buf + len, mixed, rec);
    CU_ASSERT_EQUAL(parse_text(buf, len, &info, &err), OOC_SUCCESS);
    ooc_journal_info_free(&info);
    CU_ASSERT_EQUAL(parse_text(buf, len + rec, &info, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nothing may follow the completion record"));
    free(buf);
    free(good);
}

/* A record cut by a crash is ignored (that block is redone), and reopening
 * to append cuts it off so the next record starts on a line of its own. */
static void test_torn_record(void)
{
    const char *p = tu_path("j2");
    int64_t done[] = {0, 1, 2};
    write_journal(p, done, 3, 0);
    size_t len = 0;
    char *buf = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    memcpy(buf + len, "done 3 0123", 11); /* torn: no newline */
    spit(p, buf, len + 11);
    ooc_journal_info_t info;
    ooc_err_t err;
    ooc_err_clear(&err);
    int exists;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(p, &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(info.ndone, 3);
    ooc_journal_t j;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_append_open(&j, p, &info, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 3, NULL, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    ooc_journal_info_free(&info);
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(p, &info, &exists, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(info.ndone, 4);
    CU_ASSERT_EQUAL(info.prefix, 4);
    ooc_journal_info_free(&info);
    free(buf);
}

/* Every damaged variant of a good journal is refused with OOC_ERR_JOURNAL;
 * before version 2 an added "done" line made rows never computed count as
 * done, and a line starting with NUL was read out of bounds. */
static void test_damage_refused(void)
{
    const char *p = tu_path("j3");
    int64_t done[] = {0, 1, 2, 3};
    write_journal(p, done, 4, 0);
    size_t len = 0;
    char *good = slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(good);
    char *buf = malloc(len + 4096);
    ooc_journal_info_t info;
    ooc_err_t err;
    CU_ASSERT_EQUAL_FATAL(parse_text(good, len, &info, &err), OOC_SUCCESS);
    ooc_journal_info_free(&info);

    static const char *appended[] = {
        "done 4 0123456789abcdef\n",  /* forged: checksum of nothing */
        "done 12\n",                  /* no checksum */
        "done 13 0000000000000000\n", /* past the end */
        "done -1 0000000000000000\n",
        "\0done 5 x\n", /* a line starting with NUL (the fuzzer's find) */
        "garbage\n",
        "complete 1:2.3 0000000000000000\n", /* completion before every block, forged */
        "\n",
    };
    static const size_t appended_len[] = {24, 8, 25, 25, 10, 8, 32, 1};
    for (size_t i = 0; i < sizeof appended / sizeof appended[0]; i++) {
        memcpy(buf, good, len);
        memcpy(buf + len, appended[i], appended_len[i]);
        ooc_status_t st = parse_text(buf, len + appended_len[i], &info, &err);
        CU_ASSERT_EQUAL(st, OOC_ERR_JOURNAL);
        CU_ASSERT(strstr(err.msg, "line 9") != NULL || strstr(err.msg, "damaged") != NULL);
        if (st == OOC_SUCCESS) ooc_journal_info_free(&info);
    }
    /* a real record of block 4 copied from another journal of another job */
    ooc_journal_head_t other = head_of(13);
    other.mb = 577;
    ooc_err_clear(&err);
    unlink(tu_path("j3o"));
    ooc_journal_t j;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, tu_path("j3o"), &other, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_done(&j, 4, NULL, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    size_t olen = 0;
    char *o = slurp(tu_path("j3o"), &olen);
    const char *rec = strstr(o, "done 4 ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    memcpy(buf, good, len);
    memcpy(buf + len, rec, strlen(rec));
    CU_ASSERT_EQUAL(parse_text(buf, len + strlen(rec), &info, &err), OOC_ERR_JOURNAL);
    free(o);

    /* edits in the header: each byte changed somewhere in the first 4 lines */
    const char *edits[][2] = {{"mb=576", "mb=577"}, {"mb=576", "mb=+76"}, {"tail=3", "tail=2"},
                              {"chunks=8", "chunks=1"}, {"blocks=13", "blocks=14"}, {"out=65024", "out=65025"},
                              {"ta=111", "ta=112"}, {"oocgemm-journal 3", "oocgemm-journal 1"},
                              {"oocgemm-journal 3", "oocgemm-journal 2"}};
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        memcpy(buf, good, len);
        char *at = memmem(buf, len, edits[i][0], strlen(edits[i][0]));
        CU_ASSERT_PTR_NOT_NULL_FATAL(at);
        memcpy(at, edits[i][1], strlen(edits[i][1]));
        CU_ASSERT_EQUAL(parse_text(buf, len, &info, &err), OOC_ERR_JOURNAL);
    }
    /* a record with its number written differently */
    memcpy(buf, good, len);
    char *d3 = memmem(buf, len, "done 3 ", 7);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d3);
    d3[5] = '+';
    CU_ASSERT_EQUAL(parse_text(buf, len, &info, &err), OOC_ERR_JOURNAL);
    /* nothing after the completion record */
    int64_t all[13];
    for (int i = 0; i < 13; i++) all[i] = i;
    write_journal(p, all, 13, 1);
    size_t clen = 0;
    char *c = slurp(p, &clen);
    char *rec0 = strstr(c, "done 0 ");
    size_t r0 = (size_t)(strchr(rec0, '\n') - rec0) + 1;
    memcpy(c + clen, rec0, r0);
    CU_ASSERT_EQUAL(parse_text(c, clen + r0, &info, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "completion"));
    /* a completion record (its own checksum good) after a block's record
     * was cut out: damage, not a complete job short of a block (a reader
     * that did not count the blocks passed every test) */
    char *rec5 = strstr(c, "done 5 ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec5);
    size_t r5 = (size_t)(strchr(rec5, '\n') - rec5) + 1;
    memmove(rec5, rec5 + r5, clen - (size_t)(rec5 - c) - r5);
    CU_ASSERT_EQUAL(parse_text(c, clen - r5, &info, &err), OOC_ERR_JOURNAL);
    /* not a journal, empty, another version */
    CU_ASSERT_EQUAL(parse_text("", 0, &info, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_EQUAL(parse_text("hello\n", 6, &info, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_EQUAL(parse_text("oocgemm-journal 1\njob x\n", 24, &info, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "another version"));
    /* the header alone, torn */
    CU_ASSERT_EQUAL(parse_text(good, 30, &info, &err), OOC_ERR_JOURNAL);
    free(c);
    free(buf);
    free(good);
}

/* Random single-byte corruptions of a good journal: never a crash, and
 * never more blocks than were recorded. */
static void test_random_corruption(void)
{
    const char *p = tu_path("j4");
    int64_t done[] = {0, 1, 2, 3, 4};
    write_journal(p, done, 5, 0);
    size_t len = 0;
    char *good = slurp(p, &len);
    char *buf = malloc(len);
    uint64_t s = 12345;
    int refused = 0, accepted = 0;
    for (int t = 0; t < 4000; t++) {
        memcpy(buf, good, len);
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t at = (size_t)(s >> 33) % len;
        unsigned char v = (unsigned char)(s >> 20);
        if (buf[at] == (char)v) continue;
        buf[at] = (char)v;
        ooc_journal_info_t info;
        ooc_err_t err;
        ooc_status_t st = parse_text(buf, len, &info, &err);
        if (st == OOC_SUCCESS) {
            /* only a change to the last record's bytes may leave it torn (ignored) */
            CU_ASSERT(info.ndone <= 5 && info.prefix <= 5);
            accepted++;
            ooc_journal_info_free(&info);
        } else {
            CU_ASSERT_EQUAL(st, OOC_ERR_JOURNAL);
            refused++;
        }
    }
    CU_ASSERT(refused > 3000);
    free(buf);
    free(good);
    (void)accepted;
}

/* Removing a stale journal removes only a journal. */
static void test_remove_only_journals(void)
{
    ooc_err_t err;
    ooc_err_clear(&err);
    /* an input named as the journal by mistake: refused, untouched */
    const char *in = tu_path("input.npy");
    spit(in, "\x93NUMPY data data", 16);
    CU_ASSERT_EQUAL(ooc_journal_remove(in, &err), OOC_ERR_JOURNAL);
    struct stat sb;
    CU_ASSERT_EQUAL(stat(in, &sb), 0);
    CU_ASSERT_EQUAL(sb.st_size, 16);
    /* a symbolic link to a journal: refused, neither removed */
    const char *j = tu_path("j5");
    write_journal(j, NULL, 0, 0);
    const char *link = tu_path("j5link");
    unlink(link);
    CU_ASSERT_EQUAL_FATAL(symlink(j, link), 0);
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_journal_remove(link, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_EQUAL(lstat(link, &sb), 0);
    CU_ASSERT_EQUAL(stat(j, &sb), 0);
    /* a FIFO: refused at once (never waited on) */
    const char *fifo = tu_path("fifo");
    unlink(fifo);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    alarm(10);
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_journal_remove(fifo, &err), OOC_ERR_JOURNAL);
    alarm(0);
    /* a directory: refused as not a journal (it said OOC_ERR_IO, "Is a
     * directory", where reading a journal there says OOC_ERR_JOURNAL) */
    const char *dir = tu_path("jdir");
    rmdir(dir);
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_journal_remove(dir, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a regular file"));
    ooc_journal_info_t info;
    int exists = 0;
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_journal_read(dir, &info, &exists, &err), OOC_ERR_JOURNAL);
    CU_ASSERT_EQUAL(stat(dir, &sb), 0);
    /* a journal another job holds: busy, kept */
    ooc_journal_t held;
    ooc_journal_head_t h = head_of(13);
    const char *j6 = tu_path("j6");
    unlink(j6);
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&held, j6, &h, &err), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_journal_remove(j6, &err), OOC_ERR_BUSY);
    CU_ASSERT_EQUAL(stat(j6, &sb), 0);
    /* and it cannot be created twice */
    ooc_journal_t again;
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_journal_create(&again, j6, &h, &err), OOC_ERR_BUSY);
    ooc_journal_close(&held, 0);
    /* a journal: removed; nothing there: fine */
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL(ooc_journal_remove(j6, &err), OOC_SUCCESS);
    CU_ASSERT_NOT_EQUAL(stat(j6, &sb), 0);
    CU_ASSERT_EQUAL(ooc_journal_remove(j6, &err), OOC_SUCCESS);
}

int main(void)
{
    if (tu_dir_make("journal") != 0) return 1;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("journal", NULL, NULL);
    CU_add_test(s, "what is written is read back, any order", test_roundtrip);
    CU_add_test(s, "a batch of records, several flushes: read back", test_batch_roundtrip);
    CU_add_test(s, "a block recorded again: its last record's digest; an edited digest is damage", test_digest_records);
    CU_add_test(s, "a journal of version 2 (before digests): read, appended to without them", test_version2);
    CU_add_test(s, "several devices: lead and tail repeat in the plan line", test_lead_and_rep);
    CU_add_test(s, "what computed the blocks ends the plan line", test_by);
    CU_add_test(s, "a rectangle of C: panels in the plan line", test_panels);
    CU_add_test(s, "a resume that mixed computers marks the journal", test_mixed);
    CU_add_test(s, "a torn last record is ignored and cut", test_torn_record);
    CU_add_test(s, "damage and edits are refused", test_damage_refused);
    CU_add_test(s, "random corruption: refused, never more blocks", test_random_corruption);
    CU_add_test(s, "only a journal is ever removed", test_remove_only_journals);
    int rc = tu_run();
    if (tu_dir_remove() != 0) rc = 1;
    return rc;
}
