// IsFinite, IsInf, IsNan (tensorflow/core/ops/math_ops.cc): y = f(x) -> bool,
// elementwise, y shaped like x.
//
//   IsFinite(x) = x is neither infinite nor NaN
//   IsInf(x)    = x is +inf or -inf
//   IsNan(x)    = x is NaN
//
// T in {float32, float64, float16, bfloat16} (TensorFlow's CPU registrations).
// Keras's loss-scale optimizer (mixed_float16) runs IsFinite on every float32
// gradient each step, then All over the results (reduction_ops.cc).
// No failure mode beyond allocation.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

struct IsFiniteFn {
  template <class T>
  bool operator()(const T& x) const {
    return (Eigen::numext::isfinite)(x);
  }
};
struct IsInfFn {
  template <class T>
  bool operator()(const T& x) const {
    return (Eigen::numext::isinf)(x);
  }
};
struct IsNanFn {
  template <class T>
  bool operator()(const T& x) const {
    return (Eigen::numext::isnan)(x);
  }
};

template <class T, class F>
class ClassifyOp : public OpKernel {
 public:
  explicit ClassifyOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    if (x.NumElements() == 0) return;
    pdk_compute::Assign(ctx->eigen_device<Eigen::ThreadPoolDevice>(), y->flat<bool>(),
                        x.flat<T>().unaryExpr(F()));
  }
};

#define PDK_REGISTER_CLASSIFY_(T)                                                   \
  REGISTER_KERNEL_BUILDER(Name("IsFinite").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          ClassifyOp<T, IsFiniteFn>);                               \
  REGISTER_KERNEL_BUILDER(Name("IsInf").Device(DEVICE_PDK).TypeConstraint<T>("T"),    \
                          ClassifyOp<T, IsInfFn>);                                  \
  REGISTER_KERNEL_BUILDER(Name("IsNan").Device(DEVICE_PDK).TypeConstraint<T>("T"),    \
                          ClassifyOp<T, IsNanFn>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_CLASSIFY_)  // float16, bfloat16, float32, float64
#undef PDK_REGISTER_CLASSIFY_

}  // namespace
}  // namespace tensorflow
