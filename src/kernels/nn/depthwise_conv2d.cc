// DepthwiseConv2dNative and its backprops (tensorflow/core/ops/nn_ops.cc).
//
//   DepthwiseConv2dNative(input [N,H,W,C], filter [KH,KW,C,M]) -> output [N,OH,OW,C*M]
//     output[n,oh,ow,c*M+m] = sum_{kh,kw} input[n, oh*SH - PT + kh*DH,
//                                              ow*SW - PL + kw*DW, c] * filter[kh,kw,c,m]
//     (positions outside the input read as zero).
//   DepthwiseConv2dNativeBackpropInput(input_sizes (host int32 [4]), filter,
//                                      out_backprop [N,OH,OW,C*M]) -> [N,H,W,C]
//   DepthwiseConv2dNativeBackpropFilter(input, filter_sizes (host int32 [4]),
//                                       out_backprop) -> [KH,KW,C,M]
//   T in {float32, float64, float16, bfloat16}; the 16-bit floats are widened
//   to float32 copies, computed (and accumulated) in float32 and rounded once
//   into the output, as conv2d.cc / conv3d.cc do. Attributes: strides,
//   padding ("SAME", "VALID", "EXPLICIT" with explicit_paddings), dilations
//   (supported here, although TF's own CPU kernel rejects dilations > 1),
//   data_format ("NHWC" only).
//   OH, OW, PT, PL: TF's GetWindowedOutputSizeVerbose (window.h).
//
// Errors (InvalidArgument): operands not rank 4; input depth != filter depth
// (the message names both shapes); out_backprop not of the forward output's
// shape; strides/dilations on the batch or channel dimension.
//
// Algorithm: direct loops, vectorized over the channel vector of a pixel.
// Forward and backprop input are gathers split over output (resp. input) rows
// (n, row) on the device pool; backprop filter gives each shard its own
// [KH,KW,C,M] partial sum, added up at the end.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/widen.h"
#include "compute/gemm.h"
#include "kernels/nn/conv_compute.h"
#include "kernels/nn/window.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;
using pdk_compute::RunWidened;
using pdk_kernels::ConvGeom;
using pdk_kernels::conv::MacChannels;
using pdk_kernels::conv::ParallelRows;
using pdk_kernels::conv::Vec;

// acc[c] += sum_m dy[c*M+m] * w[c*M+m].
template <class T>
inline void DotMult(int64_t C, int64_t M, const T* dy, const T* w, T* acc) {
  if (M == 1) {
    Eigen::Map<Vec<T>>(acc, C) += Eigen::Map<const Vec<T>>(dy, C) * Eigen::Map<const Vec<T>>(w, C);
    return;
  }
  for (int64_t c = 0; c < C; ++c) {
    T s = T(0);
    for (int64_t m = 0; m < M; ++m) s += dy[c * M + m] * w[c * M + m];
    acc[c] += s;
  }
}

class DwBase : public OpKernel {
 public:
  explicit DwBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, pdk_kernels::ParseWindow(c, /*allow_explicit=*/true, &win_));
  }

 protected:
  pdk_kernels::Window2D win_;
};

// Element type of a kernel body's pointer arguments.
template <class P>
using Elem = std::remove_const_t<std::remove_pointer_t<P>>;

template <class T>
class DepthwiseConv2dNativeOp : public DwBase {
 public:
  explicit DepthwiseConv2dNativeOp(OpKernelConstruction* c) : DwBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const pdk::Shape& is = input.shape().pdk_shape();
    const pdk::Shape& fs = filter.shape().pdk_shape();
    const pdk::StatusOr<ConvGeom> geom =
        pdk_kernels::MakeConvGeom(type_string().c_str(), win_, is, "input", fs, "filter", true);
    OP_REQUIRES_OK(ctx, geom.status());
    const ConvGeom& g = geom.value();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx,
                   ctx->allocate_output(0, TensorShape({g.n, g.oh, g.ow, g.out_depth}), &out));
    if (out->NumElements() == 0) return;
    const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    OP_REQUIRES_OK(ctx, RunWidened<T>(ctx, input, filter, out,
                                      [&](const auto* x, const auto* w, auto* y) {
                                        pdk_kernels::conv::DepthwiseForward<Elem<decltype(y)>>(
                                            dev, g, x, w, y);
                                        return OkStatus();
                                      }));
  }
};

