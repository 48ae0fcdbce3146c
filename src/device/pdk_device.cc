#include "device/pdk_device.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "compute/thread_pool.h"
#include "pdk/env.h"

namespace pdk_plugin {
namespace {

std::string CpuInfoField(const char* key, const char* fallback) {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  const size_t klen = std::strlen(key);
  while (std::getline(f, line)) {
    if (line.compare(0, klen, key) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string v = line.substr(colon + 1);
        const size_t b = v.find_first_not_of(" \t");
        return b == std::string::npos ? fallback : v.substr(b);
      }
    }
  }
  return fallback;
}

class PdkStream final : public pdk::Stream {
 public:
  std::mutex mu;
  pdk::Status status;  // first error seen on this stream
};

class PdkEvent final : public pdk::Event {
 public:
  // Work is complete when a call returns, so an event is complete once
  // recorded; an event never recorded has nothing pending (CUDA semantics).
  std::atomic<SE_EventStatus> state{SE_EVENT_COMPLETE};
};

class PdkTimer final : public pdk::Timer {
 public:
  uint64_t Nanoseconds() const override {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
  }
  std::chrono::steady_clock::time_point start{}, stop{};
};

std::mutex g_devices_mu;
std::vector<PdkDevice*> g_devices;  // by ordinal; entries cleared on destruction

}  // namespace

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return (pages > 0 && page > 0) ? int64_t(pages) * page : (int64_t(8) << 30);
}

const DeviceConfig& Config() {
  static const DeviceConfig cfg = [] {
    DeviceConfig c;
    c.device_count = static_cast<int>(pdk::env::Int("PDK_DEVICE_COUNT", 1, 0, 64));
    // Default: half of physical memory, shared among the PDK devices; at most
    // all of it per device (a larger limit would leave the kernel's OOM
    // killer as the real one).
    const int64_t physical_mb = std::max<int64_t>(1, PhysicalMemoryBytes() >> 20);
    const int64_t default_mb =
        std::max<int64_t>(1, physical_mb / 2 / std::max(1, c.device_count));
    const int64_t mb = pdk::env::Int("PDK_MEMORY_LIMIT_MB", default_mb, 1, physical_mb,
                                     {" MiB", "the physical memory"});
    c.memory_limit = mb << 20;
    return c;
  }();
  return cfg;
}

PdkDevice::PdkDevice(int ordinal, int64_t memory_limit)
    : ordinal_(ordinal),
      pool_(memory_limit),
      hardware_name_("PDK host-CPU device (" + CpuInfoField("model name", "unknown CPU") + ")"),
      vendor_(CpuInfoField("vendor_id", "unknown")) {}

PdkDevice::~PdkDevice() {
  std::lock_guard<std::mutex> l(g_devices_mu);
  if (static_cast<size_t>(ordinal_) < g_devices.size() && g_devices[ordinal_] == this)
    g_devices[ordinal_] = nullptr;
}

