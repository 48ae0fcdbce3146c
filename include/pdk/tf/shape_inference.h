// pdk/tf/shape_inference.h — TensorFlow's shape_inference::InferenceContext
// over TF_ShapeInferenceContext (tensorflow/c/ops.h).
//
//   REGISTER_OP("X") ... .SetShapeFn([](shape_inference::InferenceContext* c) {
//     ShapeHandle a;
//     TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &a));     // [M,K] or error
//     c->set_output(0, c->MakeShape({c->Dim(a, 0), 16}));       // [M,16]
//     return OkStatus();
//   });
//
// ShapeHandle and DimensionHandle are values (copyable; each owns its C
// handle, released with the last copy). A DimensionHandle is kept as a rank-1
// shape holding that dimension, so MakeShape, Merge and ReplaceDim keep
// unknown dimensions unknown: the C API can only build shapes by
// concatenation and sub-shapes. Static Rank/RankKnown/Value/ValueKnown work as
// in TensorFlow (a handle knows its context).
//
// What the C API does not offer: the values of constant input tensors
// (input_tensor), attrs other than types (GetAttr on a DataType only), the
// number of outputs. Error messages are TensorFlow's ("Shape must be rank 2
// but is rank 3", "Dimension 0 in both shapes must be equal, but are 2 and 3.
// Shapes are [2,3] and [3,3].").
#ifndef PDK_TF_SHAPE_INFERENCE_H_
#define PDK_TF_SHAPE_INFERENCE_H_

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "pdk/tf/status.h"
#include "pdk/tf/types.h"
#include "tensorflow/c/ops.h"

