// The forward convolutions shared by Conv2D / DepthwiseConv2dNative
// (src/kernels/nn/conv2d.cc, depthwise_conv2d.cc) and the fused
// _PdkFusedConv2D (fused_conv2d.cc), plus the pieces their backprops reuse
// (im2col tiling, the per-pixel channel multiply-accumulate, the per-group
// loop of grouped convolutions off oneDNN).
//
// All NHWC, geometry from window.h (MakeConvGeom):
//   Conv2DForward:    x [N,H,W,C], w [KH,KW,C/G,F] -> y [N,OH,OW,F]
//     (G = groups; output channel o reads input channels of group
//     o / (F/G) only, see ConvGeom)
//   DepthwiseForward: x [N,H,W,C], w [KH,KW,C,M]  -> y [N,OH,OW,C*M]
//     y[n,oh,ow,o] = sum over the window of x[n, oh*SH - PT + kh*DH,
//                    ow*SW - PL + kw*DW, c] * w[kh,kw,c,...] (outside: zero)
// Both write every element of y (no prior zeroing needed) and run on the
// device pool. See the file headers of conv2d.cc / depthwise_conv2d.cc
// for the algorithms (float32: oneDNN, src/compute/dnnl_conv.h; float64 and
// the fallback: im2col + GEMM; depthwise: direct channel-vector loops).
//
// For kernels written in TensorFlow's kernel style (pdk/tf/op_kernel.h): the
// helpers take the kernel's tensorflow::OpKernelContext where they allocate
// scratch (allocate_temp), else its Eigen::ThreadPoolDevice
// (ctx->eigen_device<Eigen::ThreadPoolDevice>()).
#ifndef PDK_SRC_KERNELS_NN_CONV_COMPUTE_H_
#define PDK_SRC_KERNELS_NN_CONV_COMPUTE_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "compute/dnnl_conv.h"
#include "compute/eigen.h"
#include "compute/gemm.h"
#include "compute/parallel_for.h"
#include "kernels/nn/window.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_kernels {
namespace conv {

// Patch-matrix bytes per tile: a tile and its GEMM operands stay in L2.
constexpr int64_t kTileBytes = 256 * 1024;

// Tiles of `rows_total` rows of `row_len` elements, and the shards over them.
struct Tiling {
  int64_t tile_rows, tiles, shards;
};
template <class T>
Tiling MakeTiling(const Eigen::ThreadPoolDevice& dev, int64_t rows_total, int64_t row_len,
                  double flops_per_row) {
  Tiling t;
  t.tile_rows = std::clamp<int64_t>(kTileBytes / std::max<int64_t>(1, row_len * sizeof(T)), 8,
                                    std::max<int64_t>(8, rows_total));
  t.tiles = (rows_total + t.tile_rows - 1) / t.tile_rows;
  const bool parallel =
      dev.numThreads() > 1 && flops_per_row * rows_total >= pdk_compute::kParallelFlops;
  t.shards = parallel ? std::min<int64_t>(dev.numThreads(), t.tiles) : 1;
  return t;
}

// Writes patch rows [r0, r1) (output pixels, in N,OH,OW order) of `x` into
// `col` as a [r1 - r0, KH*KW*C] matrix; outside the input: zeros.
template <class T>
void Im2Col(const ConvGeom& g, const T* x, int64_t r0, int64_t r1, T* col) {
  const int64_t K = g.K(), c = g.c;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / (g.oh * g.ow), rem = r % (g.oh * g.ow);
    const int64_t oh = rem / g.ow, ow = rem % g.ow;
    T* row = col + (r - r0) * K;
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      const int64_t ih = oh * g.sh - g.pt + kh * g.dh;
      T* dst = row + kh * g.kw * c;
      if (ih < 0 || ih >= g.h) {
        std::memset(dst, 0, sizeof(T) * g.kw * c);
        continue;
      }
      const T* src_row = x + (n * g.h + ih) * g.w * c;
      for (int64_t kw = 0; kw < g.kw; ++kw, dst += c) {
        const int64_t iw = ow * g.sw - g.pl + kw * g.dw;
        if (iw < 0 || iw >= g.w) {
          std::memset(dst, 0, sizeof(T) * c);
        } else {
          std::memcpy(dst, src_row + iw * c, sizeof(T) * c);
        }
      }
    }
  }
}

// The oneDNN shape of a (non-depthwise, possibly grouped) ConvGeom.
inline pdk_compute::DnnlConvShape DnnlShape(const ConvGeom& g) {
  return {g.n,  g.h,  g.w,  g.c,  g.kh, g.kw, g.f, g.oh,
          g.ow, g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, g.groups};
}

