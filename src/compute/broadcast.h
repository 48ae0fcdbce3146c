// NumPy-style broadcasting for elementwise kernels.
//
// Shapes: operands of any rank, aligned at their trailing dimensions; each
// dimension pair must be equal or contain a 1 (pdk::BroadcastShapes). The
// output has the broadcast shape.
//
// Before evaluating, the shapes are collapsed: dimensions of size 1 in the
// output are dropped, and adjacent dimensions in which the same operands are
// broadcast are merged ([2,3,4] + [4] -> [6,4] + [1,4]). After collapsing:
//   - every operand has the output's element count   -> one flat pass;
//   - (binary) one operand holds a single element     -> flat pass against a
//     constant (no temporary, no copy);
//   - (binary, rank 2) [N, M] against [1, M] or [N, 1] (or [N, 1] against
//     [1, M]) -> a vectorized loop over rows (internal::BinaryRows);
//   - otherwise an Eigen .broadcast() expression at the collapsed rank, at
//     most kMaxBroadcastRank (6); more is an InvalidArgument error.
// All evaluation runs through the device's Eigen::ThreadPoolDevice, which
// runs small expressions inline on the calling thread and splits large ones
// over the pool.
//
// Dtypes: any element type Eigen can evaluate; the functor decides what it
// accepts. Errors are returned as pdk::Status, never thrown (ComputeBinary, for
// TF-style kernels, sets them on the kernel's context).
#ifndef PDK_SRC_COMPUTE_BROADCAST_H_
#define PDK_SRC_COMPUTE_BROADCAST_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "compute/eigen.h"
#include "compute/parallel_for.h"
#include "pdk/status.h"
#include "pdk/tensor.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_compute {

inline constexpr int kMaxBroadcastRank = 6;

// How N operands broadcast to one output, after collapsing dimensions.
//   out:      the broadcast output shape (as TensorFlow reports it).
//   rank:     the collapsed rank, 1..kMaxBroadcastRank (1 for scalars).
//   out_dims: the collapsed output dimensions (first `rank` entries used).
//   in_dims:  per operand, its collapsed dimensions: out_dims[d] or 1.
//   elems:    per operand, its element count.
//   full:     per operand, whether it has every output element (no broadcast).
template <int N>
struct BroadcastPlan {
  pdk::Shape out;
  int rank = 1;
  std::array<Eigen::DenseIndex, kMaxBroadcastRank> out_dims{};
  std::array<std::array<Eigen::DenseIndex, kMaxBroadcastRank>, N> in_dims{};
  std::array<int64_t, N> elems{};
  std::array<bool, N> full{};

  bool all_full() const {
    for (bool f : full)
      if (!f) return false;
    return true;
  }
  // Eigen broadcast factors of operand i at collapsed rank R.
  template <int R>
  Eigen::array<Eigen::DenseIndex, R> factors(int i) const {
    Eigen::array<Eigen::DenseIndex, R> f;
    for (int d = 0; d < R; ++d) f[d] = in_dims[i][d] == out_dims[d] ? 1 : out_dims[d];
    return f;
  }
  template <int R>
  Eigen::DSizes<Eigen::DenseIndex, R> dims(int i) const {
    Eigen::DSizes<Eigen::DenseIndex, R> s;
    for (int d = 0; d < R; ++d) s[d] = in_dims[i][d];
    return s;
  }
  template <int R>
  Eigen::DSizes<Eigen::DenseIndex, R> output_dims() const {
    Eigen::DSizes<Eigen::DenseIndex, R> s;
    for (int d = 0; d < R; ++d) s[d] = out_dims[d];
    return s;
  }
};

