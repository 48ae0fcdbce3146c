// The convolution rewrites (src/graph/rewrites/conv_fusion.cc) on hand-built
// graphs, and the codec pieces they use (list(int) and int tensor attributes,
// checked against protobuf's own encoding).
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

// An int32 Const holding `v` with shape `shape`, as tensor_content.
NodeDef IntConst(const std::string& name, const std::vector<int32_t>& v,
                 const std::vector<int64_t>& shape) {
  pdk::tfproto::AttrValue a;
  auto* t = a.mutable_tensor();
  t->set_dtype(pdk::tfproto::DT_INT32);
  for (int64_t d : shape) t->mutable_tensor_shape()->add_dim()->set_size(d);
  t->set_tensor_content(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  NodeDef n = Node(name, "Const", {});
  n.attr["dtype"] = AttrValue::Type(DT_INT32);
  n.attr["value"] = AttrValue::FromBytes(a.SerializeAsString());
  return n;
}

std::vector<int64_t> IntList(const NodeDef& n, const std::string& key) {
  std::vector<int64_t> v;
  EXPECT_TRUE(n.attr.at(key).GetIntList(&v)) << key;
  return v;
}

// x, w, b -> conv -> BiasAdd [-> Add(side)] -> act -> out.
GraphDef ConvBlock(const std::string& conv_op = "Conv2D", bool side = false,
                   const std::string& act = "Relu") {
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("w", "Placeholder", {}),
            Node("b", "Placeholder", {}), Node("s", "Placeholder", {}),
            Node("conv", conv_op, {"x", "w"}), Node("ba", "BiasAdd", {"conv", "b"})};
  std::string last = "ba";
  if (side) {
    g.node.push_back(Node("add", "AddV2", {"s", "ba"}));
    last = "add";
  }
  if (!act.empty()) {
    g.node.push_back(Node("act", act, {last}));
    last = "act";
  }
  g.node.push_back(Node("out", "Identity", {last}));
  return g;
}

TEST(GraphDefCodec, IntListAndIntTensorMatchProtobuf) {
  pdk::tfproto::AttrValue ref;
  for (int64_t v : std::vector<int64_t>{1, 2, -3, int64_t(1) << 40}) ref.mutable_list()->add_i(v);
  EXPECT_EQ(AttrValue::IntList({1, 2, -3, int64_t(1) << 40}).bytes(), ref.SerializeAsString());
  std::vector<int64_t> back;
  ASSERT_TRUE(AttrValue::FromBytes(ref.SerializeAsString()).GetIntList(&back));
  EXPECT_EQ(back, (std::vector<int64_t>{1, 2, -3, int64_t(1) << 40}));
  pdk::tfproto::AttrValue empty;
  empty.mutable_list();
  ASSERT_TRUE(AttrValue::FromBytes(empty.SerializeAsString()).GetIntList(&back));
  EXPECT_TRUE(back.empty());

  // list(type): TypeList writes what protobuf writes, GetTypeList reads it
  // back, and neither list reader takes the other's entries.
  pdk::tfproto::AttrValue types;
  for (int t : {1, 10, 3}) types.mutable_list()->add_type(static_cast<pdk::tfproto::DataType>(t));
  EXPECT_EQ(AttrValue::TypeList({1, 10, 3}).bytes(), types.SerializeAsString());
  ASSERT_TRUE(AttrValue::FromBytes(types.SerializeAsString()).GetTypeList(&back));
  EXPECT_EQ(back, (std::vector<int64_t>{1, 10, 3}));
  ASSERT_TRUE(AttrValue::FromBytes(types.SerializeAsString()).GetIntList(&back));
  EXPECT_TRUE(back.empty());
  ASSERT_TRUE(AttrValue::FromBytes(ref.SerializeAsString()).GetTypeList(&back));
  EXPECT_TRUE(back.empty());
  EXPECT_FALSE(AttrValue::Type(1).GetTypeList(&back));

  std::vector<int64_t> values, shape;
  NodeDef c = IntConst("c", {0, 0, 1, 2, 3, 4, 0, 0}, {4, 2});
  ASSERT_TRUE(c.attr["value"].GetIntTensor(&values, &shape));
  EXPECT_EQ(values, (std::vector<int64_t>{0, 0, 1, 2, 3, 4, 0, 0}));
  EXPECT_EQ(shape, (std::vector<int64_t>{4, 2}));
  // int64_val with one value fills the shape (TensorFlow's splat encoding).
  pdk::tfproto::AttrValue splat;
  splat.mutable_tensor()->set_dtype(pdk::tfproto::DT_INT64);
  splat.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(3);
  splat.mutable_tensor()->add_int64_val(7);
  ASSERT_TRUE(AttrValue::FromBytes(splat.SerializeAsString()).GetIntTensor(&values, &shape));
  EXPECT_EQ(values, (std::vector<int64_t>{7, 7, 7}));
  // Wrong content size, float dtype, garbage: false, never a crash.
  pdk::tfproto::AttrValue bad = splat;
  bad.mutable_tensor()->set_tensor_content("abc");
  EXPECT_FALSE(AttrValue::FromBytes(bad.SerializeAsString()).GetIntTensor(&values, &shape));
  bad.mutable_tensor()->set_dtype(pdk::tfproto::DT_FLOAT);
  EXPECT_FALSE(AttrValue::FromBytes(bad.SerializeAsString()).GetIntTensor(&values, &shape));
  EXPECT_FALSE(AttrValue::FromBytes("\x42\x05\x08").GetIntTensor(&values, &shape));
}

