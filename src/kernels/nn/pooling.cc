// MaxPool, MaxPoolV2, MaxPoolGrad, MaxPoolGradV2, AvgPool, AvgPoolGrad
// (tensorflow/core/ops/nn_ops.cc), NHWC.
//
//   MaxPool(input [N,H,W,C]; ksize, strides, padding, explicit_paddings)
//     -> [N,OH,OW,C]: the maximum over each window's in-bounds positions
//     (padding never wins; a window with none yields the type's lowest value).
//   MaxPoolV2(input, ksize (host int32 [4]), strides (host int32 [4])): the same,
//     window from inputs instead of attributes (padding SAME / VALID).
//   MaxPoolGrad(orig_input [N,H,W,C], orig_output, grad [N,OH,OW,C]) -> [N,H,W,C]
//     MaxPoolGradV2(orig_input, orig_output, grad, ksize, strides): the same.
//   _PdkMaxPoolGradReluGrad(orig_input, orig_output, grad) -> [N,H,W,C]:
//     ReluGrad(MaxPoolGrad(orig_input, orig_output, grad), orig_input), the
//     MaxPoolGrad attributes (made by PDK's graph optimizer, see MaxPoolGradOp).
//     Each grad[n,oh,ow,c] goes to the window position holding the maximum; on
//     ties, the first in row-major (h, then w) order — as TensorFlow's CPU
//     kernel (SpatialMaxPoolWithArgMaxHelper, tensorflow/core/kernels/
//     maxpooling_op.cc) which replaces its candidate only on a strictly larger
//     value. orig_output is not read (the maximum is recomputed).
//   AvgPool(value [N,H,W,C]; ksize, strides, padding SAME / VALID) -> [N,OH,OW,C]:
//     the mean over each window's in-bounds positions (padding is not counted).
//   AvgPoolGrad(orig_input_shape (host int32 [4]), grad [N,OH,OW,C]) -> [N,H,W,C]:
//     each grad value spread equally over its window's in-bounds positions.
//   T in {float32, float64, float16, bfloat16} (16-bit floats in Eigen's own
//   arithmetic, as TF's CPU kernels: max is exact; the AvgPool sums round per add).
//   ksize/strides are NHWC 4-vectors whose batch entries must be 1
//   (Unimplemented, as TensorFlow's CPU kernels); channel entries 1, except
//   MaxPool / MaxPoolV2's depth-only window below (AvgPool and the gradients:
//   Unimplemented with TensorFlow's wording); data_format "NHWC" only
//   (others: Unimplemented naming it). OH, OW and the leading padding: TF's
//   GetWindowedOutputSizeVerbose (window.h).
//   Depth-only MaxPool (TensorFlow's DepthwiseMaxPool, tensorflow/core/kernels/
//   maxpooling_op.cc and PoolParameters in pooling_ops_common.cc): ksize
//   [1,1,1,K], strides [1,*,*,K] -> [N,H,W,C/K], y[..., j] the maximum of
//   x[..., j*K .. j*K+K); padding and the spatial strides are ignored, as there.
//   Unimplemented (TF's wording): K with a spatial window, K not dividing C, a
//   depth stride other than K.
//
// Errors (InvalidArgument): rank != 4, a grad / orig_output whose shape is not
// the pooled shape of orig_input, bad ksize/strides/paddings, an explicit
// padding as large as the window ("Top padding 2 needs to be smaller than the
// window size 2", TensorFlow's wording first, as its CPU kernel).
//
// Parallelism: forward ops and AvgPoolGrad (written as a gather over the
// windows covering each input pixel) split output / input rows (n, row) over
// the device pool, vectorized over channels. MaxPoolGrad accumulates into
// overlapping windows, so it splits (image, channel block) units, which never
// write the same element; within a unit it is vectorized over channels too.
// Windows that never overlap store into dx instead of adding (no zeroing
// when they tile the input). Rows and units split with pdk_compute::
// ParallelFor.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/nn/window.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using ::pdk_kernels::ListString;
using ::pdk_kernels::Padding;
using ::pdk_kernels::ParseDataFormatNHWC;
using ::pdk_kernels::Window2D;
using ::pdk_kernels::WindowedOutputSize;

using Index = Eigen::Index;
template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

struct PoolGeom {
  int64_t n, h, w, c;
  int64_t kh, kw, sh, sw;
  int64_t oh, ow, pt, pl;
  // Rows [h0, h1) of the window of output row oh, clipped to the input.
  void RowRange(int64_t o, int64_t* lo, int64_t* hi) const {
    const int64_t s = o * sh - pt;
    *lo = std::max<int64_t>(s, 0);
    *hi = std::min<int64_t>(s + kh, h);
  }
  void ColRange(int64_t o, int64_t* lo, int64_t* hi) const {
    const int64_t s = o * sw - pl;
    *lo = std::max<int64_t>(s, 0);
    *hi = std::min<int64_t>(s + kw, w);
  }
};

// The window (ksize, strides) and padding of one node.
struct PoolWindow {
  Window2D win;
  int64_t ksize[2] = {1, 1};
  int64_t depth_window = 1, depth_stride = 1;  // > 1: depth-only MaxPool
};

