// Transpose(x, perm): output dim i is input dim perm[i].
//
// The permutation is first simplified: size-1 dims are dropped and runs of
// input dims that stay adjacent and in order are merged. What remains the
// identity (rank <= 1) is a zero-copy reshape of the input's buffer; the rest is
// a tiled (batched) 2-D transpose when that is what remains, else an Eigen
// shuffle over 1/2/4/8-byte storage (ranks 3..5) on the device's thread pool,
// or a strided loop for higher ranks.
// Errors (InvalidArgument): perm not a vector with one entry per dimension of
// x, or not a permutation; messages start with TensorFlow's wording
// (tensorflow/core/kernels/transpose_op.cc), PDK's detail follows in
// parentheses.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include "compute/transpose.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// Reduces (dims, perm) to an equivalent problem of minimal rank.
void Simplify(std::vector<int64>* dims, std::vector<int>* perm) {
  const int rank = static_cast<int>(dims->size());
  // Drop size-1 dims.
  std::vector<int> new_index(rank, -1);
  std::vector<int64> d1;
  for (int i = 0; i < rank; ++i)
    if ((*dims)[i] != 1) {
      new_index[i] = static_cast<int>(d1.size());
      d1.push_back((*dims)[i]);
    }
  std::vector<int> p1;
  for (int p : *perm)
    if (new_index[p] >= 0) p1.push_back(new_index[p]);
  // Merge runs p, p+1, ... that are consecutive in the output order.
  std::vector<std::pair<int, int>> groups;  // [first, last] input dims, in output order
  for (size_t k = 0; k < p1.size(); ++k) {
    if (!groups.empty() && groups.back().second + 1 == p1[k])
      groups.back().second = p1[k];
    else
      groups.emplace_back(p1[k], p1[k]);
  }
  std::vector<int> by_input(groups.size());
  std::iota(by_input.begin(), by_input.end(), 0);
  std::sort(by_input.begin(), by_input.end(),
            [&](int a, int b) { return groups[a].first < groups[b].first; });
  std::vector<int> rank_of(groups.size());
  dims->clear();
  for (size_t j = 0; j < by_input.size(); ++j) {
    const auto& g = groups[by_input[j]];
    rank_of[by_input[j]] = static_cast<int>(j);
    int64 n = 1;
    for (int i = g.first; i <= g.second; ++i) n *= d1[i];
    dims->push_back(n);
  }
  perm->clear();
  for (size_t k = 0; k < groups.size(); ++k) perm->push_back(rank_of[k]);
}

// Shuffles of up to this many bytes run on the calling thread: Eigen's
// thread-pool executor hands every block to the pool and the caller waits
// (two thread wake-ups, parallel_for.h). Measured on the 2-vCPU VM (kernel
// time from PDK's profiler, float32, median of 100): the LSTM's [32,80,64]
// perm (1,0,2) 15 us inline against 63-79 us on the pool; [64,64,64,16]
// perm (0,3,1,2) (16 MiB) 2.32 ms inline against 1.21 ms on the pool.
constexpr int64 kInlineShuffleBytes = int64{1} << 20;

template <class U, int N>
void EigenShuffle(const Eigen::ThreadPoolDevice& dev, const U* src, U* dst,
                  const std::vector<int64>& dims, const std::vector<int>& perm) {
  Eigen::DSizes<Eigen::DenseIndex, N> in_d, out_d;
  Eigen::array<int, N> p;
  int64 bytes = sizeof(U);
  for (int i = 0; i < N; ++i) {
    in_d[i] = dims[i];
    p[i] = perm[i];
    bytes *= dims[i];
  }
  for (int i = 0; i < N; ++i) out_d[i] = dims[perm[i]];
  auto out = pdk_compute::Mapped<U, N>(dst, out_d);
  const auto in = pdk_compute::ConstMapped<U, N>(src, in_d).shuffle(p);
  if (bytes <= kInlineShuffleBytes) {
    out = in;
  } else {
    out.device(dev) = in;
  }
}

