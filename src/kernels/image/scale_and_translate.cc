// ScaleAndTranslate and ScaleAndTranslateGrad (tensorflow/core/ops/
// image_ops.cc), NHWC: tf.image.resize with method "lanczos3", "lanczos5",
// "gaussian", "mitchellcubic" or antialias=True, tf.image.scale_and_translate,
// Keras's Resizing(interpolation="lanczos3" | "lanczos5" | "gaussian" |
// "mitchellcubic").
//
//   ScaleAndTranslate(images [B,H,W,C] T, size (host int32 [2]: OH, OW),
//                     scale (host float32 [2]: row, column),
//                     translation (host float32 [2]: row, column);
//                     kernel_type, antialias) -> float32 [B,OH,OW,C]
//   ScaleAndTranslateGrad(grads float32 [B,OH,OW,C], original_image [B,H,W,C],
//                         scale, translation; same attributes) -> float32 [B,H,W,C]
//
// A separable resampling filter, as TensorFlow's CPU kernel computes it
// (tensorflow/core/kernels/image/scale_and_translate_op.cc and
// sampling_kernels.h), in float32. Per axis of `in` pixels to `out`: output
// pixel o samples the input at s = (o + 0.5f) * (1 / scale) - translation /
// scale (no sample, weights 0, when s < 0 or s > in); the filter of radius R
// is stretched by k = antialias ? max(1 / scale, 1) : 1 (downsampling) and
// covers input pixels ceil(s - R*k - 0.5f) .. floor(s + R*k - 0.5f), clamped to
// the image; pixel j weighs f(|(j + 0.5f - s) / k|), the weights divided by
// their sum (when |sum| >= 1000 * FLT_MIN). Filters f (kernel_type):
//   lanczos1/3/5: R sin(πx) sin(πx/R) / (π²x²), 1 at |x| <= 1e-3, 0 beyond R
//   gaussian: exp(-x² / (2σ²)), R = 1.5, σ = 0.5; box: 1 below 0.5, 0.5 at 0.5;
//   triangle: 1 - x (R = 1); keyscubic: Keys's cubic, a = -0.5 (R = 2);
//   mitchellcubic: Mitchell and Netravali's B = C = 1/3 cubic (R = 2).
// The rows are resampled first (into a [B,OH,W,C] float32 intermediate), then
// the columns, each output element summed weight by weight in order. The
// gradient resamples grads with the transposed weights (each input pixel
// gathers the output pixels whose spans hold it), rows then columns.
// Compiled with -ffp-contract=off, as TensorFlow's build computes these
// sums.
//   ScaleAndTranslate: T in {float32, float64, float16, bfloat16, uint8}.
//   ScaleAndTranslateGrad: T in {float32} (TensorFlow's CPU kernel).
//
// Errors (InvalidArgument, TensorFlow's wording first, in its order):
// images not rank 4; size not 2 values; images of zero height or width or
// without channels; size not positive; scale or translation not 2 values
// ("t must have two elements"); scale not positive ("Scale must be greater
// than zero."); an unknown kernel_type ("Unrecognized kernel type: ...").
//
// Parallelism: output rows (b, y) over the device pool.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/image/image_resizer.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;

enum class Filter { kLanczos1, kLanczos3, kLanczos5, kGaussian, kBox, kTriangle, kKeys, kMitchell };

bool ParseFilter(std::string name, Filter* f) {
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const std::pair<const char*, Filter> kNames[] = {
      {"lanczos1", Filter::kLanczos1}, {"lanczos3", Filter::kLanczos3},
      {"lanczos5", Filter::kLanczos5}, {"gaussian", Filter::kGaussian},
      {"box", Filter::kBox},           {"triangle", Filter::kTriangle},
      {"keyscubic", Filter::kKeys},    {"mitchellcubic", Filter::kMitchell}};
  for (const auto& [n, v] : kNames) {
    if (name == n) {
      *f = v;
      return true;
    }
  }
  return false;
}

float Radius(Filter f) {
  switch (f) {
    case Filter::kLanczos1:
      return 1.0f;
    case Filter::kLanczos3:
      return 3.0f;
    case Filter::kLanczos5:
      return 5.0f;
    case Filter::kGaussian:
      return 1.5f;
    case Filter::kBox:
    case Filter::kTriangle:
      return 1.0f;
    case Filter::kKeys:
    case Filter::kMitchell:
      return 2.0f;
  }
  return 1.0f;
}

