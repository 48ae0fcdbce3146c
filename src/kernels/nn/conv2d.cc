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
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "compute/gemm.h"
#include "compute/widen.h"
#include "kernels/nn/channels_first.h"
#include "kernels/nn/conv_compute.h"
#include "kernels/nn/window.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_compute::GemmBlock;
using pdk_compute::RunWidened;
using pdk_kernels::ConvGeom;
using pdk_kernels::conv::Im2Col;
using pdk_kernels::conv::MakeTiling;
using Operand = pdk_kernels::conv::ConvOperand;
using pdk_kernels::conv::Tiling;
namespace conv = pdk_kernels::conv;

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
class ConvBase : public OpKernel, public pdk_kernels::ChannelsFirstBridge<2> {
 public:
  // `batch_depth_stride_op`: Conv2D's check below, first, for that op.
  ConvBase(OpKernelConstruction* c, const char* batch_depth_stride_op = nullptr)
      : OpKernel(c) {
    if (batch_depth_stride_op != nullptr)
      OP_REQUIRES_OK(c, UnimplementedBatchDepthStride(c, batch_depth_stride_op));
    pdk_compute::UseSingleThreadedOpenBlas();
    OP_REQUIRES_OK(c, pdk_kernels::ParseWindow(c, /*allow_explicit=*/true, &win_, &format_));
  }

 protected:
  // Conv2D, as TensorFlow's CPU kernels (InitConv2DParameters, conv_ops.cc;
  // its oneDNN kernel answers the same): a batch or depth stride other than 1
  // is Unimplemented, checked before the spatial strides. (Batch or depth
  // dilations, and Conv2DBackpropInput's strides, are InvalidArgument in
  // TensorFlow's oneDNN kernels, float32 / bfloat16 / float16 here, and
  // Unimplemented in its Eigen kernel, float64: PDK answers InvalidArgument,
  // as ParseWindow does; see tests/python/fuzz_exceptions.py.)
  static Status UnimplementedBatchDepthStride(OpKernelConstruction* c, const char* op) {
    std::string fmt = "NHWC";
    if (c->HasAttr("data_format")) TF_RETURN_IF_ERROR(c->GetAttr("data_format", &fmt));
    const int ch = fmt == "NCHW" ? 1 : 3;
    std::vector<int64> st, di;
    TF_RETURN_IF_ERROR(c->GetAttr("strides", &st));
    if (c->HasAttr("dilations")) TF_RETURN_IF_ERROR(c->GetAttr("dilations", &di));
    if (st.size() == 4 && (di.empty() || di.size() == 4) && (st[0] != 1 || st[ch] != 1))
      return errors::Unimplemented("Current implementation does not yet support strides in the "
                                   "batch and depth dimensions. (", op, ": strides ",
                                   pdk_kernels::ListString(st), ", data_format ", fmt, ")");
    return OkStatus();
  }

  pdk_kernels::Window2D win_;
};

template <class T>
class Conv2DOp : public ConvBase {
 public:
  explicit Conv2DOp(OpKernelConstruction* c) : ConvBase(c, "Conv2D") {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, RunActivationResult<T>(ctx, 0, "input", [&](const Tensor& t, Tensor* out) {
                     return ComputeNHWC(ctx, t, out);
                   }));
  }

 private:
  Status ComputeNHWC(OpKernelContext* ctx, const Tensor& input, Tensor* out) const {
    const Tensor& filter = ctx->input(1);
    const pdk::StatusOr<ConvGeom> geom =
        pdk_kernels::MakeConvGeom(type_string().c_str(), win_, input.shape().pdk_shape(),
                                  "input", filter.shape().pdk_shape(), "filter", false);
    TF_RETURN_IF_ERROR(geom.status());
    const ConvGeom& g = geom.value();
    TF_RETURN_IF_ERROR(AllocateLast(ctx, DataTypeToEnum<T>::value,
                                    TensorShape({g.n, g.oh, g.ow, g.f}), out));
    if (out->NumElements() == 0) return OkStatus();
    // 16-bit floats: computed in float32, rounded once.
    return RunWidened<T>(ctx, input, filter, out, [&](const auto* x, const auto* w, auto* y) {
      return conv::Conv2DForward(ctx, g, x, w, y);
    });
  }
};

