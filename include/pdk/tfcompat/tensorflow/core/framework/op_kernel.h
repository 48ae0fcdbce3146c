// tensorflow/core/framework/op_kernel.h at TensorFlow's include path, for
// kernels ported unchanged: OpKernel, OpKernelConstruction, OpKernelContext,
// REGISTER_KERNEL_BUILDER (pdk/tf/op_kernel.h). Like TensorFlow's, it also
// brings in the absl vocabulary TensorFlow's kernels use without including it
// (absl::Span, absl::InlinedVector, absl::StrCat, absl::Status), from
// TensorFlow's include directory; docs/kit.md, "absl", says which of them
// tie a plugin to the TensorFlow version it was built against.
#pragma once
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "pdk/tf/op_kernel.h"
