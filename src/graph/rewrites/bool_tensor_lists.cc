// TensorLists of bool on PDK, held as float32 lists.
//
// TensorFlow registers its DEVICE_DEFAULT TensorList kernels (the ones that
// run lists on a PluggableDevice) for element dtypes bfloat16, float16,
// float32, float64, int32 and int64 only (tensorflow/core/kernels/
// list_kernels.cc, REGISTER_TENSOR_LIST_OPS_DEFAULT): a list of bool elements
// has no TensorListFromTensor / GetItem / PopBack / Stack ... kernel on PDK,
// so the placer puts those nodes on the CPU. Keras's recurrent layers meet
// this whenever they get a mask (Embedding(mask_zero=True), Masking, padded
// ragged inputs): the mask is unstacked into a bool list read once per time
// step inside the loop, and the gradient loop pops the forward loop's masks
// from bool accumulator lists. The loop itself stays on PDK, so every
// iteration the list handle crossed devices (a variant copy of the whole
// list, TensorFlow's TensorListDeviceCopy, element by element) and the CPU
// side of the loop needed its own control structure fed from PDK every
// iteration: a Keras LSTM(64) on 80 masked time steps trained 5x slower on PDK
// than on the CPU.
//
// The rewrite keeps such lists on PDK by changing their element dtype to
// float32 (0 and 1, exact): every node that handles one list (its TensorList
// ops and the loop's forwarding nodes that carry the handle) gets
// element_dtype float32 and the PDK device, each bool element going in goes
// through Cast(bool -> float32), each element coming out through
// Cast(float32 -> bool). The Consts on the CPU that feed only moved nodes (an
// element_shape) move with them, so no node of the loop body is left on the
// CPU.
//
// Components: grown from each bool-element TensorList op, over the list
// handle edges, through the TensorList ops below and Enter / Exit / Merge /
// Switch / NextIteration / Identity of T = variant. A component is converted
// when all of it is on the CPU or on one PDK device of the same task, at least
// one of its nodes, element producers or element consumers is on that PDK
// device, and nothing else reads or writes its handles (a function argument
// or result, a non-lowered While, another op): otherwise it is left alone.
// Fetch/feed/keep nodes are not touched. Idempotent: no bool list is left.
//
// Only PDK's: its device memory is host memory, which is why moving the list
// ops off the CPU is a matter of the kernels' dtype, not of where the bytes
// can be read.
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/rewrites/rewrites.h"

