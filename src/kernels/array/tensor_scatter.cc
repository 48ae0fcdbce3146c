// TensorScatterUpdate, TensorScatterAdd, TensorScatterSub, TensorScatterMin,
// TensorScatterMax, and ScatterNd (= TensorScatterAdd into zeros of `shape`,
// a host int vector; IndexedSlices made dense emit it) (tensorflow/core/ops/
// array_ops.cc; semantics of tensorflow/core/kernels/scatter_nd_op.cc):
//
//   output = tensor, then for each index row i of indices [..., K]:
//     output[indices[i], ...] (op)= updates[i, ...]
//   tensor: any shape of rank >= K; indices: Tindices int32/int64, rank >= 1,
//   last dimension K; updates: indices.shape[:-1] + tensor.shape[K:].
//   Rows are applied in order, so repeated indices accumulate (Add, Sub, Min,
//   Max) and the last one wins (Update).
// Dtypes: Update every data-movement type; Add, Sub, Min, Max float32/64,
// float16, bfloat16, int32, int64 (16-bit floats round each step, as TF's CPU
// kernel does).
// Errors (InvalidArgument, TensorFlow's wording first): indices of rank 0;
// K > rank(tensor); updates of another shape; an index outside the tensor
// ("indices[1] = [7] does not index into shape [4,3]").
// The output reuses the tensor's buffer when TensorFlow can forward it.
// PDK's graph optimizer also emits these ops for the ResourceScatter* ops
// (src/graph/rewrites/resource_scatter.cc).
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "kernels/array/scatter_types.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

enum class ScatterMode { kUpdate, kAdd, kSub, kMin, kMax };

template <class T, ScatterMode M>
inline void Apply(T* dst, const T* src, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    if constexpr (M == ScatterMode::kUpdate) dst[j] = src[j];
    if constexpr (M == ScatterMode::kAdd) {
      if constexpr (std::is_same_v<T, bool>) dst[j] = dst[j] || src[j];
      else dst[j] = dst[j] + src[j];
    }
    if constexpr (M == ScatterMode::kSub) dst[j] = dst[j] - src[j];
    if constexpr (M == ScatterMode::kMin) dst[j] = src[j] < dst[j] ? src[j] : dst[j];
    if constexpr (M == ScatterMode::kMax) dst[j] = dst[j] < src[j] ? src[j] : dst[j];
  }
}

// Checks indices [..., K] and updates against a tensor of shape `ts` and
// returns each index row's element offset into it (K leading dimensions).
template <class Index>
pdk::StatusOr<std::vector<int64_t>> RowOffsets(const char* op, const pdk::Shape& ts,
                                               const pdk::Tensor& indices,
                                               const pdk::Shape& us, int64_t* slice) {
  const pdk::Shape is = indices.shape();
  if (is.rank() < 1)
    return pdk::InvalidArgument("Indices shape must have rank at least one. Found:", is,
                                " (PDK ", op, ")");
  const int k = static_cast<int>(is[is.rank() - 1]);
  if (k > ts.rank())
    return pdk::InvalidArgument("Index innermost dimension length must be <= tensor rank; saw: ",
                                k, " vs. ", ts.rank(), " (PDK ", op, ": indices.shape ", is,
                                ", tensor.shape ", ts, ")");
  std::vector<int64_t> want(is.dims().begin(), is.dims().end() - 1);
  want.insert(want.end(), ts.dims().begin() + k, ts.dims().end());
  if (pdk::Shape(want) != us)
    return pdk::InvalidArgument(
        "Dimensions of updates must match indices.shape[:-1] + tensor.shape[K:] (PDK ", op,
        ": updates.shape ", us, ", indices.shape ", is, ", tensor.shape ", ts,
        ", expected updates.shape ", pdk::Shape(want), ")");
  const int64_t rows = k ? indices.num_elements() / k : 0;
  *slice = 1;
  for (int d = k; d < ts.rank(); ++d) *slice *= ts[d];
  std::vector<int64_t> stride(k, *slice);
  for (int d = k - 2; d >= 0; --d) stride[d] = stride[d + 1] * ts[d + 1];
  const Index* idx = indices.data<Index>();
  std::vector<int64_t> offset(rows);
  for (int64_t i = 0; i < rows; ++i) {
    int64_t off = 0;
    for (int d = 0; d < k; ++d) {
      const int64_t v = static_cast<int64_t>(idx[i * k + d]);
      if (v < 0 || v >= ts[d]) {
        std::string at = "[";
        for (int e = 0; e < k; ++e)
          at += (e ? "," : "") + std::to_string(static_cast<int64_t>(idx[i * k + e]));
        return pdk::InvalidArgument("indices[", i, "] = ", at, "] does not index into shape ",
                                    ts, " (PDK ", op, ")");
      }
      off += v * stride[d];
    }
    offset[i] = off;
  }
  return offset;
}

