// pdk/tf/common_shape_fns.h — the shape functions of TensorFlow's
// tensorflow/core/framework/common_shape_fns.h that ops use most, over the
// kit's InferenceContext (pdk/tf/shape_inference.h):
//
//   UnknownShape(c)                    every output of unknown shape
//                                      (TF_ShapeInferenceContextSetUnknownShape)
//   UnchangedShape(c)                  output 0 = input 0
//   UnchangedShapeWithRank(c, r)       ... after WithRank(input 0, r)
//   UnchangedShapeWithRankAtLeast(c, r), UnchangedShapeWithRankAtMost(c, r)
//   ScalarShape(c)                     output 0 = []
//   NoOutputs(c)                       nothing
//   MergeBothInputsShapeFn(c)          output 0 = Merge(input 0, input 1)
//   BroadcastBinaryOpShapeFn(c)        output 0 = NumPy broadcast of inputs 0 and 1
//   BroadcastBinaryOpOutputShapeFn(c, i)  the same, as output i
//   MatMulShape(c)                     output 0 = [M, N] of a rank-2 product
//
// Semantics and error messages are TensorFlow's (common_shape_fns.cc): a
// broadcast of two known, different dimensions neither of which is 1 is
// InvalidArgument "Dimensions must be equal, but are 2 and 4" (TensorFlow's
// graph builder adds the node and its input shapes); a known 1 takes the
// other dimension; a known dimension > 1 against an unknown one is that
// dimension; two unknown ones stay unknown; an unknown rank gives an unknown
// shape. Where the C API cannot give what TensorFlow's version reads, the
// result is less known, never wrong: MatMulShape cannot read the bool attrs
// transpose_a / transpose_b in a shape function (the C API reads type attrs
// only), so it checks both ranks and returns [?, ?]. docs/kit.md lists this.
#ifndef PDK_TF_COMMON_SHAPE_FNS_H_
#define PDK_TF_COMMON_SHAPE_FNS_H_

#include <algorithm>
#include <vector>

#include "pdk/tf/shape_inference.h"
#include "pdk/tf/status.h"

namespace tensorflow {
inline namespace pdk_kit {
namespace shape_inference {

inline Status UnknownShape(InferenceContext* c) {
  ::pdk::TFStatusPtr st = ::pdk::NewTFStatus();
  TF_ShapeInferenceContextSetUnknownShape(c->raw(), st.get());
  return TF_GetCode(st.get()) == TF_OK ? Status() : Status::FromTF(st.get());
}

inline Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return c->deferred_status();
}

inline Status UnchangedShapeWithRank(InferenceContext* c, int32 rank) {
  ShapeHandle out;
  TF_RETURN_IF_ERROR(c->WithRank(c->input(0), rank, &out));
  c->set_output(0, out);
  return c->deferred_status();
}

inline Status UnchangedShapeWithRankAtLeast(InferenceContext* c, int32 rank) {
  ShapeHandle out;
  TF_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), rank, &out));
  c->set_output(0, out);
  return c->deferred_status();
}

inline Status UnchangedShapeWithRankAtMost(InferenceContext* c, int32 rank) {
  ShapeHandle out;
  TF_RETURN_IF_ERROR(c->WithRankAtMost(c->input(0), rank, &out));
  c->set_output(0, out);
  return c->deferred_status();
}

inline Status ScalarShape(InferenceContext* c) {
  c->set_output(0, c->Scalar());
  return c->deferred_status();
}

inline Status NoOutputs(InferenceContext*) { return Status(); }

inline Status MergeBothInputsShapeFn(InferenceContext* c) {
  ShapeHandle out;
  TF_RETURN_IF_ERROR(c->Merge(c->input(0), c->input(1), &out));
  c->set_output(0, out);
  return c->deferred_status();
}

inline Status BroadcastBinaryOpOutputShapeFn(InferenceContext* c, int output_index) {
  const ShapeHandle x = c->input(0), y = c->input(1);
  TF_RETURN_IF_ERROR(c->deferred_status());  // an input out of range
  if (!InferenceContext::RankKnown(x) || !InferenceContext::RankKnown(y)) {
    c->set_output(output_index, c->UnknownShape());
    return c->deferred_status();
  }
  const int32 rx = InferenceContext::Rank(x), ry = InferenceContext::Rank(y);
  const int32 rank = std::max(rx, ry);
  std::vector<DimensionOrConstant> dims;
  dims.reserve(rank);
  for (int32 i = 0; i < rank; ++i) {
    // Aligned from the right; a missing leading dimension acts as a known 1.
    const int32 ix = i - (rank - rx), iy = i - (rank - ry);
    const DimensionHandle dx = ix >= 0 ? c->Dim(x, ix) : c->MakeDim(1);
    const DimensionHandle dy = iy >= 0 ? c->Dim(y, iy) : c->MakeDim(1);
    const int64 vx = InferenceContext::Value(dx), vy = InferenceContext::Value(dy);
    const bool kx = InferenceContext::ValueKnown(dx), ky = InferenceContext::ValueKnown(dy);
    if (kx && ky) {
      if (vx != vy && vx != 1 && vy != 1) {  // TensorFlow merges them: its error
        DimensionHandle merged;
        TF_RETURN_IF_ERROR(c->Merge(dx, dy, &merged));
      }
      dims.emplace_back(vx == 1 ? dy : dx);
    } else if (kx) {
      dims.emplace_back(vx == 1 ? dy : dx);  // 1 vs ?: ?; n > 1 vs ?: n
    } else if (ky) {
      dims.emplace_back(vy == 1 ? dx : dy);
    } else {
      dims.emplace_back(c->UnknownDim());  // ? vs ?: unknown (either may be 1)
    }
  }
  c->set_output(output_index, c->MakeShape(dims));
  return c->deferred_status();
}

inline Status BroadcastBinaryOpShapeFn(InferenceContext* c) {
  return BroadcastBinaryOpOutputShapeFn(c, 0);
}

// a: [M, K] or [K, M], b: [K, N] or [N, K] (transpose attrs the C API cannot
// read in a shape function): both must be rank 2; the product is [?, ?].
inline Status MatMulShape(InferenceContext* c) {
  ShapeHandle a, b;
  TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &a));
  TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &b));
  c->set_output(0, c->Matrix(c->UnknownDim(), c->UnknownDim()));
  return c->deferred_status();
}

}  // namespace shape_inference
}  // namespace pdk_kit
}  // namespace tensorflow

#endif  // PDK_TF_COMMON_SHAPE_FNS_H_