// A convolution operand seen as a row-major [rows, G * width] matrix whose
// group i is columns [i * width, (i + 1) * width): the input or its gradient
// [N*H*W, C], the filter or its gradient [KH*KW*C/G, F], the output or its
// gradient [N*OH*OW, F].
enum class ConvOperand { kInput, kFilter, kOutput };

// Copies `rows` rows of `width` elements from src (row stride src_stride) to
// dst (row stride dst_stride) on the device pool.
template <class T>
void CopyColumns(const Eigen::ThreadPoolDevice& dev, const T* src, int64_t src_stride, T* dst,
                 int64_t dst_stride, int64_t rows, int64_t width) {
  const double bytes = double(width * sizeof(T));
  pdk_compute::ParallelFor(
      dev, rows, Eigen::TensorOpCost(bytes, bytes, 0), [&](Eigen::Index first, Eigen::Index last) {
        for (Eigen::Index r = first; r < last; ++r)
          std::memcpy(dst + r * dst_stride, src + r * src_stride, sizeof(T) * width);
      });
}

// A grouped convolution (g.groups = G > 1) computed one group at a time, for
// the code paths written for ungrouped geometries (im2col + GEMM). `a`, `b`
// are the two inputs and `out` the result, with their roles ra, rb, rout
// (forward: input, filter -> output; backprop input: output, filter -> input;
// backprop filter: input, output -> filter). For each group i: group i's
// columns of a and b are copied into contiguous scratch, run(g1, a_i, b_i,
// out_i) computes the ungrouped convolution of geometry g1 (c = C/G,
// f = F/G), and out_i is copied into group i's columns of out, so every
// element of out is written. Errors: run's, or the scratch allocations'.
template <class C, class Fn>
tensorflow::Status ForEachGroup(tensorflow::OpKernelContext* ctx, const ConvGeom& g,
                                ConvOperand ra, const C* a, ConvOperand rb, const C* b,
                                ConvOperand rout, C* out, Fn&& run) {
  ConvGeom g1 = g;
  g1.groups = 1;
  g1.c = g.c / g.groups;
  g1.f = g1.out_depth = g.f / g.groups;
  const ConvOperand roles[3] = {ra, rb, rout};
  int64_t rows[3], width[3];
  tensorflow::Tensor buf[3];
  for (int i = 0; i < 3; ++i) {
    switch (roles[i]) {
      case ConvOperand::kInput:
        rows[i] = g.n * g.h * g.w, width[i] = g1.c;
        break;
      case ConvOperand::kFilter:
        rows[i] = g.kh * g.kw * g1.c, width[i] = g1.f;
        break;
      case ConvOperand::kOutput:
        rows[i] = g.M(), width[i] = g1.f;
        break;
    }
    TF_RETURN_IF_ERROR(ctx->allocate_temp(tensorflow::DataTypeToEnum<C>::value,
                                          tensorflow::TensorShape({rows[i], width[i]}), &buf[i]));
  }
  const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
  C* scratch[3] = {static_cast<C*>(buf[0].data()), static_cast<C*>(buf[1].data()),
                   static_cast<C*>(buf[2].data())};
  const C* in[2] = {a, b};
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    for (int i = 0; i < 2; ++i)
      CopyColumns<C>(dev, in[i] + grp * width[i], g.groups * width[i], scratch[i], width[i],
                     rows[i], width[i]);
    TF_RETURN_IF_ERROR(run(g1, static_cast<const C*>(scratch[0]),
                           static_cast<const C*>(scratch[1]), scratch[2]));
    CopyColumns<C>(dev, scratch[2], width[2], out + grp * width[2], g.groups * width[2],
                   rows[2], width[2]);
  }
  return tensorflow::OkStatus();
}

// Runs `kind` on oneDNN for float (true if it did; false for double, or when
// oneDNN cannot, and the caller computes it itself). All sizes must be > 0.
template <class C>
bool TryDnnlConv(const Eigen::ThreadPoolDevice& dev, pdk_compute::DnnlConvKind kind,
                 const ConvGeom& g, const C* a, const C* b, C* out) {
  if constexpr (std::is_same_v<C, float>) {
    return pdk_compute::DnnlConv2D(dev, kind, DnnlShape(g), a, b, out).ok();
  } else {
    return false;
  }
}

