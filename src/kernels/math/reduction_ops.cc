// Sum, Mean, Prod, Max, Min (tensorflow/core/ops/math_ops.cc):
//
//   Op(input: T, reduction_indices: Tidx; keep_dims: bool) -> output: T
//
// T in {float32, float64, float16, bfloat16, int32, int64}; Tidx in {int32,
// int64} (reduction_indices lives in host memory; any shape, read flattened).
// float16/bfloat16 inputs are widened to float32, reduced (and Mean divided)
// in float, and rounded once, as TF accumulates them in float.
//
//   All, Any(input: bool, reduction_indices: Tidx; keep_dims) -> bool: logical
//   and / or over the axes (the loss-scale optimizer's "all gradients finite");
//   empty reductions give true / false.
// Semantics follow TensorFlow's CPU kernels (reduction_ops_common.{h,cc}):
//  - axes may be negative (axis + rank); an axis outside [-rank, rank) or an
//    axis named twice (after normalization) is InvalidArgument, as in TF;
//  - output shape: input shape without the reduced axes (keep_dims: size 1);
//  - no axes: the output is the input (buffer shared);
//  - empty reductions give the reducer's identity: Sum 0, Prod 1, Max -inf
//    (lowest for ints), Min +inf (highest for ints), Mean NaN for floats and
//    0 for ints;
//  - Max/Min propagate NaN; Mean of ints is the integer quotient (truncated)
//    of the sum, which TF accumulates in int64 for int32 inputs (no overflow)
//    and in int64 (wrapping) for int64 inputs.
//
// Algorithm (the one TF's ReductionHelper::Simplify uses): drop leading size-1
// dimensions, merge every size-1 dimension into the run before it, and merge
// adjacent dimensions that are both reduced or both kept, leaving alternating
// runs [K R K R ...] or [R K R ...]. Up to three runs map onto a 1-, 2- or 3-D
// Eigen reduction with compile-time axes; more runs use one 8-D Eigen reduction
// over axes {1,3,5,7} (a size-1 kept run is prepended when the first run is
// reduced; trailing size-1 runs pad), which covers any input of rank <= 8
// except the 8 alternating non-unit runs starting with a reduced one
// (Unimplemented). Every reduction is evaluated on the device's
// Eigen::ThreadPoolDevice, whose cost model keeps small inputs on the calling
// thread.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

using Index = Eigen::DenseIndex;
template <class T, int N>
using In = Eigen::TensorMap<Eigen::Tensor<const T, N, Eigen::RowMajor, Index>>;
template <class T, int N>
using Out = Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor, Index>>;

enum class Kind { kSum, kMean, kProd, kMax, kMin, kAll, kAny };

// Eigen reducer (over accumulator type A) for each op; Mean sums, then divides.
template <class A, Kind K>
struct ReducerFor {
  using type = Eigen::internal::SumReducer<A>;
};
template <class A>
struct ReducerFor<A, Kind::kProd> {
  using type = Eigen::internal::ProdReducer<A>;
};
template <class A>
struct ReducerFor<A, Kind::kMax> {
  using type = Eigen::internal::MaxReducer<A, Eigen::PropagateNaN>;
};
template <class A>
struct ReducerFor<A, Kind::kMin> {
  using type = Eigen::internal::MinReducer<A, Eigen::PropagateNaN>;
};

template <class A>
struct ReducerFor<A, Kind::kAll> {
  using type = Eigen::internal::AndReducer;
};
template <class A>
struct ReducerFor<A, Kind::kAny> {
  using type = Eigen::internal::OrReducer;
};

// Mean of int32 accumulates in int64 (as TF does); everything else in T.
template <class T, Kind K>
using AccumOf = std::conditional_t<K == Kind::kMean && std::is_same_v<T, int32_t>, int64_t, T>;

// The input viewed as alternating runs of kept and reduced dimensions.
struct Plan {
  std::vector<int64_t> runs;
  bool reduce_first = false;
  bool reduces() const { return !runs.empty() && (runs.size() > 1 || reduce_first); }
};

Plan Simplify(const pdk::Shape& shape, const std::vector<bool>& reduced) {
  Plan p;
  int i = 0;
  while (i < shape.rank() && shape[i] == 1) ++i;  // leading 1s change nothing
  if (i == shape.rank()) return p;                // all ones (or a scalar)
  p.reduce_first = reduced[i];
  p.runs.push_back(shape[i]);
  bool prev = reduced[i];
  for (++i; i < shape.rank(); ++i) {
    const bool r = shape[i] == 1 ? prev : reduced[i];  // a 1 joins the current run
    if (r != prev) {
      p.runs.push_back(shape[i]);
    } else {
      p.runs.back() *= shape[i];
    }
    prev = r;
  }
  return p;
}

