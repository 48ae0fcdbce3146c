// OneHot(indices, depth, on_value, off_value; axis).
//
// Inputs: indices (any rank, TI uint8/int8/int32/int64), depth (scalar int32,
// host memory, >= 0), on_value and off_value (scalars, T). Attr axis in
// [-1, rank(indices)] (-1: last). Output: T, indices' shape with a dimension
// of size depth inserted at axis;
//   output[..., d, ...] = indices[..., ...] == d ? on_value : off_value
// (an index outside [0, depth), e.g. negative, gives an all-off row).
// Semantics: tensorflow/core/ops/array_ops.cc (OneHot).
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8, int8;
// TI uint8, int8, int32, int64.
// Errors (InvalidArgument): axis out of range, depth not a non-negative
// scalar, on_value/off_value not scalars.
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

template <class T, class TI>
class OneHotOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.Get("axis", &axis_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor idx_t, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor depth_t, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor on_t, ctx.input(2));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor off_t, ctx.input(3));
    const pdk::Shape is = idx_t.shape();
    const int rank = is.rank();
    if (axis_ < -1 || axis_ > rank)
      return pdk::InvalidArgument(ctx.op(), ": axis must be -1 or in [0, ", rank,
                                  "] (the rank of indices, shape ", is, "), got ", axis_);
    if (depth_t.rank() != 0)
      return pdk::InvalidArgument(ctx.op(), ": depth must be a scalar, got shape ", depth_t.shape());
    if (on_t.rank() != 0 || off_t.rank() != 0)
      return pdk::InvalidArgument(ctx.op(), ": on_value and off_value must be scalars, got shapes ",
                                  on_t.shape(), " and ", off_t.shape());
    const int64_t depth = depth_t.data<int32_t>()[0];
    if (depth < 0)
      return pdk::InvalidArgument(ctx.op(), ": depth must be non-negative, got ", depth);
    const int axis = axis_ == -1 ? rank : static_cast<int>(axis_);
    std::vector<int64_t> od = is.dims();
    od.insert(od.begin() + axis, depth);
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape(od)));
    if (out.num_elements() == 0) return pdk::Status::OK();
    const T on = on_t.data<T>()[0], off = off_t.data<T>()[0];
    int64_t prefix = 1, suffix = 1;
    for (int k = 0; k < axis; ++k) prefix *= is[k];
    for (int k = axis; k < rank; ++k) suffix *= is[k];
    const auto& dev = pdk_compute::Device(ctx);
    pdk_compute::flat<T>(out).device(dev) = pdk_compute::flat<T>(out).constant(off);
    const TI* idx = idx_t.data<TI>();
    T* o = out.data<T>();
    for (int64_t p = 0; p < prefix; ++p)
      for (int64_t s = 0; s < suffix; ++s) {
        const int64_t v = static_cast<int64_t>(idx[p * suffix + s]);
        if (v >= 0 && v < depth) o[(p * depth + v) * suffix + s] = on;
      }
    return pdk::Status::OK();
  }

 private:
  int64_t axis_ = -1;
};

}  // namespace

PDK_REGISTER_KERNELS(OneHot, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                                 bool, uint8_t, int8_t>{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<uint8_t, int8_t, int32_t, int64_t>{},
                                      [&](auto i) {
                                        using TI = typename decltype(i)::type;
                                        r.Add(pdk::KernelDef<OneHotOp<T, TI>>("OneHot")
                                                  .Type("T", t)
                                                  .Type("TI", i)
                                                  .HostMemory("depth"));
                                      });
                   });
}

}  // namespace pdk_kernels
