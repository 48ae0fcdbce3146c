// PDK's graph optimizer, behind the Grappler C API
// (tensorflow/c/experimental/grappler/grappler.h).
//
// The GraphDef-level API is graph/graph_def.h (the kit's pdk/graph_def.h).
//
// TensorFlow calls `optimize_func` with a serialized GraphDef of a whole graph
// (every device's nodes; Grappler runs before partitioning) and takes back a
// serialized GraphDef. The kit's graph optimizer (pdk/graph_optimizer.h)
// parses it (pdk/graph_def.h), PDK runs the rewrites in src/graph/rewrites/ on
// the nodes placed on PDK, and the kit serializes the result. Malformed input
// is an error status, never a crash; on any error TensorFlow keeps the graph
// it had.
#ifndef PDK_SRC_GRAPH_OPTIMIZER_H_
#define PDK_SRC_GRAPH_OPTIMIZER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>

#include "pdk/graph_optimizer.h"
#include "pdk/status.h"
#include "tensorflow/c/experimental/grappler/grappler.h"

namespace pdk_graph {

struct OptimizeOptions {
  // The kit's optimizer context (pdk/graph_optimizer.h): the device type the
  // rewrites act on (OptimizerContext::on_device; "PDK") and the fetch, feed
  // and keep nodes (TF_GetNodesToPreserveList), which are never removed or
  // renamed, never swallowed into a fused node.
  pdk::OptimizerContext optimizer{"PDK", {}};
  // Log every rewrite that fired to stderr (PDK_GRAPH_REPORT=1).
  bool report = false;
  // Whether PDK registered a kernel for an op the rewrites emit; a rewrite
  // never emits an op without one (a build with PDK_KERNELS may leave it out).
  // Empty: every op is available.
  std::function<bool(const std::string& op)> kernel_available;
  // Optional rewrites switched off by name ("matmul_fusion", "pad_conv",
  // "conv_fusion", "adam_fusion", "elementwise_fusion", ...; "all" = every one). From PDK_GRAPH_REWRITES=0 (-> "all")
  // and PDK_GRAPH_DISABLE=<name>,<name> (read at each optimizer call).
  // Rewrites TensorFlow needs to run a graph on PDK at all (TensorList
  // gradients) cannot be switched off.
  std::unordered_set<std::string> disabled;
};

// Rewrites that fired, by pattern name ("MatMul+BiasAdd+Relu").
using RewriteCounts = std::map<std::string, uint64_t>;

// PDK's optimize_func (pdk::RunGraphOptimizer with PDK's rewrites), for tests;
// TF_InitGraph installs the same through InitGraph. `item` may be null: then
// nothing is preserved beyond what the graph itself shows.
void OptimizeFunc(void* optimizer, const TF_Buffer* graph_buf, const TF_GrapplerItem* item,
                  TF_Buffer* optimized_graph_buf, TF_Status* status);

// Fills TP_OptimizerRegistrationParams for device type `device_type`
// (TF_InitGraph; pdk::RegisterGraphOptimizer). `kernel_available` becomes OptimizeOptions::kernel_available
// for every call of OptimizeFunc.
void InitGraph(TP_OptimizerRegistrationParams* params, const char* device_type,
               std::function<bool(const std::string& op)> kernel_available, TF_Status* status);

// Process-wide counts of rewrites fired (tensorflow_pdk.graph_rewrite_counts()).
RewriteCounts GlobalRewriteCounts();
void ResetGlobalRewriteCounts();

}  // namespace pdk_graph

#endif  // PDK_SRC_GRAPH_OPTIMIZER_H_
