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
// uint8, uint16, uint32, uint64 (every pair).
#define PDK_BITCAST_TYPES_(m, A)                                                           \
  m(A, float) m(A, double) m(A, Eigen::half) m(A, Eigen::bfloat16) m(A, int64) m(A, int32) \
      m(A, int16) m(A, int8) m(A, uint8) m(A, uint16) m(A, uint32) m(A, uint64)
#define PDK_REGISTER_BITCAST_(A, B)                      \
  REGISTER_KERNEL_BUILDER(Name("Bitcast")                \
                              .Device(DEVICE_PDK)        \
                              .TypeConstraint<A>("T")    \
                              .TypeConstraint<B>("type"), \
                          BitcastOp);
#define PDK_REGISTER_BITCAST_FROM_(A) PDK_BITCAST_TYPES_(PDK_REGISTER_BITCAST_, A)
PDK_REGISTER_BITCAST_FROM_(float)
PDK_REGISTER_BITCAST_FROM_(double)
PDK_REGISTER_BITCAST_FROM_(Eigen::half)
PDK_REGISTER_BITCAST_FROM_(Eigen::bfloat16)
PDK_REGISTER_BITCAST_FROM_(int64)
PDK_REGISTER_BITCAST_FROM_(int32)
PDK_REGISTER_BITCAST_FROM_(int16)
PDK_REGISTER_BITCAST_FROM_(int8)
PDK_REGISTER_BITCAST_FROM_(uint8)
PDK_REGISTER_BITCAST_FROM_(uint16)
PDK_REGISTER_BITCAST_FROM_(uint32)
PDK_REGISTER_BITCAST_FROM_(uint64)
#undef PDK_REGISTER_BITCAST_FROM_
#undef PDK_REGISTER_BITCAST_
#undef PDK_BITCAST_TYPES_

}  // namespace
}  // namespace tensorflow
