// The generic elementwise fusion (src/graph/rewrites/elementwise_fusion.cc) on
// hand-built graphs: which nodes join a group, the program it writes, and the
// graph staying acyclic. tests/python/test_graph_elementwise_fusion.py runs
// it in TensorFlow against the unfused kernels.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include "graph/graph_view.h"
#include "graph_test_util.h"
#include "kernels/math/fused_elementwise.h"

namespace pdk_graph {
namespace {

using testing_util::Find;
using testing_util::kCpu;
using testing_util::Node;

// Every rewrite, the elementwise fusion included.
RewriteCounts Optimized(GraphDef* g, std::unordered_set<std::string> preserve = {}) {
  return testing_util::Optimized(g, std::move(preserve), {});
}

constexpr char kFused[] = "_PdkFusedElementwise";

std::vector<const NodeDef*> FusedNodes(const GraphDef& g) {
  std::vector<const NodeDef*> out;
  for (const NodeDef& n : g.node)
    if (n.op == kFused) out.push_back(&n);
  return out;
}

std::vector<int64_t> Ints(const NodeDef& n, const std::string& key) {
  std::vector<int64_t> v;
  EXPECT_TRUE(n.attr.at(key).GetIntList(&v)) << key;
  return v;
}

int64_t Code(const char* op) { return pdk_fused::FindFusedOp(op); }

// Kahn's algorithm over regular and control edges: true if every node sorts.
bool Acyclic(const GraphDef& g) {
  std::unordered_map<std::string, int> indegree;
  std::unordered_map<std::string, std::vector<std::string>> succ;
  for (const NodeDef& n : g.node) indegree[n.name] += 0;
  for (const NodeDef& n : g.node)
    for (const std::string& in : n.input) {
      const std::string p = ParseInput(in).node;
      succ[p].push_back(n.name);
      ++indegree[n.name];
    }
  std::vector<std::string> ready;
  for (const auto& [name, d] : indegree)
    if (d == 0) ready.push_back(name);
  size_t sorted = 0;
  while (!ready.empty()) {
    const std::string x = ready.back();
    ready.pop_back();
    ++sorted;
    for (const std::string& s : succ[x])
      if (--indegree[s] == 0) ready.push_back(s);
  }
  return sorted == indegree.size();
}

TEST(FuseElementwise, ChainBecomesOneNodeWithItsProgram) {
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}));
  g.node.push_back(Node("c", "Const", {}));
  g.node.push_back(Node("a", "Tanh", {"x"}));
  g.node.push_back(Node("b", "Mul", {"a", "c"}));
  g.node.push_back(Node("d", "AddV2", {"b", "x"}));
  g.node.push_back(Node("out", "Identity", {"d"}, kCpu));
  g.node.push_back(Node("out2", "Identity", {"a"}, kCpu));
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["ElementwiseFusion"], 1u);
  EXPECT_EQ(fired["ElementwiseFusion nodes"], 3u);
  for (const char* gone : {"a", "b", "d"}) EXPECT_EQ(Find(g, gone), nullptr) << gone;
  const std::vector<const NodeDef*> f = FusedNodes(g);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->name, "d/pdk_fused_elementwise");
  EXPECT_EQ(f[0]->input, (std::vector<std::string>{"x", "c"}));
  EXPECT_EQ(Ints(*f[0], "ops"), (std::vector<int64_t>{Code("Tanh"), Code("Mul"), Code("AddV2")}));
  // values: 0 x, 1 c, 2 a, 3 b, 4 d
  EXPECT_EQ(Ints(*f[0], "args"), (std::vector<int64_t>{0, 2, 1, 3, 0}));
  EXPECT_EQ(Ints(*f[0], "outputs"), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(Find(g, "out")->input[0], "d/pdk_fused_elementwise:1");
  EXPECT_EQ(Find(g, "out2")->input[0], "d/pdk_fused_elementwise");
  // Idempotent.
  GraphDef again = g;
  EXPECT_EQ(Optimized(&again)["ElementwiseFusion"], 0u);
}

