/* SPDX-License-Identifier: MIT */
/*
 * test_resume.c: resuming ooc_gemm_files, through one backend chosen at
 * build time (OOC_TEST_BACKEND; the CUDA build exits 77 without a GPU), and
 * its journal (test_files.c: the multiply itself and the output's safety).
 * A run killed (SIGKILL) part-way then resumed gives a byte-identical
 * result (also with op(B) uploaded in chunks, where block 0 is multiplied
 * chunk by chunk), a changed input refuses the resume (also one rewritten
 * in place in the other order, its size and time kept), a custom journal
 * left beside a fresh output is not resumed from, and a finished job is
 * recognised, and a journal whose file's inode number a later file took
 * vouches for nothing in it. A resume computes as the run it resumes (the journal records
 * ooc_compute_id_for() the job's type). ooc_journal_forget removes only a
 * journal nobody holds (or an empty file), never another file or a
 * symbolic link.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "files.h"
#include "filesutil.h"
#include "io.h"
#include "journal.h"
#include "testutil.h"

static const ooc_layout_t RM = OOC_ROW_MAJOR;

/* ---- resume after SIGKILL ---- */

enum { RM_ = 1201, RN = 97, RK = 83 };

static char last_msg[512];
static int64_t first_done; /* first block count the progress callback saw */

static void note_first(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)user, (void)total, (void)rd, (void)wr;
    if (first_done == 0) first_done = done;
}

/* "done" lines in a journal */
static int64_t journal_done(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    int64_t n = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "done ", 5) == 0) n++;
    if (f) fclose(f);
    return n;
}

static const char *kill_journal;
static const char *custom_journal; /* resume_run's journal path: NULL, the default */
static int64_t resume_chunks; /* OOC_PARAM_B_CHUNKS of every run (0: automatic) */

/* SIGKILL ourselves once `kill_at` blocks are written and at least 3 are
 * recorded in the journal (its flusher lags the writer). */
static void kill_after(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)total, (void)rd, (void)wr;
    if (done < *(int64_t *)user) return;
    for (int i = 0; i < 1000 && journal_done(kill_journal) < 3; i++) usleep(10000);
    raise(SIGKILL);
}

/* Multiply a x b into name; with kill_at > 0, in a child process that
 * SIGKILLs itself after kill_at blocks. Returns the status (or -1 if the
 * child was killed as planned). */
static int resume_run(const char *name, int64_t kill_at, int resume)
{
    double one = 1, zero = 0;
    if (kill_at > 0) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            ooc_handle_t *h2;
            if (ooc_create(&h2) != OOC_SUCCESS) _exit(2);
            ooc_set(h2, OOC_PARAM_BACKEND, OOC_BACKEND_HOST);
            ooc_set(h2, OOC_PARAM_DEVICE_MEM, 96 << 10);
            ooc_set(h2, OOC_PARAM_B_CHUNKS, resume_chunks);
            ooc_file_t *a, *b, *c;
            ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM}, auto_spec = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, RM};
            if (ooc_file_open(h2, tu_path("ra"), &auto_spec, &a) || ooc_file_open(h2, tu_path("rb"), &auto_spec, &b) ||
                ooc_file_create(h2, tu_path(name), &cs, 0, &c))
                _exit(3);
            char jp[300];
            snprintf(jp, sizeof jp, "%s.ooc-journal", tu_path(name));
            kill_journal = custom_journal ? custom_journal : jp;
            ooc_files_opts_t o = {.journal = custom_journal, .resume = 0, .progress = kill_after,
                                  .progress_user = &kill_at};
            if (ooc_gemm_files(h2, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, &o) != OOC_SUCCESS)
                fprintf(stderr, "\n    the run to kill failed: %s\n", ooc_last_error(h2));
            _exit(4); /* not reached: killed */
        }
        int status = 0;
        waitpid(pid, &status, 0);
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? -1 : 100 + WEXITSTATUS(status);
    }
    ooc_file_t *a = open_file("ra", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *b = open_file("rb", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    ooc_file_t *c = NULL;
    ooc_status_t st = ooc_file_create(H, tu_path(name), &cs, resume ? OOC_FILE_RESUME : 0, &c);
    if (st == OOC_SUCCESS) {
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 96 << 10);
        ooc_set(H, OOC_PARAM_B_CHUNKS, resume_chunks);
        ooc_files_opts_t o = {.journal = custom_journal, .resume = resume, .progress = note_first,
                              .progress_user = NULL};
        first_done = 0;
        st = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, c, &o);
        snprintf(last_msg, sizeof last_msg, "%s", ooc_last_error(H));
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 0);
        ooc_set(H, OOC_PARAM_B_CHUNKS, 0);
        if (st == OOC_SUCCESS) st = ooc_file_commit(H, c);
        else fprintf(stderr, "\n    %s\n", ooc_last_error(H));
    }
    ooc_file_close(c, 0);
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    return st;
}

