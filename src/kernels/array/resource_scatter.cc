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
#include "kernels/array/scatter_types.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

class ResourceScatterOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    return pdk::Unimplemented(
        ctx.op(), " on PDK runs only inside a tf.function, where PDK's graph optimizer rewrites "
        "it to ReadVariableOp + TensorScatter* + AssignVariableOp; TensorFlow's C API gives a "
        "plugin no access to a variable's buffer in eager mode (kernels_experimental.h is not "
        "exported, tensorflow issue 126374). Wrap the update in tf.function.");
  }
};

}  // namespace

PDK_REGISTER_KERNELS(ResourceScatter, r) {
  for (const char* op : {"ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterUpdate",
                         "ResourceScatterMin", "ResourceScatterMax"}) {
    pdk::ForEachType(ScatterArithmeticTypes{}, [&](auto t) {
      pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
        r.Add(pdk::KernelDef<ResourceScatterOp>(op)
                  .Type("dtype", t)
                  .Type("Tindices", i)
                  .HostMemory("resource"));
      });
    });
  }
}

}  // namespace pdk_kernels
