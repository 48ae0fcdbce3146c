// ResizeArea (tensorflow/core/ops/image_ops.cc), NHWC:
// tf.image.resize(method="area"), Keras's Resizing(interpolation="area").
// TensorFlow registers no gradient for it.
//
//   ResizeArea(images [B,H,W,C] T, size (host int32 [2]: OH, OW);
//              align_corners) -> float32 [B,OH,OW,C]
//
// Each output pixel is the area-weighted mean of the source pixels its cell
// covers, as TensorFlow's CPU kernel computes it (tensorflow/core/kernels/
// image/resize_area_op.cc), in float32. Per axis (scale as ResizeBilinear's,
// no half-pixel mode): output i covers [i * scale, (i + 1) * scale) =
// [s0, s1); source cells k = floor(s0) .. ceil(s1) - 1 (clamped to the image)
// weigh
//   k < s0 ? (k + 1 > s1 ? scale : k + 1 - s0) : (k + 1 > s1 ? s1 - k : 1);
// per source row k (in order) sum_y = first cell * its weight, + the inner
// cells, + the last cell * its weight; sum += sum_y * row weight; output =
// sum * float(1.0 / (height_scale * width_scale)).
// Compiled with -ffp-contract=off, as TensorFlow's build computes these sums:
// bit-identical to TensorFlow's CPU kernel in the conformance sweep.
//   T in {float32, float64, float16, bfloat16, uint8}.
//
// Errors (InvalidArgument, TensorFlow's wording first, in its order): as
// ResizeBilinear's (image_resizer.h).
//
// Parallelism: output rows (b, y) over the device pool.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/image/image_resizer.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;
using pdk_image::ResizeBase;

// The source cells output position `i` covers along an axis and their
// weights: cells start .. end - 1; `first` and `last` weigh the first and
// the last, the ones between weigh 1.
struct Cells {
  int64_t start, end;
  float first, last;
};

float CellWeight(int64_t k, float s0, float s1, float scale) {
  const float kf = static_cast<float>(k), k1 = static_cast<float>(k + 1);
  return kf < s0 ? (k1 > s1 ? scale : k1 - s0) : (k1 > s1 ? s1 - kf : 1.0f);
}

std::vector<Cells> AreaCells(int64_t out, float scale) {
  std::vector<Cells> cells(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const float s0 = static_cast<float>(i) * scale, s1 = static_cast<float>(i + 1) * scale;
    Cells& c = cells[i];
    c.start = static_cast<int64_t>(std::floor(s0));
    c.end = static_cast<int64_t>(std::ceil(s1));
    c.first = CellWeight(c.start, s0, s1, scale);
    c.last = CellWeight(c.end - 1, s0, s1, scale);
  }
  return cells;
}

int64_t Clamp(int64_t v, int64_t limit) { return std::min(limit - 1, std::max<int64_t>(0, v)); }

template <class T>
class ResizeAreaOp : public ResizeBase {
 public:
  explicit ResizeAreaOp(OpKernelConstruction* c) : ResizeBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    pdk_image::ResizeShape s;
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ValidateAndAllocate(ctx, &s, &y));
    if (y->NumElements() == 0) return;
    const std::vector<Cells> xs = AreaCells(s.ow, s.ws);
    const float norm = static_cast<float>(1.0 / static_cast<double>(s.hs * s.ws));
    const T* src = ctx->input(0).flat<T>().data();
    float* dst = y->flat<float>().data();
    const int64_t h = s.h, w = s.w, c = s.c;
    // Cells per output pixel: about (scale + 1) per axis.
    const double per_row = double(s.ow * c) * (std::ceil(s.hs) + 1) * (std::ceil(s.ws) + 1);
    pdk_compute::ParallelFor(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), s.b * s.oh,
        Eigen::TensorOpCost(per_row * sizeof(T), double(s.ow * c * 4), per_row * 2),
        [&](Index first, Index last) {
          std::vector<const T*> rows;
          std::vector<float> row_w;
          for (Index row = first; row < last; ++row) {
            const int64_t n = row / s.oh, yi = row % s.oh;
            const float s0 = static_cast<float>(yi) * s.hs;
            const float s1 = static_cast<float>(yi + 1) * s.hs;
            rows.clear();
            row_w.clear();
            for (int64_t k = static_cast<int64_t>(std::floor(s0));
                 k < static_cast<int64_t>(std::ceil(s1)); ++k) {
              rows.push_back(src + (n * h + Clamp(k, h)) * w * c);
              row_w.push_back(CellWeight(k, s0, s1, s.hs));
            }
            float* o = dst + row * s.ow * c;
            for (int64_t xi = 0; xi < s.ow; ++xi) {
              const Cells& cx = xs[xi];
              const int64_t x_first = Clamp(cx.start, w) * c, x_last = Clamp(cx.end - 1, w) * c;
              for (int64_t ch = 0; ch < c; ++ch) {
                float sum = 0;
                for (size_t r = 0; r < rows.size(); ++r) {
                  const T* p = rows[r] + ch;
                  float sum_y = static_cast<float>(p[x_first]) * cx.first;
                  if (cx.start + 1 != cx.end) {
                    for (int64_t x = cx.start + 1; x < cx.end - 1; ++x)
                      sum_y += static_cast<float>(p[Clamp(x, w) * c]);
                    sum_y += static_cast<float>(p[x_last]) * cx.last;
                  }
                  sum += sum_y * row_w[r];
                }
                o[xi * c + ch] = sum * norm;
              }
            }
          }
        });
  }
};

#define PDK_REGISTER_AREA_(T)                                                          \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("ResizeArea").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("size"), \
      ResizeAreaOp<T>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_AREA_)  // float16, bfloat16, float32, float64
TF_CALL_uint8(PDK_REGISTER_AREA_)
#undef PDK_REGISTER_AREA_

}  // namespace
}  // namespace tensorflow
