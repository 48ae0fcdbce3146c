// The activation epilogue of PDK's fused ops (_PdkFusedMatMul,
// _PdkFusedConv2D; src/kernels/nn/fused_matmul.cc, fused_conv2d.cc):
//   y = act(x), x any float Eigen tensor expression of y's shape (it may read y)
//   act in {None, Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid}, with the
//   definitions (and NaN handling) of PDK's standalone kernels
//   (src/kernels/nn/relu.cc, activations.cc) and TensorFlow's CPU functors:
//     Relu(x) = max(x, 0), Relu6(x) = min(max(x, 0), 6) (NaN stays NaN),
//     Elu(x) = x < 0 ? exp(x) - 1 : x, LeakyRelu(x) = x > 0 ? x : alpha * x,
//     Tanh, Sigmoid = Eigen's tanh / sigmoid;
//   or, as tf.nn.gelu writes them (tensorflow/python/ops/nn_ops.py, TF 2.21;
//   the names are those of TensorFlow's _FusedMatMul fused_ops):
//     GeluExact(x)       = 0.5 x erfc(-x / sqrt(2))
//     GeluApproximate(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#ifndef PDK_SRC_KERNELS_NN_FUSED_ACTIVATION_H_
#define PDK_SRC_KERNELS_NN_FUSED_ACTIVATION_H_

#include <string>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/kernel.h"

namespace pdk_kernels {

enum class FusedActivation {
  kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid, kGeluExact, kGeluApproximate
};

// The op attribute `activation` ("None", "Relu", ...); anything else is
// InvalidArgument naming it.
inline pdk::Status ParseFusedActivation(const std::string& s, FusedActivation* a) {
  if (s == "None") *a = FusedActivation::kNone;
  else if (s == "Relu") *a = FusedActivation::kRelu;
  else if (s == "Relu6") *a = FusedActivation::kRelu6;
  else if (s == "Elu") *a = FusedActivation::kElu;
  else if (s == "LeakyRelu") *a = FusedActivation::kLeakyRelu;
  else if (s == "Tanh") *a = FusedActivation::kTanh;
  else if (s == "Sigmoid") *a = FusedActivation::kSigmoid;
  else if (s == "GeluExact") *a = FusedActivation::kGeluExact;
  else if (s == "GeluApproximate") *a = FusedActivation::kGeluApproximate;
  else return pdk::InvalidArgument("unknown activation \"", s, "\"");
  return pdk::Status::OK();
}

// y = act(x), evaluated on `dev` (pdk_compute::Assign). Elu, LeakyRelu and the
// Gelus first store x in y, then compute in place.
template <class Y, class X>
void AssignActivation(const Eigen::ThreadPoolDevice& dev, Y& y, const X& x, FusedActivation act,
                      float alpha) {
  switch (act) {
    case FusedActivation::kNone:
      pdk_compute::Assign(dev, y, x);
      break;
    case FusedActivation::kRelu:
      pdk_compute::Assign(dev, y, x.template cwiseMax<Eigen::PropagateNaN>(0.f));
      break;
    case FusedActivation::kRelu6:
      pdk_compute::Assign(
          dev, y,
          x.template cwiseMax<Eigen::PropagateNaN>(0.f).template cwiseMin<Eigen::PropagateNaN>(
              6.f));
      break;
    case FusedActivation::kTanh:
      pdk_compute::Assign(dev, y, x.tanh());
      break;
    case FusedActivation::kSigmoid:
      pdk_compute::Assign(dev, y, x.sigmoid());
      break;
    case FusedActivation::kElu:
      pdk_compute::Assign(dev, y, x);
      pdk_compute::Assign(dev, y, (y < 0.f).select(y.exp() - y.constant(1.f), y));
      break;
    case FusedActivation::kLeakyRelu:
      pdk_compute::Assign(dev, y, x);
      pdk_compute::Assign(dev, y, (y > 0.f).select(y, y * alpha));
      break;
    case FusedActivation::kGeluExact:  // the constants of tf.nn.gelu (nn_ops.py)
      pdk_compute::Assign(dev, y, x);
      pdk_compute::Assign(dev, y,
                          y.constant(0.5f) * y * (-y * y.constant(0.7071067811865476f)).erfc());
      break;
    case FusedActivation::kGeluApproximate:
      pdk_compute::Assign(dev, y, x);
      pdk_compute::Assign(
          dev, y,
          y.constant(0.5f) * y *
              (y.constant(1.f) +
               (y.constant(0.7978845608028654f) * (y + y.constant(0.044715f) * y * y * y)).tanh()));
      break;
  }
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_NN_FUSED_ACTIVATION_H_
