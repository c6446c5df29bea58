// SPDX-License-Identifier: MIT
//
// copy_probe.cu: a measurement program, not part of the library. It measures
// what the copy plan of issue 13 is decided from (docs/PERFORMANCE.md,
// "Copy lines"): the rate of 2-D host<->device copies against the length of
// their lines (alone, split over several streams, both directions at once),
// a gather kernel that reads lines of mapped pinned host memory into a
// contiguous device tile (and the scatter kernel doing the reverse), what
// such a kernel costs a DGEMM running beside it, the same kernels on SMs held
// back from cuBLAS in a copy-bound pipeline's pattern, and the host's
// parallel memcpy (pageable -> pinned) by threads and piece size; staging in
// the pipeline's pattern by copy loop ("stage", not in "all") and through
// small pinned buffers that stay in the CPU's cache ("bounce", not in "all"); a
// pinned row block's strided copies both ways at once, through such buffers by
// threads against the copy engines' 2-D copies ("duplex", not in "all").
//
// Build: nvcc -O2 -arch=sm_90 -o copy_probe kernels/copy_probe.cu -lcublas -lcuda -lpthread
// Run:   ./copy_probe [section...]   sections: lines pitch span gather gemm host alloc beside batch reserve stage bounce duplex
//        (default all); "beside" with COPY_PROBE_PITCH=<bytes> uses that pitch (default 512 KiB) and
//        with COPY_PROBE_QUICK=1 only DGEMM beside, one stream, 32 and 64 KiB lines and packed
#include <cublas_v2.h>
#include <cuda.h>
#include <sys/mman.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <emmintrin.h>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const size_t MiB = (size_t)1 << 20;

// ---------------------------------------------------------------------------
// 2-D copies: `payload` bytes as lines of w bytes, source pitch 2w, split over
// ns streams (each a contiguous range of lines); H2D, D2H, or both at once.

struct bufs {
    char *hA, *hC;   // pinned, 2 x payload each (pitch 2w)
    char *dA, *dC;   // device, payload each
    cudaStream_t s[8];
    cudaEvent_t e0, e1;
};

static size_t g_pitch = 0; // source/destination pitch of the host side; 0: 2w

static float copy_once(bufs &b, size_t payload, size_t w, int ns, int h2d, int d2h)
{
    size_t hp = g_pitch ? g_pitch : 2 * w;
    size_t lines = payload / w;
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(b.e0, b.s[0]));
    for (int i = 1; i < 8; i++) CK(cudaStreamWaitEvent(b.s[i], b.e0, 0));
    for (int i = 0; i < ns; i++) {
        size_t l0 = lines * i / ns, l1 = lines * (i + 1) / ns;
        if (h2d)
            CK(cudaMemcpy2DAsync(b.dA + l0 * w, w, b.hA + l0 * hp, hp, w, l1 - l0,
                                 cudaMemcpyHostToDevice, b.s[i]));
        if (d2h)
            CK(cudaMemcpy2DAsync(b.hC + l0 * hp, hp, b.dC + l0 * w, w, w, l1 - l0,
                                 cudaMemcpyDeviceToHost, b.s[h2d ? 4 + i : i]));
    }
    for (int i = 1; i < 8; i++) {
        cudaEvent_t e;
        CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        CK(cudaEventRecord(e, b.s[i]));
        CK(cudaStreamWaitEvent(b.s[0], e, 0));
        CK(cudaEventDestroy(e));
    }
    CK(cudaEventRecord(b.e1, b.s[0]));
    CK(cudaEventSynchronize(b.e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, b.e0, b.e1));
    return ms;
}

// The least of three timings (ms) of f().
template <class F> static float best_of_3(F f)
{
    float best = 1e30f;
    for (int r = 0; r < 3; r++) {
        float ms = f();
        if (ms < best) best = ms;
    }
    return best;
}

static double copy_rate(bufs &b, size_t payload, size_t w, int ns, int h2d, int d2h)
{
    float best = best_of_3([&] { return copy_once(b, payload, w, ns, h2d, d2h); });
    return (double)payload * ((h2d ? 1 : 0) + (d2h ? 1 : 0)) / (best * 1e-3) / 1e9;
}

static void section_lines(bufs &b, size_t payload)
{
    const size_t widths[] = {2048, 4096, 5376, 8192, 12288, 16384, 24576, 32768, 65536, 131072, 262144, 1048576};
    printf("\n# 2-D copies, %zu MiB of lines of w bytes (source pitch 2w), GB/s, best of 3\n", payload / MiB);
    printf("%8s %8s %8s %8s %8s %8s %10s %10s %10s\n", "w", "H2D", "H2Dx2", "H2Dx3", "H2Dx4", "D2H", "D2Hx2",
           "both", "bothx2");
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        size_t w = widths[i];
        size_t pl = payload / w * w;
        printf("%8zu %8.1f %8.1f %8.1f %8.1f %8.1f %10.1f %10.1f %10.1f\n", w, copy_rate(b, pl, w, 1, 1, 0),
               copy_rate(b, pl, w, 2, 1, 0), copy_rate(b, pl, w, 3, 1, 0), copy_rate(b, pl, w, 4, 1, 0),
               copy_rate(b, pl, w, 1, 0, 1), copy_rate(b, pl, w, 2, 0, 1), copy_rate(b, pl, w, 1, 1, 1),
               copy_rate(b, pl, w, 2, 1, 1));
        fflush(stdout);
    }
}

// The same against the host pitch (a column-major matrix's leading dimension):
// lines far apart cost the copy engines more than lines of the same width
// packed closely. Host span at most `span` bytes.
static void section_pitch(bufs &b, size_t span)
{
    const size_t widths[] = {2048, 5376, 8192, 16384, 32768, 65536, 131072};
    const size_t pitches[] = {0, (size_t)64 << 10, (size_t)256 << 10, (size_t)512 << 10, (size_t)1 << 20};
    printf("\n# 2-D copies against the host pitch (0: 2w), GB/s: H2D / H2D on 2 streams / D2H / both ways\n");
    printf("%8s", "w");
    for (int j = 0; j < 5; j++) printf(" %24zuK", pitches[j] >> 10);
    printf("\n");
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        size_t w = widths[i];
        printf("%8zu", w);
        for (int j = 0; j < 5; j++) {
            size_t p = pitches[j] ? pitches[j] : 2 * w;
            if (p < w) {
                printf(" %24s", "-");
                continue;
            }
            size_t lines = span / p;
            if (lines * w > ((size_t)64 << 20)) lines = ((size_t)64 << 20) / w;
            g_pitch = p;
            size_t pl = lines * w;
            printf("  %5.1f %5.1f %5.1f %6.1f", copy_rate(b, pl, w, 1, 1, 0), copy_rate(b, pl, w, 2, 1, 0),
                   copy_rate(b, pl, w, 1, 0, 1), copy_rate(b, pl, w, 1, 1, 1));
            g_pitch = 0;
        }
        printf("\n");
        fflush(stdout);
    }
}

// ---------------------------------------------------------------------------
// Gather / scatter kernels over mapped pinned memory: line l of w bytes at
// src + l * spitch -> dst + l * w (w a multiple of 16). Each thread moves
// U 16-byte words per step so that enough reads are in flight over PCIe.

template <int U>
__global__ void gather_lines(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t lines, size_t wv,
                             size_t spv, size_t dpv)
{
    size_t total = lines * wv;
    size_t stride = (size_t)gridDim.x * blockDim.x * U;
    for (size_t base = ((size_t)blockIdx.x * blockDim.x) * U + threadIdx.x; base < total; base += stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            size_t idx = base + (size_t)u * blockDim.x;
            if (idx < total) {
                size_t l = idx / wv, x = idx - l * wv;
                v[u] = src[l * spv + x];
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            size_t idx = base + (size_t)u * blockDim.x;
            if (idx < total) {
                size_t l = idx / wv, x = idx - l * wv;
                dst[l * dpv + x] = v[u];
            }
        }
    }
}

static float kernel_once(bufs &b, size_t payload, size_t w, int blocks, int threads, int scatter)
{
    size_t lines = payload / w, wv = w / 16;
    CK(cudaEventRecord(b.e0, b.s[0]));
    if (!scatter)
        gather_lines<4><<<blocks, threads, 0, b.s[0]>>>((uint4 *)b.dA, (const uint4 *)b.hA, lines, wv, 2 * wv, wv);
    else
        gather_lines<4><<<blocks, threads, 0, b.s[0]>>>((uint4 *)b.hC, (const uint4 *)b.dC, lines, wv, wv, 2 * wv);
    CK(cudaGetLastError());
    CK(cudaEventRecord(b.e1, b.s[0]));
    CK(cudaEventSynchronize(b.e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, b.e0, b.e1));
    return ms;
}

static double kernel_rate(bufs &b, size_t payload, size_t w, int blocks, int threads, int scatter)
{
    float best = best_of_3([&] { return kernel_once(b, payload, w, blocks, threads, scatter); });
    return (double)(payload / w * w) / (best * 1e-3) / 1e9;
}

static void section_gather(bufs &b, size_t payload)
{
    const size_t widths[] = {2048, 5376, 8192, 32768, 262144};
    const int blocks[] = {8, 16, 32, 66, 132, 264};
    printf("\n# gather kernel (mapped pinned host -> device tile), %zu MiB, 256 threads x 4 x 16 B, GB/s\n",
           payload / MiB);
    printf("%8s", "w");
    for (int j = 0; j < 6; j++) printf(" %7db", blocks[j]);
    printf("   | scatter (device -> mapped host) 32b 66b 132b\n");
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        size_t w = widths[i];
        printf("%8zu", w);
        for (int j = 0; j < 6; j++) printf(" %8.1f", kernel_rate(b, payload, w, blocks[j], 256, 0));
        printf("   | %8.1f %8.1f %8.1f\n", kernel_rate(b, payload, w, 32, 256, 1), kernel_rate(b, payload, w, 66, 256, 1),
               kernel_rate(b, payload, w, 132, 256, 1));
        fflush(stdout);
    }
    // gather while a 2-D D2H copy runs (a pipeline's copy-out)
    size_t w = 8192, pl = payload / w * w;
    CK(cudaDeviceSynchronize());
    double t0 = now();
    CK(cudaMemcpy2DAsync(b.hC, 2 * 65536, b.dC, 65536, 65536, pl / 65536, cudaMemcpyDeviceToHost, b.s[1]));
    gather_lines<4><<<66, 256, 0, b.s[0]>>>((uint4 *)b.dA, (const uint4 *)b.hA, pl / w, w / 16, 2 * w / 16, w / 16);
    CK(cudaDeviceSynchronize());
    double t = now() - t0;
    printf("gather 8 KiB lines (66 blocks) + D2H 64 KiB lines at once: %.1f GB/s in all (%.1f ms for 2 x %zu MiB)\n",
           2.0 * pl / t / 1e9, t * 1e3, pl / MiB);
}

