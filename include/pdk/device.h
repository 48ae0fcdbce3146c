// pdk/device.h — a C++ device runtime behind the StreamExecutor C API
// (tensorflow/c/experimental/stream_executor/stream_executor.h).
//
// A plugin implements `pdk::Platform` and `pdk::Device` (and its Stream, Event
// and Timer classes); `pdk::InitPlatform` fills every SP_* table TensorFlow asks
// for with trampolines that start from zero-initialized structs carrying their
// `struct_size`, convert Status into TF_Status and catch exceptions.
//
// Units: sizes are bytes, times nanoseconds, bandwidth bytes/s... as named.
#ifndef PDK_DEVICE_H_
#define PDK_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "pdk/kernel.h"  // TraceClockNs
#include "pdk/status.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"

namespace pdk {

class Stream {
 public:
  virtual ~Stream() = default;
};
class Event {
 public:
  virtual ~Event() = default;
};
class Timer {
 public:
  virtual ~Timer() = default;
  // Elapsed time between StartTimer and StopTimer, in nanoseconds.
  virtual uint64_t Nanoseconds() const = 0;
};

// Allocator statistics, as SP_AllocatorStats (bytes, counts).
struct AllocatorStats {
  int64_t num_allocs = 0;
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;
  int64_t bytes_limit = -1;  // < 0: no limit
};

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

// One device. Memory pointers are device addresses; `stream` may be null for
// the synchronous copy variants.
class Device {
 public:
  virtual ~Device() = default;

  // Returns nullptr when the request cannot be met (TensorFlow then reports
  // ResourceExhaustedError for the tensor).
  virtual void* Allocate(uint64_t bytes, int64_t memory_space) = 0;
  // `bytes` is what Allocate was asked for under TensorFlow's BFC allocator,
  // and 0 under its simple allocator (Platform::use_bfc_allocator() false),
  // which does not keep sizes: such a device tracks them itself.
  virtual void Deallocate(void* ptr, uint64_t bytes) = 0;
  // The size of the allocation at `ptr`, for the activity sink's Deallocate
  // events when TensorFlow passes 0; 0 if the device does not know.
  virtual uint64_t AllocatedSize(const void* ptr) const { return 0; }
  virtual void* HostAllocate(uint64_t bytes) = 0;
  virtual void HostDeallocate(void* ptr) = 0;
  virtual AllocatorStats Stats() const = 0;
  // Free and total device memory in bytes.
  virtual bool MemoryUsage(int64_t* free, int64_t* total) const = 0;

  virtual StatusOr<std::unique_ptr<Stream>> CreateStream() = 0;
  virtual Status CreateStreamDependency(Stream& dependent, Stream& other) = 0;
  virtual Status StreamStatus(Stream& s) = 0;
  virtual Status BlockHostUntilDone(Stream& s) = 0;
  virtual Status SynchronizeAllActivity() = 0;

  virtual StatusOr<std::unique_ptr<Event>> CreateEvent() = 0;
  virtual SE_EventStatus EventStatus(Event& e) = 0;
  virtual Status RecordEvent(Stream& s, Event& e) = 0;
  virtual Status WaitForEvent(Stream& s, Event& e) = 0;
  virtual Status BlockHostForEvent(Event& e) = 0;

  virtual StatusOr<std::unique_ptr<Timer>> CreateTimer() = 0;
  virtual Status StartTimer(Stream& s, Timer& t) = 0;
  virtual Status StopTimer(Stream& s, Timer& t) = 0;

  virtual Status Memcpy(Stream* s, void* dst, const void* src, uint64_t bytes, CopyKind kind) = 0;
  virtual Status Memset(Stream& s, void* dst, uint8_t pattern, uint64_t bytes) = 0;
  // `bytes` must be a multiple of 4.
  virtual Status Memset32(Stream& s, void* dst, uint32_t pattern, uint64_t bytes) = 0;
  // Runs `cb` after all work enqueued on `s` so far; returns false if it cannot.
  virtual bool HostCallback(Stream& s, std::function<Status()> cb) = 0;

