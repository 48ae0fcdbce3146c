// Erf and Erfc (tensorflow/core/ops/math_ops.cc), float32 and float64:
//
//   Erf(x)  = 2/sqrt(pi) * integral_0^x exp(-t^2) dt
//   Erfc(x) = 1 - Erf(x), computed directly (no cancellation for large x)
//
// y is shaped like x. Evaluated with Eigen's scalar_erf_op / scalar_erfc_op,
// the functors TensorFlow's CPU kernels use (tensorflow/core/kernels/
// cwise_op_erf.cc, cwise_op_erfc.cc), on the device's thread pool, so results
// match TF's CPU kernels bit for bit or within an ulp. No failure mode:
// Erfc(-inf) = 2, Erfc(inf) = 0, NaN stays NaN; Erf(±inf) is ±1 in float32
// but NaN in float64 (a property of Eigen's double erf that TF's CPU kernel
// shares — kept, to match TF).
// `keras.activations.gelu(x, approximate=False)` is 0.5 * x * Erfc(-x / sqrt(2))
// in TF 2.21, so Erfc is on its forward path.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include "compute/eigen.h"
#include "compute/unary.h"
#include "kernels/math/cwise_functors.h"
#include "pdk/tf/op_kernel.h"
#include "pdk/tf/register_types.h"

namespace tensorflow {
namespace {

namespace unary = ::pdk_kernels::unary;

#define PDK_REGISTER_ERF_(T)                                                                \
  REGISTER_KERNEL_BUILDER(Name("Erf").Device(DEVICE_PDK).TypeConstraint<T>("T"),            \
                          pdk_compute::UnaryOp<T, unary::Erf>);                             \
  REGISTER_KERNEL_BUILDER(Name("Erfc").Device(DEVICE_PDK).TypeConstraint<T>("T"),           \
                          pdk_compute::UnaryOp<T, unary::Erfc>);
TF_CALL_float(PDK_REGISTER_ERF_) TF_CALL_double(PDK_REGISTER_ERF_)
#undef PDK_REGISTER_ERF_

}  // namespace
}  // namespace tensorflow
