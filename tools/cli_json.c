/* SPDX-License-Identifier: MIT */
/*
 * cli_json.c: the JSON that --json prints: strings, numbers (null when not
 * finite or not available), and the objects several subcommands share (the
 * devices of a multiply, a verification).
 */
#include "config.h"

#include "cli.h"

/* A JSON string (null for NULL). */
void json_str(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}
/* A JSON number, or null when not finite / not available. */
void json_num(FILE *f, const char *key, double v, int available)
{
    if (available && isfinite(v)) fprintf(f, ",\"%s\":%.9g", key, v);
    else fprintf(f, ",\"%s\":null", key);
}

/* ,"devices":[...]: one object per device of the last multiply (none when
 * the library reports none); the busy times are null unless it was traced. */
void json_devices(FILE *f, const ooc_stats_t *st)
{
    int nd = stats_ndevices(st);
    fputs(",\"devices\":[", f);
    for (int i = 0; i < nd; i++) {
        const ooc_device_stats_t *d = &st->device[i];
        fprintf(f, "%s{\"device\":%d,\"blocks\":%lld,\"bytes_h2d\":%" PRIu64 ",\"bytes_d2h\":%" PRIu64
                   ",\"bytes_peer\":%" PRIu64,
                i ? "," : "", (int)d->device, (long long)d->blocks, d->bytes_h2d, d->bytes_d2h, d->bytes_peer);
        json_num(f, "seconds", d->seconds, 1);
        json_num(f, "busy_h2d", d->busy_h2d, st->traced);
        json_num(f, "busy_compute", d->busy_compute, st->traced);
        json_num(f, "busy_d2h", d->busy_d2h, st->traced);
        json_num(f, "busy_read", d->busy_read, st->traced);
        json_num(f, "busy_write", d->busy_write, st->traced);
        json_num(f, "trace_wall", d->trace_wall, st->traced);
        json_num(f, "overlap_efficiency", d->overlap_efficiency, st->traced);
        fputc('}', f);
    }
    fputc(']', f);
    /* how op(B) reached them (OOC_PARAM_PEER_B) */
    fprintf(f, ",\"b_shared\":%s,\"bytes_peer\":%" PRIu64, st->b_shared ? "true" : "false", st->bytes_peer);
    json_num(f, "probe_host_gbps", st->probe_host_gbps, st->probe_host_gbps > 0);
    json_num(f, "probe_peer_gbps", st->probe_peer_gbps, st->probe_peer_gbps > 0);
    fputs(",\"b_how\":", f);
    json_str(f, st->b_how);
}

void json_verify(FILE *f, const ooc_verify_result_t *v, int have)
{
    if (!have) {
        fprintf(f, ",\"verify\":null");
        return;
    }
    fprintf(f, ",\"verify\":{\"exact\":%s,\"vectors\":%d,\"rows_checked\":%lld", v->exact ? "true" : "false",
            v->vectors, (long long)v->rows_checked);
    json_num(f, "max_rel_err", v->max_rel_err, 1);
    json_num(f, "tolerance", v->tolerance, 1);
    fprintf(f, ",\"passed\":%s,\"bytes_read\":%" PRIu64 "}", v->passed ? "true" : "false", v->bytes_read);
}
