// Unary elementwise ops and their gradients (cwise_unary.cc), flat over n
// elements. float32 unless noted; formulas are TensorFlow's functors
// (cwise_ops.h, cwise_ops_gradients.h, softplus_op.h, relu_op_functor.h):
//   Neg Square Abs Sign (also int64), Sqrt Rsqrt=1/sqrt Exp Log Log1p
//   Reciprocal=1/x Tanh Sigmoid=1/(1+exp(-x)) Floor Ceil Round (half to even:
//   rint) Erf, Softplus (x > -t: x; x < t: exp(x); else log1p(exp(x)), with
//   t = log(FLT_EPSILON)+2), Relu6 = min(max(x,0),6), Elu = x<0 ? exp(x)-1 : x,
//   Selu = x<0 ? scale*alpha*(exp(x)-1) : scale*x, Softsign = x/(|x|+1);
//   Expm1 Sin Cos; IsNan IsInf IsFinite (float -> bool).
// Gradients (a: first input, b: second input):
//   TanhGrad(y,dy) = dy*(1-y*y); SigmoidGrad(y,dy) = dy*y*(1-y);
//   SqrtGrad(y,dy) = dy==0 ? 0 : 0.5*dy/y; RsqrtGrad(y,dy) = dy==0 ? 0 : -0.5*(dy*y)*(y*y);
//   ReciprocalGrad(y,dy) = dy==0 ? 0 : -y*y*dy; SoftplusGrad(g,x) = g/(exp(-x)+1);
//   Relu6Grad(g,x) = g * (0<x<6 ? 1 : 0) (a NaN gradient stays NaN); EluGrad(g,y) = y<0 ? g*(y+1) : g;
//   SeluGrad(g,y) = y<0 ? g*(y+scale*alpha) : g*scale;
//   SoftsignGrad(g,x) = g/(1+|x|)^2.
#define CW_UNARY(NAME, T, SFX, EXPR)                                              \
  __kernel void cw_##NAME##_##SFX(TENSOR(const T, in), TENSOR(T, out), const long n) { \
    INDEX_OR_RETURN(i, n);                                                        \
    const T x = PTR(in)[i];                                                       \
    PTR(out)[i] = (EXPR);                                                         \
  }
#define CW_GRAD(NAME, T, SFX, EXPR)                                                    \
  __kernel void cw_##NAME##_##SFX(TENSOR(const T, ina), TENSOR(const T, inb),          \
                                  TENSOR(T, out), const long n) {                      \
    INDEX_OR_RETURN(i, n);                                                             \
    const T a = PTR(ina)[i];                                                           \
    const T b = PTR(inb)[i];                                                           \
    PTR(out)[i] = (EXPR);                                                              \
  }

#define CW_SELU_SCALE 1.0507009873554804934193349852946f
#define CW_SELU_SCALE_ALPHA 1.7580993408473768599402175208123f

inline float cw_softplus(float x) {
  const float t = log(FLT_EPSILON) + 2.0f;
  if (x > -t) return x;
  const float e = exp(x);
  if (x < t) return e;
  return log1p(e);
}
inline float cw_signf(float x) { return isnan(x) ? x : (float)((x > 0.0f) - (x < 0.0f)); }

CW_UNARY(neg, float, f32, -x)
CW_UNARY(square, float, f32, x * x)
CW_UNARY(abs, float, f32, fabs(x))
CW_UNARY(sign, float, f32, cw_signf(x))
CW_UNARY(sqrt, float, f32, sqrt(x))
CW_UNARY(rsqrt, float, f32, 1.0f / sqrt(x))
CW_UNARY(exp, float, f32, exp(x))
CW_UNARY(log, float, f32, log(x))
CW_UNARY(log1p, float, f32, log1p(x))
CW_UNARY(reciprocal, float, f32, 1.0f / x)
CW_UNARY(tanh, float, f32, tanh(x))
CW_UNARY(sigmoid, float, f32, 1.0f / (1.0f + exp(-x)))
CW_UNARY(softplus, float, f32, cw_softplus(x))
CW_UNARY(floor, float, f32, floor(x))
CW_UNARY(ceil, float, f32, ceil(x))
CW_UNARY(round, float, f32, rint(x))
CW_UNARY(erf, float, f32, erf(x))
CW_UNARY(relu6, float, f32, x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x))
CW_UNARY(elu, float, f32, x < 0.0f ? exp(x) - 1.0f : x)
CW_UNARY(selu, float, f32, x < 0.0f ? CW_SELU_SCALE_ALPHA * (exp(x) - 1.0f) : CW_SELU_SCALE * x)

CW_UNARY(neg, long, i64, -x)
CW_UNARY(square, long, i64, x * x)
CW_UNARY(abs, long, i64, x < 0 ? -x : x)
CW_UNARY(sign, long, i64, (long)((x > 0) - (x < 0)))

CW_UNARY(softsign, float, f32, x / (fabs(x) + 1.0f))
CW_UNARY(expm1, float, f32, expm1(x))
CW_UNARY(sin, float, f32, sin(x))
CW_UNARY(cos, float, f32, cos(x))

// IsNan IsInf IsFinite: float -> bool (uchar).
#define CW_PREDICATE(NAME, EXPR)                                                          \
  __kernel void cw_##NAME##_f32(TENSOR(const float, in), TENSOR(uchar, out), const long n) { \
    INDEX_OR_RETURN(i, n);                                                                \
    const float x = PTR(in)[i];                                                           \
    PTR(out)[i] = (uchar)((EXPR) ? 1 : 0);                                                \
  }
CW_PREDICATE(is_nan, isnan(x))
CW_PREDICATE(is_inf, isinf(x))
CW_PREDICATE(is_finite, isfinite(x))

CW_UNARY(logical_not, uchar, b8, (uchar)(x == 0))

CW_GRAD(tanh_grad, float, f32, b * (1.0f - a * a))
CW_GRAD(sigmoid_grad, float, f32, b * a * (1.0f - a))
CW_GRAD(sqrt_grad, float, f32, b == 0.0f ? 0.0f : (0.5f * b) / a)
CW_GRAD(rsqrt_grad, float, f32, b == 0.0f ? 0.0f : -0.5f * (b * a) * (a * a))
CW_GRAD(reciprocal_grad, float, f32, b == 0.0f ? 0.0f : -a * a * b)
CW_GRAD(softplus_grad, float, f32, a / (exp(-b) + 1.0f))
CW_GRAD(relu6_grad, float, f32, a * ((b > 0.0f && b < 6.0f) ? 1.0f : 0.0f))
CW_GRAD(elu_grad, float, f32, b < 0.0f ? a * (b + 1.0f) : a)
CW_GRAD(softsign_grad, float, f32, a / ((1.0f + fabs(b)) * (1.0f + fabs(b))))
CW_GRAD(selu_grad, float, f32, b < 0.0f ? a * (b + CW_SELU_SCALE_ALPHA) : a * CW_SELU_SCALE)
