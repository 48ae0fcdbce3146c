// PDK_STRICT=1: a compute op that TensorFlow placed on the CPU, in a graph
// that runs on PDK, fails the graph with an error naming the node, its op, its
// dtypes and the dtypes PDK registers for that op (src/graph/strict_placement.cc).
// A graph counts as running on PDK when one of its compute ops is placed there.
//
// The check runs in PDK's Grappler pass (pdk_graph::Optimize, after the
// rewrites). TensorFlow's function runtime assigns devices before Grappler
// runs, so every node of a tf.function's graph already names its device.
// Grappler drops an optimizer's error status (fail_on_optimizer_errors is
// false by default: the error is logged and the graph kept), so the pass does
// not return one: it adds a node of PDK's op `_PdkStrictFallback` (no inputs,
// no outputs, stateful; its CPU kernel fails with the message) as a control
// input of each offending node, and the call of the function fails with that
// InvalidArgumentError before the node runs.
//
// Which ops are compute ops is IsComputeOp below: ONE list, also used by
// tensorflow_pdk.placement (through the PDK_IsComputeOp export).
#ifndef PDK_SRC_GRAPH_STRICT_PLACEMENT_H_
#define PDK_SRC_GRAPH_STRICT_PLACEMENT_H_

#include <string>
#include <string_view>
#include <vector>

#include "graph/graph_def.h"

namespace pdk_graph {

// False for bookkeeping (function arguments and results, send/receive,
// constants, no-ops, placeholders, resource-variable handles), metadata ops
// (Shape, ShapeN, Size, Rank: a tensor's shape, never its data, placed next
// to their input by TensorFlow) and the input pipeline (tf.data datasets,
// iterators, optionals: host ops by design); true for every other op.
bool IsComputeOp(std::string_view op);

// PDK_STRICT is set to something other than "" or "0".
bool StrictEnabled();

// If `graph` has a compute op on a device of type `device_type` (PDK's),
// guards every compute op placed on the CPU with a failing _PdkStrictFallback
// node (see above). Returns the number of nodes guarded (0 when no compute op
// of the graph is on that device). Idempotent. `report`: also print each one
// to stderr.
int EnforceStrictPlacement(GraphDef* graph, const std::string& device_type, bool report);

// Makes `guarded` wait for a new _PdkStrictFallback node on `cpu_device` whose
// kernel fails with `message` (InvalidArgumentError); the new node is appended
// to `guards` (the caller adds them to the graph). Returns false and adds
// nothing if `guarded` already has its guard (idempotent).
bool GuardWithFailure(NodeDef* guarded, const std::string& cpu_device,
                      const std::string& message, std::vector<NodeDef>* guards);

// The host CPU of the task a device belongs to:
// "/job:localhost/replica:0/task:0/device:PDK:0" -> ".../device:CPU:0".
std::string CpuDeviceOf(const std::string& device);

// Under PDK_STRICT=1 (TF_InitKernel, after PDK's kernels): for every op whose
// PDK kernels constrain only "T", registers for `device_type` a kernel for each
// numeric or bool T that PDK lacks, which fails naming the op, the dtype and
// PDK's dtypes. The placer then puts such a node on PDK instead of the CPU, in
// eager mode too, and it fails there. Returns the number registered.
int RegisterStrictTypeGuards(const char* device_type);

}  // namespace pdk_graph

#endif  // PDK_SRC_GRAPH_STRICT_PLACEMENT_H_
