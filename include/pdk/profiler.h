// pdk/profiler.h — a plugin's profiler behind the pluggable profiler C API
// (tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h),
// header-only.
//
// Two levels. RegisterProfiler hands TensorFlow three functions of the
// plugin's own for its device type:
//
//   extern "C" void TF_InitProfiler(TF_ProfilerRegistrationParams* params, TF_Status* status) {
//     pdk::RegisterProfiler(params, "MY_DEVICE", &Start, &Stop, &Collect, status);
//   }
//
// TensorFlow calls `start` when a profile session opens (only when the
// session's device_tracer_level is not 0), `stop` when it closes, and
// `collect` twice: with a null buffer for the size of the serialized XSpace,
// then with a buffer of that size to fill. Planes named /device:CUSTOM:<n>
// show in TensorBoard's trace viewer. `device_type` must outlive the process's
// use of the profiler (a string literal or a static).
//
// RegisterTraceProfiler is the kit's own profiler for a device type: while a
// session is open it records every kernel launch (the kit's trace sink,
// pdk::KernelTraceSinkSlot, pdk/kernel.h), every memcpy, memset, host
// callback and (de)allocation TensorFlow hands the device (the device
// activity sink, pdk::DeviceActivitySinkSlot, pdk/device.h), and the spans a
// device reports on its own timeline (RecordDeviceSpan: when queued work
// actually ran, for a device whose kernels only enqueue), and hands them to
// TensorFlow as an XSpace, which TensorFlow merges into the profile it writes
// (<logdir>/plugins/profile/<run>/<host>.xplane.pb).
//
// The XSpace has one XPlane per device that ran something, named
// "/device:CUSTOM:<TYPE>:<ordinal>": TensorBoard's trace viewer shows planes
// whose name starts with "/device:CUSTOM:" as devices of their own (custom
// planes), and a plugin's device is neither a GPU nor a TPU, whose prefixes
// would make the profile's GPU/TPU analyses read it as one. Per plane: one
// XLine per host thread that launched kernels ("<TYPE> launch thread <tid>"),
// one XEvent per launch (offset and duration in ps from the line's timestamp,
// wall-clock ns like TensorFlow's host events, so they line up), XEventMetadata
// named by the node with the op type as display name, and the stat "tf_op" =
// "<node>:<op type>", the convention TensorFlow's device planes use so the
// profile's op statistics group device time by TensorFlow op, and the stat
// "bytes_allocated" (int64: the bytes of the outputs and temps the launch
// allocated, pdk::Context::allocated_bytes). An asynchronous kernel's event is
// on its launcher thread's line and ends when its work ends. Memory
// operations, host callbacks and the device allocator's (de)allocations are
// events on the same lines, named by their kind ("MemcpyH2D", "MemcpyD2H",
// "MemcpyD2D", "Memset", "HostCallback", "Allocate", "Deallocate"), with the
// stat "bytes" and no tf_op. Device spans are on lines of their own, named by
// the device ("<TYPE> stream 1"), with tf_op when they carry a node.
//
// Messages are written with the kit's wire-format writer (pdk/wire_format.h;
// field numbers of tsl/profiler/protobuf/xplane.proto, as TensorFlow's
// xplane_pb2 descriptor lists them). No session open: the sinks are null and
// a launch costs one atomic load. At most kMaxEvents events are kept per
// session; later ones are counted and reported as an XSpace warning.
#ifndef PDK_PROFILER_H_
#define PDK_PROFILER_H_

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "pdk/device.h"  // CheckStructSize, PrepareStruct, DeviceActivity
#include "pdk/kernel.h"  // KernelTrace
#include "pdk/wire_format.h"
#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"
#include "tensorflow/c/tf_status.h"

