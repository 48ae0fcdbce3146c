// The functors of the Relu family (src/kernels/nn/relu.cc, whose header gives
// the formulas and TensorFlow's conventions they follow), shared with
// _PdkFusedElementwise (src/kernels/math/fused_elementwise.cc) so a fused
// group computes each element with the same code as the standalone kernels.
//
//   forward:  Fn()(x, alpha) -> Eigen expression of x's shape
//   gradient: Fn()(g, x_or_y, alpha) -> Eigen expression of g's shape;
//             Fn::kSecond names input 1 ("features", or "outputs" for EluGrad)
//             in the kernels' shape-mismatch error (activation_op.h)
// x, g: Eigen tensor expressions of element type T (float types); alpha: the
// LeakyRelu slope (ignored by the others).
#ifndef PDK_SRC_KERNELS_NN_RELU_FUNCTORS_H_
#define PDK_SRC_KERNELS_NN_RELU_FUNCTORS_H_

#include <type_traits>

#include "compute/eigen.h"

namespace pdk_kernels {
namespace relu {

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

// ---------------------------------------------------------------- gradients

// The 0/1 masks are built with select rather than cast<T>() of the boolean
// comparison: Eigen 3.4 does not vectorize bool -> float casts, select is.
// For half and bfloat16 the product is taken in float32 and rounded to T, as
// Eigen's 16-bit operator* does for each element (the mask 0/1 and the
// comparison are exact in float): Eigen vectorizes the casts but not a
// 16-bit select, and the float path is 2-3x faster (docs/benchmarks.md,
// "bfloat16 ReluGrad").
struct ReluGradFn {
  static constexpr const char* kSecond = "features";
  template <class T, class G, class X>
  auto operator()(const G& g, const X& x, T) const {
    if constexpr (std::is_same_v<T, Eigen::bfloat16> || std::is_same_v<T, Eigen::half>) {
      const auto xf = x.template cast<float>();
      return (g.template cast<float>() * (xf > 0.0f).select(xf.constant(1.0f), xf.constant(0.0f)))
          .template cast<T>();
    } else {
      return g * (x > T(0)).select(x.constant(T(1)), x.constant(T(0)));
    }
  }
};

struct Relu6GradFn {
  static constexpr const char* kSecond = "features";
  template <class T, class G, class X>
  auto operator()(const G& g, const X& x, T) const {
    const auto one = x.constant(T(1)), zero = x.constant(T(0));
    return g * ((x > T(0)).select(one, zero) * (x < T(6)).select(one, zero));
  }
};

// Input 1 is Elu's output y, not its input: dElu/dx = exp(x) = y + 1 for x < 0.
struct EluGradFn {
  static constexpr const char* kSecond = "outputs";
  template <class T, class G, class Y>
  auto operator()(const G& g, const Y& y, T) const {
    return (y < T(0)).select((y + T(1)) * g, g);
  }
};

struct LeakyReluGradFn {
  static constexpr const char* kSecond = "features";
  template <class T, class G, class X>
  auto operator()(const G& g, const X& x, T alpha) const {
    return (x > T(0)).select(g, g * alpha);
  }
};

}  // namespace relu
}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_NN_RELU_FUNCTORS_H_
