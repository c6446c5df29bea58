/* SPDX-License-Identifier: MIT */
/*
 * backend_cuda.c: the CUDA backend: device memory, pinned host memory,
 * non-blocking streams, events and cuBLAS tile multiplies (backend.h); and
 * the `custom` backend: the same, but real tile multiplies on our own kernels
 * (kernels/kernels.h).
 * The only file of lib/ that includes CUDA headers. Every CUDA or cuBLAS
 * failure becomes a status plus a message naming the call; nothing aborts.
 * Built into the CUDA module (module.h): it reaches the library only through
 * ooc_err_set and ooc_fault_hit, and is reached only through ooc_cuda_table.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "backend.h"
#include "fault.h"
#include "module.h"
#include "numa.h"
#include "regions.h"
#include "../kernels/kernels.h"

/* the two tables, defined at the end */
static const ooc_be_ops_t ooc_backend_cuda_ops;
static const ooc_be_ops_t ooc_backend_custom_ops;

#define CUBLAS_WORKSPACE_BYTES ((size_t)32 << 20) /* cuBLAS's recommendation for Hopper */

typedef struct {
    ooc_be_t base;
    int device;
    int numa_node; /* the host NUMA node of the device (numa.h), -1 unknown */
    cublasHandle_t blas;
    void *workspace;
    int tf32; /* the math mode is TF32 (single precision on the tensor cores) */
} cbe_t;

static ooc_status_t cuda_fail(ooc_err_t *err, ooc_status_t st, cudaError_t e, const char *call,
                              const char *file, int line)
{
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls are not blamed */
    if (e == cudaErrorMemoryAllocation && st == OOC_ERR_CUDA) st = OOC_ERR_DEVICE_MEMORY;
    return ooc_err_set(err, st, file, line, "%s: %s (%s)", call, cudaGetErrorString(e),
                       cudaGetErrorName(e));
}

/* CU(err, "cudaMalloc", cudaMalloc(...)): return a status naming the call on failure */
#define CU_AS(err, st, name, call)                                                                 \
    do {                                                                                           \
        cudaError_t cu_e_ = (call);                                                                \
        if (cu_e_ != cudaSuccess) return cuda_fail((err), (st), cu_e_, (name), __FILE__, __LINE__); \
    } while (0)
#define CU(err, name, call) CU_AS(err, OOC_ERR_CUDA, name, call)

#define CUBLAS(err, name, call)                                                                    \
    do {                                                                                           \
        cublasStatus_t cb_s_ = (call);                                                             \
        if (cb_s_ != CUBLAS_STATUS_SUCCESS)                                                        \
            return OOC_ERR((err),                                                                  \
                           cb_s_ == CUBLAS_STATUS_ALLOC_FAILED ? OOC_ERR_DEVICE_MEMORY            \
                                                               : OOC_ERR_CUBLAS,                   \
                           "%s: %s", (name), cublasGetStatusString(cb_s_));                        \
    } while (0)

/* CUDA's version number (13000) as "13.0" */
static void cuda_version(int v, char *out, size_t len)
{
    snprintf(out, len, "%d.%d", v / 1000, v % 1000 / 10);
}

/* GPUs usable, or 0 and what is missing, in the order a user fixes them:
 * the driver, a driver new enough for this runtime, a GPU it sees. */
static int c_probe(char *why, size_t len)
{
    /* without the driver library cudart reports "driver version is
     * insufficient", which is not what is wrong: look for it first */
    void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (drv == NULL) {
        snprintf(why, len, "no NVIDIA driver: libcuda.so.1 is not installed or not on the library path");
        return 0;
    }
    dlclose(drv);
    int rt = 0, dv = 0, n = 0;
    char rts[16], dvs[16];
    (void)cudaRuntimeGetVersion(&rt);
    (void)cudaDriverGetVersion(&dv);
    cuda_version(rt, rts, sizeof rts);
    cuda_version(dv, dvs, sizeof dvs);
    cudaError_t e = cudaGetDeviceCount(&n);
    (void)cudaGetLastError();
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (e == cudaErrorInsufficientDriver) {
        snprintf(why, len, "the NVIDIA driver is too old: it supports CUDA %s, the CUDA runtime here is %s", dvs, rts);
        return 0;
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
        snprintf(why, len, "no GPU: the NVIDIA driver (CUDA %s) sees no device%s%s%s", dvs,
                 vis ? " (CUDA_VISIBLE_DEVICES=\"" : "", vis ? vis : "", vis ? "\")" : "");
        return 0;
    }
    if (e != cudaSuccess) {
        snprintf(why, len, "CUDA cannot start: cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e),
                 cudaGetErrorName(e));
        return 0;
    }
    snprintf(why, len, "%d GPU%s, NVIDIA driver for CUDA %s, CUDA runtime %s", n, n == 1 ? "" : "s", dvs, rts);
    return n;
}