// The filter's value at x (sampling_kernels.h's arithmetic and types).
float Weight(Filter f, float x) {
  x = std::abs(x);
  switch (f) {
    case Filter::kLanczos1:
    case Filter::kLanczos3:
    case Filter::kLanczos5: {
      constexpr float kPi = 3.14159265359f;
      const float r = Radius(f);
      if (x > r) return 0.0f;
      if (x <= 1e-3f) return 1.0f;
      return r * std::sin(kPi * x) * std::sin(kPi * x / r) / (kPi * kPi * x * x);
    }
    case Filter::kGaussian: {
      const float radius = 1.5f, sigma = radius / 3.0f;
      if (x >= radius) return 0.0f;
      return static_cast<float>(std::exp(-x * x / (2.0 * sigma * sigma)));
    }
    case Filter::kBox:
      return x < 0.5f ? 1.0f : x == 0.5f ? 0.5f : 0.0f;
    case Filter::kTriangle:
      return x < 1.0f ? 1.0f - x : 0.0f;
    case Filter::kKeys:
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
      return ((1.5f * x - 2.5f) * x) * x + 1.0f;
    case Filter::kMitchell:
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
      return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
  }
  return 0.0f;
}

// Per output position: the first input pixel and `size` weights (zeros
// after the span's own pixels).
struct Spans {
  int64_t size = 0;
  std::vector<int64_t> start;
  std::vector<float> weights;  // [out, size]
};

Status ForwardSpans(Filter f, int64_t out, int64_t in, float scale, float translate, bool antialias,
                    Spans* spans) {
  const float inv_scale = static_cast<float>(1.0 / scale);
  const float inv_translate = -inv_scale * translate;
  const float kscale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  const float reach = Radius(f) * kscale;
  spans->size =
      std::min<int64_t>(2 * static_cast<int64_t>(std::ceil(reach)) + 1, static_cast<int64_t>(in));
  spans->start.assign(static_cast<size_t>(out), 0);
  spans->weights.assign(static_cast<size_t>(out * spans->size), 0.0f);
  const float one_over_kscale = 1.0f / kscale;
  std::vector<float> w;
  for (int64_t o = 0; o < out; ++o) {
    const float sample = (static_cast<float>(o) + 0.5f) * inv_scale + inv_translate;
    if (sample < 0 || sample > static_cast<float>(in)) continue;  // an empty span
    int64_t first = static_cast<int64_t>(std::ceil(sample - reach - 0.5f));
    int64_t last = static_cast<int64_t>(std::floor(sample + reach - 0.5f));
    first = std::clamp<int64_t>(first, 0, in - 1);
    last = std::clamp<int64_t>(last, 0, in - 1) + 1;
    if (last - first > spans->size)
      return errors::Internal("Span is too large: ", last - first, " vs ", spans->size, ".");
    float sum = 0.0f;
    w.clear();
    for (int64_t j = first; j < last; ++j) {
      const float v = Weight(f, (static_cast<float>(j) + 0.5f - sample) * one_over_kscale);
      sum += v;
      w.push_back(v);
    }
    if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inv = 1.0f / sum;
      for (size_t k = 0; k < w.size(); ++k) spans->weights[o * spans->size + k] = w[k] * inv;
    }
    spans->start[o] = first;
  }
  return OkStatus();
}

// The transposed spans: per forward input pixel, the forward output pixels
// whose spans weigh it (nonzero), from the first to the last.
Spans GradSpans(const Spans& fwd, int64_t fwd_out, int64_t fwd_in) {
  std::vector<int64_t> lo(static_cast<size_t>(fwd_in), -1), hi(static_cast<size_t>(fwd_in), -1);
  for (int64_t o = 0; o < fwd_out; ++o) {
    for (int64_t k = 0; k < fwd.size; ++k) {
      const int64_t i = fwd.start[o] + k;
      if (fwd.weights[o * fwd.size + k] == 0.0f || i >= fwd_in) continue;
      if (lo[i] < 0) lo[i] = o;
      hi[i] = o;
    }
  }
  Spans g;
  for (int64_t i = 0; i < fwd_in; ++i)
    if (lo[i] >= 0) g.size = std::max(g.size, hi[i] - lo[i] + 1);
  g.start.assign(static_cast<size_t>(fwd_in), 0);
  g.weights.assign(static_cast<size_t>(fwd_in * g.size), 0.0f);
  for (int64_t i = 0; i < fwd_in; ++i)
    if (lo[i] >= 0) g.start[i] = lo[i];
  for (int64_t o = 0; o < fwd_out; ++o) {
    for (int64_t k = 0; k < fwd.size; ++k) {
      const int64_t i = fwd.start[o] + k;
      const float v = fwd.weights[o * fwd.size + k];
      if (v == 0.0f || i >= fwd_in) continue;
      g.weights[i * g.size + (o - g.start[i])] += v;
    }
  }
  return g;
}

