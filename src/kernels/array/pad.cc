// Pad, PadV2, MirrorPad, MirrorPadGrad.
//
// Pad(input, paddings) / PadV2(input, paddings, constant_values):
//   input (any rank, T), paddings ([rank, 2] Tpaddings int32/int64, host
//   memory, non-negative), constant_values (scalar T; 0 for Pad). Output
//   dim i = paddings[i,0] + input dim i + paddings[i,1], the constant outside
//   and the input inside (box_copy.h). All-zero paddings forward the input.
// MirrorPad(input, paddings; mode): the pad mirrors the input. REFLECT omits
//   the edge ([a b c] pad 2 -> c b a b c b a), so paddings must be <= D-1;
//   SYMMETRIC repeats it (b a a b c c b), paddings <= D.
// MirrorPadGrad(grad, paddings; mode): the gradient of MirrorPad: grad has the
//   padded shape, the output the unpadded one; each output element is the sum
//   of the grad elements MirrorPad copied from it (reduced one dimension at a
//   time, so float sums may differ from TF's in the last bits).
// Semantics: tensorflow/core/ops/array_ops.cc (Pad, PadV2, MirrorPad,
// MirrorPadGrad).
// Dtypes: Pad/PadV2/MirrorPad T float32/64, float16, bfloat16, int32, int64,
// bool, uint8, int8, int16; MirrorPadGrad float32/64, int32, int64.
// Errors (InvalidArgument): paddings not of shape [rank, 2]; a negative
// padding; constant_values not a scalar; a mirror padding too large for its
// dimension; a MirrorPadGrad grad smaller than the paddings. Messages start
// with TensorFlow's wording for the same error (tensorflow/core/kernels/
// pad_op.cc, mirror_pad_op.cc), PDK's detail follows in parentheses.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/array/box_copy.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// Reads paddings ([rank, 2], non-negative) into before/after, for an input
// of shape `in`. `mirror`: MirrorPad's spelling of TensorFlow's messages
// (mirror_pad_op.cc) rather than Pad's (pad_op.cc).
Status ReadPaddings(const std::string& op, const Tensor& p, const TensorShape& in, bool mirror,
                    std::vector<int64>* before, std::vector<int64>* after) {
  const int rank = in.dims();
  if (p.dims() != 2 || p.dim_size(1) != 2)
    return errors::InvalidArgument("paddings must be a matrix with 2 columns: ", p.shape(), " (",
                                   op, ": paddings must have shape [", rank,
                                   ", 2], the rank of input, then before/after)");
  if (p.dim_size(0) != rank)
    return errors::InvalidArgument("The first dimension of paddings must be the rank of inputs",
                                   p.shape(), mirror ? ", " : " ", in, " (", op,
                                   ": paddings must have shape [", rank, ", 2])");
  std::vector<int64> v;
  TF_RETURN_IF_ERROR(pdk_kernels::ReadIntVector(op, "paddings", p, &v));
  before->resize(rank);
  after->resize(rank);
  for (int i = 0; i < rank; ++i) {
    (*before)[i] = v[2 * i];
    (*after)[i] = v[2 * i + 1];
    if (v[2 * i] < 0 || v[2 * i + 1] < 0)
      return errors::InvalidArgument(mirror ? "p" : "P", "addings must be non-negative: ",
                                     v[2 * i], " ", v[2 * i + 1], " (", op, ": paddings[", i,
                                     "])");
  }
  return OkStatus();
}

// Output 0 of the padded shape (dimension i: before[i] + in[i] + after[i],
// into *out_dims): `input` itself under that shape when nothing is padded (no
// copy, also rank 0; *out null), else a new output in *out.
Status AllocatePadded(OpKernelContext* ctx, const Tensor& input, const std::vector<int64>& before,
                      const std::vector<int64>& after, std::vector<int64>* out_dims,
                      Tensor** out) {
  const TensorShape& in = input.shape();
  out_dims->resize(in.dims());
  bool none = true;
  for (int i = 0; i < in.dims(); ++i) {
    (*out_dims)[i] = before[i] + in.dim_size(i) + after[i];
    none = none && before[i] == 0 && after[i] == 0;
  }
  const TensorShape out_shape(*out_dims);
  *out = nullptr;
  if (none) {
    Tensor y;
    y.CopyFrom(input, out_shape);
    ctx->set_output(0, y);
    return OkStatus();
  }
  return ctx->allocate_output(0, out_shape, out);
}

