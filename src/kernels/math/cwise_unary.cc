// Elementwise unary ops: y = f(x), y shaped like x.
//
//   Neg, Square, Abs, Sign, Round: float32, float64, int32, int64
//       (Round is half-to-even; on integers it returns x itself)
//   Sqrt, Rsqrt, Exp, Log, Log1p, Reciprocal, Floor, Ceil, Sigmoid, Tanh,
//   Sin, Cos, Tan, Asin, Acos, Atan: float32, float64
//   LogicalNot: bool
//   float16, bfloat16: all of the float32 ops above, computed in float32 and
//       rounded once (as Eigen's own 16-bit math does, without per-op rounding)
// No op here has a failure mode beyond allocation: out-of-domain inputs give
// NaN/inf as in TensorFlow. The output reuses x's buffer when TensorFlow allows.
#include <cstdint>
#include <type_traits>

#include "compute/eigen.h"
#include "compute/unary.h"
#include "kernels/math/cwise_functors.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

using pdk_compute::KitUnaryOp;

// y = x without a copy (Round on integers).
class PassThroughOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    return ctx.set_output(0, x);
  }
};

PDK_REGISTER_KERNELS(CwiseUnary, r) {
  pdk::ForEachType(pdk::TypeList<float, double, int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(Int32OnHost<T>(pdk::KernelDef<KitUnaryOp<T, unary::Neg>>("Neg").Type("T", t), {"x", "y"}));
    r.Add(Int32OnHost<T>(pdk::KernelDef<KitUnaryOp<T, unary::Square>>("Square").Type("T", t), {"x", "y"}));
    r.Add(Int32OnHost<T>(pdk::KernelDef<KitUnaryOp<T, unary::Abs>>("Abs").Type("T", t), {"x", "y"}));
    r.Add(Int32OnHost<T>(pdk::KernelDef<KitUnaryOp<T, unary::Sign>>("Sign").Type("T", t), {"x", "y"}));
    if constexpr (std::is_integral_v<T>) {
      r.Add(Int32OnHost<T>(pdk::KernelDef<PassThroughOp>("Round").Type("T", t), {"x", "y"}));
    } else {
      r.Add(Int32OnHost<T>(pdk::KernelDef<KitUnaryOp<T, unary::Round>>("Round").Type("T", t), {"x", "y"}));
    }
  });
  pdk::ForEachType(pdk::TypeList<Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Neg>>("Neg").Type("T", t));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Square>>("Square").Type("T", t));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Abs>>("Abs").Type("T", t));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Sign>>("Sign").Type("T", t));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Round>>("Round").Type("T", t));
  });
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Sqrt>>("Sqrt").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Rsqrt>>("Rsqrt").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Exp>>("Exp").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Log>>("Log").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Log1p>>("Log1p").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Reciprocal>>("Reciprocal").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Floor>>("Floor").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Ceil>>("Ceil").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Sigmoid>>("Sigmoid").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Tanh>>("Tanh").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Sin>>("Sin").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Cos>>("Cos").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Tan>>("Tan").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Asin>>("Asin").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Acos>>("Acos").template Type<T>("T"));
    r.Add(pdk::KernelDef<KitUnaryOp<T, unary::Atan>>("Atan").template Type<T>("T"));
  });
  // In host memory with LogicalAnd and LogicalOr (cwise_binary.cc).
  r.Add(pdk::KernelDef<KitUnaryOp<bool, unary::LogicalNot>>("LogicalNot").HostMemory("x").HostMemory("y"));
}

}  // namespace
}  // namespace pdk_kernels
