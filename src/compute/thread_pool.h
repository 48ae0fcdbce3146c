// The size of the device-owned thread pools that kernels parallelize over.
//
// One Eigen::ThreadPool per PDK device (the kit's pdk::DeviceEigen,
// include/pdk/eigen.h), created on first use, sized to the host's physical
// cores or PDK_NUM_THREADS; TF_InitKernel sets the size before any kernel
// runs. Kernels run on the thread that TensorFlow calls them on and split work
// over this pool (DESIGN.md, "Execution model").
#ifndef PDK_SRC_COMPUTE_THREAD_POOL_H_
#define PDK_SRC_COMPUTE_THREAD_POOL_H_

namespace pdk_compute {

// Threads per device pool: PDK_NUM_THREADS if set (>= 1), else the number of
// physical cores this process may run on.
int NumThreads();

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_THREAD_POOL_H_
