// Binary elementwise ops with TensorFlow's broadcasting (cwise_binary.cc).
// Ops: AddV2 Sub Mul RealDiv DivNoNan Maximum Minimum SquaredDifference Pow
// FloorDiv FloorMod (f32; add/sub/mul/max/min/floor_div/floor_mod also i64);
// Equal NotEqual Less LessEqual Greater GreaterEqual (f32, i64 -> bool as
// uchar; Equal/NotEqual also bool); LogicalAnd LogicalOr. Formulas: TensorFlow's
// cwise_ops.h functors (Maximum/Minimum propagate NaN, DivNoNan gives 0 where
// y == 0).
//
// Two kernels per op and dtype:
//   cw_<op>_<sfx>(a, b, y, n, sa, sb): flat; a read at i*sa, b at i*sb
//     (step 0: a broadcast scalar);
//   cw_<op>_bc_<sfx>(a, b, y, rows, inner, chunks, dims, sa, sb): y has dims
//     (long8, leading 1s; dims.s7 == inner, rows = the product of the
//     others), a/b are read at the dot product of the coordinates with their
//     element strides (0 where broadcast); chunks = ceil(inner / CW_CHUNK).

// Offsets of element i of a long8 view for two (or three) stride sets.
inline void cw_offsets2(long i, long8 dims, long8 s0, long8 s1, long* o0, long* o1) {
  long d[8], a[8], b[8];
  vstore8(dims, 0, d);
  vstore8(s0, 0, a);
  vstore8(s1, 0, b);
  long r = i, x = 0, y = 0;
  for (int k = 7; k >= 0 && r > 0; --k) {
    const long c = r % d[k];
    r /= d[k];
    x += c * a[k];
    y += c * b[k];
  }
  *o0 = x;
  *o1 = y;
}

inline void cw_offsets3(long i, long8 dims, long8 s0, long8 s1, long8 s2, long* o0, long* o1,
                        long* o2) {
  long d[8], a[8], b[8], e[8];
  vstore8(dims, 0, d);
  vstore8(s0, 0, a);
  vstore8(s1, 0, b);
  vstore8(s2, 0, e);
  long r = i, x = 0, y = 0, z = 0;
  for (int k = 7; k >= 0 && r > 0; --k) {
    const long c = r % d[k];
    r /= d[k];
    x += c * a[k];
    y += c * b[k];
    z += c * e[k];
  }
  *o0 = x;
  *o1 = y;
  *o2 = z;
}

// The strided form: one work-item per CW_CHUNK elements of an innermost row
// (dims.s7 = inner elements per row; the row's offsets come from dims.s0-s6,
// so the index arithmetic is paid once per chunk, not per element).
#define CW_CHUNK 64

// The strided kernels' prologue: work-item w covers elements [j0, j1) of row
// `row` (of rows * chunks work-items); od = dims with the row dim set to 1,
// the view cw_offsets2/3 take to find the row's first elements.
#define CW_ROW_CHUNK(rows, inner, chunks, dims) \
  INDEX_OR_RETURN(w, (rows) * (chunks)); \
  const long row = w / (chunks); \
  const long j0 = (w - row * (chunks)) * CW_CHUNK; \
  const long j1 = min(j0 + CW_CHUNK, (inner)); \
  long8 od = (dims); \
  od.s7 = 1;

// EXPR uses x (from a) and z (from b).
#define CW_BINARY(NAME, TI, TO, SFX, EXPR)                                                   \
  __kernel void cw_##NAME##_##SFX(TENSOR(const TI, a), TENSOR(const TI, b), TENSOR(TO, out), \
                                  const long n, const long sa, const long sb) {              \
    INDEX_OR_RETURN(i, n);                                                                   \
    const TI x = PTR(a)[i * sa];                                                             \
    const TI z = PTR(b)[i * sb];                                                             \
    PTR(out)[i] = (TO)(EXPR);                                                                \
  }                                                                                          \
  __kernel void cw_##NAME##_bc_##SFX(TENSOR(const TI, a), TENSOR(const TI, b),               \
                                     TENSOR(TO, out), const long rows, const long inner,     \
                                     const long chunks, const long8 dims, const long8 sa,    \
                                     const long8 sb) {                                       \
    CW_ROW_CHUNK(rows, inner, chunks, dims);                                                 \
    long ia, ib;                                                                             \
    cw_offsets2(row, od, sa, sb, &ia, &ib);                                                  \
    const __global TI* pa = PTR(a) + ia;                                                     \
    const __global TI* pb = PTR(b) + ib;                                                     \
    __global TO* po = PTR(out) + row * inner;                                                \
    const long ja = sa.s7, jb = sb.s7;                                                       \
    for (long j = j0; j < j1; ++j) {                                                         \
      const TI x = pa[j * ja];                                                               \
      const TI z = pb[j * jb];                                                               \
      po[j] = (TO)(EXPR);                                                                    \
    }                                                                                        \
  }

