// tensorflow/core/framework/op.h at TensorFlow's include path, for kernels ported
// unchanged: REGISTER_OP (pdk/tf/op.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
