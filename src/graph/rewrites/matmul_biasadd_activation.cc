// MatMul + BiasAdd [+ Relu | Relu6 | Elu | LeakyRelu | Tanh | Sigmoid | Gelu]
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
//
// Gelu has no TensorFlow op: tf.nn.gelu (the Keras 3 TF backend's
// keras.activations.gelu) builds it from elementwise ops, and TensorFlow's
// arithmetic optimizer then reorders them. For z = BiasAdd's output, TF 2.21
// + Keras 3.15 give (placement.record() partition graphs, before -> after
// TensorFlow's own passes):
//   exact (approximate=False):  Mul(Mul(0.5, z), Erfc(Mul(Neg(z), 0.70710677)))
//                            -> Mul(z, Mul(Erfc(Mul(0.70710677, Neg(z))), 0.5))
//   tanh  (approximate=True):   Mul(Mul(0.5, z), AddV2(1, Tanh(Mul(0.7978846,
//                                 AddV2(z, Mul(0.044715, Pow(z, 3)))))))
//                            -> Mul(z, Mul(AddV2(Tanh(Mul(AddV2(z, Mul(0.044715,
//                                 Pow(z, 3))), 0.7978846)), 1), 0.5))
//   (on the CPU the arithmetic optimizer also turns Pow(z, 3) into
//   Mul(Mul(0.044715, z), Square(z)); on PDK it keeps the Pow).
// So the match is algebraic, not one node layout: a Mul tree is flattened to
// a constant coefficient times factors (through Mul, Neg, Square, Pow(., 2|3)
// and single-element float Consts), an AddV2/Add tree to terms, and the
// result must be
//   GeluExact:       0.5 * z * Erfc(-0.70710678 * z)   or 0.5 * z * (1 + Erf(0.70710678 * z))
//   GeluApproximate: 0.5 * z * (1 + Tanh(0.79788456 * (z + 0.044715 * z^3)))
// with each constant within a relative 1e-6 (float32 rounding of the
// double constants of tf.nn.gelu). Every node of the Gelu subgraph must be a
// float32 node on BiasAdd's device, and every value it and BiasAdd produce
// except the last Mul must be read only inside the subgraph (no control
// consumer, not a fetch/feed/keep node). In a training graph the gradient
// reads z and the intermediates (Erfc, Tanh, ...), so Gelu is then not fused
// and MatMul + BiasAdd fuse alone.
// Control inputs of all replaced nodes move to the fused node.
// Idempotent: the result contains no MatMul -> BiasAdd edge it could match.
#include <algorithm>
#include <cmath>
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

// A float32 node on this optimizer's device.
bool IsFloatOnDevice(const RewriteContext& ctx, const NodeDef& n) {
  return ctx.on_device(n) && n.TypeAttr("T") == DT_FLOAT;
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
  std::string gelu;  // "GeluExact"/"GeluApproximate" when `activation` is a Gelu's last Mul
  std::vector<std::string> gelu_interior;  // that Gelu's other nodes: removed too
  const std::string& root() const { return activation.empty() ? bias_add : activation; }
};

// ---- Gelu: algebraic matching of an elementwise subgraph over z.

// A value of the subgraph: output `port` of `node`.
struct Value {
  const NodeDef* node;
  int port;
  bool operator==(const Value& o) const { return node == o.node && port == o.port; }
};

// coeff * product(factors)
struct Product {
  double coeff = 1;
  std::vector<Value> factors;
};

class GeluMatcher {
 public:
  GeluMatcher(const GraphView& view, const NodeDef& bias_add)
      : view_(view), device_(bias_add.device), z_{&bias_add, 0} {}

