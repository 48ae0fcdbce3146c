// Pack (tf.stack) and Unpack (tf.unstack): byte-level row copies
// (dtype-agnostic: the element size comes from the dtype), split over the
// device's thread pool.
#include <algorithm>
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

// One strided byte stream: `rows` times, copy `bytes` from src + r*src_stride
// to dst + r*dst_stride.
struct Stream {
  char* dst;
  int64_t dst_stride;
  const char* src;
  int64_t src_stride;
  int64_t bytes;
};

// Runs every stream for rows [0, rows) on the thread pool: by row when there
// are many rows, else by blocks of at most kBlock bytes.
void CopyStreams(const Eigen::ThreadPoolDevice& dev, int64_t rows,
                 const std::vector<Stream>& streams) {
  constexpr int64_t kBlock = 64 << 10;
  int64_t row_bytes = 0;
  for (const Stream& s : streams) row_bytes += s.bytes;
  if (rows == 0 || row_bytes == 0) return;
  auto copy_rows = [&](Eigen::Index first, Eigen::Index last) {
    for (Eigen::Index r = first; r < last; ++r)
      for (const Stream& s : streams)
        if (s.bytes) std::memcpy(s.dst + r * s.dst_stride, s.src + r * s.src_stride, s.bytes);
  };
  if (rows * row_bytes <= kBlock) return copy_rows(0, rows);
  if (rows >= 4 * dev.numThreads()) {
    dev.parallelFor(rows, Eigen::TensorOpCost(row_bytes, row_bytes, 0), copy_rows);
    return;
  }
  struct Task {
    char* dst;
    const char* src;
    int64_t n;
  };
  std::vector<Task> tasks;
  for (int64_t r = 0; r < rows; ++r)
    for (const Stream& s : streams)
      for (int64_t off = 0; off < s.bytes; off += kBlock)
        tasks.push_back({s.dst + r * s.dst_stride + off, s.src + r * s.src_stride + off,
                         std::min(kBlock, s.bytes - off)});
  dev.parallelFor(static_cast<Eigen::Index>(tasks.size()),
                  Eigen::TensorOpCost(kBlock, kBlock, 0),
                  [&](Eigen::Index first, Eigen::Index last) {
                    for (Eigen::Index i = first; i < last; ++i)
                      std::memcpy(tasks[i].dst, tasks[i].src, tasks[i].n);
                  });
}

// Pack(values[N]; axis): N same-shape tensors stacked along a new dimension
// `axis` in [-(rank+1), rank+1).
class PackOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.Get("axis", &axis_); }
  pdk::Status Compute(pdk::Context& ctx) const {
    const int n = ctx.num_inputs();
    std::vector<pdk::Tensor> values;
    values.reserve(n);
    for (int i = 0; i < n; ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor v, ctx.input(i));
      values.push_back(std::move(v));
    }
    const pdk::Shape s0 = values[0].shape();
    const int rank = s0.rank();
    int64_t axis = axis_;
    if (axis < -rank - 1 || axis > rank)
      return pdk::InvalidArgument(ctx.op(), ": axis ", axis, " is out of range [", -rank - 1,
                                  ", ", rank + 1, ") for values of shape ", s0);
    if (axis < 0) axis += rank + 1;
    for (int i = 1; i < n; ++i) {
      const pdk::Shape si = values[i].shape();
      if (si != s0)
        return pdk::InvalidArgument(ctx.op(), ": shapes of all values must match: values[0].shape ",
                                    s0, " != values[", i, "].shape ", si);
    }
    std::vector<int64_t> out_dims = s0.dims();
    out_dims.insert(out_dims.begin() + axis, n);
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape(out_dims)));
    if (out.num_elements() == 0) return pdk::Status::OK();

    const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(ctx.output_dtype(0)));
    int64_t outer = 1, inner = elem;  // inner: bytes of one value per outer row
    for (int d = 0; d < axis; ++d) outer *= s0[d];
    for (int d = axis; d < rank; ++d) inner *= s0[d];
    char* dst = static_cast<char*>(out.raw_data());
    std::vector<Stream> streams;
    for (int i = 0; i < n; ++i)
      streams.push_back({dst + i * inner, n * inner,
                         static_cast<const char*>(values[i].raw_data()), inner, inner});
    CopyStreams(pdk_compute::Device(ctx), outer, streams);
    return pdk::Status::OK();
  }

 private:
  int64_t axis_ = 0;
};

// Unpack(value; num, axis): `num` tensors, the slices of `value` along `axis`
// in [-rank, rank), whose size must be num.
class UnpackOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.Get("axis", &axis_); }
  pdk::Status Compute(pdk::Context& ctx) const {
    const int num = ctx.num_outputs();
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    const pdk::Shape in = x.shape();
    const int rank = in.rank();
    int64_t axis = axis_;
    if (axis < -rank || axis >= rank)
      return pdk::InvalidArgument(ctx.op(), ": axis ", axis, " is out of range [", -rank, ", ",
                                  rank, ") for value of shape ", in);
    if (axis < 0) axis += rank;
    if (in[axis] != num)
      return pdk::InvalidArgument(ctx.op(), ": value.shape[", axis, "] must equal num (", num,
                                  "), got shape ", in);
    std::vector<int64_t> out_dims = in.dims();
    out_dims.erase(out_dims.begin() + axis);
    const pdk::Shape out_shape(out_dims);
    std::vector<pdk::Tensor> outs;
    for (int i = 0; i < num; ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor o, ctx.allocate_output(i, out_shape));
      outs.push_back(std::move(o));
    }
    if (out_shape.num_elements() == 0) return pdk::Status::OK();

    const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(ctx.input_dtype(0)));
    int64_t outer = 1, inner = elem;  // inner: bytes of one output per outer row
    for (int d = 0; d < axis; ++d) outer *= in[d];
    for (int d = axis + 1; d < rank; ++d) inner *= in[d];
    const char* src = static_cast<const char*>(x.raw_data());
    std::vector<Stream> streams;
    for (int i = 0; i < num; ++i)
      streams.push_back({static_cast<char*>(outs[i].raw_data()), inner, src + i * inner,
                         num * inner, inner});
    CopyStreams(pdk_compute::Device(ctx), outer, streams);
    return pdk::Status::OK();
  }

 private:
  int64_t axis_ = 0;
};

}  // namespace

PDK_REGISTER_KERNELS(Pack, r) {
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                                 bool, uint8_t, int8_t, int16_t>{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     r.Add(pdk::KernelDef<PackOp>("Pack").Type<T>("T"));
                     r.Add(pdk::KernelDef<UnpackOp>("Unpack").Type<T>("T"));
                   });
}

}  // namespace pdk_kernels
