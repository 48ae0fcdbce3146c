// BiasAddGrad (cwise_bias_add.cc) over a [outer, C, inner] view of the
// gradient (NHWC: inner = 1; NCHW: C is dimension 1). (BiasAdd uses
// cwise_binary.cl's broadcast add.)
// Two passes: channel c's m = outer*inner values, in their order
// k = o*inner + s, are cut into blocks of `block`;
//   cw_bias_grad_partial: work-item (b, c) sums block b of channel c into
//     part[b*C + c];
//   cw_bias_grad_final: work-item c sums part[0..nb)[c] (compensated) into y[c].
__kernel void cw_bias_grad_partial_f32(TENSOR(const float, x), TENSOR(float, part),
                                       const long c, const long inner, const long m,
                                       const long block, const long nb) {
  INDEX_OR_RETURN(w, nb * c);
  const long b = w / c;
  const long ch = w - b * c;
  const long k0 = b * block;
  const long k1 = min(k0 + block, m);
  long o = k0 / inner;
  long s = k0 - o * inner;
  const __global float* p = PTR(x);
  float sum = 0.0f;
  for (long k = k0; k < k1; ++k) {
    sum += p[(o * c + ch) * inner + s];
    if (++s == inner) {
      s = 0;
      ++o;
    }
  }
  PTR(part)[w] = sum;
}

__kernel void cw_bias_grad_final_f32(TENSOR(const float, part), TENSOR(float, y), const long c,
                                     const long nb) {
  INDEX_OR_RETURN(ch, c);
  const __global float* p = PTR(part);
  float sum = 0.0f, comp = 0.0f;
  for (long b = 0; b < nb; ++b) {
    const float v = p[b * c + ch] - comp;
    const float t = sum + v;
    comp = (t - sum) - v;
    sum = t;
  }
  PTR(y)[ch] = sum;
}
