// The exported entry points of the PDK plugin library, and nothing else.
//
// TensorFlow looks up SE_InitPlugin (device runtime), TF_InitGraph (graph
// optimizer) and TF_InitKernel (kernels) when it loads libpdk_plugin.so from
// site-packages/tensorflow-plugins.
// The PDK_* functions are a small C ABI read by the Python package
// (tensorflow_pdk/_native.py) through ctypes.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "compute/thread_pool.h"
#include "device/async_launcher.h"
#include "device/pdk_device.h"
#include "graph/optimizer.h"
#include "graph/strict_placement.h"
#include "pdk/device.h"
#include "pdk/python_hooks.h"
#include "pdk/eigen.h"
#include "pdk/kernel.h"
#include "profiler/profiler.h"
#include "tensorflow/c/kernels.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#ifndef PDK_VERSION
#define PDK_VERSION "0.0.0"
#endif
#ifndef PDK_TF_VERSION
#define PDK_TF_VERSION "unknown"
#endif

#define PDK_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::atomic<int> g_se_init_calls{0};
std::string g_disabled_reason;  // set once in the first SE_InitPlugin
bool g_is_duplicate = false;    // this copy's SE_InitPlugin registered an inert platform
std::string g_duplicate_name;   // ... under this name

// Claims the "PDK" platform for this process. Another copy of the library (a
// second build, or the same file loaded under another path) must not register
// it again: TensorFlow aborts on a duplicate platform or device factory. The
// claim is an environment variable holding the pid, which every copy of the
// library in the process sees and a child process does not inherit as valid.
bool ClaimProcessWide() {
  static constexpr char kVar[] = "PDK_PLUGIN_REGISTERED_PID";
  const std::string me = std::to_string(static_cast<long>(getpid()));
  const char* cur = std::getenv(kVar);
  if (cur != nullptr && me == cur) return false;
  setenv(kVar, me.c_str(), 1);
  return true;
}

// The running TensorFlow's version, from TF_Version in libtensorflow_cc.so.2
// (resolved at run time, beside the libtensorflow_framework.so.2 we link).
std::string RunningTensorFlowVersion() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&TF_NewStatus), &info) || !info.dli_fname) return "";
  std::string dir(info.dli_fname);
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  void* cc = dlopen((dir + "libtensorflow_cc.so.2").c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!cc) return "";
  using VersionFn = const char* (*)();
  auto fn = reinterpret_cast<VersionFn>(dlsym(cc, "TF_Version"));
  std::string v = fn ? fn() : "";
  dlclose(cc);
  return v;
}

// (major, minor) of "2.19.1", "2.22.0-dev20251120"; {0, 0} if unreadable.
std::pair<int, int> MajorMinor(const std::string& v) {
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

// The TensorFlow versions one PDK wheel serves: every release from 2.16 (the
// first with Keras 3 and the C API functions PDK imports, checked by
// tests/python/test_tf_versions.py) on. Releases newer than the one PDK was
// built against (tf-nightly) run with a one-line notice.
constexpr std::pair<int, int> kOldestTensorFlow{2, 16};

// Why the running TensorFlow cannot host PDK ("" if it can).
std::string VersionProblem(const std::string& running) {
  const auto v = MajorMinor(running);
  if (v.first == 0) return "";  // unknown: try
  if (v < kOldestTensorFlow)
    return "TensorFlow " + running + " is older than 2.16, the oldest TensorFlow PDK supports; "
           "the PDK device is disabled (pip install 'tensorflow>=2.16').";
  if (v > MajorMinor(PDK_TF_VERSION))
    std::fprintf(stderr,
                 "PDK: TensorFlow %s is newer than the newest version PDK was tested with (%s); "
                 "PDK runs, report problems.\n",
                 running.c_str(), PDK_TF_VERSION);
  return "";
}

// A platform with no devices, registered when the library is initialized a
// second time in one process (TensorFlow loads every .so it finds, and a venv
// whose lib64 links to lib shows it the same file twice, issue 55497). A
// second "PDK" platform would abort the process inside TensorFlow; this one is
// harmless: it has a distinct name and zero devices.
class InertPlatform final : public pdk::Platform {
 public:
  explicit InertPlatform(std::string name) : name_(std::move(name)) {}
  const char* name() const override { return name_.c_str(); }
  const char* type() const override { return name_.c_str(); }
  pdk::StatusOr<int> DeviceCount() const override { return 0; }
  pdk::StatusOr<std::unique_ptr<pdk::Device>> CreateDevice(int ordinal) override {
    return pdk::FailedPrecondition(name_, " has no devices (ordinal ", ordinal, ")");
  }

 private:
  std::string name_;
};

// Runs tensorflow_pdk._hooks.install() in the Python interpreter that is
// loading TensorFlow (python/tensorflow_pdk/_hooks.py: tf.function(jit_compile=
// True) on PDK without XLA, set_visible_devices([], "PDK") honoured; fixes no
// C API hook can reach), through the kit's pdk/python_hooks.h.
void InstallPythonHooks() { pdk::RunPythonHook("tensorflow_pdk._hooks", "install", "PDK"); }

}  // namespace

