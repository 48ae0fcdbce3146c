// _PdkFusedConv2D: PDK's own op, produced only by PDK's graph optimizer
// (src/graph/rewrites/conv_fusion.cc) from a Conv2D or DepthwiseConv2dNative
// placed on PDK and the per-channel ops after it. Not a TensorFlow op: it is
// defined here with REGISTER_OP (pdk/tf/op.h, over the op C API), next to its
// kernel.
//
//   _PdkFusedConv2D(input [N,H,W,C], filter, args: num_args * T) -> output
//     conv = Conv2D(input, filter [KH,KW,C,F])                   (depthwise = false)
//          | DepthwiseConv2dNative(input, filter [KH,KW,C,M])    (depthwise = true)
//       with the strides / padding / explicit_paddings / dilations /
//       data_format ("NHWC" only) of those ops; conv is [N,OH,OW,OC],
//       OC = F (or C*M).
//     normalization = "BiasAdd":        args = bias [OC] [, side]
//       z = conv + bias
//     normalization = "FusedBatchNorm": args = scale, offset, mean, variance
//                                              (each [OC]) [, side]
//       z = (conv - mean) * (rsqrt(variance + epsilon) * scale) + offset
//       (FusedBatchNormV3 with is_training = false; the same formula and
//       evaluation order as src/kernels/nn/fused_batch_norm.cc)
//     has_side_input: z = z + side, side broadcasting against z as AddV2
//       does (the output takes the broadcast shape)
//     output = activation(z), activation in {None, Relu, Relu6, Elu,
//       LeakyRelu, Tanh, Sigmoid} (src/kernels/nn/fused_activation.h).
//     T = float32.
//
// Errors (InvalidArgument, naming the operand and shapes): those of Conv2D /
// DepthwiseConv2dNative; num_args not 1 or 4 (+1 with a side input); a
// per-channel argument not of shape [OC]; a side input that does not
// broadcast against the convolution's output.
//
// The shape function checks that input and filter are rank 4 and leaves the
// output shape unknown: through the C API it can read only type attributes,
// not strides or padding.
//
// Compute: the convolution of src/kernels/nn/conv_compute.h (the code Conv2D
// and DepthwiseConv2dNative run) writes into the output; then one Eigen pass
// over it on the device pool applies the per-channel normalization, the side
// input and the activation. A side input that broadcasts takes a second pass
// (src/compute/broadcast.h).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cmath>
#include <string>
#include <vector>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "compute/gemm.h"
#include "kernels/nn/conv_compute.h"
#include "kernels/nn/fused_activation.h"
#include "kernels/nn/window.h"
#include "pdk/tf/op.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {

REGISTER_OP("_PdkFusedConv2D")
    .Input("input: T")
    .Input("filter: T")
    .Input("args: num_args * T")
    .Output("output: T")
    .Attr("T: {float}")
    .Attr("num_args: int >= 1")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .Attr("data_format: {'NHWC'} = 'NHWC'")
    .Attr("depthwise: bool = false")
    .Attr("normalization: {'BiasAdd', 'FusedBatchNorm'} = 'BiasAdd'")
    .Attr("has_side_input: bool = false")
    .Attr("epsilon: float = 0.0001")
    .Attr("activation: {'None', 'Relu', 'Relu6', 'Elu', 'LeakyRelu', 'Tanh', 'Sigmoid'} = 'None'")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      // input and filter are rank 4; the output shape stays unknown (see the
      // file header).
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &unused));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 4, &unused));
      c->set_output(0, c->UnknownShape());
      return OkStatus();
    });

