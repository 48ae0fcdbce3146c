// Elementwise binary ops with NumPy broadcasting, and the y/dy gradient ops.
//
// Broadcasting ops (inputs x, y; output z of the broadcast shape):
//   AddV2, Sub, Mul, Maximum, Minimum, SquaredDifference, Pow, FloorDiv, FloorMod,
//   Div (v1: x / y for floats, truncating for integers; tf.compat.v1.div and
//   CollectiveReduceV2's final_op="Div");
//   Add (the v1 op tf.distribute and FusedBatchNorm's gradient emit; the same
//   kernel as AddV2, registered under both names):
//       float32, float64, int32, int64 (z has x's dtype); AddV2, Add, Sub,
//       Mul, Maximum, Minimum also uint8 (modulo 256); int32 AddV2 is
//       TensorFlow's DEVICE_DEFAULT kernel (src/kernels/tensorflow_default_kernels.h)
//   RealDiv, DivNoNan: float32, float64
//   MulNoNan (x * y, 0 where y == 0), Xlogy (x * log y, 0 where x == 0), Xlog1py
//   (x * log1p y, 0 where x == 0), Xdivy (x / y, 0 where x == 0), Atan2 (C's
//   atan2 of the first operand over the second): float32, float64
//   TruncateDiv: int32, int64 (C++'s truncating division)
//   Less, LessEqual, Greater, GreaterEqual: float32, float64, int32, int64 -> bool
//       (int32 Less: TensorFlow's DEVICE_DEFAULT kernel, as int32 AddV2)
//   Equal, NotEqual: float32, float64, int32, int64, bool -> bool; with
//       incompatible_shape_error=false, shapes that don't broadcast give a bool
//       scalar (false for Equal, true for NotEqual), as TensorFlow does
//   LogicalAnd, LogicalOr: bool
//   BitwiseAnd, BitwiseOr, BitwiseXor, LeftShift, RightShift (the shift clamped
//       to [0, bits - 1], as TensorFlow's CPU kernel): int32, int64, uint8
// Gradient ops (inputs y, dy with equal element counts; output shaped like y):
//   SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad: float32, float64
// float16 and bfloat16 (computed in float32, rounded once, as Eigen's own
// 16-bit arithmetic does): AddV2, Add, Sub, Mul, Div, RealDiv, DivNoNan, MulNoNan, Xlogy,
// Xlog1py, Xdivy, Atan2, Maximum, Minimum, SquaredDifference, Pow, Less, LessEqual,
// Greater, GreaterEqual and the five gradient ops.
//
// Errors (InvalidArgument): shapes that don't broadcast (message names both
// operands and shapes); integer Div/FloorDiv/FloorMod with a zero divisor
// ("Integer division by zero", TensorFlow's wording; integer TruncateDiv's is
// Internal "Unexpected error in binary operator ...", as TensorFlow's CPU); integer
// Pow with a negative exponent; gradient ops whose y and dy sizes differ.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/math/cwise_functors.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

namespace ei = Eigen::internal;
namespace functors = ::pdk_kernels::functors;

