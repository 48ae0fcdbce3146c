// pdk/op_names.h — the ops a plugin defines with REGISTER_OP, for Python.
//
// TensorFlow's tf.load_op_library gives no Python wrappers for the ops of a
// PluggableDevice library: the kit defines them in TF_InitKernel, not when the
// library is opened, and TensorFlow loads the library itself. So every
// REGISTER_OP of the kit (pdk/tf/op.h) also records its op name here, and the
// kit exports one C entry point of its own that lists them:
//
//   size_t TFKit_OpNames(char* buf, size_t cap);
//
// It writes the names, one a line in REGISTER_OP order, into `buf` (at most
// `cap` bytes, NUL-terminated when cap > 0) and returns the length of the
// whole text, so a caller passes (nullptr, 0) first for the size.
// tensorflow_pdk.load_op_library(path) reads it with ctypes from the loaded
// library, takes each op's OpDef from TensorFlow's registry and generates the
// wrappers with TensorFlow's generator (docs/kit.md, "Python wrappers").
//
// The names are recorded during static initialization, so the list is
// complete once the library is open, before TF_InitKernel defines the ops.
// The function is inline with default visibility and marked used: every
// translation unit that includes this header emits it, the linker keeps one
// copy, and a library built with hidden visibility (pdk_add_plugin) still
// exports it.
#ifndef PDK_OP_NAMES_H_
#define PDK_OP_NAMES_H_

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace pdk {

// The op names of this library's REGISTER_OPs (string literals), in order.
inline std::vector<const char*>& DefinedOpNames() {
  static auto* names = new std::vector<const char*>;  // lives as long as the library
  return *names;
}

}  // namespace pdk

extern "C" inline __attribute__((visibility("default"), used)) size_t TFKit_OpNames(char* buf,
                                                                                   size_t cap) {
  std::string text;
  for (const char* name : ::pdk::DefinedOpNames()) {
    text += name;
    text += '\n';
  }
  if (buf != nullptr && cap > 0) {
    const size_t n = std::min(text.size(), cap - 1);
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return text.size();
}

#endif  // PDK_OP_NAMES_H_