namespace pdk_graph {
namespace {

constexpr int kHeldAs = DT_FLOAT;

// The argument layout of a TensorList op: which regular input / output is a
// list handle and which an element tensor (-1: none).
struct ListOp {
  const char* op;
  int handle_in, handle_out, element_in, element_out;
};

// clang-format off
constexpr ListOp kListOps[] = {
    {"EmptyTensorList", -1, 0, -1, -1},
    {"TensorListReserve", -1, 0, -1, -1},
    {"TensorListFromTensor", -1, 0, 0, -1},
    {"TensorListSplit", -1, 0, 0, -1},
    {"TensorListGetItem", 0, -1, -1, 0},
    {"TensorListSetItem", 0, 0, 2, -1},
    {"TensorListPushBack", 0, 0, 1, -1},
    {"TensorListPopBack", 0, 0, -1, 1},
    {"TensorListStack", 0, -1, -1, 0},
    {"TensorListGather", 0, -1, -1, 0},
    {"TensorListConcatV2", 0, -1, -1, 0},
    {"TensorListScatterIntoExistingList", 0, 0, 1, -1},
    {"TensorListResize", 0, 0, -1, -1},
    {"TensorListLength", 0, -1, -1, -1},
    {"TensorListElementShape", 0, -1, -1, -1},
};
// clang-format on

const ListOp* FindListOp(const std::string& op) {
  for (const ListOp& l : kListOps)
    if (op == l.op) return &l;
  return nullptr;
}

bool IsHandleForwarding(const NodeDef& n) {
  return (n.op == "Enter" || n.op == "Exit" || n.op == "Merge" || n.op == "Switch" ||
          n.op == "NextIteration" || n.op == "Identity") &&
         n.TypeAttr("T") == DT_VARIANT;
}

std::string Ref(const std::string& node, int port) {
  return port == 0 ? node : node + ":" + std::to_string(port);
}

std::string CastIn(const std::string& node) { return node + "/pdk_bool_to_float"; }
std::string CastOut(const std::string& node) { return node + "/pdk_float_to_bool"; }

struct Component {
  std::vector<const NodeDef*> nodes;  // list ops and handle forwarding nodes
  std::string device;                 // the PDK device it goes to
};

// Grows the component of `seed` (a list op); false if it is not convertible.
bool Grow(const GraphView& view, const NodeDef* seed, const RewriteContext& ctx,
          std::unordered_set<const NodeDef*>* seen, Component* out) {
  std::deque<const NodeDef*> queue{seed};
  seen->insert(seed);
  bool ok = true;
  auto visit = [&](const NodeDef* m) {
    if (m == nullptr) return;
    if (!FindListOp(m->op) && !IsHandleForwarding(*m)) {
      ok = false;  // something else holds a handle: leave the lists alone
      return;
    }
    if (seen->insert(m).second) queue.push_back(m);
  };
  while (!queue.empty()) {
    const NodeDef* n = queue.front();
    queue.pop_front();
    out->nodes.push_back(n);
    if (ctx.preserved(n->name)) ok = false;
    if (const ListOp* l = FindListOp(n->op)) {
      if (n->attr.count("element_dtype") && n->TypeAttr("element_dtype") != DT_BOOL) ok = false;
      if (l->handle_in >= 0) visit(view.regular_fanin(*n, l->handle_in));
      if (l->handle_out >= 0)
        for (const Fanout& f : view.regular_fanouts(*n, l->handle_out)) visit(f.consumer);
      // Other outputs (element, length) are not handles.
    } else {  // forwarding: every data input and output carries the handle
      for (int i = 0; i < view.num_regular_inputs(*n); ++i) {
        if (n->op == "Switch" && i == 1) continue;  // the predicate
        visit(view.regular_fanin(*n, i));
      }
      // Merge's output 1 is the index of the input it took, not a handle.
      const int ports = n->op == "Switch" ? 2 : 1;
      for (int port = 0; port < ports; ++port)
        for (const Fanout& f : view.regular_fanouts(*n, port)) visit(f.consumer);
    }
  }
  if (!ok) return false;
  // Devices: the CPU or one PDK device, of one task.
  auto consider = [&](const NodeDef* m) {
    if (m != nullptr && ctx.on_device(*m) && out->device.empty()) out->device = m->device;
  };
  for (const NodeDef* n : out->nodes) consider(n);
  for (const NodeDef* n : out->nodes) {
    const ListOp* l = FindListOp(n->op);
    if (l == nullptr) continue;
    if (l->element_in >= 0) consider(view.regular_fanin(*n, l->element_in));
    if (l->element_out >= 0)
      for (const Fanout& f : view.regular_fanouts(*n, l->element_out)) consider(f.consumer);
  }
  if (out->device.empty()) return false;
  for (const NodeDef* n : out->nodes) {
    if (view.node(CastIn(n->name)) || view.node(CastOut(n->name))) return false;  // names taken
    if (n->device == out->device) continue;
    if (DeviceTypeOf(n->device) != "CPU" || TaskOf(n->device) != TaskOf(out->device)) return false;
  }
  return true;
}

}  // namespace

void HoldBoolTensorListsAsFloat(GraphDef* graph, const RewriteContext& ctx) {
  if (!ctx.can_emit("Cast")) return;
  std::vector<Component> components;
  std::unordered_map<std::string, std::string> const_moves;  // Const name -> device
  {
    const GraphView view(*graph);
    if (view.has_duplicate_names()) return;
    std::unordered_set<const NodeDef*> seen;
    for (const NodeDef& n : graph->node) {
      if (!FindListOp(n.op) || n.TypeAttr("element_dtype") != DT_BOOL || seen.count(&n)) continue;
      Component c;
      if (Grow(view, &n, ctx, &seen, &c)) components.push_back(std::move(c));
    }
    // CPU Consts read only by nodes that move (an element_shape, a size).
    std::unordered_map<const NodeDef*, const std::string*> moving;
    for (const Component& c : components)
      for (const NodeDef* n : c.nodes) moving[n] = &c.device;
    for (const auto& [n, device] : moving) {
      for (int i = 0; i < view.num_regular_inputs(*n); ++i) {
        const NodeDef* p = view.regular_fanin(*n, i);
        if (p == nullptr || p->op != "Const" || DeviceTypeOf(p->device) != "CPU" ||
            ctx.preserved(p->name))
          continue;
        bool all_moving = view.control_fanouts(*p).empty();
        for (const NodeDef* c : view.regular_consumers(*p))
          all_moving = all_moving && moving.count(c) && *moving.at(c) == *device;
        if (all_moving) const_moves[p->name] = *device;
      }
    }
  }
  if (components.empty()) return;

  const std::unordered_map<std::string, size_t> index = IndexByName(*graph);
  std::vector<NodeDef> added;
  // Consumers of an element output read the Cast back to bool instead:
  // "<node>:<port>" -> the Cast's name.
  std::unordered_map<std::string, std::string> reroute;
  for (const Component& c : components) {
    std::vector<std::string> names;
    for (const NodeDef* cn : c.nodes) names.push_back(cn->name);
    for (const std::string& name : names) {
      NodeDef& n = graph->node[index.at(name)];
      n.device = c.device;
      const ListOp* l = FindListOp(n.op);
      if (l == nullptr) continue;
      if (n.attr.count("element_dtype")) n.attr["element_dtype"] = AttrValue::Type(kHeldAs);
      if (l->element_in >= 0) {
        int seen_regular = 0;
        for (std::string& in : n.input) {
          if (!in.empty() && in[0] == '^') continue;
          if (seen_regular++ != l->element_in) continue;
          const std::string cast = CastIn(n.name);
          added.push_back(MakeNode(cast, "Cast", c.device, {in},
                                   {{"SrcT", AttrValue::Type(DT_BOOL)},
                                    {"DstT", AttrValue::Type(kHeldAs)},
                                    {"Truncate", AttrValue::Bool(false)}}));
          in = cast;
          break;
        }
      }
      if (l->element_out >= 0) {
        const std::string cast = CastOut(n.name);
        added.push_back(MakeNode(cast, "Cast", c.device, {Ref(n.name, l->element_out)},
                                 {{"SrcT", AttrValue::Type(kHeldAs)},
                                  {"DstT", AttrValue::Type(DT_BOOL)},
                                  {"Truncate", AttrValue::Bool(false)}}));
        reroute[Ref(n.name, l->element_out)] = cast;
      }
    }
    ctx.Fired("bool TensorList held as float32 on the device", names.front(), names);
  }
  auto read_bools = [&](NodeDef& n) {
    for (std::string& in : n.input) {
      if (in.empty() || in[0] == '^') continue;
      const TensorRef r = ParseInput(in);
      auto it = reroute.find(Ref(r.node, r.port));
      if (it != reroute.end()) in = it->second;
    }
  };
  for (NodeDef& n : graph->node) {
    auto moved = const_moves.find(n.name);
    if (moved != const_moves.end()) n.device = moved->second;
    read_bools(n);
  }
  // A bool element going into one list that came out of another (a mask
  // pushed onto an accumulator) goes through both Casts.
  for (NodeDef& n : added) {
    if (n.TypeAttr("SrcT") == DT_BOOL) read_bools(n);
    graph->node.push_back(std::move(n));
  }
}

}  // namespace pdk_graph