// Value checks run before evaluation: (op, x, y) -> Status.
struct NoCheck {
  pdk::Status operator()(const char*, const Tensor&, const Tensor&) const {
    return pdk::Status::OK();
  }
};
template <class T>
struct NonzeroDivisor {
  pdk::Status operator()(const char* op, const Tensor&, const Tensor& y) const {
    if constexpr (std::is_integral_v<T>) {
      const T* p = y.flat<T>().data();
      for (int64_t i = 0, n = y.NumElements(); i < n; ++i)
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
  pdk::Status operator()(const char* op, const Tensor&, const Tensor& y) const {
    if constexpr (std::is_integral_v<T>) {
      const T* p = y.flat<T>().data();
      for (int64_t i = 0, n = y.NumElements(); i < n; ++i)
        if (p[i] < 0)
          return pdk::InvalidArgument("Integers to negative integer powers are not allowed (", op,
                                      ": y[", i, "] == ", p[i], ")");
    }
    return pdk::Status::OK();
  }
};

// z = F(x, y) with broadcasting; T is the input dtype, Tout the output dtype.
template <class T, class Tout, class F, class Check = NoCheck>
class BinaryOp : public OpKernel {
 public:
  explicit BinaryOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    pdk_compute::ComputeBinary<T, Tout>(
        ctx, F(), [op](const Tensor& x, const Tensor& y) { return Check()(op, x, y); });
  }
};

// Equal / NotEqual: like BinaryOp, plus attr incompatible_shape_error.
template <class T, class F, bool kNotEqual>
class EqualityOp : public OpKernel {
 public:
  explicit EqualityOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("incompatible_shape_error"))
      OP_REQUIRES_OK(c, c->GetAttr("incompatible_shape_error", &incompatible_shape_error_));
  }
  void Compute(OpKernelContext* ctx) override {
    if (!incompatible_shape_error_) {
      const Tensor& x = ctx->input(0);
      const Tensor& y = ctx->input(1);
      if (!pdk::BroadcastShapes(type_string().c_str(), "x", x.shape().pdk_shape(), "y",
                                y.shape().pdk_shape())
               .ok()) {
        Tensor* z = nullptr;
        OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &z));
        z->flat<bool>()(0) = kNotEqual;
        return;
      }
    }
    pdk_compute::ComputeBinary<T, bool>(ctx, F());
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
class ViaFloatBinaryOp : public OpKernel {
 public:
  explicit ViaFloatBinaryOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const pdk::StatusOr<pdk_compute::BroadcastPlan<2>> plan_or =
        pdk_compute::PlanBinaryBroadcast(type_string().c_str(), "x", x, "y", y);
    OP_REQUIRES_OK(ctx, plan_or.status());
    const pdk_compute::BroadcastPlan<2>& plan = plan_or.value();
    const T* a = x.flat<T>().data();
    const T* b = y.flat<T>().data();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, pdk_compute::AllocateBinaryOutput<std::is_same_v<T, Tout>>(ctx, x, y,
                                                                                  plan, &out));
    const int64_t n = plan.out.num_elements();
    if (n == 0) return;
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    auto narrow = [](auto e) {
      if constexpr (std::is_same_v<Tout, bool>) {
        return e;
      } else {
        return e.template cast<Tout>();
      }
    };
    pdk_compute::Flat<Tout> o(out->flat<Tout>().data(), n);
    if (plan.all_full()) {
      pdk_compute::Assign(dev, o,
                          narrow(pdk_compute::ConstFlat<T>(a, n).template cast<float>().binaryExpr(
                              pdk_compute::ConstFlat<T>(b, n).template cast<float>(), F())));
    } else if (plan.elems[0] == 1) {
      auto bv = pdk_compute::ConstFlat<T>(b, n).template cast<float>();
      pdk_compute::Assign(dev, o, narrow(bv.constant(static_cast<float>(*a)).binaryExpr(bv, F())));
    } else if (plan.elems[1] == 1) {
      auto av = pdk_compute::ConstFlat<T>(a, n).template cast<float>();
      pdk_compute::Assign(dev, o, narrow(av.binaryExpr(av.constant(static_cast<float>(*b)), F())));
    } else {
      Tensor af, bf;
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({plan.elems[0]}), &af));
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({plan.elems[1]}), &bf));
      float* a_f = af.flat<float>().data();
      float* b_f = bf.flat<float>().data();
      pdk_compute::Convert<T, float>(dev, a, a_f, plan.elems[0]);
      pdk_compute::Convert<T, float>(dev, b, b_f, plan.elems[1]);
      if constexpr (std::is_same_v<Tout, bool>) {
        pdk_compute::EvalBinary<float, bool>(dev, plan, a_f, b_f, out->flat<bool>().data(), F());
      } else {
        Tensor of;
        OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape(plan.out), &of));
        float* o_f = of.flat<float>().data();
        pdk_compute::EvalBinary<float, float>(dev, plan, a_f, b_f, o_f, F());
        pdk_compute::Convert<float, T>(dev, o_f, out->flat<T>().data(), n);
      }
    }
  }
};

