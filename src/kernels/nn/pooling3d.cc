// MaxPool3D, AvgPool3D, MaxPool3DGrad, AvgPool3DGrad
// (tensorflow/core/ops/nn_ops.cc), NDHWC: Keras's MaxPooling3D and
// AveragePooling3D and their gradients.
//
//   MaxPool3D(input [N,D,H,W,C]; ksize, strides, padding SAME / VALID)
//     -> [N,OD,OH,OW,C]: the maximum over each window's in-bounds positions.
//   AvgPool3D(input; same attributes) -> [N,OD,OH,OW,C]: the mean over each
//     window's in-bounds positions (padding is not counted), sum / count.
//   MaxPool3DGrad(orig_input [N,D,H,W,C], orig_output [N,OD,OH,OW,C],
//     grad [N,OD,OH,OW,C]) -> [N,D,H,W,C]: as TensorFlow's CPU kernel
//     (LaunchMaxPooling3dGradOp, tensorflow/core/kernels/pooling_ops_3d.cc),
//     grad[n,p,r,q,c] goes to every position of its window whose input is
//     within 1e-5 of orig_output[n,p,r,q,c] (|x - y| < 1e-5 in T; every tie,
//     not the first), accumulated window by window in (p, r, q) order
//     (TensorFlow's kernel sums overlapping windows in another order: float
//     results differ by an ulp or so; docs/ops.md).
//   AvgPool3DGrad(orig_input_shape (host int32 [5]), grad [N,OD,OH,OW,C])
//     -> orig_input_shape: each grad value times T(1 / in-bounds window size)
//     added to the window's positions, window by window in (p, r, q) order
//     (TensorFlow's LaunchAvgPooling3dGradOp, summing in another order).
//   T in {float32, bfloat16} (TensorFlow's CPU kernels' types; 16-bit values
//   in Eigen's bfloat16 arithmetic). ksize and strides are NDHWC 5-vectors
//   whose batch and channel entries are 1; output sizes and leading padding as
//   TensorFlow's Get3dOutputSizeV2 (window.h). data_format "NDHWC" only
//   (others: Unimplemented naming it, where TensorFlow's CPU kernel refuses
//   them too).
//
// MaxPool3D's maximum is TensorFlow's: from -inf, and a window clipped by SAME
// padding also sees lowest() (a clipped window of -inf values gives lowest()).
// A NaN never replaces the running maximum (the CPU's Eigen reduction lets a
// NaN through on its scalar path, which it takes for some channels by their
// flat index: no rule to follow; fuzz_exceptions.py).
//
// Errors: pooling over batch or channels (ksize or strides entry 0 or 4 not 1)
// is Unimplemented, "Pooling is not yet supported on the batch dimension." /
// "... on the depth dimension.", as TensorFlow's constructors. InvalidArgument:
// rank != 5, bad ksize / strides / padding, a grad or orig_output whose shape
// is not the pooled shape of orig_input ("Expected grad shape to be ..., but
// got ...", TensorFlow's wording), an orig_input_shape that is not 5 values.
//
// Parallelism: the forward ops split output rows (n, p, r) over the device
// pool, each output row its own accumulator; the gradients gather, for each
// input element, the windows that contain it in window order (p, r, q),
// split over input rows (n, z, y). Channels are the innermost loop (NDHWC).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/nn/window.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using ::pdk_kernels::DataFormat;
using ::pdk_kernels::ListString;
using ::pdk_kernels::Window3D;
using ::pdk_kernels::WindowedOutputSize;

using Index = Eigen::Index;

struct Geom3 {
  int64_t n = 0, c = 0;
  int64_t in[3] = {}, k[3] = {}, s[3] = {}, out[3] = {}, pad[3] = {};
  // Input positions [lo, hi) along `dim` of the window of output index `o`.
  void Range(int dim, int64_t o, int64_t* lo, int64_t* hi) const {
    const int64_t start = o * s[dim] - pad[dim];
    *lo = std::max<int64_t>(start, 0);
    *hi = std::min<int64_t>(start + k[dim], in[dim]);
  }
  int64_t InOffset(int64_t b, int64_t z, int64_t y, int64_t x) const {
    return (((b * in[0] + z) * in[1] + y) * in[2] + x) * c;
  }
  int64_t OutOffset(int64_t b, int64_t p, int64_t r, int64_t q) const {
    return (((b * out[0] + p) * out[1] + r) * out[2] + q) * c;
  }
  TensorShape InShape() const { return TensorShape({n, in[0], in[1], in[2], c}); }
  TensorShape OutShape() const { return TensorShape({n, out[0], out[1], out[2], c}); }
};

