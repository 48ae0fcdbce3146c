// SpaceToDepth, DepthToSpace and Roll on OPENCL: float, int64, bool on the
// device, int32 in host memory (computed on the host). Each is strided copies
// (cl/array.cl array_copy):
//   SpaceToDepth (NHWC): in viewed as [B, H/b, b, W/b, b, C] is copied in the
//     order [B, H/b, W/b, b, b, C] (out[n, h, w, (i*b + j)*C + c] =
//     in[n, h*b + i, w*b + j, c]); NCHW: out[n, (i*b + j)*C + c, h, w] =
//     in[n, c, h*b + i, w*b + j]. DepthToSpace is the inverse copy.
//   Roll: out[(c + shift) mod d] = in[c] along each axis: one copy per
//     combination of the two blocks of every rolled axis.
// Roll's shift and axis are HostMemory as in TensorFlow's GPU registration.
// Semantics and error wording: TensorFlow's spacetodepth_op.cc,
// depthtospace_op.cc and roll_op.cc.
#include <string>
#include <vector>

#include "array_util.h"

namespace tensorflow {

namespace {

// The block attrs of SpaceToDepth / DepthToSpace.
Status BlockAttrs(OpKernelConstruction* c, int64* block, bool* nchw) {
  std::string format = "NHWC";
  int32 b = 0;
  TF_RETURN_IF_ERROR(c->GetAttr("block_size", &b));
  if (c->HasAttr("data_format")) TF_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  if (format != "NHWC" && format != "NCHW")
    return errors::InvalidArgument("Invalid data format: ", format, " (OPENCL: NHWC or NCHW)");
  if (b <= 1) return errors::InvalidArgument("Block size should be > 1, but was: ", b);
  *block = b;
  *nchw = format == "NCHW";
  return Status();
}

// The strided copy between a [B, H*b, W*b, C] (space; NCHW: [B, C, H*b, W*b])
// tensor and a [B, H, W, b*b*C] (depth; NCHW: [B, b*b*C, H, W]) one, in the
// order of the depth tensor's elements. `to_depth`: space is the source.
StridedView SpaceDepthView(int64 n, int64 h, int64 w, int64 ch, int64 b, bool nchw,
                           bool to_depth) {
  const int64 hb = h * b, wb = w * b;
  StridedView v;
  // (depth-order dim, stride of that dim in the space tensor)
  std::vector<std::pair<int64, int64>> d;
  if (!nchw) {
    d = {{n, hb * wb * ch}, {h, b * wb * ch}, {w, b * ch}, {b, wb * ch}, {b, ch}, {ch, 1}};
  } else {
    d = {{n, ch * hb * wb}, {b, wb}, {b, 1}, {ch, hb * wb}, {h, b * wb}, {w, b}};
  }
  // Row-major strides of the depth tensor over the same dims.
  std::vector<int64> depth(d.size());
  int64 s = 1;
  for (int i = static_cast<int>(d.size()) - 1; i >= 0; --i) {
    depth[i] = s;
    s *= d[i].first;
  }
  for (size_t i = 0; i < d.size(); ++i) {
    if (to_depth)
      v.Add(d[i].first, d[i].second, depth[i]);
    else
      v.Add(d[i].first, depth[i], d[i].second);
  }
  return v;
}

}  // namespace

// TensorFlow's SpaceToDepth (to_depth) and DepthToSpace.
template <bool to_depth>
class SpaceDepthOp : public OpKernel {
 public:
  explicit SpaceDepthOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, BlockAttrs(c, &block_, &nchw_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    OP_REQUIRES(c, input.dims() == 4,
                to_depth ? errors::InvalidArgument("Input rank should be 4 instead of ",
                                                   input.dims())
                         : errors::InvalidArgument("Input rank should be: 4 instead of: ",
                                                   input.dims()));
    const int64 b = block_;
    const int64 n = input.dim_size(0);
    const int64 h = input.dim_size(nchw_ ? 2 : 1), w = input.dim_size(nchw_ ? 3 : 2);
    const int64 ch = input.dim_size(nchw_ ? 1 : 3);
    TensorShape shape;
    StridedView v;
    if (to_depth) {
      OP_REQUIRES(c, w % b == 0 && h % b == 0,
                  errors::InvalidArgument("Image width ", w, " and height ", h,
                                          " should be divisible by block_size: ", b));
      shape = nchw_ ? TensorShape({n, ch * b * b, h / b, w / b})
                    : TensorShape({n, h / b, w / b, ch * b * b});
      v = SpaceDepthView(n, h / b, w / b, ch, b, nchw_, true);
    } else {
      OP_REQUIRES(c, ch % (b * b) == 0,
                  errors::InvalidArgument("Input depth dimension ", ch,
                                          " should be divisible by: ", b * b));
      shape = nchw_ ? TensorShape({n, ch / (b * b), h * b, w * b})
                    : TensorShape({n, h * b, w * b, ch / (b * b)});
      v = SpaceDepthView(n, h, w, ch / (b * b), b, nchw_, false);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    OP_REQUIRES_OK(c, StridedCopy(c, input, *out, v));
  }

 private:
  int64 block_ = 0;
  bool nchw_ = false;
};

// TensorFlow's Roll: (input, shift, axis).
class RollOp : public OpKernel {
 public:
  explicit RollOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& shift_t = c->input(1);
    const Tensor& axis_t = c->input(2);
    OP_REQUIRES(c, TensorShapeUtils::IsVectorOrHigher(input.shape()),
                errors::InvalidArgument("input must be 1-D or higher"));
    OP_REQUIRES(c, shift_t.dims() <= 1,
                errors::InvalidArgument("shift must be a scalar or a 1-D vector. Found: ",
                                        shift_t.shape().DebugString()));
    OP_REQUIRES(c, axis_t.dims() <= 1,
                errors::InvalidArgument("axis must be a scalar or a 1-D vector. Found: ",
                                        axis_t.shape().DebugString()));
    OP_REQUIRES(c, shift_t.shape() == axis_t.shape(),
                errors::InvalidArgument("shift and axis must have the same size"));
    const int dims = input.dims();
    const std::vector<int64> shifts = HostIndices(shift_t), axes = HostIndices(axis_t);
    std::vector<int64> shift(dims, 0);
    for (size_t i = 0; i < shifts.size(); ++i) {
      int64 a = axes[i];
      if (a < 0) a += dims;
      OP_REQUIRES(c, a >= 0 && a < dims,
                  errors::InvalidArgument("axis ", a, " is out of range"));
      const int64 d = std::max<int64>(input.dim_size(static_cast<int>(a)), 1);
      shift[a] = ((shift[a] + shifts[i]) % d + d) % d;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &out));
    if (input.NumElements() == 0) return;
    std::vector<int> rolled;
    for (int i = 0; i < dims; ++i)
      if (shift[i] != 0) rolled.push_back(i);
    const std::vector<int64> strides = RowMajorStrides(input.shape());
    // Piece `mask`: along rolled axis k, bit k clear: in[0, d - s) -> out[s, d);
    // set: in[d - s, d) -> out[0, s).
    for (uint32_t mask = 0; mask < (1u << rolled.size()); ++mask) {
      StridedView v;
      size_t k = 0;
      for (int i = 0; i < dims; ++i) {
        const int64 d = input.dim_size(i);
        if (k < rolled.size() && rolled[k] == i) {
          const int64 s = shift[i];
          const bool wrap = mask & (1u << k);
          ++k;
          v.src_off += (wrap ? d - s : 0) * strides[i];
          v.dst_off += (wrap ? 0 : s) * strides[i];
          v.Add(wrap ? s : d - s, strides[i], strides[i]);
        } else {
          v.Add(d, strides[i], strides[i]);
        }
      }
      OP_REQUIRES_OK(c, StridedCopy(c, input, *out, v));
    }
  }
};

