// pdk/kernel.h — writing and registering kernels over TensorFlow's kernel C API
// (tensorflow/c/kernels.h).
//
// A kernel is a class template over its element type(s):
//
//   template <class T>
//   class MatMulOp {
//    public:
//     pdk::Status Init(const pdk::Attrs& a) {          // optional; runs once per node
//       PDK_RETURN_IF_ERROR(a.Get("transpose_a", &transpose_a_));
//       return a.Get("transpose_b", &transpose_b_);
//     }
//     pdk::Status Compute(pdk::Context& ctx) const;     // runs per launch
//   };
//
//   PDK_REGISTER_KERNELS(MatMul, r) {                   // deferred: replayed by TF_InitKernel
//     pdk::ForEachType(pdk::TypeList<float, double>{}, [&](auto t) {
//       using T = typename decltype(t)::type;
//       r.Add(pdk::KernelDef<MatMulOp<T>>("MatMul").Type("T", t));
//     });
//   }
//
// The kit owns every TF_* handle (pdk::Tensor releases its TF_Tensor), converts
// a returned error Status into TF_OpKernelContext_Failure, catches exceptions at
// the C boundary, decodes attributes once (Init), registers one builder per
// listed dtype with its type constraint, and counts launches per op. A kernel
// marked `.Async()` may run off TensorFlow's executor thread (see "asynchronous
// kernels" below), so independent kernels overlap.
#ifndef PDK_KERNEL_H_
#define PDK_KERNEL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pdk/graph_def.h"
#include "pdk/status.h"
#include "pdk/tensor.h"
#include "pdk/types.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/tf_buffer.h"

namespace pdk {

// ------------------------------------------------------------------ attributes

// Typed read access to a node's attributes at kernel construction.
// Every getter returns InvalidArgument naming the attribute on failure.
class Attrs {
 public:
  explicit Attrs(TF_OpKernelConstruction* c) : c_(c) {}

  bool Has(const char* name) const {
    TFStatusPtr s = NewTFStatus();
    return TF_OpKernelConstruction_HasAttr(c_, name, s.get());
  }
  Status Get(const char* name, bool* v) const {
    TF_Bool b = 0;
    return Call(name, [&](TF_Status* s) { TF_OpKernelConstruction_GetAttrBool(c_, name, &b, s); },
                [&] { *v = b != 0; });
  }
  Status Get(const char* name, int32_t* v) const {
    return Call(name, [&](TF_Status* s) { TF_OpKernelConstruction_GetAttrInt32(c_, name, v, s); });
  }
  Status Get(const char* name, int64_t* v) const {
    return Call(name, [&](TF_Status* s) { TF_OpKernelConstruction_GetAttrInt64(c_, name, v, s); });
  }
  Status Get(const char* name, float* v) const {
    return Call(name, [&](TF_Status* s) { TF_OpKernelConstruction_GetAttrFloat(c_, name, v, s); });
  }
  Status Get(const char* name, TF_DataType* v) const {
    return Call(name, [&](TF_Status* s) { TF_OpKernelConstruction_GetAttrType(c_, name, v, s); });
  }
  Status Get(const char* name, std::string* v) const {
    int32_t list_size = 0, total = 0;
    PDK_RETURN_IF_ERROR(Size(name, &list_size, &total));
    std::string buf(static_cast<size_t>(total < 0 ? 0 : total), '\0');
    return Call(name, [&](TF_Status* s) {
      TF_OpKernelConstruction_GetAttrString(c_, name, buf.data(), buf.size(), s);
    }, [&] { *v = std::move(buf); });
  }
  Status Get(const char* name, std::vector<int32_t>* v) const {
    int32_t n = 0, total = 0;
    PDK_RETURN_IF_ERROR(Size(name, &n, &total));
    v->assign(n < 0 ? 0 : n, 0);
    return Call(name, [&](TF_Status* s) {
      TF_OpKernelConstruction_GetAttrInt32List(c_, name, v->data(), n, s);
    });
  }
  Status Get(const char* name, std::vector<int64_t>* v) const {
    int32_t n = 0, total = 0;
    PDK_RETURN_IF_ERROR(Size(name, &n, &total));
    v->assign(n < 0 ? 0 : n, 0);
    return Call(name, [&](TF_Status* s) {
      TF_OpKernelConstruction_GetAttrInt64List(c_, name, v->data(), n, s);
    });
  }
  // Reads `name` if present, else leaves *v at its default.
  template <class V>
  Status GetOptional(const char* name, V* v) const {
    return Has(name) ? Get(name, v) : Status::OK();
  }

