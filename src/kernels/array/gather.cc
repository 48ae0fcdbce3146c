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
#include <cstring>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

// "[1,2]": the multi-index of flat element `i` of `shape` ("" for a scalar).
std::string IndexString(const pdk::Shape& shape, int64_t i) {
  std::vector<int64_t> idx(shape.rank());
  for (int k = shape.rank() - 1; k >= 0; --k) {
    idx[k] = shape[k] ? i % shape[k] : 0;
    i = shape[k] ? i / shape[k] : 0;
  }
  if (idx.empty()) return "";
  return pdk::Shape(idx).ToString();
}

template <class Index>
class GatherV2Op {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.GetOptional("batch_dims", &batch_dims_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor params, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor indices, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor axis_t, ctx.input(2));
    const pdk::Shape ps = params.shape(), is = indices.shape();
    if (axis_t.rank() != 0)
      return pdk::InvalidArgument(ctx.op(), ": axis must be a scalar, got a tensor of shape ",
                                  axis_t.shape());
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> av, pdk::ReadIntVector(ctx.op(), "axis", axis_t));
    int64_t axis = av[0];
    int64_t bd = batch_dims_;
    if (bd < -is.rank() || bd > is.rank())
      return pdk::InvalidArgument(ctx.op(), ": expected batch_dims in the range [", -is.rank(),
                                  ", ", is.rank(), "] (the rank of indices, shape ", is,
                                  "), but got ", bd);
    if (bd < 0) bd += is.rank();
    if (axis < -ps.rank() || axis >= ps.rank())
      return pdk::InvalidArgument(ctx.op(), ": expected axis in the range [", -ps.rank(), ", ",
                                  ps.rank(), ") for params of shape ", ps, ", but got ", axis);
    if (axis < 0) axis += ps.rank();
    if (bd > axis)
      return pdk::InvalidArgument(ctx.op(), ": batch_dims (", bd,
                                  ") must be less than or equal to axis (", axis, ")");
    for (int k = 0; k < bd; ++k)
      if (ps[k] != is[k])
        return pdk::InvalidArgument(ctx.op(), ": params.shape[", k, "] (", ps[k],
                                    ") should be equal to indices.shape[", k, "] (", is[k],
                                    ") for batch_dims ", bd);

    std::vector<int64_t> out_dims(ps.dims().begin(), ps.dims().begin() + axis);
    out_dims.insert(out_dims.end(), is.dims().begin() + bd, is.dims().end());
    out_dims.insert(out_dims.end(), ps.dims().begin() + axis + 1, ps.dims().end());
    const pdk::Shape out_shape(out_dims);

    int64_t batch = 1, outer = 1, inner = 1, n = 1;
    for (int k = 0; k < bd; ++k) batch *= ps[k];
    for (int k = bd; k < axis; ++k) outer *= ps[k];
    for (int k = axis + 1; k < ps.rank(); ++k) inner *= ps[k];
    for (int k = bd; k < is.rank(); ++k) n *= is[k];
    const int64_t limit = ps[static_cast<int>(axis)];

    // Validate every index first: no partial output on error.
    const Index* idx = indices.data<Index>();
    const int64_t num_idx = indices.num_elements();
    for (int64_t i = 0; i < num_idx; ++i) {
      const int64_t v = static_cast<int64_t>(idx[i]);
      if (v < 0 || v >= limit)
        return pdk::InvalidArgument(ctx.op(), ": indices", IndexString(is, i), " = ", v,
                                    " is not in [0, ", limit, ")");
    }

    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    if (out_shape.num_elements() == 0) return pdk::Status::OK();
    const int64_t row = inner * static_cast<int64_t>(TF_DataTypeSize(params.dtype()));
    const char* src = static_cast<const char*>(params.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    // Output row r = ((b * outer) + o) * n + j  <-  params row ((b * outer + o) * limit + idx[b*n + j]).
    const int64_t rows = batch * outer * n;
    auto copy_rows = [&](Eigen::Index first, Eigen::Index last) {
      for (Eigen::Index r = first; r < last; ++r) {
        const int64_t j = r % n, bo = r / n, b = bo / outer;
        const int64_t v = static_cast<int64_t>(idx[b * n + j]);
        std::memcpy(dst + r * row, src + (bo * limit + v) * row, row);
      }
    };
    if (rows * row <= (64 << 10)) {
      copy_rows(0, rows);
    } else {
      pdk_compute::Device(ctx).parallelFor(rows, Eigen::TensorOpCost(row, row, 4), copy_rows);
    }
    return pdk::Status::OK();
  }

 private:
  int64_t batch_dims_ = 0;
};

}  // namespace

PDK_REGISTER_KERNELS(GatherV2, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     pdk::ForEachType(pdk::TypeList<int16_t, int32_t, int64_t>{}, [&](auto i) {
                       using Index = typename decltype(i)::type;
                       pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto a) {
                         r.Add(pdk::KernelDef<GatherV2Op<Index>>("GatherV2")
                                   .Type("Tparams", t)
                                   .Type("Tindices", i)
                                   .Type("Taxis", a)
                                   .HostMemory("axis"));
                       });
                     });
                   });
}

}  // namespace pdk_kernels
