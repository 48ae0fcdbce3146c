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
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

template <class T>
class RangeOp : public OpKernel {
 public:
  explicit RangeOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    T v[3];
    const char* names[3] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.dims() == 0 || (t.dims() == 1 && t.dim_size(0) == 1),
                  errors::InvalidArgument(op, ": ", names[i], " must be a scalar, got shape ",
                                          t.shape()));
      v[i] = static_cast<const T*>(t.data())[0];
    }
    const T start = v[0], limit = v[1], delta = v[2];
    OP_REQUIRES(ctx, delta != 0,
                errors::InvalidArgument(op, ": requires delta != 0, got ", +delta));
    OP_REQUIRES(ctx, !(delta > 0 && start > limit),
                errors::InvalidArgument(op,
                                        ": requires start <= limit when delta > 0, got start ",
                                        +start, " and limit ", +limit));
    OP_REQUIRES(ctx, !(delta < 0 && start < limit),
                errors::InvalidArgument(op,
                                        ": requires start >= limit when delta < 0, got start ",
                                        +start, " and limit ", +limit));
    int64_t size = 0;
    if constexpr (std::is_integral_v<T>) {
      // In uint64 (modular): limit - start and -delta may not fit T
      // (Range(-2^31, 10) in int32 has 2^31 + 10 elements).
      const uint64_t span = limit > start ? uint64_t(limit) - uint64_t(start)
                                          : uint64_t(start) - uint64_t(limit);
      const uint64_t step = delta > 0 ? uint64_t(delta) : uint64_t(0) - uint64_t(delta);
      const uint64_t n = span / step + (span % step != 0);
      OP_REQUIRES(ctx, n <= uint64_t(std::numeric_limits<int64_t>::max()),
                  errors::InvalidArgument(op, ": requires (limit - start) / delta <= ",
                                          std::numeric_limits<int64_t>::max(), ", got ", n));
      size = static_cast<int64_t>(n);
    } else {
      const T s = std::ceil(std::abs((limit - start) / delta));
      OP_REQUIRES(ctx, s <= static_cast<T>(std::numeric_limits<int64_t>::max()),
                  errors::InvalidArgument(op, ": requires (limit - start) / delta <= ",
                                          std::numeric_limits<int64_t>::max(), ", got ", s));
      size = static_cast<int64_t>(s);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({size}), &out));
    T* o = static_cast<T*>(out->data());
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
  }
};

// Tidx: float32, float64, int32, int64; start, limit and delta in host
// memory, and int32's output (host memory: docs/architecture.md).
#define PDK_REGISTER_RANGE_(T, INT32_HOST_MEMORY)                        \
  REGISTER_KERNEL_BUILDER(Name("Range")                                  \
                              .Device(DEVICE_PDK)                        \
                              .TypeConstraint<T>("Tidx")                 \
                              .HostMemory("start")                       \
                              .HostMemory("limit")                       \
                              .HostMemory("delta") INT32_HOST_MEMORY,    \
                          RangeOp<T>)
PDK_REGISTER_RANGE_(float, );
PDK_REGISTER_RANGE_(double, );
PDK_REGISTER_RANGE_(int32, .HostMemory("output"));
PDK_REGISTER_RANGE_(int64, );
#undef PDK_REGISTER_RANGE_

}  // namespace
}  // namespace tensorflow
