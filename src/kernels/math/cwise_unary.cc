// Elementwise unary ops: y = f(x), y shaped like x.
//
//   Neg, Square, Abs, Sign, Round: float32, float64, int32, int64
//       (Round is half-to-even; on integers it returns x itself)
//   Rint: float32, float64 (half-to-even, as Round)
//   Sqrt, Rsqrt, Exp, Log, Log1p, Reciprocal, Floor, Ceil, Sigmoid, Tanh,
//   Sin, Cos, Tan, Asin, Acos, Atan: float32, float64
//   LogicalNot: bool
//   float16, bfloat16: all of the float32 ops above, computed in float32 and
//       rounded once (as Eigen's own 16-bit math does, without per-op rounding)
// No op here has a failure mode beyond allocation: out-of-domain inputs give
// NaN/inf as in TensorFlow. The output reuses x's buffer when TensorFlow allows.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <type_traits>

#include "compute/eigen.h"
#include "compute/unary.h"
#include "kernels/math/cwise_functors.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

namespace unary = ::pdk_kernels::unary;
using pdk_compute::UnaryOp;

// y = x without a copy (Round on integers).
class PassThroughOp : public OpKernel {
 public:
  explicit PassThroughOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

// Round: half-to-even on floats, y = x on integers.
template <class T>
using RoundOp =
    std::conditional_t<std::is_integral_v<T>, PassThroughOp, UnaryOp<T, unary::Round>>;

// Neg, Square, Abs, Sign, Round of the types in both the float and the
// integer lists; int32 keeps x and y in host memory (host memory: docs/architecture.md).
#define PDK_REGISTER_SIGNED_(T, ...)                                                           \
  REGISTER_KERNEL_BUILDER(Name("Neg").Device(DEVICE_PDK).TypeConstraint<T>("T") __VA_ARGS__,    \
                          UnaryOp<T, unary::Neg>);                                             \
  REGISTER_KERNEL_BUILDER(Name("Square").Device(DEVICE_PDK).TypeConstraint<T>("T") __VA_ARGS__, \
                          UnaryOp<T, unary::Square>);                                          \
  REGISTER_KERNEL_BUILDER(Name("Abs").Device(DEVICE_PDK).TypeConstraint<T>("T") __VA_ARGS__,    \
                          UnaryOp<T, unary::Abs>);                                             \
  REGISTER_KERNEL_BUILDER(Name("Sign").Device(DEVICE_PDK).TypeConstraint<T>("T") __VA_ARGS__,   \
                          UnaryOp<T, unary::Sign>);                                            \
  REGISTER_KERNEL_BUILDER(Name("Round").Device(DEVICE_PDK).TypeConstraint<T>("T") __VA_ARGS__,  \
                          RoundOp<T>);
PDK_REGISTER_SIGNED_(float, )
PDK_REGISTER_SIGNED_(double, )
PDK_REGISTER_SIGNED_(Eigen::half, )
PDK_REGISTER_SIGNED_(Eigen::bfloat16, )
PDK_REGISTER_SIGNED_(int64, )
PDK_REGISTER_SIGNED_(int32, .HostMemory("x").HostMemory("y"))
#undef PDK_REGISTER_SIGNED_

#define PDK_REGISTER_FLOAT_(T)                                                                  \
  REGISTER_KERNEL_BUILDER(Name("Sqrt").Device(DEVICE_PDK).TypeConstraint<T>("T"),               \
                          UnaryOp<T, unary::Sqrt>);                                             \
  REGISTER_KERNEL_BUILDER(Name("Rsqrt").Device(DEVICE_PDK).TypeConstraint<T>("T"),              \
                          UnaryOp<T, unary::Rsqrt>);                                            \
  REGISTER_KERNEL_BUILDER(Name("Exp").Device(DEVICE_PDK).TypeConstraint<T>("T"),                \
                          UnaryOp<T, unary::Exp>);                                              \
  REGISTER_KERNEL_BUILDER(Name("Log").Device(DEVICE_PDK).TypeConstraint<T>("T"),                \
                          UnaryOp<T, unary::Log>);                                              \
  REGISTER_KERNEL_BUILDER(Name("Log1p").Device(DEVICE_PDK).TypeConstraint<T>("T"),              \
                          UnaryOp<T, unary::Log1p>);                                            \
  REGISTER_KERNEL_BUILDER(Name("Expm1").Device(DEVICE_PDK).TypeConstraint<T>("T"),              \
                          UnaryOp<T, unary::Expm1>);                                            \
  REGISTER_KERNEL_BUILDER(Name("Reciprocal").Device(DEVICE_PDK).TypeConstraint<T>("T"),         \
                          UnaryOp<T, unary::Reciprocal>);                                       \
  REGISTER_KERNEL_BUILDER(Name("Floor").Device(DEVICE_PDK).TypeConstraint<T>("T"),              \
                          UnaryOp<T, unary::Floor>);                                            \
  REGISTER_KERNEL_BUILDER(Name("Ceil").Device(DEVICE_PDK).TypeConstraint<T>("T"),               \
                          UnaryOp<T, unary::Ceil>);                                             \
  REGISTER_KERNEL_BUILDER(Name("Sigmoid").Device(DEVICE_PDK).TypeConstraint<T>("T"),            \
                          UnaryOp<T, unary::Sigmoid>);                                          \
  REGISTER_KERNEL_BUILDER(Name("Tanh").Device(DEVICE_PDK).TypeConstraint<T>("T"),               \
                          UnaryOp<T, unary::Tanh>);                                             \
  REGISTER_KERNEL_BUILDER(Name("Sin").Device(DEVICE_PDK).TypeConstraint<T>("T"),                \
                          UnaryOp<T, unary::Sin>);                                              \
  REGISTER_KERNEL_BUILDER(Name("Cos").Device(DEVICE_PDK).TypeConstraint<T>("T"),                \
                          UnaryOp<T, unary::Cos>);                                              \
  REGISTER_KERNEL_BUILDER(Name("Tan").Device(DEVICE_PDK).TypeConstraint<T>("T"),                \
                          UnaryOp<T, unary::Tan>);                                              \
  REGISTER_KERNEL_BUILDER(Name("Asin").Device(DEVICE_PDK).TypeConstraint<T>("T"),               \
                          UnaryOp<T, unary::Asin>);                                             \
  REGISTER_KERNEL_BUILDER(Name("Acos").Device(DEVICE_PDK).TypeConstraint<T>("T"),               \
                          UnaryOp<T, unary::Acos>);                                             \
  REGISTER_KERNEL_BUILDER(Name("Atan").Device(DEVICE_PDK).TypeConstraint<T>("T"),               \
                          UnaryOp<T, unary::Atan>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_FLOAT_)  // float16, bfloat16, float32, float64
#undef PDK_REGISTER_FLOAT_

// Rint: half-to-even, the same as Round on floats (TensorFlow registers Rint
// for float32 and float64 only).
REGISTER_KERNEL_BUILDER(Name("Rint").Device(DEVICE_PDK).TypeConstraint<float>("T"),
                        UnaryOp<float, unary::Round>);
REGISTER_KERNEL_BUILDER(Name("Rint").Device(DEVICE_PDK).TypeConstraint<double>("T"),
                        UnaryOp<double, unary::Round>);

// In host memory with LogicalAnd and LogicalOr (cwise_binary.cc).
REGISTER_KERNEL_BUILDER(Name("LogicalNot").Device(DEVICE_PDK).HostMemory("x").HostMemory("y"),
                        UnaryOp<bool, unary::LogicalNot>);

}  // namespace
}  // namespace tensorflow
