// tensorflow/core/lib/core/errors.h at TensorFlow's include path, for kernels ported
// unchanged: errors::InvalidArgument, ... (pdk/tf/status.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
