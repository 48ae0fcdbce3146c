// pdk/python_hooks.h — runs a plugin's Python code in the interpreter that is
// loading TensorFlow, from the plugin's C entry points (TF_InitKernel).
//
// Some of what users expect of a device lives above the C APIs, in
// TensorFlow's Python layer (a tf.config call the C API cannot see, an eager
// op a plugin must route differently). A plugin whose wheel ships a Python
// package installs such fixes when TensorFlow loads it, without the user
// importing anything:
//
//   pdk::RunPythonHook("my_plugin._hooks", "install", "MY_DEVICE");
//
// imports `module` and calls its `function()`. The interpreter is found
// through Python's stable C API, resolved at run time: in a process without
// Python (a C program loading TensorFlow, a C++ test) nothing happens. A
// Python error is printed as one line prefixed with `tag` and loading goes on.
#ifndef PDK_PYTHON_HOOKS_H_
#define PDK_PYTHON_HOOKS_H_

#include <dlfcn.h>

#include <string>

namespace pdk {

inline void RunPythonHook(const std::string& module, const std::string& function,
                          const std::string& tag) {
  using IsInitializedFn = int (*)();
  using GilEnsureFn = int (*)();  // PyGILState_STATE is an enum
  using GilReleaseFn = void (*)(int);
  using RunFn = int (*)(const char*);
  auto is_initialized = reinterpret_cast<IsInitializedFn>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  auto ensure = reinterpret_cast<GilEnsureFn>(dlsym(RTLD_DEFAULT, "PyGILState_Ensure"));
  auto release = reinterpret_cast<GilReleaseFn>(dlsym(RTLD_DEFAULT, "PyGILState_Release"));
  auto run = reinterpret_cast<RunFn>(dlsym(RTLD_DEFAULT, "PyRun_SimpleString"));
  if (!is_initialized || !ensure || !release || !run || !is_initialized()) return;
  // exec in a fresh namespace: nothing lands in the user's __main__.
  const std::string code =
      "exec('try:\\n"
      "  import importlib\\n"
      "  getattr(importlib.import_module(\\'" + module + "\\'), \\'" + function + "\\')()\\n"
      "except Exception as e:\\n"
      "  import sys\\n"
      "  print(\\'" + tag + ": " + module + " not installed: \\' + repr(e), file=sys.stderr)\\n'"
      ", {})";
  const int gil = ensure();
  run(code.c_str());
  release(gil);
}

}  // namespace pdk

#endif  // PDK_PYTHON_HOOKS_H_
