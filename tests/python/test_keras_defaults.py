"""Keras's defaults, end to end: a user's unchanged Keras code trains on PDK.

keras_defaults_job.py runs each model's code (compile with no ``jit_compile``
argument, no ``tf.device``, default soft placement; fit with validation data,
EarlyStopping and ModelCheckpoint, evaluate, predict, save / load) in two child
processes: with PDK, and with PDK disabled (``PDK_DEVICE_COUNT=0``: TensorFlow
then lists only its CPU, as if PDK were not installed). With PDK listed, Keras
resolves ``jit_compile="auto"`` to True, and PDK runs the XLA-marked steps with
its own kernels (src/graph/rewrites/xla_must_compile.cc).

Each model must
- run with PDK, with ``model.jit_compile`` True (the XLA request was made),
- launch its key ops on PDK in fit, evaluate and predict, and place no compute
  op of the training step on the CPU (tensorflow_pdk.placement),
- match the PDK-less run: losses and metrics per epoch, evaluate, predict and
  the final weights, within float32 reordering tolerances,
- give the same predictions after a save / load round trip, and reload its
  best checkpoint.
"""
from __future__ import annotations

import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

JOB = pathlib.Path(__file__).with_name("keras_defaults_job.py")
MODELS = ["mlp", "cnn", "convnext", "lstm_text", "transformer"]

# Ops each model's training step must launch on PDK (any one of each tuple:
# the graph optimizer may have fused the plain op).
KEY_OPS = {
    "mlp": [("MatMul", "_PdkFusedMatMul")],
    "cnn": [("Conv2D", "_PdkFusedConv2D"), ("Conv2DBackpropFilter",), ("MaxPool",)],
    "convnext": [("Conv2D", "_PdkFusedConv2D"), ("Conv2DBackpropInput",),
                 ("Conv2DBackpropFilter",)],
    "lstm_text": [("MatMul", "_PdkFusedMatMul"), ("ResourceGather", "GatherV2")],
    "transformer": [("Einsum", "BatchMatMulV2", "MatMul", "_PdkFusedMatMul"), ("Softmax",)],
}
# Float32 results of the same code on two kernel libraries (different
# summation orders), after a few optimizer steps.
RTOL = {"convnext": 2e-3, "transformer": 1e-3}
ATOL = {"convnext": 2e-3, "transformer": 1e-3}


def _run(tmp_path_factory, env_extra: dict, tag: str) -> dict:
    out = tmp_path_factory.mktemp(tag) / "results.pkl"
    env = dict(os.environ)
    env.pop("PDK_STRICT", None)
    env.update(env_extra)
    proc = subprocess.run([sys.executable, str(JOB), str(out), *MODELS], env=env,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with open(out, "rb") as f:
        results = pickle.load(f)
    results["_stderr"] = proc.stderr
    return results


@pytest.fixture(scope="module")
def with_pdk(tmp_path_factory):
    return _run(tmp_path_factory, {}, "pdk")


@pytest.fixture(scope="module")
def without_pdk(tmp_path_factory):
    return _run(tmp_path_factory, {"PDK_DEVICE_COUNT": "0"}, "cpu")


def _ok(results: dict, name: str) -> dict:
    r = results[name]
    assert not isinstance(r, str), f"{name} failed:\n{r}"
    return r


@pytest.mark.parametrize("name", MODELS)
def test_runs_on_pdk_with_keras_defaults(with_pdk, name):
    r = _ok(with_pdk, name)
    assert r["pdk_devices"]
    assert r["jit_compile"] is True  # Keras asked for XLA: PDK ran it with its kernels
    for phase in ("fit_launches", "evaluate_launches", "predict_launches"):
        assert sum(r[phase].values()) > 0, f"{name}: no PDK kernel launched in {phase}"
    for alternatives in KEY_OPS[name]:
        assert any(r["fit_launches"].get(op, 0) for op in alternatives), (
            f"{name}: none of {alternatives} launched on PDK during fit: {r['fit_launches']}")
    assert r["cpu_compute_ops"] == {}, f"{name}: compute ops fell back to the CPU"
    # The notice names the function once (Keras's train step is one_step_on_data).
    assert "one_step_on_data asked for XLA (jit_compile=True)" in with_pdk["_stderr"]
    assert "No JIT device registered" not in with_pdk["_stderr"]


@pytest.mark.parametrize("name", MODELS)
def test_matches_tensorflow_without_pdk(with_pdk, without_pdk, name):
    r, ref = _ok(with_pdk, name), _ok(without_pdk, name)
    assert not ref["pdk_devices"] and ref["jit_compile"] is False
    rtol, atol = RTOL.get(name, 1e-4), ATOL.get(name, 1e-4)
    assert r["history"].keys() == ref["history"].keys()
    for key in ref["history"]:
        np.testing.assert_allclose(r["history"][key], ref["history"][key], rtol=rtol, atol=atol,
                                   err_msg=f"{name} history {key}")
    np.testing.assert_allclose(r["evaluate"], ref["evaluate"], rtol=rtol, atol=atol)
    np.testing.assert_allclose(r["predict"], ref["predict"], rtol=rtol, atol=atol)
    assert len(r["weights"]) == len(ref["weights"])
    for i, (w, w_ref) in enumerate(zip(r["weights"], ref["weights"])):
        np.testing.assert_allclose(w, w_ref, rtol=rtol, atol=atol,
                                   err_msg=f"{name} weight {i}")


@pytest.mark.parametrize("name", MODELS)
def test_save_load_and_checkpoint(with_pdk, name):
    r = _ok(with_pdk, name)
    np.testing.assert_array_equal(r["reloaded_predict"], r["predict"])
    assert len(r["checkpoint_evaluate"]) == len(r["evaluate"])
    assert np.all(np.isfinite(r["checkpoint_evaluate"]))
