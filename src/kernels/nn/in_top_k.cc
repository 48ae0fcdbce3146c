// InTopKV2 (tensorflow/core/ops/nn_ops.cc): Keras's
// SparseTopKCategoricalAccuracy and tf.math.in_top_k.
//
//   InTopKV2(predictions float32 [B, C], targets T [B], k T (host scalar))
//     -> precision bool [B]; T in {int32, int64}
//
// precision[b] is true when fewer than k classes have a prediction strictly
// greater than predictions[b, targets[b]] (ties count for the target). False
// when targets[b] is outside [0, C) or any prediction of row b is not finite,
// as TensorFlow's CPU kernel (tensorflow/core/kernels/in_topk_op.h).
//
// Errors (InvalidArgument, TensorFlow's wording first): predictions not rank
// 2, targets not rank 1, batch sizes that differ, k not a scalar.
//
// Parallelism: rows over the device pool.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cmath>
#include <cstdint>
#include <string>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

template <class T>
class InTopKOp : public OpKernel {
 public:
  explicit InTopKOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(0);
    const Tensor& targets = ctx->input(1);
    const Tensor& k_t = ctx->input(2);
    const TensorShape& ps = pred.shape();
    const TensorShape& ts = targets.shape();
    const std::string& op = type_string();
    OP_REQUIRES(ctx, ps.dims() == 2,
                errors::InvalidArgument("predictions must be 2-dimensional (", op,
                                        ": predictions of shape ", ps, ")"));
    OP_REQUIRES(ctx, ts.dims() == 1,
                errors::InvalidArgument("targets must be 1-dimensional (", op,
                                        ": targets of shape ", ts, ")"));
    OP_REQUIRES(ctx, ps.dim_size(0) == ts.dim_size(0),
                errors::InvalidArgument("First dimension of predictions ", ps.dim_size(0),
                                        " must match length of targets ", ts.dim_size(0), " (",
                                        op, ")"));
    OP_REQUIRES(ctx, k_t.dims() == 0,
                errors::InvalidArgument("k must be 0 D, got shape ", k_t.shape(), " (", op,
                                        ")"));
    const int64 k = static_cast<int64>(static_cast<const T*>(k_t.data())[0]);
    const int64 rows = ps.dim_size(0), classes = ps.dim_size(1);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({rows}), &out));
    if (rows == 0) return;
    const float* p = pred.flat<float>().data();
    const T* t = targets.flat<T>().data();
    bool* o = out->flat<bool>().data();
    pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(), rows,
                             Eigen::TensorOpCost(classes * 4.0, 1, classes * 2.0),
                             [&](Eigen::Index first, Eigen::Index last) {
                               for (Eigen::Index b = first; b < last; ++b) {
                                 const float* row = p + b * classes;
                                 const int64 target = static_cast<int64>(t[b]);
                                 bool cannot_say =
                                     target < 0 || target >= classes || !std::isfinite(row[target]);
                                 int64 more = 0;
                                 if (!cannot_say) {
                                   const float want = row[target];
                                   for (int64 c = 0; c < classes; ++c) {
                                     if (!std::isfinite(row[c])) {
                                       cannot_say = true;
                                       break;
                                     }
                                     if (row[c] > want && ++more > k) break;
                                   }
                                 }
                                 o[b] = !cannot_say && more < k;
                               }
                             });
  }
};

#define PDK_REGISTER_IN_TOP_K_(T)                           \
  REGISTER_KERNEL_BUILDER(Name("InTopKV2")                  \
                              .Device(DEVICE_PDK)           \
                              .TypeConstraint<T>("T")       \
                              .HostMemory("k"),             \
                          InTopKOp<T>);
PDK_REGISTER_IN_TOP_K_(int32)
PDK_REGISTER_IN_TOP_K_(int64)
#undef PDK_REGISTER_IN_TOP_K_

}  // namespace
}  // namespace tensorflow
