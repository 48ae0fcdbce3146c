// 16-bit floats computed in float32: one helper for the kernels whose bodies
// are written for float/double (convolutions) and run float16/bfloat16 on
// float32 copies, rounding the result once (docs/architecture.md, "float16 /
// bfloat16").
#ifndef PDK_SRC_COMPUTE_WIDEN_H_
#define PDK_SRC_COMPUTE_WIDEN_H_

#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "pdk/status.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_compute {

// Runs fn(a, b, out) on the data of T-typed tensors a, b and out; for T in
// {float16, bfloat16} on float32 scratch copies of a and b and a float32
// scratch result that is rounded once into `out` (same shape). `fn` is generic
// in the element type of its three pointers (const C*, const C*, C*) and
// returns pdk::Status. Errors: fn's, or ResourceExhausted from the scratch
// allocations.
template <class T, class Fn>
pdk::Status RunWidened(pdk::Context& ctx, const pdk::Tensor& a, const pdk::Tensor& b,
                       pdk::Tensor& out, Fn fn) {
  if constexpr (kIsHalfLike<T>) {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor af, WidenToFloat<T>(ctx, a));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor bf, WidenToFloat<T>(ctx, b));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor of, ctx.allocate_temp(TF_FLOAT, out.shape()));
    PDK_RETURN_IF_ERROR(fn(af.data<float>(), bf.data<float>(), of.data<float>()));
    Convert<float, T>(Device(ctx), of.data<float>(), out.data<T>(), out.num_elements());
    return pdk::Status::OK();
  } else {
    return fn(a.data<T>(), b.data<T>(), out.data<T>());
  }
}

// TF-style (pdk/tf/op_kernel.h) forms of the two helpers.

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

// RunWidened above on TF-style tensors; `out` is allocated by the caller.
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
