// tensorflow/core/framework/op_kernel.h at TensorFlow's include path, for
// kernels ported unchanged: OpKernel, OpKernelConstruction, OpKernelContext,
// REGISTER_KERNEL_BUILDER (pdk/tf/op_kernel.h), and the names TensorFlow's own
// op_kernel.h brings in transitively (pdk/tf/tensorflow_paths.h).
#pragma once
#include "pdk/tf/tensorflow_paths.h"