// Lines at a 512 KiB pitch (a column-major double matrix of 65536 rows)
// spread over a large pinned matrix, as the pipeline copies a row block:
// the allocation (cudaHostAlloc portable, as the library's ooc_host_alloc,
// against cudaMallocHost), its size, the lines per copy call, and the gather
// kernel on the same lines.
static float span_once(bufs &b, char *h, size_t w, size_t pitch, size_t lines, size_t per_call, int gather)
{
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(b.e0, b.s[0]));
    if (gather) {
        gather_lines<4><<<32, 256, 0, b.s[0]>>>((uint4 *)b.dA, (const uint4 *)h, lines, w / 16, pitch / 16, w / 16);
        CK(cudaGetLastError());
    } else {
        for (size_t l0 = 0; l0 < lines; l0 += per_call) {
            size_t n = lines - l0 < per_call ? lines - l0 : per_call;
            CK(cudaMemcpy2DAsync(b.dA + l0 * w, w, h + l0 * pitch, pitch, w, n, cudaMemcpyHostToDevice, b.s[0]));
        }
    }
    CK(cudaEventRecord(b.e1, b.s[0]));
    CK(cudaEventSynchronize(b.e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, b.e0, b.e1));
    return ms;
}

static int g_random = 0;
static void section_span(bufs &b)
{
    printf("\n# a row block's lines in a large pinned matrix: H2D GB/s (best of 3)\n");
    for (int alloc = 1; alloc < 2; alloc++) {
        for (size_t gib = 8; gib <= 8; gib *= 4) {
            size_t bytes = gib << 30;
            char *h;
            if (alloc) CK(cudaHostAlloc((void **)&h, bytes, cudaHostAllocPortable));
            else CK(cudaMallocHost(&h, bytes));
            if (g_random) { // random bytes, as a real matrix holds
                uint64_t x = 88172645463325252ull;
                for (size_t i = 0; i < bytes / 8; i++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    ((uint64_t *)h)[i] = x;
                }
            } else {
                memset(h, 7, bytes);
            }
            const size_t ws[] = {5376, 8192, 16384, 32768};
            const size_t pitches[] = {(size_t)256 << 10, (size_t)512 << 10};
            for (int pi = 0; pi < 2; pi++)
                for (int i = 0; i < 4; i++) {
                    size_t w = ws[i], p = pitches[pi], lines = bytes / p;
                    if (lines * w > ((size_t)256 << 20)) lines = ((size_t)256 << 20) / w;
                    double r[4];
                    const size_t calls[] = {lines, 4096, 1024};
                    for (int c = 0; c < 4; c++) {
                        float best = 1e30f;
                        for (int rep = 0; rep < 3; rep++) {
                            float ms = span_once(b, h, w, p, lines, c < 3 ? calls[c] : lines, c == 3);
                            if (ms < best) best = ms;
                        }
                        r[c] = (double)(lines * w) / (best * 1e-3) / 1e9;
                    }
                    printf("%-14s %zu GiB, w %6zu, pitch %4zu KiB, %6zu lines: one call %5.1f, 4096 lines per call %5.1f, "
                           "1024 per call %5.1f, gather kernel (32 blocks) %5.1f\n",
                           alloc ? "cudaHostAlloc" : "cudaMallocHost", gib, w, p >> 10, lines, r[0], r[1], r[2], r[3]);
                    fflush(stdout);
                }
            CK(cudaFreeHost(h));
        }
    }
}

// The pipeline's pattern: row block i of a column-major matrix (8 GiB,
// pitch 512 KiB) is bytes [i w, (i + 1) w) of every column, each block
// copied once, in order, on one stream: per block the host's time to
// enqueue the copy and the GPU's time to run it.
static void section_blocks(bufs &b)
{
    size_t bytes = (size_t)8 << 30, pitch = (size_t)512 << 10, cols = bytes / pitch;
    char *h;
    CK(cudaHostAlloc((void **)&h, bytes, cudaHostAllocPortable));
    memset(h, 7, bytes);
    printf("\n# row blocks of an 8 GiB column-major matrix (pitch 512 KiB, %zu columns), each copied once\n", cols);
    const size_t ws[] = {5376, 8192, 32768};
    cudaEvent_t ev[64];
    for (int i = 0; i < 64; i++) CK(cudaEventCreate(&ev[i]));
    for (int wi = 0; wi < 3; wi++) {
        size_t w = ws[wi];
        size_t nb = pitch / w;
        if (nb > 40) nb = 40;
        size_t lines = cols;
        if (lines * w > ((size_t)256 << 20)) lines = ((size_t)256 << 20) / w;
        for (int gather = 0; gather < 2; gather++) {
            CK(cudaDeviceSynchronize());
            double enq = 0;
            CK(cudaEventRecord(ev[0], b.s[0]));
            for (size_t i = 0; i < nb; i++) {
                double t0 = now();
                if (gather)
                    gather_lines<4><<<32, 256, 0, b.s[0]>>>((uint4 *)b.dA, (const uint4 *)(h + i * w), lines, w / 16,
                                                            pitch / 16, w / 16);
                else
                    CK(cudaMemcpy2DAsync(b.dA, w, h + i * w, pitch, w, lines, cudaMemcpyHostToDevice, b.s[0]));
                enq += now() - t0;
                CK(cudaEventRecord(ev[i + 1], b.s[0]));
            }
            CK(cudaDeviceSynchronize());
            printf("w %6zu, %s, %zu blocks of %zu lines: enqueue %.0f us per block; GB/s per block:", w,
                   gather ? "gather kernel" : "cudaMemcpy2DAsync", nb, lines, enq / nb * 1e6);
            double tot = 0;
            for (size_t i = 0; i < nb; i++) {
                float ms;
                CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
                tot += ms;
                if (i < 8) printf(" %.1f", (double)(lines * w) / (ms * 1e-3) / 1e9);
            }
            printf(" ... all: %.1f\n", (double)(nb * lines * w) / (tot * 1e-3) / 1e9);
            // the same blocks again
            CK(cudaEventRecord(ev[0], b.s[0]));
            for (size_t i = 0; i < nb; i++) {
                CK(cudaMemcpy2DAsync(b.dA, w, h + i * w, pitch, w, lines, cudaMemcpyHostToDevice, b.s[0]));
                CK(cudaEventRecord(ev[i + 1], b.s[0]));
            }
            CK(cudaDeviceSynchronize());
            float ms;
            CK(cudaEventElapsedTime(&ms, ev[0], ev[nb]));
            printf("   the same %zu blocks again with cudaMemcpy2DAsync: %.1f GB/s\n", nb, (double)(nb * lines * w) / (ms * 1e-3) / 1e9);
        }
    }
    CK(cudaFreeHost(h));
}

// ---------------------------------------------------------------------------
// What a gather kernel costs a multiply beside it: DGEMM and TF32 SGEMM
// 8192 x 8192 x 8192 x reps, alone, then with the gather looping on another stream.

static void section_gemm(bufs &b, size_t payload)
{
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        printf("cublasCreate failed\n");
        return;
    }
    const int N = 8192, reps = 6;
    double *dX;
    CK(cudaMalloc(&dX, (size_t)4 * N * N * sizeof(double)));
    CK(cudaMemset(dX, 0, (size_t)4 * N * N * sizeof(double)));
    cudaStream_t sg = b.s[0], sk = b.s[1];
    cublasSetStream(h, sg);
    printf("\n# a gather kernel beside cuBLAS (8192^3 x %d), 8 KiB lines\n", reps);
    for (int mode = 0; mode < 2; mode++) {
        cublasSetMathMode(h, mode ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
        const int gblocks[] = {0, 8, 16, 32, 66};
        for (int gi = 0; gi < 5; gi++) {
            int gb = gblocks[gi];
            double one = 1.0, zero = 0.0;
            float onef = 1.0f, zerof = 0.0f;
            // warm
            if (mode == 0)
                cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, dX, N, dX + (size_t)N * N, N, &zero,
                            dX + (size_t)2 * N * N, N);
            CK(cudaDeviceSynchronize());
            size_t w = 8192, pl = payload / w * w;
            int copies = 0;
            double t0 = now();
            for (int r = 0; r < reps; r++) {
                if (mode == 0)
                    cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, dX, N, dX + (size_t)N * N, N, &zero,
                                dX + (size_t)2 * N * N, N);
                else
                    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2 * N, 2 * N, N, &onef, (float *)dX, 2 * N,
                                (float *)dX + (size_t)2 * N * N, N, &zerof, (float *)dX + (size_t)4 * N * N, 2 * N);
            }
            CK(cudaEventRecord(b.e1, sg));
            if (gb > 0) {
                while (cudaEventQuery(b.e1) == cudaErrorNotReady) {
                    gather_lines<4><<<gb, 256, 0, sk>>>((uint4 *)b.dA, (const uint4 *)b.hA, pl / w, w / 16,
                                                        2 * w / 16, w / 16);
                    copies++;
                    CK(cudaStreamSynchronize(sk));
                }
            }
            CK(cudaEventSynchronize(b.e1));
            double tg = now() - t0;
            CK(cudaDeviceSynchronize());
            double flops = mode == 0 ? 2.0 * N * N * (double)N * reps : 2.0 * 4 * N * N * (double)N * reps;
            printf("%s, gather %3d blocks: multiply %.1f TFLOP/s; gather moved %.1f GB/s meanwhile\n",
                   mode ? "TF32 SGEMM 16384x16384x8192" : "DGEMM 8192^3", gb, flops / tg / 1e12,
                   copies * (double)pl / tg / 1e9);
            fflush(stdout);
        }
    }
    CK(cudaFree(dX));
    cublasDestroy(h);
}

