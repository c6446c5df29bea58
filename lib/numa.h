/* SPDX-License-Identifier: MIT */
/*
 * numa.h: where a GPU sits among the host's NUMA nodes, and keeping its
 * staging there. On a host of several sockets each GPU hangs off one
 * socket's PCIe root; its pinned staging and the threads that fill it
 * belong on that socket's memory and CPUs (issue 13, item 5):
 *  - the CUDA module asks the kernel to place a device's staging ring on the
 *    device's node before the ring's pages are first written (backend_cuda.c
 *    map_pinned);
 *  - the staging pool's threads run on that node's CPUs (stage.c), when all
 *    the handle's devices share one node.
 * Linux's sysfs says where: /sys/bus/pci/devices/<bus id>/numa_node and
 * /sys/devices/system/node/node<N>/cpulist. Nothing here fails a job: what
 * cannot be read or set leaves the kernel's defaults.
 *
 * Test hook: the environment variable OOC_NUMA_ROOT=DIR makes the reading
 * functions read DIR/sys/... instead (tests/test_numa.c builds such trees).
 * OOC_NUMA=0 turns the placement off (ooc_numa_wanted).
 */
#ifndef OOC_NUMA_H
#define OOC_NUMA_H

#include <stddef.h>

/* CPUs a mask here holds (a list naming a larger one: unknown), and its words */
#define OOC_NUMA_MAX_CPUS 8192
#define OOC_NUMA_MASK_WORDS (OOC_NUMA_MAX_CPUS / (8 * sizeof(unsigned long)))

/* $OOC_NUMA_ROOT, else "" (the real /sys) */
const char *ooc_numa_root(void);

/* 0 when OOC_NUMA=0 turned the placement off, else 1 */
int ooc_numa_wanted(void);

/* Processes of this job on this host, as the launcher says
 * (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, SLURM_STEP_TASKS_PER_NODE's
 * first count): >= 1 (1 when none says). */
int ooc_numa_local_procs(void);

/* The first line of ROOT/sys/bus/pci/devices/<bus_id, lower case>/<what>
 * (no newline) into out: 0, or -1 with out "" (no such file, a bus id
 * that names no device, a line longer than cap - 1). */
int ooc_numa_pci_line(const char *root, const char *bus_id, const char *what, char *out, size_t cap);

/* The node of the PCI device bus_id ("0000:1B:00.0", any case), from
 * ROOT/sys/bus/pci/devices/<id>/numa_node: >= 0, or -1 when unknown (no
 * such file, "-1" as on hosts of one node, malformed). */
int ooc_numa_node_of_pci(const char *root, const char *bus_id);

/* Parse a kernel CPU or node list ("0-3,8,10-11", "" for none; no newline) into
 * mask, an array of bits / (8 * sizeof(unsigned long)) words, cleared
 * first: the number of entries set, or -1 when malformed or an entry is
 * >= bits. */
int ooc_numa_parse_list(const char *s, unsigned long *mask, size_t bits);

/* The CPUs of node `node` (ROOT/sys/devices/system/node/node<N>/cpulist)
 * that the calling thread may run on now, as a mask of `bits` bits: their
 * number (0 when none, the node unknown or its list unreadable). *all is set
 * to 1 when those are all the CPUs the thread may run on. */
int ooc_numa_node_cpus(const char *root, int node, unsigned long *mask, size_t bits, int *all);

/* Keep the calling thread on node's CPUs, within those it may run on now:
 * 1 when its affinity changed, 0 when left as it was (node < 0, no CPU of
 * the node allowed, all allowed CPUs already the node's, or refused). */
int ooc_numa_bind_thread(const char *root, int node);
/* Keep the calling thread on the CPUs of mask (OOC_NUMA_MAX_CPUS bits, as
 * ooc_numa_node_cpus gave them): 1 when set, 0 when empty or refused. */
int ooc_numa_bind_mask(const unsigned long *mask);

/* Prefer node for the pages of [p, p + n) not yet placed (mbind
 * MPOL_PREFERRED: other nodes when it is full, never an error later): 0, or
 * an errno value (EPERM where a container forbids it, EINVAL for a node the
 * host lacks). p is page-aligned. */
int ooc_numa_prefer(void *p, size_t n, int node);

#endif
