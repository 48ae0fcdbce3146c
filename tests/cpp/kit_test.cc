// Unit tests of the header-only kit (include/pdk): status values, shapes and
// their error messages, broadcasting, the NodeDef reader, dtype mapping and
// tensor ownership.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pdk/env.h"
#include "pdk/graph_optimizer.h"
#include "pdk/kernel.h"
#include "pdk/status.h"
#include "pdk/tensor.h"
#include "pdk/types.h"

namespace {

TEST(Status, OkAndErrorRoundTripThroughTFStatus) {
  EXPECT_TRUE(pdk::Status::OK().ok());
  pdk::Status e = pdk::InvalidArgument("MatMul: a.shape[1] (", 3, ") != b.shape[0] (", 4, ")");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "MatMul: a.shape[1] (3) != b.shape[0] (4)");
  pdk::TFStatusPtr s = pdk::NewTFStatus();
  e.ToTF(s.get());
  EXPECT_EQ(TF_GetCode(s.get()), TF_INVALID_ARGUMENT);
  pdk::Status back = pdk::Status::FromTF(s.get());
  EXPECT_EQ(back.code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(back.message(), e.message());
}

pdk::StatusOr<int> Half(int x) {
  if (x % 2) return pdk::InvalidArgument("odd: ", x);
  return x / 2;
}
pdk::Status UseHalf(int x, int* out) {
  PDK_ASSIGN_OR_RETURN(*out, Half(x));
  return pdk::Status::OK();
}

TEST(StatusOr, ValueOrErrorAndMacros) {
  int out = 0;
  EXPECT_TRUE(UseHalf(8, &out).ok());
  EXPECT_EQ(out, 4);
  pdk::Status s = UseHalf(7, &out);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(s.message(), "odd: 7");
  // An OK status is not a value: StatusOr turns it into an internal error.
  pdk::StatusOr<int> bad(pdk::Status::OK());
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), TF_INTERNAL);
}

TEST(GuardedCall, ExceptionsBecomeStatuses) {
  pdk::Status s = pdk::GuardedCall("here", []() -> pdk::Status { throw std::runtime_error("boom"); });
  EXPECT_EQ(s.code(), TF_INTERNAL);
  EXPECT_EQ(s.message(), "here: boom");
  s = pdk::GuardedCall("alloc", []() -> pdk::Status { throw std::bad_alloc(); });
  EXPECT_EQ(s.code(), TF_RESOURCE_EXHAUSTED);
}

TEST(Shape, BasicsAndToString) {
  pdk::Shape scalar;
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.num_elements(), 1);
  EXPECT_EQ(scalar.ToString(), "[]");
  pdk::Shape s{2, 0, 3};
  EXPECT_EQ(s.num_elements(), 0);
  EXPECT_EQ(s.dim(-1), 3);
  EXPECT_EQ(s.ToString(), "[2,0,3]");
}

