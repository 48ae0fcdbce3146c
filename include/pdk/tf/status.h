// pdk/tf/status.h — TensorFlow's Status idioms over pdk::Status.
//
//   Status                     the kit's pdk::Status (ok(), code(), message(),
//                              Status::OK())
//   OkStatus()                 an OK status
//   errors::InvalidArgument(a, b, ...)   arguments concatenated as by
//                              TensorFlow's StrCat; likewise Internal,
//                              Unimplemented, FailedPrecondition, NotFound,
//                              OutOfRange, ResourceExhausted, AlreadyExists,
//                              Aborted, Unknown, PermissionDenied, Unavailable,
//                              Cancelled, DataLoss
//   TF_RETURN_IF_ERROR(expr)   returns a non-OK Status from the enclosing function
//   strings::StrCat(a, ...)    the concatenation itself
#ifndef PDK_TF_STATUS_H_
#define PDK_TF_STATUS_H_

#include <string>

#include "pdk/status.h"

namespace tensorflow {
inline namespace pdk_kit {

using Status = ::pdk::Status;

inline Status OkStatus() { return Status(); }

namespace strings {
template <class... A>
std::string StrCat(const A&... a) {
  return ::pdk::internal::StrCat(a...);
}
}  // namespace strings

namespace errors {
#define PDK_TF_ERROR_(NAME, CODE)                              \
  template <class... A>                                        \
  Status NAME(const A&... a) {                                 \
    return Status(CODE, ::pdk::internal::StrCat(a...));        \
  }                                                            \
  inline bool Is##NAME(const Status& s) { return s.code() == CODE; }
PDK_TF_ERROR_(Cancelled, TF_CANCELLED)
PDK_TF_ERROR_(Unknown, TF_UNKNOWN)
PDK_TF_ERROR_(InvalidArgument, TF_INVALID_ARGUMENT)
PDK_TF_ERROR_(DeadlineExceeded, TF_DEADLINE_EXCEEDED)
PDK_TF_ERROR_(NotFound, TF_NOT_FOUND)
PDK_TF_ERROR_(AlreadyExists, TF_ALREADY_EXISTS)
PDK_TF_ERROR_(PermissionDenied, TF_PERMISSION_DENIED)
PDK_TF_ERROR_(ResourceExhausted, TF_RESOURCE_EXHAUSTED)
PDK_TF_ERROR_(FailedPrecondition, TF_FAILED_PRECONDITION)
PDK_TF_ERROR_(Aborted, TF_ABORTED)
PDK_TF_ERROR_(OutOfRange, TF_OUT_OF_RANGE)
PDK_TF_ERROR_(Unimplemented, TF_UNIMPLEMENTED)
PDK_TF_ERROR_(Internal, TF_INTERNAL)
PDK_TF_ERROR_(Unavailable, TF_UNAVAILABLE)
PDK_TF_ERROR_(DataLoss, TF_DATA_LOSS)
#undef PDK_TF_ERROR_
}  // namespace errors

}  // namespace pdk_kit
}  // namespace tensorflow

#define TF_RETURN_IF_ERROR(...)                                   \
  do {                                                            \
    ::tensorflow::pdk_kit::Status pdk_tf_status_ = (__VA_ARGS__); \
    if (!pdk_tf_status_.ok()) return pdk_tf_status_;              \
  } while (0)

#endif  // PDK_TF_STATUS_H_
