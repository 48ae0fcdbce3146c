// L2Loss(t) -> output = sum(t^2) / 2, a scalar of t's dtype (tf.nn.l2_loss,
// TensorFlow's weight-decay term): float32, float64, float16, bfloat16.
// Computed as TensorFlow's CPU kernel writes it (tensorflow/core/kernels/
// l2loss_op.cc: (t.square() * T(0.5)).sum() with Eigen on the device's pool),
// so the summation order is Eigen's tree reduction; an empty t gives 0.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include "compute/eigen.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

template <class T>
class L2LossOp : public OpKernel {
 public:
  explicit L2LossOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
    Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor, Eigen::Index>> in(
        t.flat<T>().data(), t.NumElements());
    Eigen::TensorMap<Eigen::Tensor<T, 0, Eigen::RowMajor, Eigen::Index>> sum(out->flat<T>().data());
    sum.device(ctx->eigen_device<Eigen::ThreadPoolDevice>()) = (in.square() * T(0.5)).sum();
  }
};

#define PDK_REGISTER_L2LOSS_(T) \
  REGISTER_KERNEL_BUILDER(Name("L2Loss").Device(DEVICE_PDK).TypeConstraint<T>("T"), L2LossOp<T>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_L2LOSS_)  // float16, bfloat16, float32, float64
#undef PDK_REGISTER_L2LOSS_

}  // namespace
}  // namespace tensorflow