// DimVector against std::vector doing the same operations, across the
// inline/heap boundary (kInline dimensions) in both directions.
TEST(DimVector, BehavesLikeAVectorInlineAndOnTheHeap) {
  for (size_t n : {size_t{0}, size_t{3}, pdk::DimVector::kInline, pdk::DimVector::kInline + 1,
                   size_t{40}}) {
    std::vector<int64_t> ref;
    pdk::DimVector v;
    for (size_t i = 0; i < n; ++i) {
      ref.push_back(static_cast<int64_t>(i * 7 + 1));
      v.push_back(static_cast<int64_t>(i * 7 + 1));
    }
    EXPECT_EQ(std::vector<int64_t>(v), ref) << n;
    ref.insert(ref.begin(), -1);
    v.insert(v.begin(), -1);
    ref.insert(ref.begin() + static_cast<long>(ref.size() / 2), {8, 9});
    const std::vector<int64_t> two{8, 9};
    v.insert(v.begin() + v.size() / 2, two.begin(), two.end());
    EXPECT_EQ(std::vector<int64_t>(v), ref) << n;
    ref.erase(ref.begin() + 1, ref.begin() + 3);
    v.erase(v.begin() + 1, v.begin() + 3);
    EXPECT_EQ(std::vector<int64_t>(v), ref) << n;

    pdk::DimVector copy(v);
    EXPECT_EQ(copy, v);
    pdk::DimVector moved(std::move(copy));
    EXPECT_EQ(std::vector<int64_t>(moved), ref);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    copy = moved;               // reuse after the move
    copy[0] = 42;
    EXPECT_NE(copy, moved);
    pdk::DimVector assigned{5};
    assigned = std::move(moved);
    EXPECT_EQ(std::vector<int64_t>(assigned), ref);
    moved = assigned;  // a moved-from vector is assignable
    EXPECT_EQ(moved, assigned);

    ref.resize(2, 3);
    assigned.resize(2, 3);
    EXPECT_EQ(std::vector<int64_t>(assigned), ref);
  }
  pdk::Shape big(pdk::DimVector(10, 2));
  EXPECT_EQ(big.num_elements(), 1024);
  pdk::Shape copy = big;
  copy[9] = 3;
  EXPECT_EQ(big.num_elements(), 1024);
  EXPECT_EQ(copy.num_elements(), 1536);
  EXPECT_EQ(pdk::Shape(std::vector<int64_t>{4, 5}), (pdk::Shape{4, 5}));
}

// The scratch status is reset to OK for each call and belongs to one thread.
TEST(ScratchTFStatus, ResetPerCallAndPerThread) {
  TF_Status* s = pdk::ScratchTFStatus();
  TF_SetStatus(s, TF_INVALID_ARGUMENT, "bad");
  TF_Status* again = pdk::ScratchTFStatus();
  EXPECT_EQ(again, s);
  EXPECT_EQ(TF_GetCode(again), TF_OK);
  TF_Status* other = nullptr;
  std::thread([&] { other = pdk::ScratchTFStatus(); }).join();
  EXPECT_NE(other, s);
}

TEST(ShapeChecks, MessagesNameOperandExpectedAndActual) {
  pdk::Status s = pdk::CheckDimsEqual("MatMul", "a", 1, 3, "b", 0, 4);
  EXPECT_EQ(s.message(), "MatMul: a.shape[1] (3) != b.shape[0] (4)");
  s = pdk::CheckRank("BiasAdd", "bias", pdk::Shape{2, 3}, 1);
  EXPECT_EQ(s.message(), "BiasAdd: bias must be rank 1, got shape [2,3]");
  s = pdk::CheckSameShape("ReluGrad", "gradients", pdk::Shape{2}, "features", pdk::Shape{3});
  EXPECT_EQ(s.message(), "ReluGrad: gradients.shape [2] != features.shape [3]");
  EXPECT_TRUE(pdk::CheckRankAtLeast("Softmax", "logits", pdk::Shape{1}, 1).ok());
}

TEST(ShapeChecks, AllocatableShapesAndTheOnesTensorFlowWouldAbortOn) {
  EXPECT_TRUE(pdk::CheckAllocatable("Tile", "output", 0, pdk::Shape{2, 3}, TF_FLOAT).ok());
  EXPECT_FALSE(pdk::CheckAllocatable("Tile", "output", 0, pdk::Shape{int64_t(1) << 61},
                                     TF_FLOAT).ok());  // 2^61 floats: 2^63 bytes
  EXPECT_TRUE(pdk::CheckAllocatable("Tile", "output", 0, pdk::Shape{0, int64_t(1) << 40},
                                    TF_FLOAT).ok());  // empty
  pdk::Status st =
      pdk::CheckAllocatable("Tile", "output", 0, pdk::Shape{4294967294, 6442450941}, TF_INT32);
  EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(st.message().rfind("Encountered overflow when multiplying 4294967294 with 6442450941",
                               0), 0u) << st.message();
  EXPECT_NE(st.message().find("(Tile: output 0 of shape [4294967294,6442450941])"),
            std::string::npos) << st.message();
  // The element count fits int64, the byte count does not: TensorFlow's
  // allocator refuses it as out of memory (ResourceExhausted, "OOM ...").
  st = pdk::CheckAllocatable("Empty", "output", 0, pdk::Shape{2147483647, 2147483647}, TF_FLOAT);
  EXPECT_EQ(st.code(), TF_RESOURCE_EXHAUSTED);
  EXPECT_EQ(st.message().rfind(
                "OOM when allocating tensor with shape[2147483647,2147483647] and type float32 "
                "(Empty: output 0: 4611686014132420609 elements of 4 bytes each overflow "
                "int64)", 0), 0u) << st.message();
  st = pdk::CheckAllocatable("Pad", "temp", -1, pdk::Shape{3, -1}, TF_FLOAT);
  EXPECT_EQ(st.message().rfind("Dimension -1 must be >= 0 (Pad: temp of shape [3,-1])", 0),
            0u) << st.message();
  st = pdk::CheckAllocatable("X", "output", 1, pdk::Shape(std::vector<int64_t>(255, 1)), TF_FLOAT);
  EXPECT_EQ(st.message().rfind("Shape has 255 dimensions which is over the limit of 254", 0), 0u);
}

