"""ctypes bridge to the PDK plugin library that TensorFlow loaded.

TensorFlow dlopens ``site-packages/tensorflow-plugins/libtensorflow_pdk_plugin.so``
on ``import tensorflow``. In a distributable build that library is the loader
(src/plugin_loader.cc), which loaded the PDK core built for this CPU
(``site-packages/tensorflow_pdk/lib/libtensorflow_pdk_core.<level>.so``); in a
``PDK_NATIVE`` build it is the core itself. Opening the same file again returns
the same handle, so the counters read here are the ones the running kernels
update.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
from typing import Optional

LIBRARY_NAME = "libtensorflow_pdk_plugin.so"

_lib: Optional[ctypes.CDLL] = None      # the core
_loader: Optional[ctypes.CDLL] = None   # the loader, in a distributable build


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
        if hasattr(l, "PDK_CoreLibrary"):  # the loader: the core it loaded
            l.PDK_CoreLibrary.restype = ctypes.c_char_p
            l.PDK_CpuIsa.restype = ctypes.c_char_p
            global _loader
            _loader = l
            core = l.PDK_CoreLibrary().decode()
            if not core:
                raise RuntimeError(
                    "PDK is disabled: no PDK core could be loaded ("
                    + l.PDK_CpuIsa().decode() + "); reinstall tensorflow-pdk")
            l = ctypes.CDLL(core)
        for name in ("PDK_Version", "PDK_BuiltForTensorFlow", "PDK_DisabledReason",
                     "PDK_AsyncStatus"):
            getattr(l, name).restype = ctypes.c_char_p
        for name in ("PDK_RegisteredKernels", "PDK_LaunchCounts", "PDK_GraphRewriteCounts",
                     "PDK_ConfigText"):
            f = getattr(l, name)
            f.restype = ctypes.c_size_t
            f.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        l.PDK_CoreIsa.restype = ctypes.c_char_p
        f = l.PDK_MathLibraries
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


def cpu_isa() -> str:
    """The ISA level of the PDK core this process runs, with the reason when it
    is not the highest built (``"x86-64-v3"``, ``"x86-64-v2 (capped by
    PDK_MAX_CPU_ISA=x86-64-v2)"``); in a PDK_NATIVE build, which has no loader,
    the level the compiler targeted."""
    core = lib()
    return (_loader.PDK_CpuIsa() if _loader is not None else core.PDK_CoreIsa()).decode()


def core_path() -> str:
    """Path of the PDK core library this process runs."""
    lib()
    return os.path.normpath(_loader.PDK_CoreLibrary().decode()) if _loader is not None \
        else str(plugin_path())


def read_text(fn) -> str:
    """Calls a ``size_t f(char* buf, size_t cap)`` export and returns its text."""
    need = fn(None, 0)
    buf = ctypes.create_string_buffer(need + 1)
    fn(buf, need + 1)
    return buf.value.decode()
