// The kernels PDK deliberately does not register, leaving them to
// TensorFlow's own DEVICE_DEFAULT kernels (which TensorFlow registers for
// every device type, a PluggableDevice included, and runs when the device
// registers none).
//
// They are the per-iteration bookkeeping of a lowered tf.while_loop: the loop
// variables' Identity (every dtype; StopGradient is the same kernel), the
// counters' int32 AddV2 and the condition's int32 Less. TensorFlow's kernels
// forward the buffer (Identity) or compute on host memory (int32: every
// argument HostMemory, as PDK's own int32 kernels declared them), so nothing
// changes where a tensor lives; they run as plain C++ inside TensorFlow,
// where a PDK kernel pays the kernel C API's round trip (TF_GetInput's
// TF_Tensor, the output's allocation through the C API, PDK's context),
// ~0.4 us per launch on the development VMs. A loop of two int32 counters,
// two comparisons, a LogicalAnd and an Identity (bench/bench_loop.py --body
// counter) ran 6.6 us per iteration with PDK's kernels and 4.6 us with
// TensorFlow's (the CPU device: 3.6 us); the Keras LSTM step ran ~3 % faster
// (docs/benchmarks.md, "Loops").
//
// Used by the PDK_STRICT type guards (graph/strict_placement.cc), which must
// not shadow these with a failing kernel.
#ifndef PDK_SRC_KERNELS_TENSORFLOW_DEFAULT_KERNELS_H_
#define PDK_SRC_KERNELS_TENSORFLOW_DEFAULT_KERNELS_H_

#include <string_view>

#include "tensorflow/c/tf_datatype.h"

namespace pdk_kernels {

struct DefaultKernel {
  const char* op;
  bool every_dtype;   // true: every T; false: `dtype` only
  TF_DataType dtype;
};

inline constexpr DefaultKernel kTensorFlowDefaultKernels[] = {
    {"Identity", true, TF_FLOAT},
    {"StopGradient", true, TF_FLOAT},
    {"AddV2", false, TF_INT32},
    {"Less", false, TF_INT32},
};

// True if PDK leaves `op` with T = `dtype` to TensorFlow's DEVICE_DEFAULT kernel.
inline bool LeftToTensorFlowDefault(std::string_view op, TF_DataType dtype) {
  for (const DefaultKernel& k : kTensorFlowDefaultKernels)
    if (op == k.op && (k.every_dtype || dtype == k.dtype)) return true;
  return false;
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_TENSORFLOW_DEFAULT_KERNELS_H_
