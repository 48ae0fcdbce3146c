// Kernels of the HELLO device in TensorFlow's style (pdk/tf/op_kernel.h), and
// an op of its own.
//
//   Square(x: float) -> y = x * x            (TensorFlow's op, HELLO's kernel)
//   HelloScale(x: float; factor: float = 2) -> y = factor * x, shape of x
//     (an op TensorFlow does not have, with a shape function)
#include "pdk/tf/op_kernel.h"

namespace tensorflow {

constexpr char DEVICE_HELLO[] = "HELLO";

class SquareOp : public OpKernel {
 public:
  explicit SquareOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    y->flat<float>().device(ctx->eigen_device<Eigen::ThreadPoolDevice>()) = x.flat<float>().square();
  }
};
REGISTER_KERNEL_BUILDER(Name("Square").Device(DEVICE_HELLO).TypeConstraint<float>("T"), SquareOp);

REGISTER_OP("HelloScale")
    .Input("x: float")
    .Output("y: float")
    .Attr("factor: float = 2.0")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(0));
      return OkStatus();
    });

class HelloScaleOp : public OpKernel {
 public:
  explicit HelloScaleOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("factor", &factor_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    y->flat<float>().device(ctx->eigen_device<Eigen::ThreadPoolDevice>()) = x.flat<float>() * factor_;
  }

 private:
  float factor_ = 2.0f;
};
REGISTER_KERNEL_BUILDER(Name("HelloScale").Device(DEVICE_HELLO), HelloScaleOp);

}  // namespace tensorflow
