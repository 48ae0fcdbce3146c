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
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "compute/transpose.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

// Reduces (dims, perm) to an equivalent problem of minimal rank.
void Simplify(std::vector<int64_t>* dims, std::vector<int>* perm) {
  const int rank = static_cast<int>(dims->size());
  // Drop size-1 dims.
  std::vector<int> new_index(rank, -1);
  std::vector<int64_t> d1;
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
    int64_t n = 1;
    for (int i = g.first; i <= g.second; ++i) n *= d1[i];
    dims->push_back(n);
  }
  perm->clear();
  for (size_t k = 0; k < groups.size(); ++k) perm->push_back(rank_of[k]);
}

template <class U, int N>
void EigenShuffle(const pdk::Context& ctx, const pdk::Tensor& in, const pdk::Tensor& out,
                  const std::vector<int64_t>& dims, const std::vector<int>& perm) {
  Eigen::DSizes<Eigen::DenseIndex, N> in_d, out_d;
  Eigen::array<int, N> p;
  for (int i = 0; i < N; ++i) {
    in_d[i] = dims[i];
    p[i] = perm[i];
  }
  for (int i = 0; i < N; ++i) out_d[i] = dims[perm[i]];
  pdk_compute::Mapped<U, N>(out.bits<U>(), out_d).device(pdk_compute::Device(ctx)) =
      pdk_compute::ConstMapped<U, N>(in.bits<U>(), in_d).shuffle(p);
}

// Any rank: each output element reads its input element through strides.
template <class U>
void StridedTranspose(const pdk::Context& ctx, const pdk::Tensor& in, const pdk::Tensor& out,
                      const std::vector<int64_t>& dims, const std::vector<int>& perm) {
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> in_stride(rank, 1), out_dims(rank), src_stride(rank);
  for (int i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * dims[i + 1];
  for (int i = 0; i < rank; ++i) {
    out_dims[i] = dims[perm[i]];
    src_stride[i] = in_stride[perm[i]];
  }
  const U* src = in.bits<U>();
  U* dst = out.bits<U>();
  const int64_t inner = out_dims[rank - 1], inner_stride = src_stride[rank - 1];
  const int64_t rows = out.num_elements() / inner;
  pdk_compute::Device(ctx).parallelFor(
      rows, Eigen::TensorOpCost(inner * sizeof(U), inner * sizeof(U), rank),
      [&](Eigen::Index first, Eigen::Index last) {
        for (Eigen::Index r = first; r < last; ++r) {
          int64_t rem = r, off = 0;
          for (int i = rank - 2; i >= 0; --i) {
            off += (rem % out_dims[i]) * src_stride[i];
            rem /= out_dims[i];
          }
          U* o = dst + r * inner;
          for (int64_t j = 0; j < inner; ++j) o[j] = src[off + j * inner_stride];
        }
      });
}

template <size_t Bytes>
class TransposeOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    using U = pdk::UIntOfSizeT<Bytes>;
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor perm_t, ctx.input(1));
    const pdk::Shape in = x.shape();
    const int rank = in.rank();
    if (perm_t.rank() != 1)
      return pdk::InvalidArgument("perm must be rank 1, got shape ", perm_t.shape(), " (",
                                  ctx.op(), ": x of shape ", in, ")");
    if (perm_t.num_elements() != rank)
      return pdk::InvalidArgument("transpose expects a vector of size ", rank,
                                  ". But input(1) is a vector of size ", perm_t.num_elements(),
                                  " (", ctx.op(), ": perm must have one entry per dimension of x, "
                                  "shape ", in, ")");
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> pv, pdk::ReadIntVector(ctx.op(), "perm", perm_t));
    std::vector<int> perm(rank);
    std::vector<bool> seen(rank, false);
    std::vector<int64_t> out_dims(rank);
    for (int i = 0; i < rank; ++i) {
      // As TensorFlow's CPU kernel (transpose_op.cc): a negative entry counts
      // from the end (perm [-1,-3,-2] of a rank-3 input is [2,0,1]).
      const int64_t p = pv[i] < 0 && pv[i] >= -rank ? pv[i] + rank : pv[i];
      if (p < 0 || p >= rank)
        return pdk::InvalidArgument(p, " is out of range [0 .. ", rank, ") (", ctx.op(), ": perm[",
                                    i, "], perm ", pdk::Shape(pv), ")");
      seen[p] = true;
      perm[i] = static_cast<int>(p);
      out_dims[i] = in[p];
    }
    for (int d = 0; d < rank; ++d)
      if (!seen[d]) {
        std::string listed;
        for (int i = 0; i < rank; ++i) listed += (i ? "," : "") + std::to_string(pv[i]);
        return pdk::InvalidArgument(d, " is missing from {", listed, "}. (", ctx.op(), ": perm ",
                                    pdk::Shape(pv), " is not a permutation)");
      }
    const pdk::Shape out_shape(out_dims);
    std::vector<int64_t> dims = in.dims();
    Simplify(&dims, &perm);
    if (dims.size() <= 1 || out_shape.num_elements() == 0)
      return ctx.set_output_reshaped(0, x, out_shape);  // same bytes in the same order
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    if (dims.size() == 2) {  // perm [1, 0]
      pdk_compute::BatchedTranspose2D<U>(ctx, x, out, 1, dims[0], dims[1]);
      return pdk::Status::OK();
    }
    if (dims.size() == 3 && perm[0] == 0 && perm[1] == 2) {  // perm [0, 2, 1]
      pdk_compute::BatchedTranspose2D<U>(ctx, x, out, dims[0], dims[1], dims[2]);
      return pdk::Status::OK();
    }
    switch (dims.size()) {
      case 3: EigenShuffle<U, 3>(ctx, x, out, dims, perm); break;
      case 4: EigenShuffle<U, 4>(ctx, x, out, dims, perm); break;
      case 5: EigenShuffle<U, 5>(ctx, x, out, dims, perm); break;
      default: StridedTranspose<U>(ctx, x, out, dims, perm); break;
    }
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(Transpose, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       r.Add(pdk::KernelDef<TransposeOp<sizeof(T)>>("Transpose")
                                 .Type("T", t)
                                 .Type("Tperm", i)
                                 .HostMemory("perm"));
                     });
                   });
}

}  // namespace pdk_kernels
