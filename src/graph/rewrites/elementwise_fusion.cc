// Connected groups of elementwise ops on one PDK device -> one
// _PdkFusedElementwise node each (src/kernels/math/fused_elementwise.cc).
//
// Candidates: the ops of src/kernels/math/fused_elementwise.h (unary ops,
// binary ops, the *Grad ops, Cast, SelectV2, AddN of two or more inputs,
// BiasAdd with data_format NHWC) with T (Cast: DstT) float32 or
// float64 (Cast: SrcT float32, float64, float16, bfloat16, int32, int64 or
// bool), placed on PDK, with all regular inputs present and
//   - not fetch, feed or keep nodes (ctx.preserved: never swallowed),
//   - not on a cycle of the graph once each loop's back edges (NextIteration
//     -> Merge) are left out: a lowered while loop's body fuses like a DAG
//     (one iteration's dependencies; the fused node sits in the body's frame,
//     between the same Enter / Switch and NextIteration / Exit nodes).
// Two candidates join a group when one reads output 0 of the other, both on
// the same device with the same T. A group of two or more nodes becomes one
// node, when that creates no cycle: no path may leave the group and come back
// to it (through any node, including groups fused before it); a group that
// has such a path is split into the nodes on it and the others, and each
// part is tried again. A group with more than kMaxOutputs (8) outputs is cut
// in topological order after every 8th and the parts are tried again: its
// kernel writes all its outputs in one pass before any outside reader runs,
// so a chain whose every value is also read elsewhere (x = x * a + b with a
// Sum of each x) would hold all of them at once (docs/benchmarks.md,
// "Elementwise fusion": 50 such values of 1 MiB peaked at 53 MiB fused whole,
// 18 MiB cut; the most outputs of a group in the benchmark models is 7, a
// Keras LSTM cell's). Control edges: a member's control inputs from
// outside the group become the fused node's (deduplicated), control inputs
// between members are dropped (members are pure and run in topological
// order, control edges included), and a control input on a member
// (`^member`) anywhere else reads `^fused node`; the cycle check follows
// control edges too. Keras's BatchNormalization and LayerNormalization
// gradients need this: TensorFlow's SquaredDifference gradient
// (math_grad.py) computes `2 * grad * (x - y)` under
// `control_dependencies([grad])`, so the scalar and the `x - y` carry a
// control input from the variance's gradient, which fused none of the three
// before. The scalar is a Const: a Const's control input on a candidate (or
// a Tile or Reshape) moves first to that node's own input nodes, up such
// nodes (a Const computes nothing, so it only needs to stay in their frame;
// not past a control-flow op or onto another device),
// else the path member -> Const -> member would count as a cycle.
// Shapes need not be known: the kernel evaluates the
// program with each op's own broadcasting and checks (a fast blocked pass
// when all values have one shape or one element).
//
// The fused node, named "<last node of the group>/pdk_fused_elementwise",
// reads each distinct outside tensor once (Tin: their dtypes; an int32 one
// in host memory, `_input_hostmem`, where PDK keeps int32: a loop's time
// step cast to float is read without a copy), runs the
// group's ops in topological order (attrs ops/args/outputs,
// fused_elementwise.h) and has one output per group node that something
// outside the group reads (or that nothing reads); every such reader is
// rewired to it. Counts: "ElementwiseFusion" (groups) and
// "ElementwiseFusion nodes" (nodes replaced). Idempotent: the fused op is no
// candidate. Switch: PDK_GRAPH_DISABLE=elementwise_fusion.
//
// Then Splits and ConcatV2s at the fused nodes' edges disappear into them
// (fused_elementwise.h, attributes slices and concat): a Split whose outputs
// only fused nodes read (an LSTM cell's gates, split from z) becomes pieces of
// those nodes' inputs, read in place; a ConcatV2 all of whose values
// are one fused node's outputs (the cell gradient's dz) becomes an output of
// that node, written in place. Both need a constant axis (a Const of one
// integer; the kernel checks it against the runtime shapes with Split's and
// ConcatV2's messages), the same device, and no control edges; the Split or
// ConcatV2 must not be fetched or fed. Outputs that only absorbed ConcatV2s
// read are dropped. Likewise a Tile with a Const multiples whose output only
// fused nodes read goes: they read its input with the multiples (attribute
// tiles), which the kernel expands per block when the input is a row,
// column or one-element value of the tiled shape (a Mean's gradient in the
// normalizations' backward passes: Tile(Reshape(g, [B, T, 1]), [1, 1, C])),
// so the tiled tensor is never written. Counts: "ElementwiseFusion splits",
// "ElementwiseFusion concats" and "ElementwiseFusion tiles" (nodes absorbed).
#include <algorithm>
#include <climits>
#include <deque>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/bypass.h"
#include "graph/rewrites/rewrites.h"
#include "kernels/math/fused_elementwise.h"

