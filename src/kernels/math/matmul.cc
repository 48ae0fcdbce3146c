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
// the same blocks. Problems under kParallelFlops run on the calling thread only,
// and a single product under kSplitProductFlops is not cut into blocks.
// bfloat16 uses oneDNN's native bf16 GEMM on the same blocks (float32 sums,
// rounded once); float16 operands are widened to float32 scratch copies and go
// through the sgemm path (float accumulation); the product is rounded once.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <vector>

#include "compute/eigen.h"
#include "compute/gemm.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_compute::BatchGemm;
using pdk_compute::UseSingleThreadedOpenBlas;

// out = the batch of products of a and b (see pdk_compute::BatchGemm). float16
// is widened to float32 scratch copies, multiplied by sgemm (float
// accumulation) and rounded once into `out`: 3-6x faster than Eigen's half GEMM
// on the development machine (docs/architecture.md); bfloat16 runs natively.
template <class T>
Status BatchGemmOf(OpKernelContext* ctx, bool ta, bool tb, int64 m, int64 n, int64 k,
                   int64 batch, const Tensor& a, const std::vector<int64>& a_off,
                   const Tensor& b, const std::vector<int64>& b_off, Tensor* out) {
  const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
  if constexpr (pdk_compute::kGemmWidens<T>) {
    if (out->NumElements() == 0) return OkStatus();
    Tensor af, bf, cf;
    TF_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, a.shape(), &af));
    TF_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, b.shape(), &bf));
    TF_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, out->shape(), &cf));
    af.flat<float>().device(dev) = a.flat<T>().template cast<float>();
    bf.flat<float>().device(dev) = b.flat<T>().template cast<float>();
    BatchGemm<float>(dev, ta, tb, m, n, k, batch, af.flat<float>().data(), a_off,
                     bf.flat<float>().data(), b_off, cf.flat<float>().data());
    out->flat<T>().device(dev) = cf.flat<float>().template cast<T>();
  } else {
    BatchGemm<T>(dev, ta, tb, m, n, k, batch, a.flat<T>().data(), a_off, b.flat<T>().data(),
                 b_off, out->flat<T>().data());
  }
  return OkStatus();
}

const char* Bool(bool b) { return b ? "true" : "false"; }

template <class T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("transpose_a", &transpose_a_));
    OP_REQUIRES_OK(c, c->GetAttr("transpose_b", &transpose_b_));
    UseSingleThreadedOpenBlas();
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    // TensorFlow's wording first (its CPU MatMul runs through BatchMatMul's
    // checks, matmul_op_impl.h), then which operand and dimension.
    OP_REQUIRES(ctx, a.dims() == b.dims(),
                errors::InvalidArgument("In[0] and In[1] has different ndims: ",
                                        a.shape().DebugString(), " vs. ",
                                        b.shape().DebugString(), " (", type_string(),
                                        ": a and b must be rank 2)"));
    OP_REQUIRES(ctx, a.dims() == 2,
                errors::InvalidArgument("In[0] and In[1] ndims must be == 2: ", a.dims(), " (",
                                        type_string(), ": a ", a.shape(), ", b ", b.shape(),
                                        ")"));
    const int ka_dim = transpose_a_ ? 0 : 1, kb_dim = transpose_b_ ? 1 : 0;
    OP_REQUIRES(ctx, a.dim_size(ka_dim) == b.dim_size(kb_dim),
                errors::InvalidArgument(
                    "Matrix size-incompatible: In[0]: ", a.shape(), ", In[1]: ", b.shape(), " (",
                    type_string(), ": transpose_a=", Bool(transpose_a_), ", transpose_b=",
                    Bool(transpose_b_), ", a.shape[", ka_dim, "] (", a.dim_size(ka_dim),
                    ") != b.shape[", kb_dim, "] (", b.dim_size(kb_dim), "))"));
    const int64 m = a.dim_size(1 - ka_dim), k = a.dim_size(ka_dim), n = b.dim_size(1 - kb_dim);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({m, n}), &out));
    static const std::vector<int64> kZero{0};
    OP_REQUIRES_OK(ctx, BatchGemmOf<T>(ctx, transpose_a_, transpose_b_, m, n, k, 1, a, kZero, b,
                                       kZero, out));
  }

 private:
  bool transpose_a_ = false, transpose_b_ = false;
};

