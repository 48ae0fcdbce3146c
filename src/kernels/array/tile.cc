// Tile(input, multiples): output dim i is input dim i * multiples[i], the
// input repeated along each dim. Byte-level (dtype-agnostic): each output row
// (last dim) is the matching input row repeated, written by doubling memcpys;
// rows are split over the device's thread pool.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "compute/parallel_for.h"
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
    std::vector<int64_t> out_dims(rank);
    bool all_one = true;
    for (int i = 0; i < rank; ++i) {
      OP_REQUIRES(ctx, m[i] >= 0,
                  errors::InvalidArgument(op, ": multiples[", i, "] must be non-negative, got ",
                                          m[i], " (multiples ", pdk::Shape(m), ")"));
      out_dims[i] = in[i] * m[i];
      all_one = all_one && m[i] == 1;
    }
    if (all_one) {  // the output is the input, of the same shape: no copy
      ctx->set_output(0, x);
      return;
    }
    const TensorShape out_shape(out_dims);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out_shape.num_elements() == 0) return;

    // Simplify: drop dims with in == m == 1, merge neighbours both with m == 1.
    std::vector<int64_t> d, mm;
    for (int i = 0; i < rank; ++i) {
      if (in[i] == 1 && m[i] == 1) continue;
      if (m[i] == 1 && !mm.empty() && mm.back() == 1) {
        d.back() *= in[i];
      } else {
        d.push_back(in[i]);
        mm.push_back(m[i]);
      }
    }
    const int r = static_cast<int>(d.size());  // >= 1: some m != 1
    const int64_t elem =
        static_cast<int64_t>(TF_DataTypeSize(static_cast<TF_DataType>(ctx->input_dtype(0))));
    const int64_t in_row = d[r - 1] * elem, out_row = in_row * mm[r - 1];
    std::vector<int64_t> in_rows_stride(r, 1), out_d(r);  // strides in rows, over dims < r-1
    for (int i = 0; i < r; ++i) out_d[i] = d[i] * mm[i];
    for (int i = r - 3; i >= 0; --i) in_rows_stride[i] = in_rows_stride[i + 1] * d[i + 1];
    int64_t rows = 1;
    for (int i = 0; i < r - 1; ++i) rows *= out_d[i];

    const char* src = static_cast<const char*>(x.data());
    char* dst = static_cast<char*>(out->data());
    pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
        rows, Eigen::TensorOpCost(in_row, out_row, r),
        [&](Eigen::Index first, Eigen::Index last) {
          for (Eigen::Index o = first; o < last; ++o) {
            int64_t rem = o, in_r = 0;
            for (int i = r - 2; i >= 0; --i) {
              in_r += (rem % out_d[i]) % d[i] * in_rows_stride[i];
              rem /= out_d[i];
            }
            char* row = dst + o * out_row;
            std::memcpy(row, src + in_r * in_row, in_row);
            for (int64_t done = in_row; done < out_row; done *= 2)
              std::memcpy(row + done, row, std::min(done, out_row - done));
          }
        });
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
