// PDK's graph optimizer (src/graph/): the GraphDef codec against protobuf
// itself (Debian's protobuf-lite and protoc-generated code for
// src/graph/proto/tf_graph.proto serve as the reference implementation), the
// pattern helper, Const tensor decoding, the rewrites on hand-built graphs
// (Identity removal, cancelling Transposes, MatMul+BiasAdd[+activation]
// including both Gelu layouts, TensorList gradients; where each must not
// fire), the PDK_GRAPH_REWRITES=0 switch, optimize_func on garbage, and the
// kit's Grappler C API wrapper (pdk/graph_optimizer.h) as TF_InitGraph uses it.
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/graph_def.h"
#include "graph/graph_view.h"
#include "graph/optimizer.h"
#include "graph/strict_placement.h"
#include "pdk/graph_optimizer.h"
#include "tensorflow/c/tf_buffer.h"
#include "tensorflow/c/tf_status.h"
#include "graph_test_util.h"
#include "tf_graph.pb.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace pdk_graph {
namespace {

using namespace testing_util;  // NOLINT: kPdk, kCpu, Node, Find, Optimized

// x, w, b -> MatMul -> BiasAdd -> Relu -> out (Identity).
GraphDef DenseRelu(const std::string& act = "Relu") {
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("w", "Placeholder", {}),
            Node("b", "Placeholder", {}), Node("mm", "MatMul", {"x", "w"}),
            Node("ba", "BiasAdd", {"mm", "b"}), Node("act", act, {"ba"}),
            Node("out", "Identity", {"act"})};
  if (act == "LeakyRelu") g.node[5].attr["alpha"] = AttrValue::Float(0.3f);
  return g;
}

// ------------------------------------------------------------------ codec

pdk::tfproto::GraphDef ReferenceGraph() {
  pdk::tfproto::GraphDef g;
  g.mutable_versions()->set_producer(1987);
  g.mutable_versions()->set_min_consumer(12);
  for (int i = 0; i < 3; ++i) {
    auto* n = g.add_node();
    n->set_name("n" + std::to_string(i));
    n->set_op(i == 0 ? "Placeholder" : "Relu");
    if (i) n->add_input("n" + std::to_string(i - 1) + ":0");
    n->add_input("^n0");
    n->set_device(kPdk);
    (*n->mutable_attr())["T"].set_type(pdk::tfproto::DT_FLOAT);
    (*n->mutable_attr())["flag"].set_b(true);
    (*n->mutable_attr())["alpha"].set_f(0.25f);
    auto* shape = (*n->mutable_attr())["_output_shapes"].mutable_list()->add_shape();
    shape->add_dim()->set_size(-1);
    shape->add_dim()->set_size(7);
    auto* t = (*n->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(pdk::tfproto::DT_FLOAT);
    t->add_float_val(1.5f);
  }
  return g;
}

std::string Deterministic(const google::protobuf::MessageLite& m) {
  std::string out;
  m.ByteSizeLong();  // SerializeWithCachedSizes needs the sizes cached
  google::protobuf::io::StringOutputStream s(&out);
  google::protobuf::io::CodedOutputStream c(&s);
  c.SetSerializationDeterministic(true);
  m.SerializeWithCachedSizes(&c);
  return out;
}

TEST(GraphDefCodec, RoundTripMatchesProtobufByteForByte) {
  pdk::tfproto::GraphDef ref = ReferenceGraph();
  const std::string bytes = Deterministic(ref);
  GraphDef g;
  ASSERT_TRUE(ParseGraphDef(bytes.data(), bytes.size(), &g).ok());
  ASSERT_EQ(g.node.size(), 3u);
  EXPECT_EQ(g.node[1].name, "n1");
  EXPECT_EQ(g.node[1].op, "Relu");
  EXPECT_EQ(g.node[1].input, (std::vector<std::string>{"n0:0", "^n0"}));
  EXPECT_EQ(g.node[1].device, kPdk);
  EXPECT_EQ(g.node[1].TypeAttr("T"), DT_FLOAT);
  EXPECT_TRUE(g.node[1].BoolAttr("flag", false));
  EXPECT_FLOAT_EQ(g.node[1].FloatAttr("alpha", 0.f), 0.25f);
  EXPECT_EQ(g.node[1].TypeAttr("flag"), DT_INVALID);  // a bool is not a type
  EXPECT_EQ(SerializeGraphDef(g), bytes);
  // And protobuf reads what PDK writes.
  pdk::tfproto::GraphDef back;
  ASSERT_TRUE(back.ParseFromString(SerializeGraphDef(g)));
  EXPECT_EQ(Deterministic(back), bytes);
}

// Fields PDK does not model (GraphDef.library = 2, debug_info = 5, NodeDef
// experimental_debug_info = 6, a field from the future = 99) survive both
// PDK's codec and protobuf-lite's proto3 parser (unknown fields are kept since
// protobuf 3.5).
TEST(GraphDefCodec, UnknownFieldsSurviveRoundTrip) {
  pdk::tfproto::GraphDef ref = ReferenceGraph();
  std::string bytes = Deterministic(ref);
  // library { function { signature { name: "f" } } }: field 2, length-delimited.
  const std::string library = std::string("\x12\x07\x0a\x05\x0a\x03\x0a\x01", 8) + "f";
  const std::string future = std::string("\x98\x06\x2a", 3);  // field 99, varint 42
  bytes += library + future;
  GraphDef g;
  ASSERT_TRUE(ParseGraphDef(bytes.data(), bytes.size(), &g).ok());
  EXPECT_EQ(SerializeGraphDef(g), bytes);

  pdk::tfproto::GraphDef lite;
  ASSERT_TRUE(lite.ParseFromString(bytes));
  EXPECT_EQ(lite.SerializeAsString().size(), bytes.size());
  EXPECT_NE(lite.SerializeAsString().find(future), std::string::npos);

  // A NodeDef field PDK does not model (experimental_debug_info = 6) stays with its node.
  NodeDef extra;
  extra.name = "e";
  extra.op = "NoOp";
  extra.unknown = std::string("\x32\x03\x0a\x01", 4) + "e";
  GraphDef g2;
  g2.node.push_back(extra);
  const std::string s2 = SerializeGraphDef(g2);
  GraphDef g3;
  ASSERT_TRUE(ParseGraphDef(s2.data(), s2.size(), &g3).ok());
  EXPECT_EQ(g3.node[0].unknown, extra.unknown);
  pdk::tfproto::GraphDef lite2;
  ASSERT_TRUE(lite2.ParseFromString(s2));
  EXPECT_EQ(lite2.SerializeAsString(), s2);
}

TEST(GraphDefCodec, GarbageAndTruncationAreErrorsNotCrashes) {
  const std::string good = Deterministic(ReferenceGraph());
  int errors = 0;
  for (size_t len = 0; len < good.size(); ++len) {  // every prefix
    GraphDef g;
    pdk::Status st = ParseGraphDef(good.data(), len, &g);
    if (!st.ok()) {
      ++errors;
      EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
    }
  }
  EXPECT_GT(errors, 0);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes(rng() % 200, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    if (trial % 2) {  // flip bytes of a valid graph
      bytes = good;
      for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    GraphDef g;
    pdk::Status st = ParseGraphDef(bytes.data(), bytes.size(), &g);
    if (st.ok()) {  // whatever parsed must re-serialize and optimize safely
      RewriteCounts fired;
      EXPECT_TRUE(Optimize(&g, OptimizeOptions(), &fired).ok());
      SerializeGraphDef(g);
    }
  }
  // A length prefix far past the end, and a 11-byte varint.
  const std::string huge("\x0a\xff\xff\xff\xff\x0f", 6);
  GraphDef g;
  EXPECT_FALSE(ParseGraphDef(huge.data(), huge.size(), &g).ok());
  const std::string long_varint("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
  EXPECT_FALSE(ParseGraphDef(long_varint.data(), long_varint.size(), &g).ok());
}

// optimize_func itself, as TensorFlow calls it (null GrapplerItem: tests only).
TEST(OptimizeFunc, GarbageGivesErrorStatus) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes(1 + rng() % 64, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    bytes[0] = '\x0b';  // field 1 with wire type 3 (group): never valid here
    TF_Buffer* in = TF_NewBufferFromString(bytes.data(), bytes.size());
    TF_Buffer* out = TF_NewBuffer();
    TF_Status* s = TF_NewStatus();
    OptimizeFunc(nullptr, in, nullptr, out, s);
    EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT) << TF_Message(s);
    TF_DeleteStatus(s);
    TF_DeleteBuffer(out);
    TF_DeleteBuffer(in);
  }
  TF_Status* s = TF_NewStatus();
  OptimizeFunc(nullptr, nullptr, nullptr, nullptr, s);
  EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT);
  TF_DeleteStatus(s);
}

// pdk::RegisterGraphOptimizer fills TensorFlow's structs and runs the C++
// function from optimize_func: the device type and a graph in, the edited
// graph out; errors and exceptions become statuses; short structs are refused.
TEST(KitGraphOptimizer, RegistersAndRunsAFunction) {
  TP_OptimizerConfigs configs{TP_OPTIMIZER_CONFIGS_STRUCT_SIZE};
  TP_Optimizer optimizer{TP_OPTIMIZER_STRUCT_SIZE};
  TP_OptimizerRegistrationParams params{TP_OPTIMIZER_REGISTRATION_PARAMS_STRUCT_SIZE};
  params.optimizer_configs = &configs;
  params.optimizer = &optimizer;
  int mode = 0;  // 0: rename Relu nodes on MY_DEVICE, 1: error, 2: throw
  TF_Status* s = TF_NewStatus();
  pdk::RegisterGraphOptimizer(
      &params, "MY_DEVICE",
      [&](pdk::GraphDef& g, const pdk::OptimizerContext& ctx) -> pdk::Status {
        if (mode == 1) return pdk::InvalidArgument("no thanks");
        if (mode == 2) throw std::runtime_error("boom");
        EXPECT_EQ(ctx.device_type, "MY_DEVICE");
        for (pdk::NodeDef& n : g.node)
          if (n.op == "Relu" && ctx.on_device(n)) n.op = "Relu6";
        return pdk::Status::OK();
      },
      s);
  ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  EXPECT_STREQ(params.device_type, "MY_DEVICE");
  ASSERT_NE(optimizer.optimize_func, nullptr);
  EXPECT_EQ(optimizer.create_func, nullptr);
  EXPECT_EQ(configs.remapping, TF_TriState_Default);  // TensorFlow's passes stay on

  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("a", "Relu", {"x"}), Node("b", "Relu", {"x"})};
  g.node[1].device = "/job:localhost/replica:0/task:0/device:MY_DEVICE:0";
  const std::string bytes = SerializeGraphDef(g);
  TF_Buffer* in = TF_NewBufferFromString(bytes.data(), bytes.size());
  TF_Buffer* out = TF_NewBuffer();
  optimizer.optimize_func(nullptr, in, nullptr, out, s);
  ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  GraphDef back;
  ASSERT_TRUE(ParseGraphDef(out->data, out->length, &back).ok());
  EXPECT_EQ(back.node[1].op, "Relu6");
  EXPECT_EQ(back.node[2].op, "Relu");  // on PDK: not this optimizer's

  mode = 1;
  optimizer.optimize_func(nullptr, in, nullptr, out, s);
  EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT);
  EXPECT_STREQ(TF_Message(s), "MY_DEVICE graph optimizer: no thanks");
  mode = 2;
  optimizer.optimize_func(nullptr, in, nullptr, out, s);
  EXPECT_EQ(TF_GetCode(s), TF_INTERNAL);
  EXPECT_STREQ(TF_Message(s), "MY_DEVICE graph optimizer: boom");
  const char garbage[] = "\x0b\x01";
  TF_Buffer* bad = TF_NewBufferFromString(garbage, 2);
  mode = 0;
  optimizer.optimize_func(nullptr, bad, nullptr, out, s);
  EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT) << TF_Message(s);

  TP_OptimizerConfigs short_configs{TP_OPTIMIZER_CONFIGS_STRUCT_SIZE - 4};
  params.optimizer_configs = &short_configs;
  params.device_type = nullptr;
  pdk::RegisterGraphOptimizer(&params, "MY_DEVICE", nullptr, s);
  EXPECT_EQ(TF_GetCode(s), TF_FAILED_PRECONDITION) << TF_Message(s);
  EXPECT_EQ(params.device_type, nullptr);
  TF_DeleteBuffer(bad);
  TF_DeleteBuffer(out);
  TF_DeleteBuffer(in);
  TF_DeleteStatus(s);
}