template <class T>
class BatchMatMulV2Op : public OpKernel {
 public:
  explicit BatchMatMulV2Op(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("adj_x", &adj_x_));
    OP_REQUIRES_OK(c, c->GetAttr("adj_y", &adj_y_));
    UseSingleThreadedOpenBlas();
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const char* op = type_string().c_str();
    OP_REQUIRES_OK(ctx, ::pdk::CheckRankAtLeast(op, "x", x.shape().pdk_shape(), 2));
    OP_REQUIRES_OK(ctx, ::pdk::CheckRankAtLeast(op, "y", y.shape().pdk_shape(), 2));
    const int xr = x.dims(), yr = y.dims();
    const int kx_dim = adj_x_ ? xr - 2 : xr - 1, ky_dim = adj_y_ ? yr - 1 : yr - 2;
    OP_REQUIRES(ctx, x.dim_size(kx_dim) == y.dim_size(ky_dim),
                errors::InvalidArgument(
                    "Matrix size-incompatible: In[0]: ", x.shape(), ", In[1]: ", y.shape(), " (",
                    op, ": adj_x=", Bool(adj_x_), ", adj_y=", Bool(adj_y_), ", x.shape[", kx_dim,
                    "] (", x.dim_size(kx_dim), ") != y.shape[", ky_dim, "] (",
                    y.dim_size(ky_dim), "))"));
    const int64 m = adj_x_ ? x.dim_size(xr - 1) : x.dim_size(xr - 2), k = x.dim_size(kx_dim);
    const int64 n = adj_y_ ? y.dim_size(yr - 2) : y.dim_size(yr - 1);

    TensorShape xb = x.shape(), yb = y.shape();
    xb.RemoveLastDims(2);
    yb.RemoveLastDims(2);
    const ::pdk::StatusOr<::pdk::Shape> bcast =
        ::pdk::BroadcastShapes(op, "x[:-2]", xb.pdk_shape(), "y[:-2]", yb.pdk_shape());
    OP_REQUIRES_OK(ctx, bcast.status());
    const TensorShape ob(bcast.value());
    TensorShape out_shape = ob;
    out_shape.AddDim(m);
    out_shape.AddDim(n);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const int64 batch = ob.num_elements();
    if (out->NumElements() == 0) return;

    // Element offset of each output batch item's x and y matrix: walk the
    // broadcast batch index, a size-1 operand dimension contributing stride 0.
    const int br = ob.dims();
    std::vector<int64> xstride(br, 0), ystride(br, 0);
    int64 sx = m * k, sy = k * n;
    for (int d = br - 1; d >= 0; --d) {
      const int dx = xb.dims() - br + d, dy = yb.dims() - br + d;
      if (dx >= 0) {
        if (xb.dim_size(dx) != 1) xstride[d] = sx;
        sx *= xb.dim_size(dx);
      }
      if (dy >= 0) {
        if (yb.dim_size(dy) != 1) ystride[d] = sy;
        sy *= yb.dim_size(dy);
      }
    }
    std::vector<int64> x_off(batch), y_off(batch), idx(br, 0);
    int64 xo = 0, yo = 0;
    for (int64 i = 0; i < batch; ++i) {
      x_off[i] = xo;
      y_off[i] = yo;
      for (int d = br - 1; d >= 0; --d) {  // odometer increment
        if (++idx[d] < ob.dim_size(d)) {
          xo += xstride[d];
          yo += ystride[d];
          break;
        }
        xo -= xstride[d] * (ob.dim_size(d) - 1);
        yo -= ystride[d] * (ob.dim_size(d) - 1);
        idx[d] = 0;
      }
    }
    OP_REQUIRES_OK(ctx, BatchGemmOf<T>(ctx, adj_x_, adj_y_, m, n, k, batch, x, x_off, y, y_off,
                                       out));
  }

 private:
  bool adj_x_ = false, adj_y_ = false;
};

#define PDK_REGISTER_MATMUL_(T)                                                          \
  REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_PDK).TypeConstraint<T>("T").Async(), \
                          MatMulOp<T>);                                                      \
  REGISTER_KERNEL_BUILDER(                                                                   \
      Name("BatchMatMulV2").Device(DEVICE_PDK).TypeConstraint<T>("T").Async(),               \
      BatchMatMulV2Op<T>)
PDK_REGISTER_MATMUL_(float);
PDK_REGISTER_MATMUL_(double);
PDK_REGISTER_MATMUL_(Eigen::half);
PDK_REGISTER_MATMUL_(Eigen::bfloat16);
PDK_REGISTER_MATMUL_(int32);
PDK_REGISTER_MATMUL_(int64);
#undef PDK_REGISTER_MATMUL_

}  // namespace
}  // namespace tensorflow
