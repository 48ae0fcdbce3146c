// MaxPool, MaxPoolV2, MaxPoolGrad, AvgPool and AvgPoolGrad on OPENCL, float32,
// NHWC and NCHW; ksize / strides (attributes, or HostMemory int32 inputs for
// MaxPoolV2), padding SAME / VALID (and EXPLICIT for the max pools); MaxPool
// also pools over depth (ksize = strides on C, nothing else) as TensorFlow's
// CPU kernel does. Output sizes from kernel_shape_util.cc's
// GetWindowedOutputSizeVerbose; checks and error texts from TensorFlow's
// pooling_ops_common.{h,cc}, maxpooling_op.cc and avgpooling_op.cc. MaxPoolGrad
// sends each window's gradient to the window's first maximum, as the CPU
// kernel does (cl/pooling.cl). orig_input_shape of AvgPoolGrad is a
// HostMemory int32 vector, as in TensorFlow's GPU registration.
#include <algorithm>
#include <string>
#include <vector>

#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;

namespace {

enum class Pad { kSame, kValid, kExplicit };

// TensorFlow's GetWindowedOutputSizeVerbose (dilation 1).
Status WindowedOutputSize(int64 in, int64 k, int64 stride, Pad pad, int64 pad_b, int64 pad_a,
                          int64* out, int64* before) {
  if (stride <= 0) return errors::InvalidArgument("Stride must be > 0, but got ", stride);
  switch (pad) {
    case Pad::kValid:
      *out = (in - k + stride) / stride;
      *before = 0;
      break;
    case Pad::kExplicit:
      *out = (in + pad_b + pad_a - k + stride) / stride;
      *before = pad_b;
      break;
    case Pad::kSame:
      *out = (in + stride - 1) / stride;
      *before = std::max<int64>(0, (*out - 1) * stride + k - in) / 2;
      break;
  }
  if (*out < 0)
    return errors::InvalidArgument("Computed output size would be negative: ", *out,
                                   " [input_size: ", in, ", effective_filter_size: ", k,
                                   ", stride: ", stride, "]");
  return Status();
}

struct PoolAttrs {
  std::vector<int32> ksize, strides;
  std::vector<int64> explicit_paddings;
  Pad pad = Pad::kValid;
  bool nchw = false;
  int hd = 1, wd = 2, cd = 3;

  // The attributes other than ksize / strides.
  Status InitFormat(OpKernelConstruction* c) {
    std::string fmt = "NHWC", padding;
    if (c->HasAttr("data_format")) TF_RETURN_IF_ERROR(c->GetAttr("data_format", &fmt));
    if (fmt == "NCHW") {
      nchw = true;
      hd = 2, wd = 3, cd = 1;
    } else if (fmt != "NHWC") {
      return errors::InvalidArgument("Invalid data format");
    }
    TF_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
    pad = padding == "SAME" ? Pad::kSame : padding == "VALID" ? Pad::kValid : Pad::kExplicit;
    if (pad == Pad::kExplicit) {
      TF_RETURN_IF_ERROR(c->GetAttr("explicit_paddings", &explicit_paddings));
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
    }
    return Status();
  }

  // MaxPool's checks of ksize and strides (pooling_ops_common.h).
  Status CheckWindow(bool avg) const {
    if (ksize.size() != 4)
      return errors::InvalidArgument("Sliding window ksize field must specify 4 dimensions");
    if (avg) {
      for (int32 k : ksize)
        if (k <= 0) return errors::InvalidArgument("ksize must be a positive int32 value, got:", k);
    } else if (ksize[0] <= 0 || ksize[1] <= 0 || ksize[2] <= 0 || ksize[3] <= 0) {
      std::string s;
      for (size_t i = 0; i < ksize.size(); ++i) s += (i ? "," : "") + std::to_string(ksize[i]);
      return errors::InvalidArgument(
          "Sliding window ksize must be positive. The specified or inferred ksize is: ", s);
    }
    if (strides.size() != 4)
      return errors::InvalidArgument("Sliding window stride field must specify 4 dimensions");
    if (ksize[0] != 1 || strides[0] != 1)
      return errors::Unimplemented("Pooling is not yet supported on the batch dimension.");
    return Status();
  }