inline float cw_maxf(float x, float z) { return isnan(x) ? x : (isnan(z) ? z : fmax(x, z)); }
inline float cw_minf(float x, float z) { return isnan(x) ? x : (isnan(z) ? z : fmin(x, z)); }

CW_BINARY(add, float, float, f32, x + z)
CW_BINARY(sub, float, float, f32, x - z)
CW_BINARY(mul, float, float, f32, x * z)
CW_BINARY(div, float, float, f32, x / z)
CW_BINARY(div_no_nan, float, float, f32, z == 0.0f ? 0.0f : x / z)
CW_BINARY(maximum, float, float, f32, cw_maxf(x, z))
CW_BINARY(minimum, float, float, f32, cw_minf(x, z))
CW_BINARY(squared_difference, float, float, f32, (x - z) * (x - z))
CW_BINARY(pow, float, float, f32, pow(x, z))

CW_BINARY(add, long, long, i64, x + z)
CW_BINARY(sub, long, long, i64, x - z)
CW_BINARY(mul, long, long, i64, x * z)
CW_BINARY(maximum, long, long, i64, x > z ? x : z)
CW_BINARY(minimum, long, long, i64, x < z ? x : z)

#define CW_COMPARISONS(T, SFX)                        \
  CW_BINARY(equal, T, uchar, SFX, x == z)             \
  CW_BINARY(not_equal, T, uchar, SFX, x != z)         \
  CW_BINARY(less, T, uchar, SFX, x < z)               \
  CW_BINARY(less_equal, T, uchar, SFX, x <= z)        \
  CW_BINARY(greater, T, uchar, SFX, x > z)            \
  CW_BINARY(greater_equal, T, uchar, SFX, x >= z)
CW_COMPARISONS(float, f32)
CW_COMPARISONS(long, i64)

// FloorDiv / FloorMod (TensorFlow's floor_div, floor_fmod, safe_floor_mod):
// rounded toward -inf; the remainder has the divisor's sign. An int64
// division by zero gives 0 here (TensorFlow's CPU kernel raises
// "Integer division by zero", which a device kernel cannot); x / -1 wraps.
inline float cw_floor_modf(float x, float z) {
  const float r = fmod(x, z);
  return (r != 0.0f && ((z < 0.0f) != (r < 0.0f))) ? r + z : r;
}
inline long cw_floor_divl(long x, long z) {
  if (z == 0) return 0;
  if (z == -1) return (long)(0UL - (ulong)x);
  const long q = x / z;
  return (x % z != 0 && ((x < 0) != (z < 0))) ? q - 1 : q;
}
inline long cw_floor_modl(long x, long z) {
  if (z == 0 || z == -1) return 0;
  const long r = x % z;
  return (r != 0 && ((r < 0) != (z < 0))) ? r + z : r;
}
CW_BINARY(floor_div, float, float, f32, floor(x / z))
CW_BINARY(floor_mod, float, float, f32, cw_floor_modf(x, z))
CW_BINARY(floor_div, long, long, i64, cw_floor_divl(x, z))
CW_BINARY(floor_mod, long, long, i64, cw_floor_modl(x, z))

// Bool logic (LogicalAnd, LogicalOr; Equal, NotEqual of bools) on uchar 0/1.
CW_BINARY(equal, uchar, uchar, b8, (x != 0) == (z != 0))
CW_BINARY(not_equal, uchar, uchar, b8, (x != 0) != (z != 0))
CW_BINARY(logical_and, uchar, uchar, b8, (x != 0) && (z != 0))
CW_BINARY(logical_or, uchar, uchar, b8, (x != 0) || (z != 0))

// A bool scalar (Equal/NotEqual of incompatible shapes without
// incompatible_shape_error).
__kernel void cw_set_bool(TENSOR(uchar, out), const long n, const int v) {
  INDEX_OR_RETURN(i, n);
  PTR(out)[i] = (uchar)v;
}
