// AssignAddVariableOp and AssignSubVariableOp on OPENCL.
//
// TensorFlow's own kernels for these ops on a pluggable device
// (DEVICE_DEFAULT, resource_variable_ops.cc) add on the host, through the
// variable's buffer: on OPENCL that buffer is a device address, and the host
// add would fault. These registrations take their place for every dtype.
// Inside a tf.function the plugin's graph optimizer (graph.cc) has already
// rewritten each into ReadVariableOp + AddV2/Sub + AssignVariableOp, which
// runs on the device; eagerly, tensorflow_pdk_opencl's hook
// (python/tensorflow_pdk_opencl/_hooks.py) does the same in Python. What
// still reaches this kernel (a graph whose optimizer was switched off) fails
// with a clear error instead of a crash: a plugin kernel cannot reach a
// variable's buffer in TensorFlow 2.20 and 2.21, which do not export
// kernels_experimental.h (tensorflow issue 126374).
#include "launch.h"

namespace tensorflow {

class UnrewrittenAssignUpdateOp : public OpKernel {
 public:
  explicit UnrewrittenAssignUpdateOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    ctx->CtxFailure(errors::Unimplemented(
        type_string(), " on OPENCL runs as ReadVariableOp + ",
        type_string() == "AssignAddVariableOp" ? "AddV2" : "Sub",
        " + AssignVariableOp: the OPENCL graph optimizer rewrites it in a tf.function and "
        "tensorflow_pdk_opencl rewrites eager calls, but this node (", name(),
        ") reached the device unrewritten (was the plugin's graph optimizer switched off?)"));
  }
};

#define PDK_OPENCL_ASSIGN_UPDATE(T)                                                       \
  REGISTER_KERNEL_BUILDER(Name("AssignAddVariableOp")                                     \
                              .Device(DEVICE_OPENCL)                                      \
                              .HostMemory("resource")                                     \
                              .TypeConstraint<T>("dtype"),                                \
                          UnrewrittenAssignUpdateOp);                                     \
  REGISTER_KERNEL_BUILDER(Name("AssignSubVariableOp")                                     \
                              .Device(DEVICE_OPENCL)                                      \
                              .HostMemory("resource")                                     \
                              .TypeConstraint<T>("dtype"),                                \
                          UnrewrittenAssignUpdateOp);
PDK_OPENCL_ASSIGN_UPDATE(float)
PDK_OPENCL_ASSIGN_UPDATE(double)
PDK_OPENCL_ASSIGN_UPDATE(Eigen::half)
PDK_OPENCL_ASSIGN_UPDATE(Eigen::bfloat16)
PDK_OPENCL_ASSIGN_UPDATE(int64)
PDK_OPENCL_ASSIGN_UPDATE(int8)
PDK_OPENCL_ASSIGN_UPDATE(int16)
PDK_OPENCL_ASSIGN_UPDATE(uint8)
#undef PDK_OPENCL_ASSIGN_UPDATE

}  // namespace tensorflow