  // SP_Device strings; must outlive the device.
  virtual const char* hardware_name() const = 0;
  virtual const char* vendor() const = 0;
  virtual const char* pci_bus_id() const { return nullptr; }
  virtual int32_t numa_node() const { return -1; }
  virtual int64_t memory_bandwidth() const { return 0; }  // bytes/s
  virtual double gflops() const { return 0; }             // GFLOP/s
};

// The platform: a name/type matching [A-Z][A-Z_]*, the device count, devices.
class Platform {
 public:
  virtual ~Platform() = default;
  virtual const char* name() const = 0;
  virtual const char* type() const = 0;
  virtual StatusOr<int> DeviceCount() const = 0;
  virtual StatusOr<std::unique_ptr<Device>> CreateDevice(int ordinal) = 0;
  // TensorFlow's allocator on top of the device (SP_Platform fields).
  // BFC (true): TensorFlow pools the device's memory in regions and keeps
  // tensor statistics (tf.config.experimental.get_memory_info), but retries
  // an allocation that does not fit for 10 s before it reports OOM
  // (BFCAllocator::AllocateRawInternalWithRetry, kMaxMillisToWait). Simple
  // (false): every tensor allocation and free reaches the device, sizes and
  // statistics are the device's to keep (TensorFlow reports zero), an OOM is
  // reported at once. force_memory_growth (BFC only): grow the pool as needed
  // instead of reserving the whole limit at start; TensorFlow then prints
  // "Overriding allow_growth setting ..." unless the program asked for growth.
  virtual bool use_bfc_allocator() const { return true; }
  virtual bool force_memory_growth() const { return true; }
};

// TensorFlow allocates the SP_* / TP_* structs it hands to the plugin and sets
// their `struct_size` to the size its release knows before the call (0 is
// read as PDK's). PDK writes the fields up to `ours`, the *_STRUCT_SIZE of the
// headers it was built with. A TensorFlow whose struct is shorter is older than
// PDK's headers: FailedPrecondition (TensorFlow reports it and goes on without
// the device) instead of a write past its end. Fields a newer TensorFlow
// appended stay as TensorFlow initialised them (zero: absent). All struct
// writes of the kit and PDK's optimizer registration go through these two.
template <class S>
Status CheckStructSize(const S* s, size_t ours, const char* name) {
  const size_t theirs = s->struct_size;
  if (theirs != 0 && theirs < ours)
    return FailedPrecondition("this TensorFlow's ", name, " has ", theirs,
                              " bytes, the plugin's C API headers ", ours,
                              ": the plugin was built against a newer TensorFlow than the one "
                              "running");
  return Status::OK();
}

// CheckStructSize, then clears the struct up to `ours` and claims that size.
template <class S>
Status PrepareStruct(S* s, size_t ours, const char* name) {
  PDK_RETURN_IF_ERROR(CheckStructSize(s, ours, name));
  std::memset(static_cast<void*>(s), 0, ours);
  s->struct_size = ours;
  return Status::OK();
}

// One memory operation, host callback or (de)allocation TensorFlow handed a
// device, as reported to the device activity sink (a profiler session).
struct DeviceActivity {
  const char* kind;  // "MemcpyH2D", "MemcpyD2H", "MemcpyD2D", "Memset", "HostCallback",
                     // "Allocate", "Deallocate"
  int device;                // the device's ordinal
  uint64_t bytes;            // bytes copied, set, allocated or freed; 0 for a host callback
  int64_t begin_ns, end_ns;  // TraceClockNs (kernel.h)
  bool ok;
};
using DeviceActivitySink = void (*)(const DeviceActivity&);

// The sink every memcpy, memset, host callback, allocation and deallocation of
// the adapter reports to (PDK's pluggable profiler, src/profiler/) while set;
// null, the default, costs one atomic load per call. Called on the thread that
// made the call.
inline std::atomic<DeviceActivitySink>& DeviceActivitySinkSlot() {
  static std::atomic<DeviceActivitySink> sink{nullptr};
  return sink;
}

namespace se_internal {

inline Device* Dev(const SP_Device* d) { return static_cast<Device*>(d->device_handle); }
inline Platform* Plat(const SP_Platform* p) { return static_cast<Platform*>(p->ext); }
inline Stream* Str(SP_Stream s) { return reinterpret_cast<Stream*>(s); }
inline Event* Evt(SP_Event e) { return reinterpret_cast<Event*>(e); }
inline Timer* Tmr(SP_Timer t) { return reinterpret_cast<Timer*>(t); }

template <class Fn>
void Run(TF_Status* out, const char* where, Fn&& fn) {
  Status s = GuardedCall(where, std::forward<Fn>(fn));
  s.ToTF(out);
}

// Runs fn (returning Status) as Run does, reporting it to the activity sink.
template <class Fn>
void RunTraced(TF_Status* out, const char* where, const SP_Device* d, const char* kind,
               uint64_t bytes, Fn&& fn) {
  const DeviceActivitySink sink = DeviceActivitySinkSlot().load(std::memory_order_acquire);
  const int64_t begin_ns = sink ? TraceClockNs() : 0;
  Status s = GuardedCall(where, std::forward<Fn>(fn));
  if (sink) sink(DeviceActivity{kind, d->ordinal, bytes, begin_ns, TraceClockNs(), s.ok()});
  s.ToTF(out);
}

inline void FillStreamExecutor(SP_StreamExecutor* se) {
  // (De)allocations run once per tensor under TensorFlow's simple allocator:
  // no TF_Status is made for them (a null pointer is the failure).
  se->allocate = [](const SP_Device* d, uint64_t size, int64_t space, SP_DeviceMemoryBase* mem) {
    mem->struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
    void* p = nullptr;
    const DeviceActivitySink sink = DeviceActivitySinkSlot().load(std::memory_order_acquire);
    const int64_t begin_ns = sink ? TraceClockNs() : 0;
    GuardedCall("allocate", [&] {
      p = Dev(d)->Allocate(size, space);
      return Status::OK();
    });
    if (sink)
      sink(DeviceActivity{"Allocate", d->ordinal, size, begin_ns, TraceClockNs(),
                          p != nullptr || size == 0});
    mem->opaque = p;
    mem->size = p ? size : 0;
  };
  se->deallocate = [](const SP_Device* d, SP_DeviceMemoryBase* mem) {
    if (mem && mem->opaque) {
      const DeviceActivitySink sink = DeviceActivitySinkSlot().load(std::memory_order_acquire);
      const int64_t begin_ns = sink ? TraceClockNs() : 0;
      const uint64_t bytes =
          mem->size != 0 || !sink ? mem->size : Dev(d)->AllocatedSize(mem->opaque);
      GuardedCall("deallocate", [&] {
        Dev(d)->Deallocate(mem->opaque, mem->size);
        return Status::OK();
      });
      if (sink) sink(DeviceActivity{"Deallocate", d->ordinal, bytes, begin_ns, TraceClockNs(), true});
    }
    if (mem) {
      mem->opaque = nullptr;
      mem->size = 0;
    }
  };
  se->host_memory_allocate = [](const SP_Device* d, uint64_t size) -> void* {
    void* p = nullptr;
    GuardedCall("host_memory_allocate", [&] {
      p = Dev(d)->HostAllocate(size);
      return Status::OK();
    });
    return p;
  };
  se->host_memory_deallocate = [](const SP_Device* d, void* mem) { Dev(d)->HostDeallocate(mem); };
  se->get_allocator_stats = [](const SP_Device* d, SP_AllocatorStats* out) -> TF_Bool {
    const AllocatorStats s = Dev(d)->Stats();
    out->struct_size = SP_ALLOCATORSTATS_STRUCT_SIZE;
    out->num_allocs = s.num_allocs;
    out->bytes_in_use = s.bytes_in_use;
    out->peak_bytes_in_use = s.peak_bytes_in_use;
    out->largest_alloc_size = s.largest_alloc_size;
    out->has_bytes_limit = s.bytes_limit >= 0;
    out->bytes_limit = s.bytes_limit >= 0 ? s.bytes_limit : 0;
    return true;
  };
  se->device_memory_usage = [](const SP_Device* d, int64_t* free, int64_t* total) -> TF_Bool {
    return Dev(d)->MemoryUsage(free, total);
  };
  se->create_stream = [](const SP_Device* d, SP_Stream* out, TF_Status* st) {
    Run(st, "create_stream", [&]() -> Status {
      PDK_ASSIGN_OR_RETURN(auto s, Dev(d)->CreateStream());
      *out = reinterpret_cast<SP_Stream>(s.release());
      return Status::OK();
    });
  };
  se->destroy_stream = [](const SP_Device*, SP_Stream s) { delete Str(s); };
  se->create_stream_dependency = [](const SP_Device* d, SP_Stream dep, SP_Stream other,
                                    TF_Status* st) {
    Run(st, "create_stream_dependency",
        [&] { return Dev(d)->CreateStreamDependency(*Str(dep), *Str(other)); });
  };
  se->get_stream_status = [](const SP_Device* d, SP_Stream s, TF_Status* st) {
    Run(st, "get_stream_status", [&] { return Dev(d)->StreamStatus(*Str(s)); });
  };
  se->create_event = [](const SP_Device* d, SP_Event* out, TF_Status* st) {
    Run(st, "create_event", [&]() -> Status {
      PDK_ASSIGN_OR_RETURN(auto e, Dev(d)->CreateEvent());
      *out = reinterpret_cast<SP_Event>(e.release());
      return Status::OK();
    });
  };
  se->destroy_event = [](const SP_Device*, SP_Event e) { delete Evt(e); };
  se->get_event_status = [](const SP_Device* d, SP_Event e) {
    return Dev(d)->EventStatus(*Evt(e));
  };
  se->record_event = [](const SP_Device* d, SP_Stream s, SP_Event e, TF_Status* st) {
    Run(st, "record_event", [&] { return Dev(d)->RecordEvent(*Str(s), *Evt(e)); });
  };
  se->wait_for_event = [](const SP_Device* const d, SP_Stream s, SP_Event e, TF_Status* const st) {
    Run(st, "wait_for_event", [&] { return Dev(d)->WaitForEvent(*Str(s), *Evt(e)); });
  };
  se->create_timer = [](const SP_Device* d, SP_Timer* out, TF_Status* st) {
    Run(st, "create_timer", [&]() -> Status {
      PDK_ASSIGN_OR_RETURN(auto t, Dev(d)->CreateTimer());
      *out = reinterpret_cast<SP_Timer>(t.release());
      return Status::OK();
    });
  };
  se->destroy_timer = [](const SP_Device*, SP_Timer t) { delete Tmr(t); };
  se->start_timer = [](const SP_Device* d, SP_Stream s, SP_Timer t, TF_Status* st) {
    Run(st, "start_timer", [&] { return Dev(d)->StartTimer(*Str(s), *Tmr(t)); });
  };
  se->stop_timer = [](const SP_Device* d, SP_Stream s, SP_Timer t, TF_Status* st) {
    Run(st, "stop_timer", [&] { return Dev(d)->StopTimer(*Str(s), *Tmr(t)); });
  };
  se->memcpy_dtoh = [](const SP_Device* d, SP_Stream s, void* dst, const SP_DeviceMemoryBase* src,
                       uint64_t n, TF_Status* st) {
    RunTraced(st, "memcpy_dtoh", d, "MemcpyD2H", n,
        [&] { return Dev(d)->Memcpy(Str(s), dst, src->opaque, n, CopyKind::kDeviceToHost); });
  };
  se->memcpy_htod = [](const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* dst, const void* src,
                       uint64_t n, TF_Status* st) {
    RunTraced(st, "memcpy_htod", d, "MemcpyH2D", n,
        [&] { return Dev(d)->Memcpy(Str(s), dst->opaque, src, n, CopyKind::kHostToDevice); });
  };
  se->memcpy_dtod = [](const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* dst,
                       const SP_DeviceMemoryBase* src, uint64_t n, TF_Status* st) {
    RunTraced(st, "memcpy_dtod", d, "MemcpyD2D", n, [&] {
      return Dev(d)->Memcpy(Str(s), dst->opaque, src->opaque, n, CopyKind::kDeviceToDevice);
    });
  };
  se->sync_memcpy_dtoh = [](const SP_Device* d, void* dst, const SP_DeviceMemoryBase* src,
                            uint64_t n, TF_Status* st) {
    RunTraced(st, "sync_memcpy_dtoh", d, "MemcpyD2H", n,
        [&] { return Dev(d)->Memcpy(nullptr, dst, src->opaque, n, CopyKind::kDeviceToHost); });
  };
  se->sync_memcpy_htod = [](const SP_Device* d, SP_DeviceMemoryBase* dst, const void* src,
                            uint64_t n, TF_Status* st) {
    RunTraced(st, "sync_memcpy_htod", d, "MemcpyH2D", n,
        [&] { return Dev(d)->Memcpy(nullptr, dst->opaque, src, n, CopyKind::kHostToDevice); });
  };
  se->sync_memcpy_dtod = [](const SP_Device* d, SP_DeviceMemoryBase* dst,
                            const SP_DeviceMemoryBase* src, uint64_t n, TF_Status* st) {
    RunTraced(st, "sync_memcpy_dtod", d, "MemcpyD2D", n, [&] {
      return Dev(d)->Memcpy(nullptr, dst->opaque, src->opaque, n, CopyKind::kDeviceToDevice);
    });
  };
  se->block_host_for_event = [](const SP_Device* d, SP_Event e, TF_Status* st) {
    Run(st, "block_host_for_event", [&] { return Dev(d)->BlockHostForEvent(*Evt(e)); });
  };
  se->block_host_until_done = [](const SP_Device* d, SP_Stream s, TF_Status* st) {
    Run(st, "block_host_until_done", [&] { return Dev(d)->BlockHostUntilDone(*Str(s)); });
  };
  se->synchronize_all_activity = [](const SP_Device* d, TF_Status* st) {
    Run(st, "synchronize_all_activity", [&] { return Dev(d)->SynchronizeAllActivity(); });
  };
  se->mem_zero = [](const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* loc, uint64_t n,
                    TF_Status* st) {
    RunTraced(st, "mem_zero", d, "Memset", n, [&] { return Dev(d)->Memset(*Str(s), loc->opaque, 0, n); });
  };
  se->memset = [](const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* loc, uint8_t pattern,
                  uint64_t n, TF_Status* st) {
    RunTraced(st, "memset", d, "Memset", n, [&] { return Dev(d)->Memset(*Str(s), loc->opaque, pattern, n); });
  };
  se->memset32 = [](const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* loc, uint32_t pattern,
                    uint64_t n, TF_Status* st) {
    RunTraced(st, "memset32", d, "Memset", n, [&] { return Dev(d)->Memset32(*Str(s), loc->opaque, pattern, n); });
  };
  se->host_callback = [](const SP_Device* d, SP_Stream s, SE_StatusCallbackFn fn,
                         void* arg) -> TF_Bool {
    return Dev(d)->HostCallback(*Str(s), [d, fn, arg]() -> Status {
      TFStatusPtr st = NewTFStatus();
      RunTraced(st.get(), "host_callback", d, "HostCallback", 0, [&] {
        fn(arg, st.get());
        return Status::FromTF(st.get());
      });
      return Status::FromTF(st.get());
    });
  };
}

}  // namespace se_internal

// Fills `params` for SE_InitPlugin. `platform` must outlive the process's use
// of the device (a function-local static is the usual choice).
inline void InitPlatform(Platform* platform, SE_PlatformRegistrationParams* params,
                         TF_Status* status) {
  using namespace se_internal;  // NOLINT
  Status st = GuardedCall("SE_InitPlugin", [&]() -> Status {
    if (params == nullptr || params->platform == nullptr || params->platform_fns == nullptr)
      return InvalidArgument("SE_InitPlugin: null registration parameters");
    SP_Platform* p = params->platform;
    PDK_RETURN_IF_ERROR(PrepareStruct(p, SP_PLATFORM_STRUCT_SIZE, "SP_Platform"));
    p->ext = platform;
    p->name = platform->name();
    p->type = platform->type();
    p->supports_unified_memory = false;
    p->use_bfc_allocator = platform->use_bfc_allocator();
    p->force_memory_growth = platform->force_memory_growth();
    params->destroy_platform = [](SP_Platform*) {};

    SP_PlatformFns* f = params->platform_fns;
    PDK_RETURN_IF_ERROR(PrepareStruct(f, SP_PLATFORM_FNS_STRUCT_SIZE, "SP_PlatformFns"));
    f->get_device_count = [](const SP_Platform* p, int* count, TF_Status* st) {
      Run(st, "get_device_count", [&]() -> Status {
        PDK_ASSIGN_OR_RETURN(*count, Plat(p)->DeviceCount());
        return Status::OK();
      });
    };
    f->create_device = [](const SP_Platform* p, SE_CreateDeviceParams* dp, TF_Status* st) {
      Run(st, "create_device", [&]() -> Status {
        PDK_ASSIGN_OR_RETURN(auto dev, Plat(p)->CreateDevice(dp->ordinal));
        SP_Device* d = dp->device;
        PDK_RETURN_IF_ERROR(PrepareStruct(d, SP_DEVICE_STRUCT_SIZE, "SP_Device"));
        d->ordinal = dp->ordinal;
        d->hardware_name = dev->hardware_name();
        d->device_vendor = dev->vendor();
        d->pci_bus_id = dev->pci_bus_id();
        d->device_handle = dev.release();
        return Status::OK();
      });
    };
    f->destroy_device = [](const SP_Platform*, SP_Device* d) {
      delete Dev(d);
      d->device_handle = nullptr;
    };
    f->create_device_fns = [](const SP_Platform*, SE_CreateDeviceFnsParams* dp, TF_Status* st) {
      SP_DeviceFns* fns = dp->device_fns;
      Run(st, "create_device_fns", [&]() -> Status {
        PDK_RETURN_IF_ERROR(PrepareStruct(fns, SP_DEVICE_FNS_STRUCT_SIZE, "SP_DeviceFns"));
        fns->get_numa_node = [](const SP_Device* d) { return Dev(d)->numa_node(); };
        fns->get_memory_bandwidth = [](const SP_Device* d) { return Dev(d)->memory_bandwidth(); };
        fns->get_gflops = [](const SP_Device* d) { return Dev(d)->gflops(); };
        return Status::OK();
      });
    };
    f->destroy_device_fns = [](const SP_Platform*, SP_DeviceFns*) {};
    f->create_stream_executor = [](const SP_Platform*, SE_CreateStreamExecutorParams* sp,
                                   TF_Status* st) {
      SP_StreamExecutor* se = sp->stream_executor;
      Run(st, "create_stream_executor", [&]() -> Status {
        PDK_RETURN_IF_ERROR(
            PrepareStruct(se, SP_STREAMEXECUTOR_STRUCT_SIZE, "SP_StreamExecutor"));
        FillStreamExecutor(se);
        return Status::OK();
      });
    };
    f->destroy_stream_executor = [](const SP_Platform*, SP_StreamExecutor*) {};
    f->create_timer_fns = [](const SP_Platform*, SP_TimerFns* t, TF_Status* st) {
      Run(st, "create_timer_fns", [&]() -> Status {
        PDK_RETURN_IF_ERROR(PrepareStruct(t, SP_TIMER_FNS_STRUCT_SIZE, "SP_TimerFns"));
        t->nanoseconds = [](SP_Timer timer) -> uint64_t { return Tmr(timer)->Nanoseconds(); };
        return Status::OK();
      });
    };
    f->destroy_timer_fns = [](const SP_Platform*, SP_TimerFns*) {};
    params->destroy_platform_fns = [](SP_PlatformFns*) {};
    return Status::OK();
  });
  st.ToTF(status);
}

}  // namespace pdk

#endif  // PDK_DEVICE_H_
