// MatrixDiagPartV3(input, k, padding_value; align): diagonals k[0]..k[1] of
// each innermost matrix.
//
// Inputs: input [..., M, N] (T, rank >= 2); k (int32 scalar or vector of 1 or
// 2 elements, host memory: one diagonal, or the band lo = k[0] <= hi = k[1];
// diagonal d is input[i, i + d], d > 0 above the main one); padding_value
// (scalar T, host memory). Attr align: "LEFT_RIGHT", "RIGHT_LEFT" (default),
// "LEFT_LEFT" or "RIGHT_RIGHT", the alignment of superdiagonals (d >= 0) and
// subdiagonals (d <= 0) shorter than the longest one. Output, with
// len(d) = min(M + min(d, 0), N - max(d, 0)) and L = max len(d) over the band
// = min(M + min(hi, 0), N - max(lo, 0)): [..., L] for one diagonal, else
// [..., hi - lo + 1, L] with row j holding diagonal hi - j; a right-aligned
// diagonal starts at L - len(d), the rest of the row is padding_value.
// Byte-level copies (the op moves elements); rows split over the pool.
// Semantics: tensorflow/core/ops/array_ops.cc (MatrixDiagPartV3) and the
// docstring of tf.linalg.diag_part.
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8, int8,
// int16.
// Errors (InvalidArgument): input of rank < 2, k not a scalar or a vector of
// 1 or 2 elements, k[0] > k[1], a diagonal outside (-M, N) (0 is always
// allowed), padding_value not of one element, an unknown align.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "compute/parallel_for.h"
#include "kernels/array/tf_array_util.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

class MatrixDiagPartV3Op : public OpKernel {
 public:
  explicit MatrixDiagPartV3Op(OpKernelConstruction* c) : OpKernel(c) {
    std::string align = "RIGHT_LEFT";
    if (c->HasAttr("align")) OP_REQUIRES_OK(c, c->GetAttr("align", &align));
    if (align == "RIGHT_LEFT") {
      right_super_ = true, right_sub_ = false;
    } else if (align == "LEFT_RIGHT") {
      right_super_ = false, right_sub_ = true;
    } else if (align == "LEFT_LEFT") {
      right_super_ = false, right_sub_ = false;
    } else if (align == "RIGHT_RIGHT") {
      right_super_ = true, right_sub_ = true;
    } else {
      c->CtxFailure(errors::InvalidArgument("MatrixDiagPartV3: align must be one of LEFT_RIGHT, "
                                            "RIGHT_LEFT, LEFT_LEFT, RIGHT_RIGHT, got \"",
                                            align, "\""));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& x = ctx->input(0);
    const Tensor& k_t = ctx->input(1);
    const Tensor& pad_t = ctx->input(2);
    const pdk::Shape& in = x.shape().pdk_shape();
    OP_REQUIRES_OK(ctx, pdk::CheckRankAtLeast(op, "input", in, 2));
    OP_REQUIRES(ctx, k_t.dims() <= 1 && k_t.NumElements() >= 1 && k_t.NumElements() <= 2,
                errors::InvalidArgument(op, ": k must be a scalar or a vector of 1 or 2 "
                                        "elements, got shape ", k_t.shape()));
    OP_REQUIRES(ctx, pad_t.NumElements() == 1,  // any shape of one element, as TensorFlow's CPU
                errors::InvalidArgument("Padding must be scalar. (", op,
                                        ": padding_value of shape ", pad_t.shape(), ")"));
    pdk::StatusOr<std::vector<int64_t>> k = pdk_kernels::ReadIntVector(op, "k", k_t);
    OP_REQUIRES_OK(ctx, k.status());
    const int64_t lo = (*k)[0], hi = k->back();
    const int64_t m = in.dim(-2), n = in.dim(-1);
    for (int64_t d : {lo, hi}) {
      OP_REQUIRES(ctx, d == 0 || (d > -m && d < n),
                  errors::InvalidArgument(op, ": diagonal ", d, " is out of range (", -m, ", ", n,
                                          ") for input of shape ", in));
    }
    OP_REQUIRES(ctx, lo <= hi,
                errors::InvalidArgument(op, ": k[0] (", lo, ") must not be greater than k[1] (",
                                        hi, ")"));
    const int64_t num_diags = hi - lo + 1;
    const int64_t max_len = std::max<int64_t>(
        0, std::min(m + std::min<int64_t>(hi, 0), n - std::max<int64_t>(lo, 0)));
    std::vector<int64_t> od(in.dims().begin(), in.dims().end() - 2);
    if (num_diags > 1) od.push_back(num_diags);
    od.push_back(max_len);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(od), &out));
    if (out->NumElements() == 0) return;

    const int64_t elem =
        static_cast<int64_t>(TF_DataTypeSize(static_cast<TF_DataType>(x.dtype())));
    const int64_t rows = out->NumElements() / max_len;  // batch * num_diags
    const char* src = static_cast<const char*>(x.data());
    const char* pad = static_cast<const char*>(pad_t.data());
    char* dst = static_cast<char*>(out->data());
    const bool right_super = right_super_, right_sub = right_sub_;
    auto do_rows = [&](Eigen::Index first, Eigen::Index last) {
      for (Eigen::Index row = first; row < last; ++row) {
        const int64_t b = row / num_diags, d = hi - row % num_diags;
        const int64_t len = std::min(m + std::min<int64_t>(d, 0), n - std::max<int64_t>(d, 0));
        const bool right = (d >= 0 && right_super) || (d <= 0 && right_sub);
        const int64_t offset = right ? max_len - len : 0;
        const int64_t r0 = std::max<int64_t>(-d, 0), c0 = std::max<int64_t>(d, 0);
        const char* mat = src + b * m * n * elem;
        char* o = dst + row * max_len * elem;
        for (int64_t i = 0; i < max_len; ++i) {
          const int64_t y = i - offset;
          const char* from = (y >= 0 && y < len) ? mat + ((r0 + y) * n + c0 + y) * elem : pad;
          std::memcpy(o + i * elem, from, static_cast<size_t>(elem));
        }
      }
    };
    if (out->TotalBytes() <= (64 << 10)) {
      do_rows(0, rows);
    } else {
      pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(), rows,
                               Eigen::TensorOpCost(max_len * elem, max_len * elem, 4 * max_len),
                               do_rows);
    }
  }

 private:
  bool right_super_ = true, right_sub_ = false;
};

// T: the data-movement types (pdk_compute::DataMovementTypes); k and
// padding_value in host memory.
#define PDK_REGISTER_MATRIX_DIAG_PART_(T)                   \
  REGISTER_KERNEL_BUILDER(Name("MatrixDiagPartV3")          \
                              .Device(DEVICE_PDK)           \
                              .TypeConstraint<T>("T")       \
                              .HostMemory("k")              \
                              .HostMemory("padding_value"), \
                          MatrixDiagPartV3Op);
PDK_CALL_DATA_MOVEMENT_TYPES(PDK_REGISTER_MATRIX_DIAG_PART_)
#undef PDK_REGISTER_MATRIX_DIAG_PART_

}  // namespace
}  // namespace tensorflow
