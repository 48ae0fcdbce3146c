// tensorflow/core/platform/stringpiece.h at TensorFlow's include path, for kernels ported
// unchanged: StringPiece (pdk/tf/op_kernel.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
