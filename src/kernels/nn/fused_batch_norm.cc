// FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3 and their gradients
// FusedBatchNormGrad, FusedBatchNormGradV2, FusedBatchNormGradV3
// (op definitions: tensorflow/core/ops/nn_ops.cc; the semantics below follow
// TensorFlow's Eigen CPU kernel, tensorflow/core/kernels/fused_batch_norm_op.cc).
//
// Types: T is the element type of x, y, y_backprop and x_backprop; U that of
// scale, offset, mean, variance and the reserve spaces. Registered:
//   FusedBatchNorm, FusedBatchNormGrad:            T = float (U = T)
//   FusedBatchNormV2/V3, FusedBatchNormGradV2/V3:  T = float, half, bfloat16; U = float
// Every elementwise formula is evaluated in U (float) and the result cast to T,
// as TF does; the per-channel sums are accumulated in double (TF sums in float),
// so PDK is at least as accurate and agrees with TF within float rounding.
//
// Shapes: x is rank 4 (N,H,W,C / N,C,H,W) or rank 5 (N,D,H,W,C / N,C,D,H,W);
// the channel dimension is the last one for data_format "NHWC"/"NDHWC" and
// dimension 1 for "NCHW"/"NCDHW". scale, offset (and, when used, mean and
// variance) are rank 1 with C elements. With n = number of elements per channel
// (N*H*W[*D]), the forward op computes, per channel c:
//
//   is_training = true:
//     batch_mean  m = sum(x) / n
//     batch_var   v = sum((x - m)^2) / n                       (biased)
//     y = (x - m) * (rsqrt(v + epsilon) * scale) + offset
//     output 1 (batch_mean)     = f == 1 ? m : (1 - f) * mean + f * m
//     output 2 (batch_variance) = f == 1 ? v * n/(n-1) : (1 - f) * variance + f * n/(n-1) * v
//       (f = exponential_avg_factor; n/(n-1) is Bessel's correction, 1 when n == 1)
//     reserve_space_1 = m, reserve_space_2 = v                 (what TF's CPU kernel saves)
//   is_training = false:
//     y = (x - mean) * (rsqrt(variance + epsilon) * scale) + offset
//     outputs 1, 2 = mean, variance; reserve_space_1, 2 = mean, variance
//       (TF's Eigen kernel leaves them unwritten, its oneDNN kernel copies them)
//   reserve_space_3 (V3 only) = a scalar 0 of type U (unused on CPU, as in TF's
//   Eigen kernel; TF's oneDNN float32 kernel returns shape [0] instead).
//   Empty x: outputs 1, 2 are NaN, reserve spaces 1, 2 are 0.
//
// The gradient op takes y_backprop (dy), x, scale, reserve_space_1 (mean),
// reserve_space_2 (variance) [, reserve_space_3, ignored] and computes, with
// k = rsqrt(variance + epsilon), xc = x - mean:
//   is_training = true (mean, variance = the batch statistics saved by the forward op):
//     offset_backprop = sum(dy)
//     scale_backprop  = sum(dy * xc) * k
//     x_backprop = scale * k * (dy - sum(dy)/n - xc * k^2 * sum(dy * xc)/n)
//   is_training = false (mean, variance = the population statistics; NHWC only, as in TF):
//     offset_backprop = sum(dy), scale_backprop = sum(dy * xc) * k,
//     x_backprop = dy * (scale * k)
//   Outputs 3 and 4 (reserve_space_3/4) are empty, shape [0]. Empty x gives
//   zero scale/offset gradients.
//
// Errors (InvalidArgument, naming op, operand, expected and actual): x (or
// y_backprop) not rank 4 or 5; scale/offset/mean/variance not rank 1 or not C
// elements (mean/variance are only checked when they are read); x and
// y_backprop of different shapes; an unknown data_format (at construction);
// is_training = false gradient in a channels-first format.
//
// Parallelism: per-channel sums shard the rows over the device pool (each shard
// accumulates a [C] double vector, shards are added in order, so results are
// deterministic); elementwise passes split rows (channels-last) or the
// contiguous (n, c) runs (channels-first) over the pool.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/nn/channel_layout.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;
template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using CMap = Eigen::Map<const Vec<T>>;
template <class T>
using MMap = Eigen::Map<Vec<T>>;