// The window (window.h's ParseWindow: data_format, strides, padding) and
// ksize, from the node's attributes.
Status ParseWindowAttrs(OpKernelConstruction* c, Window3D* win, int64_t ksize[3]) {
  TF_RETURN_IF_ERROR(::pdk_kernels::ParseWindow<3>(c, /*allow_explicit=*/false, win));
  return ::pdk_kernels::ParseSpatial<3>(c, "ksize", DataFormat::kChannelsLast, ksize,
                                        /*optional=*/false);
}

// ksize, strides, padding and data_format of one node.
class Pool3DBase : public OpKernel {
 public:
  explicit Pool3DBase(OpKernelConstruction* c) : OpKernel(c) {
    // TensorFlow's Pooling3DOp, MaxPooling3dGradOp and AvgPooling3dGradOp
    // constructors (pooling_ops_3d.cc) refuse pooling across images or
    // channels as Unimplemented, before anything else about the window.
    std::vector<int64_t> ksize, strides;
    OP_REQUIRES_OK(c, c->GetAttr("ksize", &ksize));
    OP_REQUIRES_OK(c, c->GetAttr("strides", &strides));
    if (ksize.size() == 5 && strides.size() == 5) {
      OP_REQUIRES(c, ksize[0] == 1 && strides[0] == 1,
                  errors::Unimplemented(
                      "Pooling is not yet supported on the batch dimension. (ksize ",
                      ListString(ksize), ", strides ", ListString(strides), ")"));
      OP_REQUIRES(c, ksize[4] == 1 && strides[4] == 1,
                  errors::Unimplemented(
                      "Pooling is not yet supported on the depth dimension. (ksize ",
                      ListString(ksize), ", strides ", ListString(strides), ")"));
    }
    OP_REQUIRES_OK(c, ParseWindowAttrs(c, &win_, ksize_));
  }

 protected:
  // The geometry of pooling an input of `shape` (`name` in messages).
  Status MakeGeom(const char* op, const char* name, const TensorShape& shape, Geom3* geom) const {
    TF_RETURN_IF_ERROR(::pdk::CheckRank(op, name, shape.pdk_shape(), 5));
    Geom3 g;
    g.n = shape.dim_size(0);
    g.c = shape.dim_size(4);
    const char* dims[3] = {"planes", "rows", "cols"};
    for (int i = 0; i < 3; ++i) {
      g.in[i] = shape.dim_size(i + 1);
      g.k[i] = ksize_[i];
      g.s[i] = win_.stride[i];
      TF_RETURN_IF_ERROR(
          WindowedOutputSize(op, dims[i], g.in[i], g.k[i], win_, i, &g.out[i], &g.pad[i]));
    }
    *geom = g;
    return OkStatus();
  }

  static Status CheckPooled(const char* op, const char* name, const TensorShape& s,
                            const Geom3& g) {
    const TensorShape want = g.OutShape();
    if (s != want)
      return errors::InvalidArgument("Expected ", name, " shape to be ", want, ", but got ", s,
                                     " (", op, ": the pooled shape of orig_input ", g.InShape(),
                                     ")");
    return OkStatus();
  }

  Window3D win_;
  int64_t ksize_[3] = {1, 1, 1};
};

