/* SPDX-License-Identifier: MIT */
/*
 * filesutil.h: what the two suites of ooc_gemm_files share (test_files.c,
 * test_resume.c): the handle under test, matrix files of random values in
 * the suite's directory (tu_path), and small checks on files.
 */
#ifndef OOC_FILESUTIL_H
#define OOC_FILESUTIL_H

#include <stdint.h>

#include "ooc_gemm.h"

/* the handle under test, set to the backend OOC_TEST_BACKEND */
extern ooc_handle_t *H;

/* 1 when path p exists */
int exists(const char *p);
/* Write a random rows x cols matrix file; returns its data (caller frees). */
void *make_file(const char *name, ooc_format_t fmt, ooc_dtype_t t, ooc_layout_t layout, int64_t rows,
                int64_t cols);
/* Open the suite's file `name` with that spec; the open must succeed. */
ooc_file_t *open_file(const char *name, ooc_format_t fmt, ooc_dtype_t t, ooc_layout_t layout,
                      int64_t rows, int64_t cols);
/* 1 when file p holds exactly text (under 256 bytes) */
int same_content(const char *p, const char *text);

#endif