namespace pdk_graph {
namespace {

constexpr char kFusedOp[] = "_PdkFusedElementwise";
// The most outputs one fused node writes (see the header comment).
constexpr int kMaxOutputs = 8;

bool IsCastSource(int dt) {
  return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_HALF || dt == DT_BFLOAT16 ||
         dt == DT_INT32 || dt == DT_INT64 || dt == DT_BOOL;
}

// Whether group member `x` is an output of its fused node: read by a node
// outside the group (in_group(reader) false), or by nothing.
template <typename InGroup>
bool IsOutput(const GraphView& view, const NodeDef& x, InGroup in_group) {
  if (view.num_regular_fanouts(x) == 0) return true;
  for (const NodeDef* c : view.regular_consumers(x))
    if (!in_group(c)) return true;
  return false;
}

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

class Fusion {
 public:
  Fusion(const GraphDef& graph, const GraphView& view, const RewriteContext& ctx)
      : graph_(graph), view_(view), ctx_(ctx), n_(static_cast<int>(graph.node.size())) {}

  // The accepted groups, each in topological order.
  std::vector<std::vector<int>> Run() {
    Index();
    // Connected components of the candidate graph.
    std::vector<int> parent(n_);
    std::iota(parent.begin(), parent.end(), 0);
    for (int i = 0; i < n_; ++i)
      for (int p : member_inputs_[i]) parent[Find(parent, i)] = Find(parent, p);
    std::unordered_map<int, std::vector<int>> comps;
    for (int i = 0; i < n_; ++i)
      if (code_[i] >= 0) comps[Find(parent, i)].push_back(i);
    std::deque<std::vector<int>> queue;
    for (auto& [root, nodes] : comps)
      if (nodes.size() >= 2) queue.push_back(std::move(nodes));
    // Deterministic order: by the first node's position.
    std::sort(queue.begin(), queue.end(),
              [](const std::vector<int>& a, const std::vector<int>& b) { return a[0] < b[0]; });

    std::vector<std::vector<int>> groups;
    group_of_.assign(n_, -1);
    while (!queue.empty()) {
      std::vector<int> m = std::move(queue.front());
      queue.pop_front();
      bool in_cycle = false;
      for (int x : m) in_cycle = in_cycle || topo_[x] < 0;
      if (in_cycle) continue;  // not a valid graph: left alone
      std::vector<int> bad = ReachedFromOutside(m);
      if (bad.empty() && static_cast<int>(Outputs(m).size()) > kMaxOutputs) {
        for (std::vector<int>& part : CutAfterOutputs(m))
          for (std::vector<int>& c : Components(part))
            if (c.size() >= 2) queue.push_back(std::move(c));
        continue;
      }
      if (bad.empty()) {
        std::sort(m.begin(), m.end(), [&](int a, int b) { return topo_[a] < topo_[b]; });
        const int g = static_cast<int>(groups.size());
        int lo = INT_MAX;
        for (int x : m) {
          group_of_[x] = g;
          lo = std::min(lo, topo_[x]);
        }
        group_min_topo_.push_back(lo);
        groups.push_back(m);
        groups_.push_back(std::move(m));
        continue;
      }
      std::vector<char> is_bad(n_, 0);
      for (int x : bad) is_bad[x] = 1;
      std::vector<int> good;
      for (int x : m)
        if (!is_bad[x]) good.push_back(x);
      for (const std::vector<int>* part : {&good, &bad})
        for (std::vector<int>& c : Components(*part))
          if (c.size() >= 2) queue.push_back(std::move(c));
    }
    return groups;
  }

  int code(int i) const { return code_[i]; }
  int dtype(int i) const { return dtype_[i]; }
  int group_of(int i) const { return group_of_[i]; }
  int index_of(const NodeDef* x) const { return static_cast<int>(x - graph_.node.data()); }

