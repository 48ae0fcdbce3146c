// MatMul and BatchMatMulV2 (tensorflow/core/ops/math_ops.cc).
//
//   MatMul(a, b; transpose_a, transpose_b) -> product
//     a: [M,K] ([K,M] if transpose_a), b: [K,N] ([N,K] if transpose_b),
//     product: [M,N]. T in {float32, float64, float16, bfloat16, int32, int64}
//     (the types stock TensorFlow's CPU MatMul kernel has among PDK's dtypes).
//   BatchMatMulV2(x, y; adj_x, adj_y) -> output
//     x: [..., M, K] ([..., K, M] if adj_x), y: [..., K, N] ([..., N, K] if
//     adj_y); the batch dimensions broadcast as in NumPy; output [bcast..., M, N].
//     For the real types registered here the adjoint is the transpose.
//     T in {float32, float64, float16, bfloat16, int32, int64}.
//
// Errors (InvalidArgument): an operand of the wrong rank (MatMul: rank 2;
// BatchMatMulV2: rank >= 2), contraction dimensions that differ (the message
// names both shapes and both dimensions), batch dimensions that do not
// broadcast.
//
// Backend (src/compute/gemm.h; measured by bench/matmul_backends.cc, see
// docs/architecture.md):
// float32/float64 use OpenBLAS's single-threaded cblas_sgemm/cblas_dgemm on
// row or column blocks of the output, one block set per thread of the device's
// Eigen::ThreadPoolDevice (the calling thread runs the first). OpenBLAS is
// told to use one thread (openblas_set_num_threads(1)), so its own pthreads
// never compete with the device pool. Integer types use Eigen's (Core) GEMM on
// the same blocks. Problems under kParallelFlops run on the calling thread only.
// bfloat16 uses oneDNN's native bf16 GEMM on the same blocks (float32 sums,
// rounded once); float16 operands are widened to float32 scratch copies and go
// through the sgemm path (float accumulation); the product is rounded once.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/gemm.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

using pdk_compute::BatchGemm;
using pdk_compute::UseSingleThreadedOpenBlas;

// out = the batch of products of a and b (see pdk_compute::BatchGemm). float16
// is widened to float32 scratch copies, multiplied by sgemm (float
// accumulation) and rounded once into `out`: 3-6x faster than Eigen's half GEMM
// on the development machine (docs/architecture.md); bfloat16 runs natively.
template <class T>
pdk::Status BatchGemmOf(const pdk::Context& ctx, bool ta, bool tb, int64_t m, int64_t n,
                        int64_t k, int64_t batch, const pdk::Tensor& a,
                        const std::vector<int64_t>& a_off, const pdk::Tensor& b,
                        const std::vector<int64_t>& b_off, pdk::Tensor& out) {
  const auto& dev = pdk_compute::Device(ctx);
  if constexpr (pdk_compute::kGemmWidens<T>) {
    if (out.num_elements() == 0) return pdk::Status::OK();
    PDK_ASSIGN_OR_RETURN(pdk::Tensor af, pdk_compute::WidenToFloat<T>(ctx, a));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor bf, pdk_compute::WidenToFloat<T>(ctx, b));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor cf, ctx.allocate_temp(TF_FLOAT, out.shape()));
    BatchGemm<float>(dev, ta, tb, m, n, k, batch, af.data<float>(), a_off, bf.data<float>(),
                     b_off, cf.data<float>());
    pdk_compute::Convert<float, T>(dev, cf.data<float>(), out.data<T>(), out.num_elements());
  } else {
    BatchGemm<T>(dev, ta, tb, m, n, k, batch, a.data<T>(), a_off, b.data<T>(), b_off,
                 out.data<T>());
  }
  return pdk::Status::OK();
}

template <class T>
class MatMulOp {
 public:
  pdk::Status Init(const pdk::Attrs& attrs) {
    PDK_RETURN_IF_ERROR(attrs.Get("transpose_a", &transpose_a_));
    PDK_RETURN_IF_ERROR(attrs.Get("transpose_b", &transpose_b_));
    UseSingleThreadedOpenBlas();
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor a, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor b, ctx.input(1));
    const pdk::Shape as = a.shape(), bs = b.shape();
    // TensorFlow's wording first (its CPU MatMul runs through BatchMatMul's
    // checks, matmul_op_impl.h), then which operand and dimension.
    if (as.rank() != bs.rank())
      return pdk::InvalidArgument("In[0] and In[1] has different ndims: ", as, " vs. ", bs, " (",
                                  ctx.op(), ": a and b must be rank 2)");
    if (as.rank() != 2)
      return pdk::InvalidArgument("In[0] and In[1] ndims must be == 2: ", as.rank(), " (",
                                  ctx.op(), ": a ", as, ", b ", bs, ")");
    const int ka_dim = transpose_a_ ? 0 : 1, kb_dim = transpose_b_ ? 1 : 0;
    if (as[ka_dim] != bs[kb_dim]) {
      return pdk::InvalidArgument("Matrix size-incompatible: In[0]: ", as, ", In[1]: ", bs, " (",
                                  ctx.op(), ": transpose_a=", transpose_a_ ? "true" : "false",
                                  ", transpose_b=", transpose_b_ ? "true" : "false", ", a.shape[",
                                  ka_dim, "] (", as[ka_dim], ") != b.shape[", kb_dim, "] (",
                                  bs[kb_dim], "))");
    }
    const int64_t m = as[1 - ka_dim], k = as[ka_dim], n = bs[1 - kb_dim];
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape{m, n}));
    static const std::vector<int64_t> kZero{0};
    return BatchGemmOf<T>(ctx, transpose_a_, transpose_b_, m, n, k, 1, a, kZero, b, kZero, out);
  }

 private:
  bool transpose_a_ = false, transpose_b_ = false;
};

