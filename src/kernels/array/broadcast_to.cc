// BroadcastTo: output = input repeated to `shape` (NumPy broadcasting: input's
// dimensions, aligned at the end, must each equal the target's or be 1).
//
// input, output: T in float32, float64, int32, int64, bool.
// shape: Tidx (int32 or int64) vector in host memory.
// Errors (InvalidArgument): `shape` not a vector, negative target dimensions,
// input of higher rank than the target, or an input dimension that is neither
// 1 nor the target's (the message names both shapes). An input already of the
// target shape is returned without a copy.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <utility>
#include <vector>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

template <class T>
class BroadcastToOp : public OpKernel {
 public:
  explicit BroadcastToOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& input = ctx->input(0);
    const Tensor& shape_t = ctx->input(1);
    OP_REQUIRES_OK(ctx, pdk::CheckRank(op, "shape", shape_t.shape().pdk_shape(), 1));
    pdk::StatusOr<std::vector<int64_t>> dims = pdk_kernels::ReadIntVector(op, "shape", shape_t);
    OP_REQUIRES_OK(ctx, dims.status());
    for (size_t i = 0; i < dims->size(); ++i)
      OP_REQUIRES(ctx, (*dims)[i] >= 0,
                  errors::InvalidArgument(op, ": shape[", i, "] is ", (*dims)[i],
                                          "; dimensions must be >= 0"));
    const pdk::Shape target(std::move(dims).value());
    const pdk::Shape& in_shape = input.shape().pdk_shape();
    if (in_shape == target) {
      ctx->set_output(0, input);
      return;
    }

    auto out_shape = pdk::BroadcastShapes(op, "input", in_shape, "target", target);
    OP_REQUIRES(ctx, out_shape.ok() && *out_shape == target,
                errors::InvalidArgument(op, ": input.shape ", in_shape,
                                        " cannot be broadcast to shape ", target,
                                        " (each input dimension, aligned at the end, must be 1 "
                                        "or equal the target's)"));
    auto plan = pdk_compute::PlanBroadcast<2>(op, {"input", "target"}, {in_shape, target});
    OP_REQUIRES_OK(ctx, plan.status());

    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(target), &out));
    pdk_compute::EvalBroadcastTo<T>(ctx->eigen_device<Eigen::ThreadPoolDevice>(), *plan,
                                    static_cast<const T*>(input.data()),
                                    static_cast<T*>(out->data()));
  }
};

// T: float32, float64, int32, int64, bool; Tidx int32, int64; shape in host
// memory.
#define PDK_REGISTER_BROADCAST_TO_(T, Tidx)               \
  REGISTER_KERNEL_BUILDER(Name("BroadcastTo")             \
                              .Device(DEVICE_PDK)         \
                              .TypeConstraint<T>("T")     \
                              .TypeConstraint<Tidx>("Tidx") \
                              .HostMemory("shape"),       \
                          BroadcastToOp<T>)
#define PDK_REGISTER_BROADCAST_TO_ALL_(T) \
  PDK_REGISTER_BROADCAST_TO_(T, int32);   \
  PDK_REGISTER_BROADCAST_TO_(T, int64)
PDK_REGISTER_BROADCAST_TO_ALL_(float);
PDK_REGISTER_BROADCAST_TO_ALL_(double);
PDK_REGISTER_BROADCAST_TO_ALL_(int32);
PDK_REGISTER_BROADCAST_TO_ALL_(int64);
PDK_REGISTER_BROADCAST_TO_ALL_(bool);
#undef PDK_REGISTER_BROADCAST_TO_ALL_
#undef PDK_REGISTER_BROADCAST_TO_

}  // namespace
}  // namespace tensorflow
