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
//       (as a chain of equal-shape additions), BiasAdd (NHWC: value + bias
//       along the last dimension).
//     z[k]: the value of instruction outputs[k], shaped as that op's output.
//     slices (optional): input i is piece slices[3i+1] of slices[3i+2] equal
//       pieces of x[i] along axis slices[3i] — an absorbed Split's output, with
//       Split's checks and messages; the piece is read in place (gathered
//       block by block), never copied whole in the fast path.
//     concat (optional): extra outputs after z[0..len(outputs)), each ConcatV2
//       of program values along an axis (absorbed ConcatV2s, their checks and
//       messages), written in place block by block in the fast path.
//     tiles (optional): per input, m followed by m multiples (m = 0: none):
//       the input is Tile(x[i], multiples) (an absorbed Tile, with Tile's
//       checks). When x[i] is a row or column value of the tiled shape S (a
//       Mean's gradient: [B, T, 1] tiled to [B, T, C], [1, 1, 1, C] to
//       [N, H, W, C]) the blocked pass reads it expanded and the tile is
//       never written; otherwise it is materialized (tile.h).
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
#include "kernels/math/fused_elementwise.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "compute/broadcast.h"
#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "kernels/array/tile.h"
#include "kernels/math/cwise_functors.h"
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
    .Attr("outputs: list(int)")
    .Attr("slices: list(int) = []")
    .Attr("concat: list(int) = []")
    .Attr("tiles: list(int) = []");