// kit_test is compiled with PDK_CHECK_DTYPES=1 (tests/cpp/CMakeLists.txt), as
// a Debug build of a plugin is.
static_assert(PDK_CHECK_DTYPES, "kit_test checks typed access");

TEST(TensorAccess, CheckedDataAndBitsThrowOnAMismatchedType) {
  const int64_t dims[] = {2, 3};
  pdk::Tensor t(TF_AllocateTensor(TF_FLOAT, dims, 2, 6 * sizeof(float)));
  ASSERT_TRUE(t.valid());
  EXPECT_EQ(t.data<float>(), t.raw_data());
  EXPECT_EQ(t.data<const float>(), t.raw_data());
  EXPECT_EQ(t.bits<uint32_t>(), t.raw_data());  // same element size: a byte mover's view
  EXPECT_EQ(t.bits<int32_t>(), t.raw_data());
  try {
    t.data<int32_t>();
    ADD_FAILURE() << "data<int32_t>() of a float tensor did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "int32 expected, got float32 (data<T>() of a float32 tensor of "
                           "shape [2,3])");
  }
  EXPECT_THROW(t.data<double>(), std::logic_error);
  EXPECT_THROW(t.data<uint32_t>(), std::logic_error);  // same size, another dtype
  try {
    t.bits<uint16_t>();
    ADD_FAILURE() << "bits<uint16_t>() of a float tensor did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "2-byte elements expected, got 4-byte float32 (bits<T>() of a "
                           "float32 tensor of shape [2,3])");
  }
  // At the kit's C boundary the exception is the op's Internal error, not an abort.
  pdk::Status s = pdk::GuardedCall("MatMul", [&]() -> pdk::Status {
    t.data<int64_t>()[0] = 1;
    return pdk::Status::OK();
  });
  EXPECT_EQ(s.code(), TF_INTERNAL);
  EXPECT_EQ(s.message().rfind("MatMul: int64 expected, got float32", 0), 0u) << s.message();
  pdk::Tensor empty;
  EXPECT_THROW(empty.data<float>(), std::logic_error);
}

