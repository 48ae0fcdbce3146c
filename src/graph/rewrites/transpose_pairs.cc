// Transposes that cancel -> nothing.
//
// (1) Transpose(Transpose(x, p1), p2) with p1[p2[i]] == i for every i
//     (the outer output's dimension i is x's dimension p1[p2[i]]):
//
//        x                                   x
//        |                                   |
//   Transpose(p1) (inner)      =>        consumers  (+ the control inputs of
//        |                                              both Transposes)
//   Transpose(p2) (outer)
//        |
//    consumers
//
//     The outer Transpose goes; the inner one goes too when the outer one was
//     its only consumer (no other regular or control consumer, not a
//     fetch/feed/keep node), otherwise it stays for its other consumers.
// (2) Transpose(x, p) with p[i] == i for every i -> x.
//
// Fires when the Transposes are on one PDK device, each permutation comes
// from a Const node holding a valid int32/int64 permutation, the outer (or
// single) Transpose is not a fetch/feed/keep node, only its output 0 is read,
// and every consumer is on its device and is no control-flow op (see
// identity_removal.cc). A node takes part in at most one match per pass;
// idempotent: afterwards nothing matches.
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/bypass.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

// The permutation input of a Transpose, if it is a Const holding a valid one.
bool ConstPermutation(const GraphView& view, const NodeDef& transpose, std::vector<int64_t>* perm) {
  int port = 0;
  const NodeDef* c = view.regular_fanin(transpose, 1, &port);
  if (c == nullptr || c->op != "Const" || port != 0) return false;
  auto it = c->attr.find("value");
  if (it == c->attr.end() || !it->second.GetIntTensor(perm)) return false;
  std::vector<bool> seen(perm->size(), false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm->size()) || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

bool IsTransposeOnDevice(const RewriteContext& ctx, const GraphView& view, const NodeDef& n) {
  return n.op == "Transpose" && ctx.on_device(n) && view.num_regular_inputs(n) == 2;
}

}  // namespace

void CancelTransposes(GraphDef* graph, const RewriteContext& ctx) {
  GraphView view(*graph);
  if (view.has_duplicate_names()) return;
  std::unordered_map<std::string, Bypass> bypass;
  std::unordered_set<std::string> used;
  for (const NodeDef& outer : graph->node) {
    if (!IsTransposeOnDevice(ctx, view, outer) || used.count(outer.name)) continue;
    std::vector<int64_t> p2;
    if (!ConstPermutation(view, outer, &p2)) continue;
    if (!ConsumersAllowBypass(view, outer, outer.device, ctx.optimizer.preserve)) continue;
    const std::vector<std::string> outer_controls = ControlInputs(outer);

    bool identity = true;
    for (size_t i = 0; i < p2.size(); ++i) identity = identity && p2[i] == static_cast<int64_t>(i);
    if (identity) {  // (2)
      used.insert(outer.name);
      bypass[outer.name] = Bypass{outer.input[0], outer_controls};
      ctx.Fired("Transpose(identity)", "'" + outer.input[0] + "'", {outer.name});
      continue;
    }

    int port = 0;  // (1)
    const NodeDef* inner = view.regular_fanin(outer, 0, &port);
    if (inner == nullptr || port != 0 || !IsTransposeOnDevice(ctx, view, *inner)) continue;
    if (inner->device != outer.device || used.count(inner->name)) continue;
    std::vector<int64_t> p1;
    if (!ConstPermutation(view, *inner, &p1) || p1.size() != p2.size()) continue;
    bool cancels = true;
    for (size_t i = 0; i < p2.size(); ++i) cancels = cancels && p1[p2[i]] == static_cast<int64_t>(i);
    if (!cancels) continue;

    const std::string x = inner->input[0];
    Bypass b{x, ControlInputs(*inner)};
    b.controls.insert(b.controls.end(), outer_controls.begin(), outer_controls.end());
    used.insert(outer.name);
    bypass[outer.name] = b;
    std::vector<std::string> replaced{outer.name};
    const bool inner_only_feeds_outer =
        view.num_regular_fanouts(*inner) == 1 && view.control_fanouts(*inner).empty() &&
        !ctx.preserved(inner->name);
    if (inner_only_feeds_outer) {
      used.insert(inner->name);
      bypass[inner->name] = Bypass{x, {}};
      replaced.insert(replaced.begin(), inner->name);
    }
    ctx.Fired("Transpose+Transpose", "'" + x + "'", replaced);
  }
  BypassNodes(graph, bypass);
}

}  // namespace pdk_graph
