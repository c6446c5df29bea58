/* SPDX-License-Identifier: MIT */
/*
 * test_faults.c: every failure path of a file multiply, through one backend
 * chosen at build time (OOC_TEST_BACKEND; the CUDA build exits 77 without a
 * GPU) with injected faults (OOC_FAULT, lib/fault.h): an allocation, a
 * copy or a multiply refused, an operation failing while it runs (host
 * backend: a sticky error, as CUDA's), a read of an input, a write of the output (disk full),
 * the output's space reservation and a journal write. Each gives its
 * documented status and names the file it concerns, never commits an output,
 * and leaves a state that a resume finishes byte-identical to an
 * uninterrupted run (or, when it failed before any work, nothing at all). A
 * cancelled multiply likewise. In memory, a handle works again after a
 * device failure.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "fault.h"
#include "testutil.h"

#ifndef OOC_TEST_BACKEND
#error "build with -DOOC_TEST_BACKEND=OOC_BACKEND_HOST or OOC_BACKEND_CUBLAS"
#endif
#define HOST (OOC_TEST_BACKEND == OOC_BACKEND_HOST)

enum { FM = 1201, FN = 97, FK = 83 };
#define DEVICE_MEM (96 << 10) /* a few dozen blocks */

static uint64_t seed = 7;

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

static void fault(const char *spec)
{
    if (spec) setenv("OOC_FAULT", spec, 1);
    else unsetenv("OOC_FAULT");
    ooc_fault_reset();
}

static ooc_handle_t *new_handle(void)
{
    ooc_handle_t *h = NULL;
    if (ooc_create(&h) != OOC_SUCCESS) abort();
    ooc_set(h, OOC_PARAM_BACKEND, OOC_TEST_BACKEND);
    ooc_set(h, OOC_PARAM_DEVICE_MEM, DEVICE_MEM);
    ooc_set(h, OOC_PARAM_B_CHUNKS, 4);
    /* on a machine of several GPUs: no peer probe (its allocations and
     * copies would take the injected fault, and a failed probe only means
     * op(B) comes from the host), so the Nth op is the multiply's */
    ooc_set(h, OOC_PARAM_PEER_B, OOC_PEER_B_HOST);
    return h;
}

/* (no CUnit assertions: called from the suite's set-up) */
static ooc_status_t make_input(const char *name, int64_t rows, int64_t cols)
{
    ooc_handle_t *h = NULL;
    ooc_status_t st = ooc_create(&h);
    size_t count = (size_t)(rows * cols);
    double *x = malloc(count * sizeof *x);
    if (x == NULL) st = OOC_ERR_HOST_MEMORY;
    if (st == OOC_SUCCESS) tu_fill(OOC_R64, x, count, &seed);
    ooc_file_spec_t spec = {OOC_FORMAT_NPY, rows, cols, OOC_R64, OOC_ROW_MAJOR};
    ooc_file_t *f = NULL;
    if (st == OOC_SUCCESS) st = ooc_file_create(h, tu_path(name), &spec, 0, &f);
    if (st == OOC_SUCCESS) st = ooc_file_write(h, f, 0, x, count);
    if (st == OOC_SUCCESS) st = ooc_file_commit(h, f);
    ooc_file_close(f, 0);
    free(x);
    ooc_destroy(h);
    return st;
}

/* C = A B into name (resume: continue what is there). The status of the
 * first failing call; *err_path the file it concerns (or ""). Like the tool,
 * the temporary file is kept after a failure only when a journal is there. */
static ooc_status_t multiply(const char *name, int resume, char *err_path, size_t cap)
{
    ooc_handle_t *h = new_handle();
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, OOC_ROW_MAJOR};
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, FM, FN, OOC_R64, OOC_ROW_MAJOR};
    ooc_file_t *a = NULL, *b = NULL, *c = NULL;
    double one = 1, zero = 0;
    ooc_status_t st = ooc_file_open(h, tu_path("fa.npy"), &any, &a);
    if (st == OOC_SUCCESS) st = ooc_file_open(h, tu_path("fb.npy"), &any, &b);
    if (st == OOC_SUCCESS) st = ooc_file_create(h, tu_path(name), &cs, resume ? OOC_FILE_RESUME : 0, &c);
    if (st == OOC_SUCCESS) {
        ooc_files_opts_t o = {.journal = NULL, .resume = resume, .progress = NULL, .progress_user = NULL};
        st = ooc_gemm_files(h, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, &o);
    }
    if (st == OOC_SUCCESS) st = ooc_file_commit(h, c);
    const char *ep = ooc_last_error_path(h);
    snprintf(err_path, cap, "%s", ep ? ep : "");
    char jp[300];
    snprintf(jp, sizeof jp, "%s.ooc-journal", tu_path(name));
    ooc_file_close(c, st != OOC_SUCCESS && !exists(jp));
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    ooc_destroy(h);
    return st;
}

