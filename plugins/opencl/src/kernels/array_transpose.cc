// Transpose, ConjugateTranspose (real dtypes: the same), Tile, BroadcastTo,
// ReverseV2 and Reverse on OPENCL: float, int64, bool, and int32 in host memory
// (computed on the host). perm / multiples / shape / axis are
// HostMemory as in TensorFlow's GPU registrations.
//   Transpose:   out[c] = in[c permuted back]: a strided copy whose source
//                strides are the input's, permuted (cl/array.cl array_copy)
//   BroadcastTo: a strided copy with source stride 0 on broadcast dims
//   ReverseV2 / Reverse: a strided copy with negative source strides on the axes
//   Tile:        out[c] = in[c mod in_shape] (array_tile)
// Semantics and error wording: TensorFlow's transpose_op.cc, tile_ops.cc,
// broadcast_to_op.cc (util/bcast.h's rules), reverse_op.cc.
#include <cstring>
#include <string>
#include <vector>

#include "array_util.h"

namespace tensorflow {

// TensorFlow's Transpose: (x, perm) -> y, y.shape[i] = x.shape[perm[i]].
class TransposeOp : public OpKernel {
 public:
  explicit TransposeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& perm_t = c->input(1);
    OP_REQUIRES(c, TensorShapeUtils::IsVector(perm_t.shape()),
                errors::InvalidArgument("perm must be rank 1, got shape ",
                                        perm_t.shape().DebugString()));
    const int dims = input.dims();
    OP_REQUIRES(c, dims == perm_t.NumElements(),
                errors::InvalidArgument("transpose expects a vector of size ", dims,
                                        ". But input(1) is a vector of size ",
                                        perm_t.NumElements()));
    const std::vector<int64> perm = HostIndices(perm_t);
    std::vector<bool> seen(dims, false);
    TensorShape shape;
    for (int i = 0; i < dims; ++i) {
      const int64 d = perm[i];
      OP_REQUIRES(c, 0 <= d && d < dims,
                  errors::InvalidArgument(d, " is out of range [0 .. ", dims, ")"));
      seen[d] = true;
      shape.AddDim(input.dim_size(static_cast<int>(d)));
    }
    for (int i = 0; i < dims; ++i) {
      if (seen[i]) continue;
      std::string list;
      for (int k = 0; k < dims; ++k) list += (k ? "," : "") + std::to_string(perm[k]);
      OP_REQUIRES(c, false, errors::InvalidArgument(i, " is missing from {", list, "}."));
    }
    bool identity = true;
    for (int i = 0; i < dims; ++i) identity &= perm[i] == i;
    if (dims <= 1 || identity) {
      c->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const std::vector<int64> in_strides = RowMajorStrides(input.shape());
    const std::vector<int64> out_strides = RowMajorStrides(shape);
    StridedView v;
    for (int i = 0; i < dims; ++i) v.Add(shape.dim_size(i), in_strides[perm[i]], out_strides[i]);
    OP_REQUIRES_OK(c, StridedCopy(c, input, *out, v));
  }
};

// TensorFlow's Tile: (input, multiples) -> out.shape[i] = shape[i] * multiples[i].
class TileOp : public OpKernel {
 public:
  explicit TileOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& mult_t = c->input(1);
    const int dims = input.dims();
    OP_REQUIRES(c, TensorShapeUtils::IsVector(mult_t.shape()) && dims == mult_t.NumElements(),
                errors::InvalidArgument("Expected multiples argument to be a vector of length ",
                                        dims, " but got length ",
                                        mult_t.dims() > 0 ? mult_t.dim_size(0) : 0));
    const std::vector<int64> mult = HostIndices(mult_t);
    TensorShape shape;
    for (int i = 0; i < dims; ++i) {
      OP_REQUIRES(c, mult[i] >= 0,
                  errors::InvalidArgument("Expected multiples[", i, "] >= 0, but got ", mult[i]));
      OP_REQUIRES_OK(c, shape.AddDimWithStatus(input.dim_size(i) * mult[i]));
    }
    if (shape == input.shape()) {
      c->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const int64 n = shape.num_elements();
    if (n == 0) return;
    if (!out->device_memory()) {  // int32: on the host
      const size_t es = DataTypeSize(input.dtype());
      const std::vector<int64> in_strides = RowMajorStrides(input.shape());
      const char* src = static_cast<const char*>(input.data());
      char* dst = static_cast<char*>(out->data());
      for (int64 i = 0; i < n; ++i) {
        int64 r = i, si = 0;
        for (int k = dims - 1; k >= 0; --k) {
          const int64 ck = r % shape.dim_size(k);
          r /= shape.dim_size(k);
          si += (ck % input.dim_size(k)) * in_strides[k];
        }
        std::memcpy(dst + i * es, src + si * es, es);
      }
      return;
    }
    // Output dims of size 1 (input 1, multiple 1) dropped.
    const std::vector<int64> in_strides = RowMajorStrides(input.shape());
    std::vector<int64> od, id, is;
    for (int i = 0; i < dims; ++i) {
      if (shape.dim_size(i) == 1) continue;
      od.push_back(shape.dim_size(i));
      id.push_back(input.dim_size(i));
      is.push_back(in_strides[i]);
    }
    OP_REQUIRES(c, od.size() <= 8,
                errors::Unimplemented("Tile on OPENCL of more than 8 non-unit dims"));
    int64_t d8[8], i8[8], s8[8];
    ToLong8(od, d8);
    ToLong8(id, i8);
    ToLong8(is, s8);
    OP_REQUIRES_OK(c, Enqueue(c, SizedKernelName("array_tile", input.dtype()), n,
                              {input, *out, Arg::I64(n), Arg::I32(static_cast<int32_t>(od.size())),
                               Arg::Long8(d8), Arg::Long8(i8), Arg::Long8(s8)}));
  }
};

// TensorFlow's BroadcastTo: (input, shape) -> input broadcast to `shape`.
class BroadcastToOp : public OpKernel {
 public:
  explicit BroadcastToOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const TensorShape& in_shape = input.shape();
    TensorShape shape;
    OP_REQUIRES_OK(c, TensorShapeUtils::MakeShape(HostIndices(c->input(1)), &shape));
    if (shape == in_shape) {
      c->set_output(0, input);
      return;
    }
    OP_REQUIRES(c, in_shape.dims() <= shape.dims(),
                errors::InvalidArgument("Rank of input (", in_shape.dims(),
                                        ") must be no greater than rank of output shape (",
                                        shape.dims(), ")."));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    // util/bcast.h: dims compatible when equal or either is 1; the result
    // must then be `shape` itself.
    const int pad = shape.dims() - in_shape.dims();
    bool compatible = true, exact = true;
    for (int i = 0; i < in_shape.dims(); ++i) {
      const int64 a = in_shape.dim_size(i), b = shape.dim_size(pad + i);
      if (a == b || a == 1) continue;
      exact = false;
      if (b != 1) compatible = false;
    }
    OP_REQUIRES(c, compatible,
                errors::InvalidArgument("Incompatible shapes: ", in_shape.DebugString(), " vs. ",
                                        shape.DebugString()));
    OP_REQUIRES(c, exact,
                errors::InvalidArgument("Unable to broadcast tensor of shape ",
                                        in_shape.DebugString(), " to tensor of shape ",
                                        shape.DebugString()));
    const std::vector<int64> in_strides = RowMajorStrides(in_shape);
    const std::vector<int64> out_strides = RowMajorStrides(shape);
    StridedView v;
    for (int i = 0; i < shape.dims(); ++i) {
      const int k = i - pad;
      const int64 s = k >= 0 && in_shape.dim_size(k) != 1 ? in_strides[k] : 0;
      v.Add(shape.dim_size(i), s, out_strides[i]);
    }
    OP_REQUIRES_OK(c, StridedCopy(c, input, *out, v));
  }
};

