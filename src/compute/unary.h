// The one elementwise unary kernel: y = F::Apply(x), shaped like x, as a
// TF-style kernel (pdk/tf/op_kernel.h):
//   REGISTER_KERNEL_BUILDER(Name("Exp").Device(DEVICE_PDK).TypeConstraint<T>("T"),
//                           pdk_compute::UnaryOp<T, unary::Exp>);
//
// F is a functor with `static auto Apply(const X& x)` over an Eigen tensor
// expression X (e.g. `x.exp()`). T: the element type; float16/bfloat16 are
// computed in float32 and rounded once. The output reuses x's buffer when
// TensorFlow allows it (the input handle is released first: a held handle
// blocks the forward). Used by src/kernels/math/cwise_unary.cc, erf.cc and
// src/kernels/nn/activations.cc. Errors: allocation only.
#ifndef PDK_SRC_COMPUTE_UNARY_H_
#define PDK_SRC_COMPUTE_UNARY_H_

#include <cstdint>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_compute {

template <class T, class F>
class UnaryOp : public tensorflow::OpKernel {
 public:
  explicit UnaryOp(tensorflow::OpKernelConstruction* c) : tensorflow::OpKernel(c) {}
  void Compute(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);  // a borrowed view: does not block forwarding
    tensorflow::Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const int64_t n = x.NumElements();
    if (n == 0) return;
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    const T* x_data = static_cast<const T*>(x.data());
    T* y_data = static_cast<T*>(y->data());
    if constexpr (kIsHalfLike<T>) {  // computed in float32, rounded once
      pdk_compute::Assign(
          dev, Flat<T>(y_data, n),
          F::Apply(ConstFlat<T>(x_data, n).template cast<float>()).template cast<T>());
    } else {
      pdk_compute::Assign(dev, Flat<T>(y_data, n), F::Apply(ConstFlat<T>(x_data, n)));
    }
  }
};

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_UNARY_H_
