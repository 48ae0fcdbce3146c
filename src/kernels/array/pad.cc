// Pad, PadV2, MirrorPad, MirrorPadGrad.
//
// Pad(input, paddings) / PadV2(input, paddings, constant_values):
//   input (any rank, T), paddings ([rank, 2] Tpaddings int32/int64, host
//   memory, non-negative), constant_values (scalar T; 0 for Pad). Output
//   dim i = paddings[i,0] + input dim i + paddings[i,1], the constant outside
//   and the input inside (box_copy.h). All-zero paddings forward the input.
// MirrorPad(input, paddings; mode): the pad mirrors the input. REFLECT omits
//   the edge ([a b c] pad 2 -> c b a b c b a), so paddings must be <= D-1;
//   SYMMETRIC repeats it (b a a b c c b), paddings <= D.
// MirrorPadGrad(grad, paddings; mode): the gradient of MirrorPad: grad has the
//   padded shape, the output the unpadded one; each output element is the sum
//   of the grad elements MirrorPad copied from it (reduced one dimension at a
//   time, so float sums may differ from TF's in the last bits).
// Semantics: tensorflow/core/ops/array_ops.cc (Pad, PadV2, MirrorPad,
// MirrorPadGrad).
// Dtypes: Pad/PadV2/MirrorPad T float32/64, float16, bfloat16, int32, int64,
// bool, uint8, int8, int16; MirrorPadGrad float32/64, int32, int64.
// Errors (InvalidArgument): paddings not of shape [rank, 2]; a negative
// padding; constant_values not a scalar; a mirror padding too large for its
// dimension; a MirrorPadGrad grad smaller than the paddings. Messages start
// with TensorFlow's wording for the same error (tensorflow/core/kernels/
// pad_op.cc, mirror_pad_op.cc), PDK's detail follows in parentheses.
#include <cstring>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "kernels/array/box_copy.h"
#include "pdk/kernel.h"

namespace pdk_kernels {
namespace {

// Reads paddings ([rank, 2], non-negative) into before/after, for an input
// of shape `in`. `mirror`: MirrorPad's spelling of TensorFlow's messages
// (mirror_pad_op.cc) rather than Pad's (pad_op.cc).
pdk::Status ReadPaddings(const char* op, const pdk::Tensor& p, const pdk::Shape& in, bool mirror,
                         std::vector<int64_t>* before, std::vector<int64_t>* after) {
  const int rank = in.rank();
  if (p.rank() != 2 || p.dim(1) != 2)
    return pdk::InvalidArgument("paddings must be a matrix with 2 columns: ", p.shape(), " (", op,
                                ": paddings must have shape [", rank,
                                ", 2], the rank of input, then before/after)");
  if (p.dim(0) != rank)
    return pdk::InvalidArgument("The first dimension of paddings must be the rank of inputs",
                                p.shape(), mirror ? ", " : " ", in, " (", op,
                                ": paddings must have shape [", rank, ", 2])");
  PDK_ASSIGN_OR_RETURN(std::vector<int64_t> v, pdk::ReadIntVector(op, "paddings", p));
  before->resize(rank);
  after->resize(rank);
  for (int i = 0; i < rank; ++i) {
    (*before)[i] = v[2 * i];
    (*after)[i] = v[2 * i + 1];
    if (v[2 * i] < 0 || v[2 * i + 1] < 0)
      return pdk::InvalidArgument(mirror ? "p" : "P", "addings must be non-negative: ", v[2 * i],
                                  " ", v[2 * i + 1], " (", op, ": paddings[", i, "])");
  }
  return pdk::Status::OK();
}

// ------------------------------------------------------------------ Pad, PadV2

template <class T>
class PadOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor input, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor pad_t, ctx.input(1));
    const pdk::Shape in = input.shape();
    const int rank = in.rank();
    std::vector<int64_t> before, after;
    PDK_RETURN_IF_ERROR(ReadPaddings(ctx.op(), pad_t, in, false, &before, &after));
    T value = T(0);
    if (ctx.num_inputs() > 2) {
      PDK_ASSIGN_OR_RETURN(pdk::Tensor c, ctx.input(2));
      if (c.rank() != 0)
        return pdk::InvalidArgument("constant_values must be a scalar. Found: ", c.shape(),
                                    " (", ctx.op(), ")");
      value = c.data<T>()[0];
    }
    std::vector<int64_t> out_dims(rank);
    bool none = true;
    for (int i = 0; i < rank; ++i) {
      out_dims[i] = before[i] + in[i] + after[i];
      none = none && before[i] == 0 && after[i] == 0;
    }
    const pdk::Shape out_shape(out_dims);
    if (none) return ctx.set_output_reshaped(0, input, out_shape);  // no copy
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    if (out_shape.num_elements() == 0) return pdk::Status::OK();
    const auto& dev = pdk_compute::Device(ctx);
    pdk_compute::flat<T>(out).device(dev) = pdk_compute::flat<T>(out).constant(value);
    if (in.num_elements() == 0) return pdk::Status::OK();
    CopyBox(dev, sizeof(T), static_cast<const char*>(input.raw_data()), in.dims(),
            std::vector<int64_t>(rank, 0), static_cast<char*>(out.raw_data()), out_dims, before,
            in.dims());
    return pdk::Status::OK();
  }
};