// ------------------------------------------------------------------ Pad, PadV2

template <class T>
class PadOp : public OpKernel {
 public:
  explicit PadOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& input = ctx->input(0);
    const Tensor& pad_t = ctx->input(1);
    const TensorShape& in = input.shape();
    const int rank = in.dims();
    std::vector<int64> before, after;
    OP_REQUIRES_OK(ctx, ReadPaddings(op, pad_t, in, false, &before, &after));
    T value = T(0);
    if (ctx->num_inputs() > 2) {
      const Tensor& c = ctx->input(2);
      OP_REQUIRES(ctx, c.dims() == 0,
                  errors::InvalidArgument("constant_values must be a scalar. Found: ", c.shape(),
                                          " (", op, ")"));
      value = c.flat<T>()(0);
    }
    std::vector<int64> out_dims;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, AllocatePadded(ctx, input, before, after, &out_dims, &out));
    if (out == nullptr || out->NumElements() == 0) return;  // forwarded, or empty
    const std::vector<int64> in_dims = in.dim_sizes();
    const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    pdk_compute::Assign(dev, out->flat<T>(), out->flat<T>().constant(value));
    if (in.num_elements() == 0) return;
    ::pdk_kernels::CopyBox(dev, sizeof(T), static_cast<const char*>(input.data()), in_dims,
                           std::vector<int64>(rank, 0), static_cast<char*>(out->data()),
                           out_dims, before, in_dims);
  }
};

// ------------------------------------------------------------ MirrorPad (+grad)

// The input index that padded index x (already shifted by -before) mirrors.
inline int64 Mirror(int64 x, int64 d, int64 offset) {
  if (x < 0) return -x - 1 + offset;
  if (x >= d) return 2 * d - 1 - x - offset;
  return x;
}

Status ReadMode(OpKernelConstruction* c, int64* offset) {
  std::string mode;
  TF_RETURN_IF_ERROR(c->GetAttr("mode", &mode));
  if (mode == "REFLECT") *offset = 1;
  else if (mode == "SYMMETRIC") *offset = 0;
  else return errors::InvalidArgument("mode must be REFLECT or SYMMETRIC, got '", mode, "'");
  return OkStatus();
}

Status CheckMirror(const std::string& op, int64 offset, const TensorShape& in,
                   const std::vector<int64>& before, const std::vector<int64>& after) {
  for (int i = 0; i < in.dims(); ++i) {
    const int64 lim = in.dim_size(i) - offset;
    if (before[i] <= lim && after[i] <= lim) continue;
    const char* mode = offset ? "REFLECT" : "SYMMETRIC";
    if (offset)
      return errors::InvalidArgument("paddings must be less than the dimension size: ",
                                     before[i], ", ", after[i], " not less than ",
                                     in.dim_size(i), " (", op, ": ", mode, " mode, dimension ",
                                     i, " of input shape ", in, ")");
    return errors::InvalidArgument("paddings must be no greater than the dimension size: ",
                                   before[i], ", ", after[i], " greater than ", in.dim_size(i),
                                   " (", op, ": ", mode, " mode, dimension ", i,
                                   " of input shape ", in, ")");
  }
  return OkStatus();
}

