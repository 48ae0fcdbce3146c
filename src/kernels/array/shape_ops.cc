// Shape, ShapeN, Size, Rank: metadata of the input(s), written to host-memory
// outputs, so a graph never copies a PDK tensor back to the CPU to read its
// shape. The input's data is never read (it may stay in device memory).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/array/tf_array_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// Writes `v` to element i of `out` (int32 or int64), checking int32 range;
// `op` names the op in the error.
Status Store(const std::string& op, Tensor* out, int64 i, int64 v, const char* what) {
  if (out->dtype() == DT_INT32) {
    if (v > std::numeric_limits<int32>::max())
      return errors::InvalidArgument(op, ": ", what, " ", v, " does not fit the int32 out_type");
    static_cast<int32*>(out->data())[i] = static_cast<int32>(v);
  } else {
    static_cast<int64*>(out->data())[i] = v;
  }
  return OkStatus();
}

// Shape (one input) and ShapeN (N inputs): output i is input i's dims.
class ShapeOp : public OpKernel {
 public:
  explicit ShapeOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& x = ctx->input(i);
      const int rank = x.dims();
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({rank}), &out));
      for (int d = 0; d < rank; ++d)
        OP_REQUIRES_OK(ctx, Store(type_string(), out, d, x.dim_size(d), "dimension"));
    }
  }
};

class SizeOp : public OpKernel {
 public:
  explicit SizeOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    OP_REQUIRES_OK(ctx, Store(type_string(), out, 0, x.NumElements(), "number of elements"));
  }
};

class RankOp : public OpKernel {
 public:
  explicit RankOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    static_cast<int32*>(out->data())[0] = x.dims();
  }
};

// T: the data-movement types (pdk_compute::DataMovementTypes); out_type
// int32, int64 (Shape, ShapeN, Size). Every output in host memory, and
// int32's input (host memory: docs/architecture.md).
#define PDK_REGISTER_SHAPE_OPS_OUT_(T, Out, INT32_HOST_MEMORY)            \
  REGISTER_KERNEL_BUILDER(Name("Shape")                                   \
                              .Device(DEVICE_PDK)                         \
                              .TypeConstraint<T>("T")                     \
                              .TypeConstraint<Out>("out_type")            \
                              .HostMemory("output") INT32_HOST_MEMORY,    \
                          ShapeOp);                                       \
  REGISTER_KERNEL_BUILDER(Name("ShapeN")                                  \
                              .Device(DEVICE_PDK)                         \
                              .TypeConstraint<T>("T")                     \
                              .TypeConstraint<Out>("out_type")            \
                              .HostMemory("output") INT32_HOST_MEMORY,    \
                          ShapeOp);                                       \
  REGISTER_KERNEL_BUILDER(Name("Size")                                    \
                              .Device(DEVICE_PDK)                         \
                              .TypeConstraint<T>("T")                     \
                              .TypeConstraint<Out>("out_type")            \
                              .HostMemory("output") INT32_HOST_MEMORY,    \
                          SizeOp)
#define PDK_REGISTER_SHAPE_OPS_(T, INT32_HOST_MEMORY)                                \
  PDK_REGISTER_SHAPE_OPS_OUT_(T, int32, INT32_HOST_MEMORY);                          \
  PDK_REGISTER_SHAPE_OPS_OUT_(T, int64, INT32_HOST_MEMORY);                          \
  REGISTER_KERNEL_BUILDER(                                                           \
      Name("Rank").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("output")    \
          INT32_HOST_MEMORY,                                                         \
      RankOp)
#define PDK_REGISTER_SHAPE_OPS_DEVICE_(T) PDK_REGISTER_SHAPE_OPS_(T, );
PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(PDK_REGISTER_SHAPE_OPS_DEVICE_)
PDK_REGISTER_SHAPE_OPS_(int32, .HostMemory("input"));
#undef PDK_REGISTER_SHAPE_OPS_DEVICE_
#undef PDK_REGISTER_SHAPE_OPS_
#undef PDK_REGISTER_SHAPE_OPS_OUT_

}  // namespace
}  // namespace tensorflow
