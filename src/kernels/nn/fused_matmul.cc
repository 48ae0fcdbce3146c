// _PdkFusedMatMul: PDK's own op, produced only by PDK's graph optimizer
// (src/graph/rewrites/matmul_biasadd_activation.cc) from
// MatMul + BiasAdd [+ activation] placed on PDK. Not a TensorFlow op: it is
// defined here with REGISTER_OP (pdk/tf/op.h, over the op C API), with its
// kernel, both in TensorFlow's style.
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
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_kernels::FusedActivation;

REGISTER_OP("_PdkFusedMatMul")
    .Input("a: T")
    .Input("b: T")
    .Input("bias: T")
    .Output("product: T")
    .Attr("T: {float}")
    .Attr("transpose_b: bool = false")
    .Attr("activation: {'None', 'Relu', 'Relu6', 'Elu', 'LeakyRelu', 'Tanh', 'Sigmoid', "
          "'GeluExact', 'GeluApproximate'} = 'None'")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      // product: [a.dim0, bias.dim0] (a rank 2, b rank 2, bias rank 1).
      ShapeHandle a, b, bias;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &a));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &b));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &bias));
      c->set_output(0, c->MakeShape({c->Dim(a, 0), c->Dim(bias, 0)}));
      return OkStatus();
    });

class FusedMatMulOp : public OpKernel {
 public:
  explicit FusedMatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("transpose_b", &transpose_b_));
    std::string act;
    OP_REQUIRES_OK(c, c->GetAttr("activation", &act));
    OP_REQUIRES_OK(c, pdk_kernels::ParseFusedActivation(act, &activation_));
    OP_REQUIRES_OK(c, c->GetAttr("leakyrelu_alpha", &alpha_));
    pdk_compute::UseSingleThreadedOpenBlas();
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    const char* op = type_string().c_str();
    OP_REQUIRES_OK(ctx, ::pdk::CheckRank(op, "a", a.shape().pdk_shape(), 2));
    OP_REQUIRES_OK(ctx, ::pdk::CheckRank(op, "b", b.shape().pdk_shape(), 2));
    OP_REQUIRES_OK(ctx, ::pdk::CheckRank(op, "bias", bias.shape().pdk_shape(), 1));
    const int kb_dim = transpose_b_ ? 1 : 0;
    OP_REQUIRES(ctx, a.dim_size(1) == b.dim_size(kb_dim),
                errors::InvalidArgument(op, ": matrix size-incompatible: a ", a.shape(), " x b ",
                                        b.shape(), " (transpose_b=",
                                        transpose_b_ ? "true" : "false", "): a.shape[1] (",
                                        a.dim_size(1), ") != b.shape[", kb_dim, "] (",
                                        b.dim_size(kb_dim), ")"));
    const int64 m = a.dim_size(0), k = a.dim_size(1), n = b.dim_size(1 - kb_dim);
    OP_REQUIRES(ctx, bias.dim_size(0) == n,
                errors::InvalidArgument(op, ": bias.shape[0] (", bias.dim_size(0),
                                        ") != number of output columns (", n, ")"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({m, n}), &out));
    if (m == 0 || n == 0) return;

    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    pdk_compute::Gemm<float>(dev, false, transpose_b_, m, n, k, a.flat<float>().data(),
                             b.flat<float>().data(), out->flat<float>().data());

    auto y = out->matrix<float>();
    const auto x = y + bias.shaped<float, 2>({1, n}).broadcast(
                           Eigen::array<Eigen::DenseIndex, 2>{m, 1});
    pdk_kernels::AssignActivation(dev, y, x, activation_, alpha_);
  }

 private:
  bool transpose_b_ = false;
  FusedActivation activation_ = FusedActivation::kNone;
  float alpha_ = 0.2f;
};

REGISTER_KERNEL_BUILDER(
    Name("_PdkFusedMatMul").Device(DEVICE_PDK).TypeConstraint<float>("T").Async(),
    FusedMatMulOp);

}  // namespace
}  // namespace tensorflow