static void test_resume_after_kill(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    CU_ASSERT_EQUAL_FATAL(resume_run("whole.npy", 0, 0), OOC_SUCCESS);
    CU_ASSERT_EQUAL(first_done, 1);

    /* killed after 5 blocks: no target, a temporary file and a journal */
    int killed = resume_run("cut.npy", 5, 0);
    if (killed != -1) fprintf(stderr, "\n    child: %d\n", killed);
    CU_ASSERT_EQUAL_FATAL(killed, -1);
    CU_ASSERT_FALSE(exists(tu_path("cut.npy")));
    CU_ASSERT_TRUE(exists(tu_path("cut.npy.ooc-tmp")));
    CU_ASSERT_TRUE(exists(tu_path("cut.npy.ooc-journal")));
    /* poison what the journal does not vouch for (the last rows): the resume must rewrite it */
    FILE *t = fopen(tu_path("cut.npy.ooc-tmp"), "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(fseek(t, -8 * RN * 3 - OOC_TMP_TRAILER, SEEK_END), 0); /* (its trailer after them) */
    for (int i = 0; i < 8 * RN * 3; i++) fputc(0x7f, t);
    fclose(t);
    CU_ASSERT_FALSE(tu_same_file(tu_path("whole.npy"), tu_path("cut.npy.ooc-tmp")));
    int64_t recorded = journal_done(tu_path("cut.npy.ooc-journal"));
    CU_ASSERT(recorded >= 3);
    CU_ASSERT_EQUAL(resume_run("cut.npy", 0, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(first_done, recorded + 1); /* resumed after the recorded blocks, not from scratch */
    CU_ASSERT_TRUE(exists(tu_path("cut.npy")));
    CU_ASSERT_TRUE(exists(tu_path("cut.npy.ooc-journal"))); /* marked complete: a resume finds the job done */
    CU_ASSERT_TRUE(tu_same_file(tu_path("whole.npy"), tu_path("cut.npy")));

    /* killed again, then an input changes: the journal refuses to resume */
    CU_ASSERT_EQUAL_FATAL(resume_run("cut2.npy", 3, 0), -1);
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    CU_ASSERT_EQUAL(resume_run("cut2.npy", 0, 1), OOC_ERR_JOURNAL);
    CU_ASSERT(strstr(last_msg, "another job") != NULL);
    CU_ASSERT_FALSE(exists(tu_path("cut2.npy")));
    /* without --resume it starts over and succeeds */
    CU_ASSERT_EQUAL(resume_run("cut2.npy", 0, 0), OOC_SUCCESS);

    /* killed again, then A rewritten in place in the other order, its size
     * and modification time as they were (a coarse clock, touch -r, rsync
     * --inplace -t): another A, refused (an identity without the order
     * passed every test: the files mutation audit); A put back, resumed */
    CU_ASSERT_EQUAL_FATAL(resume_run("cut3.npy", 3, 0), -1);
    struct stat sa, sf;
    CU_ASSERT_EQUAL_FATAL(stat(tu_path("ra"), &sa), 0);
    free(make_file("ra_f", OOC_FORMAT_NPY, OOC_R64, OOC_COL_MAJOR, RM_, RK));
    CU_ASSERT_EQUAL_FATAL(stat(tu_path("ra_f"), &sf), 0);
    CU_ASSERT_EQUAL_FATAL(sf.st_size, sa.st_size); /* (the header's padding takes "True" or "False") */
    size_t n = (size_t)sa.st_size;
    char *was = malloc(n), *other = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(was);
    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    FILE *fa = fopen(tu_path("ra"), "r+b"), *ff = fopen(tu_path("ra_f"), "rb");
    CU_ASSERT_FATAL(fa != NULL && ff != NULL);
    CU_ASSERT_EQUAL(fread(was, 1, n, fa), n);
    CU_ASSERT_EQUAL(fread(other, 1, n, ff), n);
    fclose(ff);
    rewind(fa);
    CU_ASSERT_EQUAL(fwrite(other, 1, n, fa), n);
    CU_ASSERT_EQUAL(fflush(fa), 0);
    struct timespec ts[2] = {sa.st_atim, sa.st_mtim};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, tu_path("ra"), ts, 0), 0);
    CU_ASSERT_EQUAL(resume_run("cut3.npy", 0, 1), OOC_ERR_JOURNAL);
    CU_ASSERT(strstr(last_msg, "another job") != NULL);
    CU_ASSERT_FALSE(exists(tu_path("cut3.npy")));
    rewind(fa);
    CU_ASSERT_EQUAL(fwrite(was, 1, n, fa), n);
    fclose(fa);
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, tu_path("ra"), ts, 0), 0);
    CU_ASSERT_EQUAL(resume_run("cut3.npy", 0, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(resume_run("whole3.npy", 0, 0), OOC_SUCCESS); /* (A is cut2's, made anew) */
    CU_ASSERT_TRUE(tu_same_file(tu_path("whole3.npy"), tu_path("cut3.npy")));
    free(was);
    free(other);
}

/* C = alpha A B + C0/2 in place (C0 the file at name) as a requeued batch
 * job runs it: ooc_file_create with OOC_FILE_RESUME when resume, and resume. */
static ooc_status_t in_place_run(const char *name, double alpha, int resume)
{
    double half = 0.5;
    ooc_file_t *a = open_file("ra", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *b = open_file("rb", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *c0 = open_file(name, OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    ooc_file_t *c = NULL;
    ooc_status_t st = ooc_file_create(H, tu_path(name), &cs, resume ? OOC_FILE_RESUME : 0, &c);
    if (st == OOC_SUCCESS) {
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 96 << 10);
        ooc_files_opts_t o = {.resume = resume};
        st = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &alpha, a, b, &half, c0, c, &o);
        snprintf(last_msg, sizeof last_msg, "%s", ooc_last_error(H));
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 0);
        if (st == OOC_SUCCESS) st = ooc_file_commit(H, c);
    }
    ooc_file_close(c, st != OOC_SUCCESS);
    ooc_file_close(c0, 0);
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    return st;
}

/* A job in place, finished and committed, then resumed through the library
 * as a requeued batch job would (without asking ooc_gemm_files_finished()
 * first): refused, C untouched, for a multiply and for a scaling job (alpha
 * 0). It was computed again from its own result (C = A B + (A B + C0/2)/2):
 * ooc_file_create removed the complete journal, and the resume, finding
 * none, started afresh. Another job in place on that C then runs (from C
 * as it is: a chain of jobs), and so does a fresh run. */
static void test_in_place_finished(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", tu_path("ip.npy"), tu_path("ip_copy.npy"));
    for (int scaling = 0; scaling < 2; scaling++) {
        double alpha = scaling ? 0.0 : 1.0;
        free(make_file("ip.npy", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RN));
        CU_ASSERT_EQUAL_FATAL(in_place_run("ip.npy", alpha, 0), OOC_SUCCESS);
        CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
        CU_ASSERT_EQUAL(in_place_run("ip.npy", alpha, 1), OOC_ERR_JOURNAL);
        CU_ASSERT(strstr(last_msg, "in-place job as complete") != NULL);
        CU_ASSERT_TRUE(tu_same_file(tu_path("ip.npy"), tu_path("ip_copy.npy")));
        CU_ASSERT_FALSE(exists(tu_path("ip.npy.ooc-tmp")));
        /* the journal is kept: the job still reads as finished */
        ooc_file_t *a = open_file("ra", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
        ooc_file_t *b = open_file("rb", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
        ooc_file_t *c0 = open_file("ip.npy", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
        ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
        double half = 0.5;
        int fin = -1;
        CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &alpha, a, b, &half, c0, tu_path("ip.npy"),
                                                &cs, NULL, &fin),
                        OOC_SUCCESS);
        CU_ASSERT_EQUAL(fin, 1);
        ooc_file_close(c0, 0);
        ooc_file_close(a, 0);
        ooc_file_close(b, 0);
    }
    /* another job in place (alpha 2) with resume: computed from C as it is,
     * also when the process died between its create (which kept the first
     * job's journal) and its multiply, and the resume is given that journal
     * among the old ones (as mpirun's ranks are): it vouches for nothing of
     * the temporary file, which the resume keeps (a broader keeping refused
     * such a resume for good, as another job's journal) */
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    ooc_file_t *c = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("ip.npy"), &cs, OOC_FILE_RESUME, &c), OOC_SUCCESS);
    ooc_file_close(c, 0); /* "killed": the temporary file stays, the first job's journal too */
    CU_ASSERT_TRUE(exists(tu_path("ip.npy.ooc-tmp")) && exists(tu_path("ip.npy.ooc-journal")));
    {
        double two = 2.0, half = 0.5;
        ooc_file_t *a = open_file("ra", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
        ooc_file_t *b = open_file("rb", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
        ooc_file_t *c0 = open_file("ip.npy", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
        char jp[300];
        snprintf(jp, sizeof jp, "%s.ooc-journal", tu_path("ip.npy"));
        const char *old[] = {jp, NULL};
        ooc_status_t st = ooc_file_create(H, tu_path("ip.npy"), &cs, OOC_FILE_RESUME, &c);
        CU_ASSERT_EQUAL(st, OOC_SUCCESS);
        CU_ASSERT_EQUAL(ooc_file_resumed(c), 1);
        ooc_files_opts_t o = {.resume = 1, .journals = old};
        if (st == OOC_SUCCESS) st = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, &two, a, b, &half, c0, c, &o);
        if (st != OOC_SUCCESS) fprintf(stderr, "\n    %s\n", ooc_last_error(H));
        CU_ASSERT_EQUAL(st, OOC_SUCCESS);
        if (st == OOC_SUCCESS) CU_ASSERT_EQUAL(ooc_file_commit(H, c), OOC_SUCCESS);
        ooc_file_close(c, st != OOC_SUCCESS);
        ooc_file_close(c0, 0);
        ooc_file_close(a, 0);
        ooc_file_close(b, 0);
    }
    CU_ASSERT_FALSE(tu_same_file(tu_path("ip.npy"), tu_path("ip_copy.npy")));
    /* the same once more, whole: computed afresh from C as it is now */
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    CU_ASSERT_EQUAL(in_place_run("ip.npy", 3.0, 1), OOC_SUCCESS);
    CU_ASSERT_FALSE(tu_same_file(tu_path("ip.npy"), tu_path("ip_copy.npy")));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    /* run afresh (no resume) the job computes from C as it is now, as asked */
    CU_ASSERT_EQUAL(in_place_run("ip.npy", 2.0, 0), OOC_SUCCESS);
    CU_ASSERT_FALSE(tu_same_file(tu_path("ip.npy"), tu_path("ip_copy.npy")));
}

/* A journal at a path of the caller's names the temporary file it was
 * written for: a crash between a fresh ooc_file_create (which cannot remove
 * that journal) and the multiply (which does) leaves it beside a new,
 * empty temporary file. A resume then starts over instead of skipping the
 * blocks the journal recorded: before, the file was emptied in place (the
 * same inode) and the resume kept blocks that were no longer there. */
static void test_custom_journal_fresh_create(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    CU_ASSERT_EQUAL_FATAL(resume_run("whole.npy", 0, 0), OOC_SUCCESS);
    custom_journal = tu_path("cw.journal");
    unlink(custom_journal);
    CU_ASSERT_EQUAL_FATAL(resume_run("cw.npy", 5, 0), -1); /* killed: its journal and temporary file stay */
    CU_ASSERT(journal_done(custom_journal) >= 3);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    ooc_file_t *c = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("cw.npy"), &cs, 0, &c), OOC_SUCCESS); /* afresh */
    ooc_file_close(c, 0);                                                                 /* then a crash */
    CU_ASSERT_TRUE(exists(tu_path("cw.npy.ooc-tmp")));
    CU_ASSERT(journal_done(custom_journal) >= 3);
    CU_ASSERT_EQUAL(resume_run("cw.npy", 0, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(first_done, 1); /* from the first block */
    CU_ASSERT_TRUE(tu_same_file(tu_path("whole.npy"), tu_path("cw.npy")));
    custom_journal = NULL;
}

/* A journal whose temporary file is gone, naming a later one that took its
 * inode number on a file system that keeps no birth time (simulated: the
 * journal rewritten, checksums and all, with the later file's device and
 * inode and no birth time). The later file was made afresh and holds no
 * block: a resume must compute every block, not take the journal's. Before
 * the temporary file carried an id (io.h OOC_TMP_TRAILER, the journal's
 * " id="), such a journal matched it and C was committed with the blocks
 * it vouched for missing. */
static void test_journal_of_reused_inode(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    CU_ASSERT_EQUAL_FATAL(resume_run("whole.npy", 0, 0), OOC_SUCCESS);
    const char *ja = tu_path("ri.journal");
    custom_journal = ja;
    unlink(ja);
    CU_ASSERT_EQUAL_FATAL(resume_run("ri.npy", 5, 0), -1); /* killed: JA and its temporary file stay */
    ooc_journal_info_t have;
    int there = 0;
    ooc_err_t err;
    ooc_err_clear(&err);
    CU_ASSERT_EQUAL_FATAL(ooc_journal_read(ja, &have, &there, &err), OOC_SUCCESS);
    CU_ASSERT_FATAL(there && have.ndone >= 3 && !have.complete);
    CU_ASSERT(have.head.out_id != 0); /* the temporary file's id, recorded */
    /* the job afresh: a new temporary file (JA's is removed), then a crash */
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    ooc_file_t *c = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path("ri.npy"), &cs, 0, &c), OOC_SUCCESS);
    ooc_file_close(c, 0);
    struct stat sb;
    CU_ASSERT_FATAL(stat(tu_path("ri.npy.ooc-tmp"), &sb) == 0);
    CU_ASSERT((uint64_t)sb.st_ino != have.head.out_ino);
    /* JA as it would read had the new file taken the old one's inode number */
    ooc_journal_head_t forged = have.head;
    forged.out_dev = (uint64_t)sb.st_dev;
    forged.out_ino = (uint64_t)sb.st_ino;
    forged.out_born_sec = 0;
    forged.out_born_nsec = 0;
    unlink(ja);
    ooc_journal_t j;
    CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, ja, &forged, &err), OOC_SUCCESS);
    for (int64_t g = 0; g < have.head.total; g++)
        if (have.done[g / 8] >> (g % 8) & 1) CU_ASSERT_EQUAL(ooc_journal_done(&j, g, NULL, &err), OOC_SUCCESS);
    ooc_journal_close(&j, 0);
    ooc_journal_info_free(&have);
    CU_ASSERT(journal_done(ja) >= 3);
    CU_ASSERT_EQUAL(resume_run("ri.npy", 0, 1), OOC_SUCCESS);
    CU_ASSERT_EQUAL(first_done, 1); /* from the first block */
    CU_ASSERT_TRUE(tu_same_file(tu_path("whole.npy"), tu_path("ri.npy")));
    custom_journal = NULL;
}

