// Bitcast: reinterprets the bytes of `input` (dtype T) as dtype `type`.
//
// Shapes (tensorflow/core/ops/array_ops.cc, Bitcast): equal element sizes keep
// the shape; a larger input element appends a dimension of size
// sizeof(T)/sizeof(type); a smaller one requires the last dimension to equal
// sizeof(type)/sizeof(T) and removes it (InvalidArgument otherwise).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstring>
#include <vector>

#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

class BitcastOp : public OpKernel {
 public:
  explicit BitcastOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const TF_DataType in_dtype = static_cast<TF_DataType>(input.dtype());
    const TF_DataType out_dtype = static_cast<TF_DataType>(ctx->expected_output_dtype(0));
    const size_t in_size = TF_DataTypeSize(in_dtype);
    const size_t out_size = TF_DataTypeSize(out_dtype);
    pdk::Shape shape = input.shape().pdk_shape();
    if (in_size > out_size) {
      shape.push_back(static_cast<int64>(in_size / out_size));
    } else if (in_size < out_size) {
      const int64 ratio = static_cast<int64>(out_size / in_size);
      OP_REQUIRES(ctx, shape.rank() != 0 && shape.dim(-1) == ratio,
                  errors::InvalidArgument(type_string(), ": cannot bitcast ",
                                          pdk::DataTypeName(in_dtype), " of shape ", shape,
                                          " to ", pdk::DataTypeName(out_dtype),
                                          ": the last dimension must be ", ratio));
      std::vector<int64> d = shape.dims();
      d.pop_back();
      shape = pdk::Shape(std::move(d));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(shape), &out));
    if (input.TotalBytes()) std::memcpy(out->data(), input.data(), input.TotalBytes());
  }
};

// T and type each: float32/64, float16, bfloat16, int64, int32, int16, int8,
// uint8, uint16, uint32, uint64 (every pair). An int32 side lives in host
// memory, as every PDK int32 tensor does (docs/architecture.md, "int32 and the
// logical ops live in host memory"): Keras's argmax bitcasts its float input to
// int32 and masks the sign bit with BitwiseAnd, whose int32 kernel is on the
// host; a device-memory output cost a copy there every step.
#define PDK_BITCAST_TYPES_(m, A, HOST_A)                                                    \
  m(A, float, HOST_A) m(A, double, HOST_A) m(A, Eigen::half, HOST_A)                        \
      m(A, Eigen::bfloat16, HOST_A) m(A, int64, HOST_A)                                     \
          m(A, int32, HOST_A.HostMemory("output")) m(A, int16, HOST_A) m(A, int8, HOST_A)   \
              m(A, uint8, HOST_A) m(A, uint16, HOST_A) m(A, uint32, HOST_A) m(A, uint64, HOST_A)
#define PDK_REGISTER_BITCAST_(A, B, HOST)                       \
  REGISTER_KERNEL_BUILDER(Name("Bitcast")                       \
                              .Device(DEVICE_PDK)               \
                              .TypeConstraint<A>("T")           \
                              .TypeConstraint<B>("type") HOST,  \
                          BitcastOp);
#define PDK_REGISTER_BITCAST_FROM_(A, HOST_A) PDK_BITCAST_TYPES_(PDK_REGISTER_BITCAST_, A, HOST_A)
PDK_REGISTER_BITCAST_FROM_(float, )
PDK_REGISTER_BITCAST_FROM_(double, )
PDK_REGISTER_BITCAST_FROM_(Eigen::half, )
PDK_REGISTER_BITCAST_FROM_(Eigen::bfloat16, )
PDK_REGISTER_BITCAST_FROM_(int64, )
PDK_REGISTER_BITCAST_FROM_(int32, .HostMemory("input"))
PDK_REGISTER_BITCAST_FROM_(int16, )
PDK_REGISTER_BITCAST_FROM_(int8, )
PDK_REGISTER_BITCAST_FROM_(uint8, )
PDK_REGISTER_BITCAST_FROM_(uint16, )
PDK_REGISTER_BITCAST_FROM_(uint32, )
PDK_REGISTER_BITCAST_FROM_(uint64, )
#undef PDK_REGISTER_BITCAST_FROM_
#undef PDK_REGISTER_BITCAST_
#undef PDK_BITCAST_TYPES_

}  // namespace
}  // namespace tensorflow
