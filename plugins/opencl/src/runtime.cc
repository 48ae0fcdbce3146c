// The OPENCL device runtime (runtime.h).
#include "runtime.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "pdk/profiler.h"
#include "program_source.h"

namespace pdk_opencl {

std::string ClErrorName(cl_int err) {
  const char* n = "CL error";
  switch (err) {
#define PDK_CL_NAME(c) \
  case c:              \
    n = #c;            \
    break;
    PDK_CL_NAME(CL_DEVICE_NOT_FOUND)
    PDK_CL_NAME(CL_DEVICE_NOT_AVAILABLE)
    PDK_CL_NAME(CL_COMPILER_NOT_AVAILABLE)
    PDK_CL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    PDK_CL_NAME(CL_OUT_OF_RESOURCES)
    PDK_CL_NAME(CL_OUT_OF_HOST_MEMORY)
    PDK_CL_NAME(CL_BUILD_PROGRAM_FAILURE)
    PDK_CL_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    PDK_CL_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    PDK_CL_NAME(CL_INVALID_VALUE)
    PDK_CL_NAME(CL_INVALID_DEVICE)
    PDK_CL_NAME(CL_INVALID_CONTEXT)
    PDK_CL_NAME(CL_INVALID_COMMAND_QUEUE)
    PDK_CL_NAME(CL_INVALID_MEM_OBJECT)
    PDK_CL_NAME(CL_INVALID_BINARY)
    PDK_CL_NAME(CL_INVALID_BUILD_OPTIONS)
    PDK_CL_NAME(CL_INVALID_PROGRAM)
    PDK_CL_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    PDK_CL_NAME(CL_INVALID_KERNEL_NAME)
    PDK_CL_NAME(CL_INVALID_KERNEL)
    PDK_CL_NAME(CL_INVALID_ARG_INDEX)
    PDK_CL_NAME(CL_INVALID_ARG_VALUE)
    PDK_CL_NAME(CL_INVALID_ARG_SIZE)
    PDK_CL_NAME(CL_INVALID_KERNEL_ARGS)
    PDK_CL_NAME(CL_INVALID_WORK_DIMENSION)
    PDK_CL_NAME(CL_INVALID_WORK_GROUP_SIZE)
    PDK_CL_NAME(CL_INVALID_GLOBAL_OFFSET)
    PDK_CL_NAME(CL_INVALID_EVENT_WAIT_LIST)
    PDK_CL_NAME(CL_INVALID_EVENT)
    PDK_CL_NAME(CL_INVALID_OPERATION)
    PDK_CL_NAME(CL_INVALID_BUFFER_SIZE)
    PDK_CL_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
#undef PDK_CL_NAME
    default:
      break;
  }
  return std::string(n) + " (" + std::to_string(err) + ")";
}

pdk::Status ClStatus(cl_int err, const std::string& what) {
  if (err == CL_SUCCESS) return pdk::Status::OK();
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
      err == CL_OUT_OF_HOST_MEMORY)
    return pdk::ResourceExhausted(what, ": ", ClErrorName(err), " (OPENCL device)");
  return pdk::Internal(what, ": ", ClErrorName(err), " (OPENCL device)");
}

// ------------------------------------------------------------------ streams

ClStream::ClStream(ClDevice* device, cl_command_queue queue) : device_(device), queue_(queue) {
  static std::atomic<int64_t> next{1};
  id_ = next++;
}

namespace {
struct Tracked {
  cl_event ev;
  int device;
  int64_t line;
  std::string node, op;
  int64_t host_enqueue_ns;
};
std::mutex& TrackedMu() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
std::vector<Tracked>& TrackedEvents() {
  static auto* v = new std::vector<Tracked>;
  return *v;
}
}  // namespace

void TrackForProfile(cl_event ev, const ClStream& stream, std::string node, std::string op) {
  std::lock_guard<std::mutex> l(TrackedMu());
  TrackedEvents().push_back(Tracked{ev, stream.device().ordinal(), stream.id(), std::move(node),
                                    std::move(op), pdk::TraceClockNs()});
}

