// _PdkFusedElementwise: PDK's own op for a connected group of elementwise ops,
// produced only by PDK's graph optimizer (src/graph/rewrites/
// elementwise_fusion.cc). Not a TensorFlow op: defined here with REGISTER_OP
// (pdk/tf/op.h), next to its kernel.
//
//   _PdkFusedElementwise(x: Tin; T, num_outputs, ops, args, outputs)
//       -> z: num_outputs * T
//     x: the group's inputs, of any shapes; T = float32 or float64.
//     ops/args/outputs: the group as a program (src/kernels/math/
//       fused_elementwise.h): instruction j applies TensorFlow op ops[j] to
//       its operands (inputs or earlier results), with that op's semantics:
//       unary ops, binary ops with NumPy broadcasting, the *Grad ops, Cast
//       (any dtype PDK's Cast takes -> T), SelectV2 (bool condition), AddN
//       (as a chain of equal-shape additions).
//     z[k]: the value of instruction outputs[k], shaped as that op's output.
//
// Evaluation. When every value of the group has one shape S or holds one
// element (the common case: same-shape tensors and scalars), the kernel
// evaluates the one-element values once and then the whole program block by
// block (kBlock elements; the intermediates of a block stay in L1) over S,
// the blocks spread over the device pool: one pass over memory instead of
// one per op. Row values (S with its last dimension 1: LayerNormalization's
// mean and variance, softmax's sum) and column values (only S's last
// dimension: a gamma, a bias) join that path: the instructions whose result
// is not of shape S run first, op by op over their own shapes with the
// unfused kernels' code (they never read a value of shape S), and the
// blocked pass reads row and column values expanded to S block by block
// (not for Pow, Maximum and Minimum, see ExactWhenExpanded). Any other
// broadcasting inside the group is evaluated op by op over whole tensors
// with exactly the unfused kernels' broadcasting code (compute/broadcast.h).
//
// Results are bit-identical to PDK's unfused kernels: each instruction is the
// unfused kernel's own Eigen expression (the functors of cwise_functors.h and
// relu_functors.h, Eigen's scalar_*_op), evaluated with the same split into
// packets and a scalar tail (blocks start at multiples of kBlock, a multiple
// of every packet size, so exactly the last size % packet elements of S take
// the scalar path, as in Eigen's executor for the unfused op), a one-element
// operand as a constant as compute/broadcast.h does, and every intermediate
// rounded to T as it is stored. This file and the unfused kernels' files are
// compiled with -ffp-contract=off (CMakeLists.txt).
//
// Errors (InvalidArgument): the unfused op's own check, with its message,
// prefixed by the op name and the fused node's name (shapes that don't
// broadcast, *Grad operands of different sizes or shapes); a malformed
// program (operand or output index out of range, wrong dtype).
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/math/cwise_functors.h"
#include "kernels/math/fused_elementwise.h"
#include "kernels/nn/relu_functors.h"
#include "pdk/tf/op.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {

// Defined (replayed) before the kernel below. Output shapes are unknown to
// shape inference (the C API's default shape function).
REGISTER_OP("_PdkFusedElementwise")
    .Input("x: Tin")
    .Output("z: num_outputs * T")
    .Attr("Tin: list(type)")
    .Attr("T: {float, double}")
    .Attr("num_outputs: int >= 1")
    .Attr("ops: list(int)")
    .Attr("args: list(int)")
    .Attr("outputs: list(int)");

