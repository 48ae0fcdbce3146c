// RGBToHSV and HSVToRGB (tensorflow/core/ops/image_ops.cc): Keras's
// RandomHue, RandomSaturation and RandomColorJitter, tf.image.adjust_hue /
// adjust_saturation / rgb_to_hsv / hsv_to_rgb.
//
//   RGBToHSV(images [..., 3] T) -> [..., 3] T: (H, S, V) of each (R, G, B)
//   HSVToRGB(images [..., 3] T) -> [..., 3] T: (R, G, B) of each (H, S, V)
//   T in {float32, float64, float16, bfloat16}; H, S, V and R, G, B in [0, 1].
//
// The formulas are TensorFlow's CPU kernel's (tensorflow/core/kernels/image/
// colorspace_op.h), each step in T (16-bit types round after every operation,
// as Eigen's half and bfloat16 arithmetic does):
//   V = max(R, G, B), range = V - min(R, G, B), S = V > 0 ? range / V : 0,
//   norm = (1 / range) * (1 / 6),
//   H = R == V ? norm * (G - B) : G == V ? norm * (B - R) + 2 / 6
//                                        : norm * (R - G) + 4 / 6,
//   H = range > 0 ? H : 0, then H < 0 ? H + 1 : H;
// the channel maximum and minimum are Eigen's scalar reductions from -inf /
// +inf, where a NaN (either side) gives the later value.
//   dh = H * 6, dr = clamp(|dh - 3| - 1), dg = clamp(2 - |dh - 2|),
//   db = clamp(2 - |dh - 4|) with clamp(x) = min(max(x, 0), 1) (a NaN stays
//   NaN), and R = ((1 - S) + S * dr) * V, G and B likewise.
// Compiled with -ffp-contract=off (no FMA TensorFlow's build does not use).
//
// Errors: images of rank 0, InvalidArgument "input must be at least 1D";
// a last dimension other than 3, FailedPrecondition "input must have 3
// channels but input only has N channels." (TensorFlow's classes and wording).
//
// Parallelism: pixels over the device pool, in blocks of kBlock pixels split
// into channel planes, every step computed for every pixel and the branches
// as selects (a select keeps the value the branch would have computed, so the
// bits are the branchy formula's); the compiler vectorizes float and double.
// The planes are interleaved back.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;

// Eigen's scalar_max_op / scalar_min_op (PropagateFast) as its reducers call
// them, op(new, accumulated): std::max(a, b) / std::min(a, b) order.
template <class T>
T Max(T a, T b) { return a < b ? b : a; }
template <class T>
T Min(T a, T b) { return b < a ? b : a; }

// Eigen's cwiseMax(0).cwiseMin(1): max(x, 0) then min(., 1), a NaN kept.
template <class T>
T Clamp01(T x) {
  const T m = x < T(0) ? T(0) : x;
  return T(1) < m ? T(1) : m;
}

// Pixels per block of the planar form (three planes of 256 doubles: 6 KiB).
constexpr Index kBlock = 256;

// RgbToHsv on n <= kBlock pixels, planar: the same steps for every pixel.
template <class T>
void RgbToHsvBlock(const T* in, T* out, Index n) {
  alignas(64) T r[kBlock], g[kBlock], b[kBlock], h[kBlock], s[kBlock], v[kBlock];
  for (Index i = 0; i < n; ++i) {
    r[i] = in[3 * i];
    g[i] = in[3 * i + 1];
    b[i] = in[3 * i + 2];
  }
  const T inf = std::numeric_limits<T>::infinity();
  for (Index i = 0; i < n; ++i) {
    const T hi = Max(b[i], Max(g[i], Max(r[i], -inf)));
    const T lo = Min(b[i], Min(g[i], Min(r[i], inf)));
    const T range = hi - lo;
    const T sat = range / hi;
    s[i] = hi > T(0) ? sat : T(0);
    const T norm = (T(1) / range) * (T(1) / T(6));
    const T hr = norm * (g[i] - b[i]);
    const T hg = norm * (b[i] - r[i]) + T(2) / T(6);
    const T hb = norm * (r[i] - g[i]) + T(4) / T(6);
    T hue = r[i] == hi ? hr : (g[i] == hi ? hg : hb);
    hue = range > T(0) ? hue : T(0);
    h[i] = hue < T(0) ? hue + T(1) : hue;
    v[i] = hi;
  }
  for (Index i = 0; i < n; ++i) {
    out[3 * i] = h[i];
    out[3 * i + 1] = s[i];
    out[3 * i + 2] = v[i];
  }
}

// HsvToRgb on n <= kBlock pixels, planar.
template <class T>
void HsvToRgbBlock(const T* in, T* out, Index n) {
  alignas(64) T h[kBlock], s[kBlock], v[kBlock], r[kBlock], g[kBlock], b[kBlock];
  for (Index i = 0; i < n; ++i) {
    h[i] = in[3 * i];
    s[i] = in[3 * i + 1];
    v[i] = in[3 * i + 2];
  }
  for (Index i = 0; i < n; ++i) {
    const T dh = h[i] * T(6);
    const T dr = Clamp01<T>(Eigen::numext::abs(dh - T(3)) - T(1));
    const T dg = Clamp01<T>(-Eigen::numext::abs(dh - T(2)) + T(2));
    const T db = Clamp01<T>(-Eigen::numext::abs(dh - T(4)) + T(2));
    const T one_s = -s[i] + T(1);
    r[i] = (one_s + s[i] * dr) * v[i];
    g[i] = (one_s + s[i] * dg) * v[i];
    b[i] = (one_s + s[i] * db) * v[i];
  }
  for (Index i = 0; i < n; ++i) {
    out[3 * i] = r[i];
    out[3 * i + 1] = g[i];
    out[3 * i + 2] = b[i];
  }
}

template <class T, bool kToHsv>
class ColorspaceOp : public OpKernel {
 public:
  explicit ColorspaceOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const TensorShape& s = x.shape();
    OP_REQUIRES(ctx, s.dims() >= 1,
                errors::InvalidArgument("input must be at least 1D", s.DebugString(), " (",
                                        type_string(), ")"));
    const int64_t channels = s.dim_size(s.dims() - 1);
    OP_REQUIRES(ctx, channels == 3,
                errors::FailedPrecondition("input must have 3 channels but input only has ",
                                           channels, " channels. (", type_string(),
                                           ": images of shape ", s, ")"));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, s, &y));
    const int64_t pixels = s.num_elements() / 3;
    if (pixels == 0) return;
    const T* in = x.flat<T>().data();
    T* out = y->flat<T>().data();
    pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(), pixels,
                             Eigen::TensorOpCost(3 * sizeof(T), 3 * sizeof(T), 4),
                             [&](Index first, Index last) {
                               for (Index p = first; p < last; p += kBlock) {
                                 const Index n = std::min(kBlock, last - p);
                                 if constexpr (kToHsv) {
                                   RgbToHsvBlock<T>(in + 3 * p, out + 3 * p, n);
                                 } else {
                                   HsvToRgbBlock<T>(in + 3 * p, out + 3 * p, n);
                                 }
                               }
                             });
  }
};

#define PDK_REGISTER_COLORSPACE_(T)                                                   \
  REGISTER_KERNEL_BUILDER(Name("RGBToHSV").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          ColorspaceOp<T, true>);                                     \
  REGISTER_KERNEL_BUILDER(Name("HSVToRGB").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          ColorspaceOp<T, false>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_COLORSPACE_)  // float16, bfloat16, float32, float64
#undef PDK_REGISTER_COLORSPACE_

}  // namespace
}  // namespace tensorflow
