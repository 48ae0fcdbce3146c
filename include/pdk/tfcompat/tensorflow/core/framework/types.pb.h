// tensorflow/core/framework/types.pb.h at TensorFlow's include path, for kernels ported
// unchanged: DataType (pdk/tf/types.h), in place of the protobuf-generated enum.
#pragma once
#include "pdk/tf/tensorflow_paths.h"
