// ResizeBicubic and ResizeBicubicGrad (tensorflow/core/ops/image_ops.cc),
// NHWC: tf.image.resize(method="bicubic"), Keras's
// Resizing(interpolation="bicubic").
//
//   ResizeBicubic(images [B,H,W,C] T, size (host int32 [2]: OH, OW);
//                 align_corners, half_pixel_centers) -> float32 [B,OH,OW,C]
//   ResizeBicubicGrad(grads float32 [B,OH,OW,C], original_image [B,H,W,C] T;
//                     same attributes) -> T [B,H,W,C]
//
// Cubic convolution (R. G. Keys, "Cubic convolution interpolation for digital
// image processing", IEEE Trans. ASSP 29(6), 1981), as TensorFlow's CPU kernel
// computes it (tensorflow/core/kernels/image/resize_bicubic_op.cc), in float32:
//   src(i) = half_pixel_centers ? (i + 0.5f) * scale - 0.5f : i * scale
//   (scale as ResizeBilinear's), k = floor(src), t = src - k;
//   the four taps k-1 .. k+2, clamped to [0, in-1], weigh
//   W(1+t), W(t), W(1-t), W(2-t), with W the cubic kernel of parameter
//   a = -0.5 (Keys) with half_pixel_centers, a = -0.75 without:
//     W(x) = (a+2)|x|^3 - (a+3)|x|^2 + 1          for |x| <= 1
//     W(x) = a|x|^3 - 5a|x|^2 + 8a|x| - 4a         for 1 < |x| < 2
//   read from a 1025-entry table at lrintf(t * 1024) (TensorFlow's table,
//   computed in double, stored in float). With half_pixel_centers a tap
//   outside the image gets weight 0 and the four weights are divided by their
//   sum (when |sum| >= 1000 * FLT_MIN); without, a clamped tap repeats the
//   edge pixel with its weight.
//   Forward: each of the four source columns' y-interpolation
//   v0*wy0 + v1*wy1 + v2*wy2 + v3*wy3 (in order), then
//   c0*wx0 + c1*wx1 + c2*wx2 + c3*wx3.
//   Gradient: each grads pixel (y, x), in row-major order, adds
//   T(T(g) * wy_k * wx_l) into the 16 source pixels (k, l in row-major order),
//   accumulating in T.
// Compiled with -ffp-contract=off, as TensorFlow's build computes these
// sums: bit-identical to TensorFlow's CPU kernel in the conformance sweep.
//   ResizeBicubic: T in {float32, float64, float16, bfloat16, uint8}.
//   ResizeBicubicGrad: T in {float32, float64} (TensorFlow's CPU kernels).
//
// Errors (InvalidArgument, TensorFlow's wording first, in its order): as
// ResizeBilinear's and ResizeBilinearGrad's (image_resizer.h).
//
// Parallelism: the forward splits output rows (b, y) over the device pool; the
// gradient splits (image, channel block) units and keeps TensorFlow's order
// in each.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "compute/channel_blocks.h"
#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/image/image_resizer.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;
using pdk_image::ResizeBase;
using pdk_image::ResizeScale;

constexpr int kTableSize = 1 << 10;

// {W(x), W(x + 1)} for x = i / 1024, i = 0 .. 1024: TensorFlow's table.
using CubicTable = std::array<float, (kTableSize + 1) * 2>;

CubicTable MakeTable(double a) {
  CubicTable t{};
  for (int i = 0; i <= kTableSize; ++i) {
    float x = static_cast<float>(i * 1.0 / kTableSize);
    t[i * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
    x = static_cast<float>(x + 1.0);
    t[i * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
  }
  return t;
}

const CubicTable& Table(bool keys) {
  static const CubicTable kKeys = MakeTable(-0.5);
  static const CubicTable kLegacy = MakeTable(-0.75);
  return keys ? kKeys : kLegacy;
}

// The four taps of one output position along an axis.
struct Taps {
  std::array<float, 4> w;
  std::array<int64_t, 4> i;
};

std::vector<Taps> CubicTaps(int64_t in, int64_t out, float scale, bool half_pixel) {
  const CubicTable& t = Table(half_pixel);
  std::vector<Taps> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const float src =
        half_pixel ? (static_cast<float>(o) + 0.5f) * scale - 0.5f : static_cast<float>(o) * scale;
    const int64_t k = static_cast<int64_t>(std::floor(src));
    const float delta = src - static_cast<float>(k);
    const int64_t off = std::lrint(delta * static_cast<float>(kTableSize));
    const std::array<float, 4> w = {t[off * 2 + 1], t[off * 2], t[(kTableSize - off) * 2],
                                    t[(kTableSize - off) * 2 + 1]};
    Taps& tp = taps[o];
    for (int j = 0; j < 4; ++j) {
      const int64_t want = k - 1 + j;
      tp.i[j] = std::min(in - 1, std::max<int64_t>(0, want));
      tp.w[j] = (half_pixel && tp.i[j] != want) ? 0.0f : w[j];
    }
    if (half_pixel) {
      const float sum = tp.w[0] + tp.w[1] + tp.w[2] + tp.w[3];
      if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
        const float inv = 1.0f / sum;
        for (float& v : tp.w) v *= inv;
      }
    }
  }
  return taps;
}

