// _OpenclHostView: a probe for tests/test_runtime.py. It reads its input on
// the host with flat<float>() — what a kernel must never do on a device
// whose memory the host cannot read — so that the test can check the kit
// turns that into an error of the launch instead of a read of a device
// address. Not for use; its name starts with an underscore as TensorFlow's
// internal ops do.
#include "launch.h"

namespace tensorflow {

REGISTER_OP("_OpenclHostView")
    .Input("x: float")
    .Output("y: float")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(0));
      return OkStatus();
    });

class OpenclHostViewOp : public OpKernel {
 public:
  explicit OpenclHostViewOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    y->flat<float>() = x.flat<float>();  // the error under test
  }
};
REGISTER_KERNEL_BUILDER(Name("_OpenclHostView").Device(DEVICE_OPENCL), OpenclHostViewOp);

}  // namespace tensorflow
