// Split(split_dim, value; num_split) and SplitV(value, size_splits, split_dim).
//
// Inputs: value (rank >= 1, T); split_dim (scalar int32, host memory,
// negative counts from the end); Split: num_split (attr) equal pieces, which
// must divide value.shape[split_dim]; SplitV: size_splits (1-D Tlen
// int32/int64 of length num_split, host memory), sizes >= 0 with at most one
// -1 (the remainder), summing to value.shape[split_dim] (with one output,
// as in TF, the size must be given exactly: no -1).
// Outputs: num_split tensors, value's shape with split_dim resized. One
// output covering the whole input is forwarded without a copy; otherwise
// byte-level strided row copies (pdk_compute::CopyStreams) over the pool.
// Semantics: tensorflow/core/ops/array_ops.cc (Split, SplitV).
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8, int8,
// int16.
// Errors (InvalidArgument): split_dim not a scalar or out of [-rank, rank);
// num_split not dividing the dimension; bad size_splits (length, more than
// one -1, a negative size, or sizes not summing to the dimension). Each
// message starts with TensorFlow's wording for the same error
// (tensorflow/core/kernels/split_op.cc, split_v_op.cc), which users and
// TensorFlow's tests match on; PDK's detail follows in parentheses.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <string>
#include <type_traits>
#include <vector>

#include "compute/copy.h"
#include "compute/eigen.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// Splits `value` along `axis` (already validated) into pieces of `sizes`.
Status SplitInto(OpKernelContext* ctx, const Tensor& value, int axis,
                 const std::vector<int64>& sizes) {
  const TensorShape& in = value.shape();
  const int n = static_cast<int>(sizes.size());
  if (n == 1) {  // no copy
    ctx->set_output(0, value);
    return OkStatus();
  }
  const int64 elem = static_cast<int64>(DataTypeSize(value.dtype()));
  int64 outer = 1, inner = elem;
  for (int k = 0; k < axis; ++k) outer *= in.dim_size(k);
  for (int k = axis + 1; k < in.dims(); ++k) inner *= in.dim_size(k);
  const int64 in_row = in.dim_size(axis) * inner;
  std::vector<pdk_compute::Stream> streams;
  const char* src = static_cast<const char*>(value.data());
  int64 offset = 0;
  for (int i = 0; i < n; ++i) {
    TensorShape d = in;
    d.set_dim(axis, sizes[i]);
    Tensor* o = nullptr;
    TF_RETURN_IF_ERROR(ctx->allocate_output(i, d, &o));
    const int64 row = sizes[i] * inner;
    if (row > 0 && outer > 0)
      streams.push_back({static_cast<char*>(o->data()), row, src + offset, in_row, row});
    offset += row;
  }
  pdk_compute::CopyStreams(ctx->eigen_device<Eigen::ThreadPoolDevice>(), outer, streams);
  return OkStatus();
}

// Split's split_dim must be a scalar; SplitV's may be any one-element tensor
// (`any_shape`), as in TensorFlow's split_op.cc and split_v_op.cc.
Status ReadSplitDim(const std::string& op, const Tensor& t, const TensorShape& in,
                    bool any_shape, int* axis) {
  if (any_shape && t.NumElements() != 1)
    return errors::InvalidArgument("split_dim_tensor must have exactly one element. (", op,
                                   ": split_dim of shape ", t.shape(), ")");
  if (!any_shape && t.dims() != 0)
    return errors::InvalidArgument("split_dim must be a scalar but has rank ", t.dims(), " (",
                                   op, ": split_dim of shape ", t.shape(), ")");
  std::vector<int64> v;
  TF_RETURN_IF_ERROR(pdk_kernels::ReadIntVector(op, "split_dim", t, &v));
  int64 a = v[0];
  if (a < -in.dims() || a >= in.dims())
    return errors::InvalidArgument("-input rank(-", in.dims(), ") <= split_dim < input rank (",
                                   in.dims(), "), but got ", a, " (", op, ": value of shape ",
                                   in, ")");
  *axis = static_cast<int>(a < 0 ? a + in.dims() : a);
  return OkStatus();
}

class SplitOp : public OpKernel {
 public:
  explicit SplitOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("num_split", &num_split_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dim_t = ctx->input(0);
    const Tensor& value = ctx->input(1);
    const TensorShape& in = value.shape();
    int axis = 0;
    OP_REQUIRES_OK(ctx, ReadSplitDim(type_string(), dim_t, in, false, &axis));
    OP_REQUIRES(ctx, num_split_ > 0 && in.dim_size(axis) % num_split_ == 0,
                errors::InvalidArgument(
                    "Number of ways to split should evenly divide the split dimension, but got "
                    "split_dim ", axis, " (size = ", in.dim_size(axis), ") and num_split ",
                    num_split_, " (", type_string(), ": value of shape ", in, ")"));
    OP_REQUIRES_OK(ctx, SplitInto(ctx, value, axis,
                                  std::vector<int64>(num_split_, in.dim_size(axis) / num_split_)));
  }

