// gemm_block_grid.cc — one-thread float32 GEMM time per block shape for the
// backends src/compute/gemm.h chooses between when oneDNN has no brgemm kernel
// (CPUs without AVX-512): OpenBLAS's cblas_sgemm (openblas_set_num_threads(1)),
// Eigen's GEMM (Eigen::Matrix product, as GemmEigen), and oneDNN's dnnl_sgemm
// (OMP_NUM_THREADS=1; its gemm:jit kernel, which GemmBlockDnnl refuses).
//
// C[m,n] = op(A) op(B), row-major, dense; m, k, n in {8, 16, ..., 512}; NN, NT
// (transposed B) and TN (transposed A); operands hot in cache (the same
// buffers every call). Each shape is warmed up, then timed as the best of 5
// trials. Output, one line per shape: "NN m k n openblas_us eigen_us dnnl_us".
// The rule derived from it is EigenFloat32Wins (src/compute/gemm.h); results in
// docs/benchmarks.md, "float32 GEMM".
//
// Not part of the CMake build. Build with the Eigen and the ISA of the
// x86-64-v3 core:
//   TFI=$(.venv/bin/python -c 'import tensorflow as tf; print(tf.sysconfig.get_include())')
//   g++ -O3 -march=x86-64-v3 -std=c++17 -DEIGEN_MAX_ALIGN_BYTES=64 -isystem $TFI \
//       -I/usr/include/x86_64-linux-gnu/openblas-pthread bench/gemm_block_grid.cc \
//       -o /tmp/gemm_block_grid -ldnnl -lopenblas -lpthread
//   OMP_NUM_THREADS=1 /tmp/gemm_block_grid > grid.txt
#include <cblas.h>
#include <dnnl.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace {

// Microseconds per call of f: the best of 5 trials of about 2e6 FLOP-worth of
// calls each (at least 3, at most 4000 calls).
template <class F>
double BestMicros(F&& f, double flops) {
  const int calls = std::min(4000, std::max(3, int(2e6 / std::max(flops, 1e3))));
  for (int i = 0; i < std::max(3, calls / 4); ++i) f();
  double best = 1e30;
  for (int trial = 0; trial < 5; ++trial) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / calls);
  }
  return best;
}

}  // namespace

int main() {
  openblas_set_num_threads(1);
  const int dims[] = {8, 16, 32, 64, 128, 256, 512};
  std::mt19937 gen(0);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> a(512 * 512), b(512 * 512), c(512 * 512);
  for (float& x : a) x = uniform(gen);
  for (float& x : b) x = uniform(gen);
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  for (const char* layout : {"NN", "NT", "TN"}) {
    const bool ta = layout[0] == 'T', tb = layout[1] == 'T';
    for (int m : dims)
      for (int k : dims)
        for (int n : dims) {
          const double flops = 2.0 * m * n * k;
          const int lda = ta ? m : k, ldb = tb ? k : n;
          const double openblas = BestMicros(
              [&] {
                cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                            tb ? CblasTrans : CblasNoTrans, m, n, k, 1.f, a.data(), lda, b.data(),
                            ldb, 0.f, c.data(), n);
              },
              flops);
          Eigen::Map<const Mat> A(a.data(), ta ? k : m, ta ? m : k);
          Eigen::Map<const Mat> B(b.data(), tb ? n : k, tb ? k : n);
          Eigen::Map<Mat> C(c.data(), m, n);
          const double eigen = BestMicros(
              [&] {
                if (ta) C.noalias() = A.transpose() * B;
                else if (tb) C.noalias() = A * B.transpose();
                else C.noalias() = A * B;
              },
              flops);
          const double onednn = BestMicros(
              [&] {
                dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.f, a.data(), lda, b.data(),
                           ldb, 0.f, c.data(), n);
              },
              flops);
          std::printf("%s %d %d %d %.3f %.3f %.3f\n", layout, m, k, n, openblas, eigen, onednn);
          std::fflush(stdout);
        }
  }
  return 0;
}
