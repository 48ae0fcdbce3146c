// HELLO's graph optimizer (pdk/graph_optimizer.h), one rewrite on nodes placed
// on HELLO:
//
//   HelloScale(HelloScale(x, factor=a), factor=b)  ->  HelloScale(x, factor=a*b)
//
// one kernel launch instead of two (the product is rounded once where the
// chain rounds twice). The inner node goes when nothing else reads it and it is
// no fetch, feed or keep node. hello_scale_folds() counts folds.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "hello.h"
#include "pdk/graph_optimizer.h"

namespace hello {

std::atomic<uint64_t> g_folds{0};

// A HelloScale on the optimizer's device type with no control inputs (a fold
// then drops no dependency).
bool IsScale(const pdk::NodeDef& n, const pdk::OptimizerContext& ctx) {
  return n.op == "HelloScale" && ctx.on_device(n) && n.input.size() == 1;
}

pdk::Status FoldScales(pdk::GraphDef& graph, const pdk::OptimizerContext& ctx) {
  std::unordered_map<std::string, pdk::NodeDef*> by_name;
  for (pdk::NodeDef& n : graph.node) by_name[n.name] = &n;
  std::unordered_set<std::string> folded;
  for (pdk::NodeDef& n : graph.node) {
    if (!IsScale(n, ctx)) continue;
    // Follow the chain up; at most one step per node (a cycle ends it).
    for (size_t steps = 0; steps < graph.node.size(); ++steps) {
      const pdk::TensorRef in = pdk::ParseInput(n.input[0]);
      auto it = by_name.find(in.node);
      if (in.port != 0 || it == by_name.end() || it->second == &n) break;
      const pdk::NodeDef& inner = *it->second;
      if (!IsScale(inner, ctx) || inner.device != n.device) break;
      const float factor = inner.FloatAttr("factor", 2.0f) * n.FloatAttr("factor", 2.0f);
      n.attr["factor"] = pdk::AttrValue::Float(factor);
      n.input[0] = inner.input[0];
      folded.insert(inner.name);
      ++g_folds;
    }
  }
  // Drop the folded nodes nothing reads any more.
  std::unordered_set<std::string> read;
  for (const pdk::NodeDef& n : graph.node)
    for (const std::string& in : n.input) read.insert(pdk::ParseInput(in).node);
  auto dead = [&](const pdk::NodeDef& n) {
    return folded.count(n.name) && !read.count(n.name) && !ctx.preserved(n.name);
  };
  graph.node.erase(std::remove_if(graph.node.begin(), graph.node.end(), dead), graph.node.end());
  return pdk::Status::OK();
}

}  // namespace hello

HELLO_EXPORT void TF_InitGraph(TP_OptimizerRegistrationParams* params, TF_Status* status) {
  pdk::RegisterGraphOptimizer(params, hello::kDeviceType, hello::FoldScales, status);
}

// The number of folds so far (Python: ctypes.CDLL(path).hello_scale_folds()).
HELLO_EXPORT uint64_t hello_scale_folds() { return hello::g_folds.load(); }