static int suite_init(void)
{
    if (tu_dir_make("faults") != 0) return 1;
    fault(NULL);
    if (make_input("fa.npy", FM, FK) != OOC_SUCCESS || make_input("fb.npy", FK, FN) != OOC_SUCCESS) return 1;
    char ep[4096];
    return multiply("ref.npy", 0, ep, sizeof ep) != OOC_SUCCESS;
}

static int suite_clean(void)
{
    fault(NULL);
    return tu_dir_remove() != 0;
}

typedef struct {
    const char *spec;
    ooc_status_t want;
    const char *err_file; /* the file the failure must name: "tmp", "journal", "input", or NULL */
    int leaves_state;     /* 1: tmp and journal kept for a resume; 0: nothing left at all */
} fcase_t;

static void run_case(const fcase_t *c, const char *name)
{
    char ep[4096], tmp[300], jp[300];
    snprintf(tmp, sizeof tmp, "%s.ooc-tmp", tu_path(name));
    snprintf(jp, sizeof jp, "%s.ooc-journal", tu_path(name));
    fault(c->spec);
    ooc_status_t st = multiply(name, 0, ep, sizeof ep);
    fault(NULL);
    if (st != c->want)
        fprintf(stderr, "\n    OOC_FAULT=%s: %s, expected %s\n", c->spec, ooc_status_string(st),
                ooc_status_string(c->want));
    CU_ASSERT_EQUAL(st, c->want);
    CU_ASSERT_FALSE(exists(tu_path(name))); /* never a committed output */
    if (c->err_file && strcmp(c->err_file, "tmp") == 0) CU_ASSERT_STRING_EQUAL(ep, tmp);
    if (c->err_file && strcmp(c->err_file, "journal") == 0) CU_ASSERT_STRING_EQUAL(ep, jp);
    if (c->err_file && strcmp(c->err_file, "input") == 0)
        CU_ASSERT(strcmp(ep, tu_path("fa.npy")) == 0 || strcmp(ep, tu_path("fb.npy")) == 0);
    if (!c->leaves_state) {
        CU_ASSERT_FALSE(exists(tmp));
        CU_ASSERT_FALSE(exists(jp));
        return;
    }
    CU_ASSERT_TRUE(exists(tmp));
    CU_ASSERT_TRUE(exists(jp));
    CU_ASSERT_EQUAL(multiply(name, 1, ep, sizeof ep), OOC_SUCCESS);
    CU_ASSERT_TRUE(tu_same_file(tu_path(name), tu_path("ref.npy")));
}

static void test_faults(void)
{
    static const fcase_t cases[] = {
        {"dev_alloc:1", OOC_ERR_DEVICE_MEMORY, NULL, 0}, /* before anything is written: nothing left */
        {"host_alloc:1", OOC_ERR_HOST_MEMORY, NULL, 0},
        {"copy:1", OOC_ERR_CUDA, NULL, 1},
        {"copy:40", OOC_ERR_CUDA, NULL, 1},
        {"gemm:1", OOC_ERR_CUBLAS, NULL, 1},
        {"gemm:9", OOC_ERR_CUBLAS, NULL, 1},
        {"exec:2", OOC_ERR_CUDA, NULL, 1},
        {"exec:60", OOC_ERR_CUDA, NULL, 1},
        {"read:1", OOC_ERR_IO, "input", 1},
        {"read:20", OOC_ERR_IO, "input", 1},
        {"write:1", OOC_ERR_NO_SPACE, "tmp", 1},
        {"write:7", OOC_ERR_NO_SPACE, "tmp", 1},
        {"write:7:EIO", OOC_ERR_IO, "tmp", 1},
        {"write:7:EDQUOT", OOC_ERR_NO_SPACE, "tmp", 1},
        {"reserve:1", OOC_ERR_NO_SPACE, "tmp", 0},
        {"journal:1", OOC_ERR_NO_SPACE, "journal", 0},
        {"journal:4", OOC_ERR_NO_SPACE, "journal", 1},
        {"sync_dir:1", OOC_ERR_IO, "journal", 0}, /* the journal's directory, at its creation */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!HOST && strncmp(cases[i].spec, "exec", 4) == 0) continue; /* host backend only */
        char name[32];
        snprintf(name, sizeof name, "c%zu.npy", i);
        run_case(&cases[i], name);
    }
}

