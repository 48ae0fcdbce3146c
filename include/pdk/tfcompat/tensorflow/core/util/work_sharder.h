// tensorflow/core/util/work_sharder.h at TensorFlow's include path, for kernels ported
// unchanged: Shard (pdk/tf/op_kernel.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
