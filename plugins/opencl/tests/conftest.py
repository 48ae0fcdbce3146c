"""The OPENCL plugin's kernel tests, run in a process of their own
(tests/python/test_opencl.py runs ``python -m pytest plugins/opencl/tests``):
a TensorFlow process gets its devices once, so the plugin is loaded here,
before TensorFlow creates any device.

PDK_OPENCL_LIBRARY names the plugin to load (the build's libpdk_opencl.so);
unset, the installed wheel's copy in site-packages/tensorflow-plugins is
already loaded by ``import tensorflow``.

Every test runs with soft device placement off: an op without an OPENCL
kernel fails the test instead of running on the CPU.
"""
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import tensorflow as tf  # noqa: E402

_lib = os.environ.get("PDK_OPENCL_LIBRARY")
if _lib:
    from tensorflow.python.framework import load_library

    load_library.load_pluggable_device_library(_lib)

tf.config.set_soft_device_placement(False)

DEVICE = "/OPENCL:0"


def pytest_configure(config):
    if not tf.config.list_physical_devices("OPENCL"):
        raise pytest.UsageError("no OPENCL device: is an OpenCL driver installed "
                                "(pocl-opencl-icd) and the plugin loaded?")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def run(fn, *args, device=DEVICE, **kwargs):
    """fn(*args, **kwargs) eagerly on `device`, the results as numpy. The
    inputs are copied to the device first (tf.identity under the scope)."""
    with tf.device(device):
        dev_args = [tf.identity(a) if isinstance(a, (tf.Tensor, np.ndarray)) else a for a in args]
        out = fn(*dev_args, **kwargs)
    return tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, out)


def on_opencl(fn, *args, **kwargs):
    """fn on OPENCL; also checks that its outputs live there."""
    with tf.device(DEVICE):
        dev_args = [tf.identity(a) if isinstance(a, (tf.Tensor, np.ndarray)) else a for a in args]
        out = fn(*dev_args, **kwargs)
    for t in tf.nest.flatten(out):
        if isinstance(t, tf.Tensor) and t.dtype != tf.int32:
            assert "OPENCL" in t.device, f"{t.device}: not on OPENCL"
    return tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, out)


def assert_matches_cpu(fn, *args, rtol=1e-5, atol=1e-6, **kwargs):
    """fn on OPENCL against TensorFlow's own CPU kernel, same inputs."""
    got = on_opencl(fn, *args, **kwargs)
    want = run(fn, *args, device="/CPU:0", **kwargs)
    for g, w in zip(tf.nest.flatten(got), tf.nest.flatten(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got