void FlushProfile() {
  std::vector<Tracked> events;
  {
    std::lock_guard<std::mutex> l(TrackedMu());
    events.swap(TrackedEvents());
  }
  for (const Tracked& t : events) {
    cl_ulong queued = 0, start = 0, end = 0;
    const bool ok =
        clWaitForEvents(1, &t.ev) == CL_SUCCESS &&
        clGetEventProfilingInfo(t.ev, CL_PROFILING_COMMAND_QUEUED, sizeof(queued), &queued,
                                nullptr) == CL_SUCCESS &&
        clGetEventProfilingInfo(t.ev, CL_PROFILING_COMMAND_START, sizeof(start), &start,
                                nullptr) == CL_SUCCESS &&
        clGetEventProfilingInfo(t.ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr) ==
            CL_SUCCESS;
    clReleaseEvent(t.ev);
    if (!ok) continue;
    // The device clock's epoch is the driver's: the enqueue's host time
    // anchors it (queued time = host enqueue time).
    const int64_t offset = t.host_enqueue_ns - static_cast<int64_t>(queued);
    pdk::DeviceSpan span;
    span.device = t.device;
    span.line = t.line;
    span.line_name = std::string(kDeviceType) + " stream " + std::to_string(t.line);
    span.node = t.node;
    span.op = t.op;
    span.begin_ns = static_cast<int64_t>(start) + offset;
    span.end_ns = static_cast<int64_t>(end) + offset;
    pdk::RecordDeviceSpan(span);
  }
}

ClStream::~ClStream() {
  clFinish(queue_);
  clReleaseCommandQueue(queue_);
}

pdk::Status ClStream::status() const {
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

void ClStream::SetError(const pdk::Status& s) {
  std::lock_guard<std::mutex> l(mu_);
  if (status_.ok()) status_ = s;
}

ClTimer::~ClTimer() {
  if (start) clReleaseEvent(start);
  if (stop) clReleaseEvent(stop);
}

uint64_t ClTimer::Nanoseconds() const {
  if (!start || !stop) return 0;
  cl_event both[2] = {start, stop};
  if (clWaitForEvents(2, both) != CL_SUCCESS) return 0;
  cl_ulong a = 0, b = 0;
  clGetEventProfilingInfo(start, CL_PROFILING_COMMAND_END, sizeof(a), &a, nullptr);
  clGetEventProfilingInfo(stop, CL_PROFILING_COMMAND_END, sizeof(b), &b, nullptr);
  return b > a ? b - a : 0;
}

CallbackThread::CallbackThread() : thread_([this] { Loop(); }) {}

CallbackThread::~CallbackThread() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void CallbackThread::Post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> l(mu_);
    q_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

void CallbackThread::Loop() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stop_ || !q_.empty(); });
      if (q_.empty()) return;
      fn = std::move(q_.front());
      q_.pop_front();
    }
    fn();
  }
}

// ------------------------------------------------------------------ devices

namespace {

std::string DeviceString(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  clGetDeviceInfo(d, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string PlatformString(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  clGetPlatformInfo(p, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <class T>
T DeviceValue(cl_device_id d, cl_device_info what) {
  T v{};
  clGetDeviceInfo(d, what, sizeof(v), &v, nullptr);
  return v;
}

// Opens every OpenCL driver the ICD loader would (the libraries the .icd
// files in OCL_ICD_VENDORS or /etc/OpenCL/vendors name) with RTLD_DEEPBIND
// first, so each driver binds to its own dependencies. Why: TensorFlow's
// libtensorflow_framework.so.2 exports the LLVM it embeds, Python loads it
// into the global scope, and a driver that links a different LLVM (PoCL:
// libLLVM-15 through libclang-cpp; GPU vendors' compilers alike) would
// otherwise run its static initializers against TensorFlow's LLVM and crash.
// The loader's own dlopen of the same file then finds it already loaded.
void PreloadDrivers() {
  const char* env = std::getenv("OCL_ICD_VENDORS");
  const std::string dir = env && *env ? env : "/etc/OpenCL/vendors";
  std::vector<std::string> icds;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".icd") == 0)
          icds.push_back(dir + "/" + name);
      }
      closedir(d);
    }
  }
  for (const std::string& icd : icds) {
    std::ifstream in(icd);
    std::string lib;
    std::getline(in, lib);
    while (!lib.empty() && (lib.back() == '\n' || lib.back() == '\r' || lib.back() == ' '))
      lib.pop_back();
    if (!lib.empty()) dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  }
}

