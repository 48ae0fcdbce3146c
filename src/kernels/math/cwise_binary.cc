// Elementwise binary ops with NumPy broadcasting, and the y/dy gradient ops.
//
// Broadcasting ops (inputs x, y; output z of the broadcast shape):
//   AddV2, Sub, Mul, Maximum, Minimum, SquaredDifference, Pow, FloorDiv, FloorMod,
//   Div (v1: x / y for floats, truncating for integers; tf.compat.v1.div and
//   CollectiveReduceV2's final_op="Div");
//   Add (the v1 op tf.distribute and FusedBatchNorm's gradient emit; the same
//   kernel as AddV2, registered under both names):
//       float32, float64, int32, int64 (z has x's dtype)
//   RealDiv, DivNoNan: float32, float64
//   TruncateDiv: int32, int64 (C++'s truncating division)
//   Less, LessEqual, Greater, GreaterEqual: float32, float64, int32, int64 -> bool
//   Equal, NotEqual: float32, float64, int32, int64, bool -> bool; with
//       incompatible_shape_error=false, shapes that don't broadcast give a bool
//       scalar (false for Equal, true for NotEqual), as TensorFlow does
//   LogicalAnd, LogicalOr: bool
//   BitwiseAnd, BitwiseOr, BitwiseXor: int32, int64
// Gradient ops (inputs y, dy with equal element counts; output shaped like y):
//   SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad: float32, float64
// float16 and bfloat16 (computed in float32, rounded once, as Eigen's own
// 16-bit arithmetic does): AddV2, Add, Sub, Mul, Div, RealDiv, DivNoNan, Maximum, Minimum,
// SquaredDifference, Pow, Less, LessEqual, Greater, GreaterEqual and the five
// gradient ops.
//
// Errors (InvalidArgument): shapes that don't broadcast (message names both
// operands and shapes); integer Div/FloorDiv/FloorMod with a zero divisor
// ("Integer division by zero", TensorFlow's wording; integer TruncateDiv's is
// Internal "Unexpected error in binary operator ...", as TensorFlow's CPU); integer
// Pow with a negative exponent; gradient ops whose y and dy sizes differ.
#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "kernels/math/cwise_functors.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

namespace ei = Eigen::internal;

// Value checks run before evaluation: (op, x, y) -> Status.
struct NoCheck {
  pdk::Status operator()(const char*, const pdk::Tensor&, const pdk::Tensor&) const {
    return pdk::Status::OK();
  }
};
template <class T>
struct NonzeroDivisor {
  pdk::Status operator()(const char* op, const pdk::Tensor&, const pdk::Tensor& y) const {
    if constexpr (std::is_integral_v<T>) {
      const T* p = y.data<T>();
      for (int64_t i = 0, n = y.num_elements(); i < n; ++i)
        if (p[i] == 0) {
          // TensorFlow's BinaryOpShared::SetComputeError names Div, Mod,
          // FloorMod and FloorDiv; its TruncateDiv falls through to Internal.
          if (std::string_view(op) == "TruncateDiv")
            return pdk::Internal(
                "Unexpected error in binary operator (only integer div and mod should have "
                "errors) (", op, ": y[", i, "] == 0, integer division by zero)");
          return pdk::InvalidArgument("Integer division by zero (", op, ": y[", i, "] == 0)");
        }
    }
    return pdk::Status::OK();
  }
};
template <class T>
struct NonnegativeExponent {
  pdk::Status operator()(const char* op, const pdk::Tensor&, const pdk::Tensor& y) const {
    if constexpr (std::is_integral_v<T>) {
      const T* p = y.data<T>();
      for (int64_t i = 0, n = y.num_elements(); i < n; ++i)
        if (p[i] < 0)
          return pdk::InvalidArgument("Integers to negative integer powers are not allowed (", op,
                                      ": y[", i, "] == ", p[i], ")");
    }
    return pdk::Status::OK();
  }
};

// z = F(x, y) with broadcasting; T is the input dtype, Tout the output dtype.
template <class T, class Tout, class F, class Check = NoCheck>
class BinaryOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    const char* op = ctx.op();
    return pdk_compute::ComputeBinary<T, Tout>(
        ctx, F(), [op](const pdk::Tensor& x, const pdk::Tensor& y) { return Check()(op, x, y); });
  }
};

