// tensorflow/core/platform/threadpool.h at TensorFlow's include path, for kernels ported
// unchanged: thread::ThreadPool (pdk/tf/op_kernel.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
