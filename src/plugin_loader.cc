// libtensorflow_pdk_plugin.so in a distributable build: the library TensorFlow
// loads from site-packages/tensorflow-plugins. It holds no kernel. It picks the
// PDK core built for the highest x86-64 ISA level (psABI levels: x86-64-v2 =
// SSE4.2/POPCNT, x86-64-v3 = AVX2/FMA/F16C/BMI2) that this CPU supports and
// PDK_MAX_CPU_ISA allows, loads it, and forwards TensorFlow's four plugin entry
// points (SE_InitPlugin, TF_InitGraph, TF_InitKernel, TF_InitProfiler) to it.
// The core (src/plugin.cc and everything else) is the same source compiled once
// per level: libtensorflow_pdk_core.<level>.so, found beside this library (a
// build tree) or in site-packages/tensorflow_pdk/lib (the wheel; never in
// tensorflow-plugins, where TensorFlow would load every copy).
//
// If no core loads (a broken installation), the loader registers a PDK
// platform with no devices, an optimizer that changes nothing and a profiler
// that records nothing, and says why on stderr: TensorFlow aborts the process
// on a failed SE_InitPlugin, and `import tensorflow` must survive.
//
// PDK_CoreLibrary() and PDK_CpuIsa() tell the Python package
// (tensorflow_pdk/_native.py) which core runs and why.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pdk/device.h"
#include "pdk/env.h"
#include "pdk/graph_optimizer.h"
#include "pdk/profiler.h"

#define PDK_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using SeInitFn = void (*)(SE_PlatformRegistrationParams*, TF_Status*);
using GraphInitFn = void (*)(TP_OptimizerRegistrationParams*, TF_Status*);
using KernelInitFn = void (*)();
using ProfilerInitFn = void (*)(TF_ProfilerRegistrationParams*, TF_Status*);

// The ISA levels a core can be built for, lowest first (CMake's
// PDK_ISA_LEVELS names the ones built).
struct Level {
  const char* name;
  const char* alias;  // oneDNN-style name accepted by PDK_MAX_CPU_ISA
  bool supported;
};

std::vector<Level> Levels() {
  __builtin_cpu_init();
  return {{"x86-64-v2", "SSE4_2", __builtin_cpu_supports("x86-64-v2") != 0},
          {"x86-64-v3", "AVX2", __builtin_cpu_supports("x86-64-v3") != 0}};
}

struct Core {
  void* handle = nullptr;
  std::string path;   // the core loaded, or "" if none
  std::string isa;    // its level, and why that one
  SeInitFn se = nullptr;
  GraphInitFn graph = nullptr;
  KernelInitFn kernel = nullptr;
  ProfilerInitFn profiler = nullptr;
};

std::string OwnDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) || !info.dli_fname) return "./";
  std::string p(info.dli_fname);
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? "./" : p.substr(0, slash + 1);
}

bool Exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// Where the core of `level` lives: beside this library, else the wheel's
// tensorflow_pdk/lib; "" if neither has it.
std::string CorePath(const std::string& level) {
  const std::string file = "libtensorflow_pdk_core." + level + ".so";
  const std::string dir = OwnDirectory();
  for (const std::string& p : {dir + file, dir + "../tensorflow_pdk/lib/" + file})
    if (Exists(p)) return p;
  return "";
}

