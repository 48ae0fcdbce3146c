// tensorflow/core/framework/op_requires.h at TensorFlow's include path, for kernels ported
// unchanged: OP_REQUIRES, OP_REQUIRES_OK (pdk/tf/op_kernel.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