// out [B,OH,OW,C] = columns(rows(in [B,H,W,C])), TensorFlow's GatherSpans:
// each output row y sums the rows of its span into a [W,C] row, weight by
// weight, then each output pixel the pixels of its column span.
template <class T>
void GatherSpans(OpKernelContext* ctx, const Spans& rows, const Spans& cols, const T* in, int64_t b,
                 int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow, float* out) {
  const double per_row = double(rows.size * w * c + cols.size * ow * c);
  pdk_compute::ParallelFor(
      ctx->eigen_device<Eigen::ThreadPoolDevice>(), b * oh,
      Eigen::TensorOpCost(per_row * sizeof(T), double(ow * c * 4), per_row * 2),
      [&](Index first, Index last) {
        std::vector<float> mid(static_cast<size_t>(w * c));
        for (Index row = first; row < last; ++row) {
          const int64_t n = row / oh, y = row % oh;
          std::fill(mid.begin(), mid.end(), 0.0f);
          const int64_t y0 = rows.start[y];
          const int64_t ny = std::min(y0 + rows.size, h) - y0;
          const float* wy = rows.weights.data() + y * rows.size;
          for (int64_t k = 0; k < ny; ++k) {
            const T* src = in + ((n * h) + y0 + k) * w * c;
            const float wk = wy[k];
            for (int64_t p = 0; p < w * c; ++p) mid[p] += wk * static_cast<float>(src[p]);
          }
          float* o = out + row * ow * c;
          for (int64_t x = 0; x < ow; ++x) {
            const int64_t x0 = cols.start[x];
            const int64_t nx = std::min(x0 + cols.size, w) - x0;
            const float* wx = cols.weights.data() + x * cols.size;
            float* op = o + x * c;
            std::fill(op, op + c, 0.0f);
            for (int64_t k = 0; k < nx; ++k) {
              const float* m = mid.data() + (x0 + k) * c;
              for (int64_t ch = 0; ch < c; ++ch) op[ch] += wx[k] * m[ch];
            }
          }
        }
      });
}

// scale or translation: 2 float32 values (TensorFlow's GetValues).
Status ReadPair(const Tensor& t, float* a, float* b) {
  if (t.dims() != 1)
    return errors::InvalidArgument("t must be 1-dimensional", t.shape().DebugString());
  if (t.NumElements() != 2)
    return errors::InvalidArgument("t must have two elements", t.shape().DebugString());
  *a = t.flat<float>().data()[0];
  *b = t.flat<float>().data()[1];
  return OkStatus();
}

// Reads kernel_type and antialias; scale and translation.
class ScaleAndTranslateBase : public OpKernel {
 public:
  explicit ScaleAndTranslateBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("antialias", &antialias_));
    std::string name;
    OP_REQUIRES_OK(c, c->GetAttr("kernel_type", &name));
    OP_REQUIRES(c, ParseFilter(name, &filter_),
                errors::InvalidArgument("Unrecognized kernel type: " + name));
  }

 protected:
  Status ScaleTranslation(OpKernelContext* ctx, float* sy, float* sx, float* ty, float* tx) {
    TF_RETURN_IF_ERROR(ReadPair(ctx->input(2), sy, sx));
    if (!(*sy > 0 && *sx > 0))
      return errors::InvalidArgument("Scale must be greater than zero. (", type_string(),
                                     ": scale [", *sy, ", ", *sx, "])");
    return ReadPair(ctx->input(3), ty, tx);
  }

  Filter filter_ = Filter::kLanczos3;
  bool antialias_ = true;
};