template <class T, bool kMax>
class Pool3DOp : public Pool3DBase {
 public:
  explicit Pool3DOp(OpKernelConstruction* c) : Pool3DBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Geom3 g;
    OP_REQUIRES_OK(ctx, MakeGeom(type_string().c_str(), "input", x.shape(), &g));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, g.OutShape(), &y));
    if (y->NumElements() == 0) return;
    const T* in = x.flat<T>().data();
    T* out = y->flat<T>().data();
    const int64_t rows = g.n * g.out[0] * g.out[1], c = g.c;
    const double cost = double(g.out[2] * c * g.k[0] * g.k[1] * g.k[2]);
    // TensorFlow's CuboidMaxPooling (eigen_pooling.h) reduces from -inf over
    // the whole window, its padded positions holding lowest(): a clipped
    // window of -inf values gives lowest().
    const T init_full = kMax ? -std::numeric_limits<T>::infinity() : T(0);
    const T init_clipped = kMax ? std::numeric_limits<T>::lowest() : T(0);
    // Output row (n, p, r) at a time, the row its own accumulator (in L1):
    // each input row (z, y) of the windows is read once, and every output
    // element still takes its window's positions in (z, y, x) order.
    pdk_compute::ParallelFor(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), rows,
        Eigen::TensorOpCost(cost * sizeof(T), g.out[2] * c * sizeof(T), cost),
        [&](Index first, Index last) {
          for (Index row = first; row < last; ++row) {
            const int64_t b = row / (g.out[0] * g.out[1]);
            const int64_t p = (row / g.out[1]) % g.out[0], r = row % g.out[1];
            int64_t z0, z1, y0, y1;
            g.Range(0, p, &z0, &z1);
            g.Range(1, r, &y0, &y1);
            T* orow = out + g.OutOffset(b, p, r, 0);
            for (int64_t q = 0; q < g.out[2]; ++q) {
              int64_t x0, x1;
              g.Range(2, q, &x0, &x1);
              const bool clipped = (z1 - z0) * (y1 - y0) * (x1 - x0) != g.k[0] * g.k[1] * g.k[2];
              std::fill(orow + q * c, orow + (q + 1) * c, clipped ? init_clipped : init_full);
            }
            for (int64_t z = z0; z < z1; ++z)
              for (int64_t yy = y0; yy < y1; ++yy) {
                const T* irow = in + g.InOffset(b, z, yy, 0);
                for (int64_t q = 0; q < g.out[2]; ++q) {
                  int64_t x0, x1;
                  g.Range(2, q, &x0, &x1);
                  T* o = orow + q * c;
                  for (int64_t xx = x0; xx < x1; ++xx) {
                    const T* v = irow + xx * c;
                    for (int64_t ch = 0; ch < c; ++ch) {
                      // Values, not memory, on both sides of the select
                      // (GCC vectorizes no select of two loads). A NaN
                      // never replaces the running maximum.
                      const T a = o[ch], e = v[ch];
                      if constexpr (kMax)
                        o[ch] = e > a ? e : a;
                      else
                        o[ch] = a + e;
                    }
                  }
                }
              }
            if constexpr (!kMax) {
              for (int64_t q = 0; q < g.out[2]; ++q) {
                int64_t x0, x1;
                g.Range(2, q, &x0, &x1);
                const T count = T(static_cast<float>((z1 - z0) * (y1 - y0) * (x1 - x0)));
                T* o = orow + q * c;
                for (int64_t ch = 0; ch < c; ++ch) o[ch] = o[ch] / count;
              }
            }
          }
        });
  }
};

// The output windows that contain each input index along one dimension:
// input index i lies in the windows of outputs [lo[i], hi[i])
// (window.h's CoveringOutputs, tabulated once per gradient).
struct Covering {
  std::vector<int64_t> lo, hi;
  Covering(const Geom3& g, int dim) : lo(g.in[dim]), hi(g.in[dim]) {
    for (int64_t i = 0; i < g.in[dim]; ++i)
      ::pdk_kernels::CoveringOutputs(i, g.pad[dim], g.k[dim], g.s[dim], g.out[dim], &lo[i],
                                     &hi[i]);
  }
};

// The gradients as a gather: every element of din [N,D,H,W,C] is the sum,
// from T(0), of the contributions of the windows that contain it, taken in
// window order (p, r, q): the additions of a window-by-window scatter into a
// zeroed din, in its order (PDK's earlier kernel; the same bits). TensorFlow's
// CPU kernels sum in another order where windows overlap (differences of an
// ulp or so, docs/ops.md). Input rows (n, z, y) split over the pool; a
// row is zeroed, then for each (p, r) covering it, in order, every position x
// takes its windows q in order: per element, (p, r, q) order. add(acc, o, i,
// c, size) adds one window's contribution to the c channels at acc: o and i
// the offsets of the window's output and of the input position, size the
// window's in-bounds position count.
template <class T, class Add>
void GatherWindows(const Eigen::ThreadPoolDevice& dev, const Geom3& g, T* din, const Add& add) {
  const Covering cz(g, 0), cy(g, 1), cx(g, 2);
  const int64_t rows = g.n * g.in[0] * g.in[1], c = g.c;
  double windows = 1;  // windows per input element, about
  for (int d = 0; d < 3; ++d) windows *= std::max(1.0, double(g.k[d]) / double(g.s[d]));
  const double cost = double(g.in[2] * c) * windows;
  pdk_compute::ParallelFor(
      dev, rows, Eigen::TensorOpCost(cost * 3 * sizeof(T), g.in[2] * c * sizeof(T), cost * 3),
      [&](Index first, Index last) {
        for (Index row = first; row < last; ++row) {
          const int64_t b = row / (g.in[0] * g.in[1]);
          const int64_t z = (row / g.in[1]) % g.in[0], yy = row % g.in[1];
          const int64_t i0 = g.InOffset(b, z, yy, 0);
          T* drow = din + i0;
          std::fill(drow, drow + g.in[2] * c, T(0));
          for (int64_t p = cz.lo[z]; p < cz.hi[z]; ++p)
            for (int64_t r = cy.lo[yy]; r < cy.hi[yy]; ++r) {
              int64_t z0, z1, y0, y1;
              g.Range(0, p, &z0, &z1);
              g.Range(1, r, &y0, &y1);
              const int64_t o0 = g.OutOffset(b, p, r, 0), zy = (z1 - z0) * (y1 - y0);
              for (int64_t xx = 0; xx < g.in[2]; ++xx)
                for (int64_t q = cx.lo[xx]; q < cx.hi[xx]; ++q) {
                  int64_t x0, x1;
                  g.Range(2, q, &x0, &x1);
                  add(drow + xx * c, o0 + q * c, i0 + xx * c, c, zy * (x1 - x0));
                }
            }
        }
      });
}

