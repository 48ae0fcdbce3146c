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
#define POOL_XIDX(n, h, w, c) ((n) * xs.s0 + (h) * xs.s1 + (w) * xs.s2 + (c) * xs.s3)
#define POOL_YIDX(n, h, w, c) ((n) * ys.s0 + (h) * ys.s1 + (w) * ys.s2 + (c) * ys.s3)

__kernel void pool_max_f32(TENSOR(const float, x), TENSOR(float, y), const long8 geo,
                           const long8 win, const long8 xs, const long8 ys, const long total) {
  INDEX_OR_RETURN(i, total);
  const long H = geo.s0, W = geo.s1, C = geo.s2, OH = geo.s3, OW = geo.s4;
  const long KH = geo.s5, KW = geo.s6, KC = geo.s7;
  const long OC = C / KC;
  long r = i;
  const long oc = r % OC;
  r /= OC;
  const long ow = r % OW;
  r /= OW;
  const long oh = r % OH;
  const long n = r / OH;
  const long h0 = oh * win.s0 - win.s2, w0 = ow * win.s1 - win.s3;
  float best = -FLT_MAX;
  for (long h = max(h0, 0L); h < min(h0 + KH, H); ++h)
    for (long w = max(w0, 0L); w < min(w0 + KW, W); ++w)
      for (long c = oc * KC; c < oc * KC + KC; ++c) {
        const float v = PTR(x)[POOL_XIDX(n, h, w, c)];
        if (v > best) best = v;
      }
  PTR(y)[POOL_YIDX(n, oh, ow, oc)] = best;
}

__kernel void pool_avg_f32(TENSOR(const float, x), TENSOR(float, y), const long8 geo,
                           const long8 win, const long8 xs, const long8 ys, const long total) {
  INDEX_OR_RETURN(i, total);
  const long H = geo.s0, W = geo.s1, C = geo.s2, OH = geo.s3, OW = geo.s4;
  const long KH = geo.s5, KW = geo.s6;
  long r = i;
  const long c = r % C;
  r /= C;
  const long ow = r % OW;
  r /= OW;
  const long oh = r % OH;
  const long n = r / OH;
  const long h0 = oh * win.s0 - win.s2, w0 = ow * win.s1 - win.s3;
  const long hs = max(h0, 0L), he = min(h0 + KH, H), ws = max(w0, 0L), we = min(w0 + KW, W);
  float sum = 0.0f;
  for (long h = hs; h < he; ++h)
    for (long w = ws; w < we; ++w) sum += PTR(x)[POOL_XIDX(n, h, w, c)];
  const long cnt = (he - hs) * (we - ws);
  PTR(y)[POOL_YIDX(n, oh, ow, c)] = cnt > 0 ? sum / (float)cnt : 0.0f;
}

// The output windows (oh, ow) that cover input position (h, w):
// oh in [oh_lo, oh_hi], ow in [ow_lo, ow_hi].
#define POOL_COVER(h, w)                                                       \
  const long hp = (h) + win.s2, wp = (w) + win.s3;                             \
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
  INDEX_OR_RETURN(i, total);
  const long H = geo.s0, W = geo.s1, C = geo.s2, OH = geo.s3, OW = geo.s4;
  const long KH = geo.s5, KW = geo.s6;
  long r = i;
  const long c = r % C;
  r /= C;
  const long w = r % W;
  r /= W;
  const long h = r % H;
  const long n = r / H;
  POOL_COVER(h, w)
  float sum = 0.0f;
  for (long oh = oh_lo; oh <= oh_hi; ++oh)
    for (long ow = ow_lo; ow <= ow_hi; ++ow) {
      const long h0 = oh * win.s0 - win.s2, w0 = ow * win.s1 - win.s3;
      long bh = -1, bw = -1;
      float best = 0.0f;
      for (long hh = max(h0, 0L); hh < min(h0 + KH, H); ++hh)
        for (long ww = max(w0, 0L); ww < min(w0 + KW, W); ++ww) {
          const float v = PTR(x)[POOL_XIDX(n, hh, ww, c)];
          if (bh < 0 || best < v) {
            best = v;
            bh = hh;
            bw = ww;
          }
        }
      if (bh == h && bw == w) sum += PTR(g)[POOL_YIDX(n, oh, ow, c)];
    }
  PTR(dx)[POOL_XIDX(n, h, w, c)] = sum;
}

// dx[n, h, w, c] = the sum over the windows covering (h, w) of
// grad * (1 / the window's count of input positions).
__kernel void pool_avg_grad_f32(TENSOR(const float, g), TENSOR(float, dx), const long8 geo,
                                const long8 win, const long8 xs, const long8 ys,
                                const long total) {
  INDEX_OR_RETURN(i, total);
  const long H = geo.s0, W = geo.s1, C = geo.s2, OH = geo.s3, OW = geo.s4;
  const long KH = geo.s5, KW = geo.s6;
  long r = i;
  const long c = r % C;
  r /= C;
  const long w = r % W;
  r /= W;
  const long h = r % H;
  const long n = r / H;
  POOL_COVER(h, w)
  float sum = 0.0f;
  for (long oh = oh_lo; oh <= oh_hi; ++oh) {
    const long h0 = oh * win.s0 - win.s2;
    const long rows = min(h0 + KH, H) - max(h0, 0L);
    for (long ow = ow_lo; ow <= ow_hi; ++ow) {
      const long w0 = ow * win.s1 - win.s3;
      const long cols = min(w0 + KW, W) - max(w0, 0L);
      sum += PTR(g)[POOL_YIDX(n, oh, ow, c)] * (1.0f / (float)(rows * cols));
    }
  }
  PTR(dx)[POOL_XIDX(n, h, w, c)] = sum;
}
