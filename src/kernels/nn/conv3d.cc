// Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2 (tensorflow/core/ops/nn_ops.cc).
//
//   Conv3D(input [N,D,H,W,C], filter [KD,KH,KW,C,F]) -> output [N,OD,OH,OW,F]
//     output[n,o,f] = sum_{k,c} input[n, o*S - P + k*DL, c] * filter[k,c,f]
//     per spatial dimension (o, k, S stride, DL dilation, P leading padding;
//     positions outside the input read as zero).
//   Conv3DBackpropInputV2(input_sizes (host Tshape in {int32, int64} [5]),
//                         filter [KD,KH,KW,C,F], out_backprop [N,OD,OH,OW,F])
//     -> d input [N,D,H,W,C]
//   Conv3DBackpropFilterV2(input [N,D,H,W,C], filter_sizes (host int32 [5]),
//                          out_backprop [N,OD,OH,OW,F]) -> d filter [KD,KH,KW,C,F]
//   T in {float32, float64, float16, bfloat16}; the 16-bit floats are widened
//   to float32 scratch copies, computed by the float32 code and rounded once.
//   Attributes: strides, dilations (5 values, data_format order, batch and
//   channel entries 1), padding ("SAME" or "VALID"; output sizes and leading
//   padding as TF's GetWindowedOutputSizeVerbose, window.h), data_format
//   ("NDHWC" or "NCDHW"; anything else is InvalidArgument naming both).
//
// data_format "NCDHW": input, out_backprop and the result are [N,C,D,H,W]
// (input_sizes too), the filter stays [KD,KH,KW,C,F]. The kernels transpose
// the activations to NDHWC scratch copies, run the NDHWC code and transpose
// the result back (channels_first.h, as Conv2D's NCHW; TF's own CPU kernels
// are NDHWC-only). Shape errors then name the NDHWC copies' shapes and say so.
//
// Errors (InvalidArgument): operands not rank 5; input depth != filter
// in_depth (names both shapes; grouped Conv3D is not supported); out_backprop's
// shape not the forward output shape; strides or dilations on the
// batch/channel dimensions; a negative output size.
//
// Algorithm: im2col + GEMM over L2-sized tiles of output positions (rows of
// the patch matrix [M = N*OD*OH*OW, K = KD*KH*KW*C]); each pool shard takes a
// contiguous range of tiles, builds each tile's patch rows in its own scratch
// and multiplies them by the filter viewed as [K, F] with a single-threaded
// GEMM (src/compute/gemm.h), as conv2d.cc does in 2-D. Backprop input gathers,
// for each input position, the [KD*KH*KW*F] out_backprop values whose window
// tap lands on it (zeros elsewhere; no scatter) and multiplies by the filter
// rearranged to [KD*KH*KW*F, C]. Backprop filter: each shard sums
// patches^T * out_backprop over its tiles; the partial sums are then added. Summation order differs from TF's kernels within float
// rounding. The backprop-input gather is written for D spatial dimensions
// (ConvGeomND); the patch rows, the hot loop, for D = 3.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "compute/widen.h"
#include "compute/gemm.h"
#include "kernels/nn/channels_first.h"
#include "kernels/nn/window.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

constexpr int kD = 3;
using pdk_kernels::ConvGeomND;
using Geom = ConvGeomND<kD>;
using pdk_compute::RunWidened;

// Patch-matrix bytes per tile: a tile and its GEMM operands stay in L2.
constexpr int64_t kTileBytes = 256 * 1024;

// `rows` patch rows of `row_len` elements in tiles of `tile` rows; `shards`
// contiguous ranges of tiles go to the device pool (one when the work is
// below pdk_compute::kParallelFlops).
struct Tiles {
  int64_t rows, tile, count, shards;
  Tiles(const Eigen::ThreadPoolDevice& dev, int64_t rows_, int64_t row_len, size_t elem,
        double flops_per_row)
      : rows(rows_) {
    tile = std::clamp<int64_t>(kTileBytes / std::max<int64_t>(1, row_len * int64_t(elem)), 8,
                               std::max<int64_t>(8, rows));
    count = (rows + tile - 1) / tile;
    const bool parallel =
        dev.numThreads() > 1 && flops_per_row * rows >= pdk_compute::kParallelFlops;
    shards = parallel ? std::min<int64_t>(dev.numThreads(), count) : 1;
  }
  // Calls fn(r0, r1) for the tiles of shard s.
  template <class Fn>
  void ForShard(int64_t s, Fn&& fn) const {
    for (int64_t i = count * s / shards, e = count * (s + 1) / shards; i < e; ++i)
      fn(i * tile, std::min(rows, (i + 1) * tile));
  }
};