// x viewed as [outer, C, inner] (kernels/nn/channel_layout.h).
using Layout = ::pdk_kernels::ChannelLayout;
using ::pdk_kernels::ChannelLayoutOf;

// Reads attribute `name` into *v if the node has it, else leaves the default.
template <class V>
Status GetOptionalAttr(OpKernelConstruction* c, const char* name, V* v) {
  return c->HasAttr(name) ? c->GetAttr(name, v) : OkStatus();
}

// Decodes data_format: "NHWC"/"NDHWC" (channels last) or "NCHW"/"NCDHW".
Status ParseFormat(OpKernelConstruction* c, std::string* format, bool* channels_first) {
  TF_RETURN_IF_ERROR(GetOptionalAttr(c, "data_format", format));
  if (*format == "NHWC" || *format == "NDHWC") {
    *channels_first = false;
  } else if (*format == "NCHW" || *format == "NCDHW") {
    *channels_first = true;
  } else {
    return errors::InvalidArgument("data_format must be one of NHWC, NDHWC, NCHW, NCDHW, got \"",
                                   *format, "\"");
  }
  return OkStatus();
}

// Parameter views handed to the per-run bodies: a channels-last row sees every
// channel (pick(v) is the [C] vector), a channels-first run sees one (v[c]).
struct RowPick {
  int64_t channels;
  template <class U>
  CMap<U> operator()(const U* v) const {
    return CMap<U>(v, channels);
  }
};
struct RunPick {
  int64_t c;
  template <class U>
  U operator()(const U* v) const {
    return v[c];
  }
};

// Accumulators for the same two views: a row adds a [C] vector per sum, a run
// adds the sum of its elements to one scalar per sum.
struct RowAcc {
  double* sums;
  int64_t channels;
  MMap<double> operator()(int k) const { return MMap<double>(sums + k * channels, channels); }
};
struct RunAcc {
  double* sums;
  struct Slot {
    double* p;
    template <class E>
    void operator+=(const E& e) {
      *p += e.sum();
    }
  };
  Slot operator()(int k) const { return Slot{sums + k}; }
};

// Calls body(offset, length, pick) for every row (channels-last) or run
// (channels-first) of the tensor, in parallel. `cost` is per element.
template <class Body>
void ForEachRun(const Eigen::ThreadPoolDevice& dev, const Layout& l,
                const Eigen::TensorOpCost& cost, Body&& body) {
  if (l.inner == 1) {
    const int64_t c = l.channels;
    pdk_compute::ParallelFor(dev, l.outer, cost * static_cast<double>(c),
                             [&](Index first, Index last) {
                               for (Index r = first; r < last; ++r) body(r * c, c, RowPick{c});
                             });
  } else {
    const int64_t inner = l.inner, c = l.channels;
    pdk_compute::ParallelFor(dev, l.outer * c, cost * static_cast<double>(inner),
                             [&](Index first, Index last) {
                               for (Index r = first; r < last; ++r)
                                 body(r * inner, inner, RunPick{r % c});
                             });
  }
}

