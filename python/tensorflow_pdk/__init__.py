"""tensorflow_pdk: the Python side of PDK, the Pluggable Device Kit.

Installing the wheel puts the plugin library in
``site-packages/tensorflow-plugins/``; ``import tensorflow`` then registers the
``PDK`` device (``tf.device("/PDK:0")``). This package reports on it:

- :func:`registered_kernels` — every (op, type constraints) pair PDK registers;
- :func:`launch_counts` / :func:`reset_launch_counts` — kernel launches per op;
- :func:`device_allocator_stats` / :func:`reset_device_allocator_stats` — the
  device's memory statistics (``tf.config.experimental.get_memory_info`` and
  ``reset_memory_stats`` answer from them for PDK devices);
- :func:`graph_rewrite_counts` / :func:`reset_graph_rewrite_counts` — rewrites
  PDK's graph optimizer applied, per pattern;
- :mod:`tensorflow_pdk.placement` — which ops of a tf.function ran where;
- :func:`get_include` / :func:`get_cmake_dir` — the C++ kit the plugin is
  written with, for building another plugin (docs/kit.md);
  :func:`get_example_dir` — the example plugins the wheel ships
  (docs/tutorial.md);
- :func:`load_op_library` — Python wrappers for the ops of a plugin built
  with the kit.
"""
from __future__ import annotations

import dataclasses
import pathlib
from typing import Dict, List, Tuple

from tensorflow_pdk import _native, _soft_placement
from tensorflow_pdk._op_library import load_op_library

# TensorFlow issue #48559: keep eager soft placement on (see _soft_placement);
# with tensorflow not imported yet, the first call into the plugin does it.
_soft_placement.apply()

__version__ = "0.1.0"
DEVICE_TYPE = "PDK"


def version() -> str:
    """Version of the loaded plugin library."""
    return _native.lib().PDK_Version().decode()


def built_for_tensorflow() -> str:
    """The TensorFlow version the plugin was compiled against."""
    return _native.lib().PDK_BuiltForTensorFlow().decode()


def disabled_reason() -> str:
    """Why the plugin registered no devices ('' when it is enabled)."""
    return _native.lib().PDK_DisabledReason().decode()


def async_status() -> str:
    """Asynchronous kernels: ``"on: <settings>"`` or ``"off: <why>"``.

    On, MatMul, BatchMatMulV2 and _PdkFusedMatMul run on launcher threads
    when their inputs are large (docs/architecture.md,
    "Asynchronous kernels"); off (``PDK_ASYNC=0``, an untested TensorFlow
    release, a failed self-test), every kernel runs on TensorFlow's thread.
    """
    return _native.lib().PDK_AsyncStatus().decode()


def async_launches() -> int:
    """Kernel launches that ran on a launcher thread since load (the other
    launches of asynchronous kernels, too small or with every launcher thread
    busy, ran on TensorFlow's thread)."""
    return int(_native.lib().PDK_AsyncLaunches())


@dataclasses.dataclass(frozen=True)
class KernelRegistration:
    op: str                                   # TensorFlow op name, e.g. "MatMul"
    type_constraints: Tuple[Tuple[str, str], ...]  # (attr, dtype name), e.g. (("T", "float32"),)
    host_memory: Tuple[str, ...]              # args kept in host memory
    asynchronous: bool = False                # registered asynchronous (async_status())


def registered_kernels() -> List[KernelRegistration]:
    """Every kernel PDK registered, one entry per (op, dtype combination)."""
    out = []
    for line in _native.read_text(_native.lib().PDK_RegisteredKernels).splitlines():
        op, types, host, flag = (line.split("\t") + ["", "", ""])[:4]
        tc = tuple(tuple(p.split("=", 1)) for p in types.split(",") if p)
        out.append(KernelRegistration(op, tc, tuple(h for h in host.split(",") if h),
                                      flag == "async"))
    return out


def launch_counts() -> Dict[str, int]:
    """Kernel launches per op type on PDK since load (or the last reset)."""
    counts = {}
    for line in _native.read_text(_native.lib().PDK_LaunchCounts).splitlines():
        op, n = line.split("\t")
        counts[op] = int(n)
    return counts


def reset_launch_counts() -> None:
    """Sets every launch counter to zero."""
    _native.lib().PDK_ResetLaunchCounts()


