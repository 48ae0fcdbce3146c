// The contract of _PdkFusedElementwise, PDK's op for a connected group of
// elementwise ops (written by src/graph/rewrites/elementwise_fusion.cc, run
// by src/kernels/math/fused_elementwise.cc, which documents the op).
//
// The group is a program of instructions over values: values 0..num_inputs-1
// are the op's inputs, value num_inputs + j is instruction j's result. The op
// carries it in three list(int) attributes:
//   ops:     one op code per instruction (the index of its TensorFlow op in
//            kFusedOps below);
//   args:    the instructions' operands, flattened (Arity(kind) value indices
//            per instruction, each an input or an earlier instruction);
//   outputs: the value index of each output.
// Two optional attributes let the node take the place of a Split before it
// and of ConcatV2s after it (the rewrite absorbs them when the fused node is
// their only reader / all their inputs come from it):
//   slices:  empty, or three ints per input (axis, index, count): the input
//            is piece `index` of `count` equal pieces of the fed tensor along
//            `axis` (what output `index` of Split(axis, value, num_split =
//            count) would be, with Split's checks); count 1 = the whole tensor;
//   concat:  per extra output, (axis, m, v_1 .. v_m): ConcatV2 of the values
//            v_1 .. v_m along `axis` (with ConcatV2's checks); these outputs
//            follow the `outputs` ones.
// Both the rewrite and the kernel take the table from here, so the codes agree
// within one build (a graph is rewritten and run by the same plugin).
#ifndef PDK_SRC_KERNELS_MATH_FUSED_ELEMENTWISE_H_
#define PDK_SRC_KERNELS_MATH_FUSED_ELEMENTWISE_H_

#include <string_view>

namespace pdk_fused {

// How an op reads its operands (TensorFlow's semantics, as PDK's kernels
// implement them):
//   kUnary:    y = f(x), x's shape;
//   kBinary:   z = f(x, y) with NumPy broadcasting;
//   kGrad:     z = f(y, dy), equal element counts, y's shape (cwise_binary.cc);
//   kReluGrad: z = f(gradients, features|outputs), equal shapes (relu.cc);
//   kCast:     y = T(x), x of any dtype Cast supports;
//   kSelect:   SelectV2(condition (bool), t, e) with NumPy broadcasting;
//   kAddN:     z = x + y, equal shapes: one step of AddN, which the rewrite
//              writes as a chain ((x0 + x1) + x2) + ..., the order in which
//              add_n.cc sums;
//   kBiasAdd:  z = value + bias along value's last dimension (BiasAdd with
//              data_format NHWC, the only one the rewrite takes), with
//              BiasAdd's checks (bias_add.cc).
enum class Kind { kUnary, kBinary, kGrad, kReluGrad, kCast, kSelect, kAddN, kBiasAdd };

// Operands per instruction (an AddN node of N inputs is N - 1 instructions).
constexpr int Arity(Kind k) {
  return k == Kind::kUnary || k == Kind::kCast ? 1 : k == Kind::kSelect ? 3 : 2;
}

// Every op the fusion takes, each for T = float32 and float64.
#define PDK_FUSED_ELEMENTWISE_OPS(X)                                                      \
  X(Neg, kUnary) X(Square, kUnary) X(Abs, kUnary) X(Sign, kUnary) X(Round, kUnary)        \
  X(Sqrt, kUnary) X(Rsqrt, kUnary) X(Exp, kUnary) X(Log, kUnary) X(Log1p, kUnary)         \
  X(Expm1, kUnary)                                                                        \
  X(Reciprocal, kUnary) X(Floor, kUnary) X(Ceil, kUnary) X(Sigmoid, kUnary)               \
  X(Tanh, kUnary) X(Erf, kUnary) X(Erfc, kUnary) X(Relu, kUnary) X(Relu6, kUnary)         \
  X(Elu, kUnary)                                                                          \
  X(AddV2, kBinary) X(Add, kBinary) X(Sub, kBinary) X(Mul, kBinary) X(RealDiv, kBinary)   \
  X(DivNoNan, kBinary) X(Maximum, kBinary) X(Minimum, kBinary)                            \
  X(SquaredDifference, kBinary) X(Pow, kBinary)                                           \
  X(SigmoidGrad, kGrad) X(TanhGrad, kGrad) X(SqrtGrad, kGrad) X(RsqrtGrad, kGrad)         \
  X(ReciprocalGrad, kGrad)                                                                \
  X(ReluGrad, kReluGrad) X(Relu6Grad, kReluGrad) X(EluGrad, kReluGrad)                    \
  X(Cast, kCast) X(SelectV2, kSelect) X(AddN, kAddN) X(BiasAdd, kBiasAdd)

enum class Code : int {
#define PDK_FUSED_CODE_(NAME, KIND) k##NAME,
  PDK_FUSED_ELEMENTWISE_OPS(PDK_FUSED_CODE_)
#undef PDK_FUSED_CODE_
};

struct OpInfo {
  const char* name;
  Kind kind;
};

inline constexpr OpInfo kFusedOps[] = {
#define PDK_FUSED_INFO_(NAME, KIND) {#NAME, Kind::KIND},
    PDK_FUSED_ELEMENTWISE_OPS(PDK_FUSED_INFO_)
#undef PDK_FUSED_INFO_
};
inline constexpr int kNumFusedOps = sizeof(kFusedOps) / sizeof(kFusedOps[0]);

// The code of TensorFlow op `name`, or -1 if the fusion does not take it.
inline int FindFusedOp(std::string_view name) {
  for (int i = 0; i < kNumFusedOps; ++i)
    if (name == kFusedOps[i].name) return i;
  return -1;
}

}  // namespace pdk_fused

#endif  // PDK_SRC_KERNELS_MATH_FUSED_ELEMENTWISE_H_