// ------------------------------------------------------------ MirrorPad (+grad)

// The input index that padded index x (already shifted by -before) mirrors.
inline int64_t Mirror(int64_t x, int64_t d, int64_t offset) {
  if (x < 0) return -x - 1 + offset;
  if (x >= d) return 2 * d - 1 - x - offset;
  return x;
}

pdk::Status ReadMode(const pdk::Attrs& a, int64_t* offset) {
  std::string mode;
  PDK_RETURN_IF_ERROR(a.Get("mode", &mode));
  if (mode == "REFLECT") *offset = 1;
  else if (mode == "SYMMETRIC") *offset = 0;
  else return pdk::InvalidArgument("mode must be REFLECT or SYMMETRIC, got '", mode, "'");
  return pdk::Status::OK();
}

pdk::Status CheckMirror(const char* op, int64_t offset, const pdk::Shape& in,
                        const std::vector<int64_t>& before, const std::vector<int64_t>& after) {
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t lim = in[i] - offset;
    if (before[i] <= lim && after[i] <= lim) continue;
    const char* mode = offset ? "REFLECT" : "SYMMETRIC";
    if (offset)
      return pdk::InvalidArgument("paddings must be less than the dimension size: ", before[i],
                                  ", ", after[i], " not less than ", in[i], " (", op, ": ",
                                  mode, " mode, dimension ", i, " of input shape ", in, ")");
    return pdk::InvalidArgument("paddings must be no greater than the dimension size: ",
                                before[i], ", ", after[i], " greater than ", in[i], " (", op,
                                ": ", mode, " mode, dimension ", i, " of input shape ", in, ")");
  }
  return pdk::Status::OK();
}

class MirrorPadOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return ReadMode(a, &offset_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor input, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor pad_t, ctx.input(1));
    const pdk::Shape in = input.shape();
    const int rank = in.rank();
    std::vector<int64_t> before, after;
    PDK_RETURN_IF_ERROR(ReadPaddings(ctx.op(), pad_t, in, true, &before, &after));
    PDK_RETURN_IF_ERROR(CheckMirror(ctx.op(), offset_, in, before, after));
    std::vector<int64_t> od(rank);
    bool none = true;
    for (int i = 0; i < rank; ++i) {
      od[i] = before[i] + in[i] + after[i];
      none = none && before[i] == 0 && after[i] == 0;
    }
    const pdk::Shape out_shape(od);
    if (none) return ctx.set_output_reshaped(0, input, out_shape);  // no copy (also rank 0)
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    if (out_shape.num_elements() == 0) return pdk::Status::OK();
    const int64_t elem = static_cast<int64_t>(TF_DataTypeSize(input.dtype()));
    std::vector<int64_t> is(rank, 1);  // input strides in elements
    for (int k = rank - 2; k >= 0; --k) is[k] = is[k + 1] * in[k + 1];
    const int last = rank - 1;
    const int64_t orow = od[last], rows = out_shape.num_elements() / orow;
    const char* src = static_cast<const char*>(input.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    const int64_t off = offset_;
    auto do_rows = [&](Eigen::Index first, Eigen::Index lastr) {
      for (Eigen::Index r = first; r < lastr; ++r) {
        int64_t rem = r, so = 0;
        for (int k = last - 1; k >= 0; --k) {
          const int64_t x = rem % od[k] - before[k];
          rem /= od[k];
          so += Mirror(x, in[k], off) * is[k];
        }
        const char* s = src + so * elem;
        char* d = dst + r * orow * elem;
        for (int64_t j = 0; j < before[last]; ++j)
          std::memcpy(d + j * elem, s + Mirror(j - before[last], in[last], off) * elem, elem);
        std::memcpy(d + before[last] * elem, s, in[last] * elem);
        for (int64_t j = before[last] + in[last]; j < orow; ++j)
          std::memcpy(d + j * elem, s + Mirror(j - before[last], in[last], off) * elem, elem);
      }
    };
    if (out.bytes() <= (64 << 10)) {
      do_rows(0, rows);
    } else {
      pdk_compute::Device(ctx).parallelFor(rows, Eigen::TensorOpCost(orow * elem, orow * elem, 4 * rank),
                                           do_rows);
    }
    return pdk::Status::OK();
  }

 private:
  int64_t offset_ = 1;
};

