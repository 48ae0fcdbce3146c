// Convolution rewrites (both NHWC, float32, every node on one PDK device):
//
// 1. FoldPadIntoConv:
//      Pad(x, paddings: Const) -> Conv2D | DepthwiseConv2dNative (VALID or EXPLICIT)
//        => the convolution with padding = EXPLICIT and explicit_paddings =
//           its own + Pad's (no new op; PDK's kernels implement EXPLICIT,
//           src/kernels/nn/window.h)
//    when paddings is a Const int32/int64 [4, 2] with zeros for N and C and no
//    negative entry, Pad's output goes to the convolution's input 0 alone and
//    Pad is not a fetch/feed/keep node. (Pad pads with zeros; PadV2 and
//    MirrorPad are left alone.) The Const is dropped too when Pad was its only
//    consumer and it is not preserved.
//
// 2. FuseConv:
//      Conv2D | DepthwiseConv2dNative
//        -> BiasAdd(·, bias)  |  FusedBatchNormV2/V3(·, scale, offset, mean, variance;
//                                                    is_training = false)
//        [-> Add | AddV2(·, side)]     (either operand order)
//        [-> Relu | Relu6 | Elu | LeakyRelu | Tanh | Sigmoid]
//      => _PdkFusedConv2D(input, filter, bias | scale, offset, mean, variance [, side];
//                         depthwise, normalization, has_side_input, epsilon,
//                         activation, leakyrelu_alpha, + the convolution's
//                         strides, padding, explicit_paddings, dilations)
//         (src/kernels/nn/fused_conv2d.cc), named like the last node of the
//         pattern, so its consumers still read "<name>:0".
//    Fires only when every intermediate output (the convolution's, the
//    BiasAdd/FusedBatchNorm's, the Add's when an activation follows) has
//    exactly one consumer — the next node of the pattern, reading output 0 —
//    no control consumer, and is not a fetch/feed/keep node; FusedBatchNorm's
//    other outputs (batch mean/variance, reserve spaces) must be unused. In a
//    training graph a BiasAdd/Add output that LeakyReluGrad reads keeps the
//    activation out of the fusion; ReluGrad & co. read the activation's output,
//    which is the fused node's. The pattern's last node keeps its name, device,
//    and "_" attributes, so it may have any consumers and be a fetch node.
//    Control inputs of all replaced nodes move to the fused node.
//
// Both are idempotent: their results contain no Pad -> convolution or
// convolution -> BiasAdd/FusedBatchNorm edge they could match again.
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

constexpr char kFusedOp[] = "_PdkFusedConv2D";

bool IsConv(const std::string& op) { return op == "Conv2D" || op == "DepthwiseConv2dNative"; }

bool IsFusableActivation(const std::string& op) {
  return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu" || op == "Tanh" ||
         op == "Sigmoid";
}

// A float32 node on this optimizer's device.
bool IsFloatOnDevice(const RewriteContext& ctx, const NodeDef& n) {
  return ctx.on_device(n) && n.TypeAttr("T") == DT_FLOAT;
}

bool IsNhwc(const NodeDef& n) { return n.StringAttr("data_format", "NHWC") == "NHWC"; }

// Output 0 of `n` goes to exactly one input slot, nowhere else (no other
// port, no control edge), and `n` is not a fetch/feed/keep node.
bool FeedsOnlyOneSlot(const GraphView& view, const NodeDef& n, const RewriteContext& ctx) {
  return view.num_regular_fanouts(n) == 1 && view.regular_fanouts(n, 0).size() == 1 &&
         view.control_fanouts(n).empty() && !ctx.preserved(n.name);
}

// The sole consumer of `n`'s output 0, if FeedsOnlyOneSlot; else nullptr.
const Fanout* SoleFanout(const GraphView& view, const NodeDef& n, const RewriteContext& ctx) {
  if (!FeedsOnlyOneSlot(view, n, ctx)) return nullptr;
  return &view.regular_fanouts(n, 0).front();
}

