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
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <string>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/nn/channel_layout.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;
template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

using ::pdk_kernels::ChannelLayout;
using ::pdk_kernels::ChannelLayoutOf;

Status ParseDataFormat(OpKernelConstruction* c, bool* nchw) {
  std::string format = "NHWC";  // BiasAddV1 has no data_format attribute
  if (c->HasAttr("data_format")) TF_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  if (format != "NHWC" && format != "NCHW")
    return errors::InvalidArgument("data_format must be \"NHWC\" or \"NCHW\", got \"", format,
                                   "\"");
  *nchw = format == "NCHW";
  return OkStatus();
}

template <class T>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ParseDataFormat(c, &nchw_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    const TensorShape& vs = value.shape();
    const TensorShape& bs = bias.shape();
    const char* op = type_string().c_str();
    OP_REQUIRES_OK(ctx, ::pdk::CheckRankAtLeast(op, "value", vs.pdk_shape(), 2));
    OP_REQUIRES_OK(ctx, ::pdk::CheckRank(op, "bias", bs.pdk_shape(), 1));
    const ChannelLayout l = ChannelLayoutOf(vs, nchw_);
    OP_REQUIRES(ctx, bs.dim_size(0) == l.channels,
                errors::InvalidArgument(
                    op, ": must provide as many biases as the channel dimension (",
                    nchw_ ? "NCHW" : "NHWC", " dimension ", l.channel_dim,
                    ") of value: bias.shape ", bs, " vs. value.shape ", vs));

    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, vs, &out));
    if (value.NumElements() == 0) return;
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();

    if (l.inner == 1) {
      // [outer, C] + bias broadcast over rows: the broadcasting helper's
      // [N, M] op [1, M] path (a vectorized loop over rows for C >= 16).
      const ::pdk::StatusOr<pdk_compute::BroadcastPlan<2>> plan = pdk_compute::PlanBroadcast<2>(
          op, {"value", "bias"}, {::pdk::Shape{l.outer, l.channels}, bs.pdk_shape()});
      OP_REQUIRES_OK(ctx, plan.status());
      pdk_compute::EvalBinary<T, T>(dev, plan.value(), value.flat<T>().data(),
                                    bias.flat<T>().data(), out->flat<T>().data(),
                                    Eigen::internal::scalar_sum_op<T>());
      return;
    }

    // NCHW with spatial dims: each of the outer*C rows of length `inner` gets
    // one scalar added — contiguous, vectorizable rows, split over the pool.
    const T* in = value.flat<T>().data();
    const T* b = bias.flat<T>().data();
    T* o = out->flat<T>().data();
    const int64 inner = l.inner, channels = l.channels;
    const Eigen::TensorOpCost row_cost(inner * sizeof(T), inner * sizeof(T), inner);
    pdk_compute::ParallelFor(dev, l.outer * channels, row_cost, [&](Index first, Index last) {
      for (Index r = first; r < last; ++r) {
        Eigen::Map<Vec<T>>(o + r * inner, inner) =
            Eigen::Map<const Vec<T>>(in + r * inner, inner) + b[r % channels];
      }
    });
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
Status ColumnSums(OpKernelContext* ctx, const T* in, int64 rows, int64 cols, A* out) {
  const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
  constexpr int64 kMinRowWidth = 512;
  const int64 k = kMinRowWidth / cols;  // rows per wide row (cols > 0)
  if (k >= 2 && rows >= 2 * k) {         // then k * cols > kMinRowWidth / 2: no second split
    const int64 wide_rows = rows / k;
    Tensor wide_t;
    TF_RETURN_IF_ERROR(
        ctx->allocate_temp(DataTypeToEnum<A>::value, TensorShape({k * cols}), &wide_t));
    A* wide = wide_t.flat<A>().data();
    TF_RETURN_IF_ERROR((ColumnSums<T, A>(ctx, in, wide_rows, k * cols, wide)));
    Eigen::Map<Vec<A>> o(out, cols);
    o = Eigen::Map<const Vec<A>>(wide, cols);
    for (int64 j = 1; j < k; ++j) o += Eigen::Map<const Vec<A>>(wide + j * cols, cols);
    for (int64 r = wide_rows * k; r < rows; ++r)
      o += Eigen::Map<const Vec<T>>(in + r * cols, cols).template cast<A>();
    return OkStatus();
  }
  constexpr int64 kMinElementsPerShard = 16 * 1024;
  const int64 shards = std::clamp<int64>(rows * cols / kMinElementsPerShard, 1,
                                         std::min<int64>(rows, 4 * dev.numThreads()));
  auto sum_rows = [in, cols](int64 r0, int64 r1, A* acc) {
    Eigen::Map<Vec<A>> a(acc, cols);
    a = Eigen::Map<const Vec<T>>(in + r0 * cols, cols).template cast<A>();
    for (int64 r = r0 + 1; r < r1; ++r)
      a += Eigen::Map<const Vec<T>>(in + r * cols, cols).template cast<A>();
  };
  if (shards == 1) {
    sum_rows(0, rows, out);
    return OkStatus();
  }
  Tensor scratch;
  TF_RETURN_IF_ERROR(
      ctx->allocate_temp(DataTypeToEnum<A>::value, TensorShape({shards, cols}), &scratch));
  A* partial = scratch.flat<A>().data();
  const int64 rows_per_shard = (rows + shards - 1) / shards;
  const double shard_elems = static_cast<double>(rows_per_shard * cols);
  pdk_compute::ParallelFor(dev, shards, Eigen::TensorOpCost(shard_elems * sizeof(T), cols * sizeof(A),
                                              shard_elems),
                  [&](Index first, Index last) {
                    for (Index s = first; s < last; ++s) {
                      const int64 r0 = s * rows_per_shard;
                      const int64 r1 = std::min(rows, r0 + rows_per_shard);
                      if (r0 < r1) {
                        sum_rows(r0, r1, partial + s * cols);
                      } else {
                        Eigen::Map<Vec<A>>(partial + s * cols, cols).setZero();
                      }
                    }
                  });
  Eigen::Map<Vec<A>> o(out, cols);
  o = Eigen::Map<const Vec<A>>(partial, cols);
  for (int64 s = 1; s < shards; ++s) o += Eigen::Map<const Vec<A>>(partial + s * cols, cols);
  return OkStatus();
}