template <class T>
class MirrorPadGradOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return ReadMode(a, &offset_); }

  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor grad, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor pad_t, ctx.input(1));
    const pdk::Shape gs = grad.shape();
    const int rank = gs.rank();
    std::vector<int64_t> before, after;
    PDK_RETURN_IF_ERROR(ReadPaddings(ctx.op(), pad_t, gs, true, &before, &after));
    std::vector<int64_t> od(rank);
    for (int i = 0; i < rank; ++i) {
      od[i] = gs[i] - before[i] - after[i];
      if (od[i] < 0)
        return pdk::InvalidArgument(ctx.op(), ": paddings[", i, "] = [", before[i], ", ",
                                    after[i], "] exceed dimension ", i, " of grad shape ", gs);
    }
    const pdk::Shape out_shape(od);
    PDK_RETURN_IF_ERROR(CheckMirror(ctx.op(), offset_, out_shape, before, after));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, out_shape));
    if (out_shape.num_elements() == 0) return pdk::Status::OK();
    // Reduce one dimension at a time: cur (dims cd) -> next (dim k unpadded).
    std::vector<int64_t> cd = gs.dims();
    std::vector<T> cur(grad.data<T>(), grad.data<T>() + grad.num_elements()), next;
    for (int k = 0; k < rank; ++k) {
      if (before[k] == 0 && after[k] == 0) continue;
      int64_t outer = 1, inner = 1;
      for (int i = 0; i < k; ++i) outer *= cd[i];
      for (int i = k + 1; i < rank; ++i) inner *= cd[i];
      const int64_t P = cd[k], D = od[k];
      next.assign(static_cast<size_t>(outer * D * inner), T(0));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < P; ++j) {
          const int64_t x = Mirror(j - before[k], D, offset_);
          const T* s = cur.data() + (o * P + j) * inner;
          T* d = next.data() + (o * D + x) * inner;
          for (int64_t i = 0; i < inner; ++i) d[i] += s[i];
        }
      cd[k] = D;
      cur.swap(next);
    }
    std::memcpy(out.raw_data(), cur.data(), out.bytes());
    return pdk::Status::OK();
  }

 private:
  int64_t offset_ = 1;
};

}  // namespace

PDK_REGISTER_KERNELS(Pad, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto p) {
                       for (const char* op : {"Pad", "PadV2"})
                         r.Add(pdk::KernelDef<PadOp<T>>(op)
                                   .Type("T", t)
                                   .Type("Tpaddings", p)
                                   .HostMemory("paddings"));
                       r.Add(pdk::KernelDef<MirrorPadOp>("MirrorPad")
                                 .Type("T", t)
                                 .Type("Tpaddings", p)
                                 .HostMemory("paddings"));
                     });
                   });
  pdk::ForEachType(pdk::TypeList<float, double, int32_t, int64_t>{}, [&](auto t) {
    using T = typename decltype(t)::type;
    pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto p) {
      r.Add(pdk::KernelDef<MirrorPadGradOp<T>>("MirrorPadGrad")
                .Type("T", t)
                .Type("Tpaddings", p)
                .HostMemory("paddings"));
    });
  });
}

}  // namespace pdk_kernels