template <class T>
class ScaleAndTranslateOp : public ScaleAndTranslateBase {
 public:
  explicit ScaleAndTranslateOp(OpKernelConstruction* c) : ScaleAndTranslateBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& size = ctx->input(1);
    const std::string& op = type_string();
    OP_REQUIRES(
        ctx, x.dims() == 4,
        errors::InvalidArgument("input must be 4-dimensional", x.shape().DebugString(), " (", op,
                                ": images must be [batch, height, width, channels])"));
    OP_REQUIRES(ctx, size.dims() == 1,
                errors::InvalidArgument("output_shape_t must be 1-dimensional",
                                        size.shape().DebugString(), " (", op, ")"));
    OP_REQUIRES(ctx, size.NumElements() == 2,
                errors::InvalidArgument("output_shape_t must have two elements",
                                        size.shape().DebugString(), " (", op, ")"));
    const int64_t oh = size.flat<int32>().data()[0], ow = size.flat<int32>().data()[1];
    const int64_t b = x.dim_size(0), h = x.dim_size(1), w = x.dim_size(2), c = x.dim_size(3);
    OP_REQUIRES(ctx, h < pdk_image::kInt32Max && w < pdk_image::kInt32Max,
                errors::InvalidArgument("input sizes must be between 0 and max int32 (", op,
                                        ": images of shape ", x.shape(), ")"));
    OP_REQUIRES(ctx, oh > 0 && ow > 0,
                errors::InvalidArgument("output dimensions must be positive (", op, ": size [", oh,
                                        ",", ow, "])"));
    OP_REQUIRES(ctx, c > 0,
                errors::InvalidArgument("image must have at least one channel (", op,
                                        ": images of shape ", x.shape(), ")"));
    OP_REQUIRES(ctx, h > 0 && w > 0,
                errors::InvalidArgument("input image must be of non-zero size (", op,
                                        ": images of shape ", x.shape(), ")"));
    float sy, sx, ty, tx;
    OP_REQUIRES_OK(ctx, ScaleTranslation(ctx, &sy, &sx, &ty, &tx));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({b, oh, ow, c}), &y));
    if (y->NumElements() == 0) return;
    Spans rows, cols;
    OP_REQUIRES_OK(ctx, ForwardSpans(filter_, ow, w, sx, tx, antialias_, &cols));
    OP_REQUIRES_OK(ctx, ForwardSpans(filter_, oh, h, sy, ty, antialias_, &rows));
    GatherSpans(ctx, rows, cols, x.flat<T>().data(), b, h, w, c, oh, ow, y->flat<float>().data());
  }
};

class ScaleAndTranslateGradOp : public ScaleAndTranslateBase {
 public:
  explicit ScaleAndTranslateGradOp(OpKernelConstruction* c) : ScaleAndTranslateBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& orig = ctx->input(1);
    const std::string& op = type_string();
    OP_REQUIRES(ctx, dy.dims() == 4,
                errors::InvalidArgument("input_grad must be 4-dimensional",
                                        dy.shape().DebugString(), " (", op, ")"));
    OP_REQUIRES(ctx, orig.dims() == 4,
                errors::InvalidArgument("original_image must be 4-dimensional",
                                        orig.shape().DebugString(), " (", op, ")"));
    const int64_t b = dy.dim_size(0), oh = dy.dim_size(1), ow = dy.dim_size(2), c = dy.dim_size(3),
                  h = orig.dim_size(1), w = orig.dim_size(2);
    OP_REQUIRES(ctx, h < pdk_image::kInt32Max && w < pdk_image::kInt32Max,
                errors::InvalidArgument("original sizes must be between 0 and max int32 (", op,
                                        ": original_image of shape ", orig.shape(), ")"));
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({b, h, w, c}), &dx));
    float sy, sx, ty, tx;
    OP_REQUIRES_OK(ctx, ScaleTranslation(ctx, &sy, &sx, &ty, &tx));
    if (dx->NumElements() == 0) return;
    Spans rows, cols;
    OP_REQUIRES_OK(ctx, ForwardSpans(filter_, ow, w, sx, tx, antialias_, &cols));
    OP_REQUIRES_OK(ctx, ForwardSpans(filter_, oh, h, sy, ty, antialias_, &rows));
    const Spans grad_cols = GradSpans(cols, ow, w);
    const Spans grad_rows = GradSpans(rows, oh, h);
    GatherSpans(ctx, grad_rows, grad_cols, dy.flat<float>().data(), b, oh, ow, c, h, w,
                dx->flat<float>().data());
  }
};

#define PDK_REGISTER_SCALE_AND_TRANSLATE_(T)              \
  REGISTER_KERNEL_BUILDER(Name("ScaleAndTranslate")       \
                              .Device(DEVICE_PDK)         \
                              .TypeConstraint<T>("T")     \
                              .HostMemory("size")         \
                              .HostMemory("scale")        \
                              .HostMemory("translation"), \
                          ScaleAndTranslateOp<T>);
// clang-format off
TF_CALL_FLOAT_TYPES(PDK_REGISTER_SCALE_AND_TRANSLATE_)  // float16, bfloat16, float32, float64
TF_CALL_uint8(PDK_REGISTER_SCALE_AND_TRANSLATE_)
#undef PDK_REGISTER_SCALE_AND_TRANSLATE_
REGISTER_KERNEL_BUILDER(Name("ScaleAndTranslateGrad")
                            .Device(DEVICE_PDK)
                            .TypeConstraint<float>("T")
                            .HostMemory("scale")
                            .HostMemory("translation"),
                        ScaleAndTranslateGradOp);
// clang-format on

}  // namespace
}  // namespace tensorflow
