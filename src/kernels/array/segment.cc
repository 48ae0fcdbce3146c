// UnsortedSegmentSum / Max / Min / Prod(data, segment_ids, num_segments).
//
// Inputs: data (T), segment_ids (Tindices int32/int64; its shape a prefix of
// data's), num_segments (scalar Tnumsegments int32/int64, host memory).
// Output: T of shape [num_segments] + data.shape[rank(segment_ids):];
//   output[j, ...] = reduce over {i : segment_ids[i] == j} of data[i, ...].
// Negative ids are dropped. An empty segment holds the reduction's identity:
// 0 (Sum), 1 (Prod), numeric_limits<T>::lowest() (Max), max() (Min).
// Each output element is reduced in increasing i, as TensorFlow's CPU kernel
// does (tensorflow/core/kernels/segment_reduction_ops_impl.h), so float sums
// match it exactly; columns are split over the device's pool.
// Dtypes: T float32, float64, int32, int64.
// Errors (InvalidArgument): num_segments not a scalar or negative; data.shape
// not starting with segment_ids.shape; an id >= num_segments
// ("segment_ids[3] = 7 is out of range [0, 5)").
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

struct SumR {
  template <class T> static T Init() { return T(0); }
  template <class T> static T Apply(T a, T b) { return a + b; }
};
struct ProdR {
  template <class T> static T Init() { return T(1); }
  template <class T> static T Apply(T a, T b) { return a * b; }
};
struct MaxR {
  template <class T> static T Init() { return std::numeric_limits<T>::lowest(); }
  template <class T> static T Apply(T a, T b) { return std::max(b, a); }
};
struct MinR {
  template <class T> static T Init() { return std::numeric_limits<T>::max(); }
  template <class T> static T Apply(T a, T b) { return std::min(b, a); }
};

std::string IndexString(const pdk::Shape& shape, int64_t i) {
  std::vector<int64_t> idx(shape.rank());
  for (int k = shape.rank() - 1; k >= 0; --k) {
    idx[k] = shape[k] ? i % shape[k] : 0;
    i = shape[k] ? i / shape[k] : 0;
  }
  return idx.empty() ? std::string() : pdk::Shape(idx).ToString();
}

template <class T, class Index, class R>
class UnsortedSegmentOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor data, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor ids_t, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor num_t, ctx.input(2));
    if (num_t.rank() != 0)
      return pdk::InvalidArgument(ctx.op(), ": num_segments must be a scalar, got a tensor of shape ",
                                  num_t.shape());
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> nv, pdk::ReadIntVector(ctx.op(), "num_segments", num_t));
    const int64_t num = nv[0];
    if (num < 0)
      return pdk::InvalidArgument(ctx.op(), ": num_segments must be non-negative, got ", num);
    const pdk::Shape ds = data.shape(), is = ids_t.shape();
    bool prefix = is.rank() <= ds.rank();
    for (int k = 0; prefix && k < is.rank(); ++k) prefix = is[k] == ds[k];
    if (!prefix)
      return pdk::InvalidArgument(ctx.op(), ": data.shape ", ds,
                                  " must start with segment_ids.shape ", is);
    std::vector<int64_t> out_dims{num};
    int64_t inner = 1;
    for (int k = is.rank(); k < ds.rank(); ++k) {
      out_dims.push_back(ds[k]);
      inner *= ds[k];
    }
    const int64_t n = ids_t.num_elements();
    const Index* ids = ids_t.data<Index>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = static_cast<int64_t>(ids[i]);
      if (j >= num)
        return pdk::InvalidArgument(ctx.op(), ": segment_ids", IndexString(is, i), " = ", j,
                                    " is out of range [0, ", num, ")");
    }
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape(out_dims)));
    if (out.num_elements() == 0) return pdk::Status::OK();
    const auto& dev = pdk_compute::Device(ctx);
    pdk_compute::flat<T>(out).device(dev) =
        pdk_compute::flat<T>(out).constant(R::template Init<T>());
    if (inner == 0 || n == 0) return pdk::Status::OK();
    T* o = out.data<T>();
    const T* d = data.data<T>();
    auto reduce_cols = [&](Eigen::Index c0, Eigen::Index c1) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t j = static_cast<int64_t>(ids[i]);
        if (j < 0) continue;
        T* orow = o + j * inner;
        const T* drow = d + i * inner;
        for (Eigen::Index c = c0; c < c1; ++c) orow[c] = R::Apply(orow[c], drow[c]);
      }
    };
    if (n * inner <= (32 << 10)) {
      reduce_cols(0, inner);
    } else {
      dev.parallelFor(inner, Eigen::TensorOpCost(n * sizeof(T), n * sizeof(T), n), reduce_cols);
    }
    return pdk::Status::OK();
  }
};

template <class R>
void RegisterSegment(pdk::Registrar& r, const char* op) {
  pdk::ForEachType(pdk::TypeList<float, double, int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
      using Index = typename decltype(i)::type;
      pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto nseg) {
        r.Add(pdk::KernelDef<UnsortedSegmentOp<T, Index, R>>(op)
                  .Type("T", t)
                  .Type("Tindices", i)
                  .Type("Tnumsegments", nseg)
                  .HostMemory("num_segments"));
      });
    });
  });
}

}  // namespace

PDK_REGISTER_KERNELS(UnsortedSegment, r) {
  RegisterSegment<SumR>(r, "UnsortedSegmentSum");
  RegisterSegment<MaxR>(r, "UnsortedSegmentMax");
  RegisterSegment<MinR>(r, "UnsortedSegmentMin");
  RegisterSegment<ProdR>(r, "UnsortedSegmentProd");
}

}  // namespace pdk_kernels