namespace pdk {

using ProfilerStartFn = void (*)(const TP_Profiler*, TF_Status*);
using ProfilerCollectFn = void (*)(const TP_Profiler*, uint8_t* buffer, size_t* size,
                                   TF_Status*);

// Fills `params` (every struct size checked: a TensorFlow whose structs are
// shorter than this build's headers gets FailedPrecondition, not a write past
// their end) and sets `status`.
inline void RegisterProfiler(TF_ProfilerRegistrationParams* params, const char* device_type,
                             ProfilerStartFn start, ProfilerStartFn stop,
                             ProfilerCollectFn collect, TF_Status* status) {
  Status st = CheckStructSize(params, TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE,
                              "TF_ProfilerRegistrationParams");
  if (st.ok()) st = PrepareStruct(params->profiler, TP_PROFILER_STRUCT_SIZE, "TP_Profiler");
  if (st.ok())
    st = PrepareStruct(params->profiler_fns, TP_PROFILER_FNS_STRUCT_SIZE, "TP_ProfilerFns");
  if (!st.ok()) return st.ToTF(status);
  params->major_version = TP_MAJOR;
  params->minor_version = TP_MINOR;
  params->patch_version = TP_PATCH;
  params->profiler->device_type = device_type;
  params->profiler_fns->start = start;
  params->profiler_fns->stop = stop;
  params->profiler_fns->collect_data_xspace = collect;
  params->destroy_profiler = [](TP_Profiler*) {};
  params->destroy_profiler_fns = [](TP_ProfilerFns*) {};
  TF_SetStatus(status, TF_OK, "");
}


namespace profiler_internal {

using wire::PutBytes;
using wire::PutVarintField;

constexpr size_t kMaxEvents = size_t(1) << 21;  // ~100 MB of events at most

struct Event {
  std::string op, node;  // activity: op = node = its kind
  int device;
  int64_t tid, begin_ns, end_ns;  // tid: the line (a host thread, or a device span's line)
  bool ok;
  bool activity;   // a memory operation or host callback, not a kernel
  uint64_t bytes;  // activity: bytes moved; kernel: bytes its launch allocated
  std::string line_name;  // a device span's line; empty for a host thread's
};

struct Session {
  std::mutex mu;
  std::vector<Event> events;
  uint64_t dropped = 0;
  std::string serialized;  // the XSpace of the last stopped session
  const char* device_type = "";
  void (*flush)() = nullptr;  // SetProfilerFlush
  std::atomic<bool> active{false};
};

inline Session& S() {
  static Session* s = new Session;  // never destroyed: kernels may outlive exit
  return *s;
}

inline int64_t ThreadId() {
  static thread_local const int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
  return tid;
}

inline void Add(Event e) {
  Session& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  if (s.events.size() >= kMaxEvents) {
    ++s.dropped;
    return;
  }
  s.events.push_back(std::move(e));
}

inline void Record(const KernelTrace& t) {
  Add(Event{t.op, t.node, t.device, ThreadId(), t.begin_ns, t.end_ns, t.ok, false, t.bytes, {}});
}

inline void RecordActivity(const DeviceActivity& a) {
  Add(Event{a.kind, a.kind, a.device, ThreadId(), a.begin_ns, a.end_ns, a.ok, true, a.bytes, {}});
}

inline std::string Message(int field, const std::string& body) {
  std::string out;
  PutBytes(&out, field, body);
  return out;
}

// tsl.profiler.XSpace { planes = 1; warnings = 3; }, XPlane { id = 1; name = 2;
// lines = 3; event_metadata = 4 (map<int64, XEventMetadata>); stat_metadata =
// 5 (map<int64, XStatMetadata>) }, XLine { id = 1; name = 2; timestamp_ns = 3;
// events = 4; display_name = 11 }, XEvent { metadata_id = 1; offset_ps = 2;
// duration_ps = 3; stats = 4 }, XStat { metadata_id = 1; str_value = 5;
// int64_value = 4 }, XEventMetadata { id = 1; name = 2; display_name = 4 },
// XStatMetadata { id = 1; name = 2; description = 3 }.
inline std::string BuildXSpace(std::vector<Event> events, uint64_t dropped) {
  constexpr int64_t kTfOpStat = 1, kFailedStat = 2, kBytesStat = 3, kBytesAllocatedStat = 4;
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.device, a.tid, a.begin_ns) < std::tie(b.device, b.tid, b.begin_ns);
  });
  std::string space;
  size_t i = 0;
  while (i < events.size()) {
    const int device = events[i].device;
    std::string plane;
    PutVarintField(&plane, 1, static_cast<uint64_t>(device));
    const std::string type = S().device_type;
    PutBytes(&plane, 2, "/device:CUSTOM:" + type + ":" + std::to_string(device));
    std::map<std::pair<std::string, std::string>, int64_t> metadata;  // (node, op) -> id
    while (i < events.size() && events[i].device == device) {
      const int64_t tid = events[i].tid;
      const int64_t line_ts = events[i].begin_ns;  // sorted: the earliest
      std::string line;
      PutVarintField(&line, 1, static_cast<uint64_t>(tid));
      PutBytes(&line, 2, events[i].line_name.empty()
                             ? type + " launch thread " + std::to_string(tid)
                             : events[i].line_name);
      PutVarintField(&line, 3, static_cast<uint64_t>(line_ts));
      for (; i < events.size() && events[i].device == device && events[i].tid == tid; ++i) {
        const Event& e = events[i];
        auto it = metadata.emplace(std::make_pair(e.node, e.op), int64_t(metadata.size()) + 1).first;
        std::string ev, stat;
        PutVarintField(&ev, 1, static_cast<uint64_t>(it->second));
        PutVarintField(&ev, 2, static_cast<uint64_t>((e.begin_ns - line_ts) * 1000));
        PutVarintField(&ev, 3, static_cast<uint64_t>(std::max<int64_t>(e.end_ns - e.begin_ns, 0) * 1000));
        if (e.activity || e.node.empty()) {
          PutVarintField(&stat, 1, kBytesStat);
          PutVarintField(&stat, 4, e.bytes);
        } else {
          PutVarintField(&stat, 1, kTfOpStat);
          PutBytes(&stat, 5, e.node + ":" + e.op);
          std::string allocated;
          PutVarintField(&allocated, 1, kBytesAllocatedStat);
          PutVarintField(&allocated, 4, e.bytes);
          PutBytes(&ev, 4, allocated);
        }
        PutBytes(&ev, 4, stat);
        if (!e.ok) {
          std::string failed;
          PutVarintField(&failed, 1, kFailedStat);
          PutVarintField(&failed, 4, 1);
          PutBytes(&ev, 4, failed);
        }
        PutBytes(&line, 4, ev);
      }
      PutBytes(&plane, 3, line);
    }
    for (const auto& [key, id] : metadata) {
      std::string md, entry;
      PutVarintField(&md, 1, static_cast<uint64_t>(id));
      PutBytes(&md, 2, key.first);
      PutBytes(&md, 4, key.second);
      PutVarintField(&entry, 1, static_cast<uint64_t>(id));
      PutBytes(&entry, 2, md);
      PutBytes(&plane, 4, entry);
    }
    const struct {
      int64_t id;
      const char* name;
      const char* description;
    } stats[] = {{kTfOpStat, "tf_op", "the TensorFlow node and op type, node:OpType"},
                 {kFailedStat, "failed", "1: the kernel or operation returned an error"},
                 {kBytesStat, "bytes", "bytes copied, set, allocated or freed"},
                 {kBytesAllocatedStat, "bytes_allocated",
                  "bytes the kernel launch allocated: its outputs (unless forwarded from an "
                  "input) and temps"}};
    for (const auto& st : stats) {
      std::string md, entry;
      PutVarintField(&md, 1, static_cast<uint64_t>(st.id));
      PutBytes(&md, 2, st.name);
      PutBytes(&md, 3, st.description);
      PutVarintField(&entry, 1, static_cast<uint64_t>(st.id));
      PutBytes(&entry, 2, md);
      PutBytes(&plane, 5, entry);
    }
    space += Message(1, plane);
  }
  if (dropped)
    PutBytes(&space, 3,
             std::string(S().device_type) + ": " + std::to_string(dropped) + " events after the first " +
                 std::to_string(kMaxEvents) + " of this session were not recorded");
  return space;
}