// PlanBroadcast (below) over the operands' shapes by pointer: TF-style kernels
// plan the shapes their input views already hold, without copying them.
template <int N>
pdk::StatusOr<BroadcastPlan<N>> PlanBroadcastOf(const char* op,
                                                const std::array<const char*, N>& names,
                                                const std::array<const pdk::Shape*, N>& shapes) {
  static_assert(N >= 1 && N <= 8, "PlanBroadcast: 1..8 operands");
  BroadcastPlan<N> plan;
  bool same = true;
  for (int i = 1; i < N; ++i) same = same && *shapes[i] == *shapes[0];
  if (same) {  // the common case: no broadcasting, one flat pass
    plan.out = *shapes[0];
    const int64_t n = plan.out.num_elements();
    plan.out_dims[0] = n;
    for (int i = 0; i < N; ++i) {
      plan.in_dims[i][0] = n;
      plan.elems[i] = n;
      plan.full[i] = true;
    }
    return plan;
  }
  plan.out = *shapes[0];
  for (int i = 1; i < N; ++i) {
    // Operands are folded left to right; from the third on, the left side is
    // the broadcast of those before it.
    std::string left;
    if (i > 1) {
      left = names[0];
      for (int j = 1; j < i; ++j) left = "broadcast(" + left + ", " + names[j] + ")";
    }
    PDK_ASSIGN_OR_RETURN(plan.out, pdk::BroadcastShapes(op, i > 1 ? left.c_str() : names[0],
                                                        plan.out, names[i], *shapes[i]));
  }
  const int r = plan.out.rank();
  const int64_t n_out = plan.out.num_elements();
  for (int i = 0; i < N; ++i) {
    plan.elems[i] = shapes[i]->num_elements();
    plan.full[i] = plan.elems[i] == n_out;
  }

  // Walk the output dimensions, skipping 1s and merging runs with the same
  // broadcast pattern; `count` keeps counting past the limit for the message.
  int count = 0;
  unsigned prev_mask = ~0u;
  for (int d = 0; d < r; ++d) {
    const int64_t size = plan.out[d];
    if (size == 1) continue;
    unsigned mask = 0;  // bit i: operand i is broadcast along d
    for (int i = 0; i < N; ++i) {
      const int k = d - (r - shapes[i]->rank());
      if (k < 0 || (*shapes[i])[k] != size) mask |= 1u << i;
    }
    if (count > 0 && mask == prev_mask) {
      if (count <= kMaxBroadcastRank) {
        plan.out_dims[count - 1] *= size;
        for (int i = 0; i < N; ++i)
          if (!(mask >> i & 1u)) plan.in_dims[i][count - 1] *= size;
      }
    } else {
      if (count < kMaxBroadcastRank) {
        plan.out_dims[count] = size;
        for (int i = 0; i < N; ++i) plan.in_dims[i][count] = (mask >> i & 1u) ? 1 : size;
      }
      ++count;
    }
    prev_mask = mask;
  }
  if (count == 0) {  // all-ones output
    plan.out_dims[0] = 1;
    for (int i = 0; i < N; ++i) plan.in_dims[i][0] = 1;
    count = 1;
  }
  if (count > kMaxBroadcastRank) {
    std::string shapes_str;
    for (int i = 0; i < N; ++i)
      shapes_str += std::string(i ? ", " : "") + names[i] + ".shape " + shapes[i]->ToString();
    return pdk::InvalidArgument(op, ": broadcasting ", shapes_str, " needs ", count,
                                " dimensions after collapsing; at most ", kMaxBroadcastRank,
                                " are supported");
  }
  plan.rank = count;
  return plan;
}

// Broadcasts `shapes` (named `names` in messages) together and collapses the
// result. Errors: InvalidArgument "<op>: a.shape [..] and b.shape [..] are not
// broadcast-compatible ..." when shapes don't broadcast, or when more than
// kMaxBroadcastRank dimensions remain after collapsing.
template <int N>
pdk::StatusOr<BroadcastPlan<N>> PlanBroadcast(const char* op,
                                              const std::array<const char*, N>& names,
                                              const std::array<pdk::Shape, N>& shapes) {
  std::array<const pdk::Shape*, N> ptrs;
  for (int i = 0; i < N; ++i) ptrs[i] = &shapes[i];
  return PlanBroadcastOf<N>(op, names, ptrs);
}

