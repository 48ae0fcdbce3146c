// tensorflow/core/lib/gtl/inlined_vector.h at TensorFlow's include path, for kernels ported
// unchanged: gtl::InlinedVector (pdk/tf/tensorflow_paths.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