  std::string node_name() const {
    TF_StringView n = TF_OpKernelConstruction_GetName(c_);
    return std::string(n.data, n.len);
  }

  // The construction context, for what the getters above do not cover (the
  // TF-style layer, pdk/tf/op_kernel.h, reads every attr type through it).
  TF_OpKernelConstruction* raw() const { return c_; }

 private:
  Status Size(const char* name, int32_t* list_size, int32_t* total) const {
    return Call(name, [&](TF_Status* s) {
      TF_OpKernelConstruction_GetAttrSize(c_, name, list_size, total, s);
    });
  }
  template <class F, class Then = void (*)()>
  Status Call(const char* name, F&& f, Then&& then = [] {}) const {
    TFStatusPtr s = NewTFStatus();
    f(s.get());
    if (TF_GetCode(s.get()) != TF_OK)
      return InvalidArgument("attribute '", name, "': ", TF_Message(s.get()));
    then();
    return Status::OK();
  }
  TF_OpKernelConstruction* c_;
};

// --------------------------------------------------------------- kernel context

// The per-launch view of TF_OpKernelContext. Every tensor it returns is owned.
class Context {
 public:
  Context(TF_OpKernelContext* c, const std::string& op) : c_(c), op_(op) {}

  // The TensorFlow op type being run ("AddV2"), for error messages.
  const char* op() const { return op_.c_str(); }
  int num_inputs() const { return TF_NumInputs(c_); }
  int num_outputs() const { return TF_NumOutputs(c_); }
  TF_DataType input_dtype(int i) const { return TF_InputDatatype(c_, i); }
  TF_DataType output_dtype(int i) const { return TF_ExpectedOutputDataType(c_, i); }
  int device_id() const { return TF_GetDeviceId(c_); }

  StatusOr<Tensor> input(int i) const {
    TF_Status* s = ScratchTFStatus();
    TF_Tensor* t = nullptr;
    TF_GetInput(c_, i, &t, s);
    Tensor owned(t);
    if (TF_GetCode(s) != TF_OK) return Status::FromTF(s);
    return owned;
  }

  // Allocates output `i` with `shape` and the dtype the graph expects. This
  // and the two below first check `shape` (CheckAllocatable): a shape
  // TensorFlow cannot represent is InvalidArgument, never an abort.
  StatusOr<Tensor> allocate_output(int i, const Shape& shape) const {
    const TF_DataType dt = output_dtype(i);
    PDK_RETURN_IF_ERROR(CheckAllocatable(op_, "output", i, shape, dt));
    TF_Status* s = ScratchTFStatus();
    const size_t bytes = static_cast<size_t>(shape.num_elements()) * TF_DataTypeSize(dt);
    Tensor t(TF_AllocateOutput(c_, i, dt, shape.dims().data(), shape.rank(), bytes, s));
    if (TF_GetCode(s) != TF_OK) return Status::FromTF(s);
    allocated_bytes_ += bytes;
    return t;
  }

  // Reuses the buffer of one of `candidates` (an input of the same size that no
  // one else holds) as output `i`, or allocates a new one. `forwarded_input`,
  // if given, receives the input whose buffer was reused, or -1. An input the
  // kernel still holds (a live pdk::Tensor from input()) is never forwarded.
  StatusOr<Tensor> forward_or_allocate_output(const std::vector<int>& candidates, int i,
                                              const Shape& shape,
                                              int* forwarded_input = nullptr) const {
    return forward_or_allocate_output(candidates.data(), static_cast<int>(candidates.size()), i,
                                      shape, forwarded_input);
  }
  // The same with the candidates as an array of n.
  StatusOr<Tensor> forward_or_allocate_output(const int* candidates, int n, int i,
                                              const Shape& shape,
                                              int* forwarded_input = nullptr) const {
    const TF_DataType dt = output_dtype(i);
    PDK_RETURN_IF_ERROR(CheckAllocatable(op_, "output", i, shape, dt));
    int forwarded = -1;
    // The C API takes a non-const array: a copy, on the stack when small.
    int small[8];
    std::vector<int> large;
    int* cand = small;
    if (n > 8) {
      large.assign(candidates, candidates + n);
      cand = large.data();
    } else {
      std::copy(candidates, candidates + n, small);
    }
    TF_Status* s = ScratchTFStatus();
    Tensor t(TF_ForwardInputOrAllocateOutput(c_, cand, n, i, shape.dims().data(), shape.rank(),
                                             &forwarded, s));
    if (forwarded_input) *forwarded_input = forwarded;
    if (TF_GetCode(s) != TF_OK) return Status::FromTF(s);
    if (forwarded < 0)
      allocated_bytes_ += static_cast<uint64_t>(shape.num_elements()) * TF_DataTypeSize(dt);
    return t;
  }