static ooc_status_t c_device(int device, ooc_device_info_t *info, ooc_err_t *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) return cuda_fail(err, OOC_ERR_NO_DEVICE, e, "cudaGetDeviceCount", __FILE__, __LINE__);
    OOC_RETURN_ERROR_IF(device < 0 || device >= n, err, OOC_ERR_NO_DEVICE,
                        "device %d requested but only %d CUDA device(s) present", device, n);
    struct cudaDeviceProp prop;
    CU(err, "cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, device));
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->copy_engines = prop.asyncEngineCount;
    info->multiprocessors = prop.multiProcessorCount;
    info->compute_major = prop.major;
    info->compute_minor = prop.minor;
    info->memory_total = prop.totalGlobalMem;
    CU(err, "cudaDeviceGetPCIBusId", cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, device));
    int cur = 0;
    CU(err, "cudaGetDevice", cudaGetDevice(&cur));
    CU(err, "cudaSetDevice", cudaSetDevice(device));
    size_t fr = 0, tot = 0;
    e = cudaMemGetInfo(&fr, &tot);
    cudaSetDevice(cur);
    if (e != cudaSuccess) return cuda_fail(err, OOC_ERR_CUDA, e, "cudaMemGetInfo", __FILE__, __LINE__);
    info->memory_free = fr;
    return OOC_SUCCESS;
}

static int c_blas_version(void)
{
    int v[3] = {0, 0, 0};
    const libraryPropertyType what[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
    for (int i = 0; i < 3; i++)
        if (cublasGetProperty(what[i], &v[i]) != CUBLAS_STATUS_SUCCESS) return 0;
    return v[0] * 10000 + v[1] * 100 + v[2];
}

static void c_close(ooc_be_t *b)
{
    cbe_t *be = (cbe_t *)b;
    if (be == NULL) return;
    cudaSetDevice(be->device);
    if (be->blas) cublasDestroy(be->blas);
    if (be->workspace) cudaFree(be->workspace);
    free(be);
}

static ooc_status_t c_open_into(cbe_t *be, int device, int math, ooc_err_t *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) return cuda_fail(err, OOC_ERR_NO_DEVICE, e, "cudaGetDeviceCount", __FILE__, __LINE__);
    OOC_RETURN_ERROR_IF(n == 0, err, OOC_ERR_NO_DEVICE, "cudaGetDeviceCount: no CUDA device");
    OOC_RETURN_ERROR_IF(device < 0 || device >= n, err, OOC_ERR_NO_DEVICE,
                        "device %d requested but only %d CUDA device(s) present", device, n);
    be->device = device;
    char bus[32];
    be->numa_node = ooc_numa_wanted() && cudaDeviceGetPCIBusId(bus, (int)sizeof bus, device) == cudaSuccess
                        ? ooc_numa_node_of_pci(ooc_numa_root(), bus)
                        : -1;
    CU(err, "cudaSetDevice", cudaSetDevice(device));
    CUBLAS(err, "cublasCreate", cublasCreate(&be->blas));
    CU(err, "cudaMalloc (cuBLAS workspace)", cudaMalloc(&be->workspace, CUBLAS_WORKSPACE_BYTES));
    /* our own workspace: cuBLAS must not allocate inside the pipeline */
    CUBLAS(err, "cublasSetWorkspace", cublasSetWorkspace(be->blas, be->workspace, CUBLAS_WORKSPACE_BYTES));
    CUBLAS(err, "cublasSetMathMode",
           cublasSetMathMode(be->blas, math == OOC_MATH_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    be->tf32 = math == OOC_MATH_TF32;
    return OOC_SUCCESS;
}

static ooc_status_t c_open_ops(ooc_be_t **out, const ooc_be_ops_t *ops, int device, int math,
                               ooc_err_t *err)
{
    cbe_t *be = calloc(1, sizeof *be);
    OOC_RETURN_ERROR_IF(be == NULL, err, OOC_ERR_HOST_MEMORY, "malloc: out of memory (CUDA backend)");
    be->base.ops = ops;
    ooc_status_t st = c_open_into(be, device, math, err);
    if (st != OOC_SUCCESS) {
        c_close(&be->base);
        return st;
    }
    *out = &be->base;
    return OOC_SUCCESS;
}

static ooc_status_t c_open(ooc_be_t **out, int device, int math, ooc_err_t *err)
{
    return c_open_ops(out, &ooc_backend_cuda_ops, device, math, err);
}

/* the custom backend keeps a cuBLAS handle too: complex tiles still go to cuBLAS */
static ooc_status_t k_open(ooc_be_t **out, int device, int math, ooc_err_t *err)
{
    return c_open_ops(out, &ooc_backend_custom_ops, device, math, err);
}

static ooc_status_t c_activate(ooc_be_t *b, ooc_err_t *err)
{
    CU(err, "cudaSetDevice", cudaSetDevice(((cbe_t *)b)->device));
    return OOC_SUCCESS;
}

static ooc_status_t c_mem_info(ooc_be_t *b, size_t *free_bytes, size_t *total_bytes, ooc_err_t *err)
{
    OOC_FORWARD(c_activate(b, err));
    CU(err, "cudaMemGetInfo", cudaMemGetInfo(free_bytes, total_bytes));
    return OOC_SUCCESS;
}

static ooc_status_t c_dev_alloc(ooc_be_t *b, size_t bytes, void **ptr, ooc_err_t *err)
{
    (void)b;
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_DEV_ALLOC), err, OOC_ERR_DEVICE_MEMORY,
                        "cudaMalloc (%zu bytes): out of memory, injected by OOC_FAULT=dev_alloc", bytes);
    CU_AS(err, OOC_ERR_DEVICE_MEMORY, "cudaMalloc", cudaMalloc(ptr, bytes ? bytes : 1));
    return OOC_SUCCESS;
}

