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
    steps = EPOCHS * 45
    for op in ("MatMul", "ReluGrad", "BiasAddGrad", "SparseSoftmaxCrossEntropyWithLogits"):
        assert pdk.pdk_launches.get(op, 0) >= steps, (op, pdk.pdk_launches.get(op))
    # The forward Dense layers run as _PdkFusedMatMul when the graph optimizer
    # fuses MatMul+BiasAdd[+Relu], else as BiasAdd after MatMul: 3 layers a step.
    forward = pdk.pdk_launches.get("_PdkFusedMatMul", 0) + pdk.pdk_launches.get("BiasAdd", 0)
    assert forward >= 3 * steps, pdk.pdk_launches


def test_same_result_as_cpu(runs):
    pdk, cpu = runs
    np.testing.assert_allclose(pdk.losses, cpu.losses, rtol=1e-3)
    for wp, wc in zip(pdk.weights, cpu.weights):
        np.testing.assert_allclose(wp, wc, rtol=1e-3, atol=1e-3)
    assert abs(pdk.test_accuracy - cpu.test_accuracy) <= 0.02
