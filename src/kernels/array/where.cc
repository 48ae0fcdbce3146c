// Where(input): the coordinates of input's true (non-zero) elements.
//
// Input: any rank, T. Output: int64 [num_true, rank(input)], one row per
// non-zero element in row-major order. The output shape depends on the data:
// the elements are counted first, then the output is allocated and filled.
// Semantics: tensorflow/core/ops/array_ops.cc (Where).
// Dtypes: T bool, float32, float64, int32, int64, uint8, int8.
// Errors: a scalar input, InvalidArgument "WhereOp : Unhandled input
// dimensions: 0" (TensorFlow's wording; the CPU kernel handles ranks 1 to 8).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <vector>

#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

template <class T>
class WhereOp : public OpKernel {
 public:
  explicit WhereOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const TensorShape& in = x.shape();
    const int rank = in.dims();
    OP_REQUIRES(ctx, rank != 0,
                errors::InvalidArgument("WhereOp : Unhandled input dimensions: 0 (",
                                        type_string(), ": condition of shape [] is a scalar)"));
    const int64 n = x.NumElements();
    const T* v = static_cast<const T*>(x.data());
    int64 count = 0;
    for (int64 i = 0; i < n; ++i) count += v[i] != T(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({count, rank}), &out));
    if (count == 0 || rank == 0) return;
    int64* o = static_cast<int64*>(out->data());
    std::vector<int64> coord(rank, 0);
    for (int64 i = 0; i < n; ++i) {
      if (v[i] != T(0)) {
        for (int k = 0; k < rank; ++k) *o++ = coord[k];
      }
      for (int k = rank - 1; k >= 0; --k) {  // advance the row-major counter
        if (++coord[k] < in.dim_size(k)) break;
        coord[k] = 0;
      }
    }
  }
};

// T: bool, float32, float64, int32, int64, uint8, int8; int32's input and
// output (index) live in host memory (host memory: docs/architecture.md).
#define PDK_REGISTER_WHERE_(T) \
  REGISTER_KERNEL_BUILDER(Name("Where").Device(DEVICE_PDK).TypeConstraint<T>("T"), WhereOp<T>)
PDK_REGISTER_WHERE_(bool);
PDK_REGISTER_WHERE_(float);
PDK_REGISTER_WHERE_(double);
REGISTER_KERNEL_BUILDER(Name("Where")
                            .Device(DEVICE_PDK)
                            .TypeConstraint<int32>("T")
                            .HostMemory("input")
                            .HostMemory("index"),
                        WhereOp<int32>);
PDK_REGISTER_WHERE_(int64);
PDK_REGISTER_WHERE_(uint8);
PDK_REGISTER_WHERE_(int8);
#undef PDK_REGISTER_WHERE_

}  // namespace
}  // namespace tensorflow
