// Reductions on OPENCL (cl/reduction_ops.cl).
//
// Ops: Sum (float, int64), Mean, Max, Min, Prod (float); Sum, Prod, Mean int32
// with every argument in host memory, computed on the host (as TensorFlow's
// GPU int32 reductions; Max / Min int32 are TensorFlow's DEVICE_DEFAULT
// kernels); input T `input`,
// `reduction_indices` (int32 or int64 Tidx, HostMemory as in TensorFlow's GPU
// registrations), attr keep_dims; output T. And L2Loss (float): sum(t^2) / 2,
// a scalar.
//
// Semantics follow TensorFlow's ReductionOp (reduction_ops_common.h): axes in
// [-rank, rank), duplicates are errors (same texts), any rank of the axes
// tensor (flattened); an empty axes set (or only size-1 axes) is a copy; an
// empty reduction gives the reducer's identity (Sum 0, Prod 1, Max -inf,
// Min +inf, Mean 0/0 = NaN). Max/Min propagate NaN as TF's CPU reducers do.
//
// How: dims of size 1 are dropped and neighbouring dims of the same kind
// (kept/reduced) merged, so the view is alternating kept and reduced runs.
// One work-item folds up to kChunk reduced elements of one output element in
// index order; when an output element needs more, the partial results go to a
// scratch [n_out, parts] tensor and the same kernel reduces that, until one
// part is left (a full reduction of 1,000,000 elements: 977 work-items, then
// one). Within a chunk, 8 lanes are folded pairwise at the end (cl/ file).
// Float accumulates in float; the sum order differs from Eigen's tree, so
// results agree with TF's CPU to rounding (~1e-6 relative for positive data).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "array_util.h"
#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;

