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
#include <cmath>
#include <cstdint>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

template <class T>
class InTopKOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor pred, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor targets, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor k_t, ctx.input(2));
    const pdk::Shape ps = pred.shape(), ts = targets.shape();
    if (ps.rank() != 2)
      return pdk::InvalidArgument("predictions must be 2-dimensional (", ctx.op(),
                                  ": predictions of shape ", ps, ")");
    if (ts.rank() != 1)
      return pdk::InvalidArgument("targets must be 1-dimensional (", ctx.op(),
                                  ": targets of shape ", ts, ")");
    if (ps[0] != ts[0])
      return pdk::InvalidArgument("First dimension of predictions ", ps[0],
                                  " must match length of targets ", ts[0], " (", ctx.op(), ")");
    if (k_t.rank() != 0)
      return pdk::InvalidArgument("k must be 0 D, got shape ", k_t.shape(), " (", ctx.op(), ")");
    const int64_t k = static_cast<int64_t>(k_t.data<T>()[0]);
    const int64_t rows = ps[0], classes = ps[1];
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape{rows}));
    if (rows == 0) return pdk::Status::OK();
    const float* p = pred.data<float>();
    const T* t = targets.data<T>();
    bool* o = out.data<bool>();
    pdk_compute::Device(ctx).parallelFor(
        rows, Eigen::TensorOpCost(classes * 4.0, 1, classes * 2.0),
        [&](Eigen::Index first, Eigen::Index last) {
          for (Eigen::Index b = first; b < last; ++b) {
            const float* row = p + b * classes;
            const int64_t target = static_cast<int64_t>(t[b]);
            bool cannot_say = target < 0 || target >= classes || !std::isfinite(row[target]);
            int64_t more = 0;
            if (!cannot_say) {
              const float want = row[target];
              for (int64_t c = 0; c < classes; ++c) {
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
    return pdk::Status::OK();
  }
};

PDK_REGISTER_KERNELS(NnInTopK, r) {
  pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<InTopKOp<T>>("InTopKV2").Type("T", t).HostMemory("k"));
  });
}

}  // namespace
}  // namespace pdk_kernels
