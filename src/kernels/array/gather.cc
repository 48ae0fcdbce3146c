// GatherV2 and GatherNd.
//
// GatherV2(params, indices, axis; batch_dims): slices of params along axis.
//
// Inputs: params (rank >= 1, T), indices (any shape, Tindices int16/int32/
// int64), axis (scalar Taxis int32/int64, host memory). Attr batch_dims
// (negative counts from the rank of indices). With b = batch_dims:
//   output.shape = params.shape[:axis] + indices.shape[b:] + params.shape[axis+1:]
//   output[p0..p_{b-1}, o.., i.., n..] =
//       params[p0..p_{b-1}, o.., indices[p0..p_{b-1}, i..], n..]
// Semantics: tensorflow/core/ops/array_ops.cc (GatherV2) and
// tensorflow/core/kernels/gather_op.cc. Byte-level (dtype-agnostic) row
// copies split over the device's pool.
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8, int8,
// int16.
// Errors (InvalidArgument): axis not a scalar or not in [-rank, rank);
// batch_dims not in [-rank(indices), rank(indices)] or > axis; a batch
// dimension that differs between params and indices; an index outside
// [0, params.shape[axis]) ("indices[1,2] = 7 is not in [0, 5)", as TF's CPU
// kernel reports it).
// ResourceGather is not implemented: TensorFlow registers a DEVICE_DEFAULT
// ResourceGather for variant variables only, and the C API's variable access
// (TF_GetInputTensorFromVariable, kernels_experimental.h) is not exported by
// the tensorflow-cpu wheel.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// Outputs up to this size are copied on the calling thread. The copy is bound
// by memory: split over the pool it measured slower up to 4 MiB and faster
// from 32 MiB (2-vCPU VM, GatherV2 of float32 rows, kernel time from PDK's
// profiler, median of 100: 2560 rows of 256 B 23 us on one thread against
// 63 us split; 8192 of 512 B 115 against 146 us; 65536 of 512 B 2.19 against
// 1.56 ms).
constexpr int64 kInlineGatherBytes = int64{4} << 20;

// "[1,2]": the multi-index of flat element `i` of `shape` ("" for a scalar).
std::string IndexString(const TensorShape& shape, int64 i) {
  std::vector<int64> idx(shape.dims());
  for (int k = shape.dims() - 1; k >= 0; --k) {
    const int64 d = shape.dim_size(k);
    idx[k] = d ? i % d : 0;
    i = d ? i / d : 0;
  }
  if (idx.empty()) return "";
  return TensorShape(idx).DebugString();
}