TEST(FuseElementwise, PreservedAndOtherDeviceNodesStayOut) {
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}));
  g.node.push_back(Node("a", "Neg", {"x"}));
  g.node.push_back(Node("kept", "Exp", {"a"}));           // preserved
  g.node.push_back(Node("b", "Neg", {"kept"}));
  g.node.push_back(Node("cpu", "Square", {"b"}, kCpu));  // another device
  RewriteCounts fired = Optimized(&g, {"kept"});
  EXPECT_EQ(fired["ElementwiseFusion"], 0u);
  for (const char* kept : {"a", "kept", "b", "cpu"}) EXPECT_NE(Find(g, kept), nullptr) << kept;
}

TEST(FuseElementwise, ControlEdgesGoToTheFusedNode) {
  // a has a control input from outside (y), e one from a member (b), the
  // Const c one on a member (b: moved up to a's input x), and w one on a
  // member (d: it waits for the fused node).
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}));
  g.node.push_back(Node("y", "Placeholder", {}));
  g.node.push_back(Node("a", "Neg", {"x", "^y"}));
  g.node.push_back(Node("b", "Abs", {"a"}));
  g.node.push_back(Node("c", "Const", {"^b"}));
  g.node.push_back(Node("d", "Mul", {"b", "c"}));
  g.node.push_back(Node("e", "Sqrt", {"d", "^b"}));
  g.node.push_back(Node("w", "Identity", {"x", "^d"}));
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["ElementwiseFusion"], 1u);
  EXPECT_EQ(fired["ElementwiseFusion nodes"], 4u);
  EXPECT_EQ(fired["ElementwiseFusion const control inputs"], 1u);
  EXPECT_TRUE(Acyclic(g));
  const NodeDef* f = Find(g, "e/pdk_fused_elementwise");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->input, (std::vector<std::string>{"x", "c", "^y"}));
  EXPECT_EQ(Find(g, "c")->input, (std::vector<std::string>{"^x"}));
  EXPECT_EQ(Find(g, "w")->input, (std::vector<std::string>{"x", "^e/pdk_fused_elementwise"}));
}

TEST(FuseElementwise, GroupThatWouldCloseACycleIsSplit) {
  // e = Exp(x); s = Sum(e) (not elementwise); y = Tanh(RealDiv(e, s)):
  // {e, div, tanh} as one node would read s, which reads it.
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}));
  g.node.push_back(Node("axis", "Const", {}));
  g.node.push_back(Node("n", "Neg", {"x"}));
  g.node.push_back(Node("e", "Exp", {"n"}));
  g.node.push_back(Node("s", "Sum", {"e", "axis"}));
  g.node.push_back(Node("div", "RealDiv", {"e", "s"}));
  g.node.push_back(Node("y", "Tanh", {"div"}));
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["ElementwiseFusion"], 2u);  // {n, e} and {div, y}
  EXPECT_EQ(fired["ElementwiseFusion nodes"], 4u);
  EXPECT_TRUE(Acyclic(g));
  const NodeDef* s = Find(g, "s");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->input[0], "e/pdk_fused_elementwise");
  const NodeDef* y = Find(g, "y/pdk_fused_elementwise");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->input, (std::vector<std::string>{"e/pdk_fused_elementwise", "s"}));
}

// A lowered while loop (as TensorFlow's LowerFunctionalOpsPass writes one):
// x enters, Merge(enter, next) -> Switch(merge, pred) -> Identity(switch:1)
// -> body -> NextIteration -> Merge (the back edge); Exit(switch:0).
GraphDef LoweredLoop(const std::vector<NodeDef>& body, const std::string& last) {
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("pred", "Placeholder", {}),
            Node("c", "Const", {}), Node("enter", "Enter", {"x"}),
            Node("merge", "Merge", {"enter", "next"}),
            Node("switch", "Switch", {"merge", "pred"}),
            Node("body_in", "Identity", {"switch:1"}),
            Node("exit", "Exit", {"switch"}),
            Node("next", "NextIteration", {last}),
            Node("out", "Identity", {"exit"}, kCpu)};
  g.node.insert(g.node.end(), body.begin(), body.end());
  return g;
}

