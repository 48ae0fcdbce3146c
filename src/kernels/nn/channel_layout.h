// An activation viewed around its channel dimension, as the per-channel
// kernels (BiasAdd, BiasAddGrad, FusedBatchNorm and its gradient) walk it:
// [outer, C, inner]. Channels last (the last dimension) has inner == 1 (rows
// of C); channels first (dimension 1, NCHW / NCDHW) has outer = N and inner =
// the product of the dimensions after C (one contiguous run per (n, c)).
#ifndef PDK_SRC_KERNELS_NN_CHANNEL_LAYOUT_H_
#define PDK_SRC_KERNELS_NN_CHANNEL_LAYOUT_H_

#include <cstdint>

#include "pdk/tf/tensor_shape.h"

namespace pdk_kernels {

struct ChannelLayout {
  int channel_dim = 0;
  int64_t outer = 1, channels = 0, inner = 1;
  int64_t per_channel() const { return outer * inner; }  // elements of one channel
};

inline ChannelLayout ChannelLayoutOf(const tensorflow::TensorShape& s, bool channels_first) {
  ChannelLayout l;
  l.channel_dim = channels_first ? 1 : s.dims() - 1;
  l.channels = s.dim_size(l.channel_dim);
  for (int i = 0; i < l.channel_dim; ++i) l.outer *= s.dim_size(i);
  for (int i = l.channel_dim + 1; i < s.dims(); ++i) l.inner *= s.dim_size(i);
  return l;
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_NN_CHANNEL_LAYOUT_H_
