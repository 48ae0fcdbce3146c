// ArgMax and ArgMin on OPENCL (cl/argminmax.cl).
//
// input float of rank 1..7, `dimension` an int32 scalar in HostMemory (Tidx
// int32 only, as TensorFlow's GPU registrations); output_type int64 (what
// tf.math.argmax and Keras's accuracy metrics use) or int32, in device memory
// as TensorFlow's GPU kernels have it; the output drops the dimension. Checks
// and texts as TensorFlow's argmax_op.cc; the index is the first maximum
// (minimum), NaNs skipped, as Eigen's tuple reducers on the CPU.
#include <string>
#include <type_traits>

#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;

template <bool kMax, typename Tout>
class ArgMinMaxOp : public OpKernel {
 public:
  explicit ArgMinMaxOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& dimension = ctx->input(1);  // HostMemory
    OP_REQUIRES(ctx, dimension.dims() == 0,
                errors::InvalidArgument("dim must be a scalar, but received tensor of shape: ",
                                        dimension.shape().DebugString()));
    const int64 dim = dimension.dtype() == DT_INT64 ? dimension.scalar<int64>()()
                                                    : dimension.scalar<int32>()();
    const int rank = input.dims();
    const int64 axis = dim < 0 ? dim + rank : dim;
    OP_REQUIRES(ctx, axis >= 0 && axis < rank,
                errors::InvalidArgument("Expected dimension in the range [", -rank, ", ", rank,
                                        "), but got ", dim));
    OP_REQUIRES(ctx, input.dim_size(static_cast<int>(axis)) > 0,
                errors::InvalidArgument("Reduction axis ", dim, " is empty in shape ",
                                        input.shape().DebugString()));
    OP_REQUIRES(ctx, rank <= 7,
                errors::InvalidArgument("Argmax and Argmin only support up to 7 input "
                                        "dimensions, but got ",
                                        rank, ". Inputs shape: ", input.shape().DebugString()));
    TensorShape out_shape;
    int64 outer = 1, inner = 1;
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      out_shape.AddDim(input.dim_size(d));
      (d < axis ? outer : inner) *= input.dim_size(d);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const int64 n_out = out_shape.num_elements();
    const int64 n = input.dim_size(static_cast<int>(axis));
    const std::string kernel = std::string(kMax ? "rdc_argmax_f32" : "rdc_argmin_f32") +
                               (std::is_same<Tout, int32>::value ? "_i32" : "_i64");
    OP_REQUIRES_OK(ctx, Enqueue(ctx, kernel, n_out,
                                {input, *out, Arg::I64(n_out), Arg::I64(n), Arg::I64(inner)}));
  }
};

#define PDK_REGISTER_ARG(op, kMax, Tout)                       \
  REGISTER_KERNEL_BUILDER(Name(op)                             \
                              .Device(DEVICE_OPENCL)           \
                              .TypeConstraint<float>("T")      \
                              .TypeConstraint<Tout>("output_type") \
                              .TypeConstraint<int32>("Tidx")   \
                              .HostMemory("dimension"),        \
                          ArgMinMaxOp<kMax, Tout>);
PDK_REGISTER_ARG("ArgMax", true, int64)
PDK_REGISTER_ARG("ArgMin", false, int64)
PDK_REGISTER_ARG("ArgMax", true, int32)
PDK_REGISTER_ARG("ArgMin", false, int32)
#undef PDK_REGISTER_ARG

}  // namespace tensorflow
