// Gradients of TensorList loops (Keras LSTM/GRU/RNN) without variant arithmetic.
//
// The gradient of a While loop that reads its input sequence with
// TensorListGetItem (Keras's TensorArray.read on the TensorFlow backend)
// contains two ops on DT_VARIANT (TensorList) tensors:
//
//   ZerosLike(list)            the initial gradient of the loop-invariant input
//                              list: a list of zero tensors;
//   AddN(acc, SetItem(Reserve(shape, n), i, dx))
//                              per iteration, the gradient of GetItem(list, i)
//                              (a fresh list holding dx at index i) added to
//                              the accumulated list, element by element.
//
// TensorFlow implements both for CPU and GPU only (UnaryVariantOp/BinaryVariantOp
// registries keyed by device type), and the kernel C API cannot read a
// variant tensor (TF_AddNVariant / TF_ZerosLikeVariant are declared in
// kernels_experimental.h but not exported by the TF 2.21 wheel), so the placer
// puts them on the CPU: real float math on the CPU, and each iteration copies
// the whole list device -> host -> device. These rewrites express the same
// values with ops that run on PDK: TensorFlow's own DEVICE_DEFAULT TensorList
// kernels (bookkeeping on the list handle, element tensors stay in PDK
// memory) and PDK's ZerosLike / AddV2 for the arithmetic.
//
// (1) AddN(acc, TensorListSetItem(TensorListReserve(s, n), i, dx))          [T = variant, N = 2]
//       -> TensorListSetItem(acc, i, AddV2(TensorListGetItem(acc, i, Shape(dx)), dx))
//     The fresh list has exactly one initialized element (index i); adding
//     two lists adds initialized elements pairwise and keeps the initialized
//     one where the other is uninitialized. GetItem returns acc[i] if
//     initialized, else zeros of element_shape = Shape(dx): either way
//     acc[i] + dx as AddN has it, every other element unchanged. Fires when the
//     SetItem and the Reserve feed nothing else (no other consumer, no control
//     edge, not a fetch/keep node), the SetItem is on a PDK device, and its
//     element dtype is float32, float64, float16 or bfloat16 (Keras mixed
//     precision; AddV2 rounds acc[i] + dx once to the element type, as TF's
//     AddN of the two lists does element by element). The new nodes go on the
//     SetItem's device; the result keeps the AddN's name (consumers read
//     "<AddN>:0"); the SetItem and Reserve are removed.
//
// (2) ZerosLike(L)  [T = variant], L = the loop output of a list that enters a
//     lowered While loop unchanged from TensorListFromTensor(x, s):
//        Identity* <- Exit <- Switch(M) ; M = Merge(Enter(Identity*(FromTensor)),
//                                               NextIteration(Identity*(Switch(M):1)))
//       -> TensorListFromTensor(ZerosLike(x), s)
//     The list is invariant (the body passes it through), so its elements are
//     the rows of x: zeros of the same shapes, with the same element_shape.
//     Fires when FromTensor is on a PDK device with element dtype float32,
//     float64, float16 or bfloat16; the new nodes go on its device and the
//     result keeps the ZerosLike's name.
//
// Both use ops TensorFlow 2.21 registers for DEVICE_DEFAULT (TensorListGetItem,
// TensorListSetItem, TensorListFromTensor, Shape) and check PDK's registry
// for AddV2 and ZerosLike. Idempotent: the results contain no variant AddN or
// ZerosLike.
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

// The float element types PDK registers AddV2 and ZerosLike for (Keras's
// mixed precision runs LSTM / GRU steps in float16 or bfloat16).
bool IsSupportedElementType(int dtype) {
  return dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_HALF || dtype == DT_BFLOAT16;
}

// Output 0 (the only output) of `n` goes to exactly one input slot and
// nowhere else, and `n` is not a fetch/feed/keep node.
bool FeedsOnlyOneSlot(const GraphView& view, const NodeDef& n, const RewriteContext& ctx) {
  return view.num_regular_fanouts(n) == 1 && view.regular_fanouts(n, 0).size() == 1 &&
         view.control_fanouts(n).empty() && !ctx.preserved(n.name);
}

// Follows regular input 0 through Identity nodes; returns the producer and port.
const NodeDef* SkipIdentities(const GraphView& view, const NodeDef* n, int* port) {
  int guard = 0;
  while (n != nullptr && n->op == "Identity" && view.num_regular_inputs(*n) == 1 && ++guard < 64)
    n = view.regular_fanin(*n, 0, port);
  return n;
}

std::map<std::string, AttrValue> InternalAttrs(const NodeDef& n) {
  std::map<std::string, AttrValue> out;
  for (const auto& [key, value] : n.attr)
    if (!key.empty() && key[0] == '_') out[key] = value;
  return out;
}

// ---------------------------------------------------------------- (1) AddN

