// Window geometry shared by the convolution and pooling kernels
// (src/kernels/nn/{conv2d,conv3d,depthwise_conv2d,pooling}.cc): the strides /
// dilations / padding / data_format attributes of tensorflow/core/ops/nn_ops.cc,
// decoded once at kernel construction, and TensorFlow's output-size rule, for D
// spatial dimensions (D = 2: NHWC / NCHW, D = 3: NDHWC / NCDHW).
//
// Strides, dilations and window sizes are (D + 2)-vectors in data_format order
// whose batch and channel entries must be 1; explicit_paddings (padding
// "EXPLICIT" only) is 2 * (D + 2) values, (before, after) per dimension in
// data_format order, with zeros for N and C. A kernel that does not pass a
// DataFormat out-parameter accepts the channels-last format only; any other
// is an Unimplemented error naming it.
#ifndef PDK_SRC_KERNELS_NN_WINDOW_H_
#define PDK_SRC_KERNELS_NN_WINDOW_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tensor_util.h"
#include "pdk/kernel.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_kernels {

enum class Padding { kValid, kSame, kExplicit };
// Channels last (NHWC, NDHWC) or channels first (NCHW, NCDHW).
enum class DataFormat { kChannelsLast, kChannelsFirst };

// Per spatial dimension (D = 2: 0 = H, 1 = W; D = 3: 0 = D, 1 = H, 2 = W).
template <int D>
struct Window {
  int64_t stride[D];
  int64_t dilation[D];
  Padding padding = Padding::kValid;
  int64_t explicit_pad[D][2];  // [dim][before, after]
  Window() {
    for (int i = 0; i < D; ++i) {
      stride[i] = dilation[i] = 1;
      explicit_pad[i][0] = explicit_pad[i][1] = 0;
    }
  }
};
using Window2D = Window<2>;
using Window3D = Window<3>;

inline std::string ListString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// "NHWC" / "NCHW" (D = 2), "NDHWC" / "NCDHW" (D = 3).
inline std::string FormatName(int spatial, DataFormat f) {
  const std::string dims = spatial == 3 ? "DHW" : "HW";
  return f == DataFormat::kChannelsLast ? "N" + dims + "C" : "NC" + dims;
}

// Index of the first spatial dimension in a (D + 2)-vector of `f` order.
inline int FirstSpatial(DataFormat f) { return f == DataFormat::kChannelsLast ? 1 : 2; }

// Reads a (D + 2)-vector attribute in `f` order; the batch and channel entries
// must be 1 (the channel entry may be anything if `any_channel`). Writes the D
// spatial entries to out[0..D).
template <int D>
pdk::Status ParseSpatial(const pdk::Attrs& a, const char* name, DataFormat f, int64_t out[D],
                         bool optional, bool any_channel = false) {
  std::vector<int64_t> v;
  if (optional && !a.Has(name)) return pdk::Status::OK();
  PDK_RETURN_IF_ERROR(a.Get(name, &v));
  const std::string fmt = FormatName(D, f);
  if (v.size() != D + 2)
    return pdk::InvalidArgument(name, " must have ", D + 2, " elements (", fmt, "), got ",
                                ListString(v));
  const int c = f == DataFormat::kChannelsLast ? D + 1 : 1, s0 = FirstSpatial(f);
  if (v[0] != 1 || (v[c] != 1 && !any_channel))
    return pdk::InvalidArgument(name, " ", ListString(v), " (", fmt,
                                "): only the spatial dimensions may differ from 1; "
                                "batch and channel entries must be 1");
  for (int i = 0; i < D; ++i) {
    if (v[s0 + i] < 1) return pdk::InvalidArgument(name, " ", ListString(v), " must be positive");
    out[i] = v[s0 + i];
  }
  return pdk::Status::OK();
}

// The 2-D NHWC case (pooling's ksize).
inline pdk::Status ParseSpatial4(const pdk::Attrs& a, const char* name, int64_t out[2],
                                 bool optional) {
  return ParseSpatial<2>(a, name, DataFormat::kChannelsLast, out, optional);
}

