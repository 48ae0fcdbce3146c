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
// The loader refers to no TensorFlow symbol (CMakeLists.txt links it without
// libtensorflow_framework.so.2, --no-undefined): TensorFlow 2.16 and 2.17 open
// plugins before their own C API is in the process's global scope, so a
// plugin library with undefined TF_* symbols fails to load there. Before it
// opens the core, the loader promotes the already loaded
// libtensorflow_framework.so.2 to the global scope (dlopen RTLD_NOLOAD |
// RTLD_GLOBAL), where the core's TF_* symbols then resolve: the wheel's
// libraries need no library the wheel does not ship (manylinux).
//
// If no core loads (a broken installation), the loader registers a PDK
// platform with no devices, an optimizer that changes nothing and a profiler
// that records nothing, filled in by hand (the kit's registration helpers call
// TensorFlow), and says why on stderr: TensorFlow aborts the process on a
// failed SE_InitPlugin, and `import tensorflow` must survive.
//
// PDK_CoreLibrary() and PDK_CpuIsa() tell the Python package
// (tensorflow_pdk/_native.py) which core runs and why.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cstring>

#include "pdk/env.h"
#include "tensorflow/c/experimental/grappler/grappler.h"
#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"

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

// Puts the libtensorflow_framework.so.2 TensorFlow loaded into the global
// scope, where the core's TF_* references resolve. Returns false if it is not
// loaded (then no TensorFlow loaded this library).
bool PromoteTensorFlow() {
  void* h = dlopen("libtensorflow_framework.so.2", RTLD_LAZY | RTLD_NOLOAD | RTLD_GLOBAL);
  return h != nullptr;  // kept open: TensorFlow's own reference keeps it loaded anyway
}

Core Load() {
  Core c;
  if (!PromoteTensorFlow())
    std::fprintf(stderr, "PDK: libtensorflow_framework.so.2 is not loaded in this process\n");
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
    // RTLD_DEEPBIND: the core's references bind to its own libraries (the
    // wheel's oneDNN, OpenBLAS, libgomp) before the global scope, where
    // TensorFlow may have put its own copies under the same names
    // (tf-nightly's libtensorflow_framework exports oneDNN 3's dnnl_* API: the
    // core's oneDNN 2 calls landed there and crashed). TF_* resolve from the
    // global scope, as nothing of the core's defines them.
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
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

// ---- The inert registration used when no core loaded: every struct filled
// by hand, TensorFlow's functions looked up at run time.
std::string g_fallback_type = "PDK";  // the fallback platform's device type

void SetStatus(TF_Status* status, TF_Code code, const char* message) {
  using SetFn = void (*)(TF_Status*, TF_Code, const char*);
  static auto set = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "TF_SetStatus"));
  if (set != nullptr && status != nullptr) set(status, code, message);
}

// Zeroes `s` up to this build's size and claims it, unless TensorFlow's struct
// is shorter (an older TensorFlow than the headers): then false.
template <class S>
bool Prepare(S* s, size_t ours, TF_Status* status) {
  if (s == nullptr || (s->struct_size != 0 && s->struct_size < ours)) {
    SetStatus(status, TF_FAILED_PRECONDITION,
              "PDK: this TensorFlow's C API structs are older than PDK's headers");
    return false;
  }
  std::memset(static_cast<void*>(s), 0, ours);
  s->struct_size = ours;
  return true;
}

// A function of type F that does nothing and returns a zero value.
template <class F>
struct Inert;
template <class R, class... A>
struct Inert<R (*)(A...)> {
  static R Call(A...) { return R(); }
};

const char* FallbackName() {
  // "PDK" unless a PDK core of another copy already registered that platform
  // in this process (the claim src/plugin.cc sets): TensorFlow aborts on a
  // duplicate platform name.
  const std::string me = std::to_string(static_cast<long>(getpid()));
  const char* claim = std::getenv("PDK_PLUGIN_REGISTERED_PID");
  if (claim != nullptr && me == claim) {
    g_fallback_type = "PDK_NO_CORE_LOADED";
  } else {
    setenv("PDK_PLUGIN_REGISTERED_PID", me.c_str(), 1);
  }
  return g_fallback_type.c_str();
}

