/* SPDX-License-Identifier: MIT */
/*
 * bench_report.c: the reports of oocgemm bench: per shape a text table,
 * CSV rows or a JSON object, and the summary of all shapes.
 */
#include "config.h"

#include "bench.h"

static const char *bench_method_name(int kind)
{
    switch (kind) {
    case BM_OURS: return "ours";
    case BM_SERIAL: return "serial";
    case BM_XT: return "cublasxt";
    case BM_INCORE: return "incore";
    }
    return "?";
}

static const char *bench_status_name(int st) { return st == BS_RAN ? "ok" : st == BS_SKIPPED ? "skipped" : "error"; }

/* The shape's first line: "S1: DGEMM col-major NN m=... ..." */
static void bench_describe(FILE *f, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    char b[32];
    uint64_t bytes = (uint64_t)((double)dtype_size(o->dtype) *
                                ((double)o->m * (double)o->k + (double)o->k * (double)o->n + (double)o->m * (double)o->n));
    fprintf(f, "%s: %cGEMM %s-major %c%c m=%lld n=%lld k=%lld alpha=%g beta=%g, A/B/C %s (%s), best of %lld after a warm-up",
            res->sh.name, dtype_letter(o->dtype) - 'a' + 'A', o->layout == OOC_COL_MAJOR ? "col" : "row",
            op_letter(o->ta), op_letter(o->tb), (long long)o->m, (long long)o->n, (long long)o->k, o->alpha, o->beta,
            memory_words(o->pinned, strncmp(res->backend, "host", 4) == 0), human_bytes(bytes, b, sizeof b),
            (long long)o->repeat);
    if (o->repeat < FLOOR_MIN_RUNS) fprintf(f, " (ours and in-core cuBLAS: of %d)", FLOOR_MIN_RUNS);
    fputc('\n', f);
}

/* The devices of --devices as a list, "0-1" ("all" when not known), or for
 * people, "devices 0-1" ("every device"). */
static const char *bench_devices_list(const bench_env_t *env, int people, char *buf, size_t len)
{
    uint32_t mask = 0;
    char list[64];
    for (int i = 0; i < env->ndev; i++) mask |= (uint32_t)1 << env->devs[i];
    devices_format(mask, list, sizeof list);
    if (people) snprintf(buf, len, "%s%s", mask ? "devices " : "every device", mask ? list : "");
    else snprintf(buf, len, "%s", list);
    return buf;
}