template <class Index>
class GatherV2Op : public OpKernel {
 public:
  explicit GatherV2Op(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("batch_dims")) OP_REQUIRES_OK(c, c->GetAttr("batch_dims", &batch_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& axis_t = ctx->input(2);
    const TensorShape& ps = params.shape();
    const TensorShape& is = indices.shape();
    const std::string& op = type_string();
    // TensorFlow's checks in its order and wording (GatherOp, gather_op.cc);
    // PDK's detail in parentheses after.
    OP_REQUIRES(ctx, ps.dims() >= 1,
                errors::InvalidArgument("params must be at least 1 dimensional (", op,
                                        ": params of shape ", ps, ")"));
    OP_REQUIRES(ctx, axis_t.dims() == 0,
                errors::InvalidArgument("axis must be scalar (", op, ": axis of shape ",
                                        axis_t.shape(), ")"));
    int64 axis = 0;
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntScalar(op, "axis", axis_t, &axis));
    OP_REQUIRES(ctx, axis < std::numeric_limits<int64>::max(),
                errors::InvalidArgument(
                    "axis must be less than std::numeric_limits<int64_t>::max()"));
    // TensorFlow 2.21's CPU kernel negates this axis (undefined) and aborts;
    // later releases reject it with these words.
    OP_REQUIRES(ctx, axis > std::numeric_limits<int64>::min(),
                errors::InvalidArgument(
                    "axis must be greater than std::numeric_limits<int64_t>::min()"));
    const int64 min_params_dim = axis < 0 ? -axis : axis + 1;
    OP_REQUIRES(ctx, ps.dims() >= min_params_dim,
                errors::InvalidArgument("Shape must be at least rank ", min_params_dim,
                                        " but is rank ", ps.dims(), " (", op, ": axis ", axis,
                                        ", params of shape ", ps, ")"));
    if (axis < 0) axis += ps.dims();
    int64 bd = batch_dims_;
    if (bd != 0) {
      OP_REQUIRES(ctx, bd >= -is.dims() && bd <= is.dims(),
                  errors::InvalidArgument("Expected batch_dims in the range [", -is.dims(), ", ",
                                          is.dims(), "], but got ", bd, " (", op,
                                          ": indices of shape ", is, ")"));
      if (bd < 0) bd += is.dims();
      OP_REQUIRES(ctx, bd < ps.dims(),
                  errors::InvalidArgument("batch_dims (", bd, ") must be less than rank(params) (",
                                          ps.dims(), ")."));
      OP_REQUIRES(ctx, bd <= axis,
                  errors::InvalidArgument("batch_dims (", bd,
                                          ") must be less than or equal to axis (", axis, ")."));
      for (int k = 0; k < bd; ++k)
        OP_REQUIRES(ctx, ps.dim_size(k) == is.dim_size(k),
                    errors::InvalidArgument("params.shape[", k, "]: ", ps.dim_size(k),
                                            " should be equal to indices.shape[", k,
                                            "]: ", is.dim_size(k)));
    }
    OP_REQUIRES(ctx, ps.dim_size(static_cast<int>(axis)) <=
                         static_cast<int64>(std::numeric_limits<Index>::max()),
                errors::InvalidArgument("params.shape[", axis, "] too large for ",
                                        DataTypeString(DataTypeToEnum<Index>::value),
                                        " indexing: ", ps.dim_size(static_cast<int>(axis)), " > ",
                                        static_cast<int64>(std::numeric_limits<Index>::max())));

    TensorShape out_shape;
    for (int k = 0; k < axis; ++k) out_shape.AddDim(ps.dim_size(k));
    for (int k = bd; k < is.dims(); ++k) out_shape.AddDim(is.dim_size(k));
    for (int k = axis + 1; k < ps.dims(); ++k) out_shape.AddDim(ps.dim_size(k));

    int64 batch = 1, outer = 1, inner = 1, n = 1;
    for (int k = 0; k < bd; ++k) batch *= ps.dim_size(k);
    for (int k = bd; k < axis; ++k) outer *= ps.dim_size(k);
    for (int k = axis + 1; k < ps.dims(); ++k) inner *= ps.dim_size(k);
    for (int k = bd; k < is.dims(); ++k) n *= is.dim_size(k);
    const int64 limit = ps.dim_size(static_cast<int>(axis));

    // Validate every index first: no partial output on error. As TensorFlow's
    // CPU kernel, the indices are not read when the output has no elements
    // (no index, or empty slices: it returns before its bounds check).
    const auto idx = indices.flat<Index>();
    if (batch * outer * n > 0 && inner > 0) {
      for (int64 i = 0; i < idx.size(); ++i) {
        const int64 v = static_cast<int64>(idx(i));
        OP_REQUIRES(ctx, v >= 0 && v < limit,
                    errors::InvalidArgument("indices", IndexString(is, i), " = ", v,
                                            " is not in [0, ", limit, ")"));
      }
    }

    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out_shape.num_elements() == 0) return;
    const int64 row = inner * DataTypeSize(params.dtype());
    const char* src = static_cast<const char*>(params.data());
    char* dst = static_cast<char*>(out->data());
    // Output row r = ((b * outer) + o) * n + j  <-  params row ((b * outer + o) * limit + idx[b*n + j]).
    const int64 rows = batch * outer * n;
    auto copy_rows = [&](int64 first, int64 last) {
      for (int64 r = first; r < last; ++r) {
        const int64 j = r % n, bo = r / n, b = bo / outer;
        const int64 v = static_cast<int64>(idx(b * n + j));
        std::memcpy(dst + r * row, src + (bo * limit + v) * row, row);
      }
    };
    if (rows * row <= kInlineGatherBytes) {
      copy_rows(0, rows);
    } else {
      ctx->device()->tensorflow_cpu_worker_threads()->workers->ParallelFor(rows, row, copy_rows);
    }
  }

 private:
  int64 batch_dims_ = 0;
};

