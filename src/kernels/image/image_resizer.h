// What the resize kernels share (TensorFlow's kernel style, pdk/tf/op_kernel.h):
// the align_corners / half_pixel_centers attributes, the scale of an axis and
// the forward and gradient ops' input checks, in TensorFlow's wording and order
// (ImageResizerState::ValidateAndCalculateOutputSize and
// ImageResizerGradientState::ValidateAndCreateOutput, tensorflow/core/util/
// image_resizer_state.h).
#ifndef PDK_SRC_KERNELS_IMAGE_IMAGE_RESIZER_H_
#define PDK_SRC_KERNELS_IMAGE_IMAGE_RESIZER_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "pdk/tf/op_kernel.h"

namespace pdk_image {

// TensorFlow's FastBoundsCheck(d, max int32): d < 2^31 - 1.
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// in / out along one axis; (in - 1) / (out - 1) with align_corners when both
// sizes exceed 1 (float32, TensorFlow 2.21's CalculateResizeScale in
// tensorflow/core/util/image_resizer_state.h: a one-pixel axis keeps in / out).
inline float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return (align_corners && in > 1 && out > 1)
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

// images [b, h, w, c] resized to size [oh, ow]; hs, ws: the axes' scales.
struct ResizeShape {
  int64_t b = 0, h = 0, w = 0, c = 0, oh = 0, ow = 0;
  float hs = 0, ws = 0;
};

// The forward ops' checks of `images` and the host int32 `size`.
inline tensorflow::Status ValidateResize(const std::string& op, const tensorflow::Tensor& images,
                                         const tensorflow::Tensor& size, bool align_corners,
                                         ResizeShape* s) {
  namespace errors = tensorflow::errors;
  const tensorflow::TensorShape& in = images.shape();
  if (in.dims() != 4)
    return errors::InvalidArgument("input must be 4-dimensional", in.DebugString(), " (", op,
                                   ": images must be [batch, height, width, channels])");
  if (in.dim_size(3) <= 0)
    return errors::InvalidArgument("image must have at least one channel (", op,
                                   ": images of shape ", in, ")");
  if (in.dim_size(1) <= 0 || in.dim_size(2) <= 0)
    return errors::InvalidArgument("input image must be of non-zero size (", op,
                                   ": images of shape ", in, ")");
  if (in.dim_size(1) >= kInt32Max || in.dim_size(2) >= kInt32Max)
    return errors::InvalidArgument("input sizes must be between 0 and max int32 (", op,
                                   ": images of shape ", in, ")");
  if (size.dims() != 1)
    return errors::InvalidArgument("shape_t must be 1-dimensional", size.shape().DebugString(),
                                   " (", op, ": size must be [new_height, new_width])");
  if (size.NumElements() != 2)
    return errors::InvalidArgument("shape_t must have two elements", size.shape().DebugString(),
                                   " (", op, ": size must be [new_height, new_width])");
  const int32_t* sz = size.flat<tensorflow::int32>().data();
  if (sz[0] <= 0 || sz[1] <= 0)
    return errors::InvalidArgument("output dimensions must be positive (", op, ": size [", sz[0],
                                   ",", sz[1], "])");
  s->b = in.dim_size(0);
  s->h = in.dim_size(1);
  s->w = in.dim_size(2);
  s->c = in.dim_size(3);
  s->oh = sz[0];
  s->ow = sz[1];
  s->hs = ResizeScale(s->h, s->oh, align_corners);
  s->ws = ResizeScale(s->w, s->ow, align_corners);
  if (std::ceil(static_cast<float>(s->oh - 1) * s->hs) >
      static_cast<float>(std::numeric_limits<int64_t>::max()))
    return errors::InvalidArgument("input image height scale would cause an overflow (", op, ")");
  if (std::ceil(static_cast<float>(s->ow - 1) * s->ws) > static_cast<float>(kInt32Max))
    return errors::InvalidArgument("input image width scale would cause an overflow (", op, ")");
  return tensorflow::OkStatus();
}

// Reads align_corners and half_pixel_centers (both false when absent), which
// must not both be true.
class ResizeBase : public tensorflow::OpKernel {
 public:
  explicit ResizeBase(tensorflow::OpKernelConstruction* c) : tensorflow::OpKernel(c) {
    if (c->HasAttr("align_corners"))
      OP_REQUIRES_OK(c, c->GetAttr("align_corners", &align_corners_));
    if (c->HasAttr("half_pixel_centers"))
      OP_REQUIRES_OK(c, c->GetAttr("half_pixel_centers", &half_pixel_));
    OP_REQUIRES(c, !(align_corners_ && half_pixel_),
                tensorflow::errors::InvalidArgument(
                    "If half_pixel_centers is True, align_corners must be False."));
  }

 protected:
  // The forward ops' checks (ValidateResize) of images (input 0) and size
  // (input 1), then output 0 allocated as float32 or T [b, oh, ow, c].
  tensorflow::Status ValidateAndAllocate(tensorflow::OpKernelContext* ctx, ResizeShape* s,
                                         tensorflow::Tensor** y) {
    TF_RETURN_IF_ERROR(
        ValidateResize(type_string(), ctx->input(0), ctx->input(1), align_corners_, s));
    return ctx->allocate_output(0, tensorflow::TensorShape({s->b, s->oh, s->ow, s->c}), y);
  }

  bool align_corners_ = false, half_pixel_ = false;
};

// grads [b, oh, ow, c] to the original image's [b, h, w, c] (height and
// width from original_image, batch and channels from grads, as TensorFlow).
struct ResizeGradShape {
  int64_t b = 0, h = 0, w = 0, c = 0, oh = 0, ow = 0;
};

// The gradient ops' checks of `grads` and `original_image`, in TensorFlow's
// wording and order (ImageResizerGradientState::ValidateAndCreateOutput).
inline tensorflow::Status ValidateResizeGrad(const std::string& op, const tensorflow::Tensor& grads,
                                             const tensorflow::Tensor& original,
                                             ResizeGradShape* s) {
  namespace errors = tensorflow::errors;
  const tensorflow::TensorShape& gs = grads.shape();
  const tensorflow::TensorShape& os = original.shape();
  if (gs.dims() != 4)
    return errors::InvalidArgument("input_grad must be 4-dimensional", gs.DebugString(), " (", op,
                                   ": grads must be [batch, height, width, channels])");
  if (gs.dim_size(1) <= 0 || gs.dim_size(2) <= 0)
    return errors::InvalidArgument("resized dimensions must be positive (", op, ": grads of shape ",
                                   gs, ")");
  if (os.dims() != 4)
    return errors::InvalidArgument("original_image must be 4-dimensional", os.DebugString(), " (",
                                   op, ")");
  if (os.dim_size(1) <= 0 || os.dim_size(2) <= 0)
    return errors::InvalidArgument("original dimensions must be positive (", op,
                                   ": original_image of shape ", os, ")");
  if (os.dim_size(1) >= kInt32Max || os.dim_size(2) >= kInt32Max)
    return errors::InvalidArgument("original sizes must be between 0 and max int32 (", op,
                                   ": original_image of shape ", os, ")");
  s->b = gs.dim_size(0);
  s->oh = gs.dim_size(1);
  s->ow = gs.dim_size(2);
  s->c = gs.dim_size(3);
  s->h = os.dim_size(1);
  s->w = os.dim_size(2);
  return tensorflow::OkStatus();
}

}  // namespace pdk_image

#endif  // PDK_SRC_KERNELS_IMAGE_IMAGE_RESIZER_H_
