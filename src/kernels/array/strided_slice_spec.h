// The StridedSlice slice spec, shared by StridedSlice and StridedSliceGrad.
//
// Spec: begin/end/strides (1-D int32 or int64, equal length) plus the masks
// begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask.
// Semantics follow tensorflow/core/ops/array_ops.cc (StridedSlice) and
// tensorflow/core/util/strided_slice_op.cc: the sparse spec is expanded to one
// entry per input dimension (an ellipsis, explicit or implied at the end,
// covers the unmentioned dimensions); begin/end are wrapped (negative counts
// from the end) and clamped to [0, D] for positive strides, [-1, D-1] for
// negative ones; a shrunk index must lie in [-D, D).
// Errors (InvalidArgument), in TensorFlow's order and words
// (ValidateStridedSliceOp, tensorflow/core/util/strided_slice_op.cc), PDK's
// detail in parentheses after: begin, end or strides not 1-D, of different
// lengths or of 32 entries or more; more than one ellipsis; a spec with more
// dimensions than the input ("Index out of range using input dim ...",
// "Attempting to slice scalar input."); per dimension, a zero stride, a
// shrunk axis with a negative stride, a shrunk index out of range. Any int64 stride is exact (no overflow at 2^63 - 1 or -2^63).
#ifndef PDK_SRC_KERNELS_ARRAY_STRIDED_SLICE_SPEC_H_
#define PDK_SRC_KERNELS_ARRAY_STRIDED_SLICE_SPEC_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_kernels {

// The five mask attributes of StridedSlice / StridedSliceGrad.
struct StridedSliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;

  // Reads them at kernel construction; errors name the attribute.
  tensorflow::Status Init(tensorflow::OpKernelConstruction* c) {
    TF_RETURN_IF_ERROR(c->GetAttr("begin_mask", &begin));
    TF_RETURN_IF_ERROR(c->GetAttr("end_mask", &end));
    TF_RETURN_IF_ERROR(c->GetAttr("ellipsis_mask", &ellipsis));
    TF_RETURN_IF_ERROR(c->GetAttr("new_axis_mask", &new_axis));
    return c->GetAttr("shrink_axis_mask", &shrink_axis);
  }
};

// A resolved slice of an input of rank R: per input dimension k the first
// index begin[k], the step, and the number of elements taken size[k]; plus the
// op's output shape (new axes inserted, shrunk axes removed).
struct StridedSliceSpec {
  std::vector<int64_t> begin, step, size;
  pdk::Shape out_shape;
};

