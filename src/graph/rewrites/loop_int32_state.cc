// The int32 state of a while loop on PDK follows the loop to PDK.
//
// TensorFlow places a function's int32 arguments on the CPU (eager's
// GetDeviceForInput: an int32 tensor lives in host memory, so its function
// argument goes on the host device), and the placer keeps the loop-control
// nodes that carry such a value (Enter, Merge, Switch, NextIteration, Exit and
// the Identity of a lowered cond/body's input) next to their input. A
// tf.while_loop on PDK whose trip count or bound is such an argument,
//
//   @tf.function
//   def f(x, n): return tf.while_loop(lambda i, x: i < n, body, (0, x))
//
// then spans two devices: TensorFlow's partitioner gives each device a copy
// of the loop's control structure and sends the loop condition from PDK to the
// CPU, and the bound back, every iteration (_Send/_Recv pairs, each a
// rendezvous and a thread hand-off): 48 us per iteration on the 2-core
// development VM against 4 us on the CPU device, for a body of two small ops.
//
// The rewrite moves those nodes to the loop's PDK device. Seeds: a Switch of
// T = int32 placed on the CPU whose predicate is a LoopCond on a PDK device.
// From a seed it grows over regular data edges, both ways, through nodes
// placed on the CPU with op Enter, Merge, Switch, NextIteration, Exit or
// Identity and T = int32 (not backwards out of an Enter, not forwards out of an
// Exit: the loop's boundary); every node reached goes to the LoopCond's
// device. These are forwarding ops, which TensorFlow registers for
// DEVICE_DEFAULT with int32 in host memory, so on PDK they keep the value in
// host memory and copy nothing; the only cross-device edges left are the
// argument into its Enter and, if read, the Exit's value out of the loop, once
// per call. Fetch/feed/keep nodes are not moved. Idempotent: no seed is left.
#include <deque>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

bool IsForwardingOp(const std::string& op) {
  return op == "Enter" || op == "Merge" || op == "Switch" || op == "NextIteration" ||
         op == "Exit" || op == "Identity";
}

}  // namespace

void MoveInt32LoopStateToLoopDevice(GraphDef* graph, const RewriteContext& ctx) {
  const GraphView view(*graph);
  auto index_of = [&](const NodeDef* n) { return static_cast<size_t>(n - graph->node.data()); };
  auto movable = [&](const NodeDef& n) {
    return DeviceTypeOf(n.device) == "CPU" && IsForwardingOp(n.op) &&
           n.TypeAttr("T") == DT_INT32 && !ctx.preserved(n.name);
  };
  std::vector<std::string> target(graph->node.size());  // device to move to, "" = stay
  for (const NodeDef& sw : graph->node) {
    if (sw.op != "Switch" || !movable(sw) || !target[index_of(&sw)].empty()) continue;
    if (view.num_regular_inputs(sw) != 2) continue;
    const NodeDef* pred = view.regular_fanin(sw, 1);
    if (pred == nullptr || pred->op != "LoopCond" || !ctx.on_device(*pred)) continue;
    std::deque<const NodeDef*> queue{&sw};
    target[index_of(&sw)] = pred->device;
    std::vector<std::string> moved;
    while (!queue.empty()) {
      const NodeDef* n = queue.front();
      queue.pop_front();
      moved.push_back(n->name);
      std::vector<const NodeDef*> next;
      if (n->op != "Enter")
        for (int i = 0; i < view.num_regular_inputs(*n); ++i)
          if (const NodeDef* p = view.regular_fanin(*n, i)) next.push_back(p);
      if (n->op != "Exit")
        for (const NodeDef* c : view.regular_consumers(*n)) next.push_back(c);
      for (const NodeDef* m : next) {
        if (!movable(*m) || !target[index_of(m)].empty()) continue;
        target[index_of(m)] = pred->device;
        queue.push_back(m);
      }
    }
    ctx.Fired("int32 loop state to the loop's device", sw.name, moved);
  }
  for (size_t i = 0; i < graph->node.size(); ++i)
    if (!target[i].empty()) graph->node[i].device = target[i];
}

}  // namespace pdk_graph
