// The HELLO device: host memory, synchronous streams, through the kit's
// device runtime adapter (pdk/device.h), and the plugin's entry points.
//
// Every operation handed to a stream is done when the call returns, so an
// event is complete once recorded and a stream never has work in flight.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>

#include "hello.h"
#include "pdk/device.h"
#include "pdk/kernel.h"

namespace hello {

constexpr int64_t kMemory = int64_t(1) << 30;  // 1 GiB per device

struct HelloTimer : pdk::Timer {
  std::chrono::steady_clock::time_point start, stop;
  uint64_t Nanoseconds() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
  }
};

class HelloDevice final : public pdk::Device {
 public:
  void* Allocate(uint64_t bytes, int64_t) override {
    std::lock_guard<std::mutex> l(mu_);
    if (stats_.bytes_in_use + int64_t(bytes) > kMemory) return nullptr;
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr) return nullptr;
    stats_.num_allocs++;
    stats_.bytes_in_use += bytes;
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use)
      stats_.peak_bytes_in_use = stats_.bytes_in_use;
    if (int64_t(bytes) > stats_.largest_alloc_size) stats_.largest_alloc_size = bytes;
    return p;
  }
  void Deallocate(void* p, uint64_t bytes) override {
    if (p == nullptr) return;
    std::free(p);
    std::lock_guard<std::mutex> l(mu_);
    stats_.bytes_in_use -= bytes;
  }
  void* HostAllocate(uint64_t bytes) override { return std::aligned_alloc(64, (bytes + 63) / 64 * 64); }
  void HostDeallocate(void* p) override { std::free(p); }
  pdk::AllocatorStats Stats() const override {
    std::lock_guard<std::mutex> l(mu_);
    pdk::AllocatorStats s = stats_;
    s.bytes_limit = kMemory;
    return s;
  }
  bool MemoryUsage(int64_t* free, int64_t* total) const override {
    std::lock_guard<std::mutex> l(mu_);
    *total = kMemory;
    *free = kMemory - stats_.bytes_in_use;
    return true;
  }

  pdk::StatusOr<std::unique_ptr<pdk::Stream>> CreateStream() override {
    return std::unique_ptr<pdk::Stream>(new pdk::Stream);
  }
  pdk::Status CreateStreamDependency(pdk::Stream&, pdk::Stream&) override { return {}; }
  pdk::Status StreamStatus(pdk::Stream&) override { return {}; }
  pdk::Status BlockHostUntilDone(pdk::Stream&) override { return {}; }
  pdk::Status SynchronizeAllActivity() override { return {}; }

  pdk::StatusOr<std::unique_ptr<pdk::Event>> CreateEvent() override {
    return std::unique_ptr<pdk::Event>(new pdk::Event);
  }
  SE_EventStatus EventStatus(pdk::Event&) override { return SE_EVENT_COMPLETE; }
  pdk::Status RecordEvent(pdk::Stream&, pdk::Event&) override { return {}; }
  pdk::Status WaitForEvent(pdk::Stream&, pdk::Event&) override { return {}; }
  pdk::Status BlockHostForEvent(pdk::Event&) override { return {}; }

  pdk::StatusOr<std::unique_ptr<pdk::Timer>> CreateTimer() override {
    return std::unique_ptr<pdk::Timer>(new HelloTimer);
  }
  pdk::Status StartTimer(pdk::Stream&, pdk::Timer& t) override {
    static_cast<HelloTimer&>(t).start = std::chrono::steady_clock::now();
    return {};
  }
  pdk::Status StopTimer(pdk::Stream&, pdk::Timer& t) override {
    static_cast<HelloTimer&>(t).stop = std::chrono::steady_clock::now();
    return {};
  }

  pdk::Status Memcpy(pdk::Stream*, void* dst, const void* src, uint64_t bytes,
                     pdk::CopyKind) override {
    if (bytes) std::memcpy(dst, src, bytes);
    return {};
  }
  pdk::Status Memset(pdk::Stream&, void* dst, uint8_t pattern, uint64_t bytes) override {
    std::memset(dst, pattern, bytes);
    return {};
  }
  pdk::Status Memset32(pdk::Stream&, void* dst, uint32_t pattern, uint64_t bytes) override {
    auto* p = static_cast<uint32_t*>(dst);
    for (uint64_t i = 0; i < bytes / 4; ++i) p[i] = pattern;
    return {};
  }
  bool HostCallback(pdk::Stream&, std::function<pdk::Status()> cb) override { return cb().ok(); }

  const char* hardware_name() const override { return "hello host memory"; }
  const char* vendor() const override { return "examples/hello_device"; }

 private:
  mutable std::mutex mu_;
  pdk::AllocatorStats stats_;
};

class HelloPlatform final : public pdk::Platform {
 public:
  const char* name() const override { return kDeviceType; }
  const char* type() const override { return kDeviceType; }
  pdk::StatusOr<int> DeviceCount() const override { return 1; }
  pdk::StatusOr<std::unique_ptr<pdk::Device>> CreateDevice(int) override {
    return std::unique_ptr<pdk::Device>(new HelloDevice);
  }
};

}  // namespace hello

HELLO_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams* params, TF_Status* status) {
  static hello::HelloPlatform platform;
  pdk::InitPlatform(&platform, params, status);
}

// Replays every REGISTER_OP / REGISTER_KERNEL_BUILDER of kernels.cc for HELLO.
HELLO_EXPORT void TF_InitKernel() {
  const pdk::Status st = pdk::KernelRegistry::Global().RegisterAll(hello::kDeviceType);
  if (!st.ok()) std::fprintf(stderr, "hello_device: %s\n", st.message().c_str());
}
