// tensorflow/core/platform/status.h at TensorFlow's include path, for kernels ported
// unchanged: Status (pdk/tf/status.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
