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
