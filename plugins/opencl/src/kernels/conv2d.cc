// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter on OPENCL, float32,
// NHWC and NCHW, filters HWIO [KH, KW, C/groups, OC], strides, dilations,
// padding SAME / VALID / EXPLICIT (explicit_paddings), grouped convolution
// (C a multiple of the filter's depth), as TensorFlow's ops define them:
// output sizes and paddings from kernel_shape_util.cc's
// GetWindowedOutputSizeVerbose (window.h), checks and error texts from
// TensorFlow's CPU kernels (conv_ops.cc, conv_grad_*_ops.cc,
// conv_grad_shape_utils.cc).
// DepthwiseConv2dNative and its two backprops (float32, NHWC and NCHW,
// strides equal in H and W, no dilations, as TensorFlow's CPU kernels
// (depthwise_conv_op.cc, depthwise_conv_grad_op.cc)) are the grouped
// convolution with groups = C: the filter [KH, KW, C, M] is, in memory, the
// grouped filter [KH, KW, 1, C*M].
//
// Method: im2col (cl/conv.cl) of a chunk of output rows into a device scratch
// buffer, then CLBlast SGEMM per group (conv_gemm.h):
//   forward   y[(n,p), oc]   = col[(n,p), k] x filter[k, oc]
//   input     dcol[(n,p), k] = dy[(n,p), oc] x filter[k, oc]^T, then col2im
//   filter    dfilter[k, oc] = sum over chunks of col^T x dy
// with p = (oh, ow) and k = (kh, kw, c) within a group; NCHW tensors take the
// transposed products per image (their [oc, p] blocks).
// input_sizes and filter_sizes are HostMemory int32 vectors, as in
// TensorFlow's GPU registrations (the depthwise ones too).
#include <algorithm>
#include <string>
#include <vector>

#include "conv_gemm.h"
#include "launch.h"
#include "window.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;
using pdk_opencl::GemmBatched;

namespace {

// Column-matrix scratch per chunk of images, at most this many floats
// (at least one image).
constexpr int64 kMaxColFloats = int64{16} << 20;

// The attributes the three ops share, checked as TensorFlow's
// InitConv2DParameters / the backprop constructors do.
struct ConvAttrs : window::WindowFormat {
  std::vector<int32> strides, dilations;