// Kahn's algorithm without the loops' back edges (NextIteration -> Merge).
bool AcyclicPerIteration(GraphDef g) {
  for (NodeDef& n : g.node)
    if (n.op == "Merge")
      n.input.erase(std::remove_if(n.input.begin(), n.input.end(),
                                   [&](const std::string& in) {
                                     const NodeDef* p = Find(g, ParseInput(in).node);
                                     return p != nullptr && p->op == "NextIteration";
                                   }),
                    n.input.end());
  return Acyclic(g);
}

TEST(FuseElementwise, LoweredLoopBodyFusesLikeADag) {
  // body: t = Tanh(Mul(body_in, c)); u = AddV2(t, body_in) -> next.
  GraphDef g = LoweredLoop({Node("m", "Mul", {"body_in", "c"}), Node("t", "Tanh", {"m"}),
                            Node("u", "AddV2", {"t", "body_in"})},
                           "u");
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["ElementwiseFusion"], 1u);
  EXPECT_EQ(fired["ElementwiseFusion nodes"], 3u);
  const NodeDef* f = Find(g, "u/pdk_fused_elementwise");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->input, (std::vector<std::string>{"body_in", "c"}));
  EXPECT_EQ(Find(g, "next")->input, (std::vector<std::string>{"u/pdk_fused_elementwise"}));
  EXPECT_TRUE(AcyclicPerIteration(g));
}

TEST(FuseElementwise, LoweredLoopBodyGroupThatWouldCloseACycleIsSplit) {
  // The Sum test's shape inside a loop body: {n, e} and {div, y} fuse, never
  // {n, e, div, y}, which would read s, which reads it.
  GraphDef g = LoweredLoop({Node("axis", "Const", {}), Node("n", "Neg", {"body_in"}),
                            Node("e", "Exp", {"n"}), Node("s", "Sum", {"e", "axis"}),
                            Node("div", "RealDiv", {"e", "s"}), Node("y", "Tanh", {"div"})},
                           "y");
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["ElementwiseFusion"], 2u);
  EXPECT_EQ(fired["ElementwiseFusion nodes"], 4u);
  EXPECT_TRUE(AcyclicPerIteration(g));
  EXPECT_EQ(Find(g, "next")->input, (std::vector<std::string>{"y/pdk_fused_elementwise"}));
}

TEST(FuseElementwise, TwoGroupsThatWouldReadEachOtherDoNotBothFuse) {
  // a1 -> a2 and b2 -> b1, with a1 -> b1 and b2 -> a2: each group alone is
  // convex, together they would form a cycle.
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}));
  g.node.push_back(Node("a1", "Neg", {"x"}));
  g.node.push_back(Node("b2", "Exp", {"x"}));
  g.node.push_back(Node("b1", "Mul", {"b2", "a1"}));
  g.node.push_back(Node("a2", "AddV2", {"a1", "b2"}));
  // The groups {a1, a2} and {b2, b1} are made by device (the b's on a second
  // PDK device).
  const std::string pdk1 = "/job:localhost/replica:0/task:0/device:PDK:1";
  for (NodeDef& n : g.node)
    if (n.name == "b1" || n.name == "b2") n.device = pdk1;
  RewriteCounts fired = Optimized(&g);
  EXPECT_TRUE(Acyclic(g));
  // The first group fuses; the second, which would read it and be read by
  // it, is split into single nodes.
  EXPECT_EQ(fired["ElementwiseFusion"], 1u);
  EXPECT_NE(Find(g, "b1"), nullptr);
  EXPECT_NE(Find(g, "b2"), nullptr);
}

