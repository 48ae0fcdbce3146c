// StridedSliceGrad: the gradient of StridedSlice. Scatters dy into a zero
// tensor of the sliced input's shape.
//
// Inputs: shape (1-D Index, host memory: the StridedSlice input's shape),
// begin/end/strides (1-D Index, host memory), dy (T, the StridedSlice output's
// shape). Attrs: the five StridedSlice masks. Output: T of `shape`, zero
// except at the sliced positions, which hold dy. The spec is resolved by
// strided_slice_spec.h exactly as StridedSlice resolves it.
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8; Index
// int32/int64. Byte-level (dtype-agnostic).
// Errors: InvalidArgument for a bad spec (see strided_slice_spec.h), a shape
// that is not a vector of non-negative sizes, or dy whose shape is not the
// slice's shape.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstring>
#include <vector>

#include "kernels/array/strided_slice_spec.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_kernels::ForEachStridedRun;
using pdk_kernels::ResolveStridedSlice;
using pdk_kernels::RowMajorStrides;
using pdk_kernels::StridedSliceMasks;
using pdk_kernels::StridedSliceSpec;

class StridedSliceGradOp : public OpKernel {
 public:
  explicit StridedSliceGradOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, masks_.Init(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& shape_t = ctx->input(0);
    const Tensor& begin_t = ctx->input(1);
    const Tensor& end_t = ctx->input(2);
    const Tensor& strides_t = ctx->input(3);
    const Tensor& dy = ctx->input(4);
    OP_REQUIRES(ctx, shape_t.dims() == 1,
                errors::InvalidArgument(op, ": shape must be 1-D, got a tensor of shape ",
                                        shape_t.shape()));
    pdk::StatusOr<std::vector<int64_t>> dims =
        pdk_kernels::ReadIntVector(op, "shape", shape_t);
    OP_REQUIRES_OK(ctx, dims.status());
    for (size_t i = 0; i < dims->size(); ++i)
      OP_REQUIRES(ctx, (*dims)[i] >= 0,
                  errors::InvalidArgument(op, ": shape[", i, "] must be non-negative, got ",
                                          (*dims)[i]));
    const pdk::Shape in_shape(*dims);
    pdk::StatusOr<StridedSliceSpec> spec =
        ResolveStridedSlice(op, in_shape, begin_t, end_t, strides_t, masks_);
    OP_REQUIRES_OK(ctx, spec.status());
    OP_REQUIRES(ctx, dy.shape().pdk_shape() == spec->out_shape,
                errors::InvalidArgument(op, ": shape of dy was ", dy.shape(), " instead of ",
                                        spec->out_shape, " (the slice of an input of shape ",
                                        in_shape, ")"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(in_shape), &out));
    if (in_shape.num_elements() == 0) return;
    const size_t elem =
        TF_DataTypeSize(static_cast<TF_DataType>(ctx->expected_output_dtype(0)));
    char* dst = static_cast<char*>(out->data());
    std::memset(dst, 0, out->TotalBytes());
    if (spec->out_shape.num_elements() == 0) return;
    const char* cursor = static_cast<const char*>(dy.data());
    ForEachStridedRun(RowMajorStrides(in_shape), *spec, 0, 0, [&](int64_t off, int64_t n) {
      std::memcpy(dst + off * elem, cursor, n * elem);
      cursor += n * elem;
    });
  }

 private:
  StridedSliceMasks masks_;
};

// T: float32/64, float16, bfloat16, int32, int64, bool, uint8; Index int32,
// int64; shape, begin, end and strides in host memory.
#define PDK_REGISTER_STRIDED_SLICE_GRAD_(T, Index)             \
  REGISTER_KERNEL_BUILDER(Name("StridedSliceGrad")             \
                              .Device(DEVICE_PDK)              \
                              .TypeConstraint<T>("T")          \
                              .TypeConstraint<Index>("Index")  \
                              .HostMemory("shape")             \
                              .HostMemory("begin")             \
                              .HostMemory("end")               \
                              .HostMemory("strides"),          \
                          StridedSliceGradOp)
#define PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_(T) \
  PDK_REGISTER_STRIDED_SLICE_GRAD_(T, int32);   \
  PDK_REGISTER_STRIDED_SLICE_GRAD_(T, int64)
PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_(float);
PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_(double);
PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_(Eigen::half);
PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_(Eigen::bfloat16);
PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_(int32);
PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_(int64);
PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_(bool);
PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_(uint8);
#undef PDK_REGISTER_STRIDED_SLICE_GRAD_ALL_
#undef PDK_REGISTER_STRIDED_SLICE_GRAD_

}  // namespace
}  // namespace tensorflow