/* A job stopped, then resumed where the file system has another device
 * number (mounted again, or a network file system seen from another node
 * of a cluster: NFS numbers each client's mounts): its blocks are kept, for
 * the inputs and the temporary file are the same files (inode, size,
 * modification time; the file's id). It computed the whole job again: the
 * device number was part of their identities. The journal is written as it
 * would read there: every device number in it one more. */
static void test_resume_remounted(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    CU_ASSERT_EQUAL_FATAL(resume_run("whole.npy", 0, 0), OOC_SUCCESS);
    static char ja[512]; /* (tu_path's buffer is reused) */
    snprintf(ja, sizeof ja, "%s", tu_path("rd.journal"));
    custom_journal = ja;
    /* then with A's status change time another too: another A (made apart,
     * on a new file system that gave it the old one's inode number, size
     * and modification time), the journal of another job: refused; then on
     * the same device with A's status change time another (chmod, a rename,
     * a link: the same file): kept (the review: refused, its blocks lost) */
    for (int variant = 0; variant < 3; variant++) {
        int other_a = variant >= 1, move_dev = variant != 2;
        unlink(ja);
        unlink(tu_path("rd.npy.ooc-tmp"));
        unlink(tu_path("rd.npy"));
        CU_ASSERT_EQUAL_FATAL(resume_run("rd.npy", 5, 0), -1); /* killed: the journal and its temporary file stay */
        ooc_journal_info_t have;
        int there = 0;
        ooc_err_t err;
        ooc_err_clear(&err);
        CU_ASSERT_EQUAL_FATAL(ooc_journal_read(ja, &have, &there, &err), OOC_SUCCESS);
        CU_ASSERT_FATAL(there && have.ndone >= 3 && !have.complete && (size_t)have.ndone == have.nsums);
        ooc_journal_head_t moved = have.head;
        moved.out_dev = have.head.out_dev + (move_dev ? 1 : 0);
        /* " A=DEV:..." and " B=DEV:...": DEV + 1; A's last field (its
         * status change time, SEC.NSEC) one second later with other_a */
        char line[sizeof moved.job];
        size_t used = 0;
        for (const char *p = have.head.job; *p && used + 32 < sizeof line;) {
            const char *a = strstr(p, " A="), *b = strstr(p, " B="), *q = a && (!b || a < b) ? a : b;
            if (q == NULL) {
                used += (size_t)snprintf(line + used, sizeof line - used, "%s", p);
                break;
            }
            q += 3;
            char *end;
            unsigned long long dev = strtoull(q, &end, 10);
            used += (size_t)snprintf(line + used, sizeof line - used, "%.*s%llu", (int)(q - p), p, dev + move_dev);
            p = end;
            if (other_a && q == a + 3) { /* up to A's last ':', then its seconds + 1 */
                const char *w = p + strcspn(p, " "), *c = w;
                while (c > p && c[-1] != ':') c--;
                unsigned long long sec = strtoull(c, &end, 10);
                used += (size_t)snprintf(line + used, sizeof line - used, "%.*s%llu", (int)(c - p), p, sec + 1);
                p = end;
            }
        }
        CU_ASSERT_FATAL(strcmp(line, have.head.job) != 0);
        snprintf(moved.job, sizeof moved.job, "%s", line);
        unlink(ja);
        ooc_journal_t j;
        CU_ASSERT_EQUAL_FATAL(ooc_journal_create(&j, ja, &moved, &err), OOC_SUCCESS);
        for (size_t i = 0; i < have.nsums; i++)
            CU_ASSERT_EQUAL(ooc_journal_done(&j, have.sums[i].g, &have.sums[i].digest, &err), OOC_SUCCESS);
        ooc_journal_close(&j, 0);
        int64_t kept = have.ndone;
        ooc_journal_info_free(&have);
        if (other_a && move_dev) {
            CU_ASSERT_EQUAL(resume_run("rd.npy", 0, 1), OOC_ERR_JOURNAL);
            CU_ASSERT_PTR_NOT_NULL(strstr(last_msg, "A is another file (on another device number, another status"));
            continue;
        }
        CU_ASSERT_EQUAL(resume_run("rd.npy", 0, 1), OOC_SUCCESS);
        ooc_stats_t st;
        CU_ASSERT_EQUAL(ooc_get_stats(H, &st), OOC_SUCCESS);
        if (st.blocks_resumed != kept)
            printf("\n    variant %d: %lld of %lld blocks kept (%s)\n", variant, (long long)st.blocks_resumed,
                   (long long)kept, last_msg);
        CU_ASSERT_EQUAL(st.blocks_resumed, kept);
        CU_ASSERT_TRUE(tu_same_file(tu_path("whole.npy"), tu_path("rd.npy")));
    }
    custom_journal = NULL;
}