// ---------------------------------------------------------------------------
// Host memcpy, pageable -> pinned: T threads, each copying its share in pieces.

struct hjob {
    char *dst;
    const char *src;
    size_t bytes, piece;
    int nt;
};

// memcpy with non-temporal (streaming) stores: the destination is not read
// into the cache first, so a copy moves 2 bytes of memory traffic per byte,
// not 3 (glibc streams only above a size threshold); with dist > 0, the
// source prefetched that many bytes ahead.
static void copy_sse_pf(char *dst, const char *src, size_t n, size_t dist)
{
    size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
    if (head > n) head = n;
    memcpy(dst, src, head);
    dst += head, src += head, n -= head;
    const char *end = src + n;
    for (size_t v = n / 64; v > 0; v--, dst += 64, src += 64) {
        if (dist && src + dist < end) _mm_prefetch(src + dist, _MM_HINT_T0);
        __m128i a = _mm_loadu_si128((const __m128i *)src), b2 = _mm_loadu_si128((const __m128i *)(src + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + 32)), d = _mm_loadu_si128((const __m128i *)(src + 48));
        _mm_stream_si128((__m128i *)dst, a);
        _mm_stream_si128((__m128i *)(dst + 16), b2);
        _mm_stream_si128((__m128i *)(dst + 32), c);
        _mm_stream_si128((__m128i *)(dst + 48), d);
    }
    memcpy(dst, src, n % 64);
}

static void copy_nt(char *dst, const char *src, size_t n)
{
    copy_sse_pf(dst, src, n, 0);
    _mm_sfence();
}

static void *hcopy(void *arg)
{
    hjob *j = (hjob *)arg;
    for (size_t o = 0; o < j->bytes; o += j->piece) {
        size_t n = j->bytes - o < j->piece ? j->bytes - o : j->piece;
        if (j->nt) copy_nt(j->dst + o, j->src + o, n);
        else memcpy(j->dst + o, j->src + o, n);
    }
    return NULL;
}
static int g_nt = 0;

static double host_rate(char *dst, const char *src, size_t bytes, int T, size_t piece)
{
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        pthread_t th[64];
        hjob jb[64];
        double t0 = now();
        for (int i = 0; i < T; i++) {
            size_t a = bytes * i / T, z = bytes * (i + 1) / T;
            jb[i] = hjob{dst + a, src + a, z - a, piece, g_nt};
            pthread_create(&th[i], NULL, hcopy, &jb[i]);
        }
        for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
        double t = now() - t0;
        if (t < best) best = t;
    }
    return (double)bytes / best / 1e9;
}

static void section_host(bufs &b)
{
    size_t bytes = (size_t)2 << 30;
    char *src = (char *)malloc(bytes);
    char *dst;
    CK(cudaMallocHost(&dst, bytes));
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    printf("\n# host memcpy pageable -> pinned, 2 GiB, GB/s copied (memory traffic is 2x), best of 3\n");
    const int ts[] = {1, 2, 4, 8, 12, 16, 24, 32};
    const size_t pieces[] = {(size_t)64 << 10, (size_t)1 << 20, (size_t)16 << 20, (size_t)1 << 30};
    printf("%8s", "threads");
    for (int p = 0; p < 4; p++) printf(" %9zuK", pieces[p] >> 10);
    printf("\n");
    for (g_nt = 0; g_nt < 2; g_nt++) {
        printf("%s\n", g_nt ? "non-temporal stores (ours):" : "glibc memcpy:");
        for (int i = 0; i < 8; i++) {
            printf("%8d", ts[i]);
            for (int p = 0; p < 4; p++) printf(" %10.1f", host_rate(dst, src, bytes, ts[i], pieces[p]));
            printf("\n");
            fflush(stdout);
        }
    }
    // the same while the DMA reads another pinned buffer (a pipeline's H2D)
    size_t pl = (size_t)256 << 20;
    for (int T = 8; T <= 16; T += 4) for (g_nt = 0; g_nt < 2; g_nt++) {
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(b.e0, b.s[1]));
        for (int r = 0; r < 8; r++) CK(cudaMemcpyAsync(b.dA, b.hA, pl, cudaMemcpyHostToDevice, b.s[1]));
        double hr = host_rate(dst, src, bytes, T, (size_t)4 << 20);
        CK(cudaEventRecord(b.e1, b.s[1]));
        CK(cudaEventSynchronize(b.e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, b.e0, b.e1));
        printf("%s %d threads, 4 MiB pieces, while H2D streams 2 GiB: copy %.1f GB/s, H2D %.1f GB/s\n",
               g_nt ? "non-temporal" : "memcpy", T, hr, 8.0 * pl / (ms * 1e-3) / 1e9);
    }
    // pinning in place instead of staging
    double t0 = now();
    CK(cudaHostRegister(src, bytes, cudaHostRegisterDefault));
    double tr = now() - t0;
    t0 = now();
    CK(cudaHostUnregister(src));
    double tu = now() - t0;
    printf("cudaHostRegister of 2 GiB (touched): %.1f GB/s; unregister %.1f GB/s\n", bytes / tr / 1e9, bytes / tu / 1e9);
    CK(cudaFreeHost(dst));
    free(src);
}

// ---------------------------------------------------------------------------
// The host allocation under the copies: the pipeline's pattern (row blocks
// of a column-major matrix, pitch 512 KiB, each block once, then again; and
// A's blocks in while C's blocks go out) on pinned memory from
// cudaHostAlloc, from mmap + cudaHostRegister with and without transparent
// huge pages, and from cuMemCreate on the host (2 MiB granularity).

static CUmemGenericAllocationHandle g_vmm_handle;

static void print_thp(const char *when)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "AnonHugePages", 13) == 0) printf("  %s: %s", when, line);
    if (f) fclose(f);
}

