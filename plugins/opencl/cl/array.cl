// Array ops' device kernels (src/kernels/array_*.cc): data movement only, so
// every kernel is instantiated per element SIZE (u8: bool; u32: float;
// u64: int64), not per dtype: the bits are copied unchanged.
//
// array_copy: the general strided copy behind Pack, Unpack, ConcatV2, Split,
//   SplitV, Slice, StridedSlice(Grad), Transpose, BroadcastTo, ReverseV2.
//   Work-item i is the i-th element (row-major) of a view of `rank` <= 8
//   dims; its coordinates c_k give
//     dst[doff + sum c_k * dstr_k] = src[soff + sum c_k * sstr_k]
//   (strides may be 0: broadcast; negative: reverse).
// array_copy2d: the same for rows of contiguous elements, a 2-D launch over
//   [row length, rows]: dst[doff + r * dpitch + c] = src[soff + r * spitch + c].
// array_transpose: batches of a matrix transposed through __local tiles:
//   src [B, d1, d0] -> dst [B, d0, d1], dst[b, i, j] = src[b, j, i]; one
//   work-group of TILE x TILE work-items per tile (group ids: tile0 fastest,
//   then tile1, then batch).
// array_tile: dst (row-major, dims) = src[sum (c_k % sdims_k) * sstr_k]
//   (TensorFlow's Tile: output dim k = input dim k * multiples[k]).
// array_band_part: TensorFlow's MatrixBandPart over [batch, rows, cols]:
//   y = x where (lower < 0 || r - c <= lower) && (upper < 0 || c - r <= upper),
//   else 0.
// array_gather: TensorFlow's GatherV2 over params viewed as [B, O, A, K] and
//   indices as [B, J]: out[b, o, j, k] = params[b, o, idx[b, j], k]; an index
//   outside [0, A) gives 0 (TensorFlow's GPU kernel; its CPU kernel raises).
// array_gather_nd: TensorFlow's GatherNd: indices viewed as [M, K], params as
//   [d_0 .. d_K-1, slice]: out[m, r] = params[idx[m, :], r]; 0 when an index
//   is outside its dim (TensorFlow's GPU kernel).
// array_one_hot: TensorFlow's OneHot over out viewed as [P, D, S]:
//   out[p, d, s] = idx[p, s] == d ? on : off.

// The side of array_transpose's square tiles (a work-group of its square).
#define PDK_ARRAY_TILE 16

// The dims / strides of a long8 as an array.
#define PDK_ARRAY_UNPACK8(v, a) \
  long a[8];                    \
  vstore8((v), 0, a);

