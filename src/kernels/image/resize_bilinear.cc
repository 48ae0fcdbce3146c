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
//   scale = (align_corners && out > 1) ? (in - 1) / float(out - 1) : in / float(out)
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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/channel_blocks.h"
#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

using Index = Eigen::Index;

// TensorFlow's FastBoundsCheck(d, max int32): d < 2^31 - 1.
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

struct Interp {
  int64_t lower, upper;
  float lerp;
};

float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                    : static_cast<float>(in) / static_cast<float>(out);
}

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

class ResizeBase {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    PDK_RETURN_IF_ERROR(a.GetOptional("align_corners", &align_corners_));
    PDK_RETURN_IF_ERROR(a.GetOptional("half_pixel_centers", &half_pixel_));
    if (align_corners_ && half_pixel_)
      return pdk::InvalidArgument("If half_pixel_centers is True, align_corners must be False.");
    return pdk::Status::OK();
  }

 protected:
  bool align_corners_ = false, half_pixel_ = false;
};

template <class T>
class ResizeBilinearOp : public ResizeBase {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor size, ctx.input(1));
    const pdk::Shape in = x.shape();
    // TensorFlow's checks, in its order (ImageResizerState::
    // ValidateAndCalculateOutputSize, tensorflow/core/util/image_resizer_state.h).
    if (in.rank() != 4)
      return pdk::InvalidArgument("input must be 4-dimensional", in.ToString(), " (", ctx.op(),
                                  ": images must be [batch, height, width, channels])");
    if (in[3] <= 0)
      return pdk::InvalidArgument("image must have at least one channel (", ctx.op(),
                                  ": images of shape ", in, ")");
    if (in[1] <= 0 || in[2] <= 0)
      return pdk::InvalidArgument("input image must be of non-zero size (", ctx.op(),
                                  ": images of shape ", in, ")");
    if (in[1] >= kInt32Max || in[2] >= kInt32Max)
      return pdk::InvalidArgument("input sizes must be between 0 and max int32 (", ctx.op(),
                                  ": images of shape ", in, ")");
    if (size.rank() != 1)
      return pdk::InvalidArgument("shape_t must be 1-dimensional", size.shape().ToString(),
                                  " (", ctx.op(), ": size must be [new_height, new_width])");
    if (size.num_elements() != 2)
      return pdk::InvalidArgument("shape_t must have two elements", size.shape().ToString(),
                                  " (", ctx.op(), ": size must be [new_height, new_width])");
    const int32_t* sz = size.data<int32_t>();
    if (sz[0] <= 0 || sz[1] <= 0)
      return pdk::InvalidArgument("output dimensions must be positive (", ctx.op(), ": size [",
                                  sz[0], ",", sz[1], "])");
    const int64_t b = in[0], h = in[1], w = in[2], c = in[3], oh = sz[0], ow = sz[1];
    const float hs = ResizeScale(h, oh, align_corners_), ws = ResizeScale(w, ow, align_corners_);
    if (std::ceil(static_cast<float>(oh - 1) * hs) >
        static_cast<float>(std::numeric_limits<int64_t>::max()))
      return pdk::InvalidArgument("input image height scale would cause an overflow (", ctx.op(),
                                  ")");
    if (std::ceil(static_cast<float>(ow - 1) * ws) > static_cast<float>(kInt32Max))
      return pdk::InvalidArgument("input image width scale would cause an overflow (", ctx.op(),
                                  ")");
    PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.allocate_output(0, pdk::Shape{b, oh, ow, c}));
    if (y.num_elements() == 0) return pdk::Status::OK();
    const std::vector<Interp> ys = Weights(h, oh, hs, half_pixel_);
    const std::vector<Interp> xs = Weights(w, ow, ws, half_pixel_);
    const T* src = x.data<T>();
    float* dst = y.data<float>();
    const double cost = double(ow * c * 8);
    pdk_compute::Device(ctx).parallelFor(
        b * oh, Eigen::TensorOpCost(cost, ow * c * 4, cost), [&](Index first, Index last) {
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
    return pdk::Status::OK();
  }
};

template <class T>
class ResizeBilinearGradOp : public ResizeBase {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dy, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor orig, ctx.input(1));
    const pdk::Shape gs = dy.shape(), os = orig.shape();
    // TensorFlow's checks, in its order (ImageResizerGradientState::
    // ValidateAndCreateOutput): the output takes its batch and channels from
    // grads and only its height and width from original_image.
    if (gs.rank() != 4)
      return pdk::InvalidArgument("input_grad must be 4-dimensional", gs.ToString(), " (",
                                  ctx.op(), ")");
    if (gs[1] <= 0 || gs[2] <= 0)
      return pdk::InvalidArgument("resized dimensions must be positive (", ctx.op(),
                                  ": grads of shape ", gs, ")");
    if (os.rank() != 4)
      return pdk::InvalidArgument("original_image must be 4-dimensional", os.ToString(), " (",
                                  ctx.op(), ")");
    if (os[1] <= 0 || os[2] <= 0)
      return pdk::InvalidArgument("original dimensions must be positive (", ctx.op(),
                                  ": original_image of shape ", os, ")");
    if (os[1] >= kInt32Max || os[2] >= kInt32Max)
      return pdk::InvalidArgument("original sizes must be between 0 and max int32 (", ctx.op(),
                                  ": original_image of shape ", os, ")");
    const int64_t b = gs[0], h = os[1], w = os[2], c = gs[3], oh = gs[1], ow = gs[2];
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dx, ctx.allocate_output(0, pdk::Shape{b, h, w, c}));
    if (dx.num_elements() == 0) return pdk::Status::OK();
    const std::vector<Interp> ys = Weights(h, oh, ResizeScale(h, oh, align_corners_), half_pixel_);
    const std::vector<Interp> xs = Weights(w, ow, ResizeScale(w, ow, align_corners_), half_pixel_);
    // float32 and float64 accumulate in T; float16 and bfloat16 in a float32
    // temporary, cast once at the end (TensorFlow's ResizeBilinearOpGrad).
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    pdk::Tensor acc_t;
    if constexpr (!std::is_same_v<Acc, T>) {
      PDK_ASSIGN_OR_RETURN(acc_t, ctx.allocate_temp(TF_FLOAT, dx.shape()));
    }
    const float* g = dy.data<float>();
    T* out = dx.data<T>();
    Acc* acc = nullptr;
    if constexpr (std::is_same_v<Acc, T>) {
      acc = out;
    } else {
      acc = acc_t.data<float>();
    }
    pdk_compute::ForEachImageChannelBlock(
        ctx, b, c, double(oh * ow * 4), [&](int64_t n, int64_t c0, int64_t c1) {
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
    return pdk::Status::OK();
  }
};

PDK_REGISTER_KERNELS(ImageResizeBilinear, r) {
  pdk::ForEachType(
      pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, uint8_t>{}, [&](auto t) {
        using T = typename decltype(t)::type;
        r.Add(pdk::KernelDef<ResizeBilinearOp<T>>("ResizeBilinear").Type("T", t).HostMemory("size"));
      });
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<ResizeBilinearGradOp<T>>("ResizeBilinearGrad").Type("T", t));
  });
}

}  // namespace
}  // namespace pdk_kernels
