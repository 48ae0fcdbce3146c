// Helpers shared by the graph optimizer's C++ tests (graph_test.cc,
// graph_conv_test.cc): hand-built nodes with the attributes the rewrites read,
// lookup by name, and one optimizer run.
#ifndef PDK_TESTS_CPP_GRAPH_TEST_UTIL_H_
#define PDK_TESTS_CPP_GRAPH_TEST_UTIL_H_

#include <string>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include "graph/graph_def.h"
#include "graph/optimizer.h"

namespace pdk_graph {
namespace testing_util {

constexpr char kPdk[] = "/job:localhost/replica:0/task:0/device:PDK:0";
constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";

// A float32 node of `op` on `device` with TensorFlow's default attributes for
// the ops the rewrites match (MatMul, BiasAdd, Conv2D, DepthwiseConv2dNative,
// FusedBatchNormV3; Placeholder gets dtype, Const and ReadVariableOp no T).
inline NodeDef Node(const std::string& name, const std::string& op,
                    std::vector<std::string> inputs, const std::string& device = kPdk) {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.input = std::move(inputs);
  n.device = device;
  if (op == "Placeholder") n.attr["dtype"] = AttrValue::Type(DT_FLOAT);
  else if (op != "Const" && op != "ReadVariableOp") n.attr["T"] = AttrValue::Type(DT_FLOAT);
  if (op == "MatMul") {
    n.attr["transpose_a"] = AttrValue::Bool(false);
    n.attr["transpose_b"] = AttrValue::Bool(false);
  }
  if (op == "Conv2D" || op == "DepthwiseConv2dNative") {
    n.attr["strides"] = AttrValue::IntList({1, 1, 1, 1});
    n.attr["dilations"] = AttrValue::IntList({1, 1, 1, 1});
    n.attr["padding"] = AttrValue::String("VALID");
    n.attr["explicit_paddings"] = AttrValue::IntList({});
    n.attr["data_format"] = AttrValue::String("NHWC");
  }
  if (op == "BiasAdd") n.attr["data_format"] = AttrValue::String("NHWC");
  if (op == "FusedBatchNormV3") {
    n.attr["U"] = AttrValue::Type(DT_FLOAT);
    n.attr["is_training"] = AttrValue::Bool(false);
    n.attr["epsilon"] = AttrValue::Float(0.001f);
  }
  return n;
}

inline const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const auto& n : g.node)
    if (n.name == name) return &n;
  return nullptr;
}

// Runs every rewrite once (nothing disabled), expecting success; the counts.
// Runs every rewrite but those in `disabled`: by default all but the generic
// elementwise fusion, which would take over the elementwise nodes the tests
// of the other rewrites look at (graph_elementwise_fusion_test.cc passes {}).
inline RewriteCounts Optimized(GraphDef* g, std::unordered_set<std::string> preserve = {},
                               std::unordered_set<std::string> disabled = {"elementwise_fusion"}) {
  OptimizeOptions o;
  o.optimizer.preserve = std::move(preserve);
  o.disabled = std::move(disabled);
  RewriteCounts fired;
  EXPECT_TRUE(Optimize(g, o, &fired).ok());
  return fired;
}

}  // namespace testing_util
}  // namespace pdk_graph

#endif  // PDK_TESTS_CPP_GRAPH_TEST_UTIL_H_
