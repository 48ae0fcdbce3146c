// GEMM on the launch's stream through CLBlast (matmul.cc), shared by the
// conv group's kernels (matmul.cc, conv2d.cc).
//
// Row-major C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C, float32;
// op(X) = X^T when the flag is set. Offsets and leading dimensions are in
// elements, relative to each tensor's own start (the tensor's offset in its
// cl_mem is added here). m, n or k == 0 is the caller's business (CLBlast
// rejects them).
#ifndef PDK_OPENCL_KERNELS_CONV_GEMM_H_
#define PDK_OPENCL_KERNELS_CONV_GEMM_H_

#include <cstddef>
#include <vector>

#include "launch.h"

namespace pdk_opencl {

pdk::Status Gemm(OpKernelContext* ctx, bool trans_a, bool trans_b, size_t m, size_t n, size_t k,
                 float alpha, const Tensor& a, size_t a_off, size_t lda, const Tensor& b,
                 size_t b_off, size_t ldb, float beta, const Tensor& c, size_t c_off, size_t ldc);

// The same GEMM over batch_count = a_offs.size() triples of offsets.
pdk::Status GemmBatched(OpKernelContext* ctx, bool trans_a, bool trans_b, size_t m, size_t n,
                        size_t k, float alpha, const Tensor& a, const std::vector<size_t>& a_offs,
                        size_t lda, const Tensor& b, const std::vector<size_t>& b_offs,
                        size_t ldb, float beta, const Tensor& c,
                        const std::vector<size_t>& c_offs, size_t ldc);

}  // namespace pdk_opencl

#endif  // PDK_OPENCL_KERNELS_CONV_GEMM_H_
