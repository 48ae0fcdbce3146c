// Registering PDK's own ops (_PdkFusedMatMul, _PdkFusedConv2D,
// _PdkKerasAdamUpdate), which only PDK's graph optimizer emits, through the op
// C API (tensorflow/c/ops.h).
#ifndef PDK_SRC_KERNELS_PDK_OP_DEF_H_
#define PDK_SRC_KERNELS_PDK_OP_DEF_H_

#include <cstdio>

#include "pdk/status.h"
#include "tensorflow/c/ops.h"

namespace pdk_kernels {

// Registers the op `op` describes (TF_RegisterOpDefinition takes ownership of
// the builder). On failure prints why to stderr and returns false: the caller
// then registers no kernel for it, the graph optimizer never emits the op
// (it checks for the kernel), and every other kernel still registers.
inline bool DefinePdkOp(const char* name, TF_OpDefinitionBuilder* op) {
  pdk::TFStatusPtr s = pdk::NewTFStatus();
  TF_RegisterOpDefinition(op, s.get());
  const pdk::Status st = pdk::Status::FromTF(s.get());
  if (!st.ok())
    std::fprintf(stderr, "PDK: %s op definition failed: %s\n", name, st.message().c_str());
  return st.ok();
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_PDK_OP_DEF_H_