namespace tensorflow {
inline namespace pdk_kit {
namespace shape_inference {

class InferenceContext;

class ShapeHandle {
 public:
  ShapeHandle() = default;  // not set: an unknown shape where TensorFlow reads it
  bool IsSet() const { return h_ != nullptr; }
  TF_ShapeHandle* get() const { return h_.get(); }
  bool SameHandle(const ShapeHandle& o) const { return h_ == o.h_; }

 private:
  friend class InferenceContext;
  ShapeHandle(TF_ShapeInferenceContext* c, TF_ShapeHandle* h)
      : c_(c), h_(h, &TF_DeleteShapeHandle) {}
  TF_ShapeInferenceContext* c_ = nullptr;
  std::shared_ptr<TF_ShapeHandle> h_;
};

// One dimension: its value (-1: unknown) and a rank-1 shape holding it.
class DimensionHandle {
 public:
  DimensionHandle() = default;
  bool IsSet() const { return piece_.IsSet(); }

 private:
  friend class InferenceContext;
  DimensionHandle(ShapeHandle piece, int64 value) : piece_(std::move(piece)), value_(value) {}
  ShapeHandle piece_;
  int64 value_ = -1;
};

// A dimension or a constant size (-1: unknown), as MakeShape and Vector take.
struct DimensionOrConstant {
  DimensionOrConstant(DimensionHandle d) : dim(std::move(d)) {}  // NOLINT: implicit by design
  DimensionOrConstant(int64 v) : val(v) {}                         // NOLINT
  DimensionOrConstant(int v) : val(v) {}                           // NOLINT
  DimensionHandle dim;
  int64 val = -1;
};

class InferenceContext {
 public:
  static constexpr int64 kUnknownDim = -1;
  static constexpr int32 kUnknownRank = -1;

  explicit InferenceContext(TF_ShapeInferenceContext* c) : c_(c) {}

  int num_inputs() const { return static_cast<int>(TF_ShapeInferenceContextNumInputs(c_)); }

  // Input `idx`'s shape; an index out of range records InvalidArgument (the
  // shape function's result) and gives an unknown shape.
  ShapeHandle input(int64 idx) {
    ShapeHandle s = New();
    ::pdk::TFStatusPtr st = ::pdk::NewTFStatus();
    TF_ShapeInferenceContextGetInput(c_, static_cast<int>(idx), s.get(), st.get());
    if (TF_GetCode(st.get()) != TF_OK) {
      Record(Status::FromTF(st.get()));
      return UnknownShape();
    }
    return s;
  }

  void set_output(int idx, const ShapeHandle& s) {
    ::pdk::TFStatusPtr st = ::pdk::NewTFStatus();
    const ShapeHandle& out = s.IsSet() ? s : UnknownShape();
    TF_ShapeInferenceContextSetOutput(c_, idx, out.get(), st.get());
    if (TF_GetCode(st.get()) != TF_OK) Record(Status::FromTF(st.get()));
  }

  // ---- ranks and dimensions ----
  static int32 Rank(const ShapeHandle& s) {
    return RankKnown(s) ? static_cast<int32>(TF_ShapeInferenceContextRank(s.c_, s.get()))
                        : kUnknownRank;
  }
  static bool RankKnown(const ShapeHandle& s) {
    return s.IsSet() && TF_ShapeInferenceContextRankKnown(s.c_, s.get());
  }
  static int64 Value(const DimensionOrConstant& d) { return d.dim.IsSet() ? d.dim.value_ : d.val; }
  static bool ValueKnown(const DimensionOrConstant& d) { return Value(d) != kUnknownDim; }

  // Dimension `idx` of `s` (negative: from the end); unknown if the rank is.
  DimensionHandle Dim(const ShapeHandle& s, int64 idx) {
    if (!RankKnown(s)) return UnknownDim();
    const int64 r = Rank(s);
    const int64 i = idx < 0 ? idx + r : idx;
    if (i < 0 || i >= r) {
      Record(errors::InvalidArgument("Dimension index ", idx, " out of range for a shape of rank ",
                                     r, " (InferenceContext::Dim of ", DebugString(s), ")"));
      return UnknownDim();
    }
    ShapeHandle piece = New();
    ::pdk::TFStatusPtr st = ::pdk::NewTFStatus();
    TF_ShapeInferenceContextSubshape(c_, s.get(), i, i + 1, piece.get(), st.get());
    TF_DimensionHandle* d = TF_NewDimensionHandle();
    TF_ShapeInferenceContextDim(c_, s.get(), i, d);
    const int64 v = TF_DimensionHandleValueKnown(d) ? TF_DimensionHandleValue(d) : kUnknownDim;
    TF_DeleteDimensionHandle(d);
    return DimensionHandle(std::move(piece), v);
  }
  DimensionHandle DimKnownRank(const ShapeHandle& s, int64 idx) { return Dim(s, idx); }

  DimensionHandle UnknownDim() {
    ShapeHandle v;
    Check(WithRank(UnknownShape(), 1, &v));
    return DimensionHandle(v, kUnknownDim);
  }
  DimensionHandle MakeDim(const DimensionOrConstant& d) {
    if (d.dim.IsSet()) return d.dim;
    if (d.val < 0) return UnknownDim();
    return DimensionHandle(
        ShapeHandle(c_, TF_ShapeInferenceContextVectorFromSize(c_, static_cast<size_t>(d.val))),
        d.val);
  }

  // ---- making shapes ----
  ShapeHandle Scalar() { return ShapeHandle(c_, TF_ShapeInferenceContextScalar(c_)); }
  ShapeHandle Vector(const DimensionOrConstant& d) { return MakeShape({d}); }
  ShapeHandle Matrix(const DimensionOrConstant& d0, const DimensionOrConstant& d1) {
    return MakeShape({d0, d1});
  }
  ShapeHandle MakeShape(const std::vector<DimensionOrConstant>& dims) {
    ShapeHandle out = Scalar();
    for (const DimensionOrConstant& d : dims) Check(Concatenate(out, MakeDim(d).piece_, &out));
    return out;
  }
  ShapeHandle MakeShape(std::initializer_list<DimensionOrConstant> dims) {
    return MakeShape(std::vector<DimensionOrConstant>(dims));
  }
  // A shape of unknown rank (TensorFlow's Concatenate gives one when an
  // operand's rank is unknown, and an unset handle is of unknown rank).
  ShapeHandle UnknownShape() {
    ShapeHandle out = New();
    ::pdk::TFStatusPtr st = ::pdk::NewTFStatus();
    const ShapeHandle unset = New(), scalar = Scalar();
    TF_ShapeInferenceContextConcatenateShapes(c_, unset.get(), scalar.get(), out.get(), st.get());
    return out;
  }
  ShapeHandle UnknownShapeOfRank(int64 rank) {
    ShapeHandle out;
    Check(WithRank(UnknownShape(), rank, &out));
    return out;
  }

  // ---- checks and combinations (TensorFlow's semantics and messages) ----
  Status WithRank(const ShapeHandle& s, int64 rank, ShapeHandle* out) {
    return Unary(out, [&](TF_ShapeHandle* r, TF_Status* st) {
      TF_ShapeInferenceContextWithRank(c_, Set(s).get(), rank, r, st);
    });
  }
  Status WithRankAtLeast(const ShapeHandle& s, int64 rank, ShapeHandle* out) {
    return Unary(out, [&](TF_ShapeHandle* r, TF_Status* st) {
      TF_ShapeInferenceContextWithRankAtLeast(c_, Set(s).get(), rank, r, st);
    });
  }
  Status WithRankAtMost(const ShapeHandle& s, int64 rank, ShapeHandle* out) {
    return Unary(out, [&](TF_ShapeHandle* r, TF_Status* st) {
      TF_ShapeInferenceContextWithRankAtMost(c_, Set(s).get(), rank, r, st);
    });
  }
  // Dimensions [start, rank) or [start, end) of s (negative: from the end).
  Status Subshape(const ShapeHandle& s, int64 start, ShapeHandle* out) {
    return Subshape(s, start, std::numeric_limits<int64>::max(), out);
  }
  Status Subshape(const ShapeHandle& s, int64 start, int64 end, ShapeHandle* out) {
    return Unary(out, [&](TF_ShapeHandle* r, TF_Status* st) {
      TF_ShapeInferenceContextSubshape(c_, Set(s).get(), start, end, r, st);
    });
  }
  Status Concatenate(const ShapeHandle& a, const ShapeHandle& b, ShapeHandle* out) {
    return Unary(out, [&](TF_ShapeHandle* r, TF_Status* st) {
      TF_ShapeInferenceContextConcatenateShapes(c_, Set(a).get(), Set(b).get(), r, st);
    });
  }

  // The shape both a and b describe: unknown dimensions take the other's.
  Status Merge(const ShapeHandle& a, const ShapeHandle& b, ShapeHandle* out) {
    if (!RankKnown(b)) return (*out = Set(a)), Status();
    if (!RankKnown(a)) return (*out = b), Status();
    const int32 ra = Rank(a), rb = Rank(b);
    if (ra != rb)
      return errors::InvalidArgument("Shapes must be equal rank, but are ", ra, " and ", rb);
    std::vector<DimensionOrConstant> dims;
    for (int i = 0; i < ra; ++i) {
      DimensionHandle da = Dim(a, i), db = Dim(b, i);
      if (ValueKnown(da) && ValueKnown(db) && Value(da) != Value(db))
        return errors::InvalidArgument("Dimension ", i, " in both shapes must be equal, but are ",
                                       Value(da), " and ", Value(db), ". Shapes are ",
                                       DebugString(a), " and ", DebugString(b), ".");
      dims.emplace_back(ValueKnown(da) ? da : db);
    }
    *out = MakeShape(dims);
    return Status();
  }
  Status Merge(const DimensionHandle& a, const DimensionHandle& b, DimensionHandle* out) {
    if (ValueKnown(a) && ValueKnown(b) && Value(a) != Value(b))
      return errors::InvalidArgument("Dimensions must be equal, but are ", Value(a), " and ",
                                     Value(b));
    *out = ValueKnown(a) ? a : b;
    return Status();
  }
  // d if it equals `value` or is unknown (then `value`), else InvalidArgument.
  Status WithValue(const DimensionHandle& d, int64 value, DimensionHandle* out) {
    if (ValueKnown(d) && Value(d) != value)
      return errors::InvalidArgument("Dimension must be ", value, " but is ", Value(d));
    *out = MakeDim(value);
    return Status();
  }
  // s with dimension idx replaced by d.
  Status ReplaceDim(const ShapeHandle& s, int64 idx, const DimensionOrConstant& d,
                    ShapeHandle* out) {
    if (!RankKnown(s)) return (*out = UnknownShape()), Status();
    const int64 r = Rank(s), i = idx < 0 ? idx + r : idx;
    if (i < 0 || i >= r)
      return errors::InvalidArgument("Out of range dim_index ", idx, " for shape with ", r,
                                     " dimensions");
    std::vector<DimensionOrConstant> dims;
    for (int64 k = 0; k < r; ++k) dims.emplace_back(k == i ? MakeDim(d) : Dim(s, k));
    *out = MakeShape(dims);
    return Status();
  }

  // A type attr of the node (the only attr kind the C API gives a shape function).
  Status GetAttr(const char* name, DataType* value) const {
    ::pdk::TFStatusPtr st = ::pdk::NewTFStatus();
    TF_DataType t = TF_FLOAT;
    TF_ShapeInferenceContext_GetAttrType(c_, name, &t, st.get());
    if (TF_GetCode(st.get()) != TF_OK) return Status::FromTF(st.get());
    *value = static_cast<DataType>(t);
    return Status();
  }

  // "[2,?]"; "?" for an unknown rank.
  std::string DebugString(const ShapeHandle& s) {
    if (!RankKnown(s)) return "?";
    std::string out = "[";
    for (int i = 0, r = Rank(s); i < r; ++i) {
      if (i) out += ",";
      TF_DimensionHandle* d = TF_NewDimensionHandle();
      TF_ShapeInferenceContextDim(c_, s.get(), i, d);
      out += TF_DimensionHandleValueKnown(d) ? std::to_string(TF_DimensionHandleValue(d)) : "?";
      TF_DeleteDimensionHandle(d);
    }
    return out + "]";
  }

  // The first error a helper returning no Status met (input(), Dim(), ...);
  // the op's shape function fails with it if it returned OK itself.
  const Status& deferred_status() const { return deferred_; }
  TF_ShapeInferenceContext* raw() const { return c_; }

 private:
  ShapeHandle New() const { return ShapeHandle(c_, TF_NewShapeHandle()); }
  ShapeHandle Set(const ShapeHandle& s) { return s.IsSet() ? s : UnknownShape(); }
  template <class F>
  Status Unary(ShapeHandle* out, F&& f) {
    ShapeHandle r = New();
    ::pdk::TFStatusPtr st = ::pdk::NewTFStatus();
    f(r.get(), st.get());
    if (TF_GetCode(st.get()) != TF_OK) return Status::FromTF(st.get());
    *out = std::move(r);
    return Status();
  }
  void Record(const Status& s) {
    if (deferred_.ok()) deferred_ = s;
  }
  void Check(const Status& s) {
    if (!s.ok()) Record(s);
  }

  TF_ShapeInferenceContext* c_;
  Status deferred_;
};

}  // namespace shape_inference

using shape_inference::DimensionHandle;
using shape_inference::InferenceContext;
using shape_inference::ShapeHandle;

}  // namespace pdk_kit
}  // namespace tensorflow

#endif  // PDK_TF_SHAPE_INFERENCE_H_