  // A scratch tensor on the device, released when the returned Tensor dies.
  StatusOr<Tensor> allocate_temp(TF_DataType dt, const Shape& shape) const {
    PDK_RETURN_IF_ERROR(CheckAllocatable(op_, "temp", -1, shape, dt));
    TF_Status* s = ScratchTFStatus();
    TF_AllocatorAttributes attrs{TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE, 0};
    Tensor t(TF_AllocateTemp(c_, dt, shape.dims().data(), shape.rank(), &attrs, s));
    if (TF_GetCode(s) != TF_OK) return Status::FromTF(s);
    allocated_bytes_ += static_cast<uint64_t>(shape.num_elements()) * TF_DataTypeSize(dt);
    return t;
  }

  // Makes output `i` share the buffer of `t` (no copy), e.g. Identity, Reshape.
  Status set_output(int i, const Tensor& t) const {
    TF_Status* s = ScratchTFStatus();
    TF_SetOutput(c_, i, t.get(), s);
    return Status::FromTF(s);
  }

  // Makes output `i` share the buffer of `t` under `shape`, which must hold as
  // many elements (Reshape, ExpandDims, Squeeze): no copy. `t` is this kernel's
  // own handle (e.g. from input()); its shape becomes `shape` (TF_SetShape acts
  // on the handle only, never on the graph's tensor). An empty result gets a
  // fresh zero-byte output, as TF_GetInput hands out no device buffer for it.
  Status set_output_reshaped(int i, Tensor& t, const Shape& shape) const {
    if (shape.num_elements() != t.num_elements())
      return Internal(op_, ": cannot alias a tensor of shape ", t.shape(), " (",
                      t.num_elements(), " elements) as shape ", shape, " (",
                      shape.num_elements(), " elements)");
    if (shape.num_elements() == 0) return allocate_output(i, shape).status();
    TF_SetShape(t.get(), shape.dims().data(), shape.rank());
    return set_output(i, t);
  }

  TF_OpKernelContext* raw() const { return c_; }

  // Bytes this launch allocated so far through allocate_output,
  // forward_or_allocate_output (when not forwarded) and allocate_temp:
  // elements times dtype size, as requested (the allocator may round up).
  uint64_t allocated_bytes() const { return allocated_bytes_; }

