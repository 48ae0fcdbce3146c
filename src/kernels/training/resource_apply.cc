// The legacy in-place training ops on resource variables
// (tensorflow/core/ops/training_ops.cc), used by tf.compat.v1.train's
// optimizers and Keras 2's:
//
//   ResourceApplyGradientDescent(var, alpha, delta; use_locking)
//     var -= alpha * delta
//   ResourceApplyMomentum(var, accum, lr, grad, momentum; use_locking, use_nesterov)
//     accum = accum * momentum + grad
//     var  -= nesterov ? grad * lr + accum * momentum * lr : lr * accum
//   ResourceApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2,
//                     epsilon, grad; use_locking, use_nesterov)
//     lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
//     m   += (grad - m) * (1 - beta1)
//     v   += (grad^2 - v) * (1 - beta2)
//     var -= nesterov ? (m * beta1 + (1 - beta1) * grad) * lr_t / (sqrt(v) + epsilon)
//                     : m * lr_t / (sqrt(v) + epsilon)
//   (formulas: TensorFlow's ApplyGradientDescent / ApplyMomentum / ApplyAdam
//   functors, tensorflow/core/kernels/training_ops.cc).
//
// var, accum, m, v: resource inputs, updated in place (pdk/variables.h; the
// variables' mutexes held when use_locking); alpha, lr, momentum, beta*,
// epsilon: scalars; delta / grad: var's shape. T in {float32, float64,
// float16, bfloat16}; 16-bit types computed in float32 per element.
//
// Registered only on TensorFlow releases that export kernels_experimental.h's
// variable functions (2.16-2.18 and tf-nightly, pdk::VariableApi); elsewhere TensorFlow's
// placer reports that PDK has no kernel, as before.
//
// Errors (InvalidArgument, TensorFlow's wording first): a coefficient that is
// not a scalar ("alpha is not a scalar: [2]"), a gradient or slot whose shape
// differs from var's ("var and delta do not have the same shape[4] [3]"); an
// uninitialized variable: TensorFlow's FailedPrecondition.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "pdk/variables.h"

namespace pdk_kernels {
namespace {

template <class T>
using Compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Reads scalar input `i` named `name` as the compute type.
template <class T>
pdk::StatusOr<Compute_t<T>> Scalar(pdk::Context& ctx, int i, const char* name) {
  PDK_ASSIGN_OR_RETURN(pdk::Tensor t, ctx.input(i));
  if (t.shape().rank() != 0)
    return pdk::InvalidArgument(name, " is not a scalar: ", t.shape(), " (", ctx.op(), ")");
  return static_cast<Compute_t<T>>(*t.data<T>());
}

pdk::Status SameShape(pdk::Context& ctx, const char* a, const pdk::Tensor& x, const char* b,
                      const pdk::Tensor& y) {
  if (x.shape() == y.shape()) return pdk::Status::OK();
  return pdk::InvalidArgument(a, " and ", b, " do not have the same shape", x.shape(), " ",
                              y.shape(), " (", ctx.op(), ")");
}

// fn(k) per element, split over the device pool.
template <class Fn>
void ForEach(const pdk::Context& ctx, int64_t n, double cost, Fn fn) {
  pdk_compute::Device(ctx).parallelFor(n, Eigen::TensorOpCost(cost * 8, cost * 8, cost),
                                       [&](Eigen::Index a, Eigen::Index b) {
                                         for (Eigen::Index k = a; k < b; ++k) fn(k);
                                       });
}

class LockingAttrs {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    PDK_RETURN_IF_ERROR(a.Get("use_locking", &use_locking_));
    if (a.Has("use_nesterov")) PDK_RETURN_IF_ERROR(a.Get("use_nesterov", &use_nesterov_));
    return pdk::Status::OK();
  }

 protected:
  bool use_locking_ = false, use_nesterov_ = false;
};

template <class T>
class ResourceApplyGradientDescentOp : public LockingAttrs {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    using C = Compute_t<T>;
    pdk::LockedVariables vars;
    PDK_RETURN_IF_ERROR(vars.Lock(ctx, {0}, use_locking_));
    pdk::Tensor& var = vars.tensor(0);
    PDK_ASSIGN_OR_RETURN(C alpha, Scalar<T>(ctx, 1, "alpha"));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor delta, ctx.input(2));
    PDK_RETURN_IF_ERROR(SameShape(ctx, "var", var, "delta", delta));
    T* w = var.data<T>();
    const T* d = delta.data<T>();
    ForEach(ctx, var.num_elements(), 2, [&](int64_t k) {
      w[k] = static_cast<T>(static_cast<C>(w[k]) - alpha * static_cast<C>(d[k]));
    });
    return pdk::Status::OK();
  }
};

