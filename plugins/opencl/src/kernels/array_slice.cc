// Slice, StridedSlice and StridedSliceGrad on OPENCL: float, int64, bool;
// StridedSlice(Grad) also int32, all in host memory (computed on the host).
// The begin / size / end / strides (and StridedSliceGrad's shape) are
// HostMemory as in TensorFlow's GPU registrations: the slice is canonicalized
// on the host (TensorFlow's semantics of util/strided_slice_op.cc: ellipsis,
// new_axis, shrink_axis, begin / end masks, negative indices and strides,
// clamping) and moved by one strided copy (cl/array.cl array_copy):
//   StridedSlice:     out (processing shape, row-major) = in[begin + c * stride]
//   StridedSliceGrad: out = 0, then out[begin + c * stride] = dy
// Error wording: TensorFlow's slice_op.cc, strided_slice_op.cc and
// util/strided_slice_op.cc.
#include <algorithm>
#include <vector>

#include "array_util.h"

namespace tensorflow {

namespace {

// A canonical strided slice of an input of `dims.size()` dims.
struct DenseSlice {
  std::vector<int64> begin, end, strides;
  TensorShape processing_shape, final_shape;
  bool is_identity = true;
};

struct SliceMasks {
  int32 begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;
};

// TensorFlow's ValidateStridedSliceOp (with begin and end given).
Status CanonicalizeStridedSlice(const Tensor& begin_t, const Tensor& end_t, const Tensor& strides_t,
                                const TensorShape& input_shape, const SliceMasks& masks,
                                DenseSlice* out) {
  const bool begin_wrong = !(TensorShapeUtils::IsVector(begin_t.shape()) &&
                             begin_t.NumElements() == strides_t.NumElements() &&
                             begin_t.NumElements() < 32);
  const bool end_wrong = !(TensorShapeUtils::IsVector(end_t.shape()) &&
                           end_t.NumElements() == strides_t.NumElements());
  if (begin_wrong || end_wrong || !TensorShapeUtils::IsVector(strides_t.shape()))
    return errors::InvalidArgument(
        "Expected begin, end, and strides to be 1D equal size tensors, but got shapes ",
        begin_t.shape().DebugString(), ", ", end_t.shape().DebugString(), ", and ",
        strides_t.shape().DebugString(), " instead.");
  if (masks.ellipsis && (masks.ellipsis & (masks.ellipsis - 1)) != 0)
    return errors::InvalidArgument("Multiple ellipses in slice spec not allowed");

  const std::vector<int64> sb = HostIndices(begin_t), se = HostIndices(end_t),
                           ss = HostIndices(strides_t);
  int64 sparse_dims = static_cast<int64>(ss.size());
  int32 ellipsis = masks.ellipsis;
  int num_add_axis_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && ((1 << i) & masks.new_axis)) ++num_add_axis_after_ellipsis;
    if ((1 << i) & ellipsis) ellipsis_seen = true;
  }
  if (!ellipsis_seen) {  // an implicit ellipsis at the end
    ellipsis |= (1 << sparse_dims);
    ++sparse_dims;
  }

