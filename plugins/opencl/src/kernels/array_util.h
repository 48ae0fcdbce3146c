// What the array ops (src/kernels/array_*.cc) share: a strided view of up to
// 8 dims and its copy on the device (cl/array.cl's array_copy), kernel names
// by element size, host index reading and host -> device uploads.
#ifndef PDK_OPENCL_KERNELS_ARRAY_UTIL_H_
#define PDK_OPENCL_KERNELS_ARRAY_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "launch.h"

namespace pdk_opencl {
namespace array {

using tensorflow::int64;
using tensorflow::Status;
using tensorflow::TensorShape;

// A copy of dims[0..rank) elements: element c (coordinates) goes from
// src[src_off + sum c_k src_strides_k] to dst[dst_off + sum c_k dst_strides_k]
// (offsets and strides in elements of the tensors' own offsets).
struct StridedView {
  std::vector<int64> dims, src_strides, dst_strides;
  int64 src_off = 0, dst_off = 0;
  void Add(int64 dim, int64 src_stride, int64 dst_stride) {
    dims.push_back(dim);
    src_strides.push_back(src_stride);
    dst_strides.push_back(dst_stride);
  }
  int64 NumElements() const {
    int64 n = 1;
    for (int64 d : dims) n *= d;
    return n;
  }
};

// Row-major strides of `shape` (elements).
std::vector<int64> RowMajorStrides(const TensorShape& shape);

// Enqueues the copy of `v` from src to dst (same dtype). Dims of size 1 are
// dropped and contiguous neighbours merged first; a view still of more than 8
// dims is Unimplemented. Contiguous views (1 dim, or rows of contiguous
// elements) use the driver's buffer copies or a 2-D row kernel. Host tensors
// (the int32 kernels, every argument HostMemory as TensorFlow's GPU int32
// kernels) are copied on the host, now.
Status StridedCopy(OpKernelContext* ctx, const Tensor& src, const Tensor& dst, StridedView v);

// "array_copy_u32": the kernel for the element size of `dtype`.
std::string SizedKernelName(const char* name, DataType dtype);

// Values of an int32 / int64 / uint8 host tensor, flattened.
std::vector<int64> HostIndices(const Tensor& t);

// `t` in device memory: itself when it is, else a device copy of the host
// tensor (written before this returns; blocking).
Status OnDevice(OpKernelContext* ctx, const Tensor& t, Tensor* out);

// dst = src (same byte size, any dtypes): on the stream between device
// tensors, memcpy between host tensors, a blocking transfer between the two.
Status CopyElements(OpKernelContext* ctx, const Tensor& src, Tensor* dst);

// Every element of `t` = the element at `value` (DataTypeSize(t's dtype)
// bytes; 1, 2, 4 or 8), on the launch's stream.
Status FillElements(OpKernelContext* ctx, Tensor* t, const void* value);

// An OpenCL long8 of up to 8 values (the rest 0).
void ToLong8(const std::vector<int64>& v, int64_t (&out)[8]);

}  // namespace array
}  // namespace pdk_opencl

// The array kernels (namespace tensorflow, TF-style) call these by their short
// names.
namespace tensorflow {
using pdk_opencl::Arg;
using pdk_opencl::Enqueue;
using pdk_opencl::array::CopyElements;
using pdk_opencl::array::FillElements;
using pdk_opencl::array::HostIndices;
using pdk_opencl::array::OnDevice;
using pdk_opencl::array::RowMajorStrides;
using pdk_opencl::array::SizedKernelName;
using pdk_opencl::array::StridedCopy;
using pdk_opencl::array::StridedView;
using pdk_opencl::array::ToLong8;
}  // namespace tensorflow

// Registers `OP(T)` for the array ops' device dtypes: float, int64, bool.
// (int32: host-memory kernels, registered op by op where TensorFlow has no
// DEVICE_DEFAULT int32 kernel.)
#define PDK_OPENCL_ARRAY_TYPES(m) m(float) m(::tensorflow::int64) m(bool)

#endif  // PDK_OPENCL_KERNELS_ARRAY_UTIL_H_
