// StridedSlice: NumPy-style basic slicing, input[begin:end:strides] with
// begin_mask, end_mask, ellipsis_mask, new_axis_mask and shrink_axis_mask.
//
// Inputs: input (any shape, T), begin/end/strides (1-D int32 or int64, same
// length, host memory). Output: the slice, with new axes inserted and shrunk
// axes removed. The spec is resolved by strided_slice_spec.h (shared with
// StridedSliceGrad), which states the semantics of
// tensorflow/core/util/strided_slice_op.cc.
// Errors: InvalidArgument for a zero stride, mismatched spec lengths, more than
// one ellipsis, or a shrunk index out of range.
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "kernels/array/strided_slice_spec.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

class StridedSliceOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return masks_.Init(a); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor input, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor begin_t, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor end_t, ctx.input(2));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor strides_t, ctx.input(3));
    const pdk::Shape in_shape = input.shape();
    PDK_ASSIGN_OR_RETURN(StridedSliceSpec spec,
                         ResolveStridedSlice(ctx.op(), in_shape, begin_t, end_t, strides_t, masks_));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, spec.out_shape));
    if (spec.out_shape.num_elements() == 0) return pdk::Status::OK();
    const size_t elem = TF_DataTypeSize(input.dtype());
    const char* in = static_cast<const char*>(input.raw_data());
    char* cursor = static_cast<char*>(out.raw_data());
    ForEachStridedRun(RowMajorStrides(in_shape), spec, 0, 0, [&](int64_t off, int64_t n) {
      std::memcpy(cursor, in + off * elem, n * elem);
      cursor += n * elem;
    });
    return pdk::Status::OK();
  }

 private:
  StridedSliceMasks masks_;
};

}  // namespace

PDK_REGISTER_KERNELS(StridedSlice, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                                 bool, uint8_t>{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       r.Add(Int32OnHost<T>(pdk::KernelDef<StridedSliceOp>("StridedSlice")
                                                .Type("T", t)
                                                .Type("Index", i)
                                                .HostMemory("begin")
                                                .HostMemory("end")
                                                .HostMemory("strides"),
                                            {"input", "output"}));
                     });
                   });
}

}  // namespace pdk_kernels
