// Dense GEMM for PDK kernels: C = op(A) * op(B) (+ C) on row-major matrices,
// and the device-pool fan-out that MatMul, BatchMatMulV2 and the im2col
// convolutions (src/kernels/nn/conv2d.cc) share.
//
// Backend (measured by bench/matmul_backends.cc and bench/bench_pdk.py, see
// docs/architecture.md "MatMul backend" and docs/benchmarks.md "float32
// GEMM"):
// - float32: oneDNN's matmul primitive (GemmBlockDnnl, dnnl_gemm.cc), which
//   runs dense operands on its brgemm kernel (brg:avx512_core here), for every
//   block whose shape DnnlFloat32Wins and whose operands are dense (DenseGemm:
//   whole products, batch items, row blocks of an untransposed A);
//   OpenBLAS's single-threaded cblas_sgemm for smaller blocks (lower per-call
//   cost), strided blocks (row blocks of a transposed A, column blocks),
//   accumulation (beta = 1), or when oneDNN would not use brgemm; on CPUs
//   without AVX-512 (no brgemm), Eigen's GEMM for the blocks up to 51 MFLOP
//   that EigenFloat32Wins picks (faster there than OpenBLAS). oneDNN
//   computes on the calling thread (OpenMP team of 1): one call over the whole
//   product with an OpenMP team stalled for ~11 ms per call under load with
//   libgomp's default wait policy;
// - float64: OpenBLAS's cblas_dgemm;
// - bfloat16: oneDNN's bf16 matmul per block (native AVX512_BF16 dot
//   products, float32 sums, one rounding); on CPUs without AVX512_BF16,
//   float32 copies through the float32 path (NativeBf16 below says why);
// - every other type (and dimensions beyond int) uses Eigen's (Core) GEMM.
// float16 has no fast GEMM here: callers widen it to float32 first
// (kGemmWidens). OpenBLAS is told to use one thread (UseSingleThreadedOpenBlas),
// so its own pthreads never compete with the device's Eigen::ThreadPoolDevice.
// Otherwise PDK splits the work over that pool (batch items, then row or
// column blocks) and calls OpenBLAS / oneDNN (OpenMP team of 1) from its
// threads, one thread per call.
#ifndef PDK_SRC_COMPUTE_GEMM_H_
#define PDK_SRC_COMPUTE_GEMM_H_

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"  // RunShards
#include "compute/transpose.h"     // BatchedTranspose2D