namespace {

using DS2 = Eigen::DSizes<Eigen::DenseIndex, 2>;
using Bcast2 = Eigen::array<Eigen::DenseIndex, 2>;
using pdk_kernels::AssignActivation;
using pdk_kernels::ConvGeom;
using pdk_kernels::FusedActivation;

class FusedConv2DOp : public OpKernel {
 public:
  explicit FusedConv2DOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, pdk_kernels::ParseWindow(c, /*allow_explicit=*/true, &win_));
    OP_REQUIRES_OK(c, c->GetAttr("depthwise", &depthwise_));
    std::string norm;
    OP_REQUIRES_OK(c, c->GetAttr("normalization", &norm));
    if (norm == "FusedBatchNorm") {
      batch_norm_ = true;
    } else {
      OP_REQUIRES(c, norm == "BiasAdd",
                  errors::InvalidArgument("unknown normalization \"", norm, "\""));
    }
    OP_REQUIRES_OK(c, c->GetAttr("has_side_input", &side_));
    OP_REQUIRES_OK(c, c->GetAttr("epsilon", &epsilon_));
    std::string act;
    OP_REQUIRES_OK(c, c->GetAttr("activation", &act));
    OP_REQUIRES_OK(c, pdk_kernels::ParseFusedActivation(act, &activation_));
    OP_REQUIRES_OK(c, c->GetAttr("leakyrelu_alpha", &alpha_));
    int64 num_args = 0;
    OP_REQUIRES_OK(c, c->GetAttr("num_args", &num_args));
    const int64 want = (batch_norm_ ? 4 : 1) + (side_ ? 1 : 0);
    OP_REQUIRES(c, num_args == want,
                errors::InvalidArgument("num_args = ", num_args, " but normalization \"", norm,
                                        "\"", side_ ? " with a side input" : "", " takes ",
                                        want));
    pdk_compute::UseSingleThreadedOpenBlas();
  }

  void Compute(OpKernelContext* ctx) override {
    const char* op = type_string().c_str();
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const pdk::StatusOr<ConvGeom> geom =
        pdk_kernels::MakeConvGeom(op, win_, input.shape().pdk_shape(), "input",
                                  filter.shape().pdk_shape(), "filter", depthwise_);
    OP_REQUIRES_OK(ctx, geom.status());
    const ConvGeom& g = geom.value();
    const int64_t oc = g.out_depth, rows = g.n * g.oh * g.ow;
    const pdk::Shape conv_shape{g.n, g.oh, g.ow, oc};

    // Per-channel arguments: bias, or scale, offset, mean, variance.
    static const char* const kBnNames[] = {"scale", "offset", "mean", "variance"};
    const int nargs = batch_norm_ ? 4 : 1;
    const Tensor* args[4] = {};
    for (int i = 0; i < nargs; ++i) {
      const Tensor& a = ctx->input(2 + i);
      const char* name = batch_norm_ ? kBnNames[i] : "bias";
      OP_REQUIRES(ctx, a.shape().pdk_shape() == pdk::Shape{oc},
                  errors::InvalidArgument(op, ": ", name, ".shape ", a.shape().pdk_shape(),
                                          " must be [", oc, "], the output depth of input ",
                                          input.shape().pdk_shape(), " convolved with filter ",
                                          filter.shape().pdk_shape()));
      args[i] = &a;
    }
    const Tensor* side = nullptr;
    pdk_compute::BroadcastPlan<2> plan;
    pdk::Shape out_shape = conv_shape;
    if (side_) {
      side = &ctx->input(2 + nargs);
      pdk::StatusOr<pdk_compute::BroadcastPlan<2>> planned = pdk_compute::PlanBroadcast<2>(
          op, {"convolution output", "side_input"}, {conv_shape, side->shape().pdk_shape()});
      OP_REQUIRES_OK(ctx, planned.status());
      plan = std::move(planned).value();
      out_shape = plan.out;
    }
    // One pass, no broadcast.
    const bool fused_side = side_ && side->shape().pdk_shape() == conv_shape;
    const bool in_place = out_shape == conv_shape;

    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(out_shape), &out));
    Tensor temp;  // the convolution when the side input broadcasts it up
    if (!in_place) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape(conv_shape), &temp));
    }
    Tensor& conv_t = in_place ? *out : temp;
    const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    if (rows * oc > 0) {
      float* y = static_cast<float*>(conv_t.data());
      const float* x = static_cast<const float*>(input.data());
      const float* w = static_cast<const float*>(filter.data());
      if (depthwise_) {
        pdk_kernels::conv::DepthwiseForward<float>(dev, g, x, w, y);
      } else {
        OP_REQUIRES_OK(ctx, pdk_kernels::conv::Conv2DForward<float>(ctx, g, x, w, y));
      }
    }
    if (out->NumElements() == 0) return;

    // Pass 1: normalization [+ same-shape side] [+ activation when nothing follows].
    const FusedActivation act1 = (side_ && !fused_side) ? FusedActivation::kNone : activation_;
    auto data = [](const Tensor* t) { return static_cast<const float*>(t->data()); };
    std::vector<float> k;  // rsqrt(variance + epsilon) * scale, per channel
    if (batch_norm_) {
      k.resize(oc);
      const float* scale = data(args[0]);
      const float* var = data(args[3]);
      for (int64_t c = 0; c < oc; ++c) k[c] = (1.f / std::sqrt(var[c] + epsilon_)) * scale[c];
    }
    if (rows * oc > 0) {
      pdk_compute::Mapped<float, 2> y(static_cast<float*>(conv_t.data()), DS2(rows, oc));
      const Bcast2 per_row{rows, 1};
      auto chan = [&](const float* p) {
        return pdk_compute::ConstMapped<float, 2>(p, DS2(1, oc)).broadcast(per_row);
      };
      // y = act1(z [+ the same-shape side]), one pass.
      auto assign = [&](const auto& z) {
        if (fused_side) {
          AssignActivation(dev, y,
                           z + pdk_compute::ConstMapped<float, 2>(data(side), DS2(rows, oc)),
                           act1, alpha_);
        } else {
          AssignActivation(dev, y, z, act1, alpha_);
        }
      };
      if (!batch_norm_) {
        assign(y + chan(data(args[0])));
      } else {
        assign((y - chan(data(args[2]))) * chan(k.data()) + chan(data(args[1])));
      }
    }
    if (side_ && !fused_side) {  // Pass 2: broadcasting side input, then the activation.
      pdk_compute::EvalBinary<float, float>(dev, plan, static_cast<const float*>(conv_t.data()),
                                            data(side), static_cast<float*>(out->data()),
                                            Eigen::internal::scalar_sum_op<float>());
      pdk_compute::Flat<float> o(static_cast<float*>(out->data()), out->NumElements());
      AssignActivation(dev, o, o, activation_, alpha_);
    }
  }

 private:
  pdk_kernels::Window2D win_;
  bool depthwise_ = false;
  bool batch_norm_ = false;
  bool side_ = false;
  float epsilon_ = 1e-4f;
  FusedActivation activation_ = FusedActivation::kNone;
  float alpha_ = 0.2f;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("_PdkFusedConv2D").Device(DEVICE_PDK).TypeConstraint<float>("T"),
                        FusedConv2DOp);

}  // namespace tensorflow