TEST(FuseConv, BiasAddActivationAndSideInput) {
  for (const char* conv_op : {"Conv2D", "DepthwiseConv2dNative"}) {
    for (bool side : {false, true}) {
      GraphDef g = ConvBlock(conv_op, side, "Relu6");
      RewriteCounts fired = Optimized(&g);
      const std::string pattern =
          std::string(conv_op) + "+BiasAdd" + (side ? "+AddV2" : "") + "+Relu6";
      EXPECT_EQ(fired[pattern], 1u) << pattern;
      for (const char* gone : {"conv", "ba", "add"}) EXPECT_EQ(Find(g, gone), nullptr) << gone;
      const NodeDef* f = Find(g, "act");
      ASSERT_NE(f, nullptr);
      EXPECT_EQ(f->op, "_PdkFusedConv2D");
      std::vector<std::string> want{"x", "w", "b"};
      if (side) want.push_back("s");
      EXPECT_EQ(f->input, want);
      EXPECT_EQ(f->StringAttr("activation", ""), "Relu6");
      EXPECT_EQ(f->StringAttr("normalization", ""), "BiasAdd");
      EXPECT_EQ(f->BoolAttr("has_side_input", !side), side);
      EXPECT_EQ(f->BoolAttr("depthwise", false), std::string(conv_op) != "Conv2D");
      int64_t num_args = 0;
      ASSERT_TRUE(f->attr.at("num_args").GetInt(&num_args));
      EXPECT_EQ(num_args, side ? 2 : 1);
      EXPECT_EQ(IntList(*f, "strides"), (std::vector<int64_t>{1, 1, 1, 1}));
      EXPECT_EQ(f->StringAttr("padding", ""), "VALID");
    }
  }
}

TEST(FuseConv, BatchNormInference) {
  GraphDef g = ConvBlock("Conv2D", true, "");
  for (const char* n : {"scale", "offset", "mean", "var"}) g.node.push_back(Node(n, "Placeholder", {}));
  g.node[5] = Node("ba", "FusedBatchNormV3", {"conv", "scale", "offset", "mean", "var"});
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["Conv2D+FusedBatchNormV3+AddV2"], 1u);
  const NodeDef* f = Find(g, "add");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->op, "_PdkFusedConv2D");
  EXPECT_EQ(f->input, (std::vector<std::string>{"x", "w", "scale", "offset", "mean", "var", "s"}));
  EXPECT_EQ(f->StringAttr("normalization", ""), "FusedBatchNorm");
  EXPECT_FLOAT_EQ(f->FloatAttr("epsilon", 0), 0.001f);
  EXPECT_EQ(f->StringAttr("activation", ""), "None");

  GraphDef training = ConvBlock("Conv2D", false, "Relu");
  for (const char* n : {"scale", "offset", "mean", "var"})
    training.node.push_back(Node(n, "Placeholder", {}));
  training.node[5] = Node("ba", "FusedBatchNormV3", {"conv", "scale", "offset", "mean", "var"});
  training.node[5].attr["is_training"] = AttrValue::Bool(true);
  EXPECT_TRUE(Optimized(&training).empty());

  GraphDef stats_used = training;
  stats_used.node[5].attr["is_training"] = AttrValue::Bool(false);
  stats_used.node.push_back(Node("m", "Identity", {"ba:1"}));  // batch mean read
  EXPECT_TRUE(Optimized(&stats_used).empty());
}

