// CheckNumerics(tensor; message) and CheckNumericsV2: output = tensor (the
// same buffer) if it holds no NaN or infinity, else InvalidArgument with
// TensorFlow's wording (tensorflow/core/kernels/check_numerics_op.cc):
//   CheckNumerics:   "<message> : Tensor had NaN values" (or "Inf", "Inf and NaN")
//   CheckNumericsV2: "<message> : Tensor had +Inf values" (or "-Inf", "NaN",
//                    "-Inf and +Inf", "-Inf and NaN", "+Inf and NaN",
//                    "-Inf, +Inf, and NaN")
// (tf.debugging.check_numerics, the gradient of CheckNumerics, Keras's
// numerics checks). float32, float64, float16, bfloat16.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cmath>
#include <string>
#include <type_traits>

#include "compute/eigen.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

constexpr int kNaN = 1, kNegInf = 2, kPosInf = 4;

// What `t` holds: kNaN | kNegInf | kPosInf (16-bit values widen exactly).
template <class T>
int Scan(const Tensor& t) {
  const T* x = t.flat<T>().data();
  int found = 0;
  for (int64_t i = 0, n = t.NumElements(); i < n; ++i) {
    double v;
    if constexpr (std::is_same_v<T, double>) {
      v = x[i];
    } else {
      v = static_cast<float>(x[i]);
    }
    if (std::isnan(v)) {
      found |= kNaN;
    } else if (std::isinf(v)) {
      found |= v < 0 ? kNegInf : kPosInf;
    }
  }
  return found;
}

std::string DescribeV1(int f) {
  const bool inf = f & (kNegInf | kPosInf), nan = f & kNaN;
  return inf && nan ? "Inf and NaN" : inf ? "Inf" : "NaN";
}

std::string DescribeV2(int f) {
  const bool neg = f & kNegInf, pos = f & kPosInf, nan = f & kNaN;
  if (neg && pos && nan) return "-Inf, +Inf, and NaN";
  if (neg && pos) return "-Inf and +Inf";
  if (neg && nan) return "-Inf and NaN";
  if (pos && nan) return "+Inf and NaN";
  return neg ? "-Inf" : pos ? "+Inf" : "NaN";
}

template <class T, bool kV2>
class CheckNumericsOp : public OpKernel {
 public:
  explicit CheckNumericsOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("message", &message_));
  }

  void Compute(OpKernelContext* ctx) override {
    const int found = Scan<T>(ctx->input(0));
    OP_REQUIRES(ctx, found == 0,
                errors::InvalidArgument(message_, " : Tensor had ",
                                        kV2 ? DescribeV2(found) : DescribeV1(found), " values"));
    ctx->set_output(0, ctx->input(0));
  }

 private:
  std::string message_;
};

#define PDK_REGISTER_CHECK_NUMERICS_(T)                                                      \
  REGISTER_KERNEL_BUILDER(Name("CheckNumerics").Device(DEVICE_PDK).TypeConstraint<T>("T"),   \
                          CheckNumericsOp<T, false>);                                        \
  REGISTER_KERNEL_BUILDER(Name("CheckNumericsV2").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          CheckNumericsOp<T, true>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_CHECK_NUMERICS_)  // float16, bfloat16, float32, float64
#undef PDK_REGISTER_CHECK_NUMERICS_

}  // namespace
}  // namespace tensorflow
