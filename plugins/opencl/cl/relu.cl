// Relu and ReluGrad (TensorFlow's relu_op_functor.h): y = max(x, 0);
// backprops = gradients where features > 0, else 0.
#define PDK_RELU(T, SUF)                                                              \
  __kernel void relu_##SUF(TENSOR(const T, x), TENSOR(T, y), const long n) {           \
    INDEX_OR_RETURN(i, n);                                                             \
    const T v = PTR(x)[i];                                                             \
    PTR(y)[i] = v > (T)0 ? v : (T)0;                                                   \
  }                                                                                    \
  __kernel void relu_grad_##SUF(TENSOR(const T, g), TENSOR(const T, x), TENSOR(T, y),  \
                                const long n) {                                        \
    INDEX_OR_RETURN(i, n);                                                             \
    PTR(y)[i] = PTR(x)[i] > (T)0 ? PTR(g)[i] : (T)0;                                   \
  }
PDK_RELU(float, f32)
