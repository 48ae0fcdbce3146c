// ResourceScatter{Add,Sub,Update,Min,Max} on PDK -> read, TensorScatter*, assign.
//
//   ResourceScatterSub(var, indices, updates)        (no outputs)
//     =>  read = ReadVariableOp(var)                        [+ the original's control inputs]
//         idx  = ExpandDims(indices, Const(-1))             [..., 1]
//         new  = TensorScatterSub(read, idx, updates)       (PDK kernel)
//         <name> = AssignVariableOp(var, new)               (same name: "^name" still works)
//
// Why: Keras 3 applies a sparse gradient (IndexedSlices, e.g. an Embedding's)
// with variable.scatter_sub / scatter_add / scatter_update (RMSprop, SGD, ...).
// TensorFlow runs those ResourceScatter* kernels on its CPU and GPU only, and a
// plugin cannot reach a variable's buffer through the C API of TF 2.20/2.21
// (kernels_experimental.h is not exported, tensorflow issue 126374), so PDK
// registers ResourceScatter* kernels that only satisfy the placer
// (src/kernels/array/resource_scatter.cc; they fail if ever run), and this
// rewrite replaces the node, in every graph, with ops that run on PDK:
// TensorFlow's DEVICE_DEFAULT ReadVariableOp / AssignVariableOp (which touch
// PDK memory from the host; PDK's streams are synchronous) and PDK's
// TensorScatter* kernels, which reuse the read's buffer when they can.
// Semantics (tensorflow/core/ops/resource_variable_ops.cc): updates has the
// shape indices.shape + var.shape[1:] (TensorScatter*'s contract with
// idx = indices[..., None]); repeated indices accumulate, as in TF. A scalar
// `updates` (allowed by ResourceScatter*) makes TensorScatter* fail with its
// shape error. The cost is one read and one write of the whole variable
// instead of the touched rows.
// Fires for nodes on PDK whose dtype PDK's TensorScatter* supports (checked
// with kernel_available); always on: needed to run. Idempotent.
#include <string>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

const char* TensorScatterFor(const std::string& op) {
  if (op == "ResourceScatterAdd") return "TensorScatterAdd";
  if (op == "ResourceScatterSub") return "TensorScatterSub";
  if (op == "ResourceScatterUpdate") return "TensorScatterUpdate";
  if (op == "ResourceScatterMin") return "TensorScatterMin";
  if (op == "ResourceScatterMax") return "TensorScatterMax";
  return nullptr;
}

}  // namespace

void RewriteResourceScatter(GraphDef* graph, const RewriteContext& ctx) {
  std::vector<NodeDef> added;
  for (NodeDef& n : graph->node) {
    const char* scatter = TensorScatterFor(n.op);
    if (scatter == nullptr || !ctx.on_device(n) || !ctx.can_emit(scatter)) continue;
    std::vector<std::string> regular, control;
    for (const std::string& in : n.input) (in.rfind('^', 0) == 0 ? control : regular).push_back(in);
    if (regular.size() != 3) continue;
    const int dtype = n.TypeAttr("dtype"), tindices = n.TypeAttr("Tindices");
    if (dtype == DT_INVALID || tindices == DT_INVALID) continue;
    const std::string base = n.name + "/pdk_scatter";
    std::vector<std::string> read_inputs{regular[0]};
    read_inputs.insert(read_inputs.end(), control.begin(), control.end());
    added.push_back(MakeNode(base + "/read", "ReadVariableOp", n.device, read_inputs,
                             {{"dtype", AttrValue::Type(dtype)}}));
    // The Const waits for the read: inside a loop body that keeps it in the
    // loop's frame, as TensorFlow's own graph construction does.
    added.push_back(MakeNode(base + "/axis", "Const", n.device, {"^" + base + "/read"},
                             {{"dtype", AttrValue::Type(DT_INT32)},
                              {"value", AttrValue::Int32Scalar(-1)}}));
    added.push_back(MakeNode(base + "/indices", "ExpandDims", n.device,
                             {regular[1], base + "/axis"},
                             {{"T", AttrValue::Type(tindices)},
                              {"Tdim", AttrValue::Type(DT_INT32)}}));
    added.push_back(MakeNode(base + "/new", scatter, n.device,
                             {base + "/read", base + "/indices", regular[2]},
                             {{"T", AttrValue::Type(dtype)},
                              {"Tindices", AttrValue::Type(tindices)}}));
    ctx.Fired(n.op + "->" + scatter, "'" + n.name + "'", {n.name});
    n.op = "AssignVariableOp";
    n.input = {regular[0], base + "/new"};
    n.attr.erase("Tindices");
    n.attr["validate_shape"] = AttrValue::Bool(false);
  }
  for (NodeDef& a : added) graph->node.push_back(std::move(a));
}

}  // namespace pdk_graph