namespace {

namespace ei = Eigen::internal;
namespace functors = ::pdk_kernels::functors;
namespace relu = ::pdk_kernels::relu;
namespace unary = ::pdk_kernels::unary;
using pdk_compute::ConstFlat;
using pdk_compute::Flat;
using pdk_fused::Code;
using pdk_fused::Kind;

// Elements per block: a multiple of 4 packets for every ISA (Eigen's unrolled
// loop), 4 KiB of float32 per intermediate.
constexpr int64_t kBlock = 1024;

// A relu.cc functor (Fn()(x, alpha)) as a unary Apply.
template <class Fn>
struct ReluApply {
  template <class X>
  static auto Apply(const X& x) {
    using T = std::remove_const_t<typename Eigen::internal::traits<X>::Scalar>;
    return Fn()(x, T(0));
  }
};

// Calls the visitor's method for op `c` with the op's functor.
template <class T, class V>
void Visit(Code c, V& v) {
  switch (c) {
#define PDK_U_(NAME) \
  case Code::k##NAME: return v.template Unary<unary::NAME>();
    PDK_U_(Neg) PDK_U_(Square) PDK_U_(Abs) PDK_U_(Sign) PDK_U_(Round) PDK_U_(Sqrt)
    PDK_U_(Rsqrt) PDK_U_(Exp) PDK_U_(Log) PDK_U_(Log1p) PDK_U_(Reciprocal) PDK_U_(Floor)
    PDK_U_(Ceil) PDK_U_(Sigmoid) PDK_U_(Tanh) PDK_U_(Erf) PDK_U_(Erfc)
#undef PDK_U_
    case Code::kRelu: return v.template Unary<ReluApply<relu::ReluFn>>();
    case Code::kRelu6: return v.template Unary<ReluApply<relu::Relu6Fn>>();
    case Code::kElu: return v.template Unary<ReluApply<relu::EluFn>>();
    case Code::kAddV2:
    case Code::kAdd: return v.Binary(ei::scalar_sum_op<T, T>());
    case Code::kSub: return v.Binary(ei::scalar_difference_op<T, T>());
    case Code::kMul: return v.Binary(ei::scalar_product_op<T, T>());
    case Code::kRealDiv: return v.Binary(ei::scalar_quotient_op<T, T>());
    case Code::kDivNoNan: return v.Binary(functors::DivNoNan<T>());
    case Code::kMaximum: return v.Binary(ei::scalar_max_op<T, T, Eigen::PropagateNaN>());
    case Code::kMinimum: return v.Binary(ei::scalar_min_op<T, T, Eigen::PropagateNaN>());
    case Code::kSquaredDifference: return v.Binary(functors::SquaredDifference<T>());
    case Code::kPow: return v.Binary(ei::scalar_pow_op<T, T>());
    case Code::kSigmoidGrad: return v.Grad(functors::SigmoidGrad<T>());
    case Code::kTanhGrad: return v.Grad(functors::TanhGrad<T>());
    case Code::kSqrtGrad: return v.Grad(functors::SqrtGrad<T>());
    case Code::kRsqrtGrad: return v.Grad(functors::RsqrtGrad<T>());
    case Code::kReciprocalGrad: return v.Grad(functors::ReciprocalGrad<T>());
    case Code::kReluGrad: return v.ReluGrad(relu::ReluGradFn());
    case Code::kRelu6Grad: return v.ReluGrad(relu::Relu6GradFn());
    case Code::kEluGrad: return v.ReluGrad(relu::EluGradFn());
    case Code::kCast: return v.Cast();
    case Code::kSelectV2: return v.Select();
    case Code::kAddN: return v.Grad(ei::scalar_sum_op<T, T>());  // equal shapes
  }
}

// Calls f(Src{}) for Cast's source dtype.
template <class F>
void VisitCastSource(TF_DataType dt, F&& f) {
  switch (dt) {
    case TF_FLOAT: return f(float{});
    case TF_DOUBLE: return f(double{});
    case TF_HALF: return f(Eigen::half{});
    case TF_BFLOAT16: return f(Eigen::bfloat16{});
    case TF_INT32: return f(int32_t{});
    case TF_INT64: return f(int64_t{});
    case TF_BOOL: return f(bool{});
    default: return;
  }
}

bool IsCastSource(TF_DataType dt) {
  bool ok = false;
  VisitCastSource(dt, [&](auto) { ok = true; });
  return ok;
}

// One instruction over `len` elements on the calling thread: operand i is
// `len` elements at a[i] (full[i]) or one element broadcast (!full[i]).
template <class T>
struct BlockEval {
  int64_t len;
  const void* a[3];
  bool full[3];
  TF_DataType cast_src;
  T* out;

  template <class U>
  ConstFlat<U> in(int i) const {
    return ConstFlat<U>(static_cast<const U*>(a[i]), len);
  }
  Flat<T> o() const { return Flat<T>(out, len); }

  template <class F>
  void Unary() {
    o() = F::Apply(in<T>(0));
  }
  // As pdk_compute::EvalBinary: flat, or a one-element side as a constant.
  template <class F>
  void Binary(const F& f) {
    if (full[0] && full[1]) {
      o() = in<T>(0).binaryExpr(in<T>(1), f);
    } else if (!full[0]) {
      const ConstFlat<T> b = in<T>(1);
      o() = b.constant(*static_cast<const T*>(a[0])).binaryExpr(b, f);
    } else {
      const ConstFlat<T> x = in<T>(0);
      o() = x.binaryExpr(x.constant(*static_cast<const T*>(a[1])), f);
    }
  }
  template <class F>
  void Grad(const F& f) {  // both operands full (equal shapes)
    o() = in<T>(0).binaryExpr(in<T>(1), f);
  }
  template <class Fn>
  void ReluGrad(const Fn& fn) {  // both operands full (equal shapes)
    o() = fn(in<T>(0), in<T>(1), T(0));
  }
  void Cast() {
    VisitCastSource(cast_src, [&](auto s) {
      using Src = decltype(s);
      o() = in<Src>(0).template cast<T>();
    });
  }
  // As compute/broadcast.h's SelectFlat: no arithmetic.
  void Select() {
    const auto* c = static_cast<const unsigned char*>(a[0]);
    const T* t = static_cast<const T*>(a[1]);
    const T* e = static_cast<const T*>(a[2]);
    for (int64_t i = 0; i < len; ++i) {
      const T x = t[full[1] ? i : 0], y = e[full[2] ? i : 0];
      out[i] = c[full[0] ? i : 0] != 0 ? x : y;
    }
  }
};

// One instruction over whole tensors with the unfused kernels' broadcasting,
// on the device pool.
template <class T>
struct TensorEval {
  const Eigen::ThreadPoolDevice& dev;
  const char* label;
  const Tensor* a[3];
  const Tensor* out;
  Status status;

