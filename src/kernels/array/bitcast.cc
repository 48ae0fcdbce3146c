// Bitcast: reinterprets the bytes of `input` (dtype T) as dtype `type`.
//
// Shapes (tensorflow/core/ops/array_ops.cc, Bitcast): equal element sizes keep
// the shape; a larger input element appends a dimension of size
// sizeof(T)/sizeof(type); a smaller one requires the last dimension to equal
// sizeof(type)/sizeof(T) and removes it (InvalidArgument otherwise).
#include <cstring>

#include "compute/eigen.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

class BitcastOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor input, ctx.input(0));
    const size_t in_size = TF_DataTypeSize(input.dtype());
    const size_t out_size = TF_DataTypeSize(ctx.output_dtype(0));
    pdk::Shape shape = input.shape();
    if (in_size > out_size) {
      shape.push_back(static_cast<int64_t>(in_size / out_size));
    } else if (in_size < out_size) {
      const int64_t ratio = static_cast<int64_t>(out_size / in_size);
      if (shape.rank() == 0 || shape.dim(-1) != ratio)
        return pdk::InvalidArgument(ctx.op(), ": cannot bitcast ", pdk::DataTypeName(input.dtype()),
                                    " of shape ", shape, " to ",
                                    pdk::DataTypeName(ctx.output_dtype(0)),
                                    ": the last dimension must be ", ratio);
      std::vector<int64_t> d = shape.dims();
      d.pop_back();
      shape = pdk::Shape(std::move(d));
    }
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, shape));
    if (input.bytes()) std::memcpy(out.raw_data(), input.raw_data(), input.bytes());
    return pdk::Status::OK();
  }
};

using BitcastTypes = pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int64_t, int32_t,
                                   int16_t, int8_t, uint8_t, uint16_t, uint32_t, uint64_t>;

}  // namespace

PDK_REGISTER_KERNELS(Bitcast, r) {
  pdk::ForEachType(BitcastTypes{}, [&](auto a) {
    pdk::ForEachType(BitcastTypes{}, [&](auto b) {
      using A = typename decltype(a)::type;
      using B = typename decltype(b)::type;
      r.Add(pdk::KernelDef<BitcastOp>("Bitcast").Type("T", a).Type("type", b));
    });
  });
}

}  // namespace pdk_kernels