TEST(Env, IntAndFlagWarnAndFallBack) {
  setenv("PDK_TEST_INT", "abc", 1);
  EXPECT_EQ(pdk::env::Int("PDK_TEST_INT", 7, 0, 10), 7);
  setenv("PDK_TEST_INT", "12", 1);
  EXPECT_EQ(pdk::env::Int("PDK_TEST_INT", 7, 0, 10), 10);
  setenv("PDK_TEST_INT", "-1", 1);  // below the minimum: the default, like "abc"
  EXPECT_EQ(pdk::env::Int("PDK_TEST_INT", 7, 0, 10), 7);
  setenv("PDK_TEST_INT", "99999999999999999999999", 1);  // out of int64: above 10
  EXPECT_EQ(pdk::env::Int("PDK_TEST_INT", 7, 0, 10), 10);
  setenv("PDK_TEST_INT", "0", 1);
  EXPECT_EQ(pdk::env::Int("PDK_TEST_INT", 7, 0, 10), 0);
  setenv("PDK_TEST_INT", "3", 1);
  EXPECT_EQ(pdk::env::Int("PDK_TEST_INT", 7, 0, 10), 3);
  unsetenv("PDK_TEST_INT");
  EXPECT_EQ(pdk::env::Int("PDK_TEST_INT", 7, 0, 10), 7);
  for (const char* on : {"1", "true", "TRUE"}) {
    setenv("PDK_TEST_FLAG", on, 1);
    EXPECT_TRUE(pdk::env::Flag("PDK_TEST_FLAG", false)) << on;
  }
  for (const char* off : {"0", "false", "False"}) {
    setenv("PDK_TEST_FLAG", off, 1);
    EXPECT_FALSE(pdk::env::Flag("PDK_TEST_FLAG", true)) << off;
  }
  setenv("PDK_TEST_FLAG", "yes", 1);
  EXPECT_FALSE(pdk::env::Flag("PDK_TEST_FLAG", false));
  EXPECT_TRUE(pdk::env::Flag("PDK_TEST_FLAG", true));
  unsetenv("PDK_TEST_FLAG");
}

TEST(Broadcast, NumpyRules) {
  auto out = pdk::BroadcastShapes("AddV2", "x", pdk::Shape{3, 1}, "y", pdk::Shape{1, 4});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->ToString(), "[3,4]");
  out = pdk::BroadcastShapes("AddV2", "x", pdk::Shape{}, "y", pdk::Shape{2, 5});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->ToString(), "[2,5]");
  out = pdk::BroadcastShapes("AddV2", "x", pdk::Shape{2, 0}, "y", pdk::Shape{1});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->ToString(), "[2,0]");
  out = pdk::BroadcastShapes("AddV2", "x", pdk::Shape{2, 3}, "y", pdk::Shape{4});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), TF_INVALID_ARGUMENT);
  EXPECT_NE(out.status().message().find("[2,3]"), std::string::npos);
  EXPECT_NE(out.status().message().find("[4]"), std::string::npos);
}

TEST(Types, CompileTimeMapping) {
  static_assert(pdk::kDataType<float> == TF_FLOAT);
  static_assert(pdk::kDataType<int64_t> == TF_INT64);
  static_assert(pdk::kDataType<bool> == TF_BOOL);
  EXPECT_EQ(pdk::DataTypeName(TF_BFLOAT16), "bfloat16");
  int n = 0;
  pdk::ForEachType(pdk::TypeList<float, int32_t, bool>{}, [&](auto) { ++n; });
  EXPECT_EQ(n, 3);
}

TEST(NodeDefReader, ReadsOpFieldAndSurvivesGarbage) {
  // NodeDef{name: "dense/MatMul", op: "MatMul", input: "x"}: field 1, 2, 3 (wire type 2).
  std::string pb;
  auto field = [&](int f, const std::string& v) {
    pb += static_cast<char>((f << 3) | 2);
    pb += static_cast<char>(v.size());
    pb += v;
  };
  field(1, "dense/MatMul");
  field(2, "MatMul");
  field(3, "x");
  pdk::NodeDef node;  // what pdk::internal::OpTypeOf reads a kernel's op type with
  ASSERT_TRUE(pdk::ParseNodeDef(pb.data(), pb.size(), &node).ok());
  EXPECT_EQ(node.op, "MatMul");
  EXPECT_EQ(node.name, "dense/MatMul");
  // Truncated input or garbage: an error, no crash.
  EXPECT_FALSE(pdk::ParseNodeDef(pb.data(), 5, &node).ok());
  const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  EXPECT_FALSE(pdk::ParseNodeDef(junk, sizeof(junk), &node).ok());
}