  int64_t n() const { return out->NumElements(); }
  template <class U>
  ConstFlat<U> in(int i) const {
    return ConstFlat<U>(static_cast<const U*>(a[i]->data()), a[i]->NumElements());
  }
  Flat<T> o() const { return Flat<T>(static_cast<T*>(out->data()), n()); }

  template <class F>
  void Unary() {
    if (n() > 0) o().device(dev) = F::Apply(in<T>(0));
  }
  template <class F>
  void Binary(const F& f) {
    auto plan = pdk_compute::PlanBroadcastOf<2>(
        label, {"x", "y"}, {&a[0]->shape().pdk_shape(), &a[1]->shape().pdk_shape()});
    if (!plan.ok()) {
      status = plan.status();
      return;
    }
    pdk_compute::EvalBinary<T, T>(dev, *plan, static_cast<const T*>(a[0]->data()),
                                  static_cast<const T*>(a[1]->data()),
                                  static_cast<T*>(out->data()), f);
  }
  template <class F>
  void Grad(const F& f) {  // cwise_binary.cc's GradOp: equal element counts
    if (n() > 0) o().device(dev) = in<T>(0).binaryExpr(in<T>(1), f);
  }
  template <class Fn>
  void ReluGrad(const Fn& fn) {
    if (n() > 0) o().device(dev) = fn(in<T>(0), in<T>(1), T(0));
  }
  void Cast() {
    if (n() == 0) return;
    VisitCastSource(static_cast<TF_DataType>(a[0]->dtype()), [&](auto s) {
      using Src = decltype(s);
      o().device(dev) = in<Src>(0).template cast<T>();
    });
  }
  void Select() {
    auto plan = pdk_compute::PlanBroadcastOf<3>(
        label, {"condition", "t", "e"},
        {&a[0]->shape().pdk_shape(), &a[1]->shape().pdk_shape(), &a[2]->shape().pdk_shape()});
    if (!plan.ok()) {
      status = plan.status();
      return;
    }
    pdk_compute::EvalSelect<T>(dev, *plan, static_cast<const bool*>(a[0]->data()),
                               static_cast<const T*>(a[1]->data()),
                               static_cast<const T*>(a[2]->data()), static_cast<T*>(out->data()));
  }
};

struct Instr {
  Code code;
  Kind kind;
  int arg[3];
};

template <class T>
class FusedElementwiseOp : public OpKernel {
 public:
  explicit FusedElementwiseOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadProgram(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const int num_inputs = ctx->num_inputs();
    const int num_values = num_inputs + static_cast<int>(program_.size());
    OP_REQUIRES_OK(ctx, Validate(ctx, num_inputs));

    // Every value's shape: the inputs' are their views' own (no copy), the
    // instructions' are computed into `results`.
    std::vector<const TensorShape*> shapes(num_values);
    std::vector<TensorShape> results(program_.size());
    std::vector<TF_DataType> dtypes(num_values, pdk::kDataType<T>);
    for (int i = 0; i < num_inputs; ++i) {
      const Tensor& x = ctx->input(i);
      shapes[i] = &x.shape();
      dtypes[i] = static_cast<TF_DataType>(x.dtype());
    }
    OP_REQUIRES_OK(ctx, ctx->status());  // an input that could not be read
    // Shapes (and the unfused ops' checks) in program order.
    for (size_t j = 0; j < program_.size(); ++j) {
      shapes[num_inputs + j] = &results[j];
      OP_REQUIRES_OK(ctx, InferShape(program_[j], labels_[j], dtypes, shapes, &results[j]));
    }

    // Fast path: every value has shape S (the largest) or one element.
    int64_t n = 0;
    const TensorShape* s = nullptr;
    for (int v = 0; v < num_values; ++v)
      if (!s || shapes[v]->num_elements() > n) {
        n = shapes[v]->num_elements();
        s = shapes[v];
      }
    bool fast = true;  // also when every value holds one element (or none)
    for (int v = 0; v < num_values && fast; ++v)
      fast = shapes[v]->num_elements() == 1 || *shapes[v] == *s;
    std::vector<Layout> layout;
    if (!fast && !(BroadcastLayouts(shapes, *s, &layout) && ExactWhenExpanded(layout, num_inputs))) {
      std::vector<Tensor*> outs(outputs_.size());
      for (size_t k = 0; k < outputs_.size(); ++k) {
        OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(k), *shapes[outputs_[k]],
                                                 &outs[k]));
      }
      std::vector<Tensor> temps;
      OP_REQUIRES_OK(ctx, RunTensors(ctx, shapes, outs, &temps));
      return;
    }
    // The fast path reads inputs through their data pointers, valid for the
    // whole Compute. The inputs are borrowed views, which hold no handle, so
    // TensorFlow may forward an input's buffer (one no other op reads) to an
    // output.
    std::vector<const void*> in_data(num_inputs);
    for (int i = 0; i < num_inputs; ++i) in_data[i] = ctx->input(i).data();
    std::vector<Tensor*> outs(outputs_.size(), nullptr);
    OP_REQUIRES_OK(ctx, AllocateOutputs(ctx, shapes, dtypes, num_inputs, n, &outs));
    // Row / column broadcasting: the values not of shape S (none reads a
    // value of shape S) first, op by op over their own shapes as the general
    // path computes them; the blocked pass then reads them expanded.
    std::vector<const void*> pre(num_values, nullptr);
    std::vector<Tensor> temps;
    if (!layout.empty()) OP_REQUIRES_OK(ctx, RunTensors(ctx, shapes, outs, &temps, &layout, &pre));
    const int64_t cols = s->dims() > 0 ? std::max<int64_t>(1, s->dim_size(s->dims() - 1)) : 1;
    RunBlocks(ctx->eigen_device<Eigen::ThreadPoolDevice>(), in_data, shapes, dtypes, n, cols,
              outs, layout, pre);
  }

 private:
  // The program from attrs ops, args and outputs.
  Status ReadProgram(OpKernelConstruction* c) {
    std::vector<int64> ops, args, outputs;
    TF_RETURN_IF_ERROR(c->GetAttr("ops", &ops));
    TF_RETURN_IF_ERROR(c->GetAttr("args", &args));
    TF_RETURN_IF_ERROR(c->GetAttr("outputs", &outputs));
    size_t k = 0;
    for (int64_t code : ops) {
      if (code < 0 || code >= pdk_fused::kNumFusedOps)
        return errors::InvalidArgument("_PdkFusedElementwise '", name(), "': unknown op code ",
                                       code);
      Instr in{static_cast<Code>(code), pdk_fused::kFusedOps[code].kind, {-1, -1, -1}};
      const int arity = pdk_fused::Arity(in.kind);
      if (k + arity > args.size()) break;
      for (int i = 0; i < arity; ++i) in.arg[i] = static_cast<int>(args[k++]);
      program_.push_back(in);
      const std::string_view op = pdk_fused::kFusedOps[code].name;
      split_dependent_.push_back(op == "Pow" || op == "Maximum" || op == "Minimum");
      labels_.push_back(std::string(pdk_fused::kFusedOps[code].name) +
                        " (fused into _PdkFusedElementwise '" + name() + "')");
    }
    if (program_.size() != ops.size() || k != args.size())
      return errors::InvalidArgument("_PdkFusedElementwise '", name(), "': ", args.size(),
                                     " operands do not fit the ", ops.size(), " ops");
    outputs_.assign(outputs.begin(), outputs.end());
    return OkStatus();
  }

  Status Validate(const OpKernelContext* ctx, int num_inputs) const {
    const int num_values = num_inputs + static_cast<int>(program_.size());
    for (size_t j = 0; j < program_.size(); ++j)
      for (int i = 0; i < pdk_fused::Arity(program_[j].kind); ++i)
        if (program_[j].arg[i] < 0 || program_[j].arg[i] >= num_inputs + static_cast<int>(j))
          return errors::InvalidArgument("_PdkFusedElementwise '", name(), "': op ", j,
                                         " reads value ", program_[j].arg[i], " (", num_inputs,
                                         " inputs, ", j, " earlier ops)");
    if (static_cast<int>(outputs_.size()) != ctx->num_outputs())
      return errors::InvalidArgument("_PdkFusedElementwise '", name(), "': ", outputs_.size(),
                                     " outputs listed for ", ctx->num_outputs());
    for (size_t k = 0; k < outputs_.size(); ++k) {
      if (outputs_[k] < num_inputs || outputs_[k] >= num_values ||
          std::count(outputs_.begin(), outputs_.end(), outputs_[k]) != 1)
        return errors::InvalidArgument("_PdkFusedElementwise '", name(), "': output ", k,
                                       " names value ", outputs_[k],
                                       ", not one op result listed once");
    }
    return OkStatus();
  }

  // *out: the shape of instruction `in`'s result, with the unfused kernel's
  // checks; its operands' shapes are in `shapes`.
  Status InferShape(const Instr& in, const std::string& label,
                    const std::vector<TF_DataType>& dtypes,
                    const std::vector<const TensorShape*>& shapes, TensorShape* out) const {
    const TF_DataType t = pdk::kDataType<T>;
    for (int i = 0; i < pdk_fused::Arity(in.kind); ++i) {
      const TF_DataType dt = dtypes[in.arg[i]];
      const bool ok = in.kind == Kind::kCast     ? IsCastSource(dt)
                      : in.kind == Kind::kSelect && i == 0 ? dt == TF_BOOL
                                                            : dt == t;
      if (!ok)
        return errors::InvalidArgument(label, ": operand ", i, " has dtype ",
                                       pdk::DataTypeName(dt));
    }
    const pdk::Shape& a = shapes[in.arg[0]]->pdk_shape();
    switch (in.kind) {
      case Kind::kUnary:
      case Kind::kCast:
        *out = *shapes[in.arg[0]];
        return OkStatus();
      case Kind::kBinary: {
        const auto plan = pdk_compute::PlanBroadcastOf<2>(
            label.c_str(), {"x", "y"}, {&a, &shapes[in.arg[1]]->pdk_shape()});
        TF_RETURN_IF_ERROR(plan.status());
        *out = TensorShape(plan->out);
        return OkStatus();
      }
      case Kind::kGrad: {
        const pdk::Shape& b = shapes[in.arg[1]]->pdk_shape();
        if (a.num_elements() != b.num_elements())
          return errors::InvalidArgument(label, ": y.shape ", a, " and dy.shape ", b,
                                         " must have the same number of elements");
        *out = *shapes[in.arg[0]];
        return OkStatus();
      }
      case Kind::kAddN:
        TF_RETURN_IF_ERROR(pdk::CheckSameShape(label.c_str(), "inputs[0]", a, "inputs[i]",
                                               shapes[in.arg[1]]->pdk_shape()));
        *out = *shapes[in.arg[0]];
        return OkStatus();
      case Kind::kReluGrad:
        TF_RETURN_IF_ERROR(pdk::CheckSameShape(
            label.c_str(), "gradients", a, in.code == Code::kEluGrad ? "outputs" : "features",
            shapes[in.arg[1]]->pdk_shape()));
        *out = *shapes[in.arg[0]];
        return OkStatus();
      case Kind::kSelect: {
        const auto plan = pdk_compute::PlanBroadcastOf<3>(
            label.c_str(), {"condition", "t", "e"},
            {&a, &shapes[in.arg[1]]->pdk_shape(), &shapes[in.arg[2]]->pdk_shape()});
        TF_RETURN_IF_ERROR(plan.status());
        *out = TensorShape(plan->out);
        return OkStatus();
      }
    }
    return OkStatus();
  }

  // The fast path's outputs. Output k (value v, computed by instruction j) may
  // take the buffer of a full input i of v's shape and dtype T that no
  // instruction after j reads: within a block, every read of i then precedes
  // the write of v, or is the same element in the same instruction (an
  // elementwise functor reads element e before it writes element e), and
  // blocks cover disjoint elements. TensorFlow forwards only a buffer no one
  // else holds (TF_ForwardInputOrAllocateOutput), each input to one output.
  // The candidates are a list computed here (forward_input_or_allocate_output
  // with a vector, as TensorFlow's takes an ArraySlice).
  Status AllocateOutputs(OpKernelContext* ctx, const std::vector<const TensorShape*>& shapes,
                         const std::vector<TF_DataType>& dtypes, int num_inputs, int64_t n,
                         std::vector<Tensor*>* outs) const {
    std::vector<int> last_use(num_inputs, -1);
    for (size_t j = 0; j < program_.size(); ++j)
      for (int i = 0; i < pdk_fused::Arity(program_[j].kind); ++i)
        if (program_[j].arg[i] < num_inputs) last_use[program_[j].arg[i]] = static_cast<int>(j);
    std::vector<bool> taken(num_inputs, false);
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const int v = outputs_[k], j = v - num_inputs;
      std::vector<int> candidates;
      for (int i = 0; i < num_inputs && j >= 0; ++i)
        if (!taken[i] && last_use[i] <= j && dtypes[i] == pdk::kDataType<T> &&
            *shapes[i] == *shapes[v] && shapes[i]->num_elements() > 1 &&
            shapes[v]->num_elements() == n)  // values of shape S only (blocked pass)
          candidates.push_back(i);
      int forwarded = -1;
      TF_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(
          candidates, static_cast<int>(k), *shapes[v], &(*outs)[k], &forwarded));
      if (forwarded >= 0) taken[forwarded] = true;
    }
    return OkStatus();
  }

  // Row / column broadcasting in the fast path: how a value is laid out
  // against S, the shape of the group's largest value.
  enum class Layout { kFull, kOne, kRow, kColumn };

  // *layout for every value if each is of shape S, holds one element, is a
  // row value (S with its last dimension 1: a per-row statistic, as
  // LayerNormalization's mean or softmax's sum) or a column value (only the
  // last dimension, S's, is not 1: a per-channel vector, as gamma or a
  // bias); false (and the general path) for any other broadcasting.
  static bool BroadcastLayouts(const std::vector<const TensorShape*>& shapes,
                               const TensorShape& s, std::vector<Layout>* layout) {
    const int r = s.dims();
    if (r < 1) return false;
    const int64_t c = s.dim_size(r - 1);
    layout->assign(shapes.size(), Layout::kFull);
    for (size_t v = 0; v < shapes.size(); ++v) {
      const TensorShape& x = *shapes[v];
      if (x == s) continue;
      if (x.num_elements() == 1) {
        (*layout)[v] = Layout::kOne;
        continue;
      }
      bool row = x.dims() == r && c > 1 && x.dim_size(r - 1) == 1;
      for (int d = 0; row && d < r - 1; ++d) row = x.dim_size(d) == s.dim_size(d);
      const bool column = x.dims() >= 1 && x.dims() <= r && x.dim_size(x.dims() - 1) == c &&
                          x.num_elements() == c && s.num_elements() > c;
      if (!row && !column) return false;
      (*layout)[v] = row ? Layout::kRow : Layout::kColumn;
    }
    return true;
  }

  // Whether every instruction of shape S that reads a row or column value is
  // exact per element whichever packet/scalar split evaluates it, so that
  // the blocked pass over expanded values equals the unfused broadcasting
  // kernel bit for bit: not Pow (packet and scalar pow differ in the last
  // bit), Maximum and Minimum (they differ on NaN).
  bool ExactWhenExpanded(const std::vector<Layout>& layout, int num_inputs) const {
    for (size_t j = 0; j < program_.size(); ++j) {
      if (layout[num_inputs + j] != Layout::kFull || !split_dependent_[j]) continue;
      for (int i = 0; i < pdk_fused::Arity(program_[j].kind); ++i) {
        const Layout l = layout[program_[j].arg[i]];
        if (l == Layout::kRow || l == Layout::kColumn) return false;
      }
    }
    return true;
  }

  // The fast path: one-element values once, then the rest block by block.
  // With `layout` (row / column broadcasting), the values not of shape S are
  // precomputed (`pre`) and row and column values are expanded per block
  // (`cols`: S's last dimension).
  void RunBlocks(const Eigen::ThreadPoolDevice& dev, const std::vector<const void*>& in_data,
                 const std::vector<const TensorShape*>& shapes,
                 const std::vector<TF_DataType>& dtypes, int64_t n, int64_t cols,
                 const std::vector<Tensor*>& outs, const std::vector<Layout>& layout,
                 const std::vector<const void*>& pre) const {
    const int num_inputs = static_cast<int>(in_data.size());
    const int num_values = num_inputs + static_cast<int>(program_.size());
    const bool mixed = !layout.empty();
    auto is_full = [&](int v) {
      return mixed ? layout[v] == Layout::kFull : shapes[v]->num_elements() != 1;
    };
    auto is_expanded = [&](int v) {
      return mixed && (layout[v] == Layout::kRow || layout[v] == Layout::kColumn);
    };

    // Where each value lives: output tensor, scratch slot, or (one element)
    // scalar storage.
    std::vector<int> out_of(num_values, -1);
    for (size_t k = 0; k < outputs_.size(); ++k) out_of[outputs_[k]] = static_cast<int>(k);
    std::vector<T> scalar(num_values);
    std::vector<const void*> scalar_ptr(num_values, nullptr);
    for (int i = 0; i < num_inputs; ++i) scalar_ptr[i] = in_data[i];
    for (size_t j = 0; j < program_.size(); ++j) {
      const int v = num_inputs + static_cast<int>(j);
      if (is_full(v)) continue;
      if (mixed) {  // precomputed
        scalar_ptr[v] = pre[v];
        continue;
      }
      BlockEval<T> e{1, {}, {true, true, true}, TF_FLOAT, &scalar[v]};
      for (int i = 0; i < pdk_fused::Arity(program_[j].kind); ++i)
        e.a[i] = scalar_ptr[program_[j].arg[i]];
      e.cast_src = dtypes[program_[j].arg[0]];
      Visit<T>(program_[j].code, e);
      scalar_ptr[v] = &scalar[v];
      if (out_of[v] >= 0) *static_cast<T*>(outs[out_of[v]]->data()) = scalar[v];
    }

    // Scratch slots for full intermediates, reused after their last read.
    std::vector<int> last_use(num_values, -1), slot(num_values, -1);
    for (size_t j = 0; j < program_.size(); ++j)
      for (int i = 0; i < pdk_fused::Arity(program_[j].kind); ++i)
        last_use[program_[j].arg[i]] = static_cast<int>(j);
    std::vector<int> free_slots;
    int num_slots = 0;
    for (size_t j = 0; j < program_.size(); ++j) {
      const int v = num_inputs + static_cast<int>(j);
      if (!is_full(v)) continue;
      if (out_of[v] < 0) {
        if (free_slots.empty()) {
          slot[v] = num_slots++;
        } else {
          slot[v] = free_slots.back();
          free_slots.pop_back();
        }
      }
      for (int i = 0; i < pdk_fused::Arity(program_[j].kind); ++i) {
        const int u = program_[j].arg[i];
        if (slot[u] >= 0 && last_use[u] == static_cast<int>(j) &&
            std::find(free_slots.begin(), free_slots.end(), slot[u]) == free_slots.end())
          free_slots.push_back(slot[u]);
      }
    }

    std::vector<const char*> base(num_values, nullptr);  // full inputs / outputs
    for (int i = 0; i < num_inputs; ++i)
      base[i] = static_cast<const char*>(in_data[i]);
    for (int v = num_inputs; v < num_values; ++v)
      if (out_of[v] >= 0) base[v] = static_cast<const char*>(outs[out_of[v]]->data());
    std::vector<int> elem_size(num_values, sizeof(T));
    for (int i = 0; i < num_inputs; ++i) elem_size[i] = static_cast<int>(TF_DataTypeSize(dtypes[i]));

    int64_t bytes_in = 0;
    for (int i = 0; i < num_inputs; ++i)
      if (is_full(i)) bytes_in += elem_size[i];
    // Compute: 1 cycle per element per instruction, the packet-vectorized
    // cost of these ops (the 9-instruction LSTM cell on 32x64 float32 runs
    // in ~1 us: ~0.2 cycles per element and instruction, transcendental ones
    // included). At 8 a 2048-element cell was split over the pool and the
    // caller waited on a worker's wake-up (~30 us) for ~1 us of work.
    const Eigen::TensorOpCost cost(double(kBlock * bytes_in),
                                   double(kBlock * sizeof(T) * outputs_.size()),
                                   double(kBlock * program_.size()));
    bool any_full = false;
    for (int v = num_inputs; v < num_values; ++v) any_full = any_full || is_full(v);
    if (!any_full || n == 0) return;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    // Row and column values a full instruction reads: one expansion slot
    // each (bytes, as a Cast's source may be wider than T).
    std::vector<int> expanded_slot(num_values, -1);
    std::vector<int> expanded;
    for (size_t j = 0; j < program_.size(); ++j) {
      if (!is_full(num_inputs + static_cast<int>(j))) continue;
      for (int i = 0; i < pdk_fused::Arity(program_[j].kind); ++i) {
        const int u = program_[j].arg[i];
        if (is_expanded(u) && expanded_slot[u] < 0) {
          expanded_slot[u] = static_cast<int>(expanded.size());
          expanded.push_back(u);
        }
      }
    }
    for (int v = num_inputs; v < num_values; ++v)
      if (is_expanded(v)) elem_size[v] = sizeof(T);
    auto run = [&, num_slots](Eigen::Index first, Eigen::Index last) {
      std::vector<T> scratch(static_cast<size_t>(num_slots) * kBlock);
      std::vector<char> wide(expanded.size() * kBlock * 8);
      auto ptr = [&](int v, int64_t off) -> const void* {
        if (expanded_slot[v] >= 0) return wide.data() + expanded_slot[v] * kBlock * 8;
        if (!is_full(v)) return scalar_ptr[v];
        if (slot[v] >= 0) return scratch.data() + slot[v] * kBlock;
        return base[v] + off * elem_size[v];
      };
      for (Eigen::Index b = first; b < last; ++b) {
        const int64_t off = b * kBlock, len = std::min(kBlock, n - off);
        for (int u : expanded) {
          const char* src = static_cast<const char*>(u < num_inputs ? in_data[u] : pre[u]);
          Expand(src, elem_size[u], layout[u] == Layout::kRow, cols, off, len,
                 wide.data() + expanded_slot[u] * kBlock * 8);
        }
        for (size_t j = 0; j < program_.size(); ++j) {
          const int v = num_inputs + static_cast<int>(j);
          if (!is_full(v)) continue;
          const Instr& in = program_[j];
          BlockEval<T> e{len, {}, {}, dtypes[in.arg[0]],
                         static_cast<T*>(const_cast<void*>(ptr(v, off)))};
          for (int i = 0; i < pdk_fused::Arity(in.kind); ++i) {
            e.a[i] = ptr(in.arg[i], off);
            e.full[i] = is_full(in.arg[i]) || is_expanded(in.arg[i]);
          }
          Visit<T>(in.code, e);
        }
      }
    };
    pdk_compute::ParallelFor(dev, blocks, cost, run);
  }

  // Elements off .. off + len of a row value (element i of S reads src[i /
  // cols]) or a column value (src[i % cols]), `size` bytes each, into dst.
  static void Expand(const char* src, int size, bool row, int64_t cols, int64_t off,
                     int64_t len, char* dst) {
    switch (size) {
      case 1: return ExpandAs<uint8_t>(src, row, cols, off, len, dst);
      case 2: return ExpandAs<uint16_t>(src, row, cols, off, len, dst);
      case 4: return ExpandAs<uint32_t>(src, row, cols, off, len, dst);
      default: return ExpandAs<uint64_t>(src, row, cols, off, len, dst);
    }
  }
  template <class U>
  static void ExpandAs(const char* src, bool row, int64_t cols, int64_t off, int64_t len,
                       char* dst) {
    const U* in = reinterpret_cast<const U*>(src);
    U* out = reinterpret_cast<U*>(dst);
    int64_t r = off / cols, c = off % cols;
    for (int64_t e = 0; e < len;) {
      const int64_t run = std::min(len - e, cols - c);  // to the end of this row
      if (row) {
        std::fill(out + e, out + e + run, in[r]);
      } else {
        std::copy(in + c, in + c + run, out + e);
      }
      e += run;
      c = 0;
      ++r;
    }
  }

  // The general path: op by op over whole tensors, with broadcasting. With
  // `layout`, only the instructions whose result is not of shape S (the row,
  // column and one-element values, which never read a value of shape S), for
  // the blocked pass: *pre receives each one's data and *temps keeps it.
  Status RunTensors(OpKernelContext* ctx, const std::vector<const TensorShape*>& shapes,
                    const std::vector<Tensor*>& outs, std::vector<Tensor>* temps,
                    const std::vector<Layout>* layout = nullptr,
                    std::vector<const void*>* pre = nullptr) const {
    const int num_inputs = ctx->num_inputs();
    std::vector<const Tensor*> values(num_inputs + program_.size(), nullptr);
    for (int i = 0; i < num_inputs; ++i) values[i] = &ctx->input(i);
    std::vector<int> out_of(values.size(), -1);
    for (size_t k = 0; k < outputs_.size(); ++k) out_of[outputs_[k]] = static_cast<int>(k);
    temps->resize(program_.size());
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    for (size_t j = 0; j < program_.size(); ++j) {
      const int v = num_inputs + static_cast<int>(j);
      if (layout && (*layout)[v] == Layout::kFull) continue;
      if (out_of[v] >= 0) {
        values[v] = outs[out_of[v]];
      } else {
        TF_RETURN_IF_ERROR(
            ctx->allocate_temp(DataTypeToEnum<T>::value, *shapes[v], &(*temps)[j]));
        values[v] = &(*temps)[j];
      }
      const Instr& in = program_[j];
      TensorEval<T> e{dev, labels_[j].c_str(), {}, values[v], OkStatus()};
      for (int i = 0; i < pdk_fused::Arity(in.kind); ++i) e.a[i] = values[in.arg[i]];
      Visit<T>(in.code, e);
      TF_RETURN_IF_ERROR(e.status);
      if (pre) (*pre)[v] = values[v]->data();
    }
    return OkStatus();
  }

  std::vector<Instr> program_;
  std::vector<std::string> labels_;  // per instruction, for messages
  // Per instruction: its packet and scalar forms may differ (Pow, Maximum,
  // Minimum), see ExactWhenExpanded.
  std::vector<bool> split_dependent_;
  std::vector<int> outputs_;
};

REGISTER_KERNEL_BUILDER(
    Name("_PdkFusedElementwise").Device(DEVICE_PDK).TypeConstraint<float>("T"),
    FusedElementwiseOp<float>);
REGISTER_KERNEL_BUILDER(
    Name("_PdkFusedElementwise").Device(DEVICE_PDK).TypeConstraint<double>("T"),
    FusedElementwiseOp<double>);

}  // namespace
}  // namespace tensorflow