template <class T>
class Conv2DBackpropInputOp : public ConvBase {
 public:
  explicit Conv2DBackpropInputOp(OpKernelConstruction* c) : ConvBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, RunActivationResult<T>(ctx, 2, "out_backprop",
                                               [&](const Tensor& t, Tensor* out) {
                                                 return ComputeNHWC(ctx, t, out);
                                               }));
  }

 private:
  Status ComputeNHWC(OpKernelContext* ctx, const Tensor& dy_t, Tensor* out) const {
    const char* op = type_string().c_str();
    const Tensor& sizes = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const pdk::Shape& fs = filter.shape().pdk_shape();
    const pdk::Shape& ds = dy_t.shape().pdk_shape();
    TF_RETURN_IF_ERROR(pdk::CheckRank(op, "filter", fs, 4));
    TF_RETURN_IF_ERROR(pdk::CheckRank(op, "out_backprop", ds, 4));
    std::vector<int64> sz;
    TF_RETURN_IF_ERROR(pdk_kernels::ReadIntVector(op, "input_sizes", sizes, &sz));
    pdk::Shape is;
    if (sizes.dims() == 1 && sz.size() == 4) {
      is = channels_first() ? ToLast(pdk::Shape(sz)) : pdk::Shape(sz);
    } else if (sizes.dims() == 1 && sz.size() == 2) {  // spatial only, as TF accepts
      is = pdk::Shape{ds[0], sz[0], sz[1], fs[2]};
    } else {
      return errors::InvalidArgument(op, ": input_sizes must be a vector of 4 (or 2) "
                                     "elements, got shape ", sizes.shape().pdk_shape());
    }
    for (int i = 0; i < 4; ++i)
      if (is[i] < 0)
        return errors::InvalidArgument(op, ": input_sizes ", is, " has a negative dimension");
    const pdk::StatusOr<ConvGeom> geom =
        pdk_kernels::MakeConvGeom(op, win_, is, "input_sizes", fs, "filter", false);
    TF_RETURN_IF_ERROR(geom.status());
    const ConvGeom& g = geom.value();
    TF_RETURN_IF_ERROR(pdk_kernels::CheckOutBackprop(op, g, ds, is, fs));
    TF_RETURN_IF_ERROR(AllocateLast(ctx, DataTypeToEnum<T>::value, TensorShape(is), out));
    if (out->NumElements() == 0) return OkStatus();
    T* dx = static_cast<T*>(out->data());
    const int64_t KF = g.kh * g.kw * g.f;
    if (KF == 0 || ds.num_elements() == 0) {
      std::fill(dx, dx + out->NumElements(), T(0));
      return OkStatus();
    }
    // 16-bit floats: computed in float32, rounded once.
    return RunWidened<T>(ctx, dy_t, filter, out, [&](const auto* dy, const auto* w, auto* d) {
      return Run(ctx, g, dy, w, d);
    });
  }

  template <class V>
  static Status Run(OpKernelContext* ctx, const ConvGeom& g, const V* dy, const V* w, V* dx) {
    const int64_t KF = g.kh * g.kw * g.f;
    const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    if (conv::TryDnnlConv<V>(dev, pdk_compute::DnnlConvKind::kBackwardData, g, dy, w, dx))
      return OkStatus();
    if (g.groups > 1)
      return conv::ForEachGroup<V>(ctx, g, Operand::kOutput, dy, Operand::kFilter, w,
                                   Operand::kInput, dx,
                                   [&](const ConvGeom& g1, const V* d, const V* f, V* out) {
                                     return Run<V>(ctx, g1, d, f, out);
                                   });
    if (g.IsPlainGemm()) {  // dx[M, C] = dy[M, F] * filter[C, F]^T
      pdk_compute::Gemm<V>(dev, false, true, g.M(), g.c, g.f, dy, w, dx);
      return OkStatus();
    }
    // filter [KH,KW,C,F] -> wt [KH,KW,F,C].
    Tensor wt_t;
    TF_RETURN_IF_ERROR(
        ctx->allocate_temp(DataTypeToEnum<V>::value, TensorShape({g.kh, g.kw, g.f, g.c}), &wt_t));
    V* wt = static_cast<V*>(wt_t.data());
    for (int64_t k = 0; k < g.kh * g.kw; ++k) {
      const V* src = w + k * g.c * g.f;
      V* dst = wt + k * g.c * g.f;
      for (int64_t c = 0; c < g.c; ++c)
        for (int64_t f = 0; f < g.f; ++f) dst[f * g.c + c] = src[c * g.f + f];
    }
    const int64_t rows = g.n * g.h * g.w, C = g.c;
    const Tiling t = MakeTiling<V>(dev, rows, KF, 2.0 * KF * C);
    Tensor scratch;
    TF_RETURN_IF_ERROR(ctx->allocate_temp(DataTypeToEnum<V>::value,
                                          TensorShape({t.shards, t.tile_rows, KF}), &scratch));
    V* col_base = static_cast<V*>(scratch.data());
    pdk_compute::RunShards(dev, t.shards, [&](int64_t s) {
      V* col = col_base + s * t.tile_rows * KF;
      for (int64_t i = t.tiles * s / t.shards, e = t.tiles * (s + 1) / t.shards; i < e; ++i) {
        const int64_t r0 = i * t.tile_rows, r1 = std::min(rows, r0 + t.tile_rows);
        Col2ImGather<V>(g, dy, r0, r1, col);
        GemmBlock<V>(false, false, r1 - r0, C, KF, col, KF, wt, C, dx + r0 * C, C);
      }
    });
    return OkStatus();
  }
};