static void c_dev_free(ooc_be_t *b, void *ptr)
{
    (void)b;
    if (ptr) cudaFree(ptr);
}

/* The library's pinned staging (the rings, the probes): pages we map,
 * asking for transparent huge pages (MADV_HUGEPAGE), then registered with
 * cudaHostRegister, the pages first written by up to TOUCH_THREADS threads
 * (their faults, each zeroing a huge page, go in parallel). Measured on an
 * H200 host (kernels/pin_probe.cu "register", docs/PERFORMANCE.md session
 * 22), 2.25 GiB: 0.14-0.15 s to pin, 0.04-0.05 s to free, against
 * 0.85-1.11 s and 0.22-0.36 s by cudaHostAlloc (0.36-0.46 s registered with
 * no threads writing first, 0.3 s with small pages); copies at the same 55
 * GB/s each way. cudaHostAlloc stays the fallback
 * where mapping or registering fails (no THP is not a failure: the pages
 * are then small). MADV_DONTFORK: a forked child (an MPI launcher's helper)
 * gets no copy-on-write view of pages the devices write, which on kernels
 * before 5.9 moved the parent off its pinned pages. The caller's blocks
 * (ooc_host_alloc), which a forked child may read, stay cudaHostAlloc's.
 * The blocks we mapped, the process's as cudaHostAlloc's are (portable),
 * are kept in a registry (regions.h) so that freeing finds their size and
 * tells them from cudaHostAlloc's. Unlike cudaFreeHost, unregistering does not wait
 * for the device: the staging is freed only when no copy uses it (the
 * pipeline drains its streams before it returns, failed or not:
 * pipeline_issue.c drain(); a handle's close frees device memory first).
 * On a host of several NUMA nodes the pages are asked of the device's node
 * (numa.h) before they are first written, so the copy engines reach them
 * without crossing sockets. */
#define HUGE_PAGE ((size_t)2 << 20)
#define TOUCH_THREADS 8
#define TOUCH_SLICE_MIN ((size_t)32 << 20) /* no thread for less */

typedef struct {
    char *p;
    size_t n;
} slice_t;

static void *touch_slice(void *arg)
{
    const slice_t *s = arg;
    memset(s->p, 0, s->n);
    return NULL;
}

/* Write every page of p[0, n) once, in slices by threads (the calling one
 * takes the first; a thread that cannot start leaves its slice to it). */