PDK_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams* params, TF_Status* status) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (g_se_init_calls.fetch_add(1) == 0 && ClaimProcessWide()) {
    g_disabled_reason = VersionProblem(RunningTensorFlowVersion());
    if (!g_disabled_reason.empty()) {
      std::fprintf(stderr, "PDK: %s\n", g_disabled_reason.c_str());
    } else if (pdk_plugin::Config().device_count == 0) {
      g_disabled_reason = "PDK_DEVICE_COUNT=0: PDK registers no devices and no kernels.";
    }
    static pdk_plugin::PdkPlatform platform(g_disabled_reason.empty());
    pdk::InitPlatform(&platform, params, status);
    return;
  }
  // A duplicate: a process-wide sequence number names it (names must match
  // [A-Z][A-Z_]*): PDK_DUPLICATE_LOAD_A, _B, ...
  static constexpr char kCountVar[] = "PDK_PLUGIN_DUPLICATES";
  const char* prev = std::getenv(kCountVar);
  const int n = (prev ? std::atoi(prev) : 0) + 1;
  setenv(kCountVar, std::to_string(n).c_str(), 1);
  std::string name = "PDK_DUPLICATE_LOAD_";
  for (int k = n; k > 0; k = (k - 1) / 26) name += static_cast<char>('A' + (k - 1) % 26);
  g_is_duplicate = true;
  g_duplicate_name = name;
  std::fprintf(stderr,
               "PDK: a second copy of the PDK plugin was loaded in this process; "
               "it registers no devices and no kernels (%s).\n",
               name.c_str());
  static auto* inert = new std::vector<std::unique_ptr<InertPlatform>>;
  inert->push_back(std::make_unique<InertPlatform>(name));
  pdk::InitPlatform(inert->back().get(), params, status);
}

// The graph optimizer (src/graph/). TensorFlow calls this after SE_InitPlugin.
// A duplicate copy registers its optimizer for its inert platform's device
// type (TensorFlow aborts on a second optimizer for "PDK"); no node is ever
// placed there, so it never runs.
PDK_EXPORT void TF_InitGraph(TP_OptimizerRegistrationParams* params, TF_Status* status) {
  static std::string device_type;
  device_type = g_is_duplicate ? g_duplicate_name : std::string(pdk_plugin::kDeviceType);
  pdk_graph::InitGraph(
      params, device_type.c_str(),
      [](const std::string& op) {
        for (const auto& k : pdk::KernelRegistry::Global().registered())
          if (k.op == op) return true;
        return false;
      },
      [] {
        pdk_graph::AsyncLaunchPolicy policy;
        for (const auto& k : pdk::KernelRegistry::Global().registered())
          if (k.async) {
            std::vector<std::pair<std::string, int>> types;
            for (const auto& [attr, dt] : k.type_constraints) types.emplace_back(attr, dt);
            policy.ops[k.op].push_back(std::move(types));
          }
        policy.min_bytes = pdk_plugin::AsyncMinBytes();
        return policy;
      },
      status);
}

