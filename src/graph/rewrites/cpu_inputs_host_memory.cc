// A PDK kernel's input produced on the host CPU, read where it lies: the
// input in host memory, so the edge needs no copy.
//
// A function on PDK often starts from tensors on the host CPU: its arguments
// when the caller passes host tensors (a custom training loop's batches; a
// `tf.function` call's NumPy arguments, which PDK's Python side binds as host
// tensors), and the elements of a tf.data iterator, whose IteratorGetNext runs
// on the CPU inside Keras's train function. TensorFlow's partitioner puts a
// _Send/_Recv pair on every edge from the CPU to a device-memory input on PDK,
// and the _Recv copies the tensor into device memory through
// CopyCPUTensorToPluggableDevice, whose completion runs on TensorFlow's
// event-manager threads: a round trip of thread hand-offs per tensor per call
// (about 100 us on the 2-core VMs; docs/benchmarks.md, "Reading a result
// back, and other host-device copies"), where stock TensorFlow's CPU kernels
// read the same tensors in place.
//
// The rewrite marks such an input as host memory through TensorFlow's node
// attribute `_input_hostmem` (tensorflow/core/framework/memory_types.cc,
// MemoryTypesForNode: input indices forced to HOST_MEMORY), for every node
// on PDK run by a PDK kernel (not the ops PDK leaves to TensorFlow's
// DEVICE_DEFAULT kernels, src/kernels/tensorflow_default_kernels.h, nor
// TensorFlow's control-flow ops, nor a node of T variant, which no PDK kernel
// reads) whose regular input `i` comes from a node placed on a CPU device of
// the same task:
//
//   CPU: x = _Arg | IteratorGetNext | ...     PDK: y = MatMul(x, w)
//     -> y = MatMul(x, w) with _input_hostmem += [i]
//
// The partitioner then gives the edge a _HostRecv (host memory on both
// sides), which TensorFlow's rendezvous completes by sharing the buffer
// (SameWorkerRecvDone: no copy, no event-manager thread), and PDK's kernel
// reads the host tensor through its pointer. A kernel only forwards an input
// buffer to an output of the same memory type (OpKernelContext::
// forward_input), so no output aliases the host tensor in place of a device
// allocation. On PDK host and device memory are the same address space (the
// device computes on the host); a device whose memory the host cannot read
// must not copy this rewrite. Always on: it only sets memory types.
// Idempotent (an index already listed is not added again).
#include <string_view>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"
#include "kernels/tensorflow_default_kernels.h"

namespace pdk_graph {
namespace {

// A node whose kernel is PDK's own: not one PDK leaves to TensorFlow's
// DEVICE_DEFAULT kernels, not a control-flow op (TensorFlow's kernels on
// every device), not a node of T variant (the kernel C API cannot read one).
bool RunByPdkKernel(const NodeDef& n, const RewriteContext& ctx) {
  static const char* const kControlFlow[] = {"Enter",    "Exit",     "Merge",         "Switch",
                                             "_SwitchN", "LoopCond", "NextIteration", "_Retval"};
  for (const char* op : kControlFlow)
    if (n.op == op) return false;
  const int t = n.TypeAttr("T");
  return ctx.can_emit(n.op) && t != DT_VARIANT &&
         !pdk_kernels::LeftToTensorFlowDefault(n.op, static_cast<TF_DataType>(t));
}

}  // namespace

void PlaceCpuInputsInHostMemory(GraphDef* graph, const RewriteContext& ctx) {
  const GraphView view(*graph);
  if (view.has_duplicate_names()) return;
  for (NodeDef& n : graph->node) {
    if (!ctx.on_device(n) || !RunByPdkKernel(n, ctx)) continue;
    const std::string_view task = TaskOf(n.device);
    if (task.empty()) continue;
    for (int i = 0; i < view.num_regular_inputs(n); ++i) {
      const NodeDef* p = view.regular_fanin(n, i);
      if (p == nullptr || DeviceTypeOf(p->device) != "CPU" || TaskOf(p->device) != task) continue;
      if (AddHostMemoryArg(&n, "_input_hostmem", i))
        ctx.Fired("input from the CPU read in host memory", n.name, {n.name});
    }
  }
}

}  // namespace pdk_graph
