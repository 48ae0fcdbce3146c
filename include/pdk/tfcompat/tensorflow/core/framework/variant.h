// tensorflow/core/framework/variant.h at TensorFlow's include path, for kernels ported
// unchanged: Variant, declared only: no variant kernel registers.
#pragma once
#include "pdk/tf/tensorflow_paths.h"
