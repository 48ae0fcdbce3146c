// pdk/types.h — C++ element types <-> TF_DataType, at compile time.
//
// `pdk::DataTypeOf<T>::value` is the TF_DataType of C++ type T. The kit maps the
// standard arithmetic types; a plugin maps its own 16-bit float types by
// specializing `DataTypeOf` (see src/compute/eigen.h for Eigen::half and
// Eigen::bfloat16). Using an unmapped type in a registration is a compile error.
#ifndef PDK_TYPES_H_
#define PDK_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "tensorflow/c/tf_datatype.h"

namespace pdk {

template <class T, class Enable = void>
struct DataTypeOf;  // undefined: an unmapped type does not compile

#define PDK_MAP_DTYPE_(CPP, ENUM) \
  template <> struct DataTypeOf<CPP> { static constexpr TF_DataType value = ENUM; }
PDK_MAP_DTYPE_(float, TF_FLOAT);
PDK_MAP_DTYPE_(double, TF_DOUBLE);
PDK_MAP_DTYPE_(int32_t, TF_INT32);
PDK_MAP_DTYPE_(int64_t, TF_INT64);
PDK_MAP_DTYPE_(int16_t, TF_INT16);
PDK_MAP_DTYPE_(int8_t, TF_INT8);
PDK_MAP_DTYPE_(uint8_t, TF_UINT8);
PDK_MAP_DTYPE_(uint16_t, TF_UINT16);
PDK_MAP_DTYPE_(uint32_t, TF_UINT32);
PDK_MAP_DTYPE_(uint64_t, TF_UINT64);
PDK_MAP_DTYPE_(bool, TF_BOOL);
#undef PDK_MAP_DTYPE_

template <class T>
inline constexpr TF_DataType kDataType = DataTypeOf<T>::value;

// The unsigned integer type of N bytes (N = 1, 2, 4, 8): the element type of
// kernels that move elements without reading their values, one instantiation
// per element size (Fill, Transpose; read with Tensor::bits<T>()).
template <size_t N>
struct UIntOfSize;
template <> struct UIntOfSize<1> { using type = uint8_t; };
template <> struct UIntOfSize<2> { using type = uint16_t; };
template <> struct UIntOfSize<4> { using type = uint32_t; };
template <> struct UIntOfSize<8> { using type = uint64_t; };
template <size_t N>
using UIntOfSizeT = typename UIntOfSize<N>::type;

// TensorFlow's name for a dtype ("float32", "int64", ...), as Python prints it.
inline std::string DataTypeName(TF_DataType t) {
  switch (t) {
    case TF_FLOAT: return "float32";
    case TF_DOUBLE: return "float64";
    case TF_HALF: return "float16";
    case TF_BFLOAT16: return "bfloat16";
    case TF_INT8: return "int8";
    case TF_INT16: return "int16";
    case TF_INT32: return "int32";
    case TF_INT64: return "int64";
    case TF_UINT8: return "uint8";
    case TF_UINT16: return "uint16";
    case TF_UINT32: return "uint32";
    case TF_UINT64: return "uint64";
    case TF_BOOL: return "bool";
    case TF_STRING: return "string";
    case TF_RESOURCE: return "resource";
    case TF_VARIANT: return "variant";
    case TF_COMPLEX64: return "complex64";
    case TF_COMPLEX128: return "complex128";
    default: return "dtype(" + std::to_string(static_cast<int>(t)) + ")";
  }
}

// A compile-time list of element types, iterated with `ForEachType`.
template <class... Ts>
struct TypeList {};

template <class T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) for each T in Ts.
template <class... Ts, class Fn>
void ForEachType(TypeList<Ts...>, Fn&& fn) {
  (fn(TypeTag<Ts>{}), ...);
}

}  // namespace pdk

#endif  // PDK_TYPES_H_
