#include "graph/graph_view.h"

namespace pdk_graph {

void SplitInputs(const NodeDef& n, std::vector<std::string>* regular,
                 std::vector<std::string>* control) {
  for (const std::string& in : n.input)
    (!in.empty() && in[0] == '^' ? control : regular)->push_back(in);
}

std::vector<std::string> ControlInputs(const NodeDef& n) {
  std::vector<std::string> regular, control;
  SplitInputs(n, &regular, &control);
  return control;
}

std::unordered_map<std::string, size_t> IndexByName(const GraphDef& graph) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < graph.node.size(); ++i) index.emplace(graph.node[i].name, i);
  return index;
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
