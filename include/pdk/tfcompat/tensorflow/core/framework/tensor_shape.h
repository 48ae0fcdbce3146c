// tensorflow/core/framework/tensor_shape.h at TensorFlow's include path, for kernels ported
// unchanged: TensorShape, TensorShapeUtils (pdk/tf/tensor_shape.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