// The control inputs of `nodes`, in order, once each, without those naming a
// node in `skip`.
std::vector<std::string> MergeControls(const std::vector<const NodeDef*>& nodes,
                                       const std::unordered_set<std::string>& skip) {
  std::vector<std::string> regular, control, out;
  for (const NodeDef* n : nodes) SplitInputs(*n, &regular, &control);
  std::unordered_set<std::string> seen;
  for (const std::string& c : control)
    if (!skip.count(c.substr(1)) && seen.insert(c).second) out.push_back(c);
  return out;
}

// ------------------------------------------------------------ Pad folding

struct PadMatch {
  std::string pad, conv, paddings_const;
  std::vector<int64_t> explicit_paddings;  // the convolution's new attribute
  bool drop_const;
};

std::vector<PadMatch> FindPadMatches(const GraphDef& graph, const RewriteContext& ctx) {
  std::vector<PadMatch> matches;
  GraphView view(graph);
  if (view.has_duplicate_names()) return matches;
  for (const NodeDef& conv : graph.node) {
    if (!IsConv(conv.op) || !IsFloatOnDevice(ctx, conv) || !IsNhwc(conv)) continue;
    if (view.num_regular_inputs(conv) != 2) continue;
    const std::string padding = conv.StringAttr("padding", "");
    if (padding != "VALID" && padding != "EXPLICIT") continue;
    std::vector<int64_t> pads(8, 0);
    if (padding == "EXPLICIT") {
      auto it = conv.attr.find("explicit_paddings");
      if (it == conv.attr.end() || !it->second.GetIntList(&pads) || pads.size() != 8) continue;
    }
    int port = -1;
    const NodeDef* pad = view.regular_fanin(conv, 0, &port);
    if (pad == nullptr || port != 0 || pad->op != "Pad" || !IsFloatOnDevice(ctx, *pad)) continue;
    if (pad->device != conv.device || view.num_regular_inputs(*pad) != 2) continue;
    if (!FeedsOnlyOneSlot(view, *pad, ctx)) continue;
    const NodeDef* paddings = view.regular_fanin(*pad, 1, &port);
    if (paddings == nullptr || port != 0 || paddings->op != "Const") continue;
    auto value = paddings->attr.find("value");
    std::vector<int64_t> p, shape;
    if (value == paddings->attr.end() || !value->second.GetIntTensor(&p, &shape)) continue;
    if (shape != std::vector<int64_t>{4, 2}) continue;
    bool ok = p[0] == 0 && p[1] == 0 && p[6] == 0 && p[7] == 0;
    for (int64_t v : p) ok = ok && v >= 0;
    if (!ok) continue;
    for (int i = 2; i < 6; ++i) pads[i] += p[i];
    const bool drop_const = view.num_regular_fanouts(*paddings) == 1 &&
                            view.control_fanouts(*paddings).empty() &&
                            !ctx.preserved(paddings->name);
    matches.push_back({pad->name, conv.name, paddings->name, pads, drop_const});
  }
  return matches;
}

// ----------------------------------------------------------- Conv fusion

struct ConvMatch {
  std::string conv, norm, add, activation;  // add, activation may be empty
  int side_index = -1;                       // Add's input slot of the side input
  const std::string& root() const {
    return !activation.empty() ? activation : !add.empty() ? add : norm;
  }
};

bool IsInferenceBatchNorm(const GraphView& view, const NodeDef& n) {
  if (n.op != "FusedBatchNormV3" && n.op != "FusedBatchNormV2") return false;
  if (n.TypeAttr("U") != DT_FLOAT || n.BoolAttr("is_training", true) || !IsNhwc(n)) return false;
  if (view.num_regular_inputs(n) != 5) return false;
  // Only output 0 (y) may be read.
  return view.num_regular_fanouts(n) == static_cast<int>(view.regular_fanouts(n, 0).size());
}