std::vector<DeviceInfo> AllDevices(std::string* why_none) {
  std::vector<DeviceInfo> out;
  PreloadDrivers();
  cl_uint np = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &np);
  if (err != CL_SUCCESS || np == 0) {
    *why_none = err == CL_SUCCESS || err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */
                    ? "no OpenCL platform is installed (an ICD in /etc/OpenCL/vendors; on "
                      "Debian e.g. pocl-opencl-icd for the CPU, or a GPU vendor's driver)"
                    : "clGetPlatformIDs failed: " + ClErrorName(err);
    return out;
  }
  std::vector<cl_platform_id> ps(np);
  clGetPlatformIDs(np, ps.data(), nullptr);
  for (cl_platform_id p : ps) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> ds(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr);
    for (cl_device_id d : ds) {
      DeviceInfo i;
      i.platform = p;
      i.id = d;
      i.name = DeviceString(d, CL_DEVICE_NAME);
      i.vendor = DeviceString(d, CL_DEVICE_VENDOR);
      i.version = DeviceString(d, CL_DEVICE_VERSION);
      i.driver = DeviceString(d, CL_DRIVER_VERSION);
      i.platform_name = PlatformString(p, CL_PLATFORM_NAME) + " " +
                        PlatformString(p, CL_PLATFORM_VERSION);
      i.type = DeviceValue<cl_device_type>(d, CL_DEVICE_TYPE);
      i.global_mem = DeviceValue<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
      i.max_alloc = DeviceValue<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      i.compute_units = DeviceValue<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
      i.clock_mhz = DeviceValue<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
      const std::string ext = " " + DeviceString(d, CL_DEVICE_EXTENSIONS) + " ";
      i.fp16 = ext.find(" cl_khr_fp16 ") != std::string::npos;
      i.fp64 = ext.find(" cl_khr_fp64 ") != std::string::npos;
      if (DeviceValue<cl_bool>(d, CL_DEVICE_AVAILABLE)) out.push_back(std::move(i));
    }
  }
  if (out.empty()) *why_none = "the OpenCL platforms list no available device";
  return out;
}

bool IsAccelerator(const DeviceInfo& d) {
  return (d.type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) != 0;
}

}  // namespace

std::vector<DeviceInfo> SelectDevices(std::string* why_none) {
  std::vector<DeviceInfo> all = AllDevices(why_none);
  if (all.empty()) return all;
  const char* env = std::getenv("PDK_OPENCL_DEVICES");
  const std::string sel = env ? env : "auto";
  std::vector<DeviceInfo> out;
  if (sel == "none") {
    *why_none = "PDK_OPENCL_DEVICES=none";
    return out;
  }
  if (sel == "auto" || sel.empty()) {
    for (auto& d : all)
      if (IsAccelerator(d)) out.push_back(d);
    if (out.empty()) out = all;  // e.g. PoCL on a machine without a GPU
    return out;
  }
  if (sel == "all") return all;
  if (sel == "gpu" || sel == "cpu") {
    for (auto& d : all)
      if (sel == "gpu" ? IsAccelerator(d) : (d.type & CL_DEVICE_TYPE_CPU) != 0) out.push_back(d);
    if (out.empty()) *why_none = "PDK_OPENCL_DEVICES=" + sel + " matches no OpenCL device";
    return out;
  }
  std::stringstream ss(sel);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long k = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || k < 0 || k >= static_cast<long>(all.size())) {
      *why_none = "PDK_OPENCL_DEVICES=" + sel + ": '" + item +
                  "' is not auto, all, gpu, cpu, none or an index below " +
                  std::to_string(all.size());
      return {};
    }
    out.push_back(all[k]);
  }
  return out;
}

