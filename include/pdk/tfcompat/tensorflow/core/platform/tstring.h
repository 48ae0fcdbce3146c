// tensorflow/core/platform/tstring.h at TensorFlow's include path, for kernels ported
// unchanged: tstring (pdk/tf/tensorflow_paths.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