TEST(OptimizeFunc, FusesAndReturnsAGraphProtobufReads) {
  const std::string in_bytes = SerializeGraphDef(DenseRelu());
  TF_Buffer* in = TF_NewBufferFromString(in_bytes.data(), in_bytes.size());
  TF_Buffer* out = TF_NewBuffer();
  TF_Status* s = TF_NewStatus();
  ResetGlobalRewriteCounts();
  OptimizeFunc(nullptr, in, nullptr, out, s);
  ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  pdk::tfproto::GraphDef g;
  ASSERT_TRUE(g.ParseFromArray(out->data, static_cast<int>(out->length)));
  ASSERT_EQ(g.node_size(), 5);
  EXPECT_EQ(g.node(3).name(), "act");
  EXPECT_EQ(g.node(3).op(), "_PdkFusedMatMul");
  EXPECT_EQ(g.node(3).attr().at("activation").s(), "Relu");
  EXPECT_EQ(GlobalRewriteCounts()["MatMul+BiasAdd+Relu"], 1u);
  TF_DeleteStatus(s);
  TF_DeleteBuffer(out);
  TF_DeleteBuffer(in);
}

// ------------------------------------------------------------- graph view

TEST(GraphView, ParsesInputsFanoutsAndDevices) {
  EXPECT_EQ(ParseInput("a").node, "a");
  EXPECT_EQ(ParseInput("a:2").port, 2);
  EXPECT_EQ(ParseInput("a/b:10").node, "a/b");
  EXPECT_TRUE(ParseInput("^c").is_control());
  EXPECT_EQ(ParseInput("a:x").node, "a:x");
  EXPECT_EQ(DeviceTypeOf(kPdk), "PDK");
  EXPECT_EQ(DeviceTypeOf("/device:PDK:1"), "PDK");
  EXPECT_EQ(DeviceTypeOf("/PDK:0"), "PDK");
  EXPECT_EQ(DeviceTypeOf("/job:localhost/replica:0/task:0/cpu:0"), "CPU");
  EXPECT_EQ(DeviceTypeOf("/job:localhost"), "");
  EXPECT_EQ(DeviceTypeOf(""), "");

  GraphDef g = DenseRelu();
  g.node.push_back(Node("side", "Identity", {"mm:0", "^ba"}, kCpu));
  GraphView v(g);
  const NodeDef* mm = v.node("mm");
  const NodeDef* ba = v.node("ba");
  ASSERT_TRUE(mm && ba);
  EXPECT_EQ(v.num_regular_inputs(*mm), 2);
  int port = -1;
  EXPECT_EQ(v.regular_fanin(*ba, 0, &port), mm);
  EXPECT_EQ(port, 0);
  EXPECT_EQ(v.regular_fanouts(*mm, 0).size(), 2u);
  EXPECT_EQ(v.num_regular_fanouts(*mm), 2);
  ASSERT_EQ(v.control_fanouts(*ba).size(), 1u);
  EXPECT_EQ(v.control_fanouts(*ba)[0]->name, "side");
  const NodeDef* side = v.node("side");
  ASSERT_EQ(v.control_fanins(*side).size(), 1u);
  EXPECT_EQ(v.control_fanins(*side)[0], ba);
  const pdk::OptimizerContext pdk_ctx{"PDK", {}};  // what the rewrites' placement test is
  EXPECT_TRUE(pdk_ctx.on_device(*mm));
  EXPECT_FALSE(pdk_ctx.on_device(*side));
  EXPECT_EQ(DeviceTypeOf(side->device), "CPU");
  EXPECT_EQ(v.node("nope"), nullptr);
}

// ---------------------------------------------------------------- rewrite

TEST(FuseMatMul, FiresOnEveryActivation) {
  for (const char* act : {"Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"}) {
    GraphDef g = DenseRelu(act);
    RewriteCounts fired = Optimized(&g);
    EXPECT_EQ(fired[std::string("MatMul+BiasAdd+") + act], 1u) << act;
    EXPECT_EQ(Find(g, "mm"), nullptr);
    EXPECT_EQ(Find(g, "ba"), nullptr);
    const NodeDef* f = Find(g, "act");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->op, "_PdkFusedMatMul");
    EXPECT_EQ(f->input, (std::vector<std::string>{"x", "w", "b"}));
    EXPECT_EQ(f->device, kPdk);
    EXPECT_EQ(f->StringAttr("activation", ""), act);
    EXPECT_EQ(f->TypeAttr("T"), DT_FLOAT);
    EXPECT_FALSE(f->BoolAttr("transpose_b", true));
    if (std::string(act) == "LeakyRelu") EXPECT_FLOAT_EQ(f->FloatAttr("leakyrelu_alpha", 0), 0.3f);
    EXPECT_EQ(Find(g, "out")->input[0], "act");
  }
}

TEST(FuseMatMul, IsIdempotent) {
  GraphDef g = DenseRelu();
  g.node[4].input.push_back("^x");  // a control input on BiasAdd moves to the fused node
  Optimized(&g);
  const std::string once = SerializeGraphDef(g);
  EXPECT_EQ(Find(g, "act")->input.back(), "^x");
  RewriteCounts again = Optimized(&g);
  EXPECT_TRUE(again.empty());
  EXPECT_EQ(SerializeGraphDef(g), once);
}

TEST(FuseMatMul, WithoutActivationOrWhenBiasAddHasAnotherConsumer) {
  GraphDef g = DenseRelu();
  g.node.push_back(Node("other", "Identity", {"ba"}));  // second consumer of BiasAdd
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["MatMul+BiasAdd"], 1u);
  EXPECT_EQ(Find(g, "ba")->op, "_PdkFusedMatMul");
  EXPECT_EQ(Find(g, "ba")->StringAttr("activation", ""), "None");
  EXPECT_EQ(Find(g, "act")->op, "Relu");  // untouched, still reads "ba"
  EXPECT_EQ(Find(g, "act")->input[0], "ba");
}

TEST(FuseMatMul, ActivationWithGradientConsumerStillFuses) {
  // ReluGrad reads Relu's output: the fused node keeps the name "act" and
  // produces that same output.
  GraphDef g = DenseRelu();
  g.node.push_back(Node("grad", "ReluGrad", {"out", "act"}));
  Optimized(&g);
  EXPECT_EQ(Find(g, "act")->op, "_PdkFusedMatMul");
  EXPECT_EQ(Find(g, "grad")->input[1], "act");
}

TEST(FuseMatMul, DoesNotFireWhenMatMulHasSecondConsumer) {
  GraphDef g = DenseRelu();
  g.node.push_back(Node("peek", "Identity", {"mm"}));
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(Find(g, "mm")->op, "MatMul");
  GraphDef c = DenseRelu();
  c.node.push_back(Node("after", "NoOp", {"^mm"}));  // a control consumer counts too
  EXPECT_TRUE(Optimized(&c).empty());
}

TEST(FuseMatMul, DoesNotFireOnPreservedIntermediates) {
  GraphDef g = DenseRelu();
  EXPECT_TRUE(Optimized(&g, {"mm"}).empty());
  GraphDef h = DenseRelu();
  RewriteCounts fired = Optimized(&h, {"ba"});  // BiasAdd is fetched: fuse up to it only
  EXPECT_EQ(fired["MatMul+BiasAdd"], 1u);
  EXPECT_EQ(Find(h, "ba")->op, "_PdkFusedMatMul");
  EXPECT_EQ(Find(h, "act")->op, "Relu");
  GraphDef r = DenseRelu();
  Optimized(&r, {"act"});  // the last node keeps its name and output: fetchable as before
  EXPECT_EQ(Find(r, "act")->op, "_PdkFusedMatMul");
}

TEST(FuseMatMul, DoesNotFireOffPdkOrOnOtherTypes) {
  GraphDef cpu = DenseRelu();
  for (auto& n : cpu.node) n.device = kCpu;
  EXPECT_TRUE(Optimized(&cpu).empty());
  GraphDef mixed = DenseRelu();
  mixed.node[3].device = kCpu;  // MatMul on the CPU
  RewriteCounts mixed_fired = Optimized(&mixed);
  mixed_fired.erase("input from the CPU read in host memory");  // BiasAdd reads the CPU's MatMul
  EXPECT_TRUE(mixed_fired.empty());
  GraphDef dbl = DenseRelu();
  dbl.node[3].attr["T"] = AttrValue::Type(DT_DOUBLE);
  dbl.node[4].attr["T"] = AttrValue::Type(DT_DOUBLE);
  EXPECT_TRUE(Optimized(&dbl).empty());
  GraphDef ta = DenseRelu();
  ta.node[3].attr["transpose_a"] = AttrValue::Bool(true);
  EXPECT_TRUE(Optimized(&ta).empty());
  GraphDef act_cpu = DenseRelu();
  act_cpu.node[5].device = kCpu;  // activation elsewhere: fuse MatMul+BiasAdd only
  EXPECT_EQ(Optimized(&act_cpu)["MatMul+BiasAdd"], 1u);
}

TEST(FuseMatMul, NeverEmitsAnOpWithoutKernel) {
  GraphDef g = DenseRelu();
  OptimizeOptions o;
  o.kernel_available = [](const std::string&) { return false; };
  RewriteCounts fired;
  ASSERT_TRUE(Optimize(&g, o, &fired).ok());
  EXPECT_TRUE(fired.empty());
}

