// _PdkToHost and _PdkFromHost: PDK's own ops, run by PDK's Python side
// (python/tensorflow_pdk/_fetch.py) when eager code reads a PDK tensor
// (`.numpy()`, `float(t)`, `print(t)`) or turns a NumPy array into a PDK
// tensor (`tf.constant(array)`, a tf.function's NumPy arguments); not
// TensorFlow ops.
//
//   _PdkToHost(input: T) -> bytes: int32
//     bytes: the input's buffer, byte for byte, in ceil(N / 4) int32 elements
//     (N = the input's size in bytes; the last element's unused bytes are
//     zero); rank 1. The caller views them as T and gives them the input's
//     shape.
//     T: every dtype whose buffer is plain data (float32/64, float16,
//     bfloat16, int8/16/32/64, uint8/16/32/64, bool, complex64/128).
//
//   _PdkFromHost(bytes: int32; T, shape) -> output: T
//     the reverse: output (shape `shape`, dtype T, device memory) holds the
//     first N bytes of `bytes` (N = its size); T as above, without int32.
//     InvalidArgument when `bytes` holds fewer than N bytes or `shape` is not
//     fully defined (at construction).
//
// Why: TensorFlow reads an eager tensor of a PluggableDevice back through
// PluggableDeviceUtil::CopyPluggableDeviceTensorToCPU, whose completion runs
// on TensorFlow's EventMgr threads: three thread wake-ups, about 100 us on the
// 2-core VM, where the CPU device's read costs 1 us (docs/benchmarks.md,
// "Reading a result back"). An eager op runs as a function (TensorFlow's
// eager_op_as_function), and a function's int32 results are host memory
// (TensorFlow's MTypeFromDType), so this op's result comes back as a tensor
// of the host CPU that TensorFlow reads in place: one eager dispatch (about
// 10 us) and one memcpy, no thread hand-off. The other way, a NumPy array
// placed on PDK is copied by CopyCPUTensorToPluggableDevice,
// through the same EventMgr threads; an int32 argument is host memory, so
// _PdkFromHost takes the bytes as int32 and copies them into device memory on
// the calling thread.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <complex>
#include <cstring>

#include "pdk/tf/op.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {

REGISTER_OP("_PdkToHost")
    .Input("input: T")
    .Output("bytes: int32")
    .Attr("T: type")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      c->set_output(0, c->Vector(c->UnknownDim()));
      return OkStatus();
    });

namespace {

class ToHostOp : public OpKernel {
 public:
  explicit ToHostOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int64_t bytes = static_cast<int64_t>(input.TotalBytes());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({(bytes + 3) / 4}), &out));
    if (bytes == 0) return;
    char* dst = static_cast<char*>(out->data());
    std::memcpy(dst, input.data(), static_cast<size_t>(bytes));
    std::memset(dst + bytes, 0, static_cast<size_t>(out->TotalBytes() - bytes));
  }
};

REGISTER_OP("_PdkFromHost")
    .Input("bytes: int32")
    .Output("output: T")
    .Attr("T: type")
    .Attr("shape: shape")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      c->set_output(0, c->UnknownShape());  // run eagerly only: no graph needs it
      return OkStatus();
    });

class FromHostOp : public OpKernel {
 public:
  explicit FromHostOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("shape", &shape_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& bytes = ctx->input(0);
    const TensorShape& shape = shape_;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    const size_t n = out->TotalBytes();
    OP_REQUIRES(ctx, n <= bytes.TotalBytes(),
                errors::InvalidArgument(type_string(), ": bytes holds ", bytes.TotalBytes(),
                                        " bytes (shape ", bytes.shape().pdk_shape(),
                                        "), the output of shape ", shape.pdk_shape(), " needs ",
                                        n));
    if (n) std::memcpy(out->data(), bytes.data(), n);
  }

 private:
  TensorShape shape_;  // GetAttr fails (InvalidArgument) on an unknown dimension
};

#define PDK_REGISTER_TO_HOST_(T)                                                         \
  REGISTER_KERNEL_BUILDER(                                                               \
      Name("_PdkToHost").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("bytes"), \
      ToHostOp);
PDK_REGISTER_TO_HOST_(float)
PDK_REGISTER_TO_HOST_(double)
PDK_REGISTER_TO_HOST_(Eigen::half)
PDK_REGISTER_TO_HOST_(Eigen::bfloat16)
PDK_REGISTER_TO_HOST_(int8)
PDK_REGISTER_TO_HOST_(int16)
PDK_REGISTER_TO_HOST_(int64)
PDK_REGISTER_TO_HOST_(uint8)
PDK_REGISTER_TO_HOST_(uint16)
PDK_REGISTER_TO_HOST_(uint32)
PDK_REGISTER_TO_HOST_(uint64)
PDK_REGISTER_TO_HOST_(bool)
PDK_REGISTER_TO_HOST_(complex64)
PDK_REGISTER_TO_HOST_(complex128)
#define PDK_REGISTER_FROM_HOST_(T)                                                          \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("_PdkFromHost").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("bytes"), \
      FromHostOp);
PDK_REGISTER_FROM_HOST_(float)
PDK_REGISTER_FROM_HOST_(double)
PDK_REGISTER_FROM_HOST_(Eigen::half)
PDK_REGISTER_FROM_HOST_(Eigen::bfloat16)
PDK_REGISTER_FROM_HOST_(int8)
PDK_REGISTER_FROM_HOST_(int16)
PDK_REGISTER_FROM_HOST_(int64)
PDK_REGISTER_FROM_HOST_(uint8)
PDK_REGISTER_FROM_HOST_(uint16)
PDK_REGISTER_FROM_HOST_(uint32)
PDK_REGISTER_FROM_HOST_(uint64)
PDK_REGISTER_FROM_HOST_(bool)
PDK_REGISTER_FROM_HOST_(complex64)
PDK_REGISTER_FROM_HOST_(complex128)
#undef PDK_REGISTER_FROM_HOST_
// int32 tensors of PDK are in host memory already (docs/architecture.md).
REGISTER_KERNEL_BUILDER(Name("_PdkToHost")
                            .Device(DEVICE_PDK)
                            .TypeConstraint<int32>("T")
                            .HostMemory("input")
                            .HostMemory("bytes"),
                        ToHostOp);
#undef PDK_REGISTER_TO_HOST_

}  // namespace
}  // namespace tensorflow
