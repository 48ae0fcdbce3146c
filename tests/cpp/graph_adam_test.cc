// The Keras Adam rewrite (src/graph/rewrites/keras_adam.cc) on hand-built
// graphs laid out as TF 2.21 hands Keras 3.15's Adam step to PDK's optimizer
// (constants first in Mul/AddV2, reads after the moment updates ordered by
// control edges). tests/python/test_graph_adam.py runs it in TensorFlow.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace pdk_graph {
namespace {

using testing_util::Find;
using testing_util::kCpu;
using testing_util::kPdk;
using testing_util::Node;
using testing_util::Optimized;

NodeDef Resource(const std::string& name) {
  NodeDef n = Node(name, "Placeholder", {});
  n.attr["dtype"] = AttrValue::Type(DT_RESOURCE);
  return n;
}
NodeDef Var(const std::string& name, const std::string& op, std::vector<std::string> in) {
  NodeDef n = Node(name, op, std::move(in));
  n.attr.erase("T");
  n.attr["dtype"] = AttrValue::Type(DT_FLOAT);
  return n;
}

// One variable's Keras Adam update, plus a NoOp that waits for S (as after
// TensorFlow inlines the train function).
GraphDef AdamStep() {
  GraphDef g;
  for (const char* r : {"var", "m", "v"}) g.node.push_back(Resource(r));
  for (const char* c : {"c1", "c2", "eps"}) g.node.push_back(Node(c, "Const", {}));
  g.node.push_back(Node("g", "Placeholder", {}));
  g.node.push_back(Node("alpha", "Placeholder", {}));
  g.node.push_back(Var("rm1", "ReadVariableOp", {"m"}));
  g.node.push_back(Node("sub1", "Sub", {"g", "rm1"}));
  g.node.push_back(Node("x1", "Mul", {"c1", "sub1"}));
  g.node.push_back(Var("am", "AssignAddVariableOp", {"m", "x1"}));
  g.node.push_back(Node("sq", "Square", {"g"}));
  g.node.push_back(Var("rv1", "ReadVariableOp", {"v"}));
  g.node.push_back(Node("sub2", "Sub", {"sq", "rv1"}));
  g.node.push_back(Node("x2", "Mul", {"c2", "sub2"}));
  g.node.push_back(Var("av", "AssignAddVariableOp", {"v", "x2"}));
  g.node.push_back(Var("rm2", "ReadVariableOp", {"m", "^am"}));
  g.node.push_back(Node("n", "Mul", {"rm2", "alpha"}));
  g.node.push_back(Var("rv2", "ReadVariableOp", {"v", "^av"}));
  g.node.push_back(Node("sqrt", "Sqrt", {"rv2"}));
  g.node.push_back(Node("e", "AddV2", {"eps", "sqrt"}));
  g.node.push_back(Node("d", "RealDiv", {"n", "e"}));
  g.node.push_back(Var("s", "AssignSubVariableOp", {"var", "d", "^fwd"}));
  g.node.push_back(Var("fwd", "ReadVariableOp", {"var"}));  // the forward pass's read
  NodeDef done = Node("done", "NoOp", {"^s"});
  done.attr.clear();
  g.node.push_back(done);
  return g;
}

bool HasInput(const NodeDef& n, const std::string& in) {
  return std::find(n.input.begin(), n.input.end(), in) != n.input.end();
}

TEST(FuseKerasAdam, FiresAndRewiresTheAssigns) {
  GraphDef g = AdamStep();
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["KerasAdam"], 1u);
  for (const char* gone : {"sub1", "x1", "sq", "sub2", "x2", "rm2", "n", "rv2", "sqrt", "e", "d"})
    EXPECT_EQ(Find(g, gone), nullptr) << gone;
  const NodeDef* f = Find(g, "s/pdk_keras_adam");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->op, "_PdkKerasAdamUpdate");
  EXPECT_EQ(f->device, kPdk);
  EXPECT_EQ(f->input, (std::vector<std::string>{"s/pdk_var_value", "rm1", "rv1", "g", "c1", "c2",
                                                "alpha", "eps"}));
  const NodeDef* r = Find(g, "s/pdk_var_value");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->op, "ReadVariableOp");
  EXPECT_EQ(r->input, (std::vector<std::string>{"var", "^fwd"}));  // S's control inputs
  const NodeDef* am = Find(g, "am");
  const NodeDef* av = Find(g, "av");
  const NodeDef* s = Find(g, "s");
  EXPECT_EQ(am->op, "AssignVariableOp");
  EXPECT_EQ(am->input, (std::vector<std::string>{"m", "s/pdk_keras_adam:1"}));
  EXPECT_EQ(av->input, (std::vector<std::string>{"v", "s/pdk_keras_adam:2"}));
  EXPECT_EQ(s->op, "AssignVariableOp");
  EXPECT_EQ(s->input[1], "s/pdk_keras_adam:0");
  // S keeps its control input and now waits for AM' and AV' (else, once
  // nothing reads m and v after them, TensorFlow prunes them).
  EXPECT_TRUE(HasInput(*s, "^fwd"));
  EXPECT_TRUE(HasInput(*s, "^am"));
  EXPECT_TRUE(HasInput(*s, "^av"));
  EXPECT_FALSE(s->BoolAttr("validate_shape", true));
}