  // The dense spec: one entry per input dim.
  const int64 dims = input_shape.dims();
  out->begin.assign(dims, 0);
  out->end.assign(dims, 0);
  out->strides.assign(dims, 1);
  int64 begin_mask = 0, end_mask = 0, shrink = 0;
  constexpr int64 kShrinkAxis = -1, kNewAxis = -2;
  std::vector<int64> gather;  // final dims: a dense index, kNewAxis or kShrinkAxis
  int64 full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if ((1 << i) & ellipsis) {
      const int64 next =
          std::min<int64>(dims - (sparse_dims - i) + 1 + num_add_axis_after_ellipsis, dims);
      for (; full < next; ++full) {
        out->begin[full] = out->end[full] = 0;
        out->strides[full] = 1;
        begin_mask |= (int64{1} << full);
        end_mask |= (int64{1} << full);
        gather.push_back(full);
      }
    } else if ((1 << i) & masks.new_axis) {
      gather.push_back(kNewAxis);
    } else {
      if (full == dims)
        return errors::InvalidArgument("Index out of range using input dim ", full,
                                       "; input has only ", dims, " dims");
      out->begin[full] = sb[i];
      out->end[full] = se[i];
      out->strides[full] = ss[i];
      if (masks.begin & (1 << i)) begin_mask |= (int64{1} << full);
      if (masks.end & (1 << i)) end_mask |= (int64{1} << full);
      if (masks.shrink_axis & (1 << i)) {
        gather.push_back(kShrinkAxis);
        shrink |= (int64{1} << full);
      } else {
        gather.push_back(full);
      }
      ++full;
    }
  }

  // Masks and negative indices made explicit; bounds checked.
  out->is_identity = true;
  out->processing_shape = TensorShape();
  for (int i = 0; i < dims; ++i) {
    int64& b = out->begin[i];
    int64& e = out->end[i];
    const int64 s = out->strides[i];
    const int64 dim = input_shape.dim_size(i);
    if (s == 0) return errors::InvalidArgument("strides[", i, "] must be non-zero");
    const bool shrink_i = shrink & (int64{1} << i);
    const bool bm = begin_mask & (int64{1} << i), em = end_mask & (int64{1} << i);
    const int64 lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
    auto canonical = [&](int64 x, bool masked, bool is_end) {
      if (masked) return (s > 0) != is_end ? lo : hi;
      const int64 fwd = x < 0 ? dim + x : x;
      return fwd < lo ? lo : (fwd > hi ? hi : fwd);
    };
    if (shrink_i && s <= 0)
      return errors::InvalidArgument("only stride 1 allowed on non-range indexing.");
    if (shrink_i) {
      const int64 fwd = b < 0 ? dim + b : b;
      b = fwd;
      e = b + 1;
      if (fwd < 0 || fwd >= dim)
        return errors::InvalidArgument("slice index ", b, " of dimension ", i,
                                       " out of bounds.");
    } else {
      b = canonical(b, bm, false);
      e = canonical(e, em, true);
    }
    out->is_identity &= s == 1 && b == 0 && e == dim;
    const int64 interval = e - b;
    int64 size = 0;
    if (interval != 0 && ((interval < 0) == (s < 0)))
      size = interval / s + (interval % s != 0 ? 1 : 0);
    out->processing_shape.AddDim(size);
  }
  out->final_shape = TensorShape();
  for (int64 g : gather) {
    if (g >= 0)
      out->final_shape.AddDim(out->processing_shape.dim_size(static_cast<int>(g)));
    else if (g == kNewAxis)
      out->final_shape.AddDim(1);
  }
  return Status();
}

// The strided copy between a tensor of `full` shape (src when !scatter) and
// the processing shape (row-major).
StridedView SliceView(const TensorShape& full, const DenseSlice& s, bool scatter) {
  const std::vector<int64> fs = RowMajorStrides(full);
  const std::vector<int64> ps = RowMajorStrides(s.processing_shape);
  StridedView v;
  int64 off = 0;
  for (int i = 0; i < full.dims(); ++i) {
    off += s.begin[i] * fs[i];
    if (scatter)
      v.Add(s.processing_shape.dim_size(i), ps[i], fs[i] * s.strides[i]);
    else
      v.Add(s.processing_shape.dim_size(i), fs[i] * s.strides[i], ps[i]);
  }
  (scatter ? v.dst_off : v.src_off) = off;
  return v;
}

Status GetMasks(OpKernelConstruction* c, SliceMasks* m) {
  TF_RETURN_IF_ERROR(c->GetAttr("begin_mask", &m->begin));
  TF_RETURN_IF_ERROR(c->GetAttr("end_mask", &m->end));
  TF_RETURN_IF_ERROR(c->GetAttr("ellipsis_mask", &m->ellipsis));
  TF_RETURN_IF_ERROR(c->GetAttr("new_axis_mask", &m->new_axis));
  return c->GetAttr("shrink_axis_mask", &m->shrink_axis);
}

}  // namespace

// TensorFlow's Slice: (input, begin, size); size[i] == -1 takes the rest.
class SliceOp : public OpKernel {
 public:
  explicit SliceOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& begin_t = c->input(1);
    const Tensor& size_t_ = c->input(2);
    const int dims = input.dims();
    OP_REQUIRES(c,
                TensorShapeUtils::IsVector(begin_t.shape()) &&
                    TensorShapeUtils::IsVector(size_t_.shape()) &&
                    begin_t.NumElements() == dims && size_t_.NumElements() == dims,
                errors::InvalidArgument(
                    "Expected begin and size arguments to be 1-D tensors of size ", dims,
                    ", but got shapes ", begin_t.shape().DebugString(), " and ",
                    size_t_.shape().DebugString(), " instead."));
    const std::vector<int64> begin = HostIndices(begin_t);
    std::vector<int64> size = HostIndices(size_t_);
    TensorShape out_shape;
    bool identity = true;
    for (int i = 0; i < dims; ++i) {
      const int64 b = begin[i];
      int64& s = size[i];
      const int64 dim = input.dim_size(i);
      if (dim == 0) {
        OP_REQUIRES(c, b == 0 && s == 0,
                    errors::InvalidArgument("Expected begin[", i, "] == 0 (got ", b,
                                            ") and size[", i, "] == 0 (got ", s,
                                            ") when input.dim_size(", i, ") == 0"));
      } else {
        OP_REQUIRES(c, 0 <= b && b <= dim,
                    errors::InvalidArgument("Expected begin[", i, "] in [0, ", dim,
                                            "], but got ", b));
        if (s == -1) s = dim - b;
        OP_REQUIRES(c, 0 <= s && b + s <= dim,
                    errors::InvalidArgument("Expected size[", i, "] in [0, ", dim - b,
                                            "], but got ", s));
      }
      OP_REQUIRES_OK(c, out_shape.AddDimWithStatus(s));
      identity &= b == 0 && s == dim;
    }
    if (identity) {
      c->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    DenseSlice s;
    s.begin = begin;
    s.strides.assign(dims, 1);
    s.processing_shape = out_shape;
    OP_REQUIRES_OK(c, StridedCopy(c, input, *out, SliceView(input.shape(), s, false)));
  }
};