namespace pdk_compute {

// Below ~4 MFLOP (a 128x128x128 product, ~40 us on one core) handing work to
// the pool costs more than it saves.
constexpr double kParallelFlops = 4.0e6;

// One product is cut into row or column blocks over the pool only from this
// size; smaller ones run whole, on one thread each (several products of a
// batch still share the pool from kParallelFlops). Below it the cut costs
// more than the second core saves: each shard packs B again, column blocks
// miss oneDNN's brgemm kernel, and the worker's wake-up (25-40 us on the
// 2-vCPU VMs) comes late. Measured on the 2-vCPU AMD EPYC VM (2026-11-29,
// bench/bench_matmul.py, pool of 2 against PDK_NUM_THREADS=1): cutting lost
// 25-60 % up to 16.8 MFLOP (32x256x256 46 against 32 us, 32x512x512 140
// against 100 us), broke even at 33.5 MFLOP (64x512x512) and won from 67
// MFLOP (128x512x512 242 against 288 us); docs/benchmarks.md, "float32 GEMM".
constexpr double kSplitProductFlops = 32.0e6;

// Parallel GEMMs and oneDNN convolutions split into this many shards per
// pool thread, claimed dynamically (RunShards): when another process takes
// part of a core, the other threads take over its remaining shards. More
// shards cost one more packing of B per shard (GEMM) and smaller oneDNN calls
// (docs/benchmarks.md, "Speed on a shared machine").
constexpr int64_t kShardsPerThread = 2;

// OpenBLAS parallelizes over its own pthreads by default; PDK parallelizes on
// the device pool instead and calls OpenBLAS from those threads, one thread per
// call. Process-wide setting of Debian's libopenblas (NumPy wheels bundle their
// own, separately named OpenBLAS, unaffected). Call from every kernel's Init
// that uses this header.
inline void UseSingleThreadedOpenBlas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

inline bool FitsBlasInt(int64_t v) { return v <= std::numeric_limits<int>::max(); }

// True for the element types whose GEMM is faster on float32 copies (widen,
// sgemm, round once) than in the type itself: float16 (Eigen's half GEMM is
// 3-6x slower than that). bfloat16 has oneDNN's native GEMM (GemmBlockBf16).
template <class T>
inline constexpr bool kGemmWidens = std::is_same_v<T, Eigen::half>;

// Element types of GemmBlockDnnl.
enum class DnnlGemmType { kFloat32, kBfloat16 };

// C[rows,cols] = op(A) * op(B) for A, B, C of `type` (row-major, row strides
// lda/ldb/ldc) with oneDNN's matmul primitive on the calling thread plus an
// OpenMP team of `team` threads in all (1: the calling thread alone; PDK's
// GEMMs always pass 1, see docs/architecture.md "MatMul backend").
// bfloat16: products summed in float32, rounded once. Returns false if oneDNN
// cannot run it, or for float32 if oneDNN would not use a brgemm kernel for it
// (the caller then computes the whole block another way).
// Defined in dnnl_gemm.cc.
bool GemmBlockDnnl(DnnlGemmType type, bool ta, bool tb, int64_t rows, int64_t cols, int64_t k,
                   const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc,
                   int team = 1);

// Whether a float32 block C[rows,cols] = op(A) op(B) with dense operands
// (DenseGemm) runs faster on oneDNN's brgemm kernel (GemmBlockDnnl) than on
// OpenBLAS's cblas_sgemm, on one core. Measured on a 7^3 grid of m, n, k in
// {1, 10, 32, 64, 128, 256, 512} for NN, NT and TN (docs/benchmarks.md,
// "float32 GEMM", the per-core table): OpenBLAS keeps tiny products (its
// per-call cost is 0.04-0.1 us against oneDNN's 0.3-0.4 us) and matrix-vector
// shapes (a side under 8: oneDNN 1.5-7x slower). Its transposed-B kernel is
// slow on small products (64x64x32: 2.8 against 1.9 us; 32x64x256: 13.1
// against 8.2 us), so NT goes to oneDNN from 30 KFLOP when the output has
// >= 1280 elements; NN from 300 KFLOP; TN, where OpenBLAS leads up to about
// 1 MFLOP on one product in a hot loop, from 2.5 MFLOP (and TT, rare). NN and
// TN also go to oneDNN from 100 KFLOP with >= 1280 output elements: in a
// batch of products with cold operands (attention's 128 products of
// 64x64x32 per BatchMatMulV2) oneDNN measured 1.4-1.5x faster (236 -> 161 us
// NN, 235 -> 170 us TN per BatchMatMulV2; docs/benchmarks.md, "float32
// GEMM"). Where oneDNN has no brgemm kernel (CPUs without AVX-512),
// GemmBlockDnnl declines and OpenBLAS runs it all.
inline bool DnnlFloat32Wins(bool ta, bool tb, int64_t rows, int64_t cols, int64_t k) {
  if (rows < 8 || cols < 8) return false;
  const double flops = 2.0 * double(rows) * double(cols) * double(k);
  if (!ta && tb) return flops >= 3.0e4 && rows * cols >= 1280;
  if (!ta && !tb) return flops >= 3.0e5 || (flops >= 1.0e5 && rows * cols >= 1280);
  return flops >= 2.5e6 || (flops >= 1.0e5 && rows * cols >= 1280);
}

// True if op(A), op(B) and C are dense (row strides equal to the stored row
// lengths): the only layouts oneDNN 2.6 runs on its float32 brgemm kernel.
inline bool DenseGemm(bool ta, bool tb, int64_t rows, int64_t cols, int64_t k, int64_t lda,
                      int64_t ldb, int64_t ldc) {
  return lda == (ta ? rows : k) && ldb == (tb ? k : cols) && ldc == cols;
}

// C[rows,cols] (+)= op(A) * op(B) on the calling thread. Row-major; lda/ldb/ldc
// are the row strides of the stored A, B, C; op(X) = X^T when the flag is set.
template <class T>
void GemmEigen(bool ta, bool tb, int64_t rows, int64_t cols, int64_t k, const T* a, int64_t lda,
               const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate = false) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using CMap = Eigen::Map<const Mat, Eigen::Unaligned, Eigen::OuterStride<>>;
  using OMap = Eigen::Map<Mat, Eigen::Unaligned, Eigen::OuterStride<>>;
  CMap A(a, ta ? k : rows, ta ? rows : k, Eigen::OuterStride<>(lda));
  CMap B(b, tb ? cols : k, tb ? k : cols, Eigen::OuterStride<>(ldb));
  OMap C(c, rows, cols, Eigen::OuterStride<>(ldc));
  if (accumulate) {
    if (!ta && !tb) C.noalias() += A * B;
    else if (ta && !tb) C.noalias() += A.transpose() * B;
    else if (!ta && tb) C.noalias() += A * B.transpose();
    else C.noalias() += A.transpose() * B.transpose();
    return;
  }
  if (!ta && !tb) C.noalias() = A * B;
  else if (ta && !tb) C.noalias() = A.transpose() * B;
  else if (!ta && tb) C.noalias() = A * B.transpose();
  else C.noalias() = A.transpose() * B.transpose();
}

