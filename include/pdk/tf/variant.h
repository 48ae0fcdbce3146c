// pdk/tf/variant.h — the names TensorFlow's kernel headers use for DT_VARIANT
// tensors (framework/variant.h, variant_op_registry.h), so that those headers
// compile. The kit has no variant tensors: TF_CALL_variant registers nothing,
// Variant is an empty type, and UnaryOpVariant / BinaryOpVariants are declared
// without a definition: a kernel that would call them does not link (the
// plugin links with --no-undefined), it never runs wrongly.
#ifndef PDK_TF_VARIANT_H_
#define PDK_TF_VARIANT_H_

#include "pdk/tf/op_kernel.h"

namespace tensorflow {
inline namespace pdk_kit {

class Variant {};

enum VariantUnaryOp {
  INVALID_VARIANT_UNARY_OP = 0,
  ZEROS_LIKE_VARIANT_UNARY_OP = 1,
  CONJ_VARIANT_UNARY_OP = 2,
};
enum VariantBinaryOp {
  INVALID_VARIANT_BINARY_OP = 0,
  ADD_VARIANT_BINARY_OP = 1,
};

template <class Device>
Status UnaryOpVariant(OpKernelContext* ctx, VariantUnaryOp op, const Variant& v, Variant* out);
template <class Device>
Status BinaryOpVariants(OpKernelContext* ctx, VariantBinaryOp op, const Variant& a,
                        const Variant& b, Variant* out);

}  // namespace pdk_kit
}  // namespace tensorflow

#endif  // PDK_TF_VARIANT_H_