/* ooc_files_inputs_changed() after a failure: an input that cannot be
 * examined (fstat failing: a mount gone, a stale NFS handle) is no input
 * changed, so the failure and the journal stand (the review: a read error
 * of a dying mount said "A changed" and left nothing to resume); at the end
 * of a job that computed its blocks, the job fails, not finished, its
 * journal kept (it was taken for changed too). Its descriptor swapped for
 * -1 fails fstat with EBADF. */
static void test_inputs_unexamined(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    ooc_file_t *a = open_file("ra", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    ooc_files_job_t *job = calloc(1, sizeof *job);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    job->h = H;
    job->A = a;
    snprintf(job->inputs[0], sizeof job->inputs[0], " =1:2:3:4.000000005:6x7:101");
    int fd = a->fd;
    a->fd = -1;
    int changed = -1;
    CU_ASSERT_EQUAL(ooc_files_inputs_changed(job, "pread ra: Input/output error", &changed), OOC_SUCCESS);
    CU_ASSERT_EQUAL(changed, 0);
    changed = -1;
    CU_ASSERT_EQUAL(ooc_files_inputs_changed(job, NULL, &changed), OOC_ERR_IO); /* (not finished, not changed) */
    CU_ASSERT_EQUAL(changed, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "its blocks are kept"));
    a->fd = fd;
    /* and examined, another identity: changed, the failure said with it */
    CU_ASSERT_EQUAL(ooc_set(H, OOC_PARAM_BLOCK_ROWS, 0), OOC_SUCCESS); /* (clears the last error) */
    CU_ASSERT_EQUAL(ooc_files_inputs_changed(job, "pread ra: file ended", &changed), OOC_ERR_IO);
    CU_ASSERT_EQUAL(changed, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "(the input A) changed while the job ran"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ooc_last_error(H), "(the job failed: pread ra: file ended)"));
    free(job);
    ooc_file_close(a, 0);
}

