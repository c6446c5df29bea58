/* SPDX-License-Identifier: MIT */
/*
 * bench.h: what the parts of oocgemm bench share: a shape, the options, one
 * method's result, what holds for the whole run, and everything about one
 * shape; bench_run.c runs the methods of a shape, bench_report.c prints
 * them as text, CSV or JSON, cmd_bench.c parses the command line and drives
 * the shapes.
 */
#ifndef OOCGEMM_BENCH_H
#define OOCGEMM_BENCH_H

#include "cli.h"
#include "peers.h"

/* A shape of the bench: the named ones (--shape, --suite) or -m -n -k. */
typedef struct {
    const char *name;
    int64_t m, n, k;
    ooc_dtype_t dtype;
    ooc_layout_t layout;
    ooc_op_t ta, tb;
    double alpha, beta;
    int pinned;
    double target; /* floor/time PERFORMANCE.md asks of ours; 0: none but "no worse than cublasXt" */
    const char *about;
    int tf32;           /* the shape runs ours (and the cuBLAS peers) with TF32 */
    int64_t device_mem; /* ours' device budget (0: automatic; --device-mem overrides) */
} bench_shape_t;

#define BENCH_S1 65536, 16384, 16384
#define BENCH_COL_NN OOC_COL_MAJOR, OOC_OP_N, OOC_OP_N
#define BENCH_MAX_SHAPES 64
#define BENCH_MAX_DIMS 32

typedef struct {
    bench_shape_t shapes[BENCH_MAX_SHAPES];
    int nshapes;
    int64_t m, n, k;
    int have_m, have_n, have_k, suite;
    lib_opts_t lib;
    int64_t repeat;
    int xt_dims[BENCH_MAX_DIMS], nxt, xt_given;
    int xt_pinning; /* -1: auto; 0 off; 1 on; 2 both */
    int no_xt, no_serial, no_incore;
    int64_t check_rows;
    uint64_t seed;
    int csv, json, quiet;
} bench_opts_t;

/* Ours and in-core cuBLAS run at least this often whatever --repeat: the
 * floor's R is in-core cuBLAS's best, floor/time compares ours' best with
 * it, and the same DGEMM's time varies by run on an H200 alike for both
 * (S1: 0.70, 0.69, 0.66 s, then again, for ours and for in-core cuBLAS,
 * in one bench run at 1965-1980 MHz), so one run of each can land on
 * different phases (docs/PERFORMANCE.md). */
#define FLOOR_MIN_RUNS 3

enum { BM_OURS, BM_SERIAL, BM_XT, BM_INCORE };
enum { BS_RAN, BS_SKIPPED, BS_ERROR };

/* One method on one shape. */
typedef struct {
    int kind;
    char label[48];
    int block_dim;      /* BM_XT: as asked (0: cublasXt's default) */
    int dim_used;       /* BM_XT: the block dim it ran at */
    int pinning;        /* BM_XT: pinning mode on */
    int64_t block_rows; /* BM_SERIAL, BM_OURS */
    int first_only;     /* --devices: ran on the first device alone (else on all) */
    int status;         /* BS_* */
    char msg[PEER_MSG_LEN];
    double *times;
    int64_t ntimes;
    double best, median;
    int checked, passed;
    double max_err;
    int64_t off; /* elements of the checked rows off by about their own size (check_compare) */
    int64_t undecided; /* elements past the type's range in the reference (check_compare) */
} bench_method_t;

/* What holds for every shape of a run. */
typedef struct {
    int peers;                /* run the peers */
    const char *peers_reason; /* else why not */
    int cuda;                 /* a GPU backend: the GPUs' copy bandwidth can be measured */
    int device;               /* the first device: the peers' (and ours' alone with --devices) */
    int multi;                /* --devices of several: ours alone and on all, cublasXt on all */
    int ndev;                 /* the devices, the first first (0 with multi: every one, not known) */
    int devs[OOC_MAX_DEVICES];
    char gpu[1200];
} bench_env_t;

/* Everything about one shape, for the text, CSV and JSON reports. */
typedef struct {
    const bench_env_t *env;
    bench_shape_t sh;
    run_opts_t o;
    floor_t fl;       /* R from in-core cuBLAS on the whole shape when it ran, else the probe;
                       * with --devices, of all the GPUs together */
    floor_t fl_probe; /* R from the short probe (min(dim, 16384)), for comparison */
    int rate_whole;   /* fl's R is in-core cuBLAS on this very shape */
    double rate_dev[OOC_MAX_DEVICES]; /* --devices: each device's probe (TFLOP/s), as env->devs */
    char floor_note[PEER_MSG_LEN + 64]; /* why the floor is n/a, or "" */
    const char *backend;
    ooc_stats_t stats;
    int have_stats;
    bench_method_t *meth;
    int nmeth;
    int xt_best; /* index in meth, -1: none */
    double ratio; /* time of cublasXt's best / time of ours; 0: n/a */
    int ours_one; /* --devices: index in meth of ours on the first device alone; -1: none */
    double scaling; /* its time / ours' on all the devices; 0: n/a */
    double tol;
    int64_t check_rows; /* 0: no check */
    const char *peers_skipped; /* why the peers did not run, or NULL */
    char error[PEER_MSG_LEN];  /* a failure of the shape as a whole, or "" */
} bench_result_t;

/* bench_run.c */
int bench_shape(const bench_opts_t *bo, const bench_env_t *env, const bench_shape_t *sh, bench_result_t *res);
void bench_result_free(bench_result_t *res);
ooc_status_t bench_handle(const lib_opts_t *lib, int device, ooc_handle_t **out);
double bench_flops(const run_opts_t *o);

/* bench_report.c */
void bench_print_text(FILE *f, const bench_result_t *res);
void bench_csv_header(FILE *f);
void bench_print_csv(FILE *f, const bench_result_t *res);
void bench_print_json(json_t *js, const bench_result_t *res);
void bench_print_summary(FILE *f, const bench_result_t *all, int n);

#endif /* OOCGEMM_BENCH_H */
