// tensorflow/core/platform/types.h at TensorFlow's include path, for kernels ported
// unchanged: int32, int64, ... (pdk/tf/types.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
