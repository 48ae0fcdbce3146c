// tensorflow/core/framework/types.h at TensorFlow's include path, for kernels ported
// unchanged: DataType, DataTypeToEnum, DataTypeString (pdk/tf/types.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
