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

namespace pdk_graph {
namespace {

// "__inference_one_step_on_data_1234" -> "one_step_on_data": the Python name
// under TensorFlow's mangling, which nests for gradients
// ("__inference___backward__conv_xla_757_770" -> "_conv_xla"): the prefixes
// __inference_ / __forward_ / __backward_ and "_<unique id>" suffixes, removed
// until none is left.
std::string PythonName(const std::string& function) {
  std::string name = function;
  for (bool changed = true; changed;) {
    changed = false;
    for (const char* prefix : {"__inference_", "__forward_", "__backward_"}) {
      const std::string p(prefix);
      if (name.size() > p.size() && name.compare(0, p.size(), p) == 0) {
        name = name.substr(p.size());
        changed = true;
      }
    }
    const size_t us = name.find_last_of('_');
    if (us != std::string::npos && us > 0 && us + 1 < name.size() &&
        name.find_first_not_of("0123456789", us + 1) == std::string::npos) {
      name = name.substr(0, us);
      changed = true;
    }
  }
  return name.empty() ? function : name;
}

// The function a call node runs: its "f" attribute, or the op itself for a
// direct call of a library function.
std::string CalledFunction(const NodeDef& n) {
  auto it = n.attr.find("f");
  std::string f;
  if (it != n.attr.end() && it->second.GetFuncName(&f) && !f.empty()) return f;
  return n.op;
}

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
  for (NodeDef& n : graph->node) {
    if (!ctx.on_device(n) || !n.BoolAttr("_XlaMustCompile", false)) continue;
    const std::string function = CalledFunction(n);
    const std::string name = PythonName(function);
    n.attr["_XlaMustCompile"] = AttrValue::Bool(false);
    for (const char* key : {"_XlaCompile", "_XlaScope", "_XlaInternalScope"}) n.attr.erase(key);
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
  }
  for (NodeDef& g : guards) graph->node.push_back(std::move(g));
}

}  // namespace pdk_graph