#define PDK_ARRAY_KERNELS(T, SUF)                                                          \
  __kernel void array_copy_##SUF(TENSOR(const T, src), TENSOR(T, dst), const long n,       \
                                 const int rank, const long8 dims, const long8 sstr,      \
                                 const long soff, const long8 dstr, const long doff) {    \
    INDEX_OR_RETURN(i, n);                                                                 \
    PDK_ARRAY_UNPACK8(dims, d);                                                            \
    PDK_ARRAY_UNPACK8(sstr, s);                                                            \
    PDK_ARRAY_UNPACK8(dstr, t);                                                            \
    long r = i, si = soff, di = doff;                                                      \
    for (int k = rank - 1; k >= 0; --k) {                                                  \
      const long c = r % d[k];                                                             \
      r /= d[k];                                                                           \
      si += c * s[k];                                                                      \
      di += c * t[k];                                                                      \
    }                                                                                      \
    PTR(dst)[di] = PTR(src)[si];                                                           \
  }                                                                                        \
  __kernel void array_copy2d_##SUF(TENSOR(const T, src), TENSOR(T, dst), const long spitch,   \
                                   const long soff, const long dpitch, const long doff) {   \
    const long c = get_global_id(0), r = get_global_id(1);                                 \
    PTR(dst)[doff + r * dpitch + c] = PTR(src)[soff + r * spitch + c];                     \
  }                                                                                        \
  __kernel void array_transpose_##SUF(TENSOR(const T, src), TENSOR(T, dst), const long d0,    \
                                      const long d1, const long tiles0, const long tiles1,  \
                                      const long soff, const long doff) {                   \
    __local T tile[PDK_ARRAY_TILE][PDK_ARRAY_TILE + 1];                                    \
    const long g = get_group_id(0);                                                        \
    const long l = get_local_id(0);                                                        \
    const long lx = l % PDK_ARRAY_TILE, ly = l / PDK_ARRAY_TILE;                           \
    const long t0 = g % tiles0, t1 = (g / tiles0) % tiles1, b = g / (tiles0 * tiles1);     \
    const long x0 = t0 * PDK_ARRAY_TILE, y0 = t1 * PDK_ARRAY_TILE;                         \
    const long base = b * d0 * d1;                                                         \
    if (y0 + ly < d1 && x0 + lx < d0)                                                      \
      tile[ly][lx] = PTR(src)[soff + base + (y0 + ly) * d0 + x0 + lx];                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                          \
    if (x0 + ly < d0 && y0 + lx < d1)                                                      \
      PTR(dst)[doff + base + (x0 + ly) * d1 + y0 + lx] = tile[lx][ly];                     \
  }                                                                                        \
  __kernel void array_tile_##SUF(TENSOR(const T, src), TENSOR(T, dst), const long n,       \
                                 const int rank, const long8 dims, const long8 sdims,     \
                                 const long8 sstr) {                                       \
    INDEX_OR_RETURN(i, n);                                                                 \
    PDK_ARRAY_UNPACK8(dims, d);                                                            \
    PDK_ARRAY_UNPACK8(sdims, e);                                                           \
    PDK_ARRAY_UNPACK8(sstr, s);                                                            \
    long r = i, si = 0;                                                                    \
    for (int k = rank - 1; k >= 0; --k) {                                                  \
      const long c = r % d[k];                                                             \
      r /= d[k];                                                                           \
      si += (c % e[k]) * s[k];                                                             \
    }                                                                                      \
    PTR(dst)[i] = PTR(src)[si];                                                            \
  }                                                                                        \
  __kernel void array_band_part_##SUF(TENSOR(const T, x), TENSOR(T, y), const long n,      \
                                      const long rows, const long cols, const long lower,  \
                                      const long upper) {                                  \
    INDEX_OR_RETURN(i, n);                                                                 \
    const long c = i % cols;                                                               \
    const long r = (i / cols) % rows;                                                      \
    const int keep = (lower < 0 || r - c <= lower) && (upper < 0 || c - r <= upper);       \
    PTR(y)[i] = keep ? PTR(x)[i] : (T)0;                                                   \
  }                                                                                        \
  PDK_ARRAY_INDEXED(T, SUF, long, i64)                                                     \
  PDK_ARRAY_INDEXED(T, SUF, int, i32)                                                      \
  PDK_ARRAY_INDEXED(T, SUF, uchar, u8)

#define PDK_ARRAY_INDEXED(T, SUF, I, ISUF)                                                   \
  __kernel void array_gather_##SUF##_##ISUF(TENSOR(const T, p), TENSOR(const I, idx),        \
                                            TENSOR(T, out), const long n, const long O,      \
                                            const long A, const long J, const long K) {      \
    INDEX_OR_RETURN(i, n);                                                                   \
    const long k = i % K;                                                                    \
    long t = i / K;                                                                          \
    const long j = t % J;                                                                    \
    t /= J;                                                                                  \
    const long o = t % O;                                                                    \
    const long b = t / O;                                                                    \
    const long v = (long)PTR(idx)[b * J + j];                                                \
    PTR(out)[i] = (v >= 0 && v < A) ? PTR(p)[((b * O + o) * A + v) * K + k] : (T)0;          \
  }                                                                                          \
  __kernel void array_one_hot_##SUF##_##ISUF(TENSOR(const I, idx), TENSOR(const T, on),     \
                                             TENSOR(const T, off), TENSOR(T, out),           \
                                             const long n, const long D, const long S) {     \
    INDEX_OR_RETURN(i, n);                                                                   \
    const long s = i % S;                                                                    \
    const long t = i / S;                                                                    \
    const long d = t % D;                                                                    \
    const long p = t / D;                                                                    \
    PTR(out)[i] = (long)PTR(idx)[p * S + s] == d ? PTR(on)[0] : PTR(off)[0];                 \
  }                                                                                          \
  __kernel void array_gather_nd_##SUF##_##ISUF(TENSOR(const T, p), TENSOR(const I, idx),     \
                                               TENSOR(T, out), const long n, const int K,    \
                                               const long8 pdims, const long slice) {        \
    INDEX_OR_RETURN(i, n);                                                                   \
    PDK_ARRAY_UNPACK8(pdims, d);                                                             \
    const long m = i / slice;                                                                \
    long off = 0;                                                                            \
    int bad = 0;                                                                             \
    for (int j = 0; j < K; ++j) {                                                            \
      const long v = (long)PTR(idx)[m * K + j];                                              \
      bad |= v < 0 || v >= d[j];                                                             \
      off = off * d[j] + v;                                                                  \
    }                                                                                        \
    PTR(out)[i] = bad ? (T)0 : PTR(p)[off * slice + i % slice];                              \
  }

PDK_ARRAY_KERNELS(uchar, u8)
PDK_ARRAY_KERNELS(uint, u32)
PDK_ARRAY_KERNELS(ulong, u64)