// The pooling ops, for the window checks below.
enum class PoolKind { kMax, kMaxGrad, kAvg, kAvgGrad };

// "1,-1,2,1": a window as TensorFlow's messages print it.
inline std::string CommaList(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// TensorFlow's CPU kernels read ksize and strides into std::vector<int32>:
// a value outside int32 fails there, before any other check.
Status CheckInt32(const char* name, const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max())
      return errors::InvalidArgument("Attr ", name, " has value ", x,
                                     " out of range for an int32");
  return OkStatus();
}

// Checks a pooling window (ksize, strides: NHWC 4-vectors) in the order and
// words of TensorFlow's float32 CPU kernels for `kind`, and stores it in
// `pw`; PDK's detail follows in parentheses:
//   ksize / strides not of 4 entries: InvalidArgument;
//   MaxPool(V2), AvgPool, AvgPoolGrad: a ksize entry <= 0: InvalidArgument,
//     before the batch check;
//   a batch window or stride other than 1: Unimplemented;
//   MaxPoolGrad(V2): a depth window or stride other than 1: Unimplemented;
//   forward ops, a depth window K != 1 with a spatial window: Unimplemented;
//     a depth-only window is stored for Compute (MaxPool pools it, AvgPool
//     reports TensorFlow's Unimplemented errors), as AvgPoolGrad's;
//   MaxPoolGrad(V2), a spatial ksize entry <= 0: InvalidArgument (TensorFlow
//     computes a window of that size);
//   a spatial stride <= 0: InvalidArgument "Stride must be > 0, ...".
// The forward ops and AvgPoolGrad ignore the depth stride of a window of
// depth 1, as TensorFlow's.
// TensorFlow has two CPU kernels for each of these ops, which check in
// different orders: oneDNN's (mkl_maxpooling_op.cc, mkl_avgpooling_op.cc:
// float32 and bfloat16, and float16 for MaxPool, on CPUs where oneDNN is on,
// as here) and Eigen's (maxpooling_op.cc, avgpooling_op.cc: the other dtypes,
// and every dtype where oneDNN is off). For MaxPool and MaxPoolGrad they give
// the same error classes; for AvgPool and AvgPoolGrad, Eigen's checks the
// batch window (Unimplemented) and the depth window (Unimplemented) before
// ksize > 0, and its AvgPoolGrad never checks ksize > 0 at all. PDK answers as
// the float32 kernel, for every dtype (tests/python/fuzz_exceptions.py lists
// the float64 / float16 cases where the Eigen kernel's class differs).
Status CheckPoolWindow(PoolKind kind, bool v2, const char* op, const std::vector<int64_t>& k,
                       const std::vector<int64_t>& s, PoolWindow* pw) {
  const bool grad = kind == PoolKind::kMaxGrad || kind == PoolKind::kAvgGrad;
  if (k.size() != 4)
    return errors::InvalidArgument("Sliding window ksize field must specify 4 dimensions (", op,
                                   ": ksize ", ListString(k), ")");
  if (s.size() != 4)
    return errors::InvalidArgument("Sliding window ", grad ? "strides" : "stride",
                                   " field must specify 4 dimensions (", op, ": strides ",
                                   ListString(s), ")");
  const int64_t* nonpositive = nullptr;
  for (const int64_t& x : k)
    if (x <= 0 && !nonpositive) nonpositive = &x;
  if (kind != PoolKind::kMaxGrad && nonpositive) {
    if (v2)
      return errors::InvalidArgument("Sliding window ksize must be positive. (", op, ": ksize ",
                                     ListString(k), ")");
    return errors::InvalidArgument(
        "Sliding window ksize must be positive. The specified or inferred ksize is: ", CommaList(k),
        " (", op, ")");
  }
  if (k[0] != 1 || s[0] != 1)
    return errors::Unimplemented("Pooling is not yet supported on the batch dimension. (", op,
                                 ": ksize ", ListString(k), ", strides ", ListString(s), ")");
  if (kind == PoolKind::kMaxGrad && (k[3] != 1 || s[3] != 1))
    return errors::Unimplemented("MaxPoolingGrad is not yet supported on the depth dimension. (",
                                 op, ": ksize ", ListString(k), ", strides ", ListString(s), ")");
  if (kind != PoolKind::kMaxGrad && k[3] != 1) {
    if (k[1] != 1 || k[2] != 1)
      return errors::Unimplemented(
          "MaxPooling supports exactly one of pooling across depth or pooling across "
          "width/height. (",
          op, ": ksize ", ListString(k), ")");
    pw->depth_window = k[3];
    pw->depth_stride = s[3];
    return OkStatus();
  }
  for (int i = 1; i <= 2; ++i)  // MaxPoolGrad: TensorFlow computes with such a window
    if (k[i] <= 0)
      return errors::InvalidArgument(
          "Sliding window ksize must be positive. The specified or inferred ksize is: ",
          CommaList(k), " (", op, ")");
  for (int i = 1; i <= 2; ++i)
    if (s[i] <= 0)
      return errors::InvalidArgument("Stride must be > 0, but got ", s[i], " (", op, ": strides ",
                                     ListString(s), ")");
  pw->ksize[0] = k[1];
  pw->ksize[1] = k[2];
  pw->win.stride[0] = s[1];
  pw->win.stride[1] = s[2];
  return OkStatus();
}