// Reads data_format (default channels last). `format` null: only channels
// last is accepted, else Unimplemented naming the format.
inline pdk::Status ParseDataFormat(const pdk::Attrs& a, int spatial, DataFormat* format) {
  const std::string last = FormatName(spatial, DataFormat::kChannelsLast);
  const std::string first = FormatName(spatial, DataFormat::kChannelsFirst);
  std::string name = last;
  PDK_RETURN_IF_ERROR(a.GetOptional("data_format", &name));
  if (name == last || (format && name == first)) {
    if (format)
      *format = name == last ? DataFormat::kChannelsLast : DataFormat::kChannelsFirst;
    return pdk::Status::OK();
  }
  if (format)
    return pdk::InvalidArgument("data_format \"", name, "\" is not one of \"", last, "\", \"",
                                first, "\"");
  return pdk::Unimplemented("data_format \"", name, "\" is not supported on PDK; only \"", last,
                            "\" is");
}

inline pdk::Status ParseDataFormatNHWC(const pdk::Attrs& a) {
  return ParseDataFormat(a, 2, nullptr);
}

// Decodes data_format, strides, padding, explicit_paddings (if
// `allow_explicit`) and dilations (if the op has them). `format`: see
// ParseDataFormat. `any_channel_stride`: the forward pooling ops, which ignore
// the channel stride of a window of depth 1 (as TensorFlow's PoolParameters).
template <int D>
pdk::Status ParseWindow(const pdk::Attrs& a, bool allow_explicit, Window<D>* w,
                        DataFormat* format = nullptr, bool any_channel_stride = false) {
  DataFormat f = DataFormat::kChannelsLast;
  PDK_RETURN_IF_ERROR(ParseDataFormat(a, D, format));
  if (format) f = *format;
  PDK_RETURN_IF_ERROR(ParseSpatial<D>(a, "strides", f, w->stride, /*optional=*/false,
                                      any_channel_stride));
  PDK_RETURN_IF_ERROR(ParseSpatial<D>(a, "dilations", f, w->dilation, /*optional=*/true));
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
  const std::string fmt = FormatName(D, f);
  if (pads.size() != 2 * (D + 2))
    return pdk::InvalidArgument("explicit_paddings must have ", 2 * (D + 2), " elements (", fmt,
                                "), got ", ListString(pads));
  for (int64_t p : pads)
    if (p < 0)
      return pdk::InvalidArgument("explicit_paddings ", ListString(pads),
                                  " must be non-negative");
  const int c = f == DataFormat::kChannelsLast ? D + 1 : 1, s0 = FirstSpatial(f);
  if (pads[0] || pads[1] || pads[2 * c] || pads[2 * c + 1])
    return pdk::InvalidArgument("explicit_paddings ", ListString(pads), " (", fmt,
                                "): batch and channel dimensions must not be padded");
  for (int i = 0; i < D; ++i) {
    w->explicit_pad[i][0] = pads[2 * (s0 + i)];
    w->explicit_pad[i][1] = pads[2 * (s0 + i) + 1];
  }
  return pdk::Status::OK();
}

// Output size and leading padding of one spatial dimension, as TensorFlow's
// GetWindowedOutputSizeVerbose (tensorflow/core/framework/kernel_shape_util.cc):
//   effective = (filter - 1) * dilation + 1
//   VALID:    out = (in - effective + stride) / stride,            pad_before = 0
//   EXPLICIT: out = (in + before + after - effective + stride) / stride
//   SAME:     out = (in + stride - 1) / stride,
//             pad_before = max(0, (out - 1) * stride + effective - in) / 2
// A negative size is InvalidArgument, in TensorFlow's words.
template <int D>
pdk::Status WindowedOutputSize(const char* op, const char* dim_name, int64_t in, int64_t filter,
                               const Window<D>& w, int dim, int64_t* out, int64_t* pad_before) {
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
  if (*out < 0)  // TensorFlow's wording first, then PDK's detail
    return pdk::InvalidArgument("Computed output size would be negative: ", *out,
                                " [input_size: ", in, ", effective_filter_size: ", effective,
                                ", stride: ", stride, "] (", op, ": output ", dim_name, ")");
  return pdk::Status::OK();
}