namespace internal {

template <int R, class Tin, class Tout, class F>
void BinaryAtRank(const Eigen::ThreadPoolDevice& dev, const BroadcastPlan<2>& p, const Tin* a,
                  const Tin* b, Tout* out, const F& f) {
  ConstMapped<Tin, R> av(a, p.dims<R>(0)), bv(b, p.dims<R>(1));
  Mapped<Tout, R> ov(out, p.output_dims<R>());
  ov.device(dev) = av.broadcast(p.factors<R>(0)).binaryExpr(bv.broadcast(p.factors<R>(1)), f);
}

// Operand kinds of a rank-2 broadcast [N, M] (after collapsing): the whole
// [N, M] operand, one [1, M] row repeated for every row, or one [N, 1] column
// (a scalar per row).
enum class RowKind { kFull, kRow, kCol };

// out[r, :] = f(a's row r, b's row r) for an [N, M] output whose operands
// are of kinds KA, KB (not both kCol or both kRow: those collapse to rank 1).
// Each row is a contiguous run of M elements, evaluated with the functor's
// packetOp over full packets (unaligned loads) and operator() for the tail,
// the rows split over the pool. This replaces Eigen's broadcast expression,
// whose block evaluator copies both broadcast operands into blocks first:
// LayerNormalization's [B*S, D] op [B*S, 1] / [1, D] and Softmax's gradient
// (commit fb248ea; docs/benchmarks.md, "Non-GEMM kernels of the Transformer
// and CNN steps").
template <RowKind KA, RowKind KB, class Tin, class Tout, class F>
void BinaryRows(const Eigen::ThreadPoolDevice& dev, Eigen::Index rows, Eigen::Index m,
                const Tin* a, const Tin* b, Tout* out, const F& f) {
  using P = typename Eigen::internal::packet_traits<Tin>::type;
  constexpr Eigen::Index kP = Eigen::internal::unpacket_traits<P>::size;
  constexpr bool kPacket = Eigen::internal::functor_traits<F>::PacketAccess &&
                           std::is_same_v<Tin, Tout> && kP > 1;
  const double cost = Eigen::internal::functor_traits<F>::Cost;
  ParallelFor(dev, rows, Eigen::TensorOpCost(2.0 * m * sizeof(Tin), m * sizeof(Tout), m * cost),
                  [=](Eigen::Index first, Eigen::Index last) {
    for (Eigen::Index r = first; r < last; ++r) {
      const Tin* ar = a + (KA == RowKind::kFull ? r * m : KA == RowKind::kCol ? r : 0);
      const Tin* br = b + (KB == RowKind::kFull ? r * m : KB == RowKind::kCol ? r : 0);
      Tout* o = out + r * m;
      Eigen::Index j = 0;
      if constexpr (kPacket) {
        namespace ei = Eigen::internal;
        if constexpr (KA == RowKind::kCol) {
          const P av = ei::pset1<P>(*ar);
          for (; j + kP <= m; j += kP) ei::pstoreu(o + j, f.packetOp(av, ei::ploadu<P>(br + j)));
        } else if constexpr (KB == RowKind::kCol) {
          const P bv = ei::pset1<P>(*br);
          for (; j + kP <= m; j += kP) ei::pstoreu(o + j, f.packetOp(ei::ploadu<P>(ar + j), bv));
        } else {
          for (; j + kP <= m; j += kP)
            ei::pstoreu(o + j, f.packetOp(ei::ploadu<P>(ar + j), ei::ploadu<P>(br + j)));
        }
      }
      for (; j < m; ++j)
        o[j] = f(ar[KA == RowKind::kCol ? 0 : j], br[KB == RowKind::kCol ? 0 : j]);
    }
  });
}

// The rank-2 broadcasts BinaryRows handles: returns false (nothing done) for
// other plans or rows too short to pay for the per-row loop.
template <class Tin, class Tout, class F>
bool TryBinaryRows(const Eigen::ThreadPoolDevice& dev, const BroadcastPlan<2>& p, const Tin* a,
                   const Tin* b, Tout* out, const F& f) {
  constexpr Eigen::Index kMinRow = 16;
  if (p.rank != 2 || p.out_dims[1] < kMinRow) return false;
  const Eigen::Index n = p.out_dims[0], m = p.out_dims[1];
  auto kind = [&](int i) {
    if (p.full[i]) return RowKind::kFull;
    return p.in_dims[i][0] == 1 ? RowKind::kRow : RowKind::kCol;
  };
  const RowKind ka = kind(0), kb = kind(1);
  using K = RowKind;
  if (ka == K::kFull && kb == K::kRow) BinaryRows<K::kFull, K::kRow>(dev, n, m, a, b, out, f);
  else if (ka == K::kFull && kb == K::kCol) BinaryRows<K::kFull, K::kCol>(dev, n, m, a, b, out, f);
  else if (ka == K::kRow && kb == K::kFull) BinaryRows<K::kRow, K::kFull>(dev, n, m, a, b, out, f);
  else if (ka == K::kCol && kb == K::kFull) BinaryRows<K::kCol, K::kFull>(dev, n, m, a, b, out, f);
  else if (ka == K::kCol && kb == K::kRow) BinaryRows<K::kCol, K::kRow>(dev, n, m, a, b, out, f);
  else if (ka == K::kRow && kb == K::kCol) BinaryRows<K::kRow, K::kCol>(dev, n, m, a, b, out, f);
  else return false;
  return true;
}

template <int R, class T>
void SelectAtRank(const Eigen::ThreadPoolDevice& dev, const BroadcastPlan<3>& p, const bool* c,
                  const T* t, const T* e, T* out) {
  ConstMapped<bool, R> cv(c, p.dims<R>(0));
  ConstMapped<T, R> tv(t, p.dims<R>(1)), ev(e, p.dims<R>(2));
  Mapped<T, R> ov(out, p.output_dims<R>());
  ov.device(dev) = cv.broadcast(p.factors<R>(0))
                       .select(tv.broadcast(p.factors<R>(1)), ev.broadcast(p.factors<R>(2)));
}

template <int R, class T>
void BroadcastToAtRank(const Eigen::ThreadPoolDevice& dev, const BroadcastPlan<2>& p, const T* in,
                       T* out) {
  Mapped<T, R>(out, p.output_dims<R>()).device(dev) =
      ConstMapped<T, R>(in, p.dims<R>(0)).broadcast(p.factors<R>(0));
}

}  // namespace internal

