// Correctly rounded square root for Eigen tensor expressions:
// `pdk_compute::ExactSqrt(x)` instead of `x.sqrt()`.
//
// Why: Eigen (TensorFlow's bundled copy) defines its AVX-512 packet sqrt,
// when EIGEN_FAST_MATH is on (its default), as a reciprocal-square-root
// estimate (_mm512_rsqrt14_ps/pd) refined by Newton steps
// (Eigen/src/Core/arch/AVX512/MathFunctions.h). PDK is built for the host CPU
// (-march=native, AVX-512 here), so `x.sqrt()` was up to 2 ulp off the true
// square root in 35 % of float32 elements. TensorFlow's own CPU kernels are
// built for AVX, whose packet sqrt is the IEEE instruction (_mm256_sqrt_ps), so
// TF's Sqrt is correctly rounded. This functor uses the IEEE instructions
// (VSQRTPS/PD, SQRTPS/PD) for every packet size and std::sqrt for the
// scalar tail: same results as TensorFlow's CPU, for every element.
// Turning EIGEN_FAST_MATH off instead would also switch off Eigen's
// vectorized tanh/erf/sin/cos, which TensorFlow's CPU kernels use.
#ifndef PDK_SRC_COMPUTE_EXACT_SQRT_H_
#define PDK_SRC_COMPUTE_EXACT_SQRT_H_

#include <immintrin.h>

#include <cmath>
#include <type_traits>

#include "compute/eigen.h"

namespace pdk_compute {
namespace exact_sqrt_internal {
#if defined(__AVX512F__)
inline __m512 Sqrt(const __m512& x) { return _mm512_sqrt_ps(x); }
inline __m512d Sqrt(const __m512d& x) { return _mm512_sqrt_pd(x); }
#endif
#if defined(__AVX__)
inline __m256 Sqrt(const __m256& x) { return _mm256_sqrt_ps(x); }
inline __m256d Sqrt(const __m256d& x) { return _mm256_sqrt_pd(x); }
#endif
inline __m128 Sqrt(const __m128& x) { return _mm_sqrt_ps(x); }
inline __m128d Sqrt(const __m128d& x) { return _mm_sqrt_pd(x); }
}  // namespace exact_sqrt_internal

// Elementwise IEEE square root of float or double (Eigen unaryExpr functor).
template <class T>
struct ExactSqrtOp {
  T operator()(const T& x) const { return std::sqrt(x); }
  template <class Packet>
  Packet packetOp(const Packet& x) const {
    return exact_sqrt_internal::Sqrt(x);
  }
};

// sqrt(x) of a float32/float64 Eigen tensor expression, correctly rounded.
template <class X>
auto ExactSqrt(const X& x) {
  using T = std::remove_const_t<typename Eigen::internal::traits<X>::Scalar>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "ExactSqrt: float or double");
  return x.unaryExpr(ExactSqrtOp<T>());
}

}  // namespace pdk_compute

namespace Eigen {
namespace internal {
template <class T>
struct functor_traits<pdk_compute::ExactSqrtOp<T>> {
  enum { Cost = 5 * NumTraits<T>::MulCost, PacketAccess = packet_traits<T>::HasSqrt };
};
}  // namespace internal
}  // namespace Eigen

#endif  // PDK_SRC_COMPUTE_EXACT_SQRT_H_
