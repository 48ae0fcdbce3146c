// Keras 3's Adam update of one variable -> _PdkKerasAdamUpdate + three
// AssignVariableOp (src/kernels/training/keras_adam_update.cc).
//
// Keras 3.15's Adam.update_step (keras/src/optimizers/adam.py; AdamW runs the
// same step after its weight decay) emits, per variable, in TF 2.21's graph as
// PDK's optimizer receives it (after TensorFlow's own passes, which put
// constants first in commutative ops; either operand order matches here):
//
//   AM:  AssignAddVariableOp(m, Mul(c1, Sub(g, ReadVariableOp(m))))
//   AV:  AssignAddVariableOp(v, Mul(c2, Sub(Square(g), ReadVariableOp(v))))
//   S:   AssignSubVariableOp(var, RealDiv(Mul(ReadVariableOp(m) ^AM, alpha),
//                                         AddV2(eps, Sqrt(ReadVariableOp(v) ^AV))))
//
// twelve elementwise passes over the variable's size. They become
//
//   R:   ReadVariableOp(var) with S's control inputs
//   F:   _PdkKerasAdamUpdate(R, ReadVariableOp(m), ReadVariableOp(v), g, c1, c2, alpha, eps)
//   AM': AssignVariableOp(m, F:1)    AV': AssignVariableOp(v, F:2)
//   S':  AssignVariableOp(var, F:0, ^AM', ^AV')
//
// S' also waits for AM' and AV' (^AM, ^AV: S waited for them through the
// removed reads, and in an inlined function those reads were all that kept
// AM and AV from being pruned as dead code).
// AM', AV' and S' keep the names, devices and control inputs of AM, AV and S,
// so every control edge on them still orders the same ops, and they may be
// kept nodes (a function's control outputs are: they stay side-effecting
// nodes of those names); R is named
// "<S>/pdk_var_value", F "<S>/pdk_keras_adam". The result is bit-identical
// (the kernel's header says why).
//
// Fires only when
// - every node is on S's PDK device and has S's dtype, float32 or float64;
// - var, m and v are three different resource tensors, and both Sub and
//   Square read the same gradient tensor;
// - the arithmetic nodes (RealDiv, both Muls of the update, AddV2, Sqrt, both
//   Subs, the Muls of AM and AV) each feed only the next node of the pattern,
//   have no control inputs or consumers and are not fetch/feed/keep nodes;
//   the ReadVariableOps after AM / AV and Square(g) are removed only when
//   nothing else reads them (else they stay, still ordered after AM' / AV');
// - F cannot form a cycle: none of F's inputs and none of S's control inputs
//   is reachable from AM, AV or S;
// - c1, c2, alpha and eps are whatever tensors the graph computes: the
//   kernel requires one element each (Keras's are scalars) and fails with
//   InvalidArgument otherwise.
// Idempotent: the result has no AssignSubVariableOp of the pattern.
// Switch: PDK_GRAPH_DISABLE=adam_fusion.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

constexpr char kFusedOp[] = "_PdkKerasAdamUpdate";

// Node names (the view's pointers die when the graph changes).
struct Match {
  std::string s, am, av;  // AssignSubVariableOp (var), AssignAddVariableOps (m, v)
  std::string rm1, rv1, g, c1, c2, alpha, eps;  // F's inputs after R (tensor names)
  std::vector<std::string> removed;
};

// Canonical "node:port" form of a tensor input string.
std::string Canon(const std::string& input) {
  const TensorRef r = ParseInput(input);
  return r.node + ":" + std::to_string(r.port);
}

class Matcher {
 public:
  Matcher(const GraphView& view, const RewriteContext& ctx) : view_(view), ctx_(ctx) {}

