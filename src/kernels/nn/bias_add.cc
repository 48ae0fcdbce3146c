// BiasAdd, BiasAddV1, BiasAddGrad (tensorflow/core/ops/nn_ops.cc).
//
//   BiasAdd(value, bias)[..., c, ...] = value[..., c, ...] + bias[c]
//   BiasAddGrad(dy)[c]                = sum of dy over every dimension but c
//
// The channel dimension c is the last one for data_format "NHWC" (and always
// for BiasAddV1, which has no data_format), and dimension 1 for "NCHW" — for
// any rank >= 2, as TensorFlow's CPU kernels do (a rank-2 NCHW value thus
// has its channels last as well). value must be at least rank 2, bias rank 1.
//
// Both views reduce to [outer, C, inner] with inner = 1 for NHWC.
//
// T in {float32, float64, float16, bfloat16}. BiasAdd adds in T (Eigen's
// 16-bit arithmetic: float add, one rounding); BiasAddGrad accumulates the
// 16-bit floats in float32 and rounds the sums once, as TensorFlow does.
#include <algorithm>
#include <string>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

using Index = Eigen::Index;
template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

struct ChannelLayout {
  int channel_dim;
  int64_t outer, channels, inner;
};

ChannelLayout LayoutOf(const pdk::Shape& s, bool nchw) {
  ChannelLayout l;
  l.channel_dim = nchw ? 1 : s.rank() - 1;
  l.channels = s[l.channel_dim];
  l.outer = 1;
  l.inner = 1;
  for (int i = 0; i < l.channel_dim; ++i) l.outer *= s[i];
  for (int i = l.channel_dim + 1; i < s.rank(); ++i) l.inner *= s[i];
  return l;
}

pdk::Status ParseDataFormat(const pdk::Attrs& a, bool* nchw) {
  std::string format = "NHWC";  // BiasAddV1 has no data_format attribute
  PDK_RETURN_IF_ERROR(a.GetOptional("data_format", &format));
  if (format != "NHWC" && format != "NCHW")
    return pdk::InvalidArgument("data_format must be \"NHWC\" or \"NCHW\", got \"", format,
                                "\"");
  *nchw = format == "NCHW";
  return pdk::Status::OK();
}

template <class T>
class BiasAddOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return ParseDataFormat(a, &nchw_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor value, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor bias, ctx.input(1));
    const pdk::Shape vs = value.shape(), bs = bias.shape();
    PDK_RETURN_IF_ERROR(pdk::CheckRankAtLeast(ctx.op(), "value", vs, 2));
    PDK_RETURN_IF_ERROR(pdk::CheckRank(ctx.op(), "bias", bs, 1));
    const ChannelLayout l = LayoutOf(vs, nchw_);
    if (bs[0] != l.channels)
      return pdk::InvalidArgument(
          ctx.op(), ": must provide as many biases as the channel dimension (",
          nchw_ ? "NCHW" : "NHWC", " dimension ", l.channel_dim, ") of value: bias.shape ", bs,
          " vs. value.shape ", vs);

    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.forward_or_allocate_output({0}, 0, vs));
    if (value.num_elements() == 0) return pdk::Status::OK();
    const auto& dev = pdk_compute::Device(ctx);

    if (l.inner == 1) {
      // [outer, C] + bias broadcast over rows: the broadcasting helper's
      // [N, M] op [1, M] path (a vectorized loop over rows for C >= 16).
      PDK_ASSIGN_OR_RETURN(pdk_compute::BroadcastPlan<2> plan,
                           pdk_compute::PlanBroadcast<2>(ctx.op(), {"value", "bias"},
                                                         {pdk::Shape{l.outer, l.channels}, bs}));
      pdk_compute::EvalBinary<T, T>(dev, plan, value.data<T>(), bias.data<T>(), out.data<T>(),
                                    Eigen::internal::scalar_sum_op<T>());
      return pdk::Status::OK();
    }

    // NCHW with spatial dims: each of the outer*C rows of length `inner` gets
    // one scalar added — contiguous, vectorizable rows, split over the pool.
    const T* in = value.data<T>();
    const T* b = bias.data<T>();
    T* o = out.data<T>();
    const int64_t inner = l.inner, channels = l.channels;
    const Eigen::TensorOpCost row_cost(inner * sizeof(T), inner * sizeof(T), inner);
    dev.parallelFor(l.outer * channels, row_cost, [&](Index first, Index last) {
      for (Index r = first; r < last; ++r) {
        Eigen::Map<Vec<T>>(o + r * inner, inner) =
            Eigen::Map<const Vec<T>>(in + r * inner, inner) + b[r % channels];
      }
    });
    return pdk::Status::OK();
  }

 private:
  bool nchw_ = false;
};