 private:
  void Index() {
    code_.assign(n_, -1);
    dtype_.assign(n_, DT_INVALID);
    succ_.assign(n_, {});
    member_inputs_.assign(n_, {});
    std::vector<int> indegree(n_, 0);
    for (int i = 0; i < n_; ++i) {
      const NodeDef& x = graph_.node[i];
      const bool next_iteration = x.op == "NextIteration" || x.op == "RefNextIteration";
      for (const NodeDef* c : view_.regular_consumers(x)) {
        // A loop's back edge (NextIteration -> Merge) carries a value into
        // the next iteration: it is no dependency within one, so it is left
        // out and a loop body orders (and fuses) like a DAG.
        if (next_iteration && (c->op == "Merge" || c->op == "RefMerge")) continue;
        succ_[i].push_back(index_of(c));
      }
      for (const NodeDef* c : view_.control_fanouts(x)) succ_[i].push_back(index_of(c));
      for (int s : succ_[i]) ++indegree[s];
      code_[i] = Candidate(x, &dtype_[i]);
    }
    // Topological positions (Kahn); nodes on a cycle keep -1 (none in a
    // valid graph once the back edges are left out).
    topo_.assign(n_, -1);
    std::vector<int> ready;
    for (int i = 0; i < n_; ++i)
      if (indegree[i] == 0) ready.push_back(i);
    int pos = 0;
    while (!ready.empty()) {
      const int x = ready.back();
      ready.pop_back();
      topo_[x] = pos++;
      for (int s : succ_[x])
        if (--indegree[s] == 0) ready.push_back(s);
    }
    // Edges inside the candidate graph: output 0 of a candidate on the same
    // device with the same T.
    for (int i = 0; i < n_; ++i) {
      if (code_[i] < 0) continue;
      const NodeDef& x = graph_.node[i];
      for (int k = 0; k < view_.num_regular_inputs(x); ++k) {
        int port = -1;
        const NodeDef* p = view_.regular_fanin(x, k, &port);
        const int pi = index_of(p);
        if (port == 0 && code_[pi] >= 0 && p->device == x.device && dtype_[pi] == dtype_[i] &&
            OperandDtype(i, k) == dtype_[i])
          member_inputs_[i].push_back(pi);
      }
    }
  }

  // The op code if `x` may join a group (and its T in *dtype), else -1.
  int Candidate(const NodeDef& x, int* dtype) const {
    if (!ctx_.on_device(x) || ctx_.preserved(x.name)) return -1;
    const int c = pdk_fused::FindFusedOp(x.op);
    if (c < 0) return -1;
    const pdk_fused::Kind kind = pdk_fused::kFusedOps[c].kind;
    // BiasAdd along the last dimension only (NCHW adds along dimension 1).
    if (kind == pdk_fused::Kind::kBiasAdd && x.StringAttr("data_format", "NHWC") != "NHWC")
      return -1;
    const int t = x.TypeAttr(kind == pdk_fused::Kind::kCast ? "DstT" : "T");
    if (t != DT_FLOAT && t != DT_DOUBLE) return -1;
    if (kind == pdk_fused::Kind::kCast && !IsCastSource(x.TypeAttr("SrcT"))) return -1;
    const int arity = kind == pdk_fused::Kind::kAddN ? view_.num_regular_inputs(x)
                                                     : pdk_fused::Arity(kind);
    if (view_.num_regular_inputs(x) != arity || arity < 1) return -1;
    if (kind == pdk_fused::Kind::kAddN && arity < 2) return -1;
    for (int k = 0; k < arity; ++k)
      if (!view_.regular_fanin(x, k)) return -1;
    *dtype = t;
    return c;
  }

 public:
  // The dtype node i's op reads at operand k.
  int OperandDtype(int i, int k) const {
    const NodeDef& x = graph_.node[i];
    const pdk_fused::Kind kind = pdk_fused::kFusedOps[code_[i]].kind;
    if (kind == pdk_fused::Kind::kCast) return x.TypeAttr("SrcT");
    if (kind == pdk_fused::Kind::kSelect && k == 0) return DT_BOOL;
    return dtype_[i];
  }

 private:
  // The members of `m` reachable from a node outside `m` that reads one of
  // them (groups accepted before count as one node). Empty: fusing `m`
  // creates no cycle.
  std::vector<int> ReachedFromOutside(const std::vector<int>& m) {
    std::vector<char> member(n_, 0);
    int hi = -1;
    for (int x : m) {
      member[x] = 1;
      hi = std::max(hi, topo_[x]);
    }
    std::vector<char> seen(n_, 0);
    std::vector<int> stack, bad;
    for (int x : m)
      for (int s : succ_[x])
        if (!member[s]) stack.push_back(s);
    std::vector<char> group_done(group_min_topo_.size(), 0);
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      if (seen[x]) continue;
      seen[x] = 1;
      const int g = group_of_[x];
      // Nothing after the last member in topological order reaches it.
      if ((g >= 0 ? group_min_topo_[g] : topo_[x]) > hi && topo_[x] >= 0) continue;
      if (member[x]) bad.push_back(x);
      for (int s : succ_[x]) stack.push_back(s);
      if (g >= 0 && !group_done[g]) {  // a fused group is one node
        group_done[g] = 1;
        for (int y : groups_[g]) stack.push_back(y);
      }
    }
    return bad;
  }

