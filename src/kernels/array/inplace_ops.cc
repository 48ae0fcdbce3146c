// The in-place (aliasing) ops of TensorFlow's inplace_ops family, so that a
// graph using them stays on one device:
//
//   _ParallelConcatStart(; shape, dtype) -> output: an uninitialized tensor of
//       `shape` (fully defined). TensorFlow's ParallelConcatRemovePass
//       (core/common_runtime/parallel_concat_optimizer.cc) turns every
//       ParallelConcat (tf.parallel_stack in a graph) into this Start, one
//       _ParallelConcatUpdate per input writing into the Start's buffer, and
//       an Identity of the Start with control inputs from the updates. All of
//       them must run on one device: with the Start and updates on the CPU and
//       the Identity on PDK, the copy of the Start's buffer to PDK ran as soon
//       as the Start finished, before any update, and tf.parallel_stack
//       returned zeros (issue 14).
//       TensorFlow 2.21's kernel C API has no getter for a `shape` attribute,
//       so the kernel reads the same dimensions from `_pdk_shape` (list(int)),
//       which PDK's graph optimizer copies from `shape` on every Start placed
//       on PDK (src/graph/rewrites/parallel_concat.cc, always on). Without it
//       (Grappler switched off) the kernel fails at construction, naming the
//       reason: an error, never a wrong result.
//   _ParallelConcatUpdate(value, update; loc) -> output: writes update ([1] +
//       value.shape[1:]) into row loc of value's buffer (loc taken modulo
//       value.shape[0], as TensorFlow does) and returns value itself.
//   InplaceUpdate / InplaceAdd / InplaceSub(x, i, v) -> y: for j in order,
//       row i[j] of x (modulo x.shape[0]) is set to / increased by / decreased
//       by v[j]; y is x's buffer (x is modified). Duplicate indices apply in
//       order (the last update wins; additions accumulate).
//   DeepCopy(x) -> y: a copy of x in a new buffer.
//   Empty(shape; dtype, init) -> output: a new tensor of `shape` (int32
//       vector, host memory), zeros when init=true, else uninitialized.
//
// Dtypes: every type PDK's data-movement kernels register
// (pdk_compute::DataMovementTypes: float32/64, float16, bfloat16, int8/16/32/64,
// uint8, bool); InplaceAdd and InplaceSub all but bool. half and bfloat16
// arithmetic rounds each sum once, as Eigen's (TensorFlow's CPU kernel) does.
// Errors (InvalidArgument, TensorFlow's wording first): the shape checks of
// tensorflow/core/kernels/inplace_ops.cc (the semantics' source; op
// definitions in tensorflow/core/ops/array_ops.cc); negative or overflowing
// Empty shapes; a _ParallelConcatStart shape that is not fully defined.
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "compute/copy.h"
#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

using pdk_compute::CopyStreams;
using pdk_compute::Stream;

// Copies `bytes` bytes from src to dst on the device's pool.
void CopyBytes(const pdk::Context& ctx, void* dst, const void* src, int64_t bytes) {
  CopyStreams(pdk_compute::Device(ctx), 1,
              {{static_cast<char*>(dst), 0, static_cast<const char*>(src), 0, bytes}});
}

// Output 0 is input tensor `t` itself (same buffer). An empty tensor has no
// buffer to share (TF_GetInput hands out none): a fresh empty output then.
pdk::Status AliasOutput(const pdk::Context& ctx, const pdk::Tensor& t) {
  if (t.num_elements() == 0) return ctx.allocate_output(0, t.shape()).status();
  return ctx.set_output(0, t);
}

// Element count of `dims` or InvalidArgument for a negative dimension or an
// int64 overflow (the checks of TensorShapeUtils::MakeShape).
pdk::StatusOr<pdk::Shape> CheckedShape(const char* op, const char* what,
                                       const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0)
      return pdk::InvalidArgument("Dimension ", dims[d], " must be >= 0 (", op, ": ", what, " ",
                                  pdk::Shape(dims), ")");
    if (dims[d] != 0 && n > std::numeric_limits<int64_t>::max() / dims[d])
      return pdk::InvalidArgument("Shape ", pdk::Shape(dims), " has too many elements (", op,
                                  ": ", what, ")");
    n *= dims[d];
  }
  return pdk::Shape(dims);
}

class ParallelConcatStartOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    if (!a.Has("_pdk_shape"))
      return pdk::FailedPrecondition(
          "node '", a.node_name(), "' has no attribute '_pdk_shape': PDK's graph optimizer "
          "copies it from 'shape' (TensorFlow 2.21's kernel C API cannot read a shape "
          "attribute), and it did not run on this graph (Grappler switched off?)");
    std::vector<int64_t> dims;
    PDK_RETURN_IF_ERROR(a.Get("_pdk_shape", &dims));
    PDK_ASSIGN_OR_RETURN(shape_, CheckedShape("_ParallelConcatStart", "shape", dims));
    return pdk::Status::OK();
  }
  pdk::Status Compute(pdk::Context& ctx) const {
    return ctx.allocate_output(0, shape_).status();
  }

 private:
  pdk::Shape shape_;
};

class ParallelConcatUpdateOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.Get("loc", &loc_); }
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor value, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor update, ctx.input(1));
    const pdk::Shape vs = value.shape(), us = update.shape();
    if (vs.rank() < 1) return pdk::InvalidArgument("value should be at least rank 1.");
    if (vs[0] <= loc_)
      return pdk::InvalidArgument("0th dimension of value = ", vs[0],
                                  " must be greater than loc_ = ", loc_);
    if (vs.rank() != us.rank())
      return pdk::InvalidArgument("value and update shape doesn't match: ", vs, " vs. ", us);
    for (int d = 1; d < vs.rank(); ++d)
      if (vs[d] != us[d])
        return pdk::InvalidArgument("value and update shape doesn't match ", vs, " vs. ", us);
    if (us[0] != 1) return pdk::InvalidArgument("update shape doesn't match: ", us);
    const int64_t rows = vs[0];
    const int64_t row = (loc_ % rows + rows) % rows;
    const int64_t row_bytes =
        update.num_elements() * static_cast<int64_t>(TF_DataTypeSize(ctx.input_dtype(0)));
    if (row_bytes > 0)
      CopyBytes(ctx, static_cast<char*>(value.raw_data()) + row * row_bytes, update.raw_data(),
                row_bytes);
    return AliasOutput(ctx, value);
  }

 private:
  int64_t loc_ = 0;
};

enum class InplaceKind { kUpdate, kAdd, kSub };

// x[i[j]] (=|+=|-=) v[j] for each j in order; y is x.
template <class T, InplaceKind kKind>
class InplaceOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor i, ctx.input(1));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor v, ctx.input(2));
    const pdk::Shape xs = x.shape(), is = i.shape(), vs = v.shape();
    if (is.rank() != 1) return pdk::InvalidArgument("i must be a vector. ", is);
    if (xs.rank() != vs.rank())
      return pdk::InvalidArgument("x and v shape doesn't match (ranks differ): ", xs, " vs. ",
                                  vs);
    if (xs.rank() < 1)
      return pdk::InvalidArgument(ctx.op(), ": x and v must be at least rank 1, got shapes ",
                                  xs, " and ", vs);
    for (int d = 1; d < xs.rank(); ++d)
      if (xs[d] != vs[d])
        return pdk::InvalidArgument("x and v shape doesn't match at index ", d, " : ", xs,
                                    " vs. ", vs);
    if (is[0] != vs[0])
      return pdk::InvalidArgument("i and x shape doesn't match at index 0: ", is, " vs. ", vs);
    if (x.num_elements() > 0 && v.num_elements() > 0) {
      const int64_t rows = xs[0], n = v.num_elements() / vs[0];
      const int32_t* idx = i.data<int32_t>();
      T* y = x.data<T>();
      const T* src = v.data<T>();
      const auto& dev = pdk_compute::Device(ctx);
      for (int64_t j = 0; j < is[0]; ++j) {
        const int64_t r = (idx[j] % rows + rows) % rows;
        pdk_compute::Flat<T> dst(y + r * n, n);
        pdk_compute::ConstFlat<T> row(src + j * n, n);
        if constexpr (kKind == InplaceKind::kUpdate) dst.device(dev) = row;
        else if constexpr (kKind == InplaceKind::kAdd) dst.device(dev) = dst + row;
        else dst.device(dev) = dst - row;
      }
    }
    return AliasOutput(ctx, x);
  }
};

class DeepCopyOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor y, ctx.allocate_output(0, x.shape()));
    if (x.num_elements() > 0) CopyBytes(ctx, y.raw_data(), x.raw_data(), x.bytes());
    return pdk::Status::OK();
  }
};

class EmptyOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) { return a.GetOptional("init", &init_); }
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor shape_t, ctx.input(0));
    if (shape_t.rank() != 1)
      return pdk::InvalidArgument("shape must be a vector of int32, got shape ", shape_t.shape());
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         pdk::ReadIntVector(ctx.op(), "shape", shape_t));
    PDK_ASSIGN_OR_RETURN(pdk::Shape shape, CheckedShape(ctx.op(), "shape", dims));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor out, ctx.allocate_output(0, shape));
    if (init_ && out.num_elements() > 0) std::memset(out.raw_data(), 0, out.bytes());
    return pdk::Status::OK();
  }

 private:
  bool init_ = false;
};

}  // namespace

PDK_REGISTER_KERNELS(InplaceOps, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{}, [&](auto t) {
    using T = typename decltype(t)::type;
    // int32: all in host memory, so the Identity that reads the start's
    // buffer after the updates (by control edges) reads it without a copy,
    // which TensorFlow would start as soon as the buffer exists.
    r.Add(Int32OnHost<T>(
        pdk::KernelDef<ParallelConcatStartOp>("_ParallelConcatStart").Type("dtype", t), {"output"}));
    r.Add(Int32OnHost<T>(
        pdk::KernelDef<ParallelConcatUpdateOp>("_ParallelConcatUpdate").Type("T", t),
        {"value", "update", "output"}));
    r.Add(Int32OnHost<T>(
        pdk::KernelDef<InplaceOp<T, InplaceKind::kUpdate>>("InplaceUpdate").Type("T", t).HostMemory("i"),
        {"x", "v", "y"}));
    if constexpr (!std::is_same_v<T, bool>) {
      r.Add(Int32OnHost<T>(
          pdk::KernelDef<InplaceOp<T, InplaceKind::kAdd>>("InplaceAdd").Type("T", t).HostMemory("i"),
          {"x", "v", "y"}));
      r.Add(Int32OnHost<T>(
          pdk::KernelDef<InplaceOp<T, InplaceKind::kSub>>("InplaceSub").Type("T", t).HostMemory("i"),
          {"x", "v", "y"}));
    }
    r.Add(Int32OnHost<T>(pdk::KernelDef<DeepCopyOp>("DeepCopy").Type("T", t), {"x", "y"}));
    r.Add(pdk::KernelDef<EmptyOp>("Empty").Type("dtype", t).HostMemory("shape"));
  });
}

}  // namespace pdk_kernels