// out = `in` repeated to plan.out, under `plan` (from PlanBroadcast<2> on the
// input shape and a target shape that equals plan.out). `out` holds
// plan.out.num_elements() elements and must not alias `in`.
template <class T>
void EvalBroadcastTo(const Eigen::ThreadPoolDevice& dev, const BroadcastPlan<2>& p, const T* in,
                     T* out) {
  const int64_t n = p.out.num_elements();
  if (n == 0) return;
  Flat<T> o(out, n);
  if (p.full[0]) {
    o.device(dev) = ConstFlat<T>(in, n);
  } else if (p.elems[0] == 1) {
    o.device(dev) = o.constant(*in);
  } else {
    switch (p.rank) {
      case 2: return internal::BroadcastToAtRank<2, T>(dev, p, in, out);
      case 3: return internal::BroadcastToAtRank<3, T>(dev, p, in, out);
      case 4: return internal::BroadcastToAtRank<4, T>(dev, p, in, out);
      case 5: return internal::BroadcastToAtRank<5, T>(dev, p, in, out);
      default: return internal::BroadcastToAtRank<6, T>(dev, p, in, out);
    }
  }
}

// out = f(a, b) elementwise under `plan` (from PlanBroadcast<2> on a's and b's
// shapes). `a` and `b` hold their operands' elements; `out` holds
// plan.out.num_elements() elements and may alias an operand that is `full`.
// F is an Eigen binary functor (Tin, Tin) -> Tout: operator() and, when its
// Eigen::internal::functor_traits say PacketAccess, packetOp. Same-shape and
// single-element operands never broadcast (flat pass, no copy).
template <class Tin, class Tout, class F>
void EvalBinary(const Eigen::ThreadPoolDevice& dev, const BroadcastPlan<2>& p, const Tin* a,
                const Tin* b, Tout* out, const F& f) {
  const int64_t n = p.out.num_elements();
  if (n == 0) return;
  Flat<Tout> o(out, n);
  if (p.all_full()) {
    o.device(dev) = ConstFlat<Tin>(a, n).binaryExpr(ConstFlat<Tin>(b, n), f);
  } else if (p.elems[0] == 1) {  // b is full: a broadcasts one element
    ConstFlat<Tin> bv(b, n);
    o.device(dev) = bv.constant(*a).binaryExpr(bv, f);
  } else if (p.elems[1] == 1) {  // a is full: b broadcasts one element
    ConstFlat<Tin> av(a, n);
    o.device(dev) = av.binaryExpr(av.constant(*b), f);
  } else if (!internal::TryBinaryRows<Tin, Tout>(dev, p, a, b, out, f)) {
    switch (p.rank) {  // rank 1 always lands in a branch above
      case 2: return internal::BinaryAtRank<2>(dev, p, a, b, out, f);
      case 3: return internal::BinaryAtRank<3>(dev, p, a, b, out, f);
      case 4: return internal::BinaryAtRank<4>(dev, p, a, b, out, f);
      case 5: return internal::BinaryAtRank<5>(dev, p, a, b, out, f);
      default: return internal::BinaryAtRank<6>(dev, p, a, b, out, f);
    }
  }
}

