// A read-only index over a GraphDef (graph/graph_def.h) for pattern matching:
// nodes by name, regular and control fan-ins and fan-outs, and placement.
//
// TensorFlow names a node's inputs "node", "node:port" (port 0 when omitted)
// and control inputs "^node"; regular inputs come first. The view parses them
// once. It holds pointers into the GraphDef: rebuild it after changing the
// graph (rewrites collect their matches on one view, then edit the graph).
// Attributes: NodeDef::TypeAttr, BoolAttr, ... (graph/graph_def.h).
#ifndef PDK_SRC_GRAPH_GRAPH_VIEW_H_
#define PDK_SRC_GRAPH_GRAPH_VIEW_H_

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/graph_def.h"

namespace pdk_graph {

// TensorRef, ParseInput and DeviceTypeOf: the kit's (pdk/graph_def.h, via
// graph/graph_def.h).

// Drops the nodes whose index is marked in `remove` (one flag per node),
// keeping the order of the others. The rewrites' last step.
void RemoveNodes(GraphDef* graph, const std::vector<bool>& remove);

// n's inputs in order, split into regular ones and control ("^node") ones;
// appended to *regular and *control.
void SplitInputs(const NodeDef& n, std::vector<std::string>* regular,
                 std::vector<std::string>* control);
// n's control inputs ("^node"), in order.
std::vector<std::string> ControlInputs(const NodeDef& n);
// Each node's position in graph.node, by name (the first, for a duplicated
// name).
std::unordered_map<std::string, size_t> IndexByName(const GraphDef& graph);

// "/job:localhost/replica:0/task:0" of a full device name, or "" if `device`
// names no device type (an unplaced node).
inline std::string_view TaskOf(std::string_view device) {
  const size_t at = device.find("/device:");
  return at == std::string_view::npos ? std::string_view() : device.substr(0, at);
}

// A new node (what the rewrites emit).
NodeDef MakeNode(const std::string& name, const std::string& op, const std::string& device,
                 std::vector<std::string> inputs, std::map<std::string, AttrValue> attr);

// A regular input slot of a consumer: consumer->input(input_index) reads the
// producer's output `port`.
struct Fanout {
  const NodeDef* consumer;
  int input_index;
};

class GraphView {
 public:
  explicit GraphView(const GraphDef& graph);

  const GraphDef& graph() const { return graph_; }
  // nullptr if no such node.
  const NodeDef* node(std::string_view name) const;

  // The regular (non-control) inputs of `n`, in order.
  int num_regular_inputs(const NodeDef& n) const;
  // The producer of regular input `i` of `n` (nullptr if it names no node) and
  // the producer's output port.
  const NodeDef* regular_fanin(const NodeDef& n, int i, int* port = nullptr) const;
  // Nodes `n` waits for through "^name" inputs.
  std::vector<const NodeDef*> control_fanins(const NodeDef& n) const;

  // Every (consumer, input slot) reading output `port` of `n`.
  const std::vector<Fanout>& regular_fanouts(const NodeDef& n, int port) const;
  // The consumers of any output of `n` through regular inputs (a consumer
  // reading two outputs appears twice).
  std::vector<const NodeDef*> regular_consumers(const NodeDef& n) const;
  // Number of regular input slots reading any output of `n`.
  int num_regular_fanouts(const NodeDef& n) const;
  // Nodes with a "^n" input.
  const std::vector<const NodeDef*>& control_fanouts(const NodeDef& n) const;

  // True if the graph has two nodes with one name (then no rewrite is safe).
  bool has_duplicate_names() const { return duplicate_names_; }

 private:
  struct NodeInfo {
    std::vector<TensorRef> regular_inputs;
    std::vector<const NodeDef*> control_inputs;
    std::unordered_map<int, std::vector<Fanout>> fanouts;  // by output port
    std::vector<const NodeDef*> control_fanouts;
    int num_fanouts = 0;
  };
  const NodeInfo* info(const NodeDef& n) const;

  const GraphDef& graph_;
  std::unordered_map<std::string_view, int> index_;  // name -> position in graph_.node()
  std::vector<NodeInfo> info_;
  bool duplicate_names_ = false;
};

}  // namespace pdk_graph

#endif  // PDK_SRC_GRAPH_GRAPH_VIEW_H_