namespace {

std::string MiB(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

// TensorFlow's message for a failed allocation names the op and the shape
// ("OOM when allocating tensor ..."), or, for an eager copy to the device,
// only "Dst tensor is not initialized." (docs/architecture.md, "Memory"): one
// line on stderr says what PDK refused and why, for the first 10 failures.
void* PdkDevice::Allocate(uint64_t bytes, int64_t /*memory_space*/) {
  void* p = pool_.Allocate(bytes);
  if (p == nullptr) {
    static std::atomic<int> logged{0};
    const int n = logged.fetch_add(1);
    if (n < 10) {
      const PoolStats s = pool_.Stats();
      const int64_t block = static_cast<int64_t>(MemoryPool::ClassSize(bytes));
      const bool over = block > s.bytes_limit - s.bytes_in_use;
      std::fprintf(stderr, "PDK: /PDK:%d out of memory: %s asked, %s in use, %s%s\n",
                   ordinal_, MiB(static_cast<int64_t>(bytes)).c_str(),
                   MiB(s.bytes_in_use).c_str(),
                   over ? ("limit " + MiB(s.bytes_limit) + " (PDK_MEMORY_LIMIT_MB)").c_str()
                        : "the host has no memory left",
                   n == 9 ? "; further failures are not logged" : "");
    }
  }
  return p;
}

// `bytes` is 0 from TensorFlow's simple allocator: the pool knows the size.
void PdkDevice::Deallocate(void* ptr, uint64_t /*bytes*/) { pool_.Deallocate(ptr); }

void* PdkDevice::HostAllocate(uint64_t bytes) {
  constexpr size_t kAlign = MemoryPool::kAlignment;
  const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  return std::aligned_alloc(kAlign, rounded ? rounded : kAlign);
}

void PdkDevice::HostDeallocate(void* ptr) { std::free(ptr); }

pdk::AllocatorStats PdkDevice::Stats() const {
  const PoolStats p = pool_.Stats();
  pdk::AllocatorStats s;
  s.num_allocs = p.num_allocs;
  s.bytes_in_use = p.bytes_in_use;
  s.peak_bytes_in_use = p.peak_bytes_in_use;
  s.largest_alloc_size = p.largest_alloc_size;
  s.bytes_limit = p.bytes_limit;
  return s;
}

// TensorFlow reads this once per device, for the BFC allocator PDK declines
// (its simple allocator takes no size): the limit and what is left of it.
bool PdkDevice::MemoryUsage(int64_t* free, int64_t* total) const {
  const PoolStats p = pool_.Stats();
  *total = p.bytes_limit;
  *free = p.bytes_limit - p.bytes_in_use;
  return true;
}

pdk::StatusOr<std::unique_ptr<pdk::Stream>> PdkDevice::CreateStream() {
  return std::unique_ptr<pdk::Stream>(new PdkStream);
}

pdk::Status PdkDevice::CreateStreamDependency(pdk::Stream&, pdk::Stream& other) {
  // Work on `other` is already complete (synchronous streams); propagate its error.
  return StreamStatus(other);
}

pdk::Status PdkDevice::StreamStatus(pdk::Stream& s) {
  auto& ps = static_cast<PdkStream&>(s);
  std::lock_guard<std::mutex> l(ps.mu);
  return ps.status;
}

pdk::Status PdkDevice::BlockHostUntilDone(pdk::Stream& s) { return StreamStatus(s); }

pdk::Status PdkDevice::SynchronizeAllActivity() { return pdk::Status::OK(); }

pdk::StatusOr<std::unique_ptr<pdk::Event>> PdkDevice::CreateEvent() {
  return std::unique_ptr<pdk::Event>(new PdkEvent);
}

SE_EventStatus PdkDevice::EventStatus(pdk::Event& e) {
  return static_cast<PdkEvent&>(e).state.load();
}

pdk::Status PdkDevice::RecordEvent(pdk::Stream& s, pdk::Event& e) {
  pdk::Status st = StreamStatus(s);
  static_cast<PdkEvent&>(e).state.store(st.ok() ? SE_EVENT_COMPLETE : SE_EVENT_ERROR);
  return st;
}

pdk::Status PdkDevice::WaitForEvent(pdk::Stream&, pdk::Event& e) { return BlockHostForEvent(e); }

pdk::Status PdkDevice::BlockHostForEvent(pdk::Event& e) {
  if (static_cast<PdkEvent&>(e).state.load() == SE_EVENT_ERROR)
    return pdk::Internal("PDK: waited for an event whose stream failed");
  return pdk::Status::OK();
}

pdk::StatusOr<std::unique_ptr<pdk::Timer>> PdkDevice::CreateTimer() {
  return std::unique_ptr<pdk::Timer>(new PdkTimer);
}

pdk::Status PdkDevice::StartTimer(pdk::Stream& s, pdk::Timer& t) {
  static_cast<PdkTimer&>(t).start = std::chrono::steady_clock::now();
  return StreamStatus(s);
}

pdk::Status PdkDevice::StopTimer(pdk::Stream& s, pdk::Timer& t) {
  static_cast<PdkTimer&>(t).stop = std::chrono::steady_clock::now();
  return StreamStatus(s);
}

pdk::Status PdkDevice::Memcpy(pdk::Stream* s, void* dst, const void* src, uint64_t bytes,
                              pdk::CopyKind) {
  if (bytes == 0) return pdk::Status::OK();
  if (dst == nullptr || src == nullptr)
    return pdk::InvalidArgument("PDK memcpy of ", bytes, " bytes with a null pointer");
  if (s != nullptr) PDK_RETURN_IF_ERROR(StreamStatus(*s));
  std::memcpy(dst, src, bytes);
  return pdk::Status::OK();
}

pdk::Status PdkDevice::Memset(pdk::Stream& s, void* dst, uint8_t pattern, uint64_t bytes) {
  if (bytes == 0) return pdk::Status::OK();
  if (dst == nullptr) return pdk::InvalidArgument("PDK memset of ", bytes, " bytes at null");
  PDK_RETURN_IF_ERROR(StreamStatus(s));
  std::memset(dst, pattern, bytes);
  return pdk::Status::OK();
}

pdk::Status PdkDevice::Memset32(pdk::Stream& s, void* dst, uint32_t pattern, uint64_t bytes) {
  if (bytes % 4 != 0)
    return pdk::InvalidArgument("PDK memset32: size ", bytes, " is not a multiple of 4");
  if (bytes == 0) return pdk::Status::OK();
  if (dst == nullptr) return pdk::InvalidArgument("PDK memset32 of ", bytes, " bytes at null");
  PDK_RETURN_IF_ERROR(StreamStatus(s));
  auto* p = static_cast<uint32_t*>(dst);
  for (uint64_t i = 0; i < bytes / 4; ++i) p[i] = pattern;
  return pdk::Status::OK();
}

bool PdkDevice::HostCallback(pdk::Stream& s, std::function<pdk::Status()> cb) {
  // All earlier work on `s` is complete: run the callback now. Its error
  // becomes the stream's status, as a failed device operation would.
  pdk::Status st = cb();
  if (!st.ok()) {
    auto& ps = static_cast<PdkStream&>(s);
    std::lock_guard<std::mutex> l(ps.mu);
    if (ps.status.ok()) ps.status = st;
  }
  return true;
}

int64_t PdkDevice::memory_bandwidth() const {
  // Documented estimate, not a measurement: ~10 GB/s of DRAM bandwidth per
  // core used by the device's thread pool (typical of one DDR4 channel share).
  return int64_t(10'000'000'000) * pdk_compute::NumThreads();
}

double PdkDevice::gflops() const {
  // Peak float32 estimate: cores x clock (GHz) x 32 flop/cycle (two 8-lane
  // FMA units on AVX2; Intel/AMD optimization manuals).
  const double mhz = std::atof(CpuInfoField("cpu MHz", "2000").c_str());
  return pdk_compute::NumThreads() * (mhz > 0 ? mhz : 2000) / 1000.0 * 32.0;
}

pdk::StatusOr<int> PdkPlatform::DeviceCount() const {
  return enabled_ ? Config().device_count : 0;
}

pdk::StatusOr<std::unique_ptr<pdk::Device>> PdkPlatform::CreateDevice(int ordinal) {
  if (ordinal < 0 || ordinal >= Config().device_count)
    return pdk::InvalidArgument("PDK: no device with ordinal ", ordinal, " (PDK_DEVICE_COUNT=",
                                Config().device_count, ")");
  auto dev = std::make_unique<PdkDevice>(ordinal, Config().memory_limit);
  std::lock_guard<std::mutex> l(g_devices_mu);
  if (g_devices.size() <= static_cast<size_t>(ordinal)) g_devices.resize(ordinal + 1, nullptr);
  g_devices[ordinal] = dev.get();
  return std::unique_ptr<pdk::Device>(std::move(dev));
}

bool DeviceStatsFor(int ordinal, PoolStats* out) {
  std::lock_guard<std::mutex> l(g_devices_mu);
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= g_devices.size() || !g_devices[ordinal])
    return false;
  *out = g_devices[ordinal]->PoolStatsNow();
  return true;
}

bool ClearDeviceStats(int ordinal) {
  std::lock_guard<std::mutex> l(g_devices_mu);
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= g_devices.size() || !g_devices[ordinal])
    return false;
  g_devices[ordinal]->ClearStats();
  return true;
}

}  // namespace pdk_plugin