/* op(B) in 8 chunks, so block 0 is multiplied chunk by chunk (a different
 * summation order): a resumed run must still compute every block as the
 * uninterrupted run did. Before, the first block of every run was split,
 * and the block after the resume point differed in its last bits. */
static void test_resume_chunked(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    resume_chunks = 8;
    CU_ASSERT_EQUAL_FATAL(resume_run("whole8.npy", 0, 0), OOC_SUCCESS);
    for (int64_t at = 3; at <= 9; at += 6) {
        char name[32];
        snprintf(name, sizeof name, "cut8_%lld.npy", (long long)at);
        CU_ASSERT_EQUAL_FATAL(resume_run(name, at, 0), -1);
        int64_t recorded = journal_done(tu_path("cut8_3.npy.ooc-journal"));
        CU_ASSERT(recorded >= 3);
        CU_ASSERT_EQUAL(resume_run(name, 0, 1), OOC_SUCCESS);
        CU_ASSERT(first_done > 1); /* resumed part-way, not from scratch */
        CU_ASSERT_TRUE(tu_same_file(tu_path("whole8.npy"), tu_path(name)));
    }
    /* the finished job is recognised as such, and no longer once C changes */
    ooc_file_t *a = open_file("ra", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_t *b = open_file("rb", OOC_FORMAT_AUTO, OOC_R64, RM, 0, 0);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, OOC_R64, RM};
    double one = 1, zero = 0, two = 2;
    int fin = -1;
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, tu_path("cut8_3.npy"),
                                            &cs, NULL, &fin), OOC_SUCCESS);
    CU_ASSERT_EQUAL(fin, 1);
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &two, a, b, &zero, NULL, tu_path("cut8_3.npy"),
                                            &cs, NULL, &fin), OOC_SUCCESS);
    CU_ASSERT_EQUAL(fin, 0); /* another alpha: another job */
    double minus_zero = -0.0;
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &minus_zero, NULL,
                                            tu_path("cut8_3.npy"), &cs, NULL, &fin), OOC_SUCCESS);
    CU_ASSERT_EQUAL(fin, 1); /* beta -0 is 0: the same job (it read as another) */
    /* argument errors are errors, not "not finished" (they were OOC_SUCCESS) */
    fin = 7;
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, (ooc_op_t)999, OOC_OP_N, &one, a, b, &zero, NULL,
                                            tu_path("cut8_3.npy"), &cs, NULL, &fin), OOC_ERR_INVALID_TRANSA);
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, (ooc_op_t)0, &one, a, b, &zero, NULL,
                                            tu_path("cut8_3.npy"), &cs, NULL, &fin), OOC_ERR_INVALID_TRANSB);
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &two, NULL, tu_path("cut8_3.npy"),
                                            &cs, NULL, &fin), OOC_ERR_NULL_ARG);
    CU_ASSERT(strstr(ooc_last_error(H), "needs C0") != NULL);
    CU_ASSERT_EQUAL(fin, 7);
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, tu_path("nothing.npy"),
                                            &cs, NULL, &fin), OOC_SUCCESS);
    CU_ASSERT_EQUAL(fin, 0); /* no journal */
    /* a failure writes no output: *finished is left as it was */
    FILE *junk = fopen(tu_path("junk.journal"), "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(junk);
    fputs("not a journal\n", junk);
    fclose(junk);
    ooc_files_opts_t jo = {.journal = tu_path("junk.journal")};
    fin = 7;
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, tu_path("cut8_3.npy"),
                                            &cs, &jo, &fin), OOC_ERR_JOURNAL);
    CU_ASSERT_EQUAL(fin, 7);
    FILE *f = fopen(tu_path("cut8_3.npy"), "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 200, SEEK_SET);
    fputc(0, f);
    fclose(f);
    CU_ASSERT_EQUAL(ooc_gemm_files_finished(H, OOC_OP_N, OOC_OP_N, &one, a, b, &zero, NULL, tu_path("cut8_3.npy"),
                                            &cs, NULL, &fin), OOC_SUCCESS);
    CU_ASSERT_EQUAL(fin, 0); /* written since: not the output it finished */
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    resume_chunks = 0;
}

/* ooc_cancel() once `*user` blocks are done and 3 recorded (a stop signal's path). */
static void cancel_after(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)total, (void)rd, (void)wr;
    if (done < *(int64_t *)user) return;
    for (int i = 0; i < 1000 && journal_done(tu_path("by.npy.ooc-journal")) < 3; i++) usleep(10000);
    ooc_cancel(H);
}

/* One run of a x b into by.npy by H with backend `kind`: resumed, or
 * cancelled after `stop_at` blocks (> 0). */
static ooc_stats_t by_stats; /* by_run's, when it succeeded */

/* (double; complex double with by_complex: files za, zb, output bz.npy) */
static int by_complex;

