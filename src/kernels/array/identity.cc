// Snapshot: output 0 shares input 0's buffer. Identity and StopGradient are
// TensorFlow's own DEVICE_DEFAULT kernels (src/kernels/tensorflow_default_kernels.h:
// they run every loop iteration, and TensorFlow's forward the buffer without a
// kernel C API round trip).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include "kernels/array/tf_array_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

class IdentityOp : public OpKernel {
 public:
  explicit IdentityOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

// The data-movement types (pdk_compute::DataMovementTypes); int32's input and
// output live in host memory (host memory: docs/architecture.md).
#define PDK_REGISTER_SNAPSHOT_(T) \
  REGISTER_KERNEL_BUILDER(Name("Snapshot").Device(DEVICE_PDK).TypeConstraint<T>("T"), IdentityOp);
PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(PDK_REGISTER_SNAPSHOT_)
REGISTER_KERNEL_BUILDER(Name("Snapshot")
                            .Device(DEVICE_PDK)
                            .TypeConstraint<int32>("T")
                            .HostMemory("input")
                            .HostMemory("output"),
                        IdentityOp);
#undef PDK_REGISTER_SNAPSHOT_

}  // namespace
}  // namespace tensorflow
