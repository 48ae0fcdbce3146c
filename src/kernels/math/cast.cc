// Cast: y = x converted elementwise from SrcT to DstT (C++ conversion rules:
// float -> int truncates toward zero, nonzero -> true, bool -> 0/1), y shaped
// like x.
//
// SrcT, DstT: float32, float64, float16, bfloat16, int32, int64, bool (all 49
// pairs). Conversions to float16/bfloat16 round to nearest even (Eigen's, as in
// TensorFlow's CPU kernel); float16 <-> bfloat16 goes through float32 (exact
// widening, one rounding). The Truncate attribute is not read: TensorFlow's
// CPU kernel honours it only for bfloat16 and Keras never sets it.
// Same-type casts return x itself (no copy). Errors: allocation only.
#include <cstdint>
#include <type_traits>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

template <class Src, class Dst>
class CastOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    if constexpr (std::is_same_v<Src, Dst>) {
      return ctx.set_output(0, x);
    } else {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.allocate_output(0, x.shape()));
      if (x.num_elements() == 0) return pdk::Status::OK();
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
};

using CastTypes =
    pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t, bool>;

PDK_REGISTER_KERNELS(Cast, r) {
  pdk::ForEachType(CastTypes{}, [&](auto s) {
    using Src = typename decltype(s)::type;
    pdk::ForEachType(CastTypes{}, [&](auto d) {
      using Dst = typename decltype(d)::type;
      r.Add(pdk::KernelDef<CastOp<Src, Dst>>("Cast")
                .template Type<Src>("SrcT")
                .template Type<Dst>("DstT"));
    });
  });
}

}  // namespace
}  // namespace pdk_kernels
