// tensorflow/core/framework/shape_inference.h at TensorFlow's include path, for kernels ported
// unchanged: shape_inference::InferenceContext (pdk/tf/shape_inference.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