// Gradient ops: z = F(y, dy), same element counts, z shaped like y. The 16-bit
// floats are computed in float32 (F is then the float functor).
template <class T, class F>
class GradOp : public OpKernel {
 public:
  explicit GradOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& y = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    OP_REQUIRES(ctx, y.NumElements() == dy.NumElements(),
                errors::InvalidArgument(type_string(), ": y.shape ", y.shape(), " and dy.shape ",
                                        dy.shape(), " must have the same number of elements"));
    Tensor* z = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, y.shape(), &z));
    const int64_t n = y.NumElements();
    if (n == 0) return;
    const T* y_data = y.flat<T>().data();
    const T* dy_data = dy.flat<T>().data();
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    if constexpr (pdk_compute::kIsHalfLike<T>) {
      pdk_compute::Assign(
          dev, pdk_compute::Flat<T>(z->flat<T>().data(), n),
          pdk_compute::ConstFlat<T>(y_data, n)
              .template cast<float>()
              .binaryExpr(pdk_compute::ConstFlat<T>(dy_data, n).template cast<float>(), F())
              .template cast<T>());
    } else {
      pdk_compute::Assign(dev, pdk_compute::Flat<T>(z->flat<T>().data(), n),
                          pdk_compute::ConstFlat<T>(y_data, n).binaryExpr(
                              pdk_compute::ConstFlat<T>(dy_data, n), F()));
    }
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
// Div (v1): x / y for floats, truncating (with the zero-divisor check) for integers.
template <class T>
using DivOp = std::conditional_t<std::is_integral_v<T>,
                                 Same<T, functors::TruncateDiv<T>, NonzeroDivisor<T>>,
                                 Same<T, ei::scalar_quotient_op<T, T>>>;

// One registration of `op` for T; HOST: the HostMemory arguments (or nothing).
#define PDK_REGISTER_BINARY_(op, T, HOST, ...)                                          \
  REGISTER_KERNEL_BUILDER(Name(op).Device(DEVICE_PDK).TypeConstraint<T>("T") HOST, \
                          __VA_ARGS__);
// int32 keeps x, y and z in host memory (host memory: docs/architecture.md).
#define PDK_INT32_ON_HOST_ .HostMemory("x").HostMemory("y").HostMemory("z")

// float32, float64, int64: int32's are TensorFlow's DEVICE_DEFAULT kernels (a
// loop's counter and condition; src/kernels/tensorflow_default_kernels.h).
#define PDK_REGISTER_LOOP_OPS_(T)                                            \
  PDK_REGISTER_BINARY_("AddV2", T, , Same<T, ei::scalar_sum_op<T, T>>)        \
  PDK_REGISTER_BINARY_("Less", T, , ToBool<T, Cmp<T, ei::cmp_LT>>)
