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
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h); the variables
// are reached through the kit's pdk::LockedVariables (pdk/variables.h), which
// has no TensorFlow C++ counterpart, on the kit context behind the
// OpKernelContext (pdk_context()).
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"
#include "pdk/variables.h"

namespace tensorflow {
namespace {

template <class T>
using Compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Reads scalar input `i` named `name` as the compute type.
template <class T>
Status Scalar(OpKernelContext* ctx, int i, const char* name, Compute_t<T>* value) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0)
    return errors::InvalidArgument(name, " is not a scalar: ", t.shape(), " (",
                                   ctx->op_kernel().type_string(), ")");
  *value = static_cast<Compute_t<T>>(t.flat<T>()(0));
  return OkStatus();
}

Status SameShape(const std::string& op, const char* a, const ::pdk::Shape& x, const char* b,
                 const ::pdk::Shape& y) {
  if (x == y) return OkStatus();
  return errors::InvalidArgument(a, " and ", b, " do not have the same shape", x, " ", y, " (",
                                 op, ")");
}

// fn(k) per element, split over the device pool.
template <class Fn>
void ForEach(const Eigen::ThreadPoolDevice& dev, int64_t n, double cost, Fn fn) {
  pdk_compute::ParallelFor(dev, n, Eigen::TensorOpCost(cost * 8, cost * 8, cost),
                           [&](Eigen::Index a, Eigen::Index b) {
                             for (Eigen::Index k = a; k < b; ++k) fn(k);
                           });
}

class LockingAttrsOp : public OpKernel {
 public:
  explicit LockingAttrsOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("use_locking", &use_locking_));
    if (c->HasAttr("use_nesterov")) OP_REQUIRES_OK(c, c->GetAttr("use_nesterov", &use_nesterov_));
  }

 protected:
  bool use_locking_ = false, use_nesterov_ = false;
};

template <class T>
class ResourceApplyGradientDescentOp : public LockingAttrsOp {
 public:
  using LockingAttrsOp::LockingAttrsOp;

  void Compute(OpKernelContext* ctx) override {
    using C = Compute_t<T>;
    ::pdk::LockedVariables vars;
    OP_REQUIRES_OK(ctx, vars.Lock(ctx->pdk_context(), {0}, use_locking_));
    ::pdk::Tensor& var = vars.tensor(0);
    C alpha;
    OP_REQUIRES_OK(ctx, Scalar<T>(ctx, 1, "alpha", &alpha));
    const Tensor& delta = ctx->input(2);
    OP_REQUIRES_OK(ctx, SameShape(type_string(), "var", var.shape(), "delta",
                                  delta.shape().pdk_shape()));
    T* w = var.data<T>();
    const T* d = delta.flat<T>().data();
    ForEach(ctx->eigen_device<Eigen::ThreadPoolDevice>(), var.num_elements(), 2, [&](int64_t k) {
      w[k] = static_cast<T>(static_cast<C>(w[k]) - alpha * static_cast<C>(d[k]));
    });
  }
};

template <class T>
class ResourceApplyMomentumOp : public LockingAttrsOp {
 public:
  using LockingAttrsOp::LockingAttrsOp;

  void Compute(OpKernelContext* ctx) override {
    using C = Compute_t<T>;
    const std::string& op = type_string();
    ::pdk::LockedVariables vars;
    OP_REQUIRES_OK(ctx, vars.Lock(ctx->pdk_context(), {0, 1}, use_locking_));
    ::pdk::Tensor &var = vars.tensor(0), &accum = vars.tensor(1);
    C lr, momentum;
    OP_REQUIRES_OK(ctx, Scalar<T>(ctx, 2, "lr", &lr));
    const Tensor& grad = ctx->input(3);
    OP_REQUIRES_OK(ctx, Scalar<T>(ctx, 4, "momentum", &momentum));
    OP_REQUIRES_OK(ctx, SameShape(op, "var", var.shape(), "accum", accum.shape()));
    OP_REQUIRES_OK(ctx, SameShape(op, "var", var.shape(), "grad", grad.shape().pdk_shape()));
    T *w = var.data<T>(), *a = accum.data<T>();
    const T* g = grad.flat<T>().data();
    const bool nesterov = use_nesterov_;
    ForEach(ctx->eigen_device<Eigen::ThreadPoolDevice>(), var.num_elements(), 5, [&](int64_t k) {
      const C gk = static_cast<C>(g[k]);
      const C ak = static_cast<C>(a[k]) * momentum + gk;
      a[k] = static_cast<T>(ak);
      const C step = nesterov ? gk * lr + ak * momentum * lr : lr * ak;
      w[k] = static_cast<T>(static_cast<C>(w[k]) - step);
    });
  }
};