/* The "done" records of the journal at path, and whether it has the
 * "complete" one (0 and 0 when there is none). */
static int journal_count(const char *path, int *complete)
{
    int n = 0;
    char line[1024];
    *complete = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        n += strncmp(line, "done ", 5) == 0;
        *complete |= strncmp(line, "complete ", 9) == 0;
    }
    if (f) fclose(f);
    return n;
}

/* Every flush of a file's data failing in turn (OOC_FAULT=sync:N, until N
 * is past the job's last): OOC_ERR_IO naming the file, never a committed
 * output, and a resume byte-identical. Among them, the flush of C's
 * temporary file before its blocks are recorded (the journal short of the
 * job's blocks) and the flush of the journal: a journal that vouched for
 * blocks not yet flushed, or records that were never flushed, passed every
 * test (the files mutation audit). */
static void test_sync_each(void)
{
    char ep[4096], tmp[300], jp[300];
    snprintf(tmp, sizeof tmp, "%s.ooc-tmp", tu_path("sy.npy"));
    snprintf(jp, sizeof jp, "%s.ooc-journal", tu_path("sy.npy"));
    int c_before_records = 0, journal_named = 0, n;
    for (n = 1; n < 1000; n++) {
        char spec[32];
        snprintf(spec, sizeof spec, "sync:%d", n);
        unlink(tu_path("sy.npy"));
        unlink(tmp);
        unlink(jp);
        fault(spec);
        ooc_status_t st = multiply("sy.npy", 0, ep, sizeof ep);
        fault(NULL);
        if (st == OOC_SUCCESS) break; /* past the job's last flush */
        if (st != OOC_ERR_IO) fprintf(stderr, "\n    OOC_FAULT=%s: %s\n", spec, ooc_status_string(st));
        CU_ASSERT_EQUAL(st, OOC_ERR_IO);
        CU_ASSERT_FALSE(exists(tu_path("sy.npy")));
        int complete = 0;
        journal_count(jp, &complete);
        if (strcmp(ep, tmp) == 0 && !complete && exists(jp)) c_before_records = 1;
        if (strcmp(ep, jp) == 0) journal_named = 1;
        CU_ASSERT(strcmp(ep, tmp) == 0 || strcmp(ep, jp) == 0);
        st = multiply("sy.npy", 1, ep, sizeof ep);
        if (st != OOC_SUCCESS) fprintf(stderr, "\n    after OOC_FAULT=%s, the resume: %s\n", spec, ooc_status_string(st));
        CU_ASSERT_EQUAL(st, OOC_SUCCESS);
        CU_ASSERT_TRUE(tu_same_file(tu_path("sy.npy"), tu_path("ref.npy")));
    }
    CU_ASSERT(n > 3 && n < 1000);
    CU_ASSERT_TRUE(c_before_records);
    CU_ASSERT_TRUE(journal_named);
}

/* The directory not flushed after the rename: the commit fails (OOC_ERR_IO
 * naming the output, whose rename may not be durable), but the file is
 * committed: at its path, whole, no temporary file; ooc_file_committed()
 * says so (the tool's message and exit depend on it). */
