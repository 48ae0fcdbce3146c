// Cast on OPENCL (cl/cwise_cast.cl): SrcT, DstT in {float32, int64, bool}, any
// shape. SrcT == DstT forwards the input. int32 is left to TensorFlow (int32
// tensors of non-CPU devices live in host memory). Truncate only matters for
// narrowing float casts, which are not registered here.
#include <string>

#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;

namespace {
const char* CastSuffix(DataType t) {
  switch (t) {
    case DT_FLOAT: return "f32";
    case DT_INT64: return "i64";
    case DT_BOOL: return "b8";
    default: return "unsupported";
  }
}
}  // namespace

class CwCastOp : public OpKernel {
 public:
  explicit CwCastOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("SrcT", &src_));
    OP_REQUIRES_OK(c, c->GetAttr("DstT", &dst_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (src_ == dst_) {
      ctx->set_output(0, x);
      return;
    }
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const int64 n = x.NumElements();
    const std::string name =
        std::string("cw_cast_") + CastSuffix(src_) + "_" + CastSuffix(dst_);
    OP_REQUIRES_OK(ctx, Enqueue(ctx, name, n, {x, *y, Arg::I64(n)}));
  }

 private:
  DataType src_ = DT_INVALID, dst_ = DT_INVALID;
};

#define CW_REGISTER_CAST(S, D)                                                      \
  REGISTER_KERNEL_BUILDER(                                                          \
      Name("Cast").Device(DEVICE_OPENCL).TypeConstraint<S>("SrcT").TypeConstraint<D>("DstT"), \
      CwCastOp);
#define CW_REGISTER_CAST_FROM(S) \
  CW_REGISTER_CAST(S, float) CW_REGISTER_CAST(S, int64) CW_REGISTER_CAST(S, bool)
CW_REGISTER_CAST_FROM(float)
CW_REGISTER_CAST_FROM(int64)
CW_REGISTER_CAST_FROM(bool)
#undef CW_REGISTER_CAST_FROM
#undef CW_REGISTER_CAST

}  // namespace tensorflow