// out[c] = sum_r in[r, c] for a row-major [rows, cols] matrix, accumulated in A
// (float for the 16-bit floats, as TensorFlow's BiasAddGrad does).
//
// The rows are split into shards, each summed into its own row of a scratch
// [shards, cols] buffer by one pool task (contiguous, vectorized adds); the
// few partial rows are then added up. Summation order therefore differs from
// TensorFlow's, within float rounding.
//
// Narrow matrices (cols <= kMinRowWidth / 2, e.g. 32 channels) are first summed as
// [rows / k, k * cols] rows of at least kMinRowWidth elements, then the k
// partial sums of each column folded: one short row per add costs more in
// loop overhead than in adds (BiasAddGrad on [32,32,32,32] was 1.3x
// TensorFlow's time).
template <class T, class A>
pdk::Status ColumnSums(pdk::Context& ctx, const T* in, int64_t rows, int64_t cols, A* out) {
  const auto& dev = pdk_compute::Device(ctx);
  constexpr int64_t kMinRowWidth = 512;
  const int64_t k = kMinRowWidth / cols;  // rows per wide row (cols > 0)
  if (k >= 2 && rows >= 2 * k) {           // then k * cols > kMinRowWidth / 2: no second split
    const int64_t wide_rows = rows / k;
    PDK_ASSIGN_OR_RETURN(pdk::Tensor wide_t,
                         ctx.allocate_temp(pdk::kDataType<A>, pdk::Shape{k * cols}));
    A* wide = wide_t.data<A>();
    PDK_RETURN_IF_ERROR((ColumnSums<T, A>(ctx, in, wide_rows, k * cols, wide)));
    Eigen::Map<Vec<A>> o(out, cols);
    o = Eigen::Map<const Vec<A>>(wide, cols);
    for (int64_t j = 1; j < k; ++j) o += Eigen::Map<const Vec<A>>(wide + j * cols, cols);
    for (int64_t r = wide_rows * k; r < rows; ++r)
      o += Eigen::Map<const Vec<T>>(in + r * cols, cols).template cast<A>();
    return pdk::Status::OK();
  }
  constexpr int64_t kMinElementsPerShard = 16 * 1024;
  const int64_t shards = std::clamp<int64_t>(rows * cols / kMinElementsPerShard, 1,
                                             std::min<int64_t>(rows, 4 * dev.numThreads()));
  auto sum_rows = [in, cols](int64_t r0, int64_t r1, A* acc) {
    Eigen::Map<Vec<A>> a(acc, cols);
    a = Eigen::Map<const Vec<T>>(in + r0 * cols, cols).template cast<A>();
    for (int64_t r = r0 + 1; r < r1; ++r)
      a += Eigen::Map<const Vec<T>>(in + r * cols, cols).template cast<A>();
  };
  if (shards == 1) {
    sum_rows(0, rows, out);
    return pdk::Status::OK();
  }
  PDK_ASSIGN_OR_RETURN(pdk::Tensor scratch,
                       ctx.allocate_temp(pdk::kDataType<A>, pdk::Shape{shards, cols}));
  A* partial = scratch.data<A>();
  const int64_t rows_per_shard = (rows + shards - 1) / shards;
  const double shard_elems = static_cast<double>(rows_per_shard * cols);
  dev.parallelFor(shards, Eigen::TensorOpCost(shard_elems * sizeof(T), cols * sizeof(A),
                                              shard_elems),
                  [&](Index first, Index last) {
                    for (Index s = first; s < last; ++s) {
                      const int64_t r0 = s * rows_per_shard;
                      const int64_t r1 = std::min(rows, r0 + rows_per_shard);
                      if (r0 < r1) {
                        sum_rows(r0, r1, partial + s * cols);
                      } else {
                        Eigen::Map<Vec<A>>(partial + s * cols, cols).setZero();
                      }
                    }
                  });
  Eigen::Map<Vec<A>> o(out, cols);
  o = Eigen::Map<const Vec<A>>(partial, cols);
  for (int64_t s = 1; s < shards; ++s) o += Eigen::Map<const Vec<A>>(partial + s * cols, cols);
  return pdk::Status::OK();
}