template <class T>
class ResizeBicubicOp : public ResizeBase {
 public:
  explicit ResizeBicubicOp(OpKernelConstruction* c) : ResizeBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    pdk_image::ResizeShape s;
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ValidateAndAllocate(ctx, &s, &y));
    if (y->NumElements() == 0) return;
    const std::vector<Taps> ys = CubicTaps(s.h, s.oh, s.hs, half_pixel_);
    const std::vector<Taps> xs = CubicTaps(s.w, s.ow, s.ws, half_pixel_);
    const T* src = ctx->input(0).flat<T>().data();
    float* dst = y->flat<float>().data();
    const int64_t w = s.w, c = s.c;
    const double cost = double((w + s.ow) * c * 8);
    pdk_compute::ParallelFor(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), s.b * s.oh,
        Eigen::TensorOpCost(double(w * c * 4 * sizeof(T)), double(s.ow * c * 4), cost),
        [&](Index first, Index last) {
          // The y-interpolation of every source column of the row: each
          // output pixel reads four of them (the value TensorFlow caches).
          std::vector<float> col(static_cast<size_t>(w * c));
          for (Index row = first; row < last; ++row) {
            const int64_t n = row / s.oh;
            const Taps& ty = ys[row % s.oh];
            const T* img = src + n * s.h * w * c;
            const T* r0 = img + ty.i[0] * w * c;
            const T* r1 = img + ty.i[1] * w * c;
            const T* r2 = img + ty.i[2] * w * c;
            const T* r3 = img + ty.i[3] * w * c;
            for (int64_t p = 0; p < w * c; ++p)
              col[p] = static_cast<float>(r0[p]) * ty.w[0] + static_cast<float>(r1[p]) * ty.w[1] +
                       static_cast<float>(r2[p]) * ty.w[2] + static_cast<float>(r3[p]) * ty.w[3];
            float* o = dst + row * s.ow * c;
            for (int64_t xi = 0; xi < s.ow; ++xi) {
              const Taps& tx = xs[xi];
              const float* c0 = col.data() + tx.i[0] * c;
              const float* c1 = col.data() + tx.i[1] * c;
              const float* c2 = col.data() + tx.i[2] * c;
              const float* c3 = col.data() + tx.i[3] * c;
              for (int64_t ch = 0; ch < c; ++ch)
                o[xi * c + ch] =
                    c0[ch] * tx.w[0] + c1[ch] * tx.w[1] + c2[ch] * tx.w[2] + c3[ch] * tx.w[3];
            }
          }
        });
  }
};

template <class T>
class ResizeBicubicGradOp : public ResizeBase {
 public:
  explicit ResizeBicubicGradOp(OpKernelConstruction* c) : ResizeBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    pdk_image::ResizeGradShape s;
    OP_REQUIRES_OK(ctx, pdk_image::ValidateResizeGrad(type_string(), dy, ctx->input(1), &s));
    const int64_t h = s.h, w = s.w, c = s.c, oh = s.oh, ow = s.ow;
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({s.b, h, w, c}), &dx));
    if (dx->NumElements() == 0) return;
    const std::vector<Taps> ys = CubicTaps(h, oh, ResizeScale(h, oh, align_corners_), half_pixel_);
    const std::vector<Taps> xs = CubicTaps(w, ow, ResizeScale(w, ow, align_corners_), half_pixel_);
    const float* g = dy.flat<float>().data();
    T* out = dx->flat<T>().data();
    // One image's channels c0 .. c1, in TensorFlow's order.
    auto accumulate = [&](int64_t n, int64_t c0, int64_t c1) {
      T* img = out + n * h * w * c;
      for (int64_t p = 0; p < h * w; ++p) std::fill(img + p * c + c0, img + p * c + c1, T(0));
      for (int64_t yi = 0; yi < oh; ++yi) {
        const Taps& ty = ys[yi];
        for (int64_t xi = 0; xi < ow; ++xi) {
          const Taps& tx = xs[xi];
          const float* gp = g + ((n * oh + yi) * ow + xi) * c;
          for (int64_t ch = c0; ch < c1; ++ch) {
            const T v = static_cast<T>(gp[ch]);
            for (int k = 0; k < 4; ++k) {
              T* r = img + ty.i[k] * w * c + ch;
              for (int l = 0; l < 4; ++l) r[tx.i[l] * c] += T(v * ty.w[k] * tx.w[l]);
            }
          }
        }
      }
    };
    pdk_compute::ForEachImageChannelBlock(ctx->eigen_device<Eigen::ThreadPoolDevice>(), s.b, c,
                                          double(oh * ow * 16), accumulate);
  }
};

#define PDK_REGISTER_BICUBIC_(T)                                                          \
  REGISTER_KERNEL_BUILDER(                                                                \
      Name("ResizeBicubic").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("size"), \
      ResizeBicubicOp<T>);
#define PDK_REGISTER_BICUBIC_GRAD_(T)                                                          \
  REGISTER_KERNEL_BUILDER(Name("ResizeBicubicGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          ResizeBicubicGradOp<T>);
// clang-format off
TF_CALL_FLOAT_TYPES(PDK_REGISTER_BICUBIC_)  // float16, bfloat16, float32, float64
TF_CALL_uint8(PDK_REGISTER_BICUBIC_)
TF_CALL_float(PDK_REGISTER_BICUBIC_GRAD_)
TF_CALL_double(PDK_REGISTER_BICUBIC_GRAD_)
// clang-format on
#undef PDK_REGISTER_BICUBIC_GRAD_
#undef PDK_REGISTER_BICUBIC_

}  // namespace
}  // namespace tensorflow