TEST(FuseConv, IntermediatesWithOtherConsumersStopTheFusion) {
  GraphDef g = ConvBlock("Conv2D", true, "Relu");
  g.node.push_back(Node("peek", "Identity", {"conv"}));
  EXPECT_TRUE(Optimized(&g).empty());

  GraphDef h = ConvBlock("Conv2D", true, "Relu");
  h.node.push_back(Node("peek", "Identity", {"ba"}));  // BiasAdd used twice
  EXPECT_EQ(Optimized(&h)["Conv2D+BiasAdd"], 1u);
  EXPECT_EQ(Find(h, "ba")->op, "_PdkFusedConv2D");
  EXPECT_EQ(Find(h, "add")->op, "AddV2");

  GraphDef leaky = ConvBlock("Conv2D", true, "LeakyRelu");
  leaky.node.push_back(Node("grad", "LeakyReluGrad", {"out", "add"}));  // reads its input
  EXPECT_EQ(Optimized(&leaky)["Conv2D+BiasAdd+AddV2"], 1u);
  EXPECT_EQ(Find(leaky, "act")->op, "LeakyRelu");

  GraphDef relu = ConvBlock("Conv2D", false, "Relu");
  relu.node.push_back(Node("grad", "ReluGrad", {"out", "act"}));  // reads the output
  EXPECT_EQ(Optimized(&relu)["Conv2D+BiasAdd+Relu"], 1u);
  EXPECT_EQ(Find(relu, "grad")->input[1], "act");

  GraphDef kept = ConvBlock("Conv2D", false, "Relu");
  EXPECT_EQ(Optimized(&kept, {"ba"})["Conv2D+BiasAdd"], 1u);  // fetched BiasAdd

  GraphDef cpu = ConvBlock("Conv2D", false, "Relu");
  for (auto& n : cpu.node) n.device = kCpu;
  EXPECT_TRUE(Optimized(&cpu).empty());

  GraphDef nchw = ConvBlock("Conv2D", false, "Relu");
  nchw.node[4].attr["data_format"] = AttrValue::String("NCHW");
  EXPECT_TRUE(Optimized(&nchw).empty());
}

TEST(FuseConv, TwoChainsMeetingAtOneAdd) {
  // conv1+ba1 and conv2+ba2 both feed one AddV2: the first chain takes it.
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("w", "Placeholder", {}),
            Node("b", "Placeholder", {}), Node("c1", "Conv2D", {"x", "w"}),
            Node("b1", "BiasAdd", {"c1", "b"}), Node("c2", "Conv2D", {"x", "w"}),
            Node("b2", "BiasAdd", {"c2", "b"}), Node("add", "AddV2", {"b1", "b2"}),
            Node("out", "Identity", {"add"})};
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["Conv2D+BiasAdd+AddV2"], 1u);
  EXPECT_EQ(fired["Conv2D+BiasAdd"], 1u);
  EXPECT_EQ(Find(g, "add")->input, (std::vector<std::string>{"x", "w", "b", "b2"}));
  EXPECT_EQ(Find(g, "b2")->op, "_PdkFusedConv2D");
}

