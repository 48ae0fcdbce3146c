// Unary elementwise ops and their gradients on OPENCL (cl/cwise_unary.cl).
//   Neg Square Abs Sign                          float32, int64
//   Sqrt Rsqrt Exp Log Log1p Reciprocal (Inv) Tanh Sigmoid Softplus Floor
//   Ceil Round (Rint) Erf Relu6 Elu Selu Softsign Expm1 Sin Cos   float32
//   IsNan IsInf IsFinite                         float32 -> bool
//   LogicalNot                                   bool
//   TanhGrad SigmoidGrad SqrtGrad RsqrtGrad ReciprocalGrad (InvGrad):
//     (y, dy) of equal element counts (TensorFlow's SimpleBinaryOp check),
//     output of y's shape                        float32
//   SoftplusGrad Relu6Grad EluGrad SeluGrad SoftsignGrad: (gradients, features/outputs) of
//     one shape (ValidateInputsAreSameShape)     float32
// Any shape, flat kernels; the output may reuse an input's buffer.
#include <string>

#include "cwise_common.h"
#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;
using pdk_opencl::KernelName;

class CwiseUnaryOp : public OpKernel {
 public:
  CwiseUnaryOp(OpKernelConstruction* c, const char* kernel) : OpKernel(c), kernel_(kernel) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    // The kit forwards an input only of the output's dtype (not for IsNan & co.).
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const int64 n = x.NumElements();
    OP_REQUIRES_OK(ctx, Enqueue(ctx, KernelName((std::string("cw_") + kernel_).c_str(),
                                                x.dtype()),
                                n, {x, *y, Arg::I64(n)}));
  }

 private:
  const char* kernel_;
};

// same_shape: ValidateInputsAreSameShape (the activation grads); otherwise
// equal element counts (TensorFlow's SimpleBinaryOp).
class CwiseGradOp : public OpKernel {
 public:
  CwiseGradOp(OpKernelConstruction* c, const char* kernel, bool same_shape)
      : OpKernel(c), kernel_(kernel), same_shape_(same_shape) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (same_shape_) {
      if (!ctx->ValidateInputsAreSameShape(this)) return;
    } else {
      OP_REQUIRES(ctx, a.NumElements() == b.NumElements(),
                  errors::InvalidArgument(
                      "The two arguments to a cwise op must have same number of elements, got ",
                      a.NumElements(), " and ", b.NumElements()));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, a.shape(), &out));
    const int64 n = a.NumElements();
    OP_REQUIRES_OK(ctx, Enqueue(ctx, KernelName((std::string("cw_") + kernel_).c_str(),
                                                a.dtype()),
                                n, {a, b, *out, Arg::I64(n)}));
  }

 private:
  const char* kernel_;
  bool same_shape_;
};

#define CW_UNARY_OP(CLASS, KERNEL)                                        \
  class CLASS : public CwiseUnaryOp {                                     \
   public:                                                                \
    explicit CLASS(OpKernelConstruction* c) : CwiseUnaryOp(c, KERNEL) {}  \
  };
#define CW_GRAD_OP(CLASS, KERNEL, SAME)                                         \
  class CLASS : public CwiseGradOp {                                            \
   public:                                                                      \
    explicit CLASS(OpKernelConstruction* c) : CwiseGradOp(c, KERNEL, SAME) {}   \
  };

CW_UNARY_OP(CwNegOp, "neg")
CW_UNARY_OP(CwSquareOp, "square")
CW_UNARY_OP(CwAbsOp, "abs")
CW_UNARY_OP(CwSignOp, "sign")
CW_UNARY_OP(CwSqrtOp, "sqrt")
CW_UNARY_OP(CwRsqrtOp, "rsqrt")
CW_UNARY_OP(CwExpOp, "exp")
CW_UNARY_OP(CwLogOp, "log")
CW_UNARY_OP(CwLog1pOp, "log1p")
CW_UNARY_OP(CwReciprocalOp, "reciprocal")
CW_UNARY_OP(CwTanhOp, "tanh")
CW_UNARY_OP(CwSigmoidOp, "sigmoid")
CW_UNARY_OP(CwSoftplusOp, "softplus")
CW_UNARY_OP(CwFloorOp, "floor")
CW_UNARY_OP(CwCeilOp, "ceil")
CW_UNARY_OP(CwRoundOp, "round")
CW_UNARY_OP(CwErfOp, "erf")
CW_UNARY_OP(CwRelu6Op, "relu6")
CW_UNARY_OP(CwEluOp, "elu")
CW_UNARY_OP(CwSeluOp, "selu")
CW_UNARY_OP(CwSoftsignOp, "softsign")
CW_UNARY_OP(CwExpm1Op, "expm1")
CW_UNARY_OP(CwSinOp, "sin")
CW_UNARY_OP(CwCosOp, "cos")
CW_UNARY_OP(CwIsNanOp, "is_nan")
CW_UNARY_OP(CwIsInfOp, "is_inf")
CW_UNARY_OP(CwIsFiniteOp, "is_finite")
CW_UNARY_OP(CwLogicalNotOp, "logical_not")

