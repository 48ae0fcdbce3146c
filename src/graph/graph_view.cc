#include "graph/graph_view.h"

#include <charconv>

namespace pdk_graph {

TensorRef ParseInput(std::string_view input) {
  TensorRef r;
  if (!input.empty() && input[0] == '^') {
    r.node = std::string(input.substr(1));
    r.port = TensorRef::kControl;
    return r;
  }
  const size_t colon = input.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < input.size()) {
    int port = 0;
    const char* b = input.data() + colon + 1;
    const char* e = input.data() + input.size();
    auto [p, ec] = std::from_chars(b, e, port);
    if (ec == std::errc() && p == e && port >= 0) {
      r.node = std::string(input.substr(0, colon));
      r.port = port;
      return r;
    }
  }
  r.node = std::string(input);
  r.port = 0;
  return r;
}

std::string DeviceTypeOf(std::string_view device) {
  // The last "/"-separated component: "device:PDK:0", "PDK:0" or "cpu:0".
  const size_t slash = device.rfind('/');
  std::string_view last = slash == std::string_view::npos ? device : device.substr(slash + 1);
  if (last.substr(0, 7) == "device:") last.remove_prefix(7);
  const size_t colon = last.find(':');
  std::string type(colon == std::string_view::npos ? last : last.substr(0, colon));
  // Legacy lowercase spellings ("cpu", "gpu") are TensorFlow's CPU and GPU.
  if (type == "cpu") return "CPU";
  if (type == "gpu") return "GPU";
  // Components that are not a device (job:, replica:, task:) mean unplaced.
  if (type == "job" || type == "replica" || type == "task") return "";
  return type;
}

GraphView::GraphView(const GraphDef& graph) : graph_(graph) {
  const int n = static_cast<int>(graph.node.size());
  info_.resize(n);
  index_.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (!index_.emplace(graph.node[i].name, i).second) duplicate_names_ = true;
  }
  for (int i = 0; i < n; ++i) {
    const NodeDef& node = graph.node[i];
    NodeInfo& ni = info_[i];
    for (int k = 0; k < static_cast<int>(node.input.size()); ++k) {
      TensorRef r = ParseInput(node.input[k]);
      auto it = index_.find(r.node);
      const int producer = it == index_.end() ? -1 : it->second;
      if (r.is_control()) {
        if (producer >= 0) {
          ni.control_inputs.push_back(&graph.node[producer]);
          info_[producer].control_fanouts.push_back(&node);
        }
        continue;
      }
      const int slot = static_cast<int>(ni.regular_inputs.size());
      if (producer >= 0) {
        info_[producer].fanouts[r.port].push_back(Fanout{&node, slot});
        info_[producer].num_fanouts++;
      }
      ni.regular_inputs.push_back(std::move(r));
    }
  }
}

const NodeDef* GraphView::node(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &graph_.node[it->second];
}

const GraphView::NodeInfo* GraphView::info(const NodeDef& n) const {
  auto it = index_.find(n.name);
  if (it == index_.end() || &graph_.node[it->second] != &n) return nullptr;
  return &info_[it->second];
}

int GraphView::num_regular_inputs(const NodeDef& n) const {
  const NodeInfo* ni = info(n);
  return ni ? static_cast<int>(ni->regular_inputs.size()) : 0;
}

const NodeDef* GraphView::regular_fanin(const NodeDef& n, int i,
                                                 int* port) const {
  const NodeInfo* ni = info(n);
  if (!ni || i < 0 || i >= static_cast<int>(ni->regular_inputs.size())) return nullptr;
  const TensorRef& r = ni->regular_inputs[i];
  if (port) *port = r.port;
  return node(r.node);
}

std::vector<const NodeDef*> GraphView::control_fanins(const NodeDef& n) const {
  const NodeInfo* ni = info(n);
  return ni ? ni->control_inputs : std::vector<const NodeDef*>{};
}

const std::vector<Fanout>& GraphView::regular_fanouts(const NodeDef& n, int port) const {
  static const std::vector<Fanout> kNone;
  const NodeInfo* ni = info(n);
  if (!ni) return kNone;
  auto it = ni->fanouts.find(port);
  return it == ni->fanouts.end() ? kNone : it->second;
}

std::vector<const NodeDef*> GraphView::regular_consumers(const NodeDef& n) const {
  std::vector<const NodeDef*> out;
  if (const NodeInfo* ni = info(n))
    for (const auto& [port, fanouts] : ni->fanouts)
      for (const Fanout& f : fanouts) out.push_back(f.consumer);
  return out;
}

int GraphView::num_regular_fanouts(const NodeDef& n) const {
  const NodeInfo* ni = info(n);
  return ni ? ni->num_fanouts : 0;
}

const std::vector<const NodeDef*>& GraphView::control_fanouts(
    const NodeDef& n) const {
  static const std::vector<const NodeDef*> kNone;
  const NodeInfo* ni = info(n);
  return ni ? ni->control_fanouts : kNone;
}

void RemoveNodes(GraphDef* graph, const std::vector<bool>& remove) {
  size_t w = 0;
  for (size_t r = 0; r < graph->node.size(); ++r) {
    if (remove[r]) continue;
    if (w != r) graph->node[w] = std::move(graph->node[r]);
    ++w;
  }
  graph->node.resize(w);
}

NodeDef MakeNode(const std::string& name, const std::string& op, const std::string& device,
                 std::vector<std::string> inputs, std::map<std::string, AttrValue> attr) {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.device = device;
  n.input = std::move(inputs);
  n.attr = std::move(attr);
  return n;
}

}  // namespace pdk_graph