 private:
  TF_OpKernelContext* c_;
  const std::string& op_;
  mutable uint64_t allocated_bytes_ = 0;
};

// ------------------------------------------------------------- launch counters

// Per-op launch counts, keyed by TensorFlow op type. Entries are created at
// registration (before any kernel runs) and never removed, so lookups need no lock.
class LaunchStats {
 public:
  static LaunchStats& Global() {
    static LaunchStats* g = new LaunchStats;  // never destroyed: kernels may outlive exit
    return *g;
  }
  std::atomic<uint64_t>* CounterFor(const std::string& op) {
    std::lock_guard<std::mutex> l(mu_);
    auto& c = counters_[op];
    if (!c) c = std::make_unique<std::atomic<uint64_t>>(0);
    return c.get();
  }
  std::map<std::string, uint64_t> Snapshot() const {
    std::lock_guard<std::mutex> l(mu_);
    std::map<std::string, uint64_t> out;
    for (auto& [op, c] : counters_) out[op] = c->load(std::memory_order_relaxed);
    return out;
  }
  void Reset() {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& [op, c] : counters_) c->store(0, std::memory_order_relaxed);
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<std::atomic<uint64_t>>> counters_;
};

// ------------------------------------------------------------ kernel traces

// One kernel launch, as reported to a trace sink: the op type, the node's
// name, the device ordinal (TF_GetDeviceId), start and end in ns of
// TraceClockNs, whether Compute succeeded, and the bytes it allocated
// (Context::allocated_bytes: outputs and temps).
struct KernelTrace {
  const char* op;
  const char* node;
  int device;
  int64_t begin_ns, end_ns;
  bool ok;
  uint64_t bytes;
};
using KernelTraceSink = void (*)(const KernelTrace&);

// The sink every launch reports to while set (a profiler session, e.g. PDK's
// pluggable profiler in src/profiler/); null, the default, costs one atomic
// load per launch. Called on the thread that ran the kernel (for an Async
// kernel handed to the launcher, a launcher thread; the trace ends when its
// work ends, before TensorFlow's done callback runs).
inline std::atomic<KernelTraceSink>& KernelTraceSinkSlot() {
  static std::atomic<KernelTraceSink> sink{nullptr};
  return sink;
}

// ------------------------------------------------------- asynchronous kernels

// TensorFlow's executor runs a pluggable device's kernels inline, one at a
// time (op_kernel.cc marks them inexpensive). A kernel registered with
// KernelDef::Async() is registered twice when a launcher is installed: as a
// synchronous kernel (no label: what a node gets by default) and through
// TF_NewAsyncKernelBuilder under the kernel label kAsyncKernelLabel, which a
// node selects with TensorFlow's `_kernel` node attribute (`_kernel:
// "async"`; the plugin's graph optimizer sets it, e.g. on nodes whose inputs
// may be large). Each launch of the asynchronous twin is offered to the
// plugin's launcher, which either takes it (the kernel then runs on a
// launcher thread, and the executor goes on with other nodes meanwhile) or
// declines (the kernel runs inline). Either way the kernel's code, its errors
// (TF_OpKernelContext_Failure before the done callback) and its trace are
// those of a synchronous launch. Why two kernels: TensorFlow's executor
// hands every node an asynchronous kernel makes ready to its inter-op pool
// (ExecutorState::ProcessAsync's done callback calls NodeDone with no inline
// queue), even when the kernel ran inline, so a small product pays a thread
// hand-off per launch (docs/benchmarks.md, "Kernel overlap"); a synchronous
// kernel's successors run inline on the same thread.

// The kernel label (TF_KernelBuilder_Label) of an Async kernel's asynchronous
// twin; a node runs it when its `_kernel` attribute has this value.
inline constexpr const char kAsyncKernelLabel[] = "async";

// One launch handed to the launcher: runs the kernel, then TensorFlow's done
// callback. Call it exactly once.
using AsyncWork = std::function<void()>;

// The plugin's launcher (PDK's: src/device/async_launcher.cc), installed in
// AsyncLauncherSlot before TF_InitKernel registers the kernels. With none
// installed (the default; PDK's when PDK_ASYNC=0 or a guard failed), Async
// kernels register as synchronous ones.
struct AsyncLauncher {
  // True if this launch should run on a launcher thread; the kit then calls
  // `launch` exactly once. Called on TensorFlow's executor thread.
  bool (*accept)(TF_OpKernelContext* ctx);
  // Runs `work` on a launcher thread: never the calling thread, never a
  // worker of a device pool (a kernel waits for its shards on the pool, which
  // would deadlock if the pool's workers were all waiting kernels).
  void (*launch)(AsyncWork work);
};
inline std::atomic<const AsyncLauncher*>& AsyncLauncherSlot() {
  static std::atomic<const AsyncLauncher*> launcher{nullptr};
  return launcher;
}

#if defined(__GLIBCXX__)
// True where the done callback can outlive compute_async_func: libstdc++.
inline constexpr bool kAsyncDoneCopy = true;
// TensorFlow's CAsyncOpKernel::ComputeAsync (tensorflow/c/kernels.cc) passes
// compute_async_func `&done`, the address of its by-value
// AsyncOpKernel::DoneCallback (a std::function<void()>), which dies when the
// call returns. A launch that finishes later needs a copy, made here during
// the call: std::function's copy constructor runs the callable's own manager
// (TensorFlow's code), so it is a true copy. It relies on TensorFlow and the
// plugin sharing libstdc++'s std::function layout (every Linux TensorFlow
// wheel, C++11 ABI); the launcher enables Async kernels only after its own
// checks (TensorFlow version allowlist, sizeof) pass.
inline std::function<void()> CopyDoneCallback(TF_AsyncOpKernelDoneCallback* done) {
  return *reinterpret_cast<const std::function<void()>*>(done);
}
#else
inline constexpr bool kAsyncDoneCopy = false;  // other C++ libraries: always synchronous
#endif

// Wall-clock ns since the Unix epoch: the clock of TensorFlow's own host
// trace events (tsl::profiler::GetCurrentTimeNanos), so the device's events
// line up with TensorFlow's in one profile.
inline int64_t TraceClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace internal {

inline std::string OpTypeOf(TF_OpKernelConstruction* c) {
  TFStatusPtr s = NewTFStatus();
  TF_Buffer* b = TF_OpKernelConstruction_GetNodeDef(c, s.get());
  std::string op;
  if (b) {
    NodeDef node;  // the kit's one NodeDef reader (pdk/graph_def.h)
    if (TF_GetCode(s.get()) == TF_OK && ParseNodeDef(b->data, b->length, &node).ok())
      op = std::move(node.op);
    TF_DeleteBuffer(b);
  }
  return op;
}

template <class K, class = void>
struct HasInit : std::false_type {};
template <class K>
struct HasInit<K, std::void_t<decltype(std::declval<K&>().Init(std::declval<const Attrs&>()))>>
    : std::true_type {};

template <class K>
struct Instance {
  K kernel;
  std::string op;
  std::string node;  // the node's name, for kernel traces
  std::atomic<uint64_t>* launches = nullptr;
};

inline void Fail(TF_OpKernelContext* c, const Status& st) {
  TFStatusPtr s = NewTFStatus();
  st.ToTF(s.get());
  TF_OpKernelContext_Failure(c, s.get());
}

template <class K>
void* CreateTrampoline(TF_OpKernelConstruction* c) {
  Instance<K>* inst = nullptr;
  Status st = GuardedCall("kernel construction", [&]() -> Status {
    auto owned = std::make_unique<Instance<K>>();
    owned->op = OpTypeOf(c);
    const TF_StringView name = TF_OpKernelConstruction_GetName(c);
    owned->node.assign(name.data, name.len);
    owned->launches = LaunchStats::Global().CounterFor(owned->op);
    if constexpr (HasInit<K>::value) {
      Status init = owned->kernel.Init(Attrs(c));
      // The kernel's message first (TensorFlow's wording, which users'
      // code matches on), then the op if the message does not name it.
      if (!init.ok())
        return init.message().find(owned->op) == std::string::npos
                   ? Status(init.code(), init.message() + " (op " + owned->op + ")")
                   : init;
    }
    inst = owned.release();
    return Status::OK();
  });
  if (!st.ok()) {
    TFStatusPtr s = NewTFStatus();
    st.ToTF(s.get());
    TF_OpKernelConstruction_Failure(c, s.get());
    return nullptr;
  }
  return inst;
}

template <class K>
void ComputeTrampoline(void* p, TF_OpKernelContext* c) {
  auto* inst = static_cast<Instance<K>*>(p);
  if (inst == nullptr) return Fail(c, Internal("kernel was not constructed"));
  inst->launches->fetch_add(1, std::memory_order_relaxed);
  const KernelTraceSink sink = KernelTraceSinkSlot().load(std::memory_order_acquire);
  const int64_t begin_ns = sink ? TraceClockNs() : 0;
  Context ctx(c, inst->op);
  Status st = GuardedCall(inst->op.c_str(), [&] { return inst->kernel.Compute(ctx); });
  if (sink)
    sink(KernelTrace{inst->op.c_str(), inst->node.c_str(), TF_GetDeviceId(c), begin_ns,
                     TraceClockNs(), st.ok(), ctx.allocated_bytes()});
  if (!st.ok()) Fail(c, st);
}

// compute_async_func of an Async kernel: on a launcher thread if the launcher
// takes the launch, else inline. The context stays valid until done runs.
template <class K>
void ComputeAsyncTrampoline(void* p, TF_OpKernelContext* c, TF_AsyncOpKernelDoneCallback* done) {
#if defined(__GLIBCXX__)
  const AsyncLauncher* launcher = AsyncLauncherSlot().load(std::memory_order_acquire);
  if (p != nullptr && launcher != nullptr && launcher->accept(c)) {
    launcher->launch([p, c, real_done = CopyDoneCallback(done)] {
      ComputeTrampoline<K>(p, c);
      real_done();
    });
    return;
  }
#endif
  ComputeTrampoline<K>(p, c);
  TF_RunAsyncOpKernelDoneCallback(done);
}

template <class K>
void DeleteTrampoline(void* p) {
  delete static_cast<Instance<K>*>(p);
}

}  // namespace internal

// ---------------------------------------------------------------- registration

// One (op, type constraints) pair that the plugin registers, as listed by
// `tensorflow_pdk.registered_kernels()`.
struct RegisteredKernel {
  std::string op;
  std::vector<std::pair<std::string, TF_DataType>> type_constraints;
  std::vector<std::string> host_memory;
  int priority = 0;
  // Also registered asynchronous, under kAsyncKernelLabel (KernelDef::Async
  // and a launcher installed).
  bool async = false;
};

// Describes one kernel builder: op name, type constraints, host-memory args.
template <class K>
class KernelDef {
 public:
  explicit KernelDef(std::string op) { info_.op = std::move(op); }

