// ResizeBilinear and ResizeBilinearGrad (tensorflow/core/ops/image_ops.cc),
// NHWC: Keras's Resizing and UpSampling2D(interpolation="bilinear"),
// tf.image.resize(method="bilinear").
//
//   ResizeBilinear(images [B,H,W,C] T, size (host int32 [2]: OH, OW);
//                  align_corners, half_pixel_centers) -> float32 [B,OH,OW,C]
//   ResizeBilinearGrad(grads float32 [B,OH,OW,C], original_image [B,H,W,C] T;
//                      same attributes) -> T [B,H,W,C]
//
// The formulas are TensorFlow's CPU kernel's (tensorflow/core/kernels/image/
// resize_bilinear_op.cc), in float32:
//   scale = (align_corners && in > 1 && out > 1) ? (in - 1) / float(out - 1) : in / float(out)
//   src(i) = half_pixel_centers ? (i + 0.5f) * scale - 0.5f : i * scale
//   lower = max(floor(src), 0), upper = min(ceil(src), in - 1), lerp = src - floor(src)
//   top = tl + (tr - tl) * x_lerp, bottom = bl + (br - bl) * x_lerp,
//   out = top + (bottom - top) * y_lerp
// and the gradient adds grad * (1 - y_lerp) * (1 - x_lerp) (and the three
// other corner weights) into the four source pixels, output pixel by output
// pixel in row-major order, as there: in T for float32 / float64, in float32
// then cast once for float16 / bfloat16. (TensorFlow 2.21's float64 gradient
// differs from that float64 sum by up to ~1e-7 relative, measured; PDK's is
// the sum.) Compiled with -ffp-contract=off, so
// no step is fused into an FMA that TensorFlow's build does not fuse.
//   ResizeBilinear: T in {float32, float64, float16, bfloat16, uint8}.
//   ResizeBilinearGrad: T in {float32, float64, float16, bfloat16}.
//
// Errors (InvalidArgument, TensorFlow's wording first, in its order): images
// not rank 4, without channels or of zero height or width; size not 2
// positive int32 values; align_corners with half_pixel_centers; grads not
// rank 4 or of zero height or width; original_image not rank 4 or of zero
// height or width. As TensorFlow, the gradient's batch and channel count are
// grads' (original_image gives only its height and width).
//
// Parallelism: ResizeBilinear splits output rows (b, y) over the device pool;
// the gradient, whose source pixels are shared by neighbouring output pixels,
// splits (image, channel block) units and keeps TensorFlow's order in each.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
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

struct Interp {
  int64_t lower, upper;
  float lerp;
};

std::vector<Interp> Weights(int64_t in, int64_t out, float scale, bool half_pixel) {
  std::vector<Interp> w(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const float src = half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                                 : static_cast<float>(i) * scale;
    const float f = std::floor(src);
    w[i].lower = std::max<int64_t>(static_cast<int64_t>(f), 0);
    w[i].upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1);
    w[i].lerp = src - f;
  }
  return w;
}

template <class T>
class ResizeBilinearOp : public ResizeBase {
 public:
  explicit ResizeBilinearOp(OpKernelConstruction* c) : ResizeBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    pdk_image::ResizeShape s;
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ValidateAndAllocate(ctx, &s, &y));
    const int64_t b = s.b, h = s.h, w = s.w, c = s.c, oh = s.oh, ow = s.ow;
    const float hs = s.hs, ws = s.ws;
    if (y->NumElements() == 0) return;
    const std::vector<Interp> ys = Weights(h, oh, hs, half_pixel_);
    const std::vector<Interp> xs = Weights(w, ow, ws, half_pixel_);
    const T* src = x.flat<T>().data();
    float* dst = y->flat<float>().data();
    const double cost = double(ow * c * 8);
    pdk_compute::ParallelFor(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), b * oh,
        Eigen::TensorOpCost(cost, ow * c * 4, cost), [&](Index first, Index last) {
          for (Index row = first; row < last; ++row) {
            const int64_t n = row / oh, yi = row % oh;
            const Interp& wy = ys[yi];
            const T* top = src + (n * h + wy.lower) * w * c;
            const T* bot = src + (n * h + wy.upper) * w * c;
            float* o = dst + row * ow * c;
            for (int64_t xi = 0; xi < ow; ++xi) {
              const Interp& wx = xs[xi];
              const T *tl = top + wx.lower * c, *tr = top + wx.upper * c;
              const T *bl = bot + wx.lower * c, *br = bot + wx.upper * c;
              for (int64_t ch = 0; ch < c; ++ch) {
                const float t = static_cast<float>(tl[ch]) +
                                (static_cast<float>(tr[ch]) - static_cast<float>(tl[ch])) * wx.lerp;
                const float bb = static_cast<float>(bl[ch]) +
                                 (static_cast<float>(br[ch]) - static_cast<float>(bl[ch])) * wx.lerp;
                o[xi * c + ch] = t + (bb - t) * wy.lerp;
              }
            }
          }
        });
  }
};