namespace internal {

// out[i] = c[i] ? t[i] : e[i] for i < n, where an operand that is not full
// (kCFull / kTFull / kEFull false) holds one element, read at index 0. A plain
// loop the compiler vectorizes (masked blends), split over the pool: Eigen's
// select expression assembles each condition packet one element at a time,
// and a broadcast single element goes through its generic index path; this
// loop is ~4x faster on Dropout's where(mask, x, 0) (commit fb248ea;
// docs/benchmarks.md, "Non-GEMM kernels of the Transformer and CNN steps").
template <bool kCFull, bool kTFull, bool kEFull, class T>
void SelectFlat(const Eigen::ThreadPoolDevice& dev, int64_t n, const bool* c, const T* t,
                const T* e, T* out) {
  const double loaded = (kCFull ? 1.0 : 0.0) + (kTFull ? sizeof(T) : 0) + (kEFull ? sizeof(T) : 0);
  // Both branches are loaded unconditionally and the condition is read as a
  // byte (TensorFlow's bools are 0/1 bytes): GCC leaves the loop scalar with
  // conditional loads or a bool load.
  const auto* cb = reinterpret_cast<const unsigned char*>(c);
  ParallelFor(dev, n, Eigen::TensorOpCost(loaded, sizeof(T), 1),
                  [=](Eigen::Index first, Eigen::Index last) {
                    for (Eigen::Index i = first; i < last; ++i) {
                      const T a = t[kTFull ? i : 0], b = e[kEFull ? i : 0];
                      out[i] = cb[kCFull ? i : 0] != 0 ? a : b;
                    }
                  });
}

template <bool kCFull, class T>
void SelectFlatCond(const Eigen::ThreadPoolDevice& dev, int64_t n, bool t_full, bool e_full,
                    const bool* c, const T* t, const T* e, T* out) {
  if (t_full) {
    if (e_full) return SelectFlat<kCFull, true, true>(dev, n, c, t, e, out);
    return SelectFlat<kCFull, true, false>(dev, n, c, t, e, out);
  }
  if (e_full) return SelectFlat<kCFull, false, true>(dev, n, c, t, e, out);
  return SelectFlat<kCFull, false, false>(dev, n, c, t, e, out);
}

}  // namespace internal

// out = c ? t : e elementwise under `plan` (from PlanBroadcast<3> on the
// shapes of c, t, e). `out` may alias t or e when that operand is `full`.
// When every operand is full or a single element (no broadcasting, or a
// scalar branch as in Dropout's where(mask, x, 0)) one flat vectorized pass
// does it; otherwise an Eigen broadcast expression at the collapsed rank.
template <class T>
void EvalSelect(const Eigen::ThreadPoolDevice& dev, const BroadcastPlan<3>& p, const bool* c,
                const T* t, const T* e, T* out) {
  const int64_t n = p.out.num_elements();
  if (n == 0) return;
  bool flat = true;
  for (int i = 0; i < 3; ++i) flat = flat && (p.full[i] || p.elems[i] == 1);
  if (flat) {
    if (p.full[0]) return internal::SelectFlatCond<true>(dev, n, p.full[1], p.full[2], c, t, e, out);
    return internal::SelectFlatCond<false>(dev, n, p.full[1], p.full[2], c, t, e, out);
  }
  switch (p.rank) {
    case 1: return internal::SelectAtRank<1, T>(dev, p, c, t, e, out);
    case 2: return internal::SelectAtRank<2, T>(dev, p, c, t, e, out);
    case 3: return internal::SelectAtRank<3, T>(dev, p, c, t, e, out);
    case 4: return internal::SelectAtRank<4, T>(dev, p, c, t, e, out);
    case 5: return internal::SelectAtRank<5, T>(dev, p, c, t, e, out);
    default: return internal::SelectAtRank<6, T>(dev, p, c, t, e, out);
  }
}

// ---- TF-style binary kernels (pdk/tf/op_kernel.h) ----