// out[k * C + c] = sum over the elements of channel c of the k-th term that
// body(offset, length, pick, acc) adds with `acc(k) += expr` (double
// expressions), k < K. Channels-last rows are split into at most
// 4 * threads shards, each with its own [K, C] partial sums, added in shard
// order; channels-first runs are summed one per task and then added per
// channel in order. Both orders are fixed, so the result is deterministic.
template <int K, class Body>
Status ChannelSums(OpKernelContext* ctx, const Layout& l, Body&& body, std::vector<double>* out) {
  const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
  const int64_t c = l.channels;
  out->assign(static_cast<size_t>(K * c), 0.0);
  if (l.per_channel() == 0 || c == 0) return OkStatus();
  if (l.inner == 1) {
    const int64_t rows = l.outer;
    constexpr int64_t kMinElementsPerShard = 16 * 1024;
    const int64_t shards = std::clamp<int64_t>(rows * c / kMinElementsPerShard, 1,
                                               std::min<int64_t>(rows, 4 * dev.numThreads()));
    Tensor scratch;
    TF_RETURN_IF_ERROR(ctx->allocate_temp(DT_DOUBLE, TensorShape({shards, K * c}), &scratch));
    double* partial = scratch.flat<double>().data();
    std::fill(partial, partial + shards * K * c, 0.0);
    const int64_t per_shard = (rows + shards - 1) / shards;
    const double elems = static_cast<double>(per_shard * c);
    pdk_compute::ParallelFor(dev, shards,
                             Eigen::TensorOpCost(elems * 8, K * c * 8.0, elems * 4 * K),
                             [&](Index first, Index last) {
                               for (Index s = first; s < last; ++s) {
                                 const RowAcc acc{partial + s * K * c, c};
                                 const int64_t r1 = std::min(rows, (s + 1) * per_shard);
                                 for (int64_t r = s * per_shard; r < r1; ++r)
                                   body(r * c, c, RowPick{c}, acc);
                               }
                             });
    MMap<double> o(out->data(), K * c);
    for (int64_t s = 0; s < shards; ++s) o += CMap<double>(partial + s * K * c, K * c);
    return OkStatus();
  }
  const int64_t runs = l.outer * c, inner = l.inner;
  Tensor scratch;
  TF_RETURN_IF_ERROR(ctx->allocate_temp(DT_DOUBLE, TensorShape({runs, K}), &scratch));
  double* run_sums = scratch.flat<double>().data();
  pdk_compute::ParallelFor(dev, runs, Eigen::TensorOpCost(inner * 8.0, K * 8.0, inner * 4.0 * K),
                           [&](Index first, Index last) {
                             for (Index r = first; r < last; ++r) {
                               double* s = run_sums + r * K;
                               std::fill(s, s + K, 0.0);
                               body(r * inner, inner, RunPick{r % c}, RunAcc{s});
                             }
                           });
  for (int64_t r = 0; r < runs; ++r)
    for (int k = 0; k < K; ++k) (*out)[k * c + r % c] += run_sums[r * K + k];
  return OkStatus();
}

// `op: name must be rank 1 with C elements (the channels of x, data_format
// dimension d), got shape S; x.shape X`.
Status CheckChannelVector(const char* op, const char* name, const TensorShape& s,
                          const Layout& l, const std::string& format, const char* xname,
                          const TensorShape& xs) {
  if (s.dims() != 1 || s.dim_size(0) != l.channels)
    return errors::InvalidArgument(op, ": ", name, " must be rank 1 with ", l.channels,
                                   " elements (the channels of ", xname, ", ", format,
                                   " dimension ", l.channel_dim, "), got ", name, ".shape ", s,
                                   " vs. ", xname, ".shape ", xs);
  return OkStatus();
}

Status CheckRank4or5(const char* op, const char* name, const TensorShape& s) {
  if (s.dims() != 4 && s.dims() != 5)
    return errors::InvalidArgument(op, ": ", name, " must be rank 4 or 5, got shape ", s);
  return OkStatus();
}

template <class U>
void Fill(Tensor* t, U v) {
  U* p = t->flat<U>().data();
  std::fill(p, p + t->NumElements(), v);
}

// ------------------------------------------------------------------- forward