struct AddNMatch {
  std::string add_n, set_item, reserve;
  int fresh_slot;  // which AddN input is the SetItem
};

std::vector<AddNMatch> FindAddNMatches(const GraphView& view, const RewriteContext& ctx) {
  std::vector<AddNMatch> out;
  for (const NodeDef& add : view.graph().node) {
    if (add.op != "AddN" || add.TypeAttr("T") != DT_VARIANT) continue;
    if (view.num_regular_inputs(add) != 2) continue;
    for (int slot = 0; slot < 2; ++slot) {
      int port = -1;
      const NodeDef* set = view.regular_fanin(add, slot, &port);
      if (set == nullptr || port != 0 || set->op != "TensorListSetItem") continue;
      if (!ctx.on_device(*set) || !IsSupportedElementType(set->TypeAttr("element_dtype")))
        continue;
      if (set->BoolAttr("resize_if_index_out_of_bounds", false)) continue;
      if (view.num_regular_inputs(*set) != 3 || !FeedsOnlyOneSlot(view, *set, ctx)) continue;
      const NodeDef* reserve = view.regular_fanin(*set, 0, &port);
      if (reserve == nullptr || port != 0 || reserve->op != "TensorListReserve") continue;
      if (!FeedsOnlyOneSlot(view, *reserve, ctx)) continue;
      // The other addend must not be the same fresh list.
      int other_port = -1;
      const NodeDef* other = view.regular_fanin(add, 1 - slot, &other_port);
      if (other == nullptr || other == set) continue;
      out.push_back({add.name, set->name, reserve->name, slot});
      break;
    }
  }
  return out;
}

// ---------------------------------------------------------- (2) ZerosLike

struct ZerosLikeMatch {
  std::string zeros_like, from_tensor;
};

// The TensorListFromTensor whose list reaches `n` (the ZerosLike) unchanged
// through one lowered While loop, or nullptr.
const NodeDef* InvariantLoopSource(const GraphView& view, const NodeDef& n) {
  int port = -1;
  const NodeDef* exit = SkipIdentities(view, view.regular_fanin(n, 0, &port), &port);
  if (exit == nullptr || port != 0 || exit->op != "Exit") return nullptr;
  const NodeDef* sw = view.regular_fanin(*exit, 0, &port);
  if (sw == nullptr || port != 0 || sw->op != "Switch") return nullptr;
  const NodeDef* merge = view.regular_fanin(*sw, 0, &port);
  if (merge == nullptr || port != 0 || merge->op != "Merge" ||
      view.num_regular_inputs(*merge) != 2)
    return nullptr;
  // Back edge: NextIteration <- Identity* <- Switch(merge):1 (the body passes it through).
  const NodeDef* next = view.regular_fanin(*merge, 1, &port);
  if (next == nullptr || port != 0 || next->op != "NextIteration") return nullptr;
  const NodeDef* body_sw = SkipIdentities(view, view.regular_fanin(*next, 0, &port), &port);
  if (body_sw == nullptr || port != 1 || body_sw->op != "Switch") return nullptr;
  int merge_port = -1;
  if (view.regular_fanin(*body_sw, 0, &merge_port) != merge || merge_port != 0) return nullptr;
  // Entry: Enter <- Identity* <- TensorListFromTensor.
  const NodeDef* enter = view.regular_fanin(*merge, 0, &port);
  if (enter == nullptr || port != 0 || enter->op != "Enter") return nullptr;
  const NodeDef* from = SkipIdentities(view, view.regular_fanin(*enter, 0, &port), &port);
  if (from == nullptr || port != 0 || from->op != "TensorListFromTensor") return nullptr;
  if (view.num_regular_inputs(*from) != 2) return nullptr;
  return from;
}

std::vector<ZerosLikeMatch> FindZerosLikeMatches(const GraphView& view, const RewriteContext& ctx) {
  std::vector<ZerosLikeMatch> out;
  for (const NodeDef& zl : view.graph().node) {
    if (zl.op != "ZerosLike" || zl.TypeAttr("T") != DT_VARIANT) continue;
    if (view.num_regular_inputs(zl) != 1) continue;
    const NodeDef* from = InvariantLoopSource(view, zl);
    if (from == nullptr || !ctx.on_device(*from) ||
        !IsSupportedElementType(from->TypeAttr("element_dtype")))
      continue;
    out.push_back({zl.name, from->name});
  }
  return out;
}

bool NameTaken(const std::unordered_map<std::string, size_t>& index, const std::string& name) {
  return index.count(name) > 0;
}

}  // namespace

