// AddN (tensorflow/core/ops/math_ops.cc): sum = inputs[0] + inputs[1] + ... +
// inputs[N-1], elementwise, N >= 1 tensors of one shape and dtype.
//
// Types: float32, float64, float16, bfloat16, int32, int64. TensorFlow's
// gradient code emits AddN wherever several gradients flow into one tensor
// (e.g. the gradient of keras.activations.gelu, both variants).
// Errors: an input whose shape differs from inputs[0] is InvalidArgument
// naming both shapes. The sum reuses the buffer of inputs[0] or inputs[1]
// when nothing else reads it. Each pool task sums its block of elements over all
// inputs left to right, in input order (TF's CPU kernel adds in groups of up
// to 8 inputs; float results agree within rounding).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

template <class T>
class AddNOp : public OpKernel {
 public:
  explicit AddNOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    OP_REQUIRES(ctx, n != 0,
                errors::InvalidArgument(type_string(), ": needs at least one input"));
    const Tensor& in0 = ctx->input(0);
    const TensorShape& shape = in0.shape();
    for (int i = 1; i < n; ++i) {
      const TensorShape& si = ctx->input(i).shape();
      OP_REQUIRES(ctx, si == shape,
                  errors::InvalidArgument(type_string(), ": inputs[0].shape ", shape,
                                          " != inputs[", i, "].shape ", si,
                                          " (all inputs must have the same shape)"));
    }
    if (n == 1) {
      ctx->set_output(0, in0);
      return;
    }
    std::vector<const T*> src(n);
    for (int i = 0; i < n; ++i) src[i] = ctx->input(i).flat<T>().data();
    Tensor* out = nullptr;
    // The sum may take the buffer of inputs[0] or inputs[1] when no one else
    // reads it (as TensorFlow's AddN forwards an input): each element is
    // written after both are read, before the later inputs, kept intact.
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, shape, &out));
    const int64_t size = shape.num_elements();
    if (size == 0) return;
    T* dst = out->flat<T>().data();
    const Eigen::TensorOpCost cost(n * sizeof(T), sizeof(T), n - 1);
    pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
        size, cost, [&](Eigen::Index first, Eigen::Index last) {
          const Eigen::Index len = last - first;
          Eigen::Map<Vec<T>> o(dst + first, len);
          o = Eigen::Map<const Vec<T>>(src[0] + first, len) +
              Eigen::Map<const Vec<T>>(src[1] + first, len);
          for (int i = 2; i < n; ++i) o += Eigen::Map<const Vec<T>>(src[i] + first, len);
        });
  }
};

// int32 keeps inputs and sum in host memory (host memory: docs/architecture.md).
#define PDK_REGISTER_ADDN_(T, ...)                                                       \
  REGISTER_KERNEL_BUILDER(Name("AddN").Device(DEVICE_PDK).TypeConstraint<T>("T") __VA_ARGS__, \
                          AddNOp<T>);
PDK_REGISTER_ADDN_(float, )
PDK_REGISTER_ADDN_(double, )
PDK_REGISTER_ADDN_(Eigen::half, )
PDK_REGISTER_ADDN_(Eigen::bfloat16, )
PDK_REGISTER_ADDN_(int32, .HostMemory("inputs").HostMemory("sum"))
PDK_REGISTER_ADDN_(int64, )
#undef PDK_REGISTER_ADDN_

}  // namespace
}  // namespace tensorflow
