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
#include <algorithm>
#include <cmath>
#include <string>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

using Index = Eigen::Index;
template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using StridedVec = Eigen::Map<const Vec<T>, 0, Eigen::InnerStride<>>;

// Rough cycles per class of one row: max, subtract, exp, sums, divide.
constexpr double kCyclesPerElement = 30;

Eigen::TensorOpCost RowCost(int64_t classes, size_t elem_bytes) {
  const double c = static_cast<double>(classes);
  return Eigen::TensorOpCost(2 * c * elem_bytes, c * elem_bytes, c * kCyclesPerElement);
}

// ------------------------------------------------- SoftmaxCrossEntropyWithLogits

// Where row r, column j of a (possibly broadcast) rank <= 2 operand lives:
// data[r * row_stride + j * col_stride]; a stride is 0 along a broadcast dim.
struct Strides {
  int64_t row, col;
};
Strides BroadcastStrides(const pdk::Shape& s) {
  const int64_t d0 = s.rank() == 2 ? s[0] : 1;
  const int64_t d1 = s.rank() >= 1 ? s[s.rank() - 1] : 1;
  return {d0 == 1 ? 0 : d1, d1 == 1 ? 0 : 1};
}

template <class T>
class SoftmaxXentOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor logits, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor labels, ctx.input(1));
    const pdk::Shape xs = logits.shape(), ls = labels.shape();
    pdk::Shape shape = xs;
    if (xs != ls) {
      PDK_ASSIGN_OR_RETURN(shape,
                           pdk::BroadcastShapes(ctx.op(), "features", xs, "labels", ls));
    }
    if (shape.rank() != 2)
      return pdk::InvalidArgument(ctx.op(),
                                  ": features and labels must be rank 2, or broadcast to rank "
                                  "2, got features.shape ",
                                  xs, " and labels.shape ", ls);
    const int64_t batch = shape[0], classes = shape[1];

    PDK_ASSIGN_OR_RETURN(pdk::Tensor loss, ctx.allocate_output(0, pdk::Shape{batch}));
    // backprop is written before the loss is read, so it never aliases features.
    PDK_ASSIGN_OR_RETURN(pdk::Tensor backprop, ctx.allocate_output(1, shape));
    if (batch == 0) return pdk::Status::OK();
    T* loss_p = loss.data<T>();
    if (classes == 0) {  // an empty sum: zero loss, empty backprop
      std::fill(loss_p, loss_p + batch, T(0));
      return pdk::Status::OK();
    }

    const Strides sx = BroadcastStrides(xs), sl = BroadcastStrides(ls);
    if constexpr (pdk_compute::kIsHalfLike<T>) {  // computed in float32, rounded once
      PDK_ASSIGN_OR_RETURN(pdk::Tensor xf, pdk_compute::WidenToFloat<T>(ctx, logits));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor lf, pdk_compute::WidenToFloat<T>(ctx, labels));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor loss_f, ctx.allocate_temp(TF_FLOAT, pdk::Shape{batch}));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor bp_f, ctx.allocate_temp(TF_FLOAT, shape));
      Run<float>(ctx, xf.data<float>(), sx, lf.data<float>(), sl, batch, classes,
                 loss_f.data<float>(), bp_f.data<float>());
      const auto& dev = pdk_compute::Device(ctx);
      pdk_compute::Convert<float, T>(dev, loss_f.data<float>(), loss_p, batch);
      pdk_compute::Convert<float, T>(dev, bp_f.data<float>(), backprop.data<T>(), batch * classes);
    } else {
      Run<T>(ctx, logits.data<T>(), sx, labels.data<T>(), sl, batch, classes, loss_p,
             backprop.data<T>());
    }
    return pdk::Status::OK();
  }

 private:
  template <class C>
  static void Run(const pdk::Context& ctx, const C* x, Strides sx, const C* l, Strides sl,
                  int64_t batch, int64_t classes, C* loss_p, C* bp) {
    const bool dense = sx.row == classes && sx.col == 1 && sl.row == classes && sl.col == 1;
    pdk_compute::Device(ctx).parallelFor(
        batch, RowCost(classes, sizeof(C)), [&](Index first, Index last) {
          for (Index r = first; r < last; ++r) {
            C* y = bp + r * classes;
            if (dense) {
              loss_p[r] = Row(Eigen::Map<const Vec<C>>(x + r * classes, classes),
                              Eigen::Map<const Vec<C>>(l + r * classes, classes), y, classes);
            } else {
              loss_p[r] =
                  Row(StridedVec<C>(x + r * sx.row, classes, Eigen::InnerStride<>(sx.col)),
                      StridedVec<C>(l + r * sl.row, classes, Eigen::InnerStride<>(sl.col)), y,
                      classes);
            }
          }
        });
  }

  // One row: writes backprop p - l to y and returns sum_j l_j (log Z - s_j).
  template <class X, class L, class C>
  static C Row(const X& x, const L& l, C* y_data, int64_t classes) {
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
std::string SummarizeLabels(const Label* v, int64_t n) {
  constexpr int64_t kMax = 100;
  std::string s;
  for (int64_t i = 0; i < std::min(n, kMax); ++i) {
    if (i) s += ' ';
    s += std::to_string(v[i]);
  }
  if (n > kMax) s += "...";
  return s;
}

template <class T, class Label>
class SparseSoftmaxXentOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor logits, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor labels, ctx.input(1));
    const pdk::Shape xs = logits.shape(), ls = labels.shape();
    PDK_RETURN_IF_ERROR(pdk::CheckRank(ctx.op(), "features", xs, 2));
    PDK_RETURN_IF_ERROR(pdk::CheckRank(ctx.op(), "labels", ls, 1));
    PDK_RETURN_IF_ERROR(pdk::CheckDimsEqual(ctx.op(), "features", 0, xs[0], "labels", 0, ls[0]));
    const int64_t batch = xs[0], classes = xs[1];
    if (classes == 0)
      return pdk::InvalidArgument(ctx.op(), ": must have at least one class, got features.shape ",
                                  xs);

    // Validate every label before writing anything (TF's CPU kernel reports
    // the smallest label if it is negative, else the largest).
    const Label* k = labels.data<Label>();
    if (batch > 0) {
      const auto [lo, hi] = std::minmax_element(k, k + batch);
      if (*lo < 0 || *hi >= classes) {
        const Label bad = *lo < 0 ? *lo : *hi;
        return pdk::InvalidArgument(ctx.op(), ": received a label value of ", bad,
                                    " which is outside the valid range of [0, ", classes,
                                    ").  Label values: ", SummarizeLabels(k, batch));
      }
    }

    PDK_ASSIGN_OR_RETURN(pdk::Tensor loss, ctx.allocate_output(0, pdk::Shape{batch}));
    // Safe in place: each row reads its logits (and x_k) before overwriting them.
    PDK_ASSIGN_OR_RETURN(pdk::Tensor backprop, ctx.forward_or_allocate_output({0}, 1, xs));
    if (batch == 0) return pdk::Status::OK();

    if constexpr (pdk_compute::kIsHalfLike<T>) {  // computed in float32, rounded once
      PDK_ASSIGN_OR_RETURN(pdk::Tensor xf, pdk_compute::WidenToFloat<T>(ctx, logits));
      PDK_ASSIGN_OR_RETURN(pdk::Tensor loss_f, ctx.allocate_temp(TF_FLOAT, pdk::Shape{batch}));
      Run<float>(ctx, xf.data<float>(), k, batch, classes, loss_f.data<float>(),
                 xf.data<float>());
      const auto& dev = pdk_compute::Device(ctx);
      pdk_compute::Convert<float, T>(dev, loss_f.data<float>(), loss.data<T>(), batch);
      pdk_compute::Convert<float, T>(dev, xf.data<float>(), backprop.data<T>(), batch * classes);
    } else {
      Run<T>(ctx, logits.data<T>(), k, batch, classes, loss.data<T>(), backprop.data<T>());
    }
    return pdk::Status::OK();
  }

 private:
  // backprop may alias x: each row reads its logits (and x_k) before overwriting them.
  template <class C>
  static void Run(const pdk::Context& ctx, const C* x_all, const Label* k, int64_t batch,
                  int64_t classes, C* loss_p, C* bp) {
    pdk_compute::Device(ctx).parallelFor(
        batch, RowCost(classes, sizeof(C)), [&](Index first, Index last) {
          for (Index r = first; r < last; ++r) {
            Eigen::Map<const Vec<C>> x(x_all + r * classes, classes);
            Eigen::Map<Vec<C>> y(bp + r * classes, classes);
            const int64_t label = static_cast<int64_t>(k[r]);
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

}  // namespace

PDK_REGISTER_KERNELS(NnXent, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<SoftmaxXentOp<T>>("SoftmaxCrossEntropyWithLogits").Type("T", t));
    pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto lt) {
      using Label = typename decltype(lt)::type;
      r.Add(pdk::KernelDef<SparseSoftmaxXentOp<T, Label>>("SparseSoftmaxCrossEntropyWithLogits")
                .Type("T", t)
                .Type("Tlabels", lt));
    });
  });
}

}  // namespace pdk_kernels
