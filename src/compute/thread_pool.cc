#include "compute/thread_pool.h"

#include <algorithm>
#include <thread>

#include "pdk/env.h"

#include <sched.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "compute/eigen.h"

namespace pdk_compute {
namespace {

// Physical cores among the CPUs in this process's affinity mask, from
// /sys/devices/system/cpu/cpuN/topology/{physical_package_id,core_id}.
int PhysicalCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  std::set<std::pair<int, int>> cores;
  int logical = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    ++logical;
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    int pkg = 0, core = cpu;
    std::ifstream(base + "physical_package_id") >> pkg;
    std::ifstream(base + "core_id") >> core;
    cores.emplace(pkg, core);
  }
  const int n = static_cast<int>(cores.size());
  return n > 0 ? n : (logical > 0 ? logical : 1);
}

struct Pool {
  std::unique_ptr<Eigen::ThreadPool> pool;
  std::unique_ptr<Eigen::ThreadPoolDevice> device;
};

constexpr int kMaxDevices = 64;
std::array<std::once_flag, kMaxDevices> g_once;
std::array<Pool, kMaxDevices> g_pools;

}  // namespace

int NumThreads() {
  static const int n = [] {
    // 0: one per physical core. At most 4 threads per hardware thread: more
    // only costs memory and start-up time (PDK_NUM_THREADS=100000 used to
    // hang the first op creating the pool).
    const int64_t cap = 4 * std::max(1u, std::thread::hardware_concurrency());
    const int64_t env = pdk::env::Int("PDK_NUM_THREADS", 0, 0, cap);
    return env >= 1 ? static_cast<int>(env) : PhysicalCores();
  }();
  return n;
}

const Eigen::ThreadPoolDevice& EigenDevice(int device_id) {
  const int id = (device_id >= 0 && device_id < kMaxDevices) ? device_id : 0;
  std::call_once(g_once[id], [id] {
    g_pools[id].pool = std::make_unique<Eigen::ThreadPool>(NumThreads());
    g_pools[id].device =
        std::make_unique<Eigen::ThreadPoolDevice>(g_pools[id].pool.get(), NumThreads());
  });
  return *g_pools[id].device;
}

}  // namespace pdk_compute