  Status Init(OpKernelConstruction* c) {
    TF_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
    TF_RETURN_IF_ERROR(c->GetAttr("dilations", &dilations));
    TF_RETURN_IF_ERROR(InitFormat(c));
    if (strides.size() != 4)
      return errors::InvalidArgument("Sliding window strides field must specify 4 dimensions");
    if (dilations.size() != 4)
      return errors::InvalidArgument("Sliding window dilations field must specify 4 dimensions");
    if (strides[0] != 1 || strides[cd] != 1)
      return errors::Unimplemented(
          "Current implementation does not yet support strides in the batch and depth "
          "dimensions.");
    if (dilations[0] != 1 || dilations[cd] != 1)
      return errors::Unimplemented(
          "Current implementation does not yet support dilations in the batch and depth "
          "dimensions.");
    if (strides[hd] <= 0 || strides[wd] <= 0)
      return errors::InvalidArgument("Row and column strides should be larger than 0.");
    if (dilations[hd] <= 0 || dilations[wd] <= 0)
      return errors::InvalidArgument("Dilated rates should be larger than 0.");
    return InitPadding(c, /*read_always=*/true);
  }
};

// The geometry of one convolution.
struct ConvGeo {
  int64 N = 0, H = 0, W = 0, C = 0, KH = 0, KW = 0, Cg = 0, OC = 0, OH = 0, OW = 0;
  int64 G = 1, pad_top = 0, pad_left = 0;
  int64 sh = 1, sw = 1, dh = 1, dw = 1;
  int64 P() const { return OH * OW; }
  int64 K() const { return KH * KW * C; }
  int64 Kg() const { return KH * KW * Cg; }
  int64 OCg() const { return OC / G; }
  // Output rows (n, oh) per im2col chunk: col holds at most kMaxColFloats
  // (at least one row).
  int64 ChunkRows() const {
    const int64 per = std::max<int64>(1, OW * K());
    return std::max<int64>(1, std::min<int64>(N * OH, kMaxColFloats / per));
  }
};

// The part of output rows [r0, r1) in image n (NCHW GEMMs go per image):
// positions p0 .. p0 + np of the image, at col row offset col_row.
struct Segment {
  int64 n, p0, np, col_row;
};
std::vector<Segment> Segments(const ConvGeo& g, int64 r0, int64 r1) {
  std::vector<Segment> out;
  for (int64 n = r0 / g.OH; n * g.OH < r1; ++n) {
    const int64 rs = std::max(r0, n * g.OH), re = std::min(r1, (n + 1) * g.OH);
    out.push_back({n, (rs - n * g.OH) * g.OW, (re - rs) * g.OW, (rs - r0) * g.OW});
  }
  return out;
}

// im2col (x -> col) or col2im (col -> dx) of output rows [r0, r1).
Status ColKernel(OpKernelContext* ctx, const char* name, const ConvAttrs& a, const ConvGeo& g,
                 const Tensor& from, const Tensor& to, int64 r0, int64 r1) {
  int64 xs[8];
  a.Strides(g.H, g.W, g.C, xs);
  const bool to_col = std::string(name) == "conv_im2col_f32";
  const int64 n_first = r0 / g.OH, n_last = (r1 - 1) / g.OH;
  const int64 total = to_col ? (r1 - r0) * g.OW * g.K() : (n_last - n_first + 1) * g.H * g.W * g.C;
  const int64 geo[8] = {g.H, g.W, g.C, g.OH, g.OW, g.KH, g.KW, g.Cg};
  xs[4] = r0, xs[5] = r1, xs[6] = n_first;
  const int64 win[8] = {g.sh, g.sw, g.dh, g.dw, g.pad_top, g.pad_left, 0, 0};
  return Enqueue(ctx, name, total,
                 {from, to, Arg::Long8(geo), Arg::Long8(xs), Arg::Long8(win), Arg::I64(total)});
}

void FillWindow(const ConvAttrs& a, ConvGeo* g) {
  g->sh = a.strides[a.hd], g->sw = a.strides[a.wd];
  g->dh = a.dilations[a.hd], g->dw = a.dilations[a.wd];
}

// TensorFlow's ConvBackpropComputeDimensionsV2 for 2 spatial dimensions.
// DepthwiseConv2dNative's own checks of strides and dilations (before
// ConvAttrs::Init, which then passes them), as TensorFlow's depthwise kernels.
Status CheckDepthwiseAttrs(OpKernelConstruction* c, const ConvAttrs& a) {
  std::vector<int32> strides, dilations;
  TF_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
  TF_RETURN_IF_ERROR(c->GetAttr("dilations", &dilations));
  if (strides.size() != 4)
    return errors::InvalidArgument("Sliding window strides field must specify 4 dimensions");
  if (strides[a.hd] != strides[a.wd])
    return errors::InvalidArgument(
        "Current implementation only supports equal length strides in the row and column "
        "dimensions.");
  if (strides[0] != 1 || strides[a.cd] != 1)
    return errors::InvalidArgument(
        "Current implementation does not yet support strides in the batch and depth "
        "dimensions.");
  for (int32 d : dilations)
    if (d != 1) {
      std::string s;
      for (size_t i = 0; i < dilations.size(); ++i)
        s += (i ? " " : "") + std::to_string(dilations[i]);
      return errors::Unimplemented(
          "Current kernel implementation does not support dilations, received [", s, "]");
    }
  return Status();
}

// A depthwise filter [KH, KW, C, M] is read as the grouped filter
// [KH, KW, 1, C*M] (the same memory; groups = C).
Status BackpropGeo(const char* label, const ConvAttrs& a, const TensorShape& in,
                   const TensorShape& filter_in, const TensorShape& dy, bool depthwise,
                   ConvGeo* g) {
  if (in.dims() != 4) return errors::InvalidArgument(label, ": input must be 4-dimensional");
  if (filter_in.dims() != 4)
    return errors::InvalidArgument(label, ": filter must be 4-dimensional");
  if (dy.dims() != 4) return errors::InvalidArgument(label, ": out_backprop must be 4-dimensional");
  TensorShape filter = filter_in;
  if (depthwise) {
    if (filter_in.dim_size(2) != in.dim_size(a.cd))
      return errors::InvalidArgument(label, ": input and filter must have the same in_depth");
    if (filter_in.dim_size(2) * filter_in.dim_size(3) != dy.dim_size(a.cd))
      return errors::InvalidArgument(label, ": depth_multiplier * in_depth not equal to out_depth");
    filter = TensorShape({filter_in.dim_size(0), filter_in.dim_size(1), 1,
                          filter_in.dim_size(2) * filter_in.dim_size(3)});
  }
  if (in.dim_size(0) != dy.dim_size(0))
    return errors::InvalidArgument(label,
                                   ": input and out_backprop must have the same batch size. "
                                   "Input batch: ",
                                   in.dim_size(0), ", outbackprop batch: ", dy.dim_size(0),
                                   ", batch_dim: ", 0);
  const int64 C = in.dim_size(a.cd), Cg = filter.dim_size(2);
  if (Cg <= 0 || C % Cg != 0)
    return errors::InvalidArgument(label, ": input depth must be evenly divisible by filter depth");
  const int64 OC = filter.dim_size(3);
  if (OC != dy.dim_size(a.cd))
    return errors::InvalidArgument(label, ": filter and out_backprop must have the same out_depth");
  FillWindow(a, g);
  g->N = in.dim_size(0), g->H = in.dim_size(a.hd), g->W = in.dim_size(a.wd), g->C = C;
  g->KH = filter.dim_size(0), g->KW = filter.dim_size(1), g->Cg = Cg, g->OC = OC;
  g->G = C / Cg;
  if (g->G > 0 && OC % g->G != 0)
    return errors::InvalidArgument(
        label, ": output depth must be evenly divisible by number of groups: ", OC, " vs ", g->G);
  const int dims[2] = {a.hd, a.wd};
  for (int i = 0; i < 2; ++i) {
    const int d = dims[i];
    const int64 in_size = in.dim_size(d), k = filter.dim_size(i), out_size = dy.dim_size(d);
    const int64 stride = i == 0 ? g->sh : g->sw, dil = i == 0 ? g->dh : g->dw;
    int64 computed = 0, before = 0;
    TF_RETURN_IF_ERROR(a.OutputSize(d, in_size, k, dil, stride, &computed, &before));
    if (computed != out_size && depthwise)
      return errors::InvalidArgument(label, ": Number of ", i == 0 ? "rows" : "cols",
                                     " of out_backprop doesn't match computed: actual = ", out_size,
                                     ", computed = ", computed);
    if (computed != out_size)
      return errors::InvalidArgument(
          label, ": Size of out_backprop doesn't match computed: actual = ", out_size,
          ", computed = ", computed, " spatial_dim: ", d, " input: ", in_size, " filter: ", k,
          " output: ", out_size, " stride: ", stride, " dilation: ", dil);
    (i == 0 ? g->pad_top : g->pad_left) = before;
  }
  g->OH = dy.dim_size(a.hd), g->OW = dy.dim_size(a.wd);
  return Status();
}

// base + gi * step for the groups gi = 0 .. G-1 (a batched GEMM's offsets).
std::vector<size_t> GroupOffsets(int64 G, int64 base, int64 step) {
  std::vector<size_t> out;
  for (int64 gi = 0; gi < G; ++gi) out.push_back(base + gi * step);
  return out;
}

// Allocates the column scratch and calls body(col, r0, r1) on each chunk
// [r0, r1) of the output rows (n, oh).
template <typename Body>
Status ForEachChunk(OpKernelContext* ctx, const ConvGeo& g, Body body) {
  const int64 rows = g.ChunkRows();
  Tensor col;
  TF_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({rows * g.OW * g.K()}), &col));
  for (int64 r0 = 0; r0 < g.N * g.OH; r0 += rows)
    TF_RETURN_IF_ERROR(body(col, r0, std::min(r0 + rows, g.N * g.OH)));
  return Status();
}