  // The members of `m` that become outputs of its fused node (IsOutput).
  std::vector<int> Outputs(const std::vector<int>& m) const {
    std::unordered_map<int, char> member;
    for (int x : m) member[x] = 1;
    std::vector<int> out;
    for (int x : m)
      if (IsOutput(view_, graph_.node[x],
                   [&](const NodeDef* c) { return member.count(index_of(c)) > 0; }))
        out.push_back(x);
    return out;
  }

  // `m` cut in topological order after every kMaxOutputs-th of its outputs:
  // parts with at most that many of m's outputs each (and the values that
  // link them). Each part is strictly smaller than `m`.
  std::vector<std::vector<int>> CutAfterOutputs(std::vector<int> m) const {
    std::sort(m.begin(), m.end(), [&](int a, int b) { return topo_[a] < topo_[b]; });
    const std::vector<int> outputs = Outputs(m);
    std::unordered_map<int, char> is_output;
    for (int x : outputs) is_output[x] = 1;
    std::vector<std::vector<int>> parts(1);
    int in_part = 0;
    for (int x : m) {
      if (in_part == kMaxOutputs) {
        parts.emplace_back();
        in_part = 0;
      }
      parts.back().push_back(x);
      in_part += is_output.count(x);
    }
    return parts;
  }

