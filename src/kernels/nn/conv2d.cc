// Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter (tensorflow/core/ops/nn_ops.cc).
//
//   Conv2D(input [N,H,W,C], filter [KH,KW,C/G,F]) -> output [N,OH,OW,F]
//     output[n,oh,ow,f] = sum_{kh,kw,c'} input[n, oh*SH - PT + kh*DH,
//                                              ow*SW - PL + kw*DW, g*C/G + c'] * filter[kh,kw,c',f]
//     with g = f / (F/G) the group of output channel f, c' < C/G (positions
//     outside the input read as zero). G = C / filter in_depth: 1 is the
//     ordinary convolution; G > 1 is a grouped convolution (what Keras 3's
//     Conv2D(groups=G) emits through tf.nn.convolution; G = C with F = C*M is
//     depthwise-like). TF's CPU Conv2D computes grouped ones (Eigen,
//     conv_ops_impl.h LaunchGrouped), its backprops refuse them.
//   Conv2DBackpropInput(input_sizes (host int32 [4], or [2] = H,W with
//                       C = filter in_depth, as TF), filter [KH,KW,C/G,F],
//                       out_backprop [N,OH,OW,F]) -> d input [N,H,W,C]
//   Conv2DBackpropFilter(input [N,H,W,C], filter_sizes (host int32 [4]),
//                        out_backprop [N,OH,OW,F]) -> d filter [KH,KW,C/G,F]
//   T in {float32, float64, float16, bfloat16}; the 16-bit floats are widened
//   to float32 scratch copies, computed by the float32 code (oneDNN, float
//   accumulation) and rounded once. Attributes: strides, padding ("SAME", "VALID",
//   "EXPLICIT" with explicit_paddings), dilations, data_format, use_cudnn_on_gpu
//   (ignored). OH, OW and the leading paddings PT, PL follow TF's
//   GetWindowedOutputSizeVerbose (see window.h).
//
// data_format "NCHW": input, out_backprop and the result are [N,C,H,W]
// (input_sizes too; strides, dilations and explicit_paddings in NCHW order),
// the filter stays [KH,KW,C/G,F]. The kernels transpose the activations to NHWC
// scratch copies, run the NHWC code and transpose the result back
// (channels_first.h, pdk_compute::BatchedTranspose2D; TF's own CPU kernels
// have no NCHW Conv2D). Shape errors then name the NHWC copies' shapes and
// say so.
//
// Errors (InvalidArgument): operands not rank 4; C not a multiple of the
// filter's in_depth ("input depth must be evenly divisible by filter depth:
// C vs c"), F not a multiple of G ("output depth must be evenly divisible by
// number of groups: F vs G"), TF's CPU kernel's wording, then PDK's naming
// both shapes (window.h, MakeConvGeom); out_backprop's shape not the one the
// forward op would produce; strides or dilations on the batch/channel
// dimensions; a negative output size.
//
// Algorithm, float32 (and the widened 16-bit floats): oneDNN's convolution
// primitive, forward / backward data / backward weights, grouped ones with
// oneDNN's grouped weights (TF's filter buffer is its tag hwigo), on TF's
// layouts with the batch split over the device pool (src/compute/dnnl_conv.h;
// measured in docs/architecture.md, "float32 convolution: oneDNN"). float64,
// and float32 whenever oneDNN returns an error: im2col + GEMM
// (src/compute/gemm.h, the MatMul path), a grouped convolution one group at
// a time on contiguous copies of the group's channels (conv_compute.h,
// ForEachGroup):
//   * 1x1 filters with stride 1 and no padding are one GEMM over the
//     [N*H*W, C] input, split over the device pool.
//   * Otherwise the M = N*OH*OW output pixels are cut into tiles of kTileBytes
//     of patch rows; each pool shard takes a contiguous range of tiles, builds
//     each tile's patch matrix [rows, KH*KW*C] in its own scratch and calls a
//     single-threaded GEMM against the filter viewed as [KH*KW*C, F].
//   * Backprop input is computed as a gather (no scatter, so shards never
//     collide): for each input pixel, the row of [KH*KW*F] out_backprop values
//     whose windows cover it (zero where none does) times the filter
//     rearranged to [KH*KW*F, C].
//   * Backprop filter: each shard accumulates patches^T * out_backprop over
//     its tiles into its own [KH*KW*C, F] partial sum (GEMM with beta = 1);
//     the partials are then added.
// Summation order therefore differs from TensorFlow's (oneDNN / Eigen)
// kernels, within float rounding. Shape checks all run before either path.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "compute/gemm.h"
#include "kernels/nn/channels_first.h"
#include "kernels/nn/conv_compute.h"
#include "kernels/nn/window.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

