// StridedSlice: NumPy-style basic slicing, input[begin:end:strides] with
// begin_mask, end_mask, ellipsis_mask, new_axis_mask and shrink_axis_mask.
//
// Inputs: input (any shape, T), begin/end/strides (1-D int32 or int64, same
// length, host memory). Output: the slice, with new axes inserted and shrunk
// axes removed. The spec is resolved by strided_slice_spec.h (shared with
// StridedSliceGrad), which states the semantics of
// tensorflow/core/util/strided_slice_op.cc.
// Errors: InvalidArgument for a zero stride, mismatched spec lengths, more than
// one ellipsis, or a shrunk index out of range.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstring>
#include <vector>

#include "kernels/array/strided_slice_spec.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_kernels::ForEachStridedRun;
using pdk_kernels::ResolveStridedSlice;
using pdk_kernels::RowMajorStrides;
using pdk_kernels::StridedSliceMasks;
using pdk_kernels::StridedSliceSpec;

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, masks_.Init(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& begin_t = ctx->input(1);
    const Tensor& end_t = ctx->input(2);
    const Tensor& strides_t = ctx->input(3);
    const pdk::Shape& in_shape = input.shape().pdk_shape();
    pdk::StatusOr<StridedSliceSpec> spec = ResolveStridedSlice(
        type_string().c_str(), in_shape, begin_t, end_t, strides_t, masks_);
    OP_REQUIRES_OK(ctx, spec.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(spec->out_shape), &out));
    if (spec->out_shape.num_elements() == 0) return;
    const size_t elem = TF_DataTypeSize(static_cast<TF_DataType>(input.dtype()));
    const char* in = static_cast<const char*>(input.data());
    char* cursor = static_cast<char*>(out->data());
    ForEachStridedRun(RowMajorStrides(in_shape), *spec, 0, 0, [&](int64_t off, int64_t n) {
      std::memcpy(cursor, in + off * elem, n * elem);
      cursor += n * elem;
    });
  }

 private:
  StridedSliceMasks masks_;
};

// T: float32/64, float16, bfloat16, int32, int64, bool, uint8; Index int32,
// int64; begin, end and strides in host memory, and int32's input and output
// (host memory: docs/architecture.md).
#define PDK_REGISTER_STRIDED_SLICE_(T, Index, INT32_HOST_MEMORY) \
  REGISTER_KERNEL_BUILDER(Name("StridedSlice")                   \
                              .Device(DEVICE_PDK)                \
                              .TypeConstraint<T>("T")            \
                              .TypeConstraint<Index>("Index")    \
                              .HostMemory("begin")               \
                              .HostMemory("end")                 \
                              .HostMemory("strides") INT32_HOST_MEMORY, \
                          StridedSliceOp)
#define PDK_REGISTER_STRIDED_SLICE_ALL_(T, INT32_HOST_MEMORY) \
  PDK_REGISTER_STRIDED_SLICE_(T, int32, INT32_HOST_MEMORY);   \
  PDK_REGISTER_STRIDED_SLICE_(T, int64, INT32_HOST_MEMORY)
PDK_REGISTER_STRIDED_SLICE_ALL_(float, );
PDK_REGISTER_STRIDED_SLICE_ALL_(double, );
PDK_REGISTER_STRIDED_SLICE_ALL_(Eigen::half, );
PDK_REGISTER_STRIDED_SLICE_ALL_(Eigen::bfloat16, );
PDK_REGISTER_STRIDED_SLICE_ALL_(int32, .HostMemory("input").HostMemory("output"));
PDK_REGISTER_STRIDED_SLICE_ALL_(int64, );
PDK_REGISTER_STRIDED_SLICE_ALL_(bool, );
PDK_REGISTER_STRIDED_SLICE_ALL_(uint8, );
#undef PDK_REGISTER_STRIDED_SLICE_ALL_
#undef PDK_REGISTER_STRIDED_SLICE_

}  // namespace
}  // namespace tensorflow