// What the three ops (and their depthwise forms) share: the attributes.
template <bool kDepthwise>
class ConvOpBase : public OpKernel {
 public:
  explicit ConvOpBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, a_.InitFormat(c));
    if (kDepthwise) OP_REQUIRES_OK(c, CheckDepthwiseAttrs(c, a_));
    OP_REQUIRES_OK(c, a_.Init(c));
  }

 protected:
  ConvAttrs a_;
};

}  // namespace

// Conv2D, or DepthwiseConv2dNative (kDepthwise: filter [KH, KW, C, M] as
// groups = C of one input channel and M output channels each).
template <bool kDepthwise>
class Conv2DOp : public ConvOpBase<kDepthwise> {
 public:
  using ConvOpBase<kDepthwise>::ConvOpBase;
  using ConvOpBase<kDepthwise>::a_;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& f = ctx->input(1);
    // (the depthwise kernel's texts, then Conv2D's)
    OP_REQUIRES(ctx, x.dims() == 4,
                kDepthwise ? errors::InvalidArgument("input must be 4-dimensional",
                                                     x.shape().DebugString())
                           : errors::InvalidArgument("convolution input must be 4-dimensional: ",
                                                     x.shape().DebugString()));
    OP_REQUIRES(ctx, f.dims() == 4,
                kDepthwise ? errors::InvalidArgument("filter must be 4-dimensional: ",
                                                     f.shape().DebugString())
                           : errors::InvalidArgument("convolution filter must be 4-dimensional: ",
                                                     f.shape().DebugString()));
    ConvGeo g;
    FillWindow(a_, &g);
    g.N = x.dim_size(0), g.H = x.dim_size(a_.hd), g.W = x.dim_size(a_.wd), g.C = x.dim_size(a_.cd);
    g.KH = f.dim_size(0), g.KW = f.dim_size(1), g.Cg = f.dim_size(2), g.OC = f.dim_size(3);
    if (kDepthwise) {
      OP_REQUIRES(ctx, g.C == g.Cg,
                  errors::InvalidArgument("input and filter must have the same depth: ", g.C,
                                          " vs ", g.Cg));
      g.OC *= g.C, g.Cg = 1;
    }
    OP_REQUIRES(ctx, g.Cg > 0,
                errors::InvalidArgument("filter depth must be stricly positive, got ", g.Cg));
    OP_REQUIRES(ctx, g.C % g.Cg == 0,
                errors::InvalidArgument(
                    "input depth must be evenly divisible by filter depth: ", g.C, " vs ", g.Cg));
    g.G = g.C / g.Cg;
    OP_REQUIRES_OK(ctx, a_.OutputSize(a_.hd, g.H, g.KH, g.dh, g.sh, &g.OH, &g.pad_top));
    OP_REQUIRES_OK(ctx, a_.OutputSize(a_.wd, g.W, g.KW, g.dw, g.sw, &g.OW, &g.pad_left));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, a_.Shape(g.N, g.OH, g.OW, g.OC), &y));
    if (y->NumElements() == 0) return;
    OP_REQUIRES(ctx, f.NumElements() > 0,
                errors::InvalidArgument("filter must not have zero elements "
                                        "(i.e. all dimensions must be non-zero)"));
    if (g.G == 0) {  // no input channels: a sum of nothing
      OP_REQUIRES_OK(ctx, pdk_opencl::Zero(ctx, y));
      return;
    }
    OP_REQUIRES(
        ctx, g.OC % g.G == 0,
        errors::InvalidArgument("output depth must be evenly divisible by number of groups: ", g.OC,
                                " vs ", g.G));
    const int64 P = g.P(), K = g.K(), Kg = g.Kg(), OCg = g.OCg();
    const auto chunk = [&](const Tensor& col, int64 r0, int64 r1) -> Status {
      TF_RETURN_IF_ERROR(ColKernel(ctx, "conv_im2col_f32", a_, g, x, col, r0, r1));
      // y[(n,p), oc] = col[(n,p), k] x filter[k, oc], per group
      if (!a_.nchw)
        return GemmBatched(ctx, false, false, (r1 - r0) * g.OW, OCg, Kg, 1.f, col,
                           GroupOffsets(g.G, 0, Kg), K, f, GroupOffsets(g.G, 0, OCg), g.OC, 0.f, *y,
                           GroupOffsets(g.G, r0 * g.OW * g.OC, OCg), g.OC);
      // y_n[oc, p] = filter^T[oc, k] x col_n^T[k, p], per image part and group
      for (const Segment& sg : Segments(g, r0, r1))
        TF_RETURN_IF_ERROR(GemmBatched(ctx, true, true, OCg, sg.np, Kg, 1.f, f,
                                       GroupOffsets(g.G, 0, OCg), g.OC, col,
                                       GroupOffsets(g.G, sg.col_row * K, Kg), K, 0.f, *y,
                                       GroupOffsets(g.G, sg.n * g.OC * P + sg.p0, OCg * P), P));
      return Status();
    };
    OP_REQUIRES_OK(ctx, ForEachChunk(ctx, g, chunk));
  }
};

