// Window geometry shared by the convolution and pooling kernels
// (src/kernels/nn/{conv2d,depthwise_conv2d,pooling}.cc): the strides /
// dilations / padding / data_format attributes of tensorflow/core/ops/nn_ops.cc,
// decoded once in a kernel's Init, and TensorFlow's output-size rule.
//
// Only NHWC is implemented; any other data_format is an Unimplemented error
// naming it. Strides, dilations and window sizes are 4-vectors in NHWC order
// whose batch and channel entries must be 1; explicit_paddings (padding
// "EXPLICIT" only) is 8 values, (before, after) per NHWC dimension, with zeros
// for N and C.
#ifndef PDK_SRC_KERNELS_NN_WINDOW_H_
#define PDK_SRC_KERNELS_NN_WINDOW_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "pdk/kernel.h"

namespace pdk_kernels {

enum class Padding { kValid, kSame, kExplicit };

// Per spatial dimension (0 = H, 1 = W).
struct Window2D {
  int64_t stride[2] = {1, 1};
  int64_t dilation[2] = {1, 1};
  Padding padding = Padding::kValid;
  int64_t explicit_pad[2][2] = {{0, 0}, {0, 0}};  // [dim][before, after]
};

inline std::string ListString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Reads a 4-vector attribute in NHWC order; entries 0 and 3 must be 1.
// Writes entries 1 and 2 to out[0], out[1].
inline pdk::Status ParseSpatial4(const pdk::Attrs& a, const char* name, int64_t out[2],
                                 bool optional) {
  std::vector<int64_t> v;
  if (optional && !a.Has(name)) return pdk::Status::OK();
  PDK_RETURN_IF_ERROR(a.Get(name, &v));
  if (v.size() != 4)
    return pdk::InvalidArgument(name, " must have 4 elements (NHWC), got ", ListString(v));
  if (v[0] != 1 || v[3] != 1)
    return pdk::InvalidArgument(name, " ", ListString(v),
                                ": only the spatial (H, W) dimensions may differ from 1; "
                                "batch and channel entries must be 1");
  if (v[1] < 1 || v[2] < 1)
    return pdk::InvalidArgument(name, " ", ListString(v), " must be positive");
  out[0] = v[1];
  out[1] = v[2];
  return pdk::Status::OK();
}

inline pdk::Status ParseDataFormatNHWC(const pdk::Attrs& a) {
  std::string format = "NHWC";
  PDK_RETURN_IF_ERROR(a.GetOptional("data_format", &format));
  if (format != "NHWC")
    return pdk::Unimplemented("data_format \"", format,
                              "\" is not supported on PDK; only \"NHWC\" is");
  return pdk::Status::OK();
}

// Decodes strides, padding, explicit_paddings (if `allow_explicit`), dilations
// (if the op has them) and data_format.
inline pdk::Status ParseWindow(const pdk::Attrs& a, bool allow_explicit, Window2D* w) {
  PDK_RETURN_IF_ERROR(ParseDataFormatNHWC(a));
  PDK_RETURN_IF_ERROR(ParseSpatial4(a, "strides", w->stride, /*optional=*/false));
  PDK_RETURN_IF_ERROR(ParseSpatial4(a, "dilations", w->dilation, /*optional=*/true));
  std::string padding;
  PDK_RETURN_IF_ERROR(a.Get("padding", &padding));
  std::vector<int64_t> pads;
  PDK_RETURN_IF_ERROR(a.GetOptional("explicit_paddings", &pads));
  if (padding == "VALID") {
    w->padding = Padding::kValid;
  } else if (padding == "SAME") {
    w->padding = Padding::kSame;
  } else if (padding == "EXPLICIT" && allow_explicit) {
    w->padding = Padding::kExplicit;
  } else {
    return pdk::InvalidArgument("padding \"", padding, "\" is not supported");
  }
  if (w->padding != Padding::kExplicit) {
    if (!pads.empty())
      return pdk::InvalidArgument("explicit_paddings ", ListString(pads),
                                  " must be empty unless padding is \"EXPLICIT\"");
    return pdk::Status::OK();
  }
  if (pads.size() != 8)
    return pdk::InvalidArgument("explicit_paddings must have 8 elements (NHWC), got ",
                                ListString(pads));
  for (int64_t p : pads)
    if (p < 0)
      return pdk::InvalidArgument("explicit_paddings ", ListString(pads),
                                  " must be non-negative");
  if (pads[0] || pads[1] || pads[6] || pads[7])
    return pdk::InvalidArgument("explicit_paddings ", ListString(pads),
                                ": batch and channel dimensions must not be padded");
  w->explicit_pad[0][0] = pads[2];
  w->explicit_pad[0][1] = pads[3];
  w->explicit_pad[1][0] = pads[4];
  w->explicit_pad[1][1] = pads[5];
  return pdk::Status::OK();
}

// Output size and leading padding of one spatial dimension, as TensorFlow's
// GetWindowedOutputSizeVerbose (tensorflow/core/framework/kernel_shape_util.cc):
//   effective = (filter - 1) * dilation + 1
//   VALID:    out = (in - effective + stride) / stride,            pad_before = 0
//   EXPLICIT: out = (in + before + after - effective + stride) / stride
//   SAME:     out = (in + stride - 1) / stride,
//             pad_before = max(0, (out - 1) * stride + effective - in) / 2
// A negative size is InvalidArgument.
inline pdk::Status WindowedOutputSize(const char* op, const char* dim_name, int64_t in,
                                      int64_t filter, const Window2D& w, int dim, int64_t* out,
                                      int64_t* pad_before) {
  const int64_t stride = w.stride[dim], effective = (filter - 1) * w.dilation[dim] + 1;
  switch (w.padding) {
    case Padding::kValid:
      *out = (in - effective + stride) / stride;
      *pad_before = 0;
      break;
    case Padding::kExplicit:
      *out = (in + w.explicit_pad[dim][0] + w.explicit_pad[dim][1] - effective + stride) /
             stride;
      *pad_before = w.explicit_pad[dim][0];
      break;
    case Padding::kSame: {
      *out = (in + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>(0, (*out - 1) * stride + effective - in);
      *pad_before = needed / 2;
      break;
    }
  }
  if (*out < 0)
    return pdk::InvalidArgument(op, ": computed output ", dim_name,
                                " size would be negative [input size ", in,
                                ", effective window size ", effective, ", stride ", stride, "]");
  return pdk::Status::OK();
}

// Geometry of a 2-D NHWC convolution, shared by Conv2D and
// DepthwiseConv2dNative and their backprops. `f` is filter[3]: the output depth
// of Conv2D, the channel multiplier of a depthwise convolution; `out_depth` is
// the output's channel count (f, or c * f when depthwise).
struct ConvGeom {
  int64_t n, h, w, c;      // input
  int64_t kh, kw, f;       // filter [kh, kw, c, f]
  int64_t oh, ow;          // output
  int64_t sh, sw, dh, dw;  // strides, dilations
  int64_t pt, pl;          // leading padding
  int64_t out_depth;
  bool depthwise;
  int64_t M() const { return n * oh * ow; }
  int64_t K() const { return kh * kw * c; }
  bool IsPlainGemm() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && oh == h && ow == w;
  }
};

// Checks input [n,h,w,c] and filter [kh,kw,c,f] and computes the output size
// (WindowedOutputSize above). Errors name both operands and their shapes.
inline pdk::StatusOr<ConvGeom> MakeConvGeom(const char* op, const Window2D& win,
                                            const pdk::Shape& in, const char* in_name,
                                            const pdk::Shape& filter, const char* filter_name,
                                            bool depthwise) {
  PDK_RETURN_IF_ERROR(pdk::CheckRank(op, in_name, in, 4));
  PDK_RETURN_IF_ERROR(pdk::CheckRank(op, filter_name, filter, 4));
  if (in[3] != filter[2])
    return pdk::InvalidArgument(op,
                                depthwise ? ": input and filter must have the same depth: "
                                          : ": input depth must equal filter in_depth (grouped "
                                            "convolution is not supported on PDK): ",
                                in_name, ".shape ", in, " has depth ", in[3], " but ",
                                filter_name, ".shape ", filter, " has in_depth ", filter[2]);
  ConvGeom g{};
  g.n = in[0];
  g.h = in[1];
  g.w = in[2];
  g.c = in[3];
  g.kh = filter[0];
  g.kw = filter[1];
  g.f = filter[3];
  g.depthwise = depthwise;
  g.out_depth = depthwise ? g.c * g.f : g.f;
  g.sh = win.stride[0];
  g.sw = win.stride[1];
  g.dh = win.dilation[0];
  g.dw = win.dilation[1];
  PDK_RETURN_IF_ERROR(WindowedOutputSize(op, "rows", g.h, g.kh, win, 0, &g.oh, &g.pt));
  PDK_RETURN_IF_ERROR(WindowedOutputSize(op, "cols", g.w, g.kw, win, 1, &g.ow, &g.pl));
  return g;
}

// out_backprop must be the shape the forward op would produce.
inline pdk::Status CheckOutBackprop(const char* op, const ConvGeom& g, const pdk::Shape& dy,
                                    const pdk::Shape& in, const pdk::Shape& filter) {
  PDK_RETURN_IF_ERROR(pdk::CheckRank(op, "out_backprop", dy, 4));
  const pdk::Shape want{g.n, g.oh, g.ow, g.out_depth};
  if (dy != want)
    return pdk::InvalidArgument(op, ": out_backprop.shape ", dy, " != ", want,
                                ", the output shape of input ", in,
                                g.depthwise ? " depthwise-convolved with filter "
                                            : " convolved with filter ",
                                filter);
  return pdk::Status::OK();
}

// Reads a shape argument (input_sizes / filter_sizes / orig_input_shape) of 4
// ints, host memory.
inline pdk::StatusOr<pdk::Shape> ReadShape4(pdk::Context& ctx, int index, const char* name) {
  PDK_ASSIGN_OR_RETURN(pdk::Tensor t, ctx.input(index));
  if (t.rank() != 1 || t.num_elements() != 4)
    return pdk::InvalidArgument(ctx.op(), ": ", name, " must be a 4-element vector, got shape ",
                                t.shape());
  PDK_ASSIGN_OR_RETURN(std::vector<int64_t> v, pdk::ReadIntVector(ctx.op(), name, t));
  for (int64_t d : v)
    if (d < 0)
      return pdk::InvalidArgument(ctx.op(), ": ", name, " ", ListString(v),
                                  " has a negative dimension");
  return pdk::Shape(std::move(v));
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_NN_WINDOW_H_