TEST(FuseElementwise, CastAndSelectInputsKeepTheirDtypes) {
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}));
  NodeDef k = Node("k", "Placeholder", {});
  k.attr["dtype"] = AttrValue::Type(DT_INT32);
  g.node.push_back(k);
  NodeDef mask = Node("mask", "Placeholder", {});
  mask.attr["dtype"] = AttrValue::Type(10);  // DT_BOOL
  g.node.push_back(mask);
  NodeDef cast = Node("cast", "Cast", {"k"});
  cast.attr.erase("T");
  cast.attr["SrcT"] = AttrValue::Type(DT_INT32);
  cast.attr["DstT"] = AttrValue::Type(DT_FLOAT);
  g.node.push_back(cast);
  g.node.push_back(Node("add", "AddV2", {"cast", "x"}));
  g.node.push_back(Node("sel", "SelectV2", {"mask", "add", "x"}));
  Optimized(&g);
  const std::vector<const NodeDef*> f = FusedNodes(g);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->input, (std::vector<std::string>{"k", "x", "mask"}));
  EXPECT_EQ(f[0]->attr.at("Tin"), AttrValue::TypeList({DT_INT32, DT_FLOAT, 10}));
}

TEST(FuseElementwise, AddNIsAChainInInputNameOrder) {
  // Grappler sorts AddN's inputs by name in its next pass; the chain sums in
  // that order, the order TensorFlow's unfused graph ends up with.
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}));
  g.node.push_back(Node("zz", "Exp", {"x"}));
  g.node.push_back(Node("aa", "Neg", {"x"}));
  NodeDef sum = Node("sum", "AddN", {"zz", "x", "aa"});
  sum.attr["N"] = AttrValue::Int(3);
  g.node.push_back(sum);
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["ElementwiseFusion nodes"], 3u);
  const std::vector<const NodeDef*> f = FusedNodes(g);
  ASSERT_EQ(f.size(), 1u);
  // values: 0 x, 1 zz, 2 aa (topological order of the members), then
  // aa + x, (aa + x) + zz.
  const int64_t add = Code("AddN");
  EXPECT_EQ(Ints(*f[0], "ops")[2], add);
  EXPECT_EQ(Ints(*f[0], "ops")[3], add);
  const std::vector<int64_t> args = Ints(*f[0], "args");
  ASSERT_EQ(args.size(), 6u);
  const int64_t aa = Ints(*f[0], "ops")[0] == Code("Neg") ? 1 : 2, zz = 3 - aa;
  EXPECT_EQ(std::vector<int64_t>(args.begin() + 2, args.end()),
            (std::vector<int64_t>{aa, 0, 3, zz}));
  EXPECT_EQ(Ints(*f[0], "outputs"), (std::vector<int64_t>{4}));
}

