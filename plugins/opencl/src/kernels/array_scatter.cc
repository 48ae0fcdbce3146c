// ScatterNd, TensorScatterAdd, TensorScatterUpdate and UnsortedSegmentSum on
// OPENCL (cl/array_scatter.cl). Device dtypes: float (all four),
// TensorScatterUpdate also int64 and bool; indices int32 / int64 in device
// memory; ScatterNd's shape and UnsortedSegmentSum's num_segments are
// HostMemory as in TensorFlow's GPU registrations. int32 values: every
// argument in host memory, computed on the host.
//   ScatterNd:           out = 0; out[indices[m]] += updates[m]
//   TensorScatterAdd:    out = tensor; out[indices[m]] += updates[m]
//   TensorScatterUpdate: out = tensor; out[indices[m]] = updates[m]
//   UnsortedSegmentSum:  out = 0; out[segment_ids[m]] += data[m]
// Float sums use a compare-and-swap loop: their order is not fixed (as on
// TensorFlow's GPU). Out-of-range indices: skipped on the device, as
// TensorFlow's GPU kernels do (its CPU kernels raise InvalidArgument); the
// host (int32) kernels raise the CPU kernels' InvalidArgument. Negative
// segment ids are dropped (TensorFlow's semantics on every device).
// Semantics and error wording: TensorFlow's scatter_nd_op.cc and
// segment_reduction_ops_impl.h.
#include <string>
#include <vector>

#include "array_util.h"

