// The kernels of elementwise activations and their gradients, shared by
// src/kernels/nn/relu.cc (Relu family) and src/kernels/nn/activations.cc
// (Selu, Softplus, Softsign gradients). Written in TensorFlow's kernel style
// (pdk/tf/op_kernel.h).
//
//   UnaryActivationOp<T, Fn, HasAlpha>:  y = Fn()(x, alpha)
//   ActivationGradOp<T, Fn, HasAlpha>:   dx = Fn()(gradients, second, alpha)
//
// Fn: a functor over Eigen tensor expressions of element type T (the form of
// relu_functors.h); alpha: a T, read from the `alpha` attribute when HasAlpha
// (LeakyRelu, LeakyReluGrad; default 0.2 as in nn_ops.cc), else T(0), which
// the functor ignores. A gradient functor names input 1 in `kSecond`
// ("features", or "outputs" where the gradient is taken from the op's output,
// EluGrad and SeluGrad).
//
// Each kernel is one fused Eigen expression on the device's thread pool, in
// T's own arithmetic (Eigen's for the 16-bit floats). Outputs reuse an input
// buffer when TensorFlow allows it (inputs are borrowed views, so nothing of
// the kernel's holds them).
//
// Errors: a gradient whose two inputs differ in shape is InvalidArgument,
// "<op>: gradients.shape [..] != <kSecond>.shape [..]"; otherwise allocation
// only.
#ifndef PDK_SRC_KERNELS_NN_ACTIVATION_OP_H_
#define PDK_SRC_KERNELS_NN_ACTIVATION_OP_H_

#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_kernels {

// y = Fn()(x, alpha), elementwise.
template <class T, class Fn, bool HasAlpha = false>
class UnaryActivationOp : public tensorflow::OpKernel {
 public:
  explicit UnaryActivationOp(tensorflow::OpKernelConstruction* c) : tensorflow::OpKernel(c) {
    if constexpr (HasAlpha) {
      float alpha = 0.2f;  // nn_ops.cc default
      if (c->HasAttr("alpha")) OP_REQUIRES_OK(c, c->GetAttr("alpha", &alpha));
      alpha_ = static_cast<T>(alpha);
    }
  }

  void Compute(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);
    tensorflow::Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    if (x.NumElements() == 0) return;
    pdk_compute::Assign(ctx->eigen_device<Eigen::ThreadPoolDevice>(), y->flat<T>(),
                        Fn()(x.flat<T>(), alpha_));
  }

 private:
  T alpha_ = T(0);
};

// dx = Fn()(gradients, features-or-outputs, alpha). Both inputs must have one shape.
template <class T, class Fn, bool HasAlpha = false>
class ActivationGradOp : public tensorflow::OpKernel {
 public:
  explicit ActivationGradOp(tensorflow::OpKernelConstruction* c) : tensorflow::OpKernel(c) {
    if constexpr (HasAlpha) {
      float alpha = 0.2f;  // nn_ops.cc default
      if (c->HasAttr("alpha")) OP_REQUIRES_OK(c, c->GetAttr("alpha", &alpha));
      alpha_ = static_cast<T>(alpha);
    }
  }

  void Compute(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& g = ctx->input(0);
    const tensorflow::Tensor& x = ctx->input(1);
    OP_REQUIRES_OK(ctx, ::pdk::CheckSameShape(type_string().c_str(), "gradients",
                                              g.shape().pdk_shape(), Fn::kSecond,
                                              x.shape().pdk_shape()));
    tensorflow::Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, g.shape(), &dx));
    if (g.NumElements() == 0) return;
    pdk_compute::Assign(ctx->eigen_device<Eigen::ThreadPoolDevice>(), dx->flat<T>(),
                        Fn()(g.flat<T>(), x.flat<T>(), alpha_));
  }

 private:
  T alpha_ = T(0);
};

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_NN_ACTIVATION_OP_H_
