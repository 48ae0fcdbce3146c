// What PDK's oneDNN users share (dnnl_gemm.cc, dnnl_conv.cc): the CPU engine
// and a per-thread stream. Only oneDNN's C API is used: TensorFlow's
// libtensorflow_cc exports weak symbols of its own oneDNN's C++ classes but no
// dnnl_* C functions, so these calls reach the oneDNN PDK is linked with. The
// code builds against oneDNN 2.x and 3.x (compute/dnnl_api.h holds the
// differences); the shipped one is Debian's libdnnl 2.x (2.6, OpenMP runtime;
// docs/architecture.md).
#ifndef PDK_SRC_COMPUTE_DNNL_COMMON_H_
#define PDK_SRC_COMPUTE_DNNL_COMMON_H_

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace pdk_compute {

// The process's oneDNN CPU engine, created on first use; nullptr if oneDNN
// cannot create one (callers then fall back to their own code).
inline dnnl_engine_t DnnlEngine() {
  static dnnl_engine_t engine = [] {
    dnnl_engine_t e = nullptr;
    if (dnnl_engine_create(&e, dnnl_cpu, 0) != dnnl_success) e = nullptr;
    return e;
  }();
  return engine;
}

// A oneDNN stream owned by the thread that creates it (one per thread, held
// in a thread_local). Creating it also sets that thread's OpenMP team size to
// 1 (omp_set_num_threads acts on the calling thread's own nthreads-var): PDK
// splits work over its device pool and oneDNN computes on the calling thread
// unless a caller asks for a team explicitly. get() is nullptr on failure.
class DnnlThreadStream {
 public:
  DnnlThreadStream() {
    omp_set_num_threads(1);
    if (DnnlEngine() &&
        dnnl_stream_create(&stream_, DnnlEngine(), dnnl_stream_default_flags) != dnnl_success)
      stream_ = nullptr;
  }
  ~DnnlThreadStream() {
    if (stream_) dnnl_stream_destroy(stream_);
  }
  DnnlThreadStream(const DnnlThreadStream&) = delete;
  DnnlThreadStream& operator=(const DnnlThreadStream&) = delete;
  dnnl_stream_t get() const { return stream_; }

 private:
  dnnl_stream_t stream_ = nullptr;
};

// A thread's oneDNN stream and the primitives it created most recently, for
// callers that keep one instance per thread (a thread_local): oneDNN's
// primitive creation costs tens of microseconds, and its own primitive cache
// still needs a primitive descriptor per call. Get(key) returns the entry
// create(key, &entry) made for `key` (on the first call for it), or nullptr
// if create returned false (not cached: the next call tries again); past
// kCapacity entries the oldest is destroyed (destroy(entry)). Entries stay at
// their address until evicted. Key needs operator==.
template <class Key, class Entry, size_t kCapacity>
class DnnlThreadCache {
 public:
  using CreateFn = bool (*)(const Key&, Entry*);
  using DestroyFn = void (*)(Entry&);
  DnnlThreadCache(CreateFn create, DestroyFn destroy) : create_(create), destroy_(destroy) {
    cache_.reserve(kCapacity);
  }
  ~DnnlThreadCache() {
    for (auto& kv : cache_) destroy_(kv.second);  // before the stream
  }
  DnnlThreadCache(const DnnlThreadCache&) = delete;
  DnnlThreadCache& operator=(const DnnlThreadCache&) = delete;

  dnnl_stream_t stream() const { return stream_.get(); }

  Entry* Get(const Key& key) {
    for (auto& kv : cache_)
      if (kv.first == key) return &kv.second;
    Entry e{};
    if (!create_(key, &e)) return nullptr;
    if (cache_.size() >= kCapacity) {  // evict the oldest
      destroy_(cache_.front().second);
      cache_.erase(cache_.begin());
    }
    cache_.emplace_back(key, e);
    return &cache_.back().second;
  }

 private:
  DnnlThreadStream stream_;
  std::vector<std::pair<Key, Entry>> cache_;
  const CreateFn create_;
  const DestroyFn destroy_;
};

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_DNNL_COMMON_H_