PDK_EXPORT void TF_InitKernel() {
  if (!g_disabled_reason.empty() || g_is_duplicate) return;
  pdk::SetThreadsPerDevice(pdk_compute::NumThreads());  // before any kernel creates a pool
  pdk_plugin::InitAsync(MajorMinor(RunningTensorFlowVersion()));  // before Async kernels register
  pdk::Status st = pdk::KernelRegistry::Global().RegisterAll(pdk_plugin::kDeviceType);
  if (!st.ok()) std::fprintf(stderr, "PDK: kernel registration failed: %s\n", st.message().c_str());
  if (st.ok() && pdk_graph::StrictEnabled())  // PDK_STRICT=1: src/graph/strict_placement.h
    pdk_graph::RegisterStrictTypeGuards(pdk_plugin::kDeviceType);
  InstallPythonHooks();
}

// ---- C ABI for the Python package (tensorflow_pdk/_native.py) ----

namespace {
// Copies `s` into buf (NUL-terminated, truncated to cap) and returns the full
// length, so callers can retry with a larger buffer.
size_t CopyOut(const std::string& s, char* buf, size_t cap) {
  if (buf && cap) {
    const size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return s.size();
}
}  // namespace

// The pluggable profiler (src/profiler/): TensorFlow looks this up next to
// SE_InitPlugin when it loads the library.
PDK_EXPORT void TF_InitProfiler(TF_ProfilerRegistrationParams* params, TF_Status* status) {
  static std::string device_type;
  device_type = g_is_duplicate ? g_duplicate_name : std::string(pdk_plugin::kDeviceType);
  pdk_profiler::InitProfiler(params, device_type.c_str(), status);
}

PDK_EXPORT const char* PDK_Version() { return PDK_VERSION; }
PDK_EXPORT const char* PDK_BuiltForTensorFlow() { return PDK_TF_VERSION; }
PDK_EXPORT const char* PDK_DisabledReason() { return g_disabled_reason.c_str(); }
// Asynchronous kernels: "on: <settings>" or "off: <why>" (src/device/async_launcher.h).
PDK_EXPORT const char* PDK_AsyncStatus() { return pdk_plugin::AsyncStatus().c_str(); }
// Kernel launches that ran on a launcher thread since load.
PDK_EXPORT uint64_t PDK_AsyncLaunches() { return pdk_plugin::AsyncLaunches(); }

// The settings in force, "name<TAB>value" per line: device_count,
// memory_limit_bytes (per device), num_threads (per device pool).
PDK_EXPORT size_t PDK_ConfigText(char* buf, size_t cap) {
  const auto& c = pdk_plugin::Config();
  const std::string out = "device_count\t" + std::to_string(c.device_count) +
                          "\nmemory_limit_bytes\t" + std::to_string(c.memory_limit) +
                          "\nnum_threads\t" + std::to_string(pdk_compute::NumThreads()) + "\n";
  return CopyOut(out, buf, cap);
}

// One line per registered kernel: "op<TAB>attr=dtype,attr=dtype<TAB>host_arg,host_arg",
// plus "<TAB>async" for an asynchronous kernel.
PDK_EXPORT size_t PDK_RegisteredKernels(char* buf, size_t cap) {
  std::string out;
  for (const auto& k : pdk::KernelRegistry::Global().registered()) {
    out += k.op + "\t";
    for (size_t i = 0; i < k.type_constraints.size(); ++i)
      out += (i ? "," : "") + k.type_constraints[i].first + "=" +
             pdk::DataTypeName(k.type_constraints[i].second);
    out += "\t";
    for (size_t i = 0; i < k.host_memory.size(); ++i) out += (i ? "," : "") + k.host_memory[i];
    out += k.async ? "\tasync\n" : "\n";
  }
  return CopyOut(out, buf, cap);
}

// 1 if `op` is a compute op (tensorflow_pdk.placement.is_compute_op, PDK_STRICT).
PDK_EXPORT int PDK_IsComputeOp(const char* op) { return op && pdk_graph::IsComputeOp(op); }

// One line per op with a PDK kernel: "op<TAB>launches".
PDK_EXPORT size_t PDK_LaunchCounts(char* buf, size_t cap) {
  std::string out;
  for (const auto& [op, n] : pdk::LaunchStats::Global().Snapshot())
    out += op + "\t" + std::to_string(n) + "\n";
  return CopyOut(out, buf, cap);
}

PDK_EXPORT void PDK_ResetLaunchCounts() { pdk::LaunchStats::Global().Reset(); }

// One line per graph rewrite pattern that fired since load (or the last
// reset): "pattern<TAB>count", e.g. "MatMul+BiasAdd+Relu\t2".
PDK_EXPORT size_t PDK_GraphRewriteCounts(char* buf, size_t cap) {
  std::string out;
  for (const auto& [pattern, n] : pdk_graph::GlobalRewriteCounts())
    out += pattern + "\t" + std::to_string(n) + "\n";
  return CopyOut(out, buf, cap);
}

// The x86-64 psABI level this core was compiled for, from the compiler's
// predefined macros (-march): the loader (src/plugin_loader.cc) picks the core.
PDK_EXPORT const char* PDK_CoreIsa() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  return "x86-64-v4";
#elif defined(__AVX2__) && defined(__FMA__)
  return "x86-64-v3";
#elif defined(__SSE4_2__) && defined(__POPCNT__)
  return "x86-64-v2";
#else
  return "x86-64";
#endif
}

