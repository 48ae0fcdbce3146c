// The PDK device runtime: a host-memory device with its own accounting.
//
// Execution model (docs/architecture.md): every operation handed to a stream
// completes before the call returns, on the calling thread; kernels parallelize
// over the device's thread pool (src/compute/thread_pool.h). Events are
// therefore complete once recorded, and stream dependencies hold trivially.
// This matters because TensorFlow's DEVICE_DEFAULT variable kernels
// (AssignVariableOp, ReadVariableOp, ...) touch device memory from the host.
#ifndef PDK_SRC_DEVICE_PDK_DEVICE_H_
#define PDK_SRC_DEVICE_PDK_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "device/memory_pool.h"
#include "pdk/device.h"

namespace pdk_plugin {

inline constexpr char kDeviceType[] = "PDK";

// Settings read from the environment once per process.
struct DeviceConfig {
  int device_count = 1;          // PDK_DEVICE_COUNT
  int64_t memory_limit = 0;      // bytes per device; PDK_MEMORY_LIMIT_MB
};
const DeviceConfig& Config();

// Physical memory of the host, in bytes.
int64_t PhysicalMemoryBytes();

class PdkDevice final : public pdk::Device {
 public:
  PdkDevice(int ordinal, int64_t memory_limit);
  ~PdkDevice() override;

  void* Allocate(uint64_t bytes, int64_t memory_space) override;
  void Deallocate(void* ptr, uint64_t bytes) override;
  uint64_t AllocatedSize(const void* ptr) const override { return pool_.BlockSize(ptr); }
  void* HostAllocate(uint64_t bytes) override;
  void HostDeallocate(void* ptr) override;
  pdk::AllocatorStats Stats() const override;
  bool MemoryUsage(int64_t* free, int64_t* total) const override;

  pdk::StatusOr<std::unique_ptr<pdk::Stream>> CreateStream() override;
  pdk::Status CreateStreamDependency(pdk::Stream& dependent, pdk::Stream& other) override;
  pdk::Status StreamStatus(pdk::Stream& s) override;
  pdk::Status BlockHostUntilDone(pdk::Stream& s) override;
  pdk::Status SynchronizeAllActivity() override;

  pdk::StatusOr<std::unique_ptr<pdk::Event>> CreateEvent() override;
  SE_EventStatus EventStatus(pdk::Event& e) override;
  pdk::Status RecordEvent(pdk::Stream& s, pdk::Event& e) override;
  pdk::Status WaitForEvent(pdk::Stream& s, pdk::Event& e) override;
  pdk::Status BlockHostForEvent(pdk::Event& e) override;

  pdk::StatusOr<std::unique_ptr<pdk::Timer>> CreateTimer() override;
  pdk::Status StartTimer(pdk::Stream& s, pdk::Timer& t) override;
  pdk::Status StopTimer(pdk::Stream& s, pdk::Timer& t) override;

  pdk::Status Memcpy(pdk::Stream* s, void* dst, const void* src, uint64_t bytes,
                     pdk::CopyKind kind) override;
  pdk::Status Memset(pdk::Stream& s, void* dst, uint8_t pattern, uint64_t bytes) override;
  pdk::Status Memset32(pdk::Stream& s, void* dst, uint32_t pattern, uint64_t bytes) override;
  bool HostCallback(pdk::Stream& s, std::function<pdk::Status()> cb) override;

  const char* hardware_name() const override { return hardware_name_.c_str(); }
  const char* vendor() const override { return vendor_.c_str(); }
  int32_t numa_node() const override { return 0; }
  int64_t memory_bandwidth() const override;
  double gflops() const override;

  int ordinal() const { return ordinal_; }
  PoolStats PoolStatsNow() const { return pool_.Stats(); }
  void ClearStats() { pool_.ClearStats(); }

 private:
  int ordinal_;
  MemoryPool pool_;
  std::string hardware_name_, vendor_;
};

class PdkPlatform final : public pdk::Platform {
 public:
  // A disabled platform (wrong TensorFlow version) reports zero devices.
  explicit PdkPlatform(bool enabled) : enabled_(enabled) {}
  const char* name() const override { return kDeviceType; }
  const char* type() const override { return kDeviceType; }
  // TensorFlow's simple pluggable allocator on top of PDK's pool: an
  // allocation past the limit fails at once, where BFC waits 10 s
  // (docs/architecture.md, "Memory").
  bool use_bfc_allocator() const override { return false; }
  bool force_memory_growth() const override { return false; }
  pdk::StatusOr<int> DeviceCount() const override;
  pdk::StatusOr<std::unique_ptr<pdk::Device>> CreateDevice(int ordinal) override;

 private:
  bool enabled_;
};

// Statistics of device `ordinal`'s memory for tensorflow_pdk.device_allocator_stats()
// and tf.config.experimental.get_memory_info; false if the device has not
// been created.
bool DeviceStatsFor(int ordinal, PoolStats* out);
// reset_memory_stats for device `ordinal` (MemoryPool::ClearStats); false if
// the device has not been created.
bool ClearDeviceStats(int ordinal);

}  // namespace pdk_plugin

#endif  // PDK_SRC_DEVICE_PDK_DEVICE_H_
