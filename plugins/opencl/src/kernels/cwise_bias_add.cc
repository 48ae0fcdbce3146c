// BiasAdd, BiasAddV1 and BiasAddGrad on OPENCL, float32. BiasAdd runs the
// broadcast add of cl/cwise_binary.cl; BiasAddGrad cl/cwise_bias_add.cl.
//   BiasAdd(value [rank >= 2], bias [C]) with data_format NHWC (C last) or
//   NCHW (C is dimension 1); BiasAddV1: NHWC.
//   BiasAddGrad(out_backprop) -> [C]: the sum over every other dimension.
// Checks and messages: TensorFlow's bias_op.cc.
#include <string>

#include "cwise_common.h"
#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;
namespace cw = pdk_opencl::cwise;

namespace {
Status ReadNchw(OpKernelConstruction* c, bool* nchw) {
  *nchw = false;
  if (!c->HasAttr("data_format")) return Status();
  std::string f;
  TF_RETURN_IF_ERROR(c->GetAttr("data_format", &f));
  if (f == "NCHW") {
    *nchw = true;
  } else if (f != "NHWC") {
    return errors::InvalidArgument("Invalid data format");
  }
  return Status();
}

// The [outer, C, inner] view of `shape` (rank >= 2).
void View(const TensorShape& shape, bool nchw, int64* outer, int64* c, int64* inner) {
  const int cd = nchw ? 1 : shape.dims() - 1;
  *outer = 1;
  *inner = 1;
  for (int d = 0; d < cd; ++d) *outer *= shape.dim_size(d);
  for (int d = cd + 1; d < shape.dims(); ++d) *inner *= shape.dim_size(d);
  *c = shape.dim_size(cd);
}
}  // namespace

class CwBiasAddOp : public OpKernel {
 public:
  explicit CwBiasAddOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadNchw(c, &nchw_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    OP_REQUIRES(ctx, TensorShapeUtils::IsMatrixOrHigher(x.shape()),
                errors::InvalidArgument("Input tensor must be at least 2D: ",
                                        x.shape().DebugString()));
    OP_REQUIRES(ctx, TensorShapeUtils::IsVector(bias.shape()),
                errors::InvalidArgument("Biases must be 1D: ", bias.shape().DebugString()));
    int64 outer = 0, c = 0, inner = 0;
    View(x.shape(), nchw_, &outer, &c, &inner);
    OP_REQUIRES(ctx, bias.dim_size(0) == c,
                errors::InvalidArgument(
                    "Must provide as many biases as the last dimension of the input tensor: ",
                    bias.shape().DebugString(), " vs. ", x.shape().DebugString()));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const int64 n = x.NumElements();
    if (n == 0) return;
    // y = x + bias as the broadcast add of [outer, C, inner] and [C, 1]
    // (cl/cwise_binary.cl's strided kernel).
    const TensorShape xs({outer, c, inner});
    const TensorShape bs({c, 1});
    const cw::Broadcast bc = cw::MakeBroadcast({&xs, &bs});
    if (bc.flat) {
      OP_REQUIRES_OK(ctx, Enqueue(ctx, "cw_add_f32", n,
                                  {x, bias, *y, Arg::I64(n), Arg::I64(bc.flat_step[0]),
                                   Arg::I64(bc.flat_step[1])}));
      return;
    }
    const cw::RowLaunch r = cw::RowsOf(bc);
    OP_REQUIRES_OK(ctx, Enqueue(ctx, "cw_add_bc_f32", r.items(),
                                {x, bias, *y, Arg::I64(r.rows), Arg::I64(r.inner),
                                 Arg::I64(r.chunks), Arg::Long8(bc.dims),
                                 Arg::Long8(bc.strides[0]), Arg::Long8(bc.strides[1])}));
  }

 private:
  bool nchw_ = false;
};

class CwBiasAddGradOp : public OpKernel {
 public:
  explicit CwBiasAddGradOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadNchw(c, &nchw_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    OP_REQUIRES(ctx, TensorShapeUtils::IsMatrixOrHigher(g.shape()),
                errors::InvalidArgument("Input tensor must be at least 2D: ",
                                        g.shape().DebugString()));
    int64 outer = 0, c = 0, inner = 0;
    View(g.shape(), nchw_, &outer, &c, &inner);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({c}), &y));
    if (c == 0) return;
    if (g.NumElements() == 0) {
      OP_REQUIRES_OK(ctx, pdk_opencl::Zero(ctx, y));
      return;
    }
    // Partial sums of blocks of kBlock values per channel, then their sum.
    constexpr int64 kBlock = 128;
    const int64 m = outer * inner;
    const int64 nb = (m + kBlock - 1) / kBlock;
    Tensor part;
    OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({nb, c}), &part));
    OP_REQUIRES_OK(ctx, Enqueue(ctx, "cw_bias_grad_partial_f32", nb * c,
                                {g, part, Arg::I64(c), Arg::I64(inner), Arg::I64(m),
                                 Arg::I64(kBlock), Arg::I64(nb)}));
    OP_REQUIRES_OK(ctx, Enqueue(ctx, "cw_bias_grad_final_f32", c,
                                {part, *y, Arg::I64(c), Arg::I64(nb)}));
  }

 private:
  bool nchw_ = false;
};

REGISTER_KERNEL_BUILDER(Name("BiasAdd").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        CwBiasAddOp);
REGISTER_KERNEL_BUILDER(Name("BiasAddV1").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        CwBiasAddOp);
REGISTER_KERNEL_BUILDER(Name("BiasAddGrad").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        CwBiasAddGradOp);

}  // namespace tensorflow
