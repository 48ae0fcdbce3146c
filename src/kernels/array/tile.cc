// Tile(input, multiples): output dim i is input dim i * multiples[i], the
// input repeated along each dim (shape rule and copy: tile.h, dtype-agnostic).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include "kernels/array/tile.h"

#include <algorithm>
#include <vector>

#include "kernels/array/tf_array_util.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

class TileOp : public OpKernel {
 public:
  explicit TileOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& x = ctx->input(0);
    const Tensor& m_t = ctx->input(1);
    const pdk::Shape& in = x.shape().pdk_shape();
    const int rank = in.rank();
    OP_REQUIRES(ctx, m_t.dims() == 1 && m_t.NumElements() == rank,
                errors::InvalidArgument(op, ": multiples must be a vector of length ", rank,
                                        " (the rank of input, shape ", in,
                                        "), got a tensor of shape ", m_t.shape()));
    pdk::StatusOr<std::vector<int64_t>> m_or = pdk_kernels::ReadIntVector(op, "multiples", m_t);
    OP_REQUIRES_OK(ctx, m_or.status());
    const std::vector<int64_t>& m = *m_or;
    TensorShape out_shape;
    OP_REQUIRES_OK(ctx, pdk_kernels::TiledShape(op, in, m, &out_shape));
    if (std::all_of(m.begin(), m.end(), [](int64_t v) { return v == 1; })) {
      ctx->set_output(0, x);  // the output is the input, of the same shape: no copy
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    pdk_kernels::TileInto(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), x.data(), in, m,
        static_cast<int64_t>(TF_DataTypeSize(static_cast<TF_DataType>(ctx->input_dtype(0)))),
        out->data());
  }
};

// T: the data-movement types (pdk_compute::DataMovementTypes); Tmultiples
// int32, int64; multiples in host memory.
#define PDK_REGISTER_TILE_(T, Tmultiples)                      \
  REGISTER_KERNEL_BUILDER(Name("Tile")                         \
                              .Device(DEVICE_PDK)              \
                              .TypeConstraint<T>("T")          \
                              .TypeConstraint<Tmultiples>("Tmultiples") \
                              .HostMemory("multiples"),        \
                          TileOp)
#define PDK_REGISTER_TILE_ALL_(T) \
  PDK_REGISTER_TILE_(T, int32);   \
  PDK_REGISTER_TILE_(T, int64);
PDK_CALL_DATA_MOVEMENT_TYPES(PDK_REGISTER_TILE_ALL_)
#undef PDK_REGISTER_TILE_ALL_
#undef PDK_REGISTER_TILE_

}  // namespace
}  // namespace tensorflow
