// Relu and ReluGrad on OPENCL (cl/relu.cl).
#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;
using pdk_opencl::KernelName;

class ReluOp : public OpKernel {
 public:
  explicit ReluOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const int64 n = x.NumElements();
    OP_REQUIRES_OK(ctx, Enqueue(ctx, KernelName("relu", x.dtype()), n, {x, *y, Arg::I64(n)}));
  }
};

// TensorFlow's ReluGrad: (gradients, features) of one shape -> backprops.
class ReluGradOp : public OpKernel {
 public:
  explicit ReluGradOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& x = ctx->input(1);
    OP_REQUIRES(ctx, g.IsSameSize(x),
                errors::InvalidArgument("g and a must be the same size, got g: ",
                                        g.shape().DebugString(), " and a: ",
                                        x.shape().DebugString()));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, g.shape(), &y));
    const int64 n = g.NumElements();
    OP_REQUIRES_OK(ctx,
                   Enqueue(ctx, KernelName("relu_grad", g.dtype()), n, {g, x, *y, Arg::I64(n)}));
  }
};

REGISTER_KERNEL_BUILDER(Name("Relu").Device(DEVICE_OPENCL).TypeConstraint<float>("T"), ReluOp);
REGISTER_KERNEL_BUILDER(Name("ReluGrad").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        ReluGradOp);

}  // namespace tensorflow