// Conv2D forward for C in {float, double}, plain or grouped: float on
// oneDNN's convolution (src/compute/dnnl_conv.h); double, or float when
// oneDNN fails: im2col tiles + single-threaded GEMM per pool shard
// (1x1/stride-1/unpadded: one GEMM), grouped ones through ForEachGroup.
// Needs scratch from `ctx`.
template <class C>
tensorflow::Status Conv2DForward(tensorflow::OpKernelContext* ctx, const ConvGeom& g,
                                 const C* x, const C* w, C* y) {
  const int64_t M = g.M(), K = g.K(), F = g.f;
  if (M * F == 0) return tensorflow::OkStatus();
  if (K == 0) {
    std::fill(y, y + M * F, C(0));
    return tensorflow::OkStatus();
  }
  const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
  if (TryDnnlConv<C>(dev, pdk_compute::DnnlConvKind::kForward, g, x, w, y))
    return tensorflow::OkStatus();
  if (g.groups > 1)
    return ForEachGroup<C>(ctx, g, ConvOperand::kInput, x, ConvOperand::kFilter, w,
                           ConvOperand::kOutput, y,
                           [&](const ConvGeom& g1, const C* xg, const C* wg, C* yg) {
                             return Conv2DForward<C>(ctx, g1, xg, wg, yg);
                           });
  if (g.IsPlainGemm()) {
    pdk_compute::Gemm<C>(dev, false, false, M, F, g.c, x, w, y);
    return tensorflow::OkStatus();
  }
  const Tiling t = MakeTiling<C>(dev, M, K, 2.0 * K * F);
  tensorflow::Tensor scratch;
  TF_RETURN_IF_ERROR(ctx->allocate_temp(tensorflow::DataTypeToEnum<C>::value,
                                        tensorflow::TensorShape({t.shards, t.tile_rows, K}),
                                        &scratch));
  C* col_base = static_cast<C*>(scratch.data());
  pdk_compute::RunShards(dev, t.shards, [&](int64_t s) {
    C* col = col_base + s * t.tile_rows * K;
    for (int64_t i = t.tiles * s / t.shards, e = t.tiles * (s + 1) / t.shards; i < e; ++i) {
      const int64_t r0 = i * t.tile_rows, r1 = std::min(M, r0 + t.tile_rows);
      Im2Col<C>(g, x, r0, r1, col);
      pdk_compute::GemmBlock<C>(false, false, r1 - r0, F, K, col, K, w, F, y + r0 * F, F);
    }
  });
  return tensorflow::OkStatus();
}

template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

// acc[c*M+m] += x[c] * w[c*M+m] for c < C, m < M.
template <class T>
inline void MacChannels(int64_t C, int64_t M, const T* x, const T* w, T* acc) {
  if (M == 1) {
    Eigen::Map<Vec<T>>(acc, C) += Eigen::Map<const Vec<T>>(x, C) * Eigen::Map<const Vec<T>>(w, C);
    return;
  }
  for (int64_t c = 0; c < C; ++c) {
    const T xv = x[c];
    for (int64_t m = 0; m < M; ++m) acc[c * M + m] += xv * w[c * M + m];
  }
}

// Runs fn(first, last) over [0, units) on the device pool, `cost` flops each.
template <class Fn>
void ParallelRows(const Eigen::ThreadPoolDevice& dev, int64_t units, double cost, Fn&& fn) {
  pdk_compute::ParallelFor(dev, units, Eigen::TensorOpCost(cost * 4, cost * 4, cost),
                           [&](Eigen::Index first, Eigen::Index last) { fn(first, last); });
}

// DepthwiseConv2dNative forward: a gather over output rows (n, oh), split
// over the device pool, vectorized over a pixel's channel vector.
template <class T>
void DepthwiseForward(const Eigen::ThreadPoolDevice& dev, const ConvGeom& g, const T* x,
                      const T* w, T* y) {
  const int64_t OC = g.out_depth;
  if (g.n * g.oh * g.ow * OC == 0) return;
  ParallelRows(dev, g.n * g.oh, double(g.ow * g.kh * g.kw * OC) * 2,
               [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      const int64_t n = r / g.oh, oh = r % g.oh;
      T* yrow = y + r * g.ow * OC;
      std::fill(yrow, yrow + g.ow * OC, T(0));
      for (int64_t kh = 0; kh < g.kh; ++kh) {
        const int64_t ih = oh * g.sh - g.pt + kh * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        const T* xrow = x + (n * g.h + ih) * g.w * g.c;
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            const int64_t iw = ow * g.sw - g.pl + kw * g.dw;
            if (iw < 0 || iw >= g.w) continue;
            MacChannels<T>(g.c, g.f, xrow + iw * g.c, w + (kh * g.kw + kw) * OC, yrow + ow * OC);
          }
        }
      }
    }
  });
}

}  // namespace conv
}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_NN_CONV_COMPUTE_H_
