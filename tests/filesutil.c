/* SPDX-License-Identifier: MIT */
/*
 * filesutil.c: see filesutil.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <CUnit/Basic.h>

#include "filesutil.h"
#include "testutil.h"

ooc_handle_t *H;
static uint64_t seed = 99;

int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Write a random rows x cols matrix file; returns its data (caller frees). */
void *make_file(const char *name, ooc_format_t fmt, ooc_dtype_t t, ooc_layout_t layout, int64_t rows,
                int64_t cols)
{
    size_t count = (size_t)(rows * cols);
    void *data = malloc(count * tu_elem(t));
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    tu_fill(t, data, count, &seed);
    ooc_file_spec_t spec = {fmt, rows, cols, t, layout};
    ooc_file_t *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ooc_file_create(H, tu_path(name), &spec, 0, &f), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_write(H, f, 0, data, count), OOC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(ooc_file_commit(H, f), OOC_SUCCESS);
    ooc_file_close(f, 0);
    return data;
}

ooc_file_t *open_file(const char *name, ooc_format_t fmt, ooc_dtype_t t, ooc_layout_t layout,
                      int64_t rows, int64_t cols)
{
    ooc_file_spec_t spec = {fmt, rows, cols, t, layout};
    ooc_file_t *f = NULL;
    ooc_status_t st = ooc_file_open(H, tu_path(name), &spec, &f);
    if (st != OOC_SUCCESS) fprintf(stderr, "\n    open %s: %s\n", name, ooc_last_error(H));
    CU_ASSERT_EQUAL_FATAL(st, OOC_SUCCESS);
    return f;
}

int same_content(const char *p, const char *text)
{
    FILE *f = fopen(p, "rb");
    char buf[256] = "";
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}
