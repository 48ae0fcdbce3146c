// PDK's pluggable profiler: the kit's trace profiler (pdk/profiler.h,
// RegisterTraceProfiler) for the PDK device: every PDK kernel launch, memcpy,
// memset, host callback and (de)allocation while a TensorFlow profile session
// is open, as the planes "/device:CUSTOM:PDK:<ordinal>" of an XSpace.
#include "profiler/profiler.h"

#include "pdk/profiler.h"

namespace pdk_profiler {

void InitProfiler(TF_ProfilerRegistrationParams* params, const char* device_type,
                  TF_Status* status) {
  pdk::RegisterTraceProfiler(params, device_type, status);
}

}  // namespace pdk_profiler
