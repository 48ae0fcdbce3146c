// The graph rewrites, one file per pattern, run in this order by
// pdk_graph::Optimize (src/graph/optimizer.cc).
#ifndef PDK_SRC_GRAPH_REWRITES_REWRITES_H_
#define PDK_SRC_GRAPH_REWRITES_REWRITES_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/graph_def.h"

namespace pdk_graph {

// What every rewrite gets: the kit's optimizer context (the device type it
// acts on, the nodes to preserve), options and the counts of what fired.
struct RewriteContext {
  const pdk::OptimizerContext& optimizer;
  bool report;
  RewriteCounts* fired;
  const std::function<bool(const std::string&)>& kernel_available;

  bool can_emit(const std::string& op) const { return !kernel_available || kernel_available(op); }
  bool preserved(const std::string& node) const { return optimizer.preserved(node); }
  // Placed on a device of the optimizer's type (PDK): the only nodes a
  // rewrite touches.
  bool on_device(const NodeDef& n) const { return optimizer.on_device(n); }
  // Counts (and with PDK_GRAPH_REPORT=1 logs) one application of `pattern`.
  void Fired(const std::string& pattern, const std::string& result,
             const std::vector<std::string>& replaced) const {
    ++(*fired)[pattern];
    if (!report) return;
    std::string names;
    for (const auto& n : replaced) names += (names.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "PDK graph: %s -> %s (replaces %s)\n", pattern.c_str(), result.c_str(),
                 names.c_str());
  }
};

// _FusedBatchNormEx (emitted on PDK by TensorFlow's remapper, no PDK kernel)
//   -> FusedBatchNormV3 [+ AddV2] [+ activation]
// (src/graph/rewrites/fused_batch_norm_ex.cc). Always on: needed to run.
void SplitFusedBatchNormEx(GraphDef* graph, const RewriteContext& ctx);

// A call marked for XLA (_XlaMustCompile=true, from tf.function(jit_compile=
// True) or Keras's jit_compile="auto") placed on PDK -> the same call with
// _XlaMustCompile=false, run by TensorFlow's function runtime with PDK's
// kernels (src/graph/rewrites/xla_must_compile.cc). Always on: needed to run.
void RunXlaCallsWithPdkKernels(GraphDef* graph, const RewriteContext& ctx);

// ResourceScatter{Add,Sub,Update,Min,Max}(var, indices, updates) on PDK ->
// AssignVariableOp(var, TensorScatter*(ReadVariableOp(var),
// ExpandDims(indices, -1), updates)) (src/graph/rewrites/resource_scatter.cc).
// Always on: PDK's ResourceScatter* kernels only satisfy the placer.
void RewriteResourceScatter(GraphDef* graph, const RewriteContext& ctx);

// TensorFlow's expansion of ParallelConcat (_ParallelConcatStart, its
// _ParallelConcatUpdates, an Identity) kept on one device, and the start's
// shape copied to `_pdk_shape` for PDK's kernel
// (src/graph/rewrites/parallel_concat.cc). Always on: needed for a correct result.
void PrepareParallelConcat(GraphDef* graph, const RewriteContext& ctx);

// Identity between two nodes on one PDK device -> its consumers read its
// input (src/graph/rewrites/identity_removal.cc).
void RemoveIdentities(GraphDef* graph, const RewriteContext& ctx);

// Transpose(Transpose(x, p1), p2) with p1 o p2 = identity -> x; Transpose(x,
// identity perm) -> x (src/graph/rewrites/transpose_pairs.cc).
void CancelTransposes(GraphDef* graph, const RewriteContext& ctx);

// MatMul + BiasAdd [+ Relu | Relu6 | Elu | LeakyRelu | Tanh | Sigmoid | Gelu]
//   -> _PdkFusedMatMul (src/kernels/nn/fused_matmul.cc).
void FuseMatMulBiasAddActivation(GraphDef* graph, const RewriteContext& ctx);

// Pad(x, Const zero-N/C paddings) + Conv2D | DepthwiseConv2dNative (VALID |
// EXPLICIT) -> the convolution with padding EXPLICIT
// (src/graph/rewrites/conv_fusion.cc).
void FoldPadIntoConv(GraphDef* graph, const RewriteContext& ctx);

// Conv2D | DepthwiseConv2dNative + BiasAdd | FusedBatchNormV2/V3(inference)
// [+ Add | AddV2] [+ Relu | Relu6 | Elu | LeakyRelu | Tanh | Sigmoid]
//   -> _PdkFusedConv2D (src/kernels/nn/fused_conv2d.cc;
//      src/graph/rewrites/conv_fusion.cc).
void FuseConv(GraphDef* graph, const RewriteContext& ctx);

// ReluGrad(MaxPoolGrad(x, y, dy), x) -> _PdkMaxPoolGradReluGrad(x, y, dy)
// (src/graph/rewrites/maxpool_grad_relu_grad.cc, src/kernels/nn/pooling.cc).
void FuseMaxPoolGradReluGrad(GraphDef* graph, const RewriteContext& ctx);

// Keras 3's Adam update of one variable (twelve elementwise ops and three
// resource updates) -> _PdkKerasAdamUpdate + three AssignVariableOp
// (src/graph/rewrites/keras_adam.cc, src/kernels/training/keras_adam_update.cc).
void FuseKerasAdam(GraphDef* graph, const RewriteContext& ctx);

// Connected groups of elementwise ops (unary, binary, *Grad, Cast, SelectV2)
// on one PDK device -> one _PdkFusedElementwise each
// (src/graph/rewrites/elementwise_fusion.cc, src/kernels/math/fused_elementwise.cc).
void FuseElementwise(GraphDef* graph, const RewriteContext& ctx);

// Variant arithmetic in TensorList loop gradients, which TensorFlow has no
// DEVICE_DEFAULT kernel for (src/graph/rewrites/tensor_list_gradients.cc):
//   AddN(acc, TensorListSetItem(TensorListReserve, i, dx))
//     -> TensorListSetItem(acc, i, AddV2(TensorListGetItem(acc, i), dx))
//   ZerosLike(loop-invariant TensorListFromTensor(x)) -> TensorListFromTensor(ZerosLike(x))
void RewriteTensorListGradients(GraphDef* graph, const RewriteContext& ctx);

// Adds `index` to the list(int) attribute `attr` of `n` (`_input_hostmem` or
// `_output_hostmem`: the input / output indices TensorFlow's
// MemoryTypesForNode forces to host memory). False if it is listed already
// or `attr` holds something else (not a rewrite's to touch).
inline bool AddHostMemoryArg(NodeDef* n, const char* attr, int64_t index) {
  std::vector<int64_t> indices;
  auto it = n->attr.find(attr);
  if (it != n->attr.end() && !it->second.GetIntList(&indices)) return false;
  if (std::find(indices.begin(), indices.end(), index) != indices.end()) return false;
  indices.push_back(index);
  std::sort(indices.begin(), indices.end());
  n->attr[attr] = AttrValue::IntList(indices);
  return true;
}

// TensorListPushBack / SetItem / PopBack / GetItem with element_dtype int32 on
// PDK -> the same node with its element argument in host memory
// (_input_hostmem / _output_hostmem), as PDK's int32 producers and consumers
// have it: no copy on the edge (src/graph/rewrites/tensor_list_host_memory.cc).
// Always on: it only sets memory types.
void PlaceInt32ListElementsInHostMemory(GraphDef* graph, const RewriteContext& ctx);

// A float (or int64, bool) comparison | IsNan | IsInf | IsFinite whose
// consumers take bool in host memory (LogicalAnd / Or / Not, LoopCond,
// Switch) -> the same node with its output in host memory; SelectV2's
// condition, Cast from bool and a fused elementwise bool input read from a
// logical op -> read from host memory; a lowered tf.cond's pivot Switch of
// bool fed from host memory (and its control-only Identity pivots) -> data
// and outputs in host memory (`_output_hostmem` / `_input_hostmem`): no copy
// on the edge (src/graph/rewrites/logical_bool_host_memory.cc).
// Always on: it only sets memory types.
void PlaceLogicalOpBoolsInHostMemory(GraphDef* graph, const RewriteContext& ctx);

// An input of a PDK kernel produced by a node on the host CPU of the same
// task (a function's host-tensor argument, a tf.data IteratorGetNext) -> the
// same node with that input in host memory (_input_hostmem): the partitioner's
// _HostRecv shares the host buffer instead of copying it into device memory
// through TensorFlow's event-manager threads
// (src/graph/rewrites/cpu_inputs_host_memory.cc). Always on: it only sets
// memory types.
void PlaceCpuInputsInHostMemory(GraphDef* graph, const RewriteContext& ctx);

// Enter / Merge / Switch / NextIteration / Exit / Identity of T = int32 placed
// on the CPU, carrying a loop's state (a function's int32 argument, e.g. the
// bound of `i < n`) in a while loop whose LoopCond is on PDK -> the same nodes
// on the LoopCond's device: no per-iteration traffic between the CPU and PDK
// (src/graph/rewrites/loop_int32_state.cc). Always on.
void MoveInt32LoopStateToLoopDevice(GraphDef* graph, const RewriteContext& ctx);

// TensorList ops of element_dtype bool (no DEVICE_DEFAULT kernel: placed on
// the CPU, e.g. the mask lists of a Keras LSTM given a mask) whose lists meet
// PDK, with the loop nodes carrying their handles -> the same ops of
// element_dtype float32 on PDK, Cast(bool -> float32) on each element going
// in and Cast(float32 -> bool) on each coming out: no list handle crosses
// devices per iteration (src/graph/rewrites/bool_tensor_lists.cc). Always on.
void HoldBoolTensorListsAsFloat(GraphDef* graph, const RewriteContext& ctx);

// MatMul | BatchMatMulV2 | _PdkFusedMatMul on PDK, except
// in a while loop's body with inputs known to be under policy.min_bytes ->
// the same node with
// `_kernel: "async"` (pdk::kAsyncKernelLabel): TensorFlow creates its
// asynchronous twin; `_pdk_launch` records the decision
// (src/graph/rewrites/async_launch.cc). Runs first and last. Always on: it
// only chooses between two registrations of the same kernel.
void LabelAsyncLaunches(GraphDef* graph, const RewriteContext& ctx,
                        const AsyncLaunchPolicy& policy);

}  // namespace pdk_graph

#endif  // PDK_SRC_GRAPH_REWRITES_REWRITES_H_