void RewriteTensorListGradients(GraphDef* graph, const RewriteContext& ctx) {
  std::vector<AddNMatch> add_matches;
  std::vector<ZerosLikeMatch> zl_matches;
  {
    GraphView view(*graph);
    if (view.has_duplicate_names()) return;  // an invalid graph: touch nothing
    if (ctx.can_emit("AddV2")) add_matches = FindAddNMatches(view, ctx);
    if (ctx.can_emit("ZerosLike")) zl_matches = FindZerosLikeMatches(view, ctx);
  }
  if (add_matches.empty() && zl_matches.empty()) return;

  const std::unordered_map<std::string, size_t> index = IndexByName(*graph);
  std::vector<bool> remove(graph->node.size(), false);
  std::vector<NodeDef> added;

  for (const AddNMatch& m : add_matches) {
    const std::string shape_name = m.add_n + "/pdk_item_shape";
    const std::string get_name = m.add_n + "/pdk_item";
    const std::string sum_name = m.add_n + "/pdk_item_sum";
    if (NameTaken(index, shape_name) || NameTaken(index, get_name) || NameTaken(index, sum_name))
      continue;
    NodeDef& add = graph->node[index.at(m.add_n)];
    const NodeDef& set = graph->node[index.at(m.set_item)];
    const NodeDef& reserve = graph->node[index.at(m.reserve)];
    // Regular inputs: AddN(acc, fresh) or AddN(fresh, acc); SetItem(list, index, item).
    std::vector<std::string> add_in, set_in;
    for (const std::string& in : add.input)
      if (in.empty() || in[0] != '^') add_in.push_back(in);
    for (const std::string& in : set.input)
      if (in.empty() || in[0] != '^') set_in.push_back(in);
    const std::string acc = add_in[1 - m.fresh_slot];
    const std::string idx = set_in[1], item = set_in[2];
    const std::string& device = set.device;
    const int dtype = set.TypeAttr("element_dtype");

    // Control inputs of the replaced nodes stay: on the first new node that
    // runs (Shape), and the AddN's own on the result.
    std::vector<std::string> controls = ControlInputs(set);
    for (const std::string& c : ControlInputs(reserve)) controls.push_back(c);
    std::vector<std::string> shape_in{item};
    shape_in.insert(shape_in.end(), controls.begin(), controls.end());

    added.push_back(MakeNode(shape_name, "Shape", device, shape_in,
                             {{"T", AttrValue::Type(dtype)}, {"out_type", AttrValue::Type(DT_INT32)}}));
    added.push_back(MakeNode(get_name, "TensorListGetItem", device, {acc, idx, shape_name},
                             {{"element_dtype", AttrValue::Type(dtype)}}));
    added.push_back(MakeNode(sum_name, "AddV2", device, {get_name, item},
                             {{"T", AttrValue::Type(dtype)}}));

    // The AddN becomes the SetItem: same name, so its consumers are untouched.
    std::map<std::string, AttrValue> attr = InternalAttrs(add);
    for (const auto& [key, value] : set.attr)
      if (key.empty() || key[0] != '_') attr[key] = value;
    std::vector<std::string> inputs{acc, idx, sum_name};
    for (const std::string& c : ControlInputs(add)) inputs.push_back(c);
    add.op = "TensorListSetItem";
    add.device = device;
    add.input = std::move(inputs);
    add.attr = std::move(attr);

    remove[index.at(m.set_item)] = true;
    remove[index.at(m.reserve)] = true;
    ctx.Fired("AddN(TensorList)", "TensorListGetItem+AddV2+TensorListSetItem '" + m.add_n + "'",
              {m.add_n, m.set_item, m.reserve});
  }

  for (const ZerosLikeMatch& m : zl_matches) {
    const std::string zeros_name = m.zeros_like + "/pdk_zeros";
    if (NameTaken(index, zeros_name)) continue;
    const NodeDef& from = graph->node[index.at(m.from_tensor)];
    NodeDef& zl = graph->node[index.at(m.zeros_like)];
    std::vector<std::string> from_in;
    for (const std::string& in : from.input)
      if (in.empty() || in[0] != '^') from_in.push_back(in);
    const int dtype = from.TypeAttr("element_dtype");
    added.push_back(MakeNode(zeros_name, "ZerosLike", from.device, {from_in[0]},
                             {{"T", AttrValue::Type(dtype)}}));

    std::map<std::string, AttrValue> attr = InternalAttrs(zl);
    for (const auto& [key, value] : from.attr)
      if (key.empty() || key[0] != '_') attr[key] = value;
    std::vector<std::string> inputs{zeros_name, from_in[1]};
    for (const std::string& c : ControlInputs(zl)) inputs.push_back(c);
    zl.op = "TensorListFromTensor";
    zl.device = from.device;
    zl.input = std::move(inputs);
    zl.attr = std::move(attr);
    ctx.Fired("ZerosLike(TensorList)", "TensorListFromTensor(ZerosLike) '" + m.zeros_like + "'",
              {m.zeros_like});
  }

  RemoveNodes(graph, remove);
  for (NodeDef& n : added) graph->node.push_back(std::move(n));
}

}  // namespace pdk_graph
