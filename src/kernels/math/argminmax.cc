// ArgMax, ArgMin (tensorflow/core/ops/math_ops.cc):
//
//   Op(input: T, dimension: Tidx; output_type) -> output: output_type
//
// T in {float32, float64, float16, bfloat16, int32, int64}; output_type in {int32, int64};
// Tidx in {int32, int64} (dimension lives in host memory).
// `dimension` must be a scalar in [-rank, rank) (negative counts from the end);
// output shape is the input shape without that dimension. An empty reduced
// dimension is InvalidArgument, also when the output is empty (as in TF:
// "Reduction axis 1 is empty in shape [2,0]", TensorFlow's wording first);
// other empty outputs are returned as is. All errors name the op and the
// input shape.
//
// Result: the index of the first maximum (minimum) along the dimension, the
// sequential semantics of Eigen's ArgMaxTupleReducer that TF's CPU kernel
// (argmax_op.cc) evaluates: start from (index 0, lowest() / highest()) and
// replace only on a strictly greater (smaller) value. Hence ties keep the first
// index, NaN is never selected, and a dimension of only -inf (ArgMax) or only
// NaN yields 0 -- matching stock TensorFlow.
//
// Layout: the input is viewed as [outer, n, inner]. If inner == 1 each output
// is one contiguous scan (kLanes interleaved partial scans, then merged);
// otherwise work items are (outer index, block of up to kBlock inner columns),
// each scanning the n rows of its block in memory order. Items are spread over
// the device's Eigen pool with ThreadPoolDevice::parallelFor (which runs small
// inputs inline).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

constexpr int64_t kBlock = 256;
constexpr int kLanes = 16;

template <class T, class OutT, bool kMax>
class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& x = ctx->input(0);
    const Tensor& dim_t = ctx->input(1);
    const TensorShape& shape = x.shape();
    OP_REQUIRES(ctx, dim_t.dims() == 0,
                errors::InvalidArgument(op, ": dimension must be a scalar, got shape ",
                                        dim_t.shape()));
    int64_t d = 0;  // Tidx: int16, int32 or int64 in the op's def; PDK reads int32 and int64
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntScalar(op, "dimension", dim_t, &d));
    const int rank = shape.dims();
    OP_REQUIRES(ctx, d >= -rank && d < rank,
                errors::InvalidArgument(op, ": dimension ", d, " out of range: expected in [",
                                        -rank, ", ", rank, ") for input of shape ", shape));
    const int axis = static_cast<int>(d < 0 ? d + rank : d);
    int64_t outer = 1, inner = 1;
    TensorShape out_shape;
    for (int i = 0; i < rank; ++i) {
      if (i < axis) outer *= shape.dim_size(i);
      if (i > axis) inner *= shape.dim_size(i);
      if (i != axis) out_shape.AddDim(shape.dim_size(i));
    }
    const int64_t n = shape.dim_size(axis);
    // Even when the output is empty, as TF's argmax_op.cc.
    OP_REQUIRES(ctx, n != 0,
                errors::InvalidArgument("Reduction axis ", axis, " is empty in shape ", shape,
                                        " (", op, ")"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES(ctx, n - 1 <= static_cast<int64_t>(std::numeric_limits<OutT>::max()),
                errors::InvalidArgument(op, ": dimension ", axis, " of input shape ", shape,
                                        " has more elements than output_type ",
                                        pdk::DataTypeName(pdk::kDataType<OutT>), " can index"));

    const T* in = x.flat<T>().data();
    OutT* res = out->flat<OutT>().data();
    const T init = kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    const int64_t bw = std::min(inner, kBlock);          // columns per item
    const int64_t blocks = (inner + bw - 1) / bw;         // items per outer index
    auto better = [](T v, T best) { return kMax ? v > best : v < best; };
    // inner == 1: one contiguous scan per output. kLanes interleaved partial
    // scans (lane l sees elements l, l+kLanes, ...) vectorize; merging the
    // lanes by (better value, then smaller index) gives the sequential result.
    auto scan_row = [&](const T* v) -> OutT {
      T b = init;
      int64_t bi = 0, r = 0;
      // Lane state: best value and the row q (index q*kLanes + l) where it
      // was seen; same-width types let the compiler vectorize the loop.
      using LaneIdx = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
      if (n >= 4 * kLanes && n / kLanes <= std::numeric_limits<LaneIdx>::max()) {
        T lb[kLanes];
        LaneIdx li[kLanes];
        std::fill(lb, lb + kLanes, init);
        std::fill(li, li + kLanes, LaneIdx{0});
        const int64_t rows = n / kLanes;
        for (int64_t q = 0; q < rows; ++q) {
          const T* p = v + q * kLanes;
          for (int l = 0; l < kLanes; ++l) {
            const bool u = better(p[l], lb[l]);
            lb[l] = u ? p[l] : lb[l];
            li[l] = u ? static_cast<LaneIdx>(q) : li[l];
          }
        }
        for (int l = 0; l < kLanes; ++l) {
          const int64_t i = static_cast<int64_t>(li[l]) * kLanes + l;
          // A lane never updated still holds `init` and takes no part.
          if (better(lb[l], b) || (lb[l] == b && lb[l] != init && i < bi)) {
            b = lb[l];
            bi = i;
          }
        }
        r = rows * kLanes;
      }
      for (; r < n; ++r) {
        if (better(v[r], b)) {
          b = v[r];
          bi = r;
        }
      }
      return static_cast<OutT>(bi);
    };
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    if (inner == 1) {
      pdk_compute::ParallelFor(dev, outer,
                               Eigen::TensorOpCost(double(n) * sizeof(T), sizeof(OutT), double(n)),
                               [&](Index first, Index last) {
                                 for (Index o = first; o < last; ++o) res[o] = scan_row(in + o * n);
                               });
      return;
    }
    auto run = [&](Index first, Index last) {
      T best[kBlock];
      OutT idx[kBlock];
      for (Index item = first; item < last; ++item) {
        const int64_t o = item / blocks, j0 = (item % blocks) * bw;
        const int64_t w = std::min(bw, inner - j0);
        const T* base = in + o * n * inner + j0;
        std::fill(best, best + w, init);
        std::fill(idx, idx + w, OutT(0));
        for (int64_t r = 0; r < n; ++r) {
          const T* row = base + r * inner;
          for (int64_t j = 0; j < w; ++j) {
            if (better(row[j], best[j])) {
              best[j] = row[j];
              idx[j] = static_cast<OutT>(r);
            }
          }
        }
        std::copy(idx, idx + w, res + o * inner + j0);
      }
    };
    const Index items = outer * blocks;
    const double per_item = static_cast<double>(n * bw);
    pdk_compute::ParallelFor(
        dev, items, Eigen::TensorOpCost(per_item * sizeof(T), bw * sizeof(OutT), per_item), run);
  }

 private:
  using Index = Eigen::Index;
};

