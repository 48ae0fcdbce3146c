#include "graph/optimizer.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <memory>
#include <string>
#include <unordered_map>

#include "graph/graph_def.h"
#include "graph/rewrites/rewrites.h"
#include "graph/strict_placement.h"
#include "pdk/env.h"
#include "pdk/graph_optimizer.h"

namespace pdk_graph {
namespace {

std::mutex g_counts_mu;
RewriteCounts* g_counts = new RewriteCounts;  // never destroyed (read at exit by Python)
// Set once by InitGraph, before TensorFlow can call OptimizeFunc.
auto* g_kernel_available = new std::function<bool(const std::string&)>;
auto* g_async_policy = new std::function<AsyncLaunchPolicy()>;

bool ReportEnabled() { return pdk::env::Flag("PDK_GRAPH_REPORT", false); }

// The optional rewrites, by the names PDK_GRAPH_DISABLE takes.
constexpr const char* kOptionalRewrites[] = {
    "identity_removal", "transpose_pairs",     "matmul_fusion", "pad_conv",
    "conv_fusion",      "maxpool_grad_fusion", "adam_fusion",   "elementwise_fusion"};

// PDK_GRAPH_REWRITES=0 -> {"all"}; PDK_GRAPH_DISABLE=a,b -> {"a", "b"}; names
// that are no optional rewrite are ignored, with one warning naming them, the
// known ones and the list used.
std::unordered_set<std::string> DisabledRewrites() {
  std::unordered_set<std::string> out;
  if (!pdk::env::Flag("PDK_GRAPH_REWRITES", true)) out.insert("all");
  const std::string list = pdk::env::Get("PDK_GRAPH_DISABLE");
  std::string item, unknown, used;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || list[i] == ',') {
      bool known = false;
      for (const char* name : kOptionalRewrites) known = known || item == name;
      if (known) {
        if (out.insert(item).second) used += (used.empty() ? "" : ",") + item;
      } else if (!item.empty()) {
        unknown += (unknown.empty() ? "'" : ", '") + item + "'";
      }
      item.clear();
    } else if (list[i] != ' ') {
      item += list[i];
    }
  }
  if (!unknown.empty()) {
    std::string names;
    for (const char* name : kOptionalRewrites)
      names += (names.empty() ? "" : ", ") + std::string(name);
    pdk::env::Warn("PDK_GRAPH_DISABLE", list,
                   "names no rewrite " + unknown + " (known: " + names + ")",
                   used.empty() ? "none: every rewrite on" : "PDK_GRAPH_DISABLE=" + used);
  }
  return out;
}

// PDK_GRAPH_DUMP=<dir>: each optimizer call writes the GraphDef it received
// (as parsed and serialized again: the same graph, fields in canonical order)
// and the one it returns, as <dir>/pdk_graph_<n>_{before,after}.pb (binary
// GraphDef; read with tf.compat.v1.GraphDef.FromString). A debugging aid: a
// file that cannot be written gives one warning (per directory) and the
// optimizer goes on.
void MaybeDump(const char* tag, int n, const GraphDef& graph) {
  const std::string dir = pdk::env::Get("PDK_GRAPH_DUMP");
  if (dir.empty()) return;
  const std::string path = dir + "/pdk_graph_" + std::to_string(n) + "_" + tag + ".pb";
  const std::string bytes = SerializeGraphDef(graph);
  errno = 0;
  FILE* f = std::fopen(path.c_str(), "wb");
  bool ok = f != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (f != nullptr) ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    const std::string why = errno != 0 ? std::strerror(errno) : "write failed";
    pdk::env::Warn("PDK_GRAPH_DUMP", dir, "cannot be written (" + path + ": " + why + ")",
                   "no dump");
  }
}

