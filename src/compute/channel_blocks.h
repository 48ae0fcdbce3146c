// Work units of (image, channel block) for kernels whose writes within an
// image overlap across spatial positions (the gradients of pooling and
// resizing scatter into shared input pixels): units never write the same
// element, so they run in parallel on the device pool without atomics, and
// each element's sum is taken in the kernel's own sequential order.
#ifndef PDK_SRC_COMPUTE_CHANNEL_BLOCKS_H_
#define PDK_SRC_COMPUTE_CHANNEL_BLOCKS_H_

#include <algorithm>
#include <cstdint>

#include "compute/eigen.h"
#include "compute/parallel_for.h"

namespace pdk_compute {

// Calls fn(b, c0, c1) for every image b in [0, batch) and channel block
// [c0, c1) of [0, channels) on the pool. Whole images when there are at least
// two per pool thread (or 16 channels or fewer), else blocks of at least 16
// channels, about two per thread. `cost_per_channel`: the cost model's
// operations per image and channel.
template <class Fn>
void ForEachImageChannelBlock(const Eigen::ThreadPoolDevice& dev, int64_t batch,
                              int64_t channels, double cost_per_channel, const Fn& fn) {
  const int64_t threads = dev.numThreads();
  const int64_t block =
      (batch >= 2 * threads || channels <= 16)
          ? channels
          : std::max<int64_t>(16, (channels + 2 * threads - 1) / (2 * threads));
  const int64_t blocks = std::max<int64_t>(1, (channels + block - 1) / block);
  const double cost = cost_per_channel * double(block);
  pdk_compute::ParallelFor(dev, batch * blocks, Eigen::TensorOpCost(cost * 4, cost * 4, cost),
                           [&](Eigen::Index first, Eigen::Index last) {
                             for (Eigen::Index u = first; u < last; ++u) {
                               const int64_t b = u / blocks, c0 = (u % blocks) * block;
                               fn(b, c0, std::min(channels, c0 + block));
                             }
                           });
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_CHANNEL_BLOCKS_H_