template <class T>
class ResourceApplyMomentumOp : public LockingAttrs {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    using C = Compute_t<T>;
    pdk::LockedVariables vars;
    PDK_RETURN_IF_ERROR(vars.Lock(ctx, {0, 1}, use_locking_));
    pdk::Tensor &var = vars.tensor(0), &accum = vars.tensor(1);
    PDK_ASSIGN_OR_RETURN(C lr, Scalar<T>(ctx, 2, "lr"));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor grad, ctx.input(3));
    PDK_ASSIGN_OR_RETURN(C momentum, Scalar<T>(ctx, 4, "momentum"));
    PDK_RETURN_IF_ERROR(SameShape(ctx, "var", var, "accum", accum));
    PDK_RETURN_IF_ERROR(SameShape(ctx, "var", var, "grad", grad));
    T *w = var.data<T>(), *a = accum.data<T>();
    const T* g = grad.data<T>();
    const bool nesterov = use_nesterov_;
    ForEach(ctx, var.num_elements(), 5, [&](int64_t k) {
      const C gk = static_cast<C>(g[k]);
      const C ak = static_cast<C>(a[k]) * momentum + gk;
      a[k] = static_cast<T>(ak);
      const C step = nesterov ? gk * lr + ak * momentum * lr : lr * ak;
      w[k] = static_cast<T>(static_cast<C>(w[k]) - step);
    });
    return pdk::Status::OK();
  }
};

template <class T>
class ResourceApplyAdamOp : public LockingAttrs {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    using C = Compute_t<T>;
    pdk::LockedVariables vars;
    PDK_RETURN_IF_ERROR(vars.Lock(ctx, {0, 1, 2}, use_locking_));
    pdk::Tensor &var = vars.tensor(0), &m = vars.tensor(1), &v = vars.tensor(2);
    const char* names[] = {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"};
    C s[6];
    for (int i = 0; i < 6; ++i) {
      PDK_ASSIGN_OR_RETURN(C value, Scalar<T>(ctx, 3 + i, names[i]));
      s[i] = value;
    }
    const C beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4],
            eps = s[5];
    PDK_ASSIGN_OR_RETURN(pdk::Tensor grad, ctx.input(9));
    PDK_RETURN_IF_ERROR(SameShape(ctx, "var", var, "m", m));
    PDK_RETURN_IF_ERROR(SameShape(ctx, "var", var, "v", v));
    PDK_RETURN_IF_ERROR(SameShape(ctx, "var", var, "grad", grad));
    const C lr_t = lr * std::sqrt(C(1) - beta2_power) / (C(1) - beta1_power);
    T *w = var.data<T>(), *pm = m.data<T>(), *pv = v.data<T>();
    const T* g = grad.data<T>();
    const bool nesterov = use_nesterov_;
    ForEach(ctx, var.num_elements(), 12, [&](int64_t k) {
      const C gk = static_cast<C>(g[k]);
      const C mk = static_cast<C>(pm[k]) + (gk - static_cast<C>(pm[k])) * (C(1) - beta1);
      const C vk = static_cast<C>(pv[k]) + (gk * gk - static_cast<C>(pv[k])) * (C(1) - beta2);
      pm[k] = static_cast<T>(mk);
      pv[k] = static_cast<T>(vk);
      const C num = nesterov ? (mk * beta1 + (C(1) - beta1) * gk) * lr_t : mk * lr_t;
      w[k] = static_cast<T>(static_cast<C>(w[k]) - num / (std::sqrt(vk) + eps));
    });
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(TrainingResourceApply, r) {
  if (pdk::VariableApi::Get() == nullptr) return;  // 2.19-2.21: see the header
  pdk::ForEachType(pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    r.Add(pdk::KernelDef<ResourceApplyGradientDescentOp<T>>("ResourceApplyGradientDescent")
              .Type("T", t));
    r.Add(pdk::KernelDef<ResourceApplyMomentumOp<T>>("ResourceApplyMomentum").Type("T", t));
    r.Add(pdk::KernelDef<ResourceApplyAdamOp<T>>("ResourceApplyAdam").Type("T", t));
  });
}

}  // namespace pdk_kernels
