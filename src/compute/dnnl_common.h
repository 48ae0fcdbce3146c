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

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_DNNL_COMMON_H_
