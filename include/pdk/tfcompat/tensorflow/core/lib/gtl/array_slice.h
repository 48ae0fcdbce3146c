// tensorflow/core/lib/gtl/array_slice.h at TensorFlow's include path, for kernels ported
// unchanged: gtl::ArraySlice (pdk/tf/tensorflow_paths.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
