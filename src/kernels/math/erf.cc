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
#include "compute/eigen.h"
#include "compute/unary.h"
#include "kernels/math/cwise_functors.h"
#include "pdk/kernel.h"

namespace pdk_kernels {

PDK_REGISTER_KERNELS(MathErf, r) {
  pdk::ForEachType(pdk::TypeList<float, double>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<pdk_compute::KitUnaryOp<T, unary::Erf>>("Erf").Type("T", t));
    r.Add(pdk::KernelDef<pdk_compute::KitUnaryOp<T, unary::Erfc>>("Erfc").Type("T", t));
  });
}

}  // namespace pdk_kernels