// Whether the CPU has native bfloat16 dot products (AVX512_BF16). Only then
// does oneDNN's bf16 matmul sum in float32 (VDPBF16PS); on a CPU without them
// (an AVX2 AMD EPYC, measured) PDK's bfloat16 products came out summed in
// bfloat16 (k = 512 terms of 1 + 2^-7 gave 512, not 516), so GemmBlock widens
// bfloat16 to float32 there instead.
inline bool NativeBf16() {
  static const bool yes = __builtin_cpu_supports("avx512bf16");
  return yes;
}

// Whether a float32 block C[rows,cols] = op(A) op(B) that oneDNN does not take
// runs faster on Eigen's GEMM (GemmEigen) than on OpenBLAS's cblas_sgemm, on
// one core of a CPU without AVX-512. There oneDNN 2.6 has no brgemm kernel, and
// OpenBLAS 0.3.21's Haswell/Zen sgemm carries a per-call and packing cost that
// Eigen's AVX2+FMA kernel (the x86-64-v3 core's build of TensorFlow's Eigen)
// does not. Measured on a 2-vCPU AMD EPYC (Zen 3, AVX2, no AVX-512),
// 2026-11-30, one thread, hot operands, m, k, n in {8, 16, ..., 512} for NN, NT
// and TN (docs/benchmarks.md, "float32 GEMM", "Without AVX-512"): Eigen / OpenBLAS
// geometric mean 0.76 (NN) and 0.75 (NT) over the products up to 33 MFLOP
// (the LSTM's 32x64x256: 13-16 against 17-20 us); TN 0.90 with this rule (Eigen
// is slower on TN with few output columns or a long k: 256x8x256 1.75x).
// Eigen also led on every grid block of 34 MFLOP (NN 0.85-0.98, NT 0.80-0.99,
// TN under the rule 0.83-0.97), the ViT's 512-row Dense blocks among them, but
// not on all of 67 MFLOP (512x512x128 NN 1.05, 128x512x512 NT 1.06,
// 256x256x512 TN 1.06): hence the cutoff of 51 MFLOP, between the two.
inline bool EigenFloat32Wins(bool ta, bool tb, int64_t rows, int64_t cols, int64_t k) {
#if defined(__AVX2__) && defined(__FMA__)
  static const bool no_avx512 = !__builtin_cpu_supports("avx512f");
  if (!no_avx512 || 2.0 * double(rows) * double(cols) * double(k) > 5.1e7) return false;
  if (!ta) return true;
  return !tb && cols >= 32 && k <= 256;
#else  // the x86-64-v2 core: Eigen's SSE kernel, OpenBLAS's runtime-chosen AVX2 one
  (void)ta, (void)tb, (void)rows, (void)cols, (void)k;
  return false;
#endif
}