static ooc_status_t by_run(int kind, int resume, int64_t stop_at, int allow_mixed)
{
    double one[2] = {1, 0}, zero[2] = {0, 0};
    ooc_dtype_t t = by_complex ? OOC_C64 : OOC_R64;
    ooc_file_t *a = open_file(by_complex ? "za" : "ra", OOC_FORMAT_AUTO, t, RM, 0, 0);
    ooc_file_t *b = open_file(by_complex ? "zb" : "rb", OOC_FORMAT_AUTO, t, RM, 0, 0);
    ooc_file_spec_t cs = {OOC_FORMAT_NPY, RM_, RN, t, RM};
    ooc_file_t *c = NULL;
    ooc_set(H, OOC_PARAM_BACKEND, kind);
    ooc_status_t st = ooc_file_create(H, tu_path(by_complex ? "bz.npy" : "by.npy"), &cs, resume ? OOC_FILE_RESUME : 0, &c);
    if (st == OOC_SUCCESS) {
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 96 << 10);
        ooc_files_opts_t o = {.resume = resume, .progress = stop_at > 0 ? cancel_after : NULL,
                              .progress_user = &stop_at, .allow_mixed = allow_mixed};
        st = ooc_gemm_files(H, OOC_OP_N, OOC_OP_N, one, a, b, zero, NULL, c, &o);
        snprintf(last_msg, sizeof last_msg, "%s", ooc_last_error(H));
        if (st == OOC_SUCCESS) st = ooc_get_stats(H, &by_stats);
        if (st == OOC_SUCCESS && allow_mixed) { /* C mixes two computers' bits: correct all the same */
            ooc_verify_result_t vr;
            st = ooc_verify_files(H, OOC_OP_N, OOC_OP_N, one, a, b, zero, NULL, c, 0, 0, &vr);
            if (st == OOC_SUCCESS && !vr.passed) st = OOC_ERR_INTERNAL;
        }
        ooc_set(H, OOC_PARAM_DEVICE_MEM, 0);
        if (st == OOC_SUCCESS) st = ooc_file_commit(H, c);
    }
    ooc_file_close(c, 0);
    ooc_file_close(a, 0);
    ooc_file_close(b, 0);
    ooc_set(H, OOC_PARAM_BACKEND, OOC_TEST_BACKEND);
    return st;
}

/* The journal records what computed its blocks (ooc_compute_id(), for
 * the job's type ooc_compute_id_for(): a complex job by custom is cuBLAS's); a
 * resume that would compute the rest by another backend is refused, files
 * kept (their last bits differ: C would be no run's); by the same one it
 * finishes byte-identical to an uninterrupted run. On a GPU the other is
 * our own kernels (custom) against cuBLAS; the host build records OpenBLAS
 * and its kernels (test_cli_files.sh resumes with others). */
