// Activation functions and their gradients (tensorflow/core/ops/nn_ops.cc):
//
//   Relu(x)            = max(x, 0)                    (NaN stays NaN)
//   ReluGrad(g, x)     = g * (x > 0)
//   Relu6(x)           = min(max(x, 0), 6)            (NaN stays NaN)
//   Relu6Grad(g, x)    = g * (0 < x < 6)
//   Elu(x)             = x < 0 ? exp(x) - 1 : x
//   EluGrad(g, y)      = y < 0 ? g * (y + 1) : g      (y = Elu(x); dy/dx = exp(x) = y + 1)
//   LeakyRelu(x)       = x > 0 ? x : alpha * x        (alpha may be > 1 or < 0)
//   LeakyReluGrad(g,x) = x > 0 ? g : alpha * g
//
// Boundary conventions follow TensorFlow's CPU functors: the Relu/Relu6
// gradients are 0 at x = 0 (and at x = 6 for Relu6), LeakyReluGrad takes the
// alpha branch at x = 0, and EluGrad takes the pass-through branch at y = 0.
// The gradients multiply by a 0/1 mask (rather than select) as TF does, so
// g = inf with a closed gate gives NaN there too.
//
// T in {float32, float64, float16, bfloat16} (the 16-bit floats use Eigen's
// own arithmetic: each operation in float, rounded to T).
//
// Each kernel is a single fused Eigen expression evaluated on the device's
// thread pool; outputs reuse an input buffer when TensorFlow allows it.
#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

using pdk_compute::cflat;
using pdk_compute::flat;

// ------------------------------------------------------------------ forward

struct ReluFn {
  template <class T, class X>
  auto operator()(const X& x, T) const {
    return x.template cwiseMax<Eigen::PropagateNaN>(T(0));
  }
};

struct Relu6Fn {
  template <class T, class X>
  auto operator()(const X& x, T) const {
    return x.template cwiseMax<Eigen::PropagateNaN>(T(0))
        .template cwiseMin<Eigen::PropagateNaN>(T(6));
  }
};

struct EluFn {
  template <class T, class X>
  auto operator()(const X& x, T) const {
    // exp(x) - 1 rather than expm1(x): TensorFlow's CPU kernel computes it
    // this way, and the result must match it.
    return (x < T(0)).select(x.exp() - x.constant(T(1)), x);
  }
};

struct LeakyReluFn {
  template <class T, class X>
  auto operator()(const X& x, T alpha) const {
    return (x > T(0)).select(x, x * alpha);
  }
};

// y = Fn(x), elementwise. `HasAlpha` reads the `alpha` attribute (LeakyRelu).
template <class T, class Fn, bool HasAlpha = false>
class UnaryActivationOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    if constexpr (HasAlpha) {
      float alpha = 0.2f;  // nn_ops.cc default
      PDK_RETURN_IF_ERROR(a.GetOptional("alpha", &alpha));
      alpha_ = static_cast<T>(alpha);
    }
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    const pdk::Shape shape = x.shape();
    PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.forward_or_allocate_output({0}, 0, shape));
    if (x.num_elements() == 0) return pdk::Status::OK();
    flat<T>(y).device(pdk_compute::Device(ctx)) = Fn()(cflat<T>(x), alpha_);
    return pdk::Status::OK();
  }

 private:
  T alpha_ = T(0);
};

// ---------------------------------------------------------------- gradients

// The 0/1 masks are built with select rather than cast<T>() of the boolean
// comparison: Eigen 3.4 does not vectorize bool -> float casts, select is.
struct ReluGradFn {
  template <class T, class G, class X>
  auto operator()(const G& g, const X& x, T) const {
    return g * (x > T(0)).select(x.constant(T(1)), x.constant(T(0)));
  }
};

struct Relu6GradFn {
  template <class T, class G, class X>
  auto operator()(const G& g, const X& x, T) const {
    const auto one = x.constant(T(1)), zero = x.constant(T(0));
    return g * ((x > T(0)).select(one, zero) * (x < T(6)).select(one, zero));
  }
};

// Input 1 is Elu's output y, not its input: dElu/dx = exp(x) = y + 1 for x < 0.
struct EluGradFn {
  template <class T, class G, class Y>
  auto operator()(const G& g, const Y& y, T) const {
    return (y < T(0)).select((y + T(1)) * g, g);
  }
};

struct LeakyReluGradFn {
  template <class T, class G, class X>
  auto operator()(const G& g, const X& x, T alpha) const {
    return (x > T(0)).select(g, g * alpha);
  }
};

// dx = Fn(gradients, features-or-outputs). Both inputs must have one shape.
template <class T, class Fn, bool HasAlpha = false>
class ActivationGradOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    if constexpr (HasAlpha) {
      float alpha = 0.2f;
      PDK_RETURN_IF_ERROR(a.GetOptional("alpha", &alpha));
      alpha_ = static_cast<T>(alpha);
    }
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor g, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(1));
    const pdk::Shape shape = g.shape();
    PDK_RETURN_IF_ERROR(
        pdk::CheckSameShape(ctx.op(), "gradients", shape, SecondName(), x.shape()));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dx, ctx.forward_or_allocate_output({0, 1}, 0, shape));
    if (g.num_elements() == 0) return pdk::Status::OK();
    flat<T>(dx).device(pdk_compute::Device(ctx)) = Fn()(cflat<T>(g), cflat<T>(x), alpha_);
    return pdk::Status::OK();
  }

 private:
  static constexpr const char* SecondName() {
    return std::is_same_v<Fn, EluGradFn> ? "outputs" : "features";
  }
  T alpha_ = T(0);
};

}  // namespace

PDK_REGISTER_KERNELS(NnActivations, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<UnaryActivationOp<T, ReluFn>>("Relu").Type("T", t));
    r.Add(pdk::KernelDef<UnaryActivationOp<T, Relu6Fn>>("Relu6").Type("T", t));
    r.Add(pdk::KernelDef<UnaryActivationOp<T, EluFn>>("Elu").Type("T", t));
    r.Add(pdk::KernelDef<UnaryActivationOp<T, LeakyReluFn, true>>("LeakyRelu").Type("T", t));
    r.Add(pdk::KernelDef<ActivationGradOp<T, ReluGradFn>>("ReluGrad").Type("T", t));
    r.Add(pdk::KernelDef<ActivationGradOp<T, Relu6GradFn>>("Relu6Grad").Type("T", t));
    r.Add(pdk::KernelDef<ActivationGradOp<T, EluGradFn>>("EluGrad").Type("T", t));
    r.Add(pdk::KernelDef<ActivationGradOp<T, LeakyReluGradFn, true>>("LeakyReluGrad")
              .Type("T", t));
  });
}

}  // namespace pdk_kernels
