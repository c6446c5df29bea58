/* SPDX-License-Identifier: MIT */
/*
 * cmd_info.c: oocgemm info: the library, its CUDA backend (the module it
 * loaded, or why there is none), and
 * each GPU: its properties, link and measured pinned bandwidth; without a
 * GPU, why, and that the host backend is used.
 */
#include "config.h"

#include "cli.h"

void info_usage(FILE *f)
{
    fprintf(f,
            "Usage: oocgemm info [OPTIONS]\n"
            "\n"
            "Print the library version; its CUDA backend: the module loaded (its path)\n"
            "with the NVIDIA driver and CUDA runtime versions, or why CUDA cannot be\n"
            "used (built without CUDA, no module, CUDA's libraries not on the library\n"
            "path, no driver, a driver too old, no GPU); and each\n"
            "GPU: name, compute capability, multiprocessors, memory (total and free),\n"
            "copy engines, PCI bus id, PCIe link (generation and width), and the\n"
            "pinned host-to-device and device-to-host bandwidth measured now (best of\n"
            "three copies of BYTES each way). Without a GPU it says why, and that the\n"
            "host backend is used; that is not an error. Last, what computes a\n"
            "multiply's blocks here (\"blocks computed by\": the backend, its BLAS\n"
            "library's version and the kind of GPU, or OpenBLAS's kernels for this\n"
            "CPU): a file job's journal records it, and a --resume that would compute\n"
            "by another is refused, as its blocks would differ in their last bits.\n"
            "\n"
            "Measurement and output:\n"
            "  --backend B           the backend whose blocks are described: auto\n"
            "                        (default: cublas with a GPU, else host), cublas,\n"
            "                        custom or host\n"
            "  --bytes BYTES         bytes copied each way for the bandwidth (default 1G;\n"
            "                        BYTES: an integer with an optional binary suffix\n"
            "                        K, M, G or T)\n"
            "  --no-measure          do not measure the bandwidth\n"
            "  --json                print one JSON object (see JSON OUTPUT in the\n"
            "                        manual): cuda_status (usable, no_device or\n"
            "                        unavailable), cuda_module, cuda (the\n"
            "                        sentence), device_count, devices (one object per\n"
            "                        GPU), no_device_reason, backend, compute_id\n"
            "  -h, --help            this help\n"
            "\n");
}