  int64 PadBefore(int d) const { return pad == Pad::kExplicit ? explicit_paddings[2 * d] : 0; }
  int64 PadAfter(int d) const { return pad == Pad::kExplicit ? explicit_paddings[2 * d + 1] : 0; }
};

struct PoolGeo {
  int64 N = 0, H = 0, W = 0, C = 0, OH = 0, OW = 0, OC = 0, KH = 1, KW = 1, KC = 1;
  int64 sh = 1, sw = 1, pad_top = 0, pad_left = 0;
};

// TensorFlow's PoolParameters.
Status ComputePool(const PoolAttrs& a, const TensorShape& in, PoolGeo* g) {
  if (in.dims() != 4)
    return errors::InvalidArgument("tensor_in_shape must have 2 spatial dimensions. ", in.dims(),
                                   " ", a.nchw ? 1 : 0);
  g->N = in.dim_size(0), g->H = in.dim_size(a.hd), g->W = in.dim_size(a.wd);
  g->C = in.dim_size(a.cd);
  g->KC = a.ksize[a.cd];
  if (g->KC == 1) {
    g->KH = a.ksize[a.hd], g->KW = a.ksize[a.wd];
    g->sh = a.strides[a.hd], g->sw = a.strides[a.wd];
    TF_RETURN_IF_ERROR(WindowedOutputSize(g->H, g->KH, g->sh, a.pad, a.PadBefore(a.hd),
                                          a.PadAfter(a.hd), &g->OH, &g->pad_top));
    TF_RETURN_IF_ERROR(WindowedOutputSize(g->W, g->KW, g->sw, a.pad, a.PadBefore(a.wd),
                                          a.PadAfter(a.wd), &g->OW, &g->pad_left));
    g->OC = g->C;
  } else {
    if (a.ksize[a.hd] != 1 || a.ksize[a.wd] != 1 || a.strides[a.hd] != 1 ||
        a.strides[a.wd] != 1)
      return errors::Unimplemented(
          "MaxPooling supports exactly one of pooling across depth or pooling across "
          "width/height.");
    if (g->C % g->KC != 0)
      return errors::Unimplemented(
          "Depthwise max pooling requires the depth window to evenly divide the input depth");
    if (a.strides[a.cd] != g->KC)
      return errors::Unimplemented(
          "Depthwise max pooling requires the depth window to equal the depth stride");
    g->OH = g->H, g->OW = g->W, g->OC = g->C / g->KC;
  }
  return Status();
}

TensorShape Shape(const PoolAttrs& a, int64 n, int64 h, int64 w, int64 c) {
  return a.nchw ? TensorShape({n, c, h, w}) : TensorShape({n, h, w, c});
}

void Strides(const PoolAttrs& a, int64 H, int64 W, int64 C, int64 (&s)[8]) {
  for (int64& v : s) v = 0;
  if (a.nchw) {
    s[0] = C * H * W, s[1] = W, s[2] = 1, s[3] = H * W;
  } else {
    s[0] = H * W * C, s[1] = W * C, s[2] = C, s[3] = 1;
  }
}

// Enqueues a pooling kernel: `tensors` first, then geo, win, xs, ys, total.
Status Launch(OpKernelContext* ctx, const char* name, const PoolAttrs& a, const PoolGeo& g,
              std::initializer_list<const Tensor*> tensors, int64 total) {
  const int64 geo[8] = {g.H, g.W, g.C, g.OH, g.OW, g.KH, g.KW, g.KC};
  const int64 win[8] = {g.sh, g.sw, g.pad_top, g.pad_left, g.N, 0, 0, 0};
  int64 xs[8], ys[8];
  Strides(a, g.H, g.W, g.C, xs);
  Strides(a, g.OH, g.OW, g.OC, ys);
  const Tensor* t[3] = {};
  int n = 0;
  for (const Tensor* p : tensors) t[n++] = p;
  if (n == 2)
    return Enqueue(ctx, name, total,
                   {*t[0], *t[1], Arg::Long8(geo), Arg::Long8(win), Arg::Long8(xs),
                    Arg::Long8(ys), Arg::I64(total)});
  return Enqueue(ctx, name, total,
                 {*t[0], *t[1], *t[2], Arg::Long8(geo), Arg::Long8(win), Arg::Long8(xs),
                  Arg::Long8(ys), Arg::I64(total)});
}

Status ReadVector4(const Tensor& t, const char* what, std::vector<int32>* v) {
  if (t.NumElements() != 4)
    return errors::InvalidArgument("Sliding window ", what, " field must specify 4 dimensions");
  const int32* p = t.flat<int32>().data();
  v->assign(p, p + 4);
  return Status();
}

}  // namespace