#define PDK_REGISTER_ROLL(T, S, A)                          \
  REGISTER_KERNEL_BUILDER(Name("Roll")                      \
                              .Device(DEVICE_OPENCL)        \
                              .TypeConstraint<T>("T")       \
                              .TypeConstraint<S>("Tshift")  \
                              .TypeConstraint<A>("Taxis")   \
                              .HostMemory("shift")          \
                              .HostMemory("axis"),          \
                          RollOp);
#define PDK_REGISTER(T)                                                                         \
  REGISTER_KERNEL_BUILDER(Name("SpaceToDepth").Device(DEVICE_OPENCL).TypeConstraint<T>("T"),    \
                          SpaceDepthOp<true>);                                                  \
  REGISTER_KERNEL_BUILDER(Name("DepthToSpace").Device(DEVICE_OPENCL).TypeConstraint<T>("T"),    \
                          SpaceDepthOp<false>);                                                 \
  PDK_REGISTER_ROLL(T, int32, int32)                                                            \
  PDK_REGISTER_ROLL(T, int32, ::tensorflow::int64)                                              \
  PDK_REGISTER_ROLL(T, ::tensorflow::int64, int32)                                              \
  PDK_REGISTER_ROLL(T, ::tensorflow::int64, ::tensorflow::int64)
PDK_OPENCL_ARRAY_TYPES(PDK_REGISTER)
#undef PDK_REGISTER
#undef PDK_REGISTER_ROLL

// int32: every argument in host memory, computed on the host.
REGISTER_KERNEL_BUILDER(Name("SpaceToDepth")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .HostMemory("input")
                            .HostMemory("output"),
                        SpaceDepthOp<true>);
REGISTER_KERNEL_BUILDER(Name("DepthToSpace")
                            .Device(DEVICE_OPENCL)
                            .TypeConstraint<int32>("T")
                            .HostMemory("input")
                            .HostMemory("output"),
                        SpaceDepthOp<false>);
#define PDK_REGISTER_ROLL_I32(S, A)                         \
  REGISTER_KERNEL_BUILDER(Name("Roll")                      \
                              .Device(DEVICE_OPENCL)        \
                              .TypeConstraint<int32>("T")   \
                              .TypeConstraint<S>("Tshift")  \
                              .TypeConstraint<A>("Taxis")   \
                              .HostMemory("input")          \
                              .HostMemory("shift")          \
                              .HostMemory("axis")           \
                              .HostMemory("output"),        \
                          RollOp);
PDK_REGISTER_ROLL_I32(int32, int32)
PDK_REGISTER_ROLL_I32(int32, ::tensorflow::int64)
PDK_REGISTER_ROLL_I32(::tensorflow::int64, int32)
PDK_REGISTER_ROLL_I32(::tensorflow::int64, ::tensorflow::int64)
#undef PDK_REGISTER_ROLL_I32

}  // namespace tensorflow