TEST(Tensor, OwnsAndReleasesTheTFTensor) {
  const int64_t dims[] = {2, 3};
  TF_Tensor* raw = TF_AllocateTensor(TF_FLOAT, dims, 2, 6 * sizeof(float));
  pdk::Tensor t(raw);
  EXPECT_EQ(t.dtype(), TF_FLOAT);
  EXPECT_EQ(t.shape().ToString(), "[2,3]");
  EXPECT_EQ(t.num_elements(), 6);
  t.data<float>()[5] = 1.5f;
  pdk::Tensor moved(std::move(t));
  EXPECT_FALSE(t.valid());
  EXPECT_EQ(moved.data<float>()[5], 1.5f);
  auto v = pdk::ReadIntVector("Reshape", "shape", moved);
  EXPECT_FALSE(v.ok());  // float is not an index type
  EXPECT_NE(v.status().message().find("float32"), std::string::npos);
}

TEST(ReadIntVector, Int32AndInt64) {
  const int64_t dims[] = {3};
  pdk::Tensor t32(TF_AllocateTensor(TF_INT32, dims, 1, 3 * sizeof(int32_t)));
  for (int i = 0; i < 3; ++i) t32.data<int32_t>()[i] = i - 1;
  auto v = pdk::ReadIntVector("Sum", "reduction_indices", t32);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int64_t>{-1, 0, 1}));
}

}  // namespace

#if defined(__GLIBCXX__)
// The done-callback copy (kernel.h, "asynchronous kernels"): TensorFlow hands
// compute_async_func the address of a std::function<void()> that dies when
// the call returns; the copy must call the same target after that.
TEST(AsyncKernels, DoneCallbackCopyOutlivesTheOriginal) {
  int calls = 0;
  auto shared = std::make_shared<int>(7);  // a capture with a destructor
  std::function<void()> copy;
  {
    std::function<void()> original = [&calls, shared] { calls += *shared; };
    copy = pdk::CopyDoneCallback(reinterpret_cast<TF_AsyncOpKernelDoneCallback*>(&original));
    EXPECT_EQ(shared.use_count(), 3);  // the copy holds its own capture
  }
  EXPECT_EQ(shared.use_count(), 2);
  copy();
  EXPECT_EQ(calls, 7);
  copy = nullptr;
  EXPECT_EQ(shared.use_count(), 1);
}
#endif

TEST(GraphProperties, TensorBytesOnlyWhenEverythingIsKnown) {
  EXPECT_EQ((pdk::TensorProperties{TF_FLOAT, {32, 64}, false}).bytes(), 32 * 64 * 4);
  EXPECT_EQ((pdk::TensorProperties{TF_BFLOAT16, {}, false}).bytes(), 2);  // a scalar
  EXPECT_EQ((pdk::TensorProperties{TF_FLOAT, {-1, 64}, false}).bytes(), -1);
  EXPECT_EQ((pdk::TensorProperties{TF_FLOAT, {}, true}).bytes(), -1);     // unknown rank
  EXPECT_EQ((pdk::TensorProperties{TF_STRING, {4}, false}).bytes(), -1);  // no fixed size
  EXPECT_EQ(pdk::TensorProperties{}.bytes(), -1);
  // Without a GrapplerItem (an optimizer called directly) there is nothing to infer.
  std::unique_ptr<pdk::GraphProperties> props;
  pdk::OptimizerContext ctx;
  const pdk::Status st = pdk::GraphProperties::Infer(ctx, &props);
  EXPECT_EQ(st.code(), TF_FAILED_PRECONDITION);
  EXPECT_EQ(props, nullptr);
}

TEST(AsyncKernels, RegisterSynchronouslyWithoutALauncher) {
  struct K {
    pdk::Status Compute(pdk::Context&) const { return pdk::Status::OK(); }
  };
  ASSERT_EQ(pdk::AsyncLauncherSlot().load(), nullptr);
  EXPECT_FALSE(pdk::KernelDef<K>("X").Async().registers_async());
  static const pdk::AsyncLauncher launcher{[](TF_OpKernelContext*) { return false; },
                                           [](pdk::AsyncWork w) { w(); }};
  pdk::AsyncLauncherSlot().store(&launcher);
  EXPECT_EQ(pdk::KernelDef<K>("X").Async().registers_async(), pdk::kAsyncDoneCopy);
  EXPECT_FALSE(pdk::KernelDef<K>("X").registers_async());
  pdk::AsyncLauncherSlot().store(nullptr);
}