// Resolves begin/end/strides (host tensors) against an input of `in_shape`.
inline pdk::StatusOr<StridedSliceSpec> ResolveStridedSlice(
    const char* op, const pdk::Shape& in_shape, const tensorflow::Tensor& begin_t,
    const tensorflow::Tensor& end_t, const tensorflow::Tensor& strides_t,
    const StridedSliceMasks& m) {
  struct DenseDim {
    int64_t begin = 0, end = 0, stride = 1;
    bool begin_masked = false, end_masked = false, shrink = false;
  };
  PDK_ASSIGN_OR_RETURN(auto begin, ReadIntVector(op, "begin", begin_t));
  PDK_ASSIGN_OR_RETURN(auto end, ReadIntVector(op, "end", end_t));
  PDK_ASSIGN_OR_RETURN(auto strides, ReadIntVector(op, "strides", strides_t));
  if (begin_t.dims() != 1 || end_t.dims() != 1 || strides_t.dims() != 1 ||
      begin.size() != end.size() || begin.size() != strides.size() ||
      begin.size() >= 32 /* TensorFlow's 32-bit masks */)
    return pdk::InvalidArgument("Expected begin, end, and strides to be 1D equal size tensors, "
                                "but got shapes ", begin_t.shape(), ", ", end_t.shape(), ", and ",
                                strides_t.shape(), " instead. (", op, ")");
  if ((m.ellipsis & (m.ellipsis - 1)) != 0)
    return pdk::InvalidArgument("Multiple ellipses in slice spec not allowed (", op, ")");

  const int rank = in_shape.rank();
  const int n = static_cast<int>(begin.size());
  // Dense dims consumed by explicit (non-ellipsis, non-new-axis) entries.
  int explicit_dims = 0;
  bool has_ellipsis = false;
  for (int i = 0; i < n; ++i) {
    if (m.ellipsis & (1 << i)) has_ellipsis = true;
    else if (!(m.new_axis & (1 << i))) ++explicit_dims;
  }
  // final_recipe: >= 0 a dense dim index; -1 a new axis of size 1.
  std::vector<DenseDim> dense;
  std::vector<int> final_recipe;
  auto full_dim = [&]() {
    DenseDim d;
    d.begin_masked = d.end_masked = true;
    final_recipe.push_back(static_cast<int>(dense.size()));
    dense.push_back(d);
  };
  for (int i = 0; i < n; ++i) {
    if (m.ellipsis & (1 << i)) {
      const int cover = rank - explicit_dims;
      for (int k = 0; k < cover; ++k) full_dim();
    } else if (m.new_axis & (1 << i)) {
      final_recipe.push_back(-1);
    } else {
      DenseDim d;
      d.begin = begin[i];
      d.end = end[i];
      d.stride = strides[i];
      d.begin_masked = m.begin & (1 << i);
      d.end_masked = m.end & (1 << i);
      d.shrink = m.shrink_axis & (1 << i);
      if (!d.shrink) final_recipe.push_back(static_cast<int>(dense.size()));
      dense.push_back(d);
    }
  }
  if (!has_ellipsis)
    while (static_cast<int>(dense.size()) < rank) full_dim();
  // More dimensions in the spec than the input has: TensorFlow's words
  // (BuildDenseSpec, strided_slice_op.cc), which name the first dimension
  // past the input's rank.
  if (static_cast<int>(dense.size()) > rank) {
    if (rank == 0)
      return pdk::InvalidArgument("Attempting to slice scalar input. (", op, ": slice spec of ",
                                  "length ", n, ")");
    return pdk::InvalidArgument("Index out of range using input dim ", rank,
                                "; input has only ", rank, " dims (", op, ": slice spec of length ",
                                n, ", input of shape ", in_shape, ")");
  }

  StridedSliceSpec s;
  s.begin.resize(rank);
  s.step.resize(rank);
  s.size.resize(rank);
  for (int k = 0; k < rank; ++k) {
    const DenseDim& d = dense[k];
    const int64_t D = in_shape[k];
    if (d.stride == 0)
      return pdk::InvalidArgument("strides[", k, "] must be non-zero (", op, ")");
    if (d.shrink && d.stride < 0)
      return pdk::InvalidArgument("only stride 1 allowed on non-range indexing. (", op,
                                  ": strides[", k, "] = ", d.stride, ")");
    if (d.shrink) {
      const int64_t idx = d.begin < 0 ? d.begin + D : d.begin;
      if (idx < 0 || idx >= D)
        return pdk::InvalidArgument("slice index ", idx, " of dimension ", k,
                                    " out of bounds. (", op, ": input of shape ", in_shape, ")");
      s.begin[k] = idx;
      s.step[k] = 1;
      s.size[k] = 1;
      continue;
    }
    const bool pos = d.stride > 0;
    auto clamp = [&](int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : (x > hi ? hi : x); };
    auto canon = [&](int64_t x) { return x < 0 ? x + D : x; };
    const int64_t lo = pos ? 0 : -1, hi = pos ? D : D - 1;
    const int64_t bb = d.begin_masked ? (pos ? 0 : D - 1) : clamp(canon(d.begin), lo, hi);
    const int64_t ee = d.end_masked ? (pos ? D : -1) : clamp(canon(d.end), lo, hi);
    // ceil(distance / |stride|) in unsigned arithmetic: |stride| may be up to
    // 2^63 (int64 strides), so neither `distance + stride - 1` nor `-stride`
    // may be formed in int64.
    const int64_t dist = pos ? ee - bb : bb - ee;  // |dist| <= D + 1
    const uint64_t mag = pos ? uint64_t(d.stride) : uint64_t(0) - uint64_t(d.stride);
    const int64_t len = dist > 0 ? int64_t((uint64_t(dist) - 1) / mag + 1) : 0;
    s.begin[k] = bb;
    s.step[k] = d.stride;
    s.size[k] = len;
  }
  for (int r : final_recipe) s.out_shape.push_back(r < 0 ? 1 : s.size[r]);
  return s;
}

// Walks the strided N-D region of a row-major array with `in_strides` (in
// elements) given by `spec`, in row-major order of the region, calling
// fn(in_offset_in_elements, count) for runs of `count` contiguous elements.
template <class Fn>
void ForEachStridedRun(const std::vector<int64_t>& in_strides, const StridedSliceSpec& spec,
                       int d, int64_t in_off, Fn&& fn) {
  const int rank = static_cast<int>(spec.size.size());
  if (d == rank) return fn(in_off, int64_t{1});
  if (d == rank - 1 && spec.step[d] == 1)
    return fn(in_off + spec.begin[d] * in_strides[d], spec.size[d]);
  for (int64_t i = 0; i < spec.size[d]; ++i)
    ForEachStridedRun(in_strides, spec, d + 1,
                      in_off + (spec.begin[d] + i * spec.step[d]) * in_strides[d], fn);
}

// Row-major element strides of `shape`.
inline std::vector<int64_t> RowMajorStrides(const pdk::Shape& shape) {
  std::vector<int64_t> st(shape.rank(), 1);
  for (int k = shape.rank() - 2; k >= 0; --k) st[k] = st[k + 1] * shape[k + 1];
  return st;
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_ARRAY_STRIDED_SLICE_SPEC_H_