 private:
  int64 num_split_ = 1;
};

class SplitVOp : public OpKernel {
 public:
  explicit SplitVOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("num_split", &num_split_));
  }

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& value = ctx->input(0);
    const Tensor& sizes_t = ctx->input(1);
    const Tensor& dim_t = ctx->input(2);
    const TensorShape& in = value.shape();
    int axis = 0;
    OP_REQUIRES_OK(ctx, ReadSplitDim(op, dim_t, in, true, &axis));
    OP_REQUIRES(ctx, sizes_t.dims() == 1 && sizes_t.NumElements() == num_split_,
                errors::InvalidArgument(
                    "size of the split_tensor must be 1-D and have the same elements as outputs "
                    "got ", sizes_t.dims(), " -D and ", sizes_t.NumElements(), " elements (", op,
                    ": size_splits must be a vector of length num_split = ", num_split_,
                    ", got shape ", sizes_t.shape(), ")"));
    std::vector<int64> sizes;
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntVector(op, "size_splits", sizes_t, &sizes));
    OP_REQUIRES(ctx, num_split_ != 1 || sizes[0] == in.dim_size(axis),  // TF: no -1 for one output
                errors::InvalidArgument(
                    "If there is only one output, it must have the same size as the input. "
                    "Input size: ", in.dim_size(axis), " output size: ", sizes[0], " (", op,
                    ": dimension ", axis, " of value of shape ", in, ")"));
    int neg = -1;
    int64 sum = 0;
    for (int i = 0; i < static_cast<int>(sizes.size()); ++i) {
      if (sizes[i] == -1) {
        OP_REQUIRES(ctx, neg < 0,
                    errors::InvalidArgument("There can only be one -1 in the input. (", op,
                                            ": size_splits ", ::pdk::Shape(sizes), " has -1 at ",
                                            neg, " and ", i, ")"));
        neg = i;
      } else {
        OP_REQUIRES(ctx, sizes[i] >= 0,
                    errors::InvalidArgument("Split size at index ", i, " must be >= 0. Got: ",
                                            sizes[i], " (", op, ": size_splits ",
                                            ::pdk::Shape(sizes), "; -1, once, means the rest)"));
        sum += sizes[i];
      }
    }
    OP_REQUIRES(
        ctx, !((neg < 0 && sum != in.dim_size(axis)) || (neg >= 0 && sum > in.dim_size(axis))),
        errors::InvalidArgument(
            "Determined shape must either match input shape along split_dim exactly if fully "
            "specified, or be less than the size of the input along split_dim if not fully "
            "specified.  Got: ", sum, " (", op, ": size_splits ", ::pdk::Shape(sizes),
            " sum to ", sum, ", which must ", neg < 0 ? "equal" : "not exceed", " dimension ",
            axis, " (size ", in.dim_size(axis), ") of value of shape ", in, ")"));
    if (neg >= 0) sizes[neg] = in.dim_size(axis) - sum;
    OP_REQUIRES_OK(ctx, SplitInto(ctx, value, axis, sizes));
  }

 private:
  int64 num_split_ = 1;
};

static_assert(std::is_same_v<pdk_compute::DataMovementTypes,
                             ::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32,
                                             int64, bool, uint8, int8, int16>>,
              "the registrations below list pdk_compute::DataMovementTypes: update them");

// T: the data-movement types (pdk_compute::DataMovementTypes); split_dim and
// size_splits (Tlen int32/int64) in host memory.
#define PDK_REGISTER_SPLITV_(T, Tlen)                       \
  REGISTER_KERNEL_BUILDER(Name("SplitV")                    \
                              .Device(DEVICE_PDK)           \
                              .TypeConstraint<T>("T")       \
                              .TypeConstraint<Tlen>("Tlen") \
                              .HostMemory("size_splits")    \
                              .HostMemory("split_dim"),     \
                          SplitVOp)
#define PDK_REGISTER_SPLIT_(T)                                                         \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("Split").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("split_dim"), \
      SplitOp);                                                                        \
  PDK_REGISTER_SPLITV_(T, int32);                                                      \
  PDK_REGISTER_SPLITV_(T, int64)
PDK_REGISTER_SPLIT_(float);
PDK_REGISTER_SPLIT_(double);
PDK_REGISTER_SPLIT_(Eigen::half);
PDK_REGISTER_SPLIT_(Eigen::bfloat16);
PDK_REGISTER_SPLIT_(int32);
PDK_REGISTER_SPLIT_(int64);
PDK_REGISTER_SPLIT_(bool);
PDK_REGISTER_SPLIT_(uint8);
PDK_REGISTER_SPLIT_(int8);
PDK_REGISTER_SPLIT_(int16);
#undef PDK_REGISTER_SPLIT_
#undef PDK_REGISTER_SPLITV_

}  // namespace
}  // namespace tensorflow