// TensorScatter*(tensor, indices, updates).
template <class T, class Index, ScatterMode M>
class TensorScatterOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor tensor, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor indices, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor updates, ctx.input(2));
    const pdk::Shape ts = tensor.shape();
    int64_t slice = 0;
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> offset,
                         RowOffsets<Index>(ctx.op(), ts, indices, updates.shape(), &slice));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.forward_or_allocate_output({0}, 0, ts));
    if (ts.num_elements() == 0) return pdk::Status::OK();
    T* y = out.data<T>();
    const T* x = tensor.data<T>();
    if (y != x) std::memcpy(y, x, sizeof(T) * ts.num_elements());
    const T* u = updates.data<T>();
    for (size_t i = 0; i < offset.size(); ++i) Apply<T, M>(y + offset[i], u + i * slice, slice);
    return pdk::Status::OK();
  }
};

// ScatterNd(indices, updates, shape): TensorScatterAdd into zeros of `shape`
// (host memory, Tindices).
template <class T, class Index>
class ScatterNdOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor indices, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor updates, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor shape_t, ctx.input(2));
    if (shape_t.rank() != 1)
      return pdk::InvalidArgument("Shape must be a vector (PDK ", ctx.op(), ": shape.shape ",
                                  shape_t.shape(), ")");
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         pdk::ReadIntVector(ctx.op(), "shape", shape_t));
    const pdk::Shape ts(dims);
    PDK_RETURN_IF_ERROR(pdk::CheckShape(ctx.op(), "output", 0, ts));
    int64_t slice = 0;
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> offset,
                         RowOffsets<Index>(ctx.op(), ts, indices, updates.shape(), &slice));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, ts));
    if (ts.num_elements() == 0) return pdk::Status::OK();
    T* y = out.data<T>();
    std::fill(y, y + ts.num_elements(), T(0));
    const T* u = updates.data<T>();
    for (size_t i = 0; i < offset.size(); ++i)
      Apply<T, ScatterMode::kAdd>(y + offset[i], u + i * slice, slice);
    return pdk::Status::OK();
  }
};

template <ScatterMode M, class Types>
void RegisterScatter(pdk::Registrar& r, const char* op, Types types) {
  pdk::ForEachType(types, [&](auto t) {
    using T = typename decltype(t)::type;
    pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
      using Index = typename decltype(i)::type;
      r.Add(pdk::KernelDef<TensorScatterOp<T, Index, M>>(op).Type("T", t).Type("Tindices", i));
    });
  });
}

}  // namespace

PDK_REGISTER_KERNELS(TensorScatter, r) {
  RegisterScatter<ScatterMode::kUpdate>(r, "TensorScatterUpdate",
                                        pdk_compute::DataMovementTypes{});
  RegisterScatter<ScatterMode::kAdd>(r, "TensorScatterAdd", ScatterArithmeticTypes{});
  RegisterScatter<ScatterMode::kSub>(r, "TensorScatterSub", ScatterArithmeticTypes{});
  RegisterScatter<ScatterMode::kMin>(r, "TensorScatterMin", ScatterArithmeticTypes{});
  RegisterScatter<ScatterMode::kMax>(r, "TensorScatterMax", ScatterArithmeticTypes{});
  // bool: repeated indices OR together (true + true stays true), as on TF's CPU;
  // Keras builds masks with it.
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                                 bool>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
      using Index = typename decltype(i)::type;
      r.Add(pdk::KernelDef<ScatterNdOp<T, Index>>("ScatterNd")
                .Type("T", t)
                .Type("Tindices", i)
                .HostMemory("shape"));
    });
  });
}

}  // namespace pdk_kernels