template <class T>
class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ParseDataFormat(c, &nchw_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const TensorShape& s = dy.shape();
    OP_REQUIRES_OK(ctx, ::pdk::CheckRankAtLeast(type_string().c_str(), "out_backprop",
                                                s.pdk_shape(), 2));
    const ChannelLayout l = ChannelLayoutOf(s, nchw_);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({l.channels}), &out));
    if (l.channels == 0) return;
    T* o = out->flat<T>().data();
    if (dy.NumElements() == 0) {
      std::fill(o, o + l.channels, T(0));
      return;
    }
    using A = pdk_compute::ComputeType<T>;  // the accumulator
    Tensor acc_t;
    A* acc;
    if constexpr (pdk_compute::kIsHalfLike<T>) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({l.channels}), &acc_t));
      acc = acc_t.flat<float>().data();
    } else {
      acc = o;
    }
    const T* in = dy.flat<T>().data();
    if (l.inner == 1) {
      OP_REQUIRES_OK(ctx, (ColumnSums<T, A>(ctx, in, l.outer, l.channels, acc)));
    } else {
      // NCHW: first sum each contiguous [inner] row into a [outer, C] scratch,
      // then sum that over outer.
      const int64 inner = l.inner, rows = l.outer * l.channels;
      Tensor row_sums;
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<A>::value,
                                             TensorShape({l.outer, l.channels}), &row_sums));
      A* rs = row_sums.flat<A>().data();
      pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
          rows, Eigen::TensorOpCost(inner * sizeof(T), sizeof(A), inner),
          [&](Index first, Index last) {
            for (Index r = first; r < last; ++r)
              rs[r] = Eigen::Map<const Vec<T>>(in + r * inner, inner).template cast<A>().sum();
          });
      OP_REQUIRES_OK(ctx, (ColumnSums<A, A>(ctx, rs, l.outer, l.channels, acc)));
    }
    if constexpr (pdk_compute::kIsHalfLike<T>)
      pdk_compute::Convert<float, T>(ctx->eigen_device<Eigen::ThreadPoolDevice>(), acc, o,
                                     l.channels);
  }

 private:
  bool nchw_ = false;
};

#define PDK_REGISTER_BIAS_ADD_(T)                                                        \
  REGISTER_KERNEL_BUILDER(Name("BiasAdd").Device(DEVICE_PDK).TypeConstraint<T>("T"),     \
                          BiasAddOp<T>);                                                 \
  REGISTER_KERNEL_BUILDER(Name("BiasAddV1").Device(DEVICE_PDK).TypeConstraint<T>("T"),   \
                          BiasAddOp<T>);                                                 \
  REGISTER_KERNEL_BUILDER(Name("BiasAddGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          BiasAddGradOp<T>);
PDK_REGISTER_BIAS_ADD_(float)
PDK_REGISTER_BIAS_ADD_(double)
PDK_REGISTER_BIAS_ADD_(Eigen::half)
PDK_REGISTER_BIAS_ADD_(Eigen::bfloat16)
#undef PDK_REGISTER_BIAS_ADD_

}  // namespace
}  // namespace tensorflow