namespace tensorflow {

namespace {

// Scatters `updates` ([M, slice]) into `out` (rows over dims `d`, then
// slice) at rows `indices` ([M, K = d.size()]). *bad: the first update row
// whose index is out of range on the host (int32), else -1.
void Scatter(OpKernelContext* c, const Tensor& updates, const Tensor& indices, Tensor* out,
             const std::vector<int64>& d, int64 slice, bool add, int64* bad) {
  *bad = -1;
  const int64 n = updates.NumElements();
  if (n == 0 || slice == 0) return;
  const int k = static_cast<int>(d.size());
  if (!out->device_memory()) {  // int32: on the host
    const std::vector<int64> v = HostIndices(indices);
    const int32* u = static_cast<const int32*>(updates.data());
    int32* o = static_cast<int32*>(out->data());
    for (int64 m = 0; m < n / slice; ++m) {
      int64 row = 0;
      for (int j = 0; j < k; ++j) {
        const int64 x = v[m * k + j];
        if (x < 0 || x >= d[j]) {
          *bad = m;
          return;
        }
        row = row * d[j] + x;
      }
      for (int64 r = 0; r < slice; ++r) {
        if (add)
          o[row * slice + r] += u[m * slice + r];
        else
          o[row * slice + r] = u[m * slice + r];
      }
    }
    return;
  }
  OP_REQUIRES(c, k <= 8,
              errors::Unimplemented("scatter on OPENCL of index depth ", k, " (at most 8)"));
  const std::string isuf = indices.dtype() == DT_INT32 ? "i32" : "i64";
  const std::string name =
      add ? "array_scatter_add_f32_" + isuf
          : SizedKernelName("array_scatter_set", updates.dtype()) + "_" + isuf;
  int64_t d8[8];
  ToLong8(d, d8);
  OP_REQUIRES_OK(c, Enqueue(c, name, n,
                            {updates, indices, *out, Arg::I64(n),
                             Arg::I32(static_cast<int32_t>(k)), Arg::Long8(d8),
                             Arg::I64(slice)}));
}

// "indices[0,1] = [2, 5]": the CPU kernels' wording of update row m's index.
std::string BadIndex(const Tensor& indices, int64 m);

std::string IndexRow(const Tensor& indices, int64 m) {
  const std::vector<int64> v = HostIndices(indices);
  const int64 k = indices.dim_size(indices.dims() - 1);
  std::string s;
  for (int64 j = 0; j < k; ++j) s += (j ? ", " : "") + std::to_string(v[m * k + j]);
  return s;
}

// "[1,2]": the coordinates of flat index `i` in `shape`.
std::string Coordinates(const TensorShape& shape, int64 i) {
  std::vector<int64> c(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    c[d] = shape.dim_size(d) ? i % shape.dim_size(d) : 0;
    i = shape.dim_size(d) ? i / shape.dim_size(d) : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < c.size(); ++d) s += (d ? "," : "") + std::to_string(c[d]);
  return s + "]";
}

std::string BadIndex(const Tensor& indices, int64 m) {
  TensorShape outer(indices.shape());
  outer.RemoveLastDims(1);
  return "indices" + Coordinates(outer, m) + " = [" + IndexRow(indices, m) + "]";
}

// ScatterNd's and TensorScatter*'s shape checks (scatter_nd_op.cc's
// PrepareAndValidateInputs): out rows over shape[0..K), slice the rest.
Status PrepareScatter(const TensorShape& shape, const Tensor& indices, const Tensor& updates,
                      std::vector<int64>* d, int64* slice) {
  if (shape.dims() < 1)
    return errors::InvalidArgument("Output must be at least 1-D, got shape: ",
                                   shape.DebugString());
  const int64 k = indices.dim_size(indices.dims() - 1);
  if (k > shape.dims())
    return errors::InvalidArgument("Index innermost dimension length must be <= output rank; saw: ",
                                   k, " vs. ", shape.dims());
  d->clear();
  for (int i = 0; i < k; ++i) d->push_back(shape.dim_size(i));
  *slice = 1;
  for (int i = static_cast<int>(k); i < shape.dims(); ++i) *slice *= shape.dim_size(i);
  return Status();
}

// The rank checks ScatterNd and TensorScatter* start with (scatter_nd_op.cc).
Status CheckRanks(const Tensor& indices, const Tensor& updates) {
  if (indices.dims() < 1)
    return errors::InvalidArgument("Indices shape must have rank at least one. Found:",
                                   indices.shape().DebugString());
  if (updates.dims() < 1)
    return errors::InvalidArgument("Updates shape must have rank at least one. Found:",
                                   updates.shape().DebugString());
  return Status();
}

// An output with no elements takes no indices and updates. `has_output`: the
// op's own test of that (ScatterNd: a non-empty shape vector; TensorScatter*:
// a tensor of at least one element).
Status CheckOutputFits(bool has_output, const Tensor& indices, const Tensor& updates) {
  if (!has_output && (indices.NumElements() != 0 || updates.NumElements() != 0))
    return errors::InvalidArgument("Indices and updates specified for empty output shape");
  return Status();
}

// Scatter, then the CPU kernels' error for an out-of-range host index.
void ScatterChecked(OpKernelContext* c, const Tensor& updates, const Tensor& indices, Tensor* out,
                    const TensorShape& shape, const std::vector<int64>& d, int64 slice, bool add) {
  int64 bad = -1;
  Scatter(c, updates, indices, out, d, slice, add, &bad);
  if (!c->status().ok()) return;
  OP_REQUIRES(c, bad < 0,
              errors::InvalidArgument(BadIndex(indices, bad), " does not index into shape ",
                                      shape.DebugString()));
}

}  // namespace

// TensorFlow's ScatterNd: (indices, updates, shape).
class ScatterNdOp : public OpKernel {
 public:
  explicit ScatterNdOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& indices = c->input(0);
    const Tensor& updates = c->input(1);
    const Tensor& shape_t = c->input(2);
    OP_REQUIRES_OK(c, CheckRanks(indices, updates));
    TensorShape shape;
    OP_REQUIRES_OK(c, TensorShapeUtils::MakeShape(HostIndices(shape_t), &shape));
    OP_REQUIRES_OK(c, CheckOutputFits(shape_t.NumElements() > 0, indices, updates));
    const int64 outer = indices.dims() - 1;
    for (int i = 0; i < outer; ++i) {
      OP_REQUIRES(c, i < updates.dims() && indices.dim_size(i) == updates.dim_size(i),
                  errors::InvalidArgument("Dimensions [0,", outer, ") of indices[shape=",
                                          indices.shape().DebugString(),
                                          "] must match dimensions [0,", outer,
                                          ") of updates[shape=", updates.shape().DebugString(),
                                          "]"));
    }
    const int64 ix = indices.dim_size(static_cast<int>(outer));
    bool inner_ok = updates.dims() - outer == shape.dims() - ix;
    for (int i = 0; inner_ok && i + outer < updates.dims(); ++i)
      inner_ok = updates.dim_size(i + outer) == shape.dim_size(ix + i);
    OP_REQUIRES(c, inner_ok,
                errors::InvalidArgument("Dimensions [", ix, ",", shape.dims(), ") of input[shape=",
                                        shape.DebugString(), "] must match dimensions [", outer,
                                        ",", updates.dims(), ") of updates[shape=",
                                        updates.shape().DebugString(), "]"));
    OP_REQUIRES(c, shape_t.dims() == 1, errors::InvalidArgument("Shape must be a vector"));
    std::vector<int64> d;
    int64 slice = 0;
    OP_REQUIRES_OK(c, PrepareScatter(shape, indices, updates, &d, &slice));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const uint64_t zero = 0;
    OP_REQUIRES_OK(c, FillElements(c, out, &zero));
    ScatterChecked(c, updates, indices, out, shape, d, slice, true);
  }
};