// The op of `kind` whose window comes from attributes.
inline const char* PoolOpName(PoolKind kind) {
  switch (kind) {
    case PoolKind::kMax: return "MaxPool";
    case PoolKind::kMaxGrad: return "MaxPoolGrad";
    case PoolKind::kAvg: return "AvgPool";
    case PoolKind::kAvgGrad: return "AvgPoolGrad";
  }
  return "";
}

// Reads ksize and strides from attributes and checks them (CheckPoolWindow).
Status WindowFromAttrs(OpKernelConstruction* c, PoolKind kind, PoolWindow* pw) {
  const char* op = PoolOpName(kind);
  std::vector<int64_t> k, s;
  TF_RETURN_IF_ERROR(c->GetAttr("ksize", &k));
  TF_RETURN_IF_ERROR(CheckInt32("ksize", k));
  TF_RETURN_IF_ERROR(c->GetAttr("strides", &s));
  TF_RETURN_IF_ERROR(CheckInt32("strides", s));
  return CheckPoolWindow(kind, /*v2=*/false, op, k, s, pw);
}

// Parses padding and explicit_paddings (and data_format) once the window is
// known: the window's own strides are set already and pass ParseWindow's
// checks (its channel stride, which the ops ignore, is not looked at).
Status PaddingFromAttrs(OpKernelConstruction* c, bool allow_explicit, PoolWindow* pw) {
  Window2D w;
  TF_RETURN_IF_ERROR(::pdk_kernels::ParseWindow(c, allow_explicit, &w, nullptr,
                                                /*any_channel_stride=*/true));
  pw->win.padding = w.padding;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) pw->win.explicit_pad[i][j] = w.explicit_pad[i][j];
  return OkStatus();
}

// TensorFlow's PoolParameters: the input must be 4-D.
Status CheckTensorIn(const char* op, const TensorShape& in) {
  if (in.dims() != 4)
    return errors::InvalidArgument("tensor_in must be 4-dimensional (", op, ": input of shape ",
                                   in, ")");
  return OkStatus();
}

Status MakePoolGeom(const char* op, const PoolWindow& pw, const TensorShape& in, PoolGeom* geom) {
  TF_RETURN_IF_ERROR(CheckTensorIn(op, in));
  PoolGeom g{};
  g.n = in.dim_size(0);
  g.h = in.dim_size(1);
  g.w = in.dim_size(2);
  g.c = in.dim_size(3);
  g.kh = pw.ksize[0];
  g.kw = pw.ksize[1];
  g.sh = pw.win.stride[0];
  g.sw = pw.win.stride[1];
  if (pw.win.padding == Padding::kExplicit) {  // as TF's PoolParameters (pooling_ops_common.cc)
    const struct {
      const char* side;
      int64_t pad, window;
    } sides[] = {{"Top", pw.win.explicit_pad[0][0], g.kh},
                 {"Bottom", pw.win.explicit_pad[0][1], g.kh},
                 {"Left", pw.win.explicit_pad[1][0], g.kw},
                 {"Right", pw.win.explicit_pad[1][1], g.kw}};
    for (const auto& s : sides)
      if (s.pad >= s.window)
        return errors::InvalidArgument(s.side, " padding ", s.pad,
                                       " needs to be smaller than the window size ", s.window,
                                       " (", op, ": a window of padding only has no maximum)");
  }
  TF_RETURN_IF_ERROR(WindowedOutputSize(op, "rows", g.h, g.kh, pw.win, 0, &g.oh, &g.pt));
  TF_RETURN_IF_ERROR(WindowedOutputSize(op, "cols", g.w, g.kw, pw.win, 1, &g.ow, &g.pl));
  *geom = g;
  return OkStatus();
}

Status CheckPooledShape(const char* op, const char* name, const TensorShape& s,
                        const PoolGeom& g, const TensorShape& in) {
  const TensorShape want{g.n, g.oh, g.ow, g.c};
  if (s != want)
    return errors::InvalidArgument("Expected ", name, " shape to be ", want, ", but got ", s,
                                   " (", op, ": the pooled shape of orig_input ", in, ")");
  return OkStatus();
}

// Reads ksize and strides from host inputs (MaxPoolV2, MaxPoolGradV2) and
// checks them (CheckPoolWindow).
Status WindowFromInputs(OpKernelContext* ctx, int ksize_index, PoolKind kind, PoolWindow* pw) {
  const char* op = ctx->op_kernel().type_string().c_str();
  const char* names[2] = {"ksize", "strides"};
  std::vector<int64_t> vs[2];
  for (int i = 0; i < 2; ++i)
    TF_RETURN_IF_ERROR(
        ::pdk_kernels::ReadIntVector(op, names[i], ctx->input(ksize_index + i), &vs[i]));
  return CheckPoolWindow(kind, /*v2=*/true, op, vs[0], vs[1], pw);
}

