"""Keras models train on OPENCL with Keras's defaults, every compute op of the
training step on the device (tensorflow_pdk.placement counts the ops each
partition graph placed on the CPU; soft placement is on here so that the
input pipeline may stay on the CPU, as it does on any device)."""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk import placement
from tensorflow_pdk.examples import digits

DEVICE = "/OPENCL:0"


@pytest.fixture
def soft_placement():
    tf.config.set_soft_device_placement(True)
    yield
    tf.config.set_soft_device_placement(False)


def test_digits_mlp_trains_entirely_on_opencl(soft_placement):
    r = digits.train(DEVICE, epochs=20, seed=0, verbose=0)
    assert r.cpu_compute_ops == {}, f"compute ops fell back to the CPU: {r.cpu_compute_ops}"
    assert r.losses[-1] < 0.2 * r.losses[0], r.losses
    assert r.test_accuracy >= 0.95, r.test_accuracy


def test_digits_mlp_ends_where_the_cpu_ends(soft_placement):
    ocl = digits.train(DEVICE, epochs=3, seed=0, verbose=0)
    cpu = digits.train("/CPU:0", epochs=3, seed=0, verbose=0)
    np.testing.assert_allclose(ocl.losses, cpu.losses, rtol=1e-3)
    for wo, wc in zip(ocl.weights, cpu.weights):
        np.testing.assert_allclose(wo, wc, rtol=1e-3, atol=1e-3)


def test_small_cnn_trains_entirely_on_opencl(soft_placement):
    x_train, y_train, x_test, y_test = digits.load_data(0)
    x_train = x_train.reshape(-1, 8, 8, 1)
    x_test = x_test.reshape(-1, 8, 8, 1)
    with tf.device(DEVICE):
        model = digits.build_cnn(0)
        with placement.record() as placed:
            history = model.fit(x_train, y_train, epochs=5, batch_size=32, verbose=0)
        _, acc = model.evaluate(x_test, y_test, verbose=0)
    on_cpu = dict(placed.compute_ops_on_cpu())
    on_dev = placed.compute_ops_on("OPENCL")
    assert on_cpu == {}, f"compute ops fell back to the CPU: {on_cpu}"
    for op in ("Conv2D", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad", "MatMul"):
        assert on_dev.get(op, 0) > 0, (op, dict(on_dev))
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
    assert acc >= 0.9, acc


def test_eager_assign_add_and_sub_on_an_opencl_variable():
    with tf.device(DEVICE):
        v = tf.Variable(tf.identity(tf.constant([1.0, 2.0, 3.0])))
        v.assign_add(tf.identity(tf.constant([1.0, 1.0, 1.0])))
        v.assign_sub(tf.identity(tf.constant([0.5, 0.5, 0.5])))
    assert "OPENCL" in v.device
    np.testing.assert_array_equal(v.numpy(), [1.5, 2.5, 3.5])


def test_assign_add_in_a_function_is_rewritten_to_device_ops():
    with tf.device(DEVICE):
        v = tf.Variable(tf.identity(tf.constant([1.0, 2.0])))

        @tf.function
        def step(x):
            v.assign_add(x)
            v.assign_sub(x * 0.25)
            return v.read_value()

        out = step(tf.identity(tf.constant([4.0, 8.0])))
    np.testing.assert_array_equal(out.numpy(), [4.0, 8.0])
