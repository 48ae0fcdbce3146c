// ArgMax and ArgMin (argminmax.cc): the input viewed as [outer, n, inner];
// one work-item per output element o = a * inner + i scans the n values at
// stride `inner` in index order. As Eigen's ArgMax/ArgMin tuple reducers
// (TensorFlow's CPU kernels): the start is (index 0, lowest/highest finite
// value), a value replaces the best only if strictly greater (smaller), so ties
// give the first index and NaNs are skipped.
#define RDC_ARG(NAME, T, TOUT, START, BETTER)                                            \
  __kernel void rdc_##NAME(TENSOR(const T, x), TENSOR(TOUT, y), const long n_out,        \
                           const long n, const long inner) {                             \
    INDEX_OR_RETURN(o, n_out);                                                           \
    const long a = o / inner;                                                            \
    const long i = o - a * inner;                                                        \
    __global const T* px = PTR(x) + a * n * inner + i;                                   \
    T best = START;                                                                      \
    long idx = 0;                                                                        \
    for (long j = 0; j < n; ++j) {                                                       \
      const T v = px[j * inner];                                                         \
      if (v BETTER best) {                                                               \
        best = v;                                                                        \
        idx = j;                                                                         \
      }                                                                                  \
    }                                                                                    \
    PTR(y)[o] = (TOUT)idx;                                                               \
  }
RDC_ARG(argmax_f32_i64, float, long, -FLT_MAX, >)
RDC_ARG(argmin_f32_i64, float, long, FLT_MAX, <)
RDC_ARG(argmax_f32_i32, float, int, -FLT_MAX, >)
RDC_ARG(argmin_f32_i32, float, int, FLT_MAX, <)
#undef RDC_ARG
