// Eigen's Tensor module for PDK kernels: element-type mappings for the 16-bit
// floats, and views of pdk::Tensor as Eigen tensors.
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
#include "pdk/kernel.h"
#include "pdk/tensor.h"
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

// The whole tensor as a 1-D Eigen view.
template <class T>
Flat<T> flat(const pdk::Tensor& t) {
  return Flat<T>(t.data<T>(), t.num_elements());
}
template <class T>
ConstFlat<T> cflat(const pdk::Tensor& t) {
  return ConstFlat<T>(t.data<T>(), t.num_elements());
}

// An N-D view with explicit dimensions (e.g. a reshaped or collapsed view).
template <class T, int N>
Mapped<T, N> view(const pdk::Tensor& t, const Eigen::DSizes<Eigen::DenseIndex, N>& dims) {
  return Mapped<T, N>(t.data<T>(), dims);
}
template <class T, int N>
ConstMapped<T, N> cview(const pdk::Tensor& t, const Eigen::DSizes<Eigen::DenseIndex, N>& dims) {
  return ConstMapped<T, N>(t.data<T>(), dims);
}

// The Eigen thread-pool device of the kernel's PDK device (the kit's pool).
inline const Eigen::ThreadPoolDevice& Device(const pdk::Context& ctx) {
  return pdk::DeviceEigen(ctx.device_id());
}

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

// A float32 scratch copy of `t` (any 16-bit float tensor), released with the
// returned Tensor.
template <class T>
pdk::StatusOr<pdk::Tensor> WidenToFloat(const pdk::Context& ctx, const pdk::Tensor& t) {
  PDK_ASSIGN_OR_RETURN(pdk::Tensor f, ctx.allocate_temp(TF_FLOAT, t.shape()));
  Convert<T, float>(Device(ctx), t.data<T>(), f.data<float>(), t.num_elements());
  return f;
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_EIGEN_H_
