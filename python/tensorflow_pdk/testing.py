"""Helpers for tests that compare PDK with TensorFlow's own CPU kernels.

``assert_matches_cpu(fn, *arrays, ops=[...])`` runs ``fn`` on ``/CPU:0`` and on
``/PDK:0`` with the same inputs (numpy arrays, placed on each device), checks
the outputs agree within tolerance, and checks that each named op launched a
PDK kernel (or, for the few ops PDK leaves to TensorFlow's DEVICE_DEFAULT
kernels, ran on the PDK device), so a silent CPU fallback fails the test.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Dict, Iterable, Iterator, Optional, Sequence

import numpy as np

import tensorflow_pdk

# Default tolerances per dtype name: (rtol, atol).
TOLERANCES = {
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-12),
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 2e-2),
}


@contextlib.contextmanager
def launches() -> Iterator[Dict[str, int]]:
    """Yields a dict that, on exit, holds PDK kernel launches per op made inside."""
    before = tensorflow_pdk.launch_counts()
    delta: Dict[str, int] = {}
    yield delta
    after = tensorflow_pdk.launch_counts()
    for op, n in after.items():
        if n - before.get(op, 0):
            delta[op] = n - before.get(op, 0)


def _run(device: str, fn: Callable, *arrays):
    """(numpy outputs, the devices of the output tensors) of ``fn`` on ``device``."""
    import tensorflow as tf

    with tf.device(device):
        tensors = [tf.constant(a) if not isinstance(a, tf.Tensor) else tf.identity(a)
                   for a in arrays]
        out = fn(*tensors)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    return [np.asarray(o.numpy()) for o in outs], [o.device for o in outs]


def run_on(device: str, fn: Callable, *arrays):
    """Runs ``fn`` on ``device`` with ``arrays`` converted to tensors there;
    returns a list of numpy outputs."""
    return _run(device, fn, *arrays)[0]


def pdk_registers(op: str, dtype) -> bool:
    """Whether PDK registers a kernel for ``op`` with T = ``dtype``. False for
    the few that PDK leaves to TensorFlow's own DEVICE_DEFAULT kernels, which
    run on the PDK device (a loop's Identity, its int32 AddV2 and Less:
    src/kernels/tensorflow_default_kernels.h)."""
    name = np.dtype(dtype).name
    return any(r.op == op and dict(r.type_constraints).get("T") == name
               for r in tensorflow_pdk.registered_kernels())


def assert_close(actual, expected, rtol: float, atol: float, what: str = "") -> None:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if expected.dtype.kind in "biu?" or expected.dtype == np.bool_:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, err_msg=what, equal_nan=True)


def assert_matches_cpu(fn: Callable, *arrays, ops: Optional[Iterable[str]] = None,
                       rtol: Optional[float] = None, atol: Optional[float] = None) -> list:
    """Asserts ``fn(*arrays)`` on PDK equals TensorFlow's CPU result and that
    every op in ``ops`` launched on PDK: a PDK kernel, or, for an op PDK leaves
    to TensorFlow's DEVICE_DEFAULT kernel for the first array's dtype
    (``pdk_registers``), outputs on the PDK device. Returns the PDK outputs."""
    expected = run_on("/CPU:0", fn, *arrays)
    with launches() as delta:
        actual, devices = _run("/PDK:0", fn, *arrays)
    for op in ops or ():
        if delta.get(op, 0) > 0:
            continue
        default = bool(arrays) and not pdk_registers(op, np.asarray(arrays[0]).dtype)
        assert default and all(d.endswith("PDK:0") for d in devices), (
            f"{op} did not run on PDK (launches: {delta}, output devices: {devices})")
    for i, (a, e) in enumerate(zip(actual, expected)):
        dt = str(e.dtype)
        r, t = TOLERANCES.get(dt, (0.0, 0.0))
        assert_close(a, e, rtol if rtol is not None else r, atol if atol is not None else t,
                     what=f"output {i}")
    return actual


def keras_compile_args(device: str) -> Dict[str, object]:
    """Extra ``model.compile`` arguments for running one Keras model on
    ``device`` in a test that compares devices: none on PDK (Keras's defaults,
    as a user's code has them), and ``jit_compile=False`` on the CPU, whose run
    is the reference: TensorFlow's CPU kernels, not XLA's CPU backend, which
    Keras would pick there because PDK is listed (``jit_compile="auto"``)."""
    return {"jit_compile": False} if "CPU" in device.upper() else {}


def random_array(shape: Sequence[int], dtype, rng: np.random.Generator, low=-2.0, high=2.0):
    """Random test data of numpy ``dtype`` (bool, ints, floats, bfloat16 via ml_dtypes)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else int(low) * 5
        return rng.integers(lo, max(lo + 1, int(high) * 5), size=shape).astype(dt)
    return rng.uniform(low, high, size=shape).astype(dt)
