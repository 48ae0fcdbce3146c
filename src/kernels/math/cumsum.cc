// Cumsum / Cumprod(x, axis; exclusive, reverse): running sums (products)
// along one axis.
//
// Inputs: x (rank >= 1, T), axis (scalar Tidx int32/int64, host memory;
// negative counts from the end). Attrs: exclusive (element k excludes x[k]:
// the first output is 0 for Cumsum, 1 for Cumprod), reverse (accumulate from
// the end). Output: T, x's shape. Each line is accumulated sequentially, as
// Eigen's scan in TensorFlow's CPU kernel does, so float results match it;
// independent (outer) slabs are split over the device's pool.
// Semantics: tensorflow/core/ops/math_ops.cc (Cumsum, Cumprod).
// Dtypes: T float32, float64, int32, int64.
// Errors (InvalidArgument): axis not a scalar, or out of [-rank, rank) (so a
// scalar x is rejected, as TensorFlow does).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

struct SumOp {
  template <class T> static T Init() { return T(0); }
  template <class T> static T Apply(T a, T b) { return a + b; }
};
struct ProdOp {
  template <class T> static T Init() { return T(1); }
  template <class T> static T Apply(T a, T b) { return a * b; }
};

template <class T, class R>
class ScanOp : public OpKernel {
 public:
  explicit ScanOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("exclusive", &exclusive_));
    OP_REQUIRES_OK(c, c->GetAttr("reverse", &reverse_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    const TensorShape& in = x.shape();
    const int rank = in.dims();
    OP_REQUIRES(ctx, axis_t.dims() == 0,
                errors::InvalidArgument(type_string(),
                                        ": axis must be a scalar, got a tensor of shape ",
                                        axis_t.shape()));
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntScalar(type_string(), "axis", axis_t, &axis));
    OP_REQUIRES(ctx, axis >= -rank && axis < rank,
                errors::InvalidArgument(type_string(), ": expected axis in the range [", -rank,
                                        ", ", rank, ") for x of shape ", in, ", but got ",
                                        axis));
    if (axis < 0) axis += rank;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in, &out));
    if (in.num_elements() == 0) return;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; ++k) outer *= in.dim_size(k);
    for (int k = static_cast<int>(axis) + 1; k < rank; ++k) inner *= in.dim_size(k);
    const int64_t len = in.dim_size(static_cast<int>(axis));
    const T* src = x.flat<T>().data();
    T* dst = out->flat<T>().data();
    const bool excl = exclusive_, rev = reverse_;
    // One slab: [len, inner], accumulated along len for all inner columns.
    auto scan = [&](Eigen::Index first, Eigen::Index last) {
      std::vector<T> acc(static_cast<size_t>(inner));
      for (Eigen::Index o = first; o < last; ++o) {
        const T* s = src + o * len * inner;
        T* d = dst + o * len * inner;
        for (int64_t c = 0; c < inner; ++c) acc[c] = R::template Init<T>();
        for (int64_t step = 0; step < len; ++step) {
          const int64_t k = rev ? len - 1 - step : step;
          const T* sr = s + k * inner;
          T* dr = d + k * inner;
          if (excl) {
            for (int64_t c = 0; c < inner; ++c) {
              dr[c] = acc[c];
              acc[c] = R::Apply(acc[c], sr[c]);
            }
          } else {
            for (int64_t c = 0; c < inner; ++c) dr[c] = acc[c] = R::Apply(acc[c], sr[c]);
          }
        }
      }
    };
    const int64_t slab = len * inner;
    if (in.num_elements() <= (16 << 10)) {
      scan(0, outer);
    } else {
      pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(), outer,
                               Eigen::TensorOpCost(slab * sizeof(T), slab * sizeof(T), slab), scan);
    }
  }

 private:
  bool exclusive_ = false, reverse_ = false;
};

#define PDK_REGISTER_SCAN_(T, Tidx)                                                         \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("Cumsum").Device(DEVICE_PDK).TypeConstraint<T>("T").TypeConstraint<Tidx>("Tidx") \
          .HostMemory("axis"),                                                              \
      ScanOp<T, SumOp>);                                                                    \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("Cumprod").Device(DEVICE_PDK).TypeConstraint<T>("T").TypeConstraint<Tidx>("Tidx") \
          .HostMemory("axis"),                                                              \
      ScanOp<T, ProdOp>);
#define PDK_REGISTER_SCAN_ALL_(T) \
  PDK_REGISTER_SCAN_(T, int32)    \
  PDK_REGISTER_SCAN_(T, int64)
PDK_REGISTER_SCAN_ALL_(float)
PDK_REGISTER_SCAN_ALL_(double)
PDK_REGISTER_SCAN_ALL_(int32)
PDK_REGISTER_SCAN_ALL_(int64)
#undef PDK_REGISTER_SCAN_ALL_
#undef PDK_REGISTER_SCAN_

}  // namespace
}  // namespace tensorflow