namespace {

constexpr int64 kChunk = 1024;
constexpr int kMaxRuns = 8;

// The input viewed as kept runs (output order) and reduced runs, with the
// input's element strides.
struct ReduceView {
  std::vector<int64> kdims, kstr, rdims, rstr;
  int64 n_out = 1, n_red = 1;
};

ReduceView Collapse(const TensorShape& shape, const std::vector<bool>& reduced) {
  const int rank = shape.dims();
  std::vector<int64> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape.dim_size(d + 1);
  ReduceView v;
  int last_kind = -1;  // 0 kept, 1 reduced
  for (int d = 0; d < rank; ++d) {
    const int64 n = shape.dim_size(d);
    if (n == 1) continue;
    const int kind = reduced[d] ? 1 : 0;
    std::vector<int64>& dims = kind ? v.rdims : v.kdims;
    std::vector<int64>& str = kind ? v.rstr : v.kstr;
    if (kind == last_kind) {
      // Row-major neighbours merge: the outer one's stride is inner * size.
      dims.back() *= n;
      str.back() = stride[d];
    } else {
      dims.push_back(n);
      str.push_back(stride[d]);
    }
    last_kind = kind;
  }
  for (int64 n : v.kdims) v.n_out *= n;
  for (int64 n : v.rdims) v.n_red *= n;
  return v;
}

void ToLong8(const std::vector<int64>& v, int64_t (&out)[8]) {
  for (int i = 0; i < 8; ++i) out[i] = i < static_cast<int>(v.size()) ? v[i] : 1;
}

// One launch: y[o * parts + p] = fold of chunk p of output o.
Status Launch(OpKernelContext* ctx, const std::string& kernel, const Tensor& x, const Tensor& y,
              const ReduceView& v, int64 parts, const Arg& div) {
  int64_t kd[8], ks[8], rd[8], rs[8];
  ToLong8(v.kdims, kd);
  ToLong8(v.kstr, ks);
  ToLong8(v.rdims, rd);
  ToLong8(v.rstr, rs);
  return Enqueue(ctx, kernel, static_cast<uint64_t>(v.n_out * parts),
                 {x, y, Arg::I64(v.n_out), Arg::I64(parts), Arg::I64(kChunk), Arg::I64(v.n_red),
                  Arg::Long8(kd), Arg::Long8(ks), Arg::I32(static_cast<int>(v.kdims.size())),
                  Arg::Long8(rd), Arg::Long8(rs), Arg::I32(static_cast<int>(v.rdims.size())),
                  div});
}

// Reduces view `v` of x into `out` (n_out elements). `first` is the kernel of
// the first pass (it may map the elements: sumsq), `rest` the kernel folding
// partial results; the last pass divides by `final_div` (sum family only).
Status RunReduction(OpKernelContext* ctx, DataType dtype, const char* first, const char* rest,
                    const Tensor& x, const ReduceView& v, Tensor* out, double final_div) {
  if (v.n_out == 0) return Status();
  auto div_arg = [&](double d) {
    return dtype == DT_INT64 ? Arg::I64(static_cast<int64_t>(d)) : Arg::F32(static_cast<float>(d));
  };
  const std::string suffix = dtype == DT_INT64 ? "_i64" : "_f32";
  Tensor src = x;
  ReduceView view = v;
  std::string kernel = std::string("rdc_") + first + suffix;
  while (true) {
    const int64 parts = std::max<int64>(1, (view.n_red + kChunk - 1) / kChunk);
    if (parts == 1) return Launch(ctx, kernel, src, *out, view, 1, div_arg(final_div));
    Tensor partial;
    TF_RETURN_IF_ERROR(ctx->allocate_temp(dtype, TensorShape({view.n_out, parts}), &partial));
    TF_RETURN_IF_ERROR(Launch(ctx, kernel, src, partial, view, parts, div_arg(1.0)));
    // Next pass: [n_out, parts] reduced along parts.
    ReduceView next;
    if (view.n_out > 1) {
      next.kdims = {view.n_out};
      next.kstr = {parts};
    }
    next.rdims = {parts};
    next.rstr = {1};
    next.n_out = view.n_out;
    next.n_red = parts;
    view = next;
    src = partial;
    kernel = std::string("rdc_") + rest + suffix;
  }
}

enum class Reducer { kSum, kMean, kMax, kMin, kProd };

// The int32 kernels (every argument in host memory, as TensorFlow's GPU int32
// reductions): out[o] = fold over view `v` of `in`, on the host, in the
// order of the elements. Sum / Prod wrap modulo 2^32 as TensorFlow's CPU
// int32 (its Eigen reducers accumulate in int32); Mean sums in int64 and
// divides by the count, truncated, then narrows to int32 (TensorFlow's
// CASTING_SPECIALIZATION of the mean for int32); an empty Mean gives 0
// (TensorFlow fills the MeanReducer's identity, int32's quiet_NaN(), 0).
template <Reducer R>
void HostReduceInt32(const Tensor& in, const ReduceView& v, Tensor* out) {
  const int32* x = static_cast<const int32*>(in.data());
  int32* y = static_cast<int32*>(out->data());
  const int nk = static_cast<int>(v.kdims.size());
  const int nr = static_cast<int>(v.rdims.size());
  std::vector<int64> kc(nk, 0), rc(nr, 0);
  int64 base = 0;  // input offset of output element o (odometer over kdims)
  for (int64 o = 0; o < v.n_out; ++o) {
    uint32_t acc = 0;
    int64 wide = 0;  // Mean
    int32 ext = 0;
    switch (R) {
      case Reducer::kProd: acc = 1; break;
      case Reducer::kMax: ext = std::numeric_limits<int32>::lowest(); break;
      case Reducer::kMin: ext = std::numeric_limits<int32>::max(); break;
      default: break;
    }
    int64 off = base;
    std::fill(rc.begin(), rc.end(), 0);
    for (int64 r = 0; r < v.n_red; ++r) {
      const int32 e = x[off];
      switch (R) {
        case Reducer::kSum: acc += static_cast<uint32_t>(e); break;
        case Reducer::kMean: wide += e; break;
        case Reducer::kProd: acc *= static_cast<uint32_t>(e); break;
        case Reducer::kMax: ext = std::max(ext, e); break;
        case Reducer::kMin: ext = std::min(ext, e); break;
      }
      for (int k = nr - 1; k >= 0; --k) {
        off += v.rstr[k];
        if (++rc[k] < v.rdims[k]) break;
        off -= v.rstr[k] * v.rdims[k];
        rc[k] = 0;
      }
    }
    switch (R) {
      case Reducer::kMax:
      case Reducer::kMin: y[o] = ext; break;
      case Reducer::kMean:
        y[o] = v.n_red == 0 ? 0 : static_cast<int32>(wide / v.n_red);
        break;
      default: y[o] = static_cast<int32>(acc); break;
    }
    for (int k = nk - 1; k >= 0; --k) {
      base += v.kstr[k];
      if (++kc[k] < v.kdims[k]) break;
      base -= v.kstr[k] * v.kdims[k];
      kc[k] = 0;
    }
  }
}

template <Reducer R>
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& axes = ctx->input(1);  // HostMemory
    const std::vector<int64> index = pdk_opencl::array::HostIndices(axes);
    const int rank = data.dims();
    std::vector<bool> reduced(rank, false);
    for (int64 i : index) {
      OP_REQUIRES(ctx, i >= -rank && i < rank,
                  errors::InvalidArgument("Invalid reduction dimension (", i, " for input with ",
                                          rank, " dimension(s)"));
      const int64 d = i < 0 ? i + rank : i;
      OP_REQUIRES(ctx, !reduced[d],
                  errors::InvalidArgument(
                      "Invalid reduction arguments: Axes contains duplicate dimension: ", d));
      reduced[d] = true;
    }
    TensorShape out_shape;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) {
        out_shape.AddDim(data.dim_size(d));
      } else if (keep_dims_) {
        out_shape.AddDim(1);
      }
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const ReduceView v = Collapse(data.shape(), reduced);
    if (!out->device_memory()) {  // int32: every argument in host memory
      HostReduceInt32<R>(data, v, out);
      return;
    }
    OP_REQUIRES(ctx,
                static_cast<int>(v.kdims.size()) <= kMaxRuns &&
                    static_cast<int>(v.rdims.size()) <= kMaxRuns,
                errors::Unimplemented("OPENCL reductions support up to ", kMaxRuns,
                                      " alternating kept/reduced dimension runs, got input shape ",
                                      data.shape().DebugString()));
    if (v.rdims.empty() && data.NumElements() > 0) {
      // Nothing reduced (no axes, or only axes of size 1): TF copies.
      OP_REQUIRES_OK(ctx, pdk_opencl::CopyTensor(ctx, data, out));
      return;
    }
    const char* first = "sum";
    double div = 1.0;
    switch (R) {
      case Reducer::kSum: first = "sum"; break;
      // An empty reduction divides by 0: NaN, as TensorFlow's 0 / 0.
      case Reducer::kMean: first = "sum"; div = static_cast<double>(v.n_red); break;
      case Reducer::kMax: first = "max"; break;
      case Reducer::kMin: first = "min"; break;
      case Reducer::kProd: first = "prod"; break;
    }
    OP_REQUIRES_OK(ctx, RunReduction(ctx, data.dtype(), first, first, data, v, out, div));
  }

 private:
  bool keep_dims_ = false;
};