TEST(FuseMatMul, ChainedLayers) {
  GraphDef g = DenseRelu();
  g.node.push_back(Node("w2", "Placeholder", {}));
  g.node.push_back(Node("b2", "Placeholder", {}));
  g.node.push_back(Node("mm2", "MatMul", {"act", "w2"}));
  g.node.push_back(Node("ba2", "BiasAdd", {"mm2", "b2"}));
  g.node[6].input[0] = "ba2";  // out reads the second layer
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["MatMul+BiasAdd+Relu"], 1u);
  EXPECT_EQ(fired["MatMul+BiasAdd"], 1u);
  EXPECT_EQ(Find(g, "ba2")->input[0], "act");
}

// ------------------------------------------------- TensorList gradients

constexpr int kVariant = 21;

NodeDef ListNode(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                 const std::string& device = kPdk) {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.input = std::move(inputs);
  n.device = device;
  if (op == "AddN" || op == "ZerosLike" || op == "Enter" || op == "Exit" || op == "Merge" ||
      op == "Switch" || op == "NextIteration" || op == "Identity")
    n.attr["T"] = AttrValue::Type(kVariant);
  if (op.rfind("TensorList", 0) == 0) n.attr["element_dtype"] = AttrValue::Type(DT_FLOAT);
  if (op == "AddN") n.attr["N"] = AttrValue::Int(2);
  if (op == "Placeholder") n.attr["dtype"] = AttrValue::Type(DT_FLOAT);
  return n;
}

// The gradient-loop body: acc (the accumulated list) + SetItem(Reserve(s, n), i, dx).
GraphDef ListGradAccumulation(const std::string& add_device = kCpu) {
  GraphDef g;
  g.node = {ListNode("acc", "Placeholder", {}), ListNode("i", "Placeholder", {}),
            ListNode("dx", "Placeholder", {}), ListNode("s", "Placeholder", {}),
            ListNode("n", "Placeholder", {}),
            ListNode("reserve", "TensorListReserve", {"s", "n"}),
            ListNode("set", "TensorListSetItem", {"reserve", "i", "dx"}),
            ListNode("add", "AddN", {"acc", "set"}, add_device),
            ListNode("next", "NextIteration", {"add"})};
  return g;
}

TEST(TensorListGrad, AddNBecomesGetItemAddSetItemOnPdk) {
  GraphDef g = ListGradAccumulation();
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["AddN(TensorList)"], 1u);
  EXPECT_EQ(Find(g, "set"), nullptr);
  EXPECT_EQ(Find(g, "reserve"), nullptr);
  const NodeDef* add = Find(g, "add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->op, "TensorListSetItem");
  EXPECT_EQ(add->device, kPdk);
  EXPECT_EQ(add->TypeAttr("element_dtype"), DT_FLOAT);
  EXPECT_EQ(add->input, (std::vector<std::string>{"acc", "i", "add/pdk_item_sum"}));
  const NodeDef* sum = Find(g, "add/pdk_item_sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->op, "AddV2");
  EXPECT_EQ(sum->input, (std::vector<std::string>{"add/pdk_item", "dx"}));
  const NodeDef* get = Find(g, "add/pdk_item");
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->op, "TensorListGetItem");
  EXPECT_EQ(get->input, (std::vector<std::string>{"acc", "i", "add/pdk_item_shape"}));
  EXPECT_EQ(Find(g, "add/pdk_item_shape")->op, "Shape");
  EXPECT_EQ(Find(g, "add/pdk_item_shape")->input, (std::vector<std::string>{"dx"}));
  EXPECT_EQ(Find(g, "next")->input[0], "add");
  // Idempotent.
  const std::string once = SerializeGraphDef(g);
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(SerializeGraphDef(g), once);
}

TEST(TensorListGrad, AddNWithFreshListFirst) {
  GraphDef g = ListGradAccumulation();
  for (auto& n : g.node)
    if (n.name == "add") n.input = {"set", "acc"};
  EXPECT_EQ(Optimized(&g)["AddN(TensorList)"], 1u);
  EXPECT_EQ(Find(g, "add")->input[0], "acc");
}

TEST(TensorListGrad, AddNLeftAloneWhenUnsafe) {
  {  // the fresh list is read elsewhere too
    GraphDef g = ListGradAccumulation();
    g.node.push_back(ListNode("other", "Identity", {"set"}));
    EXPECT_TRUE(Optimized(&g).empty());
  }
  {  // the SetItem is a fetch node
    GraphDef g = ListGradAccumulation();
    EXPECT_TRUE(Optimized(&g, {"set"}).empty());
  }
  {  // the list is not on PDK
    GraphDef g = ListGradAccumulation();
    for (auto& n : g.node)
      if (n.name == "set") n.device = kCpu;
    EXPECT_TRUE(Optimized(&g).empty());
  }
  {  // element type PDK's rewrite does not cover
    GraphDef g = ListGradAccumulation();
    for (auto& n : g.node)
      if (n.name == "set") n.attr["element_dtype"] = AttrValue::Type(DT_INT32);
    EXPECT_EQ(Optimized(&g).count("AddN(TensorList)"), 0u);
  }
  {  // a list that is not a fresh Reserve
    GraphDef g = ListGradAccumulation();
    for (auto& n : g.node)
      if (n.name == "set") n.input[0] = "acc";
    EXPECT_TRUE(Optimized(&g).empty());
  }
}

// x -> FromTensor -> Enter -> Merge <- NextIteration <- Identity <- Switch:1,
// Switch:0 -> Exit -> ZerosLike.
GraphDef InvariantListLoop(bool pass_through = true) {
  GraphDef g;
  g.node = {ListNode("x", "Placeholder", {}), ListNode("es", "Placeholder", {}),
            ListNode("pred", "Placeholder", {}),
            ListNode("from", "TensorListFromTensor", {"x", "es"}),
            ListNode("enter", "Enter", {"from"}),
            ListNode("merge", "Merge", {"enter", "next"}),
            ListNode("switch", "Switch", {"merge", "pred"}),
            ListNode("body", "Identity", {"switch:1"}),
            ListNode("next", "NextIteration", {pass_through ? "body" : "other"}),
            ListNode("exit", "Exit", {"switch"}),
            ListNode("zeros", "ZerosLike", {"exit"}, kCpu),
            ListNode("use", "Identity", {"zeros"})};
  if (!pass_through) g.node.push_back(ListNode("other", "TensorListSetItem", {"body", "pred", "x"}));
  return g;
}

TEST(TensorListGrad, ZerosLikeOfInvariantLoopList) {
  GraphDef g = InvariantListLoop();
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["ZerosLike(TensorList)"], 1u);
  const NodeDef* z = Find(g, "zeros");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->op, "TensorListFromTensor");
  EXPECT_EQ(z->device, kPdk);
  EXPECT_EQ(z->input, (std::vector<std::string>{"zeros/pdk_zeros", "es"}));
  const NodeDef* zx = Find(g, "zeros/pdk_zeros");
  ASSERT_NE(zx, nullptr);
  EXPECT_EQ(zx->op, "ZerosLike");
  EXPECT_EQ(zx->TypeAttr("T"), DT_FLOAT);
  EXPECT_EQ(zx->input, (std::vector<std::string>{"x"}));
  const std::string once = SerializeGraphDef(g);
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(SerializeGraphDef(g), once);
}

// Keras mixed precision: the LSTM / GRU loops of "mixed_float16" and
// "mixed_bfloat16" hold float16 / bfloat16 lists; AddV2 and ZerosLike come in
// the element type.
TEST(TensorListGrad, SixteenBitElementTypes) {
  for (int dtype : {19 /* DT_HALF */, 14 /* DT_BFLOAT16 */}) {
    GraphDef add = ListGradAccumulation();
    for (auto& n : add.node)
      if (n.name == "set" || n.name == "reserve") n.attr["element_dtype"] = AttrValue::Type(dtype);
    EXPECT_EQ(Optimized(&add)["AddN(TensorList)"], 1u) << dtype;
    ASSERT_NE(Find(add, "add/pdk_item_sum"), nullptr);
    EXPECT_EQ(Find(add, "add/pdk_item_sum")->TypeAttr("T"), dtype);
    EXPECT_EQ(Find(add, "add/pdk_item")->TypeAttr("element_dtype"), dtype);
    EXPECT_EQ(Find(add, "add")->TypeAttr("element_dtype"), dtype);

    GraphDef zeros = InvariantListLoop();
    for (auto& n : zeros.node)
      if (n.name == "from") n.attr["element_dtype"] = AttrValue::Type(dtype);
    EXPECT_EQ(Optimized(&zeros)["ZerosLike(TensorList)"], 1u) << dtype;
    ASSERT_NE(Find(zeros, "zeros/pdk_zeros"), nullptr);
    EXPECT_EQ(Find(zeros, "zeros/pdk_zeros")->TypeAttr("T"), dtype);
    EXPECT_EQ(Find(zeros, "zeros")->TypeAttr("element_dtype"), dtype);
  }
}

TEST(TensorListGrad, ZerosLikeLeftAloneWhenTheLoopChangesTheList) {
  GraphDef g = InvariantListLoop(/*pass_through=*/false);
  EXPECT_TRUE(Optimized(&g).empty());
}

// ------------------------------- int32 TensorList elements in host memory

std::vector<int64_t> IntListAttr(const NodeDef& n, const std::string& key) {
  std::vector<int64_t> v;
  auto it = n.attr.find(key);
  if (it != n.attr.end()) EXPECT_TRUE(it->second.GetIntList(&v)) << key;
  return v;
}

