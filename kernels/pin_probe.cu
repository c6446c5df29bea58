// SPDX-License-Identifier: MIT
//
// pin_probe.cu: a measurement program, not part of the library. How long
// pinning host memory takes (cudaHostAlloc, as the pipeline's staging is
// allocated, per device, in ooc_api_prepare) and freeing it, by size, and
// whether pinning one total in several threads at once is faster
// (docs/PERFORMANCE.md, session 21: "one process on two GPUs").
//
// Build: nvcc -O2 -std=c++17 -o pin_probe kernels/pin_probe.cu
// Run:   ./pin_probe
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int main()
{
    cudaFree(0);
    const size_t gib = (size_t)1 << 30, sizes[] = {gib, 9 * gib / 4, 9 * gib / 2};
    for (size_t s : sizes)
        for (int rep = 0; rep < 2; rep++) {
            void *p = nullptr;
            double t0 = now();
            cudaError_t e = cudaHostAlloc(&p, s, cudaHostAllocPortable);
            double t1 = now();
            if (e == cudaSuccess) memset(p, 1, 4096);
            cudaFreeHost(p);
            double t2 = now();
            printf("%.2f GiB: cudaHostAlloc %.3f s (%s), cudaFreeHost %.3f s\n", (double)s / gib, t1 - t0,
                   cudaGetErrorString(e), t2 - t1);
        }
    const size_t total = 9 * gib / 2;
    for (int rep = 0; rep < 2; rep++)
        for (int nt : {1, 2, 4, 8}) {
            std::vector<void *> p(nt, nullptr);
            std::vector<std::thread> th;
            double t0 = now();
            for (int i = 0; i < nt; i++)
                th.emplace_back([&, i] { cudaHostAlloc(&p[i], total / nt, cudaHostAllocPortable); });
            for (auto &t : th) t.join();
            double t1 = now();
            th.clear();
            for (int i = 0; i < nt; i++) th.emplace_back([&, i] { cudaFreeHost(p[i]); });
            for (auto &t : th) t.join();
            double t2 = now();
            printf("%.2f GiB in %d thread(s) at once: alloc %.3f s, free %.3f s\n", (double)total / gib, nt, t1 - t0,
                   t2 - t1);
        }
    return 0;
}