inline void Start(const TP_Profiler*, TF_Status* status) {
  Session& s = S();
  {
    std::lock_guard<std::mutex> l(s.mu);
    s.events.clear();
    s.dropped = 0;
    s.serialized.clear();
  }
  KernelTraceSinkSlot().store(&Record, std::memory_order_release);
  DeviceActivitySinkSlot().store(&RecordActivity, std::memory_order_release);
  s.active.store(true, std::memory_order_release);
  TF_SetStatus(status, TF_OK, "");
}

inline void Stop(const TP_Profiler*, TF_Status* status) {
  KernelTraceSinkSlot().store(nullptr, std::memory_order_release);
  DeviceActivitySinkSlot().store(nullptr, std::memory_order_release);
  Session& s = S();
  if (s.flush) s.flush();  // the device's pending spans, recorded while still active
  s.active.store(false, std::memory_order_release);
  std::vector<Event> events;
  uint64_t dropped;
  {
    std::lock_guard<std::mutex> l(s.mu);
    events.swap(s.events);
    dropped = s.dropped;
  }
  std::string space = BuildXSpace(std::move(events), dropped);
  std::lock_guard<std::mutex> l(s.mu);
  s.serialized = std::move(space);
  TF_SetStatus(status, TF_OK, "");
}

inline void Collect(const TP_Profiler*, uint8_t* buffer, size_t* size, TF_Status* status) {
  Session& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  if (buffer == nullptr) {
    *size = s.serialized.size();
  } else {
    const size_t n = std::min(*size, s.serialized.size());
    if (n) std::memcpy(buffer, s.serialized.data(), n);
    *size = n;
    s.serialized.clear();  // handed over once
  }
  TF_SetStatus(status, TF_OK, "");
}

}  // namespace profiler_internal