TEST(TensorListHostMemory, Int32ElementArgumentsOnPdkGoToHostMemory) {
  GraphDef g;
  g.node = {ListNode("l", "Placeholder", {}), ListNode("v", "Placeholder", {}),
            ListNode("i", "Placeholder", {}),
            ListNode("push", "TensorListPushBack", {"l", "v"}),
            ListNode("set", "TensorListSetItem", {"l", "i", "v"}),
            ListNode("pop", "TensorListPopBack", {"l", "i"}),
            ListNode("get", "TensorListGetItem", {"l", "i", "i"}),
            ListNode("len", "TensorListLength", {"l"}),
            ListNode("push_f", "TensorListPushBack", {"l", "v"}),
            ListNode("push_cpu", "TensorListPushBack", {"l", "v"}, kCpu)};
  for (NodeDef& n : g.node)
    if (n.name != "push_f" && n.attr.count("element_dtype"))
      n.attr["element_dtype"] = AttrValue::Type(DT_INT32);
  // An attribute TensorFlow (or a user) set already is kept and extended.
  g.node[3].attr["_input_hostmem"] = AttrValue::IntList({0});
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["int32 TensorList element in host memory"], 4u);
  EXPECT_EQ(IntListAttr(*Find(g, "push"), "_input_hostmem"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(IntListAttr(*Find(g, "set"), "_input_hostmem"), (std::vector<int64_t>{2}));
  EXPECT_EQ(IntListAttr(*Find(g, "pop"), "_output_hostmem"), (std::vector<int64_t>{1}));
  EXPECT_EQ(IntListAttr(*Find(g, "get"), "_output_hostmem"), (std::vector<int64_t>{0}));
  // Length's output is HostMemory in TensorFlow's kernel already; float32
  // elements stay in device memory; nodes on the CPU are not PDK's.
  EXPECT_EQ(Find(g, "len")->attr.count("_output_hostmem"), 0u);
  EXPECT_EQ(Find(g, "push_f")->attr.count("_input_hostmem"), 0u);
  EXPECT_EQ(Find(g, "push_cpu")->attr.count("_input_hostmem"), 0u);
  // Idempotent.
  EXPECT_EQ(Optimized(&g)["int32 TensorList element in host memory"], 0u);
  EXPECT_EQ(IntListAttr(*Find(g, "push"), "_input_hostmem"), (std::vector<int64_t>{0, 1}));
}


// ------------------------------- bool tensors of the logical ops in host memory

// Keras's ops.argmax on float logits: LogicalAnd(Equal(x, 0.0), Less(int32))
// feeding SelectV2's condition; plus the cases the rewrite must leave alone.
TEST(LogicalBoolHostMemory, ComparisonAndSelectBesideALogicalOpUseHostMemory) {
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("zero", "Const", {}),
            Node("bits", "Placeholder", {}),
            Node("eq", "Equal", {"x", "zero"}),           // float -> bool, device memory
            Node("neg", "Less", {"bits", "zero"}),        // int32: host memory already
            Node("and", "LogicalAnd", {"eq", "neg"}),
            Node("sel", "SelectV2", {"and", "zero", "x"}),
            Node("cast", "Cast", {"and"}),
            // A comparison also read by a kernel that wants device memory,
            // and one read by no logical op: both stay in device memory.
            Node("gt", "Greater", {"x", "zero"}),
            Node("not", "LogicalNot", {"gt"}),
            Node("keep", "Identity", {"gt"}),
            Node("lt", "Less", {"x", "zero"}),
            Node("sel2", "SelectV2", {"lt", "x", "zero"}),
            // A comparison on the CPU, and a select on the CPU: not PDK's.
            Node("eq_cpu", "Equal", {"x", "zero"}, kCpu),
            Node("not_cpu", "LogicalNot", {"eq_cpu"}, kCpu),
            Node("sel_cpu", "SelectV2", {"and", "x", "zero"}, kCpu)};
  for (NodeDef& n : g.node) {
    if (n.name == "bits" || n.name == "neg") n.attr["T"] = AttrValue::Type(DT_INT32);
    if (n.name == "bits") n.attr["dtype"] = AttrValue::Type(DT_INT32);
    if (n.op.rfind("Logical", 0) == 0) n.attr.erase("T");
    if (n.name == "cast") {
      n.attr.erase("T");
      n.attr["SrcT"] = AttrValue::Type(DT_BOOL);
      n.attr["DstT"] = AttrValue::Type(DT_FLOAT);
    }
  }
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["bool output in host memory"], 1u);
  EXPECT_EQ(fired["bool input in host memory"], 2u);
  EXPECT_EQ(IntListAttr(*Find(g, "eq"), "_output_hostmem"), (std::vector<int64_t>{0}));
  EXPECT_EQ(IntListAttr(*Find(g, "sel"), "_input_hostmem"), (std::vector<int64_t>{0}));
  EXPECT_EQ(IntListAttr(*Find(g, "cast"), "_input_hostmem"), (std::vector<int64_t>{0}));
  EXPECT_EQ(Find(g, "neg")->attr.count("_output_hostmem"), 0u);  // int32 Less: host already
  EXPECT_EQ(Find(g, "gt")->attr.count("_output_hostmem"), 0u);
  EXPECT_EQ(Find(g, "lt")->attr.count("_output_hostmem"), 0u);
  EXPECT_EQ(Find(g, "sel2")->attr.count("_input_hostmem"), 0u);
  EXPECT_EQ(Find(g, "eq_cpu")->attr.count("_output_hostmem"), 0u);
  EXPECT_EQ(Find(g, "sel_cpu")->attr.count("_input_hostmem"), 0u);
  // Idempotent.
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(IntListAttr(*Find(g, "sel"), "_input_hostmem"), (std::vector<int64_t>{0}));
}

// A lowered tf.cond on a float comparison joined by LogicalAnd: the pivot
// Switch(pred, pred), its data input, outputs and the Identity pivots read
// only through control edges go to host memory with the predicate. A Switch
// whose output a float kernel reads keeps device memory.
TEST(LogicalBoolHostMemory, CondPivotOfALogicalPredicateUsesHostMemory) {
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("zero", "Const", {}),
            Node("gt", "Greater", {"x", "zero"}), Node("lt", "Less", {"x", "zero"}),
            Node("and", "LogicalAnd", {"gt", "lt"}),
            Node("sw", "Switch", {"and", "and"}),
            Node("pivot_f", "Identity", {"sw"}), Node("pivot_t", "Identity", {"sw:1"}),
            Node("branch", "Neg", {"x", "^pivot_t"}),
            // A Switch on a comparison straight (tf.cond(x > 0, ...)).
            Node("ge", "GreaterEqual", {"x", "zero"}),
            Node("sw2", "Switch", {"ge", "ge"}), Node("p2", "Identity", {"sw2:1"}),
            Node("after2", "Neg", {"x", "^p2"}),
            // A Switch whose true output a kernel reads as data.
            Node("sw3", "Switch", {"and", "and"}), Node("use3", "Identity", {"sw3:1"}),
            Node("cast3", "Cast", {"use3"})};
  for (NodeDef& n : g.node) {
    if (n.op == "LogicalAnd") n.attr.erase("T");
    if (n.op == "Switch" || n.op == "Identity") n.attr["T"] = AttrValue::Type(DT_BOOL);
    if (n.op == "Cast") {
      n.attr.erase("T");
      n.attr["SrcT"] = AttrValue::Type(DT_BOOL);
      n.attr["DstT"] = AttrValue::Type(DT_FLOAT);
    }
  }
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["cond predicate in host memory"], 5u);  // sw, pivot_f, pivot_t, sw2, p2
  for (const char* name : {"sw", "sw2"}) {
    EXPECT_EQ(IntListAttr(*Find(g, name), "_input_hostmem"), (std::vector<int64_t>{0})) << name;
    EXPECT_EQ(IntListAttr(*Find(g, name), "_output_hostmem"), (std::vector<int64_t>{0, 1}))
        << name;
  }
  for (const char* name : {"pivot_f", "pivot_t", "p2"}) {
    EXPECT_EQ(IntListAttr(*Find(g, name), "_input_hostmem"), (std::vector<int64_t>{0})) << name;
    EXPECT_EQ(IntListAttr(*Find(g, name), "_output_hostmem"), (std::vector<int64_t>{0})) << name;
  }
  EXPECT_EQ(IntListAttr(*Find(g, "ge"), "_output_hostmem"), (std::vector<int64_t>{0}));
  EXPECT_EQ(IntListAttr(*Find(g, "gt"), "_output_hostmem"), (std::vector<int64_t>{0}));
  EXPECT_EQ(Find(g, "sw3")->attr.count("_input_hostmem"), 0u);
  EXPECT_EQ(Find(g, "sw3")->attr.count("_output_hostmem"), 0u);
  EXPECT_TRUE(Optimized(&g).empty());  // idempotent
}

// A fused elementwise node reads its bool inputs (Tin) from a logical op in
// host memory, its float inputs as before.
TEST(LogicalBoolHostMemory, FusedElementwiseBoolInputFromALogicalOp) {
  GraphDef g;
  g.node = {Node("p", "Placeholder", {}), Node("q", "Placeholder", {}),
            Node("x", "Placeholder", {}), Node("or", "LogicalOr", {"p", "q"}),
            Node("fused", "_PdkFusedElementwise", {"x", "or"})};
  for (NodeDef& n : g.node) {
    if (n.name == "p" || n.name == "q") n.attr["dtype"] = AttrValue::Type(DT_BOOL);
    if (n.op == "LogicalOr") n.attr.erase("T");
  }
  g.node[4].attr["Tin"] = AttrValue::TypeList({DT_FLOAT, DT_BOOL});
  EXPECT_EQ(Optimized(&g)["bool input in host memory"], 1u);
  EXPECT_EQ(IntListAttr(*Find(g, "fused"), "_input_hostmem"), (std::vector<int64_t>{1}));
}

// ------------------------------- inputs from the CPU read in host memory

// A function's host-tensor argument and a tf.data element (IteratorGetNext on
// the CPU) read by PDK kernels: those inputs go to host memory; an Identity
// (TensorFlow's DEVICE_DEFAULT kernel on PDK), a producer on another task's
// CPU or on no device, and consumers on the CPU are left alone.
TEST(CpuInputsHostMemory, PdkKernelsReadCpuProducedInputsInHostMemory) {
  constexpr char kOtherTaskCpu[] = "/job:localhost/replica:0/task:1/device:CPU:0";
  GraphDef g;
  g.node = {Node("x", "_Arg", {}, kCpu),
            Node("it", "IteratorGetNext", {}, kCpu),
            Node("w", "Placeholder", {}),
            Node("mm", "MatMul", {"x", "w"}),
            Node("cast", "Cast", {"it:1"}),
            Node("both", "AddV2", {"w", "x"}),
            Node("id", "Identity", {"x"}),
            Node("far", "Placeholder", {}, kOtherTaskCpu),
            Node("mm_far", "MatMul", {"far", "w"}),
            Node("nowhere", "Placeholder", {}, ""),
            Node("mm_nowhere", "MatMul", {"nowhere", "w"}),
            Node("mm_cpu", "MatMul", {"x", "it"}, kCpu)};
  g.node[5].attr["_input_hostmem"] = AttrValue::IntList({0});  // kept and extended
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["input from the CPU read in host memory"], 3u);
  EXPECT_EQ(IntListAttr(*Find(g, "mm"), "_input_hostmem"), (std::vector<int64_t>{0}));
  EXPECT_EQ(IntListAttr(*Find(g, "cast"), "_input_hostmem"), (std::vector<int64_t>{0}));
  EXPECT_EQ(IntListAttr(*Find(g, "both"), "_input_hostmem"), (std::vector<int64_t>{0, 1}));
  for (const char* kept : {"id", "mm_far", "mm_nowhere", "mm_cpu", "w"})
    EXPECT_EQ(Find(g, kept)->attr.count("_input_hostmem"), 0u) << kept;
  // Idempotent.
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(IntListAttr(*Find(g, "both"), "_input_hostmem"), (std::vector<int64_t>{0, 1}));
}

// ------------------------------------------ int32 loop state on the loop's device

// `i < n` with n a function argument: n's loop nodes on the CPU, the rest of
// the loop (the counter, Less, LoopCond) on PDK, as TensorFlow places them.
GraphDef LoopBoundedByCpuArgument(const std::string& loop_cond_device = kPdk) {
  auto int32 = [](NodeDef n) {
    n.attr["T"] = AttrValue::Type(DT_INT32);
    return n;
  };
  GraphDef g;
  g.node = {int32(Node("n", "_Arg", {}, kCpu)),
            int32(Node("n_enter", "Enter", {"n"}, kCpu)),
            int32(Node("n_merge", "Merge", {"n_enter", "n_next"}, kCpu)),
            int32(Node("n_cond_in", "Identity", {"n_merge"}, kCpu)),
            int32(Node("i", "Placeholder", {})),
            int32(Node("less", "Less", {"i", "n_cond_in"})),
            Node("cond", "LoopCond", {"less"}, loop_cond_device),
            int32(Node("n_switch", "Switch", {"n_merge", "cond"}, kCpu)),
            int32(Node("n_next", "NextIteration", {"n_switch:1"}, kCpu)),
            int32(Node("n_exit", "Exit", {"n_switch"}, kCpu)),
            int32(Node("after", "Identity", {"n_exit"}, kCpu)),
            Node("f_switch", "Switch", {"n_merge", "cond"}, kCpu)};  // float32: stays
  return g;
}

