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
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
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
class ScanOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    PDK_RETURN_IF_ERROR(a.Get("exclusive", &exclusive_));
    return a.Get("reverse", &reverse_);
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor axis_t, ctx.input(1));
    const pdk::Shape in = x.shape();
    const int rank = in.rank();
    if (axis_t.rank() != 0)
      return pdk::InvalidArgument(ctx.op(), ": axis must be a scalar, got a tensor of shape ",
                                  axis_t.shape());
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> av, pdk::ReadIntVector(ctx.op(), "axis", axis_t));
    int64_t axis = av[0];
    if (axis < -rank || axis >= rank)
      return pdk::InvalidArgument(ctx.op(), ": expected axis in the range [", -rank, ", ", rank,
                                  ") for x of shape ", in, ", but got ", axis);
    if (axis < 0) axis += rank;
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, in));
    if (in.num_elements() == 0) return pdk::Status::OK();
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; ++k) outer *= in[k];
    for (int k = static_cast<int>(axis) + 1; k < rank; ++k) inner *= in[k];
    const int64_t len = in[static_cast<int>(axis)];
    const T* src = x.data<T>();
    T* dst = out.data<T>();
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
      pdk_compute::Device(ctx).parallelFor(
          outer, Eigen::TensorOpCost(slab * sizeof(T), slab * sizeof(T), slab), scan);
    }
    return pdk::Status::OK();
  }

 private:
  bool exclusive_ = false, reverse_ = false;
};

template <class R>
void RegisterScan(pdk::Registrar& r, const char* op) {
  pdk::ForEachType(pdk::TypeList<float, double, int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
      r.Add(pdk::KernelDef<ScanOp<T, R>>(op).Type("T", t).Type("Tidx", i).HostMemory("axis"));
    });
  });
}

}  // namespace

PDK_REGISTER_KERNELS(Cumsum, r) {
  RegisterScan<SumOp>(r, "Cumsum");
  RegisterScan<ProdOp>(r, "Cumprod");
}

}  // namespace pdk_kernels
