// pdk/eigen.h — Eigen for kernels: the 16-bit float dtypes and the device's
// thread pools.
//
// Eigen (https://eigen.tuxfamily.org) ships in TensorFlow's include directory
// (the revision TensorFlow's own CPU kernels are compiled with), so a plugin
// built against the kit needs nothing beyond TensorFlow's headers.
//
//   pdk::DataTypeOf<Eigen::half>      -> TF_HALF
//   pdk::DataTypeOf<Eigen::bfloat16>  -> TF_BFLOAT16
//   pdk::DeviceEigen(device_id)       -> the Eigen::ThreadPoolDevice of device
//                                        `device_id` (TF_GetDeviceId), one pool
//                                        per device, created on first use
//   pdk::SetThreadsPerDevice(n)       -> pool size for pools created later
//                                        (default: physical cores available)
//
// The pools live in the plugin that includes this header (one set per shared
// library, hidden like every kit symbol), so two plugins in one process each
// have their own.
#ifndef PDK_EIGEN_H_
#define PDK_EIGEN_H_

#include <sched.h>

#include <array>
#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include <unsupported/Eigen/CXX11/Tensor>

#include "pdk/types.h"

namespace pdk {

template <> struct DataTypeOf<Eigen::half> { static constexpr TF_DataType value = TF_HALF; };
template <> struct DataTypeOf<Eigen::bfloat16> { static constexpr TF_DataType value = TF_BFLOAT16; };

// Physical cores among the CPUs in this process's affinity mask, from
// /sys/devices/system/cpu/cpuN/topology/{physical_package_id,core_id}; the
// logical CPU count where the topology is not readable; at least 1.
inline int PhysicalCores() {
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

namespace internal {
inline std::atomic<int>& ThreadsPerDeviceSlot() {
  static std::atomic<int> n{0};  // 0: PhysicalCores()
  return n;
}
}  // namespace internal

// Threads of each device pool created from now on (n >= 1; other values
// restore the default, the physical cores). A plugin sets it once, before its
// first kernel runs (PDK: PDK_NUM_THREADS, in TF_InitKernel).
inline void SetThreadsPerDevice(int n) { internal::ThreadsPerDeviceSlot().store(n >= 1 ? n : 0); }
inline int ThreadsPerDevice() {
  const int n = internal::ThreadsPerDeviceSlot().load();
  return n >= 1 ? n : PhysicalCores();
}

// Device ordinals with a pool of their own; a larger ordinal shares pool 0.
inline constexpr int kMaxPoolDevices = 64;

// The Eigen thread-pool device of device `device_id` (TF_GetDeviceId of the
// kernel's context). Thread-safe; the pool lives until the process exits.
inline const Eigen::ThreadPoolDevice& DeviceEigen(int device_id) {
  struct Pool {
    std::once_flag once;
    std::unique_ptr<Eigen::ThreadPool> pool;
    std::unique_ptr<Eigen::ThreadPoolDevice> device;
  };
  static std::array<Pool, kMaxPoolDevices>* pools = new std::array<Pool, kMaxPoolDevices>;
  Pool& p = (*pools)[(device_id >= 0 && device_id < kMaxPoolDevices) ? device_id : 0];
  std::call_once(p.once, [&p] {
    const int n = ThreadsPerDevice();
    p.pool = std::make_unique<Eigen::ThreadPool>(n);
    p.device = std::make_unique<Eigen::ThreadPoolDevice>(p.pool.get(), n);
  });
  return *p.device;
}

}  // namespace pdk

#endif  // PDK_EIGEN_H_
