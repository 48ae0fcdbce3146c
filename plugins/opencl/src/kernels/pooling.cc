// MaxPool, MaxPoolV2, MaxPoolGrad, AvgPool and AvgPoolGrad on OPENCL, float32,
// NHWC and NCHW; ksize / strides (attributes, or HostMemory int32 inputs for
// MaxPoolV2), padding SAME / VALID (and EXPLICIT for the max pools); MaxPool
// also pools over depth (ksize = strides on C, nothing else) as TensorFlow's
// CPU kernel does. Output sizes from kernel_shape_util.cc's
// GetWindowedOutputSizeVerbose (window.h); checks and error texts from TensorFlow's
// pooling_ops_common.{h,cc}, maxpooling_op.cc and avgpooling_op.cc. MaxPoolGrad
// sends each window's gradient to the window's first maximum, as the CPU
// kernel does (cl/pooling.cl). orig_input_shape of AvgPoolGrad is a
// HostMemory int32 vector, as in TensorFlow's GPU registration.
#include <algorithm>
#include <string>
#include <vector>

#include "launch.h"
#include "window.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;

namespace {

struct PoolAttrs : window::WindowFormat {
  std::vector<int32> ksize, strides;

  // The attributes other than ksize / strides.
  Status InitLayout(OpKernelConstruction* c) {
    TF_RETURN_IF_ERROR(InitFormat(c));
    return InitPadding(c, /*read_always=*/false);
  }

  // Every attribute, from the op's attributes (all but MaxPoolV2).
  Status Init(OpKernelConstruction* c, bool avg) {
    TF_RETURN_IF_ERROR(InitLayout(c));
    TF_RETURN_IF_ERROR(c->GetAttr("ksize", &ksize));
    TF_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
    return CheckWindow(avg);
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
    TF_RETURN_IF_ERROR(a.OutputSize(a.hd, g->H, g->KH, 1, g->sh, &g->OH, &g->pad_top));
    TF_RETURN_IF_ERROR(a.OutputSize(a.wd, g->W, g->KW, 1, g->sw, &g->OW, &g->pad_left));
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

// Enqueues a pooling kernel: `tensors` first, then geo, win, xs, ys, total.
Status Launch(OpKernelContext* ctx, const char* name, const PoolAttrs& a, const PoolGeo& g,
              std::initializer_list<const Tensor*> tensors, int64 total) {
  const int64 geo[8] = {g.H, g.W, g.C, g.OH, g.OW, g.KH, g.KW, g.KC};
  const int64 win[8] = {g.sh, g.sw, g.pad_top, g.pad_left, g.N, 0, 0, 0};
  int64 xs[8], ys[8];
  a.Strides(g.H, g.W, g.C, xs);
  a.Strides(g.OH, g.OW, g.OC, ys);
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

// The pooling ops with attributes ksize and strides (all but MaxPoolV2).
template <bool kAvg>
class PoolOpBase : public OpKernel {
 public:
  explicit PoolOpBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, a_.Init(c, kAvg));
  }

 protected:
  PoolAttrs a_;
};

}  // namespace

// MaxPool (attributes) and MaxPoolV2 (ksize, strides HostMemory inputs).
template <bool kV2>
class MaxPoolOp : public OpKernel {
 public:
  explicit MaxPoolOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, kV2 ? a_.InitLayout(c) : a_.Init(c, false));
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
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, a.Shape(g.N, g.OH, g.OW, g.OC), &y));
    const int64 total = y->NumElements();
    OP_REQUIRES_OK(ctx, Launch(ctx, "pool_max_f32", a, g, {&x, y}, total));
  }

 private:
  PoolAttrs a_;
};

class MaxPoolGradOp : public PoolOpBase</*kAvg=*/false> {
 public:
  explicit MaxPoolGradOp(OpKernelConstruction* c) : PoolOpBase(c) {
    if (!c->status().ok()) return;  // the attributes failed their checks
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
    const TensorShape want = a_.Shape(g.N, g.OH, g.OW, g.OC);
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

};

class AvgPoolOp : public PoolOpBase</*kAvg=*/true> {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    PoolGeo g;
    OP_REQUIRES_OK(ctx, ComputePool(a_, x.shape(), &g));
    OP_REQUIRES(ctx, g.KC == 1,
                errors::Unimplemented("Non-spatial pooling is not yet supported. Volunteers? :)"));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, a_.Shape(g.N, g.OH, g.OW, g.OC), &y));
    OP_REQUIRES_OK(ctx, Launch(ctx, "pool_avg_f32", a_, g, {&x, y}, y->NumElements()));
  }

};

class AvgPoolGradOp : public PoolOpBase</*kAvg=*/true> {
 public:
  using PoolOpBase::PoolOpBase;

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
                                        a_.Shape(g.N, g.OH, g.OW, g.C).DebugString(),
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
