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
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstring>
#include <vector>

#include "compute/parallel_for.h"
#include "kernels/array/tf_array_util.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
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

class ReverseV2Op : public OpKernel {
 public:
  explicit ReverseV2Op(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& x = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    const pdk::Shape& in = x.shape().pdk_shape();
    const int rank = in.rank();
    // A scalar is its own reverse, whatever axis says (TensorFlow's
    // ReverseV2Op returns it before looking at axis).
    if (rank == 0) {
      ctx->set_output(0, x);
      return;
    }
    OP_REQUIRES(ctx, axis_t.dims() == 1,
                errors::InvalidArgument(op, ": axis must be 1-D, got a tensor of shape ",
                                        axis_t.shape()));
    pdk::StatusOr<std::vector<int64_t>> axes_or = pdk_kernels::ReadIntVector(op, "axis", axis_t);
    OP_REQUIRES_OK(ctx, axes_or.status());
    const std::vector<int64_t>& axes = *axes_or;
    std::vector<bool> rev(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      OP_REQUIRES(ctx, a >= -rank && a < rank,
                  errors::InvalidArgument(op, ": axis[", i, "] = ", a, " is out of range [",
                                          -rank, ", ", rank, ") for tensor of shape ", in));
      if (a < 0) a += rank;
      OP_REQUIRES(ctx, !rev[a],
                  errors::InvalidArgument(op, ": axis ", a, " specified more than once (axis ",
                                          pdk::Shape(axes), ")"));
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
    Tensor* out = nullptr;
    if (!any || x.NumElements() == 0) {
      if (x.NumElements() == 0) {
        OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
        return;
      }
      ctx->set_output(0, x);  // nothing to reverse: no copy
      return;
    }
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    const int r = static_cast<int>(d.size());
    const int64_t elem =
        static_cast<int64_t>(TF_DataTypeSize(static_cast<TF_DataType>(x.dtype())));
    const int64_t n_last = d[r - 1], row = n_last * elem;
    const bool rev_last = f[r - 1];
    const int64_t rows = x.NumElements() / n_last;
    const char* src = static_cast<const char*>(x.data());
    char* dst = static_cast<char*>(out->data());
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
    if (out->TotalBytes() <= (64 << 10)) {
      do_rows(0, rows);
    } else {
      pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(), rows,
                               Eigen::TensorOpCost(row, row, 3 * r), do_rows);
    }
  }
};

// T: the data-movement types (pdk_compute::DataMovementTypes); Tidx int32,
// int64; axis in host memory.
#define PDK_REGISTER_REVERSE_(T, Tidx)                  \
  REGISTER_KERNEL_BUILDER(Name("ReverseV2")             \
                              .Device(DEVICE_PDK)       \
                              .TypeConstraint<T>("T")   \
                              .TypeConstraint<Tidx>("Tidx") \
                              .HostMemory("axis"),      \
                          ReverseV2Op)
#define PDK_REGISTER_REVERSE_ALL_(T) \
  PDK_REGISTER_REVERSE_(T, int32);   \
  PDK_REGISTER_REVERSE_(T, int64);
PDK_CALL_DATA_MOVEMENT_TYPES(PDK_REGISTER_REVERSE_ALL_)
#undef PDK_REGISTER_REVERSE_ALL_
#undef PDK_REGISTER_REVERSE_

}  // namespace
}  // namespace tensorflow
