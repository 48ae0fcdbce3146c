// _FusedBatchNormEx on PDK -> FusedBatchNormV3 [+ AddV2(side input)] [+ activation]
//
// TensorFlow's own remapper (grappler/optimizers/remapper.cc), which runs
// before PDK's optimizer, treats every device that is not a GPU as a CPU for
// FusedBatchNorm[V3] + [Add +] Relu and emits _FusedBatchNormEx, for which
// PDK has no kernel: such a graph on PDK would fail with "No registered
// '_FusedBatchNormEx' OpKernel for 'PDK' devices". This rewrite undoes that
// fusion for nodes placed on PDK (the convolution fusion may then take the
// pieces, src/graph/rewrites/conv_fusion.cc):
//
//   n = _FusedBatchNormEx(x, scale, offset, mean, variance, [side];
//                         activation_mode, num_side_inputs, ...)
//     => n/_pdk_batch_norm = FusedBatchNormV3(x, scale, offset, mean, variance)
//        n/_pdk_add        = AddV2(n/_pdk_batch_norm, side)   (num_side_inputs = 1)
//        n                 = Relu | Relu6 | Elu | LeakyRelu (activation_mode)
//   The last node keeps the name `n` (its output 0 is n's output 0), device and
//   "_" attributes; readers of n:1 .. n:5 (batch statistics, reserve spaces)
//   are rewired to n/_pdk_batch_norm. With activation_mode "Identity" the Add
//   (or, with no side input, the batch norm itself) is the last node.
// Control inputs go to the batch norm. Left alone (and failing as before):
// activation modes or side-input counts TensorFlow may add later, and names
// the new nodes would collide with.
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {

void SplitFusedBatchNormEx(GraphDef* graph, const RewriteContext& ctx) {
  std::unordered_set<std::string> names;
  bool any = false;
  for (const NodeDef& n : graph->node) {
    names.insert(n.name);
    any = any || (n.op == "_FusedBatchNormEx" && ctx.on_device(n));
  }
  if (!any || !ctx.can_emit("FusedBatchNormV3")) return;

  std::vector<NodeDef> added;
  std::unordered_map<std::string, std::string> bn_of;  // n -> n/_pdk_batch_norm
  for (NodeDef& n : graph->node) {
    if (n.op != "_FusedBatchNormEx" || !ctx.on_device(n)) continue;
    const std::string mode = n.StringAttr("activation_mode", "Identity");
    int64_t num_side = 0;
    auto side_attr = n.attr.find("num_side_inputs");
    if (side_attr != n.attr.end() && !side_attr->second.GetInt(&num_side)) continue;
    if (num_side != 0 && num_side != 1) continue;
    if (mode != "Identity" && mode != "Relu" && mode != "Relu6" && mode != "Elu" &&
        mode != "LeakyRelu")
      continue;
    if (mode != "Identity" && !ctx.can_emit(mode)) continue;
    if (num_side == 1 && !ctx.can_emit("AddV2")) continue;
    std::vector<std::string> regular, control;
    SplitInputs(n, &regular, &control);
    if (regular.size() != static_cast<size_t>(5 + num_side)) continue;
    const std::string bn_name = n.name + "/_pdk_batch_norm";
    const std::string add_name = n.name + "/_pdk_add";
    if (names.count(bn_name) || names.count(add_name)) continue;

    NodeDef bn;
    bn.name = bn_name;
    bn.op = "FusedBatchNormV3";
    bn.device = n.device;
    bn.input.assign(regular.begin(), regular.begin() + 5);
    bn.input.insert(bn.input.end(), control.begin(), control.end());
    for (const char* key :
         {"T", "U", "epsilon", "exponential_avg_factor", "data_format", "is_training"}) {
      auto it = n.attr.find(key);
      if (it != n.attr.end()) bn.attr[key] = it->second;
    }
    std::vector<std::string> replaced{n.name};
    std::map<std::string, AttrValue> root_attr;
    for (const auto& [key, value] : n.attr)
      if (!key.empty() && key[0] == '_') root_attr[key] = value;
    root_attr["T"] = n.attr["T"];
    std::string last = bn_name;
    if (num_side == 1 && mode != "Identity") {  // a separate Add, then the activation
      NodeDef add;
      add.name = add_name;
      add.op = "AddV2";
      add.device = n.device;
      add.input = {bn_name, regular[5]};
      add.attr["T"] = n.attr["T"];
      last = add_name;
      added.push_back(std::move(add));
    }
    if (mode != "Identity") {
      if (mode == "LeakyRelu")
        root_attr["alpha"] = AttrValue::Float(n.FloatAttr("leakyrelu_alpha", 0.2f));
      n.op = mode;
      n.input = {last};
    } else if (num_side == 1) {  // the Add takes n's place
      n.op = "AddV2";
      n.input = {bn_name, regular[5]};
    } else {  // a plain batch norm: n itself, no new node, no rewiring
      n.op = "FusedBatchNormV3";
      for (auto& [key, value] : bn.attr) root_attr[key] = value;
      n.attr = std::move(root_attr);
      ctx.Fired("_FusedBatchNormEx->FusedBatchNormV3", "'" + n.name + "'", replaced);
      continue;
    }
    n.attr = std::move(root_attr);
    bn_of[n.name] = bn_name;
    names.insert(bn_name);
    names.insert(add_name);
    added.push_back(std::move(bn));
    ctx.Fired("_FusedBatchNormEx->FusedBatchNormV3" + std::string(num_side ? "+AddV2" : "") +
                  (mode != "Identity" ? "+" + mode : ""),
              "'" + n.name + "'", replaced);
  }
  if (bn_of.empty()) return;
  // Readers of n:1 .. n:5 read the batch norm now.
  for (NodeDef& n : graph->node) {
    for (std::string& in : n.input) {
      if (in.empty() || in[0] == '^') continue;
      const TensorRef ref = ParseInput(in);
      auto it = bn_of.find(ref.node);
      if (it != bn_of.end() && ref.port >= 1) in = it->second + ":" + std::to_string(ref.port);
    }
  }
  for (NodeDef& n : added) graph->node.push_back(std::move(n));
}

}  // namespace pdk_graph
