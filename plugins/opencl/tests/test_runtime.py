"""The OPENCL device runtime: memory, copies, streams, errors."""
import numpy as np
import pytest
import tensorflow as tf

from conftest import DEVICE, assert_matches_cpu


def test_device_is_listed_with_its_opencl_name():
    devs = tf.config.list_physical_devices("OPENCL")
    assert devs
    details = tf.config.experimental.get_device_details(devs[0])
    assert details.get("device_name"), details


@pytest.mark.parametrize("shape", [(0,), (1,), (7, 3), (1000, 33)])
def test_copies_round_trip(shape, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    with tf.device(DEVICE):
        y = tf.identity(tf.constant(x))
    assert "OPENCL" in y.device
    np.testing.assert_array_equal(y.numpy(), x)


def test_relu_matches_cpu(rng):
    x = rng.standard_normal((257, 5)).astype(np.float32)
    assert_matches_cpu(tf.nn.relu, x, rtol=0, atol=0)


def test_device_tensor_slices_resolve(rng):
    # A slice of a device tensor aliases its buffer at an offset
    # (tf.split / unstack outputs): the kernel must read from there.
    x = rng.standard_normal((6, 10)).astype(np.float32)
    with tf.device(DEVICE):
        parts = tf.unstack(tf.identity(x))
        y = [tf.nn.relu(p).numpy() for p in parts]
    for row, got in zip(x, y):
        np.testing.assert_array_equal(got, np.maximum(row, 0))


def test_memory_info_counts_device_allocations():
    with tf.device(DEVICE):
        before = tf.config.experimental.get_memory_info("OPENCL:0")["current"]
        t = tf.identity(tf.zeros([1024, 1024]))
        after = tf.config.experimental.get_memory_info("OPENCL:0")["current"]
    assert after - before >= 4 * 1024 * 1024
    del t


def test_out_of_memory_is_resource_exhausted():
    """A tensor beyond the device's memory limit: ResourceExhaustedError with
    TensorFlow's wording, and the device works again once memory is freed (a
    child process with PDK_OPENCL_MEMORY_LIMIT_MB=64; TensorFlow's BFC
    allocator gives the 40 MiB tensor a whole 64 MiB chunk, so nothing fits
    beside it until it is freed)."""
    import os
    import subprocess
    import sys

    code = (
        "import os, numpy as np, tensorflow as tf\n"
        "from tensorflow.python.framework import load_library\n"
        "load_library.load_pluggable_device_library(os.environ['PDK_OPENCL_LIBRARY'])\n"
        "with tf.device('/OPENCL:0'):\n"
        "    big = tf.identity(np.zeros([10, 1024, 1024], np.float32))\n"  # 40 MiB of 64
        "try:\n"
        "    with tf.device('/OPENCL:0'):\n"
        "        bigger = tf.nn.relu(big)\n"  # another 40 MiB: beyond the limit
        "    print('no error', bigger.shape)\n"
        "except tf.errors.ResourceExhaustedError as e:\n"
        "    print('OOM', 'OOM when allocating tensor' in str(e))\n"
        "del big\n"
        "with tf.device('/OPENCL:0'):\n"
        "    y = tf.nn.relu(tf.identity(np.array([-1.0, 2.0], np.float32)))\n"
        "print('after', y.numpy().tolist())\n")
    env = dict(os.environ, PDK_OPENCL_MEMORY_LIMIT_MB="64")
    if "PDK_OPENCL_LIBRARY" not in env:
        pytest.skip("needs PDK_OPENCL_LIBRARY (the plugin's build)")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "OOM True" in r.stdout, (r.stdout + r.stderr)[-3000:]
    assert "after [0.0, 2.0]" in r.stdout


def test_host_view_of_a_device_tensor_is_an_error_not_a_read():
    """The kit marks OPENCL tensors as device memory: a kernel that calls
    flat<T>() on one fails with Internal (the probe kernel _OpenclHostView
    in src/kernels/testing_ops.cc does exactly that)."""
    with tf.device(DEVICE):
        x = tf.identity(np.ones([2, 3], np.float32))
        with pytest.raises(tf.errors.InternalError,
                           match=r"Tensor::flat<float> of a float tensor of shape \[2,3\] in device "
                                 r"memory, which the host cannot read"):
            getattr(_probe_ops(), "__opencl_host_view")(x)


def _probe_ops():
    import os

    import tensorflow_pdk

    return tensorflow_pdk.load_op_library(os.environ["PDK_OPENCL_LIBRARY"])


def test_profile_shows_kernels_running_on_the_queue_after_their_launch(tmp_path):
    """The kit's trace profiler on OPENCL: the device's plane has the host
    launches and, on the stream's own line, when each kernel ran on the
    device (cl_event profiling times). Launches return before the work is
    done: some kernel's device span ends after its host launch ended."""
    import glob

    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    a = np.random.default_rng(0).random((384, 384), dtype=np.float32)

    @tf.function
    def step(x):
        with tf.device(DEVICE):
            return tf.nn.relu(tf.linalg.matmul(x, x))

    step(a).numpy()
    tf.profiler.experimental.start(str(tmp_path))
    for _ in range(3):
        r = step(a)
    r.numpy()
    tf.profiler.experimental.stop()
    space = xplane_pb2.XSpace()
    space.ParseFromString(open(glob.glob(str(tmp_path / "plugins/profile/*/*.xplane.pb"))[0],
                               "rb").read())
    plane = next(p for p in space.planes if p.name == "/device:CUSTOM:OPENCL:0")
    names = {k: v.name for k, v in plane.event_metadata.items()}

    def spans(line):
        return [(names[e.metadata_id], line.timestamp_ns * 1000 + e.offset_ps,
                 line.timestamp_ns * 1000 + e.offset_ps + e.duration_ps) for e in line.events]

    device = [s for line in plane.lines if line.name.startswith("OPENCL stream ")
              for s in spans(line)]
    host = [s for line in plane.lines if line.name.startswith("OPENCL launch thread ")
            for s in spans(line)]
    assert {"MatMul", "Relu"} <= {n for n, _, _ in device}, device
    host_matmul = sorted(s for s in host if s[0] == "MatMul")
    dev_matmul = sorted(s for s in device if s[0] == "MatMul")
    assert len(dev_matmul) == len(host_matmul) == 3, (host_matmul, dev_matmul)
    assert any(d[2] > h[2] for h, d in zip(host_matmul, dev_matmul)), (host_matmul, dev_matmul)
