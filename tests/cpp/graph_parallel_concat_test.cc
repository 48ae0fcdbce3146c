// The ParallelConcat rewrite (src/graph/rewrites/parallel_concat.cc) on
// hand-built copies of TensorFlow's expansion of ParallelConcat, and
// AttrValue::GetShape checked against protobuf's own encoding.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/graph_def.h"
#include "graph/optimizer.h"
#include "graph_test_util.h"
#include "tf_graph.pb.h"

namespace pdk_graph {
namespace {

using namespace testing_util;  // NOLINT: kPdk, kCpu, Node, Find, Optimized

AttrValue ShapeAttr(const std::vector<int64_t>& dims, bool unknown_rank = false) {
  pdk::tfproto::AttrValue a;
  auto* s = a.mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_size(d);
  if (unknown_rank) s->set_unknown_rank(true);
  return AttrValue::FromBytes(a.SerializeAsString());
}

// a, b -> start, update(start, a; loc 0), update(start, b; loc 1),
// out = Identity(start, ^u0, ^u1): TensorFlow's ParallelConcatRemovePass.
GraphDef Expansion(const std::string& start_device, const std::string& identity_device,
                   const std::vector<int64_t>& shape = {2, 3}) {
  GraphDef g;
  NodeDef start = Node("start", "_ParallelConcatStart", {}, start_device);
  start.attr.erase("T");
  start.attr["dtype"] = AttrValue::Type(DT_FLOAT);
  start.attr["shape"] = ShapeAttr(shape);
  NodeDef u0 = Node("u0", "_ParallelConcatUpdate", {"start", "a"}, start_device);
  u0.attr["loc"] = AttrValue::Int(0);
  NodeDef u1 = Node("u1", "_ParallelConcatUpdate", {"start", "b"}, start_device);
  u1.attr["loc"] = AttrValue::Int(1);
  g.node = {Node("a", "Placeholder", {}), Node("b", "Placeholder", {}), start, u0, u1,
            Node("out", "Identity", {"start", "^u0", "^u1"}, identity_device),
            Node("ret", "_Retval", {"out"})};
  return g;
}

TEST(GraphDefCodec, ShapeMatchesProtobuf) {
  std::vector<int64_t> dims;
  ASSERT_TRUE(ShapeAttr({2, 0, int64_t(1) << 40}).GetShape(&dims));
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 0, int64_t(1) << 40}));
  ASSERT_TRUE(ShapeAttr({}).GetShape(&dims));
  EXPECT_TRUE(dims.empty());
  ASSERT_TRUE(ShapeAttr({-1, 4}).GetShape(&dims));
  EXPECT_EQ(dims, (std::vector<int64_t>{-1, 4}));
  EXPECT_FALSE(ShapeAttr({}, /*unknown_rank=*/true).GetShape(&dims));
  EXPECT_FALSE(AttrValue::Int(3).GetShape(&dims));
  EXPECT_FALSE(AttrValue::FromBytes("\x3a\x05\x12").GetShape(&dims));
}

TEST(PrepareParallelConcat, StartOnPdkGetsItsShapeAsAnIntList) {
  GraphDef g = Expansion(kPdk, kPdk);
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["_ParallelConcatStart shape"], 1u);
  std::vector<int64_t> dims;
  ASSERT_TRUE(Find(g, "start")->attr.at("_pdk_shape").GetIntList(&dims));
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 3}));
  // Idempotent: a second pass changes nothing.
  const std::string once = SerializeGraphDef(g);
  Optimized(&g);
  EXPECT_EQ(SerializeGraphDef(g), once);
}

TEST(PrepareParallelConcat, ReaderOnAnotherDeviceMovesToTheStart) {
  GraphDef g = Expansion(kCpu, kPdk);
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["ParallelConcat reader on another device"], 1u);
  EXPECT_EQ(Find(g, "out")->device, kCpu);
  EXPECT_EQ(Find(g, "start")->attr.count("_pdk_shape"), 0u);  // not on PDK
}

TEST(PrepareParallelConcat, PartialShapeIsLeftAlone) {
  GraphDef g = Expansion(kPdk, kPdk, {-1, 3});
  Optimized(&g);
  EXPECT_EQ(Find(g, "start")->attr.count("_pdk_shape"), 0u);
}

}  // namespace
}  // namespace pdk_graph
