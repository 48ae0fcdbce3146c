// Reshape, ExpandDims, Squeeze: output 0 is input 0's buffer under a new shape
// (no copy, Context::set_output_reshaped). Semantics per
// tensorflow/core/ops/array_ops.cc and TensorFlow's reshape/shape kernels.
// Reshape's errors start with TensorFlow's wording (tensorflow/core/kernels/
// reshape_op.h: "Input to reshape is a tensor with N values, but the requested
// shape has M", "Shape [..] has too many elements", ...), PDK's detail follows
// in parentheses.
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "compute/eigen.h"
#include "pdk/kernel.h"
#include "kernels/int32_on_host.h"

namespace pdk_kernels {
namespace {

// Reshape(tensor, shape): at most one -1 in `shape`, inferred from the rest.
class ReshapeOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor sizes, ctx.input(1));
    if (sizes.rank() > 1)
      return pdk::InvalidArgument("sizes input must be 1-D, not ", sizes.shape(), " (", ctx.op(),
                                  ": shape must be a vector)");
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> req, pdk::ReadIntVector(ctx.op(), "shape", sizes));

    const pdk::Shape in = x.shape();
    std::vector<int64_t> dims(req.size());
    int unknown = -1;
    int64_t product = 1;  // of the given, non-zero sizes
    int64_t all = 1;      // of every size so far (-1 counted as 1): TF's overflow check
    bool has_zero = false;
    for (size_t d = 0; d < req.size(); ++d) {
      const int64_t s = req[d];
      if (s == -1) {
        if (unknown != -1)
          return pdk::InvalidArgument("Only one input size may be -1, not both ", unknown,
                                      " and ", d, " (", ctx.op(), ": shape ", pdk::Shape(req),
                                      ")");
        unknown = static_cast<int>(d);
        dims[d] = 1;
      } else if (s < 0) {
        return pdk::InvalidArgument("Size ", d, " must be non-negative, not ", s, " (",
                                    ctx.op(), ": shape ", pdk::Shape(req), ")");
      } else {
        if (s > 0 && all > std::numeric_limits<int64_t>::max() / s) {
          std::string listed;
          for (size_t i = 0; i < req.size(); ++i)
            listed += (i ? ", " : "") + std::to_string(req[i]);
          return pdk::InvalidArgument("Shape [", listed, "] has too many elements (", ctx.op(),
                                      ": input shape ", in, ")");
        }
        dims[d] = s;
        all *= s;
        if (s == 0) has_zero = true; else product *= s;
      }
    }
    if (unknown != -1) {
      // As TensorFlow: zero sizes in the request leave the input's zero
      // dimensions out of the count, so the other dimensions still infer.
      int64_t n = 1;
      bool in_has_zero = false;
      for (int64_t d : in.dims()) {
        if (d > 0 || !has_zero) n *= d; else in_has_zero = true;
      }
      const int64_t missing = n / product;
      if (!in_has_zero && product * missing != n)
        return pdk::InvalidArgument("Input to reshape is a tensor with ", n,
                                    " values, but the requested shape requires a multiple of ",
                                    product, " (", ctx.op(), ": input shape ", in, ", shape ",
                                    pdk::Shape(req), ")");
      dims[unknown] = missing;
    }
    pdk::Shape out(std::move(dims));
    if (out.num_elements() != in.num_elements())
      return pdk::InvalidArgument("Input to reshape is a tensor with ", in.num_elements(),
                                  " values, but the requested shape has ", out.num_elements(),
                                  " (", ctx.op(), ": input shape ", in, ", requested shape ",
                                  out, ")");
    return ctx.set_output_reshaped(0, x, out);
  }
};

// ExpandDims(input, dim): inserts a 1 at `dim` in [-rank-1, rank].
class ExpandDimsOp {
 public:
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    PDK_ASSIGN_OR_RETURN(pdk::Tensor dim_t, ctx.input(1));
    if (dim_t.num_elements() != 1)
      return pdk::InvalidArgument(ctx.op(), ": dim must be a tensor with a single value, ",
                                  "got shape ", dim_t.shape());
    PDK_ASSIGN_OR_RETURN(std::vector<int64_t> dv, pdk::ReadIntVector(ctx.op(), "dim", dim_t));
    const int rank = x.rank();
    int64_t dim = dv[0];
    if (dim < -1 - rank || dim > rank)
      return pdk::InvalidArgument(ctx.op(), ": dim ", dim, " is out of range [", -1 - rank, ", ",
                                  rank, "] for input of shape ", x.shape());
    if (dim < 0) dim += rank + 1;
    std::vector<int64_t> dims = x.shape().dims();
    dims.insert(dims.begin() + dim, 1);
    return ctx.set_output_reshaped(0, x, pdk::Shape(std::move(dims)));
  }
};

// Squeeze(input; squeeze_dims): drops the listed size-1 dims, or all of them.
class SqueezeOp {
 public:
  pdk::Status Init(const pdk::Attrs& a) {
    std::vector<int64_t> d;
    PDK_RETURN_IF_ERROR(a.GetOptional("squeeze_dims", &d));
    squeeze_dims_ = std::move(d);
    return pdk::Status::OK();
  }
  pdk::Status Compute(pdk::Context& ctx) const {
    PDK_ASSIGN_OR_RETURN(pdk::Tensor x, ctx.input(0));
    const pdk::Shape in = x.shape();
    const int rank = in.rank();
    std::set<int64_t> wrapped;
    for (int64_t d : squeeze_dims_) {
      if (d < -rank || d >= rank)
        return pdk::InvalidArgument(ctx.op(), ": squeeze_dims value ", d, " is out of range [",
                                    -rank, ", ", rank, ") for input of shape ", in);
      wrapped.insert(d < 0 ? d + rank : d);
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < rank; ++i) {
      if (wrapped.empty()) {
        if (in[i] != 1) dims.push_back(in[i]);
      } else if (wrapped.count(i)) {
        if (in[i] != 1)
          return pdk::InvalidArgument(ctx.op(), ": cannot squeeze dim[", i,
                                      "]: expected a dimension of 1, got ", in[i],
                                      " (input shape ", in, ")");
      } else {
        dims.push_back(in[i]);
      }
    }
    return ctx.set_output_reshaped(0, x, pdk::Shape(std::move(dims)));
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};

}  // namespace

PDK_REGISTER_KERNELS(Reshape, r) {
  pdk::ForEachType(pdk_compute::DataMovementTypes{},
                   [&](auto t) {
                     using T = typename decltype(t)::type;
                     pdk::ForEachType(pdk::TypeList<int32_t, int64_t>{}, [&](auto i) {
                       r.Add(Int32OnHost<T>(pdk::KernelDef<ReshapeOp>("Reshape")
                                                .Type("T", t)
                                                .Type("Tshape", i)
                                                .HostMemory("shape"),
                                            {"tensor", "output"}));
                       r.Add(Int32OnHost<T>(pdk::KernelDef<ExpandDimsOp>("ExpandDims")
                                                .Type("T", t)
                                                .Type("Tdim", i)
                                                .HostMemory("dim"),
                                            {"input", "output"}));
                     });
                     r.Add(Int32OnHost<T>(pdk::KernelDef<SqueezeOp>("Squeeze").Type("T", t),
                                          {"input", "output"}));
                   });
}

}  // namespace pdk_kernels
