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
    e = dict(os.environ, **{"TF_CPP_MIN_LOG_LEVEL": "2", **{k: str(v) for k, v in env.items()}})
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
        import numpy as np, tensorflow as tf, tensorflow_pdk
        print("LIMIT", tensorflow_pdk.device_allocator_stats(0)["bytes_limit"])
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
        print("FAILED_ALLOCS", tensorflow_pdk.device_allocator_stats(0)["num_failed_allocs"])
    """, PDK_MEMORY_LIMIT_MB=256)
    assert r.returncode == 0, r.stderr
    out = r.stdout.strip().splitlines()
    # The limit is what PDK_MEMORY_LIMIT_MB says.
    assert f"LIMIT {256 << 20}" in out, out
    assert "FITS 1.0" in out, out
    assert "RESOURCE_EXHAUSTED True" in out
    assert "COPY_FAILED" in out
    assert out[-2].endswith("6.0") and "PDK:0" in out[-2]
    assert out[-1] == "FAILED_ALLOCS 2", out
    # What PDK refused and why, once per failure (TensorFlow's copy error names neither).
    assert r.stderr.count("PDK: /PDK:0 out of memory: 384.0 MiB asked") == 2, r.stderr[-2000:]
    assert "limit 256.0 MiB (PDK_MEMORY_LIMIT_MB)" in r.stderr


OOM_PATHS = """
    import json, time, numpy as np, tensorflow as tf, keras, tensorflow_pdk

    def attempt(path, fn):
        t = time.perf_counter()
        try:
            fn()
            error, message = None, ""
        except Exception as e:  # noqa: BLE001 -- the class is what is measured
            error, message = type(e).__name__, str(e)
        seconds = time.perf_counter() - t
        with tf.device("/PDK:0"):  # the device is usable after: a follow-up op
            after = float(tf.reduce_sum(tf.raw_ops.Fill(dims=[3], value=2.0)))
        print("OOM", json.dumps({"path": path, "seconds": seconds, "error": error,
                                "oom_message": "OOM when allocating tensor" in message,
                                "dst_message": "Dst tensor is not initialized" in message,
                                "after": after}), flush=True)

    with tf.device("/PDK:0"):
        # eager: a kernel's 384 MiB output
        attempt("eager", lambda: tf.zeros([96 * 1024 * 1024]))

        # a tf.function training step whose activations (4 x 64 MiB and their
        # gradients) do not fit; it ran at a small batch first
        w = tf.Variable(tf.random.normal([1024, 1024], stddev=0.01))

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                h = x
                for _ in range(4):
                    h = tf.nn.relu(tf.matmul(h, w))
                loss = tf.reduce_sum(h)
            w.assign_sub(1e-6 * tape.gradient(loss, w))
            return loss

        x = tf.random.normal([16384, 1024])
        step(x[:64])
        attempt("tf.function", lambda: step(x).numpy())

        # Keras fit: a 32768 x 4096 activation (512 MiB) in the step
        xs = np.random.rand(32768, 64).astype(np.float32)
        ys = np.random.randint(0, 10, 32768)
        m = keras.Sequential([keras.Input((64,)), keras.layers.Dense(4096, activation="relu"),
                              keras.layers.Dense(10)])
        m.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        m.fit(xs[:64], ys[:64], batch_size=64, epochs=1, verbose=0)
        attempt("fit", lambda: m.fit(xs, ys, batch_size=32768, epochs=1, verbose=0))

    # host -> PDK: an eager copy of a 384 MiB CPU tensor (made beforehand: its
    # own conversion from NumPy is not the copy)
    with tf.device("/CPU:0"):
        host = tf.ones([96, 1024, 1024])
    with tf.device("/PDK:0"):
        attempt("copy", lambda: tf.identity(host))

    # In a graph: a host tensor that a PDK kernel reads stays where it is
    # (src/graph/rewrites/cpu_inputs_host_memory.cc); one the function
    # returns on PDK is received into device memory.
    @tf.function
    def to_pdk(t):
        with tf.device("/PDK:0"):
            return tf.identity(t)

    attempt("graph copy", lambda: to_pdk(host).numpy())
    with tf.device("/PDK:0"):
        # and the device still runs a training step
        print("STEP", float(step(x[:64])) >= 0)
