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
    fprintf(f, "%s: %cGEMM %s-major %c%c m=%lld n=%lld k=%lld alpha=%g beta=%g, A/B/C %s (%s), best of %lld after a warm-up\n",
            res->sh.name, dtype_letter(o->dtype) - 'a' + 'A', o->layout == OOC_COL_MAJOR ? "col" : "row",
            op_letter(o->ta), op_letter(o->tb), (long long)o->m, (long long)o->n, (long long)o->k, o->alpha, o->beta,
            o->pinned ? "pinned" : "pageable", human_bytes(bytes, b, sizeof b), (long long)o->repeat);
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
        if (mt->checked) snprintf(check, sizeof check, "%s %.2g", mt->passed ? "PASS" : "FAIL", mt->max_err);
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
        fprintf(f, ",%c,%s,%c,%c,%lld,%lld,%lld,%.17g,%.17g,%s,%s", dtype_letter(o->dtype),
                o->layout == OOC_COL_MAJOR ? "col" : "row", op_letter(o->ta), op_letter(o->tb), (long long)o->m,
                (long long)o->n, (long long)o->k, o->alpha, o->beta, o->pinned ? "pinned" : "pageable",
                res->backend);
        csv_num(f, fl->bw_h2d, fl->have);
        csv_num(f, fl->bw_d2h, fl->have);
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
        csv_num(f, mt->best > 0 ? bench_flops(o) / mt->best / 1e12 : 0, ran && mt->best > 0);
        csv_num(f, mt->best > 0 ? fl->floor_s / mt->best : 0, ran && fl->have && mt->best > 0);
        fprintf(f, ",%s", mt->checked ? (mt->passed ? "PASS" : "FAIL") : "");
        csv_num(f, mt->max_err, mt->checked);
        csv_num(f, res->tol, mt->checked);
        csv_num(f, res->ratio, res->ratio > 0);
        bench_csv_devices(f, res, mt);
    }
}

/* --devices in a shape's JSON: "devices" (the list, the first first; [] for
 * every device when not known; null without --devices), "first_device", and
 * "incore_per_device_tflops" (each one's probe, or null). */
static void bench_json_devices(FILE *f, const bench_result_t *res)
{
    const bench_env_t *env = res->env;
    if (!env->multi) {
        fputs(",\"devices\":null,\"first_device\":null,\"incore_per_device_tflops\":null", f);
        return;
    }
    fputs(",\"devices\":[", f);
    for (int i = 0; i < env->ndev; i++) fprintf(f, "%s%d", i ? "," : "", env->devs[i]);
    fprintf(f, "],\"first_device\":%d,\"incore_per_device_tflops\":", env->device);
    if (!res->fl.measured_rate) {
        fputs("null", f);
        return;
    }
    for (int i = 0; i < env->ndev; i++) fprintf(f, "%c%.9g", i ? ',' : '[', res->rate_dev[i]);
    fputc(']', f);
}

