// int32 tensors of the PDK device live in host memory, as TensorFlow's own
// kernels for non-CPU devices have them.
//
// TensorFlow's DEVICE_DEFAULT int32 kernels (the ones a PluggableDevice runs
// when it registers none of its own) and its GPU int32 kernels declare every
// int32 argument HostMemory: e.g. AddV2, Less, Identity, Shape, ConcatV2
// (core/kernels/cwise_op_add_1.cc, cwise_op_less.cc, identity_op.cc, ...), and
// the control-flow kernels Enter, Merge, Switch, NextIteration and Exit of
// int32 (core/kernels/control_flow_ops.cc). A PDK int32 kernel that took the
// same tensor in device memory makes TensorFlow's partitioner insert a
// _HostSend/_Recv pair at each such edge (a copy and a rendezvous round trip
// through the stream and TensorFlow's event manager): in a tf.while_loop that
// is several per iteration, since the loop counter and the time step are int32
// (a Keras LSTM step paid about 40 µs per iteration for it).
//
// So PDK's int32 kernels declare the same host-memory arguments as
// TensorFlow's DEVICE_DEFAULT kernel of the same op; Pack and StridedSlice,
// which have no DEVICE_DEFAULT int32 kernel, follow TensorFlow's GPU kernels
// (pack_op.cc, strided_slice_op.cc); Cast keeps its int32 side on the host
// (a loop's time step cast to float). LogicalAnd, LogicalOr and LogicalNot
// keep their bool tensors in host memory as well: a while loop's condition
// joins int32 comparisons with them and feeds LoopCond, whose input TensorFlow
// keeps in host memory. PDK computes on the host either way;
// only the allocator differs (TensorFlow's CPU allocator instead of PDK's).
// tests/python/test_host_memory.py compares every registration with
// TensorFlow's.
#ifndef PDK_SRC_KERNELS_INT32_ON_HOST_H_
#define PDK_SRC_KERNELS_INT32_ON_HOST_H_

#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "pdk/kernel.h"

namespace pdk_kernels {

// `def` with `args` declared HostMemory when T is int32; unchanged otherwise.
template <class T, class K>
pdk::KernelDef<K> Int32OnHost(pdk::KernelDef<K> def, std::initializer_list<const char*> args) {
  if constexpr (std::is_same_v<T, int32_t>) {
    for (const char* arg : args) def.HostMemory(arg);
  }
  return def;
}

}  // namespace pdk_kernels

#endif  // PDK_SRC_KERNELS_INT32_ON_HOST_H_