void RegisterNoDevicePlatform(SE_PlatformRegistrationParams* params, TF_Status* status) {
  if (params == nullptr || !Prepare(params->platform, SP_PLATFORM_STRUCT_SIZE, status) ||
      !Prepare(params->platform_fns, SP_PLATFORM_FNS_STRUCT_SIZE, status))
    return;
  params->platform->name = params->platform->type = FallbackName();
  params->destroy_platform = [](SP_Platform*) {};
  params->destroy_platform_fns = [](SP_PlatformFns*) {};
  SP_PlatformFns* f = params->platform_fns;
  f->get_device_count = [](const SP_Platform*, int* count, TF_Status*) { *count = 0; };
  f->create_device = [](const SP_Platform*, SE_CreateDeviceParams*, TF_Status* st) {
    SetStatus(st, TF_FAILED_PRECONDITION, "PDK is disabled: no PDK core could be loaded");
  };
  f->destroy_device = [](const SP_Platform*, SP_Device*) {};
  f->create_device_fns = [](const SP_Platform*, SE_CreateDeviceFnsParams* p, TF_Status* st) {
    Prepare(p->device_fns, SP_DEVICE_FNS_STRUCT_SIZE, st);
  };
  f->destroy_device_fns = [](const SP_Platform*, SP_DeviceFns*) {};
  // TensorFlow creates the stream executor at registration even with no
  // device; nothing of it is ever called.
  f->create_stream_executor = [](const SP_Platform*, SE_CreateStreamExecutorParams* p,
                                 TF_Status* st) {
    SP_StreamExecutor* se = p->stream_executor;
    if (!Prepare(se, SP_STREAMEXECUTOR_STRUCT_SIZE, st)) return;
    se->allocate = &Inert<decltype(se->allocate)>::Call;
    se->deallocate = &Inert<decltype(se->deallocate)>::Call;
    se->host_memory_allocate = &Inert<decltype(se->host_memory_allocate)>::Call;
    se->host_memory_deallocate = &Inert<decltype(se->host_memory_deallocate)>::Call;
    se->get_allocator_stats = &Inert<decltype(se->get_allocator_stats)>::Call;
    se->device_memory_usage = &Inert<decltype(se->device_memory_usage)>::Call;
    se->create_stream = &Inert<decltype(se->create_stream)>::Call;
    se->destroy_stream = &Inert<decltype(se->destroy_stream)>::Call;
    se->create_stream_dependency = &Inert<decltype(se->create_stream_dependency)>::Call;
    se->get_stream_status = &Inert<decltype(se->get_stream_status)>::Call;
    se->create_event = &Inert<decltype(se->create_event)>::Call;
    se->destroy_event = &Inert<decltype(se->destroy_event)>::Call;
    se->get_event_status = &Inert<decltype(se->get_event_status)>::Call;
    se->record_event = &Inert<decltype(se->record_event)>::Call;
    se->wait_for_event = &Inert<decltype(se->wait_for_event)>::Call;
    se->create_timer = &Inert<decltype(se->create_timer)>::Call;
    se->destroy_timer = &Inert<decltype(se->destroy_timer)>::Call;
    se->start_timer = &Inert<decltype(se->start_timer)>::Call;
    se->stop_timer = &Inert<decltype(se->stop_timer)>::Call;
    se->memcpy_dtoh = &Inert<decltype(se->memcpy_dtoh)>::Call;
    se->memcpy_htod = &Inert<decltype(se->memcpy_htod)>::Call;
    se->memcpy_dtod = &Inert<decltype(se->memcpy_dtod)>::Call;
    se->sync_memcpy_dtoh = &Inert<decltype(se->sync_memcpy_dtoh)>::Call;
    se->sync_memcpy_htod = &Inert<decltype(se->sync_memcpy_htod)>::Call;
    se->sync_memcpy_dtod = &Inert<decltype(se->sync_memcpy_dtod)>::Call;
    se->block_host_for_event = &Inert<decltype(se->block_host_for_event)>::Call;
    se->block_host_until_done = &Inert<decltype(se->block_host_until_done)>::Call;
    se->synchronize_all_activity = &Inert<decltype(se->synchronize_all_activity)>::Call;
    se->mem_zero = &Inert<decltype(se->mem_zero)>::Call;
    se->memset = &Inert<decltype(se->memset)>::Call;
    se->memset32 = &Inert<decltype(se->memset32)>::Call;
    se->host_callback = &Inert<decltype(se->host_callback)>::Call;
  };
  f->destroy_stream_executor = [](const SP_Platform*, SP_StreamExecutor*) {};
  f->create_timer_fns = [](const SP_Platform*, SP_TimerFns* t, TF_Status* st) {
    if (Prepare(t, SP_TIMER_FNS_STRUCT_SIZE, st)) t->nanoseconds = [](SP_Timer) -> uint64_t {
        return 0;
      };
  };
  f->destroy_timer_fns = [](const SP_Platform*, SP_TimerFns*) {};
}

