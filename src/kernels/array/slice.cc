// Slice(input, begin, size): output[i...] = input[begin + i...].
//
// Inputs: input (any rank, T), begin and size (1-D Index int32/int64 of
// length rank(input), host memory); size[i] == -1 means "to the end of
// dimension i". Output: T of shape size (with -1 resolved). A slice covering
// the whole input is forwarded without a copy; otherwise a byte-level box copy
// (box_copy.h) over the device's pool. Semantics: tensorflow/core/ops/
// array_ops.cc (Slice).
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8, int8,
// int16.
// Errors: InvalidArgument if begin/size are not vectors of length rank,
// begin[i] is not in [0, D_i], or size[i] is not in [0, D_i - begin[i]].
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "kernels/array/box_copy.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

class SliceOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor input, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor begin_t, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor size_t_, ctx.input(2));
    const pdk::Shape in = input.shape();
    const int rank = in.rank();
    if (begin_t.rank() != 1 || size_t_.rank() != 1 || begin_t.num_elements() != rank ||
        size_t_.num_elements() != rank)
      return pdk::InvalidArgument(ctx.op(), ": expected begin and size to be 1-D tensors of size ",
                                  rank, " (the rank of input, shape ", in, "), got shapes ",
                                  begin_t.shape(), " and ", size_t_.shape());
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> begin, pdk::ReadIntVector(ctx.op(), "begin", begin_t));
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> size, pdk::ReadIntVector(ctx.op(), "size", size_t_));
    bool whole = true;
    for (int i = 0; i < rank; ++i) {
      const int64_t b = begin[i];
      if (b < 0 || b > in[i])
        return pdk::InvalidArgument(ctx.op(), ": expected begin[", i, "] in [0, ", in[i],
                                    "], but got ", b, " (input shape ", in, ")");
      if (size[i] == -1) size[i] = in[i] - b;
      if (size[i] < 0 || b + size[i] > in[i])
        return pdk::InvalidArgument(ctx.op(), ": expected size[", i, "] in [0, ", in[i] - b,
                                    "], but got ", size[i], " (input shape ", in, ", begin[", i,
                                    "] = ", b, ")");
      whole = whole && size[i] == in[i];
    }
    const pdk::Shape out_shape(size);
    if (whole) return ctx.set_output_reshaped(0, input, out_shape);  // no copy
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    if (out_shape.num_elements() == 0) return pdk::Status::OK();
    CopyBox(pdk_compute::Device(ctx), TF_DataTypeSize(input.dtype()),
            static_cast<const char*>(input.raw_data()), in.dims(), begin,
            static_cast<char*>(out.raw_data()), size, std::vector<int64_t>(rank, 0), size);
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(Slice, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       r.Add(Int32OnHost<T>(pdk::KernelDef<SliceOp>("Slice")
                                                .Type("T", t)
                                                .Type("Index", i)
                                                .HostMemory("begin")
                                                .HostMemory("size"),
                                            {"input", "output"}));
                     });
                   });
}

}  // namespace pdk_kernels
