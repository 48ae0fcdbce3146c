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
reach: those reads still take TensorFlow's copy. Keras reads every log value
of ``train_on_batch``, ``test_on_batch`` and of ``fit``'s callbacks that way
(``keras.src.utils.python_utils.pythonify_logs`` →
``backend.convert_to_numpy`` → ``np.array``), once per value per step;
:func:`install_keras` routes Keras's ``convert_to_numpy`` through ``numpy()``
for PDK tensors.

Installed by the plugin when TensorFlow loads it (tensorflow_pdk/_hooks.py).
"""
from __future__ import annotations

import sys

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
    (TensorFlow then puts it on PDK, as on a GPU) — is copied into PDK's
    memory by one ``_PdkFromHost`` dispatch on the calling thread, where
    TensorFlow would copy it through its EventMgr threads
    (``CopyCPUTensorToPluggableDevice``, about 100 µs). Wraps
    ``constant_op.convert_to_eager_tensor`` for NumPy arrays of the dtypes in
    ``_MOVED`` (TensorFlow caches Python scalars per device itself). A host
    *tensor* passed to a ``tf.function`` on PDK (a tf.data element) is left as
    it is: the function's PDK kernels read it in host memory, with no copy
    (PDK's graph optimizer, src/graph/rewrites/cpu_inputs_host_memory.cc); so
    a ``tf.function`` call's NumPy arguments become host tensors too
    (``TensorSpec.cast``, through which TensorFlow binds them, wrapped).
    Idempotent."""
    import numpy as np
    from tensorflow.python import pywrap_tfe
    from tensorflow.python.eager import context
    from tensorflow.python.framework import constant_op, dtypes, ops
    from tensorflow.python.framework import tensor as tensor_lib

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

    # A NumPy argument of a tf.function call (TensorFlow binds it through
    # TensorSpec.cast) stays a host tensor, which the function's PDK kernels
    # read in host memory, as they do a tf.data element: a custom training
    # loop's batches (64 x 32 float32 and 32 int64) cost 567 against 480 us
    # per step moved first, 2026-11-30, when the function still copied them
    # itself (docs/benchmarks.md, "Reading a result back, and other
    # host-device copies").
    original_cast = tensor_lib.TensorSpec.cast
    if not getattr(original_cast, "_pdk_wrapped", False):

        def cast(self, value, casting_context):
            if isinstance(value, np.ndarray) and context.executing_eagerly():
                ctx = context.context()
                device = ctx.device_name or _first_pdk_device(ctx)
                if _MARK in device:
                    value = original_convert(value, _OnHost(ctx, host_name), self.dtype)
            return original_cast(self, value, casting_context)

        cast._pdk_wrapped = True
        cast.__wrapped__ = original_cast
        tensor_lib.TensorSpec.cast = cast

    return True


# The modules that hold Keras 3's TensorFlow-backend convert_to_numpy: its
# definition, and the two that import the name (keras/src/backend/
# tensorflow/__init__.py, and keras/src/backend/__init__.py by `import *`),
# which callers such as pythonify_logs and keras.ops.convert_to_numpy read it
# from at call time.
_KERAS_MODULES = ("keras.src.backend.tensorflow.core", "keras.src.backend.tensorflow",
                  "keras.src.backend")


def install_keras() -> bool:
    """Keras 3's ``convert_to_numpy`` (TensorFlow backend: ``np.array(x)``, a
    read through TensorFlow's EventMgr copy, about 60 µs per PDK scalar) reads
    an eager PDK tensor with ``np.array(x.numpy())`` instead, which
    :func:`install` makes one ``_PdkToHost`` dispatch (about 7 µs): the same
    array (a fresh copy of the tensor's dtype and shape). Keras converts every
    log value (loss, each metric) this way after each ``train_on_batch`` /
    ``test_on_batch`` and, in ``fit``, for its callbacks after each batch.
    Anything else (CPU tensors, symbolic tensors, other dtypes) goes to Keras's
    own function (bfloat16 and the other ml_dtypes too: Keras's np.array converts
    them at rank >= 1 and raises at rank 0, on every device). Keras is imported after TensorFlow (it imports TensorFlow
    itself), so unless it is loaded already this installs an import hook that
    wraps the function when ``keras.src.backend`` has been executed, and then
    removes itself. Idempotent."""
    if "keras.src.backend" in sys.modules:
        return _wrap_keras_convert_to_numpy()
    if not any(isinstance(f, _KerasBackendFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _KerasBackendFinder())
    return True


def _wrap_keras_convert_to_numpy() -> bool:
    import numpy as np
    from tensorflow.python.eager import context
    from tensorflow.python.framework import dtypes, ops

    core = sys.modules.get(_KERAS_MODULES[0])
    original = getattr(core, "convert_to_numpy", None)
    if original is None:  # another Keras backend, or a Keras without it
        return False
    if not getattr(original, "_pdk_wrapped", False):

        # NumPy's own dtypes only: np.array of a rank-0 bfloat16 (or other
        # ml_dtypes) EagerTensor raises, on the CPU too; Keras's function keeps that.
        plain = frozenset(d.as_datatype_enum for d in (
            dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
            dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32,
            dtypes.uint64, dtypes.bool, dtypes.complex64, dtypes.complex128))

        def convert_to_numpy(x):
            if isinstance(x, ops.EagerTensor) and context.executing_eagerly():
                try:
                    on_pdk = _MARK in x.backing_device and x._datatype_enum() in plain  # noqa: SLF001
                except Exception:  # noqa: BLE001 -- Keras's own function reports it
                    on_pdk = False
                if on_pdk:
                    return np.array(x.numpy())
            return original(x)

        convert_to_numpy._pdk_wrapped = True
        convert_to_numpy.__wrapped__ = original
        wrapped = convert_to_numpy
    else:
        wrapped = original
    for name in _KERAS_MODULES:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "convert_to_numpy", None) is original:
            module.convert_to_numpy = wrapped
    return True


class _KerasBackendFinder:
    """A ``sys.meta_path`` entry that finds nothing itself: when
    ``keras.src.backend`` is imported it wraps the module's loader so that
    :func:`_wrap_keras_convert_to_numpy` runs right after the module body."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "keras.src.backend":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        finder = self

        class _Loader(type(loader)):
            def exec_module(self, module):
                super().exec_module(module)
                try:
                    sys.meta_path.remove(finder)
                except ValueError:
                    pass
                try:
                    _wrap_keras_convert_to_numpy()
                except Exception as e:  # noqa: BLE001 -- never break `import keras`
                    print(f"PDK: wrapping Keras's convert_to_numpy failed, its fix is off: {e!r}",
                          file=sys.stderr)

        loader.__class__ = _Loader
        return spec


def _first_pdk_device(ctx) -> str:
    """The name of the first logical PDK device, or "" if none is visible."""
    devices = ctx.list_logical_devices("PDK")
    return devices[0].name if devices else ""