  // Constrains type attribute `attr` to C++ type T (checked at compile time).
  template <class T>
  KernelDef& Type(const char* attr) {
    info_.type_constraints.emplace_back(attr, kDataType<T>);
    return *this;
  }
  // Same, with the tag that ForEachType passes: `.Type("T", t)`. Chains inside
  // generic lambdas without the `.template` disambiguator.
  template <class T>
  KernelDef& Type(const char* attr, TypeTag<T>) {
    return Type<T>(attr);
  }
  // Declares input or output `arg` to live in host memory (shapes, axes).
  KernelDef& HostMemory(const char* arg) {
    info_.host_memory.emplace_back(arg);
    return *this;
  }
  KernelDef& Priority(int p) {
    info_.priority = p;
    return *this;
  }
  // Lets launches run off TensorFlow's executor thread (see "asynchronous
  // kernels" above) when `on` and a launcher is installed at registration:
  // the kernel is registered synchronous and, labeled kAsyncKernelLabel,
  // asynchronous; else only synchronous. For kernels whose work can be large
  // enough to pay for a hand-off (the launcher decides per launch).
  KernelDef& Async(bool on = true) {
    info_.async = on;
    return *this;
  }

  // Whether Register will also register the asynchronous twin.
  bool registers_async() const {
    return info_.async && kAsyncDoneCopy && AsyncLauncherSlot().load() != nullptr;
  }

