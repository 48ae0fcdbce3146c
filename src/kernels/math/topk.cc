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
#include <algorithm>
#include <numeric>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

template <class T, class I>
class TopKOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor k_t, ctx.input(1));
    const pdk::Shape in = x.shape();
    if (in.rank() < 1)
      return pdk::InvalidArgument("input must be >= 1-D, got shape ", in, " (", ctx.op(), ")");
    if (k_t.rank() != 0)
      return pdk::InvalidArgument("k must be scalar, got shape ", k_t.shape(), " (", ctx.op(),
                                  ")");
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> kv, pdk::ReadIntVector(ctx.op(), "k", k_t));
    const int64_t k = kv[0], n = in.dim(-1);
    if (k < 0)
      return pdk::InvalidArgument("Need k >= 0, got ", k, " (", ctx.op(), ": input shape ", in,
                                  ")");
    if (k > n)
      return pdk::InvalidArgument("input must have at least k columns. Had ", n, ", needed ", k,
                                  " (", ctx.op(), ": input shape ", in, ")");
    std::vector<int64_t> od = in.dims();
    od.back() = k;
    PDK_ASSIGN_OR_RETURN(pdk::Tensor values, ctx.allocate_output(0, pdk::Shape(od)));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor indices, ctx.allocate_output(1, pdk::Shape(od)));
    if (values.num_elements() == 0) return pdk::Status::OK();
    const int64_t rows = x.num_elements() / n;
    const T* src = x.data<T>();
    T* vo = values.data<T>();
    I* io = indices.data<I>();
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
      pdk_compute::Device(ctx).parallelFor(
          rows, Eigen::TensorOpCost(n * sizeof(T), k * (sizeof(T) + sizeof(I)), n * 8), do_rows);
    }
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(TopKV2, r) {
  pdk::ForEachType(pdk::TypeList<float, double, int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
      using I = typename decltype(i)::type;
      pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto kt) {
        r.Add(pdk::KernelDef<TopKOp<T, I>>("TopKV2")
                  .Type("T", t)
                  .Type("index_type", i)
                  .Type("Tk", kt)
                  .HostMemory("k"));
      });
    });
  });
}

}  // namespace pdk_kernels
