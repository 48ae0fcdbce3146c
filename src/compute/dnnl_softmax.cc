// oneDNN softmax for softmax.cc (dnnl_softmax.h). Primitives are created once
// per (rows, classes) and thread and kept in the thread's DnnlThreadCache
// (dnnl_common.h; the pieces of one kernel have at most two row counts).
#include "compute/dnnl_softmax.h"


#include "compute/dnnl_api.h"
#include "compute/dnnl_common.h"

namespace pdk_compute {
namespace {

struct Shape {
  int64_t rows, classes;
  bool operator==(const Shape& o) const { return rows == o.rows && classes == o.classes; }
};

struct Entry {
  dnnl_primitive_t prim = nullptr;  // null: oneDNN refused this shape (remembered)
  dnnl_memory_t src = nullptr, dst = nullptr;
};

void Destroy(Entry& e) {
  if (e.prim) dnnl_primitive_destroy(e.prim);
  if (e.src) dnnl_memory_destroy(e.src);
  if (e.dst) dnnl_memory_destroy(e.dst);
  e = Entry{};
}

// Always true: a shape oneDNN refuses is cached with a null primitive, so the
// caller's own code takes it without asking oneDNN again.
bool Create(const Shape& s, Entry* out) {
  Entry e;
  dnnl_engine_t eng = DnnlEngine();
  DnnlMd md;
  const dnnl_dims_t dims = {s.rows, s.classes};
  dnnl_primitive_desc_t pd = nullptr;
  if (eng == nullptr || md.InitTag(2, dims, dnnl_f32, dnnl_ab) != dnnl_success ||
      DnnlSoftmaxPd(&pd, eng, md.get(), 1) != dnnl_success) {
    *out = e;
    return true;
  }
  const bool ok = dnnl_primitive_create(&e.prim, pd) == dnnl_success &&
                  dnnl_memory_create(&e.src, md.get(), eng, DNNL_MEMORY_NONE) == dnnl_success &&
                  dnnl_memory_create(&e.dst, md.get(), eng, DNNL_MEMORY_NONE) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
  if (!ok) Destroy(e);
  *out = e;
  return true;
}

}  // namespace

bool SoftmaxRowsDnnl(int64_t rows, int64_t classes, const float* in, float* out) {
  thread_local DnnlThreadCache<Shape, Entry, 16> state(Create, Destroy);
  if (state.stream() == nullptr || rows <= 0 || classes <= 0) return false;
  const Entry* e = state.Get(Shape{rows, classes});
  if (e == nullptr || e->prim == nullptr ||
      dnnl_memory_set_data_handle(e->src, const_cast<float*>(in)) != dnnl_success ||
      dnnl_memory_set_data_handle(e->dst, out) != dnnl_success)
    return false;
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, e->src}, {DNNL_ARG_DST, e->dst}};
  return dnnl_primitive_execute(e->prim, state.stream(), 2, args) == dnnl_success &&
         dnnl_stream_wait(state.stream()) == dnnl_success;
}

}  // namespace pdk_compute
