// Pack (tf.stack) and Unpack (tf.unstack): byte-level row copies
// (dtype-agnostic: the element size comes from the dtype), split over the
// device's thread pool.
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

// Pack(values[N]; axis): N same-shape tensors stacked along a new dimension
// `axis` in [-(rank+1), rank+1).
class PackOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.Get("axis", &axis_); }
  pdk::Status Compute(pdk::Context& ctx) const {
    const int n = ctx.num_inputs();
    std::vector<pdk::Tensor> values;
    values.reserve(n);
    for (int i = 0; i < n; ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor v, ctx.input(i));
      values.push_back(std::move(v));
    }
    const pdk::Shape s0 = values[0].shape();
    const int rank = s0.rank();
    int64_t axis = axis_;
    // TensorFlow's checks, order and wording (PackOp, pack_op.cc).
    if (axis < -rank - 1 || axis > rank)
      return pdk::InvalidArgument("axis = ", axis, " not in [", -rank - 1, ", ", rank + 1,
                                  ") (", ctx.op(), ": values of shape ", s0, ")");
    if (axis < 0) axis += rank + 1;
    for (int i = 1; i < n; ++i) {
      const pdk::Shape si = values[i].shape();
      if (si != s0)
        return pdk::InvalidArgument("Shapes of all inputs must match: values[0].shape = ", s0,
                                    " != values[", i, "].shape = ", si);
    }
    std::vector<int64_t> out_dims = s0.dims();
    out_dims.insert(out_dims.begin() + axis, n);
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape(out_dims)));
    if (out.num_elements() == 0) return pdk::Status::OK();

    const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(ctx.output_dtype(0)));
    int64_t outer = 1, inner = elem;  // inner: bytes of one value per outer row
    for (int d = 0; d < axis; ++d) outer *= s0[d];
    for (int d = axis; d < rank; ++d) inner *= s0[d];
    char* dst = static_cast<char*>(out.raw_data());
    std::vector<Stream> streams;
    for (int i = 0; i < n; ++i)
      streams.push_back({dst + i * inner, n * inner,
                         static_cast<const char*>(values[i].raw_data()), inner, inner});
    CopyStreams(pdk_compute::Device(ctx), outer, streams);
    return pdk::Status::OK();
  }

 private:
  int64_t axis_ = 0;
};

// Unpack(value; num, axis): `num` tensors, the slices of `value` along `axis`
// in [-rank, rank), whose size must be num.
class UnpackOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.Get("axis", &axis_); }
  pdk::Status Compute(pdk::Context& ctx) const {
    const int num = ctx.num_outputs();
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    const pdk::Shape in = x.shape();
    const int rank = in.rank();
    int64_t axis = axis_;
    // TensorFlow's checks, order and wording (UnpackOp, unpack_op.cc).
    if (axis < -rank || axis >= rank)
      return pdk::InvalidArgument("axis = ", axis, " not in [", -rank, ", ", rank, ") (",
                                  ctx.op(), ": value of shape ", in, ")");
    if (axis < 0) axis += rank;
    if (in[axis] != num)
      return pdk::InvalidArgument("Input shape axis ", axis, " must equal ", num, ", got shape ",
                                  in);
    std::vector<int64_t> out_dims = in.dims();
    out_dims.erase(out_dims.begin() + axis);
    const pdk::Shape out_shape(out_dims);
    std::vector<pdk::Tensor> outs;
    for (int i = 0; i < num; ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor o, ctx.allocate_output(i, out_shape));
      outs.push_back(std::move(o));
    }
    if (out_shape.num_elements() == 0) return pdk::Status::OK();

    const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(ctx.input_dtype(0)));
    int64_t outer = 1, inner = elem;  // inner: bytes of one output per outer row
    for (int d = 0; d < axis; ++d) outer *= in[d];
    for (int d = axis + 1; d < rank; ++d) inner *= in[d];
    const char* src = static_cast<const char*>(x.raw_data());
    std::vector<Stream> streams;
    for (int i = 0; i < num; ++i)
      streams.push_back({static_cast<char*>(outs[i].raw_data()), inner, src + i * inner,
                         num * inner, inner});
    CopyStreams(pdk_compute::Device(ctx), outer, streams);
    return pdk::Status::OK();
  }

 private:
  int64_t axis_ = 0;
};

}  // namespace

PDK_REGISTER_KERNELS(Pack, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     r.Add(Int32OnHost<T>(pdk::KernelDef<PackOp>("Pack").Type("T", t),
                                          {"values", "output"}));
                     r.Add(Int32OnHost<T>(pdk::KernelDef<UnpackOp>("Unpack").Type("T", t),
                                          {"value", "output"}));
                   });
}

}  // namespace pdk_kernels
