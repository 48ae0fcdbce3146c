"""The PDK device as TensorFlow sees it: discovery, placement, memory
accounting, out-of-memory behaviour, leaks, duplicate loading, metadata."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter (device config is read once per process)."""
    e = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **{k: str(v) for k, v in env.items()})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("count", [1, 2])
def test_device_count_from_environment(count):
    r = run_python("""
        import tensorflow as tf
        devs = tf.config.list_physical_devices("PDK")
        print(len(devs), [d.name for d in devs])
        with tf.device(f"/PDK:{len(devs) - 1}"):
            x = tf.identity(tf.constant([1.0, 2.0]))
        print(x.device)
    """, PDK_DEVICE_COUNT=count)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.strip().splitlines()[-2:]
    assert first.startswith(f"{count} ")
    assert second.endswith(f"device:PDK:{count - 1}")


def test_placement_with_tf_device():
    with tf.device("/PDK:0"):
        x = tf.identity(tf.constant(np.arange(6, dtype=np.float32)))
    assert x.device.endswith("device:PDK:0")
    np.testing.assert_array_equal(x.numpy(), np.arange(6, dtype=np.float32))
    with tf.device("/CPU:0"):
        y = tf.identity(x)
    assert y.device.endswith("device:CPU:0")


def test_memory_info_tracks_current_and_peak():
    base = tf.config.experimental.get_memory_info("PDK:0")["current"]
    with tf.device("/PDK:0"):
        x = tf.identity(tf.constant(np.ones((1024, 1024), np.float32)))  # 4 MiB on PDK
    info = tf.config.experimental.get_memory_info("PDK:0")
    assert info["current"] >= base + 4 * 1024 * 1024
    assert info["peak"] >= info["current"]
    del x
    assert tf.config.experimental.get_memory_info("PDK:0")["current"] == base


def test_no_leak_over_1000_ops():
    a = np.random.default_rng(0).random((64, 64)).astype(np.float32)
    with tf.device("/PDK:0"):
        x = tf.constant(a)
        y = tf.identity(x)
        for _ in range(10):  # warm up
            y = tf.identity(tf.add(y, x) * 0.5)
        base = tf.config.experimental.get_memory_info("PDK:0")["current"]
        for _ in range(1000):
            y = tf.identity(tf.add(y, x) * 0.5)
        y = None
        after = tf.config.experimental.get_memory_info("PDK:0")["current"]
    # Only `y`'s buffer may differ between the two readings.
    assert after <= base, (base, after)


def test_allocation_over_the_limit_is_resource_exhausted_and_device_survives():
    r = run_python("""
        import numpy as np, tensorflow as tf
        from tensorflow.python.client import device_lib
        print("LIMIT", [d.memory_limit for d in device_lib.list_local_devices()
                        if d.device_type == "PDK"])
        with tf.device("/PDK:0"):
            big = tf.raw_ops.Fill(dims=[50, 1024, 1024], value=1.0)  # 200 MiB fits
            print("FITS", float(big[49, 1023, 1023]))
            del big
            try:   # a kernel's output: 384 MiB > the 256 MiB limit
                tf.raw_ops.Fill(dims=[96, 1024, 1024], value=1.0)
                print("no error")
            except tf.errors.ResourceExhaustedError as e:
                print("RESOURCE_EXHAUSTED", "OOM" in str(e))
            try:   # a host-to-device copy: TensorFlow's copy path reports its own error
                tf.identity(tf.constant(np.ones((96, 1024, 1024), np.float32)))
                print("no error")
            except tf.errors.OpError as e:
                print("COPY_FAILED")
            z = tf.raw_ops.Fill(dims=[3], value=2.0)
        print(z.device, float(tf.reduce_sum(z)))
    """, PDK_MEMORY_LIMIT_MB=256)
    assert r.returncode == 0, r.stderr
    out = r.stdout.strip().splitlines()
    # The limit is what PDK_MEMORY_LIMIT_MB says: TensorFlow's own reserve for
    # system memory (255 MiB here) is not taken out of it.
    assert f"LIMIT [{256 << 20}]" in out, out
    assert "FITS 1.0" in out, out
    assert "RESOURCE_EXHAUSTED True" in out
    assert "COPY_FAILED" in out
    assert out[-1].endswith("6.0") and "PDK:0" in out[-1]


def test_second_load_of_the_plugin_does_not_abort():
    r = run_python("""
        import shutil, tempfile, os, tensorflow as tf, tensorflow_pdk
        from tensorflow.python.framework import load_library
        path = tensorflow_pdk.plugin_path()
        load_library.load_pluggable_device_library(path)          # same path again
        # A second copy: another build tree or installation, its loader and the
        # core it picks side by side (src/plugin_loader.cc looks beside itself).
        d = tempfile.mkdtemp()
        copy = os.path.join(d, "libtensorflow_pdk_plugin.so")
        shutil.copy(path, copy)
        core = tensorflow_pdk._native.core_path()
        if core != str(path):
            shutil.copy(core, os.path.join(d, os.path.basename(core)))
        load_library.load_pluggable_device_library(copy)
        print(len(tf.config.list_physical_devices("PDK")))
        with tf.device("/PDK:0"):
            print(tf.identity(tf.constant([2.0])).numpy()[0])
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-2:] == ["1", "2.0"]
    assert "second copy of the PDK plugin" in r.stderr


def test_metadata():
    assert tensorflow_pdk.version() == tensorflow_pdk.__version__
    assert tensorflow_pdk.built_for_tensorflow().split(".")[:2] == tf.__version__.split(".")[:2]
    assert tensorflow_pdk.disabled_reason() == ""
    stats = tensorflow_pdk.device_allocator_stats(0)
    assert stats["bytes_limit"] > 0 and stats["bytes_in_use"] >= 0
    details = tf.config.experimental.get_device_details(tf.config.list_physical_devices("PDK")[0])
    assert isinstance(details, dict)


def test_registered_kernels_include_the_training_ops():
    regs = tensorflow_pdk.registered_kernels()
    pairs = {(k.op, dict(k.type_constraints).get("T")) for k in regs}
    for op in ["MatMul", "BiasAdd", "Relu", "AddV2", "Sum", "SparseSoftmaxCrossEntropyWithLogits"]:
        assert (op, "float32") in pairs, op
    assert len(regs) == len({(k.op, k.type_constraints) for k in regs}), "duplicate registration"


def test_launch_counters_count_pdk_kernels_only():
    tensorflow_pdk.reset_launch_counts()
    with tf.device("/CPU:0"):
        tf.identity(tf.constant([1.0]))
    assert tensorflow_pdk.launch_counts().get("Identity", 0) == 0
    with tf.device("/PDK:0"):
        tf.identity(tf.constant([1.0]))
    assert tensorflow_pdk.launch_counts()["Identity"] == 1