// An int32 argument lives in host memory, as every PDK int32 tensor does
// (docs/architecture.md, "int32 and the logical ops live in host memory"): the
// int32 input of ArgMax(int32) and the int32 output of output_type=int32. On a
// GPU both are device memory; on PDK, whose memory the host reads, a
// device-memory int32 output made TensorFlow copy it to its int32 consumers
// (Keras's accuracy metrics: ArgMax -> Cast), through the EventMgr, every step.
#define PDK_REGISTER_ARG_(T, OutT, ...)                            \
  REGISTER_KERNEL_BUILDER(Name("ArgMax")                           \
                              .Device(DEVICE_PDK)                  \
                              .TypeConstraint<T>("T")              \
                              .TypeConstraint<OutT>("output_type") \
                              .HostMemory("dimension") __VA_ARGS__, \
                          ArgOp<T, OutT, true>);                   \
  REGISTER_KERNEL_BUILDER(Name("ArgMin")                           \
                              .Device(DEVICE_PDK)                  \
                              .TypeConstraint<T>("T")              \
                              .TypeConstraint<OutT>("output_type") \
                              .HostMemory("dimension") __VA_ARGS__, \
                          ArgOp<T, OutT, false>);
#define PDK_REGISTER_ARG_ALL_(T)                         \
  PDK_REGISTER_ARG_(T, int32, .HostMemory("output"))     \
  PDK_REGISTER_ARG_(T, int64)
PDK_REGISTER_ARG_ALL_(float)
PDK_REGISTER_ARG_ALL_(double)
PDK_REGISTER_ARG_ALL_(Eigen::half)
PDK_REGISTER_ARG_ALL_(Eigen::bfloat16)
PDK_REGISTER_ARG_(int32, int32, .HostMemory("input").HostMemory("output"))
PDK_REGISTER_ARG_(int32, int64, .HostMemory("input"))
PDK_REGISTER_ARG_ALL_(int64)
#undef PDK_REGISTER_ARG_ALL_
#undef PDK_REGISTER_ARG_

}  // namespace
}  // namespace tensorflow
