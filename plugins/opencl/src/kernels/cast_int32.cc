// Cast on OPENCL with an int32 side: int32 <-> float32, int64, bool. Every
// argument in host memory, computed on the host (the int32 convention of
// this plugin: int32 tensors of the device live in host memory; TensorFlow
// has no DEVICE_DEFAULT Cast kernel). cwise_cast.cc has the device casts
// between float32, int64 and bool. Keras needs int64 -> int32 (its argmax)
// and int32 -> float32 (sparse_categorical_accuracy).
//
// Values match TensorFlow's CPU Cast (Eigen's cast on x86): float -> int32
// truncates toward zero, NaN and values outside int32 give INT32_MIN;
// int64 -> int32 keeps the low 32 bits; int32 -> float rounds to nearest
// even; to bool: x != 0 (NaN -> true); from bool: 0 or 1. The Truncate
// attribute only affects casts between floating types: not here.
#include <cmath>
#include <cstdint>
#include <limits>

#include "launch.h"

namespace tensorflow {

namespace {

template <class To, class From>
To CastValue(From x) {
  if constexpr (std::is_same<To, bool>::value) {
    return x != From(0) || (std::is_floating_point<From>::value && std::isnan(x));
  } else if constexpr (std::is_floating_point<From>::value && std::is_integral<To>::value) {
    // x86's cvttss2si: NaN and out-of-range values give the minimum.
    const double d = static_cast<double>(x);
    if (std::isnan(d) || d <= -2147483649.0 || d >= 2147483648.0)
      return std::numeric_limits<To>::min();
    return static_cast<To>(d);
  } else if constexpr (std::is_integral<From>::value && std::is_integral<To>::value) {
    // Two's complement narrowing: the low bits.
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(x));
  } else {
    return static_cast<To>(x);
  }
}

template <class From, class To>
class CastInt32Op : public OpKernel {
 public:
  explicit CastInt32Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const From* in = static_cast<const From*>(x.data());
    To* out = static_cast<To*>(y->data());
    const int64 n = x.NumElements();
    for (int64 i = 0; i < n; ++i) out[i] = CastValue<To>(in[i]);
  }
};

}  // namespace

#define PDK_REGISTER_CAST_I32(S, D)                   \
  REGISTER_KERNEL_BUILDER(Name("Cast")                \
                              .Device(DEVICE_OPENCL)  \
                              .TypeConstraint<S>("SrcT") \
                              .TypeConstraint<D>("DstT") \
                              .HostMemory("x")        \
                              .HostMemory("y"),       \
                          CastInt32Op<S, D>);
PDK_REGISTER_CAST_I32(int32, float)
PDK_REGISTER_CAST_I32(int32, int64)
PDK_REGISTER_CAST_I32(int32, bool)
PDK_REGISTER_CAST_I32(float, int32)
PDK_REGISTER_CAST_I32(int64, int32)
PDK_REGISTER_CAST_I32(bool, int32)
#undef PDK_REGISTER_CAST_I32

}  // namespace tensorflow
