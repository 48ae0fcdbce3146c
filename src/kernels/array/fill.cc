// Fill, ZerosLike, OnesLike: a constant written over the output by element
// size (one Eigen setConstant per 1/2/4/8-byte storage type), on the device's
// thread pool.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstring>
#include <utility>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/array/tf_array_util.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// Writes the `Bytes`-byte pattern at `value` into every element of `out`.
template <size_t Bytes>
void FillPattern(const Eigen::ThreadPoolDevice& dev, Tensor* out, const void* value) {
  using U = pdk::UIntOfSizeT<Bytes>;
  U v;
  std::memcpy(&v, value, Bytes);
  if (out->NumElements() == 0) return;
  pdk_compute::Flat<U> o(static_cast<U*>(out->data()), out->NumElements());
  pdk_compute::Assign(dev, o, o.constant(v));
}

// Fill(dims, value): dims is a host int vector (or a scalar: one dimension),
// value a device scalar (or a one-element vector), as TensorFlow's FillOp
// (constant_op.cc) accepts.
template <size_t Bytes>
class FillOp : public OpKernel {
 public:
  explicit FillOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& dims_t = ctx->input(0);
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, dims_t.dims() <= 1,
                errors::InvalidArgument("dims must represent a vector, got shape ",
                                        dims_t.shape(), " (", op, ")"));
    OP_REQUIRES(ctx, value.dims() <= 1 && (value.dims() != 1 || value.NumElements() == 1),
                errors::InvalidArgument("value must represent a scalar, got shape ",
                                        value.shape(), " (", op, ")"));
    pdk::StatusOr<std::vector<int64_t>> dims = pdk_kernels::ReadIntVector(op, "dims", dims_t);
    OP_REQUIRES_OK(ctx, dims.status());
    for (size_t i = 0; i < dims->size(); ++i)
      OP_REQUIRES(ctx, (*dims)[i] >= 0,
                  errors::InvalidArgument(op, ": dims[", i, "] must be non-negative, got ",
                                          (*dims)[i], " (dims ", pdk::Shape(*dims), ")"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(*dims), &out));
    FillPattern<Bytes>(ctx->eigen_device<Eigen::ThreadPoolDevice>(), out, value.data());
  }
};

// ZerosLike(x) / OnesLike(x): x's shape, every element T(0) / T(1).
template <class T, int kValue>
class ConstantLikeOp : public OpKernel {
 public:
  explicit ConstantLikeOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &out));
    const T v = static_cast<T>(kValue);
    FillPattern<sizeof(T)>(ctx->eigen_device<Eigen::ThreadPoolDevice>(), out, &v);
  }
};

// T: the data-movement types (pdk_compute::DataMovementTypes); Fill's
// index_type int32, int64 with dims in host memory; int32's value and
// outputs in host memory too (host memory: docs/architecture.md).
#define PDK_REGISTER_FILL_(T, Index, INT32_HOST_MEMORY)                  \
  REGISTER_KERNEL_BUILDER(Name("Fill")                                   \
                              .Device(DEVICE_PDK)                        \
                              .TypeConstraint<T>("T")                    \
                              .TypeConstraint<Index>("index_type")       \
                              .HostMemory("dims") INT32_HOST_MEMORY,     \
                          FillOp<sizeof(T)>)
#define PDK_REGISTER_CONSTANT_LIKE_(T, INT32_HOST_MEMORY)                                 \
  REGISTER_KERNEL_BUILDER(                                                                \
      Name("ZerosLike").Device(DEVICE_PDK).TypeConstraint<T>("T") INT32_HOST_MEMORY,     \
      ConstantLikeOp<T, 0>);                                                              \
  REGISTER_KERNEL_BUILDER(                                                                \
      Name("OnesLike").Device(DEVICE_PDK).TypeConstraint<T>("T") INT32_HOST_MEMORY,      \
      ConstantLikeOp<T, 1>)
#define PDK_REGISTER_FILL_ALL_(T)           \
  PDK_REGISTER_FILL_(T, int32, );           \
  PDK_REGISTER_FILL_(T, int64, );           \
  PDK_REGISTER_CONSTANT_LIKE_(T, );
PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(PDK_REGISTER_FILL_ALL_)
PDK_REGISTER_FILL_(int32, int32, .HostMemory("value").HostMemory("output"));
PDK_REGISTER_FILL_(int32, int64, .HostMemory("value").HostMemory("output"));
PDK_REGISTER_CONSTANT_LIKE_(int32, .HostMemory("y"));
#undef PDK_REGISTER_FILL_ALL_
#undef PDK_REGISTER_CONSTANT_LIKE_
#undef PDK_REGISTER_FILL_

}  // namespace
}  // namespace tensorflow