// Splits a linear index over `dims` (row-major) into coordinates.
template <int D>
void Unravel(int64_t i, const int64_t* dims, int64_t* coord) {
  for (int d = D - 1; d >= 0; --d) {
    coord[d] = i % dims[d];
    i /= dims[d];
  }
}

// Row r (an output position, N,OD,OH,OW order) of the patch matrix: for each
// tap (kd, kh, kw) the C input values it reads, zeros outside the input. A
// (kd, kh) row of taps whose W window lies inside the input with dilation 1
// is one copy of KW*C contiguous values.
template <class T>
void PatchRow(const Geom& g, const T* x, int64_t r, T* row) {
  const int64_t opix = g.OutPixels(), n = r / opix, rem = r % opix;
  const int64_t od = rem / (g.out[1] * g.out[2]), oh = rem / g.out[2] % g.out[1],
                ow = rem % g.out[2];
  const int64_t c = g.c, kw_len = g.k[2] * c;
  const int64_t w0 = ow * g.stride[2] - g.pad[2];
  const bool w_run = g.dilation[2] == 1 && w0 >= 0 && w0 + g.k[2] <= g.in[2];
  const T* xn = x + n * g.InPixels() * c;
  for (int64_t kd = 0; kd < g.k[0]; ++kd) {
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
    for (int64_t kh = 0; kh < g.k[1]; ++kh, row += kw_len) {
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
      if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
        std::memset(row, 0, sizeof(T) * kw_len);
        continue;
      }
      const T* src = xn + (id * g.in[1] + ih) * g.in[2] * c;
      if (w_run) {
        std::memcpy(row, src + w0 * c, sizeof(T) * kw_len);
        continue;
      }
      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
        const int64_t iw = w0 + kw * g.dilation[2];
        if (iw < 0 || iw >= g.in[2]) {
          std::memset(row + kw * c, 0, sizeof(T) * c);
        } else {
          std::memcpy(row + kw * c, src + iw * c, sizeof(T) * c);
        }
      }
    }
  }
}

// Row r (an input position) of the backprop-input gather: for each tap k the
// F out_backprop values at o = (i + P - k*DL) / S when that divides exactly
// and lies in [0, O) in every dimension, zeros elsewhere.
template <int D, class T>
void GatherRow(const ConvGeomND<D>& g, const T* dy, int64_t r, T* row) {
  const int64_t ipix = g.InPixels(), n = r / ipix;
  int64_t i[D], k[D];
  Unravel<D>(r % ipix, g.in, i);
  const T* dyn = dy + n * g.OutPixels() * g.f;
  for (int64_t t = 0, taps = g.Taps(); t < taps; ++t, row += g.f) {
    Unravel<D>(t, g.k, k);
    int64_t offset = 0;
    bool hit = true;
    for (int d = 0; d < D && hit; ++d) {
      const int64_t num = i[d] + g.pad[d] - k[d] * g.dilation[d];
      hit = num >= 0 && num % g.stride[d] == 0 && num / g.stride[d] < g.out[d];
      offset = offset * g.out[d] + num / g.stride[d];
    }
    if (hit) {
      std::memcpy(row, dyn + offset * g.f, sizeof(T) * g.f);
    } else {
      std::memset(row, 0, sizeof(T) * g.f);
    }
  }
}

