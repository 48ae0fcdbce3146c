// Reductions Sum, Mean, Max, Min, Prod and L2Loss (reduction_ops.cc).
//
// The input is viewed as kept dims (kdims, input strides kstr, nk of them,
// row-major order of the output) and reduced dims (rdims, rstr, nr). The
// reduced index space (n_red elements, row-major over rdims) is cut into
// `parts` chunks of `chunk` elements: work-item g = o * parts + p folds chunk
// p of output element o, in index order, into y[g] (y is [n_out, parts]).
// The host repeats the launch over y until parts == 1 (reduction_ops.cc).
// Within a chunk, element k goes to lane k % 8 and the 8 lanes are combined
// pairwise (as a vectorized Eigen reducer's packet), which keeps float sums
// closer to Eigen's tree order than one running accumulator.
// Each result is FIN(acc) with `div` (Mean's count on its last pass, else 1).
// Max/Min propagate NaN, as TensorFlow's CPU reducers do.

#define RDC_REDUCE(NAME, T, INIT, LOAD, OP, FIN)                                          \
  __kernel void rdc_##NAME(TENSOR(const T, x), TENSOR(T, y), const long n_out,             \
                           const long parts, const long chunk, const long n_red,           \
                           const long8 kdims8, const long8 kstr8, const int nk,            \
                           const long8 rdims8, const long8 rstr8, const int nr,            \
                           const T div) {                                                  \
    INDEX_OR_RETURN(g, n_out * parts);                                                     \
    long kd[8], ks[8], rd[8], rs[8], c[8];                                                 \
    vstore8(kdims8, 0, kd);                                                                \
    vstore8(kstr8, 0, ks);                                                                 \
    vstore8(rdims8, 0, rd);                                                                \
    vstore8(rstr8, 0, rs);                                                                 \
    long o = g / parts;                                                                    \
    const long p = g - o * parts;                                                          \
    long off = 0;                                                                          \
    for (int i = nk - 1; i >= 0; --i) {                                                    \
      const long q = o / kd[i];                                                            \
      off += (o - q * kd[i]) * ks[i];                                                      \
      o = q;                                                                               \
    }                                                                                      \
    const long start = p * chunk;                                                          \
    const long end = min(start + chunk, n_red);                                            \
    long r = start; /* (not decomposed over an empty dim: no division by 0) */           \
    for (int i = nr - 1; i >= 0 && start < end; --i) {                                     \
      const long q = r / rd[i];                                                            \
      c[i] = r - q * rd[i];                                                                \
      off += c[i] * rs[i];                                                                 \
      r = q;                                                                               \
    }                                                                                      \
    __global const T* px = PTR(x);                                                         \
    T lane[8];                                                                             \
    for (int k = 0; k < 8; ++k) lane[k] = INIT;                                            \
    if (nr == 0) {                                                                         \
      if (start < end) { const T v = LOAD(px[off]); lane[0] = OP(lane[0], v); }             \
    } else {                                                                               \
      const int last = nr - 1;                                                             \
      const long sl = rs[last], dl = rd[last];                                             \
      for (long j = start; j < end;) {                                                     \
        /* the innermost reduced dim: a strided run */                                     \
        long run = min(dl - c[last], end - j);                                             \
        for (long t = 0; t < run; ++t) {                                                   \
          const T v = LOAD(px[off + t * sl]);                                              \
          const int k = (int)((j + t) & 7);                                                \
          lane[k] = OP(lane[k], v);                                                        \
        }                                                                                  \
        j += run;                                                                          \
        off += run * sl;                                                                   \
        c[last] += run;                                                                    \
        for (int i = last; i > 0 && c[i] == rd[i]; --i) {                                  \
          off -= rd[i] * rs[i];                                                            \
          c[i] = 0;                                                                        \
          c[i - 1] += 1;                                                                   \
          off += rs[i - 1];                                                                \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
    const T acc = OP(OP(OP(lane[0], lane[1]), OP(lane[2], lane[3])),                       \
                     OP(OP(lane[4], lane[5]), OP(lane[6], lane[7])));                      \
    PTR(y)[g] = FIN(acc);                                                                  \
  }

#define RDC_ID(v) (v)
#define RDC_SQ(v) ((v) * (v))
#define RDC_ADD(a, v) ((a) + (v))
#define RDC_MUL(a, v) ((a) * (v))
#define RDC_FMAX(a, v) (((v) > (a) || isnan(v)) ? (v) : (a))
#define RDC_FMIN(a, v) (((v) < (a) || isnan(v)) ? (v) : (a))
#define RDC_DIV(a) ((a) / div)

RDC_REDUCE(sum_f32, float, 0.0f, RDC_ID, RDC_ADD, RDC_DIV)
RDC_REDUCE(sumsq_f32, float, 0.0f, RDC_SQ, RDC_ADD, RDC_DIV)
RDC_REDUCE(prod_f32, float, 1.0f, RDC_ID, RDC_MUL, RDC_ID)
RDC_REDUCE(max_f32, float, -INFINITY, RDC_ID, RDC_FMAX, RDC_ID)
RDC_REDUCE(min_f32, float, INFINITY, RDC_ID, RDC_FMIN, RDC_ID)
RDC_REDUCE(sum_i64, long, 0L, RDC_ID, RDC_ADD, RDC_ID)

#undef RDC_REDUCE
#undef RDC_ID
#undef RDC_SQ
#undef RDC_ADD
#undef RDC_MUL
#undef RDC_FMAX
#undef RDC_FMIN
#undef RDC_DIV
