// Einsum (tensorflow/core/ops/linalg_ops.cc).
//
//   Einsum(inputs: N x T; equation) -> output
//     equation "<in0>[,<in1>]-><out>": one letter (a-z, A-Z) per dimension,
//     at most one "..." per subscript for broadcast dimensions. N is 1 or 2.
//     T in {float32, float64, float16, bfloat16, int32, int64} (the real types
//     stock TensorFlow's CPU Einsum kernel has among PDK's dtypes).
//
// Semantics as TensorFlow's CPU kernel (tensorflow/core/kernels/linalg/
// einsum_op_impl.h). Every label is one of
//   batch     in both inputs and the output (the "..." dimensions are batch
//             dimensions that broadcast as in NumPy, aligned from the right),
//   free      in one input and the output,
//   contract  in both inputs, not in the output,
//   reduce    in one input only, not in the output: summed before the product.
// Two inputs: each operand becomes a [batch, free, contract] matrix stack (a
// strided gather that also sums its reduce labels; skipped when the operand's
// buffer already is in that order, or in [batch, contract, free], which becomes
// a transposed GEMM; gathered in whichever of the two orders keeps the input's
// contiguous rows whole, copied a row at a time), the stacks are multiplied by
// the batched GEMM MatMul and BatchMatMulV2 use (src/compute/gemm.h: oneDNN or
// OpenBLAS for float32, OpenBLAS for float64, Eigen for integers, batch
// broadcasting by offsets), and the [batch, free_a, free_b] product is written
// to the output order (directly when it already is; the operands swap when the
// output has free_b before free_a). Keras's MultiHeadAttention scores,
// "aecd,abcd->acbe" on [32,64,4,32] operands, went from 1397 to 206 µs so
// (bench/bench_matmul.py; docs/benchmarks.md, "float32 GEMM").
// One input: a strided gather-sum straight into the output ("ij->ji", "ij->").
// float16/bfloat16 go through float32 as MatMul's path does: the operands are
// widened while they are gathered, the product and every sum are float32, the
// result is rounded once.
//
// A label repeated within an input takes that input's diagonal ("ii->i",
// "iij,jk->ik"), as in TensorFlow. A label repeated in the output inflates, as
// TensorFlow does: the result over the distinct output labels is written onto
// the diagonal of a zero output ("a->aa": diag(x); "ab,bc->aaca": out[i,i,c,i]
// = (a@b)[i,c], zeros elsewhere).
//
// Errors (InvalidArgument): a malformed equation (no "->", more than one,
// other than 1 or 2 inputs, an output label no input has, a stray '.', a
// character that is not a letter), the wrong number of inputs or an input whose
// rank does not match its subscript, a label whose sizes disagree (the message
// names the label, both inputs and their shapes), "..." dimensions that do not
// broadcast, and "..." dimensions in the inputs with no "..." in the output.
// The equation is parsed once, when the kernel is constructed.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "compute/gemm.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

constexpr int kEllipsis = -1;

// The parsed equation: labels as small integers (kEllipsis for "...").
struct Equation {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  std::vector<char> names;  // label -> its letter
  bool output_has_ellipsis = false;
};