// float32, float64, int32, int64.
#define PDK_REGISTER_REAL_(T, HOST)                                                             \
  PDK_REGISTER_BINARY_("Add", T, HOST, Same<T, ei::scalar_sum_op<T, T>>)                         \
  PDK_REGISTER_BINARY_("Sub", T, HOST, Same<T, ei::scalar_difference_op<T, T>>)                  \
  PDK_REGISTER_BINARY_("Mul", T, HOST, Same<T, ei::scalar_product_op<T, T>>)                     \
  PDK_REGISTER_BINARY_("Maximum", T, HOST, Same<T, ei::scalar_max_op<T, T, Eigen::PropagateNaN>>) \
  PDK_REGISTER_BINARY_("Minimum", T, HOST, Same<T, ei::scalar_min_op<T, T, Eigen::PropagateNaN>>) \
  PDK_REGISTER_BINARY_("SquaredDifference", T, HOST, Same<T, functors::SquaredDifference<T>>)    \
  PDK_REGISTER_BINARY_("Pow", T, HOST, Same<T, PowFunctor<T>, NonnegativeExponent<T>>)           \
  PDK_REGISTER_BINARY_("FloorDiv", T, HOST, Same<T, functors::FloorDiv<T>, NonzeroDivisor<T>>)   \
  PDK_REGISTER_BINARY_("Div", T, HOST, DivOp<T>)                                                 \
  PDK_REGISTER_BINARY_("FloorMod", T, HOST, Same<T, functors::FloorMod<T>, NonzeroDivisor<T>>)   \
  PDK_REGISTER_BINARY_("LessEqual", T, HOST, ToBool<T, Cmp<T, ei::cmp_LE>>)                      \
  PDK_REGISTER_BINARY_("Greater", T, HOST, ToBool<T, Cmp<T, ei::cmp_GT>>)                        \
  PDK_REGISTER_BINARY_("GreaterEqual", T, HOST, ToBool<T, Cmp<T, ei::cmp_GE>>)
// Integers only: the bitwise ops and shifts (int32, int64, uint8) and
// TruncateDiv (int32, int64).
#define PDK_REGISTER_BITS_(T, HOST)                                             \
  PDK_REGISTER_BINARY_("BitwiseAnd", T, HOST, Same<T, functors::BitwiseAnd<T>>) \
  PDK_REGISTER_BINARY_("BitwiseOr", T, HOST, Same<T, functors::BitwiseOr<T>>)   \
  PDK_REGISTER_BINARY_("BitwiseXor", T, HOST, Same<T, functors::BitwiseXor<T>>) \
  PDK_REGISTER_BINARY_("LeftShift", T, HOST, Same<T, functors::LeftShift<T>>)   \
  PDK_REGISTER_BINARY_("RightShift", T, HOST, Same<T, functors::RightShift<T>>)
#define PDK_REGISTER_INTEGER_(T, HOST)                                       \
  PDK_REGISTER_BINARY_("TruncateDiv", T, HOST,                               \
                       Same<T, functors::TruncateDiv<T>, NonzeroDivisor<T>>) \
  PDK_REGISTER_BITS_(T, HOST)
// float32, float64, int32, int64, bool.
#define PDK_REGISTER_EQUALITY_(T, HOST)                                                         \
  PDK_REGISTER_BINARY_("Equal", T, HOST, EqualityOp<T, Cmp<T, ei::cmp_EQ>, false>)               \
  PDK_REGISTER_BINARY_("NotEqual", T, HOST, EqualityOp<T, Cmp<T, ei::cmp_NEQ>, true>)
// float32, float64 only.
#define PDK_REGISTER_FLOAT_(T)                                                                  \
  PDK_REGISTER_BINARY_("RealDiv", T, , Same<T, ei::scalar_quotient_op<T, T>>)                    \
  PDK_REGISTER_BINARY_("DivNoNan", T, , Same<T, functors::DivNoNan<T>>)                          \
  PDK_REGISTER_BINARY_("MulNoNan", T, , Same<T, functors::MulNoNan<T>>)                          \
  PDK_REGISTER_BINARY_("Xlogy", T, , Same<T, functors::Xlogy<T>>)                                \
  PDK_REGISTER_BINARY_("Xlog1py", T, , Same<T, functors::Xlog1py<T>>)                            \
  PDK_REGISTER_BINARY_("Xdivy", T, , Same<T, functors::Xdivy<T>>)                                \
  PDK_REGISTER_BINARY_("Atan2", T, , Same<T, functors::Atan2<T>>)                                \
  PDK_REGISTER_BINARY_("SigmoidGrad", T, , GradOp<T, functors::SigmoidGrad<T>>)                  \
  PDK_REGISTER_BINARY_("TanhGrad", T, , GradOp<T, functors::TanhGrad<T>>)                        \
  PDK_REGISTER_BINARY_("SqrtGrad", T, , GradOp<T, functors::SqrtGrad<T>>)                        \
  PDK_REGISTER_BINARY_("RsqrtGrad", T, , GradOp<T, functors::RsqrtGrad<T>>)                      \
  PDK_REGISTER_BINARY_("ReciprocalGrad", T, , GradOp<T, functors::ReciprocalGrad<T>>)
