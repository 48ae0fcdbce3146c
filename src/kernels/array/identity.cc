// Identity, Snapshot, StopGradient: output 0 shares input 0's buffer.
#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {

class IdentityOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    return ctx.set_output(0, x);
  }
};

PDK_REGISTER_KERNELS(Identity, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     for (const char* op : {"Identity", "Snapshot", "StopGradient"})
                       r.Add(Int32OnHost<T>(pdk::KernelDef<IdentityOp>(op).Type("T", t),
                                            {"input", "output"}));
                   });
}

}  // namespace pdk_kernels