  // If `root` (a Mul) computes Gelu(z), its kind; the interior nodes (all but
  // root) in interior().
  std::string Match(const NodeDef& root) {
    interior_.clear();
    if (!IsOp(root, "Mul")) return "";
    Product p = FlattenProduct(Value{&root, 0});
    if (!Near(p.coeff, 0.5) || p.factors.size() != 2) return "";
    const Value* other = OtherThanZ(p.factors);
    if (other == nullptr || other->node == nullptr) return "";
    const NodeDef& g = *other->node;
    std::string kind;
    if (IsOp(g, "Erfc") && IsZTimes(Arg(g), -kSqrtHalf)) {
      kind = "GeluExact";
    } else if (IsOp(g, "AddV2") || IsOp(g, "Add")) {
      // 1 + Erf(z / sqrt 2) or 1 + Tanh(sqrt(2/pi) (z + 0.044715 z^3))
      std::vector<Product> terms = FlattenSum(*other);
      if (terms.size() != 2) return "";
      const Product* one = nullptr;
      const Product* fn = nullptr;
      for (const Product& t : terms) {
        if (t.factors.empty()) one = &t;
        else fn = &t;
      }
      if (one == nullptr || fn == nullptr || !Near(one->coeff, 1) || !Near(fn->coeff, 1) ||
          fn->factors.size() != 1 || fn->factors[0].node == nullptr)
        return "";
      const NodeDef& h = *fn->factors[0].node;
      if (IsOp(h, "Erf") && IsZTimes(Arg(h), kSqrtHalf)) {
        kind = "GeluExact";
      } else if (IsOp(h, "Tanh")) {
        Product u = FlattenProduct(Arg(h));
        if (!Near(u.coeff, kSqrt2OverPi) || u.factors.size() != 1) return "";
        std::vector<Product> s = FlattenSum(u.factors[0]);
        if (s.size() != 2) return "";
        bool linear = false, cubic = false;
        for (const Product& t : s) {
          if (AllZ(t) && t.factors.size() == 1 && Near(t.coeff, 1)) linear = true;
          if (AllZ(t) && t.factors.size() == 3 && Near(t.coeff, kCubic)) cubic = true;
        }
        if (linear && cubic) kind = "GeluApproximate";
      }
    }
    if (kind.empty()) return "";
    interior_.erase(&root);
    return kind;
  }

  const std::unordered_set<const NodeDef*>& interior() const { return interior_; }

 private:
  static constexpr double kSqrtHalf = 0.7071067811865476;     // tf.nn.gelu (nn_ops.py)
  static constexpr double kSqrt2OverPi = 0.7978845608028654;  // tf.nn.gelu
  static constexpr double kCubic = 0.044715;                  // tf.nn.gelu