template <class T>
class ResizeBilinearGradOp : public ResizeBase {
 public:
  explicit ResizeBilinearGradOp(OpKernelConstruction* c) : ResizeBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    pdk_image::ResizeGradShape s;
    OP_REQUIRES_OK(ctx, pdk_image::ValidateResizeGrad(type_string(), dy, ctx->input(1), &s));
    const int64_t b = s.b, h = s.h, w = s.w, c = s.c, oh = s.oh, ow = s.ow;
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({b, h, w, c}), &dx));
    if (dx->NumElements() == 0) return;
    const std::vector<Interp> ys = Weights(h, oh, ResizeScale(h, oh, align_corners_), half_pixel_);
    const std::vector<Interp> xs = Weights(w, ow, ResizeScale(w, ow, align_corners_), half_pixel_);
    // float32 and float64 accumulate in T; float16 and bfloat16 in a float32
    // temporary, cast once at the end (TensorFlow's ResizeBilinearOpGrad).
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    Tensor acc_t;
    if constexpr (!std::is_same_v<Acc, T>) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, dx->shape(), &acc_t));
    }
    const float* g = dy.flat<float>().data();
    T* out = dx->flat<T>().data();
    Acc* acc = nullptr;
    if constexpr (std::is_same_v<Acc, T>) {
      acc = out;
    } else {
      acc = acc_t.flat<float>().data();
    }
    pdk_compute::ForEachImageChannelBlock(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), b, c, double(oh * ow * 4),
        [&](int64_t n, int64_t c0, int64_t c1) {
          Acc* img = acc + n * h * w * c;
          for (int64_t p = 0; p < h * w; ++p) std::fill(img + p * c + c0, img + p * c + c1, Acc(0));
          for (int64_t yi = 0; yi < oh; ++yi) {
            const Interp& wy = ys[yi];
            const float iy = 1.0f - wy.lerp;
            for (int64_t xi = 0; xi < ow; ++xi) {
              const Interp& wx = xs[xi];
              const float ix = 1.0f - wx.lerp;
              const float* gp = g + ((n * oh + yi) * ow + xi) * c;
              Acc* tl = img + (wy.lower * w + wx.lower) * c;
              Acc* tr = img + (wy.lower * w + wx.upper) * c;
              Acc* bl = img + (wy.upper * w + wx.lower) * c;
              Acc* br = img + (wy.upper * w + wx.upper) * c;
              for (int64_t ch = c0; ch < c1; ++ch) {
                const float v = gp[ch];
                tl[ch] += Acc(v * iy * ix);
                tr[ch] += Acc(v * iy * wx.lerp);
                bl[ch] += Acc(v * wy.lerp * ix);
                br[ch] += Acc(v * wy.lerp * wx.lerp);
              }
            }
          }
          if constexpr (!std::is_same_v<Acc, T>) {
            T* o = out + n * h * w * c;
            for (int64_t p = 0; p < h * w; ++p)
              for (int64_t ch = c0; ch < c1; ++ch) o[p * c + ch] = T(img[p * c + ch]);
          }
        });
  }
};

#define PDK_REGISTER_RESIZE_(T)                                                                  \
  REGISTER_KERNEL_BUILDER(                                                                       \
      Name("ResizeBilinear").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("size"),       \
      ResizeBilinearOp<T>);
#define PDK_REGISTER_RESIZE_GRAD_(T)                                                         \
  REGISTER_KERNEL_BUILDER(Name("ResizeBilinearGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          ResizeBilinearGradOp<T>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_RESIZE_)  // float16, bfloat16, float32, float64
TF_CALL_uint8(PDK_REGISTER_RESIZE_)
TF_CALL_FLOAT_TYPES(PDK_REGISTER_RESIZE_GRAD_)
#undef PDK_REGISTER_RESIZE_GRAD_
#undef PDK_REGISTER_RESIZE_

}  // namespace
}  // namespace tensorflow
