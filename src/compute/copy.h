// Strided byte copies split over a device's thread pool: the shared engine of
// the dtype-agnostic data-movement kernels (ConcatV2, Pack, Unpack).
#ifndef PDK_SRC_COMPUTE_COPY_H_
#define PDK_SRC_COMPUTE_COPY_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "compute/eigen.h"
#include "compute/parallel_for.h"

namespace pdk_compute {

// One strided byte stream: `rows` times, copy `bytes` from src + r*src_stride
// to dst + r*dst_stride.
struct Stream {
  char* dst;
  int64_t dst_stride;
  const char* src;
  int64_t src_stride;
  int64_t bytes;
};

// Runs every stream for rows [0, rows) on the thread pool: by row when there
// are many rows, else by blocks of at most kBlock bytes.
inline void CopyStreams(const Eigen::ThreadPoolDevice& dev, int64_t rows,
                 const std::vector<Stream>& streams) {
  constexpr int64_t kBlock = 64 << 10;
  int64_t row_bytes = 0;
  for (const Stream& s : streams) row_bytes += s.bytes;
  if (rows == 0 || row_bytes == 0) return;
  auto copy_rows = [&](Eigen::Index first, Eigen::Index last) {
    for (Eigen::Index r = first; r < last; ++r)
      for (const Stream& s : streams)
        if (s.bytes) std::memcpy(s.dst + r * s.dst_stride, s.src + r * s.src_stride, s.bytes);
  };
  if (rows * row_bytes <= kBlock) return copy_rows(0, rows);
  if (rows >= 4 * dev.numThreads()) {
    pdk_compute::ParallelFor(dev, rows, Eigen::TensorOpCost(row_bytes, row_bytes, 0), copy_rows);
    return;
  }
  struct Task {
    char* dst;
    const char* src;
    int64_t n;
  };
  std::vector<Task> tasks;
  for (int64_t r = 0; r < rows; ++r)
    for (const Stream& s : streams)
      for (int64_t off = 0; off < s.bytes; off += kBlock)
        tasks.push_back({s.dst + r * s.dst_stride + off, s.src + r * s.src_stride + off,
                         std::min(kBlock, s.bytes - off)});
  pdk_compute::ParallelFor(dev, static_cast<Eigen::Index>(tasks.size()),
                           Eigen::TensorOpCost(kBlock, kBlock, 0),
                           [&](Eigen::Index first, Eigen::Index last) {
                             for (Eigen::Index i = first; i < last; ++i)
                               std::memcpy(tasks[i].dst, tasks[i].src, tasks[i].n);
                           });
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_COPY_H_