// kind 0 cudaHostAlloc, 1 mmap+THP+register, 2 mmap no THP+register, 3 cuMemCreate host
static char *alloc_kind(int kind, size_t bytes)
{
    char *h = NULL;
    if (kind == 0) {
        CK(cudaHostAlloc((void **)&h, bytes, cudaHostAllocPortable));
    } else if (kind == 1 || kind == 2) {
        size_t al = (size_t)2 << 20;
        char *raw = (char *)mmap(NULL, bytes + al, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) return NULL;
        h = (char *)(((uintptr_t)raw + al - 1) & ~(uintptr_t)(al - 1));
        int rc = madvise(h, bytes, kind == 1 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
        if (rc != 0) printf("  madvise failed\n");
        memset(h, 1, bytes);
        print_thp("after touch");
        double t0 = now();
        CK(cudaHostRegister(h, bytes, cudaHostRegisterPortable));
        printf("  cudaHostRegister %zu GiB: %.2f s\n", bytes >> 30, now() - t0);
    } else {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
        prop.location.id = 0;
        size_t gmin = 0, grec = 0;
        if (cuMemGetAllocationGranularity(&gmin, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS ||
            cuMemGetAllocationGranularity(&grec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS) {
            printf("  cuMemGetAllocationGranularity (host) failed\n");
            return NULL;
        }
        printf("  host VMM granularity: minimum %zu, recommended %zu\n", gmin, grec);
        size_t g = grec > gmin ? grec : gmin;
        bytes = (bytes + g - 1) / g * g;
        CUresult r = cuMemCreate(&g_vmm_handle, bytes, &prop, 0);
        if (r != CUDA_SUCCESS) {
            printf("  cuMemCreate (host) failed: %d\n", (int)r);
            return NULL;
        }
        CUdeviceptr p;
        if (cuMemAddressReserve(&p, bytes, g, 0, 0) != CUDA_SUCCESS || cuMemMap(p, bytes, 0, g_vmm_handle, 0) != CUDA_SUCCESS) {
            printf("  cuMemAddressReserve/cuMemMap failed\n");
            return NULL;
        }
        CUmemAccessDesc d[2];
        memset(d, 0, sizeof d);
        d[0].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        d[0].location.id = 0;
        d[0].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        d[1].location.type = CU_MEM_LOCATION_TYPE_HOST;
        d[1].location.id = 0;
        d[1].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        r = cuMemSetAccess(p, bytes, d, 2);
        if (r != CUDA_SUCCESS) {
            printf("  cuMemSetAccess (device + host) failed: %d\n", (int)r);
            return NULL;
        }
        h = (char *)p;
        memset(h, 1, bytes);
    }
    return h;
}

static void free_kind(int kind, char *h, size_t bytes)
{
    if (h == NULL) return;
    if (kind == 0) CK(cudaFreeHost(h));
    else if (kind == 1 || kind == 2) {
        CK(cudaHostUnregister(h));
        munmap(h, bytes); // leaks the alignment slack; a probe
    } else {
        cuMemUnmap((CUdeviceptr)h, bytes);
        cuMemAddressFree((CUdeviceptr)h, bytes);
        cuMemRelease(g_vmm_handle);
    }
}

static double blocks_rate(char *x, char *y, size_t w, size_t pitch, size_t lines, size_t nb, int mode)
{
    // mode 0: H2D blocks of x; 1: D2H blocks into y; 2: both at once (two streams)
    char *dA, *dC;
    CK(cudaMalloc(&dA, lines * w));
    CK(cudaMalloc(&dC, lines * w));
    cudaStream_t s0, s1;
    CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaDeviceSynchronize());
    double t0 = now();
    for (size_t i = 0; i < nb; i++) {
        if (mode != 1) CK(cudaMemcpy2DAsync(dA, w, x + i * w, pitch, w, lines, cudaMemcpyDefault, s0));
        if (mode != 0) CK(cudaMemcpy2DAsync(y + i * w, pitch, dC, w, w, lines, cudaMemcpyDefault, s1));
    }
    CK(cudaDeviceSynchronize());
    double t = now() - t0;
    CK(cudaFree(dA));
    CK(cudaFree(dC));
    CK(cudaStreamDestroy(s0));
    CK(cudaStreamDestroy(s1));
    return (double)(nb * lines * w) * (mode == 2 ? 2 : 1) / t / 1e9;
}

static void section_alloc(void)
{
    cuInit(0);
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[256] = "?";
    if (f) {
        if (!fgets(line, sizeof line, f)) strcpy(line, "?\n");
        fclose(f);
    }
    printf("\n# host allocation under the pipeline's copies (pitch 512 KiB, 4 GiB matrices); THP: %s", line);
    print_thp("before");
    const char *names[] = {"cudaHostAlloc", "mmap+THP+register", "mmap nohuge+register", "cuMemCreate host"};
    size_t bytes = (size_t)4 << 30, pitch = (size_t)512 << 10, cols = bytes / pitch;
    for (int kind = 0; kind < 4; kind++) {
        printf("%s:\n", names[kind]);
        char *x = alloc_kind(kind, bytes);
        if (x == NULL) continue;
        char *y = kind == 3 ? NULL : alloc_kind(kind, bytes);
        if (kind == 3) { // one VMM allocation at a time in this probe: x's second half is y
            y = x + bytes / 2;
            cols /= 2;
        }
        const size_t ws[] = {5376, 8192, 16384, 32768};
        for (int wi = 0; wi < 4; wi++) {
            size_t w = ws[wi], nb = pitch / w, lines = cols;
            if (nb > 24) nb = 24;
            double fresh = blocks_rate(x, y, w, pitch, lines, nb, 0);
            double again = blocks_rate(x, y, w, pitch, lines, nb, 0);
            double d2h = blocks_rate(x, y, w, pitch, lines, nb, 1);
            double both = blocks_rate(x, y, w, pitch, lines, nb, 2);
            printf("  w %6zu, %2zu blocks of %zu lines: H2D fresh %5.1f, again %5.1f; D2H %5.1f; both ways %6.1f GB/s in all\n",
                   w, nb, lines, fresh, again, d2h, both);
            fflush(stdout);
        }
        if (kind == 3) {
            free_kind(kind, x, bytes);
            cols *= 2;
        } else {
            free_kind(kind, x, bytes);
            free_kind(kind, y, bytes);
        }
    }
}

// What the sections "beside" and "batch" share: a cuBLAS handle, the
// multiply's operands (dX: 4 N^2 doubles), 4 GiB of pinned host memory each
// way (x in, y out) seen as lines of `pitch` bytes, and 1 GiB device blocks.
typedef struct {
    cublasHandle_t h;
    int N;
    double *dX;
    size_t bytes, pitch, lines;
    char *x, *y, *dA, *dC;
} beside_t;

static int beside_open(beside_t *b)
{
    if (cublasCreate(&b->h) != CUBLAS_STATUS_SUCCESS) {
        printf("cublasCreate failed\n");
        return 0;
    }
    b->N = 8192;
    CK(cudaMalloc(&b->dX, (size_t)4 * b->N * b->N * sizeof(double)));
    CK(cudaMemset(b->dX, 0, (size_t)4 * b->N * b->N * sizeof(double)));
    b->bytes = (size_t)4 << 30;
    b->pitch = (size_t)512 << 10;
    const char *pe = getenv("COPY_PROBE_PITCH"); /* another pitch in bytes: is a power of two the loss? */
    if (pe && atol(pe) >= 65536) b->pitch = (size_t)atol(pe);
    b->lines = b->bytes / b->pitch;
    CK(cudaHostAlloc((void **)&b->x, b->bytes, cudaHostAllocPortable));
    CK(cudaHostAlloc((void **)&b->y, b->bytes, cudaHostAllocPortable));
    memset(b->x, 1, b->bytes);
    memset(b->y, 2, b->bytes);
    CK(cudaMalloc(&b->dA, (size_t)1 << 30));
    CK(cudaMalloc(&b->dC, (size_t)1 << 30));
    return 1;
}

static void beside_close(beside_t *b)
{
    CK(cudaFreeHost(b->x));
    CK(cudaFreeHost(b->y));
    CK(cudaFree(b->dA));
    CK(cudaFree(b->dC));
    CK(cudaFree(b->dX));
    cublasDestroy(b->h);
}

// reps DGEMMs of N^3 on dX (C = A B in its third N^2), on h's stream
static void dgemm_loop(cublasHandle_t h, double *dX, int N, int reps)
{
    double one = 1.0, zero = 0.0;
    for (int q = 0; q < reps; q++)
        cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, dX, N, dX + (size_t)N * N, N, &zero,
                    dX + (size_t)2 * N * N, N);
}

// reps multiplies on h's stream: mode 1 DGEMM 8192^3 (N = 8192), mode 2 TF32
// SGEMM 16384x16384x8192 (the math mode set by the caller) on dX's floats
static void multiply_loop(cublasHandle_t h, double *dX, int N, int mode, int reps)
{
    float onef = 1.0f, zerof = 0.0f;
    for (int q = 0; q < reps; q++) {
        if (mode == 1)
            dgemm_loop(h, dX, N, 1);
        else
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2 * N, 2 * N, N, &onef, (float *)dX, 2 * N,
                        (float *)dX + (size_t)2 * N * N, N, &zerof, (float *)dX + (size_t)4 * N * N, 2 * N);
    }
}

// ---------------------------------------------------------------------------
// The pipeline's copies beside a multiply: row blocks of a column-major
// matrix (pitch 512 KiB) copied in, out or both ways while cuBLAS runs a
// DGEMM or a TF32 SGEMM on another stream (and with nothing beside them),
// each block's lines split over ns streams per direction; "packed": the same
// bytes with pitch w (one contiguous piece).

static void section_beside(void)
{
    beside_t b;
    if (!beside_open(&b)) return;
    cublasHandle_t h = b.h;
    const int N = b.N;
    double *dX = b.dX;
    size_t pitch = b.pitch, lines = b.lines;
    char *x = b.x, *y = b.y, *dA = b.dA, *dC = b.dC;
    cudaStream_t sg, si[4], so[4];
    CK(cudaStreamCreateWithFlags(&sg, cudaStreamNonBlocking));
    for (int i = 0; i < 4; i++) {
        CK(cudaStreamCreateWithFlags(&si[i], cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&so[i], cudaStreamNonBlocking));
    }
    cublasSetStream(h, sg);
    cudaEvent_t t0, g0, g1, ein[4], eout[4];
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&g0));
    CK(cudaEventCreate(&g1));
    for (int i = 0; i < 4; i++) {
        CK(cudaEventCreate(&ein[i]));
        CK(cudaEventCreate(&eout[i]));
    }
    printf("\n# copies of row blocks (pitch %zu bytes, %zu lines) beside a multiply, GB/s per direction\n", pitch, lines);
    int quick = getenv("COPY_PROBE_QUICK") != NULL; /* DGEMM beside, one stream, 32 and 64 KiB lines, packed */
    const char *mname[] = {"nothing", "DGEMM 8192^3", "TF32 SGEMM 16384x16384x8192"};
    const size_t ws[] = {5376, 8192, 16384, 32768, 65536};
    const int nss[] = {1, 2, 4};
    for (int mode = 0; mode < 3; mode++) {
        if (quick && mode != 1) continue;
        cublasSetMathMode(h, mode == 2 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
        for (int nsi = 0; nsi < 3; nsi++) {
            int ns = nss[nsi];
            if (ns > 1 && (mode == 2 || quick)) continue;
            for (int wi = 0; wi < 6; wi++) {
                if (quick && wi < 3) continue;
                int packed = wi == 5;
                if (packed && ns > 1) continue;
                size_t w = packed ? 8192 : ws[wi];
                size_t nb = ((size_t)1536 << 20) / (lines * w);
                if (nb > pitch / w) nb = pitch / w;
                if (nb < 1) nb = 1;
                double r[3], tf[3];
                for (int dir = 0; dir < 3; dir++) { // in, out, both
                    CK(cudaDeviceSynchronize());
                    CK(cudaEventRecord(g0, sg));
                    int reps = mode == 0 ? 0 : 10;
                    multiply_loop(h, dX, N, mode, reps);
                    CK(cudaEventRecord(g1, sg));
                    if (mode) {
                        struct timespec ts = {0, 20 * 1000 * 1000}; // let the multiply reach its clocks first
                        nanosleep(&ts, NULL);
                    }
                    double h0 = now();
                    CK(cudaEventRecord(t0, si[0]));
                    for (int q = 0; q < ns; q++) {
                        CK(cudaStreamWaitEvent(si[q], t0, 0));
                        CK(cudaStreamWaitEvent(so[q], t0, 0));
                    }
                    for (size_t i = 0; i < nb; i++) {
                        size_t hp = packed ? w : pitch;
                        size_t off = packed ? i * lines * w : i * w;
                        for (int q = 0; q < ns; q++) {
                            size_t l0 = lines * q / ns, l1 = lines * (q + 1) / ns;
                            if (dir != 1)
                                CK(cudaMemcpy2DAsync(dA + l0 * w, w, x + off + l0 * hp, hp, w, l1 - l0,
                                                     cudaMemcpyHostToDevice, si[q]));
                            if (dir != 0)
                                CK(cudaMemcpy2DAsync(y + off + l0 * hp, hp, dC + l0 * w, w, w, l1 - l0,
                                                     cudaMemcpyDeviceToHost, so[q]));
                        }
                    }
                    for (int q = 0; q < ns; q++) {
                        CK(cudaEventRecord(ein[q], si[q]));
                        CK(cudaEventRecord(eout[q], so[q]));
                    }
                    for (int q = 0; q < ns; q++) {
                        CK(cudaEventSynchronize(ein[q]));
                        CK(cudaEventSynchronize(eout[q]));
                    }
                    (void)h0;
                    int gemm_outlasted = mode == 0 || cudaEventQuery(g1) == cudaErrorNotReady;
                    CK(cudaDeviceSynchronize());
                    float ms = 0, ms_g = 0;
                    for (int q = 0; q < ns; q++) {
                        float a;
                        if (dir != 1) {
                            CK(cudaEventElapsedTime(&a, t0, ein[q]));
                            if (a > ms) ms = a;
                        }
                        if (dir != 0) {
                            CK(cudaEventElapsedTime(&a, t0, eout[q]));
                            if (a > ms) ms = a;
                        }
                    }
                    if (mode) CK(cudaEventElapsedTime(&ms_g, g0, g1));
                    double pl = (double)(nb * lines * w);
                    r[dir] = pl / (ms * 1e-3) / 1e9;
                    double flops = mode == 1 ? 2.0 * N * N * (double)N * reps : 8.0 * N * N * (double)N * reps;
                    tf[dir] = mode ? flops / (ms_g * 1e-3) / 1e12 : 0;
                    if (!gemm_outlasted) printf("  (the multiply ended before the copies)\n");
                }
                printf("beside %-28s %d stream%s w %6zu%s: in %5.1f, out %5.1f, both %5.1f each; multiply "
                       "%.1f/%.1f/%.1f TFLOP/s\n",
                       mname[mode], ns, ns > 1 ? "s" : " ", w, packed ? " packed" : "       ", r[0], r[1], r[2], tf[0],
                       tf[1], tf[2]);
                fflush(stdout);
            }
        }
    }
    beside_close(&b);
}

