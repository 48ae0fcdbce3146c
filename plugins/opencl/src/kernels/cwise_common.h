// Shared by the cwise kernels (cwise_*.cc): numpy/TensorFlow broadcasting of
// up to 3 operands into an OpenCL long8 view (dims and per-operand element
// strides, a broadcast dimension having stride 0), collapsed so that
// contiguous runs of dimensions become one.
//
// Rules (TensorFlow's BCast): shapes are right-aligned; in each dimension the
// sizes are equal or 1 (a 1 broadcasts to any size, 0 included).
#ifndef PDK_OPENCL_KERNELS_CWISE_COMMON_H_
#define PDK_OPENCL_KERNELS_CWISE_COMMON_H_

#include <cstdint>
#include <vector>

#include "launch.h"

namespace pdk_opencl {
namespace cwise {

constexpr int kMaxOperands = 3;
constexpr int kMaxRank = 8;

struct Broadcast {
  bool valid = false;
  std::vector<int64_t> out_shape;  // the output's full shape
  // The collapsed view, right-aligned in 8 slots (leading slots: dim 1, stride 0).
  int rank = 0;                                 // collapsed rank (dims != 1)
  int64_t dims[kMaxRank] = {1, 1, 1, 1, 1, 1, 1, 1};
  int64_t strides[kMaxOperands][kMaxRank] = {};
  // True if the collapsed view has rank <= 1: operand k is then read at
  // i * flat_step[k] (0 for a broadcast scalar, 1 otherwise).
  bool flat = false;
  int64_t flat_step[kMaxOperands] = {};
};

// Broadcasts `shapes` (1 to 3). Invalid shapes: valid == false. A collapsed
// rank past 8: valid, rank > 8 (the caller reports Unimplemented as TF does).
inline Broadcast MakeBroadcast(const std::vector<const tensorflow::TensorShape*>& shapes) {
  Broadcast b;
  const int n = static_cast<int>(shapes.size());
  int r = 0;
  for (const auto* s : shapes) r = std::max(r, s->dims());
  std::vector<std::vector<int64_t>> padded(n, std::vector<int64_t>(r, 1));
  for (int k = 0; k < n; ++k)
    for (int d = 0; d < shapes[k]->dims(); ++d)
      padded[k][r - shapes[k]->dims() + d] = shapes[k]->dim_size(d);
  b.out_shape.assign(r, 1);
  for (int d = 0; d < r; ++d) {
    int64_t size = 1;
    for (int k = 0; k < n; ++k) {
      const int64_t v = padded[k][d];
      if (v == 1) continue;
      if (size != 1 && size != v) return b;  // invalid
      size = v;
    }
    b.out_shape[d] = size;
  }
  b.valid = true;
  // Contiguous strides of each padded operand; 0 where it broadcasts.
  std::vector<std::vector<int64_t>> str(n, std::vector<int64_t>(r, 0));
  for (int k = 0; k < n; ++k) {
    int64_t s = 1;
    for (int d = r - 1; d >= 0; --d) {
      str[k][d] = padded[k][d] == 1 ? 0 : s;
      s *= padded[k][d];
    }
  }
  // Collapse: drop size-1 output dims, merge a dim into the next inner one
  // when every operand continues contiguously.
  std::vector<int64_t> cd;
  std::vector<std::vector<int64_t>> cs(n);
  for (int d = 0; d < r; ++d) {
    if (b.out_shape[d] == 1) continue;
    if (!cd.empty()) {
      bool merge = true;
      for (int k = 0; k < n; ++k)
        if (cs[k].back() != str[k][d] * b.out_shape[d]) merge = false;
      if (merge) {
        cd.back() *= b.out_shape[d];
        for (int k = 0; k < n; ++k) cs[k].back() = str[k][d];
        continue;
      }
    }
    cd.push_back(b.out_shape[d]);
    for (int k = 0; k < n; ++k) cs[k].push_back(str[k][d]);
  }
  b.rank = static_cast<int>(cd.size());
  if (b.rank > kMaxRank) return b;
  for (int i = 0; i < b.rank; ++i) {
    b.dims[kMaxRank - b.rank + i] = cd[i];
    for (int k = 0; k < n; ++k) b.strides[k][kMaxRank - b.rank + i] = cs[k][i];
  }
  if (b.rank <= 1) {
    b.flat = true;
    for (int k = 0; k < n; ++k) b.flat_step[k] = b.rank == 0 ? 0 : cs[k][0];
  }
  return b;
}

// The strided kernels' launch (cl/cwise_binary.cl: CW_CHUNK elements of an
// innermost row per work-item): rows, inner, chunks; work-items = rows * chunks.
constexpr int64_t kChunk = 64;
struct RowLaunch {
  int64_t rows = 0, inner = 0, chunks = 0;
  int64_t items() const { return rows * chunks; }
};
inline RowLaunch RowsOf(const Broadcast& b) {
  RowLaunch r;
  r.inner = b.dims[kMaxRank - 1];
  r.rows = 1;
  for (int i = 0; i < kMaxRank - 1; ++i) r.rows *= b.dims[i];
  r.chunks = (r.inner + kChunk - 1) / kChunk;
  return r;
}

// "[2,3]" of a shape vector.
inline std::string ShapeString(const std::vector<int64_t>& s) {
  return tensorflow::TensorShape(s).DebugString();
}

}  // namespace cwise
}  // namespace pdk_opencl

// Registers the cwise kernel CLASS for op OP and dtype T (cwise_*.cc).
#define CW_REGISTER(OP, T, CLASS) \
  REGISTER_KERNEL_BUILDER(Name(OP).Device(DEVICE_OPENCL).TypeConstraint<T>("T"), CLASS);

#endif  // PDK_OPENCL_KERNELS_CWISE_COMMON_H_
