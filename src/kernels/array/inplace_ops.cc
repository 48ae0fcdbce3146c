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
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/copy.h"
#include "compute/eigen.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_compute::CopyStreams;
using pdk_compute::Stream;

// Copies `bytes` bytes from src to dst on the device's pool.
void CopyBytes(const Eigen::ThreadPoolDevice& dev, void* dst, const void* src, int64 bytes) {
  CopyStreams(dev, 1, {{static_cast<char*>(dst), 0, static_cast<const char*>(src), 0, bytes}});
}

// `dims` as a shape, or InvalidArgument for a negative dimension or an int64
// overflow of the element count (the checks of TensorShapeUtils::MakeShape).
Status CheckedShape(const std::string& op, const char* what, const std::vector<int64>& dims,
                    TensorShape* shape) {
  int64 n = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0)
      return errors::InvalidArgument("Dimension ", dims[d], " must be >= 0 (", op, ": ", what,
                                      " ", ::pdk::Shape(dims), ")");
    if (dims[d] != 0 && n > std::numeric_limits<int64>::max() / dims[d])
      return errors::InvalidArgument("Shape ", ::pdk::Shape(dims), " has too many elements (",
                                     op, ": ", what, ")");
    n *= dims[d];
  }
  *shape = TensorShape(dims);
  return OkStatus();
}

class ParallelConcatStartOp : public OpKernel {
 public:
  explicit ParallelConcatStartOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES(c, c->HasAttr("_pdk_shape"),
                errors::FailedPrecondition(
                    "node '", c->name(), "' has no attribute '_pdk_shape': PDK's graph optimizer "
                    "copies it from 'shape' (TensorFlow 2.21's kernel C API cannot read a shape "
                    "attribute), and it did not run on this graph (Grappler switched off?)"));
    std::vector<int64> dims;
    OP_REQUIRES_OK(c, c->GetAttr("_pdk_shape", &dims));
    OP_REQUIRES_OK(c, CheckedShape("_ParallelConcatStart", "shape", dims, &shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape_, &out));
  }

 private:
  TensorShape shape_;
};

class ParallelConcatUpdateOp : public OpKernel {
 public:
  explicit ParallelConcatUpdateOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("loc", &loc_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& update = ctx->input(1);
    const TensorShape &vs = value.shape(), &us = update.shape();
    OP_REQUIRES(ctx, vs.dims() >= 1,
                errors::InvalidArgument("value should be at least rank 1."));
    OP_REQUIRES(ctx, vs.dim_size(0) > loc_,
                errors::InvalidArgument("0th dimension of value = ", vs.dim_size(0),
                                        " must be greater than loc_ = ", loc_));
    OP_REQUIRES(ctx, vs.dims() == us.dims(),
                errors::InvalidArgument("value and update shape doesn't match: ", vs, " vs. ",
                                        us));
    for (int d = 1; d < vs.dims(); ++d)
      OP_REQUIRES(ctx, vs.dim_size(d) == us.dim_size(d),
                  errors::InvalidArgument("value and update shape doesn't match ", vs, " vs. ",
                                          us));
    OP_REQUIRES(ctx, us.dim_size(0) == 1,
                errors::InvalidArgument("update shape doesn't match: ", us));
    const int64 rows = vs.dim_size(0);
    const int64 row = (loc_ % rows + rows) % rows;
    const int64 row_bytes =
        update.NumElements() * static_cast<int64>(DataTypeSize(ctx->input_dtype(0)));
    if (row_bytes > 0)
      CopyBytes(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
                static_cast<char*>(value.data()) + row * row_bytes, update.data(), row_bytes);
    // Output 0 is value itself (its buffer; an empty one gets a fresh empty
    // output, as TF_GetInput hands out no buffer for it).
    ctx->set_output(0, value);
  }

 private:
  int64 loc_ = 0;
};

enum class InplaceKind { kUpdate, kAdd, kSub };

