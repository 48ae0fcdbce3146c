// Softmax and LogSoftmax over the last axis (tensorflow/core/ops/nn_ops.cc).
//
// For each row x of the logits (all dims but the last are batch dims), with
// m = max_j x_j subtracted first so that exp never overflows:
//
//   Softmax(x)_i    = exp(x_i - m) / sum_j exp(x_j - m)
//   LogSoftmax(x)_i = (x_i - m) - log(sum_j exp(x_j - m))
//
// Both are mathematically unchanged by the shift; this is what TensorFlow's
// CPU kernel (softmax_op_functor.h) computes. logits must be at least rank 1.
// T in {float32, float64, float16, bfloat16}; the 16-bit floats are computed
// in float32 per row and rounded once.
//
// Rows are independent: the pool splits them. float32 Softmax pieces of rows
// run on oneDNN's softmax primitive (compute/dnnl_softmax.h: its kernel for
// the CPU it runs on, AVX-512 where there is one; a few ulps from the Eigen
// path). LogSoftmax stays on Eigen: oneDNN 2.6's log-softmax is off by up to
// 3e-6 absolute (log(1) = 1.4e-6 for a one-class row), against TensorFlow's
// CPU kernel. The other dtypes, and float32 if oneDNN refuses, process each
// row while it is in cache (max, exp+sum, scale) with vectorized Eigen ops.
// The output may reuse the input buffer (every pass is elementwise per row).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cmath>
#include <limits>
#include <type_traits>

#include "compute/dnnl_softmax.h"
#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using Index = Eigen::Index;
template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

// Rough cycles per element of a row: compare, subtract, exp, add, multiply.
constexpr double kCyclesPerElement = 24;

template <class T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction* c) : OpKernel(c) {}

  // y = softmax(x) (or log-softmax) of one row, in C (T, or float for the
  // 16-bit floats); y may alias x.
  template <class X, class C>
  static void Row(const X& x_in, C* y_data, int64 classes) {
    Eigen::Map<Vec<C>> y(y_data, classes);
    const C m = x_in.maxCoeff();
    if constexpr (kLog) {
      const C log_sum = std::log((x_in - m).exp().sum());
      y = (x_in - m) - log_sum;
    } else {
      y = (x_in - m).exp();
      y *= C(1) / y.sum();
    }
  }

  // After oneDNN: a row with an inf or NaN logit comes out all NaN from
  // TensorFlow's Eigen kernel (its CPU kernel with oneDNN off, the default on
  // AVX2-only CPUs: max = inf or NaN poisons every exp, or a NaN poisons the
  // sum), while oneDNN leaves NaN only at those logits and 0 elsewhere. Such
  // a row, and only such a row, has a NaN in oneDNN's output (a -inf logit
  // alone gives 0 in both), so rows with a NaN are set all NaN. The output is
  // in cache; x * 0 is NaN exactly for a NaN or inf x, so the whole piece is
  // checked with one vectorized sum (isNaN().any() is a scalar loop).
  static void MatchEigenOnNonFiniteRows(float* y, int64 rows, int64 classes) {
    auto has_nan = [](const float* p, int64 n) {
      return std::isnan((Eigen::Map<const Vec<float>>(p, n) * 0.0f).sum());
    };
    if (!has_nan(y, rows * classes)) return;
    for (int64 r = 0; r < rows; ++r)
      if (has_nan(y + r * classes, classes))
        Eigen::Map<Vec<float>>(y + r * classes, classes)
            .setConstant(std::numeric_limits<float>::quiet_NaN());
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const TensorShape& shape = logits.shape();
    OP_REQUIRES_OK(ctx, ::pdk::CheckRankAtLeast(type_string().c_str(), "logits",
                                                 shape.pdk_shape(), 1));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, shape, &out));
    const int64 classes = shape.dim_size(shape.dims() - 1);
    if (logits.NumElements() == 0) return;
    const int64 rows = logits.NumElements() / classes;

    const T* in = static_cast<const T*>(logits.data());
    T* o = static_cast<T*>(out->data());
    const Eigen::TensorOpCost row_cost(classes * sizeof(T), classes * sizeof(T),
                                       classes * kCyclesPerElement);
    pdk_compute::ParallelFor(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), rows, row_cost, [&](Index first, Index last) {
          if constexpr (pdk_compute::kIsHalfLike<T>) {
            // 16-bit floats: each row is widened to float32, computed there, and
            // rounded once (TF's CPU kernel computes in T; this is as or more exact).
            Vec<float> buf(classes);
            for (Index r = first; r < last; ++r) {
              buf = Eigen::Map<const Vec<T>>(in + r * classes, classes).template cast<float>();
              Row(buf, buf.data(), classes);
              Eigen::Map<Vec<T>>(o + r * classes, classes) = buf.template cast<T>();
            }
          } else {
            if constexpr (std::is_same_v<T, float> && !kLog) {
              if (pdk_compute::SoftmaxRowsDnnl(last - first, classes, in + first * classes,
                                               o + first * classes)) {
                MatchEigenOnNonFiniteRows(o + first * classes, last - first, classes);
                return;
              }
            }
            for (Index r = first; r < last; ++r)
              Row(Eigen::Map<const Vec<T>>(in + r * classes, classes), o + r * classes, classes);
          }
        });
  }
};

#define PDK_REGISTER_SOFTMAX_(T)                                                        \
  REGISTER_KERNEL_BUILDER(Name("Softmax").Device(DEVICE_PDK).TypeConstraint<T>("T"),    \
                          SoftmaxOp<T, false>);                                         \
  REGISTER_KERNEL_BUILDER(Name("LogSoftmax").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          SoftmaxOp<T, true>);
PDK_REGISTER_SOFTMAX_(float)
PDK_REGISTER_SOFTMAX_(double)
PDK_REGISTER_SOFTMAX_(Eigen::half)
PDK_REGISTER_SOFTMAX_(Eigen::bfloat16)
#undef PDK_REGISTER_SOFTMAX_

}  // namespace
}  // namespace tensorflow