TEST(LoopInt32State, FollowsTheLoopCondToPdk) {
  GraphDef g = LoopBoundedByCpuArgument();
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["int32 loop state to the loop's device"], 1u);
  for (const char* moved : {"n_enter", "n_merge", "n_cond_in", "n_switch", "n_next", "n_exit"})
    EXPECT_EQ(Find(g, moved)->device, kPdk) << moved;
  // The argument, the value's reader after the loop and a float Switch stay.
  for (const char* kept : {"n", "after", "f_switch"}) EXPECT_EQ(Find(g, kept)->device, kCpu) << kept;
  EXPECT_TRUE(Optimized(&g).empty());  // idempotent
}

TEST(LoopInt32State, LoopOnTheCpuOrPreservedNodesStay) {
  GraphDef g = LoopBoundedByCpuArgument(kCpu);
  EXPECT_TRUE(Optimized(&g).empty());
  GraphDef h = LoopBoundedByCpuArgument();
  Optimized(&h, {"n_merge"});  // a fetch/keep node is not moved, nor grown through
  EXPECT_EQ(Find(h, "n_merge")->device, kCpu);
  EXPECT_EQ(Find(h, "n_switch")->device, kPdk);
  EXPECT_EQ(Find(h, "n_enter")->device, kCpu);
}

// ------------------------------------------------------ bool TensorLists

// A lowered loop on PDK reading a bool sequence from a list (a Keras RNN's
// mask) and pushing each element onto an accumulator its gradient pops, as
// TensorFlow places it: the bool list ops without a DEVICE_DEFAULT kernel
// (FromTensor, GetItem, PopBack) and their element_shape Consts on the CPU.
GraphDef MaskedLoop() {
  auto boolean = [](NodeDef n) {
    n.attr[n.op == "Placeholder" ? "dtype" : "element_dtype"] = AttrValue::Type(DT_BOOL);
    return n;
  };
  NodeDef shape = Node("shape", "Const", {}, kCpu);
  NodeDef item_shape = Node("item_shape", "Const", {"^pivot"}, kCpu);
  GraphDef g;
  g.node = {boolean(ListNode("mask", "Placeholder", {})),
            ListNode("i", "Placeholder", {}),
            ListNode("pivot", "Identity", {"i"}),
            shape,
            item_shape,
            boolean(ListNode("from", "TensorListFromTensor", {"mask", "shape"}, kCpu)),
            ListNode("enter", "Enter", {"from"}),
            ListNode("merge", "Merge", {"enter", "next"}),
            ListNode("cond", "Placeholder", {}),
            ListNode("switch", "Switch", {"merge", "cond"}),
            ListNode("body", "Identity", {"switch:1"}),
            boolean(ListNode("get", "TensorListGetItem", {"body", "i", "item_shape"}, kCpu)),
            Node("select", "SelectV2", {"get", "i", "i"}),
            Node("not", "LogicalNot", {"get"}),
            ListNode("next", "NextIteration", {"body"}),
            ListNode("exit", "Exit", {"switch"}),
            boolean(ListNode("acc", "EmptyTensorList", {"shape", "i"})),
            boolean(ListNode("push", "TensorListPushBack", {"acc", "get"})),
            boolean(ListNode("pop", "TensorListPopBack", {"push", "item_shape"}, kCpu)),
            Node("grad_select", "SelectV2", {"pop:1", "i", "i"})};
  return g;
}

TEST(BoolTensorLists, HeldAsFloat32OnPdk) {
  GraphDef g = MaskedLoop();
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["bool TensorList held as float32 on the device"], 2u);  // two lists
  for (const char* n : {"from", "get", "acc", "push", "pop"}) {
    EXPECT_EQ(Find(g, n)->device, kPdk) << n;
    EXPECT_EQ(Find(g, n)->TypeAttr("element_dtype"), DT_FLOAT) << n;
  }
  for (const char* n : {"enter", "merge", "switch", "body", "next", "exit", "shape", "item_shape"})
    EXPECT_EQ(Find(g, n)->device, kPdk) << n;
  // Elements in through Cast(bool -> float32), out through Cast(float32 -> bool).
  EXPECT_EQ(Find(g, "from")->input[0], "from/pdk_bool_to_float");
  EXPECT_EQ(Find(g, "push")->input[1], "push/pdk_bool_to_float");
  EXPECT_EQ(Find(g, "push/pdk_bool_to_float")->input[0], "get/pdk_float_to_bool");
  const NodeDef* in = Find(g, "from/pdk_bool_to_float");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->op, "Cast");
  EXPECT_EQ(in->input, std::vector<std::string>{"mask"});
  EXPECT_EQ(in->TypeAttr("SrcT"), DT_BOOL);
  EXPECT_EQ(in->TypeAttr("DstT"), DT_FLOAT);
  const NodeDef* out = Find(g, "get/pdk_float_to_bool");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->input, std::vector<std::string>{"get"});
  EXPECT_EQ(out->TypeAttr("SrcT"), DT_FLOAT);
  EXPECT_EQ(out->TypeAttr("DstT"), DT_BOOL);
  EXPECT_EQ(out->device, kPdk);
  EXPECT_EQ(Find(g, "select")->input[0], "get/pdk_float_to_bool");
  EXPECT_EQ(Find(g, "not")->input[0], "get/pdk_float_to_bool");
  EXPECT_EQ(Find(g, "pop/pdk_float_to_bool")->input, std::vector<std::string>{"pop:1"});
  EXPECT_EQ(Find(g, "grad_select")->input[0], "pop/pdk_float_to_bool");
  EXPECT_TRUE(Optimized(&g).empty());  // idempotent
}

TEST(BoolTensorLists, LeftAloneWhenAHandleLeavesTheLoopsOrNothingIsOnPdk) {
  GraphDef g = MaskedLoop();
  g.node.push_back(ListNode("ret", "_Retval", {"exit"}));  // the list is a result
  EXPECT_EQ(Optimized(&g)["bool TensorList held as float32 on the device"], 1u);
  EXPECT_EQ(Find(g, "from")->device, kCpu);  // that list stays
  EXPECT_EQ(Find(g, "from")->TypeAttr("element_dtype"), DT_BOOL);
  EXPECT_EQ(Find(g, "pop")->device, kPdk);  // the accumulator still goes

  GraphDef h = MaskedLoop();
  Optimized(&h, {"get"});  // a fetch/keep node: its list stays
  EXPECT_EQ(Find(h, "get")->device, kCpu);
  EXPECT_EQ(Find(h, "get")->TypeAttr("element_dtype"), DT_BOOL);

  GraphDef taken = MaskedLoop();  // a Cast's name already used: that list stays
  taken.node.push_back(ListNode("from/pdk_bool_to_float", "Placeholder", {}));
  Optimized(&taken);
  EXPECT_EQ(Find(taken, "from")->TypeAttr("element_dtype"), DT_BOOL);
  EXPECT_EQ(Find(taken, "from")->input[0], "mask");

  GraphDef cpu = MaskedLoop();
  for (NodeDef& n : cpu.node) n.device = kCpu;  // a function on the CPU
  EXPECT_TRUE(Optimized(&cpu).empty());
}

// ------------------------------------------- Const tensors (perms, scalars)

// A Const node whose value is `t` (serialized by protobuf, the reference).
NodeDef ConstNode(const std::string& name, const pdk::tfproto::TensorProto& t,
                  const std::string& device = kPdk) {
  NodeDef n;
  n.name = name;
  n.op = "Const";
  n.device = device;
  pdk::tfproto::AttrValue v;
  *v.mutable_tensor() = t;
  n.attr["value"] = AttrValue::FromBytes(Deterministic(v));
  n.attr["dtype"] = AttrValue::Type(t.dtype());
  return n;
}

pdk::tfproto::TensorProto IntVector(std::vector<int> v, bool as_content, bool int64 = false) {
  pdk::tfproto::TensorProto t;
  t.set_dtype(int64 ? pdk::tfproto::DT_INT64 : pdk::tfproto::DT_INT32);
  t.mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(v.size()));
  if (as_content) {
    std::string bytes;
    for (int x : v) {
      if (int64) {
        int64_t y = x;
        bytes.append(reinterpret_cast<const char*>(&y), 8);
      } else {
        bytes.append(reinterpret_cast<const char*>(&x), 4);
      }
    }
    t.set_tensor_content(bytes);
  } else {
    for (int x : v) int64 ? t.add_int64_val(x) : t.add_int_val(x);
  }
  return t;
}

pdk::tfproto::TensorProto FloatScalar(float f) {
  pdk::tfproto::TensorProto t;
  t.set_dtype(pdk::tfproto::DT_FLOAT);
  t.mutable_tensor_shape();
  t.add_float_val(f);
  return t;
}

TEST(ConstTensor, IntAndFloatValuesAsProtobufWritesThem) {
  std::vector<int64_t> v;
  for (bool content : {false, true})
    for (bool int64 : {false, true}) {
      NodeDef c = ConstNode("c", IntVector({2, 0, -1, 3}, content, int64));
      ASSERT_TRUE(c.attr["value"].GetIntTensor(&v)) << content << int64;
      EXPECT_EQ(v, (std::vector<int64_t>{2, 0, -1, 3}));
    }
  pdk::tfproto::TensorProto splat = IntVector({7}, false);
  splat.mutable_tensor_shape()->mutable_dim(0)->set_size(3);
  ASSERT_TRUE(ConstNode("s", splat).attr["value"].GetIntTensor(&v));
  EXPECT_EQ(v, (std::vector<int64_t>{7, 7, 7}));
  std::vector<float> f;
  int rank = -1;
  ASSERT_TRUE(ConstNode("f", FloatScalar(0.5f)).attr["value"].GetFloatTensor(&f, &rank));
  EXPECT_EQ(f, std::vector<float>{0.5f});
  EXPECT_EQ(rank, 0);
  EXPECT_FALSE(ConstNode("f", FloatScalar(0.5f)).attr["value"].GetIntTensor(&v));
  EXPECT_FALSE(AttrValue::Int(3).GetIntTensor(&v));
  pdk::tfproto::TensorProto bad = IntVector({1, 2}, true);
  bad.set_tensor_content("abc");  // not 2 x 4 bytes
  EXPECT_FALSE(ConstNode("b", bad).attr["value"].GetIntTensor(&v));
}

// ------------------------------------------------------- Identity removal

