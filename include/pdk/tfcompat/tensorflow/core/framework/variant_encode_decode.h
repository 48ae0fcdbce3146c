// tensorflow/core/framework/variant_encode_decode.h at TensorFlow's include path, for kernels ported
// unchanged: nothing: no variant kernel registers.
#pragma once
#include "pdk/tf/tensorflow_paths.h"