// TensorFlow's TensorScatterAdd / TensorScatterUpdate: (tensor, indices, updates).
template <bool add>
class TensorScatterOp : public OpKernel {
 public:
  explicit TensorScatterOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& indices = c->input(1);
    const Tensor& updates = c->input(2);
    OP_REQUIRES_OK(c, CheckRanks(indices, updates));
    const TensorShape& shape = input.shape();
    OP_REQUIRES_OK(c, CheckOutputFits(shape.num_elements() > 0, indices, updates));
    const int64 outer = indices.dims() - 1;
    for (int i = 0; i < outer; ++i)
      OP_REQUIRES(c, i < updates.dims() && indices.dim_size(i) == updates.dim_size(i),
                  errors::InvalidArgument("Outer dimensions of indices and update must match. "
                                          "Indices shape: ",
                                          indices.shape().DebugString(),
                                          ", updates shape:", updates.shape().DebugString()));
    const int64 ix = indices.dim_size(static_cast<int>(outer));
    OP_REQUIRES(c, updates.dims() - outer == shape.dims() - ix,
                errors::InvalidArgument("Inner dimensions of output shape must match inner "
                                        "dimensions of updates shape. Output: ",
                                        shape.DebugString(),
                                        " updates: ", updates.shape().DebugString()));
    for (int i = 0; i + outer < updates.dims(); ++i)
      OP_REQUIRES(c, updates.dim_size(i + outer) == shape.dim_size(ix + i),
                  errors::InvalidArgument("The inner ", shape.dims() - ix,
                                          " dimensions of output.shape=", shape.DebugString(),
                                          " must match the inner ", updates.dims() - outer,
                                          " dimensions of updates.shape=",
                                          updates.shape().DebugString()));
    std::vector<int64> d;
    int64 slice = 0;
    OP_REQUIRES_OK(c, PrepareScatter(shape, indices, updates, &d, &slice));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->forward_input_or_allocate_output({0}, 0, shape, &out));
    if (out->data() != input.data()) OP_REQUIRES_OK(c, CopyElements(c, input, out));
    ScatterChecked(c, updates, indices, out, shape, d, slice, add);
  }
};

// TensorFlow's UnsortedSegmentSum: (data, segment_ids, num_segments).
class UnsortedSegmentSumOp : public OpKernel {
 public:
  explicit UnsortedSegmentSumOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& ids = c->input(1);
    const Tensor& num_t = c->input(2);
    OP_REQUIRES(c, TensorShapeUtils::IsScalar(num_t.shape()),
                errors::InvalidArgument("num_segments should be a scalar, not shape ",
                                        num_t.shape().DebugString()));
    OP_REQUIRES(c, TensorShapeUtils::StartsWith(data.shape(), ids.shape()),
                errors::InvalidArgument("data.shape = ", data.shape().DebugString(),
                                        " does not start with segment_ids.shape = ",
                                        ids.shape().DebugString()));
    const int64 num = HostIndices(num_t)[0];
    OP_REQUIRES(c, num >= 0,
                errors::InvalidArgument("Input num_segments == ", num, " must not be negative."));
    TensorShape shape;
    OP_REQUIRES_OK(c, shape.AddDimWithStatus(num));
    int64 slice = 1;
    for (int i = ids.dims(); i < data.dims(); ++i) {
      OP_REQUIRES_OK(c, shape.AddDimWithStatus(data.dim_size(i)));
      slice *= data.dim_size(i);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const uint64_t zero = 0;
    OP_REQUIRES_OK(c, FillElements(c, out, &zero));
    if (!out->device_memory()) {  // int32: on the host; negative ids dropped
      const std::vector<int64> v = HostIndices(ids);
      for (size_t m = 0; m < v.size(); ++m)
        OP_REQUIRES(c, v[m] < num,
                    errors::InvalidArgument("segment_ids", Coordinates(ids.shape(), m), " = ",
                                            v[m], " is out of range [0, ", num, ")"));
      const int32* u = static_cast<const int32*>(data.data());
      int32* o = static_cast<int32*>(out->data());
      for (size_t m = 0; m < v.size(); ++m) {
        if (v[m] < 0) continue;
        for (int64 r = 0; r < slice; ++r) o[v[m] * slice + r] += u[m * slice + r];
      }
      return;
    }
    int64 bad = -1;
    Scatter(c, data, ids, out, {num}, slice, true, &bad);
  }
};