static void touch_pages(char *p, size_t n)
{
    size_t t = n / TOUCH_SLICE_MIN;
    if (t > TOUCH_THREADS) t = TOUCH_THREADS;
    if (t < 1) t = 1;
    slice_t sl[TOUCH_THREADS];
    pthread_t th[TOUCH_THREADS];
    int started[TOUCH_THREADS] = {0};
    size_t each = (n / t + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    for (size_t i = 0; i < t; i++) {
        size_t at = each * i < n ? each * i : n;
        sl[i] = (slice_t){p + at, i + 1 == t || at + each > n ? n - at : each};
        if (i > 0) started[i] = pthread_create(&th[i], NULL, touch_slice, &sl[i]) == 0;
    }
    for (size_t i = 0; i < t; i++)
        if (!started[i]) touch_slice(&sl[i]);
    for (size_t i = 1; i < t; i++)
        if (started[i]) pthread_join(th[i], NULL);
}

/* the blocks map_pinned gave: their bytes mapped (multiples of HUGE_PAGE) */
static ooc_regions_t mapped = OOC_REGIONS_INIT;

/* Map and register `bytes` (rounded up to huge pages) at a huge-page
 * boundary, its pages on NUMA node `node` where the kernel can (-1: where
 * the threads writing them first run); NULL if any step fails (nothing is
 * left mapped then). */
static void *map_pinned(size_t bytes, int node)
{
    size_t n = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (n < bytes || n + HUGE_PAGE < n) return NULL;
    char *raw = mmap(NULL, n + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    /* keep the huge-page-aligned n bytes within, unmap the rest */
    char *p = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
    if (p > raw) munmap(raw, (size_t)(p - raw));
    munmap(p + n, (size_t)(raw + HUGE_PAGE - p)); /* p - raw < HUGE_PAGE: a tail is always left */
    (void)madvise(p, n, MADV_HUGEPAGE); /* advice: refused (no THP) is not an error */
    (void)madvise(p, n, MADV_DONTFORK);
    if (node >= 0) (void)ooc_numa_prefer(p, n, node); /* advice too: refused leaves the default */
    touch_pages(p, n);
    if (ooc_fault_hit(OOC_FAULT_REGISTER) || cudaHostRegister(p, n, cudaHostRegisterPortable) != cudaSuccess) {
        (void)cudaGetLastError(); /* cudaHostAlloc, tried next, says what is wrong */
        munmap(p, n);
        return NULL;
    }
    if (ooc_regions_add(&mapped, p, n) != 0) {
        (void)cudaHostUnregister(p);
        (void)cudaGetLastError();
        munmap(p, n);
        return NULL;
    }
    return p;
}

/* Unregister and unmap p if we mapped it: 1, else 0. */
static int unmap_pinned(void *p)
{
    size_t n = ooc_regions_take(&mapped, p);
    if (n == 0) return 0;
    (void)cudaHostUnregister(p);
    (void)cudaGetLastError();
    munmap(p, n);
    return 1;
}

static ooc_status_t c_host_alloc(ooc_be_t *b, size_t bytes, int staging, void **ptr, ooc_err_t *err)
{
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_HOST_ALLOC), err, OOC_ERR_HOST_MEMORY,
                        "cudaHostAlloc (%zu bytes): out of memory, injected by OOC_FAULT=host_alloc", bytes);
    *ptr = staging ? map_pinned(bytes ? bytes : 1, b ? ((cbe_t *)b)->numa_node : -1) : NULL;
    if (*ptr == NULL)
        CU_AS(err, OOC_ERR_HOST_MEMORY, "cudaHostAlloc", cudaHostAlloc(ptr, bytes ? bytes : 1, cudaHostAllocPortable));
    return OOC_SUCCESS;
}

static int c_host_free(ooc_be_t *b, void *ptr)
{
    (void)b;
    if (ptr == NULL || unmap_pinned(ptr) || cudaFreeHost(ptr) == cudaSuccess) return 0;
    (void)cudaGetLastError(); /* not pinned by CUDA: nothing freed, nothing sticky */
    return -1;
}

static ooc_status_t c_classify(ooc_be_t *b, const void *ptr, int *pinned, ooc_err_t *err)
{
    (void)b;
    struct cudaPointerAttributes a;
    cudaError_t e = cudaPointerGetAttributes(&a, ptr);
    if (e != cudaSuccess) { /* older drivers: unregistered host memory is an error */
        (void)cudaGetLastError();
        *pinned = 0;
        return OOC_SUCCESS;
    }
    OOC_RETURN_ERROR_IF(a.type == cudaMemoryTypeDevice, err, OOC_ERR_NOT_SUPPORTED,
                        "operand %p is device memory: ooc_gemm takes host memory", ptr);
    *pinned = a.type == cudaMemoryTypeHost;
    return OOC_SUCCESS;
}

