// GatherV2, GatherNd and OneHot on OPENCL: T float, int64, bool; indices
// int32, int64 (OneHot also uint8). T int32: every argument in host memory,
// computed on the host. axis / depth are HostMemory as in TensorFlow's GPU
// registrations; on_value / off_value are device scalars.
//   GatherV2: params viewed as [batch, outer, axis_dim, inner], indices as
//     [batch, J]: out[b, o, j, k] = params[b, o, indices[b, j], k]
//     (cl/array.cl array_gather; TensorFlow's gather_op.cc).
//   GatherNd: out[m, r] = params[indices[m, 0..K), r] (array_gather_nd;
//     TensorFlow's gather_nd_op.cc).
//   OneHot: out viewed as [P, depth, S]: out[p, d, s] = indices[p, s] == d ?
//     on_value : off_value (array_one_hot; TensorFlow's one_hot_op.cc).
// Out-of-range gather indices: the indices are in device memory (int32 ones
// too: TensorFlow copies them to the device for this kernel), which the host
// cannot read, so, as TensorFlow's GPU kernel does, the kernel writes 0 for an
// index outside [0, axis_dim) (GatherNd: outside its dim) where TensorFlow's CPU kernel raises
// InvalidArgument. (Should indices ever arrive in host memory, they are
// checked with the CPU kernel's message and uploaded.)
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "array_util.h"

