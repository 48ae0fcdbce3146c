// tensorflow/core/framework/tensor_types.h at TensorFlow's include path, for kernels ported
// unchanged: TTypes (pdk/tf/types.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