static ooc_status_t c_stream_create(ooc_be_t *b, ooc_stream_t *s, ooc_err_t *err)
{
    (void)b;
    cudaStream_t st;
    CU(err, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    *s = st;
    return OOC_SUCCESS;
}

static ooc_status_t c_stream_create_urgent(ooc_be_t *b, ooc_stream_t *s, ooc_err_t *err)
{
    (void)b;
    int least, greatest;
    CU(err, "cudaDeviceGetStreamPriorityRange", cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t st;
    CU(err, "cudaStreamCreateWithPriority", cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, greatest));
    *s = st;
    return OOC_SUCCESS;
}

static void c_stream_destroy(ooc_be_t *b, ooc_stream_t s)
{
    (void)b;
    if (s) cudaStreamDestroy((cudaStream_t)s);
}

static ooc_status_t c_stream_sync(ooc_be_t *b, ooc_stream_t s, ooc_err_t *err)
{
    (void)b;
    CU(err, "cudaStreamSynchronize", cudaStreamSynchronize((cudaStream_t)s));
    return OOC_SUCCESS;
}

static ooc_status_t c_event_create(ooc_be_t *b, ooc_event_t *ev, ooc_err_t *err)
{
    (void)b;
    cudaEvent_t e;
    CU(err, "cudaEventCreateWithFlags", cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    *ev = e;
    return OOC_SUCCESS;
}

static void c_event_destroy(ooc_be_t *b, ooc_event_t ev)
{
    (void)b;
    if (ev) cudaEventDestroy((cudaEvent_t)ev);
}

static ooc_status_t c_event_record(ooc_be_t *b, ooc_event_t ev, ooc_stream_t s, ooc_err_t *err)
{
    (void)b;
    CU(err, "cudaEventRecord", cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)s));
    return OOC_SUCCESS;
}

static ooc_status_t c_stream_wait(ooc_be_t *b, ooc_stream_t s, ooc_event_t ev, ooc_err_t *err)
{
    (void)b;
    CU(err, "cudaStreamWaitEvent", cudaStreamWaitEvent((cudaStream_t)s, (cudaEvent_t)ev, 0));
    return OOC_SUCCESS;
}

static ooc_status_t c_event_sync(ooc_be_t *b, ooc_event_t ev, ooc_err_t *err)
{
    (void)b;
    CU(err, "cudaEventSynchronize", cudaEventSynchronize((cudaEvent_t)ev));
    return OOC_SUCCESS;
}

static ooc_status_t c_event_create_timed(ooc_be_t *b, ooc_event_t *ev, ooc_err_t *err)
{
    (void)b;
    cudaEvent_t e;
    CU(err, "cudaEventCreate", cudaEventCreate(&e));
    *ev = e;
    return OOC_SUCCESS;
}

static ooc_status_t c_event_elapsed(ooc_be_t *b, ooc_event_t a, ooc_event_t e, float *ms, ooc_err_t *err)
{
    (void)b;
    CU(err, "cudaEventElapsedTime", cudaEventElapsedTime(ms, (cudaEvent_t)a, (cudaEvent_t)e));
    return OOC_SUCCESS;
}

static void c_range_push(ooc_be_t *b, const char *name)
{
    (void)b;
    nvtxRangePushA(name);
}

static void c_range_pop(ooc_be_t *b)
{
    (void)b;
    nvtxRangePop();
}

static ooc_status_t c_copy2d(ooc_be_t *b, void *dst, size_t dpitch, const void *src, size_t spitch,
                             size_t width, size_t height, ooc_copy_dir_t dir, ooc_stream_t s,
                             ooc_err_t *err)
{
    (void)b;
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_COPY), err, OOC_ERR_CUDA,
                        "cudaMemcpy2DAsync: failure injected by OOC_FAULT=copy");
    enum cudaMemcpyKind kind = dir == OOC_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (dpitch == width && spitch == width)
        CU(err, "cudaMemcpyAsync", cudaMemcpyAsync(dst, src, width * height, kind, (cudaStream_t)s));
    else
        CU(err, "cudaMemcpy2DAsync",
           cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, (cudaStream_t)s));
    return OOC_SUCCESS;
}

static ooc_status_t c_peer_enable(ooc_be_t *b, ooc_be_t *peer, int *ok, ooc_err_t *err)
{
    int me = ((cbe_t *)b)->device, other = ((cbe_t *)peer)->device, can = 0;
    *ok = 0;
    if (me == other) {
        *ok = 1;
        return OOC_SUCCESS;
    }
    CU(err, "cudaDeviceCanAccessPeer", cudaDeviceCanAccessPeer(&can, me, other));
    if (!can) return OOC_SUCCESS;
    CU(err, "cudaSetDevice", cudaSetDevice(me));
    cudaError_t e = cudaDeviceEnablePeerAccess(other, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError(); /* enabled by an earlier call: fine */
    else if (e != cudaSuccess)
        return cuda_fail(err, OOC_ERR_CUDA, e, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
    *ok = 1;
    return OOC_SUCCESS;
}

static ooc_status_t c_copy_peer(ooc_be_t *b, void *dst, ooc_be_t *peer, const void *src, size_t bytes,
                                ooc_stream_t s, ooc_err_t *err)
{
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_COPY), err, OOC_ERR_CUDA,
                        "cudaMemcpyPeerAsync: failure injected by OOC_FAULT=copy");
    CU(err, "cudaMemcpyPeerAsync",
       cudaMemcpyPeerAsync(dst, ((cbe_t *)b)->device, src, ((cbe_t *)peer)->device, bytes, (cudaStream_t)s));
    return OOC_SUCCESS;
}

