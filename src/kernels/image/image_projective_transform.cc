// ImageProjectiveTransformV3 and ImageProjectiveTransformV2
// (tensorflow/core/ops/image_ops.cc), NHWC: Keras's RandomRotation,
// RandomZoom, RandomTranslation and RandomShear (keras.ops.image.
// affine_transform), tf.raw_ops users such as TensorFlow Addons' transform.
//
//   ImageProjectiveTransformV3(images [B,H,W,C] dtype, transforms float32
//     [B or 1, 8], output_shape (host int32 [2]: OH, OW), fill_value (host
//     float32 scalar); interpolation "NEAREST" / "BILINEAR", fill_mode
//     "REFLECT" / "WRAP" / "CONSTANT" / "NEAREST") -> dtype [B,OH,OW,C]
//   ImageProjectiveTransformV2: the same without fill_value (0).
//   dtype in {uint8, int32, int64, float16, bfloat16, float32, float64}.
//
// Output pixel (x, y) of image b reads the input at
//   k = t6 * x + t7 * y + 1;  (k == 0: the fill value)
//   in_x = (t0 * x + t1 * y + t2) / k,  in_y = (t3 * x + t4 * y + t5) / k
// with t = transforms[b] (or transforms[0] for a 1 x 8 transforms), mapped
// into the image by fill_mode and interpolated; every step is TensorFlow's CPU
// kernel's (ProjectiveGenerator and MapCoordinate, tensorflow/core/kernels/
// image/image_ops.h, which follow scipy.ndimage's ni_interpolation.c), in
// float32:
//   REFLECT [dcba|abcd|dcba], WRAP [abcd|abcd|abcd] (TensorFlow's formula:
//     it shifts by len times a count taken in units of len - 1), NEAREST
//     (clamped to the edge): the coordinate ends clamped to [0, len - 1];
//     CONSTANT: unchanged, a position outside the image reads the fill value.
//   NEAREST interpolation reads (round(in_y), round(in_x)) (half away from
//   zero); BILINEAR weighs the four neighbours (floor, floor + 1) as
//   ((y_ceil - y) * ((x_ceil - x) * f(y0, x0) + (x - x_floor) * f(y0, x1)) +
//   (y - y_floor) * (...)), every read outside the image the fill value.
// Values are read as float32 and the result converted back to dtype (integer
// dtypes truncate toward zero). Compiled with -ffp-contract=off, as
// TensorFlow's build does not fuse these steps into FMAs. Float-to-integer
// conversions of NaN or out-of-range values give what x86's truncating
// conversion gives (the integer type's minimum), as TensorFlow's CPU does on
// that machine, without C++'s undefined behaviour.
//
// Errors (InvalidArgument, TensorFlow's wording first, in its order): images
// not rank 4; transforms not [B, 8] or [1, 8]; output_shape not 2 positive
// values; fill_value not a scalar; an interpolation or fill_mode that is not
// one of the above (TensorFlow's CPU kernel logs it and reads an
// uninitialized mode).
//
// Parallelism: output rows (b, y) over the device pool.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;

enum class Interpolation { kNearest, kBilinear };
enum class FillMode { kReflect, kWrap, kConstant, kNearest };

// float -> integer as x86's cvttss2si: truncation toward zero, and the type's
// minimum for NaN or a value out of its range (C++ leaves that undefined).
template <class I>
I TruncatingConvert(float f) {
  if (!(f >= static_cast<float>(std::numeric_limits<I>::min()) &&
        f < -static_cast<float>(std::numeric_limits<I>::min())))
    return std::numeric_limits<I>::min();
  return static_cast<I>(f);
}

// float -> T as TensorFlow's T(float): 16-bit floats round, integers truncate
// (uint8 through a 32-bit conversion, as the compiler emits it).
template <class T>
T FromFloat(float f) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return static_cast<uint8_t>(static_cast<uint32_t>(TruncatingConvert<int32_t>(f)));
  } else if constexpr (std::is_integral_v<T>) {
    return TruncatingConvert<T>(f);
  } else {
    return static_cast<T>(f);
  }
}