// Geometry of a 2-D NHWC convolution, shared by Conv2D and
// DepthwiseConv2dNative and their backprops. `f` is filter[3]: the output depth
// of Conv2D, the channel multiplier of a depthwise convolution; `out_depth` is
// the output's channel count (f, or c * f when depthwise).
//
// Grouped Conv2D (`groups` G > 1): input depth c = G * filter[2], output
// depth f a multiple of G; output channel o belongs to group o / (f/G) and
// reads input channels [grp * c/G, (grp+1) * c/G). The ungrouped code paths
// (im2col, K(), IsPlainGemm) take G = 1 geometries only; conv_compute.h's
// ForEachGroup turns a grouped one into G of them.
struct ConvGeom {
  int64_t n, h, w, c;      // input
  int64_t kh, kw, f;       // filter [kh, kw, c / groups, f]
  int64_t oh, ow;          // output
  int64_t sh, sw, dh, dw;  // strides, dilations
  int64_t pt, pl;          // leading padding
  int64_t out_depth;
  bool depthwise;
  int64_t groups = 1;
  int64_t M() const { return n * oh * ow; }
  int64_t K() const { return kh * kw * c; }  // the patch length when groups == 1
  bool IsPlainGemm() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && oh == h && ow == w;
  }
};

// Checks input [n,h,w,c] and filter [kh,kw,c/G,f] and computes the output
// size (WindowedOutputSize above). Depthwise: filter[2] must equal c.
// Otherwise G = c / filter[2] (grouped when > 1), with TensorFlow's CPU
// kernel's checks and wording (tensorflow/core/kernels/conv_ops_impl.h,
// LaunchConv2DOp<CPUDevice>; the shape function in common_shape_fns.cc says
// "Depth of input (c) is not a multiple of input depth of filter (...)"):
//   c not a multiple of filter[2]: "input depth must be evenly divisible by
//     filter depth: c vs filter[2]"
//   f not a multiple of G (or f < G): "output depth must be evenly divisible
//     by number of groups: f vs G"
// Errors name both operands and their shapes.
// A convolution whose filter has in_depth 0: InvalidArgument, in the wording of
// TensorFlow's CPU kernel for that op (conv_ops.cc, conv_grad_input_ops.cc,
// conv_ops_3d.cc), where the CPU rejects it; depthwise convolutions accept it.
// CheckFilterElements: a forward convolution (Conv2D, Conv3D, the fused
// Conv2D) with a non-empty output whose filter has another zero dimension, as
// TensorFlow's forward kernels (they return an empty output before the
// check; the backprops and depthwise convolutions compute zeros).
inline pdk::Status CheckFilterDepth(const char* op, const pdk::Shape& filter, int64_t in_depth,
                                    const char* filter_name) {
  if (in_depth != 0) return pdk::Status::OK();
  const std::string name = op;
  const char* tf_wording = name.find("Backprop") != std::string::npos
                               ? "filter depth must be strictly greated than zero"
                           : name == "Conv3D" ? "filter_depth must be non-zero"
                                              : "filter depth must be stricly positive, got 0";
  return pdk::InvalidArgument(tf_wording, " (", op, ": ", filter_name, ".shape ", filter, ")");
}

inline pdk::Status CheckFilterElements(const char* op, const pdk::Shape& filter,
                                       const char* filter_name, int64_t output_elements) {
  if (filter.num_elements() > 0 || output_elements == 0 ||
      std::string(op).find("Backprop") != std::string::npos)
    return pdk::Status::OK();
  return pdk::InvalidArgument(
      "filter must not have zero elements (i.e. all dimensions must be non-zero) (", op, ": ",
      filter_name, ".shape ", filter, ")");
}

