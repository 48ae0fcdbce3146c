// Identity between two PDK nodes -> nothing: its consumers read its input.
//
//      x (on PDK)                     x
//      |                              |
//   Identity (same PDK device)   =>  consumers   (+ the Identity's control
//      |                                            inputs, "^identity" -> "^x")
//   consumers (same PDK device)
//
// Fires when
// - the Identity is on a PDK device, has one regular input, and its producer
//   is on exactly the same device (an Identity across devices is a copy the
//   graph asked for);
// - T is no reference or resource type, and the producer is no variable op
//   (an Identity of a handle or ref pins a value, not a tensor);
// - neither the producer nor any consumer is a control-flow op (Switch,
//   Merge, Enter, Exit, NextIteration, LoopCond): the Identities a lowered
//   While/cond puts after Switch or before NextIteration carry its frame
//   structure;
// - it has a consumer, every consumer (regular or control) is on the same
//   device, only output 0 is read, and the Identity is not a fetch, feed or
//   kept node;
// - it has no control input if it feeds a function's _Retval (the Identity
//   then orders the return value after those inputs; TensorFlow's dependency
//   optimizer keeps these as well).
// Each consumer gets the Identity's control inputs, so nothing runs earlier
// than before; a control input "^identity" becomes "^x's producer". Chains of
// Identities go in one pass. Idempotent: afterwards no Identity matches.
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/bypass.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

bool IsVariableOp(const std::string& op) {
  return op == "VarHandleOp" || op == "VariableV2" || op == "Variable" ||
         op == "_VarHandlesOp" || op == "TemporaryVariable";
}

// Reference types are DT_FLOAT_REF = 101 ... (types.proto: value + 100).
bool IsPlainTensorType(int dtype) {
  return dtype != DT_INVALID && dtype != DT_RESOURCE && dtype < 100;
}

}  // namespace

void RemoveIdentities(GraphDef* graph, const RewriteContext& ctx) {
  GraphView view(*graph);
  if (view.has_duplicate_names()) return;
  std::unordered_map<std::string, Bypass> bypass;
  std::vector<std::string> order;  // to report in graph order
  for (const NodeDef& id : graph->node) {
    if (id.op != "Identity" || !ctx.on_device(id)) continue;
    if (!IsPlainTensorType(id.TypeAttr("T")) || view.num_regular_inputs(id) != 1) continue;
    int port = 0;
    const NodeDef* producer = view.regular_fanin(id, 0, &port);
    if (producer == nullptr || producer->device != id.device) continue;
    if (IsControlFlowOp(producer->op) || IsVariableOp(producer->op)) continue;
    if (!ConsumersAllowBypass(view, id, id.device, ctx.optimizer.preserve)) continue;
    // One consumer at least: an unread Identity is a graph output (or dead).
    if (view.num_regular_fanouts(id) == 0 && view.control_fanouts(id).empty()) continue;
    // An Identity with control inputs that feeds a function's return value
    // orders the return after those inputs (TensorFlow's dependency optimizer
    // keeps these too): it stays.
    bool feeds_retval = false;
    for (const Fanout& f : view.regular_fanouts(id, 0))
      feeds_retval = feeds_retval || f.consumer->op == "_Retval" ||
                     f.consumer->op == "_DeviceRetval";
    if (feeds_retval && id.input.size() > 1) continue;
    Bypass b;
    for (const std::string& in : id.input) {
      if (!in.empty() && in[0] == '^') b.controls.push_back(in);
      else b.replacement = in;
    }
    bypass.emplace(id.name, std::move(b));
    order.push_back(id.name);
  }
  for (const std::string& name : order)
    ctx.Fired("Identity", "'" + bypass.at(name).replacement + "'", {name});
  BypassNodes(graph, bypass);
}

}  // namespace pdk_graph
