// tensorflow/core/platform/logging.h at TensorFlow's include path, for kernels ported
// unchanged: CHECK, DCHECK, LOG, VLOG (pdk/tf/logging.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
