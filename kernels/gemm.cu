/* SPDX-License-Identifier: MIT */
/*
 * gemm.cu: libooc_gemm's own tile GEMM kernels behind the C launchers of
 * kernels.h: DGEMM on the FP64 tensor cores (mma.sync m16n8k16 .f64 on
 * sm_90, the same fragments as eight m8n8k4 on sm_80) and SGEMM on the FP32
 * FMA pipes. Column-major, any m, n, k and leading dimensions (edge tiles are
 * zero-filled on load and guarded on store), op N or T for either operand,
 * alpha and beta (beta == 0 never reads C).
 *
 * How they are fast (method and figures: docs/PERFORMANCE.md):
 *  - operand tiles are kept in shared memory in the orientation they have in
 *    global memory, so every global load is a 16-byte vector (cp.async for
 *    DGEMM, STAGES deep; registers for SGEMM, two shared stages);
 *  - the k order inside a 16-slice and the row (column) order inside a warp
 *    tile are permuted so that each thread's mma fragment is contiguous in
 *    shared memory: fragments load as 16-byte ld.shared, and an XOR swizzle
 *    of the 16-byte chunks keeps every quarter-warp conflict-free;
 *  - blocks are ordered in groups of 8 tile columns for L2 reuse.
 * Unaligned operands (a pointer not 16-byte aligned, an odd leading
 * dimension) take the same kernels with element-wise loads (VEC = false).
 * Must not synchronize, allocate or print: the pipeline owns the streams.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels.h"

namespace {

/* cp.async of 16 bytes of which `bytes` (0, 8 or 16) are read; the rest of the slot is zero-filled */
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int bytes)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
}

/* cp.async of 16 bytes, all read (interior tiles) */
__device__ __forceinline__ void cp_async16_full(void *smem, const void *gmem)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}

/* cp.async of one double; pred false zero-fills the slot without reading global memory */
__device__ __forceinline__ void cp_async8(void *smem, const void *gmem, bool pred)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    int src = pred ? 8 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(gmem), "r"(src) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

/* two adjacent doubles from shared memory (16-byte aligned), as volatile asm
 * so that the fragment loads stay where the kernel puts them relative to the
 * mma instructions (the compiler would hoist them all and run out of registers) */
__device__ __forceinline__ void lds2(double &x, double &y, const double *p)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ld.shared.v2.f64 {%0,%1}, [%2];\n" : "=d"(x), "=d"(y) : "r"(s) : "memory");
}

/* Block index -> (tile row, tile column), in groups of GROUP tile columns:
 * consecutive blocks share A's row tiles and a few of B's column tiles. */
template <int GROUP>
__device__ __forceinline__ void tile_of(int nbm, int nbn, int &tm, int &tn)
{
    const int bid = blockIdx.x, per = GROUP * nbm, first = (bid / per) * GROUP;
    const int gsz = min(nbn - first, GROUP), r = bid % per;
    tn = first + r % gsz;
    tm = r / gsz;
}

/* ------------------------------------------------------------------------ */
/* DGEMM. Shared tiles of R rows (m for A, n for B) by DBK = 16 k, in one of
 * two layouts, in units of 16-byte chunks (2 doubles):
 *  KC, k contiguous ([R][16], op T for A, op N for B): chunk (r, kk/2) is
 *     stored at r*8 + ((kk/2) ^ (r & 1)): rows g and g+1 of a quarter-warp
 *     land in opposite bank halves;
 *  RC, r contiguous ([16][R], op N for A, op T for B): chunk (kk, r/2) at
 *     kk*R/2 + ((r/2) ^ 2*(kk/4 % 4)).
 * Fragment order (mma m16n8k16 .f64): the thread with tg = lane%4 holds k
 * positions tg, tg+4, tg+8, tg+12; we let position 4q+tg stand for k =
 * 4tg+q, so its four k are adjacent (one KC row = two 16-byte loads). In
 * an RC tile, fragment row (column) g + 8h of the 16-row tile i stands for
 * row 16i + 2g + h, so one 16-byte load gives both h. Every quarter-warp
 * (g in {2p, 2p+1}, tg in 0..3) then reads 8 different bank groups, and
 * each thread's fragment offsets differ by constants (immediate offsets). */
constexpr int DBK = 16;

