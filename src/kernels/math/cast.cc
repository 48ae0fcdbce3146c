// Cast: y = x converted elementwise from SrcT to DstT (C++ conversion rules:
// float -> int truncates toward zero, nonzero -> true, bool -> 0/1), y shaped
// like x.
//
// SrcT, DstT: float32, float64, float16, bfloat16, int32, int64, bool, uint8
// (all 64 pairs; uint8: images). A float to uint8 saturates (NaN -> 0; see
// SaturateToUint8); a float outside int32's or int64's range has no defined
// result, here as in TensorFlow's CPU kernel (both Eigen's cast).
// Conversions to float16/bfloat16 round to nearest even (Eigen's, as in
// TensorFlow's CPU kernel); float16 <-> bfloat16 goes through float32 (exact
// widening, one rounding). Truncate=true (float32 -> float16/bfloat16,
// float64 -> float16; TF's CPU kernel leaves float64 -> bfloat16 rounding)
// first clears the source mantissa bits the destination cannot hold, then
// converts, as TensorFlow's CPU kernel does (LSBZeroSetter in
// tensorflow/core/kernels/cast_op.h): the result is rounded toward zero.
// Same-type casts return x itself (no copy). Errors: allocation only.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// Mantissa bits of the IEEE-style float types.
template <class T> constexpr int kMantissaBits = 0;
template <> constexpr int kMantissaBits<float> = 23;
template <> constexpr int kMantissaBits<double> = 52;
template <> constexpr int kMantissaBits<Eigen::half> = 10;
template <> constexpr int kMantissaBits<Eigen::bfloat16> = 7;

// Clears the low mantissa bits of a Src value that Dst cannot represent.
template <class Src, class Dst>
struct LsbZero {
  using Bits = std::conditional_t<sizeof(Src) == 8, uint64_t, uint32_t>;
  Src operator()(Src v) const {
    constexpr int k = kMantissaBits<Src> - kMantissaBits<Dst>;
    Bits b;
    std::memcpy(&b, &v, sizeof(b));
    b &= ~((Bits(1) << k) - 1);
    std::memcpy(&v, &b, sizeof(b));
    return v;
  }
};

// A float to uint8, saturated: below 0 and NaN give 0, above 255 gives 255,
// else truncation toward zero. C++ leaves the out-of-range conversion
// undefined; TensorFlow's CPU kernel saturates on its vectorized path (packed
// conversions with unsigned saturation; measured on TF 2.21: -5 -> 0, 300 ->
// 255 in a 20000-element tensor) and wraps modulo 256 on its scalar path (a
// 5-element tensor: -5 -> 251, 300 -> 44). PDK saturates at every size.
template <class Src>
struct SaturateToUint8 {
  uint8_t operator()(Src v) const {
    double f;  // exact: double itself, or the 32/16-bit float widened
    if constexpr (std::is_same_v<Src, double>) {
      f = v;
    } else {
      f = static_cast<float>(v);
    }
    return f >= 0.0 ? (f < 255.0 ? static_cast<uint8_t>(f) : uint8_t{255}) : uint8_t{0};
  }
};

template <class Src, class Dst>
class CastOp : public OpKernel {
  // Which pairs TF 2.21's CPU kernel truncates (measured: float64 -> bfloat16
  // still rounds to nearest there).
  static constexpr bool kCanTruncate =
      (std::is_same_v<Src, float> && pdk_compute::kIsHalfLike<Dst>) ||
      (std::is_same_v<Src, double> && std::is_same_v<Dst, Eigen::half>);

 public:
  explicit CastOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("Truncate")) OP_REQUIRES_OK(c, c->GetAttr("Truncate", &truncate_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if constexpr (std::is_same_v<Src, Dst>) {
      ctx->set_output(0, x);
    } else {
      Tensor* y = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
      if (x.NumElements() == 0) return;
      const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
      if constexpr (kCanTruncate) {
        if (truncate_) {
          pdk_compute::Assign(dev, y->flat<Dst>(),
                              x.flat<Src>().unaryExpr(LsbZero<Src, Dst>()).template cast<Dst>());
          return;
        }
      }
      if constexpr (std::is_same_v<Dst, uint8> && !std::is_integral_v<Src>) {
        pdk_compute::Assign(dev, y->flat<Dst>(), x.flat<Src>().unaryExpr(SaturateToUint8<Src>()));
      } else if constexpr (pdk_compute::kIsHalfLike<Src> && pdk_compute::kIsHalfLike<Dst>) {
        pdk_compute::Assign(dev, y->flat<Dst>(),
                            x.flat<Src>().template cast<float>().template cast<Dst>());
      } else {
        pdk_compute::Assign(dev, y->flat<Dst>(), x.flat<Src>().template cast<Dst>());
      }
    }
  }

 private:
  bool truncate_ = false;
};

// All 64 (SrcT, DstT) pairs. An int32 side in host memory
// (src/host memory: docs/architecture.md): a loop's int32 time step cast to float needs
// no copy. `...`: the HostMemory of x when SrcT is int32.
#define PDK_REGISTER_CAST_(Src, Dst, ...)                     \
  REGISTER_KERNEL_BUILDER(Name("Cast")                        \
                              .Device(DEVICE_PDK)             \
                              .TypeConstraint<Src>("SrcT")    \
                              .TypeConstraint<Dst>("DstT")    \
                                  __VA_ARGS__,                \
                          CastOp<Src, Dst>);
#define PDK_REGISTER_CAST_FROM_(Src, ...)                      \
  PDK_REGISTER_CAST_(Src, float, __VA_ARGS__)                  \
  PDK_REGISTER_CAST_(Src, double, __VA_ARGS__)                 \
  PDK_REGISTER_CAST_(Src, Eigen::half, __VA_ARGS__)            \
  PDK_REGISTER_CAST_(Src, Eigen::bfloat16, __VA_ARGS__)        \
  PDK_REGISTER_CAST_(Src, int32, .HostMemory("y") __VA_ARGS__) \
  PDK_REGISTER_CAST_(Src, int64, __VA_ARGS__)                  \
  PDK_REGISTER_CAST_(Src, bool, __VA_ARGS__)                   \
  PDK_REGISTER_CAST_(Src, uint8, __VA_ARGS__)
PDK_REGISTER_CAST_FROM_(float, )
PDK_REGISTER_CAST_FROM_(double, )
PDK_REGISTER_CAST_FROM_(Eigen::half, )
PDK_REGISTER_CAST_FROM_(Eigen::bfloat16, )
PDK_REGISTER_CAST_FROM_(int32, .HostMemory("x"))
PDK_REGISTER_CAST_FROM_(int64, )
PDK_REGISTER_CAST_FROM_(bool, )
PDK_REGISTER_CAST_FROM_(uint8, )
#undef PDK_REGISTER_CAST_FROM_
#undef PDK_REGISTER_CAST_

}  // namespace
}  // namespace tensorflow