// MaxPool (attributes) and MaxPoolV2 (ksize, strides HostMemory inputs).
template <bool kV2>
class MaxPoolOp : public OpKernel {
 public:
  explicit MaxPoolOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, a_.InitFormat(c));
    if (!kV2) {
      OP_REQUIRES_OK(c, c->GetAttr("ksize", &a_.ksize));
      OP_REQUIRES_OK(c, c->GetAttr("strides", &a_.strides));
      OP_REQUIRES_OK(c, a_.CheckWindow(false));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    PoolAttrs a = a_;
    if (kV2) {
      OP_REQUIRES_OK(ctx, ReadVector4(ctx->input(1), "ksize", &a.ksize));
      OP_REQUIRES_OK(ctx, ReadVector4(ctx->input(2), "stride", &a.strides));
      OP_REQUIRES_OK(ctx, a.CheckWindow(false));
    }
    PoolGeo g;
    OP_REQUIRES_OK(ctx, ComputePool(a, x.shape(), &g));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, Shape(a, g.N, g.OH, g.OW, g.OC), &y));
    const int64 total = y->NumElements();
    OP_REQUIRES_OK(ctx, Launch(ctx, "pool_max_f32", a, g, {&x, y}, total));
  }

 private:
  PoolAttrs a_;
};

class MaxPoolGradOp : public OpKernel {
 public:
  explicit MaxPoolGradOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, a_.InitFormat(c));
    OP_REQUIRES_OK(c, c->GetAttr("ksize", &a_.ksize));
    OP_REQUIRES_OK(c, c->GetAttr("strides", &a_.strides));
    OP_REQUIRES_OK(c, a_.CheckWindow(false));
    OP_REQUIRES(c, a_.ksize[a_.cd] == 1 && a_.strides[a_.cd] == 1,
                errors::Unimplemented("MaxPoolingGrad is not yet supported on the depth "
                                      "dimension."));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    OP_REQUIRES(ctx, x.dims() == 4, errors::InvalidArgument("tensor_in must be 4-dimensional"));
    OP_REQUIRES(ctx, y.dims() == 4, errors::InvalidArgument("tensor_out must be 4-dimensional"));
    OP_REQUIRES(ctx, grad.dims() == 4,
                errors::InvalidArgument("out_backprop must be 4-dimensional"));
    PoolGeo g;
    OP_REQUIRES_OK(ctx, ComputePool(a_, x.shape(), &g));
    const TensorShape want = Shape(a_, g.N, g.OH, g.OW, g.OC);
    OP_REQUIRES(ctx, y.shape() == want,
                errors::InvalidArgument("Expected orig_output shape to be ", want.DebugString(),
                                        ", but got ", y.shape().DebugString()));
    OP_REQUIRES(ctx, grad.shape() == want,
                errors::InvalidArgument("Expected grad shape to be ", want.DebugString(),
                                        ", but got ", grad.shape().DebugString()));
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &dx));
    if (dx->NumElements() == 0) return;
    if (grad.NumElements() == 0) {
      OP_REQUIRES_OK(ctx, pdk_opencl::Zero(ctx, dx));
      return;
    }
    OP_REQUIRES_OK(ctx, Launch(ctx, "pool_max_grad_f32", a_, g, {&x, &grad, dx},
                               dx->NumElements()));
  }

 private:
  PoolAttrs a_;
};