/* offset in doubles of element (r, kk) of a tile with R rows */
template <int R, bool KC>
__device__ __forceinline__ int doff(int r, int kk)
{
    if (KC) return r * DBK + ((((kk >> 1) ^ (r & 1))) << 1) + (kk & 1);
    return kk * R + ((((r >> 1) ^ (((kk >> 2) & 3) << 1))) << 1) + (r & 1);
}

/* global -> shared, one k-slice of one operand: rows r0.. (< rmax), k k0..
 * (< kmax). Thread t copies chunks t, t + THREADS, ...; FULL: the slice is
 * wholly inside the matrix and 16-byte aligned (no bounds, one address
 * step per chunk); otherwise edges are zero-filled. */
template <int R, bool KC, int THREADS, bool VEC, bool FULL>
__device__ __forceinline__ void dload(double *s, const double *__restrict__ P, int ld, int r0, int rmax, int k0,
                                      int kmax, int t)
{
    constexpr int PER = R * DBK / 2 / THREADS;
    static_assert(PER * THREADS == R * DBK / 2, "tile loads must split evenly");
    static_assert(KC ? THREADS % 8 == 0 : THREADS % (R / 2) == 0, "a pass covers whole rows");
    /* chunk j of this thread: KC row t/8 + j*THREADS/8, k 2(t%8); RC k t/(R/2) + j*THREADS/(R/2), row 2(t%(R/2)) */
    constexpr int DJ = KC ? THREADS / 8 : THREADS / (R / 2);
    const int r = KC ? t >> 3 : (t % (R / 2)) << 1, kk = KC ? (t & 7) << 1 : t / (R / 2);
    if constexpr (FULL) {
        const double *g = KC ? P + (size_t)(r0 + r) * ld + k0 + kk : P + (size_t)(k0 + kk) * ld + r0 + r;
        const size_t step = (size_t)DJ * ld;
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const int o = KC ? doff<R, true>(r + j * DJ, kk) : doff<R, false>(r, kk + j * DJ);
            cp_async16_full(s + o, g + j * step);
        }
    } else {
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const int rj = KC ? r + j * DJ : r, kj = KC ? kk : kk + j * DJ;
            const int gr = r0 + rj, gk = k0 + kj;
            int nv = KC ? (gr < rmax ? min(2, kmax - gk) : 0) : (gk < kmax ? min(2, rmax - gr) : 0);
            nv = max(nv, 0);
            const double *g = KC ? P + (size_t)gr * ld + gk : P + (size_t)gk * ld + gr;
            double *d = s + doff<R, KC>(rj, kj);
            if (VEC) {
                cp_async16(d, nv > 0 ? g : P, nv * 8);
            } else {
                cp_async8(d, nv > 0 ? g : P, nv > 0);
                cp_async8(d + 1, nv > 1 ? g + 1 : P, nv > 1);
            }
        }
    }
}

/* acc += a * b over one 16x8x16 fragment: one m16n8k16 on sm_90, else the
 * same fragments as eight m8n8k4 (a[2q+h]: row g+8h, k position q; b[q]) */
