// Eigen's Tensor module for PDK kernels: element-type mappings for the 16-bit
// floats, Eigen views of raw buffers, conversions on the device pool.
//
// Eigen (https://eigen.tuxfamily.org) is the library TensorFlow's own CPU
// kernels are written in; PDK compiles against the copy in TensorFlow's include
// directory (the same Eigen revision as the CPU kernels it is compared with) and
// uses it for elementwise, broadcast, reduction and data-movement expressions
// evaluated on the device's thread pool.
#ifndef PDK_SRC_COMPUTE_EIGEN_H_
#define PDK_SRC_COMPUTE_EIGEN_H_

#include <cstdint>
#include <type_traits>

#include "pdk/eigen.h"  // Eigen's Tensor module, Eigen::half/bfloat16 dtypes, device pools
#include "pdk/types.h"

namespace pdk_compute {

// The element types of the dtype-agnostic data-movement kernels (Identity,
// Reshape, ConcatV2, Transpose, Gather, Pad, ...): they copy bytes, so every
// type TensorFlow's CPU registers for them costs one registration, no code.
using DataMovementTypes = pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t,
                                        int64_t, bool, uint8_t, int8_t, int16_t>;

template <class T>
using Flat = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor, Eigen::DenseIndex>>;
template <class T>
using ConstFlat =
    Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor, Eigen::DenseIndex>>;
template <class T, int N>
using Mapped = Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor, Eigen::DenseIndex>>;
template <class T, int N>
using ConstMapped =
    Eigen::TensorMap<Eigen::Tensor<const T, N, Eigen::RowMajor, Eigen::DenseIndex>>;

// The 16-bit floats (Eigen::half = float16, Eigen::bfloat16) that PDK kernels
// compute in float32: inputs are widened, the work (and every accumulation) is
// done in float, results are rounded back once.
template <class T>
inline constexpr bool kIsHalfLike =
    std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;

// The type a kernel computes T in: float for the 16-bit floats, else T.
template <class T>
using ComputeType = std::conditional_t<kIsHalfLike<T>, float, T>;

// out[i] = To(in[i]) for i < n, on the device pool (vectorized by Eigen).
template <class From, class To>
void Convert(const Eigen::ThreadPoolDevice& dev, const From* in, To* out, int64_t n) {
  if (n <= 0) return;
  Flat<To>(out, n).device(dev) = ConstFlat<From>(in, n).template cast<To>();
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_EIGEN_H_
