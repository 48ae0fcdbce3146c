// BitwiseAnd, BitwiseOr, BitwiseXor int32 on OPENCL: every argument in host
// memory, computed on the host (the int32 convention of this plugin: int32
// tensors of the device live in host memory; TensorFlow has no DEVICE_DEFAULT
// kernel for these). Keras needs BitwiseAnd int32 after Bitcast
// float32 -> int32 (its signbit, used by keras.ops.argmax).
//
// Shapes: TensorFlow's BCast (cwise_common.h's MakeBroadcast); incompatible
// shapes: InvalidArgument "Incompatible shapes: [2,3] vs. [4]"; more than 5
// dims after collapsing: Unimplemented, as TensorFlow's BinaryOp. Formula:
// z = x & y / x | y / x ^ y element-wise.
#include <vector>

#include "cwise_common.h"
#include "launch.h"

namespace tensorflow {

namespace {

namespace cw = ::pdk_opencl::cwise;

enum class BitOp { kAnd, kOr, kXor };

template <BitOp B>
class BitwiseInt32Op : public OpKernel {
 public:
  explicit BitwiseInt32Op(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const cw::Broadcast bc = cw::MakeBroadcast({&a.shape(), &b.shape()});
    OP_REQUIRES(ctx, bc.valid,
                errors::InvalidArgument("Incompatible shapes: ", a.shape().DebugString(),
                                        " vs. ", b.shape().DebugString()));
    OP_REQUIRES(ctx, bc.rank <= 5,
                errors::Unimplemented("Broadcast between ", a.shape().DebugString(), " and ",
                                      b.shape().DebugString(), " is not supported yet."));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(bc.out_shape), &out));
    const int64 n = out->NumElements();
    if (n == 0) return;
    const int32* x = static_cast<const int32*>(a.data());
    const int32* y = static_cast<const int32*>(b.data());
    int32* z = static_cast<int32*>(out->data());
    // Odometer over the collapsed view (8 right-aligned slots).
    int64 c[cw::kMaxRank] = {};
    int64 xi = 0, yi = 0;
    for (int64 i = 0; i < n; ++i) {
      switch (B) {
        case BitOp::kAnd: z[i] = x[xi] & y[yi]; break;
        case BitOp::kOr: z[i] = x[xi] | y[yi]; break;
        case BitOp::kXor: z[i] = x[xi] ^ y[yi]; break;
      }
      for (int k = cw::kMaxRank - 1; k >= 0; --k) {
        xi += bc.strides[0][k];
        yi += bc.strides[1][k];
        if (++c[k] < bc.dims[k]) break;
        xi -= bc.strides[0][k] * bc.dims[k];
        yi -= bc.strides[1][k] * bc.dims[k];
        c[k] = 0;
      }
    }
  }
};

}  // namespace

#define PDK_REGISTER_BITWISE_I32(op, B)       \
  REGISTER_KERNEL_BUILDER(Name(op)            \
                              .Device(DEVICE_OPENCL) \
                              .TypeConstraint<int32>("T") \
                              .HostMemory("x")        \
                              .HostMemory("y")        \
                              .HostMemory("z"),       \
                          BitwiseInt32Op<B>);
PDK_REGISTER_BITWISE_I32("BitwiseAnd", BitOp::kAnd)
PDK_REGISTER_BITWISE_I32("BitwiseOr", BitOp::kOr)
PDK_REGISTER_BITWISE_I32("BitwiseXor", BitOp::kXor)
#undef PDK_REGISTER_BITWISE_I32

}  // namespace tensorflow
