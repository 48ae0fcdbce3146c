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
#include <cmath>
#include <type_traits>

#include "compute/eigen.h"
#include "compute/unary.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

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

struct SeluGradFn {
  static constexpr const char* kSecond = "outputs";
  template <class G, class Y>
  static auto Apply(const G& g, const Y& y) {
    using T = typename G::Scalar;
    return (y < T(0)).select(g * (y + kSeluScaleAlpha<T>), g * kSeluScale<T>);
  }
};

struct SoftplusGradFn {
  static constexpr const char* kSecond = "features";
  template <class G, class X>
  static auto Apply(const G& g, const X& x) {
    using T = typename G::Scalar;
    return g / ((-x).exp() + x.constant(T(1)));
  }
};

struct SoftsignGradFn {
  static constexpr const char* kSecond = "features";
  template <class G, class X>
  static auto Apply(const G& g, const X& x) {
    using T = typename G::Scalar;
    return g / (x.abs() + x.constant(T(1))).square();
  }
};

template <class T, class Fn>
class GradOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    const T *g_data, *x_data;
    pdk::Shape shape;
    {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor g, ctx.input(0));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(1));
      shape = g.shape();
      PDK_RETURN_IF_ERROR(
          pdk::CheckSameShape(ctx.op(), "gradients", shape, Fn::kSecond, x.shape()));
      g_data = g.data<T>();
      x_data = x.data<T>();
    }
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dx, ctx.forward_or_allocate_output({0, 1}, 0, shape));
    const int64_t n = shape.num_elements();
    if (n == 0) return pdk::Status::OK();
    pdk_compute::Flat<T>(dx.data<T>(), n).device(pdk_compute::Device(ctx)) =
        Fn::Apply(pdk_compute::ConstFlat<T>(g_data, n), pdk_compute::ConstFlat<T>(x_data, n));
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(NnSmoothActivations, r) {
  pdk::ForEachType(pdk::TypeList<float, double>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<pdk_compute::KitUnaryOp<T, SeluFn>>("Selu").Type("T", t));
    r.Add(pdk::KernelDef<pdk_compute::KitUnaryOp<T, SoftplusFn>>("Softplus").Type("T", t));
    r.Add(pdk::KernelDef<pdk_compute::KitUnaryOp<T, SoftsignFn>>("Softsign").Type("T", t));
    r.Add(pdk::KernelDef<GradOp<T, SeluGradFn>>("SeluGrad").Type("T", t));
    r.Add(pdk::KernelDef<GradOp<T, SoftplusGradFn>>("SoftplusGrad").Type("T", t));
    r.Add(pdk::KernelDef<GradOp<T, SoftsignGradFn>>("SoftsignGrad").Type("T", t));
  });
}

}  // namespace pdk_kernels
