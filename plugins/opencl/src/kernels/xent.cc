// Softmax cross-entropy on OPENCL (cl/xent.cl).
//
// SparseSoftmaxCrossEntropyWithLogits: features float [batch, depth], labels
// int32 or int64 [batch] (device memory, as TensorFlow's GPU kernel) ->
// loss [batch], backprop [batch, depth]. Shape errors have TensorFlow's texts.
// A label outside [0, depth) is not checked on the host (that would need a
// copy back and a sync): as TensorFlow's GPU kernel, that row's loss and
// backprop are NaN. (TensorFlow's CPU kernel raises InvalidArgument "Received
// a label value of ... which is outside the valid range of [0, depth)".)
//
// SoftmaxCrossEntropyWithLogits: features and labels float, broadcast against
// each other (TensorFlow's BCast rules) to a 2-D [batch, depth] -> loss
// [batch], backprop [batch, depth].
//
// Formulas: TensorFlow's xent_op.h and sparse_xent_op.h (shift by the row max,
// loss = sum(labels * (log(sum(exp(shifted))) - shifted)),
// backprop = exp(shifted) / sum(exp(shifted)) - labels).
#include <algorithm>
#include <vector>

#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;
using pdk_opencl::KernelName;

class SparseSoftmaxXentOp : public OpKernel {
 public:
  explicit SparseSoftmaxXentOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, logits.dims() == 2,
                errors::InvalidArgument("logits must be 2-D, but got shape ",
                                        logits.shape().DebugString()));
    OP_REQUIRES(ctx, labels.dims() == 1,
                errors::InvalidArgument("labels must be 1-D, but got shape ",
                                        labels.shape().DebugString()));
    OP_REQUIRES(ctx, logits.dim_size(0) == labels.dim_size(0),
                errors::InvalidArgument(
                    "logits and labels must have the same first dimension, got logits shape ",
                    logits.shape().DebugString(), " and labels shape ",
                    labels.shape().DebugString()));
    OP_REQUIRES(ctx, logits.dim_size(1) > 0,
                errors::InvalidArgument("Must have at least one class, but got logits shape ",
                                        logits.shape().DebugString()));
    const int64 batch = logits.dim_size(0), depth = logits.dim_size(1);
    Tensor* loss = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 1, logits.shape(), &backprop));
    OP_REQUIRES_OK(ctx, Enqueue(ctx, KernelName("rdc_sparse_xent", labels.dtype()), batch,
                                {logits, labels, *loss, *backprop, Arg::I64(batch),
                                 Arg::I64(depth)}));
  }
};

class SoftmaxXentOp : public OpKernel {
 public:
  explicit SoftmaxXentOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    // Broadcast the two shapes (aligned on the right).
    const int rx = logits.dims(), rl = labels.dims();
    const int rank = std::max(rx, rl);
    std::vector<int64> out(rank), dx(rank, 1), dl(rank, 1);
    bool ok = true;
    for (int i = 0; i < rank; ++i) {
      const int ix = i - (rank - rx), il = i - (rank - rl);
      dx[i] = ix >= 0 ? logits.dim_size(ix) : 1;
      dl[i] = il >= 0 ? labels.dim_size(il) : 1;
      if (dx[i] == dl[i] || dl[i] == 1) {
        out[i] = dx[i];
      } else if (dx[i] == 1) {
        out[i] = dl[i];
      } else {
        ok = false;
      }
    }
    OP_REQUIRES(ctx, ok,
                errors::InvalidArgument("logits and labels must be broadcastable: logits_size=",
                                        logits.shape().DebugString(),
                                        " labels_size=", labels.shape().DebugString()));
    OP_REQUIRES(ctx, rank == 2,
                errors::InvalidArgument("logits and labels must be either 2-dimensional, or "
                                        "broadcasted to be 2-dimensional"));
    const int64 batch = out[0], depth = out[1];
    // Element strides of each operand in the [batch, depth] view; 0 where broadcast.
    auto strides = [&](const std::vector<int64>& d, int64* s0, int64* s1) {
      *s1 = d[1] == 1 && depth != 1 ? 0 : 1;
      *s0 = d[0] == 1 && batch != 1 ? 0 : d[1];
    };
    int64 xs0, xs1, ls0, ls1;
    strides(dx, &xs0, &xs1);
    strides(dl, &ls0, &ls1);
    const TensorShape shape({batch, depth});
    Tensor* loss = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    // Not forwarded from logits: the kernel reads them after writing backprop.
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, shape, &backprop));
    OP_REQUIRES_OK(ctx, Enqueue(ctx, "rdc_xent_f32", batch,
                                {logits, labels, *loss, *backprop, Arg::I64(batch),
                                 Arg::I64(depth), Arg::I64(xs0), Arg::I64(xs1), Arg::I64(ls0),
                                 Arg::I64(ls1)}));
  }
};

REGISTER_KERNEL_BUILDER(Name("SparseSoftmaxCrossEntropyWithLogits")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<float>("T")
                            .TypeConstraint<int32>("Tlabels"),
                        SparseSoftmaxXentOp);
REGISTER_KERNEL_BUILDER(Name("SparseSoftmaxCrossEntropyWithLogits")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<float>("T")
                            .TypeConstraint<int64>("Tlabels"),
                        SparseSoftmaxXentOp);
REGISTER_KERNEL_BUILDER(Name("SoftmaxCrossEntropyWithLogits")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<float>("T"),
                        SoftmaxXentOp);

}  // namespace tensorflow
