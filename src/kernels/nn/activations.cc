// Smooth activation functions and their gradients (tensorflow/core/ops/nn_ops.cc),
// float32 and float64, elementwise, outputs shaped like the inputs:
//
//   Selu(x)             = x < 0 ? scale_alpha * (exp(x) - 1) : scale * x
//   SeluGrad(g, y)      = y < 0 ? g * (y + scale_alpha) : g * scale     (y = Selu(x))
//       scale = 1.0507009873554804934193349852946,
//       scale_alpha = scale * alpha = 1.7580993408473768599402175208123
//       (Klambauer et al. 2017, https://arxiv.org/abs/1706.02515; constants and
//       formulas as in tensorflow/core/kernels/relu_op_functor.h)
//   Softplus(x)         = log(1 + exp(x)), evaluated as TF does
//       (tensorflow/core/kernels/softplus_op.h): with t = log(epsilon(T)) + 2,
//       x > -t -> x;  x < t -> exp(x);  otherwise log1p(exp(x))
//   SoftplusGrad(g, x)  = g / (exp(-x) + 1)
//   Softsign(x)         = x / (|x| + 1)
//   SoftsignGrad(g, x)  = g / (|x| + 1)^2       (tensorflow/core/kernels/softsign_op.h)
//
// The gradient ops take (gradients, features) — SeluGrad takes (gradients,
// outputs) — of one shape; a mismatch is InvalidArgument naming both shapes.
// There is no other failure mode: NaN propagates, ±inf follow IEEE arithmetic
// as in TensorFlow's CPU kernels. Each kernel is one fused Eigen expression
// on the device's thread pool; outputs reuse an input buffer when TF allows.
// The forward ops are pdk_compute::UnaryOp (compute/unary.h), the gradients
// activation_op.h's ActivationGradOp, the kernel of the Relu family's
// gradients (relu.cc).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cmath>

#include "compute/eigen.h"
#include "compute/unary.h"
#include "kernels/nn/activation_op.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using ::pdk_compute::UnaryOp;
using ::pdk_kernels::ActivationGradOp;

template <class T>
constexpr T kSeluScale = T(1.0507009873554804934193349852946);
template <class T>
constexpr T kSeluScaleAlpha = T(1.7580993408473768599402175208123);

// ------------------------------------------------------------------ forward

struct SeluFn {
  template <class X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return (x < T(0)).select(kSeluScaleAlpha<T> * (x.exp() - x.constant(T(1))),
                             x * kSeluScale<T>);
  }
};

struct SoftplusFn {
  template <class X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    // Below t, exp(x) is softplus(x) within epsilon; above -t, x is.
    static const T t = std::log(Eigen::NumTraits<T>::epsilon()) + T(2);
    const auto e = x.exp();
    return (x > x.constant(-t)).select(x, (x < x.constant(t)).select(e, e.log1p()));
  }
};

struct SoftsignFn {
  template <class X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return x / (x.abs() + x.constant(T(1)));
  }
};


// ---------------------------------------------------------------- gradients
// In relu_functors.h's form: Fn()(g, x_or_y, alpha), alpha unused.

struct SeluGradFn {
  static constexpr const char* kSecond = "outputs";
  template <class T, class G, class Y>
  auto operator()(const G& g, const Y& y, T) const {
    return (y < T(0)).select(g * (y + kSeluScaleAlpha<T>), g * kSeluScale<T>);
  }
};

struct SoftplusGradFn {
  static constexpr const char* kSecond = "features";
  template <class T, class G, class X>
  auto operator()(const G& g, const X& x, T) const {
    return g / ((-x).exp() + x.constant(T(1)));
  }
};

struct SoftsignGradFn {
  static constexpr const char* kSecond = "features";
  template <class T, class G, class X>
  auto operator()(const G& g, const X& x, T) const {
    return g / (x.abs() + x.constant(T(1))).square();
  }
};

#define PDK_REGISTER_SMOOTH_ACTIVATIONS_(T)                                                  \
  REGISTER_KERNEL_BUILDER(Name("Selu").Device(DEVICE_PDK).TypeConstraint<T>("T"),            \
                          UnaryOp<T, SeluFn>);                                               \
  REGISTER_KERNEL_BUILDER(Name("Softplus").Device(DEVICE_PDK).TypeConstraint<T>("T"),        \
                          UnaryOp<T, SoftplusFn>);                                           \
  REGISTER_KERNEL_BUILDER(Name("Softsign").Device(DEVICE_PDK).TypeConstraint<T>("T"),        \
                          UnaryOp<T, SoftsignFn>);                                           \
  REGISTER_KERNEL_BUILDER(Name("SeluGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"),        \
                          ActivationGradOp<T, SeluGradFn>);                                  \
  REGISTER_KERNEL_BUILDER(Name("SoftplusGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"),    \
                          ActivationGradOp<T, SoftplusGradFn>);                              \
  REGISTER_KERNEL_BUILDER(Name("SoftsignGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"),    \
                          ActivationGradOp<T, SoftsignGradFn>);
PDK_REGISTER_SMOOTH_ACTIVATIONS_(float)
PDK_REGISTER_SMOOTH_ACTIVATIONS_(double)
#undef PDK_REGISTER_SMOOTH_ACTIVATIONS_

}  // namespace
}  // namespace tensorflow
