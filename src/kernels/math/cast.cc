// Cast: y = x converted elementwise from SrcT to DstT (C++ conversion rules:
// float -> int truncates toward zero, nonzero -> true, bool -> 0/1), y shaped
// like x.
//
// SrcT, DstT: float32, float64, float16, bfloat16, int32, int64, bool (all 49
// pairs). Conversions to float16/bfloat16 round to nearest even (Eigen's, as in
// TensorFlow's CPU kernel); float16 <-> bfloat16 goes through float32 (exact
// widening, one rounding). Truncate=true (float32 -> float16/bfloat16,
// float64 -> float16; TF's CPU kernel leaves float64 -> bfloat16 rounding) first clears the source mantissa bits the destination cannot hold, then
// converts, as TensorFlow's CPU kernel does (LSBZeroSetter in
// tensorflow/core/kernels/cast_op.h): the result is rounded toward zero.
// Same-type casts return x itself (no copy). Errors: allocation only.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
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

template <class Src, class Dst>
class CastOp {
  // Which pairs TF 2.21's CPU kernel truncates (measured: float64 -> bfloat16
  // still rounds to nearest there).
  static constexpr bool kCanTruncate =
      (std::is_same_v<Src, float> && pdk_compute::kIsHalfLike<Dst>) ||
      (std::is_same_v<Src, double> && std::is_same_v<Dst, Eigen::half>);

 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.GetOptional("Truncate", &truncate_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    if constexpr (std::is_same_v<Src, Dst>) {
      return ctx.set_output(0, x);
    } else {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.allocate_output(0, x.shape()));
      if (x.num_elements() == 0) return pdk::Status::OK();
      if constexpr (kCanTruncate) {
        if (truncate_) {
          pdk_compute::flat<Dst>(y).device(pdk_compute::Device(ctx)) =
              pdk_compute::cflat<Src>(x).unaryExpr(LsbZero<Src, Dst>()).template cast<Dst>();
          return pdk::Status::OK();
        }
      }
      if constexpr (pdk_compute::kIsHalfLike<Src> && pdk_compute::kIsHalfLike<Dst>) {
        pdk_compute::flat<Dst>(y).device(pdk_compute::Device(ctx)) =
            pdk_compute::cflat<Src>(x).template cast<float>().template cast<Dst>();
      } else {
        pdk_compute::flat<Dst>(y).device(pdk_compute::Device(ctx)) =
            pdk_compute::cflat<Src>(x).template cast<Dst>();
      }
      return pdk::Status::OK();
    }
  }

 private:
  bool truncate_ = false;
};

using CastTypes =
    pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t, bool>;

PDK_REGISTER_KERNELS(Cast, r) {
  pdk::ForEachType(CastTypes{}, [&](auto s) {
    using Src = typename decltype(s)::type;
    pdk::ForEachType(CastTypes{}, [&](auto d) {
      using Dst = typename decltype(d)::type;
      // An int32 side in host memory (src/kernels/int32_on_host.h): a loop's
      // int32 time step cast to float needs no copy.
      r.Add(Int32OnHost<Src>(
          Int32OnHost<Dst>(pdk::KernelDef<CastOp<Src, Dst>>("Cast").Type("SrcT", s).Type("DstT", d),
                           {"y"}),
          {"x"}));
    });
  });
}

}  // namespace
}  // namespace pdk_kernels