// y[M, F] = patches[M, K] * w[K, F], tile by tile.
template <class C>
Status Forward(OpKernelContext* ctx, const Geom& g, const C* x, const C* w, C* y) {
  const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
  const int64_t K = g.K(), F = g.f;
  const Tiles t(dev, g.M(), K, sizeof(C), 2.0 * K * F);
  Tensor scratch;
  TF_RETURN_IF_ERROR(
      ctx->allocate_temp(DataTypeToEnum<C>::value, TensorShape({t.shards, t.tile, K}), &scratch));
  pdk_compute::RunShards(dev, t.shards, [&](int64_t s) {
    C* col = static_cast<C*>(scratch.data()) + s * t.tile * K;
    t.ForShard(s, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) PatchRow<C>(g, x, r, col + (r - r0) * K);
      pdk_compute::GemmBlock<C>(false, false, r1 - r0, F, K, col, K, w, F, y + r0 * F, F);
    });
  });
  return OkStatus();
}

// dx[N*InPixels, C] = gather(dy)[.., Taps*F] * wt[Taps*F, C], wt = w as [Taps, F, C].
template <class C>
Status BackpropInput(OpKernelContext* ctx, const Geom& g, const C* dy, const C* w, C* dx) {
  const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
  const int64_t taps = g.Taps(), KF = taps * g.f, C_ = g.c;
  Tensor wt_t;
  TF_RETURN_IF_ERROR(
      ctx->allocate_temp(DataTypeToEnum<C>::value, TensorShape({taps, g.f, g.c}), &wt_t));
  C* wt = static_cast<C*>(wt_t.data());
  for (int64_t k = 0; k < taps; ++k)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t f = 0; f < g.f; ++f)
        wt[(k * g.f + f) * g.c + c] = w[(k * g.c + c) * g.f + f];
  const Tiles t(dev, g.n * g.InPixels(), KF, sizeof(C), 2.0 * KF * C_);
  Tensor scratch;
  TF_RETURN_IF_ERROR(ctx->allocate_temp(DataTypeToEnum<C>::value,
                                        TensorShape({t.shards, t.tile, KF}), &scratch));
  pdk_compute::RunShards(dev, t.shards, [&](int64_t s) {
    C* col = static_cast<C*>(scratch.data()) + s * t.tile * KF;
    t.ForShard(s, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) GatherRow<kD, C>(g, dy, r, col + (r - r0) * KF);
      pdk_compute::GemmBlock<C>(false, false, r1 - r0, C_, KF, col, KF, wt, C_, dx + r0 * C_,
                                C_);
    });
  });
  return OkStatus();
}

// dw[K, F] = sum over tiles of patches[tile, K]^T * dy[tile, F]: shard 0
// accumulates into dw, the others into their own partial sums, added at the end.
template <class C>
Status BackpropFilter(OpKernelContext* ctx, const Geom& g, const C* x, const C* dy, C* dw) {
  const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
  const int64_t K = g.K(), F = g.f;
  const Tiles t(dev, g.M(), K, sizeof(C), 2.0 * K * F);
  const int64_t stride = t.tile * K + K * F;
  Tensor scratch;
  TF_RETURN_IF_ERROR(
      ctx->allocate_temp(DataTypeToEnum<C>::value, TensorShape({t.shards, stride}), &scratch));
  C* base = static_cast<C*>(scratch.data());
  pdk_compute::RunShards(dev, t.shards, [&](int64_t s) {
    C* col = base + s * stride;
    C* acc = s == 0 ? dw : col + t.tile * K;
    bool first = true;
    t.ForShard(s, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) PatchRow<C>(g, x, r, col + (r - r0) * K);
      pdk_compute::GemmBlock<C>(true, false, K, F, r1 - r0, col, K, dy + r0 * F, F, acc, F,
                                !first);
      first = false;
    });
    if (first) std::fill(acc, acc + K * F, C(0));
  });
  using Vec = Eigen::Array<C, Eigen::Dynamic, 1>;
  Eigen::Map<Vec> total(dw, K * F);
  for (int64_t s = 1; s < t.shards; ++s)
    total += Eigen::Map<const Vec>(base + s * stride + t.tile * K, K * F);
  return OkStatus();
}

// Attribute decoding for the three ops; NCDHW runs the NDHWC code on
// transposed copies (channels_first.h).
class Conv3DBase : public OpKernel, public pdk_kernels::ChannelsFirstBridge<kD> {
 public:
  // `check_batch_depth_stride`: Conv3D's check below, first.
  Conv3DBase(OpKernelConstruction* c, bool check_batch_depth_stride) : OpKernel(c) {
    if (check_batch_depth_stride) OP_REQUIRES_OK(c, CheckBatchDepthStride(c));
    pdk_compute::UseSingleThreadedOpenBlas();
    OP_REQUIRES_OK(c, pdk_kernels::ParseWindow(c, /*allow_explicit=*/false, &win_, &format_));
  }

