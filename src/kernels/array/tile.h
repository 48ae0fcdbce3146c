// Tile's shape rule and copy (tensorflow/core/ops/array_ops.cc, Tile: output
// dim i = input dim i * multiples[i]), shared by the Tile kernel (tile.cc) and
// _PdkFusedElementwise, which reads an absorbed Tile's input expanded and
// materializes the tile only where it cannot (src/kernels/math/
// fused_elementwise.cc).
//
//   TiledShape(op, in, m, &out): out = in * m per dimension; InvalidArgument
//     (naming `op`) when m's length is not in's rank or an m[i] is negative.
//   TileInto(dev, src, in, m, elem, dst): dst (in * m, row-major) = src (in,
//     row-major, `elem` bytes per element) repeated along each dimension.
//     Byte-level: each output row (last dim) is the matching input row
//     repeated, written by doubling memcpys; rows split over the device pool.
#ifndef PDK_SRC_KERNELS_ARRAY_TILE_H_
#define PDK_SRC_KERNELS_ARRAY_TILE_H_

#include <algorithm>
#include <cstring>
#include <vector>

#include "compute/parallel_for.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_kernels {

inline tensorflow::Status TiledShape(const char* op, const pdk::Shape& in,
                                     const std::vector<int64_t>& m, tensorflow::TensorShape* out) {
  const int rank = in.rank();
  if (static_cast<int>(m.size()) != rank)
    return tensorflow::errors::InvalidArgument(op, ": multiples must be a vector of length ", rank,
                                               " (the rank of input, shape ", in, "), got ",
                                               m.size(), " multiples");
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    if (m[i] < 0)
      return tensorflow::errors::InvalidArgument(op, ": multiples[", i,
                                                 "] must be non-negative, got ", m[i],
                                                 " (multiples ", pdk::Shape(m), ")");
    dims[i] = in[i] * m[i];
  }
  *out = tensorflow::TensorShape(dims);
  return tensorflow::OkStatus();
}

inline void TileInto(const Eigen::ThreadPoolDevice& dev, const void* src, const pdk::Shape& in,
                     const std::vector<int64_t>& m, int64_t elem, void* dst) {
  // Simplify: drop dims with in == m == 1, merge neighbours both with m == 1.
  std::vector<int64_t> d, mm;
  int64_t total = 1;
  for (int i = 0; i < in.rank(); ++i) {
    total *= in[i] * m[i];
    if (in[i] == 1 && m[i] == 1) continue;
    if (m[i] == 1 && !mm.empty() && mm.back() == 1) {
      d.back() *= in[i];
    } else {
      d.push_back(in[i]);
      mm.push_back(m[i]);
    }
  }
  if (total == 0) return;
  if (d.empty()) {  // one element
    std::memcpy(dst, src, static_cast<size_t>(elem));
    return;
  }
  const int r = static_cast<int>(d.size());
  const int64_t in_row = d[r - 1] * elem, out_row = in_row * mm[r - 1];
  std::vector<int64_t> in_rows_stride(r, 1), out_d(r);  // strides in rows, over dims < r-1
  for (int i = 0; i < r; ++i) out_d[i] = d[i] * mm[i];
  for (int i = r - 3; i >= 0; --i) in_rows_stride[i] = in_rows_stride[i + 1] * d[i + 1];
  int64_t rows = 1;
  for (int i = 0; i < r - 1; ++i) rows *= out_d[i];
  const char* s = static_cast<const char*>(src);
  char* o = static_cast<char*>(dst);
  pdk_compute::ParallelFor(dev, rows, Eigen::TensorOpCost(in_row, out_row, r),
                           [&](Eigen::Index first, Eigen::Index last) {
                             for (Eigen::Index q = first; q < last; ++q) {
                               int64_t rem = q, in_r = 0;
                               for (int i = r - 2; i >= 0; --i) {
                                 in_r += (rem % out_d[i]) % d[i] * in_rows_stride[i];
                                 rem /= out_d[i];
                               }
                               char* row = o + q * out_row;
                               std::memcpy(row, s + in_r * in_row, in_row);
                               for (int64_t done = in_row; done < out_row; done *= 2)
                                 std::memcpy(row + done, row, std::min(done, out_row - done));
                             }
                           });
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_ARRAY_TILE_H_
