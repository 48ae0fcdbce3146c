// On OPENCL (cl/cwise_select_fill.cl):
//   Select     float32, int64, bool: condition (bool) scalar, a vector over
//              then's first dimension, or then's shape (TensorFlow's
//              select_op.cc checks and wording)
//   SelectV2   float32, int64, bool: condition, then, else broadcast together
//              ("condition [3], then [3,2], and else [2,2] must be broadcastable")
//   Fill       float32, int64, bool: dims (int32/int64) in host memory, value a
//              device scalar (TensorFlow's GPU registration)
//   ZerosLike  float32, int64, bool; OnesLike float32, int64
//   AddN       float32, int64: N inputs of one shape, summed pairwise in input
//              order (the output may reuse input 0's buffer)
#include <string>
#include <vector>

#include "cwise_common.h"
#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;
using pdk_opencl::KernelName;
namespace cw = pdk_opencl::cwise;

namespace {
// out = cond ? then : else over a broadcast plan of (cond, then, else).
Status LaunchSelect(OpKernelContext* ctx, const cw::Broadcast& bc, const Tensor& c,
                    const Tensor& t, const Tensor& e, Tensor* out) {
  const int64 n = out->NumElements();
  if (n == 0) return Status();
  if (bc.flat)
    return Enqueue(ctx, KernelName("cw_select", t.dtype()), n,
                   {c, t, e, *out, Arg::I64(n), Arg::I64(bc.flat_step[0]),
                    Arg::I64(bc.flat_step[1]), Arg::I64(bc.flat_step[2])});
  const cw::RowLaunch r = cw::RowsOf(bc);
  return Enqueue(ctx, KernelName("cw_select_bc", t.dtype()), r.items(),
                 {c, t, e, *out, Arg::I64(r.rows), Arg::I64(r.inner), Arg::I64(r.chunks),
                  Arg::Long8(bc.dims), Arg::Long8(bc.strides[0]), Arg::Long8(bc.strides[1]),
                  Arg::Long8(bc.strides[2])});
}
}  // namespace

class CwSelectOp : public OpKernel {
 public:
  explicit CwSelectOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& then = ctx->input(1);
    const Tensor& els = ctx->input(2);
    cw::Broadcast bc;
    if (TensorShapeUtils::IsScalar(cond.shape())) {
      OP_REQUIRES(ctx, then.shape().IsSameSize(els.shape()),
                  errors::InvalidArgument(
                      "'then' and 'else' must have the same size.  but received: ",
                      then.shape().DebugString(), " vs. ", els.shape().DebugString()));
      bc = cw::MakeBroadcast({&cond.shape(), &then.shape(), &els.shape()});
    } else if (TensorShapeUtils::IsVector(cond.shape()) &&
               !TensorShapeUtils::IsVector(then.shape())) {
      OP_REQUIRES(ctx, TensorShapeUtils::IsVectorOrHigher(then.shape()),
                  errors::InvalidArgument("'then' must be at least a vector, but saw shape: ",
                                          then.shape().DebugString()));
      OP_REQUIRES(ctx, then.dim_size(0) == cond.NumElements(),
                  errors::InvalidArgument(
                      "Number of batches of 'then' must match size of 'cond', but saw: ",
                      then.dim_size(0), " vs. ", cond.NumElements()));
      OP_REQUIRES(ctx, then.shape().IsSameSize(els.shape()),
                  errors::InvalidArgument(
                      "'then' and 'else' must have the same size.  but received: ",
                      then.shape().DebugString(), " vs. ", els.shape().DebugString()));
      // cond as [n, 1, ..., 1] against then's shape.
      TensorShape c2({cond.NumElements()});
      for (int d = 1; d < then.dims(); ++d) c2.AddDim(1);
      bc = cw::MakeBroadcast({&c2, &then.shape(), &els.shape()});
    } else {
      if (!ctx->ValidateInputsAreSameShape(this)) return;
      bc = cw::MakeBroadcast({&cond.shape(), &then.shape(), &els.shape()});
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({1, 2}, 0, then.shape(), &out));
    OP_REQUIRES_OK(ctx, LaunchSelect(ctx, bc, cond, then, els, out));
  }
};

class CwSelectV2Op : public OpKernel {
 public:
  explicit CwSelectV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& then = ctx->input(1);
    const Tensor& els = ctx->input(2);
    const cw::Broadcast bc = cw::MakeBroadcast({&cond.shape(), &then.shape(), &els.shape()});
    OP_REQUIRES(ctx, bc.valid,
                errors::InvalidArgument("condition ", cond.shape().DebugString(), ", then ",
                                        then.shape().DebugString(), ", and else ",
                                        els.shape().DebugString(), " must be broadcastable"));
    // TensorFlow's SelectV2 handles output ranks up to 8.
    OP_REQUIRES(ctx, bc.rank <= cw::kMaxRank && bc.out_shape.size() <= 8,
                errors::Unimplemented("Broadcast between ", cond.shape().DebugString(), " and ",
                                      then.shape().DebugString(), " is not supported yet."));
    const TensorShape out_shape(bc.out_shape);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({1, 2}, 0, out_shape, &out));
    OP_REQUIRES_OK(ctx, LaunchSelect(ctx, bc, cond, then, els, out));
  }
};