 protected:
  // Conv3D: a batch or depth stride is Unimplemented, checked first, in the
  // words of TensorFlow's float32 kernel (oneDNN's, also bfloat16 / float16
  // here); its Eigen kernel (float64) says InvalidArgument
  // (tests/python/fuzz_exceptions.py).
  static Status CheckBatchDepthStride(OpKernelConstruction* c) {
    std::string fmt = "NDHWC";
    if (c->HasAttr("data_format")) TF_RETURN_IF_ERROR(c->GetAttr("data_format", &fmt));
    const int ch = fmt == "NCDHW" ? 1 : 4;
    std::vector<int64> st;
    TF_RETURN_IF_ERROR(c->GetAttr("strides", &st));
    if (st.size() == 5 && (st[0] != 1 || st[ch] != 1))
      return errors::Unimplemented("Current implementation does not yet support strides in the "
                                   "batch and depth dimensions. (Conv3D: strides ",
                                   pdk_kernels::ListString(st), ", data_format ", fmt, ")");
    return OkStatus();
  }

  pdk_kernels::Window3D win_;
};

template <class T>
class Conv3DOp : public Conv3DBase {
 public:
  explicit Conv3DOp(OpKernelConstruction* c) : Conv3DBase(c, /*check_batch_depth_stride=*/true) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, RunActivationResult<T>(ctx, 0, "input", [&](const Tensor& t, Tensor* out) {
                     return ComputeNDHWC(ctx, t, out);
                   }));
  }

 private:
  Status ComputeNDHWC(OpKernelContext* ctx, const Tensor& input, Tensor* out) const {
    const Tensor& filter = ctx->input(1);
    const pdk::StatusOr<Geom> geom =
        pdk_kernels::MakeConvGeomND<kD>(type_string().c_str(), win_, input.shape().pdk_shape(),
                                        "input", filter.shape().pdk_shape(), "filter");
    TF_RETURN_IF_ERROR(geom.status());
    const Geom& g = geom.value();
    TF_RETURN_IF_ERROR(
        AllocateLast(ctx, DataTypeToEnum<T>::value, TensorShape(g.OutputShape()), out));
    if (out->NumElements() == 0) return OkStatus();
    if (g.K() == 0) {
      T* y = static_cast<T*>(out->data());
      std::fill(y, y + out->NumElements(), T(0));
      return OkStatus();
    }
    return RunWidened<T>(ctx, input, filter, out, [&](const auto* x, const auto* w, auto* y) {
      return Forward(ctx, g, x, w, y);
    });
  }
};

template <class T>
class Conv3DBackpropInputOp : public Conv3DBase {
 public:
  explicit Conv3DBackpropInputOp(OpKernelConstruction* c)
      : Conv3DBase(c, /*check_batch_depth_stride=*/false) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, RunActivationResult<T>(ctx, 2, "out_backprop",
                                               [&](const Tensor& t, Tensor* out) {
                                                 return ComputeNDHWC(ctx, t, out);
                                               }));
  }

 private:
  Status ComputeNDHWC(OpKernelContext* ctx, const Tensor& dy, Tensor* out) const {
    const char* op = type_string().c_str();
    const pdk::StatusOr<pdk::Shape> sizes =
        pdk_kernels::ReadShapeN(ctx, 0, "input_sizes", kD + 2);
    TF_RETURN_IF_ERROR(sizes.status());
    const pdk::Shape is = channels_first() ? ToLast(sizes.value()) : sizes.value();
    const Tensor& filter = ctx->input(1);
    const pdk::Shape& fs = filter.shape().pdk_shape();
    const pdk::StatusOr<Geom> geom =
        pdk_kernels::MakeConvGeomND<kD>(op, win_, is, "input_sizes", fs, "filter");
    TF_RETURN_IF_ERROR(geom.status());
    const Geom& g = geom.value();
    TF_RETURN_IF_ERROR(pdk_kernels::CheckOutBackpropND<kD>(op, g, dy.shape().pdk_shape(), is, fs));
    TF_RETURN_IF_ERROR(AllocateLast(ctx, DataTypeToEnum<T>::value, TensorShape(is), out));
    if (out->NumElements() == 0) return OkStatus();
    if (g.Taps() * g.f == 0 || dy.NumElements() == 0) {
      T* dx = static_cast<T*>(out->data());
      std::fill(dx, dx + out->NumElements(), T(0));
      return OkStatus();
    }
    return RunWidened<T>(ctx, dy, filter, out, [&](const auto* d, const auto* w, auto* dx) {
      return BackpropInput(ctx, g, d, w, dx);
    });
  }
};