// x -> a (Relu) -> id (Identity) -> b (Relu) -> out
GraphDef IdentityChain() {
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("a", "Relu", {"x"}), Node("id", "Identity", {"a"}),
            Node("b", "Relu", {"id"}), Node("out", "Identity", {"b"})};
  return g;
}

TEST(RemoveIdentity, ConsumersReadItsInput) {
  GraphDef g = IdentityChain();
  g.node[2].input.push_back("^x");
  g.node.push_back(Node("after", "NoOp", {"^id"}));
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["Identity"], 1u);
  EXPECT_EQ(Find(g, "id"), nullptr);
  EXPECT_EQ(Find(g, "b")->input, (std::vector<std::string>{"a", "^x"}));  // control forwarded
  EXPECT_EQ(Find(g, "after")->input, (std::vector<std::string>{"^a", "^x"}));
  EXPECT_NE(Find(g, "out"), nullptr);  // a graph output (no consumer) stays
  const std::string once = SerializeGraphDef(g);
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(SerializeGraphDef(g), once);
}

TEST(RemoveIdentity, ChainsGoInOnePass) {
  GraphDef g = IdentityChain();
  g.node.insert(g.node.begin() + 3, Node("id2", "Identity", {"id:0", "^x"}));
  g.node[4].input = {"id2"};
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["Identity"], 2u);
  EXPECT_EQ(Find(g, "b")->input, (std::vector<std::string>{"a", "^x"}));
}

TEST(RemoveIdentity, LeftAloneWhenItMatters) {
  auto unchanged = [](GraphDef g, std::unordered_set<std::string> preserve = {}) {
    RewriteCounts fired = Optimized(&g, std::move(preserve));
    return fired.count("Identity") == 0 && Find(g, "id") != nullptr;
  };
  EXPECT_TRUE(unchanged(IdentityChain(), {"id"}));  // fetched / kept
  GraphDef dev = IdentityChain();
  dev.node[1].device = kCpu;  // a copy across devices
  EXPECT_TRUE(unchanged(dev));
  GraphDef consumer = IdentityChain();
  consumer.node[3].device = kCpu;
  EXPECT_TRUE(unchanged(consumer));
  GraphDef resource = IdentityChain();
  resource.node[2].attr["T"] = AttrValue::Type(DT_RESOURCE);  // a variable handle
  EXPECT_TRUE(unchanged(resource));
  GraphDef ref = IdentityChain();
  ref.node[2].attr["T"] = AttrValue::Type(101);  // float_ref
  EXPECT_TRUE(unchanged(ref));
  GraphDef var = IdentityChain();
  var.node[1].op = "VarHandleOp";
  EXPECT_TRUE(unchanged(var));
  GraphDef sw = IdentityChain();  // after a Switch: the branch's anchor
  sw.node[1].op = "Switch";
  EXPECT_TRUE(unchanged(sw));
  GraphDef next = IdentityChain();  // feeding NextIteration / Merge
  next.node[3].op = "NextIteration";
  EXPECT_TRUE(unchanged(next));
  next.node[3].op = "Merge";
  EXPECT_TRUE(unchanged(next));
  GraphDef cpu = IdentityChain();
  for (auto& n : cpu.node) n.device = kCpu;
  EXPECT_TRUE(unchanged(cpu));
  GraphDef ret = IdentityChain();  // orders a function's return after "^x"
  ret.node[2].input.push_back("^x");
  ret.node[3].op = "_Retval";
  EXPECT_TRUE(unchanged(ret));
  ret.node[2].input.pop_back();  // without control inputs it goes
  EXPECT_FALSE(unchanged(ret));
}

// ------------------------------------------------------ Transpose pairs

// x -> t1 = Transpose(x, p1) -> t2 = Transpose(t1, p2) -> r (Relu) -> out
GraphDef TransposePair(std::vector<int> p1, std::vector<int> p2) {
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}),
            ConstNode("p1", IntVector(p1, true)),
            ConstNode("p2", IntVector(p2, false)),
            Node("t1", "Transpose", {"x", "p1"}),
            Node("t2", "Transpose", {"t1", "p2"}),
            Node("r", "Relu", {"t2"}),
            Node("out", "Identity", {"r"})};
  return g;
}

TEST(CancelTransposes, InversePermutationsCancel) {
  GraphDef g = TransposePair({0, 2, 3, 1}, {0, 3, 1, 2});  // NHWC->NCHW->NHWC
  g.node[4].input.push_back("^p1");
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired["Transpose+Transpose"], 1u);
  EXPECT_EQ(Find(g, "t1"), nullptr);
  EXPECT_EQ(Find(g, "t2"), nullptr);
  EXPECT_EQ(Find(g, "r")->input, (std::vector<std::string>{"x", "^p1"}));
  const std::string once = SerializeGraphDef(g);
  EXPECT_TRUE(Optimized(&g).empty());
  EXPECT_EQ(SerializeGraphDef(g), once);
}

TEST(CancelTransposes, InnerWithAnotherConsumerStays) {
  GraphDef g = TransposePair({1, 0}, {1, 0});
  g.node.push_back(Node("peek", "Relu", {"t1"}));
  EXPECT_EQ(Optimized(&g)["Transpose+Transpose"], 1u);
  EXPECT_EQ(Find(g, "t2"), nullptr);
  ASSERT_NE(Find(g, "t1"), nullptr);
  EXPECT_EQ(Find(g, "peek")->input[0], "t1");
  EXPECT_EQ(Find(g, "r")->input[0], "x");
}

TEST(CancelTransposes, IdentityPermutation) {
  GraphDef g = TransposePair({0, 1, 2}, {0, 1, 2});
  RewriteCounts fired = Optimized(&g);
  // Both are identities: each goes on its own.
  EXPECT_EQ(fired["Transpose(identity)"], 2u);
  EXPECT_EQ(Find(g, "r")->input[0], "x");
}

TEST(CancelTransposes, LeftAloneWhenTheyDoNotCancel) {
  GraphDef g = TransposePair({0, 2, 3, 1}, {0, 2, 3, 1});  // composes to {0, 3, 1, 2}
  EXPECT_TRUE(Optimized(&g).empty());
  GraphDef fetched = TransposePair({1, 0}, {1, 0});
  EXPECT_TRUE(Optimized(&fetched, {"t2"}).empty());
  GraphDef cpu = TransposePair({1, 0}, {1, 0});
  cpu.node[4].device = kCpu;
  RewriteCounts cpu_fired = Optimized(&cpu);
  cpu_fired.erase("input from the CPU read in host memory");  // the PDK reader of the CPU's node
  EXPECT_TRUE(cpu_fired.empty());
  GraphDef not_const = TransposePair({1, 0}, {1, 0});
  not_const.node[2] = Node("p2", "Placeholder", {});  // perm computed at run time
  EXPECT_TRUE(Optimized(&not_const).empty());
  GraphDef bad = TransposePair({1, 1}, {1, 0});  // not a permutation
  EXPECT_TRUE(Optimized(&bad).empty());
}

// ------------------------------------------------------------------ Gelu

// x, w, b -> MatMul -> BiasAdd (z) -> Gelu as TensorFlow's arithmetic
// optimizer leaves it (see matmul_biasadd_activation.cc) -> out.
GraphDef DenseGelu(bool approximate) {
  GraphDef g = DenseRelu();
  g.node.resize(5);  // x, w, b, mm, ba
  auto c = [&](const std::string& name, float v) { g.node.push_back(ConstNode(name, FloatScalar(v))); };
  if (!approximate) {
    c("half", 0.5f);
    c("sqrt_half", 0.7071067811865476f);
    g.node.push_back(Node("neg", "Neg", {"ba"}));
    g.node.push_back(Node("m1", "Mul", {"sqrt_half", "neg"}));
    g.node.push_back(Node("erfc", "Erfc", {"m1"}));
    g.node.push_back(Node("m2", "Mul", {"erfc", "half"}));
    g.node.push_back(Node("gelu", "Mul", {"ba", "m2"}));
  } else {
    c("half", 0.5f);
    c("one", 1.f);
    c("cubic", 0.044715f);
    c("k", 0.7978845608028654f);
    g.node.push_back(Node("sq", "Square", {"ba"}));
    g.node.push_back(Node("cz", "Mul", {"cubic", "ba"}));
    g.node.push_back(Node("cz3", "Mul", {"cz", "sq"}));
    g.node.push_back(Node("inner", "AddV2", {"ba", "cz3"}));
    g.node.push_back(Node("scaled", "Mul", {"inner", "k"}));
    g.node.push_back(Node("tanh", "Tanh", {"scaled"}));
    g.node.push_back(Node("plus1", "AddV2", {"tanh", "one"}));
    g.node.push_back(Node("m2", "Mul", {"plus1", "half"}));
    g.node.push_back(Node("gelu", "Mul", {"ba", "m2"}));
  }
  g.node.push_back(Node("out", "Identity", {"gelu"}));
  return g;
}

TEST(FuseMatMul, GeluExactAndApproximate) {
  for (bool approximate : {false, true}) {
    GraphDef g = DenseGelu(approximate);
    const std::string kind = approximate ? "GeluApproximate" : "GeluExact";
    RewriteCounts fired = Optimized(&g);
    EXPECT_EQ(fired["MatMul+BiasAdd+" + kind], 1u) << kind;
    const NodeDef* f = Find(g, "gelu");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->op, "_PdkFusedMatMul");
    EXPECT_EQ(f->StringAttr("activation", ""), kind);
    EXPECT_EQ(f->input, (std::vector<std::string>{"x", "w", "b"}));
    for (const auto& n : g.node)  // only Placeholders, Consts, the fused node and out remain
      EXPECT_TRUE(n.op == "Placeholder" || n.op == "Const" || n.name == "gelu" || n.name == "out")
          << n.name;
    const std::string once = SerializeGraphDef(g);
    EXPECT_TRUE(Optimized(&g).empty());
    EXPECT_EQ(SerializeGraphDef(g), once);
  }
}

TEST(FuseMatMul, GeluAsWrittenBeforeTensorFlowsPasses) {
  // tf.nn.gelu's own form: Mul(Mul(0.5, z), Erfc(Mul(Neg(z), c))) and
  // Mul(Mul(0.5, z), AddV2(1, Tanh(Mul(k, AddV2(z, Mul(cubic, Pow(z, 3))))))).
  GraphDef e = DenseRelu();
  e.node.resize(5);
  e.node.push_back(ConstNode("half", FloatScalar(0.5f)));
  e.node.push_back(ConstNode("c", FloatScalar(0.7071067811865476f)));
  e.node.push_back(Node("h", "Mul", {"half", "ba"}));
  e.node.push_back(Node("neg", "Neg", {"ba"}));
  e.node.push_back(Node("m1", "Mul", {"neg", "c"}));
  e.node.push_back(Node("erfc", "Erfc", {"m1"}));
  e.node.push_back(Node("gelu", "Mul", {"h", "erfc"}));
  e.node.push_back(Node("out", "Identity", {"gelu"}));
  EXPECT_EQ(Optimized(&e)["MatMul+BiasAdd+GeluExact"], 1u);

  GraphDef a = DenseRelu();
  a.node.resize(5);
  for (auto [name, v] : std::vector<std::pair<std::string, float>>{
           {"half", 0.5f}, {"one", 1.f}, {"cubic", 0.044715f}, {"k", 0.7978845608f}, {"three", 3.f}})
    a.node.push_back(ConstNode(name, FloatScalar(v)));
  a.node.push_back(Node("h", "Mul", {"half", "ba"}));
  a.node.push_back(Node("pow", "Pow", {"ba", "three"}));
  a.node.push_back(Node("cp", "Mul", {"cubic", "pow"}));
  a.node.push_back(Node("inner", "AddV2", {"ba", "cp"}));
  a.node.push_back(Node("scaled", "Mul", {"k", "inner"}));
  a.node.push_back(Node("tanh", "Tanh", {"scaled"}));
  a.node.push_back(Node("plus1", "AddV2", {"one", "tanh"}));
  a.node.push_back(Node("gelu", "Mul", {"h", "plus1"}));
  a.node.push_back(Node("out", "Identity", {"gelu"}));
  EXPECT_EQ(Optimized(&a)["MatMul+BiasAdd+GeluApproximate"], 1u);
}

