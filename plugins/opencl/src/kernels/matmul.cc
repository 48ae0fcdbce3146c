// MatMul (transpose_a, transpose_b), BatchMatMul (adj_x, adj_y; equal batch
// dimensions) and BatchMatMulV2 (adj_x, adj_y; batch dimensions broadcast as
// numpy does) on OPENCL, float32, through CLBlast's SGEMM (row-major) on the
// launch's stream. Shapes and error texts as TensorFlow's matmul_op_impl.h:
// MatMul takes two matrices; [..., m, k] x [..., k, n] -> [broadcast..., m, n];
// an empty inner dimension gives zeros. Also the Gemm helpers of conv_gemm.h.
#include <clblast_c.h>

#include <algorithm>
#include <string>
#include <vector>

#include "conv_gemm.h"
#include "launch.h"

namespace pdk_opencl {

namespace {

pdk::Status ClBlastStatus(CLBlastStatusCode code, const char* what) {
  if (code == CLBlastSuccess) return pdk::Status::OK();
  if (code == CLBlastOpenCLOutOfResources || code == CLBlastTempBufferAllocFailure ||
      code == CLBlastOpenCLOutOfHostMemory)
    return pdk::ResourceExhausted(what, ": CLBlast error ", static_cast<int>(code));
  return pdk::Internal(what, ": CLBlast error ", static_cast<int>(code));
}

struct Buf {
  cl_mem mem = nullptr;
  uint64_t off = 0;
};

pdk::StatusOr<Buf> BufferOf(const ClDevice& device, const Tensor& t) {
  Buf b;
  PDK_RETURN_IF_ERROR(Resolve(device, t, &b.mem, &b.off));
  return b;
}

}  // namespace

pdk::Status Gemm(OpKernelContext* ctx, bool trans_a, bool trans_b, size_t m, size_t n, size_t k,
                 float alpha, const Tensor& a, size_t a_off, size_t lda, const Tensor& b,
                 size_t b_off, size_t ldb, float beta, const Tensor& c, size_t c_off, size_t ldc) {
  if (m == 0 || n == 0 || k == 0) return pdk::Status::OK();
  PDK_ASSIGN_OR_RETURN(LaunchTarget t, Target(ctx));
  PDK_ASSIGN_OR_RETURN(Buf ab, BufferOf(*t.device, a));
  PDK_ASSIGN_OR_RETURN(Buf bb, BufferOf(*t.device, b));
  PDK_ASSIGN_OR_RETURN(Buf cb, BufferOf(*t.device, c));
  cl_command_queue q = t.stream->queue();
  cl_event ev = nullptr;
  const CLBlastStatusCode code = CLBlastSgemm(
      CLBlastLayoutRowMajor, trans_a ? CLBlastTransposeYes : CLBlastTransposeNo,
      trans_b ? CLBlastTransposeYes : CLBlastTransposeNo, m, n, k, alpha, ab.mem, ab.off + a_off,
      lda, bb.mem, bb.off + b_off, ldb, beta, cb.mem, cb.off + c_off, ldc, &q, &ev);
  ProfileOrRelease(ctx, t, ev);
  PDK_RETURN_IF_ERROR(ClBlastStatus(code, "CLBlastSgemm"));
  clFlush(q);
  return pdk::Status::OK();
}

pdk::Status GemmBatched(OpKernelContext* ctx, bool trans_a, bool trans_b, size_t m, size_t n,
                        size_t k, float alpha, const Tensor& a, const std::vector<size_t>& a_offs,
                        size_t lda, const Tensor& b, const std::vector<size_t>& b_offs,
                        size_t ldb, float beta, const Tensor& c,
                        const std::vector<size_t>& c_offs, size_t ldc) {
  const size_t count = a_offs.size();
  if (m == 0 || n == 0 || k == 0 || count == 0) return pdk::Status::OK();
  if (count == 1)
    return Gemm(ctx, trans_a, trans_b, m, n, k, alpha, a, a_offs[0], lda, b, b_offs[0], ldb, beta,
                c, c_offs[0], ldc);
  PDK_ASSIGN_OR_RETURN(LaunchTarget t, Target(ctx));
  PDK_ASSIGN_OR_RETURN(Buf ab, BufferOf(*t.device, a));
  PDK_ASSIGN_OR_RETURN(Buf bb, BufferOf(*t.device, b));
  PDK_ASSIGN_OR_RETURN(Buf cb, BufferOf(*t.device, c));
  std::vector<size_t> ao(count), bo(count), co(count);
  for (size_t i = 0; i < count; ++i) {
    ao[i] = ab.off + a_offs[i];
    bo[i] = bb.off + b_offs[i];
    co[i] = cb.off + c_offs[i];
  }
  const std::vector<float> alphas(count, alpha), betas(count, beta);
  cl_command_queue q = t.stream->queue();
  cl_event ev = nullptr;
  const CLBlastStatusCode code = CLBlastSgemmBatched(
      CLBlastLayoutRowMajor, trans_a ? CLBlastTransposeYes : CLBlastTransposeNo,
      trans_b ? CLBlastTransposeYes : CLBlastTransposeNo, m, n, k, alphas.data(), ab.mem,
      ao.data(), lda, bb.mem, bo.data(), ldb, betas.data(), cb.mem, co.data(), ldc, count, &q,
      &ev);
  ProfileOrRelease(ctx, t, ev);
  PDK_RETURN_IF_ERROR(ClBlastStatus(code, "CLBlastSgemmBatched"));
  clFlush(q);
  return pdk::Status::OK();
}

}  // namespace pdk_opencl