template <class T>
class Conv3DBackpropFilterOp : public Conv3DBase {
 public:
  explicit Conv3DBackpropFilterOp(OpKernelConstruction* c)
      : Conv3DBase(c, /*check_batch_depth_stride=*/false) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, RunFilterResult<T>(ctx, [&](const Tensor& x, const Tensor& dy) {
                     return ComputeNDHWC(ctx, x, dy);
                   }));
  }

 private:
  Status ComputeNDHWC(OpKernelContext* ctx, const Tensor& input, const Tensor& dy) const {
    const char* op = type_string().c_str();
    const pdk::StatusOr<pdk::Shape> sizes =
        pdk_kernels::ReadShapeN(ctx, 1, "filter_sizes", kD + 2);
    TF_RETURN_IF_ERROR(sizes.status());
    const pdk::Shape& fs = sizes.value();
    const pdk::Shape& is = input.shape().pdk_shape();
    const pdk::StatusOr<Geom> geom =
        pdk_kernels::MakeConvGeomND<kD>(op, win_, is, "input", fs, "filter_sizes");
    TF_RETURN_IF_ERROR(geom.status());
    const Geom& g = geom.value();
    TF_RETURN_IF_ERROR(pdk_kernels::CheckOutBackpropND<kD>(op, g, dy.shape().pdk_shape(), is, fs));
    Tensor* out = nullptr;
    TF_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(fs), &out));
    if (out->NumElements() == 0) return OkStatus();
    if (g.M() == 0) {  // the sum over no output positions
      T* dw = static_cast<T*>(out->data());
      std::fill(dw, dw + out->NumElements(), T(0));
      return OkStatus();
    }
    return RunWidened<T>(ctx, input, dy, out, [&](const auto* x, const auto* d, auto* dw) {
      return BackpropFilter(ctx, g, x, d, dw);
    });
  }
};

}  // namespace

#define PDK_REGISTER_CONV3D_(T)                                                       \
  REGISTER_KERNEL_BUILDER(Name("Conv3D").Device(DEVICE_PDK).TypeConstraint<T>("T"),   \
                          Conv3DOp<T>);                                               \
  REGISTER_KERNEL_BUILDER(Name("Conv3DBackpropInputV2")                               \
                              .Device(DEVICE_PDK)                                     \
                              .TypeConstraint<T>("T")                                 \
                              .TypeConstraint<int32>("Tshape")                        \
                              .HostMemory("input_sizes"),                             \
                          Conv3DBackpropInputOp<T>);                                  \
  REGISTER_KERNEL_BUILDER(Name("Conv3DBackpropInputV2")                               \
                              .Device(DEVICE_PDK)                                     \
                              .TypeConstraint<T>("T")                                 \
                              .TypeConstraint<int64>("Tshape")                        \
                              .HostMemory("input_sizes"),                             \
                          Conv3DBackpropInputOp<T>);                                  \
  REGISTER_KERNEL_BUILDER(Name("Conv3DBackpropFilterV2")                              \
                              .Device(DEVICE_PDK)                                     \
                              .TypeConstraint<T>("T")                                 \
                              .HostMemory("filter_sizes"),                            \
                          Conv3DBackpropFilterOp<T>)
PDK_REGISTER_CONV3D_(float);
PDK_REGISTER_CONV3D_(double);
PDK_REGISTER_CONV3D_(Eigen::half);
PDK_REGISTER_CONV3D_(Eigen::bfloat16);
#undef PDK_REGISTER_CONV3D_

}  // namespace tensorflow