// L2Loss: output = sum(t ** 2) / 2 (TensorFlow's l2loss_op.h).
class L2LossOp : public OpKernel {
 public:
  explicit L2LossOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
    ReduceView v;
    if (t.NumElements() != 1) {
      v.rdims = {t.NumElements()};
      v.rstr = {1};
    }
    v.n_red = t.NumElements();
    OP_REQUIRES_OK(ctx, RunReduction(ctx, t.dtype(), "sumsq", "sum", t, v, out, 2.0));
  }
};

}  // namespace

// One reduction kernel: dtype `type`, index dtype `tidx`; `...`: its
// HostMemory arguments (reduction_indices at least, as TensorFlow's GPU
// registrations).
#define PDK_REGISTER_REDUCTION_KERNEL(op, R, type, tidx, ...)                             \
  REGISTER_KERNEL_BUILDER(Name(op)                                                       \
                              .Device(DEVICE_OPENCL)                                     \
                              .TypeConstraint<type>("T")                                 \
                              .TypeConstraint<tidx>("Tidx") __VA_ARGS__,                 \
                          ReductionOp<R>);
#define PDK_REGISTER_REDUCTION(op, R, type)                                               \
  PDK_REGISTER_REDUCTION_KERNEL(op, R, type, int32, .HostMemory("reduction_indices"))     \
  PDK_REGISTER_REDUCTION_KERNEL(op, R, type, int64, .HostMemory("reduction_indices"))

PDK_REGISTER_REDUCTION("Sum", Reducer::kSum, float)
PDK_REGISTER_REDUCTION("Sum", Reducer::kSum, int64)
PDK_REGISTER_REDUCTION("Mean", Reducer::kMean, float)
PDK_REGISTER_REDUCTION("Max", Reducer::kMax, float)
PDK_REGISTER_REDUCTION("Min", Reducer::kMin, float)
PDK_REGISTER_REDUCTION("Prod", Reducer::kProd, float)
#undef PDK_REGISTER_REDUCTION

// int32: every argument in host memory, computed on the host (TensorFlow's
// GPU int32 reductions). Max / Min int32 are TensorFlow's own DEVICE_DEFAULT
// kernels (the same host-memory registration), so not registered here.
#define PDK_REGISTER_REDUCTION_I32_TIDX(op, R, tidx)                                     \
  PDK_REGISTER_REDUCTION_KERNEL(op, R, int32, tidx,                                      \
                                .HostMemory("input")                                     \
                                .HostMemory("reduction_indices")                         \
                                .HostMemory("output"))
#define PDK_REGISTER_REDUCTION_I32(op, R)                                                \
  PDK_REGISTER_REDUCTION_I32_TIDX(op, R, int32)                                          \
  PDK_REGISTER_REDUCTION_I32_TIDX(op, R, int64)
PDK_REGISTER_REDUCTION_I32("Sum", Reducer::kSum)
PDK_REGISTER_REDUCTION_I32("Prod", Reducer::kProd)
PDK_REGISTER_REDUCTION_I32("Mean", Reducer::kMean)
#undef PDK_REGISTER_REDUCTION_I32
#undef PDK_REGISTER_REDUCTION_I32_TIDX
#undef PDK_REGISTER_REDUCTION_KERNEL

REGISTER_KERNEL_BUILDER(Name("L2Loss").Device(DEVICE_OPENCL).TypeConstraint<float>("T"),
                        L2LossOp);

}  // namespace tensorflow