__device__ __forceinline__ void mma16816(double (&acc)[4], const double (&a)[8], const double (&b)[4])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
                 : "+d"(acc[0]), "+d"(acc[1]), "+d"(acc[2]), "+d"(acc[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                   "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
#pragma unroll
    for (int q = 0; q < 4; q++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                         : "+d"(acc[2 * h]), "+d"(acc[2 * h + 1])
                         : "d"(a[2 * q + h]), "d"(b[q]));
#endif
}

/* STAGES shared stages of KS 16-slices each: a barrier per 16*KS of k */
template <int BM, int BN, int WM, int WN, int STAGES, int KS>
struct dcfg {
    static constexpr int threads = 32 * WM * WN;
    static constexpr int smem = STAGES * KS * DBK * (BM + BN) * (int)sizeof(double);
};

template <int BM, int BN, int WM, int WN, int STAGES, int KS, bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__(32 * WM * WN)
dgemm_kernel(int m, int n, int k, double alpha, const double *__restrict__ A, int lda,
             const double *__restrict__ B, int ldb, double beta, double *__restrict__ C, int ldc)
{
    constexpr int THREADS = 32 * WM * WN, WTM = BM / WM, WTN = BN / WN, MI = WTM / 16, NJ = WTN / 8;
    static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tiles of 16x16 multiples");
    static_assert(BM % 16 == 0 && BN % 16 == 0, "RC rows of whole 128-byte lines");
    extern __shared__ __align__(128) double smem[];
    double *As = smem;                          /* [STAGES * KS][BM * DBK] */
    double *Bs = smem + STAGES * KS * DBK * BM; /* [STAGES * KS][BN * DBK] */

    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, g = lane >> 2, tg = lane & 3;
    int tm, tn;
    tile_of<8>((m + BM - 1) / BM, (n + BN - 1) / BN, tm, tn);
    const int bm = tm * BM, bn = tn * BN;
    const int wm = (warp % WM) * WTM, wn = (warp / WM) * WTN;
    const int nk = (k + KS * DBK - 1) / (KS * DBK);

    const bool afull = VEC && bm + BM <= m, bfull = VEC && bn + BN <= n;
    auto load = [&](int stage, int k0) {
        const bool kfull = k0 + KS * DBK <= k;
#pragma unroll
        for (int s = 0; s < KS; s++) {
            double *as = As + (stage * KS + s) * DBK * BM, *bs = Bs + (stage * KS + s) * DBK * BN;
            const int ks = k0 + s * DBK;
            if (afull && kfull) dload<BM, TA, THREADS, VEC, true>(as, A, lda, bm, m, ks, k, t);
            else dload<BM, TA, THREADS, VEC, false>(as, A, lda, bm, m, ks, k, t);
            if (bfull && kfull) dload<BN, !TB, THREADS, VEC, true>(bs, B, ldb, bn, n, ks, k, t);
            else dload<BN, !TB, THREADS, VEC, false>(bs, B, ldb, bn, n, ks, k, t);
        }
    };

    /* fragments from shared memory (16-byte loads; lds2 keeps program order) */
    auto load_b = [&](const double *bs, double (&b)[NJ][4]) {
        if (!TB) { /* KC: column wn + 8j + g, k 4tg .. 4tg+3 */
#pragma unroll
            for (int j = 0; j < NJ; j++) {
                const int r = wn + 8 * j + g;
                lds2(b[j][0], b[j][1], bs + doff<BN, true>(r, 4 * tg));
                lds2(b[j][2], b[j][3], bs + doff<BN, true>(r, 4 * tg + 2));
            }
        } else { /* RC: fragment column g of tiles 2c, 2c+1: columns wn + 16c + 2g (+1), one k per load */
#pragma unroll
            for (int q = 0; q < 4; q++)
#pragma unroll
                for (int c = 0; c < NJ / 2; c++)
                    lds2(b[2 * c][q], b[2 * c + 1][q], bs + doff<BN, false>(wn + 16 * c + 2 * g, 4 * tg + q));
        }
    };
    auto load_a = [&](const double *as, int i, double (&a)[8]) {
        if (TA) { /* KC: rows wm + 16i + g + 8h */
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = wm + 16 * i + g + 8 * h;
                lds2(a[0 + h], a[2 + h], as + doff<BM, true>(r, 4 * tg));
                lds2(a[4 + h], a[6 + h], as + doff<BM, true>(r, 4 * tg + 2));
            }
        } else { /* RC: fragment rows g, g+8 of tile i: rows wm + 16i + 2g (+1) */
#pragma unroll
            for (int q = 0; q < 4; q++)
                lds2(a[2 * q], a[2 * q + 1], as + doff<BM, false>(wm + 16 * i + 2 * g, 4 * tg + q));
        }
    };

    double acc[MI][NJ][4];
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NJ; j++)
#pragma unroll
            for (int c = 0; c < 4; c++) acc[i][j][c] = 0.0;

    /* prologue: STAGES-1 slices in flight (empty groups keep the count uniform) */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk) load(s, s * KS * DBK);
        cp_async_commit();
    }
    for (int kt = 0; kt < nk; kt++) {
        cp_async_wait<STAGES - 2>();
        __syncthreads(); /* slice kt visible to all; slice kt-1's stage free to refill */
        {
            const int nx = kt + STAGES - 1;
            if (nx < nk) load(nx % STAGES, nx * KS * DBK);
            cp_async_commit();
        }
#pragma unroll
        for (int sub = 0; sub < KS; sub++) {
            const int slice = (kt % STAGES) * KS + sub;
            const double *as = As + slice * DBK * BM, *bs = Bs + slice * DBK * BN;
            double b[NJ][4], a[2][8];
            load_b(bs, b);
            load_a(as, 0, a[0]);
#pragma unroll
            for (int i = 0; i < MI; i++) {
                if (i + 1 < MI) load_a(as, i + 1, a[(i + 1) & 1]); /* in flight while tile i multiplies */
#pragma unroll
                for (int j = 0; j < NJ; j++) mma16816(acc[i][j], a[i & 1], b[j]);
            }
        }
    }
    cp_async_wait<0>();

    /* accumulator c of fragment (i, j): fragment row g + 8(c/2), fragment column 2tg + c%2 */
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int r = bm + wm + 16 * i + (TA ? g + 8 * (c >> 1) : 2 * g + (c >> 1));
            if (r >= m) continue;
