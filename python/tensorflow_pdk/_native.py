"""ctypes bridge to the PDK plugin library that TensorFlow loaded.

TensorFlow dlopens ``site-packages/tensorflow-plugins/libtensorflow_pdk_plugin.so``
on ``import tensorflow``; opening the same file again returns the same handle,
so the counters read here are the ones the running kernels update.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
from typing import Optional

LIBRARY_NAME = "libtensorflow_pdk_plugin.so"

_lib: Optional[ctypes.CDLL] = None


def plugin_path() -> pathlib.Path:
    """Path of the plugin library: ``TF_PLUGGABLE_DEVICE_LIBRARY_PATH`` if it
    names a PDK build, else ``site-packages/tensorflow-plugins``."""
    env = os.environ.get("TF_PLUGGABLE_DEVICE_LIBRARY_PATH", "")
    if env.endswith(LIBRARY_NAME) and os.path.exists(env):
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parent.parent / "tensorflow-plugins" / LIBRARY_NAME


def lib() -> ctypes.CDLL:
    """The loaded plugin library (imports tensorflow first, which loads it)."""
    global _lib
    if _lib is None:
        import tensorflow  # noqa: F401  (registers the plugin)

        from tensorflow_pdk import _soft_placement

        _soft_placement.apply()

        path = plugin_path()
        if not path.exists():
            raise FileNotFoundError(
                f"PDK plugin library not found at {path}; install the tensorflow-pdk wheel")
        l = ctypes.CDLL(str(path))
        for name in ("PDK_Version", "PDK_BuiltForTensorFlow", "PDK_DisabledReason",
                     "PDK_AsyncStatus"):
            getattr(l, name).restype = ctypes.c_char_p
        for name in ("PDK_RegisteredKernels", "PDK_LaunchCounts", "PDK_GraphRewriteCounts",
                     "PDK_ConfigText"):
            f = getattr(l, name)
            f.restype = ctypes.c_size_t
            f.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        l.PDK_AsyncLaunches.restype = ctypes.c_uint64
        l.PDK_IsComputeOp.restype = ctypes.c_int
        l.PDK_IsComputeOp.argtypes = [ctypes.c_char_p]
        l.PDK_DeviceAllocatorStats.restype = ctypes.c_int
        l.PDK_DeviceAllocatorStats.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]
        l.PDK_ResetDeviceAllocatorStats.restype = ctypes.c_int
        l.PDK_ResetDeviceAllocatorStats.argtypes = [ctypes.c_int]
        _lib = l
    return _lib


def read_text(fn) -> str:
    """Calls a ``size_t f(char* buf, size_t cap)`` export and returns its text."""
    need = fn(None, 0)
    buf = ctypes.create_string_buffer(need + 1)
    fn(buf, need + 1)
    return buf.value.decode()
