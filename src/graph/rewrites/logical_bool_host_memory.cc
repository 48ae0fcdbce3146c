// The bool tensors PDK's logical ops exchange with their neighbours in host
// memory, so the edge needs no copy.
//
// PDK's LogicalAnd, LogicalOr and LogicalNot keep their bool tensors in host
// memory, as its int32 comparisons do, because a tf.while_loop's condition
// joins them and feeds LoopCond, whose input is host memory on every device
// (docs/architecture.md, "int32 and the logical ops live in host memory").
// PDK's other kernels that produce or read bool keep it in device memory: a
// comparison of float tensors, SelectV2's condition, Cast from bool. Where
// the two meet, TensorFlow's partitioner puts a _Send/_Recv pair on the edge:
// a copy through the stream and a rendezvous round trip through TensorFlow's
// event-manager threads. Keras's `ops.argmax` (keras/src/backend/tensorflow/
// numpy.py), which every Keras accuracy metric calls, has both edges:
//
//   is_negative_zero = LogicalAnd(Equal(x, 0.0), signbit(x))   # signbit: int32 Less
//   x = SelectV2(is_negative_zero, -tiny, x)
//
// so each training step with an accuracy metric copied Equal's result to the
// host and LogicalAnd's back, on the step's critical path.
//
// The rewrite, for nodes on PDK (the kernels named here are PDK's own, which
// compute on the host and read or write a host-memory argument through its
// pointer like any other):
//   1. A comparison (Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual
//      of any T but int32, whose output is host memory already; IsNan, IsInf,
//      IsFinite) whose every consumer is on its device and takes bool in host
//      memory (LogicalAnd/Or/Not, LoopCond, Switch's pred) or is a reader of
//      step 2 or 3, with at least one of the first kind: `_output_hostmem`
//      += [0].
//   2. A lowered tf.cond's pivot: Switch(pred, pred) of T bool whose data
//      input comes from host memory (the predicate input is host memory on
//      every device; TensorFlow's DEVICE_DEFAULT Switch of bool keeps data and
//      outputs in device memory, so any producer met one of the two across
//      memories). Its data input and both outputs, and the Identity after
//      each output that only control edges read (the cond's pivots), go to
//      host memory, when every other reader of the outputs takes or can
//      take host memory (as in step 1). Switch and Identity only forward the
//      buffer.
//   3. A bool input in device memory of SelectV2 / Select (condition), Cast
//      (SrcT bool) or _PdkFusedElementwise (a bool entry of Tin) whose
//      producer, on the same device, gives host memory (the logical ops, an
//      int32 comparison, a node step 1 or 2 marked): `_input_hostmem` += [slot].
// TensorFlow reads both attributes when it assigns memory types
// (tensorflow/core/framework/memory_types.cc, MemoryTypesForNode: a list of
// input / output indices forced to HOST_MEMORY). A kernel forwarding an input
// buffer to an output only does so between equal memory types
// (OpKernelContext::forward_input), so nothing else changes. On PDK host and
// device memory are the same address space; a device whose memory the host
// cannot read must not copy this rewrite. Idempotent.
#include <algorithm>
#include <string>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

bool IsLogical(const std::string& op) {
  return op == "LogicalAnd" || op == "LogicalOr" || op == "LogicalNot";
}

bool IsComparison(const std::string& op) {
  return op == "Equal" || op == "NotEqual" || op == "Less" || op == "LessEqual" ||
         op == "Greater" || op == "GreaterEqual";
}

bool Listed(const NodeDef& n, const char* attr, int64_t index) {
  auto it = n.attr.find(attr);
  std::vector<int64_t> indices;
  return it != n.attr.end() && it->second.GetIntList(&indices) &&
         std::find(indices.begin(), indices.end(), index) != indices.end();
}

// A comparison PDK may write to host memory instead (step 1).
bool MovableBoolOutput(const NodeDef& n) {
  if (IsComparison(n.op)) return n.TypeAttr("T") != DT_INT32;
  return n.op == "IsNan" || n.op == "IsInf" || n.op == "IsFinite";
}

// Output `port` of `n` is bool in host memory.
bool HostBoolOutput(const NodeDef& n, int port) {
  if (port != 0) return Listed(n, "_output_hostmem", port);
  return IsLogical(n.op) || (IsComparison(n.op) && n.TypeAttr("T") == DT_INT32) ||
         Listed(n, "_output_hostmem", 0);
}

// Input `slot` of `n` takes bool in host memory whatever its producer.
bool HostBoolInput(const NodeDef& n, int slot) {
  return IsLogical(n.op) || (n.op == "LoopCond" && slot == 0) ||
         (n.op == "Switch" && slot == 1) || Listed(n, "_input_hostmem", slot);
}