const PlatformState& Selected() {
  static const PlatformState state = [] {
    PlatformState s;
    s.devices = SelectDevices(&s.why_none);
    return s;
  }();
  return state;
}

pdk::StatusOr<std::unique_ptr<ClDevice>> ClDevice::Open(const DeviceInfo& info, int ordinal) {
  std::unique_ptr<ClDevice> d(new ClDevice(info, ordinal));
  PDK_RETURN_IF_ERROR(d->Init());
  return d;
}

pdk::Status ClDevice::Init() {
  cl_int err = CL_SUCCESS;
  const cl_context_properties props[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(info_.platform), 0};
  context_ = clCreateContext(props, 1, &info_.id, nullptr, nullptr, &err);
  PDK_CL_RETURN_IF_ERROR(err, "clCreateContext");
  PDK_ASSIGN_OR_RETURN(sync_queue_, NewQueue());
  // The memory TensorFlow may take: PDK_OPENCL_MEMORY_LIMIT_MB, else the
  // device's global memory.
  limit_ = info_.global_mem;
  if (const char* mb = std::getenv("PDK_OPENCL_MEMORY_LIMIT_MB")) {
    const long long v = std::atoll(mb);
    if (v > 0) limit_ = static_cast<uint64_t>(v) << 20;
  }
  return BuildProgram();
}

ClDevice::~ClDevice() {
  if (sync_queue_) {
    clFinish(sync_queue_);
    clReleaseCommandQueue(sync_queue_);
  }
  if (program_) clReleaseProgram(program_);
  if (context_) clReleaseContext(context_);
}

pdk::StatusOr<cl_command_queue> ClDevice::NewQueue() const {
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(context_, info_.id, CL_QUEUE_PROFILING_ENABLE, &err);
  PDK_CL_RETURN_IF_ERROR(err, "clCreateCommandQueue");
  return q;
}

// ---- the program: compiled once per device, binaries cached on disk

namespace {

uint64_t Fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string CacheDir() {
  if (const char* d = std::getenv("PDK_OPENCL_CACHE_DIR")) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return std::string(x) + "/pdk-opencl";
  if (const char* h = std::getenv("HOME")) return std::string(h) + "/.cache/pdk-opencl";
  return "";
}

void MakeDirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') mkdir(path.substr(0, i).c_str(), 0755);
}

}  // namespace