// kReserveSpace3: V3's sixth output. U == T for FusedBatchNorm (V1).
template <class T, class U, bool kReserveSpace3>
class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* c) : OpKernel(c) {
    float epsilon = 1e-4f, factor = 1.0f;  // nn_ops.cc defaults
    OP_REQUIRES_OK(c, GetOptionalAttr(c, "epsilon", &epsilon));
    OP_REQUIRES_OK(c, GetOptionalAttr(c, "exponential_avg_factor", &factor));
    OP_REQUIRES_OK(c, GetOptionalAttr(c, "is_training", &is_training_));
    OP_REQUIRES_OK(c, ParseFormat(c, &format_, &channels_first_));
    epsilon_ = static_cast<U>(epsilon);
    factor_ = static_cast<U>(factor);
  }

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& x = ctx->input(0);
    const Tensor& scale = ctx->input(1);
    const Tensor& offset = ctx->input(2);
    const Tensor& mean_in = ctx->input(3);
    const Tensor& var_in = ctx->input(4);
    const TensorShape& xs = x.shape();
    OP_REQUIRES_OK(ctx, CheckRank4or5(op, "x", xs));
    const Layout l = ChannelLayoutOf(xs, channels_first_);
    OP_REQUIRES_OK(ctx, CheckChannelVector(op, "scale", scale.shape(), l, format_, "x", xs));
    OP_REQUIRES_OK(ctx, CheckChannelVector(op, "offset", offset.shape(), l, format_, "x", xs));
    // mean and variance must be 1-D even where they are not read (TensorFlow's
    // FusedBatchNormOp checks their rank first, with this wording); they are
    // read only for inference or a running average (TF passes empty ones when
    // training with exponential_avg_factor == 1).
    OP_REQUIRES(ctx, mean_in.dims() == 1,
                errors::InvalidArgument("estimated_mean must be 1-dimensional", mean_in.shape(),
                                        " (", op, ")"));
    OP_REQUIRES(ctx, var_in.dims() == 1,
                errors::InvalidArgument("estimated_variance must be 1-dimensional",
                                        var_in.shape(), " (", op, ")"));
    const bool use_running = !is_training_ || factor_ != U(1);
    if (use_running) {
      OP_REQUIRES_OK(ctx,
                     CheckChannelVector(op, "mean", mean_in.shape(), l, format_, "x", xs));
      OP_REQUIRES_OK(ctx,
                     CheckChannelVector(op, "variance", var_in.shape(), l, format_, "x", xs));
    }

    const TensorShape cs({l.channels});
    Tensor *y = nullptr, *batch_mean = nullptr, *batch_var = nullptr;
    Tensor *saved_mean = nullptr, *saved_var = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, xs, &y));
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({3}, 1, cs, &batch_mean));
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({4}, 2, cs, &batch_var));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, cs, &saved_mean));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(4, cs, &saved_var));
    if constexpr (kReserveSpace3) {
      Tensor* rs3 = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(5, TensorShape(), &rs3));
      Fill<U>(rs3, U(0));
    }

    if (xs.num_elements() == 0) {
      Fill<U>(batch_mean, std::numeric_limits<U>::quiet_NaN());
      Fill<U>(batch_var, std::numeric_limits<U>::quiet_NaN());
      Fill<U>(saved_mean, U(0));
      Fill<U>(saved_var, U(0));
      return;
    }

    const int64_t c = l.channels, n = l.per_channel();
    const T* xd = x.flat<T>().data();
    std::vector<U> mean(c), var(c);
    if (is_training_) {
      std::vector<double> sums;
      OP_REQUIRES_OK(ctx, ChannelSums<1>(ctx, l, [xd](int64_t off, int64_t len, auto, auto acc) {
        acc(0) += CMap<T>(xd + off, len).template cast<U>().template cast<double>();
      }, &sums));
      for (int64_t i = 0; i < c; ++i) mean[i] = static_cast<U>(sums[i] / n);
      // Centred in U as TF does, squared and summed in double.
      const U* m = mean.data();
      OP_REQUIRES_OK(
          ctx, ChannelSums<1>(ctx, l, [xd, m](int64_t off, int64_t len, auto pick, auto acc) {
            acc(0) += (CMap<T>(xd + off, len).template cast<U>() - pick(m))
                          .template cast<double>()
                          .square();
          }, &sums));
      for (int64_t i = 0; i < c; ++i) var[i] = static_cast<U>(sums[i] / n);
    } else {
      std::copy_n(mean_in.flat<U>().data(), c, mean.begin());
      std::copy_n(var_in.flat<U>().data(), c, var.begin());
    }

    // y = (x - mean) * (rsqrt(var + epsilon) * scale) + offset, in U.
    std::vector<U> a(c);
    const U* sc = scale.flat<U>().data();
    for (int64_t i = 0; i < c; ++i) a[i] = sc[i] / std::sqrt(var[i] + epsilon_);
    {
      const U *m = mean.data(), *ap = a.data(), *off_p = offset.flat<U>().data();
      T* yd = y->flat<T>().data();
      ForEachRun(ctx->eigen_device<Eigen::ThreadPoolDevice>(), l,
                 Eigen::TensorOpCost(sizeof(T), sizeof(T), 4),
                 [=](int64_t off, int64_t len, auto pick) {
                   MMap<T>(yd + off, len) =
                       ((CMap<T>(xd + off, len).template cast<U>() - pick(m)) * pick(ap) +
                        pick(off_p))
                           .template cast<T>();
                 });
    }

    U* bm = batch_mean->flat<U>().data();
    U* bv = batch_var->flat<U>().data();
    std::copy(mean.begin(), mean.end(), saved_mean->flat<U>().data());
    std::copy(var.begin(), var.end(), saved_var->flat<U>().data());
    if (!is_training_) {
      std::copy(mean.begin(), mean.end(), bm);
      std::copy(var.begin(), var.end(), bv);
      return;
    }
    // Bessel's correction n / (n - 1), computed in U as TF does (1 when n == 1).
    const U adjust = static_cast<U>(n) / static_cast<U>(n > 1 ? n - 1 : 1);
    if (factor_ == U(1)) {
      for (int64_t i = 0; i < c; ++i) {
        bm[i] = mean[i];
        bv[i] = var[i] * adjust;
      }
    } else {
      // Read before write at the same index: safe if TF forwarded mean/variance.
      const U* old_mean = mean_in.flat<U>().data();
      const U* old_var = var_in.flat<U>().data();
      const U keep = U(1) - factor_;
      for (int64_t i = 0; i < c; ++i) {
        bm[i] = keep * old_mean[i] + factor_ * mean[i];
        bv[i] = keep * old_var[i] + (factor_ * adjust) * var[i];
      }
    }
  }

 private:
  U epsilon_ = U(1e-4f);
  U factor_ = U(1);
  bool is_training_ = true;
  bool channels_first_ = false;
  std::string format_ = "NHWC";
};