template <class T>
void GemmBlock(bool ta, bool tb, int64_t rows, int64_t cols, int64_t k, const T* a, int64_t lda,
               const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate = false);

// bfloat16 C (+)= op(A) op(B) through float32 copies: products summed in
// float32 by the float32 GEMM, rounded to bfloat16 once.
inline void GemmBlockBf16Widened(bool ta, bool tb, int64_t rows, int64_t cols, int64_t k,
                                 const Eigen::bfloat16* a, int64_t lda, const Eigen::bfloat16* b,
                                 int64_t ldb, Eigen::bfloat16* c, int64_t ldc, bool accumulate) {
  auto widen = [](const Eigen::bfloat16* src, int64_t r, int64_t n, int64_t ld) {
    std::vector<float> out(static_cast<size_t>(r * n));
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < n; ++j) out[i * n + j] = static_cast<float>(src[i * ld + j]);
    return out;
  };
  const int64_t ac = ta ? rows : k, bc = tb ? k : cols;
  const std::vector<float> fa = widen(a, ta ? k : rows, ac, lda);
  const std::vector<float> fb = widen(b, tb ? cols : k, bc, ldb);
  std::vector<float> fc = accumulate ? widen(c, rows, cols, ldc)
                                     : std::vector<float>(static_cast<size_t>(rows * cols));
  GemmBlock<float>(ta, tb, rows, cols, k, fa.data(), ac, fb.data(), bc, fc.data(), cols,
                   accumulate);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) c[i * ldc + j] = Eigen::bfloat16(fc[i * cols + j]);
}

// C[rows,cols] = op(A) * op(B), or C += op(A) * op(B) with `accumulate`, on the
// calling thread. k must be > 0 (callers handle the empty sum).
template <class T>
void GemmBlock(bool ta, bool tb, int64_t rows, int64_t cols, int64_t k, const T* a, int64_t lda,
               const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate) {
  if constexpr (std::is_same_v<T, float>) {
    if (!accumulate && DnnlFloat32Wins(ta, tb, rows, cols, k) &&
        DenseGemm(ta, tb, rows, cols, k, lda, ldb, ldc) &&
        GemmBlockDnnl(DnnlGemmType::kFloat32, ta, tb, rows, cols, k, a, lda, b, ldb, c, ldc))
      return;
    if (!accumulate && EigenFloat32Wins(ta, tb, rows, cols, k))
      return GemmEigen(ta, tb, rows, cols, k, a, lda, b, ldb, c, ldc);
  }
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (FitsBlasInt(rows) && FitsBlasInt(cols) && FitsBlasInt(k) && FitsBlasInt(lda) &&
        FitsBlasInt(ldb) && FitsBlasInt(ldc)) {
      const auto tra = ta ? CblasTrans : CblasNoTrans, trb = tb ? CblasTrans : CblasNoTrans;
      const T beta = accumulate ? T(1) : T(0);
      if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(CblasRowMajor, tra, trb, int(rows), int(cols), int(k), 1.0f, a, int(lda), b,
                    int(ldb), beta, c, int(ldc));
      } else {
        cblas_dgemm(CblasRowMajor, tra, trb, int(rows), int(cols), int(k), 1.0, a, int(lda), b,
                    int(ldb), beta, c, int(ldc));
      }
      return;
    }
  }
  if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
    if (!NativeBf16())
      return GemmBlockBf16Widened(ta, tb, rows, cols, k, a, lda, b, ldb, c, ldc, accumulate);
    if (!accumulate && GemmBlockDnnl(DnnlGemmType::kBfloat16, ta, tb, rows, cols, k, a, lda, b,
                                     ldb, c, ldc))
      return;
  }
  GemmEigen(ta, tb, rows, cols, k, a, lda, b, ldb, c, ldc, accumulate);
}

