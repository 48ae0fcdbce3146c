// Range(start, limit, delta): [start, start + delta, ...) up to limit.
//
// Inputs: start, limit, delta (scalars, or 1-element vectors as TF allows,
// Tidx; host memory). Output: 1-D Tidx of size
//   integers: ceil(|limit - start| / |delta|)  (in uint64: no overflow)
//   floats:   ceil(|(limit - start) / delta|)  (computed in Tidx)
// holding start + T(i) * delta, computed in Tidx as TensorFlow 2.21's CPU
// kernel does (so float outputs match it bit for bit).
// Semantics: tensorflow/core/ops/math_ops.cc (Range),
// tensorflow/core/kernels/sequence_ops.cc.
// Dtypes: Tidx float32, float64, int32, int64.
// Errors (InvalidArgument): a non-scalar argument, delta == 0, start > limit
// with delta > 0 (or start < limit with delta < 0), a size beyond int64.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

template <class T>
class RangeOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    T v[3];
    const char* names[3] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor t, ctx.input(i));
      if (!(t.rank() == 0 || (t.rank() == 1 && t.dim(0) == 1)))
        return pdk::InvalidArgument(ctx.op(), ": ", names[i], " must be a scalar, got shape ",
                                    t.shape());
      v[i] = t.data<T>()[0];
    }
    const T start = v[0], limit = v[1], delta = v[2];
    if (delta == 0)
      return pdk::InvalidArgument(ctx.op(), ": requires delta != 0, got ", +delta);
    if (delta > 0 && start > limit)
      return pdk::InvalidArgument(ctx.op(), ": requires start <= limit when delta > 0, got start ",
                                  +start, " and limit ", +limit);
    if (delta < 0 && start < limit)
      return pdk::InvalidArgument(ctx.op(), ": requires start >= limit when delta < 0, got start ",
                                  +start, " and limit ", +limit);
    int64_t size = 0;
    if constexpr (std::is_integral_v<T>) {
      // In uint64 (modular): limit - start and -delta may not fit T
      // (Range(-2^31, 10) in int32 has 2^31 + 10 elements).
      const uint64_t span = limit > start ? uint64_t(limit) - uint64_t(start)
                                          : uint64_t(start) - uint64_t(limit);
      const uint64_t step = delta > 0 ? uint64_t(delta) : uint64_t(0) - uint64_t(delta);
      const uint64_t n = span / step + (span % step != 0);
      if (n > uint64_t(std::numeric_limits<int64_t>::max()))
        return pdk::InvalidArgument(ctx.op(), ": requires (limit - start) / delta <= ",
                                    std::numeric_limits<int64_t>::max(), ", got ", n);
      size = static_cast<int64_t>(n);
    } else {
      const T s = std::ceil(std::abs((limit - start) / delta));
      if (!(s <= static_cast<T>(std::numeric_limits<int64_t>::max())))
        return pdk::InvalidArgument(ctx.op(), ": requires (limit - start) / delta <= ",
                                    std::numeric_limits<int64_t>::max(), ", got ", s);
      size = static_cast<int64_t>(s);
    }
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape{size}));
    T* o = out.data<T>();
    if constexpr (std::is_integral_v<T>) {
      // start + i * delta in uint64 (modular, no signed overflow); every
      // element is in [start, limit), so the truncation to T is exact.
      for (int64_t i = 0; i < size; ++i)
        o[i] = static_cast<T>(uint64_t(start) + uint64_t(i) * uint64_t(delta));
    } else {
      // The product is rounded to T before the add, as in TF's kernel; the
      // volatile stops the compiler from fusing the two into an FMA
      // (-march=native allows contraction), which would round once.
      for (int64_t i = 0; i < size; ++i) {
        volatile T step = static_cast<T>(i) * delta;
        o[i] = start + step;
      }
    }
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(Range, r) {
  pdk::ForEachType(pdk::TypeList<float, double, int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(Int32OnHost<T>(pdk::KernelDef<RangeOp<T>>("Range")
                             .Type("Tidx", t)
                             .HostMemory("start")
                             .HostMemory("limit")
                             .HostMemory("delta"),
                         {"output"}));
  });
}

}  // namespace pdk_kernels
