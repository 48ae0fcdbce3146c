"""The main job at small scale: the digits MLP trains on PDK, entirely on PDK,
and ends where the same training on TensorFlow's CPU device ends."""
import numpy as np
import pytest

from tensorflow_pdk.examples import digits

EPOCHS = 8


@pytest.fixture(scope="module")
def runs():
    pdk = digits.train("/PDK:0", epochs=EPOCHS, seed=0, verbose=0)
    cpu = digits.train("/CPU:0", epochs=EPOCHS, seed=0, verbose=0)
    return pdk, cpu


def test_loss_falls_and_accuracy(runs):
    pdk, _ = runs
    assert pdk.losses[-1] < 0.5 * pdk.losses[0], pdk.losses
    assert pdk.test_accuracy >= 0.9


def test_training_step_ran_entirely_on_pdk(runs):
    pdk, _ = runs
    assert pdk.cpu_compute_ops == {}, f"compute ops fell back to the CPU: {pdk.cpu_compute_ops}"
    for op in ("MatMul", "BiasAdd", "Relu", "ReluGrad", "BiasAddGrad",
               "SparseSoftmaxCrossEntropyWithLogits"):
        assert pdk.pdk_launches.get(op, 0) >= EPOCHS * 45, (op, pdk.pdk_launches.get(op))


def test_same_result_as_cpu(runs):
    pdk, cpu = runs
    np.testing.assert_allclose(pdk.losses, cpu.losses, rtol=1e-3)
    for wp, wc in zip(pdk.weights, cpu.weights):
        np.testing.assert_allclose(wp, wc, rtol=1e-3, atol=1e-3)
    assert abs(pdk.test_accuracy - cpu.test_accuracy) <= 0.02
