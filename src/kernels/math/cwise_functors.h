// The elementwise functors of PDK's cwise kernels, shared by the standalone
// kernels (cwise_unary.cc, cwise_binary.cc, erf.cc) and _PdkFusedElementwise
// (fused_elementwise.cc), so a fused group computes every element with the
// same code as the unfused ops (bit-identical results).
//
//   pdk_kernels::unary::<Op>: `static auto Apply(const X& x)`, the Eigen
//     expression of the op over a tensor expression x (float32, float64; the
//     16-bit floats are evaluated in float32 by compute/unary.h).
//   pdk_kernels::functors::<Op><T>: Eigen binary functors (operator() and,
//     where functor_traits say PacketAccess, packetOp) for the binary ops that
//     Eigen has no functor for; the others use Eigen's scalar_*_op.
// Formulas and sources are given at each functor. The files that include this
// are compiled with -ffp-contract=off (CMakeLists.txt): no a*b+c is contracted
// into an FMA, so the functors give the same bits wherever they are inlined.
#ifndef PDK_SRC_KERNELS_MATH_CWISE_FUNCTORS_H_
#define PDK_SRC_KERNELS_MATH_CWISE_FUNCTORS_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "compute/eigen.h"
#include "compute/exact_sqrt.h"

namespace pdk_kernels {
namespace unary {

// sign(x): -1, 0 or 1; NaN stays NaN.
template <class T>
struct SignFn {
  T operator()(const T& x) const {
    if (x > T(0)) return T(1);
    if (x < T(0)) return T(-1);
    return x == T(0) ? T(0) : x;
  }
};
struct NotFn {
  bool operator()(const bool& x) const { return !x; }
};

// Each op: Apply(x) builds the Eigen expression for a flat view x.
#define PDK_UNARY_(NAME, EXPR)                   \
  struct NAME {                                  \
    template <class X>                           \
    static auto Apply(const X& x) {              \
      return EXPR;                               \
    }                                            \
  }
PDK_UNARY_(Neg, -x);
PDK_UNARY_(Square, x.square());
PDK_UNARY_(Abs, x.abs());
PDK_UNARY_(Sign, x.unaryExpr(SignFn<typename X::Scalar>()));
PDK_UNARY_(Round, x.rint());
PDK_UNARY_(Sqrt, pdk_compute::ExactSqrt(x));  // IEEE, as TF's CPU (exact_sqrt.h)
PDK_UNARY_(Rsqrt, x.rsqrt());
PDK_UNARY_(Exp, x.exp());
PDK_UNARY_(Log, x.log());
PDK_UNARY_(Log1p, x.log1p());
PDK_UNARY_(Expm1, x.expm1());  // TensorFlow's CPU functor: Eigen's scalar_expm1_op
PDK_UNARY_(Reciprocal, x.inverse());
PDK_UNARY_(Floor, x.floor());
PDK_UNARY_(Ceil, x.ceil());
PDK_UNARY_(Sigmoid, x.sigmoid());
PDK_UNARY_(Tanh, x.tanh());
PDK_UNARY_(LogicalNot, x.unaryExpr(NotFn()));
#undef PDK_UNARY_


// Erf, Erfc: Eigen's scalar_erf_op / scalar_erfc_op, the functors of
// TensorFlow's CPU kernels (cwise_op_erf.cc, cwise_op_erfc.cc).
struct Erf {
  template <class X>
  static auto Apply(const X& x) {
    return x.erf();
  }
};
struct Erfc {
  template <class X>
  static auto Apply(const X& x) {
    return x.erfc();
  }
};

// Sin, Cos, Tan, Asin, Acos, Atan: Eigen's scalar_*_op, the functors of
// TensorFlow's CPU kernels (cwise_op_sin.cc, ...: functor::sin is
// base<T, Eigen::internal::scalar_sin_op<T>>).
#define PDK_UNARY_EIGEN_OP_(NAME, OP)                                   \
  struct NAME {                                                         \
    template <class X>                                                  \
    static auto Apply(const X& x) {                                     \
      return x.unaryExpr(Eigen::internal::OP<typename X::Scalar>());   \
    }                                                                   \
  }
PDK_UNARY_EIGEN_OP_(Sin, scalar_sin_op);
PDK_UNARY_EIGEN_OP_(Cos, scalar_cos_op);
PDK_UNARY_EIGEN_OP_(Tan, scalar_tan_op);
PDK_UNARY_EIGEN_OP_(Asin, scalar_asin_op);
PDK_UNARY_EIGEN_OP_(Acos, scalar_acos_op);
PDK_UNARY_EIGEN_OP_(Atan, scalar_atan_op);
#undef PDK_UNARY_EIGEN_OP_

}  // namespace unary
}  // namespace pdk_kernels