template <class T>
class BatchMatMulV2Op {
 public:
  pdk::Status Init(const pdk::Attrs& attrs) {
    PDK_RETURN_IF_ERROR(attrs.Get("adj_x", &adj_x_));
    PDK_RETURN_IF_ERROR(attrs.Get("adj_y", &adj_y_));
    UseSingleThreadedOpenBlas();
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.input(1));
    const pdk::Shape xs = x.shape(), ys = y.shape();
    PDK_RETURN_IF_ERROR(pdk::CheckRankAtLeast(ctx.op(), "x", xs, 2));
    PDK_RETURN_IF_ERROR(pdk::CheckRankAtLeast(ctx.op(), "y", ys, 2));
    const int xr = xs.rank(), yr = ys.rank();
    const int kx_dim = adj_x_ ? xr - 2 : xr - 1, ky_dim = adj_y_ ? yr - 1 : yr - 2;
    if (xs[kx_dim] != ys[ky_dim]) {
      return pdk::InvalidArgument("Matrix size-incompatible: In[0]: ", xs, ", In[1]: ", ys, " (",
                                  ctx.op(), ": adj_x=", adj_x_ ? "true" : "false", ", adj_y=",
                                  adj_y_ ? "true" : "false", ", x.shape[", kx_dim, "] (",
                                  xs[kx_dim], ") != y.shape[", ky_dim, "] (", ys[ky_dim], "))");
    }
    const int64_t m = adj_x_ ? xs[xr - 1] : xs[xr - 2], k = xs[kx_dim];
    const int64_t n = adj_y_ ? ys[yr - 2] : ys[yr - 1];

    const pdk::Shape xb(std::vector<int64_t>(xs.dims().begin(), xs.dims().end() - 2));
    const pdk::Shape yb(std::vector<int64_t>(ys.dims().begin(), ys.dims().end() - 2));
    PDK_ASSIGN_OR_RETURN(pdk::Shape ob,
                         pdk::BroadcastShapes(ctx.op(), "x[:-2]", xb, "y[:-2]", yb));
    pdk::Shape out_shape = ob;
    out_shape.push_back(m);
    out_shape.push_back(n);
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    const int64_t batch = ob.num_elements();
    if (out.num_elements() == 0) return pdk::Status::OK();

    // Element offset of each output batch item's x and y matrix: walk the
    // broadcast batch index, a size-1 operand dimension contributing stride 0.
    const int br = ob.rank();
    std::vector<int64_t> xstride(br, 0), ystride(br, 0);
    int64_t sx = m * k, sy = k * n;
    for (int d = br - 1; d >= 0; --d) {
      const int dx = xb.rank() - br + d, dy = yb.rank() - br + d;
      if (dx >= 0) {
        if (xb[dx] != 1) xstride[d] = sx;
        sx *= xb[dx];
      }
      if (dy >= 0) {
        if (yb[dy] != 1) ystride[d] = sy;
        sy *= yb[dy];
      }
    }
    std::vector<int64_t> x_off(batch), y_off(batch), idx(br, 0);
    int64_t xo = 0, yo = 0;
    for (int64_t i = 0; i < batch; ++i) {
      x_off[i] = xo;
      y_off[i] = yo;
      for (int d = br - 1; d >= 0; --d) {  // odometer increment
        if (++idx[d] < ob[d]) {
          xo += xstride[d];
          yo += ystride[d];
          break;
        }
        xo -= xstride[d] * (ob[d] - 1);
        yo -= ystride[d] * (ob[d] - 1);
        idx[d] = 0;
      }
    }
    return BatchGemmOf<T>(ctx, adj_x_, adj_y_, m, n, k, batch, x, x_off, y, y_off, out);
  }

 private:
  bool adj_x_ = false, adj_y_ = false;
};

}  // namespace

PDK_REGISTER_KERNELS(MatMul, r) {
  pdk::ForEachType(
      pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<MatMulOp<T>>("MatMul").template Type<T>("T"));
    r.Add(pdk::KernelDef<BatchMatMulV2Op<T>>("BatchMatMulV2").template Type<T>("T"));
  });
}

}  // namespace pdk_kernels