// ------------------------------------------------------------------ gradient

template <class T, class U>
class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(OpKernelConstruction* c) : OpKernel(c) {
    float epsilon = 1e-4f;
    OP_REQUIRES_OK(c, GetOptionalAttr(c, "epsilon", &epsilon));
    OP_REQUIRES_OK(c, GetOptionalAttr(c, "is_training", &is_training_));
    OP_REQUIRES_OK(c, ParseFormat(c, &format_, &channels_first_));
    epsilon_ = static_cast<U>(epsilon);
  }

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& scale = ctx->input(2);
    const Tensor& mean_in = ctx->input(3);
    const Tensor& var_in = ctx->input(4);
    const TensorShape& xs = x.shape();
    OP_REQUIRES_OK(ctx, CheckRank4or5(op, "y_backprop", dy.shape()));
    OP_REQUIRES_OK(ctx, CheckRank4or5(op, "x", xs));
    OP_REQUIRES_OK(ctx, ::pdk::CheckSameShape(op, "x", xs.pdk_shape(), "y_backprop",
                                              dy.shape().pdk_shape()));
    const Layout l = ChannelLayoutOf(xs, channels_first_);
    OP_REQUIRES_OK(ctx, CheckChannelVector(op, "scale", scale.shape(), l, format_, "x", xs));
    OP_REQUIRES_OK(ctx, CheckChannelVector(op, "reserve_space_1", mean_in.shape(), l, format_,
                                           "x", xs));
    OP_REQUIRES_OK(ctx, CheckChannelVector(op, "reserve_space_2", var_in.shape(), l, format_,
                                           "x", xs));

    const TensorShape cs({l.channels});
    Tensor *dx = nullptr, *dscale = nullptr, *doffset = nullptr, *unused = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, xs, &dx));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, cs, &dscale));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, cs, &doffset));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({0}), &unused));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(4, TensorShape({0}), &unused));
    if (xs.num_elements() == 0) {
      Fill<U>(dscale, U(0));
      Fill<U>(doffset, U(0));
      return;
    }
    OP_REQUIRES(ctx, is_training_ || !channels_first_,
                errors::InvalidArgument(op, ": is_training=false supports only channels-last ",
                                        "data_format (NHWC, NDHWC), as TensorFlow's CPU "
                                        "kernel; got ",
                                        format_));

    const int64_t c = l.channels, n = l.per_channel();
    const T* dyd = dy.flat<T>().data();
    const T* xd = x.flat<T>().data();
    const U* m = mean_in.flat<U>().data();
    const U* sc = scale.flat<U>().data();
    const U* var = var_in.flat<U>().data();
    std::vector<U> k(c);  // rsqrt(variance + epsilon)
    for (int64_t i = 0; i < c; ++i) k[i] = U(1) / std::sqrt(var[i] + epsilon_);

    // sums[0] = sum(dy), sums[1] = sum(dy * (x - mean)); products in U as TF.
    std::vector<double> sums;
    OP_REQUIRES_OK(
        ctx, ChannelSums<2>(ctx, l, [dyd, xd, m](int64_t off, int64_t len, auto pick, auto acc) {
          const auto g = CMap<T>(dyd + off, len).template cast<U>();
          acc(0) += g.template cast<double>();
          acc(1) += (g * (CMap<T>(xd + off, len).template cast<U>() - pick(m)))
                        .template cast<double>();
        }, &sums));
    U* dsc = dscale->flat<U>().data();
    U* doff = doffset->flat<U>().data();
    for (int64_t i = 0; i < c; ++i) {
      doff[i] = static_cast<U>(sums[i]);
      dsc[i] = static_cast<U>(sums[c + i] * static_cast<double>(k[i]));
    }

    T* dxd = dx->flat<T>().data();
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    const Eigen::TensorOpCost cost(2 * sizeof(T), sizeof(T), 6);
    if (is_training_) {
      // dx = coef1 * (dy - dy_mean - (x - mean) * coef2), coef1 = scale * k,
      // coef2 = k^2 * sum(dy * xc) / n, dy_mean = sum(dy) / n.
      std::vector<U> coef1(c), coef2(c), dy_mean(c);
      for (int64_t i = 0; i < c; ++i) {
        coef1[i] = sc[i] * k[i];
        coef2[i] = k[i] * k[i] * static_cast<U>(sums[c + i] / n);
        dy_mean[i] = static_cast<U>(sums[i] / n);
      }
      const U *c1 = coef1.data(), *c2 = coef2.data(), *gm = dy_mean.data();
      ForEachRun(dev, l, cost, [=](int64_t off, int64_t len, auto pick) {
        const auto g = CMap<T>(dyd + off, len).template cast<U>();
        const auto xc = CMap<T>(xd + off, len).template cast<U>() - pick(m);
        MMap<T>(dxd + off, len) =
            ((g - pick(gm) - xc * pick(c2)) * pick(c1)).template cast<T>();
      });
    } else {
      std::vector<U> coef(c);  // scale * rsqrt(pop_var + epsilon)
      for (int64_t i = 0; i < c; ++i) coef[i] = sc[i] * k[i];
      const U* cp = coef.data();
      ForEachRun(dev, l, cost, [=](int64_t off, int64_t len, auto pick) {
        MMap<T>(dxd + off, len) =
            (CMap<T>(dyd + off, len).template cast<U>() * pick(cp)).template cast<T>();
      });
    }
  }

 private:
  U epsilon_ = U(1e-4f);
  bool is_training_ = true;
  bool channels_first_ = false;
  std::string format_ = "NHWC";
};

