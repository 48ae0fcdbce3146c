// Softmax cross-entropy losses with their gradients (tensorflow/core/ops/nn_ops.cc).
//
// For a row x of logits with C classes, shifted by m = max_j x_j for
// stability (log-sum-exp trick), let
//   s_j = x_j - m,  Z = sum_j exp(s_j),  p_j = exp(s_j) / Z = softmax(x)_j.
//
// SoftmaxCrossEntropyWithLogits(features x, labels l):
//   loss     = -sum_j l_j * log p_j = sum_j l_j * (log Z - s_j)
//   backprop = d loss / d x = p - l          (for labels summing to 1)
// features [B, C] and labels [B, C] may broadcast against each other (NumPy
// rules, as TensorFlow's BCast) to a rank-2 shape [B, C].
//
// SparseSoftmaxCrossEntropyWithLogits(features x [B, C], labels k [B]):
//   loss     = -log p_k = log Z - s_k
//   backprop = softmax(x) - onehot(k)
// Labels outside [0, C) are InvalidArgument, as in TensorFlow's CPU kernel
// (its GPU kernel returns NaN instead); C must be at least 1.
//
// T in {float32, float64, float16, bfloat16}; the 16-bit floats are widened to
// float32, computed there and rounded once.
//
// backprop is an output of the forward op, so the gradient op of both losses
// only scales it: training runs exactly these kernels every step. The batch
// rows are split over the device pool; each row is one max pass, one exp
// pass (stored into backprop), one loss pass and one scale pass, in cache.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "compute/widen.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;
template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using StridedVec = Eigen::Map<const Vec<T>, 0, Eigen::InnerStride<>>;

// Rough cycles per class of one row: max, subtract, exp, sums, divide.
constexpr double kCyclesPerElement = 30;

Eigen::TensorOpCost RowCost(int64 classes, size_t elem_bytes) {
  const double c = static_cast<double>(classes);
  return Eigen::TensorOpCost(2 * c * elem_bytes, c * elem_bytes, c * kCyclesPerElement);
}

// ------------------------------------------------- SoftmaxCrossEntropyWithLogits

// Where row r, column j of a (possibly broadcast) rank <= 2 operand lives:
// data[r * row_stride + j * col_stride]; a stride is 0 along a broadcast dim.
struct Strides {
  int64 row, col;
};
Strides BroadcastStrides(const TensorShape& s) {
  const int64 d0 = s.dims() == 2 ? s.dim_size(0) : 1;
  const int64 d1 = s.dims() >= 1 ? s.dim_size(s.dims() - 1) : 1;
  return {d0 == 1 ? 0 : d1, d1 == 1 ? 0 : 1};
}

template <class T>
class SoftmaxXentOp : public OpKernel {
 public:
  explicit SoftmaxXentOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    const TensorShape& xs = logits.shape();
    const TensorShape& ls = labels.shape();
    const char* op = type_string().c_str();
    TensorShape shape = xs;
    if (xs != ls) {
      ::pdk::StatusOr<::pdk::Shape> bcast =
          ::pdk::BroadcastShapes(op, "features", xs.pdk_shape(), "labels", ls.pdk_shape());
      OP_REQUIRES_OK(ctx, bcast.status());
      shape = TensorShape(bcast.value());
    }
    OP_REQUIRES(ctx, shape.dims() == 2,
                errors::InvalidArgument(op,
                                        ": features and labels must be rank 2, or broadcast to "
                                        "rank 2, got features.shape ",
                                        xs, " and labels.shape ", ls));
    const int64 batch = shape.dim_size(0), classes = shape.dim_size(1);

