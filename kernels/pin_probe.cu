// SPDX-License-Identifier: MIT
//
// pin_probe.cu: a measurement program, not part of the library. How long
// pinning host memory takes (cudaHostAlloc, as the pipeline's staging is
// allocated, per device, in ooc_api_prepare) and freeing it, by size, and
// whether pinning one total in several threads at once is faster
// (docs/PERFORMANCE.md, session 21: "one process on two GPUs"); and
// (`./pin_probe register`) whether memory mapped by us and registered with
// cudaHostRegister pins faster, with or without transparent huge pages, and
// copies as fast (session 22).
//
// Build: nvcc -O2 -std=c++17 -o pin_probe kernels/pin_probe.cu
// Run:   ./pin_probe [register]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <sys/mman.h>

#include <cuda_runtime.h>

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/* Pin s bytes by one method, copy 1 GiB of it to the device and back, free
 * it; print each step's time. */
static void register_case(const char *how, size_t s, void *dev)
{
    const size_t gib = (size_t)1 << 30;
    void *p = nullptr;
    double t0 = now(), t1 = t0, t2 = t0;
    cudaError_t e = cudaSuccess;
    if (strcmp(how, "cudaHostAlloc") == 0) {
        e = cudaHostAlloc(&p, s, cudaHostAllocPortable);
        t1 = t2 = now();
    } else {
        p = mmap(nullptr, s, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (strstr(how, "populate") ? MAP_POPULATE : 0), -1, 0);
        if (p == MAP_FAILED) {
            printf("%s: mmap failed\n", how);
            return;
        }
        if (strstr(how, "huge")) madvise(p, s, MADV_HUGEPAGE);
        if (strstr(how, "touch-mt")) { /* each of 8 threads writes a slice: the page faults in parallel */
            std::vector<std::thread> th;
            for (int i = 0; i < 8; i++)
                th.emplace_back([=] { memset((char *)p + s / 8 * i, 0, i == 7 ? s - s / 8 * 7 : s / 8); });
            for (auto &t : th) t.join();
        } else if (strstr(how, "touch")) {
            memset(p, 0, s);
        }
        t1 = now();
        e = cudaHostRegister(p, s, cudaHostRegisterPortable);
        t2 = now();
    }
    double up = 0, down = 0;
    if (e == cudaSuccess) {
        size_t n = s < gib ? s : gib;
        memset(p, 1, n);
        double c0 = now();
        cudaMemcpy(dev, p, n, cudaMemcpyHostToDevice);
        double c1 = now();
        cudaMemcpy(p, dev, n, cudaMemcpyDeviceToHost);
        double c2 = now();
        up = (double)n / (c1 - c0) / 1e9;
        down = (double)n / (c2 - c1) / 1e9;
    }
    double f0 = now();
    if (strcmp(how, "cudaHostAlloc") == 0) {
        cudaFreeHost(p);
    } else {
        cudaHostUnregister(p);
        munmap(p, s);
    }
    double f1 = now();
    printf("%-22s %.2f GiB: map+touch %.3f s, pin %.3f s, all %.3f s (%s); H2D %.1f GB/s, D2H %.1f GB/s; free %.3f s\n",
           how, (double)s / gib, t1 - t0, t2 - t1, t2 - t0, cudaGetErrorString(e), up, down, f1 - f0);
}

int main(int argc, char **argv)
{
    cudaFree(0);
    if (argc > 1 && strcmp(argv[1], "register") == 0) {
        const size_t gib = (size_t)1 << 30;
        void *dev = nullptr;
        cudaMalloc(&dev, gib);
        const char *hows[] = {"cudaHostAlloc", "register", "register-touch", "register-populate",
                              "register-huge", "register-huge-touch", "register-huge-touch-mt",
                              "register-touch-mt"};
        for (int rep = 0; rep < 2; rep++)
            for (const char *how : hows) register_case(how, 9 * gib / 4, dev);
        cudaFree(dev);
        return 0;
    }
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
