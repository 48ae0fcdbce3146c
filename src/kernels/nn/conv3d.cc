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
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "compute/widen.h"
#include "compute/gemm.h"
#include "kernels/nn/channels_first.h"
#include "kernels/nn/window.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

constexpr int kD = 3;
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
pdk::Status Forward(const pdk::Context& ctx, const Geom& g, const C* x, const C* w, C* y) {
  const auto& dev = pdk_compute::Device(ctx);
  const int64_t K = g.K(), F = g.f;
  const Tiles t(dev, g.M(), K, sizeof(C), 2.0 * K * F);
  PDK_ASSIGN_OR_RETURN(pdk::Tensor scratch,
                       ctx.allocate_temp(pdk::kDataType<C>, pdk::Shape{t.shards, t.tile, K}));
  pdk_compute::RunShards(dev, t.shards, [&](int64_t s) {
    C* col = scratch.data<C>() + s * t.tile * K;
    t.ForShard(s, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) PatchRow<C>(g, x, r, col + (r - r0) * K);
      pdk_compute::GemmBlock<C>(false, false, r1 - r0, F, K, col, K, w, F, y + r0 * F, F);
    });
  });
  return pdk::Status::OK();
}

// dx[N*InPixels, C] = gather(dy)[.., Taps*F] * wt[Taps*F, C], wt = w as [Taps, F, C].
template <class C>
pdk::Status BackpropInput(const pdk::Context& ctx, const Geom& g, const C* dy, const C* w, C* dx) {
  const auto& dev = pdk_compute::Device(ctx);
  const int64_t taps = g.Taps(), KF = taps * g.f, C_ = g.c;
  PDK_ASSIGN_OR_RETURN(pdk::Tensor wt_t,
                       ctx.allocate_temp(pdk::kDataType<C>, pdk::Shape{taps, g.f, g.c}));
  C* wt = wt_t.data<C>();
  for (int64_t k = 0; k < taps; ++k)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t f = 0; f < g.f; ++f)
        wt[(k * g.f + f) * g.c + c] = w[(k * g.c + c) * g.f + f];
  const Tiles t(dev, g.n * g.InPixels(), KF, sizeof(C), 2.0 * KF * C_);
  PDK_ASSIGN_OR_RETURN(pdk::Tensor scratch,
                       ctx.allocate_temp(pdk::kDataType<C>, pdk::Shape{t.shards, t.tile, KF}));
  pdk_compute::RunShards(dev, t.shards, [&](int64_t s) {
    C* col = scratch.data<C>() + s * t.tile * KF;
    t.ForShard(s, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) GatherRow<kD, C>(g, dy, r, col + (r - r0) * KF);
      pdk_compute::GemmBlock<C>(false, false, r1 - r0, C_, KF, col, KF, wt, C_, dx + r0 * C_,
                                C_);
    });
  });
  return pdk::Status::OK();
}

// dw[K, F] = sum over tiles of patches[tile, K]^T * dy[tile, F]: shard 0
// accumulates into dw, the others into their own partial sums, added at the end.
template <class C>
pdk::Status BackpropFilter(const pdk::Context& ctx, const Geom& g, const C* x, const C* dy,
                           C* dw) {
  const auto& dev = pdk_compute::Device(ctx);
  const int64_t K = g.K(), F = g.f;
  const Tiles t(dev, g.M(), K, sizeof(C), 2.0 * K * F);
  const int64_t stride = t.tile * K + K * F;
  PDK_ASSIGN_OR_RETURN(pdk::Tensor scratch,
                       ctx.allocate_temp(pdk::kDataType<C>, pdk::Shape{t.shards, stride}));
  C* base = scratch.data<C>();
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
  return pdk::Status::OK();
}

// Attribute decoding for the three ops; NCDHW runs the NDHWC code on
// transposed copies (channels_first.h).
class Conv3DBase : public ChannelsFirstBridge<kD> {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    pdk_compute::UseSingleThreadedOpenBlas();
    return ParseWindow(a, /*allow_explicit=*/false, &win_, &format_);
  }

 protected:
  Window3D win_;
};

template <class T>
class Conv3DOp : public Conv3DBase {
 public:
  // A batch or depth stride: Unimplemented, checked first, in the words of
  // TensorFlow's float32 kernel (oneDNN's, also bfloat16 / float16 here); its
  // Eigen kernel (float64) says InvalidArgument (tests/python/fuzz_exceptions.py).
  pdk::Status Init(const pdk::Attrs& a) {
    std::string fmt = "NDHWC";
    PDK_RETURN_IF_ERROR(a.GetOptional("data_format", &fmt));
    const int c = fmt == "NCDHW" ? 1 : 4;
    std::vector<int64_t> st;
    PDK_RETURN_IF_ERROR(a.Get("strides", &st));
    if (st.size() == 5 && (st[0] != 1 || st[c] != 1))
      return pdk::Unimplemented("Current implementation does not yet support strides in the "
                                "batch and depth dimensions. (Conv3D: strides ", ListString(st),
                                ", data_format ", fmt, ")");
    return Conv3DBase::Init(a);
  }
  pdk::Status Compute(pdk::Context& ctx) const {
    return RunActivationResult<T>(ctx, 0, "input", [&](const pdk::Tensor& t, pdk::Tensor* out) {
      return ComputeNDHWC(ctx, t, out);
    });
  }

