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
// thread; the two-run reductions ([K R] -> [K], [R K] -> [K]) split their
// outputs with pdk_compute::ParallelFor instead (the same bits, no barrier).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
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

Plan Simplify(const TensorShape& shape, const std::vector<bool>& reduced) {
  Plan p;
  int i = 0;
  while (i < shape.dims() && shape.dim_size(i) == 1) ++i;  // leading 1s change nothing
  if (i == shape.dims()) return p;                          // all ones (or a scalar)
  p.reduce_first = reduced[i];
  p.runs.push_back(shape.dim_size(i));
  bool prev = reduced[i];
  for (++i; i < shape.dims(); ++i) {
    const bool r = shape.dim_size(i) == 1 ? prev : reduced[i];  // a 1 joins the current run
    if (r != prev) {
      p.runs.push_back(shape.dim_size(i));
    } else {
      p.runs.back() *= shape.dim_size(i);
    }
    prev = r;
  }
  return p;
}

// out[kept elements] = reduce(in) over the plan's reduced runs, on `dev`.
// In is the stored element type, A the accumulator type written to `out`.
template <class T, class A, class Reducer>
Status ReduceRuns(const Eigen::ThreadPoolDevice& dev, const char* op, const T* in, A* out,
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
  } else if (n == 2) {
    // [R K] -> [K] and [K R] -> [K]: outputs [k0, k1) evaluated on the
    // calling thread's DefaultDevice, blocks split by ParallelFor (the caller
    // takes part, no barrier sleep). Each block slices the whole reduction's
    // output, so every element is reduced with its own input indices, as one
    // .device(dev) evaluation does (Eigen's tree over a long inner run splits
    // at packet boundaries counted from the input's start): the same bits.
    // The split decision is Eigen's own: its cost model on the reduction's
    // per-output cost (TensorEvaluator::costPerCoeff, vectorized) and store.
    const Index kept = p.reduce_first ? g[1] : g[0];
    const Eigen::DefaultDevice one;
    const In<T, 2> x(in, g[0], g[1]);
    auto run = [&](auto axes) {
      const auto full = src(x).reduce(axes, reducer);
      using Eval = Eigen::TensorEvaluator<const decltype(full), Eigen::DefaultDevice>;
      const Eigen::TensorOpCost cost =
          Eval(full, one).costPerCoeff(/*vectorized=*/true) + Eigen::TensorOpCost(0, sizeof(A), 0);
      pdk_compute::ParallelFor(dev, kept, cost, [&](Index k0, Index k1) {
        Out<A, 1>(out + k0, k1 - k0).device(one) =
            full.slice(Eigen::DSizes<Index, 1>(k0), Eigen::DSizes<Index, 1>(k1 - k0));
      });
    };
    if (p.reduce_first) {
      run(Eigen::IndexList<type2index<0>>());  // [R K] -> [K]
    } else {
      run(Eigen::IndexList<type2index<1>>());  // [K R] -> [K]
    }
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
      return errors::Unimplemented(op, ": input needs ", n,
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
  return OkStatus();
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
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& data = ctx->input(0);
    const Tensor& axes_t = ctx->input(1);
    std::vector<int64> axes;  // reduction_indices, read flattened
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntVector(op, "reduction_indices", axes_t, &axes));
    const TensorShape& shape = data.shape();
    const int rank = shape.dims();

    std::vector<bool> reduced(rank, false);
    for (int64 a : axes) {
      OP_REQUIRES(ctx, a >= -rank && a < rank,
                  errors::InvalidArgument("Invalid reduction dimension (", a, " for input with ",
                                          rank, " dimension(s) (", op,
                                          ": reduction_indices must be in [", -rank, ", ", rank,
                                          ") for input of shape ", shape, ")"));
      const int64 axis = a < 0 ? a + rank : a;
      OP_REQUIRES(ctx, !reduced[axis],
                  errors::InvalidArgument("Invalid reduction arguments: Axes contains duplicate "
                                          "dimension: ", axis, " (", op, ": reduction_indices "
                                          "names dimension ", axis, " more than once, input "
                                          "shape ", shape, ")"));
      reduced[axis] = true;
    }
    TensorShape out_shape;
    for (int i = 0; i < rank; ++i) {
      if (!reduced[i]) {
        out_shape.AddDim(shape.dim_size(i));
      } else if (keep_dims_) {
        out_shape.AddDim(1);
      }
    }
    if (out_shape == shape) return ctx->set_output(0, data);  // nothing reduced

    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const int64 out_n = out->NumElements(), in_n = data.NumElements();
    if (out_n == 0) return;
    T* o = out->flat<T>().data();
    const Plan plan = Simplify(shape, reduced);
    if (!plan.reduces()) {  // only size-1 dimensions reduced: same elements
      std::memcpy(o, data.flat<T>().data(), sizeof(T) * static_cast<size_t>(in_n));
      return;
    }
    if (in_n == 0) {
      std::fill(o, o + out_n, EmptyValue<T, K>());
      return;
    }

    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    if constexpr (pdk_compute::kIsHalfLike<T>) {
      // float16/bfloat16: widen to float32 and reduce with the float32
      // instance (sums accumulate in float, as TF's CPU kernels do), then
      // round once.
      using Reducer = typename ReducerFor<float, K>::type;
      Tensor wide, tmp;
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, shape, &wide));
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({out_n}), &tmp));
      wide.flat<float>().device(dev) = data.flat<T>().template cast<float>();
      OP_REQUIRES_OK(ctx, (ReduceRuns<float, float, Reducer>(dev, op, wide.flat<float>().data(),
                                                              tmp.flat<float>().data(), plan)));
      const auto sums = tmp.flat<float>();
      if constexpr (K == Kind::kMean) {
        out->flat<T>().device(dev) = (sums / static_cast<float>(in_n / out_n)).template cast<T>();
      } else {
        out->flat<T>().device(dev) = sums.template cast<T>();
      }
    } else {
      using A = AccumOf<T, K>;
      using Reducer = typename ReducerFor<A, K>::type;
      if constexpr (!std::is_same_v<A, T>) {  // Mean of int32: int64 sums, then T
        Tensor tmp;
        OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<A>::value, TensorShape({out_n}),
                                               &tmp));
        OP_REQUIRES_OK(ctx, (ReduceRuns<T, A, Reducer>(dev, op, data.flat<T>().data(),
                                                        tmp.flat<A>().data(), plan)));
        out->flat<T>().device(dev) =
            (tmp.flat<A>() / static_cast<A>(in_n / out_n)).template cast<T>();
      } else {
        OP_REQUIRES_OK(ctx,
                       (ReduceRuns<T, A, Reducer>(dev, op, data.flat<T>().data(), o, plan)));
        if constexpr (K == Kind::kMean) {
          auto of = out->flat<T>();
          of.device(dev) = of / static_cast<T>(in_n / out_n);
        }
      }
    }
  }

 private:
  bool keep_dims_ = false;
};

