// Conv2D's im2col and col2im (src/kernels/conv2d.cc), float32.
//
// The input x is [N, H, W, C] addressed through element strides
// xs = (n, h, w, c) (NHWC or NCHW). A chunk of `nimg` images starting at image
// n0 becomes the column matrix col[(img, oh, ow), (g, kh, kw, cg)]: row-major,
// K = KH*KW*C columns, channel c = g*Cg + cg of group g, the tap at
//   h = oh*stride_h - pad_top + kh*dil_h,  w = ow*stride_w - pad_left + kw*dil_w
// (0 outside the input): TensorFlow's convolution with its padding
// (kernel_shape_util.cc) read as a matrix product.
//
// geo = (H, W, C, OH, OW, KH, KW, Cg); xs = (sn, sh, sw, sc, n0, nimg);
// win = (stride_h, stride_w, dil_h, dil_w, pad_top, pad_left).
__kernel void conv_im2col_f32(TENSOR(const float, x), TENSOR(float, col), const long8 geo,
                              const long8 xs, const long8 win, const long total) {
  INDEX_OR_RETURN(i, total);
  const long H = geo.s0, W = geo.s1, C = geo.s2, OH = geo.s3, OW = geo.s4;
  const long KH = geo.s5, KW = geo.s6, Cg = geo.s7;
  const long K = KH * KW * C;
  long r = i / K, j = i % K;
  const long cg = j % Cg;
  j /= Cg;
  const long kw = j % KW;
  j /= KW;
  const long kh = j % KH;
  const long g = j / KH;
  const long ow = r % OW;
  r /= OW;
  const long oh = r % OH;
  const long img = r / OH;
  const long h = oh * win.s0 - win.s4 + kh * win.s2;
  const long w = ow * win.s1 - win.s5 + kw * win.s3;
  float v = 0.0f;
  if (h >= 0 && h < H && w >= 0 && w < W) {
    const long c = g * Cg + cg;
    v = PTR(x)[(xs.s4 + img) * xs.s0 + h * xs.s1 + w * xs.s2 + c * xs.s3];
  }
  PTR(col)[i] = v;
}

// The adjoint: dx[n0 + img, h, w, c] = the sum of the col entries im2col took
// from there (a gather over the taps; no atomics). Same arguments, dx addressed
// through xs; total = nimg*H*W*C.
__kernel void conv_col2im_f32(TENSOR(const float, col), TENSOR(float, dx), const long8 geo,
                              const long8 xs, const long8 win, const long total) {
  INDEX_OR_RETURN(i, total);
  const long H = geo.s0, W = geo.s1, C = geo.s2, OH = geo.s3, OW = geo.s4;
  const long KH = geo.s5, KW = geo.s6, Cg = geo.s7;
  const long K = KH * KW * C;
  long r = i;
  const long c = r % C;
  r /= C;
  const long w = r % W;
  r /= W;
  const long h = r % H;
  const long img = r / H;
  const long g = c / Cg, cg = c % Cg;
  float sum = 0.0f;
  for (long kh = 0; kh < KH; ++kh) {
    const long th = h + win.s4 - kh * win.s2;
    if (th < 0 || th % win.s0 != 0) continue;
    const long oh = th / win.s0;
    if (oh >= OH) continue;
    for (long kw = 0; kw < KW; ++kw) {
      const long tw = w + win.s5 - kw * win.s3;
      if (tw < 0 || tw % win.s1 != 0) continue;
      const long ow = tw / win.s1;
      if (ow >= OW) continue;
      sum += PTR(col)[((img * OH + oh) * OW + ow) * K + ((g * KH + kh) * KW + kw) * Cg + cg];
    }
  }
  PTR(dx)[(xs.s4 + img) * xs.s0 + h * xs.s1 + w * xs.s2 + c * xs.s3] = sum;
}
