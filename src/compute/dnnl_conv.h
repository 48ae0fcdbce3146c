// float32 NHWC 2-D convolution (forward, backprop input, backprop filter),
// plain or grouped, on oneDNN's convolution primitive (C API only, oneDNN 2.x
// or 3.x; Debian's libdnnl 2.6 is the shipped one; see dnnl_common.h for why
// the C API always reaches the oneDNN PDK is linked with).
//
// Layouts (TensorFlow's, no copies): activations [N,H,W,C] (oneDNN tag nhwc),
// filter [KH,KW,C/G,F] (tag hwio, or hwigo when G > 1), output /
// out_backprop [N,OH,OW,F] (nhwc). Grouped (G = groups > 1, C and F multiples
// of G): output channel f belongs to group f / (F/G) and reads input channels
// [g*C/G, (g+1)*C/G) (TensorFlow's Conv2D with input depth G x filter
// in_depth); oneDNN's grouped weights are 5-D [G, F/G, C/G, KH, KW], and TF's
// [KH,KW,C/G,F] buffer is exactly oneDNN's tag hwigo (F = G x F/G, the group
// index outer), so the filter is described, not copied.
// Geometry as in src/kernels/nn/window.h (ConvGeom): strides SH, SW, TF
// dilations DH, DW (>= 1; oneDNN's dilation is DH - 1), leading paddings PT, PL;
// the trailing paddings are the ones that make OH, OW come out:
//   PB = (OH - 1)*SH + (KH - 1)*DH + 1 - H - PT   (clamped at 0; likewise PR).
//
// Threading: see DnnlConv2D below and docs/architecture.md ("float32
// convolution: oneDNN").
//
// Errors: any oneDNN failure (primitive not supported, out of memory) returns
// a non-OK Status naming the oneDNN call; the callers then compute the
// convolution on their own im2col + GEMM path, so it is never user-visible.
#ifndef PDK_SRC_COMPUTE_DNNL_CONV_H_
#define PDK_SRC_COMPUTE_DNNL_CONV_H_

#include <cstdint>

#include "pdk/status.h"

namespace Eigen {
struct ThreadPoolDevice;
}

namespace pdk_compute {

// The subset of ConvGeom oneDNN needs (all >= 1 except the paddings >= 0).
struct DnnlConvShape {
  int64_t n, h, w, c;      // input [N,H,W,C]
  int64_t kh, kw, f;       // filter [KH,KW,C/G,F]
  int64_t oh, ow;          // output [N,OH,OW,F]
  int64_t sh, sw, dh, dw;  // strides, TF dilations
  int64_t pt, pl;          // leading paddings
  int64_t groups;          // G >= 1; C and F multiples of G
};

enum class DnnlConvKind {
  kForward,         // y  = conv(x, w):         a = x [N,H,W,C],   b = w [KH,KW,C/G,F], out = y
  kBackwardData,    // dx = conv^T(dy, w):      a = dy [N,OH,OW,F], b = w,           out = dx
  kBackwardWeights  // dw = sum_n patches^T dy: a = x,             b = dy,           out = dw
};

// Runs one convolution of `kind` on `dev`'s threads (every element of `out`
// written). A convolution of fewer than kSerialMultiplyAdds multiply-adds
// (dnnl_conv.cc) runs as one primitive on the calling thread. Otherwise the work is split into up
// to kShardsPerThread * dev.numThreads() shards run by RunShards (parallel_for.h: claimed
// dynamically by the calling thread and the pool), each a oneDNN primitive with an OpenMP team of
// one: slices of the batch; in the forward pass with fewer images than threads (inference on one
// image), bands of output rows of each image (each band reads its input rows, with its own top and
// bottom padding). Backward passes with fewer images than threads, and a forward band that would
// read only padding, run one primitive on the calling thread with an OpenMP team of
// dev.numThreads() (libgomp threads; the pool idles), as do backward-weights
// passes with fewer than kBwMinRowsPerShard output rows per shard
// (dnnl_conv.cc). kBackwardWeights adds the shards' partial filter gradients
// in shard order. The filter is
// converted to the primitive's blocked layout once per call (forward,
// backward data), or the blocked partial gradients are summed and converted
// once (backward weights).
pdk::Status DnnlConv2D(const Eigen::ThreadPoolDevice& dev, DnnlConvKind kind,
                       const DnnlConvShape& s, const float* a, const float* b, float* out);

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_DNNL_CONV_H_
