// BroadcastTo: output = input repeated to `shape` (NumPy broadcasting: input's
// dimensions, aligned at the end, must each equal the target's or be 1).
//
// input, output: T in float32, float64, int32, int64, bool.
// shape: Tidx (int32 or int64) vector in host memory.
// Errors (InvalidArgument): `shape` not a vector, negative target dimensions,
// input of higher rank than the target, or an input dimension that is neither
// 1 nor the target's (the message names both shapes). An input already of the
// target shape is returned without a copy.
#include <cstdint>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

template <class T>
class BroadcastToOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    const char* op = ctx.op();
    PDK_ASSIGN_OR_RETURN(pdk::Tensor input, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor shape_t, ctx.input(1));
    PDK_RETURN_IF_ERROR(pdk::CheckRank(op, "shape", shape_t.shape(), 1));
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> dims, pdk::ReadIntVector(op, "shape", shape_t));
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] < 0)
        return pdk::InvalidArgument(op, ": shape[", i, "] is ", dims[i],
                                    "; dimensions must be >= 0");
    const pdk::Shape target(std::move(dims));
    const pdk::Shape in_shape = input.shape();
    if (in_shape == target) return ctx.set_output(0, input);

    const auto incompatible = [&] {
      return pdk::InvalidArgument(op, ": input.shape ", in_shape, " cannot be broadcast to shape ",
                                  target, " (each input dimension, aligned at the end, must be 1 "
                                  "or equal the target's)");
    };
    auto out_shape = pdk::BroadcastShapes(op, "input", in_shape, "target", target);
    if (!out_shape.ok() || *out_shape != target) return incompatible();
    PDK_ASSIGN_OR_RETURN(auto plan,
                         pdk_compute::PlanBroadcast<2>(op, {"input", "target"}, {in_shape, target}));

    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, target));
    pdk_compute::EvalBroadcastTo<T>(pdk_compute::Device(ctx), plan, input.data<T>(),
                                    out.data<T>());
    return pdk::Status::OK();
  }
};

PDK_REGISTER_KERNELS(BroadcastTo, r) {
  pdk::ForEachType(pdk::TypeList<float, double, int32_t, int64_t, bool>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
      using Tidx = typename decltype(i)::type;
      r.Add(pdk::KernelDef<BroadcastToOp<T>>("BroadcastTo")
                .template Type<T>("T")
                .template Type<Tidx>("Tidx")
                .HostMemory("shape"));
    });
  });
}

}  // namespace
}  // namespace pdk_kernels