namespace {

namespace ei = Eigen::internal;
namespace functors = ::pdk_kernels::functors;
namespace relu = ::pdk_kernels::relu;
namespace unary = ::pdk_kernels::unary;
using pdk_compute::ConstFlat;
using pdk_compute::Flat;
using pdk_fused::Code;
using pdk_fused::Kind;

constexpr char kOp[] = "_PdkFusedElementwise";

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
    PDK_U_(Ceil) PDK_U_(Sigmoid) PDK_U_(Tanh) PDK_U_(Erf) PDK_U_(Erfc) PDK_U_(Expm1)
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
    // value [..., C] + bias [C]: NumPy broadcasting adds what BiasAdd (NHWC)
    // adds, with the same functor (bias_add.cc), once InferShape's checks pass.
    case Code::kBiasAdd: return v.Binary(ei::scalar_sum_op<T, T>());
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
    if (n() > 0) pdk_compute::Assign(dev, o(), F::Apply(in<T>(0)));
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
    if (n() > 0) pdk_compute::Assign(dev, o(), in<T>(0).binaryExpr(in<T>(1), f));
  }
  template <class Fn>
  void ReluGrad(const Fn& fn) {
    if (n() > 0) pdk_compute::Assign(dev, o(), fn(in<T>(0), in<T>(1), T(0)));
  }
  void Cast() {
    if (n() == 0) return;
    VisitCastSource(static_cast<TF_DataType>(a[0]->dtype()), [&](auto s) {
      using Src = decltype(s);
      pdk_compute::Assign(dev, o(), in<Src>(0).template cast<T>());
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

// A piece of a row-major tensor cut along one axis: for each of `outer`
// indices o (the dimensions before the axis), elements [o * stride + offset,
// + run) of the whole tensor are elements [o * run, (o + 1) * run) of the
// piece. !is_piece: the whole tensor.
struct Piece {
  bool is_piece = false;
  int64_t outer = 0, run = 0, stride = 0, offset = 0;
};

// The piece of `whole` from `begin` to `end` along `axis` (0 <= axis < rank).
Piece PieceOf(const TensorShape& whole, int axis, int64_t begin, int64_t end) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= whole.dim_size(d);
  for (int d = axis + 1; d < whole.dims(); ++d) inner *= whole.dim_size(d);
  return Piece{true, outer, (end - begin) * inner, whole.dim_size(axis) * inner, begin * inner};
}

// Elements [off, off + len) of piece `p` of the tensor at `whole` (elements of
// `size` bytes) to `piece` (contiguous, element 0 = element off), or, with
// kScatter, the other way round.
template <bool kScatter>
void CopyPiece(const Piece& p, int size, int64_t off, int64_t len, const char* whole_in,
               char* whole_out, const char* piece_in, char* piece_out) {
  int64_t o = off / p.run, c = off % p.run;
  for (int64_t e = 0; e < len; ++o, c = 0) {
    const int64_t n = std::min(len - e, p.run - c);
    const int64_t at = (o * p.stride + p.offset + c) * size;
    if (kScatter) {
      std::memcpy(whole_out + at, piece_in + e * size, static_cast<size_t>(n * size));
    } else {
      std::memcpy(piece_out + e * size, whole_in + at, static_cast<size_t>(n * size));
    }
    e += n;
  }
}
void GatherPiece(const Piece& p, int size, int64_t off, int64_t len, const void* whole,
                 void* piece) {
  CopyPiece<false>(p, size, off, len, static_cast<const char*>(whole), nullptr, nullptr,
                   static_cast<char*>(piece));
}
void ScatterPiece(const Piece& p, int size, int64_t off, int64_t len, const void* piece,
                  void* whole) {
  CopyPiece<true>(p, size, off, len, nullptr, static_cast<char*>(whole),
                  static_cast<const char*>(piece), nullptr);
}

// An absorbed ConcatV2: output = the values `parts` joined along `axis`.
struct ConcatOut {
  int64_t axis;
  std::vector<int> parts;
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

    // Every value's shape: the inputs' are their views' own (no copy) or,
    // for a piece of what is fed (`slices`), the piece's; the instructions'
    // are computed into `results`.
    std::vector<const TensorShape*> shapes(num_values);
    std::vector<TensorShape> results(program_.size());
    std::vector<TF_DataType> dtypes(num_values, pdk::kDataType<T>);
    std::vector<TensorShape> piece_shapes(slices_.empty() ? 0 : num_inputs);
    std::vector<Piece> pieces(num_inputs);
    std::vector<TensorShape> tiled_shapes(tiles_.empty() ? 0 : num_inputs);
    for (int i = 0; i < num_inputs; ++i) {
      const Tensor& x = ctx->input(i);
      shapes[i] = &x.shape();
      dtypes[i] = static_cast<TF_DataType>(x.dtype());
      if (!slices_.empty() && slices_[3 * i + 2] > 1) {
        OP_REQUIRES_OK(ctx, SliceInput(i, x.shape(), &piece_shapes[i], &pieces[i]));
        shapes[i] = &piece_shapes[i];
      }
      if (!tiles_.empty() && !tiles_[i].empty()) {
        OP_REQUIRES(ctx, !pieces[i].is_piece,
                    errors::InvalidArgument(kOp, " '", name(), "': input ", i,
                                            " is both a piece and a tile"));
        OP_REQUIRES_OK(ctx, pdk_kernels::TiledShape(tile_labels_[i].c_str(), x.shape().pdk_shape(),
                                                    tiles_[i], &tiled_shapes[i]));
        shapes[i] = &tiled_shapes[i];
      }
    }
    OP_REQUIRES_OK(ctx, ctx->status());  // an input that could not be read
    // Shapes (and the unfused ops' checks) in program order.
    for (size_t j = 0; j < program_.size(); ++j) {
      shapes[num_inputs + j] = &results[j];
      OP_REQUIRES_OK(ctx, InferShape(program_[j], labels_[j], dtypes, shapes, &results[j]));
    }
    std::vector<TensorShape> concat_shapes(concat_.size());
    std::vector<std::vector<Piece>> concat_pieces(concat_.size());
    for (size_t g = 0; g < concat_.size(); ++g)
      OP_REQUIRES_OK(ctx, ConcatShape(concat_[g], shapes, &concat_shapes[g], &concat_pieces[g]));

    // Fast path: every value has shape S (the largest) or one element.
    int64_t n = 0;
    const TensorShape* s = nullptr;
    for (int v = 0; v < num_values; ++v)
      if (!s || shapes[v]->num_elements() > n) {
        n = shapes[v]->num_elements();
        s = shapes[v];
      }
    // A tiled input is read expanded from its own data when that is a row or
    // column value of its tiled shape S (the layouts below see its data's
    // shape): expanded per block, it is full to every instruction. Any other
    // tile is materialized, a one-element one too (an instruction of shape S
    // reads at least one full operand).
    std::vector<Tensor> tile_copies(tiles_.empty() ? 0 : num_inputs);
    std::vector<const TensorShape*> layout_shapes;  // shapes, with data shapes for expanded tiles
    bool expanded_tiles = false;
    for (size_t i = 0; i < tiles_.size(); ++i) {
      if (tiles_[i].empty()) continue;
      const TensorShape& data = ctx->input(static_cast<int>(i)).shape();
      if (*shapes[i] == *s && data.num_elements() > 1 && IsRowOrColumn(data, *s)) {
        if (layout_shapes.empty()) layout_shapes = shapes;
        layout_shapes[i] = &data;
        expanded_tiles = true;
      }
    }
    bool fast = !expanded_tiles;  // also when every value holds one element (or none)
    for (int v = 0; v < num_values && fast; ++v)
      fast = shapes[v]->num_elements() == 1 || *shapes[v] == *s;
    std::vector<Layout> layout;
    bool blocked =
        fast || (BroadcastLayouts(expanded_tiles ? layout_shapes : shapes, *s, &layout) &&
                 ExactWhenExpanded(layout, num_inputs));
    // Tiles the blocked pass does not read expanded: written out, as Tile would.
    for (size_t i = 0; i < tiles_.size(); ++i) {
      if (tiles_[i].empty() || (blocked && expanded_tiles && layout_shapes[i] != shapes[i]))
        continue;
      const Tensor& x = ctx->input(static_cast<int>(i));
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(x.dtype(), *shapes[i], &tile_copies[i]));
      pdk_kernels::TileInto(
          ctx->eigen_device<Eigen::ThreadPoolDevice>(), x.data(), x.shape().pdk_shape(), tiles_[i],
          static_cast<int64_t>(TF_DataTypeSize(dtypes[i])), tile_copies[i].data());
    }
    // In the blocked pass a piece is of shape S or one element, and the
    // parts of a concatenation are of shape S.
    for (int i = 0; i < num_inputs && blocked && !layout.empty(); ++i)
      blocked = !pieces[i].is_piece || layout[i] == Layout::kFull || layout[i] == Layout::kOne;
    for (const ConcatOut& c : concat_)
      for (int v : c.parts) blocked = blocked && n > 1 && *shapes[v] == *s;

    // The op-by-op evaluation (the general path, and the blocked pass's
    // values not of shape S) reads pieces as tensors of their own: copied.
    std::vector<const Tensor*> inputs(num_inputs);
    for (int i = 0; i < num_inputs; ++i)
      inputs[i] =
          !tile_copies.empty() && tile_copies[i].IsInitialized() ? &tile_copies[i] : &ctx->input(i);
    std::vector<Tensor> piece_copies(num_inputs);
    if (!blocked || !layout.empty())
      OP_REQUIRES_OK(ctx, CopyPieces(ctx, pieces, shapes, dtypes, &piece_copies, &inputs));

    if (!blocked) {
      std::vector<Tensor*> outs(outputs_.size());
      for (size_t k = 0; k < outputs_.size(); ++k) {
        OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(k), *shapes[outputs_[k]],
                                                 &outs[k]));
      }
      std::vector<Tensor> temps;
      std::vector<const Tensor*> values;
      OP_REQUIRES_OK(ctx, RunTensors(ctx, inputs, shapes, outs, &temps, &values));
      for (size_t g = 0; g < concat_.size(); ++g) {
        Tensor* out = nullptr;
        OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(outputs_.size() + g),
                                                 concat_shapes[g], &out));
        for (size_t q = 0; q < concat_[g].parts.size(); ++q) {
          const Tensor& part = *values[concat_[g].parts[q]];
          if (part.NumElements() > 0)
            ScatterPiece(concat_pieces[g][q], sizeof(T), 0, part.NumElements(), part.data(),
                         out->data());
        }
      }
      return;
    }
    // The fast path reads inputs through their data pointers, valid for the
    // whole Compute. The inputs are borrowed views, which hold no handle, so
    // TensorFlow may forward an input's buffer (one no other op reads) to an
    // output. A one-element piece is read at its element.
    std::vector<const void*> in_data(num_inputs);
    for (int i = 0; i < num_inputs; ++i) {
      in_data[i] = !tile_copies.empty() && tile_copies[i].IsInitialized() ? tile_copies[i].data()
                                                                          : ctx->input(i).data();
      if (pieces[i].is_piece && shapes[i]->num_elements() == 1)
        in_data[i] = static_cast<const char*>(in_data[i]) +
                     pieces[i].offset * static_cast<int64_t>(TF_DataTypeSize(dtypes[i]));
    }
    std::vector<Tensor*> outs(outputs_.size() + concat_.size(), nullptr);
    OP_REQUIRES_OK(ctx, AllocateOutputs(ctx, shapes, dtypes, pieces, num_inputs, n, &outs));
    for (size_t g = 0; g < concat_.size(); ++g) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(outputs_.size() + g),
                                               concat_shapes[g], &outs[outputs_.size() + g]));
    }
    // Row / column broadcasting: the values not of shape S (none reads a
    // value of shape S) first, op by op over their own shapes as the general
    // path computes them; the blocked pass then reads them expanded.
    std::vector<const void*> pre(num_values, nullptr);
    std::vector<Tensor> temps;
    if (!layout.empty())
      OP_REQUIRES_OK(ctx, RunTensors(ctx, inputs, shapes, outs, &temps, nullptr, &layout, &pre));
    const int64_t cols = s->dims() > 0 ? std::max<int64_t>(1, s->dim_size(s->dims() - 1)) : 1;
    RunBlocks(ctx->eigen_device<Eigen::ThreadPoolDevice>(), in_data, pieces, shapes, dtypes, n,
              cols, outs, concat_pieces, layout, pre);
  }

 private:
  // Input i is piece slices_[3i+1] of slices_[3i+2] along axis slices_[3i] of
  // `in`: its shape and where its elements are, with Split's checks.
  Status SliceInput(int i, const TensorShape& in, TensorShape* shape, Piece* piece) const {
    int64_t axis = slices_[3 * i];
    const int64_t k = slices_[3 * i + 1], count = slices_[3 * i + 2];
    const int r = in.dims();
    if (axis < -r || axis >= r)
      return errors::InvalidArgument("-input rank(-", r, ") <= split_dim < input rank (", r,
                                     "), but got ", axis, " (Split fused into ", kOp, " '",
                                     name(), "': value of shape ", in, ")");
    if (axis < 0) axis += r;
    if (in.dim_size(static_cast<int>(axis)) % count != 0)
      return errors::InvalidArgument(
          "Number of ways to split should evenly divide the split dimension, but got "
          "split_dim ", axis, " (size = ", in.dim_size(static_cast<int>(axis)),
          ") and num_split ", count, " (Split fused into ", kOp, " '", name(),
          "': value of shape ", in, ")");
    const int64_t w = in.dim_size(static_cast<int>(axis)) / count;
    *shape = in;
    shape->set_dim(static_cast<int>(axis), w);
    *piece = PieceOf(in, static_cast<int>(axis), k * w, (k + 1) * w);
    return OkStatus();
  }

  // The shape of concatenation `c` of values of `shapes`, and where each part
  // goes in it, with ConcatV2's checks (src/kernels/array/concat.cc).
  Status ConcatShape(const ConcatOut& c, const std::vector<const TensorShape*>& shapes,
                     TensorShape* out, std::vector<Piece>* pieces) const {
    const std::string op = std::string("ConcatV2 (fused into ") + kOp + " '" + name() + "')";
    const TensorShape& s0 = *shapes[c.parts[0]];
    const int rank = s0.dims();
    int64_t axis = c.axis;
    if (axis < -rank || axis >= rank)
      return errors::InvalidArgument(
          op, ": axis ", axis, " is out of range [", -rank, ", ", rank,
          ") for values[0] of shape ", s0,
          rank == 0 ? " (scalars cannot be concatenated; use stack)" : "");
    if (axis < 0) axis += rank;
    const int a = static_cast<int>(axis);
    int64_t total = 0;
    for (size_t i = 0; i < c.parts.size(); ++i) {
      const TensorShape& si = *shapes[c.parts[i]];
      if (si.dims() != rank)
        return errors::InvalidArgument(op, ": all values must have the same rank: values[0]",
                                       ".shape ", s0, " vs values[", i, "].shape ", si);
      for (int d = 0; d < rank; ++d)
        if (d != a && si.dim_size(d) != s0.dim_size(d))
          return errors::InvalidArgument(op, ": values[0].shape ", s0, " and values[", i,
                                         "].shape ", si, " differ in dimension ", d, " (",
                                         s0.dim_size(d), " vs ", si.dim_size(d),
                                         "); only axis ", axis, " may differ");
      total += si.dim_size(a);
    }
    *out = s0;
    out->set_dim(a, total);
    int64_t begin = 0;
    for (int v : c.parts) {
      const int64_t size = shapes[v]->dim_size(a);
      pieces->push_back(PieceOf(*out, a, begin, begin + size));
      begin += size;
    }
    return OkStatus();
  }

  // Copies of the pieces among the inputs, as tensors of their own, in
  // *copies; (*inputs)[i] points to input i's copy.
  static Status CopyPieces(OpKernelContext* ctx, const std::vector<Piece>& pieces,
                           const std::vector<const TensorShape*>& shapes,
                           const std::vector<TF_DataType>& dtypes, std::vector<Tensor>* copies,
                           std::vector<const Tensor*>* inputs) {
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (!pieces[i].is_piece) continue;
      TF_RETURN_IF_ERROR(
          ctx->allocate_temp(static_cast<DataType>(dtypes[i]), *shapes[i], &(*copies)[i]));
      if (shapes[i]->num_elements() > 0)
        GatherPiece(pieces[i], static_cast<int>(TF_DataTypeSize(dtypes[i])), 0,
                    shapes[i]->num_elements(), ctx->input(static_cast<int>(i)).data(),
                    (*copies)[i].data());
      (*inputs)[i] = &(*copies)[i];
    }
    return OkStatus();
  }

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
    TF_RETURN_IF_ERROR(c->GetAttr("slices", &slices_));
    for (size_t i = 0; i + 2 < slices_.size(); i += 3)
      if (slices_[i + 2] < 1 || slices_[i + 1] < 0 || slices_[i + 1] >= slices_[i + 2])
        return errors::InvalidArgument(kOp, " '", name(), "': slices entry ", i / 3,
                                       " is piece ", slices_[i + 1], " of ", slices_[i + 2]);
    std::vector<int64> tiles;
    TF_RETURN_IF_ERROR(c->GetAttr("tiles", &tiles));
    for (size_t i = 0; i < tiles.size();) {
      const int64_t m = tiles[i];
      if (m < 0 || i + 1 + m > tiles.size())
        return errors::InvalidArgument(kOp, " '", name(), "': malformed tiles attribute");
      tiles_.emplace_back(tiles.begin() + i + 1, tiles.begin() + i + 1 + m);
      tile_labels_.push_back(std::string("Tile (fused into ") + kOp + " '" + name() + "')");
      i += 1 + m;
    }
    std::vector<int64> concat;
    TF_RETURN_IF_ERROR(c->GetAttr("concat", &concat));
    for (size_t i = 0; i < concat.size();) {
      const int64_t m = i + 1 < concat.size() ? concat[i + 1] : 0;
      if (m < 1 || i + 2 + m > concat.size())
        return errors::InvalidArgument(kOp, " '", name(), "': malformed concat attribute");
      ConcatOut out{concat[i], {}};
      for (int64_t q = 0; q < m; ++q) out.parts.push_back(static_cast<int>(concat[i + 2 + q]));
      concat_.push_back(std::move(out));
      i += 2 + m;
    }
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
    if (static_cast<int>(outputs_.size() + concat_.size()) != ctx->num_outputs())
      return errors::InvalidArgument("_PdkFusedElementwise '", name(), "': ", outputs_.size(),
                                     " outputs and ", concat_.size(),
                                     " concatenations listed for ", ctx->num_outputs());
    if (!tiles_.empty() && tiles_.size() != static_cast<size_t>(num_inputs))
      return errors::InvalidArgument(kOp, " '", name(), "': ", tiles_.size(), " tiles entries for ",
                                     num_inputs, " inputs");
    if (!slices_.empty() && slices_.size() != 3 * static_cast<size_t>(num_inputs))
      return errors::InvalidArgument(kOp, " '", name(), "': ", slices_.size(),
                                     " slices entries for ", num_inputs, " inputs");
    for (const ConcatOut& c : concat_)
      for (int v : c.parts)
        if (v < num_inputs || v >= num_values)
          return errors::InvalidArgument(kOp, " '", name(), "': a concatenation reads value ",
                                         v, ", not an op result");
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
      case Kind::kBiasAdd: {  // bias_add.cc's checks and message, NHWC
        const pdk::Shape& b = shapes[in.arg[1]]->pdk_shape();
        TF_RETURN_IF_ERROR(pdk::CheckRankAtLeast(label.c_str(), "value", a, 2));
        TF_RETURN_IF_ERROR(pdk::CheckRank(label.c_str(), "bias", b, 1));
        if (b[0] != a[a.rank() - 1])
          return errors::InvalidArgument(
              label, ": must provide as many biases as the channel dimension (NHWC dimension ",
              a.rank() - 1, ") of value: bias.shape ", b, " vs. value.shape ", a);
        *out = *shapes[in.arg[0]];
        return OkStatus();
      }
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
                         const std::vector<TF_DataType>& dtypes, const std::vector<Piece>& pieces,
                         int num_inputs, int64_t n, std::vector<Tensor*>* outs) const {
    std::vector<int> last_use(num_inputs, -1);
    for (size_t j = 0; j < program_.size(); ++j)
      for (int i = 0; i < pdk_fused::Arity(program_[j].kind); ++i)
        if (program_[j].arg[i] < num_inputs) last_use[program_[j].arg[i]] = static_cast<int>(j);
    std::vector<bool> taken(num_inputs, false);
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const int v = outputs_[k], j = v - num_inputs;
      std::vector<int> candidates;
      for (int i = 0; i < num_inputs && j >= 0; ++i)
        if (!taken[i] && !pieces[i].is_piece && (tiles_.empty() || tiles_[i].empty()) &&
            last_use[i] <= j && dtypes[i] == pdk::kDataType<T> && *shapes[i] == *shapes[v] &&
            shapes[i]->num_elements() > 1 &&
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
    if (s.dims() < 1) return false;
    layout->assign(shapes.size(), Layout::kFull);
    for (size_t v = 0; v < shapes.size(); ++v) {
      const TensorShape& x = *shapes[v];
      if (x == s) continue;
      if (x.num_elements() == 1) {
        (*layout)[v] = Layout::kOne;
        continue;
      }
      if (!IsRowOrColumn(x, s)) return false;
      (*layout)[v] = IsRow(x, s) ? Layout::kRow : Layout::kColumn;
    }
    return true;
  }

  // x is S with its last dimension 1 (and that dimension > 1 in S).
  static bool IsRow(const TensorShape& x, const TensorShape& s) {
    const int r = s.dims();
    bool row = r >= 1 && x.dims() == r && s.dim_size(r - 1) > 1 && x.dim_size(r - 1) == 1;
    for (int d = 0; row && d < r - 1; ++d) row = x.dim_size(d) == s.dim_size(d);
    return row;
  }
  // A row value, or a column value: only the last dimension, S's, is not 1.
  static bool IsRowOrColumn(const TensorShape& x, const TensorShape& s) {
    const int r = s.dims();
    if (r < 1) return false;
    const int64_t c = s.dim_size(r - 1);
    return IsRow(x, s) || (x.dims() >= 1 && x.dims() <= r && x.dim_size(x.dims() - 1) == c &&
                           x.num_elements() == c && s.num_elements() > c);
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
  // (`cols`: S's last dimension). Pieces of inputs are gathered per block;
  // outs[outputs_.size() + g] is concatenation g, its parts scattered into
  // it per block (concat_pieces[g]).
  void RunBlocks(const Eigen::ThreadPoolDevice& dev, const std::vector<const void*>& in_data,
                 const std::vector<Piece>& pieces, const std::vector<const TensorShape*>& shapes,
                 const std::vector<TF_DataType>& dtypes, int64_t n, int64_t cols,
                 const std::vector<Tensor*>& outs,
                 const std::vector<std::vector<Piece>>& concat_pieces,
                 const std::vector<Layout>& layout, const std::vector<const void*>& pre) const {
    const int num_inputs = static_cast<int>(in_data.size());
    const int num_values = num_inputs + static_cast<int>(program_.size());
    const bool mixed = !layout.empty();
    auto is_full = [&](int v) {
      return mixed ? layout[v] == Layout::kFull : shapes[v]->num_elements() != 1;
    };
    auto is_expanded = [&](int v) {
      return mixed && (layout[v] == Layout::kRow || layout[v] == Layout::kColumn);
    };
    // A full piece of an input: gathered into an expansion slot per block.
    auto gathered = [&](int v) { return v < num_inputs && pieces[v].is_piece && is_full(v); };

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
    int concat_parts = 0;
    for (const ConcatOut& c : concat_)  // read after the block's last instruction
      for (int v : c.parts) {
        last_use[v] = static_cast<int>(program_.size());
        ++concat_parts;
      }
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
                                   double(kBlock * sizeof(T) * (outputs_.size() + concat_parts)),
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
        if ((is_expanded(u) || gathered(u)) && expanded_slot[u] < 0) {
          expanded_slot[u] = static_cast<int>(expanded.size());
          expanded.push_back(u);
        }
      }
    }
    for (int v = num_inputs; v < num_values; ++v)
      if (is_expanded(v)) elem_size[v] = sizeof(T);
    auto run = [&, num_slots](Eigen::Index first, Eigen::Index last) {
      // Uninitialized (every element is written before it is read), one
      // block or all of S if that is less.
      const int64_t step = std::min(kBlock, n);
      std::unique_ptr<T[]> scratch(new T[static_cast<size_t>(num_slots * step)]);
      std::unique_ptr<char[]> wide(new char[expanded.size() * step * 8]);
      auto ptr = [&](int v, int64_t off) -> const void* {
        if (expanded_slot[v] >= 0) return wide.get() + expanded_slot[v] * step * 8;
        if (!is_full(v)) return scalar_ptr[v];
        if (slot[v] >= 0) return scratch.get() + slot[v] * step;
        return base[v] + off * elem_size[v];
      };
      for (Eigen::Index b = first; b < last; ++b) {
        const int64_t off = b * kBlock, len = std::min(kBlock, n - off);
        for (int u : expanded) {
          char* dst = wide.get() + expanded_slot[u] * step * 8;
          if (gathered(u)) {
            GatherPiece(pieces[u], elem_size[u], off, len, in_data[u], dst);
            continue;
          }
          const char* src = static_cast<const char*>(u < num_inputs ? in_data[u] : pre[u]);
          Expand(src, elem_size[u], layout[u] == Layout::kRow, cols, off, len, dst);
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
        for (size_t g = 0; g < concat_.size(); ++g)
          for (size_t q = 0; q < concat_[g].parts.size(); ++q)
            ScatterPiece(concat_pieces[g][q], sizeof(T), off, len,
                         ptr(concat_[g].parts[q], off), outs[outputs_.size() + g]->data());
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
  Status RunTensors(OpKernelContext* ctx, const std::vector<const Tensor*>& inputs,
                    const std::vector<const TensorShape*>& shapes,
                    const std::vector<Tensor*>& outs, std::vector<Tensor>* temps,
                    std::vector<const Tensor*>* values_out,
                    const std::vector<Layout>* layout = nullptr,
                    std::vector<const void*>* pre = nullptr) const {
    const int num_inputs = ctx->num_inputs();
    std::vector<const Tensor*> values(num_inputs + program_.size(), nullptr);
    for (int i = 0; i < num_inputs; ++i) values[i] = inputs[i];
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
    if (values_out) *values_out = std::move(values);
    return OkStatus();
  }

  std::vector<Instr> program_;
  std::vector<std::string> labels_;  // per instruction, for messages
  // Per instruction: its packet and scalar forms may differ (Pow, Maximum,
  // Minimum), see ExactWhenExpanded.
  std::vector<bool> split_dependent_;
  std::vector<int> outputs_;
  std::vector<int64> slices_;       // (axis, index, count) per input, or empty
  std::vector<ConcatOut> concat_;  // the extra outputs
  std::vector<std::vector<int64_t>> tiles_;  // multiples per input (empty: none), or empty
  std::vector<std::string> tile_labels_;     // per input, for Tile's messages
};

REGISTER_KERNEL_BUILDER(
    Name("_PdkFusedElementwise").Device(DEVICE_PDK).TypeConstraint<float>("T"),
    FusedElementwiseOp<float>);
REGISTER_KERNEL_BUILDER(
    Name("_PdkFusedElementwise").Device(DEVICE_PDK).TypeConstraint<double>("T"),
    FusedElementwiseOp<double>);

}  // namespace
}  // namespace tensorflow