TEST(FuseConv, IdempotentControlInputsAndKernelAvailability) {
  GraphDef g = ConvBlock("Conv2D", true, "Relu");
  g.node[5].input.push_back("^x");
  Optimized(&g);
  EXPECT_EQ(Find(g, "act")->input.back(), "^x");
  const std::string once = SerializeGraphDef(g);
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(SerializeGraphDef(g), once);

  // No conv fusion without its kernel or when disabled; the conv stays (the
  // elementwise fusion may still take BiasAdd + Relu).
  GraphDef none = ConvBlock();
  OptimizeOptions o;
  o.kernel_available = [](const std::string& op) { return op != "_PdkFusedConv2D"; };
  RewriteCounts fired;
  ASSERT_TRUE(Optimize(&none, o, &fired).ok());
  for (const auto& [pattern, n] : fired) EXPECT_EQ(pattern.find("Conv2D"), std::string::npos);
  ASSERT_NE(Find(none, "conv"), nullptr);
  EXPECT_EQ(Find(none, "conv")->op, "Conv2D");

  GraphDef off = ConvBlock();
  OptimizeOptions d;
  d.disabled = {"conv_fusion"};
  fired.clear();
  ASSERT_TRUE(Optimize(&off, d, &fired).ok());
  for (const auto& [pattern, n] : fired) EXPECT_EQ(pattern.find("Conv2D"), std::string::npos);
  ASSERT_NE(Find(off, "conv"), nullptr);
  EXPECT_EQ(Find(off, "conv")->op, "Conv2D");
}

GraphDef PadConv(const std::vector<int32_t>& pads, const std::string& padding = "VALID") {
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("w", "Placeholder", {}),
            IntConst("p", pads, {4, 2}), Node("pad", "Pad", {"x", "p"}),
            Node("conv", "Conv2D", {"pad", "w"}), Node("out", "Identity", {"conv"})};
  g.node[3].attr["Tpaddings"] = AttrValue::Type(DT_INT32);
  g.node[4].attr["padding"] = AttrValue::String(padding);
  if (padding == "EXPLICIT")
    g.node[4].attr["explicit_paddings"] = AttrValue::IntList({0, 0, 1, 1, 0, 0, 0, 0});
  return g;
}

TEST(FoldPadIntoConv, ValidAndExplicit) {
  GraphDef g = PadConv({0, 0, 1, 2, 3, 4, 0, 0});
  EXPECT_EQ(Optimized(&g)["Pad+Conv2D"], 1u);
  EXPECT_EQ(Find(g, "pad"), nullptr);
  EXPECT_EQ(Find(g, "p"), nullptr);
  const NodeDef* c = Find(g, "conv");
  EXPECT_EQ(c->input, (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(c->StringAttr("padding", ""), "EXPLICIT");
  EXPECT_EQ(IntList(*c, "explicit_paddings"), (std::vector<int64_t>{0, 0, 1, 2, 3, 4, 0, 0}));
  const std::string once = SerializeGraphDef(g);
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(SerializeGraphDef(g), once);

  GraphDef e = PadConv({0, 0, 1, 1, 1, 1, 0, 0}, "EXPLICIT");
  EXPECT_EQ(Optimized(&e)["Pad+Conv2D"], 1u);
  EXPECT_EQ(IntList(*Find(e, "conv"), "explicit_paddings"),
            (std::vector<int64_t>{0, 0, 2, 2, 1, 1, 0, 0}));
}

TEST(FoldPadIntoConv, LeftAloneWhenUnsafe) {
  GraphDef chan = PadConv({0, 0, 1, 1, 1, 1, 0, 1});  // pads channels
  EXPECT_TRUE(Optimized(&chan).empty());
  GraphDef same = PadConv({0, 0, 1, 1, 1, 1, 0, 0}, "SAME");
  EXPECT_TRUE(Optimized(&same).empty());
  GraphDef twice = PadConv({0, 0, 1, 1, 1, 1, 0, 0});
  twice.node.push_back(Node("grad_reads_pad", "Identity", {"pad"}));
  EXPECT_TRUE(Optimized(&twice).empty());
  GraphDef kept = PadConv({0, 0, 1, 1, 1, 1, 0, 0});
  EXPECT_TRUE(Optimized(&kept, {"pad"}).empty());
  GraphDef shared_const = PadConv({0, 0, 1, 1, 1, 1, 0, 0});
  shared_const.node.push_back(Node("other", "Identity", {"p"}));
  EXPECT_EQ(Optimized(&shared_const)["Pad+Conv2D"], 1u);
  EXPECT_NE(Find(shared_const, "p"), nullptr);  // still used: stays
}

TEST(FoldPadIntoConv, ThenFusesTheConvolution) {
  GraphDef g = PadConv({0, 0, 1, 1, 1, 1, 0, 0});
  g.node.push_back(Node("b", "Placeholder", {}));
  g.node.push_back(Node("ba", "BiasAdd", {"conv", "b"}));
  g.node.push_back(Node("act", "Relu", {"ba"}));
  g.node[5].input[0] = "act";
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["Pad+Conv2D"], 1u);
  EXPECT_EQ(fired["Conv2D+BiasAdd+Relu"], 1u);
  const NodeDef* f = Find(g, "act");
  EXPECT_EQ(f->op, "_PdkFusedConv2D");
  EXPECT_EQ(f->StringAttr("padding", ""), "EXPLICIT");
  EXPECT_EQ(IntList(*f, "explicit_paddings"), (std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0, 0}));
}

