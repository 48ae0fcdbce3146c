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
// thread pool; outputs reuse an input buffer when TensorFlow allows it (the
// inputs are borrowed views, so nothing of the kernel's holds them). The
// kernel classes are activation_op.h's, shared with activations.cc.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h), as a port from
// TensorFlow's CPU kernels would be.
#include "kernels/nn/activation_op.h"
#include "kernels/nn/relu_functors.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using namespace ::pdk_kernels::relu;  // NOLINT: the functors of relu_functors.h
using ::pdk_kernels::ActivationGradOp;
using ::pdk_kernels::UnaryActivationOp;

#define PDK_REGISTER_ACTIVATIONS_(T)                                                           \
  REGISTER_KERNEL_BUILDER(Name("Relu").Device(DEVICE_PDK).TypeConstraint<T>("T"),             \
                          UnaryActivationOp<T, ReluFn>);                                       \
  REGISTER_KERNEL_BUILDER(Name("Relu6").Device(DEVICE_PDK).TypeConstraint<T>("T"),            \
                          UnaryActivationOp<T, Relu6Fn>);                                      \
  REGISTER_KERNEL_BUILDER(Name("Elu").Device(DEVICE_PDK).TypeConstraint<T>("T"),              \
                          UnaryActivationOp<T, EluFn>);                                        \
  REGISTER_KERNEL_BUILDER(Name("LeakyRelu").Device(DEVICE_PDK).TypeConstraint<T>("T"),        \
                          UnaryActivationOp<T, LeakyReluFn, true>);                            \
  REGISTER_KERNEL_BUILDER(Name("ReluGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"),         \
                          ActivationGradOp<T, ReluGradFn>);                                    \
  REGISTER_KERNEL_BUILDER(Name("Relu6Grad").Device(DEVICE_PDK).TypeConstraint<T>("T"),        \
                          ActivationGradOp<T, Relu6GradFn>);                                   \
  REGISTER_KERNEL_BUILDER(Name("EluGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"),          \
                          ActivationGradOp<T, EluGradFn>);                                     \
  REGISTER_KERNEL_BUILDER(Name("LeakyReluGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"),    \
                          ActivationGradOp<T, LeakyReluGradFn, true>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_ACTIVATIONS_)  // float16, bfloat16, float32, float64
#undef PDK_REGISTER_ACTIVATIONS_

}  // namespace
}  // namespace tensorflow