class MirrorPadOp : public OpKernel {
 public:
  explicit MirrorPadOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadMode(c, &offset_));
  }

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& input = ctx->input(0);
    const Tensor& pad_t = ctx->input(1);
    const TensorShape& in_shape = input.shape();
    const int rank = in_shape.dims();
    std::vector<int64> before, after;
    OP_REQUIRES_OK(ctx, ReadPaddings(op, pad_t, in_shape, true, &before, &after));
    OP_REQUIRES_OK(ctx, CheckMirror(op, offset_, in_shape, before, after));
    std::vector<int64> od;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, AllocatePadded(ctx, input, before, after, &od, &out));
    if (out == nullptr || out->NumElements() == 0) return;  // forwarded, or empty
    const std::vector<int64> in = in_shape.dim_sizes();
    const int64 elem = static_cast<int64>(DataTypeSize(input.dtype()));
    std::vector<int64> is(rank, 1);  // input strides in elements
    for (int k = rank - 2; k >= 0; --k) is[k] = is[k + 1] * in[k + 1];
    const int last = rank - 1;
    const int64 orow = od[last], rows = out->NumElements() / orow;
    const char* src = static_cast<const char*>(input.data());
    char* dst = static_cast<char*>(out->data());
    const int64 off = offset_;
    auto do_rows = [&](Eigen::Index first, Eigen::Index lastr) {
      for (Eigen::Index r = first; r < lastr; ++r) {
        int64 rem = r, so = 0;
        for (int k = last - 1; k >= 0; --k) {
          const int64 x = rem % od[k] - before[k];
          rem /= od[k];
          so += Mirror(x, in[k], off) * is[k];
        }
        const char* s = src + so * elem;
        char* d = dst + r * orow * elem;
        for (int64 j = 0; j < before[last]; ++j)
          std::memcpy(d + j * elem, s + Mirror(j - before[last], in[last], off) * elem, elem);
        std::memcpy(d + before[last] * elem, s, in[last] * elem);
        for (int64 j = before[last] + in[last]; j < orow; ++j)
          std::memcpy(d + j * elem, s + Mirror(j - before[last], in[last], off) * elem, elem);
      }
    };
    if (out->TotalBytes() <= (64 << 10)) {
      do_rows(0, rows);
    } else {
      pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(), rows,
                               Eigen::TensorOpCost(orow * elem, orow * elem, 4 * rank), do_rows);
    }
  }

 private:
  int64 offset_ = 1;
};

template <class T>
class MirrorPadGradOp : public OpKernel {
 public:
  explicit MirrorPadGradOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadMode(c, &offset_));
  }

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& grad = ctx->input(0);
    const Tensor& pad_t = ctx->input(1);
    const TensorShape& gs = grad.shape();
    const int rank = gs.dims();
    std::vector<int64> before, after;
    OP_REQUIRES_OK(ctx, ReadPaddings(op, pad_t, gs, true, &before, &after));
    std::vector<int64> od(rank);
    for (int i = 0; i < rank; ++i) {
      od[i] = gs.dim_size(i) - before[i] - after[i];
      OP_REQUIRES(ctx, od[i] >= 0,
                  errors::InvalidArgument(op, ": paddings[", i, "] = [", before[i], ", ",
                                          after[i], "] exceed dimension ", i, " of grad shape ",
                                          gs));
    }
    const TensorShape out_shape(od);
    OP_REQUIRES_OK(ctx, CheckMirror(op, offset_, out_shape, before, after));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out_shape.num_elements() == 0) return;
    // Reduce one dimension at a time: cur (dims cd) -> next (dim k unpadded).
    std::vector<int64> cd = gs.dim_sizes();
    const T* g = grad.flat<T>().data();
    std::vector<T> cur(g, g + grad.NumElements()), next;
    for (int k = 0; k < rank; ++k) {
      if (before[k] == 0 && after[k] == 0) continue;
      int64 outer = 1, inner = 1;
      for (int i = 0; i < k; ++i) outer *= cd[i];
      for (int i = k + 1; i < rank; ++i) inner *= cd[i];
      const int64 P = cd[k], D = od[k];
      next.assign(static_cast<size_t>(outer * D * inner), T(0));
      for (int64 o = 0; o < outer; ++o)
        for (int64 j = 0; j < P; ++j) {
          const int64 x = Mirror(j - before[k], D, offset_);
          const T* s = cur.data() + (o * P + j) * inner;
          T* d = next.data() + (o * D + x) * inner;
          for (int64 i = 0; i < inner; ++i) d[i] += s[i];
        }
      cd[k] = D;
      cur.swap(next);
    }
    std::memcpy(out->data(), cur.data(), out->TotalBytes());
  }

 private:
  int64 offset_ = 1;
};