/* B (n x m) = A^T on the device, our transpose kernel (bit for bit: the
 * resident operand of a DGEMM of cuBLAS's pair NT, backend.h
 * ooc_resident_transposed) */
static ooc_status_t c_transpose(ooc_be_t *b, ooc_stream_t s, ooc_dtype_t dtype, int m, int n, const void *A, int lda,
                                void *B, int ldb, ooc_err_t *err)
{
    (void)b;
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_GEMM), err, OOC_ERR_CUDA,
                        "ooc_kernel_transpose launch: failure injected by OOC_FAULT=gemm");
    int type = dtype == OOC_R32 ? OOC_KT_S : dtype == OOC_R64 ? OOC_KT_D : dtype == OOC_C32 ? OOC_KT_C : OOC_KT_Z;
    int e = ooc_kernel_transpose(s, type, 0, m, n, A, lda, B, ldb);
    OOC_RETURN_ERROR_IF(e != 0, err, OOC_ERR_CUDA, "ooc_kernel_transpose (%d x %d): %s", m, n,
                        cudaGetErrorString((cudaError_t)e));
    return OOC_SUCCESS;
}

/* One cuBLAS call, column-major: C (m x n) = alpha op1(X) op2(Y) + beta C. */
typedef struct {
    cublasOperation_t o1, o2;
    int m, n, k;
    const void *X, *Y;
    void *C;
    int ldx, ldy, ldc;
} blas_call_t;

typedef union {
    float s;
    double d;
    cuComplex c;
    cuDoubleComplex z;
} scalar_t;

static ooc_status_t blas_call(cublasHandle_t h, ooc_dtype_t t, const blas_call_t *c, const scalar_t *al,
                              const scalar_t *be, ooc_err_t *err)
{
    switch (t) {
    case OOC_R32:
        CUBLAS(err, "cublasSgemm", cublasSgemm(h, c->o1, c->o2, c->m, c->n, c->k, &al->s, c->X, c->ldx, c->Y, c->ldy,
                                               &be->s, c->C, c->ldc));
        break;
    case OOC_R64:
        CUBLAS(err, "cublasDgemm", cublasDgemm(h, c->o1, c->o2, c->m, c->n, c->k, &al->d, c->X, c->ldx, c->Y, c->ldy,
                                               &be->d, c->C, c->ldc));
        break;
    case OOC_C32:
        CUBLAS(err, "cublasCgemm", cublasCgemm(h, c->o1, c->o2, c->m, c->n, c->k, &al->c, c->X, c->ldx, c->Y, c->ldy,
                                               &be->c, c->C, c->ldc));
        break;
    case OOC_C64:
        CUBLAS(err, "cublasZgemm", cublasZgemm(h, c->o1, c->o2, c->m, c->n, c->k, &al->z, c->X, c->ldx, c->Y, c->ldy,
                                               &be->z, c->C, c->ldc));
        break;
    }
    return OOC_SUCCESS;
}