  bool Find(const NodeDef& s, Match* out) {
    device_ = s.device;
    dtype_ = s.TypeAttr("dtype");
    if (dtype_ != DT_FLOAT && dtype_ != DT_DOUBLE) return false;
    if (view_.num_regular_inputs(s) != 2) return false;
    const NodeDef* d = Arith(s, 1, "RealDiv", 2);
    if (!d) return false;
    const NodeDef* n = Arith(*d, 0, "Mul", 2);
    const NodeDef* e = Arith(*d, 1, "AddV2", 2);
    if (!n || !e) return false;

    // n = Mul(ReadVariableOp(m) ^AM, alpha), either order.
    const NodeDef *rm2 = nullptr, *am = nullptr;
    int alpha_i = -1;
    for (int i = 0; i < 2 && !rm2; ++i)
      if (ReadAfterAssignAdd(*n, i, &rm2, &am)) alpha_i = 1 - i;
    if (!rm2) return false;
    // e = AddV2(Sqrt(ReadVariableOp(v) ^AV), eps), either order.
    const NodeDef *sq = nullptr, *rv2 = nullptr, *av = nullptr;
    int eps_i = -1;
    for (int i = 0; i < 2 && !sq; ++i) {
      const NodeDef* c = Arith(*e, i, "Sqrt", 1);
      if (c && ReadAfterAssignAdd(*c, 0, &rv2, &av)) {
        sq = c;
        eps_i = 1 - i;
      }
    }
    if (!sq) return false;

    const std::string var = Canon(s.input[0]), m = Canon(am->input[0]), v = Canon(av->input[0]);
    if (var == m || var == v || m == v) return false;

    // AM's value: Mul(c1, Sub(g, ReadVariableOp(m))); AV's: Mul(c2, Sub(Square(g), ReadVariableOp(v))).
    const NodeDef *x1, *sub1, *rm1, *x2, *sub2, *rv1;
    int c1_i, c2_i;
    if (!MomentUpdate(*am, m, &x1, &sub1, &rm1, &c1_i)) return false;
    if (!MomentUpdate(*av, v, &x2, &sub2, &rv1, &c2_i)) return false;
    const NodeDef* square = view_.regular_fanin(*sub2, 0);
    if (!square || square->op != "Square" || !SameDeviceType(*square) ||
        view_.num_regular_inputs(*square) != 1)
      return false;
    const std::string g = Canon(sub1->input[0]);
    if (Canon(square->input[0]) != g) return false;

    std::vector<const NodeDef*> removed{d, n, e, sq, x1, sub1, x2, sub2};
    for (const NodeDef* x : {rm2, rv2})  // their one control input is AM / AV
      if (OnlyReadBy(*x, removed)) removed.push_back(x);
    if (OnlyReadBy(*square, removed) && view_.control_fanins(*square).empty())
      removed.push_back(square);
    if (!Acyclic(s, *am, *av, {rm1->name, rv1->name, sub1->input[0], x1->input[c1_i],
                               x2->input[c2_i], n->input[alpha_i], e->input[eps_i]}))
      return false;
    *out = Match{s.name, am->name, av->name, rm1->name, rv1->name, sub1->input[0],
                 x1->input[c1_i], x2->input[c2_i], n->input[alpha_i], e->input[eps_i], {}};
    for (const NodeDef* x : removed) out->removed.push_back(x->name);
    return true;
  }

 private:
  bool SameDeviceType(const NodeDef& x) const {
    return x.device == device_ && x.TypeAttr("T") == dtype_;
  }

  // Regular input `i` of `consumer`, when it is output 0 of an `op` node on
  // the device with T = dtype, `inputs` regular inputs, no control inputs,
  // read by this one slot only and not preserved.
  const NodeDef* Arith(const NodeDef& consumer, int i, const char* op, int inputs) const {
    int port = -1;
    const NodeDef* x = view_.regular_fanin(consumer, i, &port);
    if (!x || port != 0 || x->op != op || !SameDeviceType(*x)) return nullptr;
    if (view_.num_regular_inputs(*x) != inputs || !view_.control_fanins(*x).empty()) return nullptr;
    for (int k = 0; k < inputs; ++k)
      if (!view_.regular_fanin(*x, k)) return nullptr;
    if (view_.num_regular_fanouts(*x) != 1 || !view_.control_fanouts(*x).empty() ||
        ctx_.preserved(x->name))
      return nullptr;
    return x;
  }

  bool IsRead(const NodeDef* r) const {
    return r && r->op == "ReadVariableOp" && r->device == device_ &&
           r->TypeAttr("dtype") == dtype_ && view_.num_regular_inputs(*r) == 1;
  }

  // Input `i` of `consumer` is ReadVariableOp(x) whose only control input is
  // an AssignAddVariableOp of the same resource x.
  bool ReadAfterAssignAdd(const NodeDef& consumer, int i, const NodeDef** read,
                          const NodeDef** assign) const {
    int port = -1;
    const NodeDef* r = view_.regular_fanin(consumer, i, &port);
    if (port != 0 || !IsRead(r)) return false;
    const std::vector<const NodeDef*> ctl = view_.control_fanins(*r);
    if (ctl.size() != 1) return false;
    const NodeDef* a = ctl[0];
    if (a->op != "AssignAddVariableOp" || a->device == "" || a->device != device_ ||
        a->TypeAttr("dtype") != dtype_ || view_.num_regular_inputs(*a) != 2 ||
        Canon(a->input[0]) != Canon(r->input[0]))
      return false;
    *read = r;
    *assign = a;
    return true;
  }

  // assign = AssignAddVariableOp(res, Mul(c, Sub(x, ReadVariableOp(res)))), Mul either order.
  bool MomentUpdate(const NodeDef& assign, const std::string& res, const NodeDef** mul,
                    const NodeDef** sub, const NodeDef** read, int* c_i) const {
    const NodeDef* x = Arith(assign, 1, "Mul", 2);
    if (!x) return false;
    for (int i = 0; i < 2; ++i) {
      const NodeDef* s = Arith(*x, i, "Sub", 2);
      if (!s) continue;
      int port = -1;
      const NodeDef* r = view_.regular_fanin(*s, 1, &port);
      if (port != 0 || !IsRead(r) || Canon(r->input[0]) != res) continue;
      *mul = x;
      *sub = s;
      *read = r;
      *c_i = 1 - i;
      return true;
    }
    return false;
  }