    Tensor* loss = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    // backprop is written before the loss is read, so it never aliases features.
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, shape, &backprop));
    if (batch == 0) return;
    T* loss_p = loss->flat<T>().data();
    if (classes == 0) {  // an empty sum: zero loss, empty backprop
      std::fill(loss_p, loss_p + batch, T(0));
      return;
    }

    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    const Strides sx = BroadcastStrides(xs), sl = BroadcastStrides(ls);
    if constexpr (pdk_compute::kIsHalfLike<T>) {  // computed in float32, rounded once
      Tensor xf, lf, loss_f, bp_f;
      OP_REQUIRES_OK(ctx, pdk_compute::WidenToFloat<T>(ctx, logits, &xf));
      OP_REQUIRES_OK(ctx, pdk_compute::WidenToFloat<T>(ctx, labels, &lf));
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({batch}), &loss_f));
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, shape, &bp_f));
      Run<float>(dev, xf.flat<float>().data(), sx, lf.flat<float>().data(), sl, batch, classes,
                 loss_f.flat<float>().data(), bp_f.flat<float>().data());
      pdk_compute::Convert<float, T>(dev, loss_f.flat<float>().data(), loss_p, batch);
      pdk_compute::Convert<float, T>(dev, bp_f.flat<float>().data(), backprop->flat<T>().data(),
                                     batch * classes);
    } else {
      Run<T>(dev, logits.flat<T>().data(), sx, labels.flat<T>().data(), sl, batch, classes,
             loss_p, backprop->flat<T>().data());
    }
  }

 private:
  template <class C>
  static void Run(const Eigen::ThreadPoolDevice& dev, const C* x, Strides sx, const C* l,
                  Strides sl, int64 batch, int64 classes, C* loss_p, C* bp) {
    const bool dense = sx.row == classes && sx.col == 1 && sl.row == classes && sl.col == 1;
    pdk_compute::ParallelFor(dev, batch, RowCost(classes, sizeof(C)), [&](Index first, Index last) {
      for (Index r = first; r < last; ++r) {
        C* y = bp + r * classes;
        if (dense) {
          loss_p[r] = Row(Eigen::Map<const Vec<C>>(x + r * classes, classes),
                          Eigen::Map<const Vec<C>>(l + r * classes, classes), y, classes);
        } else {
          loss_p[r] = Row(StridedVec<C>(x + r * sx.row, classes, Eigen::InnerStride<>(sx.col)),
                          StridedVec<C>(l + r * sl.row, classes, Eigen::InnerStride<>(sl.col)),
                          y, classes);
        }
      }
    });
  }

  // One row: writes backprop p - l to y and returns sum_j l_j (log Z - s_j).
  template <class X, class L, class C>
  static C Row(const X& x, const L& l, C* y_data, int64 classes) {
    Eigen::Map<Vec<C>> y(y_data, classes);
    const C m = x.maxCoeff();
    y = (x - m).exp();  // exp(s_j)
    const C z = y.sum();
    const C loss = (l * (std::log(z) - (x - m))).sum();
    y = y / z - l;
    return loss;
  }
};

// ------------------------------------------- SparseSoftmaxCrossEntropyWithLogits

template <class Label>
std::string SummarizeLabels(const Label* v, int64 n) {
  constexpr int64 kMax = 100;
  std::string s;
  for (int64 i = 0; i < std::min(n, kMax); ++i) {
    if (i) s += ' ';
    s += std::to_string(v[i]);
  }
  if (n > kMax) s += "...";
  return s;
}