// Returns the graph unchanged.
void IdentityOptimize(void*, const TF_Buffer* in, const TF_GrapplerItem*, TF_Buffer* out,
                      TF_Status*) {
  void* data = std::malloc(in->length ? in->length : 1);
  if (in->length) std::memcpy(data, in->data, in->length);
  out->data = data;
  out->length = in->length;
  out->data_deallocator = [](void* d, size_t) { std::free(d); };
}

void RegisterIdentityOptimizer(TP_OptimizerRegistrationParams* params, TF_Status* status) {
  if (params == nullptr || !Prepare(params->optimizer, TP_OPTIMIZER_STRUCT_SIZE, status) ||
      !Prepare(params->optimizer_configs, TP_OPTIMIZER_CONFIGS_STRUCT_SIZE, status))
    return;
  params->major_version = GO_MAJOR;
  params->minor_version = GO_MINOR;
  params->patch_version = GO_PATCH;
  params->device_type = g_fallback_type.c_str();
  params->optimizer->optimize_func = &IdentityOptimize;
}

void NoOpStart(const TP_Profiler*, TF_Status*) {}
void NoOpCollect(const TP_Profiler*, uint8_t*, size_t* size, TF_Status*) { *size = 0; }

void RegisterNoOpProfiler(TF_ProfilerRegistrationParams* params, TF_Status* status) {
  if (params == nullptr || !Prepare(params->profiler, TP_PROFILER_STRUCT_SIZE, status) ||
      !Prepare(params->profiler_fns, TP_PROFILER_FNS_STRUCT_SIZE, status))
    return;
  params->major_version = TP_MAJOR;
  params->minor_version = TP_MINOR;
  params->patch_version = TP_PATCH;
  params->profiler->device_type = g_fallback_type.c_str();
  params->profiler_fns->start = &NoOpStart;
  params->profiler_fns->stop = &NoOpStart;
  params->profiler_fns->collect_data_xspace = &NoOpCollect;
  params->destroy_profiler = [](TP_Profiler*) {};
  params->destroy_profiler_fns = [](TP_ProfilerFns*) {};
}

}  // namespace

PDK_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams* params, TF_Status* status) {
  const Core& c = TheCore();
  if (c.se) return c.se(params, status);
  RegisterNoDevicePlatform(params, status);
}

PDK_EXPORT void TF_InitGraph(TP_OptimizerRegistrationParams* params, TF_Status* status) {
  const Core& c = TheCore();
  if (c.graph) return c.graph(params, status);
  RegisterIdentityOptimizer(params, status);
}

PDK_EXPORT void TF_InitKernel() {
  const Core& c = TheCore();
  if (c.kernel) c.kernel();
}

PDK_EXPORT void TF_InitProfiler(TF_ProfilerRegistrationParams* params, TF_Status* status) {
  const Core& c = TheCore();
  if (c.profiler) return c.profiler(params, status);
  RegisterNoOpProfiler(params, status);
}

// The core this process runs ("" if none) and its ISA level with the reason.
PDK_EXPORT const char* PDK_CoreLibrary() { return TheCore().path.c_str(); }
PDK_EXPORT const char* PDK_CpuIsa() { return TheCore().isa.c_str(); }
