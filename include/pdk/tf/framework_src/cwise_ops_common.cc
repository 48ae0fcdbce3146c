// BinaryOpShared (tensorflow/core/kernels/cwise_ops_common.h), the base of
// TensorFlow's broadcasting binary kernels (BinaryOp<Device, Functor>): the
// signature check at construction, the broadcast state of one launch, and the
// errors. Messages are TensorFlow's (cwise_ops_common.cc).
#include "tensorflow/core/kernels/cwise_ops_common.h"

namespace tensorflow {

BinaryOpShared::BinaryOpShared(OpKernelConstruction* ctx, DataType out, DataType in)
    : OpKernel(ctx) {
  OP_REQUIRES_OK(ctx, ctx->MatchSignature({in, in}, {out}));
}

void BinaryOpShared::SetUnimplementedError(OpKernelContext* ctx) {
  ctx->SetStatus(errors::Unimplemented("Broadcast between ", ctx->input(0).shape().DebugString(),
                                       " and ", ctx->input(1).shape().DebugString(),
                                       " is not supported yet."));
}

// Binary functors report only that some element failed; the op and dtypes
// say which error it was.
void BinaryOpShared::SetComputeError(OpKernelContext* ctx) {
  const std::string& op = ctx->op_kernel().type_string();
  const DataType t0 = ctx->input_dtype(0), t1 = ctx->input_dtype(1);
  const bool division = op == "Div" || op == "Mod" || op == "FloorMod" || op == "FloorDiv";
  if (division && DataTypeIsInteger(t0)) {
    ctx->CtxFailure(errors::InvalidArgument("Integer division by zero"));
  } else if (op == "Pow" && DataTypeIsInteger(t0) && DataTypeIsSigned(t1)) {
    ctx->CtxFailure(errors::InvalidArgument("Integers to negative integer powers are not allowed"));
  } else {
    ctx->CtxFailure(errors::Internal(
        "Unexpected error in binary operator (only integer div and mod should have errors)"));
  }
}

BinaryOpShared::BinaryOpState::BinaryOpState(OpKernelContext* ctx)
    : in0(ctx->input(0)),
      in1(ctx->input(1)),
      bcast(BCast::FromShape(in0.shape()), BCast::FromShape(in1.shape())) {
  if (!bcast.IsValid()) {
    ctx->SetStatus(errors::InvalidArgument("Incompatible shapes: ", in0.shape().DebugString(),
                                           " vs. ", in1.shape().DebugString()));
    return;
  }
  const TensorShape output_shape = BCast::ToShape(bcast.output_shape());
  out_num_elements = output_shape.num_elements();
  in0_num_elements = in0.NumElements();
  in1_num_elements = in1.NumElements();
  OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, output_shape, &out));
  ndims = static_cast<int>(bcast.x_reshape().size());
}

}  // namespace tensorflow