template <class T, class Label>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  explicit SparseSoftmaxXentOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    const TensorShape& xs = logits.shape();
    const TensorShape& ls = labels.shape();
    const char* op = type_string().c_str();
    OP_REQUIRES_OK(ctx, ::pdk::CheckRank(op, "features", xs.pdk_shape(), 2));
    OP_REQUIRES_OK(ctx, ::pdk::CheckRank(op, "labels", ls.pdk_shape(), 1));
    OP_REQUIRES_OK(ctx, ::pdk::CheckDimsEqual(op, "features", 0, xs.dim_size(0), "labels", 0,
                                              ls.dim_size(0)));
    const int64 batch = xs.dim_size(0), classes = xs.dim_size(1);
    OP_REQUIRES(ctx, classes != 0,
                errors::InvalidArgument(op, ": must have at least one class, got features.shape ",
                                        xs));

    // Validate every label before writing anything (TF's CPU kernel reports
    // the smallest label if it is negative, else the largest).
    const Label* k = labels.flat<Label>().data();
    if (batch > 0) {
      const auto [lo, hi] = std::minmax_element(k, k + batch);
      OP_REQUIRES(ctx, *lo >= 0 && *hi < classes,
                  errors::InvalidArgument(op, ": received a label value of ",
                                          *lo < 0 ? *lo : *hi,
                                          " which is outside the valid range of [0, ", classes,
                                          ").  Label values: ", SummarizeLabels(k, batch)));
    }

    Tensor* loss = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    // Safe in place: each row reads its logits (and x_k) before overwriting them.
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 1, xs, &backprop));
    if (batch == 0) return;

    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    if constexpr (pdk_compute::kIsHalfLike<T>) {  // computed in float32, rounded once
      Tensor xf, loss_f;
      OP_REQUIRES_OK(ctx, pdk_compute::WidenToFloat<T>(ctx, logits, &xf));
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({batch}), &loss_f));
      float* xf_p = xf.flat<float>().data();
      Run<float>(dev, xf_p, k, batch, classes, loss_f.flat<float>().data(), xf_p);
      pdk_compute::Convert<float, T>(dev, loss_f.flat<float>().data(), loss->flat<T>().data(),
                                     batch);
      pdk_compute::Convert<float, T>(dev, xf_p, backprop->flat<T>().data(), batch * classes);
    } else {
      Run<T>(dev, logits.flat<T>().data(), k, batch, classes, loss->flat<T>().data(),
             backprop->flat<T>().data());
    }
  }

 private:
  // backprop may alias x: each row reads its logits (and x_k) before overwriting them.
  template <class C>
  static void Run(const Eigen::ThreadPoolDevice& dev, const C* x_all, const Label* k,
                  int64 batch, int64 classes, C* loss_p, C* bp) {
    pdk_compute::ParallelFor(dev, batch, RowCost(classes, sizeof(C)), [&](Index first, Index last) {
      for (Index r = first; r < last; ++r) {
        Eigen::Map<const Vec<C>> x(x_all + r * classes, classes);
        Eigen::Map<Vec<C>> y(bp + r * classes, classes);
        const int64 label = static_cast<int64>(k[r]);
        const C m = x.maxCoeff();
        const C s_label = x[label] - m;
        y = (x - m).exp();  // exp(s_j); may overwrite x
        const C z = y.sum();
        loss_p[r] = std::log(z) - s_label;  // -log p_k = log Z - s_k
        y /= z;                              // p = softmax(x)
        y[label] -= C(1);                    // p - onehot(k)
      }
    });
  }
};

#define PDK_REGISTER_SPARSE_XENT_(T, Label)                           \
  REGISTER_KERNEL_BUILDER(Name("SparseSoftmaxCrossEntropyWithLogits") \
                              .Device(DEVICE_PDK)                     \
                              .TypeConstraint<T>("T")                 \
                              .TypeConstraint<Label>("Tlabels"),      \
                          SparseSoftmaxXentOp<T, Label>);
#define PDK_REGISTER_XENT_(T)                                         \
  REGISTER_KERNEL_BUILDER(Name("SoftmaxCrossEntropyWithLogits")       \
                              .Device(DEVICE_PDK)                     \
                              .TypeConstraint<T>("T"),                \
                          SoftmaxXentOp<T>);                          \
  PDK_REGISTER_SPARSE_XENT_(T, int32)                                 \
  PDK_REGISTER_SPARSE_XENT_(T, int64)
PDK_REGISTER_XENT_(float)
PDK_REGISTER_XENT_(double)
PDK_REGISTER_XENT_(Eigen::half)
PDK_REGISTER_XENT_(Eigen::bfloat16)
#undef PDK_REGISTER_XENT_
#undef PDK_REGISTER_SPARSE_XENT_

}  // namespace
}  // namespace tensorflow
