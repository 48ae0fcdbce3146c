// Pack (tf.stack) and Unpack (tf.unstack): byte-level row copies
// (dtype-agnostic: the element size comes from the dtype), split over the
// device's thread pool.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "compute/copy.h"
#include "kernels/array/tf_array_util.h"
#include "pdk/tf/op_kernel.h"

namespace tensorflow {
namespace {

using pdk_compute::CopyStreams;
using pdk_compute::Stream;

// Pack(values[N]; axis): N same-shape tensors stacked along a new dimension
// `axis` in [-(rank+1), rank+1).
class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    // The inputs are borrowed views, valid for the whole Compute call.
    std::vector<const Tensor*> values(n);
    for (int i = 0; i < n; ++i) values[i] = &ctx->input(i);
    const pdk::Shape& s0 = values[0]->shape().pdk_shape();
    const int rank = s0.rank();
    int64_t axis = axis_;
    // TensorFlow's checks, order and wording (PackOp, pack_op.cc).
    OP_REQUIRES(ctx, axis >= -rank - 1 && axis <= rank,
                errors::InvalidArgument("axis = ", axis, " not in [", -rank - 1, ", ", rank + 1,
                                        ") (", type_string(), ": values of shape ", s0, ")"));
    if (axis < 0) axis += rank + 1;
    for (int i = 1; i < n; ++i) {
      const pdk::Shape& si = values[i]->shape().pdk_shape();
      OP_REQUIRES(ctx, si == s0,
                  errors::InvalidArgument("Shapes of all inputs must match: values[0].shape = ",
                                          s0, " != values[", i, "].shape = ", si));
    }
    std::vector<int64_t> out_dims = s0.dims();
    out_dims.insert(out_dims.begin() + axis, n);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(out_dims), &out));
    if (out->NumElements() == 0) return;

    const int64_t elem = static_cast<int64_t>(
        TF_DataTypeSize(static_cast<TF_DataType>(ctx->expected_output_dtype(0))));
    int64_t outer = 1, inner = elem;  // inner: bytes of one value per outer row
    for (int d = 0; d < axis; ++d) outer *= s0[d];
    for (int d = axis; d < rank; ++d) inner *= s0[d];
    char* dst = static_cast<char*>(out->data());
    std::vector<Stream> streams;
    for (int i = 0; i < n; ++i)
      streams.push_back({dst + i * inner, n * inner,
                         static_cast<const char*>(values[i]->data()), inner, inner});
    CopyStreams(ctx->eigen_device<Eigen::ThreadPoolDevice>(), outer, streams);
  }

 private:
  int64 axis_ = 0;
};

// Unpack(value; num, axis): `num` tensors, the slices of `value` along `axis`
// in [-rank, rank), whose size must be num.
class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const int num = ctx->num_outputs();
    const Tensor& x = ctx->input(0);
    const pdk::Shape& in = x.shape().pdk_shape();
    const int rank = in.rank();
    int64_t axis = axis_;
    // TensorFlow's checks, order and wording (UnpackOp, unpack_op.cc).
    OP_REQUIRES(ctx, axis >= -rank && axis < rank,
                errors::InvalidArgument("axis = ", axis, " not in [", -rank, ", ", rank, ") (",
                                        type_string(), ": value of shape ", in, ")"));
    if (axis < 0) axis += rank;
    OP_REQUIRES(ctx, in[axis] == num,
                errors::InvalidArgument("Input shape axis ", axis, " must equal ", num,
                                        ", got shape ", in));
    std::vector<int64_t> out_dims = in.dims();
    out_dims.erase(out_dims.begin() + axis);
    const TensorShape out_shape(out_dims);
    std::vector<Tensor*> outs(num);
    for (int i = 0; i < num; ++i) OP_REQUIRES_OK(ctx, ctx->allocate_output(i, out_shape, &outs[i]));
    if (out_shape.num_elements() == 0) return;

    const int64_t elem =
        static_cast<int64_t>(TF_DataTypeSize(static_cast<TF_DataType>(ctx->input_dtype(0))));
    int64_t outer = 1, inner = elem;  // inner: bytes of one output per outer row
    for (int d = 0; d < axis; ++d) outer *= in[d];
    for (int d = axis + 1; d < rank; ++d) inner *= in[d];
    const char* src = static_cast<const char*>(x.data());
    std::vector<Stream> streams;
    for (int i = 0; i < num; ++i)
      streams.push_back({static_cast<char*>(outs[i]->data()), inner, src + i * inner,
                         num * inner, inner});
    CopyStreams(ctx->eigen_device<Eigen::ThreadPoolDevice>(), outer, streams);
  }

 private:
  int64 axis_ = 0;
};

// T: the data-movement types (pdk_compute::DataMovementTypes); int32's
// values / value and output in host memory (host memory: docs/architecture.md).
#define PDK_REGISTER_PACK_(T)                                                               \
  REGISTER_KERNEL_BUILDER(Name("Pack").Device(DEVICE_PDK).TypeConstraint<T>("T"), PackOp); \
  REGISTER_KERNEL_BUILDER(Name("Unpack").Device(DEVICE_PDK).TypeConstraint<T>("T"), UnpackOp);
PDK_CALL_DATA_MOVEMENT_TYPES_NO_INT32(PDK_REGISTER_PACK_)
REGISTER_KERNEL_BUILDER(Name("Pack")
                            .Device(DEVICE_PDK)
                            .TypeConstraint<int32>("T")
                            .HostMemory("values")
                            .HostMemory("output"),
                        PackOp);
REGISTER_KERNEL_BUILDER(Name("Unpack")
                            .Device(DEVICE_PDK)
                            .TypeConstraint<int32>("T")
                            .HostMemory("value")
                            .HostMemory("output"),
                        UnpackOp);
#undef PDK_REGISTER_PACK_

}  // namespace
}  // namespace tensorflow
