// Which launches of an Async kernel (MatMul, BatchMatMulV2, _PdkFusedMatMul,
// the Conv2D family: KernelDef::Async in pdk/kernel.h) may go to a launcher
// thread.
//
// PDK registers each such op twice: synchronous (no kernel label, what a node
// gets by default) and asynchronous under the kernel label "async"
// (pdk::kAsyncKernelLabel), which a node selects with TensorFlow's `_kernel`
// node attribute (tensorflow/core/framework/op_kernel.cc, FindKernelRegistration).
// An asynchronous kernel lets the executor run other nodes while a large
// product runs on a launcher thread, but costs a thread hand-off on every
// launch, also when the launcher declines a small one: the executor hands
// every node the kernel makes ready to its inter-op pool
// (ExecutorState::ProcessAsync: NodeDone with no inline queue). In a
// while loop of small products (a Keras LSTM step) that hand-off was most of
// the step (docs/benchmarks.md, "Kernel overlap").
//
// So this pass sets `_kernel: "async"` on a node of such an op on PDK unless
// its inputs are known to be small: every data input's size is known from
// TensorFlow's static shape inference of the graph (pdk::GraphProperties,
// through AsyncLaunchPolicy::tensor_bytes) and the sum is under the
// launcher's threshold (PDK_ASYNC_MIN_BYTES). A node with an unknown input
// size (an unknown batch dimension) keeps the asynchronous kernel, whose
// launcher then decides per launch from the actual sizes. The decision is
// recorded in `_pdk_launch` ("async" or "sync") and never revisited: the pass
// runs before the other rewrites, while every producer is an op TensorFlow's
// shape inference saw (a fused node's outputs have no inferred shape), and
// again after them for the nodes they created (_PdkFusedMatMul,
// _PdkFusedConv2D, whose inputs are the original producers'); and TensorFlow
// calls the optimizer again on its own output, where the shapes behind fused
// nodes are unknown. A node with a `_kernel` attribute of its own is left as
// it is. With no asynchronous registrations (PDK_ASYNC=0) the pass does
// nothing.
#include "graph/rewrites/rewrites.h"

#include <string>
#include <unordered_map>

#include "pdk/kernel.h"  // kAsyncKernelLabel

namespace pdk_graph {

void LabelAsyncLaunches(GraphDef* graph, const RewriteContext& ctx,
                        const AsyncLaunchPolicy& policy) {
  if (policy.ops.empty()) return;
  std::unordered_map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : graph->node) by_name.emplace(n.name, &n);
  for (NodeDef& n : graph->node) {
    if (!ctx.on_device(n) || !policy.ops.count(n.op) || n.attr.count("_kernel") ||
        n.attr.count("_pdk_launch"))
      continue;
    int64_t total = 0;
    std::string unknown;  // inputs of unknown size, for PDK_GRAPH_REPORT
    for (const std::string& in : n.input) {
      const TensorRef ref = ParseInput(in);
      if (ref.is_control()) continue;
      auto it = by_name.find(ref.node);
      const int64_t bytes = it == by_name.end() || !policy.tensor_bytes
                                ? -1
                                : policy.tensor_bytes(ref, it->second->op);
      if (bytes < 0)
        unknown += (unknown.empty() ? "" : ", ") + in +
                   (it == by_name.end() ? "" : " (" + it->second->op + ")");
      else
        total += bytes;
    }
    if (unknown.empty() && total < policy.min_bytes) {
      n.attr["_pdk_launch"] = AttrValue::String("sync");
      ctx.Fired("synchronous launch (inputs under PDK_ASYNC_MIN_BYTES)",
                n.name + " (" + std::to_string(total) + " bytes)", {n.name});
      continue;
    }
    n.attr["_pdk_launch"] = AttrValue::String("async");
    n.attr["_kernel"] = AttrValue::String(pdk::kAsyncKernelLabel);
    ctx.Fired("asynchronous launch",
              n.name + (unknown.empty() ? " (" + std::to_string(total) + " bytes)"
                                        : " (size unknown: " + unknown + ")"),
              {n.name});
  }
}

}  // namespace pdk_graph
