// SPDX-License-Identifier: MIT
//
// transpose_probe.cu: a measurement program, not part of the library. It
// measures what session 41 (docs/PERFORMANCE.md) decided from: FP64 tiles
// of cuBLAS's op pair NT of odd sizes as the pipeline had them (packed;
// padded and split as lib/backend_cuda.c c_gemm splits) against the same
// multiply with its second operand transposed on the device first (NN,
// padded and split: backend.h ooc_resident_transposed), or its first (TT),
// and the transposes (cuBLAS geam, in 8 chunks; the library uses its own
// kernel, kernels/helpers.cu, hidden behind op(B)'s upload). Random
// operands on the device, best of 3 after one warm-up run.
//
// Build: nvcc -O2 -arch=sm_90 -o transpose_probe kernels/transpose_probe.cu -lcublas
// Run:   ./transpose_probe [m n k ...]   (the shapes below, or at most 14 given;
//        needs ~64 GiB of device memory; ~10 s on an H200)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "%s: %d\n", #x, (int)s_); exit(1);} } while (0)
__global__ void fill(double *p, size_t n, unsigned s) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)(i * 2654435761u) ^ s; x ^= x << 13; x ^= x >> 17; x ^= x << 5; p[i] = (double)(x & 0xffff) / 65536.0 - 0.5; } }
static cublasHandle_t h; static double *dA, *dB, *dBt, *dC; static cudaEvent_t e0, e1;
static long rup(long x, long a) { return (x + a - 1) / a * a; }
static const double one = 1, zero = 0;
/* C = X op(Y): mode 0 NT packed; 1 NT padded+split; 2 NN (Y transposed) padded+split; 3 NN packed */
static void call(int mode, int m, int n, int k) {
  long ldx = mode == 0 || mode == 3 ? m : rup(m, 2), ldc = ldx;
  if (mode <= 1) {
    long ldy = mode == 0 ? n : rup(n, 2);
    if (mode == 0) { CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, dA, ldx, dB, ldy, &zero, dC, ldc)); return; }
    int mm = m - m % 2, km = k - k % 2;
    CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, mm, n, km, &one, dA, ldx, dB, ldy, &zero, dC, ldc));
    if (m % 2) CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 1, n, km, &one, dA + mm, ldx, dB, ldy, &zero, dC + mm, ldc));
    if (k % 2) CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, 1, &one, dA + km * ldx, ldx, dB + km * ldy, ldy, &one, dC, ldc));
  } else if (mode >= 4) {
    long ldxt = mode == 5 ? k : rup(k, 2), ldy = mode == 5 ? n : rup(n, 2); ldc = mode == 5 ? m : rup(m, 2);
    if (mode == 5) { CB(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_T, m, n, k, &one, dBt, ldxt, dB, ldy, &zero, dC, ldc)); return; }
    int mm = m - m % 2, km = k - k % 2;
    CB(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_T, mm, n, km, &one, dBt, ldxt, dB, ldy, &zero, dC, ldc));
    if (m % 2) CB(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_T, 1, n, km, &one, dBt + mm * ldxt, ldxt, dB, ldy, &zero, dC + mm, ldc));
    if (k % 2) CB(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_T, m, n, 1, &one, dBt + km, ldxt, dB + km * ldy, ldy, &one, dC, ldc));
  } else {
    long ldy = mode == 3 ? k : rup(k, 2);
    if (mode == 3) { CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, ldx, dBt, ldy, &zero, dC, ldc)); return; }
    int mm = m - m % 2, km = k - k % 2;
    CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, mm, n, km, &one, dA, ldx, dBt, ldy, &zero, dC, ldc));
    if (m % 2) CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, n, km, &one, dA + mm, ldx, dBt, ldy, &zero, dC + mm, ldc));
    if (k % 2) CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, 1, &one, dA + km * ldx, ldx, dBt + km, ldy, &one, dC, ldc));
  }
}
static float timeit(int mode, int m, int n, int k) {
  float best = 1e30f;
  for (int r = 0; r < 4; r++) {
    CK(cudaEventRecord(e0)); call(mode, m, n, k); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (r > 0 && ms < best) best = ms; }
  return best;
}
static float transpose_ms(int n, int k, int chunks) { /* Y n x k (ld n) -> Yt k x n (ld rup(k,2)), in chunks of Y's columns */
  float best = 1e30f; long ldt = rup(k, 2);
  for (int r = 0; r < 4; r++) {
    CK(cudaEventRecord(e0));
    for (int c = 0; c < chunks; c++) {
      int l0 = (int)((long)k * c / chunks), l1 = (int)((long)k * (c + 1) / chunks);
      CB(cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, l1 - l0, n, &one, dB + (long)l0 * n, n, &zero, dBt + l0, ldt, dBt + l0, ldt));
    }
    CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (r > 0 && ms < best) best = ms; }
  return best;
}
int main(int argc, char **argv) {
  size_t big = (size_t)2 << 30; /* 2 Gi doubles each = 16 GiB */
  CK(cudaMalloc(&dA, big * 8)); CK(cudaMalloc(&dB, big * 8)); CK(cudaMalloc(&dBt, big * 8)); CK(cudaMalloc(&dC, big * 8));
  fill<<<1024, 256>>>(dA, big, 1); fill<<<1024, 256>>>(dB, big, 2); fill<<<1024, 256>>>(dBt, big, 3); fill<<<1024, 256>>>(dC, big, 4);
  CK(cudaDeviceSynchronize()); CB(cublasCreate(&h)); CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  for (int i = 0; i < 10; i++) call(3, 8192, 8192, 8192);
  int sh[][3] = {{8192, 6509, 2765}, {8192, 6509, 11061}, {2304, 6509, 11061}, {9001, 7001, 15001}, {4096, 7001, 15001},
                 {12001, 12001, 4001}, {6001, 14003, 9003}, {8192, 14003, 9003}, {4097, 8191, 12289}, {8192, 8191, 8191},
                 {8192, 8192, 8192}, {2048, 2089, 24461}, {7104, 755, 9013}, {2048, 24461, 2089}};
  printf("FP64 ms (TFLOP/s). cuBLAS pair NT, m x n x k; col-major pipeline: X = A block (m), Y = resident (n); row-major pipeline: X resident (m), Y = the block (n)\n");
  printf("  NT packed | NT pad+split | NN(Y transposed) pad+split | NN packed | TT(X transposed) pad+split | TT packed | transpose Y (8 chunks) | transpose X | NT/NN | NT/TT\n");
  unsigned count = sizeof sh / sizeof sh[0];
  if (argc > 1) { /* shapes given: m n k m n k ... */
    count = 0;
    for (int a = 1; a + 2 < argc && count < sizeof sh / sizeof sh[0]; a += 3, count++)
      sh[count][0] = atoi(argv[a]), sh[count][1] = atoi(argv[a + 1]), sh[count][2] = atoi(argv[a + 2]);
  }
  for (unsigned c = 0; c < count; c++) {
    int m = sh[c][0], n = sh[c][1], k = sh[c][2];
    double fl = 2.0 * m * n * k / 1e9;
    float t0 = timeit(0, m, n, k), t1 = timeit(1, m, n, k), t2 = timeit(2, m, n, k), t3 = timeit(3, m, n, k), t4 = timeit(4, m, n, k), t5 = timeit(5, m, n, k);
    float tt = transpose_ms(n, k, 8), tx = transpose_ms(m, k, 8);
    printf("%5d x %5d x %5d: %7.3f (%4.1f) | %7.3f (%4.1f) | %7.3f (%4.1f) | %7.3f (%4.1f) | %7.3f (%4.1f) | %7.3f (%4.1f) | %6.3f | %6.3f | %.2f | %.2f\n", m, n, k,
           t0, fl / t0, t1, fl / t1, t2, fl / t2, t3, fl / t3, t4, fl / t4, t5, fl / t5, tt, tx, t0 / t2, t0 / t4);
    fflush(stdout);
  }
  return 0;
}