#pragma unroll
            for (int j = 0; j < NJ; j++) {
                const int f = 2 * tg + (c & 1);
                const int col = bn + wn + (TB ? 16 * (j >> 1) + 2 * f + (j & 1) : 8 * j + f);
                if (col >= n) continue;
                double *p = C + (size_t)col * ldc + r;
                *p = beta == 0.0 ? alpha * acc[i][j][c] : alpha * acc[i][j][c] + beta * *p;
            }
        }
}

template <int BM, int BN, int WM, int WN, int STAGES, int KS, bool TA, bool TB, bool VEC>
int dlaunch1(cudaStream_t s, int m, int n, int k, double alpha, const double *A, int lda, const double *B,
             int ldb, double beta, double *C, int ldc)
{
    using cfg = dcfg<BM, BN, WM, WN, STAGES, KS>;
    auto kern = dgemm_kernel<BM, BN, WM, WN, STAGES, KS, TA, TB, VEC>;
    if (cfg::smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem);
        if (e != cudaSuccess) return (int)e;
    }
    const long blocks = (long)((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    if (blocks > 0x7fffffffL) return (int)cudaErrorInvalidValue;
    kern<<<(unsigned)blocks, cfg::threads, cfg::smem, s>>>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return (int)cudaGetLastError();
}

/* 16-byte loads need 16-byte aligned operands and even leading dimensions */
static bool vec_ok(const void *p, int ld, int elems)
{
    return ((uintptr_t)p & 15) == 0 && ld % elems == 0;
}

template <int BM, int BN, int WM, int WN, int STAGES, int KS>
int dlaunch(void *stream, int ta, int tb, int m, int n, int k, double alpha, const double *A, int lda,
            const double *B, int ldb, double beta, double *C, int ldc)
{
    if (m <= 0 || n <= 0) return 0;
    cudaStream_t s = (cudaStream_t)stream;
#define OOC_DL(TA, TB, V) dlaunch1<BM, BN, WM, WN, STAGES, KS, TA, TB, V>(s, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
    if (vec_ok(A, lda, 2) && vec_ok(B, ldb, 2)) {
        if (!ta && !tb) return OOC_DL(false, false, true);
        if (!ta) return OOC_DL(false, true, true);
        if (!tb) return OOC_DL(true, false, true);
        return OOC_DL(true, true, true);
    }
    if (!ta && !tb) return OOC_DL(false, false, false);
    if (!ta) return OOC_DL(false, true, false);
    if (!tb) return OOC_DL(true, false, false);
    return OOC_DL(true, true, false);
#undef OOC_DL
}

/* ------------------------------------------------------------------------ */
/* SGEMM: 128x128 block tile, k-slice SBK, 256 threads of 8x8 each (two 4x4
 * quadrants 64 apart, so the float4 shared reads of a warp do not collide).
 * Shared tiles are [SBK][128] (m or n contiguous) with the 16-byte chunk c
 * of row kk stored at c ^ ((kk/4 % 4) * 2); tiles whose global layout is k
 * contiguous are transposed through registers (16-byte global load, four
 * 4-byte shared stores that this swizzle keeps conflict-free). The next
 * slice is loaded into registers while the current one is multiplied. */
constexpr int SBM = 128, STHREADS = 256;

__device__ __forceinline__ int soff(int kk, int r)
{
    return kk * SBM + ((((r >> 2) ^ (((kk >> 2) & 3) << 1))) << 2) + (r & 3);
}

/* one operand's slice in registers: PER chunks of 4 floats per thread */
template <int SBK, bool KC, bool VEC>
struct sslice {
    static constexpr int PER = SBM * SBK / 4 / STHREADS;
    float4 v[PER];

    /* rows r0.. (< rmax), k k0.. (< kmax); full: the slice is wholly inside
     * the matrix (no bounds, one address step per chunk) */
    __device__ __forceinline__ void load(const float *__restrict__ P, int ld, int r0, int rmax, int k0, int kmax, int t,
                                         bool full)
    {
        /* chunk j of this thread: KC row t/(SBK/4) + j*DJ, k 4(t%(SBK/4)); RC k t/(SBM/4) + j*DJ, row 4(t%(SBM/4)) */
        constexpr int DJ = KC ? STHREADS / (SBK / 4) : STHREADS / (SBM / 4);
        const int r = KC ? t / (SBK / 4) : (t % (SBM / 4)) * 4, kk = KC ? (t % (SBK / 4)) * 4 : t / (SBM / 4);
        if (VEC && full) {
            const float *g = KC ? P + (size_t)(r0 + r) * ld + k0 + kk : P + (size_t)(k0 + kk) * ld + r0 + r;
            const size_t step = (size_t)DJ * ld;
#pragma unroll
            for (int j = 0; j < PER; j++) v[j] = __ldg(reinterpret_cast<const float4 *>(g + j * step));
            return;
        }
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const int gr = r0 + (KC ? r + j * DJ : r), gk = k0 + (KC ? kk : kk + j * DJ);
            const float *g = KC ? P + (size_t)gr * ld + gk : P + (size_t)gk * ld + gr;
            const int nv = KC ? (gr < rmax ? kmax - gk : 0) : (gk < kmax ? rmax - gr : 0);
            if (VEC && nv >= 4) {
                v[j] = __ldg(reinterpret_cast<const float4 *>(g));
            } else {
                v[j].x = nv > 0 ? __ldg(g) : 0.0f;
                v[j].y = nv > 1 ? __ldg(g + 1) : 0.0f;
                v[j].z = nv > 2 ? __ldg(g + 2) : 0.0f;
                v[j].w = nv > 3 ? __ldg(g + 3) : 0.0f;
            }
        }
    }

    __device__ __forceinline__ void store(float *s, int t) const
    {
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const int idx = t + j * STHREADS;
            if (KC) {
                const int r = idx / (SBK / 4), kk = (idx % (SBK / 4)) * 4;
                s[soff(kk, r)] = v[j].x;
                s[soff(kk + 1, r)] = v[j].y;
                s[soff(kk + 2, r)] = v[j].z;
                s[soff(kk + 3, r)] = v[j].w;
            } else {
                const int kk = idx / (SBM / 4), r = (idx % (SBM / 4)) * 4;
                *reinterpret_cast<float4 *>(s + soff(kk, r)) = v[j];
            }
        }
    }
};

