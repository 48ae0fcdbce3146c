// ResizeNearestNeighbor and ResizeNearestNeighborGrad (tensorflow/core/ops/
// image_ops.cc), NHWC: tf.image.resize(method="nearest"), Keras's
// Resizing(interpolation="nearest").
//
//   ResizeNearestNeighbor(images [B,H,W,C] T, size (host int32 [2]: OH, OW);
//                         align_corners, half_pixel_centers) -> T [B,OH,OW,C]
//   ResizeNearestNeighborGrad(grads [B,OH,OW,C] T, size (host int32 [2]: H, W);
//                             same attributes) -> T [B,H,W,C]
//
// TensorFlow's CPU kernel's mapping (tensorflow/core/kernels/image/
// resize_nearest_neighbor_op.cc), in float32, per axis:
//   scale = (align_corners && in > 1 && out > 1) ? (in - 1) / float(out - 1) : in / float(out)
//   src(i) = half_pixel_centers ? (i + 0.5f) * scale : i * scale
//   j = min(align_corners ? roundf(src(i)) : floorf(src(i)), in - 1), and
//   j = max(j, 0) with half_pixel_centers;
// the forward copies source pixel (j_y, j_x) to output pixel (y, x); the
// gradient (scale from the original size over the gradient's) adds gradient
// pixel (y, x) into original pixel (j_y, j_x), in T, in row-major order of
// (y, x), as there.
//   T in {float32, float64, float16, bfloat16} (the forward also uint8).
//
// Errors (InvalidArgument, TensorFlow's wording first, in its order): as
// ResizeBilinear's for the forward (image_resizer.h); for the gradient grads
// not rank 4, size not 2 positive values ("shape_t's elements must be
// positive").
//
// Parallelism: the forward splits output rows (b, y) over the device pool; the
// gradient splits (image, channel block) units and keeps TensorFlow's order
// in each.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
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

// Source index of each of `out` positions along an axis of `in`.
std::vector<int64_t> Nearest(int64_t in, int64_t out, float scale, bool align_corners,
                             bool half_pixel) {
  std::vector<int64_t> j(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const float src = half_pixel ? (static_cast<float>(i) + 0.5f) * scale
                                 : static_cast<float>(i) * scale;
    int64_t k = static_cast<int64_t>(align_corners ? std::round(src) : std::floor(src));
    k = std::min(k, in - 1);
    if (half_pixel) k = std::max<int64_t>(k, 0);
    j[i] = k;
  }
  return j;
}

template <class T>
class ResizeNearestNeighborOp : public ResizeBase {
 public:
  explicit ResizeNearestNeighborOp(OpKernelConstruction* c) : ResizeBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    pdk_image::ResizeShape s;
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ValidateAndAllocate(ctx, &s, &y));
    if (y->NumElements() == 0) return;
    const std::vector<int64_t> ys = Nearest(s.h, s.oh, s.hs, align_corners_, half_pixel_);
    const std::vector<int64_t> xs = Nearest(s.w, s.ow, s.ws, align_corners_, half_pixel_);
    const T* src = ctx->input(0).flat<T>().data();
    T* dst = y->flat<T>().data();
    const int64_t c = s.c;
    pdk_compute::ParallelFor(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), s.b * s.oh,
        Eigen::TensorOpCost(s.ow * c * sizeof(T), s.ow * c * sizeof(T), s.ow * 2),
        [&](Index first, Index last) {
          for (Index row = first; row < last; ++row) {
            const int64_t n = row / s.oh, yi = row % s.oh;
            const T* in_row = src + (n * s.h + ys[yi]) * s.w * c;
            T* o = dst + row * s.ow * c;
            for (int64_t xi = 0; xi < s.ow; ++xi) std::copy_n(in_row + xs[xi] * c, c, o + xi * c);
          }
        });
  }
};

