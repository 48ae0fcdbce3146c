// Identity, Snapshot, StopGradient: output 0 shares input 0's buffer.
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
#define PDK_REGISTER_IDENTITY_(op, T) \
  REGISTER_KERNEL_BUILDER(Name(op).Device(DEVICE_PDK).TypeConstraint<T>("T"), IdentityOp)
#define PDK_REGISTER_IDENTITY_INT32_(op)                 \
  REGISTER_KERNEL_BUILDER(Name(op)                       \
                              .Device(DEVICE_PDK)        \
                              .TypeConstraint<int32>("T") \
                              .HostMemory("input")       \
                              .HostMemory("output"),     \
                          IdentityOp)
#define PDK_REGISTER_IDENTITIES_(T)            \
  PDK_REGISTER_IDENTITY_("Identity", T);       \
  PDK_REGISTER_IDENTITY_("Snapshot", T);       \
  PDK_REGISTER_IDENTITY_("StopGradient", T);
PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(PDK_REGISTER_IDENTITIES_)
PDK_REGISTER_IDENTITY_INT32_("Identity");
PDK_REGISTER_IDENTITY_INT32_("Snapshot");
PDK_REGISTER_IDENTITY_INT32_("StopGradient");
#undef PDK_REGISTER_IDENTITIES_
#undef PDK_REGISTER_IDENTITY_INT32_
#undef PDK_REGISTER_IDENTITY_

}  // namespace
}  // namespace tensorflow