void bench_print_json(FILE *f, const bench_result_t *res)
{
    const run_opts_t *o = &res->o;
    const floor_t *fl = &res->fl;
    int have = fl->have;
    fputs("{\"name\":", f);
    json_str(f, res->sh.name);
    fprintf(f, ",\"dtype\":\"%c\",\"layout\":\"%s\",\"transa\":\"%c\",\"transb\":\"%c\",\"m\":%lld,\"n\":%lld,"
               "\"k\":%lld,\"alpha\":%.17g,\"beta\":%.17g,\"memory\":\"%s\",\"backend\":\"%s\",\"repeat\":%lld",
            dtype_letter(o->dtype), o->layout == OOC_COL_MAJOR ? "col" : "row", op_letter(o->ta), op_letter(o->tb),
            (long long)o->m, (long long)o->n, (long long)o->k, o->alpha, o->beta, o->pinned ? "pinned" : "pageable",
            res->backend, (long long)o->repeat);
    fputs(",\"error\":", f);
    json_str(f, res->error[0] ? res->error : NULL);
    json_num(f, "bw_h2d_gbps", fl->bw_h2d, have);
    json_num(f, "bw_d2h_gbps", fl->bw_d2h, have);
    json_num(f, "incore_tflops", fl->rate, have);
    fprintf(f, ",\"incore_shape\":[%lld,%lld,%lld]", (long long)fl->pm, (long long)fl->pn, (long long)fl->pk);
    json_num(f, "floor_s", fl->floor_s, have);
    fprintf(f, ",\"rate_from_whole_shape\":%s", res->rate_whole ? "true" : "false");
    json_num(f, "probe_incore_tflops", res->fl_probe.rate, res->rate_whole);
    json_num(f, "probe_floor_s", res->fl_probe.floor_s, res->rate_whole);
    json_num(f, "floor_in_s", fl->t_in, have);
    json_num(f, "floor_out_s", fl->t_out, have);
    json_num(f, "floor_math_s", fl->t_math, have);
    json_num(f, "bw_both_gbps", fl->bw_both, have && fl->bw_both > 0);
    json_num(f, "floor_bus_s", fl->t_bus, have && fl->bw_both > 0);
    fputs(",\"floor_note\":", f);
    json_str(f, res->floor_note[0] ? res->floor_note : NULL);
    bench_json_devices(f, res);
    json_num(f, "target_floor_over_time", res->sh.target, res->sh.target > 0);
    fprintf(f, ",\"check_rows\":%lld", (long long)res->check_rows);
    json_num(f, "check_tolerance", res->tol, res->check_rows > 0);
    if (res->have_stats)
        fprintf(f,
                ",\"plan\":{\"block_rows\":%lld,\"panel_cols\":%lld,\"panel_depth\":%lld,\"blocks\":%lld,"
                "\"panels\":%lld,\"ring_depth\":%d,\"streams\":%d,\"staged_a\":%d,\"staged_c\":%d,"
                "\"device_bytes\":%" PRIu64 ",\"host_bytes\":%" PRIu64 ",\"bytes_h2d\":%" PRIu64
                ",\"bytes_d2h\":%" PRIu64,
                (long long)res->stats.block_rows, (long long)res->stats.panel_cols, (long long)res->stats.panel_depth,
                (long long)res->stats.blocks, (long long)res->stats.panels, (int)res->stats.ring_depth,
                (int)res->stats.streams, (int)res->stats.staged_a, (int)res->stats.staged_c,
                res->stats.device_bytes, res->stats.host_bytes, res->stats.bytes_h2d, res->stats.bytes_d2h);
    if (res->have_stats) {
        json_devices(f, &res->stats);
        fputc('}', f);
    } else {
        fputs(",\"plan\":null", f);
    }
    fputs(",\"peers_skipped\":", f);
    json_str(f, res->peers_skipped);
    fputs(",\"methods\":[", f);
    for (int i = 0; i < res->nmeth; i++) {
        const bench_method_t *mt = &res->meth[i];
        int ran = mt->status == BS_RAN;
        fprintf(f, "%s{\"method\":\"%s\",\"label\":", i ? "," : "", bench_method_name(mt->kind));
        json_str(f, mt->label);
        if (mt->kind == BM_XT)
            fprintf(f, ",\"block_dim\":%d,\"default_block_dim\":%s,\"pinning\":%s", mt->dim_used,
                    mt->block_dim == 0 ? "true" : "false", mt->pinning ? "true" : "false");
        if (mt->block_rows > 0) fprintf(f, ",\"block_rows\":%lld", (long long)mt->block_rows);
        if (res->env->multi) fprintf(f, ",\"on_devices\":\"%s\"", mt->first_only ? "first" : "all");
        fprintf(f, ",\"status\":\"%s\",\"message\":", bench_status_name(mt->status));
        json_str(f, mt->status == BS_RAN ? NULL : mt->msg);
        fputs(",\"times_s\":[", f);
        for (int64_t t = 0; ran && t < mt->ntimes; t++) fprintf(f, "%s%.9g", t ? "," : "", mt->times[t]);
        fputc(']', f);
        json_num(f, "best_s", mt->best, ran);
        json_num(f, "median_s", mt->median, ran);
        json_num(f, "tflops", mt->best > 0 ? bench_flops(o) / mt->best / 1e12 : 0, ran && mt->best > 0);
        json_num(f, "floor_over_time", mt->best > 0 ? fl->floor_s / mt->best : 0, ran && have && mt->best > 0);
        json_num(f, "max_rel_err", mt->max_err, mt->checked);
        fprintf(f, ",\"passed\":%s}", mt->checked ? (mt->passed ? "true" : "false") : "null");
    }
    fputc(']', f);
    if (res->xt_best >= 0) {
        const bench_method_t *b = &res->meth[res->xt_best];
        fputs(",\"cublasxt_best\":{\"label\":", f);
        json_str(f, b->label);
        fprintf(f, ",\"block_dim\":%d,\"pinning\":%s,\"best_s\":%.9g}", b->dim_used, b->pinning ? "true" : "false",
                b->best);
    } else {
        fputs(",\"cublasxt_best\":null", f);
    }
    json_num(f, "ours_over_cublasxt_best", res->ratio, res->ratio > 0);
    json_num(f, "scaling", res->scaling, res->scaling > 0);
    fputc('}', f);
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

