// SelectV2: output = condition ? t : e elementwise, with NumPy broadcasting
// over all three inputs (output has the broadcast shape of condition, t, e).
//
// condition: bool. t, e, output: T in float32, float64, float16, bfloat16,
// int32, int64, bool (the two 16-bit floats are selected as raw uint16_t bits).
// Errors: InvalidArgument when the shapes don't broadcast (the message names
// the operands and their shapes); allocation failures.
#include <cstdint>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

template <class T>
class SelectV2Op {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    const bool* c;
    const T* t;
    const T* e;
    pdk_compute::BroadcastPlan<3> plan;
    {  // released before forwarding: a held handle blocks buffer reuse
      PDK_ASSIGN_OR_RETURN(pdk::Tensor ct, ctx.input(0));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor tt, ctx.input(1));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor et, ctx.input(2));
      PDK_ASSIGN_OR_RETURN(plan, pdk_compute::PlanBroadcast<3>(
                                     ctx.op(), {"condition", "t", "e"},
                                     {ct.shape(), tt.shape(), et.shape()}));
      c = ct.data<bool>();
      t = tt.data<T>();
      e = et.data<T>();
    }
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.forward_or_allocate_output({1, 2}, 0, plan.out));
    if constexpr (pdk_compute::kIsHalfLike<T>) {
      // Selection only moves bits: both 16-bit floats share one uint16_t instance.
      using U = uint16_t;
      static_assert(sizeof(T) == sizeof(U));
      pdk_compute::EvalSelect<U>(pdk_compute::Device(ctx), plan, c,
                                 reinterpret_cast<const U*>(t), reinterpret_cast<const U*>(e),
                                 reinterpret_cast<U*>(out.data<T>()));
    } else {
      pdk_compute::EvalSelect<T>(pdk_compute::Device(ctx), plan, c, t, e, out.data<T>());
    }
    return pdk::Status::OK();
  }
};

PDK_REGISTER_KERNELS(SelectV2, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t, bool>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<SelectV2Op<T>>("SelectV2").template Type<T>("T"));
  });
}

}  // namespace
}  // namespace pdk_kernels
