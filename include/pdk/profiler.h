// pdk/profiler.h — a plugin's profiler behind the pluggable profiler C API
// (tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h),
// header-only.
//
// A plugin exports TF_InitProfiler and hands TensorFlow three functions for
// its device type:
//
//   extern "C" void TF_InitProfiler(TF_ProfilerRegistrationParams* params, TF_Status* status) {
//     pdk::RegisterProfiler(params, "MY_DEVICE", &Start, &Stop, &Collect, status);
//   }
//
// TensorFlow calls `start` when a profile session opens (only when the
// session's device_tracer_level is not 0), `stop` when it closes, and
// `collect` twice: with a null buffer for the size of the serialized XSpace,
// then with a buffer of that size to fill. Planes named /device:CUSTOM:<n>
// show in TensorBoard's trace viewer. `device_type` must outlive the process's
// use of the profiler (a string literal or a static).
#ifndef PDK_PROFILER_H_
#define PDK_PROFILER_H_

#include "pdk/device.h"  // CheckStructSize, PrepareStruct
#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"
#include "tensorflow/c/tf_status.h"

namespace pdk {

using ProfilerStartFn = void (*)(const TP_Profiler*, TF_Status*);
using ProfilerCollectFn = void (*)(const TP_Profiler*, uint8_t* buffer, size_t* size,
                                   TF_Status*);

// Fills `params` (every struct size checked: a TensorFlow whose structs are
// shorter than this build's headers gets FailedPrecondition, not a write past
// their end) and sets `status`.
inline void RegisterProfiler(TF_ProfilerRegistrationParams* params, const char* device_type,
                             ProfilerStartFn start, ProfilerStartFn stop,
                             ProfilerCollectFn collect, TF_Status* status) {
  Status st = CheckStructSize(params, TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE,
                              "TF_ProfilerRegistrationParams");
  if (st.ok()) st = PrepareStruct(params->profiler, TP_PROFILER_STRUCT_SIZE, "TP_Profiler");
  if (st.ok())
    st = PrepareStruct(params->profiler_fns, TP_PROFILER_FNS_STRUCT_SIZE, "TP_ProfilerFns");
  if (!st.ok()) return st.ToTF(status);
  params->major_version = TP_MAJOR;
  params->minor_version = TP_MINOR;
  params->patch_version = TP_PATCH;
  params->profiler->device_type = device_type;
  params->profiler_fns->start = start;
  params->profiler_fns->stop = stop;
  params->profiler_fns->collect_data_xspace = collect;
  params->destroy_profiler = [](TP_Profiler*) {};
  params->destroy_profiler_fns = [](TP_ProfilerFns*) {};
  TF_SetStatus(status, TF_OK, "");
}

}  // namespace pdk

#endif  // PDK_PROFILER_H_