// Equal / NotEqual: like BinaryOp, plus attr incompatible_shape_error.
template <class T, class F, bool kNotEqual>
class EqualityOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    return a.GetOptional("incompatible_shape_error", &incompatible_shape_error_);
  }
  pdk::Status Compute(pdk::Context& ctx) const {
    if (!incompatible_shape_error_) {
      pdk::Shape xs, ys;
      {
        PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
        PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.input(1));
        xs = x.shape();
        ys = y.shape();
      }
      if (!pdk::BroadcastShapes(ctx.op(), "x", xs, "y", ys).ok()) {
        PDK_ASSIGN_OR_RETURN(pdk::Tensor z, ctx.allocate_output(0, pdk::Shape{}));
        *z.data<bool>() = kNotEqual;
        return pdk::Status::OK();
      }
    }
    return pdk_compute::ComputeBinary<T, bool>(ctx, F());
  }

 private:
  bool incompatible_shape_error_ = true;
};

// float16/bfloat16: z = F(float(x), float(y)), rounded once to T (Tout = T) or
// a bool (comparisons). F is the float32 functor. Same-shape and one-element
// operands are converted inside one flat Eigen expression; a general broadcast
// widens both operands to float32 scratch and reuses the float32 broadcast
// evaluation, so no new broadcast expressions are compiled for the 16-bit types.
template <class T, class Tout, class F>
class ViaFloatBinaryOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    const T* a;
    const T* b;
    pdk_compute::BroadcastPlan<2> plan;
    {  // released before forwarding (see pdk_compute::ComputeBinary)
      PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.input(1));
      PDK_ASSIGN_OR_RETURN(plan, pdk_compute::PlanBroadcast<2>(ctx.op(), {"x", "y"},
                                                                {x.shape(), y.shape()}));
      a = x.data<T>();
      b = y.data<T>();
    }
    pdk::Tensor out;
    if constexpr (std::is_same_v<T, Tout>) {
      PDK_ASSIGN_OR_RETURN(out, ctx.forward_or_allocate_output({0, 1}, 0, plan.out));
    } else {
      PDK_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, plan.out));
    }
    const int64_t n = plan.out.num_elements();
    if (n == 0) return pdk::Status::OK();
    const auto& dev = pdk_compute::Device(ctx);
    auto narrow = [](auto e) {
      if constexpr (std::is_same_v<Tout, bool>) {
        return e;
      } else {
        return e.template cast<Tout>();
      }
    };
    pdk_compute::Flat<Tout> o(out.data<Tout>(), n);
    if (plan.all_full()) {
      o.device(dev) = narrow(pdk_compute::ConstFlat<T>(a, n).template cast<float>().binaryExpr(
          pdk_compute::ConstFlat<T>(b, n).template cast<float>(), F()));
    } else if (plan.elems[0] == 1) {
      auto bv = pdk_compute::ConstFlat<T>(b, n).template cast<float>();
      o.device(dev) = narrow(bv.constant(static_cast<float>(*a)).binaryExpr(bv, F()));
    } else if (plan.elems[1] == 1) {
      auto av = pdk_compute::ConstFlat<T>(a, n).template cast<float>();
      o.device(dev) = narrow(av.binaryExpr(av.constant(static_cast<float>(*b)), F()));
    } else {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor af, ctx.allocate_temp(TF_FLOAT, {plan.elems[0]}));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor bf, ctx.allocate_temp(TF_FLOAT, {plan.elems[1]}));
      pdk_compute::Convert<T, float>(dev, a, af.data<float>(), plan.elems[0]);
      pdk_compute::Convert<T, float>(dev, b, bf.data<float>(), plan.elems[1]);
      if constexpr (std::is_same_v<Tout, bool>) {
        pdk_compute::EvalBinary<float, bool>(dev, plan, af.data<float>(), bf.data<float>(),
                                             out.data<bool>(), F());
      } else {
        PDK_ASSIGN_OR_RETURN(pdk::Tensor of, ctx.allocate_temp(TF_FLOAT, plan.out));
        pdk_compute::EvalBinary<float, float>(dev, plan, af.data<float>(), bf.data<float>(),
                                              of.data<float>(), F());
        pdk_compute::Convert<float, T>(dev, of.data<float>(), out.data<T>(), n);
      }
    }
    return pdk::Status::OK();
  }
};