// Attributes: ksize/strides from attributes (v1) or inputs (v2, decoded per
// launch). `kind`: the op family, whose checks apply; the max-pooling ops
// allow explicit padding, the average-pooling ones do not.
template <bool kV2>
class PoolBase : public OpKernel {
 protected:
  PoolBase(OpKernelConstruction* c, PoolKind kind) : OpKernel(c), kind_(kind) {
    if constexpr (kV2) {
      OP_REQUIRES_OK(c, ParseDataFormatNHWC(c));  // "NHWC" only
      std::string padding;
      OP_REQUIRES_OK(c, c->GetAttr("padding", &padding));
      if (padding == "SAME") {
        pw_.win.padding = Padding::kSame;
      } else if (padding == "VALID") {
        pw_.win.padding = Padding::kValid;
      } else {
        OP_REQUIRES(c, false,
                    errors::InvalidArgument("padding \"", padding, "\" is not supported"));
      }
    } else {
      OP_REQUIRES_OK(c, WindowFromAttrs(c, kind, &pw_));
      if (pw_.depth_window != 1) {
        OP_REQUIRES_OK(c, ParseDataFormatNHWC(c));  // "NHWC" only
      } else {
        const bool allow_explicit = kind == PoolKind::kMax || kind == PoolKind::kMaxGrad;
        OP_REQUIRES_OK(c, PaddingFromAttrs(c, allow_explicit, &pw_));
      }
    }
  }

  // The window of this launch: the node's, with ksize and strides read from
  // inputs ksize_index, ksize_index + 1 for the v2 ops.
  Status Window(OpKernelContext* ctx, int ksize_index, PoolWindow* pw) const {
    *pw = pw_;
    if constexpr (kV2) TF_RETURN_IF_ERROR(WindowFromInputs(ctx, ksize_index, kind_, pw));
    return OkStatus();
  }
  PoolWindow pw_;
  const PoolKind kind_;
};

// fn(first, last) over pieces of [0, units) on the pool (ParallelFor: the
// caller takes part and never sleeps on a barrier); `cost`: operations per unit.
template <class T>
void ParallelRows(const Eigen::ThreadPoolDevice& dev, int64_t units, double cost, const T& fn) {
  pdk_compute::ParallelFor(dev, units, Eigen::TensorOpCost(cost * 4, cost * 4, cost),
                           [&](Index first, Index last) { fn(first, last); });
}

// The channel loops of MaxPool and MaxPoolGrad run on Eigen packets for
// float32/float64 (full packets of channels, unaligned loads) and scalars for
// the remaining channels and the 16-bit floats: per-pixel Eigen::Map
// expressions or runtime-length loops over 32 channels cost more in setup than
// in work (MaxPool 1.8x, MaxPoolGrad 2-2.6x TensorFlow's time on the small
// CNN's [32,32,32,32] and [32,16,16,64] before commit fb248ea; docs/benchmarks.md,
// "Non-GEMM kernels of the Transformer and CNN steps").
template <class T>
constexpr int64_t PacketSize() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return Eigen::internal::unpacket_traits<typename Eigen::internal::packet_traits<T>::type>::size;
  } else {
    return 1;
  }
}

// y[n, oh, ow, :] = finish(fold of combine over x[n, window(oh, ow), :] from
// init), on raw channel vectors: init(acc, C), combine(acc, x_pixel, C),
// finish(acc, C, oh, ow), each a plain loop over C that the compiler
// vectorizes (per-pixel Eigen::Map expressions cost more than the work at
// small C: MaxPool was 1.8x TensorFlow's time on [32,32,32,32]); parallel over
// output rows.
template <class T, class Init, class Combine, class Finish>
void PoolForward(const Eigen::ThreadPoolDevice& dev, const PoolGeom& g, const T* x, T* y,
                 Init init, Combine combine, Finish finish) {
  const int64_t C = g.c;
  ParallelRows(dev, g.n * g.oh, double(g.ow * g.kh * g.kw * C), [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      const int64_t n = r / g.oh, oh = r % g.oh;
      int64_t h0, h1;
      g.RowRange(oh, &h0, &h1);
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        int64_t w0, w1;
        g.ColRange(ow, &w0, &w1);
        T* acc = y + (r * g.ow + ow) * C;
        init(acc, C);
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw)
            combine(acc, x + ((n * g.h + ih) * g.w + iw) * C, C);
        finish(acc, C, oh, ow);
      }
    }
  });
}

