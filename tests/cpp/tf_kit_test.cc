// Unit tests of the TF-style layer of the kit (include/pdk/tf): TensorShape,
// Tensor views and their type and rank checks, host tensors, buffer sharing,
// Status and errors:: (and absl::Status), CHECK/LOG that throw, the TF_CALL_*
// lists, Shard over the device pool, the NodeDef shape-attr reader. Kernels
// and ops in this style run against the real TensorFlow in
// tests/python/test_kit.py.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// A kit-owned host tensor of `dtype` and `dims` (TF_AllocateTensor).
Tensor HostTensor(DataType dtype, std::vector<int64> dims) {
  size_t n = 1;
  for (int64 d : dims) n *= static_cast<size_t>(d);
  TF_Tensor* t = TF_AllocateTensor(static_cast<TF_DataType>(dtype), dims.data(),
                                   static_cast<int>(dims.size()), n * DataTypeSize(dtype));
  return Tensor::Owning(::pdk::Tensor(t));
}

TEST(TfTypes, EnumsMatchTheCApi) {
  EXPECT_EQ(DataTypeToEnum<float>::value, DT_FLOAT);
  EXPECT_EQ(static_cast<int>(DataTypeToEnum<bfloat16>::value), TF_BFLOAT16);
  EXPECT_EQ(static_cast<int>(DataTypeToEnum<int64>::value), TF_INT64);
  EXPECT_EQ(DataTypeString(DT_HALF), "half");
  EXPECT_EQ(DataTypeSize(DT_DOUBLE), 8);
  static_assert(std::is_same_v<int64, std::int64_t>);
}

TEST(TfStatus, ErrorsConcatenateAndKeepTheirCode) {
  Status s = errors::InvalidArgument("Matrix size-incompatible: In[0]: ", TensorShape({2, 3}),
                                     ", In[1]: ", TensorShape({4, 5}));
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(s.message(), "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]");
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_EQ(errors::Unimplemented("x").code(), TF_UNIMPLEMENTED);
  EXPECT_TRUE(OkStatus().ok());
  auto twice = [](const Status& in) -> Status {
    TF_RETURN_IF_ERROR(in);
    return errors::Internal("reached");
  };
  EXPECT_EQ(twice(errors::NotFound("nf")).code(), TF_NOT_FOUND);
  EXPECT_EQ(twice(OkStatus()).message(), "reached");
}

TEST(TfTensorShape, EditsAndChecks) {
  TensorShape s({2, 3});
  EXPECT_EQ(s.dims(), 2);
  EXPECT_EQ(s.num_elements(), 6);
  s.AddDim(4);
  s.InsertDim(0, 5);
  EXPECT_EQ(s.DebugString(), "[5,2,3,4]");
  s.RemoveDim(1);
  s.set_dim(0, 7);
  EXPECT_EQ(s.DebugString(), "[7,3,4]");
  s.RemoveLastDims(2);
  EXPECT_EQ(s, TensorShape({7}));
  EXPECT_TRUE(TensorShapeUtils::IsVector(s));
  EXPECT_TRUE(TensorShapeUtils::IsScalar(TensorShape()));
  auto d = TensorShape({3, 4}).AsEigenDSizes<3>();
  EXPECT_EQ(d[0], 1);
  EXPECT_EQ(d[2], 4);

  TensorShape out;
  const std::vector<int32> good{2, 0, 3};
  EXPECT_TRUE(TensorShapeUtils::MakeShape(good, &out).ok());
  EXPECT_EQ(out.DebugString(), "[2,0,3]");
  const std::vector<int64> bad{2, -1};
  Status st = TensorShapeUtils::MakeShape(bad, &out);
  EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("Dimension -1 must be >= 0"), std::string::npos) << st.message();
}

TEST(TfTensor, ViewsReadAndWriteTheBuffer) {
  Tensor t = HostTensor(DT_FLOAT, {2, 3});
  EXPECT_TRUE(t.IsInitialized());
  EXPECT_EQ(t.dtype(), DT_FLOAT);
  EXPECT_EQ(t.TotalBytes(), 24u);
  auto f = t.flat<float>();
  for (int i = 0; i < 6; ++i) f(i) = static_cast<float>(i);
  EXPECT_EQ(t.matrix<float>()(1, 2), 5.0f);
  EXPECT_EQ((t.tensor<float, 2>()(1, 0)), 3.0f);
  EXPECT_EQ((t.shaped<float, 3>({3, 1, 2})(2, 0, 1)), 5.0f);
  const Tensor& c = t;
  EXPECT_EQ(c.flat_inner_dims<float>().dimension(0), 2);
  EXPECT_EQ((c.flat_inner_dims<float, 3>().dimension(0)), 1);
  EXPECT_EQ(c.flat_outer_dims<float>().dimension(1), 3);

  Tensor s = HostTensor(DT_INT32, {});
  s.scalar<int32>()() = 42;
  EXPECT_EQ(s.flat<int32>()(0), 42);
}

