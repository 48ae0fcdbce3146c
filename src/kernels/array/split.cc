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
#include <vector>

#include "compute/copy.h"
#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

// Splits `value` along `axis` (already validated) into pieces of `sizes`.
pdk::Status SplitInto(pdk::Context& ctx, pdk::Tensor& value, int axis,
                      const std::vector<int64_t>& sizes) {
  const pdk::Shape in = value.shape();
  const int n = static_cast<int>(sizes.size());
  if (n == 1) return ctx.set_output_reshaped(0, value, in);  // no copy
  const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(value.dtype()));
  int64_t outer = 1, inner = elem;
  for (int k = 0; k < axis; ++k) outer *= in[k];
  for (int k = axis + 1; k < in.rank(); ++k) inner *= in[k];
  const int64_t in_row = in[axis] * inner;
  std::vector<pdk::Tensor> outs;  // keeps the handles alive during the copy
  std::vector<pdk_compute::Stream> streams;
  const char* src = static_cast<const char*>(value.raw_data());
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> d = in.dims();
    d[axis] = sizes[i];
    PDK_ASSIGN_OR_RETURN(pdk::Tensor o, ctx.allocate_output(i, pdk::Shape(d)));
    const int64_t row = sizes[i] * inner;
    if (row > 0 && outer > 0)
      streams.push_back({static_cast<char*>(o.raw_data()), row, src + offset, in_row, row});
    offset += row;
    outs.push_back(std::move(o));
  }
  pdk_compute::CopyStreams(pdk_compute::Device(ctx), outer, streams);
  return pdk::Status::OK();
}

// Split's split_dim must be a scalar; SplitV's may be any one-element tensor
// (`any_shape`), as in TensorFlow's split_op.cc and split_v_op.cc.
pdk::StatusOr<int> ReadSplitDim(const char* op, const pdk::Tensor& t, const pdk::Shape& in,
                                bool any_shape) {
  if (any_shape && t.num_elements() != 1)
    return pdk::InvalidArgument("split_dim_tensor must have exactly one element. (", op,
                                ": split_dim of shape ", t.shape(), ")");
  if (!any_shape && t.rank() != 0)
    return pdk::InvalidArgument("split_dim must be a scalar but has rank ", t.rank(), " (", op,
                                ": split_dim of shape ", t.shape(), ")");
  PDK_ASSIGN_OR_RETURN(std::vector<int64_t> v, pdk::ReadIntVector(op, "split_dim", t));
  int64_t a = v[0];
  if (a < -in.rank() || a >= in.rank())
    return pdk::InvalidArgument("-input rank(-", in.rank(), ") <= split_dim < input rank (",
                                in.rank(), "), but got ", a, " (", op, ": value of shape ", in,
                                ")");
  return static_cast<int>(a < 0 ? a + in.rank() : a);
}

class SplitOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.Get("num_split", &num_split_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dim_t, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor value, ctx.input(1));
    const pdk::Shape in = value.shape();
    PDK_ASSIGN_OR_RETURN(int axis, ReadSplitDim(ctx.op(), dim_t, in, false));
    if (num_split_ <= 0 || in[axis] % num_split_ != 0)
      return pdk::InvalidArgument(
          "Number of ways to split should evenly divide the split dimension, but got "
          "split_dim ", axis, " (size = ", in[axis], ") and num_split ", num_split_, " (",
          ctx.op(), ": value of shape ", in, ")");
    return SplitInto(ctx, value, axis, std::vector<int64_t>(num_split_, in[axis] / num_split_));
  }

 private:
  int64_t num_split_ = 1;
};

class SplitVOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.Get("num_split", &num_split_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor value, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor sizes_t, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dim_t, ctx.input(2));
    const pdk::Shape in = value.shape();
    PDK_ASSIGN_OR_RETURN(int axis, ReadSplitDim(ctx.op(), dim_t, in, true));
    if (sizes_t.rank() != 1 || sizes_t.num_elements() != num_split_)
      return pdk::InvalidArgument(
          "size of the split_tensor must be 1-D and have the same elements as outputs got ",
          sizes_t.rank(), " -D and ", sizes_t.num_elements(), " elements (", ctx.op(),
          ": size_splits must be a vector of length num_split = ", num_split_, ", got shape ",
          sizes_t.shape(), ")");
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                         pdk::ReadIntVector(ctx.op(), "size_splits", sizes_t));
    if (num_split_ == 1 && sizes[0] != in[axis])  // TF: no -1 for a single output
      return pdk::InvalidArgument(
          "If there is only one output, it must have the same size as the input. Input size: ",
          in[axis], " output size: ", sizes[0], " (", ctx.op(), ": dimension ", axis,
          " of value of shape ", in, ")");
    int neg = -1;
    int64_t sum = 0;
    for (int i = 0; i < static_cast<int>(sizes.size()); ++i) {
      if (sizes[i] == -1) {
        if (neg >= 0)
          return pdk::InvalidArgument("There can only be one -1 in the input. (", ctx.op(),
                                      ": size_splits ", pdk::Shape(sizes), " has -1 at ", neg,
                                      " and ", i, ")");
        neg = i;
      } else if (sizes[i] < 0) {
        return pdk::InvalidArgument("Split size at index ", i, " must be >= 0. Got: ", sizes[i],
                                    " (", ctx.op(), ": size_splits ", pdk::Shape(sizes),
                                    "; -1, once, means the rest)");
      } else {
        sum += sizes[i];
      }
    }
    if ((neg < 0 && sum != in[axis]) || (neg >= 0 && sum > in[axis]))
      return pdk::InvalidArgument(
          "Determined shape must either match input shape along split_dim exactly if fully "
          "specified, or be less than the size of the input along split_dim if not fully "
          "specified.  Got: ", sum, " (", ctx.op(), ": size_splits ", pdk::Shape(sizes),
          " sum to ", sum, ", which must ", neg < 0 ? "equal" : "not exceed", " dimension ",
          axis, " (size ", in[axis], ") of value of shape ", in, ")");
    if (neg >= 0) sizes[neg] = in[axis] - sum;
    return SplitInto(ctx, value, axis, sizes);
  }

 private:
  int64_t num_split_ = 1;
};

}  // namespace

PDK_REGISTER_KERNELS(Split, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     r.Add(pdk::KernelDef<SplitOp>("Split").Type("T", t).HostMemory("split_dim"));
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto l) {
                       r.Add(pdk::KernelDef<SplitVOp>("SplitV")
                                 .Type("T", t)
                                 .Type("Tlen", l)
                                 .HostMemory("size_splits")
                                 .HostMemory("split_dim"));
                     });
                   });
}

}  // namespace pdk_kernels