TEST(FuseMatMul, GeluNotFusedWhenItsInsideIsReadElsewhere) {
  // Training graph: the gradient reads z and the Erfc output. MatMul+BiasAdd
  // still fuse; the Gelu subgraph stays.
  GraphDef g = DenseGelu(false);
  g.node.push_back(Node("grad_reads_erfc", "Mul", {"erfc", "out"}));
  RewriteCounts fired = Optimized(&g);
  EXPECT_EQ(fired.count("MatMul+BiasAdd+GeluExact"), 0u);
  EXPECT_EQ(fired["MatMul+BiasAdd"], 1u);
  EXPECT_EQ(Find(g, "gelu")->op, "Mul");
  EXPECT_EQ(Find(g, "erfc")->op, "Erfc");

  GraphDef p = DenseGelu(true);
  EXPECT_EQ(Optimized(&p, {"tanh"}).count("MatMul+BiasAdd+GeluApproximate"), 0u);

  GraphDef wrong = DenseGelu(true);  // a different constant: not Gelu
  for (auto& n : wrong.node)
    if (n.name == "cubic") n = ConstNode("cubic", FloatScalar(0.05f));
  EXPECT_EQ(Optimized(&wrong).count("MatMul+BiasAdd+GeluApproximate"), 0u);

  GraphDef cpu = DenseGelu(false);
  for (auto& n : cpu.node)
    if (n.name == "erfc") n.device = kCpu;
  EXPECT_EQ(Optimized(&cpu).count("MatMul+BiasAdd+GeluExact"), 0u);
}

// PDK_GRAPH_REWRITES=0 / PDK_GRAPH_DISABLE=<names> (read by OptimizeFunc into
// OptimizeOptions::disabled; the Python tests set the variables end to end).
TEST(Optimize, DisabledRewritesDoNotFire) {
  // With the MatMul fusion off, the elementwise fusion would take BiasAdd +
  // Relu (BiasAdd is one of its ops): both off leave the graph as it was.
  for (const std::unordered_set<std::string>& off :
       {std::unordered_set<std::string>{"all"},
        std::unordered_set<std::string>{"matmul_fusion", "elementwise_fusion"}}) {
    GraphDef g = DenseRelu();
    OptimizeOptions o;
    o.disabled = off;
    RewriteCounts fired;
    ASSERT_TRUE(Optimize(&g, o, &fired).ok());
    EXPECT_TRUE(fired.empty()) << *off.begin();
    ASSERT_NE(Find(g, "act"), nullptr) << *off.begin();
    EXPECT_EQ(Find(g, "act")->op, "Relu") << *off.begin();
    EXPECT_EQ(Optimized(&g)["MatMul+BiasAdd+Relu"], 1u) << *off.begin();
  }
  // matmul_fusion alone: no MatMul fusion; the MatMul stays.
  GraphDef g = DenseRelu();
  OptimizeOptions o;
  o.disabled = {"matmul_fusion"};
  RewriteCounts fired;
  ASSERT_TRUE(Optimize(&g, o, &fired).ok());
  for (const auto& [pattern, n] : fired) EXPECT_EQ(pattern.find("MatMul"), std::string::npos);
  ASSERT_NE(Find(g, "mm"), nullptr);
  EXPECT_EQ(Find(g, "mm")->op, "MatMul");
}

// ---- XLA requests on PDK (src/graph/rewrites/xla_must_compile.cc)

// A StatefulPartitionedCall of `function` with _XlaMustCompile=true on `device`;
// its "f" attribute serialized by protobuf (the reference codec).
NodeDef XlaCall(const std::string& name, const std::string& function,
                const std::string& device = kPdk) {
  NodeDef n = Node(name, "StatefulPartitionedCall", {"x"}, device);
  n.attr.erase("T");
  pdk::tfproto::AttrValue f;
  f.mutable_func()->set_name(function);
  n.attr["f"] = AttrValue::FromBytes(f.SerializeAsString());
  n.attr["_XlaMustCompile"] = AttrValue::Bool(true);
  n.attr["_XlaScope"] = AttrValue::String("cluster_0");
  return n;
}

TEST(XlaMustCompile, FuncNameDecodesAsProtobufWritesIt) {
  pdk::tfproto::AttrValue f;
  f.mutable_func()->set_name("__inference_step_12");
  (*f.mutable_func()->mutable_attr())["T"].set_type(pdk::tfproto::DT_FLOAT);
  std::string name;
  ASSERT_TRUE(AttrValue::FromBytes(f.SerializeAsString()).GetFuncName(&name));
  EXPECT_EQ(name, "__inference_step_12");
  EXPECT_FALSE(AttrValue::String("f").GetFuncName(&name));
}

TEST(XlaMustCompile, CallOnPdkRunsWithoutXla) {
  unsetenv("PDK_STRICT");
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), XlaCall("step", "__inference_one_step_on_data_123"),
            XlaCall("cpu_step", "__inference_other_7", kCpu)};
  EXPECT_EQ(Optimized(&g)["XlaMustCompile->PdkKernels"], 1u);
  const NodeDef* step = Find(g, "step");
  EXPECT_FALSE(step->BoolAttr("_XlaMustCompile", true));
  EXPECT_EQ(step->attr.count("_XlaScope"), 0u);
  EXPECT_EQ(step->attr.count("f"), 1u);
  // A call placed on the CPU keeps its XLA request (XLA has a CPU backend).
  EXPECT_TRUE(Find(g, "cpu_step")->BoolAttr("_XlaMustCompile", false));
  EXPECT_EQ(Optimized(&g).count("XlaMustCompile->PdkKernels"), 0u);  // idempotent
}

