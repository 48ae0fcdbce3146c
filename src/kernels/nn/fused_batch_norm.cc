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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

using Index = Eigen::Index;
template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using CMap = Eigen::Map<const Vec<T>>;
template <class T>
using MMap = Eigen::Map<Vec<T>>;

// x viewed as [outer, C, inner]: channels-last has inner == 1 (rows of C),
// channels-first has outer = N and inner = H*W[*D] (contiguous runs per (n, c)).
struct Layout {
  int channel_dim = 0;
  int64_t outer = 1, channels = 0, inner = 1;
  int64_t per_channel() const { return outer * inner; }  // n
};

Layout LayoutOf(const pdk::Shape& s, bool channels_first) {
  Layout l;
  l.channel_dim = channels_first ? 1 : s.rank() - 1;
  l.channels = s[l.channel_dim];
  for (int i = 0; i < l.channel_dim; ++i) l.outer *= s[i];
  for (int i = l.channel_dim + 1; i < s.rank(); ++i) l.inner *= s[i];
  return l;
}

// Decodes data_format: "NHWC"/"NDHWC" (channels last) or "NCHW"/"NCDHW".
pdk::Status ParseFormat(const pdk::Attrs& a, std::string* format, bool* channels_first) {
  PDK_RETURN_IF_ERROR(a.GetOptional("data_format", format));
  if (*format == "NHWC" || *format == "NDHWC") {
    *channels_first = false;
  } else if (*format == "NCHW" || *format == "NCDHW") {
    *channels_first = true;
  } else {
    return pdk::InvalidArgument("data_format must be one of NHWC, NDHWC, NCHW, NCDHW, got \"",
                                *format, "\"");
  }
  return pdk::Status::OK();
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
    dev.parallelFor(l.outer, cost * static_cast<double>(c), [&](Index first, Index last) {
      for (Index r = first; r < last; ++r) body(r * c, c, RowPick{c});
    });
  } else {
    const int64_t inner = l.inner, c = l.channels;
    dev.parallelFor(l.outer * c, cost * static_cast<double>(inner),
                    [&](Index first, Index last) {
                      for (Index r = first; r < last; ++r) body(r * inner, inner, RunPick{r % c});
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
pdk::Status ChannelSums(const pdk::Context& ctx, const Layout& l, Body&& body,
                        std::vector<double>* out) {
  const auto& dev = pdk_compute::Device(ctx);
  const int64_t c = l.channels;
  out->assign(static_cast<size_t>(K * c), 0.0);
  if (l.per_channel() == 0 || c == 0) return pdk::Status::OK();
  if (l.inner == 1) {
    const int64_t rows = l.outer;
    constexpr int64_t kMinElementsPerShard = 16 * 1024;
    const int64_t shards = std::clamp<int64_t>(rows * c / kMinElementsPerShard, 1,
                                               std::min<int64_t>(rows, 4 * dev.numThreads()));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor scratch,
                         ctx.allocate_temp(TF_DOUBLE, pdk::Shape{shards, K * c}));
    double* partial = scratch.data<double>();
    std::fill(partial, partial + shards * K * c, 0.0);
    const int64_t per_shard = (rows + shards - 1) / shards;
    const double elems = static_cast<double>(per_shard * c);
    dev.parallelFor(shards, Eigen::TensorOpCost(elems * 8, K * c * 8.0, elems * 4 * K),
                    [&](Index first, Index last) {
                      for (Index s = first; s < last; ++s) {
                        const RowAcc acc{partial + s * K * c, c};
                        const int64_t r1 = std::min(rows, (s + 1) * per_shard);
                        for (int64_t r = s * per_shard; r < r1; ++r) body(r * c, c, RowPick{c}, acc);
                      }
                    });
    MMap<double> o(out->data(), K * c);
    for (int64_t s = 0; s < shards; ++s) o += CMap<double>(partial + s * K * c, K * c);
    return pdk::Status::OK();
  }
  const int64_t runs = l.outer * c, inner = l.inner;
  PDK_ASSIGN_OR_RETURN(pdk::Tensor scratch, ctx.allocate_temp(TF_DOUBLE, pdk::Shape{runs, K}));
  double* run_sums = scratch.data<double>();
  dev.parallelFor(runs, Eigen::TensorOpCost(inner * 8.0, K * 8.0, inner * 4.0 * K),
                  [&](Index first, Index last) {
                    for (Index r = first; r < last; ++r) {
                      double* s = run_sums + r * K;
                      std::fill(s, s + K, 0.0);
                      body(r * inner, inner, RunPick{r % c}, RunAcc{s});
                    }
                  });
  for (int64_t r = 0; r < runs; ++r)
    for (int k = 0; k < K; ++k) (*out)[k * c + r % c] += run_sums[r * K + k];
  return pdk::Status::OK();
}

// `op: name must be rank 1 with C elements (the channels of x, data_format
// dimension d), got shape S; x.shape X`.
pdk::Status CheckChannelVector(const char* op, const char* name, const pdk::Shape& s,
                               const Layout& l, const std::string& format, const char* xname,
                               const pdk::Shape& xs) {
  if (s.rank() != 1 || s[0] != l.channels)
    return pdk::InvalidArgument(op, ": ", name, " must be rank 1 with ", l.channels,
                                " elements (the channels of ", xname, ", ", format,
                                " dimension ", l.channel_dim, "), got ", name, ".shape ", s,
                                " vs. ", xname, ".shape ", xs);
  return pdk::Status::OK();
}

pdk::Status CheckRank4or5(const char* op, const char* name, const pdk::Shape& s) {
  if (s.rank() != 4 && s.rank() != 5)
    return pdk::InvalidArgument(op, ": ", name, " must be rank 4 or 5, got shape ", s);
  return pdk::Status::OK();
}

template <class U>
void Fill(const pdk::Tensor& t, U v) {
  std::fill(t.data<U>(), t.data<U>() + t.num_elements(), v);
}

// ------------------------------------------------------------------- forward

// kReserveSpace3: V3's sixth output. U == T for FusedBatchNorm (V1).
template <class T, class U, bool kReserveSpace3>
class FusedBatchNormOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    float epsilon = 1e-4f, factor = 1.0f;  // nn_ops.cc defaults
    PDK_RETURN_IF_ERROR(a.GetOptional("epsilon", &epsilon));
    PDK_RETURN_IF_ERROR(a.GetOptional("exponential_avg_factor", &factor));
    PDK_RETURN_IF_ERROR(a.GetOptional("is_training", &is_training_));
    PDK_RETURN_IF_ERROR(ParseFormat(a, &format_, &channels_first_));
    epsilon_ = static_cast<U>(epsilon);
    factor_ = static_cast<U>(factor);
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    const char* op = ctx.op();
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor scale, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor offset, ctx.input(2));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor mean_in, ctx.input(3));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor var_in, ctx.input(4));
    const pdk::Shape xs = x.shape();
    PDK_RETURN_IF_ERROR(CheckRank4or5(op, "x", xs));
    const Layout l = LayoutOf(xs, channels_first_);
    PDK_RETURN_IF_ERROR(CheckChannelVector(op, "scale", scale.shape(), l, format_, "x", xs));
    PDK_RETURN_IF_ERROR(CheckChannelVector(op, "offset", offset.shape(), l, format_, "x", xs));
    // mean and variance must be 1-D even where they are not read (TensorFlow's
    // FusedBatchNormOp checks their rank first, with this wording); they are
    // read only for inference or a running average (TF passes empty ones when
    // training with exponential_avg_factor == 1).
    if (mean_in.shape().rank() != 1)
      return pdk::InvalidArgument("estimated_mean must be 1-dimensional", mean_in.shape(), " (",
                                  op, ")");
    if (var_in.shape().rank() != 1)
      return pdk::InvalidArgument("estimated_variance must be 1-dimensional", var_in.shape(),
                                  " (", op, ")");
    const bool use_running = !is_training_ || factor_ != U(1);
    if (use_running) {
      PDK_RETURN_IF_ERROR(CheckChannelVector(op, "mean", mean_in.shape(), l, format_, "x", xs));
      PDK_RETURN_IF_ERROR(
          CheckChannelVector(op, "variance", var_in.shape(), l, format_, "x", xs));
    }

    const pdk::Shape cs{l.channels};
    PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.forward_or_allocate_output({0}, 0, xs));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor batch_mean, ctx.forward_or_allocate_output({3}, 1, cs));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor batch_var, ctx.forward_or_allocate_output({4}, 2, cs));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor saved_mean, ctx.allocate_output(3, cs));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor saved_var, ctx.allocate_output(4, cs));
    if constexpr (kReserveSpace3) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor rs3, ctx.allocate_output(5, pdk::Shape{}));
      Fill<U>(rs3, U(0));
    }

    if (xs.num_elements() == 0) {
      Fill<U>(batch_mean, std::numeric_limits<U>::quiet_NaN());
      Fill<U>(batch_var, std::numeric_limits<U>::quiet_NaN());
      Fill<U>(saved_mean, U(0));
      Fill<U>(saved_var, U(0));
      return pdk::Status::OK();
    }

    const int64_t c = l.channels, n = l.per_channel();
    const T* xd = x.data<T>();
    std::vector<U> mean(c), var(c);
    if (is_training_) {
      std::vector<double> sums;
      PDK_RETURN_IF_ERROR(ChannelSums<1>(ctx, l, [xd](int64_t off, int64_t len, auto, auto acc) {
        acc(0) += CMap<T>(xd + off, len).template cast<U>().template cast<double>();
      }, &sums));
      for (int64_t i = 0; i < c; ++i) mean[i] = static_cast<U>(sums[i] / n);
      // Centred in U as TF does, squared and summed in double.
      const U* m = mean.data();
      PDK_RETURN_IF_ERROR(
          ChannelSums<1>(ctx, l, [xd, m](int64_t off, int64_t len, auto pick, auto acc) {
            acc(0) += (CMap<T>(xd + off, len).template cast<U>() - pick(m))
                          .template cast<double>()
                          .square();
          }, &sums));
      for (int64_t i = 0; i < c; ++i) var[i] = static_cast<U>(sums[i] / n);
    } else {
      std::copy_n(mean_in.data<U>(), c, mean.begin());
      std::copy_n(var_in.data<U>(), c, var.begin());
    }

    // y = (x - mean) * (rsqrt(var + epsilon) * scale) + offset, in U.
    std::vector<U> a(c);
    const U* sc = scale.data<U>();
    for (int64_t i = 0; i < c; ++i) a[i] = sc[i] / std::sqrt(var[i] + epsilon_);
    {
      const U *m = mean.data(), *ap = a.data(), *off_p = offset.data<U>();
      T* yd = y.data<T>();
      ForEachRun(pdk_compute::Device(ctx), l,
                 Eigen::TensorOpCost(sizeof(T), sizeof(T), 4),
                 [=](int64_t off, int64_t len, auto pick) {
                   MMap<T>(yd + off, len) =
                       ((CMap<T>(xd + off, len).template cast<U>() - pick(m)) * pick(ap) +
                        pick(off_p))
                           .template cast<T>();
                 });
    }

    U* bm = batch_mean.data<U>();
    U* bv = batch_var.data<U>();
    std::copy(mean.begin(), mean.end(), saved_mean.data<U>());
    std::copy(var.begin(), var.end(), saved_var.data<U>());
    if (!is_training_) {
      std::copy(mean.begin(), mean.end(), bm);
      std::copy(var.begin(), var.end(), bv);
      return pdk::Status::OK();
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
      const U* old_mean = mean_in.data<U>();
      const U* old_var = var_in.data<U>();
      const U keep = U(1) - factor_;
      for (int64_t i = 0; i < c; ++i) {
        bm[i] = keep * old_mean[i] + factor_ * mean[i];
        bv[i] = keep * old_var[i] + (factor_ * adjust) * var[i];
      }
    }
    return pdk::Status::OK();
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
class FusedBatchNormGradOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    float epsilon = 1e-4f;
    PDK_RETURN_IF_ERROR(a.GetOptional("epsilon", &epsilon));
    PDK_RETURN_IF_ERROR(a.GetOptional("is_training", &is_training_));
    PDK_RETURN_IF_ERROR(ParseFormat(a, &format_, &channels_first_));
    epsilon_ = static_cast<U>(epsilon);
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    const char* op = ctx.op();
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dy, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor scale, ctx.input(2));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor mean_in, ctx.input(3));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor var_in, ctx.input(4));
    const pdk::Shape xs = x.shape();
    PDK_RETURN_IF_ERROR(CheckRank4or5(op, "y_backprop", dy.shape()));
    PDK_RETURN_IF_ERROR(CheckRank4or5(op, "x", xs));
    PDK_RETURN_IF_ERROR(pdk::CheckSameShape(op, "x", xs, "y_backprop", dy.shape()));
    const Layout l = LayoutOf(xs, channels_first_);
    PDK_RETURN_IF_ERROR(CheckChannelVector(op, "scale", scale.shape(), l, format_, "x", xs));
    PDK_RETURN_IF_ERROR(
        CheckChannelVector(op, "reserve_space_1", mean_in.shape(), l, format_, "x", xs));
    PDK_RETURN_IF_ERROR(
        CheckChannelVector(op, "reserve_space_2", var_in.shape(), l, format_, "x", xs));

    const pdk::Shape cs{l.channels};
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dx, ctx.allocate_output(0, xs));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dscale, ctx.allocate_output(1, cs));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor doffset, ctx.allocate_output(2, cs));
    PDK_RETURN_IF_ERROR(ctx.allocate_output(3, pdk::Shape{0}).status());
    PDK_RETURN_IF_ERROR(ctx.allocate_output(4, pdk::Shape{0}).status());
    if (xs.num_elements() == 0) {
      Fill<U>(dscale, U(0));
      Fill<U>(doffset, U(0));
      return pdk::Status::OK();
    }
    if (!is_training_ && channels_first_)
      return pdk::InvalidArgument(op, ": is_training=false supports only channels-last ",
                                  "data_format (NHWC, NDHWC), as TensorFlow's CPU kernel; got ",
                                  format_);

    const int64_t c = l.channels, n = l.per_channel();
    const T* dyd = dy.data<T>();
    const T* xd = x.data<T>();
    const U* m = mean_in.data<U>();
    const U* sc = scale.data<U>();
    std::vector<U> k(c);  // rsqrt(variance + epsilon)
    for (int64_t i = 0; i < c; ++i) k[i] = U(1) / std::sqrt(var_in.data<U>()[i] + epsilon_);

    // sums[0] = sum(dy), sums[1] = sum(dy * (x - mean)); products in U as TF.
    std::vector<double> sums;
    PDK_RETURN_IF_ERROR(
        ChannelSums<2>(ctx, l, [dyd, xd, m](int64_t off, int64_t len, auto pick, auto acc) {
          const auto g = CMap<T>(dyd + off, len).template cast<U>();
          acc(0) += g.template cast<double>();
          acc(1) += (g * (CMap<T>(xd + off, len).template cast<U>() - pick(m)))
                        .template cast<double>();
        }, &sums));
    U* dsc = dscale.data<U>();
    U* doff = doffset.data<U>();
    for (int64_t i = 0; i < c; ++i) {
      doff[i] = static_cast<U>(sums[i]);
      dsc[i] = static_cast<U>(sums[c + i] * static_cast<double>(k[i]));
    }

    T* dxd = dx.data<T>();
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
      ForEachRun(pdk_compute::Device(ctx), l, cost, [=](int64_t off, int64_t len, auto pick) {
        const auto g = CMap<T>(dyd + off, len).template cast<U>();
        const auto xc = CMap<T>(xd + off, len).template cast<U>() - pick(m);
        MMap<T>(dxd + off, len) =
            ((g - pick(gm) - xc * pick(c2)) * pick(c1)).template cast<T>();
      });
    } else {
      std::vector<U> coef(c);  // scale * rsqrt(pop_var + epsilon)
      for (int64_t i = 0; i < c; ++i) coef[i] = sc[i] * k[i];
      const U* cp = coef.data();
      ForEachRun(pdk_compute::Device(ctx), l, cost, [=](int64_t off, int64_t len, auto pick) {
        MMap<T>(dxd + off, len) =
            (CMap<T>(dyd + off, len).template cast<U>() * pick(cp)).template cast<T>();
      });
    }
    return pdk::Status::OK();
  }

 private:
  U epsilon_ = U(1e-4f);
  bool is_training_ = true;
  bool channels_first_ = false;
  std::string format_ = "NHWC";
};

}  // namespace

PDK_REGISTER_KERNELS(NnFusedBatchNorm, r) {
  r.Add(pdk::KernelDef<FusedBatchNormOp<float, float, false>>("FusedBatchNorm")
            .Type("T", pdk::TypeTag<float>{}));
  r.Add(pdk::KernelDef<FusedBatchNormGradOp<float, float>>("FusedBatchNormGrad")
            .Type("T", pdk::TypeTag<float>{}));
  pdk::ForEachType(pdk::TypeList<float, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    const pdk::TypeTag<float> u;
    r.Add(pdk::KernelDef<FusedBatchNormOp<T, float, false>>("FusedBatchNormV2")
              .Type("T", t)
              .Type("U", u));
    r.Add(pdk::KernelDef<FusedBatchNormOp<T, float, true>>("FusedBatchNormV3")
              .Type("T", t)
              .Type("U", u));
    r.Add(pdk::KernelDef<FusedBatchNormGradOp<T, float>>("FusedBatchNormGradV2")
              .Type("T", t)
              .Type("U", u));
    r.Add(pdk::KernelDef<FusedBatchNormGradOp<T, float>>("FusedBatchNormGradV3")
              .Type("T", t)
              .Type("U", u));
  });
}

}  // namespace pdk_kernels