// out[kept elements] = reduce(in) over the plan's reduced runs, on `dev`.
// In is the stored element type, A the accumulator type written to `out`.
template <class T, class A, class Reducer>
pdk::Status ReduceRuns(const Eigen::ThreadPoolDevice& dev, const char* op, const T* in, A* out,
                       const Plan& p) {
  const Reducer reducer;
  const std::vector<int64_t>& g = p.runs;
  const int n = static_cast<int>(g.size());
  auto src = [](auto x) {
    if constexpr (std::is_same_v<T, A>) {
      return x;
    } else {
      return x.template cast<A>();
    }
  };
  using Eigen::type2index;
  if (n == 1) {  // [R] -> scalar
    Out<A, 0>(out).device(dev) =
        src(In<T, 1>(in, g[0])).reduce(Eigen::IndexList<type2index<0>>(), reducer);
  } else if (n == 2 && p.reduce_first) {  // [R K] -> [K]
    Out<A, 1>(out, g[1]).device(dev) =
        src(In<T, 2>(in, g[0], g[1])).reduce(Eigen::IndexList<type2index<0>>(), reducer);
  } else if (n == 2) {  // [K R] -> [K]
    Out<A, 1>(out, g[0]).device(dev) =
        src(In<T, 2>(in, g[0], g[1])).reduce(Eigen::IndexList<type2index<1>>(), reducer);
  } else if (n == 3 && p.reduce_first) {  // [R K R] -> [K]
    Out<A, 1>(out, g[1]).device(dev) =
        src(In<T, 3>(in, g[0], g[1], g[2]))
            .reduce(Eigen::IndexList<type2index<0>, type2index<2>>(), reducer);
  } else if (n == 3) {  // [K R K] -> [K K]
    Out<A, 2>(out, g[0], g[2]).device(dev) =
        src(In<T, 3>(in, g[0], g[1], g[2])).reduce(Eigen::IndexList<type2index<1>>(), reducer);
  } else {  // [K R K R K R K R] -> [K K K K]
    Eigen::DSizes<Index, 8> d;
    for (int i = 0; i < 8; ++i) d[i] = 1;
    const int first = p.reduce_first ? 1 : 0;
    if (first + n > 8) {
      return pdk::Unimplemented(op, ": input needs ", n,
                                " alternating reduced/kept dimension runs starting with a reduced "
                                "one; at most 7 are supported");
    }
    for (int i = 0; i < n; ++i) d[first + i] = g[i];
    Out<A, 4>(out, d[0], d[2], d[4], d[6]).device(dev) =
        src(In<T, 8>(in, d))
            .reduce(Eigen::IndexList<type2index<1>, type2index<3>, type2index<5>,
                                     type2index<7>>(),
                    reducer);
  }
  return pdk::Status::OK();
}

// The value of a reduction over zero elements.
template <class T, Kind K>
T EmptyValue() {
  if constexpr (K == Kind::kMean) {
    if constexpr (std::numeric_limits<T>::has_quiet_NaN) {  // floats, half, bfloat16
      return std::numeric_limits<T>::quiet_NaN();
    } else {
      return T(0);  // TF's integer Mean of nothing
    }
  } else {
    return typename ReducerFor<T, K>::type().initialize();  // 0, 1, -inf/lowest, +inf/highest
  }
}

