// ConcatV2(values..., axis): byte-level row copies (dtype-agnostic: the
// element size comes from the dtype), split over the device's thread pool.
#include <algorithm>
#include <cstring>
#include <vector>

#include "compute/copy.h"
#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

using pdk_compute::CopyStreams;
using pdk_compute::Stream;

class ConcatV2Op {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    const int n = ctx.num_inputs() - 1;
    PDK_ASSIGN_OR_RETURN(pdk::Tensor axis_t, ctx.input(n));
    // A scalar, or a vector of one element (TensorFlow's ConcatBaseOp accepts both).
    if (axis_t.rank() > 1 || (axis_t.rank() == 1 && axis_t.num_elements() != 1))
      return pdk::InvalidArgument("axis tensor should be a scalar integer, but got shape ",
                                  axis_t.shape(), " (", ctx.op(), ")");
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> av, pdk::ReadIntVector(ctx.op(), "axis", axis_t));

    std::vector<pdk::Tensor> values;
    std::vector<pdk::Shape> shapes;
    values.reserve(n);
    for (int i = 0; i < n; ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor v, ctx.input(i));
      shapes.push_back(v.shape());
      values.push_back(std::move(v));
    }
    const pdk::Shape& s0 = shapes[0];
    const int rank = s0.rank();
    int64_t axis = av[0];
    if (axis < -rank || axis >= rank)
      return pdk::InvalidArgument(ctx.op(), ": axis ", axis, " is out of range [", -rank, ", ",
                                  rank, ") for values[0] of shape ", s0,
                                  rank == 0 ? " (scalars cannot be concatenated; use stack)" : "");
    if (axis < 0) axis += rank;

    std::vector<int64_t> out_dims = s0.dims();
    out_dims[axis] = 0;
    for (int i = 0; i < n; ++i) {
      const pdk::Shape& si = shapes[i];
      if (si.rank() != rank)
        return pdk::InvalidArgument(ctx.op(), ": all values must have the same rank: values[0]",
                                    ".shape ", s0, " vs values[", i, "].shape ", si);
      for (int d = 0; d < rank; ++d)
        if (d != axis && si[d] != s0[d])
          return pdk::InvalidArgument(ctx.op(), ": values[0].shape ", s0, " and values[", i,
                                      "].shape ", si, " differ in dimension ", d, " (", s0[d],
                                      " vs ", si[d], "); only axis ", axis, " may differ");
      out_dims[axis] += si[axis];
    }
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape(out_dims)));
    if (out.num_elements() == 0) return pdk::Status::OK();

    const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(ctx.output_dtype(0)));
    int64_t outer = 1, inner = elem;  // inner: bytes per unit of the concat axis
    for (int d = 0; d < axis; ++d) outer *= out_dims[d];
    for (int d = axis + 1; d < rank; ++d) inner *= out_dims[d];
    const int64_t out_row = out_dims[axis] * inner;
    std::vector<Stream> streams;
    int64_t offset = 0;
    char* dst = static_cast<char*>(out.raw_data());
    for (int i = 0; i < n; ++i) {
      const int64_t row = shapes[i][axis] * inner;
      if (row == 0) continue;  // empty input: contributes nothing
      streams.push_back({dst + offset, out_row, static_cast<const char*>(values[i].raw_data()),
                         row, row});
      offset += row;
    }
    CopyStreams(pdk_compute::Device(ctx), outer, streams);
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(ConcatV2, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       r.Add(Int32OnHost<T>(pdk::KernelDef<ConcatV2Op>("ConcatV2")
                                                .Type("T", t)
                                                .Type("Tidx", i)
                                                .HostMemory("axis"),
                                            {"values", "output"}));
                     });
                   });
}

}  // namespace pdk_kernels