namespace {

// out = input reversed along the dims where rev[d].
void ReverseInto(OpKernelContext* c, const Tensor& input, const std::vector<bool>& rev) {
  Tensor* out = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &out));
  const std::vector<int64> strides = RowMajorStrides(input.shape());
  StridedView v;
  for (int i = 0; i < input.dims(); ++i) {
    const int64 d = input.dim_size(i);
    if (rev[i]) v.src_off += (d - 1) * strides[i];
    v.Add(d, rev[i] ? -strides[i] : strides[i], strides[i]);
  }
  OP_REQUIRES_OK(c, StridedCopy(c, input, *out, v));
}

}  // namespace

// TensorFlow's ReverseV2: (tensor, axis) -> tensor reversed along `axis`.
class ReverseV2Op : public OpKernel {
 public:
  explicit ReverseV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& axis_t = c->input(1);
    if (input.dims() == 0 || input.NumElements() == 0) {
      c->set_output(0, input);
      return;
    }
    OP_REQUIRES(c, TensorShapeUtils::IsVector(axis_t.shape()),
                errors::InvalidArgument("'dims' must be 1-dimension, not ", axis_t.dims()));
    const int dims = input.dims();
    const std::vector<int64> axes = HostIndices(axis_t);
    std::vector<bool> rev(dims, false);
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64 a = axes[k] < 0 ? axes[k] + dims : axes[k];
      OP_REQUIRES(c, a >= 0 && a < dims,
                  errors::InvalidArgument("'axis'[", k, "] = ", axes[k],
                                          " is out of valid range [0, ", dims - 1));
      OP_REQUIRES(c, !rev[a],
                  errors::InvalidArgument("axis ", a, " specified more than once."));
      rev[a] = true;
    }
    OP_REQUIRES(c, dims <= 8,
                errors::Unimplemented("reverse is not implemented for tensors of rank > 8."));
    ReverseInto(c, input, rev);
  }
};