 private:
  pdk::Status ComputeNDHWC(pdk::Context& ctx, const pdk::Tensor& input,
                           pdk::Tensor* out_t) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor filter, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(Geom g, MakeConvGeomND<kD>(ctx.op(), win_, input.shape(), "input",
                                                    filter.shape(), "filter"));
    PDK_ASSIGN_OR_RETURN(*out_t, AllocateLast(ctx, pdk::kDataType<T>, g.OutputShape()));
    pdk::Tensor& out = *out_t;
    if (out.num_elements() == 0) return pdk::Status::OK();
    if (g.K() == 0) {
      std::fill(out.data<T>(), out.data<T>() + out.num_elements(), T(0));
      return pdk::Status::OK();
    }
    return RunWidened<T>(ctx, input, filter, out, [&](const auto* x, const auto* w, auto* y) {
      return Forward(ctx, g, x, w, y);
    });
  }
};

template <class T>
class Conv3DBackpropInputOp : public Conv3DBase {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    return RunActivationResult<T>(ctx, 2, "out_backprop",
                                  [&](const pdk::Tensor& t, pdk::Tensor* out) {
                                    return ComputeNDHWC(ctx, t, out);
                                  });
  }

 private:
  pdk::Status ComputeNDHWC(pdk::Context& ctx, const pdk::Tensor& dy, pdk::Tensor* out_t) const {
    PDK_ASSIGN_OR_RETURN(pdk::Shape sizes, ReadShapeN(ctx, 0, "input_sizes", kD + 2));
    const pdk::Shape is = channels_first() ? ToLast(sizes) : sizes;
    PDK_ASSIGN_OR_RETURN(pdk::Tensor filter, ctx.input(1));
    const pdk::Shape fs = filter.shape();
    PDK_ASSIGN_OR_RETURN(Geom g,
                         MakeConvGeomND<kD>(ctx.op(), win_, is, "input_sizes", fs, "filter"));
    PDK_RETURN_IF_ERROR(CheckOutBackpropND<kD>(ctx.op(), g, dy.shape(), is, fs));
    PDK_ASSIGN_OR_RETURN(*out_t, AllocateLast(ctx, pdk::kDataType<T>, is));
    pdk::Tensor& out = *out_t;
    if (out.num_elements() == 0) return pdk::Status::OK();
    if (g.Taps() * g.f == 0 || dy.num_elements() == 0) {
      std::fill(out.data<T>(), out.data<T>() + out.num_elements(), T(0));
      return pdk::Status::OK();
    }
    return RunWidened<T>(ctx, dy, filter, out, [&](const auto* d, const auto* w, auto* dx) {
      return BackpropInput(ctx, g, d, w, dx);
    });
  }
};

template <class T>
class Conv3DBackpropFilterOp : public Conv3DBase {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    return RunFilterResult<T>(ctx, [&](const pdk::Tensor& x, const pdk::Tensor& dy) {
      return ComputeNDHWC(ctx, x, dy);
    });
  }

 private:
  pdk::Status ComputeNDHWC(pdk::Context& ctx, const pdk::Tensor& input,
                           const pdk::Tensor& dy) const {
    PDK_ASSIGN_OR_RETURN(pdk::Shape fs, ReadShapeN(ctx, 1, "filter_sizes", kD + 2));
    const pdk::Shape is = input.shape();
    PDK_ASSIGN_OR_RETURN(Geom g,
                         MakeConvGeomND<kD>(ctx.op(), win_, is, "input", fs, "filter_sizes"));
    PDK_RETURN_IF_ERROR(CheckOutBackpropND<kD>(ctx.op(), g, dy.shape(), is, fs));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, fs));
    if (out.num_elements() == 0) return pdk::Status::OK();
    if (g.M() == 0) {  // the sum over no output positions
      std::fill(out.data<T>(), out.data<T>() + out.num_elements(), T(0));
      return pdk::Status::OK();
    }
    return RunWidened<T>(ctx, input, dy, out, [&](const auto* x, const auto* d, auto* dw) {
      return BackpropFilter(ctx, g, x, d, dw);
    });
  }
};

}  // namespace

PDK_REGISTER_KERNELS(NnConv3D, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<Conv3DOp<T>>("Conv3D").Type("T", t));
    pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto s) {
      r.Add(pdk::KernelDef<Conv3DBackpropInputOp<T>>("Conv3DBackpropInputV2")
                .Type("T", t)
                .Type("Tshape", s)
                .HostMemory("input_sizes"));
    });
    r.Add(pdk::KernelDef<Conv3DBackpropFilterOp<T>>("Conv3DBackpropFilterV2")
              .Type("T", t)
              .HostMemory("filter_sizes"));
  });
}

}  // namespace pdk_kernels
