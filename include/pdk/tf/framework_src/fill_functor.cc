// The fill functors of tensorflow/core/kernels/fill_functor.h on
// Eigen::ThreadPoolDevice: out = in() (FillFunctor), 0, 1 or NaN, each an
// Eigen assignment on the device's thread pool. Instantiated for every dtype
// the kit registers (SetNanFunctor: the floating-point ones).
#define EIGEN_USE_THREADS

#include <limits>

#include "tensorflow/core/framework/register_types.h"
#include "tensorflow/core/kernels/fill_functor.h"

namespace tensorflow {
namespace functor {

using CPUDevice = Eigen::ThreadPoolDevice;

template <typename T>
struct FillFunctor<CPUDevice, T> {
  void operator()(const CPUDevice& d, typename TTypes<T>::Flat out,
                  typename TTypes<T>::ConstScalar in) {
    out.device(d) = out.constant(in());
  }
};

template <typename T>
void SetZeroFunctor<CPUDevice, T>::operator()(const CPUDevice& d, typename TTypes<T>::Flat out) {
  out.device(d) = out.constant(T(0));
}
template <typename T>
void SetOneFunctor<CPUDevice, T>::operator()(const CPUDevice& d, typename TTypes<T>::Flat out) {
  out.device(d) = out.constant(T(1));
}
template <typename T>
void SetNanFunctor<CPUDevice, T>::operator()(const CPUDevice& d, typename TTypes<T>::Flat out) {
  out.device(d) = out.constant(Eigen::NumTraits<T>::quiet_NaN());
}

#define PDK_TF_FILL_(T)                          \
  template struct FillFunctor<CPUDevice, T>;     \
  template struct SetZeroFunctor<CPUDevice, T>;  \
  template struct SetOneFunctor<CPUDevice, T>;
TF_CALL_POD_TYPES(PDK_TF_FILL_)
TF_CALL_QUANTIZED_TYPES(PDK_TF_FILL_)
TF_CALL_qint16(PDK_TF_FILL_)
TF_CALL_quint16(PDK_TF_FILL_)
#define PDK_TF_NAN_(T) template struct SetNanFunctor<CPUDevice, T>;
TF_CALL_FLOAT_TYPES(PDK_TF_NAN_)

}  // namespace functor
}  // namespace tensorflow
