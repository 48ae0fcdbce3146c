// MatrixBandPart on OPENCL: float, int64, bool on the device (cl/array.cl
// array_band_part), int32 in host memory (computed on the host). num_lower /
// num_upper (int32 / int64) are HostMemory as in TensorFlow's GPU
// registration. Semantics and error wording: TensorFlow's
// matrix_band_part_op.cc: over input viewed as [batch, rows, cols],
//   out[b, r, c] = in[b, r, c] if (lower < 0 || r - c <= lower) &&
//                                 (upper < 0 || c - r <= upper), else 0.
#include <cstring>
#include <vector>

#include "array_util.h"

namespace tensorflow {

class MatrixBandPartOp : public OpKernel {
 public:
  explicit MatrixBandPartOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    OP_REQUIRES(c, TensorShapeUtils::IsMatrixOrHigher(input.shape()),
                errors::InvalidArgument("input must be at least 2-dim, received shape: ",
                                        input.shape().DebugString()));
    const int64 rows = input.dim_size(input.dims() - 2);
    const int64 cols = input.dim_size(input.dims() - 1);
    const Tensor& lower_t = c->input(1);
    OP_REQUIRES(c, TensorShapeUtils::IsScalar(lower_t.shape()),
                errors::InvalidArgument("num_lower must be scalar, got shape ",
                                        lower_t.shape().DebugString()));
    const int64 lower = HostIndices(lower_t)[0];
    OP_REQUIRES(c, lower <= rows,
                errors::InvalidArgument(
                    "num_lower must be negative or less or equal to number of rows (", rows,
                    ") got: ", lower));
    const Tensor& upper_t = c->input(2);
    OP_REQUIRES(c, TensorShapeUtils::IsScalar(upper_t.shape()),
                errors::InvalidArgument("num_upper must be scalar, got shape ",
                                        upper_t.shape().DebugString()));
    const int64 upper = HostIndices(upper_t)[0];
    OP_REQUIRES(c, upper <= cols,
                errors::InvalidArgument(
                    "num_upper must be negative or less or equal to number of columns (", cols,
                    ") got: ", upper));
    if (input.NumElements() == 0 ||
        ((lower < 0 || lower == rows) && (upper < 0 || upper == cols))) {
      c->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->forward_input_or_allocate_output({0}, 0, input.shape(), &out));
    const int64 n = input.NumElements();
    if (!out->device_memory()) {  // int32: on the host
      const size_t es = DataTypeSize(input.dtype());
      const char* x = static_cast<const char*>(input.data());
      char* y = static_cast<char*>(out->data());
      for (int64 i = 0; i < n; ++i) {
        const int64 col = i % cols, row = (i / cols) % rows;
        const bool keep = (lower < 0 || row - col <= lower) && (upper < 0 || col - row <= upper);
        if (keep)
          std::memmove(y + i * es, x + i * es, es);
        else
          std::memset(y + i * es, 0, es);
      }
      return;
    }
    OP_REQUIRES_OK(c, Enqueue(c, SizedKernelName("array_band_part", input.dtype()), n,
                              {input, *out, Arg::I64(n), Arg::I64(rows), Arg::I64(cols),
                               Arg::I64(lower), Arg::I64(upper)}));
  }
};

#define PDK_REGISTER_T(T, I)                                   \
  REGISTER_KERNEL_BUILDER(Name("MatrixBandPart")               \
                              .Device(DEVICE_OPENCL)           \
                              .TypeConstraint<T>("T")          \
                              .TypeConstraint<I>("Tindex")     \
                              .HostMemory("num_lower")         \
                              .HostMemory("num_upper"),        \
                          MatrixBandPartOp);
#define PDK_REGISTER(T)        \
  PDK_REGISTER_T(T, int32)     \
  PDK_REGISTER_T(T, ::tensorflow::int64)
PDK_OPENCL_ARRAY_TYPES(PDK_REGISTER)
#undef PDK_REGISTER
#undef PDK_REGISTER_T

#define PDK_REGISTER_I32(I)                                    \
  REGISTER_KERNEL_BUILDER(Name("MatrixBandPart")               \
                              .Device(DEVICE_OPENCL)           \
                              .TypeConstraint<int32>("T")      \
                              .TypeConstraint<I>("Tindex")     \
                              .HostMemory("input")             \
                              .HostMemory("num_lower")         \
                              .HostMemory("num_upper")         \
                              .HostMemory("band"),             \
                          MatrixBandPartOp);
PDK_REGISTER_I32(int32)
PDK_REGISTER_I32(::tensorflow::int64)
#undef PDK_REGISTER_I32

}  // namespace tensorflow
