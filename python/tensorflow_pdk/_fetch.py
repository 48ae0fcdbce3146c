"""Reading a PDK tensor from eager code without TensorFlow's EventMgr.

TensorFlow reads an eager tensor of a PluggableDevice (``t.numpy()``,
``float(t)``, ``int(t)``, ``print(t)``, ``np.asarray(t.numpy())``) by copying it
to the host through ``PluggableDeviceUtil::CopyPluggableDeviceTensorToCPU``,
whose completion runs on TensorFlow's EventMgr threads: three thread wake-ups,
about 100 µs per read on the 2-core development VM, where the same read of a
CPU tensor costs 1 µs (docs/benchmarks.md, "Reading a result back"). A custom
training loop that prints its loss every step pays that every step.

TensorFlow runs an eager op as a function, and a function's int32 results
are host memory, so an eager op with an int32 result hands back a tensor of
the host CPU, which TensorFlow reads in place. PDK's op ``_PdkToHost``
(src/kernels/array/to_host.cc) returns a tensor's bytes as such an int32
vector. :func:`install` wraps ``_EagerTensorBase._numpy`` — what ``numpy()``,
``__float__``, ``__int__``, ``__index__``, ``__bool__``, ``__format__``,
``__repr__`` and ``__array__`` call — so that a tensor whose memory is on a PDK
device is read through one ``_PdkToHost`` dispatch and a NumPy view of its
bytes (about 10 µs) instead. The result is what TensorFlow's read gives: an
array of the tensor's dtype and shape, or a NumPy scalar for rank 0.
Everything else (CPU tensors, other devices, dtypes without a plain-data
buffer, graph mode) goes to TensorFlow unchanged, and so does a tensor for
which the op fails (e.g. a remote one), which then gets TensorFlow's own read
and its errors.

``np.array(t)`` and ``np.asarray(t)`` read an EagerTensor through the buffer
protocol, implemented in C (``EagerTensor_getbuffer``), which this cannot
reach: those reads, and Keras's ``train_on_batch`` / ``fit`` logs, still take
TensorFlow's copy.

Installed by the plugin when TensorFlow loads it (tensorflow_pdk/_hooks.py).
"""
from __future__ import annotations

_OP = "_PdkToHost"
_MARK = "/device:PDK:"


def install() -> bool:
    """Wraps ``_EagerTensorBase._numpy`` once per process (idempotent)."""
    from tensorflow.python import pywrap_tfe
    from tensorflow.python.eager import context
    from tensorflow.python.framework import dtypes, ops

    cls = ops._EagerTensorBase  # noqa: SLF001 -- the method every read goes through
    if getattr(cls._numpy, "_pdk_wrapped", False):
        return True
    original = cls._numpy
    # The dtypes _PdkToHost is registered for (to_host.cc).
    plain = frozenset(d.as_datatype_enum for d in (
        dtypes.float32, dtypes.float64, dtypes.float16, dtypes.bfloat16, dtypes.int8,
        dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32,
        dtypes.uint64, dtypes.bool, dtypes.complex64, dtypes.complex128))

    numpy_dtype = {}

    def _numpy(self):
        try:
            device = self.backing_device
            enum = self._datatype_enum()  # noqa: SLF001
        except Exception:  # noqa: BLE001 -- a handle TensorFlow itself must report on
            return original(self)
        if _MARK not in device or enum not in plain or not context.executing_eagerly():
            return original(self)
        try:
            raw = pywrap_tfe.TFE_Py_Execute(context.context()._handle, device, _OP, [self],  # noqa: SLF001
                                            ("T", enum), 1)[0]
            shape = self._shape_tuple()  # noqa: SLF001
        except Exception:  # noqa: BLE001 -- TensorFlow's own read reports the real error
            return original(self)
        dt = numpy_dtype.get(enum)
        if dt is None:
            dt = numpy_dtype[enum] = dtypes.as_dtype(enum).as_numpy_dtype
        n = 1
        for d in shape:
            n *= d
        arr = original(raw).view(dt)[:n].reshape(shape)
        return arr[()] if not shape else arr

    _numpy._pdk_wrapped = True
    _numpy.__wrapped__ = original
    cls._numpy = _numpy
    return True