TEST(SplitFusedBatchNormEx, BecomesBatchNormAddReluThenFusesIntoTheConv) {
  // TensorFlow's remapper emits _FusedBatchNormEx on PDK; PDK has no kernel.
  GraphDef g = ConvBlock("Conv2D", false, "");
  for (const char* n : {"scale", "offset", "mean", "var"}) g.node.push_back(Node(n, "Placeholder", {}));
  NodeDef ex = Node("ba", "_FusedBatchNormEx", {"conv", "scale", "offset", "mean", "var", "s"});
  ex.attr["U"] = AttrValue::Type(DT_FLOAT);
  ex.attr["is_training"] = AttrValue::Bool(false);
  ex.attr["num_side_inputs"] = AttrValue::Int(1);
  ex.attr["activation_mode"] = AttrValue::String("Relu");
  ex.attr["_kept"] = AttrValue::Bool(true);
  g.node[5] = ex;
  g.node.push_back(Node("stat", "Identity", {"ba:1"}));  // reads the batch mean
  GraphDef split = g;
  OptimizeOptions o;
  o.disabled = {"all"};  // the split alone
  RewriteCounts fired;
  ASSERT_TRUE(Optimize(&split, o, &fired).ok());
  EXPECT_EQ(fired["_FusedBatchNormEx->FusedBatchNormV3+AddV2+Relu"], 1u);
  EXPECT_EQ(Find(split, "ba")->op, "Relu");
  EXPECT_TRUE(Find(split, "ba")->BoolAttr("_kept", false));
  EXPECT_EQ(Find(split, "ba")->input, (std::vector<std::string>{"ba/_pdk_add"}));
  EXPECT_EQ(Find(split, "ba/_pdk_add")->input,
            (std::vector<std::string>{"ba/_pdk_batch_norm", "s"}));
  EXPECT_EQ(Find(split, "ba/_pdk_batch_norm")->op, "FusedBatchNormV3");
  EXPECT_EQ(Find(split, "stat")->input[0], "ba/_pdk_batch_norm:1");

  // Without the statistics reader the whole chain fuses into the convolution.
  g.node.pop_back();
  fired = Optimized(&g);
  EXPECT_EQ(fired["Conv2D+FusedBatchNormV3+AddV2+Relu"], 1u);
  EXPECT_EQ(Find(g, "ba")->op, "_PdkFusedConv2D");
  EXPECT_EQ(Find(g, "ba")->input,
            (std::vector<std::string>{"x", "w", "scale", "offset", "mean", "var", "s"}));
  EXPECT_EQ(Find(g, "ba/_pdk_batch_norm"), nullptr);
  EXPECT_EQ(Find(g, "conv"), nullptr);
}

}  // namespace
}  // namespace pdk_graph