template <class T>
void BatchGemm(const Eigen::ThreadPoolDevice& dev, bool ta, bool tb, int64_t m, int64_t n,
               int64_t k, int64_t batch, const T* a, const std::vector<int64_t>& a_off,
               const T* b, const std::vector<int64_t>& b_off, T* c);

// Rows of op(A) and op(B) each shard of TransposedAGemm's k split sums over,
// at least: below, oneDNN's brgemm kernel runs short of its packed-panel rate.
constexpr int64_t kMinSplitK = 64;

// One float32 product C[m,n] = A^T op(B) split over the pool (`shards` >= 2)
// with every block dense, so that each runs on oneDNN's brgemm kernel
// (GemmBlock) where a split of C's rows or columns would hand OpenBLAS strided
// blocks of A or B: MatMul's weight gradient x^T dy (tf.linalg.matmul with
// transpose_a, TensorFlow's MatMul gradient) ran 1.7-1.9x slower than
// TensorFlow's oneDNN MatMul so (docs/benchmarks.md, "float32 GEMM"). Two ways,
// whichever moves fewer extra floats:
// - split k (B not transposed): shard s sums rows [k_s, k_{s+1}) of A and B,
//   both dense, into its own [m,n] partial (shard 0 into C); the partials are
//   then added to C in shard order, elementwise blocks on the pool.
//   Extra traffic: (shards - 1) partials, m*n floats each;
// - transpose A once on the pool ([k,m] -> [m,k], BatchedTranspose2D) and run
//   the NN (or NT) product, whose row blocks are dense. Extra: m*k floats.
// Returns false (nothing written) when neither gives a block oneDNN runs
// faster (DnnlFloat32Wins): the caller splits as for any product. The sum
// order over k differs from one undivided product, within float rounding, and
// is fixed by the shapes and the pool size (same bits from run to run).
inline bool TransposedAGemm(const Eigen::ThreadPoolDevice& dev, bool tb, int64_t m, int64_t n,
                            int64_t k, const float* a, const float* b, float* c,
                            int64_t shards) {
  const int64_t split = tb ? 1 : std::min<int64_t>(shards, k / kMinSplitK);
  const bool by_k = split >= 2 && n * (split - 1) <= k &&
                    DnnlFloat32Wins(true, false, m, n, k / split);
  if (by_k) {
    std::unique_ptr<float[]> partials(new float[size_t((split - 1) * m * n)]);
    RunShards(dev, split, [&](int64_t s) {
      const int64_t k0 = k * s / split, k1 = k * (s + 1) / split;
      float* out = s == 0 ? c : partials.get() + (s - 1) * m * n;
      GemmBlock<float>(true, false, m, n, k1 - k0, a + k0 * m, m, b + k0 * n, n, out, n);
    });
    const int64_t total = m * n, pieces = std::max<int64_t>(1, std::min<int64_t>(shards, total / 4096));
    RunShards(dev, pieces, [&](int64_t p) {
      const int64_t e0 = total * p / pieces, e1 = total * (p + 1) / pieces;
      for (int64_t s = 1; s < split; ++s) {
        const float* part = partials.get() + (s - 1) * total;
        for (int64_t e = e0; e < e1; ++e) c[e] += part[e];
      }
    });
    return true;
  }
  // NN / NT after the transpose: row blocks of m / shards rows.
  if (m < 2 * shards || !DnnlFloat32Wins(false, tb, m / shards, n, k)) return false;
  std::unique_ptr<float[]> at(new float[size_t(m * k)]);
  BatchedTranspose2D<float>(dev, a, at.get(), 1, k, m);
  static const std::vector<int64_t> kZero{0};
  BatchGemm<float>(dev, false, tb, m, n, k, 1, at.get(), kZero, b, kZero, c);
  return true;
}

