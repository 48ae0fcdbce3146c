// Reshape, ExpandDims, Squeeze: output 0 is input 0's buffer under a new shape
// (no copy: Tensor::CopyFrom, then set_output). Semantics per
// tensorflow/core/ops/array_ops.cc and TensorFlow's reshape/shape kernels.
// Reshape's errors start with TensorFlow's wording (tensorflow/core/kernels/
// reshape_op.h: "Input to reshape is a tensor with N values, but the requested
// shape has M", "Shape [..] has too many elements", ...), PDK's detail follows
// in parentheses.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/eigen.h"
#include "kernels/tensor_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

// Output 0 is `x`'s buffer under `shape` (same element count): no copy.
void SetOutputReshaped(OpKernelContext* ctx, const Tensor& x, const TensorShape& shape) {
  Tensor y;
  y.CopyFrom(x, shape);
  ctx->set_output(0, y);
}

// Reshape(tensor, shape): at most one -1 in `shape`, inferred from the rest.
class ReshapeOp : public OpKernel {
 public:
  explicit ReshapeOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& x = ctx->input(0);
    const Tensor& sizes = ctx->input(1);
    OP_REQUIRES(ctx, sizes.dims() <= 1,
                errors::InvalidArgument("sizes input must be 1-D, not ", sizes.shape(), " (", op,
                                        ": shape must be a vector)"));
    std::vector<int64> req;
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntVector(op, "shape", sizes, &req));

    const TensorShape& in = x.shape();
    std::vector<int64> dims(req.size());
    int unknown = -1;
    int64 product = 1;  // of the given, non-zero sizes
    int64 all = 1;      // of every size so far (-1 counted as 1): TF's overflow check
    bool has_zero = false;
    for (size_t d = 0; d < req.size(); ++d) {
      const int64 s = req[d];
      if (s == -1) {
        OP_REQUIRES(ctx, unknown == -1,
                    errors::InvalidArgument("Only one input size may be -1, not both ", unknown,
                                            " and ", d, " (", op, ": shape ", ::pdk::Shape(req),
                                            ")"));
        unknown = static_cast<int>(d);
        dims[d] = 1;
      } else {
        OP_REQUIRES(ctx, s >= 0,
                    errors::InvalidArgument("Size ", d, " must be non-negative, not ", s, " (",
                                            op, ": shape ", ::pdk::Shape(req), ")"));
        if (s > 0 && all > std::numeric_limits<int64>::max() / s) {
          std::string listed;
          for (size_t i = 0; i < req.size(); ++i)
            listed += (i ? ", " : "") + std::to_string(req[i]);
          ctx->CtxFailure(errors::InvalidArgument("Shape [", listed, "] has too many elements (",
                                                  op, ": input shape ", in, ")"));
          return;
        }
        dims[d] = s;
        all *= s;
        if (s == 0) has_zero = true; else product *= s;
      }
    }
    if (unknown != -1) {
      // As TensorFlow: zero sizes in the request leave the input's zero
      // dimensions out of the count, so the other dimensions still infer.
      int64 n = 1;
      bool in_has_zero = false;
      for (int i = 0; i < in.dims(); ++i) {
        const int64 d = in.dim_size(i);
        if (d > 0 || !has_zero) n *= d; else in_has_zero = true;
      }
      const int64 missing = n / product;
      OP_REQUIRES(ctx, in_has_zero || product * missing == n,
                  errors::InvalidArgument(
                      "Input to reshape is a tensor with ", n,
                      " values, but the requested shape requires a multiple of ", product, " (",
                      op, ": input shape ", in, ", shape ", ::pdk::Shape(req), ")"));
      dims[unknown] = missing;
    }
    const TensorShape out(dims);
    OP_REQUIRES(ctx, out.num_elements() == in.num_elements(),
                errors::InvalidArgument("Input to reshape is a tensor with ", in.num_elements(),
                                        " values, but the requested shape has ",
                                        out.num_elements(), " (", op, ": input shape ", in,
                                        ", requested shape ", out, ")"));
    SetOutputReshaped(ctx, x, out);
  }
};

// ExpandDims(input, dim): inserts a 1 at `dim` in [-rank-1, rank].
class ExpandDimsOp : public OpKernel {
 public:
  explicit ExpandDimsOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& x = ctx->input(0);
    const Tensor& dim_t = ctx->input(1);
    OP_REQUIRES(ctx, dim_t.NumElements() == 1,
                errors::InvalidArgument(op, ": dim must be a tensor with a single value, ",
                                        "got shape ", dim_t.shape()));
    std::vector<int64> dv;
    OP_REQUIRES_OK(ctx, pdk_kernels::ReadIntVector(op, "dim", dim_t, &dv));
    const int rank = x.dims();
    int64 dim = dv[0];
    OP_REQUIRES(ctx, dim >= -1 - rank && dim <= rank,
                errors::InvalidArgument(op, ": dim ", dim, " is out of range [", -1 - rank, ", ",
                                        rank, "] for input of shape ", x.shape()));
    if (dim < 0) dim += rank + 1;
    TensorShape out = x.shape();
    out.InsertDim(static_cast<int>(dim), 1);
    SetOutputReshaped(ctx, x, out);
  }
};

