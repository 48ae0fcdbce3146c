// MatMul + BiasAdd [+ Relu | Relu6 | Elu | LeakyRelu | Tanh | Sigmoid]
//   -> _PdkFusedMatMul(a, b, bias; transpose_b, activation, leakyrelu_alpha)
//
//        a   b                     a   b   bias
//         \ /                       \  |  /
//        MatMul   bias      =>   _PdkFusedMatMul   (named like the last node
//            \   /                      |           of the pattern, so its
//           BiasAdd                 consumers       consumers still read
//              |                                    "<name>:0")
//          [Activation]
//              |
//          consumers
//
// Fires only when
// - every node of the pattern is on the same PDK device and has T = float32;
// - MatMul has transpose_a = false (the fused op's shape function can only
//   read type attributes through the C API, so it derives the output shape
//   [a.dim0, bias.dim0] without one);
// - every intermediate output has exactly one consumer — the next node of the
//   pattern — and no control consumer, and no intermediate node is a fetch,
//   feed or kept node: nothing outside the pattern ever read a value the fused
//   op does not produce. The last node keeps its name, device and output, so
//   it may have any consumers (e.g. ReluGrad reading Relu's output in a
//   training graph) and may be a fetch node.
// The activation is fused only when BiasAdd's output goes to it alone;
// otherwise MatMul + BiasAdd fuse and the activation stays as it was.
// Control inputs of all replaced nodes move to the fused node.
// Idempotent: the result contains no MatMul -> BiasAdd edge it could match.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

constexpr char kFusedOp[] = "_PdkFusedMatMul";

bool IsFusableActivation(const std::string& op) {
  return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu" || op == "Tanh" ||
         op == "Sigmoid";
}

bool IsFloatOnPdk(const NodeDef& n) {
  return GraphView::IsOnPdk(n) && n.TypeAttr("T") == DT_FLOAT;
}

// Output 0 of `n` goes to exactly one input slot, nowhere else (no other
// port, no control edge), and `n` is not a fetch/feed/keep node.
bool FeedsOnlyOneSlot(const GraphView& view, const NodeDef& n,
                      const RewriteContext& ctx) {
  return view.num_regular_fanouts(n) == 1 && view.regular_fanouts(n, 0).size() == 1 &&
         view.control_fanouts(n).empty() && !ctx.preserved(n.name);
}

struct Match {
  std::string matmul, bias_add, activation;  // activation may be empty
  const std::string& root() const { return activation.empty() ? bias_add : activation; }
};

std::vector<Match> FindMatches(const GraphDef& graph, const RewriteContext& ctx) {
  std::vector<Match> matches;
  GraphView view(graph);
  if (view.has_duplicate_names()) return matches;  // an invalid graph: touch nothing
  for (const NodeDef& bias_add : graph.node) {
    if (bias_add.op != "BiasAdd" || !IsFloatOnPdk(bias_add)) continue;
    if (view.num_regular_inputs(bias_add) != 2) continue;
    int port = -1;
    const NodeDef* matmul = view.regular_fanin(bias_add, 0, &port);
    if (matmul == nullptr || port != 0 || matmul->op != "MatMul") continue;
    if (!IsFloatOnPdk(*matmul) || matmul->device != bias_add.device) continue;
    if (matmul->BoolAttr("transpose_a", false)) continue;
    if (view.num_regular_inputs(*matmul) != 2) continue;
    if (!FeedsOnlyOneSlot(view, *matmul, ctx)) continue;
    // MatMul's output is rank 2, whose channel dimension is the last one for
    // both data formats: BiasAdd(NHWC) and BiasAdd(NCHW) add along it alike.

    Match m{matmul->name, bias_add.name, ""};
    if (FeedsOnlyOneSlot(view, bias_add, ctx)) {
      const Fanout& out = view.regular_fanouts(bias_add, 0).front();
      const NodeDef& act = *out.consumer;
      if (IsFusableActivation(act.op) && out.input_index == 0 &&
          view.num_regular_inputs(act) == 1 && IsFloatOnPdk(act) &&
          act.device == bias_add.device)
        m.activation = act.name;
    }
    matches.push_back(std::move(m));
  }
  return matches;
}

