// Fill, ZerosLike, OnesLike: a constant written over the output by element
// size (one Eigen setConstant per 1/2/4/8-byte storage type), on the device's
// thread pool.
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

// Writes the `Bytes`-byte pattern at `value` into every element of `out`.
template <size_t Bytes>
void FillPattern(const pdk::Context& ctx, const pdk::Tensor& out, const void* value) {
  using U = pdk::UIntOfSizeT<Bytes>;
  U v;
  std::memcpy(&v, value, Bytes);
  if (out.num_elements() == 0) return;
  pdk_compute::Flat<U> o(out.bits<U>(), out.num_elements());
  o.device(pdk_compute::Device(ctx)) = o.constant(v);
}

// Fill(dims, value): dims is a host int vector (or a scalar: one dimension),
// value a device scalar (or a one-element vector), as TensorFlow's FillOp
// (constant_op.cc) accepts.
template <size_t Bytes>
class FillOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dims_t, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor value, ctx.input(1));
    if (dims_t.rank() > 1)
      return pdk::InvalidArgument("dims must represent a vector, got shape ", dims_t.shape(),
                                  " (", ctx.op(), ")");
    if (value.rank() > 1 || (value.rank() == 1 && value.num_elements() != 1))
      return pdk::InvalidArgument("value must represent a scalar, got shape ", value.shape(),
                                  " (", ctx.op(), ")");
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> dims, pdk::ReadIntVector(ctx.op(), "dims", dims_t));
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] < 0)
        return pdk::InvalidArgument(ctx.op(), ": dims[", i, "] must be non-negative, got ",
                                    dims[i], " (dims ", pdk::Shape(dims), ")");
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape(std::move(dims))));
    FillPattern<Bytes>(ctx, out, value.raw_data());
    return pdk::Status::OK();
  }
};

// ZerosLike(x) / OnesLike(x): x's shape, every element T(0) / T(1).
template <class T, int kValue>
class ConstantLikeOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.forward_or_allocate_output({0}, 0, x.shape()));
    const T v = static_cast<T>(kValue);
    FillPattern<sizeof(T)>(ctx, out, &v);
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(Fill, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       r.Add(Int32OnHost<T>(pdk::KernelDef<FillOp<sizeof(T)>>("Fill")
                                                .Type("T", t)
                                                .Type("index_type", i)
                                                .HostMemory("dims"),
                                            {"value", "output"}));
                     });
                     r.Add(Int32OnHost<T>(
                         pdk::KernelDef<ConstantLikeOp<T, 0>>("ZerosLike").Type("T", t), {"y"}));
                     r.Add(Int32OnHost<T>(
                         pdk::KernelDef<ConstantLikeOp<T, 1>>("OnesLike").Type("T", t), {"y"}));
                   });
}

}  // namespace pdk_kernels
