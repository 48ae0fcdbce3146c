// tensorflow/core/platform/mutex.h at TensorFlow's include path, for kernels ported
// unchanged: mutex, mutex_lock (pdk/tf/tensorflow_paths.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