pdk::Status ClDevice::BuildProgram() {
  std::string options = "-cl-std=CL1.2";
  if (info_.fp16) options += " -DPDK_FP16=1";
  if (info_.fp64) options += " -DPDK_FP64=1";
  const std::string source(kProgramSource);
  char key[32];
  std::snprintf(key, sizeof(key), "%016llx",
                static_cast<unsigned long long>(Fnv1a(
                    info_.platform_name + "|" + info_.name + "|" + info_.driver + "|" + options +
                    "|" + source)));
  const std::string dir = CacheDir();
  const std::string path = dir.empty() ? "" : dir + "/" + key + ".bin";
  cl_int err = CL_SUCCESS;

  // A cached binary of this source for this device and driver.
  if (!path.empty()) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::string bin((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const unsigned char* p = reinterpret_cast<const unsigned char*>(bin.data());
      const size_t n = bin.size();
      cl_int bin_status = CL_SUCCESS;
      cl_program prog = clCreateProgramWithBinary(context_, 1, &info_.id, &n, &p, &bin_status, &err);
      if (err == CL_SUCCESS && bin_status == CL_SUCCESS &&
          clBuildProgram(prog, 1, &info_.id, options.c_str(), nullptr, nullptr) == CL_SUCCESS) {
        program_ = prog;
        return pdk::Status::OK();
      }
      if (prog) clReleaseProgram(prog);  // stale or foreign: compile from source
    }
  }

  const char* src = source.c_str();
  const size_t len = source.size();
  program_ = clCreateProgramWithSource(context_, 1, &src, &len, &err);
  PDK_CL_RETURN_IF_ERROR(err, "clCreateProgramWithSource");
  err = clBuildProgram(program_, 1, &info_.id, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(program_, info_.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(program_, info_.id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    return pdk::Internal("building the OPENCL kernels for ", info_.name, " failed (",
                         ClErrorName(err), "):\n", log);
  }
  if (!path.empty()) {
    size_t n = 0;
    if (clGetProgramInfo(program_, CL_PROGRAM_BINARY_SIZES, sizeof(n), &n, nullptr) ==
            CL_SUCCESS &&
        n > 0) {
      std::string bin(n, '\0');
      unsigned char* p = reinterpret_cast<unsigned char*>(bin.data());
      if (clGetProgramInfo(program_, CL_PROGRAM_BINARIES, sizeof(p), &p, nullptr) == CL_SUCCESS) {
        MakeDirs(dir);
        const std::string tmp = path + ".tmp" + std::to_string(getpid());
        std::ofstream out(tmp, std::ios::binary);
        out.write(bin.data(), static_cast<std::streamsize>(bin.size()));
        out.close();
        if (out) std::rename(tmp.c_str(), path.c_str());  // atomic: concurrent processes
        else std::remove(tmp.c_str());
      }
    }
  }
  return pdk::Status::OK();
}

pdk::StatusOr<cl_kernel> ClDevice::Kernel(const char* name) {
  // Per thread and device: the kernels this thread created.
  thread_local std::unordered_map<const ClDevice*, std::unordered_map<std::string, cl_kernel>>
      cache;
  auto& mine = cache[this];
  auto it = mine.find(name);
  if (it != mine.end()) return it->second;
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(program_, name, &err);
  if (err == CL_INVALID_KERNEL_NAME)
    return pdk::NotFound("the OPENCL program has no kernel '", name, "'");
  PDK_CL_RETURN_IF_ERROR(err, std::string("clCreateKernel ") + name);
  mine.emplace(name, k);
  return k;
}

pdk::Status ClDevice::Resolve(const void* address, cl_mem* buffer, uint64_t* offset) const {
  const auto r = addresses_.Resolve(address);
  if (!r.ok)
    return pdk::InvalidArgument("address ", address, " is not in the memory of OPENCL device ",
                                ordinal_, " (a host tensor given to a device argument?)");
  *buffer = r.handle;
  *offset = r.offset;
  return pdk::Status::OK();
}

// ---- memory

void* ClDevice::Allocate(uint64_t bytes, int64_t) {
  if (bytes == 0) return nullptr;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stats_.bytes_in_use + static_cast<int64_t>(bytes) > static_cast<int64_t>(limit_))
      return nullptr;
  }
  if (bytes > info_.max_alloc) return nullptr;  // TensorFlow's BFC allocator tries smaller
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (err != CL_SUCCESS) return nullptr;
  void* addr = addresses_.Insert(m, bytes);
  if (addr == nullptr) {
    clReleaseMemObject(m);
    return nullptr;
  }
  std::lock_guard<std::mutex> l(mu_);
  stats_.num_allocs++;
  stats_.bytes_in_use += static_cast<int64_t>(bytes);
  if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
  if (static_cast<int64_t>(bytes) > stats_.largest_alloc_size)
    stats_.largest_alloc_size = static_cast<int64_t>(bytes);
  return addr;
}

