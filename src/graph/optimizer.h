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
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pdk/graph_def.h"
#include "pdk/graph_optimizer.h"
#include "pdk/status.h"
#include "tensorflow/c/experimental/grappler/grappler.h"

namespace pdk_graph {

// Which nodes of an op with an asynchronous twin (pdk::KernelDef::Async) may
// run on a launcher thread (LabelAsyncLaunches).
struct AsyncLaunchPolicy {
  // Ops registered with an asynchronous twin (RegisteredKernel::async), each
  // with the type constraints of those registrations (attribute, dtype; one
  // list per registration): a node gets the twin only if its type attributes
  // match one of them (PDK_STRICT=1 also places ops of other dtypes on PDK,
  // which have no twin). Empty: none (PDK_ASYNC=0).
  std::unordered_map<std::string, std::vector<std::vector<std::pair<std::string, int>>>> ops;
  // Launches with inputs of fewer bytes stay synchronous
  // (PDK_ASYNC_MIN_BYTES, the launcher's threshold).
  int64_t min_bytes = 0;
  // TensorFlow's static shape inference of tensor `ref`, whose producer now
  // has op `producer_op`: false if it has none for it (a node a rewrite
  // created or changed). Empty: none known.
  std::function<bool(const pdk::TensorRef& ref, const std::string& producer_op,
                     pdk::TensorProperties* out)>
      inferred;
};

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
  // Which nodes get an Async kernel's asynchronous twin (LabelAsyncLaunches).
  // Empty ops (the default): none.
  AsyncLaunchPolicy async;
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
// for every call of OptimizeFunc; `async_policy`, called at each OptimizeFunc
// call (the kernels register after TF_InitGraph), gives OptimizeOptions::async
// without `inferred`, which each call fills from TensorFlow's shape
// inference of its graph.
void InitGraph(TP_OptimizerRegistrationParams* params, const char* device_type,
               std::function<bool(const std::string& op)> kernel_available,
               std::function<AsyncLaunchPolicy()> async_policy, TF_Status* status);

// Process-wide counts of rewrites fired (tensorflow_pdk.graph_rewrite_counts()).
RewriteCounts GlobalRewriteCounts();
void ResetGlobalRewriteCounts();

}  // namespace pdk_graph

#endif  // PDK_SRC_GRAPH_OPTIMIZER_H_
