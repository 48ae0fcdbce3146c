// tensorflow/core/framework/tensor.h at TensorFlow's include path, for kernels ported
// unchanged: Tensor (pdk/tf/tensor.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
