// int32 elements of TensorLists in host memory, as every other int32 tensor
// on PDK.
//
// PDK keeps int32 tensors in host memory (docs/architecture.md, "int32 and the
// logical ops live in host memory"), as TensorFlow's loop-control kernels do
// on every device. TensorFlow's own DEVICE_DEFAULT TensorList kernels, which
// run the lists on PDK, take and give their element tensors in device memory
// whatever the element dtype (tensorflow/core/kernels/list_kernels.cc: only
// the index, element_shape, num_elements and length arguments are
// HostMemory). A tf.while_loop's gradient keeps each int32 intermediate of the
// forward loop (the iteration index, a list's length or element shape) in an
// int32 accumulator list: TensorListPushBack per forward iteration,
// TensorListPopBack per gradient iteration, whose result is an index of
// TensorListGetItem / TensorListSetItem (host memory). So each iteration
// crossed memory types: TensorFlow's partitioner put a _HostSend/_Recv pair on
// the edge, a copy through the stream and TensorFlow's event-manager thread,
// 3 per forward and 1 per gradient iteration of a Keras LSTM (320 per
// training step of bench_pdk.py's LSTM case), each a thread hand-off on the
// loop's critical path.
//
// The rewrite marks the element argument of the four TensorList kernels that
// only move element tensors (never read or write their data, except zeros for
// an uninitialized element, which TensorFlow allocates with the output's
// memory type) as host memory through TensorFlow's node attributes
// `_input_hostmem` / `_output_hostmem` (tensorflow/core/framework/
// memory_types.cc, MemoryTypesForNode: a list of input / output indices forced
// to HOST_MEMORY), when element_dtype is int32 and the node is on PDK:
//
//   TensorListPushBack(input_handle, tensor)   _input_hostmem  += [1]
//   TensorListSetItem(input_handle, index, item) _input_hostmem += [2]
//   TensorListPopBack -> (output_handle, tensor) _output_hostmem += [1]
//   TensorListGetItem -> item                  _output_hostmem += [0]
//
// The partitioner and the kernels then agree with PDK's int32 producers and
// consumers, and the edges need no copy. An int32 list filled elsewhere (by a
// kernel this rewrite does not mark, e.g. TensorListFromTensor) holds
// elements in PDK device memory that PopBack / GetItem now hand on as host
// memory: on PDK that is the same memory (the device allocates host memory
// and computes on the host), which is why this is PDK's rewrite and not the
// kit's: a device whose memory the host cannot read must not use it.
// Idempotent (an index already listed is not added again).
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

struct ElementArg {
  const char* op;
  const char* attr;  // _input_hostmem or _output_hostmem
  int64_t index;
};

constexpr ElementArg kElementArgs[] = {
    {"TensorListPushBack", "_input_hostmem", 1},
    {"TensorListSetItem", "_input_hostmem", 2},
    {"TensorListPopBack", "_output_hostmem", 1},
    {"TensorListGetItem", "_output_hostmem", 0},
};

}  // namespace

void PlaceInt32ListElementsInHostMemory(GraphDef* graph, const RewriteContext& ctx) {
  for (NodeDef& n : graph->node) {
    if (!ctx.on_device(n) || n.TypeAttr("element_dtype") != DT_INT32) continue;
    for (const ElementArg& arg : kElementArgs) {
      if (n.op != arg.op) continue;
      if (AddHostMemoryArg(&n, arg.attr, arg.index))
        ctx.Fired("int32 TensorList element in host memory", n.name, {n.name});
    }
  }
}

}  // namespace pdk_graph