using conv::Im2Col;
using conv::MakeTiling;
using Operand = conv::ConvOperand;
using conv::Tiling;
using pdk_compute::GemmBlock;

// Row of the transposed gather for backprop input: for input pixels [r0, r1)
// (N,H,W order), the [KH*KW*F] out_backprop values whose window tap (kh,kw)
// lands on the pixel: oh = (ih + PT - kh*DH) / SH when that divides exactly
// and is in [0, OH) (likewise for ow); zeros elsewhere.
template <class T>
void Col2ImGather(const ConvGeom& g, const T* dy, int64_t r0, int64_t r1, T* col) {
  const int64_t f = g.f, K = g.kh * g.kw * f;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / (g.h * g.w), rem = r % (g.h * g.w);
    const int64_t ih = rem / g.w, iw = rem % g.w;
    T* row = col + (r - r0) * K;
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      const int64_t num_h = ih + g.pt - kh * g.dh;
      const int64_t oh = num_h / g.sh;
      T* dst = row + kh * g.kw * f;
      if (num_h < 0 || num_h % g.sh != 0 || oh >= g.oh) {
        std::memset(dst, 0, sizeof(T) * g.kw * f);
        continue;
      }
      const T* src_row = dy + (n * g.oh + oh) * g.ow * f;
      for (int64_t kw = 0; kw < g.kw; ++kw, dst += f) {
        const int64_t num_w = iw + g.pl - kw * g.dw;
        const int64_t ow = num_w / g.sw;
        if (num_w < 0 || num_w % g.sw != 0 || ow >= g.ow) {
          std::memset(dst, 0, sizeof(T) * f);
        } else {
          std::memcpy(dst, src_row + ow * f, sizeof(T) * f);
        }
      }
    }
  }
}

// Common attribute decoding for the three ops; the NCHW <-> NHWC layout
// swaps around the NHWC code are channels_first.h's.
class ConvBase : public ChannelsFirstBridge<2> {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    pdk_compute::UseSingleThreadedOpenBlas();
    return ParseWindow(a, /*allow_explicit=*/true, &win_, &format_);
  }

 protected:
  // Conv2D, as TensorFlow's CPU kernels (InitConv2DParameters, conv_ops.cc;
  // its oneDNN kernel answers the same): a batch or depth stride other than 1
  // is Unimplemented, checked before the spatial strides. (Batch or depth
  // dilations, and Conv2DBackpropInput's strides, are InvalidArgument in
  // TensorFlow's oneDNN kernels, float32 / bfloat16 / float16 here, and
  // Unimplemented in its Eigen kernel, float64: PDK answers InvalidArgument,
  // as ParseWindow does; see tests/python/fuzz_exceptions.py.)
  pdk::Status InitUnimplementedBatchDepthStride(const pdk::Attrs& a, const char* op) {
    std::string fmt = "NHWC";
    PDK_RETURN_IF_ERROR(a.GetOptional("data_format", &fmt));
    const int c = fmt == "NCHW" ? 1 : 3;
    std::vector<int64_t> st, di;
    PDK_RETURN_IF_ERROR(a.Get("strides", &st));
    PDK_RETURN_IF_ERROR(a.GetOptional("dilations", &di));
    if (st.size() == 4 && (di.empty() || di.size() == 4) && (st[0] != 1 || st[c] != 1))
      return pdk::Unimplemented("Current implementation does not yet support strides in the "
                                "batch and depth dimensions. (", op, ": strides ",
                                ListString(st), ", data_format ", fmt, ")");
    return Init(a);
  }

 protected:
  Window2D win_;
};

