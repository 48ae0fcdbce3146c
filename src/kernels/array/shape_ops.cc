// Shape, ShapeN, Size, Rank: metadata of the input(s), written to host-memory
// outputs, so a graph never copies a PDK tensor back to the CPU to read its
// shape. The input's data is never read (it may stay in device memory).
#include <cstdint>
#include <limits>

#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

// Writes `v` to element i of `out` (int32 or int64), checking int32 range.
pdk::Status Store(const pdk::Context& ctx, const pdk::Tensor& out, int64_t i, int64_t v,
                  const char* what) {
  if (out.dtype() == TF_INT32) {
    if (v > std::numeric_limits<int32_t>::max())
      return pdk::InvalidArgument(ctx.op(), ": ", what, " ", v,
                                  " does not fit the int32 out_type");
    out.data<int32_t>()[i] = static_cast<int32_t>(v);
  } else {
    out.data<int64_t>()[i] = v;
  }
  return pdk::Status::OK();
}

// Shape (one input) and ShapeN (N inputs): output i is input i's dims.
class ShapeOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(i));
      const int rank = x.rank();
      PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(i, pdk::Shape{rank}));
      for (int d = 0; d < rank; ++d)
        PDK_RETURN_IF_ERROR(Store(ctx, out, d, x.dim(d), "dimension"));
    }
    return pdk::Status::OK();
  }
};

class SizeOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape{}));
    return Store(ctx, out, 0, x.shape().num_elements(), "number of elements");
  }
};

class RankOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape{}));
    out.data<int32_t>()[0] = x.rank();
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(ShapeOps, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto o) {
                       for (const char* op : {"Shape", "ShapeN"})
                         r.Add(Int32OnHost<T>(pdk::KernelDef<ShapeOp>(op)
                                                  .Type("T", t)
                                                  .Type("out_type", o)
                                                  .HostMemory("output"),
                                              {"input"}));
                       r.Add(Int32OnHost<T>(pdk::KernelDef<SizeOp>("Size")
                                                .Type("T", t)
                                                .Type("out_type", o)
                                                .HostMemory("output"),
                                            {"input"}));
                     });
                     r.Add(Int32OnHost<T>(pdk::KernelDef<RankOp>("Rank").Type("T", t).HostMemory("output"),
                                          {"input"}));
                   });
}

}  // namespace pdk_kernels