// float16 / bfloat16, computed in float32 (ViaFloatBinaryOp, GradOp): the
// functors are the float32 ones.
#define PDK_REGISTER_HALF_(T)                                                                   \
  PDK_REGISTER_BINARY_("AddV2", T, , ViaFloatBinaryOp<T, T, ei::scalar_sum_op<float, float>>)    \
  PDK_REGISTER_BINARY_("Add", T, , ViaFloatBinaryOp<T, T, ei::scalar_sum_op<float, float>>)      \
  PDK_REGISTER_BINARY_("Sub", T, ,                                                               \
                       ViaFloatBinaryOp<T, T, ei::scalar_difference_op<float, float>>)          \
  PDK_REGISTER_BINARY_("Mul", T, , ViaFloatBinaryOp<T, T, ei::scalar_product_op<float, float>>)  \
  PDK_REGISTER_BINARY_("RealDiv", T, ,                                                           \
                       ViaFloatBinaryOp<T, T, ei::scalar_quotient_op<float, float>>)            \
  PDK_REGISTER_BINARY_("Div", T, , ViaFloatBinaryOp<T, T, ei::scalar_quotient_op<float, float>>) \
  PDK_REGISTER_BINARY_("DivNoNan", T, , ViaFloatBinaryOp<T, T, functors::DivNoNan<float>>)       \
  PDK_REGISTER_BINARY_("MulNoNan", T, , ViaFloatBinaryOp<T, T, functors::MulNoNan<float>>)       \
  PDK_REGISTER_BINARY_("Xlogy", T, , ViaFloatBinaryOp<T, T, functors::Xlogy<float>>)             \
  PDK_REGISTER_BINARY_("Xlog1py", T, , ViaFloatBinaryOp<T, T, functors::Xlog1py<float>>)         \
  PDK_REGISTER_BINARY_("Xdivy", T, , ViaFloatBinaryOp<T, T, functors::Xdivy<float>>)             \
  PDK_REGISTER_BINARY_("Atan2", T, , ViaFloatBinaryOp<T, T, functors::Atan2<float>>)             \
  PDK_REGISTER_BINARY_(                                                                          \
      "Maximum", T, ,                                                                            \
      ViaFloatBinaryOp<T, T, ei::scalar_max_op<float, float, Eigen::PropagateNaN>>)             \
  PDK_REGISTER_BINARY_(                                                                          \
      "Minimum", T, ,                                                                            \
      ViaFloatBinaryOp<T, T, ei::scalar_min_op<float, float, Eigen::PropagateNaN>>)             \
  PDK_REGISTER_BINARY_("SquaredDifference", T, ,                                                 \
                       ViaFloatBinaryOp<T, T, functors::SquaredDifference<float>>)              \
  PDK_REGISTER_BINARY_("Pow", T, , ViaFloatBinaryOp<T, T, ei::scalar_pow_op<float, float>>)      \
  PDK_REGISTER_BINARY_("Less", T, , ViaFloatBinaryOp<T, bool, Cmp<float, ei::cmp_LT>>)           \
  PDK_REGISTER_BINARY_("LessEqual", T, , ViaFloatBinaryOp<T, bool, Cmp<float, ei::cmp_LE>>)      \
  PDK_REGISTER_BINARY_("Greater", T, , ViaFloatBinaryOp<T, bool, Cmp<float, ei::cmp_GT>>)        \
  PDK_REGISTER_BINARY_("GreaterEqual", T, , ViaFloatBinaryOp<T, bool, Cmp<float, ei::cmp_GE>>)   \
  PDK_REGISTER_BINARY_("SigmoidGrad", T, , GradOp<T, functors::SigmoidGrad<float>>)              \
  PDK_REGISTER_BINARY_("TanhGrad", T, , GradOp<T, functors::TanhGrad<float>>)                    \
  PDK_REGISTER_BINARY_("SqrtGrad", T, , GradOp<T, functors::SqrtGrad<float>>)                    \
  PDK_REGISTER_BINARY_("RsqrtGrad", T, , GradOp<T, functors::RsqrtGrad<float>>)                  \
  PDK_REGISTER_BINARY_("ReciprocalGrad", T, , GradOp<T, functors::ReciprocalGrad<float>>)

