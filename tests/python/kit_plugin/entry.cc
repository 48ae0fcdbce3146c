// The test plugin's one entry point (tests/python/test_kit.py): TensorFlow
// calls TF_InitKernel when it loads the library, and the kit replays every
// REGISTER_OP and REGISTER_KERNEL_BUILDER of the library for device PDK.
#include <cstdio>

#include "pdk/kernel.h"

extern "C" __attribute__((visibility("default"))) void TF_InitKernel() {
  const pdk::Status st = pdk::KernelRegistry::Global().RegisterAll("PDK");
  if (!st.ok()) std::fprintf(stderr, "kit test plugin: %s\n", st.message().c_str());
}