template <class Index>
class CwFillOp : public OpKernel {
 public:
  explicit CwFillOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dims = ctx->input(0);
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, TensorShapeUtils::IsVector(dims.shape()),
                errors::InvalidArgument("dims must represent a vector, got shape ",
                                        dims.shape().DebugString()));
    OP_REQUIRES(ctx,
                TensorShapeUtils::IsScalar(value.shape()) ||
                    (TensorShapeUtils::IsVector(value.shape()) && value.dim_size(0) == 1),
                errors::InvalidArgument("value must represent a scalar, got shape ",
                                        value.shape().DebugString()));
    const Index* d = static_cast<const Index*>(dims.data());
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShapeUtils::MakeShape(d, dims.NumElements(), &shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    const int64 n = shape.num_elements();
    OP_REQUIRES_OK(ctx, Enqueue(ctx, KernelName("cw_fill", value.dtype()), n,
                                {value, *out, Arg::I64(n)}));
  }
};

// ZerosLike (one = false) and OnesLike (one = true).
class CwConstLikeOp : public OpKernel {
 public:
  CwConstLikeOp(OpKernelConstruction* c, bool one) : OpKernel(c), one_(one) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const int64 n = x.NumElements();
    if (!one_) {
      OP_REQUIRES_OK(ctx, pdk_opencl::Zero(ctx, y));
    } else if (x.dtype() == DT_FLOAT) {
      OP_REQUIRES_OK(ctx, Enqueue(ctx, "cw_set_f32", n, {*y, Arg::I64(n), Arg::F32(1.0f)}));
    } else {
      OP_REQUIRES_OK(ctx, Enqueue(ctx, "cw_set_i64", n, {*y, Arg::I64(n), Arg::I64(1)}));
    }
  }

 private:
  bool one_;
};
class CwZerosLikeOp : public CwConstLikeOp {
 public:
  explicit CwZerosLikeOp(OpKernelConstruction* c) : CwConstLikeOp(c, false) {}
};
class CwOnesLikeOp : public CwConstLikeOp {
 public:
  explicit CwOnesLikeOp(OpKernelConstruction* c) : CwConstLikeOp(c, true) {}
};

class CwAddNOp : public OpKernel {
 public:
  explicit CwAddNOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const int num = ctx->num_inputs();
    const Tensor& x0 = ctx->input(0);
    if (num == 1) {
      ctx->set_output(0, x0);
      return;
    }
    if (!ctx->ValidateInputsAreSameShape(this)) return;
    std::vector<int> candidates(num);
    for (int i = 0; i < num; ++i) candidates[i] = i;
    Tensor* out = nullptr;
    int fwd = -1;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(candidates, 0, x0.shape(), &out,
                                                              &fwd));
    const int64 n = x0.NumElements();
    if (n == 0) return;
    // Start from the forwarded input (if any): it is read before the output
    // overwrites it, element by element.
    std::vector<int> order;
    if (fwd >= 0) order.push_back(fwd);
    for (int i = 0; i < num; ++i)
      if (i != fwd) order.push_back(i);
    const std::string k = KernelName("cw_add", x0.dtype());
    OP_REQUIRES_OK(ctx, Enqueue(ctx, k, n,
                                {ctx->input(order[0]), ctx->input(order[1]), *out, Arg::I64(n),
                                 Arg::I64(1), Arg::I64(1)}));
    for (int j = 2; j < num; ++j)
      OP_REQUIRES_OK(ctx, Enqueue(ctx, k, n,
                                  {*out, ctx->input(order[j]), *out, Arg::I64(n), Arg::I64(1),
                                   Arg::I64(1)}));
  }
};

#define CW_REGISTER_SELECT(T)                                                           \
  REGISTER_KERNEL_BUILDER(Name("Select").Device(DEVICE_OPENCL).TypeConstraint<T>("T"),  \
                          CwSelectOp);                                                  \
  REGISTER_KERNEL_BUILDER(Name("SelectV2").Device(DEVICE_OPENCL).TypeConstraint<T>("T"), \
                          CwSelectV2Op);                                                \
  REGISTER_KERNEL_BUILDER(Name("Fill")                                                  \
                              .Device(DEVICE_OPENCL)                                    \
                              .TypeConstraint<T>("T")                                   \
                              .TypeConstraint<int32>("index_type")                      \
                              .HostMemory("dims"),                                      \
                          CwFillOp<int32>);                                             \
  REGISTER_KERNEL_BUILDER(Name("Fill")                                                  \
                              .Device(DEVICE_OPENCL)                                    \
                              .TypeConstraint<T>("T")                                   \
                              .TypeConstraint<int64>("index_type")                      \
                              .HostMemory("dims"),                                      \
                          CwFillOp<int64>);                                             \
  REGISTER_KERNEL_BUILDER(Name("ZerosLike").Device(DEVICE_OPENCL).TypeConstraint<T>("T"), \
                          CwZerosLikeOp);
CW_REGISTER_SELECT(float)
CW_REGISTER_SELECT(int64)
CW_REGISTER_SELECT(bool)
#undef CW_REGISTER_SELECT

#define CW_REGISTER_NUMBER(T)                                                           \
  REGISTER_KERNEL_BUILDER(Name("OnesLike").Device(DEVICE_OPENCL).TypeConstraint<T>("T"), \
                          CwOnesLikeOp);                                                \
  REGISTER_KERNEL_BUILDER(Name("AddN").Device(DEVICE_OPENCL).TypeConstraint<T>("T"), CwAddNOp);
CW_REGISTER_NUMBER(float)
CW_REGISTER_NUMBER(int64)
#undef CW_REGISTER_NUMBER

}  // namespace tensorflow
