// _PdkKerasAdamUpdate: PDK's own op, produced only by PDK's graph optimizer
// (src/graph/rewrites/keras_adam.cc) from the ~11 elementwise ops that Keras
// 3's Adam (and AdamW) optimizer emits per variable. Not a TensorFlow op: it is
// defined here with REGISTER_OP (pdk/tf/op.h, over the op C API), next to its
// kernel (written in the kit's own style, pdk/kernel.h).
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
#include <algorithm>

#include "compute/eigen.h"
#include "compute/exact_sqrt.h"
#include "pdk/kernel.h"
#include "pdk/tf/op.h"

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

}  // namespace tensorflow

namespace pdk_kernels {
namespace {

template <class T>
class KerasAdamUpdateOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor var, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor m, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor v, ctx.input(2));
    const pdk::Shape s = var.shape();
    PDK_RETURN_IF_ERROR(pdk::CheckSameShape(ctx.op(), "var", s, "m", m.shape()));
    PDK_RETURN_IF_ERROR(pdk::CheckSameShape(ctx.op(), "var", s, "v", v.shape()));
    const T* pg;
    {  // released before forwarding: a held handle blocks buffer reuse
      PDK_ASSIGN_OR_RETURN(pdk::Tensor grad, ctx.input(3));
      PDK_RETURN_IF_ERROR(pdk::CheckSameShape(ctx.op(), "var", s, "grad", grad.shape()));
      pg = grad.data<T>();
    }
    static const char* const kCoeff[] = {"one_minus_beta_1", "one_minus_beta_2", "alpha",
                                         "epsilon"};
    T c[4];
    for (int i = 0; i < 4; ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor t, ctx.input(4 + i));
      if (t.num_elements() != 1 || t.shape().rank() > s.rank())
        return pdk::InvalidArgument(ctx.op(), ": ", kCoeff[i],
                                    " must hold one element of rank <= rank(var) (var.shape ", s,
                                    "), got shape ", t.shape());
      c[i] = t.data<T>()[0];
    }
    // The gradient is usually read by this kernel alone (it replaced Sub and
    // Square): then its buffer becomes var_out, one allocation less. Each
    // element of grad is read before var_out's element is written (same
    // index, same block), so the aliasing is safe. The variables' own
    // buffers are never written: other readers may still hold them.
    PDK_ASSIGN_OR_RETURN(pdk::Tensor var_out, ctx.forward_or_allocate_output({3}, 0, s));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor m_out, ctx.allocate_output(1, s));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor v_out, ctx.allocate_output(2, s));
    const int64_t n = s.num_elements();
    if (n == 0) return pdk::Status::OK();

    const T *pvar = var.data<T>(), *pm = m.data<T>(), *pv = v.data<T>();
    T *ovar = var_out.data<T>(), *om = m_out.data<T>(), *ov = v_out.data<T>();
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
    // Per element: 4 loads, 3 stores, ~10 flops incl. a sqrt and a division.
    pdk_compute::Device(ctx).parallelFor(
        n, Eigen::TensorOpCost(4 * sizeof(T), 3 * sizeof(T), 40), block);
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(PdkKerasAdamUpdate, r) {
  r.Add(pdk::KernelDef<KerasAdamUpdateOp<float>>("_PdkKerasAdamUpdate").Type<float>("T"));
  r.Add(pdk::KernelDef<KerasAdamUpdateOp<double>>("_PdkKerasAdamUpdate").Type<double>("T"));
}

}  // namespace pdk_kernels