template <class T>
class Conv2DOp : public ConvBase {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return InitUnimplementedBatchDepthStride(a, "Conv2D"); }
  pdk::Status Compute(pdk::Context& ctx) const {
    return RunActivationResult<T>(ctx, 0, "input", [&](const pdk::Tensor& t, pdk::Tensor* out) {
      return ComputeNHWC(ctx, t, out);
    });
  }

 private:
  pdk::Status ComputeNHWC(pdk::Context& ctx, const pdk::Tensor& input, pdk::Tensor* out_t) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor filter, ctx.input(1));
    const pdk::Shape is = input.shape(), fs = filter.shape();
    PDK_ASSIGN_OR_RETURN(ConvGeom g, MakeConvGeom(ctx.op(), win_, is, "input", fs, "filter", false));
    PDK_ASSIGN_OR_RETURN(*out_t, AllocateLast(ctx, pdk::kDataType<T>, pdk::Shape{g.n, g.oh, g.ow, g.f}));
    pdk::Tensor& out = *out_t;
    if (out.num_elements() == 0) return pdk::Status::OK();
    T* y = out.data<T>();
    if constexpr (pdk_compute::kIsHalfLike<T>) {  // computed in float32, rounded once
      PDK_ASSIGN_OR_RETURN(pdk::Tensor xf, pdk_compute::WidenToFloat<T>(ctx, input));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor wf, pdk_compute::WidenToFloat<T>(ctx, filter));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor yf, ctx.allocate_temp(TF_FLOAT, out.shape()));
      PDK_RETURN_IF_ERROR(
          conv::Conv2DForward<float>(ctx, g, xf.data<float>(), wf.data<float>(), yf.data<float>()));
      pdk_compute::Convert<float, T>(pdk_compute::Device(ctx), yf.data<float>(), y,
                                     out.num_elements());
      return pdk::Status::OK();
    } else {
      return conv::Conv2DForward<T>(ctx, g, input.data<T>(), filter.data<T>(), y);
    }
  }
};