void ClDevice::Deallocate(void* ptr, uint64_t) {
  if (ptr == nullptr) return;
  const uint64_t bytes = addresses_.SizeOf(ptr);
  cl_mem m = addresses_.Erase(ptr);
  if (m == nullptr) return;
  // OpenCL keeps a buffer alive until the commands using it are done.
  clReleaseMemObject(m);
  std::lock_guard<std::mutex> l(mu_);
  stats_.bytes_in_use -= static_cast<int64_t>(bytes);
}

void* ClDevice::HostAllocate(uint64_t bytes) {
  return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
}
void ClDevice::HostDeallocate(void* ptr) { std::free(ptr); }

pdk::AllocatorStats ClDevice::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  pdk::AllocatorStats s = stats_;
  s.bytes_limit = static_cast<int64_t>(limit_);
  return s;
}

bool ClDevice::MemoryUsage(int64_t* free, int64_t* total) const {
  std::lock_guard<std::mutex> l(mu_);
  *total = static_cast<int64_t>(limit_);
  *free = static_cast<int64_t>(limit_) - stats_.bytes_in_use;
  return true;
}

double ClDevice::gflops() const {
  return static_cast<double>(info_.compute_units) * info_.clock_mhz * 1e-3 * 16;
}

// ---- streams and events

pdk::StatusOr<std::unique_ptr<pdk::Stream>> ClDevice::CreateStream() {
  PDK_ASSIGN_OR_RETURN(cl_command_queue q, NewQueue());
  auto s = std::make_unique<ClStream>(this, q);
  return std::unique_ptr<pdk::Stream>(std::move(s));
}

namespace {
ClStream& S(pdk::Stream& s) { return static_cast<ClStream&>(s); }
ClEvent& E(pdk::Event& e) { return static_cast<ClEvent&>(e); }

// A marker after everything enqueued on `q` so far, flushed.
pdk::StatusOr<cl_event> Marker(cl_command_queue q) {
  cl_event ev = nullptr;
  PDK_CL_RETURN_IF_ERROR(clEnqueueMarkerWithWaitList(q, 0, nullptr, &ev), "marker");
  clFlush(q);
  return ev;
}
}  // namespace

pdk::Status ClDevice::CreateStreamDependency(pdk::Stream& dependent, pdk::Stream& other) {
  PDK_ASSIGN_OR_RETURN(cl_event ev, Marker(S(other).queue()));
  const cl_int err = clEnqueueBarrierWithWaitList(S(dependent).queue(), 1, &ev, nullptr);
  clReleaseEvent(ev);
  PDK_CL_RETURN_IF_ERROR(err, "stream dependency");
  return pdk::Status::OK();
}

pdk::Status ClDevice::StreamStatus(pdk::Stream& s) { return S(s).status(); }

pdk::Status ClDevice::BlockHostUntilDone(pdk::Stream& s) {
  PDK_CL_RETURN_IF_ERROR(clFinish(S(s).queue()), "clFinish");
  return S(s).status();
}

pdk::Status ClDevice::SynchronizeAllActivity() {
  // Every queue TensorFlow created runs on this device's context: a finish
  // of the sync queue does not cover them, so TensorFlow's streams are
  // finished through their own BlockHostUntilDone; this finishes ours.
  PDK_CL_RETURN_IF_ERROR(clFinish(sync_queue_), "clFinish");
  return pdk::Status::OK();
}

pdk::StatusOr<std::unique_ptr<pdk::Event>> ClDevice::CreateEvent() {
  return std::unique_ptr<pdk::Event>(new ClEvent);
}

SE_EventStatus ClDevice::EventStatus(pdk::Event& e) {
  cl_event ev = E(e).get();
  if (ev == nullptr) return SE_EVENT_COMPLETE;  // never recorded
  cl_int st = CL_COMPLETE;
  if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr) !=
      CL_SUCCESS)
    return SE_EVENT_ERROR;
  if (st < 0) return SE_EVENT_ERROR;
  return st == CL_COMPLETE ? SE_EVENT_COMPLETE : SE_EVENT_PENDING;
}

