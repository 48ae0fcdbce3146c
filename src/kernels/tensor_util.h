// Reading small host tensors in the kernels written in TensorFlow's kernel
// style (pdk/tf/op_kernel.h):
//
//   ReadIntVector(op, name, t, &v)   the values of an int32 or int64 tensor
//                                    (a shape, axis, index or size argument,
//                                    any shape, read flattened) as int64
//   ReadIntVector(op, name, t)       the same as a pdk::StatusOr
//   ReadIntScalar(op, name, t, &v)   the one value of such a tensor
//
// Another dtype is InvalidArgument "<op>: <name> must be int32 or int64, got
// <dtype>" (e.g. "Reshape: shape must be int32 or int64, got float32"), the
// words of the kit's pdk::ReadIntVector (pdk/tensor.h), so that a kernel
// ported from the kit says what it said. `op` is the op type
// (OpKernel::type_string(), ctx->op_kernel().type_string()); `name` the
// argument's name in the op's def.
#ifndef PDK_SRC_KERNELS_TENSOR_UTIL_H_
#define PDK_SRC_KERNELS_TENSOR_UTIL_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "pdk/tf/op_kernel.h"

namespace pdk_kernels {

namespace tensor_util_internal {
inline tensorflow::Status NotIntError(std::string_view op, std::string_view name,
                                      const tensorflow::Tensor& t) {
  return tensorflow::errors::InvalidArgument(
      op, ": ", name, " must be int32 or int64, got ",
      pdk::DataTypeName(static_cast<TF_DataType>(t.dtype())));
}
}  // namespace tensor_util_internal

// *v = the t.NumElements() values of `t` (int32 or int64), as int64.
inline tensorflow::Status ReadIntVector(std::string_view op, std::string_view name,
                                        const tensorflow::Tensor& t, std::vector<int64_t>* v) {
  const size_t n = static_cast<size_t>(t.NumElements());
  if (t.dtype() == tensorflow::DT_INT32) {
    const int32_t* p = static_cast<const int32_t*>(t.data());
    v->assign(p, p + n);
  } else if (t.dtype() == tensorflow::DT_INT64) {
    const int64_t* p = static_cast<const int64_t*>(t.data());
    v->assign(p, p + n);
  } else {
    return tensor_util_internal::NotIntError(op, name, t);
  }
  return tensorflow::OkStatus();
}

inline pdk::StatusOr<std::vector<int64_t>> ReadIntVector(std::string_view op,
                                                         std::string_view name,
                                                         const tensorflow::Tensor& t) {
  std::vector<int64_t> v;
  TF_RETURN_IF_ERROR(ReadIntVector(op, name, t, &v));
  return v;
}

// *v = the value of a one-element `t` (int32 or int64), as int64. The
// caller checks the shape (Tensor::scalar throws on another element count).
inline tensorflow::Status ReadIntScalar(std::string_view op, std::string_view name,
                                        const tensorflow::Tensor& t, int64_t* v) {
  if (t.dtype() == tensorflow::DT_INT32) {
    *v = t.scalar<tensorflow::int32>()();
  } else if (t.dtype() == tensorflow::DT_INT64) {
    *v = t.scalar<tensorflow::int64>()();
  } else {
    return tensor_util_internal::NotIntError(op, name, t);
  }
  return tensorflow::OkStatus();
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_TENSOR_UTIL_H_