static_assert(std::is_same_v<pdk_compute::DataMovementTypes,
                             ::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32,
                                             int64, bool, uint8, int8, int16>>,
              "the registrations below list pdk_compute::DataMovementTypes: update them");

// Pad, PadV2, MirrorPad: the data-movement types (pdk_compute::DataMovementTypes);
// paddings (Tpaddings int32/int64) in host memory.
#define PDK_REGISTER_PAD_INDEX_(T, P)                         \
  REGISTER_KERNEL_BUILDER(Name("Pad")                         \
                              .Device(DEVICE_PDK)             \
                              .TypeConstraint<T>("T")         \
                              .TypeConstraint<P>("Tpaddings") \
                              .HostMemory("paddings"),        \
                          PadOp<T>);                          \
  REGISTER_KERNEL_BUILDER(Name("PadV2")                       \
                              .Device(DEVICE_PDK)             \
                              .TypeConstraint<T>("T")         \
                              .TypeConstraint<P>("Tpaddings") \
                              .HostMemory("paddings"),        \
                          PadOp<T>);                          \
  REGISTER_KERNEL_BUILDER(Name("MirrorPad")                   \
                              .Device(DEVICE_PDK)             \
                              .TypeConstraint<T>("T")         \
                              .TypeConstraint<P>("Tpaddings") \
                              .HostMemory("paddings"),        \
                          MirrorPadOp)
#define PDK_REGISTER_PAD_(T)         \
  PDK_REGISTER_PAD_INDEX_(T, int32); \
  PDK_REGISTER_PAD_INDEX_(T, int64)
PDK_REGISTER_PAD_(float);
PDK_REGISTER_PAD_(double);
PDK_REGISTER_PAD_(Eigen::half);
PDK_REGISTER_PAD_(Eigen::bfloat16);
PDK_REGISTER_PAD_(int32);
PDK_REGISTER_PAD_(int64);
PDK_REGISTER_PAD_(bool);
PDK_REGISTER_PAD_(uint8);
PDK_REGISTER_PAD_(int8);
PDK_REGISTER_PAD_(int16);
#undef PDK_REGISTER_PAD_
#undef PDK_REGISTER_PAD_INDEX_

// MirrorPadGrad: float32/64, int32, int64.
#define PDK_REGISTER_MIRROR_PAD_GRAD_INDEX_(T, P)             \
  REGISTER_KERNEL_BUILDER(Name("MirrorPadGrad")               \
                              .Device(DEVICE_PDK)             \
                              .TypeConstraint<T>("T")         \
                              .TypeConstraint<P>("Tpaddings") \
                              .HostMemory("paddings"),        \
                          MirrorPadGradOp<T>)
#define PDK_REGISTER_MIRROR_PAD_GRAD_(T)         \
  PDK_REGISTER_MIRROR_PAD_GRAD_INDEX_(T, int32); \
  PDK_REGISTER_MIRROR_PAD_GRAD_INDEX_(T, int64)
PDK_REGISTER_MIRROR_PAD_GRAD_(float);
PDK_REGISTER_MIRROR_PAD_GRAD_(double);
PDK_REGISTER_MIRROR_PAD_GRAD_(int32);
PDK_REGISTER_MIRROR_PAD_GRAD_(int64);
#undef PDK_REGISTER_MIRROR_PAD_GRAD_
#undef PDK_REGISTER_MIRROR_PAD_GRAD_INDEX_

}  // namespace
}  // namespace tensorflow