pdk::Status ParseSubscript(const std::string& eq, const std::string& sub, const char* what,
                           std::vector<int>* labels, std::vector<char>* names) {
  bool ellipsis = false;
  for (size_t i = 0; i < sub.size(); ++i) {
    const char c = sub[i];
    if (c == '.') {
      if (sub.compare(i, 3, "...") != 0)
        return pdk::InvalidArgument("equation '", eq, "': ", what, " '", sub,
                                    "' has a '.' that is not part of an ellipsis (...)");
      if (ellipsis)
        return pdk::InvalidArgument("equation '", eq, "': ", what, " '", sub,
                                    "' has more than one ellipsis (...)");
      ellipsis = true;
      labels->push_back(kEllipsis);
      i += 2;
      continue;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      return pdk::InvalidArgument("equation '", eq, "': ", what, " '", sub,
                                  "' has the character '", std::string(1, c),
                                  "'; labels are letters a-z, A-Z");
    auto it = std::find(names->begin(), names->end(), c);
    if (it == names->end()) {
      names->push_back(c);
      labels->push_back(static_cast<int>(names->size()) - 1);
    } else {
      labels->push_back(static_cast<int>(it - names->begin()));
    }
  }
  return pdk::Status::OK();
}

pdk::Status ParseEquation(const std::string& raw, Equation* e) {
  std::string eq;
  for (char c : raw)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  if (arrow == std::string::npos || eq.find("->", arrow + 2) != std::string::npos)
    return pdk::InvalidArgument("equation '", raw, "' must contain exactly one '->'");
  const std::string lhs = eq.substr(0, arrow), rhs = eq.substr(arrow + 2);
  std::vector<std::string> subs;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    subs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos
                                                                : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (subs.size() != 1 && subs.size() != 2)
    return pdk::InvalidArgument("equation '", raw, "' has ", subs.size(),
                                " input subscripts; Einsum takes 1 or 2");
  e->inputs.resize(subs.size());
  for (size_t i = 0; i < subs.size(); ++i) {
    const std::string what = "input " + std::to_string(i) + " subscript";
    PDK_RETURN_IF_ERROR(ParseSubscript(raw, subs[i], what.c_str(), &e->inputs[i], &e->names));
  }
  const size_t named_in_inputs = e->names.size();
  PDK_RETURN_IF_ERROR(ParseSubscript(raw, rhs, "output subscript", &e->output, &e->names));
  for (int l : e->output) {
    if (l == kEllipsis) {
      e->output_has_ellipsis = true;
      continue;
    }
    if (static_cast<size_t>(l) >= named_in_inputs)
      return pdk::InvalidArgument("equation '", raw, "': output label '",
                                  std::string(1, e->names[l]), "' appears in no input");
  }
  return pdk::Status::OK();
}

// A strided view of one operand over its distinct labels: a label repeated
// within the operand (a diagonal) has the sum of its axes' strides.
struct View {
  std::vector<int> labels;
  std::vector<int64_t> size, stride;
  int Find(int label) const {
    auto it = std::find(labels.begin(), labels.end(), label);
    return it == labels.end() ? -1 : static_cast<int>(it - labels.begin());
  }
};

// Dimension lists (sizes and strides) for GatherSum.
struct Dims {
  std::vector<int64_t> size, stride;
  void Add(int64_t sz, int64_t st) {
    size.push_back(sz);
    stride.push_back(st);
  }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t s : size) n *= s;
    return n;
  }
};

// Advances the row-major index `idx` over `d` by one, keeping `off` (the sum
// of idx[i] * d.stride[i]) in step.
inline void Advance(const Dims& d, std::vector<int64_t>* idx, int64_t* off) {
  for (int i = static_cast<int>(d.size.size()) - 1; i >= 0; --i) {
    if (++(*idx)[i] < d.size[i]) {
      *off += d.stride[i];
      return;
    }
    *off -= d.stride[i] * (d.size[i] - 1);
    (*idx)[i] = 0;
  }
}

// The row-major index over `d` of element number `i` into *idx (sized to d's
// rank); returns its offset (the sum of idx[j] * d.stride[j]).
inline int64_t Seek(const Dims& d, int64_t i, std::vector<int64_t>* idx) {
  int64_t off = 0;
  for (int j = static_cast<int>(d.size.size()) - 1; j >= 0; --j) {
    (*idx)[j] = i % d.size[j];
    i /= d.size[j];
    off += (*idx)[j] * d.stride[j];
  }
  return off;
}

// Whether `d` (ignoring size-1 dimensions) walks a dense row-major buffer of
// exactly `elements` elements.
bool IsDense(const Dims& d, int64_t elements) {
  if (d.count() != elements) return false;
  int64_t expected = 1;
  for (int i = static_cast<int>(d.size.size()) - 1; i >= 0; --i) {
    if (d.size[i] == 1) continue;
    if (d.stride[i] != expected) return false;
    expected *= d.size[i];
  }
  return true;
}

