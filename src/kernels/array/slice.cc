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
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstring>
#include <vector>

#include "kernels/array/box_copy.h"
#include "kernels/array/tf_array_util.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

class SliceOp : public OpKernel {
 public:
  explicit SliceOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& input = ctx->input(0);
    const Tensor& begin_t = ctx->input(1);
    const Tensor& size_t_ = ctx->input(2);
    const pdk::Shape& in = input.shape().pdk_shape();
    const int rank = in.rank();
    OP_REQUIRES(ctx, begin_t.dims() == 1 && size_t_.dims() == 1 &&
                         begin_t.NumElements() == rank && size_t_.NumElements() == rank,
                errors::InvalidArgument(op, ": expected begin and size to be 1-D tensors of size ",
                                        rank, " (the rank of input, shape ", in, "), got shapes ",
                                        begin_t.shape(), " and ", size_t_.shape()));
    pdk::StatusOr<std::vector<int64_t>> begin_or =
        pdk_kernels::ReadIntVector(op, "begin", begin_t);
    OP_REQUIRES_OK(ctx, begin_or.status());
    pdk::StatusOr<std::vector<int64_t>> size_or = pdk_kernels::ReadIntVector(op, "size", size_t_);
    OP_REQUIRES_OK(ctx, size_or.status());
    const std::vector<int64_t>& begin = *begin_or;
    std::vector<int64_t>& size = *size_or;
    bool whole = true;
    for (int i = 0; i < rank; ++i) {
      const int64_t b = begin[i];
      OP_REQUIRES(ctx, b >= 0 && b <= in[i],
                  errors::InvalidArgument(op, ": expected begin[", i, "] in [0, ", in[i],
                                          "], but got ", b, " (input shape ", in, ")"));
      if (size[i] == -1) size[i] = in[i] - b;
      OP_REQUIRES(ctx, size[i] >= 0 && b + size[i] <= in[i],
                  errors::InvalidArgument(op, ": expected size[", i, "] in [0, ", in[i] - b,
                                          "], but got ", size[i], " (input shape ", in,
                                          ", begin[", i, "] = ", b, ")"));
      whole = whole && size[i] == in[i];
    }
    if (whole) {  // the output is the input, of the same shape: no copy
      ctx->set_output(0, input);
      return;
    }
    const TensorShape out_shape(size);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out_shape.num_elements() == 0) return;
    pdk_kernels::CopyBox(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
                         TF_DataTypeSize(static_cast<TF_DataType>(input.dtype())),
                         static_cast<const char*>(input.data()), in.dims(), begin,
                         static_cast<char*>(out->data()), size, std::vector<int64_t>(rank, 0),
                         size);
  }
};

// T: the data-movement types (pdk_compute::DataMovementTypes); Index int32,
// int64; begin and size in host memory, and int32's input and output
// (host memory: docs/architecture.md).
#define PDK_REGISTER_SLICE_(T, Index, INT32_HOST_MEMORY)                  \
  REGISTER_KERNEL_BUILDER(Name("Slice")                                   \
                              .Device(DEVICE_PDK)                         \
                              .TypeConstraint<T>("T")                     \
                              .TypeConstraint<Index>("Index")             \
                              .HostMemory("begin")                        \
                              .HostMemory("size") INT32_HOST_MEMORY,      \
                          SliceOp)
#define PDK_REGISTER_SLICE_ALL_(T)  \
  PDK_REGISTER_SLICE_(T, int32, );  \
  PDK_REGISTER_SLICE_(T, int64, );
PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(PDK_REGISTER_SLICE_ALL_)
PDK_REGISTER_SLICE_(int32, int32, .HostMemory("input").HostMemory("output"));
PDK_REGISTER_SLICE_(int32, int64, .HostMemory("input").HostMemory("output"));
#undef PDK_REGISTER_SLICE_ALL_
#undef PDK_REGISTER_SLICE_

}  // namespace
}  // namespace tensorflow
