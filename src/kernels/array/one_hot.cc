// OneHot(indices, depth, on_value, off_value; axis).
//
// Inputs: indices (any rank, TI uint8/int8/int32/int64), depth (scalar int32,
// host memory, >= 0), on_value and off_value (scalars, T). Attr axis in
// [-1, rank(indices)] (-1: last). Output: T, indices' shape with a dimension
// of size depth inserted at axis;
//   output[..., d, ...] = indices[..., ...] == d ? on_value : off_value
// (an index outside [0, depth), e.g. negative, gives an all-off row).
// Semantics: tensorflow/core/ops/array_ops.cc (OneHot).
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8, int8;
// TI uint8, int8, int32, int64.
// Errors (InvalidArgument): axis out of range, depth not a non-negative
// scalar, on_value/off_value not scalars.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

template <class T, class TI>
class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& idx_t = ctx->input(0);
    const Tensor& depth_t = ctx->input(1);
    const Tensor& on_t = ctx->input(2);
    const Tensor& off_t = ctx->input(3);
    const pdk::Shape& is = idx_t.shape().pdk_shape();
    const int rank = is.rank();
    OP_REQUIRES(ctx, axis_ >= -1 && axis_ <= rank,
                errors::InvalidArgument(op, ": axis must be -1 or in [0, ", rank,
                                        "] (the rank of indices, shape ", is, "), got ", axis_));
    OP_REQUIRES(ctx, depth_t.dims() == 0,
                errors::InvalidArgument(op, ": depth must be a scalar, got shape ",
                                        depth_t.shape()));
    OP_REQUIRES(ctx, on_t.dims() == 0 && off_t.dims() == 0,
                errors::InvalidArgument(op,
                                        ": on_value and off_value must be scalars, got shapes ",
                                        on_t.shape(), " and ", off_t.shape()));
    const int64 depth = static_cast<const int32*>(depth_t.data())[0];
    OP_REQUIRES(ctx, depth >= 0,
                errors::InvalidArgument(op, ": depth must be non-negative, got ", depth));
    const int axis = axis_ == -1 ? rank : static_cast<int>(axis_);
    std::vector<int64> od = is.dims();
    od.insert(od.begin() + axis, depth);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(od), &out));
    const int64 n = out->NumElements();
    if (n == 0) return;
    const T on = static_cast<const T*>(on_t.data())[0], off = static_cast<const T*>(off_t.data())[0];
    int64 prefix = 1, suffix = 1;
    for (int k = 0; k < axis; ++k) prefix *= is[k];
    for (int k = axis; k < rank; ++k) suffix *= is[k];
    T* o = static_cast<T*>(out->data());
    pdk_compute::Flat<T> flat(o, n);
    pdk_compute::Assign(ctx->eigen_device<Eigen::ThreadPoolDevice>(), flat, flat.constant(off));
    const TI* idx = static_cast<const TI*>(idx_t.data());
    for (int64 p = 0; p < prefix; ++p)
      for (int64 s = 0; s < suffix; ++s) {
        const int64 v = static_cast<int64>(idx[p * suffix + s]);
        if (v >= 0 && v < depth) o[(p * depth + v) * suffix + s] = on;
      }
  }

 private:
  int64 axis_ = -1;
};

// T: float32/64, float16, bfloat16, int32, int64, bool, uint8, int8; TI uint8,
// int8, int32, int64; depth in host memory.
#define PDK_REGISTER_ONE_HOT_(T, TI)                  \
  REGISTER_KERNEL_BUILDER(Name("OneHot")              \
                              .Device(DEVICE_PDK)     \
                              .TypeConstraint<T>("T") \
                              .TypeConstraint<TI>("TI") \
                              .HostMemory("depth"),   \
                          OneHotOp<T, TI>)
#define PDK_REGISTER_ONE_HOT_ALL_(T) \
  PDK_REGISTER_ONE_HOT_(T, uint8);   \
  PDK_REGISTER_ONE_HOT_(T, int8);    \
  PDK_REGISTER_ONE_HOT_(T, int32);   \
  PDK_REGISTER_ONE_HOT_(T, int64)
PDK_REGISTER_ONE_HOT_ALL_(float);
PDK_REGISTER_ONE_HOT_ALL_(double);
PDK_REGISTER_ONE_HOT_ALL_(Eigen::half);
PDK_REGISTER_ONE_HOT_ALL_(Eigen::bfloat16);
PDK_REGISTER_ONE_HOT_ALL_(int32);
PDK_REGISTER_ONE_HOT_ALL_(int64);
PDK_REGISTER_ONE_HOT_ALL_(bool);
PDK_REGISTER_ONE_HOT_ALL_(uint8);
PDK_REGISTER_ONE_HOT_ALL_(int8);
#undef PDK_REGISTER_ONE_HOT_ALL_
#undef PDK_REGISTER_ONE_HOT_

}  // namespace
}  // namespace tensorflow
