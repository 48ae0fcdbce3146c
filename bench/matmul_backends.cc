// matmul_backends.cc — float32 GEMM throughput of the two candidate MatMul
// backends for PDK, measured the way the plugin would call them:
//
//   eigen    Eigen Tensor contraction (row-major TensorMaps, contract a.dim1 with
//            b.dim0) evaluated on an Eigen::ThreadPoolDevice with N threads,
//            the same construction as src/compute/thread_pool.cc;
//   openblas cblas_sgemm (CblasRowMajor, NoTrans/NoTrans) from Debian's
//            libopenblas0-pthread, with openblas_set_num_threads(N): OpenBLAS
//            parallelizes over its own pthreads;
//   sharded  cblas_sgemm with openblas_set_num_threads(1), called on row
//            blocks of A/C, one block per thread of the Eigen::ThreadPoolDevice
//            (the caller runs block 0): OpenBLAS's kernel, the device's threads.
//
// C[m,n] = A[m,k] * B[k,n]; GFLOP/s = 2*m*n*k / seconds / 1e9. Each size is
// warmed up, then timed as the best of 5 trials of enough repetitions to last
// >= 0.2 s. Results are checked against each other (max relative difference).
//
// Not part of the CMake build. Build and run by hand:
//   g++ -O3 -march=native -std=c++17 -DEIGEN_USE_THREADS -DEIGEN_MAX_ALIGN_BYTES=64 \
//       -I/usr/include/eigen3 -I/usr/include/x86_64-linux-gnu/openblas-pthread \
//       bench/matmul_backends.cc -o /tmp/matmul_backends -lopenblas -lpthread
//   /tmp/matmul_backends [threads]        (default: 2)
#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

extern "C" void openblas_set_num_threads(int);

namespace {

using Clock = std::chrono::steady_clock;
using Mat = Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor, Eigen::DenseIndex>>;
using CMat = Eigen::TensorMap<Eigen::Tensor<const float, 2, Eigen::RowMajor, Eigen::DenseIndex>>;

// Best seconds per call of fn over 5 trials.
double TimeIt(const std::function<void()>& fn) {
  fn();  // warm-up (thread start, page faults, packing buffers)
  int reps = 1;
  for (;;) {
    auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s >= 0.2) break;
    reps *= 2;
  }
  double best = 1e30;
  for (int trial = 0; trial < 5; ++trial) {
    auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / reps);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice dev(&pool, threads);
  openblas_set_num_threads(threads);

  std::printf("threads=%d\n%6s %6s %6s  %12s %12s %12s  %10s\n", threads, "m", "n", "k",
              "eigen GF/s", "openblas GF/s", "sharded GF/s", "max rel diff");
  const int sizes[][3] = {{1024, 1024, 1024}, {256, 256, 256}, {64, 64, 64}, {16, 16, 16},
                          {300, 100, 200}};
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (const auto& s : sizes) {
    const int m = s[0], n = s[1], k = s[2];
    std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c1(size_t(m) * n), c2(size_t(m) * n);
    for (float& x : a) x = dist(gen);
    for (float& x : b) x = dist(gen);

    CMat A(a.data(), m, k), B(b.data(), k, n);
    Mat C1(c1.data(), m, n);
    const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims = {
        Eigen::IndexPair<Eigen::DenseIndex>(1, 0)};
    const double te = TimeIt([&] { C1.device(dev) = A.contract(B, dims); });
    const double tb = TimeIt([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f, a.data(), k, b.data(),
                  n, 0.f, c2.data(), n);
    });
    // Row-sharded single-threaded sgemm over the Eigen pool.
    std::vector<float> c3(size_t(m) * n);
    auto rows = [&](int r0, int r1) {
      if (r1 > r0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r1 - r0, n, k, 1.f,
                    a.data() + size_t(r0) * k, k, b.data(), n, 0.f, c3.data() + size_t(r0) * n, n);
    };
    auto block = [&](int i) {
      rows(int(int64_t(m) * i / threads), int(int64_t(m) * (i + 1) / threads));
    };
    openblas_set_num_threads(1);
    const double ts = TimeIt([&] {
      const bool small = 2.0 * m * n * k < 2e6 || threads == 1;
      if (small) return rows(0, m);  // below ~1 MFLOP: one thread, no hand-off
      Eigen::Barrier barrier(threads - 1);
      for (int i = 1; i < threads; ++i) dev.enqueue_with_barrier(&barrier, block, i);
      block(0);
      barrier.Wait();
    });
    openblas_set_num_threads(threads);
    double diff = 0;
    for (size_t i = 0; i < c1.size(); ++i)
      diff = std::max(diff, double(std::fabs(c1[i] - c2[i])) / (1e-3 + std::fabs(c2[i])));
    const double flop = 2.0 * m * n * k;
    for (size_t i = 0; i < c1.size(); ++i)
      diff = std::max(diff, double(std::fabs(c3[i] - c2[i])) / (1e-3 + std::fabs(c2[i])));
    std::printf("%6d %6d %6d  %12.1f %12.1f %12.1f  %10.2e\n", m, n, k, flop / te / 1e9,
                flop / tb / 1e9, flop / ts / 1e9, diff);
  }
  return 0;
}
