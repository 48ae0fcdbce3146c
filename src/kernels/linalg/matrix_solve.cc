// MatrixSolve(matrix, rhs; adjoint): x with matrix @ x = rhs for each
// innermost matrix (adjoint: adjoint(matrix) @ x = rhs).
//
// Inputs: matrix [..., N, N] and rhs [..., N, K] of dtype T, the same rank
// (>= 2) and the same outer ("batch") dimensions (no broadcasting). Output
// [..., N, K]. Attr: adjoint (default false). An empty matrix or rhs gives an
// empty output.
//
// Algorithm: LU with partial pivoting (Golub & Van Loan, Matrix Computations,
// 4th ed., Algorithm 3.4.1) through Eigen's PartialPivLU on a row-major copy,
// then two triangular solves: the same Eigen code and matrix layout as
// TensorFlow's CPU kernel (tensorflow/core/kernels/linalg/matrix_solve_op.cc),
// so results agree with it. Matrices of a batch are split over the device's
// pool. Semantics: tensorflow/core/ops/linalg_ops.cc (MatrixSolve).
// Dtypes: T float32, float64.
// Errors (InvalidArgument, TensorFlow's wording first, then the shapes):
// matrix of rank < 2 ("Input tensor 0 must have rank >= 2"), ranks that
// differ ("All input tensors must have the same rank."), outer dimensions
// that differ ("All input tensors must have the same outer dimensions."), a
// matrix that is not square ("First input (lhs) must be a square matrix."),
// rhs rows other than N ("Input matrix and rhs are incompatible."), and an
// exactly zero pivot ("Input matrix is not invertible.", as TensorFlow's CPU
// kernel: PartialPivLU gives no stronger test of invertibility).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <atomic>
#include <cstdint>

#include "Eigen/Core"
#include "Eigen/LU"
#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

template <class T>
class MatrixSolveOp : public OpKernel {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const Matrix>;
  using Map = Eigen::Map<Matrix>;

 public:
  explicit MatrixSolveOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("adjoint")) OP_REQUIRES_OK(c, c->GetAttr("adjoint", &adjoint_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const TensorShape& as = a.shape();
    const TensorShape& bs = b.shape();
    // PDK's detail after TensorFlow's wording: the op and both shapes.
    auto shapes = [&] {
      return " (" + type_string() + ": matrix shape " + as.DebugString() + ", rhs shape " +
             bs.DebugString() + ")";
    };
    const int rank = as.dims();
    OP_REQUIRES(
        ctx, rank >= 2,
        errors::InvalidArgument("Input tensor 0 must have rank >= 2, got ", rank, shapes()));
    OP_REQUIRES(ctx, bs.dims() == rank,
                errors::InvalidArgument("All input tensors must have the same rank.", shapes()));
    int64_t batch = 1;
    for (int d = 0; d + 2 < rank; ++d) {
      OP_REQUIRES(ctx, as.dim_size(d) == bs.dim_size(d),
                  errors::InvalidArgument("All input tensors must have the same outer dimensions.",
                                          shapes()));
      batch *= as.dim_size(d);
    }
    const int64_t n = as.dim_size(rank - 2);
    const int64_t k = bs.dim_size(rank - 1);
    OP_REQUIRES(ctx, as.dim_size(rank - 1) == n,
                errors::InvalidArgument("First input (lhs) must be a square matrix.", shapes()));
    OP_REQUIRES(ctx, bs.dim_size(rank - 2) == n,
                errors::InvalidArgument("Input matrix and rhs are incompatible.", shapes()));
    TensorShape out_shape = bs;
    Tensor* x = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &x));
    if (n == 0 || k == 0 || batch == 0) return;

    const T* ap = a.flat<T>().data();
    const T* bp = b.flat<T>().data();
    T* xp = x->flat<T>().data();
    std::atomic<bool> singular{false};
    auto solve = [&](Eigen::Index first, Eigen::Index last) {
      Eigen::PartialPivLU<Matrix> lu(n);
      for (Eigen::Index i = first; i < last; ++i) {
        ConstMap m(ap + i * n * n, n, n);
        if (adjoint_) {
          lu.compute(m.adjoint());
        } else {
          lu.compute(m);
        }
        if (!(lu.matrixLU().diagonal().cwiseAbs().minCoeff() > T(0))) {
          singular.store(true, std::memory_order_relaxed);
          continue;
        }
        Map(xp + i * n * k, n, k) = lu.solve(ConstMap(bp + i * n * k, n, k));
      }
    };
    // TensorFlow's cost per matrix (LinearAlgebraOp::GetCostPerUnit): n^2 (n + k).
    const double flops = static_cast<double>(n) * n * (n + k);
    pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(), batch,
                             Eigen::TensorOpCost(sizeof(T) * n * (n + k), sizeof(T) * n * k, flops),
                             solve);
    OP_REQUIRES(ctx, !singular.load(),
                errors::InvalidArgument("Input matrix is not invertible.", shapes()));
  }

 private:
  bool adjoint_ = false;
};

REGISTER_KERNEL_BUILDER(Name("MatrixSolve").Device(DEVICE_PDK).TypeConstraint<float>("T"),
                        MatrixSolveOp<float>);
REGISTER_KERNEL_BUILDER(Name("MatrixSolve").Device(DEVICE_PDK).TypeConstraint<double>("T"),
                        MatrixSolveOp<double>);

}  // namespace
}  // namespace tensorflow
