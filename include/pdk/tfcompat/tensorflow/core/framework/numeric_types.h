// tensorflow/core/framework/numeric_types.h at TensorFlow's include path, for kernels ported
// unchanged: the element types (pdk/tf/types.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