template <class T>
class BiasAddGradOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return ParseDataFormat(a, &nchw_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dy, ctx.input(0));
    const pdk::Shape s = dy.shape();
    PDK_RETURN_IF_ERROR(pdk::CheckRankAtLeast(ctx.op(), "out_backprop", s, 2));
    const ChannelLayout l = LayoutOf(s, nchw_);
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape{l.channels}));
    if (l.channels == 0) return pdk::Status::OK();
    T* o = out.data<T>();
    if (dy.num_elements() == 0) {
      std::fill(o, o + l.channels, T(0));
      return pdk::Status::OK();
    }
    using A = pdk_compute::ComputeType<T>;  // the accumulator
    pdk::Tensor acc_t;
    A* acc;
    if constexpr (pdk_compute::kIsHalfLike<T>) {
      PDK_ASSIGN_OR_RETURN(acc_t, ctx.allocate_temp(TF_FLOAT, pdk::Shape{l.channels}));
      acc = acc_t.data<float>();
    } else {
      acc = o;
    }
    const T* in = dy.data<T>();
    if (l.inner == 1) {
      PDK_RETURN_IF_ERROR((ColumnSums<T, A>(ctx, in, l.outer, l.channels, acc)));
    } else {
      // NCHW: first sum each contiguous [inner] row into a [outer, C] scratch,
      // then sum that over outer.
      const int64_t inner = l.inner, rows = l.outer * l.channels;
      PDK_ASSIGN_OR_RETURN(pdk::Tensor row_sums, ctx.allocate_temp(pdk::kDataType<A>,
                                                                   pdk::Shape{l.outer, l.channels}));
      A* rs = row_sums.data<A>();
      pdk_compute::Device(ctx).parallelFor(
          rows, Eigen::TensorOpCost(inner * sizeof(T), sizeof(A), inner),
          [&](Index first, Index last) {
            for (Index r = first; r < last; ++r)
              rs[r] = Eigen::Map<const Vec<T>>(in + r * inner, inner).template cast<A>().sum();
          });
      PDK_RETURN_IF_ERROR((ColumnSums<A, A>(ctx, rs, l.outer, l.channels, acc)));
    }
    if constexpr (pdk_compute::kIsHalfLike<T>)
      pdk_compute::Convert<float, T>(pdk_compute::Device(ctx), acc, o, l.channels);
    return pdk::Status::OK();
  }

 private:
  bool nchw_ = false;
};

}  // namespace

PDK_REGISTER_KERNELS(NnBiasAdd, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<BiasAddOp<T>>("BiasAdd").Type("T", t));
    r.Add(pdk::KernelDef<BiasAddOp<T>>("BiasAddV1").Type("T", t));
    r.Add(pdk::KernelDef<BiasAddGradOp<T>>("BiasAddGrad").Type("T", t));
  });
}

}  // namespace pdk_kernels