static void test_resume_computed_by(void)
{
    free(make_file("ra", OOC_FORMAT_NPY, OOC_R64, RM, RM_, RK));
    free(make_file("rb", OOC_FORMAT_NPY, OOC_R64, RM, RK, RN));
    CU_ASSERT_EQUAL_FATAL(resume_run("whole.npy", 0, 0), OOC_SUCCESS);
    char id[OOC_COMPUTE_ID_MAX], want[OOC_COMPUTE_ID_MAX + 8];
    CU_ASSERT_EQUAL(ooc_compute_id(H, id, 8), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(ooc_compute_id(H, NULL, sizeof id), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_compute_id(NULL, id, sizeof id), OOC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL_FATAL(ooc_compute_id(H, id, sizeof id), OOC_SUCCESS);
    CU_ASSERT(strncmp(id, OOC_TEST_BACKEND == OOC_BACKEND_HOST ? "host/openblas-" : "cublas/", 7) == 0);
    /* for a type: the same on this backend, whatever the type */
    for (ooc_dtype_t t = OOC_R32; t <= OOC_C64; t++) {
        char typed[OOC_COMPUTE_ID_MAX] = "";
        CU_ASSERT_EQUAL(ooc_compute_id_for(H, t, typed, sizeof typed), OOC_SUCCESS);
        CU_ASSERT_STRING_EQUAL(typed, id);
    }
    CU_ASSERT_EQUAL(ooc_compute_id_for(H, (ooc_dtype_t)0, id, sizeof id), OOC_ERR_INVALID_DTYPE);
    CU_ASSERT_EQUAL(ooc_compute_id_for(H, (ooc_dtype_t)5, id, sizeof id), OOC_ERR_INVALID_DTYPE);
    CU_ASSERT_EQUAL(ooc_compute_id_for(H, OOC_R64, id, 8), OOC_ERR_INVALID_PARAM);
    CU_ASSERT_EQUAL(ooc_compute_id_for(H, OOC_R64, NULL, sizeof id), OOC_ERR_NULL_ARG);
    CU_ASSERT_EQUAL(ooc_compute_id_for(NULL, OOC_R64, id, sizeof id), OOC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL_FATAL(ooc_compute_id(H, id, sizeof id), OOC_SUCCESS);
    unlink(tu_path("by.npy"));
    CU_ASSERT_EQUAL_FATAL(by_run(OOC_TEST_BACKEND, 0, 4, 0), OOC_ERR_CANCELLED);
    CU_ASSERT_FALSE(exists(tu_path("by.npy")));
    CU_ASSERT(journal_done(tu_path("by.npy.ooc-journal")) >= 3);
    snprintf(want, sizeof want, " by=%s\n", id);
    FILE *f = fopen(tu_path("by.npy.ooc-journal"), "rb");
    char text[4096] = "";
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    if (OOC_TEST_BACKEND == OOC_BACKEND_CUBLAS) {
        char other[OOC_COMPUTE_ID_MAX];
        ooc_set(H, OOC_PARAM_BACKEND, OOC_BACKEND_CUSTOM);
        CU_ASSERT_EQUAL(ooc_compute_id(H, other, sizeof other), OOC_SUCCESS);
        CU_ASSERT(strncmp(other, "custom/", 7) == 0);
        /* a complex job by custom: cuBLAS's tiles, cuBLAS's id; a real one: custom's */
        char typed[OOC_COMPUTE_ID_MAX];
        CU_ASSERT_EQUAL(ooc_compute_id_for(H, OOC_C32, typed, sizeof typed), OOC_SUCCESS);
        CU_ASSERT_STRING_EQUAL(typed, id);
        CU_ASSERT_EQUAL(ooc_compute_id_for(H, OOC_C64, typed, sizeof typed), OOC_SUCCESS);
        CU_ASSERT_STRING_EQUAL(typed, id);
        CU_ASSERT_EQUAL(ooc_compute_id_for(H, OOC_R32, typed, sizeof typed), OOC_SUCCESS);
        CU_ASSERT_STRING_EQUAL(typed, other);
        ooc_set(H, OOC_PARAM_BACKEND, OOC_TEST_BACKEND);
        CU_ASSERT_EQUAL(by_run(OOC_BACKEND_CUSTOM, 1, 0, 0), OOC_ERR_JOURNAL);
        CU_ASSERT(strstr(last_msg, "computed by cublas/") != NULL && strstr(last_msg, "by custom/") != NULL);
        CU_ASSERT_FALSE(exists(tu_path("by.npy")));
        CU_ASSERT_TRUE(exists(tu_path("by.npy.ooc-tmp")));
        /* allowed to mix: the blocks kept are counted and named, and C
         * checks against OpenBLAS */
        int64_t kept = journal_done(tu_path("by.npy.ooc-journal"));
        CU_ASSERT_EQUAL(by_run(OOC_BACKEND_CUSTOM, 1, 0, 1), OOC_SUCCESS);
        CU_ASSERT(by_stats.blocks_mixed == kept && by_stats.blocks_resumed == kept);
        CU_ASSERT_STRING_EQUAL(by_stats.mixed_by, id);
        CU_ASSERT_STRING_EQUAL(by_stats.kept_by, id); /* what computed the blocks kept */
        CU_ASSERT_TRUE(exists(tu_path("by.npy")));
        /* afresh, then as it started: byte-identical to an uninterrupted run */
        unlink(tu_path("by.npy"));
        CU_ASSERT_EQUAL(by_run(OOC_TEST_BACKEND, 0, 4, 0), OOC_ERR_CANCELLED);
    }
    CU_ASSERT_EQUAL(by_run(OOC_TEST_BACKEND, 1, 0, 0), OOC_SUCCESS);
    CU_ASSERT(by_stats.blocks_mixed == 0 && by_stats.mixed_by[0] == '\0');
    /* the blocks kept, this run's own kind: its id (blocks_resumed > 0) */
    CU_ASSERT(by_stats.blocks_resumed > 0);
    CU_ASSERT_STRING_EQUAL(by_stats.kept_by, id);
    CU_ASSERT_TRUE(tu_same_file(tu_path("whole.npy"), tu_path("by.npy")));
    if (OOC_TEST_BACKEND == OOC_BACKEND_CUBLAS) {
        /* complex data: the custom backend multiplies its tiles with cuBLAS,
         * so its journal says cublas and a cuBLAS job resumed by custom (or
         * the reverse) is neither refused nor mixed: byte-identical (it was
         * refused: the id said custom) */
        by_complex = 1;
        free(make_file("za", OOC_FORMAT_NPY, OOC_C64, RM, RM_, RK));
        free(make_file("zb", OOC_FORMAT_NPY, OOC_C64, RM, RK, RN));
        unlink(tu_path("bz.npy"));
        CU_ASSERT_EQUAL(by_run(OOC_TEST_BACKEND, 0, 0, 0), OOC_SUCCESS);
        CU_ASSERT_EQUAL(rename(tu_path("bz.npy"), tu_path("bz_whole.npy")), 0);
        for (int first = 0; first < 2; first++) {
            int k0 = first ? OOC_BACKEND_CUSTOM : OOC_TEST_BACKEND, k1 = first ? OOC_TEST_BACKEND : OOC_BACKEND_CUSTOM;
            unlink(tu_path("bz.npy"));
            CU_ASSERT_EQUAL(by_run(k0, 0, 4, 0), OOC_ERR_CANCELLED);
            CU_ASSERT(journal_done(tu_path("bz.npy.ooc-journal")) >= 3);
            CU_ASSERT_EQUAL(by_run(k1, 1, 0, 0), OOC_SUCCESS);
            CU_ASSERT(by_stats.blocks_resumed >= 3 && by_stats.blocks_mixed == 0);
            CU_ASSERT_TRUE(tu_same_file(tu_path("bz_whole.npy"), tu_path("bz.npy")));
        }
        by_complex = 0;
    }
}

/* ---- ooc_journal_forget ---- */

/* A file multiply in a thread of its own, held in its progress callback
 * after its first block until the test lets it go: its journal is open and
 * locked meanwhile. (The callback must return quickly; holding it here is
 * how the test makes "a running job" last as long as it needs.) */
static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static int hold_state; /* 0 running, 1 held in the callback, 2 let go */

typedef struct {
    ooc_handle_t *h;
    ooc_file_t *a, *b, *c;
    const char *journal;
    ooc_status_t st;
} held_job_t;

/* wait (30 s at most) until hold_state reaches `want`; hold_mu held */
static void hold_wait(int want)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    while (hold_state < want)
        if (pthread_cond_timedwait(&hold_cv, &hold_mu, &until) != 0) break;
}

static void hold_first(void *user, int64_t done, int64_t total, uint64_t rd, uint64_t wr)
{
    (void)user, (void)done, (void)total, (void)rd, (void)wr;
    pthread_mutex_lock(&hold_mu);
    if (hold_state == 0) {
        hold_state = 1;
        pthread_cond_broadcast(&hold_cv);
        hold_wait(2);
    }
    pthread_mutex_unlock(&hold_mu);
}

static void *held_job(void *arg)
{
    held_job_t *j = arg;
    double al = 0.75, be = 0;
    ooc_files_opts_t o = {.journal = j->journal, .progress = hold_first};
    j->st = ooc_gemm_files(j->h, OOC_OP_N, OOC_OP_N, &al, j->a, j->b, &be, NULL, j->c, &o);
    pthread_mutex_lock(&hold_mu); /* a job that never called back lets the test go on */
    if (hold_state == 0) hold_state = 1;
    pthread_cond_broadcast(&hold_cv);
    pthread_mutex_unlock(&hold_mu);
    return NULL;
}

static void spit_text(const char *p, const char *text)
{
    FILE *f = fopen(p, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* ooc_journal_forget (include/ooc_gemm_files.h): nothing there is fine; a
 * journal a running job holds is busy and kept; a file that is not a
 * journal, and a symbolic link (to a journal or not), are refused and kept
 * with their targets; an empty file (a journal whose creation was cut
 * short) and a finished job's journal are removed. */
static void test_journal_forget(void)
{
    CU_ASSERT_EQUAL(ooc_journal_forget(NULL, tu_path("fg.journal")), OOC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL(ooc_journal_forget(H, NULL), OOC_ERR_NULL_ARG);
    /* (tu_path's buffers rotate: the paths kept are copied) */
    char none[256], text[256], empty[256], jp[256], ljournal[256], ltext[256];
    snprintf(none, sizeof none, "%s", tu_path("fg-none.journal"));
    snprintf(text, sizeof text, "%s", tu_path("fg-notes.txt"));
    snprintf(empty, sizeof empty, "%s", tu_path("fg-empty.journal"));
    snprintf(jp, sizeof jp, "%s", tu_path("fg.journal"));
    snprintf(ljournal, sizeof ljournal, "%s", tu_path("fg-link.journal"));
    snprintf(ltext, sizeof ltext, "%s", tu_path("fg-link2.journal"));
    /* nothing there */
    unlink(none);
    CU_ASSERT_EQUAL(ooc_journal_forget(H, none), OOC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(ooc_last_error(H), "");
    /* not a journal: refused, kept as it was */
    spit_text(text, "ooc notes, not a journal\n");
    CU_ASSERT_EQUAL(ooc_journal_forget(H, text), OOC_ERR_JOURNAL);
    CU_ASSERT_PTR_NOT_NULL(ooc_last_error_path(H));
    if (ooc_last_error_path(H)) CU_ASSERT_STRING_EQUAL(ooc_last_error_path(H), text);
    CU_ASSERT_TRUE(same_content(text, "ooc notes, not a journal\n"));
    /* empty: a journal whose creation was cut short, removed */
    spit_text(empty, "");
    CU_ASSERT_EQUAL(ooc_journal_forget(H, empty), OOC_SUCCESS);
    CU_ASSERT_FALSE(exists(empty));

    /* a journal a running job holds: busy, kept */
    const int64_t m = 301, n = 45, k = 67;
    free(make_file("fga", OOC_FORMAT_NPY, OOC_R64, RM, m, k));
    free(make_file("fgb", OOC_FORMAT_NPY, OOC_R64, RM, k, n));
    held_job_t j = {NULL, NULL, NULL, NULL, jp, OOC_ERR_INTERNAL};
    unlink(jp);
    CU_ASSERT_EQUAL_FATAL(ooc_create(&j.h), OOC_SUCCESS);
    ooc_set(j.h, OOC_PARAM_BACKEND, OOC_TEST_BACKEND);
    ooc_set(j.h, OOC_PARAM_DEVICE_MEM, 96 << 10); /* several blocks */
    ooc_file_spec_t any = {OOC_FORMAT_AUTO, 0, 0, OOC_R64, RM}, cs = {OOC_FORMAT_NPY, m, n, OOC_R64, RM};
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(j.h, tu_path("fga"), &any, &j.a), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_open(j.h, tu_path("fgb"), &any, &j.b), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(j.h, tu_path("fg.npy"), &cs, 0, &j.c), OOC_SUCCESS);
    hold_state = 0;
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, held_job, &j), 0);
    pthread_mutex_lock(&hold_mu);
    hold_wait(1);
    int held = hold_state == 1;
    pthread_mutex_unlock(&hold_mu);
    CU_ASSERT_TRUE(held);
    struct stat before, after;
    CU_ASSERT_EQUAL(stat(jp, &before), 0);
    ooc_status_t st = ooc_journal_forget(H, jp);
    if (st != OOC_ERR_BUSY) fprintf(stderr, "\n    forget a held journal: %s: %s\n", ooc_status_string(st), ooc_last_error(H));
    CU_ASSERT_EQUAL(st, OOC_ERR_BUSY);
    CU_ASSERT(ooc_last_error_path(H) != NULL && strcmp(ooc_last_error_path(H), jp) == 0);
    CU_ASSERT(stat(jp, &after) == 0 && after.st_ino == before.st_ino);
    pthread_mutex_lock(&hold_mu);
    hold_state = 2;
    pthread_cond_broadcast(&hold_cv);
    pthread_mutex_unlock(&hold_mu);
    pthread_join(th, NULL);
    if (j.st != OOC_SUCCESS) fprintf(stderr, "\n    held job: %s: %s\n", ooc_status_string(j.st), ooc_last_error(j.h));
    CU_ASSERT_EQUAL(j.st, OOC_SUCCESS); /* the forget took nothing from it */
    CU_ASSERT(stat(jp, &after) == 0 && after.st_ino == before.st_ino && after.st_size > 0);
    ooc_file_close(j.c, 1);
    ooc_file_close(j.a, 0);
    ooc_file_close(j.b, 0);
    ooc_destroy(j.h);

    /* symbolic links: never followed, neither they nor their targets removed */
    unlink(ljournal);
    unlink(ltext);
    CU_ASSERT_EQUAL_FATAL(symlink(jp, ljournal), 0);
    CU_ASSERT_EQUAL_FATAL(symlink(text, ltext), 0);
    CU_ASSERT_EQUAL(ooc_journal_forget(H, ljournal), OOC_ERR_JOURNAL);
    CU_ASSERT(strstr(ooc_last_error(H), "symbolic link") != NULL);
    CU_ASSERT_EQUAL(ooc_journal_forget(H, ltext), OOC_ERR_JOURNAL);
    struct stat sb;
    CU_ASSERT(lstat(ljournal, &sb) == 0 && S_ISLNK(sb.st_mode));
    CU_ASSERT(lstat(ltext, &sb) == 0 && S_ISLNK(sb.st_mode));
    CU_ASSERT(stat(jp, &sb) == 0 && sb.st_ino == before.st_ino && sb.st_size == after.st_size);
    CU_ASSERT_TRUE(same_content(text, "ooc notes, not a journal\n"));
    /* the finished job's journal, no longer held: removed; then nothing there */
    CU_ASSERT_EQUAL(ooc_journal_forget(H, jp), OOC_SUCCESS);
    CU_ASSERT_FALSE(exists(jp));
    CU_ASSERT_EQUAL(ooc_journal_forget(H, jp), OOC_SUCCESS);
    unlink(ljournal);
    unlink(ltext);
}

int main(void)
{
    if (ooc_create(&H) != OOC_SUCCESS) return 1;
    int ok = tu_backend_runs(H, OOC_TEST_BACKEND);
    if (ok <= 0) {
        ooc_destroy(H);
        return ok == 0 ? 77 : 1;
    }
    if (tu_dir_make("resume") != 0) return 1;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("resume", NULL, NULL);
    CU_add_test(s, "a resume computes as the run it resumes", test_resume_computed_by);
    CU_add_test(s, "ooc_journal_forget: only a journal nobody holds", test_journal_forget);
    CU_add_test(s, "a finished job in place is not resumed from its result", test_in_place_finished);
    /* fork() after CUDA is initialised is not allowed: the host build tests the kill */
    if (OOC_TEST_BACKEND == OOC_BACKEND_HOST) {
        CU_add_test(s, "resume after SIGKILL", test_resume_after_kill);
        CU_add_test(s, "resume after SIGKILL, op(B) in chunks", test_resume_chunked);
        CU_add_test(s, "a custom journal is not the fresh output's", test_custom_journal_fresh_create);
        CU_add_test(s, "a journal of a file whose inode number a later file took", test_journal_of_reused_inode);
        CU_add_test(s, "resumed where the file system has another device number", test_resume_remounted);
        CU_add_test(s, "an input that cannot be examined after a failure: not changed", test_inputs_unexamined);
    }
    int rc = tu_run();
    ooc_destroy(H);
    if (tu_dir_remove() != 0) rc = 1;
    return rc;
}
