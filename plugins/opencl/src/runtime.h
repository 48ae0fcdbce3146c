// The OPENCL device runtime: OpenCL platforms and devices behind the kit's
// device adapter (pdk/device.h), and what kernels need to enqueue work.
//
// Memory: every allocation is a cl_mem buffer; TensorFlow sees an address from
// a pdk::DeviceAddressMap (pdk/device_address_map.h), never a host pointer,
// and kernels resolve each tensor's address to (buffer, byte offset).
// Streams are in-order command queues (profiling on: device timestamps for
// timers and traces); events are cl_events of markers; copies are
// clEnqueueRead/Write/CopyBuffer on the stream's queue, non-blocking; host
// callbacks run on the device's callback thread once a marker completes, and
// the stream waits for them (a user event), as a StreamExecutor host callback
// does.
#ifndef PDK_OPENCL_RUNTIME_H_
#define PDK_OPENCL_RUNTIME_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pdk/device.h"
#include "pdk/device_address_map.h"
#include "pdk/status.h"

namespace pdk_opencl {

constexpr char kDeviceType[] = "OPENCL";

// "CL_OUT_OF_RESOURCES (-5)".
std::string ClErrorName(cl_int err);
// OK for CL_SUCCESS; else Internal (ResourceExhausted for the out-of-memory
// codes) "<what>: <name>".
pdk::Status ClStatus(cl_int err, const std::string& what);

#define PDK_CL_RETURN_IF_ERROR(expr, what)                   \
  do {                                                       \
    const cl_int pdk_cl_err_ = (expr);                       \
    if (pdk_cl_err_ != CL_SUCCESS) return ClStatus(pdk_cl_err_, what); \
  } while (0)

class ClDevice;

class ClStream final : public pdk::Stream {
 public:
  ClStream(ClDevice* device, cl_command_queue queue);
  ~ClStream() override;
  cl_command_queue queue() const { return queue_; }
  ClDevice& device() const { return *device_; }
  // This stream's number in the process (1, 2, ...): its line in a profile.
  int64_t id() const { return id_; }
  // The first error a host callback or an enqueue on this stream reported.
  pdk::Status status() const;
  void SetError(const pdk::Status& s);

 private:
  ClDevice* device_;
  cl_command_queue queue_;
  int64_t id_;
  mutable std::mutex mu_;
  pdk::Status status_;
};

// Profiling (the kit's trace profiler, pdk/profiler.h): while a session is
// open, each kernel launch keeps its cl_event; when the session stops the
// events' device times become spans on the stream's line of the device's
// plane, converted to wall-clock time through the host time of the enqueue.
void TrackForProfile(cl_event ev, const ClStream& stream, std::string node, std::string op);
void FlushProfile();

class ClEvent final : public pdk::Event {
 public:
  ~ClEvent() override { Reset(nullptr); }
  cl_event get() const { return ev_; }
  void Reset(cl_event e) {
    if (ev_) clReleaseEvent(ev_);
    ev_ = e;
  }

 private:
  cl_event ev_ = nullptr;
};

class ClTimer final : public pdk::Timer {
 public:
  ~ClTimer() override;
  cl_event start = nullptr, stop = nullptr;
  uint64_t Nanoseconds() const override;
};

// The work each host callback of a device is run by: one thread per device,
// in submission order.
class CallbackThread {
 public:
  CallbackThread();
  ~CallbackThread();
  void Post(std::function<void()> fn);

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool stop_ = false;
  std::thread thread_;
};

// What ClDevice knows of one OpenCL device before it is opened.
struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name, vendor, version, driver, platform_name;
  cl_device_type type = 0;
  uint64_t global_mem = 0, max_alloc = 0;
  uint32_t compute_units = 0, clock_mhz = 0;
  bool fp16 = false, fp64 = false;
};

// The OpenCL devices this process uses, in ordinal order, chosen by
// PDK_OPENCL_DEVICES (docs/opencl.md): unset or "auto" = the GPUs and
// accelerators, or every device when there are none; "all"; "gpu"; "cpu";
// "none"; or a comma list of indices into `clinfo -l`'s order
// (platform-major). `why_none` says why the list is empty.
std::vector<DeviceInfo> SelectDevices(std::string* why_none);

class ClDevice final : public pdk::Device {
 public:
  static pdk::StatusOr<std::unique_ptr<ClDevice>> Open(const DeviceInfo& info, int ordinal);
  ~ClDevice() override;

  // ---- pdk::Device
  void* Allocate(uint64_t bytes, int64_t memory_space) override;
  void Deallocate(void* ptr, uint64_t bytes) override;
  uint64_t AllocatedSize(const void* ptr) const override { return addresses_.SizeOf(ptr); }
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

  const char* hardware_name() const override { return info_.name.c_str(); }
  const char* vendor() const override { return info_.vendor.c_str(); }
  double gflops() const override;

  // ---- for kernels
  const DeviceInfo& info() const { return info_; }
  int ordinal() const { return ordinal_; }
  cl_context context() const { return context_; }
  // The buffer and byte offset of a device address TensorFlow gave a kernel;
  // InvalidArgument if it is no address of this device.
  pdk::Status Resolve(const void* address, cl_mem* buffer, uint64_t* offset) const;
  // A kernel of the device's program, cached per thread (cl_kernel argument
  // state is not thread-safe); NotFound for an unknown name.
  pdk::StatusOr<cl_kernel> Kernel(const char* name);
  // The queue for work a kernel enqueues outside any TensorFlow stream (the
  // synchronous copies).
  cl_command_queue sync_queue() const { return sync_queue_; }

 private:
  ClDevice(const DeviceInfo& info, int ordinal) : info_(info), ordinal_(ordinal) {}
  pdk::Status Init();
  pdk::Status BuildProgram();
  pdk::StatusOr<cl_command_queue> NewQueue() const;
  pdk::Status Fill(cl_command_queue q, void* dst, const void* pattern, size_t pattern_size,
                   uint64_t bytes);

  DeviceInfo info_;
  int ordinal_;
  cl_context context_ = nullptr;
  cl_program program_ = nullptr;
  cl_command_queue sync_queue_ = nullptr;
  pdk::DeviceAddressMap<cl_mem> addresses_;
  uint64_t limit_ = 0;  // bytes this process may allocate on the device
  mutable std::mutex mu_;
  pdk::AllocatorStats stats_;
  std::vector<ClStream*> streams_;  // live streams, for SynchronizeAllActivity
  CallbackThread callbacks_;
};

// Whether any OpenCL device was selected, and the reason when none was.
struct PlatformState {
  std::vector<DeviceInfo> devices;
  std::string why_none;
};
const PlatformState& Selected();

}  // namespace pdk_opencl

#endif  // PDK_OPENCL_RUNTIME_H_