namespace tensorflow {

namespace {

const char* IndexSuffix(DataType dt) {
  switch (dt) {
    case DT_INT32: return "i32";
    case DT_INT64: return "i64";
    default: return "u8";
  }
}

// "[1,2]": the coordinates of flat index `i` in `shape` (TensorFlow's
// SliceDebugString).
std::string Coordinates(const TensorShape& shape, int64 i) {
  std::vector<int64> c(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    c[d] = i % shape.dim_size(d);
    i /= shape.dim_size(d);
  }
  std::string s = "[";
  for (size_t d = 0; d < c.size(); ++d) s += (d ? "," : "") + std::to_string(c[d]);
  return s + "]";
}

}  // namespace

class GatherV2Op : public OpKernel {
 public:
  explicit GatherV2Op(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("batch_dims")) OP_REQUIRES_OK(c, c->GetAttr("batch_dims", &batch_dims_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& params = c->input(0);
    const Tensor& indices = c->input(1);
    OP_REQUIRES(c, TensorShapeUtils::IsVectorOrHigher(params.shape()),
                errors::InvalidArgument("params must be at least 1 dimensional"));
    const Tensor& axis_t = c->input(2);
    OP_REQUIRES(c, TensorShapeUtils::IsScalar(axis_t.shape()),
                errors::InvalidArgument("axis must be scalar"));
    int64 axis = HostIndices(axis_t)[0];
    OP_REQUIRES(c, axis < std::numeric_limits<int64>::max(),
                errors::InvalidArgument(
                    "axis must be less than std::numeric_limits<int64_t>::max()"));
    const int64 min_dims = axis < 0 ? -axis : axis + 1;
    OP_REQUIRES(c, params.dims() >= min_dims,
                errors::InvalidArgument("Shape must be at least rank ", min_dims,
                                        " but is rank ", params.dims()));
    if (axis < 0) axis += params.dims();
    int64 batch_dims = batch_dims_;
    if (batch_dims != 0) {
      OP_REQUIRES(c, batch_dims >= -indices.dims() && batch_dims <= indices.dims(),
                  errors::InvalidArgument("Expected batch_dims in the range [", -indices.dims(),
                                          ", ", indices.dims(), "], but got ", batch_dims));
      if (batch_dims < 0) batch_dims += indices.dims();
      OP_REQUIRES(c, batch_dims < params.dims(),
                  errors::InvalidArgument("batch_dims (", batch_dims,
                                          ") must be less than rank(params) (", params.dims(),
                                          ")."));
      OP_REQUIRES(c, axis >= batch_dims,
                  errors::InvalidArgument("batch_dims (", batch_dims,
                                          ") must be less than or equal to axis (", axis, ")."));
      for (int i = 0; i < batch_dims; ++i)
        OP_REQUIRES(c, params.dim_size(i) == indices.dim_size(i),
                    errors::InvalidArgument("params.shape[", i, "]: ", params.dim_size(i),
                                            " should be equal to indices.shape[", i,
                                            "]: ", indices.dim_size(i)));
    }
    const int64 axis_dim = params.dim_size(static_cast<int>(axis));
    if (indices.dtype() == DT_INT32)
      OP_REQUIRES(c, axis_dim <= std::numeric_limits<int32>::max(),
                  errors::InvalidArgument("params.shape[", axis, "] too large for int32 indexing: ",
                                          axis_dim, " > ", std::numeric_limits<int32>::max()));
    TensorShape shape;
    int64 batch = 1, outer = 1, inner = 1;
    for (int i = 0; i < batch_dims; ++i) {
      OP_REQUIRES_OK(c, shape.AddDimWithStatus(params.dim_size(i)));
      batch *= params.dim_size(i);
    }
    for (int i = batch_dims; i < axis; ++i) {
      OP_REQUIRES_OK(c, shape.AddDimWithStatus(params.dim_size(i)));
      outer *= params.dim_size(i);
    }
    for (int i = batch_dims; i < indices.dims(); ++i)
      OP_REQUIRES_OK(c, shape.AddDimWithStatus(indices.dim_size(i)));
    for (int i = axis + 1; i < params.dims(); ++i) {
      OP_REQUIRES_OK(c, shape.AddDimWithStatus(params.dim_size(i)));
      inner *= params.dim_size(i);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const int64 n_idx = indices.NumElements();
    if (n_idx == 0 || inner == 0 || out->NumElements() == 0) return;
    if (!indices.device_memory()) {  // host indices: the CPU kernel's check
      const std::vector<int64> v = HostIndices(indices);
      for (int64 i = 0; i < n_idx; ++i)
        OP_REQUIRES(c, v[i] >= 0 && v[i] < axis_dim,
                    errors::InvalidArgument("indices", Coordinates(indices.shape(), i), " = ",
                                            v[i], " is not in [0, ", axis_dim, ")"));
    }
    const int64 n = out->NumElements();
    if (!out->device_memory()) {  // int32 params: everything on the host
      const std::vector<int64> v = HostIndices(indices);
      const size_t es = DataTypeSize(params.dtype());
      const char* p = static_cast<const char*>(params.data());
      char* o = static_cast<char*>(out->data());
      const int64 j_n = n_idx / batch;
      for (int64 i = 0; i < n; ++i) {
        const int64 k = i % inner, t = i / inner, j = t % j_n, bo = t / j_n;
        const int64 b = bo / outer;
        std::memcpy(o + i * es, p + ((bo * axis_dim + v[b * j_n + j]) * inner + k) * es, es);
      }
      return;
    }
    Tensor dev_indices;
    OP_REQUIRES_OK(c, OnDevice(c, indices, &dev_indices));
    const std::string name = SizedKernelName("array_gather", params.dtype()) + "_" +
                             IndexSuffix(indices.dtype());
    OP_REQUIRES_OK(c, Enqueue(c, name, n,
                              {params, dev_indices, *out, Arg::I64(n), Arg::I64(outer),
                               Arg::I64(axis_dim), Arg::I64(n_idx / batch), Arg::I64(inner)}));
  }

 private:
  int32 batch_dims_ = 0;
};

// TensorFlow's GatherNd: out.shape = indices.shape[:-1] + params.shape[K:],
// K = indices.shape[-1].
class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& params = c->input(0);
    const Tensor& indices = c->input(1);
    OP_REQUIRES(c, TensorShapeUtils::IsVectorOrHigher(params.shape()),
                errors::InvalidArgument("params must be at least a vector"));
    OP_REQUIRES(c, TensorShapeUtils::IsVectorOrHigher(indices.shape()),
                errors::InvalidArgument("indices must be at least a vector"));
    const int64 k = indices.dim_size(indices.dims() - 1);
    OP_REQUIRES(c, k <= params.dims(),
                errors::InvalidArgument(
                    "index innermost dimension length must be <= params rank; saw: ", k, " vs. ",
                    params.dims()));
    OP_REQUIRES(c, k <= 8,
                errors::Unimplemented("GatherNd on OPENCL of index depth ", k, " (at most 8)"));
    TensorShape shape(indices.shape());
    shape.RemoveLastDims(1);
    const int64 m = shape.num_elements();
    int64 slice = 1;
    for (int i = static_cast<int>(k); i < params.dims(); ++i) {
      slice *= params.dim_size(i);
      shape.AddDim(params.dim_size(i));
    }
    if (m > 0)
      OP_REQUIRES(c, params.NumElements() > 0,
                  errors::InvalidArgument(
                      "Requested more than 0 entries, but params is empty.  Params shape: ",
                      params.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const int64 n = out->NumElements();
    if (n == 0) return;
    std::vector<int64> pd;
    for (int i = 0; i < k; ++i) pd.push_back(params.dim_size(i));
    if (!out->device_memory()) {  // int32 params: everything on the host
      const std::vector<int64> v = HostIndices(indices);
      const size_t es = DataTypeSize(params.dtype());
      const char* p = static_cast<const char*>(params.data());
      char* o = static_cast<char*>(out->data());
      for (int64 mi = 0; mi < m; ++mi) {
        int64 off = 0;
        for (int j = 0; j < k; ++j) {
          const int64 x = v[mi * k + j];
          if (x < 0 || x >= pd[j]) {
            std::string bad;
            for (int q = 0; q < k; ++q) bad += (q ? ", " : "") + std::to_string(v[mi * k + q]);
            TensorShape ishape(indices.shape());
            ishape.RemoveLastDims(1);
            OP_REQUIRES(c, false,
                        errors::InvalidArgument("indices", Coordinates(ishape, mi), " = [", bad,
                                                "] does not index into param shape ",
                                                params.shape().DebugString(),
                                                ", node name: ", name()));
          }
          off = off * pd[j] + x;
        }
        std::memcpy(o + mi * slice * es, p + off * slice * es, slice * es);
      }
      return;
    }
    int64_t d8[8];
    pdk_opencl::array::ToLong8(pd, d8);
    Tensor dev_indices;
    OP_REQUIRES_OK(c, OnDevice(c, indices, &dev_indices));
    const std::string name = SizedKernelName("array_gather_nd", params.dtype()) + "_" +
                             IndexSuffix(indices.dtype());
    OP_REQUIRES_OK(c, Enqueue(c, name, n,
                              {params, dev_indices, *out, Arg::I64(n),
                               Arg::I32(static_cast<int32_t>(k)), Arg::Long8(d8),
                               Arg::I64(slice)}));
  }
};

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& indices = c->input(0);
    const Tensor& depth = c->input(1);
    const Tensor& on = c->input(2);
    const Tensor& off = c->input(3);
    const int idims = indices.dims();
    const int odims = idims + 1;
    OP_REQUIRES(c, axis_ == -1 || (axis_ >= 0 && axis_ < odims),
                errors::InvalidArgument("Expected axis to be -1 or between [0, ", odims,
                                        ").  But received: ", axis_));
    OP_REQUIRES(c, TensorShapeUtils::IsScalar(depth.shape()),
                errors::InvalidArgument("depth must be a scalar, but got: ",
                                        depth.shape().DebugString()));
    OP_REQUIRES(c, TensorShapeUtils::IsScalar(on.shape()),
                errors::InvalidArgument("on_value must be a scalar, but got: ",
                                        on.shape().DebugString()));
    OP_REQUIRES(c, TensorShapeUtils::IsScalar(off.shape()),
                errors::InvalidArgument("off_value must be a scalar, but got: ",
                                        off.shape().DebugString()));
    const int axis = axis_ == -1 ? idims : static_cast<int>(axis_);
    const int64 d = depth.scalar<int32>()();
    OP_REQUIRES(c, d >= 0, errors::InvalidArgument("depth must be non-negative, got: ", d));
    TensorShape shape(indices.shape());
    OP_REQUIRES_OK(c, shape.InsertDimWithStatus(axis, d));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const int64 n = out->NumElements();
    if (n == 0) return;
    int64 s = 1;
    for (int i = axis; i < idims; ++i) s *= indices.dim_size(i);
    if (!out->device_memory()) {  // int32 values: everything on the host
      const std::vector<int64> v = HostIndices(indices);
      const size_t es = DataTypeSize(on.dtype());
      char* o = static_cast<char*>(out->data());
      for (int64 i = 0; i < n; ++i) {
        const int64 si = i % s, t = i / s, di = t % d, p = t / d;
        std::memcpy(o + i * es, (v[p * s + si] == di ? on : off).data(), es);
      }
      return;
    }
    Tensor dev_indices;
    OP_REQUIRES_OK(c, OnDevice(c, indices, &dev_indices));
    const std::string name =
        SizedKernelName("array_one_hot", on.dtype()) + "_" + IndexSuffix(indices.dtype());
    OP_REQUIRES_OK(c, Enqueue(c, name, n,
                              {dev_indices, on, off, *out, Arg::I64(n), Arg::I64(d), Arg::I64(s)}));
  }