TEST(TfTensor, WrongTypeOrRankThrowsWithTensorFlowsWording) {
  Tensor t = HostTensor(DT_FLOAT, {2, 3});
  try {
    t.flat<int32>();
    FAIL() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("int32 expected, got float", 0), 0u) << e.what();
  }
  EXPECT_THROW(t.vec<float>(), std::logic_error);
  EXPECT_THROW(t.scalar<float>(), std::logic_error);
  EXPECT_THROW((t.shaped<float, 2>({4, 2})), std::logic_error);
  // The kit's trampolines turn the exception into an error of the op.
  ::pdk::Status st = ::pdk::GuardedCall("Relu", [&]() -> ::pdk::Status {
    t.matrix<double>();
    return ::pdk::Status();
  });
  EXPECT_EQ(st.code(), TF_INTERNAL);
  EXPECT_NE(st.message().find("double expected, got float"), std::string::npos);
}

TEST(TfTensor, AnUninitializedTensorThrowsInsteadOfReadingNull) {
  Tensor t;  // what an out-of-range ctx->input(i) gives
  EXPECT_THROW(t.scalar<float>(), std::logic_error);
  EXPECT_THROW(t.flat<float>(), std::logic_error);
}

TEST(TfTensor, HostTensorsAndTensorFlowsViews) {
  Tensor t(DT_INT32, TensorShape({2, 3, 4, 5}));
  EXPECT_EQ(t.NumElements(), 120);
  auto flat = t.flat<int32>();
  for (int i = 0; i < 120; ++i) flat(i) = i;
  EXPECT_EQ(t.SummarizeValue(3), "0 1 2...");
  EXPECT_EQ(t.tensor_data().size(), 480u);
  // flat_inner_outer_dims<T, 2>(1): dims [1, 3) kept, [0] folded into the
  // first, [3] into the last (TensorFlow's tensor.h).
  auto m = t.flat_inner_outer_dims<int32, 2>(1);
  EXPECT_EQ(m.dimension(0), 2 * 3);
  EXPECT_EQ(m.dimension(1), 4 * 5);
  // begin + N past the rank: dims [2, 6) of [2,3,4,5,1,1], [0, 2) folded in.
  auto p = t.flat_inner_outer_dims<int32, 4>(2);
  EXPECT_EQ(p.dimension(0), 2 * 3 * 4);
  EXPECT_EQ(p.dimension(1), 5);
  EXPECT_EQ(p.dimension(2), 1);
  EXPECT_EQ(p.dimension(3), 1);
  std::vector<int64_t> sizes = {10, 12};
  EXPECT_EQ((t.shaped<int32, 2>(sizes).dimension(1)), 12);
  Tensor shape_tensor(DT_INT64, TensorShape({2}));
  shape_tensor.flat<int64>()(0) = 7;
  shape_tensor.flat<int64>()(1) = 2;
  TensorShape made;
  ASSERT_TRUE(TensorShapeUtils::MakeShape(shape_tensor, &made).ok());
  EXPECT_EQ(made, TensorShape({7, 2}));
  EXPECT_TRUE(TensorShapeUtils::StartsWith(TensorShape({7, 2, 3}), made));
  EXPECT_FALSE(TensorShapeUtils::EndsWith(TensorShape({7, 2, 3}), made));
}