namespace pdk_kernels {
namespace functors {

namespace ei = Eigen::internal;

// (x - y)^2.
template <class T>
struct SquaredDifference {
  T operator()(const T& a, const T& b) const {
    const T d = a - b;
    return d * d;
  }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    const P d = ei::psub(a, b);
    return ei::pmul(d, d);
  }
};

// x / y, or 0 where y == 0.
template <class T>
struct DivNoNan {
  T operator()(const T& a, const T& b) const { return b == T(0) ? T(0) : a / b; }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    const P zero = ei::pzero(b);
    return ei::pselect(ei::pcmp_eq(b, zero), zero, ei::pdiv(a, b));
  }
};

// x * log(y), or 0 where x == 0 (TensorFlow's xlogy_op, cwise_ops.h: the
// packet path keeps x itself there, so -0 stays -0, as on TensorFlow's CPU).
template <class T>
struct Xlogy {
  T operator()(const T& a, const T& b) const {
    return a == T(0) ? T(0) : T(a * Eigen::numext::log(b));
  }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    return ei::pselect(ei::pcmp_eq(a, ei::pzero(a)), a, ei::pmul(a, ei::plog(b)));
  }
};

// x * log1p(y), or 0 where x == 0 (TensorFlow's xlog1py_op).
template <class T>
struct Xlog1py {
  T operator()(const T& a, const T& b) const {
    return a == T(0) ? T(0) : T(a * Eigen::numext::log1p(b));
  }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    return ei::pselect(ei::pcmp_eq(a, ei::pzero(a)), a, ei::pmul(a, ei::plog1p(b)));
  }
};

// x / y, or 0 where x == 0 (TensorFlow's xdivy_op).
template <class T>
struct Xdivy {
  T operator()(const T& a, const T& b) const { return a == T(0) ? T(0) : T(a / b); }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    return ei::pselect(ei::pcmp_eq(a, ei::pzero(a)), a, ei::pdiv(a, b));
  }
};

// x * y, or 0 where y == 0 even if x is NaN or inf (TensorFlow's mul_no_nan_op).
template <class T>
struct MulNoNan {
  T operator()(const T& a, const T& b) const { return b == T(0) ? T(0) : T(a * b); }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    const P zero = ei::pzero(b);
    return ei::pselect(ei::pcmp_eq(b, zero), zero, ei::pmul(a, b));
  }
};

// atan2(x, y): the angle of the point (y, x), in (-pi, pi] (C's atan2 of y = x
// and x = y: TensorFlow's Atan2(y, x) takes the ordinate first). Scalar only.
template <class T>
struct Atan2 {
  T operator()(const T& a, const T& b) const { return std::atan2(a, b); }
};

// x / y rounded toward zero, for integers (TensorFlow's Div and TruncateDiv on
// integer dtypes). y must be nonzero (checked before evaluation);
// min / -1 wraps to min instead of trapping.
template <class T>
struct TruncateDiv {
  T operator()(const T& a, const T& b) const {
    if (b == 0) return T(0);  // rejected earlier; never trap
    if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    return a / b;
  }
};

// floor(x / y). Integer y must be nonzero (checked before evaluation).
template <class T, bool kInt = std::is_integral_v<T>>
struct FloorDiv {
  T operator()(const T& a, const T& b) const {
    if (b == 0) return T(0);  // rejected earlier; never trap
    if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    const T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
};
template <class T>
struct FloorDiv<T, false> {
  T operator()(const T& a, const T& b) const { return std::floor(a / b); }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    return ei::pfloor(ei::pdiv(a, b));
  }
};

