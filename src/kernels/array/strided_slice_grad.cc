// StridedSliceGrad: the gradient of StridedSlice. Scatters dy into a zero
// tensor of the sliced input's shape.
//
// Inputs: shape (1-D Index, host memory: the StridedSlice input's shape),
// begin/end/strides (1-D Index, host memory), dy (T, the StridedSlice output's
// shape). Attrs: the five StridedSlice masks. Output: T of `shape`, zero
// except at the sliced positions, which hold dy. The spec is resolved by
// strided_slice_spec.h exactly as StridedSlice resolves it.
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8; Index
// int32/int64. Byte-level (dtype-agnostic).
// Errors: InvalidArgument for a bad spec (see strided_slice_spec.h), a shape
// that is not a vector of non-negative sizes, or dy whose shape is not the
// slice's shape.
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "kernels/array/strided_slice_spec.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

class StridedSliceGradOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return masks_.Init(a); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor shape_t, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor begin_t, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor end_t, ctx.input(2));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor strides_t, ctx.input(3));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dy, ctx.input(4));
    if (shape_t.rank() != 1)
      return pdk::InvalidArgument(ctx.op(), ": shape must be 1-D, got a tensor of shape ",
                                  shape_t.shape());
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> dims, pdk::ReadIntVector(ctx.op(), "shape", shape_t));
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] < 0)
        return pdk::InvalidArgument(ctx.op(), ": shape[", i, "] must be non-negative, got ",
                                    dims[i]);
    const pdk::Shape in_shape(dims);
    PDK_ASSIGN_OR_RETURN(StridedSliceSpec spec,
                         ResolveStridedSlice(ctx.op(), in_shape, begin_t, end_t, strides_t, masks_));
    if (dy.shape() != spec.out_shape)
      return pdk::InvalidArgument(ctx.op(), ": shape of dy was ", dy.shape(), " instead of ",
                                  spec.out_shape, " (the slice of an input of shape ", in_shape,
                                  ")");
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, in_shape));
    if (in_shape.num_elements() == 0) return pdk::Status::OK();
    const size_t elem = TF_DataTypeSize(ctx.output_dtype(0));
    char* dst = static_cast<char*>(out.raw_data());
    std::memset(dst, 0, out.bytes());
    if (spec.out_shape.num_elements() == 0) return pdk::Status::OK();
    const char* cursor = static_cast<const char*>(dy.raw_data());
    ForEachStridedRun(RowMajorStrides(in_shape), spec, 0, 0, [&](int64_t off, int64_t n) {
      std::memcpy(dst + off * elem, cursor, n * elem);
      cursor += n * elem;
    });
    return pdk::Status::OK();
  }

 private:
  StridedSliceMasks masks_;
};

}  // namespace

PDK_REGISTER_KERNELS(StridedSliceGrad, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                                 bool, uint8_t>{},
                   [&](auto t) {
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       r.Add(pdk::KernelDef<StridedSliceGradOp>("StridedSliceGrad")
                                 .Type("T", t)
                                 .Type("Index", i)
                                 .HostMemory("shape")
                                 .HostMemory("begin")
                                 .HostMemory("end")
                                 .HostMemory("strides"));
                     });
                   });
}

}  // namespace pdk_kernels