// Any rank: each output element reads its input element through strides.
template <class U>
void StridedTranspose(const Eigen::ThreadPoolDevice& dev, const U* src, U* dst,
                      const std::vector<int64>& dims, const std::vector<int>& perm) {
  const int rank = static_cast<int>(dims.size());
  std::vector<int64> in_stride(rank, 1), out_dims(rank), src_stride(rank);
  for (int i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * dims[i + 1];
  for (int i = 0; i < rank; ++i) {
    out_dims[i] = dims[perm[i]];
    src_stride[i] = in_stride[perm[i]];
  }
  int64 total = 1;  // the output's elements
  for (int64 d : dims) total *= d;
  const int64 inner = out_dims[rank - 1], inner_stride = src_stride[rank - 1];
  const int64 rows = total / inner;
  pdk_compute::ParallelFor(dev, rows,
                           Eigen::TensorOpCost(inner * sizeof(U), inner * sizeof(U), rank),
                           [&](Eigen::Index first, Eigen::Index last) {
                             for (Eigen::Index r = first; r < last; ++r) {
                               int64 rem = r, off = 0;
                               for (int i = rank - 2; i >= 0; --i) {
                                 off += (rem % out_dims[i]) * src_stride[i];
                                 rem /= out_dims[i];
                               }
                               U* o = dst + r * inner;
                               for (int64 j = 0; j < inner; ++j) o[j] = src[off + j * inner_stride];
                             }
                           });
}

// Moves elements of `Bytes` bytes as pdk::UIntOfSizeT<Bytes> (one kernel per
// element size).
template <size_t Bytes>
class TransposeOp : public OpKernel {
 public:
  explicit TransposeOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    using U = ::pdk::UIntOfSizeT<Bytes>;
    const std::string& op = type_string();
    const Tensor& x = ctx->input(0);
    const Tensor& perm_t = ctx->input(1);
    const TensorShape& in = x.shape();
    const int rank = in.dims();
    OP_REQUIRES(ctx, perm_t.dims() == 1,
                errors::InvalidArgument("perm must be rank 1, got shape ", perm_t.shape(), " (",
                                        op, ": x of shape ", in, ")"));
    OP_REQUIRES(ctx, perm_t.NumElements() == rank,
                errors::InvalidArgument("transpose expects a vector of size ", rank,
                                        ". But input(1) is a vector of size ",
                                        perm_t.NumElements(), " (", op,
                                        ": perm must have one entry per dimension of x, shape ",
                                        in, ")"));
    std::vector<int64> pv;
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntVector(op, "perm", perm_t, &pv));
    std::vector<int> perm(rank);
    std::vector<bool> seen(rank, false);
    TensorShape out_shape;
    for (int i = 0; i < rank; ++i) {
      // As TensorFlow's CPU kernel (transpose_op.cc): a negative entry counts
      // from the end (perm [-1,-3,-2] of a rank-3 input is [2,0,1]).
      const int64 p = pv[i] < 0 && pv[i] >= -rank ? pv[i] + rank : pv[i];
      OP_REQUIRES(ctx, p >= 0 && p < rank,
                  errors::InvalidArgument(p, " is out of range [0 .. ", rank, ") (", op,
                                          ": perm[", i, "], perm ", ::pdk::Shape(pv), ")"));
      seen[p] = true;
      perm[i] = static_cast<int>(p);
      out_shape.AddDim(in.dim_size(static_cast<int>(p)));
    }
    for (int d = 0; d < rank; ++d)
      if (!seen[d]) {
        std::string listed;
        for (int i = 0; i < rank; ++i) listed += (i ? "," : "") + std::to_string(pv[i]);
        ctx->CtxFailure(errors::InvalidArgument(d, " is missing from {", listed, "}. (", op,
                                                ": perm ", ::pdk::Shape(pv),
                                                " is not a permutation)"));
        return;
      }
    std::vector<int64> dims = in.dim_sizes();
    Simplify(&dims, &perm);
    if (dims.size() <= 1 || out_shape.num_elements() == 0) {
      Tensor y;  // same bytes in the same order: x's buffer, no copy
      y.CopyFrom(x, out_shape);
      ctx->set_output(0, y);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    const U* src = static_cast<const U*>(x.data());
    U* dst = static_cast<U*>(out->data());
    if (dims.size() == 2) {  // perm [1, 0]
      pdk_compute::BatchedTranspose2D<U>(dev, src, dst, 1, dims[0], dims[1]);
      return;
    }
    if (dims.size() == 3 && perm[0] == 0 && perm[1] == 2) {  // perm [0, 2, 1]
      pdk_compute::BatchedTranspose2D<U>(dev, src, dst, dims[0], dims[1], dims[2]);
      return;
    }
    switch (dims.size()) {
      case 3: EigenShuffle<U, 3>(dev, src, dst, dims, perm); break;
      case 4: EigenShuffle<U, 4>(dev, src, dst, dims, perm); break;
      case 5: EigenShuffle<U, 5>(dev, src, dst, dims, perm); break;
      default: StridedTranspose<U>(dev, src, dst, dims, perm); break;
    }
  }
};

static_assert(std::is_same_v<pdk_compute::DataMovementTypes,
                             ::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32,
                                             int64, bool, uint8, int8, int16>>,
              "the registrations below list pdk_compute::DataMovementTypes: update them");

// T: the data-movement types (pdk_compute::DataMovementTypes), one kernel per
// element size; perm (Tperm int32/int64) in host memory.
#define PDK_REGISTER_TRANSPOSE_INDEX_(T, Index)               \
  REGISTER_KERNEL_BUILDER(Name("Transpose")                   \
                              .Device(DEVICE_PDK)             \
                              .TypeConstraint<T>("T")         \
                              .TypeConstraint<Index>("Tperm") \
                              .HostMemory("perm"),            \
                          TransposeOp<sizeof(T)>)
#define PDK_REGISTER_TRANSPOSE_(T)         \
  PDK_REGISTER_TRANSPOSE_INDEX_(T, int32); \
  PDK_REGISTER_TRANSPOSE_INDEX_(T, int64)
PDK_REGISTER_TRANSPOSE_(float);
PDK_REGISTER_TRANSPOSE_(double);
PDK_REGISTER_TRANSPOSE_(Eigen::half);
PDK_REGISTER_TRANSPOSE_(Eigen::bfloat16);
PDK_REGISTER_TRANSPOSE_(int32);
PDK_REGISTER_TRANSPOSE_(int64);
PDK_REGISTER_TRANSPOSE_(bool);
PDK_REGISTER_TRANSPOSE_(uint8);
PDK_REGISTER_TRANSPOSE_(int8);
PDK_REGISTER_TRANSPOSE_(int16);
#undef PDK_REGISTER_TRANSPOSE_
#undef PDK_REGISTER_TRANSPOSE_INDEX_

}  // namespace
}  // namespace tensorflow