class AvgPoolOp : public OpKernel {
 public:
  explicit AvgPoolOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, a_.InitFormat(c));
    OP_REQUIRES_OK(c, c->GetAttr("ksize", &a_.ksize));
    OP_REQUIRES_OK(c, c->GetAttr("strides", &a_.strides));
    OP_REQUIRES_OK(c, a_.CheckWindow(true));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    PoolGeo g;
    OP_REQUIRES_OK(ctx, ComputePool(a_, x.shape(), &g));
    OP_REQUIRES(ctx, g.KC == 1,
                errors::Unimplemented("Non-spatial pooling is not yet supported. Volunteers? :)"));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, Shape(a_, g.N, g.OH, g.OW, g.OC), &y));
    OP_REQUIRES_OK(ctx, Launch(ctx, "pool_avg_f32", a_, g, {&x, y}, y->NumElements()));
  }

 private:
  PoolAttrs a_;
};

class AvgPoolGradOp : public OpKernel {
 public:
  explicit AvgPoolGradOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, a_.InitFormat(c));
    OP_REQUIRES_OK(c, c->GetAttr("ksize", &a_.ksize));
    OP_REQUIRES_OK(c, c->GetAttr("strides", &a_.strides));
    OP_REQUIRES_OK(c, a_.CheckWindow(true));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    OP_REQUIRES(ctx, shape_t.dims() == 1 && shape_t.NumElements() == 4,
                errors::InvalidArgument("out_backprop must be 1-dimensional and 4 elements"));
    OP_REQUIRES(ctx, grad.dims() == 4,
                errors::InvalidArgument("out_backprop must be 4-dimensional"));
    TensorShape in_shape;
    OP_REQUIRES_OK(ctx, TensorShapeUtils::MakeShape(shape_t.flat<int32>().data(), 4, &in_shape));
    PoolGeo g;
    OP_REQUIRES_OK(ctx, ComputePool(a_, in_shape, &g));
    OP_REQUIRES(ctx, g.KC == 1,
                errors::Unimplemented("Non-spatial pooling is not yet supported. Volunteers? :)"));
    // The windows are those of grad's own spatial size (as the CPU kernel
    // iterates); its batch and depth must be the input's.
    OP_REQUIRES(ctx, grad.dim_size(0) == g.N && grad.dim_size(a_.cd) == g.C,
                errors::InvalidArgument("Expected grad shape to be ",
                                        Shape(a_, g.N, g.OH, g.OW, g.C).DebugString(),
                                        ", but got ", grad.shape().DebugString()));
    g.OH = grad.dim_size(a_.hd), g.OW = grad.dim_size(a_.wd);
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in_shape, &dx));
    if (dx->NumElements() == 0) return;
    if (grad.NumElements() == 0) {
      OP_REQUIRES_OK(ctx, pdk_opencl::Zero(ctx, dx));
      return;
    }
    OP_REQUIRES_OK(ctx, Launch(ctx, "pool_avg_grad_f32", a_, g, {&grad, dx}, dx->NumElements()));
  }

 private:
  PoolAttrs a_;
};

REGISTER_KERNEL_BUILDER(Name("MaxPool").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        MaxPoolOp<false>);
REGISTER_KERNEL_BUILDER(Name("MaxPoolV2")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<float>("T")
                            .HostMemory("ksize")
                            .HostMemory("strides"),
                        MaxPoolOp<true>);
REGISTER_KERNEL_BUILDER(Name("MaxPoolGrad").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        MaxPoolGradOp);
REGISTER_KERNEL_BUILDER(Name("AvgPool").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        AvgPoolOp);
REGISTER_KERNEL_BUILDER(Name("AvgPoolGrad")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<float>("T")
                            .HostMemory("orig_input_shape"),
                        AvgPoolGradOp);

}  // namespace tensorflow