const struct option info_long_opts[] = {
    {"bytes", required_argument, NULL, OPT_BYTES},
    {"no-measure", no_argument, NULL, OPT_NO_MEASURE},
    {"json", no_argument, NULL, OPT_JSON},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* One GPU as info reports it. */
typedef struct {
    int index;
    ooc_status_t st; /* of ooc_device_info */
    char error[1024];
    ooc_device_info_t di;
    int have_bw;
    double h2d, d2h; /* bytes per second */
    char bw_error[1024];
} info_gpu_t;

/* The GPU's properties and, when asked, its pinned bandwidth (on a handle
 * of its own, on that device alone). */
static void info_probe(ooc_handle_t *h, int i, int64_t bytes, int measure, info_gpu_t *g)
{
    memset(g, 0, sizeof *g);
    g->index = i;
    g->st = ooc_device_info(h, i, &g->di);
    if (g->st != OOC_SUCCESS) {
        snprintf(g->error, sizeof g->error, "%s: %s", ooc_status_string(g->st), ooc_last_error(h));
        return;
    }
    if (!measure) return;
    ooc_handle_t *hd = NULL;
    ooc_status_t s2 = ooc_create(&hd);
    if (s2 == OOC_SUCCESS) s2 = ooc_set(hd, OOC_PARAM_BACKEND, OOC_BACKEND_CUBLAS);
    if (s2 == OOC_SUCCESS) s2 = ooc_set(hd, OOC_PARAM_DEVICE, i);
    if (s2 == OOC_SUCCESS) s2 = ooc_measure_bandwidth(hd, (size_t)bytes, &g->h2d, &g->d2h);
    if (s2 == OOC_SUCCESS) g->have_bw = 1;
    else snprintf(g->bw_error, sizeof g->bw_error, "%s: %s", ooc_status_string(s2), hd ? ooc_last_error(hd) : "");
    ooc_destroy(hd);
}

static void info_json_gpu(json_t *js, const info_gpu_t *g, int64_t bytes)
{
    const ooc_device_info_t *di = &g->di;
    int ok = g->st == OOC_SUCCESS;
    char cc[32];
    snprintf(cc, sizeof cc, "%d.%d", di->compute_major, di->compute_minor);
    json_object(js, NULL);
    json_int(js, "device", g->index);
    json_string(js, "error", ok ? NULL : g->error);
    json_string(js, "name", ok ? di->name : NULL);
    json_string(js, "compute_capability", ok ? cc : NULL);
    json_int(js, "multiprocessors", di->multiprocessors);
    json_uint(js, "memory_total", di->memory_total);
    json_uint(js, "memory_free", di->memory_free);
    json_int(js, "copy_engines", di->copy_engines);
    json_string(js, "pci_bus_id", ok ? di->pci_bus_id : NULL);
    json_int(js, "pcie_gen", di->pcie_gen);
    json_int(js, "pcie_width", di->pcie_width);
    json_int(js, "numa_node", ok ? di->numa_node : -1);
    json_int(js, "bandwidth_bytes", bytes);
    json_real(js, "h2d_gbps", g->h2d / 1e9, g->have_bw);
    json_real(js, "d2h_gbps", g->d2h / 1e9, g->have_bw);
    json_end(js);
}

static void info_print_gpu(const info_gpu_t *g, int64_t bytes, int measure)
{
    const ooc_device_info_t *di = &g->di;
    char b1[32], b2[32];
    if (g->st != OOC_SUCCESS) {
        printf("GPU %d: cannot describe it: %s\n", g->index, g->error);
        return;
    }
    printf("GPU %d: %s\n", g->index, di->name);
    printf("  compute capability %d.%d, %d multiprocessors\n", di->compute_major, di->compute_minor, di->multiprocessors);
    printf("  memory: %s total, %s free\n", human_bytes(di->memory_total, b1, sizeof b1),
           human_bytes(di->memory_free, b2, sizeof b2));
    printf("  copy engines: %d%s\n", di->copy_engines,
           di->copy_engines >= 2 ? " (copies both ways at once)" : " (one copy at a time)");
    if (di->pcie_gen > 0) printf("  PCI bus id %s, PCIe Gen%d x%d\n", di->pci_bus_id, di->pcie_gen, di->pcie_width);
    else printf("  PCI bus id %s, PCIe link unknown\n", di->pci_bus_id);
    if (di->numa_node >= 0) printf("  host NUMA node %d (its pinned staging is preferred there)\n", di->numa_node);
    else printf("  host NUMA node unknown (one node, or not reported)\n");
    if (g->have_bw)
        printf("  pinned bandwidth (%s each way): H2D %.1f GB/s, D2H %.1f GB/s\n",
               human_bytes((uint64_t)bytes, b1, sizeof b1), g->h2d / 1e9, g->d2h / 1e9);
    else if (measure)
        printf("  pinned bandwidth: not measured: %s\n", g->bw_error);
}

/* The CUDA backend as the library found it (ooc_cuda_probe): whether it
 * can be used, the module's path ("" when linked in or built without CUDA)
 * and the sentence saying why or why not. */
typedef struct {
    ooc_status_t st;
    int gpus;
    const char *why, *module;
} info_cuda_t;

static void info_cuda(info_cuda_t *c)
{
    c->gpus = 0;
    c->why = c->module = NULL;
    c->st = ooc_cuda_probe(&c->gpus, &c->why, &c->module);
    if (c->why == NULL) c->why = "";
    if (c->module == NULL) c->module = "";
}

static void info_print_cuda(const info_cuda_t *c)
{
    printf("libooc_gemm %s (oocgemm %s)\n", ooc_version_string(), PACKAGE_VERSION);
    if (c->st == OOC_ERR_BACKEND_UNAVAILABLE)
        printf("CUDA backend: not available: %s\n", c->why);
    else
        printf("CUDA backend: %s%s\n", *c->module ? "module " : "linked in", c->module);
    if (c->st == OOC_SUCCESS) printf("  %s\n", c->why);
    else if (c->st != OOC_ERR_BACKEND_UNAVAILABLE) printf("  not usable: %s\n", c->why);
}

int cmd_info(int argc, char **argv)
{
    const char *cmd = "info";
    int64_t bytes = (int64_t)1 << 30;
    int json = 0, measure = 1;
    lib_opts_t lib;
    memset(&lib, 0, sizeof lib);
    opterr = 0;
    optind = 1;
    for (;;) {
        char optname[64];
        int c = cli_getopt(argc, argv, ":h", info_long_opts, optname, sizeof optname);
        if (c == -1) break;
        switch (c) {
        case OPT_BYTES:
            if (parse_bytes(cmd, "--bytes", optarg, &bytes)) return RC_USAGE;
            if (bytes <= 0) return usage_error(cmd, "--bytes: must be positive");
            break;
        case OPT_NO_MEASURE: measure = 0; break;
        case OPT_JSON: json = 1; break;
        case OPT_BACKEND:
            if (lib_opt_parse(cmd, c, optname, optarg, &lib) < 0) return RC_USAGE;
            break;
        case 'h': info_usage(help_out()); print_exit_codes(help_out()); return RC_OK;
        default: return getopt_failure(cmd, c, argv, "h");
        }
    }
    if (optind < argc) return usage_error(cmd, "unexpected argument '%s'", argv[optind]);

    ooc_handle_t *h = NULL;
    int rc = RC_OK, count = 0;
    info_cuda_t cu;
    info_cuda(&cu);
    ooc_status_t st = ooc_create(&h);
    if (st != OOC_SUCCESS) rc = lib_fail(NULL, st, AT_OTHER, NULL, NULL, "ooc_create");
    else if ((st = ooc_device_count(h, &count)) != OOC_SUCCESS)
        rc = lib_fail(h, st, AT_OTHER, NULL, NULL, "ooc_device_count");
    json_t js;
    if (rc == RC_OK && json) {
        json_open(&js, stdout, "info");
        json_string(&js, "cuda_status", cu.st == OOC_SUCCESS ? "usable"
                                        : cu.st == OOC_ERR_BACKEND_UNAVAILABLE ? "unavailable" : "no_device");
        json_string(&js, "cuda_module", *cu.module ? cu.module : NULL);
        json_string(&js, "cuda", cu.why);
        json_int(&js, "device_count", count);
        json_array(&js, "devices");
    } else if (rc == RC_OK) {
        info_print_cuda(&cu);
    }
    for (int i = 0; rc == RC_OK && i < count; i++) {
        info_gpu_t g;
        info_probe(h, i, bytes, measure, &g);
        if (json) info_json_gpu(&js, &g, bytes);
        else info_print_gpu(&g, bytes, measure);
    }
    /* what a multiply's blocks are computed by (a journal records it: a
     * resume elsewhere must say the same) */
    char id[OOC_COMPUTE_ID_MAX] = "";
    ooc_status_t ist = OOC_SUCCESS;
    if (rc == RC_OK && (ist = ooc_set(h, OOC_PARAM_BACKEND, lib.backend)) == OOC_SUCCESS)
        ist = ooc_compute_id(h, id, sizeof id);
    /* (the backend asked for, where it cannot run: not the one auto would take) */
    const char *asked = lib.backend == OOC_BACKEND_CUBLAS   ? "cublas"
                        : lib.backend == OOC_BACKEND_CUSTOM ? "custom"
                        : lib.backend == OOC_BACKEND_HOST   ? "host"
                                                            : NULL;
    if (rc == RC_OK && json) {
        json_end(&js);
        json_string(&js, "no_device_reason", count == 0 ? cu.why : NULL);
        json_string(&js, "backend", ist == OOC_SUCCESS ? ooc_backend_name(h) : asked ? asked : count > 0 ? "cublas" : "host");
        json_string(&js, "compute_id", ist == OOC_SUCCESS ? id : NULL);
        json_close(&js, RC_OK);
    } else if (rc == RC_OK) {
        if (count == 0 && asked && strcmp(asked, "host") != 0)
            printf("no CUDA device: the %s backend asked for cannot run\n", asked);
        else if (count == 0)
            printf("no CUDA device: the host backend (OpenBLAS on the CPU) is used\n");
        if (ist == OOC_SUCCESS) printf("blocks computed by: %s\n", id);
        else printf("blocks computed by: unknown (%s)\n", ooc_last_error(h));
    }
    ooc_destroy(h);
    return rc;
}
