// TopKV2(input, k; sorted, index_type): the k largest entries of each row
// (last dimension) and their indices.
//
// Inputs: input (rank >= 1, T), k (scalar Tk int32/int64, host memory,
// 0 <= k <= input.shape[-1]). Outputs: values (T) and indices (index_type
// int32/int64), both of shape input.shape[:-1] + [k]. Entries are ordered by
// value, largest first, equal values by smaller index first (TensorFlow's
// order); the same order is produced when sorted=false (any order is valid
// then). Rows are split over the device's pool.
// Semantics: tensorflow/core/ops/nn_ops.cc (TopKV2).
// Dtypes: T float32, float64, int32, int64.
// Errors (InvalidArgument): input of rank 0, k not a scalar, k < 0,
// k > input.shape[-1]; each message starts with TensorFlow's wording
// (tensorflow/core/kernels/topk_op.cc), PDK's detail follows in parentheses.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <numeric>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

template <class T, class I>
class TopKOp : public OpKernel {
 public:
  explicit TopKOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& k_t = ctx->input(1);
    const TensorShape& in = x.shape();
    const std::string& op = type_string();
    OP_REQUIRES(ctx, in.dims() >= 1,
                errors::InvalidArgument("input must be >= 1-D, got shape ", in, " (", op, ")"));
    OP_REQUIRES(ctx, k_t.dims() == 0,
                errors::InvalidArgument("k must be scalar, got shape ", k_t.shape(), " (", op,
                                        ")"));
    int64_t k = 0;
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntScalar(op, "k", k_t, &k));
    const int64_t n = in.dim_size(in.dims() - 1);
    OP_REQUIRES(ctx, k >= 0,
                errors::InvalidArgument("Need k >= 0, got ", k, " (", op, ": input shape ", in,
                                        ")"));
    OP_REQUIRES(ctx, k <= n,
                errors::InvalidArgument("input must have at least k columns. Had ", n,
                                        ", needed ", k, " (", op, ": input shape ", in, ")"));
    TensorShape out_shape = in;
    out_shape.set_dim(out_shape.dims() - 1, k);
    Tensor* values = nullptr;
    Tensor* indices = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &values));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, out_shape, &indices));
    if (values->NumElements() == 0) return;
    const int64_t rows = x.NumElements() / n;
    const T* src = x.flat<T>().data();
    T* vo = values->flat<T>().data();
    I* io = indices->flat<I>().data();
    auto do_rows = [&](Eigen::Index first, Eigen::Index last) {
      std::vector<int64_t> idx(static_cast<size_t>(n));
      for (Eigen::Index r = first; r < last; ++r) {
        const T* row = src + r * n;
        std::iota(idx.begin(), idx.end(), int64_t{0});
        auto greater = [row](int64_t a, int64_t b) {
          return row[a] > row[b] || (!(row[b] > row[a]) && a < b);
        };
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), greater);
        for (int64_t j = 0; j < k; ++j) {
          vo[r * k + j] = row[idx[j]];
          io[r * k + j] = static_cast<I>(idx[j]);
        }
      }
    };
    if (rows * n <= (16 << 10)) {
      do_rows(0, rows);
    } else {
      pdk_compute::ParallelFor(
          ctx->eigen_device<Eigen::ThreadPoolDevice>(), rows,
          Eigen::TensorOpCost(n * sizeof(T), k * (sizeof(T) + sizeof(I)), n * 8), do_rows);
    }
  }
};

#define PDK_REGISTER_TOPK_(T, I, Tk)                          \
  REGISTER_KERNEL_BUILDER(Name("TopKV2")                      \
                              .Device(DEVICE_PDK)             \
                              .TypeConstraint<T>("T")         \
                              .TypeConstraint<I>("index_type") \
                              .TypeConstraint<Tk>("Tk")       \
                              .HostMemory("k"),               \
                          TopKOp<T, I>);
#define PDK_REGISTER_TOPK_ALL_(T)        \
  PDK_REGISTER_TOPK_(T, int32, int32)    \
  PDK_REGISTER_TOPK_(T, int32, int64)    \
  PDK_REGISTER_TOPK_(T, int64, int32)    \
  PDK_REGISTER_TOPK_(T, int64, int64)
PDK_REGISTER_TOPK_ALL_(float)
PDK_REGISTER_TOPK_ALL_(double)
PDK_REGISTER_TOPK_ALL_(int32)
PDK_REGISTER_TOPK_ALL_(int64)
#undef PDK_REGISTER_TOPK_ALL_
#undef PDK_REGISTER_TOPK_

}  // namespace
}  // namespace tensorflow
