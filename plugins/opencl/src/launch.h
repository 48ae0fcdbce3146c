// What an OPENCL kernel (a TF-style OpKernel) uses to put work on its stream.
//
//   void Compute(OpKernelContext* ctx) override {
//     const Tensor& x = ctx->input(0);
//     Tensor* y = nullptr;
//     OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
//     const int64 n = x.NumElements();
//     OP_REQUIRES_OK(ctx, Enqueue(ctx, KernelName("relu", x.dtype()), n, {x, *y, Arg::I64(n)}));
//   }
//
// A tensor argument becomes two kernel arguments, `__global T* base` and
// `ulong off` (elements): the kernel reads base[off + i] (cl/common.h's
// TENSOR macros). Device tensors are never read on the host here: the kit
// marks them (pdk/tf/tensor.h), so x.flat<float>() would be an error.
// Scalars are typed explicitly (Arg::I32, I64, F32, U64) to match the kernel's
// parameter types. Work is enqueued on the launch's stream and not waited
// for; a size-0 launch enqueues nothing.
#ifndef PDK_OPENCL_LAUNCH_H_
#define PDK_OPENCL_LAUNCH_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>

#include "pdk/tf/op_kernel.h"
#include "runtime.h"

namespace tensorflow {
// The device type of REGISTER_KERNEL_BUILDER(Name(...).Device(DEVICE_OPENCL)).
constexpr char DEVICE_OPENCL[] = "OPENCL";
}  // namespace tensorflow

namespace pdk_opencl {

using tensorflow::DataType;
using tensorflow::OpKernelContext;
using tensorflow::Tensor;

class Arg {
 public:
  Arg(const Tensor& t) : kind_(kTensor), tensor_(&t) {}  // NOLINT: implicit by design
  static Arg I32(int32_t v) { return Arg(&v, sizeof(v)); }
  static Arg I64(int64_t v) { return Arg(&v, sizeof(v)); }
  static Arg U64(uint64_t v) { return Arg(&v, sizeof(v)); }
  static Arg F32(float v) { return Arg(&v, sizeof(v)); }
  // An OpenCL long8 (8 int64 values; dims or strides of a rank <= 8 view).
  static Arg Long8(const int64_t (&v)[8]) { return Arg(v, sizeof(v)); }
  // `bytes` of __local memory.
  static Arg Local(size_t bytes) {
    Arg a(nullptr, 0);
    a.kind_ = kLocal;
    a.size_ = bytes;
    return a;
  }

  enum Kind { kTensor, kValue, kLocal };
  Kind kind() const { return kind_; }
  const Tensor& tensor() const { return *tensor_; }
  const void* value() const { return bytes_; }
  size_t size() const { return size_; }

 private:
  Arg(const void* v, size_t n) : kind_(kValue), size_(n) {
    if (n) std::memcpy(bytes_, v, n);
  }
  Kind kind_;
  const Tensor* tensor_ = nullptr;
  unsigned char bytes_[64] = {};
  size_t size_ = 0;
};

// The device and stream of the running launch.
struct LaunchTarget {
  ClDevice* device = nullptr;
  ClStream* stream = nullptr;
};
pdk::StatusOr<LaunchTarget> Target(OpKernelContext* ctx);

// Takes an event of work this launch enqueued on `t`'s stream (a kernel, a
// CLBlast call): kept for the profile while a session is open (its device
// times become a span of the stream's line), else released. Null is ignored.
void ProfileOrRelease(OpKernelContext* ctx, const LaunchTarget& t, cl_event ev);

// The buffer and element offset of a device tensor.
pdk::Status Resolve(const ClDevice& device, const Tensor& t, cl_mem* buffer, uint64_t* offset);

// "relu_f32": `name` and the dtype's suffix (f32, f64, f16, i32, i64, u8, b8).
std::string KernelName(const char* name, DataType dtype);

// Enqueues kernel `name` over `global` work-items (1-D; the kernel checks its
// index against the size it is given), or over global[0] x global[1] (2-D).
// `local` 0 lets the driver choose the work-group size.
pdk::Status Enqueue(OpKernelContext* ctx, const std::string& name, uint64_t global,
                    std::initializer_list<Arg> args, size_t local = 0);
pdk::Status Enqueue2D(OpKernelContext* ctx, const std::string& name, uint64_t global0,
                      uint64_t global1, std::initializer_list<Arg> args);

// dst = src (same byte size; both device tensors), on the launch's stream.
pdk::Status CopyTensor(OpKernelContext* ctx, const Tensor& src, Tensor* dst);
// Every byte of `t` = 0.
pdk::Status Zero(OpKernelContext* ctx, Tensor* t);

}  // namespace pdk_opencl

#endif  // PDK_OPENCL_LAUNCH_H_
