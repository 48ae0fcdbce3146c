// pdk/tf/register_types.h — TensorFlow's TF_CALL_* type lists
// (tensorflow/core/framework/register_types.h): TF_CALL_float(m) is m(float),
// TF_CALL_REAL_NUMBER_TYPES(m) calls m for each of TensorFlow's real number
// types, and so on, with TensorFlow's lists and order, for registration code
// written for TensorFlow (each m(T) expansion carries its own `;`).
//
// The element types the kit has no C++ type for (tstring, ResourceHandle,
// Variant, float8, int4; the quantized ones where TensorFlow's include
// directory lacks Eigen's fixed-point header) expand to nothing, as the
// same macros do in TensorFlow's mobile builds: a kernel registered through
// TF_CALL_ALL_TYPES gets every numeric and bool dtype, and no string one.
// docs/kit.md, "Element types", lists them.
#ifndef PDK_TF_REGISTER_TYPES_H_
#define PDK_TF_REGISTER_TYPES_H_

#define TF_CALL_float(m) m(float)
#define TF_CALL_double(m) m(double)
#define TF_CALL_half(m) m(Eigen::half)
#define TF_CALL_bfloat16(m) m(::tensorflow::bfloat16)
#define TF_CALL_int8(m) m(::int8_t)
#define TF_CALL_int16(m) m(::int16_t)
#define TF_CALL_int32(m) m(::int32_t)
#define TF_CALL_int64(m) m(::int64_t)
#define TF_CALL_uint8(m) m(::uint8_t)
#define TF_CALL_uint16(m) m(::uint16_t)
#define TF_CALL_uint32(m) m(::uint32_t)
#define TF_CALL_uint64(m) m(::uint64_t)
#define TF_CALL_bool(m) m(bool)
#define TF_CALL_complex64(m) m(::tensorflow::complex64)
#define TF_CALL_complex128(m) m(::tensorflow::complex128)
// No C++ type in the kit: nothing is registered.
#define TF_CALL_string(m)
#define TF_CALL_tstring(m)
#define TF_CALL_resource(m)
#define TF_CALL_variant(m)
#ifdef PDK_TF_HAVE_QUANTIZED
#define TF_CALL_qint8(m) m(::tensorflow::qint8)
#define TF_CALL_quint8(m) m(::tensorflow::quint8)
#define TF_CALL_qint16(m) m(::tensorflow::qint16)
#define TF_CALL_quint16(m) m(::tensorflow::quint16)
#define TF_CALL_qint32(m) m(::tensorflow::qint32)
#else
#define TF_CALL_qint8(m)
#define TF_CALL_quint8(m)
#define TF_CALL_qint16(m)
#define TF_CALL_quint16(m)
#define TF_CALL_qint32(m)
#endif
#define TF_CALL_float8_e5m2(m)
#define TF_CALL_float8_e4m3fn(m)
#define TF_CALL_float8_e4m3fnuz(m)
#define TF_CALL_float8_e4m3b11fnuz(m)
#define TF_CALL_float8_e5m2fnuz(m)
#define TF_CALL_float4_e2m1fn(m)
#define TF_CALL_int4(m)
#define TF_CALL_uint4(m)
#define TF_CALL_int2(m)
#define TF_CALL_uint2(m)

#define TF_CALL_INTEGRAL_TYPES_NO_INT32(m)                               \
  TF_CALL_uint64(m) TF_CALL_int64(m) TF_CALL_uint32(m) TF_CALL_uint16(m) \
      TF_CALL_int16(m) TF_CALL_uint8(m) TF_CALL_int8(m)
#define TF_CALL_INTEGRAL_TYPES(m) TF_CALL_INTEGRAL_TYPES_NO_INT32(m) TF_CALL_int32(m)
#define TF_CALL_FLOAT_TYPES(m) \
  TF_CALL_half(m) TF_CALL_bfloat16(m) TF_CALL_float(m) TF_CALL_double(m)
#define TF_CALL_REAL_NUMBER_TYPES(m) TF_CALL_INTEGRAL_TYPES(m) TF_CALL_FLOAT_TYPES(m)
#define TF_CALL_REAL_NUMBER_TYPES_NO_BFLOAT16(m) \
  TF_CALL_INTEGRAL_TYPES(m) TF_CALL_half(m) TF_CALL_float(m) TF_CALL_double(m)
#define TF_CALL_REAL_NUMBER_TYPES_NO_INT32(m)                            \
  TF_CALL_half(m) TF_CALL_bfloat16(m) TF_CALL_float(m) TF_CALL_double(m) \
      TF_CALL_INTEGRAL_TYPES_NO_INT32(m)
#define TF_CALL_COMPLEX_TYPES(m) TF_CALL_complex64(m) TF_CALL_complex128(m)
#define TF_CALL_NUMBER_TYPES(m) TF_CALL_REAL_NUMBER_TYPES(m) TF_CALL_COMPLEX_TYPES(m)
#define TF_CALL_NUMBER_TYPES_NO_INT32(m) \
  TF_CALL_REAL_NUMBER_TYPES_NO_INT32(m) TF_CALL_COMPLEX_TYPES(m)
#define TF_CALL_POD_TYPES(m) TF_CALL_NUMBER_TYPES(m) TF_CALL_bool(m)
#define TF_CALL_ALL_TYPES(m) \
  TF_CALL_POD_TYPES(m) TF_CALL_tstring(m) TF_CALL_resource(m) TF_CALL_variant(m)
#define TF_CALL_POD_STRING_TYPES(m) TF_CALL_POD_TYPES(m) TF_CALL_tstring(m)
#define TF_CALL_GPU_NUMBER_TYPES(m) \
  TF_CALL_half(m) TF_CALL_bfloat16(m) TF_CALL_float(m) TF_CALL_double(m)
#define TF_CALL_GPU_ALL_TYPES(m) \
  TF_CALL_GPU_NUMBER_TYPES(m) TF_CALL_COMPLEX_TYPES(m) TF_CALL_bool(m)
#define TF_CALL_GPU_NUMBER_TYPES_NO_HALF(m) TF_CALL_float(m) TF_CALL_double(m)
#define TF_CALL_QUANTIZED_TYPES(m) TF_CALL_qint8(m) TF_CALL_quint8(m) TF_CALL_qint32(m)
#define TF_CALL_SAVE_RESTORE_TYPES(m)                                           \
  TF_CALL_REAL_NUMBER_TYPES_NO_BFLOAT16(m) TF_CALL_COMPLEX_TYPES(m)            \
      TF_CALL_QUANTIZED_TYPES(m) TF_CALL_bool(m) TF_CALL_tstring(m)

#endif  // PDK_TF_REGISTER_TYPES_H_