// GatherNd(params, indices; bad_indices_policy): slices of params addressed by
// the rows of indices.
//
// Inputs: params (rank >= 1, Tparams), indices (rank >= 1, Tindices int32 /
// int64) whose last dimension K <= rank(params):
//   output.shape = indices.shape[:-1] + params.shape[K:]
//   output[i.., s..] = params[indices[i.., 0], ..., indices[i.., K-1], s..]
// (K = 0: every row is all of params). Semantics and checks, in their order:
// tensorflow/core/ops/array_ops.cc (GatherNd) and DoGatherNd
// (tensorflow/core/kernels/gather_nd_op.h). bad_indices_policy "" / "DEFAULT"
// / "ERROR": an index row outside params is InvalidArgument "indices[1] = [4,
// 0] does not index into param shape [3,2], node name: ..." (the last such
// row, as TensorFlow's CPU kernel reports it run in order); "IGNORE": its
// output slice is zeros.
// Errors (InvalidArgument, TensorFlow's wording): params or indices of rank 0;
// K > rank(params) or K > 7; more than 2^31 - 1 index rows; params or a
// slice with more elements than Tindices counts; index rows into an empty
// params; an unknown bad_indices_policy.
template <class Index>
class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string policy;
    if (c->HasAttr("bad_indices_policy"))
      OP_REQUIRES_OK(c, c->GetAttr("bad_indices_policy", &policy));
    OP_REQUIRES(c, policy.empty() || policy == "DEFAULT" || policy == "ERROR" ||
                       policy == "IGNORE",
                errors::InvalidArgument("Unknown bad indices handling attribute: ", policy));
    ignore_bad_ = policy == "IGNORE";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const TensorShape& ps = params.shape();
    const TensorShape& is = indices.shape();
    OP_REQUIRES(ctx, ps.dims() >= 1, errors::InvalidArgument("params must be at least a vector"));
    OP_REQUIRES(ctx, is.dims() >= 1, errors::InvalidArgument("indices must be at least a vector"));
    const int64 k = is.dim_size(is.dims() - 1);
    OP_REQUIRES(ctx, k <= ps.dims(),
                errors::InvalidArgument(
                    "index innermost dimension length must be <= params rank; saw: ", k, " vs. ",
                    ps.dims()));
    TensorShape rows_shape;
    int64 rows = 1;
    for (int d = 0; d + 1 < is.dims(); ++d) {
      rows *= is.dim_size(d);
      rows_shape.AddDim(is.dim_size(d));
    }
    OP_REQUIRES(ctx, rows <= std::numeric_limits<int>::max(),
                errors::InvalidArgument("indices has too many elements for int indexing: ", rows,
                                        " > ", std::numeric_limits<int>::max()));
    constexpr int64 kIndexMax = std::numeric_limits<Index>::max();
    const char* index_name = sizeof(Index) == 4 ? "int32" : "int64";
    OP_REQUIRES(ctx, ps.num_elements() <= kIndexMax,
                errors::InvalidArgument("params.NumElements() too large for ", index_name,
                                        " indexing: ", ps.num_elements(), " > ", kIndexMax));
    TensorShape out_shape = rows_shape;
    int64 slice = 1;
    for (int d = static_cast<int>(k); d < ps.dims(); ++d) {
      slice *= ps.dim_size(d);
      out_shape.AddDim(ps.dim_size(d));
    }
    OP_REQUIRES(ctx, slice <= kIndexMax,
                errors::InvalidArgument("slice size is too large for indexing: ", slice, " > ",
                                        kIndexMax));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (rows == 0) return;
    OP_REQUIRES(ctx, ps.num_elements() > 0,
                errors::InvalidArgument("Requested more than 0 entries, but params is empty.  "
                                        "Params shape: ", ps.DebugString()));
    OP_REQUIRES(ctx, k <= 7,
                errors::InvalidArgument("Only indices.shape[-1] values between 1 and 7 are "
                                        "currently supported.  Requested rank: ", k));
    // Each row's offset in slices into params, or -1 outside it.
    const auto idx = indices.flat<Index>();
    std::vector<int64> offset(static_cast<size_t>(rows));
    int64 bad = -1;
    for (int64 r = 0; r < rows; ++r) {
      int64 off = 0;
      bool inside = true;
      for (int64 j = 0; j < k; ++j) {
        const int64 v = static_cast<int64>(idx(r * k + j));
        const int64 dim = ps.dim_size(static_cast<int>(j));
        inside = inside && v >= 0 && v < dim;
        off = off * dim + (inside ? v : 0);
      }
      offset[r] = inside ? off : -1;
      if (!inside) bad = r;
    }
    if (bad >= 0 && !ignore_bad_) {
      std::string row = "[";
      for (int64 j = 0; j < k; ++j)
        row += (j ? ", " : "") + std::to_string(static_cast<int64>(idx(bad * k + j)));
      ctx->CtxFailure(errors::InvalidArgument(
          "indices", IndexString(rows_shape, bad), " = ", row,
          "] does not index into param shape ", ps.DebugString(), ", node name: ", name()));
      return;
    }
    const int64 bytes = slice * DataTypeSize(params.dtype());
    const char* src = static_cast<const char*>(params.data());
    char* dst = static_cast<char*>(out->data());
    auto copy_rows = [&](int64 first, int64 last) {
      for (int64 r = first; r < last; ++r) {
        if (offset[r] >= 0) {
          std::memcpy(dst + r * bytes, src + offset[r] * bytes, bytes);
        } else {
          std::memset(dst + r * bytes, 0, bytes);  // IGNORE: zeros (T() of every type)
        }
      }
    };
    if (rows * bytes <= kInlineGatherBytes) {
      copy_rows(0, rows);
    } else {
      ctx->device()->tensorflow_cpu_worker_threads()->workers->ParallelFor(rows, bytes,
                                                                           copy_rows);
    }
  }

 private:
  bool ignore_bad_ = false;
};