  // Every reader of `x` is in `inside`; no control consumer; not preserved.
  bool OnlyReadBy(const NodeDef& x, const std::vector<const NodeDef*>& inside) const {
    if (ctx_.preserved(x.name) || !view_.control_fanouts(x).empty()) return false;
    int n = 0;
    for (const Fanout& f : view_.regular_fanouts(x, 0)) {
      bool in = false;
      for (const NodeDef* y : inside) in = in || y == f.consumer;
      if (!in) return false;
      ++n;
    }
    return n == view_.num_regular_fanouts(x);
  }

  // No input of F and no control input of S is a descendant of AM, AV or S
  // (which would make F wait for an assign that waits for F).
  bool Acyclic(const NodeDef& s, const NodeDef& am, const NodeDef& av,
               const std::vector<std::string>& f_inputs) const {
    std::unordered_set<const NodeDef*> seen;
    std::vector<const NodeDef*> stack{&s, &am, &av};
    while (!stack.empty()) {
      const NodeDef* x = stack.back();
      stack.pop_back();
      if (!seen.insert(x).second) continue;
      for (const NodeDef* y : view_.control_fanouts(*x)) stack.push_back(y);
      for (const NodeDef* y : view_.regular_consumers(*x)) stack.push_back(y);
      if (seen.size() > 100000) return false;
    }
    for (const std::string& in : f_inputs) {
      const NodeDef* p = view_.node(ParseInput(in).node);
      if (!p || seen.count(p)) return false;
    }
    for (const NodeDef* c : view_.control_fanins(s))
      if (seen.count(c)) return false;
    return true;
  }

  const GraphView& view_;
  const RewriteContext& ctx_;
  std::string device_;
  int dtype_ = DT_INVALID;
};

}  // namespace

void FuseKerasAdam(GraphDef* graph, const RewriteContext& ctx) {
  if (!ctx.can_emit(kFusedOp)) return;
  std::vector<Match> matches;
  {
    GraphView view(*graph);
    if (view.has_duplicate_names()) return;
    Matcher matcher(view, ctx);
    std::unordered_set<std::string> used;  // each node in at most one match
    for (const NodeDef& s : graph->node) {
      if (s.op != "AssignSubVariableOp" || !ctx.on_device(s)) continue;
      Match m;
      if (!matcher.Find(s, &m)) continue;
      if (view.node(s.name + "/pdk_var_value") || view.node(s.name + "/pdk_keras_adam")) continue;
      std::vector<std::string> nodes{m.am, m.av};
      nodes.insert(nodes.end(), m.removed.begin(), m.removed.end());
      bool fresh = true;
      for (const std::string& x : nodes) fresh = fresh && !used.count(x);
      if (!fresh) continue;
      used.insert(nodes.begin(), nodes.end());
      matches.push_back(std::move(m));
    }
  }
  if (matches.empty()) return;

  const std::unordered_map<std::string, size_t> index = IndexByName(*graph);
  std::vector<bool> remove(graph->node.size(), false);
  std::vector<NodeDef> added;
  for (const Match& m : matches) {
    for (const std::string& x : m.removed) remove[index.at(x)] = true;
    const NodeDef& s = graph->node[index.at(m.s)];
    const AttrValue dtype = s.attr.at("dtype");

    NodeDef read;
    read.name = m.s + "/pdk_var_value";
    read.op = "ReadVariableOp";
    read.device = s.device;
    read.input.push_back(s.input[0]);
    for (size_t i = 2; i < s.input.size(); ++i) read.input.push_back(s.input[i]);  // controls
    read.attr["dtype"] = dtype;

    NodeDef fused;
    fused.name = m.s + "/pdk_keras_adam";
    fused.op = kFusedOp;
    fused.device = s.device;
    fused.input = {read.name, m.rm1, m.rv1, m.g, m.c1, m.c2, m.alpha, m.eps};
    fused.attr["T"] = dtype;

    // The three assigns become AssignVariableOp of F's outputs, in place.
    auto to_assign = [&](const std::string& name, int port) {
      NodeDef& a = graph->node[index.at(name)];
      a.op = "AssignVariableOp";
      a.input[1] = fused.name + ":" + std::to_string(port);
      a.attr["validate_shape"] = AttrValue::Bool(false);
    };
    to_assign(m.s, 0);
    to_assign(m.am, 1);
    to_assign(m.av, 2);
    // S waited for AM and AV through the removed reads of m and v; keep that
    // order. It is also what keeps AM' and AV' alive once TensorFlow has
    // inlined the function: their only consumers were those reads.
    NodeDef& s_new = graph->node[index.at(m.s)];
    for (const std::string* a : {&m.am, &m.av})
      if (std::find(s_new.input.begin(), s_new.input.end(), "^" + *a) == s_new.input.end())
        s_new.input.push_back("^" + *a);
    ctx.Fired("KerasAdam", std::string(kFusedOp) + " '" + fused.name + "'", m.removed);
    added.push_back(std::move(read));
    added.push_back(std::move(fused));
  }
  RemoveNodes(graph, remove);
  for (NodeDef& n : added) graph->node.push_back(std::move(n));
}

}  // namespace pdk_graph