// Whether the last dimension of `d` larger than 1 has stride 1 (rows of
// contiguous elements), or `d` has none.
bool InnerContiguous(const Dims& d) {
  for (int i = static_cast<int>(d.size.size()) - 1; i >= 0; --i)
    if (d.size[i] != 1) return d.stride[i] == 1;
  return true;
}

// dst[i] = D(sum over `red` of src[offset of keep-index i + reduce offset]),
// dst dense over `keep`; sums in A. Split over the device pool when large.
// Without a reduction and with a contiguous last `keep` dimension (a layout
// change that moves whole rows: the attention einsums' operands), rows are
// copied as runs instead of element by element.
template <class S, class D, class A>
void GatherSum(const Eigen::ThreadPoolDevice& dev, const S* src, const Dims& keep,
               const Dims& red, D* dst) {
  const int64_t n = keep.count(), r = red.count();
  if (n == 0) return;
  const int kr = static_cast<int>(keep.size.size()), rr = static_cast<int>(red.size.size());
  if (rr == 0 && kr > 0 && keep.stride[kr - 1] == 1 && keep.size[kr - 1] >= 4) {
    const int64_t len = keep.size[kr - 1], runs = n / len;
    Dims outer;  // keep without its last dimension: one entry per run
    for (int d = 0; d + 1 < kr; ++d) outer.Add(keep.size[d], keep.stride[d]);
    auto copy_runs = [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> idx(kr - 1, 0);
      int64_t off = Seek(outer, lo, &idx);
      for (int64_t i = lo; i < hi; ++i) {
        const S* from = src + off;
        D* to = dst + i * len;
        if constexpr (std::is_same_v<S, D>) {
          std::memcpy(to, from, sizeof(D) * size_t(len));
        } else {
          for (int64_t j = 0; j < len; ++j) to[j] = static_cast<D>(static_cast<A>(from[j]));
        }
        Advance(outer, &idx, &off);
      }
    };
    const int64_t shards = n >= 65536 ? std::min<int64_t>(dev.numThreads(), runs) : int64_t{1};
    pdk_compute::RunShards(dev, shards,
                           [&](int64_t s) { copy_runs(runs * s / shards, runs * (s + 1) / shards); });
    return;
  }
  auto reduce_at = [&](int64_t base) -> A {
    if (rr == 0) return static_cast<A>(src[base]);
    A acc = A(0);
    if (r == 0) return acc;
    std::vector<int64_t> idx(rr, 0);
    int64_t off = base;
    for (int64_t j = 0; j < r; ++j) {
      acc += static_cast<A>(src[off]);
      Advance(red, &idx, &off);
    }
    return acc;
  };
  auto run = [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> idx(kr, 0);
    int64_t off = Seek(keep, lo, &idx);
    for (int64_t i = lo; i < hi; ++i) {
      dst[i] = static_cast<D>(reduce_at(off));
      Advance(keep, &idx, &off);
    }
  };
  const double work = double(n) * double(std::max<int64_t>(r, 1));
  const int64_t shards =
      work >= 65536.0 ? std::min<int64_t>(dev.numThreads(), n) : int64_t{1};
  pdk_compute::RunShards(dev, shards, [&](int64_t s) { run(n * s / shards, n * (s + 1) / shards); });
}

// dst[offset of index i over `at`] = src[i] for every i of the dense src.
template <class T>
void ScatterDense(const T* src, const Dims& at, T* dst) {
  const int64_t n = at.count();
  std::vector<int64_t> idx(at.size.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    dst[off] = src[i];
    Advance(at, &idx, &off);
  }
}

template <class T>
class EinsumOp : public OpKernel {
  using C = pdk_compute::ComputeType<T>;  // float for float16/bfloat16