// params: the data-movement types (pdk_compute::DataMovementTypes); indices
// int16/int32/int64; axis int32/int64 in host memory.
#define PDK_REGISTER_GATHER_(T, Index, Axis)                               \
  REGISTER_KERNEL_BUILDER(Name("GatherV2")                                 \
                              .Device(DEVICE_PDK)                          \
                              .TypeConstraint<T>("Tparams")                \
                              .TypeConstraint<Index>("Tindices")           \
                              .TypeConstraint<Axis>("Taxis")               \
                              .HostMemory("axis"),                         \
                          GatherV2Op<Index>)
#define PDK_REGISTER_GATHER_INDEX_(T, Index) \
  PDK_REGISTER_GATHER_(T, Index, int32);     \
  PDK_REGISTER_GATHER_(T, Index, int64)
#define PDK_REGISTER_GATHER_ND_(T, Index)                                  \
  REGISTER_KERNEL_BUILDER(Name("GatherNd")                                 \
                              .Device(DEVICE_PDK)                          \
                              .TypeConstraint<T>("Tparams")                \
                              .TypeConstraint<Index>("Tindices"),          \
                          GatherNdOp<Index>)
#define PDK_REGISTER_GATHER_ALL_(T)        \
  PDK_REGISTER_GATHER_INDEX_(T, int16);    \
  PDK_REGISTER_GATHER_INDEX_(T, int32);    \
  PDK_REGISTER_GATHER_INDEX_(T, int64);    \
  PDK_REGISTER_GATHER_ND_(T, int32);       \
  PDK_REGISTER_GATHER_ND_(T, int64)
PDK_REGISTER_GATHER_ALL_(float);
PDK_REGISTER_GATHER_ALL_(double);
PDK_REGISTER_GATHER_ALL_(Eigen::half);
PDK_REGISTER_GATHER_ALL_(Eigen::bfloat16);
PDK_REGISTER_GATHER_ALL_(int32);
PDK_REGISTER_GATHER_ALL_(int64);
PDK_REGISTER_GATHER_ALL_(bool);
PDK_REGISTER_GATHER_ALL_(uint8);
PDK_REGISTER_GATHER_ALL_(int8);
PDK_REGISTER_GATHER_ALL_(int16);
#undef PDK_REGISTER_GATHER_ALL_
#undef PDK_REGISTER_GATHER_ND_
#undef PDK_REGISTER_GATHER_INDEX_
#undef PDK_REGISTER_GATHER_

}  // namespace
}  // namespace tensorflow