// Depth-only MaxPool: y[p, j] = max of x[p, j*K .. j*K+K) over every pixel p.
template <class T>
Status DepthMaxPool(OpKernelContext* ctx, const Tensor& input, const PoolWindow& pw) {
  const char* op = ctx->op_kernel().type_string().c_str();
  const TensorShape& is = input.shape();
  TF_RETURN_IF_ERROR(CheckTensorIn(op, is));
  const int64_t K = pw.depth_window, C = is.dim_size(3);
  if (C % K != 0)
    return errors::Unimplemented(
        "Depthwise max pooling requires the depth window to evenly divide the input depth. (",
        op, ": depth ", C, ", depth window ", K, ")");
  if (pw.depth_stride != K)
    return errors::Unimplemented(
        "Depthwise max pooling requires the depth window to equal the depth stride. (", op,
        ": depth window ", K, ", depth stride ", pw.depth_stride, ")");
  Tensor* out = nullptr;
  TF_RETURN_IF_ERROR(ctx->allocate_output(
      0, TensorShape({is.dim_size(0), is.dim_size(1), is.dim_size(2), C / K}), &out));
  const int64_t groups = out->NumElements();
  if (groups == 0) return OkStatus();
  const T* x = input.flat<T>().data();
  T* y = out->flat<T>().data();
  const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
  ParallelRows(dev, groups, double(K), [&](int64_t first, int64_t last) {
    for (int64_t j = first; j < last; ++j) {
      const T* g = x + j * K;
      T acc = std::numeric_limits<T>::lowest();
      for (int64_t i = 0; i < K; ++i) acc = acc < g[i] ? g[i] : acc;
      y[j] = acc;
    }
  });
  return OkStatus();
}

template <class T, bool kV2>
class MaxPoolOp : public PoolBase<kV2> {
 public:
  explicit MaxPoolOp(OpKernelConstruction* c) : PoolBase<kV2>(c, PoolKind::kMax) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    PoolWindow pw;
    OP_REQUIRES_OK(ctx, this->Window(ctx, 1, &pw));
    if (pw.depth_window > 1) {
      OP_REQUIRES_OK(ctx, DepthMaxPool<T>(ctx, input, pw));
      return;
    }
    const TensorShape& is = input.shape();
    PoolGeom g;
    OP_REQUIRES_OK(ctx, MakePoolGeom(this->type_string().c_str(), pw, is, &g));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({g.n, g.oh, g.ow, g.c}), &out));
    if (out->NumElements() == 0) return;
    const T* x = input.flat<T>().data();
    T* y = out->flat<T>().data();
    // acc < v ? v : acc is Eigen's max, pmax (std::max order): a NaN never
    // replaces the running maximum.
    namespace ei = Eigen::internal;
    using P = typename ei::packet_traits<T>::type;
    constexpr int64_t kP = PacketSize<T>();
    const int64_t C = g.c;
    const T lowest = std::numeric_limits<T>::lowest();
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    ParallelRows(dev, g.n * g.oh, double(g.ow * g.kh * g.kw * C), [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const int64_t n = r / g.oh, oh = r % g.oh;
        const T* img = x + n * g.h * g.w * C;
        int64_t h0, h1;
        g.RowRange(oh, &h0, &h1);
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          int64_t w0, w1;
          g.ColRange(ow, &w0, &w1);
          T* yp = y + (r * g.ow + ow) * C;
          int64_t c = 0;
          if constexpr (kP > 1) {
            for (; c + kP <= C; c += kP) {
              P acc = ei::pset1<P>(lowest);
              for (int64_t ih = h0; ih < h1; ++ih)
                for (int64_t iw = w0; iw < w1; ++iw)
                  acc = ei::pmax(acc, ei::ploadu<P>(img + (ih * g.w + iw) * C + c));
              ei::pstoreu(yp + c, acc);
            }
          }
          for (; c < C; ++c) {
            T acc = lowest;
            for (int64_t ih = h0; ih < h1; ++ih)
              for (int64_t iw = w0; iw < w1; ++iw) {
                const T v = img[(ih * g.w + iw) * C + c];
                acc = acc < v ? v : acc;
              }
            yp[c] = acc;
          }
        }
      }
    });
  }
};