 public:
  explicit EinsumOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string equation;
    OP_REQUIRES_OK(c, c->GetAttr("equation", &equation));
    OP_REQUIRES_OK(c, ParseEquation(equation, &eq_));
    equation_ = equation;
    pdk_compute::UseSingleThreadedOpenBlas();
  }

  void Compute(OpKernelContext* ctx) override { OP_REQUIRES_OK(ctx, DoCompute(ctx)); }

 private:
  Status DoCompute(OpKernelContext* ctx) const {
    const std::string& op = type_string();
    const int n_in = static_cast<int>(eq_.inputs.size());
    if (ctx->num_inputs() != n_in)
      return errors::InvalidArgument(op, ": equation '", equation_, "' has ", n_in,
                                     " input subscripts but the op has ", ctx->num_inputs(),
                                     " inputs");
    std::vector<const Tensor*> in(n_in);
    std::vector<pdk::Shape> shapes(n_in);
    for (int i = 0; i < n_in; ++i) {
      in[i] = &ctx->input(i);
      shapes[i] = in[i]->shape().pdk_shape();
    }

    // Ellipsis dimensions per input; they get labels named + 0..max_bcast-1,
    // aligned from the right.
    const int named = static_cast<int>(eq_.names.size());
    std::vector<int> nb(n_in, 0);
    int max_bcast = 0;
    for (int i = 0; i < n_in; ++i) {
      const auto& sub = eq_.inputs[i];
      const bool ell = std::count(sub.begin(), sub.end(), kEllipsis) > 0;
      const int explicit_labels = static_cast<int>(sub.size()) - (ell ? 1 : 0);
      if (ell ? shapes[i].rank() < explicit_labels : shapes[i].rank() != explicit_labels)
        return errors::InvalidArgument(op, ": equation '", equation_, "': input ", i,
                                       " has shape ", shapes[i], " but its subscript has ",
                                       explicit_labels, " labels", ell ? " and an ellipsis" : "");
      nb[i] = shapes[i].rank() - explicit_labels;
      max_bcast = std::max(max_bcast, nb[i]);
    }
    if (max_bcast > 0 && !eq_.output_has_ellipsis)
      return errors::InvalidArgument(op, ": equation '", equation_, "': the inputs have ",
                                     max_bcast,
                                     " broadcast (...) dimension(s) but the output subscript has "
                                     "no ellipsis");
    const int num_labels = named + max_bcast;

    // Label sizes (named: equal everywhere; broadcast: NumPy rules) and views.
    std::vector<int64_t> label_size(num_labels, -1);
    std::vector<int> label_src(num_labels, -1);  // input that fixed a named size
    std::vector<View> views(n_in);
    for (int i = 0; i < n_in; ++i) {
      const pdk::Shape& s = shapes[i];
      std::vector<int64_t> stride(s.rank(), 1);
      for (int d = s.rank() - 2; d >= 0; --d) stride[d] = stride[d + 1] * s[d + 1];
      int axis = 0;
      auto add = [&](int label) {
        const int64_t sz = s[axis], st = stride[axis];
        ++axis;
        View& v = views[i];
        const int at = v.Find(label);
        if (at >= 0) {  // repeated within this input: the diagonal
          if (v.size[at] != sz)
            return errors::InvalidArgument(op, ": equation '", equation_, "': label '",
                                           std::string(1, eq_.names[label]),
                                           "' is repeated in input ", i, " (shape ", s,
                                           ") with sizes ", v.size[at], " and ", sz);
          v.stride[at] += st;
          return OkStatus();
        }
        v.labels.push_back(label);
        v.size.push_back(sz);
        v.stride.push_back(st);
        if (label < named) {
          if (label_size[label] >= 0 && label_size[label] != sz) {
            const int j = label_src[label];
            return errors::InvalidArgument(
                op, ": equation '", equation_, "': label '",
                std::string(1, eq_.names[label]), "' has size ", label_size[label], " in input ",
                j, " (shape ", shapes[j], ") but size ", sz, " in input ", i, " (shape ", s, ")");
          }
          label_size[label] = sz;
          label_src[label] = i;
        } else if (label_size[label] < 0 || label_size[label] == 1) {
          label_size[label] = sz;
        } else if (sz != 1 && sz != label_size[label]) {
          return errors::InvalidArgument(op, ": equation '", equation_,
                                         "': the broadcast (...) dimensions of the inputs (shapes ",
                                         shapes[0], n_in > 1 ? " and " : "",
                                         n_in > 1 ? shapes[1].ToString() : std::string(),
                                         ") are not broadcast-compatible (", label_size[label],
                                         " vs ", sz, ")");
        }
        return OkStatus();
      };
      for (int l : eq_.inputs[i]) {
        if (l == kEllipsis) {
          for (int j = 0; j < nb[i]; ++j) TF_RETURN_IF_ERROR(add(named + max_bcast - nb[i] + j));
        } else {
          TF_RETURN_IF_ERROR(add(l));
        }
      }
    }
    std::vector<int> all_out_labels;
    for (int l : eq_.output) {
      if (l == kEllipsis) {
        for (int j = 0; j < max_bcast; ++j) all_out_labels.push_back(named + j);
      } else {
        all_out_labels.push_back(l);
      }
    }
    TensorShape out_shape;
    for (int l : all_out_labels) out_shape.AddDim(label_size[l]);
    Tensor* out = nullptr;
    TF_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return OkStatus();

    // Distinct output labels, in order of first appearance. With a repeated
    // one, the result over them goes to scratch, then onto out's diagonal.
    std::vector<int> out_labels;
    for (int l : all_out_labels)
      if (std::find(out_labels.begin(), out_labels.end(), l) == out_labels.end())
        out_labels.push_back(l);
    if (out_labels.size() == all_out_labels.size())
      return ComputeInto(ctx, in, views, named, label_size, out_labels, out->flat<T>().data());
    Dims diag;  // the distinct labels' sizes and summed strides in out
    std::vector<int64_t> ostride(all_out_labels.size(), 1);
    for (int d = static_cast<int>(all_out_labels.size()) - 2; d >= 0; --d)
      ostride[d] = ostride[d + 1] * out_shape.dim_size(d + 1);
    for (int l : out_labels) {
      int64_t st = 0;
      for (size_t d = 0; d < all_out_labels.size(); ++d)
        if (all_out_labels[d] == l) st += ostride[d];
      diag.Add(label_size[l], st);
    }
    Tensor dense;
    TF_RETURN_IF_ERROR(
        ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({diag.count()}), &dense));
    TF_RETURN_IF_ERROR(
        ComputeInto(ctx, in, views, named, label_size, out_labels, dense.flat<T>().data()));
    std::memset(out->data(), 0, out->TotalBytes());
    ScatterDense(dense.flat<T>().data(), diag, out->flat<T>().data());
    return OkStatus();
  }

  // The einsum over `out_labels` (distinct), written dense to dst.
  Status ComputeInto(OpKernelContext* ctx, const std::vector<const Tensor*>& in,
                     const std::vector<View>& views, int named,
                     const std::vector<int64_t>& label_size, const std::vector<int>& out_labels,
                     T* dst) const {
    const int n_in = static_cast<int>(in.size());
    const Eigen::ThreadPoolDevice& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
    int64_t out_count = 1;
    for (int l : out_labels) out_count *= label_size[l];
    auto in_output = [&](int l) {
      return std::find(out_labels.begin(), out_labels.end(), l) != out_labels.end();
    };

    if (n_in == 1) {  // transpose / diagonal / sums straight into the output
      const View& v = views[0];
      Dims keep, red;
      for (int l : out_labels) {
        const int at = v.Find(l);
        keep.Add(v.size[at], v.stride[at]);
      }
      for (size_t j = 0; j < v.labels.size(); ++j)
        if (!in_output(v.labels[j])) red.Add(v.size[j], v.stride[j]);
      GatherSum<T, T, C>(dev, in[0]->flat<T>().data(), keep, red, dst);
      return OkStatus();
    }

    // Two inputs: classify the labels.
    const View &va = views[0], &vb = views[1];
    std::vector<int> batch, free_a, free_b, contract;
    for (int l : out_labels) {
      const bool a = va.Find(l) >= 0, b = vb.Find(l) >= 0;
      if (l >= named || (a && b)) batch.push_back(l);
      else if (a) free_a.push_back(l);
      else free_b.push_back(l);
    }
    for (int l : va.labels)
      if (!in_output(l) && vb.Find(l) >= 0) contract.push_back(l);
    auto prod = [&](const std::vector<int>& ls) {
      int64_t p = 1;
      for (int l : ls) p *= label_size[l];
      return p;
    };
    const int64_t k = prod(contract), nbatch = prod(batch);

    // One operand as a stack of matrices: its own batch sizes (1 where it
    // broadcasts), then `rows` and `cols` labels. Uses the input's buffer when
    // it already has that layout (or the transposed one), else gathers (and
    // sums the reduce labels) into a dense C scratch tensor.
    struct Packed {
      Tensor scratch;
      const C* data = nullptr;
      bool transposed = false;
      std::vector<int64_t> batch_size;  // per batch label, in this operand
    };
    auto pack = [&](int idx, const std::vector<int>& rows,
                    const std::vector<int>& cols) -> pdk::StatusOr<Packed> {
      const View& v = views[idx];
      Packed p;
      Dims bdims, rdims, cdims, red;
      for (int l : batch) {
        const int at = v.Find(l);
        bdims.Add(at >= 0 ? v.size[at] : 1, at >= 0 ? v.stride[at] : 0);
        p.batch_size.push_back(at >= 0 ? v.size[at] : 1);
      }
      for (int l : rows) {
        const int at = v.Find(l);
        rdims.Add(v.size[at], v.stride[at]);
      }
      for (int l : cols) {
        const int at = v.Find(l);
        cdims.Add(v.size[at], v.stride[at]);
      }
      for (size_t j = 0; j < v.labels.size(); ++j)
        if (!in_output(v.labels[j]) && (idx == 0 ? vb : va).Find(v.labels[j]) < 0)
          red.Add(v.size[j], v.stride[j]);
      auto concat = [](const Dims& x, const Dims& y, const Dims& z) {
        Dims d = x;
        d.size.insert(d.size.end(), y.size.begin(), y.size.end());
        d.size.insert(d.size.end(), z.size.begin(), z.size.end());
        d.stride.insert(d.stride.end(), y.stride.begin(), y.stride.end());
        d.stride.insert(d.stride.end(), z.stride.begin(), z.stride.end());
        return d;
      };
      const Dims straight = concat(bdims, rdims, cdims);
      const int64_t elements = in[idx]->NumElements();
      if constexpr (!pdk_compute::kIsHalfLike<T>) {
        if (IsDense(straight, elements)) {
          p.data = in[idx]->flat<T>().data();
          return p;
        }
        if (IsDense(concat(bdims, cdims, rdims), elements)) {
          p.data = in[idx]->flat<T>().data();
          p.transposed = true;
          return p;
        }
      }
      // Gathered in the order whose last dimension is contiguous in the
      // input (whole rows copied), as a transposed GEMM operand if need be.
      const Dims flipped = concat(bdims, cdims, rdims);
      p.transposed = !InnerContiguous(straight) && InnerContiguous(flipped);
      const Dims& order = p.transposed ? flipped : straight;
      PDK_RETURN_IF_ERROR(ctx->allocate_temp(DataTypeToEnum<C>::value,
                                             TensorShape({order.count()}), &p.scratch));
      C* scratch = p.scratch.template flat<C>().data();
      GatherSum<T, C, C>(dev, in[idx]->flat<T>().data(), order, red, scratch);
      p.data = scratch;
      return p;
    };
    // The product is [batch, free_a, free_b]; when the output has the free
    // labels the other way round ("aecd,abcd->acbe"), the operands swap, so
    // that the product lands in the output's order without a gather.
    auto concat_labels = [&](const std::vector<int>& x, const std::vector<int>& y) {
      std::vector<int> l = batch;
      l.insert(l.end(), x.begin(), x.end());
      l.insert(l.end(), y.begin(), y.end());
      return l;
    };
    const bool swap = concat_labels(free_a, free_b) != out_labels &&
                      concat_labels(free_b, free_a) == out_labels;
    if (swap) std::swap(free_a, free_b);
    const int first = swap ? 1 : 0;
    // a: [batch, free_a, contract] (or its transpose); b: [batch, contract,
    // free_b] (or [batch, free_b, contract], a transposed GEMM operand).
    PDK_ASSIGN_OR_RETURN(Packed pa, pack(first, free_a, contract));
    PDK_ASSIGN_OR_RETURN(Packed pb, pack(1 - first, contract, free_b));

    // Offsets of each output batch item's matrices (stride 0 where an operand
    // broadcasts), as BatchMatMulV2 does.
    const int br = static_cast<int>(batch.size());
    const int64_t m = prod(free_a), n = prod(free_b);
    std::vector<int64_t> sa(br, 0), sb(br, 0);
    int64_t ma = m * k, mb = k * n;
    for (int d = br - 1; d >= 0; --d) {
      if (pa.batch_size[d] != 1) sa[d] = ma;
      if (pb.batch_size[d] != 1) sb[d] = mb;
      ma *= pa.batch_size[d];
      mb *= pb.batch_size[d];
    }
    std::vector<int64_t> a_off(nbatch), b_off(nbatch), idx(br, 0);
    int64_t ao = 0, bo = 0;
    for (int64_t i = 0; i < nbatch; ++i) {
      a_off[i] = ao;
      b_off[i] = bo;
      for (int d = br - 1; d >= 0; --d) {
        if (++idx[d] < label_size[batch[d]]) {
          ao += sa[d];
          bo += sb[d];
          break;
        }
        ao -= sa[d] * (label_size[batch[d]] - 1);
        bo -= sb[d] * (label_size[batch[d]] - 1);
        idx[d] = 0;
      }
    }

    // The product [batch, free_a, free_b]: straight into the output when that
    // is the output's order, else into scratch, then to the output's order.
    const std::vector<int> product_labels = concat_labels(free_a, free_b);
    const bool direct = !pdk_compute::kIsHalfLike<T> && product_labels == out_labels;
    Tensor product;
    C* c = nullptr;
    if (direct) {
      c = reinterpret_cast<C*>(dst);  // C is T when direct
    } else {
      TF_RETURN_IF_ERROR(
          ctx->allocate_temp(DataTypeToEnum<C>::value, TensorShape({out_count}), &product));
      c = product.flat<C>().data();
    }
    pdk_compute::BatchGemm<C>(dev, pa.transposed, pb.transposed, m, n, k, nbatch, pa.data, a_off,
                              pb.data, b_off, c);
    if (direct) return OkStatus();
    std::vector<int64_t> pstride(product_labels.size(), 1);
    for (int d = static_cast<int>(product_labels.size()) - 2; d >= 0; --d)
      pstride[d] = pstride[d + 1] * label_size[product_labels[d + 1]];
    Dims keep, none;
    for (int l : out_labels) {
      const size_t at = std::find(product_labels.begin(), product_labels.end(), l) -
                        product_labels.begin();
      keep.Add(label_size[l], pstride[at]);
    }
    GatherSum<C, T, C>(dev, c, keep, none, dst);
    return OkStatus();
  }

  Equation eq_;
  std::string equation_;
};

#define PDK_REGISTER_EINSUM_(T) \
  REGISTER_KERNEL_BUILDER(Name("Einsum").Device(DEVICE_PDK).TypeConstraint<T>("T"), EinsumOp<T>);
TF_CALL_FLOAT_TYPES(PDK_REGISTER_EINSUM_)  // float16, bfloat16, float32, float64
TF_CALL_int32(PDK_REGISTER_EINSUM_)
TF_CALL_int64(PDK_REGISTER_EINSUM_)
#undef PDK_REGISTER_EINSUM_

}  // namespace
}  // namespace tensorflow