def graph_rewrite_counts() -> Dict[str, int]:
    """Rewrites PDK's graph optimizer applied since load (or the last reset),
    per pattern, e.g. ``{"MatMul+BiasAdd+Relu": 2}``. TensorFlow optimizes a
    tf.function's graph when the function is first instantiated; set
    ``PDK_GRAPH_REPORT=1`` to log each rewrite with its node names."""
    counts = {}
    for line in _native.read_text(_native.lib().PDK_GraphRewriteCounts).splitlines():
        pattern, n = line.split("\t")
        counts[pattern] = int(n)
    return counts


def reset_graph_rewrite_counts() -> None:
    """Sets every graph rewrite counter to zero."""
    _native.lib().PDK_ResetGraphRewriteCounts()


def _create_devices() -> None:
    """TensorFlow creates its devices with the eager context, on first use."""
    _native.lib()
    from tensorflow.python.eager import context

    context.ensure_initialized()


def device_allocator_stats(ordinal: int = 0) -> Dict[str, int]:
    """Memory statistics of ``/PDK:<ordinal>`` (its pool, docs/architecture.md,
    "Memory"), bytes and counts: ``bytes_in_use`` by tensors, ``peak_bytes_in_use``,
    ``largest_alloc_size`` and ``num_allocs`` since the device was created or
    :func:`reset_device_allocator_stats`, ``bytes_limit`` (``PDK_MEMORY_LIMIT_MB``),
    ``pool_bytes`` (in use plus freed blocks kept for reuse: the host memory
    the device holds) and its peak ``peak_pool_bytes``, and ``num_failed_allocs``
    (allocations refused: over the limit, or no host memory).
    ``tf.config.experimental.get_memory_info("PDK:<i>")`` reports the first two."""
    import ctypes

    _create_devices()
    out = (ctypes.c_int64 * 8)()
    if not _native.lib().PDK_DeviceAllocatorStats(ordinal, out):
        raise ValueError(f"PDK device {ordinal} has not been created")
    keys = ("num_allocs", "bytes_in_use", "peak_bytes_in_use", "largest_alloc_size",
            "bytes_limit", "pool_bytes", "peak_pool_bytes", "num_failed_allocs")
    return dict(zip(keys, list(out)))


def reset_device_allocator_stats(ordinal: int = 0) -> None:
    """Starts the peaks of ``/PDK:<ordinal>`` again from the current figures and
    sets ``num_allocs`` and ``largest_alloc_size`` to 0
    (``tf.config.experimental.reset_memory_stats("PDK:<i>")`` does the same)."""
    _create_devices()
    if not _native.lib().PDK_ResetDeviceAllocatorStats(ordinal):
        raise ValueError(f"PDK device {ordinal} has not been created")


def plugin_path() -> str:
    """Filesystem path of the plugin library."""
    return str(_native.plugin_path())


def cpu_isa() -> str:
    """The x86-64 ISA level of the PDK core this process runs: the highest of
    the wheel's cores (``x86-64-v2``, ``x86-64-v3``) this CPU supports, capped
    by ``PDK_MAX_CPU_ISA``, with the reason when it is not the highest built
    (e.g. ``"x86-64-v2 (capped by PDK_MAX_CPU_ISA=x86-64-v2)"``); in a
    developer's ``-DPDK_NATIVE=ON`` build, which has no loader, the level the
    compiler targeted."""
    return _native.cpu_isa()


def get_include() -> str:
    """Directory of the kit's C++ headers (``pdk/kernel.h``, ``pdk/tf/op_kernel.h``,
    ...), installed with the wheel. Does not load TensorFlow or the plugin."""
    return str(pathlib.Path(__file__).resolve().parent / "include")


def get_cmake_dir() -> str:
    """Directory of the kit's CMake package: ``find_package(PDK CONFIG)`` with
    ``-DPDK_DIR=<this>`` gives ``PDK::kit`` and ``pdk_add_plugin()``."""
    return str(pathlib.Path(__file__).resolve().parent / "cmake")


def get_example_dir(name: str) -> str:
    """Directory of the example plugin ``name`` the wheel ships (its C++
    sources and CMakeLists.txt), e.g. ``hello_device`` (docs/tutorial.md).
    Copy it before editing it. Does not load TensorFlow or the plugin."""
    examples = pathlib.Path(__file__).resolve().parent / "examples"
    shipped = sorted(p.name for p in examples.iterdir() if (p / "CMakeLists.txt").is_file())
    if name not in shipped:
        raise ValueError(f"no example plugin {name!r} in {examples}; the wheel ships: "
                         + (", ".join(shipped) or "none (tensorflow_pdk is not installed "
                                                   "from the wheel)"))
    return str(examples / name)