// ---- the kit's trace profiler (RegisterTraceProfiler)

// A span of work on a device's own timeline: when queued work ran, as the
// device reports it (an OpenCL event's profiling times, a CUDA event pair),
// in wall-clock ns (TraceClockNs, pdk/kernel.h). `line` and `line_name` name
// the device's queue ("OPENCL stream 1"); `node` and `op` the TensorFlow node
// it ran for (empty for a copy or fill).
struct DeviceSpan {
  int device = 0;
  int64_t line = 0;
  std::string line_name, node, op;
  int64_t begin_ns = 0, end_ns = 0;
  bool ok = true;
  uint64_t bytes = 0;
};

// True while a session of the trace profiler is open: a device asks for its
// work's timestamps only then.
inline bool ProfilingActive() {
  return profiler_internal::S().active.load(std::memory_order_acquire);
}
// Adds a span to the open session (nothing without one).
inline void RecordDeviceSpan(const DeviceSpan& s) {
  if (!ProfilingActive()) return;
  profiler_internal::Add(profiler_internal::Event{
      s.op.empty() ? s.line_name : s.op, s.node, s.device, (int64_t(1) << 40) + s.line,
      s.begin_ns, s.end_ns, s.ok, s.node.empty(), s.bytes, s.line_name});
}
// A function the profiler calls when a session stops, before it builds the
// XSpace: a device whose timestamps arrive later (queued work still running)
// waits for them there and records them with RecordDeviceSpan.
inline void SetProfilerFlush(void (*flush)()) { profiler_internal::S().flush = flush; }

// TF_InitProfiler's work for the kit's trace profiler (above) of `device_type`.
inline void RegisterTraceProfiler(TF_ProfilerRegistrationParams* params, const char* device_type,
                                  TF_Status* status) {
  profiler_internal::S().device_type = device_type;
  RegisterProfiler(params, device_type, &profiler_internal::Start, &profiler_internal::Stop,
                   &profiler_internal::Collect, status);
}

}  // namespace pdk

#endif  // PDK_PROFILER_H_