// PDK's optimizer (pdk::GraphOptimizerFn): its options from the environment,
// every rewrite, the process-wide counts.
pdk::Status RunPdkRewrites(GraphDef& graph, const pdk::OptimizerContext& ctx) {
  OptimizeOptions options;
  options.optimizer = ctx;
  options.report = ReportEnabled();
  options.disabled = DisabledRewrites();
  options.kernel_available = *g_kernel_available;
  if (*g_async_policy) options.async = (*g_async_policy)();
  // Input sizes for LabelAsyncLaunches: TensorFlow's static shape inference
  // of the graph as handed over, run only if a node may need it. A producer
  // a rewrite changed (another op under the same name) counts as unknown.
  std::unique_ptr<pdk::GraphProperties> props;
  std::unordered_map<std::string, std::string> inferred_op;
  bool needs_sizes = false;
  for (const NodeDef& n : graph.node)
    needs_sizes = needs_sizes || (options.async.ops.count(n.op) && ctx.on_device(n));
  if (needs_sizes && pdk::GraphProperties::Infer(ctx, &props).ok()) {
    for (const NodeDef& n : graph.node) inferred_op.emplace(n.name, n.op);
    options.async.inferred = [&](const TensorRef& ref, const std::string& op,
                                 pdk::TensorProperties* out) {
      auto it = inferred_op.find(ref.node);
      return it != inferred_op.end() && it->second == op && props->Output(ref.node, ref.port, out);
    };
  }
  static std::atomic<int> calls{0};
  const int call = calls++;
  MaybeDump("before", call, graph);
  RewriteCounts fired;
  PDK_RETURN_IF_ERROR(Optimize(&graph, options, &fired));
  MaybeDump("after", call, graph);
  if (!fired.empty()) {
    std::lock_guard<std::mutex> l(g_counts_mu);
    for (const auto& [pattern, n] : fired) (*g_counts)[pattern] += n;
  }
  return pdk::Status::OK();
}

}  // namespace

pdk::Status Optimize(GraphDef* graph, const OptimizeOptions& options,
                     RewriteCounts* fired) {
  RewriteCounts local;
  RewriteContext ctx{options.optimizer, options.report, fired ? fired : &local,
                     options.kernel_available};
  auto on = [&](const char* name) {
    return !options.disabled.count("all") && !options.disabled.count(name);
  };
  RunXlaCallsWithPdkKernels(graph, ctx);
  MoveInt32LoopStateToLoopDevice(graph, ctx);
  HoldBoolTensorListsAsFloat(graph, ctx);
  LabelAsyncLaunches(graph, ctx, options.async);  // before the rewrites change producers
  SplitFusedBatchNormEx(graph, ctx);
  RewriteResourceScatter(graph, ctx);
  PrepareParallelConcat(graph, ctx);
  if (on("identity_removal")) RemoveIdentities(graph, ctx);
  if (on("transpose_pairs")) CancelTransposes(graph, ctx);
  if (on("matmul_fusion")) FuseMatMulBiasAddActivation(graph, ctx);
  if (on("pad_conv")) FoldPadIntoConv(graph, ctx);
  if (on("conv_fusion")) FuseConv(graph, ctx);
  if (on("maxpool_grad_fusion")) FuseMaxPoolGradReluGrad(graph, ctx);
  if (on("adam_fusion")) FuseKerasAdam(graph, ctx);
  if (on("elementwise_fusion")) FuseElementwise(graph, ctx);
  RewriteTensorListGradients(graph, ctx);
  PlaceInt32ListElementsInHostMemory(graph, ctx);
  PlaceLogicalOpBoolsInHostMemory(graph, ctx);
  PlaceCpuInputsInHostMemory(graph, ctx);
  LabelAsyncLaunches(graph, ctx, options.async);  // the nodes the rewrites created
  if (StrictEnabled()) EnforceStrictPlacement(graph, options.optimizer.device_type, options.report);  // PDK_STRICT=1
  return pdk::Status::OK();
}

void OptimizeFunc(void*, const TF_Buffer* graph_buf, const TF_GrapplerItem* item,
                  TF_Buffer* optimized_graph_buf, TF_Status* status) {
  pdk::RunGraphOptimizer(RunPdkRewrites, "PDK", graph_buf, item, optimized_graph_buf, status);
}

void InitGraph(TP_OptimizerRegistrationParams* params, const char* device_type,
               std::function<bool(const std::string& op)> kernel_available,
               std::function<AsyncLaunchPolicy()> async_policy, TF_Status* status) {
  *g_kernel_available = std::move(kernel_available);
  *g_async_policy = std::move(async_policy);
  // Every TensorFlow pass stays at its default: see docs/architecture.md,
  // "Graph optimizer" (TensorFlow's remapper fuses nodes placed on PDK only
  // into _FusedBatchNormEx, which SplitFusedBatchNormEx undoes, and an Off
  // here would switch a pass off for every device in the process).
  pdk::RegisterGraphOptimizer(params, device_type, RunPdkRewrites, status);
}

RewriteCounts GlobalRewriteCounts() {
  std::lock_guard<std::mutex> l(g_counts_mu);
  return *g_counts;
}

void ResetGlobalRewriteCounts() {
  std::lock_guard<std::mutex> l(g_counts_mu);
  g_counts->clear();
}

}  // namespace pdk_graph