template <class T, Kind K>
class ReductionOp {
 public:
  pdk::Status Init(const pdk::Attrs& attrs) { return attrs.Get("keep_dims", &keep_dims_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    const char* op = ctx.op();
    PDK_ASSIGN_OR_RETURN(pdk::Tensor data, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor axes_t, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                         pdk::ReadIntVector(op, "reduction_indices", axes_t));
    const pdk::Shape shape = data.shape();
    const int rank = shape.rank();

    std::vector<bool> reduced(rank, false);
    for (int64_t a : axes) {
      if (a < -rank || a >= rank) {
        return pdk::InvalidArgument("Invalid reduction dimension (", a, " for input with ", rank,
                                    " dimension(s) (", op, ": reduction_indices must be in [",
                                    -rank, ", ", rank, ") for input of shape ", shape, ")");
      }
      const int64_t axis = a < 0 ? a + rank : a;
      if (reduced[axis]) {
        return pdk::InvalidArgument("Invalid reduction arguments: Axes contains duplicate "
                                    "dimension: ", axis, " (", op, ": reduction_indices names "
                                    "dimension ", axis, " more than once, input shape ", shape,
                                    ")");
      }
      reduced[axis] = true;
    }
    pdk::Shape out_shape;
    for (int i = 0; i < rank; ++i) {
      if (!reduced[i]) {
        out_shape.push_back(shape[i]);
      } else if (keep_dims_) {
        out_shape.push_back(1);
      }
    }
    if (out_shape == shape) return ctx.set_output(0, data);  // nothing reduced

    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    const int64_t out_n = out.num_elements(), in_n = data.num_elements();
    if (out_n == 0) return pdk::Status::OK();
    T* o = out.data<T>();
    const Plan plan = Simplify(shape, reduced);
    if (!plan.reduces()) {  // only size-1 dimensions reduced: same elements
      std::memcpy(o, data.data<T>(), sizeof(T) * static_cast<size_t>(in_n));
      return pdk::Status::OK();
    }
    if (in_n == 0) {
      std::fill(o, o + out_n, EmptyValue<T, K>());
      return pdk::Status::OK();
    }

    const Eigen::ThreadPoolDevice& dev = pdk_compute::Device(ctx);
    if constexpr (pdk_compute::kIsHalfLike<T>) {
      // float16/bfloat16: widen to float32 and reduce with the float32
      // instance (sums accumulate in float, as TF's CPU kernels do), then
      // round once.
      using Reducer = typename ReducerFor<float, K>::type;
      PDK_ASSIGN_OR_RETURN(pdk::Tensor wide, pdk_compute::WidenToFloat<T>(ctx, data));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor tmp, ctx.allocate_temp(TF_FLOAT, {out_n}));
      PDK_RETURN_IF_ERROR((ReduceRuns<float, float, Reducer>(dev, op, wide.data<float>(),
                                                             tmp.data<float>(), plan)));
      auto sums = pdk_compute::cflat<float>(tmp);
      if constexpr (K == Kind::kMean) {
        pdk_compute::flat<T>(out).device(dev) =
            (sums / static_cast<float>(in_n / out_n)).template cast<T>();
      } else {
        pdk_compute::flat<T>(out).device(dev) = sums.template cast<T>();
      }
      return pdk::Status::OK();
    } else {
      using A = AccumOf<T, K>;
      using Reducer = typename ReducerFor<A, K>::type;
      if constexpr (!std::is_same_v<A, T>) {  // Mean of int32: int64 sums, then T
        PDK_ASSIGN_OR_RETURN(pdk::Tensor tmp, ctx.allocate_temp(pdk::kDataType<A>, {out_n}));
        PDK_RETURN_IF_ERROR(
            (ReduceRuns<T, A, Reducer>(dev, op, data.data<T>(), tmp.data<A>(), plan)));
        pdk_compute::flat<T>(out).device(dev) =
            (pdk_compute::cflat<A>(tmp) / static_cast<A>(in_n / out_n)).template cast<T>();
        return pdk::Status::OK();
      } else {
        PDK_RETURN_IF_ERROR((ReduceRuns<T, A, Reducer>(dev, op, data.data<T>(), o, plan)));
        if constexpr (K == Kind::kMean) {
          auto of = pdk_compute::flat<T>(out);
          of.device(dev) = of / static_cast<T>(in_n / out_n);
        }
        return pdk::Status::OK();
      }
    }
  }

 private:
  bool keep_dims_ = false;
};

}  // namespace

PDK_REGISTER_KERNELS(Reductions, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t>{},
                   [&](auto t) {
    using T = typename decltype(t)::type;
    auto add = [&](auto kernel, const char* name) {
      using K = typename decltype(kernel)::type;
      r.Add(pdk::KernelDef<K>(name).template Type<T>("T").HostMemory("reduction_indices"));
    };
    add(pdk::TypeTag<ReductionOp<T, Kind::kSum>>{}, "Sum");
    add(pdk::TypeTag<ReductionOp<T, Kind::kMean>>{}, "Mean");
    add(pdk::TypeTag<ReductionOp<T, Kind::kProd>>{}, "Prod");
    add(pdk::TypeTag<ReductionOp<T, Kind::kMax>>{}, "Max");
    add(pdk::TypeTag<ReductionOp<T, Kind::kMin>>{}, "Min");
  });
  r.Add(pdk::KernelDef<ReductionOp<bool, Kind::kAll>>("All").HostMemory("reduction_indices"));
  r.Add(pdk::KernelDef<ReductionOp<bool, Kind::kAny>>("Any").HostMemory("reduction_indices"));
}

}  // namespace pdk_kernels
