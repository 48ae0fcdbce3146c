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
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "kernels/array/scatter_types.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

enum class ScatterMode { kUpdate, kAdd, kSub, kMin, kMax };

template <class T, ScatterMode M>
inline void Apply(T* dst, const T* src, int64 n) {
  for (int64 j = 0; j < n; ++j) {
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
// stores each index row's element offset into it (K leading dimensions).
template <class Index>
Status RowOffsets(const std::string& op, const TensorShape& ts, const Tensor& indices,
                  const TensorShape& us, int64* slice, std::vector<int64>* offset) {
  const TensorShape& is = indices.shape();
  if (is.dims() < 1)
    return errors::InvalidArgument("Indices shape must have rank at least one. Found:", is,
                                   " (PDK ", op, ")");
  const int k = static_cast<int>(is.dim_size(is.dims() - 1));
  if (k > ts.dims())
    return errors::InvalidArgument(
        "Index innermost dimension length must be <= tensor rank; saw: ", k, " vs. ", ts.dims(),
        " (PDK ", op, ": indices.shape ", is, ", tensor.shape ", ts, ")");
  TensorShape want;
  for (int d = 0; d + 1 < is.dims(); ++d) want.AddDim(is.dim_size(d));
  for (int d = k; d < ts.dims(); ++d) want.AddDim(ts.dim_size(d));
  if (want != us)
    return errors::InvalidArgument(
        "Dimensions of updates must match indices.shape[:-1] + tensor.shape[K:] (PDK ", op,
        ": updates.shape ", us, ", indices.shape ", is, ", tensor.shape ", ts,
        ", expected updates.shape ", want, ")");
  const int64 rows = k ? indices.NumElements() / k : 0;
  *slice = 1;
  for (int d = k; d < ts.dims(); ++d) *slice *= ts.dim_size(d);
  std::vector<int64> stride(k, *slice);
  for (int d = k - 2; d >= 0; --d) stride[d] = stride[d + 1] * ts.dim_size(d + 1);
  const Index* idx = indices.flat<Index>().data();
  offset->assign(static_cast<size_t>(rows), 0);
  for (int64 i = 0; i < rows; ++i) {
    int64 off = 0;
    for (int d = 0; d < k; ++d) {
      const int64 v = static_cast<int64>(idx[i * k + d]);
      if (v < 0 || v >= ts.dim_size(d)) {
        std::string at = "[";
        for (int e = 0; e < k; ++e)
          at += (e ? "," : "") + std::to_string(static_cast<int64>(idx[i * k + e]));
        return errors::InvalidArgument("indices[", i, "] = ", at, "] does not index into shape ",
                                       ts, " (PDK ", op, ")");
      }
      off += v * stride[d];
    }
    (*offset)[i] = off;
  }
  return OkStatus();
}

// TensorScatter*(tensor, indices, updates).
template <class T, class Index, ScatterMode M>
class TensorScatterOp : public OpKernel {
 public:
  explicit TensorScatterOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tensor = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    const TensorShape& ts = tensor.shape();
    int64 slice = 0;
    std::vector<int64> offset;
    OP_REQUIRES_OK(ctx, RowOffsets<Index>(type_string(), ts, indices, updates.shape(), &slice,
                                          &offset));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, ts, &out));
    if (ts.num_elements() == 0) return;
    T* y = out->flat<T>().data();
    const T* x = tensor.flat<T>().data();
    if (y != x) std::memcpy(y, x, sizeof(T) * ts.num_elements());
    const T* u = updates.flat<T>().data();
    for (size_t i = 0; i < offset.size(); ++i) Apply<T, M>(y + offset[i], u + i * slice, slice);
  }
};

// ScatterNd(indices, updates, shape): TensorScatterAdd into zeros of `shape`
// (host memory, Tindices).
template <class T, class Index>
class ScatterNdOp : public OpKernel {
 public:
  explicit ScatterNdOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    const Tensor& shape_t = ctx->input(2);
    OP_REQUIRES(ctx, shape_t.dims() == 1,
                errors::InvalidArgument("Shape must be a vector (PDK ", op, ": shape.shape ",
                                        shape_t.shape(), ")"));
    // shape is of type Tindices (int32 or int64).
    const auto dims = shape_t.flat<Index>();
    const TensorShape ts(std::vector<int64>(dims.data(), dims.data() + dims.size()));
    OP_REQUIRES_OK(ctx, ::pdk::CheckShape(op, "output", 0, ts.pdk_shape()));
    int64 slice = 0;
    std::vector<int64> offset;
    OP_REQUIRES_OK(ctx, RowOffsets<Index>(op, ts, indices, updates.shape(), &slice, &offset));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, ts, &out));
    if (ts.num_elements() == 0) return;
    T* y = out->flat<T>().data();
    std::fill(y, y + ts.num_elements(), T(0));
    const T* u = updates.flat<T>().data();
    for (size_t i = 0; i < offset.size(); ++i)
      Apply<T, ScatterMode::kAdd>(y + offset[i], u + i * slice, slice);
  }
};