template <class T>
class ResourceApplyAdamOp : public LockingAttrsOp {
 public:
  using LockingAttrsOp::LockingAttrsOp;

  void Compute(OpKernelContext* ctx) override {
    using C = Compute_t<T>;
    const std::string& op = type_string();
    ::pdk::LockedVariables vars;
    OP_REQUIRES_OK(ctx, vars.Lock(ctx->pdk_context(), {0, 1, 2}, use_locking_));
    ::pdk::Tensor &var = vars.tensor(0), &m = vars.tensor(1), &v = vars.tensor(2);
    const char* names[] = {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"};
    C s[6];
    for (int i = 0; i < 6; ++i) OP_REQUIRES_OK(ctx, Scalar<T>(ctx, 3 + i, names[i], &s[i]));
    const C beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4],
            eps = s[5];
    const Tensor& grad = ctx->input(9);
    OP_REQUIRES_OK(ctx, SameShape(op, "var", var.shape(), "m", m.shape()));
    OP_REQUIRES_OK(ctx, SameShape(op, "var", var.shape(), "v", v.shape()));
    OP_REQUIRES_OK(ctx, SameShape(op, "var", var.shape(), "grad", grad.shape().pdk_shape()));
    const C lr_t = lr * std::sqrt(C(1) - beta2_power) / (C(1) - beta1_power);
    T *w = var.data<T>(), *pm = m.data<T>(), *pv = v.data<T>();
    const T* g = grad.flat<T>().data();
    const bool nesterov = use_nesterov_;
    ForEach(ctx->eigen_device<Eigen::ThreadPoolDevice>(), var.num_elements(), 12,
            [&](int64_t k) {
              const C gk = static_cast<C>(g[k]);
              const C mk = static_cast<C>(pm[k]) + (gk - static_cast<C>(pm[k])) * (C(1) - beta1);
              const C vk =
                  static_cast<C>(pv[k]) + (gk * gk - static_cast<C>(pv[k])) * (C(1) - beta2);
              pm[k] = static_cast<T>(mk);
              pv[k] = static_cast<T>(vk);
              const C num = nesterov ? (mk * beta1 + (C(1) - beta1) * gk) * lr_t : mk * lr_t;
              w[k] = static_cast<T>(static_cast<C>(w[k]) - num / (std::sqrt(vk) + eps));
            });
  }
};

// These kernels register only where the running TensorFlow exports the
// variable functions (pdk::VariableApi::Get(), asked when TF_InitKernel
// replays the registrations; 2.19-2.21 do not: see the header), through the
// kit's Name(...).If(pred). T float32, float64, float16, bfloat16.
bool HaveVariableApi() { return ::pdk::VariableApi::Get() != nullptr; }
#define PDK_REGISTER_RESOURCE_APPLY_(T)                                                     \
  REGISTER_KERNEL_BUILDER(Name("ResourceApplyGradientDescent")                              \
                              .Device(DEVICE_PDK)                                           \
                              .TypeConstraint<T>("T")                                       \
                              .If(&HaveVariableApi),                                        \
                          ResourceApplyGradientDescentOp<T>);                               \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("ResourceApplyMomentum").Device(DEVICE_PDK).TypeConstraint<T>("T").If(&HaveVariableApi), \
      ResourceApplyMomentumOp<T>);                                                          \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("ResourceApplyAdam").Device(DEVICE_PDK).TypeConstraint<T>("T").If(&HaveVariableApi), \
      ResourceApplyAdamOp<T>);
PDK_REGISTER_RESOURCE_APPLY_(float)
PDK_REGISTER_RESOURCE_APPLY_(double)
PDK_REGISTER_RESOURCE_APPLY_(Eigen::half)
PDK_REGISTER_RESOURCE_APPLY_(Eigen::bfloat16)
#undef PDK_REGISTER_RESOURCE_APPLY_

}  // namespace
}  // namespace tensorflow
