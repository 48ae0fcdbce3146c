// tensorflow/core/framework/device_base.h at TensorFlow's include path, for kernels ported
// unchanged: DeviceBase (pdk/tf/op_kernel.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