template <class T>
class ResizeNearestNeighborGradOp : public ResizeBase {
 public:
  explicit ResizeNearestNeighborGradOp(OpKernelConstruction* c) : ResizeBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& size = ctx->input(1);
    // TensorFlow's checks, in its order (ResizeNearestNeighborOpGrad).
    OP_REQUIRES(ctx, dy.dims() == 4,
                errors::InvalidArgument("input must be 4-dimensional", dy.shape().DebugString(),
                                        " (", type_string(), ": grads)"));
    OP_REQUIRES(ctx, size.dims() == 1,
                errors::InvalidArgument("shape_t must be 1-dimensional",
                                        size.shape().DebugString(), " (", type_string(), ")"));
    OP_REQUIRES(ctx, size.NumElements() == 2,
                errors::InvalidArgument("shape_t must have two elements",
                                        size.shape().DebugString(), " (", type_string(), ")"));
    const int32_t* sz = size.flat<int32>().data();
    OP_REQUIRES(ctx, sz[0] > 0 && sz[1] > 0,
                errors::InvalidArgument("shape_t's elements must be positive (", type_string(),
                                        ": size [", sz[0], ",", sz[1], "])"));
    const int64_t b = dy.dim_size(0), oh = dy.dim_size(1), ow = dy.dim_size(2),
                  c = dy.dim_size(3), h = sz[0], w = sz[1];
    OP_REQUIRES(ctx, oh < pdk_image::kInt32Max && ow < pdk_image::kInt32Max,
                errors::InvalidArgument("input sizes must be between 0 and max int32 (",
                                        type_string(), ": grads of shape ", dy.shape(), ")"));
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({b, h, w, c}), &dx));
    if (dx->NumElements() == 0) return;
    const std::vector<int64_t> ys =
        Nearest(h, oh, ResizeScale(h, oh, align_corners_), align_corners_, half_pixel_);
    const std::vector<int64_t> xs =
        Nearest(w, ow, ResizeScale(w, ow, align_corners_), align_corners_, half_pixel_);
    const T* g = dy.flat<T>().data();
    T* out = dx->flat<T>().data();
    pdk_compute::ForEachImageChannelBlock(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), b, c, double(oh * ow),
        [&](int64_t n, int64_t c0, int64_t c1) {
          T* img = out + n * h * w * c;
          for (int64_t p = 0; p < h * w; ++p) std::fill(img + p * c + c0, img + p * c + c1, T(0));
          for (int64_t yi = 0; yi < oh; ++yi) {
            for (int64_t xi = 0; xi < ow; ++xi) {
              const T* gp = g + ((n * oh + yi) * ow + xi) * c;
              T* o = img + (ys[yi] * w + xs[xi]) * c;
              for (int64_t ch = c0; ch < c1; ++ch) o[ch] += gp[ch];
            }
          }
        });
  }
};

#define PDK_REGISTER_NEAREST_(T)                                                       \
  REGISTER_KERNEL_BUILDER(Name("ResizeNearestNeighbor")                                \
                              .Device(DEVICE_PDK)                                      \
                              .TypeConstraint<T>("T")                                  \
                              .HostMemory("size"),                                     \
                          ResizeNearestNeighborOp<T>);
#define PDK_REGISTER_NEAREST_GRAD_(T)                                                  \
  REGISTER_KERNEL_BUILDER(Name("ResizeNearestNeighborGrad")                            \
                              .Device(DEVICE_PDK)                                      \
                              .TypeConstraint<T>("T")                                  \
                              .HostMemory("size"),                                     \
                          ResizeNearestNeighborGradOp<T>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_NEAREST_)  // float16, bfloat16, float32, float64
TF_CALL_uint8(PDK_REGISTER_NEAREST_)
TF_CALL_FLOAT_TYPES(PDK_REGISTER_NEAREST_GRAD_)
#undef PDK_REGISTER_NEAREST_GRAD_
#undef PDK_REGISTER_NEAREST_

}  // namespace
}  // namespace tensorflow