template <class T>
class MaxPool3DGradOp : public Pool3DBase {
 public:
  explicit MaxPool3DGradOp(OpKernelConstruction* c) : Pool3DBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    const char* op = type_string().c_str();
    Geom3 g;
    OP_REQUIRES_OK(ctx, MakeGeom(op, "orig_input", x.shape(), &g));
    OP_REQUIRES_OK(ctx, CheckPooled(op, "orig_output", y.shape(), g));
    OP_REQUIRES_OK(ctx, CheckPooled(op, "grad", dy.shape(), g));
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, g.InShape(), &dx));
    if (dx->NumElements() == 0) return;
    const T* in = x.flat<T>().data();
    const T* out = y.flat<T>().data();
    const T* grad = dy.flat<T>().data();
    T* din = dx->flat<T>().data();
    const T tol = T(1e-5f);
    GatherWindows(ctx->eigen_device<Eigen::ThreadPoolDevice>(), g, din,
                  [in, out, grad, tol](T* acc, int64_t o, int64_t i, int64_t c, int64_t) {
                    for (int64_t ch = 0; ch < c; ++ch) {
                      // acc + (match ? grad : 0): every operand loaded
                      // unconditionally, so vectorized. Adding +0 where no
                      // match keeps acc's bits: acc, a sum from +0, is never -0.
                      const T diff = in[i + ch] - out[o + ch], gv = grad[o + ch];
                      acc[ch] += Eigen::numext::abs(diff) < tol ? gv : T(0);
                    }
                  });
  }
};

template <class T>
class AvgPool3DGradOp : public Pool3DBase {
 public:
  explicit AvgPool3DGradOp(OpKernelConstruction* c) : Pool3DBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    const char* op = type_string().c_str();
    OP_REQUIRES(ctx, shape_t.dims() == 1 && shape_t.NumElements() == 5,
                errors::InvalidArgument("tensor_in must be 1-dimensional and 5 elements (", op,
                                        ": orig_input_shape of shape ", shape_t.shape(), ")"));
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, ::pdk_kernels::ReadIntVector(op, "orig_input_shape", shape_t, &dims));
    const TensorShape in_shape(dims);
    OP_REQUIRES_OK(ctx, ::pdk::CheckShape(op, "output", 0, in_shape.pdk_shape()));
    Geom3 g;
    OP_REQUIRES_OK(ctx, MakeGeom(op, "orig_input_shape", in_shape, &g));
    OP_REQUIRES_OK(ctx, CheckPooled(op, "grad", dy.shape(), g));
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in_shape, &dx));
    if (dx->NumElements() == 0) return;
    const T* grad = dy.flat<T>().data();
    T* din = dx->flat<T>().data();
    GatherWindows(ctx->eigen_device<Eigen::ThreadPoolDevice>(), g, din,
                  [grad](T* acc, int64_t o, int64_t, int64_t c, int64_t size) {
                    // TensorFlow's scale: T(1.0f / size), the size counted in float.
                    const T scale = T(1.0f / static_cast<float>(size));
                    for (int64_t ch = 0; ch < c; ++ch) {
                      const T v = grad[o + ch] * scale;
                      acc[ch] += v;
                    }
                  });
  }
};

#define PDK_REGISTER_POOLING_3D_(T)                                                         \
  REGISTER_KERNEL_BUILDER(Name("MaxPool3D").Device(DEVICE_PDK).TypeConstraint<T>("T"),      \
                          Pool3DOp<T, true>);                                               \
  REGISTER_KERNEL_BUILDER(Name("AvgPool3D").Device(DEVICE_PDK).TypeConstraint<T>("T"),      \
                          Pool3DOp<T, false>);                                              \
  REGISTER_KERNEL_BUILDER(Name("MaxPool3DGrad")                                             \
                              .Device(DEVICE_PDK)                                           \
                              .TypeConstraint<T>("T")                                       \
                              .TypeConstraint<T>("TInput"),                                 \
                          MaxPool3DGradOp<T>);                                              \
  REGISTER_KERNEL_BUILDER(Name("AvgPool3DGrad")                                             \
                              .Device(DEVICE_PDK)                                           \
                              .TypeConstraint<T>("T")                                       \
                              .HostMemory("orig_input_shape"),                              \
                          AvgPool3DGradOp<T>);
PDK_REGISTER_POOLING_3D_(float)
PDK_REGISTER_POOLING_3D_(Eigen::bfloat16)
#undef PDK_REGISTER_POOLING_3D_

}  // namespace
}  // namespace tensorflow