std::vector<ConvMatch> FindConvMatches(const GraphDef& graph, const RewriteContext& ctx) {
  std::vector<ConvMatch> matches;
  GraphView view(graph);
  if (view.has_duplicate_names()) return matches;
  auto same_place = [&ctx](const NodeDef& a, const NodeDef& b) {
    return IsFloatOnDevice(ctx, b) && a.device == b.device;
  };
  // An Add may join two matched chains; the first one takes it.
  std::unordered_set<std::string> claimed;
  for (const NodeDef& conv : graph.node) {
    if (!IsConv(conv.op) || !IsFloatOnDevice(ctx, conv) || !IsNhwc(conv)) continue;
    if (view.num_regular_inputs(conv) != 2) continue;
    const Fanout* f = SoleFanout(view, conv, ctx);
    if (f == nullptr || f->input_index != 0) continue;
    const NodeDef& norm = *f->consumer;
    if (!same_place(conv, norm)) continue;
    const bool bias = norm.op == "BiasAdd" && IsNhwc(norm) && view.num_regular_inputs(norm) == 2;
    if (!bias && !IsInferenceBatchNorm(view, norm)) continue;
    ConvMatch m{conv.name, norm.name, "", "", -1};

    const NodeDef* last = &norm;
    f = SoleFanout(view, norm, ctx);
    if (f != nullptr && (f->consumer->op == "Add" || f->consumer->op == "AddV2") &&
        same_place(norm, *f->consumer) && view.num_regular_inputs(*f->consumer) == 2 &&
        claimed.insert(f->consumer->name).second) {
      m.add = f->consumer->name;
      m.side_index = 1 - f->input_index;
      last = f->consumer;
      f = SoleFanout(view, *last, ctx);
    }
    if (f != nullptr && IsFusableActivation(f->consumer->op) && f->input_index == 0 &&
        view.num_regular_inputs(*f->consumer) == 1 && same_place(*last, *f->consumer))
      m.activation = f->consumer->name;
    matches.push_back(std::move(m));
  }
  return matches;
}

}  // namespace

void FoldPadIntoConv(GraphDef* graph, const RewriteContext& ctx) {
  const std::vector<PadMatch> matches = FindPadMatches(*graph, ctx);
  if (matches.empty()) return;
  const auto index = IndexByName(*graph);
  std::vector<bool> remove(graph->node.size(), false);
  for (const PadMatch& m : matches) {
    const size_t pad_i = index.at(m.pad), conv_i = index.at(m.conv);
    const NodeDef& pad = graph->node[pad_i];
    NodeDef& conv = graph->node[conv_i];
    std::vector<std::string> pad_in, conv_in, unused;
    SplitInputs(pad, &pad_in, &unused);
    SplitInputs(conv, &conv_in, &unused);
    std::vector<std::string> inputs{pad_in[0], conv_in[1]};
    for (const std::string& c : MergeControls({&conv, &pad}, {m.pad}))
      inputs.push_back(c);
    conv.input = std::move(inputs);
    conv.attr["padding"] = AttrValue::String("EXPLICIT");
    conv.attr["explicit_paddings"] = AttrValue::IntList(m.explicit_paddings);
    remove[pad_i] = true;
    std::vector<std::string> replaced{m.pad};
    if (m.drop_const) {
      remove[index.at(m.paddings_const)] = true;
      replaced.push_back(m.paddings_const);
    }
    ctx.Fired("Pad+" + conv.op, conv.op + " '" + conv.name + "' (padding EXPLICIT)", replaced);
  }
  RemoveNodes(graph, remove);
}