// x[i[j]] (=|+=|-=) v[j] for each j in order; y is x.
template <class T, InplaceKind kKind>
class InplaceOp : public OpKernel {
 public:
  explicit InplaceOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& i = ctx->input(1);
    const Tensor& v = ctx->input(2);
    const TensorShape &xs = x.shape(), &is = i.shape(), &vs = v.shape();
    OP_REQUIRES(ctx, is.dims() == 1, errors::InvalidArgument("i must be a vector. ", is));
    OP_REQUIRES(ctx, xs.dims() == vs.dims(),
                errors::InvalidArgument("x and v shape doesn't match (ranks differ): ", xs,
                                        " vs. ", vs));
    OP_REQUIRES(ctx, xs.dims() >= 1,
                errors::InvalidArgument(type_string(),
                                        ": x and v must be at least rank 1, got shapes ", xs,
                                        " and ", vs));
    for (int d = 1; d < xs.dims(); ++d)
      OP_REQUIRES(ctx, xs.dim_size(d) == vs.dim_size(d),
                  errors::InvalidArgument("x and v shape doesn't match at index ", d, " : ", xs,
                                          " vs. ", vs));
    OP_REQUIRES(ctx, is.dim_size(0) == vs.dim_size(0),
                errors::InvalidArgument("i and x shape doesn't match at index 0: ", is, " vs. ",
                                        vs));
    if (x.NumElements() > 0 && v.NumElements() > 0) {
      const int64 rows = xs.dim_size(0), n = v.NumElements() / vs.dim_size(0);
      const int32* idx = i.flat<int32>().data();
      T* y = static_cast<T*>(x.data());  // x is updated in place
      const T* src = v.flat<T>().data();
      const auto& dev = ctx->eigen_device<Eigen::ThreadPoolDevice>();
      for (int64 j = 0; j < is.dim_size(0); ++j) {
        const int64 r = (idx[j] % rows + rows) % rows;
        pdk_compute::Flat<T> dst(y + r * n, n);
        pdk_compute::ConstFlat<T> row(src + j * n, n);
        if constexpr (kKind == InplaceKind::kUpdate) dst.device(dev) = row;
        else if constexpr (kKind == InplaceKind::kAdd) dst.device(dev) = dst + row;
        else dst.device(dev) = dst - row;
      }
    }
    ctx->set_output(0, x);  // y is x (an empty x: a fresh empty output)
  }
};

class DeepCopyOp : public OpKernel {
 public:
  explicit DeepCopyOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    if (x.NumElements() > 0)
      CopyBytes(ctx->eigen_device<Eigen::ThreadPoolDevice>(), y->data(), x.data(),
                static_cast<int64>(x.TotalBytes()));
  }
};

class EmptyOp : public OpKernel {
 public:
  explicit EmptyOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("init")) OP_REQUIRES_OK(c, c->GetAttr("init", &init_));
  }

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& shape_t = ctx->input(0);
    OP_REQUIRES(ctx, shape_t.dims() == 1,
                errors::InvalidArgument("shape must be a vector of int32, got shape ",
                                        shape_t.shape()));
    std::vector<int64> dims;
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntVector(op, "shape", shape_t, &dims));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, CheckedShape(op, "shape", dims, &shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (init_ && out->NumElements() > 0) std::memset(out->data(), 0, out->TotalBytes());
  }

 private:
  bool init_ = false;
};

static_assert(std::is_same_v<pdk_compute::DataMovementTypes,
                             ::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32,
                                             int64, bool, uint8, int8, int16>>,
              "the registrations below list pdk_compute::DataMovementTypes: update them");

// Every data-movement type (pdk_compute::DataMovementTypes); InplaceAdd and
// InplaceSub all but bool. int32: every tensor in host memory (a separate
// registration below, as TensorFlow writes it; host memory: docs/architecture.md), so
// the Identity that reads the start's buffer after the updates (by control
// edges) reads it without a copy, which TensorFlow would start as soon as the
// buffer exists.
#define PDK_REGISTER_INPLACE_ARITH_(T)                                              \
  REGISTER_KERNEL_BUILDER(                                                          \
      Name("InplaceAdd").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("i"), \
      InplaceOp<T, InplaceKind::kAdd>);                                             \
  REGISTER_KERNEL_BUILDER(                                                          \
      Name("InplaceSub").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("i"), \
      InplaceOp<T, InplaceKind::kSub>)