#define PDK_REGISTER_SCATTER_INDEX_(op, mode, T, Index)           \
  REGISTER_KERNEL_BUILDER(Name(op)                                \
                              .Device(DEVICE_PDK)                 \
                              .TypeConstraint<T>("T")             \
                              .TypeConstraint<Index>("Tindices"), \
                          TensorScatterOp<T, Index, ScatterMode::mode>)
#define PDK_REGISTER_SCATTER_(op, mode, T)         \
  PDK_REGISTER_SCATTER_INDEX_(op, mode, T, int32); \
  PDK_REGISTER_SCATTER_INDEX_(op, mode, T, int64)

static_assert(std::is_same_v<pdk_compute::DataMovementTypes,
                             ::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32,
                                             int64, bool, uint8, int8, int16>>,
              "the registrations below list pdk_compute::DataMovementTypes: update them");

// TensorScatterUpdate: the data-movement types (pdk_compute::DataMovementTypes).
#define PDK_REGISTER_SCATTER_UPDATE_(T) PDK_REGISTER_SCATTER_("TensorScatterUpdate", kUpdate, T)
PDK_REGISTER_SCATTER_UPDATE_(float);
PDK_REGISTER_SCATTER_UPDATE_(double);
PDK_REGISTER_SCATTER_UPDATE_(Eigen::half);
PDK_REGISTER_SCATTER_UPDATE_(Eigen::bfloat16);
PDK_REGISTER_SCATTER_UPDATE_(int32);
PDK_REGISTER_SCATTER_UPDATE_(int64);
PDK_REGISTER_SCATTER_UPDATE_(bool);
PDK_REGISTER_SCATTER_UPDATE_(uint8);
PDK_REGISTER_SCATTER_UPDATE_(int8);
PDK_REGISTER_SCATTER_UPDATE_(int16);
#undef PDK_REGISTER_SCATTER_UPDATE_

// The arithmetic ones: pdk_kernels::ScatterArithmeticTypes (scatter_types.h),
// which the ResourceScatter* kernels share; the list below is that one.
static_assert(std::is_same_v<::pdk_kernels::ScatterArithmeticTypes,
                             ::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32,
                                             int64>>,
              "tensor_scatter.cc registers ScatterArithmeticTypes: update the list below");
#define PDK_REGISTER_SCATTER_ARITHMETIC_(op, mode)  \
  PDK_REGISTER_SCATTER_(op, mode, float);           \
  PDK_REGISTER_SCATTER_(op, mode, double);          \
  PDK_REGISTER_SCATTER_(op, mode, Eigen::half);     \
  PDK_REGISTER_SCATTER_(op, mode, Eigen::bfloat16); \
  PDK_REGISTER_SCATTER_(op, mode, int32);           \
  PDK_REGISTER_SCATTER_(op, mode, int64)
PDK_REGISTER_SCATTER_ARITHMETIC_("TensorScatterAdd", kAdd);
PDK_REGISTER_SCATTER_ARITHMETIC_("TensorScatterSub", kSub);
PDK_REGISTER_SCATTER_ARITHMETIC_("TensorScatterMin", kMin);
PDK_REGISTER_SCATTER_ARITHMETIC_("TensorScatterMax", kMax);
#undef PDK_REGISTER_SCATTER_ARITHMETIC_
#undef PDK_REGISTER_SCATTER_
#undef PDK_REGISTER_SCATTER_INDEX_

// ScatterNd: bool too: repeated indices OR together (true + true stays true),
// as on TF's CPU; Keras builds masks with it.
#define PDK_REGISTER_SCATTER_ND_INDEX_(T, Index)                 \
  REGISTER_KERNEL_BUILDER(Name("ScatterNd")                      \
                              .Device(DEVICE_PDK)                \
                              .TypeConstraint<T>("T")            \
                              .TypeConstraint<Index>("Tindices") \
                              .HostMemory("shape"),              \
                          ScatterNdOp<T, Index>)
#define PDK_REGISTER_SCATTER_ND_(T)         \
  PDK_REGISTER_SCATTER_ND_INDEX_(T, int32); \
  PDK_REGISTER_SCATTER_ND_INDEX_(T, int64)
PDK_REGISTER_SCATTER_ND_(float);
PDK_REGISTER_SCATTER_ND_(double);
PDK_REGISTER_SCATTER_ND_(Eigen::half);
PDK_REGISTER_SCATTER_ND_(Eigen::bfloat16);
PDK_REGISTER_SCATTER_ND_(int32);
PDK_REGISTER_SCATTER_ND_(int64);
PDK_REGISTER_SCATTER_ND_(bool);
#undef PDK_REGISTER_SCATTER_ND_
#undef PDK_REGISTER_SCATTER_ND_INDEX_

}  // namespace
}  // namespace tensorflow
