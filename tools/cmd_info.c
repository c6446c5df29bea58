/* SPDX-License-Identifier: MIT */
/*
 * cmd_info.c: oocgemm info: the library, whether CUDA is compiled in, and
 * each GPU: its properties, link and measured pinned bandwidth; without a
 * GPU, why, and that the host backend is used.
 */
#include "config.h"

#include "cli.h"

static void info_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm info [OPTIONS]\n"
            "\n"
            "Print the library version, whether CUDA support is compiled in, and each\n"
            "GPU: name, compute capability, multiprocessors, memory (total and free),\n"
            "copy engines, PCI bus id, PCIe link (generation and width), and the\n"
            "pinned host-to-device and device-to-host bandwidth measured now (best of\n"
            "three copies of BYTES each way). Without a GPU it says why, and that the\n"
            "host backend is used; that is not an error.\n"
            "\n"
            "Options:\n"
            "  --bytes BYTES         bytes copied each way for the bandwidth (default 1G)\n"
            "  --no-measure          do not measure the bandwidth\n"
            "  --json                print one JSON object\n"
            "  -h, --help            this help\n"
            "\n");
    print_exit_codes(f);
}

int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {
        {"bytes", required_argument, NULL, OPT_BYTES}, {"no-measure", no_argument, NULL, OPT_NO_MEASURE},
        {"json", no_argument, NULL, OPT_JSON},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "info";
    int64_t bytes = (int64_t)1 << 30;
    int json = 0, measure = 1;
    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, ":h", opts, NULL);
        if (c == -1) break;
        switch (c) {
        case OPT_BYTES:
            if (parse_bytes(cmd, "--bytes", optarg, &bytes)) return RC_USAGE;
            if (bytes <= 0) return usage_error(cmd, "--bytes: must be positive");
            break;
        case OPT_NO_MEASURE: measure = 0; break;
        case OPT_JSON: json = 1; break;
        case 'h': info_usage(stdout); return RC_OK;
        default: return getopt_failure(cmd, c, argv, "h");
        }
    }
    if (optind < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind]);

    ooc_handle_t *h = NULL, *probe = NULL;
    int rc = RC_OK, count = 0, cuda = 1;
    char reason[1024] = "";
    ooc_status_t st = ooc_create(&h);
    if (st == OOC_SUCCESS) st = ooc_create(&probe);
    if (st != OOC_SUCCESS) {
        rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
        goto out;
    }
    if ((st = ooc_device_count(h, &count)) != OOC_SUCCESS) {
        rc = lib_fail(h, st, AT_OTHER, NULL, NULL, "ooc_device_count");
        goto out;
    }
    if (count == 0) {
        /* compiled in? a CUDA-less library refuses the cublas backend */
        ooc_device_info_t di;
        st = ooc_set(probe, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS);
        if (st == OOC_SUCCESS) st = ooc_device_info(probe, 0, &di);
        cuda = st != OOC_ERR_BACKEND_UNAVAILABLE;
        const char *d = ooc_last_error(probe);
        snprintf(reason, sizeof reason, "%s", d && *d ? d : cuda ? "no GPU found" : "built without CUDA");
    }
    if (json)
        printf("{\"command\":\"info\",\"version\":\"%s\",\"tool_version\":\"%s\",\"cuda_compiled\":%s,"
               "\"device_count\":%d,\"devices\":[",
               ooc_version_string(), PACKAGE_VERSION, cuda ? "true" : "false", count);
    else
        printf("libooc_gemm %s (oocgemm %s); CUDA support: %s\n", ooc_version_string(), PACKAGE_VERSION,
               cuda ? "compiled in" : "not compiled in");
    for (int i = 0; i < count; i++) {
        ooc_device_info_t di;
        memset(&di, 0, sizeof di);
        st = ooc_device_info(h, i, &di);
        double h2d = 0, d2h = 0;
        int have_bw = 0;
        char bw_err[1024] = "";
        if (st == OOC_SUCCESS && measure) {
            ooc_handle_t *hd = NULL;
            ooc_status_t s2 = ooc_create(&hd);
            if (s2 == OOC_SUCCESS) s2 = ooc_set(hd, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS);
            if (s2 == OOC_SUCCESS) s2 = ooc_set(hd, OOC_PARAM_DEVICE, i);
            if (s2 == OOC_SUCCESS) s2 = ooc_measure_bandwidth(hd, (size_t)bytes, &h2d, &d2h);
            if (s2 == OOC_SUCCESS) have_bw = 1;
            else snprintf(bw_err, sizeof bw_err, "%s: %s", ooc_status_string(s2), hd ? ooc_last_error(hd) : "");
            ooc_destroy(hd);
        }
        if (json) {
            printf("%s{\"index\":%d", i ? "," : "", i);
            if (st != OOC_SUCCESS) {
                printf(",\"error\":");
                json_str(stdout, ooc_last_error(h));
                printf("}");
                continue;
            }
            printf(",\"name\":");
            json_str(stdout, di.name);
            printf(",\"compute_capability\":\"%d.%d\",\"multiprocessors\":%d,\"memory_total\":%" PRIu64
                   ",\"memory_free\":%" PRIu64 ",\"copy_engines\":%d,\"pci_bus_id\":",
                   di.compute_major, di.compute_minor, di.multiprocessors, di.memory_total, di.memory_free,
                   di.copy_engines);
            json_str(stdout, di.pci_bus_id);
            printf(",\"pcie_gen\":%d,\"pcie_width\":%d,\"bandwidth_bytes\":%lld", di.pcie_gen, di.pcie_width,
                   (long long)bytes);
            json_num(stdout, "h2d_gbps", h2d / 1e9, have_bw);
            json_num(stdout, "d2h_gbps", d2h / 1e9, have_bw);
            printf("}");
            continue;
        }
        if (st != OOC_SUCCESS) {
            printf("GPU %d: cannot describe it: %s: %s\n", i, ooc_status_string(st), ooc_last_error(h));
            continue;
        }
        char b1[32], b2[32];
        printf("GPU %d: %s\n", i, di.name);
        printf("  compute capability %d.%d, %d multiprocessors\n", di.compute_major, di.compute_minor,
               di.multiprocessors);
        printf("  memory: %s total, %s free\n", human_bytes(di.memory_total, b1, sizeof b1),
               human_bytes(di.memory_free, b2, sizeof b2));
        printf("  copy engines: %d%s\n", di.copy_engines,
               di.copy_engines >= 2 ? " (copies both ways at once)" : " (one copy at a time)");
        if (di.pcie_gen > 0)
            printf("  PCI bus id %s, PCIe Gen%d x%d\n", di.pci_bus_id, di.pcie_gen, di.pcie_width);
        else
            printf("  PCI bus id %s, PCIe link unknown\n", di.pci_bus_id);
        if (have_bw)
            printf("  pinned bandwidth (%s each way): H2D %.1f GB/s, D2H %.1f GB/s\n",
                   human_bytes((uint64_t)bytes, b1, sizeof b1), h2d / 1e9, d2h / 1e9);
        else if (measure)
            printf("  pinned bandwidth: not measured: %s\n", bw_err);
    }
    if (json) {
        printf("],\"no_device_reason\":");
        json_str(stdout, count == 0 ? reason : NULL);
        printf(",\"backend\":\"%s\",\"exit_status\":0}\n", count > 0 ? "cublas" : "host");
    } else if (count == 0) {
        printf("no CUDA device (%s); the host backend is used\n", reason);
    }

out:
    ooc_destroy(probe);
    ooc_destroy(h);
    return rc;
}