// Gradient ops: z = F(y, dy), same element counts, z shaped like y. The 16-bit
// floats are computed in float32 (F is then the float functor).
template <class T, class F>
class GradOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    const T* y_data;
    const T* dy_data;
    pdk::Shape shape;
    {  // released before forwarding (see pdk_compute::ComputeBinary)
      PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.input(0));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor dy, ctx.input(1));
      if (y.num_elements() != dy.num_elements())
        return pdk::InvalidArgument(ctx.op(), ": y.shape ", y.shape(), " and dy.shape ",
                                    dy.shape(), " must have the same number of elements");
      shape = y.shape();
      y_data = y.data<T>();
      dy_data = dy.data<T>();
    }
    PDK_ASSIGN_OR_RETURN(pdk::Tensor z, ctx.forward_or_allocate_output({0, 1}, 0, shape));
    const int64_t n = shape.num_elements();
    if (n == 0) return pdk::Status::OK();
    if constexpr (pdk_compute::kIsHalfLike<T>) {
      pdk_compute::Flat<T>(z.data<T>(), n).device(pdk_compute::Device(ctx)) =
          pdk_compute::ConstFlat<T>(y_data, n)
              .template cast<float>()
              .binaryExpr(pdk_compute::ConstFlat<T>(dy_data, n).template cast<float>(), F())
              .template cast<T>();
    } else {
      pdk_compute::Flat<T>(z.data<T>(), n).device(pdk_compute::Device(ctx)) =
          pdk_compute::ConstFlat<T>(y_data, n).binaryExpr(pdk_compute::ConstFlat<T>(dy_data, n),
                                                          F());
    }
    return pdk::Status::OK();
  }
};

template <class T, class F, class Check = NoCheck>
using Same = BinaryOp<T, T, F, Check>;
template <class T, class F>
using ToBool = BinaryOp<T, bool, F>;
template <class T, Eigen::internal::ComparisonName kCmp>
using Cmp = ei::scalar_cmp_op<T, T, kCmp>;

template <class T>
using PowFunctor =
    std::conditional_t<std::is_integral_v<T>, functors::IntPow<T>, ei::scalar_pow_op<T, T>>;

using FloatTypes = pdk::TypeList<float, double>;
using RealTypes = pdk::TypeList<float, double, int32_t, int64_t>;

