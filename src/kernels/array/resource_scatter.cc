// ResourceScatterAdd, ResourceScatterSub, ResourceScatterUpdate,
// ResourceScatterMin, ResourceScatterMax (tensorflow/core/ops/
// resource_variable_ops.cc): var[indices, ...] (op)= updates.
//
// Registered so that TensorFlow's placer can put these ops beside a variable
// that lives on PDK (Keras applies Embedding gradients with them); the kernels
// never compute. Inside a tf.function PDK's graph optimizer replaces every such
// node placed on PDK with ReadVariableOp + TensorScatter* + AssignVariableOp
// (src/graph/rewrites/resource_scatter.cc) before TensorFlow creates kernels.
// Called eagerly (or with Grappler switched off), the kernel fails with
// UnimplementedError saying so: TensorFlow 2.20 / 2.21 give a plugin no access
// to a variable's buffer (kernels_experimental.h's TF_GetInputTensorFromVariable
// is not exported, tensorflow issue 126374).
// Dtypes: as PDK's TensorScatter* (src/kernels/array/tensor_scatter.cc);
// Tindices int32, int64.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <type_traits>

#include "kernels/array/scatter_types.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

class ResourceScatterOp : public OpKernel {
 public:
  explicit ResourceScatterOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    ctx->CtxFailure(errors::Unimplemented(
        type_string(), " on PDK runs only inside a tf.function, where PDK's graph optimizer "
        "rewrites it to ReadVariableOp + TensorScatter* + AssignVariableOp; TensorFlow's C API "
        "gives a plugin no access to a variable's buffer in eager mode (kernels_experimental.h "
        "is not exported, tensorflow issue 126374). Wrap the update in tf.function."));
  }
};

// dtype: pdk_kernels::ScatterArithmeticTypes (the graph rewrite relies on
// TensorScatter* having the same list); Tindices int32, int64.
static_assert(std::is_same_v<pdk_kernels::ScatterArithmeticTypes,
                             pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32,
                                           int64>>,
              "the registrations below must list pdk_kernels::ScatterArithmeticTypes");
#define PDK_REGISTER_RESOURCE_SCATTER_(op, T, Index)     \
  REGISTER_KERNEL_BUILDER(Name(op)                       \
                              .Device(DEVICE_PDK)        \
                              .TypeConstraint<T>("dtype") \
                              .TypeConstraint<Index>("Tindices") \
                              .HostMemory("resource"),   \
                          ResourceScatterOp)
#define PDK_REGISTER_RESOURCE_SCATTER_INDEX_(op, T) \
  PDK_REGISTER_RESOURCE_SCATTER_(op, T, int32);     \
  PDK_REGISTER_RESOURCE_SCATTER_(op, T, int64)
#define PDK_REGISTER_RESOURCE_SCATTER_TYPES_(op)         \
  PDK_REGISTER_RESOURCE_SCATTER_INDEX_(op, float);       \
  PDK_REGISTER_RESOURCE_SCATTER_INDEX_(op, double);      \
  PDK_REGISTER_RESOURCE_SCATTER_INDEX_(op, Eigen::half); \
  PDK_REGISTER_RESOURCE_SCATTER_INDEX_(op, Eigen::bfloat16); \
  PDK_REGISTER_RESOURCE_SCATTER_INDEX_(op, int32);       \
  PDK_REGISTER_RESOURCE_SCATTER_INDEX_(op, int64)
PDK_REGISTER_RESOURCE_SCATTER_TYPES_("ResourceScatterAdd");
PDK_REGISTER_RESOURCE_SCATTER_TYPES_("ResourceScatterSub");
PDK_REGISTER_RESOURCE_SCATTER_TYPES_("ResourceScatterUpdate");
PDK_REGISTER_RESOURCE_SCATTER_TYPES_("ResourceScatterMin");
PDK_REGISTER_RESOURCE_SCATTER_TYPES_("ResourceScatterMax");
#undef PDK_REGISTER_RESOURCE_SCATTER_TYPES_
#undef PDK_REGISTER_RESOURCE_SCATTER_INDEX_
#undef PDK_REGISTER_RESOURCE_SCATTER_

}  // namespace
}  // namespace tensorflow