template <bool kDepthwise>
class Conv2DBackpropInputOp : public ConvOpBase<kDepthwise> {
 public:
  using ConvOpBase<kDepthwise>::ConvOpBase;
  using ConvOpBase<kDepthwise>::a_;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& f = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    OP_REQUIRES(ctx, dy.dims() == 4,
                errors::InvalidArgument("input_sizes must be 4-dimensional, got: ", dy.dims()));
    OP_REQUIRES(ctx, sizes.dims() == 1,
                errors::InvalidArgument(
                    "Conv2DBackpropInput: input_sizes input must be 1-dim, not ", sizes.dims()));
    TensorShape in_shape;
    const int64 ns = sizes.NumElements();
    const int32* sv = sizes.flat<int32>().data();
    if (ns == 4 || kDepthwise) {  // (the depthwise op takes 4 values, checked below)
      OP_REQUIRES_OK(ctx, TensorShapeUtils::MakeShape(sv, ns, &in_shape));
    } else if (ns == 2) {
      OP_REQUIRES(
          ctx, f.dims() == 4,
          errors::InvalidArgument("Conv2DCustomBackpropInput: filter must be 4-dimensional"));
      const int64 d[4] = {dy.dim_size(0), sv[0], sv[1], f.dim_size(2)};
      OP_REQUIRES_OK(
          ctx, TensorShape::BuildTensorShape(
                   {d[0], a_.nchw ? d[3] : d[1], a_.nchw ? d[1] : d[2], a_.nchw ? d[2] : d[3]},
                   &in_shape));
    } else {
      OP_REQUIRES(ctx, false,
                  errors::InvalidArgument(
                      "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 "
                      "values, but got: ",
                      ns));
    }
    ConvGeo g;
    OP_REQUIRES_OK(
        ctx, BackpropGeo(kDepthwise ? "DepthwiseConv2DBackpropInput" : "Conv2DCustomBackpropInput",
                         a_, in_shape, f.shape(), dy.shape(), kDepthwise, &g));
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in_shape, &dx));
    if (dx->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, pdk_opencl::Zero(ctx, dx));
    if (dy.NumElements() == 0 || f.NumElements() == 0) return;
    const int64 P = g.P(), K = g.K(), Kg = g.Kg(), OCg = g.OCg();
    const auto chunk = [&](const Tensor& col, int64 r0, int64 r1) -> Status {
      if (!a_.nchw) {
        // dcol[(n,p), k] = dy[(n,p), oc] x filter[k, oc]^T, per group
        TF_RETURN_IF_ERROR(GemmBatched(ctx, false, true, (r1 - r0) * g.OW, Kg, OCg, 1.f, dy,
                                       GroupOffsets(g.G, r0 * g.OW * g.OC, OCg), g.OC, f,
                                       GroupOffsets(g.G, 0, OCg), g.OC, 0.f, col,
                                       GroupOffsets(g.G, 0, Kg), K));
      } else {
        // dcol_n[p, k] = dy_n[oc, p]^T x filter[k, oc]^T, per image part and group
        for (const Segment& sg : Segments(g, r0, r1))
          TF_RETURN_IF_ERROR(GemmBatched(ctx, true, true, sg.np, Kg, OCg, 1.f, dy,
                                         GroupOffsets(g.G, sg.n * g.OC * P + sg.p0, OCg * P), P, f,
                                         GroupOffsets(g.G, 0, OCg), g.OC, 0.f, col,
                                         GroupOffsets(g.G, sg.col_row * K, Kg), K));
      }
      return ColKernel(ctx, "conv_col2im_f32", a_, g, col, *dx, r0, r1);
    };
    OP_REQUIRES_OK(ctx, ForEachChunk(ctx, g, chunk));
  }
};

