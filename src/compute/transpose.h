// Batched 2-D transpose on a device's thread pool: the Transpose kernel's
// fast path (src/kernels/array/transpose.cc) and the NHWC <-> NCHW layout
// swaps of the convolution kernels (src/kernels/nn/conv2d.cc).
#ifndef PDK_SRC_COMPUTE_TRANSPOSE_H_
#define PDK_SRC_COMPUTE_TRANSPOSE_H_

#include <algorithm>
#include <cstdint>

#include "compute/eigen.h"
#include "compute/parallel_for.h"

namespace pdk_compute {

// [batch, rows, cols] -> [batch, cols, rows]: blocks of kBlock x kBlock
// elements (kBlock * sizeof(U) = 512 bytes a row), each done as 8 x 8 micro
// tiles through a register-sized buffer; strips of kBlock rows are split over
// the thread pool. Covers 2-D transposes and the common layout swaps (NHWC <->
// NCHW, [0, 2, 1]) once simplified.
template <class U>
inline void BatchedTranspose2D(const Eigen::ThreadPoolDevice& dev, const U* src, U* dst,
                               int64_t batch, int64_t rows, int64_t cols) {
  constexpr int64_t kBlock = 512 / sizeof(U), kMicro = 8;
  const int64_t strips = (rows + kBlock - 1) / kBlock;
  const double strip_bytes = static_cast<double>(kBlock * cols * sizeof(U));
  pdk_compute::ParallelFor(dev, batch * strips, Eigen::TensorOpCost(strip_bytes, strip_bytes, 0),
                           [&](Eigen::Index first, Eigen::Index last) {
                             for (Eigen::Index u = first; u < last; ++u) {
                               const U* s = src + (u / strips) * rows * cols;
                               U* d = dst + (u / strips) * rows * cols;
                               const int64_t r0 = (u % strips) * kBlock,
                                             r1 = std::min(rows, r0 + kBlock);
                               for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
                                 const int64_t c1 = std::min(cols, c0 + kBlock);
                                 for (int64_t rm = r0; rm < r1; rm += kMicro)
                                   for (int64_t cm = c0; cm < c1; cm += kMicro) {
                                     if (rm + kMicro <= r1 && cm + kMicro <= c1) {
                                       U t[kMicro][kMicro];
                                       for (int i = 0; i < kMicro; ++i)
                                         for (int j = 0; j < kMicro; ++j)
                                           t[j][i] = s[(rm + i) * cols + cm + j];
                                       for (int j = 0; j < kMicro; ++j)
                                         for (int i = 0; i < kMicro; ++i)
                                           d[(cm + j) * rows + rm + i] = t[j][i];
                                     } else {
                                       for (int64_t r = rm; r < std::min(r1, rm + kMicro); ++r)
                                         for (int64_t c = cm; c < std::min(c1, cm + kMicro); ++c)
                                           d[c * rows + r] = s[r * cols + c];
                                     }
                                   }
                               }
                             }
                           });
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_TRANSPOSE_H_
