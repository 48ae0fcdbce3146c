// PDK's pluggable profiler: records PDK kernel launches while a TensorFlow
// profile session is open and returns them as an XSpace (profiler.cc).
#ifndef PDK_SRC_PROFILER_PROFILER_H_
#define PDK_SRC_PROFILER_PROFILER_H_

#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"

namespace pdk_profiler {

// Fills TensorFlow's profiler registration for devices of `device_type`.
void InitProfiler(TF_ProfilerRegistrationParams* params, const char* device_type,
                  TF_Status* status);

}  // namespace pdk_profiler

#endif  // PDK_SRC_PROFILER_PROFILER_H_
