// Reading a plugin's configuration from environment variables, in one place,
// with one rule for every variable: unset or "" is the default; a value the
// variable does not take gives one warning line on stderr naming the
// variable, the value, the problem and the value used instead, then:
//   - not a number, or below the variable's minimum -> the default;
//   - above its maximum                            -> the maximum.
//
//   int64_t n = pdk::env::Int("PDK_DEVICE_COUNT", 1, 0, 64);
//     unset or ""            -> 1
//     "abc", "1.5"           -> "PDK: PDK_DEVICE_COUNT=abc is not an integer; using the default, 1"
//     "-5" (below 0)         -> "PDK: PDK_DEVICE_COUNT=-5 is below 0; using the default, 1"
//     "100" (above 64)       -> "PDK: PDK_DEVICE_COUNT=100 is above 64; using 64"
//   Int(name, dflt, lo, hi, {" MiB", "the physical memory"}) words the numbers
//   with their unit and the maximum with what it is:
//     "PDK: PDK_MEMORY_LIMIT_MB=99999999999 is above the physical memory, 24105 MiB; using 24105 MiB"
//   bool on = pdk::env::Flag("PDK_STRICT", false);
//     "1", "true" -> true; "0", "false" -> false (any case); unset or "" -> default;
//     "yes"       -> "PDK: PDK_STRICT=yes is not 0 or 1; using the default, 0"
//
// Each (variable, value) pair warns once per process, however often it is read
// (the graph optimizer reads its variables at every call).
#ifndef PDK_ENV_H_
#define PDK_ENV_H_

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace pdk {
namespace env {

// Prints "<prefix>: <name>=<value> <problem>; using <used>" once per (name,
// value), <prefix> being the name up to its first '_' ("PDK" for PDK_ASYNC).
inline void Warn(const char* name, const std::string& value, const std::string& problem,
                 const std::string& used) {
  static std::mutex mu;
  static auto* seen = new std::set<std::string>;  // never destroyed: read until exit
  {
    std::lock_guard<std::mutex> l(mu);
    if (!seen->insert(std::string(name) + "=" + value).second) return;
  }
  // Named by the variable's prefix: "PDK" for PDK_NUM_THREADS, a kit-built
  // plugin's own for its variables.
  const std::string var(name);
  const std::string who = var.substr(0, var.find('_'));
  std::fprintf(stderr, "%s: %s=%s %s; using %s\n", who.c_str(), name, value.c_str(),
               problem.c_str(), used.c_str());
}

// The variable's value, or "" when unset.
inline std::string Get(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// How Int words its numbers in a warning.
struct IntWords {
  const char* unit = "";     // after each number: " MiB"
  const char* hi_is = "";    // what the maximum is: "the physical memory"
};

// An integer in [lo, hi]; see the file comment.
inline int64_t Int(const char* name, int64_t dflt, int64_t lo, int64_t hi, IntWords words = {}) {
  const std::string v = Get(name);
  if (v.empty()) return dflt;
  auto num = [&](int64_t x) { return std::to_string(x) + words.unit; };
  const std::string use_default = "the default, " + num(dflt);
  char* end = nullptr;
  errno = 0;
  // Out of long long's range saturates (errno ERANGE): below lo or above hi.
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0') {
    Warn(name, v, "is not an integer", use_default);
    return dflt;
  }
  if (x < lo) {
    Warn(name, v, "is below " + num(lo), use_default);
    return dflt;
  }
  if (x > hi) {
    const std::string max = *words.hi_is ? std::string(words.hi_is) + ", " + num(hi) : num(hi);
    Warn(name, v, "is above " + max, num(hi));
    return hi;
  }
  return x;
}

// A switch; see the file comment.
inline bool Flag(const char* name, bool dflt) {
  std::string v = Get(name);
  if (v.empty()) return dflt;
  for (char& c : v) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  Warn(name, Get(name), "is not 0 or 1", dflt ? "the default, 1" : "the default, 0");
  return dflt;
}

}  // namespace env
}  // namespace pdk

#endif  // PDK_ENV_H_