// x - floor(x / y) * y, with the sign of y. Integer y must be nonzero.
template <class T, bool kInt = std::is_integral_v<T>>
struct FloorMod {
  T operator()(const T& a, const T& b) const {
    if (b == 0 || b == T(-1)) return T(0);
    const T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
};
template <class T>
struct FloorMod<T, false> {
  T operator()(const T& a, const T& b) const {
    const T r = std::fmod(a, b);
    return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
  }
};

// x^y for integers, y >= 0 (checked before evaluation); wraps on overflow.
template <class T>
struct IntPow {
  T operator()(const T& a, const T& b) const {
    using U = std::make_unsigned_t<T>;
    U base = static_cast<U>(a), result = 1;
    for (T e = b; e > 0; e >>= 1) {
      if (e & 1) result *= base;
      base *= base;
    }
    return static_cast<T>(result);
  }
};

struct LogicalAnd {
  bool operator()(const bool& a, const bool& b) const { return a && b; }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    return ei::pand(a, b);
  }
};
struct LogicalOr {
  bool operator()(const bool& a, const bool& b) const { return a || b; }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    return ei::por(a, b);
  }
};

template <class T>
struct BitwiseAnd {
  T operator()(const T& a, const T& b) const { return a & b; }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    return ei::pand(a, b);
  }
};
template <class T>
struct BitwiseOr {
  T operator()(const T& a, const T& b) const { return a | b; }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    return ei::por(a, b);
  }
};
template <class T>
struct BitwiseXor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
  template <class P>
  P packetOp(const P& a, const P& b) const {
    return ei::pxor(a, b);
  }
};

// LeftShift / RightShift: the shift clamped to [0, bits - 1] (a negative
// shift is 0), a left shift done unsigned, a right shift arithmetic for signed
// types: TensorFlow's left_shift_op / right_shift_op
// (tensorflow/core/kernels/cwise_ops.h), so results match its CPU kernel.
template <class T>
T ClampShift(T y) {
  constexpr T kMax = static_cast<T>(sizeof(T) * 8 - 1);
  if constexpr (std::is_signed_v<T>) {
    if (y < 0) return 0;
  }
  return y > kMax ? kMax : y;
}
template <class T>
struct LeftShift {
  T operator()(const T& x, const T& y) const {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) << static_cast<U>(ClampShift(y)));
  }
};
template <class T>
struct RightShift {
  T operator()(const T& x, const T& y) const { return static_cast<T>(x >> ClampShift(y)); }
};

// Gradients: first argument y (the forward output), second dy.
template <class T>
struct SigmoidGrad {
  T operator()(const T& y, const T& dy) const { return dy * y * (T(1) - y); }
  template <class P>
  P packetOp(const P& y, const P& dy) const {
    return ei::pmul(dy, ei::pmul(y, ei::psub(ei::pset1<P>(T(1)), y)));
  }
};
template <class T>
struct TanhGrad {
  T operator()(const T& y, const T& dy) const { return dy * (T(1) - y * y); }
  template <class P>
  P packetOp(const P& y, const P& dy) const {
    return ei::pmul(dy, ei::psub(ei::pset1<P>(T(1)), ei::pmul(y, y)));
  }
};
// The next three return 0 wherever dy == 0 (even where y is 0 or inf), as
// TensorFlow does.
template <class T>
struct SqrtGrad {
  T operator()(const T& y, const T& dy) const {
    return dy == T(0) ? T(0) : (T(0.5) * dy) / y;
  }
  template <class P>
  P packetOp(const P& y, const P& dy) const {
    const P zero = ei::pzero(dy);
    return ei::pselect(ei::pcmp_eq(dy, zero), zero,
                       ei::pdiv(ei::pmul(ei::pset1<P>(T(0.5)), dy), y));
  }
};
template <class T>
struct RsqrtGrad {
  T operator()(const T& y, const T& dy) const {
    return dy == T(0) ? T(0) : T(-0.5) * (dy * y) * (y * y);
  }
  template <class P>
  P packetOp(const P& y, const P& dy) const {
    const P zero = ei::pzero(dy);
    const P v = ei::pmul(ei::pmul(ei::pset1<P>(T(-0.5)), ei::pmul(dy, y)), ei::pmul(y, y));
    return ei::pselect(ei::pcmp_eq(dy, zero), zero, v);
  }
};
template <class T>
struct ReciprocalGrad {
  T operator()(const T& y, const T& dy) const { return dy == T(0) ? T(0) : -dy * y * y; }
  template <class P>
  P packetOp(const P& y, const P& dy) const {
    const P zero = ei::pzero(dy);
    return ei::pselect(ei::pcmp_eq(dy, zero), zero, ei::pnegate(ei::pmul(dy, ei::pmul(y, y))));
  }
};

}  // namespace functors
}  // namespace pdk_kernels