REGISTER_KERNEL_BUILDER(Name("FusedBatchNorm").Device(DEVICE_PDK).TypeConstraint<float>("T"),
                        FusedBatchNormOp<float, float, false>);
REGISTER_KERNEL_BUILDER(
    Name("FusedBatchNormGrad").Device(DEVICE_PDK).TypeConstraint<float>("T"),
    FusedBatchNormGradOp<float, float>);
#define PDK_REGISTER_FUSED_BATCH_NORM_(T)                                                   \
  REGISTER_KERNEL_BUILDER(Name("FusedBatchNormV2")                                          \
                              .Device(DEVICE_PDK)                                           \
                              .TypeConstraint<T>("T")                                       \
                              .TypeConstraint<float>("U"),                                  \
                          FusedBatchNormOp<T, float, false>);                               \
  REGISTER_KERNEL_BUILDER(Name("FusedBatchNormV3")                                          \
                              .Device(DEVICE_PDK)                                           \
                              .TypeConstraint<T>("T")                                       \
                              .TypeConstraint<float>("U"),                                  \
                          FusedBatchNormOp<T, float, true>);                                \
  REGISTER_KERNEL_BUILDER(Name("FusedBatchNormGradV2")                                      \
                              .Device(DEVICE_PDK)                                           \
                              .TypeConstraint<T>("T")                                       \
                              .TypeConstraint<float>("U"),                                  \
                          FusedBatchNormGradOp<T, float>);                                  \
  REGISTER_KERNEL_BUILDER(Name("FusedBatchNormGradV3")                                      \
                              .Device(DEVICE_PDK)                                           \
                              .TypeConstraint<T>("T")                                       \
                              .TypeConstraint<float>("U"),                                  \
                          FusedBatchNormGradOp<T, float>);
PDK_REGISTER_FUSED_BATCH_NORM_(float)
PDK_REGISTER_FUSED_BATCH_NORM_(Eigen::half)
PDK_REGISTER_FUSED_BATCH_NORM_(Eigen::bfloat16)
#undef PDK_REGISTER_FUSED_BATCH_NORM_

}  // namespace
}  // namespace tensorflow