// Input `slot` of `n` is a bool PDK's kernel may read from host memory
// instead (step 3).
bool MovableBoolInput(const NodeDef& n, int slot) {
  if (n.op == "SelectV2" || n.op == "Select") return slot == 0;
  if (n.op == "Cast") return slot == 0 && n.TypeAttr("SrcT") == DT_BOOL;
  if (n.op == "_PdkFusedElementwise") {
    auto it = n.attr.find("Tin");
    std::vector<int64_t> tin;
    return it != n.attr.end() && it->second.GetTypeList(&tin) && slot < static_cast<int>(tin.size()) &&
           tin[slot] == DT_BOOL;
  }
  return false;
}

// Whether Switch `s` (T bool, a lowered tf.cond's pivot) can take its data
// input and give its outputs in host memory: every reader of its outputs is
// on its device and takes or can take host memory, or is an Identity that
// only control edges read.
bool PivotMovable(const GraphView& view, const NodeDef& s) {
  if (s.op != "Switch" || s.TypeAttr("T") != DT_BOOL) return false;
  for (int out = 0; out < 2; ++out) {
    for (const auto& f : view.regular_fanouts(s, out)) {
      const NodeDef& c = *f.consumer;
      const bool ok = c.device == s.device &&
                      (HostBoolInput(c, f.input_index) || MovableBoolInput(c, f.input_index) ||
                       (c.op == "Identity" && view.num_regular_fanouts(c) == 0));
      if (!ok) return false;
    }
  }
  return true;
}

}  // namespace

void PlaceLogicalOpBoolsInHostMemory(GraphDef* graph, const RewriteContext& ctx) {
  // The marks change attributes only, so one view serves all three steps;
  // its node pointers point into graph->node.
  const GraphView view(*graph);
  if (view.has_duplicate_names()) return;
  auto mutable_node = [graph](const NodeDef* n) -> NodeDef& {
    return graph->node[static_cast<size_t>(n - graph->node.data())];
  };

  // Step 1: comparisons read by host-memory readers.
  for (NodeDef& n : graph->node) {
    if (!ctx.on_device(n) || !MovableBoolOutput(n) || HostBoolOutput(n, 0)) continue;
    const auto& fanouts = view.regular_fanouts(n, 0);
    bool host_reader = false, all_movable = !fanouts.empty();
    for (const auto& f : fanouts) {
      const NodeDef& c = *f.consumer;
      const bool host = HostBoolInput(c, f.input_index);
      host_reader = host_reader || host;
      all_movable = all_movable && c.device == n.device &&
                    (host || MovableBoolInput(c, f.input_index) ||
                     (f.input_index == 0 && PivotMovable(view, c)));
    }
    if (host_reader && all_movable && AddHostMemoryArg(&n, "_output_hostmem", 0))
      ctx.Fired("bool output in host memory", n.name, {n.name});
  }

  // Step 2: a lowered tf.cond's pivot, with its control-only Identities.
  for (NodeDef& s : graph->node) {
    if (!ctx.on_device(s) || s.op != "Switch" || HostBoolInput(s, 0)) continue;
    int port = 0;
    const NodeDef* p = view.regular_fanin(s, 0, &port);
    if (!p || p->device != s.device || !HostBoolOutput(*p, port) || !PivotMovable(view, s))
      continue;
    AddHostMemoryArg(&s, "_input_hostmem", 0);
    AddHostMemoryArg(&s, "_output_hostmem", 0);
    AddHostMemoryArg(&s, "_output_hostmem", 1);
    ctx.Fired("cond predicate in host memory", s.name, {s.name});
    for (int out = 0; out < 2; ++out)
      for (const auto& f : view.regular_fanouts(s, out)) {
        if (f.consumer->op != "Identity") continue;
        NodeDef& id = mutable_node(f.consumer);
        bool changed = AddHostMemoryArg(&id, "_input_hostmem", 0);
        changed = AddHostMemoryArg(&id, "_output_hostmem", 0) || changed;
        if (changed) ctx.Fired("cond predicate in host memory", id.name, {id.name});
      }
  }

  // Step 3: readers of a bool their producer left in host memory.
  for (NodeDef& c : graph->node) {
    if (!ctx.on_device(c)) continue;
    for (int slot = 0, k = view.num_regular_inputs(c); slot < k; ++slot) {
      if (!MovableBoolInput(c, slot) || HostBoolInput(c, slot)) continue;
      int port = 0;
      const NodeDef* p = view.regular_fanin(c, slot, &port);
      if (p && p->device == c.device && HostBoolOutput(*p, port) &&
          AddHostMemoryArg(&c, "_input_hostmem", slot))
        ctx.Fired("bool input in host memory", c.name, {c.name});
    }
  }
}

}  // namespace pdk_graph
