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
#include <cmath>
#include <string>
#include <vector>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "compute/gemm.h"
#include "kernels/nn/conv_compute.h"
#include "kernels/nn/fused_activation.h"
#include "kernels/nn/window.h"
#include "pdk/kernel.h"
#include "pdk/tf/op.h"

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

}  // namespace tensorflow

namespace pdk_kernels {
namespace {

using DS2 = Eigen::DSizes<Eigen::DenseIndex, 2>;
using Bcast2 = Eigen::array<Eigen::DenseIndex, 2>;

class FusedConv2DOp {
 public:
  pdk::Status Init(const pdk::Attrs& attrs) {
    PDK_RETURN_IF_ERROR(ParseWindow(attrs, /*allow_explicit=*/true, &win_));
    PDK_RETURN_IF_ERROR(attrs.Get("depthwise", &depthwise_));
    std::string norm;
    PDK_RETURN_IF_ERROR(attrs.Get("normalization", &norm));
    if (norm == "FusedBatchNorm") batch_norm_ = true;
    else if (norm != "BiasAdd")
      return pdk::InvalidArgument("unknown normalization \"", norm, "\"");
    PDK_RETURN_IF_ERROR(attrs.Get("has_side_input", &side_));
    PDK_RETURN_IF_ERROR(attrs.Get("epsilon", &epsilon_));
    std::string act;
    PDK_RETURN_IF_ERROR(attrs.Get("activation", &act));
    PDK_RETURN_IF_ERROR(ParseFusedActivation(act, &activation_));
    PDK_RETURN_IF_ERROR(attrs.Get("leakyrelu_alpha", &alpha_));
    int64_t num_args = 0;
    PDK_RETURN_IF_ERROR(attrs.Get("num_args", &num_args));
    const int64_t want = (batch_norm_ ? 4 : 1) + (side_ ? 1 : 0);
    if (num_args != want)
      return pdk::InvalidArgument("num_args = ", num_args, " but normalization \"", norm,
                                  "\"", side_ ? " with a side input" : "", " takes ", want);
    pdk_compute::UseSingleThreadedOpenBlas();
    return pdk::Status::OK();
  }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor input, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor filter, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(ConvGeom g, MakeConvGeom(ctx.op(), win_, input.shape(), "input",
                                                  filter.shape(), "filter", depthwise_));
    const int64_t oc = g.out_depth, rows = g.n * g.oh * g.ow;
    const pdk::Shape conv_shape{g.n, g.oh, g.ow, oc};

    // Per-channel arguments: bias, or scale, offset, mean, variance.
    static const char* const kBnNames[] = {"scale", "offset", "mean", "variance"};
    const int nargs = batch_norm_ ? 4 : 1;
    std::vector<pdk::Tensor> args;
    for (int i = 0; i < nargs; ++i) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor a, ctx.input(2 + i));
      const char* name = batch_norm_ ? kBnNames[i] : "bias";
      if (a.shape() != pdk::Shape{oc})
        return pdk::InvalidArgument(ctx.op(), ": ", name, ".shape ", a.shape(),
                                    " must be [", oc, "], the output depth of input ",
                                    input.shape(), " convolved with filter ", filter.shape());
      args.push_back(std::move(a));
    }
    pdk::Tensor side;
    pdk_compute::BroadcastPlan<2> plan;
    pdk::Shape out_shape = conv_shape;
    if (side_) {
      PDK_ASSIGN_OR_RETURN(side, ctx.input(2 + nargs));
      PDK_ASSIGN_OR_RETURN(plan, pdk_compute::PlanBroadcast<2>(
                                     ctx.op(), {"convolution output", "side_input"},
                                     {conv_shape, side.shape()}));
      out_shape = plan.out;
    }
    const bool fused_side = side_ && side.shape() == conv_shape;  // one pass, no broadcast
    const bool in_place = out_shape == conv_shape;

    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    pdk::Tensor temp;  // the convolution when the side input broadcasts it up
    if (!in_place) {
      PDK_ASSIGN_OR_RETURN(temp, ctx.allocate_temp(TF_FLOAT, conv_shape));
    }
    pdk::Tensor& conv_t = in_place ? out : temp;
    if (rows * oc > 0) {
      float* y = conv_t.data<float>();
      if (depthwise_) {
        conv::DepthwiseForward<float>(ctx, g, input.data<float>(), filter.data<float>(), y);
      } else {
        PDK_RETURN_IF_ERROR(
            conv::Conv2DForward<float>(ctx, g, input.data<float>(), filter.data<float>(), y));
      }
    }
    if (out.num_elements() == 0) return pdk::Status::OK();

    const auto& dev = pdk_compute::Device(ctx);
    // Pass 1: normalization [+ same-shape side] [+ activation when nothing follows].
    const FusedActivation act1 = (side_ && !fused_side) ? FusedActivation::kNone : activation_;
    std::vector<float> k;  // rsqrt(variance + epsilon) * scale, per channel
    if (batch_norm_) {
      k.resize(oc);
      const float* scale = args[0].data<float>();
      const float* var = args[3].data<float>();
      for (int64_t c = 0; c < oc; ++c) k[c] = (1.f / std::sqrt(var[c] + epsilon_)) * scale[c];
    }
    if (rows * oc > 0) {
      auto y = pdk_compute::view<float, 2>(conv_t, DS2(rows, oc));
      const Bcast2 per_row{rows, 1};
      auto chan = [&](const float* p) {
        return pdk_compute::ConstMapped<float, 2>(p, DS2(1, oc)).broadcast(per_row);
      };
      if (!batch_norm_) {
        const auto z = y + chan(args[0].data<float>());
        if (fused_side) {
          AssignActivation(dev, y, z + pdk_compute::cview<float, 2>(side, DS2(rows, oc)), act1,
                           alpha_);
        } else {
          AssignActivation(dev, y, z, act1, alpha_);
        }
      } else {
        const auto z = (y - chan(args[2].data<float>())) * chan(k.data()) +
                       chan(args[1].data<float>());
        if (fused_side) {
          AssignActivation(dev, y, z + pdk_compute::cview<float, 2>(side, DS2(rows, oc)), act1,
                           alpha_);
        } else {
          AssignActivation(dev, y, z, act1, alpha_);
        }
      }
    }
    if (side_ && !fused_side) {  // Pass 2: broadcasting side input, then the activation.
      pdk_compute::EvalBinary<float, float>(dev, plan, conv_t.data<float>(), side.data<float>(),
                                            out.data<float>(),
                                            Eigen::internal::scalar_sum_op<float>());
      auto o = pdk_compute::flat<float>(out);
      AssignActivation(dev, o, o, activation_, alpha_);
    }
    return pdk::Status::OK();
  }

 private:
  Window2D win_;
  bool depthwise_ = false;
  bool batch_norm_ = false;
  bool side_ = false;
  float epsilon_ = 1e-4f;
  FusedActivation activation_ = FusedActivation::kNone;
  float alpha_ = 0.2f;
};

}  // namespace

PDK_REGISTER_KERNELS(PdkFusedConv2D, r) {
  r.Add(pdk::KernelDef<FusedConv2DOp>("_PdkFusedConv2D").Type<float>("T").Async());
}

}  // namespace pdk_kernels