template <class T>
class DepthwiseConv2dNativeBackpropInputOp : public DwBase {
 public:
  explicit DepthwiseConv2dNativeBackpropInputOp(OpKernelConstruction* c) : DwBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const pdk::StatusOr<pdk::Shape> sizes = pdk_kernels::ReadShape4(ctx, 0, "input_sizes");
    OP_REQUIRES_OK(ctx, sizes.status());
    const pdk::Shape& is = sizes.value();
    const Tensor& filter = ctx->input(1);
    const Tensor& dy_t = ctx->input(2);
    const pdk::Shape& fs = filter.shape().pdk_shape();
    const pdk::Shape& ds = dy_t.shape().pdk_shape();
    const pdk::StatusOr<ConvGeom> geom =
        pdk_kernels::MakeConvGeom(op, win_, is, "input_sizes", fs, "filter", true);
    OP_REQUIRES_OK(ctx, geom.status());
    const ConvGeom& g = geom.value();
    OP_REQUIRES_OK(ctx, pdk_kernels::CheckOutBackprop(op, g, ds, is, fs));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(is), &out));
    if (out->NumElements() == 0) return;
    if (ds.num_elements() == 0) {
      T* dx = static_cast<T*>(out->data());
      std::fill(dx, dx + out->NumElements(), T(0));
      return;
    }
    const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    OP_REQUIRES_OK(ctx, RunWidened<T>(ctx, filter, dy_t, out,
                                      [&](const auto* w, const auto* dy, auto* dx) {
                                        BackpropInput<Elem<decltype(dx)>>(dev, g, w, dy, dx);
                                        return OkStatus();
                                      }));
  }

 private:
  template <class C>
  static void BackpropInput(const Eigen::ThreadPoolDevice& dev, const ConvGeom& g, const C* w,
                            const C* dy, C* dx) {
    const int64_t OC = g.out_depth;
    ParallelRows(dev, g.n * g.h, double(g.w * g.kh * g.kw * OC) * 2,
                 [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const int64_t n = r / g.h, ih = r % g.h;
        C* dxrow = dx + r * g.w * g.c;
        std::fill(dxrow, dxrow + g.w * g.c, C(0));
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          const int64_t num_h = ih + g.pt - kh * g.dh;
          if (num_h < 0 || num_h % g.sh != 0 || num_h / g.sh >= g.oh) continue;
          const C* dyrow = dy + (n * g.oh + num_h / g.sh) * g.ow * OC;
          for (int64_t iw = 0; iw < g.w; ++iw) {
            for (int64_t kw = 0; kw < g.kw; ++kw) {
              const int64_t num_w = iw + g.pl - kw * g.dw;
              if (num_w < 0 || num_w % g.sw != 0 || num_w / g.sw >= g.ow) continue;
              DotMult<C>(g.c, g.f, dyrow + (num_w / g.sw) * OC, w + (kh * g.kw + kw) * OC,
                         dxrow + iw * g.c);
            }
          }
        }
      }
    });
  }
};