#define PDK_REGISTER_INPLACE_NO_ARITH_(T)
#define PDK_REGISTER_INPLACE_(T, ARITH)                                                \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("_ParallelConcatStart").Device(DEVICE_PDK).TypeConstraint<T>("dtype"),      \
      ParallelConcatStartOp);                                                          \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("_ParallelConcatUpdate").Device(DEVICE_PDK).TypeConstraint<T>("T"),         \
      ParallelConcatUpdateOp);                                                         \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("InplaceUpdate").Device(DEVICE_PDK).TypeConstraint<T>("T").HostMemory("i"), \
      InplaceOp<T, InplaceKind::kUpdate>);                                             \
  ARITH(T)                                                                             \
  REGISTER_KERNEL_BUILDER(Name("DeepCopy").Device(DEVICE_PDK).TypeConstraint<T>("T"),  \
                          DeepCopyOp);                                                 \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("Empty").Device(DEVICE_PDK).TypeConstraint<T>("dtype").HostMemory("shape"), \
      EmptyOp)
#define PDK_REGISTER_INPLACE_INT32_ARITH_(kind, op)       \
  REGISTER_KERNEL_BUILDER(Name(op)                        \
                              .Device(DEVICE_PDK)         \
                              .TypeConstraint<int32>("T") \
                              .HostMemory("i")            \
                              .HostMemory("x")            \
                              .HostMemory("v")            \
                              .HostMemory("y"),           \
                          InplaceOp<int32, InplaceKind::kind>)
#define PDK_REGISTER_INPLACE_INT32_()                                                      \
  REGISTER_KERNEL_BUILDER(Name("_ParallelConcatStart")                                     \
                              .Device(DEVICE_PDK)                                          \
                              .TypeConstraint<int32>("dtype")                              \
                              .HostMemory("output"),                                       \
                          ParallelConcatStartOp);                                          \
  REGISTER_KERNEL_BUILDER(Name("_ParallelConcatUpdate")                                    \
                              .Device(DEVICE_PDK)                                          \
                              .TypeConstraint<int32>("T")                                  \
                              .HostMemory("value")                                         \
                              .HostMemory("update")                                        \
                              .HostMemory("output"),                                       \
                          ParallelConcatUpdateOp);                                         \
  PDK_REGISTER_INPLACE_INT32_ARITH_(kUpdate, "InplaceUpdate");                             \
  PDK_REGISTER_INPLACE_INT32_ARITH_(kAdd, "InplaceAdd");                                   \
  PDK_REGISTER_INPLACE_INT32_ARITH_(kSub, "InplaceSub");                                   \
  REGISTER_KERNEL_BUILDER(Name("DeepCopy")                                                 \
                              .Device(DEVICE_PDK)                                          \
                              .TypeConstraint<int32>("T")                                  \
                              .HostMemory("x")                                             \
                              .HostMemory("y"),                                            \
                          DeepCopyOp);                                                     \
  REGISTER_KERNEL_BUILDER(                                                                 \
      Name("Empty").Device(DEVICE_PDK).TypeConstraint<int32>("dtype").HostMemory("shape"), \
      EmptyOp)
PDK_REGISTER_INPLACE_(float, PDK_REGISTER_INPLACE_ARITH_);
PDK_REGISTER_INPLACE_(double, PDK_REGISTER_INPLACE_ARITH_);
PDK_REGISTER_INPLACE_(Eigen::half, PDK_REGISTER_INPLACE_ARITH_);
PDK_REGISTER_INPLACE_(Eigen::bfloat16, PDK_REGISTER_INPLACE_ARITH_);
PDK_REGISTER_INPLACE_INT32_();
PDK_REGISTER_INPLACE_(int64, PDK_REGISTER_INPLACE_ARITH_);
PDK_REGISTER_INPLACE_(bool, PDK_REGISTER_INPLACE_NO_ARITH_);
PDK_REGISTER_INPLACE_(uint8, PDK_REGISTER_INPLACE_ARITH_);
PDK_REGISTER_INPLACE_(int8, PDK_REGISTER_INPLACE_ARITH_);
PDK_REGISTER_INPLACE_(int16, PDK_REGISTER_INPLACE_ARITH_);
#undef PDK_REGISTER_INPLACE_INT32_
#undef PDK_REGISTER_INPLACE_INT32_ARITH_
#undef PDK_REGISTER_INPLACE_
#undef PDK_REGISTER_INPLACE_NO_ARITH_
#undef PDK_REGISTER_INPLACE_ARITH_

}  // namespace
}  // namespace tensorflow
