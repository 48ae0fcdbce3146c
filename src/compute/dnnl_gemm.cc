// float32 and bfloat16 block GEMM on oneDNN's matmul primitive (see gemm.h,
// GemmBlockDnnl).
//
// Debian's libdnnl 2.6 (OpenMP runtime) dispatches a bfloat16 matmul to its
// brgemm kernels for avx512_core_bf16 (VDPBF16PS: bf16 products summed in
// float32), and to its reference/AVX-512 fallbacks on CPUs without it: about
// 2x the float32 throughput of widening to float32 + sgemm
// (bench/matmul_backends.cc). A float32 matmul with dense operands runs on
// brg:avx512_core (AVX-512 FMA), 5-50 % faster per core than OpenBLAS's sgemm
// on mid-size products (docs/benchmarks.md, "float32 GEMM"); with a
// strided operand (a row block of a transposed A, a column block) oneDNN 2.6
// falls back to gemm:jit, its own sgemm, which is no faster than OpenBLAS, so
// float32 calls are refused then (the caller uses OpenBLAS).
//
// Only oneDNN's C API is used (compute/dnnl_common.h says why). The code builds
// against oneDNN 2.x and 3.x (compute/dnnl_api.h); the shipped one, and the
// one the figures above are for, is Debian's 2.x. Where checked (an AVX-512
// + AMX CPU), oneDNN 3.2 made the same float32 choices (brg:avx512_core for
// dense operands, gemm:jit:f32 with a strided one), so the "brg" test in
// Create means the same with either.
//
// Threading: PDK splits a product over its device pool and calls this from each
// pool thread, one block per call, so oneDNN must stay on the calling thread:
// each calling thread's DnnlThreadStream sets its OpenMP team size to 1. A
// caller may ask for a larger OpenMP team for one call (`team`, the way
// dnnl_conv.cc runs batch-1 convolutions; gemm.h does not, see there); the team size is part of the cache
// key since oneDNN fixes a primitive's threading when it is created. The
// primitive for a block geometry is created once per thread and kept in a
// small per-thread cache (oneDNN's primitive creation costs tens of
// microseconds; its own primitive cache still needs a primitive descriptor per
// call).

#include <omp.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "compute/dnnl_api.h"
#include "compute/dnnl_common.h"
#include "compute/gemm.h"

namespace pdk_compute {
namespace {

struct Geometry {
  DnnlGemmType type;
  bool ta, tb;
  int team;  // OpenMP threads the primitive was created for
  int64_t rows, cols, k, lda, ldb, ldc;
  bool operator==(const Geometry& o) const {
    return type == o.type && ta == o.ta && tb == o.tb && team == o.team && rows == o.rows &&
           cols == o.cols && k == o.k && lda == o.lda && ldb == o.ldb && ldc == o.ldc;
  }
};

// One matmul primitive with its three memory objects (data handles set per call).
// `usable` is false for a float32 geometry oneDNN would not run on a brgemm
// kernel (prim is then null and the caller uses OpenBLAS; the answer is cached).
struct Block {
  Geometry g;
  bool usable = false;
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_t a = nullptr, b = nullptr, c = nullptr;
};

void Destroy(Block& blk) {
  if (blk.prim) dnnl_primitive_destroy(blk.prim);
  if (blk.a) dnnl_memory_destroy(blk.a);
  if (blk.b) dnnl_memory_destroy(blk.b);
  if (blk.c) dnnl_memory_destroy(blk.c);
  blk = Block{};
}

// Creates the primitive for `g`: C[rows,cols] = op(A) op(B), all of g.type,
// A/B/C row-major with row strides lda/ldb/ldc (a transposed operand is
// described by swapped strides, which oneDNN's matmul accepts for plain
// layouts). Called with the OpenMP team size g.team in effect.
bool Create(const Geometry& g, Block* out) {
  dnnl_engine_t eng = DnnlEngine();
  if (eng == nullptr) return false;
  const dnnl_data_type_t dt = g.type == DnnlGemmType::kFloat32 ? dnnl_f32 : dnnl_bf16;
  DnnlMd a_md, b_md, c_md;
  const dnnl_dims_t a_dims = {g.rows, g.k}, b_dims = {g.k, g.cols}, c_dims = {g.rows, g.cols};
  const dnnl_dims_t a_str = {g.ta ? 1 : g.lda, g.ta ? g.lda : 1};
  const dnnl_dims_t b_str = {g.tb ? 1 : g.ldb, g.tb ? g.ldb : 1};
  const dnnl_dims_t c_str = {g.ldc, 1};
  if (a_md.InitStrides(2, a_dims, dt, a_str) != dnnl_success ||
      b_md.InitStrides(2, b_dims, dt, b_str) != dnnl_success ||
      c_md.InitStrides(2, c_dims, dt, c_str) != dnnl_success)
    return false;
  dnnl_primitive_desc_t pd = nullptr;
  if (DnnlMatmulPd(&pd, eng, a_md.get(), b_md.get(), c_md.get()) != dnnl_success) return false;
  Block blk;
  blk.g = g;
  if (g.type == DnnlGemmType::kFloat32) {
    const char* impl = nullptr;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
        impl == nullptr || std::strncmp(impl, "brg", 3) != 0) {
      dnnl_primitive_desc_destroy(pd);
      *out = blk;  // not usable: remembered so that the next call skips oneDNN
      return true;
    }
  }
  blk.usable = true;
  const bool ok = dnnl_primitive_create(&blk.prim, pd) == dnnl_success &&
                  dnnl_memory_create(&blk.a, a_md.get(), eng, DNNL_MEMORY_NONE) == dnnl_success &&
                  dnnl_memory_create(&blk.b, b_md.get(), eng, DNNL_MEMORY_NONE) == dnnl_success &&
                  dnnl_memory_create(&blk.c, c_md.get(), eng, DNNL_MEMORY_NONE) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
  if (!ok) {
    Destroy(blk);
    return false;
  }
  *out = blk;
  return true;
}

}  // namespace

bool GemmBlockDnnl(DnnlGemmType type, bool ta, bool tb, int64_t rows, int64_t cols, int64_t k,
                   const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc,
                   int team) {
  thread_local DnnlThreadCache<Geometry, Block, 64> state(Create, Destroy);
  if (state.stream() == nullptr) return false;
  team = team < 1 ? 1 : team;
  if (team > 1) omp_set_num_threads(team);  // back to 1 below (DnnlThreadStream's setting)
  bool ok = false;
  Block* blk = state.Get(Geometry{type, ta, tb, team, rows, cols, k, lda, ldb, ldc});
  if (blk != nullptr && blk->usable &&
      dnnl_memory_set_data_handle(blk->a, const_cast<void*>(a)) == dnnl_success &&
      dnnl_memory_set_data_handle(blk->b, const_cast<void*>(b)) == dnnl_success &&
      dnnl_memory_set_data_handle(blk->c, c) == dnnl_success) {
    const dnnl_exec_arg_t args[] = {
        {DNNL_ARG_SRC, blk->a}, {DNNL_ARG_WEIGHTS, blk->b}, {DNNL_ARG_DST, blk->c}};
    ok = dnnl_primitive_execute(blk->prim, state.stream(), 3, args) == dnnl_success &&
         dnnl_stream_wait(state.stream()) == dnnl_success;
  }
  if (team > 1) omp_set_num_threads(1);
  return ok;
}

}  // namespace pdk_compute
