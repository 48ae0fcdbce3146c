// pdk/tf/status.h — TensorFlow's Status idioms over pdk::Status.
//
//   Status                     the kit's pdk::Status (ok(), code(), message(),
//                              Status::OK()), which converts to and from
//                              absl::Status (TensorFlow 2.21's Status) and any
//                              other status type with TensorFlow's canonical
//                              codes: a kernel that writes `absl::Status`,
//                              `absl::OkStatus()` or `absl::InvalidArgumentError`
//                              mixes them with the kit's. The kit itself never
//                              includes absl (see docs/kit.md, "absl").
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
#include <string_view>
#include <type_traits>
#include <utility>

#include "pdk/status.h"

namespace tensorflow {
inline namespace pdk_kit {

namespace kit_internal {
// A status type of another library (absl::Status): ok(), code() (an enum of
// TensorFlow's canonical codes), message(), constructible from (code, text).
template <class S, class = void>
struct IsForeignStatus : std::false_type {};
template <class S>
struct IsForeignStatus<
    S, std::void_t<decltype(std::declval<const S&>().ok()),
                   decltype(static_cast<int>(std::declval<const S&>().code())),
                   decltype(std::string_view(std::declval<const S&>().message())),
                   decltype(S(std::declval<const S&>().code(), std::string_view()))>>
    : std::bool_constant<!std::is_base_of_v<::pdk::Status, S>> {};
}  // namespace kit_internal

class Status : public ::pdk::Status {
 public:
  Status() = default;
  Status(TF_Code code, std::string message) : ::pdk::Status(code, std::move(message)) {}
  Status(const ::pdk::Status& s) : ::pdk::Status(s) {}  // NOLINT: implicit by design
  template <class S, std::enable_if_t<kit_internal::IsForeignStatus<S>::value, int> = 0>
  Status(const S& s)  // NOLINT: absl::Status -> Status, as TensorFlow's own alias
      : ::pdk::Status(static_cast<TF_Code>(static_cast<int>(s.code())),
                      std::string(std::string_view(s.message()))) {}
  template <class S, std::enable_if_t<kit_internal::IsForeignStatus<S>::value, int> = 0>
  operator S() const {  // NOLINT: Status -> absl::Status
    if (ok()) return S();
    using Code = decltype(std::declval<const S&>().code());
    return S(static_cast<Code>(static_cast<int>(code())), std::string_view(message()));
  }
  static Status OK() { return Status(); }
};

inline Status OkStatus() { return Status(); }

namespace strings {
template <class... A>
std::string StrCat(const A&... a) {
  return ::pdk::internal::StrCat(a...);
}
}  // namespace strings

// TensorFlow's error codes (error::INVALID_ARGUMENT, ...), for comparing
// with Status::code().
namespace error {
using Code = TF_Code;
inline constexpr TF_Code OK = TF_OK, CANCELLED = TF_CANCELLED, UNKNOWN = TF_UNKNOWN,
    INVALID_ARGUMENT = TF_INVALID_ARGUMENT, DEADLINE_EXCEEDED = TF_DEADLINE_EXCEEDED,
    NOT_FOUND = TF_NOT_FOUND, ALREADY_EXISTS = TF_ALREADY_EXISTS,
    PERMISSION_DENIED = TF_PERMISSION_DENIED, RESOURCE_EXHAUSTED = TF_RESOURCE_EXHAUSTED,
    FAILED_PRECONDITION = TF_FAILED_PRECONDITION, ABORTED = TF_ABORTED,
    OUT_OF_RANGE = TF_OUT_OF_RANGE, UNIMPLEMENTED = TF_UNIMPLEMENTED, INTERNAL = TF_INTERNAL,
    UNAVAILABLE = TF_UNAVAILABLE, DATA_LOSS = TF_DATA_LOSS,
    UNAUTHENTICATED = TF_UNAUTHENTICATED;
}  // namespace error

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
