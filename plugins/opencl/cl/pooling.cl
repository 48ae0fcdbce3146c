// MaxPool, AvgPool and their gradients (src/kernels/pooling.cc), float32.
//
// x is [N, H, W, C] and y [N, OH, OW, OC] in logical order, each addressed
// through element strides (n, h, w, c) (NHWC or NCHW). Window of output
// (oh, ow, oc): rows oh*sh - pad_top + [0, KH), columns ow*sw - pad_left +
// [0, KW), channels oc*KC + [0, KC) (KC > 1 only for MaxPool's depthwise
// pooling, stride KC); positions outside the input are skipped, as
// TensorFlow's pooling does (pooling_ops_common.h; AvgPool divides by the
// number of positions inside the input).
//
// geo = (H, W, C, OH, OW, KH, KW, KC); win = (sh, sw, pad_top, pad_left, N);
// xs, ys = the strides (n, h, w, c) of x (or dx) and y (or grad).
// The input rows [lo, hi) of window row oh, and columns of window column ow.
#define POOL_ROWS(oh, lo, hi) \
  const long lo = max((oh) * win.s0 - win.s2, 0L), hi = min((oh) * win.s0 - win.s2 + KH, H);
#define POOL_COLS(ow, lo, hi) \
  const long lo = max((ow) * win.s1 - win.s3, 0L), hi = min((ow) * win.s1 - win.s3 + KW, W);

__kernel void pool_max_f32(TENSOR(const float, x), TENSOR(float, y), const long8 geo,
                           const long8 win, const long8 xs, const long8 ys, const long total) {
  INDEX_OR_RETURN(i, total);
  WINDOW_GEO(geo, KC)
  const long OC = C / KC;
  UNRAVEL4(i, n, oh, ow, oc, OH, OW, OC)
  POOL_ROWS(oh, hs, he)
  POOL_COLS(ow, ws, we)
  float best = -FLT_MAX;
  for (long h = hs; h < he; ++h)
    for (long w = ws; w < we; ++w)
      for (long c = oc * KC; c < oc * KC + KC; ++c) {
        const float v = PTR(x)[AT4(xs, n, h, w, c)];
        if (v > best) best = v;
      }
  PTR(y)[AT4(ys, n, oh, ow, oc)] = best;
}

__kernel void pool_avg_f32(TENSOR(const float, x), TENSOR(float, y), const long8 geo,
                           const long8 win, const long8 xs, const long8 ys, const long total) {
  INDEX_OR_RETURN(i, total);
  WINDOW_GEO(geo, KC)
  UNRAVEL4(i, n, oh, ow, c, OH, OW, C)
  POOL_ROWS(oh, hs, he)
  POOL_COLS(ow, ws, we)
  float sum = 0.0f;
  for (long h = hs; h < he; ++h)
    for (long w = ws; w < we; ++w) sum += PTR(x)[AT4(xs, n, h, w, c)];
  const long cnt = (he - hs) * (we - ws);
  PTR(y)[AT4(ys, n, oh, ow, c)] = cnt > 0 ? sum / (float)cnt : 0.0f;
}

// The start of a gradient kernel: the input position (n, h, w, c) of work
// item i and the output windows (oh, ow) that cover it: oh in [oh_lo, oh_hi],
// ow in [ow_lo, ow_hi].
#define POOL_GRAD_BEGIN(i, total)                                              \
  INDEX_OR_RETURN(i, total);                                                   \
  WINDOW_GEO(geo, KC)                                                          \
  UNRAVEL4(i, n, h, w, c, H, W, C)                                             \
  const long hp = h + win.s2, wp = w + win.s3;                                 \
  const long oh_lo = hp < KH ? 0 : (hp - KH) / win.s0 + 1;                     \
  const long oh_hi = min(hp / win.s0, OH - 1);                                 \
  const long ow_lo = wp < KW ? 0 : (wp - KW) / win.s1 + 1;                     \
  const long ow_hi = min(wp / win.s1, OW - 1);

// dx[n, h, w, c] = the sum, over the windows whose first maximum (row-major
// scan, strictly greater replaces: TensorFlow's CPU MaxPoolGrad) is (h, w), of
// grad at that window, in ascending window order.
__kernel void pool_max_grad_f32(TENSOR(const float, x), TENSOR(const float, g),
                                TENSOR(float, dx), const long8 geo, const long8 win,
                                const long8 xs, const long8 ys, const long total) {
  POOL_GRAD_BEGIN(i, total)
  float sum = 0.0f;
  for (long oh = oh_lo; oh <= oh_hi; ++oh)
    for (long ow = ow_lo; ow <= ow_hi; ++ow) {
      POOL_ROWS(oh, hs, he)
      POOL_COLS(ow, ws, we)
      long bh = -1, bw = -1;
      float best = 0.0f;
      for (long hh = hs; hh < he; ++hh)
        for (long ww = ws; ww < we; ++ww) {
          const float v = PTR(x)[AT4(xs, n, hh, ww, c)];
          if (bh < 0 || best < v) {
            best = v;
            bh = hh;
            bw = ww;
          }
        }
      if (bh == h && bw == w) sum += PTR(g)[AT4(ys, n, oh, ow, c)];
    }
  PTR(dx)[AT4(xs, n, h, w, c)] = sum;
}

// dx[n, h, w, c] = the sum over the windows covering (h, w) of
// grad * (1 / the window's count of input positions).
__kernel void pool_avg_grad_f32(TENSOR(const float, g), TENSOR(float, dx), const long8 geo,
                                const long8 win, const long8 xs, const long8 ys,
                                const long total) {
  POOL_GRAD_BEGIN(i, total)
  float sum = 0.0f;
  for (long oh = oh_lo; oh <= oh_hi; ++oh) {
    POOL_ROWS(oh, hs, he)
    for (long ow = ow_lo; ow <= ow_hi; ++ow) {
      POOL_COLS(ow, ws, we)
      sum += PTR(g)[AT4(ys, n, oh, ow, c)] * (1.0f / (float)((he - hs) * (we - ws)));
    }
  }
  PTR(dx)[AT4(xs, n, h, w, c)] = sum;
}