void bench_print_text(FILE *f, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    const bench_env_t *env = res->env;
    char devs[80];
    bench_devices_list(env, 1, devs, sizeof devs);
    bench_describe(f, res);
    if (res->error[0]) {
        fprintf(f, "error: %s\n\n", res->error);
        return;
    }
    if (env->multi)
        fprintf(f, "on %s: ours and cublasXt on all of them, the rows naming device %d on it alone; floor/time is "
                   "against the floor of all of them\n", devs, env->device);
    floor_print(f, &res->fl, o->dtype, -1.0);
    if (res->floor_note[0]) fprintf(f, "  (%s)\n", res->floor_note);
    if (env->multi && res->fl.measured_rate) {
        fputs("  in-core rate of each device (the probe):", f);
        for (int i = 0; i < env->ndev; i++) fprintf(f, "%s device %d %.3g", i ? "," : "", env->devs[i], res->rate_dev[i]);
        fputs(" TFLOP/s\n", f);
    }
    if (res->rate_whole && env->multi)
        fprintf(f, "  (R: in-core cuBLAS on the whole shape ran at %.3g times its probe on device %d; each device's "
                   "probe so scaled: %.3g TFLOP/s in all; the probes alone gave %.3g TFLOP/s, a floor of %.3g s)\n",
                res->fl.rate / res->fl_probe.rate, env->device, res->fl.rate, res->fl_probe.rate,
                res->fl_probe.floor_s);
    else if (res->rate_whole)
        fprintf(f, "  (R: in-core cuBLAS on the whole shape, %.3g TFLOP/s; the short %lldx%lldx%lld probe gave %.3g "
                   "TFLOP/s, a floor of %.3g s)\n",
                res->fl.rate, (long long)res->fl_probe.pm, (long long)res->fl_probe.pn, (long long)res->fl_probe.pk,
                res->fl_probe.rate, res->fl_probe.floor_s);
    if (res->have_stats) {
        fputs("ours: ", f);
        print_plan(f, res->backend, &res->stats);
    }
    double flops = bench_flops(o);
    fprintf(f, "  %-34s %10s %10s %9s %10s  %s\n", "method", "best s", "median s", "TFLOP/s", "floor/time", "check");
    for (int i = 0; i < res->nmeth; i++) {
        const bench_method_t *mt = &res->meth[i];
        if (mt->status != BS_RAN) {
            fprintf(f, "  %-34s %s: %s\n", mt->label, mt->status == BS_SKIPPED ? "skipped" : "ERROR", mt->msg);
            continue;
        }
        char ratio[16] = "n/a", check[48] = "-";
        if (res->fl.have) snprintf(ratio, sizeof ratio, "%.2f", mt->best > 0 ? res->fl.floor_s / mt->best : INFINITY);
        int undecided = check_verdict(mt->max_err, res->tol, mt->off, mt->undecided) == CHECK_UNDECIDED;
        if (mt->checked)
            snprintf(check, sizeof check, "%s %.2g%s", mt->passed ? "PASS" : undecided ? "UNDECIDED" : "FAIL", mt->max_err,
                     mt->off > 0 ? " (elements off)" : "");
        fprintf(f, "  %-34s %10.4g %10.4g %9.3g %10s  %s\n", mt->label, mt->best, mt->median,
                mt->best > 0 ? flops / mt->best / 1e12 : INFINITY, ratio, check);
    }
    if (res->peers_skipped) fprintf(f, "  peers skipped: %s\n", res->peers_skipped);
    if (res->scaling > 0)
        fprintf(f, "scaling: ours on %s = %.2f x ours on device %d alone (%.4g s and %.4g s)\n", devs, res->scaling,
                env->device, res->meth[0].best, res->meth[res->ours_one].best);
    else if (env->multi)
        fprintf(f, "scaling: n/a (ours did not run, or failed its check, on all or on one)\n");
    if (res->ratio > 0)
        fprintf(f, "ours / cublasXt best = %.2f (cublasXt best block dim %d%s%s%s; > 1: ours is faster)\n", res->ratio,
                res->meth[res->xt_best].dim_used, res->meth[res->xt_best].pinning ? ", pinning on" : "",
                env->multi ? ", both on " : "", env->multi ? devs : "");
    else
        fprintf(f, "ours / cublasXt best = n/a (no cublasXt result)\n");
    if (res->check_rows > 0)
        fprintf(f, "check: %lld row%s of C against OpenBLAS per method, tolerance %.2g\n", (long long)res->check_rows,
                res->check_rows == 1 ? "" : "s", res->tol);
    fputc('\n', f);
}

/* A CSV field: quoted when it holds a comma, quote or newline. */
static void csv_str(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v, int available)
{
    fputc(',', f);
    if (available && isfinite(v)) fprintf(f, "%.6g", v);
}

void bench_csv_header(FILE *f)
{
    fputs("shape,dtype,layout,transa,transb,m,n,k,alpha,beta,memory,backend,bw_h2d_gbps,bw_d2h_gbps,"
          "incore_tflops,floor_s,method,label,block_dim,pinning,block_rows,status,message,best_s,median_s,"
          "tflops,floor_over_time,check,max_rel_err,tolerance,ours_over_xt_best,devices,on_devices,bw_both_gbps,"
          "floor_bus_s,scaling\n",
          f);
}

/* The columns of --devices at the end of a row (empty without it), and the
 * row's end; mt: the method of the row, NULL for a shape's error. */
static void bench_csv_devices(FILE *f, const bench_result_t *res, const bench_method_t *mt)
{
    const bench_env_t *env = res->env;
    char devs[80];
    fputc(',', f);
    if (env->multi) csv_str(f, bench_devices_list(env, 0, devs, sizeof devs));
    fputc(',', f);
    if (env->multi && mt) fprintf(f, "%s", mt->first_only ? "first" : "all");
    csv_num(f, res->fl.bw_both, res->fl.have && res->fl.bw_both > 0);
    csv_num(f, res->fl.t_bus, res->fl.have && res->fl.bw_both > 0);
    csv_num(f, res->scaling, res->scaling > 0);
    fputc('\n', f);
}