void SplitInputs(const NodeDef& n, std::vector<std::string>* regular,
                 std::vector<std::string>* control) {
  for (const std::string& in : n.input) {
    if (!in.empty() && in[0] == '^') control->push_back(in);
    else regular->push_back(in);
  }
}

}  // namespace

void FuseMatMulBiasAddActivation(GraphDef* graph, const RewriteContext& ctx) {
  if (!ctx.can_emit(kFusedOp)) return;
  const std::vector<Match> matches = FindMatches(*graph, ctx);
  if (matches.empty()) return;

  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < graph->node.size(); ++i) index.emplace(graph->node[i].name, i);
  std::vector<bool> remove(graph->node.size(), false);

  for (const Match& m : matches) {
    const size_t mm_i = index.at(m.matmul), ba_i = index.at(m.bias_add);
    const bool has_act = !m.activation.empty();
    const size_t act_i = has_act ? index.at(m.activation) : 0;
    const NodeDef& mm = graph->node[mm_i];
    const NodeDef& ba = graph->node[ba_i];

    std::vector<std::string> mm_in, ba_in, act_in, control;
    SplitInputs(mm, &mm_in, &control);
    SplitInputs(ba, &ba_in, &control);
    if (has_act) SplitInputs(graph->node[act_i], &act_in, &control);
    // Control inputs: the union over the replaced nodes, in order, once each.
    std::vector<std::string> controls;
    std::unordered_set<std::string> seen;
    for (const std::string& c : control) {
      const std::string name = c.substr(1);
      if (name == m.matmul || name == m.bias_add || name == m.activation) continue;
      if (seen.insert(c).second) controls.push_back(c);
    }

    std::vector<std::string> inputs{mm_in[0], mm_in[1], ba_in[1]};
    inputs.insert(inputs.end(), controls.begin(), controls.end());
    std::map<std::string, AttrValue> attr;
    attr["T"] = AttrValue::Type(DT_FLOAT);
    attr["transpose_b"] = AttrValue::Bool(mm.BoolAttr("transpose_b", false));
    std::string activation = "None";
    float alpha = 0.2f;  // LeakyRelu's default (tensorflow/core/ops/nn_ops.cc)
    if (has_act) {
      const NodeDef& act = graph->node[act_i];
      activation = act.op;
      if (activation == "LeakyRelu") alpha = act.FloatAttr("alpha", alpha);
    }
    attr["activation"] = AttrValue::String(activation);
    attr["leakyrelu_alpha"] = AttrValue::Float(alpha);

    // The root keeps its name, device, internal ("_"-prefixed) attributes and
    // any fields PDK does not model (debug info, full type): edit it in place.
    NodeDef& root = graph->node[has_act ? act_i : ba_i];
    for (const auto& [key, value] : root.attr)
      if (!key.empty() && key[0] == '_') attr[key] = value;
    root.op = kFusedOp;
    root.input = std::move(inputs);
    root.attr = std::move(attr);

    remove[mm_i] = true;
    if (has_act) remove[ba_i] = true;
    std::vector<std::string> replaced{m.matmul, m.bias_add};
    if (has_act) replaced.push_back(m.activation);
    std::string pattern = "MatMul+BiasAdd";
    if (has_act) pattern += "+" + activation;
    ctx.Fired(pattern, std::string(kFusedOp) + " '" + root.name + "'", replaced);
  }

  // Drop the replaced nodes, keeping the order of the others.
  size_t w = 0;
  for (size_t r = 0; r < graph->node.size(); ++r) {
    if (remove[r]) continue;
    if (w != r) graph->node[w] = std::move(graph->node[r]);
    ++w;
  }
  graph->node.resize(w);
}

}  // namespace pdk_graph