// a * b in int64 with two's complement wrap-around (as the CPU's unchecked
// multiply of a converted index).
int64_t WrappingMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Eigen's scalar_clamp_op<float>(0, len - 1): a NaN stays NaN.
float ClampToImage(float c, int64_t len) {
  const float hi = static_cast<float>(len - 1);
  const float lo_clamped = c < 0.0f ? 0.0f : c;
  return hi < lo_clamped ? hi : lo_clamped;
}

// MapCoordinate<M>(c, len) of image_ops.h: an input coordinate outside
// [0, len - 1] mapped back into it.
template <FillMode M>
float MapCoordinate(float c, int64_t len) {
  if constexpr (M == FillMode::kConstant) {
    return c;
  } else if constexpr (M == FillMode::kNearest) {
    return ClampToImage(c, len);
  } else {
    if (c < 0.0f) {
      if (len <= 1) {
        c = 0.0f;
      } else if constexpr (M == FillMode::kReflect) {
        const int64_t sz2 = 2 * len;
        if (c < static_cast<float>(sz2))
          c = static_cast<float>(WrappingMul(sz2, TruncatingConvert<int64_t>(-c / sz2))) + c;
        c = c < static_cast<float>(-len) ? c + static_cast<float>(sz2) : -c - 1.0f;
      } else {  // kWrap
        const int64_t sz = len - 1;
        c += static_cast<float>(WrappingMul(len, TruncatingConvert<int64_t>(-c / sz) + 1));
      }
    } else if (c > static_cast<float>(len - 1)) {
      if (len <= 1) {
        c = 0.0f;
      } else if constexpr (M == FillMode::kReflect) {
        const int64_t sz2 = 2 * len;
        c -= static_cast<float>(WrappingMul(sz2, TruncatingConvert<int64_t>(c / sz2)));
        if (c >= static_cast<float>(len)) c = static_cast<float>(sz2) - c - 1.0f;
      } else {  // kWrap
        const int64_t sz = len - 1;
        c -= static_cast<float>(WrappingMul(len, TruncatingConvert<int64_t>(c / sz)));
      }
    }
    return ClampToImage(c, len);
  }
}

struct Geometry {
  int64_t h, w, c, oh, ow;
};

// One output row (image b, row y) of dtype T with fill mode M.
template <class T, FillMode M>
void TransformRow(const Geometry& g, const T* image, const float* t, Interpolation interp,
                  T fill, int64_t y, T* out) {
  const float fill_f = static_cast<float>(fill);
  // Whether (yy, xx) is a pixel of the input (else it reads the fill value).
  auto inside = [&](int64_t yy, int64_t xx) { return 0 <= yy && yy < g.h && 0 <= xx && xx < g.w; };
  const float fy = static_cast<float>(y);
  for (int64_t x = 0; x < g.ow; ++x) {
    T* o = out + x * g.c;
    const float fx = static_cast<float>(x);
    const float k = t[6] * fx + t[7] * fy + 1.0f;
    if (k == 0.0f) {
      std::fill(o, o + g.c, fill);
      continue;
    }
    const float in_x = MapCoordinate<M>((t[0] * fx + t[1] * fy + t[2]) / k, g.w);
    const float in_y = MapCoordinate<M>((t[3] * fx + t[4] * fy + t[5]) / k, g.h);
    if (interp == Interpolation::kNearest) {
      const int64_t yy = TruncatingConvert<int64_t>(std::round(in_y));
      const int64_t xx = TruncatingConvert<int64_t>(std::round(in_x));
      if (inside(yy, xx)) {
        std::copy(image + (yy * g.w + xx) * g.c, image + (yy * g.w + xx + 1) * g.c, o);
      } else {
        std::fill(o, o + g.c, fill);
      }
      continue;
    }
    const float y_floor = std::floor(in_y), x_floor = std::floor(in_x);
    const float y_ceil = y_floor + 1.0f, x_ceil = x_floor + 1.0f;
    const int64_t y0 = TruncatingConvert<int64_t>(y_floor), y1 = TruncatingConvert<int64_t>(y_ceil);
    const int64_t x0 = TruncatingConvert<int64_t>(x_floor), x1 = TruncatingConvert<int64_t>(x_ceil);
    const T* p00 = inside(y0, x0) ? image + (y0 * g.w + x0) * g.c : nullptr;
    const T* p01 = inside(y0, x1) ? image + (y0 * g.w + x1) * g.c : nullptr;
    const T* p10 = inside(y1, x0) ? image + (y1 * g.w + x0) * g.c : nullptr;
    const T* p11 = inside(y1, x1) ? image + (y1 * g.w + x1) * g.c : nullptr;
    auto at = [&](const T* p, int64_t ch) { return p ? static_cast<float>(p[ch]) : fill_f; };
    const float wx0 = x_ceil - in_x, wx1 = in_x - x_floor;
    const float wy0 = y_ceil - in_y, wy1 = in_y - y_floor;
    for (int64_t ch = 0; ch < g.c; ++ch) {
      const float top = wx0 * at(p00, ch) + wx1 * at(p01, ch);
      const float bottom = wx0 * at(p10, ch) + wx1 * at(p11, ch);
      o[ch] = FromFloat<T>(wy0 * top + wy1 * bottom);
    }
  }
}