static void test_commit_unsynced(void)
{
    ooc_handle_t *h = new_handle();
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, 3, 5, OOC_R64, OOC_ROW_MAJOR};
    ooc_file_t *f = NULL;
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.ooc-tmp", tu_path("unsynced.npy"));
    double x[15];
    uint64_t s = 7;
    tu_fill(OOC_R64, x, 15, &s);
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(h, tu_path("unsynced.npy"), &cs, 0, &f), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_write(h, f, 0, x, 15), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_committed(f), 0);
    fault("sync_dir:1");
    CU_ASSERT_EQUAL(ooc_file_commit(h, f), OOC_ERR_IO);
    fault(NULL);
    CU_ASSERT_STRING_EQUAL(ooc_last_error_path(h), tu_path("unsynced.npy"));
    CU_ASSERT(strstr(ooc_last_error(h), "fsync directory") != NULL);
    CU_ASSERT_EQUAL(ooc_file_committed(f), 1);
    /* a second commit tries the flush again: failing, then done */
    fault("sync_dir:1");
    CU_ASSERT_EQUAL(ooc_file_commit(h, f), OOC_ERR_IO);
    fault(NULL);
    CU_ASSERT_EQUAL(ooc_file_commit(h, f), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_commit(h, f), OOC_SUCCESS);
    ooc_file_close(f, 1); /* (discard: a committed file is never removed) */
    CU_ASSERT_TRUE(exists(tu_path("unsynced.npy")));
    CU_ASSERT_FALSE(exists(tmp));
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, OOC_ROW_MAJOR};
    double y[15] = {0};
    f = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(h, tu_path("unsynced.npy"), &any, &f), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_file_read(h, f, 0, y, 15), OOC_SUCCESS);
    CU_ASSERT(memcmp(x, y, sizeof x) == 0);
    ooc_file_close(f, 0);
    CU_ASSERT_EQUAL(ooc_file_committed(NULL), 0);
    ooc_destroy(h);
}

/* Killed after the journal said "complete" but before the rename: the
 * resume has nothing to compute, commits, and leaves a journal that still
 * reads as one complete job (a second completion record would be damage). */
static void test_killed_before_commit(void)
{
    ooc_handle_t *h = new_handle();
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, OOC_ROW_MAJOR};
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, FM, FN, OOC_R64, OOC_ROW_MAJOR};
    ooc_file_t *a, *b, *c;
    double one = 1, zero = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(h, tu_path("fa.npy"), &any, &a), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(h, tu_path("fb.npy"), &any, &b), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(h, tu_path("late.npy"), &cs, 0, &c), OOC_SUCCESS);
    CU_ASSERT_EQUAL(ooc_gemm_files(h, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, NULL), OOC_SUCCESS);
    ooc_file_close(c, 0); /* "killed" here: no commit */
    CU_ASSERT_FALSE(exists(tu_path("late.npy")));
    char ep[4096];
    for (int twice = 0; twice < 2; twice++) {
        if (twice) unlink(tu_path("late.npy")), rename(tu_path("late.npy.ooc-tmp.keep"), tu_path("late.npy.ooc-tmp"));
        CU_ASSERT_EQUAL(multiply("late.npy", 1, ep, sizeof ep), OOC_SUCCESS);
        CU_ASSERT_TRUE(tu_same_file(tu_path("late.npy"), tu_path("ref.npy")));
        int fin = 0;
        CU_ASSERT_EQUAL(ooc_gemm_files_finished(h, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, tu_path("late.npy"), &cs,
                                                NULL, &fin), OOC_SUCCESS);
        CU_ASSERT_EQUAL(fin, 1);
        if (!twice) CU_ASSERT_EQUAL(link(tu_path("late.npy"), tu_path("late.npy.ooc-tmp.keep")), 0);
    }
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    ooc_destroy(h);
}

/* Killed after its trailer was cut (sealed: every block flushed) but before
 * the journal's "complete" record: the resume keeps every block (each
 * checked against its digest), computes nothing, and commits C. It
 * computed all of it again (the files hunt): the journal names the file by
 * the id its trailer held. The journal's last line is the "complete"
 * record: taken off, the journal reads as one killed right before it. */
