// pdk/tf/logging.h — TensorFlow's CHECK / DCHECK / LOG / VLOG macros
// (tensorflow/core/platform/logging.h), for kernels ported unchanged, with the
// kit's rule that nothing aborts the process:
//
//   CHECK(cond) << "text";  CHECK_EQ(a, b); CHECK_NE, CHECK_LT, CHECK_LE,
//   CHECK_GT, CHECK_GE; CHECK_NOTNULL(p); TF_CHECK_OK(status)
//       a failure throws std::logic_error("Check failed: cond (a vs. b) text",
//       TensorFlow's wording); the kit's kernel trampoline reports it as an
//       Internal error of the op (TensorFlow's CPU kernels abort instead).
//   DCHECK*(...)          the same in builds without NDEBUG; nothing with it.
//   LOG(INFO|WARNING|ERROR) << ...   one line on stderr, "I|W|E file:line] text"
//   LOG(FATAL) << ...     throws as a failed CHECK does.
//   VLOG(n) << ...        printed when n <= TF_CPP_MAX_VLOG_LEVEL (default 0),
//                         TensorFlow's variable.
#ifndef PDK_TF_LOGGING_H_
#define PDK_TF_LOGGING_H_

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace tensorflow {
inline namespace pdk_kit {
namespace kit_internal {

// One log statement: collects the streamed text, then prints it or, for a
// failed check or FATAL, throws it when the statement ends.
class LogMessage {
 public:
  LogMessage(const char* file, int line, char severity) : file_(file), line_(line), sev_(severity) {}
  LogMessage(const LogMessage&) = delete;
  ~LogMessage() noexcept(false) {
    if (sev_ == 'F') {
      if (std::uncaught_exceptions() == 0) throw std::logic_error(os_.str());
      return;
    }
    std::fprintf(stderr, "%c %s:%d] %s\n", sev_, file_, line_, os_.str().c_str());
  }
  std::ostream& stream() { return os_; }

 private:
  const char* file_;
  int line_;
  char sev_;
  std::ostringstream os_;
};

// Swallows a disabled statement's operands.
struct Voidify {
  void operator&(std::ostream&) {}
};

inline int MaxVlogLevel() {
  static const int level = [] {
    const char* v = std::getenv("TF_CPP_MAX_VLOG_LEVEL");
    return v ? std::atoi(v) : 0;
  }();
  return level;
}

template <class A, class B>
std::string CheckOpMessage(const char* expr, const A& a, const B& b) {
  std::ostringstream os;
  os << "Check failed: " << expr << " (" << a << " vs. " << b << ") ";
  return os.str();
}

template <class T>
T CheckNotNull(const char* file, int line, const char* expr, T&& p) {
  if (p == nullptr) LogMessage(file, line, 'F').stream() << "Check failed: '" << expr << "' Must be non NULL ";
  return std::forward<T>(p);
}

}  // namespace kit_internal
}  // namespace pdk_kit
}  // namespace tensorflow

#define PDK_TF_LOG_INFO 'I'
#define PDK_TF_LOG_WARNING 'W'
#define PDK_TF_LOG_ERROR 'E'
#define PDK_TF_LOG_FATAL 'F'
#define PDK_TF_LOG_QFATAL 'F'
#define LOG(severity) \
  ::tensorflow::pdk_kit::kit_internal::LogMessage(__FILE__, __LINE__, PDK_TF_LOG_##severity).stream()
#define LOG_IF(severity, cond) \
  !(cond) ? (void)0 : ::tensorflow::pdk_kit::kit_internal::Voidify() & LOG(severity)
#define VLOG_IS_ON(n) ((n) <= ::tensorflow::pdk_kit::kit_internal::MaxVlogLevel())
#define VLOG(n) LOG_IF(INFO, VLOG_IS_ON(n))

#define CHECK(cond)                                                                  \
  (cond) ? (void)0                                                                   \
         : ::tensorflow::pdk_kit::kit_internal::Voidify() &                              \
               ::tensorflow::pdk_kit::kit_internal::LogMessage(__FILE__, __LINE__, 'F')  \
                       .stream()                                                     \
                   << "Check failed: " #cond " "
#define PDK_TF_CHECK_OP_(op, a, b)                                                    \
  ((a)op(b)) ? (void)0                                                               \
             : ::tensorflow::pdk_kit::kit_internal::Voidify() &                          \
                   ::tensorflow::pdk_kit::kit_internal::LogMessage(__FILE__, __LINE__, 'F') \
                           .stream()                                                 \
                       << ::tensorflow::pdk_kit::kit_internal::CheckOpMessage(#a " " #op " " #b, a, b)
#define CHECK_EQ(a, b) PDK_TF_CHECK_OP_(==, a, b)
#define CHECK_NE(a, b) PDK_TF_CHECK_OP_(!=, a, b)
#define CHECK_LT(a, b) PDK_TF_CHECK_OP_(<, a, b)
#define CHECK_LE(a, b) PDK_TF_CHECK_OP_(<=, a, b)
#define CHECK_GT(a, b) PDK_TF_CHECK_OP_(>, a, b)
#define CHECK_GE(a, b) PDK_TF_CHECK_OP_(>=, a, b)
#define CHECK_NOTNULL(p) ::tensorflow::pdk_kit::kit_internal::CheckNotNull(__FILE__, __LINE__, #p, (p))

// A status expression that must be OK (TensorFlow's TF_CHECK_OK).
#define TF_CHECK_OK(expr) CHECK((expr).ok())
#define TF_QCHECK_OK(expr) CHECK((expr).ok())

#ifdef NDEBUG
#define PDK_TF_DCHECK_OFF_(...) \
  while (false) ::tensorflow::pdk_kit::kit_internal::Voidify() & LOG(INFO)
#define DCHECK(cond) PDK_TF_DCHECK_OFF_(cond)
#define DCHECK_EQ(a, b) PDK_TF_DCHECK_OFF_(a, b)
#define DCHECK_NE(a, b) PDK_TF_DCHECK_OFF_(a, b)
#define DCHECK_LT(a, b) PDK_TF_DCHECK_OFF_(a, b)
#define DCHECK_LE(a, b) PDK_TF_DCHECK_OFF_(a, b)
#define DCHECK_GT(a, b) PDK_TF_DCHECK_OFF_(a, b)
#define DCHECK_GE(a, b) PDK_TF_DCHECK_OFF_(a, b)
#define TF_DCHECK_OK(expr) PDK_TF_DCHECK_OFF_(expr)
#else
#define TF_DCHECK_OK(expr) TF_CHECK_OK(expr)
#define DCHECK(cond) CHECK(cond)
#define DCHECK_EQ(a, b) CHECK_EQ(a, b)
#define DCHECK_NE(a, b) CHECK_NE(a, b)
#define DCHECK_LT(a, b) CHECK_LT(a, b)
#define DCHECK_LE(a, b) CHECK_LE(a, b)
#define DCHECK_GT(a, b) CHECK_GT(a, b)
#define DCHECK_GE(a, b) CHECK_GE(a, b)
#endif

#endif  // PDK_TF_LOGGING_H_
