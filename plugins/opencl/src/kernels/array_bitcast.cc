// Bitcast on OPENCL: the bytes of the input under another dtype (TensorFlow's
// bitcast_op.cc: same element size -> same shape; smaller output elements ->
// a last dim of in_size / out_size added; larger -> the last dim, which must
// be out_size / in_size, removed). T and type among float, int64, uint32,
// uint8, int8, int32; int32 tensors are in host memory (TensorFlow keeps a
// device's int32 tensors there), so float <-> int32 is a blocking copy between
// device and host, the others a copy on the device (TensorFlow aliases the
// buffer; the kit cannot change a tensor's dtype). Error wording: TensorFlow's.
#include <algorithm>

#include "array_util.h"

namespace tensorflow {

class BitcastOp : public OpKernel {
 public:
  explicit BitcastOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("T", &in_type_));
    OP_REQUIRES_OK(c, c->GetAttr("type", &out_type_));
    in_size_ = DataTypeSize(in_type_);
    out_size_ = DataTypeSize(out_type_);
    OP_REQUIRES(c, in_size_ > 0 && out_size_ > 0 &&
                       std::max(in_size_, out_size_) % std::min(in_size_, out_size_) == 0,
                errors::InvalidArgument("cannot convert between datatype ",
                                        static_cast<int>(in_type_), " and ",
                                        static_cast<int>(out_type_)));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const int dims = input.dims();
    OP_REQUIRES(c,
                in_size_ >= out_size_ ||
                    (dims > 0 && input.dim_size(dims - 1) == out_size_ / in_size_),
                errors::InvalidArgument("Cannot bitcast from ", static_cast<int>(in_type_),
                                        " to ", static_cast<int>(out_type_)));
    TensorShape shape(input.shape());
    if (out_size_ < in_size_)
      shape.AddDim(in_size_ / out_size_);
    else if (out_size_ > in_size_)
      shape.RemoveDim(dims - 1);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    OP_REQUIRES_OK(c, pdk_opencl::array::CopyElements(c, input, out));
  }

 private:
  DataType in_type_ = DT_INVALID, out_type_ = DT_INVALID;
  int in_size_ = 0, out_size_ = 0;
};

// int32 on either side: that side in host memory.
#define PDK_REGISTER_PAIR(A, B)                                                           \
  REGISTER_KERNEL_BUILDER(                                                                \
      Name("Bitcast").Device(DEVICE_OPENCL).TypeConstraint<A>("T").TypeConstraint<B>("type"), \
      BitcastOp);
#define PDK_REGISTER_FROM(A)                         \
  PDK_REGISTER_PAIR(A, float)                        \
  PDK_REGISTER_PAIR(A, ::tensorflow::int64)          \
  PDK_REGISTER_PAIR(A, uint32)                       \
  PDK_REGISTER_PAIR(A, uint8)                        \
  PDK_REGISTER_PAIR(A, int8)                         \
  REGISTER_KERNEL_BUILDER(Name("Bitcast")            \
                              .Device(DEVICE_OPENCL) \
                              .TypeConstraint<A>("T")           \
                              .TypeConstraint<int32>("type")    \
                              .HostMemory("output"),            \
                          BitcastOp);                           \
  REGISTER_KERNEL_BUILDER(Name("Bitcast")                       \
                              .Device(DEVICE_OPENCL)            \
                              .TypeConstraint<int32>("T")       \
                              .TypeConstraint<A>("type")        \
                              .HostMemory("input"),             \
                          BitcastOp);
PDK_REGISTER_FROM(float)
PDK_REGISTER_FROM(::tensorflow::int64)
PDK_REGISTER_FROM(uint32)
PDK_REGISTER_FROM(uint8)
PDK_REGISTER_FROM(int8)
#undef PDK_REGISTER_FROM
#undef PDK_REGISTER_PAIR
REGISTER_KERNEL_BUILDER(Name("Bitcast")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .TypeConstraint<int32>("type")
                            .HostMemory("input")
                            .HostMemory("output"),
                        BitcastOp);

}  // namespace tensorflow