// TensorFlow's StridedSlice: (input, begin, end, strides) and the masks.
class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, GetMasks(c, &masks_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    DenseSlice s;
    OP_REQUIRES_OK(c, CanonicalizeStridedSlice(c->input(1), c->input(2), c->input(3),
                                               input.shape(), masks_, &s));
    if (s.is_identity) {
      Tensor t;
      t.CopyFrom(input, s.final_shape);
      c->set_output(0, t);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, s.final_shape, &out));
    OP_REQUIRES_OK(c, StridedCopy(c, input, *out, SliceView(input.shape(), s, false)));
  }

 private:
  SliceMasks masks_;
};

// TensorFlow's StridedSliceGrad: (shape, begin, end, strides, dy) -> the
// input's gradient: dy at the slice's places, 0 elsewhere.
class StridedSliceGradOp : public OpKernel {
 public:
  explicit StridedSliceGradOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, GetMasks(c, &masks_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& shape_t = c->input(0);
    const Tensor& dy = c->input(4);
    OP_REQUIRES(c, shape_t.dims() == 1,
                errors::InvalidArgument("shape must be 1-D, got shape.shape = ",
                                        shape_t.shape().DebugString()));
    TensorShape input_shape;
    OP_REQUIRES_OK(c, TensorShapeUtils::MakeShape(HostIndices(shape_t), &input_shape));
    DenseSlice s;
    OP_REQUIRES_OK(c, CanonicalizeStridedSlice(c->input(1), c->input(2), c->input(3),
                                               input_shape, masks_, &s));
    OP_REQUIRES(c, s.final_shape == dy.shape(),
                errors::InvalidArgument("shape of dy was ", dy.shape().DebugString(),
                                        " instead of ", s.final_shape.DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, input_shape, &out));
    const uint64_t zero = 0;
    OP_REQUIRES_OK(c, pdk_opencl::array::FillElements(c, out, &zero));
    OP_REQUIRES_OK(c, StridedCopy(c, dy, *out, SliceView(input_shape, s, true)));
  }

 private:
  SliceMasks masks_;
};

#define PDK_REGISTER(T)                                                           \
  REGISTER_KERNEL_BUILDER(Name("Slice")                                           \
                              .Device(DEVICE_OPENCL)                              \
                              .TypeConstraint<T>("T")                             \
                              .HostMemory("begin")                                \
                              .HostMemory("size"),                                \
                          SliceOp);                                               \
  REGISTER_KERNEL_BUILDER(Name("StridedSlice")                                    \
                              .Device(DEVICE_OPENCL)                              \
                              .TypeConstraint<T>("T")                             \
                              .HostMemory("begin")                                \
                              .HostMemory("end")                                  \
                              .HostMemory("strides"),                             \
                          StridedSliceOp);                                        \
  REGISTER_KERNEL_BUILDER(Name("StridedSliceGrad")                                \
                              .Device(DEVICE_OPENCL)                              \
                              .TypeConstraint<T>("T")                             \
                              .HostMemory("shape")                                \
                              .HostMemory("begin")                                \
                              .HostMemory("end")                                  \
                              .HostMemory("strides"),                             \
                          StridedSliceGradOp);
PDK_OPENCL_ARRAY_TYPES(PDK_REGISTER)
#undef PDK_REGISTER

// int32: every argument in host memory, computed on the host (TensorFlow's
// GPU int32 StridedSlice(Grad); it has no DEVICE_DEFAULT int32 kernel).
REGISTER_KERNEL_BUILDER(Name("StridedSlice")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .HostMemory("input")
                            .HostMemory("begin")
                            .HostMemory("end")
                            .HostMemory("strides")
                            .HostMemory("output"),
                        StridedSliceOp);
REGISTER_KERNEL_BUILDER(Name("StridedSliceGrad")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .HostMemory("shape")
                            .HostMemory("begin")
                            .HostMemory("end")
                            .HostMemory("strides")
                            .HostMemory("dy")
                            .HostMemory("output"),
                        StridedSliceGradOp);

}  // namespace tensorflow
