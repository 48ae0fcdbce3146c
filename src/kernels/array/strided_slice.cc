// StridedSlice: NumPy-style basic slicing, input[begin:end:strides] with
// begin_mask, end_mask, ellipsis_mask, new_axis_mask and shrink_axis_mask.
//
// Inputs: input (any shape, T), begin/end/strides (1-D int32 or int64, same
// length, host memory). Output: the slice, with new axes inserted and shrunk
// axes removed. Semantics follow tensorflow/core/ops/array_ops.cc
// (StridedSlice) and tensorflow/core/util/strided_slice_op.cc: the sparse
// spec is expanded to one entry per input dimension (an ellipsis, explicit or
// implied at the end, covers the unmentioned dimensions); begin/end are
// wrapped (negative counts from the end) and clamped to [0, D] for positive
// strides, [-1, D-1] for negative ones; a shrunk index must lie in [-D, D).
// Errors: InvalidArgument for a zero stride, mismatched spec lengths, more than
// one ellipsis, or a shrunk index out of range.
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

struct DenseDim {
  int64_t begin = 0, end = 0, stride = 1;
  bool begin_masked = false, end_masked = false, shrink = false;
};

// Copies a strided N-D region of `elem`-byte elements.
void StridedCopy(const char* in, char* out, const std::vector<int64_t>& in_strides,
                 const std::vector<int64_t>& begin, const std::vector<int64_t>& step,
                 const std::vector<int64_t>& size, size_t elem, int d, int64_t in_off,
                 char*& cursor) {
  const int rank = static_cast<int>(size.size());
  if (d == rank) {
    std::memcpy(cursor, in + in_off * elem, elem);
    cursor += elem;
    return;
  }
  if (d == rank - 1 && step[d] == 1) {
    std::memcpy(cursor, in + (in_off + begin[d] * in_strides[d]) * elem, size[d] * elem);
    cursor += size[d] * elem;
    return;
  }
  for (int64_t i = 0; i < size[d]; ++i)
    StridedCopy(in, out, in_strides, begin, step, size, elem, d + 1,
                in_off + (begin[d] + i * step[d]) * in_strides[d], cursor);
}

class StridedSliceOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    PDK_RETURN_IF_ERROR(a.Get("begin_mask", &begin_mask_));
    PDK_RETURN_IF_ERROR(a.Get("end_mask", &end_mask_));
    PDK_RETURN_IF_ERROR(a.Get("ellipsis_mask", &ellipsis_mask_));
    PDK_RETURN_IF_ERROR(a.Get("new_axis_mask", &new_axis_mask_));
    return a.Get("shrink_axis_mask", &shrink_axis_mask_);
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor input, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor begin_t, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor end_t, ctx.input(2));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor strides_t, ctx.input(3));
    PDK_ASSIGN_OR_RETURN(auto begin, pdk::ReadIntVector(ctx.op(), "begin", begin_t));
    PDK_ASSIGN_OR_RETURN(auto end, pdk::ReadIntVector(ctx.op(), "end", end_t));
    PDK_ASSIGN_OR_RETURN(auto strides, pdk::ReadIntVector(ctx.op(), "strides", strides_t));
    if (begin.size() != end.size() || begin.size() != strides.size() || begin_t.rank() != 1)
      return pdk::InvalidArgument(ctx.op(), ": begin, end and strides must be 1-D of equal length, got ",
                                  begin_t.shape(), ", ", end_t.shape(), ", ", strides_t.shape());
    if ((ellipsis_mask_ & (ellipsis_mask_ - 1)) != 0)
      return pdk::InvalidArgument(ctx.op(), ": multiple ellipses in slice spec not allowed");

    const pdk::Shape in_shape = input.shape();
    const int rank = in_shape.rank();
    const int n = static_cast<int>(begin.size());
    // Dense dims consumed by explicit (non-ellipsis, non-new-axis) entries.
    int explicit_dims = 0;
    bool has_ellipsis = false;
    for (int i = 0; i < n; ++i) {
      if (ellipsis_mask_ & (1 << i)) has_ellipsis = true;
      else if (!(new_axis_mask_ & (1 << i))) ++explicit_dims;
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
      if (ellipsis_mask_ & (1 << i)) {
        const int cover = rank - explicit_dims;
        for (int k = 0; k < cover; ++k) full_dim();
      } else if (new_axis_mask_ & (1 << i)) {
        final_recipe.push_back(-1);
      } else {
        DenseDim d;
        d.begin = begin[i];
        d.end = end[i];
        d.stride = strides[i];
        d.begin_masked = begin_mask_ & (1 << i);
        d.end_masked = end_mask_ & (1 << i);
        d.shrink = shrink_axis_mask_ & (1 << i);
        if (!d.shrink) final_recipe.push_back(static_cast<int>(dense.size()));
        dense.push_back(d);
      }
    }
    if (!has_ellipsis)
      while (static_cast<int>(dense.size()) < rank) full_dim();
    if (static_cast<int>(dense.size()) != rank)
      return pdk::InvalidArgument(ctx.op(), ": slice spec of length ", n,
                                  " does not fit input of shape ", in_shape);

    std::vector<int64_t> b(rank), step(rank), size(rank);
    for (int k = 0; k < rank; ++k) {
      const DenseDim& d = dense[k];
      const int64_t D = in_shape[k];
      if (d.stride == 0) return pdk::InvalidArgument(ctx.op(), ": strides[", k, "] must be non-zero");
      if (d.shrink) {
        const int64_t idx = d.begin < 0 ? d.begin + D : d.begin;
        if (idx < 0 || idx >= D)
          return pdk::InvalidArgument(ctx.op(), ": slice index ", d.begin, " of dimension ", k,
                                      " out of bounds for input of shape ", in_shape);
        b[k] = idx;
        step[k] = 1;
        size[k] = 1;
        continue;
      }
      const bool pos = d.stride > 0;
      auto clamp = [&](int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : (x > hi ? hi : x); };
      auto canon = [&](int64_t x) { return x < 0 ? x + D : x; };
      const int64_t lo = pos ? 0 : -1, hi = pos ? D : D - 1;
      const int64_t bb = d.begin_masked ? (pos ? 0 : D - 1) : clamp(canon(d.begin), lo, hi);
      const int64_t ee = d.end_masked ? (pos ? D : -1) : clamp(canon(d.end), lo, hi);
      int64_t len = pos ? (ee - bb + d.stride - 1) / d.stride : (bb - ee - d.stride - 1) / (-d.stride);
      if (len < 0) len = 0;
      b[k] = bb;
      step[k] = d.stride;
      size[k] = len;
    }
    pdk::Shape out_shape;
    for (int r : final_recipe) out_shape.push_back(r < 0 ? 1 : size[r]);
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    if (out_shape.num_elements() == 0) return pdk::Status::OK();
    std::vector<int64_t> in_strides(rank, 1);
    for (int k = rank - 2; k >= 0; --k) in_strides[k] = in_strides[k + 1] * in_shape[k + 1];
    const size_t elem = TF_DataTypeSize(input.dtype());
    char* cursor = static_cast<char*>(out.raw_data());
    StridedCopy(static_cast<const char*>(input.raw_data()), cursor, in_strides, b, step, size, elem,
                0, 0, cursor);
    return pdk::Status::OK();
  }

 private:
  int64_t begin_mask_ = 0, end_mask_ = 0, ellipsis_mask_ = 0, new_axis_mask_ = 0,
          shrink_axis_mask_ = 0;
};

}  // namespace

PDK_REGISTER_KERNELS(StridedSlice, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                                 bool, uint8_t>{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       using Index = typename decltype(i)::type;
                       r.Add(pdk::KernelDef<StridedSliceOp>("StridedSlice")
                                 .Type("T", t)
                                 .Type("Index", i)
                                 .HostMemory("begin")
                                 .HostMemory("end")
                                 .HostMemory("strides"));
                     });
                   });
}

}  // namespace pdk_kernels