static void test_killed_before_complete(void)
{
    ooc_handle_t *h = new_handle();
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, OOC_ROW_MAJOR};
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, FM, FN, OOC_R64, OOC_ROW_MAJOR};
    ooc_file_t *a, *b;
    double one = 1, zero = 0;
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(h, tu_path("fa.npy"), &any, &a), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(h, tu_path("fb.npy"), &any, &b), OOC_SUCCESS);
    char jp[300], tmp[300];
    snprintf(jp, sizeof jp, "%s.ooc-journal", tu_path("seal.npy"));
    snprintf(tmp, sizeof tmp, "%s.ooc-tmp", tu_path("seal.npy"));
    /* then with a block's bytes changed meanwhile: that one is computed again */
    for (int damaged = 0; damaged < 2; damaged++) {
        unlink(tu_path("seal.npy"));
        ooc_file_t *c = NULL;
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(h, tu_path("seal.npy"), &cs, 0, &c), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_gemm_files(h, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, NULL), OOC_SUCCESS);
        ooc_stats_t st;
        CU_ASSERT_EQUAL(ooc_get_stats(h, &st), OOC_SUCCESS);
        int64_t total = st.blocks * st.panels;
        ooc_file_close(c, 0); /* "killed" after the seal */
        FILE *f = fopen(jp, "r+");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        char line[1024];
        long last = 0, at = 0;
        int complete_last = 0;
        while (fgets(line, sizeof line, f)) {
            last = at;
            at = ftell(f);
            complete_last = strncmp(line, "complete ", 9) == 0;
        }
        fclose(f);
        CU_ASSERT_FATAL(complete_last && total > 1);
        CU_ASSERT_EQUAL_FATAL(truncate(jp, last), 0);
        struct stat sb;
        if (damaged && stat(tmp, &sb) == 0) { /* 8 bytes in the middle of C's data */
            int fd = open(tmp, O_WRONLY);
            CU_ASSERT_FATAL(fd >= 0);
            CU_ASSERT_EQUAL(pwrite(fd, "ZZZZZZZZ", 8, (sb.st_size / 2) & ~(off_t)7), 8);
            close(fd);
        }
        c = NULL;
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(h, tu_path("seal.npy"), &cs, OOC_FILE_RESUME, &c), OOC_SUCCESS);
        ooc_files_opts_t o = {.resume = 1};
        CU_ASSERT_EQUAL(ooc_gemm_files(h, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, &o), OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_get_stats(h, &st), OOC_SUCCESS);
        if (st.blocks_resumed != total - damaged)
            printf("\n    sealed, not recorded complete%s: %lld of %lld blocks kept\n", damaged ? ", damaged" : "",
                   (long long)st.blocks_resumed, (long long)total);
        CU_ASSERT_EQUAL(st.blocks_resumed, total - damaged);
        CU_ASSERT_EQUAL(st.blocks_mismatched, damaged);
        if (!damaged) CU_ASSERT_EQUAL(st.bytes_h2d, 0);
        CU_ASSERT_EQUAL(ooc_file_commit(h, c), OOC_SUCCESS);
        ooc_file_close(c, 0);
        CU_ASSERT_TRUE(tu_same_file(tu_path("seal.npy"), tu_path("ref.npy")));
    }
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    ooc_destroy(h);
}

/* ooc_cancel before the run and from the progress callback part-way:
 * OOC_ERR_CANCELLED, the request consumed, the state resumable. */
static ooc_handle_t *cancel_h;
static int64_t cancel_at;
static void cancel_cb(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)user, (void)total, (void)rd, (void)wr;
    if (done >= cancel_at) ooc_cancel(cancel_h);
}

static void test_cancel(void)
{
    for (int when = 0; when < 2; when++) {
        const char *name = when ? "cancel1.npy" : "cancel0.npy";
        ooc_handle_t *h = new_handle();
        cancel_h = h;
        cancel_at = 5;
        ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, OOC_ROW_MAJOR};
        ooc_file_spec_t cs = {OOC_FORMAT_NPY, FM, FN, OOC_R64, OOC_ROW_MAJOR};
        ooc_file_t *a, *b, *c;
        CU_ASSERT_EQUAL_FATAL(ooc_file_open(h, tu_path("fa.npy"), &any, &a), OOC_SUCCESS);
        CU_ASSERT_EQUAL_FATAL(ooc_file_open(h, tu_path("fb.npy"), &any, &b), OOC_SUCCESS);
        CU_ASSERT_EQUAL_FATAL(ooc_file_create(h, tu_path(name), &cs, 0, &c), OOC_SUCCESS);
        if (when == 0) CU_ASSERT_EQUAL(ooc_cancel(h), OOC_SUCCESS);
        double one = 1, zero = 0;
        ooc_files_opts_t o = {.journal = NULL, .resume = 0, .progress = when ? cancel_cb : NULL, .progress_user = NULL};
        CU_ASSERT_EQUAL(ooc_gemm_files(h, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, &o), OOC_ERR_CANCELLED);
        ooc_file_close(c, 0);
        /* the request was consumed: the next call runs */
        double x = 1, y = 0;
        CU_ASSERT_EQUAL(ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, 1, 1, 1, 1, &x, 1, &x, 1, 0, &y, 1),
                        OOC_SUCCESS);
        CU_ASSERT_EQUAL(y, 1.0);
        ooc_file_close(a, 0);
        ooc_file_close(b, 0);
        ooc_destroy(h);
        char ep[4096];
        CU_ASSERT_EQUAL(multiply(name, 1, ep, sizeof ep), OOC_SUCCESS);
        CU_ASSERT_TRUE(tu_same_file(tu_path(name), tu_path("ref.npy")));
    }
    CU_ASSERT_EQUAL(ooc_cancel(NULL), OOC_ERR_INVALID_HANDLE);
}

