// BCast's static helpers (tensorflow/core/util/bcast.h): a TensorShape as
// BCast's dimension vector and back. The rest of BCast is TensorFlow's own
// header code.
#include "tensorflow/core/util/bcast.h"

namespace tensorflow {

BCast::Vec BCast::FromShape(const TensorShape& shape) {
  const int n = shape.dims();
  BCast::Vec v(n);
  for (int i = 0; i < n; ++i) v[i] = shape.dim_size(i);
  return v;
}

TensorShape BCast::ToShape(const BCast::Vec& vec) {
  TensorShape shape;
  for (const int64_t d : vec) shape.AddDim(d);
  return shape;
}

}  // namespace tensorflow