Core Load() {
  Core c;
  const std::vector<Level> levels = Levels();
  // The highest level PDK_MAX_CPU_ISA allows (default: all).
  size_t cap = levels.size();
  const std::string want = pdk::env::Get("PDK_MAX_CPU_ISA");
  if (!want.empty()) {
    auto upper = [](std::string v) {
      for (char& ch : v) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
      return v;
    };
    size_t found = levels.size();
    for (size_t i = 0; i < levels.size(); ++i)
      if (upper(want) == upper(levels[i].name) || upper(want) == levels[i].alias) found = i;
    if (found == levels.size())
      pdk::env::Warn("PDK_MAX_CPU_ISA", want,
                     "is not one of x86-64-v2 (SSE4_2), x86-64-v3 (AVX2)",
                     "the highest level this CPU supports");
    else
      cap = found + 1;
  }
  std::string why;
  for (size_t i = cap; i-- > 0;) {
    const Level& l = levels[i];
    if (!l.supported) {
      why += std::string(l.name) + " not supported by this CPU; ";
      continue;
    }
    const std::string path = CorePath(l.name);
    if (path.empty()) {
      why += std::string(l.name) + " not built; ";
      continue;
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* err = dlerror();
      std::fprintf(stderr, "PDK: cannot load %s: %s\n", path.c_str(), err ? err : "?");
      why += std::string(l.name) + " failed to load; ";
      continue;
    }
    c.handle = h;
    c.path = path;
    std::string notes = why;
    for (size_t j = cap; j < levels.size(); ++j)  // a higher core would have run
      if (levels[j].supported && !CorePath(levels[j].name).empty()) {
        notes += "capped by PDK_MAX_CPU_ISA=" + want + "; ";
        break;
      }
    c.isa = l.name + (notes.empty() ? "" : " (" + notes.substr(0, notes.size() - 2) + ")");
    c.se = reinterpret_cast<SeInitFn>(dlsym(h, "SE_InitPlugin"));
    c.graph = reinterpret_cast<GraphInitFn>(dlsym(h, "TF_InitGraph"));
    c.kernel = reinterpret_cast<KernelInitFn>(dlsym(h, "TF_InitKernel"));
    c.profiler = reinterpret_cast<ProfilerInitFn>(dlsym(h, "TF_InitProfiler"));
    if (c.se && c.graph && c.kernel && c.profiler) return c;
    std::fprintf(stderr, "PDK: %s lacks PDK's entry points\n", path.c_str());
    c = Core();
  }
  c.isa = "none (" + (why.empty() ? std::string("no level allowed") : why.substr(0, why.size() - 2)) +
          ")";
  std::fprintf(stderr,
               "PDK: no PDK core could be loaded (%s); the PDK device is disabled. "
               "Reinstall tensorflow-pdk.\n",
               c.isa.c_str());
  return c;
}

const Core& TheCore() {
  static const Core core = Load();
  return core;
}

// ---- The inert registration used when no core loaded.
// Named "PDK" unless a PDK core of another copy already registered that
// platform in this process (the claim src/plugin.cc sets): TensorFlow aborts
// on a duplicate platform name.
class NoDevicePlatform final : public pdk::Platform {
 public:
  NoDevicePlatform() {
    const std::string me = std::to_string(static_cast<long>(getpid()));
    const char* claim = std::getenv("PDK_PLUGIN_REGISTERED_PID");
    name_ = (claim != nullptr && me == claim) ? "PDK_NO_CORE_LOADED" : "PDK";
    if (name_ == "PDK") setenv("PDK_PLUGIN_REGISTERED_PID", me.c_str(), 1);
  }
  const char* name() const override { return name_.c_str(); }
  const char* type() const override { return name_.c_str(); }
  pdk::StatusOr<int> DeviceCount() const override { return 0; }
  pdk::StatusOr<std::unique_ptr<pdk::Device>> CreateDevice(int ordinal) override {
    return pdk::FailedPrecondition("PDK is disabled: no PDK core could be loaded");
  }

 private:
  std::string name_;
};

std::string g_fallback_type = "PDK";  // the fallback platform's device type

void NoOpStart(const TP_Profiler*, TF_Status* s) { TF_SetStatus(s, TF_OK, ""); }
void NoOpCollect(const TP_Profiler*, uint8_t*, size_t* size, TF_Status* s) {
  *size = 0;
  TF_SetStatus(s, TF_OK, "");
}

}  // namespace

PDK_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams* params, TF_Status* status) {
  const Core& c = TheCore();
  if (c.se) return c.se(params, status);
  static NoDevicePlatform platform;
  g_fallback_type = platform.type();
  pdk::InitPlatform(&platform, params, status);
}

PDK_EXPORT void TF_InitGraph(TP_OptimizerRegistrationParams* params, TF_Status* status) {
  const Core& c = TheCore();
  if (c.graph) return c.graph(params, status);
  pdk::RegisterGraphOptimizer(
      params, g_fallback_type.c_str(), [](pdk::GraphDef&, const pdk::OptimizerContext&) { return pdk::Status::OK(); },
      status);
}

PDK_EXPORT void TF_InitKernel() {
  const Core& c = TheCore();
  if (c.kernel) c.kernel();
}

PDK_EXPORT void TF_InitProfiler(TF_ProfilerRegistrationParams* params, TF_Status* status) {
  const Core& c = TheCore();
  if (c.profiler) return c.profiler(params, status);
  pdk::RegisterProfiler(params, g_fallback_type.c_str(), &NoOpStart, &NoOpStart, &NoOpCollect,
                        status);
}

// The core this process runs ("" if none) and its ISA level with the reason.
PDK_EXPORT const char* PDK_CoreLibrary() { return TheCore().path.c_str(); }
PDK_EXPORT const char* PDK_CpuIsa() { return TheCore().isa.c_str(); }
