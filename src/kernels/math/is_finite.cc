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
#include <cstdint>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
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
class ClassifyOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.allocate_output(0, x.shape()));
    if (x.num_elements() == 0) return pdk::Status::OK();
    pdk_compute::flat<bool>(y).device(pdk_compute::Device(ctx)) =
        pdk_compute::cflat<T>(x).unaryExpr(F());
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(MathIsFinite, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<ClassifyOp<T, IsFiniteFn>>("IsFinite").Type("T", t));
    r.Add(pdk::KernelDef<ClassifyOp<T, IsInfFn>>("IsInf").Type("T", t));
    r.Add(pdk::KernelDef<ClassifyOp<T, IsNanFn>>("IsNan").Type("T", t));
  });
}

}  // namespace pdk_kernels