// kReluGrad: _PdkMaxPoolGradReluGrad, MaxPoolGrad's result r then ReluGrad's
// r * (orig_input > 0 ? 1 : 0) in the same pass (PDK's graph optimizer makes it
// from ReluGrad(MaxPoolGrad(x, y, dy), x), src/graph/rewrites/
// maxpool_grad_relu_grad.cc): the same bits as the two ops (relu_functors.h's
// ReluGradFn), without ReluGrad's pass over dx and x.
template <class T, bool kV2, bool kReluGrad = false>
class MaxPoolGradOp : public PoolBase<kV2> {
 public:
  explicit MaxPoolGradOp(OpKernelConstruction* c) : PoolBase<kV2>(c, PoolKind::kMaxGrad) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& orig_out = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    const char* op = this->type_string().c_str();
    PoolWindow pw;
    OP_REQUIRES_OK(ctx, this->Window(ctx, 3, &pw));
    const TensorShape& is = input.shape();
    // TensorFlow's MaxPoolingGradOp: the three ranks first.
    const struct {
      const char* tf_name;
      const TensorShape& shape;
    } ranked[] = {{"tensor_in", is}, {"tensor_out", orig_out.shape()},
                  {"out_backprop", grad.shape()}};
    for (const auto& r : ranked)
      OP_REQUIRES(ctx, r.shape.dims() == 4,
                  errors::InvalidArgument(r.tf_name, " must be 4-dimensional (", op, ": shape ",
                                          r.shape, ")"));
    PoolGeom g;
    OP_REQUIRES_OK(ctx, MakePoolGeom(op, pw, is, &g));
    OP_REQUIRES_OK(ctx, CheckPooledShape(op, "orig_output", orig_out.shape(), g, is));
    OP_REQUIRES_OK(ctx, CheckPooledShape(op, "grad", grad.shape(), g, is));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, is, &out));
    if (out->NumElements() == 0) return;
    const T* x = input.flat<T>().data();
    const T* dy = grad.flat<T>().data();
    T* dx = out->flat<T>().data();
    const int64_t C = g.c;
    constexpr int64_t kChannelBlock = 64;
    const int64_t blocks = (C + kChannelBlock - 1) / kChannelBlock;
    const double cost = double(g.oh * g.ow * g.kh * g.kw * std::min(C, kChannelBlock)) * 2;
    // Per window and packet of channels: the window-local index k of the
    // maximum (compare and blend over the window), then every window position
    // adds grad where it holds that k and +0 elsewhere (an AND with the
    // compare mask) — no scatter, and the same sums as adding grad at the arg
    // max alone: dx starts at +0, so it is never -0 and +0 changes nothing.
    namespace ei = Eigen::internal;
    using P = typename ei::packet_traits<T>::type;
    constexpr int64_t kP = PacketSize<T>();
    // Windows that never overlap (strides at least the window) store each
    // position's value (grad or +0) instead of adding into dx, and when they
    // also tile the input exactly, dx needs no zeroing first.
    const bool disjoint = g.sh >= g.kh && g.sw >= g.kw;
    const bool tiles = g.sh == g.kh && g.sw == g.kw && g.pt == 0 && g.pl == 0 &&
                       g.oh * g.sh == g.h && g.ow * g.sw == g.w;
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    ParallelRows(dev, g.n * blocks, cost, [&](int64_t first, int64_t last) {
      for (int64_t u = first; u < last; ++u) {
        const int64_t n = u / blocks, c0 = (u % blocks) * kChannelBlock;
        const int64_t cn = std::min(kChannelBlock, C - c0);
        const T* ximg = x + n * g.h * g.w * C + c0;
        T* dximg = dx + n * g.h * g.w * C + c0;
        if (tiles) {
          // every position is written below
        } else if (blocks == 1) {
          std::fill(dximg, dximg + g.h * g.w * C, T(0));
        } else {
          for (int64_t p = 0; p < g.h * g.w; ++p)
            std::fill(dximg + p * C, dximg + p * C + cn, T(0));
        }
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          int64_t h0, h1;
          g.RowRange(oh, &h0, &h1);
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            int64_t w0, w1;
            g.ColRange(ow, &w0, &w1);
            if (h0 >= h1 || w0 >= w1) continue;  // a window of padding only
            // The first position in row-major order takes the lead; a later
            // one only if strictly larger.
            const int64_t p0 = h0 * g.w + w0;
            const T* g_row = dy + ((n * g.oh + oh) * g.ow + ow) * C + c0;
            int64_t c = 0;
            if constexpr (kP > 1) {
              for (; c + kP <= cn; c += kP) {
                P best = ei::ploadu<P>(ximg + p0 * C + c);
                P arg = ei::pzero(best);
                T k = 0;
                for (int64_t ih = h0; ih < h1; ++ih)
                  for (int64_t iw = w0; iw < w1; ++iw, k += 1) {
                    const P v = ei::ploadu<P>(ximg + (ih * g.w + iw) * C + c);
                    const P larger = ei::pcmp_lt(best, v);
                    best = ei::pselect(larger, v, best);
                    arg = ei::pselect(larger, ei::pset1<P>(k), arg);
                  }
                const P gv = ei::ploadu<P>(g_row + c);
                k = 0;
                for (int64_t ih = h0; ih < h1; ++ih)
                  for (int64_t iw = w0; iw < w1; ++iw, k += 1) {
                    const int64_t at = (ih * g.w + iw) * C + c;
                    T* dp = dximg + at;
                    const P hit = ei::pcmp_eq(arg, ei::pset1<P>(k));
                    // Stored as +0 + value, as added into a zeroed dx: a -0
                    // grad gives +0 either way.
                    P value =
                        ei::padd(disjoint ? ei::pzero(gv) : ei::ploadu<P>(dp), ei::pand(hit, gv));
                    if constexpr (kReluGrad)
                      if (disjoint) value = ReluGradMask(value, ei::ploadu<P>(ximg + at));
                    ei::pstoreu(dp, value);
                  }
              }
            }
            for (; c < cn; ++c) {
              T best = ximg[p0 * C + c];
              int64_t arg = p0;
              for (int64_t ih = h0; ih < h1; ++ih)
                for (int64_t iw = w0; iw < w1; ++iw) {
                  const int64_t p = ih * g.w + iw;
                  if (best < ximg[p * C + c]) {
                    best = ximg[p * C + c];
                    arg = p;
                  }
                }
              if (tiles)  // dx was not zeroed: this window's positions are its own
                for (int64_t ih = h0; ih < h1; ++ih)
                  for (int64_t iw = w0; iw < w1; ++iw) dximg[(ih * g.w + iw) * C + c] = T(0);
              dximg[arg * C + c] += g_row[c];
              if constexpr (kReluGrad)
                if (disjoint)
                  for (int64_t ih = h0; ih < h1; ++ih)
                    for (int64_t iw = w0; iw < w1; ++iw) {
                      const int64_t at = (ih * g.w + iw) * C + c;
                      dximg[at] = ReluGradMask(dximg[at], ximg[at]);
                    }
            }
          }
        }
        // Overlapping windows: ReluGrad once every window has added its part.
        if constexpr (kReluGrad)
          if (!disjoint)
            for (int64_t p = 0; p < g.h * g.w; ++p)
              for (int64_t c = 0; c < cn; ++c)
                dximg[p * C + c] = ReluGradMask(dximg[p * C + c], ximg[p * C + c]);
      }
    });
  }

 private:
  // ReluGrad's r * (x > 0 ? 1 : 0) (relu_functors.h, ReluGradFn): a product,
  // not a select, so that a NaN or infinite r at x <= 0 gives NaN and a
  // negative r gives -0, as there. 16-bit types: r * 1 and r * 0 are exact,
  // so the product in T is the float32 one rounded.
  static T ReluGradMask(T r, T x) { return r * (x > T(0) ? T(1) : T(0)); }
  template <class P>
  static P ReluGradMask(const P& r, const P& x) {
    namespace ei = Eigen::internal;
    const P one = ei::pset1<P>(T(1));
    return ei::pmul(r, ei::pand(ei::pcmp_lt(ei::pzero(x), x), one));
  }
};