// Split -> group -> ConcatV2, the shape of an LSTM cell and its gradient:
// the Split's outputs become pieces of the fused node's input (attr slices),
// the ConcatV2 an extra output (attr concat); an output only the ConcatV2
// read is dropped and the later ports are renumbered; the Consts giving the
// axes go with the nodes that read them.
TEST(FuseElementwise, SplitAndConcatAtTheEdgesAreAbsorbed) {
  GraphDef g;
  g.node.push_back(Node("z", "Placeholder", {}));
  g.node.push_back(Node("c", "Placeholder", {}));
  g.node.push_back(Node("dim", "Const", {}));
  g.node.back().attr["value"] = AttrValue::Int32Scalar(-1);
  g.node.push_back(Node("split", "Split", {"dim", "z"}));
  g.node.back().attr["num_split"] = AttrValue::Int(2);
  g.node.push_back(Node("a", "Sigmoid", {"split"}));
  g.node.push_back(Node("b", "Tanh", {"split:1"}));
  g.node.push_back(Node("m", "Mul", {"a", "c"}));
  g.node.push_back(Node("n", "Mul", {"m", "b"}));
  g.node.push_back(Node("axis", "Const", {}));
  g.node.back().attr["value"] = AttrValue::Int32Scalar(1);
  g.node.push_back(Node("cat", "ConcatV2", {"a", "n", "axis"}));
  g.node.back().attr["N"] = AttrValue::Int(2);
  g.node.push_back(Node("out", "Identity", {"cat"}, kCpu));
  g.node.push_back(Node("out_m", "Identity", {"m"}, kCpu));
  g.node.push_back(Node("out_n", "Identity", {"n"}, kCpu));
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["ElementwiseFusion"], 1u);
  EXPECT_EQ(fired["ElementwiseFusion splits"], 1u);
  EXPECT_EQ(fired["ElementwiseFusion concats"], 1u);
  for (const char* gone : {"split", "dim", "cat", "axis"}) EXPECT_EQ(Find(g, gone), nullptr) << gone;
  const std::vector<const NodeDef*> f = FusedNodes(g);
  ASSERT_EQ(f.size(), 1u);
  // The Split's value twice, as piece 0 and piece 1 of 2 along axis -1 (in
  // the order the group's nodes first read them: a, m, b).
  EXPECT_EQ(f[0]->input, (std::vector<std::string>{"z", "c", "z"}));
  EXPECT_EQ(Ints(*f[0], "slices"), (std::vector<int64_t>{-1, 0, 2, 0, 0, 1, -1, 1, 2}));
  // values: 0 piece 0 of z, 1 c, 2 piece 1 of z, 3 a, 4 m, 5 b, 6 n. a was an
  // output for the ConcatV2 alone: dropped; m and n stay (read outside), the
  // concatenation of a and n along axis 1 follows them.
  EXPECT_EQ(Ints(*f[0], "outputs"), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(Ints(*f[0], "concat"), (std::vector<int64_t>{1, 2, 3, 6}));
  int64_t num_outputs = 0;
  ASSERT_TRUE(f[0]->attr.at("num_outputs").GetInt(&num_outputs));
  EXPECT_EQ(num_outputs, 3);
  EXPECT_EQ(Find(g, "out_m")->input[0], f[0]->name);
  EXPECT_EQ(Find(g, "out_n")->input[0], f[0]->name + ":1");
  EXPECT_EQ(Find(g, "out")->input[0], f[0]->name + ":2");
  EXPECT_TRUE(Acyclic(g));
}

// A Split another op reads too, a ConcatV2 of a group's output and an outside
// tensor, a fetched ConcatV2: all stay as they are.
TEST(FuseElementwise, SplitAndConcatWithOtherReadersStay) {
  GraphDef g;
  g.node.push_back(Node("z", "Placeholder", {}));
  g.node.push_back(Node("dim", "Const", {}));
  g.node.back().attr["value"] = AttrValue::Int32Scalar(0);
  g.node.push_back(Node("split", "Split", {"dim", "z"}));
  g.node.back().attr["num_split"] = AttrValue::Int(2);
  g.node.push_back(Node("a", "Sigmoid", {"split"}));
  g.node.push_back(Node("b", "Tanh", {"a"}));
  g.node.push_back(Node("other", "Identity", {"split:1"}, kCpu));
  g.node.push_back(Node("axis", "Const", {}));
  g.node.back().attr["value"] = AttrValue::Int32Scalar(0);
  g.node.push_back(Node("cat", "ConcatV2", {"b", "z", "axis"}));
  g.node.back().attr["N"] = AttrValue::Int(2);
  g.node.push_back(Node("fetched", "ConcatV2", {"b", "b", "axis"}));
  g.node.back().attr["N"] = AttrValue::Int(2);
  RewriteCounts fired = Optimized(&g, {"fetched"});
  EXPECT_EQ(fired["ElementwiseFusion"], 1u);
  EXPECT_EQ(fired["ElementwiseFusion splits"], 0u);
  EXPECT_EQ(fired["ElementwiseFusion concats"], 0u);
  for (const char* kept : {"split", "dim", "cat", "fetched", "axis"})
    EXPECT_NE(Find(g, kept), nullptr) << kept;
}

}  // namespace
}  // namespace pdk_graph
