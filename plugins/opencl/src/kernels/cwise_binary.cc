// Binary elementwise ops on OPENCL (cl/cwise_binary.cl), with TensorFlow's
// broadcasting (numpy rules; at most 5 dims after collapsing contiguous runs,
// as TensorFlow's BinaryOp; inputs may have any rank).
//   AddV2 (Add) Sub Mul Maximum Minimum    float32, int64
//   FloorDiv FloorMod                      float32, int64 (int64 division by
//     zero gives 0: a device kernel cannot raise TF's "Integer division by zero")
//   RealDiv (Div) DivNoNan SquaredDifference Pow  float32
//   Equal NotEqual Less LessEqual Greater GreaterEqual  float32, int64 -> bool
//     (Equal/NotEqual: incompatible_shape_error=false gives a scalar
//     false/true for incompatible shapes, as TensorFlow's BinaryOpShared)
//   Equal NotEqual                         also bool
//   LogicalAnd LogicalOr                   bool
// Equal shapes or a broadcast scalar use a flat kernel; other broadcasts a
// strided one over a long8 view. Errors: TensorFlow's BCast wording
// ("Incompatible shapes: [2,3] vs. [4]", "Broadcast between ... is not
// supported yet.").
#include <string>

#include "cwise_common.h"
#include "launch.h"

namespace tensorflow {

using pdk_opencl::Arg;
using pdk_opencl::Enqueue;
using pdk_opencl::KernelName;
namespace cw = pdk_opencl::cwise;

class CwiseBinaryOp : public OpKernel {
 public:
  CwiseBinaryOp(OpKernelConstruction* c, const char* kernel) : OpKernel(c), kernel_(kernel) {
    if (c->HasAttr("incompatible_shape_error")) {
      OP_REQUIRES_OK(c, c->GetAttr("incompatible_shape_error", &incompatible_shape_error_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const cw::Broadcast bc = cw::MakeBroadcast({&a.shape(), &b.shape()});
    Tensor* out = nullptr;
    if (!bc.valid) {
      if (!incompatible_shape_error_) {
        OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
        const int v = type_string() == "NotEqual" ? 1 : 0;
        OP_REQUIRES_OK(ctx, Enqueue(ctx, "cw_set_bool", 1, {*out, Arg::I64(1), Arg::I32(v)}));
        return;
      }
      ctx->SetStatus(errors::InvalidArgument("Incompatible shapes: ", a.shape().DebugString(),
                                             " vs. ", b.shape().DebugString()));
      return;
    }
    // TensorFlow's BinaryOp handles at most 5 dimensions after collapsing.
    OP_REQUIRES(ctx, bc.rank <= 5,
                errors::Unimplemented("Broadcast between ", a.shape().DebugString(), " and ",
                                      b.shape().DebugString(), " is not supported yet."));
    const TensorShape out_shape(bc.out_shape);
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, out_shape, &out));
    const int64 n = out_shape.num_elements();
    if (n == 0) return;
    const std::string base = std::string("cw_") + kernel_;
    if (bc.flat) {
      OP_REQUIRES_OK(ctx, Enqueue(ctx, KernelName(base.c_str(), a.dtype()), n,
                                  {a, b, *out, Arg::I64(n), Arg::I64(bc.flat_step[0]),
                                   Arg::I64(bc.flat_step[1])}));
    } else {
      const cw::RowLaunch r = cw::RowsOf(bc);
      OP_REQUIRES_OK(ctx, Enqueue(ctx, KernelName((base + "_bc").c_str(), a.dtype()), r.items(),
                                  {a, b, *out, Arg::I64(r.rows), Arg::I64(r.inner),
                                   Arg::I64(r.chunks), Arg::Long8(bc.dims),
                                   Arg::Long8(bc.strides[0]), Arg::Long8(bc.strides[1])}));
    }
  }

 private:
  const char* kernel_;
  bool incompatible_shape_error_ = true;
};

#define CW_BINARY_OP(CLASS, KERNEL)                                        \
  class CLASS : public CwiseBinaryOp {                                     \
   public:                                                                 \
    explicit CLASS(OpKernelConstruction* c) : CwiseBinaryOp(c, KERNEL) {}  \
  };
CW_BINARY_OP(CwAddOp, "add")
CW_BINARY_OP(CwSubOp, "sub")
CW_BINARY_OP(CwMulOp, "mul")
CW_BINARY_OP(CwDivOp, "div")
CW_BINARY_OP(CwDivNoNanOp, "div_no_nan")
CW_BINARY_OP(CwMaximumOp, "maximum")
CW_BINARY_OP(CwMinimumOp, "minimum")
CW_BINARY_OP(CwSquaredDifferenceOp, "squared_difference")
CW_BINARY_OP(CwPowOp, "pow")
CW_BINARY_OP(CwFloorDivOp, "floor_div")
CW_BINARY_OP(CwFloorModOp, "floor_mod")
CW_BINARY_OP(CwEqualOp, "equal")
CW_BINARY_OP(CwNotEqualOp, "not_equal")
CW_BINARY_OP(CwLessOp, "less")
CW_BINARY_OP(CwLessEqualOp, "less_equal")
CW_BINARY_OP(CwGreaterOp, "greater")
CW_BINARY_OP(CwGreaterEqualOp, "greater_equal")
CW_BINARY_OP(CwLogicalAndOp, "logical_and")
CW_BINARY_OP(CwLogicalOrOp, "logical_or")
#undef CW_BINARY_OP

#define CW_REGISTER_NUMBER(T)                 \
  CW_REGISTER("AddV2", T, CwAddOp)            \
  CW_REGISTER("Add", T, CwAddOp)              \
  CW_REGISTER("Sub", T, CwSubOp)              \
  CW_REGISTER("Mul", T, CwMulOp)              \
  CW_REGISTER("Maximum", T, CwMaximumOp)      \
  CW_REGISTER("Minimum", T, CwMinimumOp)      \
  CW_REGISTER("FloorDiv", T, CwFloorDivOp)    \
  CW_REGISTER("FloorMod", T, CwFloorModOp)    \
  CW_REGISTER("Equal", T, CwEqualOp)          \
  CW_REGISTER("NotEqual", T, CwNotEqualOp)    \
  CW_REGISTER("Less", T, CwLessOp)            \
  CW_REGISTER("LessEqual", T, CwLessEqualOp)  \
  CW_REGISTER("Greater", T, CwGreaterOp)      \
  CW_REGISTER("GreaterEqual", T, CwGreaterEqualOp)
CW_REGISTER_NUMBER(float)
CW_REGISTER_NUMBER(int64)
CW_REGISTER("Equal", bool, CwEqualOp)
CW_REGISTER("NotEqual", bool, CwNotEqualOp)
CW_REGISTER("RealDiv", float, CwDivOp)
CW_REGISTER("Div", float, CwDivOp)
CW_REGISTER("DivNoNan", float, CwDivNoNanOp)
CW_REGISTER("SquaredDifference", float, CwSquaredDifferenceOp)
CW_REGISTER("Pow", float, CwPowOp)
#undef CW_REGISTER_NUMBER

REGISTER_KERNEL_BUILDER(Name("LogicalAnd").Device(DEVICE_OPENCL), CwLogicalAndOp);
REGISTER_KERNEL_BUILDER(Name("LogicalOr").Device(DEVICE_OPENCL), CwLogicalOrOp);

}  // namespace tensorflow
