// tensorflow/core/framework/register_types.h at TensorFlow's include path, for kernels ported
// unchanged: the TF_CALL_* type lists (pdk/tf/types.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
