// What the sliding-window kernels share (conv2d.cc, pooling.cc): the
// data_format / padding / explicit_paddings attributes, output sizes and
// paddings of one spatial dimension (TensorFlow's kernel_shape_util.cc
// GetWindowedOutputSizeVerbose), and the shapes and element strides of
// [N, H, W, C] tensors in NHWC or NCHW. Checks and error texts as
// TensorFlow's CPU kernels (conv_ops.cc, pooling_ops_common.cc,
// padding.cc's CheckValidPadding).
#ifndef PDK_OPENCL_KERNELS_WINDOW_H_
#define PDK_OPENCL_KERNELS_WINDOW_H_

#include <algorithm>
#include <string>
#include <vector>

#include "launch.h"

namespace tensorflow {
namespace window {

enum class Pad { kSame, kValid, kExplicit };

// TensorFlow's GetWindowedOutputSizeVerbose: the output size *out and the
// padding before the first element *before of a dimension of size `in`.
inline Status WindowedOutputSize(int64 in, int64 k, int64 dil, int64 stride, Pad pad,
                                 int64 pad_b, int64 pad_a, int64* out, int64* before) {
  if (stride <= 0) return errors::InvalidArgument("Stride must be > 0, but got ", stride);
  if (dil < 1) return errors::InvalidArgument("Dilation rate must be >= 1, but got ", dil);
  const int64 eff = (k - 1) * dil + 1;
  switch (pad) {
    case Pad::kValid:
      *out = (in - eff + stride) / stride;
      *before = 0;
      break;
    case Pad::kExplicit:
      *out = (in + pad_b + pad_a - eff + stride) / stride;
      *before = pad_b;
      break;
    case Pad::kSame:
      *out = (in + stride - 1) / stride;
      *before = std::max<int64>(0, (*out - 1) * stride + eff - in) / 2;
      break;
  }
  if (*out < 0)
    return errors::InvalidArgument("Computed output size would be negative: ", *out,
                                   " [input_size: ", in, ", effective_filter_size: ", eff,
                                   ", stride: ", stride, "]");
  return Status();
}

// data_format (NHWC when the op has none), padding and explicit_paddings.
struct WindowFormat {
  std::vector<int64> explicit_paddings;
  Pad pad = Pad::kValid;
  bool nchw = false;
  int hd = 1, wd = 2, cd = 3;  // dimension indices of H, W, C

  Status InitFormat(OpKernelConstruction* c) {
    std::string fmt = "NHWC";
    if (c->HasAttr("data_format")) TF_RETURN_IF_ERROR(c->GetAttr("data_format", &fmt));
    if (fmt == "NCHW") {
      nchw = true;
      hd = 2, wd = 3, cd = 1;
    } else if (fmt != "NHWC") {
      return errors::InvalidArgument("Invalid data format");
    }
    return Status();
  }

  // padding and explicit_paddings. Conv ops read explicit_paddings whenever
  // the op has it (and want it empty unless EXPLICIT, read_always); pooling
  // ops only for EXPLICIT.
  Status InitPadding(OpKernelConstruction* c, bool read_always) {
    std::string padding;
    TF_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
    pad = padding == "SAME" ? Pad::kSame : padding == "VALID" ? Pad::kValid : Pad::kExplicit;
    if ((read_always || pad == Pad::kExplicit) && c->HasAttr("explicit_paddings"))
      TF_RETURN_IF_ERROR(c->GetAttr("explicit_paddings", &explicit_paddings));
    if (pad == Pad::kExplicit) {
      if (explicit_paddings.size() != 8)
        return errors::InvalidArgument(
            "explicit_paddings attribute must contain 8 values, but got: ",
            explicit_paddings.size());
      for (int64 p : explicit_paddings)
        if (p < 0)
          return errors::InvalidArgument("All elements of explicit_paddings must be nonnegative");
      if (explicit_paddings[0] != 0 || explicit_paddings[1] != 0 ||
          explicit_paddings[2 * cd] != 0 || explicit_paddings[2 * cd + 1] != 0)
        return errors::InvalidArgument(
            "Nonzero explicit padding in the batch or depth dimensions is not supported");
    } else if (!explicit_paddings.empty()) {
      return errors::InvalidArgument(
          "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
    }
    return Status();
  }

  int64 PadBefore(int d) const { return pad == Pad::kExplicit ? explicit_paddings[2 * d] : 0; }
  int64 PadAfter(int d) const { return pad == Pad::kExplicit ? explicit_paddings[2 * d + 1] : 0; }

  // WindowedOutputSize of dimension d (hd or wd) with this padding.
  Status OutputSize(int d, int64 in, int64 k, int64 dil, int64 stride, int64* out,
                    int64* before) const {
    return WindowedOutputSize(in, k, dil, stride, pad, PadBefore(d), PadAfter(d), out, before);
  }

  TensorShape Shape(int64 n, int64 h, int64 w, int64 c) const {
    return nchw ? TensorShape({n, c, h, w}) : TensorShape({n, h, w, c});
  }

  // Element strides (n, h, w, c) of an [N, H, W, C]-sized tensor in this
  // format in s[0..3]; s[4..7] = 0 (an OpenCL long8).
  void Strides(int64 H, int64 W, int64 C, int64 (&s)[8]) const {
    for (int64& v : s) v = 0;
    if (nchw) {
      s[0] = C * H * W, s[1] = W, s[2] = 1, s[3] = H * W;
    } else {
      s[0] = H * W * C, s[1] = W * C, s[2] = C, s[3] = 1;
    }
  }
};

}  // namespace window
}  // namespace tensorflow

#endif  // PDK_OPENCL_KERNELS_WINDOW_H_
