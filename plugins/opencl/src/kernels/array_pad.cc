// Pad, PadV2 and Snapshot on OPENCL: float, int64, bool, and int32 in host
// memory (computed on the host); paddings int32 / int64. paddings and PadV2's
// constant_values are HostMemory as in TensorFlow's GPU registrations
// (pad_op.cc).
//   Pad / PadV2: out = constant (clEnqueueFillBuffer), then the input is a
//     strided copy (cl/array.cl array_copy) into out at offset
//     sum paddings[d][0] * out_stride[d].
//   Snapshot: out = a copy of the input (TensorFlow's snapshot_op.h).
// Error wording: TensorFlow's pad_op.cc.
#include <cstring>
#include <vector>

#include "array_util.h"

namespace tensorflow {

template <class T>
class PadOp : public OpKernel {
 public:
  explicit PadOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& pads_t = c->input(1);
    const int dims = input.dims();
    OP_REQUIRES(c, dims <= 8,
                errors::Unimplemented("inputs rank not in [0,8]: ", dims));
    OP_REQUIRES(c, TensorShapeUtils::IsMatrix(pads_t.shape()) && pads_t.dim_size(1) == 2,
                errors::InvalidArgument("paddings must be a matrix with 2 columns: ",
                                        pads_t.shape().DebugString()));
    OP_REQUIRES(c, dims == pads_t.dim_size(0),
                errors::InvalidArgument(
                    "The first dimension of paddings must be the rank of inputs",
                    pads_t.shape().DebugString(), " ",
                                        input.shape().DebugString()));
    T value = T();
    if (c->num_inputs() == 3) {
      const Tensor& cv = c->input(2);
      OP_REQUIRES(c, TensorShapeUtils::IsScalar(cv.shape()),
                  errors::InvalidArgument("constant_values must be a scalar. Found: ",
                                          cv.shape().DebugString()));
      value = cv.scalar<T>()();
    }
    const std::vector<int64> pads = HostIndices(pads_t);
    TensorShape shape;
    for (int d = 0; d < dims; ++d) {
      const int64 before = pads[2 * d], after = pads[2 * d + 1];
      OP_REQUIRES(c, before >= 0 && after >= 0,
                  errors::InvalidArgument("Paddings must be non-negative: ", before, " ", after));
      OP_REQUIRES_OK(c, shape.AddDimWithStatus(before + input.dim_size(d) + after));
    }
    if (shape.num_elements() == input.NumElements()) {
      Tensor t;
      t.CopyFrom(input, shape);
      c->set_output(0, t);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    OP_REQUIRES_OK(c, FillElements(c, out, &value));
    const std::vector<int64> in_strides = RowMajorStrides(input.shape());
    const std::vector<int64> out_strides = RowMajorStrides(shape);
    StridedView v;
    for (int d = 0; d < dims; ++d) {
      v.dst_off += pads[2 * d] * out_strides[d];
      v.Add(input.dim_size(d), in_strides[d], out_strides[d]);
    }
    OP_REQUIRES_OK(c, StridedCopy(c, input, *out, v));
  }
};

class SnapshotOp : public OpKernel {
 public:
  explicit SnapshotOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &out));
    OP_REQUIRES_OK(c, pdk_opencl::array::CopyElements(c, input, out));
  }
};

#define PDK_REGISTER_PAD(T, P)                                     \
  REGISTER_KERNEL_BUILDER(Name("Pad")                              \
                              .Device(DEVICE_OPENCL)               \
                              .TypeConstraint<T>("T")              \
                              .TypeConstraint<P>("Tpaddings")      \
                              .HostMemory("paddings"),             \
                          PadOp<T>);                               \
  REGISTER_KERNEL_BUILDER(Name("PadV2")                            \
                              .Device(DEVICE_OPENCL)               \
                              .TypeConstraint<T>("T")              \
                              .TypeConstraint<P>("Tpaddings")      \
                              .HostMemory("paddings")              \
                              .HostMemory("constant_values"),      \
                          PadOp<T>);
#define PDK_REGISTER(T)                                                                     \
  PDK_REGISTER_PAD(T, int32)                                                                \
  PDK_REGISTER_PAD(T, ::tensorflow::int64)                                                  \
  REGISTER_KERNEL_BUILDER(Name("Snapshot").Device(DEVICE_OPENCL).TypeConstraint<T>("T"),    \
                          SnapshotOp);
PDK_OPENCL_ARRAY_TYPES(PDK_REGISTER)
#undef PDK_REGISTER

// int32: every argument in host memory, computed on the host.
#define PDK_REGISTER_PAD_I32(P)                                    \
  REGISTER_KERNEL_BUILDER(Name("Pad")                              \
                              .Device(DEVICE_OPENCL)               \
                              .TypeConstraint<int32>("T")          \
                              .TypeConstraint<P>("Tpaddings")      \
                              .HostMemory("input")                 \
                              .HostMemory("paddings")              \
                              .HostMemory("output"),               \
                          PadOp<int32>);                           \
  REGISTER_KERNEL_BUILDER(Name("PadV2")                            \
                              .Device(DEVICE_OPENCL)               \
                              .TypeConstraint<int32>("T")          \
                              .TypeConstraint<P>("Tpaddings")      \
                              .HostMemory("input")                 \
                              .HostMemory("paddings")              \
                              .HostMemory("constant_values")       \
                              .HostMemory("output"),               \
                          PadOp<int32>);
PDK_REGISTER_PAD_I32(int32)
PDK_REGISTER_PAD_I32(::tensorflow::int64)
#undef PDK_REGISTER_PAD_I32
#undef PDK_REGISTER_PAD
REGISTER_KERNEL_BUILDER(Name("Snapshot")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .HostMemory("input")
                            .HostMemory("output"),
                        SnapshotOp);

}  // namespace tensorflow
