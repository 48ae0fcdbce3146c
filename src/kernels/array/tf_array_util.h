// Helpers of the array kernels written in TensorFlow's kernel style
// (pdk/tf/op_kernel.h):
//
//   PDK_CALL_DATA_MOVEMENT_TYPES(m)           m(T) for each type of
//                                             pdk_compute::DataMovementTypes
//   PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(m)  the same without int32, whose
//                                             kernels are registered apart with
//                                             their int32 arguments in host
//                                             memory (host memory: docs/architecture.md)
//
// (Reading an int32/int64 shape or axis argument: kernels/tensor_util.h.)
//
// The static_assert below keeps the macro list equal to the kit's
// DataMovementTypes, so a type added to one cannot be missed by the other.
#ifndef PDK_SRC_KERNELS_ARRAY_TF_ARRAY_UTIL_H_
#define PDK_SRC_KERNELS_ARRAY_TF_ARRAY_UTIL_H_

#include <type_traits>

#include "compute/eigen.h"
#include "pdk/tf/op_kernel.h"

#define PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(m)                                     \
  m(float) m(double) m(Eigen::half) m(Eigen::bfloat16) m(::tensorflow::int64) m(bool) \
      m(::tensorflow::uint8) m(::tensorflow::int8) m(::tensorflow::int16)
#define PDK_CALL_DATA_MOVEMENT_TYPES(m) \
  PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(m) m(::tensorflow::int32)

namespace pdk_kernels {

namespace tf_array_util_internal {
template <class T, class... Ts>
constexpr bool Contains(pdk::TypeList<Ts...>) {
  return (std::is_same_v<T, Ts> || ...);
}
template <class L, class... Ts>
constexpr bool AllIn(pdk::TypeList<Ts...>) {
  return (Contains<Ts>(L{}) && ...);
}
template <class... Ts>
constexpr int Size(pdk::TypeList<Ts...>) {
  return static_cast<int>(sizeof...(Ts));
}
#define PDK_TF_ARRAY_UTIL_TYPE_COMMA_(T) T,
using MacroDataMovementTypes = pdk::TypeList<PDK_CALL_DATA_MOVEMENT_TYPES(
    PDK_TF_ARRAY_UTIL_TYPE_COMMA_) void>;
#undef PDK_TF_ARRAY_UTIL_TYPE_COMMA_
#define PDK_TF_ARRAY_UTIL_COUNT_(T) +1
// As many entries as DataMovementTypes (whose types are distinct), each of
// its types among them: the same set.
static_assert(0 PDK_CALL_DATA_MOVEMENT_TYPES(PDK_TF_ARRAY_UTIL_COUNT_) ==
                      Size(pdk_compute::DataMovementTypes{}) &&
                  AllIn<MacroDataMovementTypes>(pdk_compute::DataMovementTypes{}),
              "PDK_CALL_DATA_MOVEMENT_TYPES must list pdk_compute::DataMovementTypes");
#undef PDK_TF_ARRAY_UTIL_COUNT_
}  // namespace tf_array_util_internal

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_ARRAY_TF_ARRAY_UTIL_H_
