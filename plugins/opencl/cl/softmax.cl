// Softmax and LogSoftmax over the last axis (softmax.cc): one work-item per
// row of `depth` logits. As TensorFlow's softmax_op_functor.h:
//   shifted = x - max(x);  Softmax = exp(shifted) * (1 / sum(exp(shifted)));
//   LogSoftmax = shifted - log(sum(exp(shifted))).
__kernel void rdc_softmax_f32(TENSOR(const float, x), TENSOR(float, y), const long rows,
                              const long depth, const int log_softmax) {
  INDEX_OR_RETURN(r, rows);
  __global const float* px = PTR(x) + r * depth;
  __global float* py = PTR(y) + r * depth;
  float m = -INFINITY;
  for (long j = 0; j < depth; ++j) m = fmax(m, px[j]);
  float s = 0.0f;
  for (long j = 0; j < depth; ++j) s += exp(px[j] - m);
  if (log_softmax) {
    const float ls = log(s);
    for (long j = 0; j < depth; ++j) py[j] = (px[j] - m) - ls;
  } else {
    const float inv = 1.0f / s;
    for (long j = 0; j < depth; ++j) py[j] = exp(px[j] - m) * inv;
  }
}
