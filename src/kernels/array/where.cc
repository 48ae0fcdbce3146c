// Where(input): the coordinates of input's true (non-zero) elements.
//
// Input: any rank, T. Output: int64 [num_true, rank(input)], one row per
// non-zero element in row-major order. The output shape depends on the data:
// the elements are counted first, then the output is allocated and filled.
// Semantics: tensorflow/core/ops/array_ops.cc (Where).
// Dtypes: T bool, float32, float64, int32, int64, uint8, int8.
// Errors: a scalar input, InvalidArgument "WhereOp : Unhandled input
// dimensions: 0" (TensorFlow's wording; the CPU kernel handles ranks 1 to 8).
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

template <class T>
class WhereOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    const pdk::Shape in = x.shape();
    const int rank = in.rank();
    if (rank == 0)
      return pdk::InvalidArgument("WhereOp : Unhandled input dimensions: 0 (", ctx.op(),
                                  ": condition of shape [] is a scalar)");
    const int64_t n = x.num_elements();
    const T* v = x.data<T>();
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += v[i] != T(0);
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape{count, rank}));
    if (count == 0 || rank == 0) return pdk::Status::OK();
    int64_t* o = out.data<int64_t>();
    std::vector<int64_t> coord(rank, 0);
    for (int64_t i = 0; i < n; ++i) {
      if (v[i] != T(0)) {
        for (int k = 0; k < rank; ++k) *o++ = coord[k];
      }
      for (int k = rank - 1; k >= 0; --k) {  // advance the row-major counter
        if (++coord[k] < in[k]) break;
        coord[k] = 0;
      }
    }
    return pdk::Status::OK();
  }
};

}  // namespace

PDK_REGISTER_KERNELS(Where, r) {
  pdk::ForEachType(pdk::TypeList<bool, float, double, int32_t, int64_t, uint8_t, int8_t>{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     r.Add(Int32OnHost<T>(pdk::KernelDef<WhereOp<T>>("Where").Type("T", t),
                                          {"input", "index"}));
                   });
}

}  // namespace pdk_kernels