// Number of in-bounds positions of the windows of output (oh, ow).
inline int64_t WindowCount(const PoolGeom& g, int64_t oh, int64_t ow) {
  int64_t h0, h1, w0, w1;
  g.RowRange(oh, &h0, &h1);
  g.ColRange(ow, &w0, &w1);
  return std::max<int64_t>(0, h1 - h0) * std::max<int64_t>(0, w1 - w0);
}

template <class T>
class AvgPoolOp : public PoolBase<false> {
 public:
  explicit AvgPoolOp(OpKernelConstruction* c) : PoolBase<false>(c, PoolKind::kAvg) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const TensorShape& is = input.shape();
    const char* op = type_string().c_str();
    if (pw_.depth_window != 1) {
      // TensorFlow's PoolParameters accepts a depth-only window that divides
      // the depth and equals the depth stride; AvgPoolingOp then refuses it.
      OP_REQUIRES_OK(ctx, CheckTensorIn(op, is));
      const int64_t K = pw_.depth_window;
      OP_REQUIRES(ctx, is.dim_size(3) % K == 0,
                  errors::Unimplemented("Depthwise max pooling requires the depth window to "
                                        "evenly divide the input depth (",
                                        op, ": depth ", is.dim_size(3), ", depth window ", K,
                                        ")"));
      OP_REQUIRES(ctx, pw_.depth_stride == K,
                  errors::Unimplemented("Depthwise max pooling requires the depth window to "
                                        "equal the depth stride (",
                                        op, ": depth window ", K, ", depth stride ",
                                        pw_.depth_stride, ")"));
      OP_REQUIRES(ctx, false,
                  errors::Unimplemented("Non-spatial pooling is not yet supported. "
                                        "Volunteers? :) (",
                                        op, ": depth window ", K, ")"));
    }
    PoolGeom g;
    OP_REQUIRES_OK(ctx, MakePoolGeom(op, pw_, is, &g));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({g.n, g.oh, g.ow, g.c}), &out));
    if (out->NumElements() == 0) return;
    const T* x = input.flat<T>().data();
    T* y = out->flat<T>().data();
    PoolForward(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), g, x, y,
        [](T* acc, int64_t C) { std::fill(acc, acc + C, T(0)); },
        [](T* acc, const T* v, int64_t C) {
          for (int64_t c = 0; c < C; ++c) acc[c] += v[c];
        },
        [&](T* acc, int64_t C, int64_t oh, int64_t ow) {
          const int64_t count = WindowCount(g, oh, ow);
          if (count == 0) return;
          const T d = static_cast<T>(count);
          for (int64_t c = 0; c < C; ++c) acc[c] /= d;
        });
  }
};

template <class T>
class AvgPoolGradOp : public PoolBase<false> {
 public:
  explicit AvgPoolGradOp(OpKernelConstruction* c) : PoolBase<false>(c, PoolKind::kAvgGrad) {}

