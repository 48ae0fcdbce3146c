#include "compute/thread_pool.h"

#include <algorithm>
#include <cstdint>
#include <thread>

#include "pdk/eigen.h"
#include "pdk/env.h"

namespace pdk_compute {

int NumThreads() {
  static const int n = [] {
    // Default: one per physical core. At most 4 threads per hardware thread:
    // more only costs memory and start-up time (PDK_NUM_THREADS=100000 used
    // to hang the first op creating the pool).
    const int64_t cap = 4 * std::max(1u, std::thread::hardware_concurrency());
    return static_cast<int>(pdk::env::Int("PDK_NUM_THREADS", pdk::PhysicalCores(), 1, cap,
                                          {"", "4 per hardware thread"}));
  }();
  return n;
}

}  // namespace pdk_compute
