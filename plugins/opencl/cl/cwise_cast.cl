// Cast between float32, int64 and bool (cwise_cast.cc), flat over n.
// float -> int64 truncates toward zero; NaN and values outside int64 give
// INT64_MIN, as TensorFlow's CPU cast on x86 (cvttss2si). To bool: x != 0
// (NaN -> true). From bool: 0 or 1. int64 -> float rounds to nearest even.
#define CW_CAST(SRC, SS, DST, DS, EXPR)                                                  \
  __kernel void cw_cast_##SS##_##DS(TENSOR(const SRC, in), TENSOR(DST, out), const long n) { \
    INDEX_OR_RETURN(i, n);                                                               \
    const SRC x = PTR(in)[i];                                                            \
    PTR(out)[i] = (EXPR);                                                                \
  }
inline long cw_f32_to_i64(float x) {
  return (x >= -0x1p63f && x < 0x1p63f) ? (long)x : (long)0x8000000000000000UL;
}
CW_CAST(float, f32, long, i64, cw_f32_to_i64(x))
CW_CAST(float, f32, uchar, b8, (uchar)(x != 0.0f || isnan(x)))
CW_CAST(long, i64, float, f32, convert_float_rte(x))
CW_CAST(long, i64, uchar, b8, (uchar)(x != 0))
CW_CAST(uchar, b8, float, f32, x != 0 ? 1.0f : 0.0f)
CW_CAST(uchar, b8, long, i64, x != 0 ? 1L : 0L)