template <class T, bool kV3>
class ImageProjectiveTransformOp : public OpKernel {
 public:
  explicit ImageProjectiveTransformOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string interp, mode = "CONSTANT";
    OP_REQUIRES_OK(c, c->GetAttr("interpolation", &interp));
    if (c->HasAttr("fill_mode")) OP_REQUIRES_OK(c, c->GetAttr("fill_mode", &mode));
    if (interp == "NEAREST") {
      interp_ = Interpolation::kNearest;
    } else if (interp == "BILINEAR") {
      interp_ = Interpolation::kBilinear;
    } else {
      OP_REQUIRES(c, false,
                  errors::InvalidArgument("Invalid interpolation ", interp,
                                          ". Supported types: NEAREST, BILINEAR"));
    }
    if (mode == "REFLECT") {
      mode_ = FillMode::kReflect;
    } else if (mode == "WRAP") {
      mode_ = FillMode::kWrap;
    } else if (mode == "CONSTANT") {
      mode_ = FillMode::kConstant;
    } else if (mode == "NEAREST") {
      mode_ = FillMode::kNearest;
    } else {
      OP_REQUIRES(c, false,
                  errors::InvalidArgument("Invalid mode ", mode,
                                          ". Supported types: REFLECT, WRAP, CONSTANT, NEAREST"));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    const Tensor& transforms = ctx->input(1);
    const Tensor& out_shape = ctx->input(2);
    const TensorShape& is = images.shape();
    const TensorShape& ts = transforms.shape();
    const std::string& op = type_string();
    OP_REQUIRES(ctx, is.dims() == 4,
                errors::InvalidArgument("Input images must have rank 4 (", op,
                                        ": images of shape ", is, ")"));
    OP_REQUIRES(ctx,
                ts.dims() == 2 && (ts.dim_size(0) == is.dim_size(0) || ts.dim_size(0) == 1) &&
                    ts.dim_size(1) == 8,
                errors::InvalidArgument("Input transform should be num_images x 8 or 1 x 8 (", op,
                                        ": transforms of shape ", ts, ", images of shape ", is,
                                        ")"));
    OP_REQUIRES(ctx, out_shape.dims() == 1,
                errors::InvalidArgument("output shape must be 1-dimensional",
                                        out_shape.shape().DebugString(), " (", op, ")"));
    OP_REQUIRES(ctx, out_shape.NumElements() == 2,
                errors::InvalidArgument("output shape must have two elements",
                                        out_shape.shape().DebugString(), " (", op, ")"));
    const int32_t* os = out_shape.flat<int32>().data();
    OP_REQUIRES(ctx, os[0] > 0 && os[1] > 0,
                errors::InvalidArgument("output dimensions must be positive (", op,
                                        ": output_shape [", os[0], ",", os[1], "])"));
    T fill = T(0);
    if constexpr (kV3) {
      const Tensor& fill_t = ctx->input(3);
      OP_REQUIRES(ctx, fill_t.dims() == 0,
                  errors::InvalidArgument("fill_value must be a scalar",
                                          fill_t.shape().DebugString(), " (", op, ")"));
      fill = FromFloat<T>(fill_t.scalar<float>()());
    }
    const Geometry g{is.dim_size(1), is.dim_size(2), is.dim_size(3), os[0], os[1]};
    const int64_t batch = is.dim_size(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch, g.oh, g.ow, g.c}), &y));
    if (y->NumElements() == 0) return;
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    const T* in = images.flat<T>().data();
    const float* tr = transforms.flat<float>().data();
    const bool one_transform = ts.dim_size(0) == 1;
    T* out = y->flat<T>().data();
    switch (mode_) {
      case FillMode::kReflect:
        return Run<FillMode::kReflect>(dev, g, batch, in, tr, one_transform, fill, out);
      case FillMode::kWrap:
        return Run<FillMode::kWrap>(dev, g, batch, in, tr, one_transform, fill, out);
      case FillMode::kConstant:
        return Run<FillMode::kConstant>(dev, g, batch, in, tr, one_transform, fill, out);
      case FillMode::kNearest:
        return Run<FillMode::kNearest>(dev, g, batch, in, tr, one_transform, fill, out);
    }
  }

 private:
  // Output rows (b, y) of `batch` images over the pool; `tr` holds one
  // transform per image, or one for all (one_transform).
  template <FillMode M>
  void Run(const Eigen::ThreadPoolDevice& dev, const Geometry& g, int64_t batch, const T* in,
           const float* tr, bool one_transform, T fill, T* out) const {
    const double cost = double(g.ow * (g.c * 8 + 24));
    pdk_compute::ParallelFor(
        dev, batch * g.oh, Eigen::TensorOpCost(cost, g.ow * g.c * sizeof(T), cost),
        [&](Index first, Index last) {
          for (Index row = first; row < last; ++row) {
            const int64_t b = row / g.oh, yy = row % g.oh;
            TransformRow<T, M>(g, in + b * g.h * g.w * g.c, tr + (one_transform ? 0 : b * 8),
                               interp_, fill, yy, out + row * g.ow * g.c);
          }
        });
  }

  Interpolation interp_ = Interpolation::kNearest;
  FillMode mode_ = FillMode::kConstant;
};