  // Connected components of the subgraph of candidate edges among `nodes`.
  std::vector<std::vector<int>> Components(const std::vector<int>& nodes) const {
    std::unordered_map<int, int> parent;
    for (int x : nodes) parent[x] = x;
    auto find = [&](int x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (int x : nodes)
      for (int p : member_inputs_[x])
        if (parent.count(p)) parent[find(x)] = find(p);
    std::unordered_map<int, std::vector<int>> out;
    for (int x : nodes) out[find(x)].push_back(x);
    std::vector<std::vector<int>> v;
    for (auto& [r, c] : out) v.push_back(std::move(c));
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
    return v;
  }

  const GraphDef& graph_;
  const GraphView& view_;
  const RewriteContext& ctx_;
  const int n_;
  std::vector<int> code_, dtype_, topo_, group_of_, group_min_topo_;
  std::vector<std::vector<int>> succ_, member_inputs_, groups_;
};

// "node" for port 0, else "node:port".
std::string TensorName(const std::string& node, int port) {
  return port == 0 ? node : node + ":" + std::to_string(port);
}

// The integer a Const (read at port 0) of one element holds: how Split's
// split_dim and ConcatV2's axis are given.
bool ConstInt(const NodeDef* c, int port, int64_t* v) {
  if (c == nullptr || c->op != "Const" || port != 0) return false;
  auto it = c->attr.find("value");
  std::vector<int64_t> values;
  if (it == c->attr.end() || !it->second.GetIntTensor(&values) || values.size() != 1)
    return false;
  *v = values[0];
  return true;
}

// The integers of a Const (read at port 0): a Tile's multiples.
bool ConstInts(const NodeDef* c, int port, std::vector<int64_t>* v) {
  if (c == nullptr || c->op != "Const" || port != 0) return false;
  auto it = c->attr.find("value");
  return it != c->attr.end() && it->second.GetIntTensor(v);
}

// Whether `x` may disappear into a fused node on `device`: on it, neither
// fetched nor fed, without control edges.
bool Absorbable(const NodeDef& x, const std::string& device, const GraphView& view,
                const RewriteContext& ctx) {
  return x.device == device && ctx.on_device(x) && !ctx.preserved(x.name) &&
         view.control_fanins(x).empty() && view.control_fanouts(x).empty();
}

// The file comment's second step, over every fused node of the graph.
void AbsorbSplitsAndConcats(GraphDef* graph, const RewriteContext& ctx) {
  struct Plan {
    size_t node;  // the fused node's index
    std::vector<std::string> inputs;
    std::vector<int64_t> slices, outputs, concat;
    std::vector<std::vector<int64_t>> tiles;  // multiples per input (empty: none)
    std::unordered_map<int, int> port_of;     // old output port -> new
  };
  std::vector<Plan> plans;
  std::unordered_map<std::string, std::string> concat_to;  // ConcatV2 -> fused output
  std::vector<bool> remove(graph->node.size(), false);
  {
    GraphView view(*graph);
    if (view.has_duplicate_names()) return;
    auto index_of = [&](const NodeDef* x) { return static_cast<size_t>(x - graph->node.data()); };
    // A Const nothing but `reader` reads goes with it.
    auto drop_const = [&](const NodeDef* c, const NodeDef* reader) {
      if (ctx.preserved(c->name) || !view.control_fanouts(*c).empty()) return;
      for (const NodeDef* r : view.regular_consumers(*c))
        if (r != reader) return;
      remove[index_of(c)] = true;
    };
    // The Splits whose outputs only fused nodes read (on its device, with
    // no control inputs): they go, their readers read the pieces.
    struct SplitInfo {
      std::string value;
      int64_t axis, count;
    };
    std::unordered_map<const NodeDef*, SplitInfo> split_of;
    for (const NodeDef& p : graph->node) {
      int64_t count = 0, axis = 0;
      if (p.op != "Split" || !p.attr.count("num_split") ||
          !p.attr.at("num_split").GetInt(&count) || count < 2 ||
          view.num_regular_inputs(p) != 2 || !Absorbable(p, p.device, view, ctx))
        continue;
      int dim_port = -1, value_port = -1;
      const NodeDef* dim = view.regular_fanin(p, 0, &dim_port);
      const NodeDef* value = view.regular_fanin(p, 1, &value_port);
      bool fused_only = value != nullptr && ConstInt(dim, dim_port, &axis) &&
                        view.num_regular_fanouts(p) > 0;
      for (const NodeDef* c : view.regular_consumers(p))
        fused_only = fused_only && c->op == kFusedOp && c->device == p.device &&
                     static_cast<int>(c->input.size()) == view.num_regular_inputs(*c);
      if (!fused_only) continue;
      split_of[&p] = SplitInfo{TensorName(value->name, value_port), axis, count};
      remove[index_of(&p)] = true;
      drop_const(dim, &p);
      (*ctx.fired)["ElementwiseFusion splits"] += 1;
    }
    // The Tiles whose output only fused nodes read (on its device, with a
    // Const multiples, no control edges): they go, their readers tile.
    struct TileInfo {
      std::string value;
      std::vector<int64_t> multiples;
    };
    std::unordered_map<const NodeDef*, TileInfo> tile_of;
    for (const NodeDef& p : graph->node) {
      if (p.op != "Tile" || view.num_regular_inputs(p) != 2 || !Absorbable(p, p.device, view, ctx))
        continue;
      int value_port = -1, m_port = -1;
      const NodeDef* value = view.regular_fanin(p, 0, &value_port);
      const NodeDef* mult = view.regular_fanin(p, 1, &m_port);
      std::vector<int64_t> m;
      bool fused_only = value != nullptr && ConstInts(mult, m_port, &m) && !m.empty() &&
                        view.num_regular_fanouts(p) > 0;
      for (const NodeDef* c : view.regular_consumers(p))
        fused_only = fused_only && c->op == kFusedOp && c->device == p.device &&
                     static_cast<int>(c->input.size()) == view.num_regular_inputs(*c);
      if (!fused_only) continue;
      tile_of[&p] = TileInfo{TensorName(value->name, value_port), std::move(m)};
      remove[index_of(&p)] = true;
      drop_const(mult, &p);
      (*ctx.fired)["ElementwiseFusion tiles"] += 1;
    }
    for (size_t fi = 0; fi < graph->node.size(); ++fi) {
      const NodeDef& f = graph->node[fi];
      if (f.op != kFusedOp || !ctx.on_device(f)) continue;
      const int num_inputs = view.num_regular_inputs(f);
      if (static_cast<int>(f.input.size()) != num_inputs) continue;  // control inputs
      Plan plan{fi, f.input, {}, {}, {}, {}};
      if (f.attr.count("slices")) f.attr.at("slices").GetIntList(&plan.slices);
      if (plan.slices.size() != 3 * static_cast<size_t>(num_inputs)) {
        plan.slices.assign(3 * static_cast<size_t>(num_inputs), 0);
        for (int i = 0; i < num_inputs; ++i) plan.slices[3 * i + 2] = 1;
      }
      if (!f.attr.count("outputs") || !f.attr.at("outputs").GetIntList(&plan.outputs)) continue;
      if (f.attr.count("concat")) f.attr.at("concat").GetIntList(&plan.concat);
      plan.tiles.resize(num_inputs);
      std::vector<int64_t> tiles;
      if (f.attr.count("tiles")) f.attr.at("tiles").GetIntList(&tiles);
      for (size_t k = 0, i = 0; k < tiles.size() && i < plan.tiles.size(); ++i) {
        const int64_t m = tiles[k];
        if (m < 0 || k + 1 + m > tiles.size()) break;
        plan.tiles[i].assign(tiles.begin() + k + 1, tiles.begin() + k + 1 + m);
        k += 1 + m;
      }
      bool changed = false;

      // Tiles only fused nodes read: f reads their input, tiled.
      for (int i = 0; i < num_inputs; ++i) {
        const NodeDef* p = view.regular_fanin(f, i);
        auto tp = p != nullptr ? tile_of.find(p) : tile_of.end();
        if (tp == tile_of.end()) continue;
        plan.inputs[i] = tp->second.value;
        plan.tiles[i] = tp->second.multiples;
        changed = true;
      }

      // Splits only fused nodes read: f reads their input in pieces.
      for (int i = 0; i < num_inputs; ++i) {
        int port = -1;
        const NodeDef* p = view.regular_fanin(f, i, &port);
        auto sp = p != nullptr ? split_of.find(p) : split_of.end();
        if (sp == split_of.end()) continue;
        plan.inputs[i] = sp->second.value;
        plan.slices[3 * i] = sp->second.axis;
        plan.slices[3 * i + 1] = port;
        plan.slices[3 * i + 2] = sp->second.count;
        changed = true;
      }

      // ConcatV2s of f's outputs only: outputs of f.
      const int num_plain = static_cast<int>(plan.outputs.size());
      int num_groups = 0;
      for (size_t k = 0; k + 1 < plan.concat.size(); k += 2 + plan.concat[k + 1]) ++num_groups;
      std::vector<std::string> absorbed;
      for (int port = 0; port < num_plain; ++port)
        for (const Fanout& fo : view.regular_fanouts(f, port)) {
          const NodeDef* c = fo.consumer;
          const int n = c->op == "ConcatV2" ? view.num_regular_inputs(*c) : 0;
          if (n < 2 || remove[index_of(c)] || c->TypeAttr("T") != f.TypeAttr("T") ||
              !Absorbable(*c, f.device, view, ctx))
            continue;
          std::vector<int64_t> parts;
          for (int k = 0; k < n - 1; ++k) {
            int pp = -1;
            if (view.regular_fanin(*c, k, &pp) != &f || pp < 0 || pp >= num_plain) break;
            parts.push_back(plan.outputs[pp]);
          }
          int axis_port = -1;
          int64_t axis = 0;
          const NodeDef* ax = view.regular_fanin(*c, n - 1, &axis_port);
          if (static_cast<int>(parts.size()) != n - 1 || !ConstInt(ax, axis_port, &axis)) continue;
          plan.concat.push_back(axis);
          plan.concat.push_back(n - 1);
          plan.concat.insert(plan.concat.end(), parts.begin(), parts.end());
          remove[index_of(c)] = true;
          drop_const(ax, c);
          absorbed.push_back(c->name);
          (*ctx.fired)["ElementwiseFusion concats"] += 1;
          changed = true;
        }
      if (!changed) continue;
      // Plain outputs nothing but absorbed ConcatV2s read are dropped.
      std::vector<int64_t> kept;
      for (int port = 0; port < num_plain; ++port) {
        const std::vector<Fanout>& readers = view.regular_fanouts(f, port);
        bool needed = readers.empty();
        for (const Fanout& fo : readers) needed = needed || !remove[index_of(fo.consumer)];
        if (!needed) continue;
        plan.port_of[port] = static_cast<int>(kept.size());
        kept.push_back(plan.outputs[port]);
      }
      for (int g = 0; g < num_groups; ++g)
        plan.port_of[num_plain + g] = static_cast<int>(kept.size()) + g;
      for (size_t a = 0; a < absorbed.size(); ++a)
        concat_to[absorbed[a]] =
            TensorName(f.name, static_cast<int>(kept.size()) + num_groups + static_cast<int>(a));
      plan.outputs = std::move(kept);
      plans.push_back(std::move(plan));
    }
  }
  if (plans.empty()) return;
  std::unordered_map<std::string, const Plan*> plan_of;
  for (const Plan& plan : plans) {
    NodeDef& f = graph->node[plan.node];
    f.input = plan.inputs;
    bool sliced = false;
    for (size_t i = 2; i < plan.slices.size(); i += 3) sliced = sliced || plan.slices[i] != 1;
    if (sliced) f.attr["slices"] = AttrValue::IntList(plan.slices);
    f.attr["outputs"] = AttrValue::IntList(plan.outputs);
    if (!plan.concat.empty()) f.attr["concat"] = AttrValue::IntList(plan.concat);
    std::vector<int64_t> tiles;
    bool tiled = false;
    for (const std::vector<int64_t>& m : plan.tiles) {
      tiles.push_back(static_cast<int64_t>(m.size()));
      tiles.insert(tiles.end(), m.begin(), m.end());
      tiled = tiled || !m.empty();
    }
    if (tiled) f.attr["tiles"] = AttrValue::IntList(tiles);
    int num_groups = 0;
    for (size_t k = 0; k + 1 < plan.concat.size(); k += 2 + plan.concat[k + 1]) ++num_groups;
    f.attr["num_outputs"] =
        AttrValue::Int(static_cast<int64_t>(plan.outputs.size()) + num_groups);
    plan_of[f.name] = &plan;
  }
  for (size_t i = 0; i < graph->node.size(); ++i) {
    if (remove[i]) continue;
    for (std::string& in : graph->node[i].input) {
      const TensorRef r = ParseInput(in);
      if (r.is_control()) continue;
      if (auto c = concat_to.find(r.node); c != concat_to.end() && r.port == 0) {
        in = c->second;
      } else if (auto p = plan_of.find(r.node); p != plan_of.end()) {
        auto port = p->second->port_of.find(r.port);
        if (port != p->second->port_of.end()) in = TensorName(r.node, port->second);
      }
    }
  }
  RemoveNodes(graph, remove);
}

// The file comment's Const rule: each Const's control input `^m`, m a
// candidate op, a Tile or a Reshape on the device, becomes `^p` for every
// node p that m reads (once each), when each is on the Const's device and no
// control-flow op; repeated up such ops (a Tile that a fused node will read
// must not keep a control consumer either, "Tiles" below).
void MoveConstControlInputs(GraphDef* graph, const RewriteContext& ctx) {
  std::vector<std::pair<size_t, std::vector<std::string>>> edits;
  {
    GraphView view(*graph);
    if (view.has_duplicate_names()) return;
    auto movable = [&](const NodeDef* m, const NodeDef& c) {
      if (m == nullptr || !ctx.on_device(*m) || view.num_regular_inputs(*m) == 0 ||
          (pdk_fused::FindFusedOp(m->op) < 0 && m->op != "Tile" && m->op != "Reshape"))
        return false;
      for (int k = 0; k < view.num_regular_inputs(*m); ++k) {
        const NodeDef* p = view.regular_fanin(*m, k);
        if (p == nullptr || IsControlFlowOp(p->op) || p->device != c.device) return false;
      }
      return true;
    };
    for (size_t i = 0; i < graph->node.size(); ++i) {
      const NodeDef& c = graph->node[i];
      if (c.op != "Const" || view.control_fanins(c).empty()) continue;
      std::vector<std::string> inputs(c.input.begin(), c.input.end());
      bool changed = false;
      for (bool again = true; again;) {
        again = false;
        std::vector<std::string> next;
        auto add = [&](const std::string& in) {
          if (std::find(next.begin(), next.end(), in) == next.end()) next.push_back(in);
        };
        for (const std::string& in : inputs) {
          const TensorRef r = ParseInput(in);
          const NodeDef* m = r.is_control() ? view.node(r.node) : nullptr;
          if (!movable(m, c)) {
            add(in);
            continue;
          }
          for (int k = 0; k < view.num_regular_inputs(*m); ++k)
            add("^" + view.regular_fanin(*m, k)->name);
          again = changed = true;
        }
        inputs = std::move(next);
      }
      if (changed) edits.emplace_back(i, std::move(inputs));
    }
  }
  for (auto& [i, inputs] : edits) graph->node[i].input = std::move(inputs);
  if (!edits.empty()) (*ctx.fired)["ElementwiseFusion const control inputs"] += edits.size();
}

}  // namespace

void FuseElementwise(GraphDef* graph, const RewriteContext& ctx) {
  if (!ctx.can_emit(kFusedOp)) return;
  MoveConstControlInputs(graph, ctx);
  std::vector<NodeDef> fused;
  std::unordered_map<std::string, std::string> rewire;    // member name -> fused output
  std::unordered_map<std::string, std::string> fused_of;  // member name -> fused node
  std::vector<bool> remove(graph->node.size(), false);
  {
    GraphView view(*graph);
    if (view.has_duplicate_names()) return;
    Fusion fusion(*graph, view, ctx);
    const std::vector<std::vector<int>> groups = fusion.Run();
    for (const std::vector<int>& group : groups) {
      const NodeDef& last = graph->node[group.back()];
      std::string name = last.name + "/pdk_fused_elementwise";
      for (int k = 1; view.node(name); ++k)
        name = last.name + "/pdk_fused_elementwise_" + std::to_string(k);
      const int g = fusion.group_of(group[0]);

      std::unordered_map<int, int> value_of;  // member -> value index (set below)
      std::unordered_map<std::string, int> input_of;
      std::vector<std::string> inputs;
      std::vector<int64_t> tin;
      std::vector<int64_t> ops, args, outputs;
      // Inputs first: every outside tensor a member reads.
      std::vector<std::vector<std::pair<bool, int>>> operands(group.size());
      for (size_t j = 0; j < group.size(); ++j) {
        const NodeDef& x = graph->node[group[j]];
        for (int k = 0; k < view.num_regular_inputs(x); ++k) {
          int port = -1;
          const NodeDef* p = view.regular_fanin(x, k, &port);
          const int pi = fusion.index_of(p);
          if (fusion.group_of(pi) == g && port == 0) {
            operands[j].push_back({true, pi});
            continue;
          }
          const std::string t = TensorName(p->name, port);
          auto [it, added] = input_of.emplace(t, static_cast<int>(inputs.size()));
          if (added) {
            inputs.push_back(t);
            tin.push_back(fusion.OperandDtype(group[j], k));
          }
          operands[j].push_back({false, it->second});
        }
      }
      const int num_inputs = static_cast<int>(inputs.size());
      std::vector<std::string> replaced;
      int next = num_inputs;  // value index of the next instruction
      for (size_t j = 0; j < group.size(); ++j) {
        const NodeDef& x = graph->node[group[j]];
        std::vector<int64_t> vals;
        for (const auto& [member, v] : operands[j]) vals.push_back(member ? value_of.at(v) : v);
        if (fusion.code(group[j]) == pdk_fused::FindFusedOp("AddN")) {
          // Summed in the order of the input names: Grappler's canonicalizer
          // (grappler/utils/canonicalizer.cc) sorts the inputs of AddN, a
          // commutative op, by name in its next pass, which it would do with
          // the fused outputs' names here.
          std::vector<size_t> order(vals.size());
          std::iota(order.begin(), order.end(), 0);
          std::stable_sort(order.begin(), order.end(),
                           [&](size_t a, size_t b) { return x.input[a] < x.input[b]; });
          int64_t acc = vals[order[0]];
          for (size_t k = 1; k < order.size(); ++k) {
            ops.push_back(fusion.code(group[j]));
            args.push_back(acc);
            args.push_back(vals[order[k]]);
            acc = next++;
          }
        } else {
          ops.push_back(fusion.code(group[j]));
          args.insert(args.end(), vals.begin(), vals.end());
          ++next;
        }
        value_of[group[j]] = next - 1;
        if (IsOutput(view, x,
                     [&](const NodeDef* c) { return fusion.group_of(fusion.index_of(c)) == g; })) {
          rewire[x.name] = TensorName(name, static_cast<int>(outputs.size()));
          outputs.push_back(value_of.at(group[j]));
        }
        remove[group[j]] = true;
        replaced.push_back(x.name);
      }
      // Control inputs from outside the group, once each, after the data inputs.
      for (int x : group)
        for (const NodeDef* p : view.control_fanins(graph->node[x])) {
          if (fusion.group_of(fusion.index_of(p)) == g) continue;
          const std::string c = "^" + p->name;
          if (std::find(inputs.begin() + num_inputs, inputs.end(), c) == inputs.end())
            inputs.push_back(c);
        }
      for (int x : group) fused_of[graph->node[x].name] = name;
      std::map<std::string, AttrValue> attr;
      attr["T"] = AttrValue::Type(fusion.dtype(group[0]));
      attr["Tin"] = AttrValue::TypeList(tin);
      attr["num_outputs"] = AttrValue::Int(static_cast<int64_t>(outputs.size()));
      attr["ops"] = AttrValue::IntList(ops);
      attr["args"] = AttrValue::IntList(args);
      attr["outputs"] = AttrValue::IntList(outputs);
      fused.push_back(MakeNode(name, kFusedOp, last.device, inputs, std::move(attr)));
      for (size_t i = 0; i < tin.size(); ++i)
        if (tin[i] == DT_INT32) AddHostMemoryArg(&fused.back(), "_input_hostmem", i);
      ctx.Fired("ElementwiseFusion", std::string(kFusedOp) + " '" + name + "'", replaced);
      (*ctx.fired)["ElementwiseFusion nodes"] += group.size();
    }
  }
  if (fused.empty()) return;
  // Readers of members (outside nodes and other groups) read the fused
  // outputs; control inputs on members wait for the fused node (once).
  auto rewire_inputs = [&](NodeDef& x) {
    bool control_rewired = false;
    for (std::string& in : x.input) {
      const TensorRef r = ParseInput(in);
      if (r.is_control()) {
        auto it = fused_of.find(r.node);
        if (it != fused_of.end()) {
          in = "^" + it->second;
          control_rewired = true;
        }
        continue;
      }
      if (r.port != 0) continue;  // members have one output
      auto it = rewire.find(r.node);
      if (it != rewire.end()) in = it->second;
    }
    if (!control_rewired) return;
    std::vector<std::string> kept;
    for (std::string& in : x.input)
      if (in[0] != '^' || std::find(kept.begin(), kept.end(), in) == kept.end())
        kept.push_back(std::move(in));
    x.input = std::move(kept);
  };
  for (size_t i = 0; i < graph->node.size(); ++i)
    if (!remove[i]) rewire_inputs(graph->node[i]);
  for (NodeDef& n : fused) rewire_inputs(n);
  RemoveNodes(graph, remove);
  for (NodeDef& n : fused) graph->node.push_back(std::move(n));
  AbsorbSplitsAndConcats(graph, ctx);
}

}  // namespace pdk_graph
