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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
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
class ImageProjectiveTransformOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    std::string interp, mode = "CONSTANT";
    PDK_RETURN_IF_ERROR(a.Get("interpolation", &interp));
    PDK_RETURN_IF_ERROR(a.GetOptional("fill_mode", &mode));
    if (interp == "NEAREST") {
      interp_ = Interpolation::kNearest;
    } else if (interp == "BILINEAR") {
      interp_ = Interpolation::kBilinear;
    } else {
      return pdk::InvalidArgument("Invalid interpolation ", interp,
                                  ". Supported types: NEAREST, BILINEAR");
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
      return pdk::InvalidArgument("Invalid mode ", mode,
                                  ". Supported types: REFLECT, WRAP, CONSTANT, NEAREST");
    }
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor images, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor transforms, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out_shape, ctx.input(2));
    const pdk::Shape is = images.shape(), ts = transforms.shape();
    if (is.rank() != 4)
      return pdk::InvalidArgument("Input images must have rank 4 (", ctx.op(),
                                  ": images of shape ", is, ")");
    if (ts.rank() != 2 || (ts[0] != is[0] && ts[0] != 1) || ts[1] != 8)
      return pdk::InvalidArgument("Input transform should be num_images x 8 or 1 x 8 (",
                                  ctx.op(), ": transforms of shape ", ts, ", images of shape ",
                                  is, ")");
    if (out_shape.rank() != 1)
      return pdk::InvalidArgument("output shape must be 1-dimensional",
                                  out_shape.shape().ToString(), " (", ctx.op(), ")");
    if (out_shape.num_elements() != 2)
      return pdk::InvalidArgument("output shape must have two elements",
                                  out_shape.shape().ToString(), " (", ctx.op(), ")");
    const int32_t* os = out_shape.data<int32_t>();
    if (os[0] <= 0 || os[1] <= 0)
      return pdk::InvalidArgument("output dimensions must be positive (", ctx.op(),
                                  ": output_shape [", os[0], ",", os[1], "])");
    T fill = T(0);
    if constexpr (kV3) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor fill_t, ctx.input(3));
      if (fill_t.rank() != 0)
        return pdk::InvalidArgument("fill_value must be a scalar", fill_t.shape().ToString(),
                                    " (", ctx.op(), ")");
      fill = FromFloat<T>(*fill_t.data<float>());
    }
    const Geometry g{is[1], is[2], is[3], os[0], os[1]};
    PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.allocate_output(0, pdk::Shape{is[0], g.oh, g.ow, g.c}));
    if (y.num_elements() == 0) return pdk::Status::OK();
    switch (mode_) {
      case FillMode::kReflect: return Run<FillMode::kReflect>(ctx, g, images, transforms, fill, y);
      case FillMode::kWrap: return Run<FillMode::kWrap>(ctx, g, images, transforms, fill, y);
      case FillMode::kConstant:
        return Run<FillMode::kConstant>(ctx, g, images, transforms, fill, y);
      case FillMode::kNearest: return Run<FillMode::kNearest>(ctx, g, images, transforms, fill, y);
    }
    return pdk::Status::OK();
  }

 private:
  template <FillMode M>
  pdk::Status Run(pdk::Context& ctx, const Geometry& g, const pdk::Tensor& images,
                  const pdk::Tensor& transforms, T fill, pdk::Tensor& y) const {
    const T* in = images.data<T>();
    const float* tr = transforms.data<float>();
    const bool one_transform = transforms.shape()[0] == 1;
    T* out = y.data<T>();
    const int64_t batch = y.shape()[0];
    const double cost = double(g.ow * (g.c * 8 + 24));
    pdk_compute::Device(ctx).parallelFor(
        batch * g.oh, Eigen::TensorOpCost(cost, g.ow * g.c * sizeof(T), cost),
        [&](Index first, Index last) {
          for (Index row = first; row < last; ++row) {
            const int64_t b = row / g.oh, yy = row % g.oh;
            TransformRow<T, M>(g, in + b * g.h * g.w * g.c, tr + (one_transform ? 0 : b * 8),
                               interp_, fill, yy, out + row * g.ow * g.c);
          }
        });
    return pdk::Status::OK();
  }

  Interpolation interp_ = Interpolation::kNearest;
  FillMode mode_ = FillMode::kConstant;
};

PDK_REGISTER_KERNELS(ImageProjectiveTransform, r) {
  pdk::ForEachType(pdk::TypeList<uint8_t, int32_t, int64_t, Eigen::half, Eigen::bfloat16, float,
                                 double>{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     r.Add(pdk::KernelDef<ImageProjectiveTransformOp<T, true>>(
                               "ImageProjectiveTransformV3")
                               .Type("dtype", t)
                               .HostMemory("output_shape")
                               .HostMemory("fill_value"));
                     r.Add(pdk::KernelDef<ImageProjectiveTransformOp<T, false>>(
                               "ImageProjectiveTransformV2")
                               .Type("dtype", t)
                               .HostMemory("output_shape"));
                   });
}

}  // namespace
}  // namespace pdk_kernels
