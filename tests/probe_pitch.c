/* SPDX-License-Identifier: MIT */
/*
 * probe_pitch.c: a probe, not in make check (it pins up to 5 GiB of host
 * memory): ooc_gemm on pinned operands (ooc_host_alloc) whose leading
 * dimension puts their lines 2.5 GiB and 4.7 GiB apart, past 2^31 and 2^32
 * bytes (the copies' pitches), and on single lines with leading dimensions
 * of 2^56 and 2^60 elements; every element checked against a loop (small
 * integers: exact). docs/PERFORMANCE.md, session 33, has its results on an
 * H200. Build against a built tree:
 *   gcc -O2 -std=c11 -Iinclude tests/probe_pitch.c -L.libs -looc_gemm -lm -o probe_pitch
 *   LD_LIBRARY_PATH=.libs ./probe_pitch
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ooc_gemm.h"

static int run(ooc_handle_t *h, const char *what, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc)
{
    double *A, *B, *C;
    size_t sa = (size_t)(lda * (k - 1) + m) * 8, sb = (size_t)(ldb * (n - 1) + k) * 8, sc = (size_t)(ldc * (n - 1) + m) * 8;
    if (ooc_host_alloc(h, sa, (void **)&A) || ooc_host_alloc(h, sb, (void **)&B) || ooc_host_alloc(h, sc, (void **)&C)) {
        printf("%s: alloc failed: %s\n", what, ooc_last_error(h));
        return 1;
    }
    for (int64_t j = 0; j < k; j++) for (int64_t i = 0; i < m; i++) A[i + j * lda] = (double)((i * 7 + j * 3) % 11) - 5;
    for (int64_t j = 0; j < n; j++) for (int64_t i = 0; i < k; i++) B[i + j * ldb] = (double)((i * 5 + j) % 7) - 3;
    for (int64_t j = 0; j < n; j++) for (int64_t i = 0; i < m; i++) C[i + j * ldc] = 1.0;
    double al = 1.0, be = 0.5;
    ooc_status_t st = ooc_gemm(h, OOC_R64, OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N, m, n, k, &al, A, lda, B, ldb, &be, C, ldc);
    if (st != OOC_SUCCESS) {
        printf("%s: status %d: %s\n", what, (int)st, ooc_last_error(h));
        return 1;
    }
    int64_t bad = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double s = 0.5;
            for (int64_t l = 0; l < k; l++) s += A[i + l * lda] * B[l + j * ldb];
            if (C[i + j * ldc] != s) bad++;
        }
    printf("%s: m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld: %s (%lld wrong)\n", what, (long long)m, (long long)n,
           (long long)k, (long long)lda, (long long)ldb, (long long)ldc, bad ? "FAIL" : "ok", (long long)bad);
    ooc_host_free(h, A), ooc_host_free(h, B), ooc_host_free(h, C);
    return bad != 0;
}

int main(void)
{
    ooc_handle_t *h;
    if (ooc_create(&h)) return 2;
    int64_t big = (int64_t)320 << 20; /* 2.5 GiB of doubles between lines */
    int rc = 0;
    rc |= run(h, "A's pitch", 1001, 3, 2, big, 2, 1001);
    rc |= run(h, "C's pitch", 1001, 2, 3, 1001, 3, big);
    rc |= run(h, "B's pitch", 1001, 2, 3, 1001, big, 1001);
    rc |= run(h, "A one line", 1001, 3, 1, big, 1, 1001);
    int64_t bigger = (int64_t)600 << 20; /* 4.7 GiB between lines: past 2^32 */
    rc |= run(h, "A's pitch > 2^32", 1001, 3, 2, bigger, 2, 1001);
    rc |= run(h, "C's pitch > 2^32", 1001, 2, 3, 1001, 3, bigger);
    rc |= run(h, "A one line, lda 2^56", 1001, 3, 1, (int64_t)1 << 56, 1, 1001);
    rc |= run(h, "C one column, ldc 2^56", 1001, 1, 3, 1001, 3, (int64_t)1 << 56);
    rc |= run(h, "A one line, lda 2^60", 1001, 3, 1, (int64_t)1 << 60, 1, 1001);
    ooc_destroy(h);
    return rc;
}