/* In memory: a device failure fails that multiply only; A and C staged
 * through the ring's slots or through the cache-sized buffers
 * (OOC_PARAM_STAGE_CHUNK: the reader's own copies up and the writer's own
 * copies down, each on its own stream, fail too). */
static void test_in_memory_recovers(void)
{
    enum { M = 700, N = 90, K = 60 };
    double *A = malloc(sizeof(double) * M * K), *B = malloc(sizeof(double) * K * N), *C = malloc(sizeof(double) * M * N),
           *C0 = malloc(sizeof(double) * M * N);
    tu_fill(OOC_R64, A, M * K, &seed);
    tu_fill(OOC_R64, B, K * N, &seed);
    tu_fill(OOC_R64, C0, M * N, &seed);
    static const char *specs[] = {"gemm:3", "copy:5", "exec:9", "dev_alloc:1", "host_alloc:1"};
    static const ooc_status_t want[] = {OOC_ERR_CUBLAS, OOC_ERR_CUDA, OOC_ERR_CUDA, OOC_ERR_DEVICE_MEMORY,
                                        OOC_ERR_HOST_MEMORY};
    for (int i = 0; i < 10; i++) {
        if (!HOST && strncmp(specs[i % 5], "exec", 4) == 0) continue; /* host backend only */
        ooc_handle_t *h = new_handle();
        ooc_set(h, OOC_PARAM_DEVICE_MEM, 64 << 10);
        ooc_set(h, OOC_PARAM_HOST_MEM, i < 5 ? 64 << 10 : 160 << 10); /* through: room for 6 buffers */
        ooc_set(h, OOC_PARAM_STAGE_CHUNK, i < 5 ? 1 : 8192);
        memcpy(C, C0, sizeof(double) * M * N);
        fault(specs[i % 5]);
        ooc_status_t st = ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, 1.5, A, M, B, K, 0.5, C, M);
        fault(NULL);
        CU_ASSERT_EQUAL(st, want[i % 5]);
        if (st != want[i % 5]) fprintf(stderr, "\n    %s (%s): %s\n", specs[i % 5], i < 5 ? "ring" : "through", ooc_last_error(h));
        CU_ASSERT(strlen(ooc_last_error(h)) > 0);
        memcpy(C, C0, sizeof(double) * M * N);
        CU_ASSERT_EQUAL(ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, 1.5, A, M, B, K, 0.5, C, M),
                        OOC_SUCCESS);
        ooc_stats_t s;
        CU_ASSERT_EQUAL(ooc_get_stats(h, &s), OOC_SUCCESS);
        CU_ASSERT_EQUAL(s.stage_chunk, i < 5 ? 0 : 8192);
        CU_ASSERT_EQUAL(s.stage_out_chunk, i < 5 ? 0 : 8192);
        double alpha = 1.5, beta = 0.5, worst;
        CU_ASSERT_EQUAL(tu_check(OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, &alpha, A, M, B, K, &beta, C0,
                                 C, M, &worst),
                        0);
        ooc_destroy(h);
    }
    free(A);
    free(B);
    free(C);
    free(C0);
}

/* The multiply C = alpha A B + 0.5 C (37 x 11 x 5) under OOC_FAULT=spec:
 * refused (OOC_ERR_PARAM_RANGE) with a message saying `says`, and C as it
 * was (C0). */
static int spec_refused(const char *spec, double alpha, const char *says, const double *A, const double *B, double *C,
                        const double *C0)
{
    enum { M = 37, N = 11, K = 5 };
    ooc_handle_t *h = new_handle();
    memcpy(C, C0, M * N * sizeof *C);
    fault(spec);
    ooc_status_t st = ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, alpha, A, M, B, K, 0.5, C, M);
    fault(NULL);
    int ok = st == OOC_ERR_PARAM_RANGE && strstr(ooc_last_error(h), says) != NULL &&
             memcmp(C, C0, M * N * sizeof *C) == 0;
    if (!ok) fprintf(stderr, "\n    OOC_FAULT=%s: %s: %s", spec, ooc_status_string(st), ooc_last_error(h));
    ooc_destroy(h);
    return ok;
}