namespace tensorflow {

using pdk_opencl::GemmBatched;

// kind: 0 MatMul, 1 BatchMatMul, 2 BatchMatMulV2.
template <int kKind>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    if (kKind == 0) {
      OP_REQUIRES_OK(c, c->GetAttr("transpose_a", &trans_x_));
      OP_REQUIRES_OK(c, c->GetAttr("transpose_b", &trans_y_));
    } else {
      OP_REQUIRES_OK(c, c->GetAttr("adj_x", &trans_x_));
      OP_REQUIRES_OK(c, c->GetAttr("adj_y", &trans_y_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const int xr = x.dims(), yr = y.dims();
    if (kKind == 2) {
      OP_REQUIRES(ctx, xr >= 2, errors::InvalidArgument("In[0] ndims must be >= 2: ", xr));
      OP_REQUIRES(ctx, yr >= 2, errors::InvalidArgument("In[1] ndims must be >= 2: ", yr));
    } else {
      OP_REQUIRES(ctx, xr == yr,
                  errors::InvalidArgument("In[0] and In[1] has different ndims: ",
                                          x.shape().DebugString(), " vs. ",
                                          y.shape().DebugString()));
      if (kKind == 0) {
        OP_REQUIRES(ctx, xr == 2,
                    errors::InvalidArgument("In[0] and In[1] ndims must be == 2: ", xr));
      } else {
        OP_REQUIRES(ctx, xr >= 2,
                    errors::InvalidArgument("In[0] and In[1] ndims must be >= 2: ", xr));
        for (int i = 0; i < xr - 2; ++i)
          OP_REQUIRES(ctx, x.dim_size(i) == y.dim_size(i),
                      errors::InvalidArgument("In[0].dim(", i, ") and In[1].dim(", i,
                                              ") must be the same: ", x.shape().DebugString(),
                                              " vs ", y.shape().DebugString()));
      }
    }
    // Broadcast batch dimensions (aligned on the right).
    const int xb = xr - 2, yb = yr - 2, ob = std::max(xb, yb);
    std::vector<int64> out_batch(ob), xdim(ob, 1), ydim(ob, 1);
    for (int i = 0; i < ob; ++i) {
      const int xi = i - (ob - xb), yi = i - (ob - yb);
      if (xi >= 0) xdim[i] = x.dim_size(xi);
      if (yi >= 0) ydim[i] = y.dim_size(yi);
      bool ok = xdim[i] == ydim[i] || xdim[i] == 1 || ydim[i] == 1;
      OP_REQUIRES(ctx, ok,
                  errors::InvalidArgument(
                      "In[0] and In[1] must have compatible batch dimensions: ",
                      x.shape().DebugString(), " vs. ", y.shape().DebugString()));
      out_batch[i] = xdim[i] == 1 ? ydim[i] : xdim[i];
    }
    int64 d0 = x.dim_size(xr - 2), d1 = x.dim_size(xr - 1);
    int64 d2 = y.dim_size(yr - 2), d3 = y.dim_size(yr - 1);
    const int64 x_rows = d0, x_cols = d1, y_cols = d3;
    if (trans_x_) std::swap(d0, d1);
    if (trans_y_) std::swap(d2, d3);
    OP_REQUIRES(ctx, d1 == d2,
                errors::InvalidArgument("Matrix size-incompatible: In[0]: ",
                                        x.shape().DebugString(), ", In[1]: ",
                                        y.shape().DebugString()));
    TensorShape out_shape(out_batch);
    OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(d0));
    OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(d3));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    if (x.NumElements() == 0 || y.NumElements() == 0) {
      OP_REQUIRES_OK(ctx, pdk_opencl::Zero(ctx, out));
      return;
    }
    // One GEMM per output batch element, at the broadcast inputs' offsets.
    int64 batch = 1;
    for (int64 d : out_batch) batch *= d;
    std::vector<size_t> xo(batch), yo(batch), oo(batch);
    const int64 xmat = x_rows * x_cols, ymat = d2 * d3 /* == y's own matrix size */;
    const int64 omat = d0 * d3;
    for (int64 b = 0; b < batch; ++b) {
      int64 rem = b, xi = 0, yi = 0, xs = 1, ys = 1;
      for (int i = ob - 1; i >= 0; --i) {
        const int64 idx = rem % out_batch[i];
        rem /= out_batch[i];
        if (xdim[i] != 1) xi += idx * xs;
        if (ydim[i] != 1) yi += idx * ys;
        xs *= xdim[i];
        ys *= ydim[i];
      }
      xo[b] = static_cast<size_t>(xi * xmat);
      yo[b] = static_cast<size_t>(yi * ymat);
      oo[b] = static_cast<size_t>(b * omat);
    }
    OP_REQUIRES_OK(ctx, GemmBatched(ctx, trans_x_, trans_y_, d0, d3, d1, 1.0f, x, xo, x_cols, y,
                                    yo, y_cols, 0.0f, *out, oo, d3));
  }

 private:
  bool trans_x_ = false, trans_y_ = false;
};

REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        MatMulOp<0>);
REGISTER_KERNEL_BUILDER(Name("BatchMatMul").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        MatMulOp<1>);
REGISTER_KERNEL_BUILDER(Name("BatchMatMulV2").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        MatMulOp<2>);

}  // namespace tensorflow
