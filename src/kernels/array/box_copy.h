// Byte-level copy of an N-D box between two row-major arrays: the shared
// engine of Slice, Pad/PadV2 and Split/SplitV.
//
// CopyBox copies the box of `size` elements per dimension starting at
// `src_begin` in an array of `src_dims` to `dst_begin` in an array of
// `dst_dims` (all of the same rank; a rank-0 box is one element). Trailing
// dimensions the box spans completely in both arrays are merged into one
// contiguous row; a box of one outer dimension goes to
// pdk_compute::CopyStreams, a deeper one is split by rows over the pool.
// The caller has checked the box lies within both arrays.
#ifndef PDK_SRC_KERNELS_ARRAY_BOX_COPY_H_
#define PDK_SRC_KERNELS_ARRAY_BOX_COPY_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "compute/copy.h"
#include "compute/eigen.h"
#include "compute/parallel_for.h"

namespace pdk_kernels {

inline void CopyBox(const Eigen::ThreadPoolDevice& dev, size_t elem, const char* src,
                    const std::vector<int64_t>& src_dims, const std::vector<int64_t>& src_begin,
                    char* dst, const std::vector<int64_t>& dst_dims,
                    const std::vector<int64_t>& dst_begin, const std::vector<int64_t>& size) {
  const int rank = static_cast<int>(size.size());
  for (int64_t s : size)
    if (s == 0) return;
  // c: the innermost dimension not spanned completely in both arrays (the
  // row's own dimension); everything after it is merged into the row.
  int c = rank - 1;
  int64_t inner = 1;  // elements per unit of dimension c
  while (c > 0 && size[c] == src_dims[c] && size[c] == dst_dims[c]) {
    inner *= size[c];
    --c;
  }
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  std::vector<int64_t> ss(rank, 1), ds(rank, 1);  // element strides
  for (int k = rank - 2; k >= 0; --k) {
    ss[k] = ss[k + 1] * src_dims[k + 1];
    ds[k] = ds[k + 1] * dst_dims[k + 1];
  }
  const int64_t row_bytes = size[c] * inner * static_cast<int64_t>(elem);
  int64_t src0 = 0, dst0 = 0;
  for (int k = 0; k < rank; ++k) {
    src0 += src_begin[k] * ss[k];
    dst0 += dst_begin[k] * ds[k];
  }
  src += src0 * static_cast<int64_t>(elem);
  dst += dst0 * static_cast<int64_t>(elem);
  if (c <= 1) {  // one outer dimension (or none): constant row strides
    const int64_t rows = c == 1 ? size[0] : 1;
    const int64_t sst = c == 1 ? ss[0] * static_cast<int64_t>(elem) : 0;
    const int64_t dst_st = c == 1 ? ds[0] * static_cast<int64_t>(elem) : 0;
    pdk_compute::CopyStreams(dev, rows, {{dst, dst_st, src, sst, row_bytes}});
    return;
  }
  int64_t rows = 1;
  for (int k = 0; k < c; ++k) rows *= size[k];
  auto copy_rows = [&](Eigen::Index first, Eigen::Index last) {
    for (Eigen::Index r = first; r < last; ++r) {
      int64_t rem = r, so = 0, doff = 0;
      for (int k = c - 1; k >= 0; --k) {
        const int64_t i = rem % size[k];
        rem /= size[k];
        so += i * ss[k];
        doff += i * ds[k];
      }
      std::memcpy(dst + doff * static_cast<int64_t>(elem), src + so * static_cast<int64_t>(elem),
                  row_bytes);
    }
  };
  if (rows * row_bytes <= (64 << 10)) return copy_rows(0, rows);
  pdk_compute::ParallelFor(dev, rows, Eigen::TensorOpCost(row_bytes, row_bytes, 2 * c), copy_rows);
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_ARRAY_BOX_COPY_H_
