// SparseSoftmaxCrossEntropyWithLogits and SoftmaxCrossEntropyWithLogits
// (xent.cc): one work-item per row b of logits [batch, depth]. As TensorFlow's
// xent_op.h / sparse_xent_op.h:
//   shifted = logits - max(logits);  s = sum(exp(shifted));
//   loss = sum(labels * (log(s) - shifted));  backprop = exp(shifted) / s - labels
// with one-hot labels for the sparse op. A label outside [0, depth) gives a
// NaN loss and a NaN backprop row, as TensorFlow's GPU kernel does (its CPU
// kernel reports an InvalidArgument error instead).

#define RDC_SPARSE_XENT(SUF, TL)                                                         \
  __kernel void rdc_sparse_xent_##SUF(TENSOR(const float, logits), TENSOR(const TL, labels), \
                                       TENSOR(float, loss), TENSOR(float, backprop),      \
                                       const long batch, const long depth) {              \
    INDEX_OR_RETURN(b, batch);                                                           \
    __global const float* px = PTR(logits) + b * depth;                                  \
    __global float* pg = PTR(backprop) + b * depth;                                      \
    const TL label = PTR(labels)[b];                                                     \
    if (label < 0 || label >= depth) {                                                   \
      PTR(loss)[b] = NAN;                                                                \
      for (long j = 0; j < depth; ++j) pg[j] = NAN;                                      \
      return;                                                                            \
    }                                                                                    \
    float m = -INFINITY;                                                                 \
    for (long j = 0; j < depth; ++j) m = fmax(m, px[j]);                                 \
    const float shifted_label = px[label] - m;                                           \
    /* exp once: backprop holds exp(shifted) first (it may be logits, forwarded) */      \
    float s = 0.0f;                                                                      \
    for (long j = 0; j < depth; ++j) {                                                   \
      const float e = exp(px[j] - m);                                                    \
      pg[j] = e;                                                                         \
      s += e;                                                                            \
    }                                                                                    \
    PTR(loss)[b] = log(s) - shifted_label;                                               \
    for (long j = 0; j < depth; ++j)                                                     \
      pg[j] = pg[j] / s - (j == (long)label ? 1.0f : 0.0f);                              \
  }
RDC_SPARSE_XENT(i32, int)
RDC_SPARSE_XENT(i64, long)
#undef RDC_SPARSE_XENT

// Dense labels; logits and labels are read through (row, class) strides, so a
// broadcast operand has stride 0 along its broadcast dim.
__kernel void rdc_xent_f32(TENSOR(const float, logits), TENSOR(const float, labels),
                           TENSOR(float, loss), TENSOR(float, backprop), const long batch,
                           const long depth, const long xs0, const long xs1, const long ls0,
                           const long ls1) {
  INDEX_OR_RETURN(b, batch);
  __global const float* px = PTR(logits) + b * xs0;
  __global const float* pl = PTR(labels) + b * ls0;
  __global float* pg = PTR(backprop) + b * depth;
  float m = -INFINITY;
  for (long j = 0; j < depth; ++j) m = fmax(m, px[j * xs1]);
  // exp once: backprop holds exp(shifted) first (never an input: xent.cc
  // does not forward logits here, they are read again below).
  float s = 0.0f;
  for (long j = 0; j < depth; ++j) {
    const float e = exp(px[j * xs1] - m);
    pg[j] = e;
    s += e;
  }
  const float ls = log(s);
  float l = 0.0f;
  for (long j = 0; j < depth; ++j) {
    const float lab = pl[j * ls1];
    l += lab * (ls - (px[j * xs1] - m));
    pg[j] = pg[j] / s - lab;
  }
  PTR(loss)[b] = l;
}