/* A fault spec with a mistake is refused by the in-memory paths too, also
 * the one that opens no backend (alpha 0: C = beta*C), and C is untouched:
 * a test of a typo must not pass for a fault that never came. */
static void test_bad_spec_refused(void)
{
    enum { M = 37, N = 11, K = 5 };
    double A[M * K], B[K * N], C[M * N], C0[M * N];
    tu_fill(OOC_R64, A, M * K, &seed);
    tu_fill(OOC_R64, B, K * N, &seed);
    tu_fill(OOC_R64, C0, M * N, &seed);
    for (int zero = 0; zero < 2; zero++)
        CU_ASSERT_TRUE(spec_refused("copy:0", zero ? 0.0 : 1.5, "OOC_FAULT='copy:0'", A, B, C, C0));
    /* a count past 2^63 (it saturated to a fault that never came; a hunt) */
    CU_ASSERT_TRUE(spec_refused("read:99999999999999999999", 1.5, "is not a count from 1", A, B, C, C0));
    /* an ERRNO for a kind whose failure is not one (it was taken, and did nothing) */
    CU_ASSERT_TRUE(spec_refused("gemm:2:EIO", 1.5, "is for the file kinds alone", A, B, C, C0));
}

/* The library's staging that cannot be registered (mapped pages refused by
 * cudaHostRegister) is allocated by cudaHostAlloc instead: the multiply
 * succeeds and is right, and the handle frees it as such (CUDA backend; on
 * the host backend nothing is registered and the fault is never hit). */
static void test_register_fallback(void)
{
    enum { M = 1100, N = 70, K = 90 };
    double *A = malloc(sizeof(double) * M * K), *B = malloc(sizeof(double) * K * N), *C = malloc(sizeof(double) * M * N),
           *C0 = malloc(sizeof(double) * M * N);
    CU_ASSERT_FATAL(A && B && C && C0);
    tu_fill(OOC_R64, A, M * K, &seed);
    tu_fill(OOC_R64, B, K * N, &seed);
    tu_fill(OOC_R64, C0, M * N, &seed);
    double alpha = -0.5, beta = 2.0, worst;
    ooc_handle_t *h = new_handle();
    ooc_set(h, OOC_PARAM_BLOCK_ROWS, 256);
    fault("register:1");
    for (int rep = 0; rep < 2; rep++) { /* the second on the staging kept: freed by ooc_destroy */
        memcpy(C, C0, sizeof(double) * M * N);
        CU_ASSERT_EQUAL(ooc_dgemm(h, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, alpha, A, M, B, K, beta, C, M),
                        OOC_SUCCESS);
        CU_ASSERT_EQUAL(tu_check(OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, M, N, K, &alpha, A, M, B, K, &beta, C0,
                                 C, M, &worst),
                        0);
        ooc_stats_t st;
        CU_ASSERT_EQUAL(ooc_get_stats(h, &st), OOC_SUCCESS);
        CU_ASSERT(st.staged_a && st.staged_c && st.host_bytes > 0);
    }
    fault(NULL);
    ooc_destroy(h);
    free(A);
    free(B);
    free(C);
    free(C0);
}

int main(void)
{
    ooc_handle_t *h;
    if (ooc_create(&h) != OOC_SUCCESS) return 1;
    int ok = tu_backend_runs(h, OOC_TEST_BACKEND);
    ooc_destroy(h);
    if (ok <= 0) return ok == 0 ? 77 : 1;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("faults", suite_init, suite_clean);
    CU_add_test(s, "each injected fault: its status, no output, resumable", test_faults);
    CU_add_test(s, "cancelled before and part-way: resumable", test_cancel);
    CU_add_test(s, "each flush of a file's data failing in turn: resumable", test_sync_each);
    CU_add_test(s, "killed after the last record, before the commit", test_killed_before_commit);
    CU_add_test(s, "the directory not flushed after the rename: committed, OOC_ERR_IO", test_commit_unsynced);
    CU_add_test(s, "killed between the seal and the complete record: nothing computed again",
                test_killed_before_complete);
    CU_add_test(s, "in memory: the handle works after a failure", test_in_memory_recovers);
    CU_add_test(s, "a fault spec with a mistake: refused, also with alpha 0", test_bad_spec_refused);
    CU_add_test(s, "staging that cannot be registered: cudaHostAlloc's instead", test_register_fallback);
    return tu_run();
}
