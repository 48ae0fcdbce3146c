// Index helpers of the sliding-window kernels (conv.cl, pooling.cl). OpenCL C 1.2.

// The window geometry geo = (H, W, C, OH, OW, KH, KW, last) as consts
// H, W, C, OH, OW, KH, KW and `last` (conv: Cg, pooling: KC).
#define WINDOW_GEO(geo, last)                                                        \
  const long H = (geo).s0, W = (geo).s1, C = (geo).s2, OH = (geo).s3, OW = (geo).s4; \
  const long KH = (geo).s5, KW = (geo).s6, last = (geo).s7;

// The flat index i of a row-major [A, B, C, D] array as consts a, b, c, d.
#define UNRAVEL4(i, a, b, c, d, B, C, D)   \
  const long d = (i) % (D);                \
  const long c = ((i) / (D)) % (C);        \
  const long b = ((i) / (D) / (C)) % (B);  \
  const long a = (i) / (D) / (C) / (B);

// The element offset of (n, h, w, c) through the strides s = (sn, sh, sw, sc, ...).
#define AT4(s, n, h, w, c) ((n) * (s).s0 + (h) * (s).s1 + (w) * (s).s2 + (c) * (s).s3)
