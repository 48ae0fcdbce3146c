// BiasAdd and BiasAddGrad (cwise_bias_add.cc) over a [outer, C, inner] view
// of the value (NHWC: inner = 1; NCHW: C is dimension 1).
// cw_bias_add: y[i] = x[i] + bias[(i / inner) % C].
// cw_bias_add_grad: one work-item per channel c sums x[(o*C + c)*inner + s]
// over o < outer, s < inner (compensated summation).
__kernel void cw_bias_add_f32(TENSOR(const float, x), TENSOR(const float, bias),
                              TENSOR(float, y), const long n, const long c, const long inner) {
  INDEX_OR_RETURN(i, n);
  PTR(y)[i] = PTR(x)[i] + PTR(bias)[(i / inner) % c];
}

__kernel void cw_bias_add_grad_f32(TENSOR(const float, x), TENSOR(float, y), const long c,
                                   const long outer, const long inner) {
  INDEX_OR_RETURN(ch, c);
  const __global float* p = PTR(x);
  float sum = 0.0f, comp = 0.0f;
  for (long o = 0; o < outer; ++o) {
    const __global float* row = p + (o * c + ch) * inner;
    for (long s = 0; s < inner; ++s) {
      const float v = row[s] - comp;
      const float t = sum + v;
      comp = (t - sum) - v;
      sum = t;
    }
  }
  PTR(y)[ch] = sum;
}
