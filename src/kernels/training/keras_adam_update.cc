// _PdkKerasAdamUpdate: PDK's own op, produced only by PDK's graph optimizer
// (src/graph/rewrites/keras_adam.cc) from the ~11 elementwise ops that Keras
// 3's Adam (and AdamW) optimizer emits per variable. Not a TensorFlow op: it is
// defined here with REGISTER_OP (pdk/tf/op.h, over the op C API), next to its
// kernel.
//
//   _PdkKerasAdamUpdate(var, m, v, grad, one_minus_beta_1, one_minus_beta_2,
//                       alpha, epsilon; T) -> (var_out, m_out, v_out)
//     var, m, v, grad: the same shape S (the values of the variable and of its
//       first and second moments before the step, and the gradient);
//     one_minus_beta_1, one_minus_beta_2, alpha, epsilon: one element each,
//       rank <= rank(S) (scalars in Keras);
//     outputs: shape S, per element (Keras 3.15, keras/src/optimizers/adam.py,
//     Adam.update_step):
//       m_out   = m + (grad - m) * one_minus_beta_1
//       v_out   = v + (grad^2 - v) * one_minus_beta_2
//       var_out = var - (m_out * alpha) / (sqrt(v_out) + epsilon)
//     where Keras computes alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) in
//     scalar ops the rewrite leaves as they are. The rewrite writes the three
//     outputs back with AssignVariableOp.
//     T = float32 or float64.
//
// Every operation is the IEEE operation of the unfused graph, in the same
// order, with no fused multiply-add (this file is compiled with
// -ffp-contract=off, CMakeLists.txt; the square root is the IEEE one,
// compute/exact_sqrt.h), so the result is bit-identical to the unfused ops on
// PDK and on TensorFlow's CPU. One pass over memory instead of
// twelve elementwise ops: the three expressions are evaluated block by block
// (a few KiB, in cache) on the device pool.
//
// Memory: var_out takes over grad's buffer when nothing else holds it (the
// usual case: the rewrite leaves this kernel as the gradient's only reader);
// m_out and v_out are new. The inputs var, m, v alias the variables' buffers
// and are never written (another reader may still hold them; TensorFlow's own
// in-place updates copy first in that case, which a plugin cannot detect).
//
// Errors: InvalidArgument when var, m, v and grad differ in shape, or a
// coefficient is not a single element of rank <= rank(var) (both messages
// name the operands and their shapes).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "compute/exact_sqrt.h"
#include "pdk/tf/op.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {

// Defined (replayed) before the kernel below.
REGISTER_OP("_PdkKerasAdamUpdate")
    .Input("var: T")
    .Input("m: T")
    .Input("v: T")
    .Input("grad: T")
    .Input("one_minus_beta_1: T")
    .Input("one_minus_beta_2: T")
    .Input("alpha: T")
    .Input("epsilon: T")
    .Output("var_out: T")
    .Output("m_out: T")
    .Output("v_out: T")
    .Attr("T: {float, double}")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      for (int i = 0; i < 3; ++i) c->set_output(i, c->input(i));  // shapes of var, m, v
      return OkStatus();
    });