static ooc_status_t c_gemm(ooc_be_t *b, ooc_stream_t s, const ooc_tile_gemm_t *g, ooc_err_t *err)
{
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_GEMM), err, OOC_ERR_CUBLAS,
                        "cublasGemmEx: failure injected by OOC_FAULT=gemm");
    cbe_t *be = (cbe_t *)b;
    cublasHandle_t h = be->blas;
    CUBLAS(err, "cublasSetStream", cublasSetStream(h, (cudaStream_t)s));
    /* cuBLAS is column-major: a row-major C = op(A) op(B) is the column-major
     * C^T = op(B)^T op(A)^T on the same memory, so swap the operands */
    int rm = g->layout == OOC_ROW_MAJOR;
    blas_call_t c = {(cublasOperation_t)((rm ? g->tb : g->ta) - OOC_OP_N),
                     (cublasOperation_t)((rm ? g->ta : g->tb) - OOC_OP_N),
                     rm ? g->n : g->m,
                     rm ? g->m : g->n,
                     g->k,
                     rm ? g->B : g->A,
                     rm ? g->A : g->B,
                     g->C,
                     rm ? g->ldb : g->lda,
                     rm ? g->lda : g->ldb,
                     g->ldc};
    /* alpha and beta copied into scalars of their type, aligned as it is
     * (cuDoubleComplex: 16 bytes): a caller's need only be aligned as
     * their real part (double alpha[2] in a struct), and cuBLAS 13.1's
     * ZGEMM for n = 1 (cublasLt algo 13) loads them with an aligned 16-byte
     * load, a SIGSEGV otherwise (a file job's alpha was 8 bytes off). cuBLAS
     * reads host scalars during the call: locals will do. */
    scalar_t al, be_, one;
    size_t e = ooc_dtype_size(g->dtype);
    memcpy(&al, g->alpha, e);
    memcpy(&be_, g->beta, e);
    memset(&one, 0, sizeof one);
    if (g->dtype == OOC_R32 || g->dtype == OOC_C32)
        one.s = 1.0f; /* (cuComplex: its real part first) */
    else
        one.d = 1.0;
    /* m or k not a multiple of the tensor cores' 16 bytes: the rest of the
     * rows and the rest of the depth in calls of their own (a few rows: the
     * rows' own multiply; a few of the depth: an update of all of C), so
     * that the bulk runs on the fast kernels. Always the same calls for the
     * same tile, so a block is summed the same way whoever computes it. */
    int64_t q = ooc_tiles_aligned(g->dtype, be->tf32, c.o1 != CUBLAS_OP_N, c.o2 != CUBLAS_OP_N) ? 16 / (int64_t)e : 1;
    int64_t mr = c.m % q, kr = c.k % q;
    if (q == 1 || c.m < q || c.k < q || (mr == 0 && kr == 0)) return blas_call(h, g->dtype, &c, &al, &be_, err);
    blas_call_t bulk = c;
    bulk.m = (int)(c.m - mr);
    bulk.k = (int)(c.k - kr);
    OOC_FORWARD(blas_call(h, g->dtype, &bulk, &al, &be_, err));
    if (mr) { /* rows [m - mr, m) of C over the bulk's depth */
        blas_call_t rows = bulk;
        rows.m = (int)mr;
        rows.X = (const char *)c.X + (size_t)bulk.m * (c.o1 == CUBLAS_OP_N ? e : (size_t)c.ldx * e);
        rows.C = (char *)c.C + (size_t)bulk.m * e;
        OOC_FORWARD(blas_call(h, g->dtype, &rows, &al, &be_, err));
    }
    if (kr) { /* all of C += the depth [k - kr, k) */
        blas_call_t depth = c;
        depth.k = (int)kr;
        depth.X = (const char *)c.X + (size_t)bulk.k * (c.o1 == CUBLAS_OP_N ? (size_t)c.ldx * e : e);
        depth.Y = (const char *)c.Y + (size_t)bulk.k * (c.o2 == CUBLAS_OP_N ? e : (size_t)c.ldy * e);
        OOC_FORWARD(blas_call(h, g->dtype, &depth, &al, &one, err));
    }
    return OOC_SUCCESS;
}

/* A DGEMM operand our kernel would read across its leading dimension (op T)
 * is transposed on the device first when the other dimension n is at least
 * this: the transpose (~3.9 TB/s on an H200) costs about 117/n of the
 * multiply (5.7% here) and the NN kernel is 12-22% faster than the T ones
 * (docs/PERFORMANCE.md). */
#define K_TRANSPOSE_MIN 2048

/* X (stored k x m when op T, ldx) as an m x k copy in stream-ordered scratch
 * memory; NULL (the caller reads X in place) when that memory cannot be had */
static void *k_untranspose(cudaStream_t st, const void *X, int ldx, int m, int k)
{
    void *t = NULL;
    if (cudaMallocAsync(&t, (size_t)m * (size_t)k * sizeof(double), st) != cudaSuccess) {
        (void)cudaGetLastError(); /* out of device memory: not an error, the T kernel runs instead */
        return NULL;
    }
    if (ooc_kernel_transpose(st, OOC_KT_D, 0, k, m, X, ldx, t, m) != 0) {
        (void)cudaGetLastError();
        (void)cudaFreeAsync(t, st);
        return NULL;
    }
    return t;
}

/* Our kernels are column-major like cuBLAS, so a row-major tile is the same
 * operand swap as in c_gemm. Real dtypes only: op C is op T there. Complex
 * tiles fall back to cuBLAS (no own complex kernels yet). k == 0 is the
 * scale helper (C = beta*C). */