TEST(XlaMustCompile, StrictGuardsTheCallNamingTheFunction) {
  setenv("PDK_STRICT", "1", 1);
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), XlaCall("step", "__inference_one_step_on_data_123")};
  Optimized(&g);
  unsetenv("PDK_STRICT");
  const NodeDef* guard = Find(g, "step/_pdk_strict");
  ASSERT_NE(guard, nullptr);
  EXPECT_EQ(guard->op, "_PdkStrictFallback");
  EXPECT_EQ(guard->device, kCpu);
  std::string msg;
  ASSERT_TRUE(guard->attr.at("message").GetString(&msg));
  EXPECT_NE(msg.find("function 'one_step_on_data'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("asked for XLA (jit_compile=True)"), std::string::npos) << msg;
  EXPECT_EQ(Find(g, "step")->input.back(), "^step/_pdk_strict");
}

TEST(StrictPlacement, CpuDeviceOf) {
  EXPECT_EQ(CpuDeviceOf(kPdk), kCpu);
  EXPECT_EQ(CpuDeviceOf("/job:worker/replica:0/task:1/device:PDK:3"),
            "/job:worker/replica:0/task:1/device:CPU:0");
}

// ---- ResourceScatter* (src/graph/rewrites/resource_scatter.cc)

TEST(ResourceScatter, BecomesReadTensorScatterAssign) {
  GraphDef g;
  NodeDef var = Node("v", "_Arg", {});
  NodeDef idx = Node("i", "_Arg", {});
  NodeDef upd = Node("u", "_Arg", {});
  NodeDef sc = Node("sc", "ResourceScatterSub", {"v", "i", "u", "^dep"});
  sc.attr.erase("T");
  sc.attr["dtype"] = AttrValue::Type(DT_FLOAT);
  sc.attr["Tindices"] = AttrValue::Type(DT_INT64);
  NodeDef cpu = sc;
  cpu.name = "sc_cpu";
  cpu.device = kCpu;
  g.node = {var, idx, upd, Node("dep", "NoOp", {}), sc, cpu, Node("after", "NoOp", {"^sc"})};
  EXPECT_EQ(Optimized(&g)["ResourceScatterSub->TensorScatterSub"], 1u);
  const NodeDef* assign = Find(g, "sc");
  ASSERT_EQ(assign->op, "AssignVariableOp");
  EXPECT_EQ(assign->input, (std::vector<std::string>{"v", "sc/pdk_scatter/new"}));
  EXPECT_EQ(assign->TypeAttr("dtype"), DT_FLOAT);
  EXPECT_EQ(assign->attr.count("Tindices"), 0u);
  const NodeDef* read = Find(g, "sc/pdk_scatter/read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->op, "ReadVariableOp");
  EXPECT_EQ(read->input, (std::vector<std::string>{"v", "^dep"}));
  const NodeDef* ts = Find(g, "sc/pdk_scatter/new");
  ASSERT_NE(ts, nullptr);
  EXPECT_EQ(ts->op, "TensorScatterSub");
  EXPECT_EQ(ts->input, (std::vector<std::string>{"sc/pdk_scatter/read", "sc/pdk_scatter/indices",
                                                 "u"}));
  EXPECT_EQ(ts->TypeAttr("Tindices"), DT_INT64);
  const NodeDef* axis = Find(g, "sc/pdk_scatter/axis");
  ASSERT_NE(axis, nullptr);
  std::vector<int64_t> v, shape;
  ASSERT_TRUE(axis->attr.at("value").GetIntTensor(&v, &shape));
  EXPECT_EQ(v, std::vector<int64_t>{-1});
  EXPECT_TRUE(shape.empty());
  EXPECT_EQ(Find(g, "sc_cpu")->op, "ResourceScatterSub");  // the CPU has its kernel
  EXPECT_EQ(Optimized(&g).count("ResourceScatterSub->TensorScatterSub"), 0u);  // idempotent
}

TEST(ResourceScatter, Int32ScalarIsTheTensorProtobufWrites) {
  pdk::tfproto::AttrValue ref;
  ref.mutable_tensor()->set_dtype(pdk::tfproto::DT_INT32);
  ref.mutable_tensor()->mutable_tensor_shape();
  ref.mutable_tensor()->add_int_val(-1);
  pdk::tfproto::AttrValue mine;
  ASSERT_TRUE(mine.ParseFromString(AttrValue::Int32Scalar(-1).bytes()));
  EXPECT_EQ(mine.SerializeAsString(), ref.SerializeAsString());
}

// ---- PDK_STRICT (graph/strict_placement.h)

TEST(StrictPlacement, GuardsCpuComputeOpsOfGraphsOnPdk) {
  GraphDef g;
  g.node = {Node("x", "Placeholder", {}), Node("sq", "Square", {"x"}),
            Node("bi", "Betainc", {"sq", "sq", "sq"}, kCpu), Node("c", "Const", {}, kCpu),
            Node("s", "Shape", {"bi"}, kCpu), Node("out", "Sqrt", {"bi", "^c"})};
  EXPECT_EQ(EnforceStrictPlacement(&g, "PDK", false), 1);
  const NodeDef* guard = Find(g, "bi/_pdk_strict");
  ASSERT_NE(guard, nullptr);
  EXPECT_EQ(guard->op, "_PdkStrictFallback");
  EXPECT_EQ(guard->device, kCpu);
  // After the guarded node's first input: in the same while-loop frame.
  EXPECT_EQ(guard->input, std::vector<std::string>{"^sq"});
  std::string msg;
  ASSERT_TRUE(guard->attr.at("message").GetString(&msg));
  EXPECT_NE(msg.find("node 'bi' (op Betainc, T=float32) was placed on CPU"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("PDK registers no kernel for op Betainc"), std::string::npos) << msg;
  const NodeDef* bi = Find(g, "bi");
  ASSERT_EQ(bi->input.size(), 4u);
  EXPECT_EQ(bi->input.back(), "^bi/_pdk_strict");
  // An Identity of a CPU value on the CPU passes it on: not guarded.
  g.node.push_back(Node("cpu_in", "Placeholder", {}, kCpu));
  g.node.push_back(Node("fwd", "Identity", {"cpu_in", "^c"}, kCpu));
  g.node.push_back(Node("fwd_pdk", "Identity", {"sq"}, kCpu));     // a copy out of PDK: guarded
  g.node.push_back(Node("sw", "Switch", {"cpu_in", "sq"}, kCpu));  // predicate from PDK
  EXPECT_EQ(EnforceStrictPlacement(&g, "PDK", false), 1);
  EXPECT_EQ(Find(g, "fwd/_pdk_strict"), nullptr);
  EXPECT_EQ(Find(g, "sw/_pdk_strict"), nullptr);
  EXPECT_NE(Find(g, "fwd_pdk/_pdk_strict"), nullptr);
  // Reads and assignments of a variable living on the CPU run beside it (an
  // int32 variable: TensorFlow keeps those in host memory); an assignment
  // of a PDK variable's handle on the CPU is guarded.
  g.node.push_back(Node("host_var", "_Arg", {}, kCpu));
  g.node.push_back(Node("pdk_var", "_Arg", {}));
  g.node.push_back(Node("assign", "AssignVariableOp", {"host_var", "sq"}, kCpu));
  g.node.push_back(Node("read", "ReadVariableOp", {"host_var"}, kCpu));
  g.node.push_back(Node("add", "AssignAddVariableOp", {"host_var", "cpu_in"}, kCpu));
  g.node.push_back(Node("assign_pdk", "AssignVariableOp", {"pdk_var", "sq"}, kCpu));
  EXPECT_EQ(EnforceStrictPlacement(&g, "PDK", false), 1);
  EXPECT_EQ(Find(g, "assign/_pdk_strict"), nullptr);
  EXPECT_EQ(Find(g, "read/_pdk_strict"), nullptr);
  EXPECT_EQ(Find(g, "add/_pdk_strict"), nullptr);
  EXPECT_NE(Find(g, "assign_pdk/_pdk_strict"), nullptr);
  // Const and Shape are no compute ops; a second pass adds nothing.
  EXPECT_EQ(Find(g, "c/_pdk_strict"), nullptr);
  EXPECT_EQ(Find(g, "s/_pdk_strict"), nullptr);
  const size_t nodes = g.node.size();
  EXPECT_EQ(EnforceStrictPlacement(&g, "PDK", false), 0);
  EXPECT_EQ(g.node.size(), nodes);
}

// ------------------------------------------ asynchronous launches (_kernel label)

// Products on PDK in a loop body (after the Enter "frame" or the loop's
// Merge), one outside it and one on the CPU; what TensorFlow's shape
// inference gives (`inferred` below): "a", "b" float32 [64,64] (16 KiB), "x",
// "w" [512,512] (1 MiB), "u" unknown. Derived sizes: Relu(a); ConcatV2(a, b,
// axis 1) [64,128]; an element popped from a list whose handle went through
// a loop's Enter and Merge after a TensorListPushBack of a (a loop
// gradient's accumulator, which TensorFlow's inference leaves unknown).
TEST(AsyncLaunch, LabelsNodesWhoseInputsAreNotKnownToBeSmall) {
  GraphDef g;
  g.node = {Node("a", "Placeholder", {}), Node("b", "Placeholder", {}),
            Node("x", "Placeholder", {}), Node("w", "Placeholder", {}),
            Node("u", "Placeholder", {}), Node("axis", "Const", {}),
            Node("l0", "EmptyTensorList", {}),
            Node("push", "TensorListPushBack", {"l0", "a"}),
            Node("enter", "Enter", {"push"}),
            Node("merge", "Merge", {"enter", "next"}),
            Node("pop", "TensorListPopBack", {"merge", "axis"}),
            Node("next", "NextIteration", {"pop"}),
            Node("r", "Relu", {"a"}),
            Node("cat", "ConcatV2", {"a", "b", "axis"}),
            Node("small", "MatMul", {"a", "b", "^x", "^frame"}),
            Node("derived", "MatMul", {"r", "cat", "^frame"}),
            Node("popped", "MatMul", {"pop:1", "b"}),
            Node("big", "MatMul", {"x", "w", "^frame"}),
            Node("unknown", "BatchMatMulV2", {"a", "u", "^frame"}),
            Node("preset", "MatMul", {"x", "w"}),
            Node("cpu", "MatMul", {"x", "w"}, kCpu),
            Node("other", "AddV2", {"x", "w"}),
            Node("frame", "Enter", {"x"}),
            Node("outside", "MatMul", {"a", "b"})};
  g.node[5].attr["value"] = AttrValue::Int32Scalar(1);  // axis
  for (NodeDef& n : g.node)
    if (n.op == "MatMul" || n.op == "BatchMatMulV2") n.attr["T"] = AttrValue::Type(DT_FLOAT);
  // A dtype with no asynchronous registration (PDK_STRICT=1 places such
  // nodes on PDK too): never labeled.
  g.node.push_back(Node("complex", "MatMul", {"x", "w", "^frame"}));
  g.node.back().attr["T"] = AttrValue::Type(8);  // DT_COMPLEX64
  g.node[19].attr["_kernel"] = AttrValue::String("mine");
  OptimizeOptions o;
  o.disabled = {"all"};
  o.async.ops = {{"MatMul", {{{"T", DT_FLOAT}}}}, {"BatchMatMulV2", {{{"T", DT_FLOAT}}}}};
  o.async.min_bytes = 1 << 20;
  o.async.inferred = [](const TensorRef& ref, const std::string& op,
                        pdk::TensorProperties* out) {
    out->dtype = TF_FLOAT;
    out->unknown_rank = false;
    if (ref.node == "a" || ref.node == "b") out->dims = {64, 64};
    else if (ref.node == "x" || ref.node == "w") out->dims = {512, 512};
    else return false;
    return true;
  };
  RewriteCounts fired;
  ASSERT_TRUE(Optimize(&g, o, &fired).ok());
  auto label = [&](const char* name) {
    const NodeDef* n = Find(g, name);
    return n->attr.count("_kernel") ? n->StringAttr("_kernel", "") : std::string("(none)");
  };
  EXPECT_EQ(label("small"), "(none)");  // 32 KiB < 1 MiB: the synchronous kernel
  EXPECT_EQ(label("derived"), "(none)");  // 16 + 32 KiB
  EXPECT_EQ(label("popped"), "(none)");   // 16 + 16 KiB
  EXPECT_EQ(label("big"), "async");
  EXPECT_EQ(label("unknown"), "async");  // the launcher decides per launch
  EXPECT_EQ(label("preset"), "mine");
  EXPECT_EQ(label("cpu"), "(none)");
  EXPECT_EQ(label("other"), "(none)");
  // Small, but outside a loop body: independent small kernels overlap after
  // an asynchronous kernel's hand-off.
  EXPECT_EQ(label("outside"), "async");
  EXPECT_EQ(label("complex"), "(none)");
  EXPECT_EQ(fired["asynchronous launch"], 3u);
  EXPECT_EQ(fired["synchronous launch (inputs under PDK_ASYNC_MIN_BYTES)"], 3u);
  EXPECT_EQ(Find(g, "small")->StringAttr("_pdk_launch", ""), "sync");
  EXPECT_EQ(Find(g, "big")->StringAttr("_pdk_launch", ""), "async");
  // A decision is kept: a second pass (TensorFlow's, on the optimizer's own
  // output, where sizes behind fused nodes are unknown) changes nothing.
  o.async.inferred = nullptr;
  fired.clear();
  ASSERT_TRUE(Optimize(&g, o, &fired).ok());
  EXPECT_EQ(label("small"), "(none)");
  EXPECT_EQ(fired.count("asynchronous launch"), 0u);
  // Without a decision and without sizes, every product is asynchronous.
  for (NodeDef& n : g.node) n.attr.erase("_pdk_launch");
  fired.clear();
  ASSERT_TRUE(Optimize(&g, o, &fired).ok());
  EXPECT_EQ(label("popped"), "async");
  // No asynchronous registrations (PDK_ASYNC=0): nothing is labeled.
  for (NodeDef& n : g.node) {
    n.attr.erase("_kernel");
    n.attr.erase("_pdk_launch");
  }
  o.async.ops.clear();
  fired.clear();
  ASSERT_TRUE(Optimize(&g, o, &fired).ok());
  EXPECT_EQ(label("big"), "(none)");
  EXPECT_EQ(fired.count("asynchronous launch"), 0u);
}

TEST(StrictPlacement, LeavesGraphsWithoutPdkComputeOpsAlone) {
  GraphDef g;  // only an argument on PDK: the compute runs on the CPU
  g.node = {Node("x", "_Arg", {}), Node("bi", "Betainc", {"x", "x", "x"}, kCpu)};
  EXPECT_EQ(EnforceStrictPlacement(&g, "PDK", false), 0);
  EXPECT_EQ(g.node.size(), 2u);
}

TEST(StrictPlacement, ComputeOpList) {
  for (const char* op : {"_Arg", "_Retval", "Const", "NoOp", "Shape", "Size", "Rank",
                         "VarHandleOp", "IteratorGetNext", "TensorSliceDataset",
                         "OptionalHasValue", "_PdkStrictFallback"})
    EXPECT_FALSE(IsComputeOp(op)) << op;
  for (const char* op : {"MatMul", "Identity", "ReadVariableOp", "Betainc"})
    EXPECT_TRUE(IsComputeOp(op)) << op;
}

}  // namespace
}  // namespace pdk_graph
