// Softmax and LogSoftmax on OPENCL (cl/softmax.cl): float logits of rank >= 1,
// normalized over the last axis; output of the input's shape (the input is
// forwarded when it can be). Formulas: TensorFlow's softmax_op_functor.h
// (shifted by the row max; Softmax multiplies by the reciprocal of the sum).
#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;

// Rows of at least kWideRow logits get a work-group of kGroup work-items each.
constexpr int64 kWideRow = 256;
constexpr size_t kGroup = 64;

template <bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    OP_REQUIRES(ctx, logits.dims() >= 1,
                errors::InvalidArgument("logits must have >= 1 dimension, got ",
                                        logits.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, logits.shape(), &out));
    const int64 depth = logits.dim_size(logits.dims() - 1);
    if (logits.NumElements() == 0) return;
    const int64 rows = logits.NumElements() / depth;
    if (depth >= kWideRow) {
      // A work-group per row (tree reductions in local memory).
      OP_REQUIRES_OK(ctx, Enqueue(ctx, "rdc_softmax_wg_f32", static_cast<uint64_t>(rows) * kGroup,
                                  {logits, *out, Arg::I64(rows), Arg::I64(depth),
                                   Arg::I32(kLog ? 1 : 0), Arg::Local(kGroup * sizeof(float))},
                                  kGroup));
      return;
    }
    OP_REQUIRES_OK(ctx, Enqueue(ctx, "rdc_softmax_f32", rows,
                                {logits, *out, Arg::I64(rows), Arg::I64(depth),
                                 Arg::I32(kLog ? 1 : 0)}));
  }
};

REGISTER_KERNEL_BUILDER(Name("Softmax").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        SoftmaxOp<false>);
REGISTER_KERNEL_BUILDER(Name("LogSoftmax").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        SoftmaxOp<true>);

}  // namespace tensorflow
