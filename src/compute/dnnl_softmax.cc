// oneDNN softmax for softmax.cc (dnnl_softmax.h). Primitives are created once
// per (rows, classes) and thread and kept in a small per-thread cache,
// as dnnl_gemm.cc does (creation costs tens of microseconds; the shards of
// one kernel have at most two row counts).
#include "compute/dnnl_softmax.h"

#include <vector>

#include "compute/dnnl_api.h"
#include "compute/dnnl_common.h"

namespace pdk_compute {
namespace {

struct Entry {
  int64_t rows = 0, classes = 0;
  dnnl_primitive_t prim = nullptr;  // null: oneDNN refused this shape (remembered)
  dnnl_memory_t src = nullptr, dst = nullptr;
};

void Destroy(Entry& e) {
  if (e.prim) dnnl_primitive_destroy(e.prim);
  if (e.src) dnnl_memory_destroy(e.src);
  if (e.dst) dnnl_memory_destroy(e.dst);
  e = Entry{};
}

Entry Create(int64_t rows, int64_t classes) {
  Entry e;
  e.rows = rows;
  e.classes = classes;
  dnnl_engine_t eng = DnnlEngine();
  DnnlMd md;
  const dnnl_dims_t dims = {rows, classes};
  dnnl_primitive_desc_t pd = nullptr;
  if (eng == nullptr || md.InitTag(2, dims, dnnl_f32, dnnl_ab) != dnnl_success ||
      DnnlSoftmaxPd(&pd, eng, md.get(), 1) != dnnl_success)
    return e;
  const bool ok = dnnl_primitive_create(&e.prim, pd) == dnnl_success &&
                  dnnl_memory_create(&e.src, md.get(), eng, DNNL_MEMORY_NONE) == dnnl_success &&
                  dnnl_memory_create(&e.dst, md.get(), eng, DNNL_MEMORY_NONE) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
  if (!ok) {
    Destroy(e);
    e.rows = rows;
    e.classes = classes;
  }
  return e;
}

class ThreadState {
 public:
  ~ThreadState() {
    for (auto& e : cache_) Destroy(e);
  }
  dnnl_stream_t stream() const { return stream_.get(); }

  const Entry& Get(int64_t rows, int64_t classes) {
    for (const auto& e : cache_)
      if (e.rows == rows && e.classes == classes) return e;
    if (cache_.size() >= kCapacity) {  // evict the oldest
      Destroy(cache_.front());
      cache_.erase(cache_.begin());
    }
    cache_.push_back(Create(rows, classes));
    return cache_.back();
  }

 private:
  static constexpr size_t kCapacity = 16;
  DnnlThreadStream stream_;
  std::vector<Entry> cache_;
};

}  // namespace

bool SoftmaxRowsDnnl(int64_t rows, int64_t classes, const float* in, float* out) {
  thread_local ThreadState state;
  if (state.stream() == nullptr || rows <= 0 || classes <= 0) return false;
  const Entry& e = state.Get(rows, classes);
  if (e.prim == nullptr ||
      dnnl_memory_set_data_handle(e.src, const_cast<float*>(in)) != dnnl_success ||
      dnnl_memory_set_data_handle(e.dst, out) != dnnl_success)
    return false;
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, e.src}, {DNNL_ARG_DST, e.dst}};
  return dnnl_primitive_execute(e.prim, state.stream(), 2, args) == dnnl_success &&
         dnnl_stream_wait(state.stream()) == dnnl_success;
}

}  // namespace pdk_compute
