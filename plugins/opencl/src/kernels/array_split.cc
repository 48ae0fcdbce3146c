// Split, SplitV and Unpack on OPENCL: float, int64, bool; Split / SplitV also
// int32 in host memory (computed on the host). Output i is a
// strided copy (cl/array.cl array_copy) of its [outer, inner_i] column block
// of the input viewed as [outer, sum inner_i]. Semantics and error wording:
// TensorFlow's split_op.cc, split_v_op.cc, unpack_op.cc; split_dim and
// size_splits are HostMemory as in TensorFlow's GPU registrations.
#include <vector>

#include "array_util.h"

namespace tensorflow {

namespace {

// Output i (of `sizes[i]` along `axis`, shape `input` otherwise, or with the
// axis removed when `drop_axis`) = its block of `input`.
void SplitInto(OpKernelContext* c, const Tensor& input, int axis,
               const std::vector<int64>& sizes, bool drop_axis) {
  int64 outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= input.dim_size(d);
  for (int d = axis + 1; d < input.dims(); ++d) inner *= input.dim_size(d);
  const int64 total = input.dim_size(axis) * inner;
  int64 col = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TensorShape shape(input.shape());
    if (drop_axis)
      shape.RemoveDim(axis);
    else
      shape.set_dim(axis, sizes[i]);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(static_cast<int>(i), shape, &out));
    StridedView v;
    v.Add(outer, total, sizes[i] * inner);
    v.Add(sizes[i] * inner, 1, 1);
    v.src_off = col;
    OP_REQUIRES_OK(c, StridedCopy(c, input, *out, v));
    col += sizes[i] * inner;
  }
}

}  // namespace

// TensorFlow's Split: (split_dim, value) -> num_split equal parts.
class SplitOp : public OpKernel {
 public:
  explicit SplitOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(1);
    const int num_split = c->num_outputs();
    const int64 dim_orig = HostIndices(c->input(0))[0];
    const int64 dim = dim_orig < 0 ? dim_orig + input.dims() : dim_orig;
    OP_REQUIRES(c, 0 <= dim && dim < input.dims(),
                errors::InvalidArgument("-input rank(-", input.dims(),
                                        ") <= split_dim < input rank (", input.dims(),
                                        "), but got ", dim_orig));
    OP_REQUIRES(c, num_split > 0,
                errors::InvalidArgument("Number of ways to split should be > 0, but got ",
                                        num_split));
    OP_REQUIRES(c, input.dim_size(dim) % num_split == 0,
                errors::InvalidArgument(
                    "Number of ways to split should evenly divide the split dimension, but got "
                    "split_dim ",
                    dim, " (size = ", input.dim_size(dim), ") and num_split ", num_split));
    if (num_split == 1) {
      c->set_output(0, input);
      return;
    }
    SplitInto(c, input, static_cast<int>(dim),
              std::vector<int64>(num_split, input.dim_size(dim) / num_split), false);
  }
};

// TensorFlow's SplitV: (value, size_splits, split_dim); one size may be -1.
class SplitVOp : public OpKernel {
 public:
  explicit SplitVOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& sizes_t = c->input(1);
    const int num_split = c->num_outputs();
    OP_REQUIRES(c, sizes_t.dims() == 1 && sizes_t.NumElements() == num_split,
                errors::InvalidArgument(
                    "size of the split_tensor must be 1-D and have the same elements as outputs "
                    "got ",
                    sizes_t.dims(), " -D and ", sizes_t.NumElements(), " elements"));
    const int64 dim_orig = HostIndices(c->input(2))[0];
    const int64 dim = dim_orig < 0 ? dim_orig + input.dims() : dim_orig;
    OP_REQUIRES(c, 0 <= dim && dim < input.dims(),
                errors::InvalidArgument("-input rank(-", input.dims(),
                                        ") <= split_dim < input rank (", input.dims(),
                                        "), but got ", dim_orig));
    std::vector<int64> sizes = HostIndices(sizes_t);
    const int64 size_dim = input.dim_size(dim);
    int neg_one = -1;
    int64 determined = 0;
    for (int d = 0; d < num_split; ++d) {
      if (sizes[d] == -1) {
        OP_REQUIRES(c, neg_one == -1,
                    errors::InvalidArgument("There can only be one -1 in the input."));
        neg_one = d;
      } else {
        determined += sizes[d];
      }
    }
    OP_REQUIRES(c,
                (neg_one == -1 && determined == size_dim) ||
                    (neg_one >= 0 && determined <= size_dim),
                errors::InvalidArgument(
                    "Determined shape must either match input shape along split_dim exactly if "
                    "fully specified, or be less than the size of the input along split_dim if "
                    "not fully specified.  Got: ",
                    determined));
    if (neg_one >= 0) sizes[neg_one] = size_dim - determined;
    for (int i = 0; i < num_split; ++i)
      OP_REQUIRES(c, sizes[i] >= 0,
                  errors::InvalidArgument("Split size at index ", i,
                                          " must be >= 0. Got: ", sizes[i]));
    if (num_split == 1) {
      c->set_output(0, input);
      return;
    }
    SplitInto(c, input, static_cast<int>(dim), sizes, false);
  }
};

// TensorFlow's Unpack: `num` outputs, the input's slices along `axis`.
class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* c) override {
    const int num = c->num_outputs();
    const Tensor& input = c->input(0);
    const int dims = input.dims();
    int64 axis = axis_ < 0 ? axis_ + dims : axis_;
    OP_REQUIRES(c, 0 <= axis && axis < dims,
                errors::InvalidArgument("axis = ", axis_, " not in [", -dims, ", ", dims, ")"));
    OP_REQUIRES(c, dims > 0 && input.dim_size(axis) == num,
                errors::InvalidArgument("Input shape axis ", axis, " must equal ", num,
                                        ", got shape ", input.shape().DebugString()));
    SplitInto(c, input, static_cast<int>(axis), std::vector<int64>(num, 1), true);
  }

 private:
  int64 axis_ = 0;
};

#define PDK_REGISTER(T)                                                                     \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("Split").Device(DEVICE_OPENCL).TypeConstraint<T>("T").HostMemory("split_dim"),   \
      SplitOp);                                                                             \
  REGISTER_KERNEL_BUILDER(Name("SplitV")                                                    \
                              .Device(DEVICE_OPENCL)                                        \
                              .TypeConstraint<T>("T")                                       \
                              .HostMemory("size_splits")                                    \
                              .HostMemory("split_dim"),                                     \
                          SplitVOp);                                                        \
  REGISTER_KERNEL_BUILDER(Name("Unpack").Device(DEVICE_OPENCL).TypeConstraint<T>("T"),      \
                          UnpackOp);
PDK_OPENCL_ARRAY_TYPES(PDK_REGISTER)
#undef PDK_REGISTER

// int32 Split / SplitV: in host memory, on the host (TensorFlow has no
// DEVICE_DEFAULT int32 kernel for them; Unpack int32 is its own).
REGISTER_KERNEL_BUILDER(Name("Split")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .HostMemory("split_dim")
                            .HostMemory("value")
                            .HostMemory("output"),
                        SplitOp);
REGISTER_KERNEL_BUILDER(Name("SplitV")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .HostMemory("value")
                            .HostMemory("size_splits")
                            .HostMemory("split_dim")
                            .HostMemory("output"),
                        SplitVOp);

}  // namespace tensorflow