static ooc_status_t k_gemm(ooc_be_t *b, ooc_stream_t s, const ooc_tile_gemm_t *g, ooc_err_t *err)
{
    if (g->dtype != OOC_R32 && g->dtype != OOC_R64) return c_gemm(b, s, g, err);
    OOC_RETURN_ERROR_IF(ooc_fault_hit(OOC_FAULT_GEMM), err, OOC_ERR_CUDA,
                        "ooc_kernel_gemm launch: failure injected by OOC_FAULT=gemm");
    int rm = g->layout == OOC_ROW_MAJOR;
    int o1 = (rm ? g->tb : g->ta) != OOC_OP_N, o2 = (rm ? g->ta : g->tb) != OOC_OP_N;
    int m = rm ? g->n : g->m, n = rm ? g->m : g->n;
    const void *X = rm ? g->B : g->A, *Y = rm ? g->A : g->B;
    int ldx = rm ? g->ldb : g->lda, ldy = rm ? g->lda : g->ldb;
    int ldc = g->ldc;
    cudaStream_t st = (cudaStream_t)s;
    int e;
    const char *name;
    if (g->k == 0) {
        name = "ooc_kernel_scale";
        e = ooc_kernel_scale(s, g->dtype == OOC_R64 ? OOC_KT_D : OOC_KT_S, m, n, g->beta, g->C, ldc);
    } else if (g->dtype == OOC_R64) {
        void *tx = NULL, *ty = NULL;
        if (o1 && n >= K_TRANSPOSE_MIN && (tx = k_untranspose(st, X, ldx, m, g->k)) != NULL) {
            X = tx;
            ldx = m;
            o1 = 0;
        }
        if (o2 && m >= K_TRANSPOSE_MIN && (ty = k_untranspose(st, Y, ldy, g->k, n)) != NULL) {
            Y = ty;
            ldy = g->k;
            o2 = 0;
        }
        name = "ooc_kernel_dgemm";
        e = ooc_kernel_dgemm(s, o1, o2, m, n, g->k, *(const double *)g->alpha, X, ldx, Y, ldy,
                             *(const double *)g->beta, g->C, ldc);
        if (tx) (void)cudaFreeAsync(tx, st);
        if (ty) (void)cudaFreeAsync(ty, st);
    } else {
        name = "ooc_kernel_sgemm";
        e = ooc_kernel_sgemm(s, o1, o2, m, n, g->k, *(const float *)g->alpha, X, ldx, Y, ldy,
                             *(const float *)g->beta, g->C, ldc);
    }
    if (e != 0) return cuda_fail(err, OOC_ERR_CUDA, (cudaError_t)e, name, __FILE__, __LINE__);
    return OOC_SUCCESS;
}

/* What the cuBLAS and custom tables share: everything but open and gemm. */
#define CUDA_COMMON_OPS                                                                            \
    .close = c_close, .activate = c_activate, .mem_info = c_mem_info, .dev_alloc = c_dev_alloc,    \
    .dev_free = c_dev_free, .host_alloc = c_host_alloc, .host_free = c_host_free,                 \
    .classify = c_classify, .stream_create = c_stream_create,                                      \
    .stream_create_urgent = c_stream_create_urgent,                                                \
    .stream_destroy = c_stream_destroy, .stream_sync = c_stream_sync,                             \
    .event_create = c_event_create, .event_destroy = c_event_destroy,                              \
    .event_record = c_event_record, .stream_wait = c_stream_wait, .event_sync = c_event_sync,      \
    .event_create_timed = c_event_create_timed, .event_elapsed = c_event_elapsed,                  \
    .range_push = c_range_push, .range_pop = c_range_pop, .copy2d = c_copy2d,                     \
    .peer_enable = c_peer_enable, .copy_peer = c_copy_peer, .transpose = c_transpose

static const ooc_be_ops_t ooc_backend_cuda_ops = {
    .name = "cublas",
    .open = c_open,
    CUDA_COMMON_OPS,
    .gemm = c_gemm,
};

/* The cuBLAS table but for open (which table the instance carries) and gemm
 * (our kernels for real dtypes). */
static const ooc_be_ops_t ooc_backend_custom_ops = {
    .name = "custom",
    .open = k_open,
    CUDA_COMMON_OPS,
    .gemm = k_gemm,
};

/* What the library reaches through module.h (loaded or linked in). */
const ooc_cuda_module_t ooc_cuda_table = {
    .abi = OOC_CUDA_MODULE_ABI,
    .version = PACKAGE_VERSION,
    .ops_size = sizeof(ooc_be_ops_t),
    .err_size = sizeof(ooc_err_t),
    .probe = c_probe,
    .device = c_device,
    .blas_version = c_blas_version,
    .cuda_ops = &ooc_backend_cuda_ops,
    .custom_ops = &ooc_backend_custom_ops,
};