 private:
  int64 axis_ = -1;
};

#define PDK_REGISTER_GATHER(T, I)                               \
  REGISTER_KERNEL_BUILDER(Name("GatherV2")                      \
                              .Device(DEVICE_OPENCL)            \
                              .TypeConstraint<T>("Tparams")     \
                              .TypeConstraint<I>("Tindices")    \
                              .HostMemory("axis"),              \
                          GatherV2Op);                          \
  REGISTER_KERNEL_BUILDER(Name("GatherNd")                      \
                              .Device(DEVICE_OPENCL)            \
                              .TypeConstraint<T>("Tparams")     \
                              .TypeConstraint<I>("Tindices"),   \
                          GatherNdOp);                          \
  REGISTER_KERNEL_BUILDER(Name("OneHot")                        \
                              .Device(DEVICE_OPENCL)            \
                              .TypeConstraint<T>("T")           \
                              .TypeConstraint<I>("TI")          \
                              .HostMemory("depth"),             \
                          OneHotOp);
#define PDK_REGISTER(T)                  \
  PDK_REGISTER_GATHER(T, int32)          \
  PDK_REGISTER_GATHER(T, ::tensorflow::int64)
PDK_OPENCL_ARRAY_TYPES(PDK_REGISTER)
#undef PDK_REGISTER
#define PDK_REGISTER(T)                                                                       \
  REGISTER_KERNEL_BUILDER(                                                                    \
      Name("OneHot").Device(DEVICE_OPENCL).TypeConstraint<T>("T").TypeConstraint<uint8>("TI") \
          .HostMemory("depth"),                                                               \
      OneHotOp);
PDK_OPENCL_ARRAY_TYPES(PDK_REGISTER)
#undef PDK_REGISTER
#undef PDK_REGISTER_GATHER

// int32 params / values: every argument in host memory, computed on the host
// (TensorFlow has no DEVICE_DEFAULT int32 kernel for these); out-of-range
// indices are then InvalidArgument, as on the CPU.
#define PDK_REGISTER_I32(I)                                     \
  REGISTER_KERNEL_BUILDER(Name("GatherV2")                      \
                              .Device(DEVICE_OPENCL)            \
                              .TypeConstraint<int32>("Tparams") \
                              .TypeConstraint<I>("Tindices")    \
                              .HostMemory("params")             \
                              .HostMemory("indices")            \
                              .HostMemory("axis")               \
                              .HostMemory("output"),            \
                          GatherV2Op);                          \
  REGISTER_KERNEL_BUILDER(Name("GatherNd")                      \
                              .Device(DEVICE_OPENCL)            \
                              .TypeConstraint<int32>("Tparams") \
                              .TypeConstraint<I>("Tindices")    \
                              .HostMemory("params")             \
                              .HostMemory("indices")            \
                              .HostMemory("output"),            \
                          GatherNdOp);                          \
  REGISTER_KERNEL_BUILDER(Name("OneHot")                        \
                              .Device(DEVICE_OPENCL)            \
                              .TypeConstraint<int32>("T")       \
                              .TypeConstraint<I>("TI")          \
                              .HostMemory("indices")            \
                              .HostMemory("depth")              \
                              .HostMemory("on_value")           \
                              .HostMemory("off_value")          \
                              .HostMemory("output"),            \
                          OneHotOp);
PDK_REGISTER_I32(int32)
PDK_REGISTER_I32(::tensorflow::int64)
#undef PDK_REGISTER_I32
REGISTER_KERNEL_BUILDER(Name("OneHot")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .TypeConstraint<uint8>("TI")
                            .HostMemory("indices")
                            .HostMemory("depth")
                            .HostMemory("on_value")
                            .HostMemory("off_value")
                            .HostMemory("output"),
                        OneHotOp);

}  // namespace tensorflow
