// The OPENCL plugin's entry points: SE_InitPlugin (the device runtime,
// runtime.h), TF_InitKernel (src/kernels/), TF_InitGraph (graph.cc).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>

#include "graph.h"
#include "pdk/device.h"
#include "pdk/kernel.h"
#include "pdk/profiler.h"
#include "pdk/python_hooks.h"
#include "runtime.h"

#define PDK_OPENCL_EXPORT extern "C" __attribute__((visibility("default")))

namespace pdk_opencl {
namespace {

// The platform TensorFlow sees: one device per selected OpenCL device, or
// none (and the reason on stderr, once).
class ClPlatform final : public pdk::Platform {
 public:
  explicit ClPlatform(bool enabled) : enabled_(enabled) {}
  const char* name() const override { return kDeviceType; }
  const char* type() const override { return kDeviceType; }
  pdk::StatusOr<int> DeviceCount() const override {
    return enabled_ ? static_cast<int>(Selected().devices.size()) : 0;
  }
  pdk::StatusOr<std::unique_ptr<pdk::Device>> CreateDevice(int ordinal) override {
    const auto& devices = Selected().devices;
    if (!enabled_ || ordinal < 0 || ordinal >= static_cast<int>(devices.size()))
      return pdk::InvalidArgument("no OPENCL device ", ordinal);
    PDK_ASSIGN_OR_RETURN(auto d, ClDevice::Open(devices[ordinal], ordinal));
    return std::unique_ptr<pdk::Device>(std::move(d));
  }

 private:
  bool enabled_;
};

// True for the first copy of this library in the process: TensorFlow aborts
// on a second platform of the same name (a venv whose lib64 links to lib
// shows it the same file twice).
bool ClaimProcessWide() {
  static constexpr char kVar[] = "PDK_OPENCL_REGISTERED_PID";
  const std::string me = std::to_string(static_cast<long>(getpid()));
  const char* cur = std::getenv(kVar);
  if (cur != nullptr && me == cur) return false;
  setenv(kVar, me.c_str(), 1);
  return true;
}

bool g_enabled = false;

}  // namespace
}  // namespace pdk_opencl

PDK_OPENCL_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams* params, TF_Status* status) {
  using namespace pdk_opencl;  // NOLINT
  if (!ClaimProcessWide()) {
    // A second copy: a distinct platform with no devices.
    static pdk::Status st = pdk::AlreadyExists(
        "the OPENCL plugin is already loaded in this process; this copy registers nothing");
    std::fprintf(stderr, "PDK OpenCL: %s\n", st.message().c_str());
    st.ToTF(status);
    return;
  }
  const PlatformState& p = Selected();
  g_enabled = !p.devices.empty();
  if (!g_enabled)
    std::fprintf(stderr, "PDK OpenCL: no OPENCL device is registered: %s\n", p.why_none.c_str());
  static ClPlatform platform(g_enabled);
  pdk::InitPlatform(&platform, params, status);
}

PDK_OPENCL_EXPORT void TF_InitKernel() {
  if (!pdk_opencl::g_enabled) return;
  const pdk::Status st = pdk::KernelRegistry::Global().RegisterAll(
      pdk_opencl::kDeviceType, pdk::DeviceMemoryAccess::kDeviceOnly);
  if (!st.ok())
    std::fprintf(stderr, "PDK OpenCL: kernel registration failed: %s\n", st.message().c_str());
  // Eager assign_add / assign_sub on OPENCL variables (python/tensorflow_pdk_opencl/_hooks.py).
  pdk::RunPythonHook("tensorflow_pdk_opencl._hooks", "install", "PDK OpenCL");
}

PDK_OPENCL_EXPORT void TF_InitGraph(TP_OptimizerRegistrationParams* params, TF_Status* status) {
  pdk_opencl::InitGraph(params, status);
}

// The kit's trace profiler for OPENCL: host-side launches and copies, and each
// kernel's run on the device queue (runtime.h, TrackForProfile).
PDK_OPENCL_EXPORT void TF_InitProfiler(TF_ProfilerRegistrationParams* params, TF_Status* status) {
  pdk::SetProfilerFlush(&pdk_opencl::FlushProfile);
  pdk::RegisterTraceProfiler(params, pdk_opencl::kDeviceType, status);
}