// TensorFlow's Reverse: (tensor, dims) with dims a bool per dimension.
class ReverseOp : public OpKernel {
 public:
  explicit ReverseOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& dims_t = c->input(1);
    if (input.dims() > 0)
      OP_REQUIRES(c, input.dim_size(0) != 0,
                  errors::InvalidArgument("Invalid input first dimension. Found 0."));
    if (input.dims() == 0) {
      c->set_output(0, input);
      return;
    }
    const int dims = input.dims();
    OP_REQUIRES(c, TensorShapeUtils::IsVector(dims_t.shape()),
                errors::InvalidArgument("'dims' must be 1-dimension, not ", dims_t.dims()));
    OP_REQUIRES(c, dims == dims_t.dim_size(0),
                errors::InvalidArgument(
                    "'dims' must have the same number of values as 'input' has dimensions. "
                    "'input' has ",
                    dims, "'dims' has ", dims_t.dim_size(0), " values"));
    OP_REQUIRES(c, dims <= 8,
                errors::Unimplemented("reverse is not implemented for tensors of rank > 8."));
    auto f = dims_t.flat<bool>();
    std::vector<bool> rev(dims);
    for (int i = 0; i < dims; ++i) rev[i] = f(i);
    ReverseInto(c, input, rev);
  }
};

#define PDK_REGISTER(T)                                                                     \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("Transpose").Device(DEVICE_OPENCL).TypeConstraint<T>("T").HostMemory("perm"),    \
      TransposeOp);                                                                         \
  REGISTER_KERNEL_BUILDER(Name("ConjugateTranspose")                                        \
                              .Device(DEVICE_OPENCL)                                        \
                              .TypeConstraint<T>("T")                                       \
                              .HostMemory("perm"),                                          \
                          TransposeOp);                                                     \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("Tile").Device(DEVICE_OPENCL).TypeConstraint<T>("T").HostMemory("multiples"),    \
      TileOp);                                                                              \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("BroadcastTo").Device(DEVICE_OPENCL).TypeConstraint<T>("T").HostMemory("shape"), \
      BroadcastToOp);                                                                       \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("ReverseV2").Device(DEVICE_OPENCL).TypeConstraint<T>("T").HostMemory("axis"),    \
      ReverseV2Op);                                                                         \
  REGISTER_KERNEL_BUILDER(                                                                  \
      Name("Reverse").Device(DEVICE_OPENCL).TypeConstraint<T>("T").HostMemory("dims"),      \
      ReverseOp);
PDK_OPENCL_ARRAY_TYPES(PDK_REGISTER)
#undef PDK_REGISTER

// int32: every argument in host memory, computed on the host (TensorFlow has
// no DEVICE_DEFAULT int32 kernel for these).
#define PDK_REGISTER_I32(OP, KERNEL, IN, ARG, OUT)                            \
  REGISTER_KERNEL_BUILDER(Name(OP)                                            \
                              .Device(DEVICE_OPENCL)                          \
                              .TypeConstraint<int32>("T")                     \
                              .HostMemory(IN)                                 \
                              .HostMemory(ARG)                                \
                              .HostMemory(OUT),                               \
                          KERNEL);
PDK_REGISTER_I32("Transpose", TransposeOp, "x", "perm", "y")
PDK_REGISTER_I32("ConjugateTranspose", TransposeOp, "x", "perm", "y")
PDK_REGISTER_I32("Tile", TileOp, "input", "multiples", "output")
PDK_REGISTER_I32("BroadcastTo", BroadcastToOp, "input", "shape", "output")
PDK_REGISTER_I32("ReverseV2", ReverseV2Op, "tensor", "axis", "output")
PDK_REGISTER_I32("Reverse", ReverseOp, "tensor", "dims", "output")
#undef PDK_REGISTER_I32

}  // namespace tensorflow
