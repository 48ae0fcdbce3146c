// pdk/tf/types.h — TensorFlow's C++ element types and DataType enum, over the
// kit's dtype mapping (pdk/types.h, pdk/eigen.h).
//
// Part of the TF-style layer (include it through pdk/tf/op_kernel.h): the
// names TensorFlow's kernels use (`int32`, `int64`, `bfloat16`, `DT_FLOAT`,
// `DataTypeToEnum<T>::value`, `TTypes<T>::Flat`, ...) with TensorFlow's
// meaning. Everything is declared in `tensorflow::pdk_kit`, an inline
// namespace: code written in `namespace tensorflow` finds it unqualified, and
// no mangled name collides with libtensorflow_framework's C++ symbols.
#ifndef PDK_TF_TYPES_H_
#define PDK_TF_TYPES_H_

#include <complex>
#include <cstdint>
#include <string>

#include "pdk/eigen.h"
#include "pdk/types.h"

namespace tensorflow {
inline namespace pdk_kit {

using int8 = std::int8_t;
using int16 = std::int16_t;
using int32 = std::int32_t;
using int64 = std::int64_t;
using uint8 = std::uint8_t;
using uint16 = std::uint16_t;
using uint32 = std::uint32_t;
using uint64 = std::uint64_t;
using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;
using string = std::string;

// TensorFlow's DataType (types.proto); the values are TF_DataType's.
enum DataType : int {
  DT_INVALID = 0,
  DT_FLOAT = TF_FLOAT,
  DT_DOUBLE = TF_DOUBLE,
  DT_INT32 = TF_INT32,
  DT_UINT8 = TF_UINT8,
  DT_INT16 = TF_INT16,
  DT_INT8 = TF_INT8,
  DT_STRING = TF_STRING,
  DT_COMPLEX64 = TF_COMPLEX64,
  DT_INT64 = TF_INT64,
  DT_BOOL = TF_BOOL,
  DT_BFLOAT16 = TF_BFLOAT16,
  DT_UINT16 = TF_UINT16,
  DT_COMPLEX128 = TF_COMPLEX128,
  DT_HALF = TF_HALF,
  DT_RESOURCE = TF_RESOURCE,
  DT_VARIANT = TF_VARIANT,
  DT_UINT32 = TF_UINT32,
  DT_UINT64 = TF_UINT64,
};

// DataTypeToEnum<float>::value == DT_FLOAT, for every type the kit maps
// (a type it does not map does not compile).
template <class T>
struct DataTypeToEnum {
  static constexpr DataType value = static_cast<DataType>(::pdk::kDataType<T>);
  static DataType v() { return value; }
};

// "float", "int32", ...: TensorFlow's C++ spelling (DataTypeString), which
// its error messages use.
inline std::string DataTypeString(DataType dt) {
  switch (dt) {
    case DT_FLOAT: return "float";
    case DT_DOUBLE: return "double";
    case DT_HALF: return "half";
    case DT_BFLOAT16: return "bfloat16";
    case DT_INT8: return "int8";
    case DT_INT16: return "int16";
    case DT_INT32: return "int32";
    case DT_INT64: return "int64";
    case DT_UINT8: return "uint8";
    case DT_UINT16: return "uint16";
    case DT_UINT32: return "uint32";
    case DT_UINT64: return "uint64";
    case DT_BOOL: return "bool";
    case DT_STRING: return "string";
    case DT_RESOURCE: return "resource";
    case DT_VARIANT: return "variant";
    case DT_COMPLEX64: return "complex64";
    case DT_COMPLEX128: return "complex128";
    case DT_INVALID: return "INVALID";
  }
  return "unknown dtype enum (" + std::to_string(static_cast<int>(dt)) + ")";
}

// Bytes per element; 0 for variable-size types (string, resource, variant).
inline int DataTypeSize(DataType dt) {
  return static_cast<int>(TF_DataTypeSize(static_cast<TF_DataType>(dt)));
}

// Eigen views of tensor data (TensorFlow's TTypes). Unlike TensorFlow's, the
// maps are unaligned: a tensor TensorFlow hands a plugin (a slice, a forwarded
// buffer) need not be 64-byte aligned, and on the CPUs PDK runs on an
// unaligned vector load costs the same as an aligned one.
template <class T, int NDIMS = 1, class IndexType = Eigen::DenseIndex>
struct TTypes {
  using Tensor = Eigen::TensorMap<Eigen::Tensor<T, NDIMS, Eigen::RowMajor, IndexType>>;
  using ConstTensor =
      Eigen::TensorMap<Eigen::Tensor<const T, NDIMS, Eigen::RowMajor, IndexType>>;
  using Scalar = Eigen::TensorMap<Eigen::TensorFixedSize<T, Eigen::Sizes<>, Eigen::RowMajor, IndexType>>;
  using ConstScalar =
      Eigen::TensorMap<Eigen::TensorFixedSize<const T, Eigen::Sizes<>, Eigen::RowMajor, IndexType>>;
  using Flat = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor, IndexType>>;
  using ConstFlat = Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor, IndexType>>;
  using Vec = Flat;
  using ConstVec = ConstFlat;
  using Matrix = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor, IndexType>>;
  using ConstMatrix = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor, IndexType>>;
};

}  // namespace pdk_kit
}  // namespace tensorflow

// TensorFlow's TF_CALL_* (register_types.h): m(T) for each type, as
// registration code written for TensorFlow uses them (m's expansion carries
// its own `;`). Only types a kernel can be registered for through the C API.
#define TF_CALL_float(m) m(float)
#define TF_CALL_double(m) m(double)
#define TF_CALL_half(m) m(::tensorflow::half)
#define TF_CALL_bfloat16(m) m(::tensorflow::bfloat16)
#define TF_CALL_int8(m) m(::tensorflow::int8)
#define TF_CALL_int16(m) m(::tensorflow::int16)
#define TF_CALL_int32(m) m(::tensorflow::int32)
#define TF_CALL_int64(m) m(::tensorflow::int64)
#define TF_CALL_uint8(m) m(::tensorflow::uint8)
#define TF_CALL_uint16(m) m(::tensorflow::uint16)
#define TF_CALL_uint32(m) m(::tensorflow::uint32)
#define TF_CALL_uint64(m) m(::tensorflow::uint64)
#define TF_CALL_bool(m) m(bool)
#define TF_CALL_FLOAT_TYPES(m) TF_CALL_half(m) TF_CALL_bfloat16(m) TF_CALL_float(m) TF_CALL_double(m)
#define TF_CALL_INTEGRAL_TYPES(m)                                                        \
  TF_CALL_uint64(m) TF_CALL_int64(m) TF_CALL_uint32(m) TF_CALL_int32(m) TF_CALL_uint16(m) \
      TF_CALL_int16(m) TF_CALL_uint8(m) TF_CALL_int8(m)
#define TF_CALL_REAL_NUMBER_TYPES(m) TF_CALL_INTEGRAL_TYPES(m) TF_CALL_FLOAT_TYPES(m)

#endif  // PDK_TF_TYPES_H_
