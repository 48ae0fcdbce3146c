// The dtypes of PDK's arithmetic TensorScatter* kernels (tensor_scatter.cc),
// which are also those of its ResourceScatter* kernels (resource_scatter.cc):
// the graph rewrite that turns one into the other (src/graph/rewrites/
// resource_scatter.cc) relies on the two lists being one.
#ifndef PDK_SRC_KERNELS_ARRAY_SCATTER_TYPES_H_
#define PDK_SRC_KERNELS_ARRAY_SCATTER_TYPES_H_

#include "compute/eigen.h"

namespace pdk_kernels {

using ScatterArithmeticTypes =
    pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t>;

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_ARRAY_SCATTER_TYPES_H_
