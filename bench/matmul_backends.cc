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
// >= 0.2 s. Results are checked against a double-precision reference (error
// relative to sum |a_ip * b_pj|). Run each backend in its own process.
//
// Not part of the CMake build. Build and run by hand, with the Eigen the plugin
// is compiled against (TensorFlow's bundled copy comes first on the plugin's
// include path) or Debian's (-I/usr/include/eigen3):
//   TFI=$(python -c 'import tensorflow as tf; print(tf.sysconfig.get_include())')
//   g++ -O3 -march=native -std=c++17 -DEIGEN_USE_THREADS -DEIGEN_MAX_ALIGN_BYTES=64 \
//       -isystem $TFI -I/usr/include/x86_64-linux-gnu/openblas-pthread \
//       bench/matmul_backends.cc -o /tmp/matmul_backends -lopenblas -lpthread
//   for b in eigen openblas sharded; do /tmp/matmul_backends $b 2; done
#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  // One backend per process: OpenBLAS's own pthreads busy-wait for a while
  // after a multi-threaded call and would slow whatever is timed next.
  const char* mode = argc > 1 ? argv[1] : "";
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const bool eigen = !std::strcmp(mode, "eigen"), openblas = !std::strcmp(mode, "openblas"),
             sharded = !std::strcmp(mode, "sharded");
  if (!eigen && !openblas && !sharded) {
    std::fprintf(stderr, "usage: %s eigen|openblas|sharded [threads=2]\n", argv[0]);
    return 2;
  }
  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice dev(&pool, threads);
  openblas_set_num_threads(openblas ? threads : 1);

  std::printf("%s, threads=%d\n%6s %6s %6s  %8s %10s  %12s\n", mode, threads, "m", "n", "k",
              "GFLOP/s", "us/call", "max rel err");
  const int sizes[][3] = {{1024, 1024, 1024}, {256, 256, 256}, {128, 128, 128},
                          {64, 64, 64},       {16, 16, 16},    {300, 100, 200}};
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (const auto& s : sizes) {
    const int m = s[0], n = s[1], k = s[2];
    std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n);
    for (float& x : a) x = dist(gen);
    for (float& x : b) x = dist(gen);
    CMat A(a.data(), m, k), B(b.data(), k, n);
    Mat C(c.data(), m, n);
    const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims = {
        Eigen::IndexPair<Eigen::DenseIndex>(1, 0)};
    // Rows r0..r1 of C with one single-threaded sgemm call.
    auto rows = [&](int r0, int r1) {
      if (r1 > r0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r1 - r0, n, k, 1.f,
                    a.data() + size_t(r0) * k, k, b.data(), n, 0.f, c.data() + size_t(r0) * n, n);
    };
    auto block = [&](int i) {
      rows(int(int64_t(m) * i / threads), int(int64_t(m) * (i + 1) / threads));
    };
    std::function<void()> fn;
    if (eigen) {
      fn = [&] { C.device(dev) = A.contract(B, dims); };
    } else if (openblas) {
      fn = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f, a.data(), k,
                    b.data(), n, 0.f, c.data(), n);
      };
    } else {  // the plugin's scheme (src/kernels/math/matmul.cc): blocks over the Eigen pool
      fn = [&] {
        if (2.0 * m * n * k < 4e6 || threads == 1) return rows(0, m);  // small: caller only
        Eigen::Barrier barrier(threads - 1);
        for (int i = 1; i < threads; ++i)
          dev.enqueueNoNotification([&block, &barrier, i] { block(i), barrier.Notify(); });
        block(0);
        barrier.Wait();
      };
    }
    const double t = TimeIt(fn);
    // Check against a double-precision reference.
    double err = 0;
    for (int i = 0; i < m; i += std::max(1, m / 16)) {
      for (int j = 0; j < n; ++j) {
        double ref = 0, mag = 0;
        for (int p = 0; p < k; ++p) {
          ref += double(a[size_t(i) * k + p]) * b[size_t(p) * n + j];
          mag += std::fabs(double(a[size_t(i) * k + p]) * b[size_t(p) * n + j]);
        }
        err = std::max(err, std::fabs(c[size_t(i) * n + j] - ref) / (mag + 1e-30));
      }
    }
    std::printf("%6d %6d %6d  %8.1f %10.1f  %12.2e\n", m, n, k, 2.0 * m * n * k / t / 1e9,
                t * 1e6, err);
  }
  return 0;
}