template <bool kDepthwise>
class Conv2DBackpropFilterOp : public ConvOpBase<kDepthwise> {
 public:
  using ConvOpBase<kDepthwise>::ConvOpBase;
  using ConvOpBase<kDepthwise>::a_;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& sizes = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    OP_REQUIRES(
        ctx, sizes.dims() == 1,
        errors::InvalidArgument(
            "Conv2DCustomBackpropFilter: filter_sizes input must be 1-dim, not ", sizes.dims()));
    TensorShape f_shape;
    OP_REQUIRES_OK(ctx, TensorShapeUtils::MakeShape(sizes.flat<int32>().data(), sizes.NumElements(),
                                                    &f_shape));
    ConvGeo g;
    OP_REQUIRES_OK(ctx, BackpropGeo(kDepthwise ? "DepthwiseConv2DBackpropFilter"
                                               : "Conv2DCustomBackpropFilter",
                                    a_, x.shape(), f_shape, dy.shape(), kDepthwise, &g));
    Tensor* df = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, f_shape, &df));
    if (df->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, pdk_opencl::Zero(ctx, df));
    if (x.NumElements() == 0 || dy.NumElements() == 0) return;
    const int64 P = g.P(), K = g.K(), Kg = g.Kg(), OCg = g.OCg();
    const auto chunk = [&](const Tensor& col, int64 r0, int64 r1) -> Status {
      TF_RETURN_IF_ERROR(ColKernel(ctx, "conv_im2col_f32", a_, g, x, col, r0, r1));
      // dfilter[k, oc] += col^T[k, (n,p)] x dy[(n,p), oc], per group
      if (!a_.nchw)
        return GemmBatched(ctx, true, false, Kg, OCg, (r1 - r0) * g.OW, 1.f, col,
                           GroupOffsets(g.G, 0, Kg), K, dy,
                           GroupOffsets(g.G, r0 * g.OW * g.OC, OCg), g.OC, 1.f, *df,
                           GroupOffsets(g.G, 0, OCg), g.OC);
      // dfilter[k, oc] += col_n^T[k, p] x dy_n[oc, p]^T, one image part at a time
      for (const Segment& sg : Segments(g, r0, r1))
        TF_RETURN_IF_ERROR(GemmBatched(ctx, true, true, Kg, OCg, sg.np, 1.f, col,
                                       GroupOffsets(g.G, sg.col_row * K, Kg), K, dy,
                                       GroupOffsets(g.G, sg.n * g.OC * P + sg.p0, OCg * P), P, 1.f,
                                       *df, GroupOffsets(g.G, 0, OCg), g.OC));
      return Status();
    };
    OP_REQUIRES_OK(ctx, ForEachChunk(ctx, g, chunk));
  }
};

REGISTER_KERNEL_BUILDER(Name("Conv2D").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        Conv2DOp<false>);
REGISTER_KERNEL_BUILDER(Name("Conv2DBackpropInput")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<float>("T")
                            .HostMemory("input_sizes"),
                        Conv2DBackpropInputOp<false>);
REGISTER_KERNEL_BUILDER(Name("Conv2DBackpropFilter")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<float>("T")
                            .HostMemory("filter_sizes"),
                        Conv2DBackpropFilterOp<false>);
REGISTER_KERNEL_BUILDER(
    Name("DepthwiseConv2dNative").Device(DEVICE_OPENCL).TypeConstraint<float>("T"), Conv2DOp<true>);
REGISTER_KERNEL_BUILDER(Name("DepthwiseConv2dNativeBackpropInput")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<float>("T")
                            .HostMemory("input_sizes"),
                        Conv2DBackpropInputOp<true>);
REGISTER_KERNEL_BUILDER(Name("DepthwiseConv2dNativeBackpropFilter")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<float>("T")
                            .HostMemory("filter_sizes"),
                        Conv2DBackpropFilterOp<true>);

}  // namespace tensorflow