template <class T>
class Conv2DBackpropInputOp : public ConvBase {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    return RunActivationResult<T>(ctx, 2, "out_backprop",
                                  [&](const pdk::Tensor& t, pdk::Tensor* out) {
                                    return ComputeNHWC(ctx, t, out);
                                  });
  }

 private:
  pdk::Status ComputeNHWC(pdk::Context& ctx, const pdk::Tensor& dy_t, pdk::Tensor* out_t) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor sizes, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor filter, ctx.input(1));
    const pdk::Shape fs = filter.shape(), ds = dy_t.shape();
    PDK_RETURN_IF_ERROR(pdk::CheckRank(ctx.op(), "filter", fs, 4));
    PDK_RETURN_IF_ERROR(pdk::CheckRank(ctx.op(), "out_backprop", ds, 4));
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> sz,
                         pdk::ReadIntVector(ctx.op(), "input_sizes", sizes));
    pdk::Shape is;
    if (sizes.rank() == 1 && sz.size() == 4) {
      is = channels_first() ? ToLast(pdk::Shape(sz)) : pdk::Shape(sz);
    } else if (sizes.rank() == 1 && sz.size() == 2) {  // spatial only, as TF accepts
      is = pdk::Shape{ds[0], sz[0], sz[1], fs[2]};
    } else {
      return pdk::InvalidArgument(ctx.op(), ": input_sizes must be a vector of 4 (or 2) "
                                  "elements, got shape ", sizes.shape());
    }
    for (int i = 0; i < 4; ++i)
      if (is[i] < 0)
        return pdk::InvalidArgument(ctx.op(), ": input_sizes ", is, " has a negative dimension");
    PDK_ASSIGN_OR_RETURN(ConvGeom g, MakeConvGeom(ctx.op(), win_, is, "input_sizes", fs, "filter", false));
    PDK_RETURN_IF_ERROR(CheckOutBackprop(ctx.op(), g, ds, is, fs));
    PDK_ASSIGN_OR_RETURN(*out_t, AllocateLast(ctx, pdk::kDataType<T>, is));
    pdk::Tensor& out = *out_t;
    if (out.num_elements() == 0) return pdk::Status::OK();
    T* dx = out.data<T>();
    const int64_t KF = g.kh * g.kw * g.f;
    if (KF == 0 || ds.num_elements() == 0) {
      std::fill(dx, dx + out.num_elements(), T(0));
      return pdk::Status::OK();
    }
    if constexpr (pdk_compute::kIsHalfLike<T>) {  // computed in float32, rounded once
      PDK_ASSIGN_OR_RETURN(pdk::Tensor dyf, pdk_compute::WidenToFloat<T>(ctx, dy_t));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor wf, pdk_compute::WidenToFloat<T>(ctx, filter));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor dxf, ctx.allocate_temp(TF_FLOAT, out.shape()));
      PDK_RETURN_IF_ERROR(
          Run<float>(ctx, g, dyf.data<float>(), wf.data<float>(), dxf.data<float>()));
      pdk_compute::Convert<float, T>(pdk_compute::Device(ctx), dxf.data<float>(), dx,
                                     out.num_elements());
      return pdk::Status::OK();
    } else {
      return Run<T>(ctx, g, dy_t.data<T>(), filter.data<T>(), dx);
    }
  }

  template <class V>
  static pdk::Status Run(const pdk::Context& ctx, const ConvGeom& g, const V* dy, const V* w,
                         V* dx) {
    const int64_t KF = g.kh * g.kw * g.f;
    if (conv::TryDnnlConv<V>(ctx, pdk_compute::DnnlConvKind::kBackwardData, g, dy, w, dx))
      return pdk::Status::OK();
    if (g.groups > 1)
      return conv::ForEachGroup<V>(ctx, g, Operand::kOutput, dy, Operand::kFilter, w,
                                   Operand::kInput, dx,
                                   [&](const ConvGeom& g1, const V* d, const V* f, V* out) {
                                     return Run<V>(ctx, g1, d, f, out);
                                   });
    const auto& dev = pdk_compute::Device(ctx);
    if (g.IsPlainGemm()) {  // dx[M, C] = dy[M, F] * filter[C, F]^T
      pdk_compute::Gemm<V>(dev, false, true, g.M(), g.c, g.f, dy, w, dx);
      return pdk::Status::OK();
    }
    // filter [KH,KW,C,F] -> wt [KH,KW,F,C].
    PDK_ASSIGN_OR_RETURN(pdk::Tensor wt_t,
                         ctx.allocate_temp(pdk::kDataType<V>, pdk::Shape{g.kh, g.kw, g.f, g.c}));
    V* wt = wt_t.data<V>();
    for (int64_t k = 0; k < g.kh * g.kw; ++k) {
      const V* src = w + k * g.c * g.f;
      V* dst = wt + k * g.c * g.f;
      for (int64_t c = 0; c < g.c; ++c)
        for (int64_t f = 0; f < g.f; ++f) dst[f * g.c + c] = src[c * g.f + f];
    }
    const int64_t rows = g.n * g.h * g.w, C = g.c;
    const Tiling t = MakeTiling<V>(dev, rows, KF, 2.0 * KF * C);
    PDK_ASSIGN_OR_RETURN(pdk::Tensor scratch, ctx.allocate_temp(
                                                  pdk::kDataType<V>,
                                                  pdk::Shape{t.shards, t.tile_rows, KF}));
    V* col_base = scratch.data<V>();
    pdk_compute::RunShards(dev, t.shards, [&](int64_t s) {
      V* col = col_base + s * t.tile_rows * KF;
      for (int64_t i = t.tiles * s / t.shards, e = t.tiles * (s + 1) / t.shards; i < e; ++i) {
        const int64_t r0 = i * t.tile_rows, r1 = std::min(rows, r0 + t.tile_rows);
        Col2ImGather<V>(g, dy, r0, r1, col);
        GemmBlock<V>(false, false, r1 - r0, C, KF, col, KF, wt, C, dx + r0 * C, C);
      }
    });
    return pdk::Status::OK();
  }
};

