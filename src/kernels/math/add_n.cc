// AddN (tensorflow/core/ops/math_ops.cc): sum = inputs[0] + inputs[1] + ... +
// inputs[N-1], elementwise, N >= 1 tensors of one shape and dtype.
//
// Types: float32, float64, float16, bfloat16, int32, int64. TensorFlow's
// gradient code emits AddN wherever several gradients flow into one tensor
// (e.g. the gradient of keras.activations.gelu, both variants).
// Errors: an input whose shape differs from inputs[0] is InvalidArgument
// naming both shapes. Each pool task sums its block of elements over all
// inputs left to right, in input order (TF's CPU kernel adds in groups of up
// to 8 inputs; float results agree within rounding).
#include <cstdint>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

template <class T>
class AddNOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    const int n = ctx.num_inputs();
    std::vector<pdk::Tensor> in;
    in.reserve(n);
    for (int i = 0; i < n; ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor t, ctx.input(i));
      in.push_back(std::move(t));
    }
    if (n == 0) return pdk::InvalidArgument(ctx.op(), ": needs at least one input");
    const pdk::Shape shape = in[0].shape();
    for (int i = 1; i < n; ++i) {
      if (in[i].shape() != shape)
        return pdk::InvalidArgument(ctx.op(), ": inputs[0].shape ", shape, " != inputs[", i,
                                    "].shape ", in[i].shape(),
                                    " (all inputs must have the same shape)");
    }
    if (n == 1) return ctx.set_output(0, in[0]);
    std::vector<const T*> src(n);
    for (int i = 0; i < n; ++i) src[i] = in[i].data<T>();
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, shape));
    const int64_t size = shape.num_elements();
    if (size == 0) return pdk::Status::OK();
    T* dst = out.data<T>();
    const Eigen::TensorOpCost cost(n * sizeof(T), sizeof(T), n - 1);
    pdk_compute::Device(ctx).parallelFor(size, cost, [&](Eigen::Index first, Eigen::Index last) {
      const Eigen::Index len = last - first;
      Eigen::Map<Vec<T>> o(dst + first, len);
      o = Eigen::Map<const Vec<T>>(src[0] + first, len) +
          Eigen::Map<const Vec<T>>(src[1] + first, len);
      for (int i = 2; i < n; ++i) o += Eigen::Map<const Vec<T>>(src[i] + first, len);
    });
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(MathAddN, r) {
  pdk::ForEachType(
      pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t>{},
      [&](auto t) {
        using T = typename decltype(t)::type;
        r.Add(Int32OnHost<T>(pdk::KernelDef<AddNOp<T>>("AddN").Type("T", t), {"inputs", "sum"}));
      });
}

}  // namespace pdk_kernels