// One scatter kernel: dtype T, index dtype I; `...`: its HostMemory arguments.
#define PDK_SCATTER_KERNEL(op, T, I, CLASS, ...)                                  \
  REGISTER_KERNEL_BUILDER(Name(op)                                                \
                              .Device(DEVICE_OPENCL)                              \
                              .TypeConstraint<T>("T")                             \
                              .TypeConstraint<I>("Tindices") __VA_ARGS__,         \
                          CLASS);
// int32 TensorScatter*: every argument in host memory.
#define PDK_TENSOR_SCATTER_HOST(op, I, CLASS)                                     \
  PDK_SCATTER_KERNEL(op, int32, I, CLASS,                                         \
                     .HostMemory("tensor")                                        \
                     .HostMemory("indices")                                       \
                     .HostMemory("updates")                                       \
                     .HostMemory("output"))
#define PDK_REGISTER_I(I)                                                         \
  PDK_SCATTER_KERNEL("ScatterNd", float, I, ScatterNdOp, .HostMemory("shape"))    \
  PDK_SCATTER_KERNEL("TensorScatterAdd", float, I, TensorScatterOp<true>, )       \
  PDK_SCATTER_KERNEL("TensorScatterUpdate", float, I, TensorScatterOp<false>, )   \
  PDK_SCATTER_KERNEL("TensorScatterUpdate", ::tensorflow::int64, I,               \
                     TensorScatterOp<false>, )                                    \
  PDK_SCATTER_KERNEL("TensorScatterUpdate", bool, I, TensorScatterOp<false>, )    \
  PDK_SCATTER_KERNEL("ScatterNd", int32, I, ScatterNdOp,                          \
                     .HostMemory("indices")                                       \
                     .HostMemory("updates")                                       \
                     .HostMemory("shape")                                         \
                     .HostMemory("output"))                                       \
  PDK_TENSOR_SCATTER_HOST("TensorScatterAdd", I, TensorScatterOp<true>)           \
  PDK_TENSOR_SCATTER_HOST("TensorScatterUpdate", I, TensorScatterOp<false>)
PDK_REGISTER_I(int32)
PDK_REGISTER_I(::tensorflow::int64)
#undef PDK_REGISTER_I
#undef PDK_TENSOR_SCATTER_HOST
#undef PDK_SCATTER_KERNEL

// UnsortedSegmentSum: dtype T, ids I, num_segments N; `...`: HostMemory arguments.
#define PDK_SEGMENT_KERNEL(T, I, N, ...)                                          \
  REGISTER_KERNEL_BUILDER(Name("UnsortedSegmentSum")                              \
                              .Device(DEVICE_OPENCL)                              \
                              .TypeConstraint<T>("T")                             \
                              .TypeConstraint<I>("Tindices")                      \
                              .TypeConstraint<N>("Tnumsegments") __VA_ARGS__,     \
                          UnsortedSegmentSumOp);
#define PDK_REGISTER_SEG(I, N)                                                    \
  PDK_SEGMENT_KERNEL(float, I, N, .HostMemory("num_segments"))                    \
  PDK_SEGMENT_KERNEL(int32, I, N,                                                 \
                     .HostMemory("data")                                          \
                     .HostMemory("segment_ids")                                   \
                     .HostMemory("num_segments")                                  \
                     .HostMemory("output"))
PDK_REGISTER_SEG(int32, int32)
PDK_REGISTER_SEG(int32, ::tensorflow::int64)
PDK_REGISTER_SEG(::tensorflow::int64, int32)
PDK_REGISTER_SEG(::tensorflow::int64, ::tensorflow::int64)
#undef PDK_REGISTER_SEG
#undef PDK_SEGMENT_KERNEL

}  // namespace tensorflow
