// PDK's pluggable profiler (TF_InitProfiler, tensorflow/c/experimental/
// pluggable_profiler/pluggable_profiler.h): while a TensorFlow profile session
// is open (tf.profiler.experimental.start / stop, TensorBoard's capture), every
// PDK kernel launch is recorded through the kit's trace sink
// (pdk::KernelTraceSinkSlot, include/pdk/kernel.h), and every memcpy, memset
// and host callback TensorFlow hands the device through the device activity
// sink (pdk::DeviceActivitySinkSlot, include/pdk/device.h), and handed to
// TensorFlow as an XSpace, which TensorFlow merges into the profile it writes
// (<logdir>/plugins/profile/<run>/<host>.xplane.pb).
//
// The XSpace has one XPlane per PDK device that ran a kernel, named
// "/device:CUSTOM:PDK:<ordinal>": TensorBoard's trace viewer shows planes whose
// name starts with "/device:CUSTOM:" as devices of their own (custom planes),
// and PDK is neither a GPU nor a TPU, whose prefixes would make the profile's
// GPU/TPU analyses read it as one. Per plane: one XLine per host thread that
// launched kernels ("PDK launch thread <tid>"), one XEvent per launch (offset
// and duration in ps from the line's timestamp, wall-clock ns like
// TensorFlow's host events, so they line up), XEventMetadata named by the
// node with the op type as display name, and the stat "tf_op" =
// "<node>:<op type>", the convention TensorFlow's device planes use so the
// profile's op statistics group device time by TensorFlow op, and the stat
// "bytes_allocated" (int64: the bytes of the outputs and temps the launch
// allocated, pdk::Context::allocated_bytes). An asynchronous kernel's event
// is on its launcher thread's line and ends when its work ends. Memory
// operations, host callbacks and the device allocator's (de)allocations are
// events on the same lines, named by their kind ("MemcpyH2D", "MemcpyD2H",
// "MemcpyD2D", "Memset", "HostCallback", "Allocate", "Deallocate"; one per
// tensor, as PDK runs under TensorFlow's simple allocator), with the stat
// "bytes" and no tf_op.
//
// Messages are written with the kit's wire-format writer (pdk/
// wire_format.h; field numbers of tsl/profiler/protobuf/xplane.proto, as
// TensorFlow's xplane_pb2 descriptor lists them). No session open: the sink
// is null and a launch costs one atomic load. At most kMaxEvents launches are
// kept per session; later ones are counted and reported as an XSpace warning.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "pdk/device.h"
#include "pdk/kernel.h"
#include "pdk/profiler.h"
#include "pdk/wire_format.h"
#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"

namespace pdk_profiler {
namespace {

using pdk::wire::PutBytes;
using pdk::wire::PutVarintField;

constexpr size_t kMaxEvents = size_t(1) << 21;  // ~100 MB of events at most

struct Event {
  std::string op, node;  // activity: op = node = its kind
  int device;
  int64_t tid, begin_ns, end_ns;
  bool ok;
  bool activity;   // a memory operation or host callback, not a kernel
  uint64_t bytes;  // activity: bytes moved; kernel: bytes its launch allocated
};

struct Session {
  std::mutex mu;
  std::vector<Event> events;
  uint64_t dropped = 0;
  std::string serialized;  // the XSpace of the last stopped session
};

Session& S() {
  static Session* s = new Session;  // never destroyed: kernels may outlive exit
  return *s;
}

int64_t ThreadId() {
  static thread_local const int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
  return tid;
}

void Add(Event e) {
  Session& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  if (s.events.size() >= kMaxEvents) {
    ++s.dropped;
    return;
  }
  s.events.push_back(std::move(e));
}

void Record(const pdk::KernelTrace& t) {
  Add(Event{t.op, t.node, t.device, ThreadId(), t.begin_ns, t.end_ns, t.ok, false, t.bytes});
}

void RecordActivity(const pdk::DeviceActivity& a) {
  Add(Event{a.kind, a.kind, a.device, ThreadId(), a.begin_ns, a.end_ns, a.ok, true, a.bytes});
}

std::string Message(int field, const std::string& body) {
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
std::string BuildXSpace(std::vector<Event> events, uint64_t dropped) {
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
    PutBytes(&plane, 2, "/device:CUSTOM:PDK:" + std::to_string(device));
    std::map<std::pair<std::string, std::string>, int64_t> metadata;  // (node, op) -> id
    while (i < events.size() && events[i].device == device) {
      const int64_t tid = events[i].tid;
      const int64_t line_ts = events[i].begin_ns;  // sorted: the earliest
      std::string line;
      PutVarintField(&line, 1, static_cast<uint64_t>(tid));
      PutBytes(&line, 2, "PDK launch thread " + std::to_string(tid));
      PutVarintField(&line, 3, static_cast<uint64_t>(line_ts));
      for (; i < events.size() && events[i].device == device && events[i].tid == tid; ++i) {
        const Event& e = events[i];
        auto it = metadata.emplace(std::make_pair(e.node, e.op), int64_t(metadata.size()) + 1).first;
        std::string ev, stat;
        PutVarintField(&ev, 1, static_cast<uint64_t>(it->second));
        PutVarintField(&ev, 2, static_cast<uint64_t>((e.begin_ns - line_ts) * 1000));
        PutVarintField(&ev, 3, static_cast<uint64_t>(std::max<int64_t>(e.end_ns - e.begin_ns, 0) * 1000));
        if (e.activity) {
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
                 {kFailedStat, "pdk_failed", "1: the kernel or operation returned an error"},
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
             "PDK: " + std::to_string(dropped) + " events after the first " +
                 std::to_string(kMaxEvents) + " of this session were not recorded");
  return space;
}

void Start(const TP_Profiler*, TF_Status* status) {
  Session& s = S();
  {
    std::lock_guard<std::mutex> l(s.mu);
    s.events.clear();
    s.dropped = 0;
    s.serialized.clear();
  }
  pdk::KernelTraceSinkSlot().store(&Record, std::memory_order_release);
  pdk::DeviceActivitySinkSlot().store(&RecordActivity, std::memory_order_release);
  TF_SetStatus(status, TF_OK, "");
}

void Stop(const TP_Profiler*, TF_Status* status) {
  pdk::KernelTraceSinkSlot().store(nullptr, std::memory_order_release);
  pdk::DeviceActivitySinkSlot().store(nullptr, std::memory_order_release);
  Session& s = S();
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

void Collect(const TP_Profiler*, uint8_t* buffer, size_t* size, TF_Status* status) {
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

}  // namespace

void InitProfiler(TF_ProfilerRegistrationParams* params, const char* device_type,
                  TF_Status* status) {
  pdk::RegisterProfiler(params, device_type, &Start, &Stop, &Collect, status);
}

}  // namespace pdk_profiler