void FuseConv(GraphDef* graph, const RewriteContext& ctx) {
  if (!ctx.can_emit(kFusedOp)) return;
  const std::vector<ConvMatch> matches = FindConvMatches(*graph, ctx);
  if (matches.empty()) return;
  const auto index = IndexByName(*graph);
  std::vector<bool> remove(graph->node.size(), false);

  for (const ConvMatch& m : matches) {
    const NodeDef& conv = graph->node[index.at(m.conv)];
    const NodeDef& norm = graph->node[index.at(m.norm)];
    const NodeDef* add = m.add.empty() ? nullptr : &graph->node[index.at(m.add)];
    const NodeDef* act = m.activation.empty() ? nullptr : &graph->node[index.at(m.activation)];
    const bool batch_norm = norm.op != "BiasAdd";

    std::vector<std::string> conv_in, norm_in, add_in, unused;
    SplitInputs(conv, &conv_in, &unused);
    SplitInputs(norm, &norm_in, &unused);
    std::vector<std::string> inputs{conv_in[0], conv_in[1]};
    inputs.insert(inputs.end(), norm_in.begin() + 1, norm_in.end());  // bias | 4 BN inputs
    if (add != nullptr) {
      SplitInputs(*add, &add_in, &unused);
      inputs.push_back(add_in[m.side_index]);
    }
    std::vector<const NodeDef*> nodes{&conv, &norm};
    if (add) nodes.push_back(add);
    if (act) nodes.push_back(act);
    for (const std::string& c : MergeControls(nodes, {m.conv, m.norm, m.add, m.activation}))
      inputs.push_back(c);

    std::map<std::string, AttrValue> attr;
    attr["T"] = AttrValue::Type(DT_FLOAT);
    attr["num_args"] = AttrValue::Int((batch_norm ? 4 : 1) + (add != nullptr ? 1 : 0));
    for (const char* key : {"strides", "padding", "explicit_paddings", "dilations"}) {
      auto it = conv.attr.find(key);
      if (it != conv.attr.end()) attr[key] = it->second;
    }
    attr["data_format"] = AttrValue::String("NHWC");
    attr["depthwise"] = AttrValue::Bool(conv.op == "DepthwiseConv2dNative");
    attr["normalization"] = AttrValue::String(batch_norm ? "FusedBatchNorm" : "BiasAdd");
    attr["has_side_input"] = AttrValue::Bool(add != nullptr);
    // FusedBatchNorm's default epsilon (tensorflow/core/ops/nn_ops.cc).
    attr["epsilon"] = AttrValue::Float(batch_norm ? norm.FloatAttr("epsilon", 1e-4f) : 1e-4f);
    std::string activation = "None";
    float alpha = 0.2f;  // LeakyRelu's default (tensorflow/core/ops/nn_ops.cc)
    if (act) {
      activation = act->op;
      if (activation == "LeakyRelu") alpha = act->FloatAttr("alpha", alpha);
    }
    attr["activation"] = AttrValue::String(activation);
    attr["leakyrelu_alpha"] = AttrValue::Float(alpha);

    const std::string pattern = conv.op + "+" + (batch_norm ? norm.op : "BiasAdd") +
                                (add ? "+" + add->op : "") + (act ? "+" + activation : "");
    std::vector<std::string> replaced{m.conv, m.norm};
    if (add) replaced.push_back(m.add);
    if (act) replaced.push_back(m.activation);

    // The root keeps its name, device, internal ("_"-prefixed) attributes and
    // any fields PDK does not model: edit it in place.
    NodeDef& root = graph->node[index.at(m.root())];
    for (const auto& [key, value] : root.attr)
      if (!key.empty() && key[0] == '_') attr[key] = value;
    root.op = kFusedOp;
    root.input = std::move(inputs);
    root.attr = std::move(attr);
    for (const std::string& name : replaced)
      if (name != root.name) remove[index.at(name)] = true;
    ctx.Fired(pattern, std::string(kFusedOp) + " '" + root.name + "'", replaced);
  }
  RemoveNodes(graph, remove);
}

}  // namespace pdk_graph