template <class T>
class Conv2DBackpropFilterOp : public ConvBase {
 public:
  explicit Conv2DBackpropFilterOp(OpKernelConstruction* c) : ConvBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, RunFilterResult<T>(ctx, [&](const Tensor& x, const Tensor& dy) {
                     return ComputeNHWC(ctx, x, dy);
                   }));
  }

 private:
  Status ComputeNHWC(OpKernelContext* ctx, const Tensor& input, const Tensor& dy_t) const {
    const char* op = type_string().c_str();
    const pdk::StatusOr<pdk::Shape> sizes = pdk_kernels::ReadShape4(ctx, 1, "filter_sizes");
    TF_RETURN_IF_ERROR(sizes.status());
    const pdk::Shape& fs = sizes.value();
    const pdk::Shape& is = input.shape().pdk_shape();
    const pdk::Shape& ds = dy_t.shape().pdk_shape();
    const pdk::StatusOr<ConvGeom> geom =
        pdk_kernels::MakeConvGeom(op, win_, is, "input", fs, "filter_sizes", false);
    TF_RETURN_IF_ERROR(geom.status());
    const ConvGeom& g = geom.value();
    TF_RETURN_IF_ERROR(pdk_kernels::CheckOutBackprop(op, g, ds, is, fs));
    Tensor* out = nullptr;
    TF_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(fs), &out));
    if (out->NumElements() == 0) return OkStatus();
    T* dw = static_cast<T*>(out->data());
    if (g.M() == 0) {  // empty batch or empty output: the sum over no pixels
      std::fill(dw, dw + out->NumElements(), T(0));
      return OkStatus();
    }
    // 16-bit floats: computed in float32, rounded once.
    return RunWidened<T>(ctx, input, dy_t, out, [&](const auto* x, const auto* dy, auto* d) {
      return Run(ctx, g, x, dy, d);
    });
  }

  template <class C>
  static Status Run(OpKernelContext* ctx, const ConvGeom& g, const C* x, const C* dy, C* dw) {
    const int64_t M = g.M(), K = g.K(), F = g.f;
    const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    if (conv::TryDnnlConv<C>(dev, pdk_compute::DnnlConvKind::kBackwardWeights, g, x, dy, dw))
      return OkStatus();
    if (g.groups > 1)
      return conv::ForEachGroup<C>(ctx, g, Operand::kInput, x, Operand::kOutput, dy,
                                   Operand::kFilter, dw,
                                   [&](const ConvGeom& g1, const C* xg, const C* d, C* out) {
                                     return Run<C>(ctx, g1, xg, d, out);
                                   });
    if (g.IsPlainGemm()) {  // dw[C, F] = x[M, C]^T * dy[M, F]
      pdk_compute::Gemm<C>(dev, true, false, g.c, F, M, x, dy, dw);
      return OkStatus();
    }
    const Tiling t = MakeTiling<C>(dev, M, K, 2.0 * K * F);
    // Shard 0 accumulates into the output itself; the others into partials.
    Tensor scratch;
    TF_RETURN_IF_ERROR(ctx->allocate_temp(DataTypeToEnum<C>::value,
                                          TensorShape({t.shards, t.tile_rows * K + K * F}),
                                          &scratch));
    C* base = static_cast<C*>(scratch.data());
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
    return OkStatus();
  }
};

}  // namespace

#define PDK_REGISTER_CONV2D_(T)                                                                   \
  REGISTER_KERNEL_BUILDER(Name("Conv2D").Device(DEVICE_PDK).TypeConstraint<T>("T"), Conv2DOp<T>); \
  REGISTER_KERNEL_BUILDER(Name("Conv2DBackpropInput")                                             \
                              .Device(DEVICE_PDK)                                                 \
                              .TypeConstraint<T>("T")                                             \
                              .HostMemory("input_sizes"),                                         \
                          Conv2DBackpropInputOp<T>);                                              \
  REGISTER_KERNEL_BUILDER(Name("Conv2DBackpropFilter")                                            \
                              .Device(DEVICE_PDK)                                                 \
                              .TypeConstraint<T>("T")                                             \
                              .HostMemory("filter_sizes"),                                        \
                          Conv2DBackpropFilterOp<T>)
PDK_REGISTER_CONV2D_(float);
PDK_REGISTER_CONV2D_(double);
PDK_REGISTER_CONV2D_(Eigen::half);
PDK_REGISTER_CONV2D_(Eigen::bfloat16);
#undef PDK_REGISTER_CONV2D_

}  // namespace tensorflow
