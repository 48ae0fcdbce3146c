// The OPENCL plugin's graph optimizer (the kit's pdk/graph_optimizer.h), on
// nodes placed on OPENCL:
//
// 1. Calls marked for XLA run without it (the kit's pdk::RunWithoutXla): XLA
//    has no OPENCL backend, and Keras 3 asks for XLA whenever a non-CPU device
//    is listed. Each function is named once per process on stderr.
// 2. Variable updates run on the device:
//
//   AssignAddVariableOp(v, x)  ->  AssignVariableOp(v, AddV2(ReadVariableOp(v), x))
//   AssignSubVariableOp(v, x)  ->  AssignVariableOp(v, Sub(ReadVariableOp(v), x))
//
// Why: TensorFlow's own kernels for AssignAdd/SubVariableOp on a pluggable
// device (DEVICE_DEFAULT) update the variable with host code, which cannot
// touch OPENCL memory, and the C API that would let a plugin update a
// variable in place (TF_AssignUpdateVariable) is missing from TensorFlow
// 2.20 and 2.21 (tensorflow issue 126374). The rewritten form runs the
// arithmetic on the device and swaps the variable's buffer. The rewritten
// node keeps its name, so control edges to it still order what follows; the
// read takes over its control inputs, so it still runs after what preceded
// the update (TensorFlow's automatic control dependencies order the ops of a
// tf.function that touch one variable). Keras's optimizers update their slots
// and weights with assign_add / assign_sub, so this is what a training step
// runs.
#include "graph.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "pdk/graph_optimizer.h"
#include "runtime.h"

namespace pdk_opencl {
namespace {

// The dtypes whose AddV2/Sub the plugin has kernels for.
bool Rewritable(int dtype) {
  return dtype == TF_FLOAT || dtype == TF_INT64;
}

pdk::Status SplitVariableUpdates(pdk::GraphDef& graph, const pdk::OptimizerContext& ctx) {
  std::vector<pdk::NodeDef> added;
  for (pdk::NodeDef& n : graph.node) {
    const bool add = n.op == "AssignAddVariableOp";
    if (!(add || n.op == "AssignSubVariableOp") || !ctx.on_device(n) || n.input.size() < 2)
      continue;
    const int dtype = n.TypeAttr("dtype");
    if (!Rewritable(dtype)) continue;

    pdk::NodeDef read;
    read.name = n.name + "/pdk_opencl_read";
    read.op = "ReadVariableOp";
    read.device = n.device;
    read.input.push_back(n.input[0]);
    for (size_t i = 2; i < n.input.size(); ++i) read.input.push_back(n.input[i]);  // ^controls
    read.attr["dtype"] = pdk::AttrValue::Type(dtype);

    pdk::NodeDef update;
    update.name = n.name + "/pdk_opencl_update";
    update.op = add ? "AddV2" : "Sub";
    update.device = n.device;
    update.input = {read.name, n.input[1]};
    update.attr["T"] = pdk::AttrValue::Type(dtype);

    n.op = "AssignVariableOp";
    n.input = {n.input[0], update.name};
    n.attr.clear();
    n.attr["dtype"] = pdk::AttrValue::Type(dtype);
    n.attr["validate_shape"] = pdk::AttrValue::Bool(false);
    added.push_back(std::move(read));
    added.push_back(std::move(update));
  }
  for (auto& a : added) graph.node.push_back(std::move(a));
  return pdk::Status::OK();
}

pdk::Status Optimize(pdk::GraphDef& graph, const pdk::OptimizerContext& ctx) {
  static std::mutex mu;
  static std::set<std::string> noticed;
  pdk::RunWithoutXla(graph, ctx, [&](pdk::NodeDef&, const std::string& function) {
    const std::string name = pdk::PythonFunctionName(function);
    std::lock_guard<std::mutex> l(mu);
    if (noticed.insert(name).second)
      std::fprintf(stderr,
                   "PDK OpenCL: %s asked for XLA (jit_compile=True); XLA has no OPENCL backend, "
                   "running it with the OPENCL kernels\n",
                   name.c_str());
  });
  return SplitVariableUpdates(graph, ctx);
}

}  // namespace

void InitGraph(TP_OptimizerRegistrationParams* params, TF_Status* status) {
  pdk::RegisterGraphOptimizer(params, kDeviceType, Optimize, status);
}

}  // namespace pdk_opencl