PDK_REGISTER_KERNELS(CwiseBinary, r) {
  pdk::ForEachType(RealTypes{}, [&](auto t) {
    using T = typename decltype(t)::type;
    auto add = [&](auto kernel, const char* op) {
      r.Add(Int32OnHost<T>(pdk::KernelDef<decltype(kernel)>(op).template Type<T>("T"),
                           {"x", "y", "z"}));
    };
    for (const char* op : {"AddV2", "Add"}) add(Same<T, ei::scalar_sum_op<T, T>>(), op);
    add(Same<T, ei::scalar_difference_op<T, T>>(), "Sub");
    add(Same<T, ei::scalar_product_op<T, T>>(), "Mul");
    add(Same<T, ei::scalar_max_op<T, T, Eigen::PropagateNaN>>(), "Maximum");
    add(Same<T, ei::scalar_min_op<T, T, Eigen::PropagateNaN>>(), "Minimum");
    add(Same<T, functors::SquaredDifference<T>>(), "SquaredDifference");
    add(Same<T, PowFunctor<T>, NonnegativeExponent<T>>(), "Pow");
    add(Same<T, functors::FloorDiv<T>, NonzeroDivisor<T>>(), "FloorDiv");
    if constexpr (std::is_integral_v<T>) {
      add(Same<T, functors::TruncateDiv<T>, NonzeroDivisor<T>>(), "Div");
      add(Same<T, functors::TruncateDiv<T>, NonzeroDivisor<T>>(), "TruncateDiv");
    } else {
      add(Same<T, ei::scalar_quotient_op<T, T>>(), "Div");
    }
    add(Same<T, functors::FloorMod<T>, NonzeroDivisor<T>>(), "FloorMod");
    add(ToBool<T, Cmp<T, Eigen::internal::cmp_LT>>(), "Less");
    add(ToBool<T, Cmp<T, Eigen::internal::cmp_LE>>(), "LessEqual");
    add(ToBool<T, Cmp<T, Eigen::internal::cmp_GT>>(), "Greater");
    add(ToBool<T, Cmp<T, Eigen::internal::cmp_GE>>(), "GreaterEqual");
  });
  pdk::ForEachType(pdk::TypeList<float, double, int32_t, int64_t, bool>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(Int32OnHost<T>(
        pdk::KernelDef<EqualityOp<T, Cmp<T, Eigen::internal::cmp_EQ>, false>>("Equal").Type("T", t),
        {"x", "y", "z"}));
    r.Add(Int32OnHost<T>(
        pdk::KernelDef<EqualityOp<T, Cmp<T, Eigen::internal::cmp_NEQ>, true>>("NotEqual")
            .Type("T", t),
        {"x", "y", "z"}));
  });
  pdk::ForEachType(FloatTypes{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<Same<T, ei::scalar_quotient_op<T, T>>>("RealDiv").template Type<T>("T"));
    r.Add(pdk::KernelDef<Same<T, functors::DivNoNan<T>>>("DivNoNan").template Type<T>("T"));
    r.Add(pdk::KernelDef<GradOp<T, functors::SigmoidGrad<T>>>("SigmoidGrad").template Type<T>("T"));
    r.Add(pdk::KernelDef<GradOp<T, functors::TanhGrad<T>>>("TanhGrad").template Type<T>("T"));
    r.Add(pdk::KernelDef<GradOp<T, functors::SqrtGrad<T>>>("SqrtGrad").template Type<T>("T"));
    r.Add(pdk::KernelDef<GradOp<T, functors::RsqrtGrad<T>>>("RsqrtGrad").template Type<T>("T"));
    r.Add(pdk::KernelDef<GradOp<T, functors::ReciprocalGrad<T>>>("ReciprocalGrad")
              .template Type<T>("T"));
  });
  pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(Int32OnHost<T>(pdk::KernelDef<Same<T, functors::BitwiseAnd<T>>>("BitwiseAnd").Type("T", t),
                         {"x", "y", "z"}));
    r.Add(Int32OnHost<T>(pdk::KernelDef<Same<T, functors::BitwiseOr<T>>>("BitwiseOr").Type("T", t),
                         {"x", "y", "z"}));
    r.Add(Int32OnHost<T>(pdk::KernelDef<Same<T, functors::BitwiseXor<T>>>("BitwiseXor").Type("T", t),
                         {"x", "y", "z"}));
  });
  // float16 / bfloat16, computed in float32 (ViaFloatBinaryOp, GradOp).
  pdk::ForEachType(pdk::TypeList<Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    using F = float;
    auto same = [&](auto f, const char* op) {
      r.Add(pdk::KernelDef<ViaFloatBinaryOp<T, T, decltype(f)>>(op).Type("T", t));
    };
    auto to_bool = [&](auto f, const char* op) {
      r.Add(pdk::KernelDef<ViaFloatBinaryOp<T, bool, decltype(f)>>(op).Type("T", t));
    };
    for (const char* op : {"AddV2", "Add"}) same(ei::scalar_sum_op<F, F>(), op);
    same(ei::scalar_difference_op<F, F>(), "Sub");
    same(ei::scalar_product_op<F, F>(), "Mul");
    for (const char* op : {"RealDiv", "Div"}) same(ei::scalar_quotient_op<F, F>(), op);
    same(functors::DivNoNan<F>(), "DivNoNan");
    same(ei::scalar_max_op<F, F, Eigen::PropagateNaN>(), "Maximum");
    same(ei::scalar_min_op<F, F, Eigen::PropagateNaN>(), "Minimum");
    same(functors::SquaredDifference<F>(), "SquaredDifference");
    same(ei::scalar_pow_op<F, F>(), "Pow");
    to_bool(Cmp<F, Eigen::internal::cmp_LT>(), "Less");
    to_bool(Cmp<F, Eigen::internal::cmp_LE>(), "LessEqual");
    to_bool(Cmp<F, Eigen::internal::cmp_GT>(), "Greater");
    to_bool(Cmp<F, Eigen::internal::cmp_GE>(), "GreaterEqual");
    r.Add(pdk::KernelDef<GradOp<T, functors::SigmoidGrad<F>>>("SigmoidGrad").Type("T", t));
    r.Add(pdk::KernelDef<GradOp<T, functors::TanhGrad<F>>>("TanhGrad").Type("T", t));
    r.Add(pdk::KernelDef<GradOp<T, functors::SqrtGrad<F>>>("SqrtGrad").Type("T", t));
    r.Add(pdk::KernelDef<GradOp<T, functors::RsqrtGrad<F>>>("RsqrtGrad").Type("T", t));
    r.Add(pdk::KernelDef<GradOp<T, functors::ReciprocalGrad<F>>>("ReciprocalGrad").Type("T", t));
  });
  // In host memory, like int32: a tf.while_loop's condition joins int32
  // comparisons (host) with LogicalAnd and feeds LoopCond (host memory).
  r.Add(pdk::KernelDef<Same<bool, functors::LogicalAnd>>("LogicalAnd")
            .HostMemory("x")
            .HostMemory("y")
            .HostMemory("z"));
  r.Add(pdk::KernelDef<Same<bool, functors::LogicalOr>>("LogicalOr")
            .HostMemory("x")
            .HostMemory("y")
            .HostMemory("z"));
}

}  // namespace
}  // namespace pdk_kernels