  // TensorFlow's AvgPoolingGradOp order: orig_input_shape and grad's ranks,
  // the shape's dimensions, an empty output (zeros, nothing else checked),
  // the depth window, the output size; then PDK checks grad against the
  // pooled shape (TensorFlow 2.21's CPU kernel does not: see
  // tests/python/fuzz_exceptions.py).
  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    const char* op = type_string().c_str();
    OP_REQUIRES(ctx, shape_t.dims() == 1 && shape_t.NumElements() == 4,
                errors::InvalidArgument("out_backprop must be 1-dimensional and 4 elements (",
                                        op, ": orig_input_shape of shape ", shape_t.shape(),
                                        ")"));
    OP_REQUIRES(ctx, grad.dims() == 4,
                errors::InvalidArgument("out_backprop must be 4-dimensional (", op,
                                        ": grad of shape ", grad.shape(), ")"));
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, ::pdk_kernels::ReadIntVector(op, "orig_input_shape", shape_t, &dims));
    for (int64_t d : dims)
      OP_REQUIRES(ctx, d >= 0,
                  errors::InvalidArgument("Dimension ", d, " must be >= 0 (", op,
                                          ": orig_input_shape ", ListString(dims), ")"));
    const TensorShape is(dims);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, is, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES(ctx, pw_.depth_window == 1,
                errors::Unimplemented("Non-spatial pooling is not yet supported. Volunteers? "
                                      ":) (",
                                      op, ": depth window ", pw_.depth_window, ")"));
    PoolGeom g;
    OP_REQUIRES_OK(ctx, MakePoolGeom(op, pw_, is, &g));
    OP_REQUIRES_OK(ctx, CheckPooledShape(op, "grad", grad.shape(), g, is));
    T* dx = out->flat<T>().data();
    if (grad.NumElements() == 0) {
      std::fill(dx, dx + out->NumElements(), T(0));
      return;
    }
    const T* dy = grad.flat<T>().data();
    const int64_t C = g.c;
    ParallelRows(ctx->eigen_device<Eigen::ThreadPoolDevice>(), g.n * g.h,
                 double(g.w * C * (g.kh / g.sh + 1) * (g.kw / g.sw + 1)),
                 [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const int64_t n = r / g.h, ih = r % g.h;
        int64_t oh0, oh1;
        ::pdk_kernels::CoveringOutputs(ih, g.pt, g.kh, g.sh, g.oh, &oh0, &oh1);
        for (int64_t iw = 0; iw < g.w; ++iw) {
          int64_t ow0, ow1;
          ::pdk_kernels::CoveringOutputs(iw, g.pl, g.kw, g.sw, g.ow, &ow0, &ow1);
          Eigen::Map<Vec<T>> acc(dx + (r * g.w + iw) * C, C);
          acc.setZero();
          for (int64_t oh = oh0; oh < oh1; ++oh)
            for (int64_t ow = ow0; ow < ow1; ++ow)
              acc += Eigen::Map<const Vec<T>>(dy + ((n * g.oh + oh) * g.ow + ow) * C, C) /
                     static_cast<T>(WindowCount(g, oh, ow));
        }
      }
    });
  }
};

#define PDK_REGISTER_POOLING_(T)                                                           \
  REGISTER_KERNEL_BUILDER(Name("MaxPool").Device(DEVICE_PDK).TypeConstraint<T>("T"),       \
                          MaxPoolOp<T, false>);                                            \
  REGISTER_KERNEL_BUILDER(Name("MaxPoolV2")                                                \
                              .Device(DEVICE_PDK)                                          \
                              .TypeConstraint<T>("T")                                      \
                              .HostMemory("ksize")                                         \
                              .HostMemory("strides"),                                      \
                          MaxPoolOp<T, true>);                                             \
  REGISTER_KERNEL_BUILDER(Name("MaxPoolGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"),   \
                          MaxPoolGradOp<T, false>);                                        \
  REGISTER_KERNEL_BUILDER(Name("MaxPoolGradV2")                                            \
                              .Device(DEVICE_PDK)                                          \
                              .TypeConstraint<T>("T")                                      \
                              .HostMemory("ksize")                                         \
                              .HostMemory("strides"),                                      \
                          MaxPoolGradOp<T, true>);                                         \
  REGISTER_KERNEL_BUILDER(Name("AvgPool").Device(DEVICE_PDK).TypeConstraint<T>("T"),       \
                          AvgPoolOp<T>);                                                   \
  REGISTER_KERNEL_BUILDER(Name("AvgPoolGrad")                                              \
                              .Device(DEVICE_PDK)                                          \
                              .TypeConstraint<T>("T")                                      \
                              .HostMemory("orig_input_shape"),                             \
                          AvgPoolGradOp<T>);
PDK_REGISTER_POOLING_(float)
PDK_REGISTER_POOLING_(double)
PDK_REGISTER_POOLING_(Eigen::half)
PDK_REGISTER_POOLING_(Eigen::bfloat16)
#undef PDK_REGISTER_POOLING_

// MaxPoolGrad's inputs, attributes and shape (orig_input's).
REGISTER_OP("_PdkMaxPoolGradReluGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      ShapeHandle in;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &in));
      c->set_output(0, in);
      return OkStatus();
    });

#define PDK_REGISTER_MAXPOOL_GRAD_RELU_GRAD_(T)                                  \
  REGISTER_KERNEL_BUILDER(                                                       \
      Name("_PdkMaxPoolGradReluGrad").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
      MaxPoolGradOp<T, false, true>);
PDK_REGISTER_MAXPOOL_GRAD_RELU_GRAD_(float)
PDK_REGISTER_MAXPOOL_GRAD_RELU_GRAD_(double)
PDK_REGISTER_MAXPOOL_GRAD_RELU_GRAD_(Eigen::half)
PDK_REGISTER_MAXPOOL_GRAD_RELU_GRAD_(Eigen::bfloat16)
#undef PDK_REGISTER_MAXPOOL_GRAD_RELU_GRAD_

}  // namespace
}  // namespace tensorflow
