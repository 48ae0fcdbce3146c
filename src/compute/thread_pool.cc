#include "compute/thread_pool.h"

#include <algorithm>
#include <cstdint>
#include <thread>

#include "pdk/eigen.h"
#include "pdk/env.h"

namespace pdk_compute {

int NumThreads() {
  static const int n = [] {
    // 0: one per physical core. At most 4 threads per hardware thread: more
    // only costs memory and start-up time (PDK_NUM_THREADS=100000 used to
    // hang the first op creating the pool).
    const int64_t cap = 4 * std::max(1u, std::thread::hardware_concurrency());
    const int64_t env = pdk::env::Int("PDK_NUM_THREADS", 0, 0, cap);
    return env >= 1 ? static_cast<int>(env) : pdk::PhysicalCores();
  }();
  return n;
}

}  // namespace pdk_compute