inline pdk::StatusOr<ConvGeom> MakeConvGeom(const char* op, const Window2D& win,
                                            const pdk::Shape& in, const char* in_name,
                                            const pdk::Shape& filter, const char* filter_name,
                                            bool depthwise) {
  PDK_RETURN_IF_ERROR(pdk::CheckRank(op, in_name, in, 4));
  PDK_RETURN_IF_ERROR(pdk::CheckRank(op, filter_name, filter, 4));
  if (!depthwise) PDK_RETURN_IF_ERROR(CheckFilterDepth(op, filter, filter[2], filter_name));
  int64_t groups = 1;
  if (in[3] != filter[2]) {
    if (depthwise)
      return pdk::InvalidArgument(op, ": input and filter must have the same depth: ", in_name,
                                  ".shape ", in, " has depth ", in[3], " but ", filter_name,
                                  ".shape ", filter, " has in_depth ", filter[2]);
    if (filter[2] == 0 || in[3] % filter[2] != 0)
      return pdk::InvalidArgument(op, ": input depth must be evenly divisible by filter depth: ",
                                  in[3], " vs ", filter[2], " (", in_name, ".shape ", in,
                                  ", ", filter_name, ".shape ", filter,
                                  "; grouped convolution needs depth = groups x in_depth)");
    // Input depth 0 with a filter of in_depth > 0 divides evenly: TensorFlow's
    // CPU returns zeros. PDK computes it as one group of depth 0 (empty
    // patches, nothing read from the filter).
    groups = std::max<int64_t>(1, in[3] / filter[2]);
    if (filter[3] % groups != 0 || filter[3] < groups)
      return pdk::InvalidArgument(op, ": output depth must be evenly divisible by number of "
                                  "groups: ", filter[3], " vs ", groups, " (", in_name,
                                  ".shape ", in, ", ", filter_name, ".shape ", filter, ")");
  }
  ConvGeom g{};
  g.groups = groups;
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
  if (!depthwise)
    PDK_RETURN_IF_ERROR(
        CheckFilterElements(op, filter, filter_name, g.n * g.oh * g.ow * g.out_depth));
  return g;
}

// Geometry of a D-dimensional channels-last convolution (Conv3D: D = 3):
// input [N, S_0..S_{D-1}, C], filter [K_0..K_{D-1}, C, F], output
// [N, O_0..O_{D-1}, F]. Per spatial dimension: stride, dilation and the
// leading padding `pad` (WindowedOutputSize).
template <int D>
struct ConvGeomND {
  int64_t n, c, f;
  int64_t in[D], k[D], out[D], stride[D], dilation[D], pad[D];
  static int64_t Product(const int64_t* v) {
    int64_t p = 1;
    for (int i = 0; i < D; ++i) p *= v[i];
    return p;
  }
  int64_t InPixels() const { return Product(in); }
  int64_t OutPixels() const { return Product(out); }
  int64_t Taps() const { return Product(k); }
  int64_t M() const { return n * OutPixels(); }  // output positions
  int64_t K() const { return Taps() * c; }       // patch length
  pdk::Shape OutputShape() const {
    std::vector<int64_t> s{n};
    s.insert(s.end(), out, out + D);
    s.push_back(f);
    return pdk::Shape(std::move(s));
  }
};

// Checks input (rank D + 2) and filter (rank D + 2, filter[D] == input depth)
// and computes the output size. Errors name both operands and their shapes.
template <int D>
pdk::StatusOr<ConvGeomND<D>> MakeConvGeomND(const char* op, const Window<D>& win,
                                            const pdk::Shape& in, const char* in_name,
                                            const pdk::Shape& filter, const char* filter_name) {
  PDK_RETURN_IF_ERROR(pdk::CheckRank(op, in_name, in, D + 2));
  PDK_RETURN_IF_ERROR(pdk::CheckRank(op, filter_name, filter, D + 2));
  PDK_RETURN_IF_ERROR(CheckFilterDepth(op, filter, filter[D], filter_name));
  if (in[D + 1] != filter[D])
    return pdk::InvalidArgument(op,
                                ": input depth must equal filter in_depth (grouped "
                                "convolution is not supported on PDK): ",
                                in_name, ".shape ", in, " has depth ", in[D + 1], " but ",
                                filter_name, ".shape ", filter, " has in_depth ", filter[D]);
  static const char* kDimNames[] = {"planes", "rows", "cols"};
  ConvGeomND<D> g{};
  g.n = in[0];
  g.c = in[D + 1];
  g.f = filter[D + 1];
  for (int i = 0; i < D; ++i) {
    g.in[i] = in[1 + i];
    g.k[i] = filter[i];
    g.stride[i] = win.stride[i];
    g.dilation[i] = win.dilation[i];
    PDK_RETURN_IF_ERROR(WindowedOutputSize(op, kDimNames[i + 3 - D], g.in[i], g.k[i], win, i,
                                           &g.out[i], &g.pad[i]));
  }
  PDK_RETURN_IF_ERROR(CheckFilterElements(op, filter, filter_name, g.n * g.OutPixels() * g.f));
  return g;
}