void bench_print_csv(FILE *f, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    const floor_t *fl = &res->fl;
    int n = res->nmeth ? res->nmeth : 1; /* a shape that failed as a whole still gets a row */
    for (int i = 0; i < n; i++) {
        const bench_method_t *mt = res->nmeth ? &res->meth[i] : NULL;
        csv_str(f, res->sh.name);
        fprintf(f, ",%s,%s,%c,%c,%lld,%lld,%lld,%.17g,%.17g,%s,%s", dtype_name(o->dtype),
                o->layout == OOC_COL_MAJOR ? "col" : "row", op_letter(o->ta), op_letter(o->tb), (long long)o->m,
                (long long)o->n, (long long)o->k, o->alpha, o->beta, o->pinned ? "pinned" : "pageable",
                res->backend);
        csv_num(f, fl->bw_h2d, fl->have && !fl->cpu); /* (a CPU floor has no copies: empty, as JSON's null) */
        csv_num(f, fl->bw_d2h, fl->have && !fl->cpu);
        csv_num(f, fl->rate, fl->have);
        csv_num(f, fl->floor_s, fl->have);
        if (mt == NULL) {
            fputs(",,,,,,error,", f);
            csv_str(f, res->error);
            fputs(",,,,,,,,", f);
            bench_csv_devices(f, res, NULL);
            continue;
        }
        fprintf(f, ",%s,", bench_method_name(mt->kind));
        csv_str(f, mt->label);
        fputc(',', f);
        if (mt->kind == BM_XT) fprintf(f, "%d,%s", mt->dim_used, mt->pinning ? "on" : "off");
        else fputc(',', f);
        fputc(',', f);
        if (mt->block_rows > 0) fprintf(f, "%lld", (long long)mt->block_rows);
        fprintf(f, ",%s,", bench_status_name(mt->status));
        csv_str(f, mt->msg);
        int ran = mt->status == BS_RAN;
        csv_num(f, mt->best, ran);
        csv_num(f, mt->median, ran);
        csv_num(f, mt->best > 0 ? bench_flops(o) / mt->best / 1e12 : 0, ran && mt->best > 0 && bench_flops(o) > 0);
        csv_num(f, mt->best > 0 ? fl->floor_s / mt->best : 0, ran && fl->have && mt->best > 0);
        fprintf(f, ",%s", mt->checked ? (mt->passed ? "PASS" : "FAIL") : "");
        csv_num(f, mt->max_err, mt->checked);
        csv_num(f, res->tol, mt->checked);
        csv_num(f, res->ratio, res->ratio > 0);
        bench_csv_devices(f, res, mt);
    }
}

/* One method of a shape as JSON. */
static void bench_json_method(json_t *js, const bench_result_t *res, const bench_method_t *mt)
{
    const floor_t *fl = &res->fl;
    int ran = mt->status == BS_RAN;
    json_object(js, NULL);
    json_string(js, "method", bench_method_name(mt->kind));
    json_string(js, "label", mt->label);
    if (mt->kind == BM_XT) {
        json_int(js, "block_dim", mt->dim_used);
        json_bool(js, "default_block_dim", mt->block_dim == 0);
        json_bool(js, "pinning", mt->pinning);
    } else {
        json_null(js, "block_dim");
        json_null(js, "default_block_dim");
        json_null(js, "pinning");
    }
    if (mt->block_rows > 0) json_int(js, "block_rows", mt->block_rows);
    else json_null(js, "block_rows");
    json_string(js, "on_devices", !res->env->multi ? NULL : mt->first_only ? "first" : "all");
    json_string(js, "status", bench_status_name(mt->status));
    json_string(js, "message", ran ? NULL : mt->msg);
    json_array(js, "times_s");
    for (int64_t t = 0; ran && t < mt->ntimes; t++) json_real(js, NULL, mt->times[t], 1);
    json_end(js);
    json_real(js, "best_s", mt->best, ran);
    json_real(js, "median_s", mt->median, ran);
    json_real(js, "tflops", mt->best > 0 ? bench_flops(&res->o) / mt->best / 1e12 : 0,
              ran && mt->best > 0 && bench_flops(&res->o) > 0);
    json_real(js, "floor_over_time", mt->best > 0 ? fl->floor_s / mt->best : 0, ran && fl->have && mt->best > 0);
    json_check_rows(js, mt->checked, res->check_rows, mt->max_err, res->tol, mt->off, mt->passed);
    json_end(js);
}

