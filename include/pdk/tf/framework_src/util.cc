// SliceDebugString (tensorflow/core/util/util.h): the multi-index of flat
// index `flat` in a tensor of `shape`, as "[i,j,k]" ("" for a scalar), for
// error messages that name an element.
#include "tensorflow/core/util/util.h"

namespace tensorflow {

std::string SliceDebugString(const TensorShape& shape, int64_t flat) {
  const int dims = shape.dims();
  if (dims == 0) return "";
  std::vector<int64_t> index(dims);
  for (int i = dims - 1; i >= 0; --i) {
    const int64_t size = shape.dim_size(i);
    index[i] = (i == 0 || size == 0) ? flat : flat % size;
    if (size != 0) flat /= size;
  }
  std::string out = "[";
  for (int i = 0; i < dims; ++i) out += (i ? "," : "") + std::to_string(index[i]);
  return out + "]";
}

}  // namespace tensorflow