namespace {

template <class T>
class KerasAdamUpdateOp : public OpKernel {
 public:
  explicit KerasAdamUpdateOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& var = ctx->input(0);
    const Tensor& m = ctx->input(1);
    const Tensor& v = ctx->input(2);
    const TensorShape& s = var.shape();
    OP_REQUIRES_OK(ctx, pdk::CheckSameShape(op, "var", s.pdk_shape(), "m", m.shape().pdk_shape()));
    OP_REQUIRES_OK(ctx, pdk::CheckSameShape(op, "var", s.pdk_shape(), "v", v.shape().pdk_shape()));
    // A borrowed view: it does not keep grad's buffer from being forwarded.
    const Tensor& grad = ctx->input(3);
    OP_REQUIRES_OK(ctx,
                   pdk::CheckSameShape(op, "var", s.pdk_shape(), "grad", grad.shape().pdk_shape()));
    const T* pg = grad.flat<T>().data();
    static const char* const kCoeff[] = {"one_minus_beta_1", "one_minus_beta_2", "alpha",
                                         "epsilon"};
    T c[4];
    for (int i = 0; i < 4; ++i) {
      const Tensor& t = ctx->input(4 + i);
      OP_REQUIRES(ctx, t.NumElements() == 1 && t.dims() <= s.dims(),
                  errors::InvalidArgument(type_string(), ": ", kCoeff[i],
                                          " must hold one element of rank <= rank(var) (var.shape ",
                                          s.pdk_shape(), "), got shape ", t.shape().pdk_shape()));
      c[i] = t.flat<T>().data()[0];
    }
    // The gradient is usually read by this kernel alone (it replaced Sub and
    // Square): then its buffer becomes var_out, one allocation less. Each
    // element of grad is read before var_out's element is written (same
    // index, same block), so the aliasing is safe. The variables' own
    // buffers are never written: other readers may still hold them.
    Tensor *var_out = nullptr, *m_out = nullptr, *v_out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({3}, 0, s, &var_out));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, s, &m_out));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, s, &v_out));
    const int64_t n = s.num_elements();
    if (n == 0) return;

    const T *pvar = var.flat<T>().data(), *pm = m.flat<T>().data(), *pv = v.flat<T>().data();
    T *ovar = var_out->flat<T>().data(), *om = m_out->flat<T>().data(),
      *ov = v_out->flat<T>().data();
    const T c1 = c[0], c2 = c[1], alpha = c[2], eps = c[3];
    using Index = Eigen::Index;
    auto block = [=](Index first, Index last) {
      constexpr Index kBlock = 2048;  // 3 x 8-16 KiB of outputs stay in L1/L2
      for (Index b = first; b < last; b += kBlock) {
        const Index len = std::min(kBlock, last - b);
        pdk_compute::ConstFlat<T> g(pg + b, len), m0(pm + b, len), v0(pv + b, len),
            x0(pvar + b, len);
        pdk_compute::Flat<T> m1(om + b, len), v1(ov + b, len), x1(ovar + b, len);
        m1 = m0 + (g - m0) * c1;
        v1 = v0 + (g.square() - v0) * c2;
        x1 = x0 - (m1 * alpha) / (pdk_compute::ExactSqrt(v1) + eps);
      }
    };
    // Per element: 4 loads, 3 stores, ~10 flops incl. a sqrt and a division,
    // vectorized (Eigen packets), so the compute cost is given per packet.
    // Where Eigen splits (about 210K cycles, its TensorCostModel) decides
    // whether the update waits for a pool worker: with 40 scalar cycles per
    // element an 8192-element update was split, and the hand-off (30-230 us
    // on the 2-core VM, the most when two executor threads ran kernels at
    // once) took longer than the update inline (a few us). 100 cycles per
    // packet puts the split at about 12K float32 elements (6K float64): the
    // 8192-element update of the digits MLP runs inline (step 0.92x), a
    // 16K-element one is still split as before (docs/benchmarks.md,
    // "Optimizer step").
    constexpr double kCyclesPerPacket = 100;
    pdk_compute::ParallelFor(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
        n,
        Eigen::TensorOpCost(4 * sizeof(T), 3 * sizeof(T), kCyclesPerPacket, /*vectorized=*/true,
                            Eigen::internal::packet_traits<T>::size),
        block);
  }
};

REGISTER_KERNEL_BUILDER(Name("_PdkKerasAdamUpdate").Device(DEVICE_PDK).TypeConstraint<float>("T"),
                        KerasAdamUpdateOp<float>);
REGISTER_KERNEL_BUILDER(Name("_PdkKerasAdamUpdate").Device(DEVICE_PDK).TypeConstraint<double>("T"),
                        KerasAdamUpdateOp<double>);

}  // namespace
}  // namespace tensorflow