// ---------------------------------------------------------------------------
// Other ways to issue the same strided copy beside a DGEMM: one 2-D copy,
// a batch of 1-D copies (cudaMemcpyBatchAsync, with and without the hint
// cudaMemcpyFlagPreferOverlapWithCompute), one 2-D op of
// cudaMemcpy3DBatchAsync with the hint; and 2-D copies of more line lengths.

static void section_batch(void)
{
    beside_t b;
    if (!beside_open(&b)) return;
    cublasHandle_t h = b.h;
    const int N = b.N;
    double *dX = b.dX;
    size_t pitch = b.pitch, lines = b.lines;
    char *x = b.x, *y = b.y, *dA = b.dA, *dC = b.dC;
    cudaStream_t sg, sc;
    CK(cudaStreamCreateWithFlags(&sg, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
    cublasSetStream(h, sg);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    void **dsts = (void **)malloc(lines * sizeof(void *));
    void **srcs = (void **)malloc(lines * sizeof(void *));
    size_t *sizes = (size_t *)malloc(lines * sizeof(size_t));
    printf("\n# one row block's copy issued differently, beside DGEMM 8192^3 (pitch 512 KiB, %zu lines), GB/s\n", lines);
    const size_t ws[] = {8192, 20480, 24576, 28672, 32768, 131072};
    const char *how[] = {"2-D copy", "batch of 1-D", "batch of 1-D + overlap hint", "3-D batch op + overlap hint"};
    for (int wi = 0; wi < 6; wi++) {
        size_t w = ws[wi];
        size_t nb = ((size_t)1024 << 20) / (lines * w);
        if (nb > pitch / w) nb = pitch / w;
        if (nb < 1) nb = 1;
        for (int k = 0; k < 4; k++) {
            if (k > 0 && w != 8192 && w != 32768) continue;
            double r[2];
            for (int dir = 0; dir < 2; dir++) {
                CK(cudaDeviceSynchronize());
                dgemm_loop(h, dX, N, 8);
                struct timespec ts = {0, 20 * 1000 * 1000};
                nanosleep(&ts, NULL);
                cudaError_t bad = cudaSuccess;
                CK(cudaEventRecord(e0, sc));
                for (size_t i = 0; i < nb; i++) {
                    char *hp = (dir ? y : x) + i * w;
                    char *dp = dir ? dC : dA;
                    if (k == 0) {
                        if (dir == 0) CK(cudaMemcpy2DAsync(dp, w, hp, pitch, w, lines, cudaMemcpyHostToDevice, sc));
                        else CK(cudaMemcpy2DAsync(hp, pitch, dp, w, w, lines, cudaMemcpyDeviceToHost, sc));
                    } else if (k < 3) {
                        for (size_t l = 0; l < lines; l++) {
                            dsts[l] = dir ? (void *)(hp + l * pitch) : (void *)(dp + l * w);
                            srcs[l] = dir ? (void *)(dp + l * w) : (void *)(hp + l * pitch);
                            sizes[l] = w;
                        }
                        struct cudaMemcpyAttributes at;
                        memset(&at, 0, sizeof at);
                        at.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
                        at.flags = k == 2 ? cudaMemcpyFlagPreferOverlapWithCompute : 0;
                        size_t idx = 0;
                        cudaError_t e = cudaMemcpyBatchAsync(dsts, srcs, sizes, lines, &at, &idx, 1, sc);
                        if (e != cudaSuccess) bad = e;
                    } else {
                        struct cudaMemcpy3DBatchOp op;
                        memset(&op, 0, sizeof op);
                        op.src.type = cudaMemcpyOperandTypePointer;
                        op.dst.type = cudaMemcpyOperandTypePointer;
                        op.src.op.ptr.ptr = dir ? (void *)dp : (void *)hp;
                        op.src.op.ptr.rowLength = dir ? w : pitch;
                        op.src.op.ptr.layerHeight = lines;
                        op.dst.op.ptr.ptr = dir ? (void *)hp : (void *)dp;
                        op.dst.op.ptr.rowLength = dir ? pitch : w;
                        op.dst.op.ptr.layerHeight = lines;
                        op.extent = make_cudaExtent(w, lines, 1);
                        op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
                        op.flags = cudaMemcpyFlagPreferOverlapWithCompute;
                        cudaError_t e = cudaMemcpy3DBatchAsync(1, &op, 0, sc);
                        if (e != cudaSuccess) bad = e;
                    }
                }
                CK(cudaEventRecord(e1, sc));
                CK(cudaEventSynchronize(e1));
                int outlasted = cudaStreamQuery(sg) == cudaErrorNotReady;
                CK(cudaDeviceSynchronize());
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                r[dir] = bad != cudaSuccess ? -1 : (double)(nb * lines * w) / (ms * 1e-3) / 1e9;
                if (bad != cudaSuccess) printf("  %s: %s\n", how[k], cudaGetErrorString(bad));
                if (!outlasted) printf("  (the multiply ended first)\n");
            }
            printf("w %6zu, %-28s: in %5.1f, out %5.1f\n", w, how[k], r[0], r[1]);
            fflush(stdout);
        }
    }
    // a check that the 3-D batch op copied the right bytes (its units)
    {
        size_t w = 8192, l = 64;
        for (size_t i = 0; i < l; i++) memset(x + i * pitch, (int)(i & 0x7f), w);
        struct cudaMemcpy3DBatchOp op;
        memset(&op, 0, sizeof op);
        op.src.type = op.dst.type = cudaMemcpyOperandTypePointer;
        op.src.op.ptr.ptr = x;
        op.src.op.ptr.rowLength = pitch;
        op.src.op.ptr.layerHeight = l;
        op.dst.op.ptr.ptr = dA;
        op.dst.op.ptr.rowLength = w;
        op.dst.op.ptr.layerHeight = l;
        op.extent = make_cudaExtent(w, l, 1);
        op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
        CK(cudaMemcpy3DBatchAsync(1, &op, 0, sc));
        CK(cudaStreamSynchronize(sc));
        char *back = (char *)malloc(w * l);
        CK(cudaMemcpy(back, dA, w * l, cudaMemcpyDeviceToHost));
        size_t wrong = 0;
        for (size_t i = 0; i < l; i++)
            for (size_t j = 0; j < w; j++) wrong += back[i * w + j] != (char)(i & 0x7f);
        printf("3-D batch op check: %zu wrong bytes of %zu\n", wrong, w * l);
        free(back);
    }
    // DGEMMs of a block split in k-pieces (C accumulated, beta 1 after the first), against whole
    printf("\n# DGEMM of a %d x %d block, k = 16384, in k-pieces\n", 3584, 5462);
    {
        int M = 3584, Nn = 5462, K = 16384;
        double *a, *bb, *c;
        CK(cudaMalloc(&a, (size_t)M * K * 8));
        CK(cudaMalloc(&bb, (size_t)K * Nn * 8));
        CK(cudaMalloc(&c, (size_t)M * Nn * 8));
        CK(cudaMemset(a, 0, (size_t)M * K * 8));
        CK(cudaMemset(bb, 0, (size_t)K * Nn * 8));
        const int kps[] = {16384, 4096, 2048, 1024, 512, 256};
        for (int q = 0; q < 6; q++) {
            int kp = kps[q];
            double one = 1.0, zero = 0.0;
            CK(cudaDeviceSynchronize());
            for (int rep = 0; rep < 2; rep++) {
                CK(cudaEventRecord(e0, sg));
                for (int r = 0; r < 4; r++)
                    for (int k0 = 0; k0 < K; k0 += kp)
                        cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, Nn, kp, &one, a + (size_t)k0 * M, M, bb + k0, K,
                                    k0 ? &one : &zero, c, M);
                CK(cudaEventRecord(e1, sg));
                CK(cudaEventSynchronize(e1));
            }
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            printf("k-piece %5d: %.1f TFLOP/s\n", kp, 4 * 2.0 * M * (double)Nn * K / (ms * 1e-3) / 1e12);
            fflush(stdout);
        }
        CK(cudaFree(a));
        CK(cudaFree(bb));
        CK(cudaFree(c));
    }
    free(dsts);
    free(srcs);
    free(sizes);
    beside_close(&b);
}

// ---------------------------------------------------------------------------
// A copy-bound pipeline's steady state with C (and A) moved by kernels on SMs
// held back from cuBLAS (cublasSetSmCountTarget), against the copy engines:
// per block of mb rows, A in (k lines of mb x e bytes, host pitch m x e), the
// block's multiply, and C out (n lines, the same pitch), the three streams
// running at once over all the blocks of the matrix. "tall" is the bench's
// DGEMM 131072x4096x4096 in 8192-row blocks, "tf32" S3 with TF32 in 8192-row
// blocks. Device buffers are split so that no stream writes what another reads.

static void section_reserve(void)
{
    beside_t b;
    if (!beside_open(&b)) return;
    int nsm = 0, lo = 0, hi = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t sg, si, so;
    CK(cudaStreamCreateWithPriority(&sg, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&si, cudaStreamNonBlocking, hi));
    CK(cudaStreamCreateWithPriority(&so, cudaStreamNonBlocking, hi));
    cudaEvent_t t0, eg, ei, eo;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&eg));
    CK(cudaEventCreate(&ei));
    CK(cudaEventCreate(&eo));
    cublasSetStream(b.h, sg);
    printf("\n# a copy-bound pipeline's streams at once: A in, multiply, C out (%d SMs; kernels on held SMs)\n", nsm);
    struct {
        const char *name;
        int tf32, mb, n, k, m;
    } cs[] = {{"tall DGEMM 131072x4096x4096", 0, 8192, 4096, 4096, 131072},
              {"tf32 SGEMM 65536x16384x16384", 1, 8192, 16384, 16384, 65536}};
    // how: 0 copy engines both ways; 1 C out by kernel; 2 A in and C out by kernels
    const int hows[] = {0, 0, 1, 1, 1, 1, 2, 2}, held[] = {0, 8, 4, 8, 16, 24, 16, 32};
    for (int c = 0; c < 2; c++) {
        size_t e = cs[c].tf32 ? 4 : 8, w = (size_t)cs[c].mb * e, pitch = (size_t)cs[c].m * e;
        size_t ablk = w * cs[c].k, cblk = w * cs[c].n, half = (size_t)512 << 20;
        int nblk = cs[c].m / cs[c].mb;
        char *dAin = b.dA, *dAuse = b.dA + half, *dCmade = b.dC, *dCout = b.dC + half;
        char *dB = (char *)b.dX;
        cublasSetMathMode(b.h, cs[c].tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
        for (int v = 0; v < 8; v++) {
            int how = hows[v], r = held[v];
            cublasSetSmCountTarget(b.h, r ? nsm - r : 0);
            int kb = r ? 8 * (how == 2 ? r / 2 : r) : 0; // kernel blocks of 256 threads: 8 per held SM
            double best = 1e30, rin = 0, rout = 0, rmath = 0;
            for (int rep = 0; rep < 3; rep++) {
                CK(cudaDeviceSynchronize());
                CK(cudaEventRecord(t0, sg));
                CK(cudaStreamWaitEvent(si, t0, 0));
                CK(cudaStreamWaitEvent(so, t0, 0));
                double one = 1.0, zero = 0.0;
                float onef = 1.0f, zerof = 0.0f;
                for (int i = 0; i < nblk; i++) {
                    const char *ha = b.x + (size_t)i * w;
                    char *hc = b.y + (size_t)i * w;
                    if (how < 2)
                        CK(cudaMemcpy2DAsync(dAin, w, ha, pitch, w, cs[c].k, cudaMemcpyHostToDevice, si));
                    else
                        gather_lines<4><<<kb, 256, 0, si>>>((uint4 *)dAin, (const uint4 *)ha, cs[c].k, w / 16,
                                                             pitch / 16, w / 16);
                    if (cs[c].tf32)
                        cublasSgemm(b.h, CUBLAS_OP_N, CUBLAS_OP_N, cs[c].mb, cs[c].n, cs[c].k, &onef,
                                    (float *)dAuse, cs[c].mb, (float *)dB, cs[c].k, &zerof, (float *)dCmade,
                                    cs[c].mb);
                    else
                        cublasDgemm(b.h, CUBLAS_OP_N, CUBLAS_OP_N, cs[c].mb, cs[c].n, cs[c].k, &one,
                                    (double *)dAuse, cs[c].mb, (double *)dB, cs[c].k, &zero, (double *)dCmade,
                                    cs[c].mb);
                    if (how == 0)
                        CK(cudaMemcpy2DAsync(hc, pitch, dCout, w, w, cs[c].n, cudaMemcpyDeviceToHost, so));
                    else
                        gather_lines<4><<<kb, 256, 0, so>>>((uint4 *)hc, (const uint4 *)dCout, cs[c].n, w / 16,
                                                             w / 16, pitch / 16);
                }
                CK(cudaGetLastError());
                CK(cudaEventRecord(eg, sg));
                CK(cudaEventRecord(ei, si));
                CK(cudaEventRecord(eo, so));
                CK(cudaDeviceSynchronize());
                float mg, mi, mo;
                CK(cudaEventElapsedTime(&mg, t0, eg));
                CK(cudaEventElapsedTime(&mi, t0, ei));
                CK(cudaEventElapsedTime(&mo, t0, eo));
                double wall = mg > mi ? mg : mi;
                wall = wall > mo ? wall : mo;
                if (rep > 0 && wall < best) { // rep 0 warms up
                    best = wall;
                    rin = (double)ablk * nblk / (mi * 1e-3) / 1e9;
                    rout = (double)cblk * nblk / (mo * 1e-3) / 1e9;
                    rmath = 2.0 * cs[c].m * (double)cs[c].n * cs[c].k / (mg * 1e-3) / 1e12;
                }
            }
            printf("%-30s in by %-6s out by %-6s SMs held %2d: in %5.1f GB/s, out %5.1f GB/s, multiply %6.1f "
                   "TFLOP/s, all three %.1f ms\n",
                   cs[c].name, how == 2 ? "kernel" : "engine", how ? "kernel" : "engine", r, rin, rout, rmath, best);
            fflush(stdout);
        }
    }
    cublasSetSmCountTarget(b.h, 0);
    CK(cudaStreamDestroy(sg));
    CK(cudaStreamDestroy(si));
    CK(cudaStreamDestroy(so));
    beside_close(&b);
}