template <int SBK, int MINB, bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__(STHREADS, MINB)
sgemm_kernel(int m, int n, int k, float alpha, const float *__restrict__ A, int lda,
             const float *__restrict__ B, int ldb, float beta, float *__restrict__ C, int ldc)
{
    __shared__ __align__(16) float As[2][SBK * SBM];
    __shared__ __align__(16) float Bs[2][SBK * SBM];

    const int t = threadIdx.x, tx = t & 15, ty = t >> 4;
    int tm, tn;
    tile_of<8>((m + SBM - 1) / SBM, (n + SBM - 1) / SBM, tm, tn);
    const int bm = tm * SBM, bn = tn * SBM;
    const int nk = (k + SBK - 1) / SBK;

    sslice<SBK, TA, VEC> ra;
    sslice<SBK, !TB, VEC> rb;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;

    const bool afull = bm + SBM <= m, bfull = bn + SBM <= n;
    if (nk > 0) {
        ra.load(A, lda, bm, m, 0, k, t, afull && SBK <= k);
        rb.load(B, ldb, bn, n, 0, k, t, bfull && SBK <= k);
        ra.store(As[0], t);
        rb.store(Bs[0], t);
    }
    __syncthreads();
    for (int kt = 0; kt < nk; kt++) {
        const int s = kt & 1;
        if (kt + 1 < nk) {
            const bool kfull = (kt + 2) * SBK <= k;
            ra.load(A, lda, bm, m, (kt + 1) * SBK, k, t, afull && kfull);
            rb.load(B, ldb, bn, n, (kt + 1) * SBK, k, t, bfull && kfull);
        }
        const float *as = As[s], *bs = Bs[s];
#pragma unroll
        for (int kk = 0; kk < SBK; kk++) {
            float a[8], b[8];
            float4 v;
            v = *reinterpret_cast<const float4 *>(as + soff(kk, ty * 4));
            a[0] = v.x; a[1] = v.y; a[2] = v.z; a[3] = v.w;
            v = *reinterpret_cast<const float4 *>(as + soff(kk, 64 + ty * 4));
            a[4] = v.x; a[5] = v.y; a[6] = v.z; a[7] = v.w;
            v = *reinterpret_cast<const float4 *>(bs + soff(kk, tx * 4));
            b[0] = v.x; b[1] = v.y; b[2] = v.z; b[3] = v.w;
            v = *reinterpret_cast<const float4 *>(bs + soff(kk, 64 + tx * 4));
            b[4] = v.x; b[5] = v.y; b[6] = v.z; b[7] = v.w;
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (kt + 1 < nk) { /* the other stage was last read before the previous barrier */
            ra.store(As[s ^ 1], t);
            rb.store(Bs[s ^ 1], t);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int r = bm + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
        if (r >= m) continue;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int col = bn + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
            if (col >= n) continue;
            float *p = C + (size_t)col * ldc + r;
            *p = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *p;
        }
    }
}

template <int SBK, int MINB>
int slaunch(void *stream, int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda,
            const float *B, int ldb, float beta, float *C, int ldc)
{
    if (m <= 0 || n <= 0) return 0;
    const long blocks = (long)((m + SBM - 1) / SBM) * ((n + SBM - 1) / SBM);
    if (blocks > 0x7fffffffL) return (int)cudaErrorInvalidValue;
    cudaStream_t s = (cudaStream_t)stream;
#define OOC_SL(TA, TB, V) \
    sgemm_kernel<SBK, MINB, TA, TB, V><<<(unsigned)blocks, STHREADS, 0, s>>>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
    if (vec_ok(A, lda, 4) && vec_ok(B, ldb, 4)) {
        if (!ta && !tb) OOC_SL(false, false, true);
        else if (!ta) OOC_SL(false, true, true);
        else if (!tb) OOC_SL(true, false, true);
        else OOC_SL(true, true, true);
    } else {
        if (!ta && !tb) OOC_SL(false, false, false);
        else if (!ta) OOC_SL(false, true, false);
        else if (!tb) OOC_SL(true, false, false);
        else OOC_SL(true, true, false);
    }
#undef OOC_SL
    return (int)cudaGetLastError();
}

} // namespace

