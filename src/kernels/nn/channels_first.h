// Channels-first convolutions run on the channels-last code: the layout swaps
// shared by Conv2D's data_format "NCHW" (src/kernels/nn/conv2d.cc) and
// Conv3D's "NCDHW" (conv3d.cc). TensorFlow's own CPU kernels have neither.
//
// A kernel derives from ChannelsFirstBridge<D> (D spatial dimensions), sets
// format_ in its constructor (ParseWindow's DataFormat out-parameter), and
//   - reads each activation operand through InputLast: the tensor itself, or
//     (channels first) a channels-last scratch copy,
//       [N, C, S_0..S_{D-1}] -> [N, S_0..S_{D-1}, C];
//   - allocates its channels-last result with AllocateLast: output 0 itself,
//     or scratch;
//   - ends with Finish, which transposes that scratch into output 0,
//       [N, S_0..S_{D-1}, C] -> [N, C, S_0..S_{D-1}],
//     or, on error, appends that the shapes the message names are of the
//     channels-last copies.
// RunActivationResult / RunFilterResult are that sequence for a convolution's
// forward / backprop input, and for its backprop filter.
// The transposes are pdk_compute::BatchedTranspose2D (one [C, S] <-> [S, C]
// matrix per image) on the device pool; filters are never transposed.
//
// Written in TensorFlow's kernel style (pdk/tf/op_kernel.h): the kernels are
// tensorflow::OpKernel classes, the bridge works on their OpKernelContext.
#ifndef PDK_SRC_KERNELS_NN_CHANNELS_FIRST_H_
#define PDK_SRC_KERNELS_NN_CHANNELS_FIRST_H_

#include <cstdint>
#include <vector>

#include "compute/transpose.h"
#include "kernels/nn/window.h"
#include "pdk/tf/op_kernel.h"

namespace pdk_kernels {

template <int D>
class ChannelsFirstBridge {
 protected:
  bool channels_first() const { return format_ == DataFormat::kChannelsFirst; }

  // Channels-last shape of a channels-first shape (rank D + 2), and back.
  static pdk::Shape ToLast(const pdk::Shape& s) {
    std::vector<int64_t> d{s[0]};
    for (int i = 0; i < D; ++i) d.push_back(s[2 + i]);
    d.push_back(s[1]);
    return pdk::Shape(std::move(d));
  }
  static pdk::Shape ToFirst(const pdk::Shape& s) {
    std::vector<int64_t> d{s[0], s[D + 1]};
    for (int i = 0; i < D; ++i) d.push_back(s[1 + i]);
    return pdk::Shape(std::move(d));
  }

  // Product of the D spatial dimensions s[first..first + D).
  static int64_t Pixels(const pdk::Shape& s, int first) {
    int64_t p = 1;
    for (int i = 0; i < D; ++i) p *= s[first + i];
    return p;
  }

  // Activation input `i` channels-last, into *out: the input itself (a
  // borrowed view), or a scratch copy of a channels-first one.
  template <class T>
  tensorflow::Status InputLast(tensorflow::OpKernelContext* ctx, int i, const char* name,
                               tensorflow::Tensor* out) const {
    const tensorflow::Tensor& t = ctx->input(i);
    if (!channels_first()) {
      *out = t;
      return tensorflow::OkStatus();
    }
    const pdk::Shape& s = t.shape().pdk_shape();
    TF_RETURN_IF_ERROR(
        pdk::CheckRank(ctx->op_kernel().type_string().c_str(), name, s, D + 2));
    TF_RETURN_IF_ERROR(ctx->allocate_temp(tensorflow::DataTypeToEnum<T>::value,
                                          tensorflow::TensorShape(ToLast(s)), out));
    pdk_compute::BatchedTranspose2D<T>(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
                                       static_cast<const T*>(t.data()),
                                       static_cast<T*>(out->data()), s[0], s[1], Pixels(s, 2));
    return tensorflow::OkStatus();
  }

  // Where the channels-last code writes a channels-last result, into *out:
  // output 0 itself, or (channels first) scratch that Finish transposes into
  // output 0.
  tensorflow::Status AllocateLast(tensorflow::OpKernelContext* ctx, tensorflow::DataType dtype,
                                  const tensorflow::TensorShape& shape,
                                  tensorflow::Tensor* out) const {
    if (channels_first()) return ctx->allocate_temp(dtype, shape, out);
    tensorflow::Tensor* output = nullptr;
    TF_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &output));
    *out = *output;
    return tensorflow::OkStatus();
  }

  // Ends Compute: channels first, transposes the channels-last result `last`
  // into output 0 (if `st` is OK) or marks a shape error as one about the
  // channels-last copies.
  template <class T>
  tensorflow::Status Finish(tensorflow::OpKernelContext* ctx, const tensorflow::Status& st,
                            const tensorflow::Tensor& last) const {
    if (!channels_first()) return st;
    if (!st.ok())
      return tensorflow::Status(st.code(), st.message() + " (data_format " +
                                               FormatName(D, DataFormat::kChannelsFirst) +
                                               ": shapes above are of the " +
                                               FormatName(D, DataFormat::kChannelsLast) +
                                               " copies of the " +
                                               FormatName(D, DataFormat::kChannelsFirst) +
                                               " operands)");
    const pdk::Shape& s = last.shape().pdk_shape();
    tensorflow::Tensor* out = nullptr;
    TF_RETURN_IF_ERROR(ctx->allocate_output(0, tensorflow::TensorShape(ToFirst(s)), &out));
    pdk_compute::BatchedTranspose2D<T>(ctx->eigen_device<Eigen::ThreadPoolDevice>(),
                                       static_cast<const T*>(last.data()),
                                       static_cast<T*>(out->data()), s[0], Pixels(s, 1),
                                       s[D + 1]);
    return tensorflow::OkStatus();
  }

  // The two shapes of Compute. Ops whose result is an activation (forward,
  // backprop input): compute(const Tensor& x, Tensor* out) -> Status on
  // activation input `i` channels-last, `out` allocated by AllocateLast, then
  // Finish.
  template <class T, class Fn>
  tensorflow::Status RunActivationResult(tensorflow::OpKernelContext* ctx, int i,
                                         const char* name, Fn compute) const {
    tensorflow::Tensor x, out;
    TF_RETURN_IF_ERROR(InputLast<T>(ctx, i, name, &x));
    const tensorflow::Status st = compute(x, &out);
    return Finish<T>(ctx, st, out);
  }
  // Backprop filter: compute(const Tensor& input, const Tensor& out_backprop)
  // -> Status on inputs 0 and 2 channels-last; the filter gradient has no
  // data_format, so only errors go through Finish.
  template <class T, class Fn>
  tensorflow::Status RunFilterResult(tensorflow::OpKernelContext* ctx, Fn compute) const {
    tensorflow::Tensor x, dy;
    TF_RETURN_IF_ERROR(InputLast<T>(ctx, 0, "input", &x));
    TF_RETURN_IF_ERROR(InputLast<T>(ctx, 2, "out_backprop", &dy));
    const tensorflow::Status st = compute(x, dy);
    return st.ok() ? st : Finish<T>(ctx, st, x);
  }

  DataFormat format_ = DataFormat::kChannelsLast;
};

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_NN_CHANNELS_FIRST_H_