pdk::Status ClDevice::RecordEvent(pdk::Stream& s, pdk::Event& e) {
  PDK_ASSIGN_OR_RETURN(cl_event ev, Marker(S(s).queue()));
  E(e).Reset(ev);
  return pdk::Status::OK();
}

pdk::Status ClDevice::WaitForEvent(pdk::Stream& s, pdk::Event& e) {
  cl_event ev = E(e).get();
  if (ev == nullptr) return pdk::Status::OK();
  PDK_CL_RETURN_IF_ERROR(clEnqueueBarrierWithWaitList(S(s).queue(), 1, &ev, nullptr),
                         "wait for event");
  return pdk::Status::OK();
}

pdk::Status ClDevice::BlockHostForEvent(pdk::Event& e) {
  cl_event ev = E(e).get();
  if (ev == nullptr) return pdk::Status::OK();
  PDK_CL_RETURN_IF_ERROR(clWaitForEvents(1, &ev), "clWaitForEvents");
  return pdk::Status::OK();
}

pdk::StatusOr<std::unique_ptr<pdk::Timer>> ClDevice::CreateTimer() {
  return std::unique_ptr<pdk::Timer>(new ClTimer);
}

pdk::Status ClDevice::StartTimer(pdk::Stream& s, pdk::Timer& t) {
  PDK_ASSIGN_OR_RETURN(cl_event ev, Marker(S(s).queue()));
  auto& timer = static_cast<ClTimer&>(t);
  if (timer.start) clReleaseEvent(timer.start);
  timer.start = ev;
  return pdk::Status::OK();
}

pdk::Status ClDevice::StopTimer(pdk::Stream& s, pdk::Timer& t) {
  PDK_ASSIGN_OR_RETURN(cl_event ev, Marker(S(s).queue()));
  auto& timer = static_cast<ClTimer&>(t);
  if (timer.stop) clReleaseEvent(timer.stop);
  timer.stop = ev;
  return pdk::Status::OK();
}

// ---- copies

namespace {
// Frees a staging copy once the write that reads it completes.
void CL_CALLBACK FreeStaging(cl_event, cl_int, void* p) { std::free(p); }
}  // namespace

