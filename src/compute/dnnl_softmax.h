// float32 Softmax over the last axis on oneDNN's softmax primitive (C API only, oneDNN 2.x or 3.x;
// see dnnl_common.h), for src/kernels/nn/softmax.cc.
//
// oneDNN picks its kernel for the CPU it runs on (jit:avx512_core on an
// AVX-512 CPU, jit:avx2 or a reference kernel elsewhere), where PDK's own
// Eigen code is compiled for the wheel's x86-64-v3 core: on [8192, 64]
// (MultiHeadAttention's scores, batch 32, 4 heads, 64 positions), one thread,
// 234 µs against 320 µs for the Eigen row loop on an AVX-512 AMD EPYC VM
// (docs/benchmarks.md, "Non-GEMM kernels of the Transformer and CNN steps").
// It computes what TensorFlow's kernel does (exp(x - max) / sum), with its
// own exp: results differ from the Eigen path
// by a few ulps (max relative difference 6e-7 measured), as TensorFlow's own
// oneDNN build (_MklSoftmax) differs from its Eigen kernel.
#ifndef PDK_SRC_COMPUTE_DNNL_SOFTMAX_H_
#define PDK_SRC_COMPUTE_DNNL_SOFTMAX_H_

#include <cstdint>

namespace pdk_compute {

// out[r, :] = softmax(in[r, :]) for the `rows` x `classes`
// row-major float32 block at `in`, on the calling thread (an OpenMP team of
// one: callers split rows over the device pool). `out` may be `in`. Returns
// false if oneDNN cannot run it (no engine, a shape its primitive does not
// take: nothing is written then); the caller then computes it itself.
bool SoftmaxRowsDnnl(int64_t rows, int64_t classes, const float* in, float* out);

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_DNNL_SOFTMAX_H_