// `batch` independent products C_i[m,n] = op(A_i) op(B_i), where A_i starts at
// a + a_off[i], B_i at b + b_off[i], C_i at c + i*m*n (all dense row-major).
// Work units are (batch item, block of output rows or columns; products under
// kSplitProductFlops are one unit each); up to kShardsPerThread * numThreads()
// shards of contiguous units run on RunShards.
// A single float32 product with a transposed A goes to TransposedAGemm first.
template <class T>
void BatchGemm(const Eigen::ThreadPoolDevice& dev, bool ta, bool tb, int64_t m, int64_t n,
               int64_t k, int64_t batch, const T* a, const std::vector<int64_t>& a_off,
               const T* b, const std::vector<int64_t>& b_off, T* c) {
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) {  // empty sum: zeros (and no BLAS call with a zero leading dimension)
    std::memset(c, 0, sizeof(T) * size_t(batch * m * n));
    return;
  }
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  const double product_flops = 2.0 * double(m) * double(n) * double(k);
  const double flops = product_flops * double(batch);
  const int threads = dev.numThreads();
  const bool split_products = product_flops >= kSplitProductFlops;
  const bool parallel = threads > 1 && flops >= kParallelFlops && (split_products || batch > 1);
  if constexpr (std::is_same_v<T, float>) {
    if (ta && parallel && batch == 1 &&
        TransposedAGemm(dev, tb, m, n, k, a + a_off[0], b + b_off[0], c,
                        threads * kShardsPerThread))
      return;
  }
  // Split each product along its longer output side when there are fewer
  // products than threads; float32 with an untransposed A splits rows when
  // there are enough (16 per thread): its row blocks are dense, so they run
  // on oneDNN's brgemm kernel (GemmBlock), column blocks would not.
  const bool split_rows =
      m >= n || (std::is_same_v<T, float> && !ta && m >= 16 * int64_t(threads));
  const int64_t split_len = split_rows ? m : n;
  const int64_t target = threads * kShardsPerThread;
  int64_t nsplit = 1;
  if (parallel && split_products && batch < target)
    nsplit = std::min<int64_t>((target + batch - 1) / batch, split_len);
  const int64_t units = batch * nsplit;
  const int64_t shards = parallel ? std::min<int64_t>(target, units) : 1;

  auto run_unit = [&](int64_t u) {
    const int64_t i = u / nsplit, part = u % nsplit;
    const int64_t lo = split_len * part / nsplit, hi = split_len * (part + 1) / nsplit;
    if (hi <= lo) return;
    const T* ai = a + a_off[i];
    const T* bi = b + b_off[i];
    T* ci = c + i * m * n;
    if (split_rows) {  // rows lo..hi of op(A) and C
      GemmBlock<T>(ta, tb, hi - lo, n, k, ai + (ta ? lo : lo * lda), lda, bi, ldb, ci + lo * n, n);
    } else {  // columns lo..hi of op(B) and C
      GemmBlock<T>(ta, tb, m, hi - lo, k, ai, lda, bi + (tb ? lo * ldb : lo), ldb, ci + lo, n);
    }
  };
  RunShards(dev, shards, [&](int64_t s) {
    for (int64_t u = units * s / shards, e = units * (s + 1) / shards; u < e; ++u) run_unit(u);
  });
}

// One product C[m,n] = op(A) op(B) split over the pool (BatchGemm, batch 1).
template <class T>
void Gemm(const Eigen::ThreadPoolDevice& dev, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
          const T* a, const T* b, T* c) {
  static const std::vector<int64_t> kZero{0};
  BatchGemm<T>(dev, ta, tb, m, n, k, 1, a, kZero, b, kZero, c);
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_GEMM_H_