"""


def test_out_of_memory_raises_at_once_in_every_path():
    """Each path used to wait 10 s (TensorFlow's BFC allocator retrying the
    allocation) before the error; PDK declines BFC, so the error comes at once
    (docs/architecture.md, "Memory"). The bound is generous for a loaded
    machine: measured ~0.05 s eager, ~0.6 s in a step, 0.03 s for the copy."""
    r = run_python(OOM_PATHS, PDK_MEMORY_LIMIT_MB=256)
    assert r.returncode == 0, r.stderr[-3000:]
    import json
    results = {d["path"]: d for d in (json.loads(line[4:]) for line in r.stdout.splitlines()
                                      if line.startswith("OOM "))}
    assert set(results) == {"eager", "tf.function", "fit", "copy", "graph copy"}, r.stdout
    for path, d in results.items():
        assert d["seconds"] < 5.0, d
        assert d["after"] == 6.0, d
    for path in ("eager", "tf.function", "fit"):
        assert results[path]["error"] == "ResourceExhaustedError", results[path]
        assert results[path]["oom_message"], results[path]
    # An eager copy to the device: TensorFlow's own wording and class, which a
    # plugin cannot change (TensorHandle::CopyToDevice allocates the
    # destination without a status; docs/architecture.md, "Memory").
    assert results["copy"]["error"] == "InternalError", results["copy"]
    assert results["copy"]["dst_message"], results["copy"]
    # In a graph the copy is the executor's receive: ResourceExhaustedError.
    assert results["graph copy"]["error"] == "ResourceExhaustedError", results["graph copy"]
    assert "STEP True" in r.stdout


def test_pool_reuses_memory_and_gives_it_back_under_pressure():
    r = run_python("""
        import tensorflow as tf, tensorflow_pdk
        stats = lambda: tensorflow_pdk.device_allocator_stats(0)
        MiB = 1 << 20
        with tf.device("/PDK:0"):
            # blocks of three sizes, each freed: kept for reuse, never past the limit
            for n in (100, 120, 140):
                t = tf.raw_ops.Fill(dims=[n * MiB // 4], value=1.0)
                del t
                s = stats()
                print("POOL", n, s["bytes_in_use"] < 2 * MiB, s["pool_bytes"] <= s["bytes_limit"])
            # 250 MiB fits only when the cached blocks go back to the system first
            big = tf.raw_ops.Fill(dims=[250 * MiB // 4], value=3.0)
            print("BIG", float(big[-1]), stats()["pool_bytes"] <= stats()["bytes_limit"])
            del big
            # a repeated step: the same blocks every time, the pool does not grow
            x = tf.random.normal([256, 256])
            f = tf.function(lambda x: tf.reduce_sum(tf.nn.relu(tf.matmul(x, x)) * 2.0))
            for _ in range(3):
                f(x)
            before = stats()
            for _ in range(20):
                f(x)
            after = stats()
            print("STEADY", after["pool_bytes"] == before["pool_bytes"],
                  after["num_allocs"] > before["num_allocs"],
                  after["bytes_in_use"] == before["bytes_in_use"])
        print("FAILED", stats()["num_failed_allocs"])
    """, PDK_MEMORY_LIMIT_MB=256)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout.splitlines()
    for n in (100, 120, 140):
        assert f"POOL {n} True True" in out, out
    assert "BIG 3.0 True" in out, out
    assert "STEADY True True True" in out, out
    assert "FAILED 0" in out, out


def test_reset_memory_stats_and_memory_info_answer_for_pdk():
    """TensorFlow's simple allocator, which serves PDK, keeps no statistics;
    PDK's hook answers from its pool (tensorflow_pdk/_memory_info.py)."""
    with tf.device("/PDK:0"):
        x = tf.identity(tf.constant(np.ones((512, 1024), np.float32)))  # 2 MiB
        tf.config.experimental.reset_memory_stats("PDK:0")
        info = tf.config.experimental.get_memory_info("/device:PDK:0")
        assert info["peak"] == info["current"] >= 2 << 20, info
        y = x * 2.0
        peak = tf.config.experimental.get_memory_info("PDK:0")["peak"]
        assert peak >= info["current"] + (2 << 20)
        del y
        assert tf.config.experimental.get_memory_info("PDK:0")["peak"] == peak
    s = tensorflow_pdk.device_allocator_stats(0)
    now = tf.config.experimental.get_memory_info("PDK:0")
    assert s["bytes_in_use"] == now["current"] and s["peak_bytes_in_use"] == now["peak"]
    assert s["pool_bytes"] >= s["bytes_in_use"]
    with pytest.raises(ValueError):
        tf.config.experimental.get_memory_info("PDK:7")
    with pytest.raises(ValueError):
        tf.config.experimental.reset_memory_stats("PDK:7")
    del x


def test_no_allow_growth_warning_at_start():
    """TensorFlow prints "Overriding allow_growth setting because
    force_memory_growth was requested by the device" for a PluggableDevice
    that asks BFC for memory growth; PDK asks for neither."""
    r = run_python("""
        import tensorflow as tf
        with tf.device("/PDK:0"):
            print(float(tf.reduce_sum(tf.ones([4]))))
    """, TF_CPP_MIN_LOG_LEVEL=0)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == "4.0"
    assert "allow_growth" not in r.stderr, r.stderr[-3000:]
    assert "Created TensorFlow device (/job:localhost/replica:0/task:0/device:PDK:0" in r.stderr


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
        tf.negative(tf.constant([1.0]))
    assert tensorflow_pdk.launch_counts().get("Neg", 0) == 0
    with tf.device("/PDK:0"):
        tf.negative(tf.constant([1.0]))
    assert tensorflow_pdk.launch_counts()["Neg"] == 1
