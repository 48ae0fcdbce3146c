// 16-bit floats computed in float32: one helper for the kernels whose bodies
// are written for float/double (convolutions) and run float16/bfloat16 on
// float32 copies, rounding the result once (docs/architecture.md, "float16 /
// bfloat16").
#ifndef PDK_SRC_COMPUTE_WIDEN_H_
#define PDK_SRC_COMPUTE_WIDEN_H_

#include "compute/eigen.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_compute {

// *f = a float32 scratch copy of `t` (T: a 16-bit float). Errors: allocation.
template <class T>
tensorflow::Status WidenToFloat(tensorflow::OpKernelContext* ctx, const tensorflow::Tensor& t,
                                tensorflow::Tensor* f) {
  TF_RETURN_IF_ERROR(ctx->allocate_temp(tensorflow::DT_FLOAT, t.shape(), f));
  Convert<T, float>(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
                    static_cast<const T*>(t.data()), static_cast<float*>(f->data()),
                    t.NumElements());
  return tensorflow::Status();
}

// Runs fn(a, b, out) on the data of T-typed tensors a, b and out; for T in
// {float16, bfloat16} on float32 scratch copies of a and b and a float32
// scratch result that is rounded once into `out` (same shape). `fn` is generic
// in the element type of its three pointers (const C*, const C*, C*) and
// returns a Status. `out` is allocated by the caller. Errors: fn's, or
// ResourceExhausted from the scratch allocations.
template <class T, class Fn>
tensorflow::Status RunWidened(tensorflow::OpKernelContext* ctx, const tensorflow::Tensor& a,
                              const tensorflow::Tensor& b, tensorflow::Tensor* out, Fn fn) {
  if constexpr (kIsHalfLike<T>) {
    tensorflow::Tensor af, bf, of;
    TF_RETURN_IF_ERROR(WidenToFloat<T>(ctx, a, &af));
    TF_RETURN_IF_ERROR(WidenToFloat<T>(ctx, b, &bf));
    TF_RETURN_IF_ERROR(ctx->allocate_temp(tensorflow::DT_FLOAT, out->shape(), &of));
    TF_RETURN_IF_ERROR(fn(static_cast<const float*>(af.data()),
                          static_cast<const float*>(bf.data()), static_cast<float*>(of.data())));
    Convert<float, T>(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
                      static_cast<const float*>(of.data()), static_cast<T*>(out->data()),
                      out->NumElements());
    return tensorflow::Status();
  } else {
    return fn(static_cast<const T*>(a.data()), static_cast<const T*>(b.data()),
              static_cast<T*>(out->data()));
  }
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_WIDEN_H_