  static bool Near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::fabs(b); }

  // A float32 node of `op` on the device, with all-regular inputs as expected.
  bool IsOp(const NodeDef& n, const char* op) const {
    return n.op == op && n.device == device_ && n.TypeAttr("T") == DT_FLOAT;
  }

  Value Arg(const NodeDef& n, int i = 0) const {
    int port = 0;
    const NodeDef* p = view_.regular_fanin(n, i, &port);
    return Value{p, port};
  }

  // A single-element float Const (rank <= 2, so that broadcasting it against
  // the rank-2 z keeps z's shape).
  bool ScalarConst(const Value& v, double* c) const {
    if (v.node == nullptr || v.node->op != "Const" || v.port != 0) return false;
    auto it = v.node->attr.find("value");
    std::vector<float> vals;
    int rank = 0;
    if (it == v.node->attr.end() || !it->second.GetFloatTensor(&vals, &rank) ||
        vals.size() != 1 || rank > 2)
      return false;
    *c = vals[0];
    return true;
  }

  // Enters an interior node: one of the elementwise ops with the expected
  // number of regular inputs, output 0 read.
  bool Enter(const Value& v, const char* op, int inputs) {
    if (v.node == nullptr || v.port != 0 || !IsOp(*v.node, op)) return false;
    if (view_.num_regular_inputs(*v.node) != inputs) return false;
    for (int i = 0; i < inputs; ++i)
      if (view_.regular_fanin(*v.node, i) == nullptr) return false;
    interior_.insert(v.node);
    return true;
  }

  void AddProduct(const Value& v, Product* p, int depth) {
    double c;
    if (depth > 16) {
      p->factors.push_back(v);
    } else if (ScalarConst(v, &c)) {
      p->coeff *= c;
    } else if (Enter(v, "Mul", 2)) {
      AddProduct(Arg(*v.node, 0), p, depth + 1);
      AddProduct(Arg(*v.node, 1), p, depth + 1);
    } else if (Enter(v, "Neg", 1)) {
      p->coeff = -p->coeff;
      AddProduct(Arg(*v.node), p, depth + 1);
    } else if (Enter(v, "Square", 1)) {
      for (int k = 0; k < 2; ++k) AddProduct(Arg(*v.node), p, depth + 1);
    } else if (v.node && v.port == 0 && IsOp(*v.node, "Pow") &&
               view_.num_regular_inputs(*v.node) == 2 && ScalarConst(Arg(*v.node, 1), &c) &&
               (c == 2 || c == 3)) {
      interior_.insert(v.node);
      for (int k = 0; k < static_cast<int>(c); ++k) AddProduct(Arg(*v.node), p, depth + 1);
    } else {
      if (v.node && !(v == z_)) interior_.insert(v.node);  // Erfc, Tanh, AddV2, ...: checked by the caller
      p->factors.push_back(v);
    }
  }
  Product FlattenProduct(const Value& v) {
    Product p;
    AddProduct(v, &p, 0);
    return p;
  }

  void AddTerms(const Value& v, std::vector<Product>* terms, int depth) {
    if (depth <= 16 && (Enter(v, "AddV2", 2) || Enter(v, "Add", 2))) {
      AddTerms(Arg(*v.node, 0), terms, depth + 1);
      AddTerms(Arg(*v.node, 1), terms, depth + 1);
    } else {
      terms->push_back(FlattenProduct(v));
    }
  }
  std::vector<Product> FlattenSum(const Value& v) {
    std::vector<Product> terms;
    AddTerms(v, &terms, 0);
    return terms;
  }

  const Value* OtherThanZ(const std::vector<Value>& two) const {
    if (two[0] == z_) return two[1] == z_ ? nullptr : &two[1];
    return two[1] == z_ ? &two[0] : nullptr;
  }
  bool AllZ(const Product& p) const {
    for (const Value& f : p.factors)
      if (!(f == z_)) return false;
    return true;
  }
  // v = c * z
  bool IsZTimes(const Value& v, double c) {
    Product p = FlattenProduct(v);
    return p.factors.size() == 1 && p.factors[0] == z_ && Near(p.coeff, c);
  }

  const GraphView& view_;
  const std::string device_;
  const Value z_;
  std::unordered_set<const NodeDef*> interior_;
};

// Looks for a Gelu over BiasAdd's output whose subgraph is read only through
// its last Mul. Candidates: Muls up to 10 elementwise steps downstream of z.
bool MatchGelu(const GraphView& view, const NodeDef& bias_add, const RewriteContext& ctx,
               Match* m) {
  static const std::unordered_set<std::string> kElementwise = {
      "Mul", "Neg", "Erfc", "Erf", "Tanh", "AddV2", "Add", "Square", "Pow"};
  std::vector<const NodeDef*> frontier{&bias_add}, candidates;
  std::unordered_set<const NodeDef*> seen{&bias_add};
  for (int step = 0; step < 10 && !frontier.empty(); ++step) {
    std::vector<const NodeDef*> next;
    for (const NodeDef* n : frontier)
      for (const Fanout& f : view.regular_fanouts(*n, 0))
        if (kElementwise.count(f.consumer->op) && seen.insert(f.consumer).second) {
          next.push_back(f.consumer);
          if (f.consumer->op == "Mul") candidates.push_back(f.consumer);
        }
    frontier = std::move(next);
  }
  GeluMatcher matcher(view, bias_add);
  for (const NodeDef* root : candidates) {
    const std::string kind = matcher.Match(*root);
    if (kind.empty()) continue;
    std::unordered_set<const NodeDef*> inside = matcher.interior();
    inside.insert(root);
    // Nothing but the subgraph reads z or an interior value.
    auto only_inside = [&](const NodeDef& n) {
      if (ctx.preserved(n.name) || !view.control_fanouts(n).empty()) return false;
      for (const Fanout& f : view.regular_fanouts(n, 0))
        if (!inside.count(f.consumer)) return false;
      return view.num_regular_fanouts(n) == static_cast<int>(view.regular_fanouts(n, 0).size());
    };
    bool ok = only_inside(bias_add);
    for (const NodeDef* n : matcher.interior()) ok = ok && only_inside(*n);
    if (!ok) continue;
    m->activation = root->name;
    m->gelu = kind;
    for (const NodeDef* n : matcher.interior()) m->gelu_interior.push_back(n->name);
    std::sort(m->gelu_interior.begin(), m->gelu_interior.end());
    return true;
  }
  return false;
}

