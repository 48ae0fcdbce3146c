// pdk/tf/tensorflow_paths.h — what the kit's headers at TensorFlow's include
// paths (include/pdk/tfcompat/tensorflow/..., docs/kit.md "TensorFlow's
// include paths") give a TensorFlow kernel source besides the TF-style layer
// (pdk/tf/op_kernel.h): the names TensorFlow's own op_kernel.h brings in
// transitively and kernels use without including them.
//
//   absl::Span, absl::InlinedVector, absl::StrCat, absl::Status, absl::StatusOr
//       TensorFlow's copy of absl (its include directory); StrCat and
//       absl::Status's error constructors are compiled into
//       libtensorflow_framework.so.2, so a kernel that calls them is tied to
//       the TensorFlow version it was built against (docs/kit.md, "absl").
//   tstring             TensorFlow's string element type (tsl/platform/tstring.h,
//                       header-only); no string kernel registers (TF_CALL_tstring
//                       is empty), the name lets TensorFlow's headers compile.
//   Variant, VariantUnaryOp, ...   pdk/tf/variant.h: no variant kernel registers.
//   ResourceHandle      declared only.
//   mutex, mutex_lock, tf_shared_lock   over std::mutex.
//   gtl::InlinedVector, gtl::ArraySlice, gtl::MutableArraySlice   absl's.
#ifndef PDK_TF_TENSORFLOW_PATHS_H_
#define PDK_TF_TENSORFLOW_PATHS_H_

#include <mutex>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "pdk/tf/op_kernel.h"
#include "pdk/tf/variant.h"
#include "tsl/platform/tstring.h"

namespace tensorflow {
inline namespace pdk_kit {

using tstring = ::tsl::tstring;
class ResourceHandle;

class mutex : public std::mutex {};
// (tsl's function-like mutex_lock macro, which catches `mutex_lock(mu);`
// without a variable, is set aside for the constructor.)
#pragma push_macro("mutex_lock")
#undef mutex_lock
class mutex_lock : public std::lock_guard<std::mutex> {
 public:
  explicit mutex_lock(mutex& mu) : std::lock_guard<std::mutex>(mu) {}
};
#pragma pop_macro("mutex_lock")
using tf_shared_lock = mutex_lock;

namespace gtl {
template <class T, size_t N>
using InlinedVector = absl::InlinedVector<T, N>;
template <class T>
using ArraySlice = absl::Span<const T>;
template <class T>
using MutableArraySlice = absl::Span<T>;
}  // namespace gtl

}  // namespace pdk_kit
}  // namespace tensorflow

#endif  // PDK_TF_TENSORFLOW_PATHS_H_
