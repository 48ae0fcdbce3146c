// Conv2D's im2col and col2im (src/kernels/conv2d.cc), float32.
//
// The input x is [N, H, W, C] addressed through element strides
// xs = (n, h, w, c) (NHWC or NCHW). Output rows R = n*OH + oh in [r0, r1)
// (a chunk) become the column matrix col[(R - r0, ow), (g, kh, kw, cg)]:
// row-major, K = KH*KW*C columns, channel c = g*Cg + cg of group g, the tap at
//   h = oh*stride_h - pad_top + kh*dil_h,  w = ow*stride_w - pad_left + kw*dil_w
// (0 outside the input): TensorFlow's convolution with its padding
// (kernel_shape_util.cc) read as a matrix product.
//
// geo = (H, W, C, OH, OW, KH, KW, Cg); xs = (sn, sh, sw, sc, r0, r1, n_first);
// win = (stride_h, stride_w, dil_h, dil_w, pad_top, pad_left).
__kernel void conv_im2col_f32(TENSOR(const float, x), TENSOR(float, col), const long8 geo,
                              const long8 xs, const long8 win, const long total) {
  INDEX_OR_RETURN(i, total);
  WINDOW_GEO(geo, Cg)
  const long K = KH * KW * C;
  const long q = i / K;
  UNRAVEL4(i % K, g, kh, kw, cg, KH, KW, Cg)
  const long ow = q % OW;
  const long R = xs.s4 + q / OW;
  const long oh = R % OH;
  const long img = R / OH;
  const long h = oh * win.s0 - win.s4 + kh * win.s2;
  const long w = ow * win.s1 - win.s5 + kw * win.s3;
  float v = 0.0f;
  if (h >= 0 && h < H && w >= 0 && w < W) {
    v = PTR(x)[AT4(xs, img, h, w, g * Cg + cg)];
  }
  PTR(col)[i] = v;
}

// The adjoint, one chunk at a time: dx[n, h, w, c] += the sum of the entries
// of the chunk's col that im2col took from there (a gather over the taps; no
// atomics). Runs over the images n_first.. of the chunk (total = their
// count * H*W*C); dx is addressed through xs and starts zeroed.
__kernel void conv_col2im_f32(TENSOR(const float, col), TENSOR(float, dx), const long8 geo,
                              const long8 xs, const long8 win, const long total) {
  INDEX_OR_RETURN(i, total);
  WINDOW_GEO(geo, Cg)
  const long K = KH * KW * C;
  const long r0 = xs.s4, r1 = xs.s5;
  UNRAVEL4(i, n, h, w, c, H, W, C)
  const long img = xs.s6 + n;
  const long g = c / Cg, cg = c % Cg;
  float sum = 0.0f;
  bool any = false;
  for (long kh = 0; kh < KH; ++kh) {
    const long th = h + win.s4 - kh * win.s2;
    if (th < 0 || th % win.s0 != 0) continue;
    const long oh = th / win.s0;
    const long R = img * OH + oh;
    if (oh >= OH || R < r0 || R >= r1) continue;
    for (long kw = 0; kw < KW; ++kw) {
      const long tw = w + win.s5 - kw * win.s3;
      if (tw < 0 || tw % win.s1 != 0) continue;
      const long ow = tw / win.s1;
      if (ow >= OW) continue;
      sum += PTR(col)[((R - r0) * OW + ow) * K + ((g * KH + kh) * KW + kw) * Cg + cg];
      any = true;
    }
  }
  if (any) PTR(dx)[AT4(xs, img, h, w, c)] += sum;
}
