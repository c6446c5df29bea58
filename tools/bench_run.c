/* SPDX-License-Identifier: MIT */
/*
 * bench_run.c: oocgemm bench on one shape: A, B and C allocated and filled
 * once, the reference rows, the floor measured now (of several GPUs with
 * --devices), then each method (ours, the serial loop, cublasXt, in-core
 * cuBLAS: peers.h) with a warm-up, the timed runs and the check.
 */
#include "config.h"

#include "bench.h"

/* Progress on stderr, only for a terminal. */
static void bench_progress(const bench_opts_t *bo, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bench_progress(const bench_opts_t *bo, const char *fmt, ...)
{
    if (bo->quiet || !isatty(STDERR_FILENO)) return;
    va_list ap;
    fprintf(stderr, "\r%s bench: ", progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\033[K", stderr);
    fflush(stderr);
}

static void bench_progress_end(const bench_opts_t *bo)
{
    if (bo->quiet || !isatty(STDERR_FILENO)) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
}

double bench_flops(const run_opts_t *o)
{
    if (o->alpha == 0.0) return 0.0; /* (C = beta C0: nothing multiplied, as run says) */
    return (dtype_complex(o->dtype) ? 8.0 : 2.0) * (double)o->m * (double)o->n * (double)o->k;
}

/* The buffers of one shape and what a method's one run needs. */
typedef struct {
    const bench_opts_t *bo;
    const bench_env_t *env;
    bench_result_t *res;
    matrix_t A, B, C;
    const void *alpha, *beta; /* one element of the dtype */
    ooc_handle_t *ours;       /* the handle ours runs on */
    peer_ctx_t *peers;
    peer_gemm_t g;
    check_ref_t ref;
    int have_ref;
    int64_t *rows;
    void *c0;
    const char *ours_trace; /* --trace, when the handle ours runs on was made with it */
} bench_shape_ctx_t;

/* One timed run of a method: PEER_OK with *seconds, else a PEER_* status and msg. */
static int bench_one(bench_shape_ctx_t *x, const bench_method_t *mt, double *seconds, char *msg, size_t len)
{
    const run_opts_t *o = &x->res->o;
    switch (mt->kind) {
    case BM_OURS: {
        double t0 = now_seconds();
        ooc_status_t st = ooc_gemm(x->ours, o->dtype, o->layout, o->ta, o->tb, o->m, o->n, o->k, x->alpha, x->A.p,
                                   x->A.ld, x->B.p, x->B.ld, x->beta, x->C.p, x->C.ld);
        *seconds = now_seconds() - t0;
        if (st == OOC_SUCCESS) return PEER_OK;
        snprintf(msg, len, "ooc_gemm: %s: %s", ooc_status_string(st), ooc_last_error(x->ours));
        return PEER_FAILED;
    }
    case BM_SERIAL: return peer_serial(x->peers, &x->g, mt->block_rows, seconds, msg, len);
    case BM_XT: return peer_cublasxt(x->peers, &x->g, mt->block_dim, mt->pinning, seconds, msg, len);
    default: break;
    }
    snprintf(msg, len, "internal: method %d", mt->kind);
    return PEER_FAILED;
}

/* C as every method must find it: NaN when beta = 0 (before the method),
 * C0 when beta != 0 (before every run). */
static void bench_prepare_c(bench_shape_ctx_t *x, int first)
{
    const run_opts_t *o = &x->res->o;
    if (o->beta != 0.0) fill_random(o->dtype, x->C.p, x->C.elems, o->seed, 3);
    else if (first) fill_nan(o->dtype, x->C.p, x->C.elems);
}

/* Warm-up, R timed runs (ours and in-core: at least FLOOR_MIN_RUNS), check. */
static void bench_method(bench_shape_ctx_t *x, bench_method_t *mt)
{
    const bench_opts_t *bo = x->bo;
    bench_result_t *res = x->res;
    int64_t R = bo->repeat;
    if ((mt->kind == BM_INCORE || mt->kind == BM_OURS) && R < FLOOR_MIN_RUNS) R = FLOOR_MIN_RUNS;
    mt->times = calloc((size_t)R, sizeof *mt->times);
    if (mt->times == NULL) {
        mt->status = BS_ERROR;
        snprintf(mt->msg, sizeof mt->msg, "out of host memory");
        return;
    }
    int st = PEER_OK;
    if (mt->kind == BM_INCORE) {
        bench_progress(bo, "%s: %s", res->sh.name, mt->label);
        bench_prepare_c(x, 1);
        st = peer_incore(x->peers, &x->g, (int)R, mt->times, mt->msg, sizeof mt->msg);
    } else {
        /* --trace: ours' last timed run alone (tracing every one put its
         * cost, and the file's writing, in every time, as run's did) */
        const char *trace = mt->kind == BM_OURS ? x->ours_trace : NULL;
        for (int64_t it = 0; it <= R && st == PEER_OK; it++) { /* it 0 warms up */
            bench_progress(bo, "%s: %s, %s %lld of %lld", res->sh.name, mt->label, it ? "run" : "warm-up",
                           (long long)(it ? it : 1), (long long)(it ? R : 1));
            bench_prepare_c(x, it == 0);
            if (trace && (it == 0 || it == R)) {
                ooc_status_t ts = ooc_set_trace(x->ours, it == R ? trace : NULL);
                if (ts != OOC_SUCCESS) {
                    snprintf(mt->msg, sizeof mt->msg, "ooc_set_trace: %s: %s", ooc_status_string(ts),
                             ooc_last_error(x->ours));
                    st = PEER_FAILED;
                    break;
                }
            }
            double s = 0;
            st = bench_one(x, mt, &s, mt->msg, sizeof mt->msg);
            if (st == PEER_OK && it > 0) mt->times[it - 1] = s;
        }
    }
    bench_progress_end(bo);
    if (st != PEER_OK) {
        mt->status = st == PEER_FAILED ? BS_ERROR : BS_SKIPPED;
        return;
    }
    mt->status = BS_RAN;
    mt->ntimes = R;
    double *sorted = malloc((size_t)R * sizeof *sorted); /* the times stay in run order */
    if (sorted == NULL) {
        mt->status = BS_ERROR;
        snprintf(mt->msg, sizeof mt->msg, "out of host memory");
        return;
    }
    memcpy(sorted, mt->times, (size_t)R * sizeof *sorted);
    times_summary(sorted, R, &mt->best, &mt->median);
    free(sorted);
    if (x->have_ref) {
        bench_progress(bo, "%s: %s, checking", res->sh.name, mt->label);
        mt->max_err = check_compare(&res->o, &x->ref, &x->C, x->c0, x->rows, res->check_rows, &mt->off,
                                    &mt->undecided);
        mt->checked = 1;
        mt->passed = check_verdict(mt->max_err, res->tol, mt->off, mt->undecided) == CHECK_PASS;
        bench_progress_end(bo);
    }
}

static bench_method_t *bench_new_method(bench_result_t *res, int kind, const char *label)
{
    bench_method_t *mt = &res->meth[res->nmeth++];
    memset(mt, 0, sizeof *mt);
    mt->kind = kind;
    snprintf(mt->label, sizeof mt->label, "%s", label);
    return mt;
}

/* Usable for "cublasXt best": ran, and passed its check if checked. */
static int bench_valid(const bench_method_t *mt)
{
    return mt->status == BS_RAN && (!mt->checked || mt->passed);
}

/* "cublasXt 2048", "cublasXt default (1024)", with " pin on|off" when the
 * pinning mode is not simply cublasXt's default for pinned memory. */
static void bench_xt_label(char *buf, size_t len, int dim, int used, int pin, int show_pin)
{
    if (dim > 0) snprintf(buf, len, "cublasXt %d", dim);
    else if (used > 0) snprintf(buf, len, "cublasXt default (%d)", used);
    else snprintf(buf, len, "cublasXt default");
    if (show_pin) snprintf(buf + strlen(buf), len - strlen(buf), " pin %s", pin ? "on" : "off");
}

/* The cublasXt runs of a shape: the default block dim first on a fresh
 * handle, then each dim of --xt-dims, with the pinning modes asked for. */
static void bench_xt(bench_shape_ctx_t *x)
{
    const bench_opts_t *bo = x->bo;
    bench_result_t *res = x->res;
    int pageable = !res->o.pinned;
    int mode = bo->xt_pinning >= 0 ? bo->xt_pinning : pageable ? 1 : 0; /* auto: on for pageable */
    int show_pin = pageable || mode != 0;
    int first = res->nmeth;
    for (int d = -1; d < bo->nxt; d++) {
        int dim = d < 0 ? 0 : bo->xt_dims[d];
        if (dim > 0 && dim == peer_cublasxt_default_dim(x->peers)) continue; /* the default ran already */
        for (int pin = 0; pin <= 1; pin++) {
            if (mode != 2 && pin != mode) continue;
            char label[48];
            bench_xt_label(label, sizeof label, dim, 0, pin, show_pin);
            bench_method_t *mt = bench_new_method(res, BM_XT, label);
            mt->block_dim = dim;
            mt->pinning = pin;
            bench_method(x, mt);
            mt->dim_used = dim ? dim : peer_cublasxt_default_dim(x->peers);
            bench_xt_label(mt->label, sizeof mt->label, dim, mt->dim_used, pin, show_pin);
            if (mt->status == BS_ERROR && strstr(mt->msg, "cublasXtCreate")) return; /* no handle: no more */
        }
    }
    if (bo->xt_pinning < 0 && pageable) { /* auto, pageable: off again at the best dim */
        int best = -1;
        for (int i = first; i < res->nmeth; i++)
            if (bench_valid(&res->meth[i]) && (best < 0 || res->meth[i].best < res->meth[best].best)) best = i;
        if (best >= 0) {
            int dim = res->meth[best].block_dim, used = res->meth[best].dim_used;
            char label[48];
            bench_xt_label(label, sizeof label, dim, used, 0, 1);
            bench_method_t *mt = bench_new_method(res, BM_XT, label);
            mt->block_dim = dim;
            mt->dim_used = used;
            bench_method(x, mt);
        }
    }
}

/* A handle with the library options as given (device < 0) or with device
 * alone (and no trace): *out, also when an option failed (its message is
 * there; the caller destroys it). */
ooc_status_t bench_handle(const lib_opts_t *lib, int device, ooc_handle_t **out)
{
    lib_opts_t l = *lib;
    if (device >= 0) {
        l.devices = (uint32_t)1 << device;
        l.devices_given = 1;
        l.trace = NULL;
    }
    *out = NULL;
    ooc_status_t st = ooc_create(out);
    if (st == OOC_SUCCESS) st = lib_opts_apply(*out, &l);
    return st;
}

/* Ours, as a new method: on a fresh handle (device >= 0: that device
 * alone), destroyed after so that its buffers leave the device to the
 * peers, or on the shape's handle h when no peer follows. *stats when it
 * ran (and res->backend with them). */
static bench_method_t *bench_ours(bench_shape_ctx_t *x, ooc_handle_t *h, const char *label, int device,
                                  int fresh_always, ooc_stats_t *stats, int *have_stats)
{
    bench_result_t *res = x->res;
    bench_method_t *mt = bench_new_method(res, BM_OURS, label);
    int fresh = x->env->peers || device >= 0 || fresh_always;
    ooc_handle_t *ho = h;
    mt->first_only = device >= 0;
    *have_stats = 0;
    if (fresh) {
        ooc_status_t st = bench_handle(&res->o.lib, device, &ho);
        if (st != OOC_SUCCESS) {
            mt->status = BS_ERROR;
            snprintf(mt->msg, sizeof mt->msg, "ooc_create: %s: %s", ooc_status_string(st),
                     ho ? ooc_last_error(ho) : "");
            ooc_destroy(ho);
            return mt;
        }
    }
    x->ours = ho;
    x->ours_trace = device >= 0 ? NULL : res->o.lib.trace; /* (bench_handle()'s) */
    bench_method(x, mt);
    *have_stats = mt->status == BS_RAN && ooc_get_stats(ho, stats) == OOC_SUCCESS;
    if (*have_stats) {
        mt->block_rows = stats->block_rows;
        res->backend = ooc_backend_name(ho);
    }
    if (fresh) ooc_destroy(ho);
    x->ours = NULL;
    return mt;
}

/* With --devices: the floor of the GPUs together (PERFORMANCE.md): their
 * pinned copy bandwidth all at once (1 GiB per GPU each way, best of 3), and
 * the sum of their in-core rates, each probed on its own device. Unknown,
 * with the reason in res->floor_note, when either cannot be measured. */
static void bench_floor_multi(bench_shape_ctx_t *x, ooc_handle_t *h)
{
    const bench_env_t *env = x->env;
    bench_result_t *res = x->res;
    const run_opts_t *o = &res->o;
    floor_t *fl = &res->fl;
    fl->ndev = env->ndev;
    if (!env->cuda) {
        snprintf(res->floor_note, sizeof res->floor_note,
                 "the floor of several GPUs needs their copy bandwidth: none on the host backend");
        return;
    }
    if (!floor_measure_devices(h, env->devs, env->ndev, o->dtype, o->m, o->n, o->k, x->bo->quiet, fl, res->rate_dev)) {
        snprintf(res->floor_note, sizeof res->floor_note, "%.*s", (int)sizeof res->floor_note - 1, fl->note);
        fl->note[0] = '\0';
        return;
    }
    floor_compute(fl, o->dtype, o->m, o->n, o->k, o->beta != 0.0);
}

/* Run every method on one shape into *res. Returns RC_OK, or RC_USAGE for a
 * shape too large to describe (message printed); other failures are kept
 * in res->error. */
int bench_shape(const bench_opts_t *bo, const bench_env_t *env, const bench_shape_t *sh, bench_result_t *res)
{
    const char *cmd = "bench";
    bench_shape_ctx_t x;
    memset(&x, 0, sizeof x);
    memset(res, 0, sizeof *res);
    x.bo = bo;
    x.env = env;
    x.res = res;
    res->env = env;
    res->sh = *sh;
    res->xt_best = -1;
    res->ours_one = -1;
    res->backend = "none";
    run_opts_t *o = &res->o;
    o->m = sh->m, o->n = sh->n, o->k = sh->k;
    o->dtype = sh->dtype;
    o->layout = sh->layout;
    o->ta = sh->ta, o->tb = sh->tb;
    o->alpha = sh->alpha, o->beta = sh->beta;
    o->pinned = sh->pinned;
    o->lib = bo->lib;
    if (sh->tf32) o->lib.tf32 = 1;
    if (sh->device_mem && o->lib.device_mem == 0) o->lib.device_mem = sh->device_mem;
    o->repeat = bo->repeat;
    o->seed = bo->seed;
    o->check_rows = bo->check_rows;
    res->tol = check_tolerance(o);
    res->check_rows = o->check_rows < o->m ? o->check_rows : o->m;

    if (matrix_shape(cmd, "A", o, o->ta, o->m, o->k, &x.A) || matrix_shape(cmd, "B", o, o->tb, o->k, o->n, &x.B) ||
        matrix_shape(cmd, "C", o, OOC_OP_N, o->m, o->n, &x.C))
        return RC_USAGE;
    size_t e = dtype_size(o->dtype), c0_bytes = 0;
    int64_t r = res->check_rows;
    if (r > 0 && (__builtin_mul_overflow((size_t)r, (size_t)o->n, &c0_bytes) ||
                  __builtin_mul_overflow(c0_bytes, e, &c0_bytes))) {
        usage_error(cmd, "--check-rows %lld: the checked rows of C are too large", (long long)r);
        return RC_USAGE;
    }
    int nmax = 5 + 2 * (bo->nxt + 2);
    res->meth = calloc((size_t)nmax, sizeof *res->meth);

    ooc_handle_t *h = NULL;
    ooc_status_t st = bench_handle(&o->lib, -1, &h);
    if (st != OOC_SUCCESS || res->meth == NULL) {
        snprintf(res->error, sizeof res->error, "%s%s%s", res->meth ? ooc_status_string(st) : "out of host memory",
                 h && res->meth ? ": " : "", h && res->meth ? ooc_last_error(h) : "");
        goto out;
    }
    bench_progress(bo, "%s: allocating and filling A, B and C", sh->name);
    if (matrix_alloc(h, o->pinned, &x.A, "A", res->error, sizeof res->error) != RC_OK ||
        matrix_alloc(h, o->pinned, &x.B, "B", res->error, sizeof res->error) != RC_OK ||
        matrix_alloc(h, o->pinned, &x.C, "C", res->error, sizeof res->error) != RC_OK)
        goto out;
    x.rows = r > 0 ? malloc((size_t)r * sizeof *x.rows) : NULL;
    x.c0 = r > 0 && o->beta != 0.0 ? malloc(c0_bytes) : NULL;
    if ((r > 0 && !x.rows) || (r > 0 && o->beta != 0.0 && !x.c0)) {
        snprintf(res->error, sizeof res->error, "out of host memory for the check");
        goto out;
    }
    fill_random(o->dtype, x.A.p, x.A.elems, o->seed, 1);
    fill_random(o->dtype, x.B.p, x.B.elems, o->seed, 2);
    if (o->beta != 0.0) fill_random(o->dtype, x.C.p, x.C.elems, o->seed, 3);
    if (r > 0) {
        pick_rows(o->m, r, x.rows);
        if (x.c0) save_rows(o, x.C.p, x.rows, r, x.c0);
        bench_progress(bo, "%s: reference rows with OpenBLAS", sh->name);
        int crc = check_ref(o, &x.A, &x.B, x.c0, x.rows, r, &x.ref);
        bench_progress_end(bo);
        if (crc == RC_RUNTIME) {
            snprintf(res->error, sizeof res->error, "out of host memory for the check");
            goto out;
        }
        x.have_ref = crc == RC_OK;
        if (!x.have_ref) res->check_rows = 0; /* beyond the BLAS int range: no check */
    }

    /* the floor, measured on this machine now, before any method */
    bench_progress(bo, "%s: measuring bandwidth and the in-core rate", sh->name);
    if (env->multi) {
        bench_floor_multi(&x, h);
    } else {
        floor_measure(h, o->dtype, o->m, o->n, o->k, bo->quiet, &res->fl);
        floor_compute(&res->fl, o->dtype, o->m, o->n, o->k, o->beta != 0.0);
    }
    bench_progress_end(bo);
    res->backend = ooc_backend_name(h);
    /* (TF32 is the GPU's: on the host backend float32's tolerance, as run) */
    if (o->lib.tf32 && strcmp(res->backend, "host") == 0) {
        o->lib.tf32 = 0;
        res->tol = check_tolerance(o);
    }

    double alpha[2] = {o->alpha, 0.0}, beta[2] = {o->beta, 0.0};
    float alpha_f[2] = {(float)o->alpha, 0.0f}, beta_f[2] = {(float)o->beta, 0.0f};
    x.alpha = dtype_double(o->dtype) ? (const void *)alpha : (const void *)alpha_f;
    x.beta = dtype_double(o->dtype) ? (const void *)beta : (const void *)beta_f;

    /* ours (meth[0]: on all the devices), and with --devices on the first alone */
    bench_ours(&x, h, "ours", -1, 0, &res->stats, &res->have_stats);
    if (res->have_stats && res->stats.trace_status != OOC_SUCCESS)
        fprintf(stderr, "%s: warning: the trace of %s was not written (%s)\n", progname, sh->name,
                res->stats.trace_error);
    /* the floor over the bytes ours' plan moved (A once per panel of op(B)),
     * and with the host's memory bandwidth when it staged operands */
    if (res->have_stats && res->fl.have) {
        floor_traffic(&res->fl, &res->stats);
        floor_of_run(&res->fl, &res->stats);
        floor_measure(h, o->dtype, o->m, o->n, o->k, bo->quiet, &res->fl);
        floor_compute(&res->fl, o->dtype, o->m, o->n, o->k, o->beta != 0.0);
    }
    if (env->multi) {
        char label[48];
        ooc_stats_t one;
        int have_one;
        snprintf(label, sizeof label, "ours, device %d alone", env->device);
        bench_ours(&x, h, label, env->device, 0, &one, &have_one);
        res->ours_one = res->nmeth - 1;
        /* the way of moving op(B) that ours (--peer-b auto) did not choose,
         * on all the devices: the choice checked against the other one */
        if (res->o.lib.peer_b == OOC_PEER_B_AUTO && res->have_stats) {
            lib_opts_t keep = res->o.lib;
            res->o.lib.peer_b = res->stats.b_shared ? OOC_PEER_B_HOST : OOC_PEER_B_SHARE;
            res->o.lib.trace = NULL;
            snprintf(label, sizeof label, "ours, op(B) %s", res->stats.b_shared ? "from the host" : "shared");
            bench_ours(&x, h, label, -1, 1, &one, &have_one);
            res->o.lib = keep;
        }
    }

    if (!env->peers) {
        res->peers_skipped = env->peers_reason;
    } else {
        char msg[PEER_MSG_LEN];
        int pst = peer_open(env->devs, env->ndev, o->lib.tf32, &x.peers, msg, sizeof msg);
        if (pst != PEER_OK) {
            bench_method_t *mt = bench_new_method(res, BM_SERIAL, "peers");
            mt->status = pst == PEER_FAILED ? BS_ERROR : BS_SKIPPED;
            snprintf(mt->msg, sizeof mt->msg, "%s", msg);
        } else {
            x.g = (peer_gemm_t){o->dtype, o->layout, o->ta, o->tb, o->m, o->n, o->k, x.alpha, x.beta,
                                x.A.p, x.A.ld, x.B.p, x.B.ld, x.C.p, x.C.ld};
            /* in-core first, right after ours: the floor's R should see the
             * GPU in the state ours did, not after minutes of cublasXt */
            if (!bo->no_incore) {
                char label[48] = "in-core cuBLAS";
                if (env->multi) snprintf(label, sizeof label, "in-core cuBLAS, device %d", env->device);
                bench_method_t *ic = bench_new_method(res, BM_INCORE, label);
                ic->first_only = env->multi;
                bench_method(&x, ic);
                /* PERFORMANCE.md's R is in-core cuBLAS on the same shape: when the
                 * whole problem fitted, that run is the rate (a short probe runs
                 * at boost clocks a long multiply does not hold); with several
                 * GPUs each one's probe is scaled as the first's was */
                if (bench_valid(ic) && ic->best > 0 && res->fl.have && bench_flops(o) > 0) {
                    double whole = bench_flops(o) / ic->best / 1e12;
                    res->fl_probe = res->fl;
                    res->fl.rate = env->multi ? whole * res->fl_probe.rate / res->rate_dev[0] : whole;
                    res->fl.pm = o->m;
                    res->fl.pn = o->n;
                    res->fl.pk = o->k;
                    floor_compute(&res->fl, o->dtype, o->m, o->n, o->k, o->beta != 0.0);
                    res->rate_whole = 1;
                }
            }
            if (!bo->no_serial && !env->multi) {
                /* ours' block rows, unless its plan kept op(A) resident: then
                 * they are columns of C, and the loop (op(B) resident) takes
                 * its own default */
                int64_t brows = res->have_stats && res->stats.block_rows > 0 && !res->stats.a_resident
                                    ? res->stats.block_rows
                                    : 0;
                char label[48];
                if (brows > 0) snprintf(label, sizeof label, "serial loop (%lld rows)", (long long)brows);
                else snprintf(label, sizeof label, "serial loop (8192 rows)");
                bench_method_t *mt = bench_new_method(res, BM_SERIAL, label);
                mt->block_rows = brows > 0 ? brows : 8192;
                bench_method(&x, mt);
            }
            if (!bo->no_xt) bench_xt(&x);
            peer_close(x.peers);
            x.peers = NULL;
        }
    }

    /* cublasXt's best, and ours over it */
    for (int i = 0; i < res->nmeth; i++) {
        const bench_method_t *mt = &res->meth[i];
        if (mt->kind == BM_XT && bench_valid(mt) &&
            (res->xt_best < 0 || mt->best < res->meth[res->xt_best].best))
            res->xt_best = i;
    }
    if (res->xt_best >= 0 && res->meth[0].status == BS_RAN && res->meth[0].best > 0)
        res->ratio = res->meth[res->xt_best].best / res->meth[0].best;
    if (res->ours_one >= 0 && bench_valid(&res->meth[0]) && bench_valid(&res->meth[res->ours_one]) &&
        res->meth[0].best > 0)
        res->scaling = res->meth[res->ours_one].best / res->meth[0].best;

out:
    if (x.have_ref) check_ref_free(&x.ref);
    free(x.c0);
    free(x.rows);
    matrix_free(h, o->pinned, &x.C);
    matrix_free(h, o->pinned, &x.B);
    matrix_free(h, o->pinned, &x.A);
    ooc_destroy(h);
    return RC_OK;
}

void bench_result_free(bench_result_t *res)
{
    for (int i = 0; i < res->nmeth; i++) free(res->meth[i].times);
    free(res->meth);
    res->meth = NULL;
    res->nmeth = 0;
}