// Squeeze(input; squeeze_dims): drops the listed size-1 dims, or all of them.
class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("squeeze_dims")) OP_REQUIRES_OK(c, c->GetAttr("squeeze_dims", &squeeze_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const std::string& op = type_string();
    const Tensor& x = ctx->input(0);
    const TensorShape& in = x.shape();
    const int rank = in.dims();
    std::set<int64> wrapped;
    for (int64 d : squeeze_dims_) {
      OP_REQUIRES(ctx, d >= -rank && d < rank,
                  errors::InvalidArgument(op, ": squeeze_dims value ", d, " is out of range [",
                                          -rank, ", ", rank, ") for input of shape ", in));
      wrapped.insert(d < 0 ? d + rank : d);
    }
    TensorShape out;
    for (int i = 0; i < rank; ++i) {
      if (wrapped.empty()) {
        if (in.dim_size(i) != 1) out.AddDim(in.dim_size(i));
      } else if (wrapped.count(i)) {
        OP_REQUIRES(ctx, in.dim_size(i) == 1,
                    errors::InvalidArgument(op, ": cannot squeeze dim[", i,
                                            "]: expected a dimension of 1, got ", in.dim_size(i),
                                            " (input shape ", in, ")"));
      } else {
        out.AddDim(in.dim_size(i));
      }
    }
    SetOutputReshaped(ctx, x, out);
  }

 private:
  std::vector<int64> squeeze_dims_;
};

static_assert(std::is_same_v<pdk_compute::DataMovementTypes,
                             ::pdk::TypeList<float, double, Eigen::half, Eigen::bfloat16, int32,
                                             int64, bool, uint8, int8, int16>>,
              "the registrations below list pdk_compute::DataMovementTypes: update them");

// T: the data-movement types (pdk_compute::DataMovementTypes); Tshape / Tdim
// int32 or int64, the shape and dim inputs in host memory. int32 tensors also
// keep their data on the host, as TensorFlow's DEVICE_DEFAULT kernels do
// (host memory: docs/architecture.md): a separate int32 registration below.
#define PDK_REGISTER_RESHAPE_INDEX_(T, Index)                  \
  REGISTER_KERNEL_BUILDER(Name("Reshape")                      \
                              .Device(DEVICE_PDK)              \
                              .TypeConstraint<T>("T")          \
                              .TypeConstraint<Index>("Tshape") \
                              .HostMemory("shape"),            \
                          ReshapeOp);                          \
  REGISTER_KERNEL_BUILDER(Name("ExpandDims")                   \
                              .Device(DEVICE_PDK)              \
                              .TypeConstraint<T>("T")          \
                              .TypeConstraint<Index>("Tdim")   \
                              .HostMemory("dim"),              \
                          ExpandDimsOp)
#define PDK_REGISTER_RESHAPE_(T)                                                     \
  PDK_REGISTER_RESHAPE_INDEX_(T, int32);                                             \
  PDK_REGISTER_RESHAPE_INDEX_(T, int64);                                             \
  REGISTER_KERNEL_BUILDER(Name("Squeeze").Device(DEVICE_PDK).TypeConstraint<T>("T"), \
                          SqueezeOp)
#define PDK_REGISTER_RESHAPE_INT32_INDEX_(Index)               \
  REGISTER_KERNEL_BUILDER(Name("Reshape")                      \
                              .Device(DEVICE_PDK)              \
                              .TypeConstraint<int32>("T")      \
                              .TypeConstraint<Index>("Tshape") \
                              .HostMemory("shape")             \
                              .HostMemory("tensor")            \
                              .HostMemory("output"),           \
                          ReshapeOp);                          \
  REGISTER_KERNEL_BUILDER(Name("ExpandDims")                   \
                              .Device(DEVICE_PDK)              \
                              .TypeConstraint<int32>("T")      \
                              .TypeConstraint<Index>("Tdim")   \
                              .HostMemory("dim")               \
                              .HostMemory("input")             \
                              .HostMemory("output"),           \
                          ExpandDimsOp)
#define PDK_REGISTER_RESHAPE_INT32_()                     \
  PDK_REGISTER_RESHAPE_INT32_INDEX_(int32);               \
  PDK_REGISTER_RESHAPE_INT32_INDEX_(int64);               \
  REGISTER_KERNEL_BUILDER(Name("Squeeze")                 \
                              .Device(DEVICE_PDK)         \
                              .TypeConstraint<int32>("T") \
                              .HostMemory("input")        \
                              .HostMemory("output"),      \
                          SqueezeOp)
PDK_REGISTER_RESHAPE_(float);
PDK_REGISTER_RESHAPE_(double);
PDK_REGISTER_RESHAPE_(Eigen::half);
PDK_REGISTER_RESHAPE_(Eigen::bfloat16);
PDK_REGISTER_RESHAPE_INT32_();
PDK_REGISTER_RESHAPE_(int64);
PDK_REGISTER_RESHAPE_(bool);
PDK_REGISTER_RESHAPE_(uint8);
PDK_REGISTER_RESHAPE_(int8);
PDK_REGISTER_RESHAPE_(int16);
#undef PDK_REGISTER_RESHAPE_INT32_
#undef PDK_REGISTER_RESHAPE_INT32_INDEX_
#undef PDK_REGISTER_RESHAPE_
#undef PDK_REGISTER_RESHAPE_INDEX_

}  // namespace
}  // namespace tensorflow
