// Scatters (src/kernels/array_scatter.cc): TensorFlow's ScatterNd,
// TensorScatterAdd / Update and UnsortedSegmentSum on the device.
//
// The output is viewed as [d_0 .. d_K-1, slice]; update element i (of
// [M, slice]) goes to row idx[m, 0..K) (row-major over d), column i % slice:
//   array_scatter_add_f32_*: out[row, r] += upd[i] (a compare-and-swap loop:
//     OpenCL 1.2 has no float atomic add; the order of the adds is not fixed)
//   array_scatter_set_*:     out[row, r] = upd[i] (duplicates: one of them)
// An index outside its dim is skipped, as TensorFlow's GPU kernels do
// (UnsortedSegmentSum: a negative or too large segment id is dropped).

inline void pdk_array_atomic_add_f32(volatile __global float* p, const float v) {
  union {
    uint u;
    float f;
  } a, b;
  do {
    a.f = *p;
    b.f = a.f + v;
  } while (atomic_cmpxchg((volatile __global uint*)p, a.u, b.u) != a.u);
}

// `row` = the output row of update row m, or return when out of range.
#define PDK_SCATTER_ROW(row, m)                         \
  long d_[8];                                           \
  vstore8(odims, 0, d_);                                \
  long row = 0;                                         \
  for (int j = 0; j < K; ++j) {                         \
    const long v = (long)PTR(idx)[(m) * K + j];         \
    if (v < 0 || v >= d_[j]) return;                    \
    row = row * d_[j] + v;                              \
  }

#define PDK_ARRAY_SCATTER_SET(T, SUF, I, ISUF)                                               \
  __kernel void array_scatter_set_##SUF##_##ISUF(TENSOR(const T, upd), TENSOR(const I, idx), \
                                                 TENSOR(T, out), const long n, const int K,  \
                                                 const long8 odims, const long slice) {      \
    INDEX_OR_RETURN(i, n);                                                                   \
    PDK_SCATTER_ROW(row, i / slice);                                                         \
    PTR(out)[row * slice + i % slice] = PTR(upd)[i];                                         \
  }

#define PDK_ARRAY_SCATTER(I, ISUF)                                                            \
  __kernel void array_scatter_add_f32_##ISUF(TENSOR(const float, upd), TENSOR(const I, idx), \
                                             TENSOR(float, out), const long n, const int K,  \
                                             const long8 odims, const long slice) {          \
    INDEX_OR_RETURN(i, n);                                                                   \
    PDK_SCATTER_ROW(row, i / slice);                                                         \
    pdk_array_atomic_add_f32(PTR(out) + row * slice + i % slice, PTR(upd)[i]);               \
  }                                                                                          \
  PDK_ARRAY_SCATTER_SET(uchar, u8, I, ISUF)                                                  \
  PDK_ARRAY_SCATTER_SET(uint, u32, I, ISUF)                                                  \
  PDK_ARRAY_SCATTER_SET(ulong, u64, I, ISUF)

PDK_ARRAY_SCATTER(int, i32)
PDK_ARRAY_SCATTER(long, i64)