/* Variants (tile shapes) the benchmark compares; the plain launchers use
 * variant 0, the fastest measured (docs/PERFORMANCE.md has the table). */
extern "C" __attribute__((visibility("hidden"))) int
ooc_kernel_dgemm_variant(int variant, void *stream, int ta, int tb, int m, int n, int k, double alpha,
                         const double *A, int lda, const double *B, int ldb, double beta, double *C, int ldc)
{
    switch (variant) {
    case 0: return dlaunch<64, 128, 1, 4, 2, 2>(stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    case 1: return dlaunch<64, 128, 1, 4, 4, 1>(stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    case 2: return dlaunch<64, 128, 1, 4, 3, 1>(stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    case 3: return dlaunch<128, 64, 2, 2, 2, 2>(stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    case 4: return dlaunch<128, 128, 2, 4, 3, 2>(stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    case 5: return dlaunch<128, 128, 2, 4, 2, 2>(stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" __attribute__((visibility("hidden"))) int
ooc_kernel_sgemm_variant(int variant, void *stream, int ta, int tb, int m, int n, int k, float alpha,
                         const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    switch (variant) {
    case 0: return slaunch<16, 1>(stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    case 1: return slaunch<16, 2>(stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    case 2: return slaunch<8, 2>(stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" __attribute__((visibility("hidden"))) int
ooc_kernel_dgemm(void *stream, int ta, int tb, int m, int n, int k, double alpha, const double *A, int lda,
                 const double *B, int ldb, double beta, double *C, int ldc)
{
    return ooc_kernel_dgemm_variant(0, stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

extern "C" __attribute__((visibility("hidden"))) int
ooc_kernel_sgemm(void *stream, int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc)
{
    return ooc_kernel_sgemm_variant(0, stream, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

extern "C" __attribute__((visibility("hidden"))) int ooc_kernel_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}
