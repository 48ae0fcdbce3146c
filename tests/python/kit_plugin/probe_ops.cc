// Ops and kernels in TensorFlow's style that probe the kit's TF-style layer
// (include/pdk/tf) against the real TensorFlow; built and loaded next to PDK
// by tests/python/test_kit.py, never shipped.
//
//   _KitForward(x: float) -> (y: float, forwarded: bool)
//     y = 2 * x in a buffer from forward_input_or_allocate_output({0}); forwarded
//     says whether it is x's buffer (true only when nothing else holds x: the
//     kit's own view of x must not).
//   _KitAttrs(; i: int, f: float, b: bool, t: type, s: string, li: list(int),
//             lf: list(float), lb: list(bool), lt: list(type), ls: list(string),
//             shape: shape, shapes: list(shape), tensor: tensor) -> out: float
//     out lists every attr value, in that order, as floats (strings: their
//     lengths; shapes: their dims; the tensor: its float values).
//   _KitShapes(a: float, b: float) -> (merged: float, made: float, identity: float)
//     shape function only: merged = Merge(a, b); made = [a.dim0, 7, ?];
//     identity = the shape of input 0 reshaped by CopyFrom in Compute to
//     [num_elements] and set_output. Compute fills merged and made with zeros.
//   _KitBroadcastShape(a, b) -> z, _KitUnchangedShape(a) -> z,
//   _KitMatMulShape(a, b) -> z: shape functions only (no kernels), the kit's
//     BroadcastBinaryOpShapeFn, UnchangedShape and MatMulShape, compared with
//     TensorFlow's AddV2, Identity and MatMul.
//   A _KitForward kernel for device GPU: the kit reports it on stderr and
//     skips it; the rest of the library still registers.
#include <vector>

#include "pdk/tf/common_shape_fns.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

REGISTER_OP("_KitForward")
    .Input("x: float")
    .Output("y: float")
    .Output("forwarded: bool")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(0));
      c->set_output(1, c->Scalar());
      return OkStatus();
    });

class ForwardOp : public OpKernel {
 public:
  explicit ForwardOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const bool forwarded = y->SharesBufferWith(x);
    y->flat<float>().device(ctx->eigen_device<Eigen::ThreadPoolDevice>()) = x.flat<float>() * 2.0f;
    Tensor* f = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({}), &f));
    f->scalar<bool>()() = forwarded;
  }
};
REGISTER_KERNEL_BUILDER(Name("_KitForward").Device(DEVICE_PDK).HostMemory("forwarded"),
                        ForwardOp);

REGISTER_OP("_KitAttrs")
    .Output("out: float")
    .Attr("i: int")
    .Attr("f: float")
    .Attr("b: bool")
    .Attr("t: type")
    .Attr("s: string")
    .Attr("li: list(int)")
    .Attr("lf: list(float)")
    .Attr("lb: list(bool)")
    .Attr("lt: list(type)")
    .Attr("ls: list(string)")
    .Attr("shape: shape")
    .Attr("shapes: list(shape)")
    .Attr("tensor: tensor")
    .SetIsStateful();

