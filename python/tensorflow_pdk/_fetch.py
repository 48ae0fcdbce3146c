"""Reading a PDK tensor from eager code, and turning a NumPy array into one,
without TensorFlow's EventMgr (:func:`install`, :func:`install_conversions`).

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
_FROM_HOST = "_PdkFromHost"
_MARK = "/device:PDK:"


def install() -> bool:
    """Wraps ``_EagerTensorBase._numpy`` once per process (idempotent); the
    other direction is :func:`install_conversions`."""
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


# NumPy arrays moved to PDK by install_conversions: the dtypes of the data a
# training step takes (features, images, labels). int32 is host memory on PDK
# anyway; other dtypes keep TensorFlow's path.
_MOVED = ("float32", "float64", "float16", "bfloat16", "int64", "uint8")
# Larger tensors keep TensorFlow's copy: the thread hand-offs it saves (~100 µs)
# are then small beside the bytes, which this path may copy once more.
_MAX_BYTES = 4 << 20


class _OnHost:
    """The eager context as ``constant_op.convert_to_eager_tensor`` uses it
    (``device_name``, ``ensure_initialized``), naming the host CPU."""

    __slots__ = ("_ctx", "device_name")

    def __init__(self, ctx, device_name):
        self._ctx, self.device_name = ctx, device_name

    def ensure_initialized(self):
        self._ctx.ensure_initialized()


def install_conversions() -> bool:
    """The other direction: a NumPy array that eager code turns into a PDK
    tensor — ``tf.constant(array)`` or ``tf.convert_to_tensor(array)`` under a
    ``tf.device`` scope naming PDK or under no scope while PDK is visible
    (TensorFlow then puts it on PDK, as on a GPU), which is also what a
    ``tf.function`` call does with its NumPy arguments — is copied into PDK's
    memory by one ``_PdkFromHost`` dispatch on the calling thread, where
    TensorFlow would copy it through its EventMgr threads
    (``CopyCPUTensorToPluggableDevice``, about 100 µs). Wraps
    ``constant_op.convert_to_eager_tensor`` for NumPy arrays of the dtypes in
    ``_MOVED`` (TensorFlow caches Python scalars per device itself). A host
    *tensor* passed to a ``tf.function`` on PDK (a tf.data element) is left to
    TensorFlow: it is copied inside the function, overlapped with other work,
    and measured no slower that way. Idempotent."""
    import numpy as np
    from tensorflow.python import pywrap_tfe
    from tensorflow.python.framework import constant_op, dtypes, ops

    moved = frozenset(dtypes.as_dtype(n).as_datatype_enum for n in _MOVED)
    host_name = "/job:localhost/replica:0/task:0/device:CPU:0"

    def to_pdk(ctx, t, device):
        """`t` (a host EagerTensor of a dtype in `moved`) copied to `device`,
        or None if it cannot be."""
        try:
            a = t._numpy()  # noqa: SLF001 -- a host tensor: TensorFlow's view of its buffer
            if not isinstance(a, np.ndarray):
                a = np.asarray(a)
            if a.nbytes > _MAX_BYTES:
                return None
            raw = a.reshape(-1).view(np.uint8)
            if raw.size % 4:
                raw = np.concatenate([raw, np.zeros(4 - raw.size % 4, np.uint8)])
            b = ops.EagerTensor(raw.view(np.int32), host_name, None)
            return pywrap_tfe.TFE_Py_Execute(
                ctx._handle, device, _FROM_HOST, [b],  # noqa: SLF001
                ("T", t._datatype_enum(), "shape", list(a.shape)), 1)[0]  # noqa: SLF001
        except Exception:  # noqa: BLE001 -- TensorFlow's own copy then does it
            return None

    original_convert = constant_op.convert_to_eager_tensor
    if not getattr(original_convert, "_pdk_wrapped", False):

        def convert_to_eager_tensor(value, ctx, dtype=None):
            if not isinstance(value, np.ndarray):
                return original_convert(value, ctx, dtype)
            # No scope: TensorFlow puts the tensor on the first PDK device, as
            # on a GPU (the rule tensorflow_pdk._xla's _runs_on_pdk states).
            device = ctx.device_name or _first_pdk_device(ctx)
            if _MARK not in device or value.nbytes > _MAX_BYTES:
                return original_convert(value, ctx, dtype)
            try:
                want = dtypes.as_dtype(value.dtype if dtype is None else dtype)
            except TypeError:  # TensorFlow reports it
                return original_convert(value, ctx, dtype)
            if want.as_datatype_enum not in moved:
                return original_convert(value, ctx, dtype)
            t = original_convert(value, _OnHost(ctx, host_name), dtype)
            on_pdk = to_pdk(ctx, t, device)
            return on_pdk if on_pdk is not None else original_convert(value, ctx, dtype)

        convert_to_eager_tensor._pdk_wrapped = True
        convert_to_eager_tensor.__wrapped__ = original_convert
        constant_op.convert_to_eager_tensor = convert_to_eager_tensor

    return True


def _first_pdk_device(ctx) -> str:
    """The name of the first logical PDK device, or "" if none is visible."""
    devices = ctx.list_logical_devices("PDK")
    return devices[0].name if devices else ""
