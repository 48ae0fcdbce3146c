// What the stateless and the stateful random kernels share (TensorFlow's
// kernel style, pdk/tf/op_kernel.h): the output shape from a `shape` input,
// and filling an output from a Philox generator split over the device pool.
#ifndef PDK_SRC_KERNELS_RANDOM_RANDOM_FILL_H_
#define PDK_SRC_KERNELS_RANDOM_RANDOM_FILL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/random/philox.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_random {

// Output shape from the host `shape` input (int32 or int64 [rank]):
// InvalidArgument naming `op` if it is not a vector or a dimension is < 0.
inline tensorflow::Status ReadShape(const std::string& op, const tensorflow::Tensor& t,
                                    tensorflow::TensorShape* shape) {
  namespace errors = tensorflow::errors;
  if (t.dims() != 1)
    return errors::InvalidArgument(op, ": shape must be a vector, got a tensor of shape ",
                                   t.shape());
  std::vector<tensorflow::int64> dims;
  TF_RETURN_IF_ERROR(pdk_kernels::ReadIntVector(op, "shape", t, &dims));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      return errors::InvalidArgument(op, ": shape[", i, "] must be >= 0, got ", dims[i]);
  *shape = tensorflow::TensorShape(dims);
  return tensorflow::OkStatus();
}

// Fills `out` (dtype T) with `dist` from `gen`, split by groups over the
// device pool (FillGroups: any split gives the same values).
template <class T, class Dist>
void Fill(const Eigen::ThreadPoolDevice& dev, const Dist& dist, const Philox& gen,
          tensorflow::Tensor* out) {
  const int64_t size = out->NumElements();
  if (size == 0) return;
  T* data = out->flat<T>().data();
  const int64_t groups = (size + Dist::kGroup - 1) / Dist::kGroup;
  // Per group: one Philox block plus the distribution (twice that for the
  // truncated normal's rejections).
  const double cycles =
      (Philox::kCyclesPerBlock + Dist::kGroup * Dist::kCost) * (Dist::kVariable ? 2 : 1);
  const Eigen::TensorOpCost cost(0, Dist::kGroup * sizeof(T), cycles);
  pdk_compute::ParallelFor(dev, static_cast<Eigen::Index>(groups), cost,
                           [&](Eigen::Index first, Eigen::Index last) {
                             FillGroups(dist, gen, data, size, first, last);
                           });
}

}  // namespace pdk_random

#endif  // PDK_SRC_KERNELS_RANDOM_RANDOM_FILL_H_
