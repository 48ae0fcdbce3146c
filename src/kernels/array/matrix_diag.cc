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
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

class MatrixDiagPartV3Op {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    std::string align = "RIGHT_LEFT";
    PDK_RETURN_IF_ERROR(a.GetOptional("align", &align));
    if (align == "RIGHT_LEFT") {
      right_super_ = true, right_sub_ = false;
    } else if (align == "LEFT_RIGHT") {
      right_super_ = false, right_sub_ = true;
    } else if (align == "LEFT_LEFT") {
      right_super_ = false, right_sub_ = false;
    } else if (align == "RIGHT_RIGHT") {
      right_super_ = true, right_sub_ = true;
    } else {
      return pdk::InvalidArgument("MatrixDiagPartV3: align must be one of LEFT_RIGHT, "
                                  "RIGHT_LEFT, LEFT_LEFT, RIGHT_RIGHT, got \"", align, "\"");
    }
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor k_t, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor pad_t, ctx.input(2));
    const pdk::Shape in = x.shape();
    PDK_RETURN_IF_ERROR(pdk::CheckRankAtLeast(ctx.op(), "input", in, 2));
    if (k_t.rank() > 1 || k_t.num_elements() < 1 || k_t.num_elements() > 2)
      return pdk::InvalidArgument(ctx.op(), ": k must be a scalar or a vector of 1 or 2 "
                                  "elements, got shape ", k_t.shape());
    if (pad_t.num_elements() != 1)  // any shape of one element, as TensorFlow's CPU
      return pdk::InvalidArgument("Padding must be scalar. (", ctx.op(),
                                  ": padding_value of shape ", pad_t.shape(), ")");
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> k, pdk::ReadIntVector(ctx.op(), "k", k_t));
    const int64_t lo = k[0], hi = k.back();
    const int64_t m = in.dim(-2), n = in.dim(-1);
    for (int64_t d : {lo, hi}) {
      if (d != 0 && (d <= -m || d >= n))
        return pdk::InvalidArgument(ctx.op(), ": diagonal ", d, " is out of range (", -m, ", ",
                                    n, ") for input of shape ", in);
    }
    if (lo > hi)
      return pdk::InvalidArgument(ctx.op(), ": k[0] (", lo, ") must not be greater than k[1] (",
                                  hi, ")");
    const int64_t num_diags = hi - lo + 1;
    const int64_t max_len = std::max<int64_t>(
        0, std::min(m + std::min<int64_t>(hi, 0), n - std::max<int64_t>(lo, 0)));
    std::vector<int64_t> od(in.dims().begin(), in.dims().end() - 2);
    if (num_diags > 1) od.push_back(num_diags);
    od.push_back(max_len);
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape(od)));
    if (out.num_elements() == 0) return pdk::Status::OK();

    const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(x.dtype()));
    const int64_t rows = out.num_elements() / max_len;  // batch * num_diags
    const char* src = static_cast<const char*>(x.raw_data());
    const char* pad = static_cast<const char*>(pad_t.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
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
    if (out.bytes() <= (64 << 10)) {
      do_rows(0, rows);
    } else {
      pdk_compute::Device(ctx).parallelFor(
          rows, Eigen::TensorOpCost(max_len * elem, max_len * elem, 4 * max_len), do_rows);
    }
    return pdk::Status::OK();
  }

 private:
  bool right_super_ = true, right_sub_ = false;
};

}  // namespace

PDK_REGISTER_KERNELS(MatrixDiagPartV3, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{}, [&](auto t) {
    r.Add(pdk::KernelDef<MatrixDiagPartV3Op>("MatrixDiagPartV3")
              .Type("T", t)
              .HostMemory("k")
              .HostMemory("padding_value"));
  });
}

}  // namespace pdk_kernels
