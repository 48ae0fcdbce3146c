// Qr(input; full_matrices): the QR decomposition of each innermost matrix,
// input = q @ r with q orthonormal columns and r upper triangular.
//
// Inputs: input [..., M, N] (T, rank >= 2). Attr: full_matrices (default
// false). With P = min(M, N), outputs q [..., M, P] and r [..., P, N]; with
// full_matrices, q [..., M, M] and r [..., M, N] (r's rows past P are zero).
// Empty matrices give empty outputs (a full q of an M x 0 input is the
// identity).
//
// Algorithm: Householder QR, Golub & Van Loan, Matrix Computations (4th ed.),
// Algorithm 5.1.1 (house) and 5.2.1 (Householder QR), Q accumulated backward
// (section 5.1.6) from only the columns it needs. The reflector of column k
// maps x = A[k:, k] to beta e_1 with beta = -sign(x_0) ||x|| (sign(0) = +1),
// v = [1; x_1: / (x_0 - beta)], tau = (beta - x_0) / beta, and is the identity
// (tau = 0, beta = x_0) when ||x_1:||^2 is at most the smallest normal number.
// That is the convention of Eigen's HouseholderQR, which TensorFlow's CPU
// kernel (tensorflow/core/kernels/linalg/qr_op_impl.h) uses, so the signs of
// q's columns and r's rows agree with it (QR is unique only up to them).
// Each matrix is copied to a column-major scratch buffer and factored with
// sums in T; matrices of a batch are split over the device's pool.
// Semantics: tensorflow/core/ops/linalg_ops.cc (Qr).
// Dtypes: T float32, float64.
// Errors (InvalidArgument): input of rank < 2.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// Factors the column-major m x n matrix `a` in place: on return its upper
// triangle holds R and the part below the diagonal of column k holds the
// reflector's v[1:] (v[0] = 1); tau[k] its scale. G&VL Alg. 5.2.1.
template <class T>
void HouseholderFactor(T* a, int64_t m, int64_t n, T* tau) {
  const int64_t p = std::min(m, n);
  for (int64_t k = 0; k < p; ++k) {
    T* col = a + k * m;
    T tail_sq = T(0);
    for (int64_t i = k + 1; i < m; ++i) tail_sq += col[i] * col[i];
    const T x0 = col[k];
    T beta;
    if (tail_sq <= std::numeric_limits<T>::min()) {
      tau[k] = T(0);
      beta = x0;
      for (int64_t i = k + 1; i < m; ++i) col[i] = T(0);
    } else {
      beta = std::sqrt(x0 * x0 + tail_sq);
      if (x0 >= T(0)) beta = -beta;
      const T scale = T(1) / (x0 - beta);
      for (int64_t i = k + 1; i < m; ++i) col[i] *= scale;
      tau[k] = (beta - x0) / beta;
    }
    col[k] = beta;
    if (tau[k] == T(0)) continue;
    // A[k:, j] -= tau v (v' A[k:, j]) for the columns right of k.
    for (int64_t j = k + 1; j < n; ++j) {
      T* cj = a + j * m;
      T w = cj[k];
      for (int64_t i = k + 1; i < m; ++i) w += col[i] * cj[i];
      w *= tau[k];
      cj[k] -= w;
      for (int64_t i = k + 1; i < m; ++i) cj[i] -= w * col[i];
    }
  }
}

// q (column-major m x qcols) = H_0 H_1 ... H_{p-1} [I; 0], applying the
// reflectors backward to the identity's first qcols columns: H_k touches rows
// k.. and, at that point, only columns k.. are not still unit vectors.
template <class T>
void AccumulateQ(const T* a, int64_t m, int64_t p, const T* tau, T* q, int64_t qcols) {
  std::fill(q, q + m * qcols, T(0));
  for (int64_t j = 0; j < std::min(m, qcols); ++j) q[j * m + j] = T(1);
  for (int64_t k = p - 1; k >= 0; --k) {
    if (tau[k] == T(0)) continue;
    const T* v = a + k * m;
    for (int64_t j = k; j < qcols; ++j) {
      T* cj = q + j * m;
      T w = cj[k];
      for (int64_t i = k + 1; i < m; ++i) w += v[i] * cj[i];
      w *= tau[k];
      cj[k] -= w;
      for (int64_t i = k + 1; i < m; ++i) cj[i] -= w * v[i];
    }
  }
}

template <class T>
class QrOp : public OpKernel {
 public:
  explicit QrOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("full_matrices")) OP_REQUIRES_OK(c, c->GetAttr("full_matrices", &full_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const TensorShape& in = x.shape();
    OP_REQUIRES(ctx, in.dims() >= 2,  // TensorFlow's wording (LinearAlgebraOp) first
                errors::InvalidArgument("Input tensor 0 must have rank >= 2, got ", in.dims(),
                                        " (", type_string(), ": input shape ", in, ")"));
    const int rank = in.dims();
    const int64_t m = in.dim_size(rank - 2), n = in.dim_size(rank - 1), p = std::min(m, n);
    const int64_t qcols = full_ ? m : p, rrows = full_ ? m : p;
    TensorShape qd = in, rd = in;
    qd.set_dim(rank - 1, qcols);
    rd.set_dim(rank - 2, rrows);
    Tensor* q = nullptr;
    Tensor* r = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, qd, &q));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, rd, &r));
    int64_t batch = 1;
    for (int i = 0; i + 2 < rank; ++i) batch *= in.dim_size(i);
    if (q->NumElements() == 0 && r->NumElements() == 0) return;
    const T* src = x.flat<T>().data();
    T* qo = q->flat<T>().data();
    T* ro = r->flat<T>().data();
    auto do_matrices = [&](Eigen::Index first, Eigen::Index last) {
      std::vector<T> a(static_cast<size_t>(m * n)), tau(static_cast<size_t>(p)),
          qc(static_cast<size_t>(m * qcols));
      for (Eigen::Index b = first; b < last; ++b) {
        const T* xb = src + b * m * n;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) a[j * m + i] = xb[i * n + j];
        HouseholderFactor(a.data(), m, n, tau.data());
        T* rb = ro + b * rrows * n;
        for (int64_t i = 0; i < rrows; ++i)
          for (int64_t j = 0; j < n; ++j) rb[i * n + j] = j >= i ? a[j * m + i] : T(0);
        AccumulateQ(a.data(), m, p, tau.data(), qc.data(), qcols);
        T* qb = qo + b * m * qcols;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < qcols; ++j) qb[i * qcols + j] = qc[j * m + i];
      }
    };
    const double flops = 2.0 * static_cast<double>(m) * n * p + 2.0 * m * qcols * p;
    pdk_compute::ParallelFor(
        ctx->eigen_device<Eigen::ThreadPoolDevice>(), batch,
        Eigen::TensorOpCost(sizeof(T) * m * n, sizeof(T) * (m * qcols + rrows * n), flops),
        do_matrices);
  }

 private:
  bool full_ = false;
};

REGISTER_KERNEL_BUILDER(Name("Qr").Device(DEVICE_PDK).TypeConstraint<float>("T"), QrOp<float>);
REGISTER_KERNEL_BUILDER(Name("Qr").Device(DEVICE_PDK).TypeConstraint<double>("T"), QrOp<double>);

}  // namespace
}  // namespace tensorflow
