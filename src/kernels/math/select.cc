// SelectV2: output = condition ? t : e elementwise, with NumPy broadcasting
// over all three inputs (output has the broadcast shape of condition, t, e).
// Select (v1; tensorflow/core/kernels/cwise_op_select.cc): no broadcasting
// between t and e, which must have one shape; condition has that shape too,
// is a scalar, or is a vector of t.shape[0] choosing whole rows (computed as
// SelectV2 with condition viewed as [t.shape[0], 1, ...]). Keras's sparse
// optimizer updates (RMSprop on an Embedding) emit it.
//
// condition: bool. t, e, output: T in float32, float64, float16, bfloat16,
// int32, int64, bool (the two 16-bit floats are selected as raw uint16_t bits).
// Errors: InvalidArgument when the shapes don't broadcast (the message names
// the operands and their shapes); allocation failures.
#include <cstdint>
#include <vector>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

// Select (v1)'s shape rules, with TensorFlow's wording; `cond` becomes the
// shape the broadcasting code reads condition as.
pdk::Status CheckSelectV1(const char* op, pdk::Shape* cond, const pdk::Shape& t,
                          const pdk::Shape& e) {
  if (t != e)
    return pdk::InvalidArgument("'then' and 'else' must have the same size.  but received: ",
                                t, " vs. ", e, " (PDK ", op, ")");
  if (cond->rank() == 0 || *cond == t) return pdk::Status::OK();
  if (cond->rank() == 1 && t.rank() > 1) {
    if ((*cond)[0] != t[0])
      return pdk::InvalidArgument("Number of batches of 'then' must match size of 'cond', but saw: ",
                                  t[0], " vs. ", (*cond)[0], " (PDK ", op, ")");
    std::vector<int64_t> dims(t.rank(), 1);
    dims[0] = t[0];
    *cond = pdk::Shape(dims);
    return pdk::Status::OK();
  }
  return pdk::InvalidArgument("'condition' must be a scalar, a vector of the size of 'then''s "
                              "first dimension, or of the shape of 'then' (PDK ", op,
                              ": condition.shape ", *cond, ", then.shape ", t, ")");
}

template <class T, bool kV1>
class SelectOp {
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
      pdk::Shape cs = ct.shape();
      if constexpr (kV1) PDK_RETURN_IF_ERROR(CheckSelectV1(ctx.op(), &cs, tt.shape(), et.shape()));
      PDK_ASSIGN_OR_RETURN(plan, pdk_compute::PlanBroadcast<3>(
                                     ctx.op(), {"condition", "t", "e"},
                                     {cs, tt.shape(), et.shape()}));
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
    r.Add(pdk::KernelDef<SelectOp<T, false>>("SelectV2").template Type<T>("T"));
    r.Add(pdk::KernelDef<SelectOp<T, true>>("Select").template Type<T>("T"));
  });
}

}  // namespace
}  // namespace pdk_kernels