std::vector<Match> FindMatches(const GraphDef& graph, const RewriteContext& ctx) {
  std::vector<Match> matches;
  GraphView view(graph);
  if (view.has_duplicate_names()) return matches;  // an invalid graph: touch nothing
  for (const NodeDef& bias_add : graph.node) {
    if (bias_add.op != "BiasAdd" || !IsFloatOnDevice(ctx, bias_add)) continue;
    if (view.num_regular_inputs(bias_add) != 2) continue;
    int port = -1;
    const NodeDef* matmul = view.regular_fanin(bias_add, 0, &port);
    if (matmul == nullptr || port != 0 || matmul->op != "MatMul") continue;
    if (!IsFloatOnDevice(ctx, *matmul) || matmul->device != bias_add.device) continue;
    if (matmul->BoolAttr("transpose_a", false)) continue;
    if (view.num_regular_inputs(*matmul) != 2) continue;
    if (!FeedsOnlyOneSlot(view, *matmul, ctx)) continue;
    // MatMul's output is rank 2, whose channel dimension is the last one for
    // both data formats: BiasAdd(NHWC) and BiasAdd(NCHW) add along it alike.

    Match m{matmul->name, bias_add.name, "", "", {}};
    if (MatchGelu(view, bias_add, ctx, &m)) {
      // Gelu: activation is its last Mul.
    } else if (FeedsOnlyOneSlot(view, bias_add, ctx)) {
      const Fanout& out = view.regular_fanouts(bias_add, 0).front();
      const NodeDef& act = *out.consumer;
      if (IsFusableActivation(act.op) && out.input_index == 0 &&
          view.num_regular_inputs(act) == 1 && IsFloatOnDevice(ctx, act) &&
          act.device == bias_add.device)
        m.activation = act.name;
    }
    matches.push_back(std::move(m));
  }
  return matches;
}

}  // namespace

void FuseMatMulBiasAddActivation(GraphDef* graph, const RewriteContext& ctx) {
  if (!ctx.can_emit(kFusedOp)) return;
  const std::vector<Match> matches = FindMatches(*graph, ctx);
  if (matches.empty()) return;

  const std::unordered_map<std::string, size_t> index = IndexByName(*graph);
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
    std::unordered_set<std::string> gelu_interior(m.gelu_interior.begin(), m.gelu_interior.end());
    for (const std::string& name : m.gelu_interior) {
      std::vector<std::string> ignored;
      SplitInputs(graph->node[index.at(name)], &ignored, &control);
    }
    // Control inputs: the union over the replaced nodes, in order, once each.
    std::vector<std::string> controls;
    std::unordered_set<std::string> seen;
    for (const std::string& c : control) {
      const std::string name = c.substr(1);
      if (name == m.matmul || name == m.bias_add || name == m.activation ||
          gelu_interior.count(name))
        continue;
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
      activation = m.gelu.empty() ? act.op : m.gelu;
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
    for (const std::string& name : m.gelu_interior) remove[index.at(name)] = true;
    std::vector<std::string> replaced{m.matmul, m.bias_add};
    replaced.insert(replaced.end(), m.gelu_interior.begin(), m.gelu_interior.end());
    if (has_act) replaced.push_back(m.activation);
    std::string pattern = "MatMul+BiasAdd";
    if (has_act) pattern += "+" + activation;
    ctx.Fired(pattern, std::string(kFusedOp) + " '" + root.name + "'", replaced);
  }

  RemoveNodes(graph, remove);
}

}  // namespace pdk_graph
