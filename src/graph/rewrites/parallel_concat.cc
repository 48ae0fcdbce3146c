// Keeps TensorFlow's expansion of ParallelConcat (tf.parallel_stack in a
// graph) on one device. Always on: needed for a correct result.
//
// TensorFlow's ParallelConcatRemovePass (before placement) replaces each
// ParallelConcat by
//
//   start  = _ParallelConcatStart(; shape, dtype)       an uninitialized buffer
//   u_k    = _ParallelConcatUpdate(start, value_k; loc=k)   writes row k into
//                                                            start's buffer
//   result = Identity(start, ^u_0, ^u_1, ...)           reads the buffer after
//                                                       the updates
//
// which is correct only while the three run on one device: the updates write
// into the start's buffer in place, and an Identity on another device reads a
// copy of the buffer made as soon as the start finished, before any update
// (on PDK before it had these kernels: all zeros, issue 14). Two fixes here:
//
// 1. A start placed on PDK gets attribute `_pdk_shape` (list(int)), a copy of
//    its `shape`: TensorFlow 2.21's kernel C API cannot read a shape
//    attribute, and PDK's _ParallelConcatStart kernel
//    (src/kernels/array/inplace_ops.cc) reads this one instead. Shapes that
//    are not fully defined are left alone (the kernel then fails, as
//    TensorFlow's does).
// 2. An update or Identity reading a start's buffer from another device (a
//    dtype PDK has no kernels for puts the start and updates on the CPU, while
//    the Identity may land on PDK) is moved to the start's device.
// Idempotent: a second pass finds the attribute set and the devices equal.
#include <string>
#include <utility>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {

void PrepareParallelConcat(GraphDef* graph, const RewriteContext& ctx) {
  bool any = false;
  for (const NodeDef& n : graph->node) any = any || n.op == "_ParallelConcatStart";
  if (!any) return;

  std::vector<std::pair<std::string, std::string>> moves;  // node -> device
  {
    GraphView view(*graph);
    if (view.has_duplicate_names()) return;
    for (const NodeDef& start : graph->node) {
      if (start.op != "_ParallelConcatStart") continue;
      for (const Fanout& f : view.regular_fanouts(start, 0)) {
        const NodeDef& reader = *f.consumer;
        if (reader.device == start.device) continue;
        if (reader.op == "_ParallelConcatUpdate" || reader.op == "Identity")
          moves.emplace_back(reader.name, start.device);
      }
    }
  }
  for (NodeDef& n : graph->node) {
    for (const auto& [name, device] : moves) {
      if (n.name != name) continue;
      ctx.Fired("ParallelConcat reader on another device", "'" + device + "'", {n.name});
      n.device = device;
    }
    if (n.op != "_ParallelConcatStart" || !ctx.on_device(n)) continue;
    if (n.attr.count("_pdk_shape")) continue;
    auto shape = n.attr.find("shape");
    std::vector<int64_t> dims;
    if (shape == n.attr.end() || !shape->second.GetShape(&dims)) continue;
    bool defined = true;
    for (int64_t d : dims) defined = defined && d >= 0;
    if (!defined) continue;
    n.attr["_pdk_shape"] = AttrValue::IntList(dims);
    ctx.Fired("_ParallelConcatStart shape", "_pdk_shape", {n.name});
  }
}

}  // namespace pdk_graph