// PlanBroadcast<2> of inputs `a` and `b` (named `a_name`, `b_name` in
// messages) of the kernel `op`, reading the shapes the input views hold.
inline pdk::StatusOr<BroadcastPlan<2>> PlanBinaryBroadcast(const char* op, const char* a_name,
                                                           const tensorflow::Tensor& a,
                                                           const char* b_name,
                                                           const tensorflow::Tensor& b) {
  return PlanBroadcastOf<2>(op, {a_name, b_name}, {&a.shape().pdk_shape(), &b.shape().pdk_shape()});
}

// plan.out as a TensorShape: the shape of the first of `candidates` (input
// views) that has it, without a copy, else one built in *storage.
template <int N>
const tensorflow::TensorShape& PlanOutputShape(
    const BroadcastPlan<N>& plan, std::initializer_list<const tensorflow::Tensor*> candidates,
    tensorflow::TensorShape* storage) {
  for (const tensorflow::Tensor* t : candidates)
    if (t->shape().pdk_shape() == plan.out) return t->shape();
  *storage = tensorflow::TensorShape(plan.out);
  return *storage;
}

// Output 0 of a binary kernel, of plan.out's shape (plan from
// PlanBinaryBroadcast on inputs 0 and 1, `a` and `b`). With kForward (input
// and output dtypes equal) it reuses the buffer of an input that has the
// output's size and no other holder (forward_input_or_allocate_output), else
// it is allocated. The shape is an input's own TensorShape when it is the
// output's (the common same-shape case: no shape is built).
template <bool kForward>
tensorflow::Status AllocateBinaryOutput(tensorflow::OpKernelContext* ctx,
                                        const tensorflow::Tensor& a, const tensorflow::Tensor& b,
                                        const BroadcastPlan<2>& plan, tensorflow::Tensor** out) {
  tensorflow::TensorShape built;
  const tensorflow::TensorShape& shape = PlanOutputShape(plan, {&a, &b}, &built);
  if constexpr (kForward) {
    return ctx->forward_input_or_allocate_output({0, 1}, 0, shape, out);
  } else {
    return ctx->allocate_output(0, shape, out);
  }
}

// The whole binary kernel for inputs 0 (`a_name`) and 1 (`b_name`) of dtype
// Tin, in a TF-style kernel's Compute: broadcasts their shapes, allocates
// output 0 (dtype Tout, the broadcast shape) and evaluates f. When Tin == Tout
// the output reuses an input buffer that has the output's shape and no other
// holder (the inputs are borrowed views, which never block that).
// `check`, called as check(a, b) with the two input tensors before any
// allocation (and only when the output has elements), may reject values (e.g.
// integer division by zero) by returning a non-OK Status.
// Errors (set on ctx): InvalidArgument for shapes that don't broadcast
// (message names the op, both operands and both shapes), or from `check`;
// allocation failures.
template <class Tin, class Tout, class F, class Check>
void ComputeBinary(tensorflow::OpKernelContext* ctx, const F& f, const Check& check,
                   const char* a_name = "x", const char* b_name = "y") {
  const tensorflow::Tensor& a = ctx->input(0);
  const tensorflow::Tensor& b = ctx->input(1);
  const pdk::StatusOr<BroadcastPlan<2>> plan = PlanBinaryBroadcast(
      ctx->op_kernel().type_string().c_str(), a_name, a, b_name, b);
  OP_REQUIRES_OK(ctx, plan.status());
  if (plan.value().out.num_elements() > 0) OP_REQUIRES_OK(ctx, check(a, b));
  tensorflow::Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, AllocateBinaryOutput<std::is_same_v<Tin, Tout>>(ctx, a, b, plan.value(),
                                                                      &out));
  EvalBinary<Tin, Tout>(ctx->eigen_device<Eigen::ThreadPoolDevice>(), plan.value(),
                        a.flat<Tin>().data(), b.flat<Tin>().data(), out->flat<Tout>().data(), f);
}

template <class Tin, class Tout, class F>
void ComputeBinary(tensorflow::OpKernelContext* ctx, const F& f, const char* a_name = "x",
                   const char* b_name = "y") {
  ComputeBinary<Tin, Tout>(
      ctx, f,
      [](const tensorflow::Tensor&, const tensorflow::Tensor&) { return pdk::Status::OK(); },
      a_name, b_name);
}

}  // namespace pdk_compute

#endif  // PDK_SRC_COMPUTE_BROADCAST_H_