// dtype: uint8, int32, int64, float16, bfloat16, float32, float64.
#define PDK_REGISTER_TRANSFORM_(T)                                         \
  REGISTER_KERNEL_BUILDER(Name("ImageProjectiveTransformV3")               \
                              .Device(DEVICE_PDK)                          \
                              .TypeConstraint<T>("dtype")                  \
                              .HostMemory("output_shape")                  \
                              .HostMemory("fill_value"),                   \
                          ImageProjectiveTransformOp<T, true>);            \
  REGISTER_KERNEL_BUILDER(Name("ImageProjectiveTransformV2")               \
                              .Device(DEVICE_PDK)                          \
                              .TypeConstraint<T>("dtype")                  \
                              .HostMemory("output_shape"),                 \
                          ImageProjectiveTransformOp<T, false>);
PDK_REGISTER_TRANSFORM_(uint8)
PDK_REGISTER_TRANSFORM_(int32)
PDK_REGISTER_TRANSFORM_(int64)
PDK_REGISTER_TRANSFORM_(Eigen::half)
PDK_REGISTER_TRANSFORM_(Eigen::bfloat16)
PDK_REGISTER_TRANSFORM_(float)
PDK_REGISTER_TRANSFORM_(double)
#undef PDK_REGISTER_TRANSFORM_

}  // namespace
}  // namespace tensorflow