namespace Eigen {
namespace internal {
// Vectorization switches for the functors above.
#define PDK_FUNCTOR_TRAITS_(F, COST, PACKET)                  \
  template <class T>                                          \
  struct functor_traits<pdk_kernels::functors::F<T>> {        \
    enum { Cost = COST, PacketAccess = PACKET };              \
  }
PDK_FUNCTOR_TRAITS_(SquaredDifference, 2 * NumTraits<T>::MulCost,
                    packet_traits<T>::HasSub&& packet_traits<T>::HasMul);
PDK_FUNCTOR_TRAITS_(DivNoNan, 3 * NumTraits<T>::MulCost,
                    packet_traits<T>::HasDiv&& packet_traits<T>::HasCmp);
PDK_FUNCTOR_TRAITS_(Xlogy, 5 * NumTraits<T>::MulCost,
                    packet_traits<T>::HasLog&& packet_traits<T>::HasCmp);
PDK_FUNCTOR_TRAITS_(Xlog1py, 5 * NumTraits<T>::MulCost,
                    packet_traits<T>::HasLog1p&& packet_traits<T>::HasCmp);
PDK_FUNCTOR_TRAITS_(Xdivy, 3 * NumTraits<T>::MulCost,
                    packet_traits<T>::HasDiv&& packet_traits<T>::HasCmp);
PDK_FUNCTOR_TRAITS_(MulNoNan, 2 * NumTraits<T>::MulCost, packet_traits<T>::HasCmp);
PDK_FUNCTOR_TRAITS_(Atan2, 20 * NumTraits<T>::MulCost, false);
PDK_FUNCTOR_TRAITS_(IntPow, 10 * NumTraits<T>::MulCost, false);
PDK_FUNCTOR_TRAITS_(BitwiseAnd, 1, true);
PDK_FUNCTOR_TRAITS_(BitwiseOr, 1, true);
PDK_FUNCTOR_TRAITS_(BitwiseXor, 1, true);
PDK_FUNCTOR_TRAITS_(LeftShift, 2, false);
PDK_FUNCTOR_TRAITS_(RightShift, 2, false);
PDK_FUNCTOR_TRAITS_(SigmoidGrad, 3 * NumTraits<T>::MulCost, packet_traits<T>::HasMul);
PDK_FUNCTOR_TRAITS_(TanhGrad, 3 * NumTraits<T>::MulCost, packet_traits<T>::HasMul);
PDK_FUNCTOR_TRAITS_(SqrtGrad, 6 * NumTraits<T>::MulCost,
                    packet_traits<T>::HasDiv&& packet_traits<T>::HasCmp);
PDK_FUNCTOR_TRAITS_(RsqrtGrad, 5 * NumTraits<T>::MulCost, packet_traits<T>::HasCmp);
PDK_FUNCTOR_TRAITS_(ReciprocalGrad, 4 * NumTraits<T>::MulCost, packet_traits<T>::HasCmp);
#undef PDK_FUNCTOR_TRAITS_
template <>
struct functor_traits<pdk_kernels::functors::LogicalAnd> {
  enum { Cost = 1, PacketAccess = true };
};
template <>
struct functor_traits<pdk_kernels::functors::LogicalOr> {
  enum { Cost = 1, PacketAccess = true };
};
template <class T, bool kInt>
struct functor_traits<pdk_kernels::functors::FloorDiv<T, kInt>> {
  enum {
    Cost = 8 * NumTraits<T>::MulCost,
    PacketAccess = !kInt && std::is_floating_point<T>::value && packet_traits<T>::HasDiv
  };
};
template <class T>
struct functor_traits<pdk_kernels::functors::TruncateDiv<T>> {
  enum { Cost = 8 * NumTraits<T>::MulCost, PacketAccess = false };
};
template <class T, bool kInt>
struct functor_traits<pdk_kernels::functors::FloorMod<T, kInt>> {
  enum { Cost = 10 * NumTraits<T>::MulCost, PacketAccess = false };
};
}  // namespace internal
}  // namespace Eigen

#endif  // PDK_SRC_KERNELS_MATH_CWISE_FUNCTORS_H_