  Status Register(const char* device_type) const {
    PDK_RETURN_IF_ERROR(RegisterOne(device_type, /*async=*/false));
    if (registers_async()) PDK_RETURN_IF_ERROR(RegisterOne(device_type, /*async=*/true));
    LaunchStats::Global().CounterFor(info_.op);
    return Status::OK();
  }
  const RegisteredKernel& info() const { return info_; }

 private:
  // One TensorFlow kernel registration: synchronous, or the asynchronous twin
  // under kAsyncKernelLabel.
  Status RegisterOne(const char* device_type, bool async) const {
    TF_KernelBuilder* b =
        async ? TF_NewAsyncKernelBuilder(info_.op.c_str(), device_type,
                                         &internal::CreateTrampoline<K>,
                                         &internal::ComputeAsyncTrampoline<K>,
                                         &internal::DeleteTrampoline<K>)
              : TF_NewKernelBuilder(info_.op.c_str(), device_type, &internal::CreateTrampoline<K>,
                                    &internal::ComputeTrampoline<K>,
                                    &internal::DeleteTrampoline<K>);
    TFStatusPtr s = NewTFStatus();
    for (const auto& [attr, dt] : info_.type_constraints) {
      TF_KernelBuilder_TypeConstraint(b, attr.c_str(), dt, s.get());
      if (TF_GetCode(s.get()) != TF_OK) {
        TF_DeleteKernelBuilder(b);
        return Status(TF_GetCode(s.get()), info_.op + ": " + TF_Message(s.get()));
      }
    }
    for (const auto& arg : info_.host_memory) TF_KernelBuilder_HostMemory(b, arg.c_str());
    if (info_.priority) TF_KernelBuilder_Priority(b, info_.priority);
    if (async) TF_KernelBuilder_Label(b, kAsyncKernelLabel);
    // TF_RegisterKernelBuilder takes ownership of the builder.
    const std::string name =
        info_.op + "_" + device_type + (async ? std::string("_") + kAsyncKernelLabel : "");
    TF_RegisterKernelBuilder(name.c_str(), b, s.get());
    if (TF_GetCode(s.get()) != TF_OK)
      return Status(TF_GetCode(s.get()), info_.op + ": " + TF_Message(s.get()));
    return Status::OK();
  }

