// The array ops' shared pieces (array_util.h).
#include "array_util.h"

#include <cstring>

#include "pdk/tf/op_kernel.h"

namespace pdk_opencl {
namespace array {

std::vector<int64> RowMajorStrides(const TensorShape& shape) {
  std::vector<int64> s(shape.dims());
  int64 stride = 1;
  for (int d = shape.dims() - 1; d >= 0; --d) {
    s[d] = stride;
    stride *= shape.dim_size(d);
  }
  return s;
}

std::string SizedKernelName(const char* name, DataType dtype) {
  const char* suffix = "unsupported";
  switch (tensorflow::DataTypeSize(dtype)) {
    case 1: suffix = "u8"; break;
    case 4: suffix = "u32"; break;
    case 8: suffix = "u64"; break;
    default: break;
  }
  return std::string(name) + "_" + suffix;
}

void ToLong8(const std::vector<int64>& v, int64_t (&out)[8]) {
  for (int i = 0; i < 8; ++i) out[i] = i < static_cast<int>(v.size()) ? v[i] : 0;
}

static void HostStridedCopy(const Tensor& src, const Tensor& dst, const StridedView& v) {
  const size_t es = static_cast<size_t>(tensorflow::DataTypeSize(src.dtype()));
  const char* s = static_cast<const char*>(src.data());
  char* d = static_cast<char*>(dst.data());
  const int rank = static_cast<int>(v.dims.size());
  const int64 n = v.NumElements();
  std::vector<int64> c(rank, 0);
  int64 si = v.src_off, di = v.dst_off;
  for (int64 i = 0; i < n; ++i) {
    std::memcpy(d + di * es, s + si * es, es);
    for (int k = rank - 1; k >= 0; --k) {  // the next coordinates (an odometer)
      si += v.src_strides[k];
      di += v.dst_strides[k];
      if (++c[k] < v.dims[k]) break;
      si -= v.src_strides[k] * v.dims[k];
      di -= v.dst_strides[k] * v.dims[k];
      c[k] = 0;
    }
  }
}

// `v` (1 or 2 dims, unit inner strides, rows not overlapping) by
// clEnqueueCopyBuffer / clEnqueueCopyBufferRect on the launch's stream.
static Status BufferCopy(OpKernelContext* ctx, const Tensor& src, const Tensor& dst,
                         const StridedView& v) {
  PDK_ASSIGN_OR_RETURN(LaunchTarget t, Target(ctx));
  const size_t es = static_cast<size_t>(tensorflow::DataTypeSize(src.dtype()));
  cl_mem sb = nullptr, db = nullptr;
  uint64_t so = 0, dof = 0;
  TF_RETURN_IF_ERROR(t.device->Resolve(src.data(), &sb, &so));
  TF_RETURN_IF_ERROR(t.device->Resolve(dst.data(), &db, &dof));
  so += static_cast<uint64_t>(v.src_off) * es;
  dof += static_cast<uint64_t>(v.dst_off) * es;
  if (v.dims.size() == 1) {
    PDK_CL_RETURN_IF_ERROR(clEnqueueCopyBuffer(t.stream->queue(), sb, db, so, dof,
                                               static_cast<size_t>(v.dims[0]) * es, 0, nullptr,
                                               nullptr),
                           "clEnqueueCopyBuffer");
    return Status();
  }
  if (sb == db) {
    // One buffer (sub-allocations): OpenCL forbids a rectangular copy within
    // a buffer with different pitches; a 2-D kernel over [rows, row] instead.
    return Enqueue2D(ctx, SizedKernelName("array_copy2d", src.dtype()),
                     static_cast<uint64_t>(v.dims[1]), static_cast<uint64_t>(v.dims[0]),
                     {src, dst, Arg::I64(v.src_strides[0]), Arg::I64(v.src_off),
                      Arg::I64(v.dst_strides[0]), Arg::I64(v.dst_off)});
  }
  // All rows but the last as a rectangle (drivers may bound-check the last
  // row's whole pitch), then the last row.
  const size_t row = static_cast<size_t>(v.dims[1]) * es;
  const size_t rows = static_cast<size_t>(v.dims[0]);
  const size_t sp = static_cast<size_t>(v.src_strides[0]) * es;
  const size_t dp = static_cast<size_t>(v.dst_strides[0]) * es;
  if (rows > 1) {
    const size_t src_origin[3] = {static_cast<size_t>(so), 0, 0};
    const size_t dst_origin[3] = {static_cast<size_t>(dof), 0, 0};
    const size_t region[3] = {row, rows - 1, 1};
    PDK_CL_RETURN_IF_ERROR(clEnqueueCopyBufferRect(t.stream->queue(), sb, db, src_origin,
                                                   dst_origin, region, sp, 0, dp, 0, 0, nullptr,
                                                   nullptr),
                           "clEnqueueCopyBufferRect");
  }
  PDK_CL_RETURN_IF_ERROR(clEnqueueCopyBuffer(t.stream->queue(), sb, db, so + (rows - 1) * sp,
                                             dof + (rows - 1) * dp, row, 0, nullptr, nullptr),
                         "clEnqueueCopyBuffer");
  return Status();
}

Status StridedCopy(OpKernelContext* ctx, const Tensor& src, const Tensor& dst, StridedView v) {
  const int64 n = v.NumElements();
  if (n == 0) return Status();
  // Drop unit dims; merge a dim into its outer neighbour when both strides
  // continue it.
  StridedView m;
  m.src_off = v.src_off;
  m.dst_off = v.dst_off;
  for (size_t k = 0; k < v.dims.size(); ++k) {
    if (v.dims[k] == 1) continue;
    if (!m.dims.empty()) {
      const size_t p = m.dims.size() - 1;
      if (m.src_strides[p] == v.src_strides[k] * v.dims[k] &&
          m.dst_strides[p] == v.dst_strides[k] * v.dims[k]) {
        m.dims[p] *= v.dims[k];
        m.src_strides[p] = v.src_strides[k];
        m.dst_strides[p] = v.dst_strides[k];
        continue;
      }
    }
    m.Add(v.dims[k], v.src_strides[k], v.dst_strides[k]);
  }
  if (!dst.device_memory()) {  // an int32 kernel: every argument in host memory
    if (src.device_memory())
      return tensorflow::errors::Internal("a strided copy from device to host memory");
    HostStridedCopy(src, dst, m);
    return Status();
  }
  // Contiguous rows: the driver's buffer copies (a plain or a rectangular
  // one) instead of a kernel.
  const size_t rank = m.dims.size();
  if (rank >= 1 && rank <= 2 && m.src_strides[rank - 1] == 1 && m.dst_strides[rank - 1] == 1 &&
      (rank == 1 || (m.src_strides[0] >= m.dims[1] && m.dst_strides[0] >= m.dims[1])))
    return BufferCopy(ctx, src, dst, m);
  // A batch of matrix transposes: through __local tiles.
  if ((rank == 2 || rank == 3) && m.dst_strides[rank - 1] == 1 &&
      m.dst_strides[rank - 2] == m.dims[rank - 1] && m.src_strides[rank - 2] == 1 &&
      m.src_strides[rank - 1] == m.dims[rank - 2] &&
      (rank == 2 || (m.src_strides[0] == m.dims[1] * m.dims[2] &&
                     m.dst_strides[0] == m.dims[1] * m.dims[2]))) {
    constexpr int64 kTile = 16;  // cl/array.cl PDK_ARRAY_TILE
    const int64 d0 = m.dims[rank - 2], d1 = m.dims[rank - 1];
    const int64 batch = rank == 3 ? m.dims[0] : 1;
    const int64 tiles0 = (d0 + kTile - 1) / kTile, tiles1 = (d1 + kTile - 1) / kTile;
    return Enqueue(ctx, SizedKernelName("array_transpose", src.dtype()),
                   static_cast<uint64_t>(tiles0 * tiles1 * batch * kTile * kTile),
                   {src, dst, Arg::I64(d0), Arg::I64(d1), Arg::I64(tiles0), Arg::I64(tiles1),
                    Arg::I64(m.src_off), Arg::I64(m.dst_off)},
                   static_cast<size_t>(kTile * kTile));
  }
  if (m.dims.size() > 8)
    return tensorflow::errors::Unimplemented("an OPENCL strided copy of ", m.dims.size(),
                                             " non-contiguous dims (at most 8)");
  int64_t dims[8], ss[8], ds[8];
  ToLong8(m.dims, dims);
  ToLong8(m.src_strides, ss);
  ToLong8(m.dst_strides, ds);
  return Enqueue(ctx, SizedKernelName("array_copy", src.dtype()), n,
                 {src, dst, Arg::I64(n), Arg::I32(static_cast<int32_t>(m.dims.size())),
                  Arg::Long8(dims), Arg::Long8(ss), Arg::I64(m.src_off), Arg::Long8(ds),
                  Arg::I64(m.dst_off)});
}

std::vector<int64> HostIndices(const Tensor& t) {
  std::vector<int64> v;
  const int64 n = t.NumElements();
  v.reserve(n);
  if (t.dtype() == tensorflow::DT_INT32) {
    auto f = t.flat<tensorflow::int32>();
    for (int64 i = 0; i < n; ++i) v.push_back(f(i));
  } else if (t.dtype() == tensorflow::DT_UINT8) {
    auto f = t.flat<tensorflow::uint8>();
    for (int64 i = 0; i < n; ++i) v.push_back(f(i));
  } else {
    auto f = t.flat<int64>();
    for (int64 i = 0; i < n; ++i) v.push_back(f(i));
  }
  return v;
}

Status CopyElements(OpKernelContext* ctx, const Tensor& src, Tensor* dst) {
  const size_t bytes = src.TotalBytes();
  if (bytes != dst->TotalBytes())
    return tensorflow::errors::Internal("a copy of ", bytes, " bytes into ", dst->TotalBytes());
  if (bytes == 0) return Status();
  if (src.device_memory() && dst->device_memory()) return CopyTensor(ctx, src, dst);
  if (!src.device_memory() && !dst->device_memory()) {
    std::memcpy(dst->data(), src.data(), bytes);
    return Status();
  }
  // Between host and device memory: a blocking transfer on the launch's
  // (in-order) queue, after the work already enqueued there.
  PDK_ASSIGN_OR_RETURN(LaunchTarget target, Target(ctx));
  const Tensor& dev = src.device_memory() ? src : *dst;
  cl_mem buf = nullptr;
  uint64_t off = 0;
  TF_RETURN_IF_ERROR(target.device->Resolve(dev.data(), &buf, &off));
  if (src.device_memory()) {
    PDK_CL_RETURN_IF_ERROR(clEnqueueReadBuffer(target.stream->queue(), buf, CL_TRUE, off, bytes,
                                               dst->data(), 0, nullptr, nullptr),
                           "clEnqueueReadBuffer");
  } else {
    PDK_CL_RETURN_IF_ERROR(clEnqueueWriteBuffer(target.stream->queue(), buf, CL_TRUE, off, bytes,
                                                src.data(), 0, nullptr, nullptr),
                           "clEnqueueWriteBuffer");
  }
  return Status();
}

Status OnDevice(OpKernelContext* ctx, const Tensor& t, Tensor* out) {
  if (t.device_memory() || t.NumElements() == 0) {
    *out = t;
    return Status();
  }
  TF_RETURN_IF_ERROR(ctx->allocate_temp(t.dtype(), t.shape(), out));
  PDK_ASSIGN_OR_RETURN(LaunchTarget target, Target(ctx));
  cl_mem buf = nullptr;
  uint64_t off = 0;
  TF_RETURN_IF_ERROR(target.device->Resolve(out->data(), &buf, &off));
  PDK_CL_RETURN_IF_ERROR(clEnqueueWriteBuffer(target.stream->queue(), buf, CL_TRUE, off,
                                              t.TotalBytes(), t.data(), 0, nullptr, nullptr),
                         "clEnqueueWriteBuffer");
  return Status();
}

Status FillElements(OpKernelContext* ctx, Tensor* t, const void* value) {
  const uint64_t bytes = t->TotalBytes();
  if (bytes == 0) return Status();
  const size_t es = static_cast<size_t>(tensorflow::DataTypeSize(t->dtype()));
  if (!t->device_memory()) {
    char* d = static_cast<char*>(t->data());
    for (uint64_t i = 0; i < bytes; i += es) std::memcpy(d + i, value, es);
    return Status();
  }
  PDK_ASSIGN_OR_RETURN(LaunchTarget target, Target(ctx));
  cl_mem buf = nullptr;
  uint64_t off = 0;
  TF_RETURN_IF_ERROR(target.device->Resolve(t->data(), &buf, &off));
  PDK_CL_RETURN_IF_ERROR(
      clEnqueueFillBuffer(target.stream->queue(), buf, value, es, off, bytes, 0, nullptr,
                          nullptr),
      "clEnqueueFillBuffer");
  return Status();
}

}  // namespace array
}  // namespace pdk_opencl
