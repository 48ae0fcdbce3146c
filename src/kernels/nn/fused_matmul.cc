// _PdkFusedMatMul: PDK's own op, produced only by PDK's graph optimizer
// (src/graph/rewrites/matmul_biasadd_activation.cc) from
// MatMul + BiasAdd [+ activation] placed on PDK. Not a TensorFlow op: it is
// defined here, through the op C API (tensorflow/c/ops.h), with its kernel.
//
//   _PdkFusedMatMul(a, b, bias; T, transpose_b, activation, leakyrelu_alpha) -> product
//     a: [M,K], b: [K,N] ([N,K] if transpose_b), bias: [N], product: [M,N]
//     product = activation(a x op(b) + bias)
//     activation in {None, Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid}, with
//     the same definitions (and NaN handling) as PDK's standalone kernels
//     and TensorFlow's CPU kernels, or GeluExact / GeluApproximate as
//     tf.nn.gelu (src/kernels/nn/fused_activation.h).
//     T = float32.
//
// There is no transpose_a: the shape function, which through the C API can
// read only type attributes, gives [a.dim0, bias.dim0]; the rewrite never
// fuses a MatMul with transpose_a = true.
//
// The product uses the GEMM of src/compute/gemm.h (OpenBLAS on the device
// pool, as MatMul does), then bias and activation in one Eigen expression over
// the output, on the device pool, in place.
#include <string>

#include "compute/eigen.h"
#include "compute/gemm.h"
#include "kernels/nn/fused_activation.h"
#include "kernels/pdk_op_def.h"
#include "pdk/kernel.h"
#include "tensorflow/c/ops.h"

namespace pdk_kernels {
namespace {

class FusedMatMulOp {
 public:
  pdk::Status Init(const pdk::Attrs& attrs) {
    PDK_RETURN_IF_ERROR(attrs.Get("transpose_b", &transpose_b_));
    std::string act;
    PDK_RETURN_IF_ERROR(attrs.Get("activation", &act));
    PDK_RETURN_IF_ERROR(ParseFusedActivation(act, &activation_));
    PDK_RETURN_IF_ERROR(attrs.Get("leakyrelu_alpha", &alpha_));
    pdk_compute::UseSingleThreadedOpenBlas();
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor a, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor b, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor bias, ctx.input(2));
    const pdk::Shape as = a.shape(), bs = b.shape(), cs = bias.shape();
    PDK_RETURN_IF_ERROR(pdk::CheckRank(ctx.op(), "a", as, 2));
    PDK_RETURN_IF_ERROR(pdk::CheckRank(ctx.op(), "b", bs, 2));
    PDK_RETURN_IF_ERROR(pdk::CheckRank(ctx.op(), "bias", cs, 1));
    const int kb_dim = transpose_b_ ? 1 : 0;
    if (as[1] != bs[kb_dim])
      return pdk::InvalidArgument(ctx.op(), ": matrix size-incompatible: a ", as, " x b ", bs,
                                  " (transpose_b=", transpose_b_ ? "true" : "false",
                                  "): a.shape[1] (", as[1], ") != b.shape[", kb_dim, "] (",
                                  bs[kb_dim], ")");
    const int64_t m = as[0], k = as[1], n = bs[1 - kb_dim];
    if (cs[0] != n)
      return pdk::InvalidArgument(ctx.op(), ": bias.shape[0] (", cs[0],
                                  ") != number of output columns (", n, ")");
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, pdk::Shape{m, n}));
    if (m == 0 || n == 0) return pdk::Status::OK();

    const Eigen::ThreadPoolDevice& dev = pdk_compute::Device(ctx);
    pdk_compute::Gemm<float>(dev, false, transpose_b_, m, n, k, a.data<float>(), b.data<float>(),
                             out.data<float>());

    using DS = Eigen::DSizes<Eigen::DenseIndex, 2>;
    auto y = pdk_compute::view<float, 2>(out, DS(m, n));
    const auto x = y + pdk_compute::cview<float, 2>(bias, DS(1, n))
                           .broadcast(Eigen::array<Eigen::DenseIndex, 2>{m, 1});
    AssignActivation(dev, y, x, activation_, alpha_);
    return pdk::Status::OK();
  }

 private:
  bool transpose_b_ = false;
  FusedActivation activation_ = FusedActivation::kNone;
  float alpha_ = 0.2f;
};

// product: [a.dim0, bias.dim0] (a rank 2, b rank 2, bias rank 1).
void FusedMatMulShape(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* a = TF_NewShapeHandle();
  TF_ShapeHandle* b = TF_NewShapeHandle();
  TF_ShapeHandle* bias = TF_NewShapeHandle();
  TF_ShapeHandle* rows = TF_NewShapeHandle();
  TF_ShapeHandle* out = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, a, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextWithRank(ctx, a, 2, a, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextGetInput(ctx, 1, b, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextWithRank(ctx, b, 2, b, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextGetInput(ctx, 2, bias, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextWithRank(ctx, bias, 1, bias, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextSubshape(ctx, a, 0, 1, rows, status);
  if (TF_GetCode(status) == TF_OK)
    TF_ShapeInferenceContextConcatenateShapes(ctx, rows, bias, out, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextSetOutput(ctx, 0, out, status);
  for (TF_ShapeHandle* h : {a, b, bias, rows, out}) TF_DeleteShapeHandle(h);
}

TF_OpDefinitionBuilder* BuildFusedMatMulOpDef() {
  TF_OpDefinitionBuilder* op = TF_NewOpDefinitionBuilder("_PdkFusedMatMul");
  TF_OpDefinitionBuilderAddInput(op, "a: T");
  TF_OpDefinitionBuilderAddInput(op, "b: T");
  TF_OpDefinitionBuilderAddInput(op, "bias: T");
  TF_OpDefinitionBuilderAddOutput(op, "product: T");
  TF_OpDefinitionBuilderAddAttr(op, "T: {float}");
  TF_OpDefinitionBuilderAddAttr(op, "transpose_b: bool = false");
  TF_OpDefinitionBuilderAddAttr(
      op,
      "activation: {'None', 'Relu', 'Relu6', 'Elu', 'LeakyRelu', 'Tanh', 'Sigmoid', 'GeluExact', "
      "'GeluApproximate'} = 'None'");
  TF_OpDefinitionBuilderAddAttr(op, "leakyrelu_alpha: float = 0.2");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(op, &FusedMatMulShape);
  return op;
}

}  // namespace

PDK_REGISTER_KERNELS(PdkFusedMatMul, r) {
  // Without its op definition the kernel cannot register, and the graph
  // optimizer's output would not import; other kernels still register.
  if (!DefinePdkOp("_PdkFusedMatMul", BuildFusedMatMulOpDef())) return;
  r.Add(pdk::KernelDef<FusedMatMulOp>("_PdkFusedMatMul").Type<float>("T"));
}

}  // namespace pdk_kernels
