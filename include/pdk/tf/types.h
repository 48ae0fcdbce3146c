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
#include <type_traits>
#include <utility>
#include <vector>

#include "pdk/eigen.h"
#include "pdk/types.h"

// Eigen's fixed-point types (qint8, quint8, qint16, quint16, qint32), header
// only, from TensorFlow's include directory where it has them.
#if __has_include("xla/tsl/framework/fixedpoint_types.h")
#include "xla/tsl/framework/fixedpoint_types.h"
#define PDK_TF_HAVE_QUANTIZED 1
#endif

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
#ifdef PDK_TF_HAVE_QUANTIZED
using qint8 = Eigen::QInt8;
using quint8 = Eigen::QUInt8;
using qint16 = Eigen::QInt16;
using quint16 = Eigen::QUInt16;
using qint32 = Eigen::QInt32;
#endif

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
  DT_QINT8 = TF_QINT8,
  DT_QUINT8 = TF_QUINT8,
  DT_QINT32 = TF_QINT32,
  DT_QINT16 = TF_QINT16,
  DT_QUINT16 = TF_QUINT16,
};

// A list of dtypes (an op's input or output types).
using DataTypeVector = std::vector<DataType>;

}  // namespace pdk_kit
}  // namespace tensorflow

// The complex dtypes, for kernels registered through TF_CALL_COMPLEX_TYPES.
template <> struct pdk::DataTypeOf<std::complex<float>> {
  static constexpr TF_DataType value = TF_COMPLEX64;
};
template <> struct pdk::DataTypeOf<std::complex<double>> {
  static constexpr TF_DataType value = TF_COMPLEX128;
};
#ifdef PDK_TF_HAVE_QUANTIZED
template <> struct pdk::DataTypeOf<Eigen::QInt8> { static constexpr TF_DataType value = TF_QINT8; };
template <> struct pdk::DataTypeOf<Eigen::QUInt8> { static constexpr TF_DataType value = TF_QUINT8; };
template <> struct pdk::DataTypeOf<Eigen::QInt16> { static constexpr TF_DataType value = TF_QINT16; };
template <> struct pdk::DataTypeOf<Eigen::QUInt16> { static constexpr TF_DataType value = TF_QUINT16; };
template <> struct pdk::DataTypeOf<Eigen::QInt32> { static constexpr TF_DataType value = TF_QINT32; };
#endif

namespace tensorflow {
inline namespace pdk_kit {

// DataTypeToEnum<float>::value == DT_FLOAT, for every type the kit maps
// (a type it does not map does not compile).
template <class T>
struct DataTypeToEnum {
  static constexpr DataType value = static_cast<DataType>(::pdk::kDataType<T>);
  static constexpr DataType v() { return value; }
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
    case DT_QINT8: return "qint8";
    case DT_QUINT8: return "quint8";
    case DT_QINT16: return "qint16";
    case DT_QUINT16: return "quint16";
    case DT_QINT32: return "qint32";
    case DT_INVALID: return "INVALID";
  }
  return "unknown dtype enum (" + std::to_string(static_cast<int>(dt)) + ")";
}

// True for the dtypes whose elements are plain bytes (every numeric dtype and
// bool), which TensorFlow's kernels copy with memcpy; false for string,
// resource and variant.
constexpr bool DataTypeCanUseMemcpy(DataType dt) {
  return dt != DT_INVALID && dt != DT_STRING && dt != DT_RESOURCE && dt != DT_VARIANT;
}

// TensorFlow's dtype predicates (types.h).
constexpr bool DataTypeIsInteger(DataType dt) {
  return dt == DT_INT8 || dt == DT_UINT8 || dt == DT_INT16 || dt == DT_UINT16 ||
         dt == DT_INT32 || dt == DT_UINT32 || dt == DT_INT64 || dt == DT_UINT64;
}
constexpr bool DataTypeIsSigned(DataType dt) {
  return dt == DT_INT8 || dt == DT_INT16 || dt == DT_INT32 || dt == DT_INT64;
}
constexpr bool DataTypeIsUnsigned(DataType dt) {
  return dt == DT_UINT8 || dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64;
}
constexpr bool DataTypeIsFloating(DataType dt) {
  return dt == DT_HALF || dt == DT_BFLOAT16 || dt == DT_FLOAT || dt == DT_DOUBLE;
}
constexpr bool DataTypeIsComplex(DataType dt) {
  return dt == DT_COMPLEX64 || dt == DT_COMPLEX128;
}
constexpr bool DataTypeIsQuantized(DataType dt) {
  return dt == DT_QINT8 || dt == DT_QUINT8 || dt == DT_QINT16 || dt == DT_QUINT16 ||
         dt == DT_QINT32;
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
  // TensorFlow's Unaligned* names: the same maps here.
  using UnalignedTensor = Tensor;
  using UnalignedConstTensor = ConstTensor;
  using UnalignedScalar = Scalar;
  using UnalignedConstScalar = ConstScalar;
  using UnalignedFlat = Flat;
  using UnalignedConstFlat = ConstFlat;
  using UnalignedVec = Vec;
  using UnalignedConstVec = ConstVec;
  using UnalignedMatrix = Matrix;
  using UnalignedConstMatrix = ConstMatrix;
  // 32-bit indexed views (To32Bit).
  using Tensor32Bit = Eigen::TensorMap<Eigen::Tensor<T, NDIMS, Eigen::RowMajor, int>>;
};

// TensorFlow's To32Bit (tensor_types.h): the same data with int indices.
template <class Index, int NumDims>
Eigen::DSizes<int, NumDims> To32Bit(const Eigen::DSizes<Index, NumDims>& in) {
  Eigen::DSizes<int, NumDims> out;
  for (int i = 0; i < NumDims; ++i) out[i] = static_cast<int>(in[i]);
  return out;
}
template <class TensorType>
typename TTypes<typename TensorType::Scalar, TensorType::NumIndices>::Tensor32Bit To32Bit(
    TensorType in) {
  return typename TTypes<typename TensorType::Scalar, TensorType::NumIndices>::Tensor32Bit(
      in.data(), To32Bit(in.dimensions()));
}

// TensorFlow's MaybeWith32BitIndexing<Device>(func, args...): on a CPU device
// (Eigen::ThreadPoolDevice, the kit's kernels' device) func(args...) as they
// are, as TensorFlow does for the CPU.
template <class Device, class Func, class... Args>
void MaybeWith32BitIndexing(Func func, Args&&... args) {
  func(std::forward<Args>(args)...);
}

}  // namespace pdk_kit
}  // namespace tensorflow

#include "pdk/tf/register_types.h"

#endif  // PDK_TF_TYPES_H_