template <class T>
class Conv2DBackpropFilterOp : public ConvBase {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    return RunFilterResult<T>(ctx, [&](const pdk::Tensor& x, const pdk::Tensor& dy) {
      return ComputeNHWC(ctx, x, dy);
    });
  }

 private:
  pdk::Status ComputeNHWC(pdk::Context& ctx, const pdk::Tensor& input,
                          const pdk::Tensor& dy_t) const {
    PDK_ASSIGN_OR_RETURN(pdk::Shape fs, ReadShape4(ctx, 1, "filter_sizes"));
    const pdk::Shape is = input.shape(), ds = dy_t.shape();
    PDK_ASSIGN_OR_RETURN(ConvGeom g, MakeConvGeom(ctx.op(), win_, is, "input", fs, "filter_sizes", false));
    PDK_RETURN_IF_ERROR(CheckOutBackprop(ctx.op(), g, ds, is, fs));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, fs));
    if (out.num_elements() == 0) return pdk::Status::OK();
    T* dw = out.data<T>();
    if (g.M() == 0) {  // empty batch or empty output: the sum over no pixels
      std::fill(dw, dw + out.num_elements(), T(0));
      return pdk::Status::OK();
    }
    if constexpr (pdk_compute::kIsHalfLike<T>) {  // computed in float32, rounded once
      PDK_ASSIGN_OR_RETURN(pdk::Tensor xf, pdk_compute::WidenToFloat<T>(ctx, input));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor dyf, pdk_compute::WidenToFloat<T>(ctx, dy_t));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor dwf, ctx.allocate_temp(TF_FLOAT, out.shape()));
      PDK_RETURN_IF_ERROR(
          Run<float>(ctx, g, xf.data<float>(), dyf.data<float>(), dwf.data<float>()));
      pdk_compute::Convert<float, T>(pdk_compute::Device(ctx), dwf.data<float>(), dw,
                                     out.num_elements());
      return pdk::Status::OK();
    } else {
      return Run<T>(ctx, g, input.data<T>(), dy_t.data<T>(), dw);
    }
  }

  template <class C>
  static pdk::Status Run(const pdk::Context& ctx, const ConvGeom& g, const C* x, const C* dy,
                         C* dw) {
    const int64_t M = g.M(), K = g.K(), F = g.f;
    if (conv::TryDnnlConv<C>(ctx, pdk_compute::DnnlConvKind::kBackwardWeights, g, x, dy, dw))
      return pdk::Status::OK();
    if (g.groups > 1)
      return conv::ForEachGroup<C>(ctx, g, Operand::kInput, x, Operand::kOutput, dy,
                                   Operand::kFilter, dw,
                                   [&](const ConvGeom& g1, const C* xg, const C* d, C* out) {
                                     return Run<C>(ctx, g1, xg, d, out);
                                   });
    const auto& dev = pdk_compute::Device(ctx);
    if (g.IsPlainGemm()) {  // dw[C, F] = x[M, C]^T * dy[M, F]
      pdk_compute::Gemm<C>(dev, true, false, g.c, F, M, x, dy, dw);
      return pdk::Status::OK();
    }
    const Tiling t = MakeTiling<C>(dev, M, K, 2.0 * K * F);
    // Shard 0 accumulates into the output itself; the others into partials.
    PDK_ASSIGN_OR_RETURN(pdk::Tensor scratch,
                         ctx.allocate_temp(pdk::kDataType<C>,
                                           pdk::Shape{t.shards, t.tile_rows * K + K * F}));
    C* base = scratch.data<C>();
    const int64_t stride = t.tile_rows * K + K * F;
    pdk_compute::RunShards(dev, t.shards, [&](int64_t s) {
      C* col = base + s * stride;
      C* acc = s == 0 ? dw : col + t.tile_rows * K;
      bool first = true;
      for (int64_t i = t.tiles * s / t.shards, e = t.tiles * (s + 1) / t.shards; i < e; ++i) {
        const int64_t r0 = i * t.tile_rows, r1 = std::min(M, r0 + t.tile_rows);
        Im2Col<C>(g, x, r0, r1, col);
        GemmBlock<C>(true, false, K, F, r1 - r0, col, K, dy + r0 * F, F, acc, F, !first);
        first = false;
      }
      if (first) std::fill(acc, acc + K * F, C(0));
    });
    using Vec = Eigen::Array<C, Eigen::Dynamic, 1>;
    Eigen::Map<Vec> total(dw, K * F);
    for (int64_t s = 1; s < t.shards; ++s)
      total += Eigen::Map<const Vec>(base + s * stride + t.tile_rows * K, K * F);
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(NnConv2D, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<Conv2DOp<T>>("Conv2D").Type("T", t).Async());
    r.Add(pdk::KernelDef<Conv2DBackpropInputOp<T>>("Conv2DBackpropInput")
              .Type("T", t)
              .HostMemory("input_sizes")
              .Async());
    r.Add(pdk::KernelDef<Conv2DBackpropFilterOp<T>>("Conv2DBackpropFilter")
              .Type("T", t)
              .HostMemory("filter_sizes")
              .Async());
  });
}

}  // namespace pdk_kernels
