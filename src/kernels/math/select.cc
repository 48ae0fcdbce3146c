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
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <vector>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
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
class SelectOp : public OpKernel {
 public:
  explicit SelectOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    // Borrowed views: they do not block forwarding t's or e's buffer.
    const Tensor& ct = ctx->input(0);
    const Tensor& tt = ctx->input(1);
    const Tensor& et = ctx->input(2);
    const char* op = type_string().c_str();
    pdk::Shape cs = ct.shape().pdk_shape();
    if constexpr (kV1)
      OP_REQUIRES_OK(ctx, CheckSelectV1(op, &cs, tt.shape().pdk_shape(), et.shape().pdk_shape()));
    const pdk::StatusOr<pdk_compute::BroadcastPlan<3>> plan_or = pdk_compute::PlanBroadcastOf<3>(
        op, {"condition", "t", "e"}, {&cs, &tt.shape().pdk_shape(), &et.shape().pdk_shape()});
    OP_REQUIRES_OK(ctx, plan_or.status());
    const pdk_compute::BroadcastPlan<3>& plan = plan_or.value();
    const bool* c = ct.flat<bool>().data();
    const T* t = tt.flat<T>().data();
    const T* e = et.flat<T>().data();
    TensorShape built;
    const TensorShape& out_shape = pdk_compute::PlanOutputShape(plan, {&tt, &et}, &built);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({1, 2}, 0, out_shape, &out));
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    if constexpr (pdk_compute::kIsHalfLike<T>) {
      // Selection only moves bits: both 16-bit floats share one uint16_t instance.
      using U = uint16_t;
      static_assert(sizeof(T) == sizeof(U));
      pdk_compute::EvalSelect<U>(dev, plan, c, reinterpret_cast<const U*>(t),
                                 reinterpret_cast<const U*>(e), static_cast<U*>(out->data()));
    } else {
      pdk_compute::EvalSelect<T>(dev, plan, c, t, e, out->flat<T>().data());
    }
  }
};

#define PDK_REGISTER_SELECT_(T)                                                       \
  REGISTER_KERNEL_BUILDER(Name("SelectV2").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          SelectOp<T, false>);                                        \
  REGISTER_KERNEL_BUILDER(Name("Select").Device(DEVICE_PDK).TypeConstraint<T>("T"),   \
                          SelectOp<T, true>);
PDK_REGISTER_SELECT_(float)
PDK_REGISTER_SELECT_(double)
PDK_REGISTER_SELECT_(Eigen::half)
PDK_REGISTER_SELECT_(Eigen::bfloat16)
PDK_REGISTER_SELECT_(int32)
PDK_REGISTER_SELECT_(int64)
PDK_REGISTER_SELECT_(bool)
#undef PDK_REGISTER_SELECT_

}  // namespace
}  // namespace tensorflow