TEST(TfTensorShape, WithStatusEditsCheckLikeTensorFlow) {
  TensorShape s({2});
  EXPECT_TRUE(s.AddDimWithStatus(3).ok());
  EXPECT_EQ(s, TensorShape({2, 3}));
  EXPECT_EQ(s.AddDimWithStatus(-1).code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(s.AddDimWithStatus(int64{1} << 62).code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(s, TensorShape({2, 3}));  // unchanged by the failures
  EXPECT_TRUE(s.InsertDimWithStatus(0, 5).ok());
  EXPECT_EQ(s, TensorShape({5, 2, 3}));
}

TEST(TfStatus, ConvertsToAndFromAbslStatus) {
  const Status from_absl = absl::InvalidArgumentError("bad axis");
  EXPECT_EQ(from_absl.code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(from_absl.message(), "bad axis");
  const absl::Status to_absl = errors::OutOfRange("index ", 7);
  EXPECT_EQ(to_absl.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(to_absl.message(), "index 7");
  const absl::Status ok = Status();
  EXPECT_TRUE(ok.ok());
  auto absl_fn = []() -> absl::Status {
    TF_RETURN_IF_ERROR(errors::Internal("inner"));
    return absl::OkStatus();
  };
  EXPECT_EQ(absl_fn().message(), "inner");
  EXPECT_TRUE(Status(absl::OkStatus()).ok());
  EXPECT_EQ(Status(absl::NotFoundError("x")).code(), error::NOT_FOUND);
}

TEST(TfLogging, FailedChecksThrowInsteadOfAborting) {
  try {
    CHECK_EQ(2 + 2, 5) << "arithmetic";
    FAIL() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()), "Check failed: 2 + 2 == 5 (4 vs. 5) arithmetic");
  }
  EXPECT_THROW(CHECK(false), std::logic_error);
  EXPECT_THROW(TF_CHECK_OK(errors::Internal("x")), std::logic_error);
  EXPECT_THROW(LOG(FATAL) << "fatal", std::logic_error);
  CHECK(true) << "not evaluated";
  CHECK_LT(1, 2);
}

TEST(TfRegisterTypes, ListsFollowTensorFlow) {
  std::vector<DataType> seen;
#define PDK_TEST_PUSH_(T) seen.push_back(DataTypeToEnum<T>::value);
  TF_CALL_ALL_TYPES(PDK_TEST_PUSH_)
  EXPECT_EQ(seen.size(), 15u);  // 10 integer and float, 2 complex, bool, half, bfloat16
  seen.clear();
  TF_CALL_QUANTIZED_TYPES(PDK_TEST_PUSH_)
  EXPECT_EQ(seen, (std::vector<DataType>{DT_QINT8, DT_QUINT8, DT_QINT32}));
#undef PDK_TEST_PUSH_
}

TEST(TfTensor, CopyFromSharesTheBufferUnderANewShape) {
  Tensor t = HostTensor(DT_INT64, {2, 3});
  Tensor r;
  EXPECT_TRUE(r.CopyFrom(t, TensorShape({3, 2})));
  EXPECT_TRUE(r.SharesBufferWith(t));
  EXPECT_EQ(r.shape().DebugString(), "[3,2]");
  r.matrix<int64>()(2, 1) = 9;
  EXPECT_EQ(t.matrix<int64>()(1, 2), 9);
  Tensor untouched = HostTensor(DT_INT64, {1});
  EXPECT_FALSE(untouched.CopyFrom(t, TensorShape({4})));
  EXPECT_EQ(untouched.NumElements(), 1);
  EXPECT_FALSE(untouched.SharesBufferWith(t));
  // The buffer lives as long as any handle: t's owner is shared with r.
  t = Tensor();
  EXPECT_EQ(r.matrix<int64>()(2, 1), 9);
}

TEST(TfThreads, ShardCoversTheRangeOnce) {
  thread::ThreadPool pool(&::pdk::DeviceEigen(0));
  std::vector<std::atomic<int>> hits(1000);
  std::atomic<int> ranges{0};
  Shard(8, &pool, 1000, 100000, [&](int64 first, int64 last) {
    ranges++;
    for (int64 i = first; i < last; ++i) hits[i]++;
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_LE(ranges.load(), 8);
  ranges = 0;
  Shard(1, &pool, 1000, 100000, [&](int64 first, int64 last) {
    ranges++;
    EXPECT_EQ(first, 0);
    EXPECT_EQ(last, 1000);
  });
  EXPECT_EQ(ranges.load(), 1);
  std::atomic<int64> sum{0};
  pool.ParallelFor(100, 1000000, [&](int64 first, int64 last) {
    for (int64 i = first; i < last; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
}

// Hand-encoded NodeDef bytes: attr { key: "shape" value { shape { dim { size: 2 }
// dim { size: -1 } } } } and attr { key: "shapes" value { list { shape { dim
// { size: 3 } } shape { unknown_rank: true } } } }.
std::string Varint(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    s.push_back(static_cast<char>(b | (v ? 0x80 : 0)));
  } while (v);
  return s;
}
std::string Field(int field, const std::string& bytes) {
  return Varint((field << 3) | 2) + Varint(bytes.size()) + bytes;
}
std::string Dim(int64 size) { return Field(2, Varint(1 << 3) + Varint(static_cast<uint64_t>(size))); }

TEST(TfAttrs, NodeDefShapeReader) {
  const std::string shape = Field(7, Dim(2) + Dim(-1));
  const std::string list = Field(1, Field(7, Dim(3)) + Field(7, Varint(3 << 3) + Varint(1)));
  const std::string node = Field(1, "n") + Field(2, "Op") +
                           Field(5, Field(1, "shape") + Field(2, shape)) +
                           Field(5, Field(1, "shapes") + Field(2, list));
  // The kit's one NodeDef reader (pdk/graph_def.h), which GetAttr(TensorShape) uses.
  ::pdk::NodeDef n;
  ASSERT_TRUE(::pdk::ParseNodeDef(node.data(), node.size(), &n).ok());
  std::vector<int64_t> dims;
  bool unknown_rank = true;
  ASSERT_TRUE(n.attr.at("shape").GetShape(&dims, &unknown_rank));
  EXPECT_FALSE(unknown_rank);
  EXPECT_EQ(dims, (std::vector<int64_t>{2, -1}));
  std::vector<std::vector<int64_t>> shapes;
  EXPECT_FALSE(n.attr.at("shape").GetShapeList(&shapes));  // a shape, not a list
  std::vector<bool> unknown;
  ASSERT_TRUE(n.attr.at("shapes").GetShapeList(&shapes, &unknown));
  EXPECT_EQ(shapes, (std::vector<std::vector<int64_t>>{{3}, {}}));
  EXPECT_EQ(unknown, (std::vector<bool>{false, true}));
  // Without the flag an unknown rank is no shape.
  EXPECT_FALSE(n.attr.at("shapes").GetShapeList(&shapes));
  EXPECT_EQ(n.attr.count("missing"), 0u);
}

}  // namespace
}  // namespace tensorflow
