// ConcatV2, Concat and Pack on OPENCL: float, int64, bool; Pack also int32 in
// host memory (computed on the host). Each input is a
// strided copy (cl/array.cl array_copy) of its [outer, inner_i] block into the
// output viewed as [outer, sum inner_i] at the column of its offset.
// Semantics and error wording: TensorFlow's concat_op.cc and pack_op.cc;
// the axis (concat_dim) is HostMemory as in TensorFlow's GPU registrations.
#include <vector>

#include "array_util.h"

namespace tensorflow {

namespace {

// Copies `inputs` (each reshaped to [outer, inner_i]) side by side into `out`.
Status ConcatInto(OpKernelContext* ctx, const std::vector<const Tensor*>& inputs, int64 outer,
                  const Tensor& out) {
  if (out.NumElements() == 0) return Status();
  const int64 total_inner = out.NumElements() / outer;
  int64 col = 0;
  for (const Tensor* in : inputs) {
    if (in->NumElements() == 0) continue;
    const int64 inner = in->NumElements() / outer;
    StridedView v;
    v.Add(outer, inner, total_inner);
    v.Add(inner, 1, 1);
    v.dst_off = col;
    TF_RETURN_IF_ERROR(StridedCopy(ctx, *in, out, v));
    col += inner;
  }
  return Status();
}

}  // namespace

// is_v2: ConcatV2 (values..., axis); else Concat (concat_dim, values...).
template <bool is_v2>
class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* c) override {
    const int n = c->num_inputs() - 1;
    const int first = is_v2 ? 0 : 1;
    const char* const axis_name = is_v2 ? "axis" : "concat_dim";
    const Tensor& axis_t = c->input(is_v2 ? n : 0);
    OP_REQUIRES(c,
                TensorShapeUtils::IsScalar(axis_t.shape()) ||
                    (TensorShapeUtils::IsVector(axis_t.shape()) && axis_t.dim_size(0) == 1),
                errors::InvalidArgument(axis_name,
                                        " tensor should be a scalar integer, but got shape ",
                                        axis_t.shape().DebugString()));
    const int64 concat_dim = HostIndices(axis_t)[0];
    const Tensor& first_in = c->input(first);
    const int dims = first_in.dims();
    const TensorShape& shape0 = first_in.shape();
    const int64 axis = concat_dim < 0 ? concat_dim + dims : concat_dim;
    OP_REQUIRES(c, (0 <= axis && axis < dims) || concat_dim == 0,
                errors::InvalidArgument(
                    "ConcatOp : Expected concatenating dimensions in the range [", -dims, ", ",
                    dims, "), but got ", concat_dim));
    int64 outer = 1;
    for (int d = 0; d < axis; ++d) outer *= shape0.dim_size(d);
    std::vector<const Tensor*> inputs;
    int64 out_dim = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& in = c->input(first + i);
      OP_REQUIRES(c, in.dims() > 0,
                  errors::InvalidArgument(
                      "ConcatOp : Can't concatenate scalars (use tf.stack instead)"));
      OP_REQUIRES(c, in.dims() == dims,
                  errors::InvalidArgument(
                      "ConcatOp : Ranks of all input tensors should match: shape[0] = ",
                      shape0.DebugString(), " vs. shape[", i, "] = ", in.shape().DebugString()));
      for (int j = 0; j < dims; ++j) {
        if (j == axis) continue;
        OP_REQUIRES(c, in.dim_size(j) == shape0.dim_size(j),
                    errors::InvalidArgument("ConcatOp : Dimension ", j,
                                            " in both shapes must be equal: shape[0] = ",
                                            shape0.DebugString(), " vs. shape[", i,
                                            "] = ", in.shape().DebugString()));
      }
      inputs.push_back(&in);
      out_dim += in.dim_size(axis);
    }
    TensorShape out_shape(shape0);
    out_shape.set_dim(axis, out_dim);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    OP_REQUIRES_OK(c, ConcatInto(c, inputs, outer, *out));
  }
};

// TensorFlow's Pack: N inputs of one shape stacked along a new dim `axis`.
class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* c) override {
    const int n = c->num_inputs();
    const Tensor& first = c->input(0);
    const int expanded = first.dims() + 1;
    int64 axis = axis_ < 0 ? axis_ + expanded : axis_;
    OP_REQUIRES(c, 0 <= axis && axis < expanded,
                errors::InvalidArgument("axis = ", axis_, " not in [", -expanded, ", ",
                                        expanded, ")"));
    TensorShape out_shape(first.shape());
    out_shape.InsertDim(static_cast<int>(axis), n);
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < n; ++i) {
      const Tensor& in = c->input(i);
      OP_REQUIRES(c, in.shape().IsSameSize(first.shape()),
                  errors::InvalidArgument("Shapes of all inputs must match: values[0].shape = ",
                                          first.shape().DebugString(), " != values[", i,
                                          "].shape = ", in.shape().DebugString()));
      inputs.push_back(&in);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    int64 outer = 1;
    for (int d = 0; d < axis; ++d) outer *= out_shape.dim_size(d);
    OP_REQUIRES_OK(c, ConcatInto(c, inputs, outer, *out));
  }

 private:
  int64 axis_ = 0;
};

#define PDK_REGISTER(T)                                                                     \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("ConcatV2").Device(DEVICE_OPENCL).TypeConstraint<T>("T").HostMemory("axis"),     \
      ConcatOp<true>);                                                                      \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("Concat").Device(DEVICE_OPENCL).TypeConstraint<T>("T").HostMemory("concat_dim"), \
      ConcatOp<false>);                                                                     \
  REGISTER_KERNEL_BUILDER(Name("Pack").Device(DEVICE_OPENCL).TypeConstraint<T>("T"), PackOp);
PDK_OPENCL_ARRAY_TYPES(PDK_REGISTER)
#undef PDK_REGISTER

// int32 Pack: in host memory, on the host (TensorFlow's GPU int32 Pack; it has
// no DEVICE_DEFAULT one). ConcatV2 / Concat int32 are TensorFlow's own.
REGISTER_KERNEL_BUILDER(Name("Pack")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .HostMemory("values")
                            .HostMemory("output"),
                        PackOp);

}  // namespace tensorflow