CW_GRAD_OP(CwTanhGradOp, "tanh_grad", false)
CW_GRAD_OP(CwSigmoidGradOp, "sigmoid_grad", false)
CW_GRAD_OP(CwSqrtGradOp, "sqrt_grad", false)
CW_GRAD_OP(CwRsqrtGradOp, "rsqrt_grad", false)
CW_GRAD_OP(CwReciprocalGradOp, "reciprocal_grad", false)
CW_GRAD_OP(CwSoftplusGradOp, "softplus_grad", true)
CW_GRAD_OP(CwRelu6GradOp, "relu6_grad", true)
CW_GRAD_OP(CwEluGradOp, "elu_grad", true)
CW_GRAD_OP(CwSeluGradOp, "selu_grad", true)
CW_GRAD_OP(CwSoftsignGradOp, "softsign_grad", true)
#undef CW_UNARY_OP
#undef CW_GRAD_OP

CW_REGISTER("Neg", float, CwNegOp)
CW_REGISTER("Neg", int64, CwNegOp)
CW_REGISTER("Square", float, CwSquareOp)
CW_REGISTER("Square", int64, CwSquareOp)
CW_REGISTER("Abs", float, CwAbsOp)
CW_REGISTER("Abs", int64, CwAbsOp)
CW_REGISTER("Sign", float, CwSignOp)
CW_REGISTER("Sign", int64, CwSignOp)
CW_REGISTER("Sqrt", float, CwSqrtOp)
CW_REGISTER("Rsqrt", float, CwRsqrtOp)
CW_REGISTER("Exp", float, CwExpOp)
CW_REGISTER("Log", float, CwLogOp)
CW_REGISTER("Log1p", float, CwLog1pOp)
CW_REGISTER("Reciprocal", float, CwReciprocalOp)
CW_REGISTER("Inv", float, CwReciprocalOp)
CW_REGISTER("Tanh", float, CwTanhOp)
CW_REGISTER("Sigmoid", float, CwSigmoidOp)
CW_REGISTER("Softplus", float, CwSoftplusOp)
CW_REGISTER("Floor", float, CwFloorOp)
CW_REGISTER("Ceil", float, CwCeilOp)
CW_REGISTER("Round", float, CwRoundOp)
CW_REGISTER("Erf", float, CwErfOp)
CW_REGISTER("Relu6", float, CwRelu6Op)
CW_REGISTER("Elu", float, CwEluOp)
CW_REGISTER("Selu", float, CwSeluOp)
CW_REGISTER("Softsign", float, CwSoftsignOp)
CW_REGISTER("Rint", float, CwRoundOp)
CW_REGISTER("Expm1", float, CwExpm1Op)
CW_REGISTER("Sin", float, CwSinOp)
CW_REGISTER("Cos", float, CwCosOp)
CW_REGISTER("IsNan", float, CwIsNanOp)
CW_REGISTER("IsInf", float, CwIsInfOp)
CW_REGISTER("IsFinite", float, CwIsFiniteOp)
CW_REGISTER("SoftsignGrad", float, CwSoftsignGradOp)
CW_REGISTER("TanhGrad", float, CwTanhGradOp)
CW_REGISTER("SigmoidGrad", float, CwSigmoidGradOp)
CW_REGISTER("SqrtGrad", float, CwSqrtGradOp)
CW_REGISTER("RsqrtGrad", float, CwRsqrtGradOp)
CW_REGISTER("ReciprocalGrad", float, CwReciprocalGradOp)
CW_REGISTER("InvGrad", float, CwReciprocalGradOp)
CW_REGISTER("SoftplusGrad", float, CwSoftplusGradOp)
CW_REGISTER("Relu6Grad", float, CwRelu6GradOp)
CW_REGISTER("EluGrad", float, CwEluGradOp)
CW_REGISTER("SeluGrad", float, CwSeluGradOp)

REGISTER_KERNEL_BUILDER(Name("LogicalNot").Device(DEVICE_OPENCL), CwLogicalNotOp);

}  // namespace tensorflow