class AttrsOp : public OpKernel {
 public:
  explicit AttrsOp(OpKernelConstruction* c) : OpKernel(c) {
    int64 i = 0;
    float f = 0;
    bool b = false;
    DataType t = DT_INVALID;
    std::string s;
    std::vector<int32> li;
    std::vector<float> lf;
    std::vector<bool> lb;
    std::vector<DataType> lt;
    std::vector<std::string> ls;
    TensorShape shape;
    std::vector<TensorShape> shapes;
    Tensor tensor;
    OP_REQUIRES(c, c->HasAttr("i") && !c->HasAttr("nope"),
                errors::Internal("HasAttr is wrong"));
    OP_REQUIRES_OK(c, c->GetAttr("i", &i));
    OP_REQUIRES_OK(c, c->GetAttr("f", &f));
    OP_REQUIRES_OK(c, c->GetAttr("b", &b));
    OP_REQUIRES_OK(c, c->GetAttr("t", &t));
    OP_REQUIRES_OK(c, c->GetAttr("s", &s));
    OP_REQUIRES_OK(c, c->GetAttr("li", &li));
    OP_REQUIRES_OK(c, c->GetAttr("lf", &lf));
    OP_REQUIRES_OK(c, c->GetAttr("lb", &lb));
    OP_REQUIRES_OK(c, c->GetAttr("lt", &lt));
    OP_REQUIRES_OK(c, c->GetAttr("ls", &ls));
    OP_REQUIRES_OK(c, c->GetAttr("shape", &shape));
    OP_REQUIRES_OK(c, c->GetAttr("shapes", &shapes));
    OP_REQUIRES_OK(c, c->GetAttr("tensor", &tensor));
    values_ = {float(i), f, float(b), float(t), float(s.size())};
    for (int32 v : li) values_.push_back(float(v));
    values_.insert(values_.end(), lf.begin(), lf.end());
    for (bool v : lb) values_.push_back(float(v));
    for (DataType v : lt) values_.push_back(float(v));
    for (const std::string& v : ls) values_.push_back(float(v.size()));
    for (int d = 0; d < shape.dims(); ++d) values_.push_back(float(shape.dim_size(d)));
    for (const TensorShape& sh : shapes)
      for (int d = 0; d < sh.dims(); ++d) values_.push_back(float(sh.dim_size(d)));
    const auto tv = tensor.flat<float>();
    for (int64 k = 0; k < tv.size(); ++k) values_.push_back(tv(k));
  }
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, TensorShape({static_cast<int64>(values_.size())}), &out));
    for (size_t k = 0; k < values_.size(); ++k) out->flat<float>()(k) = values_[k];
  }

 private:
  std::vector<float> values_;
};
REGISTER_KERNEL_BUILDER(Name("_KitAttrs").Device(DEVICE_PDK), AttrsOp);

// The kit's common_shape_fns (no kernels: only graphs are built).
REGISTER_OP("_KitBroadcastShape")
    .Input("a: float")
    .Input("b: float")
    .Output("z: float")
    .SetShapeFn(shape_inference::BroadcastBinaryOpShapeFn);
REGISTER_OP("_KitUnchangedShape")
    .Input("a: float")
    .Output("z: float")
    .SetShapeFn(shape_inference::UnchangedShape);
REGISTER_OP("_KitMatMulShape")
    .Input("a: float")
    .Input("b: float")
    .Output("z: float")
    .SetShapeFn(shape_inference::MatMulShape);

REGISTER_OP("_KitShapes")
    .Input("a: float")
    .Input("b: float")
    .Output("merged: float")
    .Output("made: float")
    .Output("identity: float")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      ShapeHandle merged;
      TF_RETURN_IF_ERROR(c->Merge(c->input(0), c->input(1), &merged));
      c->set_output(0, merged);
      ShapeHandle a;
      TF_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &a));
      c->set_output(1, c->MakeShape({c->Dim(a, 0), 7, c->UnknownDim()}));
      c->set_output(2, c->UnknownShape());
      return OkStatus();
    });

class ShapesOp : public OpKernel {
 public:
  explicit ShapesOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    Tensor* merged = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, a.shape(), &merged));
    merged->flat<float>().setZero();
    Tensor* made = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({a.dim_size(0), 7, 1}), &made));
    made->flat<float>().setZero();
    Tensor flat;
    OP_REQUIRES(ctx, flat.CopyFrom(a, TensorShape({a.NumElements()})),
                errors::Internal("CopyFrom failed"));
    ctx->set_output(2, flat);
  }
};
REGISTER_KERNEL_BUILDER(Name("_KitShapes").Device(DEVICE_PDK), ShapesOp);

REGISTER_KERNEL_BUILDER(Name("_KitForward").Device("GPU"), ForwardOp);

}  // namespace
}  // namespace tensorflow