template <class T>
class DepthwiseConv2dNativeBackpropFilterOp : public DwBase {
 public:
  explicit DepthwiseConv2dNativeBackpropFilterOp(OpKernelConstruction* c) : DwBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& input = ctx->input(0);
    const pdk::StatusOr<pdk::Shape> sizes = pdk_kernels::ReadShape4(ctx, 1, "filter_sizes");
    OP_REQUIRES_OK(ctx, sizes.status());
    const pdk::Shape& fs = sizes.value();
    const Tensor& dy_t = ctx->input(2);
    const pdk::Shape& is = input.shape().pdk_shape();
    const pdk::Shape& ds = dy_t.shape().pdk_shape();
    const pdk::StatusOr<ConvGeom> geom =
        pdk_kernels::MakeConvGeom(op, win_, is, "input", fs, "filter_sizes", true);
    OP_REQUIRES_OK(ctx, geom.status());
    const ConvGeom& g = geom.value();
    OP_REQUIRES_OK(ctx, pdk_kernels::CheckOutBackprop(op, g, ds, is, fs));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(fs), &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, RunWidened<T>(ctx, input, dy_t, out,
                                      [&](const auto* x, const auto* dy, auto* dw) {
                                        return BackpropFilter<Elem<decltype(dw)>>(ctx, g, x, dy,
                                                                                  dw);
                                      }));
  }

 private:
  template <class C>
  static Status BackpropFilter(OpKernelContext* ctx, const ConvGeom& g, const C* x, const C* dy,
                               C* dw) {
    const int64_t FN = g.kh * g.kw * g.out_depth;
    std::fill(dw, dw + FN, C(0));
    const int64_t rows = g.n * g.oh;
    if (rows == 0 || g.ow == 0) return OkStatus();
    const int64_t OC = g.out_depth;
    const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    const double flops = 2.0 * double(rows) * g.ow * g.kh * g.kw * OC;
    const int64_t shards = (dev.numThreads() > 1 && flops >= pdk_compute::kParallelFlops)
                               ? std::min<int64_t>(dev.numThreads(), rows)
                               : 1;
    Tensor scratch;
    TF_RETURN_IF_ERROR(
        ctx->allocate_temp(DataTypeToEnum<C>::value, TensorShape({shards, FN}), &scratch));
    C* partial_base = static_cast<C*>(scratch.data());
    pdk_compute::RunShards(dev, shards, [&](int64_t s) {
      C* acc = s == 0 ? dw : partial_base + s * FN;
      if (s != 0) std::fill(acc, acc + FN, C(0));
      for (int64_t r = rows * s / shards, e = rows * (s + 1) / shards; r < e; ++r) {
        const int64_t n = r / g.oh, oh = r % g.oh;
        const C* dyrow = dy + r * g.ow * OC;
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          const int64_t ih = oh * g.sh - g.pt + kh * g.dh;
          if (ih < 0 || ih >= g.h) continue;
          const C* xrow = x + (n * g.h + ih) * g.w * g.c;
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            C* a = acc + (kh * g.kw + kw) * OC;
            for (int64_t ow = 0; ow < g.ow; ++ow) {
              const int64_t iw = ow * g.sw - g.pl + kw * g.dw;
              if (iw < 0 || iw >= g.w) continue;
              MacChannels<C>(g.c, g.f, xrow + iw * g.c, dyrow + ow * OC, a);
            }
          }
        }
      }
    });
    Eigen::Map<Vec<C>> total(dw, FN);
    for (int64_t s = 1; s < shards; ++s)
      total += Eigen::Map<const Vec<C>>(partial_base + s * FN, FN);
    return OkStatus();
  }
};

}  // namespace

#define PDK_REGISTER_DEPTHWISE_(T)                                          \
  REGISTER_KERNEL_BUILDER(                                                  \
      Name("DepthwiseConv2dNative").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
      DepthwiseConv2dNativeOp<T>);                                          \
  REGISTER_KERNEL_BUILDER(Name("DepthwiseConv2dNativeBackpropInput")        \
                              .Device(DEVICE_PDK)                           \
                              .TypeConstraint<T>("T")                       \
                              .HostMemory("input_sizes"),                   \
                          DepthwiseConv2dNativeBackpropInputOp<T>);         \
  REGISTER_KERNEL_BUILDER(Name("DepthwiseConv2dNativeBackpropFilter")       \
                              .Device(DEVICE_PDK)                           \
                              .TypeConstraint<T>("T")                       \
                              .HostMemory("filter_sizes"),                  \
                          DepthwiseConv2dNativeBackpropFilterOp<T>)
PDK_REGISTER_DEPTHWISE_(float);
PDK_REGISTER_DEPTHWISE_(double);
PDK_REGISTER_DEPTHWISE_(Eigen::half);
PDK_REGISTER_DEPTHWISE_(Eigen::bfloat16);
#undef PDK_REGISTER_DEPTHWISE_

}  // namespace tensorflow