template <int D>
pdk::Status CheckOutBackpropND(const char* op, const ConvGeomND<D>& g, const pdk::Shape& dy,
                               const pdk::Shape& in, const pdk::Shape& filter) {
  PDK_RETURN_IF_ERROR(pdk::CheckRank(op, "out_backprop", dy, D + 2));
  const pdk::Shape want = g.OutputShape();
  if (dy != want)
    return pdk::InvalidArgument(op, ": out_backprop.shape ", dy, " != ", want,
                                ", the output shape of input ", in, " convolved with filter ",
                                filter);
  return pdk::Status::OK();
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

// Reads a shape argument (input_sizes / filter_sizes / orig_input_shape) of
// `rank` ints (int32 or int64, ReadIntVector of kernels/tensor_util.h), host
// memory. Errors name the op and the argument.
inline pdk::StatusOr<pdk::Shape> ReadShapeN(tensorflow::OpKernelContext* ctx, int index,
                                            const char* name, int rank) {
  const std::string& op = ctx->op_kernel().type_string();
  const tensorflow::Tensor& t = ctx->input(index);
  if (t.dims() != 1 || t.NumElements() != rank)
    return pdk::InvalidArgument(op, ": ", name, " must be a ", rank,
                                "-element vector, got shape ", t.shape());
  std::vector<int64_t> v;
  PDK_RETURN_IF_ERROR(pdk_kernels::ReadIntVector(op, name, t, &v));
  for (int64_t d : v)
    if (d < 0)
      return pdk::InvalidArgument(op, ": ", name, " ", ListString(v),
                                  " has a negative dimension");
  return pdk::Shape(std::move(v));
}

inline pdk::StatusOr<pdk::Shape> ReadShape4(tensorflow::OpKernelContext* ctx, int index,
                                            const char* name) {
  return ReadShapeN(ctx, index, name, 4);
}

// The parsers above in a TF-style kernel's constructor: the same attributes,
// checks and messages (the node's attributes, read as the kit's pdk::Attrs
// over the same TF_OpKernelConstruction, whose getters and messages are
// OpKernelConstruction::GetAttr's).
template <int D>
pdk::Status ParseWindow(tensorflow::OpKernelConstruction* c, bool allow_explicit, Window<D>* w,
                        DataFormat* format = nullptr, bool any_channel_stride = false) {
  return ParseWindow<D>(pdk::Attrs(c->raw()), allow_explicit, w, format, any_channel_stride);
}

template <int D>
pdk::Status ParseSpatial(tensorflow::OpKernelConstruction* c, const char* name, DataFormat f,
                         int64_t out[D], bool optional, bool any_channel = false) {
  return ParseSpatial<D>(pdk::Attrs(c->raw()), name, f, out, optional, any_channel);
}

// The outputs whose windows contain input index i along one dimension, as
// [*lo, *hi) (empty when a stride longer than the window skips i): window o
// of size k, stride s and leading padding pad covers inputs
// [o*s - pad, o*s - pad + k), for o in [0, n_out). The pooling gradients'
// gathers (pooling.cc, pooling3d.cc) walk these.
inline void CoveringOutputs(int64_t i, int64_t pad, int64_t k, int64_t s, int64_t n_out,
                            int64_t* lo, int64_t* hi) {
  const int64_t first = i + pad - k + 1;  // the least window start covering i
  *lo = first <= 0 ? 0 : std::min(n_out, (first + s - 1) / s);
  *hi = std::max(*lo, std::min(n_out, (i + pad) / s + 1));
}

inline pdk::Status ParseDataFormatNHWC(tensorflow::OpKernelConstruction* c) {
  return ParseDataFormatNHWC(pdk::Attrs(c->raw()));
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_NN_WINDOW_H_
