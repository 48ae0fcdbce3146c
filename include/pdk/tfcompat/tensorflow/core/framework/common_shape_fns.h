// tensorflow/core/framework/common_shape_fns.h at TensorFlow's include path, for kernels ported
// unchanged: the common shape functions (pdk/tf/common_shape_fns.h).
#pragma once
#include "pdk/tf/common_shape_fns.h"
#include "pdk/tf/tensorflow_paths.h"
