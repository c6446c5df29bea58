/* SPDX-License-Identifier: MIT */
/*
 * device.c: ooc_device_count and ooc_device_info: what `oocgemm info`
 * prints. The CUDA queries live in the CUDA module (module.h); the PCIe link's current
 * generation and width, and the NUMA node, come from Linux's sysfs, which
 * CUDA does not report.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "handle.h"
#include "module.h"
#include "numa.h"

ooc_status_t ooc_device_count(ooc_handle_t *h, int *count)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    OOC_RETURN_ERROR_IF(count == NULL, &h->err, OOC_ERR_NULL_ARG, "ooc_device_count: count is NULL");
    *count = ooc_cuda_state()->gpus;
    return OOC_SUCCESS;
}

/* "32.0 GT/s PCIe" -> 5 */
static int pcie_gen(const char *speed)
{
    double gts = atof(speed);
    return gts >= 60 ? 6 : gts >= 30 ? 5 : gts >= 15 ? 4 : gts >= 7 ? 3 : gts >= 4 ? 2 : gts >= 2 ? 1 : 0;
}

ooc_status_t ooc_device_info(ooc_handle_t *h, int device, ooc_device_info_t *info)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    OOC_RETURN_ERROR_IF(info == NULL, &h->err, OOC_ERR_NULL_ARG, "ooc_device_info: info is NULL");
    const ooc_cuda_state_t *cuda = ooc_cuda_state();
    if (cuda->mod == NULL) return OOC_ERR(&h->err, OOC_ERR_BACKEND_UNAVAILABLE, "ooc_device_info: %s", cuda->why);
    if (cuda->gpus == 0) return OOC_ERR(&h->err, OOC_ERR_NO_DEVICE, "ooc_device_info: %s", cuda->why);
    ooc_device_info_t d;
    memset(&d, 0, sizeof d);
    OOC_FORWARD(cuda->mod->device(device, &d, &h->err));
    char buf[64];
    (void)ooc_numa_pci_line("", d.pci_bus_id, "current_link_speed", buf, sizeof buf); /* "" when unknown */
    d.pcie_gen = pcie_gen(buf);
    (void)ooc_numa_pci_line("", d.pci_bus_id, "current_link_width", buf, sizeof buf);
    d.pcie_width = atoi(buf);
    d.numa_node = ooc_numa_node_of_pci(ooc_numa_root(), d.pci_bus_id);
    *info = d;
    return OOC_SUCCESS;
}