PDK_REGISTER_LOOP_OPS_(float)
PDK_REGISTER_LOOP_OPS_(double)
PDK_REGISTER_LOOP_OPS_(int64)
PDK_REGISTER_REAL_(float, )
PDK_REGISTER_REAL_(double, )
PDK_REGISTER_REAL_(int32, PDK_INT32_ON_HOST_)
PDK_REGISTER_REAL_(int64, )
PDK_REGISTER_EQUALITY_(float, )
PDK_REGISTER_EQUALITY_(double, )
PDK_REGISTER_EQUALITY_(int32, PDK_INT32_ON_HOST_)
PDK_REGISTER_EQUALITY_(int64, )
PDK_REGISTER_EQUALITY_(bool, )
PDK_REGISTER_FLOAT_(float)
PDK_REGISTER_FLOAT_(double)
PDK_REGISTER_INTEGER_(int32, PDK_INT32_ON_HOST_)
PDK_REGISTER_INTEGER_(int64, )
PDK_REGISTER_BITS_(uint8, )
// uint8 arithmetic (modulo 256, as TensorFlow's CPU): image augmentations
// work on uint8 pixels (Keras's RandomPosterization: 8 - factor).
PDK_REGISTER_BINARY_("AddV2", uint8, , Same<uint8, ei::scalar_sum_op<uint8, uint8>>)
PDK_REGISTER_BINARY_("Add", uint8, , Same<uint8, ei::scalar_sum_op<uint8, uint8>>)
PDK_REGISTER_BINARY_("Sub", uint8, , Same<uint8, ei::scalar_difference_op<uint8, uint8>>)
PDK_REGISTER_BINARY_("Mul", uint8, , Same<uint8, ei::scalar_product_op<uint8, uint8>>)
PDK_REGISTER_BINARY_("Maximum", uint8, , Same<uint8, ei::scalar_max_op<uint8, uint8>>)
PDK_REGISTER_BINARY_("Minimum", uint8, , Same<uint8, ei::scalar_min_op<uint8, uint8>>)
PDK_REGISTER_HALF_(Eigen::half)
PDK_REGISTER_HALF_(Eigen::bfloat16)
#undef PDK_REGISTER_HALF_
#undef PDK_REGISTER_FLOAT_
#undef PDK_REGISTER_EQUALITY_
#undef PDK_REGISTER_INTEGER_
#undef PDK_REGISTER_BITS_
#undef PDK_REGISTER_REAL_
#undef PDK_REGISTER_LOOP_OPS_
#undef PDK_INT32_ON_HOST_
#undef PDK_REGISTER_BINARY_

// In host memory, like int32: a tf.while_loop's condition joins int32
// comparisons (host) with LogicalAnd and feeds LoopCond (host memory).
REGISTER_KERNEL_BUILDER(
    Name("LogicalAnd").Device(DEVICE_PDK).HostMemory("x").HostMemory("y").HostMemory("z"),
    Same<bool, functors::LogicalAnd>);
REGISTER_KERNEL_BUILDER(
    Name("LogicalOr").Device(DEVICE_PDK).HostMemory("x").HostMemory("y").HostMemory("z"),
    Same<bool, functors::LogicalOr>);

}  // namespace
}  // namespace tensorflow
