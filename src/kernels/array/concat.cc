// ConcatV2(values..., axis): byte-level row copies (dtype-agnostic: the
// element size comes from the dtype), split over the device's thread pool.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "compute/copy.h"
#include "kernels/array/tf_array_util.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_compute::CopyStreams;
using pdk_compute::Stream;

class ConcatV2Op : public OpKernel {
 public:
  explicit ConcatV2Op(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const int n = ctx->num_inputs() - 1;
    const Tensor& axis_t = ctx->input(n);
    // A scalar, or a vector of one element (TensorFlow's ConcatBaseOp accepts both).
    OP_REQUIRES(ctx, axis_t.dims() <= 1 && (axis_t.dims() != 1 || axis_t.NumElements() == 1),
                errors::InvalidArgument("axis tensor should be a scalar integer, but got shape ",
                                        axis_t.shape(), " (", op, ")"));
    pdk::StatusOr<std::vector<int64_t>> av = pdk_kernels::ReadIntVector(op, "axis", axis_t);
    OP_REQUIRES_OK(ctx, av.status());

    // The inputs are borrowed views, valid for the whole Compute call.
    std::vector<const Tensor*> values(n);
    for (int i = 0; i < n; ++i) values[i] = &ctx->input(i);
    const pdk::Shape& s0 = values[0]->shape().pdk_shape();
    const int rank = s0.rank();
    int64_t axis = (*av)[0];
    OP_REQUIRES(ctx, axis >= -rank && axis < rank,
                errors::InvalidArgument(
                    op, ": axis ", axis, " is out of range [", -rank, ", ", rank,
                    ") for values[0] of shape ", s0,
                    rank == 0 ? " (scalars cannot be concatenated; use stack)" : ""));
    if (axis < 0) axis += rank;

    std::vector<int64_t> out_dims = s0.dims();
    out_dims[axis] = 0;
    for (int i = 0; i < n; ++i) {
      const pdk::Shape& si = values[i]->shape().pdk_shape();
      OP_REQUIRES(ctx, si.rank() == rank,
                  errors::InvalidArgument(op, ": all values must have the same rank: values[0]",
                                          ".shape ", s0, " vs values[", i, "].shape ", si));
      for (int d = 0; d < rank; ++d)
        OP_REQUIRES(ctx, d == axis || si[d] == s0[d],
                    errors::InvalidArgument(op, ": values[0].shape ", s0, " and values[", i,
                                            "].shape ", si, " differ in dimension ", d, " (",
                                            s0[d], " vs ", si[d], "); only axis ", axis,
                                            " may differ"));
      out_dims[axis] += si[axis];
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(out_dims), &out));
    if (out->NumElements() == 0) return;

    const int64_t elem = static_cast<int64_t>(
        TF_DataTypeSize(static_cast<TF_DataType>(ctx->expected_output_dtype(0))));
    int64_t outer = 1, inner = elem;  // inner: bytes per unit of the concat axis
    for (int d = 0; d < axis; ++d) outer *= out_dims[d];
    for (int d = axis + 1; d < rank; ++d) inner *= out_dims[d];
    const int64_t out_row = out_dims[axis] * inner;
    std::vector<Stream> streams;
    int64_t offset = 0;
    char* dst = static_cast<char*>(out->data());
    for (int i = 0; i < n; ++i) {
      const int64_t row = values[i]->dim_size(static_cast<int>(axis)) * inner;
      if (row == 0) continue;  // empty input: contributes nothing
      streams.push_back({dst + offset, out_row, static_cast<const char*>(values[i]->data()),
                         row, row});
      offset += row;
    }
    CopyStreams(ctx->eigen_device<Eigen::ThreadPoolDevice>(), outer, streams);
  }
};

// T: the data-movement types (pdk_compute::DataMovementTypes); Tidx int32,
// int64; axis in host memory, and int32's values and output
// (host memory: docs/architecture.md).
#define PDK_REGISTER_CONCAT_(T, Tidx, INT32_HOST_MEMORY)              \
  REGISTER_KERNEL_BUILDER(Name("ConcatV2")                            \
                              .Device(DEVICE_PDK)                     \
                              .TypeConstraint<T>("T")                 \
                              .TypeConstraint<Tidx>("Tidx")           \
                              .HostMemory("axis") INT32_HOST_MEMORY,  \
                          ConcatV2Op)
#define PDK_REGISTER_CONCAT_ALL_(T) \
  PDK_REGISTER_CONCAT_(T, int32, ); \
  PDK_REGISTER_CONCAT_(T, int64, );
PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(PDK_REGISTER_CONCAT_ALL_)
PDK_REGISTER_CONCAT_(int32, int32, .HostMemory("values").HostMemory("output"));
PDK_REGISTER_CONCAT_(int32, int64, .HostMemory("values").HostMemory("output"));
#undef PDK_REGISTER_CONCAT_ALL_
#undef PDK_REGISTER_CONCAT_

}  // namespace
}  // namespace tensorflow
