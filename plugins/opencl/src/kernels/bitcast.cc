// Bitcast on OPENCL: any T / type pair the op allows (no type constraints,
// no HostMemory arguments: TensorFlow's GPU registration is the same, so int32
// sides stay in device memory too). Keras uses float32 -> int32 (signbit).
//
// Shapes follow TensorFlow's BitcastOp (tensorflow/c/kernels/bitcast_op.cc and
// Tensor::BitcastFrom): same element size: same shape; a larger input element:
// one more last dim of size sizeof(T) / sizeof(type); a smaller one: the last
// dim must equal sizeof(type) / sizeof(T) and is dropped, else
// InvalidArgument "Cannot bitcast from <T> to <type>" (the dtype enums as
// numbers, as TensorFlow's CPU kernel prints them).
//
// The output is a new tensor of the new dtype and shape holding a
// device-to-device copy of the input's bytes (the kit's set_output shares a
// buffer only under the same dtype).
#include <algorithm>

#include "launch.h"

namespace tensorflow {

namespace {

class BitcastOp : public OpKernel {
 public:
  explicit BitcastOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("T", &in_type_));
    OP_REQUIRES_OK(c, c->GetAttr("type", &out_type_));
    in_size_ = DataTypeSize(in_type_);
    out_size_ = DataTypeSize(out_type_);
    OP_REQUIRES(c,
                in_size_ > 0 && out_size_ > 0 &&
                    std::max(in_size_, out_size_) % std::min(in_size_, out_size_) == 0,
                errors::InvalidArgument("cannot convert between datatype ",
                                        static_cast<int>(in_type_), " and ",
                                        static_cast<int>(out_type_)));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int rank = in.dims();
    OP_REQUIRES(ctx,
                in_size_ >= out_size_ ||
                    (rank > 0 && in.dim_size(rank - 1) == out_size_ / in_size_),
                errors::InvalidArgument("Cannot bitcast from ", static_cast<int>(in_type_),
                                        " to ", static_cast<int>(out_type_)));
    TensorShape shape;
    const int keep = out_size_ > in_size_ ? rank - 1 : rank;
    for (int d = 0; d < keep; ++d) shape.AddDim(in.dim_size(d));
    if (out_size_ < in_size_) shape.AddDim(in_size_ / out_size_);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    OP_REQUIRES_OK(ctx, pdk_opencl::CopyTensor(ctx, in, out));
  }

 private:
  DataType in_type_ = DT_INVALID, out_type_ = DT_INVALID;
  int in_size_ = 0, out_size_ = 0;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("Bitcast").Device(DEVICE_OPENCL), BitcastOp);

}  // namespace tensorflow