// The compute libraries this core runs with and the code path each chose at
// run time, "name<TAB>text" per line: oneDNN's version and effective ISA
// (dnnl_get_effective_cpu_isa, capped by ONEDNN_MAX_CPU_ISA), OpenBLAS's build
// configuration and the core it dispatched to (OPENBLAS_CORETYPE overrides it).
PDK_EXPORT size_t PDK_MathLibraries(char* buf, size_t cap) {
  const dnnl_version_t* v = dnnl_version();
  const char* isa = "other";
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: isa = "SSE41"; break;
    case dnnl_cpu_isa_avx: isa = "AVX"; break;
    case dnnl_cpu_isa_avx2: isa = "AVX2"; break;
    case dnnl_cpu_isa_avx2_vnni: isa = "AVX2_VNNI"; break;
    case dnnl_cpu_isa_avx512_core: isa = "AVX512_CORE"; break;
    case dnnl_cpu_isa_avx512_core_vnni: isa = "AVX512_CORE_VNNI"; break;
    case dnnl_cpu_isa_avx512_core_bf16: isa = "AVX512_CORE_BF16"; break;
    case dnnl_cpu_isa_avx512_core_amx: isa = "AVX512_CORE_AMX"; break;
    default: break;
  }
  const std::string out = "oneDNN\t" + std::to_string(v->major) + "." + std::to_string(v->minor) +
                          "." + std::to_string(v->patch) + " (ISA " + isa + ")\nOpenBLAS\t" +
                          openblas_get_config() + " (core " + openblas_get_corename() + ")\n";
  return CopyOut(out, buf, cap);
}

PDK_EXPORT void PDK_ResetGraphRewriteCounts() { pdk_graph::ResetGlobalRewriteCounts(); }

// out[0..7] = num_allocs, bytes_in_use, peak_bytes_in_use, largest_alloc_size,
// bytes_limit, pool_bytes, peak_pool_bytes, num_failed_allocs of device
// `ordinal`'s memory pool (src/device/memory_pool.h): tensor-level figures,
// since PDK declines TensorFlow's BFC allocator. Returns 0 if no such device
// exists.
PDK_EXPORT int PDK_DeviceAllocatorStats(int ordinal, int64_t* out) {
  pdk_plugin::PoolStats s;
  if (!pdk_plugin::DeviceStatsFor(ordinal, &s)) return 0;
  out[0] = s.num_allocs;
  out[1] = s.bytes_in_use;
  out[2] = s.peak_bytes_in_use;
  out[3] = s.largest_alloc_size;
  out[4] = s.bytes_limit;
  out[5] = s.pool_bytes;
  out[6] = s.peak_pool_bytes;
  out[7] = s.num_failed_allocs;
  return 1;
}

// tf.config.experimental.reset_memory_stats for device `ordinal`: num_allocs
// and largest_alloc_size to 0, the peaks to the current figures. Returns 0 if
// no such device exists.
PDK_EXPORT int PDK_ResetDeviceAllocatorStats(int ordinal) {
  return pdk_plugin::ClearDeviceStats(ordinal) ? 1 : 0;
}