// HOST_MEMORY: empty, or `.HostMemory("input").HostMemory("output")` for
// int32, whose tensors PDK keeps in host memory (src/host memory: docs/architecture.md).
#define PDK_REGISTER_REDUCTION_(name, T, kind, HOST_MEMORY)                          \
  REGISTER_KERNEL_BUILDER(Name(name)                                                  \
                              .Device(DEVICE_PDK)                                     \
                              .TypeConstraint<T>("T")                                 \
                              .HostMemory("reduction_indices") HOST_MEMORY,           \
                          ReductionOp<T, Kind::kind>)
#define PDK_REGISTER_REDUCTIONS_(T, HOST_MEMORY)              \
  PDK_REGISTER_REDUCTION_("Sum", T, kSum, HOST_MEMORY);       \
  PDK_REGISTER_REDUCTION_("Mean", T, kMean, HOST_MEMORY);     \
  PDK_REGISTER_REDUCTION_("Prod", T, kProd, HOST_MEMORY);     \
  PDK_REGISTER_REDUCTION_("Max", T, kMax, HOST_MEMORY);       \
  PDK_REGISTER_REDUCTION_("Min", T, kMin, HOST_MEMORY)
PDK_REGISTER_REDUCTIONS_(float, );
PDK_REGISTER_REDUCTIONS_(double, );
PDK_REGISTER_REDUCTIONS_(Eigen::half, );
PDK_REGISTER_REDUCTIONS_(Eigen::bfloat16, );
PDK_REGISTER_REDUCTIONS_(int32, .HostMemory("input").HostMemory("output"));
PDK_REGISTER_REDUCTIONS_(int64, );
REGISTER_KERNEL_BUILDER(Name("All").Device(DEVICE_PDK).HostMemory("reduction_indices"),
                        ReductionOp<bool, Kind::kAll>);
REGISTER_KERNEL_BUILDER(Name("Any").Device(DEVICE_PDK).HostMemory("reduction_indices"),
                        ReductionOp<bool, Kind::kAny>);
#undef PDK_REGISTER_REDUCTIONS_
#undef PDK_REGISTER_REDUCTION_

}  // namespace
}  // namespace tensorflow