pdk::Status ClDevice::Memcpy(pdk::Stream* s, void* dst, const void* src, uint64_t bytes,
                             pdk::CopyKind kind) {
  if (bytes == 0) return pdk::Status::OK();
  const bool sync = s == nullptr;
  cl_command_queue q = sync ? sync_queue_ : S(*s).queue();
  cl_mem dbuf = nullptr, sbuf = nullptr;
  uint64_t doff = 0, soff = 0;
  switch (kind) {
    case pdk::CopyKind::kHostToDevice: {
      PDK_RETURN_IF_ERROR(Resolve(dst, &dbuf, &doff));
      if (sync) {
        PDK_CL_RETURN_IF_ERROR(
            clEnqueueWriteBuffer(q, dbuf, CL_TRUE, doff, bytes, src, 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
        return pdk::Status::OK();
      }
      // Non-blocking: the source may be gone when the write runs, so it
      // writes from a copy freed when the write completes.
      void* staging = std::malloc(bytes);
      if (staging == nullptr) return pdk::ResourceExhausted("host staging buffer of ", bytes);
      std::memcpy(staging, src, bytes);
      cl_event ev = nullptr;
      const cl_int err =
          clEnqueueWriteBuffer(q, dbuf, CL_FALSE, doff, bytes, staging, 0, nullptr, &ev);
      if (err != CL_SUCCESS) {
        std::free(staging);
        return ClStatus(err, "clEnqueueWriteBuffer");
      }
      clSetEventCallback(ev, CL_COMPLETE, &FreeStaging, staging);
      clReleaseEvent(ev);
      clFlush(q);
      return pdk::Status::OK();
    }
    case pdk::CopyKind::kDeviceToHost:
      PDK_RETURN_IF_ERROR(Resolve(src, &sbuf, &soff));
      // TensorFlow reads the destination after an event or a sync it asks
      // for, so the read may complete later.
      PDK_CL_RETURN_IF_ERROR(
          clEnqueueReadBuffer(q, sbuf, sync ? CL_TRUE : CL_FALSE, soff, bytes, dst, 0, nullptr,
                              nullptr),
          "clEnqueueReadBuffer");
      if (!sync) clFlush(q);
      return pdk::Status::OK();
    case pdk::CopyKind::kDeviceToDevice:
      PDK_RETURN_IF_ERROR(Resolve(src, &sbuf, &soff));
      PDK_RETURN_IF_ERROR(Resolve(dst, &dbuf, &doff));
      PDK_CL_RETURN_IF_ERROR(
          clEnqueueCopyBuffer(q, sbuf, dbuf, soff, doff, bytes, 0, nullptr, nullptr),
          "clEnqueueCopyBuffer");
      if (sync) PDK_CL_RETURN_IF_ERROR(clFinish(q), "clFinish");
      else clFlush(q);
      return pdk::Status::OK();
  }
  return pdk::Status::OK();
}

pdk::Status ClDevice::Fill(cl_command_queue q, void* dst, const void* pattern,
                           size_t pattern_size, uint64_t bytes) {
  if (bytes == 0) return pdk::Status::OK();
  cl_mem buf = nullptr;
  uint64_t off = 0;
  PDK_RETURN_IF_ERROR(Resolve(dst, &buf, &off));
  PDK_CL_RETURN_IF_ERROR(
      clEnqueueFillBuffer(q, buf, pattern, pattern_size, off, bytes, 0, nullptr, nullptr),
      "clEnqueueFillBuffer");
  clFlush(q);
  return pdk::Status::OK();
}

pdk::Status ClDevice::Memset(pdk::Stream& s, void* dst, uint8_t pattern, uint64_t bytes) {
  return Fill(S(s).queue(), dst, &pattern, 1, bytes);
}

pdk::Status ClDevice::Memset32(pdk::Stream& s, void* dst, uint32_t pattern, uint64_t bytes) {
  return Fill(S(s).queue(), dst, &pattern, 4, bytes);
}

// ---- host callbacks

namespace {
struct CallbackState {
  ClStream* stream;
  cl_event gate;  // a user event the stream waits on until the callback ran
  std::function<pdk::Status()> fn;
  CallbackThread* thread;
};

void CL_CALLBACK OnMarker(cl_event, cl_int status, void* p) {
  auto* st = static_cast<CallbackState*>(p);
  // OpenCL's callback thread must not block: the device's thread runs it.
  st->thread->Post([st, status] {
    // TensorFlow's callback runs either way (it may release what waits on
    // it); a failed command before it becomes the stream's error.
    if (status < 0)
      st->stream->SetError(
          pdk::Internal("a command before a host callback failed: ", ClErrorName(status)));
    const pdk::Status s = st->fn();
    if (!s.ok()) st->stream->SetError(s);
    clSetUserEventStatus(st->gate, CL_COMPLETE);
    clReleaseEvent(st->gate);
    delete st;
  });
}
}  // namespace

bool ClDevice::HostCallback(pdk::Stream& s, std::function<pdk::Status()> cb) {
  ClStream& stream = S(s);
  cl_int err = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(context_, &err);
  if (err != CL_SUCCESS) return false;
  auto marker = Marker(stream.queue());
  if (!marker.ok()) {
    clReleaseEvent(gate);
    return false;
  }
  // Later work on the stream waits for the callback, as in StreamExecutor.
  clEnqueueBarrierWithWaitList(stream.queue(), 1, &gate, nullptr);
  auto* state = new CallbackState{&stream, gate, std::move(cb), &callbacks_};
  clSetEventCallback(marker.value(), CL_COMPLETE, &OnMarker, state);
  clReleaseEvent(marker.value());
  clFlush(stream.queue());
  return true;
}

}  // namespace pdk_opencl