void bench_print_json(json_t *js, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    const bench_env_t *env = res->env;
    json_object(js, NULL);
    json_string(js, "name", res->sh.name);
    json_shape(js, "shape", o->m, o->n, o->k);
    json_problem(js, &o->dtype, o->ta, o->tb, o->alpha, o->beta);
    json_string(js, "layout", layout_name(o->layout));
    json_string(js, "memory", o->pinned ? "pinned" : "pageable");
    json_string(js, "backend", res->backend);
    json_string(js, "backend_reason", backend_reason(res->backend));
    json_int(js, "repeat", o->repeat);
    json_string(js, "error", res->error[0] ? res->error : NULL);
    /* --devices: the list (the first first; [] for every device when not
     * known), the first, each one's in-core probe; null without it */
    if (env->multi) {
        json_array(js, "device_list");
        for (int i = 0; i < env->ndev; i++) json_int(js, NULL, env->devs[i]);
        json_end(js);
        json_int(js, "first_device", env->device);
        json_array(js, "incore_per_device_tflops");
        for (int i = 0; res->fl.measured_rate && i < env->ndev; i++) json_real(js, NULL, res->rate_dev[i], 1);
        json_end(js);
    } else {
        json_null(js, "device_list");
        json_null(js, "first_device");
        json_null(js, "incore_per_device_tflops");
    }
    json_floor(js, "floor", &res->fl, -1);
    /* the floor of the short probe, when in-core cuBLAS on the whole shape gave the rate */
    if (res->rate_whole) json_floor(js, "probe_floor", &res->fl_probe, -1);
    else json_null(js, "probe_floor");
    json_string(js, "floor_note", res->floor_note[0] ? res->floor_note : NULL);
    json_real(js, "target_floor_over_time", res->sh.target, res->sh.target > 0);
    json_plan(js, &res->stats, res->have_stats);
    json_stats(js, &res->stats, res->have_stats);
    json_string(js, "peers_skipped", res->peers_skipped);
    json_array(js, "methods");
    for (int i = 0; i < res->nmeth; i++) bench_json_method(js, res, &res->meth[i]);
    json_end(js);
    if (res->xt_best >= 0) {
        const bench_method_t *b = &res->meth[res->xt_best];
        json_object(js, "cublasxt_best");
        json_string(js, "label", b->label);
        json_int(js, "block_dim", b->dim_used);
        json_bool(js, "pinning", b->pinning);
        json_real(js, "best_s", b->best, 1);
        json_end(js);
    } else {
        json_null(js, "cublasxt_best");
    }
    json_real(js, "ours_over_cublasxt_best", res->ratio, res->ratio > 0);
    json_real(js, "scaling", res->scaling, res->scaling > 0);
    json_end(js);
}

/* One line per shape: ours' floor/time against its target, and against cublasXt. */
void bench_print_summary(FILE *f, const bench_result_t *all, int n)
{
    int multi = n > 0 && all[0].env->multi;
    fprintf(f, "summary (ours / cublasXt best: cublasXt's best time over ours, > 1: ours is faster%s)\n",
            multi ? "; scaling: ours on the first device alone over ours on all" : "");
    fprintf(f, "  %-8s %-10s %-16s %-22s %-*s%s\n", "shape", "ours s", "ours floor/time", "target", multi ? 22 : 0,
            "ours / cublasXt best", multi ? " scaling" : "");
    for (int i = 0; i < n; i++) {
        const bench_result_t *r = &all[i];
        const bench_method_t *ours = r->nmeth > 0 ? &r->meth[0] : NULL;
        char t[16] = "-", ft[16] = "n/a", tg[32] = "-", xr[32] = "n/a", sc[16] = " n/a";
        int ran = ours && ours->status == BS_RAN;
        if (ran) snprintf(t, sizeof t, "%.4g", ours->best);
        double q = ran && r->fl.have && ours->best > 0 ? r->fl.floor_s / ours->best : 0;
        if (q > 0) snprintf(ft, sizeof ft, "%.2f", q);
        if (r->sh.target > 0 && q > 0)
            snprintf(tg, sizeof tg, ">= %.2f %s", r->sh.target, q >= r->sh.target ? "met" : "MISSED");
        if (r->ratio > 0) snprintf(xr, sizeof xr, "%.2f%s", r->ratio, r->ratio >= 1.0 ? "" : " (slower)");
        if (r->error[0]) snprintf(xr, sizeof xr, "error");
        if (r->scaling > 0) snprintf(sc, sizeof sc, " %.2f", r->scaling);
        fprintf(f, "  %-8s %-10s %-16s %-22s %-*s%s\n", r->sh.name, t, ft, tg, multi ? 22 : 0, xr, multi ? sc : "");
    }
}

