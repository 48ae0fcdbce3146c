// ReluGrad(MaxPoolGrad(x, y, dy), x) -> _PdkMaxPoolGradReluGrad(x, y, dy)
//
//     x   y   dy                      x   y   dy
//      \  |  /                         \  |  /
//    MaxPoolGrad    x       =>   _PdkMaxPoolGradReluGrad  (named like the
//            \     /                       |              ReluGrad, so its
//            ReluGrad                  consumers          consumers still
//               |                                         read "<name>:0")
//           consumers
//
// The backward pass of Conv2D(activation="relu") + MaxPooling2D (Keras) or
// tf.nn.relu + tf.nn.max_pool2d: TensorFlow's MaxPool gradient reads the
// pool's input x, which is the Relu's output, and the Relu gradient reads that
// same x as its features (tensorflow/python/ops/nn_grad.py). The fused kernel
// (src/kernels/nn/pooling.cc, MaxPoolGradOp) computes MaxPoolGrad's result
// and multiplies it by (x > 0 ? 1 : 0) in the same pass over x: one pass over
// dx and x fewer, and no [N,H,W,C] intermediate. Same bits as the two ops.
//
// Fires only when
// - both nodes are on the same PDK device with the same T;
// - ReluGrad's features input is MaxPoolGrad's orig_input (the same tensor);
// - MaxPoolGrad (not MaxPoolGradV2, whose window is an input) has
//   data_format NHWC, and its output has ReluGrad's gradients input as its
//   only consumer, no control consumer, and MaxPoolGrad is no fetch, feed or
//   kept node.
// The ReluGrad node becomes the fused node (its name, device and internal
// "_" attributes stay; it takes MaxPoolGrad's attributes); control inputs of
// both move to it; MaxPoolGrad goes. Idempotent: afterwards no ReluGrad reads
// a MaxPoolGrad it could fuse with.
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

constexpr char kFusedOp[] = "_PdkMaxPoolGradReluGrad";

// The same tensor: "a" and "a:0" name one output.
bool SameTensor(const std::string& a, const std::string& b) {
  const TensorRef ra = ParseInput(a), rb = ParseInput(b);
  return !ra.is_control() && ra.node == rb.node && ra.port == rb.port;
}

}  // namespace

void FuseMaxPoolGradReluGrad(GraphDef* graph, const RewriteContext& ctx) {
  if (!ctx.can_emit(kFusedOp)) return;
  GraphView view(*graph);
  if (view.has_duplicate_names()) return;
  struct Match {
    std::string relu_grad, max_pool_grad;
  };
  std::vector<Match> matches;
  for (const NodeDef& rg : graph->node) {
    if (rg.op != "ReluGrad" || !ctx.on_device(rg) || view.num_regular_inputs(rg) != 2) continue;
    int port = 0;
    const NodeDef* mpg = view.regular_fanin(rg, 0, &port);
    if (mpg == nullptr || port != 0 || mpg->op != "MaxPoolGrad" || mpg->device != rg.device ||
        mpg->TypeAttr("T") != rg.TypeAttr("T") || view.num_regular_inputs(*mpg) != 3 ||
        mpg->StringAttr("data_format", "NHWC") != "NHWC")
      continue;
    if (!SameTensor(rg.input[1], mpg->input[0])) continue;
    if (view.num_regular_fanouts(*mpg) != 1 || !view.control_fanouts(*mpg).empty() ||
        ctx.preserved(mpg->name))
      continue;
    matches.push_back({rg.name, mpg->name});
  }
  if (matches.empty()) return;

  const std::unordered_map<std::string, size_t> index = IndexByName(*graph);
  std::vector<bool> remove(graph->node.size(), false);
  for (const Match& m : matches) {
    const size_t rg_i = index.at(m.relu_grad), mpg_i = index.at(m.max_pool_grad);
    const NodeDef& mpg = graph->node[mpg_i];
    std::vector<std::string> mpg_in, rg_in, control;
    SplitInputs(mpg, &mpg_in, &control);
    SplitInputs(graph->node[rg_i], &rg_in, &control);
    std::vector<std::string> inputs = mpg_in;
    std::unordered_set<std::string> seen;
    for (const std::string& c : control)
      if (c.substr(1) != m.max_pool_grad && seen.insert(c).second) inputs.push_back(c);
    std::map<std::string, AttrValue> attr;
    for (const auto& [key, value] : mpg.attr)
      if (key.empty() || key[0] != '_') attr[key] = value;
    NodeDef& root = graph->node[rg_i];
    for (const auto& [key, value] : root.attr)
      if (!key.empty() && key[0] == '_') attr[key] = value;
    root.op = kFusedOp;
    root.input = std::move(inputs);
    root.attr = std::move(attr);
    remove[mpg_i] = true;
    ctx.Fired("MaxPoolGrad+ReluGrad", std::string(kFusedOp) + " '" + root.name + "'",
              {m.max_pool_grad, m.relu_grad});
  }
  RemoveNodes(graph, remove);
}

}  // namespace pdk_graph