  RegisteredKernel info_;
};

// Collects registrations during replay; keeps the first error.
class Registrar {
 public:
  explicit Registrar(const char* device_type) : device_type_(device_type) {}
  // The device type every kernel added here is registered for.
  const char* device_type() const { return device_type_; }
  template <class K>
  void Add(const KernelDef<K>& def) {
    if (!status_.ok()) return;
    status_ = def.Register(device_type_);
    if (!status_.ok()) return;
    registered_.push_back(def.info());
    registered_.back().async = def.registers_async();
  }
  const Status& status() const { return status_; }
  std::vector<RegisteredKernel>& registered() { return registered_; }

 private:
  const char* device_type_;
  Status status_;
  std::vector<RegisteredKernel> registered_;
};

// Whether the host can read and write the memory of the device a plugin's
// kernels are registered for (RegisterAll). kHostAddressable: TensorFlow's
// device addresses are host pointers (PDK's device, a CPU-backed device, CUDA
// unified memory); kernels use Tensor::flat<T>() and friends on every tensor.
// kDeviceOnly: a device address is an opaque handle (OpenCL or Vulkan buffers,
// device memory proper); the TF-style layer then marks every tensor not in a
// HostMemory argument as device memory, and a host view of one
// (Tensor::flat<T>(), tensor_data(), ...) is an Internal error of the launch
// instead of a read of a bad address. Kernels hand such tensors to their device
// with AsDeviceMemory(tensor) (pdk/tf/tensor.h) on the launch's stream
// (OpKernelContext::op_device_context()->stream()).
enum class DeviceMemoryAccess { kHostAddressable, kDeviceOnly };

// The deferred registration list: file-level PDK_REGISTER_KERNELS blocks append
// here during static initialization; `RegisterAll` replays them (TF_InitKernel).
class KernelRegistry {
 public:
  using Fn = void (*)(Registrar&);
  static KernelRegistry& Global() {
    static KernelRegistry* g = new KernelRegistry;
    return *g;
  }
  bool Add(const char* name, Fn fn) {
    fns_.emplace_back(name, fn);
    return true;
  }
  // Registers every kernel for `device_type`. Idempotent: a second call (the
  // plugin loaded again under another path) registers nothing and returns OK.
  // `access` says whether the host can read the device's memory (above); one
  // plugin library registers its kernels for one device type.
  Status RegisterAll(const char* device_type,
                     DeviceMemoryAccess access = DeviceMemoryAccess::kHostAddressable) {
    std::lock_guard<std::mutex> l(mu_);
    if (done_) return Status::OK();
    device_only_.store(access == DeviceMemoryAccess::kDeviceOnly, std::memory_order_relaxed);
    Registrar r(device_type);
    for (auto& [name, fn] : fns_) {
      Status st = GuardedCall(name, [&] {
        fn(r);
        return Status::OK();
      });
      if (!st.ok()) return st;
      if (!r.status().ok()) return r.status();
    }
    registered_ = std::move(r.registered());
    done_ = true;
    return Status::OK();
  }
  const std::vector<RegisteredKernel>& registered() const { return registered_; }
  // True if RegisterAll was told the device's memory is kDeviceOnly.
  bool device_memory_only() const { return device_only_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> device_only_{false};
  std::mutex mu_;
  bool done_ = false;
  std::vector<std::pair<const char*, Fn>> fns_;
  std::vector<RegisteredKernel> registered_;
};

}  // namespace pdk

// Defines a deferred registration block: `PDK_REGISTER_KERNELS(Name, r) { r.Add(...); }`.
#define PDK_REGISTER_KERNELS(NAME, R)                                                      \
  static void KitRegister_##NAME(::pdk::Registrar& R);                                     \
  [[maybe_unused]] static const bool kit_registered_##NAME =                              \
      ::pdk::KernelRegistry::Global().Add(#NAME, &KitRegister_##NAME);                     \
  static void KitRegister_##NAME(::pdk::Registrar& R)

#endif  // PDK_KERNEL_H_