TEST(FuseKerasAdam, IsIdempotent) {
  GraphDef g = AdamStep();
  Optimized(&g);
  const std::string once = SerializeGraphDef(g);
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(SerializeGraphDef(g), once);
}

TEST(FuseKerasAdam, OperandOrderOfMulAndAddDoesNotMatter) {
  GraphDef g = AdamStep();
  for (auto& n : g.node) {
    if (n.name == "x1") n.input = {"sub1", "c1"};
    if (n.name == "n") n.input = {"alpha", "rm2"};
    if (n.name == "e") n.input = {"sqrt", "eps"};
  }
  EXPECT_EQ(Optimized(&g)["KerasAdam"], 1u);
  EXPECT_EQ(Find(g, "s/pdk_keras_adam")->input[6], "alpha");
}

TEST(FuseKerasAdam, ReadsOfTheUpdatedMomentsWithOtherReadersStay) {
  GraphDef g = AdamStep();
  g.node.push_back(Node("other", "Identity", {"rm2"}));
  g.node.push_back(Node("other2", "Identity", {"sq"}));
  EXPECT_EQ(Optimized(&g)["KerasAdam"], 1u);
  ASSERT_NE(Find(g, "rm2"), nullptr);
  EXPECT_TRUE(HasInput(*Find(g, "rm2"), "^am"));  // still reads m after AM'
  EXPECT_NE(Find(g, "sq"), nullptr);
  EXPECT_EQ(Find(g, "rv2"), nullptr);
}

TEST(FuseKerasAdam, LeftAloneWhenItMustNotFire) {
  struct Case {
    const char* what;
    void (*edit)(GraphDef*);
  };
  const Case cases[] = {
      {"intermediate read elsewhere",
       [](GraphDef* g) { g->node.push_back(Node("o", "Identity", {"x1"})); }},
      {"intermediate is a control input",
       [](GraphDef* g) { g->node.push_back(Node("o", "Identity", {"g", "^d"})); }},
      {"m and v are the same resource",
       [](GraphDef* g) {
         for (auto& n : g->node)
           for (auto& in : n.input)
             if (in == "v") in = "m";
       }},
      {"Square reads another tensor",
       [](GraphDef* g) {
         g->node.push_back(Node("g2", "Placeholder", {}));
         for (auto& n : g->node)
           if (n.name == "sq") n.input = {"g2"};
       }},
      {"a node on the CPU",
       [](GraphDef* g) {
         for (auto& n : g->node)
           if (n.name == "sqrt") n.device = kCpu;
       }},
      {"float64 assign over a float32 chain",
       [](GraphDef* g) {
         for (auto& n : g->node)
           if (n.name == "s") n.attr["dtype"] = AttrValue::Type(DT_DOUBLE);
       }},
      {"alpha computed after AM (cycle)",
       [](GraphDef* g) {
         for (auto& n : g->node)
           if (n.name == "alpha") n.input = {"^am"};
       }},
      {"m read after AV instead of AM",
       [](GraphDef* g) {
         for (auto& n : g->node)
           if (n.name == "rm2") n.input = {"m", "^av"};
       }},
  };
  for (const Case& c : cases) {
    GraphDef g = AdamStep();
    c.edit(&g);
    EXPECT_EQ(Optimized(&g).count("KerasAdam"), 0u) << c.what;
    EXPECT_EQ(Find(g, "s")->op, "AssignSubVariableOp") << c.what;
  }
}

TEST(FuseKerasAdam, SwitchedOffByName) {
  GraphDef g = AdamStep();
  OptimizeOptions o;
  o.disabled = {"adam_fusion"};
  RewriteCounts fired;
  ASSERT_TRUE(Optimize(&g, o, &fired).ok());
  EXPECT_EQ(fired.count("KerasAdam"), 0u);
}

}  // namespace
}  // namespace pdk_graph
