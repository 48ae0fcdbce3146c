// A call marked for XLA (_XlaMustCompile=true) on PDK -> the same call run by
// TensorFlow's ordinary function runtime with PDK's kernels.
//
//   StatefulPartitionedCall(f=one_step_on_data)      StatefulPartitionedCall(f=...)
//     _XlaMustCompile=true, device PDK:0        =>     _XlaMustCompile=false
//     (_XlaCompile, _XlaScope, _XlaInternalScope)      (those removed)
//
// Why: `tf.function(jit_compile=True)` puts _XlaMustCompile=true on the
// FunctionDef and on every node that calls it from another function (Keras 3
// does so for its train / test / predict step whenever a non-CPU device is
// listed, and for grouped or channels_first 3-D convolutions). When TensorFlow
// creates the kernel of such a node, TensorFlow's XlaKernelCreator
// (tensorflow/compiler/jit/xla_kernel_creator.cc: CanCreateXlaKernel reads the
// node's _XlaMustCompile) turns it into an XlaLaunch kernel, which fails on a
// device without an XLA JIT registration: "No JIT device registered for PDK".
// Grappler (and so this rewrite) runs on the placed graph before partitioning
// and kernel creation, and nothing after it sets the attribute again, so with
// _XlaMustCompile=false the node gets TensorFlow's own (Stateful)PartitionedCall
// kernel, which instantiates the body as a function on PDK; that body is
// optimized by PDK's graph optimizer in turn (nested XLA calls included).
//
// Fires for every node placed on PDK whose _XlaMustCompile is true, whatever
// its op (PartitionedCall, StatefulPartitionedCall, or a direct call of a
// library function). Each function is reported once per process on stderr:
//   PDK: one_step_on_data asked for XLA (jit_compile=True); PDK has no XLA
//   backend, running it with PDK kernels
// Under PDK_STRICT=1 the call is guarded instead by a failing
// _PdkStrictFallback node (src/graph/strict_placement.h), so calling it is an
// InvalidArgumentError naming the function. Always on: needed to run.
// Idempotent: afterwards no node has _XlaMustCompile=true.
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"
#include "graph/strict_placement.h"
#include "pdk/graph_optimizer.h"

namespace pdk_graph {
namespace {

// Prints the notice once per Python function name per process.
void NoticeOnce(const std::string& name) {
  static std::mutex mu;
  static auto* seen = new std::set<std::string>;  // never destroyed
  std::lock_guard<std::mutex> l(mu);
  if (!seen->insert(name).second) return;
  std::fprintf(stderr,
               "PDK: %s asked for XLA (jit_compile=True); PDK has no XLA backend, running it "
               "with PDK kernels\n",
               name.c_str());
}

}  // namespace

void RunXlaCallsWithPdkKernels(GraphDef* graph, const RewriteContext& ctx) {
  const bool strict = StrictEnabled();
  std::vector<NodeDef> guards;
  pdk::RunWithoutXla(*graph, ctx.optimizer, [&](NodeDef& n, const std::string& function) {
    const std::string name = pdk::PythonFunctionName(function);
    ctx.Fired("XlaMustCompile->PdkKernels", "'" + n.name + "'", {function});
    if (strict) {
      const std::string message =
          "PDK_STRICT=1: function '" + name + "' (" + function + ", node '" + n.name +
          "') asked for XLA (jit_compile=True) on " + DeviceTypeOf(n.device) +
          "; PDK has no XLA backend. Unset PDK_STRICT to run it with PDK kernels, or pass "
          "jit_compile=False.";
      GuardWithFailure(&n, CpuDeviceOf(n.device), message, &guards);
    } else {
      NoticeOnce(name);
    }
  });
  for (NodeDef& g : guards) graph->node.push_back(std::move(g));
}

}  // namespace pdk_graph
