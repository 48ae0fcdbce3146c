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
  if (log_softmax) {
    float s = 0.0f;
    for (long j = 0; j < depth; ++j) s += exp(px[j] - m);
    const float ls = log(s);
    for (long j = 0; j < depth; ++j) py[j] = (px[j] - m) - ls;
  } else {
    // exp once: y holds exp(shifted) (y may be x, forwarded: x[j] is read
    // before y[j] is written), then y *= 1 / sum.
    float s = 0.0f;
    for (long j = 0; j < depth; ++j) {
      const float e = exp(px[j] - m);
      py[j] = e;
      s += e;
    }
    const float inv = 1.0f / s;
    for (long j = 0; j < depth; ++j) py[j] *= inv;
  }
}

// The same with one work-group of `get_local_size(0)` (a power of 2) per row:
// work-item t handles columns t, t + L, ...; the row max and sum are tree
// reductions in __local memory `red` (L floats). For wide rows.
__kernel void rdc_softmax_wg_f32(TENSOR(const float, x), TENSOR(float, y), const long rows,
                                 const long depth, const int log_softmax,
                                 __local float* red) {
  const long r = get_group_id(0);
  const int t = get_local_id(0);
  const int L = get_local_size(0);
  __global const float* px = PTR(x) + r * depth;
  __global float* py = PTR(y) + r * depth;
  float m = -INFINITY;
  for (long j = t; j < depth; j += L) m = fmax(m, px[j]);
  red[t] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L / 2; h > 0; h >>= 1) {
    if (t < h) red[t] = fmax(red[t], red[t + h]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  float s = 0.0f;
  for (long j = t; j < depth; j += L) {
    const float e = exp(px[j] - m);
    if (!log_softmax) py[j] = e;
    s += e;
  }
  red[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L / 2; h > 0; h >>= 1) {
    if (t < h) red[t] += red[t + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  s = red[0];
  if (log_softmax) {
    const float ls = log(s);
    for (long j = t; j < depth; j += L) py[j] = (px[j] - m) - ls;
  } else {
    const float inv = 1.0f / s;
    for (long j = t; j < depth; j += L) py[j] *= inv;
  }
}
