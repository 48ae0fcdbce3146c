// ReverseV2(tensor, axis): tensor with the listed dimensions reversed.
//
// Inputs: tensor (any rank, T), axis (1-D Tidx int32/int64, host memory;
// negative counts from the end; empty: no-op). Output: T, tensor's shape.
// Byte-level: dimensions are collapsed (size-1 ones dropped, neighbours with
// the same reversed/kept flag merged), then each output row (last collapsed
// dimension) is a memcpy of its mirrored input row, or an element-wise
// reversed copy if the last dimension is reversed; rows split over the pool.
// Nothing to reverse forwards the input without a copy.
// Semantics: tensorflow/core/ops/array_ops.cc (ReverseV2).
// Dtypes: T float32/64, float16, bfloat16, int32, int64, bool, uint8, int8,
// int16.
// A scalar tensor is returned as it is, whatever axis holds (as TensorFlow's
// CPU kernel). Errors (InvalidArgument), for tensors of rank >= 1: axis not
// 1-D, an axis out of [-rank, rank), an axis listed twice.
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

template <class U>
void ReverseRow(char* dst, const char* src, int64_t n) {
  U* d = reinterpret_cast<U*>(dst);
  const U* s = reinterpret_cast<const U*>(src);
  for (int64_t i = 0; i < n; ++i) std::memcpy(d + i, s + (n - 1 - i), sizeof(U));
}

void ReverseRowBytes(char* dst, const char* src, int64_t n, int64_t elem) {
  switch (elem) {
    case 1: return ReverseRow<uint8_t>(dst, src, n);
    case 2: return ReverseRow<uint16_t>(dst, src, n);
    case 4: return ReverseRow<uint32_t>(dst, src, n);
    case 8: return ReverseRow<uint64_t>(dst, src, n);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * elem, src + (n - 1 - i) * elem, elem);
  }
}

class ReverseV2Op {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor axis_t, ctx.input(1));
    const pdk::Shape in = x.shape();
    const int rank = in.rank();
    // A scalar is its own reverse, whatever axis says (TensorFlow's
    // ReverseV2Op returns it before looking at axis).
    if (rank == 0) return ctx.set_output(0, x);
    if (axis_t.rank() != 1)
      return pdk::InvalidArgument(ctx.op(), ": axis must be 1-D, got a tensor of shape ",
                                  axis_t.shape());
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> axes, pdk::ReadIntVector(ctx.op(), "axis", axis_t));
    std::vector<bool> rev(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      if (a < -rank || a >= rank)
        return pdk::InvalidArgument(ctx.op(), ": axis[", i, "] = ", a, " is out of range [",
                                    -rank, ", ", rank, ") for tensor of shape ", in);
      if (a < 0) a += rank;
      if (rev[a])
        return pdk::InvalidArgument(ctx.op(), ": axis ", a, " specified more than once (axis ",
                                    pdk::Shape(axes), ")");
      rev[a] = true;
    }
    // Collapse: drop size-1 dims, merge neighbours with the same flag.
    std::vector<int64_t> d;
    std::vector<bool> f;
    for (int k = 0; k < rank; ++k) {
      if (in[k] == 1) continue;
      if (!f.empty() && f.back() == rev[k]) {
        d.back() *= in[k];
      } else {
        d.push_back(in[k]);
        f.push_back(rev[k]);
      }
    }
    bool any = false;
    for (bool b : f) any = any || b;
    if (!any || x.num_elements() == 0) {
      if (x.num_elements() == 0) return ctx.allocate_output(0, in).status();
      return ctx.set_output_reshaped(0, x, in);  // nothing to reverse: no copy
    }
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, in));
    const int r = static_cast<int>(d.size());
    const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(x.dtype()));
    const int64_t n_last = d[r - 1], row = n_last * elem;
    const bool rev_last = f[r - 1];
    const int64_t rows = x.num_elements() / n_last;
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    auto do_rows = [&](Eigen::Index first, Eigen::Index last) {
      for (Eigen::Index o = first; o < last; ++o) {
        int64_t rem = o, s = 0, stride = 1;
        for (int k = r - 2; k >= 0; --k) {
          int64_t i = rem % d[k];
          rem /= d[k];
          if (f[k]) i = d[k] - 1 - i;
          s += i * stride;
          stride *= d[k];
        }
        if (rev_last) ReverseRowBytes(dst + o * row, src + s * row, n_last, elem);
        else std::memcpy(dst + o * row, src + s * row, row);
      }
    };
    if (out.bytes() <= (64 << 10)) {
      do_rows(0, rows);
    } else {
      pdk_compute::Device(ctx).parallelFor(rows, Eigen::TensorOpCost(row, row, 3 * r), do_rows);
    }
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(ReverseV2, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       r.Add(pdk::KernelDef<ReverseV2Op>("ReverseV2")
                                 .Type("T", t)
                                 .Type("Tidx", i)
                                 .HostMemory("axis"));
                     });
                   });
}

}  // namespace pdk_kernels