// ---------------------------------------------------------------------------
// Staging in the pipeline's pattern: an 8 GiB pageable source (a column-major
// matrix whose row blocks are lines of 32 KiB, pitch 256 KiB) copied block by
// block into a ring of two pinned 1 GiB slots by T threads, each slot sent up
// (H2D) while the threads fill the other. GB/s staged end to end, for several
// copy loops: what the staging threads' rate beside the DMA depends on.

#include <immintrin.h>

__attribute__((target("avx2"))) static void copy_avx_pf(char *dst, const char *src, size_t n, size_t dist)
{
    size_t head = (32 - ((uintptr_t)dst & 31)) & 31;
    if (head > n) head = n;
    memcpy(dst, src, head);
    dst += head, src += head, n -= head;
    const char *end = src + n;
    for (size_t v = n / 128; v > 0; v--, dst += 128, src += 128) {
        if (dist && src + dist < end) {
            _mm_prefetch(src + dist, _MM_HINT_T0);
            _mm_prefetch(src + dist + 64, _MM_HINT_T0);
        }
        __m256i a = _mm256_loadu_si256((const __m256i *)src), b2 = _mm256_loadu_si256((const __m256i *)(src + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(src + 64)), d = _mm256_loadu_si256((const __m256i *)(src + 96));
        _mm256_stream_si256((__m256i *)dst, a);
        _mm256_stream_si256((__m256i *)(dst + 32), b2);
        _mm256_stream_si256((__m256i *)(dst + 64), c);
        _mm256_stream_si256((__m256i *)(dst + 96), d);
    }
    memcpy(dst, src, n % 128);
}

static void copy_movsb(char *dst, const char *src, size_t n)
{
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

struct sjob {
    char *dst;
    const char *src;
    size_t pitch, width, l0, l1;
    int kind;
    size_t dist;
};

static void *scopy(void *arg)
{
    sjob *j = (sjob *)arg;
    for (size_t l = j->l0; l < j->l1; l++) {
        char *d = j->dst + l * j->width;
        const char *s = j->src + l * j->pitch;
        switch (j->kind) {
        case 0: memcpy(d, s, j->width); break;
        case 1: copy_sse_pf(d, s, j->width, j->dist); break;
        case 2: copy_avx_pf(d, s, j->width, j->dist); break;
        case 3: copy_movsb(d, s, j->width); break;
        }
    }
    _mm_sfence();
    return NULL;
}

static void section_stage(bufs &b)
{
    char line[64] = "?";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    }
    printf("\n# staging in the pipeline's pattern: 8 GiB pageable, 32 KiB lines (pitch 256 KiB), ring of 2 x 1 GiB "
           "pinned, H2D beside; THP: %s", line);
    printf("# avx2: %d\n", __builtin_cpu_supports("avx2"));
    size_t W = (size_t)32 << 10, P = 8 * W, bytes = (size_t)8 << 30, lines = bytes / P, slot = lines * W;
    char *ring;
    CK(cudaMallocHost(&ring, 2 * slot));
    memset(ring, 1, 2 * slot);
    char *dev;
    CK(cudaMalloc(&dev, slot));
    cudaEvent_t sent[2];
    CK(cudaEventCreateWithFlags(&sent[0], cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&sent[1], cudaEventDisableTiming));
    for (int huge = 0; huge < 2; huge++) {
        char *src = (char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (src == MAP_FAILED) return;
        madvise(src, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
        memset(src, 7, bytes);
        printf("source pages: %s\n", huge ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE");
        struct { int kind; size_t dist; const char *name; } vs[] = {
            {0, 0, "glibc memcpy"}, {1, 0, "sse stream (ours)"}, {1, 512, "sse stream, prefetch +512"},
            {1, 2048, "sse stream, prefetch +2K"}, {1, 4096, "sse stream, prefetch +4K"},
            {2, 0, "avx2 stream"}, {2, 2048, "avx2 stream, prefetch +2K"}, {3, 0, "rep movsb"}};
        const int ts[] = {8, 12, 16};
        for (auto &v : vs) {
            if (v.kind == 2 && !__builtin_cpu_supports("avx2")) continue;
            printf("  %-28s", v.name);
            for (int T : ts) {
                // alone (no DMA), then the ring with H2D beside
                double best_alone = 1e30, best = 1e30;
                for (int rep = 0; rep < 2; rep++) {
                    double t0 = now();
                    for (int blk = 0; blk < 8; blk++) {
                        pthread_t th[64];
                        sjob jb[64];
                        for (int i = 0; i < T; i++) {
                            jb[i] = sjob{ring + (blk & 1) * slot, src + blk * W, P, W, lines * i / T,
                                         lines * (i + 1) / T, v.kind, v.dist};
                            pthread_create(&th[i], NULL, scopy, &jb[i]);
                        }
                        for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
                    }
                    double ta = now() - t0;
                    if (ta < best_alone) best_alone = ta;
                    CK(cudaDeviceSynchronize());
                    t0 = now();
                    for (int blk = 0; blk < 8; blk++) {
                        int s = blk & 1;
                        if (blk >= 2) CK(cudaEventSynchronize(sent[s]));
                        pthread_t th[64];
                        sjob jb[64];
                        for (int i = 0; i < T; i++) {
                            jb[i] = sjob{ring + s * slot, src + blk * W, P, W, lines * i / T, lines * (i + 1) / T,
                                         v.kind, v.dist};
                            pthread_create(&th[i], NULL, scopy, &jb[i]);
                        }
                        for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
                        CK(cudaMemcpyAsync(dev, ring + s * slot, slot, cudaMemcpyHostToDevice, b.s[1]));
                        CK(cudaEventRecord(sent[s], b.s[1]));
                    }
                    CK(cudaStreamSynchronize(b.s[1]));
                    double t = now() - t0;
                    if (t < best) best = t;
                }
                printf("  T%-2d alone %5.1f ring %5.1f", T, bytes / best_alone / 1e9, bytes / best / 1e9);
                fflush(stdout);
            }
            printf("\n");
        }
        munmap(src, bytes);
    }
    CK(cudaFree(dev));
    CK(cudaFreeHost(ring));
}


// ---------------------------------------------------------------------------
// Staging through small pinned bounce buffers that stay in the CPU's cache:
// each of T threads takes chunks of C bytes (whole 32 KiB lines of the same
// 8 GiB pageable source as "stage"), copies one into the next of its own NB
// pinned buffers (after that buffer's last H2D is done) and sends it to its
// place in a device slot on its own stream. If the buffers stay in the last
// level cache, a staged byte costs one pass over memory (the pageable read),
// not three. GB/s staged end to end.

struct bjob {
    char *bounce;       // NB x chunk bytes, pinned
    cudaStream_t st;
    cudaEvent_t ev[8];
    const char *src;
    char *dev;
    size_t pitch, width, chunk_lines, nchunks, dev_bytes;
    int nb, nt_stores;
    size_t *next;       // shared chunk counter
    pthread_mutex_t *mu;
};

static void *bcopy(void *arg)
{
    bjob *j = (bjob *)arg;
    for (size_t i = 0;; i++) {
        pthread_mutex_lock(j->mu);
        size_t c = (*j->next)++;
        pthread_mutex_unlock(j->mu);
        if (c >= j->nchunks) break;
        int b = (int)(i % j->nb);
        char *buf = j->bounce + b * j->chunk_lines * j->width;
        if (i >= (size_t)j->nb) CK(cudaEventSynchronize(j->ev[b]));
        for (size_t l = 0; l < j->chunk_lines; l++) {
            size_t line = c * j->chunk_lines + l;  // line of the whole 8 GiB walk
            const char *s = j->src + (line % (j->nchunks * j->chunk_lines / 8)) * j->pitch + (line / (j->nchunks * j->chunk_lines / 8)) * j->width;
            if (j->nt_stores) copy_sse_pf(buf + l * j->width, s, j->width, 0);
            else memcpy(buf + l * j->width, s, j->width);
        }
        if (j->nt_stores) _mm_sfence();
        size_t bytes = j->chunk_lines * j->width, at = (c * bytes) % j->dev_bytes;
        CK(cudaMemcpyAsync(j->dev + at, buf, bytes, cudaMemcpyHostToDevice, j->st));
        CK(cudaEventRecord(j->ev[b], j->st));
    }
    CK(cudaStreamSynchronize(j->st));
    return NULL;
}

static void section_bounce(void)
{
    size_t W = (size_t)32 << 10, P = 8 * W, bytes = (size_t)8 << 30, lines = bytes / P;
    char *src = (char *)malloc(bytes);
    memset(src, 7, bytes);
    char *dev;
    size_t dev_bytes = (size_t)1 << 30;
    CK(cudaMalloc(&dev, dev_bytes));
    printf("\n# staging through per-thread pinned bounce buffers (8 GiB pageable, malloc, 32 KiB lines), GB/s staged\n");
    const int ts[] = {8, 12, 16};
    const size_t chunks[] = {(size_t)256 << 10, (size_t)1 << 20, (size_t)4 << 20};
    for (int nt = 0; nt < 2; nt++) for (int nb = 2; nb <= 4; nb += 2) for (size_t ch : chunks) {
        printf("  %-10s NB %d chunk %4zu KiB:", nt ? "stream" : "memcpy", nb, ch >> 10);
        for (int T : ts) {
            bjob jb[16];
            char *bounce;
            CK(cudaMallocHost(&bounce, (size_t)T * nb * ch));
            memset(bounce, 1, (size_t)T * nb * ch);
            double best = 1e30;
            for (int rep = 0; rep < 2; rep++) {
                size_t next = 0;
                pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
                pthread_t th[16];
                for (int i = 0; i < T; i++) {
                    jb[i].bounce = bounce + (size_t)i * nb * ch;
                    if (rep == 0) {
                        CK(cudaStreamCreateWithFlags(&jb[i].st, cudaStreamNonBlocking));
                        for (int e = 0; e < nb; e++) CK(cudaEventCreateWithFlags(&jb[i].ev[e], cudaEventDisableTiming));
                    }
                    jb[i].src = src, jb[i].dev = dev, jb[i].pitch = P, jb[i].width = W;
                    jb[i].chunk_lines = ch / W, jb[i].nchunks = lines * 8 / (ch / W), jb[i].dev_bytes = dev_bytes;
                    jb[i].nb = nb, jb[i].nt_stores = nt, jb[i].next = &next, jb[i].mu = &mu;
                }
                double t0 = now();
                for (int i = 0; i < T; i++) pthread_create(&th[i], NULL, bcopy, &jb[i]);
                for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
                double t = now() - t0;
                if (t < best) best = t;
            }
            for (int i = 0; i < T; i++) {
                for (int e = 0; e < nb; e++) CK(cudaEventDestroy(jb[i].ev[e]));
                CK(cudaStreamDestroy(jb[i].st));
            }
            CK(cudaFreeHost(bounce));
            printf("  T%-2d %5.1f", T, bytes / best / 1e9);
            fflush(stdout);
        }
        printf("\n");
    }
    CK(cudaFree(dev));
    free(src);
}

// ---------------------------------------------------------------------------
// tall's and tf32's copies, both ways at once beside a multiply: row blocks of
// a column-major A (lines of w bytes, pitch 512 KiB, pinned) go in and row
// blocks of C come out, (a) as 2-D copies by the copy engines (one per block
// and direction), (b) through small pinned buffers that stay in the CPU's
// cache: each of Ti threads gathers a chunk's lines into the next of its own
// NB buffers with plain stores and sends it up contiguous on its own stream;
// each of To threads brings a chunk down contiguous into one of its buffers
// and scatters its lines into C with streaming stores. GB/s each way (all of
// the 4 GiB each way, wall clock) and the multiply's rate beside.

struct djob {
    int out;            // 0: gather + H2D, 1: D2H + scatter
    char *buf;          // nb x chunk bytes, pinned
    int nb;
    cudaStream_t st;
    cudaEvent_t ev[4];
    char *host, *dev;
    size_t pitch, w, lines, chunk_lines, total;
    size_t *next;       // this direction's shared chunk counter
    pthread_mutex_t *mu;
};

static size_t djob_take(djob *j)
{
    pthread_mutex_lock(j->mu);
    size_t c = (*j->next)++;
    pthread_mutex_unlock(j->mu);
    return c;
}

// chunk c: lines l0.. of block c / (lines / chunk_lines)
static void djob_where(djob *j, size_t c, char **h, char **d)
{
    size_t per = j->lines / j->chunk_lines, blk = c / per, l0 = (c % per) * j->chunk_lines;
    *h = j->host + l0 * j->pitch + blk * j->w;
    *d = j->dev + l0 * j->w;
}

static void *dcopy(void *arg)
{
    djob *j = (djob *)arg;
    size_t bytes = j->chunk_lines * j->w;
    if (!j->out) {
        for (size_t i = 0;; i++) {
            size_t c = djob_take(j);
            if (c >= j->total) break;
            int b = (int)(i % j->nb);
            char *buf = j->buf + b * bytes, *h, *d;
            if (i >= (size_t)j->nb) CK(cudaEventSynchronize(j->ev[b]));
            djob_where(j, c, &h, &d);
            for (size_t l = 0; l < j->chunk_lines; l++) memcpy(buf + l * j->w, h + l * j->pitch, j->w);
            CK(cudaMemcpyAsync(d, buf, bytes, cudaMemcpyHostToDevice, j->st));
            CK(cudaEventRecord(j->ev[b], j->st));
        }
    } else {
        size_t taken[4], head = 0, tail = 0;
        int more = 1;
        for (;;) {
            while (more && head - tail < (size_t)j->nb) {
                size_t c = djob_take(j);
                if (c >= j->total) {
                    more = 0;
                    break;
                }
                int b = (int)(head % j->nb);
                char *h, *d;
                djob_where(j, c, &h, &d);
                CK(cudaMemcpyAsync(j->buf + b * bytes, d, bytes, cudaMemcpyDeviceToHost, j->st));
                CK(cudaEventRecord(j->ev[b], j->st));
                taken[b] = c;
                head++;
            }
            if (head == tail) break;
            int b = (int)(tail % j->nb);
            CK(cudaEventSynchronize(j->ev[b]));
            char *h, *d, *buf = j->buf + b * bytes;
            djob_where(j, taken[b], &h, &d);
            for (size_t l = 0; l < j->chunk_lines; l++) copy_sse_pf(h + l * j->pitch, buf + l * j->w, j->w, 0);
            _mm_sfence();
            tail++;
        }
    }
    CK(cudaStreamSynchronize(j->st));
    return NULL;
}

static void section_duplex(void)
{
    beside_t b;
    if (!beside_open(&b)) return;
    cublasHandle_t h = b.h;
    const int N = b.N;
    size_t pitch = b.pitch, lines = b.lines;
    cudaStream_t sg, si, so;
    CK(cudaStreamCreateWithFlags(&sg, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&si, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&so, cudaStreamNonBlocking));
    cublasSetStream(h, sg);
    cudaEvent_t g0, g1;
    CK(cudaEventCreate(&g0));
    CK(cudaEventCreate(&g1));
    djob jb[32];
    for (int i = 0; i < 32; i++) {
        CK(cudaStreamCreateWithFlags(&jb[i].st, cudaStreamNonBlocking));
        for (int e = 0; e < 4; e++) CK(cudaEventCreateWithFlags(&jb[i].ev[e], cudaEventDisableTiming));
    }
    size_t max_buf = (size_t)32 * 2 * (8 << 20);
    char *bounce;
    CK(cudaMallocHost(&bounce, max_buf));
    memset(bounce, 1, max_buf);
    printf("\n# A's row blocks in and C's out at once (4 GiB each way, pitch %zu, %zu lines), GB/s each way\n", pitch,
           lines);
    const char *mname[] = {"nothing", "DGEMM 8192^3", "TF32 SGEMM 16384x16384x8192"};
    const size_t ws[] = {32768, 65536};
    // ti/to: threads through the buffers in/out; -1: that direction by 2-D copies; both 0: 2-D both ways
    struct { int ti, to; size_t ch; int nb; } cfg[] = {
        {0, 0, 0, 0},
        {6, 6, (size_t)4 << 20, 2}, {8, 6, (size_t)4 << 20, 2}, {8, 8, (size_t)4 << 20, 2},
        {6, 6, (size_t)2 << 20, 4}, {-1, 8, (size_t)4 << 20, 2}, {-1, 12, (size_t)4 << 20, 2},
        {-1, 12, (size_t)2 << 20, 4}, {8, -1, (size_t)4 << 20, 2}, {12, -1, (size_t)4 << 20, 2}};
    for (int mode = 0; mode < 3; mode++) {
        cublasSetMathMode(h, mode == 2 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
        for (size_t w : ws) {
            size_t nblk = pitch / w;
            for (auto &c : cfg) {
                CK(cudaDeviceSynchronize());
                CK(cudaEventRecord(g0, sg));
                int reps = mode == 0 ? 0 : mode == 1 ? 12 : 24;
                multiply_loop(h, b.dX, N, mode, reps);
                CK(cudaEventRecord(g1, sg));
                if (mode) {
                    struct timespec ts = {0, 20 * 1000 * 1000};
                    nanosleep(&ts, NULL);
                }
                double t0 = now(), t_in = 0, t_out = 0;
                if (c.ti < 0 || c.to < 0) { // one direction by 2-D copies beside the other's threads
                    int tdir = c.ti < 0; // 1: the threads take C out
                    int T = tdir ? c.to : c.ti;
                    size_t next = 0;
                    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
                    pthread_t th[32];
                    for (int i = 0; i < T; i++) {
                        djob *j = &jb[i];
                        j->out = tdir;
                        j->buf = bounce + (size_t)i * c.nb * c.ch;
                        j->nb = c.nb;
                        j->host = j->out ? b.y : b.x;
                        j->dev = j->out ? b.dC : b.dA;
                        j->pitch = pitch, j->w = w, j->lines = lines, j->chunk_lines = c.ch / w;
                        j->total = nblk * (lines / j->chunk_lines);
                        j->next = &next, j->mu = &mu;
                        pthread_create(&th[i], NULL, dcopy, j);
                    }
                    cudaStream_t s2 = tdir ? si : so;
                    for (size_t i = 0; i < nblk; i++) {
                        if (tdir)
                            CK(cudaMemcpy2DAsync(b.dA, w, b.x + i * w, pitch, w, lines, cudaMemcpyHostToDevice, s2));
                        else
                            CK(cudaMemcpy2DAsync(b.y + i * w, pitch, b.dC, w, w, lines, cudaMemcpyDeviceToHost, s2));
                    }
                    CK(cudaStreamSynchronize(s2));
                    double t2 = now() - t0;
                    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
                    double tt = now() - t0;
                    t_in = tdir ? t2 : tt;
                    t_out = tdir ? tt : t2;
                } else if (!c.ti) {
                    for (size_t i = 0; i < nblk; i++) {
                        CK(cudaMemcpy2DAsync(b.dA, w, b.x + i * w, pitch, w, lines, cudaMemcpyHostToDevice, si));
                        CK(cudaMemcpy2DAsync(b.y + i * w, pitch, b.dC, w, w, lines, cudaMemcpyDeviceToHost, so));
                    }
                    CK(cudaStreamSynchronize(si));
                    t_in = now() - t0;
                    CK(cudaStreamSynchronize(so));
                    t_out = now() - t0;
                } else {
                    size_t next[2] = {0, 0};
                    pthread_mutex_t mu[2] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
                    pthread_t th[32];
                    int T = c.ti + c.to;
                    for (int i = 0; i < T; i++) {
                        djob *j = &jb[i];
                        j->out = i >= c.ti;
                        j->buf = bounce + (size_t)i * c.nb * c.ch;
                        j->nb = c.nb;
                        j->host = j->out ? b.y : b.x;
                        j->dev = j->out ? b.dC : b.dA;
                        j->pitch = pitch, j->w = w, j->lines = lines, j->chunk_lines = c.ch / w;
                        j->total = nblk * (lines / j->chunk_lines);
                        j->next = &next[j->out], j->mu = &mu[j->out];
                        pthread_create(&th[i], NULL, dcopy, j);
                    }
                    for (int i = 0; i < c.ti; i++) pthread_join(th[i], NULL);
                    t_in = now() - t0;
                    for (int i = c.ti; i < T; i++) pthread_join(th[i], NULL);
                    t_out = now() - t0;
                }
                int outlasted = mode == 0 || cudaEventQuery(g1) == cudaErrorNotReady;
                CK(cudaDeviceSynchronize());
                float ms_g = 0;
                if (mode) CK(cudaEventElapsedTime(&ms_g, g0, g1));
                double flops = mode == 1 ? 2.0 * N * N * (double)N * reps : 8.0 * N * N * (double)N * reps;
                double bytes = (double)(nblk * lines * w);
                if (!c.ti)
                    printf("duplex %-28s w %6zu 2-D copies            ", mname[mode], w);
                else if (c.ti < 0 || c.to < 0)
                    printf("duplex %-28s w %6zu %s %2d, %2zu MiB x%d", mname[mode], w,
                           c.ti < 0 ? "in 2-D, To" : "out 2-D, Ti", c.ti < 0 ? c.to : c.ti, c.ch >> 20, c.nb);
                else
                    printf("duplex %-28s w %6zu Ti %d To %d %2zu MiB x%d ", mname[mode], w, c.ti, c.to, c.ch >> 20,
                           c.nb);
                printf(": in %5.1f out %5.1f GB/s (%.1f ms); multiply %.1f TFLOP/s%s\n", bytes / t_in / 1e9,
                       bytes / t_out / 1e9, 1e3 * (t_in > t_out ? t_in : t_out),
                       mode ? flops / (ms_g * 1e-3) / 1e12 : 0.0, outlasted ? "" : " (ended before the copies)");
                fflush(stdout);
            }
        }
    }
    CK(cudaFreeHost(bounce));
    beside_close(&b);
}

int main(int argc, char **argv)
{
    size_t payload = (size_t)256 << 20;
    bufs b;
    CK(cudaSetDevice(0));
    CK(cudaMallocHost(&b.hA, 8 * payload));
    CK(cudaMallocHost(&b.hC, 8 * payload));
    CK(cudaMalloc(&b.dA, payload));
    CK(cudaMalloc(&b.dC, payload));
    memset(b.hA, 3, 8 * payload);
    memset(b.hC, 4, 8 * payload);
    CK(cudaMemset(b.dC, 5, payload));
    for (int i = 0; i < 8; i++) CK(cudaStreamCreateWithFlags(&b.s[i], cudaStreamNonBlocking));
    CK(cudaEventCreate(&b.e0));
    CK(cudaEventCreate(&b.e1));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, %d SMs, asyncEngineCount %d\n", p.name, p.multiProcessorCount, p.asyncEngineCount);
    int all = argc < 2;
    for (int a = all ? 0 : 1; a < (all ? 1 : argc); a++) {
        const char *s = all ? "all" : argv[a];
        int every = strcmp(s, "all") == 0;
        if (every || strcmp(s, "lines") == 0) section_lines(b, payload);
        if (every || strcmp(s, "pitch") == 0) section_pitch(b, 8 * payload);
        if (every || strcmp(s, "span") == 0) section_span(b);
        if (every || strcmp(s, "blocks") == 0) section_blocks(b);
        if (strcmp(s, "span-random") == 0) {
            g_random = 1;
            section_span(b);
            g_random = 0;
        }
        if (every || strcmp(s, "gather") == 0) section_gather(b, payload);
        if (every || strcmp(s, "gemm") == 0) section_gemm(b, payload);
        if (every || strcmp(s, "host") == 0) section_host(b);
        if (strcmp(s, "stage") == 0) section_stage(b);
        if (strcmp(s, "bounce") == 0) section_bounce();
        if (strcmp(s, "duplex") == 0) section_duplex();
        if (every || strcmp(s, "alloc") == 0) section_alloc();
        if (every || strcmp(s, "beside") == 0) section_beside();
        if (every || strcmp(s, "batch") == 0) section_batch();
        if (every || strcmp(s, "reserve") == 0) section_reserve();
    }
    return 0;
}
