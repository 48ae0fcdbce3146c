// pdk/status.h — errors as values.
//
// `pdk::Status` carries a TensorFlow error code (TF_Code, tensorflow/c/tf_status.h)
// and a message; `pdk::StatusOr<T>` carries a value or a non-OK status. Nothing in
// the kit throws into TensorFlow: trampolines convert a Status into a TF_Status
// (`ToTF`) and every C entry point catches C++ exceptions (`GuardedCall`).
//
// Depends on the C++ standard library and TensorFlow's C headers only.
#ifndef PDK_STATUS_H_
#define PDK_STATUS_H_

#include <exception>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

#include "tensorflow/c/tf_status.h"

namespace pdk {

class Status {
 public:
  Status() = default;  // OK
  Status(TF_Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  bool ok() const { return code_ == TF_OK; }
  TF_Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Writes this status into a TensorFlow status object.
  void ToTF(TF_Status* out) const { TF_SetStatus(out, code_, message_.c_str()); }
  // Reads a TensorFlow status object.
  static Status FromTF(const TF_Status* s) {
    return TF_GetCode(s) == TF_OK ? Status() : Status(TF_GetCode(s), TF_Message(s));
  }

 private:
  TF_Code code_ = TF_OK;
  std::string message_;
};

namespace internal {
template <class... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace internal

// Constructors named after TensorFlow's error classes. Arguments are streamed.
template <class... A> Status InvalidArgument(const A&... a) { return Status(TF_INVALID_ARGUMENT, internal::StrCat(a...)); }
template <class... A> Status ResourceExhausted(const A&... a) { return Status(TF_RESOURCE_EXHAUSTED, internal::StrCat(a...)); }
template <class... A> Status Unimplemented(const A&... a) { return Status(TF_UNIMPLEMENTED, internal::StrCat(a...)); }
template <class... A> Status Internal(const A&... a) { return Status(TF_INTERNAL, internal::StrCat(a...)); }
template <class... A> Status FailedPrecondition(const A&... a) { return Status(TF_FAILED_PRECONDITION, internal::StrCat(a...)); }
template <class... A> Status NotFound(const A&... a) { return Status(TF_NOT_FOUND, internal::StrCat(a...)); }
template <class... A> Status AlreadyExists(const A&... a) { return Status(TF_ALREADY_EXISTS, internal::StrCat(a...)); }

// A value of type T, or a non-OK Status explaining why there is none.
template <class T>
class StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) v_ = Status(TF_INTERNAL, "StatusOr constructed from an OK status");
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

// RAII owner of a TF_Status.
struct TFStatusDeleter {
  void operator()(TF_Status* s) const { TF_DeleteStatus(s); }
};
using TFStatusPtr = std::unique_ptr<TF_Status, TFStatusDeleter>;
inline TFStatusPtr NewTFStatus() { return TFStatusPtr(TF_NewStatus()); }

// This thread's scratch TF_Status, reset to OK: for one C API call whose
// status is read right after it (the kit's per-launch calls: inputs, outputs,
// temps), instead of a TF_Status allocated and freed per call. Not for a
// status kept across other kit calls on the same thread, nor handed to code
// that keeps it.
inline TF_Status* ScratchTFStatus() {
  thread_local TFStatusPtr s = NewTFStatus();
  TF_SetStatus(s.get(), TF_OK, "");
  return s.get();
}

// Runs `fn` (returning Status) and converts any C++ exception into an error
// status, so that no exception crosses the C boundary into TensorFlow.
template <class Fn>
Status GuardedCall(const char* where, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Status(TF_RESOURCE_EXHAUSTED, internal::StrCat(where, ": out of host memory"));
  } catch (const std::exception& e) {
    return Status(TF_INTERNAL, internal::StrCat(where, ": ", e.what()));
  } catch (...) {
    return Status(TF_INTERNAL, internal::StrCat(where, ": unknown exception"));
  }
}

}  // namespace pdk

#define PDK_STATUS_CONCAT_INNER_(a, b) a##b
#define PDK_STATUS_CONCAT_(a, b) PDK_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define PDK_RETURN_IF_ERROR(expr)                        \
  do {                                                   \
    ::pdk::Status pdk_status_tmp_ = (expr);              \
    if (!pdk_status_tmp_.ok()) return pdk_status_tmp_;   \
  } while (0)

// `PDK_ASSIGN_OR_RETURN(auto x, StatusOrExpr)`: unwraps or returns the error.
#define PDK_ASSIGN_OR_RETURN(lhs, expr) \
  PDK_ASSIGN_OR_RETURN_IMPL_(PDK_STATUS_CONCAT_(pdk_statusor_, __LINE__), lhs, expr)
#define PDK_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#endif  // PDK_STATUS_H_
